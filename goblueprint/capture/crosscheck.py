"""Compare schedtrace's counters with the same counts derived from the trace.

schedtrace prints, every MS milliseconds, the global run queue (``runqueue``),
the per-P queues and the number of idle Ps.  The execution trace records every
goroutine and P state transition, so replaying it gives, at any instant, the
number of runnable goroutines and of idle Ps.  The two should agree up to the
sampling skew; where they do not, one of the two views (or our reading) is off.

What is compared:

* runnable: schedtrace ``runqueue`` + sum of the per-P queues (``local_runq``,
  or ``runqsize`` of the P lines) against goroutines in state Runnable in the
  trace.  ``runnext`` slots are in neither schedtrace number, so the trace
  count may exceed schedtrace's by up to GOMAXPROCS.
* idle Ps: ``idleprocs`` against Ps in state Idle in the trace, among the first
  ``gomaxprocs`` Ps (after GOMAXPROCS shrinks, the trace keeps the dropped Ps Idle).

Clocks: schedtrace's times count from its first line, printed by sysmon right
after process start.  A capture through the overlay logs one
``goblueprint.clock`` user log holding time.Now's monotonic reading (which
also counts from process start) with the trace's own timestamp: that fixes
the offset to within about a millisecond.  Without it (test captures, foreign
binaries) the trace's first event is taken as schedtrace's 0 ms, and the
result says so (``alignment``: ``anchor`` or ``assumed``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from goblueprint.capture.schedtrace import Schedtrace
from goblueprint.capture.schedtrace_analysis import per_p_runq

CLOCK_CATEGORY = "goblueprint.clock"
_MONO = re.compile(r"m=\+(\d+)\.(\d{1,9})")


def _mono_ns(message: str) -> int | None:
    match = _MONO.search(message)
    if match is None:
        return None
    return int(match.group(1)) * 1_000_000_000 + int(match.group(2).ljust(9, "0"))


def compare(trace_events: Iterable[Any], sched: Schedtrace) -> dict[str, Any]:
    """Replay the trace's state transitions and sample them at schedtrace's instants.

    ``trace_events`` are goblueprint.trace Events in reader order (time order).
    """
    from goblueprint.trace.events import EventKind, GoState, ProcState, ResourceKind

    samples = [s for s in sched.samples]
    gstate: dict[int, int] = {}
    pstate: dict[int, int] = {}
    runnable = 0
    origin: int | None = None  # trace time of schedtrace's 0 ms
    first_time: int | None = None
    last_time: int | None = None
    alignment = "assumed"
    # Events are consumed lazily; samples are resolved once the trace passes them,
    # which needs the origin: buffer events until it is known (anchor is near the start).
    pending: list[Any] = []
    rows: list[dict[str, Any]] = []
    si = 0

    def apply(ev: Any) -> None:
        nonlocal runnable
        if ev.kind != EventKind.STATE_TRANSITION:
            return
        st = ev.state_transition()
        rid = st.resource
        if rid.kind == ResourceKind.GOROUTINE:
            before = gstate.get(rid.id, GoState.UNDETERMINED)
            runnable += (st.new == GoState.RUNNABLE) - (before == GoState.RUNNABLE)
            gstate[rid.id] = st.new
        elif rid.kind == ResourceKind.PROC:
            pstate[rid.id] = st.new

    def take(upto: int) -> None:
        nonlocal si
        assert origin is not None
        while si < len(samples) and origin + samples[si].t_ms * 1_000_000 <= upto:
            s = samples[si]
            si += 1
            at = origin + s.t_ms * 1_000_000
            if first_time is None or at < first_time:
                continue  # before the trace started: nothing to compare with
            queues = per_p_runq(s)
            # After GOMAXPROCS shrinks, the trace leaves the dropped Ps Idle while schedtrace
            # counts only the first gomaxprocs Ps: count those alone.
            nprocs = s.counters.get("gomaxprocs")
            idle_now = sum(
                1
                for pid, state in pstate.items()
                if state == ProcState.IDLE and (nprocs is None or pid < nprocs)
            )
            sched_runnable = (s.counters.get("runqueue") or 0) + (sum(queues) if queues else 0)
            rows.append(
                {
                    "t_ms": s.t_ms,
                    "sched_runqueue": s.counters.get("runqueue"),
                    "sched_local_runq_total": sum(queues) if queues is not None else None,
                    "sched_runnable": sched_runnable,
                    "trace_runnable": runnable,
                    "sched_idleprocs": s.counters.get("idleprocs"),
                    "trace_idleprocs": idle_now,
                }
            )

    for ev in trace_events:
        t = ev.time
        if first_time is None:
            first_time = t
        last_time = t
        if origin is None:
            if ev.kind == EventKind.LOG:
                log = ev.log()
                if log.category == CLOCK_CATEGORY and (mono := _mono_ns(log.message)) is not None:
                    origin = t - mono
                    alignment = "anchor"
            pending.append(ev)
            # Give up on an anchor after the first generation's worth of events.
            if origin is None and len(pending) < 100_000:
                continue
            if origin is None:
                origin = first_time
            for old in pending:
                take(old.time)
                apply(old)
            pending.clear()
            continue
        take(t)
        apply(ev)
    if origin is None and first_time is not None:
        origin = first_time
        for old in pending:
            take(old.time)
            apply(old)
    # Samples after the last event are outside the trace and not compared.

    def stats(a: str, b: str) -> tuple[int, float | None]:
        diffs = [abs(r[a] - r[b]) for r in rows if r[a] is not None]
        return sum(1 for d in diffs if d), (round(sum(diffs) / len(diffs), 3) if diffs else None)

    rq_mis, rq_mean = stats("sched_runnable", "trace_runnable")
    ip_mis, ip_mean = stats("sched_idleprocs", "trace_idleprocs")
    return {
        "alignment": alignment,
        "origin_ns": origin,
        "trace_span_ns": (last_time - first_time)
        if first_time is not None and last_time is not None
        else None,
        "compared": len(rows),
        "runqueue_mismatches": rq_mis,
        "runqueue_mean_abs_diff": rq_mean,
        "idleprocs_mismatches": ip_mis,
        "idleprocs_mean_abs_diff": ip_mean,
        "rows": rows,
    }
