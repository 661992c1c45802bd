"""Event columns -> Timeline: the G/P/M state machines.

One pass over the events, in reader order.  Each goroutine, proc and thread
has a current state and the time it entered it; a transition closes that span
and opens the next.  Semantics follow Go's own consumers (cmd/trace gstate.go,
procgen.go, threadgen.go and internal/trace/summary.go):

* a goroutine first seen as Undetermined has been in its state since the last
  Sync (as the summarizer counts it), a created one since its creation;
* the start cause of a goroutine (unblock, go statement, blocked syscall exit,
  preemption) becomes a flow that ends where and when it next starts running;
* a P is "stopped" while it is idle inside a stop-the-world range;
* ranges (GC, STW, mark assist, sweep) arriving as RangeActive at a generation
  start continue the span already open, they do not restart it.

Spans still open at the end are closed at the time of the last event.

The builder is a columnar consumer of the pass (``columns(cols, interner)``, see
goblueprint.timeline.source): per chunk it maps goroutine, proc, thread and task
ids to dense slots and packs the columns the loop reads into one matrix; the
loop itself is builder_kernel.build_step, compiled.  finish() turns its tables
into the Timeline: the pass's string and stack ids become the Timeline's own
(only those it uses, strings[0] == "", stacks numbered from 1).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import nullcontext
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

from goblueprint.arrays import unique
from goblueprint.timeline import builder_codes as K
from goblueprint.timeline._api import (
    K_TASK_BEGIN,
    K_TASK_END,
    R_GOROUTINE,
    R_PROC,
    is_system_goroutine,
)
from goblueprint.timeline.heap import give_back
from goblueprint.timeline.model import (
    FLOWS_SCHEMA,
    INSTANTS_SCHEMA,
    NONE,
    SPANS_SCHEMA,
    LaneKind,
    State,
    Timeline,
    empty_frame,
    frame,
)
from goblueprint.timeline.slots import Slots
from goblueprint.timeline.spill import ColumnSpill, Seen
from goblueprint.timeline.spill_sort import sorted_pieces
from goblueprint.timeline.stored import ROW_GROUP
from goblueprint.trace import kernels

L_G = int(LaneKind.G)
L_GRANGE = int(LaneKind.GRANGE)
L_M = int(LaneKind.M)
L_P = int(LaneKind.P)
L_GC = int(LaneKind.GC)
L_STW = int(LaneKind.STW)
L_PRANGE = int(LaneKind.PRANGE)
L_REGION = int(LaneKind.REGION)

GOMAXPROCS_METRIC = "/sched/gomaxprocs:threads"
# Range names with a state of their own; other ranges are State.RANGE.
_RANGE_STATE = {
    "GC concurrent mark phase": int(State.GC_CYCLE),
    "GC mark assist": int(State.MARK_ASSIST),
    "GC incremental sweep": int(State.SWEEP),
}
# The strings the builder makes up (builder_kernel.SYN_*), by code.
_SYNTHETIC = {
    K.SYN_GO: "go",
    K.SYN_EXIT_SYSCALL: "exit blocked syscall",
    K.SYN_COUNT: "goroutines running",
    K.SYN_COUNT - 1: "goroutines runnable",
    K.SYN_COUNT - 2: "goroutines in syscall",
    K.SYN_ALIVE: "goroutines",
}


def _grown(a: np.ndarray, rows: int, fill: np.ndarray | int = 0) -> np.ndarray:
    """A copy of A with at least ROWS rows (capacity doubled until it fits), new rows = FILL."""
    if len(a) >= rows:
        return a
    cap = max(len(a), 1)
    while cap < rows:
        cap *= 2
    out = np.empty((cap, *a.shape[1:]), a.dtype)
    out[: len(a)] = a
    out[len(a) :] = fill
    return out


def _table(width: int, fill: dict[int, int] | None = None, rows: int = 64) -> tuple[np.ndarray, np.ndarray]:
    """An empty state table and the row a new slot starts as."""
    blank = np.zeros(width, np.int64)
    for col, v in (fill or {}).items():
        blank[col] = v
    return np.tile(blank, (rows, 1)), blank


# The Timeline's spans are in this order (stable: equal keys keep the order they were made in).
_SPAN_ORDER = ("lane_kind", "lane_id", "start", "end")
# Rows an output table of the loop holds before they are moved to typed column chunks.
_ROWS = 1 << 16
# Spilled spans are handed on in pieces of lanes of at most this many rows (a lane kind can be
# a third of a large trace's spans: its sort held at once was the ingest's peak); the sink
# cuts its row groups where such a piece ends. As many rows as a row group
# (tables._SPAN_ROW_GROUP): at 1 << 22 (and sorts of 1 << 20) the spans' stage of a 46 MB
# trace's ingest held 150 MB more, in no less time.
_SPAN_PIECE = 1 << 18
# ... each sorted and handed on in smaller pieces of lanes of at most this many rows (what a
# sort holds: the piece's columns, its keys and order, the sorted copy), the sink told which
# piece ends one of _SPAN_PIECE rows: the stored files are the same whatever this is.
_SPAN_SORT = 1 << 18
# Codes mapped to the Timeline's string ids at a time (finish's text_ids).
_ID_WINDOW = 1 << 20
_I32, _I64, _U8, _F64 = pl.Int32, pl.Int64, pl.UInt8, pl.Float64
_NUMPY = {pl.UInt8: np.uint8, pl.Int32: np.int32, pl.Int64: np.int64, pl.Float64: np.float64}


class _Out:
    """An output table of the loop: a fixed int64 buffer it fills (and a float64 column beside,
    for counter values), moved into typed polars column chunks whenever it is full.

    What is kept costs its column types (string and stack codes fit Int32), not 8 bytes a
    field plus a doubled capacity; and it lives in polars' allocator from the start, so the
    memory finish() frees chunk by chunk is what the finished table's columns reuse."""

    def __init__(self, dtypes: tuple[Any, ...], floats: bool = False) -> None:
        self.dtypes = dtypes
        self.buf = np.zeros((_ROWS, len(dtypes)), np.int64)
        self.floats = np.zeros(_ROWS if floats else 0, np.float64)
        self.chunks: list[list[pl.Series]] = [[] for _ in range(len(dtypes) + floats)]

    def room(self, used: int, need: int) -> int:
        """Rows used after making room for NEED more (0 if the rows were moved out)."""
        if used + need <= len(self.buf):
            return used
        self.flush(used)
        if need > len(self.buf):
            self.buf = _grown(self.buf, need)
            if len(self.floats):
                self.floats = _grown(self.floats, need)
        return 0

    def flush(self, used: int) -> None:
        self.add(self.buf[:used], self.floats[:used] if len(self.floats) else None)

    def last(self, used: int) -> None:
        """The loop's last rows moved out, and its buffer let go of: finish() takes the table
        from the chunks (the four tables' buffers held ~17 MB through every stage after)."""
        self.flush(used)
        self.buf = np.zeros((0, self.buf.shape[1]), np.int64)
        self.floats = np.zeros(0, np.float64)

    def add(self, rows: np.ndarray, floats: np.ndarray | None = None) -> None:
        """ROWS (a row per entry, as the loop writes them) and their FLOATS, at the table's end."""
        # Transposed once: each field is then a contiguous column, where taking, casting,
        # sorting and writing the columns of the row-major buffer one at a time (strided)
        # cost the builder's thread more than its compiled loop.
        self.add_columns(np.ascontiguousarray(rows.T), floats)

    def add_columns(self, cols: np.ndarray, floats: np.ndarray | None) -> None:
        """The entries as COLS, a contiguous column per field (and FLOATS)."""
        for k, dtype in enumerate(self.dtypes):
            self.chunks[k].append(pl.Series(cols[k].astype(_NUMPY[dtype], copy=False)))
        if floats is not None:
            self.chunks[-1].append(pl.Series(floats.copy()))

    def take(self, k: int) -> pl.Series:
        """Column K (the float column is -1) of every row, let go of by the table."""
        parts, self.chunks[k] = self.chunks[k], []
        return pl.concat(parts, rechunk=False) if parts else pl.Series([], dtype=self.dtypes[k])


class _SpilledOut(_Out):
    """An output table of the loop kept on disk during the pass (a spilling builder's counters):
    raw column files (spill.ColumnSpill), read back column by column when finish() takes it,
    after the spans are sorted and handed on, so those pieces are not sorted beside it."""

    def __init__(
        self,
        dtypes: tuple[Any, ...],
        spill: Path,
        name: str,
        floats: bool = False,
        coded: tuple[int, ...] = (),
    ) -> None:
        """CODED: the string and stack code columns, of which only which codes occurred is kept
        in memory (what the Timeline's string and stack tables need), not the columns."""
        super().__init__(dtypes, floats)
        types = {f"c{k}": _NUMPY[t] for k, t in enumerate(dtypes)}
        if floats:
            types["c-1"] = np.float64
        self.file = ColumnSpill(spill, name, types)
        self._taken: set[int] = set()
        self.codes = {k: Seen() for k in coded}

    def add_columns(self, cols: np.ndarray, floats: np.ndarray | None) -> None:
        if not cols.shape[1]:
            return
        for k, seen in self.codes.items():
            seen.add(cols[k])
        named = {f"c{k}": cols[k] for k in range(len(self.dtypes))}
        if floats is not None:
            named["c-1"] = floats
        self.file.append(named)

    def pieces(self, text_ids: Callable[[np.ndarray], np.ndarray], rows: int) -> Iterator[pl.DataFrame]:
        """The counters (a spilled counters table), their names the Timeline's ids (TEXT_IDS of
        the codes), in pieces of ROWS rows read one at a time; the files removed at the end."""
        try:
            for lo, hi in self.file.windows(rows):
                yield frame(
                    "counters",
                    {"name": pl.Series("name", text_ids(self.file.read("c0", lo, hi)), pl.UInt32),
                     "time": self.file.read("c1", lo, hi), "value": self.file.read("c-1", lo, hi)},
                )  # fmt: skip
        finally:
            self.file.remove()

    def take(self, k: int) -> pl.Series:
        """Column K (the float column is -1) of every row; the files go once every column is taken."""
        values = self.file.read(f"c{k}")
        self._taken.add(k)
        if len(self._taken) == len(self.chunks):
            self.file.remove()
        return pl.Series("", values)


# A spilled lane kind's run table: each chunk's lanes, in order, and the rows each one's fill.
_RUNS = {"lane": np.int64, "start": np.int64, "end": np.int64}


def _with_migrated(cols: dict[str, Any]) -> pl.DataFrame:
    """The flows table of its other columns: a flow migrated when it starts on another P."""
    from_p, to_p = pl.Series(cols["from_p"]), pl.Series(cols["to_p"])
    return frame("flows", {**cols, "migrated": (from_p != NONE) & (to_p != NONE) & (from_p != to_p)})


# Flows a piece of the sorted table has: its rows gathered from the spill a column at a time
# (~70 bytes a flow: at 1 << 22 the piece was a 46 MB trace's whole 3.4 M flows, 230 MB; at
# 1 << 18 the pieces, carried into row groups of as many rows, held 40 MB more than at this).
_FLOW_PIECE = 1 << 16
# A piece whose rows lie within this many times its rows of the files takes them from a mapping
# of that stretch (what is mapped at a time stays about the piece's column); else it gathers.
_FLOW_STRETCH = 2


def _flow_pieces(
    spill: ColumnSpill,
    index: dict[str, int],
    named: dict[str, Callable[[np.ndarray], np.ndarray]],
) -> Iterator[pl.DataFrame]:
    """The flows of SPILL (a spilled flows table, columns c<INDEX[name]>) sorted by (from_time,
    g), stably, in pieces of about _FLOW_PIECE rows (spill_sort: never the whole order or its
    keys); NAMED maps the codes of its string and stack columns to the Timeline's ids.
    Flows are made when their goroutine starts, so they lie near their sorted place: a
    piece's rows are gathered from a short stretch of each column file.  The files go at the
    end."""
    try:
        for at in sorted_pieces(spill, f"c{index['from_time']}", f"c{index['g']}", _FLOW_PIECE):
            first, last = int(at.min()), int(at.max()) + 1
            if last - first <= _FLOW_STRETCH * len(at):
                # The piece's rows lie in a stretch of the files not much longer than the piece
                # (the whole table when it is one piece): each column's stretch mapped and
                # taken from in the piece's order, no sort of the rows to read them ascending.
                def column(col: str, at: np.ndarray = at, first: int = first, last: int = last) -> np.ndarray:
                    return np.take(spill.read(col, first, last), at - first)
            else:
                ascending = np.argsort(at, kind="stable")
                rows = at[ascending]

                def column(
                    col: str, ascending: np.ndarray = ascending, rows: np.ndarray = rows
                ) -> np.ndarray:
                    values = np.empty(len(rows), spill.dtypes[col])
                    values[ascending] = spill.gather(col, rows)
                    return values

            cols: dict[str, Any] = {}
            for name, k in index.items():
                values = column(f"c{k}")
                cols[name] = pl.Series(name, named[name](values), pl.UInt32) if name in named else values
            yield _with_migrated(cols)
    finally:
        spill.remove()


class _SpilledSpans(_Out):
    """The spans table of a builder that keeps them on disk, not in memory (``spill``).

    Each chunk of rows is split by lane kind, each kind's rows grouped by lane id (a stable
    sort of the chunk: a lane's rows keep the order they were made in) and appended to raw
    column files of its own (spill.ColumnSpill), with where each lane's rows lie (a run
    table: lane id, first and end row), so finish() sorts and hands out one lane kind at a
    time, and a large kind in pieces of lane ids (``take_kind``) read as the row ranges of
    their lanes; of the label and stack codes only which occurred is kept in memory, what
    the Timeline's string and stack tables need.
    """

    def __init__(self, dtypes: tuple[Any, ...], spill: Path) -> None:
        super().__init__(dtypes)
        self.spill = spill
        self.types = {name: _NUMPY[t] for name, t in zip(SPANS_SCHEMA, dtypes, strict=True)}
        self.files: dict[int, ColumnSpill] = {}
        self.runs: dict[int, ColumnSpill] = {}  # per kind: each chunk's lanes and their rows
        self.codes = {8: Seen(), 9: Seen()}  # label, stack
        self._cols: list[np.ndarray] = [np.empty(0, t) for t in self.types.values()]
        self._runs: list[np.ndarray] = []

    def let_go(self) -> None:
        """No chunk comes now: the columns kept from chunk to chunk are let go of."""
        self._cols = [np.empty(0, t) for t in self.types.values()]
        self._runs = []

    def add(self, rows: np.ndarray, floats: np.ndarray | None = None) -> None:
        n = len(rows)
        if not n:
            return
        # Grouped by kind and lane, typed, in one compiled pass (builder_kernel.group_spans)
        # into columns kept from chunk to chunk: no array of the chunk's size made per chunk.
        if len(self._cols[0]) < n:
            cap = max(n, _ROWS)
            self._cols = [np.empty(cap, t) for t in self.types.values()]
            self._runs = [np.empty(cap, np.int64) for _ in range(3)]
        runs = kernels.get().group_spans(np.ascontiguousarray(rows, np.int64), *self._cols, *self._runs)
        cols = [c[:n] for c in self._cols]
        for k, seen in self.codes.items():
            seen.add(cols[k])
        run_kind, run_lane, run_lo = (r[:runs] for r in self._runs)
        run_end = np.append(run_lo[1:], n)
        firsts = np.flatnonzero(np.append(True, run_kind[1:] != run_kind[:-1])).tolist()
        for a, b in itertools.pairwise([*firsts, runs]):
            kind = int(run_kind[a])
            lo, hi = int(run_lo[a]), int(run_end[b - 1])
            if kind not in self.files:
                self.files[kind] = ColumnSpill(self.spill, f"spans-{kind:03d}", self.types)
                self.runs[kind] = ColumnSpill(self.spill, f"runs-{kind:03d}", _RUNS)
            spill = self.files[kind]
            base = spill.rows - lo
            spill.append({name: cols[k][lo:hi] for k, name in enumerate(self.types)})
            self.runs[kind].append(
                {"lane": run_lane[a:b], "start": run_lo[a:b] + base, "end": run_end[a:b] + base}
            )

    def kinds(self) -> list[int]:
        return sorted(self.files)

    def take_kind(self, kind: int, rows: int, sort: int | None = None) -> Iterator[tuple[pl.DataFrame, bool]]:
        """The spans of one lane kind in the Timeline's order, in pieces of at most ROWS rows
        (or one lane) by lane id range in order, each cut in pieces of SORT rows (or one lane)
        sorted one at a time; their files removed.  Each comes with whether it ends a piece of
        ROWS rows.

        A piece is read as the row ranges its lanes fill in each chunk (the run table): the
        kind's files are read once, a piece's rows only, in the order they were made."""
        spill, runs = self.files.pop(kind), self.runs.pop(kind)
        sort = rows if sort is None else min(sort, rows)
        try:
            if spill.rows <= sort:
                yield self._sorted(spill, None), True
                return
            lane, start, end = (runs.read(name) for name in _RUNS)
            runs.remove()
            ids, counts = _lane_counts([(lane, end - start)])
            big = _piece_ends(ids, counts, rows)
            last = big if sort >= rows else np.union1d(big, _piece_ends(ids, counts, sort))
            if len(last) <= 1:
                yield self._sorted(spill, None), True
                return
            piece = np.searchsorted(last, lane, "left")
            order = np.argsort(piece, kind="stable")  # each piece's runs in row order
            bounds = np.searchsorted(piece[order], np.arange(len(last) + 1), "left").tolist()
            del piece
            for p, cut in enumerate(np.isin(last, big).tolist()):
                at = order[bounds[p] : bounds[p + 1]]
                ranges = start[at], end[at]
                subs = [ranges]
                lanes = lane[at]
                big_lane = lanes.min() == lanes.max() and int((ranges[1] - ranges[0]).sum()) > sort
                if big_lane and _in_order(spill, ranges, sort):
                    # One lane of more than SORT rows, made in order: its rows in pieces of
                    # SORT are each sorted already and follow one another.
                    subs = _ranges_cut(*ranges, sort)
                for k, sub in enumerate(subs):
                    part = self._sorted(spill, sub)
                    yield part, cut and k == len(subs) - 1
                    del part
        finally:
            spill.remove()
            runs.remove()

    def _sorted(self, spill: ColumnSpill, ranges: tuple[np.ndarray, np.ndarray] | None) -> pl.DataFrame:
        """The spans of SPILL in the row RANGES (starts, ends; ascending, apart; None: every
        row) in the Timeline's order (stable: a lane's equal keys keep the order they were
        made in)."""

        def column(name: str) -> np.ndarray:
            return spill.read(name) if ranges is None else spill.read_ranges(name, *ranges)

        keys = {name: column(name) for name in _SPAN_ORDER}
        order = _span_order(*keys.values())
        # Rows read by ranges are most often in order already (a lane of many rows cut in
        # sort pieces, a piece of lanes made in order: 12 M of a 30 MB trace's 14 M spans):
        # their columns, fresh arrays read for this piece alone, are taken as they are, where
        # gathering them again through an identity order was half of finish()'s sorting.
        as_read = ranges is not None and _is_identity(order)
        cols = []
        for name in self.types:
            values = keys.pop(name) if name in keys else column(name)
            # np.take, not values[order]: numpy's fancy indexing gathers int64 columns at a
            # third of take's speed, and every span is gathered here once.
            cols.append(pl.Series(name, values if as_read else np.take(values, order)))
            del values  # one unsorted column at a time beside the sorted ones
        return pl.DataFrame(cols)


def _is_identity(order: np.ndarray) -> bool:
    """Whether ORDER (a permutation of its positions) leaves every row where it is."""
    n = len(order)
    # A permutation whose every step is +1 from 0 is the identity; the ends first, as most
    # orders that are not end there.
    return n == 0 or (int(order[0]) == 0 and int(order[-1]) == n - 1 and bool((np.diff(order) == 1).all()))


def _in_order(spill: ColumnSpill, ranges: tuple[np.ndarray, np.ndarray], rows: int) -> bool:
    """Whether SPILL's rows in RANGES (one lane's) are in (start, end) order as they lie, read
    ROWS rows at a time (a lane can be most of a large trace's spans)."""
    start = end = np.zeros(0, np.int64)
    for sub in _ranges_cut(*ranges, rows):
        # Each stretch with the row before it: the order across their edge is checked too.
        start = np.concatenate([start[-1:], spill.read_ranges("start", *sub)])
        end = np.concatenate([end[-1:], spill.read_ranges("end", *sub)])
        before = start[1:] < start[:-1]
        before |= (start[1:] == start[:-1]) & (end[1:] < end[:-1])
        if before.any():
            return False
    return True


def _ranges_cut(starts: np.ndarray, ends: np.ndarray, rows: int) -> list[tuple[np.ndarray, np.ndarray]]:
    """The row ranges STARTS..ENDS (ascending) cut into ranges of ROWS rows in all, in order."""
    sizes = ends - starts
    done = np.cumsum(sizes)  # rows up to the end of each range
    out = []
    for lo in range(0, int(done[-1]) if len(done) else 0, rows):
        hi = min(lo + rows, int(done[-1]))
        a = int(np.searchsorted(done, lo, "right"))  # the range holding row LO
        b = int(np.searchsorted(done - sizes, hi, "left"))  # the ranges starting before row HI
        s, e = starts[a:b].copy(), ends[a:b].copy()
        s[0] += lo - int(done[a] - sizes[a])
        e[-1] -= int(done[b - 1]) - hi
        out.append((s, e))
    return out


def _piece_ends(ids: np.ndarray, counts: np.ndarray, rows: int) -> np.ndarray:
    """The last lane id of each piece of lanes IDS (sorted, COUNTS rows each), in order,
    holding at most ROWS rows unless a lane alone has more."""
    ends = np.cumsum(counts)
    last: list[int] = []
    i, done = 0, 0
    while i < len(ids):
        j = max(int(np.searchsorted(ends, done + rows, "right")), i + 1)  # lanes i..j-1
        last.append(int(ids[j - 1]))
        i, done = j, int(ends[j - 1])
    return np.array(last, np.int64)


def _lane_counts(parts: list[tuple[np.ndarray, np.ndarray]]) -> tuple[np.ndarray, np.ndarray]:
    """The distinct lane ids of PARTS ((ids, rows of each) pairs), sorted, and their rows."""
    ids, inv = np.unique(np.concatenate([p[0] for p in parts]), return_inverse=True)
    return ids, np.bincount(inv.reshape(-1), np.concatenate([p[1] for p in parts]), len(ids)).astype(np.int64)


class TimelineBuilder:
    """Columnar consumer of a pass (``columns(cols, interner)``); ``finish(end)`` gives the Timeline."""

    def __init__(self, spill: Path | None = None) -> None:
        """SPILL (a directory) keeps the spans on disk during the pass: finish() then hands them
        to a sink one lane kind at a time instead of holding them all in the Timeline."""
        self._interner: Any = None
        self._g, self._p, self._m = Slots(keep_none=True), Slots(keep_none=True), Slots(keep_none=True)
        self._t = Slots()  # a task id of -1 (NoTask, truncated) is an id like any other here
        self.G, self._g_blank = _table(K.G_WIDTH, {K.G_STATE: -1, K.G_RTOP: -1})
        self.P, self._p_blank = _table(K.P_WIDTH, {K.P_STATE: -1, K.P_OWNER: -1})
        self.M, self._m_blank = _table(K.M_WIDTH)
        self.T, self._t_blank = _table(K.T_WIDTH)
        self.RG = np.zeros((64, K.RG_WIDTH), np.int64)
        self.RA = np.zeros((16, K.RA_WIDTH), np.int64)
        self.SC = np.zeros(K.SC_WIDTH, np.int64)
        self.SC[K.SC_RFREE] = -1
        self.SC[K.SC_RTOP_NONE] = -1
        # Output tables, SC[SC_N*] rows used in each (string and stack columns hold pass ids / codes).
        span_types = (_U8, _I64, _I64, _I64, _U8, _I64, _I64, _I64, _I32, _I32)
        self.spans = _Out(span_types) if spill is None else _SpilledSpans(span_types, spill)
        # The counters and the flows are the largest tables the pass holds besides the spans
        # (a few hundred MB on a 30 MB trace, held through the rest of the pass and the
        # writing of the events and spans after it): a spilling builder keeps them on disk too.
        flows = (_U8, _I64, _I64, _I64, _I64, _I64, _I64, _I64, _I32, _I32)
        self.flows = (
            _Out(flows)
            if spill is None
            else _SpilledOut(flows, spill, "flows", coded=(K.FL_LABEL, K.FL_STACK))
        )
        counters = (_I32, _I64)
        self.counters = (
            _Out(counters, floats=True)
            if spill is None
            else _SpilledOut(counters, spill, "counters", True, coded=(0,))
        )
        self.instants = _Out((_U8, _I64, _I64, _I64, _I64, _I32, _I32, _I64, _I32))
        # Per string id of the interner: (flags, range state), see builder_kernel.SCL_*.
        self.SCL = np.zeros((0, 2), np.int64)
        # Timeline stack ids: by frames, numbered from 1 in the order first asked for.
        self._stack_by_frames: dict[tuple[Any, ...], int] = {}
        self._stack_table: Any = None
        self._stack_cache: dict[int, int] = {}
        self._E = np.empty((0, K.E_WIDTH), np.int64)  # columns()'s matrix of a chunk's events
        self._ended: int | None = None  # where end_of_events() closed the events

    # --- stacks named from outside the pass ----------------------------------------------------

    def stack_id(self, stack: Any) -> int:
        """The Timeline's id of a reader (or Event API) Stack; its frames are in the Timeline."""
        try:
            sid = stack.id
            table = stack.table
        except AttributeError:  # a Stack of the generic API (frames() and truthiness only)
            return self._frames_id(tuple(stack.frames())) if stack else 0
        if not sid:
            return 0
        if table is not self._stack_table:
            self._stack_table = table
            self._stack_cache = {}
        i = self._stack_cache.get(sid)
        if i is None:
            # Stack.__bool__: a stack id the table does not hold, or holds empty, is no stack.
            i = self._stack_cache[sid] = (
                self._frames_id(tuple(stack.frames())) if table.stacks.get(sid) else 0
            )
        return i

    def stacks_of_interned(self, ids: np.ndarray) -> np.ndarray:
        """The Timeline's ids (uint32) of the pass Interner's stack ids IDS (0 stays 0)."""
        ids = np.asarray(ids, np.int64)
        u, inv = np.unique(ids, return_inverse=True)
        stacks = self._interner.stacks if self._interner is not None else [()]
        mapped = np.array([self._frames_id(stacks[s]) if s else 0 for s in u.tolist()], np.uint32)
        return mapped[inv.reshape(-1)]

    def _frames_id(self, frames: tuple[Any, ...]) -> int:
        if not frames:
            return 0
        i = self._stack_by_frames.get(frames)
        if i is None:
            i = self._stack_by_frames[frames] = len(self._stack_by_frames) + 1
        return i

    # --- the pass ------------------------------------------------------------------------------

    def columns(self, cols: dict[str, np.ndarray], interner: Any) -> None:
        """One chunk of the pass's columns (goblueprint.trace.store), in reader order."""
        if self._interner is None:
            self._interner = interner
        elif interner is not self._interner:
            raise ValueError("TimelineBuilder: every chunk of a pass must come with the same Interner")
        n = len(cols["kind"])
        if not n:
            return
        self._classify_strings(interner.strings)
        kind = cols["kind"]
        rk = cols["resource_kind"]
        rid = cols["resource_id"]
        if len(self._E) < n:
            self._E = np.empty((n, K.E_WIDTH), np.int64)
        # Every column filled below: the matrix of the last chunk is filled again, not made anew
        # (a few MB a chunk, each page of a fresh one faulted in and zeroed by the kernel).
        E = self._E[:n]
        g, p, m = cols["goroutine"], cols["proc"], cols["thread"]
        # Slots handed out in this order (the ids' own first, then the resources'), as ever.
        gs, ps, ms = self._g.map(g), self._p.map(p), self._m.map(m)
        rs = np.full(n, NONE, np.int64)
        on_g = rk == R_GOROUTINE
        on_p = rk == R_PROC
        if on_g.any():
            rs[on_g] = self._g.map(rid[on_g])
        if on_p.any():
            rs[on_p] = self._p.map(rid[on_p])
        # Task ids are uint64 on the wire; NoTask (2**64-1) and anything above 2**63 is NONE.
        task = cols["task"].view(np.int64)
        ts = np.full(n, NONE, np.int64)
        on_task = (kind == K_TASK_BEGIN) | (kind == K_TASK_END)
        if on_task.any():
            ts[on_task] = self._t.map(np.where(task[on_task] < 0, NONE, task[on_task]))
        # fmt: off
        kernels.get().pack_events(
            E, kind, cols["time"], g, p, m, gs, ps, ms, cols["stack"],
            rk, rid, rs, cols["old_state"], cols["new_state"], cols["reason"], cols["transition_stack"],
            cols["name"], cols["message"], task, cols["parent_task"].view(np.int64), ts,
        )
        # fmt: on
        V = cols["value"].astype(np.float64)
        self._fit_slots()
        step = kernels.get().build_step
        i = 0
        while True:
            i = step(*self.loop_args(E, V, i))
            if i == n:
                break
            self._make_room()

    def loop_args(self, E: np.ndarray, V: np.ndarray, start: int) -> tuple[Any, ...]:
        """build_step's arguments: the events from row START on, and the builder's tables."""
        return (E, V, start, self.SC, self.G, self.P, self.M, self.T, self.RG, self.RA, self.spans.buf,
                self.flows.buf, self.counters.buf, self.counters.floats, self.instants.buf, self._g.ids,
                self._p.ids, self._m.ids, self.SCL)  # fmt: skip

    def _classify_strings(self, strings: list[str]) -> None:
        """What the loop needs to know about each string (new ones only: ids only grow)."""
        have = len(self.SCL)
        if have == len(strings):
            return
        add = np.zeros((len(strings) - have, 2), np.int64)
        for k, s in enumerate(strings[have:]):
            flags = 0
            if s.startswith("stop-the-world"):
                flags |= K.SCL_STW
            if s == "forever":
                flags |= K.SCL_FOREVER
            if s == GOMAXPROCS_METRIC:
                flags |= K.SCL_GOMAXPROCS
            add[k] = flags, _RANGE_STATE.get(s, K.S_RANGE)
        self.SCL = np.concatenate([self.SCL, add])

    def _fit_slots(self) -> None:
        """State tables with a row for every slot handed out."""
        for name, slots, blank in (("G", self._g, self._g_blank), ("P", self._p, self._p_blank),
                                   ("M", self._m, self._m_blank), ("T", self._t, self._t_blank)):  # fmt: skip
            table = getattr(self, name)
            if slots.n > len(table):
                setattr(self, name, _grown(table, slots.n, blank))
        self.SC[K.SC_NPS] = self._p.n

    def _make_room(self) -> None:
        """Room in every table the next event might overflow (the loop stopped before it)."""
        sc = self.SC
        sc[K.SC_NSP] = self.spans.room(int(sc[K.SC_NSP]), int(sc[K.SC_NEED_SP]))
        sc[K.SC_NFL] = self.flows.room(int(sc[K.SC_NFL]), 2)
        sc[K.SC_NCT] = self.counters.room(int(sc[K.SC_NCT]), 4)
        sc[K.SC_NIN] = self.instants.room(int(sc[K.SC_NIN]), 1)
        if sc[K.SC_RFREE] < 0:
            self.RG = _grown(self.RG, int(sc[K.SC_NRG]) + 1)
        self.RA = _grown(self.RA, int(sc[K.SC_NRA]) + 1)

    # --- result --------------------------------------------------------------------------------

    def _open_spans(self, end: int) -> np.ndarray:
        """Rows (SPANS order) of every span still open, closed at END."""
        parts = []
        for kind, table, slots in ((L_G, self.G, self._g), (L_P, self.P, self._p), (L_M, self.M, self._m)):
            rows = np.flatnonzero(table[: slots.n, K.O_OPEN])
            o = table[rows]
            lane = slots.ids[rows]
            parts.append(np.column_stack([np.full(len(rows), kind), lane, o[:, K.O_S], np.full(len(rows), end),
                                          o[:, K.O_STATE], o[:, K.O_G], o[:, K.O_P], o[:, K.O_M],
                                          o[:, K.O_LABEL], o[:, K.O_STACK]]))  # fmt: skip
        ra = self.RA[: self.SC[K.SC_NRA]]  # in the order they opened
        parts.append(np.column_stack([ra[:, K.RA_KIND], ra[:, K.RA_LANE], ra[:, K.RA_S], np.full(len(ra), end),
                                      ra[:, K.RA_STATE], ra[:, K.RA_G], ra[:, K.RA_P], ra[:, K.RA_M],
                                      ra[:, K.RA_LABEL], ra[:, K.RA_STACK]]))  # fmt: skip
        tops = [
            (int(self._g.ids[s]), int(self.G[s, K.G_RTOP]))
            for s in np.flatnonzero(self.G[: self._g.n, K.G_RTOP] >= 0)
        ]
        if self.SC[K.SC_RTOP_NONE] >= 0:
            tops.append((NONE, int(self.SC[K.SC_RTOP_NONE])))
        regions = []
        for g, top in tops:  # innermost first, as they would close
            while top >= 0:
                r = self.RG[top]
                regions.append((L_REGION, g, r[K.RG_S], end, K.S_REGION, r[K.RG_G], r[K.RG_TASK], r[K.RG_DEPTH],
                                r[K.RG_LABEL], r[K.RG_STACK]))  # fmt: skip
                top = int(r[K.RG_PREV])
        parts.append(np.array(regions, np.int64).reshape(-1, K.SP_WIDTH))
        rows = np.flatnonzero(self.T[: self._t.n, K.T_OPEN])
        t = self.T[rows]
        parts.append(np.column_stack([np.full(len(rows), int(LaneKind.TASK)), self._t.ids[rows], t[:, K.T_S],
                                      np.full(len(rows), end), np.full(len(rows), K.S_TASK), t[:, K.T_PARENT],
                                      np.full(len(rows), NONE), np.full(len(rows), NONE), t[:, K.T_LABEL],
                                      t[:, K.T_STACK]]))  # fmt: skip
        out = np.concatenate([np.asarray(x, np.int64).reshape(-1, K.SP_WIDTH) for x in parts])
        out[:, 3] = np.maximum(out[:, 3], out[:, 2])
        return out

    def _pending_flows(self) -> np.ndarray:
        rows = np.flatnonzero(self.G[: self._g.n, K.G_HASC])
        c = self.G[rows]
        none = np.full(len(rows), NONE)
        return np.column_stack([c[:, K.C_KIND], self._g.ids[rows], c[:, K.C_FROMG], c[:, K.C_FROMP],
                                c[:, K.C_TIME], none, none, none, c[:, K.C_LABEL],
                                c[:, K.C_STACK]]).astype(np.int64).reshape(-1, K.FL_WIDTH)  # fmt: skip

    def end_of_events(self, end: int | None = None) -> int:
        """No event comes now: the loop's last rows moved out to its tables, the spans still open
        closed at END (default: the last event) and the pending flows added, the loop's buffers
        let go of (called as soon as the pass ends, they are not held under what follows it:
        the events' and stays' tables, then finish()'s stages). Once; finish() calls it if not
        done. Returns END."""
        sc = self.SC
        end = int(sc[K.SC_LAST]) if end is None else end
        if self._ended is not None:
            if end != self._ended:
                raise ValueError(f"TimelineBuilder: the events ended at {self._ended}, not {end}")
            return end
        self._ended = end
        self.spans.last(int(sc[K.SC_NSP]))
        self.spans.add(self._open_spans(end))
        if isinstance(self.spans, _SpilledSpans):
            self.spans.let_go()
        self.flows.last(int(sc[K.SC_NFL]))
        self.flows.add(self._pending_flows())
        self.counters.last(int(sc[K.SC_NCT]))
        self.instants.last(int(sc[K.SC_NIN]))
        self._E = np.empty((0, K.E_WIDTH), np.int64)  # a chunk's events: no chunk comes now
        sc[[K.SC_NSP, K.SC_NFL, K.SC_NCT, K.SC_NIN]] = 0
        return end

    def finish(
        self,
        end: int | None = None,
        spans_to: Callable[[pl.DataFrame, list[str], bool], None] | None = None,
        tables_to: Callable[[str, Any, list[str]], None] | None = None,
    ) -> Timeline:
        """The Timeline of the events seen, its spans closed at END (default: the last event).

        A builder that spilled its spans gives them to SPANS_TO instead, lane kind by lane kind
        in the Timeline's order, in pieces of lanes, with the Timeline's strings and whether
        the piece ends one of _SPAN_PIECE rows: its Timeline has no spans (the lanes are all
        there).  TABLES_TO, given, is handed the counters and then the flows
        (``tables_to(name, table, strings)``, the strings those tables name) as each is made,
        and the Timeline has neither."""
        if isinstance(self.spans, _SpilledSpans) != (spans_to is not None):
            raise ValueError("TimelineBuilder.finish: a spans sink is for a builder that spills its spans")
        sc = self.SC
        have = bool(sc[K.SC_HAVE_FIRST])
        end = self.end_of_events(end)
        sp, fl, ct, it = self.spans, self.flows, self.counters, self.instants
        # String and stack codes become the Timeline's ids (as numpy: two Int32 columns a
        # table); every other column goes from its chunks to the table as it is.
        spilled = sp if isinstance(sp, _SpilledSpans) else None
        # The code columns: those in memory taken whole; of those on disk only which codes
        # occurred (their columns read, and mapped, a piece at a time by whoever takes them).
        text_cols, stack_cols = (
            [(sp, 8), (fl, K.FL_LABEL), (ct, 0), (it, 5), (it, 6)],
            [(sp, 9), (fl, K.FL_STACK), (it, 8)],
        )
        on_disk = {(t, k): seen.values() for t in (sp, fl, ct) for k, seen in getattr(t, "codes", {}).items()}
        codes = {(t, k): t.take(k).to_numpy() for t, k in text_cols if (t, k) not in on_disk}
        strings, text_ids = self._strings(
            list(codes.values()) + [on_disk[c] for c in text_cols if c in on_disk]
        )
        stacks = {(t, k): t.take(k).to_numpy() for t, k in stack_cols if (t, k) not in on_disk}
        stack_ids = self._stack_ids(list(stacks.values()) + [on_disk[c] for c in stack_cols if c in on_disk])

        def stack_of(col: np.ndarray) -> np.ndarray:
            return stack_ids[col]

        def taken(held: dict[tuple[_Out, int], np.ndarray], t: _Out, k: int) -> np.ndarray:
            col = held.pop((t, k), None)
            return t.take(k).to_numpy() if col is None else col

        def column(t: _Out, k: int, name: str) -> pl.Series:
            if (t, k) in text_cols:
                return pl.Series(name, text_ids(taken(codes, t, k)), pl.UInt32)
            if (t, k) in stack_cols:
                return pl.Series(name, stack_of(taken(stacks, t, k)), pl.UInt32)
            return t.take(k).alias(name)

        # Spilled counters handed on by a thread of their own while the spans are sorted and
        # handed on (the main thread sorts while a writer encodes the spans: a core was left
        # half idle); a row group of them is held at a time.  Counters spill only where the
        # spans do, so SPANS_TO is given then (checked above).
        beside = tables_to is not None and isinstance(ct, _SpilledOut)
        with ThreadPoolExecutor(1, thread_name_prefix="counters") if beside else nullcontext() as pool:
            counters_done = (
                pool.submit(tables_to, "counters", ct.pieces(text_ids, ROW_GROUP), list(strings))
                if pool is not None and tables_to is not None and isinstance(ct, _SpilledOut)
                else None
            )
            if spilled is None or spans_to is None:
                spans = pl.DataFrame([column(sp, k, name) for k, name in enumerate(SPANS_SCHEMA)])
                spans = _sorted_column_by_column(spans, list(_SPAN_ORDER))
                lanes = self._lanes(spans)
            else:
                spans = empty_frame("spans")
                lanes = self._spilled_spans_to(spilled, spans_to, strings, text_ids, stack_ids)
                give_back()  # the sorts' blocks, before the flows are gathered
        # Counters first, then flows: with TABLES_TO each is handed on and let go of before the
        # next is made, never both held.
        if counters_done is not None:
            counters_done.result()
            counters = empty_frame("counters")
        else:
            counters = frame(
                "counters",
                {"name": column(ct, 0, "name"), "time": column(ct, 1, "time"), "value": ct.take(-1)},
            )
            if tables_to is not None:
                tables_to("counters", counters, list(strings))
                counters = empty_frame("counters")
        # Sorted by (from_time, g), stably: the order from the two keys, then each column put
        # in order alone (a sort of the whole table held it twice).
        index = {name: k for k, name in enumerate(FLOWS_SCHEMA) if name != "migrated"}
        if tables_to is not None and isinstance(fl, _SpilledOut):
            # Handed on in pieces gathered from the spill in that order: the sorted table held
            # whole was the ingest's peak on a large trace (~70 bytes a flow, tens of millions),
            # and so was its order (~28 bytes a flow with its keys, spill_sort).
            named = {"label": text_ids, "stack": stack_of}
            tables_to("flows", _flow_pieces(fl.file, index, named), list(strings))
            flows = empty_frame("flows")
        else:
            keys = {name: column(fl, index[name], name) for name in ("from_time", "g")}  # each taken once
            order = np.lexsort((keys["g"].to_numpy(), keys["from_time"].to_numpy()))
            cols = {
                name: (keys.pop(name) if name in keys else column(fl, k, name)).gather(order)
                for name, k in index.items()
            }
            del order
            flows = _with_migrated(cols)
            del cols
            if tables_to is not None:
                tables_to("flows", flows, list(strings))
                flows = empty_frame("flows")
        instants = frame("instants", {name: column(it, k, name) for k, name in enumerate(INSTANTS_SCHEMA)})
        stack_frames = self._stack_frames(strings)
        return Timeline(
            start_ns=int(sc[K.SC_FIRST]) if have else 0,
            end_ns=end,
            strings=list(strings),
            spans=spans,
            flows=flows,
            counters=counters,
            instants=instants,
            lanes=lanes,
            stack_frames=stack_frames,
        )

    def _spilled_spans_to(
        self,
        spilled: _SpilledSpans,
        spans_to: Callable[[pl.DataFrame, list[str], bool], None],
        strings: dict[str, int],
        text_ids: Callable[[np.ndarray], np.ndarray],
        stack_ids: np.ndarray,
    ) -> pl.DataFrame:
        """Hand SPILLED's spans to SPANS_TO in the Timeline's order, with the Timeline's
        STRINGS and ids (TEXT_IDS, STACK_IDS); returns their lanes."""
        # Sorted kind by kind: the lane kind is the first sort key, so each kind's rows
        # sorted alone and given in kind order are the whole table's sorted rows.
        kind_lanes = []
        texts = list(strings)
        g_name = self._goroutine_names()
        for kind in spilled.kinds():
            # A piece is a range of lane ids: (lane_kind, lane_id) leads the sort key, so
            # the pieces sorted alone and given in order are the kind's sorted rows too.
            for piece, cut in spilled.take_kind(kind, _SPAN_PIECE, _SPAN_SORT):
                part = self._named_spans(piece, text_ids, stack_ids)  # sorted as taken
                del piece
                kind_lanes.append(self._lanes(part, g_name))
                spans_to(part, texts, cut)
                del part
        if not kind_lanes:
            return self._lanes(empty_frame("spans"))
        # A lane cut in pieces (one too long to sort at once) is listed once.
        return (
            pl.concat(kind_lanes)
            .unique(["lane_kind", "lane_id"], keep="first", maintain_order=True)
            .rechunk()  # one chunk whatever the pieces: the stored file's one row group
        )

    @staticmethod
    def _named_spans(
        spans: pl.DataFrame, text_ids: Callable[[np.ndarray], np.ndarray], stack_ids: np.ndarray
    ) -> pl.DataFrame:
        """Spilled SPANS with the Timeline's string and stack ids (finish's text_ids, stack_ids)."""
        return spans.with_columns(
            pl.Series("label", text_ids(spans["label"].to_numpy()), pl.UInt32),
            pl.Series("stack", stack_ids[spans["stack"].to_numpy()], pl.UInt32),
        )

    def _strings(
        self, columns: list[np.ndarray]
    ) -> tuple[dict[str, int], Callable[[np.ndarray], np.ndarray]]:
        """The Timeline's string table of the string codes in COLUMNS (pass ids, SYN_* codes),
        and the function that maps a column of codes to it."""
        codes = _distinct(columns)
        pass_strings = self._interner.strings if self._interner is not None else [""]
        table: dict[str, int] = {"": 0}
        ids = np.empty(len(codes), np.int64)
        for k, c in enumerate(codes.tolist()):
            if c >= 0:
                text = pass_strings[c]
            elif c <= K.SYN_UNBLOCK:
                why = pass_strings[K.SYN_UNBLOCK - c]
                text = f"unblock ({why})" if why else "unblock"
            else:
                text = _SYNTHETIC[c]
            ids[k] = table.setdefault(text, len(table))

        lo = int(codes[0])
        lut = np.zeros(int(codes[-1]) - lo + 1, np.uint32)
        lut[codes.astype(np.int64) - lo] = ids

        def text_ids(col: np.ndarray) -> np.ndarray:
            # A window at a time: the counters' names are millions of codes, and their int64
            # offsets and the ids looked up, made whole, were the finish's peak.
            out = np.empty(len(col), np.uint32)
            for at in range(0, len(col), _ID_WINDOW):
                # (mode "clip": the codes are the table's; "raise" copies through a buffer)
                np.take(
                    lut,
                    col[at : at + _ID_WINDOW].astype(np.int64) - lo,
                    out=out[at : at + _ID_WINDOW],
                    mode="clip",
                )
            return out

        return table, text_ids

    def _stack_ids(self, columns: list[np.ndarray]) -> np.ndarray:
        """Pass stack id -> Timeline stack id, for every id up to the largest in COLUMNS."""
        used = _distinct(columns)
        # uint32, the stack columns' type: a column mapped through it is not cast again.
        lut = np.zeros(int(used[-1]) + 1, np.uint32)
        if len(used) > 1:
            lut[used] = self.stacks_of_interned(used)
        return lut

    def _stack_frames(self, strings: dict[str, int]) -> pl.DataFrame:
        sf: dict[str, list[int]] = {k: [] for k in ("stack", "depth", "pc", "func", "file", "line")}
        for frames, i in self._stack_by_frames.items():  # in id order
            for depth, (pc, func, file, line) in enumerate(frames):
                sf["stack"].append(i)
                sf["depth"].append(depth)
                sf["pc"].append(pc)
                sf["func"].append(strings.setdefault(func, len(strings)))
                sf["file"].append(strings.setdefault(file, len(strings)))
                sf["line"].append(line)
        return frame("stack_frames", sf)

    def _goroutine_names(self) -> dict[int, str]:
        """Goroutine id -> its root function (from its first transition with a stack)."""
        stacks = self._interner.stacks if self._interner is not None else [()]
        named = np.flatnonzero(self.G[: self._g.n, K.G_NAME])
        return {
            int(g): stacks[s][-1].func
            for g, s in zip(self._g.ids[named].tolist(), self.G[named, K.G_NAME].tolist(), strict=True)
        }

    def _lanes(self, spans: pl.DataFrame, g_name: dict[int, str] | None = None) -> pl.DataFrame:
        if g_name is None:
            g_name = self._goroutine_names()
        # The spans are sorted by lane: each lane starts where (lane_kind, lane_id) changes.
        lk, li = spans["lane_kind"].to_numpy(), spans["lane_id"].to_numpy()
        first = np.flatnonzero(np.concatenate([[True], (lk[1:] != lk[:-1]) | (li[1:] != li[:-1])]))
        present = zip(lk[first].tolist(), li[first].tolist(), strict=True) if len(lk) else iter(())
        kinds: list[int] = []
        ids: list[int] = []
        labels: list[str] = []
        groups: list[str] = []
        system: list[bool] = []
        for kind, lane in present:
            name = g_name.get(lane, "") if kind in (L_G, L_GRANGE, L_REGION) else ""
            if kind == L_G:
                label = f"G{lane} {name}".rstrip()
            elif kind == L_P:
                label = f"Proc {lane}"
            elif kind == L_M:
                label = f"Thread {lane}"
            elif kind == L_GC:
                label = "GC"
            elif kind == L_STW:
                label = "Stop-the-world"
            elif kind == L_GRANGE:
                label = f"G{lane} ranges"
            elif kind == L_PRANGE:
                label = f"Proc {lane} ranges"
            elif kind == L_REGION:
                label = f"G{lane} regions"
            else:
                label = f"Task {lane}"
            kinds.append(kind)
            ids.append(lane)
            labels.append(label)
            groups.append(name)
            system.append(is_system_goroutine(name) if kind == L_G else False)
        return frame("lanes", {"lane_kind": kinds, "lane_id": ids, "label": labels, "group": groups,
                               "system": system})  # fmt: skip


def _distinct(columns: list[np.ndarray]) -> np.ndarray:
    """The distinct values of the integer COLUMNS and 0, sorted (np.unique's result).

    The codes are string or stack ids (and a few small negative codes): a range about the
    size of the tables, so a table of which values occur replaces sorting millions of rows."""
    lo, hi = 0, 0
    for c in columns:
        if len(c):
            lo, hi = min(lo, int(c.min())), max(hi, int(c.max()))
    if hi - lo > 4 * sum(len(c) for c in columns) + (1 << 20):  # sparse: sorting is cheaper
        return unique(np.concatenate([unique(c) for c in columns] + [np.zeros(1, np.int64)]))
    seen = np.zeros(hi - lo + 1, np.bool_)
    seen[-lo] = True
    for c in columns:
        seen[c.astype(np.int64) - lo] = True
    return np.flatnonzero(seen) + lo


def _sorted_column_by_column(df: pl.DataFrame, keys: list[str]) -> pl.DataFrame:
    """``df.sort(keys)`` holding one sorted column at a time beside the input, not a whole copy.

    The sort is stable: rows with equal keys keep the order the builder emitted them in, so
    the output does not depend on how polars splits an unstable sort across threads.  Only
    the order is computed (_span_order); the columns are then gathered one by one."""
    order = _span_order(*(df.get_column(k).to_numpy() for k in keys))
    cols = []
    for name in df.columns:
        cols.append(df.get_column(name).gather(order))
        df = df.drop(name)  # the caller holds no other reference: the column is freed here
    return pl.DataFrame(cols)


# A lane key range up to this many times the rows (plus a constant) is ranked through a direct
# table; wider ranges (huge task ids) through np.unique.
_DIRECT_LANE_KEYS = 4


def _span_order(lane_kind: np.ndarray, lane_id: np.ndarray, start: np.ndarray, end: np.ndarray) -> np.ndarray:
    """The stable order of the spans by (lane_kind, lane_id, start, end), as np.lexsort gives it.

    The builder emits a lane's spans mostly in time order, but the lanes interleave: a
    counting sort by lane (builder_kernel.lane_order) groups them in linear time and says
    which lanes are not in (start, end) order; only those lanes' rows are sorted further.
    Within a lane both keep the emitted order of equal keys, so the result is lexsort's
    (a full lexsort of 14 M spans takes seconds)."""
    n = len(lane_kind)
    if n == 0:
        return np.zeros(0, np.int64)
    lo, hi = int(lane_id.min()), int(lane_id.max())
    width = hi - lo + 1
    if width * (int(lane_kind.max()) + 1) <= _DIRECT_LANE_KEYS * n + (1 << 20):
        # One array of N made and turned in place into the key, then into the lane's rank (the
        # sort runs while the rest of the pass's output is held: no more arrays of N than lexsort's).
        lane = lane_kind.astype(np.int64)
        lane *= width
        lane += lane_id
        lane -= lo  # ordered as (lane_kind, lane_id); int64 wraps, so an overflowing partial sum ends right
        present = np.zeros(int(lane.max()) + 1, np.bool_)
        present[lane] = True
        rank = np.cumsum(present, dtype=np.int64) - 1
        np.take(rank, lane, out=lane)
        lanes = int(rank[-1]) + 1
    else:
        pairs = np.stack([lane_kind.astype(np.int64), lane_id], axis=1)
        _, lane = np.unique(pairs, axis=0, return_inverse=True)
        lane = lane.reshape(-1).astype(np.int64)
        lanes = int(lane.max()) + 1
    order = np.empty(n, np.int64)
    bad = np.zeros(lanes, np.bool_)
    if kernels.get().lane_order(lane, start, end, order, bad):
        rows = np.flatnonzero(bad[lane[order]])  # positions of the unordered lanes' rows
        sub = order[rows]
        order[rows] = sub[np.lexsort([end[sub], start[sub], lane[sub]])]
    return order


def build(
    source: Any, progress: Callable[[int], None] | None = None, *, show_capture: bool = False
) -> Timeline:
    from goblueprint.timeline.source import run_pass

    builder = TimelineBuilder()
    result = run_pass(source, [builder], progress)
    tl = builder.finish(result.last_time)
    tl.go_version = result.go_version
    return result.marks.timeline(tl, show=show_capture)
