"""Ingest once: the stored tables equal one pass's, are found by content, and are never trusted blindly."""

from __future__ import annotations

import json
import shutil
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from polars.testing import assert_frame_equal

from goblueprint.cli import main
from goblueprint.errors import PathError
from goblueprint.timeline import ingest as ingest_mod
from goblueprint.timeline.ingest import MANIFEST, ingest
from goblueprint.timeline.model import SCHEMAS
from goblueprint.timeline.tables import tables_pass

pytestmark = pytest.mark.slow


def count_passes(monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    """Record every pass the ingest makes over a trace."""
    passes: list[Path] = []
    real = ingest_mod._write

    def spy(src: Path, *args: Any) -> None:
        passes.append(src)
        real(src, *args)

    monkeypatch.setattr(ingest_mod, "_write", spy)
    return passes


@pytest.mark.parametrize("small", [False, True])
def test_stored_tables_and_timeline_equal_one_pass(
    small: bool, trace: Path, cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    if small:  # flows and stays gathered back from disk in pieces of a few rows, stays spilled often
        from goblueprint.timeline import builder, pprof
        from goblueprint.timeline import tables as tables_mod

        monkeypatch.setattr(builder, "_FLOW_PIECE", 7)
        monkeypatch.setattr(pprof, "_STAY_BLOCK", 1)
        monkeypatch.setattr(tables_mod, "_STAY_PIECE", 7)
    found = ingest(trace)
    tables, tl, result, _, profiles = tables_pass(trace, views=True)[:5]
    stored = found.frames()
    assert sorted(stored) == sorted(tables)
    for name, df in tables.items():
        assert_frame_equal(stored[name], df, check_exact=True)
    back = found.timeline()
    assert (back.start_ns, back.end_ns, back.go_version, back.strings) == (
        tl.start_ns, tl.end_ns, tl.go_version, tl.strings,
    )  # fmt: skip
    for name in SCHEMAS:
        assert_frame_equal(getattr(back, name), getattr(tl, name), check_exact=True)
    assert found.error is None and found.events_read == result.events == tables["events"].height
    stored_profiles = found.profiles()
    stored_stays = stored_profiles.stays
    assert isinstance(stored_stays, pl.LazyFrame)  # read a batch at a time by records()
    assert stored_stays.collect().height > 0
    assert_frame_equal(stored_stays.collect(), profiles.stays, check_exact=True)
    for name in ("goroutines", "stack_frames"):
        assert_frame_equal(getattr(stored_profiles, name), getattr(profiles, name), check_exact=True)
    assert (stored_profiles.trace_end, stored_profiles.valid_events) == (profiles.trace_end, None)


@pytest.mark.parametrize("typ", ["sched", "sync", "syscall", "net"])
def test_pprof_reads_the_stored_stays(
    typ: str, trace: Path, cache: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from goblueprint.timeline import pprof
    from goblueprint.timeline.analysis import analyse

    passes = count_passes(monkeypatch)
    one_pass = analyse(trace, timeline=False, pprof_types=[typ]).profiles
    assert one_pass is not None
    want = pprof.write_gzip(pprof.build_profile(one_pass.records(typ)))
    for run in ("first", "second"):
        out = tmp_path / f"{typ}-{run}.pb.gz"
        assert main(["trace", "pprof", "--type", typ, str(trace), "-o", str(out)]) == 0
        assert out.read_bytes() == want, run
    assert passes == [trace]  # the second profile came from the stored stays
    # A type's row groups are found by the statistics of the type column (in type order).
    (found,) = list(cache.glob("*/" + ingest_mod.VIEWS_DIR))
    meta = pq.ParquetFile(found / f"{ingest_mod.STAYS}.parquet").metadata
    for i in range(meta.num_row_groups):
        stats = meta.row_group(i).column(0).statistics
        assert meta.row_group(i).column(0).path_in_schema == "type"
        assert stats is not None and stats.has_min_max


def _group_sizes(syncs: list[int], rows: int) -> list[int]:
    """The events table's row groups: one a generation (each starts at a Sync), a generation of
    more than tables._EVENT_GROUP rows cut in groups of that many."""
    from goblueprint.timeline import tables

    cap = tables._EVENT_GROUP
    sizes = []
    for a, b in zip(syncs, [*syncs[1:], rows], strict=True):
        sizes += [min(cap, b - lo) for lo in range(a, b, cap)]
    return sizes


def test_events_have_a_row_group_per_generation(gc_trace: Callable[[str], Path], cache: Path) -> None:
    found = ingest(gc_trace("1.27"))  # Go 1.26+ closes a trace with a Sync: two generations here
    events = pl.read_parquet(found.table_files()["events"])
    syncs = events.with_row_index().filter(pl.col("kind") == "SYNC")["index"].to_list()
    meta = pq.ParquetFile(found.table_files()["events"]).metadata
    sizes = [meta.row_group(i).num_rows for i in range(meta.num_row_groups)]
    assert syncs[0] == 0 and len(syncs) >= 2
    # (a capture's generation can pass _EVENT_GROUP rows: then it is several groups)
    assert sizes == _group_sizes(syncs, events.height)


def test_stored_text_is_dictionaries_of_plain_strings(trace: Path, cache: Path) -> None:
    # The large tables' text is written from ids as dictionaries (no fallback to plain text,
    # nothing hashed per row), and read as plain strings by any reader: no dictionary type
    # leaks out of the files a user exports.
    found = ingest(trace)
    for name in ("events", "intervals", "flows", "metrics"):
        path = found.table_files()[name]
        assert not any(pa.types.is_dictionary(f.type) for f in pq.read_schema(path)), name
        meta = pq.ParquetFile(path).metadata
        for j in range(meta.num_columns):
            column = meta.row_group(0).column(j)
            if column.physical_type == "BYTE_ARRAY":
                assert "RLE_DICTIONARY" in column.encodings, (name, column.path_in_schema)
    assert not (found.path / "timeline" / "spans.parquet").exists()  # stored once: as intervals


def test_a_large_generation_is_cut_in_bounded_row_groups(
    gc_trace: Callable[[str], Path], cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A row group of the events table is held whole as Arrow until written: a generation of
    # more than _EVENT_GROUP rows is several groups (each Sync still starts one), the rows unchanged.
    from goblueprint.timeline import tables

    trace = gc_trace("1.27")
    whole = tables_pass(trace).tables["events"]
    syncs = whole.with_row_index().filter(pl.col("kind") == "SYNC")["index"].to_list()
    cap = 997
    assert max(b - a for a, b in zip(syncs, [*syncs[1:], whole.height], strict=True)) > 2 * cap
    monkeypatch.setattr(tables, "_EVENT_GROUP", cap)
    found = ingest(trace)
    assert_frame_equal(pl.read_parquet(found.table_files()["events"]), whole, check_exact=True)
    meta = pq.ParquetFile(found.table_files()["events"]).metadata
    sizes = [meta.row_group(i).num_rows for i in range(meta.num_row_groups)]
    starts = [sum(sizes[:i]) for i in range(len(sizes))]
    assert max(sizes) == cap and set(syncs) <= set(starts)
    # Cut only where a generation or a full group ends.
    assert all(s in syncs or s - starts[i - 1] == cap for i, s in enumerate(starts) if i)


@pytest.mark.parametrize(("piece", "go"), [(1, "1.22"), (7, "1.27"), (1 << 22, "1.27")])
def test_tables_spilled_in_small_chunks_are_the_whole_tables(
    piece: int, go: str, gc_trace: Callable[[str], Path], cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The ingest keeps the events and the Timeline's spans on disk during the pass, in chunks,
    # and writes them a generation / a lane kind at a time, a large kind in pieces of lanes:
    # chunks far smaller than a generation, cut across its Sync, many per lane kind, and
    # pieces of one lane each or of a few rows (lanes longer than that alone) change nothing.
    # Pieces of one row are a sort and a frame per span: the smaller trace keeps that case
    # from being a quarter of the suite (it took 143 s on the 1.27 trace).
    from goblueprint.timeline import builder, tables

    trace = gc_trace(go)
    made = tables_pass(trace)
    monkeypatch.setattr(tables, "_EVENT_CHUNK", 997)
    monkeypatch.setattr(builder, "_ROWS", 1024)
    monkeypatch.setattr(builder, "_SPAN_PIECE", piece)
    monkeypatch.setattr(tables, "_SPAN_ROW_GROUP", 1000)
    found = ingest(trace)
    stored = found.frames()
    assert sorted(stored) == sorted(made.tables)
    for name, df in made.tables.items():
        assert_frame_equal(stored[name], df, check_exact=True)
    back = found.timeline()
    for name in SCHEMAS:
        assert_frame_equal(getattr(back, name), getattr(made.timeline, name), check_exact=True)
    whole = made.tables["events"]
    meta = pq.ParquetFile(found.table_files()["events"]).metadata
    sizes = [meta.row_group(i).num_rows for i in range(meta.num_row_groups)]
    syncs = whole.with_row_index().filter(pl.col("kind") == "SYNC")["index"].to_list()
    assert len(syncs) >= 2 and sizes == _group_sizes(syncs, whole.height)
    assert [p.name for p in found.path.iterdir() if p.name.startswith(".")] == []  # no spill left


def test_spans_sorted_in_smaller_pieces_store_the_same_files(
    gc_trace: Callable[[str], Path], cache: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # What a sort of the spilled spans holds is bounded by _SPAN_SORT rows (or one lane), and
    # the files do not depend on it: the row groups are still cut where a piece of _SPAN_PIECE
    # rows ends, the sink carrying the rows short of a group from one small piece to the next.
    from goblueprint.timeline import builder, tables

    trace = gc_trace("1.27")
    monkeypatch.setattr(builder, "_SPAN_PIECE", 5000)
    monkeypatch.setattr(tables, "_SPAN_ROW_GROUP", 1000)
    sorted_rows: list[tuple[int, int]] = []  # rows and lanes of each piece sorted
    real = builder._SpilledSpans._sorted

    def spy(self: Any, spill: Any, at: Any) -> pl.DataFrame:
        part = real(self, spill, at)
        sorted_rows.append((part.height, part.select("lane_kind", "lane_id").n_unique()))
        return part

    monkeypatch.setattr(builder._SpilledSpans, "_sorted", spy)
    whole = ingest(trace, out=tmp_path / "whole")
    # Sorts of a third of the largest piece of several lanes, whatever the capture's size.
    sort = max((rows for rows, lanes in sorted_rows if lanes > 1), default=0) // 3
    assert sort >= 2, sorted_rows
    sorted_rows.clear()
    in_order: list[tuple[int, bool]] = []  # each lane longer than a sort: its rows, made in order
    real_in_order = builder._in_order

    def order_spy(spill: Any, ranges: Any, rows: int) -> bool:
        got = real_in_order(spill, ranges, rows)
        in_order.append((int((ranges[1] - ranges[0]).sum()), got))
        return got

    monkeypatch.setattr(builder, "_in_order", order_spy)
    monkeypatch.setattr(builder, "_SPAN_SORT", sort)
    monkeypatch.setattr(builder, "_FLOW_PIECE", 7)  # the flows gathered sorted, 7 at a time
    small = ingest(trace, out=tmp_path / "small")
    # A lane longer than that, in order as its spans are made, is cut too (each piece sorted);
    # only a lane not made in order is sorted whole.
    assert any(made_in_order for _, made_in_order in in_order), in_order
    assert not any(rows > sort and lanes > 1 for rows, lanes in sorted_rows)
    whole_lanes = sorted(rows for rows, made_in_order in in_order if not made_in_order)
    assert sorted(rows for rows, _ in sorted_rows if rows > sort) == whole_lanes
    files = sorted(p.relative_to(whole.path) for p in whole.path.rglob("*.parquet"))
    assert files == sorted(p.relative_to(small.path) for p in small.path.rglob("*.parquet"))
    for rel in files:
        assert (whole.path / rel).read_bytes() == (small.path / rel).read_bytes(), rel


def test_finish_hands_on_the_counters_then_the_flows_one_at_a_time(
    gc_trace: Callable[[str], Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A spilling builder keeps its flows and counters on disk during the pass and, given a
    # sink, makes each table only to hand it on: the counters are let go of before the flows
    # are made, and the Timeline holds neither.  The counters, the larger, come in pieces of
    # a row group read from the spill one at a time, never whole; the flows in pieces of
    # their sorted rows gathered from the spill.
    import weakref

    from goblueprint.timeline import builder as builder_mod
    from goblueprint.timeline.builder import TimelineBuilder
    from goblueprint.timeline.source import run_pass

    # The loop's output buffers move their rows out when full: small ones fill on any trace
    # (a fresh gc trace may have fewer flows than the default 64 Ki rows).
    monkeypatch.setattr(builder_mod, "_ROWS", 256)
    monkeypatch.setattr(builder_mod, "ROW_GROUP", 100)
    monkeypatch.setattr(builder_mod, "_FLOW_PIECE", 37)
    in_memory = TimelineBuilder()
    b = TimelineBuilder(spill=tmp_path)
    result = run_pass(gc_trace("1.27"), [in_memory, b])
    made = in_memory.finish(result.last_time)
    assert b.flows.file.rows > 37 and b.counters.file.rows > 300  # on disk, not in memory
    handed: list[tuple[str, Any]] = []

    def tables_to(name: str, table: Any, strings: list[str]) -> None:
        assert all(ref() is None for _, ref in handed)  # the table before it let go of
        if not isinstance(table, pl.DataFrame):
            pieces = []
            for piece in table:
                assert piece.height <= (100 if name == "counters" else 37)
                pieces.append(piece)
                del piece
            table = pl.concat(pieces)
        assert_frame_equal(table, getattr(made, name), check_exact=True)
        handed.append((name, weakref.ref(table)))

    tl = b.finish(result.last_time, spans_to=lambda *_: None, tables_to=tables_to)
    assert [name for name, _ in handed] == ["counters", "flows"]
    assert tl.counters.height == tl.flows.height == 0


def test_found_by_content_and_made_once(
    trace: Path, cache: Path, gc_trace: Callable[[str], Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    passes = count_passes(monkeypatch)
    first = ingest(trace)
    elsewhere = trace.with_name("renamed.bin")
    shutil.copyfile(trace, elsewhere)
    assert ingest(elsewhere).path == first.path
    assert ingest(trace).manifest == first.manifest
    assert passes == [trace]
    other = gc_trace("1.27")
    assert ingest(other).path != first.path
    assert passes == [trace, other]


def test_summary_tables_give_back_the_summary(trace: Path) -> None:
    from dataclasses import fields

    from goblueprint.timeline.analysis import analyse
    from goblueprint.timeline.summary_tables import summary_frames, summary_of

    summary = analyse(trace, timeline=False).summary
    assert summary.tasks and any(g.regions for g in summary.goroutines.values())
    back = summary_of(summary_frames(summary), summary.start_time, summary.end_time)
    assert (back.start_time, back.end_time) == (summary.start_time, summary.end_time)
    assert list(back.goroutines) == list(summary.goroutines)
    for gid, g in summary.goroutines.items():
        for f in fields(g):
            if f.name != "pending":  # the pass's working state, not part of the result
                assert getattr(back.goroutines[gid], f.name) == getattr(g, f.name), (gid, f.name)
    for tid, t in summary.tasks.items():
        got = back.tasks[tid]
        assert (got.name, got.parent, got.children, got.start_time, got.end_time, got.logs, got.goroutines) == (
            t.name, t.parent, t.children, t.start_time, t.end_time, t.logs, t.goroutines,
        )  # fmt: skip


def test_summary_tables_keep_any_task_id() -> None:
    """Task ids are uint64s from the wire: NoTask and ids above 2**63 come back unchanged."""
    from goblueprint.timeline.summary import GoroutineSummary, RegionSummary, Summary, TaskSummary
    from goblueprint.timeline.summary_tables import summary_frames, summary_of

    huge, no_task = 2**63 + 5, 2**64 - 1
    g = GoroutineSummary(id=7, name="main.f", pc=2**64 - 8, regions=[RegionSummary(huge, "r", None, 9)])
    tasks = {huge: TaskSummary(huge, "t", parent=no_task, children=[2**64 - 2], goroutines={7, -1})}
    back = summary_of(summary_frames(Summary({7: g}, tasks, 1, 10)), 1, 10)
    assert back.goroutines[7].regions[0].task == huge and back.goroutines[7].pc == 2**64 - 8
    t = back.tasks[huge]
    assert (t.id, t.parent, t.children, t.goroutines) == (huge, no_task, [2**64 - 2], {7, -1})


def test_metrics_read_the_stored_summary_and_utilization(
    trace: Path, cache: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from goblueprint.timeline import metrics, mmu
    from goblueprint.timeline.analysis import analyse

    a = analyse(trace, mmu_flags=mmu.DEFAULT_FLAGS)
    assert a.timeline is not None and a.utilization
    want = json.loads(json.dumps(metrics.compute(a.summary, a.timeline, utilization=a.utilization)))
    passes = count_passes(monkeypatch)
    for run in ("first", "second"):
        assert main(["trace", "metrics", "--json", str(trace)]) == 0
        assert json.loads(capsys.readouterr().out) == want, run
    assert passes == [trace]  # the second run read the stored tables
    # Other MMU flags than the stored ones are a pass of their own, not a wrong answer.
    other = mmu.parse_flags("stw,perproc")
    b = analyse(trace, mmu_flags=other)
    assert main(["trace", "metrics", "--json", "--mmu-flags", "stw,perproc", str(trace)]) == 0
    got = json.loads(capsys.readouterr().out)["mmu"]
    assert b.utilization is not None
    assert got == json.loads(json.dumps(mmu.summary(b.utilization, other, mmu.DEFAULT_WINDOWS)))
    assert passes == [trace]


@pytest.mark.parametrize(
    "damage",
    [
        "flip a byte",
        "truncate a table",
        "remove a table",
        "remove the manifest",
        "garbage manifest",
        "other code",
        "other layout",
    ],
)
def test_damaged_or_stale_entries_are_made_again(
    damage: str, trace: Path, cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    good = ingest(trace)
    want = good.frames()
    table = good.table_files()["intervals"]
    if damage == "flip a byte":
        data = bytearray(table.read_bytes())
        data[len(data) // 2] ^= 0xFF  # same size: only the hash can tell
        table.write_bytes(bytes(data))
    elif damage == "truncate a table":
        table.write_bytes(table.read_bytes()[:100])
    elif damage == "remove a table":
        table.unlink()
    elif damage == "remove the manifest":
        (good.path / MANIFEST).unlink()
    elif damage == "garbage manifest":
        (good.path / MANIFEST).write_text("{not json")
    elif damage == "other layout":  # the same code, files laid out otherwise (say, before LAYOUT 2)
        manifest = json.loads((good.path / MANIFEST).read_text())
        manifest["layout"] = ingest_mod.LAYOUT - 1
        (good.path / MANIFEST).write_text(json.dumps(manifest))
    else:
        monkeypatch.setattr(ingest_mod, "code_fingerprint", lambda: "0" * 32)
    passes = count_passes(monkeypatch)
    again = ingest(trace)
    assert passes == [trace], damage
    for name, df in want.items():
        assert_frame_equal(again.frames()[name], df, check_exact=True)


def test_files_proven_whole_are_trusted_by_their_stamps_until_one_changes(
    trace: Path, cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    good = ingest(trace)
    hashed: list[Path] = []
    real_hash = ingest_mod.content_hash

    def spy(path: Path, *args: Any) -> str:
        if good.path in path.parents:
            hashed.append(path)
        return real_hash(path, *args)

    monkeypatch.setattr(ingest_mod, "content_hash", spy)
    stored = len(good.manifest["files"])
    assert len(hashed) == 0 and ingest(trace).path == good.path
    assert len(hashed) == stored  # fresh files: hashed, and too new to be stamped
    monkeypatch.setattr(ingest_mod, "_SETTLED_NS", -(10**12))  # as if they had settled
    ingest(trace)
    assert len(hashed) == 2 * stored
    ingest(trace)
    assert len(hashed) == 2 * stored  # stamps match: nothing hashed
    # A byte flipped in place (same size) changes the file's ctime: hashed again, found out.
    table = good.table_files()["intervals"]
    time.sleep(0.05)  # past the filesystem clock's tick, which the settled margin covers in use
    data = bytearray(table.read_bytes())
    data[len(data) // 2] ^= 0xFF
    table.write_bytes(bytes(data))
    passes = count_passes(monkeypatch)
    ingest(trace)
    assert passes == [trace]
    assert table in hashed[2 * stored :]


def test_output_directory_is_made_or_refused(trace: Path, cache: Path, tmp_path: Path) -> None:
    out = tmp_path / "tables"
    found = ingest(trace, out=out)
    assert found.path == out and (out / MANIFEST).is_file() and not cache.exists()
    assert json.loads((out / MANIFEST).read_text())["content"] == ingest_mod.content_hash(trace)
    assert ingest(trace, out=out).manifest == found.manifest  # sound: kept
    theirs = tmp_path / "theirs"
    theirs.mkdir()
    (theirs / "notes.txt").write_text("mine")
    with pytest.raises(PathError, match="not ingested tables"):
        ingest(trace, out=theirs)
    assert (theirs / "notes.txt").read_text() == "mine"
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []  # no temporary left


def test_partial_trace_is_stored_with_its_error(
    go_trace: Callable[..., Path], cache: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from goblueprint.trace.wire import batch_layout

    # gens spans several generations: cut inside a later one, so what came before is usable.
    data = go_trace(
        "gens", go="1.27", prog_root=Path(__file__).parents[1] / "trace_core" / "goprogs"
    ).read_bytes()
    later = min(b.offset for gen, b in batch_layout(data) if gen >= 2)
    cut = tmp_path / "cut.trace"
    cut.write_bytes(data[: (later + len(data)) // 2])
    found = ingest(cut)
    assert found.error is not None and found.error.offset is not None
    lines = []
    for _ in range(2):  # the first run ingests, the second reads the tables: the same verdict
        code = main(["trace", "sql", str(cut), "select count(*) as n from events"])
        out, err = capsys.readouterr()
        assert code == 1
        lines.append((out, err))
    assert lines[0] == lines[1]
    assert f"the tables hold the {found.events_read} events before it" in lines[0][1]
    assert str(found.events_read) in lines[0][0]
