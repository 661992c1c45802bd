"""How long a P's M took from one G's stop to the next G's start when that G was waiting already.

When a G stops (blocks, yields, is preempted, exits), its M runs schedule(): findRunnable
finds the next G in the local or global queue and execute() starts it. None of that is
traced, but its length is: on a P lane, the span of running no G between a G's running
span and the next one's. Where the next G had been runnable since before that span began,
the pass found its work at hand (no steal, no wait for a readying), so the span is the
machine's cost of a schedule() pass: the source fixes what the pass does, the machine how
long it takes (on this project's traces a median of 64-256 ns, nine in ten under 2.5 times
that).

A few such spans are far longer (to 2.8 ms on the committed sched-go1.27 trace): the OS ran
something else on the M's CPU meanwhile. Those are the machine's stalls, not the pass, and
are left out of the draw (longer than ``STALL_FACTOR`` times the median, 0.2-0.3 % of them
on the project's traces): drawn at random, one 2.8 ms stall put where work queues moved it to
the other P. A replay holds each where the trace has it instead, after the op that ended the
G's run before it (``stalls_after``, as model.osstalls' ``after_g``: a kernel recording's
measured stalls take their place when there is one); and the model's threads wait for a CPU
when the machine had fewer CPUs than running threads (``--cpus``).

A replay draws its passes from these, as it draws its thread wake-ups (model.wakeups): a
constant pass holds Ps in a lock-step no machine keeps (docs/model.md, "A goroutine that
yields in a loop").
"""

from __future__ import annotations

import numpy as np
import polars as pl

from goblueprint.timeline.model import LaneKind, State, Timeline

_P, _G = int(LaneKind.P), int(LaneKind.G)
_P_RUN, _G_RUNNABLE = int(State.P_RUNNING), int(State.G_RUNNABLE)
# A pass longer than this many times the median is the OS's stall of the M's thread.
STALL_FACTOR = 10


def _at_hand(tl: Timeline) -> pl.DataFrame:
    """The passes of TL that found their G at hand: the P, the G whose run ended as the pass
    began (``before_g``), its ``start`` and its length ``d``, by P, then time."""
    run = pl.col("state") == _P_RUN
    # A P running no G, between two spans of it running one.
    between = (
        pl.col("run") & (pl.col("g") < 0) & pl.col("before_run") & (pl.col("before_g") >= 0)
        & pl.col("after_run") & (pl.col("after_g") >= 0)
    )  # fmt: skip
    s = (
        tl.spans.lazy()
        .filter(pl.col("lane_kind") == _P)
        .select("lane_id", "start", "end", "g", run.alias("run"))
        .sort("lane_id", "start")
        .with_columns(
            before_g=pl.col("g").shift(1).over("lane_id"),
            before_run=pl.col("run").shift(1).over("lane_id"),
            after_g=pl.col("g").shift(-1).over("lane_id"),
            after_run=pl.col("run").shift(-1).over("lane_id"),
        )
        .filter(between)
    )
    # The next G's wait, which ends as it starts: runnable since before the pass began.
    waits = (
        tl.spans.lazy()
        .filter((pl.col("lane_kind") == _G) & (pl.col("state") == _G_RUNNABLE))
        .select(after_g=pl.col("lane_id"), end=pl.col("end"), since=pl.col("start"))
    )
    found = s.join(waits, on=["after_g", "end"], how="inner").filter(pl.col("since") <= pl.col("start"))
    return (
        found.sort("lane_id", "start")
        .select("lane_id", "before_g", "start", d=pl.col("end") - pl.col("start"))
        .collect()
    )


def at_hand_ns(tl: Timeline) -> np.ndarray:
    """Every schedule() pass of TL that found its G at hand, in ns (int64; by P, then time), but
    for the OS's stalls (longer than STALL_FACTOR times their median)."""
    return passes(tl)[0]


def stalls_after(tl: Timeline) -> dict[tuple[int, int], int]:
    """The OS's stalls at_hand_ns leaves out, where they happened: (the G whose run ended as
    the pass began, that run's end in trace ns) -> the pass's length less the passes' median,
    the form of model.osstalls' ``after_g``.

    Such a pass held its P with the next G in its queue far longer than findRunnable takes to
    find it there (runqget, globrunqget: its first steps), so the M was off its CPU; a replay
    holds the P as long after the same op (Program.stall_after), as it does the stalls a kernel
    recording measured, where the trace has them at the point of the program they happened."""
    return passes(tl)[1]


def passes(tl: Timeline) -> tuple[np.ndarray, dict[tuple[int, int], int]]:
    """``at_hand_ns`` and ``stalls_after`` of TL from one search of its passes (a replay
    wants both: the search joins every P span with the G waits)."""
    found = _at_hand(tl)
    d = found["d"].to_numpy().astype(np.int64)
    if not d.size:
        return d, {}
    median = np.median(d)
    med = int(median)
    long = found.filter(pl.col("d") > STALL_FACTOR * med)
    stalls = {
        (int(g), int(t)): int(n) - med
        for g, t, n in zip(
            long["before_g"].to_list(), long["start"].to_list(), long["d"].to_list(), strict=True
        )
    }
    return d[d <= STALL_FACTOR * median], stalls
