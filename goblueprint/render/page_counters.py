"""The counter samples a timeline page holds: every counter thinned to a bounded number of samples.

A busy trace records millions of counter samples (a run queue's length at every change).  The
page keeps at most about ``2 * COUNTER_BUCKETS`` per counter.  The counters table is read once,
a batch at a time (timeline.batches).  A counter's samples are kept as they are until it has
more than the page keeps of one; from then on its samples are folded into its buckets of the
trace by a compiled loop (render.counters_kernel), its earlier ones first.  What is held is one
batch, the buckets of those counters and at most that many samples per other counter, never
the table.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import polars as pl

from goblueprint.timeline.batches import batches_of
from goblueprint.timeline.detail import COLUMNS

COUNTER_BUCKETS = 4 * COLUMNS  # a counter keeps about two samples per bucket of this many
KEPT_WHOLE = 2 * COUNTER_BUCKETS  # samples of a counter kept as they are, at most


@dataclass
class _Samples:
    """Counter samples as columns: name (string id), time, value, and the row in the table."""

    name: np.ndarray
    time: np.ndarray
    value: np.ndarray
    row: np.ndarray

    def take(self, which: np.ndarray) -> _Samples:
        return _Samples(self.name[which], self.time[which], self.value[which], self.row[which])

    @staticmethod
    def joined(parts: list[_Samples]) -> _Samples:
        return _Samples(
            *(np.concatenate([getattr(p, f) for p in parts]) for f in ("name", "time", "value", "row"))
        )


def thin_counters(counters: pl.DataFrame | pl.LazyFrame, origin: int, duration: int) -> pl.DataFrame:
    """Counters sorted by name and time, each at most about 2 * COUNTER_BUCKETS samples.

    A counter with more samples keeps, per bucket of the trace, its largest value (at the
    bucket's first sample: peaks survive, as the viewer keeps the maximum per pixel column)
    and its last one (so the step after the bucket starts from the right value).  A stored
    table (a scan) is read a batch at a time, a table in memory at once.
    """
    from goblueprint.trace import kernels

    fold = kernels.get().fold_counter_buckets
    schema = counters.lazy().collect_schema()
    width = max(1, -(-duration // COUNTER_BUCKETS))
    seen = np.zeros(0, np.int64)  # samples per counter (by string id) so far
    slot = np.full(0, -1, np.int64)  # a counter's row of the grid, -1 while it is kept whole
    grid = _Grid(origin, width)
    kept: list[_Samples] = []
    row = 0
    # (timeline.batches' rows at a time.  A row group's (4 times as many) read each group's
    # pages once, not 4 times: ~0.15 CPU s less on the 30.6 MB trace's 9.4 M samples, but
    # ~20 MB more at the first run's peak, where the levels are made beside it.)
    for part in batches_of(counters, columns=("name", "time", "value")):
        if not part.height:
            continue
        batch = _Samples(
            part["name"].to_numpy().astype(np.uint32, copy=False),
            part["time"].to_numpy().astype(np.int64, copy=False),
            part["value"].to_numpy().astype(np.float64, copy=False),
            np.arange(row, row + part.height, dtype=np.int64),
        )
        row += part.height
        top = int(batch.name.max()) + 1
        if top > len(seen):
            seen = np.concatenate((seen, np.zeros(top - len(seen), np.int64)))
            slot = np.concatenate((slot, np.full(top - len(slot), -1, np.int64)))
        counts = np.bincount(batch.name, minlength=len(seen))
        passed = np.flatnonzero((seen <= KEPT_WHOLE) & (seen + counts > KEPT_WHOLE))
        seen += counts
        grid.cover(int(batch.time.min()), int(batch.time.max()))
        if len(passed):
            slot[passed] = grid.add(passed)
            # A counter past the bound keeps no sample as it is: its earlier ones join its buckets.
            for p in kept:
                grid.fold(fold, p, slot)
            kept = [p.take(slot[p.name] < 0) for p in kept]
        grid.fold(fold, batch, slot)
        whole = slot[batch.name] < 0
        kept.append(batch if whole.all() else batch.take(whole))
    out = _Samples.joined([*kept, *grid.samples()])
    order = np.lexsort((out.row, out.time, out.name))
    got = pl.DataFrame({"name": out.name[order], "time": out.time[order], "value": out.value[order]})
    return got.select(list(schema)).cast(dict(schema))


class _Grid:
    """Per counter past the bound (a row each) and bucket of the trace (a column each, from
    bucket LO on): first and last time, largest value, the value of its last row, its first
    and last row (I_FIRST < 0: no sample in the bucket).  Grown as counters pass the bound and
    as samples fall outside the buckets held (the trace's own are held from the start)."""

    def __init__(self, origin: int, width: int) -> None:
        self.origin, self.width = origin, width
        self.lo, self.hi = 0, COUNTER_BUCKETS + 1
        self.names = np.zeros(0, np.int64)  # the counter of each row
        self.cols = self._empty(0, self.hi - self.lo)

    @staticmethod
    def _empty(rows: int, buckets: int) -> list[np.ndarray]:
        shape = (rows, buckets)
        return [
            np.zeros(shape, np.int64),
            np.zeros(shape, np.float64),
            np.zeros(shape, np.int64),
            np.zeros(shape, np.float64),
            np.full(shape, -1, np.int64),
            np.full(shape, -1, np.int64),
        ]

    def cover(self, t_min: int, t_max: int) -> None:
        """Hold the buckets of the times T_MIN..T_MAX."""
        lo = min(self.lo, (t_min - self.origin) // self.width)
        hi = max(self.hi, (t_max - self.origin) // self.width + 1)
        if (lo, hi) == (self.lo, self.hi):
            return
        grown = self._empty(len(self.names), hi - lo)
        for new, old in zip(grown, self.cols, strict=True):
            new[:, self.lo - lo : self.hi - lo] = old
        self.cols, self.lo, self.hi = grown, lo, hi

    def add(self, names: np.ndarray) -> np.ndarray:
        """Rows for the counters NAMES (string ids): their indexes."""
        first = len(self.names)
        more = self._empty(len(names), self.hi - self.lo)
        self.cols = [np.concatenate((c, m)) for c, m in zip(self.cols, more, strict=True)]
        self.names = np.concatenate((self.names, names.astype(np.int64)))
        return np.arange(first, len(self.names), dtype=np.int64)

    def fold(self, fold: Callable[..., None], s: _Samples, slot: np.ndarray) -> None:
        """Fold the samples S of the counters with a row (SLOT) into their buckets (in table order)."""
        fold(s.name, s.time, s.value, s.row, slot, self.origin, self.width, self.lo, *self.cols)

    def samples(self) -> list[_Samples]:
        """Each bucket's samples kept: its largest value at its first time, and its last
        value at its last time if that is later."""
        met = self.cols[4] >= 0
        t_first, v_max, t_last, v_last, i_first, i_last = (c[met] for c in self.cols)
        name = self.names[np.nonzero(met)[0]]
        later = t_last > t_first
        return [
            _Samples(name, t_first, v_max, i_first),
            _Samples(name[later], t_last[later], v_last[later], i_last[later]),
        ]
