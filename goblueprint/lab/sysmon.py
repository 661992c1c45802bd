"""Sysmon's ticks and actions from the records.

Each wake-up is recorded just after sysmon's usleep with the delay it asked for;
the interval to the previous wake-up is what it really took (sleep plus the work
and any long idle sleep on sched.sysmonnote). Its actions are the records made on
its M between two wake-ups: preemptions (with how long the G had run), P retakes
from syscalls, and netpoll batches.
"""

from __future__ import annotations

from typing import Any

import polars as pl

ACTIONS = ("sysmon_preempt", "sysmon_retake", "netpoll_ready")


def sysmon(frame: pl.DataFrame) -> dict[str, Any]:
    wakes = frame.filter(pl.col("kind") == "sysmon_wake").sort("t", maintain_order=True)
    ticks = wakes.select(
        "t",
        pl.col("a").cast(pl.Int64).alias("delay_us"),
        pl.col("b").cast(pl.Int64).alias("idle"),
        pl.col("t").diff().alias("interval_ns"),
    )
    monitors = set(wakes["m"].unique().to_list())
    acts = frame.filter(pl.col("kind").is_in(ACTIONS) & pl.col("m").is_in(list(monitors))).sort(
        "t", maintain_order=True
    )
    actions = []
    for t, kind, obj, a, b in acts.select("t", pl.col("kind").cast(str), "obj", "a", "b").iter_rows():
        # A P sysmon has not seen yet has schedwhen 0: retake still preempts it (its
        # schedtick equals the zero sysmon holds), but how long it ran is unknown.
        if kind == "sysmon_preempt":
            actions.append({"t": t, "action": "preempt", "p": obj, "ran_ns": a if b else None})
        elif kind == "sysmon_retake":
            actions.append({"t": t, "action": "retake", "p": obj, "syscall_ns": a if b else None})
        else:
            actions.append({"t": t, "action": "netpoll", "goroutine": obj, "batch": a})
    intervals = ticks["interval_ns"].drop_nulls()
    summary = {
        "wakeups": ticks.height,
        "threads": len(monitors),
        "interval_ns_p50": int(intervals.quantile(0.5, "nearest")) if len(intervals) else None,
        "interval_ns_max": int(intervals.max()) if len(intervals) else None,  # type: ignore[arg-type]
        "delay_us_min": int(ticks["delay_us"].min()) if ticks.height else None,  # type: ignore[arg-type]
        "delay_us_max": int(ticks["delay_us"].max()) if ticks.height else None,  # type: ignore[arg-type]
        "preemptions": sum(a["action"] == "preempt" for a in actions),
        "retakes": sum(a["action"] == "retake" for a in actions),
        "netpolled": sum(a["action"] == "netpoll" for a in actions),
    }
    return {"ticks": ticks.to_dicts(), "actions": actions, "summary": summary}
