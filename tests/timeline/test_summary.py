"""Go's goroutine summary (internal/trace/summary.go, run by goref) vs ours, number for number."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
from tl_goref import MORE_TRACES, TRACES, goref_binary

from goblueprint.timeline.source import run_pass
from goblueprint.timeline.summary import (
    ExecStats,
    GoroutineSummary,
    RegionSummary,
    Summarizer,
    Summary,
    summarize,
)

pytestmark = pytest.mark.slow


def as_go(g: GoroutineSummary) -> dict[str, Any]:
    s = g.stats
    return {
        "id": g.id, "name": g.name, "pc": g.pc, "creation": g.creation_time, "start": g.start_time,
        "end": g.end_time, "exec": s.exec_time, "sched_wait": s.sched_wait_time,
        "block": s.block_time_by_reason, "syscall": s.syscall_time, "syscall_block": s.syscall_block_time,
        "total": s.total_time, "ranges": s.range_time, "regions": len(g.regions),
    }  # fmt: skip


@pytest.mark.parametrize(("prog", "go"), MORE_TRACES)
def test_summary_from_our_reader_equals_go(prog: str, go: str, analysed: Any, go_reference: Any) -> None:
    ours = analysed(prog, go).summary.goroutines
    ref = go_reference(prog, go).summaries
    assert sorted(ours) == sorted(ref)
    for gid, expected in ref.items():
        assert as_go(ours[gid]) == expected, gid


@pytest.mark.parametrize(("prog", "go"), TRACES)
def test_summary_from_go_events_equals_go(prog: str, go: str, go_reference: Any) -> None:
    # The summarizer alone, fed Go's own events: independent of our trace reader.
    ref = go_reference(prog, go)
    ours = summarize(ref.events).goroutines
    assert {gid: as_go(g) for gid, g in ours.items()} == ref.summaries


def test_summary_exercises_every_state(analysed: Any) -> None:
    # Guard against a trace that would make the comparisons above trivially true.  Each
    # property is forced by tests/goprogs/sched (see the function named), not by luck.
    gs = analysed("sched", "1.27").summary.goroutines.values()

    def total(field: str) -> int:
        return sum(getattr(g.stats, field) for g in gs)

    assert total("exec_time") > 0, "no goroutine ran"
    assert total("sched_wait_time") > 0, "no goroutine waited runnable (cpuBound: more spinners than Ps)"
    assert total("syscall_time") > 0, "no syscall (syscalls: pipe and file writes)"
    assert total("syscall_block_time") > 0, (
        "no syscall whose P was retaken (blockedSyscall: a 100 ms blocking read, past sysmon's 10 ms)"
    )
    reasons = {r for g in gs for r in g.stats.block_time_by_reason}
    for reason, where in [
        ("chan receive", "channels, timers' ticker"),
        ("sync", "mutexes, WaitGroup.Wait"),
        ("network", "network: the netpoller"),
        ("sleep", "timers: time.Sleep"),
    ]:
        assert reason in reasons, f"no goroutine blocked on {reason!r} ({where}); seen: {sorted(reasons)}"
    assert any("GC mark assist" in g.stats.range_time for g in gs), "no GC mark assist (garbage: GOGC=5)"
    assert any(g.end_time for g in gs), "no goroutine ended"
    assert any(g.regions for g in gs), "no user region"


# Go's own tests of its trace reader (internal/trace/testdata/tests) that read without error:
# tiny traces made for the corner cases (syscalls whose P is stolen across generations, tasks
# across generations, goroutines created without a running G, ...).
def _go_tests() -> list[str]:
    from goblueprint import toolchain
    from goblueprint.trace import textform

    root = toolchain.find().goroot / "src" / "internal" / "trace" / "testdata" / "tests"
    return sorted(
        p.stem for p in root.glob("*.test") if not textform.parse_test_file(p.read_bytes()).expect_failure
    )


def _stats(s: ExecStats) -> dict[str, Any]:
    return {
        "exec": s.exec_time, "sched_wait": s.sched_wait_time, "block": s.block_time_by_reason,
        "syscall": s.syscall_time, "syscall_block": s.syscall_block_time, "total": s.total_time,
        "ranges": s.range_time,
    }  # fmt: skip


def _regions(rs: list[RegionSummary]) -> list[dict[str, Any]]:
    return [{"task": r.task, "name": r.name, "start": r.start_time, "end": r.end_time, "stats": _stats(r.stats)}
            for r in rs]  # fmt: skip


def _unordered(rs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    # Go sorts a goroutine's regions by start time with an unstable sort: ties come in any order.
    return sorted(rs, key=lambda r: json.dumps(r, sort_keys=True))


def whole_as_go(summary: Summary) -> dict[str, Any]:
    """Our whole summary in gosummary's shape."""
    gs = [
        {"id": g.id, "name": g.name, "pc": g.pc, "creation": g.creation_time, "start": g.start_time,
         "end": g.end_time, "regions": _unordered(_regions(g.regions)), "stats": _stats(g.stats)}
        for g in sorted(summary.goroutines.values(), key=lambda g: g.id)
    ]  # fmt: skip
    tasks = [
        {"id": t.id, "name": t.name, "parent": t.parent, "children": t.children, "start": t.start_time,
         "end": t.end_time, "logs": t.logs, "regions": _regions(t.regions), "goroutines": sorted(t.goroutines)}
        for t in sorted(summary.tasks.values(), key=lambda t: t.id)
    ]  # fmt: skip
    return {"goroutines": gs, "tasks": tasks}


@pytest.fixture(scope="module")
def go_test_trace(tmp_path_factory: pytest.TempPathFactory) -> Any:
    from goblueprint import toolchain
    from goblueprint.trace import textform

    root = toolchain.find().goroot / "src" / "internal" / "trace" / "testdata" / "tests"
    out = tmp_path_factory.mktemp("gotests")

    def get(name: str) -> Path:
        path = out / f"{name}.trace"
        if not path.exists():
            path.write_bytes(textform.parse_test_file((root / f"{name}.test").read_bytes()).wire)
        return path

    return get


@pytest.mark.parametrize("name", [*_go_tests(), "sched", "gcmix", "summaryedges"])
def test_whole_summary_equals_go(name: str, go_test_trace: Any, go_trace: Any) -> None:
    # Every field of every goroutine, region and task, against Go's Summarizer on the same bytes.
    # summaryedges makes what the others lack: regions and tasks ended but not begun while
    # traced, goroutines waiting "forever" (in a region too), regions left open.
    if name in ("gcmix", "summaryedges"):
        trace = go_trace(name, go="1.27", prog_root=Path(__file__).parent / "goprogs")
    elif name == "sched":
        trace = go_trace(name, go="1.27")
    else:
        trace = go_test_trace(name)
    binary = goref_binary(source=Path(__file__).parent / "gosummary" / "main.go", name="gosummary")
    ref = json.loads(subprocess.run([str(binary), str(trace)], capture_output=True, check=True).stdout)
    assert "error" not in ref
    for g in ref["goroutines"]:
        g["regions"] = _unordered(g["regions"])
    s = Summarizer()
    run_pass(trace, [s])
    ours = whole_as_go(s.finalize())
    assert ours == {"goroutines": ref["goroutines"], "tasks": ref["tasks"]}
