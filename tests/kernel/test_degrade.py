"""Where perf is missing or may not record, one line says so and the rest of the capture works."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from goblueprint.capture import capture
from goblueprint.kernel import perf

GOPROGS = Path(__file__).resolve().parent / "goprogs"

REFUSING_PERF = """#!/bin/sh
echo "Error:" >&2
echo "Access to performance monitoring and observability operations is limited." >&2
echo "Consider adjusting /proc/sys/kernel/perf_event_paranoid setting to open" >&2
exit 255
"""


def _run_cli(out: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "goblueprint", "capture", "-o", str(out), "--schedtrace", "0", "--kernel", *extra, "--", "go", "run", ".", "1000"],
        cwd=GOPROGS / "spin", capture_output=True, text=True, stdin=subprocess.DEVNULL, check=False,
    )  # fmt: skip


def test_missing_perf_binary_is_one_line_and_the_capture_goes_on(tmp_path: Path) -> None:
    proc = _run_cli(tmp_path / "cap", "--perf", str(tmp_path / "no-such-perf"))
    assert proc.returncode == 0, proc.stderr
    lines = [ln for ln in proc.stdout.splitlines() if "kernel recording" in ln]
    assert len(lines) == 1 and "no perf binary" in lines[0] and "no-such-perf" in lines[0], proc.stdout
    meta = json.loads((tmp_path / "cap" / "meta.json").read_text())
    assert meta["error"] is None and meta["files"]["trace"] == "trace.out"
    assert meta["kernel"] is None
    assert not (tmp_path / "cap" / "kernel.data").exists()
    assert (tmp_path / "cap" / "trace.out").stat().st_size > 0


def test_perf_refused_by_paranoid_setting_names_the_cause(tmp_path: Path) -> None:
    fake = tmp_path / "perf"
    fake.write_text(REFUSING_PERF)
    fake.chmod(0o755)
    result = capture(
        ["go", "run", ".", "1000"], tmp_path / "cap", schedtrace_ms=0, kernel=True, perf=str(fake),
        cwd=GOPROGS / "spin", no_stdin=True, stdout=subprocess.DEVNULL,
    )  # fmt: skip
    assert result.ok
    notes = [n for n in result.meta["notes"] if "kernel recording" in n]
    assert any("perf_event_paranoid" in n for n in notes), notes
    assert result.trace is not None and result.trace.stat().st_size > 0


def test_probe_honours_the_environment_variable(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv(perf.PERF_ENV, str(tmp_path / "absent"))
    found = perf.probe()
    assert not found.ok and found.problems == [
        f"kernel recording off: no perf binary ({tmp_path / 'absent'}); install linux-perf"
    ]


def test_metrics_on_a_folder_without_kernel_recording_is_a_one_line_error(tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "goblueprint", "trace", "metrics", "--kernel", str(tmp_path)], capture_output=True, text=True,
        check=False,
    )  # fmt: skip
    assert proc.returncode != 0
    assert proc.stderr.strip().splitlines() == [
        f"goblueprint: error: {tmp_path} has no kernel.json: capture with --kernel"
    ]
