"""Go's goroutine summary and the mutator utilization as tables, and back.

The ingest stores them so that ``trace metrics`` reads a trace's summary and its
utilization functions instead of making a pass over its events.  A goroutine's
block and range times keep their order (a list of (name, ns) per goroutine), so
the summary read back is the one the pass made, field for field, for everything
below; what only the pass needs while events stream in (the pending state) is
not kept, nor a task's region list (no view reads it).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import polars as pl

from goblueprint.timeline.mmu import Series
from goblueprint.timeline.summary import ExecStats, GoroutineSummary, RegionSummary, Summary, TaskSummary

_NS_BY = pl.List(pl.Struct({"name": pl.String, "ns": pl.Int64}))
_STATS_SCHEMA = {
    "exec_time": pl.Int64, "sched_wait_time": pl.Int64, "syscall_time": pl.Int64,
    "syscall_block_time": pl.Int64, "total_time": pl.Int64, "block": _NS_BY, "ranges": _NS_BY,
}  # fmt: skip
GOROUTINES_SCHEMA = {
    "id": pl.Int64, "name": pl.String, "pc": pl.UInt64, "creation_time": pl.Int64,
    "start_time": pl.Int64, "end_time": pl.Int64, **_STATS_SCHEMA,
}  # fmt: skip
# start_time/end_time null: the region began before the trace or had not ended (Go's nil).
# Task ids are the wire's uint64s, any value up to NoTask (2**64 - 1): kept as they are.
REGIONS_SCHEMA = {
    "g": pl.Int64, "task": pl.UInt64, "name": pl.String, "start_time": pl.Int64, "end_time": pl.Int64,
    **_STATS_SCHEMA,
}  # fmt: skip
TASKS_SCHEMA = {
    "id": pl.UInt64, "name": pl.String, "parent": pl.UInt64, "children": pl.List(pl.UInt64),
    "start_time": pl.Int64, "end_time": pl.Int64, "logs": pl.Int64, "goroutines": pl.List(pl.Int64),
}  # fmt: skip
UTILIZATION_SCHEMA = {"series": pl.UInt32, "time": pl.Int64, "util": pl.Float64}


def _stats_row(s: ExecStats) -> dict[str, Any]:
    return {
        "exec_time": s.exec_time,
        "sched_wait_time": s.sched_wait_time,
        "syscall_time": s.syscall_time,
        "syscall_block_time": s.syscall_block_time,
        "total_time": s.total_time,
        "block": [{"name": k, "ns": v} for k, v in s.block_time_by_reason.items()],
        "ranges": [{"name": k, "ns": v} for k, v in s.range_time.items()],
    }


def _stats(row: dict[str, Any]) -> ExecStats:
    return ExecStats(
        exec_time=row["exec_time"],
        sched_wait_time=row["sched_wait_time"],
        block_time_by_reason={b["name"]: b["ns"] for b in row["block"]},
        syscall_time=row["syscall_time"],
        syscall_block_time=row["syscall_block_time"],
        total_time=row["total_time"],
        range_time={r["name"]: r["ns"] for r in row["ranges"]},
    )


def summary_frames(summary: Summary) -> dict[str, pl.DataFrame]:
    """The summary as three tables (goroutines, regions, tasks), in the summary's order."""
    goroutines, regions = [], []
    for g in summary.goroutines.values():
        goroutines.append(
            {
                "id": g.id, "name": g.name, "pc": g.pc, "creation_time": g.creation_time,
                "start_time": g.start_time, "end_time": g.end_time, **_stats_row(g.stats),
            }
        )  # fmt: skip
        for r in g.regions:
            regions.append(
                {"g": g.id, "task": r.task, "name": r.name, "start_time": r.start_time,
                 "end_time": r.end_time, **_stats_row(r.stats)}
            )  # fmt: skip
    tasks = [
        {
            "id": t.id, "name": t.name, "parent": t.parent, "children": t.children,
            "start_time": t.start_time, "end_time": t.end_time, "logs": t.logs,
            "goroutines": sorted(t.goroutines),
        }
        for t in summary.tasks.values()
    ]  # fmt: skip
    return {
        "goroutines": pl.DataFrame(goroutines, schema=GOROUTINES_SCHEMA),
        "regions": pl.DataFrame(regions, schema=REGIONS_SCHEMA),
        "tasks": pl.DataFrame(tasks, schema=TASKS_SCHEMA),
    }


def summary_of(frames: dict[str, pl.DataFrame], start_time: int, end_time: int) -> Summary:
    """The Summary the tables of ``summary_frames`` were made from (see the module's note)."""
    goroutines: dict[int, GoroutineSummary] = {}
    for row in frames["goroutines"].iter_rows(named=True):
        goroutines[row["id"]] = GoroutineSummary(
            id=row["id"],
            name=row["name"],
            pc=row["pc"],
            creation_time=row["creation_time"],
            start_time=row["start_time"],
            end_time=row["end_time"],
            stats=_stats(row),
        )
    for row in frames["regions"].iter_rows(named=True):
        goroutines[row["g"]].regions.append(
            RegionSummary(row["task"], row["name"], row["start_time"], row["end_time"], _stats(row))
        )
    tasks = {
        row["id"]: TaskSummary(
            id=row["id"],
            name=row["name"],
            parent=row["parent"],
            children=list(row["children"]),
            start_time=row["start_time"],
            end_time=row["end_time"],
            logs=row["logs"],
            goroutines=set(row["goroutines"]),
        )
        for row in frames["tasks"].iter_rows(named=True)
    }
    return Summary(goroutines, tasks, start_time, end_time)


def utilization_frame(series: list[Series]) -> pl.DataFrame:
    """Mutator utilization functions as rows (series index, time, utilization)."""
    parts = [
        pl.DataFrame(
            {"series": np.full(len(s.time), i, dtype=np.uint32), "time": s.time, "util": s.util},
            schema=UTILIZATION_SCHEMA,
        )
        for i, s in enumerate(series)
    ]
    return pl.concat(parts) if parts else pl.DataFrame(schema=UTILIZATION_SCHEMA)


def utilization_of(frame: pl.DataFrame, count: int) -> list[Series]:
    """The COUNT series ``utilization_frame`` wrote (a series may have no point)."""
    out = []
    for i in range(count):
        part = frame.filter(pl.col("series") == i)
        out.append(Series(part["time"].to_numpy().copy(), part["util"].to_numpy().copy()))
    return out
