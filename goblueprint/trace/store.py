"""A columnar store of trace events: numpy columns per generation, polars for users.

The reader yields one light ``Event`` at a time; analyses that look at millions of
them want columns.  ``iter_generations`` turns the event stream into one
``GenerationColumns`` per generation (a new generation starts at each Sync event,
which Go's reader emits at every generation boundary), so memory is bounded by
one generation when the caller consumes them as they come.  ``EventStore`` keeps
them all and builds a single polars DataFrame at the end (never a Python object
per row).

Strings (reasons, names, categories, messages) are interned into one table of the
store; stacks are interned by their frames, so equal stacks of different
generations share one id.  Id 0 is the empty string / the empty stack.

Columns (one row per event, in the reader's order):

=================  ======  =====================================================
generation         int32   0-based index of the generation (a Sync starts one; the
                           Sync Go emits at the very end joins the last one)
kind               uint8   EventKind value
time               int64   Go's Event.Time, ns
goroutine/proc/    int64   the event's scheduling context (-1 = none)
thread
stack              int32   interned stack of the event (0 = none)
resource_kind      uint8   ResourceKind of the resource the event is about: the
resource_id        int64   transition's resource, a range's scope, a label's goroutine
old_state          int8    state transition: old/new GoState or ProcState (-1 = n/a)
new_state          int8
reason             int32   string id: transition reason (-1 = n/a)
transition_stack   int32   interned stack of the transition (0 = none)
name               int32   string id: metric / range / label / task type /
                           region type / log category / experimental name (-1 = n/a)
message            int32   string id: log message (-1 = n/a)
value              uint64  metric value (valid where kind == METRIC)
task               uint64  task id of task/region/log events (valid there)
parent_task        uint64  parent of a task (valid for task events)
=================  ======  =====================================================
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from goblueprint.errors import TraceError
from goblueprint.trace.events import KIND_OF, EventKind, StackFrame

if TYPE_CHECKING:
    import polars as pl

# Column name -> numpy dtype; the order is the frame's column order.
COLUMNS: dict[str, np.dtype] = {
    "generation": np.dtype(np.int32),
    "kind": np.dtype(np.uint8),
    "time": np.dtype(np.int64),
    "goroutine": np.dtype(np.int64),
    "proc": np.dtype(np.int64),
    "thread": np.dtype(np.int64),
    "stack": np.dtype(np.int32),
    "resource_kind": np.dtype(np.uint8),
    "resource_id": np.dtype(np.int64),
    "old_state": np.dtype(np.int8),
    "new_state": np.dtype(np.int8),
    "reason": np.dtype(np.int32),
    "transition_stack": np.dtype(np.int32),
    "name": np.dtype(np.int32),
    "message": np.dtype(np.int32),
    "value": np.dtype(np.uint64),
    "task": np.dtype(np.uint64),
    "parent_task": np.dtype(np.uint64),
}
STRING_COLUMNS = ("reason", "name", "message")
KIND_NAMES = tuple(k.name for k in EventKind)

_ST = int(EventKind.STATE_TRANSITION)
_METRIC = int(EventKind.METRIC)
_LABEL = int(EventKind.LABEL)
_RANGES = frozenset({int(EventKind.RANGE_BEGIN), int(EventKind.RANGE_ACTIVE), int(EventKind.RANGE_END)})
_TASKS = frozenset({int(EventKind.TASK_BEGIN), int(EventKind.TASK_END)})
_REGIONS = frozenset({int(EventKind.REGION_BEGIN), int(EventKind.REGION_END)})
_LOG = int(EventKind.LOG)
_SYNC = int(EventKind.SYNC)
_EXPERIMENTAL = int(EventKind.EXPERIMENTAL)


@dataclass(slots=True)
class GenerationColumns:
    """One generation's events as numpy columns (see the module docstring)."""

    index: int
    columns: dict[str, np.ndarray]

    def __len__(self) -> int:
        return len(self.columns["kind"])


@dataclass
class Interner:
    """Store-wide string and stack tables, shared by all generations."""

    strings: list[str] = field(default_factory=lambda: [""])
    stacks: list[tuple[StackFrame, ...]] = field(default_factory=lambda: [()])
    _string_ids: dict[str, int] = field(default_factory=lambda: {"": 0})
    _stack_ids: dict[tuple[StackFrame, ...], int] = field(default_factory=lambda: {(): 0})
    # Per generation table: the reader's stack id -> our id (reset when the table changes).
    _table: object = None
    _local: dict[int, int] = field(default_factory=dict)

    def string(self, s: str) -> int:
        sid = self._string_ids.get(s)
        if sid is None:
            sid = self._string_ids[s] = len(self.strings)
            self.strings.append(s)
        return sid

    def stack(self, stack) -> int:
        """Our id of a reader Stack; frames are fetched once per stack and generation."""
        if not stack:
            return 0
        table = stack.table
        if table is not self._table:
            self._table = table
            self._local = {}
        local = self._local.get(stack.id)
        if local is None:
            frames = tuple(stack.frames())
            local = self._stack_ids.get(frames)
            if local is None:
                local = self._stack_ids[frames] = len(self.stacks)
                self.stacks.append(frames)
            self._local[stack.id] = local
        return local


def _finish(rows: list[tuple], index: int) -> GenerationColumns:
    """Rows (one tuple per event, in COLUMNS order) to numpy columns, transposed in C."""
    columns = zip(*rows, strict=True) if rows else [() for _ in COLUMNS]
    cols = {
        name: np.array(col, dtype=dtype) for (name, dtype), col in zip(COLUMNS.items(), columns, strict=True)
    }
    return GenerationColumns(index, cols)


def iter_generations(events: Iterable, interner: Interner | None = None) -> Iterator[GenerationColumns]:
    """Stream events into per-generation columns; each generation is yielded when complete.

    A TraceError from the event source propagates after the columns of the events
    read so far in the current generation were yielded (Go's reader, too, yields
    events before failing), so callers that want the partial trace keep it.
    """
    it = Interner() if interner is None else interner
    string = it.string
    stack_of = it.stack
    # One tuple per event, appended once: cheaper than one append per column.
    rows: list[tuple] = []
    append = rows.append
    # The last finished generation is held back until the next one proves to be more
    # than the lone Sync Go emits at the very end, which then joins it instead.
    held: GenerationColumns | None = None
    index = 0
    error: TraceError | None = None
    try:
        for ev in events:
            kind = KIND_OF[ev.typ]
            if kind == _SYNC and rows:
                if held is not None:
                    yield held
                held = _finish(rows, index)
                index += 1
                rows = []
                append = rows.append
            stk = ev.stack
            sid = stack_of(stk) if stk.id else 0
            if kind == _ST:
                st = ev.state_transition()
                res = st.resource
                tstk = st.stack
                append((index, kind, ev.time, ev.goroutine, ev.proc, ev.thread, sid, int(res.kind), res.id,
                        st.old, st.new, string(st.reason), stack_of(tstk) if tstk.id else 0,
                        -1, -1, 0, 0, 0))  # fmt: skip
                continue
            rkind, rid, name, message, value, task, parent = 0, 0, -1, -1, 0, 0, 0
            if kind == _METRIC:
                m = ev.metric()
                name, value = string(m.name), m.value.scalar
            elif kind in _RANGES:
                r = ev.range()
                name, rkind, rid = string(r.name), int(r.scope.kind), r.scope.id
            elif kind == _LABEL:
                lb = ev.label()
                name, rkind, rid = string(lb.label), int(lb.resource.kind), lb.resource.id
            elif kind in _TASKS:
                t = ev.task()
                name, task, parent = string(t.type), t.id, t.parent
            elif kind in _REGIONS:
                rg = ev.region()
                name, task = string(rg.type), rg.task
            elif kind == _LOG:
                lg = ev.log()
                name, message, task = string(lg.category), string(lg.message), lg.task
            elif kind == _EXPERIMENTAL:
                name = string(ev.experimental().name)
            append((index, kind, ev.time, ev.goroutine, ev.proc, ev.thread, sid, rkind, rid,
                    -1, -1, -1, 0, name, message, value, task, parent))  # fmt: skip
    except TraceError as exc:
        error = exc
    last = _finish(rows, index) if rows else None
    if held is not None and last is not None and len(last) == 1 and last.columns["kind"][0] == _SYNC:
        last.columns["generation"][:] = held.index
        held = GenerationColumns(
            held.index, {k: np.concatenate([v, last.columns[k]]) for k, v in held.columns.items()}
        )
        last = None
    for gen in (held, last):
        if gen is not None:
            yield gen
    if error is not None:
        raise error


class EventStore:
    """All generations of a trace as columns, with the interned strings and stacks."""

    def __init__(self) -> None:
        self.interner = Interner()
        self.generations: list[GenerationColumns] = []
        self.error: TraceError | None = None  # set by from_events(strict=False)

    @property
    def strings(self) -> list[str]:
        return self.interner.strings

    @property
    def stacks(self) -> list[tuple[StackFrame, ...]]:
        return self.interner.stacks

    @classmethod
    def from_events(cls, events: Iterable, *, strict: bool = True) -> EventStore:
        """Columns of every event; strict=False keeps what was read before a TraceError."""
        store = cls()
        try:
            for gen in iter_generations(events, store.interner):
                store.generations.append(gen)
        except TraceError as exc:
            if strict:
                raise
            store.error = exc
        return store

    @classmethod
    def open(cls, path: str | Path, *, strict: bool = True) -> EventStore:
        from goblueprint.trace.reader import open_trace

        with open_trace(path) as reader:
            return cls.from_events(reader, strict=strict)

    def __len__(self) -> int:
        return sum(len(g) for g in self.generations)

    def column(self, name: str) -> np.ndarray:
        """One column over all generations."""
        if name not in COLUMNS:
            raise KeyError(name)
        if not self.generations:
            return np.empty(0, dtype=COLUMNS[name])
        return np.concatenate([g.columns[name] for g in self.generations])

    def to_polars(self) -> pl.DataFrame:
        """One DataFrame of all events: ids decoded to strings, n/a fields as nulls."""
        import polars as pl

        cols = {name: self.column(name) for name in COLUMNS}
        kind = cols["kind"]
        strings = pl.Series("strings", self.strings, dtype=pl.String)
        kind_names = pl.Series("kind", KIND_NAMES, dtype=pl.String)
        na = {
            "old_state": cols["old_state"] < 0,
            "new_state": cols["new_state"] < 0,
            "value": kind != _METRIC,
            "task": ~np.isin(kind, sorted(_TASKS | _REGIONS | {_LOG})),
            "parent_task": ~np.isin(kind, sorted(_TASKS)),
        }
        data: dict[str, pl.Series] = {}
        for name, arr in cols.items():
            if name == "kind":
                series = kind_names.gather(arr.astype(np.int64)).cast(pl.Enum(KIND_NAMES))
            elif name in STRING_COLUMNS:
                na[name] = arr < 0
                series = strings.gather(np.where(na[name], 0, arr).astype(np.int64))
            else:
                series = pl.Series(name, arr)
            if name in na and na[name].any():
                # Gathered and native series alike: nulls only where the field does not apply.
                series = series.scatter(np.flatnonzero(na[name]), None)
            data[name] = series.alias(name)
        return pl.DataFrame(data)

    def stacks_frame(self) -> pl.DataFrame:
        """The interned stacks, one row per frame: stack, depth, pc, func, file, line."""
        import polars as pl

        rows = [(sid, depth, f.pc, f.func, f.file, f.line)
                for sid, frames in enumerate(self.stacks) for depth, f in enumerate(frames)]  # fmt: skip
        schema = {
            "stack": pl.Int32,
            "depth": pl.Int32,
            "pc": pl.UInt64,
            "func": pl.String,
            "file": pl.String,
            "line": pl.Int64,
        }
        return pl.DataFrame(rows, schema=schema, orient="row")


def events_frame(path: str | Path) -> pl.DataFrame:
    """All events of the trace at PATH as one polars DataFrame (see EventStore.to_polars)."""
    return EventStore.open(path).to_polars()
