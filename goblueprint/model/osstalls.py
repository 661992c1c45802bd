"""What the OS did to a replayed trace's threads: the stretches an M held a P off its CPU.

A Go trace shows a G "running" while the kernel had its thread switched out, and a P
held by an M in the scheduler that was waiting for a CPU; in both the P makes no
progress and nobody else may run what it holds (proc.go has no notion of it: the P is
_Prunning). The kernel layer (goblueprint.kernel, ``capture --kernel``) joins perf's
sched_switch intervals to the trace's Ms exactly, and this module reads the two kinds
a replay can place at a point of the program:

* ``under_g``: the thread off its CPU (any reason) while the trace says it runs G —
  per G, its stretches in trace time, in order. The replay cuts the G's running span
  there into CPU and ``STALL`` ops (model.program), so the G holds its P through the
  stall as it did, and sysmon's preemption signal waits for the thread to run.
* ``after_g``: the thread runnable and off its CPU while it holds a P with no G (the
  scheduler's own code, waiting for a CPU) — keyed by the G whose run on that M ended
  last before it, at that run's end: (g, end time) -> ns. The replay delays that P's
  next schedule() by as much after the op that ended the run (``Program.stall_after``).
  Only runnable states count there: an M holding a P sleeps only in runqgrab's
  usleep(3), which the model already times (Costs.timer_slack_ns).

Off-CPU stretches while the M is in a syscall are in the syscall's traced length
already; those of an M with no P hold nothing another M could run.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import polars as pl

from goblueprint.arrays import unique
from goblueprint.errors import UsageError
from goblueprint.kernel import join as kjoin
from goblueprint.kernel.intervals import OFF_CPU, RUNNABLE
from goblueprint.timeline.model import State, Timeline


@dataclass
class OsStalls:
    under_g: dict[int, list[tuple[int, int]]] = field(default_factory=dict)  # g -> [(start, end)] trace ns
    after_g: dict[tuple[int, int], int] = field(default_factory=dict)  # (g, run end) -> ns
    sched_waits: int = 0  # runnable-off-CPU stretches of an M holding a P with no G, all of them
    sched_wait_ns: int = 0
    threads: int = 0  # trace Ms the kernel recording saw
    trace_threads: int = 0


def from_joined(joined: kjoin.Joined) -> OsStalls:
    if joined.trace_threads and not joined.matched_threads:
        # Another run's recording (thread ids are the join): replaying "no stalls" would be a lie.
        raise UsageError(
            f"the kernel recording in {joined.kernel.directory} saw none of the trace's "
            f"{joined.trace_threads} threads: not a recording of this run"
        )
    pc = joined.pieces
    off = pl.col("kstate").is_in([int(s) for s in OFF_CPU])
    running = pl.col("mstate") == int(State.M_RUNNING)
    under = (
        pc.filter(off & running & (pl.col("g") >= 0) & (pl.col("end") > pl.col("start")))
        .sort(["g", "start"])
        .select("g", "start", "end")
    )
    out = OsStalls(threads=joined.matched_threads, trace_threads=joined.trace_threads)
    by_g: dict[int, list[tuple[int, int]]] = defaultdict(list)
    for g, s, e in under.iter_rows():
        by_g[int(g)].append((int(s), int(e)))
    out.under_g = dict(by_g)

    waits = pc.filter(
        pl.col("kstate").is_in([int(s) for s in RUNNABLE])
        & running
        & (pl.col("g") < 0)
        & (pl.col("p") >= 0)
        & (pl.col("end") > pl.col("start"))
    ).sort(["tid", "start"])
    if waits.height:
        # The M's last G run ended at or before the wait: the op that ended it is the
        # program's point the wait follows.
        ms = joined.m_spans
        runs = ms.filter((pl.col("state") == int(State.M_RUNNING)) & (pl.col("g") >= 0)).sort(
            ["lane_id", "end"]
        )
        r_lane, r_end, r_g = runs["lane_id"].to_numpy(), runs["end"].to_numpy(), runs["g"].to_numpy()
        # Only while the M kept its P since that run: one that idled or lost its P between
        # them was started again for other work (a thread wake-up, model.wakeups).
        breaks = ms.filter((pl.col("state") != int(State.M_RUNNING)) | (pl.col("p") < 0))
        b_lane, b_start = breaks["lane_id"].to_numpy(), breaks["start"].to_numpy()
        tid, start, end = waits["tid"].to_numpy(), waits["start"].to_numpy(), waits["end"].to_numpy()
        after: dict[tuple[int, int], int] = defaultdict(int)
        for lane in unique(tid).tolist():
            wi = np.flatnonzero(tid == lane)
            ri = np.flatnonzero(r_lane == lane)
            bs = np.sort(b_start[b_lane == lane])
            out.sched_waits += len(wi)
            out.sched_wait_ns += int((end[wi] - start[wi]).sum())
            if len(ri) == 0:
                continue
            k = np.searchsorted(r_end[ri], start[wi], side="right") - 1
            for w, j in zip(wi.tolist(), k.tolist(), strict=True):
                if j < 0:
                    continue
                run_end = int(r_end[ri[j]])
                # a break starting in [run_end, wait start) cuts the M's hold of its P
                if np.searchsorted(bs, start[w], side="left") > np.searchsorted(bs, run_end, side="left"):
                    continue
                after[(int(r_g[ri[j]]), run_end)] += int(end[w] - start[w])
        out.after_g = dict(after)
    return out


def load(tl: Timeline, trace: str | Path, kernel_dir: str | Path) -> OsStalls:
    """The OS stalls of TL's threads from the ``capture --kernel`` recording in KERNEL_DIR."""
    return from_joined(kjoin.join(tl, kjoin.load(kernel_dir), kjoin.trace_clock(trace)))
