"""Capturing real programs and tests that know nothing about tracing.

Every trace must be accepted by Go's own reader (shared/tools/go-reference-parse),
and schedtrace.log must hold only the program's scheduler lines: not the go
command's, not the program's own stderr, not a child process's.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from goblueprint.capture import capture, schedtrace
from goblueprint.capture.crosscheck import clock_origin, compare
from goblueprint.trace.events import EventKind, GoState, ResourceKind
from goblueprint.trace.reader import open_trace

GOPROGS = Path(__file__).resolve().parent / "goprogs"
ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.slow


def _cli(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    return subprocess.run(
        [sys.executable, "-m", "goblueprint", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


def _check_log(path: Path, expect_first_lines: int = 1) -> schedtrace.Schedtrace:
    text = path.read_text()
    parsed = schedtrace.parse(text)  # strict: a foreign line fails here
    assert len(parsed.samples) >= 2
    # One process, one clock: "SCHED 0ms" once, times never going back.
    assert sum(1 for s in parsed.samples if s.t_ms == 0) == expect_first_lines
    times = [s.t_ms for s in parsed.samples]
    assert times == sorted(times)
    return parsed


@pytest.mark.parametrize("go", ["1.27", "1.22"])
def test_go_run_of_a_main_package(
    go: str, tmp_path: Path, go_accepts: Callable, go_toolchain: Callable
) -> None:
    tc = go_toolchain(go)
    out = tmp_path / "cap"
    proc = _cli(
        ["capture", "-o", str(out), "--go", go, "--schedtrace", "20", "--", "go", "run", "."],
        GOPROGS / "mainpkg",
    )
    assert proc.returncode == 0, proc.stderr
    # The program's own output reaches the terminal, untouched, and only it.
    assert "mainpkg stdout: total" in proc.stdout
    assert "mainpkg stderr: mode return" in proc.stderr
    assert "SCHED" not in proc.stderr
    assert str(out / "trace.out") in proc.stdout  # the summary names the files
    meta = json.loads((out / "meta.json").read_text())
    assert meta["go_version"] == tc.version
    assert meta["exit_status"] == 0 and meta["error"] is None
    assert meta["trace_via"] == "overlay" and meta["kind"] == "run"
    assert meta["command"] == ["go", "run", "."]
    parsed = _check_log(out / "schedtrace.log")
    assert meta["gomaxprocs"] == parsed.samples[0].counters["gomaxprocs"]
    assert meta["schedtrace_lines"] == len((out / "schedtrace.log").read_text().splitlines())
    ref = go_accepts(out / "trace.out")
    assert ref.returncode == 0, ref.stdout + ref.stderr
    assert "events=" in ref.stdout
    # The program's source tree is left as it was.
    assert sorted(p.name for p in (GOPROGS / "mainpkg").iterdir()) == ["go.mod", "main.go"]


# 1.22 and 1.23 take the two exit-hook variants of the overlay (runtime.addExitHook,
# internal/runtime/exithook); 1.27 is the bundled release.
@pytest.mark.parametrize("go", ["1.27", "1.23", "1.22"])
def test_os_exit_keeps_the_trace_and_reports_the_failure(
    go: str, tmp_path: Path, go_accepts: Callable, go_toolchain: Callable
) -> None:
    go_toolchain(go)  # installed on first use
    out = tmp_path / "cap"
    proc = _cli(["capture", "-o", str(out), "--go", go, "--", "go", "run", ".", "exit3"], GOPROGS / "mainpkg")
    assert proc.returncode == 1
    assert "exited with status 3" in proc.stderr
    meta = json.loads((out / "meta.json").read_text())
    assert meta["exit_status"] == 3
    assert meta["files"]["trace"] == "trace.out"
    assert go_accepts(out / "trace.out").returncode == 0


def _saw_signal_delivery(trace: Path) -> bool:
    """True if the trace holds os/signal waking a handler: it was flushed after the signal.

    A trace cut by the signal instead ends at the last generation the runtime had
    flushed (about once a second), which Go's reader accepts too; only a trace
    stopped by the handler holds the delivery itself.
    """
    for ev in open_trace(trace):
        if ev.kind != EventKind.STATE_TRANSITION:
            continue
        st = ev.state_transition()
        if st.resource.kind == ResourceKind.GOROUTINE and st.new == GoState.RUNNABLE:
            if any(f.func == "os/signal.process" for f in ev.stack.frames()):
                return True
    return False


def test_sigterm_on_timeout_flushes_the_trace(tmp_path: Path, go_accepts: Callable) -> None:
    result = capture(["go", "run", ".", "sleep"], tmp_path, timeout=3, cwd=GOPROGS / "mainpkg", no_stdin=True)
    assert result.meta["timed_out"] is True
    assert result.meta["signal"] == signal.SIGTERM.name  # re-raised with the default action
    assert not result.ok and "timed out" in result.meta["error"]
    assert result.trace is not None
    assert go_accepts(result.trace).returncode == 0
    assert _saw_signal_delivery(result.trace)


def _has_frame(trace: Path, func: str) -> bool:
    """True if some event's stack, or a created goroutine's start stack, holds FUNC."""
    for ev in open_trace(trace):
        stacks = [ev.stack]
        if ev.kind == EventKind.STATE_TRANSITION:
            stacks.append(ev.state_transition().stack)
        if any(f.func == func for stack in stacks for f in stack.frames()):
            return True
    return False


def test_timeout_of_a_test_stops_it_through_test_timeout_with_a_complete_trace(
    tmp_path: Path, go_accepts: Callable, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Nothing in a test binary handles signals; its own -test.timeout alarm stops the trace
    # (m.after) before it panics, so --timeout becomes that alarm.
    monkeypatch.setenv("TESTPKG_SLEEP", "1")
    result = capture(
        ["go", "test", "-run", "TestSleep"], tmp_path, timeout=2, cwd=GOPROGS / "testpkg", no_stdin=True
    )
    assert result.meta["timed_out"] is True and "timed out" in result.meta["error"]
    assert result.meta["exit_status"] == 2 and result.meta["signal"] is None  # the alarm's panic
    assert result.trace is not None
    assert go_accepts(result.trace).returncode == 0
    # Only a trace stopped by the alarm holds the alarm goroutine stopping it.
    assert _has_frame(result.trace, "testing.(*M).startAlarm.func1")


def test_child_process_lines_stay_out_of_the_log(tmp_path: Path) -> None:
    result = capture(
        ["go", "run", ".", "child"], tmp_path, schedtrace_ms=20, cwd=GOPROGS / "mainpkg", no_stdin=True
    )
    assert result.ok, result.meta["error"]
    assert result.schedtrace is not None
    _check_log(result.schedtrace, expect_first_lines=1)


def test_go_test_of_a_test_package(tmp_path: Path, go_accepts: Callable) -> None:
    out = tmp_path / "cap"
    command = ["go", "test", "-v", "-run", "TestParallelSum|TestSpawn"]
    proc = _cli(["capture", "-o", str(out), "--schedtrace", "20", "--", *command], GOPROGS / "testpkg")
    assert proc.returncode == 0, proc.stderr
    assert "testpkg: TestParallelSum ran" in proc.stdout  # -v and -run reached the test binary
    assert "testpkg: child done" in proc.stdout
    assert "testpkg: TestOther ran" in proc.stdout  # the child's own output still reaches the terminal
    meta = json.loads((out / "meta.json").read_text())
    assert meta["kind"] == "test" and meta["trace_via"] == "test-flag"
    # The child test binary printed no scheduler lines: one clock, one "SCHED 0ms".
    parsed = _check_log(out / "schedtrace.log")
    assert go_accepts(out / "trace.out").returncode == 0
    cross = compare(open_trace(out / "trace.out"), parsed, clock_origin(out))
    assert cross["alignment"] == "outside" and cross["compared"] >= 1


def test_binary_that_starts_its_own_trace(
    tmp_path: Path, go_toolchain: Callable, go_accepts: Callable
) -> None:
    tc = go_toolchain("1.27")
    binary = tmp_path / "selftrace"
    tc.run(["build", "-o", str(binary), "."], cwd=GOPROGS / "selftrace")
    result = capture([str(binary)], tmp_path / "cap", no_stdin=True)
    assert result.ok, result.meta["error"]
    assert result.meta["kind"] == "binary" and result.meta["go_version"] == tc.version
    assert go_accepts(result.trace).returncode == 0
    # Built from source, it is recognised as tracing itself and gets no overlay.
    again = capture(["go", "run", "."], tmp_path / "cap2", cwd=GOPROGS / "selftrace", no_stdin=True)
    assert again.ok and again.meta["trace_via"] == "program"


def test_binary_without_tracing_says_no_trace(tmp_path: Path, go_toolchain: Callable) -> None:
    binary = tmp_path / "plain"
    go_toolchain("1.27").run(["build", "-o", str(binary), "."], cwd=GOPROGS / "mainpkg")
    result = capture([str(binary)], tmp_path / "cap", schedtrace_ms=20, no_stdin=True)
    assert result.meta["exit_status"] == 0
    assert result.trace is None and "no trace was written" in result.meta["error"]
    assert result.schedtrace is not None
    _check_log(result.schedtrace)


def test_crosscheck_against_the_trace(tmp_path: Path) -> None:
    result = capture(
        ["go", "run", "."], tmp_path, schedtrace_ms=10, procs=2, cwd=GOPROGS / "mainpkg", no_stdin=True
    )
    assert result.ok and result.trace is not None and result.schedtrace is not None
    parsed = schedtrace.parse(result.schedtrace.read_text())
    cross = compare(open_trace(result.trace), parsed, clock_origin(result.out_dir))
    assert cross["alignment"] == "outside"  # the process start measured by capture
    assert cross["compared"] >= 3
    for row in cross["rows"]:
        # Both views of one run of 2 Ps: idle Ps within 0..2 on both sides.
        assert 0 <= row["trace_idleprocs"] <= 2 and 0 <= row["sched_idleprocs"] <= 2
        assert row["trace_runnable"] >= 0
    # Samples taken while the trace ran are all compared; the mismatch counts are counts of rows.
    assert cross["idleprocs_mismatches"] <= cross["compared"]
    assert cross["idleprocs_mismatches"] == sum(r["idleprocs_agrees"] is False for r in cross["rows"])
    assert cross["idleprocs_instant_differs"] == sum(
        r["sched_idleprocs"] != r["trace_idleprocs"] for r in cross["rows"]
    )
    for row in cross["rows"]:
        lo, hi = row["trace_runnable_range"]
        assert lo <= row["trace_runnable"] <= hi  # the instant lies inside its window
    # The same comparison through `goblueprint schedtrace LOG --trace TRACE --json`.
    proc = _cli(["schedtrace", "--json", "--trace", str(result.trace), str(result.schedtrace)], tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["crosscheck"] == json.loads(json.dumps(cross))


def test_command_that_does_not_build(tmp_path: Path) -> None:
    proc = _cli(["capture", "-o", str(tmp_path), "--", "go", "run", "."], GOPROGS / "broken")
    assert proc.returncode == 1
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("goblueprint: error: go build failed")
    assert "undefinedFunction" in lines[0]


def test_test_package_given_to_go_run_is_refused(tmp_path: Path) -> None:
    proc = _cli(["capture", "-o", str(tmp_path), "--", "go", "run", "."], GOPROGS / "testpkg")
    assert proc.returncode == 1
    assert proc.stderr.strip() == "goblueprint: error: . is package testpkg, not a main package"


def test_go_run_of_files_and_a_package_directory(tmp_path: Path, go_accepts: Callable) -> None:
    # Files named on the command line: go ignores build constraints there, so only
    # the exit-hook variant of this release may be added (1.22: runtime.addExitHook).
    files = capture(
        ["go", "run", "main.go"], tmp_path / "files", go="1.22", cwd=GOPROGS / "mainpkg", no_stdin=True
    )
    assert files.ok, files.meta["error"]
    assert files.trace is not None and go_accepts(files.trace).returncode == 0
    # A main package named by its directory, from outside its module.
    pkg = capture([str(GOPROGS / "mainpkg"), "exit3"], tmp_path / "dir", cwd=tmp_path, no_stdin=True)
    assert pkg.meta["kind"] == "package" and pkg.meta["exit_status"] == 3
    assert pkg.trace is not None and go_accepts(pkg.trace).returncode == 0


def test_sigterm_to_goblueprint_reaches_the_program(tmp_path: Path, go_accepts: Callable) -> None:
    out = tmp_path / "cap"
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    proc = subprocess.Popen(
        [sys.executable, "-m", "goblueprint", "capture", "-o", str(out), "--schedtrace", "20", "--", "go", "run",
         ".", "sleep"],
        cwd=GOPROGS / "mainpkg", env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        # Wait until the program has run its main (it says so on stderr), then stop goblueprint.
        assert proc.stderr is not None
        seen = []
        for line in iter(proc.stderr.readline, ""):
            seen.append(line)
            if "mainpkg stderr: mode sleep" in line:
                break
        assert proc.poll() is None, seen
        proc.send_signal(signal.SIGTERM)
        _, rest = proc.communicate(timeout=120)
        err = "".join(seen) + rest
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 1
    assert "killed by signal SIGTERM" in err
    meta = json.loads((out / "meta.json").read_text())
    assert meta["signal"] == "SIGTERM"  # the program ended before goblueprint wrote this
    assert any("passed it on" in note for note in meta["notes"])
    trace = out / "trace.out"
    assert go_accepts(trace).returncode == 0
    assert _saw_signal_delivery(trace)


def test_scheddetail_capture(tmp_path: Path) -> None:
    result = capture(
        ["go", "run", "."],
        tmp_path,
        schedtrace_ms=20,
        scheddetail=True,
        procs=3,
        cwd=GOPROGS / "mainpkg",
        no_stdin=True,
    )
    assert result.ok and result.meta["scheddetail"] is True and result.meta["gomaxprocs"] == 3
    assert result.schedtrace is not None
    parsed = _check_log(result.schedtrace)
    for sample in parsed.samples:
        assert sample.procs is not None and [p["id"] for p in sample.procs] == [0, 1, 2]
        assert sample.ms and sample.gs
        assert any(g["id"] == 1 for g in sample.gs)  # the main goroutine is listed while main runs
