"""Go's MutatorUtilizationV2 (internal/trace/gc.go) as one compiled loop over the pass's columns.

Ported statement by statement from Go, quirks included (see mmu.py's docstring): per event,
the GC work each P holds is counted (stop-the-world, background mark workers, mark assists,
sweeping, as the flags select) and a utilization point is added to the P's function, or to
the single whole-program one, when it changes.  All state lives in named structured arrays
the Python side grows between calls; the loop stops before a row it might lack room for and
says so, and is called again from there.  There is no Python twin of this loop.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from goblueprint.timeline._api import (
    G_RUNNING,
    G_SYSCALL,
    K_LABEL,
    K_METRIC,
    K_RANGE_ACTIVE,
    K_RANGE_BEGIN,
    K_RANGE_END,
    K_STATE,
    K_SYNC,
    NO_GOROUTINE,
    R_GOROUTINE,
)
from goblueprint.timeline.util_codes import (
    ASSIST,
    BACKGROUND,
    NEED_ROOM,
    PER_PROC,
    S_ASSIST,
    S_BG_LABEL,
    S_DEDICATED,
    S_GOMAXPROCS,
    S_STW,
    S_SWEEP,
    STW,
    SWEEP,
)


@njit(cache=True, nogil=True, inline="always")
def _executing(state):  # pragma: no cover - compiled
    return state == G_RUNNING or state == G_SYSCALL


@njit(cache=True, nogil=True, inline="always")
def _add_util(st, points, last, s, t, u):  # pragma: no cover - compiled
    """Go's addUtil: drop a repeat, keep the lowest of changes at one timestamp."""
    j = last[s]
    if j >= 0:
        if u == points[j].util:
            return
        if t == points[j].time:
            if u < points[j].util:
                points[j].util = u
            return
    k = st.n_points
    points[k].series = s
    points[k].time = t
    points[k].util = u
    last[s] = k
    st.n_points = k + 1


@njit(cache=True, nogil=True, inline="always")
def _gc_add(st, ps, p, delta):  # pragma: no cover - compiled
    if p < 0 or p >= st.n_ps:
        # Go would index out of range (and panic); such an event carries no P to charge.
        return
    before = ps[p].gc
    after = before + delta
    ps[p].gc = after
    if (before > 0) != (after > 0):
        st.gc_ps += 1 if after > 0 else -1
        ps[p].dirty = True
        st.changed = True


@njit(cache=True, nogil=True)
def _gomaxprocs(st, ps, points, last, procs, t, n):  # pragma: no cover - compiled
    per_proc = (st.flags & PER_PROC) != 0
    if st.n_ps > n:
        for p in range(n, st.n_ps):
            if per_proc:
                _add_util(st, points, last, ps[p].series, t, 0.0)
            if ps[p].gc > 0:
                st.gc_ps -= 1
            ps[p].dirty = False
        st.n_ps = n
    while st.n_ps < n:
        series = 0
        if per_proc or st.n_series == 0:
            series = st.n_series
            st.n_series += 1
            last[series] = -1
            _add_util(st, points, last, series, t, 1.0)
        p = st.n_ps
        ps[p].gc = 0
        ps[p].series = series
        ps[p].dirty = True
        st.n_ps = p + 1
    if st.n_procs == 0 or n != procs[st.n_procs - 1].n:
        procs[st.n_procs].time = t
        procs[st.n_procs].n = n
        st.n_procs += 1
    st.changed = True


@njit(cache=True, nogil=True)
def _active_fixup(st, gs, points, procs, g, bits):  # pragma: no cover - compiled
    """A range found active at the start: it held its P since the trace began."""
    flags = st.flags
    if (flags & ASSIST) and (bits & S_ASSIST):
        if not _executing(gs[g].state):
            return  # an assist whose goroutine is not running costs its P nothing
    elif not ((flags & SWEEP) and (bits & S_SWEEP)):
        return
    if flags & PER_PROC:
        return
    # Not per P: every point is the one series'.
    mi = 0
    pi = 0
    while mi < st.n_points:
        if pi < st.n_procs - 1 and procs[pi + 1].time < points[mi].time:
            pi += 1
            continue
        u = points[mi].util - 1.0 / procs[pi].n
        points[mi].util = 0.0 if u < 0 else u
        mi += 1
    st.changed = True  # the series' last value moved


@njit(cache=True, nogil=True)
def _record(st, ps, points, last, t, stw_before):  # pragma: no cover - compiled
    st.changed = False
    if not (st.flags & PER_PROC):
        n = st.n_ps
        gc_ps = n if st.stw > 0 else st.gc_ps
        util = 1 - gc_ps / n
        _add_util(st, points, last, 0, t, util)
        st.behind = points[last[0]].util != util
        return
    stw = st.stw > 0
    if stw != (stw_before > 0):
        for p in range(st.n_ps):
            ps[p].dirty = True
    # Go adds every P's point after every event; only a P whose recorded series
    # ends on another value than its utilization can change (addUtil drops the rest).
    behind = False
    for p in range(st.n_ps):
        if not ps[p].dirty:
            continue
        util = 0.0 if stw or ps[p].gc > 0 else 1.0
        s = ps[p].series
        _add_util(st, points, last, s, t, util)
        if points[last[s]].util == util:
            ps[p].dirty = False
        else:
            behind = True
    st.behind = behind


@njit(cache=True, nogil=True)
def utilization_rows(
    kind, time, proc, rkind, rid, rslot, gslot, old, new, name, value, bits,
    state, ps, gs, points, last, procs, row, finish,
):  # fmt: skip  # pragma: no cover - compiled
    """Events ROW.. of a chunk: KIND, TIME, PROC, the resource (RKIND, RID and its goroutine slot
    RSLOT), the event's goroutine slot GSLOT, OLD/NEW states, NAME string id, metric VALUE;
    BITS[string id] says what a name means (S_*).  Returns (0, rows done) or (NEED_ROOM, row)
    when POINTS, LAST (per series), PS or PROCS could lack room for that row's additions.
    With FINISH, adds each P's closing point at the last event's time instead (no rows)."""
    st = state[0]
    flags = st.flags
    per_proc = (flags & PER_PROC) != 0
    if finish:
        if st.seen:
            for p in range(st.n_ps):
                _add_util(st, points, last, ps[p].series, st.last_time, 0.0)
        return 0, row
    cap_p = ps.shape[0]
    for i in range(row, kind.shape[0]):
        k = kind[i]
        # A row adds at most a point per P lost, per P gained and per P recorded.
        if (
            st.n_points + 3 * cap_p + 4 > points.shape[0]
            or st.n_series + cap_p + 1 > last.shape[0]
            or st.n_procs + 1 > procs.shape[0]
            or (k == K_METRIC and (bits[name[i]] & S_GOMAXPROCS) and np.int64(value[i]) > cap_p)
        ):
            return NEED_ROOM, i
        t = time[i]
        st.last_time = t
        st.seen = True
        if k == K_STATE:  # most events: kept short
            if st.n_ps == 0:
                continue
            if rkind[i] == R_GOROUTINE:
                g = rslot[i]
                if gs[g].in_gc or gs[g].bg_mark:
                    was = _executing(old[i])
                    now = _executing(new[i])
                    if not was and now:
                        _gc_add(st, ps, proc[i], 1)
                    elif was and not now:
                        _gc_add(st, ps, proc[i], -1)
                gs[g].state = new[i]
            if st.changed or st.behind:
                _record(st, ps, points, last, t, st.stw)
            continue
        if k == K_SYNC:
            st.n_sync += 1
        elif k == K_METRIC:
            if bits[name[i]] & S_GOMAXPROCS:
                _gomaxprocs(st, ps, points, last, procs, t, np.int64(value[i]))
        if st.n_ps == 0:
            # Nothing is tracked until GOMAXPROCS is known (Go skips these events too).
            continue
        stw_before = st.stw
        if k == K_RANGE_ACTIVE or k == K_RANGE_BEGIN or k == K_RANGE_END:
            b = bits[name[i]]
            delta = -1 if k == K_RANGE_END else 1
            if k == K_RANGE_ACTIVE:
                if st.n_sync > 1:
                    # After a full generation an active range is one already tracked.
                    if st.changed or st.behind:
                        _record(st, ps, points, last, t, stw_before)
                    continue
                _active_fixup(st, gs, points, procs, gslot[i], b)
            if (flags & STW) and (b & S_STW):
                st.stw += delta
            elif (flags & SWEEP) and (b & S_SWEEP):
                _gc_add(st, ps, proc[i], delta)
            elif (flags & ASSIST) and (b & S_ASSIST):
                _gc_add(st, ps, proc[i], delta)
                if rkind[i] == R_GOROUTINE and rid[i] != NO_GOROUTINE:
                    gs[rslot[i]].in_gc = delta > 0
        elif k == K_LABEL:
            b = bits[name[i]]
            # Per-P, dedicated workers do not count: they kick everything else off
            # their P, so they add no latency to any goroutine (Go's reasoning).
            if (flags & BACKGROUND) and (b & S_BG_LABEL) and not (per_proc and (b & S_DEDICATED)):
                gs[gslot[i]].bg_mark = True
                _gc_add(st, ps, proc[i], 1)
        if st.stw != stw_before:
            st.changed = True
        if st.changed or st.behind:
            _record(st, ps, points, last, t, stw_before)
    return 0, kind.shape[0]
