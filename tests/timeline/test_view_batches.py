"""Views of an ingested trace read its large tables a bounded batch at a time, with the same results."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from polars.testing import assert_frame_equal

from goblueprint.cli import main
from goblueprint.timeline import batches
from goblueprint.timeline import ingest as ingest_mod

SMALL = 7  # rows a batch: far below every table's, so each is read in many batches


def spy_batches(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, int]]:
    """Cut the stored tables into SMALL-row batches; record each batch read (its file, its rows)."""
    seen: list[tuple[str, int]] = []
    real = batches.frame_batches
    monkeypatch.setattr(batches, "BATCH_ROWS", SMALL)

    def spy(frame: pl.LazyFrame, **kw: Any) -> Iterator[pl.DataFrame]:
        names = frame.collect_schema().names()
        name = "profile_stays" if "end_seq" in names else "spans" if "lane_kind" in names else "flows"
        for part in real(frame, **kw):
            seen.append((name, part.height))
            yield part

    monkeypatch.setattr(batches, "frame_batches", spy)
    return seen


@pytest.mark.parametrize("typ", ["sched", "sync", "syscall", "net"])
def test_pprof_aggregates_the_stored_stays_batch_by_batch(
    typ: str, trace: Path, cache: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from goblueprint.timeline import pprof
    from goblueprint.timeline.analysis import analyse

    one_pass = analyse(trace, timeline=False, pprof_types=[typ]).profiles
    assert one_pass is not None and isinstance(one_pass.stays, pl.DataFrame)
    want = pprof.write_gzip(pprof.build_profile(one_pass.records(typ)))
    ingest_mod.ingest(trace)
    seen = spy_batches(monkeypatch)
    out = tmp_path / f"{typ}.pb.gz"
    assert main(["trace", "pprof", "--type", typ, str(trace), "-o", str(out)]) == 0
    assert out.read_bytes() == want
    stays = one_pass.stays.filter(pl.col("type") == typ).height
    # Every stay of the type came through batches of at most SMALL rows of the file.
    assert {name for name, _ in seen} == {"profile_stays"}
    assert max(n for _, n in seen) <= SMALL
    assert sum(n for _, n in seen) == stays and len(seen) >= stays // SMALL


def test_metrics_aggregate_the_stored_spans_and_flows_batch_by_batch(
    trace: Path, cache: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from goblueprint.timeline import metrics, mmu
    from goblueprint.timeline.analysis import analyse
    from goblueprint.timeline.model import LaneKind

    a = analyse(trace, mmu_flags=mmu.DEFAULT_FLAGS)
    assert a.timeline is not None
    want = json.loads(json.dumps(metrics.compute(a.summary, a.timeline, utilization=a.utilization)))
    ingest_mod.ingest(trace)
    seen = spy_batches(monkeypatch)
    assert main(["trace", "metrics", "--json", str(trace)]) == 0
    assert json.loads(capsys.readouterr().out) == want
    assert want["procs"] and want["pauses"] and want["gc_phases"] and want["migrations"]["total"]
    assert {name for name, _ in seen} == {"spans", "flows"}
    assert max(n for _, n in seen) <= SMALL
    # The P spans (most of what metrics reads of the spans) came in many batches, each flow
    # through both readers of the flows (latency, migrations).
    p_spans = a.timeline.spans.filter(pl.col("lane_kind") == int(LaneKind.P)).height
    assert sum(1 for name, _ in seen if name == "spans") >= p_spans // SMALL
    assert sum(n for name, n in seen if name == "flows") == 2 * a.timeline.flows.height


def test_latencies_past_u32_in_a_later_batch_keep_their_value(monkeypatch: pytest.MonkeyPatch) -> None:
    # sched_latency holds the delays as u32 until one does not fit (4.29 s), then as i8.
    from types import SimpleNamespace

    import numpy as np

    from goblueprint.timeline import metrics

    monkeypatch.setattr(batches, "BATCH_ROWS", 3)
    delays = [5, 7, 1, 3, 2**33 + 5, 9, 2**32 - 1, 4]
    flows = pl.DataFrame({"from_time": [100] * 9, "to_time": [100 + d for d in delays] + [-1]})
    got = metrics.sched_latency(SimpleNamespace(flows=flows.lazy()))  # type: ignore[arg-type]
    assert got == metrics.distribution(np.array(delays)) and got["max"] == 2**33 + 5


def test_frame_batches_read_the_selected_run_in_order(tmp_path: Path) -> None:
    path = tmp_path / "t.parquet"
    kind = [0] * 50 + [1] * 23 + [2] * 40
    frame = pl.DataFrame({"kind": kind, "v": list(range(len(kind))), "w": [-x for x in range(len(kind))]})
    frame.write_parquet(path, row_group_size=16)
    scan = pl.scan_parquet(path)
    for where in (pl.col("kind") == 1, (pl.col("kind") == 2) & (pl.col("v") % 3 == 0), None):
        for rows in (1, 5, 16, 1000):
            got = list(batches.frame_batches(scan, where=where, columns=("v",), rows=rows))
            assert all(b.height <= rows for b in got)
            want = frame if where is None else frame.filter(where)
            assert_frame_equal(pl.concat(got), want.select("v"))
            if where is not None and rows < 23:  # only the selected run's rows were read
                assert len(got) <= -(-(want["v"].max() - want["v"].min() + 1) // rows)
    nothing = list(batches.frame_batches(scan, where=pl.col("kind") == 9, columns=("v", "w")))
    assert len(nothing) == 1 and nothing[0].height == 0 and nothing[0].columns == ["v", "w"]


@pytest.mark.parametrize("valid_events", [None, 5])
@pytest.mark.parametrize("size", [1, 2, 4, 6])
def test_stays_merged_across_batches_as_in_one_table(valid_events: int | None, size: int) -> None:
    # Go's rules, whichever batch a stay falls in: a stay counts the part inside its goroutine's
    # life (none at all when that part is empty), none without a summarised goroutine; stacks of the same PCs merge, keeping the frames
    # of the newest stay; records come in the order their PCs were first seen.
    from goblueprint.timeline import pprof
    from goblueprint.timeline.model import frame as model_frame

    strings = ["a", "b", "c", "x.go"]
    stack_frames = model_frame(
        "stack_frames",
        {"stack": [1, 2, 3], "depth": [0, 0, 0], "pc": [0x10, 0x10, 0x20], "func": [0, 1, 2], "file": [3] * 3,
         "line": [1, 2, 3]},
    )  # fmt: skip
    goroutines = pl.DataFrame({"id": [2, 1], "start_time": [50, None], "end_time": [0, 100]})
    stays = pl.DataFrame(
        {   # g, start, end, stack, end_seq
            "g": [1, 1, 3, 2, 1, 2, 1], "start": [10, 90, 0, 40, 150, 100, 100],
            "end": [20, 120, 9, 60, 160, 300, 110], "stack": [3, 1, 3, 2, 3, 3, 1], "end_seq": [1, 2, 3, 4, 5, 6, 3],
        },
        schema_overrides={"stack": pl.UInt32},
    )  # fmt: skip
    parts = [stays.slice(i, size) for i in range(0, stays.height, size)]
    got = pprof.records(parts, goroutines, stack_frames, strings, trace_end=200, valid_events=valid_events)
    last_c = 100 if valid_events is None else 0  # g2 alive to the trace's end: [100, 200)
    assert [(r.frames[0].func, r.count, r.time) for r in got] == [
        ("c", 1 + (last_c > 0), 10 + last_c),
        ("b", 2, 20),
    ]
    assert [(r.frames[0].func, r.count, r.time) for r in got] == [
        (r.frames[0].func, r.count, r.time)
        for r in pprof.records(stays, goroutines, stack_frames, strings, 200, valid_events)
    ]
