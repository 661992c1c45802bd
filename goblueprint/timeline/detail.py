"""Levels of detail of a timeline: per lane, the spans merged into fixed time buckets.

A view of a whole trace draws a few thousand pixel columns, not millions of spans.  Level
``k`` cuts the time axis (ns since the trace start) into buckets of ``Levels.width(k)``
ns: level 0 has at most ``COLUMNS`` buckets over the whole trace and every next level is
``FANOUT`` times finer, so a level-``k`` bucket is exactly ``FANOUT`` level-``k+1``
buckets.  In each bucket of a lane, the spans overlapping it merge into one summary:

* ``state``: the state that covers the most time of the bucket (ties: the lower code),
  the colour a reader expects of the pixel column the bucket is drawn in;
* ``fill``: how much of the bucket any span covers, 0..255 (255: all of it), so a lane
  that exists for a sliver of a bucket does not paint the whole column.

Consecutive buckets of a lane with the same summary are one *run* ``[b0, b1)``: a long
span is a single row at every level, so the runs of a lane at a level are at most its
bucket count and at most about three per span.

Where spans of a lane in different states each cover a bucket whole (a region inside a
running span), the one starting first keeps it — on a tie the lower state (a range's length
is no key: a long lane is summarised a tile of time at a time, before its ranges end).

Tables in and out are columns; the loops per span and bucket are compiled
(``detail_kernel``: one call per piece of lanes for every level, ``level_columns``: the finest
level is made from the spans, each coarser one from the finer one's buckets).

``runs`` input (``DETAIL_INPUT``): ``lane`` (u32, any lane numbering), ``start`` and
``end`` (i64 ns since the trace start, end exclusive), ``state`` (u8, any state
numbering).  Output (``RUNS_SCHEMA``), sorted by lane then ``b0``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import polars as pl

COLUMNS = 2048  # level-0 buckets across the whole trace: about one per pixel of a wide screen
FANOUT = 4  # each level is this many times finer than the one above
MAX_LEVELS = 11  # levels 0..10: 2048 * 4**10 = 2**31 buckets, indices fit in u32
FULL = 255  # fill of a bucket covered all the way
# The shortest span worth a bucket of its own.  Most scheduler spans are shorter (a G made
# runnable and run within 200 ns), but a window of finest buckets on screen (about a
# millisecond) holds few enough spans that the viewer draws them exactly from there on.
FINEST_NS = 1000

DETAIL_INPUT = {"lane": pl.UInt32, "start": pl.Int64, "end": pl.Int64, "state": pl.UInt8}
RUNS_SCHEMA = {"lane": pl.UInt32, "b0": pl.Int64, "b1": pl.Int64, "state": pl.UInt8, "fill": pl.UInt8}


@dataclass(frozen=True)
class Levels:
    """The bucket widths of a trace: level k's buckets are ``width0 // FANOUT**k`` ns wide."""

    width0: int
    count: int

    def width(self, level: int) -> int:
        return self.width0 // FANOUT**level

    def to_json(self) -> dict[str, int]:
        return {"width0": self.width0, "count": self.count, "fanout": FANOUT, "columns": COLUMNS}


def plan_levels(duration: int, finest: int = FINEST_NS) -> Levels:
    """Levels for a trace of DURATION ns, down to buckets no wider than FINEST ns (or MAX_LEVELS).

    width0 is rounded up to a multiple of FANOUT**(count-1) so that every level's width is an
    integer and its buckets nest exactly in the coarser level's.
    """
    duration = max(int(duration), 1)
    finest = max(int(finest), 1)
    count = 1
    while count < MAX_LEVELS and duration / COLUMNS / FANOUT ** (count - 1) > finest:
        count += 1
    unit = FANOUT ** (count - 1)
    width0 = -(-duration // (COLUMNS * unit)) * unit
    return Levels(width0=width0, count=count)


def runs(
    spans: pl.DataFrame | pl.LazyFrame,
    width: int,
    window: tuple[int, int] | None = None,
    *,
    merged: bool = False,
) -> pl.DataFrame:
    """The runs of buckets of WIDTH ns that SPANS (``DETAIL_INPUT`` columns) cover, per lane.

    WINDOW ``(b_lo, b_hi)`` keeps only buckets ``b_lo <= b < b_hi`` (spans are clipped to it,
    which changes nothing inside: a bucket's summary depends only on the spans overlapping it).
    MERGED: SPANS went through ``merge_overlaps`` already (done once for many levels).
    """
    if width < 1:
        raise ValueError(f"bucket width {width} < 1")
    lf = spans.lazy() if isinstance(spans, pl.DataFrame) else spans
    lf = lf.select(
        pl.col("lane").cast(pl.UInt32),
        pl.col("start").cast(pl.Int64).clip(lower_bound=0),
        pl.col("end").cast(pl.Int64),
        pl.col("state").cast(pl.UInt8),
    )
    if window is not None:
        lo, hi = window[0] * width, window[1] * width
        lf = lf.filter((pl.col("start") < hi) & (pl.col("end") > lo)).with_columns(
            pl.col("start").clip(lower_bound=lo), pl.col("end").clip(upper_bound=hi)
        )
    df = lf.filter(pl.col("end") > pl.col("start")).collect()
    if not merged:
        df = merge_overlaps(df)
    if df.height and int(((df["end"] - 1) // width).max()) >= 2**31:  # type: ignore[operator]
        raise ValueError(f"bucket width {width}: bucket indexes beyond 2**31")
    return _bucket_runs(df, width)


def _bucket_runs(merged: pl.DataFrame, width: int) -> pl.DataFrame:
    """The runs of buckets of WIDTH ns of MERGED (merge_overlaps' output)."""
    cols = [merged[c].to_numpy() for c in ("lane", "start", "end", "state")]
    got = level_columns(cols, width, 1)[0]
    return pl.DataFrame(dict(zip(RUNS_SCHEMA, got, strict=True)), schema=RUNS_SCHEMA)


def level_columns(cols: Sequence[np.ndarray], width0: int, count: int) -> list[list[np.ndarray]]:
    """detail_kernel.level_runs over COLS (lane, start, end, state of merge_overlaps' output):
    per level v (buckets WIDTH0 // FANOUT**v ns wide) its runs' columns, ``RUNS_SCHEMA``'s."""
    from goblueprint.trace import kernels

    if width0 % FANOUT ** (count - 1):
        raise ValueError(f"bucket width {width0} is not a multiple of {FANOUT}**{count - 1}")
    n = len(cols[0])
    # Room per level: the finest holds the most runs (most merged spans are a run or less
    # there, and each coarser level about half the finer one's); a level short of room for a
    # lane grows.
    size = [max(4096, (n // 2) >> (count - 1 - v)) for v in range(count)]
    out = _run_columns(sum(size))
    base = np.zeros(count + 1, np.int64)
    base[1:] = np.cumsum(size)
    kk = base[:-1].copy()
    want = np.zeros(count, np.int64)
    row = 0
    while True:
        row = kernels.get().level_runs(*cols, width0, count, row, *out, base, kk, want)
        if row >= n:
            break
        # A short level grows by as many again as its rows so far foretell for the rest,
        # and at least twice.
        grown = list(size)
        for v in range(count):
            used = int(kk[v] - base[v])
            if want[v]:
                grown[v] = max(2 * size[v], used + int(want[v]) + used * (n - row) // max(row, 1) + 1024)
        new = _run_columns(sum(grown))
        new_base = np.zeros(count + 1, np.int64)
        new_base[1:] = np.cumsum(grown)
        for v in range(count):
            used = int(kk[v] - base[v])
            for dst, src in zip(new, out, strict=True):
                dst[new_base[v] : new_base[v] + used] = src[base[v] : base[v] + used]
            kk[v] = new_base[v] + used
        out, base, size = new, new_base, grown
        want[:] = 0
    return [[c[base[v] : kk[v]] for c in out] for v in range(count)]


def _run_columns(cap: int) -> list[np.ndarray]:
    return [np.empty(cap, t) for t in (np.uint32, np.int64, np.int64, np.uint8, np.uint8)]


def merge_overlaps(spans: pl.DataFrame) -> pl.DataFrame:
    """Overlapping (or touching) spans of one lane and state as one span, so a state's covered
    time is the time any of them covers (nested regions count once), never more than a bucket.

    Out: ``DETAIL_INPUT`` columns, lanes ascending, each lane's rows by (state,
    start) — the order ``level_runs`` relies on."""
    df = spans.select(
        pl.col("lane").cast(pl.UInt32),
        pl.col("start").cast(pl.Int64),
        pl.col("end").cast(pl.Int64),
        pl.col("state").cast(pl.UInt8),
    ).sort("lane", maintain_order=True)
    got = merge_columns(*(df[c].to_numpy() for c in ("lane", "start", "end", "state")))
    return pl.DataFrame(dict(zip(DETAIL_INPUT, got, strict=True)), schema=DETAIL_INPUT)


def merge_columns(
    lane: np.ndarray, start: np.ndarray, end: np.ndarray, state: np.ndarray
) -> list[np.ndarray]:
    """merge_overlaps over columns (u32, i64, i64, u8) whose lanes are ascending already."""
    from goblueprint.trace import kernels

    cols = (lane, start, end, state)
    out = [np.empty(len(lane), c.dtype) for c in cols]
    k = kernels.get().merge_spans(*cols, *out)
    return [c[:k] for c in out]
