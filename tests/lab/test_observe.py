"""lab observe on real programs, Go 1.27 and 1.22: records against the trace and the source layer."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from goblueprint.lab import crosscheck, records, transitions
from goblueprint.source import facts, states

from .conftest import RELEASES

pytestmark = pytest.mark.slow


def _load(out: Path) -> tuple[dict, records.Dump, dict]:
    table, dump = records.load(out)
    return table, dump, facts.load(facts.resolve(go=table["go_version"]))


@pytest.mark.parametrize("go", RELEASES)
def test_goroutine_starts_match_the_trace(lab_run: Callable[..., Path], go: str) -> None:
    """Every Runnable->Running the tracer saw is a _Grunnable->_Grunning record, and no more,
    once the starts the tracer invents are taken out (lost-P syscall exits, see StartCount).

    Tolerance 2: records and trace share nanotime, but execute's casgstatus is recorded
    just before the tracer's GoStart, so a start at either end of the trace's span can
    fall on one side only.
    """
    out = lab_run("sched", go, procs=4)
    table, dump, f = _load(out)
    count = crosscheck.goroutine_starts(out / "trace.out", table, dump, f)
    assert count.trace > 1000
    assert abs(count.unexplained) <= 2, count


@pytest.mark.parametrize("go", RELEASES)
def test_edges_have_concrete_prior_states_and_source_sites(lab_run: Callable[..., Path], go: str) -> None:
    out = lab_run("sched", go, procs=4)
    table, dump, f = _load(out)
    for machine in ("g", "p"):
        names = set(transitions.state_names(f, machine).values())
        rows = transitions.transitions(table, dump, f, machine)
        assert rows
        for row in rows:
            assert row["from"] in names and row["to"] in names, row
        source = {(t.file, t.line): t for t in states.blueprint(f, machine).transitions}
        sites = {(s["file"], s["line"]) for s in table["sites"]}
        for row in rows:
            # Each place is a write site of the source layer, or a call of a wrapper that
            # the source layer also names (casgstatus's callers), or inside an inlined wrapper.
            at = (row["file"], row["line"])
            assert at in source or at in sites or row["function"].startswith("cas"), row
    p_rows = transitions.transitions(table, dump, f, "p")
    # The source layer cannot tell what a plain store replaced; the lab always can.
    assert any(r["from"] != "*" for r in p_rows)


def test_cli_transitions_json(
    lab_run: Callable[..., Path], run_cli: Callable[..., tuple[int, str, str]]
) -> None:
    out = lab_run("sched", "1.27", procs=4)
    code, text, _ = run_cli("lab", "transitions", str(out), "--machine", "g", "--json")
    assert code == 0
    rows = json.loads(text)["transitions"]
    assert {"from", "to", "function", "file", "line", "count"} <= set(rows[0])
    execute = [r for r in rows if r["function"] == "execute" and r["to"] == "_Grunning"]
    assert execute and execute[0]["from"] == "_Grunnable"


@pytest.mark.parametrize("go", RELEASES)
def test_status_records_chain_per_goroutine_and_p(lab_run: Callable[..., Path], go: str) -> None:
    """Each record's prior status is the status the previous record of the same G (or P)
    left: no status write escapes the instrumentation and every prior state is the real one.

    Goroutines not yet given an id (obj 0, newproc1's _Gidle -> _Gdead) are left out.
    Records are ordered by nanotime taken just after each write, so a thread descheduled
    between its write and its clock read could swap two records: up to 0.1% is allowed.
    """
    import polars as pl

    from goblueprint.lab import frame

    table, dump, _f = _load(lab_run("sched", go, procs=4))
    df = frame.records_frame(table, dump)
    for kind in ("g_status", "p_status"):
        rows = (
            df.filter((pl.col("kind") == kind) & ((pl.col("obj") > 0) | (kind == "p_status")))
            .sort(["obj", "t"], maintain_order=True)
            .with_columns(pl.col("b").shift(1).over("obj").alias("left"))
            .filter(pl.col("left").is_not_null())
        )
        breaks = rows.filter(pl.col("left") != pl.col("a")).height
        assert rows.height > 1000 or kind == "p_status"
        assert breaks <= rows.height // 1000, (kind, breaks, rows.height)


def test_go_test_form_is_observed(tmp_path: Path) -> None:
    """`go test` goes through capture's test build (its own overlay) with the lab runtime too;
    the test binary's os.Exit dumps the records. A program that starts copies of itself
    leaves one dump per process: the reader takes the first process's."""
    from goblueprint.lab.observe import observe

    testpkg = Path(__file__).resolve().parent.parent / "capture" / "goprogs" / "testpkg"
    obs = observe(["go", "test", "-run", ".", "."], tmp_path, cwd=testpkg)
    assert obs.capture.ok and obs.capture.meta["kind"] == "test"
    _table, dump = records.load(tmp_path)
    assert dump.header["reason"] == 1 and len(dump.records) > 100
    assert (tmp_path / "trace.out").exists()
    starts = [int(records.read_dump(p).header["start"]) for p in tmp_path.glob("lab.*.bin")]
    assert dump.header["start"] == min(starts)
