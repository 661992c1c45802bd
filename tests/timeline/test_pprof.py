"""Our profiles vs `go tool trace -pprof=TYPE` on the same trace, decoded by the same decoder."""

from __future__ import annotations

import gzip
import subprocess
from collections import Counter
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from tl_goref import TRACES

from goblueprint import toolchain
from goblueprint.cli import main
from goblueprint.errors import TraceError
from goblueprint.timeline import pprof
from goblueprint.trace.wire import batch_layout

TYPES = ["sched", "sync", "syscall", "net"]


def go_profile(trace: Path, typ: str) -> pprof.Profile:
    tc = toolchain.find("1.27")
    proc = subprocess.run(
        [str(tc.go), "tool", "trace", f"-pprof={typ}", str(trace)],
        capture_output=True,
        env=tc.env(),
        check=True,
    )
    return pprof.decode(proc.stdout)


def assert_same_profile(ours: pprof.Profile, theirs: pprof.Profile) -> None:
    assert len(ours.samples) == len(theirs.samples)
    for i in range(2):
        assert sum(v[i] for _, v in ours.samples) == sum(v[i] for _, v in theirs.samples)
    # Stronger: the same stacks (function names, leaf first) with the same values.
    assert Counter(ours.stacks()) == Counter(theirs.stacks())
    assert ours.sample_types == theirs.sample_types == [("contentions", "count"), ("delay", "nanoseconds")]
    assert ours.period_type == theirs.period_type and ours.period == theirs.period


@pytest.mark.slow
@pytest.mark.parametrize(("prog", "go"), TRACES)
@pytest.mark.parametrize("typ", TYPES)
def test_profile_equals_go(prog: str, go: str, typ: str, trace_path: Any, analysed: Any) -> None:
    a = analysed(prog, go)
    recs = a.profiles.records(typ)
    ours = pprof.decode(pprof.write_gzip(pprof.build_profile(recs)))
    assert_same_profile(ours, go_profile(trace_path(prog, go), typ))


@pytest.mark.slow
@pytest.mark.parametrize("typ", TYPES)
def test_cli_writes_go_equal_profile(typ: str, trace_path: Any, tmp_path: Path) -> None:
    trace = trace_path("sched", "1.27")
    out = tmp_path / f"{typ}.pb.gz"
    assert main(["trace", "pprof", "--type", typ, str(trace), "-o", str(out)]) == 0
    assert_same_profile(pprof.decode(out.read_bytes()), go_profile(trace, typ))


@pytest.mark.slow
def test_profiles_are_not_trivially_empty(analysed: Any) -> None:
    a = analysed("sched", "1.27")
    for typ in TYPES:
        assert a.profiles is not None and a.profiles.stays.filter(pl.col("type") == typ).height, typ


def test_encode_decode_round_trip() -> None:
    frames = [
        pprof_frame(0x401000, "main.f", "/x/a.go", 10),
        pprof_frame(0x402000, "main.main", "/x/a.go", 3),
    ]
    recs = [pprof.ProfileRecord(frames, 3, 1500), pprof.ProfileRecord(frames[1:], 1, -7)]
    prof = pprof.build_profile(recs)
    data = pprof.write_gzip(prof)
    assert data == pprof.write_gzip(pprof.build_profile(recs))  # deterministic bytes
    back = pprof.decode(data)
    assert back.stacks() == [(("main.f", "main.main"), (3, 1500)), (("main.main",), (1, -7))]
    assert back.functions == prof.functions and back.locations == prof.locations
    assert pprof.decode(gzip.decompress(data)).stacks() == back.stacks()


@pytest.mark.parametrize("data", [b"\x0a\x05ab", b"\xff\xff\xff", b"\x1f\x8bnot gzip", b"\x0b"])
def test_decode_malformed_raises_trace_error(data: bytes) -> None:
    with pytest.raises(TraceError):
        pprof.decode(data)


def pprof_frame(pc: int, func: str, file: str, line: int) -> Any:
    from tl_goref import StackFrame

    return StackFrame(pc, func, file, line)


@pytest.mark.slow
def test_truncated_trace_profiles_complete_generations_like_go(
    go_trace: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # A trace cut in its last generation: go tool trace profiles the events up to the
    # last Sync it read and still succeeds; so do we, with --allow-partial (a warning, exit 0;
    # without it the same profile is written and the exit status says it is partial).
    # gens runs for about 2.5 s, so the runtime (a new generation every second) writes several.
    whole = go_trace(
        "gens", go="1.27", prog_root=Path(__file__).resolve().parents[1] / "trace_core" / "goprogs"
    )
    data = whole.read_bytes()
    cut = tmp_path / "cut.trace"
    # Cut halfway into the last generation: a fixed fraction of the file may land in the
    # first generation of a run whose generations happen to be laid out differently.
    gen_starts: dict[int, int] = {}
    for gen, batch in batch_layout(data):
        if gen:
            gen_starts.setdefault(gen, batch.offset)
    assert len(gen_starts) >= 2, "the gens trace should span several generations"
    last_start = gen_starts[max(gen_starts)]
    cut.write_bytes(data[: (last_start + len(data)) // 2])
    out = tmp_path / "cut.pb.gz"
    assert main(["trace", "pprof", "--type", "sched", str(cut), "-o", str(out)]) == 1
    assert "complete generations" in capsys.readouterr().err
    assert main(["trace", "pprof", "--allow-partial", "--type", "sched", str(cut), "-o", str(out)]) == 0
    assert "goblueprint: warning: partial trace: " in capsys.readouterr().err
    ours = pprof.decode(out.read_bytes())
    assert ours.samples
    assert_same_profile(ours, go_profile(cut, "sched"))


def test_stays_collected_in_many_blocks_are_the_same(
    trace_path: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The stays go to blocks of a fixed size once a block is full: blocks of a few rows each
    # (a row's stays can never straddle two) give the very same table.
    from goblueprint.timeline.source import run_pass

    def stays() -> pl.DataFrame:
        c = pprof.StayCollector(pprof.PROFILE_TYPES)
        run_pass(trace_path("sched", "1.27"), [c])
        return c.frame()

    whole = stays()
    monkeypatch.setattr(pprof, "_STAY_BLOCK", 1)
    blocks = stays()
    assert whole.height > 1000 and blocks.equals(whole)


def test_stays_frame_lets_go_of_the_blocks(trace_path: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    # The table is made block by block, each block let go of once split by type: the
    # collector holds none of them afterwards (the blocks and the table were held at once).
    import weakref

    from goblueprint.timeline.source import run_pass

    monkeypatch.setattr(pprof, "_STAY_BLOCK", 64)
    c = pprof.StayCollector(pprof.PROFILE_TYPES)
    run_pass(trace_path("sched", "1.27"), [c])
    refs = [weakref.ref(block) for block in c.full]
    assert len(refs) > 2
    table = c.frame()
    assert table.height > 1000 and table["type"].to_list() == sorted(table["type"].to_list())
    assert c.full == [] and c.n == 0 and len(c.out) == 0
    assert all(ref() is None for ref in refs)
