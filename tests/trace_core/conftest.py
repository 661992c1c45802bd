"""Fixtures of the trace-core tests: Go's own `go tool trace -d=parsed` as the oracle.

The reference tool is cmd/trace of the Go 1.27.3 toolchain (its -d=parsed text is
the format `goblueprint trace dump` reproduces), built once into the cache dir.
"""

from __future__ import annotations

import hashlib
import os
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from goblueprint import toolchain
from goblueprint.errors import TraceError
from goblueprint.toolchain.cachelock import publish
from goblueprint.trace.reader import Reader

ROOT = Path(__file__).resolve().parents[2]
GO_TRACE_TESTDATA = Path("src/internal/trace/testdata")


class Outcome:
    """What a reader printed (the -d=parsed lines) and the error it ended with, if any."""

    def __init__(self, text: bytes, error: str | None) -> None:
        self.text = text
        self.error = error

    def __repr__(self) -> str:
        return f"Outcome({len(self.text)} bytes, error={self.error!r})"


def _build_trace_tool(tc: toolchain.Toolchain) -> Path:
    out = toolchain.cache_dir() / "test-bins" / f"go-tool-trace-go{tc.version}"
    return publish(out, lambda tmp: tc.run(["build", "-o", str(tmp), "cmd/trace"], cwd=tc.goroot / "src"))


@pytest.fixture(scope="session")
def reference_toolchain() -> toolchain.Toolchain:
    return toolchain.find("1.27")


@pytest.fixture(scope="session")
def go_parsed(reference_toolchain) -> Callable[[Path], Outcome]:
    """Run Go 1.27.3's `go tool trace -d=parsed FILE`: its stdout and its error line."""
    tool = _build_trace_tool(reference_toolchain)

    def run(path: Path) -> Outcome:
        proc = subprocess.run([str(tool), "-d=parsed", str(path)], capture_output=True, timeout=600)
        if proc.returncode == 0:
            return Outcome(proc.stdout, None)
        # logAndDie prints the error followed by a newline.
        return Outcome(proc.stdout, proc.stderr.decode("utf-8", "surrogateescape").rstrip("\n"))

    return run


# Go's reader never checks a CPU sample's stack ID; `go tool trace -d` then panics printing
# the sample. Ours stops at that sample with an error naming the ID (events.py _stack_pcs).
_GO_CPU_STACK_PANIC = re.compile(r"panic: expected id (\d+) in trace\.stack table\n")


def same_error(got: str | None, want: str | None) -> bool:
    """Error messages equal; Go's "failed to advance" dump lists maps in random order, so
    for it the first line must match and the other lines as a multiset.  Where Go's dump
    panics on a CPU sample's unknown stack, ours must name that stack ID."""
    if got == want or got is None or want is None:
        return got == want
    if (m := _GO_CPU_STACK_PANIC.match(want)) is not None:
        return got == f"found invalid stack ID {m.group(1)} for event CPUSample"
    g, w = got.rstrip("\n").splitlines(), want.rstrip("\n").splitlines()
    return g[0] == w[0] and sorted(g) == sorted(w)


def our_parsed(data: bytes) -> Outcome:
    """Our Reader on DATA, printed as -d=parsed prints (in process: faster than the CLI)."""
    lines: list[str] = []
    error = None
    try:
        for ev in Reader(data):
            lines.append(ev.string())
    except TraceError as err:
        error = err.message
    text = "".join(s + "\n" for s in lines).encode("utf-8", "surrogateescape")
    return Outcome(text, error)


def run_cli(*args: str) -> subprocess.CompletedProcess[bytes]:
    """The real command line, as a user runs it."""
    return subprocess.run(
        [sys.executable, "-m", "goblueprint", *args], capture_output=True, timeout=600, cwd=ROOT
    )


@pytest.fixture(scope="session")
def go_testdata(reference_toolchain) -> Path:
    return reference_toolchain.goroot / GO_TRACE_TESTDATA


GOPROGS = Path(__file__).resolve().parent / "goprogs"


def _digest(prog_dir: Path, extra: str) -> str:
    h = hashlib.sha256(extra.encode())
    for path in sorted(prog_dir.rglob("*")):
        if path.is_file():
            h.update(path.relative_to(prog_dir).as_posix().encode())
            h.update(path.read_bytes())
    return h.hexdigest()[:16]


def _trace_own_prog(prog: str, go: str, env: dict[str, str] | None = None, find=toolchain.find) -> Path:
    """Build and run tests/trace_core/goprogs/PROG with Go release GO (cached by content)."""
    tc = find(go)
    prog_dir = GOPROGS / prog
    env = env or {}
    key = f"trace_core-{prog}-go{tc.version}-{_digest(prog_dir, repr(sorted(env.items())))}"
    out = toolchain.cache_dir() / "test-traces" / f"{key}.trace"

    def record(tmp: Path) -> None:
        binary = tmp.with_name("prog")
        tc.run(["build", "-o", str(binary), "."], cwd=prog_dir)
        run_env = dict(os.environ, GOBLUEPRINT_TRACE_OUT=str(tmp), **env)
        subprocess.run([str(binary)], env=run_env, check=True, timeout=600, capture_output=True)

    return publish(out, record)


@pytest.fixture(scope="session")
def own_trace(go_toolchain) -> Callable[..., Path]:
    """Factory: own_trace("coro", "1.27", {"GODEBUG": "traceallocfree=1"}) -> trace path.

    Toolchains come from the shared go_toolchain fixture (installed on first use)."""

    def run(prog: str, go: str, env: dict[str, str] | None = None) -> Path:
        return _trace_own_prog(prog, go, env, find=go_toolchain)

    return run


def batch_bounds(data: bytes) -> list[int]:
    """Offsets where batches start: where the generation logic (spill, EndOfGeneration) acts."""
    from goblueprint.trace import wire

    return [b.offset for _, b in wire.batch_layout(data)]


def cut_points(data: bytes) -> list[int]:
    # Inside the header, just after it, spread over the body, and at (and one byte
    # past) the first batch boundaries and every EndOfGeneration/generation change.
    size = len(data)
    points = {3, 16, 17, 40} | {size * k // 7 for k in range(1, 7)} | {size - 1}
    bounds = batch_bounds(data)
    for i, off in enumerate(bounds):
        if i < 4 or data[off] == 52 or (i and _gen_at(data, off) != _gen_at(data, bounds[i - 1])):
            points |= {off, off + 1}
    return sorted(p for p in points if p < size)


def _gen_at(data: bytes, off: int) -> int:
    from goblueprint.trace import wire

    _, gen, _ = wire.read_batch(data, off, len(data))
    return gen
