"""A trace as relational tables: for Parquet export and for SQL (DuckDB).

Tables (all times in ns, Go trace time; ids -1 for none):

* ``events``     one row per event in reader order: seq, time, kind, g, p, m, stack,
                 resource_kind/resource_id/old_state/new_state/reason for state
                 transitions, name (range/metric/task/region type, log category,
                 label), value (metric value), task, message (log text).
* ``intervals``  the timeline spans with lane/state/label names resolved
                 (see goblueprint.timeline.model).
* ``goroutines`` Go's per-goroutine summary (as go tool trace's goroutine analysis),
                 with block time by reason as a list of {reason, ns}.
* ``metrics``    sampled counters: heap, heap goal, goroutines, GOMAXPROCS, and the
                 derived running/runnable/in-syscall goroutine counts.
* ``flows``      wake-ups and other start causes, with ``migrated``.
* ``stacks``     stack frames: stack, depth (0 = leaf), pc, func, file, line.
* ``lanes``, ``states``  display names of lanes and state codes.

Strings are stored as data; nothing here interprets them.
"""

from __future__ import annotations

import itertools
import os
import tempfile
from collections.abc import Callable, Iterable, Iterator
from functools import cache, partial
from pathlib import Path
from types import TracebackType
from typing import Any, NamedTuple

import numpy as np
import polars as pl
import pyarrow as pa

# Arrow's compute functions registered here, on the importing thread, before any writer
# thread runs: the registry is filled when pyarrow.compute is first imported, and a Parquet
# writer encoding a dictionary column's statistics on one thread while another thread's
# first use of compute filled it failed with "No function registered with name: take".
import pyarrow.compute

from goblueprint.arrays import unique
from goblueprint.errors import PathError
from goblueprint.timeline._api import (
    K_LABEL,
    K_LOG,
    K_METRIC,
    K_RANGE_ACTIVE,
    K_RANGE_BEGIN,
    K_RANGE_END,
    K_REGION_BEGIN,
    K_REGION_END,
    K_STATE,
    K_TASK_BEGIN,
    K_TASK_END,
    EventKind,
    GoState,
    ProcState,
    ResourceKind,
)
from goblueprint.timeline.heap import give_back
from goblueprint.timeline.model import Timeline, state_table
from goblueprint.timeline.spill import ColumnSpill, Seen
from goblueprint.timeline.summary import Summary
from goblueprint.timeline.write_behind import WriteBehind
from goblueprint.trace.store import COLUMNS

_KIND_NAMES = [k.name for k in sorted(EventKind, key=int)]
_RESOURCE_NAMES = [k.name for k in sorted(ResourceKind, key=int)]
# Old/new state names of both resource kinds in one list: a GoState's name at its value,
# a ProcState's after the GoStates (see _state_names).
_STATE_NAMES = [k.name for k in sorted(GoState, key=int)] + [k.name for k in sorted(ProcState, key=int)]
_N_GO_STATES = len(GoState)
_R_PROC = int(ResourceKind.PROC)
_MAX_I64 = 2**63 - 1
# Rows kept as numpy chunks before they are packed into a DataFrame chunk; rows read back from
# the spill at a time.
_EVENT_CHUNK = 1 << 16
# Rows of a row group of the stored events table at most (a generation's rows are a group
# unless there are more): a group is held whole as Arrow until written, ~165 bytes a row, and
# a trace of few generations has millions of events in one (two of them were the peak). At
# 1 << 19 the events' write took 100 MB more than at 1 << 17, in no less time (46 MB trace);
# at 1 << 17 its ingest peaked at 232-236 MB, at this 220-224, the events' file 3 % larger
# (91 -> 156 row groups), no slower.
_EVENT_GROUP = 1 << 16


def _kinds_lut(*kinds: int) -> np.ndarray:
    lut = np.zeros(256, bool)
    lut[list(kinds)] = True
    return lut


_RANGES = (K_RANGE_BEGIN, K_RANGE_ACTIVE, K_RANGE_END)
_TASKS_REGIONS_LOG = (K_TASK_BEGIN, K_TASK_END, K_REGION_BEGIN, K_REGION_END, K_LOG)
# Which fields of the events table apply to which kinds (null elsewhere), as Event's accessors
# say: a transition's resource and states, a range's or label's scope, a metric's value...
_HAS_RESOURCE = _kinds_lut(K_STATE, K_LABEL, *_RANGES)
_HAS_STATES = _kinds_lut(K_STATE)
_HAS_NAME = _kinds_lut(K_METRIC, K_LABEL, *_RANGES, *_TASKS_REGIONS_LOG)
_HAS_VALUE = _kinds_lut(K_METRIC)
_HAS_TASK = _kinds_lut(*_TASKS_REGIONS_LOG)
_HAS_MESSAGE = _kinds_lut(K_LOG)


def _masked(values: np.ndarray, valid: np.ndarray) -> pl.Series:
    """VALUES as a polars Series with nulls where not VALID (an arrow validity mask, no row work)."""
    return pl.from_arrow(_arrow(values, valid))  # type: ignore[return-value]


class EventRows:
    """Columnar consumer that turns every event into a row of the ``events`` table.

    The table is the store's columns with names resolved: ``stack`` is the pass Interner's
    stack id (the ids the Timeline's ``stacks`` table uses), strings are text, fields that do
    not apply to an event's kind are null.
    """

    COLUMNS = (
        "seq",
        "time",
        "kind",
        "g",
        "p",
        "m",
        "stack",
        "resource_kind",
        "resource_id",
        "old_state",
        "new_state",
        "reason",
        "name",
        "value",
        "task",
        "message",
    )
    # The store columns kept for the table (copied: the pass owns its arrays).
    _KEPT = ("kind", "time", "goroutine", "proc", "thread", "stack", "resource_kind", "resource_id",
             "old_state", "new_state", "reason", "name", "value", "task", "message")  # fmt: skip

    def __init__(self, spill: Path | None = None) -> None:
        self.parts: list[dict[str, np.ndarray]] = []
        self.pending = 0
        self.seq = 0
        self.rows = 0  # rows taken in
        # Packed chunks in memory or, with SPILL (a directory), the store's columns appended as
        # they come to raw files there, packed only as they are read back: the table of a large
        # trace is several times its size, more than it should hold in memory.
        self.chunks: list[pl.DataFrame] = []
        self.spill: ColumnSpill | None = (
            None if spill is None else ColumnSpill(spill, "events", {n: COLUMNS[n] for n in self._KEPT})
        )
        self._behind: WriteBehind | None = None  # the spill's appends in flight
        self._stacks = Seen()  # the stack ids the rows name
        self.strings: list[str] = []
        self._names = pl.Series("s", [], dtype=pl.String)

    def columns(self, cols: dict[str, np.ndarray], interner: Any) -> None:
        self.strings = interner.strings
        self.rows += len(cols["kind"])
        self._stacks.add(cols["stack"])
        if self.spill is not None:
            # Written on a thread of its own while the pass goes on (the write is a sixth of the
            # pass thread's work, which the other consumers and the reader wait on): the
            # chunk's arrays are made for it and never changed after, so they are written as
            # they are, the next chunk's write waiting for this one's.
            if self._behind is None:
                self._behind = WriteBehind()
            self._behind.submit(self.spill.append, {name: cols[name] for name in self._KEPT})
            return
        self.parts.append({name: cols[name].copy() for name in self._KEPT})
        self.pending += len(cols["kind"])
        if self.pending >= _EVENT_CHUNK:
            self._flush()  # bounded memory: one DataFrame chunk per ~half a million rows

    def _flush(self) -> None:
        if not self.parts:
            return
        c = {name: np.concatenate([part[name] for part in self.parts]) for name in self._KEPT}
        self.parts, self.pending = [], 0
        self.chunks.append(self._frame(c))

    def _frame(self, c: dict[str, np.ndarray]) -> pl.DataFrame:
        """The rows of the kept columns C, the next in the table, coded (_CODED_SCHEMA): text
        columns are codes and string ids, named only when written (events_arrow) or asked
        for (named)."""
        coded = self._coded(c)
        return pl.DataFrame(
            {name: v if valid is None else _masked(v, valid) for name, (v, valid) in coded.items()},
            schema=_CODED_SCHEMA,
        )

    def _coded(self, c: dict[str, np.ndarray]) -> dict[str, tuple[np.ndarray, np.ndarray | None]]:
        """The rows of the kept columns C, the next in the table, as the columns of
        _CODED_SCHEMA: each its values (0 where null) and where it is valid (None: every row)."""
        n = len(c["kind"])
        kind = c["kind"]
        has_resource, has_states, has_name = _HAS_RESOURCE[kind], _HAS_STATES[kind], _HAS_NAME[kind]
        has_task = _HAS_TASK[kind]
        rk = c["resource_kind"]
        state_base = np.where(rk == _R_PROC, _N_GO_STATES, 0)
        task = c["task"]

        def code(ids: np.ndarray, valid: np.ndarray, dtype: type) -> tuple[np.ndarray, np.ndarray]:
            return np.where(valid, ids, 0).astype(dtype), valid

        coded = {
            "seq": (np.arange(self.seq, self.seq + n, dtype=np.int64), None),
            "time": (c["time"], None),
            "kind": (kind, None),
            "g": (c["goroutine"], None),
            "p": (c["proc"], None),
            "m": (c["thread"], None),
            "stack": (c["stack"].astype(np.uint32), None),
            "resource_kind": code(rk, has_resource, np.uint8),
            "resource_id": (c["resource_id"], has_resource),
            "old_state": code(c["old_state"] + state_base, has_states, np.uint8),
            "new_state": code(c["new_state"] + state_base, has_states, np.uint8),
            "reason": code(c["reason"], has_states, np.uint32),
            "name": code(c["name"], has_name, np.uint32),
            "value": (c["value"].astype(np.float64), _HAS_VALUE[kind]),
            # Task ids are uint64; NoTask and other huge ids become -1 in an Int64 column.
            "task": (np.where(task > _MAX_I64, -1, task.astype(np.int64)), has_task),
            "message": code(c["message"], _HAS_MESSAGE[kind], np.uint32),
        }
        self.seq += n
        return coded

    def tables(self, stack_lut: np.ndarray, texts: pa.Array, marks: Any, show: bool) -> Iterator[pa.Table]:
        """The table's rows (spilled: EventRows(SPILL)) in order, as events_arrow gives them:
        the stacks the Timeline's (STACK_LUT: timeline_stack_ids), capture's left out (MARKS,
        unless SHOW), the texts' ids into TEXTS (the pass strings as Arrow).  Made from the
        spilled columns straight into Arrow, not through a polars frame and back (each column
        copied, its nulls made and read again: half the events' CPU); the spill removed at
        the end."""
        spill = self._spilled()
        if spill is None:
            raise ValueError("EventRows.tables: for rows spilled to disk (EventRows(spill))")
        try:
            for lo, hi in spill.windows(_EVENT_CHUNK):
                coded = self._coded({name: spill.read(name, lo, hi) for name in self._KEPT})
                stack = coded["stack"][0]
                coded["stack"] = (stack_lut[stack] if len(stack) else stack, None)
                keep = _kept_events(coded, marks, show)
                yield _coded_arrow(coded, keep, texts)
                del coded
        finally:
            spill.remove()

    def _spilled(self) -> ColumnSpill | None:
        """The spill, every append written (an error of one raised here), taken from the rows:
        it is read once."""
        behind, self._behind = self._behind, None
        if behind is not None:
            behind.close()
        spill, self.spill = self.spill, None
        return spill

    def named(self, frame: pl.DataFrame) -> pl.DataFrame:
        """A coded FRAME of rows (frames()) as the events table: its codes and ids named."""
        if len(self._names) != len(self.strings):  # ids only grow: new strings only extend it
            self._names = pl.Series("s", self.strings, dtype=pl.String)
        texts = {"kind": _KIND_SERIES, "resource_kind": _RESOURCE_SERIES, "old_state": _STATE_SERIES,
                 "new_state": _STATE_SERIES, "reason": self._names, "name": self._names, "message": self._names}  # fmt: skip
        return frame.with_columns(
            names.gather(frame[column].cast(pl.Int64)).alias(column) for column, names in texts.items()
        )

    def stack_ids(self) -> np.ndarray:
        """The pass Interner's stack ids the rows name, each once (sorted)."""
        return self._stacks.values()

    def frames(self) -> Iterator[pl.DataFrame]:
        """The table's chunks in row order, coded (named() names them), each let go of once
        given (the spill removed at the end)."""
        self._flush()
        while self.chunks:
            yield self.chunks.pop(0)
        spill = self._spilled()
        if spill is None:
            return
        try:
            for lo, hi in spill.windows(_EVENT_CHUNK):
                # No name here holds the chunk while the consumer works on it.
                yield self._frame({name: spill.read(name, lo, hi) for name in self._KEPT})
        finally:
            spill.remove()

    def frame(self) -> pl.DataFrame:
        chunks = [self.named(chunk) for chunk in self.frames()]
        if not chunks:
            return pl.DataFrame(schema=_EVENTS_SCHEMA)
        return pl.concat(chunks)


def write_by_generation(chunks: Iterable[pa.Table], path: Path) -> int:
    """Write the events table, given as CHUNKS in row order (EventRows.tables(), or
    events_arrow of EventRows.frames()), to PATH with a row group per generation (each starts
    at a Sync event), for DuckDB to skip by, a generation of more than _EVENT_GROUP rows cut
    in row groups of that many; returns the rows written.

    A row group is held only while it is made and written, once: each chunk's part of it is
    sliced (no copy) and the parts are written as they are, never concatenated.  What is
    held is the group being encoded and the next one's parts: at most two groups of
    _EVENT_GROUP rows whatever the generations' sizes (a generation of a trace with few,
    large ones is hundreds of MB as Arrow), never the table.
    """
    rows = held = 0
    group: list[pa.Table] = []
    sync = _event_codes()["kind"][0][_KIND_NAMES.index("SYNC")]
    with (
        _events_writer(path) as writer,
        WriteBehind() as behind,  # a group encoded while the next one's rows are made
    ):

        def write() -> None:
            nonlocal rows, held
            if group:
                table = pa.concat_tables(group)  # the parts as chunks: no copy
                group.clear()
                behind.submit(writer.write_table, table, table.num_rows)
                rows += table.num_rows
                held = 0

        for chunk in chunks:
            kinds = chunk.column("kind").combine_chunks().indices.to_numpy()
            starts = np.flatnonzero(kinds == sync).tolist()
            del kinds
            for lo, hi in itertools.pairwise(sorted({0, *starts, chunk.num_rows})):
                if lo in starts:
                    write()  # a Sync: the generation before it is complete
                while lo < hi:
                    take = min(hi - lo, _EVENT_GROUP - held)
                    group.append(chunk.slice(lo, take))
                    held += take
                    lo += take
                    if held == _EVENT_GROUP:
                        write()
            del chunk  # not held while the next chunk is made
        write()
        behind.wait()
        if rows == 0:
            writer.write_table(writer.schema.empty_table())
    return rows


def events_arrow(frame: pl.DataFrame, texts: Any) -> Any:
    """A coded FRAME of events (EventRows.frames()) as the events table in Arrow, its text
    columns dictionary arrays of the codes (TEXTS: the pass strings, an Arrow string array;
    the same object for every part of a row group, so the writer keeps one dictionary)."""
    coded = {}
    for name in EventRows.COLUMNS:
        values = frame[name]
        valid = values.is_not_null().to_numpy() if values.null_count() else None
        coded[name] = (values.fill_null(0).to_numpy(), valid)
    return _coded_arrow(coded, None, texts)


def _kept_events(
    coded: dict[str, tuple[np.ndarray, np.ndarray | None]], marks: Any, show: bool
) -> np.ndarray | None:
    """The rows of CODED (EventRows._coded) that MARKS keep (capture_marks.events), None: all."""
    if show or not marks.goroutines:
        return None
    (rk, has_resource), (g, _), (rid, _) = coded["resource_kind"], coded["g"], coded["resource_id"]
    frame = pl.DataFrame(
        {"g": g, "resource_kind": _masked(rk, has_resource), "resource_id": rid, "row": np.arange(len(g))}
    )
    return marks.events(frame)["row"].to_numpy()


def _coded_arrow(
    coded: dict[str, tuple[np.ndarray, np.ndarray | None]], keep: np.ndarray | None, texts: Any
) -> pa.Table:
    """CODED columns (EventRows._coded's form: values, where valid) at the rows KEEP (None:
    all) as the events table in Arrow (events_arrow)."""
    from goblueprint.timeline.stored import coded as dictionary_of

    codes = _event_codes()
    cols: dict[str, Any] = {}
    for name in EventRows.COLUMNS:
        values, valid = coded[name]
        if keep is not None:
            values, valid = values[keep], None if valid is None else valid[keep]
        if name in codes:
            lut = codes[name]
            cols[name] = (
                dictionary_of(values, texts, valid)
                if lut is None
                else dictionary_of(lut[0][values], lut[1], valid)
            )
        else:
            cols[name] = _arrow(values, valid)
    return pa.table(cols)


def _arrow(values: np.ndarray, valid: np.ndarray | None) -> pa.Array:
    """VALUES (numbers) as Arrow (no copy of contiguous ones), null where not VALID."""
    if valid is None or valid.all():
        return pa.array(values)
    if values.dtype == np.bool_:  # (Arrow's booleans are bits, not numpy's bytes)
        return pa.array(values, mask=~valid)
    values = np.ascontiguousarray(values)  # (its buffer is the array's data as it lies)
    bits = pa.py_buffer(np.packbits(valid, bitorder="little"))
    return pa.Array.from_buffers(pa.from_numpy_dtype(values.dtype), len(values), [bits, pa.py_buffer(values)])


def _events_writer(path: Path) -> Any:
    """The events table's Parquet writer (coded_writer): the sequence and the time
    delta-coded; readers see the plain text columns of _EVENTS_SCHEMA.  A fourth of polars'
    own file, whose text columns it hashes row by row."""
    from goblueprint.timeline.stored import coded_writer

    schema = events_arrow(pl.DataFrame(schema=_CODED_SCHEMA), pa.array([""], pa.string())).schema
    return coded_writer(path, schema, ("seq", "time"))


_KIND_SERIES = pl.Series("kind", _KIND_NAMES, dtype=pl.String)
_RESOURCE_SERIES = pl.Series("resource_kind", _RESOURCE_NAMES, dtype=pl.String)
_STATE_SERIES = pl.Series("state", _STATE_NAMES, dtype=pl.String)

_EVENTS_SCHEMA = {
    "seq": pl.Int64, "time": pl.Int64, "kind": pl.String, "g": pl.Int64, "p": pl.Int64, "m": pl.Int64,
    "stack": pl.UInt32, "resource_kind": pl.String, "resource_id": pl.Int64, "old_state": pl.String,
    "new_state": pl.String, "reason": pl.String, "name": pl.String, "value": pl.Float64,
    "task": pl.Int64, "message": pl.String,
}  # fmt: skip
# The events as EventRows makes them: text columns as codes (kind, resource_kind, the
# states: _KIND_NAMES, _RESOURCE_NAMES, _STATE_NAMES) or pass string ids (reason, name, message).
_CODED_SCHEMA = {
    **_EVENTS_SCHEMA, "kind": pl.UInt8, "resource_kind": pl.UInt8, "old_state": pl.UInt8, "new_state": pl.UInt8,
    "reason": pl.UInt32, "name": pl.UInt32, "message": pl.UInt32,
}  # fmt: skip


@cache
def _event_codes() -> dict[str, Any]:
    """Each coded column's names (stored.distinct_names of them), None for pass string ids."""
    from goblueprint.timeline.stored import distinct_names

    states = distinct_names(_STATE_NAMES)
    return {"kind": distinct_names(_KIND_NAMES), "resource_kind": distinct_names(_RESOURCE_NAMES),
            "old_state": states, "new_state": states, "reason": None, "name": None, "message": None}  # fmt: skip


def goroutines_frame(summary: Summary) -> pl.DataFrame:
    from goblueprint.timeline.metrics import goroutine_stats

    rows = []
    for gid in sorted(summary.goroutines):
        st = goroutine_stats(summary.goroutines[gid])
        rows.append(
            {
                **{
                    k: st[k]
                    for k in (
                        "id",
                        "name",
                        "creation_time",
                        "start_time",
                        "end_time",
                        "exec",
                        "sched_wait",
                        "syscall",
                        "syscall_block",
                        "gc_assist",
                        "sweep",
                        "unknown",
                        "total",
                    )
                },
                "block_total": sum(st["block"].values()),
                "block": [{"reason": r, "ns": ns} for r, ns in st["block"].items()],
            }
        )
    schema = {
        "id": pl.Int64,
        "name": pl.String,
        "creation_time": pl.Int64,
        "start_time": pl.Int64,
        "end_time": pl.Int64,
        "exec": pl.Int64,
        "sched_wait": pl.Int64,
        "syscall": pl.Int64,
        "syscall_block": pl.Int64,
        "gc_assist": pl.Int64,
        "sweep": pl.Int64,
        "unknown": pl.Int64,
        "total": pl.Int64,
        "block_total": pl.Int64,
        "block": pl.List(pl.Struct({"reason": pl.String, "ns": pl.Int64})),
    }
    return pl.DataFrame(rows, schema=schema)


def timeline_tables(tl: Timeline) -> dict[str, pl.DataFrame]:
    """The tables that come from the timeline alone."""
    return {name: make() for name, make in timeline_table_makers(tl).items()}


def timeline_table_makers(tl: Timeline) -> dict[str, Callable[[], pl.DataFrame]]:
    """What makes each table of ``timeline_tables``: one at a time, a writer holds only one."""
    strings = pl.Series("s", tl.strings, dtype=pl.String)

    def metrics() -> pl.DataFrame:
        counters = tl.counters
        return pl.DataFrame(
            [strings.gather(counters["name"]).alias("name"), counters["time"], counters["value"]]
        )

    def stacks() -> pl.DataFrame:
        frames = tl.stack_frames
        return pl.DataFrame(
            [
                frames["stack"],
                frames["depth"],
                frames["pc"],
                strings.gather(frames["func"]).alias("func"),
                strings.gather(frames["file"]).alias("file"),
                frames["line"],
            ]
        )

    return {
        "intervals": lambda: tl.with_names("spans"),
        "metrics": metrics,
        "flows": lambda: tl.with_names("flows"),
        "stacks": stacks,
        "lanes": lambda: tl.with_names("lanes"),
        "states": state_table,
    }


def trace_tables(
    source: Any,
    progress: Callable[[int], None] | None = None,
    *,
    events: bool = True,
    show_capture: bool = False,
) -> dict[str, pl.DataFrame]:
    """Every table of a trace (path, bytes or events), from one pass.

    ``events=False`` leaves out the events table, the costliest one, when it is not needed.
    """
    return tables_pass(source, progress, events=events, show_capture=show_capture)[0]


class TablesPass(NamedTuple):
    tables: dict[str, pl.DataFrame]  # by name, in name order (none if they were written)
    timeline: Timeline
    result: Any  # source.PassResult: the trace's error, version, valid events
    summary: Summary
    profiles: Any  # pprof.StayTables of every profile type, if views asked for them
    utilization: Any  # list[mmu.Series] of mmu.DEFAULT_FLAGS, if views asked for them
    written: dict[str, int] | None = None  # the tables written to WRITE_TO, if given: their rows
    # With TIMELINE_STORED: the ids of the strings each of the Timeline's tables stored as SQL
    # tables names (stored.Used.ids), for its readers.
    texts: dict[str, list[int]] | None = None


def tables_pass(
    source: Any,
    progress: Callable[[int], None] | None = None,
    *,
    events: bool = True,
    show_capture: bool = False,
    views: bool = False,
    write_to: Path | None = None,
    timeline_stored: bool = False,
    stays_to: Path | None = None,
) -> TablesPass:
    """``trace_tables``, with the Timeline they come from, the pass's result (error, version),
    the goroutine summary and, with VIEWS, what pprof and metrics read: the stays of every
    pprof type and the mutator utilization of the default MMU flags.

    WRITE_TO (a directory) writes the tables there as ``<name>.parquet`` instead of returning
    them, held in memory one at a time: the events table (a row group per generation) waits
    on disk beside them chunk by chunk during the pass, it is several times the trace's size.
    TIMELINE_STORED (with WRITE_TO) leaves the Timeline's largest tables to the SQL tables
    written of them (``timeline.stored``): its spans, which wait on disk during the pass, as
    the intervals table, a lane kind at a time, its counters and flows as the metrics and
    flows tables; the Timeline returned has none of the three (its other tables are whole).
    STAYS_TO (a file, with WRITE_TO and VIEWS) writes the stays there as soon as they are
    made, before the events are written: the profiles returned read them back from it (a
    scan), the pass does not hold them through the rest of its work."""
    if write_to is None:
        if timeline_stored or stays_to is not None:
            raise ValueError(
                "tables_pass: timeline_stored and stays_to are for a pass that writes its tables"
            )
        return _tables_pass(
            source, progress, show_capture, views, EventRows() if events else None, None, None, None
        )
    with tempfile.TemporaryDirectory(prefix=".pass-", dir=write_to) as spill:
        rows = EventRows(Path(spill)) if events else None
        spans = (Path(spill), write_to / "intervals.parquet") if timeline_stored else None
        return _tables_pass(source, progress, show_capture, views, rows, write_to, spans, stays_to)


def _tables_pass(
    source: Any,
    progress: Callable[[int], None] | None,
    show_capture: bool,
    views: bool,
    rows: EventRows | None,
    write_to: Path | None,
    # Where the builder spills, the intervals' file.
    spans: tuple[Path, Path] | None,
    stays_to: Path | None,
) -> TablesPass:
    from goblueprint.timeline import stored
    from goblueprint.timeline.builder import TimelineBuilder
    from goblueprint.timeline.mmu import DEFAULT_FLAGS, UtilCollector
    from goblueprint.timeline.pprof import PROFILE_TYPES, StayCollector, StayTables
    from goblueprint.timeline.source import run_pass
    from goblueprint.timeline.summary import Summarizer

    builder = TimelineBuilder(spill=spans[0] if spans is not None else None)
    summarizer = Summarizer()
    consumers: list[Any] = [builder, summarizer]  # the builder, the costliest, first: on a thread
    if rows is not None:
        consumers.append(rows)
    # Stays written to a file of their own spill during the pass (read back to be written).
    stays_spill = spans[0] if spans is not None and stays_to is not None else None
    stays = StayCollector(PROFILE_TYPES, spill=stays_spill) if views else None
    util = UtilCollector(DEFAULT_FLAGS) if views else None
    if stays is not None and util is not None:
        consumers += [stays, util]
    result = run_pass(source, consumers, progress)
    consumers.clear()
    builder.end_of_events(result.last_time)  # its loop's buffers let go of before the stages below
    stacks = result.interner.stacks

    def kept(stays: pl.DataFrame) -> pl.DataFrame:
        return result.marks.stays(stays, stacks, show=show_capture)

    spilled = stays is not None and stays_spill is not None
    stays_table = stays.frame() if stays is not None and not spilled else None
    if stays_table is not None:
        stays_table = kept(stays_table)
    # The tables name the Timeline's stacks: theirs are interned in it before finish().
    named = [rows.stack_ids()] if rows is not None else []
    if stays_table is not None:
        named.append(stays_table["stack"].unique().to_numpy())
    elif spilled:
        named += [kept(p)["stack"].unique().to_numpy() for p in stays.pieces(_STAY_PIECE, ("g", "stack"))]
    lut = timeline_stack_ids(builder, stacks, np.concatenate(named) if named else None)
    stays_lazy: pl.DataFrame | pl.LazyFrame | None = None
    if stays_table is not None:
        stays_lazy = stays_table = with_timeline_stacks(stays_table, lut)
    out: dict[str, pl.DataFrame] = {}
    written: dict[str, int] = {}
    # The stays written (STAYS_TO) on a thread while the events table is made and written
    # here, both before finish(): the events beside finish() kept a row group in the making
    # and one in encoding alive through the spans' sort, the ingest's peak, for no time saved
    # on two cores (8.0-8.2 s either way for a 46 MB trace).
    with WriteBehind() as stays_behind:
        if stays_to is not None and spilled:
            pieces = (with_timeline_stacks(kept(p), lut) for p in stays.pieces(_STAY_PIECE))
            stays_behind.submit(partial(_write_stays, pieces, stays_to, stays))
            stays_lazy = pl.scan_parquet(stays_to)
        elif stays_to is not None and stays_table is not None:
            # statistics: a pprof type's row groups read alone
            stays_behind.submit(partial(stays_table.write_parquet, stays_to, statistics=True))
            stays_lazy, stays_table = pl.scan_parquet(stays_to), None
        del stays  # its blocks of stays, as large as the table, let go of
        if rows is not None:
            if write_to is not None:
                texts = pa.array(list(rows.strings), pa.string())
                written["events"] = write_by_generation(
                    rows.tables(lut, texts, result.marks, show_capture), write_to / "events.parquet"
                )
            else:
                # Chunk by chunk, as the rows are independent: the same table as from the whole.
                events = (
                    result.marks.events(with_timeline_stacks(c, lut), show=show_capture)
                    for c in rows.frames()
                )
                named = [rows.named(chunk) for chunk in events]
                out["events"] = pl.concat(named) if rows.rows else pl.DataFrame(schema=_EVENTS_SCHEMA)
    give_back()  # what the events and stays took, before finish() takes its own
    used = stored.Used()  # the strings the tables stored for the Timeline's name
    if spans is None or write_to is None:
        tl = result.marks.timeline(builder.finish(result.last_time), show=show_capture)
    else:
        tables_to = _TablesWriter(write_to, result.marks, show_capture, used)
        with _SpansWriter(spans[1], result.marks, show_capture, used) as sink:
            finished = builder.finish(result.last_time, spans_to=sink, tables_to=tables_to)
            tl = result.marks.timeline(finished, show=show_capture)
        written["intervals"] = sink.rows
        written.update(tables_to.rows)
    give_back()
    tl.go_version = result.go_version
    summary = result.marks.summary(summarizer.finalize(), show=show_capture)
    makers = {"goroutines": lambda: goroutines_frame(summary), **timeline_table_makers(tl)}
    if spans is not None:
        for name in ("intervals", *_TablesWriter.MADE):
            del makers[name]  # written by the builder's finish()
    # A table written while the next is made; two at once, as the one made while the first is
    # written is held either way (the largest, the metrics, comes first).
    with WriteBehind(threads=2) as behind:
        for name, make in makers.items():
            if write_to is None:
                out[name] = make()
                continue
            df = make()
            behind.submit(partial(df.write_parquet, write_to / f"{name}.parquet", statistics=True))
            written[name] = df.height
            del df  # let go of once written
    stay_tables = None
    if stays_lazy is not None:
        stay_tables = StayTables.of_pass(stays_lazy, summary, tl.stack_frames, tl.strings, result)
    utilization = util.finish() if util is not None else None
    return TablesPass(
        dict(sorted(out.items())),
        tl,
        result,
        summary,
        stay_tables,
        utilization,
        dict(sorted(written.items())) if write_to is not None else None,
        used.ids() if spans is not None and write_to is not None else None,
    )


# Stays read from their spill at a time: a row group of the stored file. At polars' default
# (1 << 18) their write, beside the events', was a 46 MB trace's ingest's peak, 30 MB higher.
_STAY_PIECE = 1 << 16


def _write_stays(pieces: Iterable[pl.DataFrame], path: Path, collector: Any) -> None:
    """The stays of PIECES (STAYS_SCHEMA, a type each, types in order) to PATH, a row group of
    each piece at most: a type's row groups are read alone (statistics); the COLLECTOR's spill
    removed once written."""
    from goblueprint.timeline.pprof import STAYS_SCHEMA
    from goblueprint.timeline.stored import coded, coded_writer

    names = pa.array(collector.names, pa.string())
    enum = pl.Enum(collector.names)
    schema = pa.schema(
        [("type", pa.dictionary(pa.int32(), pa.string()))]
        + [(n, pl.Series([], dtype=t).to_arrow().type) for n, t in STAYS_SCHEMA.items() if n != "type"]
    )
    try:
        # start delta-coded too: rows in end order start near one another, and a dictionary of
        # nearly unique times was hashed row by row before the writer gave it up (the 30 MB
        # trace's stays: 11.4 MB, 6.3 MB so, and half the encoding).
        with coded_writer(path, schema, ("start", "end", "end_seq"), sorted_texts=("type",)) as w:
            wrote = False
            for piece in pieces:
                if not piece.height:
                    continue
                types = coded(piece["type"].cast(enum).to_physical().to_numpy(), names)
                cols = [types] + [piece[n].to_arrow() for n in schema.names[1:]]
                w.write_table(pa.Table.from_arrays(cols, schema=schema))
                wrote = True
            if not wrote:
                w.write_table(schema.empty_table())
    finally:
        collector.remove()


class _TablesWriter:
    """The sink of the other large tables of a spilling builder's finish(): its counters and
    flows (flows without capture's goroutines, MARKS unless SHOW), each written to DIRECTORY
    as the SQL table made of it (metrics, flows; also the Timeline's, see timeline.stored) and
    let go of before finish() makes the next."""

    MADE = ("metrics", "flows")  # the SQL tables it writes

    def __init__(self, directory: Path, marks: Any, show: bool, used: Any) -> None:
        self.directory, self.marks, self.show, self.used = directory, marks, show, used
        self.rows: dict[str, int] = {}

    def __call__(self, name: str, table: pl.DataFrame | Iterable[pl.DataFrame], strings: list[str]) -> None:
        """TABLE whole, or as pieces in order (stored.write_table's)."""
        from goblueprint.timeline import stored

        if name == "flows":  # capture's flows left out as marks.timeline leaves them out
            table = (
                self._flows(table, strings)
                if isinstance(table, pl.DataFrame)
                else (self._flows(piece, strings) for piece in table)
            )
        sql = stored.SQL_TABLE[name]
        self.rows[sql] = stored.write_table(
            self.directory / f"{sql}.parquet", name, table, strings, self.used
        )

    def _flows(self, flows: pl.DataFrame, strings: list[str]) -> pl.DataFrame:
        return self.marks.timeline(Timeline(strings=strings, flows=flows), show=self.show).flows


class _SpansWriter:
    """The sink of a spilling builder's finish(): each lane kind's spans, without capture's
    lanes (MARKS, unless SHOW), written with their names to INTERVALS (the SQL table, also
    the Timeline's spans: timeline.stored); row groups of a lane kind at most."""

    def __init__(self, intervals: Path, marks: Any, show: bool, used: Any) -> None:
        from goblueprint.timeline import stored

        self.marks, self.show, self.used = marks, show, used
        self._writer = stored.writer(intervals, "spans")
        # Encoded on a thread of its own while the next piece is sorted and named: a sorted
        # piece's row groups all queued (builder._SPAN_SORT rows, a row group, held anyway
        # until encoded), so the sort of the next runs beside their encoding; with the
        # sorter waiting for the writer it never holds more.
        self._behind = WriteBehind(ahead=_SPANS_AHEAD)
        self._texts: tuple[int, Any] = (-1, None)  # the strings as Arrow, made once
        self._rest: pl.DataFrame | None = None  # rows of a row group still to come
        self.rows = 0

    def __call__(self, spans: pl.DataFrame, strings: list[str], cut: bool = True) -> None:
        """SPANS, the next rows of the table; CUT: the row group in the making ends with them
        (else the rows short of a whole group wait for the next call's)."""
        from goblueprint.timeline import stored

        spans = self.marks.spans(spans, show=self.show)
        if self._rest is not None:
            spans = pl.concat([self._rest, spans], rechunk=False)
            self._rest = None
        if self._texts[0] != len(strings):
            self._texts = (len(strings), pa.array(strings, pa.string()))
        self.used.add("spans", spans["label"].to_numpy(), strings)
        whole = spans.height if cut else spans.height - spans.height % _SPAN_ROW_GROUP
        for lo in range(0, whole, _SPAN_ROW_GROUP):
            group = stored.named_arrow(
                "spans", spans.slice(lo, min(_SPAN_ROW_GROUP, whole - lo)), self._texts[1]
            )
            self._behind.submit(self._writer.write_table, group)
        if whole < spans.height:
            self._rest = spans.slice(whole)
        self.rows += whole

    def __enter__(self) -> _SpansWriter:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        try:
            self._behind.__exit__(kind, exc, tb)
            if self._rest is not None and exc is None:  # every lane kind's last piece cuts
                raise ValueError("spans writer: rows left over with no piece ending their row group")
        finally:
            if self.rows == 0 and exc is None:
                self._writer.write_table(self._writer.schema.empty_table())
            self._writer.close()


_SPAN_ROW_GROUP = 1 << 18  # as polars writes a table (stored.ROW_GROUP)
_SPANS_AHEAD = 1  # row groups queued for the spans' writer: a sort piece's (builder._SPAN_SORT)


class _Frames:
    """Interned frames as the Event API's Stack (frames() and truthiness), as stack_id takes."""

    __slots__ = ("_frames",)

    def __init__(self, frames: tuple[Any, ...]) -> None:
        self._frames = frames

    def frames(self) -> tuple[Any, ...]:
        return self._frames

    def __bool__(self) -> bool:
        return bool(self._frames)


def timeline_stack_ids(builder: Any, stacks: list[tuple[Any, ...]], ids: np.ndarray | None) -> np.ndarray:
    """Pass Interner stack id -> the Timeline's (uint32), for IDS (others 0): each stack is
    interned in BUILDER once, so its frames are in the Timeline finish() makes afterwards."""
    if ids is None or not len(ids):
        return np.zeros(1, np.uint32)
    ids = unique(ids)
    lut = np.zeros(int(ids[-1]) + 1, np.uint32)
    for sid in ids.tolist():
        if sid:
            lut[sid] = builder.stack_id(_Frames(stacks[sid]))
    return lut


def with_timeline_stacks(table: pl.DataFrame, lut: np.ndarray) -> pl.DataFrame:
    """TABLE with its ``stack`` column (pass Interner ids) mapped through LUT (timeline_stack_ids)."""
    mapped = lut[table["stack"].to_numpy().astype(np.int64)] if table.height else np.zeros(0, np.uint32)
    return table.with_columns(pl.Series("stack", mapped, dtype=pl.UInt32))


def write_parquet(
    timeline_or_path: Timeline | str | os.PathLike[str] | Iterable[Any], out_dir: str | os.PathLike[str]
) -> list[Path]:
    """Write the tables as OUT_DIR/<table>.parquet; returns the files written.

    Given a trace (path, Reader or events), all tables are written (events, intervals, goroutines,
    metrics, flows, stacks, lanes, states).  Given an already built Timeline,
    only the tables that come from it are (no events, no goroutines).
    """
    if isinstance(timeline_or_path, Timeline):
        tables = timeline_tables(timeline_or_path)
    else:
        tables = trace_tables(timeline_or_path)
    return write_frames(tables, out_dir)


def write_frames(tables: dict[str, pl.DataFrame], out_dir: str | os.PathLike[str]) -> list[Path]:
    """Write each table as OUT_DIR/<name>.parquet (the directory made if needed); returns the files."""
    return write_table_files(
        out_dir,
        {name: (lambda path, df=df: df.write_parquet(path, statistics=True)) for name, df in tables.items()},
    )


def write_table_files(
    out_dir: str | os.PathLike[str], writers: dict[str, Callable[[Path], None]]
) -> list[Path]:
    """Make OUT_DIR and call each WRITERS[name](OUT_DIR/<name>.parquet), in name order; returns
    the files.  Any OSError becomes a PathError naming the path the user asked for."""
    out = Path(out_dir)
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:  # name the directory asked for, not the parent that failed
        raise PathError.from_os(out, exc, write=True) from None
    try:
        written = []
        for name, write in sorted(writers.items()):
            path = out / f"{name}.parquet"
            write(path)
            written.append(path)
    except OSError as exc:
        raise PathError.from_os(exc.filename or out, exc, write=True) from None
    return written
