"""Read a Perfetto trace back the way Perfetto's trace processor does, with Perfetto's own protos.

Trace processor itself (the ``perfetto`` package's TraceProcessor) downloads its binary
at first use, which this machine's network refuses, so the tests decode with the
package's bundled protobuf schema instead and apply the reader's rules here, strictly:

* ``compressed_packets`` are zlib streams of Trace.packet records, read in place;
* per ``trusted_packet_sequence_id``: SEQ_INCREMENTAL_STATE_CLEARED starts the state
  (interned data, TracePacketDefaults, sequence-scoped clocks); a packet flagged
  SEQ_NEEDS_INCREMENTAL_STATE on a sequence whose state was never cleared would be
  dropped by the reader, and is an error here; so is an interned id the sequence never
  defined, and a sequence-scoped clock used before its ClockSnapshot;
* an incremental clock's timestamps are deltas from the sequence's previous packet on
  that clock, starting from the snapshot's value; a snapshot maps it to the trace clock.
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass, field

from perfetto.protos.perfetto.trace import perfetto_trace_pb2 as pb

CLEARED = pb.TracePacket.SEQ_INCREMENTAL_STATE_CLEARED
NEEDS = pb.TracePacket.SEQ_NEEDS_INCREMENTAL_STATE


def packets(data: bytes) -> list[pb.TracePacket]:
    """Every packet, compressed_packets inflated in place."""
    out = []
    for p in pb.Trace.FromString(data).packet:
        if p.HasField("compressed_packets"):
            out.extend(packets(zlib.decompress(p.compressed_packets)))
        else:
            out.append(p)
    return out


@dataclass
class Event:
    seq: int
    ts: int  # on the trace clock
    track: int
    type: int
    name: str
    value: float | None
    flow_ids: list[int]
    terminating_flow_ids: list[int]


@dataclass
class _Sequence:
    names: dict[int, str] = field(default_factory=dict)
    defaults: pb.TracePacketDefaults | None = None
    clocks: dict[int, tuple[int, int]] = field(default_factory=dict)  # id -> (value, trace-clock offset)
    incremental: set[int] = field(default_factory=set)


@dataclass
class Decoded:
    packets: list[pb.TracePacket]
    tracks: dict[int, pb.TrackDescriptor]
    events: list[Event]
    interned: dict[int, list[pb.EventName]]  # sequence -> its event_names as written


def read(data: bytes) -> Decoded:
    seqs: dict[int, _Sequence] = {}
    tracks: dict[int, pb.TrackDescriptor] = {}
    events: list[Event] = []
    interned: dict[int, list[pb.EventName]] = {}
    every = packets(data)
    for p in every:
        sid = p.trusted_packet_sequence_id
        flags = p.sequence_flags
        if flags & CLEARED:
            assert sid, "incremental state on sequence 0"
            seqs[sid] = _Sequence()
        if flags & NEEDS:
            assert sid in seqs, f"sequence {sid}: packet needs incremental state never cleared"
        state = seqs.get(sid)
        if p.HasField("trace_packet_defaults"):
            assert state is not None, f"sequence {sid}: defaults before the state is cleared"
            state.defaults = p.trace_packet_defaults
        if p.HasField("interned_data"):
            assert state is not None, f"sequence {sid}: interned data before the state is cleared"
            interned.setdefault(sid, []).extend(p.interned_data.event_names)
            for n in p.interned_data.event_names:
                state.names[n.iid] = n.name
        which = p.WhichOneof("data")
        if which == "clock_snapshot":
            assert state is not None
            clocks = {c.clock_id: c for c in p.clock_snapshot.clocks}
            boot = clocks[pb.BUILTIN_CLOCK_BOOTTIME].timestamp
            for cid, c in clocks.items():
                if cid >= 64:
                    state.clocks[cid] = (c.timestamp, boot - c.timestamp)
                    if c.is_incremental:
                        state.incremental.add(cid)
            continue
        if which == "track_descriptor":
            assert p.track_descriptor.uuid not in tracks, "track described twice"
            tracks[p.track_descriptor.uuid] = p.track_descriptor
        if which != "track_event":
            continue
        te = p.track_event
        defaults = state.defaults if state else None
        clock = p.timestamp_clock_id or (defaults.timestamp_clock_id if defaults else 0)
        ts = p.timestamp
        if clock >= 64:
            assert state is not None and clock in state.clocks, (
                f"sequence {sid}: clock {clock} without snapshot"
            )
            value, offset = state.clocks[clock]
            if clock in state.incremental:
                value += ts
                state.clocks[clock] = (value, offset)
                ts = value
            ts += offset
        track = te.track_uuid if te.HasField("track_uuid") else defaults.track_event_defaults.track_uuid
        iid = te.name_iid
        if iid:
            assert state is not None and iid in state.names, f"sequence {sid}: unknown iid {iid}"
            name = state.names[iid]
        else:
            name = te.name
        kind = te.type
        value = te.double_counter_value if kind == pb.TrackEvent.TYPE_COUNTER else None
        out, fin = te.flow_ids, te.terminating_flow_ids
        events.append(
            Event(sid, ts, track, kind, name, value, list(out) if out else [], list(fin) if fin else [])
        )
    return Decoded(every, tracks, events, interned)


def slices(decoded: Decoded) -> dict[int, list[tuple[int, int, str]]]:
    """Per track, its slices as (start, duration, name) from begin/end pairs, in start order."""
    out: dict[int, list[tuple[int, int, str]]] = {}
    stacks: dict[int, list[tuple[int, str]]] = {}
    for e in sorted(decoded.events, key=lambda e: e.ts):  # stable: file order within a time
        if e.type == pb.TrackEvent.TYPE_SLICE_BEGIN:
            stacks.setdefault(e.track, []).append((e.ts, e.name))
        elif e.type == pb.TrackEvent.TYPE_SLICE_END:
            start, name = stacks[e.track].pop()
            out.setdefault(e.track, []).append((start, e.ts - start, name))
    assert all(not s for s in stacks.values()), "unclosed slices"
    return {k: sorted(v) for k, v in out.items()}


def semantics(decoded: Decoded) -> tuple[dict[int, bytes], dict[int, list[tuple]]]:
    """What a reader shows, however it was encoded (iids, interned packets, chunks): each
    track's descriptor, and each sequence's events in order with their names, absolute times,
    values and flows."""
    events: dict[int, list[tuple]] = {}
    for e in decoded.events:
        events.setdefault(e.seq, []).append(
            (e.ts, e.track, e.type, e.name, e.value, tuple(e.flow_ids), tuple(e.terminating_flow_ids))
        )
    tracks = {uuid: d.SerializeToString(deterministic=True) for uuid, d in decoded.tracks.items()}
    return tracks, events
