"""The levels of detail of an ingested trace, stored once, and tiles read from them on demand.

``goblueprint trace view`` answers "these lanes, this time window, this level" without
holding the trace: the levels (timeline.detail) are computed once from the ingested spans
table a chunk of lanes at a time and written as one Parquet file per level, sorted like
the spans table (lane_kind, lane_id, b0) with small row groups, so a tile reads only the
row groups of its lanes and window (predicate pushdown on the row groups' statistics).
Exact spans come from the ingested spans table the same way.

While building, the chunks of lanes (``CHUNK_SPANS`` spans; a lane with more is read a tile
of time at a time: ``detail_tiles``) are summarised ``WORKERS`` at once, each read and merged
a piece of ``PIECE_SPANS`` spans at a time, every level from one pass over a piece's spans
(``detail.level_columns``); the level files are written on a thread of their own, in the
chunks' order.  Memory is bounded by what those pieces and tiles hold, and for a tile the
row groups its lanes touch, at most ``EXACT_LIMIT`` exact spans per lane in the answer.

The HTML page of ``trace timeline`` is made from the same store (``PageTables``): its levels
are read from the level files, its exact spans from the spans table, so the page and the
server share one computation of the levels.  A Timeline held in memory (a simulation, a
trace joined with kernel or lab records) gets a temporary store of its own spans.
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from functools import cache, partial
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import polars as pl

from goblueprint.errors import GoblueprintError
from goblueprint.timeline.detail import Levels, level_columns, merge_columns, plan_levels
from goblueprint.timeline.detail_tiles import long_lane_runs
from goblueprint.timeline.ingest import Ingested
from goblueprint.timeline.model import Timeline, empty_frame
from goblueprint.timeline.read_ahead import read_ahead
from goblueprint.timeline.stored import Texts, as_timeline
from goblueprint.timeline.write_behind import WriteBehind

if TYPE_CHECKING:
    import pyarrow as pa

# Bump when the stored levels change meaning (2: runs per lane and level stored; 3: overlapping
# full ranges tie by state, not length, and long lanes are made a tile at a time).
STORE_FORMAT = 3
# Spans read at once while building the levels: a chunk's frames of every level are held until
# written. At 1_000_000 the levels of a 46 MB trace's first timeline held 70 MB more, in no
# less time.
CHUNK_SPANS = 250_000
# Chunks summarised at once.  Two gained ~0.1-0.2 s on the 30.9 MB trace's levels but held
# ~70-100 MB more at the peak (each thread's allocations stay in its own arena), and the
# first run's peak is the ingest's and the levels' together.
WORKERS = 1
PIECE_SPANS = 250_000  # spans of a chunk read and summarised at once
# A tile answers a lane with its exact spans up to this many in its window: the viewer draws
# them once at most one per two pixels is in view, and asks for twice the view.
EXACT_LIMIT = 5_000
ROW_GROUP = 65_536  # rows per row group of a level file: what a tile reads at least
LEVEL_SCHEMA = {
    "lane_kind": pl.UInt8,
    "lane_id": pl.Int64,
    "b0": pl.Int64,
    "b1": pl.Int64,
    "state": pl.UInt8,
    "fill": pl.UInt8,
}
_BUCKETS = ("b0", "b1")  # LEVEL_SCHEMA's columns of bucket numbers
RUN_COUNTS_SCHEMA = {"lane_kind": pl.UInt8, "lane_id": pl.Int64, "level": pl.UInt8, "n": pl.Int64}
SPAN_COLUMNS = ("lane_kind", "lane_id", "start", "end", "state", "g", "p", "m", "label", "stack")
_LEVEL_INPUT = ("lane_kind", "lane_id", "start", "end", "state")  # what the levels are made from


@dataclass(frozen=True)
class DetailStore:
    """The stored levels of one ingested trace."""

    path: Path
    spans_file: Path  # the spans table the levels were made from
    levels: Levels
    origin: int
    duration: int
    # What maps text to the Timeline's string ids if SPANS_FILE is the SQL table stored for the
    # spans (an ingested trace's intervals: timeline.stored), None if it is the Timeline's spans.
    texts: Texts | None = field(default=None, compare=False)

    def _spans(self) -> pl.LazyFrame:
        scan = pl.scan_parquet(self.spans_file)
        return scan if self.texts is None else as_timeline("spans", scan, self.texts)

    def level_file(self, level: int) -> Path:
        return self.path / f"level_{level}.parquet"

    def span_counts(self) -> pl.DataFrame:
        """Spans per lane (lane_kind, lane_id, n), as stored at build time."""
        return pl.read_parquet(self.path / "counts.parquet")

    def run_counts(self, level: int) -> pl.DataFrame:
        """Runs per lane at LEVEL (lane_kind, lane_id, n), lanes without runs absent."""
        return (
            pl.scan_parquet(self.path / "run_counts.parquet")
            .filter(pl.col("level") == level)
            .select("lane_kind", "lane_id", "n")
            .collect()
        )

    def lane_runs(self, lanes: pl.DataFrame, level: int) -> pl.DataFrame:
        """LEVEL's runs of LANES (lane_kind, lane_id) over the whole trace, in the file's order."""
        return pl.scan_parquet(self.level_file(level)).filter(_lanes_filter(lanes)).collect()

    def lane_spans(self, lanes: pl.DataFrame, columns: Sequence[str] = SPAN_COLUMNS) -> pl.DataFrame:
        """All spans of LANES (lane_kind, lane_id), the spans table's COLUMNS (those a view
        reads: every column costs its rows' bytes as read)."""
        return self._spans().select(columns).filter(_lanes_filter(lanes)).collect()

    def runs(self, lanes: pl.DataFrame, level: int, t_from: int, t_to: int) -> pl.DataFrame:
        """LEVEL's runs of LANES (lane_kind, lane_id) that overlap [T_FROM, T_TO) ns since the
        trace start, clipped to the buckets the window touches; sorted by lane then b0."""
        width = self.levels.width(level)
        lo, hi = t_from // width, -(-t_to // width)
        return (
            pl.scan_parquet(self.level_file(level))
            .filter(_lanes_filter(lanes) & (pl.col("b1") > lo) & (pl.col("b0") < hi))
            .with_columns(pl.col("b0").clip(lower_bound=lo), pl.col("b1").clip(upper_bound=hi))
            .collect()
        )

    def window_counts(self, lanes: pl.DataFrame, t_from: int, t_to: int) -> pl.DataFrame:
        """Spans of LANES overlapping [T_FROM, T_TO): (lane_kind, lane_id, n), lanes with none absent."""
        a, b = self.origin + t_from, self.origin + t_to
        return (
            self._spans()
            .select("lane_kind", "lane_id", "start", "end")
            .filter(_lanes_filter(lanes) & (pl.col("start") < b) & (pl.col("end") > a))
            .group_by(["lane_kind", "lane_id"])
            .agg(pl.len().alias("n"))
            .collect()
        )

    def spans(self, lanes: pl.DataFrame, t_from: int, t_to: int) -> pl.DataFrame:
        """The exact spans of LANES overlapping [T_FROM, T_TO), the spans table's columns, in its order."""
        a, b = self.origin + t_from, self.origin + t_to
        return (
            self._spans()
            .select(SPAN_COLUMNS)
            .filter(_lanes_filter(lanes) & (pl.col("start") < b) & (pl.col("end") > a))
            .collect()
        )


def _lanes_filter(lanes: pl.DataFrame) -> pl.Expr:
    """A filter for the rows of LANES (lane_kind, lane_id): per kind an id range and set, so
    row groups outside the ids' range are skipped by their statistics."""
    terms = []
    # (Kinds in the order first met, as a group_by keeping order gives them: a page asks for
    # ~50 batches of lanes, and a group_by each cost 2 ms.)
    kinds, lane_ids = lanes["lane_kind"].to_numpy(), lanes["lane_id"]
    for kind in dict.fromkeys(kinds.tolist()):
        values = lane_ids.filter(kinds == kind)
        terms.append(
            (pl.col("lane_kind") == kind)
            & pl.col("lane_id").is_between(values.min(), values.max())
            & pl.col("lane_id").is_in(values.implode())
        )
    return pl.any_horizontal(terms) if terms else pl.lit(False)


def store_root() -> Path:
    from goblueprint.toolchain import cache_dir

    return cache_dir() / "detail"


def open_store(found: Ingested) -> DetailStore:
    """The stored levels of FOUND: from the cache, or built now (once per ingested trace)."""
    from goblueprint.toolchain.cachelock import publish

    meta = found.manifest["timeline"]
    origin, duration = int(meta["start_ns"]), max(1, int(meta["end_ns"]) - int(meta["start_ns"]))
    levels = plan_levels(duration)
    key = f"{found.manifest['content']}-{found.manifest['code'][:16]}-v{STORE_FORMAT}"
    target = store_root() / key

    def sound() -> bool:
        try:
            done = json.loads((target / "levels.json").read_text())
        except (OSError, ValueError):
            return False
        return done == levels.to_json()

    # The intervals table: its lanes, times and states are the spans' (timeline.stored).
    spans = found.timeline_file("spans")
    publish(
        target,
        lambda tmp: build(spans, origin, levels, tmp),
        ready=sound,
        announce=f"building the levels of detail of {found.manifest['trace']['name']}"
        if found.manifest["trace"]["bytes"] >= 4_000_000
        else None,
        hint="later views read them",
    )
    if not sound():
        raise GoblueprintError(f"the levels of detail in {target} are incomplete")
    return DetailStore(
        path=target,
        spans_file=spans,
        levels=levels,
        origin=origin,
        duration=duration,
        texts=found.texts(),
    )


@contextmanager
def temporary_store(tl: Timeline) -> Iterator[DetailStore]:
    """A store of the spans of TL, a Timeline held in memory, removed on exit."""
    origin, duration = tl.start_ns, max(1, tl.end_ns - tl.start_ns)
    levels = plan_levels(duration)
    with tempfile.TemporaryDirectory(prefix="goblueprint-detail-") as tmp:
        spans = Path(tmp) / "spans.parquet"
        # In the ingested table's order (by lane, a lane's spans by start), so a chunk of lanes
        # reads only its row groups and a long lane can be read a tile of time at a time.
        tl.spans.sort(["lane_kind", "lane_id", "start", "end"], maintain_order=True).write_parquet(
            spans, statistics=True, row_group_size=ROW_GROUP
        )
        out = Path(tmp) / "levels"
        build(spans, origin, levels, out)
        yield DetailStore(path=out, spans_file=spans, levels=levels, origin=origin, duration=duration)


def span_counts_of(spans: Path) -> pl.DataFrame:
    """Spans per lane (lane_kind, lane_id, n) of the spans table SPANS, sorted by lane: the
    table's runs of one lane counted (a tenth of a hash group-by's time), so its rows must be
    sorted by lane, as the levels are made from them."""
    runs = (
        pl.scan_parquet(spans)
        .select(pl.struct("lane_kind", "lane_id").rle().alias("run"))
        .unnest("run")
        .unnest("value")
        .collect()
    )
    kinds, ids = runs["lane_kind"].cast(pl.Int64).to_numpy(), runs["lane_id"].to_numpy()
    if not np.all((kinds[1:] > kinds[:-1]) | ((kinds[1:] == kinds[:-1]) & (ids[1:] > ids[:-1]))):
        raise GoblueprintError(f"spans table {spans.name}: rows not sorted by lane (lane_kind, lane_id)")
    return runs.select("lane_kind", "lane_id", pl.col("len").alias("n"))


def build(spans: Path, origin: int, levels: Levels, out: Path) -> None:
    """Write the levels of the spans table SPANS (times since ORIGIN) to the new directory OUT."""
    from goblueprint.trace import kernels

    out.mkdir(parents=True)
    counts = span_counts_of(spans)
    counts.write_parquet(out / "counts.parquet")
    kernels.get()  # loaded (or built) once, here, not by two workers at once
    files = _LevelFiles(out, levels.count)
    # Runs per lane and level: what a page weighs before it reads any level.
    run_counts: list[pl.DataFrame] = []
    items = []  # (rows of SPANS, chunk of lanes), in the table's order (sorted by lane, as counts are)
    row = 0
    for chunk in _chunks(counts):
        n = int(chunk["n"].sum())
        items.append(((row, row + n), chunk))
        row += n
    long = [chunk.height == 1 and hi - lo > CHUNK_SPANS for (lo, hi), chunk in items]
    # Up to WORKERS chunks are summarised ahead on a small pool (reading, merging and the
    # compiled loops let go of the GIL), their frames written in the chunks' order.  A long
    # lane is made on this thread, its frames written as they come (they may be many).
    ahead: dict[int, Future[_ChunkLevels]] = {}
    nxt = 0
    # One plan for every piece and tile: a plan made per read parsed the file's footer each
    # time (13-23 ms on the 462.5 MB trace's 260 M spans, ~2 ms through one plan), and a
    # large trace's levels read thousands of pieces.
    scan = pl.scan_parquet(spans).select(_LEVEL_INPUT)
    try:
        with ThreadPoolExecutor(WORKERS, thread_name_prefix="goblueprint-levels") as pool:
            try:
                for i, (rows, chunk) in enumerate(items):
                    # (WORKERS at once in all: a long lane made here counts as one.)
                    while nxt < len(items) and len(ahead) < WORKERS - long[i]:
                        if not long[nxt]:
                            ahead[nxt] = pool.submit(_chunk_levels, scan, *items[nxt], origin, levels)
                        nxt += 1
                    if long[i]:
                        run_counts += _long_lane_levels(scan, rows, chunk, origin, levels, files.write)
                        continue
                    frames, counted = ahead.pop(i).result()
                    for k, table in frames:
                        files.write(k, table)
                    run_counts += counted
            finally:
                for job in ahead.values():
                    job.cancel()
    finally:
        files.close()
    by_level = pl.concat(run_counts) if run_counts else pl.DataFrame(schema=RUN_COUNTS_SCHEMA)
    by_level.cast(RUN_COUNTS_SCHEMA).sort(["level", "lane_kind", "lane_id"]).write_parquet(
        out / "run_counts.parquet", statistics=True
    )
    (out / "levels.json").write_text(json.dumps(levels.to_json(), sort_keys=True))


# What a chunk of lanes adds: its frames (level, table) in the order written, and its runs per
# lane and level (RUN_COUNTS_SCHEMA).
_ChunkLevels = tuple[list[tuple[int, "pa.Table"]], list[pl.DataFrame]]


def _long_lane_levels(
    spans: pl.LazyFrame,
    rows: tuple[int, int],
    chunk: pl.DataFrame,
    origin: int,
    levels: Levels,
    write: Callable[[int, pa.Table], None],
) -> list[pl.DataFrame]:
    """The levels of CHUNK's one long lane, whose spans are ROWS [lo, hi) of SPANS, handed to
    WRITE(level, table) a row group at a time; its runs per level (RUN_COUNTS_SCHEMA)."""
    kind, lane_id = int(chunk["lane_kind"][0]), int(chunk["lane_id"][0])
    counted = long_lane_runs(
        spans,
        rows,
        (kind, lane_id),
        origin,
        levels,
        lambda k, df: write(k, df.cast(LEVEL_SCHEMA).to_arrow()),
        ROW_GROUP,
    )
    level = [k for k, c in enumerate(counted) if c]
    return [
        pl.DataFrame(
            {
                "lane_kind": [kind] * len(level),
                "lane_id": [lane_id] * len(level),
                "level": level,
                "n": [counted[k] for k in level],
            },
            schema=RUN_COUNTS_SCHEMA,
        )
    ]


def _chunk_levels(
    spans: pl.LazyFrame, rows: tuple[int, int], chunk: pl.DataFrame, origin: int, levels: Levels
) -> _ChunkLevels:
    """The levels of CHUNK's lanes (not one long lane), whose spans are ROWS [lo, hi) of SPANS."""
    frames: list[tuple[int, pa.Table]] = []
    lo, _hi = rows
    run_counts = []
    kinds, ids = chunk["lane_kind"].to_numpy(), chunk["lane_id"].to_numpy()
    # Read and summarised a piece of lanes at a time (what is held: a piece's spans), each
    # level's runs joined for the chunk: its rows are written as one frame, as they always were.
    pieces: list[list[list[np.ndarray]]] = []

    def reads() -> Iterator[tuple[int, int, tuple[int, pl.DataFrame]]]:
        first, row = 0, lo
        for end, piece_rows in _pieces(chunk["n"].to_numpy()):
            yield first, end, _piece_rows(spans, (row, row + piece_rows))
            first, row = end, row + piece_rows

    # The next piece read (polars lets go of the GIL) while this one is merged and summarised.
    for first, end, part in read_ahead(reads()):
        merged = _chunk_spans(part, chunk[first:end], origin)
        got = _level_runs(merged, levels)
        for cols in got:
            cols[0] = cols[0] + np.uint32(first)  # the lane's index in the chunk
        pieces.append(got)
    joined = (
        [[np.concatenate(c) for c in zip(*level, strict=True)] for level in zip(*pieces, strict=True)]
        if len(pieces) > 1
        else pieces[0]
    )
    counted: list[list[np.ndarray]] = []  # per level: lanes with runs, the level, their runs
    for k, (lane, *rest) in enumerate(joined):
        frames.append((k, _level_table(kinds[lane], ids[lane], *rest)))
        per_lane = np.bincount(lane, minlength=chunk.height)
        has = np.flatnonzero(per_lane)
        counted.append([has, np.full(len(has), k, np.uint8), per_lane[has].astype(np.int64)])
    # One frame for the chunk's levels (a frame each cost ~0.1 s of the 30.6 MB trace's levels).
    has, level, n = (np.concatenate(c) for c in zip(*counted, strict=True))
    run_counts.append(
        pl.DataFrame(
            {"lane_kind": kinds[has], "lane_id": ids[has], "level": level, "n": n}, schema=RUN_COUNTS_SCHEMA
        )
    )
    return frames, run_counts


@cache
def _level_arrow() -> pa.Schema:
    import pyarrow as pa

    return pa.schema(
        [(name, pa.uint8() if t == pl.UInt8 else pa.int64()) for name, t in LEVEL_SCHEMA.items()]
    )


def _level_table(*cols: np.ndarray) -> pa.Table:
    """A level's rows (``LEVEL_SCHEMA``'s columns) as the Arrow table written."""
    import pyarrow as pa

    return pa.Table.from_arrays([pa.array(c) for c in cols], schema=_level_arrow())


class _LevelFiles:
    """The level files being written, a frame at a time in the order given, by one thread of
    their own (WriteBehind): pyarrow encodes and compresses without the GIL while the next
    chunk is read and summarised.  At most a few frames wait, so what is held stays a chunk's
    runs.

    The buckets (b0, b1) are delta-coded, as they grow along a lane, and get no dictionary
    (nearly every run's are its own): the dictionary the writer tried for them first was
    half its time (~0.15 CPU s of the 30.9 MB trace's first timeline), the files 3.5 times
    their size.  The other columns hold few values: a dictionary each."""

    def __init__(self, out: Path, count: int) -> None:
        import pyarrow.parquet as pq

        self._writers = [
            pq.ParquetWriter(
                out / f"level_{k}.parquet",
                _level_arrow(),
                use_dictionary=[c for c in LEVEL_SCHEMA if c not in _BUCKETS],
                column_encoding=dict.fromkeys(_BUCKETS, "DELTA_BINARY_PACKED"),
            )
            for k in range(count)
        ]
        self._behind = WriteBehind(ahead=2 * count)

    def write(self, level: int, table: pa.Table) -> None:
        self._behind.submit(partial(self._writers[level].write_table, row_group_size=ROW_GROUP), table)

    def close(self) -> None:
        try:
            self._behind.close()
        finally:
            for writer in self._writers:
                writer.close()


def _pieces(n: np.ndarray) -> list[tuple[int, int]]:
    """The lanes of a chunk (N spans each) cut into consecutive pieces of at most PIECE_SPANS
    spans (a lane with more is a piece alone): each piece's end (a lane index) and spans."""
    out: list[tuple[int, int]] = []
    rows = 0
    for k, m in enumerate(n.tolist()):
        if rows and rows + m > PIECE_SPANS:
            out.append((k, rows))
            rows = 0
        rows += m
    out.append((len(n), rows))
    return out


def _piece_rows(spans: pl.LazyFrame, rows: tuple[int, int]) -> tuple[int, pl.DataFrame]:
    """ROWS [lo, hi) of SPANS (a scan of the spans table's _LEVEL_INPUT); with lo."""
    lo, hi = rows
    return lo, spans.slice(lo, hi - lo).collect()


def _chunk_spans(read: tuple[int, pl.DataFrame], chunk: pl.DataFrame, origin: int) -> list[np.ndarray]:
    """The merged spans (lane, start, end, state: merge_overlaps' columns, times since ORIGIN)
    of READ (``_piece_rows``), the spans of CHUNK's lanes (its rows give the lane: its index)."""
    lo, part = read
    per = chunk["n"].to_numpy()
    hi = lo + int(per.sum())
    if not (
        part.height == hi - lo
        and np.array_equal(part["lane_kind"].to_numpy(), np.repeat(chunk["lane_kind"].to_numpy(), per))
        and np.array_equal(part["lane_id"].to_numpy(), np.repeat(chunk["lane_id"].to_numpy(), per))
    ):
        raise GoblueprintError(
            f"spans table: rows {lo}..{hi} are not those of their lanes (not sorted by lane)"
        )
    # The table's order kept (each lane's spans by start): merging them then takes only a
    # counting sort by state.
    return merge_columns(
        np.repeat(np.arange(len(per), dtype=np.uint32), per),
        part["start"].cast(pl.Int64).to_numpy() - origin,
        part["end"].cast(pl.Int64).to_numpy() - origin,
        part["state"].cast(pl.UInt8).to_numpy(),
    )


def _level_runs(merged: list[np.ndarray], levels: Levels) -> list[list[np.ndarray]]:
    """Per level the runs' columns of MERGED (merge_columns' output), as runs() makes them:
    starts before the origin clipped to it, spans left empty dropped."""
    lane, start, end, state = merged
    start = np.maximum(start, 0)
    keep = end > start
    cols = [lane[keep], start[keep], end[keep], state[keep]]
    if len(cols[2]):
        last = int(cols[2].max()) - 1
        for k in range(levels.count):
            if last // levels.width(k) >= 2**31:
                raise ValueError(f"bucket width {levels.width(k)}: bucket indexes beyond 2**31")
    return level_columns(cols, levels.width0, levels.count)


def _chunks(counts: pl.DataFrame) -> list[pl.DataFrame]:
    """Consecutive lanes (in the spans table's order) cut where the running count of spans
    crosses a multiple of CHUNK_SPANS: a chunk holds under 2 * CHUNK_SPANS spans; a lane with
    more than CHUNK_SPANS is a chunk alone (made a tile of time at a time: detail_tiles)."""
    n = counts["n"].cast(pl.Int64)
    long = n > CHUNK_SPANS
    total = n.cum_sum() - n
    # A long lane, and the lane after it, each begin a chunk of their own.
    starts = long | long.shift(1, fill_value=False)
    group = pl.DataFrame({"part": total // CHUNK_SPANS, "alone": starts.cum_sum()}).select(
        pl.struct("part", "alone").rle_id()
    )["part"]
    return [part for _, part in counts.with_columns(group.alias("_c")).group_by("_c", maintain_order=True)]


@dataclass(frozen=True)
class PageTables:
    """What the timeline page is made of, none of it holding the spans or flows of the trace.

    ``light``: a Timeline without spans, flows, counters or instants (strings, lanes, stack
    frames: small tables); ``counters``, ``flows`` and ``instants`` are read lazily, so that
    only what the page keeps of them is ever collected; the spans are in ``store``.
    ``thinned``: the counters as the page keeps them, if made already (``ingested_tables``).
    """

    light: Timeline
    store: DetailStore
    counters: pl.LazyFrame
    flows: pl.LazyFrame
    instants: pl.LazyFrame
    thinned: pl.DataFrame | None = field(default=None, compare=False)


# What thins the counters for a page: (counters, trace start, duration) -> the samples kept.
Thin = Callable[[pl.LazyFrame, int, int], pl.DataFrame]


def ingested_tables(found: Ingested, thin: Thin | None = None) -> PageTables:
    """The page tables of an ingested trace (its store built on first use).  THIN, if given,
    thins its counters on a thread of its own while the store is read or built (it reads
    only the counters table: the levels' loops let go of the GIL, and a core is often free)."""
    light = found.timeline(tables=("lanes", "stack_frames"))
    texts = found.texts(light.strings)
    counters = found.timeline_scan("counters", texts)
    with ThreadPoolExecutor(1, thread_name_prefix="goblueprint-counters") as pool:
        thinned = (
            pool.submit(thin, counters, light.start_ns, max(1, light.end_ns - light.start_ns))
            if thin is not None
            else None
        )
        store = open_store(found)
        return PageTables(
            light=light,
            store=store,
            counters=counters,
            flows=found.timeline_scan("flows", texts),
            instants=found.timeline_scan("instants"),
            thinned=None if thinned is None else thinned.result(),
        )


@contextmanager
def memory_tables(tl: Timeline) -> Iterator[PageTables]:
    """The page tables of TL, a Timeline held in memory (its spans in a temporary store)."""
    with temporary_store(tl) as store:
        held = ("spans", "flows", "counters", "instants")
        light = replace(tl, **{name: empty_frame(name) for name in held})
        yield PageTables(
            light=light,
            store=store,
            counters=tl.counters.lazy(),
            flows=tl.flows.lazy(),
            instants=tl.instants.lazy(),
        )
