"""A columnar store of trace events: numpy columns per generation, polars for users.

The reader hands each generation over as numpy columns (``Reader.chunks``);
``iter_generations`` derives the store's columns from those with one numpy pass
per wire type present (what each wire type means is the data tables below, the
table form of events.py's accessors), never a Python object per event.  It
yields one ``GenerationColumns`` per generation (a new generation starts at each
Sync event, which Go's reader emits at every generation boundary), so memory is
bounded by one generation when the caller consumes them as they come.
``EventStore`` keeps them all and builds a single polars DataFrame at the end.

Strings (reasons, names, categories, messages) are interned into one table of the
store; stacks are interned by their frames, so equal stacks of different
generations share one id.  Per generation, each distinct string or stack ID is
looked up once; rows then take their ids by numpy indexing.  Id 0 is the empty
string / the empty stack.  The store's strings and frames are text every writer takes
(Arrow, Parquet, polars, JSON, protobuf): a byte that is not UTF-8, which the reader
keeps as a lone surrogate so that the dump prints it as Go does, is U+FFFD here, as
Go's encoding/json writes it for the trace viewer.

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

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from goblueprint.arrays import unique
from goblueprint.errors import TraceError
from goblueprint.trace import spec
from goblueprint.trace.events import (
    EV_SYNC_EVENT,
    EXTRA_BASE,
    GO_STATUS_TO_STATE,
    KIND_OF,
    MAIN_STACK_ARG,
    PROC_STATUS_TO_STATE,
    EventKind,
    GoState,
    ProcState,
    ResourceKind,
    StackFrame,
)

if TYPE_CHECKING:
    import polars as pl

    from goblueprint.trace.reader import Chunk

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

_METRIC = int(EventKind.METRIC)
_SYNC = int(EventKind.SYNC)
_TASKS = frozenset({int(EventKind.TASK_BEGIN), int(EventKind.TASK_END)})
_REGIONS = frozenset({int(EventKind.REGION_BEGIN), int(EventKind.REGION_END)})
_LOG = int(EventKind.LOG)

# ---------------------------------------------------------------------------
# What each wire type means, as data (the table form of events.py's accessors).

_KIND_LUT = np.array(KIND_OF, dtype=np.uint8)
# Index into args of the event's own stack ID, -1 = none (Event.stack: a CPU sample's is args[0]).
_STACK_ARG = np.array(MAIN_STACK_ARG, dtype=np.int8)
_STACK_ARG[spec.EV_CPU_SAMPLE] = 0
_STACK_ARG[EV_SYNC_EVENT] = -1

G, P = int(ResourceKind.GOROUTINE), int(ResourceKind.PROC)
# Sources of a resource ID: the event's G, its P, or int64(args[0]).
_FROM_G, _FROM_P, _FROM_A0 = 0, 1, 2
# Old/new states that are not constants.
_OLD_STEAL, _OLD_EXTRA0, _STATUS_P, _STATUS_G = -10, -11, -12, -13

# State transitions (Event.state_transition): wire type -> (resource kind, resource ID source,
# old state, new state, reason is the string args[0], transition stack arg index or -1).
_TRANSITIONS: dict[int, tuple[int, int, int, int, bool, int]] = {
    spec.EV_PROC_START: (P, _FROM_A0, ProcState.IDLE, ProcState.RUNNING, False, -1),
    spec.EV_PROC_STOP: (P, _FROM_P, ProcState.RUNNING, ProcState.IDLE, False, -1),
    spec.EV_PROC_STEAL: (P, _FROM_A0, _OLD_STEAL, ProcState.IDLE, False, -1),
    spec.EV_PROC_STATUS: (P, _FROM_A0, _OLD_EXTRA0, _STATUS_P, False, -1),
    # Go builds GoCreate's transition Stack from the new goroutine's stack argument.
    spec.EV_GO_CREATE: (G, _FROM_A0, GoState.NOT_EXIST, GoState.RUNNABLE, False, 1),
    spec.EV_GO_CREATE_BLOCKED: (G, _FROM_A0, GoState.NOT_EXIST, GoState.WAITING, False, 1),
    spec.EV_GO_CREATE_SYSCALL: (G, _FROM_A0, GoState.NOT_EXIST, GoState.SYSCALL, False, -1),
    spec.EV_GO_START: (G, _FROM_A0, GoState.RUNNABLE, GoState.RUNNING, False, -1),
    spec.EV_GO_DESTROY: (G, _FROM_G, GoState.RUNNING, GoState.NOT_EXIST, False, -1),
    spec.EV_GO_DESTROY_SYSCALL: (G, _FROM_G, GoState.SYSCALL, GoState.NOT_EXIST, False, -1),
    spec.EV_GO_STOP: (G, _FROM_G, GoState.RUNNING, GoState.RUNNABLE, True, MAIN_STACK_ARG[spec.EV_GO_STOP]),
    spec.EV_GO_BLOCK: (G, _FROM_G, GoState.RUNNING, GoState.WAITING, True, MAIN_STACK_ARG[spec.EV_GO_BLOCK]),
    spec.EV_GO_UNBLOCK: (G, _FROM_A0, GoState.WAITING, GoState.RUNNABLE, False, -1),
    spec.EV_GO_SWITCH: (G, _FROM_A0, GoState.WAITING, GoState.RUNNABLE, False, -1),
    spec.EV_GO_SWITCH_DESTROY: (G, _FROM_A0, GoState.WAITING, GoState.RUNNABLE, False, -1),
    spec.EV_GO_SYSCALL_BEGIN: (
        G, _FROM_G, GoState.RUNNING, GoState.SYSCALL, False, MAIN_STACK_ARG[spec.EV_GO_SYSCALL_BEGIN],
    ),
    spec.EV_GO_SYSCALL_END: (G, _FROM_G, GoState.SYSCALL, GoState.RUNNING, False, -1),
    spec.EV_GO_SYSCALL_END_BLOCKED: (G, _FROM_G, GoState.SYSCALL, GoState.RUNNABLE, False, -1),
    spec.EV_GO_STATUS: (G, _FROM_A0, _STATUS_G, _STATUS_G, False, MAIN_STACK_ARG[spec.EV_GO_STATUS]),
    spec.EV_GO_STATUS_STACK: (
        G, _FROM_A0, _STATUS_G, _STATUS_G, False, MAIN_STACK_ARG[spec.EV_GO_STATUS_STACK],
    ),
}  # fmt: skip

# Metrics (Event.metric): wire type -> name; the value is args[0].
_METRICS: dict[int, str] = {
    spec.EV_PROCS_CHANGE: "/sched/gomaxprocs:threads",
    spec.EV_HEAP_ALLOC: "/memory/classes/heap/objects:bytes",
    spec.EV_HEAP_GOAL: "/gc/heap/goal:bytes",
}

# Ranges (Event.range): wire type -> (name, or None for "stop-the-world (<args[0] string>)",
# scope kind, scope ID source).
_RANGES: dict[int, tuple[str | None, int, int]] = {
    spec.EV_STW_BEGIN: (None, G, _FROM_G),
    spec.EV_STW_END: (None, G, _FROM_G),
    spec.EV_GC_BEGIN: ("GC concurrent mark phase", int(ResourceKind.NONE), -1),
    spec.EV_GC_ACTIVE: ("GC concurrent mark phase", int(ResourceKind.NONE), -1),
    spec.EV_GC_END: ("GC concurrent mark phase", int(ResourceKind.NONE), -1),
    spec.EV_GC_SWEEP_BEGIN: ("GC incremental sweep", P, _FROM_P),
    spec.EV_GC_SWEEP_ACTIVE: ("GC incremental sweep", P, _FROM_A0),
    spec.EV_GC_SWEEP_END: ("GC incremental sweep", P, _FROM_P),
    spec.EV_GC_MARK_ASSIST_BEGIN: ("GC mark assist", G, _FROM_G),
    spec.EV_GC_MARK_ASSIST_ACTIVE: ("GC mark assist", G, _FROM_A0),
    spec.EV_GC_MARK_ASSIST_END: ("GC mark assist", G, _FROM_G),
}

# Wire types whose fields come from table strings, as data: wire type ->
# (name arg, message arg, task arg, parent arg); -1 = the field does not apply.
_USER: dict[int, tuple[int, int, int, int]] = {
    spec.EV_USER_TASK_BEGIN: (2, -1, 0, 1),
    spec.EV_USER_REGION_BEGIN: (1, -1, 0, -1),
    spec.EV_USER_REGION_END: (1, -1, 0, -1),
    spec.EV_USER_LOG: (1, 2, 0, -1),
}

_GO_STATUS_LUT = np.array([int(s) for s in GO_STATUS_TO_STATE], dtype=np.int8)
_PROC_STATUS_LUT = np.array([int(s) for s in PROC_STATUS_TO_STATE], dtype=np.int8)


@dataclass(slots=True)
class GenerationColumns:
    """One generation's events as numpy columns (see the module docstring)."""

    index: int
    columns: dict[str, np.ndarray]

    def __len__(self) -> int:
        return len(self.columns["kind"])


# The lone surrogates that surrogateescape decoding makes of the bytes that are not UTF-8.
_UNDECODED = re.compile("[\udc80-\udcff]")


def valid_text(s: str) -> str:
    """S with each byte the reader could not decode (a Go string is any bytes) as U+FFFD:
    Arrow, polars and every encoder refuse lone surrogates."""
    return s if s.isascii() else _UNDECODED.sub("\ufffd", s)


def _valid_frames(frames: tuple[StackFrame, ...]) -> tuple[StackFrame, ...]:
    if all(f.func.isascii() and f.file.isascii() for f in frames):
        return frames
    return tuple(f._replace(func=valid_text(f.func), file=valid_text(f.file)) for f in frames)


@dataclass
class Interner:
    """Store-wide string and stack tables, shared by all generations."""

    strings: list[str] = field(default_factory=lambda: [""])
    stacks: list[tuple[StackFrame, ...]] = field(default_factory=lambda: [()])
    _string_ids: dict[str, int] = field(default_factory=lambda: {"": 0})
    _stack_ids: dict[tuple[StackFrame, ...], int] = field(default_factory=lambda: {(): 0})
    # Per generation table: the reader's stack / string id -> our id (reset when the table changes).
    _table: object = None
    _local: dict[int, int] = field(default_factory=dict)
    _local_strings: dict[int, int] = field(default_factory=dict)
    _stack_order: np.ndarray | None = None
    _stack_lut: np.ndarray | None = None  # the table's stack id -> our id (-1: not met yet)

    def string(self, s: str) -> int:
        sid = self._string_ids.get(s)
        if sid is None:
            sid = self._string_ids[s] = len(self.strings)
            self.strings.append(valid_text(s))
        return sid

    def _use_table(self, table) -> None:
        if table is not self._table:
            self._table = table
            self._local = {}
            self._local_strings = {}
            self._stack_order = None
            self._stack_lut = None

    def _frames_id(self, frames: tuple[StackFrame, ...]) -> int:
        sid = self._stack_ids.get(frames)
        if sid is None:
            sid = self._stack_ids[frames] = len(self.stacks)
            self.stacks.append(_valid_frames(frames))
        return sid

    def frames_id(self, frames: tuple[StackFrame, ...]) -> int:
        """Our id of a stack given by its frames (a source without the reader's stack tables)."""
        return self._frames_id(frames)

    def stack(self, stack) -> int:
        """Our id of a reader Stack; frames are fetched once per stack and generation."""
        if not stack:
            return 0
        self._use_table(stack.table)
        local = self._local.get(stack.id)
        if local is None:
            local = self._local[stack.id] = self._frames_id(tuple(stack.frames()))
        return local

    def stack_ids(self, table, raw: np.ndarray) -> np.ndarray:
        """Our ids (int32) of the table's stack IDs RAW: each distinct stack's frames read once.

        An ID the table does not know, or a stack without frames, is 0 (as a falsy
        reader Stack is).
        """
        if table is None or not raw.any():
            return np.zeros(len(raw), np.int32)
        self._use_table(table)
        lut = self._stack_lut
        if lut is None:
            known = table.stack_ids
            top = int(known.max()) if len(known) else 0
            if top >= 4 * len(known) + (1 << 16):  # sparse ids: no direct table
                uniq, inv = np.unique(raw, return_inverse=True)
                return self._stack_ids_of(table, uniq)[inv.reshape(-1)]
            # The generation's ids, numbered from 1, index a table of ours (-1: not met yet),
            # so a chunk costs a gather, not a sort of its ids.
            lut = self._stack_lut = np.full(top + 1, -1, np.int32)
        inside = raw < len(lut)  # the others are ids the table does not know: 0
        out = lut[np.where(inside, raw, 0).astype(np.intp)]
        out[~inside] = 0
        new = out < 0
        if new.any():
            first = unique(raw[new])
            lut[first.astype(np.intp)] = self._stack_ids_of(table, first)
            out[new] = lut[raw[new].astype(np.intp)]
        return out

    def _stack_ids_of(self, table, uniq: np.ndarray) -> np.ndarray:
        """Our ids (int32) of the table's distinct stack ids UNIQ (sorted)."""
        local = self._local
        known = table.stack_ids
        order = self._stack_order
        if order is None:
            order = self._stack_order = np.argsort(known, kind="stable")
        mapped = np.zeros(len(uniq), np.int32)
        missing = [k for k, sid in enumerate(uniq.tolist()) if sid not in local]
        if missing:
            want = uniq[missing]
            pos = np.searchsorted(known, want, sorter=order).clip(0, max(len(known) - 1, 0))
            hit = order[pos] if len(known) else pos
            strings = table.strings
            pcs, funcs, files, lines = table.frame_pc, table.frame_func, table.frame_file, table.frame_line
            for sid, k in zip(want.tolist(), hit.tolist(), strict=True):
                lo, hi = int(table.stack_lo[k]), int(table.stack_hi[k])
                if not len(known) or int(known[k]) != sid or hi <= lo:
                    local[sid] = 0
                    continue
                frames = tuple(
                    StackFrame(pc, strings[fn], strings[fl], ln)
                    for pc, fn, fl, ln in zip(
                        pcs[lo:hi].tolist(), funcs[lo:hi].tolist(), files[lo:hi].tolist(),
                        lines[lo:hi].tolist(), strict=True,
                    )
                )  # fmt: skip
                local[sid] = self._frames_id(frames)
        for k, sid in enumerate(uniq.tolist()):
            mapped[k] = local[sid]
        return mapped

    def string_ids(self, table, raw: np.ndarray, fmt: str | None = None) -> np.ndarray:
        """Our ids (int32) of the table's string IDs RAW (each distinct one looked up once).

        With FMT, each string is FMT.format(s) (not cached: used by rare events only).
        """
        self._use_table(table)
        uniq, inv = _distinct_inverse(raw)
        strings = table.strings
        if fmt is None:
            local = self._local_strings
            ids = []
            for sid in uniq.tolist():
                our = local.get(sid)
                if our is None:
                    our = local[sid] = self.string(strings[sid])
                ids.append(our)
        else:
            ids = [self.string(fmt.format(strings[sid])) for sid in uniq.tolist()]
        return np.array(ids, dtype=np.int32)[inv.reshape(-1)]


def _distinct_inverse(raw: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``np.unique(RAW, return_inverse=True)`` of a chunk's string ids: through a table of which
    ids occur when they lie in a range about RAW's size (a generation's string ids are
    numbered from 1), where sorting them cost a tenth of the chunk's columns."""
    if len(raw):
        lo, hi = int(raw.min()), int(raw.max())
        if hi - lo < 4 * len(raw) + 4096:  # (from the smallest: an id below 0 would wrap)
            seen = np.zeros(hi - lo + 1, np.bool_)
            at = raw.astype(np.intp) - lo
            seen[at] = True
            uniq = (np.flatnonzero(seen) + lo).astype(raw.dtype)
            rank = np.cumsum(seen, dtype=np.intp) - 1
            return uniq, rank[at]
    uniq, inv = np.unique(raw, return_inverse=True)
    return uniq, inv.reshape(-1)


def _status_states(status: np.ndarray, lut: np.ndarray) -> np.ndarray:
    """Wire statuses to API states; unknown statuses are Undetermined (0), as in Go."""
    ok = status < len(lut)
    return np.where(ok, lut[np.where(ok, status, 0).astype(np.int64)], 0).astype(np.int8)


def _empty(n: int) -> dict[str, np.ndarray]:
    """Columns of N rows with every per-kind field at its n/a value."""
    cols = {name: np.zeros(n, dtype) for name, dtype in COLUMNS.items() if name != "generation"}
    for name in ("old_state", "new_state", "reason", "name", "message"):
        cols[name].fill(-1)
    return cols


def chunk_columns(chunk: Chunk, it: Interner) -> dict[str, np.ndarray]:
    """The store's columns (all but generation) of one chunk, one numpy pass per wire type."""
    typ = chunk.typ
    n = len(typ)
    table = chunk.table
    args = chunk.args
    a0s = args[:, 0].view(np.int64) if n else np.zeros(0, np.int64)  # Go's int64(uint64) of an ID
    cols = _empty(n)
    cols["kind"] = _KIND_LUT[typ]
    cols["time"] = chunk.ts.astype(np.int64, copy=False)
    cols["goroutine"] = g = chunk.g.astype(np.int64, copy=False)
    cols["proc"] = p = chunk.p.astype(np.int64, copy=False)
    cols["thread"] = chunk.m.astype(np.int64, copy=False)
    sarg = _STACK_ARG[typ]
    has = np.flatnonzero(sarg >= 0)
    if len(has):
        raw = np.zeros(n, np.uint64)
        raw[has] = args[has, sarg[has]]
        cols["stack"] = it.stack_ids(table, raw)
    # Rows grouped by wire type: one stable sort, then one slice per type present.
    order = np.argsort(typ, kind="stable")
    counts = np.bincount(typ, minlength=256)
    starts = np.concatenate([[0], np.cumsum(counts)])
    strings_raw: list[tuple[str, np.ndarray, np.ndarray, str | None]] = []  # (column, rows, raw ids, fmt)
    rk, rid, old, new = cols["resource_kind"], cols["resource_id"], cols["old_state"], cols["new_state"]

    def source(src: int, r: np.ndarray) -> np.ndarray | int:
        return g[r] if src == _FROM_G else p[r] if src == _FROM_P else a0s[r] if src == _FROM_A0 else 0

    for t in np.flatnonzero(counts).tolist():
        r = order[starts[t] : starts[t + 1]]
        st = _TRANSITIONS.get(t)
        if st is not None:
            kind, src, o, nw, reason_arg, tstack = st
            rk[r] = kind
            rid[r] = source(src, r)
            if o == _OLD_STEAL:
                extra = args[r, EXTRA_BASE[t]]
                o = np.where(extra == spec.PROC_SYSCALL_ABANDONED, ProcState.IDLE, ProcState.RUNNING)
            elif o == _OLD_EXTRA0:  # ProcStatus: the old state the ordering smuggles in
                o = args[r, EXTRA_BASE[t]].astype(np.int8)
            elif o == _STATUS_G:  # GoStatus: old state << 32 | wire status, packed by the ordering
                packed = args[r, 2]
                o = (packed >> np.uint64(32)).astype(np.int8)
                nw = _status_states(packed & np.uint64(0xFFFFFFFF), _GO_STATUS_LUT)
            if isinstance(nw, int) and nw == _STATUS_P:
                nw = _status_states(args[r, 1], _PROC_STATUS_LUT)
            old[r] = o
            new[r] = nw
            if reason_arg:
                strings_raw.append(("reason", r, args[r, 0], None))
            else:
                cols["reason"][r] = 0  # Go's empty reason
            if tstack >= 0:
                cols["transition_stack"][r] = it.stack_ids(table, args[r, tstack])
            continue
        metric = _METRICS.get(t)
        if metric is not None:
            cols["name"][r] = it.string(metric)
            cols["value"][r] = args[r, 0]
            continue
        rng = _RANGES.get(t)
        if rng is not None:
            name, kind, src = rng
            if name is None:
                strings_raw.append(("name", r, args[r, 0], "stop-the-world ({})"))
            else:
                cols["name"][r] = it.string(name)
            rk[r] = kind
            rid[r] = source(src, r)
            continue
        if t == spec.EV_GO_LABEL:
            strings_raw.append(("name", r, args[r, 0], None))
            rk[r] = G
            rid[r] = g[r]
            continue
        user = _USER.get(t)
        if user is not None:
            name_arg, msg_arg, task_arg, parent_arg = user
            strings_raw.append(("name", r, args[r, name_arg], None))
            if msg_arg >= 0:
                strings_raw.append(("message", r, args[r, msg_arg], None))
            cols["task"][r] = args[r, task_arg]
            if parent_arg >= 0:
                cols["parent_task"][r] = args[r, parent_arg]
            continue
        if t == spec.EV_USER_TASK_END:
            # The parent and type travel as extras; the type is an extra string of the table.
            base = EXTRA_BASE[t]
            cols["task"][r] = args[r, 0]
            cols["parent_task"][r] = args[r, base]
            extra = args[r, base + 1]
            uniq, inv = np.unique(extra, return_inverse=True)
            ids = [it.string(table.get_extra_string(i)) for i in uniq.tolist()]
            cols["name"][r] = np.array(ids, np.int32)[inv.reshape(-1)]
            continue
        if KIND_OF[t] == EventKind.EXPERIMENTAL:
            cols["name"][r] = it.string(spec.SPECS[t].name)
    for name, r, raw, fmt in strings_raw:
        cols[name][r] = it.string_ids(table, raw, fmt)
    return cols


def chunks_of(events: Iterable) -> Iterator[Chunk]:
    """The column chunks of a Reader, or of plain reader Events grouped into Chunks (runs of one
    table, a Sync alone), so every source takes the columnar path.

    A TraceError from EVENTS comes after the chunk of the events read before it.
    """
    from goblueprint.trace.reader import CHUNK_EVENTS, Chunk

    if hasattr(events, "chunks"):
        yield from events.chunks()
        return
    rows: list[tuple] = []
    table = None

    def flush() -> Chunk:
        g, p, m, typ, ts, args = zip(*rows, strict=True)
        arr = np.zeros((len(rows), 4), np.uint64)
        for i, a in enumerate(args):
            arr[i, : len(a)] = a[:4]
        i64 = np.int64
        return Chunk(table, np.array(typ, np.uint8), np.array(ts, i64), np.array(g, i64), np.array(p, i64),
                     np.array(m, i64), arr)  # fmt: skip

    try:
        for ev in events:
            sync = ev.typ == EV_SYNC_EVENT
            if rows and (sync or ev.table is not table or len(rows) >= CHUNK_EVENTS):
                yield flush()
                rows = []
            table = ev.table
            rows.append((ev.g, ev.p, ev.m, ev.typ, ev.ts, ev.args))
            if sync:
                yield flush()
                rows = []
    except TraceError:
        if rows:
            yield flush()
        raise
    if rows:
        yield flush()


def _concat(parts: list[dict[str, np.ndarray]], index: int) -> GenerationColumns:
    n = sum(len(part["kind"]) for part in parts)
    cols = {"generation": np.full(n, index, np.int32)}
    for name in COLUMNS:
        if name != "generation":
            # Always a copy: a view would keep the reader's whole output array of the chunk alive.
            cols[name] = np.concatenate([part[name] for part in parts])
    return GenerationColumns(index, cols)


def iter_generations(events, interner: Interner | None = None) -> Iterator[GenerationColumns]:
    """Stream a trace into per-generation columns; each generation is yielded when complete.

    EVENTS is a Reader (its column chunks are used) or any iterable of Events.
    A TraceError from the source propagates after the columns of the events read
    so far in the current generation were yielded (Go's reader, too, yields
    events before failing), so callers that want the partial trace keep it.
    """
    it = Interner() if interner is None else interner
    chunks = chunks_of(events)
    parts: list[dict[str, np.ndarray]] = []  # the current generation's pieces
    # The last finished generation is held back until the next one proves to be more
    # than the lone Sync Go emits at the very end, which then joins it instead.
    held: GenerationColumns | None = None
    index = 0
    error: TraceError | None = None
    try:
        for chunk in chunks:
            if not len(chunk):
                continue
            cols = chunk_columns(chunk, it)
            start = 0
            # A new generation starts at each Sync that follows events.
            for s in np.flatnonzero(chunk.typ == EV_SYNC_EVENT).tolist():
                if s > start:
                    parts.append({k: v[start:s] for k, v in cols.items()})
                    start = s
                if parts:
                    if held is not None:
                        yield held
                    held = _concat(parts, index)
                    index += 1
                    parts = []
            parts.append({k: v[start:] for k, v in cols.items()} if start else cols)
    except TraceError as exc:
        error = exc
    last = _concat(parts, index) if parts else None
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

        strings = _categories(self.strings)
        if not self.generations:
            empty = {name: np.empty(0, dtype) for name, dtype in COLUMNS.items()}
            return _polars_frame(empty, strings)
        # One frame per generation, joined without copying: no store-wide numpy column is built.
        frames = [_polars_frame(g.columns, strings) for g in self.generations]
        return pl.concat(frames, rechunk=False)

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


_NA_TASK = np.ones(256, bool)
_NA_TASK[sorted(_TASKS | _REGIONS | {_LOG})] = False
_NA_PARENT = np.ones(256, bool)
_NA_PARENT[sorted(_TASKS)] = False


def _categories(strings: list[str]) -> pl.Series:
    """The interned strings as a Categorical series to gather text columns from.

    A gathered Categorical column holds 4-byte category ids, not copies of the text,
    and reasons and names repeat millions of times: on the 30.6 MB benchmark trace,
    events_frame's peak RSS went from 910 MB with String columns to 657 MB
    (bench/store_frame.py).  It compares, filters and groups like text.
    """
    import polars as pl

    return pl.Series("strings", strings, dtype=pl.String).cast(pl.Categorical)


def _polars_frame(cols: dict[str, np.ndarray], strings: pl.Series) -> pl.DataFrame:
    """Columns to a DataFrame: kinds as an Enum, string ids as Categorical text, n/a as nulls.

    Nulls come from arrow validity masks (no per-row work in Python or polars).
    """
    import polars as pl
    import pyarrow as pa

    kind = cols["kind"]
    na = {
        "old_state": cols["old_state"] < 0,
        "new_state": cols["new_state"] < 0,
        "value": kind != _METRIC,
        "task": _NA_TASK[kind],
        "parent_task": _NA_PARENT[kind],
    }
    kind_names = pl.Series("kind", KIND_NAMES, dtype=pl.String)
    data: dict[str, pl.Series] = {}
    for name, arr in cols.items():
        if name == "kind":
            series = kind_names.gather(arr.astype(np.int64)).cast(pl.Enum(KIND_NAMES))
        elif name in STRING_COLUMNS:
            # A null index gathers a null: the field does not apply there.
            mask = arr < 0
            series = strings.gather(pl.from_arrow(pa.array(arr, mask=mask if mask.any() else None)))
        elif name in na and na[name].any():
            series = pl.from_arrow(pa.array(arr, mask=na[name]))
        else:
            series = pl.Series(name, arr)
        data[name] = series.alias(name)
    return pl.DataFrame(data)


def events_frame(path: str | Path) -> pl.DataFrame:
    """All events of the trace at PATH as one polars DataFrame (see EventStore.to_polars).

    Each generation becomes a frame as soon as it is read and its numpy columns are
    dropped, so the peak memory is the frame plus one generation.
    """
    import polars as pl

    from goblueprint.trace.reader import open_trace

    interner = Interner()
    frames = []
    with open_trace(path) as reader:
        for gen in iter_generations(reader, interner):
            # Every id of this generation is already in the interner's strings.
            frames.append(_polars_frame(gen.columns, _categories(interner.strings)))
    if not frames:
        return EventStore().to_polars()
    return pl.concat(frames, rechunk=False)
