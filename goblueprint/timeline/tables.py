"""A trace as relational tables: for Parquet export and for SQL (DuckDB).

Tables (all times in ns, Go trace time; ids -1 for none):

* ``events``     one row per event in reader order: seq, time, kind, g, p, m, stack,
                 resource_kind/resource_id/old_state/new_state/reason for state
                 transitions, name (range/metric/task/region type, log category,
                 label), value (metric value), task, message (log text).
* ``intervals``  the timeline spans with lane/state/label names resolved
                 (see goblueprint.timeline.model).
* ``goroutines`` Go's per-goroutine summary (as go tool trace's goroutine analysis),
                 with block time by reason as a list of {reason, ns}.
* ``metrics``    sampled counters: heap, heap goal, goroutines, GOMAXPROCS, and the
                 derived running/runnable/in-syscall goroutine counts.
* ``flows``      wake-ups and other start causes, with ``migrated``.
* ``stacks``     stack frames: stack, depth (0 = leaf), pc, func, file, line.
* ``lanes``, ``states``  display names of lanes and state codes.

Strings are stored as data; nothing here interprets them.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, NamedTuple

import polars as pl

from goblueprint.errors import PathError
from goblueprint.timeline._api import (
    K_LABEL,
    K_LOG,
    K_METRIC,
    K_RANGE_ACTIVE,
    K_RANGE_BEGIN,
    K_RANGE_END,
    K_REGION_BEGIN,
    K_REGION_END,
    K_STATE,
    K_TASK_BEGIN,
    K_TASK_END,
    EventKind,
    GoState,
    ProcState,
    ResourceKind,
)
from goblueprint.timeline.model import Timeline, state_table
from goblueprint.timeline.summary import Summary

_KIND_NAMES = [k.name for k in sorted(EventKind, key=int)]
_RESOURCE_NAMES = [k.name for k in sorted(ResourceKind, key=int)]
_GO_STATES = [k.name for k in sorted(GoState, key=int)]
_PROC_STATES = [k.name for k in sorted(ProcState, key=int)]
_R_PROC = int(ResourceKind.PROC)
_MAX_I64 = 2**63 - 1
_EVENT_CHUNK = 1 << 19  # events kept as Python lists before they are packed into a DataFrame chunk


def _i64(v: int) -> int:
    # Task ids are uint64; NoTask and other huge ids become -1 in an Int64 column.
    return -1 if v > _MAX_I64 else v


class EventRows:
    """Consumer that turns every event into a row of the ``events`` table."""

    COLUMNS = (
        "seq",
        "time",
        "kind",
        "g",
        "p",
        "m",
        "stack",
        "resource_kind",
        "resource_id",
        "old_state",
        "new_state",
        "reason",
        "name",
        "value",
        "task",
        "message",
    )

    def __init__(self, stack_id: Callable[[Any], int]) -> None:
        self.cols: dict[str, list[Any]] = {c: [] for c in self.COLUMNS}
        self.stack_id = stack_id
        self.seq = 0
        self.chunks: list[pl.DataFrame] = []

    def event(self, ev: Any) -> None:
        kind = int(ev.kind)
        self.step(ev, kind, ev.state_transition() if kind == K_STATE else None)

    def step(self, ev: Any, kind: int, st: Any) -> None:
        c = self.cols
        rk = rid = old = new = None
        reason = name = message = None
        value = None
        task = None
        if kind == K_STATE:
            rk = int(st.resource.kind)
            rid = st.resource.id
            names = _PROC_STATES if rk == _R_PROC else _GO_STATES
            old, new = names[st.old], names[st.new]
            reason = st.reason
        elif kind == K_RANGE_BEGIN or kind == K_RANGE_ACTIVE or kind == K_RANGE_END:
            r = ev.range()
            name = r.name
            rk, rid = int(r.scope.kind), r.scope.id
        elif kind == K_METRIC:
            metric = ev.metric()
            name = metric.name
            v = metric.value
            value = float(v.uint64() if hasattr(v, "uint64") else v)
        elif kind == K_TASK_BEGIN or kind == K_TASK_END:
            t = ev.task()
            name, task = t.type, _i64(t.id)
        elif kind == K_REGION_BEGIN or kind == K_REGION_END:
            r = ev.region()
            name, task = r.type, _i64(r.task)
        elif kind == K_LOG:
            log = ev.log()
            name, message, task = log.category, log.message, _i64(log.task)
        elif kind == K_LABEL:
            label = ev.label()
            name = label.label
            rk, rid = int(label.resource.kind), label.resource.id
        c["seq"].append(self.seq)
        self.seq += 1
        c["time"].append(ev.time)
        c["kind"].append(_KIND_NAMES[kind] if 0 <= kind < len(_KIND_NAMES) else str(kind))
        c["g"].append(ev.goroutine)
        c["p"].append(ev.proc)
        c["m"].append(ev.thread)
        c["stack"].append(self.stack_id(ev.stack))
        c["resource_kind"].append(None if rk is None else _RESOURCE_NAMES[rk])
        c["resource_id"].append(rid)
        c["old_state"].append(old)
        c["new_state"].append(new)
        c["reason"].append(reason)
        c["name"].append(name)
        c["value"].append(value)
        c["task"].append(task)
        c["message"].append(message)
        if self.seq % _EVENT_CHUNK == 0:
            self._flush()  # bounded memory: Python objects cost ~10x the packed columns

    def _flush(self) -> None:
        self.chunks.append(pl.DataFrame(self.cols, schema=_EVENTS_SCHEMA))
        self.cols = {c: [] for c in self.COLUMNS}

    def frame(self) -> pl.DataFrame:
        self._flush()
        return pl.concat(self.chunks)


_EVENTS_SCHEMA = {
    "seq": pl.Int64, "time": pl.Int64, "kind": pl.String, "g": pl.Int64, "p": pl.Int64, "m": pl.Int64,
    "stack": pl.UInt32, "resource_kind": pl.String, "resource_id": pl.Int64, "old_state": pl.String,
    "new_state": pl.String, "reason": pl.String, "name": pl.String, "value": pl.Float64,
    "task": pl.Int64, "message": pl.String,
}  # fmt: skip


def goroutines_frame(summary: Summary) -> pl.DataFrame:
    from goblueprint.timeline.metrics import goroutine_stats

    rows = []
    for gid in sorted(summary.goroutines):
        st = goroutine_stats(summary.goroutines[gid])
        rows.append(
            {
                **{
                    k: st[k]
                    for k in (
                        "id",
                        "name",
                        "creation_time",
                        "start_time",
                        "end_time",
                        "exec",
                        "sched_wait",
                        "syscall",
                        "syscall_block",
                        "gc_assist",
                        "sweep",
                        "unknown",
                        "total",
                    )
                },
                "block_total": sum(st["block"].values()),
                "block": [{"reason": r, "ns": ns} for r, ns in st["block"].items()],
            }
        )
    schema = {
        "id": pl.Int64,
        "name": pl.String,
        "creation_time": pl.Int64,
        "start_time": pl.Int64,
        "end_time": pl.Int64,
        "exec": pl.Int64,
        "sched_wait": pl.Int64,
        "syscall": pl.Int64,
        "syscall_block": pl.Int64,
        "gc_assist": pl.Int64,
        "sweep": pl.Int64,
        "unknown": pl.Int64,
        "total": pl.Int64,
        "block_total": pl.Int64,
        "block": pl.List(pl.Struct({"reason": pl.String, "ns": pl.Int64})),
    }
    return pl.DataFrame(rows, schema=schema)


def timeline_tables(tl: Timeline) -> dict[str, pl.DataFrame]:
    """The tables that come from the timeline alone."""
    strings = pl.Series("s", tl.strings, dtype=pl.String)
    counters = tl.counters
    stacks = tl.stack_frames
    return {
        "intervals": tl.with_names("spans"),
        "metrics": pl.DataFrame(
            [strings.gather(counters["name"]).alias("name"), counters["time"], counters["value"]]
        ),
        "flows": tl.with_names("flows"),
        "stacks": pl.DataFrame(
            [
                stacks["stack"],
                stacks["depth"],
                stacks["pc"],
                strings.gather(stacks["func"]).alias("func"),
                strings.gather(stacks["file"]).alias("file"),
                stacks["line"],
            ]
        ),
        "lanes": tl.with_names("lanes"),
        "states": state_table(),
    }


def trace_tables(
    source: Any,
    progress: Callable[[int], None] | None = None,
    *,
    events: bool = True,
    show_capture: bool = False,
) -> dict[str, pl.DataFrame]:
    """Every table of a trace (path, bytes or events), from one pass.

    ``events=False`` leaves out the events table, the costliest one, when it is not needed.
    """
    return tables_pass(source, progress, events=events, show_capture=show_capture)[0]


class TablesPass(NamedTuple):
    tables: dict[str, pl.DataFrame]  # by name, in name order
    timeline: Timeline
    result: Any  # source.PassResult: the trace's error, version, valid events
    summary: Summary
    profiles: Any  # pprof.StayTables of every profile type, if views asked for them
    utilization: Any  # list[mmu.Series] of mmu.DEFAULT_FLAGS, if views asked for them


def tables_pass(
    source: Any,
    progress: Callable[[int], None] | None = None,
    *,
    events: bool = True,
    show_capture: bool = False,
    views: bool = False,
) -> TablesPass:
    """``trace_tables``, with the Timeline they come from, the pass's result (error, version),
    the goroutine summary and, with VIEWS, what pprof and metrics read: the stays of every
    pprof type and the mutator utilization of the default MMU flags."""
    from goblueprint.timeline.builder import TimelineBuilder
    from goblueprint.timeline.mmu import DEFAULT_FLAGS, UtilCollector
    from goblueprint.timeline.pprof import PROFILE_TYPES, StayCollector, StayTables, stays_frame
    from goblueprint.timeline.source import run_pass
    from goblueprint.timeline.summary import Summarizer

    builder = TimelineBuilder()
    summarizer = Summarizer()
    consumers: list[Any] = [summarizer, builder]
    rows = EventRows(builder.stack_id) if events else None
    if rows is not None:
        consumers.append(rows)
    stays = StayCollector(PROFILE_TYPES) if views else None
    util = UtilCollector(DEFAULT_FLAGS) if views else None
    if stays is not None and util is not None:
        consumers += [stays, util]
    result = run_pass(source, consumers, progress)
    # The stays' stacks are interned before finish(), so the timeline's stack frames hold them.
    stays_table = (
        stays_frame(result.marks.stays(stays, show=show_capture), builder.stack_id)
        if stays is not None
        else None
    )
    tl = result.marks.timeline(builder.finish(result.last_time), show=show_capture)
    tl.go_version = result.go_version
    summary = result.marks.summary(summarizer.finalize(), show=show_capture)
    out = {"goroutines": goroutines_frame(summary)}
    if rows is not None:
        out["events"] = result.marks.events(rows.frame(), show=show_capture)
    out.update(timeline_tables(tl))
    stay_tables = None
    if stays_table is not None:
        stay_tables = StayTables.of_pass(stays_table, summary, tl, result)
    utilization = util.finish() if util is not None else None
    return TablesPass(dict(sorted(out.items())), tl, result, summary, stay_tables, utilization)


def write_parquet(
    timeline_or_path: Timeline | str | os.PathLike[str] | Iterable[Any], out_dir: str | os.PathLike[str]
) -> list[Path]:
    """Write the tables as OUT_DIR/<table>.parquet; returns the files written.

    Given a trace (path, Reader or events), all tables are written (events, intervals, goroutines,
    metrics, flows, stacks, lanes, states).  Given an already built Timeline,
    only the tables that come from it are (no events, no goroutines).
    """
    if isinstance(timeline_or_path, Timeline):
        tables = timeline_tables(timeline_or_path)
    else:
        tables = trace_tables(timeline_or_path)
    return write_frames(tables, out_dir)


def write_frames(tables: dict[str, pl.DataFrame], out_dir: str | os.PathLike[str]) -> list[Path]:
    """Write each table as OUT_DIR/<name>.parquet (the directory made if needed); returns the files."""
    return write_table_files(
        out_dir,
        {name: (lambda path, df=df: df.write_parquet(path, statistics=True)) for name, df in tables.items()},
    )


def write_table_files(
    out_dir: str | os.PathLike[str], writers: dict[str, Callable[[Path], None]]
) -> list[Path]:
    """Make OUT_DIR and call each WRITERS[name](OUT_DIR/<name>.parquet), in name order; returns
    the files.  Any OSError becomes a PathError naming the path the user asked for."""
    out = Path(out_dir)
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:  # name the directory asked for, not the parent that failed
        raise PathError.from_os(out, exc, write=True) from None
    try:
        written = []
        for name, write in sorted(writers.items()):
            path = out / f"{name}.parquet"
            write(path)
            written.append(path)
    except OSError as exc:
        raise PathError.from_os(exc.filename or out, exc, write=True) from None
    return written
