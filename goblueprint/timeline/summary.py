"""Per-goroutine time accounting, exactly as Go's ``internal/trace/summary.go``.

``go tool trace``'s goroutine analysis and its ``-pprof`` profiles are computed
from this summary, so it is ported line by line (same zero-time sentinels, same
quirks) rather than re-derived: the point is to print Go's numbers.  Durations
and times are integer nanoseconds.

The per-event work is compiled (``summary_kernel.py``) and fed the pass's columns
chunk by chunk; Python runs once per new stack or string while events stream in,
and once per goroutine, region and task when ``finalize`` builds the objects below.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from goblueprint.errors import TraceError
from goblueprint.timeline import summary_codes
from goblueprint.timeline._api import is_system_goroutine
from goblueprint.trace import kernels
from goblueprint.trace.store import Interner


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


@dataclass
class Summary:
    goroutines: dict[int, GoroutineSummary]
    tasks: dict[int, TaskSummary]
    start_time: int  # first event's time
    end_time: int  # last event's time


# The columns the kernel reads (the store's).
_FEED = (
    "kind", "time", "goroutine", "proc", "resource_kind", "resource_id", "old_state", "new_state",
    "reason", "transition_stack", "name", "task", "parent_task",
)  # fmt: skip


class Summarizer:
    """Feed every chunk of a pass's columns to ``columns(cols, interner)``, then ``finalize()``."""

    def __init__(self) -> None:
        self._state = summary_codes.new_state()
        self._interner: Interner | None = None
        # Goroutine names (root functions of transition stacks), by id; 0 is "", a system name.
        self._names: list[str] = [""]
        self._name_ids: dict[str, int] = {"": 0}
        self._system = np.ones(1, np.bool_)
        # Per interned stack: its root frame's name id (-1: no frames) and PC (as int64 bits).
        self._root_func = np.full(1, -1, np.int64)
        self._root_pc = np.zeros(1, np.int64)
        self._strings_seen = 0
        self._forever = -2  # string id of the reason "forever", once the pass has it

    def columns(self, cols: dict[str, np.ndarray], interner: Interner) -> None:
        if self._interner is None:
            self._interner = interner
        elif interner is not self._interner:
            raise ValueError("a Summarizer reads one pass: its chunks share one Interner")
        self._learn(interner)
        self._run(summary_codes.MODE_CHUNK, [cols[name] for name in _FEED])

    def _learn(self, interner: Interner) -> None:
        """Per string and stack the pass interned since the last chunk (not per event)."""
        strings = interner.strings
        if self._strings_seen < len(strings):
            if self._forever < 0 and "forever" in strings[self._strings_seen :]:
                self._forever = strings.index("forever", self._strings_seen)
            self._strings_seen = len(strings)
        stacks = interner.stacks
        known = len(self._root_func)
        if known >= len(stacks):
            return
        funcs = np.full(len(stacks) - known, -1, np.int64)
        pcs = np.zeros(len(stacks) - known, np.uint64)
        for k, frames in enumerate(stacks[known:]):
            if frames:
                root = frames[-1]
                funcs[k] = self._name_id(root.func)
                pcs[k] = root.pc
        self._root_func = np.concatenate([self._root_func, funcs])
        self._root_pc = np.concatenate([self._root_pc, pcs.view(np.int64)])
        if len(self._system) < len(self._names):
            system = [is_system_goroutine(n) for n in self._names[len(self._system) :]]
            self._system = np.concatenate([self._system, np.array(system, np.bool_)])

    def _name_id(self, func: str) -> int:
        nid = self._name_ids.get(func)
        if nid is None:
            nid = self._name_ids[func] = len(self._names)
            self._names.append(func)
        return nid

    def _run(self, mode: int, feed: list[np.ndarray]) -> None:
        k = summary_codes
        sc, *tables = self._state
        # All int64, so the kernel is compiled for one signature whatever the columns' widths;
        # task ids (uint64 on the wire) as their bit patterns.
        feed = [a.view(np.int64) if a.dtype == np.uint64 else a.astype(np.int64, copy=False) for a in feed]
        status, value, *tables = kernels.get().summary_step(
            mode, *feed, self._root_func, self._root_pc, self._system, self._forever, sc, *tables
        )
        self._state = (sc, *tables)
        if status == k.ERR_UNSEEN:
            raise TraceError(f"goroutine {value} changes state before it was seen")

    def finalize(self) -> Summary:
        k = summary_codes
        self._run(k.MODE_FINALIZE, [np.zeros(0, np.int64) for _ in _FEED])
        sc, G, S, E, R, T, P, _ = self._state
        strings = self._interner.strings if self._interner is not None else [""]
        G, S, E = G[: sc[k.SC_GN]], S[: sc[k.SC_SN]], E[: sc[k.SC_EN]]
        R, T, P = R[: sc[k.SC_RN]], T[: sc[k.SC_TN]], P[: sc[k.SC_PN]]
        stats = _StatsReader(S, E, strings)
        regions = _Regions(R, stats, strings)

        live = np.flatnonzero(G["live"] == 1)
        live = live[np.argsort(G["rank"][live], kind="stable")]
        # A goroutine's regions, as Go sorts them: by start time (unknown first), ties in
        # the order they ended; regions of a summary that was replaced are dropped with it.
        owned = np.flatnonzero(R["g_seq"] >= 0)
        owned = owned[G["live"][R["owner"][owned]] == 1]
        owned = owned[
            np.lexsort((R["g_seq"][owned], R["start"][owned], R["has_start"][owned], R["owner"][owned]))
        ]
        by_owner = _groups(R["owner"][owned], owned)
        goroutines: dict[int, GoroutineSummary] = {}
        names = self._names
        for g, gid, name, creation, start, end, pc, s in zip(
            live.tolist(), *(G[f][live].tolist() for f in ("gid", "name", "creation", "start", "end")),
            G["pc"][live].view(np.uint64).tolist(), G["stats"][live].tolist(), strict=True,
        ):  # fmt: skip
            goroutines[gid] = GoroutineSummary(
                gid, names[name], pc, creation, start, end,
                [regions.get(r) for r in by_owner.get(g, ())], stats.get(s),
            )  # fmt: skip

        ids = T["id"].view(np.uint64).tolist()
        parents = T["parent"].view(np.uint64).tolist()
        in_task = np.flatnonzero(R["t_seq"] >= 0)
        in_task = in_task[np.lexsort((R["t_seq"][in_task], R["task_slot"][in_task]))]
        task_regions = _groups(R["task_slot"][in_task], in_task)
        kids = np.flatnonzero(T["child_of"] >= 0)
        kids = kids[np.lexsort((T["child_seq"][kids], T["child_of"][kids]))]
        children = _groups(T["child_of"][kids], kids)
        pairs = np.argsort(P["task"], kind="stable")
        members = _groups(P["task"][pairs], P["gid"][pairs])
        tasks: dict[int, TaskSummary] = {}
        for t, (name, has_parent, start, has_start, end, has_end, logs) in enumerate(
            zip(*(T[f].tolist() for f in ("name", "has_parent", "start", "has_start", "end", "has_end", "logs")),
                strict=True)
        ):  # fmt: skip
            tasks[ids[t]] = TaskSummary(
                ids[t], strings[name], parents[t] if has_parent else None,
                [ids[c] for c in children.get(t, ())], start if has_start else None,
                end if has_end else None, logs, [regions.get(r) for r in task_regions.get(t, ())],
                set(members.get(t, ())),
            )  # fmt: skip
        first = int(sc[k.SC_FIRST_TS]) if sc[k.SC_FIRST_SET] else 0
        return Summary(goroutines, tasks, first, int(sc[k.SC_LAST_TS]))


def _groups(keys: np.ndarray, values: np.ndarray) -> dict[int, list[int]]:
    """VALUES split by KEYS (sorted, equal keys adjacent): key -> values in order."""
    if not len(keys):
        return {}
    cuts = np.flatnonzero(np.diff(keys)) + 1
    starts = np.concatenate([[0], cuts])
    return {
        int(keys[s]): part.tolist() for s, part in zip(starts.tolist(), np.split(values, cuts), strict=True)
    }


class _StatsReader:
    """ExecStats objects from the kernel's stats rows (maps: linked entry rows, in insertion order)."""

    def __init__(self, S: np.ndarray, E: np.ndarray, strings: list[str]) -> None:
        self._scalars = list(zip(*(S[f].tolist() for f in ("exec", "sched", "syscall", "sysblock", "total")),
                                 strict=True))  # fmt: skip
        self._heads = list(zip(S["bh"].tolist(), S["rh"].tolist(), strict=True))
        self._key, self._val, self._next = E["key"].tolist(), E["val"].tolist(), E["next"].tolist()
        self._strings = strings

    def _map(self, e: int) -> dict[str, int]:
        out = {}
        while e >= 0:
            out[self._strings[self._key[e]]] = self._val[e]
            e = self._next[e]
        return out

    def get(self, s: int) -> ExecStats:
        exec_time, sched, syscall, sysblock, total = self._scalars[s]
        bh, rh = self._heads[s]
        return ExecStats(exec_time, sched, self._map(bh), syscall, sysblock, total, self._map(rh))


class _Regions:
    """One RegionSummary per region row, shared by its goroutine's and its task's lists (as in Go)."""

    def __init__(self, R: np.ndarray, stats: _StatsReader, strings: list[str]) -> None:
        self._R = R
        self._tasks = R["task"].view(np.uint64)
        self._stats = stats
        self._strings = strings
        self._made: dict[int, RegionSummary] = {}

    def get(self, r: int) -> RegionSummary:
        region = self._made.get(r)
        if region is None:
            row = self._R[r]
            region = self._made[r] = RegionSummary(
                int(self._tasks[r]), self._strings[int(row["name"])],
                int(row["start"]) if row["has_start"] else None, int(row["end"]) if row["has_end"] else None,
                self._stats.get(int(row["stats"])),
            )  # fmt: skip
        return region


def summarize(events: Iterable[Any]) -> Summary:
    """The summary of any iterable of objects with the Event API (e.g. Go's own events in tests)."""
    from goblueprint.timeline.api_columns import api_chunks

    s = Summarizer()
    interner = Interner()
    for cols in api_chunks(events, interner):
        s.columns(cols, interner)
    return s.finalize()
