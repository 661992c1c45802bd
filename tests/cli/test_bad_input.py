"""Every command on bad input, as a user runs it: exit status, exactly one stderr line, no traceback.

The rules under test (README, "Errors"):

* a trace that breaks part-way is used up to the failure, exactly as far as Go's
  reader reads it; outputs are complete files for those events; one line names
  the failure (offset, generation); exit 1, or 0 with --allow-partial (a warning);
* a trace that breaks before any event has nothing to show: one error line, exit 1,
  no output written;
* every path, input or output, gets the same words: ``cannot read|write PATH: why``;
* an output's extension picks its format, or the command says it cannot write it.
"""

from __future__ import annotations

import json
import random
import re
import sys
import xml.etree.ElementTree as ET
from collections.abc import Callable
from pathlib import Path

import polars as pl
import pytest

from .conftest import run_many, run_one

ROOT = Path(__file__).resolve().parents[2]
SCHEDTRACE_LOG = ROOT / "tests" / "capture" / "data" / "schedtrace-go1.27.3.log"
PARTIAL_LINE = re.compile(
    r"^goblueprint: (error|warning): partial trace: .+ \(offset \d+, generation \d+(, M -?\d+)?\); .+$"
)

# Every command that reads a trace, with where its output goes ({out} is filled in per case).
TRACE_COMMANDS: dict[str, list[str]] = {
    "stats": ["trace", "stats", "--json", "{trace}"],
    "dump": ["trace", "dump", "{trace}"],
    "metrics": ["trace", "metrics", "--json", "{trace}"],
    "timeline-html": ["trace", "timeline", "{trace}", "-o", "{out}.html"],
    "timeline-svg": ["trace", "timeline", "{trace}", "-o", "{out}.svg"],
    "perfetto": ["trace", "export", "-f", "perfetto", "{trace}", "-o", "{out}.perfetto-trace"],
    "chrome": ["trace", "export", "{trace}", "-o", "{out}.json"],
    "parquet": ["trace", "export", "-f", "parquet", "{trace}", "-o", "{out}"],
    "sql": ["trace", "sql", "--json", "{trace}", "SELECT count(*) AS n FROM events"],
    "pprof": ["trace", "pprof", "--type", "sched", "{trace}", "-o", "{out}.pb.gz"],
    "schedtrace": ["schedtrace", "--json", str(SCHEDTRACE_LOG), "--trace", "{trace}"],
}


def _argv(template: list[str], trace: Path, out: Path) -> list[str]:
    return [a.replace("{trace}", str(trace)).replace("{out}", str(out)) for a in template]


def _written(out_dir: Path) -> list[Path]:
    return sorted(p for p in out_dir.rglob("*") if p.is_file())


@pytest.fixture(scope="module")
def sched_trace(go_trace: Callable[..., Path]) -> Path:
    # A whole trace of a few KB (tests/trace_check's small program): outputs are made fast.
    return go_trace("small", go="1.27", prog_root=ROOT / "tests" / "trace_check" / "goprogs")


@pytest.fixture(scope="module")
def bad_traces(go_trace: Callable[..., Path], tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    from goblueprint.trace.wire import batch_layout

    d = tmp_path_factory.mktemp("bad")
    # gens runs long enough for the runtime to start several generations (one a second).
    data = go_trace("gens", go="1.27", prog_root=ROOT / "tests" / "trace_core" / "goprogs").read_bytes()
    starts = sorted({b.offset for gen, b in batch_layout(data) if gen >= 2})
    assert starts, "the gens trace should span several generations"
    cut = (starts[0] + len(data)) // 2  # inside a later generation: what came before is usable
    files = {
        "half": data[:cut],
        "head5000": data[:5000],  # inside the first generation's batches: nothing to show
        "empty": b"",
        "random": random.Random(7).randbytes(4096),
    }
    paths = {name: d / f"{name}.trace" for name in files}
    for name, blob in files.items():
        paths[name].write_bytes(blob)
    (d / "a-directory").mkdir()
    paths["directory"] = d / "a-directory"
    paths["missing"] = d / "missing.trace"
    return paths


def test_unreadable_trace_inputs_are_one_line_and_write_nothing(bad_traces, tmp_path):
    kinds = ["head5000", "empty", "random", "directory", "missing"]
    cases, where = [], []
    for kind in kinds:
        for name, template in TRACE_COMMANDS.items():
            out_dir = tmp_path / f"{kind}-{name}"
            out_dir.mkdir()
            cases.append(_argv(template, bad_traces[kind], out_dir / "out"))
            where.append((kind, name, out_dir))
        # --allow-partial accepts a partial result, not an empty one.
        cases.append(["trace", "stats", "--allow-partial", str(bad_traces[kind])])
        where.append((kind, "stats --allow-partial", None))
        # The server refuses before it listens (on a readable trace it would serve until stopped).
        cases.append(["trace", "view", "--port", "0", str(bad_traces[kind])])
        where.append((kind, "view", None))
    for (kind, name, out_dir), res in zip(where, run_many(cases), strict=True):
        assert res.code == 1, (kind, name, res)
        line = res.one_line()
        path = bad_traces[kind]
        if kind == "directory":
            assert line == f"goblueprint: error: cannot read {path}: is a directory", line
        elif kind == "missing":
            assert line == f"goblueprint: error: cannot read {path}: no such file or directory", line
        elif kind == "head5000":
            assert "(offset " in line and "generation 1" in line, line
        if out_dir is not None:
            assert _written(out_dir) == [], (kind, name)


def test_trace_check_gives_its_verdict_and_checks_paths(bad_traces):
    results = run_many(
        [
            ["trace", "check", str(bad_traces[k])]
            for k in ("half", "head5000", "random", "directory", "missing")
        ]
    )
    for res in results[:3]:
        assert res.code == 1 and res.stdout.startswith("FAILURE ") and res.stderr == "", res
    assert results[3].one_line().endswith(": is a directory")
    assert results[4].one_line().endswith(": no such file or directory")


def test_partial_trace_is_used_up_to_the_failure_by_every_command(bad_traces, tmp_path):
    half = bad_traces["half"]
    cases, outs = [], []
    # --allow-partial is one function for all: two commands show it, at half the cost of all.
    for allow, names in ((False, list(TRACE_COMMANDS)), (True, ["stats", "timeline-html"])):
        for name in names:
            out = tmp_path / ("allow" if allow else "strict") / name / "out"
            out.parent.mkdir(parents=True)
            argv = _argv(TRACE_COMMANDS[name], half, out)
            cases.append([*argv, "--allow-partial"] if allow else argv)
            outs.append((allow, name, out))
    results = dict(((allow, name), res) for (allow, name, _), res in zip(outs, run_many(cases), strict=True))
    for (allow, name), res in results.items():
        kind = "warning" if allow else "error"
        assert res.code == (0 if allow else 1), (name, res)
        line = res.one_line(kind)
        assert PARTIAL_LINE.match(line), line
        assert line.endswith("(--allow-partial accepts it)") != allow, line

    # The same events, whatever the command: as many as Go's reader yields before failing
    # (trace dump's lines are Go's -d=parsed, byte for byte; tests/trace_core holds that).
    assert (tmp_path / "allow" / "timeline-html" / "out.html").stat().st_size > 0
    strict = {name: results[(False, name)] for name in TRACE_COMMANDS}
    events = json.loads(strict["stats"].stdout)["events"]
    assert events > 1000
    assert json.loads(strict["stats"].stdout)["error"] in strict["stats"].stderr
    assert sum(1 for ln in strict["dump"].stdout.splitlines() if ln.startswith("M=")) == events
    assert json.loads(strict["sql"].stdout) == [{"n": events}]
    assert f"the {events} events before it" in strict["timeline-html"].stderr

    # Complete files for what was read.
    base = tmp_path / "strict"
    html = (base / "timeline-html" / "out.html").read_text()
    assert html.rstrip().endswith("</html>")
    ET.fromstring((base / "timeline-svg" / "out.svg").read_text())  # well-formed, whole SVG
    import perfetto_read

    perfetto = perfetto_read.packets((base / "perfetto" / "out.perfetto-trace").read_bytes())
    assert sum(p.HasField("track_event") for p in perfetto) > 100
    chrome = json.loads((base / "chrome" / "out.json").read_text())
    assert chrome["traceEvents"]
    tables = {p.stem: pl.read_parquet(p) for p in (base / "parquet" / "out").glob("*.parquet")}
    assert tables["events"].height == events and tables["goroutines"].height > 0
    from goblueprint.timeline import pprof

    assert pprof.decode((base / "pprof" / "out.pb.gz").read_bytes()).samples
    metrics = json.loads(strict["metrics"].stdout)
    assert metrics["goroutines"] > 0


def test_bad_output_paths_read_the_same_everywhere(sched_trace, tmp_path):
    a_file = tmp_path / "a-file"
    a_file.write_text("x")
    a_dir = tmp_path / "a-dir"
    a_dir.mkdir()
    no_parent = tmp_path / "no" / "such"
    outputs = {  # command -> (argv with {out}, extension the output takes, output is a directory)
        "timeline": (["trace", "timeline", str(sched_trace), "-o", "{out}"], ".html", False),
        "svg": (["trace", "timeline", "--svg", str(sched_trace), "-o", "{out}"], ".svg", False),
        "perfetto": (
            ["trace", "export", "-f", "perfetto", str(sched_trace), "-o", "{out}"],
            ".pftrace",
            False,
        ),
        "chrome": (["trace", "export", "-f", "chrome", str(sched_trace), "-o", "{out}"], ".json", False),
        "pprof": (["trace", "pprof", "--type", "sync", str(sched_trace), "-o", "{out}"], ".pb.gz", False),
        "plot": (["schedtrace", str(SCHEDTRACE_LOG), "--plot", "{out}"], ".svg", False),
        "parquet": (["trace", "export", "-f", "parquet", str(sched_trace), "-o", "{out}"], "", True),
        "demo": (["demo", "-o", "{out}"], "", True),
        "capture": (["capture", "-o", "{out}", "--", "go", "version"], "", True),
    }
    cases, want = [], []
    for name, (template, ext, is_dir) in outputs.items():
        bad = {"unwritable": (Path("/proc/goblueprint-test/out" + ext), None)}
        if is_dir:  # a missing parent is created, like the directory itself
            bad["exists as a file"] = (a_file, "not a directory")
        else:
            bad["parent missing"] = (no_parent.with_name("out" + ext), "no such file or directory")
            bad["is a directory"] = (a_dir, "is a directory")
        if name == "capture" or name == "demo":
            bad["below a file"] = (a_file / "sub", "not a directory")
        for what, (path, why) in bad.items():
            cases.append([a.replace("{out}", str(path)) for a in template])
            want.append((name, what, path, why))
    for (name, what, path, why), res in zip(want, run_many(cases), strict=True):
        assert res.code == 1, (name, what, res)
        line = res.one_line()
        assert line.startswith(f"goblueprint: error: cannot write {path}: "), (name, what, line)
        if why is not None:
            assert line.endswith(why), (name, what, line)
    assert not (tmp_path / "no").exists()


def test_output_extension_picks_the_format_or_is_refused(sched_trace, tmp_path):
    t = str(sched_trace)
    svg, html, json_out = tmp_path / "t.svg", tmp_path / "t.html", tmp_path / "t.json"
    refused = {
        "png": ["trace", "timeline", t, "-o", str(tmp_path / "t.png")],
        "svg flag, html name": ["trace", "timeline", "--svg", t, "-o", str(tmp_path / "x.html")],
        "pprof as svg": ["trace", "pprof", "--type", "sched", t, "-o", str(tmp_path / "p.svg")],
        "export without format": ["trace", "export", t, "-o", str(tmp_path / "e.bin")],
        "perfetto as json": ["trace", "export", "-f", "perfetto", t, "-o", str(tmp_path / "e.json")],
        "plot as pdf": ["schedtrace", str(SCHEDTRACE_LOG), "--plot", str(tmp_path / "s.pdf")],
    }
    ok = [
        ["trace", "timeline", t, "-o", str(svg)],
        ["trace", "timeline", t, "-o", str(html)],
        ["trace", "export", t, "-o", str(json_out)],
    ]
    results = run_many([*refused.values(), *ok])
    for name, res in zip(refused, results, strict=False):
        assert res.code == 1, (name, res)
        assert res.one_line().startswith("goblueprint: error: cannot write "), name
    assert "no PNG renderer" in results[0].stderr
    for res in results[len(refused) :]:
        assert res.code == 0 and res.stderr == "", res
    assert ET.fromstring(svg.read_text()).tag.endswith("svg")
    assert html.read_text().lstrip().lower().startswith("<!doctype html")
    assert "traceEvents" in json.loads(json_out.read_text())
    for name in ("t.png", "x.html", "p.svg", "e.bin", "e.json", "s.pdf"):
        assert not (tmp_path / name).exists(), name


def test_other_inputs_read_the_same(bad_traces, tmp_path):
    d, missing, rnd = bad_traces["directory"], bad_traces["missing"], bad_traces["random"]
    cases = {
        "schedtrace dir": (["schedtrace", str(d)], f"cannot read {d}: is a directory"),
        "schedtrace missing": (["schedtrace", str(missing)], f"cannot read {missing}: no such file or directory"),
        "binary dir": (["binary", "symbols", str(d)], f"cannot read {d}: is a directory"),
        "binary missing": (["binary", "layout", str(missing), "g"], f"cannot read {missing}: no such file or directory"),
        "diagram dir": (["source", "verify", str(d), "--machine", "g"], f"cannot read {d}: is a directory"),
        "diagram missing": (["source", "verify", str(missing), "--machine", "g"],
                            f"cannot read {missing}: no such file or directory"),
        "goroot missing": (["source", "states", "--machine", "g", "--goroot", str(missing)],
                           f"cannot read {missing}: no such file or directory"),
        "goroot a file": (["source", "states", "--machine", "g", "--goroot", str(rnd)],
                          f"cannot read {rnd}: not a directory"),
        "check dir": (["trace", "check", str(d)], f"cannot read {d}: is a directory"),
        # The documented form BIN -- ARGS: the program's arguments are not taken for watch options.
        "watch -- args": (["binary", "watch", str(missing), "--", "3"], f"cannot read {missing}: no such"),
        "watch opts -- args": (["binary", "watch", str(missing), "--count", "2", "--", "3"], "cannot read"),
    }  # fmt: skip
    results = run_many([argv for argv, _ in cases.values()])
    for (name, (argv, want)), res in zip(cases.items(), results, strict=True):
        # `source verify` is a checker: 1 means the drawing failed the check, so bad input is 2.
        assert res.code == (2 if argv[:2] == ["source", "verify"] else 1), (name, res)
        assert want in res.one_line(), (name, res.stderr)


def test_schedtrace_of_binary_data_does_not_print_it(bad_traces):
    res = run_many([["schedtrace", str(bad_traces["random"])], ["schedtrace", str(bad_traces["half"])]])
    for r in res:
        assert r.code == 1
        line = r.one_line()
        assert "binary data" in line, line
        assert line.isprintable() and line.isascii(), line


def test_disasm_suggests_the_package_of_a_bare_name():
    from tests.conftest import build_goprog  # the session's cached build of tests/goprogs/sched

    binary = build_goprog("sched", "1.27")
    res = run_many([["binary", "disasm", str(binary), "schedule"]])[0]
    assert res.code == 1
    assert "did you mean runtime.schedule" in res.one_line()


def test_wrong_command_lines_are_one_line_too():
    results = run_many(
        [["trace", "export", "t"], ["trace"], ["nope"], ["trace", "export", "-f", "xx", "t", "-o", "y"]]
    )
    for res in results:
        assert res.code == 2, res
        line = res.one_line()
        assert line.endswith("--help)"), line


def test_every_command_group_says_what_it_is():
    # A group's help line is its GROUP_HELP wherever in its modules that is defined, never
    # just its name (the lab's came from lab_observe.py, which is not the group's first module).
    top = run_many([["--help"]])[0]
    assert top.code == 0
    from goblueprint.cli import _command_modules

    for group in sorted({group for _, group, _ in _command_modules() if group is not None}):
        lines = [line.split() for line in top.stdout.splitlines()]
        words = next((w for w in lines if w and w[0] == group), None)
        assert words is not None, group
        help_words = words[1:] or next(w for w in lines[lines.index(words) + 1 :] if w)
        assert help_words != [group], (group, help_words)
        assert len(help_words) > 2, (group, help_words)


def test_trace_commands_document_the_partial_rule():
    names = ["stats", "dump", "metrics", "timeline", "export", "sql", "pprof", "view"]
    results = run_many([["trace", n, "--help"] for n in names] + [["schedtrace", "--help"]])
    top = run_many([["--help"]])[0]
    assert "Exit status" in top.stdout and "--allow-partial" in top.stdout
    for res in results:
        assert res.code == 0
        text = " ".join(res.stdout.split())
        assert "--allow-partial" in text and "used up to the failure" in text, res.argv


def test_entry_point_exit_status_and_one_line(bad_traces, tmp_path):
    # Through `python -m goblueprint` itself: sys.exit carries main's status.
    a_file = tmp_path / "a-file"
    a_file.write_text("x")
    res = run_one("trace", "stats", str(bad_traces["half"]))
    assert res.code == 1 and PARTIAL_LINE.match(res.one_line())
    res = run_one("trace", "stats", "--allow-partial", str(bad_traces["half"]))
    assert res.code == 0 and PARTIAL_LINE.match(res.one_line("warning"))
    res = run_one("demo", "-o", str(a_file))
    assert res.code == 1 and res.one_line() == f"goblueprint: error: cannot write {a_file}: not a directory"


BENCHES = [
    "trace_read.py",
    "generation_tables.py",
    "timeline_model.py",
    "timeline_views.py",
    "binary_bench.py",
    "fleet.py",
]
NO_PYTEST = r"""
import importlib.util, runpy, sys, traceback
real = importlib.util.find_spec
importlib.util.find_spec = lambda name, *a: None if name == "pytest" else real(name, *a)
sys.modules["pytest"] = None  # import pytest fails, as where it is not installed
sys.path.insert(0, "bench")  # what python puts first for a script
for script in sys.argv[1:]:
    sys.argv = [script]
    try:
        runpy.run_path(script, run_name="__main__")
        print(f"{script}\tno exit")
    except SystemExit as exc:
        print(f"{script}\t{exc.code}")
    except BaseException:
        print(f"{script}\tTraceback " + traceback.format_exc().replace("\n", " | "))
"""


def test_benches_without_pytest_say_so_in_one_line() -> None:
    import subprocess

    proc = subprocess.run(
        [sys.executable, "-c", NO_PYTEST, *(f"bench/{b}" for b in BENCHES)], cwd=ROOT, capture_output=True,
        text=True, timeout=300,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    said = dict(line.split("\t", 1) for line in proc.stdout.splitlines() if "\t" in line)
    for bench in BENCHES:
        message = said[f"bench/{bench}"]
        assert message.startswith(f"{bench}: needs pytest"), message


def test_an_unchecked_os_error_is_still_one_line(monkeypatch, capsys):
    # The safety net under the checks: an OSError naming a file no check foresaw.
    import errno

    from goblueprint.cli import main, trace_stats

    def run(args):
        raise FileNotFoundError(errno.ENOENT, "No such file or directory", "/gone/file")

    monkeypatch.setattr(trace_stats, "run", run)
    assert main(["trace", "stats", "x"]) == 1
    err = capsys.readouterr().err
    assert err == "goblueprint: error: cannot use /gone/file: no such file or directory\n"


def test_output_piped_into_a_reader_that_stops_early_is_not_an_error():
    # `goblueprint … | head -1`: the pipe breaks under the output; exit 0, nothing on stderr.
    # The reader is gone before the program starts, so every write fails, whenever it is made.
    import os
    import subprocess

    log = ROOT / "tests" / "capture" / "data" / "schedtrace-go1.27.3.log"
    for argv in (["schedtrace", "--json", str(log)], ["schedtrace", str(log)], ["--version"]):
        read_end, write_end = os.pipe()
        os.close(read_end)
        try:
            proc = subprocess.run(
                [sys.executable, "-m", "goblueprint", *argv], stdout=write_end, stderr=subprocess.PIPE,
                text=True, cwd=ROOT, timeout=120,
            )  # fmt: skip
        finally:
            os.close(write_end)
        assert (proc.returncode, proc.stderr) == (0, ""), argv


@pytest.mark.parametrize("argv", [["trace", "stats", "{trace}"], ["trace", "dump", "{trace}"]])
def test_output_into_a_closed_pipe_is_no_error(argv, sched_trace):
    # `goblueprint trace dump T | head`: the reader went away.  The OSError safety net above
    # took BrokenPipeError (a subclass) before its own clause could, and re-raised it: a traceback.
    import subprocess

    from .conftest import _env

    proc = subprocess.Popen(
        [sys.executable, "-m", "goblueprint", *_argv(argv, sched_trace, sched_trace)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=_env(),
    )  # fmt: skip
    proc.stdout.close()  # before it writes: its first write fails
    err = proc.stderr.read()
    assert proc.wait(timeout=600) == 0
    assert err == b""
