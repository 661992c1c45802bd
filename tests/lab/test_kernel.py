"""`lab observe --kernel`: the kernel recording of capture, beside the lab records."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

SPIN = Path(__file__).resolve().parent.parent / "kernel" / "goprogs" / "spin"


def _observe(out: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "goblueprint", "lab", "observe", "-o", str(out), *extra, "--", "go", "run", ".", "200000"],
        cwd=SPIN, capture_output=True, text=True, stdin=subprocess.DEVNULL, check=False, timeout=600,
    )  # fmt: skip


@pytest.mark.slow
def test_lab_observe_records_the_kernel_and_the_lab_together(tmp_path: Path) -> None:
    out = tmp_path / "lab"
    proc = _observe(out, "--kernel")
    assert proc.returncode == 0, proc.stderr
    if "kernel recording off" in proc.stdout:
        pytest.skip(proc.stdout)  # perf missing or refused here: the test below covers that path
    assert (out / "kernel.data").exists() and (out / "trace.out").exists(), sorted(
        p.name for p in out.iterdir()
    )
    assert list(out.glob("lab.*.bin")), "no lab records next to the kernel recording"
    metrics = subprocess.run(
        [sys.executable, "-m", "goblueprint", "trace", "metrics", "--kernel", str(out), "--json"],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    threads = json.loads(metrics.stdout)["threads"]
    assert threads and all(t["m"] > 0 for t in threads)


def test_lab_observe_without_perf_says_so_and_keeps_the_rest(tmp_path: Path) -> None:
    out = tmp_path / "lab"
    proc = _observe(out, "--kernel", "--perf", str(tmp_path / "no-such-perf"))
    assert proc.returncode == 0, proc.stderr
    said = [ln for ln in proc.stdout.splitlines() if "kernel recording" in ln]
    assert len(said) == 1 and "no-such-perf" in said[0], proc.stdout
    assert list(out.glob("lab.*.bin")) and (out / "trace.out").stat().st_size > 0
    assert not (out / "kernel.data").exists()
