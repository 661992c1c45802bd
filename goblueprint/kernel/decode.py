"""perf.data to one polars table of the program's kernel events.

``perf script`` is asked for explicit fields (``-F trace:pid,tid,cpu,time,event,trace``),
never its default layout, whose columns change between perf versions.  Its text
is read by polars as a single string column and cut apart with regular
expressions in polars (Rust), so no Python object is made per event; the
tracepoint payloads are parsed from their ``print fmt`` text, whose field names
are the kernel's ABI for these tracepoints.

Events table (``EVENTS_SCHEMA``), one row per event that concerns the program:

    time       i64  CLOCK_MONOTONIC ns (perf record -k mono)
    cpu        i32  the core the event was recorded on
    pid, tid   i64  the task in whose context it was recorded
    event      u8   Event code (SWITCH, WAKEUP, MIGRATE, FUTEX_ENTER/EXIT, LOCK_BEGIN/END)
    prev_tid   i64  SWITCH: the thread switched out;  -1 otherwise
    prev_state str  SWITCH: its state letter(s): R/R+ preempted (still runnable),
                    S sleeping, D uninterruptible, X/Z exiting, ...; "" otherwise
    next_tid   i64  SWITCH: the thread switched in;  -1 otherwise
    target     i64  WAKEUP/MIGRATE: the thread woken or moved;  -1 otherwise
    orig_cpu   i32  MIGRATE: from;  WAKEUP: -1
    dest_cpu   i32  MIGRATE: to;  WAKEUP: target_cpu
    addr       u64  FUTEX_ENTER: uaddr;  LOCK_*: the lock's address;  0 otherwise
    arg        i64  FUTEX_ENTER: op;  FUTEX_EXIT: return value;  LOCK_END: ret;  0 otherwise

A row is kept when the program is involved: it switches a program thread out
or in, wakes or moves one, or is a futex/lock event of one.  The program's
threads are the tids seen in the context of its pid.
"""

from __future__ import annotations

import enum
import io
import subprocess
from pathlib import Path
from typing import Any

import polars as pl

from goblueprint.errors import CaptureError


class Event(enum.IntEnum):
    SWITCH = 0
    WAKEUP = 1
    MIGRATE = 2
    FUTEX_ENTER = 3
    FUTEX_EXIT = 4
    LOCK_BEGIN = 5
    LOCK_END = 6


EVENT_NAMES = {
    "sched:sched_switch": Event.SWITCH,
    "sched:sched_wakeup": Event.WAKEUP,
    "sched:sched_migrate_task": Event.MIGRATE,
    "syscalls:sys_enter_futex": Event.FUTEX_ENTER,
    "syscalls:sys_exit_futex": Event.FUTEX_EXIT,
    "lock:contention_begin": Event.LOCK_BEGIN,
    "lock:contention_end": Event.LOCK_END,
}

EVENTS_SCHEMA: dict[str, Any] = {
    "time": pl.Int64,
    "cpu": pl.Int32,
    "pid": pl.Int64,
    "tid": pl.Int64,
    "event": pl.UInt8,
    "prev_tid": pl.Int64,
    "prev_state": pl.String,
    "next_tid": pl.Int64,
    "target": pl.Int64,
    "orig_cpu": pl.Int32,
    "dest_cpu": pl.Int32,
    "addr": pl.UInt64,
    "arg": pl.Int64,
}

SCRIPT_FIELDS = "trace:pid,tid,cpu,time,event,trace"
# perf prints these fields in this order whatever the order asked for.
_LINE = r"^\s*(-?\d+)/(-?\d+)\s+\[(\d+)\]\s+(\d+)\.(\d{9}):\s+(\S+):\s+(.*)$"
# The payloads are anchored at their ends: a comm (prev_comm=..., comm=...) may hold spaces.
_SWITCH = (
    r"prev_pid=(-?\d+) prev_prio=-?\d+ prev_state=(\S+) ==> next_comm=.* next_pid=(-?\d+) next_prio=-?\d+$"
)
_WAKEUP = r"pid=(-?\d+) prio=-?\d+ (?:success=\d+ )?target_cpu=(\d+)$"
_MIGRATE = r"pid=(-?\d+) prio=-?\d+ orig_cpu=(\d+) dest_cpu=(\d+)$"
_FUTEX_ENTER = r"^uaddr: 0x([0-9a-f]+), op: 0x([0-9a-f]+),"
_FUTEX_EXIT = r"^0x([0-9a-f]+)$"
_LOCK = r"^0x([0-9a-f]+) \((?:flags=[^)]*|ret=(-?\d+))\)$"
_LOST = "PERF_RECORD_LOST"


def empty() -> pl.DataFrame:
    return pl.DataFrame(schema=EVENTS_SCHEMA)


def script_command(perf: str, data: Path) -> list[str]:
    return [perf, "script", "-i", str(data), "-F", SCRIPT_FIELDS, "--ns", "--show-lost-events"]


def run_script(perf: str, data: Path) -> bytes:
    try:
        proc = subprocess.run(script_command(perf, data), capture_output=True, check=False)
    except OSError as exc:
        raise CaptureError(f"cannot run {perf} script: {exc}") from exc
    if proc.returncode != 0:
        msg = proc.stderr.decode("utf-8", "replace").strip().splitlines()
        raise CaptureError(f"perf script failed on {data}: {msg[-1] if msg else proc.returncode}")
    return proc.stdout


def _hex_to_u64(col: pl.Expr) -> pl.Expr:
    return col.str.to_integer(base=16, dtype=pl.UInt64, strict=False)


def _hex_to_i64(col: pl.Expr) -> pl.Expr:
    # Syscall returns are printed as 64-bit hex: 0xffff...ff92 is -110 (ETIMEDOUT).
    return col.str.to_integer(base=16, dtype=pl.UInt64, strict=False).reinterpret(signed=True)


def parse_script(text: bytes) -> tuple[pl.DataFrame, int]:
    """All tracepoint lines of ``perf script -F SCRIPT_FIELDS`` output as events; and the LOST records.

    Lines of unknown events are dropped; a known event whose payload does not
    parse raises CaptureError naming the line (a perf whose format we misread
    must not pass for a quiet recording).
    """
    if not text.strip():
        return empty(), 0
    lines = pl.read_csv(
        io.BytesIO(text),
        has_header=False,
        separator="\x1f",
        quote_char=None,
        new_columns=["line"],
        schema={"line": pl.String},
        truncate_ragged_lines=True,
    ).lazy()
    lost = lines.filter(pl.col("line").str.contains(_LOST, literal=True)).select(pl.len()).collect().item()
    parts = (
        lines.with_row_index("row")
        .select("row", "line", pl.col("line").str.extract_groups(_LINE).alias("m"))
        .unnest("m")
    )
    parts = parts.rename(
        {"1": "pid", "2": "tid", "3": "cpu", "4": "sec", "5": "nsec", "6": "name", "7": "payload"}
    )
    mapping = pl.DataFrame(
        {"name": list(EVENT_NAMES), "event": [int(v) for v in EVENT_NAMES.values()]},
        schema={"name": pl.String, "event": pl.UInt8},
    ).lazy()
    # In perf's order: an inner join's order is otherwise the engine's choice (it differed from
    # run to run under load), and a reader of the events expects the file's.
    ev = parts.join(mapping, on="name", how="inner", maintain_order="left")
    p = pl.col("payload")
    e = pl.col("event")
    sw = p.str.extract_groups(_SWITCH)
    wk = p.str.extract_groups(_WAKEUP)
    mg = p.str.extract_groups(_MIGRATE)
    fe = p.str.extract_groups(_FUTEX_ENTER)
    lk = p.str.extract_groups(_LOCK)
    is_sw, is_wk, is_mg = e == Event.SWITCH, e == Event.WAKEUP, e == Event.MIGRATE
    is_fe, is_fx = e == Event.FUTEX_ENTER, e == Event.FUTEX_EXIT
    is_lk = (e == Event.LOCK_BEGIN) | (e == Event.LOCK_END)
    out = ev.select(
        "row",
        "line",
        (pl.col("sec").cast(pl.Int64) * 1_000_000_000 + pl.col("nsec").cast(pl.Int64)).alias("time"),
        pl.col("cpu").cast(pl.Int32),
        pl.col("pid").cast(pl.Int64),
        pl.col("tid").cast(pl.Int64),
        e,
        pl.when(is_sw).then(sw.struct.field("1").cast(pl.Int64)).otherwise(-1).alias("prev_tid"),
        pl.when(is_sw).then(sw.struct.field("2")).otherwise(pl.lit("")).alias("prev_state"),
        pl.when(is_sw).then(sw.struct.field("3").cast(pl.Int64)).otherwise(-1).alias("next_tid"),
        pl.when(is_wk)
        .then(wk.struct.field("1").cast(pl.Int64))
        .when(is_mg)
        .then(mg.struct.field("1").cast(pl.Int64))
        .otherwise(-1)
        .alias("target"),
        pl.when(is_mg).then(mg.struct.field("2").cast(pl.Int32)).otherwise(-1).alias("orig_cpu"),
        pl.when(is_mg)
        .then(mg.struct.field("3").cast(pl.Int32))
        .when(is_wk)
        .then(wk.struct.field("2").cast(pl.Int32))
        .otherwise(-1)
        .alias("dest_cpu"),
        pl.when(is_fe)
        .then(_hex_to_u64(fe.struct.field("1")))
        .when(is_lk)
        .then(_hex_to_u64(lk.struct.field("1")))
        .otherwise(pl.lit(0, pl.UInt64))
        .alias("addr"),
        pl.when(is_fe)
        .then(_hex_to_i64(fe.struct.field("2")))
        .when(is_fx)
        .then(_hex_to_i64(p.str.extract(_FUTEX_EXIT, 1)))
        .when(e == Event.LOCK_END)
        .then(lk.struct.field("2").cast(pl.Int64))
        .otherwise(0)
        .alias("arg"),
    ).collect()
    # A payload that did not parse leaves its key column null.
    bad = out.filter(
        ((pl.col("event") == Event.SWITCH) & (pl.col("prev_tid").is_null() | pl.col("next_tid").is_null()))
        | ((pl.col("event").is_in([Event.WAKEUP, Event.MIGRATE])) & pl.col("target").is_null())
        | ((pl.col("event").is_in([Event.FUTEX_ENTER, Event.LOCK_BEGIN])) & pl.col("addr").is_null())
        | ((pl.col("event") == Event.FUTEX_EXIT) & pl.col("arg").is_null())
    )
    if bad.height:
        row = bad.row(0, named=True)
        raise CaptureError(f"perf script line {row['row'] + 1} not understood: {row['line'][:200]!r}")
    return out.drop("row", "line").cast(EVENTS_SCHEMA), int(lost)


def threads(events: pl.DataFrame, pid: int) -> pl.Series:
    """The thread ids of process PID: those seen in its context."""
    # tid 0 is the idle task and perf prints -1 for a context it does not know.
    return events.filter((pl.col("pid") == pid) & (pl.col("tid") > 0))["tid"].unique().sort()


def program_events(events: pl.DataFrame, pid: int) -> pl.DataFrame:
    """The rows that concern the threads of process PID, in time order (ties keep perf's order)."""
    tids = threads(events, pid)
    own = pl.col("tid").is_in(tids.implode())
    keep = (
        (
            (pl.col("event") == Event.SWITCH)
            & (pl.col("prev_tid").is_in(tids.implode()) | pl.col("next_tid").is_in(tids.implode()))
        )
        | (pl.col("event").is_in([Event.WAKEUP, Event.MIGRATE]) & pl.col("target").is_in(tids.implode()))
        | (
            pl.col("event").is_in([Event.FUTEX_ENTER, Event.FUTEX_EXIT, Event.LOCK_BEGIN, Event.LOCK_END])
            & own
        )
    )
    return events.filter(keep).sort("time", maintain_order=True)


def decode(perf: str, data: Path, pid: int) -> tuple[pl.DataFrame, int]:
    """The program's events from a recording, and how many LOST records perf wrote."""
    events, lost = parse_script(run_script(perf, data))
    return program_events(events, pid), lost
