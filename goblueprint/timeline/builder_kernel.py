"""The timeline builder's per-event loop, compiled: G/P/M state machines over a chunk's columns.

``build_step`` runs builder.py's semantics (see its docstring) over the rows of one
chunk, packed by the builder into one int64 matrix ``E`` (columns ``E_*``).
Goroutines, procs, threads and tasks arrive as dense *slots* (the builder maps
ids to slots per chunk), so every piece of state is a row of a flat int64 table
with named columns, carried from chunk to chunk:

* ``G`` / ``P`` / ``M``: per slot, the lane's open span (``O_*``) and the
  goroutine's state, name stack, pending flow and block reason (``G_*``, ``C_*``),
  the proc's state and owner (``P_*``), the thread's context (``M_*``);
* ``T``: open tasks per task slot; ``RG``: a pool of open regions, one linked
  stack per goroutine (``G_RTOP``, ``SC_RTOP_NONE`` for events without one);
* ``RA``: open ranges, in the order they opened (finish() emits them so);
* ``SC``: scalars (STW depth, last Sync, counters, output row counts).

Closed spans, flows, counter samples and instants are appended to growing
output tables.  Before each event the loop checks that the outputs have room
for the most that event can emit; if not, it returns the row it stopped at and
the builder grows the tables (doubling) and calls it again from there.

Strings are the pass Interner's ids, except a few the builder makes up (flow
names, derived counter names), which are negative ``SYN_*`` codes resolved by
finish().  There is no Python twin of this loop.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from goblueprint.timeline.builder_codes import *  # noqa: F403 - the loop's layout and codes, numba-free

# -- emitting --------------------------------------------------------------------------------


@njit(cache=True, nogil=True, inline="always")
def _span(SP, SC, kind, lane, start, end, state, g, p, m, label, stack):  # pragma: no cover - compiled
    k = SC[SC_NSP]
    SC[SC_NSP] = k + 1
    SP[k, 0] = kind
    SP[k, 1] = lane
    SP[k, 2] = start
    SP[k, 3] = end if end > start else start
    SP[k, 4] = state
    SP[k, 5] = g
    SP[k, 6] = p
    SP[k, 7] = m
    SP[k, 8] = label
    SP[k, 9] = stack


@njit(cache=True, nogil=True, inline="always")
def _close(X, row, SP, SC, kind, lane, t):  # pragma: no cover - compiled
    """Close the open span of a G/P/M lane (X's row) at t, if there is one."""
    if X[row, O_OPEN]:
        X[row, O_OPEN] = 0
        _span(SP, SC, kind, lane, X[row, O_S], t, X[row, O_STATE], X[row, O_G], X[row, O_P], X[row, O_M],
              X[row, O_LABEL], X[row, O_STACK])  # fmt: skip


@njit(cache=True, nogil=True, inline="always")
def _open(X, row, t, state, g, p, m, label, stack):  # pragma: no cover - compiled
    X[row, O_OPEN] = 1
    X[row, O_S] = t
    X[row, O_STATE] = state
    X[row, O_G] = g
    X[row, O_P] = p
    X[row, O_M] = m
    X[row, O_LABEL] = label
    X[row, O_STACK] = stack


@njit(cache=True, nogil=True, inline="always")
def _counter(CT, CTV, SC, name, t, value):  # pragma: no cover - compiled
    k = SC[SC_NCT]
    SC[SC_NCT] = k + 1
    CT[k, 0] = name
    CT[k, 1] = t
    CTV[k] = value


@njit(cache=True, nogil=True, inline="always")
def _instant(IN, SC, E, i, kind, label, category, ident, stack):  # pragma: no cover - compiled
    k = SC[SC_NIN]
    SC[SC_NIN] = k + 1
    IN[k, 0] = kind
    IN[k, 1] = E[i, E_TIME]
    IN[k, 2] = E[i, E_G]
    IN[k, 3] = E[i, E_P]
    IN[k, 4] = E[i, E_M]
    IN[k, 5] = label
    IN[k, 6] = category
    IN[k, 7] = ident
    IN[k, 8] = stack


@njit(cache=True, nogil=True, inline="always")
def _flow(FL, SC, G, gs, graw, to_p, to_m, to_t):  # pragma: no cover - compiled
    """Emit goroutine gs's pending flow (ending at to_* or nowhere) and drop it."""
    G[gs, G_HASC] = 0
    k = SC[SC_NFL]
    SC[SC_NFL] = k + 1
    FL[k, FL_KIND] = G[gs, C_KIND]
    FL[k, FL_G] = graw
    FL[k, FL_FROMG] = G[gs, C_FROMG]
    FL[k, FL_FROMP] = G[gs, C_FROMP]
    FL[k, FL_FROMT] = G[gs, C_TIME]
    FL[k, FL_TOP] = to_p
    FL[k, FL_TOM] = to_m
    FL[k, FL_TOT] = to_t
    FL[k, FL_LABEL] = G[gs, C_LABEL]
    FL[k, FL_STACK] = G[gs, C_STACK]


# -- state machines --------------------------------------------------------------------------


@njit(cache=True, nogil=True, inline="always")
def _raw(ids, slot):  # pragma: no cover - compiled
    return ids[slot] if slot >= 0 else NONE


@njit(cache=True, nogil=True, inline="always")
def _m_update(G, P, M, SP, SC, gids, pids, mids, ms, t, ps, gs):  # pragma: no cover - compiled
    """The thread's context is now (P ps, G gs): a new M lane span if that changes its state."""
    if ms < 0:
        return
    if gs >= 0 and G[gs, G_STATE] == G_SYSCALL:
        state = S_M_SYSCALL
    elif ps >= 0 or gs >= 0:
        state = S_M_RUNNING
    else:
        state = S_M_IDLE
    if M[ms, M_HAS] and M[ms, M_CP] == ps and M[ms, M_CG] == gs and M[ms, M_CST] == state:
        return
    M[ms, M_HAS] = 1
    M[ms, M_CP] = ps
    M[ms, M_CG] = gs
    M[ms, M_CST] = state
    m = mids[ms]
    _close(M, ms, SP, SC, L_M, m, t)
    _open(M, ms, t, state, _raw(gids, gs), _raw(pids, ps), m, 0, 0)
    if ps >= 0:
        P[ps, P_OWNER] = ms


@njit(cache=True, nogil=True)
def _close_regions(G, RG, SP, SC, gs, graw, t):  # pragma: no cover - compiled
    """Close goroutine gs's open regions at t, innermost first."""
    top = G[gs, G_RTOP] if gs >= 0 else SC[SC_RTOP_NONE]
    while top >= 0:
        _span(SP, SC, L_REGION, graw, RG[top, RG_S], t, S_REGION, RG[top, RG_G], RG[top, RG_TASK],
              RG[top, RG_DEPTH], RG[top, RG_LABEL], RG[top, RG_STACK])  # fmt: skip
        nxt = RG[top, RG_PREV]
        RG[top, RG_PREV] = SC[SC_RFREE]
        SC[SC_RFREE] = top
        SC[SC_OPENREG] -= 1
        top = nxt
    if gs >= 0:
        G[gs, G_RTOP] = -1
    else:
        SC[SC_RTOP_NONE] = -1


@njit(cache=True, nogil=True, inline="always")
def _g_transition(E, i, G, P, M, RG, SP, FL, CT, CTV, SC, gids, pids, mids, SCL):  # pragma: no cover
    gs = E[i, E_RS]
    if gs < 0:
        return
    tstack = E[i, E_TSTACK]
    if G[gs, G_NAME] == 0 and tstack != 0:
        G[gs, G_NAME] = tstack  # its root frame names the goroutine
    old = E[i, E_OLD]
    new = E[i, E_NEW]
    if old == new:
        return
    t = E[i, E_TIME]
    gid = E[i, E_RID]
    p = E[i, E_P]
    m = E[i, E_M]
    reason = E[i, E_REASON]
    # Derived counters.
    k = 0 if old == G_RUNNING else 1 if old == G_RUNNABLE else 2 if old == G_SYSCALL else -1
    if k >= 0:
        c = SC[SC_CNT + k] - 1
        if c < 0:
            c = 0
        SC[SC_CNT + k] = c
        _counter(CT, CTV, SC, SYN_COUNT - k, t, float(c))
    k = 0 if new == G_RUNNING else 1 if new == G_RUNNABLE else 2 if new == G_SYSCALL else -1
    if k >= 0:
        SC[SC_CNT + k] += 1
        _counter(CT, CTV, SC, SYN_COUNT - k, t, float(SC[SC_CNT + k]))
    if old == G_NOT_EXIST or old == G_UNDETERMINED:
        if new != G_NOT_EXIST:
            SC[SC_ALIVE] += 1
            _counter(CT, CTV, SC, SYN_ALIVE, t, float(SC[SC_ALIVE]))
    elif new == G_NOT_EXIST:
        a = SC[SC_ALIVE] - 1
        SC[SC_ALIVE] = a if a > 0 else 0
        _counter(CT, CTV, SC, SYN_ALIVE, t, float(SC[SC_ALIVE]))
    G[gs, G_STATE] = new

    # The G lane: close the current state (a span since the last Sync when it was
    # undetermined is dropped: its true start is unknown), open the new one.
    if G[gs, O_OPEN]:
        G[gs, O_OPEN] = 0
        if old != G_UNDETERMINED:
            _span(SP, SC, L_G, gid, G[gs, O_S], t, G[gs, O_STATE], gid, G[gs, O_P], G[gs, O_M],
                  G[gs, O_LABEL], G[gs, O_STACK])  # fmt: skip
    start = SC[SC_SYNC] if old == G_UNDETERMINED else t
    if new == G_RUNNING:
        _open(G, gs, start, S_G_RUNNING, gid, p, m, 0, 0)
    elif new == G_SYSCALL:
        _open(G, gs, start, S_G_SYSCALL, gid, p, m, reason, tstack)
    elif new == G_RUNNABLE:
        _open(G, gs, start, S_G_RUNNABLE, gid, NONE, NONE, reason, tstack)
    elif new == G_WAITING:
        _open(G, gs, start, S_G_WAITING, gid, NONE, NONE, reason, tstack)

    # Flows: remember why the goroutine may run, emit when it does.
    if new == G_RUNNABLE:
        kind = -1
        if old == G_WAITING:
            kind, from_g, from_p, label, stack = (
                F_WAKEUP,
                E[i, E_G],
                p,
                SYN_UNBLOCK - G[gs, G_BLOCK],
                E[i, E_STACK],
            )
            G[gs, G_BLOCK] = 0
        elif old == G_NOT_EXIST:
            kind, from_g, from_p, label, stack = F_CREATE, E[i, E_G], p, SYN_GO, E[i, E_STACK]
        elif old == G_SYSCALL:
            kind, from_g, from_p, label, stack = F_SYSCALL_EXIT, gid, NONE, SYN_EXIT_SYSCALL, E[i, E_STACK]
        elif old == G_RUNNING:
            kind, from_g, from_p, label, stack = F_REQUEUE, gid, p, reason, tstack
        else:
            from_g = from_p = label = stack = 0
        if kind >= 0:
            if G[gs, G_HASC]:
                _flow(FL, SC, G, gs, gid, NONE, NONE, NONE)
            G[gs, G_HASC] = 1
            G[gs, C_KIND] = kind
            G[gs, C_FROMG] = from_g
            G[gs, C_FROMP] = from_p
            G[gs, C_TIME] = t
            G[gs, C_LABEL] = label
            G[gs, C_STACK] = stack
    elif new == G_WAITING:
        G[gs, G_BLOCK] = reason
    elif new == G_RUNNING:
        if G[gs, G_HASC]:
            _flow(FL, SC, G, gs, gid, p, m, t)
    if new == G_NOT_EXIST or (new == G_WAITING and reason >= 0 and SCL[reason, 0] & SCL_FOREVER):
        _close_regions(G, RG, SP, SC, gs, gid, t)
        if G[gs, G_HASC]:
            _flow(FL, SC, G, gs, gid, NONE, NONE, NONE)

    # The P lane: which G runs there.
    ps = E[i, E_PS]
    if ps >= 0:
        change = True
        if new == G_RUNNING:
            pg = gid
        elif old == G_RUNNING and new != G_SYSCALL and P[ps, P_STATE] == P_RUNNING:
            pg = NONE
        else:
            pg = NONE
            change = False
        if change and not (P[ps, O_OPEN] and P[ps, O_STATE] == S_P_RUNNING and P[ps, O_G] == pg):
            _close(P, ps, SP, SC, L_P, p, t)
            _open(P, ps, t, S_P_RUNNING, pg, p, m, 0, 0)
    # The M lane: its context after this event (gs's state is already `new`).
    ms = E[i, E_MS]
    if ms >= 0:
        if new == G_RUNNING or new == G_SYSCALL:
            cg = gs
        elif gid == E[i, E_G]:
            cg = -1
        else:
            cg = E[i, E_GS]
        _m_update(G, P, M, SP, SC, gids, pids, mids, ms, t, ps, cg)


@njit(cache=True, nogil=True, inline="always")
def _p_transition(E, i, G, P, M, SP, SC, gids, pids, mids):  # pragma: no cover - compiled
    ps = E[i, E_RS]
    if ps < 0:
        return
    old = E[i, E_OLD]
    new = E[i, E_NEW]
    t = E[i, E_TIME]
    pid = E[i, E_RID]
    P[ps, P_STATE] = new
    if old == new and P[ps, O_OPEN]:
        return
    ms = E[i, E_MS]
    no = np.int64(NONE)  # not a literal: one compiled _m_update for every call
    _close(P, ps, SP, SC, L_P, pid, t)
    if new == P_RUNNING:
        _open(P, ps, t, S_P_RUNNING, NONE, pid, E[i, E_M], 0, 0)
        if ms >= 0:
            _m_update(G, P, M, SP, SC, gids, pids, mids, ms, t, ps, no if old != P_RUNNING else E[i, E_GS])
    elif new == P_IDLE:
        _open(P, ps, t, S_P_STOPPED if SC[SC_STW] > 0 else S_P_IDLE, NONE, pid, NONE, 0, 0)
        owner = P[ps, P_OWNER]
        P[ps, P_OWNER] = -1
        if ms >= 0 and E[i, E_PS] == ps:
            _m_update(G, P, M, SP, SC, gids, pids, mids, ms, t, no, no)
        elif owner >= 0 and owner != ms:
            if M[owner, M_HAS] and M[owner, M_CP] == ps:  # stolen from a thread in a syscall
                _m_update(G, P, M, SP, SC, gids, pids, mids, owner, t, no, M[owner, M_CG])


@njit(cache=True, nogil=True)
def _stw(P, SP, SC, pids, t, begin):  # pragma: no cover - compiled
    """Idle Ps become stopped for the duration of a stop-the-world, and back."""
    d = SC[SC_STW] + (1 if begin else -1)
    SC[SC_STW] = d if d > 0 else 0
    if (begin and SC[SC_STW] != 1) or (not begin and SC[SC_STW] != 0):
        return
    frm = S_P_IDLE if begin else S_P_STOPPED
    to = S_P_STOPPED if begin else S_P_IDLE
    for ps in range(SC[SC_NPS]):
        if P[ps, O_OPEN] and P[ps, O_STATE] == frm:
            pid = pids[ps]
            _close(P, ps, SP, SC, L_P, pid, t)
            _open(P, ps, t, to, NONE, pid, NONE, 0, 0)


@njit(cache=True, nogil=True, inline="always")
def _range(E, i, kind, P, RA, SP, SC, pids, SCL):  # pragma: no cover - compiled
    t = E[i, E_TIME]
    name = E[i, E_NAME]
    flags = SCL[name, 0]
    is_stw = (flags & SCL_STW) != 0
    rk = E[i, E_RK]
    if is_stw:
        lk, lane, state = L_STW, 0, S_STW
    elif rk == R_NONE:
        lk, lane, state = L_GC, 0, SCL[name, 1]
    elif rk == R_GOROUTINE:
        lk, lane, state = L_GRANGE, E[i, E_RID], SCL[name, 1]
    elif rk == R_PROC:
        lk, lane, state = L_PRANGE, E[i, E_RID], SCL[name, 1]
    else:
        lk, lane, state = L_GC, 0, S_RANGE
    n = SC[SC_NRA]
    at = -1
    for j in range(n):
        if RA[j, RA_KIND] == lk and RA[j, RA_LANE] == lane and RA[j, RA_NAME] == name:
            at = j
            break
    if kind == K_RANGE_END:
        if at >= 0:
            _span(SP, SC, lk, lane, RA[at, RA_S], t, RA[at, RA_STATE], RA[at, RA_G], RA[at, RA_P], RA[at, RA_M],
                  RA[at, RA_LABEL], RA[at, RA_STACK])  # fmt: skip
            for j in range(at, n - 1):  # keep the others in opening order
                for c in range(RA.shape[1]):  # field by field: a row copy would allocate
                    RA[j, c] = RA[j + 1, c]
            SC[SC_NRA] = n - 1
        else:  # began before the trace
            first = SC[SC_FIRST] if SC[SC_FIRST] != 0 else t
            _span(SP, SC, lk, lane, first, t, state, E[i, E_G], E[i, E_P], E[i, E_M], name, 0)
        if is_stw:
            _stw(P, SP, SC, pids, t, kind != K_RANGE_END)  # False, not a literal: one compiled _stw
        return
    if at >= 0:  # RangeActive re-announces an open range each generation
        return
    RA[n, RA_KIND] = lk
    RA[n, RA_LANE] = lane
    RA[n, RA_NAME] = name
    RA[n, RA_S] = t
    RA[n, RA_STATE] = state
    RA[n, RA_G] = E[i, E_G]
    RA[n, RA_P] = E[i, E_P]
    RA[n, RA_M] = E[i, E_M]
    RA[n, RA_LABEL] = name
    RA[n, RA_STACK] = E[i, E_STACK]
    SC[SC_NRA] = n + 1
    if is_stw:
        _stw(P, SP, SC, pids, t, kind != K_RANGE_END)


@njit(cache=True, nogil=True, inline="always")
def _region(E, i, kind, G, RG, SP, SC):  # pragma: no cover - compiled
    t = E[i, E_TIME]
    gs = E[i, E_GS]
    g = E[i, E_G]
    top = G[gs, G_RTOP] if gs >= 0 else SC[SC_RTOP_NONE]
    if kind == K_REGION_BEGIN:
        row = SC[SC_RFREE]
        if row >= 0:
            SC[SC_RFREE] = RG[row, RG_PREV]
        else:
            row = SC[SC_NRG]
            SC[SC_NRG] = row + 1
        RG[row, RG_S] = t
        RG[row, RG_G] = g
        RG[row, RG_TASK] = E[i, E_TASK]
        RG[row, RG_DEPTH] = RG[top, RG_DEPTH] + 1 if top >= 0 else 0
        RG[row, RG_LABEL] = E[i, E_NAME]
        RG[row, RG_STACK] = E[i, E_STACK]
        RG[row, RG_PREV] = top
        top = row
        SC[SC_OPENREG] += 1
    elif top >= 0:
        _span(SP, SC, L_REGION, g, RG[top, RG_S], t, S_REGION, RG[top, RG_G], RG[top, RG_TASK],
              RG[top, RG_DEPTH], RG[top, RG_LABEL], RG[top, RG_STACK])  # fmt: skip
        row = top
        top = RG[row, RG_PREV]
        RG[row, RG_PREV] = SC[SC_RFREE]
        SC[SC_RFREE] = row
        SC[SC_OPENREG] -= 1
    else:  # began before the trace
        first = SC[SC_FIRST] if SC[SC_FIRST] != 0 else t
        _span(SP, SC, L_REGION, g, first, t, S_REGION, g, E[i, E_TASK], 0, E[i, E_NAME], 0)
    if gs >= 0:
        G[gs, G_RTOP] = top
    else:
        SC[SC_RTOP_NONE] = top


# Without reference counting (_nrt=False: it allocates nothing): numba counts a reference to
# an array each time an inlined helper is handed one, an atomic increment and decrement per
# helper and event that cost more than the state machines' own work (a seventh of an ingest).
@njit(cache=True, nogil=True, _nrt=False)
def build_step(
    E, V, start, SC, G, P, M, T, RG, RA, SP, FL, CT, CTV, IN, gids, pids, mids, SCL
):  # pragma: no cover
    """Run the events E[start:] (V: metric values as float64); the row it stopped at.

    It stops early, before an event, when an output table might not hold what the
    event emits (SC[SC_NEED_SP]: the span rows it might need); the caller grows the
    tables and calls again from that row.
    """
    n = E.shape[0]
    for i in range(start, n):
        need = 4 + SC[SC_NPS] + SC[SC_OPENREG] + SC[SC_NRA]
        if (
            SC[SC_NSP] + need > SP.shape[0]
            or SC[SC_NFL] + 2 > FL.shape[0]
            or SC[SC_NCT] + 4 > CT.shape[0]
            or SC[SC_NIN] + 1 > IN.shape[0]
            or (SC[SC_RFREE] < 0 and SC[SC_NRG] + 1 > RG.shape[0])
            or SC[SC_NRA] + 1 > RA.shape[0]
        ):
            SC[SC_NEED_SP] = need
            return i
        kind = E[i, E_KIND]
        t = E[i, E_TIME]
        if SC[SC_HAVE_FIRST] == 0:
            SC[SC_HAVE_FIRST] = 1
            SC[SC_FIRST] = t
            SC[SC_SYNC] = t
        SC[SC_LAST] = t
        if kind == K_STATE:
            rk = E[i, E_RK]
            if rk == R_GOROUTINE:
                _g_transition(E, i, G, P, M, RG, SP, FL, CT, CTV, SC, gids, pids, mids, SCL)
            elif rk == R_PROC:
                _p_transition(E, i, G, P, M, SP, SC, gids, pids, mids)
            continue  # transitions update the thread's context themselves
        if kind == K_SYNC:
            SC[SC_SYNC] = t
            _instant(IN, SC, E, i, I_SYNC, 0, 0, NONE, 0)
        elif kind == K_RANGE_BEGIN or kind == K_RANGE_ACTIVE or kind == K_RANGE_END:
            _range(E, i, kind, P, RA, SP, SC, pids, SCL)
        elif kind == K_METRIC:
            name = E[i, E_NAME]
            _counter(CT, CTV, SC, name, t, V[i])
            if SCL[name, 0] & SCL_GOMAXPROCS:
                _instant(IN, SC, E, i, I_GOMAXPROCS, 0, 0, np.int64(V[i]), 0)
        elif kind == K_REGION_BEGIN or kind == K_REGION_END:
            _region(E, i, kind, G, RG, SP, SC)
        elif kind == K_TASK_BEGIN or kind == K_TASK_END:
            tid = E[i, E_TASK]
            ts = E[i, E_TS]
            label = E[i, E_NAME]
            if kind == K_TASK_BEGIN:
                _instant(IN, SC, E, i, I_TASK_BEGIN, label, 0, tid, E[i, E_STACK])
                if not T[ts, T_OPEN]:
                    T[ts, T_OPEN] = 1
                    T[ts, T_S] = t
                    T[ts, T_PARENT] = E[i, E_PARENT]
                    T[ts, T_LABEL] = label
                    T[ts, T_STACK] = E[i, E_STACK]
            else:
                _instant(IN, SC, E, i, I_TASK_END, label, 0, tid, E[i, E_STACK])
                if T[ts, T_OPEN]:
                    T[ts, T_OPEN] = 0
                    _span(SP, SC, L_TASK, tid, T[ts, T_S], t, S_TASK, T[ts, T_PARENT], NONE, NONE,
                          T[ts, T_LABEL], T[ts, T_STACK])  # fmt: skip
                else:  # began before the trace
                    _span(SP, SC, L_TASK, tid, SC[SC_FIRST], t, S_TASK, E[i, E_PARENT], NONE, NONE, label, 0)
        elif kind == K_LOG:
            _instant(IN, SC, E, i, I_LOG, E[i, E_MSG], E[i, E_NAME], E[i, E_TASK], E[i, E_STACK])
        elif kind == K_STACK_SAMPLE:
            _instant(IN, SC, E, i, I_STACK_SAMPLE, 0, 0, NONE, E[i, E_STACK])
        elif kind == K_LABEL:
            _instant(IN, SC, E, i, I_LABEL, E[i, E_NAME], 0, E[i, E_RID], 0)
        # The thread's context after this event.
        _m_update(G, P, M, SP, SC, gids, pids, mids, E[i, E_MS], t, E[i, E_PS], E[i, E_GS])
    return n


@njit(cache=True, nogil=True)
def lane_order(lane, start, end, order, bad):  # pragma: no cover - compiled
    """Fill ORDER with the rows grouped by LANE (dense lane ranks 0..len(BAD)-1), each lane's
    rows in their given order (a counting sort: stable, one pass to count and one to place),
    and mark in BAD each lane whose rows are not already in (START, END) order; the number of
    such lanes.

    The builder emits most lanes' spans in time order, so grouping them is all the sort it
    takes; finish() sorts the few BAD lanes' rows further."""
    nl = bad.shape[0]
    pos = np.zeros(nl + 1, np.int64)
    for i in range(lane.shape[0]):
        pos[lane[i] + 1] += 1
    for k in range(nl):
        pos[k + 1] += pos[k]
    last = np.full(nl, -1, np.int64)
    nbad = 0
    for i in range(lane.shape[0]):
        k = lane[i]
        j = last[k]
        if j >= 0 and not bad[k] and (start[i] < start[j] or (start[i] == start[j] and end[i] < end[j])):
            bad[k] = True
            nbad += 1
        last[k] = i
        order[pos[k]] = i
        pos[k] += 1
    return nbad


@njit(cache=True, nogil=True)
def group_spans(
    SP, kind, lane, start, end, state, g, p, m, label, stack, run_kind, run_lane, run_lo
):  # pragma: no cover - compiled
    """The spans SP (rows as the loop writes them) grouped by lane kind, each kind's rows by
    lane id, each lane's rows in their order (a stable sort by both keys), put into the typed
    columns KIND..STACK (their first len(SP) rows); each lane's run of rows in RUN_KIND,
    RUN_LANE and RUN_LO (its first row: a run ends where the next begins, the last at
    len(SP)); the number of runs.

    A counting sort over SP's rows in their order (three passes: each kind's lane ids' range,
    the rows of each slot, each row put in place): a slot per lane id of a kind whose ids lie
    in a narrow range (a chunk's procs, threads, the goroutines of the moment), one for a
    kind already in lane order or of ids too far apart, which is then merge sorted.  The
    columns are written once, typed, where numpy took, cast and sorted them column by column
    (a tenth of an ingest's CPU)."""
    n = SP.shape[0]
    count = np.zeros(256, np.int64)
    low = np.zeros(256, np.int64)
    high = np.zeros(256, np.int64)
    last = np.zeros(256, np.int64)
    ordered = np.ones(256, np.bool_)
    for i in range(n):
        k = SP[i, 0] & 255
        v = SP[i, 1]
        if count[k] == 0:
            low[k] = high[k] = v
        else:
            ordered[k] = ordered[k] and v >= last[k]
            low[k] = min(low[k], v)
            high[k] = max(high[k], v)
        last[k] = v
        count[k] += 1
    base = np.zeros(257, np.int64)  # each kind's first slot
    for k in range(256):
        width = high[k] - low[k]  # (a difference that overflows is negative)
        counted = count[k] > 0 and not ordered[k] and 0 <= width <= 2 * count[k] + 1024
        base[k + 1] = base[k] + (width + 1 if counted else 1)
    pos = np.zeros(base[256] + 1, np.int64)
    for i in range(n):
        k = SP[i, 0] & 255
        slot = base[k] + (SP[i, 1] - low[k] if base[k + 1] - base[k] > 1 else 0)
        pos[slot + 1] += 1
    for s in range(base[256]):
        pos[s + 1] += pos[s]
    for i in range(n):
        k = SP[i, 0] & 255
        slot = base[k] + (SP[i, 1] - low[k] if base[k + 1] - base[k] > 1 else 0)
        j = pos[slot]
        pos[slot] = j + 1
        kind[j] = SP[i, 0]
        lane[j] = SP[i, 1]
        start[j] = SP[i, 2]
        end[j] = SP[i, 3]
        state[j] = SP[i, 4]
        g[j] = SP[i, 5]
        p[j] = SP[i, 6]
        m[j] = SP[i, 7]
        label[j] = SP[i, 8]
        stack[j] = SP[i, 9]
    lo = 0
    for k in range(256):
        hi = lo + count[k]
        if count[k] > 1 and not ordered[k] and base[k + 1] - base[k] == 1:  # ids too far apart
            at = np.argsort(lane[lo:hi], kind="mergesort") + lo
            for col in (lane, start, end, g, p, m):
                col[lo:hi] = col[at]
            for col8 in (kind, state):
                col8[lo:hi] = col8[at]
            for col32 in (label, stack):
                col32[lo:hi] = col32[at]
        lo = hi
    runs = 0
    for j in range(n):
        if j == 0 or lane[j] != lane[j - 1] or kind[j] != kind[j - 1]:
            run_kind[runs] = kind[j]
            run_lane[runs] = lane[j]
            run_lo[runs] = j
            runs += 1
    return runs


@njit(cache=True, nogil=True)
def pack_events(
    E, kind, time, g, p, m, gs, ps, ms, stack, rk, rid, rs, old, new, reason, tstack, name, msg, task, parent,
    ts,
):  # pragma: no cover - compiled  # fmt: skip
    """The chunk's columns put into E's rows (E_* columns; TASK and PARENT as int64, a
    negative one, NoTask or an id above 2**63, as NONE), a row at a time: numpy filled E a
    column at a time, 21 strided passes over the matrix, more of the builder thread's time
    than its loop."""
    for i in range(E.shape[0]):
        E[i, E_KIND] = kind[i]
        E[i, E_TIME] = time[i]
        E[i, E_G] = g[i]
        E[i, E_P] = p[i]
        E[i, E_M] = m[i]
        E[i, E_GS] = gs[i]
        E[i, E_PS] = ps[i]
        E[i, E_MS] = ms[i]
        E[i, E_STACK] = stack[i]
        E[i, E_RK] = rk[i]
        E[i, E_RID] = rid[i]
        E[i, E_RS] = rs[i]
        E[i, E_OLD] = old[i]
        E[i, E_NEW] = new[i]
        E[i, E_REASON] = reason[i]
        E[i, E_TSTACK] = tstack[i]
        E[i, E_NAME] = name[i]
        E[i, E_MSG] = msg[i]
        t = task[i]
        E[i, E_TASK] = NONE if t < 0 else t
        t = parent[i]
        E[i, E_PARENT] = NONE if t < 0 else t
        E[i, E_TS] = ts[i]
