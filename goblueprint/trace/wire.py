"""Low-level decoding of the trace wire format: header, varints, batches.

Everything here works on a ``bytes``/``memoryview`` buffer and integer
positions (no per-byte slicing, no I/O).  Error messages are Go's, because the
golden tests of Go's reader are regular expressions over them; they are raised
as ``WireError`` (message + offset) and the generation reader adds context.

The semantics mirror Go's ``encoding/binary.ReadUvarint`` (stream style: an
``EOF`` before the first byte, ``unexpected EOF`` inside a varint, overflow
after 10 bytes or a 10th byte > 1) and ``binary.Uvarint`` (slice style, used
inside event batches).  Non-minimal varints (``0x80 0x00``) are accepted, as Go
accepts them.
"""

from __future__ import annotations

import math

from goblueprint.errors import TraceError, UnsupportedTraceVersion
from goblueprint.trace import spec

EOF = "EOF"
UNEXPECTED_EOF = "unexpected EOF"
OVERFLOW = "binary: varint overflows a 64-bit integer"

INT64_MIN = -(1 << 63)
INT64_MAX = (1 << 63) - 1
_U64 = 1 << 64
_TWO63F = float(1 << 63)

NO_THREAD = -1


class WireError(Exception):
    """A decoding failure with Go's message; not public (wrapped in TraceError)."""

    def __init__(self, message: str, offset: int | None = None, gen: int | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.offset = offset
        self.gen = gen


def read_uvarint(buf, pos: int, end: int) -> tuple[int, int]:
    """binary.ReadUvarint over buf[pos:end]: returns (value, new pos) or raises WireError.

    The error message is exactly Go's ("EOF", "unexpected EOF", overflow).
    """
    x = 0
    s = 0
    for i in range(10):
        if pos >= end:
            raise WireError(UNEXPECTED_EOF if i > 0 else EOF, pos)
        b = buf[pos]
        pos += 1
        if b < 0x80:
            if i == 9 and b > 1:
                raise WireError(OVERFLOW, pos)
            return x | (b << s), pos
        x |= (b & 0x7F) << s
        s += 7
    raise WireError(OVERFLOW, pos)


def put_uvarint(out: bytearray, value: int) -> None:
    """binary.AppendUvarint: the minimal encoding that read_uvarint reads back."""
    while value >= 0x80:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)


def uvarint(value: int) -> bytes:
    """The minimal uvarint encoding of value, as bytes."""
    out = bytearray()
    put_uvarint(out, value)
    return bytes(out)


# ---------------------------------------------------------------------------
# Header


def read_header(buf) -> tuple[int, int]:
    """Parse ``go 1.N trace\\0\\0\\0``; return (version, offset of first batch).

    Mirrors version.ReadHeader (a Fscanf of that format): a missing prefix or
    number is "bad file format", an unknown number is "unknown or unsupported".
    """
    n = len(buf)
    prefix = spec.HEADER_PREFIX
    bad = "bad file format: not a Go execution trace?"
    if n < len(prefix) or bytes(buf[: len(prefix)]) != prefix:
        raise TraceError(bad, offset=0)
    pos = len(prefix)
    start = pos
    if pos < n and buf[pos] in b"+-":
        pos += 1
    digits = pos
    while pos < n and 0x30 <= buf[pos] <= 0x39:
        pos += 1
    if pos == digits:
        raise TraceError(bad, offset=start)
    version = int(bytes(buf[start:pos]))
    suffix = spec.HEADER_SUFFIX
    if bytes(buf[pos : pos + len(suffix)]) != suffix:
        raise TraceError(bad, offset=pos)
    pos += len(suffix)
    if not spec.version_valid(version):
        raise TraceError(f"unknown or unsupported trace version go 1.{version}", offset=start)
    if version in spec.V1_VERSIONS:
        raise UnsupportedTraceVersion(
            f"trace version go 1.{version} (written by Go 1.21 or older): format version not supported yet",
            offset=start,
        )
    return version, pos


# ---------------------------------------------------------------------------
# Batches


class Batch:
    """One batch: its header fields and where its data lies in the buffer."""

    __slots__ = ("end", "exp", "first", "m", "offset", "start", "time")

    def __init__(self, m: int, time: int, start: int, end: int, exp: int, first: int, offset: int) -> None:
        self.m = m  # M (thread) ID; NO_THREAD for an EndOfGeneration marker
        self.time = time  # raw batch timestamp (clock units)
        self.start = start  # data range in the buffer
        self.end = end
        self.exp = exp  # experiment ID, 0 for ordinary batches
        self.first = first  # first data byte, or -1 if the batch is empty
        self.offset = offset  # offset of the batch header in the file

    def is_kind(self, ev: int) -> bool:
        return self.exp == 0 and self.first == ev

    def is_sync_batch(self, version: int) -> bool:
        if self.exp != 0 or self.first < 0:
            return False
        if version < spec.GO125:
            return self.first == spec.EV_FREQUENCY
        return self.first == spec.EV_SYNC


def batch_layout(buf) -> list[tuple[int, Batch]]:
    """(generation, batch) of every batch that reads cleanly, in file order.

    Stops quietly at the end of the buffer or at the first malformed batch: this
    is a map of what the bytes hold (for tools and tests that cut or point into
    a trace), not a validator.  Raises WireError only for a bad header.
    """
    _, pos = read_header(buf)
    end = len(buf)
    out: list[tuple[int, Batch]] = []
    while True:
        try:
            b, gen, pos = read_batch(buf, pos, end)
        except WireError:
            return out
        if b is None:
            return out
        out.append((gen, b))


def read_batch(buf, pos: int, end: int) -> tuple[Batch | None, int, int]:
    """Go's readBatch at ``pos``: returns (batch, gen, new pos); (None, 0, pos) at a clean EOF.

    Raises WireError with Go's message for a malformed or truncated batch.  As
    in Go, a trace that ends right after the experimental-batch byte counts as
    a clean EOF (Go returns the bare io.EOF of ReadByte there).
    """
    offset = pos
    if pos >= end:
        return None, 0, pos
    typ = buf[pos]
    pos += 1
    if typ == spec.EV_END_OF_GENERATION:
        return Batch(NO_THREAD, 0, pos - 1, pos, 0, typ, offset), 0, pos
    if typ != spec.EV_EVENT_BATCH and typ != spec.EV_EXPERIMENTAL_BATCH:
        raise WireError(f"expected batch event, got event {typ}", offset)
    exp = 0
    if typ == spec.EV_EXPERIMENTAL_BATCH:
        if pos >= end:
            return None, 0, pos
        exp = buf[pos]
        pos += 1
    gen = 0
    try:
        what = "gen"
        gen, pos = read_uvarint(buf, pos, end)
        what = "M ID"
        m, pos = read_uvarint(buf, pos, end)
        what = "timestamp"
        ts, pos = read_uvarint(buf, pos, end)
        what = "size"
        size, pos = read_uvarint(buf, pos, end)
    except WireError as err:
        raise WireError(f"error reading batch {what}: {err.message}", err.offset, gen) from None
    if size > spec.MAX_BATCH_SIZE:
        raise WireError(f"invalid batch size {size}, maximum is {spec.MAX_BATCH_SIZE}", offset, gen)
    if pos + size > end:
        raise WireError(f"failed to read full batch: read {end - pos} but wanted {size}", offset, gen)
    # ThreadID is an int64 in Go.
    if m > INT64_MAX:
        m -= _U64
    first = buf[pos] if size else -1
    return Batch(m, ts, pos, pos + size, exp, first, offset), gen, pos + size


# ---------------------------------------------------------------------------
# Clock conversion


def freq_from_hz(f: int) -> float:
    """Nanoseconds per clock unit, as Go computes it (1.0 / (float64(f) / 1e9))."""
    d = float(f) / 1e9
    if d == 0.0:
        return math.inf  # Go's float division by zero
    return 1.0 / d


def mul(freq: float, t: int) -> int:
    """Go's frequency.mul: Time(float64(t) * float64(f)), with amd64's conversion of out-of-range."""
    x = float(t) * freq
    if -_TWO63F <= x < _TWO63F:
        return int(x)
    return INT64_MIN  # NaN/Inf/out of range: CVTTSD2SI's "integer indefinite"


def wrap64(x: int) -> int:
    """Two's-complement wraparound to int64 (Go's Time arithmetic)."""
    return ((x - INT64_MIN) % _U64) + INT64_MIN
