"""Dense slots for goroutine ids, so compiled kernels keep per-goroutine state in flat arrays.

Goroutine ids are sparse int64s; the kernels of the columnar consumers (pprof stays, mutator
utilization) index their state arrays by a slot instead.  Slots are handed out per chunk in
numpy (no Python per id) and never reused.
"""

from __future__ import annotations

import numpy as np


class GoroutineSlots:
    """id -> slot: a direct table for small non-negative ids (Go numbers goroutines from 1 up),
    the known ids sorted with their slots alongside for the others (NoGoroutine, huge ids)."""

    def __init__(self) -> None:
        self.dense = np.empty(0, np.int64)  # slot by id, -1 = not seen
        self.ids = np.empty(0, np.int64)  # ids outside the direct table, sorted
        self.slot = np.empty(0, np.int64)
        self.count = 0  # slots handed out

    def slots(self, ids: np.ndarray) -> np.ndarray:
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
            out[~small] = self._sparse(ids[~small])
        new = small & (out < 0)
        if new.any():
            first = np.unique(ids[new])
            self.dense[first] = np.arange(self.count, self.count + len(first), dtype=np.int64)
            self.count += len(first)
            out[new] = self.dense[ids[new]]
        return out

    def _cover(self, hi: int, n: int) -> None:
        """Grow the direct table to id HI when that keeps it proportionate to the ids seen."""
        if hi < len(self.dense) or hi >= 4 * (self.count + n) + (1 << 16):
            return
        self.dense = grown(self.dense, hi + 1, -1)
        moved = (self.ids >= 0) & (self.ids < len(self.dense))
        if moved.any():  # ids met while out of the table's reach keep their slots
            self.dense[self.ids[moved]] = self.slot[moved]
            self.ids, self.slot = self.ids[~moved], self.slot[~moved]

    def _sparse(self, ids: np.ndarray) -> np.ndarray:
        uniq, inv = np.unique(ids, return_inverse=True)
        pos = np.searchsorted(self.ids, uniq)
        found = pos < len(self.ids)
        found[found] = self.ids[pos[found]] == uniq[found]
        out = np.empty(len(uniq), np.int64)
        out[found] = self.slot[pos[found]]
        new = np.flatnonzero(~found)
        if len(new):
            fresh = np.arange(self.count, self.count + len(new), dtype=np.int64)
            out[new] = fresh
            self.count += len(new)
            # UNIQ is sorted, so its new ids go in at their insertion points: one merge.
            self.ids = np.insert(self.ids, pos[new], uniq[new])
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
