"""goblueprint trace batch: per-trace counts equal Go's reader's, the fleet report equals
trace metrics per trace, broken traces are failures (not silence), output is deterministic."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from goblueprint.cli import main

pytestmark = pytest.mark.slow

COUNT = "SELECT trace, count(*) AS n FROM events GROUP BY trace ORDER BY trace"


def batch(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(["trace", "batch", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_event_counts_are_gos_and_failures_are_listed(
    fleet_dir: Path, go_reference: Callable[..., Any], capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = batch(capsys, str(fleet_dir), "--sql", COUNT, "--json", "--workers", "1")
    data = json.loads(out)
    counts = {Path(r["trace"]).name: r["n"] for r in data["rows"]}
    # The directory pattern takes *.trace and *.out, nothing else.
    assert sorted(counts) == ["copy.trace", "half.trace", "new.trace", "old.out"]
    for name in ("new.trace", "old.out", "copy.trace"):
        ref = go_reference(fleet_dir / name)
        assert ref.returncode == 0, ref.stderr
        assert counts[name] == int(re.search(r"events=(\d+)", ref.stdout)[1]), name
    failures = {Path(f["trace"]).name: f for f in data["failures"]}
    assert sorted(failures) == ["cut.trace", "half.trace"]
    for name, f in failures.items():
        assert go_reference(fleet_dir / name).returncode != 0  # Go rejects both files too
        assert isinstance(f["offset"], int) and 0 < f["offset"] <= (fleet_dir / name).stat().st_size
        assert f["error"] and "\n" not in f["error"]
    # The partial trace keeps the events before its failure; the rejected one has none.
    assert counts["half.trace"] > 0 and "cut.trace" not in counts
    lines = err.splitlines()
    assert code == 1 and len(lines) == 2, err
    assert all(line.startswith("goblueprint: error: ") and "(offset " in line for line in lines)
    # The traces table: one row per file named, with its Go version and content hash.
    # One file named twice (here through "x/../") is one trace of the batch.
    again = str(fleet_dir / "x" / ".." / "new.trace")
    (fleet_dir / "x").mkdir(exist_ok=True)
    code, out, _ = batch(capsys, str(fleet_dir / "new.trace"), str(fleet_dir / "old.out"), again, "--json",
                         "--sql", "SELECT trace, go_version, content, error FROM traces ORDER BY trace")  # fmt: skip
    rows = json.loads(out)["rows"]
    assert code == 0 and [r["go_version"] for r in rows] == ["1.26", "1.22"]
    assert all(len(r["content"]) == 32 and r["error"] is None for r in rows)


def test_report_per_trace_equals_trace_metrics(fleet_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    whole = [str(fleet_dir / "new.trace"), str(fleet_dir / "old.out")]
    code, out, _ = batch(capsys, *whole, "--metrics", "--json", "--workers", "1")
    assert code == 0
    report = json.loads(out)
    for trace in whole:
        assert main(["trace", "metrics", trace, "--json"]) == 0
        ref = json.loads(capsys.readouterr().out)
        mine = next(t for t in report["traces"] if t["trace"] == trace)
        assert mine["goroutines"] == ref["goroutines"]
        lat = ref["sched_latency"]
        assert [mine[f"latency_{k}"] for k in ("count", "p50", "p90", "p99", "max")] == [
            lat[k] for k in ("count", "p50", "p90", "p99", "max")
        ]
        pauses = [{k: p[k] for k in ("reason", "gc", "count", "total", "p50", "p90", "p99", "max")}
                  for p in report["pauses"]["per_trace"] if p["trace"] == trace]  # fmt: skip
        assert pauses == [{k: p[k] for k in pauses[0]} for p in ref["pauses"]] and pauses
        procs = [{"p": p["p"], "running_g": p["running_g"], "utilization": p["utilization"]}
                 for p in report["procs"] if p["trace"] == trace]  # fmt: skip
        assert procs == [{k: p[k] for k in ("p", "running_g", "utilization")} for p in ref["procs"]]
        # Latency by start function adds up to the trace's whole distribution.
        by_fn = [r for r in report["sched_latency"]["per_trace"] if r["trace"] == trace]
        assert sum(r["count"] for r in by_fn) == lat["count"]
        assert sum(r["total"] for r in by_fn) == lat["total"]
        assert max(r["max"] for r in by_fn) == lat["max"]
    worst = report["pauses"]["worst"]
    assert [w["duration_ns"] for w in worst] == sorted((w["duration_ns"] for w in worst), reverse=True)
    assert worst[0]["duration_ns"] == max(t["stw_max"] for t in report["traces"])


def test_report_json_is_deterministic_and_html_is_offline(
    fleet_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    page = tmp_path / "report.html"
    argv = [str(fleet_dir / "*.trace"), str(fleet_dir / "*.out"), "--metrics", "--json", "--workers", "2"]
    first = batch(capsys, *argv, "-o", str(page))
    second = batch(capsys, *argv)
    assert first == second and first[0] == 1  # same bytes, whichever worker finished first
    text = page.read_text()
    assert "<svg" in text and "<script" not in text
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", text)  # nothing fetched
    for name in ("new.trace", "old.out", "half.trace"):
        assert name in text
    assert "Failures" in text and "cut.trace" in text


def test_patterns_and_flags_fail_in_one_line(fleet_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = batch(capsys, str(fleet_dir / "*.nothing"))
    assert (
        code == 1
        and out == ""
        and err.strip() == f"goblueprint: error: no file matches {fleet_dir}/*.nothing"
    )
    code, _, err = batch(capsys, str(fleet_dir / "missing.trace"))
    assert code == 1 and "cannot read" in err and len(err.splitlines()) == 1
    code, _, err = batch(capsys, str(fleet_dir / "new.trace"), "-o", "x.html")
    assert code == 1 and "give --metrics too" in err
    code, _, err = batch(capsys, str(fleet_dir / "new.trace"), "--sql", "SELECT nope FROM events")
    assert code == 1 and err.startswith("goblueprint: error: SQL error:") and len(err.splitlines()) == 1


def test_a_missing_cluster_package_is_one_line(
    fleet_dir: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util,
        "find_spec",
        lambda name, *a: None if name in ("ray", "distributed") else real(name, *a),
    )
    for flag, package in (("--ray", "ray"), ("--dask", "dask[distributed]")):
        code, out, err = batch(capsys, str(fleet_dir / "new.trace"), flag, "local")
        assert code == 1 and out == ""
        assert err.splitlines() == [
            f"goblueprint: error: {flag} needs the {package} package: pip install 'goblueprint[fleet]' "
            f"(or pip install '{package}')"
        ]
