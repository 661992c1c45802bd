"""Columns kept on disk during a pass: each column's values appended as raw bytes to a file.

A pass that writes its tables holds its largest ones (the events, the Timeline's spans and
counters) on disk until the pass is over.  They are read back once, in the order they
were written, or by row range: raw column files cost a write() and a mapping of their
bytes, where a file format per chunk (Arrow IPC through polars) cost more than the
pass's own work on a large trace (thousands of small files, each with its schema,
framing and a DataFrame made to write it).
"""

from __future__ import annotations

import mmap
import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import BinaryIO

import numpy as np

# Rows a range read alone must have on average (else read_ranges gathers by windows).
_RANGE_ROWS = 256


# madvise(MADV_POPULATE_READ), Linux 5.14 on: a mapping's pages mapped in one call, not a
# fault each (Python's mmap module does not name it before 3.13).
_POPULATE_READ = 22


def _mapped(path: Path, dtype: np.dtype, lo: int, hi: int) -> np.ndarray:
    """Rows LO..HI (HI > LO) of the raw column file PATH of DTYPE, mapped privately."""
    start, end = lo * dtype.itemsize, hi * dtype.itemsize
    at = start - start % mmap.ALLOCATIONGRANULARITY  # a mapping starts on a page
    try:
        with open(path, "rb") as f:
            mapping = mmap.mmap(f.fileno(), end - at, access=mmap.ACCESS_COPY, offset=at)
    except ValueError:  # shorter than the rows it was given
        raise OSError(f"{path}: spilled column cut short") from None
    try:
        mapping.madvise(_POPULATE_READ)
    except (OSError, ValueError):  # an older kernel: the pages fault in as they are read
        pass
    return np.frombuffer(mapping, dtype, count=hi - lo, offset=start - at)


class ColumnSpill:
    """Named columns of fixed dtypes, appended to a raw file each under DIRECTORY (NAME-<col>)."""

    def __init__(
        self, directory: Path, name: str, dtypes: Mapping[str, np.dtype | type], *, keep_open: bool = True
    ) -> None:
        """KEEP_OPEN=False opens a column's file for each append: for spills made by the hundred
        (a file descriptor each column otherwise)."""
        self.dtypes = {col: np.dtype(t) for col, t in dtypes.items()}
        self.paths = {col: directory / f"{name}-{col}.bin" for col in self.dtypes}
        self.keep_open = keep_open
        self._files: dict[str, BinaryIO] | None = {
            col: open(path, "wb")  # open until the columns are read
            for col, path in self.paths.items()
        }
        if not keep_open:
            self._close()
        self._read = False
        self.rows = 0

    def append(self, cols: Mapping[str, np.ndarray]) -> None:
        """Rows given as a column each (every named column, of one length; cast to its dtype)."""
        if self._read:
            raise ValueError("ColumnSpill: appended to after it was read")
        n = -1
        for col, dtype in self.dtypes.items():
            values = np.ascontiguousarray(cols[col], dtype=dtype)
            if n not in (-1, len(values)):
                raise ValueError(f"ColumnSpill: column {col} has {len(values)} rows, not {n}")
            n = len(values)
            data = memoryview(values).cast("B")
            if self._files is not None:
                self._files[col].write(data)
            else:
                with open(self.paths[col], "ab") as f:
                    f.write(data)
        self.rows += max(n, 0)

    def _close(self) -> None:
        if self._files is not None:
            for f in self._files.values():
                f.close()
            self._files = None

    def read(self, col: str, lo: int = 0, hi: int | None = None) -> np.ndarray:
        """Rows LO..HI of column COL: those rows of its file mapped (privately: writable, a page
        copied only if written), mapped as long as the array or a view of it lives.

        A mapping, not a read into a new array: the rows are the file's pages in the page cache,
        where a read copied them into fresh memory the kernel first zeroed (a tenth of an
        ingest's CPU went to reading back its spills)."""
        self._close()
        self._read = True
        hi = self.rows if hi is None else min(hi, self.rows)
        dtype = self.dtypes[col]
        if hi <= lo:
            return np.zeros(0, dtype)
        return _mapped(self.paths[col], dtype, lo, hi)

    def gather(self, col: str, rows: np.ndarray, window: int = 1 << 20) -> np.ndarray:
        """Column COL at ROWS (ascending row numbers), read WINDOW rows at a time into one
        buffer: what is held is the rows asked for and a window, never the whole column."""
        self._close()
        self._read = True
        dtype = self.dtypes[col]
        out = np.empty(len(rows), dtype)
        if not len(rows):
            return out
        buf = np.empty(min(window, self.rows), dtype)
        bounds = np.searchsorted(rows, np.arange(0, self.rows + window, window)).tolist()
        with open(self.paths[col], "rb") as f:
            for w in range(len(bounds) - 1):
                a, b = bounds[w], bounds[w + 1]
                if a == b:
                    continue
                # Only the window's rows from the first asked for to the last: a row far from the
                # others (a sort's straggler) costs its own few bytes, not a window.
                lo, hi = int(rows[a]), int(rows[b - 1]) + 1
                f.seek(lo * dtype.itemsize)
                got = f.readinto(memoryview(buf[: hi - lo]).cast("B")) // dtype.itemsize
                if got < hi - lo:
                    raise OSError(f"{self.paths[col]}: spilled column cut short")
                # (mode "clip": the rows are in the window; "raise" copies through a buffer)
                np.take(buf, rows[a:b] - lo, out=out[a:b], mode="clip")
        return out

    def read_ranges(self, col: str, starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
        """Column COL at the row ranges STARTS..ENDS (ascending, apart), one after the other:
        each range read where it lies, or, when the ranges are many and short, the rows
        gathered a window at a time (a read per range would cost more than the rows)."""
        starts, ends = np.asarray(starts, np.int64), np.asarray(ends, np.int64)
        if len(starts) > 1:  # ranges that touch read as one
            joined = np.flatnonzero(starts[1:] != ends[:-1]) + 1
            starts, ends = starts[np.append(0, joined)], ends[np.append(joined - 1, len(ends) - 1)]
        sizes = ends - starts
        total = int(sizes.sum())
        if len(starts) > 64 and total < len(starts) * _RANGE_ROWS:
            at = np.repeat(starts - np.cumsum(sizes) + sizes, sizes) + np.arange(total)
            return self.gather(col, at)
        self._close()
        self._read = True
        dtype = self.dtypes[col]
        out = np.empty(total, dtype)
        view = memoryview(out).cast("B")
        size = dtype.itemsize
        # A pread per range on the bare descriptor: one system call where a buffered file's
        # seek and readinto made two, tens of thousands of times in an ingest's finish.
        fd = os.open(self.paths[col], os.O_RDONLY)
        try:
            pos = 0
            for lo, n in zip(starts.tolist(), sizes.tolist(), strict=True):
                end, at = pos + n * size, lo * size
                while pos < end:  # (a read returns less than asked past 2 GB, or cut short)
                    got = os.preadv(fd, [view[pos:end]], at)
                    if got <= 0:
                        raise OSError(f"{self.paths[col]}: spilled column cut short")
                    pos, at = pos + got, at + got
        finally:
            os.close(fd)
        return out

    def windows(self, rows: int) -> Iterable[tuple[int, int]]:
        """Row ranges of at most ROWS rows covering every row, in order."""
        return ((lo, min(lo + rows, self.rows)) for lo in range(0, self.rows, max(rows, 1)))

    def remove(self) -> None:
        self._close()
        for path in self.paths.values():
            path.unlink(missing_ok=True)


class Seen:
    """Which of a set of small integer codes occurred (string or stack ids, a few negative
    codes): a table of flags set per chunk, where sorting each chunk's codes cost more."""

    def __init__(self) -> None:
        self.lo = 0
        self.flags = np.zeros(0, np.bool_)

    def add(self, codes: np.ndarray) -> None:
        if not len(codes):
            return
        lo, hi = min(self.lo, int(codes.min())), max(self.lo + len(self.flags) - 1, int(codes.max()))
        if lo < self.lo or hi >= self.lo + len(self.flags):
            # Room doubled (amortized): ids only grow, the negative codes are few.
            width = max(hi - lo + 1, 2 * len(self.flags))
            flags = np.zeros(width, np.bool_)
            flags[self.lo - lo : self.lo - lo + len(self.flags)] = self.flags
            self.lo, self.flags = lo, flags
        self.flags[codes.astype(np.int64) - self.lo] = True

    def values(self) -> np.ndarray:
        """The codes seen, sorted (int64)."""
        return np.flatnonzero(self.flags).astype(np.int64) + self.lo
