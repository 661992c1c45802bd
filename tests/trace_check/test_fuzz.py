"""Malformed traces: our reader agrees with Go's and fails only with TraceError.

Real traces are mutated (byte flips, truncations, insertions, trailing garbage).
For each mutant, Go's reader (tests/trace_check/gohelper) gives the number of
events it yields and its verdict; ours must give the same number and the same
verdict, fail only with a TraceError, and finish within a time budget (a hang is
a failure, not a stuck suite).  Every TraceError must name a byte offset inside
the file in its message, ordering and table-ID validation errors included.
"""

from __future__ import annotations

import functools
import random
import signal
import subprocess
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from goblueprint.errors import TraceError
from goblueprint.trace.reader import Reader
from goblueprint.trace.wire import batch_layout

pytestmark = pytest.mark.slow

# Seconds one mutant may take to read; the small trace reads in well under one.  The clock
# only runs once the reader is warm (see _warm_reader): a first read that compiles the
# kernels (numba's JIT when no C compiler built them) or waits for a busy machine is not a hang.
BUDGET = 20


@pytest.fixture(scope="module", autouse=True)
def _warm_reader(small_trace) -> None:
    for go in ("1.22", "1.27"):
        for _ in Reader(_bytes_of(small_trace(go))):
            pass


class Hang(Exception):
    pass


def _alarm(signum, frame):
    raise Hang(f"reading took longer than {BUDGET}s")


def read_ours(data: bytes) -> tuple[int, TraceError | None]:
    """(events yielded, the TraceError or None); anything else propagates."""
    previous = signal.signal(signal.SIGALRM, _alarm)
    signal.setitimer(signal.ITIMER_REAL, BUDGET)
    n = 0
    try:
        for _ in Reader(data):
            n += 1
    except TraceError as exc:
        return n, exc
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
    return n, None


def assert_agrees_with_go(data: bytes, path: Path, gohelper) -> tuple[int, TraceError | None]:
    path.write_bytes(data)
    go_count, go_error = gohelper.read(path)
    count, error = read_ours(data)
    assert (error is None) == (go_error is None), f"ours: {error}; Go: {go_error}"
    assert count == go_count, f"events before the verdict: ours {count}, Go {go_count} (Go: {go_error})"
    if error is not None:
        assert_names_offset(error)
        assert 0 <= error.offset <= len(data), str(error)
    return count, error


def assert_names_offset(error: TraceError | None) -> None:
    assert error is not None
    assert "offset " in str(error), str(error)
    assert error.offset is not None and f"offset {error.offset}" in str(error), str(error)


def _mutate(data: bytes, how: str, draw) -> bytes:
    n = len(data)
    if how == "flip":
        out = bytearray(data)
        for _ in range(draw(st.integers(1, 4))):
            out[draw(st.integers(0, n - 1))] ^= draw(st.integers(1, 255))
        return bytes(out)
    if how == "truncate":
        return data[: draw(st.integers(0, n - 1))]
    if how == "insert":
        pos = draw(st.integers(0, n))
        return data[:pos] + draw(st.binary(min_size=1, max_size=16)) + data[pos:]
    return data + draw(st.binary(min_size=1, max_size=64))  # trailing garbage


@functools.cache
def _bytes_of(path: Path) -> bytes:
    return path.read_bytes()


@settings(
    max_examples=120,
    deadline=None,
    derandomize=True,  # the same mutants on every run: a failure is reproducible
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(data=st.data())
def test_mutants_fail_like_go(data, small_trace, gohelper, tmp_path_factory):
    go = data.draw(st.sampled_from(["1.22", "1.27"]), label="go")
    how = data.draw(st.sampled_from(["flip", "truncate", "insert", "trailing"]), label="mutation")
    mutant = _mutate(_bytes_of(small_trace(go)), how, data.draw)
    path = tmp_path_factory.mktemp("mutant") / "mutant.trace"
    assert_agrees_with_go(mutant, path, gohelper)


# Prints each stdin line (hex) as the helper prints a failed read: "N FAILURE %q".
_GO_QUOTER = """package main

import (
\t"bufio"
\t"encoding/hex"
\t"fmt"
\t"os"
)

func main() {
\tin := bufio.NewScanner(os.Stdin)
\tfor n := 0; in.Scan(); n++ {
\t\tb, err := hex.DecodeString(in.Text())
\t\tif err != nil {
\t\t\tpanic(err)
\t\t}
\t\tfmt.Printf("%d FAILURE %q\\n", n, string(b))
\t}
}
"""

# Error texts whose quoting is tricky: every byte alone and all together, the text of the
# mutant that once broke the harness, invalid UTF-8 (lone continuation and lead bytes,
# surrogates, overlong forms, past U+10FFFF), and runes strconv.Quote escapes (\u00ad,
# \u2028, \ufeff, \U0010ffff) or keeps (é, 日本, 😀) beside quotes and backslashes.
_TRICKY = [
    *(bytes([b]) for b in range(256)),
    bytes(range(256)),
    b"\x05\x1f2/tmp/pytest-of-root/mutant.trace",
    b"\xc3", b"\xc3(", b"\xed\xa0\x80", b"\xf0\x82\x82\xac", b"\xf4\x90\x80\x80", b"\x80\xbf\xfe\xff",
    "\u00ad\u2028\ufeff\U0010ffff\u0085\x7f".encode(),
    "é 日本 😀 \"q\" 'a' `b` \\".encode(),
]  # fmt: skip


def test_go_quoted_errors_read_back_exactly(gohelper, go_toolchain, tmp_path):
    # The harness reads Go's %q-quoted error text; JSON's rules differ (\x05, \a, \v, \xff
    # are not JSON), so it must unquote as Go's strconv.Unquote does, byte for byte.
    tc = go_toolchain("1.27")
    (tmp_path / "main.go").write_text(_GO_QUOTER)
    proc = subprocess.run(
        [str(tc.go), "run", "main.go"], cwd=tmp_path, env=tc.env({"GOFLAGS": ""}),
        input="".join(b.hex() + "\n" for b in _TRICKY).encode(), capture_output=True, check=True, timeout=300,
    )  # fmt: skip
    lines = proc.stdout.splitlines()
    assert len(lines) == len(_TRICKY)
    for n, (want, line) in enumerate(zip(_TRICKY, lines, strict=True)):
        count, error = gohelper.parse_read(line)
        assert count == n and error is not None, line
        assert error.encode("utf-8", "surrogateescape") == want, line


# Truncated Go 1.22 traces (no end-of-generation marker) whose errors are found by
# the ordering engine or the table-ID checks, not while decoding bytes:
# (Go release of the trace, fraction of it kept).
def _batches(data: bytes) -> list[tuple[int, int, int, int]]:
    """(generation, M, offset, end) of each cleanly readable batch."""
    return [(gen, b.m, b.offset, b.end) for gen, b in batch_layout(data)]


# Go 1.22's format has no end-of-generation marker, so a prefix of whole batches is read as
# a complete generation and its missing batches surface as ordering or table errors.
@pytest.mark.parametrize("go", ["1.22"])
def test_semantic_errors_say_where(go, small_trace, gohelper, tmp_path):
    # Ordering and table-ID errors are found after decoding, yet must still name the byte
    # offset of an event inside the kept bytes, besides the generation and the M.  Cutting
    # the trace after whole batches rules out decoding errors, so whatever error Go and we
    # report for such a prefix comes from ordering or from the tables.  Which cuts fail
    # depends on how the runtime laid out this run's batches, so many cuts are tried and
    # at least one must give an error that names its M.
    data = _bytes_of(small_trace(go))
    # Offsets just past each batch but the last: cutting there leaves whole batches only.
    ends = [end for _, _, _, end in _batches(data)][:-1]
    assert len(ends) >= 4, "the small trace should have several batches"
    step = max(1, len(ends) // 12)
    located = 0
    for cut in ends[::step]:
        mutant = data[:cut]
        _, error = assert_agrees_with_go(mutant, tmp_path / "m.trace", gohelper)
        if error is None:
            continue
        assert error.generation is not None and f"generation {error.generation}" in str(error)
        if error.m is None:
            continue
        # The offset is inside a batch of the M and generation named (for "failed to
        # advance", the front event of the earliest stuck M), walked here independently.
        assert (error.generation, error.m) in _batches_around(mutant, error.offset), str(error)
        located += 1
    assert located, "no whole-batch prefix of the small trace gave an ordering or table error"


def _batches_around(data: bytes, offset: int) -> list[tuple[int, int]]:
    """(generation, M) of each cleanly readable batch whose bytes hold ``offset``."""
    return [(gen, m) for gen, m, start, end in _batches(data) if start <= offset < end]


def _sched_mutant(data: bytes, how: str) -> bytes:
    rng = random.Random(how)  # seeded by the case name: the same mutant on every run
    if how.startswith("cut"):
        return data[: len(data) * int(how[3:]) // 100]
    if how.startswith("flip"):
        out = bytearray(data)
        for _ in range(3):
            out[rng.randrange(16, len(data))] ^= rng.randrange(1, 256)
        return bytes(out)
    return data + bytes(rng.randrange(256) for _ in range(40))


@pytest.mark.parametrize("how", ["cut33", "cut67", "flip-a", "flip-b", "flip-c", "trailing"])
def test_sched_mutants_fail_like_go(how, go_trace, gohelper, tmp_path):
    # The lead's sched workload has more kinds of events (syscalls, netpoller, GOMAXPROCS
    # change, GC) than the small trace, so a few fixed mutants of it as well.
    data = _bytes_of(go_trace("sched", go="1.27"))
    assert_agrees_with_go(_sched_mutant(data, how), tmp_path / "m.trace", gohelper)
