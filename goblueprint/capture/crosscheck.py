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

Clocks: schedtrace's times count from the runtime's start (``runtimeInitTime``,
a CLOCK_MONOTONIC reading).  capture measures that instant from outside the
process: every SCHED line says how old the process was ("Nms") and arrives
through a pipe; the smallest (arrival - N ms) over all lines is the start, late
by the pipe's latency plus up to 1 ms of truncation (``meta.json``
``process_start_mono_ns``), and never later than the trace's first event (the
runtime starts before anything can start its trace).  The trace's clock is the runtime's nanotime on
Linux (``traceClockNow`` = nanotime()/64); Go 1.25+ traces also carry a clock
snapshot (trace time, monotonic time) in their Sync events, used when present.
Older captures of main packages logged one ``goblueprint.clock`` user log (an
in-process anchor) that is still understood.  Without either, the trace's first
event is taken as schedtrace's 0 ms, and the result says so (``alignment``:
``outside``, ``anchor`` or ``assumed``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from pathlib import Path
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


#: How far the anchor may misplace schedtrace's clock (time.Now and the trace's
#: timestamp are read one after the other, not at once).
SLACK_NS = 1_000_000
#: schedtrace prints whole milliseconds, truncated: its instant lies in [t, t + 1 ms).
_MS = 1_000_000


def clock_origin(capture_dir: Path) -> int | None:
    """The process start (CLOCK_MONOTONIC ns) recorded in CAPTURE_DIR/meta.json, if any."""
    try:
        meta = json.loads((capture_dir / "meta.json").read_text())
    except (OSError, ValueError):
        return None
    value = meta.get("process_start_mono_ns") if isinstance(meta, dict) else None
    return value if isinstance(value, int) else None


def compare(
    trace_events: Iterable[Any], sched: Schedtrace, origin_mono_ns: int | None = None
) -> dict[str, Any]:
    """Replay the trace's state transitions and sample them at schedtrace's instants.

    ``trace_events`` are goblueprint.trace Events in reader order (time order);
    ``origin_mono_ns`` is the process start on CLOCK_MONOTONIC (``clock_origin``).

    A schedtrace sample is known only to the millisecond, and the clocks are
    aligned to about a millisecond more, so each sample is compared with every
    value the trace took in its window ``[t - SLACK, t + 1 ms + SLACK]``: a
    sample *agrees* when one instant of the window fits it.  For runnable
    goroutines that means the trace's count minus schedtrace's lies in
    ``0..gomaxprocs`` (the ``runnext`` slots); for idle Ps, equality.  Busy
    phases change these counts many times per millisecond, so comparing at a
    single guessed instant (``*_instant_*`` below) differs often even when both
    views are right.
    """
    from goblueprint.trace.events import EventKind, GoState, ProcState, ResourceKind

    from_outside = origin_mono_ns is not None

    samples = list(sched.samples)
    n = len(samples)
    gstate: dict[int, int] = {}
    pstate: dict[int, int] = {}
    runnable = 0
    origin: int | None = None  # trace time of schedtrace's 0 ms
    first_time: int | None = None
    last_time: int | None = None
    alignment = "assumed"
    # Per sample: the trace's counts at its instant and their ranges over its window.
    inst_r = [0] * n
    inst_i = [0] * n
    lo_r = [0] * n
    hi_r = [0] * n
    lo_i = [0] * n
    hi_i = [0] * n
    nprocs = [s.counters.get("gomaxprocs") for s in samples]
    opened = taken = closed = 0  # samples whose window opened / instant passed / window closed
    # Events are consumed lazily; samples are resolved once the trace passes them,
    # which needs the origin: buffer events until it is known (anchor is near the start).
    pending: list[Any] = []

    def idle(limit: int | None) -> int:
        # After GOMAXPROCS shrinks, the trace leaves the dropped Ps Idle while schedtrace
        # counts only the first gomaxprocs Ps: count those alone.
        return sum(
            1 for pid, state in pstate.items() if state == ProcState.IDLE and (limit is None or pid < limit)
        )

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
            for k in range(closed, opened):
                lo_r[k] = min(lo_r[k], runnable)
                hi_r[k] = max(hi_r[k], runnable)
        elif rid.kind == ResourceKind.PROC:
            pstate[rid.id] = st.new
            for k in range(closed, opened):
                now = idle(nprocs[k])
                lo_i[k] = min(lo_i[k], now)
                hi_i[k] = max(hi_i[k], now)

    def take(upto: int) -> None:
        """Advance the samples to the state just before an event at ``upto``."""
        nonlocal opened, taken, closed
        assert origin is not None  # callers set it first
        while opened < n and origin + samples[opened].t_ms * _MS - SLACK_NS <= upto:
            lo_r[opened] = hi_r[opened] = runnable
            lo_i[opened] = hi_i[opened] = idle(nprocs[opened])
            opened += 1
        while taken < opened and origin + samples[taken].t_ms * _MS <= upto:
            inst_r[taken] = runnable
            inst_i[taken] = idle(nprocs[taken])
            taken += 1
        while closed < taken and origin + samples[closed].t_ms * _MS + _MS + SLACK_NS <= upto:
            closed += 1

    for ev in trace_events:
        t = ev.time
        if first_time is None:
            first_time = t
        last_time = t
        if origin is None and from_outside:
            assert origin_mono_ns is not None  # from_outside says so
            origin = origin_mono_ns
            alignment = "outside"
            if ev.kind == EventKind.SYNC and (snap := ev.sync().clock_snapshot) is not None:
                origin = snap.trace + (origin_mono_ns - snap.mono)
            # The runtime starts before anything can start its trace; the measurement can only be
            # late (by the pipe's latency), so an estimate inside the trace is moved before it.
            origin = min(origin, t - 1)
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

    rows: list[dict[str, Any]] = []
    for k in range(taken):  # taken > 0 only once origin and first_time are set
        s = samples[k]
        if origin + s.t_ms * _MS < first_time:  # type: ignore[operator]
            continue  # before the trace started: nothing to compare with
        queues = per_p_runq(s)
        sched_runnable = _sched_runnable(s)
        rows.append(
            {
                "t_ms": s.t_ms,
                "sched_runqueue": s.counters.get("runqueue"),
                "sched_local_runq_total": sum(queues) if queues is not None else None,
                "sched_runnable": sched_runnable,
                "trace_runnable": inst_r[k],
                "trace_runnable_range": [lo_r[k], hi_r[k]],
                "sched_idleprocs": s.counters.get("idleprocs"),
                "trace_idleprocs": inst_i[k],
                "trace_idleprocs_range": [lo_i[k], hi_i[k]],
                "runnable_agrees": _runnable_agrees(sched_runnable, lo_r[k], hi_r[k], nprocs[k]),
                "idleprocs_agrees": _idle_agrees(s.counters.get("idleprocs"), lo_i[k], hi_i[k]),
            }
        )
    # Samples after the last event are outside the trace and not compared.

    def instant(a: str, b: str) -> tuple[int, float | None]:
        diffs = [abs(r[a] - r[b]) for r in rows if r[a] is not None]
        return sum(1 for d in diffs if d), (round(sum(diffs) / len(diffs), 3) if diffs else None)

    rq_inst, rq_mean = instant("sched_runnable", "trace_runnable")
    ip_inst, ip_mean = instant("sched_idleprocs", "trace_idleprocs")
    return {
        "alignment": alignment,
        "origin_ns": origin,
        "window_ns": [-SLACK_NS, _MS + SLACK_NS],
        "trace_span_ns": (last_time - first_time)
        if first_time is not None and last_time is not None
        else None,
        "compared": len(rows),
        "runqueue_mismatches": sum(1 for r in rows if r["runnable_agrees"] is False),
        "idleprocs_mismatches": sum(1 for r in rows if r["idleprocs_agrees"] is False),
        "runqueue_instant_differs": rq_inst,
        "runqueue_mean_abs_diff": rq_mean,
        "idleprocs_instant_differs": ip_inst,
        "idleprocs_mean_abs_diff": ip_mean,
        "rows": rows,
    }


def _sched_runnable(s: Any) -> int:
    queues = per_p_runq(s)
    return (s.counters.get("runqueue") or 0) + (sum(queues) if queues else 0)


def _runnable_agrees(sched: int, lo: int, hi: int, nprocs: int | None) -> bool:
    # The trace counts goroutines in runnext slots, schedtrace does not: some instant of
    # the window must have sched <= trace <= sched + (one runnext per P).  The count moves
    # by one per transition, so every value between lo and hi occurred.
    return hi >= sched and lo <= sched + (nprocs or 0)


def _idle_agrees(sched: Any, lo: int, hi: int) -> bool | None:
    if sched is None:
        return None
    return bool(lo <= sched <= hi)
