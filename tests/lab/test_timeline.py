"""Lab records drawn into the trace's timeline: run-queue counters under each P, steal flows
from victim to thief, sysmon marks on their own lane — in the Timeline, the HTML page (in a
browser) and the Perfetto export (decoded back), through `lab timeline` and `--lab DIR`."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from goblueprint.lab import frame, records, runqueues
from goblueprint.lab.timeline import with_records
from goblueprint.render.timeline_html import timeline_payload
from goblueprint.timeline.model import FlowKind, LaneKind, Timeline, build_timeline

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def steal_run(lab_run: Callable[..., Path]) -> Path:
    return lab_run("steal", "1.27")


@pytest.fixture(scope="module")
def joined(steal_run: Path) -> tuple[Timeline, Timeline, pl.DataFrame]:
    """(the trace's timeline, with the records, the records inside the trace's span)."""
    table, dump = records.load(steal_run)
    df = frame.records_frame(table, dump)
    base = build_timeline(steal_run / "trace.out")
    inside = df.filter(pl.col("t").is_between(base.start_ns, base.end_ns))
    return base, with_records(base, df), inside


def test_records_join_the_timeline(joined: tuple[Timeline, Timeline, pl.DataFrame]) -> None:
    base, tl, df = joined
    steals = runqueues.steals(df)
    flows = tl.flows.filter(pl.col("kind") == int(FlowKind.STEAL))
    assert flows.height == len(steals) > 0
    assert (flows["from_p"] != flows["to_p"]).all()
    names = {tl.strings[i] for i in tl.counters["name"].unique().to_list()}
    assert {f"Proc {p}: run queue" for p in runqueues.queue_lengths(df)["p"].unique().to_list()} <= names
    wakes = df.filter(pl.col("kind") == "sysmon_wake").height
    assert wakes > 0 and tl.instants.height == base.instants.height + wakes
    sysmon_lane = tl.lanes.filter(pl.col("label").str.starts_with("sysmon"))
    assert sysmon_lane.height == 1 and sysmon_lane["lane_kind"][0] == int(LaneKind.M)
    # Nothing before the trace started: Perfetto takes no time before its origin.
    assert tl.counters["time"].min() >= tl.start_ns and tl.flows["from_time"].min() >= tl.start_ns


def test_html_puts_each_run_queue_under_its_p(joined: tuple[Timeline, Timeline, pl.DataFrame]) -> None:
    base, tl, _df = joined
    header, _blob = timeline_payload(tl)
    base_header, _ = timeline_payload(base)
    steals = tl.flows.filter(pl.col("kind") == int(FlowKind.STEAL)).height
    assert header["flows"]["n"] == base_header["flows"]["n"] + steals
    queues = [c for c in header["counters"] if c["name"].endswith(": run queue")]
    assert len(queues) == 4
    for c in queues:
        lane = header["lanes"][c["lane"]]
        assert c["name"] == f"{lane['name']}: run queue" and lane["name"].startswith("Proc ")
        assert header["groups"][c["group"]]["kind"] == "P"
    # The trace's own counters stay in the shared group.
    shared = [c for c in header["counters"] if c["lane"] < 0]
    assert shared and all(header["groups"][c["group"]]["name"] == "Counters" for c in shared)


@pytest.mark.browser
def test_browser_draws_queue_rows_under_p_lanes_and_steal_arrows(
    steal_run: Path, browser: Any, run_cli: Callable[..., tuple[int, str, str]], tmp_path: Path
) -> None:
    page_path = tmp_path / "lab.html"
    code, _o, err = run_cli("lab", "timeline", str(steal_run), "-o", str(page_path))
    assert code == 0, err
    page = browser.new_page(viewport={"width": 1400, "height": 900})
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(page_path.resolve().as_uri())
    page.wait_for_function(
        "() => window.__gbp && (window.__gbp.error || (window.__gbp.ready && window.__gbp.stats.frames > 0))",
        timeout=120_000,
    )
    rows = page.evaluate(
        "() => window.__gbp.rows.map(r => [r.type, r.lane ? r.lane.name : r.c ? r.c.name : ''])"
    )
    procs = [k for k, (kind, name) in enumerate(rows) if kind == "lane" and name.startswith("Proc ")]
    assert len(procs) == 4
    for k in procs:
        assert rows[k + 1] == ["counter", f"{rows[k][1]}: run queue"], rows[k : k + 2]
    assert any(kind == "lane" and name.startswith("sysmon") for kind, name in rows)
    # Zoomed in, the arrows are few enough to draw: steals among them (P lane to P lane).
    # How far in that is depends on the run (arrows are drawn below 3,000 in view): zoom until
    # they are, within 30 steps of 0.7 (a window 2e-5 of the whole, far below any run's density).
    page.mouse.move(700, 200)
    for _ in range(30):
        frames = page.evaluate("() => window.__gbp.stats.frames")
        page.keyboard.press("w")
        page.wait_for_function(f"() => window.__gbp.stats.frames > {frames}")
        if page.evaluate("() => window.__gbp.stats.flows") > 0:
            break
    assert page.evaluate("() => window.__gbp.stats.flows") > 0, "no wake-up or steal arrow drawn at any zoom"
    page.screenshot(path=str(tmp_path / "lab.png"))
    page.close()
    assert errors == [] and page_path.stat().st_size > 10_000


def _decode(path: Path) -> tuple[dict[int, Any], list[Any]]:
    import perfetto_read

    decoded = perfetto_read.read(path.read_bytes())
    return decoded.tracks, decoded.events


def test_perfetto_export_has_queue_tracks_under_ps_steal_flows_and_sysmon_marks(
    steal_run: Path,
    joined: tuple[Timeline, Timeline, pl.DataFrame],
    run_cli: Callable[..., tuple[int, str, str]],
    tmp_path: Path,
) -> None:
    _base, _tl, df = joined
    out = tmp_path / "lab.perfetto-trace"
    code, _o, err = run_cli(
        "trace", "export", str(steal_run / "trace.out"), "--lab", str(steal_run), "-o", str(out)
    )
    assert code == 0, err
    tracks, events = _decode(out)
    # A "run queue" counter track as the child of each P's track, with every sample.
    queues = {tracks[t.parent_uuid].name: t for t in tracks.values() if t.name == "run queue"}
    lengths = runqueues.queue_lengths(df)
    assert set(queues) == {f"Proc {p}" for p in lengths["p"].unique().to_list()}
    assert all(t.HasField("counter") for t in queues.values())
    for proc, t in queues.items():
        samples = [e for e in events if e.track == t.uuid]
        assert len(samples) == lengths.filter(pl.col("p") == int(proc.split()[1])).height
        assert all(e.value is not None for e in samples)
    # Each steal: a flow leaving the victim's P track and ending on the thief's.
    steals = runqueues.steals(df)
    starts = {}
    for e in events:
        for fid in e.flow_ids:
            starts[fid] = e
    steal_flows = [
        (tracks[starts[fid].track].name, tracks[e.track].name)
        for e in events
        for fid in e.terminating_flow_ids
        if starts[fid].name.startswith("steal →")
    ]
    assert sorted(steal_flows) == sorted((f"Proc {s['victim']}", f"Proc {s['thief']}") for s in steals)
    # Sysmon's wake-ups: instant events on its own thread track.
    sysmon = [t.uuid for t in tracks.values() if t.name.startswith("sysmon (thread")]
    assert len(sysmon) == 1
    on_track = [e for e in events if e.track == sysmon[0]]
    marks = [e for e in on_track if e.type == 3]
    assert len(marks) == df.filter(pl.col("kind") == "sysmon_wake").height > 0
    assert all(e.name == "sysmon wake" for e in marks)
    # Anything else there is the trace's own slices of that thread: sysmon's M shows in the
    # trace when it takes a P from a syscall (ProcSteal), which a run may or may not do.
    assert all(e.type in (1, 2) for e in on_track if e.type != 3)


def test_trace_commands_take_lab_dir(
    steal_run: Path,
    joined: tuple[Timeline, Timeline, pl.DataFrame],
    run_cli: Callable[..., tuple[int, str, str]],
    tmp_path: Path,
) -> None:
    trace = str(steal_run / "trace.out")
    code, text, err = run_cli(
        "trace", "sql", trace, "--lab", str(steal_run), "--json",
        "SELECT (SELECT count(*) FROM lab_steals) AS steals, (SELECT count(*) FROM lab_records) AS n",
    )  # fmt: skip
    assert code == 0, err
    table, dump = records.load(steal_run)
    got = json.loads(text)[0]
    assert got["n"] == len(dump.records)
    assert got["steals"] == len(runqueues.steals(frame.records_frame(table, dump)))
    chrome = tmp_path / "t.json"
    code, _o, err = run_cli("trace", "export", trace, "--lab", str(steal_run), "-o", str(chrome))
    assert code == 0, err
    events = json.loads(chrome.read_text())["traceEvents"]
    procs = {e["pid"] for e in events if e.get("name") == "process_name" and e["args"]["name"] == "Procs"}
    steal_ends = [e for e in events if e.get("name") == "steal" and e["ph"] in "sf"]
    # The timeline views hold the steals inside the trace's span; lab_steals holds them all.
    assert len(steal_ends) == 2 * len(runqueues.steals(joined[2])) and {e["pid"] for e in steal_ends} == procs
    queues = {e["pid"] for e in events if e.get("ph") == "C" and e["name"].endswith(": run queue")}
    assert queues == procs  # Chrome draws counters per process: the run queues sit with the Ps
    page = tmp_path / "t.html"
    code, _o, err = run_cli("trace", "timeline", trace, "--lab", str(steal_run), "-o", str(page))
    assert code == 0 and "run queue" in page.read_text(), err
    code, _o, err = run_cli(
        "trace", "export", trace, "--lab", str(steal_run), "-o", str(tmp_path / "pq"), "-f", "parquet"
    )
    assert code == 0, err
    assert {"lab_records.parquet", "lab_steals.parquet", "lab_queues.parquet", "lab_sysmon.parquet"} <= {
        p.name for p in (tmp_path / "pq").iterdir()
    }
    code, _o, err = run_cli(
        "trace", "timeline", trace, "--lab", str(tmp_path), "-o", str(tmp_path / "x.html")
    )
    assert code != 0 and err.startswith("goblueprint: error:") and "lab.json" in err
