"""Dense slots for resource ids, so compiled loops keep per-resource state in flat arrays.

Goroutine, proc, thread and task ids are sparse int64s; the columnar consumers' loops (the
timeline builder, pprof stays, mutator utilization) index their state tables by a slot
instead.  Slots are handed out per chunk in numpy (no Python per id) and never reused.
"""

from __future__ import annotations

import numpy as np

from goblueprint.arrays import unique

NONE = -1  # Go's NoGoroutine / NoProc / NoThread


class Slots:
    """id -> slot: a direct table for small non-negative ids (Go numbers its resources from 0
    or 1 up), the known ids sorted with their slots alongside for the others (huge ids, -1).

    With ``keep_none``, -1 means "no such resource" and maps to -1; without it (a task's -1,
    NoTask's truncation, is an id like any other) it gets a slot.  ``ids[slot]`` is the id.
    """

    def __init__(self, *, keep_none: bool = False) -> None:
        self.keep_none = keep_none
        self.dense = np.empty(0, np.int64)  # slot by id, -1 = not seen
        self.keys = np.empty(0, np.int64)  # ids outside the direct table, sorted
        self.slot = np.empty(0, np.int64)  # their slots
        self.ids = np.empty(0, np.int64)  # id by slot (capacity grows by doubling)
        self.n = 0  # slots handed out

    def map(self, ids: np.ndarray) -> np.ndarray:
        """The slot (int64) of each of IDS, new ids getting the next free slots."""
        out = np.empty(len(ids), np.int64)
        if not len(ids):
            return out
        self._cover(int(ids.max()), len(ids))
        small = (ids >= 0) & (ids < len(self.dense))
        if small.all():
            out[:] = self.dense[ids]
        else:
            out[small] = self.dense[ids[small]]
            other = ~small
            if self.keep_none:
                out[ids == NONE] = NONE
                other &= ids != NONE
            if other.any():
                out[other] = self._sparse(ids[other])
        new = small & (out < 0)
        if new.any():
            first = unique(ids[new])
            self.dense[first] = self._new(first)
            out[new] = self.dense[ids[new]]
        return out

    def _new(self, ids: np.ndarray) -> np.ndarray:
        fresh = np.arange(self.n, self.n + len(ids), dtype=np.int64)
        self.n += len(ids)
        self.ids = grown(self.ids, self.n)
        self.ids[fresh] = ids
        return fresh

    def _cover(self, hi: int, n: int) -> None:
        """Grow the direct table to id HI when that keeps it proportionate to the ids seen."""
        if hi < len(self.dense) or hi >= 4 * (self.n + n) + (1 << 16):
            return
        self.dense = grown(self.dense, hi + 1, -1)
        moved = (self.keys >= 0) & (self.keys < len(self.dense))
        if moved.any():  # ids met while out of the table's reach keep their slots
            self.dense[self.keys[moved]] = self.slot[moved]
            self.keys, self.slot = self.keys[~moved], self.slot[~moved]

    def _sparse(self, ids: np.ndarray) -> np.ndarray:
        uniq, inv = np.unique(ids, return_inverse=True)
        pos = np.searchsorted(self.keys, uniq)
        found = pos < len(self.keys)
        found[found] = self.keys[pos[found]] == uniq[found]
        out = np.empty(len(uniq), np.int64)
        out[found] = self.slot[pos[found]]
        new = np.flatnonzero(~found)
        if len(new):
            fresh = self._new(uniq[new])
            out[new] = fresh
            # UNIQ is sorted, so its new ids go in at their insertion points: one merge.
            self.keys = np.insert(self.keys, pos[new], uniq[new])
            self.slot = np.insert(self.slot, pos[new], fresh)
        return out[inv.reshape(-1)]


def grown(arr: np.ndarray, need: int, fill: int = 0) -> np.ndarray:
    """ARR (1-d) with at least NEED rows (doubling), new rows set to FILL; ARR itself if it has them."""
    if len(arr) >= need:
        return arr
    out = np.zeros(max(need, 2 * len(arr), 16), arr.dtype)
    # As bytes: numpy copies structured rows field by field, several times slower than memcpy.
    out.view(np.uint8)[: arr.nbytes] = np.ascontiguousarray(arr).view(np.uint8)
    if fill:
        out[len(arr) :] = fill
    return out
