"""The metrics of a run, computed the same way from a real trace's Timeline and a simulated one.

Names follow ``lab ab`` where they mean the same (preemptions, steals,
sysmon_wakeups, sched_latency_p50_ns, sched_latency_p99_ns, migrations, wall_ns).
Counts a trace does not record (steals, sysmon wake-ups) come from the model's own
counters and are absent from a real trace's set.
"""

from __future__ import annotations

from typing import Any

import polars as pl

from goblueprint.timeline import metrics
from goblueprint.timeline.model import FlowKind, LaneKind, Timeline

COMPARED = ("p_utilization", "sched_latency_p50_ns", "sched_latency_p99_ns", "preemptions", "migrations",
            "goroutines", "wall_ns")  # fmt: skip


def from_timeline(tl: Timeline, procs: int) -> dict[str, float]:
    lat = metrics.sched_latency(tl)
    util = [p["utilization"] for p in metrics.proc_utilization(tl) if p["p"] < procs]
    util += [0.0] * (procs - len(util))
    requeue = tl.flows.filter(pl.col("kind") == int(FlowKind.REQUEUE))
    preempted = tl.strings.index("preempted") if "preempted" in tl.strings else -1
    return {
        "p_utilization": round(sum(util) / procs, 6),
        "sched_latency_p50_ns": lat["p50"],
        "sched_latency_p99_ns": lat["p99"],
        "preemptions": requeue.filter(pl.col("label") == preempted).height,
        "migrations": metrics.migrations(tl)["total"],
        "goroutines": tl.lanes.filter(pl.col("lane_kind") == int(LaneKind.G)).height,
        "wall_ns": tl.end_ns - tl.start_ns,
    }


def of_sim(result: Any) -> dict[str, float]:
    out = from_timeline(result.timeline, result.procs)
    out["steals"] = result.sim.steals
    out["sysmon_wakeups"] = result.sim.sysmon_wakeups
    out["sysmon_preemptions"] = result.sim.preemptions
    out["decisions"] = result.sim.rec.decision_count
    return out
