"""Ctrl-C still ends with the summary; a short run's summary says what it could not compare;
the clock anchor measured outside the process is on the trace's clock."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from goblueprint.capture import capture
from goblueprint.cli.capture import summarize
from goblueprint.trace.events import EventKind
from goblueprint.trace.reader import open_trace

pytestmark = pytest.mark.slow
GOPROGS = Path(__file__).resolve().parent / "goprogs"
ROOT = Path(__file__).resolve().parents[2]


def test_ctrl_c_prints_the_summary_and_writes_meta(tmp_path: Path, go_accepts: Callable) -> None:
    out = tmp_path / "cap"
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    # A process group of its own, which receives SIGINT as a terminal's foreground group does
    # on Ctrl-C: goblueprint and the program alike.
    proc = subprocess.Popen(
        [sys.executable, "-m", "goblueprint", "capture", "-o", str(out), "--schedtrace", "20", "--", "go", "run",
         ".", "sleep"],
        cwd=GOPROGS / "mainpkg", env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        start_new_session=True,
    )  # fmt: skip
    try:
        assert proc.stderr is not None
        seen = []
        for line in iter(proc.stderr.readline, ""):
            seen.append(line)
            if "mainpkg stderr: mode sleep" in line:
                break
        assert proc.poll() is None, seen
        os.killpg(proc.pid, signal.SIGINT)
        stdout, rest = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130, "".join(seen) + rest
    assert "capture of: go run . sleep" in stdout and "FAILED: interrupted" in stdout
    assert str(out / "trace.out") in stdout  # the summary names the trace: it is complete
    meta = json.loads((out / "meta.json").read_text())
    assert meta["interrupted"] is True and meta["signal"] == "SIGINT"
    assert go_accepts(out / "trace.out").returncode == 0


def test_run_shorter_than_a_schedtrace_period_says_nothing_was_compared(tmp_path: Path) -> None:
    # mainpkg runs about 0.3 s; with a 5 s period only schedtrace's first line, printed at
    # process start before the trace begins, exists.
    result = capture(["go", "run", "."], tmp_path, schedtrace_ms=5000, cwd=GOPROGS / "mainpkg", no_stdin=True)
    assert result.ok, result.meta["error"]
    text = summarize(result)
    cross = [line for line in text.splitlines() if "cross-check" in line]
    assert len(cross) == 1
    assert "None" not in cross[0]
    assert "no schedtrace sample fell inside the trace" in cross[0] and "every 5000 ms" in cross[0]


def test_process_start_is_measured_on_the_traces_clock(tmp_path: Path) -> None:
    # schedtrace's 0 ms is the runtime's start: after goblueprint started the process and
    # before the overlay (package init) started the trace, on the same CLOCK_MONOTONIC.
    before = time.monotonic_ns()
    result = capture(["go", "run", "."], tmp_path, schedtrace_ms=20, cwd=GOPROGS / "mainpkg", no_stdin=True)
    assert result.ok and result.trace is not None
    start = result.meta["process_start_mono_ns"]
    first = next(iter(open_trace(result.trace)))
    assert first.kind == EventKind.SYNC
    snap = first.sync().clock_snapshot  # Go 1.25+: the trace's own (trace time, mono) pair
    assert snap is not None
    assert before < start
    # The measurement is late by the pipe's latency (milliseconds on a loaded machine, more
    # than the runtime takes from its start to package init), so it may land after the trace's
    # clock snapshot and its first event; the cross-check never places schedtrace's 0 ms there.
    from goblueprint.capture import schedtrace
    from goblueprint.capture.crosscheck import compare

    parsed = schedtrace.parse((result.out_dir / "schedtrace.log").read_text())
    cross = compare(open_trace(result.trace), parsed, start)
    assert cross["alignment"] == "outside"
    assert cross["origin_ns"] == min(start - snap.mono + snap.trace, first.time - 1)
