"""Dense slots for goroutine ids, so compiled kernels keep per-goroutine state in flat arrays.

Goroutine ids are sparse int64s; the kernels of the columnar consumers (pprof stays, mutator
utilization) index their state arrays by a slot instead.  Slots are handed out per chunk in
numpy (each distinct id of the chunk looked up once), in order of first sight, and never reused.
"""

from __future__ import annotations

import numpy as np


class GoroutineSlots:
    """id -> slot, kept as the known ids sorted with their slots alongside."""

    def __init__(self) -> None:
        self.ids = np.empty(0, np.int64)
        self.slot = np.empty(0, np.int64)
        self.count = 0  # slots handed out

    def slots(self, ids: np.ndarray) -> np.ndarray:
        """The slot (int64) of each of IDS, new ids getting the next slots."""
        if not len(ids):
            return np.empty(0, np.int64)
        uniq, inv = np.unique(ids, return_inverse=True)
        pos = np.searchsorted(self.ids, uniq)
        found = pos < len(self.ids)
        found[found] = self.ids[pos[found]] == uniq[found]
        out = np.empty(len(uniq), np.int64)
        out[found] = self.slot[pos[found]]
        new = ~found
        k = int(new.sum())
        if k:
            fresh = np.arange(self.count, self.count + k, dtype=np.int64)
            out[new] = fresh
            self.count += k
            # UNIQ is sorted, so its new ids go in at their insertion points: one merge.
            self.ids = np.insert(self.ids, pos[new], uniq[new])
            self.slot = np.insert(self.slot, pos[new], fresh)
        return out[inv.reshape(-1)]


def grown(arr: np.ndarray, need: int, fill: object = 0) -> np.ndarray:
    """ARR with at least NEED rows (doubling), new rows set to FILL; ARR itself if it has them."""
    if len(arr) >= need:
        return arr
    out = np.empty(max(need, 2 * len(arr), 16), arr.dtype)
    out[: len(arr)] = arr
    out[len(arr) :] = fill
    return out
