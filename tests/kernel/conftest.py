"""Fixtures of the kernel tests: a forced CPU-oversubscribed capture under perf."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from goblueprint.capture import capture
from goblueprint.capture.run import CaptureResult
from goblueprint.kernel import perf

HERE = Path(__file__).resolve().parent
GOPROGS = HERE / "goprogs"

# A competitor pinned to the first core: with GOMAXPROCS=8 and 8 spinning goroutines the
# Ms outnumber the cores anyway; the pinned loop makes sure one core is contended even
# on a machine with many.
BUSY = "import os\nos.sched_setaffinity(0, {min(os.sched_getaffinity(0))})\nwhile True:\n    pass\n"


@pytest.fixture(scope="session")
def oversubscribed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[CaptureResult]:
    probe = perf.probe(locks=True)
    if not probe.ok:
        pytest.skip(f"perf cannot record here: {'; '.join(probe.problems)}")
    out = tmp_path_factory.mktemp("oversubscribed")
    busy = subprocess.Popen([sys.executable, "-c", BUSY])
    try:
        result = capture(
            ["go", "run", ".", "40000000"],
            out,
            procs=8,
            schedtrace_ms=0,
            kernel=True,
            locks=True,
            cwd=GOPROGS / "spin",
            no_stdin=True,
            stdout=subprocess.DEVNULL,
        )
    finally:
        busy.kill()
        busy.wait()
    assert result.ok, result.meta
    yield result
