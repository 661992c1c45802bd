"""Run-queue records: steals under a workload built to cause them, queue lengths, the frame."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from goblueprint.lab import frame, records, runqueues

from .conftest import RELEASES

pytestmark = pytest.mark.slow


@pytest.mark.parametrize("go", RELEASES)
def test_steals_move_at_most_half_of_another_ps_queue(lab_run: Callable[..., Path], go: str) -> None:
    table, dump = records.load(lab_run("steal", go))
    rows = runqueues.steals(frame.records_frame(table, dump))
    from_queue = [r for r in rows if not r["runnext"]]
    assert len(from_queue) >= 5, rows
    for r in rows:
        assert r["thief"] != r["victim"], r
        if r["runnext"]:
            assert r["count"] == 1 and r["victim_queue"] == 0, r
        else:
            # runqgrab takes n - n/2 of the n it saw: half, rounded up.
            assert 1 <= r["count"] <= (r["victim_queue"] + 1) // 2, r


def test_queue_lengths_stay_within_the_local_queue(lab_run: Callable[..., Path]) -> None:
    table, dump = records.load(lab_run("steal", "1.27"))
    lengths = runqueues.queue_lengths(frame.records_frame(table, dump))
    assert lengths.height > 100
    assert lengths["length"].min() >= 0
    # Each P's queue is a 256-slot ring (p.runq); a put that finds it full moves half
    # to the global queue first.
    assert lengths["length"].max() <= 256
    assert set(lengths["p"].unique()) <= {0, 1, 2, 3}


def test_cli_steals_and_queues_json(lab_run: Callable[..., Path], run_cli: Callable[..., tuple]) -> None:
    out = lab_run("steal", "1.27")
    code, text, _ = run_cli("lab", "steals", str(out), "--json")
    assert code == 0
    steals = json.loads(text)["steals"]
    assert steals and set(steals[0]) == {"t", "thief", "victim", "count", "runnext", "victim_queue"}
    code, text, _ = run_cli("lab", "queues", str(out), "--json")
    assert code == 0
    data = json.loads(text)
    assert data["summary"] and all(len(pt) == 2 for pts in data["queues"].values() for pt in pts)


def test_frame_has_one_row_per_record_with_its_kind(lab_run: Callable[..., Path], tmp_path: Path) -> None:
    table, dump = records.load(lab_run("steal", "1.27"))
    df = frame.records_frame(table, dump)
    assert df.height == len(dump.records)
    kinds = {s["id"]: s["kind"] for s in table["sites"]}
    assert df["kind"].cast(str).to_list()[:50] == [kinds[int(s)] for s in df["site"][:50]]
    frame.write_parquet(df, tmp_path / "lab.parquet")
    con = frame.duckdb_view(df)
    got = con.execute("SELECT count(*) FROM lab_records WHERE kind = 'steal'").fetchone()
    assert got is not None and got[0] == df.filter(df["kind"] == "steal").height
