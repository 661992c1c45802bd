"""The schedtrace/trace cross-check on hand-made event streams, where the answer is known.

Stand-in events carry only what ``compare`` reads (kind, time, state_transition(), log()).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from goblueprint.capture.crosscheck import CLOCK_CATEGORY, SLACK_NS, compare
from goblueprint.capture.schedtrace import Sample, Schedtrace
from goblueprint.trace.events import (
    NO_STACK,
    EventKind,
    GoState,
    Log,
    ProcState,
    ResourceID,
    ResourceKind,
    StateTransition,
)

MS = 1_000_000
ORIGIN = 5_000_000_000  # trace time of schedtrace's 0 ms


@dataclass
class Ev:
    kind: EventKind
    time: int
    payload: Any = None

    def state_transition(self) -> StateTransition:
        return self.payload

    def log(self) -> Log:
        return self.payload


def anchor(at_ms: float) -> Ev:
    mono = int(at_ms * MS)
    msg = f"2026-12-02 14:00:00 +0000 UTC m=+{mono // 1_000_000_000}.{mono % 1_000_000_000:09d}"
    return Ev(EventKind.LOG, ORIGIN + mono, Log(0, CLOCK_CATEGORY, msg))


def go(at_ns: int, gid: int, old: GoState, new: GoState) -> Ev:
    st = StateTransition(ResourceID(ResourceKind.GOROUTINE, gid), "", NO_STACK, old, new)
    return Ev(EventKind.STATE_TRANSITION, at_ns, st)


def proc(at_ns: int, pid: int, old: ProcState, new: ProcState) -> Ev:
    st = StateTransition(ResourceID(ResourceKind.PROC, pid), "", NO_STACK, old, new)
    return Ev(EventKind.STATE_TRANSITION, at_ns, st)


def sample(t_ms: int, runqueue: int, idle: int, local: list[int]) -> Sample:
    return Sample(
        t_ms=t_ms, counters={"gomaxprocs": 2, "idleprocs": idle, "runqueue": runqueue}, local_runq=local
    )


def _events(flicker_at_ms: int) -> list[Ev]:
    """Two Ps running; G10 and G11 runnable from 1 ms; around ``flicker_at_ms`` G12 turns
    runnable for 0.2 ms and P1 idles for 0.2 ms; at 30 ms both Ps idle and nothing runs."""
    t = ORIGIN + flicker_at_ms * MS
    return [
        anchor(0.5),
        proc(ORIGIN + MS, 0, ProcState.UNDETERMINED, ProcState.RUNNING),
        proc(ORIGIN + MS, 1, ProcState.UNDETERMINED, ProcState.RUNNING),
        go(ORIGIN + MS, 10, GoState.NOT_EXIST, GoState.RUNNABLE),
        go(ORIGIN + MS, 11, GoState.NOT_EXIST, GoState.RUNNABLE),
        go(t + 300_000, 12, GoState.NOT_EXIST, GoState.RUNNABLE),
        proc(t + 400_000, 1, ProcState.RUNNING, ProcState.IDLE),
        go(t + 500_000, 12, GoState.RUNNABLE, GoState.RUNNING),
        proc(t + 600_000, 1, ProcState.IDLE, ProcState.RUNNING),
        go(ORIGIN + 30 * MS, 10, GoState.RUNNABLE, GoState.RUNNING),
        go(ORIGIN + 30 * MS, 11, GoState.RUNNABLE, GoState.RUNNING),
        proc(ORIGIN + 30 * MS, 0, ProcState.RUNNING, ProcState.IDLE),
        proc(ORIGIN + 30 * MS, 1, ProcState.RUNNING, ProcState.IDLE),
        go(ORIGIN + 40 * MS, 10, GoState.RUNNING, GoState.NOT_EXIST),
    ]


def test_a_sample_matching_a_passing_value_in_its_millisecond_agrees() -> None:
    # At 20 ms schedtrace saw three queued goroutines and an idle P: true only for
    # 0.1 ms inside that millisecond, never at the 20.000 ms instant itself.
    sched = Schedtrace([sample(20, 3, 1, [0, 0]), sample(35, 0, 2, [0, 0])])
    cross = compare(_events(20), sched)
    assert cross["alignment"] == "anchor" and cross["origin_ns"] == ORIGIN
    assert cross["compared"] == 2
    first, second = cross["rows"]
    assert (first["trace_runnable"], first["trace_runnable_range"]) == (2, [2, 3])
    assert (first["trace_idleprocs"], first["trace_idleprocs_range"]) == (0, [0, 1])
    assert first["runnable_agrees"] and first["idleprocs_agrees"]
    assert cross["runqueue_instant_differs"] == 1 and cross["idleprocs_instant_differs"] == 1
    assert second["trace_runnable_range"] == [0, 0] and second["trace_idleprocs_range"] == [2, 2]
    assert cross["runqueue_mismatches"] == 0 and cross["idleprocs_mismatches"] == 0


def test_values_outside_the_window_disagree() -> None:
    # The flicker happens at 25 ms, beyond 20 ms + 1 ms + slack: at 20 ms the trace
    # shows two runnable and no idle P the whole window, and schedtrace's 3 and 1 disagree.
    assert (25 - 21) * MS > SLACK_NS
    cross = compare(_events(25), Schedtrace([sample(20, 3, 1, [0, 0])]))
    (row,) = cross["rows"]
    assert row["trace_runnable_range"] == [2, 2] and row["trace_idleprocs_range"] == [0, 0]
    assert row["runnable_agrees"] is False and row["idleprocs_agrees"] is False
    assert cross["runqueue_mismatches"] == 1 and cross["idleprocs_mismatches"] == 1


def test_runnext_slots_let_the_trace_exceed_schedtrace_by_up_to_gomaxprocs() -> None:
    events = _events(25)
    # Two runnable in the trace; schedtrace's queues hold 0 (both in runnext) or 1: agree.
    for queued in (0, 1, 2):
        (row,) = compare(events, Schedtrace([sample(10, queued, 0, [0, 0])]))["rows"]
        assert row["runnable_agrees"], queued
    # More queued than the trace has runnable: disagree.
    (row,) = compare(events, Schedtrace([sample(10, 1, 0, [1, 1])]))["rows"]
    assert row["sched_runnable"] == 3 and row["runnable_agrees"] is False


def test_samples_outside_the_trace_are_not_compared_and_no_anchor_means_assumed() -> None:
    events = [e for e in _events(20) if e.kind != EventKind.LOG]
    # Without the anchor, the first event (1 ms on the anchor's clock) is 0 ms.
    sched = Schedtrace([sample(5, 2, 0, [0, 0]), sample(100, 0, 2, [0, 0])])
    cross = compare(events, sched)
    assert cross["alignment"] == "assumed" and cross["origin_ns"] == ORIGIN + MS
    assert [r["t_ms"] for r in cross["rows"]] == [5]  # 100 ms is after the last event
