"""Fixtures of the binary-blueprint tests: Go binaries built once and cached.

Binaries are cached under the goblueprint cache dir, keyed by the test
program's sources, the Go release, GOARCH and linker flags, so a second
session reuses them and a change to any of these rebuilds.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from goblueprint import toolchain
from goblueprint.toolchain.cachelock import publish

PROGS = Path(__file__).parent / "goprogs"
# Releases the differential tests build with; widen with e.g. GOBLUEPRINT_BINARY_RELEASES=1.27,1.22,1.21
# (1.21 needs `goblueprint toolchain install 1.21`; the default two keep the suite fast).
RELEASES = tuple(os.environ.get("GOBLUEPRINT_BINARY_RELEASES", "1.27,1.22").split(","))
ARCHES = ("amd64", "arm64")


def _toolchain(go: str) -> toolchain.Toolchain:
    try:
        return toolchain.find(go)
    except toolchain.ToolchainError:
        return toolchain.install(go)  # locked: parallel workers install it once


def build(prog: str, go: str = "1.27", arch: str = "amd64", ldflags: str = "", buildmode: str = "") -> Path:
    tc = _toolchain(go)
    src = PROGS / prog
    h = hashlib.sha256()
    for path in sorted(src.rglob("*")):
        if path.is_file():
            h.update(path.name.encode() + b"\0" + path.read_bytes())
    h.update(f"{tc.version}|{arch}|{ldflags}".encode() + (f"|{buildmode}".encode() if buildmode else b""))
    out_dir = toolchain.cache_dir() / "test-binaries" / h.hexdigest()[:24]

    def compile_into(tmp: Path) -> None:
        args = ["build", "-o", str(tmp / prog)]
        if ldflags:
            args.append(f"-ldflags={ldflags}")
        if buildmode:
            args.append(f"-buildmode={buildmode}")
        # cgo programs (their directory's name says so) need cgo, which our builds turn off.
        cgo = {"CGO_ENABLED": "1"} if prog.startswith("cgo") else {}
        tc.run([*args, "."], cwd=src, env={"GOOS": "linux", "GOARCH": arch, **cgo})

    return publish(out_dir, compile_into, ready=lambda: (out_dir / prog).exists()) / prog


@pytest.fixture(scope="session")
def go_binary() -> Callable[..., Path]:
    """Factory: go_binary(prog="hello", go="1.27", arch="amd64", ldflags="", buildmode="") -> Path."""
    cache: dict[tuple, Path] = {}

    def get(prog: str = "hello", go: str = "1.27", arch: str = "amd64", ldflags: str = "",
            buildmode: str = "") -> Path:  # fmt: skip
        key = (prog, go, arch, ldflags, buildmode)
        if key not in cache:
            cache[key] = build(prog, go, arch, ldflags, buildmode)
        return cache[key]

    return get


@pytest.fixture(scope="session")
def go_tool() -> Callable[..., str]:
    """Run `go tool ARGS` with the given release; returns stdout."""

    def run(go: str, *args: str) -> str:
        return _toolchain(go).run(["tool", *args]).stdout

    return run


def have_gdb() -> bool:
    return shutil.which("gdb") is not None


def gdb_batch(binary: Path, *commands: str) -> str:
    argv = ["gdb", "-batch", "-nx", "-iex", "set auto-load no"]
    for c in commands:
        argv += ["-ex", c]
    proc = subprocess.run([*argv, str(binary)], capture_output=True, text=True, timeout=300, check=False)
    if proc.returncode != 0:
        raise AssertionError(f"gdb failed ({proc.returncode}): {proc.stderr[-2000:]}")
    return proc.stdout
