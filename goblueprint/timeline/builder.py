"""Event stream -> Timeline: the G/P/M state machines.

One pass over the events, in reader order.  Each goroutine, proc and thread
has a current state and the time it entered it; a transition closes that span
and opens the next.  Semantics follow Go's own consumers (cmd/trace gstate.go,
procgen.go, threadgen.go and internal/trace/summary.go):

* a goroutine first seen as Undetermined has been in its state since the last
  Sync (as the summarizer counts it), a created one since its creation;
* the start cause of a goroutine (unblock, go statement, blocked syscall exit,
  preemption) becomes a flow that ends where and when it next starts running;
* a P is "stopped" while it is idle inside a stop-the-world range;
* ranges (GC, STW, mark assist, sweep) arriving as RangeActive at a generation
  start continue the span already open, they do not restart it.

Spans still open at the end are closed at the time of the last event.
"""

from __future__ import annotations

from collections.abc import Callable
from itertools import chain
from typing import Any

import numpy as np
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
# Spans (and counter samples) kept as Python tuples before they are packed into a DataFrame
# chunk: ~200 bytes each as tuples, so this bounds their memory (~50 MB), not the output.
_CHUNK = 1 << 18


def _task_id(t: int) -> int:
    # Task ids are uint64 on the wire; NoTask (2**64-1) becomes NONE in an i64 column.
    return NONE if t == NO_TASK or t >= _MAX_U64_AS_I64 else t


# Open spans are plain tuples (start, state, g, p, m, label, stack): built and read faster
# than slotted objects, and a span is never changed once open.

# The open G, P and M spans live in one dict because the order of its keys is the order in
# which finish() emits them, and emission order is part of the output: finish() sorts
# stably, so where rows share sort keys their emission order decides theirs.
# Keys are ints, lane * 4 + code: cheaper to build and hash than (kind, lane) tuples.
_KEY_CODE = {L_G: 0, L_P: 1, L_M: 2}
_CODE_KIND = (L_G, L_P, L_M)


class _Compat:
    """An event of the generic Event API (``time``, ``goroutine``, ...) seen as the reader's
    Event, whose slots ``ts``, ``g``, ``p``, ``m`` the hot path reads directly."""

    __slots__ = ("_ev", "g", "m", "p", "ts")

    def __init__(self, ev: Any) -> None:
        self._ev = ev
        self.ts = ev.time
        self.g = ev.goroutine
        self.p = ev.proc
        self.m = ev.thread

    def __getattr__(self, name: str) -> Any:
        return getattr(self._ev, name)


class TimelineBuilder:
    """Consumer of events (``event(ev)``); ``finish(end_time)`` returns the Timeline."""

    def __init__(self) -> None:
        self.strings: dict[str, int] = {"": 0}
        # Stack ids of the current generation's table, by stack id in that table.  Only one
        # table is referenced, so finished generations can be freed; a stack seen again in
        # a later generation is found by its frames in stack_by_frames.
        self._stack_table: Any = None
        self._stack_cache: dict[int, int] = {}
        self.stack_by_frames: dict[tuple[Any, ...], int] = {}
        self.sf: dict[str, list[Any]] = {k: [] for k in ("stack", "depth", "pc", "func", "file", "line")}
        self.rows: list[tuple[int, ...]] = []  # closed spans, in SPANS_SCHEMA column order
        # Flows as (g, cause, to_p, to_m, to_time): one append each, columns built in finish().
        self.flow_rows: list[tuple[int, tuple[int, ...], int, int, int]] = []
        self.flow_chunks: list[pl.DataFrame] = []
        self.ct_rows: list[tuple[int, int, float]] = []  # counter samples (name, time, value)
        self.span_chunks: list[pl.DataFrame] = []
        self.counter_chunks: list[pl.DataFrame] = []
        self.it: dict[str, list[Any]] = {
            k: [] for k in ("kind", "time", "g", "p", "m", "label", "category", "id", "stack")
        }
        self.open: dict[int, tuple[int, ...]] = {}  # lane * 4 + _KEY_CODE[lane kind] -> open span
        self.g_state: dict[int, int] = {}  # goroutine -> GoState
        self.g_name: dict[int, str] = {}
        self.cause: dict[int, tuple[int, int, int, int, int, int]] = {}  # g -> pending flow
        self.block_reason: dict[int, str] = {}  # g -> why it is waiting, for the unblock flow's name
        self.p_state: dict[int, int] = {}
        self.p_owner: dict[int, int] = {}  # P -> M that holds it
        self.m_ctx: dict[int, list[int]] = {}  # M -> [p, g, M lane state]
        self.ranges: dict[tuple[int, int, str], tuple[int, ...]] = {}
        self.regions: dict[int, list[tuple[int, ...]]] = {}
        self.tasks: dict[int, tuple[int, ...]] = {}
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
        try:
            sid = stack.id
            table = stack.table
        except AttributeError:  # a Stack of the generic API (frames() and truthiness only)
            return self._stack_id_of_frames(stack) if stack else 0
        if not sid:
            return 0
        if table is not self._stack_table:
            self._stack_table = table
            self._stack_cache = {}
        cache = self._stack_cache
        i = cache.get(sid)
        if i is None:
            # Stack.__bool__: a stack id the table does not hold, or holds empty, is no stack.
            i = cache[sid] = self._stack_id_of_frames(stack) if table.stacks.get(sid) else 0
        return i

    def _stack_id_of_frames(self, stack: Any) -> int:
        key = tuple((f.pc, f.func, f.file, f.line) for f in stack.frames())
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
        return i

    # --- spans ------------------------------------------------------------------------------

    def _emit(self, kind: int, lane: int, span: tuple[int, ...], end: int) -> None:
        # One tuple per span (columns are built once at the end): the cheapest append in CPython.
        start, state, g, p, m, label, stack = span
        self.rows.append((kind, lane, start, end if end > start else start, state, g, p, m, label, stack))

    def _set(
        self, kind: int, lane: int, t: int, state: int | None, g: int = NONE, p: int = NONE, m: int = NONE
    ) -> None:
        """Close the lane's open span at t and open one in `state` (None: nothing open)."""
        key = lane * 4 + _KEY_CODE[kind]
        cur = self.open.pop(key, None)
        if cur is not None:
            start = cur[0]
            self.rows.append(
                (kind, lane, start, t if t > start else start, cur[1], cur[2], cur[3], cur[4], cur[5], cur[6])
            )
        if state is not None:
            self.open[key] = (t, state, g, p, m, 0, 0)

    def _flush(self) -> None:
        """Move finished rows into typed column chunks: Python tuples cost ~10x the memory."""
        rows = self.rows
        self.rows = []
        # Flattened through numpy: ~30% cheaper than polars' row constructor.  All span
        # columns are integers; the cast to the schema's narrower types checks the range.
        n = len(SPANS_SCHEMA)
        flat = np.fromiter(chain.from_iterable(rows), dtype=np.int64, count=len(rows) * n).reshape(-1, n)
        del rows
        self.span_chunks.append(
            pl.DataFrame({name: flat[:, i] for i, name in enumerate(SPANS_SCHEMA)}).cast(SPANS_SCHEMA)
        )

    def _flush_counters(self) -> None:
        self.counter_chunks.append(pl.DataFrame(self.ct_rows, schema=COUNTERS_SCHEMA, orient="row"))
        self.ct_rows = []

    def _counter(self, name: int, t: int, value: float) -> None:
        self.ct_rows.append((name, t, float(value)))

    def _instant(self, kind: int, ev: Any, label: int = 0, category: int = 0, ident: int = NONE,
                 stack: int = 0) -> None:  # fmt: skip
        it = self.it
        it["kind"].append(kind)
        it["time"].append(ev.ts)
        it["g"].append(ev.g)
        it["p"].append(ev.p)
        it["m"].append(ev.m)
        it["label"].append(label)
        it["category"].append(category)
        it["id"].append(ident)
        it["stack"].append(stack)

    def _flow(self, g: int, cause: tuple[int, int, int, int, int, int], to_p: int, to_m: int,
              to_time: int) -> None:  # fmt: skip
        self.flow_rows.append((g, cause, to_p, to_m, to_time))

    def _flush_flows(self) -> None:
        self.flow_chunks.append(self._flows_frame(self.flow_rows))
        self.flow_rows = []

    @staticmethod
    def _flows_frame(rows: list[tuple[int, tuple[int, ...], int, int, int]]) -> pl.DataFrame:
        # cause = (kind, from_g, from_p, from_time, label, stack)
        return frame(
            "flows",
            {
                "kind": [c[0] for _, c, _, _, _ in rows],
                "g": [g for g, _, _, _, _ in rows],
                "from_g": [c[1] for _, c, _, _, _ in rows],
                "from_p": [c[2] for _, c, _, _, _ in rows],
                "from_time": [c[3] for _, c, _, _, _ in rows],
                "to_p": [to_p for _, _, to_p, _, _ in rows],
                "to_m": [to_m for _, _, _, to_m, _ in rows],
                "to_time": [to_time for _, _, _, _, to_time in rows],
                "label": [c[4] for _, c, _, _, _ in rows],
                "stack": [c[5] for _, c, _, _, _ in rows],
                "migrated": [c[2] != NONE and to_p != NONE and c[2] != to_p for _, c, to_p, _, _ in rows],
            },
        )

    # --- M context --------------------------------------------------------------------------

    def _m_update(self, m: int, t: int, p: int, g: int) -> None:
        # _g_transition, the hot path, does the same inline.
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
        try:
            t = ev.ts
        except AttributeError:
            ev = _Compat(ev)
            t = ev.ts
        if self.first_ts is None:
            self.first_ts = t
            self.sync_ts = t
        self.last_ts = t
        if kind == K_STATE:
            if len(self.rows) >= _CHUNK:
                # Counter samples and flows grow slower than spans: packed at the same time.
                self._flush()
                self._flush_counters()
                self._flush_flows()
            (rk, rid), reason, stack, old, new = st
            if rk == R_GOROUTINE:
                self._g_transition(ev, t, rid, reason, stack, old, new)
            elif rk == R_PROC:
                self._p_transition(ev, t, rid, old, new)
            return  # transitions update the thread's context themselves
        if kind == K_SYNC:
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
                    self.tasks[tid] = (t, S_TASK, _task_id(task.parent), NONE, NONE, label, stack)
            else:
                self._instant(I_TASK_END, ev, label, ident=tid, stack=stack)
                span = self.tasks.pop(tid, None)
                if span is None:  # began before the trace
                    span = (self.first_ts, S_TASK, _task_id(task.parent), NONE, NONE, label, 0)
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
        # The thread's context after this event.
        self._m_update(ev.m, t, ev.p, ev.g)

    def _g_transition(self, ev: Any, t: int, gid: int, reason: str, stack: Any, old: int, new: int) -> None:
        # The hottest path of the builder (most events are goroutine transitions):
        # attribute lookups are hoisted and spans appended inline.  The order of every
        # append and interning call is the output's row and id order: keep it.
        g_name = self.g_name
        rows = self.rows  # step() flushes before calling: this list stays current
        if gid not in g_name:
            frames = stack.frames()
            if frames:
                g_name[gid] = frames[-1].func  # the root frame names the goroutine
        if old == new:
            return
        p = ev.p
        m = ev.m
        ct = self.ct_rows
        counts = self.counts
        names = self.count_names
        i = _COUNTED.get(old)
        if i is not None:
            c = counts[i]
            c = counts[i] = c - 1 if c > 0 else 0
            ct.append((names[i], t, float(c)))
        i = _COUNTED.get(new)
        if i is not None:
            c = counts[i] = counts[i] + 1
            ct.append((names[i], t, float(c)))
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
        key = gid * 4  # + _KEY_CODE[L_G] (0)
        cur = open_.pop(key, None)
        if cur is not None and old != G_UNDETERMINED:
            start = cur[0]
            rows.append(
                (L_G, gid, start, t if t > start else start, cur[1], gid, cur[3], cur[4], cur[5], cur[6])
            )
        span_state = _G_SPAN_STATE.get(new)
        if span_state is not None:
            start = self.sync_ts if old == G_UNDETERMINED else t
            if new == G_RUNNING:
                open_[key] = (start, span_state, gid, p, m, 0, 0)
            else:
                label = self.strings.get(reason)
                if label is None:
                    label = self.sid(reason)
                sid = self.stack_id(stack)
                if new == G_SYSCALL:
                    open_[key] = (start, span_state, gid, p, m, label, sid)
                else:
                    open_[key] = (start, span_state, gid, NONE, NONE, label, sid)

        # Flows: remember why the goroutine may run, emit when it does.
        if new == G_RUNNABLE:
            if old == G_WAITING:
                why = self.block_reason.pop(gid, "")
                name = f"unblock ({why})" if why else "unblock"
                cause = (F_WAKEUP, ev.g, p, t, self.sid(name), self.stack_id(ev.stack))
            elif old == G_NOT_EXIST:
                cause = (F_CREATE, ev.g, p, t, self.sid("go"), self.stack_id(ev.stack))
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
                cause = (F_REQUEUE, gid, p, t, self.sid(reason), self.stack_id(stack))
            else:
                cause = None
            if cause is not None:
                prev = self.cause.pop(gid, None)
                if prev is not None:
                    self._flow(gid, prev, NONE, NONE, NONE)
                self.cause[gid] = cause
        elif new == G_WAITING:
            self.block_reason[gid] = reason
        elif new == G_RUNNING:
            cause = self.cause.pop(gid, None)
            if cause is not None:
                self.flow_rows.append((gid, cause, p, m, t))  # _flow, inlined
        if new == G_NOT_EXIST or (new == G_WAITING and reason == "forever"):
            self._close_regions(gid, t)
            cause = self.cause.pop(gid, None)
            if cause is not None:
                self._flow(gid, cause, NONE, NONE, NONE)

        # P and M lanes: which G runs where (_p_running and _m_update, inlined).
        if p != NONE:
            if new == G_RUNNING:
                pg = gid
            elif old == G_RUNNING and new != G_SYSCALL and self.p_state.get(p) == P_RUNNING:
                pg = NONE
            else:
                pg = None
            if pg is not None:
                pkey = p * 4 + 1  # _KEY_CODE[L_P]
                cur = open_.get(pkey)
                if cur is None:
                    open_[pkey] = (t, S_P_RUNNING, pg, p, m, 0, 0)
                elif cur[1] != S_P_RUNNING or cur[2] != pg:
                    del open_[pkey]  # re-inserted below: the key moves to the end, as _set does
                    start = cur[0]
                    rows.append(
                        (
                            L_P,
                            p,
                            start,
                            t if t > start else start,
                            cur[1],
                            cur[2],
                            cur[3],
                            cur[4],
                            cur[5],
                            cur[6],
                        )
                    )
                    open_[pkey] = (t, S_P_RUNNING, pg, p, m, 0, 0)
        if m != NONE:
            if new == G_RUNNING or new == G_SYSCALL:
                g = gid
            elif gid == ev.g:
                g = NONE
            else:
                g = ev.g
            # gid's state is `new`, set above.
            if g != NONE and (new if g == gid else self.g_state.get(g)) == G_SYSCALL:
                state = S_M_SYSCALL
            elif p != NONE or g != NONE:
                state = S_M_RUNNING
            else:
                state = S_M_IDLE
            m_ctx = self.m_ctx
            ctx = m_ctx.get(m)
            if ctx is None:
                m_ctx[m] = [p, g, state]
            elif ctx[0] == p and ctx[1] == g and ctx[2] == state:
                return
            else:
                ctx[0], ctx[1], ctx[2] = p, g, state
            mkey = m * 4 + 2  # _KEY_CODE[L_M]
            cur = open_.pop(mkey, None)
            if cur is not None:
                start = cur[0]
                rows.append(
                    (L_M, m, start, t if t > start else start, cur[1], cur[2], cur[3], cur[4], cur[5], cur[6])
                )
            open_[mkey] = (t, state, g, p, m, 0, 0)
            if p != NONE:
                self.p_owner[p] = m

    def _p_running(self, p: int, t: int, g: int, m: int) -> None:
        cur = self.open.get(p * 4 + 1)  # _KEY_CODE[L_P]
        if cur is not None and cur[1] == S_P_RUNNING and cur[2] == g:
            return
        self._set(L_P, p, t, S_P_RUNNING, g, p, m)

    def _p_transition(self, ev: Any, t: int, pid: int, old: int, new: int) -> None:
        self.p_state[pid] = new
        if old == new and (pid * 4 + 1) in self.open:
            return
        if new == P_RUNNING:
            self._set(L_P, pid, t, S_P_RUNNING, NONE, pid, ev.m)
            if ev.m != NONE:
                self._m_update(ev.m, t, pid, NONE if old != P_RUNNING else ev.g)
        elif new == P_IDLE:
            state = S_P_STOPPED if self.stw_depth > 0 else S_P_IDLE
            self._set(L_P, pid, t, int(state), NONE, pid, NONE)
            owner = self.p_owner.pop(pid, NONE)
            if ev.m != NONE and ev.p == pid:
                self._m_update(ev.m, t, NONE, NONE)
            elif owner != NONE and owner != ev.m:
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
        for key, span in list(self.open.items()):
            if key & 3 == 1 and span[1] == frm:  # a P lane (_KEY_CODE[L_P])
                lane = key >> 2
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
                span = (self.first_ts or t, state, ev.g, ev.p, ev.m, self.sid(name), 0)
            self._emit(lane_kind, lane, span, t)
            if is_stw:
                self._stw(t, begin=False)
            return
        if key in self.ranges:  # RangeActive re-announces an open range each generation
            return
        self.ranges[key] = (t, state, ev.g, ev.p, ev.m, self.sid(name), self.stack_id(ev.stack))
        if is_stw:
            self._stw(t, begin=True)

    def _region(self, ev: Any, kind: int, t: int) -> None:
        g = ev.g
        r = ev.region()
        stack = self.regions.setdefault(g, [])
        if kind == K_REGION_BEGIN:
            span = (t, S_REGION, g, _task_id(r.task), len(stack), self.sid(r.type), self.stack_id(ev.stack))
            stack.append(span)
            return
        if stack:
            span = stack.pop()
        else:  # began before the trace
            span = (self.first_ts or t, S_REGION, g, _task_id(r.task), 0, self.sid(r.type), 0)
        self._emit(L_REGION, g, span, t)

    def _close_regions(self, g: int, t: int) -> None:
        for span in reversed(self.regions.pop(g, [])):
            self._emit(L_REGION, g, span, t)

    # --- result -----------------------------------------------------------------------------

    def finish(self, end: int | None = None) -> Timeline:
        end = self.last_ts if end is None else end
        for key, span in self.open.items():
            self._emit(_CODE_KIND[key & 3], key >> 2, span, end)
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
        self._flush_counters()
        self._flush_flows()
        self._stack_table = None
        self._stack_cache = {}
        # The builder lets go of its chunks as the tables are made: a copy less at the peak.
        chunks, self.span_chunks = self.span_chunks, []
        spans = _sorted_column_by_column(
            pl.concat(chunks, rechunk=False), ["lane_kind", "lane_id", "start", "end"]
        )
        del chunks
        flow_chunks, self.flow_chunks = self.flow_chunks, []
        flows = pl.concat(flow_chunks, rechunk=False)
        del flow_chunks
        flows = flows.sort(["from_time", "g"], maintain_order=True)
        counter_chunks, self.counter_chunks = self.counter_chunks, []
        strings = list(self.strings)
        tl = Timeline(
            start_ns=self.first_ts or 0,
            end_ns=end,
            strings=strings,
            spans=spans,
            flows=flows,
            counters=pl.concat(counter_chunks),
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


def _sorted_column_by_column(df: pl.DataFrame, keys: list[str]) -> pl.DataFrame:
    """``df.sort(keys)`` holding one sorted column at a time beside the input, not a whole copy.

    The sort is stable: rows with equal keys keep the order the builder emitted them in, so
    the output does not depend on how polars splits an unstable sort across threads."""
    order = df.select(keys).with_row_index("_row").sort(keys, maintain_order=True).get_column("_row")
    cols = []
    for name in df.columns:
        cols.append(df.get_column(name).rechunk().gather(order))
        df = df.drop(name)  # the caller holds no other reference: the column is freed here
    return pl.DataFrame(cols)


def build(
    source: Any, progress: Callable[[int], None] | None = None, *, show_capture: bool = False
) -> Timeline:
    from goblueprint.timeline.source import run_pass

    builder = TimelineBuilder()
    result = run_pass(source, [builder], progress)
    tl = builder.finish(result.last_time)
    tl.go_version = result.go_version
    return result.marks.timeline(tl, show=show_capture)
