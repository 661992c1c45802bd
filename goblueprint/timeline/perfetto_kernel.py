"""The Perfetto export's compiled loops: a track's events put in order, then encoded as packets.

``track_order`` lays out one track's sequence from its spans (a layer of a lane, which
nests properly) and the instants beside them, in the order the export writes them:
by time, ends before begins at one instant, among begins the longer (outer) first,
among ends the later-started (inner) first, ties in the order begins, ends, span
instants, other instants and, within each, row order.  Each of those four groups is
already in order, or nearly (a layer's ends are in row order unless spans nest), so
after a stable sort of a group that is not, one merge of the four is the whole
order: no sort of all the events, no Python per event.

``encode_track_events`` writes TrackEvent packets (``perfetto_wire``'s layout) for a
block of a sequence's events in one pass; ``window_packets`` does both for a window of a
track, in one call that releases the GIL (the export runs it on its worker threads).

There is no Python twin of these loops.
"""

from __future__ import annotations

import numpy as np
from numba import njit

_BEGIN, _END, _INSTANT = 1, 2, 3  # TrackEvent.Type values
# TracePacket and TrackEvent field tags (perfetto_wire has their names and numbers).
_TRACE_PACKET = 0x0A
_TIMESTAMP = 0x40
_SEQUENCE_ID = 0x50
_TRACK_EVENT = 0x5A
_FLAGS = 0x68
_NEEDS_INCREMENTAL_STATE = 2
_TYPE = 0x48
_NAME_IID = 0x50


@njit(cache=True, nogil=True, inline="always")
def _before(t1, r1, s1, t2, r2, s2):  # pragma: no cover - compiled
    """Does key (time, rank, second key) 1 sort strictly before key 2?"""
    if t1 != t2:
        return t1 < t2
    if r1 != r2:
        return r1 < r2
    return s1 < s2


@njit(cache=True, nogil=True)
def _stable_by(first, second, rows):  # pragma: no cover - compiled
    """ROWS stably sorted by (FIRST, SECOND) of each row, as numpy's lexsort would."""
    o = rows[np.argsort(second[rows], kind="mergesort")]
    return o[np.argsort(first[o], kind="mergesort")]


@njit(cache=True, nogil=True)
def _rows(s, e, slices):  # pragma: no cover - compiled
    """The rows that are slices (SLICES) or instants (not SLICES)."""
    n = 0
    for i in range(s.shape[0]):
        n += (s[i] != e[i]) == slices
    out = np.empty(n, np.int64)
    n = 0
    for i in range(s.shape[0]):
        if (s[i] != e[i]) == slices:
            out[n] = i
            n += 1
    return out


@njit(cache=True, nogil=True, inline="always")
def _skip(s, e, i, slices):  # pragma: no cover - compiled
    """The first row from I on that is a slice (SLICES) or an instant; len(S) if none."""
    while i < s.shape[0] and (s[i] != e[i]) != slices:
        i += 1
    return i


@njit(cache=True, nogil=True)
def track_order(
    s, e, title, xts, xname, xflow_out, xflow_in, sink_row, sink_id
):  # pragma: no cover - compiled
    """One track's events in order, from rows (S, E: start, end; TITLE: interned name id, 0 for
    none) sorted by start, the longer first, and other instants (XTS, XNAME, XFLOW_OUT, and
    XFLOW_IN: a flow that ends there, 0 for none) in any order.  Flows SINK_ID end on the
    slices of rows SINK_ROW.

    Returns (delta: time since the previous event, kind, iid: name id, 0 for none, flow_out,
    fin_ev and fin_id: the flows that end, by event then id).

    Memory: the returned columns and a byte per row; a group out of order costs a
    permutation of its rows.
    """
    n = s.shape[0]
    nx = xts.shape[0]
    ns = 0
    for i in range(n):
        ns += s[i] != e[i]
    nz = n - ns
    # Each group is walked in row order, skipping the other kind of row, unless its rows
    # are out of its order: then through a permutation (PERM_*, used when *_ROWS is False).
    # Begins: by (start, -end), as the rows come unless the caller broke its promise.
    # Ends: by (end, -start), in row order when no slice holds another.  Span instants: by start.
    b_rows = e_rows = p_rows = x_rows = True
    last_b = -1
    last_p = -1
    for i in range(n):
        if s[i] != e[i]:
            if last_b >= 0:
                a = last_b
                if s[i] < s[a] or (s[i] == s[a] and e[i] > e[a]):
                    b_rows = False
                if e[i] < e[a] or (e[i] == e[a] and s[i] > s[a]):
                    e_rows = False
            last_b = i
        else:
            if last_p >= 0 and s[i] < s[last_p]:
                p_rows = False
            last_p = i
    for k in range(1, nx):
        if xts[k] < xts[k - 1]:
            x_rows = False
    none = np.zeros(0, np.int64)
    perm_b = none if b_rows else _stable_by(s, -e, _rows(s, e, True))
    perm_e = none if e_rows else _stable_by(e, -s, _rows(s, e, True))
    perm_p = none
    if not p_rows:
        p = _rows(s, e, False)
        perm_p = p[np.argsort(s[p], kind="mergesort")]
    perm_x = none if x_rows else np.argsort(xts, kind="mergesort")

    # Flows ending on rows: found by row as the rows' events are placed.
    m = sink_row.shape[0]
    sink_by_row = np.argsort(sink_row, kind="mergesort")
    sink_rows = sink_row[sink_by_row]
    is_sink = np.zeros(n, np.bool_)
    for j in range(m):
        is_sink[sink_row[j]] = True
    sink_ev = np.full(m, -1, np.int64)
    x_ev = np.empty(nx, np.int64)

    total = 2 * ns + nz + nx
    delta = np.empty(total, np.int64)
    kind = np.empty(total, np.uint8)
    iid = np.zeros(total, np.int64)
    flow_out = np.zeros(total, np.int64)
    # Each group's next event: a row, or an index into the group's permutation.
    ib = _skip(s, e, 0, True) if b_rows else 0
    ie = _skip(s, e, 0, True) if e_rows else 0
    ip = _skip(s, e, 0, False) if p_rows else 0
    ix = 0
    kb = ke = kp = 0  # events taken from each group
    prev = 0
    for k in range(total):
        # The head of each group as (time, rank, second key); ties go to the earlier group.
        g = -1
        gt = gr = gs = 0
        if kb < ns:
            r = ib if b_rows else perm_b[ib]
            g, gt, gr, gs = 0, s[r], 1, -e[r]
        if ke < ns:
            r = ie if e_rows else perm_e[ie]
            if g < 0 or _before(e[r], 0, -s[r], gt, gr, gs):
                g, gt, gr, gs = 1, e[r], 0, -s[r]
        if kp < nz:
            r = ip if p_rows else perm_p[ip]
            if g < 0 or _before(s[r], 1, -s[r], gt, gr, gs):
                g, gt, gr, gs = 2, s[r], 1, -s[r]
        if ix < nx:
            r = ix if x_rows else perm_x[ix]
            if g < 0 or _before(xts[r], 1, 0, gt, gr, gs):
                g, gt = 3, xts[r]
        row = -1
        if g == 0:
            row = ib if b_rows else perm_b[ib]
            kb += 1
            ib = _skip(s, e, ib + 1, True) if b_rows else ib + 1
            kind[k] = _BEGIN
        elif g == 1:
            ie = _skip(s, e, ie + 1, True) if e_rows else ie + 1
            ke += 1
            kind[k] = _END
        elif g == 2:
            row = ip if p_rows else perm_p[ip]
            kp += 1
            ip = _skip(s, e, ip + 1, False) if p_rows else ip + 1
            kind[k] = _INSTANT
        else:
            r = ix if x_rows else perm_x[ix]
            ix += 1
            kind[k] = _INSTANT
            iid[k] = xname[r]
            flow_out[k] = xflow_out[r]
            x_ev[r] = k
        if row >= 0:
            iid[k] = title[row]
            if is_sink[row]:
                j = np.searchsorted(sink_rows, row)
                while j < m and sink_rows[j] == row:
                    sink_ev[sink_by_row[j]] = k
                    j += 1
        delta[k] = gt - prev
        prev = gt

    # Flows that end: on the rows' slices and span instants, and on other instants.
    nf = m
    for r in range(nx):
        if xflow_in[r] > 0:
            nf += 1
    fev = np.empty(nf, np.int64)
    fid = np.empty(nf, np.int64)
    for j in range(m):
        fev[j], fid[j] = sink_ev[j], sink_id[j]
    f = m
    for r in range(nx):
        if xflow_in[r] > 0:
            fev[f], fid[f] = x_ev[r], xflow_in[r]
            f += 1
    o = _stable_by(fev, fid, np.arange(nf))
    return delta, kind, iid, flow_out, fev[o], fid[o]


@njit(cache=True, nogil=True, inline="always")
def _vsize(v):  # pragma: no cover - compiled
    """Bytes of the varint of V (>= 0)."""
    n = 1
    while v >= 128:
        v >>= 7
        n += 1
    return n


@njit(cache=True, nogil=True, inline="always")
def _varint(buf, at, v):  # pragma: no cover - compiled
    while v >= 128:
        buf[at] = (v & 0x7F) | 0x80
        v >>= 7
        at += 1
    buf[at] = v
    return at + 1


@njit(cache=True, nogil=True, inline="always")
def _fixed64(buf, at, t0, t1, v):  # pragma: no cover - compiled
    """A two-byte tag (T0, T1) and V's 64 bits, little-endian (protobuf's fixed64)."""
    buf[at] = t0
    buf[at + 1] = t1
    for k in range(8):
        buf[at + 2 + k] = (v >> (8 * k)) & 0xFF
    return at + 10


@njit(cache=True, nogil=True)
def encode_track_events(seq, delta, kind, iid, value, flow_out, fin_ev, fin_id):  # pragma: no cover
    """Trace.packet records of TrackEvents on sequence SEQ, as ``perfetto_wire.track_events``
    describes them; VALUE: the doubles' 64 bits (int64), empty when the events have none.

    One pass into a buffer sized for the widest packet this block can have, from its largest
    delta and iid (a pass that sized each packet cost as much as the one that writes them).
    """
    n = delta.shape[0]
    m = fin_ev.shape[0]
    has_value = value.shape[0] > 0
    head = 1 + _vsize(seq) + 2  # sequence id and flags
    top_delta = 0
    top_iid = 0
    outs = 0
    for i in range(n):
        top_delta = max(top_delta, delta[i])
        top_iid = max(top_iid, iid[i])
        outs += flow_out[i] > 0
    # Every optional field but the flows, then 10 bytes a flow (out or ending); the lengths' varints
    # sized for a packet that holds all the block's flows.
    body = 2 + 1 + _vsize(top_iid) + 10 * has_value
    flows = 10 * (outs + m)
    packet = 1 + _vsize(top_delta) + head + 1 + _vsize(body + flows) + body
    buf = np.empty(n * (1 + _vsize(packet + flows) + packet) + flows, np.uint8)
    at = 0
    j = 0
    for i in range(n):
        j0 = j
        while j < m and fin_ev[j] == i:
            j += 1
        name = iid[i]
        body = 2 + 10 * (j - j0)
        if name > 0:
            body += 1 + _vsize(name)
        if has_value:
            body += 10
        if flow_out[i] > 0:
            body += 10
        d = delta[i]
        packet = 1 + _vsize(d) + head + 1 + _vsize(body) + body
        buf[at] = _TRACE_PACKET
        at = _varint(buf, at + 1, packet)
        buf[at] = _TIMESTAMP
        at = _varint(buf, at + 1, d)
        buf[at] = _SEQUENCE_ID
        at = _varint(buf, at + 1, seq)
        buf[at] = _FLAGS
        buf[at + 1] = _NEEDS_INCREMENTAL_STATE
        buf[at + 2] = _TRACK_EVENT
        at = _varint(buf, at + 3, body)
        buf[at] = _TYPE
        buf[at + 1] = kind[i]
        at += 2
        if name > 0:
            buf[at] = _NAME_IID
            at = _varint(buf, at + 1, name)
        if has_value:
            at = _fixed64(buf, at, 0xE1, 0x02, value[i])  # double_counter_value = 44
        if flow_out[i] > 0:
            at = _fixed64(buf, at, 0xF9, 0x02, flow_out[i])  # flow_ids = 47
        for k in range(j0, j):
            at = _fixed64(buf, at, 0x81, 0x03, fin_id[k])  # terminating_flow_ids = 48
    return buf[:at]


@njit(cache=True, nogil=True)
def window_packets(
    seq, prev, s, e, title, xts, xname, xflow_out, xflow_in, sink_row, sink_id
):  # pragma: no cover - compiled
    """The packets of a window of a track's sequence: ``track_order`` of its rows and instants,
    then ``encode_track_events``, the first timestamp a delta from PREV (the sequence's clock,
    at its previous event)."""
    delta, kind, iid, flow_out, fin_ev, fin_id = track_order(
        s, e, title, xts, xname, xflow_out, xflow_in, sink_row, sink_id
    )
    if delta.shape[0]:
        delta[0] -= prev
    return encode_track_events(seq, delta, kind, iid, np.zeros(0, np.int64), flow_out, fin_ev, fin_id)


@njit(cache=True, nogil=True)
def dense_codes(keys):  # pragma: no cover - compiled
    """Each of KEYS as the index of its value among the distinct values, numbered in order of
    first appearance, and those values: by hashing (a table that grows with the distinct
    values, which are few), without sorting KEYS."""
    n = keys.shape[0]
    codes = np.empty(n, np.int64)
    uniq = np.empty(16, np.int64)
    count = 0
    cap = 64
    shift = 58  # 64 - log2(cap): the product's top bits are the slot (Fibonacci hashing)
    table = np.full(cap, -1, np.int64)  # a slot: the code of the value there, -1 when free
    for i in range(n):
        k = keys[i]
        if i and k == keys[i - 1]:  # runs of one value are common: no lookup
            codes[i] = codes[i - 1]
            continue
        slot = ((k * -7046029254386353131) >> shift) & (cap - 1)
        while table[slot] >= 0 and uniq[table[slot]] != k:
            slot = (slot + 1) & (cap - 1)
        if table[slot] < 0:
            if count == uniq.shape[0]:
                grown = np.empty(2 * count, np.int64)
                grown[:count] = uniq
                uniq = grown
            uniq[count] = k
            table[slot] = count
            count += 1
            if 2 * count > cap:  # keep it at most half full: rehash into twice the slots
                cap *= 2
                shift -= 1
                table = np.full(cap, -1, np.int64)
                for c in range(count):
                    s = ((uniq[c] * -7046029254386353131) >> shift) & (cap - 1)
                    while table[s] >= 0:
                        s = (s + 1) & (cap - 1)
                    table[s] = c
            codes[i] = count - 1
        else:
            codes[i] = table[slot]
    return codes, uniq[:count].copy()
