"""The timeline builder as it was before the speed work (commit 930f175), frozen as a test oracle.

tests/timeline/test_builder_exact.py runs it next to goblueprint.timeline.builder on fresh
traces and requires identical Timelines.  Do not optimise or fix this copy: its value is
that it does not change.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import polars as pl

from goblueprint.timeline._api import (
    G_NOT_EXIST,
    G_RUNNABLE,
    G_RUNNING,
    G_SYSCALL,
    G_UNDETERMINED,
    G_WAITING,
    K_LABEL,
    K_LOG,
    K_METRIC,
    K_RANGE_ACTIVE,
    K_RANGE_BEGIN,
    K_RANGE_END,
    K_REGION_BEGIN,
    K_REGION_END,
    K_STACK_SAMPLE,
    K_STATE,
    K_SYNC,
    K_TASK_BEGIN,
    K_TASK_END,
    NO_TASK,
    P_IDLE,
    P_RUNNING,
    R_GOROUTINE,
    R_NONE,
    R_PROC,
    is_system_goroutine,
)
from goblueprint.timeline.model import (
    COUNTERS_SCHEMA,
    NONE,
    SPANS_SCHEMA,
    FlowKind,
    InstantKind,
    LaneKind,
    State,
    Timeline,
    frame,
)

# Plain ints: IntEnum members hash and compare through Python-level methods.
F_CREATE = int(FlowKind.CREATE)
F_REQUEUE = int(FlowKind.REQUEUE)
F_SYSCALL_EXIT = int(FlowKind.SYSCALL_EXIT)
F_WAKEUP = int(FlowKind.WAKEUP)
I_GOMAXPROCS = int(InstantKind.GOMAXPROCS)
I_LABEL = int(InstantKind.LABEL)
I_LOG = int(InstantKind.LOG)
I_STACK_SAMPLE = int(InstantKind.STACK_SAMPLE)
I_SYNC = int(InstantKind.SYNC)
I_TASK_BEGIN = int(InstantKind.TASK_BEGIN)
I_TASK_END = int(InstantKind.TASK_END)
L_G = int(LaneKind.G)
L_GC = int(LaneKind.GC)
L_GRANGE = int(LaneKind.GRANGE)
L_M = int(LaneKind.M)
L_P = int(LaneKind.P)
L_PRANGE = int(LaneKind.PRANGE)
L_REGION = int(LaneKind.REGION)
L_STW = int(LaneKind.STW)
L_TASK = int(LaneKind.TASK)
S_GC_CYCLE = int(State.GC_CYCLE)
S_G_RUNNABLE = int(State.G_RUNNABLE)
S_G_RUNNING = int(State.G_RUNNING)
S_G_SYSCALL = int(State.G_SYSCALL)
S_G_WAITING = int(State.G_WAITING)
S_MARK_ASSIST = int(State.MARK_ASSIST)
S_M_IDLE = int(State.M_IDLE)
S_M_RUNNING = int(State.M_RUNNING)
S_M_SYSCALL = int(State.M_SYSCALL)
S_P_IDLE = int(State.P_IDLE)
S_P_RUNNING = int(State.P_RUNNING)
S_P_STOPPED = int(State.P_STOPPED)
S_RANGE = int(State.RANGE)
S_REGION = int(State.REGION)
S_STW = int(State.STW)
S_SWEEP = int(State.SWEEP)
S_TASK = int(State.TASK)

_G_SPAN_STATE = {
    G_RUNNING: S_G_RUNNING,
    G_RUNNABLE: S_G_RUNNABLE,
    G_WAITING: S_G_WAITING,
    G_SYSCALL: S_G_SYSCALL,
}
_RANGE_STATE = {
    "GC concurrent mark phase": S_GC_CYCLE,
    "GC mark assist": S_MARK_ASSIST,
    "GC incremental sweep": S_SWEEP,
}

GOMAXPROCS_METRIC = "/sched/gomaxprocs:threads"
# Goroutine states with a derived "how many goroutines are in it" counter.
_COUNTED = {G_RUNNING: 0, G_RUNNABLE: 1, G_SYSCALL: 2}
_COUNTED_NAMES = ("goroutines running", "goroutines runnable", "goroutines in syscall")
_MAX_U64_AS_I64 = 2**63
_CHUNK = 1 << 20  # spans kept as Python tuples before they are packed into a DataFrame chunk


def _task_id(t: int) -> int:
    # Task ids are uint64 on the wire; NoTask (2**64-1) becomes NONE in an i64 column.
    return NONE if t == NO_TASK or t >= _MAX_U64_AS_I64 else t


class _Span:
    """A span being built: the open state of one lane."""

    __slots__ = ("g", "label", "m", "p", "stack", "start", "state")

    def __init__(self, start: int, state: int, g: int, p: int, m: int, label: int, stack: int) -> None:
        self.start = start
        self.state = state
        self.g = g
        self.p = p
        self.m = m
        self.label = label
        self.stack = stack


class TimelineBuilder:
    """Consumer of events (``event(ev)``); ``finish(end_time)`` returns the Timeline."""

    def __init__(self) -> None:
        self.strings: dict[str, int] = {"": 0}
        self.stack_ids: dict[Any, int] = {}
        self.stack_by_frames: dict[tuple[Any, ...], int] = {}
        self.sf: dict[str, list[Any]] = {k: [] for k in ("stack", "depth", "pc", "func", "file", "line")}
        self.rows: list[tuple[int, ...]] = []  # closed spans, in SPANS_SCHEMA column order
        self.fl: dict[str, list[Any]] = {
            k: []
            for k in (
                "kind", "g", "from_g", "from_p", "from_time", "to_p", "to_m", "to_time", "label", "stack",
                "migrated",
            )
        }  # fmt: skip
        self.ct_rows: list[tuple[int, int, float]] = []  # counter samples (name, time, value)
        self.span_chunks: list[pl.DataFrame] = []
        self.counter_chunks: list[pl.DataFrame] = []
        self.it: dict[str, list[Any]] = {
            k: [] for k in ("kind", "time", "g", "p", "m", "label", "category", "id", "stack")
        }
        self.open: dict[tuple[int, int], _Span] = {}  # (lane kind, lane id) -> open span
        self.g_state: dict[int, int] = {}  # goroutine -> GoState
        self.g_name: dict[int, str] = {}
        self.cause: dict[int, tuple[int, int, int, int, int, int]] = {}  # g -> pending flow
        self.block_reason: dict[int, str] = {}  # g -> why it is waiting, for the unblock flow's name
        self.p_state: dict[int, int] = {}
        self.p_owner: dict[int, int] = {}  # P -> M that holds it
        self.m_ctx: dict[int, list[int]] = {}  # M -> [p, g]
        self.ranges: dict[tuple[int, int, str], _Span] = {}
        self.regions: dict[int, list[_Span]] = {}
        self.tasks: dict[int, _Span] = {}
        self.stw_depth = 0
        self.sync_ts = 0
        self.first_ts: int | None = None
        self.last_ts = 0
        # Derived counters, indexed as _COUNTED.
        self.counts = [0, 0, 0]
        self.count_names = [self.sid(name) for name in _COUNTED_NAMES]
        self.alive = 0  # goroutines that exist (seen, not yet exited)
        self.alive_name = self.sid("goroutines")

    # --- interning --------------------------------------------------------------------------

    def sid(self, s: str) -> int:
        i = self.strings.get(s)
        if i is None:
            i = self.strings[s] = len(self.strings)
        return i

    def stack_id(self, stack: Any) -> int:
        if not stack:
            return 0
        i = self.stack_ids.get(stack)
        if i is not None:
            return i
        frames = stack.frames()
        key = tuple((f.pc, f.func, f.file, f.line) for f in frames)
        i = self.stack_by_frames.get(key)
        if i is None:
            i = self.stack_by_frames[key] = len(self.stack_by_frames) + 1
            sf = self.sf
            for depth, (pc, func, file, line) in enumerate(key):
                sf["stack"].append(i)
                sf["depth"].append(depth)
                sf["pc"].append(pc)
                sf["func"].append(self.sid(func))
                sf["file"].append(self.sid(file))
                sf["line"].append(line)
        self.stack_ids[stack] = i
        return i

    # --- spans ------------------------------------------------------------------------------

    def _emit(self, kind: int, lane: int, span: _Span, end: int) -> None:
        # One tuple per span (columns are built once at the end): the cheapest append in CPython.
        start = span.start
        self.rows.append(
            (kind, lane, start, end if end > start else start, span.state, span.g, span.p, span.m, span.label,
             span.stack)
        )  # fmt: skip

    def _set(
        self, kind: int, lane: int, t: int, state: int | None, g: int = NONE, p: int = NONE, m: int = NONE
    ) -> None:
        """Close the lane's open span at t and open one in `state` (None: nothing open)."""
        key = (kind, lane)
        cur = self.open.pop(key, None)
        if cur is not None:
            self._emit(kind, lane, cur, t)
        if state is not None:
            self.open[key] = _Span(t, state, g, p, m, 0, 0)

    def _flush(self) -> None:
        """Move finished rows into typed column chunks: Python tuples cost ~10x the memory."""
        self.span_chunks.append(pl.DataFrame(self.rows, schema=SPANS_SCHEMA, orient="row"))
        self.rows = []
        self.counter_chunks.append(pl.DataFrame(self.ct_rows, schema=COUNTERS_SCHEMA, orient="row"))
        self.ct_rows = []

    def _counter(self, name: int, t: int, value: float) -> None:
        self.ct_rows.append((name, t, float(value)))

    def _instant(self, kind: int, ev: Any, label: int = 0, category: int = 0, ident: int = NONE,
                 stack: int = 0) -> None:  # fmt: skip
        it = self.it
        it["kind"].append(kind)
        it["time"].append(ev.time)
        it["g"].append(ev.goroutine)
        it["p"].append(ev.proc)
        it["m"].append(ev.thread)
        it["label"].append(label)
        it["category"].append(category)
        it["id"].append(ident)
        it["stack"].append(stack)

    def _flow(self, g: int, cause: tuple[int, int, int, int, int, int], to_p: int, to_m: int,
              to_time: int) -> None:  # fmt: skip
        kind, from_g, from_p, from_time, label, stack = cause
        fl = self.fl
        fl["kind"].append(kind)
        fl["g"].append(g)
        fl["from_g"].append(from_g)
        fl["from_p"].append(from_p)
        fl["from_time"].append(from_time)
        fl["to_p"].append(to_p)
        fl["to_m"].append(to_m)
        fl["to_time"].append(to_time)
        fl["label"].append(label)
        fl["stack"].append(stack)
        fl["migrated"].append(from_p != NONE and to_p != NONE and from_p != to_p)

    # --- M context --------------------------------------------------------------------------

    def _m_update(self, m: int, t: int, p: int, g: int) -> None:
        if m == NONE:
            return
        ctx = self.m_ctx.get(m)
        if ctx is None:
            ctx = self.m_ctx[m] = [NONE, NONE, -1]
        if g != NONE and self.g_state.get(g) == G_SYSCALL:
            state = S_M_SYSCALL
        elif p != NONE or g != NONE:
            state = S_M_RUNNING
        else:
            state = S_M_IDLE
        if ctx[0] == p and ctx[1] == g and ctx[2] == state:
            return
        ctx[0], ctx[1], ctx[2] = p, g, state
        self._set(L_M, m, t, state, g, p, m)
        if p != NONE:
            self.p_owner[p] = m

    # --- events -----------------------------------------------------------------------------

    def event(self, ev: Any) -> None:
        kind = int(ev.kind)
        self.step(ev, kind, ev.state_transition() if kind == K_STATE else None)

    def step(self, ev: Any, kind: int, st: Any) -> None:
        """One event; `kind` and `st` (its state transition, or None) are computed once per pass."""
        t = ev.time
        if self.first_ts is None:
            self.first_ts = t
            self.sync_ts = t
        self.last_ts = t
        if len(self.rows) >= _CHUNK:
            self._flush()
        if kind == K_STATE:
            rk = st.resource.kind
            if rk == R_GOROUTINE:
                self._g_transition(ev, st, t)
            elif rk == R_PROC:
                self._p_transition(ev, st, t)
        elif kind == K_SYNC:
            self.sync_ts = t
            self._instant(I_SYNC, ev)
        elif kind == K_RANGE_BEGIN or kind == K_RANGE_ACTIVE or kind == K_RANGE_END:
            self._range(ev, kind, t)
        elif kind == K_METRIC:
            metric = ev.metric()
            value = metric.value
            value = float(value.uint64() if hasattr(value, "uint64") else value)
            self._counter(self.sid(metric.name), t, value)
            if metric.name == GOMAXPROCS_METRIC:
                self._instant(I_GOMAXPROCS, ev, ident=int(value))
        elif kind == K_REGION_BEGIN or kind == K_REGION_END:
            self._region(ev, kind, t)
        elif kind == K_TASK_BEGIN or kind == K_TASK_END:
            task = ev.task()
            tid = _task_id(task.id)
            label = self.sid(task.type)
            stack = self.stack_id(ev.stack)
            if kind == K_TASK_BEGIN:
                self._instant(I_TASK_BEGIN, ev, label, ident=tid, stack=stack)
                if tid not in self.tasks:
                    self.tasks[tid] = _Span(t, (S_TASK), _task_id(task.parent), NONE, NONE, label, stack)
            else:
                self._instant(I_TASK_END, ev, label, ident=tid, stack=stack)
                span = self.tasks.pop(tid, None)
                if span is None:  # began before the trace
                    span = _Span(self.first_ts, (S_TASK), _task_id(task.parent), NONE, NONE, label, 0)
                self._emit(L_TASK, tid, span, t)
        elif kind == K_LOG:
            log = ev.log()
            self._instant(
                I_LOG, ev, self.sid(log.message), self.sid(log.category), _task_id(log.task),
                self.stack_id(ev.stack),
            )  # fmt: skip
        elif kind == K_STACK_SAMPLE:
            self._instant(I_STACK_SAMPLE, ev, stack=self.stack_id(ev.stack))
        elif kind == K_LABEL:
            label = ev.label()
            self._instant(I_LABEL, ev, self.sid(label.label), ident=label.resource.id)
        # The thread's context after this event (state transitions above have updated G/P).
        m = ev.thread
        if m != NONE and kind != K_STATE:
            self._m_update(m, t, ev.proc, ev.goroutine)

    def _g_transition(self, ev: Any, st: Any, t: int) -> None:
        # The hottest path of the builder (most events are goroutine transitions):
        # attribute lookups are hoisted and spans appended inline.
        gid = st.resource.id
        old = st.old
        new = st.new
        g_name = self.g_name
        if gid not in g_name:
            for f in st.stack.frames():
                g_name[gid] = f.func  # the root frame names the goroutine
        if old == new:
            return
        p = ev.proc
        m = ev.thread
        ct = self.ct_rows
        counts = self.counts
        i = _COUNTED.get(old)
        if i is not None:
            counts[i] = counts[i] - 1 if counts[i] > 0 else 0
            ct.append((self.count_names[i], t, float(counts[i])))
        i = _COUNTED.get(new)
        if i is not None:
            counts[i] += 1
            ct.append((self.count_names[i], t, float(counts[i])))
        if old == G_NOT_EXIST or old == G_UNDETERMINED:
            if new != G_NOT_EXIST:
                self.alive += 1
                ct.append((self.alive_name, t, float(self.alive)))
        elif new == G_NOT_EXIST:
            self.alive = self.alive - 1 if self.alive > 0 else 0
            ct.append((self.alive_name, t, float(self.alive)))
        self.g_state[gid] = new

        # The G lane: close the current state, open the new one.
        open_ = self.open
        key = (L_G, gid)
        cur = open_.pop(key, None)
        if cur is not None and old != G_UNDETERMINED:
            start = cur.start
            self.rows.append(
                (
                    L_G,
                    gid,
                    start,
                    t if t > start else start,
                    cur.state,
                    gid,
                    cur.p,
                    cur.m,
                    cur.label,
                    cur.stack,
                )
            )
        span_state = _G_SPAN_STATE.get(new)
        if span_state is not None:
            start = self.sync_ts if old == G_UNDETERMINED else t
            if new == G_RUNNING:
                open_[key] = _Span(start, span_state, gid, p, m, 0, 0)
            else:
                label = self.sid(st.reason)
                stack = self.stack_id(st.stack)
                if new == G_SYSCALL:
                    open_[key] = _Span(start, span_state, gid, p, m, label, stack)
                else:
                    open_[key] = _Span(start, span_state, gid, NONE, NONE, label, stack)

        # Flows: remember why the goroutine may run, emit when it does.
        if new == G_RUNNABLE:
            if old == G_WAITING:
                reason = self.block_reason.pop(gid, "")
                name = f"unblock ({reason})" if reason else "unblock"
                cause = (F_WAKEUP, ev.goroutine, p, t, self.sid(name), self.stack_id(ev.stack))
            elif old == G_NOT_EXIST:
                cause = (F_CREATE, ev.goroutine, p, t, self.sid("go"), self.stack_id(ev.stack))
            elif old == G_SYSCALL:
                cause = (
                    F_SYSCALL_EXIT,
                    gid,
                    NONE,
                    t,
                    self.sid("exit blocked syscall"),
                    self.stack_id(ev.stack),
                )
            elif old == G_RUNNING:
                cause = (F_REQUEUE, gid, p, t, self.sid(st.reason), self.stack_id(st.stack))
            else:
                cause = None
            if cause is not None:
                prev = self.cause.pop(gid, None)
                if prev is not None:
                    self._flow(gid, prev, NONE, NONE, NONE)
                self.cause[gid] = cause
        elif new == G_WAITING:
            self.block_reason[gid] = st.reason
        elif new == G_RUNNING:
            cause = self.cause.pop(gid, None)
            if cause is not None:
                self._flow(gid, cause, p, m, t)
        if new == G_NOT_EXIST or (new == G_WAITING and st.reason == "forever"):
            self._close_regions(gid, t)
            cause = self.cause.pop(gid, None)
            if cause is not None:
                self._flow(gid, cause, NONE, NONE, NONE)

        # P and M lanes: which G runs where.
        if p != NONE:
            if new == G_RUNNING:
                self._p_running(p, t, gid, m)
            elif old == G_RUNNING and new != G_SYSCALL and self.p_state.get(p) == P_RUNNING:
                self._p_running(p, t, NONE, m)
        if m != NONE:
            if new == G_RUNNING or new == G_SYSCALL:
                self._m_update(m, t, p, gid)
            elif gid == ev.goroutine:
                self._m_update(m, t, p, NONE)
            else:
                self._m_update(m, t, p, ev.goroutine)

    def _p_running(self, p: int, t: int, g: int, m: int) -> None:
        cur = self.open.get((L_P, p))
        if cur is not None and cur.state == S_P_RUNNING and cur.g == g:
            return
        self._set(L_P, p, t, S_P_RUNNING, g, p, m)

    def _p_transition(self, ev: Any, st: Any, t: int) -> None:
        pid = st.resource.id
        old, new = st.old, st.new
        self.p_state[pid] = new
        if old == new and (L_P, pid) in self.open:
            return
        if new == P_RUNNING:
            self._set(L_P, pid, t, S_P_RUNNING, NONE, pid, ev.thread)
            if ev.thread != NONE:
                self._m_update(ev.thread, t, pid, NONE if old != P_RUNNING else ev.goroutine)
        elif new == P_IDLE:
            state = S_P_STOPPED if self.stw_depth > 0 else S_P_IDLE
            self._set(L_P, pid, t, int(state), NONE, pid, NONE)
            owner = self.p_owner.pop(pid, NONE)
            if ev.thread != NONE and ev.proc == pid:
                self._m_update(ev.thread, t, NONE, NONE)
            elif owner != NONE and owner != ev.thread:
                ctx = self.m_ctx.get(owner)
                if ctx is not None and ctx[0] == pid:
                    self._m_update(owner, t, NONE, ctx[1])  # stolen from a thread in a syscall
        else:
            self._set(L_P, pid, t, None)

    def _stw(self, t: int, begin: bool) -> None:
        """Idle Ps become stopped for the duration of a stop-the-world, and back."""
        self.stw_depth += 1 if begin else -1
        if self.stw_depth < 0:
            self.stw_depth = 0
        frm, to = (S_P_IDLE, S_P_STOPPED) if begin else (S_P_STOPPED, S_P_IDLE)
        if (begin and self.stw_depth != 1) or (not begin and self.stw_depth != 0):
            return
        for (kind, lane), span in list(self.open.items()):
            if kind == L_P and span.state == frm:
                self._set(L_P, lane, t, int(to), NONE, lane, NONE)

    def _range(self, ev: Any, kind: int, t: int) -> None:
        r = ev.range()
        scope_kind, scope_id = r.scope.kind, r.scope.id
        name = r.name
        is_stw = name.startswith("stop-the-world")
        if is_stw:
            lane_kind, lane, state = L_STW, 0, (S_STW)
        elif scope_kind == R_NONE:
            lane_kind, lane, state = L_GC, 0, _RANGE_STATE.get(name, (S_RANGE))
        elif scope_kind == R_GOROUTINE:
            lane_kind, lane, state = L_GRANGE, scope_id, _RANGE_STATE.get(name, (S_RANGE))
        elif scope_kind == R_PROC:
            lane_kind, lane, state = L_PRANGE, scope_id, _RANGE_STATE.get(name, (S_RANGE))
        else:
            lane_kind, lane, state = L_GC, 0, (S_RANGE)
        key = (int(lane_kind), lane, name)
        if kind == K_RANGE_END:
            span = self.ranges.pop(key, None)
            if span is None:  # began before the trace
                span = _Span(self.first_ts or t, state, ev.goroutine, ev.proc, ev.thread, self.sid(name), 0)
            self._emit(lane_kind, lane, span, t)
            if is_stw:
                self._stw(t, begin=False)
            return
        if key in self.ranges:  # RangeActive re-announces an open range each generation
            return
        self.ranges[key] = _Span(
            t, state, ev.goroutine, ev.proc, ev.thread, self.sid(name), self.stack_id(ev.stack)
        )
        if is_stw:
            self._stw(t, begin=True)

    def _region(self, ev: Any, kind: int, t: int) -> None:
        g = ev.goroutine
        r = ev.region()
        stack = self.regions.setdefault(g, [])
        if kind == K_REGION_BEGIN:
            span = _Span(t, (S_REGION), g, _task_id(r.task), len(stack), self.sid(r.type),
                         self.stack_id(ev.stack))  # fmt: skip
            stack.append(span)
            return
        if stack:
            span = stack.pop()
        else:  # began before the trace
            span = _Span(self.first_ts or t, (S_REGION), g, _task_id(r.task), 0, self.sid(r.type), 0)
        self._emit(L_REGION, g, span, t)

    def _close_regions(self, g: int, t: int) -> None:
        for span in reversed(self.regions.pop(g, [])):
            self._emit(L_REGION, g, span, t)

    # --- result -----------------------------------------------------------------------------

    def finish(self, end: int | None = None) -> Timeline:
        end = self.last_ts if end is None else end
        for (kind, lane), span in self.open.items():
            self._emit(kind, lane, span, end)
        self.open.clear()
        for (lane_kind, lane, _name), span in self.ranges.items():
            self._emit(lane_kind, lane, span, end)
        self.ranges.clear()
        for g in list(self.regions):
            self._close_regions(g, end)
        for tid, span in self.tasks.items():
            self._emit(L_TASK, tid, span, end)
        self.tasks.clear()
        for gid, cause in self.cause.items():
            self._flow(gid, cause, NONE, NONE, NONE)
        self.cause.clear()

        self._flush()
        spans = pl.concat(self.span_chunks).sort(["lane_kind", "lane_id", "start", "end"])
        strings = list(self.strings)
        tl = Timeline(
            start_ns=self.first_ts or 0,
            end_ns=end,
            strings=strings,
            spans=spans,
            flows=frame("flows", self.fl).sort(["from_time", "g"]),
            counters=pl.concat(self.counter_chunks),
            instants=frame("instants", self.it),
            lanes=self._lanes(spans),
            stack_frames=frame("stack_frames", self.sf),
        )
        return tl

    def _lanes(self, spans: pl.DataFrame) -> pl.DataFrame:
        present = spans.select("lane_kind", "lane_id").unique().sort(["lane_kind", "lane_id"])
        kinds: list[int] = []
        ids: list[int] = []
        labels: list[str] = []
        groups: list[str] = []
        system: list[bool] = []
        for kind, lane in present.iter_rows():
            name = self.g_name.get(lane, "") if kind in (L_G, L_GRANGE, L_REGION) else ""
            if kind == L_G:
                label = f"G{lane} {name}".rstrip()
            elif kind == L_P:
                label = f"Proc {lane}"
            elif kind == L_M:
                label = f"Thread {lane}"
            elif kind == L_GC:
                label = "GC"
            elif kind == L_STW:
                label = "Stop-the-world"
            elif kind == L_GRANGE:
                label = f"G{lane} ranges"
            elif kind == L_PRANGE:
                label = f"Proc {lane} ranges"
            elif kind == L_REGION:
                label = f"G{lane} regions"
            else:
                label = f"Task {lane}"
            kinds.append(kind)
            ids.append(lane)
            labels.append(label)
            groups.append(name)
            system.append(is_system_goroutine(name) if kind == L_G else False)
        return frame("lanes", {"lane_kind": kinds, "lane_id": ids, "label": labels, "group": groups,
                               "system": system})  # fmt: skip


def build(source: Any, progress: Callable[[int], None] | None = None) -> Timeline:
    from goblueprint.timeline.source import run_pass

    builder = TimelineBuilder()
    result = run_pass(source, [builder], progress)
    tl = builder.finish(result.last_time)
    tl.go_version = result.go_version
    return tl
