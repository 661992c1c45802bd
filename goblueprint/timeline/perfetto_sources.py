"""What the Perfetto export reads, from a Timeline in memory or streamed from the ingested tables.

The export (``export_perfetto``) walks the spans lane by lane and the counters in time
order; both sources hand it the same frames in the same order, so a Timeline and the
tables ingested from it give the same file byte for byte.

``IngestedSource`` never holds a whole spans or counters table: it reads the Parquet
files in row-group batches (the spans are stored sorted by lane, so a lane's rows are
contiguous) and keeps at most one batch plus the lane being assembled.  The flows are
read as the columns the export needs, and the instants (a few per thread) whole.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from typing import TYPE_CHECKING, Protocol

import numpy as np
import polars as pl
import pyarrow.parquet as pq

from goblueprint.errors import GoblueprintError, PathError
from goblueprint.timeline.model import NONE, SCHEMAS, InstantKind, Timeline

if TYPE_CHECKING:
    from goblueprint.timeline.ingest import Ingested

# The span columns the export reads (not p, m, stack).
SPAN_COLUMNS = ("lane_kind", "lane_id", "start", "end", "state", "g", "label")
FLOW_COLUMNS = ("g", "from_g", "from_p", "from_time", "to_p", "to_time", "label")
COUNTER_COLUMNS = ("name", "time", "value")
BATCH_ROWS = 1 << 18  # rows per Parquet batch: a few MB of columns
_STREAMED = ("spans", "flows", "counters", "instants")


class Source(Protocol):
    start_ns: int
    strings: list[str]
    lanes: pl.DataFrame  # the lanes table (labels, groups), one row per lane

    def lane_keys(self) -> pl.DataFrame:
        """(lane_kind, lane_id) of every lane with spans, in the order ``lane_spans`` yields them."""
        ...

    def first_time(self) -> int:
        """The earliest time of any span, counter or instant, or ``start_ns`` if earlier."""
        ...

    def lane_spans(self) -> Iterator[pl.DataFrame]:
        """Each lane's spans (SPAN_COLUMNS), by start, the longer first at equal starts."""
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


def _lane_order(lane: pl.DataFrame) -> pl.DataFrame:
    """One lane's rows by start, longest first, ties in stored order (numpy's lexsort is stable)."""
    if lane.height < 2:
        return lane
    start = lane["start"].to_numpy()
    if (start[1:] > start[:-1]).all():
        return lane  # no two rows start together: already in order, no copy
    order = np.lexsort((-lane["end"].to_numpy(), start))
    return lane[order]


def _runs(kinds: np.ndarray, ids: np.ndarray) -> np.ndarray:
    """Row indices where (kind, id) changes, with 0 and len at the ends."""
    change = np.flatnonzero((kinds[1:] != kinds[:-1]) | (ids[1:] != ids[:-1])) + 1
    return np.concatenate(([0], change, [len(kinds)]))


class TimelineSource:
    """A Timeline in memory (tests, and the kernel or lab views that add lanes to one)."""

    def __init__(self, tl: Timeline) -> None:
        self.start_ns = tl.start_ns
        self.strings = tl.strings
        self.lanes = tl.lanes
        self.tl = tl
        # A stable sort by lane only: each lane keeps its stored order, as on disk.
        self.spans = tl.spans.select(SPAN_COLUMNS).sort(["lane_kind", "lane_id"], maintain_order=True)
        kinds, ids = self.spans["lane_kind"].to_numpy(), self.spans["lane_id"].to_numpy()
        self.edges = _runs(kinds, ids) if len(kinds) else np.zeros(1, np.int64)

    def lane_keys(self) -> pl.DataFrame:
        return self.spans.select("lane_kind", "lane_id")[self.edges[:-1]]

    def first_time(self) -> int:
        tl = self.tl
        firsts = [tl.start_ns] + [
            int(df[col].min())  # type: ignore[arg-type]
            for df, col in ((tl.spans, "start"), (tl.counters, "time"), (tl.instants, "time"))
            if df.height
        ]
        return min(firsts)

    def lane_spans(self) -> Iterator[pl.DataFrame]:
        for lo, hi in zip(self.edges[:-1].tolist(), self.edges[1:].tolist(), strict=True):
            yield _lane_order(self.spans[lo:hi])

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
        self.files: dict[str, pq.ParquetFile] = {}
        try:
            self.strings = pl.read_parquet(d / "strings.parquet")["s"].to_list()
            self.lanes = pl.read_parquet(d / "lanes.parquet")
            for table in _STREAMED:
                self.files[table] = pq.ParquetFile(d / f"{table}.parquet")
        except OSError as exc:
            self.close()
            raise PathError.from_os(exc.filename or d, exc) from None

    def close(self) -> None:
        for f in self.files.values():
            f.close()
        self.files.clear()

    def _batches(self, table: str, columns: tuple[str, ...]) -> Iterator[pl.DataFrame]:
        schema = {c: SCHEMAS[table][c] for c in columns}
        try:
            for batch in self.files[table].iter_batches(batch_size=self.batch_rows, columns=list(columns)):
                yield pl.DataFrame(pl.from_arrow(batch), schema=schema)
        except OSError as exc:
            raise PathError.from_os(self.dir / f"{table}.parquet", exc) from None

    def lane_keys(self) -> pl.DataFrame:
        if self._keys is None:
            kinds: list[np.ndarray] = []
            ids: list[np.ndarray] = []
            for b in self._batches("spans", ("lane_kind", "lane_id")):
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

    def first_time(self) -> int:
        firsts = [self.start_ns]
        for table, column in (("spans", "start"), ("counters", "time"), ("instants", "time")):
            low = self._column_min(table, column)
            if low is not None:
                firsts.append(low)
        return min(firsts)

    def _column_min(self, table: str, column: str) -> int | None:
        """The column's minimum from the row groups' statistics (no data read), else by a scan."""
        meta = self.files[table].metadata
        col = meta.schema.names.index(column)
        lows = []
        for r in range(meta.num_row_groups):
            st = meta.row_group(r).column(col).statistics
            if meta.row_group(r).num_rows == 0:
                continue
            if st is None or not st.has_min_max:
                lows = [int(b[column].min()) for b in self._batches(table, (column,)) if b.height]  # type: ignore[arg-type]
                break
            lows.append(int(st.min))
        return min(lows) if lows else None

    def lane_spans(self) -> Iterator[pl.DataFrame]:
        held: list[pl.DataFrame] = []  # the current lane's rows so far (it may span batches)
        key: tuple[int, int] | None = None
        for b in self._batches("spans", SPAN_COLUMNS):
            if not b.height:
                continue
            k, i = b["lane_kind"].to_numpy(), b["lane_id"].to_numpy()
            edges = _runs(k, i).tolist()
            for lo, hi in itertools.pairwise(edges):
                here = (int(k[lo]), int(i[lo]))
                if here != key and held:
                    # Let go of the pieces (and the batches they keep) before the lane is used.
                    lane = _lane_order(pl.concat(held))
                    held = []
                    yield lane
                    del lane
                key = here
                held.append(b[lo:hi])
        if held:
            lane = _lane_order(pl.concat(held))
            held = []
            yield lane

    def flows(self) -> Iterator[pl.DataFrame]:
        # Stored by (from_time, g) with a stable sort (builder): the ids follow the stored order.
        last: tuple[int, int] | None = None
        for b in self._batches("flows", FLOW_COLUMNS):
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
        names: set[int] = set()
        for b in self._batches("counters", ("name",)):
            names.update(np.unique(b["name"].to_numpy()).tolist())
        return sorted(names)

    def counter_batches(self) -> Iterator[pl.DataFrame]:
        # Stored in time order (the pass writes samples as it meets them); the export checks it.
        yield from self._batches("counters", COUNTER_COLUMNS)
