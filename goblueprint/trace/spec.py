"""The Go execution-trace wire format (Go 1.22-1.27) as data, in one place.

This mirrors ``internal/trace/tracev2`` (events.go, spec.go) and
``internal/trace/version`` of Go 1.27.3.  The decoder, the ordering engine, the
text-form encoder and the generated docs all read these tables; nothing else in
goblueprint hard-codes an event number or argument layout.

Wire-format versions: Go 1.22 writes ``go 1.22 trace``, Go 1.23 and 1.24 write
``go 1.23 trace``, Go 1.25 writes ``go 1.25 trace``, Go 1.26 and 1.27 write
``go 1.26 trace``.  Each version understands a prefix of the one event table
(plus the experimental events, which are outside the prefix and only appear in
experimental batches / behind GOEXPERIMENTs).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class EventSpec:
    """One wire-format event type (Go's tracev2.EventSpec)."""

    name: str
    # Argument names; for timed events the first is always "dt" (timestamp delta).
    # Names follow Go's scheme ``name[_type]``; see ARG_TYPES.
    args: tuple[str, ...] = ()
    # Indices into ``args`` that are string-table / stack-table IDs.  The first
    # stack ID is the stack of the event's own execution context.
    string_ids: tuple[int, ...] = ()
    stack_ids: tuple[int, ...] = ()
    # For an "end" (or "active") event of a time range: the type of its "begin" event.
    start_ev: int = 0
    # Appears in per-M event batches and is surfaced to the reader.
    is_timed_event: bool = False
    # Followed by a varint length and that many raw bytes.
    has_data: bool = False
    # Followed by a varint frame count and 4 varints per frame (pc, func, file, line).
    is_stack: bool = False
    # Experiment ID (0 = not experimental).
    experiment: int = 0


# Event type numbers (Go's tracev2.Ev* constants, same values).
EV_NONE = 0
EV_EVENT_BATCH = 1
EV_STACKS = 2
EV_STACK = 3
EV_STRINGS = 4
EV_STRING = 5
EV_CPU_SAMPLES = 6
EV_CPU_SAMPLE = 7
EV_FREQUENCY = 8
EV_PROCS_CHANGE = 9
EV_PROC_START = 10
EV_PROC_STOP = 11
EV_PROC_STEAL = 12
EV_PROC_STATUS = 13
EV_GO_CREATE = 14
EV_GO_CREATE_SYSCALL = 15
EV_GO_START = 16
EV_GO_DESTROY = 17
EV_GO_DESTROY_SYSCALL = 18
EV_GO_STOP = 19
EV_GO_BLOCK = 20
EV_GO_UNBLOCK = 21
EV_GO_SYSCALL_BEGIN = 22
EV_GO_SYSCALL_END = 23
EV_GO_SYSCALL_END_BLOCKED = 24
EV_GO_STATUS = 25
EV_STW_BEGIN = 26
EV_STW_END = 27
EV_GC_ACTIVE = 28
EV_GC_BEGIN = 29
EV_GC_END = 30
EV_GC_SWEEP_ACTIVE = 31
EV_GC_SWEEP_BEGIN = 32
EV_GC_SWEEP_END = 33
EV_GC_MARK_ASSIST_ACTIVE = 34
EV_GC_MARK_ASSIST_BEGIN = 35
EV_GC_MARK_ASSIST_END = 36
EV_HEAP_ALLOC = 37
EV_HEAP_GOAL = 38
EV_GO_LABEL = 39
EV_USER_TASK_BEGIN = 40
EV_USER_TASK_END = 41
EV_USER_REGION_BEGIN = 42
EV_USER_REGION_END = 43
EV_USER_LOG = 44
# Go 1.23+
EV_GO_SWITCH = 45
EV_GO_SWITCH_DESTROY = 46
EV_GO_CREATE_BLOCKED = 47
EV_GO_STATUS_STACK = 48
EV_EXPERIMENTAL_BATCH = 49
# Go 1.25+
EV_SYNC = 50
EV_CLOCK_SNAPSHOT = 51
# Go 1.26+ (used by 1.25 only internally)
EV_END_OF_GENERATION = 52
NUM_EVENTS = 53

# Experimental events live above MAX_EVENT.
MAX_EVENT = 127
EV_SPAN = 128
EV_SPAN_ALLOC = 129
EV_SPAN_FREE = 130
EV_HEAP_OBJECT = 131
EV_HEAP_OBJECT_ALLOC = 132
EV_HEAP_OBJECT_FREE = 133
EV_GOROUTINE_STACK = 134
EV_GOROUTINE_STACK_ALLOC = 135
EV_GOROUTINE_STACK_FREE = 136
MAX_EXPERIMENTAL_EVENT = 137

# Experiments (Go's tracev2.Experiment); index = ID.
NO_EXPERIMENT = 0
EXP_ALLOC_FREE = 1
EXPERIMENTS: tuple[str, ...] = ("None", "AllocFree")

# Valid argument type suffixes (Go's tracev2.EventArgTypes).
ARG_TYPES: tuple[str, ...] = ("seq", "pstatus", "gstatus", "g", "m", "p", "string", "stack", "value", "task")

# Limits the runtime promises (tracev2 constants).
MAX_BATCH_SIZE = 64 << 10
MAX_FRAMES_PER_STACK = 128
MAX_EVENT_TRAILER_DATA_SIZE = 1 << 10
MAX_TIMED_EVENT_ARGS = 5


def _timed(name: str, *args: str, stack_ids=(), string_ids=(), start_ev=0, experiment=0) -> EventSpec:
    return EventSpec(
        name=name,
        args=("dt", *args),
        stack_ids=tuple(stack_ids),
        string_ids=tuple(string_ids),
        start_ev=start_ev,
        is_timed_event=True,
        experiment=experiment,
    )


_TABLE: dict[int, EventSpec] = {
    # Structural events.
    EV_EVENT_BATCH: EventSpec("EventBatch", ("gen", "m", "time", "size")),
    EV_STACKS: EventSpec("Stacks"),
    EV_STACK: EventSpec("Stack", ("id", "nframes"), is_stack=True),
    EV_STRINGS: EventSpec("Strings"),
    EV_STRING: EventSpec("String", ("id",), has_data=True),
    EV_CPU_SAMPLES: EventSpec("CPUSamples"),
    # Timestamped, but not part of the M streams: not "timed" in Go's sense.
    EV_CPU_SAMPLE: EventSpec("CPUSample", ("time", "m", "p", "g", "stack"), stack_ids=(4,)),
    EV_FREQUENCY: EventSpec("Frequency", ("freq",)),
    EV_EXPERIMENTAL_BATCH: EventSpec("ExperimentalBatch", ("exp", "gen", "m", "time"), has_data=True),
    EV_SYNC: EventSpec("Sync"),
    EV_END_OF_GENERATION: EventSpec("EndOfGeneration"),
    # Timed events.
    EV_PROCS_CHANGE: _timed("ProcsChange", "procs_value", "stack", stack_ids=(2,)),
    EV_PROC_START: _timed("ProcStart", "p", "p_seq"),
    EV_PROC_STOP: _timed("ProcStop"),
    EV_PROC_STEAL: _timed("ProcSteal", "p", "p_seq", "m"),
    EV_PROC_STATUS: _timed("ProcStatus", "p", "pstatus"),
    EV_GO_CREATE: _timed("GoCreate", "new_g", "new_stack", "stack", stack_ids=(3, 2)),
    EV_GO_CREATE_SYSCALL: _timed("GoCreateSyscall", "new_g"),
    EV_GO_START: _timed("GoStart", "g", "g_seq"),
    EV_GO_DESTROY: _timed("GoDestroy"),
    EV_GO_DESTROY_SYSCALL: _timed("GoDestroySyscall"),
    EV_GO_STOP: _timed("GoStop", "reason_string", "stack", stack_ids=(2,), string_ids=(1,)),
    EV_GO_BLOCK: _timed("GoBlock", "reason_string", "stack", stack_ids=(2,), string_ids=(1,)),
    EV_GO_UNBLOCK: _timed("GoUnblock", "g", "g_seq", "stack", stack_ids=(3,)),
    EV_GO_SYSCALL_BEGIN: _timed("GoSyscallBegin", "p_seq", "stack", stack_ids=(2,)),
    EV_GO_SYSCALL_END: _timed("GoSyscallEnd", start_ev=EV_GO_SYSCALL_BEGIN),
    EV_GO_SYSCALL_END_BLOCKED: _timed("GoSyscallEndBlocked", start_ev=EV_GO_SYSCALL_BEGIN),
    EV_GO_STATUS: _timed("GoStatus", "g", "m", "gstatus"),
    EV_STW_BEGIN: _timed("STWBegin", "kind_string", "stack", stack_ids=(2,), string_ids=(1,)),
    EV_STW_END: _timed("STWEnd", start_ev=EV_STW_BEGIN),
    EV_GC_ACTIVE: _timed("GCActive", "gc_seq", start_ev=EV_GC_BEGIN),
    EV_GC_BEGIN: _timed("GCBegin", "gc_seq", "stack", stack_ids=(2,)),
    EV_GC_END: _timed("GCEnd", "gc_seq", start_ev=EV_GC_BEGIN),
    EV_GC_SWEEP_ACTIVE: _timed("GCSweepActive", "p", start_ev=EV_GC_SWEEP_BEGIN),
    EV_GC_SWEEP_BEGIN: _timed("GCSweepBegin", "stack", stack_ids=(1,)),
    EV_GC_SWEEP_END: _timed("GCSweepEnd", "swept_value", "reclaimed_value", start_ev=EV_GC_SWEEP_BEGIN),
    EV_GC_MARK_ASSIST_ACTIVE: _timed("GCMarkAssistActive", "g", start_ev=EV_GC_MARK_ASSIST_BEGIN),
    EV_GC_MARK_ASSIST_BEGIN: _timed("GCMarkAssistBegin", "stack", stack_ids=(1,)),
    EV_GC_MARK_ASSIST_END: _timed("GCMarkAssistEnd", start_ev=EV_GC_MARK_ASSIST_BEGIN),
    EV_HEAP_ALLOC: _timed("HeapAlloc", "heapalloc_value"),
    EV_HEAP_GOAL: _timed("HeapGoal", "heapgoal_value"),
    EV_GO_LABEL: _timed("GoLabel", "label_string", string_ids=(1,)),
    EV_USER_TASK_BEGIN: _timed(
        "UserTaskBegin", "task", "parent_task", "name_string", "stack", stack_ids=(4,), string_ids=(3,)
    ),
    EV_USER_TASK_END: _timed("UserTaskEnd", "task", "stack", stack_ids=(2,)),
    EV_USER_REGION_BEGIN: _timed(
        "UserRegionBegin", "task", "name_string", "stack", stack_ids=(3,), string_ids=(2,)
    ),
    EV_USER_REGION_END: _timed(
        "UserRegionEnd",
        "task",
        "name_string",
        "stack",
        start_ev=EV_USER_REGION_BEGIN,
        stack_ids=(3,),
        string_ids=(2,),
    ),
    EV_USER_LOG: _timed(
        "UserLog", "task", "key_string", "value_string", "stack", stack_ids=(4,), string_ids=(2, 3)
    ),
    EV_GO_SWITCH: _timed("GoSwitch", "g", "g_seq"),
    EV_GO_SWITCH_DESTROY: _timed("GoSwitchDestroy", "g", "g_seq"),
    EV_GO_CREATE_BLOCKED: _timed("GoCreateBlocked", "new_g", "new_stack", "stack", stack_ids=(3, 2)),
    EV_GO_STATUS_STACK: _timed("GoStatusStack", "g", "m", "gstatus", "stack", stack_ids=(4,)),
    EV_CLOCK_SNAPSHOT: _timed("ClockSnapshot", "mono", "sec", "nsec"),
    # Experimental events (AllocFree).
    EV_SPAN: _timed("Span", "id", "npages_value", "kindclass", experiment=EXP_ALLOC_FREE),
    EV_SPAN_ALLOC: _timed("SpanAlloc", "id", "npages_value", "kindclass", experiment=EXP_ALLOC_FREE),
    EV_SPAN_FREE: _timed("SpanFree", "id", experiment=EXP_ALLOC_FREE),
    EV_HEAP_OBJECT: _timed("HeapObject", "id", "type", experiment=EXP_ALLOC_FREE),
    EV_HEAP_OBJECT_ALLOC: _timed("HeapObjectAlloc", "id", "type", experiment=EXP_ALLOC_FREE),
    EV_HEAP_OBJECT_FREE: _timed("HeapObjectFree", "id", experiment=EXP_ALLOC_FREE),
    EV_GOROUTINE_STACK: _timed("GoroutineStack", "id", "order", experiment=EXP_ALLOC_FREE),
    EV_GOROUTINE_STACK_ALLOC: _timed("GoroutineStackAlloc", "id", "order", experiment=EXP_ALLOC_FREE),
    EV_GOROUTINE_STACK_FREE: _timed("GoroutineStackFree", "id", experiment=EXP_ALLOC_FREE),
}

_EMPTY = EventSpec("")

# The full table indexed by event type (Go's tracev2.Specs()); unused slots have name "".
SPECS: tuple[EventSpec, ...] = tuple(_TABLE.get(i, _EMPTY) for i in range(MAX_EXPERIMENTAL_EVENT))

# Trace format versions (minor Go release numbers in the header).
GO111, GO119, GO121 = 11, 19, 21  # the old "v1" format: not read by goblueprint
GO122, GO123, GO125, GO126 = 22, 23, 25, 26
CURRENT_VERSION = GO126
V1_VERSIONS = frozenset({GO111, GO119, GO121})

# Events each version understands (a prefix of SPECS; None for the v1 formats).
VERSION_SPECS: dict[int, tuple[EventSpec, ...] | None] = {
    GO111: None,
    GO119: None,
    GO121: None,
    GO122: SPECS[: EV_USER_LOG + 1],
    GO123: SPECS[: EV_EXPERIMENTAL_BATCH + 1],
    GO125: SPECS[: EV_CLOCK_SNAPSHOT + 1],
    GO126: SPECS,
}

# Which Go releases write which format version (for docs and tests).
WRITTEN_BY: dict[int, tuple[str, ...]] = {
    GO122: ("1.22",),
    GO123: ("1.23", "1.24"),
    GO125: ("1.25",),
    GO126: ("1.26", "1.27"),
}

HEADER_PREFIX = b"go 1."
HEADER_SUFFIX = b" trace\x00\x00\x00"


def header(version: int) -> bytes:
    """The file header Go writes for a format version."""
    return b"go 1.%d trace\x00\x00\x00" % version


def version_valid(version: int) -> bool:
    return version in VERSION_SPECS


def event_name(version: int, typ: int) -> str:
    """Go's version.EventName: the wire name of an event type in a version."""
    if version not in VERSION_SPECS:
        return "<invalid trace version>"
    specs = VERSION_SPECS[version]
    if not specs:
        return "<v1 trace event type>"
    if typ < len(specs) and specs[typ].name:
        return specs[typ].name
    return f"Invalid({typ})"


def is_experimental(typ: int) -> bool:
    return MAX_EVENT < typ < MAX_EXPERIMENTAL_EVENT


def event_names(specs: tuple[EventSpec, ...] = SPECS) -> dict[str, int]:
    """Name -> event type (Go's tracev2.EventNames)."""
    return {spec.name: i for i, spec in enumerate(specs)}


# Goroutine status on the wire (tracev2.GoStatus) and its names.
GO_BAD, GO_RUNNABLE, GO_RUNNING, GO_SYSCALL, GO_WAITING = range(5)
GO_STATUS_NAMES: tuple[str, ...] = ("Bad", "Runnable", "Running", "Syscall", "Waiting")

# Proc status on the wire (tracev2.ProcStatus) and its names.
PROC_BAD, PROC_RUNNING, PROC_IDLE, PROC_SYSCALL, PROC_SYSCALL_ABANDONED = range(5)
PROC_STATUS_NAMES: tuple[str, ...] = ("Bad", "Running", "Idle", "Syscall", "SyscallAbandoned")


def go_status_name(status: int) -> str:
    return GO_STATUS_NAMES[status] if 0 <= status < len(GO_STATUS_NAMES) else "Bad"


def proc_status_name(status: int) -> str:
    return PROC_STATUS_NAMES[status] if 0 <= status < len(PROC_STATUS_NAMES) else "Bad"
