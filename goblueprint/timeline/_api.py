"""The Event API constants the timeline code switches on.

They come from ``goblueprint.trace.events`` (Go's values, in Go's order).  The
fallback definitions below carry the same values and exist only so this package
imports while the trace reader is being written; once that module exists it is
the single source of these numbers.
"""

from __future__ import annotations

import enum

try:  # pragma: no cover - depends on which parts of the tree are present
    from goblueprint.trace.events import EventKind, GoState, ProcState, ResourceKind
except ImportError:  # pragma: no cover

    class EventKind(enum.IntEnum):  # type: ignore[no-redef]
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

    class ResourceKind(enum.IntEnum):  # type: ignore[no-redef]
        NONE = 0
        GOROUTINE = 1
        PROC = 2
        THREAD = 3

    class GoState(enum.IntEnum):  # type: ignore[no-redef]
        UNDETERMINED = 0
        NOT_EXIST = 1
        RUNNABLE = 2
        RUNNING = 3
        WAITING = 4
        SYSCALL = 5

    class ProcState(enum.IntEnum):  # type: ignore[no-redef]
        UNDETERMINED = 0
        NOT_EXIST = 1
        RUNNING = 2
        IDLE = 3


NO_GOROUTINE = NO_PROC = NO_THREAD = -1
NO_TASK = 2**64 - 1

# Plain ints for the hot loops (IntEnum comparisons cost a method call each).
K_SYNC = int(EventKind.SYNC)
K_METRIC = int(EventKind.METRIC)
K_LABEL = int(EventKind.LABEL)
K_STACK_SAMPLE = int(EventKind.STACK_SAMPLE)
K_RANGE_BEGIN = int(EventKind.RANGE_BEGIN)
K_RANGE_ACTIVE = int(EventKind.RANGE_ACTIVE)
K_RANGE_END = int(EventKind.RANGE_END)
K_TASK_BEGIN = int(EventKind.TASK_BEGIN)
K_TASK_END = int(EventKind.TASK_END)
K_REGION_BEGIN = int(EventKind.REGION_BEGIN)
K_REGION_END = int(EventKind.REGION_END)
K_LOG = int(EventKind.LOG)
K_STATE = int(EventKind.STATE_TRANSITION)
K_EXPERIMENTAL = int(EventKind.EXPERIMENTAL)

R_NONE = int(ResourceKind.NONE)
R_GOROUTINE = int(ResourceKind.GOROUTINE)
R_PROC = int(ResourceKind.PROC)
R_THREAD = int(ResourceKind.THREAD)

G_UNDETERMINED = int(GoState.UNDETERMINED)
G_NOT_EXIST = int(GoState.NOT_EXIST)
G_RUNNABLE = int(GoState.RUNNABLE)
G_RUNNING = int(GoState.RUNNING)
G_WAITING = int(GoState.WAITING)
G_SYSCALL = int(GoState.SYSCALL)

P_UNDETERMINED = int(ProcState.UNDETERMINED)
P_NOT_EXIST = int(ProcState.NOT_EXIST)
P_RUNNING = int(ProcState.RUNNING)
P_IDLE = int(ProcState.IDLE)


def is_system_goroutine(entry_fn: str) -> bool:
    """Go's trace.IsSystemGoroutine (mimics runtime.isSystemGoroutine)."""
    return entry_fn == "" or (entry_fn != "runtime.main" and entry_fn.startswith("runtime."))
