"""trace metrics / sql and the Parquet tables: against Go's numbers, deterministic, one-line errors."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from typing import Any

import duckdb
import pytest

from goblueprint.cli import main
from goblueprint.timeline import metrics
from goblueprint.timeline.tables import write_parquet

pytestmark = pytest.mark.slow


def run_cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_metrics_json_groups_equal_gos_summary(trace_path: Any, go_reference: Any, capsys: Any) -> None:
    trace = trace_path("sched", "1.27")
    code, out, _ = run_cli(capsys, "trace", "metrics", str(trace), "--json")
    assert code == 0
    data = json.loads(out)
    ref = go_reference("sched", "1.27").summaries.values()
    expected: dict[str, dict[str, int]] = {}
    for g in ref:
        grp = expected.setdefault(g["name"], {"count": 0, "exec": 0, "sched_wait": 0, "block_total": 0,
                                              "syscall": 0, "syscall_block": 0, "gc_assist": 0})  # fmt: skip
        grp["count"] += 1
        grp["exec"] += g["exec"]
        grp["sched_wait"] += g["sched_wait"]
        grp["block_total"] += sum(g["block"].values())
        grp["syscall"] += g["syscall"]
        grp["syscall_block"] += g["syscall_block"]
        grp["gc_assist"] += g["ranges"].get("GC mark assist", 0)
    got = {grp["name"]: {k: grp[k] for k in expected[grp["name"]]} for grp in data["groups"]}
    assert got == expected
    # Each group lists its goroutines with Go's per-goroutine numbers.
    by_id = {g["id"]: g for g in ref}
    for grp in data["groups"]:
        assert len(grp["members"]) == grp["count"]
        for m in grp["members"]:
            g = by_id[m["id"]]
            assert (m["name"], m["exec"], m["sched_wait"], m["block"], m["syscall"], m["total"]) == (
                g["name"],
                g["exec"],
                g["sched_wait"],
                g["block"],
                g["syscall"],
                g["total"],
            )
    assert abs(sum(grp["exec_share"] for grp in data["groups"]) - 1) < 1e-4
    # Sorted as go tool trace's goroutine page: by total execution time, descending.
    execs = [grp["exec"] for grp in data["groups"]]
    assert execs == sorted(execs, reverse=True)
    assert data["goroutines"] == len(ref)


def test_metrics_json_is_deterministic_and_sorted(trace_path: Any, capsys: Any) -> None:
    trace = str(trace_path("sched", "1.27"))
    _, first, _ = run_cli(capsys, "trace", "metrics", trace, "--json")
    _, second, _ = run_cli(capsys, "trace", "metrics", trace, "--json")
    assert first == second
    data = json.loads(first)
    assert first == json.dumps(data, sort_keys=True, indent=1) + "\n"
    lat = data["sched_latency"]
    assert 0 < lat["p50"] <= lat["p90"] <= lat["p99"] <= lat["max"]
    assert {row["reason"] for row in data["pauses"]} >= {"stop-the-world (GOMAXPROCS)"}
    assert all(0 <= p["utilization"] <= 1 for p in data["procs"])
    mig = data["migrations"]
    assert mig["total"] == sum(row["in"] for row in mig["per_p"]) == sum(row["out"] for row in mig["per_p"])


def test_metrics_terminal_and_one_goroutine(trace_path: Any, go_reference: Any, capsys: Any) -> None:
    trace = str(trace_path("sched", "1.27"))
    code, out, _ = run_cli(capsys, "trace", "metrics", trace)
    assert code == 0 and "main.main" in out and "scheduling latency" in out
    code, out, _ = run_cli(capsys, "trace", "metrics", trace, "--goroutine", "1", "--json")
    g = json.loads(out)["goroutine"]
    ref = go_reference("sched", "1.27").summaries[1]
    assert (g["exec"], g["block"], g["total"]) == (ref["exec"], ref["block"], ref["total"])
    # Go's NonOverlappingStats: the pieces add up to the total when nothing is unknown.
    assert sum(g["non_overlapping"].values()) == max(g["total"], sum(g["non_overlapping"].values()))


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["trace", "metrics", "{trace}", "--goroutine", "999999"], "no goroutine 999999"),
        (["trace", "metrics", "{missing}"], "missing.trace: no such file or directory"),
        (["trace", "metrics", "{garbage}"], ""),
        (["trace", "metrics", "{old}"], "not supported"),
        (["trace", "sql", "{empty}", "SELECT 1"], "not a Go execution trace"),
        (["trace", "pprof", "--type", "sched", "{garbage}", "-o", "{out}"], ""),
        (["trace", "sql", "{trace}", "SELECT * FROM goroutines WHERE id < 0"], "no rows"),
        (["trace", "sql", "{trace}", "SELEC oops"], "SQL error"),
        (["trace", "sql", "{trace}", "SELECT * FROM nosuchtable"], "SQL error"),
    ],
)
def test_one_line_errors(args: list[str], message: str, trace_path: Any, tmp_path: Path, capsys: Any) -> None:
    garbage = tmp_path / "garbage.trace"
    garbage.write_bytes(b"go 1.27 trace\x00\x00\x00" + bytes(range(256)) * 4)
    old = tmp_path / "old.trace"
    old.write_bytes(b"go 1.21 trace\x00\x00\x00\x01\x02\x03")
    empty = tmp_path / "empty.trace"
    empty.write_bytes(b"")
    subs = {"trace": str(trace_path("sched", "1.27")), "missing": str(tmp_path / "missing.trace"),
            "garbage": str(garbage), "out": str(tmp_path / "x.pb.gz"), "old": str(old), "empty": str(empty)}  # fmt: skip
    code, _, err = run_cli(capsys, *(a.format(**subs) for a in args))
    assert code == 1
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("goblueprint: error:") and message in lines[0]
    assert "Traceback" not in err


def test_parquet_tables_against_go(trace_path: Any, go_reference: Any, tmp_path: Path) -> None:
    trace = trace_path("sched", "1.27")
    written = write_parquet(trace, tmp_path / "pq")
    names = {p.stem for p in written}
    assert {"events", "intervals", "goroutines", "metrics"} <= names
    ref = go_reference("sched", "1.27")
    con = duckdb.connect()

    def q(sql):
        return con.sql(
            sql.replace("T(", f"read_parquet('{tmp_path / 'pq'}/").replace(")@", ".parquet')")
        ).fetchall()

    # One row per event, in Go's order with Go's times and kinds.
    assert q("SELECT count(*) FROM T(events)@")[0][0] == len(ref.events)
    times = [r[0] for r in q("SELECT time FROM T(events)@ ORDER BY seq")]
    assert times == [e.time for e in ref.events]
    transitions = sum(1 for e in ref.events if e.kind == 13)
    assert q("SELECT count(*) FROM T(events)@ WHERE kind = 'STATE_TRANSITION'")[0][0] == transitions
    # Goroutine table = Go's summary.
    rows = q("SELECT id, name, exec, sched_wait, block_total, syscall, total FROM T(goroutines)@ ORDER BY id")
    assert rows == [
        (g["id"], g["name"], g["exec"], g["sched_wait"], sum(g["block"].values()), g["syscall"], g["total"])
        for g in sorted(ref.summaries.values(), key=lambda g: g["id"])
    ]
    # Metric samples: as many as Go's Metric events plus our derived counters.
    go_metrics = sum(1 for e in ref.events if e.kind == 2)
    assert q("SELECT count(*) FROM T(metrics)@ WHERE name LIKE '/%'")[0][0] == go_metrics
    assert (
        q("SELECT count(*) FROM T(intervals)@ WHERE lane_kind_name = 'G' AND state_name = 'running'")[0][0]
        > 0
    )


def test_sql_events_table(trace_path: Any, go_reference: Any, capsys: Any) -> None:
    trace = str(trace_path("sched", "1.27"))
    code, out, _ = run_cli(capsys, "trace", "sql", trace, "SELECT count(*) AS n FROM Events", "--json")
    assert code == 0 and json.loads(out) == [{"n": len(go_reference("sched", "1.27").events)}]


def test_sql_formats(trace_path: Any, capsys: Any) -> None:
    trace = str(trace_path("sched", "1.27"))
    query = "SELECT id, name, exec FROM goroutines ORDER BY id LIMIT 3"
    code, out, _ = run_cli(capsys, "trace", "sql", trace, query, "--json")
    rows = json.loads(out)
    assert code == 0 and [r["id"] for r in rows] == [1, 2, 3] and rows[0]["name"] == "main.main"
    code, out, _ = run_cli(capsys, "trace", "sql", trace, query, "--csv")
    parsed = list(csv.DictReader(io.StringIO(out)))
    assert [int(r["id"]) for r in parsed] == [1, 2, 3] and int(parsed[0]["exec"]) == rows[0]["exec"]
    code, out, _ = run_cli(capsys, "trace", "sql", trace, query)
    assert code == 0 and "main.main" in out and "3 rows" in out


def test_percentile_is_nearest_rank() -> None:
    import numpy as np

    v = np.arange(1, 101)
    assert [metrics.percentile(v, p) for p in (50, 90, 99, 100)] == [50, 90, 99, 100]
    assert metrics.percentile(np.array([7]), 99) == 7 and metrics.percentile(np.array([]), 50) == 0


def test_terminal_output_does_not_interpret_trace_strings(capsys: Any) -> None:
    # Names come from the traced program: rich markup in them must print literally.
    from goblueprint.cli import trace_metrics

    evil = "[red]x[/][link=e]"  # short enough that no table cell wraps it
    data = {
        "trace": {"start_ns": 0, "end_ns": 10, "duration_ns": 10},
        "goroutines": 1,
        "groups": [{"name": evil, "count": 1, "exec": 1, "exec_share": 1.0, "sched_wait": 0, "block_total": 2, "syscall": 0,
                    "syscall_block": 0, "gc_assist": 0, "sweep": 0, "block": {evil: 2}}],
        "sched_latency": {"count": 0, "p50": 0, "p90": 0, "p99": 0, "max": 0},
        "procs": [],
        "pauses": [{"gc": False, "reason": evil, "count": 1, "total": 1, "p50": 1, "max": 1, "p99": 1}],
        "migrations": {"total": 0, "starts": 0, "per_p": []},
    }  # fmt: skip
    trace_metrics._print(data)
    out = capsys.readouterr().out
    assert out.count(evil) >= 3  # group name, its block reason, the pause reason


@pytest.mark.parametrize(("prog", "go"), [("sched", "1.27"), ("sched", "1.22")])
def test_stats_counts_goroutines_as_go_does(
    prog: str, go: str, trace_path: Any, go_reference: Any, capsys: Any
) -> None:
    # Go's summary (go tool trace's goroutine list) has every goroutine a transition names,
    # also those blocked for the whole trace that never run and so are no event's context.
    code, out, _ = run_cli(capsys, "trace", "stats", str(trace_path(prog, go)), "--json")
    assert code == 0
    assert json.loads(out)["goroutines"] == len(go_reference(prog, go).summaries)


def test_pause_table_holds_only_stop_the_world(gc_trace: Any, capsys: Any) -> None:
    code, out, _ = run_cli(capsys, "trace", "metrics", str(gc_trace("1.22")), "--json")
    data = json.loads(out)
    assert code == 0 and data["pauses"]
    assert all(row["reason"].startswith("stop-the-world") for row in data["pauses"])
    # GC phases run beside the program: their own section, with a row per phase seen.
    phases = {row["phase"]: row for row in data["gc_phases"]}
    assert set(phases) == {"GC concurrent mark phase", "GC mark assist", "GC incremental sweep"}
    assert all(row["count"] > 0 for row in phases.values())
    code, out, _ = run_cli(capsys, "trace", "metrics", str(gc_trace("1.22")))
    pause_table = out[out.index("stop-the-world pauses") : out.index("GC phases")]
    assert "GC mark assist" not in pause_table and "GC mark assist" in out[out.index("GC phases") :]


def test_top_limits_json_too(trace_path: Any, capsys: Any) -> None:
    trace = str(trace_path("sched", "1.27"))
    _, out, _ = run_cli(capsys, "trace", "metrics", trace, "--json")
    full = json.loads(out)
    _, out, _ = run_cli(capsys, "trace", "metrics", trace, "--json", "--top", "2")
    top = json.loads(out)
    assert len(full["groups"]) == full["groups_total"] > 2
    assert top["groups"] == full["groups"][:2] and top["groups_total"] == full["groups_total"]


def test_piped_tables_never_cut_names(trace_path: Any, capsys: Any) -> None:
    # capsys is not a terminal: every name prints whole, however long.
    trace = str(trace_path("sched", "1.27"))
    _, out, _ = run_cli(capsys, "trace", "metrics", trace, "--json")
    names = [g["name"] for g in json.loads(out)["groups"] if g["name"]]
    assert max(map(len, names)) > 40
    _, text, _ = run_cli(capsys, "trace", "metrics", trace)
    assert "…" not in text
    for name in names:
        assert name in text
    query = "SELECT name, name || '/' || name AS twice FROM goroutines ORDER BY length(name) DESC LIMIT 1"
    _, out, _ = run_cli(capsys, "trace", "sql", trace, query, "--json")
    twice = json.loads(out)[0]["twice"]
    _, text, _ = run_cli(capsys, "trace", "sql", trace, query)
    assert twice in text and "…" not in text


def test_sql_show_tables_and_column_order(trace_path: Any, capsys: Any) -> None:
    trace = str(trace_path("sched", "1.27"))
    code, out, _ = run_cli(capsys, "trace", "sql", trace, "SHOW TABLES", "--json")
    assert code == 0
    assert {r["name"] for r in json.loads(out)} == {
        "events", "flows", "goroutines", "intervals", "lanes", "metrics", "stacks", "states"
    }  # fmt: skip
    # The catalog has the events columns even when the query reads no event.
    code, out, _ = run_cli(capsys, "trace", "sql", trace,
                           "SELECT column_name FROM information_schema.columns WHERE table_name = 'events'", "--csv")  # fmt: skip
    assert out.splitlines()[1:4] == ["seq", "time", "kind"]
    # --json keeps the query's column order, run after run.
    query = "SELECT name, id, exec AS a_exec FROM goroutines ORDER BY id LIMIT 2"
    _, first, _ = run_cli(capsys, "trace", "sql", trace, query, "--json")
    _, second, _ = run_cli(capsys, "trace", "sql", trace, query, "--json")
    assert first == second
    assert [list(row) for row in json.loads(first)] == [["name", "id", "a_exec"]] * 2


def test_narrow_terminal_drops_columns_whole(trace_path: Any, capsys: Any, monkeypatch: Any) -> None:
    # On a terminal too narrow for the group table, whole columns go (and the caption says
    # which); every line fits and no number is broken or cut.
    from rich.console import Console

    from goblueprint.cli import _console

    screen = io.StringIO()
    terminal = Console(file=screen, force_terminal=True, width=90, highlight=False, color_system=None)
    monkeypatch.setattr(_console, "table_console", lambda: terminal)
    trace = str(trace_path("sched", "1.27"))
    assert main(["trace", "metrics", trace, "--top", "5"]) == 0
    out = screen.getvalue()
    assert max(len(line) for line in out.splitlines()) <= 90
    assert "too narrow for: top block reason" in " ".join(out.split())
    _, js, _ = run_cli(capsys, "trace", "metrics", trace, "--json", "--top", "5")
    for grp in json.loads(js)["groups"]:
        assert f"{grp['exec'] / 1e6:.3f}" in out and f"{grp['block_total'] / 1e6:.3f}" in out
