"""Compiled loops of a generation's tables: strings, stacks and CPU samples batches.

The loops mirror Go's addStrings / addStacks / addCPUSamples and
validateStackStrings (internal/trace/generation.go) over a uint8 view of the
trace.  They never format anything: each returns its arrays plus an error
code, the byte offset Go's reader was at, and the few integers the message
needs; generation.py turns those into Go's message (on the error path only).

Varints are Go's stream-style ``binary.ReadUvarint`` over the batch data (the
same rules as ``wire.read_uvarint``): EOF before the first byte, unexpected EOF
inside one, overflow after 10 bytes or a 10th byte > 1.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from goblueprint.trace.kernels.table_codes import *  # noqa: F403 - the loops' codes, numba-free

_U0 = np.uint64(0)


@njit(cache=True, nogil=True)
def _walk(buf, start, end, ev_want, kind, limit):  # pragma: no cover - compiled
    """Every record of a table batch: its varints, flat, in order.

    Returns (vals, record starts into vals, record ends in the buffer, record
    count, code, offset, a, b, c, u).  A strings record is (id, len, data
    offset); a stacks record is (id, nframes, then 4 per frame); a samples
    record its 5 varints.  Records before an error are complete.

    One loop with the varint decoding written in it once: calling a helper
    per varint costs more than the decoding (numba does not inline it and
    counts references to the buffer on every call).
    """
    ulimit = np.uint64(limit)
    size = end - start
    vals = np.empty(2 * size + 4, np.uint64)  # >= 1 byte per varint, +1 value per string
    rec = np.empty(size // 3 + 2, np.int64)  # a record takes at least 3 bytes
    rec_end = np.empty(size // 3 + 2, np.int64)
    nv = 0
    nrec = 0
    pos = start
    code = np.int64(E_NONE)
    off = 0
    a = 0
    b = 0
    c = 0
    u = _U0
    while pos < end:
        ev = buf[pos]
        pos += 1
        if ev != ev_want:
            code, off, a = E_EVENT, pos - 1, np.int64(ev)
            break
        rec[nrec] = nv
        need = 5 if kind == K_SAMPLES else 2
        k = 0
        while k < need:
            # binary.ReadUvarint: x accumulates in int64 (the same 64 bits).
            x = 0
            shift = 0
            i = 0
            v = np.int64(V_OK)
            while True:
                if pos >= end:
                    v = np.int64(V_UNEXPECTED_EOF if i > 0 else V_EOF)
                    break
                byte = np.int64(buf[pos])
                pos += 1
                if byte < 0x80:
                    if i == 9 and byte > 1:
                        v = np.int64(V_OVERFLOW)
                    else:
                        x |= byte << shift
                    break
                x |= (byte & 0x7F) << shift
                shift += 7
                i += 1
                if i == 10:
                    v = np.int64(V_OVERFLOW)
                    break
            if v != V_OK:
                if kind == K_STACKS and k >= 2:
                    code, off, a, b, c, u = E_FRAME, pos, (k - 2) // 4 + 1, (k - 2) % 4, v, vals[rec[nrec]]
                else:
                    code, off, c = E_VARINT, pos, v
                break
            ux = np.uint64(x)
            vals[nv] = ux
            nv += 1
            k += 1
            if k == 2 and kind == K_STACKS:
                if ux > ulimit:
                    code, off, u = E_SIZE, pos, ux
                    break
                need = 2 + 4 * np.int64(ux)
            elif k == 2 and kind == K_STRINGS:
                if ux > ulimit:
                    code, off, u = E_SIZE, pos, ux
                    break
                if ux > np.uint64(end - pos):
                    code, off, a, u = E_SHORT, pos, end - pos, ux
                    break
                vals[nv] = np.uint64(pos)
                nv += 1
                pos += np.int64(ux)
        if code != E_NONE:
            break
        rec_end[nrec] = pos
        nrec += 1
    rec[nrec] = nv
    return vals, rec, rec_end, nrec, code, off, a, b, c, u


@njit(cache=True, nogil=True)
def _first_repeat(known, ids):  # pragma: no cover - compiled
    """(index of the first ID of ``ids`` already in ``known`` or earlier in ``ids``, or -1;
    the sorted union of both when there is no repeat).

    ``known`` is sorted and free of repeats.  The common case (no repeat) costs
    a sort of ``ids`` (skipped when already in order, as string IDs are) and a
    merge; only a repeat pays for finding the earliest one.
    """
    nk = known.shape[0]
    n = ids.shape[0]
    ordered = True
    for k in range(1, n):
        if ids[k] <= ids[k - 1]:
            ordered = False
            break
    srt = ids if ordered else np.sort(ids)
    repeat = False
    for k in range(1, n):
        if srt[k] == srt[k - 1]:
            repeat = True
            break
    merged = np.empty(nk + n, np.uint64)
    i = 0
    j = 0
    k = 0
    while not repeat and (i < nk or j < n):
        if j >= n or (i < nk and known[i] < srt[j]):
            merged[k] = known[i]
            i += 1
        elif i >= nk or srt[j] < known[i]:
            merged[k] = srt[j]
            j += 1
        else:
            repeat = True
        k += 1
    if not repeat:
        return -1, merged
    # A stable sort keeps equal IDs in input order, so every ID after the first
    # of its run is a repeat; the earliest of those is the one Go's insert rejects.
    both = np.empty(nk + n, np.uint64)
    both[:nk] = known
    both[nk:] = ids
    order = np.argsort(both, kind="mergesort")
    first = n
    for k in range(1, nk + n):
        if both[order[k]] == both[order[k - 1]]:
            i = order[k] - nk  # never a known ID: those are sorted and unique
            if i < first:
                first = i
    return first, known


@njit(cache=True, nogil=True)
def scan_strings(buf, start, end, max_size, ev_string, known):  # pragma: no cover - compiled
    """A strings batch (after its EvStrings byte).

    Returns (ids, data offsets, data ends, all ASCII, code, offset, a, c, u,
    repeat, known'): the strings read before any error, in batch order
    (``all ASCII``: no byte of their data is >= 0x80); ``repeat`` is
    the index of the first string whose ID is already known (or -1);
    ``known'`` the sorted IDs including this batch's when all is well.
    """
    vals, rec, rec_end, n, code, off, a, _b, c, u = _walk(buf, start, end, ev_string, K_STRINGS, max_size)
    ids = np.empty(n, np.uint64)
    offs = np.empty(n, np.int64)
    ascii = True
    for i in range(n):
        r = rec[i]
        ids[i] = vals[r]
        offs[i] = np.int64(vals[r + 2])
        for j in range(offs[i], rec_end[i]):
            if buf[j] >= 0x80:
                ascii = False
    repeat, merged = _first_repeat(known, ids)
    return ids, offs, rec_end[:n], ascii, code, off, a, c, u, repeat, merged


@njit(cache=True, nogil=True)
def scan_stacks(buf, start, end, max_frames, ev_stack, known):  # pragma: no cover - compiled
    """A stacks batch (after its EvStacks byte).

    Returns (ids, frame starts, ends, pcs, funcIDs, fileIDs, lines, code,
    offset, a, b, c, u, repeat, known'): the stacks read before any error in
    batch order, stack i's frames being [starts[i], starts[i + 1]) of the frame
    arrays (``starts`` has one more entry); ``ends`` the offset after each
    stack; ``repeat`` and ``known'`` as in scan_strings.
    """
    vals, rec, rec_end, n, code, off, a, b, c, u = _walk(buf, start, end, ev_stack, K_STACKS, max_frames)
    ids = np.empty(n, np.uint64)
    starts = np.empty(n + 1, np.int64)
    nf = 0
    for i in range(n):
        ids[i] = vals[rec[i]]
        starts[i] = nf
        nf += np.int64(vals[rec[i] + 1])
    starts[n] = nf
    pcs = np.empty(nf, np.uint64)
    funcs = np.empty(nf, np.uint64)
    files = np.empty(nf, np.uint64)
    lines = np.empty(nf, np.uint64)
    for i in range(n):
        r = rec[i] + 2
        for j in range(starts[i], starts[i + 1]):
            pcs[j] = vals[r]
            funcs[j] = vals[r + 1]
            files[j] = vals[r + 2]
            lines[j] = vals[r + 3]
            r += 4
    repeat, merged = _first_repeat(known, ids)
    return ids, starts, rec_end[:n], pcs, funcs, files, lines, code, off, a, b, c, u, repeat, merged


@njit(cache=True, nogil=True)
def scan_cpu_samples(buf, start, end, ev_cpu_sample):  # pragma: no cover - compiled
    """A CPU samples batch (after its EvCPUSamples byte).

    Returns (timestamps, Ms, Ps, Gs, stack IDs, code, offset, a, c): M, P and
    G are Go's int64 IDs (two's complement of the wire value), G 0 is -1
    (NoGoroutine).
    """
    vals, rec, _ends, n, code, off, a, _b, c, _u = _walk(buf, start, end, ev_cpu_sample, K_SAMPLES, _U0)
    ts = np.empty(n, np.uint64)
    ms = np.empty(n, np.int64)
    ps = np.empty(n, np.int64)
    gs = np.empty(n, np.int64)
    stks = np.empty(n, np.uint64)
    for i in range(n):
        r = rec[i]
        ts[i] = vals[r]
        ms[i] = np.int64(vals[r + 1])  # wraps like Go's ThreadID(m)
        ps[i] = np.int64(vals[r + 2])
        g = vals[r + 3]
        gs[i] = -1 if g == 0 else np.int64(g)
        stks[i] = vals[r + 4]
    return ts, ms, ps, gs, stks, code, off, a, c


@njit(cache=True, nogil=True)
def finish_stacks(ids, starts, pcs, funcs, files, lines, string_ids):  # pragma: no cover - compiled
    """Index the stacks of a generation and run Go's validateStackStrings.

    ``ids``/``starts`` and the frame arrays are the generation's stacks in file
    order.  Every frame takes the funcID/fileID/line of the first frame with
    its PC (Go keeps the first in its pcs map).  Returns (stack IDs sorted,
    with 0; their frame ranges lo, hi; funcs, files, lines made canonical;
    index of each PC's first frame, in PC order; code, stack ID, bad string ID).
    Stacks are checked in ID order, frames in stack order, as Go walks its
    compacted table.
    """
    # First frame of each PC: an open-addressing hash table (Fibonacci hashing,
    # linear probing) keyed on the PC; sorting the frames costs several times more.
    nf = pcs.shape[0]
    bits = 4
    while (1 << bits) < 2 * nf:
        bits += 1
    shift = np.uint64(64 - bits)
    mask = (1 << bits) - 1
    slot_pc = np.empty(1 << bits, np.uint64)
    slot_frame = np.full(1 << bits, -1, np.int64)
    canon = np.empty(nf, np.int64)
    uniq = np.empty(nf, np.int64)
    nuniq = 0
    for i in range(nf):
        pc = pcs[i]
        h = np.int64((pc * np.uint64(0x9E3779B97F4A7C15)) >> shift)
        while True:
            f = slot_frame[h]
            if f < 0:
                slot_pc[h] = pc
                slot_frame[h] = i
                canon[i] = i
                uniq[nuniq] = i
                nuniq += 1
                break
            if slot_pc[h] == pc:
                canon[i] = f
                break
            h = (h + 1) & mask
    cfuncs = funcs[canon]
    cfiles = files[canon]
    clines = lines[canon]

    n = ids.shape[0]
    sorder = np.argsort(ids)
    sids = np.empty(n + 1, np.uint64)
    lo = np.empty(n + 1, np.int64)
    hi = np.empty(n + 1, np.int64)
    sids[0] = 0  # ID 0, "no stack", has no frames and is never in the batches
    lo[0] = 0
    hi[0] = 0
    for k in range(n):
        i = sorder[k]
        sids[k + 1] = ids[i]
        lo[k + 1] = starts[i]
        hi[k + 1] = starts[i + 1]

    ns = string_ids.shape[0]
    dense = string_ids[ns - 1] == np.uint64(ns - 1)  # sorted and unique: exactly 0..ns-1
    code = 0
    bad_stack = _U0
    bad_id = _U0
    for k in range(1, n + 1):
        for j in range(lo[k], hi[k]):
            for what in range(2):
                f = cfuncs[j] if what == 0 else cfiles[j]
                if dense:
                    ok = f < np.uint64(ns)
                else:
                    x = np.searchsorted(string_ids, f)
                    ok = x < ns and string_ids[x] == f
                if not ok:
                    code, bad_stack, bad_id = E_FUNC_ID + what, sids[k], f
                    break
            if code != 0:
                break
        if code != 0:
            break
    return sids, lo, hi, cfuncs, cfiles, clines, uniq[:nuniq], code, bad_stack, bad_id


# How scan_batch_headers stopped.
@njit(cache=True, nogil=True)
def scan_batch_headers(
    buf, pos, end, cap, max_size, ev_batch, ev_exp_batch, ev_eog
):  # pragma: no cover - compiled
    """Go's readBatch, batch after batch from ``pos``, for the well-formed case only.

    Returns (records, timestamps, generations, new pos, how it stopped): a
    record is (M, data start, data end, experiment, first data byte or -1,
    header offset), as wire.Batch holds them; an EndOfGeneration batch is
    (-1, offset, offset + 1, 0, its byte, offset) with generation 0, and ends
    the scan.  Anything read_batch would not return as a plain batch
    (an error, an experimental batch cut after its type byte, any other
    type) stops the scan before it with B_ASK: the caller lets read_batch
    read that one, so every message stays read_batch's own.
    """
    recs = np.empty((cap, 6), np.int64)
    tss = np.empty(cap, np.uint64)
    gens = np.empty(cap, np.uint64)
    vals = np.empty(4, np.uint64)  # gen, M, timestamp, size
    ulimit = np.uint64(max_size)
    n = 0
    stop = np.int64(B_END)
    while pos < end:
        if n == cap:
            stop = np.int64(B_FULL)
            break
        off = pos
        typ = buf[pos]
        if typ == ev_eog:
            recs[n, 0] = -1
            recs[n, 1] = off
            recs[n, 2] = off + 1
            recs[n, 3] = 0
            recs[n, 4] = typ
            recs[n, 5] = off
            tss[n] = 0
            gens[n] = 0
            n += 1
            pos = off + 1
            stop = np.int64(B_EOG)
            break
        p = pos + 1
        exp = 0
        if typ != ev_batch:
            if typ != ev_exp_batch or p >= end:
                stop = np.int64(B_ASK)
                break
            exp = np.int64(buf[p])
            p += 1
        # gen, M, timestamp, size: binary.ReadUvarint each, inline (see _walk).
        bad = False
        for k in range(4):
            x = 0
            shift = 0
            i = 0
            while True:
                if p >= end:
                    bad = True
                    break
                byte = np.int64(buf[p])
                p += 1
                if byte < 0x80:
                    if i == 9 and byte > 1:
                        bad = True
                    else:
                        x |= byte << shift
                    break
                x |= (byte & 0x7F) << shift
                shift += 7
                i += 1
                if i == 10:
                    bad = True
                    break
            if bad:
                break
            vals[k] = np.uint64(x)
        size = vals[3]
        if bad or size > ulimit or size > np.uint64(end - p):
            stop = np.int64(B_ASK)
            break
        start = p
        stop_at = p + np.int64(size)
        recs[n, 0] = np.int64(vals[1])  # ThreadID is an int64 in Go
        recs[n, 1] = start
        recs[n, 2] = stop_at
        recs[n, 3] = exp
        recs[n, 4] = np.int64(buf[start]) if stop_at > start else -1
        recs[n, 5] = off
        tss[n] = vals[2]
        gens[n] = vals[0]
        n += 1
        pos = stop_at
    return recs[:n], tss[:n], gens[:n], pos, stop
