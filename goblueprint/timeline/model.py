"""The timeline: what an execution trace says each G, P and M did, as columns.

This is the one result every trace view consumes (HTML timeline, SVG Gantt,
Perfetto, Chrome JSON, Parquet, metrics).  It is *columnar*: each table is a
polars DataFrame with a fixed schema (below), never one Python object per
span, so a 20 MB trace stays a few arrays.  Renderers only read it.

Times are Go trace times in nanoseconds (``Event.time``), *absolute*: subtract
``Timeline.start_ns`` for "time since trace start".  ``-1`` means "none" in every
G/P/M/stack/id column (Go's NoGoroutine/NoProc/NoThread); string id ``0`` is
the empty string and stack id ``0`` the empty stack.

Strings from the trace (function and file names, task/region/log text,
goroutine labels, STW and block reasons) are untrusted data: they are stored
as-is in ``strings`` and must be escaped by whoever prints them.

Tables
------
``spans`` — intervals, one row each (sorted by lane_kind, lane_id, start):

    lane_kind  u8   LaneKind: which row of the display the span belongs to
    lane_id    i64  G id, P id, M id, task id, or 0 for the single GC/STW lanes
    start      i64  ns, inclusive
    end        i64  ns, exclusive (== start for nothing; never < start)
    state      u8   State code (see STATE_NAMES)
    g          i64  goroutine involved (on P/M lanes: the G running there), -1 if none
    p          i64  P involved (on G lanes: the P it runs on), -1 if none
    m          i64  M involved, -1 if none
    label      u32  string id: block reason for G_WAITING, STW reason, range name,
                    region type, task type; 0 if none
    stack      u32  stack id: the stack at the start of the span (e.g. where a G
                    blocked or entered a syscall), 0 if unknown

  Lanes and their states:

  * ``G`` (lane_id = goroutine id): G_RUNNING (p, m set), G_RUNNABLE, G_WAITING
    (label = Go's block reason, e.g. "chan receive", "sync", "sleep",
    "network", "system goroutine wait"), G_SYSCALL (p is the P it held when it
    entered, m the thread).  A G's spans tile its life from its first event to
    its exit (or the trace end); not-existing time has no span.
  * ``P`` (lane_id = proc id): P_RUNNING (g = the G running, or in a syscall
    while still holding the P; -1 when the P runs without a G, e.g. in the
    scheduler), P_IDLE, P_STOPPED
    (idle while a stop-the-world is in progress: "GC-stopped").
  * ``M`` (lane_id = thread id): M_RUNNING (p and g set when known), M_SYSCALL
    (g in a syscall, p = the P it had), M_IDLE (no P).
  * ``GC`` (lane_id 0): GC_CYCLE per "GC concurrent mark phase" range.
  * ``STW`` (lane_id 0): STW with label = Go's reason ("stop-the-world (GC sweep
    termination)" ...).
  * ``GRANGE`` (lane_id = goroutine id): MARK_ASSIST ("GC mark assist") and
    other goroutine-scoped ranges (RANGE, label = name); they overlap the G's
    G_RUNNING spans.
  * ``PRANGE`` (lane_id = proc id): SWEEP ("GC incremental sweep") and other
    P-scoped ranges.
  * ``REGION`` (lane_id = goroutine id): user regions, label = region type,
    ``p`` column = task id (-1 for none) and ``m`` column = nesting depth.
  * ``TASK`` (lane_id = task id): user tasks, label = task type, ``g`` = parent task
    id (-1 for none).
  * ``KERNEL`` (lane_id = thread id, i.e. the M id): what the Linux scheduler did with
    the thread (goblueprint.kernel, from ``perf record``): K_ON_CPU, K_PREEMPTED and
    K_WOKEN (runnable, waiting for a CPU), K_SLEEPING, K_DISK, K_OFF_CPU.  ``p`` = the
    CPU core (not a P), ``m`` = the thread, ``g`` = the G the trace says the M ran at
    the span's start (-1 if none), label = its description ("CPU 1", "preempted (R)").
  * ``KMARK`` (lane_id = thread id): where the trace and the kernel disagree:
    OS_PREEMPTED_UNDER_G (Go says the M runs ``g`` on ``p``, the kernel has the thread
    off its CPU; label = why) and CPU_WAIT_WITH_P (the M holds P ``p`` but runs no G
    and waits for a CPU).
  * ``CPU`` (lane_id = core): the program's threads on each core (K_ON_CPU, ``m`` = thread).

``flows`` — wake-ups and other causal arrows, one row each:

    kind       u8   FlowKind: WAKEUP (G made runnable by someone), CREATE (go statement),
                    SYSCALL_EXIT (blocked syscall returned), REQUEUE (preempted or
                    yielded: runnable again without blocking)
    g          i64  the goroutine that was made runnable
    from_g     i64  goroutine that did it (-1 if none: netpoller, system, etc.)
    from_p     i64  P it happened on (-1 if none)
    from_time  i64  ns of the unblock / create / syscall exit
    to_p       i64  P where the G then started running (-1 if it never did)
    to_m       i64  M where it started
    to_time    i64  ns when it started running (-1 if it never did)
    label      u32  string id: "unblock (chan receive)", "go", "exit blocked syscall",
                    or the stop reason ("preempted", "yield") for REQUEUE
    stack      u32  stack of the unblocking event
    migrated   bool to_p != from_p with both known: a steal or a global-queue pickup

``counters`` — sampled values (step functions), one row per sample:

    name       u32  string id, Go's metric name ("/sched/goroutines:goroutines",
                    "/memory/classes/heap/objects:bytes", "/gc/heap/goal:bytes",
                    "/sched/gomaxprocs:threads") or a derived counter
                    ("goroutines" = existing goroutines, "goroutines running",
                    "goroutines runnable", "goroutines in syscall")
    time       i64
    value      f64

``instants`` — point events, one row each:

    kind       u8   InstantKind: LOG, TASK_BEGIN, TASK_END, STACK_SAMPLE,
                    GOMAXPROCS, LABEL, SYNC, OTHER (GC and STW are spans, not instants)
    time       i64
    g, p, m    i64  scheduling context of the event
    label      u32  string id: log message, task type, label text
    category   u32  string id: log category, "" otherwise
    id         i64  task id for task/log events, the new value for GOMAXPROCS, the
                    labelled goroutine for LABEL, -1 otherwise
    stack      u32

``lanes`` — one row per lane that has any span/instant:

    lane_kind  u8
    lane_id    i64
    label      str  display name, e.g. "G17 main.worker", "Proc 3", "Thread 5"
    group      str  for G lanes the start function (Go's goroutine grouping),
                    "" for others
    system     bool runtime-internal goroutine (Go's IsSystemGoroutine)

``stack_frames`` — stacks, columnar, frames leaf first:

    stack      u32  stack id (>= 1)
    depth      u32  0 = innermost (leaf) frame
    pc         u64
    func       u32  string id
    file       u32  string id
    line       i64

``strings``: ``list[str]``, id -> text, ``strings[0] == ""``.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Any

import polars as pl

NONE = -1  # "no G / no P / no M / no task" in every id column


class LaneKind(enum.IntEnum):
    G = 0
    P = 1
    M = 2
    GC = 3
    STW = 4
    GRANGE = 5
    PRANGE = 6
    REGION = 7
    TASK = 8
    KERNEL = 9
    KMARK = 10
    CPU = 11


class State(enum.IntEnum):
    G_RUNNING = 0
    G_RUNNABLE = 1
    G_WAITING = 2
    G_SYSCALL = 3
    P_RUNNING = 10
    P_IDLE = 11
    P_STOPPED = 12
    M_RUNNING = 20
    M_SYSCALL = 21
    M_IDLE = 22
    GC_CYCLE = 30
    STW = 31
    MARK_ASSIST = 32
    SWEEP = 33
    RANGE = 34
    REGION = 40
    TASK = 41
    K_ON_CPU = 50
    K_PREEMPTED = 51
    K_WOKEN = 52
    K_SLEEPING = 53
    K_DISK = 54
    K_OFF_CPU = 55
    OS_PREEMPTED_UNDER_G = 56
    CPU_WAIT_WITH_P = 57


# Human names, used by every renderer so they agree.
STATE_NAMES: dict[int, str] = {
    State.G_RUNNING: "running",
    State.G_RUNNABLE: "runnable",
    State.G_WAITING: "waiting",
    State.G_SYSCALL: "syscall",
    State.P_RUNNING: "running",
    State.P_IDLE: "idle",
    State.P_STOPPED: "stopped (STW)",
    State.M_RUNNING: "running",
    State.M_SYSCALL: "syscall",
    State.M_IDLE: "idle",
    State.GC_CYCLE: "GC",
    State.STW: "stop-the-world",
    State.MARK_ASSIST: "GC mark assist",
    State.SWEEP: "GC sweep",
    State.RANGE: "range",
    State.REGION: "region",
    State.TASK: "task",
    State.K_ON_CPU: "on CPU",
    State.K_PREEMPTED: "preempted (runnable)",
    State.K_WOKEN: "woken, waiting for a CPU",
    State.K_SLEEPING: "blocked in the kernel (S)",
    State.K_DISK: "blocked in the kernel (D)",
    State.K_OFF_CPU: "off CPU (other)",
    State.OS_PREEMPTED_UNDER_G: "OS preemption under a running G",
    State.CPU_WAIT_WITH_P: "waiting for a CPU with a P",
}


class FlowKind(enum.IntEnum):
    WAKEUP = 0
    CREATE = 1
    SYSCALL_EXIT = 2
    REQUEUE = 3  # the G stopped running but stayed runnable (preempted, yield)
    STEAL = 4  # goroutines taken from P from_p's run queue by P to_p (lab records; g is -1)


class InstantKind(enum.IntEnum):
    LOG = 0
    TASK_BEGIN = 1
    TASK_END = 2
    STACK_SAMPLE = 3
    GOMAXPROCS = 4
    LABEL = 5
    SYNC = 6
    OTHER = 7


SPANS_SCHEMA: dict[str, Any] = {
    "lane_kind": pl.UInt8,
    "lane_id": pl.Int64,
    "start": pl.Int64,
    "end": pl.Int64,
    "state": pl.UInt8,
    "g": pl.Int64,
    "p": pl.Int64,
    "m": pl.Int64,
    "label": pl.UInt32,
    "stack": pl.UInt32,
}
FLOWS_SCHEMA: dict[str, Any] = {
    "kind": pl.UInt8,
    "g": pl.Int64,
    "from_g": pl.Int64,
    "from_p": pl.Int64,
    "from_time": pl.Int64,
    "to_p": pl.Int64,
    "to_m": pl.Int64,
    "to_time": pl.Int64,
    "label": pl.UInt32,
    "stack": pl.UInt32,
    "migrated": pl.Boolean,
}
COUNTERS_SCHEMA: dict[str, Any] = {"name": pl.UInt32, "time": pl.Int64, "value": pl.Float64}
INSTANTS_SCHEMA: dict[str, Any] = {
    "kind": pl.UInt8,
    "time": pl.Int64,
    "g": pl.Int64,
    "p": pl.Int64,
    "m": pl.Int64,
    "label": pl.UInt32,
    "category": pl.UInt32,
    "id": pl.Int64,
    "stack": pl.UInt32,
}
LANES_SCHEMA: dict[str, Any] = {
    "lane_kind": pl.UInt8,
    "lane_id": pl.Int64,
    "label": pl.String,
    "group": pl.String,
    "system": pl.Boolean,
}
STACK_FRAMES_SCHEMA: dict[str, Any] = {
    "stack": pl.UInt32,
    "depth": pl.UInt32,
    "pc": pl.UInt64,
    "func": pl.UInt32,
    "file": pl.UInt32,
    "line": pl.Int64,
}

SCHEMAS: dict[str, dict[str, Any]] = {
    "spans": SPANS_SCHEMA,
    "flows": FLOWS_SCHEMA,
    "counters": COUNTERS_SCHEMA,
    "instants": INSTANTS_SCHEMA,
    "lanes": LANES_SCHEMA,
    "stack_frames": STACK_FRAMES_SCHEMA,
}


def empty_frame(table: str) -> pl.DataFrame:
    return pl.DataFrame(schema=SCHEMAS[table])


def frame(table: str, columns: dict[str, Any]) -> pl.DataFrame:
    """A table from column lists/arrays, cast to its schema (missing columns are an error)."""
    schema = SCHEMAS[table]
    missing = set(schema) - set(columns)
    if missing:
        raise ValueError(f"{table}: missing columns {sorted(missing)}")
    return pl.DataFrame({name: columns[name] for name in schema}, schema=schema)


@dataclass
class Timeline:
    """Everything a trace view needs; see the module docstring for the schemas."""

    start_ns: int = 0
    end_ns: int = 0
    strings: list[str] = field(default_factory=lambda: [""])
    spans: pl.DataFrame = field(default_factory=lambda: empty_frame("spans"))
    flows: pl.DataFrame = field(default_factory=lambda: empty_frame("flows"))
    counters: pl.DataFrame = field(default_factory=lambda: empty_frame("counters"))
    instants: pl.DataFrame = field(default_factory=lambda: empty_frame("instants"))
    lanes: pl.DataFrame = field(default_factory=lambda: empty_frame("lanes"))
    stack_frames: pl.DataFrame = field(default_factory=lambda: empty_frame("stack_frames"))
    # Trace format version from the file header ("1.22" ... "1.26"; Go 1.27 writes "1.26"), "" if unknown.
    go_version: str = ""

    def string(self, sid: int) -> str:
        return self.strings[sid]

    def stack(self, sid: int) -> list[tuple[str, str, int]]:
        """(func, file, line) frames of one stack, leaf first; [] for stack 0."""
        if sid == 0:
            return []
        rows = self.stack_frames.filter(pl.col("stack") == sid).sort("depth")
        return [
            (self.strings[f], self.strings[fi], ln)
            for f, fi, ln in zip(rows["func"], rows["file"], rows["line"], strict=True)
        ]

    def with_names(self, table: str) -> pl.DataFrame:
        """A copy of a table with string-id columns resolved to text (for export and SQL)."""
        df: pl.DataFrame = getattr(self, table)
        strings = pl.Series("s", self.strings, dtype=pl.String)
        out = []
        for name in df.columns:
            is_string_id = (table != "lanes" and name in ("label", "category", "func", "file")) or (
                table == "counters" and name == "name"
            )
            if is_string_id:
                out.append(strings.gather(df[name]).alias(name))
            elif name in ("state",) and table == "spans":
                out.append(df[name])
                names = pl.Series([STATE_NAMES.get(int(c), str(c)) for c in range(256)], dtype=pl.String)
                out.append(names.gather(df[name].cast(pl.UInt32)).alias("state_name"))
            elif name == "lane_kind":
                out.append(df[name])
                kinds = pl.Series([LaneKind(c).name if c < len(LaneKind) else "" for c in range(256)])
                out.append(kinds.gather(df[name].cast(pl.UInt32)).alias("lane_kind_name"))
            else:
                out.append(df[name])
        return pl.DataFrame(out)

    def validate(self) -> None:
        """Check the invariants renderers rely on (used by tests)."""
        for table, schema in SCHEMAS.items():
            df: pl.DataFrame = getattr(self, table)
            if dict(df.schema) != schema:
                raise ValueError(f"{table}: schema {dict(df.schema)} != {schema}")
        if self.strings[:1] != [""]:
            raise ValueError("strings[0] must be the empty string")
        if self.spans.height and (self.spans["end"] < self.spans["start"]).any():
            raise ValueError("span with end < start")


def state_table() -> pl.DataFrame:
    """State codes and names as a table (exported next to the spans)."""
    return pl.DataFrame(
        {
            "state": [int(s) for s in STATE_NAMES],
            "name": list(STATE_NAMES.values()),
            "lane_kind": [_state_lane(s).name for s in STATE_NAMES],
        },
        schema={"state": pl.UInt8, "name": pl.String, "lane_kind": pl.String},
    )


def _state_lane(state: int) -> LaneKind:
    if state < 10:
        return LaneKind.G
    if state < 20:
        return LaneKind.P
    if state < 30:
        return LaneKind.M
    return {
        State.GC_CYCLE: LaneKind.GC,
        State.STW: LaneKind.STW,
        State.MARK_ASSIST: LaneKind.GRANGE,
        State.SWEEP: LaneKind.PRANGE,
        State.RANGE: LaneKind.GRANGE,
        State.REGION: LaneKind.REGION,
        State.TASK: LaneKind.TASK,
        State.OS_PREEMPTED_UNDER_G: LaneKind.KMARK,
        State.CPU_WAIT_WITH_P: LaneKind.KMARK,
    }.get(State(state), LaneKind.KERNEL)


def build_timeline(source: Any, progress: Any = None, *, show_capture: bool = False) -> Timeline:
    """Build the timeline of a trace: a path, bytes, or a goblueprint.trace Reader / event iterable.

    ``progress``, if given, is called as ``progress(events_done)`` now and then;
    ``show_capture`` keeps goblueprint capture's own goroutines (see capture_marks).
    """
    from goblueprint.timeline.builder import build

    return build(source, progress=progress, show_capture=show_capture)


__all__ = [
    "NONE",
    "SCHEMAS",
    "STATE_NAMES",
    "FlowKind",
    "InstantKind",
    "LaneKind",
    "State",
    "Timeline",
    "build_timeline",
    "empty_frame",
    "frame",
    "state_table",
]
