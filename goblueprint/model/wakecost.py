"""What waking a thread costs the M that wakes it from the scheduler: a trace's measure of it.

``wakep`` ends in ``startm`` → ``notewakeup``: a futex wake syscall on the waker's thread,
which on a machine with as many busy threads as CPUs often also gives the CPU to the
woken thread for a while. None of it is traced. When the waker is a G (``ready`` or
``newproc`` in its code) that time is inside the G's running span, so a replay's CPU
already holds it. When the waker is the scheduler itself — an M that ran a timer
(``checkTimers`` → ``ready`` → wakep) or found work while spinning (``resetspinning``)
— it falls between the readying and the G's start on that same P, where the trace shows
the P running no G.

So the trace measures it on readyings by no G (a timer's G, a timer channel's receiver)
whose G is the next one its P runs: from the readying to the G's start, when that
readying began a thread wake-up (``wakeups.wakes``) and when it began none. The
difference of the medians is the cost the model charges the waking M; what the trace
cannot tell apart (a readying that woke a thread the wake-up detector missed counts as
none) errs short, never long.
"""

from __future__ import annotations

import numpy as np
import polars as pl

from goblueprint.model import wakeups
from goblueprint.timeline.model import FlowKind, LaneKind, State, Timeline


def gaps_ns(tl: Timeline) -> tuple[np.ndarray, np.ndarray]:
    """(woke, none): from each readying by no G to its G's start on the same P (ns, int64),
    for the readyings whose G ran next on that P, split by whether the readying woke a thread."""
    runs = (
        tl.spans.filter(
            (pl.col("lane_kind") == int(LaneKind.P))
            & (pl.col("state") == int(State.P_RUNNING))
            & (pl.col("g") >= 0)
        )
        .select(pl.col("lane_id").alias("from_p"), "start", pl.col("g").alias("next_g"))
        .sort("start")
    )
    f = tl.flows.filter(
        (pl.col("kind") == int(FlowKind.WAKEUP))
        & (pl.col("from_g") < 0)
        & (pl.col("from_p") >= 0)
        & (pl.col("to_p") == pl.col("from_p"))
        & (pl.col("to_time") >= pl.col("from_time"))
    ).sort("from_time")
    # Both sides are sorted by time; polars cannot check that within by-groups.
    f = f.join_asof(
        runs, left_on="from_time", right_on="start", by="from_p", strategy="forward", check_sortedness=False
    ).filter(pl.col("next_g") == pl.col("g"))
    woke = f["from_time"].is_in(wakeups.wakes(tl)["ready"].implode())
    gap = (f["to_time"] - f["from_time"]).to_numpy().astype(np.int64)
    sel = woke.to_numpy()
    return gap[sel], gap[~sel]


def cost_ns(tl: Timeline) -> int:
    """The median extra a thread wake-up costs the scheduler that makes it (0 if the trace
    shows no such readying, or none to compare it with)."""
    return median_cost_ns(*gaps_ns(tl))


def median_cost_ns(woke: np.ndarray, none: np.ndarray) -> int:
    """``cost_ns`` of the gaps ``gaps_ns`` split (WOKE, NONE)."""
    if not woke.size or not none.size:
        return 0
    return max(0, int(np.median(woke)) - int(np.median(none)))


def costs_ns(woke: np.ndarray, none: np.ndarray) -> np.ndarray:
    """What each measured thread wake-up cost the scheduler that made it, of the gaps
    ``gaps_ns`` split (WOKE, NONE): its gap less the median gap of the readyings that woke
    nobody (at least 0), in the order of the readyings; empty where ``median_cost_ns`` is 0
    for want of either side. Their median is that cost (a constant taken from every gap keeps
    their order); their spread is the machine's, which a replay draws from (a futex wake
    sometimes gives the CPU to the woken thread for a while)."""
    if not woke.size or not none.size:
        return np.zeros(0, np.int64)
    return np.maximum(woke - int(np.median(none)), 0)
