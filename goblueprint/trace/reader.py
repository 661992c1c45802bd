"""The trace Reader: yields Events in exactly the order Go's trace.Reader does.

Algorithm (Go's reader.go): read one generation's batches; decode its tables;
put one cursor per M into a min-heap keyed by the timestamp of its next event;
repeatedly try to advance the cursor with the smallest timestamp through the
ordering engine, falling back to the others in timestamp order when it cannot
advance; inject CPU samples by time; emit a Sync event at the start of each
generation and at the end.  Timestamps are forced strictly increasing.

Streaming: only one generation is held at a time, and the batches of a
generation are decoded one batch per M at a time.
"""

from __future__ import annotations

import mmap
import os
from collections.abc import Iterator
from pathlib import Path

from goblueprint.errors import TraceError, UsageError
from goblueprint.trace import spec
from goblueprint.trace.events import EV_SYNC_EVENT, NO_GOROUTINE, NO_PROC, NO_THREAD, Event
from goblueprint.trace.generation import Generation, read_generation, read_generation_with_spill
from goblueprint.trace.gosort import sort_func
from goblueprint.trace.order import Ordering, _Broken
from goblueprint.trace.wire import EOF, WireError, decode_timed_batch, event_offsets, mul, read_header

_MAX_TIME = (1 << 63) - 1

# Per wire type: indices into Event.args that must name a stack / a string (validateTableIDs).
_STACK_ARGS: tuple[tuple[int, ...], ...] = tuple(tuple(i - 1 for i in s.stack_ids) for s in spec.SPECS)
_STRING_ARGS: tuple[tuple[int, ...], ...] = tuple(tuple(i - 1 for i in s.string_ids) for s in spec.SPECS)
_CHECK_IDS = tuple(bool(a or b) for a, b in zip(_STACK_ARGS, _STRING_ARGS, strict=True))
# For the inline check: the index of the only stack ID / string ID, -1 when there
# is none or more than one (those events take the general path).
_ONE_STACK = tuple(
    a[0] if len(a) == 1 and len(b) <= 1 else -1 for a, b in zip(_STACK_ARGS, _STRING_ARGS, strict=True)
)
_ONE_STRING = tuple(b[0] if len(b) == 1 else -1 for b in _STRING_ARGS)


class _Cursor:
    """Go's batchCursor: the next event of one M (typ, time, args are the 'baseEvent')."""

    __slots__ = (
        "argl",
        "args",
        "batches",
        "bidx",
        "buf",
        "decode",
        "eidx",
        "err",
        "err_off",
        "freq",
        "m",
        "ms",
        "n",
        "time",
        "times",
        "typ",
        "typs",
    )

    def __init__(self, m: int, batches, freq: float, buf, decode) -> None:
        self.decode = decode
        self.m = m
        self.ms = None  # the ordering's state of this M, cached once it exists
        self.batches = batches
        self.bidx = -1
        # The decoded current batch: parallel lists, n events.
        self.typs: list[int] = []
        self.times: list[int] = []
        self.argl: list[list[int]] = []
        self.n = 0
        self.eidx = 0
        self.err: str | None = None
        self.err_off = 0
        self.typ = 0
        self.time = 0
        self.args: list[int] = []
        self.freq = freq
        self.buf = buf

    def next_event(self) -> bool:
        """Move to the next event; False at the end; raises WireError where Go's cursor fails."""
        while self.eidx >= self.n:
            if self.err is not None:
                raise WireError(self.err, self.err_off)
            self.bidx += 1
            if self.bidx >= len(self.batches):
                return False
            b = self.batches[self.bidx]
            (self.typs, self.times, self.argl), self.err, self.err_off = self.decode(
                self.buf, b.start, b.end, self.freq, mul(self.freq, b.time)
            )
            self.n = len(self.typs)
            self.eidx = 0
        i = self.eidx
        self.typ = self.typs[i]
        self.time = self.times[i]
        self.args = self.argl[i]
        self.eidx = i + 1
        return True


# Go's heap over batch cursors (batchcursor.go), ported exactly: ties between
# equal timestamps are broken the way Go's sift operations break them.


def _sift_up(heap: list[_Cursor], i: int) -> int:
    while i > 0 and heap[(i - 1) // 2].time > heap[i].time:
        j = (i - 1) // 2
        heap[j], heap[i] = heap[i], heap[j]
        i = j
    return i


def _sift_down(heap: list[_Cursor], i: int) -> int:
    # Go's heapSiftDown with min3 inlined: the parent stays unless a child is
    # strictly earlier; between children the right one wins only if strictly earlier.
    n = len(heap)
    if i >= n:
        return i  # empty heap (Go's min3 treats a missing parent as maxTime)
    while True:
        m = i
        t = heap[i].time
        c = 2 * i + 1
        if c < n:
            tc = heap[c].time
            if tc < t:
                t = tc
                m = c
            c += 1
            if c < n and heap[c].time < t:
                m = c
        if m == i:
            return i
        heap[i], heap[m] = heap[m], heap[i]
        i = m


def _heap_insert(heap: list[_Cursor], bc: _Cursor) -> None:
    heap.append(bc)
    _sift_up(heap, len(heap) - 1)


def _heap_update(heap: list[_Cursor], i: int) -> None:
    if _sift_up(heap, i) != i:
        return
    _sift_down(heap, i)


def _heap_remove(heap: list[_Cursor], i: int) -> None:
    while i > 0:
        j = (i - 1) // 2
        heap[j], heap[i] = heap[i], heap[j]
        i = j
    heap[0], heap[-1] = heap[-1], heap[0]
    heap.pop()
    _sift_down(heap, 0)


class Reader:
    """Iterate over the events of a Go 1.22+ execution trace, as Go's trace.Reader.

    ``Reader(data)`` parses the header at once (raising TraceError or
    UnsupportedTraceVersion); iterating yields Events and raises TraceError
    after the events Go would have produced before failing.
    """

    def __init__(self, data: bytes | bytearray | memoryview | mmap.mmap) -> None:
        self._buf = data
        self._end = len(data)
        self.version, self._pos = read_header(data)

    def __iter__(self) -> Iterator[Event]:
        return self._events()

    def close(self) -> None:
        """Release the file mapping of open_trace (a no-op for in-memory data)."""
        buf = self._buf
        if isinstance(buf, mmap.mmap) and not buf.closed:
            try:
                buf.close()
            except BufferError:
                pass  # a live iterator still reads it; the mapping goes when that does

    def __enter__(self) -> Reader:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # The body is one long generator so that the hot state lives in locals.
    def _events(self) -> Iterator[Event]:
        # A view pins the mapping: close() during iteration then leaves it alone.
        buf = memoryview(self._buf) if isinstance(self._buf, mmap.mmap) else self._buf
        end = self._end
        version = self.version
        decode, dbuf = _choose_decoder(buf)
        order = Ordering(version)
        queue = order.queue
        popleft = queue.popleft
        advance = order.advance
        dispatch = order.dispatch
        m_state = order.m_state
        check_ids = _CHECK_IDS
        one_stack = _ONE_STACK
        one_string = _ONE_STRING
        pos = self._pos
        last_ts = 0
        syncs = 0
        gen: Generation | None = None
        frontier: list[_Cursor] = []
        cpu: list = []
        cpu_i = 0
        spill = None
        spill_err: WireError | None = None
        pending_err: TraceError | None = None
        gen_no: int | None = None

        def fail(msg: str, offset: int | None = None, m: int | None = None) -> TraceError:
            return TraceError(msg, offset=offset, generation=gen_no, m=m)

        while True:
            # (1) Events already ordered.
            while queue:
                ev = popleft()
                typ = ev.typ
                if check_ids[typ]:
                    msg = _check_ids(ev)
                    if msg is not None:
                        # No cursor produced this event here; the generation is the best place.
                        raise fail(msg, gen.offset if gen is not None else pos, ev.m)
                if ev.ts <= last_ts:
                    ev.ts = last_ts + 1
                last_ts = ev.ts
                yield ev

            # (2) Next generation, when this one is used up.
            if not frontier and cpu_i >= len(cpu):
                if pending_err is not None:
                    if pending_err.message == EOF:
                        # Go hands back a bare io.EOF here (e.g. a sync or table batch cut
                        # short), which every ReadEvent caller takes for the end of the trace.
                        return
                    raise pending_err
                new_gen = None
                done = False
                if version < spec.GO126:
                    if spill_err is not None:
                        # Sync first, then the error (Go's spillErrSync).
                        pending_err = fail(spill_err.message, spill_err.offset)
                    elif gen is not None and spill is None:
                        done = True
                    else:
                        try:
                            new_gen, spill, spill_err, pos = read_generation_with_spill(
                                buf, pos, end, spill, version
                            )
                        except WireError as err:
                            gen_no = err.gen or gen_no
                            pending_err = fail(err.message, err.offset)
                else:
                    try:
                        new_gen, pos = read_generation(buf, pos, end, version)
                    except WireError as err:
                        gen_no = err.gen or gen_no
                        pending_err = fail(err.message, err.offset)
                    if new_gen is None and pending_err is None:
                        done = True
                syncs += 1
                if new_gen is None:
                    gen = None
                    ev = Event(
                        None, NO_GOROUTINE, NO_PROC, NO_THREAD, EV_SYNC_EVENT, last_ts, [syncs, 0, 0, 0]
                    )
                else:
                    gen = new_gen
                    gen_no = gen.gen
                    freq = gen.table.freq
                    cpu = gen.cpu_samples
                    cpu_i = 0
                    frontier = []
                    for m in gen.batch_ms:
                        bc = _Cursor(m, gen.batches[m], freq, dbuf, decode)
                        try:
                            ok = bc.next_event()
                        except WireError as err:
                            raise fail(err.message, err.offset, m) from None
                        if ok:
                            _heap_insert(frontier, bc)
                    ev = Event(
                        gen.table,
                        NO_GOROUTINE,
                        NO_PROC,
                        NO_THREAD,
                        EV_SYNC_EVENT,
                        mul(freq, gen.min_ts),
                        [syncs, 0, 0, 0],
                    )
                if ev.ts <= last_ts:
                    ev.ts = last_ts + 1
                last_ts = ev.ts
                yield ev
                if done:
                    return
                continue

            # (3) A CPU sample, if it comes first.
            if cpu_i < len(cpu) and (not frontier or cpu[cpu_i][0] < frontier[0].time):
                ts, sm, sp, sg, stk = cpu[cpu_i]
                cpu_i += 1
                ev = Event(gen.table, sg, sp, sm, spec.EV_CPU_SAMPLE, ts, [stk, 0, 0, 0])
                if ev.ts <= last_ts:
                    ev.ts = last_ts + 1
                last_ts = ev.ts
                yield ev
                continue

            # (4) Advance the frontier: the earliest M first, else the others in
            # time order.  The inner loop stays here (and drains the queue itself)
            # until the frontier is used up or a CPU sample is due.
            table = gen.table
            stacks = table.stacks
            strings = table.strings
            g_no = gen.gen
            if not order.initial_gen:
                order.initial_gen = g_no
            next_cpu = cpu[cpu_i][0] if cpu_i < len(cpu) else None
            bc = frontier[0]
            try:
                while True:
                    # Fast path of Go's tryAdvance(0), fused: dispatch straight to
                    # the handler with the M's cached state, then refresh the cursor
                    # and restore the heap (a no-op when this M stays the earliest).
                    m = bc.m
                    if m != NO_THREAD:
                        ms = bc.ms
                        if ms is None:
                            ms = bc.ms = m_state(m)
                        res = dispatch[bc.typ](bc, table, m, g_no, ms.g, ms.p)
                        if res is not None:
                            ms.g, ms.p = res
                        ok = res is not None
                    else:
                        ok = advance(bc, table, m, g_no)
                    if ok:
                        i = bc.eidx
                        if i < bc.n:
                            bc.typ = bc.typs[i]
                            bc.time = bc.times[i]
                            bc.args = bc.argl[i]
                            bc.eidx = i + 1
                            n = len(frontier)
                            if n > 1:
                                t = bc.time
                                if frontier[1].time < t or (n > 2 and frontier[2].time < t):
                                    _sift_down(frontier, 0)
                        elif bc.next_event():
                            _heap_update(frontier, 0)
                        else:
                            _heap_remove(frontier, 0)
                    else:
                        # Go sorts the heap (unstable pdqsort) and tries the rest in order.
                        sort_func(frontier, key=_cursor_time)
                        for i in range(1, len(frontier)):
                            bc = frontier[i]
                            if advance(bc, table, bc.m, g_no):
                                if bc.next_event():
                                    _heap_update(frontier, i)
                                else:
                                    _heap_remove(frontier, i)
                                break
                        else:
                            # No single event is at fault: report the front event of
                            # the earliest stuck M (the first one Go tried).
                            bc = frontier[0]
                            raise _Broken(
                                f"broken trace: failed to advance: frontier:\n[gen={g_no}]\n\n"
                                f"{_dump_frontier(frontier)}\n{order.dump()}\n"
                            )
                    # Emit what the advance produced (Go's queue, popped one per ReadEvent).
                    while queue:
                        ev = popleft()
                        typ = ev.typ
                        if check_ids[typ]:
                            # Common case inline: one stack ID and at most one string ID.
                            a = ev.args
                            i = one_stack[typ]
                            j = one_string[typ]
                            if i < 0 or a[i] not in stacks or (j >= 0 and a[j] not in strings):
                                msg = _check_ids(ev)
                                if msg is not None:
                                    # bc is the cursor that was just advanced: the
                                    # event at fault is the one before its front.
                                    raise fail(msg, _event_offset(bc, True), ev.m)
                        if ev.ts <= last_ts:
                            ev.ts = last_ts + 1
                        last_ts = ev.ts
                        yield ev
                    if not frontier:
                        break
                    bc = frontier[0]
                    if next_cpu is not None and next_cpu < bc.time:
                        break
            except _Broken as err:
                # The ordering engine only ever rejects the front event of bc.
                raise fail(str(err), _event_offset(bc, False), bc.m) from None
            except WireError as err:
                raise fail(err.message, err.offset, bc.m) from None


def _check_ids(ev: Event) -> str | None:
    """Go's validateTableIDs: the error message if a stack or string ID the event names is missing."""
    typ = ev.typ
    t = ev.table
    a = ev.args
    for i in _STACK_ARGS[typ]:
        if a[i] not in t.stacks:
            return f"found invalid stack ID {a[i]} for event {spec.SPECS[typ].name}"
    for i in _STRING_ARGS[typ]:
        if a[i] not in t.strings:
            return f"found invalid string ID {a[i]} for event {spec.SPECS[typ].name}"
    return None


def _event_offset(bc: _Cursor, advanced: bool) -> int:
    """File offset of bc's front event, or (advanced) of the event before it.

    Computed lazily, only when an error is raised: the hot path keeps no
    per-event offsets.  The M's batches are re-walked up to the current one
    (wire.event_offsets stops exactly where the decoder stops), and the
    cursor's position (bidx, eidx) indexes into the flattened list.  A cursor
    that ran off its last batch (bidx == len) still holds its last event, which
    is then the one meant either way.
    """
    batches = bc.batches
    last = min(bc.bidx, len(batches) - 1)
    offs: list[int] = []
    before = 0
    for j in range(last + 1):
        b = batches[j]
        if j == bc.bidx:
            before = len(offs)
        offs.extend(event_offsets(bc.buf, b.start, b.end))
    if not offs:
        # Nothing decodable (cannot happen for a cursor that holds an event): the batch.
        return batches[max(last, 0)].offset
    if bc.bidx >= len(batches):
        k = len(offs) - 1
    else:
        k = before + bc.eidx - 1 - (1 if advanced else 0)
    return offs[min(max(k, 0), len(offs) - 1)]


def _cursor_time(c: _Cursor) -> int:
    return c.time


# Traces at least this big are decoded with the numba-compiled loop: below it,
# importing numba and loading its cache costs more than it saves.
NUMBA_MIN_SIZE = 4 << 20


def _choose_decoder(buf):
    """(decode function, buffer it reads): GOBLUEPRINT_DECODER=python|numba overrides the choice."""
    want = os.environ.get("GOBLUEPRINT_DECODER", "")
    if want == "python" or (want != "numba" and len(buf) < NUMBA_MIN_SIZE):
        return decode_timed_batch, buf
    try:
        from goblueprint.trace import fastdecode
    except ImportError:
        if want == "numba":
            raise
        return decode_timed_batch, buf
    return fastdecode.decode_timed_batch, fastdecode.as_array(buf)


def _dump_frontier(frontier: list[_Cursor]) -> str:
    lines = []
    for bc in frontier:
        s = spec.SPECS[bc.typ]
        args = "".join(f" {name}={bc.args[i]}" for i, name in enumerate(s.args[1:]))
        lines.append(f"M {bc.m} [{s.name} time={bc.time}{args}]\n")
    return "".join(lines)


def open_trace(path: str | Path) -> Reader:
    """A Reader over a trace file, memory-mapped (the mapping lives as long as the Reader)."""
    p = Path(path)
    try:
        with open(p, "rb") as f:
            size = f.seek(0, 2)
            if size == 0:
                data: bytes | mmap.mmap = b""
            else:
                data = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
    except OSError as err:
        raise UsageError(f"cannot read trace {p}: {err.strerror or err}") from None
    return Reader(data)
