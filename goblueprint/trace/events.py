"""The trace Event API: a Python mirror of Go's ``internal/trace`` Event.

An ``Event`` is a light object (slots): its wire type, time, scheduling
context (G, P, M), up to four raw arguments and a reference to the tables of
its generation.  Everything else (``metric()``, ``state_transition()``, ...,
``string()``) is computed on demand, exactly as Go's accessors do.
"""

from __future__ import annotations

import time as _time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from enum import IntEnum
from typing import NamedTuple

from goblueprint.errors import TraceError
from goblueprint.trace import spec
from goblueprint.trace.wire import mul


class EventKind(IntEnum):
    BAD = 0
    SYNC = 1
    METRIC = 2
    LABEL = 3
    STACK_SAMPLE = 4
    RANGE_BEGIN = 5
    RANGE_ACTIVE = 6
    RANGE_END = 7
    TASK_BEGIN = 8
    TASK_END = 9
    REGION_BEGIN = 10
    REGION_END = 11
    LOG = 12
    STATE_TRANSITION = 13
    EXPERIMENTAL = 14


_KIND_NAMES = (
    "Bad",
    "Sync",
    "Metric",
    "Label",
    "StackSample",
    "RangeBegin",
    "RangeActive",
    "RangeEnd",
    "TaskBegin",
    "TaskEnd",
    "RegionBegin",
    "RegionEnd",
    "Log",
    "StateTransition",
    "Experimental",
)


def kind_name(kind: int) -> str:
    return _KIND_NAMES[kind] if 0 <= kind < len(_KIND_NAMES) else "Bad"


class ResourceKind(IntEnum):
    NONE = 0
    GOROUTINE = 1
    PROC = 2
    THREAD = 3


_RESOURCE_NAMES = ("None", "Goroutine", "Proc", "Thread")


class GoState(IntEnum):
    UNDETERMINED = 0
    NOT_EXIST = 1
    RUNNABLE = 2
    RUNNING = 3
    WAITING = 4
    SYSCALL = 5


_GO_STATE_NAMES = ("Undetermined", "NotExist", "Runnable", "Running", "Waiting", "Syscall")


class ProcState(IntEnum):
    UNDETERMINED = 0
    NOT_EXIST = 1
    RUNNING = 2
    IDLE = 3


_PROC_STATE_NAMES = ("Undetermined", "NotExist", "Running", "Idle")


def go_state_name(s: int) -> str:
    return _GO_STATE_NAMES[s] if 0 <= s < len(_GO_STATE_NAMES) else "Bad"


def proc_state_name(s: int) -> str:
    return _PROC_STATE_NAMES[s] if 0 <= s < len(_PROC_STATE_NAMES) else "Bad"


class ValueKind(IntEnum):
    BAD = 0
    UINT64 = 1
    STRING = 2


NO_GOROUTINE = -1
NO_PROC = -1
NO_THREAD = -1
NO_TASK = (1 << 64) - 1
BACKGROUND_TASK = 0

# The wire type Go gives Sync events (^uint8(0)).
EV_SYNC_EVENT = 255

# Wire-format status -> API state (Go's tracev2GoStatus2GoState etc.).
GO_STATUS_TO_STATE = (
    GoState.UNDETERMINED,
    GoState.RUNNABLE,
    GoState.RUNNING,
    GoState.SYSCALL,
    GoState.WAITING,
)
PROC_STATUS_TO_STATE = (
    ProcState.UNDETERMINED,
    ProcState.RUNNING,
    ProcState.IDLE,
    ProcState.RUNNING,
    ProcState.IDLE,
)


def _kind_table() -> tuple[int, ...]:
    k = [EventKind.BAD] * 256
    st = EventKind.STATE_TRANSITION
    for typ in (
        spec.EV_PROC_START,
        spec.EV_PROC_STOP,
        spec.EV_PROC_STEAL,
        spec.EV_PROC_STATUS,
        spec.EV_GO_CREATE,
        spec.EV_GO_CREATE_SYSCALL,
        spec.EV_GO_START,
        spec.EV_GO_DESTROY,
        spec.EV_GO_DESTROY_SYSCALL,
        spec.EV_GO_STOP,
        spec.EV_GO_BLOCK,
        spec.EV_GO_UNBLOCK,
        spec.EV_GO_SYSCALL_BEGIN,
        spec.EV_GO_SYSCALL_END,
        spec.EV_GO_SYSCALL_END_BLOCKED,
        spec.EV_GO_STATUS,
        spec.EV_GO_SWITCH,
        spec.EV_GO_SWITCH_DESTROY,
        spec.EV_GO_CREATE_BLOCKED,
        spec.EV_GO_STATUS_STACK,
    ):
        k[typ] = st
    for typ in (spec.EV_PROCS_CHANGE, spec.EV_HEAP_ALLOC, spec.EV_HEAP_GOAL):
        k[typ] = EventKind.METRIC
    for typ in (spec.EV_STW_BEGIN, spec.EV_GC_BEGIN, spec.EV_GC_SWEEP_BEGIN, spec.EV_GC_MARK_ASSIST_BEGIN):
        k[typ] = EventKind.RANGE_BEGIN
    for typ in (spec.EV_GC_ACTIVE, spec.EV_GC_SWEEP_ACTIVE, spec.EV_GC_MARK_ASSIST_ACTIVE):
        k[typ] = EventKind.RANGE_ACTIVE
    for typ in (spec.EV_STW_END, spec.EV_GC_END, spec.EV_GC_SWEEP_END, spec.EV_GC_MARK_ASSIST_END):
        k[typ] = EventKind.RANGE_END
    k[spec.EV_CPU_SAMPLE] = EventKind.STACK_SAMPLE
    k[spec.EV_GO_LABEL] = EventKind.LABEL
    k[spec.EV_USER_TASK_BEGIN] = EventKind.TASK_BEGIN
    k[spec.EV_USER_TASK_END] = EventKind.TASK_END
    k[spec.EV_USER_REGION_BEGIN] = EventKind.REGION_BEGIN
    k[spec.EV_USER_REGION_END] = EventKind.REGION_END
    k[spec.EV_USER_LOG] = EventKind.LOG
    for typ in range(spec.MAX_EVENT + 1, spec.MAX_EXPERIMENTAL_EVENT):
        k[typ] = EventKind.EXPERIMENTAL
    k[EV_SYNC_EVENT] = EventKind.SYNC
    return tuple(k)


KIND_OF: tuple[int, ...] = _kind_table()

# Per wire type: index into Event.args of the event's own stack ID, or -1.
MAIN_STACK_ARG: tuple[int, ...] = tuple((s.stack_ids[0] - 1) if s.stack_ids else -1 for s in spec.SPECS) + (
    -1,
) * (256 - len(spec.SPECS))


# ---------------------------------------------------------------------------
# Value types


class Value(NamedTuple):
    """Go's trace.Value: a uint64 or a string."""

    kind: ValueKind
    scalar: int | str

    def uint64(self) -> int:
        if self.kind != ValueKind.UINT64:
            raise ValueError("uint64 called on Value of a different kind")
        return self.scalar  # type: ignore[return-value]

    def string(self) -> str:
        """Go's Value.String()."""
        if self.kind == ValueKind.STRING:
            return self.scalar  # type: ignore[return-value]
        if self.kind == ValueKind.UINT64:
            return f"Value{{Uint64({self.scalar})}}"
        return "Value{Bad}"

    def __str__(self) -> str:
        return self.string()


def uint64_value(x: int) -> Value:
    return Value(ValueKind.UINT64, x)


def string_value(s: str) -> Value:
    return Value(ValueKind.STRING, s)


class ResourceID(NamedTuple):
    kind: ResourceKind
    id: int

    def string(self) -> str:
        if self.kind == ResourceKind.NONE:
            return "None"
        name = _RESOURCE_NAMES[self.kind] if 0 <= self.kind < 4 else "Bad"
        return f"{name}({self.id})"


class StackFrame(NamedTuple):
    pc: int
    func: str
    file: str
    line: int


class Stack:
    """A stack in a generation's table; falsy when it has no frames to show."""

    __slots__ = ("id", "table")

    def __init__(self, table, sid: int) -> None:
        self.table = table
        self.id = sid

    def frames(self) -> list[StackFrame]:
        if not self.id:
            return []
        t = self.table
        strings = t.strings
        pcs = t.pcs
        out = []
        for pc in _stack_pcs(t, self.id):
            _, func_id, file_id, line = pcs[pc]
            out.append(StackFrame(pc, strings[func_id], strings[file_id], line))
        return out

    def __bool__(self) -> bool:
        return bool(self.id) and bool(self.table.stacks.get(self.id))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Stack) and other.table is self.table and other.id == self.id

    def __hash__(self) -> int:
        return hash((id(self.table), self.id))

    def string(self) -> str:
        return _print_stack("", self)


NO_STACK = Stack(None, 0)


def _stack_pcs(table, sid: int) -> tuple[int, ...]:
    pcs = table.stacks.get(sid)
    if pcs is None:
        # Only a CPU sample can name an unknown stack (Go does not check those and
        # panics when printing one).
        raise TraceError(
            f"found invalid stack ID {sid} for event CPUSample",
            offset=getattr(table, "cpu_batch_offset", None),
        )
    return pcs


def _print_stack(prefix: str, stk: Stack) -> str:
    if not stk.id:
        return ""
    t = stk.table
    cache = getattr(t, "stack_text", None)
    key = (prefix, stk.id)
    if cache is not None:
        text = cache.get(key)
        if text is not None:
            return text
    strings = t.strings
    pcs = t.pcs
    parts = []
    for pc in _stack_pcs(t, stk.id):
        _, func_id, file_id, line = pcs[pc]
        parts.append(f"{prefix}{strings[func_id]} @ 0x{pc:x}\n{prefix}\t{strings[file_id]}:{line}\n")
    text = "".join(parts)
    if cache is not None:
        cache[key] = text
    return text


class Metric(NamedTuple):
    name: str
    value: Value


class Label(NamedTuple):
    label: str
    resource: ResourceID


class Range(NamedTuple):
    name: str
    scope: ResourceID


class RangeAttribute(NamedTuple):
    name: str
    value: Value


class Task(NamedTuple):
    id: int
    parent: int
    type: str


class Region(NamedTuple):
    task: int
    type: str


class Log(NamedTuple):
    task: int
    category: str
    message: str


class StateTransition(NamedTuple):
    resource: ResourceID
    reason: str
    stack: Stack
    old: int  # GoState or ProcState, per resource.kind
    new: int


class ExperimentalBatch(NamedTuple):
    thread: int
    data: bytes


class ClockSnapshot(NamedTuple):
    trace: int  # trace time (ns) of the snapshot
    wall_sec: int  # wall clock, Unix seconds and nanoseconds
    wall_nsec: int
    mono: int

    @property
    def wall(self) -> datetime:
        sec, nsec = _norm_unix(self.wall_sec, self.wall_nsec)
        return datetime(1970, 1, 1, tzinfo=UTC) + timedelta(seconds=sec, microseconds=nsec // 1000)

    def wall_rfc3339nano(self) -> str:
        return rfc3339nano(self.wall_sec, self.wall_nsec)


class Sync(NamedTuple):
    n: int
    clock_snapshot: ClockSnapshot | None
    experimental_batches: dict[str, list[ExperimentalBatch]]


class ExperimentalEvent(NamedTuple):
    name: str
    experiment: str
    args: tuple[str, ...]
    arg_values: tuple[int, ...]
    table: object

    def arg_value(self, i: int) -> Value:
        if self.args[i].endswith("string"):
            return string_value(self.table.strings[self.arg_values[i]])
        return uint64_value(self.arg_values[i])


def _norm_unix(sec: int, nsec: int) -> tuple[int, int]:
    # time.Unix normalises nsec outside [0, 1e9).
    if nsec < 0 or nsec >= 1_000_000_000:
        n = int(nsec / 1_000_000_000)  # Go's truncating division
        sec += n
        nsec -= n * 1_000_000_000
        if nsec < 0:
            nsec += 1_000_000_000
            sec -= 1
    return sec, nsec


def rfc3339nano(sec: int, nsec: int) -> str:
    """Go's time.Unix(sec, nsec).Format(time.RFC3339Nano) in the local time zone.

    Dates come from integer arithmetic (proleptic Gregorian, any year), not from
    datetime, which stops at year 9999 where Go does not.
    """
    sec, nsec = _norm_unix(sec, nsec)
    try:
        offset = _time.localtime(sec).tm_gmtoff
    except (OverflowError, OSError, ValueError):
        offset = 0
    local = sec + offset
    days, rem = divmod(local, 86400)
    year, month, day = _civil_from_days(days)
    hh, rem = divmod(rem, 3600)
    mm, ss = divmod(rem, 60)
    ytext = f"-{-year:04d}" if year < 0 else f"{year:04d}"
    text = f"{ytext}-{month:02d}-{day:02d}T{hh:02d}:{mm:02d}:{ss:02d}"
    frac = f"{nsec:09d}".rstrip("0")
    if frac:
        text += "." + frac
    if offset == 0:
        return text + "Z"
    sign = "-" if offset < 0 else "+"
    off = abs(offset) // 60
    return f"{text}{sign}{off // 60:02d}:{off % 60:02d}"


def _civil_from_days(z: int) -> tuple[int, int, int]:
    # Howard Hinnant's days -> (year, month, day), exact for any integer.
    z += 719468
    era = z // 146097
    doe = z - era * 146097
    yoe = (doe - doe // 1460 + doe // 36524 - doe // 146096) // 365
    y = yoe + era * 400
    doy = doe - (365 * yoe + yoe // 4 - yoe // 100)
    mp = (5 * doy + 2) // 153
    d = doy - (153 * mp + 2) // 5 + 1
    m = mp + 3 if mp < 10 else mp - 9
    return (y + 1 if m <= 2 else y), m, d


# ---------------------------------------------------------------------------
# Go's strconv.Quote

_ESCAPES = {
    "\a": "\\a",
    "\b": "\\b",
    "\f": "\\f",
    "\n": "\\n",
    "\r": "\\r",
    "\t": "\\t",
    "\v": "\\v",
    '"': '\\"',
    "\\": "\\\\",
}


def go_quote(s: str) -> str:
    """strconv.Quote: Go's %q of a string (strings carry raw bytes as surrogate escapes)."""
    if s.isascii() and s.isprintable() and '"' not in s and "\\" not in s:
        return f'"{s}"'
    out = ['"']
    for ch in s:
        esc = _ESCAPES.get(ch)
        if esc is not None:
            out.append(esc)
            continue
        o = ord(ch)
        if 0xDC80 <= o <= 0xDCFF:  # an invalid UTF-8 byte kept by surrogateescape
            out.append(f"\\x{o - 0xDC00:02x}")
        elif ch.isprintable():
            out.append(ch)
        elif o < 0x80:
            out.append(f"\\x{o:02x}")
        elif 0xD800 <= o <= 0xDFFF:
            out.append("\\ufffd")
        elif o < 0x10000:
            out.append(f"\\u{o:04x}")
        else:
            out.append(f"\\U{o:08x}")
    out.append('"')
    return "".join(out)


# ---------------------------------------------------------------------------
# Event

EXTRA_BASE: tuple[int, ...] = tuple(max(len(s.args) - 1, 0) for s in spec.SPECS) + (0,) * (
    256 - len(spec.SPECS)
)


class Event:
    """One event, as Go's trace.Event.

    ``args`` holds the raw arguments after the timestamp (Go's baseEvent.args),
    including values the ordering engine smuggles in (old states, task info).
    """

    __slots__ = ("args", "g", "m", "p", "table", "ts", "typ")

    def __init__(self, table, g: int, p: int, m: int, typ: int, ts: int, args) -> None:
        self.table = table
        self.g = g
        self.p = p
        self.m = m
        self.typ = typ
        self.ts = ts
        self.args = args

    # -- context ------------------------------------------------------------
    @property
    def kind(self) -> EventKind:
        return KIND_OF[self.typ]  # type: ignore[return-value]  # EventKind members

    @property
    def time(self) -> int:
        return self.ts

    @property
    def goroutine(self) -> int:
        return self.g

    @property
    def proc(self) -> int:
        return self.p

    @property
    def thread(self) -> int:
        return self.m

    @property
    def stack(self) -> Stack:
        typ = self.typ
        if typ == EV_SYNC_EVENT:
            return NO_STACK
        if typ == spec.EV_CPU_SAMPLE:
            return Stack(self.table, self.args[0])
        i = MAIN_STACK_ARG[typ]
        if i < 0:
            return NO_STACK
        sid = self.args[i]
        if sid == 0:
            return NO_STACK
        return Stack(self.table, sid)

    def _extra(self, i: int) -> int:
        return self.args[EXTRA_BASE[self.typ] + i]

    # -- details ------------------------------------------------------------
    def metric(self) -> Metric:
        typ = self.typ
        if typ == spec.EV_PROCS_CHANGE:
            return Metric("/sched/gomaxprocs:threads", uint64_value(self.args[0]))
        if typ == spec.EV_HEAP_ALLOC:
            return Metric("/memory/classes/heap/objects:bytes", uint64_value(self.args[0]))
        if typ == spec.EV_HEAP_GOAL:
            return Metric("/gc/heap/goal:bytes", uint64_value(self.args[0]))
        raise ValueError("metric called on non-Metric event")

    def label(self) -> Label:
        if self.typ != spec.EV_GO_LABEL:
            raise ValueError("label called on non-Label event")
        return Label(self.table.strings[self.args[0]], ResourceID(ResourceKind.GOROUTINE, self.g))

    def range(self) -> Range:
        typ = self.typ
        if typ in (spec.EV_STW_BEGIN, spec.EV_STW_END):
            return Range(
                "stop-the-world (" + self.table.strings[self.args[0]] + ")",
                ResourceID(ResourceKind.GOROUTINE, self.g),
            )
        if typ in (spec.EV_GC_BEGIN, spec.EV_GC_ACTIVE, spec.EV_GC_END):
            return Range("GC concurrent mark phase", ResourceID(ResourceKind.NONE, 0))
        if typ in (spec.EV_GC_SWEEP_BEGIN, spec.EV_GC_SWEEP_ACTIVE, spec.EV_GC_SWEEP_END):
            pid = _i64(self.args[0]) if typ == spec.EV_GC_SWEEP_ACTIVE else self.p
            return Range("GC incremental sweep", ResourceID(ResourceKind.PROC, pid))
        if typ in (spec.EV_GC_MARK_ASSIST_BEGIN, spec.EV_GC_MARK_ASSIST_ACTIVE, spec.EV_GC_MARK_ASSIST_END):
            gid = _i64(self.args[0]) if typ == spec.EV_GC_MARK_ASSIST_ACTIVE else self.g
            return Range("GC mark assist", ResourceID(ResourceKind.GOROUTINE, gid))
        raise ValueError("range called on non-Range event")

    def range_attributes(self) -> list[RangeAttribute]:
        if KIND_OF[self.typ] != EventKind.RANGE_END:
            raise ValueError("range_attributes called on non-RangeEnd event")
        if self.typ != spec.EV_GC_SWEEP_END:
            return []
        return [
            RangeAttribute("bytes swept", uint64_value(self.args[0])),
            RangeAttribute("bytes reclaimed", uint64_value(self.args[1])),
        ]

    def task(self) -> Task:
        typ = self.typ
        if typ == spec.EV_USER_TASK_BEGIN:
            return Task(self.args[0], self.args[1], self.table.strings[self.args[2]])
        if typ == spec.EV_USER_TASK_END:
            return Task(self.args[0], self._extra(0), self.table.get_extra_string(self._extra(1)))
        raise ValueError("task called on non-Task event")

    def region(self) -> Region:
        if self.typ not in (spec.EV_USER_REGION_BEGIN, spec.EV_USER_REGION_END):
            raise ValueError("region called on non-Region event")
        return Region(self.args[0], self.table.strings[self.args[1]])

    def log(self) -> Log:
        if self.typ != spec.EV_USER_LOG:
            raise ValueError("log called on non-Log event")
        s = self.table.strings
        return Log(self.args[0], s[self.args[1]], s[self.args[2]])

    def state_transition(self) -> StateTransition:
        make = _TRANSITIONS.get(self.typ)
        if make is None:
            raise ValueError("state_transition called on non-StateTransition event")
        return make(self)

    def sync(self) -> Sync:
        if self.typ != EV_SYNC_EVENT:
            raise ValueError("sync called on non-Sync event")
        t = self.table
        snap = None
        batches: dict[str, list[ExperimentalBatch]] = {}
        if t is not None:
            for exp, lst in t.exp_batches.items():
                name = spec.EXPERIMENTS[exp] if exp < len(spec.EXPERIMENTS) else ""
                batches[name] = lst
            if t.has_clock_snapshot:
                snap = ClockSnapshot(mul(t.freq, t.snap_time), t.snap_sec, t.snap_nsec, t.snap_mono)
        return Sync(self.args[0], snap, batches)

    def experimental(self) -> ExperimentalEvent:
        if KIND_OF[self.typ] != EventKind.EXPERIMENTAL:
            raise ValueError("experimental called on non-Experimental event")
        s = spec.SPECS[self.typ]
        names = s.args[1:]
        exp = spec.EXPERIMENTS[s.experiment] if s.experiment < len(spec.EXPERIMENTS) else ""
        return ExperimentalEvent(s.name, exp, names, tuple(self.args[: len(names)]), self.table)

    # -- text -----------------------------------------------------------------
    def string(self) -> str:
        """Exactly Go's Event.String()."""
        typ = self.typ
        fast = _FAST_TRANSITIONS.get(typ)
        if fast is not None:
            # The common transitions, formatted directly (same text as the general path).
            src, label, reason, tstack = fast
            rid = self.g if src == 0 else self.p if src == 1 else _i64(self.args[0])
            text = f"M={self.m} P={self.p} G={self.g} StateTransition Time={self.ts} {label.format(rid)}"
            if reason:
                text += f" Reason={go_quote(self.table.strings[self.args[0]])}"
            else:
                text += ' Reason=""'
            stk = self.stack
            if stk.table is None:
                return text
            printed = _print_stack("\t", stk)
            if tstack:
                return f"{text}\nTransitionStack=\n{printed}\nStack=\n{printed}"
            return f"{text}\nStack=\n{printed}"
        kind = KIND_OF[typ]
        head = f"M={self.m} P={self.p} G={self.g} {_KIND_NAMES[kind]} Time={self.ts}"
        parts = [head]
        if kind == EventKind.STATE_TRANSITION:
            s = self.state_transition()
            r = s.resource
            if r.kind == ResourceKind.GOROUTINE:
                parts.append(f" GoID={r.id} {go_state_name(s.old)}->{go_state_name(s.new)}")
            elif r.kind == ResourceKind.PROC:
                parts.append(f" ProcID={r.id} {proc_state_name(s.old)}->{proc_state_name(s.new)}")
            parts.append(f" Reason={go_quote(s.reason)}")
            if s.stack.table is not None:
                parts.append("\nTransitionStack=\n")
                parts.append(_print_stack("\t", s.stack))
        elif kind == EventKind.METRIC:
            m = self.metric()
            parts.append(f" Name={go_quote(m.name)} Value={m.value.string()}")
        elif kind == EventKind.SYNC:
            s = self.sync()
            parts.append(f" N={s.n}")
            c = s.clock_snapshot
            if c is not None:
                parts.append(f" Trace={c.trace} Mono={c.mono} Wall={c.wall_rfc3339nano()}")
        elif kind in (EventKind.RANGE_BEGIN, EventKind.RANGE_ACTIVE, EventKind.RANGE_END):
            r = self.range()
            parts.append(f" Name={go_quote(r.name)} Scope={r.scope.string()}")
            if kind == EventKind.RANGE_END:
                attrs = " ".join(f"{go_quote(a.name)}={a.value.string()}" for a in self.range_attributes())
                parts.append(f" Attributes=[{attrs}]")
        elif kind == EventKind.LABEL:
            lb = self.label()
            parts.append(f" Label={go_quote(lb.label)} Resource={lb.resource.string()}")
        elif kind in (EventKind.TASK_BEGIN, EventKind.TASK_END):
            t = self.task()
            parts.append(f" ID={t.id} Parent={t.parent} Type={go_quote(t.type)}")
        elif kind in (EventKind.REGION_BEGIN, EventKind.REGION_END):
            rg = self.region()
            parts.append(f" Task={rg.task} Type={go_quote(rg.type)}")
        elif kind == EventKind.LOG:
            lg = self.log()
            parts.append(f" Task={lg.task} Category={go_quote(lg.category)} Message={go_quote(lg.message)}")
        elif kind == EventKind.EXPERIMENTAL:
            x = self.experimental()
            vals = ", ".join(f"{name}={x.arg_value(i).string()}" for i, name in enumerate(x.args))
            parts.append(f" Name={x.name} Args=[{vals}]")
        stk = self.stack
        if stk.table is not None:  # Go compares with NoStack: a CPU sample's ID-0 stack still prints
            parts.append("\nStack=\n")
            parts.append(_print_stack("\t", stk))
        return "".join(parts)

    __str__ = string

    def __repr__(self) -> str:
        return f"<Event {self.string().splitlines()[0]}>"


_U64 = 1 << 64
_I64MAX = (1 << 63) - 1


def _i64(x: int) -> int:
    """Go's int64(uint64) conversion of an ID argument."""
    return x - _U64 if x > _I64MAX else x


# Transitions whose text needs no table lookups beyond the event's own stack:
# type -> (resource ID from: 0 = G, 1 = P, 2 = first argument; the "ID old->new" text;
# whether the reason is the string of the first argument; whether the transition
# stack is the event's stack).
_FAST_TRANSITIONS: dict[int, tuple[int, str, bool, bool]] = {
    spec.EV_GO_START: (2, "GoID={} Runnable->Running", False, False),
    spec.EV_GO_UNBLOCK: (2, "GoID={} Waiting->Runnable", False, False),
    spec.EV_GO_DESTROY: (0, "GoID={} Running->NotExist", False, False),
    spec.EV_GO_STOP: (0, "GoID={} Running->Runnable", True, True),
    spec.EV_GO_BLOCK: (0, "GoID={} Running->Waiting", True, True),
    spec.EV_GO_SYSCALL_BEGIN: (0, "GoID={} Running->Syscall", False, True),
    spec.EV_GO_SYSCALL_END: (0, "GoID={} Syscall->Running", False, False),
    spec.EV_GO_SYSCALL_END_BLOCKED: (0, "GoID={} Syscall->Runnable", False, False),
    spec.EV_PROC_START: (2, "ProcID={} Idle->Running", False, False),
    spec.EV_PROC_STOP: (1, "ProcID={} Running->Idle", False, False),
}


def _st(kind, rid, old, new, reason: str = "", stack: Stack = NO_STACK) -> StateTransition:
    return StateTransition(ResourceID(kind, rid), reason, stack, int(old), int(new))


# State transitions by wire type, one small function each: a dict lookup instead of a
# chain of comparisons (the timeline pass asks every event for its transition).
_G = ResourceKind.GOROUTINE
_P = ResourceKind.PROC
_G_NOT_EXIST, _G_RUNNABLE, _G_RUNNING = int(GoState.NOT_EXIST), int(GoState.RUNNABLE), int(GoState.RUNNING)
_G_WAITING, _G_SYSCALL = int(GoState.WAITING), int(GoState.SYSCALL)
_P_IDLE, _P_RUNNING = int(ProcState.IDLE), int(ProcState.RUNNING)


def _own_g(
    old: int, new: int, with_reason: bool = False, with_stack: bool = False
) -> Callable[[Event], StateTransition]:
    def make(ev: Event) -> StateTransition:
        reason = ev.table.strings[ev.args[0]] if with_reason else ""
        return StateTransition(ResourceID(_G, ev.g), reason, ev.stack if with_stack else NO_STACK, old, new)

    return make


def _arg_g(old: int, new: int) -> Callable[[Event], StateTransition]:
    def make(ev: Event) -> StateTransition:
        return StateTransition(ResourceID(_G, _i64(ev.args[0])), "", NO_STACK, old, new)

    return make


def _go_create(new: int) -> Callable[[Event], StateTransition]:
    def make(ev: Event) -> StateTransition:
        a = ev.args
        # Go builds this Stack directly: non-nil even when the ID is 0.
        return StateTransition(ResourceID(_G, _i64(a[0])), "", Stack(ev.table, a[1]), _G_NOT_EXIST, new)

    return make


def _go_status(ev: Event) -> StateTransition:
    a = ev.args
    packed = a[2]
    old, st = packed >> 32, packed & 0xFFFFFFFF
    new = GO_STATUS_TO_STATE[st] if st < len(GO_STATUS_TO_STATE) else GoState.UNDETERMINED
    return StateTransition(ResourceID(_G, _i64(a[0])), "", ev.stack, int(old), int(new))


def _proc_start(ev: Event) -> StateTransition:
    return StateTransition(ResourceID(_P, _i64(ev.args[0])), "", NO_STACK, _P_IDLE, _P_RUNNING)


def _proc_stop(ev: Event) -> StateTransition:
    return StateTransition(ResourceID(_P, ev.p), "", NO_STACK, _P_RUNNING, _P_IDLE)


def _proc_steal(ev: Event) -> StateTransition:
    before = _P_IDLE if ev._extra(0) == spec.PROC_SYSCALL_ABANDONED else _P_RUNNING
    return StateTransition(ResourceID(_P, _i64(ev.args[0])), "", NO_STACK, before, _P_IDLE)


def _proc_status(ev: Event) -> StateTransition:
    a = ev.args
    st = a[1]
    new = PROC_STATUS_TO_STATE[st] if st < len(PROC_STATUS_TO_STATE) else ProcState.UNDETERMINED
    return StateTransition(ResourceID(_P, _i64(a[0])), "", NO_STACK, int(ev._extra(0)), int(new))


_TRANSITIONS: dict[int, Callable[[Event], StateTransition]] = {
    spec.EV_PROC_START: _proc_start,
    spec.EV_PROC_STOP: _proc_stop,
    spec.EV_PROC_STEAL: _proc_steal,
    spec.EV_PROC_STATUS: _proc_status,
    spec.EV_GO_CREATE: _go_create(_G_RUNNABLE),
    spec.EV_GO_CREATE_BLOCKED: _go_create(_G_WAITING),
    spec.EV_GO_CREATE_SYSCALL: _arg_g(_G_NOT_EXIST, _G_SYSCALL),
    spec.EV_GO_START: _arg_g(_G_RUNNABLE, _G_RUNNING),
    spec.EV_GO_DESTROY: _own_g(_G_RUNNING, _G_NOT_EXIST),
    spec.EV_GO_DESTROY_SYSCALL: _own_g(_G_SYSCALL, _G_NOT_EXIST),
    spec.EV_GO_STOP: _own_g(_G_RUNNING, _G_RUNNABLE, with_reason=True, with_stack=True),
    spec.EV_GO_BLOCK: _own_g(_G_RUNNING, _G_WAITING, with_reason=True, with_stack=True),
    spec.EV_GO_UNBLOCK: _arg_g(_G_WAITING, _G_RUNNABLE),
    spec.EV_GO_SWITCH: _arg_g(_G_WAITING, _G_RUNNABLE),
    spec.EV_GO_SWITCH_DESTROY: _arg_g(_G_WAITING, _G_RUNNABLE),
    spec.EV_GO_SYSCALL_BEGIN: _own_g(_G_RUNNING, _G_SYSCALL, with_stack=True),
    spec.EV_GO_SYSCALL_END: _own_g(_G_SYSCALL, _G_RUNNING),
    spec.EV_GO_SYSCALL_END_BLOCKED: _own_g(_G_SYSCALL, _G_RUNNABLE),
    spec.EV_GO_STATUS: _go_status,
    spec.EV_GO_STATUS_STACK: _go_status,
}
