"""A spilled table's rows in the order of two keys, a piece at a time, in memory bounded by the piece.

``np.lexsort`` of a whole spilled table's two key columns holds both keys, the order and
lexsort's own buffers: ~28 bytes a row, 700 MB for the 25 M flows of a 462 MB trace, where
the rest of its ingest held 500 MB.  Here the rows are put in buckets of ranges of the major
key: a histogram of it over ``_BINS`` equal bins, consecutive bins grouped up to PIECE rows.
Each window of rows is appended to one file grouped by bucket (row number and both keys),
where its bucket's rows lie together; then each bucket's rows are read back and sorted
alone.  The buckets are ranges of the major key in order, and a bucket's rows come back in
row order, so the buckets' sorted rows one after the other are the stable order of the
whole table.  A bin of more than PIECE rows is a bucket alone, held whole.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from goblueprint.timeline.spill import ColumnSpill

_BINS = 1 << 16
# Rows of the table read at a time while bucketing (three passes over the major key).
_WINDOW = 1 << 20


def sorted_pieces(spill: ColumnSpill, major: str, minor: str, piece: int) -> Iterator[np.ndarray]:
    """The row numbers of SPILL in the stable order of (MAJOR, MINOR) (``np.lexsort((minor,
    major))``), as consecutive pieces of about PIECE rows (more only where one bin of the major
    key holds more); int64 columns."""
    n = spill.rows
    if n <= piece:
        if n:
            yield np.lexsort((spill.read(minor), spill.read(major)))
        return
    windows = list(spill.windows(_WINDOW))
    lo, hi = _range(spill, major, windows)
    width = np.uint64((hi - lo) // _BINS + 1)  # (hi - lo) // width < _BINS
    base = np.int64(lo).view(np.uint64)

    def bins(values: np.ndarray) -> np.ndarray:
        # Unsigned: value - lo is exact modulo 2**64 and below it (int64 could overflow).
        return ((values.view(np.uint64) - base) // width).astype(np.int64)

    counts = np.zeros(_BINS, np.int64)
    for a, b in windows:
        counts += np.bincount(bins(spill.read(major, a, b)), minlength=_BINS)
    bucket_of_bin = _buckets(counts, piece)
    buckets = int(bucket_of_bin[-1]) + 1
    directory = spill.paths[major].parent
    grouped = ColumnSpill(directory, f"sort-{major}", {"row": np.int64, "major": np.int64, "minor": np.int64})
    # Where each window's rows of each bucket lie in GROUPED: bucket k of window w is
    # ends[w, k] - (its rows) .. ends[w, k].
    ends = np.zeros((len(windows), buckets), np.int64)
    try:
        for w, (a, b) in enumerate(windows):  # (window w's rows are rows a..b of GROUPED too)
            values = spill.read(major, a, b)
            bucket = bucket_of_bin[bins(values)]
            order = np.argsort(bucket, kind="stable")  # the window's rows by bucket, in row order
            grouped.append(
                {"row": order + a, "major": values[order], "minor": spill.read(minor, a, b)[order]}
            )
            ends[w] = a + np.cumsum(np.bincount(bucket, minlength=buckets))
        starts = _first(ends, windows)
        for k in range(buckets):
            s, e = starts[:, k], ends[:, k]
            keep = e > s
            if not keep.any():
                continue
            s, e = s[keep], e[keep]
            rows = grouped.read_ranges("row", s, e)
            order = np.lexsort((grouped.read_ranges("minor", s, e), grouped.read_ranges("major", s, e)))
            yield rows[order]
    finally:
        grouped.remove()


def _range(spill: ColumnSpill, col: str, windows: list[tuple[int, int]]) -> tuple[int, int]:
    """The least and greatest value of column COL."""
    lo, hi = None, None
    for a, b in windows:
        values = spill.read(col, a, b)
        lo = int(values.min()) if lo is None else min(lo, int(values.min()))
        hi = int(values.max()) if hi is None else max(hi, int(values.max()))
    if lo is None or hi is None:
        raise ValueError("sorted_pieces: no rows")
    return lo, hi


def _first(ends: np.ndarray, windows: list[tuple[int, int]]) -> np.ndarray:
    """Where each window's rows of each bucket begin: the end of the bucket before, the
    window's first row for the first bucket."""
    firsts = np.array([a for a, _ in windows], np.int64)[:, None]
    return np.concatenate([firsts, ends[:, :-1]], axis=1)


def _buckets(counts: np.ndarray, piece: int) -> np.ndarray:
    """Each bin's bucket: consecutive bins (COUNTS rows each) grouped while they hold at most
    PIECE rows in all (a bin of more is a bucket alone)."""
    bucket = np.empty(len(counts), np.int64)
    k, held = 0, 0
    for i, c in enumerate(counts.tolist()):
        if held and held + c > piece:
            k, held = k + 1, 0
        bucket[i] = k
        held += c
    return bucket
