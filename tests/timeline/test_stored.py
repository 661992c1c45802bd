"""The Timeline's large tables stored once as SQL tables: the file is with_names' table, and the
Timeline's table comes back from it exactly."""

from __future__ import annotations

import itertools
from pathlib import Path

import duckdb
import numpy as np
import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from polars.testing import assert_frame_equal

from goblueprint.timeline import stored
from goblueprint.timeline.model import FlowKind, LaneKind, State, Timeline, frame

STRINGS = ["", "chan receive", "GC (dedicated)", "ünïcode label", "go", "heap"]


def _timeline(rows: int = 3000) -> Timeline:
    rng = np.random.default_rng(7)
    kinds = np.sort(rng.choice([int(LaneKind.G), int(LaneKind.P), int(LaneKind.M)], rows))
    # G, P and M states named alike ("running"): the stored state names must not lose a code.
    states = rng.choice([int(State.G_RUNNING), int(State.P_RUNNING), int(State.M_RUNNING), 57], rows)
    start = np.cumsum(rng.integers(1, 1000, rows))
    spans = frame(
        "spans",
        {
            "lane_kind": kinds, "lane_id": rng.integers(0, 5, rows), "start": start,
            "end": start + rng.integers(0, 500, rows), "state": states, "g": rng.integers(-1, 9, rows),
            "p": rng.integers(-1, 3, rows), "m": rng.integers(-1, 3, rows),
            "label": rng.integers(0, len(STRINGS), rows), "stack": rng.integers(0, 4, rows),
        },
    )  # fmt: skip
    flows = frame(
        "flows",
        {
            "kind": rng.choice([int(k) for k in FlowKind], rows // 3), "g": rng.integers(0, 9, rows // 3),
            "from_g": rng.integers(-1, 9, rows // 3), "from_p": rng.integers(-1, 3, rows // 3),
            "from_time": start[: rows // 3], "to_p": rng.integers(-1, 3, rows // 3),
            "to_m": rng.integers(-1, 3, rows // 3), "to_time": start[: rows // 3] + 5,
            "label": rng.integers(0, len(STRINGS), rows // 3), "stack": rng.integers(0, 4, rows // 3),
            "migrated": rng.integers(0, 2, rows // 3).astype(bool),
        },
    )  # fmt: skip
    counters = frame(
        "counters",
        {"name": rng.choice([4, 5], rows // 2), "time": start[: rows // 2], "value": rng.random(rows // 2)},
    )
    return Timeline(strings=list(STRINGS), spans=spans, flows=flows, counters=counters)


@pytest.mark.parametrize("table", ["spans", "flows", "counters"])
def test_stored_file_is_the_named_table_and_gives_the_timeline_table_back(table: str, tmp_path: Path) -> None:
    tl = _timeline()
    path = tmp_path / f"{table}.parquet"
    used = stored.Used()
    stored.write_table(path, table, getattr(tl, table), tl.strings, used)
    named = tl.with_names(table)
    # Every reader sees with_names' table: plain text columns, no dictionary type leaking out.
    assert_frame_equal(pl.read_parquet(path), named, check_exact=True)
    arrow = pq.read_table(path)
    assert not any(pa.types.is_dictionary(f.type) for f in arrow.schema)
    assert_frame_equal(pl.from_arrow(arrow), named, check_exact=True, check_dtypes=False)
    from_duckdb = duckdb.sql(f"select * from '{path}'").pl()
    assert_frame_equal(from_duckdb, named, check_exact=True, check_dtypes=False)
    # Text written as dictionaries (the ids as they are), never fallen back to plain text.
    meta = pq.ParquetFile(path).metadata
    assert meta.num_row_groups >= 1
    for i in range(meta.num_row_groups):
        for j in range(meta.num_columns):
            column = meta.row_group(i).column(j)
            if column.path_in_schema in stored.TIME_COLUMNS[table]:
                assert "DELTA_BINARY_PACKED" in column.encodings
            elif column.physical_type == "BYTE_ARRAY":
                assert "RLE_DICTIONARY" in column.encodings, column.path_in_schema
            # Statistics where a reader skips row groups by them: every column but text not
            # in row order (its minimum and maximum cost the most to write and skip nothing).
            texts = (
                column.physical_type == "BYTE_ARRAY"
                and column.path_in_schema not in stored.SORTED_TEXTS[table]
            )
            assert column.is_stats_set != texts, column.path_in_schema
    # Mapped back through the strings the table names (as an ingest records them) or any.
    text = {"spans": "label", "flows": "label", "counters": "name"}[table]
    assert used.ids() == {table: sorted(set(getattr(tl, table)[text].to_list()))}
    for texts in (stored.Texts(tl.strings, used.ids()), stored.Texts(tl.strings)):
        back = stored.as_timeline(table, pl.scan_parquet(path), texts).collect()
        assert_frame_equal(back, getattr(tl, table), check_exact=True)


def test_row_groups_and_empty_tables(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    tl = _timeline()
    monkeypatch.setattr(stored, "ROW_GROUP", 1000)
    path = tmp_path / "spans.parquet"
    used = stored.Used()
    stored.write_table(path, "spans", tl.spans, tl.strings, used)
    assert pq.ParquetFile(path).metadata.num_row_groups == 3
    texts = stored.Texts(tl.strings, used.ids())
    assert_frame_equal(stored.as_timeline("spans", pl.scan_parquet(path), texts).collect(), tl.spans)
    # A batch read as a slice of the scan, as the views read it.
    batch = stored.as_timeline("spans", pl.scan_parquet(path), texts).slice(1500, 700).collect()
    assert_frame_equal(batch, tl.spans.slice(1500, 700), check_exact=True)
    # Given as pieces of any sizes (a sorted table gathered piece by piece, some rows left
    # out), the same file: rows short of a group are carried to the next piece.
    cuts = [0, 1, 1, 999, 1700, 2600, tl.spans.height]
    pieces = (tl.spans.slice(a, b - a) for a, b in itertools.pairwise(cuts))
    in_pieces = tmp_path / "pieces.parquet"
    assert stored.write_table(in_pieces, "spans", pieces, tl.strings, stored.Used()) == tl.spans.height
    assert in_pieces.read_bytes() == path.read_bytes()
    empty = Timeline(strings=[""])
    stored.write_table(path, "flows", empty.flows, empty.strings, used)
    assert_frame_equal(pl.read_parquet(path), empty.with_names("flows"), check_exact=True)
    back = stored.as_timeline("flows", pl.scan_parquet(path), stored.Texts([""], used.ids())).collect()
    assert_frame_equal(back, empty.flows)


def test_text_mapped_through_the_strings_a_table_names(tmp_path: Path) -> None:
    # The Timeline's strings can be tens of thousands (every function and file of its stacks)
    # where a table names a few: the ids come back right through those few, each at its id.
    many = ["", *(f"pkg.func{i}" for i in range(20_000))]
    tl = _timeline()
    labels = pl.Series("label", np.array([0, 19_999, 7, 12_345], np.uint32)[np.arange(tl.spans.height) % 4])
    spans = tl.spans.with_columns(labels)
    path = tmp_path / "spans.parquet"
    used = stored.Used()
    stored.write_table(path, "spans", spans, many, used)
    assert used.ids() == {"spans": [0, 7, 12_345, 19_999]}
    back = stored.as_timeline("spans", pl.scan_parquet(path), stored.Texts(many, used.ids())).collect()
    assert_frame_equal(back, spans, check_exact=True)
