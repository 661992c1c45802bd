"""Sysmon, netpoll, STW and M records on the project's sched workload."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import polars as pl
import pytest

from goblueprint.lab import frame, records, transitions
from goblueprint.lab.sysmon import sysmon
from goblueprint.source import facts

from .conftest import RELEASES

pytestmark = pytest.mark.slow


def _frame(out: Path) -> tuple[dict, pl.DataFrame, dict]:
    table, dump = records.load(out)
    return table, frame.records_frame(table, dump), facts.load(facts.resolve(go=table["go_version"]))


@pytest.mark.parametrize("go", RELEASES)
def test_sysmon_preempts_only_what_ran_past_force_preempt(lab_run: Callable[..., Path], go: str) -> None:
    """retake preempts a P whose schedtick has not moved for forcePreemptNS: every
    preemption with a known start ran at least that long (the constant read from source)."""
    _table, df, f = _frame(lab_run("sched", go, procs=4))
    force = next(c["value"] for c in f["consts"] if c["name"] == "forcePreemptNS")
    data = sysmon(df)
    assert data["summary"]["threads"] == 1  # sysmon is one M
    assert data["summary"]["wakeups"] > 10
    preempts = [a for a in data["actions"] if a["action"] == "preempt" and a["ran_ns"] is not None]
    assert len(preempts) > 5  # the workload's CPU-bound loops
    assert all(a["ran_ns"] >= force for a in preempts)
    # Sysmon runs without a P.
    assert set(df.filter(pl.col("kind") == "sysmon_wake")["p"].unique()) == {-1}


@pytest.mark.parametrize("go", RELEASES)
def test_netpolled_goroutines_are_made_runnable_next(lab_run: Callable[..., Path], go: str) -> None:
    """Each goroutine netpoll hands back was parked on the network: its next status record
    is _Gwaiting -> _Grunnable (injectglist)."""
    _table, df, f = _frame(lab_run("sched", go, procs=4))
    names = {v: k for k, v in transitions.state_names(f, "g").items()}
    ready = df.filter(pl.col("kind") == "netpoll_ready").select("t", pl.col("obj").alias("goid"))
    assert ready.height > 0
    status = df.filter((pl.col("kind") == "g_status") & (pl.col("obj") > 0)).select(
        "t", pl.col("obj").alias("goid"), "a", "b"
    )
    nxt = ready.sort("t").join_asof(
        status.sort("t"), on="t", by="goid", strategy="forward", check_sortedness=False
    )
    assert nxt["a"].null_count() == 0
    assert set(nxt["a"].unique()) == {names["_Gwaiting"]}
    assert set(nxt["b"].unique()) == {names["_Grunnable"]}


def test_stw_and_m_records(lab_run: Callable[..., Path], run_cli: Callable[..., tuple]) -> None:
    out = lab_run("sched", "1.27", procs=4)
    _table, df, _f = _frame(out)
    kinds = dict(df.group_by(pl.col("kind").cast(str)).len().rows())
    assert kinds["stw_begin"] == kinds["stw_end"] > 0
    for kind in ("handoffp", "startm", "stopm", "wakep", "spin_start", "spin_stop", "timer_run"):
        assert kinds.get(kind, 0) > 0, kind
    code, text, _ = run_cli("lab", "sysmon", str(out), "--json")
    assert code == 0
    data = json.loads(text)
    assert data["summary"]["wakeups"] == kinds["sysmon_wake"]
