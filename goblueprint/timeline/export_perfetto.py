"""Export a Timeline as a native Perfetto trace (TracePacket/TrackEvent protobuf).

Layout: one parent track per display group (Procs, Threads, Goroutines, GC...), one
child track per P, M and G (plus "(2)", "(3)" tracks for spans that overlap without
nesting, so every track's slices are balanced), counter tracks for the trace's metrics
(heap, goroutines) and for GC in progress, and flows for wake-ups (from an instant on
the waker's track to the woken goroutine's next running slice).

Counters named after a P or M lane (``render.lanes.counter_lanes``: the lab's "Proc 3:
run queue") are child tracks of that lane's track; flows without a goroutine (the lab's
steals) go from the victim P's track to the thief P's; marks of a thread that runs
without a P or G (the lab's sysmon wake-ups) are instant events on the thread's track.

Encoding, chosen so the file stays about the size of the Go trace it comes from:

* one packet sequence (``trusted_packet_sequence_id``) per track.  Its first packet
  clears the incremental state (SEQ_INCREMENTAL_STATE_CLEARED) and carries the
  sequence's interned event names, its TracePacketDefaults (the track, so no event
  repeats its track_uuid, and the clock) and a ClockSnapshot of a sequence-scoped
  *incremental* clock: every later packet (SEQ_NEEDS_INCREMENTAL_STATE) holds only
  its delta from the previous one, a byte or two;
* a track's packets are its events in time order, with ends before begins at equal
  times so that back-to-back slices do not nest; tracks follow one another (readers
  sort packets by time across sequences);
* the packets are streamed, track by track, in deflated ``compressed_packets`` chunks
  (``perfetto_wire``): memory is bounded by the largest track's columns, never the file.

Timestamps are nanoseconds since the start of the trace.  Flow ids are global.
"""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import IO

import numpy as np
import polars as pl

from goblueprint.errors import PathError
from goblueprint.render.lanes import GROUPS, Lane, arrange, counter_lanes, layers, sorted_spans, span_titles
from goblueprint.timeline.model import NONE, InstantKind, LaneKind, State, Timeline
from goblueprint.timeline.perfetto_wire import (
    SEQ_INCREMENTAL_STATE_CLEARED,
    SEQ_NEEDS_INCREMENTAL_STATE,
    PacketWriter,
    track_events,
)

_BEGIN, _END, _INSTANT, _COUNTER = 1, 2, 3, 4  # TrackEvent.Type values
_BLOCK = 1 << 16  # events encoded per call: a few hundred KB of packets
_CLOCK = 64  # the first sequence-scoped clock id; each sequence has its own
_BOOTTIME = 6  # Perfetto's default trace clock
COUNTER_TITLES = {
    "/sched/goroutines:goroutines": "goroutines",
    "/memory/classes/heap/objects:bytes": "heap in use",
    "/gc/heap/goal:bytes": "heap goal",
    "/sched/gomaxprocs:threads": "GOMAXPROCS",
}


def write_perfetto(tl: Timeline, out: str | Path | IO[bytes]) -> int:
    """Write the Perfetto trace of ``tl`` to a path or binary file; returns the packet count.

    The count is of packets before compression (what a reader sees once inflated).
    """
    if isinstance(out, (str, Path)):
        try:
            with open(out, "wb") as handle:
                return write_perfetto(tl, handle)
        except OSError as exc:
            raise PathError.from_os(out, exc, write=True) from None
    writer = PacketWriter(out)
    _Export(tl, writer).run()
    writer.flush()
    return writer.packets


class _Events:
    """One track's events as columns, in any order (``emit`` sorts them)."""

    def __init__(self) -> None:
        self.parts: list[dict[str, np.ndarray]] = []
        self.size = 0
        self.flow_in: list[tuple[np.ndarray, np.ndarray]] = []  # (event index, flow id)

    def add(self, ts: np.ndarray, rank: int, sec: np.ndarray | None, kind: int, name: np.ndarray | None = None,
            flow_out: np.ndarray | None = None) -> int:  # fmt: skip
        """Append events; returns the index of the first one."""
        n = len(ts)
        first = self.size
        self.parts.append(
            {
                "ts": np.asarray(ts, dtype=np.int64),
                "rank": np.full(n, rank, dtype=np.int8),
                "sec": np.zeros(n, np.int64) if sec is None else np.asarray(sec, dtype=np.int64),
                "kind": np.full(n, kind, dtype=np.uint8),
                "name": np.full(n, -1, np.int64) if name is None else np.asarray(name, dtype=np.int64),
                "flow_out": np.zeros(n, np.uint64) if flow_out is None else np.asarray(flow_out, np.uint64),
            }
        )
        self.size += n
        return first

    def columns(self) -> dict[str, np.ndarray]:
        return {k: np.concatenate([p[k] for p in self.parts]) for k in self.parts[0]}


class _Export:
    def __init__(self, tl: Timeline, writer: PacketWriter) -> None:
        from perfetto.protos.perfetto.trace import perfetto_trace_pb2 as pb

        self.pb = pb
        self.tl = tl
        self.w = writer
        self.last_id = 0  # track uuids and sequence ids come from one counter
        self.names: list[str] = []
        self.name_index: dict[str, int] = {}
        self.layout_seq = 0
        self.lane_keys: dict[int, list[tuple[int, int]]] = {}  # lane kind -> [(lane id, index in lanes)]
        # Times are written since the trace start; an earlier sample (none in a
        # well-formed trace) moves the origin rather than wrap the unsigned clock.
        firsts = [tl.start_ns] + [
            int(df[col].min())  # type: ignore[arg-type]
            for df, col in ((tl.spans, "start"), (tl.counters, "time"), (tl.instants, "time"))
            if df.height
        ]
        self.origin = min(firsts)

    # -- names, ids, packets ------------------------------------------------------------
    def new_id(self) -> int:
        self.last_id += 1
        return self.last_id

    def name_ids(self, texts: pl.Series) -> np.ndarray:
        """Global name id of each text (one dict lookup per distinct text)."""
        uniq = texts.unique(maintain_order=True)
        ids = []
        for t in uniq.to_list():
            if t not in self.name_index:
                self.name_index[t] = len(self.names)
                self.names.append(t)
            ids.append(self.name_index[t])
        return texts.replace_strict(uniq, ids, return_dtype=pl.Int64).to_numpy()

    def write(self, *packets) -> None:
        self.w.write(self.pb.Trace(packet=packets).SerializeToString(), len(packets))

    def parent(self, title: str, rank: int) -> int:
        """A group's track, on the layout sequence (descriptors only)."""
        pb = self.pb
        uuid = self.new_id()
        desc = pb.TrackDescriptor(uuid=uuid, name=title, sibling_order_rank=rank)
        desc.child_ordering = pb.TrackDescriptor.EXPLICIT
        p = pb.TracePacket(track_descriptor=desc)
        if not self.layout_seq:
            self.layout_seq = self.new_id()
            p.sequence_flags = SEQ_INCREMENTAL_STATE_CLEARED
        else:
            p.sequence_flags = SEQ_NEEDS_INCREMENTAL_STATE
        p.trusted_packet_sequence_id = self.layout_seq
        self.write(p)
        return uuid

    def descriptor(self, name: str, parent: int, rank: int, counter_unit: int | None = None):
        desc = self.pb.TrackDescriptor(uuid=self.new_id(), name=name, sibling_order_rank=rank)
        if parent:
            desc.parent_uuid = parent
        else:
            desc.child_ordering = self.pb.TrackDescriptor.EXPLICIT
        if counter_unit is not None:
            desc.counter.unit = counter_unit
        return desc

    def emit(self, desc, ev: _Events, value: np.ndarray | None = None) -> None:
        """A track's sequence: its state, its descriptor, then its events in time order."""
        pb = self.pb
        seq = desc.uuid
        if ev.size == 0:
            p = pb.TracePacket(trusted_packet_sequence_id=seq, track_descriptor=desc)
            p.sequence_flags = SEQ_INCREMENTAL_STATE_CLEARED
            p.first_packet_on_sequence = True
            self.write(p)
            return
        c = ev.columns()
        order = np.lexsort((c["sec"], c["rank"], c["ts"]))
        ts = c["ts"][order]
        kind = c["kind"][order]
        name = c["name"][order]
        flow_out = c["flow_out"][order]
        if value is not None:
            value = value[order]
        inv = np.empty(len(order), dtype=np.int64)
        inv[order] = np.arange(len(order))
        if ev.flow_in:
            fin_ev = inv[np.concatenate([e for e, _ in ev.flow_in])]
            fin_id = np.concatenate([f for _, f in ev.flow_in]).astype(np.uint64)
            o = np.lexsort((fin_id, fin_ev))
            fin_ev, fin_id = fin_ev[o], fin_id[o]
        else:
            fin_ev, fin_id = np.zeros(0, np.int64), np.zeros(0, np.uint64)
        named = name >= 0
        uniq = np.unique(name[named])
        iid = np.where(named, np.searchsorted(uniq, name) + 1, 0).astype(np.uint64)

        head = pb.TracePacket(trusted_packet_sequence_id=seq, first_packet_on_sequence=True)
        head.sequence_flags = SEQ_INCREMENTAL_STATE_CLEARED
        head.trace_packet_defaults.timestamp_clock_id = _CLOCK
        head.trace_packet_defaults.track_event_defaults.track_uuid = desc.uuid
        head.interned_data.event_names.extend(
            pb.EventName(iid=k + 1, name=self.names[g]) for k, g in enumerate(uniq.tolist())
        )
        # The incremental clock starts at 0 = the trace's start on the default clock.
        head.clock_snapshot.clocks.add(clock_id=_CLOCK, timestamp=0, is_incremental=True)
        head.clock_snapshot.clocks.add(clock_id=_BOOTTIME, timestamp=0)
        tail = pb.TracePacket(trusted_packet_sequence_id=seq, track_descriptor=desc)
        tail.sequence_flags = SEQ_NEEDS_INCREMENTAL_STATE
        self.write(head, tail)

        delta = np.diff(ts, prepend=0)
        bounds = np.searchsorted(fin_ev, np.arange(0, len(ts) + _BLOCK, _BLOCK))
        for k, lo in enumerate(range(0, len(ts), _BLOCK)):
            hi = min(lo + _BLOCK, len(ts))
            a, b = bounds[k], bounds[k + 1]
            records = track_events(
                seq, delta[lo:hi], kind[lo:hi], iid[lo:hi], None if value is None else value[lo:hi],
                flow_out[lo:hi], fin_ev[a:b] - lo, fin_id[a:b],
            )  # fmt: skip
            self.w.write(records, hi - lo)

    # -- the layout -----------------------------------------------------------------
    def run(self) -> None:
        tl = self.tl
        spans = sorted_spans(tl)
        lanes = arrange(tl, spans)
        title_of_span, titles = span_titles(tl, spans, lanes)
        # Distinct keys can share a title (a P's "G17 main.worker" and a G's range label).
        title_of_span = self.name_ids(pl.Series(titles, dtype=pl.String))[title_of_span]
        for k, lane in enumerate(lanes):
            self.lane_keys.setdefault(int(lane.kind), []).append((lane.lane_id, k))
        extra, sinks = self.extra_instants(spans, lanes)
        starts = spans["start"].to_numpy()
        ends = spans["end"].to_numpy()
        lane_track: dict[tuple[int, int], int] = {}
        extra_lane = extra["lane"]
        rank = 0
        for key, title, _kinds, _folded in GROUPS:
            members = [(k, lane) for k, lane in enumerate(lanes) if lane.group == key]
            if not members:
                continue
            parent = self.parent(title, rank)
            rank += 1
            for j, (k, lane) in enumerate(members):
                a, b = np.searchsorted(extra_lane, [k, k + 1])
                mine = {c: v[a:b] for c, v in extra.items()}
                a, b = np.searchsorted(sinks[0], [lane.lo, lane.hi])
                lane_track[(int(lane.kind), lane.lane_id)] = self.lane(
                    lane,
                    parent,
                    j,
                    starts,
                    ends,
                    title_of_span,
                    mine,
                    (sinks[0][a:b] - lane.lo, sinks[1][a:b]),
                )
        self.counters(rank, lane_track)

    def lane(self, lane: Lane, parent: int, j: int, starts, ends, title_of_span, extra, sinks) -> int:
        """The tracks of one lane (layer 0 plus one per extra layer); returns layer 0's uuid."""
        lo, hi = lane.lo, lane.hi
        s, e = starts[lo:hi] - self.origin, ends[lo:hi] - self.origin
        titles = title_of_span[lo:hi]
        layer = layers(starts[lo:hi], ends[lo:hi])
        first = 0
        for depth in range(int(layer.max(initial=0)) + 1):
            name = lane.name if depth == 0 else f"{lane.name} ({depth + 1})"
            desc = self.descriptor(name, parent, j * 64 + depth)
            if depth == 0:
                first = desc.uuid
            rows = np.flatnonzero(layer == depth)
            zero = s[rows] == e[rows]
            nz, z = rows[~zero], rows[zero]
            ev = _Events()
            # Ends rank before begins at one instant; among begins the longer (outer) first,
            # among ends the later-started (inner) first: slices nest and balance.
            at_begin = ev.add(s[nz], 1, -e[nz], _BEGIN, titles[nz])
            ev.add(e[nz], 0, -s[nz], _END)
            at_instant = ev.add(s[z], 1, -e[z], _INSTANT, titles[z])
            event_of_row = np.full(hi - lo, -1, dtype=np.int64)
            event_of_row[nz] = at_begin + np.arange(len(nz))
            event_of_row[z] = at_instant + np.arange(len(z))
            sink_event = event_of_row[sinks[0]]
            here = sink_event >= 0
            ev.flow_in.append((sink_event[here], sinks[1][here]))
            if depth == 0 and len(extra["ts"]):
                base = ev.add(extra["ts"], 1, None, _INSTANT, extra["name"], extra["flow_out"])
                fin = extra["flow_in"] > 0
                ev.flow_in.append((base + np.flatnonzero(fin), extra["flow_in"][fin]))
            self.emit(desc, ev)
        return first

    def lane_of(self, kind: LaneKind, ids: np.ndarray) -> np.ndarray:
        """Index in ``lanes`` of lane (KIND, id) for each id, -1 where there is none."""
        pairs = sorted(self.lane_keys.get(int(kind), []))
        if not pairs:
            return np.full(len(ids), -1, dtype=np.int64)
        keys = np.array([p[0] for p in pairs], dtype=np.int64)
        idx = np.array([p[1] for p in pairs], dtype=np.int64)
        pos = np.minimum(np.searchsorted(keys, ids), len(keys) - 1)
        return np.where(keys[pos] == ids, idx[pos], -1)

    def extra_instants(self, spans: pl.DataFrame, lanes: list[Lane]):
        """Instants that are not spans, by lane, and flow ends on span begins, by span row.

        Wake-up flows: an instant on the waker's track starts each; the woken G's slice
        ends it (an instant "G… runs" where no slice starts then).  A flow without a
        goroutine (a steal) ends on an instant on its to_p's P track.  Marks of a thread
        with neither G nor P (sysmon's wake-ups) are instants on that thread's track;
        other instants are not exported: their lanes' slices already say what happened.
        """
        tl = self.tl
        strings = pl.Series("s", tl.strings, dtype=pl.String)
        parts: list[dict[str, np.ndarray]] = []
        sink_rows = np.zeros(0, np.int64)
        sink_ids = np.zeros(0, np.int64)

        def part(lane, ts, names, flow_out=None, flow_in=None) -> None:
            n = len(ts)
            parts.append({
                "lane": lane, "ts": np.asarray(ts, np.int64) - self.origin, "name": names,
                "flow_out": np.zeros(n, np.int64) if flow_out is None else flow_out,
                "flow_in": np.zeros(n, np.int64) if flow_in is None else flow_in,
            })  # fmt: skip

        df = tl.flows.filter(pl.col("to_time") >= 0).sort(["from_time", "g"])
        if df.height:
            df = df.with_row_index("fid", offset=1).with_columns(
                what=strings.gather(df["label"]).replace("", "wake-up")
            )
            from_g, from_p = df["from_g"].to_numpy(), df["from_p"].to_numpy()
            src = self.lane_of(LaneKind.G, from_g)
            src = np.where(src >= 0, src, self.lane_of(LaneKind.P, from_p))
            g = df["g"].to_numpy()
            steal = g == NONE
            dst = np.where(
                steal, self.lane_of(LaneKind.P, df["to_p"].to_numpy()), self.lane_of(LaneKind.G, g)
            )
            keep = (src >= 0) & (dst >= 0)
            df = df.filter(pl.Series(keep))
            src, dst, steal = src[keep], dst[keep], steal[keep]
            fid = df["fid"].to_numpy().astype(np.int64)
            what = pl.col("what")
            out_name = (
                pl.when(pl.col("g") == NONE)
                .then(pl.format("{} → P{}", what, pl.col("to_p")))
                .otherwise(pl.format("{} → G{}", what, pl.col("g")))
            )
            part(
                src, df["from_time"].to_numpy(), self.name_ids(df.select(out_name).to_series()), flow_out=fid
            )
            steals = df.filter(pl.Series(steal))
            part(dst[steal], steals["to_time"].to_numpy(),
                 self.name_ids(steals.select(pl.format("{} from P{}", what, pl.col("from_p"))).to_series()),
                 flow_in=fid[steal])  # fmt: skip
            # A woken G's flow ends on its slice that starts when it runs, if there is one.
            g_starts = (
                spans.with_row_index("row")
                .filter(pl.col("lane_kind") == int(LaneKind.G))
                .select("lane_id", "start", "row")
                .unique(subset=["lane_id", "start"], keep="first", maintain_order=True)
            )
            woken = (
                df.filter(~pl.Series(steal))
                .with_columns(dst=pl.Series(dst[~steal]))
                .join(g_starts, left_on=["g", "to_time"], right_on=["lane_id", "start"], how="left")
                .sort("fid")
            )
            hit = woken.filter(pl.col("row").is_not_null())
            sink_rows = hit["row"].to_numpy().astype(np.int64)
            sink_ids = hit["fid"].to_numpy().astype(np.int64)
            miss = woken.filter(pl.col("row").is_null())
            part(miss["dst"].to_numpy(), miss["to_time"].to_numpy(),
                 self.name_ids(miss.select(pl.format("G{} runs", pl.col("g"))).to_series()),
                 flow_in=miss["fid"].to_numpy().astype(np.int64))  # fmt: skip

        marks = tl.instants.filter(
            (pl.col("g") == NONE) & (pl.col("p") == NONE) & (pl.col("kind") == int(InstantKind.OTHER))
        )
        if marks.height:
            lane = self.lane_of(LaneKind.M, marks["m"].to_numpy())
            marks = marks.filter(pl.Series(lane >= 0))
            labels = strings.gather(marks["label"]).replace("", "event")
            part(lane[lane >= 0], marks["time"].to_numpy(), self.name_ids(labels))

        cols = ("lane", "ts", "name", "flow_out", "flow_in")
        if parts:
            extra = {c: np.concatenate([np.asarray(p[c], np.int64) for p in parts]) for c in cols}
        else:
            extra = {c: np.zeros(0, np.int64) for c in cols}
        order = np.argsort(extra["lane"], kind="stable")
        extra = {c: v[order] for c, v in extra.items()}
        o = np.lexsort((sink_ids, sink_rows))
        return extra, (sink_rows[o], sink_ids[o])

    def counters(self, rank: int, lane_track: dict[tuple[int, int], int]) -> None:
        pb = self.pb
        tl = self.tl
        owners = {
            sid: lane_track[(int(kind), lane_id)]
            for sid, (kind, lane_id) in counter_lanes(tl).items()
            if (int(kind), lane_id) in lane_track
        }
        df = tl.counters.sort(["name", "time"], maintain_order=True)
        gc = tl.spans.filter(pl.col("state") == int(State.GC_CYCLE)).sort("start")
        # The shared group only when something goes in it (a lab run's P counters may be all).
        shared = not df["name"].is_in(list(owners)).all()
        parent = self.parent("Counters", rank) if shared or gc.height else 0
        ids = df["name"].to_numpy()
        times = df["time"].to_numpy() - self.origin
        values = df["value"].to_numpy()
        bounds = np.flatnonzero(ids[1:] != ids[:-1]) + 1 if len(ids) else np.zeros(0, np.int64)
        edges = np.concatenate(([0], bounds, [len(ids)])).tolist()
        for k, (lo, hi) in enumerate(itertools.pairwise(edges)):
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
                desc = self.descriptor(raw.split(": ", 1)[1], owner, k, unit)
            else:
                desc = self.descriptor(COUNTER_TITLES.get(raw, raw), parent, k, unit)
            ev = _Events()
            ev.add(times[lo:hi], 2, None, _COUNTER)
            self.emit(desc, ev, values[lo:hi])
        if gc.height:
            # GC in progress as a 0/1 counter, so it plots next to the heap.
            desc = self.descriptor("GC in progress", parent, 1 << 20, pb.CounterDescriptor.UNIT_COUNT)
            t = np.stack([gc["start"].to_numpy(), gc["end"].to_numpy()], axis=1).ravel() - self.origin
            ev = _Events()
            ev.add(t, 2, None, _COUNTER)
            self.emit(desc, ev, np.tile([1.0, 0.0], gc.height))
