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
    """ROWS stably sorted by (FIRST, SECOND) of each row, as numpy's lexsort would: ROWS itself
    when they are in that order already, the common case (a window's flows that end, by event;
    the sinks' rows), which the two merge sorts took half of a busy window's time to find."""
    for k in range(1, rows.shape[0]):
        a, b = rows[k - 1], rows[k]
        if first[b] < first[a] or (first[b] == first[a] and second[b] < second[a]):
            o = rows[np.argsort(second[rows], kind="mergesort")]
            return o[np.argsort(first[o], kind="mergesort")]
    return rows


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
    sink_by_row = _stable_by(sink_row, sink_row, np.arange(m))
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


@njit(cache=True, nogil=True)
def title_codes(kind, g, label, state, state_index, pm_kinds, g_kind):  # pragma: no cover - compiled
    """``render.lanes.title_keys`` of spans (KIND, G, LABEL, STATE: their columns; STATE_INDEX:
    ``state_names``' map of a state code; PM_KINDS: the lane kinds named after the G they run,
    G_KIND: the goroutines'), grouped as ``dense_codes`` groups them: each row's code and the
    distinct keys.  One pass and no temporary column per step: the export titles every span."""
    n = kind.shape[0]
    keys = np.empty(n, np.int64)
    low = (1 << 52) - 1
    for i in range(n):
        k = kind[i]
        on_pm = False
        for j in range(pm_kinds.shape[0]):
            on_pm |= k == pm_kinds[j]
        if on_pm and g[i] >= 0:
            form, value = 2, g[i]
        else:
            form, value = 1 if k == g_kind else 0, np.int64(label[i])
        keys[i] = (np.int64(form) << 60) | (np.int64(state_index[state[i]]) << 52) | (value & low)
    return dense_codes(keys)


@njit(cache=True, nogil=True)
def counter_deltas(name, time, value, origin, last):  # pragma: no cover - compiled
    """A batch of counter samples (NAME: string id, TIME, VALUE) grouped by name, ascending, each
    name's in batch order: the names, where each one's samples begin (len + 1 offsets), their
    times as deltas from the name's previous sample (LAST[name], since ORIGIN; updated) and their
    values.  The last item is the first name (ascending) whose samples go back in time, -1 if none.
    One pass to count, one to place: no sort, no per-name mask.  The counts span the names up to
    the batch's largest (the counters' come first among the strings), not every string."""
    n = name.shape[0]
    top = 0
    for i in range(n):
        top = max(top, name[i] + 1)
    count = np.zeros(top + 1, np.int64)
    for i in range(n):
        count[name[i] + 1] += 1
    used = 0
    for c in range(top):
        used += count[c + 1] > 0
    ids = np.empty(used, np.int64)
    off = np.zeros(used + 1, np.int64)
    used = 0
    for c in range(top):
        if count[c + 1] > 0:
            ids[used] = c
            off[used + 1] = off[used] + count[c + 1]
            used += 1
    at = np.zeros(top, np.int64)  # each name's next place
    for u in range(used):
        at[ids[u]] = off[u]
    delta = np.empty(n, np.int64)
    values = np.empty(n, np.float64)
    for i in range(n):
        c = name[i]
        t = time[i] - origin
        delta[at[c]] = t - last[c]
        values[at[c]] = value[i]
        last[c] = t
        at[c] += 1
    bad = -1
    for u in range(used):
        for j in range(off[u], off[u + 1]):
            if delta[j] < 0:
                bad = ids[u]
                break
        if bad >= 0:
            break
    return ids, off, delta, values, bad


# The clock snapshot every sequence's first packet carries (TracePacket.clock_snapshot = 6): the
# sequence's incremental clock 64 at 0, and the default clock (BOOTTIME = 6) at 0.
_SNAPSHOT = np.array(
    [0x32, 0x0E, 0x0A, 0x06, 0x08, 0x40, 0x10, 0x00, 0x18, 0x01, 0x0A, 0x04, 0x08, 0x06, 0x10, 0x00], np.uint8
)


@njit(cache=True, nogil=True, inline="always")
def _bytes(buf, at, src, lo, hi):  # pragma: no cover - compiled
    for k in range(lo, hi):
        buf[at] = src[k]
        at += 1
    return at


@njit(cache=True, nogil=True, inline="always")
def _field(v):  # pragma: no cover - compiled
    """Bytes of a one-byte tag and a length-delimited field's length prefix and body of V bytes."""
    return 1 + _vsize(v) + v


@njit(cache=True, nogil=True)
def _descriptor_size(seq, parent, rank, name_len):  # pragma: no cover - compiled
    """Bytes of a TrackDescriptor (uuid SEQ, name, parent_uuid or child_ordering, rank)."""
    n = 1 + _vsize(seq) + _field(name_len) + 1 + _vsize(rank)
    n += 1 + _vsize(parent) if parent else 2
    return n


@njit(cache=True, nogil=True)
def _descriptor(buf, at, seq, parent, rank, text, lo, hi):  # pragma: no cover - compiled
    """TracePacket.track_descriptor (60), as protobuf writes a TrackDescriptor's fields: by number."""
    buf[at] = 0xE2
    buf[at + 1] = 0x03
    at = _varint(buf, at + 2, _descriptor_size(seq, parent, rank, hi - lo))
    buf[at] = 0x08  # uuid = 1
    at = _varint(buf, at + 1, seq)
    buf[at] = 0x12  # name = 2
    at = _varint(buf, at + 1, hi - lo)
    at = _bytes(buf, at, text, lo, hi)
    if parent:
        buf[at] = 0x28  # parent_uuid = 5
        at = _varint(buf, at + 1, parent)
    else:
        buf[at] = 0x58  # child_ordering = 11: EXPLICIT
        buf[at + 1] = 3
        at += 2
    buf[at] = 0x60  # sibling_order_rank = 12
    return _varint(buf, at + 1, rank)


@njit(cache=True, nogil=True)
def _lane_names(title, xname, slot):  # pragma: no cover - compiled
    """The distinct names of a lane's rows (TITLE) and instants (XNAME, -1 for none), ascending:
    the batch numbers its names in the order of their texts, so these are in that order too.
    SLOT: scratch, -1 for every name on entry and on return."""
    count = 0
    for i in range(title.shape[0]):
        if slot[title[i]] < 0:
            slot[title[i]] = 0
            count += 1
    for i in range(xname.shape[0]):
        if xname[i] >= 0 and slot[xname[i]] < 0:
            slot[xname[i]] = 0
            count += 1
    out = np.empty(count, np.int64)
    count = 0
    for i in range(title.shape[0]):
        if slot[title[i]] == 0:
            slot[title[i]] = 1
            out[count] = title[i]
            count += 1
    for i in range(xname.shape[0]):
        if xname[i] >= 0 and slot[xname[i]] == 0:
            slot[xname[i]] = 1
            out[count] = xname[i]
            count += 1
    for i in range(count):
        slot[out[i]] = -1
    return np.sort(out)


@njit(cache=True, nogil=True)
def lanes_packets(
    seqs, parents, ranks, lane_text, lane_off, name_text, name_off,
    row_off, s, e, title,
    out_off, out_ts, out_fid, out_name,
    in_off, in_ts, in_fid, in_name, in_steal, runs_name,
    mark_off, mark_ts, mark_name, lo, hi, encode,
):  # pragma: no cover - compiled  # fmt: skip
    """Every packet of lanes that are one window on one track each (the export's many small lanes),
    in one call: per lane, what ``_Export.window`` writes for a lane's only piece of one layer.

    Lane j: track and sequence SEQS[j], under PARENTS[j] (0: none) at rank RANKS[j], named
    LANE_TEXT[LANE_OFF[j]:LANE_OFF[j + 1]] (UTF-8); its rows ROW_OFF[j]:ROW_OFF[j + 1] of S, E,
    TITLE (by start, the longer first, no two overlapping without nesting... none at all: one
    layer); the flows that start on it (OUT_*: time, id, name), that end on it (IN_*; a steal's
    end is an instant named IN_NAME, a wake-up's the row that starts then, else an instant named
    RUNS_NAME[j]), its thread marks (MARK_*), each by their own offsets and in id (table) order.
    Names are the batch's: name k's text is NAME_TEXT[NAME_OFF[k]:NAME_OFF[k + 1]], and the
    names are numbered in the order of their texts.  Times are since the trace's start.

    Lanes LO to HI (excluded) only.  Returns the bytes and, for each of their records (a lane's
    sequence head and descriptor, then its events; or its one empty-track packet), its lane, its
    length in the bytes, its packet count and, for events, the flows among them (what the writer's
    estimate of their size counts, as for a window ``_Export.emit`` writes), -1 for the others
    (counted by their bytes).  Without ENCODE, the same but no bytes and no events' lengths (0):
    what the writer needs to cut its chunks, before the events are encoded (on its workers).
    """
    names = name_off.shape[0] - 1
    slot = np.full(max(names, 1), -1, np.int64)
    iid_of = np.zeros(max(names, 1), np.int64)
    parts = []
    rec_lane = np.empty(2 * (hi - lo), np.int64)
    rec_len = np.zeros(2 * (hi - lo), np.int64)
    rec_flows = np.empty(2 * (hi - lo), np.int64)
    rec_count = np.empty(2 * (hi - lo), np.int64)
    recs = 0
    total = 0
    for j in range(lo, hi):
        r0, r1 = row_off[j], row_off[j + 1]
        ls, le, lt = s[r0:r1], e[r0:r1], title[r0:r1]
        n = r1 - r0
        o0, o1 = out_off[j], out_off[j + 1]
        i0, i1 = in_off[j], in_off[j + 1]
        m0, m1 = mark_off[j], mark_off[j + 1]
        # The instants beside the rows, in the order the export adds them: flows that start,
        # steals' ends, wake-ups' ends without their row, thread marks.
        steals = 0
        for k in range(i0, i1):
            steals += in_steal[k] != 0
        sink_row = np.empty(i1 - i0 - steals, np.int64)
        sink_id = np.empty(i1 - i0 - steals, np.int64)
        unmatched = np.empty(i1 - i0 - steals, np.int64)  # IN_* rows
        hits = 0
        misses = 0
        for k in range(i0, i1):
            if in_steal[k] != 0:
                continue
            row = np.searchsorted(ls, in_ts[k])
            if row < n and ls[row] == in_ts[k]:
                sink_row[hits] = row
                sink_id[hits] = in_fid[k]
                hits += 1
            else:
                unmatched[misses] = k
                misses += 1
        nx = (o1 - o0) + steals + misses + (m1 - m0)
        xts = np.empty(nx, np.int64)
        xname = np.empty(nx, np.int64)
        xflow_out = np.zeros(nx, np.int64)
        xflow_in = np.zeros(nx, np.int64)
        x = 0
        for k in range(o0, o1):
            xts[x], xname[x], xflow_out[x] = out_ts[k], out_name[k], out_fid[k]
            x += 1
        for k in range(i0, i1):
            if in_steal[k] != 0:
                xts[x], xname[x], xflow_in[x] = in_ts[k], in_name[k], in_fid[k]
                x += 1
        for u in range(misses):
            k = unmatched[u]
            xts[x], xname[x], xflow_in[x] = in_ts[k], runs_name[j], in_fid[k]
            x += 1
        for k in range(m0, m1):
            xts[x], xname[x] = mark_ts[k], mark_name[k]
            x += 1
        seq = seqs[j]
        a, b = lane_off[j], lane_off[j + 1]
        desc = _descriptor_size(seq, parents[j], ranks[j], b - a)
        if n == 0 and nx == 0:
            # A lane with nothing to show: its descriptor alone, as the sequence's first packet.
            packet = 1 + _vsize(seq) + 2 + 2 + _vsize(desc) + desc + 3
            size = 1 + _vsize(packet) + packet
            rec_lane[recs], rec_len[recs], rec_count[recs], rec_flows[recs] = j, size, 1, -1
            recs += 1
            if not encode:
                continue
            buf = np.empty(size, np.uint8)
            buf[0] = _TRACE_PACKET
            at = _varint(buf, 1, packet)
            buf[at] = _SEQUENCE_ID
            at = _varint(buf, at + 1, seq)
            buf[at] = _FLAGS
            buf[at + 1] = 1  # SEQ_INCREMENTAL_STATE_CLEARED
            at = _descriptor(buf, at + 2, seq, parents[j], ranks[j], lane_text, a, b)
            buf[at] = 0xB8  # first_packet_on_sequence = 87
            buf[at + 1] = 0x05
            buf[at + 2] = 1
            parts.append(buf)
            total += buf.shape[0]
            continue
        hits_flows = hits
        for k in range(nx):
            hits_flows += (xflow_out[k] != 0) + (xflow_in[k] != 0)
        slices = 0
        for i in range(n):
            slices += ls[i] != le[i]
        used = _lane_names(lt, xname, slot)
        for k in range(used.shape[0]):
            iid_of[used[k]] = k + 1
        # The sequence's head (fields by number, as protobuf writes them): clock snapshot,
        # sequence id, interned names, flags, defaults (track, clock), first on the sequence.
        interned = 0
        for k in range(used.shape[0]):
            g = used[k]
            interned += _field(1 + _vsize(k + 1) + _field(name_off[g + 1] - name_off[g]))
        defaults = _field(1 + _vsize(seq)) + 3
        head = (
            _SNAPSHOT.shape[0] + 1 + _vsize(seq) + _field(interned) + 2 + 2 + _vsize(defaults) + defaults + 3
        )
        tail = 1 + _vsize(seq) + 2 + 2 + _vsize(desc) + desc
        size = 1 + _vsize(head) + head + 1 + _vsize(tail) + tail
        rec_lane[recs], rec_len[recs], rec_count[recs], rec_flows[recs] = j, size, 2, -1
        rec_lane[recs + 1], rec_count[recs + 1], rec_flows[recs + 1] = j, n + slices + nx, hits_flows
        recs += 2
        if not encode:
            continue
        buf = np.empty(size, np.uint8)
        buf[0] = _TRACE_PACKET
        at = _varint(buf, 1, head)
        at = _bytes(buf, at, _SNAPSHOT, 0, _SNAPSHOT.shape[0])
        buf[at] = _SEQUENCE_ID
        at = _varint(buf, at + 1, seq)
        buf[at] = 0x62  # interned_data = 12
        at = _varint(buf, at + 1, interned)
        for k in range(used.shape[0]):
            g = used[k]
            lo, hi = name_off[g], name_off[g + 1]
            buf[at] = 0x12  # event_names = 2
            at = _varint(buf, at + 1, 1 + _vsize(k + 1) + _field(hi - lo))
            buf[at] = 0x08  # iid = 1
            at = _varint(buf, at + 1, k + 1)
            buf[at] = 0x12  # name = 2
            at = _varint(buf, at + 1, hi - lo)
            at = _bytes(buf, at, name_text, lo, hi)
        buf[at] = _FLAGS
        buf[at + 1] = 1  # SEQ_INCREMENTAL_STATE_CLEARED
        buf[at + 2] = 0xDA  # trace_packet_defaults = 59
        buf[at + 3] = 0x03
        at = _varint(buf, at + 4, defaults)
        buf[at] = 0x5A  # track_event_defaults = 11
        at = _varint(buf, at + 1, 1 + _vsize(seq))
        buf[at] = 0x58  # track_uuid = 11
        at = _varint(buf, at + 1, seq)
        buf[at] = 0xD0  # timestamp_clock_id = 58
        buf[at + 1] = 0x03
        buf[at + 2] = 64
        buf[at + 3] = 0xB8  # first_packet_on_sequence = 87
        buf[at + 4] = 0x05
        buf[at + 5] = 1
        buf[at + 6] = _TRACE_PACKET
        at = _varint(buf, at + 7, tail)
        buf[at] = _SEQUENCE_ID
        at = _varint(buf, at + 1, seq)
        buf[at] = _FLAGS
        buf[at + 1] = _NEEDS_INCREMENTAL_STATE
        at = _descriptor(buf, at + 2, seq, parents[j], ranks[j], lane_text, a, b)
        parts.append(buf)
        total += buf.shape[0]
        # Then its events, as ``window_packets`` writes a window (the sequence's clock at 0).
        iid = np.empty(n, np.int64)
        for i in range(n):
            iid[i] = iid_of[lt[i]]
        x_iid = np.zeros(nx, np.int64)
        for k in range(nx):
            if xname[k] >= 0:
                x_iid[k] = iid_of[xname[k]]
        delta, kind, ev_iid, flow_out, fin_ev, fin_id = track_order(
            ls, le, iid, xts, x_iid, xflow_out, xflow_in, sink_row[:hits], sink_id[:hits]
        )
        none = np.zeros(0, np.int64)  # no counter values
        events = encode_track_events(seq, delta, kind, ev_iid, none, flow_out, fin_ev, fin_id)
        parts.append(events)
        total += events.shape[0]
        rec_len[recs - 1] = events.shape[0]
    out = np.empty(total, np.uint8)
    at = 0
    for p in parts:
        at = _bytes(out, at, p, 0, p.shape[0])
    return out, rec_lane[:recs], rec_len[:recs], rec_count[:recs], rec_flows[:recs]
