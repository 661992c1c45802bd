"""The metrics of a run, computed the same way from a real trace's Timeline and a simulated one.

Names follow ``lab ab`` where they mean the same (preemptions, steals,
sysmon_wakeups, sched_latency_p50_ns, sched_latency_p99_ns, migrations, wall_ns).
Counts a trace does not record (steals, sysmon wake-ups) come from the model's own
counters and are absent from a real trace's set.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import polars as pl

from goblueprint.model import idlewait, spinning, wakecost, wakeups
from goblueprint.timeline import metrics
from goblueprint.timeline.model import FlowKind, InstantKind, LaneKind, State, Timeline

COMPARED = ("p_utilization", "sched_latency_p50_ns", "sched_latency_p99_ns", "preemptions", "migrations",
            "goroutines", "wall_ns", "idle_p_while_runnable_ns", "thread_wakeups", "thread_wake_p50_ns",
            "thread_wake_p90_ns", "thread_wake_max_ns", "idle_p_spans", "find_idle_p50_ns", "waker_cost_ns",
            *idlewait.KEYS)  # fmt: skip


def from_timeline(tl: Timeline, procs: int) -> dict[str, float]:
    lat = metrics.sched_latency(tl)
    wake = metrics.distribution(wakeups.delays_ns(tl))
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
        "idle_p_while_runnable_ns": idle_p_while_runnable(tl),
        # The machine's thread wake-ups as the trace shows them (model.wakeups); in the model,
        # the wake-up cost it is given (lower where a wake is hidden, as in a trace).
        "thread_wakeups": wake["count"],
        "thread_wake_p50_ns": wake["p50"],
        "thread_wake_p90_ns": wake["p90"],
        "thread_wake_max_ns": wake["max"],
        # How often Ps went idle, and how long an M looked for work first (model.spinning).
        "idle_p_spans": tl.spans.filter(
            (pl.col("lane_kind") == int(LaneKind.P))
            & (pl.col("lane_id") < procs)
            & (pl.col("state") == int(State.P_IDLE))
        ).height,
        "find_idle_p50_ns": spinning.median_ns(tl),
        # What a thread wake-up cost the scheduler that made it, before it ran its G (model.wakecost).
        "waker_cost_ns": wakecost.cost_ns(tl),
        # idle_p_while_runnable_ns by the thread wake-up under way on the idle P (model.idlewait).
        **idlewait.by_wake(tl),
    }


def idle_p_while_runnable(tl: Timeline) -> int:
    """How long some P below GOMAXPROCS sat idle while some G waited to run (ns).

    The runtime starts an M on an idle P whenever it readies work (wakep, injectglist), so
    in a trace this is the machine's thread wake-up delay (a thread the OS has not run yet);
    in the model it is the wake-up cost it is given. A real trace far above the model's says
    its Ms woke slowly, and with them went the steals a woken M makes.
    """
    ins = tl.instants.filter(pl.col("kind") == int(InstantKind.GOMAXPROCS)).sort("time")
    times, values = [tl.start_ns, *ins["time"].to_list()[1:], tl.end_ns], ins["id"].to_list() or [1 << 30]
    p = tl.spans.filter((pl.col("lane_kind") == int(LaneKind.P)) & (pl.col("state") == int(State.P_IDLE)))
    starts, ends = [], []
    for lo, hi, n in zip(times[:-1], times[1:], values, strict=False):
        idle = p.filter((pl.col("lane_id") < n) & (pl.col("end") > lo) & (pl.col("start") < hi))
        starts.append(idle["start"].to_numpy().clip(lo, hi))
        ends.append(idle["end"].to_numpy().clip(lo, hi))
    g = tl.spans.filter((pl.col("lane_kind") == int(LaneKind.G)) & (pl.col("state") == int(State.G_RUNNABLE)))
    t = np.concatenate([g["start"].to_numpy(), g["end"].to_numpy(), *starts, *ends])
    if t.size == 0:
        return 0
    n_g, n_p = g.height, sum(len(x) for x in starts)
    runnable = np.concatenate([np.ones(n_g), -np.ones(n_g), np.zeros(2 * n_p)])
    idle_ps = np.concatenate([np.zeros(2 * n_g), np.ones(n_p), -np.ones(n_p)])
    order = np.argsort(t, kind="stable")
    t = t[order]
    both = (np.cumsum(runnable[order]) > 0) & (np.cumsum(idle_ps[order]) > 0)
    return int(np.diff(t)[both[:-1]].sum())


def of_sim(result: Any) -> dict[str, float]:
    out = from_timeline(result.timeline, result.procs)
    out["steals"] = result.sim.steals
    out["sysmon_wakeups"] = result.sim.sysmon_wakeups
    out["sysmon_preemptions"] = result.sim.preemptions
    out["decisions"] = result.sim.rec.decision_count
    return out
