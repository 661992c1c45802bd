"""The benches' way into the tests' cached Go builds and traces.

tests/conftest.py (and tests/binary) hold the one copy of the build-and-trace
helpers, cached under goblueprint's cache dir; importing them imports pytest.
Without it, a bench that needs them says so in one line instead of a traceback.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parent.parent


def tests_module(name: str, instead: str = "") -> ModuleType:
    """Import NAME ("conftest", "tests.binary.conftest", ...) from the repository's tests.

    INSTEAD says how to do without them, for the one-line message when pytest is missing.
    """
    if importlib.util.find_spec("pytest") is None:
        script = Path(sys.argv[0]).name or "this bench"
        raise SystemExit(
            f"{script}: needs pytest for the tests' cached Go builds (pip install -e '.[test]')"
            + (f", or {instead}" if instead else "")
        )
    for path in (str(ROOT), str(ROOT / "tests")):
        if path not in sys.path:
            sys.path.insert(0, path)
    return importlib.import_module(name)


def trace_goprog(prog: str, go: str, scale: int, env: dict[str, str] | None = None) -> Path:
    """tests/goprogs/PROG built with GO and traced at SCALE with ENV added (cached)."""
    return tests_module("conftest", "name a trace of your own").trace_goprog(prog, go, scale, env=env)
