"""Lab records drawn into the trace's timeline: counters, steal flows, sysmon marks."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import polars as pl
import pytest

from goblueprint.lab import frame, records, runqueues
from goblueprint.lab.timeline import with_records
from goblueprint.render.timeline_html import timeline_payload
from goblueprint.timeline.model import FlowKind, LaneKind, build_timeline

pytestmark = pytest.mark.slow


def test_records_join_the_timeline_views(lab_run: Callable[..., Path], run_cli: Callable[..., tuple]) -> None:
    out = lab_run("steal", "1.27")
    table, dump = records.load(out)
    df = frame.records_frame(table, dump)
    base = build_timeline(out / "trace.out")
    tl = with_records(base, df)

    steals = runqueues.steals(df)
    flows = tl.flows.filter(pl.col("kind") == int(FlowKind.STEAL))
    assert flows.height == len(steals) > 0
    assert (flows["from_p"] != flows["to_p"]).all()
    names = {tl.strings[i] for i in tl.counters["name"].unique().to_list()}
    assert {f"P{p} run queue" for p in runqueues.queue_lengths(df)["p"].unique().to_list()} <= names
    wakes = df.filter(pl.col("kind") == "sysmon_wake").height
    assert tl.instants.height == base.instants.height + wakes
    sysmon_lane = tl.lanes.filter(pl.col("label").str.starts_with("sysmon"))
    assert sysmon_lane.height == 1 and sysmon_lane["lane_kind"][0] == int(LaneKind.M)

    # The HTML view draws every steal: both ends are P lanes.
    header, _blob = timeline_payload(tl)
    base_header, _ = timeline_payload(base)
    assert header["flows"]["n"] == base_header["flows"]["n"] + len(steals)

    code, _o, _e = run_cli("lab", "timeline", str(out), "-o", str(out / "lab.html"))
    assert code == 0 and (out / "lab.html").stat().st_size > 10_000
