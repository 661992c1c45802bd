"""Kernel figures per thread (M) and per goroutine, and futex/lock wait hot spots.

Definitions (docs/kernel.md has them with examples):

* ``involuntary_switches``: switch-outs with prev_state R/R+ (still runnable: preempted);
  ``voluntary_switches``: the other switch-outs except the final one of an exiting thread (X/Z).
* ``cpu_migrations``: ``sched_migrate_task`` events of the thread.
* ``off_cpu_ns``: the time from each switch-out to the thread's next switch-in, by reason
  (preempted / woken-but-waiting / sleeping / disk / other): only stretches seen at both ends.
* ``os_preemptions_under_running_g``: involuntary switch-outs at an instant the trace says
  the M runs a G, each counted once the thread is back on a CPU (a stretch seen at both
  ends, like every interval here: a thread preempted as the recording stops is not counted); ``runnable_in_kernel_while_running_ns``: time the thread was runnable but
  not on a CPU (preempted or woken) while the trace says it runs a G.
* ``wait_for_cpu_with_p_ns``: runnable-not-running time while holding a P but no G.
"""

from __future__ import annotations

from typing import Any

import polars as pl

from goblueprint.kernel.decode import Event
from goblueprint.kernel.intervals import KSTATE_NAMES, OFF_CPU, RUNNABLE, KState, out_state, unpaired_switches
from goblueprint.kernel.join import Joined, lookup, take, under_running_g
from goblueprint.timeline.model import LaneKind, State, Timeline

FUTEX_CMD_MASK = 0x7F  # op without FUTEX_PRIVATE_FLAG (128) and FUTEX_CLOCK_REALTIME (256)
FUTEX_WAITS = (0, 9)  # FUTEX_WAIT, FUTEX_WAIT_BITSET
HOT_SPOTS = 10
_REASON_KEYS = {
    KState.PREEMPTED: "preempted",
    KState.WOKEN: "woken_waiting_cpu",
    KState.SLEEPING: "sleeping",
    KState.DISK: "disk",
    KState.OTHER: "other",
}


def switch_counts(events: pl.DataFrame, tids: pl.Series) -> pl.DataFrame:
    """Per thread: involuntary and voluntary switch-outs, CPU migrations."""
    outs = events.filter((pl.col("event") == Event.SWITCH) & pl.col("prev_tid").is_in(tids.implode()))
    kind = out_state(pl.col("prev_state"))
    sw = outs.group_by(pl.col("prev_tid").alias("m")).agg(
        (kind == KState.PREEMPTED).sum().alias("involuntary_switches"),
        ((kind != KState.PREEMPTED) & (kind != KState.DEAD)).sum().alias("voluntary_switches"),
    )
    mig = (
        events.filter((pl.col("event") == Event.MIGRATE) & pl.col("target").is_in(tids.implode()))
        .group_by(pl.col("target").alias("m"))
        .agg(pl.len().alias("cpu_migrations"))
    )
    base = pl.DataFrame({"m": tids}, schema={"m": pl.Int64})
    return (
        base.join(sw, on="m", how="left")
        .join(mig, on="m", how="left")
        .fill_null(0)
        .with_columns(
            pl.col(c).cast(pl.Int64) for c in ("involuntary_switches", "voluntary_switches", "cpu_migrations")
        )
        .sort("m")
    )


def _dur() -> pl.Expr:
    return pl.col("end") - pl.col("start")


def thread_table(joined: Joined) -> pl.DataFrame:
    k = joined.kernel
    counts = switch_counts(k.events, k.tids)
    iv = joined.intervals
    off = iv.filter(pl.col("state").is_in([int(s) for s in OFF_CPU]))
    time = iv.group_by(pl.col("tid").alias("m")).agg(
        _dur().filter(pl.col("state") == KState.ON_CPU).sum().alias("on_cpu_ns"),
        _dur().filter(pl.col("state").is_in([int(s) for s in OFF_CPU])).sum().alias("off_cpu_ns"),
        *(
            _dur().filter(pl.col("state") == s).sum().alias(f"off_{key}_ns")
            for s, key in _REASON_KEYS.items()
        ),
    )
    del off
    pc = joined.pieces
    runnable = pl.col("kstate").is_in([int(s) for s in RUNNABLE])
    under = pc.group_by(pl.col("tid").alias("m")).agg(
        _dur().filter(runnable & under_running_g(pc)).sum().alias("runnable_in_kernel_while_running_ns"),
        _dur()
        .filter(pl.col("kstate").is_in([int(s) for s in OFF_CPU]) & under_running_g(pc))
        .sum()
        .alias("off_cpu_while_running_ns"),
        _dur()
        .filter(runnable & (pl.col("p") >= 0) & ~under_running_g(pc))
        .sum()
        .alias("wait_for_cpu_with_p_ns"),
        # A preemption counts once, in the piece that starts with its switch-out.
        (
            (pl.col("kstate") == KState.PREEMPTED)
            & (pl.col("start") == pl.col("interval_start"))
            & under_running_g(pc)
        )
        .sum()
        .alias("os_preemptions_under_running_g"),
    )
    out = counts.join(time, on="m", how="left").join(under, on="m", how="left").fill_null(0)
    return out.with_columns(pl.col(c).cast(pl.Int64) for c in out.columns).sort("m")


def goroutine_table(joined: Joined) -> pl.DataFrame:
    pc = joined.pieces.filter(under_running_g(joined.pieces))
    runnable = pl.col("kstate").is_in([int(s) for s in RUNNABLE])
    g = pc.group_by("g").agg(
        ((pl.col("kstate") == KState.PREEMPTED) & (pl.col("start") == pl.col("interval_start")))
        .sum()
        .cast(pl.Int64)
        .alias("os_preemptions"),
        _dur().filter(runnable).sum().cast(pl.Int64).alias("runnable_in_kernel_while_running_ns"),
        _dur()
        .filter(pl.col("kstate").is_in([int(s) for s in OFF_CPU]))
        .sum()
        .cast(pl.Int64)
        .alias("off_cpu_while_running_ns"),
        _dur()
        .filter(pl.col("kstate") == KState.ON_CPU)
        .sum()
        .cast(pl.Int64)
        .alias("on_cpu_while_running_ns"),
        pl.col("tid").n_unique().cast(pl.Int64).alias("threads"),
    )
    # Migrations of the thread while it ran the G.
    ev = joined.kernel.events.filter(pl.col("event") == Event.MIGRATE)
    t = ev["time"].to_numpy() - joined.clock.offset_ns
    row = lookup(ev["target"].to_numpy(), t, joined.m_spans)
    ms = joined.m_spans
    ok = row >= 0
    ok[ok] &= (ms["state"].to_numpy()[row[ok]] == State.M_RUNNING) & (ms["g"].to_numpy()[row[ok]] >= 0)
    mig = (
        pl.DataFrame({"g": ms["g"].to_numpy()[row[ok]]}, schema={"g": pl.Int64})
        .group_by("g")
        .agg(pl.len().cast(pl.Int64).alias("cpu_migrations"))
    )
    return g.join(mig, on="g", how="left").fill_null(0).sort("g")


def _stack_text(tl: Timeline, sid: int) -> list[str]:
    return [f"{fn} {file}:{line}" for fn, file, line in tl.stack(sid)]


def wait_hot_spots(joined: Joined, tl: Timeline) -> dict[str, Any]:
    """Futex waits grouped by what the waiting thread's goroutine was doing; kernel lock contention by lock."""
    ev = joined.kernel.events.filter(pl.col("tid").is_in(joined.kernel.tids.implode()))
    fut = ev.filter(pl.col("event").is_in([Event.FUTEX_ENTER, Event.FUTEX_EXIT])).with_row_index("seq")
    fut = fut.sort(["tid", "seq"]).with_columns(
        pl.col("event").shift(-1).over("tid").alias("next_event"),
        pl.col("time").shift(-1).over("tid").alias("exit_time"),
    )
    waits = fut.filter(
        (pl.col("event") == Event.FUTEX_ENTER)
        & (pl.col("next_event") == Event.FUTEX_EXIT)
        & (pl.col("arg") & FUTEX_CMD_MASK).is_in(list(FUTEX_WAITS))
    )
    t = waits["time"].to_numpy() - joined.clock.offset_ns
    ms = joined.m_spans
    row = lookup(waits["tid"].to_numpy(), t, ms)
    g = take(ms["g"].to_numpy(), row, -1)
    mstate = take(ms["state"].to_numpy(), row, 255)
    # The G's stack: that of its latest span with one (where it last blocked, yielded or was
    # preempted, i.e. where it resumed from), as a running span has none of its own.
    g_spans = tl.spans.filter((pl.col("lane_kind") == LaneKind.G) & (pl.col("stack") > 0)).sort(
        ["lane_id", "start"]
    )
    grow = lookup(g, t, g_spans, contain=False)
    stack = take(g_spans["stack"].to_numpy(), grow, 0)
    w = waits.select(
        "tid", "addr", (pl.col("exit_time") - pl.col("time")).alias("wait_ns")
    ).with_columns(
        pl.Series("g", g, dtype=pl.Int64), pl.Series("mstate", mstate, dtype=pl.Int64),
        pl.Series("stack", stack, dtype=pl.Int64),
    )  # fmt: skip
    spots = (
        w.group_by("stack", "mstate", maintain_order=True)
        .agg(
            pl.len().alias("waits"),
            pl.col("wait_ns").sum(),
            pl.col("tid").n_unique().alias("threads"),
            pl.col("g").filter(pl.col("g") >= 0).unique().sort().head(8).alias("goroutines"),
            pl.col("addr").n_unique().alias("futex_words"),
        )
        .sort(["wait_ns", "stack", "mstate"], descending=[True, False, False])
        .head(HOT_SPOTS)
    )
    where = {State.M_RUNNING: "M running", State.M_SYSCALL: "M in a syscall", State.M_IDLE: "M idle (no P)"}
    futex = [
        {
            "waits": r["waits"],
            "wait_ns": r["wait_ns"],
            "threads": r["threads"],
            "futex_words": r["futex_words"],
            "goroutines": r["goroutines"],
            "m_state": where.get(r["mstate"], "outside the trace"),
            "stack": _stack_text(tl, r["stack"]) if r["stack"] else [],
        }
        for r in spots.iter_rows(named=True)
    ]
    lk = ev.filter(pl.col("event").is_in([Event.LOCK_BEGIN, Event.LOCK_END])).with_row_index("seq")
    lk = lk.sort(["tid", "seq"]).with_columns(
        pl.col("event").shift(-1).over("tid").alias("next_event"),
        pl.col("time").shift(-1).over("tid").alias("end_time"),
    )
    locks = (
        lk.filter((pl.col("event") == Event.LOCK_BEGIN) & (pl.col("next_event") == Event.LOCK_END))
        .group_by("addr")
        .agg(pl.len().alias("waits"), (pl.col("end_time") - pl.col("time")).sum().alias("wait_ns"))
        .sort(["wait_ns", "addr"], descending=[True, False])
        .head(HOT_SPOTS)
    )
    return {
        "futex_waits": int(w.height),
        "futex_wait_ns": int(w["wait_ns"].sum() or 0),
        "futex_hot_spots": futex,
        "kernel_lock_hot_spots": [
            {"lock": f"0x{r['addr']:x}", "waits": r["waits"], "wait_ns": r["wait_ns"]}
            for r in locks.iter_rows(named=True)
        ],
    }


def compute(joined: Joined, tl: Timeline) -> dict[str, Any]:
    """The ``trace metrics --kernel`` result (deterministic: sorted rows, plain ints)."""
    threads = thread_table(joined)
    goroutines = goroutine_table(joined)
    locks = "syscalls:sys_enter_futex" in joined.kernel.meta.get("events", []) or any(
        e.startswith("lock:") for e in joined.kernel.meta.get("events", [])
    )
    return {
        "clock": joined.clock.as_dict(),
        "pid": joined.kernel.pid,
        "trace_threads": joined.trace_threads,
        "matched_threads": joined.matched_threads,
        "threads": threads.to_dicts(),
        "goroutines": goroutines.to_dicts(),
        "os_preemptions_under_running_g": int(threads["os_preemptions_under_running_g"].sum()),
        "runnable_in_kernel_while_running_ns": int(threads["runnable_in_kernel_while_running_ns"].sum()),
        "off_cpu_while_running_ns": int(threads["off_cpu_while_running_ns"].sum()),
        "wait_for_cpu_with_p_ns": int(threads["wait_for_cpu_with_p_ns"].sum()),
        "involuntary_switches": int(threads["involuntary_switches"].sum()),
        "voluntary_switches": int(threads["voluntary_switches"].sum()),
        "cpu_migrations": int(threads["cpu_migrations"].sum()),
        "off_cpu_ns": int(threads["off_cpu_ns"].sum()),
        "states": {KSTATE_NAMES[s]: int(s) for s in KState},
        "locks": wait_hot_spots(joined, tl) if locks else None,
        "lost_records": joined.kernel.meta.get("lost_records", 0),
        "unpaired_switches": unpaired_switches(joined.kernel.events, joined.kernel.tids),
    }
