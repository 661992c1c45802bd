"""The ordering engine: Go's order.go, emulating scheduler state.

``Ordering.advance`` decides whether the next event of one M can happen now
(given G and P sequence numbers, statuses, the syscall/P-steal protocol, GC
and range state, tasks and regions), validates it, and queues the resulting
API event(s).  It returns False when the event must wait for other Ms, and
raises TraceError (with Go's message) when the trace is broken.

The cursor event ``ev`` is mutable, as in Go: some handlers smuggle extra data
(old states, task info) into its argument list before queueing it.
"""

from __future__ import annotations

from collections import deque

from goblueprint.errors import TraceError
from goblueprint.trace import spec
from goblueprint.trace.events import (
    NO_GOROUTINE,
    NO_PROC,
    NO_TASK,
    NO_THREAD,
    Event,
    GoState,
    ProcState,
    go_state_name,
)

_U64 = 1 << 64
_I64MAX = (1 << 63) - 1

S = spec
PROC_RUNNING = S.PROC_RUNNING
PROC_IDLE = S.PROC_IDLE
PROC_SYSCALL = S.PROC_SYSCALL
PROC_SYSCALL_ABANDONED = S.PROC_SYSCALL_ABANDONED
GO_RUNNABLE = S.GO_RUNNABLE
GO_RUNNING = S.GO_RUNNING
GO_SYSCALL = S.GO_SYSCALL
GO_WAITING = S.GO_WAITING

_PROC_STATUS_TO_STATE = (
    ProcState.UNDETERMINED,
    ProcState.RUNNING,
    ProcState.IDLE,
    ProcState.RUNNING,
    ProcState.IDLE,
)
_GO_STATUS_TO_STATE = (
    GoState.UNDETERMINED,
    GoState.RUNNABLE,
    GoState.RUNNING,
    GoState.SYSCALL,
    GoState.WAITING,
)

GC_UNDETERMINED, GC_NOT_RUNNING, GC_RUNNING = 0, 1, 2
_GC_STATE_NAMES = ("Undetermined", "NotRunning", "Running")

# Constraint values of schedReqs.
MUST_NOT_HAVE, MAY_HAVE, MUST_HAVE = 0, 1, 2


def _i64(x: int) -> int:
    return x - _U64 if x > _I64MAX else x


class _Broken(Exception):
    """An ordering error with Go's message; the reader wraps it into TraceError."""


def _validate(m: int, p: int, g: int, rm: int, rp: int, rg: int) -> None:
    """Go's validateCtx."""
    if rm == MUST_HAVE and m == NO_THREAD:
        raise _Broken("expected a thread but didn't have one")
    if rm == MUST_NOT_HAVE and m != NO_THREAD:
        raise _Broken("expected no thread but had one")
    if rp == MUST_HAVE and p == NO_PROC:
        raise _Broken("expected a proc but didn't have one")
    if rp == MUST_NOT_HAVE and p != NO_PROC:
        raise _Broken("expected no proc but had one")
    if rg == MUST_HAVE and g == NO_GOROUTINE:
        raise _Broken("expected a goroutine but didn't have one")
    if rg == MUST_NOT_HAVE and g != NO_GOROUTINE:
        raise _Broken("expected no goroutine but had one")


def _user_go(m: int, p: int, g: int) -> None:
    # userGoReqs: M, P and G must all be present (the common case, inlined).
    if m == NO_THREAD or p == NO_PROC or g == NO_GOROUTINE:
        _validate(m, p, g, MUST_HAVE, MUST_HAVE, MUST_HAVE)


class _GState:
    __slots__ = ("id", "in_flight", "regions", "seq", "seq_gen", "status")

    def __init__(self, gid: int, status: int, gen: int) -> None:
        self.id = gid
        self.status = status
        self.seq_gen = gen
        self.seq = 0
        self.regions: list[tuple[int, str]] = []
        self.in_flight: list[tuple[int, int]] = []


class _PState:
    __slots__ = ("id", "in_flight", "seq", "seq_gen", "status")

    def __init__(self, pid: int, status: int, gen: int) -> None:
        self.id = pid
        self.status = status
        self.seq_gen = gen
        self.seq = 0
        self.in_flight: list[tuple[int, int]] = []


class _MState:
    __slots__ = ("g", "p")

    def __init__(self, g: int, p: int) -> None:
        self.g = g
        self.p = p


def _range_type(typ: int, desc: int) -> tuple[int, int]:
    st = spec.SPECS[typ].start_ev
    return (st if st else typ, desc)


def _range_type_str(rt: tuple[int, int]) -> str:
    # Go's %v of rangeType{typ, desc}.
    return f"{{{rt[0]} {rt[1]}}}"


def _begin_range(state, rt: tuple[int, int]) -> None:
    if rt in state.in_flight:
        raise _Broken(f"discovered event already in-flight for when starting event {spec.SPECS[rt[0]].name}")
    state.in_flight.append(rt)


def _active_range(state, rt: tuple[int, int], initial: bool) -> None:
    if initial:
        if rt in state.in_flight:
            raise _Broken(f"found named active range already in first gen: {_range_type_str(rt)}")
        state.in_flight.append(rt)
    elif rt not in state.in_flight:
        flights = " ".join(_range_type_str(r) for r in state.in_flight)
        raise _Broken(f"resource is missing active range: {spec.SPECS[rt[0]].name} [{flights}]")


def _end_range(state, typ: int) -> int:
    st = spec.SPECS[typ].start_ev
    fl = state.in_flight
    for idx, r in enumerate(fl):
        if r[0] == st:
            desc = r[1]
            fl[idx] = fl[-1]
            fl.pop()
            return desc
    raise _Broken(f"tried to end event {spec.SPECS[st].name}, but not in-flight")


class Ordering:
    """Go's ordering: scheduler state plus the queue of ready events."""

    def __init__(self, version: int) -> None:
        self.version = version
        self.g_states: dict[int, _GState] = {}
        self.p_states: dict[int, _PState] = {}
        self.m_states: dict[int, _MState] = {}
        self.active_tasks: dict[int, tuple[str, int]] = {}
        self.gc_seq = 0
        self.gc_state = GC_UNDETERMINED
        self.initial_gen = 0
        self.queue: deque[Event] = deque()
        self._append = self.queue.append
        d: list = [self.bad_event] * 256
        for typ, name in _DISPATCH.items():
            d[typ] = getattr(self, name)
        # Per wire type: the handler (ev, evt, m, gen, g, p) -> (new g, new p) or None.
        self.dispatch = d

    def ev_name(self, typ: int) -> str:
        return spec.event_name(self.version, typ)

    def advance(self, ev, evt, m: int, gen: int) -> bool:
        """Try to advance ``ev`` (a cursor: .typ, .time, .args) from thread ``m``."""
        if self.initial_gen == 0:
            self.initial_gen = gen
        if m == NO_THREAD:
            ms = None
            p = NO_PROC
            g = NO_GOROUTINE
        else:
            ms = self.m_states.get(m)
            if ms is None:
                ms = self.m_states[m] = _MState(NO_GOROUTINE, NO_PROC)
            p = ms.p
            g = ms.g
        res = self.dispatch[ev.typ](ev, evt, m, gen, g, p)
        if res is None:
            return False
        if ms is not None:
            ms.g = res[0]
            ms.p = res[1]
        return True

    def m_state(self, m: int) -> _MState:
        """The state of thread m, created on first use (as Advance does); never removed."""
        ms = self.m_states.get(m)
        if ms is None:
            ms = self.m_states[m] = _MState(NO_GOROUTINE, NO_PROC)
        return ms

    def bad_event(self, ev, evt, m, gen, g, p):
        raise _Broken(f"bad event type found while ordering: {ev.typ}")

    # -- procs ----------------------------------------------------------------
    def proc_status(self, ev, evt, m, gen, g, p):
        a = ev.args
        pid = _i64(a[0])
        status = a[1] & 0xFF  # tracev2.ProcStatus is a uint8
        if status >= len(_PROC_STATUS_TO_STATE):
            raise _Broken(f"invalid status for proc {pid}: {status}")
        old_state = _PROC_STATUS_TO_STATE[status]
        s = self.p_states.get(pid)
        if s is not None:
            if status == PROC_SYSCALL_ABANDONED and s.status == PROC_SYSCALL:
                # Promote: we are already in ProcSyscall, nothing was lost.
                old_state = ProcState.RUNNING
                a[1] = PROC_SYSCALL
            elif status == PROC_SYSCALL_ABANDONED and s.status == PROC_SYSCALL_ABANDONED:
                old_state = ProcState.IDLE
                a[1] = PROC_SYSCALL_ABANDONED
            elif s.status != status:
                raise _Broken(
                    f"inconsistent status for proc {pid}: old {spec.proc_status_name(s.status)} "
                    f"vs. new {spec.proc_status_name(status)}"
                )
            s.seq_gen, s.seq = gen, 0
        else:
            self.p_states[pid] = _PState(pid, status, gen)
            old_state = ProcState.UNDETERMINED if gen == self.initial_gen else ProcState.NOT_EXIST
        a[2] = int(old_state)  # smuggle the old state (extra[0]) for StateTransition
        np = pid if status == PROC_RUNNING or status == PROC_SYSCALL else p
        cm, cp, cg = m, p, g
        if status == PROC_SYSCALL_ABANDONED and old_state == ProcState.RUNNING:
            # Emit in the context the P is bound to (Go takes the last match in map order).
            found = False
            for mid, ms in self.m_states.items():
                if ms.p == pid:
                    cm, cp, cg = mid, pid, ms.g
                    found = True
            if not found:
                raise _Broken(f"failed to find sched context for proc {pid} that's about to be stolen")
        self._append(Event(evt, cg, cp, cm, ev.typ, ev.time, ev.args))
        return g, np

    def proc_start(self, ev, evt, m, gen, g, p):
        a = ev.args
        pid = _i64(a[0])
        state = self.p_states.get(pid)
        if (
            state is None
            or state.status != PROC_IDLE
            or not (state.seq_gen == gen and state.seq + 1 == a[1])
            or p != NO_PROC
        ):
            return None
        _validate(m, p, g, MUST_HAVE, MUST_NOT_HAVE, MAY_HAVE)
        state.status = PROC_RUNNING
        state.seq_gen, state.seq = gen, a[1]
        self._append(Event(evt, g, p, m, ev.typ, ev.time, ev.args))
        return g, pid

    def proc_stop(self, ev, evt, m, gen, g, p):
        state = self.p_states.get(p)
        if state is None:
            raise _Broken(f"event {self.ev_name(ev.typ)} for proc ({p}) that doesn't exist")
        if state.status != PROC_RUNNING and state.status != PROC_SYSCALL:
            raise _Broken(f"{self.ev_name(ev.typ)} event for proc that's not Running or Syscall")
        _validate(m, p, g, MUST_HAVE, MUST_HAVE, MAY_HAVE)
        state.status = PROC_IDLE
        self._append(Event(evt, g, p, m, ev.typ, ev.time, ev.args))
        return g, NO_PROC

    def proc_steal(self, ev, evt, m, gen, g, p):
        a = ev.args
        pid = _i64(a[0])
        state = self.p_states.get(pid)
        if (
            state is None
            or (state.status != PROC_SYSCALL and state.status != PROC_SYSCALL_ABANDONED)
            or not (state.seq_gen == gen and state.seq + 1 == a[1])
        ):
            return None
        _validate(m, p, g, MUST_HAVE, MAY_HAVE, MAY_HAVE)
        old_status = state.status
        a[3] = old_status  # extra[0]: lets StateTransition show Idle->Idle for abandoned Ps
        state.status = PROC_IDLE
        state.seq_gen, state.seq = gen, a[1]
        if old_status == PROC_SYSCALL_ABANDONED:
            self._append(Event(evt, g, p, m, ev.typ, ev.time, ev.args))
            return g, p
        mid = _i64(a[2])
        if mid == m:
            if p != pid:
                raise _Broken(f"tried to self-steal proc {pid} (thread {mid}), but got proc {p} instead")
            self._append(Event(evt, g, p, m, ev.typ, ev.time, ev.args))
            return g, NO_PROC
        ms = self.m_states.get(mid)
        if ms is None:
            raise _Broken(f"stole proc from non-existent thread {mid}")
        if ms.p != pid:
            raise _Broken(f"tried to steal proc {pid} from thread {mid}, but got proc {ms.p} instead")
        ms.p = NO_PROC
        self._append(Event(evt, g, p, m, ev.typ, ev.time, ev.args))
        return g, p

    # -- goroutines -----------------------------------------------------------
    def go_status(self, ev, evt, m, gen, g, p):
        a = ev.args
        gid = _i64(a[0])
        mid = _i64(a[1])
        status = a[2] & 0xFF  # tracev2.GoStatus is a uint8
        if status >= len(_GO_STATUS_TO_STATE):
            raise _Broken(f"invalid status for goroutine {gid}: {status}")
        old_state = _GO_STATUS_TO_STATE[status]
        s = self.g_states.get(gid)
        if s is not None:
            if s.status != status:
                raise _Broken(
                    f"inconsistent status for goroutine {gid}: old {spec.go_status_name(s.status)} "
                    f"vs. new {spec.go_status_name(status)}"
                )
            s.seq_gen, s.seq = gen, 0
        elif gen == self.initial_gen:
            self.g_states[gid] = _GState(gid, status, gen)
            old_state = GoState.UNDETERMINED
        else:
            raise _Broken(
                f"found goroutine status for new goroutine after the first generation: "
                f"id={gid} status={spec.go_status_name(status)}"
            )
        a[2] = (int(old_state) << 32) | status  # smuggle the old state for StateTransition
        ng = g
        cm, cg = m, g
        if status == GO_RUNNING:
            ng = gid
        elif status == GO_SYSCALL:
            if mid == NO_THREAD:
                raise _Broken(f"found goroutine {gid} in syscall without a thread")
            if mid == m:
                if gen != self.initial_gen and g != gid:
                    raise _Broken(
                        f"inconsistent thread for syscalling goroutine {gid}: thread has goroutine {g}"
                    )
                ng = gid
            else:
                ms = self.m_states.get(mid)
                if ms is not None:
                    if ms.g != gid:
                        raise _Broken(
                            f"inconsistent thread for syscalling goroutine {gid}: thread has goroutine {ms.g}"
                        )
                    cg = ms.g
                else:
                    self.m_states[mid] = _MState(gid, NO_PROC)
                cm = mid
        self._append(Event(evt, cg, p, cm, ev.typ, ev.time, ev.args))
        return ng, p

    def go_create(self, ev, evt, m, gen, g, p):
        _validate(m, p, g, MUST_HAVE, MUST_HAVE, MAY_HAVE)
        state = self.g_states.get(g)
        if state is not None and state.status != GO_RUNNING:
            raise _Broken(f"{self.ev_name(ev.typ)} event for goroutine that's not Running")
        newgid = _i64(ev.args[0])
        if newgid in self.g_states:
            raise _Broken(f"tried to create goroutine ({newgid}) that already exists")
        status = GO_WAITING if ev.typ == S.EV_GO_CREATE_BLOCKED else GO_RUNNABLE
        self.g_states[newgid] = _GState(newgid, status, gen)
        self._append(Event(evt, g, p, m, ev.typ, ev.time, ev.args))
        return g, p

    def go_stop_exec(self, ev, evt, m, gen, g, p):
        if m == NO_THREAD or p == NO_PROC or g == NO_GOROUTINE:
            _validate(m, p, g, MUST_HAVE, MUST_HAVE, MUST_HAVE)
        state = self.g_states.get(g)
        if state is None:
            raise _Broken(f"event {self.ev_name(ev.typ)} for goroutine ({g}) that doesn't exist")
        if state.status != GO_RUNNING:
            raise _Broken(f"{self.ev_name(ev.typ)} event for goroutine that's not Running")
        typ = ev.typ
        if typ == S.EV_GO_DESTROY:
            del self.g_states[g]
        elif typ == S.EV_GO_STOP:
            state.status = GO_RUNNABLE
        elif typ == S.EV_GO_BLOCK:
            state.status = GO_WAITING
        self._append(Event(evt, g, p, m, ev.typ, ev.time, ev.args))
        return NO_GOROUTINE, p

    def go_start(self, ev, evt, m, gen, g, p):
        a = ev.args
        gid = a[0]
        if gid > _I64MAX:
            gid -= _U64
        state = self.g_states.get(gid)
        if (
            state is None
            or state.status != GO_RUNNABLE
            or not (state.seq_gen == gen and state.seq + 1 == a[1])
        ):
            return None
        if m == NO_THREAD or p == NO_PROC or g != NO_GOROUTINE:
            _validate(m, p, g, MUST_HAVE, MUST_HAVE, MUST_NOT_HAVE)
        state.status = GO_RUNNING
        state.seq_gen, state.seq = gen, a[1]
        self._append(Event(evt, g, p, m, ev.typ, ev.time, ev.args))
        return gid, p

    def go_unblock(self, ev, evt, m, gen, g, p):
        a = ev.args
        gid = a[0]
        if gid > _I64MAX:
            gid -= _U64
        state = self.g_states.get(gid)
        if (
            state is None
            or state.status != GO_WAITING
            or not (state.seq_gen == gen and state.seq + 1 == a[1])
        ):
            return None
        state.status = GO_RUNNABLE
        state.seq_gen, state.seq = gen, a[1]
        self._append(Event(evt, g, p, m, ev.typ, ev.time, ev.args))
        return g, p

    def go_switch(self, ev, evt, m, gen, g, p):
        _user_go(m, p, g)
        cur = self.g_states.get(g)
        if cur is None:
            raise _Broken(f"event {self.ev_name(ev.typ)} for goroutine ({g}) that doesn't exist")
        if cur.status != GO_RUNNING:
            raise _Broken(f"{self.ev_name(ev.typ)} event for goroutine that's not Running")
        a = ev.args
        nextg = _i64(a[0])
        nxt = self.g_states.get(nextg)
        if nxt is None or nxt.status != GO_WAITING or not (nxt.seq_gen == gen and nxt.seq + 1 == a[1]):
            return None
        self._append(Event(evt, g, p, m, ev.typ, ev.time, ev.args))
        q = self.queue
        if ev.typ == S.EV_GO_SWITCH:
            cur.status = GO_WAITING
            q.append(Event(evt, g, p, m, S.EV_GO_BLOCK, ev.time, [0, 0, 0, 0]))
        else:
            del self.g_states[g]
            q.append(Event(evt, g, p, m, S.EV_GO_DESTROY, ev.time, [0, 0, 0, 0]))
        nxt.status = GO_RUNNING
        nxt.seq_gen, nxt.seq = gen, a[1]
        q.append(Event(evt, NO_GOROUTINE, p, m, S.EV_GO_START, ev.time, [a[0], a[1], 0, 0]))
        return nextg, p

    def go_syscall_begin(self, ev, evt, m, gen, g, p):
        _user_go(m, p, g)
        state = self.g_states.get(g)
        if state is None:
            raise _Broken(f"event {self.ev_name(ev.typ)} for goroutine ({g}) that doesn't exist")
        if state.status != GO_RUNNING:
            raise _Broken(f"{self.ev_name(ev.typ)} event for goroutine that's not Running")
        state.status = GO_SYSCALL
        ps = self.p_states.get(p)
        if ps is None:
            raise _Broken(f"uninitialized proc {p} found during {self.ev_name(ev.typ)}")
        ps.status = PROC_SYSCALL
        seq = ev.args[0]
        if not (ps.seq_gen == gen and ps.seq + 1 == seq):
            raise _Broken(
                f"failed to advance {self.ev_name(ev.typ)}: can't make sequence: "
                f"{ps.seq} (gen={ps.seq_gen}) -> {seq} (gen={gen})"
            )
        ps.seq_gen, ps.seq = gen, seq
        self._append(Event(evt, g, p, m, ev.typ, ev.time, ev.args))
        return g, p

    def go_syscall_end(self, ev, evt, m, gen, g, p):
        _user_go(m, p, g)
        state = self.g_states.get(g)
        if state is None:
            raise _Broken(f"event {self.ev_name(ev.typ)} for goroutine ({g}) that doesn't exist")
        if state.status != GO_SYSCALL:
            raise _Broken(f"{self.ev_name(ev.typ)} event for goroutine that's not Running")
        state.status = GO_RUNNING
        ps = self.p_states.get(p)
        if ps is None:
            raise _Broken(f"uninitialized proc {p} found during {self.ev_name(ev.typ)}")
        if ps.status != PROC_SYSCALL:
            raise _Broken(
                f"expected proc {p} in state Syscall, but got {spec.proc_status_name(ps.status)} instead"
            )
        ps.status = PROC_RUNNING
        self._append(Event(evt, g, p, m, ev.typ, ev.time, ev.args))
        return g, p

    def go_syscall_end_blocked(self, ev, evt, m, gen, g, p):
        if p != NO_PROC:
            ps = self.p_states.get(p)
            if ps is None:
                raise _Broken(f"uninitialized proc {p} found during {self.ev_name(ev.typ)}")
            if ps.status == PROC_SYSCALL:
                return None
        _validate(m, p, g, MUST_HAVE, MAY_HAVE, MUST_HAVE)
        state = self.g_states.get(g)
        if state is None:
            raise _Broken(f"event {self.ev_name(ev.typ)} for goroutine ({g}) that doesn't exist")
        if state.status != GO_SYSCALL:
            raise _Broken(f"{self.ev_name(ev.typ)} event for goroutine that's not Running")
        state.status = GO_RUNNABLE
        self._append(Event(evt, g, p, m, ev.typ, ev.time, ev.args))
        return NO_GOROUTINE, p

    def go_create_syscall(self, ev, evt, m, gen, g, p):
        _validate(m, p, g, MUST_HAVE, MAY_HAVE, MUST_NOT_HAVE)
        newgid = _i64(ev.args[0])
        if newgid in self.g_states:
            raise _Broken(f"tried to create goroutine ({newgid}) in syscall that already exists")
        self.g_states[newgid] = _GState(newgid, GO_SYSCALL, gen)
        self._append(Event(evt, g, p, m, ev.typ, ev.time, ev.args))
        return newgid, p

    def go_destroy_syscall(self, ev, evt, m, gen, g, p):
        _validate(m, p, g, MUST_HAVE, MAY_HAVE, MUST_HAVE)
        state = self.g_states.get(g)
        if state is None:
            raise _Broken(f"event {self.ev_name(ev.typ)} for goroutine ({g}) that doesn't exist")
        if state.status != GO_SYSCALL:
            raise _Broken(f"{self.ev_name(ev.typ)} event for goroutine that's not Syscall")
        del self.g_states[g]
        np = p
        if p != NO_PROC:
            ps = self.p_states.get(p)
            if ps is None:
                raise _Broken(f"found invalid proc {p} during {self.ev_name(ev.typ)}")
            if ps.status != PROC_SYSCALL:
                raise _Broken(
                    f"proc {p} in unexpected state {spec.proc_status_name(ps.status)} "
                    f"during {self.ev_name(ev.typ)}"
                )
            ps.status = PROC_SYSCALL_ABANDONED
            np = NO_PROC
            # An extra self-ProcSteal (extra[0] = ProcSyscall).
            pu = p % _U64
            self.queue.append(Event(evt, g, p, m, S.EV_PROC_STEAL, ev.time, [pu, 0, 0, PROC_SYSCALL]))
        self._append(Event(evt, g, p, m, ev.typ, ev.time, ev.args))
        return NO_GOROUTINE, np

    # -- tasks and regions ----------------------------------------------------
    def user_task_begin(self, ev, evt, m, gen, g, p):
        a = ev.args
        tid = a[0]
        if tid in self.active_tasks:
            raise _Broken(f"task ID conflict: {tid}")
        parent = a[1]
        if parent == 0:
            # 0 means "no parent" here, not the background task.
            parent = NO_TASK
            a[1] = NO_TASK
        name = evt.strings.get(a[2])
        if name is None:
            raise _Broken(f"invalid string ID {a[2]} for {ev.typ} event")
        self.active_tasks[tid] = (name, parent)
        _user_go(m, p, g)
        self._append(Event(evt, g, p, m, ev.typ, ev.time, ev.args))
        return g, p

    def user_task_end(self, ev, evt, m, gen, g, p):
        a = ev.args
        tid = a[0]
        ts = self.active_tasks.pop(tid, None)
        if ts is not None:
            a[2] = ts[1]
            a[3] = evt.add_extra_string(ts[0])
        else:
            a[2] = NO_TASK
            a[3] = evt.add_extra_string("")
        _user_go(m, p, g)
        self._append(Event(evt, g, p, m, ev.typ, ev.time, ev.args))
        return g, p

    def user_region_begin(self, ev, evt, m, gen, g, p):
        _user_go(m, p, g)
        a = ev.args
        name = evt.strings.get(a[1])
        if name is None:
            raise _Broken(f"invalid string ID {a[1]} for {ev.typ} event")
        gs = self.g_states.get(g)
        if gs is None:
            raise _Broken(f"encountered EvUserRegionBegin without known state for current goroutine {g}")
        gs.regions.append((a[0], name))
        self._append(Event(evt, g, p, m, ev.typ, ev.time, ev.args))
        return g, p

    def user_region_end(self, ev, evt, m, gen, g, p):
        _user_go(m, p, g)
        a = ev.args
        name = evt.strings.get(a[1])
        if name is None:
            raise _Broken(f"invalid string ID {a[1]} for {ev.typ} event")
        gs = self.g_states.get(g)
        if gs is None:
            raise _Broken(f"encountered EvUserRegionEnd without known state for current goroutine {g}")
        regions = gs.regions
        if regions:
            nxt = regions[-1]
            if nxt != (a[0], name):
                raise _Broken(
                    f"misuse of region in goroutine {gs.id}: region end {{{a[0]} {name}}} "
                    f"when the inner-most active region start event is {{{nxt[0]} {nxt[1]}}}"
                )
            regions.pop()
        self._append(Event(evt, g, p, m, ev.typ, ev.time, ev.args))
        return g, p

    # -- GC -------------------------------------------------------------------
    def gc_active(self, ev, evt, m, gen, g, p):
        seq = ev.args[0]
        if gen == self.initial_gen:
            if self.gc_state != GC_UNDETERMINED:
                raise _Broken("GCActive in the first generation isn't first GC event")
            self.gc_seq = seq
            self.gc_state = GC_RUNNING
            self._append(Event(evt, g, p, m, ev.typ, ev.time, ev.args))
            return g, p
        if seq != (self.gc_seq + 1) % _U64:
            return None
        if self.gc_state != GC_RUNNING:
            raise _Broken("encountered GCActive while GC was not in progress")
        self.gc_seq = seq
        _user_go(m, p, g)
        self._append(Event(evt, g, p, m, ev.typ, ev.time, ev.args))
        return g, p

    def gc_begin(self, ev, evt, m, gen, g, p):
        seq = ev.args[0]
        if self.gc_state == GC_UNDETERMINED:
            self.gc_seq = seq
            self.gc_state = GC_RUNNING
            self._append(Event(evt, g, p, m, ev.typ, ev.time, ev.args))
            return g, p
        if seq != (self.gc_seq + 1) % _U64:
            return None
        if self.gc_state == GC_RUNNING:
            raise _Broken("encountered GCBegin while GC was already in progress")
        self.gc_seq = seq
        self.gc_state = GC_RUNNING
        _user_go(m, p, g)
        self._append(Event(evt, g, p, m, ev.typ, ev.time, ev.args))
        return g, p

    def gc_end(self, ev, evt, m, gen, g, p):
        seq = ev.args[0]
        if seq != (self.gc_seq + 1) % _U64:
            return None
        if self.gc_state == GC_NOT_RUNNING:
            raise _Broken("encountered GCEnd when GC was not in progress")
        if self.gc_state == GC_UNDETERMINED:
            raise _Broken("encountered GCEnd when GC was in an undetermined state")
        self.gc_seq = seq
        self.gc_state = GC_NOT_RUNNING
        _user_go(m, p, g)
        self._append(Event(evt, g, p, m, ev.typ, ev.time, ev.args))
        return g, p

    def annotation(self, ev, evt, m, gen, g, p):
        if m == NO_THREAD or p == NO_PROC or g == NO_GOROUTINE:
            _validate(m, p, g, MUST_HAVE, MUST_HAVE, MUST_HAVE)
        self._append(Event(evt, g, p, m, ev.typ, ev.time, ev.args))
        return g, p

    def heap_metric(self, ev, evt, m, gen, g, p):
        if m == NO_THREAD or p == NO_PROC:
            _validate(m, p, g, MUST_HAVE, MUST_HAVE, MAY_HAVE)
        self._append(Event(evt, g, p, m, ev.typ, ev.time, ev.args))
        return g, p

    def gc_sweep_begin(self, ev, evt, m, gen, g, p):
        _validate(m, p, g, MUST_HAVE, MUST_HAVE, MAY_HAVE)
        ps = self.p_states.get(p)
        if ps is None:
            raise _Broken(f"uninitialized proc {p} found during {self.ev_name(ev.typ)}")
        _begin_range(ps, _range_type(ev.typ, 0))
        self._append(Event(evt, g, p, m, ev.typ, ev.time, ev.args))
        return g, p

    def gc_sweep_active(self, ev, evt, m, gen, g, p):
        pid = _i64(ev.args[0])
        ps = self.p_states.get(pid)
        if ps is None:
            raise _Broken(f"encountered GCSweepActive for unknown proc {pid}")
        _active_range(ps, _range_type(ev.typ, 0), gen == self.initial_gen)
        self._append(Event(evt, g, p, m, ev.typ, ev.time, ev.args))
        return g, p

    def gc_sweep_end(self, ev, evt, m, gen, g, p):
        _validate(m, p, g, MUST_HAVE, MUST_HAVE, MAY_HAVE)
        ps = self.p_states.get(p)
        if ps is None:
            raise _Broken(f"uninitialized proc {p} found during {self.ev_name(ev.typ)}")
        _end_range(ps, ev.typ)
        self._append(Event(evt, g, p, m, ev.typ, ev.time, ev.args))
        return g, p

    def go_range_begin(self, ev, evt, m, gen, g, p):
        _user_go(m, p, g)
        desc = ev.args[0] if ev.typ == S.EV_STW_BEGIN else 0
        gs = self.g_states.get(g)
        if gs is None:
            raise _Broken(f"encountered event of type {ev.typ} without known state for current goroutine {g}")
        _begin_range(gs, _range_type(ev.typ, desc))
        self._append(Event(evt, g, p, m, ev.typ, ev.time, ev.args))
        return g, p

    def go_range_active(self, ev, evt, m, gen, g, p):
        gid = _i64(ev.args[0])
        gs = self.g_states.get(gid)
        if gs is None:
            raise _Broken(f"uninitialized goroutine {gid} found during {self.ev_name(ev.typ)}")
        _active_range(gs, _range_type(ev.typ, 0), gen == self.initial_gen)
        self._append(Event(evt, g, p, m, ev.typ, ev.time, ev.args))
        return g, p

    def go_range_end(self, ev, evt, m, gen, g, p):
        _user_go(m, p, g)
        gs = self.g_states.get(g)
        if gs is None:
            raise _Broken(f"encountered event of type {ev.typ} without known state for current goroutine {g}")
        desc = _end_range(gs, ev.typ)
        if ev.typ == S.EV_STW_END:
            ev.args[0] = desc  # smuggle the STW kind (string ID) from the begin event
        self._append(Event(evt, g, p, m, ev.typ, ev.time, ev.args))
        return g, p

    def alloc_free(self, ev, evt, m, gen, g, p):
        if m == NO_THREAD:
            _validate(m, p, g, MUST_HAVE, MAY_HAVE, MAY_HAVE)
        self._append(Event(evt, g, p, m, ev.typ, ev.time, ev.args))
        return g, p

    # -- debugging ------------------------------------------------------------
    def dump(self) -> str:
        """Go's dumpOrdering (maps in insertion order rather than Go's random order)."""
        lines = [
            f"G {gid} [status={spec.go_status_name(s.status)} seq={s.seq} (gen={s.seq_gen})]"
            for gid, s in self.g_states.items()
        ]
        lines.append("")
        lines += [
            f"P {pid} [status={spec.proc_status_name(s.status)} seq={s.seq} (gen={s.seq_gen})]"
            for pid, s in self.p_states.items()
        ]
        lines.append("")
        lines += [f"M {mid} [g={s.g} p={s.p}]" for mid, s in self.m_states.items()]
        lines.append("")
        state = _GC_STATE_NAMES[self.gc_state]
        lines.append(f"GC {self.gc_seq} {state}")
        return "\n".join(lines) + "\n"


_DISPATCH: dict[int, str] = {
    S.EV_PROCS_CHANGE: "annotation",
    S.EV_PROC_START: "proc_start",
    S.EV_PROC_STOP: "proc_stop",
    S.EV_PROC_STEAL: "proc_steal",
    S.EV_PROC_STATUS: "proc_status",
    S.EV_GO_CREATE: "go_create",
    S.EV_GO_CREATE_SYSCALL: "go_create_syscall",
    S.EV_GO_START: "go_start",
    S.EV_GO_DESTROY: "go_stop_exec",
    S.EV_GO_DESTROY_SYSCALL: "go_destroy_syscall",
    S.EV_GO_STOP: "go_stop_exec",
    S.EV_GO_BLOCK: "go_stop_exec",
    S.EV_GO_UNBLOCK: "go_unblock",
    S.EV_GO_SYSCALL_BEGIN: "go_syscall_begin",
    S.EV_GO_SYSCALL_END: "go_syscall_end",
    S.EV_GO_SYSCALL_END_BLOCKED: "go_syscall_end_blocked",
    S.EV_GO_STATUS: "go_status",
    S.EV_STW_BEGIN: "go_range_begin",
    S.EV_STW_END: "go_range_end",
    S.EV_GC_ACTIVE: "gc_active",
    S.EV_GC_BEGIN: "gc_begin",
    S.EV_GC_END: "gc_end",
    S.EV_GC_SWEEP_ACTIVE: "gc_sweep_active",
    S.EV_GC_SWEEP_BEGIN: "gc_sweep_begin",
    S.EV_GC_SWEEP_END: "gc_sweep_end",
    S.EV_GC_MARK_ASSIST_ACTIVE: "go_range_active",
    S.EV_GC_MARK_ASSIST_BEGIN: "go_range_begin",
    S.EV_GC_MARK_ASSIST_END: "go_range_end",
    S.EV_HEAP_ALLOC: "heap_metric",
    S.EV_HEAP_GOAL: "heap_metric",
    S.EV_GO_LABEL: "annotation",
    S.EV_USER_TASK_BEGIN: "user_task_begin",
    S.EV_USER_TASK_END: "user_task_end",
    S.EV_USER_REGION_BEGIN: "user_region_begin",
    S.EV_USER_REGION_END: "user_region_end",
    S.EV_USER_LOG: "annotation",
    S.EV_GO_SWITCH: "go_switch",
    S.EV_GO_SWITCH_DESTROY: "go_switch",
    S.EV_GO_CREATE_BLOCKED: "go_create",
    S.EV_GO_STATUS_STACK: "go_status",
    **{t: "alloc_free" for t in range(S.EV_SPAN, S.MAX_EXPERIMENTAL_EVENT)},
}

__all__ = ["Ordering", "TraceError", "go_state_name"]
