"""Fixtures of the capture tests: the Go programs here, Go's own trace reader."""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
GOPROGS = HERE / "goprogs"
DATA = HERE / "data"


@pytest.fixture(scope="session")
def go_accepts(
    go_reference: Callable[..., subprocess.CompletedProcess[str]],
) -> Callable[[Path], subprocess.CompletedProcess[str]]:
    """Run Go's own trace reader (shared/tools/go-reference-parse, Go 1.27) on a trace."""
    return go_reference
