"""The Event API constants the timeline code switches on, as plain ints.

The values come from ``goblueprint.trace.events`` (Go's values, in Go's order),
the single source of them; the hot loops compare plain ints because IntEnum
comparisons and hashing go through Python-level methods.
"""

from __future__ import annotations

# Re-exported: the timeline modules take every Event API name from here.
from goblueprint.trace.events import NO_GOROUTINE as NO_GOROUTINE
from goblueprint.trace.events import NO_PROC as NO_PROC
from goblueprint.trace.events import NO_TASK as NO_TASK
from goblueprint.trace.events import NO_THREAD as NO_THREAD
from goblueprint.trace.events import EventKind, GoState, ProcState, ResourceKind

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
