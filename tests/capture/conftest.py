"""Fixtures of the capture tests: the Go programs here, Go's own trace reader."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
GOPROGS = HERE / "goprogs"
DATA = HERE / "data"
REFERENCE_PARSE = HERE.parents[2] / "shared" / "tools" / "go-reference-parse"


@pytest.fixture(scope="session")
def go_accepts(go_toolchain: Callable) -> Callable[[Path], subprocess.CompletedProcess[str]]:
    """Run Go's own trace reader (shared/tools/go-reference-parse, Go 1.27) on a trace."""
    if not REFERENCE_PARSE.exists():
        pytest.skip(f"{REFERENCE_PARSE} is not present")
    tc = go_toolchain("1.27")
    env = dict(os.environ, GO=str(tc.go), GOROOT=str(tc.goroot), GOTOOLCHAIN="local")

    def run(trace: Path) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            ["bash", str(REFERENCE_PARSE), str(trace)], capture_output=True, text=True, env=env, timeout=600
        )

    return run
