"""`goblueprint trace stats` against Go's reader on real traces."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from goblueprint.cli import main

pytestmark = pytest.mark.slow

CASES = [
    pytest.param("sched", "1.27", id="sched-go1.27"),
    pytest.param("sched", "1.22", id="sched-go1.22"),
]


def _reference(go_reference, trace: Path) -> dict[str, int]:
    proc = go_reference(trace)
    assert proc.returncode == 0, proc.stderr
    return {k: int(v) for k, v in re.findall(r"(events|transitions|bytes)=(\d+)", proc.stdout)}


def _stats(trace: Path, capsys) -> dict:
    assert main(["trace", "stats", str(trace), "--json"]) == 0
    out = capsys.readouterr().out
    stats = json.loads(out)
    # Sorted keys, so the output is deterministic apart from the measured speed.
    assert out == json.dumps(stats, sort_keys=True, indent=2) + "\n"
    return stats


@pytest.mark.parametrize(("prog", "go"), CASES)
def test_event_count_equals_go_reference(prog, go, go_trace, go_reference, capsys):
    trace = go_trace(prog, go=go)
    ref = _reference(go_reference, trace)
    stats = _stats(trace, capsys)
    assert stats["events"] == ref["events"]
    assert stats["bytes"] == ref["bytes"] == trace.stat().st_size
    assert stats["events_by_kind"].get("STATE_TRANSITION", 0) == ref["transitions"]
    assert sum(stats["events_by_kind"].values()) == stats["events"]
    assert stats["version"] == ("go 1.22" if go == "1.22" else "go 1.26")
    # sched runs with GOMAXPROCS changes, many goroutines and tasks.
    assert stats["generations"] >= 1 and stats["goroutines"] > 10 and stats["procs"] >= 1
    assert stats["time_span_ns"] == stats["last_time_ns"] - stats["first_time_ns"] > 0


def test_small_trace_counts_and_text_output(small_trace, gohelper, capsys):
    trace = small_trace("1.27")
    count, error = gohelper.read(trace)
    assert error is None
    stats = _stats(trace, capsys)
    assert stats["events"] == count
    assert main(["trace", "stats", str(trace)]) == 0
    text = capsys.readouterr().out
    assert f"events       {count}\n" in text and "STATE_TRANSITION" in text
    assert capsys.readouterr().err == ""  # no progress output when stderr is not a terminal


def test_bad_trace_is_one_line_error(tmp_path, capsys):
    bad = tmp_path / "bad.trace"
    bad.write_bytes(b"not a trace at all")
    assert main(["trace", "stats", str(bad)]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("goblueprint: error:")
