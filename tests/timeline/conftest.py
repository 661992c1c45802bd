"""Session fixtures of the timeline tests: real traces, analysed once, and Go's view of them."""

from __future__ import annotations

import shutil
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).parent))

import tl_goref as goref  # test helper next to this file

from goblueprint.timeline import ingest as ingest_mod
from goblueprint.timeline.analysis import Analysis, analyse


@pytest.fixture(scope="session")
def trace_path(go_trace: Callable[..., Path]) -> Callable[[str, str], Path]:
    return lambda prog, go: go_trace(prog, go=go)


GOPROGS = Path(__file__).parent / "goprogs"


@pytest.fixture(scope="session")
def gc_trace(go_trace: Callable[..., Path]) -> Callable[[str], Path]:
    """gc_trace(go) -> a trace of goprogs/gcmix: hundreds of GC cycles, assists, tasks, regions."""
    return lambda go: go_trace("gcmix", go=go, prog_root=GOPROGS)


@pytest.fixture(scope="session")
def analysed(trace_path: Callable[[str, str], Path]) -> Callable[[str, str], Analysis]:
    cache: dict[tuple[str, str], Analysis] = {}

    def get(prog: str, go: str) -> Analysis:
        if (prog, go) not in cache:
            cache[(prog, go)] = analyse(trace_path(prog, go), pprof_types=["sched", "sync", "syscall", "net"])
        return cache[(prog, go)]

    return get


@pytest.fixture(scope="session")
def go_reference(trace_path: Callable[[str, str], Path]) -> Callable[[str, str], Any]:
    cache: dict[tuple[str, str], Any] = {}

    def get(prog: str, go: str) -> goref.Reference:
        if (prog, go) not in cache:
            cache[(prog, go)] = goref.reference(trace_path(prog, go))
        return cache[(prog, go)]

    return get


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty ingest cache of the test's own (toolchains stay in the shared cache)."""
    root = tmp_path / "ingest-cache"
    monkeypatch.setattr(ingest_mod, "ingest_root", lambda: root)
    return root


@pytest.fixture
def trace(gc_trace: Callable[[str], Path], tmp_path: Path) -> Path:
    """A real trace of the test's own, small enough to ingest many times (80 KB: Go 1.22's,
    GC cycles, tasks, every pprof type)."""
    copy = tmp_path / "gcmix.trace"
    shutil.copyfile(gc_trace("1.22"), copy)
    return copy
