"""Export a Timeline as a native Perfetto trace (TracePacket/TrackEvent protobuf).

Written with the Perfetto project's own Python protos, never hand-rolled bytes.

Layout: one parent track per display group (Procs, Threads, Goroutines, GC...), one
child track per P, M and G (plus "(2)", "(3)" tracks for spans that overlap without
nesting, so every track's slices are balanced), counter tracks for the trace's metrics
(heap, goroutines) and for GC in progress, and flows for wake-ups (from an instant on
the waker's track to the woken goroutine's next running slice).

Counters named after a P or M lane (``render.lanes.counter_lanes``: the lab's "Proc 3:
run queue") are child tracks of that lane's track; flows without a goroutine (the lab's
steals) go from the victim P's track to the thief P's; marks of a thread that runs
without a P or G (the lab's sysmon wake-ups) are instant events on the thread's track.

Timestamps are nanoseconds since the start of the trace.  Event names are interned
(one InternedData in the first packet), so a slice costs a few bytes.  Packets are
written in global time order, which also puts every track in time order, with ends
before begins at equal times so that back-to-back slices do not nest.
"""

from __future__ import annotations

from pathlib import Path
from typing import IO

import numpy as np
import polars as pl

from goblueprint.errors import PathError
from goblueprint.render.lanes import GROUPS, arrange, counter_lanes, layers, sorted_spans, span_titles
from goblueprint.timeline.model import NONE, InstantKind, LaneKind, State, Timeline

SEQUENCE_ID = 1
_BEGIN, _END, _INSTANT, _COUNTER = 1, 2, 3, 4  # TrackEvent.Type values
_CHUNK = 20_000  # packets serialised per Trace message: bounded memory, few calls into protobuf
COUNTER_TITLES = {
    "/sched/goroutines:goroutines": "goroutines",
    "/memory/classes/heap/objects:bytes": "heap in use",
    "/gc/heap/goal:bytes": "heap goal",
    "/sched/gomaxprocs:threads": "GOMAXPROCS",
}


_DTYPES = {
    "ts": np.int64,
    "rank": np.int8,
    "sec": np.int64,
    "track": np.int32,
    "type": np.int8,
    "name": np.int32,
    "value": np.float64,
}


class _Events:
    """Columns of track events before sorting; appended in blocks of numpy arrays.

    Narrow dtypes: a 30 MB trace makes tens of millions of events.
    """

    def __init__(self) -> None:
        self.blocks: dict[str, list[np.ndarray]] = {k: [] for k in _DTYPES}
        self.size = 0

    def add(self, **cols: np.ndarray) -> None:
        n = len(cols["ts"])
        self.size += n
        for key, blocks in self.blocks.items():
            col = cols.get(key)
            blocks.append(
                np.zeros(n, dtype=_DTYPES[key]) if col is None else np.asarray(col, dtype=_DTYPES[key])
            )

    def columns(self) -> dict[str, np.ndarray]:
        return {
            k: (np.concatenate(v) if v else np.zeros(0, dtype=_DTYPES[k])) for k, v in self.blocks.items()
        }


def write_perfetto(tl: Timeline, out: str | Path | IO[bytes]) -> int:
    """Write the Perfetto trace of ``tl`` to a path or binary file; returns the packet count."""
    if isinstance(out, (str, Path)):
        try:
            with open(out, "wb") as handle:
                return write_perfetto(tl, handle)
        except OSError as exc:
            raise PathError.from_os(out, exc, write=True) from None
    from perfetto.protos.perfetto.trace import perfetto_trace_pb2 as pb

    origin = tl.start_ns
    spans = sorted_spans(tl)
    lanes = arrange(tl, spans)
    title_of_span, titles = span_titles(tl, spans, lanes)
    names = list(titles)
    name_index = {t: k for k, t in enumerate(names)}

    def name_id(text: str) -> int:
        if text not in name_index:
            name_index[text] = len(names)
            names.append(text)
        return name_index[text]

    descriptors: list = []
    next_uuid = iter(range(1, 1 << 62))

    def track(name: str, parent: int = 0, rank: int = 0, counter_unit: int | None = None) -> int:
        uuid = next(next_uuid)
        desc = pb.TrackDescriptor(uuid=uuid, name=name, sibling_order_rank=rank)
        if parent:
            desc.parent_uuid = parent
        else:
            desc.child_ordering = pb.TrackDescriptor.EXPLICIT
        if counter_unit is not None:
            desc.counter.unit = counter_unit
        descriptors.append(desc)
        return uuid

    ev = _Events()
    begin_event = np.full(spans.height, -1, dtype=np.int64)  # sorted-span row -> its begin event
    starts = spans["start"].to_numpy()
    ends = spans["end"].to_numpy()
    group_tracks: dict[str, int] = {}
    lane_track: dict[tuple[int, int], int] = {}  # layer-0 track of each lane
    lane_of_g_starts: dict[int, tuple[np.ndarray, int]] = {}
    rank = 0
    for key, title, _kinds, _folded in GROUPS:
        members = [lane for lane in lanes if lane.group == key]
        if not members:
            continue
        parent = group_tracks[key] = track(title, rank=rank)
        rank += 1
        for k, lane in enumerate(members):
            lo, hi = lane.lo, lane.hi
            layer = layers(starts[lo:hi], ends[lo:hi])
            uuids = [track(lane.name, parent, rank=k * 64)]
            for depth in range(1, int(layer.max(initial=0)) + 1):
                uuids.append(track(f"{lane.name} ({depth + 1})", parent, rank=k * 64 + depth))
            lane_track[(int(lane.kind), lane.lane_id)] = uuids[0]
            if lane.kind == LaneKind.G:
                lane_of_g_starts[lane.lane_id] = (starts[lo:hi], lo)
            s, e = starts[lo:hi] - origin, ends[lo:hi] - origin
            tracks = np.asarray(uuids, dtype=np.int64)[layer]
            names_ = title_of_span[lo:hi]
            zero = s == e
            nz = ~zero
            n_nz = int(nz.sum())
            rows = np.arange(lo, hi)
            begin_event[rows[nz]] = ev.size + np.arange(n_nz)
            begin_event[rows[zero]] = ev.size + 2 * n_nz + np.arange(int(zero.sum()))
            # Ends rank before begins at one instant; among begins the longer (outer) first,
            # among ends the later-started (inner) first: slices nest and balance.
            ev.add(ts=s[nz], rank=np.ones(nz.sum(), np.int64), sec=-e[nz], track=tracks[nz],
                   type=np.full(nz.sum(), _BEGIN, np.int64), name=names_[nz])  # fmt: skip
            ev.add(ts=e[nz], rank=np.zeros(nz.sum(), np.int64), sec=-s[nz], track=tracks[nz],
                   type=np.full(nz.sum(), _END, np.int64), name=names_[nz])  # fmt: skip
            ev.add(ts=s[zero], rank=np.ones(zero.sum(), np.int64), sec=-e[zero], track=tracks[zero],
                   type=np.full(zero.sum(), _INSTANT, np.int64), name=names_[zero])  # fmt: skip

    _add_counters(tl, ev, track, name_id, origin, rank, lane_track)
    _add_thread_marks(tl, ev, lane_track, name_id, origin)
    flow_out, flow_in = _add_flows(tl, ev, lane_track, lane_of_g_starts, name_id, origin)

    cols = ev.columns()
    order = np.lexsort((cols["sec"], cols["rank"], cols["ts"]))
    incoming: dict[int, list[int]] = {}
    for key, ids in flow_in.items():
        event = int(begin_event[-key - 1]) if key < 0 else key
        incoming.setdefault(event, []).extend(ids)
    return _write_packets(pb, out, descriptors, names, cols, order, flow_out, incoming)


def _add_counters(
    tl: Timeline, ev: _Events, track, name_id, origin: int, rank: int, lane_track: dict[tuple[int, int], int]
) -> None:
    from perfetto.protos.perfetto.trace import perfetto_trace_pb2 as pb

    owners = {
        sid: lane_track[(int(kind), lane_id)]
        for sid, (kind, lane_id) in counter_lanes(tl).items()
        if (int(kind), lane_id) in lane_track
    }
    df = tl.counters.sort(["name", "time"])
    gc = tl.spans.filter(pl.col("state") == int(State.GC_CYCLE)).sort("start")
    # The shared group only when something goes in it (a lab run's P counters may be all).
    shared = not df["name"].is_in(list(owners)).all()
    if not shared and gc.height == 0:
        parent = 0
    else:
        parent = track("Counters", rank=rank)
    ids = df["name"].to_numpy()
    bounds = np.flatnonzero(ids[1:] != ids[:-1]) + 1 if len(ids) else np.zeros(0, np.int64)
    for k, (lo, hi) in enumerate(
        zip(
            np.concatenate(([0], bounds)).tolist(), np.concatenate((bounds, [len(ids)])).tolist(), strict=True
        )
    ):
        if lo >= hi:
            continue
        raw = tl.strings[int(ids[lo])]
        unit = (
            pb.CounterDescriptor.UNIT_SIZE_BYTES
            if raw.endswith(":bytes")
            else pb.CounterDescriptor.UNIT_COUNT
        )
        owner = owners.get(int(ids[lo]))
        if owner is not None:
            # A child of its lane's track: Perfetto shows it when the P is expanded, right below.
            uuid = track(raw.split(": ", 1)[1], owner, rank=k, counter_unit=unit)
        else:
            uuid = track(COUNTER_TITLES.get(raw, raw), parent, rank=k, counter_unit=unit)
        t = df["time"].to_numpy()[lo:hi] - origin
        ev.add(ts=t, rank=np.full(hi - lo, 2, np.int64), track=np.full(hi - lo, uuid, np.int64),
               type=np.full(hi - lo, _COUNTER, np.int64), value=df["value"].to_numpy()[lo:hi])  # fmt: skip
    if gc.height:
        # GC in progress as a 0/1 counter, so it plots next to the heap.
        uuid = track("GC in progress", parent, rank=1 << 20, counter_unit=pb.CounterDescriptor.UNIT_COUNT)
        t = np.stack([gc["start"].to_numpy(), gc["end"].to_numpy()], axis=1).ravel() - origin
        v = np.tile([1.0, 0.0], gc.height)
        ev.add(ts=t, rank=np.full(len(t), 2, np.int64), track=np.full(len(t), uuid, np.int64),
               type=np.full(len(t), _COUNTER, np.int64), value=v)  # fmt: skip
    del name_id


def _add_thread_marks(
    tl: Timeline, ev: _Events, lane_track: dict[tuple[int, int], int], name_id, origin: int
) -> None:
    """Instants of a thread with neither G nor P (sysmon's wake-ups) on that thread's track.

    Instants with a G or P are not exported: their lanes' slices already say what happened.
    """
    df = tl.instants.filter(
        (pl.col("g") == NONE) & (pl.col("p") == NONE) & (pl.col("kind") == int(InstantKind.OTHER))
    )
    if df.height == 0:
        return
    tracks = np.array([lane_track.get((int(LaneKind.M), m), 0) for m in df["m"].to_list()], dtype=np.int64)
    keep = tracks != 0
    labels = {sid: name_id(tl.strings[sid] or "event") for sid in df["label"].unique().to_list()}
    names = np.array([labels[sid] for sid in df["label"].to_list()], dtype=np.int64)
    n = int(keep.sum())
    ev.add(ts=df["time"].to_numpy()[keep] - origin, rank=np.ones(n, np.int64), sec=np.zeros(n, np.int64),
           track=tracks[keep], type=np.full(n, _INSTANT, np.int64), name=names[keep])  # fmt: skip


def _add_flows(
    tl: Timeline,
    ev: _Events,
    lane_track: dict[tuple[int, int], int],
    g_starts: dict[int, tuple[np.ndarray, int]],
    name_id,
    origin: int,
) -> tuple[dict[int, int], dict[int, list[int]]]:
    """Wake-up flows: an instant on the waker's track starts each; the woken G's slice ends it.

    A flow without a goroutine (a steal) ends on an instant on its to_p's P track.

    Returns {event index: outgoing flow id} and {span begin index or event index: [flow ids]},
    with span begins addressed by their row in the sorted spans table (negative keys).
    """
    flow_out: dict[int, int] = {}
    flow_in: dict[int, list[int]] = {}
    df = tl.flows.filter(pl.col("to_time") >= 0).sort(["from_time", "g"])
    if df.height == 0:
        return flow_out, flow_in
    base = ev.size
    rows = []
    for fid, (g, from_g, from_p, from_time, to_time, to_p, label) in enumerate(
        df.select("g", "from_g", "from_p", "from_time", "to_time", "to_p", "label").iter_rows(), start=1
    ):
        src = lane_track.get((int(LaneKind.G), from_g)) or lane_track.get((int(LaneKind.P), from_p))
        what = tl.strings[label] or "wake-up"
        if g == NONE:
            dst = lane_track.get((int(LaneKind.P), to_p))
            if src and dst:
                rows.append((from_time - origin, src, name_id(f"{what} → P{to_p}"), fid))
                rows.append((to_time - origin, dst, name_id(f"{what} from P{from_p}"), -fid))
            continue
        dst = lane_track.get((int(LaneKind.G), g))
        if not src or not dst:
            continue
        rows.append((from_time - origin, src, name_id(f"{what} → G{g}"), fid))
        s, lo = g_starts[g]
        j = int(np.searchsorted(s, to_time))
        if j < len(s) and s[j] == to_time:
            flow_in.setdefault(-(lo + j) - 1, []).append(fid)
        else:
            rows.append((to_time - origin, dst, name_id(f"G{g} runs"), -fid))
    if not rows:
        return flow_out, flow_in
    arr = np.asarray([r[:3] for r in rows], dtype=np.int64)
    for k, r in enumerate(rows):
        if r[3] > 0:
            flow_out[base + k] = r[3]
        else:
            flow_in.setdefault(base + k, []).append(-r[3])
    n = len(rows)
    ev.add(ts=arr[:, 0], rank=np.ones(n, np.int64), sec=np.zeros(n, np.int64), track=arr[:, 1],
           type=np.full(n, _INSTANT, np.int64), name=arr[:, 2])  # fmt: skip
    return flow_out, flow_in


def _write_packets(pb, out: IO[bytes], descriptors, names, cols, order, flow_out, incoming) -> int:
    first = pb.Trace()
    p = first.packet.add()
    p.trusted_packet_sequence_id = SEQUENCE_ID
    p.sequence_flags = pb.TracePacket.SEQ_INCREMENTAL_STATE_CLEARED
    p.interned_data.event_names.extend(pb.EventName(iid=k + 1, name=n) for k, n in enumerate(names))
    for desc in descriptors:
        q = first.packet.add()
        q.track_descriptor.CopyFrom(desc)
    out.write(first.SerializeToString())
    count = len(first.packet)

    needs_state = pb.TracePacket.SEQ_NEEDS_INCREMENTAL_STATE
    # Blocks of the sorted order are gathered with numpy and turned into Python ints once,
    # so memory stays bounded by a block and no numpy scalar is touched per packet.
    for lo in range(0, len(order), _CHUNK):
        idx = order[lo : lo + _CHUNK]
        chunk = pb.Trace()
        packets = chunk.packet
        for k, t, kind, uuid, nid, v in zip(
            idx.tolist(),
            cols["ts"][idx].tolist(),
            cols["type"][idx].tolist(),
            cols["track"][idx].tolist(),
            cols["name"][idx].tolist(),
            cols["value"][idx].tolist(),
            strict=True,
        ):
            p = packets.add()
            p.timestamp = t
            p.trusted_packet_sequence_id = SEQUENCE_ID
            te = p.track_event
            te.type = kind
            te.track_uuid = uuid
            if kind == _COUNTER:
                te.double_counter_value = v
            else:
                p.sequence_flags = needs_state
                if kind != _END:
                    te.name_iid = nid + 1
            fid = flow_out.get(k)
            if fid:
                te.flow_ids.append(fid)
            fin = incoming.get(k)
            if fin:
                te.terminating_flow_ids.extend(fin)
        out.write(chunk.SerializeToString())
        count += len(packets)
    return count
