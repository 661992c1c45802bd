"""Go's goroutine summary (internal/trace/summary.go, run by goref) vs ours, number for number."""

from __future__ import annotations

from typing import Any

import pytest
from tl_goref import MORE_TRACES, TRACES

from goblueprint.timeline.summary import GoroutineSummary, summarize

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
