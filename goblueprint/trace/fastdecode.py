"""numba-compiled twin of ``wire.decode_timed_batch`` (the reader's hottest loop).

Same contract and same results as the pure-Python decoder (a test compares
them batch by batch, errors included); it fills preallocated arrays in one
compiled loop and converts them to Python lists with ``tolist`` (C speed).
Used for large traces, where numba's import and cache-load time pays off.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from goblueprint.trace import spec
from goblueprint.trace.wire import _NARGS

_NARGS_ARR = np.array(_NARGS, dtype=np.int8)

# Error codes of the compiled loop -> Go's messages.
_ERR_NONE, _ERR_TYPE, _ERR_UNTIMED, _ERR_TS, _ERR_ARG = 0, 1, 2, 3, 4

_TWO63F = float(1 << 63)
_INT64_MIN = -(1 << 63)


@njit(cache=True, nogil=True)
def _decode(buf, start, end, freq, base, nargs_of, typs, times, args):  # pragma: no cover - compiled
    nspecs = nargs_of.shape[0]
    n = 0
    pos = start
    last = base
    while pos < end:
        evpos = pos
        typ = buf[pos]
        if typ >= nspecs:
            return n, _ERR_TYPE, evpos, typ
        na = nargs_of[typ]
        if na < 0:
            return n, _ERR_UNTIMED, evpos, typ
        pos += 1
        for i in range(na + 1):
            # binary.Uvarint over buf[pos:end]
            x = np.uint64(0)
            s = np.uint64(0)
            ok = False
            k = 0
            while k < 10:
                if pos >= end:
                    break
                b = buf[pos]
                pos += 1
                if b < 0x80:
                    if k == 9 and b > 1:
                        break
                    x |= np.uint64(b) << s
                    ok = True
                    break
                x |= np.uint64(b & 0x7F) << s
                s += np.uint64(7)
                k += 1
            if not ok:
                return n, (_ERR_TS if i == 0 else _ERR_ARG), evpos, typ
            if i == 0:
                # time = freq.mul(dt) + lastTs (re-initialised from the batch time when 0).
                if last == 0:
                    last = base
                f = float(x) * freq
                if -_TWO63F <= f < _TWO63F:
                    t = np.int64(f)
                else:
                    t = np.int64(_INT64_MIN)
                last = last + t  # int64 arithmetic wraps, as Go's does
                times[n] = last
            else:
                args[n, i - 1] = x
        for i in range(na, 4):
            args[n, i] = np.uint64(0)
        typs[n] = typ
        n += 1
    return n, _ERR_NONE, pos, 0


def decode_timed_batch(
    buf, start: int, end: int, freq: float, last_ts: int
) -> tuple[tuple[list, list, list], str | None, int]:
    """Drop-in replacement for wire.decode_timed_batch; ``buf`` must be a uint8 numpy array."""
    # At least 2 bytes per timed event: type and timestamp delta.
    cap = (end - start) // 2 + 1
    typs = np.empty(cap, dtype=np.uint8)
    times = np.empty(cap, dtype=np.int64)
    args = np.empty((cap, 4), dtype=np.uint64)
    n, code, off, typ = _decode(buf, start, end, freq, np.int64(last_ts), _NARGS_ARR, typs, times, args)
    evs = (typs[:n].tolist(), times[:n].tolist(), args[:n].tolist())
    if code == _ERR_NONE:
        return evs, None, off
    if code == _ERR_TYPE:
        msg = f"found invalid event type: {typ}"
    elif code == _ERR_UNTIMED:
        msg = f"found event without a timestamp: type={typ}"
    elif code == _ERR_TS:
        msg = "found invalid uvarint for timestamp"
    else:
        msg = "found invalid uvarint"
    return evs, msg, off


def as_array(data) -> np.ndarray:
    """A zero-copy uint8 view of a bytes-like trace buffer."""
    return np.frombuffer(data, dtype=np.uint8)


__all__ = ["as_array", "decode_timed_batch", "spec"]
