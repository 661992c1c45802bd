"""A stored table read a bounded number of rows at a time.

The views of an ingested trace aggregate its large tables (every stay of a pprof type, every
P span, every flow) a batch at a time, so what they hold is a batch of the columns they read,
never a table: ``trace pprof`` and ``trace metrics`` stay near the interpreter's own memory
whatever the trace's size.  The ingest writes those tables sorted by what the views select on
(a stay's type, a span's lane kind), so the rows a view wants are one run of the file, found
from its row-group statistics, and each batch reads only the row groups it overlaps.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import polars as pl

# Rows of the file read at once: ~0.5 MB a column, and few enough reads that each one's fixed
# cost (the file's footer, polars' plan) stays well under the time of its rows.  Smaller than
# a row group of the ingested tables: what a read holds at its peak (the row groups it decodes,
# in polars' threads, whose allocator keeps freed memory a while) is what a view's peak adds.
BATCH_ROWS = 1 << 16


def row_range(frame: pl.LazyFrame, where: pl.Expr | None) -> tuple[int, int]:
    """The rows [first, last + 1) of FRAME that hold the rows WHERE selects (all with None)."""
    if where is None:
        return 0, int(frame.select(pl.len()).collect().item())
    found = (
        frame.with_row_index("_row")
        .filter(where)
        .select(pl.col("_row").min().alias("lo"), pl.col("_row").max().alias("hi"))
        .collect()
    )
    lo, hi = found.row(0)
    return (0, 0) if lo is None else (int(lo), int(hi) + 1)


def frame_batches(
    frame: pl.LazyFrame,
    *,
    where: pl.Expr | None = None,
    columns: Sequence[str] | None = None,
    rows: int | None = None,
) -> Iterator[pl.DataFrame]:
    """The rows of FRAME (a scan of a stored table) that WHERE selects, their COLUMNS only, in
    the file's order, read ROWS (default BATCH_ROWS) rows of the file at a time (a batch may
    hold fewer, or none; with no row selected, one empty batch, as a table in memory gives)."""
    rows = BATCH_ROWS if rows is None else rows
    if rows < 1:
        raise ValueError(f"rows must be positive, not {rows}")
    lo, hi = row_range(frame, where)
    for offset in range(lo, max(hi, lo + 1), rows):
        part = frame.slice(offset, min(rows, hi - offset))
        if where is not None:
            part = part.filter(where)
        if columns is not None:
            part = part.select(columns)
        yield part.collect()


def batches_of(
    frame: pl.DataFrame | pl.LazyFrame,
    *,
    where: pl.Expr | None = None,
    columns: Sequence[str] | None = None,
) -> Iterator[pl.DataFrame]:
    """The rows of FRAME that WHERE selects, their COLUMNS only, in order: a table in memory
    (a pass's) as one batch, a scan of a stored one a batch at a time (frame_batches)."""
    if isinstance(frame, pl.LazyFrame):
        yield from frame_batches(frame, where=where, columns=columns)
        return
    if where is not None:
        frame = frame.filter(where)
    yield frame if columns is None else frame.select(columns)


@dataclass
class TimelineScans:
    """A stored Timeline with its large tables as scans of their files: what the views that
    aggregate them a batch at a time (``batches_of``) read in place of the Timeline."""

    start_ns: int
    end_ns: int
    strings: list[str]
    go_version: str
    spans: pl.LazyFrame
    flows: pl.LazyFrame
