"""Kernel events into per-thread intervals: on a CPU, or off it and why.

A thread's state changes at three events: switched out (``sched_switch`` with
``prev_pid`` = the thread; ``prev_state`` says why), switched in (``next_pid``
= the thread) and woken (``sched_wakeup``, which only matters while it sleeps).
Each interval runs from one such event to the thread's next one, so every
interval is observed at both ends: before a thread's first event and after its
last nothing is claimed, nor around a switch perf did not deliver (an on-CPU
stretch must end in a switch-out, an off-CPU one in a switch-in).

Intervals table (``INTERVALS_SCHEMA``), sorted by tid, start:

    tid        i64  thread (a Go trace's M id)
    start      i64  CLOCK_MONOTONIC ns
    end        i64
    state      u8   KState
    cpu        i32  ON_CPU: the core;  PREEMPTED/BLOCKED/OTHER: the core it left;
                    WOKEN: the core it was woken onto (target_cpu)
    reason     str  prev_state of the switch-out that began the interval ("" on CPU and WOKEN)

All of it is polars expressions over columns: no Python object per event.
"""

from __future__ import annotations

import enum
from typing import Any

import polars as pl

from goblueprint.kernel.decode import Event


class KState(enum.IntEnum):
    ON_CPU = 0
    PREEMPTED = 1  # switched out while runnable (prev_state R, R+): waiting for a CPU
    WOKEN = 2  # woken from a sleep, not yet on a CPU: waiting for a CPU
    SLEEPING = 3  # blocked, interruptible (S): futex, epoll, nanosleep, ...
    DISK = 4  # blocked, uninterruptible (D): page faults, I/O
    OTHER = 5  # stopped, traced, parked, idle (T, t, P, I, ...)
    DEAD = 6  # exited (X, Z): not an interval, the end of the thread


KSTATE_NAMES: dict[int, str] = {
    KState.ON_CPU: "on CPU",
    KState.PREEMPTED: "preempted (runnable)",
    KState.WOKEN: "woken, waiting for a CPU",
    KState.SLEEPING: "blocked (sleeping, S)",
    KState.DISK: "blocked (uninterruptible, D)",
    KState.OTHER: "off CPU (other)",
    KState.DEAD: "exited",
}
RUNNABLE = (KState.PREEMPTED, KState.WOKEN)
OFF_CPU = (KState.PREEMPTED, KState.WOKEN, KState.SLEEPING, KState.DISK, KState.OTHER)

INTERVALS_SCHEMA: dict[str, Any] = {
    "tid": pl.Int64,
    "start": pl.Int64,
    "end": pl.Int64,
    "state": pl.UInt8,
    "cpu": pl.Int32,
    "reason": pl.String,
}

# Row kinds of the per-thread sequence.
_OUT, _IN, _WAKE = 0, 1, 2


def out_state(prev_state: pl.Expr) -> pl.Expr:
    """The KState a switch-out leaves the thread in, from the kernel's prev_state letters.

    "R+" is R with the preempt flag (Linux prints "+" for TASK_REPORT_MAX /
    preemption); any R means the thread stayed runnable: an involuntary switch.
    """
    first = prev_state.str.slice(0, 1)
    return (
        pl.when(first == "R")
        .then(pl.lit(KState.PREEMPTED, pl.UInt8))
        .when(first == "S")
        .then(pl.lit(KState.SLEEPING, pl.UInt8))
        .when(first == "D")
        .then(pl.lit(KState.DISK, pl.UInt8))
        .when(first.is_in(["X", "Z"]))
        .then(pl.lit(KState.DEAD, pl.UInt8))
        .otherwise(pl.lit(KState.OTHER, pl.UInt8))
    )


def thread_sequence(events: pl.DataFrame, tids: pl.Series) -> pl.DataFrame:
    """One row per state change of a thread: (tid, time, seq, kind, cpu, state_after, reason)."""
    ev = events.with_row_index("seq")
    sw = ev.filter(pl.col("event") == Event.SWITCH)
    outs = sw.select(
        pl.col("prev_tid").alias("tid"),
        "time",
        "seq",
        pl.lit(_OUT, pl.UInt8).alias("kind"),
        "cpu",
        out_state(pl.col("prev_state")).alias("after"),
        pl.col("prev_state").alias("reason"),
    )
    ins = sw.select(
        pl.col("next_tid").alias("tid"),
        "time",
        "seq",
        pl.lit(_IN, pl.UInt8).alias("kind"),
        "cpu",
        pl.lit(KState.ON_CPU, pl.UInt8).alias("after"),
        pl.lit("").alias("reason"),
    )
    wakes = ev.filter(pl.col("event") == Event.WAKEUP).select(
        pl.col("target").alias("tid"),
        "time",
        "seq",
        pl.lit(_WAKE, pl.UInt8).alias("kind"),
        pl.col("dest_cpu").alias("cpu"),
        pl.lit(KState.WOKEN, pl.UInt8).alias("after"),
        pl.lit("").alias("reason"),
    )
    # A switch row names two threads, one of them maybe another process's: keep the program's.
    seq = pl.concat([outs, ins, wakes]).filter(pl.col("tid").is_in(tids.implode()))
    # Within one event (seq), an OUT sorts before an IN: a thread switched to itself is not a thing,
    # but ties in time between two events keep perf's order through seq.
    seq = seq.sort(["tid", "seq", "kind"])
    # A wake-up counts only when the thread last switched out into a sleep and was not woken since.
    last_switch = (
        pl.when(pl.col("kind") != _WAKE).then(pl.col("after")).otherwise(None).forward_fill().over("tid")
    )
    seq = seq.with_columns(last_switch.alias("last_switch"))
    seq = seq.with_columns(
        pl.when(pl.col("kind") != _WAKE)
        .then(pl.col("seq"))
        .otherwise(None)
        .forward_fill()
        .over("tid")
        .alias("since")
    )
    blocked = pl.col("last_switch").is_in([int(KState.SLEEPING), int(KState.DISK), int(KState.OTHER)])
    first_wake = pl.col("kind").cum_count().over(["tid", "since", "kind"]) == 1
    keep = (pl.col("kind") != _WAKE) | (blocked & first_wake)
    return seq.filter(keep).drop("last_switch", "since")


def intervals(events: pl.DataFrame, tids: pl.Series) -> pl.DataFrame:
    """Per-thread intervals of threads TIDS between consecutive state changes (see the module docstring)."""
    seq = thread_sequence(events, tids)
    nxt = seq.with_columns(
        pl.col("time").shift(-1).over("tid").alias("end"),
        # The next switch of the thread (wake-ups skipped): an on-CPU stretch must end in a
        # switch-out and an off-CPU one in a switch-in.  perf does drop a switch now and then
        # (seen: woken, then switched out again with no switch-in between); the stretch
        # around the missing event is then unknown and left out, not guessed.
        pl.when(pl.col("kind") != _WAKE)
        .then(pl.col("kind"))
        .otherwise(None)
        .shift(-1)
        .backward_fill()
        .over("tid")
        .alias("next_switch"),
    )
    consistent = (
        pl.when(pl.col("after") == KState.ON_CPU)
        .then(pl.col("next_switch") == _OUT)
        .otherwise(pl.col("next_switch") == _IN)
    )
    out = nxt.filter(pl.col("end").is_not_null() & (pl.col("after") != KState.DEAD) & consistent)
    out = out.select(
        "tid",
        pl.col("time").alias("start"),
        "end",
        pl.col("after").alias("state"),
        "cpu",
        pl.when(pl.col("kind") == _WAKE).then(None).otherwise(pl.col("reason")).alias("reason"),
    )
    return (
        out.with_columns(pl.col("reason").fill_null(""))
        .cast(INTERVALS_SCHEMA)
        .sort(["tid", "start"], maintain_order=True)
    )


def unpaired_switches(events: pl.DataFrame, tids: pl.Series) -> int:
    """Switches followed by another of the same direction for the same thread (one between them was lost)."""
    seq = thread_sequence(events, tids).filter(pl.col("kind") != _WAKE)
    return int(seq.select((pl.col("kind") == pl.col("kind").shift(1).over("tid")).sum()).item())


def empty() -> pl.DataFrame:
    return pl.DataFrame(schema=INTERVALS_SCHEMA)
