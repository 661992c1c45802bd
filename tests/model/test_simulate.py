"""The simulate commands: deterministic output, a Timeline the trace side reads, one-line errors."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest

from goblueprint.cli import main
from goblueprint.model import api, policies, workload
from goblueprint.model.constants import Constants
from goblueprint.timeline import metrics
from goblueprint.timeline.model import LaneKind, State

EXAMPLE = Path(__file__).resolve().parents[2] / "docs" / "model-examples" / "workers.toml"


def _cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_same_seed_gives_byte_identical_output(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    runs = []
    for i in range(2):
        dec = tmp_path / f"d{i}.csv"
        code, out, _ = _cli(capsys, "simulate", str(EXAMPLE), "--seed", "5", "--json", "--schedtrace", "10",
                            "--decisions", str(dec))  # fmt: skip
        assert code == 0
        runs.append((out, dec.read_bytes()))
    assert runs[0] == runs[1]
    # The seed matters: steal order is random, so another seed decides differently.
    code, out, _ = _cli(
        capsys, "simulate", str(EXAMPLE), "--seed", "6", "--decisions", str(tmp_path / "x.csv")
    )
    assert (tmp_path / "x.csv").read_bytes() != runs[0][1]


def test_schedtrace_lines_parse_with_the_capture_reader(capsys: pytest.CaptureFixture[str]) -> None:
    from goblueprint.capture import schedtrace

    _code, out, _ = _cli(capsys, "simulate", str(EXAMPLE), "--schedtrace", "5", "--json")
    lines = [ln for ln in out.splitlines() if ln.startswith("SCHED ")]
    parsed = schedtrace.parse("\n".join(lines) + "\n")
    assert len(parsed.samples) == len(lines) >= 5
    first = parsed.samples[0]
    assert (
        first.counters["gomaxprocs"] == 4 and len(first.local_runq or []) == len(first.schedticks or []) == 4
    )


def test_decision_log_is_a_queryable_table(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _cli(capsys, "simulate", str(EXAMPLE), "--query",
                        "select point, count(*) as n from decisions group by point order by point")  # fmt: skip
    assert code == 0
    rows = dict(line.split(",") for line in out.strip().splitlines()[1:])
    # A producer/worker program with CPU hogs on 4 Ps: every kind of decision happens.
    assert {"enqueue", "next_g", "steal", "preempt", "wakep"} <= set(rows)


def test_the_simulated_timeline_works_with_the_trace_side(consts: Constants) -> None:
    from goblueprint.render.timeline_html import render_timeline_html

    prog = workload.load(EXAMPLE)
    r = api.simulate(prog, consts, policies.resolve([]), seed=1)
    tl = r.timeline
    tl.validate()
    assert "<html" in render_timeline_html(tl, title="sim").lower()
    assert metrics.sched_latency(tl)["count"] > 0
    assert len(metrics.proc_utilization(tl)) == 4
    assert any(row["kind"] == "stw" for row in metrics.pauses(tl))
    # A G's spans tile its life without overlap, as the builder's do.
    g = tl.spans.filter(pl.col("lane_kind") == int(LaneKind.G)).sort(["lane_id", "start"])
    gap = g.with_columns(pl.col("start").shift(-1).over("lane_id").alias("next")).drop_nulls("next")
    assert (gap["next"] == gap["end"]).all()
    # Work is conserved: every G ran exactly the CPU the workload gave it.
    running = g.filter(pl.col("state") == int(State.G_RUNNING))
    total = int((running["end"] - running["start"]).sum())
    expected = 0
    counts = {"main": 1, "worker": 8, "spinner": 6, "sleeper": 4}
    for i, ops in enumerate(prog.templates):
        name = prog.names[i].removeprefix("main.")
        expected += counts[name] * sum(a for code, a, _ in ops if code == 0)
    assert total == expected


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--policy", "nope"], "unknown policy 'nope'"),
        (["--procs", "-2"], "--procs -2: expected 1..4096"),
    ],
)
def test_bad_options_are_one_line_errors(
    capsys: pytest.CaptureFixture[str], argv: list[str], message: str
) -> None:
    code, out, err = _cli(capsys, "simulate", str(EXAMPLE), *argv)
    assert code == 1 and out == ""
    assert err.startswith("goblueprint: error: ") and message in err and err.count("\n") == 1


def test_bad_workload_names_the_operation(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "w.toml"
    bad.write_text('[goroutine.main]\nops = [ { cpu_us = 5 }, { send = "nochan" } ]\n')
    code, _, err = _cli(capsys, "simulate", str(bad))
    assert code == 1
    assert err == "goblueprint: error: " + str(bad) + ": goroutine.main op 1: unknown channel 'nochan'\n"
    bad.write_text("[goroutine.main\n")
    code, _, err = _cli(capsys, "simulate", str(bad))
    assert code == 1 and "not valid TOML" in err and err.count("\n") == 1


def test_ab_reports_each_metric_with_an_interval(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _cli(capsys, "simulate", "ab", str(EXAMPLE), "--a", "go", "--b", "quantum-1ms", "--seeds", "4",
                        "--json")  # fmt: skip
    assert code == 0
    got = json.loads(out)
    pre = got["metrics"]["preemptions"]
    assert pre["ci"][0] <= pre["diff"] <= pre["ci"][1]
    assert pre["ci"][0] > 0  # a 1 ms quantum preempts the 30 ms spinners more


def test_list_policies(capsys: pytest.CaptureFixture[str]) -> None:
    # With or without a workload: docs/model.md tells the user to run `simulate --list-policies`.
    for argv in ((str(EXAMPLE), "--list-policies"), ("--list-policies",)):
        code, out, _ = _cli(capsys, "simulate", *argv)
        assert code == 0 and set(policies.REGISTRY) == {line.split()[0] for line in out.splitlines()}


def test_simulate_without_a_target_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = _cli(capsys, "simulate")
    assert code != 0 and "expected a WORKLOAD" in err and "Traceback" not in err


def test_compare_takes_the_machine_s_cpus_from_the_capture_beside_the_trace(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import lzma

    from goblueprint.cli._simulate_common import machine_cpus

    golden = Path(__file__).resolve().parents[1] / "timeline" / "golden_builder" / "sched-go1.27.trace.xz"
    trace = tmp_path / "trace.out"
    trace.write_bytes(lzma.decompress(golden.read_bytes()))
    assert machine_cpus(trace) == 0  # no meta.json: a CPU for every thread
    meta = tmp_path / "meta.json"
    for text in ("{", "[]", '{"files": {"trace": "other.out"}, "host": {"cpus": 1}}',
                 '{"files": {"trace": "trace.out"}, "host": {"cpus": "1"}}'):  # fmt: skip
        meta.write_text(text)
        assert machine_cpus(trace) == 0, text
    meta.write_text('{"files": {"trace": "trace.out"}, "host": {"cpus": 1}}')
    assert machine_cpus(trace) == 1
    runs = {}
    for extra in ((), ("--cpus", "0")):
        code, out, _ = _cli(capsys, "simulate", "compare", "--trace", str(trace), "--json", *extra)
        assert code == 0
        runs[extra] = json.loads(out)
    assert runs[()]["cpus"] == 1 and runs[("--cpus", "0")]["cpus"] == 0
    # One CPU for two Ps: woken Ms wait while the other runs, and fewer Gs change P.
    assert runs[()]["sim"]["migrations"] < runs[("--cpus", "0")]["sim"]["migrations"]
    assert _cli(capsys, "simulate", "compare", "--trace", str(trace), "--cpus", "-1")[0] != 0
