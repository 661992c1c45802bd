"""Per-goroutine time accounting, exactly as Go's ``internal/trace/summary.go``.

``go tool trace``'s goroutine analysis and its ``-pprof`` profiles are computed
from this summary, so it is ported line by line (same zero-time sentinels, same
quirks) rather than re-derived: the point is to print Go's numbers.  Durations
and times are integer nanoseconds.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from goblueprint.errors import TraceError
from goblueprint.timeline._api import (
    G_NOT_EXIST,
    G_RUNNABLE,
    G_RUNNING,
    G_SYSCALL,
    G_UNDETERMINED,
    G_WAITING,
    K_LOG,
    K_RANGE_ACTIVE,
    K_RANGE_BEGIN,
    K_RANGE_END,
    K_REGION_BEGIN,
    K_REGION_END,
    K_STATE,
    K_SYNC,
    K_TASK_BEGIN,
    K_TASK_END,
    NO_PROC,
    NO_TASK,
    P_IDLE,
    R_GOROUTINE,
    R_PROC,
    is_system_goroutine,
)


@dataclass
class ExecStats:
    """Go's GoroutineExecStats: exec/sched-wait/block/syscall are non-overlapping."""

    exec_time: int = 0
    sched_wait_time: int = 0
    block_time_by_reason: dict[str, int] = field(default_factory=dict)
    syscall_time: int = 0
    syscall_block_time: int = 0
    total_time: int = 0
    range_time: dict[str, int] = field(default_factory=dict)

    def clone(self) -> ExecStats:
        return ExecStats(
            self.exec_time,
            self.sched_wait_time,
            dict(self.block_time_by_reason),
            self.syscall_time,
            self.syscall_block_time,
            self.total_time,
            dict(self.range_time),
        )

    def sub(self, v: ExecStats) -> ExecStats:
        r = self.clone()
        r.exec_time -= v.exec_time
        r.sched_wait_time -= v.sched_wait_time
        for reason in self.block_time_by_reason:
            r.block_time_by_reason[reason] -= v.block_time_by_reason.get(reason, 0)
        r.syscall_time -= v.syscall_time
        r.syscall_block_time -= v.syscall_block_time
        r.total_time -= v.total_time
        for name in self.range_time:
            r.range_time[name] -= v.range_time.get(name, 0)
        return r

    def unknown_time(self) -> int:
        total = self.exec_time + self.sched_wait_time + self.syscall_time + self.syscall_block_time
        total += sum(self.block_time_by_reason.values())
        return self.total_time - total if total < self.total_time else 0

    def non_overlapping(self) -> dict[str, int]:
        """Go's NonOverlappingStats: the breakdown the goroutine analysis page shows."""
        stats = {
            "Execution time": self.exec_time,
            "Sched wait time": self.sched_wait_time,
            "Syscall execution time": self.syscall_time,
            "Block time (syscall)": self.syscall_block_time,
            "Unknown time": self.unknown_time(),
        }
        for reason, dt in self.block_time_by_reason.items():
            key = f"Block time ({reason})"
            stats[key] = stats.get(key, 0) + dt
        return stats


@dataclass
class RegionSummary:
    task: int
    name: str
    start_time: int | None  # None: the region began before the trace (Go's nil Start)
    end_time: int | None
    stats: ExecStats = field(default_factory=ExecStats)


@dataclass
class TaskSummary:
    id: int
    name: str = ""
    parent: int | None = None
    children: list[int] = field(default_factory=list)
    start_time: int | None = None
    end_time: int | None = None
    logs: int = 0
    regions: list[RegionSummary] = field(default_factory=list)
    goroutines: set[int] = field(default_factory=set)


class _Pending:
    """Go's private goroutineSummary: state needed only while events stream in."""

    __slots__ = (
        "active_regions",
        "last_block_reason",
        "last_block_time",
        "last_range_time",
        "last_runnable_time",
        "last_start_time",
        "last_syscall_block_time",
        "last_syscall_time",
    )

    def __init__(self) -> None:
        self.last_start_time = 0
        self.last_runnable_time = 0
        self.last_block_time = 0
        self.last_block_reason = ""
        self.last_syscall_time = 0
        self.last_syscall_block_time = 0
        self.last_range_time: dict[str, int] = {}
        self.active_regions: list[RegionSummary] = []


@dataclass
class GoroutineSummary:
    id: int
    name: str = ""  # start function (root frame of the first stack seen)
    pc: int = 0
    creation_time: int = 0
    start_time: int = 0  # 0: never ran
    end_time: int = 0  # 0: never exited
    regions: list[RegionSummary] = field(default_factory=list)
    stats: ExecStats = field(default_factory=ExecStats)
    pending: _Pending | None = field(default=None, repr=False)

    def snapshot(self, last_ts: int) -> ExecStats:
        ret = self.stats.clone()
        p = self.pending
        if p is None:
            return ret
        if self.stats.total_time == 0:
            ret.total_time = last_ts - self.creation_time
        if p.last_start_time:
            ret.exec_time += last_ts - p.last_start_time
        if p.last_runnable_time:
            ret.sched_wait_time += last_ts - p.last_runnable_time
        if p.last_block_time:
            reasons = ret.block_time_by_reason
            reasons[p.last_block_reason] = reasons.get(p.last_block_reason, 0) + last_ts - p.last_block_time
        if p.last_syscall_time:
            ret.syscall_time += last_ts - p.last_syscall_time
        if p.last_syscall_block_time:
            ret.sched_wait_time += last_ts - p.last_syscall_block_time
        for name, ts in p.last_range_time.items():
            ret.range_time[name] = ret.range_time.get(name, 0) + last_ts - ts
        return ret

    def finalize(self, last_ts: int, trigger_time: int | None) -> None:
        if trigger_time is not None:
            self.end_time = trigger_time
        final = self.snapshot(last_ts)
        self.stats = final
        if self.pending is None:
            return
        if not is_system_goroutine(self.name):
            for region in self.pending.active_regions:
                region.end_time = trigger_time
                region.stats = final.sub(region.stats)
                self.regions.append(region)
        self.pending = _Pending()
        # Go zeroes the pending state (its maps become nil): no more ranges are tracked.
        self.pending.last_range_time = _FrozenDict()


class _FrozenDict(dict):
    """Go's nil map after finalize: reads are empty, writes are dropped."""

    def __setitem__(self, key: Any, value: Any) -> None:
        pass


@dataclass
class Summary:
    goroutines: dict[int, GoroutineSummary]
    tasks: dict[int, TaskSummary]
    start_time: int  # first event's time
    end_time: int  # last event's time


class Summarizer:
    """Feed events in reader order with ``event(ev)``, then ``finalize()``."""

    def __init__(self) -> None:
        self.gs: dict[int, GoroutineSummary] = {}
        self.tasks: dict[int, TaskSummary] = {}
        self.syscalling_p: dict[int, int] = {}
        self.syscalling_g: dict[int, int] = {}
        self.ranges_p: dict[tuple[int, str], int] = {}
        self.last_ts = 0
        self.sync_ts = 0
        self.first_ts: int | None = None

    def _new_g(self, gid: int, creation: int) -> GoroutineSummary:
        g = GoroutineSummary(id=gid, creation_time=creation, pending=_Pending())
        self.gs[gid] = g
        return g

    def _task(self, tid: int) -> TaskSummary:
        task = self.tasks.get(tid)
        if task is None:
            task = self.tasks[tid] = TaskSummary(tid)
        return task

    def event(self, ev: Any) -> None:
        kind = int(ev.kind)
        self.step(ev, kind, ev.state_transition() if kind == K_STATE else None)

    def step(self, ev: Any, kind: int, st: Any) -> None:
        t = ev.time
        if self.first_ts is None:
            self.first_ts = t
        if self.sync_ts == 0:
            self.sync_ts = t
        self.last_ts = t
        if kind == K_STATE:
            self._transition(ev, st, t)
        elif kind == K_SYNC:
            self.sync_ts = t
        elif kind == K_RANGE_BEGIN or kind == K_RANGE_ACTIVE:
            self._range_begin(ev, kind, t)
        elif kind == K_RANGE_END:
            self._range_end(ev, t)
        elif kind == K_REGION_BEGIN:
            g = self.gs.get(ev.goroutine)
            if g is None or g.pending is None:
                return
            r = ev.region()
            region = RegionSummary(r.task, r.type, t, None, g.snapshot(t))
            g.pending.active_regions.append(region)
            task = self._task(r.task)
            task.regions.append(region)
            task.goroutines.add(g.id)
        elif kind == K_REGION_END:
            g = self.gs.get(ev.goroutine)
            if g is None or g.pending is None:
                return
            r = ev.region()
            stack = g.pending.active_regions
            if stack:
                sd = stack.pop()
            else:
                sd = RegionSummary(r.task, r.type, None, None)
                task = self._task(r.task)
                task.goroutines.add(g.id)
                task.regions.append(sd)
            sd.stats = g.snapshot(t).sub(sd.stats)
            sd.end_time = t
            g.regions.append(sd)
        elif kind == K_TASK_BEGIN or kind == K_TASK_END:
            tk = ev.task()
            task = self._task(tk.id)
            task.name = tk.type
            task.goroutines.add(ev.goroutine)
            if kind == K_TASK_BEGIN:
                task.start_time = t
            else:
                task.end_time = t
            if tk.parent != NO_TASK and task.parent is None:
                parent = self._task(tk.parent)
                task.parent = tk.parent
                parent.children.append(task.id)
        elif kind == K_LOG:
            task = self._task(ev.log().task)
            task.goroutines.add(ev.goroutine)
            task.logs += 1

    def _transition(self, ev: Any, st: Any, t: int) -> None:
        rkind = st.resource.kind
        if rkind == R_GOROUTINE:
            gid = st.resource.id
            old, new = st.old, st.new
            if old == new:
                return
            g = self.gs.get(gid)
            if old == G_UNDETERMINED:
                g = self._new_g(gid, self.sync_ts)
                state_time = t - self.sync_ts
                s = g.stats
                if new == G_RUNNING:
                    s.exec_time += state_time
                elif new == G_WAITING:
                    s.block_time_by_reason[st.reason] = s.block_time_by_reason.get(st.reason, 0) + state_time
                elif new == G_RUNNABLE:
                    s.sched_wait_time += state_time
                elif new == G_SYSCALL:
                    if ev.proc == NO_PROC:
                        s.syscall_block_time += state_time
                    else:
                        s.syscall_time += state_time
            elif old == G_NOT_EXIST:
                g = self._new_g(gid, t)
                creator = self.gs.get(ev.goroutine)
                if creator is not None and creator.pending is not None and creator.pending.active_regions:
                    # A new goroutine inherits the task of its creator's innermost region.
                    top = creator.pending.active_regions[-1]
                    g.pending = _Pending()
                    g.pending.active_regions = [RegionSummary(top.task, "", t, None)]
            elif g is None or g.pending is None:
                raise TraceError(f"goroutine {gid} changes state before it was seen")
            else:
                p = g.pending
                s = g.stats
                if old == G_RUNNING:
                    s.exec_time += t - p.last_start_time
                    p.last_start_time = 0
                elif old == G_WAITING:
                    if p.last_block_time:
                        reason = p.last_block_reason
                        s.block_time_by_reason[reason] = (
                            s.block_time_by_reason.get(reason, 0) + t - p.last_block_time
                        )
                        p.last_block_time = 0
                elif old == G_RUNNABLE:
                    if p.last_runnable_time:
                        s.sched_wait_time += t - p.last_runnable_time
                        p.last_runnable_time = 0
                elif old == G_SYSCALL and p.last_syscall_time:
                    if p.last_syscall_block_time:
                        s.syscall_block_time += t - p.last_syscall_block_time
                        s.syscall_time += p.last_syscall_block_time - p.last_syscall_time
                    else:
                        s.syscall_time += t - p.last_syscall_time
                    p.last_syscall_time = 0
                    p.last_syscall_block_time = 0
                    proc = self.syscalling_g.pop(gid, None)
                    # Go deletes syscallingP[syscallingG[id]]; a missing entry reads as P 0.
                    self.syscalling_p.pop(0 if proc is None else proc, None)
            if not g.name:
                # The root frame names the goroutine: its immutable start point.
                for frame in st.stack.frames():
                    g.pc = frame.pc
                    g.name = frame.func
            p = g.pending
            if p is None:
                return
            if new == G_RUNNING:
                p.last_start_time = t
                if g.start_time == 0:
                    g.start_time = t
            elif new == G_RUNNABLE:
                p.last_runnable_time = t
            elif new == G_WAITING and st.reason != "forever":
                p.last_block_time = t
                p.last_block_reason = st.reason
            elif new == G_WAITING or new == G_NOT_EXIST:
                # Waiting "forever" is like goroutine death.
                g.finalize(t, t)
            elif new == G_SYSCALL:
                self.syscalling_p[ev.proc] = gid
                self.syscalling_g[gid] = ev.proc
                p.last_syscall_time = t
        elif rkind == R_PROC:
            pid = st.resource.id
            if st.old != st.new and st.new == P_IDLE:
                gid = self.syscalling_p.pop(pid, None)
                if gid is not None:
                    g = self.gs.get(gid)
                    if g is not None and g.pending is not None:
                        g.pending.last_syscall_block_time = t

    def _range_begin(self, ev: Any, kind: int, t: int) -> None:
        r = ev.range()
        g = None
        if r.scope.kind == R_GOROUTINE:
            g = self.gs.get(r.scope.id)
        elif r.scope.kind == R_PROC:
            g = self.gs.get(ev.goroutine)
            if g is not None:
                self.ranges_p[(r.scope.id, r.name)] = ev.goroutine
        if g is None or g.pending is None:
            return
        last = g.pending.last_range_time
        if kind == K_RANGE_ACTIVE:
            ts = last.get(r.name, 0)
            if ts:
                g.stats.range_time[r.name] = g.stats.range_time.get(r.name, 0) + self.sync_ts - ts
            last[r.name] = self.sync_ts
        else:
            last[r.name] = t

    def _range_end(self, ev: Any, t: int) -> None:
        r = ev.range()
        g = None
        if r.scope.kind == R_GOROUTINE:
            g = self.gs.get(r.scope.id)
        elif r.scope.kind == R_PROC:
            key = (r.scope.id, r.name)
            gid = self.ranges_p.pop(key, None)
            if gid is not None and gid == ev.goroutine:
                g = self.gs.get(gid)
        if g is None or g.pending is None:
            return
        ts = g.pending.last_range_time.get(r.name, 0)
        if not ts:
            return
        g.stats.range_time[r.name] = g.stats.range_time.get(r.name, 0) + t - ts
        g.pending.last_range_time.pop(r.name, None)

    def finalize(self) -> Summary:
        for g in self.gs.values():
            g.finalize(self.last_ts, None)
            g.regions.sort(key=lambda r: (r.start_time is not None, r.start_time or 0))
            g.pending = None
        return Summary(self.gs, self.tasks, self.first_ts or 0, self.last_ts)


def summarize(events: Iterable[Any]) -> Summary:
    s = Summarizer()
    for ev in events:
        s.event(ev)
    return s.finalize()
