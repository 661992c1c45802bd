"""The standard library's own tests pass under capture as they pass without it.

They are strict about their process: sync's and time's tests are part of
packages that runtime/trace itself imports (a file added to them importing
os/signal or runtime/trace makes an import cycle), and net/http checks after
its tests that no goroutine is left over.  Each runs a few seconds, from
outside any module (by import path) and from inside GOROOT/src (as "."), on
the bundled release and on 1.22.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from goblueprint.capture import capture
from goblueprint.timeline.capture_marks import is_capture_frame
from goblueprint.trace.reader import open_trace

pytestmark = pytest.mark.slow

CASES = [
    ("sync", "TestMutex$|TestWaitGroup"),
    ("time", "TestSleep$|TestAfterFunc$"),
    ("net/http", "TestServeFile$"),
]


def _check(result, go_accepts: Callable) -> None:
    assert result.ok, result.meta["error"]
    assert result.meta["kind"] == "test" and result.meta["exit_status"] == 0
    assert result.trace is not None and go_accepts(result.trace).returncode == 0
    # Nothing of capture's ran in the test binary: no frame from an added file.
    for ev in open_trace(result.trace):
        assert not any(is_capture_frame(f.file) for f in ev.stack.frames())


@pytest.mark.parametrize("go", ["1.27", "1.22"])
@pytest.mark.parametrize(("pkg", "run"), CASES)
def test_stdlib_tests_pass_under_capture_by_import_path(
    pkg: str, run: str, go: str, tmp_path: Path, go_toolchain: Callable, go_accepts: Callable
) -> None:
    go_toolchain(go)
    outside = tmp_path / "not-a-module"
    outside.mkdir()
    result = capture(
        ["go", "test", "-run", run, "-count=1", pkg], tmp_path / "cap", go=go, cwd=outside, no_stdin=True
    )
    _check(result, go_accepts)
    assert result.meta["package"] == pkg


@pytest.mark.parametrize("go", ["1.27", "1.22"])
def test_net_http_from_inside_goroot_src(
    go: str, tmp_path: Path, go_toolchain: Callable, go_accepts: Callable
) -> None:
    tc = go_toolchain(go)
    result = capture(
        ["go", "test", "-run", "TestServeFile$", "."],
        tmp_path,
        go=go,
        cwd=tc.goroot / "src" / "net" / "http",
        no_stdin=True,
    )
    _check(result, go_accepts)
    assert result.meta["package"] == "net/http"
