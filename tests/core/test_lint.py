"""The tree stays ruff-clean: lint is part of the suite, not a separate habit."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _ruff() -> list[str]:
    exe = Path(sys.executable).with_name("ruff")
    if exe.exists():
        return [str(exe)]
    found = shutil.which("ruff")
    if not found:
        pytest.skip("ruff is not installed (pip install -e '.[test]')")
    return [found]


def test_ruff_check() -> None:
    proc = subprocess.run(
        [*_ruff(), "check", "goblueprint", "tests", "bench"], cwd=ROOT, capture_output=True, text=True
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
