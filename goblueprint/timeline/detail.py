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

Tables in and out are columns; nothing here loops in Python per span or per bucket.

``runs`` input (``DETAIL_INPUT``): ``lane`` (u32, any lane numbering), ``start`` and
``end`` (i64 ns since the trace start, end exclusive), ``state`` (u8, any state
numbering).  Output (``RUNS_SCHEMA``), sorted by lane then ``b0``.
"""

from __future__ import annotations

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
    lf = lf.filter(pl.col("end") > pl.col("start"))
    if not merged:
        lf = merge_overlaps(lf)
    lf = lf.with_columns(
        (pl.col("start") // width).alias("first"), ((pl.col("end") - 1) // width).alias("last")
    )
    # Buckets a span covers entirely: (first, last) exclusive of a partly covered end bucket.
    inner_lo = (
        pl.when(pl.col("start") == pl.col("first") * width)
        .then(pl.col("first"))
        .otherwise(pl.col("first") + 1)
    )
    inner_hi = (
        pl.when(pl.col("end") == (pl.col("last") + 1) * width)
        .then(pl.col("last") + 1)
        .otherwise(pl.col("last"))
    )
    lf = lf.with_columns(inner_lo.alias("in_lo"), inner_hi.alias("in_hi"))
    spans_df = lf.collect()

    # Full buckets are already summarised: their state covers all of the bucket, as much as any
    # state can, so it is a dominant one.  Where ranges of a lane overlap (nested regions, GC
    # ranges), the earlier range keeps the buckets it has: clip each to the running end before it.
    full = (
        spans_df.filter(pl.col("in_hi") > pl.col("in_lo"))
        .select("lane", pl.col("in_lo").alias("b0"), pl.col("in_hi").alias("b1"), "state")
        .sort(["lane", "b0", "b1"], descending=[False, False, True])
        .with_columns(pl.col("b1").cum_max().shift(1).over("lane").alias("_reach"))
        .with_columns(pl.max_horizontal("b0", pl.col("_reach").fill_null(pl.col("b0"))).alias("b0"))
        .filter(pl.col("b1") > pl.col("b0"))
        .select("lane", "b0", "b1", "state", pl.lit(FULL, pl.UInt8).alias("fill"))
    )

    # Partly covered buckets: at most the first and the last bucket of each span.
    def covered_fully(b: str) -> pl.Expr:
        return (pl.col("in_lo") <= pl.col(b)) & (pl.col(b) < pl.col("in_hi"))

    head = spans_df.filter(~covered_fully("first")).select(
        "lane",
        pl.col("first").alias("b"),
        "state",
        (pl.min_horizontal("end", (pl.col("first") + 1) * width) - pl.col("start")).alias("covered"),
    )
    tail = spans_df.filter(~covered_fully("last") & (pl.col("last") > pl.col("first"))).select(
        "lane", pl.col("last").alias("b"), "state", (pl.col("end") - pl.col("last") * width).alias("covered")
    )
    # The pieces (about two per span at every level) summed per (lane, bucket, state), then
    # the dominant state per (lane, bucket): all three packed in one u64, one sort of it and
    # sums over its runs of equal keys, which is several times cheaper than hash groupings
    # on millions of distinct buckets.
    pieces = pl.concat([head, tail])
    if pieces.height and (int(pieces["b"].max()) >= 2**31 or int(pieces["lane"].max()) >= 2**25):
        raise ValueError(f"bucket width {width}: bucket indexes beyond 2**31 or lanes beyond 2**25")
    key = (pl.col("lane").cast(pl.UInt64) * 2**31 + pl.col("b").cast(pl.UInt64)) * 256 + pl.col("state")
    packed = pieces.select(key.alias("key"), pl.col("covered").cast(pl.Int64)).sort("key")
    partial = _dominant(packed["key"].to_numpy(), packed["covered"].to_numpy(), width)
    # A partly covered bucket inside another span's full buckets is that span's.
    if full.height and partial.height:
        owner = partial.join_asof(
            full.select("lane", pl.col("b0").alias("f0"), pl.col("b1").alias("f1")).sort(["lane", "f0"]),
            left_on="b0",
            right_on="f0",
            by="lane",
            strategy="backward",
            check_sortedness=False,
        )
        partial = owner.filter(pl.col("f1").is_null() | (pl.col("b0") >= pl.col("f1"))).select(
            list(RUNS_SCHEMA)
        )
    return _merge(pl.concat([full.cast(RUNS_SCHEMA), partial.cast(RUNS_SCHEMA)]))


def _dominant(key: np.ndarray, covered: np.ndarray, width: int) -> pl.DataFrame:
    """Per (lane, bucket) of KEY (sorted (lane * 2**31 + bucket) * 256 + state), the state
    covering the most of it (ties: the lower state) and its fill, as one-bucket runs."""
    if len(key) == 0:
        return pl.DataFrame(schema=RUNS_SCHEMA)
    first = np.flatnonzero(np.concatenate(([True], key[1:] != key[:-1])))
    keys, sums = key[first], np.add.reduceat(covered, first)
    lane_bucket, state = keys // 256, (keys % 256).astype(np.int64)
    cell = np.flatnonzero(np.concatenate(([True], lane_bucket[1:] != lane_bucket[:-1])))
    # The most covered state, ties to the lower: the largest covered * 256 + 255 - state.
    best = np.maximum.reduceat(sums * 256 + 255 - state, cell)
    total = np.minimum(np.add.reduceat(sums, cell), width)
    where = lane_bucket[cell]
    b = (where % 2**31).astype(np.int64)
    return pl.DataFrame(
        {
            "lane": (where // 2**31).astype(np.uint32),
            "b0": b,
            "b1": b + 1,
            "state": (255 - best % 256).astype(np.uint8),
            "fill": ((total * FULL + width // 2) // width).astype(np.uint8),
        },
        schema=RUNS_SCHEMA,
    )


def merge_overlaps(spans: pl.DataFrame | pl.LazyFrame) -> pl.LazyFrame:
    """Overlapping spans of one lane and state as one span, so a state's covered time is the
    time any of them covers (nested regions count once), never more than a bucket."""
    lf = spans.lazy() if isinstance(spans, pl.DataFrame) else spans
    reach = pl.col("end").cum_max().shift(1).over(["lane", "state"])
    return (
        lf.filter(pl.col("end") > pl.col("start"))
        .sort(["lane", "state", "start"])
        .with_columns((pl.col("start") > reach).fill_null(True).cum_sum().alias("_group"))
        .group_by(["lane", "state", "_group"])
        .agg(pl.col("start").min(), pl.col("end").max())
        .select("lane", "start", "end", "state")
    )


def _merge(rows: pl.DataFrame) -> pl.DataFrame:
    """Adjacent rows of a lane with the same state and fill as one run."""
    rows = rows.sort(["lane", "b0"])
    starts = (
        (pl.col("lane") != pl.col("lane").shift(1))
        | (pl.col("b0") != pl.col("b1").shift(1))
        | (pl.col("state") != pl.col("state").shift(1))
        | (pl.col("fill") != pl.col("fill").shift(1))
    ).fill_null(True)
    return (
        rows.with_columns(starts.cum_sum().alias("_run"))
        .group_by("_run", maintain_order=True)
        .agg(
            pl.col("lane").first(),
            pl.col("b0").first(),
            pl.col("b1").last(),
            pl.col("state").first(),
            pl.col("fill").first(),
        )
        .select(list(RUNS_SCHEMA))
        .cast(RUNS_SCHEMA)
    )
