"""How long a P's M looked for work before giving the P up: a findRunnable that found nothing.

When schedule() finds no G, Go 1.27's findRunnable checks the P's timers, the local and
global queues and the network, then (if the spinning limit lets it) spins: stealWork's
``stealTries`` rounds over every P, the last one stealing timers and runnext too. Only
after that does it take sched.lock, look at the global queue once more, release the P
(``pidleput``, the trace's ProcStop) and, if it was spinning, re-check every queue with
no P. None of it is traced, but its length is: a P lane's span of running no G that ends
in idle runs from the last G's stop (or the woken thread's ProcStart) to that ProcStop.

How long a round takes is the machine's, not the source's; the model spreads the median
of these spans (less one schedule() pass: the median of the trace's own, model.schedpass)
over its steal_tries rounds, so a replay spins as long as the traced machine did. A
non-spinning M (refused by the limit) adds its short spans to the median, so the round
this gives errs short, never long.
"""

from __future__ import annotations

import numpy as np
import polars as pl

from goblueprint.timeline.model import LaneKind, State, Timeline

_P, _RUN, _IDLE = int(LaneKind.P), int(State.P_RUNNING), int(State.P_IDLE)


def fruitless_ns(tl: Timeline) -> np.ndarray:
    """The length of every span a P ran no G and then went idle (ns, int64, by P then time)."""
    s = tl.spans.filter(pl.col("lane_kind") == _P).sort("lane_id", "start")
    s = s.with_columns(after=pl.col("state").shift(-1).over("lane_id"))
    lead = s.filter((pl.col("state") == _RUN) & (pl.col("g") < 0) & (pl.col("after") == _IDLE))
    return (lead["end"] - lead["start"]).to_numpy().astype(np.int64)


def median_ns(tl: Timeline) -> int:
    """The median fruitless findRunnable (0 if the trace shows none)."""
    d = fruitless_ns(tl)
    return int(np.median(d)) if d.size else 0


def round_ns(fruitless_median_ns: int, schedule_ns: int, steal_tries: int) -> int:
    """One stealWork round: the median fruitless findRunnable less one schedule() pass, per round."""
    return max(0, fruitless_median_ns - schedule_ns) // max(1, steal_tries)
