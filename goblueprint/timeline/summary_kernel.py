"""Go's goroutine summary (internal/trace/summary.go), compiled: one call per chunk of columns.

``summary.py`` owns the result types and turns the state below into them once, at
the end; this module holds the per-event work.  Go's maps and pointers become rows
of named structured arrays that grow (doubling) with the trace:

* ``G`` one row per goroutine summary ever made (a goroutine seen again from
  NotExist/Undetermined gets a new row; the old one stops being ``live``, as Go's
  map entry is overwritten);
* ``S`` one row per GoroutineExecStats value (a goroutine's running totals, a
  region's start snapshot, then its difference); its two maps (block time by
  reason, range time) are singly linked lists of ``E`` rows in insertion order,
  which is the order Python's dicts show them in;
* ``E`` map entries (key = string id of the pass's Interner, value), also used for a
  goroutine's pending range start times (Go's lastRangeTime);
* ``R`` user regions (a goroutine's active ones form a stack through ``below``);
* ``T`` tasks, in creation order (Go's map order is random; the Python port's was
  insertion order); ``P`` the (task, goroutine) pairs of each task's goroutine set;
* ``H`` one open-addressing hash table for every keyed lookup: (namespace, key1,
  key2) -> value, namespaces below.

Everything is int64 inside; task ids are Go's uint64 as int64 bit patterns (NoTask
is -1).  An error leaves as a status and the goroutine it is about.
"""

from __future__ import annotations

import numpy as np
from numba import njit

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
    P_IDLE,
    R_GOROUTINE,
    R_PROC,
)
from goblueprint.timeline.summary_codes import (
    BLOCK,
    ERR_UNSEEN,
    MODE_FINALIZE,
    NS_G,
    NS_PAIR,
    NS_RANGEP,
    NS_SYSG,
    NS_SYSP,
    NS_TASK,
    OK,
    RANGE,
    SC_CSEQ,
    SC_EN,
    SC_FIRST_SET,
    SC_FIRST_TS,
    SC_GN,
    SC_GSEQ,
    SC_HFILL,
    SC_LAST_TS,
    SC_PN,
    SC_RANKS,
    SC_RN,
    SC_SN,
    SC_SYNC_TS,
    SC_TN,
    SC_TSEQ,
)

# Arguments of compiled helpers go through _i: a bare constant would be typed as a literal
# and compile the helper once more per distinct value (and numba's compile time is the cost).
_i = np.int64


# -- growth ------------------------------------------------------------------------


@njit(cache=True, nogil=True)
def _grow(a, n):  # pragma: no cover - compiled
    """A with room for N rows (doubling, so appends are amortised O(1))."""
    if n <= a.shape[0]:
        return a
    b = np.zeros(max(2 * a.shape[0], n), dtype=a.dtype)
    b[: a.shape[0]] = a
    return b


# -- the hash table: rows (namespace, key1, key2, value); value -1 empty, -2 deleted --------

_EMPTY, _DELETED = -1, -2


@njit(cache=True, nogil=True)
def _slot(ns, k1, k2, mask):  # pragma: no cover - compiled
    # Multiplicative hashing; int64 products wrap, as Go's uint64 would.
    x = (k1 * -7046029254386353131) ^ (k2 * 2685821657736338717) ^ (ns << 56)
    x = x * -4658895280553007687
    return (x ^ (x >> 29)) & mask


@njit(cache=True, nogil=True)
def _find(H, ns, k1, k2):  # pragma: no cover - compiled
    """Bucket of the key, or -1."""
    mask = H.shape[0] - 1
    i = _slot(ns, k1, k2, mask)
    while True:
        v = H[i, 3]
        if v == _EMPTY:
            return -1
        if v >= 0 and H[i, 0] == ns and H[i, 1] == k1 and H[i, 2] == k2:
            return i
        i = (i + 1) & mask


@njit(cache=True, nogil=True)
def hget(H, ns, k1, k2):  # pragma: no cover - compiled
    """The value stored for the key, or -1 (values are never negative)."""
    b = _find(H, ns, k1, k2)
    return H[b, 3] if b >= 0 else -1


@njit(cache=True, nogil=True)
def hpop(H, ns, k1, k2):  # pragma: no cover - compiled
    """Remove the key; its value, or -1."""
    b = _find(H, ns, k1, k2)
    if b < 0:
        return -1
    v = H[b, 3]
    H[b, 3] = _DELETED
    return v


@njit(cache=True, nogil=True)
def _put(H, ns, k1, k2, val):  # pragma: no cover - compiled
    """Store; 1 when an empty bucket was taken (the fill count grows)."""
    mask = H.shape[0] - 1
    i = _slot(ns, k1, k2, mask)
    tomb = -1
    while True:
        v = H[i, 3]
        if v == _EMPTY:
            j = tomb if tomb >= 0 else i
            H[j, 0] = ns
            H[j, 1] = k1
            H[j, 2] = k2
            H[j, 3] = val
            return 1 if tomb < 0 else 0
        if v == _DELETED:
            if tomb < 0:
                tomb = i
        elif H[i, 0] == ns and H[i, 1] == k1 and H[i, 2] == k2:
            H[i, 3] = val
            return 0
        i = (i + 1) & mask


@njit(cache=True, nogil=True)
def hput(H, sc, ns, k1, k2, val):  # pragma: no cover - compiled
    """Store key -> val; returns the table (a bigger one once it is half full)."""
    if 2 * (sc[SC_HFILL] + 1) > H.shape[0]:
        live = 0
        for i in range(H.shape[0]):
            if H[i, 3] >= 0:
                live += 1
        cap = 64
        while cap < 4 * (live + 1):
            cap *= 2
        old = H
        H = np.full((cap, 4), _EMPTY, dtype=np.int64)
        for i in range(old.shape[0]):
            if old[i, 3] >= 0:
                _put(H, old[i, 0], old[i, 1], old[i, 2], old[i, 3])
        sc[SC_HFILL] = live
    sc[SC_HFILL] += _put(H, ns, k1, k2, val)
    return H


# -- ExecStats values: S rows whose maps are lists of E rows ----------------------------


@njit(cache=True, nogil=True)
def _new_stats(S, sc):  # pragma: no cover - compiled
    S = _grow(S, sc[SC_SN] + 1)
    s = sc[SC_SN]
    sc[SC_SN] += 1
    S[s].bh = -1
    S[s].bt = -1
    S[s].rh = -1
    S[s].rt = -1
    return S, s


@njit(cache=True, nogil=True)
def _lookup(E, head, key):  # pragma: no cover - compiled
    e = head
    while e >= 0:
        if E[e].key == key:
            return e
        e = E[e].next
    return -1


@njit(cache=True, nogil=True)
def _add(S, E, sc, s, which, key, delta):  # pragma: no cover - compiled
    """map[key] += delta in stats S[s]'s block-reason (WHICH == BLOCK) or range-time map."""
    ranges = which == RANGE
    e = _lookup(E, S[s].rh if ranges else S[s].bh, key)
    if e >= 0:
        E[e].val += delta
        return E
    E = _grow(E, sc[SC_EN] + 1)
    e = sc[SC_EN]
    sc[SC_EN] += 1
    E[e].key = key
    E[e].val = delta
    E[e].next = -1
    if ranges:
        if S[s].rt >= 0:
            E[S[s].rt].next = e
        else:
            S[s].rh = e
        S[s].rt = e
        S[s].nr += 1
    else:
        if S[s].bt >= 0:
            E[S[s].bt].next = e
        else:
            S[s].bh = e
        S[s].bt = e
        S[s].nb += 1
    return E


@njit(cache=True, nogil=True)
def _clone(S, E, sc, s):  # pragma: no cover - compiled
    """A copy of stats S[s] (its maps copied in order); (S, E, new row)."""
    S, c = _new_stats(S, sc)
    S[c].exec = S[s].exec
    S[c].sched = S[s].sched
    S[c].syscall = S[s].syscall
    S[c].sysblock = S[s].sysblock
    S[c].total = S[s].total
    e = S[s].bh
    while e >= 0:
        E = _add(S, E, sc, c, _i(BLOCK), E[e].key, E[e].val)
        e = E[e].next
    e = S[s].rh
    while e >= 0:
        E = _add(S, E, sc, c, _i(RANGE), E[e].key, E[e].val)
        e = E[e].next
    return S, E, c


@njit(cache=True, nogil=True)
def _sub(S, E, sc, a, b):  # pragma: no cover - compiled
    """Go's a.sub(b): a's keys only, minus b's value where b has one."""
    S, E, r = _clone(S, E, sc, a)
    S[r].exec -= S[b].exec
    S[r].sched -= S[b].sched
    S[r].syscall -= S[b].syscall
    S[r].sysblock -= S[b].sysblock
    S[r].total -= S[b].total
    e = S[r].bh
    while e >= 0:
        f = _lookup(E, S[b].bh, E[e].key)
        if f >= 0:
            E[e].val -= E[f].val
        e = E[e].next
    e = S[r].rh
    while e >= 0:
        f = _lookup(E, S[b].rh, E[e].key)
        if f >= 0:
            E[e].val -= E[f].val
        e = E[e].next
    return S, E, r


# -- goroutines ---------------------------------------------------------------------


@njit(cache=True, nogil=True)
def _snapshot(G, S, E, sc, g, last_ts):  # pragma: no cover - compiled
    """Go's snapshotStat: the running totals plus what is pending up to LAST_TS."""
    S, E, r = _clone(S, E, sc, G[g].stats)
    if S[G[g].stats].total == 0:
        S[r].total = last_ts - G[g].creation
    if G[g].last_start != 0:
        S[r].exec += last_ts - G[g].last_start
    if G[g].last_runnable != 0:
        S[r].sched += last_ts - G[g].last_runnable
    if G[g].last_block != 0:
        E = _add(S, E, sc, r, _i(BLOCK), G[g].last_block_reason, last_ts - G[g].last_block)
    if G[g].last_syscall != 0:
        S[r].syscall += last_ts - G[g].last_syscall
    if G[g].last_syscall_block != 0:
        S[r].sched += last_ts - G[g].last_syscall_block
    e = G[g].ph
    while e >= 0:
        E = _add(S, E, sc, r, _i(RANGE), E[e].key, last_ts - E[e].val)
        e = E[e].next
    return S, E, r


@njit(cache=True, nogil=True)
def _finalize(G, S, E, R, sc, system, g, last_ts, trigger, has_trigger):  # pragma: no cover - compiled
    """Go's GoroutineSummary.finalize (TRIGGER: the ending event's time, if HAS_TRIGGER)."""
    if has_trigger:
        G[g].end = trigger
    S, E, final = _snapshot(G, S, E, sc, g, last_ts)
    G[g].stats = final
    if not system[G[g].name]:
        # Go walks the active regions bottom to top; ours are linked top to bottom.
        n = 0
        r = G[g].top
        while r >= 0:
            n += 1
            r = R[r].below
        stack = np.empty(n, np.int64)
        r = G[g].top
        for k in range(n - 1, -1, -1):
            stack[k] = r
            r = R[r].below
        for r in stack:
            R[r].end = trigger
            R[r].has_end = has_trigger
            S, E, d = _sub(S, E, sc, final, R[r].stats)
            R[r].stats = d
            R[r].owner = g
            R[r].g_seq = sc[SC_GSEQ]
            sc[SC_GSEQ] += 1
    G[g].last_start = 0
    G[g].last_runnable = 0
    G[g].last_block = 0
    G[g].last_block_reason = 0
    G[g].last_syscall = 0
    G[g].last_syscall_block = 0
    G[g].ph = -1
    G[g].pt = -1
    G[g].np = 0
    G[g].frozen = 1
    G[g].top = -1
    return S, E


@njit(cache=True, nogil=True)
def _new_g(G, S, H, sc, gid, creation):  # pragma: no cover - compiled
    """A fresh summary for GID, replacing any earlier one (its place in Go's map kept)."""
    G = _grow(G, sc[SC_GN] + 1)
    g = sc[SC_GN]
    sc[SC_GN] += 1
    S, s = _new_stats(S, sc)
    old = hget(H, _i(NS_G), gid, _i(0))
    if old >= 0:
        G[old].live = 0
        G[g].rank = G[old].rank
    else:
        G[g].rank = sc[SC_RANKS]
        sc[SC_RANKS] += 1
    G[g].gid = gid
    G[g].live = 1
    G[g].creation = creation
    G[g].stats = s
    G[g].ph = -1
    G[g].pt = -1
    G[g].top = -1
    H = hput(H, sc, _i(NS_G), gid, _i(0), g)
    return G, S, H, g


@njit(cache=True, nogil=True)
def _pending_range(E, G, g, name):  # pragma: no cover - compiled
    """The E row of Go's g.lastRangeTime[name], or -1."""
    return _lookup(E, G[g].ph, name)


@njit(cache=True, nogil=True)
def _set_pending_range(G, E, sc, g, name, ts):  # pragma: no cover - compiled
    if G[g].frozen:
        return E
    e = _pending_range(E, G, g, name)
    if e >= 0:
        E[e].val = ts
        return E
    E = _grow(E, sc[SC_EN] + 1)
    e = sc[SC_EN]
    sc[SC_EN] += 1
    E[e].key = name
    E[e].val = ts
    E[e].next = -1
    if G[g].pt >= 0:
        E[G[g].pt].next = e
    else:
        G[g].ph = e
    G[g].pt = e
    G[g].np += 1
    return E


@njit(cache=True, nogil=True)
def _drop_pending_range(G, E, g, name):  # pragma: no cover - compiled
    prev = -1
    e = G[g].ph
    while e >= 0:
        if E[e].key == name:
            nxt = E[e].next
            if prev >= 0:
                E[prev].next = nxt
            else:
                G[g].ph = nxt
            if G[g].pt == e:
                G[g].pt = prev
            G[g].np -= 1
            return
        prev = e
        e = E[e].next


# -- regions and tasks ----------------------------------------------------------------


@njit(cache=True, nogil=True)
def _new_region(R, sc, task, name, start, has_start, stats):  # pragma: no cover - compiled
    R = _grow(R, sc[SC_RN] + 1)
    r = sc[SC_RN]
    sc[SC_RN] += 1
    R[r].task = task
    R[r].name = name
    R[r].start = start
    R[r].has_start = has_start
    R[r].stats = stats
    R[r].below = -1
    R[r].owner = -1
    R[r].g_seq = -1
    R[r].task_slot = -1
    R[r].t_seq = -1
    return R, r


@njit(cache=True, nogil=True)
def _task(T, H, sc, tid):  # pragma: no cover - compiled
    """Go's getOrAddTask: the task's row."""
    k = hget(H, _i(NS_TASK), tid, _i(0))
    if k >= 0:
        return T, H, k
    T = _grow(T, sc[SC_TN] + 1)
    k = sc[SC_TN]
    sc[SC_TN] += 1
    T[k].id = tid
    T[k].child_of = -1
    H = hput(H, sc, _i(NS_TASK), tid, _i(0), k)
    return T, H, k


@njit(cache=True, nogil=True)
def _task_goroutine(P, H, sc, k, gid):  # pragma: no cover - compiled
    """Add GID to task row K's goroutine set."""
    if hget(H, _i(NS_PAIR), k, gid) >= 0:
        return P, H
    P = _grow(P, sc[SC_PN] + 1)
    P[sc[SC_PN]].task = k
    P[sc[SC_PN]].gid = gid
    sc[SC_PN] += 1
    H = hput(H, sc, _i(NS_PAIR), k, gid, _i(1))
    return P, H


@njit(cache=True, nogil=True)
def _task_region(R, T, P, H, sc, r, gid):  # pragma: no cover - compiled
    """Append region R to its task's regions and GID to the task's goroutines."""
    T, H, k = _task(T, H, sc, R[r].task)
    R[r].task_slot = k
    R[r].t_seq = sc[SC_TSEQ]
    sc[SC_TSEQ] += 1
    P, H = _task_goroutine(P, H, sc, k, gid)
    return T, P, H


# -- the kernel ------------------------------------------------------------------------


@njit(cache=True, nogil=True)
def summary_step(
    mode, kind, time, goroutine, proc, rkind, rid, old_state, new_state, reason, tstack, name, task,
    parent_task, root_func, root_pc, system, forever, sc, G, S, E, R, T, P, H,
):  # fmt: skip  # pragma: no cover - compiled
    """Feed one chunk's rows (MODE_CHUNK), or finalize every live goroutine (MODE_FINALIZE).

    ROOT_FUNC / ROOT_PC: per interned stack, the root frame's function (an id into
    the caller's names, -1 = no frames) and PC; SYSTEM: per name id, Go's
    IsSystemGoroutine; FOREVER: the string id of the reason "forever" (-2 = none yet).
    Returns (status, value, G, S, E, R, T, P, H): the tables may have been replaced
    by bigger ones.
    """
    if mode == MODE_FINALIZE:
        for g in range(sc[SC_GN]):
            if G[g].live:
                S, E = _finalize(G, S, E, R, sc, system, g, sc[SC_LAST_TS], _i(0), _i(0))
        return OK, 0, G, S, E, R, T, P, H
    for i in range(kind.shape[0]):
        t = time[i]
        k = kind[i]
        if not sc[SC_FIRST_SET]:
            sc[SC_FIRST_SET] = 1
            sc[SC_FIRST_TS] = t
        if sc[SC_SYNC_TS] == 0:
            sc[SC_SYNC_TS] = t
        sc[SC_LAST_TS] = t
        if k == K_STATE:
            if rkind[i] == R_GOROUTINE:
                gid = rid[i]
                old = old_state[i]
                new = new_state[i]
                if old == new:
                    continue
                g = hget(H, _i(NS_G), gid, _i(0))
                if old == G_UNDETERMINED:
                    G, S, H, g = _new_g(G, S, H, sc, gid, sc[SC_SYNC_TS])
                    # The time since the sync was spent in NEW.
                    dt = t - sc[SC_SYNC_TS]
                    s = G[g].stats
                    if new == G_RUNNING:
                        S[s].exec += dt
                    elif new == G_WAITING:
                        E = _add(S, E, sc, s, _i(BLOCK), reason[i], dt)
                    elif new == G_RUNNABLE:
                        S[s].sched += dt
                    elif new == G_SYSCALL:
                        if proc[i] == NO_PROC:
                            S[s].sysblock += dt
                        else:
                            S[s].syscall += dt
                elif old == G_NOT_EXIST:
                    G, S, H, g = _new_g(G, S, H, sc, gid, t)
                    creator = hget(H, _i(NS_G), goroutine[i], _i(0))
                    if creator >= 0 and G[creator].top >= 0:
                        # A new goroutine inherits the task of its creator's innermost region.
                        S, zero = _new_stats(S, sc)
                        R, r = _new_region(R, sc, R[G[creator].top].task, _i(0), t, _i(1), zero)
                        G[g].top = r
                elif g < 0:
                    return ERR_UNSEEN, gid, G, S, E, R, T, P, H
                else:
                    s = G[g].stats
                    if old == G_RUNNING:
                        S[s].exec += t - G[g].last_start
                        G[g].last_start = 0
                    elif old == G_WAITING:
                        if G[g].last_block != 0:
                            E = _add(S, E, sc, s, _i(BLOCK), G[g].last_block_reason, t - G[g].last_block)
                            G[g].last_block = 0
                    elif old == G_RUNNABLE:
                        if G[g].last_runnable != 0:
                            S[s].sched += t - G[g].last_runnable
                            G[g].last_runnable = 0
                    elif old == G_SYSCALL and G[g].last_syscall != 0:
                        if G[g].last_syscall_block != 0:
                            S[s].sysblock += t - G[g].last_syscall_block
                            S[s].syscall += G[g].last_syscall_block - G[g].last_syscall
                        else:
                            S[s].syscall += t - G[g].last_syscall
                        G[g].last_syscall = 0
                        G[g].last_syscall_block = 0
                        p = hpop(H, _i(NS_SYSG), gid, _i(0))
                        # Go deletes syscallingP[syscallingG[id]]: a missing entry reads as P 0.
                        hpop(H, _i(NS_SYSP), p - 1 if p >= 0 else _i(0), _i(0))
                if G[g].name == 0:
                    # The root frame names the goroutine: its immutable start point.
                    st = tstack[i]
                    if root_func[st] >= 0:
                        G[g].name = root_func[st]
                        G[g].pc = root_pc[st]
                if new == G_RUNNING:
                    G[g].last_start = t
                    if G[g].start == 0:
                        G[g].start = t
                elif new == G_RUNNABLE:
                    G[g].last_runnable = t
                elif new == G_WAITING and reason[i] != forever:
                    G[g].last_block = t
                    G[g].last_block_reason = reason[i]
                elif new == G_WAITING or new == G_NOT_EXIST:
                    # Waiting "forever" is like goroutine death.
                    S, E = _finalize(G, S, E, R, sc, system, g, t, t, _i(1))
                elif new == G_SYSCALL:
                    # Stored values must not be negative: IDs (>= -1, NoProc/NoGoroutine) go in plus one.
                    H = hput(H, sc, _i(NS_SYSP), proc[i], _i(0), gid + 1)
                    H = hput(H, sc, _i(NS_SYSG), gid, _i(0), proc[i] + 1)
                    G[g].last_syscall = t
            elif rkind[i] == R_PROC:
                if old_state[i] != new_state[i] and new_state[i] == P_IDLE:
                    b = _find(H, _i(NS_SYSP), rid[i], _i(0))
                    if b >= 0:
                        gid = H[b, 3] - 1
                        H[b, 3] = _DELETED
                        g = hget(H, _i(NS_G), gid, _i(0))
                        if g >= 0:
                            G[g].last_syscall_block = t
        elif k == K_SYNC:
            sc[SC_SYNC_TS] = t
        elif k == K_RANGE_BEGIN or k == K_RANGE_ACTIVE:
            g = -1
            if rkind[i] == R_GOROUTINE:
                g = hget(H, _i(NS_G), rid[i], _i(0))
            elif rkind[i] == R_PROC:
                g = hget(H, _i(NS_G), goroutine[i], _i(0))
                if g >= 0:
                    H = hput(H, sc, _i(NS_RANGEP), rid[i], name[i], goroutine[i] + 1)
            if g < 0:
                continue
            if k == K_RANGE_ACTIVE:
                e = -1 if G[g].frozen else _pending_range(E, G, g, name[i])
                if e >= 0 and E[e].val != 0:
                    E = _add(S, E, sc, G[g].stats, _i(RANGE), name[i], sc[SC_SYNC_TS] - E[e].val)
                E = _set_pending_range(G, E, sc, g, name[i], sc[SC_SYNC_TS])
            else:
                E = _set_pending_range(G, E, sc, g, name[i], t)
        elif k == K_RANGE_END:
            g = -1
            if rkind[i] == R_GOROUTINE:
                g = hget(H, _i(NS_G), rid[i], _i(0))
            elif rkind[i] == R_PROC:
                v = hpop(H, _i(NS_RANGEP), rid[i], name[i])
                if v >= 0 and v - 1 == goroutine[i]:
                    g = hget(H, _i(NS_G), goroutine[i], _i(0))
            if g < 0:
                continue
            e = _pending_range(E, G, g, name[i])
            if e < 0 or E[e].val == 0:
                continue
            E = _add(S, E, sc, G[g].stats, _i(RANGE), name[i], t - E[e].val)
            _drop_pending_range(G, E, g, name[i])
        elif k == K_REGION_BEGIN:
            g = hget(H, _i(NS_G), goroutine[i], _i(0))
            if g < 0:
                continue
            S, E, snap = _snapshot(G, S, E, sc, g, t)
            R, r = _new_region(R, sc, task[i], name[i], t, _i(1), snap)
            R[r].below = G[g].top
            G[g].top = r
            T, P, H = _task_region(R, T, P, H, sc, r, G[g].gid)
        elif k == K_REGION_END:
            g = hget(H, _i(NS_G), goroutine[i], _i(0))
            if g < 0:
                continue
            r = G[g].top
            if r >= 0:
                G[g].top = R[r].below
            else:
                # An end without a begin: the region is made up now.
                S, zero = _new_stats(S, sc)
                R, r = _new_region(R, sc, task[i], name[i], _i(0), _i(0), zero)
                T, P, H = _task_region(R, T, P, H, sc, r, G[g].gid)
            S, E, snap = _snapshot(G, S, E, sc, g, t)
            S, E, d = _sub(S, E, sc, snap, R[r].stats)
            R[r].stats = d
            R[r].end = t
            R[r].has_end = 1
            R[r].owner = g
            R[r].g_seq = sc[SC_GSEQ]
            sc[SC_GSEQ] += 1
        elif k == K_TASK_BEGIN or k == K_TASK_END:
            T, H, tk = _task(T, H, sc, task[i])
            T[tk].name = name[i]
            P, H = _task_goroutine(P, H, sc, tk, goroutine[i])
            if k == K_TASK_BEGIN:
                T[tk].start = t
                T[tk].has_start = 1
            else:
                T[tk].end = t
                T[tk].has_end = 1
            if parent_task[i] != -1 and not T[tk].has_parent:
                T, H, pk = _task(T, H, sc, parent_task[i])
                T[tk].parent = parent_task[i]
                T[tk].has_parent = 1
                T[tk].child_of = pk
                T[tk].child_seq = sc[SC_CSEQ]
                sc[SC_CSEQ] += 1
        elif k == K_LOG:
            T, H, tk = _task(T, H, sc, task[i])
            P, H = _task_goroutine(P, H, sc, tk, goroutine[i])
            T[tk].logs += 1
    return OK, 0, G, S, E, R, T, P, H
