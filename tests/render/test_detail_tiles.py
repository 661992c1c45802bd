"""Long lanes' levels made a tile of time at a time (timeline.detail_tiles) against the same
levels made of each lane whole."""

from __future__ import annotations

import lzma
from pathlib import Path

import numpy as np
import polars as pl
import pytest

from goblueprint.errors import GoblueprintError
from goblueprint.timeline import detail_store, detail_tiles
from goblueprint.timeline.detail import plan_levels, runs
from goblueprint.timeline.model import build_timeline

ROOT = Path(__file__).resolve().parents[2]
GOLDEN = ROOT / "tests" / "timeline" / "golden_builder"
_SPANS = {"lane_kind": pl.UInt8, "lane_id": pl.Int64, "start": pl.Int64, "end": pl.Int64, "state": pl.UInt8}


def _levels(spans: pl.DataFrame, origin: int, duration: int, out: Path) -> dict[str, pl.DataFrame]:
    file = out.with_suffix(".parquet")
    spans.sort(["lane_kind", "lane_id", "start", "end"], maintain_order=True).write_parquet(file)
    levels = plan_levels(duration)
    detail_store.build(file, origin, levels, out)
    return {p.name: pl.read_parquet(p) for p in sorted(out.glob("*.parquet"))}


def _both(spans: pl.DataFrame, origin: int, duration: int, tmp: Path, monkeypatch, chunk: int, tile: int):
    whole = _levels(spans, origin, duration, tmp / "whole")
    monkeypatch.setattr(detail_store, "CHUNK_SPANS", chunk)
    monkeypatch.setattr(detail_tiles, "TILE_ROWS", tile)
    calls = []
    real = detail_tiles.long_lane_runs

    def counted(*args, **kw):
        calls.append(args[2])
        return real(*args, **kw)

    monkeypatch.setattr(detail_store, "long_lane_runs", counted)
    tiled = _levels(spans, origin, duration, tmp / "tiled")
    return whole, tiled, calls


def test_long_lanes_of_a_real_trace_tiled_give_the_whole_lanes_levels(tmp_path, monkeypatch):
    tl = build_timeline(lzma.decompress((GOLDEN / "sched-go1.27.trace.xz").read_bytes()))
    spans = tl.spans.select(list(_SPANS)).cast(_SPANS)
    whole, tiled, calls = _both(spans, tl.start_ns, tl.end_ns - tl.start_ns, tmp_path, monkeypatch, 2000, 777)
    assert len(calls) > 3, "some lanes took the tiled path"
    assert whole.keys() == tiled.keys()
    for name in whole:
        if name != "counts.parquet":
            assert tiled[name].equals(whole[name]), name


@pytest.mark.parametrize("seed", range(4))
def test_overlapping_states_across_tile_edges(tmp_path, monkeypatch, seed):
    """Lanes of nested, overlapping and touching ranges of three states, long ones crossing
    many tiles, spans before the origin and of no length: tiled = whole, and the whole is
    runs() of the lane."""
    rng = np.random.default_rng(seed)
    rows = []
    for lane in range(3):
        for _ in range(3000):
            s = int(rng.integers(-500, 2_000_000))
            d = int(rng.choice([0, 1, 50, 3000, 40_000, 900_000]))
            rows.append((1, lane, s, s + d, int(rng.integers(0, 3))))
    spans = pl.DataFrame(rows, schema=_SPANS, orient="row")
    whole, tiled, calls = _both(spans, 0, 2_000_000, tmp_path, monkeypatch, 500, 211)
    assert len(calls) == 3
    for name in whole:
        if name != "counts.parquet":
            assert tiled[name].equals(whole[name]), name
    levels = plan_levels(2_000_000)
    k = levels.count - 1
    lane1 = spans.filter(pl.col("lane_id") == 1).select(
        pl.col("lane_id").cast(pl.UInt32).alias("lane"), "start", "end", "state"
    )
    want = runs(lane1, levels.width(k)).select("b0", "b1", "state", "fill")
    got = tiled[f"level_{k}.parquet"].filter(pl.col("lane_id") == 1).select("b0", "b1", "state", "fill")
    assert got.equals(want)


def test_chunks_in_pieces_on_two_workers_write_the_same_files(tmp_path, monkeypatch):
    """Chunks summarised a few lanes at a time and two at once: byte for byte the files of
    whole chunks one at a time (a chunk's rows are still written as one frame, in order)."""
    tl = build_timeline(lzma.decompress((GOLDEN / "sched-go1.27.trace.xz").read_bytes()))
    spans = tl.spans.select(list(_SPANS)).cast(_SPANS)
    file = tmp_path / "spans.parquet"
    spans.sort(["lane_kind", "lane_id", "start", "end"], maintain_order=True).write_parquet(file)
    levels = plan_levels(tl.end_ns - tl.start_ns)
    monkeypatch.setattr(detail_store, "CHUNK_SPANS", 3000)
    monkeypatch.setattr(detail_store, "WORKERS", 1)
    monkeypatch.setattr(detail_store, "PIECE_SPANS", 10**9)
    detail_store.build(file, tl.start_ns, levels, tmp_path / "whole")
    monkeypatch.setattr(detail_store, "WORKERS", 2)
    monkeypatch.setattr(detail_store, "PIECE_SPANS", 400)
    detail_store.build(file, tl.start_ns, levels, tmp_path / "pieces")
    names = sorted(p.name for p in (tmp_path / "whole").iterdir())
    assert names == sorted(p.name for p in (tmp_path / "pieces").iterdir())
    assert len(names) == levels.count + 3
    for name in names:
        assert (tmp_path / "pieces" / name).read_bytes() == (tmp_path / "whole" / name).read_bytes(), name


def test_a_spans_table_not_sorted_by_lane_is_refused(tmp_path):
    spans = pl.DataFrame(
        [(1, lane, t, t + 5, 1) for t in range(0, 100, 10) for lane in (1, 2)], schema=_SPANS, orient="row"
    )
    file = tmp_path / "spans.parquet"
    spans.write_parquet(file)
    with pytest.raises(GoblueprintError, match="not sorted by lane"):
        detail_store.build(file, 0, plan_levels(100), tmp_path / "out")


def test_long_lanes_written_a_few_runs_at_a_time(tmp_path, monkeypatch):
    """Row groups of a few runs: a long lane's levels are handed on in many frames as its
    tiles come (the runs held back counted across tiles), and are still the whole lane's."""
    monkeypatch.setattr(detail_store, "ROW_GROUP", 37)
    rng = np.random.default_rng(7)
    rows = []
    for lane in range(2):
        t = 0
        for _ in range(4000):
            d = int(rng.integers(1, 3000))
            rows.append((1, lane, t, t + d, int(rng.integers(0, 3))))
            t += d + int(rng.integers(0, 2)) * int(rng.integers(0, 5000))
    spans = pl.DataFrame(rows, schema=_SPANS, orient="row")
    duration = int(spans["end"].max())
    whole, tiled, calls = _both(spans, 0, duration, tmp_path, monkeypatch, 1000, 333)
    assert len(calls) == 2
    for name in whole:
        if name != "counts.parquet":
            assert tiled[name].equals(whole[name]), name
    # Whole row groups, but for each lane's last: as the levels of a lane made at once are cut.
    for name in whole:
        if name.startswith("level_"):
            sizes = _group_rows(tmp_path / "tiled" / name)
            assert sum(n != 37 for n in sizes) <= 2, (name, sizes)
    assert len(_group_rows(tmp_path / "tiled" / "level_0.parquet")) > 3


def _group_rows(path: Path) -> list[int]:
    import pyarrow.parquet as pq

    meta = pq.ParquetFile(path).metadata
    return [meta.row_group(k).num_rows for k in range(meta.num_row_groups)]


def test_level_files_hold_bucket_numbers_delta_coded(tmp_path):
    """b0 and b1 grow along a lane and are nearly all distinct: delta-coded, no dictionary (the
    writer's dictionary for them cost half its time and made the files 3.5 times larger);
    the columns of few values keep theirs."""
    import pyarrow.parquet as pq

    tl = build_timeline(lzma.decompress((GOLDEN / "sched-go1.27.trace.xz").read_bytes()))
    got = _levels(
        tl.spans.select(list(_SPANS)).cast(_SPANS), tl.start_ns, tl.end_ns - tl.start_ns, tmp_path / "l"
    )
    assert got["level_0.parquet"].height > 0
    for k in range(plan_levels(tl.end_ns - tl.start_ns).count):
        meta = pq.ParquetFile(tmp_path / "l" / f"level_{k}.parquet").metadata
        for g in range(meta.num_row_groups):
            group = meta.row_group(g)
            encodings = {group.column(c).path_in_schema: set(group.column(c).encodings) for c in range(6)}
            for name in ("b0", "b1"):
                assert "DELTA_BINARY_PACKED" in encodings[name] and "RLE_DICTIONARY" not in encodings[name]
            for name in ("lane_kind", "lane_id", "state", "fill"):
                assert "RLE_DICTIONARY" in encodings[name]
