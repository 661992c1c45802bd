"""Idle Ps while Gs wait, split by the thread wake-up under way: the machine's part made visible.

``measure.idle_p_while_runnable`` sums the time some P below GOMAXPROCS sat idle while
some G was runnable. In Go 1.27 a readying while a P is idle ends in wakep, which hands
the idle P to a thread at once; the P shows idle until that thread runs (its ProcStart).
So each piece of that time is put down to the thread wake-up (``model.wakeups``) under
way on an idle P then, by the wake-up's length: a long one is a thread the runtime had
woken and the machine had not run yet. The rest ("none") is time no measured wake-up
covers: a P that went idle while the G waited on a busy P, a thread startTheWorld woke
(no readying), a G readied and run by the same M.

Wake-ups are one at a time (``wakeups.wakes``), so each instant is in at most one.
"""

from __future__ import annotations

import numpy as np
import polars as pl

from goblueprint.arrays import unique
from goblueprint.model import wakeups
from goblueprint.timeline.model import LaneKind, State, Timeline

# (name, shortest wake-up in ns) — "none" for time no measured wake-up covers.
BUCKETS = (("in_wakeups_ge_1ms", 1_000_000), ("in_wakeups_30us_1ms", 30_000), ("in_wakeups_lt_30us", 1))
KEYS = (*(f"idle_wait_{name}_ns" for name, _ in BUCKETS), "idle_wait_no_wakeup_ns")


def by_wake(tl: Timeline) -> dict[str, int]:
    """idle_p_while_runnable_ns split by the length of the thread wake-up under way (KEYS)."""
    sp = tl.spans
    idle = sp.filter((pl.col("lane_kind") == int(LaneKind.P)) & (pl.col("state") == int(State.P_IDLE)))
    runq = sp.filter((pl.col("lane_kind") == int(LaneKind.G)) & (pl.col("state") == int(State.G_RUNNABLE)))
    w = wakeups.wakes(tl).sort("ready")
    ends = (idle["start"], idle["end"], runq["start"], runq["end"], w["ready"], w["end"])
    cuts = unique(np.concatenate([a.to_numpy() for a in ends]))
    out = dict.fromkeys(KEYS, 0)
    if cuts.size < 2:
        return out
    mid, seg = (cuts[:-1] + cuts[1:]) // 2, np.diff(cuts)

    def covered(start: pl.Series, end: pl.Series) -> np.ndarray:
        # Spans of one lane do not overlap: inside one when more have started than ended.
        return np.searchsorted(np.sort(start.to_numpy()), mid, "right") > np.searchsorted(
            np.sort(end.to_numpy()), mid, "right"
        )

    procs = wakeups.gomaxprocs_at(tl, mid)
    waiting = covered(runq["start"], runq["end"])
    idle_p = {p: covered(s["start"], s["end"]) & (p < procs) for (p,), s in idle.group_by("lane_id")}
    any_idle = np.logical_or.reduce(list(idle_p.values())) if idle_p else np.zeros(mid.size, bool)
    both = waiting & any_idle
    length = np.zeros(mid.size, np.int64)
    if w.height:
        ready, end, wp = w["ready"].to_numpy(), w["end"].to_numpy(), w["p"].to_numpy()
        k = np.maximum(np.searchsorted(ready, mid, "right") - 1, 0)
        inside = (ready[k] <= mid) & (mid < end[k])
        on_idle = np.zeros(mid.size, bool)
        for p, on in idle_p.items():
            on_idle |= (wp[k] == p) & on
        length = np.where(inside & on_idle, end[k] - ready[k], 0)
    taken = np.zeros(mid.size, bool)
    for (_, shortest), key in zip(BUCKETS, KEYS, strict=False):
        sel = both & ~taken & (length >= shortest)
        out[key] = int(seg[sel].sum())
        taken |= sel
    out["idle_wait_no_wakeup_ns"] = int(seg[both & ~taken].sum())
    return out
