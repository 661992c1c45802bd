"""capture's own goroutines and frames stay out of the program's results.

One capture of tests/capture/goprogs/mainpkg (through the overlay) is read by
every view: the goroutine summary and groups, the SQL tables, the timeline
lanes and the pprof stays.  What is capture's is found from the trace (frames
from files named ``goblueprint_capture``), so these tests check the views
against the trace's own stacks, and ``show_capture`` brings everything back.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import polars as pl
import pytest

from goblueprint.capture import capture
from goblueprint.timeline import metrics
from goblueprint.timeline.analysis import analyse
from goblueprint.timeline.capture_marks import is_capture_frame
from goblueprint.timeline.model import LaneKind, build_timeline
from goblueprint.timeline.tables import trace_tables
from goblueprint.trace.events import EventKind, GoState, ResourceKind
from goblueprint.trace.reader import open_trace

pytestmark = pytest.mark.slow
GOPROGS = Path(__file__).resolve().parent / "goprogs"
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def captured(tmp_path_factory: pytest.TempPathFactory) -> Path:
    result = capture(["go", "run", ".", "sleep"], tmp_path_factory.mktemp("cap"), timeout=1,
                     cwd=GOPROGS / "mainpkg", no_stdin=True)  # fmt: skip
    assert result.trace is not None and result.meta["trace_via"] == "overlay"
    return result.trace


def _capture_goroutines(trace: Path) -> set[int]:
    """Goroutines created by capture's code, straight from the trace's creation events."""
    found = set()
    for ev in open_trace(trace):
        if ev.kind != EventKind.STATE_TRANSITION:
            continue
        st = ev.state_transition()
        if st.resource.kind == ResourceKind.GOROUTINE and st.old == GoState.NOT_EXIST:
            frames = [*ev.stack.frames(), *st.stack.frames()]
            if any(is_capture_frame(f.file) for f in frames):
                found.add(st.resource.id)
    return found


def test_goroutine_lists_groups_and_sql_leave_capture_out(captured: Path) -> None:
    ours = _capture_goroutines(captured)
    # The overlay's signal goroutine, and os/signal's that its signal.Notify started.
    assert len(ours) >= 2
    hidden = trace_tables(captured)
    shown = trace_tables(captured, show_capture=True)
    ids = set(hidden["goroutines"]["id"].to_list())
    assert ids.isdisjoint(ours)
    assert set(shown["goroutines"]["id"].to_list()) == ids | ours
    names = dict(zip(shown["goroutines"]["id"].to_list(), shown["goroutines"]["name"].to_list(), strict=True))
    assert "main.goblueprintStart.func1" in {names[g] for g in ours}
    # The program's main goroutine, caught in package init, is the program's main.main.
    assert dict(zip(hidden["goroutines"]["id"], hidden["goroutines"]["name"], strict=True))[1] == "main.main"
    # No event of capture's goroutines in the events and intervals tables.
    events = hidden["events"]
    assert events.filter(pl.col("g").is_in(sorted(ours))).height == 0
    assert shown["events"].filter(pl.col("g").is_in(sorted(ours))).height > 0
    g_intervals = hidden["intervals"].filter(pl.col("lane_kind") == int(LaneKind.G))
    assert set(g_intervals["lane_id"].to_list()).isdisjoint(ours)
    # The stacks table keeps the program's part of stacks that ran into capture's code.
    assert not any(is_capture_frame(f) for f in hidden["stacks"]["file"].to_list())
    assert any(is_capture_frame(f) for f in shown["stacks"]["file"].to_list())
    for stack in hidden["stacks"].partition_by("stack"):
        assert sorted(stack["depth"].to_list()) == list(range(stack.height))  # leaf first, from 0
    # Groups (go tool trace's goroutine analysis): main.main is a user group, capture's are gone.
    a = analyse(captured)
    assert a.timeline is not None
    groups = {g["name"] for g in metrics.goroutine_groups(a.summary)}
    assert "main.main" in groups and not any("goblueprint" in name for name in groups)


def test_timeline_lanes_leave_capture_out(captured: Path) -> None:
    ours = _capture_goroutines(captured)
    tl = build_timeline(captured)
    lanes = tl.lanes.filter(pl.col("lane_kind") == int(LaneKind.G))
    assert set(lanes["lane_id"].to_list()).isdisjoint(ours)
    main = lanes.filter(pl.col("lane_id") == 1).row(0, named=True)
    assert main["label"] == "G1 main.main" and main["group"] == "main.main" and main["system"] is False
    shown = build_timeline(captured, show_capture=True).lanes.filter(pl.col("lane_kind") == int(LaneKind.G))
    assert ours <= set(shown["lane_id"].to_list())


def test_pprof_leaves_capture_out(captured: Path) -> None:
    ours = _capture_goroutines(captured)
    profiles = analyse(captured, timeline=False, pprof_types=["sync"]).profiles
    shown = analyse(captured, timeline=False, pprof_types=["sync"], show_capture=True).profiles
    assert profiles is not None and shown is not None
    # The overlay's goroutine waits on its signal channel: a sync stay, shown only on request.
    assert shown.stays["g"].is_in(sorted(ours)).any()
    assert not profiles.stays["g"].is_in(sorted(ours)).any()
    stays_stacks = profiles.stays["stack"].unique()
    files = profiles.stack_frames.filter(pl.col("stack").is_in(stays_stacks.to_list()))["file"].to_list()
    assert files and not any(is_capture_frame(profiles.strings[f]) for f in files)
    # ... and the stacks left out were capture's: shown, some stay has a capture frame.
    shown_files = shown.stack_frames.filter(pl.col("stack").is_in(shown.stays["stack"].unique().to_list()))[
        "file"
    ]
    assert any(is_capture_frame(shown.strings[f]) for f in shown_files.to_list())


def test_show_capture_flag(captured: Path) -> None:
    def names(*flags: str) -> str:
        env = dict(os.environ, PYTHONPATH=str(ROOT))
        query = "SELECT name FROM goroutines ORDER BY id"
        proc = subprocess.run([sys.executable, "-m", "goblueprint", "trace", "sql", *flags, "--csv",
                               str(captured), query], env=env, capture_output=True, text=True, timeout=300)  # fmt: skip
        assert proc.returncode == 0, proc.stderr
        return proc.stdout

    assert "goblueprintStart" not in names() and "main.main" in names()
    assert "main.goblueprintStart.func1" in names("--show-capture")


def test_ingested_tables_leave_capture_out_as_one_pass(
    captured: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The ingest leaves capture's goroutines out of the events and spans it writes chunk by
    # chunk during the pass, and of the flows and stays it writes back from disk piece by
    # piece (small pieces here, so capture's rows fall in some), as the pass that holds the
    # tables in memory does.
    from polars.testing import assert_frame_equal

    from goblueprint.timeline import builder, pprof, tables
    from goblueprint.timeline.ingest import ingest
    from goblueprint.timeline.model import SCHEMAS
    from goblueprint.timeline.tables import tables_pass

    made = tables_pass(captured, views=True)
    monkeypatch.setattr(builder, "_FLOW_PIECE", 5)
    monkeypatch.setattr(pprof, "_STAY_BLOCK", 1)  # to disk at every chance
    monkeypatch.setattr(tables, "_STAY_PIECE", 5)
    found = ingest(captured, out=tmp_path / "tables")
    stays = found.profiles().stays.collect()
    assert stays.height > 10 and not stays["g"].is_in(sorted(_capture_goroutines(captured))).any()
    assert_frame_equal(stays, made.profiles.stays, check_exact=True)
    stored = found.frames()
    for name, df in made.tables.items():
        assert_frame_equal(stored[name], df, check_exact=True)
    back = found.timeline()
    for name in SCHEMAS:
        assert_frame_equal(getattr(back, name), getattr(made.timeline, name), check_exact=True)
