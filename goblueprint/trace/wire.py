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


# ---------------------------------------------------------------------------
# Timed events of an event batch

_SPECS = spec.SPECS
_NSPECS = len(_SPECS)
# Per event type: number of varint arguments after the timestamp, or -1 if not timed.
_NARGS: tuple[int, ...] = tuple(len(s.args) - 1 if (s.args and s.is_timed_event) else -1 for s in _SPECS)


def decode_timed_batch(
    buf, start: int, end: int, freq: float, last_ts: int
) -> tuple[tuple[list, list, list], str | None, int]:
    """Decode every timed event of one batch in one loop.

    Returns ((types, times, args), error, error_offset): three parallel lists,
    times already converted to nanoseconds and accumulated as Go's batchCursor
    does (each delta scaled on its own, then added), args a fresh
    ``[a0, a1, a2, a3]`` per event (the ordering engine may rewrite it).  If
    the batch is malformed, the events before the bad one are returned with
    Go's error message; the cursor raises it only when it reaches that point,
    so the failure surfaces exactly where Go's would.
    """
    typs: list[int] = []
    times: list[int] = []
    argl: list[list[int]] = []
    out = (typs, times, argl)
    add_typ = typs.append
    add_time = times.append
    add_args = argl.append
    nargs_of = _NARGS
    nspecs = _NSPECS
    two63 = _TWO63F
    imax = INT64_MAX
    imin = INT64_MIN
    base = last_ts
    pos = start
    while pos < end:
        evpos = pos
        typ = buf[pos]
        if typ >= nspecs:
            return out, f"found invalid event type: {typ}", evpos
        nargs = nargs_of[typ]
        if nargs < 0:
            return out, f"found event without a timestamp: type={typ}", evpos
        pos += 1
        # The timestamp delta and the arguments: binary.Uvarint over the rest
        # of the batch, with the one-byte case first.
        vals = []
        for i in range(nargs + 1):
            b = buf[pos] if pos < end else 0x80
            if b < 0x80:
                pos += 1
                vals.append(b)
                continue
            x = 0
            s = 0
            k = 0
            while True:
                if pos >= end or k == 10:
                    return (
                        out,
                        ("found invalid uvarint" if i else "found invalid uvarint for timestamp"),
                        evpos,
                    )
                b = buf[pos]
                pos += 1
                if b < 0x80:
                    if k == 9 and b > 1:
                        return (
                            out,
                            ("found invalid uvarint" if i else "found invalid uvarint for timestamp"),
                            evpos,
                        )
                    vals.append(x | (b << s))
                    break
                x |= (b & 0x7F) << s
                s += 7
                k += 1
        # time = freq.mul(dt) + lastTs; Go re-initialises lastTs from the batch
        # time whenever it is 0.
        if last_ts == 0:
            last_ts = base
        x = vals[0] * freq
        if -two63 <= x < two63:
            t = int(x) + last_ts
        else:
            t = imin + last_ts
        if t > imax or t < imin:
            t = wrap64(t)
        last_ts = t
        del vals[0]
        vals.extend(_PAD[nargs])
        add_typ(typ)
        add_time(t)
        add_args(vals)
    return out, None, pos


_PAD = tuple((0,) * (4 - n) for n in range(5))


def event_offsets(buf, start: int, end: int) -> list[int]:
    """File offsets of the timed events of one batch, as decode_timed_batch walks them.

    Only used to say where an error is (never on the hot path): it re-walks the
    batch, skipping varints, and stops where the decoder would stop (at the end
    or at the first malformed event), so index i is the decoder's event i.
    Works on any indexable byte buffer (bytes, memoryview, uint8 numpy array).
    """
    offs: list[int] = []
    nargs_of = _NARGS
    pos = start
    while pos < end:
        typ = int(buf[pos])
        if typ >= _NSPECS or nargs_of[typ] < 0:
            break
        evpos = pos
        pos += 1
        for _ in range(nargs_of[typ] + 1):
            k = 0
            while pos < end and k < 10 and buf[pos] >= 0x80:
                pos += 1
                k += 1
            if pos >= end or k == 10 or (k == 9 and buf[pos] > 1):
                return offs  # a bad varint: the decoder stops before this event
            pos += 1
        offs.append(evpos)
    return offs
