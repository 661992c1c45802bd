"""Many threads first seen in one advance: the ordering gives each cursor it tries a row of
its M, and one advance may try every cursor (each must wait) before one can go."""

from __future__ import annotations

import subprocess
import sys

import pytest

from goblueprint.trace import spec
from goblueprint.trace.wire import uvarint as uv

NO_THREAD = (1 << 64) - 1


def _ev(typ: int, *args: int) -> bytes:
    return bytes([typ]) + b"".join(uv(a) for a in args)


def _batch(m: int, payload: bytes) -> bytes:
    return bytes([spec.EV_EVENT_BATCH]) + uv(1) + uv(m) + uv(0) + uv(len(payload)) + payload


def many_threads_trace(n: int) -> bytes:
    """A Go 1.22 trace Go's reader accepts: threads 1..N each unblock one goroutine early, before
    thread 0 (late) has given that goroutine's status: every thread's first event waits, so the
    advance that gives goroutine 101's status has tried (and given a row to) all N threads."""
    main = _ev(spec.EV_PROC_STATUS, 1, 0, spec.PROC_RUNNING) + _ev(
        spec.EV_GO_STATUS, 1, 1, 0, spec.GO_RUNNING
    )
    main += b"".join(_ev(spec.EV_GO_STATUS, 1000 if k == 1 else 1, 100 + k, NO_THREAD, spec.GO_WAITING)
                     for k in range(1, n + 1))  # fmt: skip
    threads = b"".join(_batch(k, _ev(spec.EV_GO_UNBLOCK, 10 + k, 100 + k, 1, 0)) for k in range(1, n + 1))
    return (
        spec.header(spec.GO122)
        + _batch(0, main)
        + threads
        + _batch(NO_THREAD, _ev(spec.EV_FREQUENCY, 15625000))
    )


@pytest.mark.parametrize("n", [40, 300])
def test_many_threads_first_seen_in_one_advance_read_as_go(n, go_parsed, tmp_path):
    # The room kept for one advance was four rows: the 17th thread filled the threads' hash
    # table (a loop that never ended) and wrote past the end of the thread table.
    path = tmp_path / f"threads-{n}.trace"
    path.write_bytes(many_threads_trace(n))
    want = go_parsed(path)
    assert want.error is None, want.error
    assert want.text.count(b"Waiting->Runnable") == n  # every thread's unblock, in Go's order
    got = subprocess.run(
        [sys.executable, "-m", "goblueprint", "trace", "dump", str(path)], capture_output=True, timeout=120
    )
    assert got.returncode == 0, got.stderr[-2000:]
    assert got.stdout == want.text
