"""The Perfetto export decoded back with Perfetto's own protos: tracks, balanced slices, order, flows, counters."""

from __future__ import annotations

import io
import lzma
import re
from collections import Counter, defaultdict
from pathlib import Path

import perfetto_read as pr
import polars as pl
import pytest
from perfetto.protos.perfetto.trace import perfetto_trace_pb2 as pb
from synth import drawable_flows

from goblueprint.render.lanes import arrange, sorted_spans, span_titles
from goblueprint.timeline.export_perfetto import COUNTER_TITLES, write_perfetto
from goblueprint.timeline.model import LaneKind, State


def decode(tl) -> pr.Decoded:
    buf = io.BytesIO()
    written = write_perfetto(tl, buf)
    decoded = pr.read(buf.getvalue())
    assert len(decoded.packets) == written
    return decoded


def check(decoded: pr.Decoded, tl):
    """Structural checks every export must pass; returns what the caller may check further."""
    tracks = decoded.tracks
    events = defaultdict(list)  # track uuid -> [(ts, type, name)]
    flows_out: Counter[int] = Counter()
    flows_in: Counter[int] = Counter()
    for e in decoded.events:
        assert e.track in tracks, "event on a track without descriptor"
        if e.type != pb.TrackEvent.TYPE_SLICE_END and e.type != pb.TrackEvent.TYPE_COUNTER:
            assert e.name, "slice or instant without a name"
        events[e.track].append((e.ts, e.type, e.name))
        flows_out.update(e.flow_ids)
        flows_in.update(e.terminating_flow_ids)
    for desc in tracks.values():
        if desc.HasField("parent_uuid"):
            assert desc.parent_uuid in tracks
    slices = 0
    for uuid, evs in events.items():
        times = [t for t, _, _ in evs]
        assert times == sorted(times), f"track {tracks[uuid].name} not in time order"
        depth = 0
        for _t, kind, _n in evs:
            if kind == pb.TrackEvent.TYPE_SLICE_BEGIN:
                depth += 1
                slices += 1
            elif kind == pb.TrackEvent.TYPE_SLICE_END:
                depth -= 1
                assert depth >= 0, f"unbalanced end on {tracks[uuid].name}"
        assert depth == 0, f"unclosed slice on {tracks[uuid].name}"
    # Every flow starts once and ends once.
    assert set(flows_out) == set(flows_in)
    assert all(c == 1 for c in flows_out.values()) and all(c == 1 for c in flows_in.values())
    nonzero = tl.spans.filter(pl.col("end") > pl.col("start")).height
    assert slices == nonzero
    return tracks, events, flows_out


def expected_slices(tl) -> dict[str, list[tuple[int, int, str]]]:
    """Per lane name, the Timeline's spans of non-zero length as (start since trace start, duration, title)."""
    spans = sorted_spans(tl)
    lanes = arrange(tl, spans)
    title_of_span, titles = span_titles(tl, spans, lanes)
    starts, ends = spans["start"].to_numpy(), spans["end"].to_numpy()
    out = {}
    for lane in lanes:
        rows = [r for r in range(lane.lo, lane.hi) if ends[r] > starts[r]]
        out[lane.name] = sorted(
            (int(starts[r]) - tl.start_ns, int(ends[r] - starts[r]), titles[title_of_span[r]]) for r in rows
        )
    return out


def same_slices(decoded: pr.Decoded, tl) -> None:
    """Each lane's slices as the reader rebuilds them equal the Timeline's spans: count, names, times."""
    got: dict[str, list[tuple[int, int, str]]] = defaultdict(list)
    for uuid, rows in pr.slices(decoded).items():
        # Overlapping spans of one lane go to its "(2)", "(3)" tracks.
        got[re.sub(r" \(\d+\)$", "", decoded.tracks[uuid].name)].extend(rows)
    want = expected_slices(tl)
    assert {k: sorted(v) for k, v in got.items()} == {k: v for k, v in want.items() if v}


def test_synthetic(synthetic_timeline):
    tl = synthetic_timeline
    decoded = decode(tl)
    tracks, events, flows = check(decoded, tl)
    same_slices(decoded, tl)
    by_name = {d.name: d for d in tracks.values()}
    assert {"Procs", "Threads", "Goroutines", "GC & stop-the-world", "Counters"} <= set(by_name)
    assert by_name["Proc 0"].parent_uuid == by_name["Procs"].uuid
    g1 = [n for n in by_name if n.startswith("G1 ")]
    assert g1 and by_name[g1[0]].parent_uuid == by_name["Goroutines"].uuid
    waits = [e for e in events[by_name[g1[0]].uuid] if e[1] == pb.TrackEvent.TYPE_SLICE_BEGIN]
    assert "waiting: chan receive" in {n for _, _, n in waits}
    assert len(flows) == tl.flows.height
    # Counters: the heap metric keeps its samples and unit.
    heap = by_name["heap in use"]
    assert heap.counter.unit == pb.CounterDescriptor.UNIT_SIZE_BYTES
    assert len(events[heap.uuid]) == 2
    gc = by_name["GC in progress"]
    assert len(events[gc.uuid]) == 2 * tl.spans.filter(pl.col("state") == int(State.GC_CYCLE)).height


def test_overlapping_spans_go_to_extra_tracks(synthetic_timeline):
    # Two ranges on one goroutine that overlap without nesting cannot share a track.
    tl = synthetic_timeline
    extra = pl.DataFrame(
        {
            "lane_kind": [int(LaneKind.GRANGE)] * 3, "lane_id": [1, 1, 1],
            "start": [tl.start_ns + 10, tl.start_ns + 20, tl.start_ns + 22], "end": [tl.start_ns + 30, tl.start_ns + 40, tl.start_ns + 25],
            "state": [int(State.MARK_ASSIST), int(State.RANGE), int(State.RANGE)], "g": [1, 1, 1], "p": [-1] * 3, "m": [-1] * 3,
            "label": [0, 0, 0], "stack": [0, 0, 0],
        },
        schema=tl.spans.schema,
    )  # fmt: skip
    from dataclasses import replace

    tl2 = replace(tl, spans=pl.concat([tl.spans, extra]))
    decoded = decode(tl2)
    tracks, _, _ = check(decoded, tl2)
    same_slices(decoded, tl2)
    names = sorted(d.name for d in tracks.values() if d.name.startswith("G1 ") and d.parent_uuid)
    assert any(n.endswith("(2)") for n in names), names


def test_pieces_with_layers_show_what_one_piece_shows(synthetic_timeline, monkeypatch):
    """A lane cut into pieces: groups of spans that overlap without nesting (a "(2)" track),
    separated by gaps where nothing is open, then a long span that holds later ones open
    (no cut while it lasts), and a state first met in a later piece (a name interned after
    the sequence's first packet).  Read back, it is the file the lane makes in one piece."""
    from dataclasses import replace

    from goblueprint.timeline import export_perfetto as ep
    from goblueprint.timeline import perfetto_sources as ps

    tl = synthetic_timeline
    t0 = tl.start_ns + 1000
    start, end, state = [], [], []
    for k in range(12):  # 3 rows a group: [0, 20), [10, 30) (layer 2), [12, 15) inside the first
        base = t0 + 100 * k
        start += [base, base + 10, base + 12]
        end += [base + 20, base + 30, base + 15]
        state += [int(State.MARK_ASSIST if k < 8 else State.SWEEP), int(State.RANGE), int(State.RANGE)]
    long_start = t0 + 100 * 12
    start += [long_start] + [long_start + 10 * i for i in range(1, 9)]
    end += [long_start + 500] + [long_start + 10 * i + 5 for i in range(1, 9)]
    state += [int(State.RANGE)] * 9
    n = len(start)
    extra = pl.DataFrame(
        {
            "lane_kind": [int(LaneKind.GRANGE)] * n, "lane_id": [1] * n, "start": start, "end": end,
            "state": state, "g": [1] * n, "p": [-1] * n, "m": [-1] * n, "label": [0] * n, "stack": [0] * n,
        },
        schema=tl.spans.schema,
    )  # fmt: skip
    tl2 = replace(tl, spans=pl.concat([tl.spans, extra]))
    pieces: list[int] = []
    lane_order = ps._lane_order

    def counting(piece):
        if piece.height and piece["lane_kind"][0] == int(LaneKind.GRANGE):
            pieces.append(piece.height)
        return lane_order(piece)

    monkeypatch.setattr(ps, "_lane_order", counting)
    monkeypatch.setattr(ep, "WINDOW_ROWS", 4)
    small = io.BytesIO()
    write_perfetto(tl2, small)
    cut = list(pieces)
    monkeypatch.setattr(ep, "WINDOW_ROWS", 1 << 20)
    pieces.clear()
    whole = io.BytesIO()
    write_perfetto(tl2, whole)
    assert pieces == [n] and len(cut) > 4 and sum(cut) == n
    assert max(cut) >= 9  # the long span's rows stay in one piece
    got, want = pr.read(small.getvalue()), pr.read(whole.getvalue())
    assert pr.semantics(got) == pr.semantics(want)
    assert any(d.name.endswith("(2)") for d in got.tracks.values() if d.name.startswith("G1 "))
    # The sweep's name came after its sequence's first packet, in a packet of its own.
    late = [
        p for p in got.packets
        if p.HasField("interned_data") and not p.first_packet_on_sequence and not p.HasField("track_event")
    ]  # fmt: skip
    assert any("sweep" in n.name for p in late for n in p.interned_data.event_names)
    same_slices(got, tl2)


def test_flow_ending_before_it_starts_is_refused(synthetic_timeline):
    """The windows place a flow's end by reading flows in start order: one that ends before
    it starts would land in a later window, so it is an error, never a misplaced event."""
    from dataclasses import replace

    from goblueprint.errors import GoblueprintError

    tl = synthetic_timeline
    assert tl.flows.height
    bad = tl.flows.with_columns(
        to_time=pl.when(pl.int_range(pl.len()) == 0)
        .then(pl.col("from_time") - 1)
        .otherwise(pl.col("to_time"))
    )
    with pytest.raises(GoblueprintError, match="ends before it starts"):
        write_perfetto(replace(tl, flows=bad), io.BytesIO())


def test_deterministic(synthetic_timeline):
    a, b = io.BytesIO(), io.BytesIO()
    write_perfetto(synthetic_timeline, a)
    write_perfetto(synthetic_timeline, b)
    assert a.getvalue() == b.getvalue()


def same_counters(decoded: pr.Decoded, tl) -> None:
    """Each counter track holds its counter's samples (time since trace start, value), GC as 1/0 steps."""
    got: dict[str, list[tuple[int, float]]] = defaultdict(list)
    for e in decoded.events:
        if e.type == pb.TrackEvent.TYPE_COUNTER:
            got[decoded.tracks[e.track].name].append((e.ts, e.value))
    want: dict[str, list[tuple[int, float]]] = defaultdict(list)
    for sid, t, v in tl.counters.sort("name", "time", maintain_order=True).iter_rows():
        raw = tl.strings[sid]
        want[COUNTER_TITLES.get(raw, raw)].append((t - tl.start_ns, v))
    for start, end in (
        tl.spans.filter(pl.col("state") == int(State.GC_CYCLE))
        .sort("start")
        .select("start", "end")
        .iter_rows()
    ):
        want["GC in progress"] += [(start - tl.start_ns, 1.0), (end - tl.start_ns, 0.0)]
    assert got == want


@pytest.fixture(scope="module")
def sched_export(go_trace, tmp_path_factory):
    """The smaller sched trace (Go 1.22), its Timeline, and its export read back (decoding is the slow part)."""
    from goblueprint.timeline.model import build_timeline

    trace = go_trace("sched", go="1.22", scale=1)
    tl = build_timeline(trace)
    out = tmp_path_factory.mktemp("perfetto") / "sched.pftrace"
    written = write_perfetto(tl, out)
    decoded = pr.read(out.read_bytes())
    assert len(decoded.packets) == written
    return trace, tl, out, decoded


@pytest.mark.slow
def test_real_trace(sched_export):
    _trace, tl, _out, decoded = sched_export
    tracks, _, flows = check(decoded, tl)
    same_slices(decoded, tl)
    same_counters(decoded, tl)
    parents = {d.name for d in tracks.values() if not d.HasField("parent_uuid")}
    assert {"Procs", "Threads", "Goroutines", "GC & stop-the-world", "Counters"} <= parents
    children = Counter(tracks[d.parent_uuid].name for d in tracks.values() if d.HasField("parent_uuid"))
    lanes = tl.lanes.group_by("lane_kind").len()
    n_procs = lanes.filter(pl.col("lane_kind") == int(LaneKind.P))["len"].item()
    assert children["Procs"] >= n_procs
    assert (
        len(flows) == drawable_flows(tl) > 100
    )  # the sched program wakes goroutines through channels, mutexes, timers
    counters = [d for d in tracks.values() if d.HasField("counter")]
    assert {"heap in use", "goroutines running", "GC in progress"} <= {d.name for d in counters}


@pytest.mark.slow
def test_real_trace_is_interned_incremental_per_sequence_and_small(sched_export):
    trace, tl, out, decoded = sched_export
    # At most twice the Go trace it comes from (it was 25x with one packet per event and
    # absolute times and tracks, uncompressed).
    assert out.stat().st_size <= 2 * trace.stat().st_size
    by_seq = defaultdict(list)
    for p in decoded.packets:
        by_seq[p.trusted_packet_sequence_id].append(p)
    assert 0 not in by_seq
    for seq, packets in by_seq.items():
        # The first packet of a sequence starts its state, every later one depends on it.
        assert packets[0].sequence_flags == pb.TracePacket.SEQ_INCREMENTAL_STATE_CLEARED, seq
        assert all(p.sequence_flags == pb.TracePacket.SEQ_NEEDS_INCREMENTAL_STATE for p in packets[1:]), seq
    events_of = defaultdict(list)
    for e in decoded.events:
        events_of[e.seq].append(e)
    # One sequence per track: its events carry no track, no name text, no clock of their own.
    assert len(events_of) > 50
    assert all(len({e.track for e in evs}) == 1 for evs in events_of.values())
    assert len({evs[0].track for evs in events_of.values()}) == len(events_of)
    raw = [p for p in decoded.packets if p.HasField("track_event")]
    assert not any(p.track_event.HasField("track_uuid") or p.track_event.name for p in raw)
    assert not any(p.HasField("timestamp_clock_id") for p in raw)
    # Names are interned once per sequence, only those it uses.
    for seq, names in decoded.interned.items():
        texts = [n.name for n in names]
        assert len(set(texts)) == len(texts) == len({n.iid for n in names}), seq
        assert set(texts) == {e.name for e in events_of[seq] if e.name}, seq
    named = sum(1 for e in decoded.events if e.name)
    assert sum(len(v) for v in decoded.interned.values()) * 20 < named
    # Timestamps are deltas on each sequence's incremental clock: on the wire they add up
    # to the last event's time, and most are far smaller than the times themselves.
    for seq, evs in events_of.items():
        wire = [p.timestamp for p in by_seq[seq] if p.HasField("track_event")]
        assert sum(wire) == evs[-1].ts, seq
    deltas = [p.timestamp for p in raw]
    assert sorted(deltas)[len(deltas) // 2] * 100 < (tl.end_ns - tl.start_ns)


# -- streamed from the ingested tables -------------------------------------------------------
GOLDEN = Path(__file__).parent.parent / "timeline" / "golden_builder"


@pytest.fixture(scope="module")
def golden_ingested(tmp_path_factory):
    """A committed golden trace (Go 1.27's sched program), ingested into a directory of its own."""
    from goblueprint.timeline.ingest import ingest

    d = tmp_path_factory.mktemp("golden")
    trace = d / "sched-go1.27.trace"
    trace.write_bytes(lzma.decompress((GOLDEN / "sched-go1.27.trace.xz").read_bytes()))
    return ingest(trace, out=d / "ingested")


def by_sequence(data: bytes) -> dict[int, list[bytes]]:
    """Each sequence's packets in order: what a reader sees (sequences may interleave in the file)."""
    out: dict[int, list[bytes]] = defaultdict(list)
    for p in pr.packets(data):
        out[p.trusted_packet_sequence_id].append(p.SerializeToString())
    return dict(out)


@pytest.mark.slow
def test_streamed_from_tables_shows_the_timeline(golden_ingested, monkeypatch):
    from goblueprint.timeline import ingest as ingest_mod
    from goblueprint.timeline.export_perfetto import write_perfetto_ingested

    tl = golden_ingested.timeline()
    whole = io.BytesIO()
    write_perfetto(tl, whole)

    # The streamed writer must never build the Timeline.
    def no_timeline(*_a, **_k):
        raise AssertionError("the streamed export read the whole Timeline")

    monkeypatch.setattr(ingest_mod.Ingested, "timeline", no_timeline)
    buf = io.BytesIO()
    written = write_perfetto_ingested(golden_ingested, buf)
    decoded = pr.read(buf.getvalue())
    assert len(decoded.packets) == written
    # What the file shows is the Timeline's: slices per lane, counters, every drawable flow.
    _tracks, _events, flows = check(decoded, tl)
    same_slices(decoded, tl)
    same_counters(decoded, tl)
    assert len(flows) == drawable_flows(tl) > 100
    # And each sequence is packet for packet the in-memory export's.
    assert by_sequence(buf.getvalue()) == by_sequence(whole.getvalue())
    assert buf.getbuffer().nbytes <= 2 * len(lzma.decompress((GOLDEN / "sched-go1.27.trace.xz").read_bytes()))


@pytest.mark.slow
def test_streamed_in_small_batches_and_pieces_shows_the_same(golden_ingested, monkeypatch):
    """With tiny batches every lane of any size crosses batch boundaries, and with tiny
    windows the lanes are written in many pieces: the reader joins the batches, cuts the
    lanes only where no slice is open, holds one batch and one piece (never a table or a
    whole large lane), and a reader sees every slice, instant, flow and name it saw before,
    once, in the same order."""
    from goblueprint.timeline import export_perfetto as ep
    from goblueprint.timeline import perfetto_sources as ps

    spans = golden_ingested.timeline_scan("spans").collect()
    lane_sizes = spans.group_by("lane_kind", "lane_id").len()["len"]
    batch, window = 64, 16
    assert lane_sizes.max() > 4 * batch and spans.height > 4 * lane_sizes.max()
    largest_batch: Counter[str] = Counter()
    held = []
    batches, lane_order = ps.IngestedSource._batches, ps._lane_order

    def counting_batches(self, table, columns, **kw):
        for b in batches(self, table, columns, **kw):
            if "rows" not in kw:  # the lane keys' narrow columns are read in larger slices
                largest_batch[table] = max(largest_batch[table], b.height)
            yield b

    def counting_piece(piece):
        held.append(piece.height)
        return lane_order(piece)

    monkeypatch.setattr(ps.IngestedSource, "_batches", counting_batches)
    monkeypatch.setattr(ps, "_lane_order", counting_piece)
    monkeypatch.setattr(ep, "WINDOW_ROWS", window)
    small = io.BytesIO()
    ep._write(ps.IngestedSource(golden_ingested, batch_rows=batch), small)
    monkeypatch.undo()
    assert largest_batch["spans"] == batch and largest_batch["counters"] <= batch
    assert largest_batch["flows"] == batch
    # Every row once; the large lanes in many pieces, none much larger than a window and a batch.
    assert sum(held) == spans.height
    assert len(held) > 3 * len(lane_sizes) and max(held) <= 2 * window + batch
    whole = io.BytesIO()
    write_perfetto(golden_ingested.timeline(), whole)
    got, want = pr.read(small.getvalue()), pr.read(whole.getvalue())
    assert pr.semantics(got) == pr.semantics(want)
    # The pieces added names to sequences already open: the interned data of later packets counts.
    assert sum(len(v) for v in got.interned.values()) == sum(len(v) for v in want.interned.values())


@pytest.mark.slow
def test_streamed_in_small_batches_names_each_title_and_flow_once(golden_ingested, monkeypatch):
    """Batch after batch the same states, goroutines and wake-ups come back: each slice title
    and each flow name is made once over the export (its text, its lookups), for the first
    batch that has it, not once per batch; and the file is the one made without batches."""
    from goblueprint.timeline import export_perfetto as ep
    from goblueprint.timeline import perfetto_sources as ps

    keys: list[int] = []
    titles = ep.key_titles

    def counting_titles(tl, batch_keys, lanes):
        keys.extend(batch_keys.tolist())
        return titles(tl, batch_keys, lanes)

    flow_texts: list[str] = []

    class CountingFlows(ep.FlowStore):
        def __init__(self, batches, lane_of, text_ids, strings, origin):
            def counting_ids(texts):
                flow_texts.extend(texts)
                return text_ids(texts)

            super().__init__(batches, lane_of, counting_ids, strings, origin)

    monkeypatch.setattr(ep, "key_titles", counting_titles)
    monkeypatch.setattr(ep, "FlowStore", CountingFlows)
    small = io.BytesIO()
    ep._write(ps.IngestedSource(golden_ingested, batch_rows=256), small)
    monkeypatch.undo()
    spans = golden_ingested.timeline_scan("spans").select(pl.len()).collect().item()
    assert spans > 20 * 256  # many batches
    assert len(keys) == len(set(keys)) > 10
    assert len(flow_texts) == len(set(flow_texts)) > 10
    whole = io.BytesIO()
    write_perfetto(golden_ingested.timeline(), whole)
    assert pr.semantics(pr.read(small.getvalue())) == pr.semantics(pr.read(whole.getvalue()))


def test_streamed_reads_a_table_as_slices_of_one_plan(golden_ingested, monkeypatch):
    """A table is read batch by batch from one polars plan: a plan per batch read the file's
    footer again for every batch.  The batches are the table's rows, in order."""
    from goblueprint.timeline import perfetto_sources as ps

    src = ps.IngestedSource(golden_ingested, batch_rows=64)
    scans = []
    scan = pl.scan_parquet

    def counting_scan(*a, **k):
        scans.append(1)
        return scan(*a, **k)

    monkeypatch.setattr(pl, "scan_parquet", counting_scan)
    try:
        batches = list(src._batches("spans", ps.SPAN_COLUMNS))
    finally:
        src.close()
    monkeypatch.undo()
    assert len(batches) > 10 and len(scans) == 1
    want = golden_ingested.timeline_scan("spans").select(ps.SPAN_COLUMNS).collect()
    assert pl.concat(batches).equals(want)


def test_streamed_counter_names_are_those_of_the_counters_table(golden_ingested):
    """The export takes the counters' names from the manifest's record of the names each table
    names (no pass over the table): they are the table's, and a manifest without that record
    (its pass then) gives the same."""
    from goblueprint.timeline import perfetto_sources as ps
    from goblueprint.timeline.stored import Texts

    stored = golden_ingested.timeline_scan("counters").select(pl.col("name").unique()).collect()
    want = sorted(stored["name"].to_list())
    src = ps.IngestedSource(golden_ingested)
    try:
        assert len(want) > 2 and src.texts.used("counters") is not None
        assert src.counter_names() == want
        recorded = golden_ingested.manifest["timeline"]["texts"]
        src.texts = Texts(src.strings, {t: ids for t, ids in recorded.items() if t != "counters"})
        assert src.texts.used("counters") is None
        assert src.counter_names() == want
    finally:
        src.close()


def test_streamed_refuses_unsorted_spans(golden_ingested, tmp_path):
    import shutil

    from goblueprint.errors import GoblueprintError
    from goblueprint.timeline.export_perfetto import write_perfetto_ingested
    from goblueprint.timeline.ingest import Ingested

    d = tmp_path / "ingested"
    shutil.copytree(golden_ingested.path, d)
    spans = pl.read_parquet(d / "intervals.parquet")  # the Timeline's spans (timeline.stored)
    spans.reverse().write_parquet(d / "intervals.parquet")
    with pytest.raises(GoblueprintError, match="not sorted by lane"):
        write_perfetto_ingested(Ingested(d, golden_ingested.manifest), io.BytesIO())


@pytest.mark.slow
def test_streamed_survives_its_entry_replaced(golden_ingested, tmp_path):
    """Another process may replace a cache entry (other code) while the export streams it:
    the files opened at the start are read to the end."""
    import shutil

    from goblueprint.timeline.export_perfetto import _write
    from goblueprint.timeline.ingest import Ingested
    from goblueprint.timeline.perfetto_sources import IngestedSource

    d = tmp_path / "ingested"
    shutil.copytree(golden_ingested.path, d)
    src = IngestedSource(Ingested(d, golden_ingested.manifest))
    shutil.rmtree(d)
    got, want = io.BytesIO(), io.BytesIO()
    _write(src, got)
    write_perfetto(golden_ingested.timeline(), want)
    assert by_sequence(got.getvalue()) == by_sequence(want.getvalue())


def test_streamed_read_error_names_the_file_the_table_is_in(golden_ingested):
    """A read that fails names the file holding the table (spans are stored as intervals)."""
    import errno

    from goblueprint.errors import PathError
    from goblueprint.timeline.perfetto_sources import SPAN_COLUMNS, IngestedSource

    class Failing(io.BytesIO):
        def seek(self, *args: object) -> int:
            raise OSError(errno.EIO, "Input/output error")

    src = IngestedSource(golden_ingested)
    try:
        src.files["spans"].close()
        src.files["spans"] = Failing()
        with pytest.raises(PathError) as err:
            next(src._batches("spans", SPAN_COLUMNS))
    finally:
        src.close()
    assert "intervals.parquet" in str(err.value)
    assert "timeline/spans.parquet" not in str(err.value)


def _with_steals_and_marks(tl):
    """TL with what a lab run adds: steals (flows without a G, from one P's track to an instant on
    another's), thread marks (on M lanes, one of them without spans), and wake-ups whose G has no
    slice starting when it runs (a "G… runs" instant)."""
    from dataclasses import replace

    from goblueprint.timeline.model import NONE, InstantKind

    t = tl.start_ns
    steals = pl.DataFrame(
        {
            "kind": [0] * 4, "g": [NONE, NONE, 1, 2], "from_g": [NONE, NONE, 3, 3], "from_p": [0, 1, 0, 0],
            "from_time": [t + 500, t + 700, t + 710, t + 720], "to_p": [1, 2, 0, 0], "to_m": [NONE] * 4,
            "to_time": [t + 900, t + 950, t + 713, t + 721], "label": [3, 0, 0, 3], "stack": [0] * 4,
            "migrated": [False] * 4,
        },
        schema=tl.flows.schema,
    )  # fmt: skip
    marks = pl.DataFrame(
        {
            "kind": [int(InstantKind.OTHER)] * 4, "time": [t + 100, t + 100, t + 40_000, t + 300],
            "g": [NONE] * 4, "p": [NONE] * 4, "m": [0, 0, 1, 7], "label": [0, 11, 3, 11],
            "category": [0] * 4, "id": [0] * 4, "stack": [0] * 4,
        },
        schema=tl.instants.schema,
    )  # fmt: skip
    lanes = pl.concat(
        [
            tl.lanes,
            pl.DataFrame(
                {"lane_kind": [2], "lane_id": [7], "label": ["M7"], "group": [""], "system": [False]},
                schema=tl.lanes.schema,
            ),
        ]
    )
    flows = pl.concat([tl.flows, steals]).sort("from_time", "g", maintain_order=True)
    return replace(tl, flows=flows, instants=pl.concat([tl.instants, marks]), lanes=lanes)


@pytest.mark.parametrize("which", ["synthetic", "hostile", "sched", "lab-like"])
def test_lanes_written_in_batches_are_the_bytes_written_one_by_one(
    which, request, golden_ingested, monkeypatch
):
    """Lanes of one window on one track are written a batch at a time by one compiled call: the
    same file, byte for byte, as each written on its own by ``window`` (the path larger lanes
    take), with chunks cut inside a batch and between a lane's head and its events."""
    import functools

    from goblueprint.timeline import export_perfetto as ep
    from goblueprint.timeline.perfetto_wire import PacketWriter

    if which == "sched":
        tl = golden_ingested.timeline()
    elif which == "lab-like":
        tl = _with_steals_and_marks(request.getfixturevalue("synthetic_timeline"))
    else:
        tl = request.getfixturevalue(f"{which}_timeline")
    monkeypatch.setattr(ep, "PacketWriter", functools.partial(PacketWriter, chunk=1500))
    monkeypatch.setattr(ep._Batch, "LANES", 5)
    batched: list[int] = []
    flush = ep._Export.flush

    def counting(self, batch):
        batched.append(len(batch.ks))
        flush(self, batch)

    monkeypatch.setattr(ep._Export, "flush", counting)
    together = io.BytesIO()
    write_perfetto(tl, together)
    monkeypatch.setattr(ep, "_one_window", lambda spans: False)
    lanes = sum(batched)
    batched.clear()
    alone = io.BytesIO()
    write_perfetto(tl, alone)
    assert lanes > 5 and not sum(batched)
    assert together.getvalue() == alone.getvalue()
