"""goblueprint demo end to end (a subset of views, to keep the run short)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from goblueprint.cli import main

pytestmark = pytest.mark.slow


def test_demo_captures_the_workload_and_writes_an_index(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "blueprint"
    only = "schedtrace.html,schedtrace.json,trace-stats.json,states-p.svg"
    assert main(["demo", "-o", str(out), "--only", only, "-j", "2"]) == 0
    printed = capsys.readouterr().out
    meta = json.loads((out / "capture" / "meta.json").read_text())
    assert meta["error"] is None and meta["trace_via"] == "overlay"
    assert meta["gomaxprocs"] >= 1
    # The summary is made from the capture: its numbers are meta.json's.
    assert f"GOMAXPROCS {meta['gomaxprocs']} (schedtrace)" in printed
    assert f"({meta['schedtrace_lines']} lines)" in printed
    # The workload changes GOMAXPROCS: schedtrace saw it.
    samples = json.loads((out / "schedtrace.json").read_text())["samples"]
    assert {s["gomaxprocs"] for s in samples} >= {1}
    index = (out / "index.html").read_text()
    assert f"open {out / 'index.html'}" in printed
    for name in only.split(","):
        assert f"href='{name}'" in index, name
    for href in re.findall(r"href='([^']+)'", index):
        assert (out / href).exists(), href
    stats = json.loads((out / "trace-stats.json").read_text())
    assert stats
    # Both views of one run, aligned by the process start capture measured, mostly agree.
    cross = json.loads((out / "capture" / "crosscheck.json").read_text())
    assert cross["alignment"] == "outside" and cross["compared"] >= 5
    assert cross["idleprocs_mismatches"] <= cross["compared"] // 2
    assert cross["runqueue_mismatches"] <= cross["compared"] // 2


def test_demo_rejects_unknown_view(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["demo", "-o", str(tmp_path), "--only", "nope.html"]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "unknown view nope.html" in err[0]
