"""Perfetto's protobuf wire format for track events, encoded column-wise with numpy.

A trace of tens of millions of slices cannot afford one protobuf object (or one Python
call) per event, so the hot packets, TrackEvents on a sequence that carries its track
and clock in TracePacketDefaults, are laid out for a whole block of events at once: the
length of every packet is computed from its fields' varint sizes, the packets' offsets
are a cumulative sum, and each field is then written at its offset into one byte buffer.
Everything else (descriptors, interned names, clock snapshots) is rare and goes through
Perfetto's own Python protos.

``PacketWriter`` streams the packets: it gathers them in chunks of about ``CHUNK`` bytes
and writes each chunk deflated as one ``TracePacket.compressed_packets``, which is how
Perfetto's tracing service itself writes a compressed trace (trace processor and
ui.perfetto.dev inflate them while reading).  Deflate runs on a worker thread (zlib
releases the GIL) while the next chunk is encoded; at most ``_AHEAD`` chunks wait for
it, so memory stays bounded by a few chunks.
"""

from __future__ import annotations

import zlib
from collections import deque
from concurrent.futures import Future, ThreadPoolExecutor
from typing import IO

import numpy as np

CHUNK = 1 << 20  # uncompressed bytes per compressed_packets: deflate's gain has flattened out long before
_LEVEL = 6
_AHEAD = 2  # chunks deflating or deflated but not yet written

# TracePacket fields (perfetto/trace/trace_packet.proto)
_TRACE_PACKET = 0x0A  # Trace.packet = 1, length-delimited
_TIMESTAMP = 0x40  # timestamp = 8, varint
_SEQUENCE_ID = 0x50  # trusted_packet_sequence_id = 10, varint
_TRACK_EVENT = 0x5A  # track_event = 11, length-delimited
_FLAGS = 0x68  # sequence_flags = 13, varint
_COMPRESSED = (0x92, 0x03)  # compressed_packets = 50, length-delimited
SEQ_INCREMENTAL_STATE_CLEARED = 1
SEQ_NEEDS_INCREMENTAL_STATE = 2
# TrackEvent fields (perfetto/trace/track_event/track_event.proto)
_TYPE = 0x48  # type = 9, varint
_NAME_IID = 0x50  # name_iid = 10, varint
_DOUBLE_VALUE = (0xE1, 0x02)  # double_counter_value = 44, fixed64
_FLOW_ID = (0xF9, 0x02)  # flow_ids = 47, fixed64
_TERMINATING_FLOW_ID = (0x81, 0x03)  # terminating_flow_ids = 48, fixed64


def varint_size(v: np.ndarray) -> np.ndarray:
    """Bytes of each value's varint (values >= 0)."""
    v = np.asarray(v, dtype=np.uint64)
    size = np.ones(len(v), dtype=np.int64)
    top = int(v.max(initial=0))
    for k in range(1, 10):
        if top < 1 << (7 * k):
            break  # no value needs another byte: skip the remaining passes
        size += v >= np.uint64(1 << (7 * k))
    return size


def _put_varint(buf: np.ndarray, pos: np.ndarray, v: np.ndarray, size: np.ndarray) -> None:
    """Write varints ``v`` (of ``size`` bytes) at ``pos``, one byte position at a time."""
    v = np.asarray(v, dtype=np.uint64)
    for k in range(int(size.max(initial=0))):
        on = size > k
        byte = (v[on] >> np.uint64(7 * k)) & np.uint64(0x7F)
        more = size[on] > k + 1
        buf[pos[on] + k] = byte.astype(np.uint8) | (more.astype(np.uint8) << 7)


def _put_bytes(buf: np.ndarray, pos: np.ndarray, tag: tuple[int, ...]) -> None:
    for k, b in enumerate(tag):
        buf[pos + k] = b


def _put_fixed64(buf: np.ndarray, pos: np.ndarray, raw: np.ndarray) -> None:
    """``raw``: 8-byte little-endian values (float64 or uint64) as protobuf's fixed64."""
    b = np.ascontiguousarray(raw).view(np.uint8).reshape(-1, 8)
    buf[pos[:, None] + np.arange(8)] = b


def track_events(
    seq: int,
    delta: np.ndarray,
    kind: np.ndarray,
    name_iid: np.ndarray,
    value: np.ndarray | None,
    flow_out: np.ndarray,
    flow_in_event: np.ndarray,
    flow_in_id: np.ndarray,
) -> bytes:
    """Trace.packet records of TrackEvents on sequence ``seq`` (track and clock from its defaults).

    ``delta``: timestamp on the sequence's incremental clock; ``name_iid`` 0 for none;
    ``value``: double_counter_value of every event (counters) or None; ``flow_out`` 0 for
    none; terminating flows as pairs (event index, flow id), sorted by event index.
    """
    n = len(delta)
    if n == 0:
        return b""
    delta = np.asarray(delta, dtype=np.uint64)
    has_name = name_iid > 0
    has_out = flow_out > 0
    n_in = np.bincount(flow_in_event, minlength=n).astype(np.int64)
    name_size = varint_size(name_iid)
    body = 2 + np.where(has_name, 1 + name_size, 0) + np.where(has_out, 10, 0) + 10 * n_in
    if value is not None:
        body += 10
    body_size = varint_size(body)
    ts_size = varint_size(delta)
    seq_bytes = _varint_bytes(seq)
    seq_size = len(seq_bytes)
    packet = (1 + ts_size) + (1 + seq_size) + 2 + (1 + body_size + body)
    packet_size = varint_size(packet)
    record = 1 + packet_size + packet
    start = np.zeros(n, dtype=np.int64)
    np.cumsum(record[:-1], out=start[1:])
    buf = np.zeros(int(start[-1] + record[-1]), dtype=np.uint8)

    cur = start.copy()
    buf[cur] = _TRACE_PACKET
    cur += 1
    _put_varint(buf, cur, packet, packet_size)
    cur += packet_size
    buf[cur] = _TIMESTAMP
    _put_varint(buf, cur + 1, delta, ts_size)
    cur += 1 + ts_size
    _put_bytes(buf, cur, (_SEQUENCE_ID, *seq_bytes))
    cur += 1 + seq_size
    buf[cur] = _FLAGS
    buf[cur + 1] = SEQ_NEEDS_INCREMENTAL_STATE
    cur += 2
    buf[cur] = _TRACK_EVENT
    _put_varint(buf, cur + 1, body, body_size)
    cur += 1 + body_size
    buf[cur] = _TYPE
    buf[cur + 1] = kind
    cur += 2
    at = cur[has_name]
    buf[at] = _NAME_IID
    _put_varint(buf, at + 1, name_iid[has_name], name_size[has_name])
    cur[has_name] += 1 + name_size[has_name]
    if value is not None:
        _put_bytes(buf, cur, _DOUBLE_VALUE)
        _put_fixed64(buf, cur + 2, np.asarray(value, dtype="<f8"))
        cur += 10
    at = cur[has_out]
    _put_bytes(buf, at, _FLOW_ID)
    _put_fixed64(buf, at + 2, np.asarray(flow_out[has_out], dtype="<u8"))
    cur[has_out] += 10
    if len(flow_in_event):
        first = np.zeros(n + 1, dtype=np.int64)
        np.cumsum(n_in, out=first[1:])
        within = np.arange(len(flow_in_event)) - first[flow_in_event]
        at = cur[flow_in_event] + 10 * within
        _put_bytes(buf, at, _TERMINATING_FLOW_ID)
        _put_fixed64(buf, at + 2, np.asarray(flow_in_id, dtype="<u8"))
    return buf.tobytes()


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


class PacketWriter:
    """Trace.packet records in, deflated ``compressed_packets`` chunks out, in order."""

    def __init__(self, out: IO[bytes], chunk: int = CHUNK) -> None:
        self.out = out
        self.chunk = chunk
        self.pending: list[bytes] = []
        self.size = 0
        self.packets = 0  # packets written, counted before compression
        self.deflating: deque[Future[bytes]] = deque()
        self.pool: ThreadPoolExecutor | None = None

    def write(self, records: bytes, count: int) -> None:
        """Append ``count`` serialised Trace.packet records (callers keep blocks well under CHUNK)."""
        self.packets += count
        self.pending.append(records)
        self.size += len(records)
        if self.size >= self.chunk:
            self._submit()

    def _submit(self) -> None:
        if not self.pending:
            return
        data = b"".join(self.pending)
        self.pending.clear()
        self.size = 0
        if self.pool is None:
            self.pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="deflate")
        self.deflating.append(self.pool.submit(zlib.compress, data, _LEVEL))
        while len(self.deflating) > _AHEAD:
            self._put(self.deflating.popleft().result())

    def _put(self, data: bytes) -> None:
        inner = bytes(_COMPRESSED) + _varint_bytes(len(data))
        self.out.write(bytes([_TRACE_PACKET]) + _varint_bytes(len(inner) + len(data)) + inner)
        self.out.write(data)

    def flush(self) -> None:
        """Write everything appended so far; the worker thread ends until the next chunk."""
        try:
            self._submit()
            while self.deflating:
                self._put(self.deflating.popleft().result())
        finally:
            self.close()

    def close(self) -> None:
        if self.pool is not None:
            self.pool.shutdown(wait=True, cancel_futures=True)
            self.pool = None
        self.deflating.clear()
