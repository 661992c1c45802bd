"""Scheduler metrics of a trace: plain data computed from the summary and the timeline.

* goroutine groups by start function with Go's per-goroutine breakdown
  (internal/trace/summary.go; the same numbers as ``go tool trace``'s goroutine
  analysis): execution, scheduler wait, block time by reason, syscall, syscall
  block, GC mark assist and sweep (range times, which overlap the others);
* scheduling latency (runnable -> running) distribution from the wake-up flows;
* per-P utilization from the P spans;
* stop-the-world pauses by reason (the only pauses: every goroutine stops), and
  apart from them the concurrent GC phases (mark, assists, sweeping), which run
  beside the program;
* migrations: a G made runnable on one P and started on another, per P;
* minimum mutator utilization (Go's definition, see ``mmu``);
* task and region durations by type, as ``go tool trace``'s /usertasks and
  /userregions pages histogram them.

Percentiles are nearest-rank: the smallest value with at least p% of the
values at or below it (so every reported value occurred).
"""

from __future__ import annotations

import math
from collections import defaultdict
from typing import Any

import numpy as np
import polars as pl

from goblueprint.errors import UsageError
from goblueprint.timeline import mmu
from goblueprint.timeline.batches import TimelineScans, batches_of
from goblueprint.timeline.mmu import DEFAULT_FLAGS, DEFAULT_WINDOWS, Series
from goblueprint.timeline.model import LaneKind, State, Timeline
from goblueprint.timeline.summary import GoroutineSummary, Summary

ASSIST = "GC mark assist"
SWEEP = "GC incremental sweep"


def percentile(sorted_values: np.ndarray, p: float) -> int:
    if len(sorted_values) == 0:
        return 0
    rank = max(1, math.ceil(p / 100 * len(sorted_values)))
    return int(sorted_values[rank - 1])


def distribution(values: np.ndarray) -> dict[str, int]:
    return _sorted_distribution(np.sort(np.asarray(values, dtype=np.int64)))


def _sorted_distribution(v: np.ndarray) -> dict[str, int]:
    return {
        "count": len(v),
        "total": int(v.sum()) if len(v) else 0,
        "p50": percentile(v, 50),
        "p90": percentile(v, 90),
        "p99": percentile(v, 99),
        "max": int(v[-1]) if len(v) else 0,
    }


def goroutine_stats(g: GoroutineSummary) -> dict[str, Any]:
    s = g.stats
    return {
        "id": g.id,
        "name": g.name,
        "creation_time": g.creation_time,
        "start_time": g.start_time,
        "end_time": g.end_time,
        "exec": s.exec_time,
        "sched_wait": s.sched_wait_time,
        "block": dict(sorted(s.block_time_by_reason.items())),
        "syscall": s.syscall_time,
        "syscall_block": s.syscall_block_time,
        "gc_assist": s.range_time.get(ASSIST, 0),
        "sweep": s.range_time.get(SWEEP, 0),
        "unknown": s.unknown_time(),
        "total": s.total_time,
        "ranges": dict(sorted(s.range_time.items())),
        "non_overlapping": dict(sorted(s.non_overlapping().items())),
    }


def goroutine_groups(summary: Summary) -> list[dict[str, Any]]:
    """Goroutines grouped by start function, sorted like go tool trace (exec time, descending).

    Each group carries its ``members``: every goroutine's breakdown, by total time
    descending as Go's per-group page lists them.
    """
    groups: dict[str, dict[str, Any]] = {}
    total_exec = sum(g.stats.exec_time for g in summary.goroutines.values())
    for g in summary.goroutines.values():
        st = goroutine_stats(g)
        grp = groups.get(g.name)
        if grp is None:
            grp = groups[g.name] = {
                "name": g.name,
                "count": 0,
                "block": defaultdict(int),
                **{k: 0 for k in ("exec", "sched_wait", "syscall", "syscall_block", "gc_assist", "sweep",
                                  "unknown", "total")},
            }  # fmt: skip
        grp.setdefault("members", []).append(st)
        grp["count"] += 1
        for k in ("exec", "sched_wait", "syscall", "syscall_block", "gc_assist", "sweep", "unknown", "total"):
            grp[k] += st[k]
        for reason, dt in st["block"].items():
            grp["block"][reason] += dt
    out = []
    for grp in groups.values():
        grp["block"] = dict(sorted(grp["block"].items()))
        grp["block_total"] = sum(grp["block"].values())
        # Go's goroutine page: the share of all execution time, members by total time.
        grp["exec_share"] = round(grp["exec"] / total_exec, 6) if total_exec else 0.0
        grp["members"].sort(key=lambda m: (-m["total"], m["id"]))
        out.append(grp)
    out.sort(key=lambda g: (-g["exec"], g["name"]))
    return out


def sched_latency(tl: Timeline | TimelineScans) -> dict[str, int]:
    """Runnable -> running delays of every wake-up, creation, syscall exit and preemption."""
    # One array of every delay, filled a batch at a time and sorted where it lies: 4 bytes a
    # flow while every delay fits in u32 (4.29 s), 8 from the first one that does not.  Sized
    # by the table's rows (its metadata): the flows without an end leave its tail untouched.
    v = np.empty(_rows(tl.flows), np.uint32)
    at = 0
    for f in batches_of(tl.flows, columns=("from_time", "to_time")):
        to = f["to_time"].to_numpy()
        d = (to - f["from_time"].to_numpy())[to >= 0]
        if v.dtype == np.uint32 and len(d) and (d.min() < 0 or d.max() > _U32_MAX):
            wide = np.empty(len(v), np.int64)
            wide[:at] = v[:at]
            v = wide
        v[at : at + len(d)] = d
        at += len(d)
    v = v[:at]
    v.sort()
    return _sorted_distribution(v)


_U32_MAX = (1 << 32) - 1


def _rows(frame: pl.DataFrame | pl.LazyFrame) -> int:
    """Rows of FRAME: a stored table's from its metadata."""
    return frame.height if isinstance(frame, pl.DataFrame) else int(frame.select(pl.len()).collect().item())


def proc_utilization(tl: Timeline | TimelineScans) -> list[dict[str, Any]]:
    duration = max(1, tl.end_ns - tl.start_ns)
    # Per P: time running a G, running, idle, stopped; each batch of P spans summed per P with
    # numpy (the main thread's allocator reuses the batches' memory), then the batches' sums.
    sums: dict[int, np.ndarray] = {}
    for b in batches_of(
        tl.spans,
        where=pl.col("lane_kind") == int(LaneKind.P),
        columns=("lane_id", "start", "end", "state", "g"),
    ):
        lane = b["lane_id"].to_numpy()
        d = b["end"].to_numpy() - b["start"].to_numpy()
        state = b["state"].to_numpy()
        running = state == int(State.P_RUNNING)
        parts = (
            running & (b["g"].to_numpy() >= 0),
            running,
            state == int(State.P_IDLE),
            state == int(State.P_STOPPED),
        )
        order = np.argsort(lane, kind="stable")
        ps, first = np.unique(lane[order], return_index=True)
        if len(ps) == 0:
            continue
        per_p = np.stack([np.add.reduceat(np.where(part, d, 0)[order], first) for part in parts], axis=1)
        for p, row in zip(ps.tolist(), per_p, strict=True):
            sums[p] = sums[p] + row if p in sums else row
    return [
        {
            "p": p,
            "running_g": int(sums[p][0]),
            "running": int(sums[p][1]),
            "idle": int(sums[p][2]),
            "stopped": int(sums[p][3]),
            "utilization": round(int(sums[p][0]) / duration, 6),
        }
        for p in sorted(sums)
    ]


def _spans_of(
    tl: Timeline | TimelineScans, kinds: tuple[LaneKind, ...], columns: tuple[str, ...]
) -> pl.DataFrame:
    """The spans of the lanes of KINDS (few: stop-the-world, GC phases), COLUMNS only."""
    where = pl.col("lane_kind").is_in([int(k) for k in kinds])
    return pl.concat(batches_of(tl.spans, where=where, columns=columns))


def pauses(tl: Timeline | TimelineScans) -> list[dict[str, Any]]:
    """Stop-the-world pauses by reason, each with its distribution; ``gc`` marks the GC's own."""
    rows = []
    stw = _spans_of(tl, (LaneKind.STW,), ("label", "start", "end"))
    for label in sorted(set(stw["label"].to_list()), key=lambda i: tl.strings[i]):
        d = stw.filter(pl.col("label") == label)
        reason = tl.strings[label]
        # "kind" stays for readers of the older table, which mixed in the GC phases.
        durations = (d["end"] - d["start"]).to_numpy()
        rows.append({"kind": "stw", "reason": reason, "gc": "GC" in reason, **distribution(durations)})
    return rows


# Concurrent GC work: it takes Ps or goroutines away from the program but stops nothing.
GC_PHASES = (
    (State.GC_CYCLE, "GC concurrent mark phase"),
    (State.MARK_ASSIST, ASSIST),
    (State.SWEEP, SWEEP),
)


# The lanes of the GC phases' spans (timeline.model): the cycles on the GC lane, assists on
# the goroutines' range lanes, sweeps on the Ps'.
GC_PHASE_LANES = (LaneKind.GC, LaneKind.GRANGE, LaneKind.PRANGE)


def gc_phases(tl: Timeline | TimelineScans) -> list[dict[str, Any]]:
    """Concurrent mark cycles, mark assists and sweeps: each span's duration distribution."""
    rows = []
    spans = _spans_of(tl, GC_PHASE_LANES, ("state", "start", "end"))
    for state, name in GC_PHASES:
        d = spans.filter(pl.col("state") == int(state))
        if d.height:
            rows.append({"phase": name, **distribution((d["end"] - d["start"]).to_numpy())})
    return rows


def _latency_row(durations: list[int]) -> dict[str, int | None]:
    if not durations:  # no duration to rank: null, not a 0 that reads as "instant"
        return {"total": 0, "p50": None, "p90": None, "p99": None, "max": None}
    d = distribution(np.array(durations, dtype=np.int64))
    return {k: d[k] for k in ("total", "p50", "p90", "p99", "max")}


def task_latency(summary: Summary) -> list[dict[str, Any]]:
    """Per task type: how many tasks, and the durations of those both begun and ended in the
    trace (go tool trace's /usertasks: Count, then the histogram of complete tasks)."""
    by_type: dict[str, list[int]] = defaultdict(list)
    counts: dict[str, int] = defaultdict(int)
    for task in summary.tasks.values():
        counts[task.name] += 1
        if task.start_time is not None and task.end_time is not None:
            by_type[task.name].append(task.end_time - task.start_time)
    return [
        {"type": name, "count": counts[name], "complete": len(by_type[name]), **_latency_row(by_type[name])}
        for name in sorted(counts)
    ]


def region_latency(summary: Summary) -> list[dict[str, Any]]:
    """Per region type: every region of every goroutine, a region cut by the trace's start or
    end timed from or to it (go tool trace's /userregions; it also splits a type by the
    frame the region began in, which these summaries do not keep)."""
    by_type: dict[str, list[int]] = defaultdict(list)
    complete: dict[str, int] = defaultdict(int)
    for g in summary.goroutines.values():
        for r in g.regions:
            start = summary.start_time if r.start_time is None else r.start_time
            end = summary.end_time if r.end_time is None else r.end_time
            by_type[r.name].append(end - start)
            complete[r.name] += r.start_time is not None and r.end_time is not None
    return [
        {"type": name, "count": len(d), "complete": complete[name], **_latency_row(d)}
        for name, d in sorted(by_type.items())
    ]


def migrations(tl: Timeline | TimelineScans) -> dict[str, Any]:
    per_p: dict[int, dict[str, int]] = defaultdict(lambda: {"in": 0, "out": 0})
    total = starts = 0
    for f in batches_of(tl.flows, columns=("migrated", "from_p", "to_p")):
        moved = f.filter(pl.col("migrated"))
        total += moved.height
        for side, col in (("in", "to_p"), ("out", "from_p")):
            for p, n in moved.group_by(col).len().iter_rows():
                per_p[p][side] += n
        starts += f.filter(pl.col("to_p") >= 0).height
    return {
        "total": total,
        "starts": starts,
        "per_p": [{"p": p, **v} for p, v in sorted(per_p.items())],
    }


def compute(
    summary: Summary,
    tl: Timeline | TimelineScans,
    goroutine: int | None = None,
    *,
    utilization: list[Series] | None = None,
    mmu_flags: int = DEFAULT_FLAGS,
    mmu_windows: tuple[int, ...] | list[int] = DEFAULT_WINDOWS,
) -> dict[str, Any]:
    """Everything ``trace metrics`` prints, as JSON-able plain data.

    TL is the trace's Timeline or, from its ingested tables, their scans (read a batch at a
    time: the P spans and the flows are never whole in memory).

    ``utilization`` is what a ``UtilCollector(mmu_flags)`` collected in the same pass;
    without it there is no ``mmu`` section."""
    if goroutine is not None:
        g = summary.goroutines.get(goroutine)
        if g is None:
            raise UsageError(f"no goroutine {goroutine} in this trace")
        return {"goroutine": goroutine_stats(g)}
    groups = goroutine_groups(summary)
    return {
        "trace": {"start_ns": tl.start_ns, "end_ns": tl.end_ns, "duration_ns": tl.end_ns - tl.start_ns},
        "goroutines": len(summary.goroutines),
        "groups": groups,
        "groups_total": len(groups),
        "sched_latency": sched_latency(tl),
        "procs": proc_utilization(tl),
        "pauses": pauses(tl),
        "gc_phases": gc_phases(tl),
        "migrations": migrations(tl),
        "tasks": task_latency(summary),
        "regions": region_latency(summary),
        **({"mmu": mmu.summary(utilization, mmu_flags, mmu_windows)} if utilization is not None else {}),
    }
