"""The Perfetto export decoded back with Perfetto's own protos: tracks, balanced slices, order, flows, counters."""

from __future__ import annotations

import io
from collections import Counter, defaultdict

import polars as pl
import pytest
from perfetto.protos.perfetto.trace import perfetto_trace_pb2 as pb
from synth import drawable_flows

from goblueprint.timeline.export_perfetto import write_perfetto
from goblueprint.timeline.model import LaneKind, State


def decode(tl):
    buf = io.BytesIO()
    written = write_perfetto(tl, buf)
    trace = pb.Trace.FromString(buf.getvalue())
    assert len(trace.packet) == written
    return trace


def check(trace, tl):
    """Structural checks every export must pass; returns what the caller may check further."""
    names: dict[int, str] = {}
    tracks: dict[int, pb.TrackDescriptor] = {}
    events = defaultdict(list)  # track uuid -> [(ts, type, name)]
    flows_out: Counter[int] = Counter()
    flows_in: Counter[int] = Counter()
    cleared = False
    for p in trace.packet:
        if p.HasField("interned_data"):
            assert p.sequence_flags & pb.TracePacket.SEQ_INCREMENTAL_STATE_CLEARED
            cleared = True
            for n in p.interned_data.event_names:
                names[n.iid] = n.name
        if p.HasField("track_descriptor"):
            tracks[p.track_descriptor.uuid] = p.track_descriptor
        if p.HasField("track_event"):
            te = p.track_event
            assert cleared and p.trusted_packet_sequence_id == 1
            assert te.track_uuid in tracks, "event on a track without descriptor"
            name = names[te.name_iid] if te.name_iid else ""
            if te.type != pb.TrackEvent.TYPE_SLICE_END and te.type != pb.TrackEvent.TYPE_COUNTER:
                assert name, "slice or instant without a name"
            events[te.track_uuid].append((p.timestamp, te.type, name))
            flows_out.update(te.flow_ids)
            flows_in.update(te.terminating_flow_ids)
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


def test_synthetic(synthetic_timeline):
    tl = synthetic_timeline
    tracks, events, flows = check(decode(tl), tl)
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
    tracks, _, _ = check(decode(tl2), tl2)
    names = sorted(d.name for d in tracks.values() if d.name.startswith("G1 ") and d.parent_uuid)
    assert any(n.endswith("(2)") for n in names), names


def test_deterministic(synthetic_timeline):
    a, b = io.BytesIO(), io.BytesIO()
    write_perfetto(synthetic_timeline, a)
    write_perfetto(synthetic_timeline, b)
    assert a.getvalue() == b.getvalue()


@pytest.mark.slow
def test_real_trace(sched_timeline):
    tl = sched_timeline
    tracks, _, flows = check(decode(tl), tl)
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
