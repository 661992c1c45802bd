"""lab observe on real programs, Go 1.27 and 1.22: records against the trace and the source layer."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from goblueprint.lab import crosscheck, records, transitions
from goblueprint.source import facts, states

from .conftest import RELEASES, chain_breaks

pytestmark = pytest.mark.slow


def _load(out: Path) -> tuple[dict, records.Dump, dict]:
    table, dump = records.load(out)
    return table, dump, facts.load(facts.resolve(go=table["go_version"]))


@pytest.mark.parametrize("go", RELEASES)
def test_goroutine_starts_match_the_trace(lab_run: Callable[..., Path], go: str) -> None:
    """Every Runnable->Running the tracer saw is a _Grunnable->_Grunning record, and no more,
    once the starts the tracer invents are taken out (lost-P syscall exits, see StartCount).

    Tolerance: records and trace share nanotime, but execute's casgstatus is recorded
    just before the tracer's GoStart, so a start in flight at either end of the trace's
    span can fall on one side only: at most one per P at each end (StartCount.edge_slack).
    """
    out = lab_run("sched", go, procs=4)
    table, dump, f = _load(out)
    count = crosscheck.goroutine_starts(out / "trace.out", table, dump, f)
    assert count.trace > 1000
    assert abs(count.unexplained) <= count.edge_slack, count


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
    # Every observed P edge has a concrete from-state, also where the source layer can only
    # say "*" (a plain store of p.status: it cannot tell what the store replaced).
    p_names = set(transitions.state_names(f, "p").values())
    p_rows = transitions.transitions(table, dump, f, "p")
    assert "*" not in p_names and all(r["from"] in p_names for r in p_rows), p_rows
    unknown_before = {(t.file, t.line) for t in states.blueprint(f, "p").transitions if t.src == "*"}
    resolved = [r for r in p_rows if (r["file"], r["line"]) in unknown_before]
    assert resolved, "no observed edge at a store the source layer leaves as '* ->'"


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
        rows = df.filter((pl.col("kind") == kind) & ((pl.col("obj") > 0) | (kind == "p_status"))).sort(
            ["obj", "t"], maintain_order=True
        )
        assert rows.height > 1000 or kind == "p_status"
        broken, swaps = chain_breaks(rows)  # (two records clocked in each other's place)
        assert broken <= rows.height // 1000 and swaps <= rows.height // 100 + 1, (kind, broken, swaps)


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


def test_observed_transitions_api_for_source_verify(
    lab_run: Callable[..., Path], run_cli: Callable[..., tuple[int, str, str]], tmp_path: Path
) -> None:
    """observed_transitions(DIR, machine): the rows `source verify --observed` reads, the same
    as `lab transitions --json` prints, resolved against the release the folder was built with."""
    from goblueprint.errors import LabError

    out = lab_run("steal", "1.22")
    for machine in ("g", "p"):
        rows = transitions.observed_transitions(out, machine)
        assert rows and all(set(r) == {"from", "to", "function", "file", "line", "count"} for r in rows)
        code, text, _ = run_cli("lab", "transitions", str(out), "--machine", machine, "--json")
        assert code == 0 and json.loads(text)["transitions"] == rows
        # Places are the built release's own lines (1.22's, not the bundled 1.27's): each is
        # a status write or a call of a status-changing wrapper (cas...) in that source.
        root = facts.resolve(go="1.22")
        for r in rows:
            line = (root.path / r["file"]).read_text().splitlines()[r["line"] - 1]
            assert "status" in line.lower() or "cas" in line, (r, line)
    json.dumps({"machine": "p", "transitions": transitions.observed_transitions(out, "p")})
    with pytest.raises(LabError, match="unknown machine 'm'"):
        transitions.observed_transitions(out, "m")
    with pytest.raises(LabError, match="is not a lab folder"):
        transitions.observed_transitions(tmp_path, "g")
    # Verified against another release's source, its file:line sites would name other lines.
    diagram = str(Path(__file__).resolve().parents[2] / "docs" / "example-g.mmd")
    code, _, err = run_cli(
        "source", "verify", diagram, "--machine", "g", "--go", "1.27", "--observed", str(out)
    )
    assert (
        code == 2
        and "observed Go 1.22.10, the source is Go 1.27.3: verify against the release that ran (--go 1.22)"
        in err
    )
    code, _, err = run_cli(
        "source", "verify", diagram, "--machine", "g", "--go", "1.22", "--observed", str(out)
    )
    assert code in (0, 1) and "observed Go" not in err


def test_a_trimpath_build_names_the_same_files(tmp_path: Path) -> None:
    """-trimpath names a standard package's file by import path (runtime/proc.go): the
    sites found through the binary (callers of status-changing wrappers) still read as the
    source facts name them (src/runtime/proc.go), as the other sites do."""
    from goblueprint.lab.observe import observe

    observe(
        ["go", "run", "-trimpath", "."], tmp_path, cwd=Path(__file__).resolve().parent / "goprogs" / "steal"
    )
    files = {r["file"] for m in ("g", "p") for r in transitions.observed_transitions(tmp_path, m)}
    assert files and all(f.startswith("src/runtime/") for f in files), sorted(files)
