"""What the Perfetto export reads, from a Timeline in memory or streamed from the ingested tables.

The export (``export_perfetto``) walks the spans lane by lane, each lane in pieces
(``pieces``), and the counters in time order; both sources hand it the same rows in the
same order, so a Timeline and the tables ingested from it show the same file (byte for
byte when the flows fit in one batch: flow names are numbered batch by batch).

``IngestedSource`` never holds a whole table: it reads the Parquet files in batches with
polars (the spans are stored sorted by lane and start, so a lane's rows are contiguous)
and keeps at most one batch plus the piece being assembled.  The flows are read as the
columns the export needs, and the instants (a few per thread) whole."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import IO, TYPE_CHECKING, Protocol

import numpy as np
import polars as pl

from goblueprint.arrays import unique
from goblueprint.errors import GoblueprintError, PathError
from goblueprint.timeline.model import NONE, SCHEMAS, InstantKind, Timeline
from goblueprint.timeline.read_ahead import read_ahead
from goblueprint.timeline.stored import ROW_GROUP, SQL_TABLE, as_timeline

if TYPE_CHECKING:
    from goblueprint.timeline.ingest import Ingested

# The span columns the export reads (not p, m, stack).
SPAN_COLUMNS = ("lane_kind", "lane_id", "start", "end", "state", "g", "label")
FLOW_COLUMNS = ("g", "from_g", "from_p", "from_time", "to_p", "to_time", "label")
COUNTER_COLUMNS = ("name", "time", "value")
BATCH_ROWS = 1 << 16  # rows per Parquet batch: a few MB of columns
_STREAMED = ("spans", "flows", "counters", "instants")
# The tables whose times the trace's first time is the earliest of (and their time columns).
FIRST_TIME_TABLES = ("spans", "counters", "instants")
_TIME_COLUMN = {"spans": "start", "counters": "time", "instants": "time"}


class Rows(dict[str, np.ndarray]):
    """Columns of equal length as numpy arrays: what a piece is cut from and joined of.  A
    DataFrame's slice, concat or column costs microseconds, and a trace has thousands of lanes
    of a few rows each; an array's slice costs a fraction of that."""

    @property
    def height(self) -> int:
        return len(next(iter(self.values()))) if self else 0

    def take(self, index: slice | np.ndarray) -> Rows:
        """The rows at INDEX (a slice, a view; or row numbers)."""
        return Rows({c: v[index] for c, v in self.items()})

    @staticmethod
    def concat(parts: list[Rows]) -> Rows:
        if len(parts) == 1:
            return parts[0]
        return Rows({c: np.concatenate([p[c] for p in parts]) for c in parts[0]})


# A batch of spans (SPAN_COLUMNS) as the Rows the export keeps of them.
Prepare = Callable[[pl.DataFrame], Rows]


class Source(Protocol):
    start_ns: int
    strings: list[str]
    lanes: pl.DataFrame  # the lanes table (labels, groups), one row per lane

    def lane_keys(self) -> pl.DataFrame:
        """(lane_kind, lane_id) of every lane with spans, in the order ``lane_spans`` yields them."""
        ...

    def first_time(self, tables: tuple[str, ...] = FIRST_TIME_TABLES) -> int:
        """The earliest time of any row of TABLES (spans, counters, instants), or ``start_ns`` if
        earlier.  Tables apart may be read at once on two threads: no handle is shared."""
        ...

    def lane_pieces(self, window_rows: int, prepare: Prepare) -> Iterator[Piece]:
        """Each lane's spans (SPAN_COLUMNS, and what PREPARE adds to each batch of them) by
        start, the longer first at equal starts, in pieces of about WINDOW_ROWS rows cut where
        no span is open (``pieces``)."""
        ...

    def flows(self) -> Iterator[pl.DataFrame]:
        """The flows that end (FLOW_COLUMNS), in batches, by (from_time, g): a flow's id is its row + 1."""
        ...

    def marks(self) -> pl.DataFrame:
        """Instants of a thread with neither G nor P (m, time, label), in table order."""
        ...

    def counter_names(self) -> list[int]:
        """The counters' names (string ids), sorted."""
        ...

    def counter_batches(self) -> Iterator[pl.DataFrame]:
        """The counter samples (COUNTER_COLUMNS); across batches each name's samples are in time order."""
        ...

    def close(self) -> None:
        """Let go of any file the source holds open."""
        ...


@dataclass
class Piece:
    """Rows of one lane, by start, the longer first: rows [first row, next piece's)."""

    lane_kind: int
    lane_id: int
    spans: Rows
    first: bool  # the lane's first piece
    until: int | None  # the next piece's first start; None: the lane's last piece


def _lane_order(lane: Rows) -> Rows:
    """One lane's rows by start, longest first, ties in stored order (numpy's lexsort is stable)."""
    if lane.height < 2:
        return lane
    start = lane["start"]
    if (start[1:] > start[:-1]).all():
        return lane  # no two rows start together: already in order, no copy
    order = np.lexsort((-lane["end"], start))
    return lane.take(order)


def _runs(kinds: np.ndarray, ids: np.ndarray) -> np.ndarray:
    """Row indices where (kind, id) changes, with 0 and len at the ends."""
    change = np.flatnonzero((kinds[1:] != kinds[:-1]) | (ids[1:] != ids[:-1])) + 1
    return np.concatenate(([0], change, [len(kinds)]))


def _cuts(start: np.ndarray, end: np.ndarray, window_rows: int) -> list[int]:
    """Rows where a lane's rows (by start) may be cut into pieces of at least WINDOW_ROWS:
    where the start moves on (rows that start together stay together) and every earlier
    row has ended (no slice spans two pieces, and each piece's layers start afresh)."""
    if len(start) <= window_rows:
        return []
    ended = np.maximum.accumulate(end)[:-1] <= start[1:]
    cand = np.flatnonzero(ended & (start[1:] > start[:-1])) + 1
    cuts: list[int] = []
    at = 0
    while True:
        j = int(np.searchsorted(cand, at + window_rows))
        if j == len(cand):
            return cuts
        at = int(cand[j])
        cuts.append(at)


def pieces(frames: Iterator[pl.DataFrame], window_rows: int, where: str, prepare: Prepare) -> Iterator[Piece]:
    """The lanes of FRAMES (rows grouped by lane, by start within a lane; a lane's rows may run
    across frames) as Pieces of at least WINDOW_ROWS rows where the lane allows (``_cuts``):
    memory is a frame and a piece, however large the lane.  WHERE names the rows in an error;
    PREPARE adds columns to each frame (once per frame: cheaper than once per piece)."""
    held: list[Rows] = []  # the current lane's rows not yet handed out
    count = 0
    # Rows held when a cut is next tried: it doubles while a lane's spans overlap without a
    # break, so a long overlap is concatenated and searched a few times, not once per frame.
    again = 2 * window_rows
    key = (-1, -1)
    first = True

    def cut(last: bool) -> Iterator[Piece]:
        nonlocal held, count, again, first
        rows = Rows.concat(held)
        held, count = [], 0
        start = rows["start"]
        if len(start) > 1 and (start[1:] < start[:-1]).any():
            raise GoblueprintError(f"the spans in {where} are not sorted by start: ingest the trace again")
        bounds = [0, *_cuts(start, rows["end"], window_rows)]
        if last:
            bounds.append(rows.height)
        else:
            # The rows after the last cut wait for the lane's next rows.
            held, count = [rows.take(slice(bounds[-1], None))], rows.height - bounds[-1]
        again = 2 * max(count, window_rows)
        for lo, hi in itertools.pairwise(bounds):
            until = int(start[hi]) if hi < len(start) else None
            yield Piece(key[0], key[1], _lane_order(rows.take(slice(lo, hi))), first, until)
            first = False

    for b in frames:
        if not b.height:
            continue
        rows = prepare(b)
        del b
        k, i = rows["lane_kind"], rows["lane_id"]
        for lo, hi in itertools.pairwise(_runs(k, i).tolist()):
            here = (int(k[lo]), int(i[lo]))
            if here != key:
                if held:
                    yield from cut(last=True)
                key, first = here, True
            held.append(rows.take(slice(lo, hi)))
            count += hi - lo
            if count >= again:
                yield from cut(last=False)
    if held:
        yield from cut(last=True)


class TimelineSource:
    """A Timeline in memory (tests, and the kernel or lab views that add lanes to one)."""

    def __init__(self, tl: Timeline) -> None:
        self.start_ns = tl.start_ns
        self.strings = tl.strings
        self.lanes = tl.lanes
        self.tl = tl
        # A stable sort by lane and start, as on disk (pieces put equal starts longest first).
        self.spans = tl.spans.select(SPAN_COLUMNS).sort(
            ["lane_kind", "lane_id", "start"], maintain_order=True
        )
        kinds, ids = self.spans["lane_kind"].to_numpy(), self.spans["lane_id"].to_numpy()
        self.edges = _runs(kinds, ids) if len(kinds) else np.zeros(1, np.int64)

    def lane_keys(self) -> pl.DataFrame:
        return self.spans.select("lane_kind", "lane_id")[self.edges[:-1]]

    def first_time(self, tables: tuple[str, ...] = FIRST_TIME_TABLES) -> int:
        tl = self.tl
        frames = {"spans": tl.spans, "counters": tl.counters, "instants": tl.instants}
        firsts = [tl.start_ns] + [
            int(frames[t][_TIME_COLUMN[t]].min())  # type: ignore[arg-type]
            for t in tables
            if frames[t].height
        ]
        return min(firsts)

    def lane_pieces(self, window_rows: int, prepare: Prepare) -> Iterator[Piece]:
        return pieces(iter([self.spans]), window_rows, "the Timeline", prepare)

    def flows(self) -> Iterator[pl.DataFrame]:
        yield (
            self.tl.flows.filter(pl.col("to_time") >= 0)
            .sort(["from_time", "g"], maintain_order=True)
            .select(FLOW_COLUMNS)
        )

    def marks(self) -> pl.DataFrame:
        return _marks(self.tl.instants.lazy()).collect()

    def counter_names(self) -> list[int]:
        return sorted(self.tl.counters["name"].unique().to_list())

    def close(self) -> None:
        pass

    def counter_batches(self) -> Iterator[pl.DataFrame]:
        if self.tl.counters.height:
            yield self.tl.counters.sort(["name", "time"], maintain_order=True).select(COUNTER_COLUMNS)


_EMPTY_MARKS = pl.DataFrame(schema={c: SCHEMAS["instants"][c] for c in ("m", "time", "label")})


def _marks(instants: pl.LazyFrame) -> pl.LazyFrame:
    return instants.filter(
        (pl.col("g") == NONE) & (pl.col("p") == NONE) & (pl.col("kind") == int(InstantKind.OTHER))
    ).select("m", "time", "label")


class IngestedSource:
    """The ingested tables (``timeline.ingest``), read in batches: memory is a batch and a lane."""

    def __init__(self, found: Ingested, batch_rows: int = BATCH_ROWS) -> None:
        from goblueprint.timeline.ingest import TIMELINE_DIR

        d = found.path / TIMELINE_DIR
        meta = found.manifest["timeline"]
        self.dir = d
        self.batch_rows = batch_rows
        self.start_ns = int(meta["start_ns"])
        self._keys: pl.DataFrame | None = None
        # Every file is opened now and read through its handle: an entry that another process
        # replaces in the cache meanwhile (other code, other tables) stays readable to the end.
        self.files: dict[str, IO[bytes]] = {}
        self.rows: dict[str, int] = {}
        # Where each table is stored (spans, flows and counters in their SQL tables), for errors.
        self.paths = {table: found.timeline_file(table) for table in _STREAMED}
        try:
            self.strings = pl.read_parquet(d / "strings.parquet")["s"].to_list()
            self.lanes = pl.read_parquet(d / "lanes.parquet")
            self.texts = found.texts(self.strings)
            for table in _STREAMED:
                self.files[table] = open(self.paths[table], "rb")
                self.rows[table] = self._raw(table).select(pl.len()).collect().item()
        except OSError as exc:
            self.close()
            raise PathError.from_os(exc.filename or d, exc) from None

    def close(self) -> None:
        for f in self.files.values():
            f.close()
        self.files.clear()

    def _raw(self, table: str) -> pl.LazyFrame:
        """The stored file as it is: enough for its row count and its columns that are no text."""
        f = self.files[table]
        f.seek(0)
        return pl.scan_parquet(f)

    def _scan(self, table: str) -> pl.LazyFrame:
        scan = self._raw(table)
        # Spans, flows and counters are stored as their SQL tables (timeline.stored).
        return as_timeline(table, scan, self.texts) if table in SQL_TABLE else scan

    def _batches(
        self, table: str, columns: tuple[str, ...], rows: int | None = None, raw: bool = False
    ) -> Iterator[pl.DataFrame]:
        """The table's COLUMNS, ROWS (BATCH_ROWS) rows at a time.  Polars' own reader, a slice at
        a time (it reads the row groups the slice needs): Arrow's reader would cost its library's
        memory (its import alone is a trace's size in RSS on a 30 MB trace) for no gain.  RAW:
        columns that are no text, read as stored (no cast of the text columns planned)."""
        schema = {c: SCHEMAS[table][c] for c in columns}
        step = rows or self.batch_rows
        try:
            # One plan for every slice: a plan made per slice read the file's footer again each
            # time (a fifth of reading the 30.9 MB trace's spans, on the thread that holds the GIL).
            scan = (self._raw(table) if raw else self._scan(table)).select(columns)
            for lo in range(0, self.rows[table], step):
                batch = scan.slice(lo, step).collect()
                # A cast to the types a batch has already still costs a pass over it.
                yield batch if batch.schema == schema else batch.cast(schema)  # type: ignore[arg-type]
        except OSError as exc:
            raise PathError.from_os(self.paths[table], exc) from None

    def lane_keys(self) -> pl.DataFrame:
        if self._keys is None:
            kinds: list[np.ndarray] = []
            ids: list[np.ndarray] = []
            # Two narrow columns, no text: read as stored, in slices of a row group (a few MB).
            for b in self._batches("spans", ("lane_kind", "lane_id"), rows=ROW_GROUP, raw=True):
                if not b.height:
                    continue
                k, i = b["lane_kind"].to_numpy(), b["lane_id"].to_numpy()
                edges = _runs(k, i)[:-1]
                kinds.append(k[edges])
                ids.append(i[edges])
            k = np.concatenate(kinds) if kinds else np.zeros(0, np.uint8)
            i = np.concatenate(ids) if ids else np.zeros(0, np.int64)
            # Runs split by a batch boundary join up; a key seen again later means the table is unsorted.
            keep = (
                np.concatenate(([True], (k[1:] != k[:-1]) | (i[1:] != i[:-1])))
                if len(k)
                else np.zeros(0, bool)
            )
            k, i = k[keep], i[keep]
            key = k.astype(np.int64) * (1 << 56) + i
            if len(key) > 1 and not (np.diff(key) > 0).all():
                raise GoblueprintError(
                    f"the ingested spans in {self.dir} are not sorted by lane: ingest the trace again"
                )
            self._keys = pl.DataFrame(
                {"lane_kind": k, "lane_id": i},
                schema={c: SCHEMAS["spans"][c] for c in ("lane_kind", "lane_id")},
            )
        return self._keys

    def first_time(self, tables: tuple[str, ...] = FIRST_TIME_TABLES) -> int:
        firsts = [self.start_ns]
        for table in tables:
            low = self._column_min(table, _TIME_COLUMN[table])
            if low is not None:
                firsts.append(low)
        return min(firsts)

    def _column_min(self, table: str, column: str) -> int | None:
        if not self.rows[table]:
            return None
        try:
            low = self._raw(table).select(pl.col(column).min()).collect().item()
        except OSError as exc:
            raise PathError.from_os(self.paths[table], exc) from None
        return None if low is None else int(low)

    def lane_pieces(self, window_rows: int, prepare: Prepare) -> Iterator[Piece]:
        # The spans are most of what is read: their next batch is read while this one is written.
        return pieces(read_ahead(self._batches("spans", SPAN_COLUMNS)), window_rows, str(self.dir), prepare)

    def flows(self) -> Iterator[pl.DataFrame]:
        # Stored by (from_time, g) with a stable sort (builder): the ids follow the stored order.
        last: tuple[int, int] | None = None
        for b in read_ahead(self._batches("flows", FLOW_COLUMNS)):
            b = b.filter(pl.col("to_time") >= 0)
            if not b.height:
                continue
            t, g = b["from_time"].to_numpy(), b["g"].to_numpy()
            pt, pg = (t[:-1], g[:-1]) if last is None else (np.r_[last[0], t[:-1]], np.r_[last[1], g[:-1]])
            ct, cg = (t[1:], g[1:]) if last is None else (t, g)
            if ((ct < pt) | ((ct == pt) & (cg < pg))).any():
                raise GoblueprintError(
                    f"the ingested flows in {self.dir} are not sorted by time: ingest the trace again"
                )
            last = (int(t[-1]), int(g[-1]))
            yield b

    def marks(self) -> pl.DataFrame:
        cols = ("kind", "g", "p", "m", "time", "label")
        return pl.concat(
            [_marks(b.lazy()).collect() for b in self._batches("instants", cols)] or [_EMPTY_MARKS]
        )

    def counter_names(self) -> list[int]:
        # The ingest records the names each table names (what reading it back needs): no pass.
        used = self.texts.used("counters")
        if used is not None:
            return used
        names: set[int] = set()
        for b in self._batches("counters", ("name",)):
            names.update(unique(b["name"].to_numpy()).tolist())
        return sorted(names)

    def counter_batches(self) -> Iterator[pl.DataFrame]:
        # Stored in time order (the pass writes samples as it meets them); the export checks it.
        yield from read_ahead(self._batches("counters", COUNTER_COLUMNS))
