"""Lab records against the execution trace of the same run (same clock: nanotime)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

from goblueprint.lab.records import Dump
from goblueprint.lab.transitions import state_names

# Go's internal/trace GoState values (goblueprint's store keeps them as they are).
TRACE_UNDETERMINED, TRACE_RUNNABLE, TRACE_RUNNING, TRACE_SYSCALL = 0, 2, 3, 5
TRACE_GOROUTINE = 1  # resource_kind of goroutine transitions


@dataclass
class StartCount:
    """Goroutine starts (Runnable -> Running) seen by the lab and by the tracer.

    The tracer reports one kind of start the runtime never makes: when a goroutine
    leaves a syscall after its P was taken and the fast path finds another P, the
    runtime goes _Gsyscall -> _Grunning, but the tracer (Go <= 1.25's exitsyscall:
    GoSysExit(lostP) then GoStart) says Syscall -> Runnable -> Running. Those are the
    trace's Syscall -> Runnable edges the lab did not see as _Gsyscall -> _Grunnable.
    """

    lab: int  # _Grunnable -> _Grunning records inside the trace's time span
    trace: int  # the trace's goroutine Runnable -> Running transitions
    trace_syscall_runnable: int
    lab_syscall_runnable: int
    window: tuple[int, int]
    procs: int  # Ps that appear in the trace

    @property
    def edge_slack(self) -> int:
        """How far the counts may differ for starts cut by the trace's ends alone.

        execute's casgstatus is recorded just before the tracer's GoStart, so a start in
        flight when tracing begins or ends falls on one side only: at most one per P at
        each end.
        """
        return 2 * self.procs

    @property
    def lost_p_exits(self) -> int:
        return max(0, self.trace_syscall_runnable - self.lab_syscall_runnable)

    @property
    def unexplained(self) -> int:
        return self.lab - (self.trace - self.lost_p_exits)


def goroutine_starts(trace: Path, table: dict[str, Any], dump: Dump, facts: dict[str, Any]) -> StartCount:
    """Count goroutine starts both ways over the span the trace covers."""
    from goblueprint.trace.store import events_frame

    events = events_frame(str(trace))
    moves = events.filter(
        (pl.col("kind") == "STATE_TRANSITION") & (pl.col("resource_kind") == TRACE_GOROUTINE)
    )
    # The span in which the tracer recorded transitions: from its first to its last real one.
    # Not to the trace's last event: stopping a trace writes a closing generation of status
    # events (old state Undetermined) well after tracing stopped, and in between the runtime
    # goes on (the trace reader, readied over and over to drain the buffers, ran 2253 times
    # there on a loaded machine) with nothing traced.
    real = moves.filter(pl.col("old_state") != TRACE_UNDETERMINED)["time"]
    lo, hi = (int(real.min()), int(real.max())) if real.len() else (0, -1)

    def traced(old: int, new: int) -> int:
        return moves.filter((pl.col("old_state") == old) & (pl.col("new_state") == new)).height

    names = {v: k for k, v in state_names(facts, "g").items()}
    g_sites = np.array([s["id"] for s in table["sites"] if s["kind"] == "g_status"], dtype=np.uint32)
    recs = dump.records
    inside = np.isin(recs["site"], g_sites) & (recs["t"] >= lo) & (recs["t"] <= hi)

    def seen(old: str, new: str) -> int:
        return int((inside & (recs["a"] == names[old]) & (recs["b"] == names[new])).sum())

    return StartCount(
        lab=seen("_Grunnable", "_Grunning"),
        trace=traced(TRACE_RUNNABLE, TRACE_RUNNING),
        trace_syscall_runnable=traced(TRACE_SYSCALL, TRACE_RUNNABLE),
        lab_syscall_runnable=seen("_Gsyscall", "_Grunnable"),
        window=(lo, hi),
        procs=int(events.filter(pl.col("proc") >= 0)["proc"].n_unique()),
    )
