"""The levels of detail's loops (timeline.detail): merging a lane's overlapping spans of
one state, and summarising a lane's spans into runs of buckets at every level at once.

Both take spans grouped by lane (a lane's rows contiguous, lanes in any order) and work one
lane at a time with that lane's rows only, so a chunk of many lanes is one call.  The runs
loop stops before a lane whose runs might not fit in what is left of some level's output (at
most three rows per span: its full buckets, its first and its last) and returns where it
stopped; the caller grows the output and calls again from there.  There is no Python twin.
"""

from __future__ import annotations

import numpy as np
from numba import njit

FULL = 255  # fill of a bucket covered all the way (timeline.detail.FULL)


@njit(cache=True, nogil=True)
def _by_state_then_start(start, state, a, b):  # pragma: no cover - compiled
    """The rows A..B-1 (offsets from A) ordered by (state, start).  A lane of the ingested
    spans table is in start order already, so a counting sort by state (stable) is all the
    sort it takes; other input gets a full sort."""
    m = b - a
    in_order = True
    for i in range(a + 1, b):
        if start[i] < start[i - 1]:
            in_order = False
            break
    if not in_order:
        # (state, start) as one key: starts are ns since the trace start, below 2**55.
        key = np.empty(m, np.int64)
        for i in range(a, b):
            key[i - a] = (np.int64(state[i]) << 55) | start[i]
        return np.argsort(key, kind="mergesort")
    pos = np.zeros(257, np.int64)
    for i in range(a, b):
        pos[np.int64(state[i]) + 1] += 1
    for s in range(256):
        pos[s + 1] += pos[s]
    order = np.empty(m, np.int64)
    for i in range(a, b):
        s = np.int64(state[i])
        order[pos[s]] = i - a
        pos[s] += 1
    return order


@njit(cache=True, nogil=True)
def merge_spans(lane, start, end, state, out_lane, out_start, out_end, out_state):  # pragma: no cover
    """Per lane and state, spans that overlap or touch merged into one, written to OUT_* (as
    long as the input) lane by lane in the input's lane order, each lane's rows by (state,
    start); the number of rows written.  Spans with end <= start are dropped."""
    n = lane.shape[0]
    k = 0
    a = 0
    while a < n:
        b = a + 1
        while b < n and lane[b] == lane[a]:
            b += 1
        order = _by_state_then_start(start, state, a, b)
        open_ = False
        cur_state = 0
        reach = 0
        for j in range(b - a):
            i = a + order[j]
            if end[i] <= start[i]:
                continue
            if open_ and state[i] == cur_state and start[i] <= reach:
                if end[i] > reach:
                    reach = end[i]
                    out_end[k - 1] = reach
                continue
            out_lane[k] = lane[i]
            out_start[k] = start[i]
            out_end[k] = end[i]
            out_state[k] = state[i]
            k += 1
            open_ = True
            cur_state = state[i]
            reach = end[i]
        a = b
    return k


@njit(cache=True, nogil=True, inline="always")
def _put(out_lane, out_b0, out_b1, out_state, out_fill, k, k0, ln, b0, b1, st, fill):  # pragma: no cover
    """Append the run [B0, B1) to the lane whose runs start at row K0, or extend the lane's
    last run when it ends at B0 with the same state and fill; the rows out."""
    if k > k0 and out_b1[k - 1] == b0 and out_state[k - 1] == st and out_fill[k - 1] == fill:
        out_b1[k - 1] = b1
        return k
    out_lane[k] = ln
    out_b0[k] = b0
    out_b1[k] = b1
    out_state[k] = st
    out_fill[k] = fill
    return k + 1


@njit(cache=True, nogil=True)
def _emit(
    gstate, ngroups, f0, f1, fb, pbk, pcov, pb, width, ln, out_lane, out_b0, out_b1, out_state, out_fill, k
):  # pragma: no cover
    """One lane's runs at one level, appended to OUT_* from row K; the rows out.  Per state
    group g: its buckets covered whole, ranges f0[j]..f1[j] for j in fb[g]..fb[g+1]-1, and
    its partly covered buckets pbk[j] (the group's cover of it: pcov[j], a bucket maybe
    listed more than once) for j in pb[g]..pb[g+1]-1, each in bucket order.

    A bucket a span covers whole is that span's state at fill FULL (where such ranges of a
    lane overlap, the one starting first — the lower state on a tie — keeps the buckets it
    has); any other bucket a span touches takes the state covering most of it
    (ties: the lower state) and the fill of all its spans' cover, capped at the bucket.
    Adjacent buckets of a lane with one state and fill are one run; a lane's runs are in
    bucket order."""
    nf = fb[ngroups]
    # Full ranges by start (the lower state first on a tie), each clipped to where the ones
    # before it reach: disjoint.  (Not the longer first: a range's length is not known
    # until it ends, and the levels of a long lane are made a tile of time at a time.)
    cur = fb[:ngroups].copy()
    g0 = np.empty(nf, np.int64)
    g1 = np.empty(nf, np.int64)
    gs = np.empty(nf, np.uint8)
    ng = 0
    reach = np.int64(-1)
    for _ in range(nf):
        pick = -1
        for h in range(ngroups):
            j = cur[h]
            # Ties on the first bucket: the group met first (the lower state) goes first.
            if j < fb[h + 1] and (pick < 0 or f0[j] < f0[cur[pick]]):
                pick = h
        j = cur[pick]
        cur[pick] += 1
        lo = max(f0[j], reach)
        if f1[j] > lo:
            g0[ng] = lo
            g1[ng] = f1[j]
            gs[ng] = gstate[pick]
            ng += 1
        reach = max(reach, f1[j])
    # Partly covered buckets in order: per bucket the dominant state and the fill.  Buckets
    # inside a full range are that range's; the rest interleave with the ranges in order.
    cur = pb[:ngroups].copy()
    k0 = k
    gi = 0
    while True:
        bucket = np.int64(-1)
        for h in range(ngroups):
            j = cur[h]
            if j < pb[h + 1] and (bucket < 0 or pbk[j] < bucket):
                bucket = pbk[j]
        if bucket < 0:
            break
        best_state = 0
        best = np.int64(-1)
        total = np.int64(0)
        for h in range(ngroups):
            cov = np.int64(0)
            j = cur[h]
            while j < pb[h + 1] and pbk[j] == bucket:
                cov += pcov[j]
                j += 1
            if j > cur[h]:
                cur[h] = j
                total += cov
                if cov > best:
                    best = cov
                    best_state = gstate[h]
        while gi < ng and g1[gi] <= bucket:
            k = _put(out_lane, out_b0, out_b1, out_state, out_fill, k, k0, ln, g0[gi], g1[gi], gs[gi], FULL)
            gi += 1
        if gi < ng and g0[gi] <= bucket:
            continue  # inside the full range gi
        fill = (min(total, width) * FULL + width // 2) // width
        k = _put(
            out_lane, out_b0, out_b1, out_state, out_fill, k, k0, ln, bucket, bucket + 1, best_state, fill
        )
    while gi < ng:
        k = _put(out_lane, out_b0, out_b1, out_state, out_fill, k, k0, ln, g0[gi], g1[gi], gs[gi], FULL)
        gi += 1
    return k


@njit(cache=True, nogil=True, inline="always")
def _add_piece(pbk, pcov, n, first, bucket, cov):  # pragma: no cover
    """Add COV to the group's partly covered BUCKET (the group's pieces begin at row FIRST, in
    bucket order): to its last piece if that is the bucket, else as a new one; the pieces out."""
    if n > first and pbk[n - 1] == bucket:
        pcov[n - 1] += cov
        return n
    pbk[n] = bucket
    pcov[n] = cov
    return n + 1


@njit(cache=True, nogil=True)
def level_runs(
    lane, start, end, state, width0, count, row, out_lane, out_b0, out_b1, out_state, out_fill, base, kk, want
):  # pragma: no cover
    """The runs of COUNT levels that the merged spans of each lane cover (merge_spans' output:
    a lane's rows by state, each state's by start and disjoint, not touching), level v's
    buckets WIDTH0 // FANOUT**v ns wide (WIDTH0 a multiple of FANOUT**(COUNT-1)), from input
    ROW (a lane's first row) on.  Level v's runs go to OUT_*[BASE[v]:BASE[v+1]] from row
    KK[v] on, KK updated; returns the next input row, below the input's length when some
    level's room ran short for that row's lane: then WANT[v] > 0 is the room that level v
    needs for it (at most three runs per span, and one per bucket the lane's time touches).

    The finest level is made from the spans; each coarser one from the finer one's buckets
    covered whole (per span a range, the coarser range the buckets it covers whole) and
    partly covered ones (per state its cover of a bucket: the coarser bucket's is the sum
    over the finer buckets in it, whole ones included).  A coarser bucket covered whole by
    a state is covered by one span (a state's merged spans leave gaps between them), so the
    buckets and covers are those made from the spans at that level's width: the same runs."""
    n = lane.shape[0]
    finest = width0
    for _ in range(count - 1):
        finest //= 4
    a = row
    while a < n:
        b = a + 1
        while b < n and lane[b] == lane[a]:
            b += 1
        m = b - a
        ngroups = 1
        lo = start[a]
        hi = end[a]
        for i in range(a + 1, b):
            if state[i] != state[i - 1]:
                ngroups += 1
            lo = min(lo, start[i])
            hi = max(hi, end[i])
        short = False
        width = finest
        for v in range(count - 1, -1, -1):
            need = min(3 * m, (hi - 1) // width - lo // width + 1)
            if kk[v] + need > base[v + 1]:
                want[v] = need
                short = True
            width *= 4
        if short:
            return a
        gstate = np.empty(ngroups, np.int64)
        fb = np.zeros(ngroups + 1, np.int64)  # group g's full ranges: fb[g]..fb[g+1]-1
        pb = np.zeros(ngroups + 1, np.int64)  # group g's pieces: pb[g]..pb[g+1]-1
        f0 = np.empty(m, np.int64)
        f1 = np.empty(m, np.int64)
        pbk = np.empty(2 * m, np.int64)
        pcov = np.empty(2 * m, np.int64)
        nf = 0
        npc = 0
        g = -1
        width = finest
        for i in range(a, b):
            if i == a or state[i] != state[i - 1]:
                g += 1
                gstate[g] = state[i]
                fb[g] = nf
                pb[g] = npc
            s, e = start[i], end[i]
            first = s // width
            last = (e - 1) // width
            in_lo = first if s == first * width else first + 1
            in_hi = last + 1 if e == (last + 1) * width else last
            if in_hi > in_lo:
                f0[nf] = in_lo
                f1[nf] = in_hi
                nf += 1
            if not (in_lo <= first < in_hi):
                npc = _add_piece(pbk, pcov, npc, pb[g], first, min(e, (first + 1) * width) - s)
            if last > first and not (in_lo <= last < in_hi):
                npc = _add_piece(pbk, pcov, npc, pb[g], last, e - last * width)
        fb[ngroups] = nf
        pb[ngroups] = npc
        ln = lane[a]
        v = count - 1
        kk[v] = _emit(
            gstate,
            ngroups,
            f0,
            f1,
            fb,
            pbk,
            pcov,
            pb,
            width,
            ln,
            out_lane,
            out_b0,
            out_b1,
            out_state,
            out_fill,
            kk[v],
        )
        # The coarser levels: each group's pieces and ranges in bucket order (disjoint), so
        # their coarser buckets come in order too.
        c0s = np.empty(m, np.int64)
        c1s = np.empty(m, np.int64)
        cbk = np.empty(2 * m, np.int64)
        ccov = np.empty(2 * m, np.int64)
        cfb = np.zeros(ngroups + 1, np.int64)
        cpb = np.zeros(ngroups + 1, np.int64)
        for v in range(count - 2, -1, -1):
            fine = width
            width = fine * 4
            nf = 0
            npc = 0
            for g in range(ngroups):
                cfb[g] = nf
                cpb[g] = npc
                i, ie = pb[g], pb[g + 1]
                j, je = fb[g], fb[g + 1]
                while i < ie or j < je:
                    if j >= je or (i < ie and pbk[i] < f0[j]):
                        npc = _add_piece(cbk, ccov, npc, cpb[g], pbk[i] // 4, pcov[i])
                        i += 1
                        continue
                    r0, r1 = f0[j], f1[j]
                    j += 1
                    lo = (r0 + 3) // 4
                    hi = r1 // 4
                    first = r0 // 4
                    last = (r1 - 1) // 4
                    if not (lo <= first < hi):
                        npc = _add_piece(cbk, ccov, npc, cpb[g], first, fine * (min(r1, 4 * first + 4) - r0))
                    if last > first and not (lo <= last < hi):
                        npc = _add_piece(cbk, ccov, npc, cpb[g], last, fine * (r1 - 4 * last))
                    if hi > lo:
                        c0s[nf] = lo
                        c1s[nf] = hi
                        nf += 1
            cfb[ngroups] = nf
            cpb[ngroups] = npc
            f0, c0s = c0s, f0
            f1, c1s = c1s, f1
            pbk, cbk = cbk, pbk
            pcov, ccov = ccov, pcov
            fb, cfb = cfb, fb
            pb, cpb = cpb, pb
            kk[v] = _emit(
                gstate, ngroups, f0, f1, fb, pbk, pcov, pb, width, ln,
                out_lane, out_b0, out_b1, out_state, out_fill, kk[v],
            )  # fmt: skip
        a = b
    return a


@njit(cache=True, nogil=True)
def merge_tile(
    start, end, state, t1, open_on, open_start, open_reach, out_start, out_end, out_state
):  # pragma: no cover
    """merge_spans over a long lane a tile of time at a time: START, END, STATE are the lane's
    next spans in start order, all starting before T1 (the tile's end); OPEN_* (256 rows, one
    per state, carried from tile to tile) the state's merged span still open, with its true
    start.  Writes to OUT_* (len(START) + 256 rows) the tile's merged spans: those closed
    here whole, and those still open clipped to T1 (kept open for the next tile: a span
    starting at T1 may still extend them).  Returns the rows written, or -1 if the spans are
    not in start order (the tile cannot be cut then)."""
    n = start.shape[0]
    k = 0
    for i in range(n):
        if i > 0 and start[i] < start[i - 1]:
            return -1
        if end[i] <= start[i]:
            continue
        s = np.int64(state[i])
        if open_on[s] and start[i] <= open_reach[s]:
            if end[i] > open_reach[s]:
                open_reach[s] = end[i]
            continue
        if open_on[s]:
            out_start[k] = open_start[s]
            out_end[k] = open_reach[s]
            out_state[k] = state[i]
            k += 1
        open_on[s] = True
        open_start[s] = start[i]
        open_reach[s] = end[i]
    for s in range(256):
        if open_on[s]:
            out_start[k] = open_start[s]
            out_end[k] = min(open_reach[s], t1)
            out_state[k] = s
            k += 1
            if open_reach[s] < t1:  # nothing starting at T1 or later reaches back to it
                open_on[s] = False
    return k
