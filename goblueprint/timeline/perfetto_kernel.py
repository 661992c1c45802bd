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
block of a sequence's events: one pass sizes every packet, a second writes them.

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
def track_order(s, e, title, xts, xname, xflow_out, xflow_in, sink_row, sink_id, n_names):  # pragma: no cover
    """One track's events in order, from rows (S, E: start, end; TITLE: global name id, -1 for
    none) sorted by start, the longer first, and other instants (XTS, XNAME, XFLOW_OUT, and
    XFLOW_IN: a flow that ends there, 0 for none) in any order.  Flows SINK_ID end on the
    slices of rows SINK_ROW.  N_NAMES: how many global name ids there are.

    Returns (delta: time since the previous event, kind, iid: 1 + rank of the event's name
    among the track's distinct names (0 for none), flow_out, fin_ev and fin_id: the flows
    that end, by event then id, names: the track's distinct global name ids, sorted).
    """
    n = s.shape[0]
    nx = xts.shape[0]
    span = np.empty(n, np.int64)  # rows with a duration (a begin and an end)
    point = np.empty(n, np.int64)  # rows without (an instant)
    ns = 0
    nz = 0
    for i in range(n):
        if s[i] != e[i]:
            span[ns] = i
            ns += 1
        else:
            point[nz] = i
            nz += 1
    span = span[:ns]
    point = point[:nz]
    neg_s = -s
    neg_e = -e
    # Begins: by (start, -end); the rows come so unless the caller broke its promise.
    begins = span
    for k in range(1, ns):
        a, b = span[k - 1], span[k]
        if s[b] < s[a] or (s[b] == s[a] and e[b] > e[a]):
            begins = _stable_by(s, neg_e, span)
            break
    # Ends: by (end, -start); in row order when no slice holds another.
    ends = span
    for k in range(1, ns):
        a, b = span[k - 1], span[k]
        if e[b] < e[a] or (e[b] == e[a] and s[b] > s[a]):
            ends = _stable_by(e, neg_s, span)
            break
    points = point
    for k in range(1, nz):
        if s[point[k]] < s[point[k - 1]]:
            points = point[np.argsort(s[point], kind="mergesort")]
            break
    xs = np.arange(nx)
    for k in range(1, nx):
        if xts[k] < xts[k - 1]:
            xs = np.argsort(xts, kind="mergesort")
            break

    total = 2 * ns + nz + nx
    ts = np.empty(total, np.int64)
    kind = np.empty(total, np.uint8)
    name = np.empty(total, np.int64)
    flow_out = np.zeros(total, np.int64)
    ev_of_row = np.full(n, -1, np.int64)
    ev_of_x = np.empty(nx, np.int64)
    ib = 0
    ie = 0
    ip = 0
    ix = 0
    big = np.iinfo(np.int64).max
    for k in range(total):
        # The head of each group as (time, rank, second key); an exhausted group never wins.
        bt, bs = big, big
        if ib < ns:
            r = begins[ib]
            bt, bs = s[r], -e[r]
        et, es = big, big
        if ie < ns:
            r = ends[ie]
            et, es = e[r], -s[r]
        pt, ps = big, big
        if ip < nz:
            r = points[ip]
            pt, ps = s[r], -s[r]
        xt = big
        if ix < nx:
            xt = xts[xs[ix]]
        # Group order breaks ties: begins, ends, span instants, other instants.
        g = 0
        gt, gr, gs = bt, 1, bs
        if ie < ns and (ib >= ns or _before(et, 0, es, gt, gr, gs)):
            g, gt, gr, gs = 1, et, 0, es
        if ip < nz and ((ib >= ns and ie >= ns) or _before(pt, 1, ps, gt, gr, gs)):
            g, gt, gr, gs = 2, pt, 1, ps
        if ix < nx and ((ib >= ns and ie >= ns and ip >= nz) or _before(xt, 1, 0, gt, gr, gs)):
            g = 3
        if g == 0:
            r = begins[ib]
            ib += 1
            ts[k], kind[k], name[k] = s[r], _BEGIN, title[r]
            ev_of_row[r] = k
        elif g == 1:
            r = ends[ie]
            ie += 1
            ts[k], kind[k], name[k] = e[r], _END, -1
        elif g == 2:
            r = points[ip]
            ip += 1
            ts[k], kind[k], name[k] = s[r], _INSTANT, title[r]
            ev_of_row[r] = k
        else:
            r = xs[ix]
            ix += 1
            ts[k], kind[k], name[k] = xts[r], _INSTANT, xname[r]
            flow_out[k] = xflow_out[r]
            ev_of_x[r] = k

    # Names: iid k + 1 for the k-th smallest global id the track uses.
    used = np.zeros(n_names + 1, np.int64)
    for k in range(total):
        if name[k] >= 0:
            used[name[k]] = 1
    names_n = 0
    for g in range(n_names):
        if used[g]:
            names_n += 1
            used[g] = names_n
    names = np.empty(names_n, np.int64)
    for g in range(n_names):
        if used[g]:
            names[used[g] - 1] = g
    iid = np.zeros(total, np.int64)
    delta = np.empty(total, np.int64)
    prev = 0
    for k in range(total):
        if name[k] >= 0:
            iid[k] = used[name[k]]
        delta[k] = ts[k] - prev
        prev = ts[k]

    # Flows that end: on the rows' slices (rows of other tracks have no event here) and on instants.
    nf = 0
    for j in range(sink_row.shape[0]):
        if ev_of_row[sink_row[j]] >= 0:
            nf += 1
    for r in range(nx):
        if xflow_in[r] > 0:
            nf += 1
    fev = np.empty(nf, np.int64)
    fid = np.empty(nf, np.int64)
    f = 0
    for j in range(sink_row.shape[0]):
        k = ev_of_row[sink_row[j]]
        if k >= 0:
            fev[f], fid[f] = k, sink_id[j]
            f += 1
    for r in range(nx):
        if xflow_in[r] > 0:
            fev[f], fid[f] = ev_of_x[r], xflow_in[r]
            f += 1
    o = _stable_by(fev, fid, np.arange(nf))
    return delta, kind, iid, flow_out, fev[o], fid[o], names


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


@njit(cache=True, nogil=True, inline="always")
def _body_size(i, iid, has_value, flow_out, n_in):  # pragma: no cover - compiled
    body = 2
    if iid[i] > 0:
        body += 1 + _vsize(iid[i])
    if has_value:
        body += 10
    if flow_out[i] > 0:
        body += 10
    return body + 10 * n_in


@njit(cache=True, nogil=True)
def encode_track_events(seq, delta, kind, iid, value, flow_out, fin_ev, fin_id):  # pragma: no cover
    """Trace.packet records of TrackEvents on sequence SEQ, as ``perfetto_wire.track_events``
    describes them; VALUE: the doubles' 64 bits (int64), empty when the events have none."""
    n = delta.shape[0]
    m = fin_ev.shape[0]
    has_value = value.shape[0] > 0
    head = 1 + _vsize(seq) + 2  # sequence id and flags
    total = 0
    j = 0
    for i in range(n):
        n_in = 0
        while j < m and fin_ev[j] == i:
            n_in += 1
            j += 1
        body = _body_size(i, iid, has_value, flow_out, n_in)
        packet = 1 + _vsize(delta[i]) + head + 1 + _vsize(body) + body
        total += 1 + _vsize(packet) + packet
    buf = np.empty(total, np.uint8)
    at = 0
    j = 0
    for i in range(n):
        j0 = j
        while j < m and fin_ev[j] == i:
            j += 1
        body = _body_size(i, iid, has_value, flow_out, j - j0)
        packet = 1 + _vsize(delta[i]) + head + 1 + _vsize(body) + body
        buf[at] = _TRACE_PACKET
        at = _varint(buf, at + 1, packet)
        buf[at] = _TIMESTAMP
        at = _varint(buf, at + 1, delta[i])
        buf[at] = _SEQUENCE_ID
        at = _varint(buf, at + 1, seq)
        buf[at] = _FLAGS
        buf[at + 1] = _NEEDS_INCREMENTAL_STATE
        buf[at + 2] = _TRACK_EVENT
        at = _varint(buf, at + 3, body)
        buf[at] = _TYPE
        buf[at + 1] = kind[i]
        at += 2
        if iid[i] > 0:
            buf[at] = _NAME_IID
            at = _varint(buf, at + 1, iid[i])
        if has_value:
            at = _fixed64(buf, at, 0xE1, 0x02, value[i])  # double_counter_value = 44
        if flow_out[i] > 0:
            at = _fixed64(buf, at, 0xF9, 0x02, flow_out[i])  # flow_ids = 47
        for k in range(j0, j):
            at = _fixed64(buf, at, 0x81, 0x03, fin_id[k])  # terminating_flow_ids = 48
    return buf
