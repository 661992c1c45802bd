"""The counter samples a timeline page holds: every counter thinned to a bounded number of samples.

A busy trace records millions of counter samples (a run queue's length at every change).  The
page keeps at most about ``2 * COUNTER_BUCKETS`` per counter.  The counters table is read once,
a batch at a time (timeline.batches), and each batch is summed up per counter and bucket of the
trace with numpy; those few partial sums are combined once every batch is read.  A counter's
samples are kept as they are until it has more than the page keeps of one: so what is held is
one batch, the buckets and at most that many samples per counter, never the table.
"""

from __future__ import annotations

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


@dataclass
class _Buckets:
    """Per counter and bucket: first and last time, largest value, the value of its last row
    (the row's number: a sample of the same time later in the table is the value), and its
    first and last row."""

    name: np.ndarray
    bucket: np.ndarray
    t_first: np.ndarray
    v_max: np.ndarray
    t_last: np.ndarray
    v_last: np.ndarray
    i_first: np.ndarray
    i_last: np.ndarray


def thin_counters(counters: pl.DataFrame | pl.LazyFrame, origin: int, duration: int) -> pl.DataFrame:
    """Counters sorted by name and time, each at most about 2 * COUNTER_BUCKETS samples.

    A counter with more samples keeps, per bucket of the trace, its largest value (at the
    bucket's first sample: peaks survive, as the viewer keeps the maximum per pixel column)
    and its last one (so the step after the bucket starts from the right value).  A stored
    table (a scan) is read a batch at a time, a table in memory at once.
    """
    schema = counters.lazy().collect_schema()
    width = max(1, -(-duration // COUNTER_BUCKETS))
    seen: dict[int, int] = {}  # samples per counter so far
    busy: list[int] = []  # the counters past the bound, in the order they passed it
    kept: list[_Samples] = []
    partial: list[_Buckets] = []
    row = 0
    for part in batches_of(counters, columns=("name", "time", "value")):
        batch = _Samples(
            part["name"].to_numpy(),
            part["time"].to_numpy(),
            part["value"].to_numpy(),
            np.arange(row, row + part.height, dtype=np.int64),
        )
        row += part.height
        names, counts = np.unique(batch.name, return_counts=True)
        passed = len(busy)
        for name, n in zip(names.tolist(), counts.tolist(), strict=True):
            seen[name] = seen.get(name, 0) + n
            if seen[name] > KEPT_WHOLE and seen[name] - n <= KEPT_WHOLE:
                busy.append(name)
        if len(busy) > passed:
            # A counter past the bound keeps no sample as it is: its earlier ones go too.
            kept = [p.take(~np.isin(p.name, busy[passed:])) for p in kept]
        kept.append(batch.take(~np.isin(batch.name, busy)) if busy else batch)
        partial.append(_bucketed(batch, origin, width))
    whole = _combined(partial)
    whole = _Buckets(*(getattr(whole, f)[np.isin(whole.name, np.array(busy, np.int64))] for f in _FIELDS))
    later = whole.t_last > whole.t_first
    out = _Samples.joined(
        [
            *kept,
            _Samples(whole.name, whole.t_first, whole.v_max, whole.i_first),
            _Samples(whole.name[later], whole.t_last[later], whole.v_last[later], whole.i_last[later]),
        ]
    )
    order = np.lexsort((out.row, out.time, out.name))
    got = pl.DataFrame({"name": out.name[order], "time": out.time[order], "value": out.value[order]})
    return got.select(list(schema)).cast(dict(schema))


_FIELDS = ("name", "bucket", "t_first", "v_max", "t_last", "v_last", "i_first", "i_last")


def _bucketed(s: _Samples, origin: int, width: int) -> _Buckets:
    """The buckets of the samples S (rows in table order)."""
    bucket = (s.time - origin) // width
    # Stable: within a bucket the rows stay in table order, so its last row is the last.
    order = np.lexsort((bucket, s.name))
    name, bucket = s.name[order], bucket[order]
    time, value, row = s.time[order], s.value[order], s.row[order]
    return _reduced(name, bucket, time, value, time, value, row, row)


def _combined(parts: list[_Buckets]) -> _Buckets:
    """The buckets of all batches: a bucket met in several batches made one."""
    cols = {f: np.concatenate([getattr(p, f) for p in parts]) for f in _FIELDS}
    # Within a bucket, by last row: the batch holding the bucket's last row comes last.
    order = np.lexsort((cols["i_last"], cols["bucket"], cols["name"]))
    return _reduced(*(cols[f][order] for f in _FIELDS))


def _reduced(
    name: np.ndarray,
    bucket: np.ndarray,
    t_first: np.ndarray,
    v_max: np.ndarray,
    t_last: np.ndarray,
    v_last: np.ndarray,
    i_first: np.ndarray,
    i_last: np.ndarray,
) -> _Buckets:
    """Rows sorted by (name, bucket), the later rows of a bucket last, reduced to one a bucket."""
    if len(name) == 0:
        return _Buckets(name, bucket, t_first, v_max, t_last, v_last, i_first, i_last)
    starts = np.flatnonzero(np.concatenate(([True], (name[1:] != name[:-1]) | (bucket[1:] != bucket[:-1]))))
    ends = np.concatenate((starts[1:], [len(name)])) - 1
    return _Buckets(
        name[starts],
        bucket[starts],
        np.minimum.reduceat(t_first, starts),
        # fmax: NaN only where every value is NaN, as polars' max ignores NaN.
        np.fmax.reduceat(v_max, starts),
        np.maximum.reduceat(t_last, starts),
        v_last[ends],
        np.minimum.reduceat(i_first, starts),
        i_last[ends],
    )
