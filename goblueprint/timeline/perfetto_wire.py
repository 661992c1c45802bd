"""Perfetto's protobuf wire format for track events, and the deflated stream they go in.

A trace of tens of millions of slices cannot afford one protobuf object (or one Python
call) per event, so the hot packets, TrackEvents on a sequence that carries its track
and clock in TracePacketDefaults, are laid out for a whole block of events at once by a
compiled loop (``perfetto_kernel.encode_track_events``): one pass writes every packet, sized
from its fields' varint sizes, into one byte buffer.  Everything else
(descriptors, interned names, clock snapshots) is rare and is written field by field here
(``TrackDescriptor``, ``sequence_head``...), the bytes Perfetto's own protobuf classes make
(the tests check them against those), without loading those classes.

``PacketWriter`` streams the packets: it gathers them in chunks of about ``CHUNK`` bytes
and writes each chunk deflated as one ``TracePacket.compressed_packets``, which is how
Perfetto's tracing service itself writes a compressed trace (trace processor and
ui.perfetto.dev inflate them while reading).  The track events of a chunk are encoded, and
the chunk deflated, on ``_WORKERS`` worker threads (the compiled loops and libdeflate release the
GIL) while the main thread reads and prepares the next rows: handed over as work to do
(``defer``) with an estimate of their size, so where chunks are cut depends only on the
input, never on timing.  The workers write the chunks too, in order; at most ``_AHEAD``
are under way, so memory stays bounded by a few chunks.

The chunks are deflated by libdeflate (the ``deflate`` package), not zlib: the same format
(a zlib stream, what Perfetto inflates), made from the whole chunk at once by a faster
compressor.  On the 30.9 MB test trace (718 MB of packets before compression) zlib's level
3 took 1.88 s of CPU for a 42.1 MB file, the largest part of the export's CPU; libdeflate
took 0.92 s at level 1 (49.1 MB), 1.15 s at 3 (46.7 MB), 1.33 s at 4 (39.5 MB).  ``_LEVEL``
below says which is used and why.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from typing import IO

import deflate
import numpy as np

CHUNK = 1 << 19  # uncompressed bytes per compressed_packets: deflate's gain has flattened out long before
# (a 30.9 MB trace's file: 42.12 MB in chunks of 1 MiB, 42.14 MB in these)
# libdeflate's level 1: on the 30.9 MB trace (718 MB of packets) 0.93 s of CPU for a 49.1 MB
# file (1.59x the trace), against 1.40 s for 39.5 MB (1.28x) at level 4; levels 2 and 3 take
# about level 4's CPU for larger files (1.32 s, 50.5 MB; 1.54 s, 46.7 MB).  The export is CPU-bound
# on both cores, so those 0.47 s (7% of its CPU) count, and the file stays under the 2x of the
# trace it must: the test traces' are
# 1.09-1.65x at level 1 (big x16 1.65x, gens 1.61x, x100 1.59x, x30 1.50x, sched 1.48x).
_LEVEL = 1
_WORKERS = 2
# Chunks submitted but not yet written.  A chunk's encode and deflate take unequal times (the
# spans' reader and the main thread share the cores), and with 2 in flight the main thread
# often waited for one: the 30.9 MB trace's export took 3.50-3.72 s with 2, 3.32-3.52 with 4
# and 3.22-3.28 with 8 (4 runs each, side by side), for peaks of 149-155, 151-154 and
# 153-161 MB (the chunks' deferred windows are held meanwhile).
_AHEAD = 4

# TracePacket fields (perfetto/trace/trace_packet.proto); perfetto_kernel writes the TrackEvents'.
_TRACE_PACKET = 0x0A  # Trace.packet = 1, length-delimited
_COMPRESSED = (0x92, 0x03)  # compressed_packets = 50, length-delimited
SEQ_INCREMENTAL_STATE_CLEARED = 1
SEQ_NEEDS_INCREMENTAL_STATE = 2


def track_events(
    seq: int,
    delta: np.ndarray,
    kind: np.ndarray,
    name_iid: np.ndarray,
    value: np.ndarray | None,
    flow_out: np.ndarray,
    flow_in_event: np.ndarray,
    flow_in_id: np.ndarray,
) -> np.ndarray:
    """Trace.packet records (bytes, as a uint8 array) of TrackEvents on sequence ``seq``
    (track and clock from its defaults), encoded by ``perfetto_kernel``.

    ``delta``: timestamp on the sequence's incremental clock; ``name_iid`` 0 for none;
    ``value``: double_counter_value of every event (counters) or None; ``flow_out`` 0 for
    none; terminating flows as pairs (event index, flow id), sorted by event index.  Times,
    iids and flow ids are below 2**63 (int64).
    """
    from goblueprint.trace import kernels

    bits = np.zeros(0, np.int64) if value is None else np.ascontiguousarray(value, dtype="<f8").view(np.int64)
    return kernels.get().encode_track_events(
        int(seq), _i64(delta), np.ascontiguousarray(kind, dtype=np.uint8), _i64(name_iid), bits,
        _i64(flow_out), _i64(flow_in_event), _i64(flow_in_id),
    )  # fmt: skip


def _i64(a: np.ndarray) -> np.ndarray:
    """A writable contiguous int64 array (the compiled loops' argument type)."""
    return np.require(a, dtype=np.int64, requirements=("C", "W"))


def _varint_bytes(v: int) -> bytes:
    out = bytearray()
    while True:
        byte = v & 0x7F
        v >>= 7
        if v:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


# The few packets that are not track events (descriptors, interned names, a sequence's head),
# written here as Perfetto's protobuf classes would serialise them (known fields by number): the
# generated module of Perfetto's protos held 8 MB of the export's peak memory for a few hundred
# packets.  tests/timeline/test_perfetto_wire.py checks them against those classes.
EXPLICIT = 3  # TrackDescriptor.ChildTracksOrdering.EXPLICIT
UNIT_COUNT = 2  # CounterDescriptor.Unit
UNIT_SIZE_BYTES = 3
_CLOCK = 64  # the first sequence-scoped clock id; each sequence has its own
_BOOTTIME = 6  # Perfetto's default trace clock


def _uint(field: int, v: int) -> bytes:
    """A varint field (V below 0: an int32's or int64's two's complement)."""
    return _varint_bytes(field << 3) + _varint_bytes(v & 0xFFFFFFFFFFFFFFFF)


def _bytes(field: int, body: bytes) -> bytes:
    """A length-delimited field."""
    return _varint_bytes(field << 3 | 2) + _varint_bytes(len(body)) + body


@dataclass
class TrackDescriptor:
    """A track: UUID (its sequence's id too), NAME, under PARENT (0: a top-level track, whose
    children go in EXPLICIT order) at RANK; COUNTER_UNIT for a counter track."""

    uuid: int
    name: str
    rank: int
    parent: int = 0
    counter_unit: int | None = None

    def encode(self) -> bytes:
        out = [_uint(1, self.uuid), _bytes(2, self.name.encode())]
        if self.parent:
            out.append(_uint(5, self.parent))
        if self.counter_unit is not None:
            out.append(_bytes(8, _uint(3, self.counter_unit)))
        if not self.parent:
            out.append(_uint(11, EXPLICIT))
        out.append(_uint(12, self.rank))
        return b"".join(out)


def packet(*fields: bytes) -> bytes:
    """A Trace.packet record of a TracePacket's FIELDS (each encoded, in field number order)."""
    body = b"".join(fields)
    return bytes([_TRACE_PACKET]) + _varint_bytes(len(body)) + body


# The varints below 2**14 (iids, names' lengths): the export interns tens of thousands of names
# (a P's slices are named after the Gs it runs), and a field built of _uint and _bytes cost
# seven times as much.
_VARINT = [_varint_bytes(v) for v in range(1 << 14)]


def _varint_of(v: int) -> bytes:
    return _VARINT[v] if v < len(_VARINT) else _varint_bytes(v)


def _event_names(first: int, names: list[str]) -> bytes:
    """InternedData.event_names: NAMES as iids FIRST, FIRST + 1, ..."""
    out = []
    for iid, name in enumerate(names, first):
        text = name.encode()
        v_iid, v_len = _varint_of(iid), _varint_of(len(text))
        size = _varint_of(2 + len(v_iid) + len(v_len) + len(text))
        # event_names = 2 {iid = 1, name = 2}
        out.append(b"\x12%b\x08%b\x12%b%b" % (size, v_iid, v_len, text))
    return b"".join(out)


# A sequence's clock snapshot: its incremental clock at 0, and the default clock at 0.
_SNAPSHOT = _bytes(
    6,
    _bytes(1, _uint(1, _CLOCK) + _uint(2, 0) + _uint(3, 1)) + _bytes(1, _uint(1, _BOOTTIME) + _uint(2, 0)),
)


def descriptor_packet(seq: int, flags: int, desc: TrackDescriptor, first: bool = False) -> bytes:
    """A packet on sequence SEQ that describes DESC (FIRST: the sequence's first packet)."""
    fields = [_uint(10, seq), _uint(13, flags), _bytes(60, desc.encode())]
    if first:
        fields.append(_uint(87, 1))
    return packet(*fields)


def sequence_head(desc: TrackDescriptor, names: list[str]) -> bytes:
    """The first packet of DESC's sequence: it clears the incremental state, interns NAMES as iids
    1, 2, ... (the field even when there are none, as the protobuf classes wrote it), and sets the
    defaults (the track, the sequence's incremental clock, which starts at 0 = the trace's start)."""
    seq = desc.uuid
    defaults = _bytes(11, _uint(11, seq)) + _uint(58, _CLOCK)
    return packet(
        _SNAPSHOT,
        _uint(10, seq),
        _bytes(12, _event_names(1, names)),
        _uint(13, SEQ_INCREMENTAL_STATE_CLEARED),
        _bytes(59, defaults),
        _uint(87, 1),
    )


def intern_packet(seq: int, first: int, names: list[str]) -> bytes:
    """A packet that interns NAMES on sequence SEQ as iids FIRST, FIRST + 1, ..."""
    return packet(
        _uint(10, seq), _bytes(12, _event_names(first, names)), _uint(13, SEQ_NEEDS_INCREMENTAL_STATE)
    )


Records = bytes | np.ndarray
Encode = Callable[[], Records]


def _deflate(pieces: list[Records | Encode]) -> bytes | bytearray:
    """One zlib stream of PIECES joined, those still to encode encoded first.  libdeflate takes
    its input whole: a chunk is joined once (half a MB), which costs far less than deflating it."""
    return deflate.zlib_compress(b"".join([p() if callable(p) else p for p in pieces]), _LEVEL)


class PacketWriter:
    """Trace.packet records in, deflated ``compressed_packets`` chunks out, in order."""

    def __init__(self, out: IO[bytes], chunk: int = CHUNK) -> None:
        self.out = out
        self.chunk = chunk
        self.pending: list[Records | Encode] = []
        self.size = 0
        self.packets = 0  # packets written, counted before compression
        self.deflating: deque[Future[None]] = deque()
        self.last: Future[None] | None = None  # the chunk submitted last
        self.pool: ThreadPoolExecutor | None = None

    def write(self, records: bytes | np.ndarray, count: int) -> None:
        """Append ``count`` serialised Trace.packet records (bytes or a uint8 array; callers keep blocks
        well under CHUNK)."""
        self.packets += count
        self.pending.append(records)
        self.size += len(records)
        if self.size >= self.chunk:
            self._submit()

    def defer_records(
        self, encode: Callable[[int, int], Records], sizes: np.ndarray, counts: np.ndarray
    ) -> None:
        """Records made by one call, as if each were ``write`` or ``defer`` on its own: record k
        holds COUNTS[k] packets and counts SIZES[k] bytes towards the chunk (its length, or the
        estimate ``defer`` would have had), so chunks are cut where they would have been.  The
        records of one chunk are made by one ``encode(first, end)`` on a worker thread."""
        lo = 0  # the first record not yet handed over
        for r, (size, count) in enumerate(zip(sizes.tolist(), counts.tolist(), strict=True)):
            self.packets += count
            self.size += size
            if self.size >= self.chunk:
                self.pending.append(lambda a=lo, b=r + 1: encode(a, b))
                lo = r + 1
                self._submit()
        end = len(sizes)
        if lo < end:
            self.pending.append(lambda a=lo, b=end: encode(a, b))

    def defer(self, encode: Encode, estimate: int, count: int) -> None:
        """Append the ``count`` records that ``encode()`` returns, made on a worker thread;
        ``estimate``: about their bytes (a function of the input only: it cuts the chunks)."""
        self.packets += count
        self.pending.append(encode)
        self.size += estimate
        if self.size >= self.chunk:
            self._submit()

    def _submit(self) -> None:
        if not self.pending:
            return
        pieces, self.pending = self.pending, []
        self.size = 0
        if self.pool is None:
            self.pool = ThreadPoolExecutor(max_workers=_WORKERS, thread_name_prefix="deflate")
        self.last = self.pool.submit(self._chunk, pieces, self.last)
        self.deflating.append(self.last)
        while len(self.deflating) > _AHEAD:
            self.deflating.popleft().result()

    def _chunk(self, pieces: list[Records | Encode], before: Future[None] | None) -> None:
        """Encode and deflate a chunk, then write it once the chunk before it is written (the
        workers take chunks in order, so that one is never waiting behind this one).  The
        writes are the workers': each gives up the GIL, and the main thread, taking it back
        from the workers, would wait."""
        data = _deflate(pieces)
        if before is not None:
            before.result()  # raises if it failed: nothing is written after a missing chunk
        inner = bytes(_COMPRESSED) + _varint_bytes(len(data))
        self.out.write(b"".join((bytes([_TRACE_PACKET]), _varint_bytes(len(inner) + len(data)), inner, data)))

    def flush(self) -> None:
        """Write everything appended so far; the worker thread ends until the next chunk."""
        try:
            self._submit()
            while self.deflating:
                self.deflating.popleft().result()
        finally:
            self.close()

    def close(self) -> None:
        if self.pool is not None:
            self.pool.shutdown(wait=True, cancel_futures=True)
            self.pool = None
        self.deflating.clear()
        self.last = None
