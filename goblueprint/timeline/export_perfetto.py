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

Encoding, chosen so the file stays well under twice the size of the Go trace it comes from
(0.8-1.65x on the test traces, at the deflate level ``perfetto_wire`` explains):

* one packet sequence (``trusted_packet_sequence_id``) per track.  Its first packet
  clears the incremental state (SEQ_INCREMENTAL_STATE_CLEARED) and carries the
  sequence's interned event names, its TracePacketDefaults (the track, so no event
  repeats its track_uuid, and the clock) and a ClockSnapshot of a sequence-scoped
  *incremental* clock: every later packet (SEQ_NEEDS_INCREMENTAL_STATE) holds only
  its delta from the previous one, a byte or two;
* a track's packets are its events in time order, with ends before begins at equal
  times so that back-to-back slices do not nest; tracks follow one another (readers
  sort packets by time across sequences);
* a track's events are put in order and encoded as packets by compiled loops
  (``perfetto_kernel``): no Python and no sort per event.  They run, with deflate, on the
  writer's worker threads (the loops release the GIL), while the main thread reads and
  names the next rows; titles and names are grouped by a compiled hash, not sorted;
* the packets are streamed in deflated ``compressed_packets`` chunks (``perfetto_wire``),
  lane by lane and, within a lane, piece by piece: a lane's rows are cut into pieces of
  about ``WINDOW_ROWS`` where no span is open (``perfetto_sources.pieces``), so no slice
  crosses a cut, each piece's layers start afresh, and the events of a piece and of the
  instants before the next piece's first start are exactly the lane's events in that
  window, in the same order.  A sequence's first packet interns the names of its first
  window; a later window that uses new names interns them in a packet of its own before
  its events.  The flows are named in one pass over their table and kept on disk by lane
  (``perfetto_flows``); each window reads those that start or end in it.  Memory is a
  batch of a table and a piece (a lane whose spans overlap without a break for long is a
  larger piece), never a whole table, lane or the file;
* most lanes are one piece on one track (goroutines that ran a few times): those are written
  a batch of lanes at a time (``_Export.flush``) by one compiled call that lays out every
  packet ``window`` would (``perfetto_kernel.lanes_packets``), the same bytes: per lane, a
  few list items in Python instead of a window's dozens of numpy and protobuf calls.

Timestamps are nanoseconds since the start of the trace.  Flow ids are global.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import IO, TYPE_CHECKING

import numpy as np
import polars as pl

from goblueprint.arrays import unique
from goblueprint.errors import GoblueprintError, PathError
from goblueprint.render.lanes import GROUPS, Lane, arrange, counter_lanes, key_titles, layers, state_names
from goblueprint.timeline.model import SCHEMAS, LaneKind, State, Timeline
from goblueprint.timeline.perfetto_flows import FOREVER, FlowStore, KeyIds
from goblueprint.timeline.perfetto_sources import SPAN_COLUMNS, IngestedSource, Rows, Source, TimelineSource
from goblueprint.timeline.perfetto_wire import (
    SEQ_INCREMENTAL_STATE_CLEARED,
    SEQ_NEEDS_INCREMENTAL_STATE,
    UNIT_COUNT,
    UNIT_SIZE_BYTES,
    PacketWriter,
    TrackDescriptor,
    descriptor_packet,
    intern_packet,
    sequence_head,
)

if TYPE_CHECKING:
    from goblueprint.timeline.ingest import Ingested

_COUNTER = 4  # TrackEvent.Type of a counter sample
_BLOCK = 1 << 16  # counter samples encoded per call: a few hundred KB of packets
# About the bytes of a track event, of a counter sample (and 10 more a flow): the estimates that
# cut chunks (perfetto_wire.PacketWriter.defer).
_EVENT_BYTES = 16
_SAMPLE_BYTES = 26
# Rows of a lane written at once: a lane is cut where no span is open into pieces of at least
# this many rows (perfetto_sources.pieces), so memory follows the piece, not the lane.
WINDOW_ROWS = 1 << 14
# The span columns a piece keeps once titled (the others only make titles): less to copy when
# pieces are cut and joined.
_KEPT = ("lane_kind", "lane_id", "start", "end", "state")
# The lanes whose slices are titled after the G they run (render.lanes.title_keys).
_PM_KINDS = np.array([int(LaneKind.P), int(LaneKind.M)], np.int64)
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
    return _write(TimelineSource(tl), out)


def write_perfetto_ingested(found: Ingested, out: str | Path | IO[bytes]) -> int:
    """``write_perfetto`` of an ingested trace's Timeline, streamed from its tables.

    The same file as ``write_perfetto(found.timeline(), out)``, without the Timeline in memory.
    """
    return _write(IngestedSource(found), out)


def _write(src: Source, out: str | Path | IO[bytes]) -> int:
    if isinstance(out, (str, Path)):
        try:
            with open(out, "wb") as handle:
                return _write(src, handle)
        except OSError as exc:
            raise PathError.from_os(out, exc, write=True) from None
        finally:
            src.close()
    writer = PacketWriter(out)
    try:
        _Export(src, writer).run()
        writer.flush()
    finally:
        writer.close()  # a failure part-way stops the deflate thread too
        src.close()
    return writer.packets


class _Extra:
    """What a lane shows beside its spans: instants (flow starts, steal ends, unmatched wake-up
    ends, thread marks) and the flows that end on its G slices."""

    def __init__(self) -> None:
        self.ts: list[np.ndarray] = []
        self.name: list[np.ndarray] = []
        self.flow_out: list[np.ndarray] = []
        self.flow_in: list[np.ndarray] = []

    def add(self, ts, name, flow_out=None, flow_in=None) -> None:
        n = len(ts)
        if not n:
            return
        self.ts.append(np.asarray(ts, np.int64))
        self.name.append(np.asarray(name, np.int64))
        self.flow_out.append(np.zeros(n, np.int64) if flow_out is None else np.asarray(flow_out, np.int64))
        self.flow_in.append(np.zeros(n, np.int64) if flow_in is None else np.asarray(flow_in, np.int64))

    def columns(self) -> dict[str, np.ndarray]:
        if not self.ts:
            return {c: np.zeros(0, np.int64) for c in ("ts", "name", "flow_out", "flow_in")}
        return {
            "ts": np.concatenate(self.ts), "name": np.concatenate(self.name),
            "flow_out": np.concatenate(self.flow_out), "flow_in": np.concatenate(self.flow_in),
        }  # fmt: skip


def _of_lane(keys: np.ndarray, cols: dict[str, np.ndarray], lane: int) -> dict[str, np.ndarray]:
    """The rows of COLS (sorted by lane, KEYS) that belong to LANE."""
    # Bounds of KEYS' own dtype: others would make numpy convert all of KEYS on every call.
    a, b = np.searchsorted(keys, np.array([lane, lane + 1], dtype=keys.dtype))
    return {c: v[a:b] for c, v in cols.items()}


def _one_window(spans: Rows) -> bool:
    """Can a lane's only piece be written with other lanes' (``_Export.flush``): not so many rows
    that a batch would hold much more than a piece, and one layer (``layers``: none overlaps
    without nesting), so one track."""
    n = spans.height
    if n > WINDOW_ROWS:
        return False
    if n < 2:
        return True
    s, e = spans["start"], spans["end"]
    return bool((s[1:] >= np.maximum.accumulate(e)[:-1]).all())


def _utf8(texts: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """TEXTS encoded, one after another, and where each begins (len(TEXTS) + 1 offsets)."""
    raw = [t.encode() for t in texts]
    off = np.zeros(len(raw) + 1, np.int64)
    np.cumsum([len(r) for r in raw], out=off[1:])
    return np.frombuffer(b"".join(raw), np.uint8).copy(), off


class _Batch:
    """Lanes of one window each, waiting to be written at once (``_Export.flush``)."""

    LANES = 1 << 10  # at most, so the per-lane lists stay short...
    ROWS = WINDOW_ROWS  # ...and the rows about a piece's

    def __init__(self, lanes: list[Lane], mark_lane: np.ndarray, mark_cols: dict[str, np.ndarray]) -> None:
        self.lanes = lanes
        self.mark_lane = mark_lane
        self.mark_cols = mark_cols
        self.ks: list[int] = []
        self.rows: list[Rows] = []
        self.height = 0

    def add(self, k: int, rows: Rows) -> None:
        self.ks.append(k)
        self.rows.append(rows)
        self.height += rows.height

    def full(self) -> bool:
        return len(self.ks) >= self.LANES or self.height >= self.ROWS

    def clear(self) -> None:
        self.ks, self.rows, self.height = [], [], 0


class _Track:
    """A track's sequence as far as it is written: its interned names and its clock."""

    def __init__(self, desc: TrackDescriptor) -> None:
        self.desc = desc
        self.opened = False
        self.gids = np.zeros(0, np.int64)  # global name ids interned
        self.known: set[int] = set()  # the same, to tell a window's new ones (a few) from them
        self.iids = np.zeros(0, np.int64)  # their iids
        self.last = 0  # the time of its last event: the incremental clock

    def add(self, gids: np.ndarray, first: int) -> None:
        """GIDS interned as iids FIRST, FIRST + 1, ..."""
        self.gids = np.concatenate((self.gids, gids))
        self.known.update(gids.tolist())
        self.iids = np.concatenate((self.iids, np.arange(first, first + len(gids), dtype=np.int64)))


class _LaneState:
    """One lane while its pieces are written: its tracks (one per layer) and what it shows
    beside its spans (flows starting and ending on it, thread marks)."""

    def __init__(self, k: int, lane: Lane, flows: FlowStore, marks: dict[str, np.ndarray]) -> None:
        self.k = k
        self.lane = lane
        self.tracks: list[_Track] = []
        self.starting = flows.starting(k)
        self.ending = flows.ending(k)
        self.marks = marks
        self.since = np.iinfo(np.int64).min  # the previous window's end


class _Export:
    def __init__(self, src: Source, writer: PacketWriter) -> None:
        from goblueprint.trace import kernels

        self.kernels = kernels.get()  # loaded here, not by the first of the worker threads at once
        self.src = src
        self.w = writer
        self.last_id = 0  # track uuids and sequence ids come from one counter
        self.names: list[str] = []
        self.name_index: dict[str, int] = {}
        self.lut = np.zeros(0, np.int64)  # see iid
        self.layout_seq = 0
        self.lane_keys: dict[
            int, tuple[np.ndarray, np.ndarray]
        ] = {}  # lane kind -> (lane ids, index in lanes)
        self.lane_luts: dict[int, np.ndarray] = {}  # lane kind -> index in lanes by id (index_lanes)
        self.strings = pl.Series("s", src.strings, dtype=pl.String)
        self.stub = Timeline(strings=src.strings)  # what key_titles reads of a Timeline
        self.state_index = state_names()[1]
        self.title_ids = KeyIds()  # titled's keys named so far
        # Times are written since the trace start; an earlier sample (none in a
        # well-formed trace) moves the origin rather than wrap the unsigned clock.  Set by run().
        self.origin = 0

    # -- names, ids, packets ------------------------------------------------------------
    def new_id(self) -> int:
        self.last_id += 1
        return self.last_id

    def name_ids(self, texts: pl.Series) -> np.ndarray:
        """Global name id of each text (one dict lookup per distinct text)."""
        if not len(texts):
            # (polars hands an empty Series out as an object array, which would make every array
            # concatenated with it one too: the marks of a trace without any)
            return np.zeros(0, np.int64)
        uniq = texts.unique(maintain_order=True)
        ids = self.text_ids(uniq.to_list())
        return texts.replace_strict(uniq, ids, return_dtype=pl.Int64).to_numpy()

    def text_ids(self, texts: list[str]) -> np.ndarray:
        """Global name id of each of a few distinct TEXTS."""
        ids = np.empty(len(texts), np.int64)
        for k, t in enumerate(texts):
            got = self.name_index.get(t)
            if got is None:
                got = self.name_index[t] = len(self.names)
                self.names.append(t)
            ids[k] = got
        return ids

    def iid(self, track: _Track, gids: np.ndarray) -> np.ndarray:
        """The iid on TRACK's sequence of each of GIDS (anything for a name it did not intern): a
        gather from one table that every track shares, set to TRACK's few names first, not a
        search per row."""
        if len(self.lut) < len(self.names):
            self.lut = np.zeros(max(len(self.names), 2 * len(self.lut)), np.int64)
        self.lut[track.gids] = track.iids
        return self.lut[gids]

    def distinct(self, a: np.ndarray) -> np.ndarray:
        """The distinct values of A, in no particular order: hashed, not sorted."""
        return self.kernels.dense_codes(_i64(a))[1]

    def parent(self, title: str, rank: int) -> int:
        """A group's track, on the layout sequence (descriptors only)."""
        desc = TrackDescriptor(self.new_id(), title, rank)
        if not self.layout_seq:
            self.layout_seq = self.new_id()
            flags = SEQ_INCREMENTAL_STATE_CLEARED
        else:
            flags = SEQ_NEEDS_INCREMENTAL_STATE
        self.w.write(descriptor_packet(self.layout_seq, flags, desc), 1)
        return desc.uuid

    def descriptor(
        self, name: str, parent: int, rank: int, counter_unit: int | None = None
    ) -> TrackDescriptor:
        return TrackDescriptor(self.new_id(), name, rank, parent, counter_unit)

    def open_sequence(self, desc: TrackDescriptor, names: np.ndarray) -> None:
        """A track's sequence state: its interned NAMES (global ids, iid k+1 for names[k]),
        its defaults (track, clock), the clock's start, then its descriptor."""
        head = sequence_head(desc, [self.names[g] for g in names.tolist()])
        tail = descriptor_packet(desc.uuid, SEQ_NEEDS_INCREMENTAL_STATE, desc)
        self.w.write(head + tail, 2)

    def empty_track(self, desc: TrackDescriptor) -> None:
        self.w.write(descriptor_packet(desc.uuid, SEQ_INCREMENTAL_STATE_CLEARED, desc, first=True), 1)

    def emit(
        self, track: _Track, s, e, title, titles, extra: dict[str, np.ndarray], sink_rows, sink_ids
    ) -> None:
        """A window of a track's sequence: on its first, the state and the descriptor; the names
        it adds to the sequence; then its events in time order.

        S, E, TITLE: its rows (sorted by start, the longer first; TITLE a global name id, all
        of them among TITLES); EXTRA: its other instants; flows SINK_IDS end on the slices
        of rows SINK_ROWS.
        """
        if len(s) == 0 and len(extra["ts"]) == 0:
            return
        # The names used: found among the few distinct ones, so the cost follows the window,
        # not every name of the trace.  A sequence's first window interns its names as iids
        # 1, 2, ... in the order of their texts; later windows intern their new ones after
        # those.  By text, not by global id: the ids follow the order batches are read in.
        xname = extra["name"]
        # Distinct, in no particular order: by_text orders them.
        names = self.distinct(np.concatenate((titles, xname[xname >= 0]))) if len(xname) else titles
        if not track.opened:
            names = self.by_text(names)
            self.open_sequence(track.desc, names)
            track.opened = True
            track.add(names, 1)
        else:
            new = self.by_text(np.array([g for g in names.tolist() if g not in track.known], np.int64))
            if len(new):
                self.intern(track.desc.uuid, new, len(track.gids) + 1)
                track.add(new, len(track.gids) + 1)
        x_iid = np.where(xname >= 0, self.iid(track, xname), 0)
        xts = extra["ts"]
        slices = int(np.count_nonzero(s != e))
        count = len(s) + slices + len(xts)
        # The events are put in order and encoded on a worker thread; the sequence's clock moves
        # on to its last event, the latest of every time.
        prev = track.last
        track.last = max(int(s.max(initial=0)), int(e.max(initial=0)), int(xts.max(initial=0)))
        args = (
            _i64(s), _i64(e), self.iid(track, title), _i64(xts), x_iid, _i64(extra["flow_out"]),
            _i64(extra["flow_in"]), _i64(sink_rows), _i64(sink_ids),
        )  # fmt: skip
        seq = track.desc.uuid
        flows = (
            int(np.count_nonzero(extra["flow_out"])) + len(sink_ids) + int(np.count_nonzero(extra["flow_in"]))
        )
        self.w.defer(
            lambda: self.kernels.window_packets(seq, prev, *args), count * _EVENT_BYTES + 10 * flows, count
        )

    def by_text(self, gids: np.ndarray) -> np.ndarray:
        """GIDS in the order of their texts."""
        return np.array(sorted(gids.tolist(), key=self.names.__getitem__), np.int64)

    def intern(self, seq: int, gids: np.ndarray, first: int) -> None:
        """Names a sequence uses from now on, as iids FIRST, FIRST + 1, ... (it keeps those
        interned before)."""
        self.w.write(intern_packet(seq, first, [self.names[g] for g in gids.tolist()]), 1)

    def lane_of(self, kind: LaneKind, ids: np.ndarray) -> np.ndarray:
        """Index in ``lanes`` of lane (KIND, id) for each id, -1 where there is none."""
        lut = self.lane_luts.get(int(kind))
        if lut is not None:
            # Ids below 0 or past the last lane's land on the table's last slot, which is -1.
            return lut[np.clip(np.asarray(ids, np.int64), -1, len(lut) - 1)]
        keys, idx = self.lane_keys.get(int(kind), (np.zeros(0, np.int64), np.zeros(0, np.int64)))
        if not len(keys):
            return np.full(len(ids), -1, dtype=np.int64)
        pos = np.minimum(np.searchsorted(keys, ids), len(keys) - 1)
        return np.where(keys[pos] == ids, idx[pos], -1)

    def index_lanes(self, kind: int, ids: np.ndarray, idx: np.ndarray) -> None:
        """``lane_of``'s map for KIND: lanes IDS (ascending) at IDX.  A table indexed by id when the
        ids are dense enough (goroutine, P and M ids are): a gather per id, where a binary search
        per flow was a fifth of reading the flows."""
        self.lane_keys[kind] = (ids, idx)
        if len(ids) and ids[0] >= 0 and ids[-1] < 8 * len(ids) + 4096:
            lut = np.full(int(ids[-1]) + 2, -1, np.int64)
            lut[ids] = idx
            self.lane_luts[kind] = lut

    # -- the layout -----------------------------------------------------------------
    def run(self) -> None:
        src = self.src
        # The lanes and the earliest time are passes over a column or two of the tables, made
        # while nothing else runs yet: the counters' and instants' on a thread (polars lets go of
        # the GIL while it reads), the spans' here (one table is read by one thread at a time).
        with ThreadPoolExecutor(max_workers=1, thread_name_prefix="first-time") as pool:
            others = pool.submit(src.first_time, ("counters", "instants"))
            keys = src.lane_keys()
            self.origin = min(src.first_time(("spans",)), others.result())
        # One row per lane with spans: each Lane's ``lo`` is its index in KEYS (and the
        # order lane_pieces yields them); a lane with instants only has lo == hi.
        lanes = arrange(Timeline(lanes=src.lanes), keys)
        pairs: dict[int, list[tuple[int, int]]] = {}
        for k, lane in enumerate(lanes):
            pairs.setdefault(int(lane.kind), []).append((lane.lane_id, k))
        for kind, members in pairs.items():
            members.sort()
            self.index_lanes(
                kind, np.array([m[0] for m in members], np.int64), np.array([m[1] for m in members], np.int64)
            )
        self.g_lanes = {lane.lane_id: lane for lane in lanes if lane.kind == LaneKind.G}
        # Each lane's parent track and rank in it.
        self.place: list[tuple[int, int]] = [(0, 0)] * len(lanes)
        rank = 0
        for key, title, _kinds, _folded in GROUPS:
            members = [k for k, lane in enumerate(lanes) if lane.group == key]
            if not members:
                continue
            parent = self.parent(title, rank)
            rank += 1
            for j, k in enumerate(members):
                self.place[k] = (parent, j)
        self.flows = FlowStore(src.flows(), self.lane_of, self.text_ids, src.strings, self.origin)
        try:
            self.lanes(lanes)
        finally:
            self.flows.close()
        gc_spans = (
            pl.concat(self.gc).sort("start", maintain_order=True)
            if self.gc
            else pl.DataFrame(schema={"start": pl.Int64, "end": pl.Int64})
        )
        self.counters(rank, self.lane_track, gc_spans)

    def lanes(self, lanes: list[Lane]) -> None:
        """Every lane's tracks: the lanes without spans first, then the others piece by piece."""
        marks = self.src.marks()
        mark_lane = self.lane_of(LaneKind.M, marks["m"].to_numpy())
        marks = marks.with_columns(lane=pl.Series(mark_lane, dtype=pl.Int64)).filter(pl.col("lane") >= 0)
        marks = marks.with_columns(label=self.strings.gather(marks["label"]).replace("", "event")).sort(
            "lane", maintain_order=True
        )
        mark_lane = marks["lane"].to_numpy()
        mark_cols = {"ts": marks["time"].to_numpy() - self.origin, "name": self.name_ids(marks["label"])}
        # A window shows the marks before its end, and the last one's ends at FOREVER.
        shown = mark_cols["ts"] < FOREVER
        if not shown.all():
            mark_lane, mark_cols = mark_lane[shown], {c: v[shown] for c, v in mark_cols.items()}
        del marks
        by_key = {(int(lane.kind), lane.lane_id): k for k, lane in enumerate(lanes) if lane.hi > lane.lo}
        self.lane_track: dict[tuple[int, int], int] = {}
        self.gc: list[pl.DataFrame] = []

        def begin(k: int) -> _LaneState:
            return _LaneState(k, lanes[k], self.flows, _of_lane(mark_lane, mark_cols, k))

        empty = self.titled(pl.DataFrame(schema={c: SCHEMAS["spans"][c] for c in SPAN_COLUMNS}))
        batch = _Batch(lanes, mark_lane, mark_cols)
        for k, lane in enumerate(lanes):
            if lane.hi == lane.lo:
                if not _one_window(empty):  # (a test's way to write every lane on its own)
                    self.window(begin(k), empty, None)
                    continue
                batch.add(k, empty)
                if batch.full():
                    self.flush(batch)
        n = 0
        state: _LaneState | None = None
        for piece in self.src.lane_pieces(WINDOW_ROWS, self.titled):
            if piece.first:
                k = by_key.get((piece.lane_kind, piece.lane_id))
                if k is None or lanes[k].lo != n:
                    raise GoblueprintError(
                        f"lane {piece.lane_kind}/{piece.lane_id} of the spans is not where the lane list has it"
                    )
                n += 1
                if piece.until is None and _one_window(piece.spans):
                    # Most lanes (goroutines that ran a few times): written with others at once.
                    batch.add(k, piece.spans)
                    if batch.full():
                        self.flush(batch)
                    state = None
                    continue
                self.flush(batch)  # what is written keeps the lanes' order
                state = begin(k)
            if state is None:
                raise GoblueprintError("the spans' first piece is not the first of its lane")
            self.window(state, piece.spans, piece.until)
            del piece  # before the source assembles the next piece
        self.flush(batch)

    def flush(self, batch: _Batch) -> None:
        """The lanes of BATCH, each one window on one track, written as ``window`` would write
        them one by one (the same bytes, packets and chunks) by one compiled call: for the many
        lanes of a few rows, the cost of a window in Python was most of the export's own."""
        if not batch.ks:
            return
        ks = np.array(batch.ks, np.int64)
        rows = Rows.concat(batch.rows)
        row_off = np.concatenate(([0], np.cumsum([r.height for r in batch.rows])))
        lanes = [batch.lanes[k] for k in ks.tolist()]
        batch.clear()
        out, out_off = self.flows.starting_all(ks)
        into, in_off = self.flows.ending_all(ks)
        a = np.searchsorted(batch.mark_lane, ks)
        per = np.searchsorted(batch.mark_lane, ks + 1) - a
        mark_off = np.concatenate(([0], np.cumsum(per)))
        mine = np.repeat(a - mark_off[:-1], per) + np.arange(mark_off[-1])
        mark_ts, mark_name = batch.mark_cols["ts"][mine], batch.mark_cols["name"][mine]
        # The name of a woken G's instant where no slice of its lane starts then (``ending``):
        # made for the lanes where a wake-up ends, whether or not one is left without its slice.
        runs = np.full(len(ks), -1, np.int64)
        wakes = unique(np.repeat(np.arange(len(ks)), np.diff(in_off))[into["steal"] == 0])
        if len(wakes):
            runs[wakes] = self.text_ids([f"G{lanes[j].lane_id} runs" for j in wakes.tolist()])
        # The batch's names, numbered in the order of their texts (a sequence interns by text).
        used = [rows["title"], out["name"], into["name"], runs, mark_name]
        ids = np.concatenate(used).astype(np.int64)
        some = ids >= 0
        code, gids = self.kernels.dense_codes(ids[some])
        texts = [self.names[g] for g in gids.tolist()]
        by_text = sorted(range(len(texts)), key=texts.__getitem__)
        rank = np.empty(len(gids), np.int64)
        rank[by_text] = np.arange(len(gids))
        ids[some] = rank[code]
        title, out_name, in_name, runs, mark_name = np.split(ids, np.cumsum([len(u) for u in used])[:-1])
        name_text, name_off = _utf8([texts[i] for i in by_text])
        lane_text, lane_off = _utf8([lane.name for lane in lanes])
        seqs = np.array([self.new_id() for _ in lanes], np.int64)
        place = [self.place[k] for k in ks.tolist()]
        parents = np.array([p for p, _ in place], np.int64)
        ranks = np.array([j * 64 for _, j in place], np.int64)
        args = (
            seqs, parents, ranks, lane_text, lane_off, name_text, name_off,
            row_off, _i64(rows["start"] - self.origin), _i64(rows["end"] - self.origin), _i64(title),
            out_off, _i64(out["ts"]), _i64(out["fid"]), _i64(out_name),
            in_off, _i64(into["ts"]), _i64(into["fid"]), _i64(in_name), np.ascontiguousarray(into["steal"]), runs,
            mark_off, _i64(mark_ts), _i64(mark_name),
        )  # fmt: skip
        # The records' sizes first (what cuts the chunks), their bytes on the writer's workers.
        k = self.kernels
        _, rec_lane, rec_len, rec_count, rec_flows = k.lanes_packets(*args, 0, len(lanes), 0)
        sizes = np.where(rec_flows < 0, rec_len, rec_count * _EVENT_BYTES + 10 * rec_flows)
        first_rec = np.searchsorted(rec_lane, np.arange(len(lanes) + 1))

        def encode(r0: int, r1: int) -> np.ndarray:
            """Records R0 to R1 (excluded): those of their lanes, less what other chunks hold."""
            j0, j1 = int(rec_lane[r0]), int(rec_lane[r1 - 1]) + 1
            data, _, lens, _, _ = k.lanes_packets(*args, j0, j1, 1)
            ends = np.concatenate(([0], np.cumsum(lens)))
            skip = r0 - int(first_rec[j0])
            return data[ends[skip] : ends[skip + r1 - r0]]

        self.w.defer_records(encode, sizes, rec_count)
        for lane, seq in zip(lanes, seqs.tolist(), strict=True):
            self.lane_track[(int(lane.kind), lane.lane_id)] = seq
        cycles = rows["state"] == int(State.GC_CYCLE)
        if cycles.any():
            self.gc.append(pl.DataFrame({"start": rows["start"][cycles], "end": rows["end"][cycles]}))

    def titled(self, spans: pl.DataFrame) -> Rows:
        """SPANS (of any lanes) with their titles as global name ids: made for a batch at once,
        so the cost of naming follows the rows, not the number of lanes and pieces."""
        # Each column taken out of polars once (a batch's columns are mostly in two chunks, so
        # each to_numpy is a copy).
        cols = {c: spans[c].to_numpy() for c in spans.columns}
        kept = Rows({c: cols[c] for c in _KEPT})
        if not spans.height:
            kept["title"] = np.zeros(0, np.int64)
            return kept
        # span_titles' keys (title_keys), grouped by hashing in one compiled pass: its sort and
        # binary search per row cost more than the rest of the export's work on a row.
        code, keys = self.kernels.title_codes(
            _typed(cols["lane_kind"], np.uint8), _i64(cols["g"]), _typed(cols["label"], np.uint32),
            _typed(cols["state"], np.uint8), self.state_index, _PM_KINDS, int(LaneKind.G),
        )  # fmt: skip

        def make(new: np.ndarray) -> np.ndarray:
            # key_titles names a P's or M's slices after the G lanes they run (keys of form 2 hold
            # the G): pass only those.
            runs = (new[(new >> 60) == 2] & ((1 << 52) - 1)).tolist()
            on = [self.g_lanes[g] for g in runs if g in self.g_lanes]
            return self.text_ids(key_titles(self.stub, new, on))

        # A key's title depends on the key alone: made once, for the first batch that has it.
        kept["title"] = self.title_ids.get(keys, make)[code]
        return kept

    def window(self, st: _LaneState, spans: Rows, until: int | None) -> None:
        """A lane's rows of one piece, with what its tracks show beside them until UNTIL (the next
        piece's first start; None: the lane's last piece): no slice crosses UNTIL, and every
        event at UNTIL or later is the next piece's."""
        lane = st.lane
        limit = FOREVER if until is None else until - self.origin
        extra = _Extra()
        out = st.starting.take(limit)
        extra.add(out["ts"], out["name"], flow_out=out["fid"])
        starts = spans["start"] - self.origin
        sinks = self.ending(st, limit, starts, extra)
        mine = st.marks
        if len(mine["ts"]):  # few lanes have any: no masks for the others
            now = (mine["ts"] >= st.since) & (mine["ts"] < limit)
            extra.add(mine["ts"][now], mine["name"][now])
        st.since = limit
        first = not st.tracks
        self.lane_window(st, spans, starts, extra.columns(), sinks)
        if first:
            self.lane_track[(int(lane.kind), lane.lane_id)] = st.tracks[0].desc.uuid
        if until is None and not st.tracks[0].opened:
            self.empty_track(st.tracks[0].desc)
        cycles = spans["state"] == int(State.GC_CYCLE)
        if cycles.any():
            self.gc.append(pl.DataFrame({"start": spans["start"][cycles], "end": spans["end"][cycles]}))

    def ending(
        self, st: _LaneState, limit: int, starts: np.ndarray, extra: _Extra
    ) -> tuple[np.ndarray, np.ndarray]:
        """Adds the instants of flows ending on the lane before LIMIT; returns (span row, flow id)
        of those ending on a slice of this piece (STARTS: its rows' starts)."""
        r = st.ending.take(limit)
        st_ = r["steal"].astype(bool)
        extra.add(r["ts"][st_], r["name"][st_], flow_in=r["fid"][st_])
        ts, fid = r["ts"][~st_], r["fid"][~st_]
        if not len(ts):
            return np.zeros(0, np.int64), np.zeros(0, np.int64)
        # The first of the piece's rows (longest first) that starts when the G runs.
        row = np.searchsorted(starts, ts)
        hit = row < len(starts)
        hit[hit] = starts[row[hit]] == ts[hit]
        if not hit.all():
            # The woken G's lane is this one: every unmatched end is "G<lane id> runs".
            name = self.text_ids([f"G{st.lane.lane_id} runs"])[0]
            extra.add(ts[~hit], np.full(int((~hit).sum()), name, np.int64), flow_in=fid[~hit])
        return row[hit], fid[hit]

    def lane_window(self, st: _LaneState, spans: Rows, s: np.ndarray, extra, sinks) -> None:
        """A piece's rows on the lane's tracks (layer 0 plus one per extra layer), its other
        instants on layer 0; a layer's track is made when it first has rows."""
        lane = st.lane
        e = spans["end"] - self.origin
        titles = spans["title"]
        distinct = self.distinct(titles)
        # Each piece starts where no span is open: its layers are its own.
        layer = layers(s, e)
        sink_rows, sink_ids = sinks
        none = {c: np.zeros(0, np.int64) for c in ("ts", "name", "flow_out", "flow_in")}
        depths = int(layer.max(initial=0)) + 1
        parent, j = self.place[st.k]
        while len(st.tracks) < depths:
            depth = len(st.tracks)
            name = lane.name if depth == 0 else f"{lane.name} ({depth + 1})"
            st.tracks.append(_Track(self.descriptor(name, parent, j * 64 + depth)))
        if depths == 1:
            self.emit(st.tracks[0], s, e, titles, distinct, extra, sink_rows, sink_ids)
            return
        for depth in range(depths):
            rows = np.flatnonzero(layer == depth)
            # Sinks on this layer's rows, renumbered as the layer's rows.
            local = np.full(len(s), -1, np.int64)
            local[rows] = np.arange(len(rows))
            here = local[sink_rows]
            on = here >= 0
            mine = titles[rows]
            self.emit(
                st.tracks[depth],
                s[rows],
                e[rows],
                mine,
                self.distinct(mine),
                extra if depth == 0 else none,
                here[on],
                sink_ids[on],
            )

    def counters(self, rank: int, lane_track: dict[tuple[int, int], int], gc: pl.DataFrame) -> None:
        """Counter tracks, filled batch by batch (each its own sequence and clock), then GC in progress."""
        src = self.src
        names = src.counter_names()
        stub = Timeline(
            strings=src.strings,
            counters=pl.DataFrame({"name": names}, schema={"name": pl.UInt32}).with_columns(
                time=pl.lit(0, pl.Int64), value=pl.lit(0.0)
            ),
        )
        owners = {
            sid: lane_track[(int(kind), lane_id)]
            for sid, (kind, lane_id) in counter_lanes(stub).items()
            if (int(kind), lane_id) in lane_track
        }
        # The shared group only when something goes in it (a lab run's P counters may be all).
        shared = any(n not in owners for n in names)
        parent = self.parent("Counters", rank) if shared or gc.height else 0
        seq_of: dict[int, int] = {}
        for k, sid in enumerate(names):
            raw = src.strings[sid]
            unit = UNIT_SIZE_BYTES if raw.endswith(":bytes") else UNIT_COUNT
            owner = owners.get(sid)
            if owner is not None:
                # A child of its lane's track: Perfetto shows it when the P is expanded, right below.
                desc = self.descriptor(raw.split(": ", 1)[1], owner, k, unit)
            else:
                desc = self.descriptor(COUNTER_TITLES.get(raw, raw), parent, k, unit)
            self.open_sequence(desc, np.zeros(0, np.int64))
            seq_of[sid] = desc.uuid
        # Each sequence's clock (the time of its last sample), by name: the names are string ids.
        last = np.zeros(len(src.strings), np.int64)
        for batch in src.counter_batches():
            sids = _i64(batch["name"].to_numpy())
            if len(sids) and not (0 <= sids.min() and sids.max() < len(last)):
                raise GoblueprintError("a counter sample's name is not one of the trace's strings")
            ids, off, delta, values, bad = self.kernels.counter_deltas(
                sids, _i64(batch["time"].to_numpy()), _typed(batch["value"].to_numpy(), np.float64),
                self.origin, last,
            )  # fmt: skip
            if bad >= 0:
                raise GoblueprintError(f"counter {src.strings[bad]!r}: samples out of time order")
            for sid, a, b in zip(ids.tolist(), off[:-1].tolist(), off[1:].tolist(), strict=True):
                seq = seq_of.get(sid)
                if seq is None:
                    raise GoblueprintError(f"counter {src.strings[sid]!r} is not among the counters' names")
                self.sample(seq, delta[a:b], values[a:b])
        if gc.height:
            # GC in progress as a 0/1 counter, so it plots next to the heap.
            desc = self.descriptor("GC in progress", parent, 1 << 20, UNIT_COUNT)
            t = np.stack([gc["start"].to_numpy(), gc["end"].to_numpy()], axis=1).ravel() - self.origin
            self.open_sequence(desc, np.zeros(0, np.int64))
            self.sample(desc.uuid, np.diff(t, prepend=0), np.tile([1.0, 0.0], gc.height))

    def sample(self, seq: int, delta: np.ndarray, values: np.ndarray) -> None:
        """Counter samples (times as deltas), encoded on a worker thread in blocks of _BLOCK."""
        for lo in range(0, len(delta), _BLOCK):
            d, v = delta[lo : lo + _BLOCK], values[lo : lo + _BLOCK]
            self.w.defer(lambda d=d, v=v: _samples(self.kernels, seq, d, v), len(d) * _SAMPLE_BYTES, len(d))


def _samples(k, seq: int, delta: np.ndarray, values: np.ndarray) -> np.ndarray:
    n = len(delta)
    bits = np.ascontiguousarray(values, dtype="<f8").view(np.int64)
    none = np.zeros(0, np.int64)
    return k.encode_track_events(
        seq,
        _i64(delta),
        np.full(n, _COUNTER, np.uint8),
        np.zeros(n, np.int64),
        bits,
        np.zeros(n, np.int64),
        none,
        none,
    )


def _typed(a: np.ndarray, dtype: type) -> np.ndarray:
    """A contiguous array of DTYPE (a compiled loop's argument type): A itself when it is one."""
    if a.dtype == dtype and a.flags.c_contiguous:
        return a
    return np.ascontiguousarray(a, dtype=dtype)


def _i64(a: np.ndarray) -> np.ndarray:
    """A writable contiguous int64 array (the compiled loops' argument type).  Called several
    times a window: the common case (it is one already) is told by its flags, not by
    np.require, which costs ten times as much."""
    if a.dtype == np.int64 and a.flags.c_contiguous and a.flags.writeable:
        return a
    return np.array(a, dtype=np.int64, order="C")
