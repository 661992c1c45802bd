"""The Timeline's three large tables stored once, as the SQL tables that name their strings.

An ingest keeps the spans, flows and counters of a trace only as the SQL tables
``intervals``, ``flows`` and ``metrics`` (``Timeline.with_names`` of them: the same rows, string
ids as text, plus lane kind and state names).  Storing the Timeline's form beside them doubled
the largest files and about a second of the ingest's encoding for no data of their own.

Writing: ``named_arrow`` makes a piece of the SQL table from the Timeline's columns with every
text column an Arrow dictionary array whose indices are the ids (no string copied per row, none
hashed by the Parquet writer: it writes the dictionary and the indices as they are); the
files are written without Arrow's schema, so every reader (polars, DuckDB, pyarrow) sees the
plain string columns of ``with_names``.

Reading: ``as_timeline`` turns a scan of such a file back into the Timeline's table: text
columns cast to an Enum of the strings the table names (``Used``, recorded in the manifest),
whose physical value indexes their ids, in polars' own reader (no Arrow library loaded, a
view's memory stays its own).
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import cache
from typing import TYPE_CHECKING, Any

import numpy as np
import polars as pl

from goblueprint.timeline.model import SCHEMAS, STATE_NAMES, LaneKind, empty_frame

if TYPE_CHECKING:  # imported where written only: a view that reads does without Arrow's library
    import pyarrow as pa
    import pyarrow.parquet as pq

# Timeline table -> the SQL table stored for it.
SQL_TABLE = {"spans": "intervals", "flows": "flows", "counters": "metrics"}
# Timeline table -> its string-id columns (as with_names resolves them).
_TEXT = {"spans": ("label",), "flows": ("label",), "counters": ("name",)}
# Columns only the SQL table has (names of codes the Timeline keeps as codes).
_NAMES_OF = {"spans": {"lane_kind": "lane_kind_name", "state": "state_name"}, "flows": {}, "counters": {}}
# Columns in time order or nearly (a lane's spans by start, flows by from_time, counters by
# time): delta-coded, unique nearly per row, a dictionary would not pay; every other column
# has few values and gets one.  Delta halves the spans' file against plain zstd, and reads faster.
TIME_COLUMNS = {"spans": ("start", "end"), "flows": ("from_time", "to_time"), "counters": ("time",)}
# Text columns the rows are in order of (the spans by lane kind): their statistics skip row groups.
SORTED_TEXTS = {"spans": ("lane_kind_name",), "flows": (), "counters": ()}
# Rows of a row group (as polars' write_parquet cuts a table).
ROW_GROUP = 1 << 18
# Rows of a data page at most (coded_writer): a row group's column is one page unless it
# encodes to more than the writer's page size.
PAGE_ROWS = 1 << 20


def distinct_names(names: list[str]) -> tuple[np.ndarray, pa.Array]:
    """NAMES (of codes 0..n-1) as a dictionary for coded(): each code's index into the distinct
    names, and those names (a dictionary with a name twice, as "running" of a G, a P and an M,
    makes the Parquet writer fall back to plain text)."""
    import pyarrow as pa

    distinct = list(dict.fromkeys(names))
    index = {name: i for i, name in enumerate(distinct)}
    return np.array([index[name] for name in names], np.int32), pa.array(distinct, pa.string())


@cache
def _code_names(column: str) -> tuple[np.ndarray, pa.Array]:
    """The names of the codes 0..255 of COLUMN (lane_kind, state), as with_names gives them."""
    if column == "lane_kind":
        return distinct_names([LaneKind(c).name if c < len(LaneKind) else "" for c in range(256)])
    return distinct_names([STATE_NAMES.get(c, str(c)) for c in range(256)])


def coded(ids: np.ndarray, dictionary: pa.Array, valid: np.ndarray | None = None) -> pa.DictionaryArray:
    """The text column of IDS into DICTIONARY (unique), null where not VALID: the Parquet writer
    writes the dictionary and the ids as they are, no string copied or hashed per row."""
    import pyarrow as pa

    mask = None if valid is None or valid.all() else ~valid
    return pa.DictionaryArray.from_arrays(pa.array(ids.astype(np.int32, copy=False), mask=mask), dictionary)


def named_arrow(table: str, df: pl.DataFrame, strings: pa.Array) -> pa.Table:
    """``Timeline.with_names(TABLE)`` of DF (rows of the Timeline's TABLE), as Arrow with its text
    columns dictionary arrays; STRINGS: the Timeline's strings as an Arrow string array (unique,
    as a Timeline's are: a dictionary with a value twice is written as plain text)."""
    import pyarrow as pa

    cols: dict[str, pa.Array] = {}
    for name in df.columns:
        values = df[name]
        if name in _TEXT[table]:
            cols[name] = coded(values.to_numpy(), strings)
            continue
        cols[name] = values.to_arrow()
        named = _NAMES_OF[table].get(name)
        if named is not None:
            lut, names = _code_names(name)
            cols[named] = coded(lut[values.to_numpy()], names)
    # Every column declared without nulls, as the Timeline's columns are: the Parquet writer then
    # encodes no definition levels (a fifth of the intervals' encoding, the critical path of an
    # ingest's end), and it refuses a null rather than store one.
    schema = pa.schema([pa.field(name, col.type, nullable=False) for name, col in cols.items()])
    return pa.Table.from_arrays(list(cols.values()), schema=schema)


def sql_schema(table: str) -> pa.Schema:
    """The Arrow schema named_arrow gives for TABLE (dictionary text columns, no nulls)."""
    import pyarrow as pa

    return named_arrow(table, empty_frame(table), pa.array([""], pa.string())).schema


def writer(path: Any, table: str) -> pq.ParquetWriter:
    """A Parquet writer of the SQL table of the Timeline's TABLE, for named_arrow's pieces
    (coded_writer)."""
    return coded_writer(path, sql_schema(table), TIME_COLUMNS[table], SORTED_TEXTS[table])


def coded_writer(
    path: Any, schema: pa.Schema, times: tuple[str, ...], sorted_texts: tuple[str, ...] = ()
) -> pq.ParquetWriter:
    """The Parquet writer of every stored table written from codes: zstd level 1 (level 3,
    polars' own, cost the ingest of the 30.9 MB trace ~7 % more CPU for files 2-3 % smaller),
    TIMES delta-coded (they grow), a dictionary for every other column, no Arrow schema
    stored (readers see plain text columns).

    Statistics for every column but the text ones not in SORTED_TEXTS (the text columns
    the rows are in order of): a text column's minimum and maximum are the writer's costliest
    part of it (a fifth of the 14.5 M intervals' encoding) and, in a table in time order,
    the same in every row group, which no reader can skip by.

    Pages of up to PAGE_ROWS rows (still cut at the writer's 1 MB): Arrow's default of 20,000
    made 14 pages of a row group's column, and each page compressed creates and frees a
    zstd context and computes its own statistics (~12 % of the writers' CPU, files 3-9 %
    larger); no reader here skips by page (no page index is written)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    texts = {f.name for f in schema if pa.types.is_dictionary(f.type) or pa.types.is_string(f.type)}
    return pq.ParquetWriter(
        path,
        schema,
        compression="zstd",
        compression_level=1,
        write_statistics=[n for n in schema.names if n not in texts or n in sorted_texts],
        use_dictionary=[n for n in schema.names if n not in times],
        column_encoding=dict.fromkeys(times, "DELTA_BINARY_PACKED"),
        store_schema=False,
        max_rows_per_page=PAGE_ROWS,
    )


def write_table(
    path: Any, table: str, df: pl.DataFrame | Iterable[pl.DataFrame], strings: list[str], used: Used
) -> int:
    """Write DF, the Timeline's whole TABLE, as its SQL table to PATH (row groups of ROW_GROUP);
    the strings it names are added to USED; returns the rows written.  DF may be given as
    pieces in order, of any sizes: the same file, with only a piece (and less than a row
    group carried to the next) held at a time.

    Each row group is encoded on a thread while the next is made (a piece read from a spill,
    gathered, named): the caller's work and the encoding overlap, one group in flight."""
    import pyarrow as pa

    from goblueprint.timeline.write_behind import WriteBehind

    texts = pa.array(strings, pa.string())
    rows = 0
    # The pieces (or a piece's rows) short of a row group, written with the next's: kept apart
    # and put together once a group is full, as a copy of what was carried at each small
    # piece made many small pieces quadratic.
    carried: list[pl.DataFrame] = []
    carried_rows = 0
    with writer(path, table) as w, WriteBehind() as behind:
        for piece in [df] if isinstance(df, pl.DataFrame) else df:
            for column in _TEXT[table]:
                used.add(table, piece[column].to_numpy(), strings)
            rows += piece.height
            if carried_rows + piece.height < ROW_GROUP:
                carried.append(piece)
                carried_rows += piece.height
                continue
            if carried:
                piece = pl.concat([*carried, piece])
            whole = piece.height - piece.height % ROW_GROUP
            for lo in range(0, whole, ROW_GROUP):
                behind.submit(w.write_table, named_arrow(table, piece.slice(lo, ROW_GROUP), texts))
            carried = [piece.slice(whole)] if whole < piece.height else []
            carried_rows = piece.height - whole
        if carried:
            behind.submit(w.write_table, named_arrow(table, pl.concat(carried), texts))
        behind.wait()
        if not rows:
            w.write_table(w.schema.empty_table())
    return rows


class Used:
    """Which of the Timeline's strings each stored table's text column names, gathered as the
    tables are written (a table names few: block reasons, metric names...), so that a reader
    casts to an Enum of those only: a cast builds a map of its Enum's every category, and the
    Timeline's strings can be tens of thousands (every function and file of the stacks)."""

    def __init__(self) -> None:
        self._seen: dict[str, np.ndarray] = {}

    def add(self, table: str, ids: np.ndarray, strings: list[str]) -> None:
        seen = self._seen.get(table)
        if seen is None or len(seen) < len(strings):
            grown = np.zeros(len(strings), bool)
            if seen is not None:
                grown[: len(seen)] = seen
            self._seen[table] = seen = grown
        seen[ids] = True

    def ids(self) -> dict[str, list[int]]:
        """Table -> the ids its text column names, ascending (the manifest's record)."""
        return {table: np.flatnonzero(seen).tolist() for table, seen in sorted(self._seen.items())}


class Texts:
    """The Timeline's STRINGS and, per table, the ids its text column names (USED, from
    Used.ids(); a table not in it may name any): what as_timeline maps text back to ids with,
    made once and reused by every scan (a view reads a table in many batches)."""

    def __init__(self, strings: list[str], used: dict[str, list[int]] | None = None) -> None:
        self.strings = strings
        self._used = used or {}
        self._exprs: dict[str, pl.Expr] = {}

    def used(self, table: str) -> list[int] | None:
        """The ids TABLE's text column names, ascending (every one the table names, none it does
        not), or None when that was not recorded."""
        ids = self._used.get(table)
        return None if ids is None else list(ids)

    def expr(self, table: str, column: str) -> pl.Expr:
        """COLUMN of TABLE (text) as the Timeline's string ids (UInt32), an expression of each
        row alone (a scan's slice is still read alone, the views' batches)."""
        key = f"{table}.{column}"
        if key not in self._exprs:
            ids = self._used.get(table)
            # An Enum of the strings up to the last id named: its codes are the ids.  The ids a
            # table names come first in the Timeline's strings (the stacks' functions and files
            # follow them), so this is a few hundred strings, not the stacks' thousands.
            upto = len(self.strings) if ids is None else (ids[-1] + 1 if ids else 1)
            if ids is None or upto <= _PREFIX + 4 * len(ids):
                texts = pl.Enum(self.strings[:upto])
                self._exprs[key] = pl.col(column).cast(texts).to_physical().cast(pl.UInt32)
            else:  # the ids far apart: an Enum of them alone, its codes mapped to the ids
                phys = pl.col(column).cast(pl.Enum([self.strings[i] for i in ids])).to_physical()
                codes = list(range(len(ids)))
                self._exprs[key] = phys.replace_strict(codes, ids, return_dtype=pl.UInt32).alias(column)
        return self._exprs[key]


# Strings an Enum of the ids' prefix may hold beyond four per id named (a cast's map of them
# costs little next to a batch's rows).
_PREFIX = 1024


def as_timeline(table: str, scan: pl.LazyFrame, texts: Texts) -> pl.LazyFrame:
    """SCAN (of the SQL table stored for the Timeline's TABLE) as the Timeline's TABLE: its
    columns, the text ones as ids of the Timeline's strings (TEXTS)."""
    return scan.select(
        texts.expr(table, name) if name in _TEXT[table] else pl.col(name) for name in SCHEMAS[table]
    )
