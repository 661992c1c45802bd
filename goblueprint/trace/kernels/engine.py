"""The ordering engine, compiled: Go's reader.go + order.go over one generation at a time.

One ``@njit`` call per generation decodes every event batch of that generation
into flat arrays (one contiguous run per M), then replays Go's algorithm: a
min-heap of per-M cursors keyed by the time of their next event; the earliest
M is advanced through the scheduler-state handlers (G and P sequence numbers
and statuses, the syscall/P-steal protocol, GC, ranges, tasks, regions); when
it must wait, the frontier is sorted with Go's own unstable sort and the other
Ms are tried in order; CPU samples are injected by time; every emitted event
has its stack and string IDs checked and its timestamp forced strictly
increasing.  The result is the generation's events as columns, in exactly the
order Go's ``trace.Reader`` yields them.

State that outlives a generation (goroutines, procs, threads, GC, tasks, ranges)
lives in ``EngineState``: typed dicts map IDs to slots of flat "slab" arrays;
slots keep insertion order (Go's map order is random; ours is the order the
Python port used), dead goroutine slots are compacted between generations.

Everything is int64 inside: event arguments are Go's uint64 values as int64 bit
patterns (two's-complement arithmetic and equality agree with Go's uint64), and
the Python side reinterprets them as unsigned when it prints them.  Errors leave
the compiled code as a code plus a few integers; ``messages.py`` turns them into
Go's text.  There is no Python twin of this module.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from goblueprint.trace import spec as S
from goblueprint.trace.kernels.codes import *  # noqa: F403 - the engine's constants, numba-free
from goblueprint.trace.kernels.gosort import sort_by_key

# -- small helpers -----------------------------------------------------------------


@njit(cache=True, nogil=True, inline="always")
def _ctx(m, p, g, rm, rp, rg):  # pragma: no cover - compiled
    """Go's validateCtx: 0 or the error code."""
    if rm == MUST_HAVE and m == NO_ID:
        return E_CTX_M_MUST
    if rm == MUST_NOT_HAVE and m != NO_ID:
        return E_CTX_M_NOT
    if rp == MUST_HAVE and p == NO_ID:
        return E_CTX_P_MUST
    if rp == MUST_NOT_HAVE and p != NO_ID:
        return E_CTX_P_NOT
    if rg == MUST_HAVE and g == NO_ID:
        return E_CTX_G_MUST
    if rg == MUST_NOT_HAVE and g != NO_ID:
        return E_CTX_G_NOT
    return 0


@njit(cache=True, nogil=True, inline="always")
def _has(ids, dense, x):  # pragma: no cover - compiled
    """Is x one of the sorted ids?  ``dense`` (when not empty) is the same set as a bitmap."""
    if dense.shape[0]:
        return 0 <= x < dense.shape[0] and dense[x]
    i = np.searchsorted(ids, x)
    return i < ids.shape[0] and ids[i] == x


@njit(cache=True, nogil=True, inline="always")
def _string_gid(str_ids, str_gid, dense, sid):  # pragma: no cover - compiled
    """Global string id of a generation's string id, or -1 if the generation has none."""
    if dense.shape[0]:
        if 0 <= sid < dense.shape[0]:
            return dense[sid]
        return -1
    i = np.searchsorted(str_ids, sid)
    if i < str_ids.shape[0] and str_ids[i] == sid:
        return str_gid[i]
    return -1


@njit(cache=True, nogil=True)
def _dense_ids(ids, vals):  # pragma: no cover - compiled
    """IDs (sorted) as a direct-index table id -> val (-1 = absent) when they are small
    and dense, as the runtime writes them; otherwise empty (binary search instead)."""
    n = ids.shape[0]
    if n == 0 or ids[0] < 0 or ids[n - 1] > 4 * n + 4096:
        return np.empty(0, dtype=np.int64)
    t = np.full(ids[n - 1] + 1, -1, dtype=np.int64)
    for i in range(n):
        t[ids[i]] = vals[i]
    return t


# Go's heap over batch cursors (batchcursor.go), ported exactly: the tie-breaks decide
# which of two Ms with equal timestamps goes first.


@njit(cache=True, nogil=True, inline="always")
def _sift_up(heap, ct, i):  # pragma: no cover - compiled
    while i > 0 and ct[heap[(i - 1) // 2]] > ct[heap[i]]:
        j = (i - 1) // 2
        heap[j], heap[i] = heap[i], heap[j]
        i = j
    return i


@njit(cache=True, nogil=True, inline="always")
def _sift_down(heap, n, ct, i):  # pragma: no cover - compiled
    if i >= n:
        return i
    while True:
        m = i
        t = ct[heap[i]]
        c = 2 * i + 1
        if c < n:
            tc = ct[heap[c]]
            if tc < t:
                t = tc
                m = c
            c += 1
            if c < n and ct[heap[c]] < t:
                m = c
        if m == i:
            return i
        heap[i], heap[m] = heap[m], heap[i]
        i = m


@njit(cache=True, nogil=True, inline="always")
def _heap_update(heap, n, ct, i):  # pragma: no cover - compiled
    if _sift_up(heap, ct, i) != i:
        return
    _sift_down(heap, n, ct, i)


@njit(cache=True, nogil=True, inline="always")
def _heap_remove(heap, n, ct, i):  # pragma: no cover - compiled
    """Remove heap[i]; returns the new length."""
    while i > 0:
        j = (i - 1) // 2
        heap[j], heap[i] = heap[i], heap[j]
        i = j
    heap[0], heap[n - 1] = heap[n - 1], heap[0]
    n -= 1
    _sift_down(heap, n, ct, 0)
    return n


# -- ID -> slot maps: open addressing over one (capacity, 2) int64 array ------------------
# Column 0 is the key, column 1 the slot (-1 empty, -2 deleted).  Faster than a typed
# dict for the one lookup every event does, and the array is trivially carried over.

_EMPTY, _DELETED = -1, -2


@njit(cache=True, nogil=True, inline="always")
def _hash(key, mask):  # pragma: no cover - compiled
    x = key * -7046029254386353131  # wraps: a multiplicative hash
    return (x ^ (x >> 32)) & mask


@njit(cache=True, nogil=True, inline="always")
def hget(h, key):  # pragma: no cover - compiled
    """The slot stored for key, or -1."""
    mask = h.shape[0] - 1
    i = _hash(key, mask)
    while True:
        v = h[i, 1]
        if v == _EMPTY:
            return -1
        if v >= 0 and h[i, 0] == key:
            return v
        i = (i + 1) & mask


@njit(cache=True, nogil=True, inline="always")
def hput(h, key, val):  # pragma: no cover - compiled
    """Store key -> val; returns 1 when an empty bucket was filled (the fill count grows)."""
    mask = h.shape[0] - 1
    i = _hash(key, mask)
    tomb = -1
    while True:
        v = h[i, 1]
        if v == _EMPTY:
            if tomb >= 0:
                h[tomb, 0] = key
                h[tomb, 1] = val
                return 0
            h[i, 0] = key
            h[i, 1] = val
            return 1
        if v == _DELETED:
            if tomb < 0:
                tomb = i
        elif h[i, 0] == key:
            h[i, 1] = val
            return 0
        i = (i + 1) & mask


@njit(cache=True, nogil=True, inline="always")
def hdel(h, key):  # pragma: no cover - compiled
    mask = h.shape[0] - 1
    i = _hash(key, mask)
    while True:
        v = h[i, 1]
        if v == _EMPTY:
            return
        if v >= 0 and h[i, 0] == key:
            h[i, 1] = _DELETED
            return
        i = (i + 1) & mask


@njit(cache=True, nogil=True)
def hrehash(h, extra):  # pragma: no cover - compiled
    """A fresh table with h's live entries and room for ``extra`` more at half load; (table, fill)."""
    live = 0
    for i in range(h.shape[0]):
        if h[i, 1] >= 0:
            live += 1
    cap = 16
    while cap < 4 * (live + extra + 1):
        cap *= 2
    out = np.full((cap, 2), _EMPTY, dtype=np.int64)
    for i in range(h.shape[0]):
        if h[i, 1] >= 0:
            hput(out, h[i, 0], h[i, 1])
    return out, live


# -- state ---------------------------------------------------------------------------

# Node pools (rows of an int64 array, a free list threaded through one column):
#   fl: in-flight ranges of a goroutine or proc, a doubly linked list per resource
#       (typ, desc, next, prev), head and tail in the resource's row (.._FH, .._FT);
#   rg: user regions of a goroutine, a stack (task, name, below), top in G_REG.


@njit(cache=True, nogil=True)
def _alloc(pool, sc, n_at, free_at, link):  # pragma: no cover - compiled
    f = sc[free_at]
    if f >= 0:
        sc[free_at] = pool[f, link]
        return f
    n = sc[n_at]
    sc[n_at] = n + 1
    return n


@njit(cache=True, nogil=True)
def _fl_find(fl, head, typ, desc, any_desc):  # pragma: no cover - compiled
    i = head
    while i >= 0:
        if fl[i, 0] == typ and (any_desc or fl[i, 1] == desc):
            return i
        i = fl[i, 2]
    return -1


@njit(cache=True, nogil=True)
def _fl_append(fl, sc, R, r, fh, typ, desc):  # pragma: no cover - compiled
    node = _alloc(fl, sc, SC_FL_N, SC_FL_FREE, 2)
    tail = R[r, fh + 1]
    fl[node, 0] = typ
    fl[node, 1] = desc
    fl[node, 2] = -1
    fl[node, 3] = tail
    if tail >= 0:
        fl[tail, 2] = node
    else:
        R[r, fh] = node
    R[r, fh + 1] = node


@njit(cache=True, nogil=True)
def _fl_remove(fl, sc, R, r, fh, node):  # pragma: no cover - compiled
    """Python's ``lst[i] = lst[-1]; lst.pop()``: the last range takes the removed one's place."""
    tail = R[r, fh + 1]
    if node != tail:
        fl[node, 0] = fl[tail, 0]
        fl[node, 1] = fl[tail, 1]
    prev = fl[tail, 3]
    if prev >= 0:
        fl[prev, 2] = -1
    else:
        R[r, fh] = -1
    R[r, fh + 1] = prev
    fl[tail, 2] = sc[SC_FL_FREE]
    sc[SC_FL_FREE] = tail


@njit(cache=True, nogil=True)
def _free_resource(G, gs, rg, fl, sc):  # pragma: no cover - compiled
    """A goroutine is gone: its regions and in-flight ranges go back to their pools."""
    i = G[gs, G_REG]
    while i >= 0:
        nxt = rg[i, 2]
        rg[i, 2] = sc[SC_RG_FREE]
        sc[SC_RG_FREE] = i
        i = nxt
    G[gs, G_REG] = -1
    i = G[gs, G_FH]
    while i >= 0:
        nxt = fl[i, 2]
        fl[i, 2] = sc[SC_FL_FREE]
        sc[SC_FL_FREE] = i
        i = nxt
    G[gs, G_FH] = -1
    G[gs, G_FT] = -1


@njit(cache=True, nogil=True)
def _begin_range(fl, sc, R, r, fh, typ, desc, ep):  # pragma: no cover - compiled
    if _fl_find(fl, R[r, fh], typ, desc, False) >= 0:
        ep[0] = typ
        return E_RANGE_IN_FLIGHT
    _fl_append(fl, sc, R, r, fh, typ, desc)
    return 0


@njit(cache=True, nogil=True)
def _active_range(fl, sc, R, r, fh, typ, initial, ep):  # pragma: no cover - compiled
    found = _fl_find(fl, R[r, fh], typ, 0, False) >= 0
    if initial:
        if found:
            ep[0] = typ
            ep[1] = 0
            return E_RANGE_ACTIVE_FIRST
        _fl_append(fl, sc, R, r, fh, typ, 0)
    elif not found:
        ep[0] = typ
        n = 0
        i = R[r, fh]
        while i >= 0 and n < (ep.shape[0] - 2) // 2:
            ep[2 + 2 * n] = fl[i, 0]
            ep[3 + 2 * n] = fl[i, 1]
            n += 1
            i = fl[i, 2]
        ep[1] = n
        return E_RANGE_MISSING
    return 0


@njit(cache=True, nogil=True)
def _end_range(fl, sc, R, r, fh, st, ep):  # pragma: no cover - compiled
    """(error code, desc of the ended range): the first in-flight range of type st."""
    node = _fl_find(fl, R[r, fh], st, 0, True)
    if node < 0:
        ep[0] = st
        return E_RANGE_NOT_IN_FLIGHT, np.int64(0)
    desc = fl[node, 1]
    _fl_remove(fl, sc, R, r, fh, node)
    return 0, desc


@njit(cache=True, nogil=True)
def _grow_rows(a, n):  # pragma: no cover - compiled
    b = np.empty((max(2 * a.shape[0], n), a.shape[1]), dtype=a.dtype)
    b[: a.shape[0]] = a
    return b


@njit(cache=True, nogil=True, inline="always")
def _emit(o, n, typ, ts, g, p, m, a0, a1, a2, a3):  # pragma: no cover - compiled
    # One column of the output table (rows: type, time, g, p, m, arg0..arg3).
    o[0, n] = typ
    o[1, n] = ts
    o[2, n] = g
    o[3, n] = p
    o[4, n] = m
    o[5, n] = a0
    o[6, n] = a1
    o[7, n] = a2
    o[8, n] = a3
    return n + 1


# -- decoding ------------------------------------------------------------------------

_TWO63F = float(1 << 63)
_INT64_MIN = -(1 << 63)


@njit(cache=True, nogil=True, inline="always")
def _next(buf, cs, c_time, k, bat_start, bat_end, bat_base, freq):  # pragma: no cover - compiled
    """Decode cursor k's next event into its front (cs row k, c_time[k]), as Go's
    batchCursor.nextEvent does: lazily, one event at a time, batch after batch.

    Leaves CS_LIVE 0 when the cursor is used up; a malformed event stops the cursor
    with CS_ERR set, raised when the ordering moves past the cursor's last good event.
    """
    cs[k, CS_LIVE] = 0
    nspecs = np.int64(NSPECS)
    while True:
        pos = cs[k, CS_POS]
        end = cs[k, CS_END]
        if pos >= end:
            b = cs[k, CS_B] + 1
            if b >= cs[k, CS_BEND]:
                return
            cs[k, CS_B] = b
            cs[k, CS_POS] = bat_start[b]
            cs[k, CS_END] = bat_end[b]
            cs[k, CS_LAST] = bat_base[b]
            continue
        last = cs[k, CS_LAST]
        base = bat_base[cs[k, CS_B]]
        evpos = pos
        typ = np.int64(buf[pos])
        na = NARGS[typ] if typ < nspecs else -1
        code = 0
        if typ >= nspecs or na == -1:
            code = np.int64(E_WIRE_TYPE if typ >= nspecs else E_WIRE_UNTIMED)
        else:
            pos += 1
            for i in range(na + 1):
                x = np.uint64(0)
                s = np.uint64(0)
                ok = False
                j = 0
                while j < 10:
                    if pos >= end:
                        break
                    c = buf[pos]
                    pos += 1
                    if c < 0x80:
                        if j == 9 and c > 1:
                            break
                        x |= np.uint64(c) << s
                        ok = True
                        break
                    x |= np.uint64(c & 0x7F) << s
                    s += np.uint64(7)
                    j += 1
                if not ok:
                    code = np.int64(E_WIRE_TS if i == 0 else E_WIRE_ARG)
                    break
                if i == 0:
                    if last == 0:
                        last = base
                    f = float(x) * freq
                    if -_TWO63F <= f < _TWO63F:
                        t = np.int64(f)
                    else:
                        t = np.int64(_INT64_MIN)
                    last = last + t
                else:
                    cs[k, CS_A0 + i - 1] = np.int64(x)
        if code != 0:
            # The cursor stops here: no later event or batch of it is read.
            cs[k, CS_ERR] = code
            cs[k, CS_ERR_OFF] = evpos
            cs[k, CS_ERR_TYP] = typ
            cs[k, CS_BEND] = cs[k, CS_B]
            cs[k, CS_POS] = end
            return
        for i in range(na, 4):
            cs[k, CS_A0 + i] = 0
        cs[k, CS_TYP] = typ
        cs[k, CS_OFF] = evpos
        cs[k, CS_POS] = pos
        cs[k, CS_LAST] = last
        c_time[k] = last
        cs[k, CS_LIVE] = 1
        return


# -- one generation --------------------------------------------------------------------


_ROOM = 4  # rows any one advance may add to a state table, with a margin


@njit(cache=True, nogil=True)
def run_step(
    buf,
    gen,
    freq,
    cur_m,
    cur_batches,
    bat_start,
    bat_end,
    bat_base,
    stack_ids,
    str_ids,
    str_gid,
    stk_dense,
    str_dense,
    cpu_t,
    cpu_m,
    cpu_p,
    cpu_g,
    cpu_stk,
    cs,
    c_time,
    heap,
    rs,
    cap,
    sc,
    ep,
    G,
    P,
    M,
    fl,
    rg,
    th,
    tk,
    gh,
    ph,
    mh,
):  # pragma: no cover - compiled
    """Order the next events of one generation, at most ``cap`` of them (a step).

    Returns (columns, state arrays, error info, frontier); rs[RS_STATUS] says whether
    the generation is done (or failed: error info) or the step stopped because its
    output is full.  A generation's events are never all held at once: the cursors
    decode lazily, and the state tables grow when the ordering finds them nearly
    full, here, between two advances (an array rebound inside the ordering loop
    would cost a reference-count round trip on every iteration).
    """
    o = np.empty((9, max(cap, 16)), dtype=np.int64)  # column-major: each field is contiguous
    sc[SC_NOUT] = 0
    while True:
        errinfo, front = _order(
            buf,
            cur_batches,
            bat_start,
            bat_end,
            bat_base,
            freq,
            stk_dense,
            str_dense,
            gen,
            cur_m,
            cs,
            c_time,
            heap,
            rs,
            stack_ids,
            str_ids,
            str_gid,
            cpu_t,
            cpu_m,
            cpu_p,
            cpu_g,
            cpu_stk,
            sc,
            ep,
            G,
            P,
            M,
            fl,
            rg,
            th,
            tk,
            gh,
            ph,
            mh,
            o,
        )
        if rs[RS_STATUS] != ST_ROOM:
            break
        # Room for the next advance (it adds at most one G, P, range, region and
        # task, and two Ms); the tables double, so the growth is amortized.
        if sc[SC_GN] + _ROOM > G.shape[0]:
            G = _grow_rows(G, sc[SC_GN] + _ROOM)
        if sc[SC_PN] + _ROOM > P.shape[0]:
            P = _grow_rows(P, sc[SC_PN] + _ROOM)
        if sc[SC_MN] + _ROOM > M.shape[0]:
            M = _grow_rows(M, sc[SC_MN] + _ROOM)
        if sc[SC_FL_N] + _ROOM > fl.shape[0]:
            fl = _grow_rows(fl, sc[SC_FL_N] + _ROOM)
        if sc[SC_RG_N] + _ROOM > rg.shape[0]:
            rg = _grow_rows(rg, sc[SC_RG_N] + _ROOM)
        if sc[SC_TK_N] + _ROOM > tk.shape[0]:
            tk = _grow_rows(tk, sc[SC_TK_N] + _ROOM)
        if (sc[SC_TFILL] + _ROOM) * 2 > th.shape[0]:
            th, fill = hrehash(th, _ROOM)
            sc[SC_TFILL] = fill
        if (sc[SC_GFILL] + _ROOM) * 2 > gh.shape[0]:
            gh, fill = hrehash(gh, _ROOM)
            sc[SC_GFILL] = fill
        if (sc[SC_PFILL] + _ROOM) * 2 > ph.shape[0]:
            ph, fill = hrehash(ph, _ROOM)
            sc[SC_PFILL] = fill
        if (sc[SC_MFILL] + _ROOM) * 2 > mh.shape[0]:
            mh, fill = hrehash(mh, _ROOM)
            sc[SC_MFILL] = fill
    out = o[:, : sc[SC_NOUT]]
    tables = (G, P, M, fl, rg, th, tk, gh, ph, mh)
    return out, tables, errinfo, front


@njit(cache=True, nogil=True)
def _order(
    buf,
    cur_batches,
    bat_start,
    bat_end,
    bat_base,
    freq,
    stk_dense,
    str_dense,
    gen,
    cur_m,
    cs,
    c_time,
    heap,
    rs,
    stack_ids,
    str_ids,
    str_gid,
    cpu_t,
    cpu_m,
    cpu_p,
    cpu_g,
    cpu_stk,
    sc,
    ep,
    G,
    P,
    M,
    fl,
    rg,
    th,
    tk,
    gh,
    ph,
    mh,
    o,
):  # pragma: no cover - compiled
    """The ordering loop (Go's ReadEvent + Advance), resumed where the last step
    stopped; no array is rebound in here."""
    ncur = cur_m.shape[0]
    ncpu = cpu_t.shape[0]
    nstk = stk_dense.shape[0]
    nstr = str_dense.shape[0]
    cap = o.shape[1]
    looked = np.empty(4, dtype=np.int64)  # the per-event map lookups
    n = sc[SC_NOUT]
    # Cursors: heap of cursor indices keyed by c_time; an M's state slot is found on
    # its first advance (the ordering creates thread state lazily, as Go's Advance does).
    err = np.int64(E_NONE)
    err_k = -1  # cursor at fault
    err_off = -1
    err_m = np.int64(NO_ID)
    at_start = 0
    hn = rs[RS_HN]
    if rs[RS_STARTED] == 0:
        rs[RS_STARTED] = 1
        for k in range(ncur):
            cs[k, CS_B] = cur_batches[k] - 1
            cs[k, CS_BEND] = cur_batches[k + 1]
            cs[k, CS_POS] = 0
            cs[k, CS_END] = 0
            cs[k, CS_ERR] = 0
            cs[k, CS_SLOT] = -1
            _next(buf, cs, c_time, k, bat_start, bat_end, bat_base, freq)
            if cs[k, CS_LIVE]:
                heap[hn] = k
                hn += 1
                _sift_up(heap, c_time, hn - 1)
            elif cs[k, CS_ERR] != 0:
                # The cursor fails on its very first event: before this generation's Sync.
                err = cs[k, CS_ERR]
                err_k = k
                err_off = cs[k, CS_ERR_OFF]
                err_m = cur_m[k]
                ep[0] = cs[k, CS_ERR_TYP]
                at_start = 1
                break
        if err == E_NONE and hn > 0 and sc[SC_INITIAL_GEN] == 0:
            sc[SC_INITIAL_GEN] = gen
    initial = sc[SC_INITIAL_GEN]
    last_ts = sc[SC_LAST_TS]
    gc_seq = sc[SC_GC_SEQ]
    gc_state = sc[SC_GC_STATE]
    gn = sc[SC_GN]
    pn = sc[SC_PN]
    mn = sc[SC_MN]
    gfill = sc[SC_GFILL]
    pfill = sc[SC_PFILL]
    mfill = sc[SC_MFILL]
    ci = rs[RS_CI]
    stop = np.int64(ST_DONE)  # why this step stops (not "status": the handlers use that)
    while err == E_NONE:
        # Stop for room between two advances (one emits at most three events).
        if n + 4 > cap:
            stop = np.int64(ST_FULL)
            break
        if (
            gn + _ROOM > G.shape[0]
            or pn + _ROOM > P.shape[0]
            or mn + _ROOM > M.shape[0]
            or sc[SC_FL_N] + _ROOM > fl.shape[0]
            or sc[SC_RG_N] + _ROOM > rg.shape[0]
            or sc[SC_TK_N] + _ROOM > tk.shape[0]
            or (gfill + _ROOM) * 2 > gh.shape[0]
            or (pfill + _ROOM) * 2 > ph.shape[0]
            or (mfill + _ROOM) * 2 > mh.shape[0]
            or (sc[SC_TFILL] + _ROOM) * 2 > th.shape[0]
        ):
            stop = np.int64(ST_ROOM)
            break
        # A CPU sample first, if it is due (Go checks before advancing).
        if ci < ncpu and (hn == 0 or cpu_t[ci] < c_time[heap[0]]):
            t = cpu_t[ci]
            if t <= last_ts:
                t = last_ts + 1
            last_ts = t
            n = _emit(
                o,
                n,
                S.EV_CPU_SAMPLE,
                t,
                cpu_g[ci],
                cpu_p[ci],
                cpu_m[ci],
                cpu_stk[ci],
                0,
                0,
                0,
            )
            ci += 1
            continue
        if hn == 0:
            break
        # tryAdvance(0), then (if it must wait) the others in time order.
        hi = 0
        tried_sort = False
        advanced = False
        need_room = False
        while True:
            k = heap[hi]
            typ = cs[k, CS_TYP]
            ts = c_time[k]
            a0 = cs[k, CS_A0]
            a1 = cs[k, CS_A1]
            a2 = cs[k, CS_A2]
            a3 = cs[k, CS_A3]
            m = cur_m[k]
            slot = cs[k, CS_SLOT]
            if m != NO_ID and slot < 0:
                slot = hget(mh, m)
                if slot < 0:
                    if mn >= M.shape[0] or (mfill + 1) * 2 > mh.shape[0]:
                        # Each cursor tried gets its M a row, and one advance may try every
                        # cursor (each must wait): more new Ms than the room kept for one
                        # advance.  Nothing is emitted yet: grow, then try again from the
                        # start (the rows given stay given).
                        need_room = True
                        break
                    slot = mn
                    mfill += hput(mh, m, slot)
                    M[slot, M_ID] = m
                    M[slot, M_G] = NO_ID
                    M[slot, M_P] = NO_ID
                    mn += 1
                cs[k, CS_SLOT] = slot
            if slot >= 0:
                g = M[slot, M_G]
                p = M[slot, M_P]
            else:
                g = np.int64(NO_ID)
                p = np.int64(NO_ID)
            n0 = n
            ok = True
            emit = False
            ng = g
            np_ = p
            code = 0
            # The map lookups the handlers make, done here inline: goroutines g and a0,
            # procs p and a0 (a call per lookup would cost a reference-count round trip).
            for which in range(4):
                # 0: goroutine g, 1: goroutine a0, 2: proc p, 3: proc a0 (one table
                # or the other read per access: rebinding an array costs refcounts).
                on_g = which < 2
                key = a0 if which & 1 else (g if which == 0 else p)
                mask = (gh.shape[0] if on_g else ph.shape[0]) - 1
                q = _hash(key, mask)
                found = np.int64(-1)
                while True:
                    v = gh[q, 1] if on_g else ph[q, 1]
                    if v == _EMPTY:
                        break
                    if v >= 0 and (gh[q, 0] if on_g else ph[q, 0]) == key:
                        found = v
                        break
                    q = (q + 1) & mask
                looked[which] = found
            gs_g = looked[0]
            gs_a = looked[1]
            ps_p = looked[2]
            ps_a = looked[3]

            if typ == S.EV_GO_START or typ == S.EV_GO_UNBLOCK:
                gs = gs_a
                if typ == S.EV_GO_START:
                    if (
                        gs < 0
                        or G[gs, G_ST] != S.GO_RUNNABLE
                        or not (G[gs, G_SGEN] == gen and G[gs, G_SEQ] + 1 == a1)
                    ):
                        ok = False
                    else:
                        if m == NO_ID or p == NO_ID or g != NO_ID:
                            code = _ctx(m, p, g, MUST_HAVE, MUST_HAVE, MUST_NOT_HAVE)
                        if code == 0:
                            G[gs, G_ST] = S.GO_RUNNING
                            G[gs, G_SGEN] = gen
                            G[gs, G_SEQ] = a1
                            emit = True
                            ng = a0
                else:
                    if (
                        gs < 0
                        or G[gs, G_ST] != S.GO_WAITING
                        or not (G[gs, G_SGEN] == gen and G[gs, G_SEQ] + 1 == a1)
                    ):
                        ok = False
                    else:
                        G[gs, G_ST] = S.GO_RUNNABLE
                        G[gs, G_SGEN] = gen
                        G[gs, G_SEQ] = a1
                        emit = True
            elif typ == S.EV_GO_STOP or typ == S.EV_GO_BLOCK or typ == S.EV_GO_DESTROY:
                if m == NO_ID or p == NO_ID or g == NO_ID:
                    code = _ctx(m, p, g, MUST_HAVE, MUST_HAVE, MUST_HAVE)
                if code == 0:
                    gs = gs_g
                    if gs < 0:
                        code = np.int64(E_GO_MISSING)
                        ep[0] = typ
                        ep[1] = g
                    elif G[gs, G_ST] != S.GO_RUNNING:
                        code = np.int64(E_GO_NOT_RUNNING)
                        ep[0] = typ
                    else:
                        if typ == S.EV_GO_DESTROY:
                            hdel(gh, g)
                            G[gs, G_ST] = -1
                            _free_resource(G, gs, rg, fl, sc)
                        elif typ == S.EV_GO_STOP:
                            G[gs, G_ST] = S.GO_RUNNABLE
                        else:
                            G[gs, G_ST] = S.GO_WAITING
                        emit = True
                        ng = np.int64(NO_ID)
            elif typ == S.EV_GO_CREATE or typ == S.EV_GO_CREATE_BLOCKED:
                code = _ctx(m, p, g, MUST_HAVE, MUST_HAVE, MAY_HAVE)
                if code == 0:
                    gs = gs_g
                    if gs >= 0 and G[gs, G_ST] != S.GO_RUNNING:
                        code = np.int64(E_GO_NOT_RUNNING)
                        ep[0] = typ
                    elif gs_a >= 0:
                        code = np.int64(E_GO_EXISTS)
                        ep[0] = a0
                    else:
                        gfill += hput(gh, a0, gn)
                        G[gn, G_ID] = a0
                        G[gn, G_ST] = S.GO_WAITING if typ == S.EV_GO_CREATE_BLOCKED else S.GO_RUNNABLE
                        G[gn, G_SEQ] = 0
                        G[gn, G_SGEN] = gen
                        G[gn, G_REG] = -1
                        G[gn, G_FH] = -1
                        G[gn, G_FT] = -1
                        gn += 1
                        emit = True
            elif typ == S.EV_GO_SYSCALL_BEGIN or typ == S.EV_GO_SYSCALL_END:
                if m == NO_ID or p == NO_ID or g == NO_ID:
                    code = _ctx(m, p, g, MUST_HAVE, MUST_HAVE, MUST_HAVE)
                if code == 0:
                    gs = gs_g
                    want = np.int64(S.GO_RUNNING if typ == S.EV_GO_SYSCALL_BEGIN else S.GO_SYSCALL)
                    if gs < 0:
                        code = np.int64(E_GO_MISSING)
                        ep[0] = typ
                        ep[1] = g
                    elif G[gs, G_ST] != want:
                        code = np.int64(E_GO_NOT_RUNNING)
                        ep[0] = typ
                    else:
                        G[gs, G_ST] = S.GO_SYSCALL if typ == S.EV_GO_SYSCALL_BEGIN else S.GO_RUNNING
                        ps = ps_p
                        if ps < 0:
                            code = np.int64(E_PROC_UNINIT)
                            ep[0] = p
                            ep[1] = typ
                        elif typ == S.EV_GO_SYSCALL_BEGIN:
                            P[ps, P_ST] = S.PROC_SYSCALL
                            if not (P[ps, P_SGEN] == gen and P[ps, P_SEQ] + 1 == a0):
                                code = np.int64(E_SYSCALL_SEQ)
                                ep[0] = typ
                                ep[1] = P[ps, P_SEQ]
                                ep[2] = P[ps, P_SGEN]
                                ep[3] = a0
                                ep[4] = gen
                            else:
                                P[ps, P_SGEN] = gen
                                P[ps, P_SEQ] = a0
                                emit = True
                        elif P[ps, P_ST] != S.PROC_SYSCALL:
                            code = np.int64(E_PROC_NOT_SYSCALL)
                            ep[0] = p
                            ep[1] = P[ps, P_ST]
                        else:
                            P[ps, P_ST] = S.PROC_RUNNING
                            emit = True
            elif typ == S.EV_GO_SYSCALL_END_BLOCKED:
                if p != NO_ID:
                    ps = ps_p
                    if ps < 0:
                        code = np.int64(E_PROC_UNINIT)
                        ep[0] = p
                        ep[1] = typ
                    elif P[ps, P_ST] == S.PROC_SYSCALL:
                        ok = False
                if ok and code == 0:
                    code = _ctx(m, p, g, MUST_HAVE, MAY_HAVE, MUST_HAVE)
                    if code == 0:
                        gs = gs_g
                        if gs < 0:
                            code = np.int64(E_GO_MISSING)
                            ep[0] = typ
                            ep[1] = g
                        elif G[gs, G_ST] != S.GO_SYSCALL:
                            code = np.int64(E_GO_NOT_RUNNING)
                            ep[0] = typ
                        else:
                            G[gs, G_ST] = S.GO_RUNNABLE
                            emit = True
                            ng = np.int64(NO_ID)
            elif typ == S.EV_PROC_START:
                ps = ps_a
                if (
                    ps < 0
                    or P[ps, P_ST] != S.PROC_IDLE
                    or not (P[ps, P_SGEN] == gen and P[ps, P_SEQ] + 1 == a1)
                    or p != NO_ID
                ):
                    ok = False
                else:
                    code = _ctx(m, p, g, MUST_HAVE, MUST_NOT_HAVE, MAY_HAVE)
                    if code == 0:
                        P[ps, P_ST] = S.PROC_RUNNING
                        P[ps, P_SGEN] = gen
                        P[ps, P_SEQ] = a1
                        emit = True
                        np_ = a0
            elif typ == S.EV_PROC_STOP:
                ps = ps_p
                if ps < 0:
                    code = np.int64(E_PROC_MISSING)
                    ep[0] = typ
                    ep[1] = p
                elif P[ps, P_ST] != S.PROC_RUNNING and P[ps, P_ST] != S.PROC_SYSCALL:
                    code = np.int64(E_PROC_NOT_RUNNING_OR_SYSCALL)
                    ep[0] = typ
                else:
                    code = _ctx(m, p, g, MUST_HAVE, MUST_HAVE, MAY_HAVE)
                    if code == 0:
                        P[ps, P_ST] = S.PROC_IDLE
                        emit = True
                        np_ = np.int64(NO_ID)
            elif typ == S.EV_PROC_STEAL:
                ps = ps_a
                if (
                    ps < 0
                    or (P[ps, P_ST] != S.PROC_SYSCALL and P[ps, P_ST] != S.PROC_SYSCALL_ABANDONED)
                    or not (P[ps, P_SGEN] == gen and P[ps, P_SEQ] + 1 == a1)
                ):
                    ok = False
                else:
                    code = _ctx(m, p, g, MUST_HAVE, MAY_HAVE, MAY_HAVE)
                    if code == 0:
                        old = P[ps, P_ST]
                        a3 = old
                        P[ps, P_ST] = S.PROC_IDLE
                        P[ps, P_SGEN] = gen
                        P[ps, P_SEQ] = a1
                        if old != S.PROC_SYSCALL_ABANDONED:
                            mid = a2
                            if mid == m:
                                if p != a0:
                                    code = np.int64(E_SELF_STEAL)
                                    ep[0] = a0
                                    ep[1] = mid
                                    ep[2] = p
                                else:
                                    np_ = np.int64(NO_ID)
                            else:
                                ms = hget(mh, mid)
                                if ms < 0:
                                    code = np.int64(E_STEAL_NO_THREAD)
                                    ep[0] = mid
                                elif M[ms, M_P] != a0:
                                    code = np.int64(E_STEAL_WRONG_PROC)
                                    ep[0] = a0
                                    ep[1] = mid
                                    ep[2] = M[ms, M_P]
                                else:
                                    M[ms, M_P] = NO_ID
                        if code == 0:
                            emit = True
            elif typ == S.EV_PROC_STATUS:
                pid = a0
                status = a1 & 0xFF
                if status >= 5:
                    code = np.int64(E_PROC_INVALID_STATUS)
                    ep[0] = pid
                    ep[1] = status
                else:
                    old_state = PROC_OLD_STATE[status]
                    ps = ps_a
                    if ps >= 0:
                        if status == S.PROC_SYSCALL_ABANDONED and P[ps, P_ST] == S.PROC_SYSCALL:
                            old_state = np.int64(PS_RUNNING)
                            a1 = np.int64(S.PROC_SYSCALL)
                        elif status == S.PROC_SYSCALL_ABANDONED and P[ps, P_ST] == S.PROC_SYSCALL_ABANDONED:
                            old_state = np.int64(PS_IDLE)
                            a1 = np.int64(S.PROC_SYSCALL_ABANDONED)
                        elif P[ps, P_ST] != status:
                            code = np.int64(E_PROC_INCONSISTENT)
                            ep[0] = pid
                            ep[1] = P[ps, P_ST]
                            ep[2] = status
                        if code == 0:
                            P[ps, P_SGEN] = gen
                            P[ps, P_SEQ] = 0
                    else:
                        pfill += hput(ph, pid, pn)
                        P[pn, P_ID] = pid
                        P[pn, P_ST] = status
                        P[pn, P_SEQ] = 0
                        P[pn, P_SGEN] = gen
                        pn += 1
                        P[pn - 1, P_FH] = -1
                        P[pn - 1, P_FT] = -1
                        old_state = np.int64(PS_UNDETERMINED if gen == initial else PS_NOT_EXIST)
                    if code == 0:
                        a2 = old_state
                        if status == S.PROC_RUNNING or status == S.PROC_SYSCALL:
                            np_ = pid
                        cm = m
                        cp = p
                        cg = g
                        if status == S.PROC_SYSCALL_ABANDONED and old_state == PS_RUNNING:
                            found = False
                            for j in range(mn):
                                if M[j, M_P] == pid:
                                    cm = M[j, M_ID]
                                    cp = pid
                                    cg = M[j, M_G]
                                    found = True
                            if not found:
                                code = np.int64(E_PROC_NO_CTX)
                                ep[0] = pid
                        if code == 0:
                            n = _emit(o, n, typ, ts, cg, cp, cm, a0, a1, a2, a3)
            elif typ == S.EV_GO_STATUS or typ == S.EV_GO_STATUS_STACK:
                gid = a0
                mid = a1
                status = a2 & 0xFF
                if status >= 5:
                    code = np.int64(E_GO_INVALID_STATUS)
                    ep[0] = gid
                    ep[1] = status
                else:
                    old_state = GO_OLD_STATE[status]
                    gs = gs_a
                    if gs >= 0:
                        if G[gs, G_ST] != status:
                            code = np.int64(E_GO_INCONSISTENT)
                            ep[0] = gid
                            ep[1] = G[gs, G_ST]
                            ep[2] = status
                        else:
                            G[gs, G_SGEN] = gen
                            G[gs, G_SEQ] = 0
                    elif gen == initial:
                        gfill += hput(gh, gid, gn)
                        G[gn, G_ID] = gid
                        G[gn, G_ST] = status
                        G[gn, G_SEQ] = 0
                        G[gn, G_SGEN] = gen
                        G[gn, G_REG] = -1
                        G[gn, G_FH] = -1
                        G[gn, G_FT] = -1
                        gn += 1
                        old_state = np.int64(GS_UNDETERMINED)
                    else:
                        code = np.int64(E_GO_NEW_AFTER_FIRST)
                        ep[0] = gid
                        ep[1] = status
                    if code == 0:
                        a2 = (old_state << 32) | status
                        cm = m
                        cg = g
                        if status == S.GO_RUNNING:
                            ng = gid
                        elif status == S.GO_SYSCALL:
                            if mid == NO_ID:
                                code = np.int64(E_GO_SYSCALL_NO_THREAD)
                                ep[0] = gid
                            elif mid == m:
                                if gen != initial and g != gid:
                                    code = np.int64(E_GO_SYSCALL_THREAD)
                                    ep[0] = gid
                                    ep[1] = g
                                else:
                                    ng = gid
                            else:
                                ms = hget(mh, mid)
                                if ms >= 0:
                                    if M[ms, M_G] != gid:
                                        code = np.int64(E_GO_SYSCALL_THREAD)
                                        ep[0] = gid
                                        ep[1] = M[ms, M_G]
                                    else:
                                        cg = M[ms, M_G]
                                else:
                                    mfill += hput(mh, mid, mn)
                                    M[mn, M_ID] = mid
                                    M[mn, M_G] = gid
                                    M[mn, M_P] = NO_ID
                                    mn += 1
                                cm = mid
                        if code == 0:
                            n = _emit(o, n, typ, ts, cg, p, cm, a0, a1, a2, a3)
            elif typ == S.EV_GO_SWITCH or typ == S.EV_GO_SWITCH_DESTROY:
                if m == NO_ID or p == NO_ID or g == NO_ID:
                    code = _ctx(m, p, g, MUST_HAVE, MUST_HAVE, MUST_HAVE)
                if code == 0:
                    cur = gs_g
                    if cur < 0:
                        code = np.int64(E_GO_MISSING)
                        ep[0] = typ
                        ep[1] = g
                    elif G[cur, G_ST] != S.GO_RUNNING:
                        code = np.int64(E_GO_NOT_RUNNING)
                        ep[0] = typ
                    else:
                        nx = gs_a
                        if (
                            nx < 0
                            or G[nx, G_ST] != S.GO_WAITING
                            or not (G[nx, G_SGEN] == gen and G[nx, G_SEQ] + 1 == a1)
                        ):
                            ok = False
                        else:
                            n = _emit(o, n, typ, ts, g, p, m, a0, a1, a2, a3)  # before the events it implies
                            if typ == S.EV_GO_SWITCH:
                                G[cur, G_ST] = S.GO_WAITING
                                n = _emit(
                                    o,
                                    n,
                                    S.EV_GO_BLOCK,
                                    ts,
                                    g,
                                    p,
                                    m,
                                    0,
                                    0,
                                    0,
                                    0,
                                )
                            else:
                                hdel(gh, g)
                                G[cur, G_ST] = -1
                                _free_resource(G, cur, rg, fl, sc)
                                n = _emit(
                                    o,
                                    n,
                                    S.EV_GO_DESTROY,
                                    ts,
                                    g,
                                    p,
                                    m,
                                    0,
                                    0,
                                    0,
                                    0,
                                )
                            G[nx, G_ST] = S.GO_RUNNING
                            G[nx, G_SGEN] = gen
                            G[nx, G_SEQ] = a1
                            n = _emit(
                                o,
                                n,
                                S.EV_GO_START,
                                ts,
                                NO_ID,
                                p,
                                m,
                                a0,
                                a1,
                                0,
                                0,
                            )
                            ng = a0
            elif typ == S.EV_GO_CREATE_SYSCALL:
                code = _ctx(m, p, g, MUST_HAVE, MAY_HAVE, MUST_NOT_HAVE)
                if code == 0:
                    if gs_a >= 0:
                        code = np.int64(E_GO_SYSCALL_EXISTS)
                        ep[0] = a0
                    else:
                        gfill += hput(gh, a0, gn)
                        G[gn, G_ID] = a0
                        G[gn, G_ST] = S.GO_SYSCALL
                        G[gn, G_SEQ] = 0
                        G[gn, G_SGEN] = gen
                        G[gn, G_REG] = -1
                        G[gn, G_FH] = -1
                        G[gn, G_FT] = -1
                        gn += 1
                        emit = True
                        ng = a0
            elif typ == S.EV_GO_DESTROY_SYSCALL:
                code = _ctx(m, p, g, MUST_HAVE, MAY_HAVE, MUST_HAVE)
                if code == 0:
                    gs = gs_g
                    if gs < 0:
                        code = np.int64(E_GO_MISSING)
                        ep[0] = typ
                        ep[1] = g
                    elif G[gs, G_ST] != S.GO_SYSCALL:
                        code = np.int64(E_GO_NOT_SYSCALL)
                        ep[0] = typ
                    else:
                        hdel(gh, g)
                        G[gs, G_ST] = -1
                        _free_resource(G, gs, rg, fl, sc)
                        if p != NO_ID:
                            ps = ps_p
                            if ps < 0:
                                code = np.int64(E_PROC_INVALID)
                                ep[0] = p
                                ep[1] = typ
                            elif P[ps, P_ST] != S.PROC_SYSCALL:
                                code = np.int64(E_PROC_UNEXPECTED)
                                ep[0] = p
                                ep[1] = P[ps, P_ST]
                                ep[2] = typ
                            else:
                                P[ps, P_ST] = S.PROC_SYSCALL_ABANDONED
                                np_ = np.int64(NO_ID)
                                # An extra self-ProcSteal, its extra[0] the old status.
                                n = _emit(
                                    o,
                                    n,
                                    S.EV_PROC_STEAL,
                                    ts,
                                    g,
                                    p,
                                    m,
                                    p,
                                    0,
                                    0,
                                    S.PROC_SYSCALL,
                                )
                        if code == 0:
                            emit = True
                            ng = np.int64(NO_ID)
            elif typ == S.EV_GC_SWEEP_BEGIN or typ == S.EV_GC_SWEEP_END:
                code = _ctx(m, p, g, MUST_HAVE, MUST_HAVE, MAY_HAVE)
                if code == 0:
                    ps = ps_p
                    if ps < 0:
                        code = np.int64(E_PROC_UNINIT)
                        ep[0] = p
                        ep[1] = typ
                    elif typ == S.EV_GC_SWEEP_BEGIN:
                        code = _begin_range(fl, sc, P, ps, P_FH, RANGE_START[typ], 0, ep)
                    else:
                        code, _desc = _end_range(fl, sc, P, ps, P_FH, RANGE_START[typ], ep)
                    if code == 0:
                        emit = True
            elif typ == S.EV_GC_SWEEP_ACTIVE:
                ps = ps_a
                if ps < 0:
                    code = np.int64(E_SWEEP_UNKNOWN_PROC)
                    ep[0] = a0
                else:
                    code = _active_range(fl, sc, P, ps, P_FH, RANGE_START[typ], gen == initial, ep)
                    if code == 0:
                        emit = True
            elif typ == S.EV_STW_BEGIN or typ == S.EV_GC_MARK_ASSIST_BEGIN:
                if m == NO_ID or p == NO_ID or g == NO_ID:
                    code = _ctx(m, p, g, MUST_HAVE, MUST_HAVE, MUST_HAVE)
                if code == 0:
                    gs = gs_g
                    if gs < 0:
                        code = np.int64(E_RANGE_NO_G)
                        ep[0] = typ
                        ep[1] = g
                    else:
                        desc = a0 if typ == S.EV_STW_BEGIN else np.int64(0)
                        code = _begin_range(fl, sc, G, gs, G_FH, RANGE_START[typ], desc, ep)
                    if code == 0:
                        emit = True
            elif typ == S.EV_STW_END or typ == S.EV_GC_MARK_ASSIST_END:
                if m == NO_ID or p == NO_ID or g == NO_ID:
                    code = _ctx(m, p, g, MUST_HAVE, MUST_HAVE, MUST_HAVE)
                if code == 0:
                    gs = gs_g
                    if gs < 0:
                        code = np.int64(E_RANGE_NO_G)
                        ep[0] = typ
                        ep[1] = g
                    else:
                        code, desc = _end_range(fl, sc, G, gs, G_FH, RANGE_START[typ], ep)
                        if code == 0 and typ == S.EV_STW_END:
                            a0 = desc  # the STW kind, smuggled from the begin event
                    if code == 0:
                        emit = True
            elif typ == S.EV_GC_MARK_ASSIST_ACTIVE:
                gs = gs_a
                if gs < 0:
                    code = np.int64(E_RANGE_UNINIT_G)
                    ep[0] = a0
                    ep[1] = typ
                else:
                    code = _active_range(fl, sc, G, gs, G_FH, RANGE_START[typ], gen == initial, ep)
                    if code == 0:
                        emit = True
            elif typ == S.EV_GC_BEGIN or typ == S.EV_GC_ACTIVE or typ == S.EV_GC_END:
                seq = a0
                if typ == S.EV_GC_ACTIVE and gen == initial:
                    if gc_state != GC_UNDETERMINED:
                        code = np.int64(E_GC_ACTIVE_FIRST)
                    else:
                        gc_seq = seq
                        gc_state = np.int64(GC_RUNNING)
                        emit = True
                elif typ == S.EV_GC_BEGIN and gc_state == GC_UNDETERMINED:
                    gc_seq = seq
                    gc_state = np.int64(GC_RUNNING)
                    emit = True
                elif seq != gc_seq + 1:
                    ok = False
                else:
                    if typ == S.EV_GC_ACTIVE:
                        if gc_state != GC_RUNNING:
                            code = np.int64(E_GC_ACTIVE_NOT_RUNNING)
                    elif typ == S.EV_GC_BEGIN:
                        if gc_state == GC_RUNNING:
                            code = np.int64(E_GC_BEGIN_RUNNING)
                        else:
                            gc_state = np.int64(GC_RUNNING)
                    else:
                        if gc_state == GC_NOT_RUNNING:
                            code = np.int64(E_GC_END_NOT_RUNNING)
                        elif gc_state == GC_UNDETERMINED:
                            code = np.int64(E_GC_END_UNDETERMINED)
                        else:
                            gc_state = np.int64(GC_NOT_RUNNING)
                    if code == 0:
                        gc_seq = seq
                        if m == NO_ID or p == NO_ID or g == NO_ID:
                            code = _ctx(m, p, g, MUST_HAVE, MUST_HAVE, MUST_HAVE)
                        if code == 0:
                            emit = True
            elif typ == S.EV_HEAP_ALLOC or typ == S.EV_HEAP_GOAL:
                if m == NO_ID or p == NO_ID:
                    code = _ctx(m, p, g, MUST_HAVE, MUST_HAVE, MAY_HAVE)
                if code == 0:
                    emit = True
            elif typ == S.EV_PROCS_CHANGE or typ == S.EV_GO_LABEL or typ == S.EV_USER_LOG:
                if m == NO_ID or p == NO_ID or g == NO_ID:
                    code = _ctx(m, p, g, MUST_HAVE, MUST_HAVE, MUST_HAVE)
                if code == 0:
                    emit = True
            elif typ == S.EV_USER_TASK_BEGIN:
                if hget(th, a0) >= 0:
                    code = np.int64(E_TASK_CONFLICT)
                    ep[0] = a0
                else:
                    if a1 == 0:
                        a1 = np.int64(NO_ID)  # 0 means "no parent" here, not the background task
                    name = _string_gid(str_ids, str_gid, str_dense, a2)
                    if name < 0:
                        code = np.int64(E_STRING_ID)
                        ep[0] = a2
                        ep[1] = typ
                    else:
                        trow = sc[SC_TK_N]
                        sc[SC_TK_N] = trow + 1
                        tk[trow, 0] = name
                        tk[trow, 1] = a1
                        sc[SC_TFILL] += hput(th, a0, trow)
                        if m == NO_ID or p == NO_ID or g == NO_ID:
                            code = _ctx(m, p, g, MUST_HAVE, MUST_HAVE, MUST_HAVE)
                        if code == 0:
                            emit = True
            elif typ == S.EV_USER_TASK_END:
                ts_ = hget(th, a0)
                if ts_ >= 0:
                    hdel(th, a0)
                    a2 = tk[ts_, 1]
                    a3 = tk[ts_, 0]  # a global string id: the reader turns it into an extra string
                else:
                    a2 = np.int64(NO_ID)
                    a3 = 0
                if m == NO_ID or p == NO_ID or g == NO_ID:
                    code = _ctx(m, p, g, MUST_HAVE, MUST_HAVE, MUST_HAVE)
                if code == 0:
                    emit = True
            elif typ == S.EV_USER_REGION_BEGIN or typ == S.EV_USER_REGION_END:
                if m == NO_ID or p == NO_ID or g == NO_ID:
                    code = _ctx(m, p, g, MUST_HAVE, MUST_HAVE, MUST_HAVE)
                if code == 0:
                    name = _string_gid(str_ids, str_gid, str_dense, a1)
                    if name < 0:
                        code = np.int64(E_STRING_ID)
                        ep[0] = a1
                        ep[1] = typ
                    else:
                        gs = gs_g
                        if gs < 0:
                            code = np.int64(
                                E_REGION_BEGIN_NO_G if typ == S.EV_USER_REGION_BEGIN else E_REGION_END_NO_G
                            )
                            ep[0] = g
                        elif typ == S.EV_USER_REGION_BEGIN:
                            node = _alloc(rg, sc, SC_RG_N, SC_RG_FREE, 2)
                            rg[node, 0] = a0
                            rg[node, 1] = name
                            rg[node, 2] = G[gs, G_REG]
                            G[gs, G_REG] = node
                        else:
                            top = G[gs, G_REG]
                            if top >= 0:
                                if rg[top, 0] != a0 or rg[top, 1] != name:
                                    code = np.int64(E_REGION_MISUSE)
                                    ep[0] = g
                                    ep[1] = a0
                                    ep[2] = name
                                    ep[3] = rg[top, 0]
                                    ep[4] = rg[top, 1]
                                else:
                                    G[gs, G_REG] = rg[top, 2]
                                    rg[top, 2] = sc[SC_RG_FREE]
                                    sc[SC_RG_FREE] = top
                    if code == 0:
                        emit = True
            elif S.EV_SPAN <= typ < S.MAX_EXPERIMENTAL_EVENT:
                if m == NO_ID:
                    code = _ctx(m, p, g, MUST_HAVE, MAY_HAVE, MAY_HAVE)
                if code == 0:
                    emit = True
            else:
                code = np.int64(E_BAD_TYPE)
                ep[0] = typ

            if emit:
                o[0, n] = typ
                o[1, n] = ts
                o[2, n] = g
                o[3, n] = p
                o[4, n] = m
                o[5, n] = a0
                o[6, n] = a1
                o[7, n] = a2
                o[8, n] = a3
                n += 1
            if code != 0:
                # The ordering only ever rejects the front event of the cursor it advances.
                err = code
                err_k = k
                err_off = cs[k, CS_OFF]
                err_m = m
                n = n0
                break
            if ok:
                if slot >= 0:
                    M[slot, M_G] = ng
                    M[slot, M_P] = np_
                # Move the cursor on: Go's batchCursor.nextEvent, then restore the heap.
                adv_off = cs[k, CS_OFF]
                _next(buf, cs, c_time, k, bat_start, bat_end, bat_base, freq)
                if cs[k, CS_LIVE]:
                    t = c_time[k]
                    # Usually the cursor stays the earliest: skip the sift (a no-op then).
                    if hi != 0 or (hn > 1 and c_time[heap[1]] < t) or (hn > 2 and c_time[heap[2]] < t):
                        _heap_update(heap, hn, c_time, hi)
                elif cs[k, CS_ERR] != 0:
                    # The cursor cannot decode its next event: the queued events are lost.
                    err = cs[k, CS_ERR]
                    err_k = k
                    err_off = cs[k, CS_ERR_OFF]
                    err_m = m
                    ep[0] = cs[k, CS_ERR_TYP]
                    n = n0
                    break
                else:
                    hn = _heap_remove(heap, hn, c_time, hi)
                advanced = True
                break
            # Must wait: sort the frontier (Go's unstable sort) and try the others in order.
            if not tried_sort:
                tried_sort = True
                sort_by_key(heap, hn, c_time)
            hi += 1
            if hi >= hn:
                err = np.int64(E_FAILED_TO_ADVANCE)
                err_k = heap[0]
                err_off = cs[err_k, CS_OFF]
                err_m = cur_m[err_k]
                break
        if need_room:
            stop = np.int64(ST_ROOM)
            break
        if not advanced:
            break
        # Emit what the advance queued: validateTableIDs, then strictly increasing time.
        for i in range(n0, n):
            t2 = o[0, i]
            for j in range(2):
                ai = STACK_ARGS[t2, j]
                if ai < 0:
                    continue
                x = o[5 + ai, i]
                if nstk:  # the runtime's dense IDs: a bitmap, looked up inline
                    known = 0 <= x < nstk and stk_dense[x]
                else:
                    known = _has(stack_ids, stk_dense, x)
                if not known:
                    err = np.int64(E_STACK_ID)
                    ep[0] = o[5 + ai, i]
                    ep[1] = t2
                    break
            if err == E_NONE:
                for j in range(2):
                    ai = STRING_ARGS[t2, j]
                    if ai < 0:
                        continue
                    x = o[5 + ai, i]
                    if nstr:
                        known = 0 <= x < nstr and str_dense[x] >= 0
                    else:
                        known = _string_gid(str_ids, str_gid, str_dense, x) >= 0
                    if not known:
                        err = np.int64(E_STRING_ID_TABLE)
                        ep[0] = o[5 + ai, i]
                        ep[1] = t2
                        break
            if err != E_NONE:
                err_k = k
                err_off = adv_off
                err_m = o[4, i]
                n = i
                break
            t = o[1, i]
            if t <= last_ts:
                t = last_ts + 1
                o[1, i] = t
            last_ts = t

    sc[SC_LAST_TS] = last_ts
    sc[SC_GC_SEQ] = gc_seq
    sc[SC_GC_STATE] = gc_state
    sc[SC_GN] = gn
    sc[SC_PN] = pn
    sc[SC_MN] = mn
    sc[SC_GFILL] = gfill
    sc[SC_PFILL] = pfill
    sc[SC_MFILL] = mfill
    sc[SC_NOUT] = n
    rs[RS_HN] = hn
    rs[RS_CI] = ci
    rs[RS_STATUS] = stop
    # The frontier, for the "failed to advance" message: cursor order, time, front event.
    nf = hn if err == E_FAILED_TO_ADVANCE else 0
    front = np.empty((nf, 7), dtype=np.int64)
    for i in range(nf):
        k2 = heap[i]
        front[i, 0] = cur_m[k2]
        front[i, 1] = cs[k2, CS_TYP]
        front[i, 2] = c_time[k2]
        for j in range(4):
            front[i, 3 + j] = cs[k2, CS_A0 + j]
    return (err, err_off, err_m, err_k, at_start), front


@njit(cache=True, nogil=True)
def compact_goroutines(gh, G, gn):  # pragma: no cover - compiled
    """Drop the rows of goroutines that are gone, keeping the order; returns the new count."""
    j = 0
    for i in range(gn):
        if G[i, G_ST] >= 0:
            if i != j:
                G[j] = G[i]
                hput(gh, G[j, G_ID], j)
            j += 1
    return j
