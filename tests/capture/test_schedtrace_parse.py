"""Parsing real schedtrace/scheddetail logs of Go 1.21.13, 1.22.10 and 1.27.3, line by line.

The logs under data/ were recorded by data/record_logs.py.  Each line is
checked by printing the parsed values back in the format of the runtime's
``schedtrace`` function of that release (runtime/proc.go) and comparing with
the original text: a value parsed wrong cannot print back the same line.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from goblueprint.capture import schedtrace
from goblueprint.errors import CaptureError

DATA = Path(__file__).resolve().parent / "data"
LOGS = sorted(DATA.glob("*.log"))


def _release(path: Path) -> tuple[int, int]:
    version = path.stem.split("-go")[1]
    major, minor = version.split(".")[:2]
    return int(major), int(minor)


def _v(value: object) -> str:
    if value is None:
        return "nil"
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def render_sched(sample: schedtrace.Sample, release: tuple[int, int]) -> str:
    """The SCHED line as runtime/proc.go's schedtrace prints it."""
    c = sample.counters
    line = (
        f"SCHED {sample.t_ms}ms: gomaxprocs={c['gomaxprocs']} idleprocs={c['idleprocs']} threads={c['threads']}"
        f" spinningthreads={c['spinningthreads']} needspinning={c['needspinning']}"
        f" idlethreads={c['idlethreads']} runqueue={c['runqueue']}"
    )
    if sample.procs is not None:
        return line + (
            f" gcwaiting={_v(c['gcwaiting'])} nmidlelocked={c['nmidlelocked']} stopwait={c['stopwait']}"
            f" sysmonwait={_v(c['sysmonwait'])}"
        )
    queues = " ".join(str(q) for q in sample.local_runq or [])
    if release >= (1, 25):  # 1.23.9 prints the old form, 1.25.5 the new; 1.24 not checked
        ticks = "".join(f"{t} " for t in sample.schedticks or [])
        return f"{line} [ {queues} ] schedticks=[ {ticks}]"
    return f"{line} [{queues}]"


def render_detail(sample: schedtrace.Sample) -> list[str]:
    out = []
    for p in sample.procs or []:
        out.append(
            f"  P{p['id']}: status={p['status']} schedtick={p['schedtick']} syscalltick={p['syscalltick']}"
            f" m={_v(p['m'])} runqsize={p['runqsize']} gfreecnt={p['gfreecnt']} timerslen={p['timerslen']}"
        )
    for m in sample.ms or []:
        out.append(
            f"  M{m['id']}: p={_v(m['p'])} curg={_v(m['curg'])} mallocing={m['mallocing']} throwing={m['throwing']}"
            f" preemptoff={m['preemptoff']} locks={m['locks']} dying={m['dying']} spinning={_v(m['spinning'])}"
            f" blocked={_v(m['blocked'])} lockedg={_v(m['lockedg'])}"
        )
    for g in sample.gs or []:
        out.append(
            f"  G{g['id']}: status={g['status']}({g['waitreason']}) m={_v(g['m'])} lockedm={_v(g['lockedm'])}"
        )
    return out


def test_logs_of_three_releases_and_both_modes_are_present() -> None:
    names = {p.name for p in LOGS}
    for release in ("1.21.13", "1.22.10", "1.27.3"):
        assert f"schedtrace-go{release}.log" in names
        assert f"scheddetail-go{release}.log" in names


@pytest.mark.parametrize("log", LOGS, ids=lambda p: p.name)
def test_every_line_prints_back_identically(log: Path) -> None:
    lines = [ln for ln in log.read_text().splitlines() if ln.strip()]
    parsed = schedtrace.parse(log.read_text())
    rendered = []
    for sample in parsed.samples:
        rendered.append(render_sched(sample, _release(log)))
        rendered.extend(render_detail(sample))
    assert len(parsed.samples) >= 3
    assert rendered == lines


@pytest.mark.parametrize("log", LOGS, ids=lambda p: p.name)
def test_json_shape_and_nulls_by_release(log: Path) -> None:
    parsed = schedtrace.parse(log.read_text())
    detailed = log.name.startswith("scheddetail")
    for sample in parsed.to_json()["samples"]:
        for key in ("t_ms", "gomaxprocs", "idleprocs", "threads", "spinningthreads", "needspinning",
                    "idlethreads", "runqueue", "local_runq", "schedticks", "procs", "ms", "gs"):  # fmt: skip
            assert key in sample
        assert sample["needspinning"] is not None  # printed since Go 1.21
        if detailed:
            assert sample["local_runq"] is None and sample["schedticks"] is None
            assert len(sample["procs"]) == sample["gomaxprocs"]
            assert {p["id"] for p in sample["procs"]} == set(range(sample["gomaxprocs"]))
            assert sample["ms"] and sample["gs"]
            assert isinstance(sample["gcwaiting"], bool)
        else:
            assert sample["procs"] is None and sample["ms"] is None and sample["gs"] is None
            assert len(sample["local_runq"]) == sample["gomaxprocs"]
            if _release(log) >= (1, 25):
                assert len(sample["schedticks"]) == sample["gomaxprocs"]
            else:
                assert sample["schedticks"] is None


def test_field_missing_in_an_older_release_is_null() -> None:
    # Go 1.20 printed no needspinning: remove it from real 1.22 lines.
    text = (DATA / "schedtrace-go1.22.10.log").read_text()
    older = "\n".join(
        " ".join(t for t in ln.split(" ") if not t.startswith("needspinning=")) for ln in text.splitlines()
    )
    parsed = schedtrace.parse(older)
    assert parsed.samples and all(s.counters.get("needspinning") is None for s in parsed.samples)
    assert all(s.to_json()["needspinning"] is None for s in parsed.samples)
    assert [s.counters["runqueue"] for s in parsed.samples] == [
        s.counters["runqueue"] for s in schedtrace.parse(text).samples
    ]


def test_foreign_line_is_an_error_naming_its_line() -> None:
    lines = (DATA / "schedtrace-go1.27.3.log").read_text().splitlines()
    lines.insert(2, "hello from the program")
    with pytest.raises(CaptureError, match=r"line 3: not a schedtrace line"):
        schedtrace.parse("\n".join(lines))
    lenient = schedtrace.parse("\n".join(lines), lenient=True)
    assert lenient.skipped_lines == 1
    assert len(lenient.samples) == len(lines) - 1


def test_sched_line_broken_by_the_programs_output_is_skipped_when_lenient() -> None:
    # Seen on a loaded machine: the program's stderr written into the middle of a SCHED line
    # (the runtime writes one in several writes), the rest of the line on the next one.
    lines = (DATA / "schedtrace-go1.27.3.log").read_text().splitlines()
    head, _, tail = lines[1].partition(" threads=")
    broken = [lines[0], f"{head} threads=mainpkg stderr: mode return", tail, *lines[2:]]
    with pytest.raises(CaptureError, match=r"line 2: threads='mainpkg' is not a number"):
        schedtrace.parse("\n".join(broken))
    lenient = schedtrace.parse("\n".join(broken), lenient=True)
    assert lenient.skipped_lines == 2  # the damaged line and the stray rest of it
    whole = schedtrace.parse("\n".join(lines)).samples
    assert [s.t_ms for s in lenient.samples] == [s.t_ms for k, s in enumerate(whole) if k != 1]


def test_detail_line_before_any_sched_line_is_an_error() -> None:
    text = (DATA / "scheddetail-go1.22.10.log").read_text().splitlines()
    p_line = next(ln for ln in text if ln.startswith("  P"))
    with pytest.raises(CaptureError, match="line 1: before the first SCHED line"):
        schedtrace.parse(p_line + "\n" + "\n".join(text))


def test_unknown_field_and_bad_number_are_errors() -> None:
    line = (DATA / "schedtrace-go1.27.3.log").read_text().splitlines()[0]
    with pytest.raises(CaptureError, match="unknown field 'newfield'"):
        schedtrace.parse(line.replace(" runqueue=", " newfield=1 runqueue="))
    with pytest.raises(CaptureError, match="not a number"):
        schedtrace.parse(line.replace("threads=", "threads=x", 1))


def test_is_schedtrace_line_tells_runtime_lines_from_program_lines() -> None:
    for log in LOGS:
        assert all(schedtrace.is_schedtrace_line(ln) for ln in log.read_text().splitlines() if ln)
    for foreign in ("SCHED of the week", "  P1: a program's own line", "mainpkg stderr: mode return", "",
                    "SCHED 5ms: the program's own line"):  # fmt: skip
        assert not schedtrace.is_schedtrace_line(foreign)
    # The last line of a log the program's exit cut, anywhere in its first field.
    for cut in ("SCHED 12ms:", "SCHED 12ms: gomax", "SCHED 12ms: gomaxprocs=2 idlepr"):
        assert schedtrace.is_schedtrace_line(cut)


@pytest.mark.parametrize("name", ["schedtrace-go1.27.3.log", "scheddetail-go1.22.10.log"])
def test_last_line_cut_by_the_programs_exit_is_left_out(name: str) -> None:
    # The program may exit while the runtime prints a line (in several writes): the log then
    # ends inside it, without a newline.  Wherever the cut falls, the samples before it read as
    # they do whole, in strict mode, and the sample the cut line belongs to is left out and said
    # to be.
    text = (DATA / name).read_text()
    whole = schedtrace.parse(text)
    lines = text.splitlines(keepends=True)
    before = "".join(lines[:-1])
    last = lines[-1].rstrip("\n")
    flagged = 0
    for k in range(1, len(last)):
        parsed = schedtrace.parse(before + last[:k])
        flagged += parsed.cut_last_sample
        got = [s.to_json() for s in parsed.samples]
        if parsed.cut_last_sample:
            assert got == [s.to_json() for s in whole.samples[:-1]]
        else:  # (a line whole but for its newline)
            assert got == [s.to_json() for s in whole.samples]
    assert flagged >= len(last) // 2
    assert not schedtrace.parse(text).cut_last_sample
    assert schedtrace.parse(text.rstrip("\n")).cut_last_sample is False  # whole, newline or not


@pytest.mark.parametrize("name", ["scheddetail-go1.21.13.log", "scheddetail-go1.27.3.log"])
def test_scheddetail_block_cut_between_its_lines_is_left_out(name: str) -> None:
    # scheddetail prints a SCHED line and then a line per P, per M and per G; the exit can come
    # between any two of them, the last one printed ending with its newline.  A block without
    # its P lines, an M or a G is left out; one cut inside its G lines cannot be told from a
    # whole one (nothing says how many Gs there are) and is kept with the Gs it has.
    lines = (DATA / name).read_text().splitlines(keepends=True)
    heads = [i for i, line in enumerate(lines) if line.startswith("SCHED ")]
    whole = [s.to_json() for s in schedtrace.parse("".join(lines)).samples]
    for end in range(heads[-3] + 1, len(lines) + 1):
        n = sum(h < end for h in heads)  # samples begun
        parsed = schedtrace.parse("".join(lines[:end]))
        got = [s.to_json() for s in parsed.samples]
        block = lines[heads[n - 1] : end]
        has_g = any(line.startswith("  G") for line in block)
        assert parsed.cut_last_sample is not has_g, (end, block[-1])
        if has_g:
            assert got[:-1] == whole[: n - 1]
            kept, want = got[-1], whole[n - 1]
            assert kept["gs"] == want["gs"][: len(kept["gs"])]
            assert {k: v for k, v in kept.items() if k != "gs"} == {
                k: v for k, v in want.items() if k != "gs"
            }
        else:
            assert got == whole[: n - 1]


def test_an_unfinished_last_line_is_still_an_error_where_a_cut_cannot_explain_it() -> None:
    text = (DATA / "schedtrace-go1.27.3.log").read_text().rstrip("\n")
    with pytest.raises(CaptureError, match="not a schedtrace line"):
        schedtrace.parse(text + "\nhello from the program")
    head, _, tail = text.rpartition(" runqueue=")
    with pytest.raises(CaptureError, match="unknown field 'newfield'"):
        schedtrace.parse(f"{head} newfield=1 runqueue={tail}")


def test_a_number_beyond_64_bits_is_not_the_runtimes(tmp_path: Path) -> None:
    # The runtime prints no number past int64; a table cannot hold one (polars raised
    # OverflowError through the CLI: a traceback).
    from goblueprint.cli import main

    good = "SCHED 0ms: gomaxprocs=2 idleprocs=0 threads=4 spinningthreads=0 needspinning=0 idlethreads=1 runqueue=0 [ 0 0 ] schedticks=[ 0 0 ]"
    big = good.replace("gomaxprocs=2", "gomaxprocs=99999999999999999999").replace("0ms", "5ms")
    text = f"{good}\n{big}\n"
    with pytest.raises(CaptureError, match=r"line 2: a number beyond 64 bits"):
        schedtrace.parse(text)
    lenient = schedtrace.parse(text, lenient=True)
    assert [s.t_ms for s in lenient.samples] == [0] and lenient.skipped_lines == 1
    log = tmp_path / "big.log"
    log.write_text(text)
    assert main(["schedtrace", "--json", str(log)]) == 1
    assert main(["schedtrace", "--json", "--lenient", str(log)]) == 0


def test_a_log_in_which_time_goes_back_holds_two_processes() -> None:
    # Two runs' logs joined (or a child that inherited GODEBUG writing to the same stderr):
    # no series of one run holds both; lenient keeps the first and passes over the other's
    # samples, with their detail lines.
    one = (DATA / "scheddetail-go1.27.3.log").read_text()
    first = schedtrace.parse(one)
    assert len(first.samples) > 2
    again = one.count("\n") + first.samples[0].line  # the second copy's first SCHED line
    with pytest.raises(
        CaptureError, match=rf"line {again}: SCHED \d+ms comes after SCHED \d+ms .*time goes back"
    ):
        schedtrace.parse(one + one)
    joined = schedtrace.parse(one + one, lenient=True)
    times = [s.t_ms for s in joined.samples]
    assert times == sorted(times) and times[: len(first.samples)] == [s.t_ms for s in first.samples]
    assert all(s.procs is not None for s in joined.samples)  # each kept sample keeps its own detail


def test_run_queue_lengths_are_one_per_p() -> None:
    good = "SCHED 0ms: gomaxprocs=2 idleprocs=0 threads=4 spinningthreads=0 needspinning=0 idlethreads=1 runqueue=0 [0 0]"
    bad = good.replace("[0 0]", "[0 0 0]").replace("0ms", "5ms")
    with pytest.raises(CaptureError, match=r"line 2: 3 run-queue lengths for gomaxprocs=2"):
        schedtrace.parse(f"{good}\n{bad}\n")
    assert [s.t_ms for s in schedtrace.parse(f"{good}\n{bad}\n", lenient=True).samples] == [0]
