"""pprof-like profiles of goroutine states, as ``go tool trace -pprof=TYPE``.

Semantics follow cmd/trace/pprof.go of Go 1.27: for every goroutine, each stay
in the profiled state (runnable for ``sched``; waiting on chan/sync/select for
``sync``; waiting on "network" for ``net``; in a syscall for ``syscall``) is one
contention, attributed to the stack of the event that entered the state, and
its delay is the part of the stay that overlaps the goroutine's life
[StartTime, EndTime or trace end] from the summary.  Records are merged by the
PCs of their first 128 frames; the profile is built as
internal/trace/traceviewer.BuildProfile does (locations keyed by PC, functions
by file+name) and written as gzipped profile.proto with a small encoder.
"""

from __future__ import annotations

import gzip
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import polars as pl

from goblueprint.errors import TraceError
from goblueprint.timeline._api import G_RUNNABLE, G_SYSCALL, G_WAITING, K_STATE, R_GOROUTINE
from goblueprint.timeline.batches import batches_of
from goblueprint.timeline.model import frame as model_frame
from goblueprint.timeline.spill import ColumnSpill
from goblueprint.trace.events import StackFrame

if TYPE_CHECKING:
    from goblueprint.timeline.summary import Summary

PPROF_MAX_STACK = 128


def _sync_reason(reason: str) -> bool:
    return "chan" in reason or "sync" in reason or "select" in reason


# type -> (goroutine state profiled, which transition reasons start a stay)
PROFILE_TYPES: dict[str, tuple[int, Callable[[str], bool]]] = {
    "net": (G_WAITING, lambda reason: reason == "network"),
    "sync": (G_WAITING, _sync_reason),
    "syscall": (G_SYSCALL, lambda _reason: True),
    "sched": (G_RUNNABLE, lambda _reason: True),
}


class StayCollector:
    """Columnar consumer collecting the stays of the chosen profile types (stay_kernel).

    Its result, ``frame()`` (or ``pieces()``), names stacks by the pass Interner's stack ids.
    Given SPILL (a directory), each block of stays filled goes to column files there, a type
    each, and the pass holds one block: a large trace's stays (tens of millions, ~50 bytes
    each) held until the pass ended were most of its memory.
    """

    def __init__(self, types: Iterable[str], spill: Path | None = None) -> None:
        from goblueprint.timeline.slots import Slots
        from goblueprint.timeline.stay_codes import STAY, TRACK

        self.names = sorted({t: PROFILE_TYPES[t] for t in types})  # type index = name order
        self.type_state = np.array([PROFILE_TYPES[t][0] for t in self.names], np.int8)
        self.starts = np.zeros((len(self.names), 0), np.bool_)  # [type, reason string id]
        self.slots = Slots()
        self.track = np.zeros((len(self.names), 0), TRACK)
        self.out = np.zeros(0, STAY)
        self.n = 0
        self.full: list[np.ndarray] = []  # blocks of stays filled before OUT
        self.seq = 0  # events seen
        self.files: list[ColumnSpill] | None = None
        if spill is not None:
            fields = {f: self.out.dtype[f] for f in STAYS_SCHEMA if f != "type"}
            self.files = [ColumnSpill(spill, f"stays-{k}", fields) for k in range(len(self.names))]

    def _reasons(self, strings: list[str]) -> None:
        """Which reasons open a stay of each type: decided once per string."""
        have = self.starts.shape[1]
        if have == len(strings):
            return
        new = np.array(
            [[PROFILE_TYPES[t][1](s) for s in strings[have:]] for t in self.names], np.bool_
        ).reshape(len(self.names), -1)
        self.starts = np.concatenate([self.starts, new], axis=1)

    def columns(self, cols: dict[str, np.ndarray], interner: Any) -> None:
        from goblueprint.timeline.slots import grown
        from goblueprint.trace import kernels

        kind = cols["kind"]
        base = self.seq
        self.seq += len(kind)
        rows = np.flatnonzero((kind == K_STATE) & (cols["resource_kind"] == R_GOROUTINE))
        if not len(rows) or not self.names:
            return
        self._reasons(interner.strings)
        g = cols["resource_id"][rows]
        slot = self.slots.map(g)
        if self.track.shape[1] < self.slots.n:
            track = np.zeros((len(self.names), max(self.slots.n, 2 * self.track.shape[1])), self.track.dtype)
            track[:, : self.track.shape[1]] = self.track
            self.track = track
        args = (slot, g, cols["new_state"][rows], cols["reason"][rows], cols["time"][rows],
                cols["stack"][rows], rows + (base + 1), self.type_state, self.starts, self.track)  # fmt: skip
        collect_stays = kernels.get().collect_stays
        done = 0
        while done < len(rows):
            # Room for the stays of a few rows at least: grown (doubling) up to a block, then
            # a full block is kept and a new one begun (doubling one array copied it all,
            # again and again, on a large trace).
            if self.n + len(self.names) * 64 > len(self.out):
                if len(self.out) >= _STAY_BLOCK and self.files is not None:
                    self._spill()
                elif len(self.out) >= _STAY_BLOCK:
                    self.full.append(self.out[: self.n])
                    self.out, self.n = np.zeros(len(self.out), self.out.dtype), 0
                else:
                    self.out = grown(self.out, self.n + len(self.names) * 64)
            self.n, done = collect_stays(*args, self.out, self.n, done)

    def _spill(self) -> None:
        """The block's stays to the type's files; the block reused."""
        block = self.out[: self.n]
        types = block["type"]
        for k, spill in enumerate(self.files or ()):
            at = np.flatnonzero(types == k)
            if len(at):
                spill.append({f: block[f][at] for f in spill.dtypes})
        self.n = 0

    def pieces(self, rows: int, columns: Iterable[str] | None = None) -> Iterator[pl.DataFrame]:
        """A spilling collector's stays as STAYS_SCHEMA rows (only COLUMNS, given), types in
        name order, each in collection order, in pieces of at most ROWS rows read one at a
        time; read as often as wanted until ``remove()``."""
        if self.files is None:
            raise ValueError("StayCollector.pieces: for a collector that spills its stays")
        if self.n:
            self._spill()
        names = [n for n in STAYS_SCHEMA if columns is None or n in columns]
        for k, spill in enumerate(self.files):
            for lo, hi in spill.windows(rows):
                yield pl.DataFrame(
                    [
                        pl.repeat(self.names[k], hi - lo, eager=True, dtype=pl.String).alias(n)
                        if n == "type"
                        else pl.Series(n, spill.read(n, lo, hi), STAYS_SCHEMA[n], strict=False)
                        for n in names
                    ]
                )

    def remove(self) -> None:
        """A spilling collector's files removed."""
        for spill in self.files or ():
            spill.remove()

    def frame(self) -> pl.DataFrame:
        """The stays as STAYS_SCHEMA rows, types in name order, each in collection order; the
        collector lets go of its blocks (taken once).

        The blocks are split by type and field one at a time, each let go of once split: the
        blocks and the table's columns were held at once, the ingest's peak."""
        if self.files is not None:
            pieces = list(self.pieces(1 << 62))
            self.remove()
            return pl.concat(pieces) if pieces else pl.DataFrame(schema=STAYS_SCHEMA)
        blocks = [*self.full, self.out[: self.n]]
        self.full, self.out, self.n = [], np.zeros(0, self.out.dtype), 0
        fields = [name for name in STAYS_SCHEMA if name != "type"]
        parts: dict[str, list[list[np.ndarray]]] = {f: [[] for _ in self.names] for f in ("type", *fields)}
        while blocks:
            block = blocks.pop(0)
            types = block["type"]
            for k in range(len(self.names)):
                at = np.flatnonzero(types == k)
                for f, kept in parts.items():
                    kept[k].append(block[f][at])
            del block, types

        def field(name: str) -> np.ndarray:  # a field of every stay, types in order; its parts let go of
            kept = parts.pop(name)
            return np.concatenate(
                [p for per_type in kept for p in per_type] or [np.zeros(0, self.out.dtype[name])]
            )

        names = pl.Series("type", self.names, dtype=pl.String)
        type_column = names.gather(field("type").astype(np.int64))
        columns = {"type": type_column}
        for f in fields:
            columns[f] = pl.Series(f, field(f).astype(np.uint32) if f == "stack" else field(f))
        return pl.DataFrame(columns, schema=STAYS_SCHEMA)


# Stays collected into one block before the next is begun (6 MB).
_STAY_BLOCK = 1 << 17

# The stays of every profile type as one table: what ingest stores and every profile reads.
# ``stack`` is a stack id of the StayTables' stack_frames (StayCollector.frame() gives the pass
# Interner's ids; a pass that makes a Timeline maps them to its ids); ``end_seq`` the 1-based index of the
# event that ended the stay (a partial trace's profile drops stays past its last generation).
STAYS_SCHEMA = {
    "type": pl.String, "g": pl.Int64, "start": pl.Int64, "end": pl.Int64,
    "stack": pl.UInt32, "end_seq": pl.Int64,
}  # fmt: skip


@dataclass
class ProfileRecord:
    frames: list[Any]  # StackFrame(pc, func, file, line), leaf first
    count: int = 0
    time: int = 0


def records(
    stays: pl.DataFrame | Iterable[pl.DataFrame],
    goroutines: pl.DataFrame,
    stack_frames: pl.DataFrame,
    strings: list[str],
    trace_end: int,
    valid_events: int | None = None,
) -> list[ProfileRecord]:
    """Clip stays to goroutine lifetimes and merge them by stack PCs (Go's stackMap).

    STAYS are one profile type's rows of ``stays_frame``, as one frame or as batches of it in
    order (a stored table read a batch at a time: only per-stack totals are kept between
    batches); GOROUTINES has the summary's ``id``, ``start_time`` and ``end_time`` (the
    goroutines table); STACK_FRAMES and STRINGS are the Timeline's.  ``trace_end`` is the
    time of the last valid event; with ``valid_events`` set (a trace that broke part-way)
    stays ending after that event are dropped, as go tool trace profiles only the events up
    to the last complete generation.  Records come in the order their stacks' PCs were first
    seen, each with the frames of the last stay with those PCs (Go keeps the newest stack).
    """
    lives = _Lives(goroutines, trace_end)
    totals = _StackTotals()
    for batch in [stays] if isinstance(stays, pl.DataFrame) else stays:
        if valid_events is not None:
            batch = batch.filter(pl.col("end_seq") <= valid_events)
        totals.add(*lives.clip(batch))
    seen = np.flatnonzero(totals.count)
    if not len(seen):
        return []
    frames_of = _frames_by_stack(stack_frames, strings, set(seen.tolist()))
    key_of: dict[tuple[int, ...], int] = {}
    key = np.empty(len(seen), np.int64)
    for i, sid in enumerate(seen.tolist()):
        pcs = [f.pc for f in frames_of[sid]]
        while pcs and pcs[-1] == 0:
            # Go keys on a zero-padded [128]uint64: trailing PC-0 frames merge with shorter stacks.
            pcs.pop()
        key[i] = key_of.setdefault(tuple(pcs), len(key_of))
    by_stack = pl.DataFrame(
        {
            "_key": key, "count": totals.count[seen], "time": totals.time[seen],
            "_first": totals.first[seen], "_last": totals.last[seen], "stack": seen,
        }
    )  # fmt: skip
    merged = (
        by_stack.group_by("_key")
        .agg(
            pl.col("_first").min(),
            pl.col("count").sum(),
            pl.col("time").sum(),
            pl.col("stack").sort_by("_last").last(),
        )
        .sort("_first")
    )
    return [
        ProfileRecord(frames_of[sid], count, time)
        for sid, count, time in zip(merged["stack"], merged["count"], merged["time"], strict=True)
    ]


class _Lives:
    """Each goroutine's life [start, end or trace end], looked up by id for a batch of stays."""

    def __init__(self, goroutines: pl.DataFrame, trace_end: int) -> None:
        g = goroutines.select(
            pl.col("id"),
            pl.col("start_time").fill_null(0).alias("lo"),
            # A goroutine still alive at the end lives until the end of the trace.
            pl.when(pl.col("end_time").fill_null(0) != 0)
            .then(pl.col("end_time"))
            .otherwise(trace_end)
            .alias("hi"),
        ).sort("id")
        self.ids = g["id"].to_numpy()
        self.lo = g["lo"].to_numpy()
        self.hi = g["hi"].to_numpy()
        self.rows = 0  # stays seen so far: a stay's place in the whole table

    def clip(self, stays: pl.DataFrame) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The stack, the time within its goroutine's life and the place of every stay of
        the batch that overlaps that life (a stay of no summarised goroutine has none)."""
        row = np.arange(self.rows, self.rows + stays.height, dtype=np.int64)
        self.rows += stays.height
        g = stays["g"].to_numpy()
        at = np.minimum(np.searchsorted(self.ids, g), max(len(self.ids) - 1, 0))
        known = self.ids[at] == g if len(self.ids) else np.zeros(len(g), np.bool_)
        at, row = at[known], row[known]
        start, end = stays["start"].to_numpy()[known], stays["end"].to_numpy()[known]
        overlap = np.minimum(self.hi[at], end) - np.maximum(self.lo[at], start)
        keep = overlap > 0
        return stays["stack"].to_numpy()[known][keep], overlap[keep], row[keep]


class _StackTotals:
    """Per stack id: its stays, their time, and the place of its first and last stay."""

    def __init__(self) -> None:
        self.count = np.zeros(0, np.int64)
        self.time = np.zeros(0, np.int64)
        self.first = np.zeros(0, np.int64)
        self.last = np.zeros(0, np.int64)

    def add(self, stack: np.ndarray, time: np.ndarray, row: np.ndarray) -> None:
        if not len(stack):
            return
        n = int(stack.max()) + 1
        if n > len(self.count):  # sized by the stack ids seen, not the stack table
            grow = n - len(self.count)
            self.count = np.concatenate([self.count, np.zeros(grow, np.int64)])
            self.time = np.concatenate([self.time, np.zeros(grow, np.int64)])
            self.first = np.concatenate([self.first, np.full(grow, np.iinfo(np.int64).max)])
            self.last = np.concatenate([self.last, np.full(grow, -1, np.int64)])
        stack = stack.astype(np.intp)
        self.count += np.bincount(stack, minlength=len(self.count))
        np.add.at(self.time, stack, time)  # exact int64 sums (bincount's weights are floats)
        np.minimum.at(self.first, stack, row)
        np.maximum.at(self.last, stack, row)


# What records() reads of a type's stays.
_STAY_COLUMNS = ("g", "start", "end", "stack", "end_seq")


@dataclass
class StayTables:
    """What a profile of any type is made from: the stays, the goroutines' lives, the stacks.

    Made by the one pass (``analyse``, the ingest) or read back from an ingested trace.
    """

    # STAYS_SCHEMA rows; a scan of the stored table (LazyFrame), read a batch of a type at a time
    stays: pl.DataFrame | pl.LazyFrame
    goroutines: pl.DataFrame  # id, start_time, end_time (0: never exited), as the goroutines table
    stack_frames: pl.DataFrame  # the Timeline's
    strings: list[str]
    trace_end: int  # time of the last valid event
    valid_events: int | None  # events of the complete generations, if the trace broke

    @classmethod
    def of_pass(
        cls,
        stays: pl.DataFrame,
        summary: Summary,
        stack_frames: pl.DataFrame,
        strings: list[str],
        result: Any,
    ) -> StayTables:
        """From one pass: its stays table, Summary, the stacks the stays name (a Timeline's
        stack_frames and strings, or interned_stack_frames') and PassResult."""
        return cls(
            stays,
            lives_frame(summary),
            stack_frames,
            strings,
            result.valid_last_time,
            result.valid_events if result.error is not None else None,
        )

    def records(self, typ: str) -> list[ProfileRecord]:
        return records(
            batches_of(self.stays, where=pl.col("type") == typ, columns=_STAY_COLUMNS),
            self.goroutines,
            self.stack_frames,
            self.strings,
            self.trace_end,
            self.valid_events,
        )


def lives_frame(summary: Summary) -> pl.DataFrame:
    """Each summarised goroutine's id, start and end time (by id, as the goroutines table)."""
    gs = [summary.goroutines[gid] for gid in sorted(summary.goroutines)]
    return pl.DataFrame(
        {
            "id": [g.id for g in gs],
            "start_time": [g.start_time for g in gs],
            "end_time": [g.end_time or 0 for g in gs],
        },
        schema={"id": pl.Int64, "start_time": pl.Int64, "end_time": pl.Int64},
    )


def interned_stack_frames(
    stacks: list[tuple[StackFrame, ...]], ids: Iterable[int]
) -> tuple[pl.DataFrame, list[str]]:
    """The stacks IDS of a pass Interner as a Timeline's ``stack_frames`` (ids kept) and its strings:
    what the stays name when no Timeline is made."""
    strings: dict[str, int] = {}
    cols: dict[str, list[int]] = {k: [] for k in ("stack", "depth", "pc", "func", "file", "line")}
    for sid in sorted(set(ids) - {0}):
        for depth, f in enumerate(stacks[sid]):
            cols["stack"].append(sid)
            cols["depth"].append(depth)
            cols["pc"].append(f.pc)
            cols["func"].append(strings.setdefault(f.func, len(strings)))
            cols["file"].append(strings.setdefault(f.file, len(strings)))
            cols["line"].append(f.line)
    return model_frame("stack_frames", cols), list(strings)


def _frames_by_stack(
    stack_frames: pl.DataFrame, strings: list[str], wanted: set[int]
) -> dict[int, list[StackFrame]]:
    """The first PPROF_MAX_STACK frames (leaf first) of each WANTED stack id; id 0 has none."""
    rows = stack_frames.filter(pl.col("stack").is_in(wanted) & (pl.col("depth") < PPROF_MAX_STACK)).sort(
        ["stack", "depth"]
    )
    out: dict[int, list[StackFrame]] = {sid: [] for sid in wanted}
    for sid, pc, func, file, line in zip(
        rows["stack"], rows["pc"], rows["func"], rows["file"], rows["line"], strict=True
    ):
        out[sid].append(StackFrame(pc, strings[func], strings[file], line))
    return out


# --- profile.proto -------------------------------------------------------------------------------


def _varint(out: bytearray, value: int) -> None:
    value &= (1 << 64) - 1  # int64 fields are encoded as their two's complement
    while value >= 0x80:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)


def _key(out: bytearray, field_no: int, wire: int) -> None:
    _varint(out, field_no << 3 | wire)


def _int_field(out: bytearray, field_no: int, value: int) -> None:
    if value:
        _key(out, field_no, 0)
        _varint(out, value)


def _bytes_field(out: bytearray, field_no: int, data: bytes) -> None:
    _key(out, field_no, 2)
    _varint(out, len(data))
    out += data


def _packed(out: bytearray, field_no: int, values: list[int]) -> None:
    if not values:
        return
    body = bytearray()
    for v in values:
        _varint(body, v)
    _bytes_field(out, field_no, bytes(body))


@dataclass
class Profile:
    """A decoded/encodable subset of profile.proto: what trace profiles use."""

    sample_types: list[tuple[str, str]] = field(default_factory=list)
    samples: list[tuple[list[int], list[int]]] = field(default_factory=list)  # (location ids, values)
    locations: dict[int, tuple[int, list[tuple[int, int]]]] = field(
        default_factory=dict
    )  # id -> (address, [(function id, line)])
    functions: dict[int, tuple[str, str, str]] = field(
        default_factory=dict
    )  # id -> (name, system name, file)
    period_type: tuple[str, str] = ("", "")
    period: int = 0

    def stacks(self) -> list[tuple[tuple[str, ...], tuple[int, ...]]]:
        """Each sample as (function names leaf first, values): for comparing profiles."""
        out = []
        for locs, values in self.samples:
            names = []
            for loc in locs:
                for fid, _line in self.locations[loc][1]:
                    names.append(self.functions[fid][0])
            out.append((tuple(names), tuple(values)))
        return out


def build_profile(recs: list[ProfileRecord]) -> Profile:
    """traceviewer.BuildProfile: two sample values (contentions count, delay ns)."""
    prof = Profile(
        sample_types=[("contentions", "count"), ("delay", "nanoseconds")],
        period_type=("trace", "count"),
        period=1,
    )
    locs: dict[int, int] = {}
    funcs: dict[str, int] = {}
    for rec in recs:
        sloc = []
        for frame in rec.frames:
            loc = locs.get(frame.pc)
            if loc is None:
                fkey = frame.file + frame.func
                fid = funcs.get(fkey)
                if fid is None:
                    fid = funcs[fkey] = len(prof.functions) + 1
                    prof.functions[fid] = (frame.func, frame.func, frame.file)
                loc = locs[frame.pc] = len(prof.locations) + 1
                prof.locations[loc] = (frame.pc, [(fid, int(frame.line))])
            sloc.append(loc)
        prof.samples.append((sloc, [rec.count, rec.time]))
    return prof


def encode(prof: Profile) -> bytes:
    """profile.proto bytes (not gzipped), field order as Go's internal/profile."""
    strings: dict[str, int] = {"": 0}

    def sid(s: str) -> int:
        idx = strings.get(s)
        if idx is None:
            idx = strings[s] = len(strings)
        return idx

    out = bytearray()
    for typ, unit in prof.sample_types:
        body = bytearray()
        _int_field(body, 1, sid(typ))
        _int_field(body, 2, sid(unit))
        _bytes_field(out, 1, bytes(body))
    for locs, values in prof.samples:
        body = bytearray()
        _packed(body, 1, locs)
        _packed(body, 2, values)
        _bytes_field(out, 2, bytes(body))
    for lid, (address, lines) in prof.locations.items():
        body = bytearray()
        _int_field(body, 1, lid)
        _int_field(body, 3, address)
        for fid, line in lines:
            lb = bytearray()
            _int_field(lb, 1, fid)
            _int_field(lb, 2, line)
            _bytes_field(body, 4, bytes(lb))
        _bytes_field(out, 4, bytes(body))
    for fid, (name, system_name, filename) in prof.functions.items():
        body = bytearray()
        _int_field(body, 1, fid)
        _int_field(body, 2, sid(name))
        _int_field(body, 3, sid(system_name))
        _int_field(body, 4, sid(filename))
        _bytes_field(out, 5, bytes(body))
    period_type = (sid(prof.period_type[0]), sid(prof.period_type[1]))
    for s in strings:  # dict order is insertion order: index order
        _bytes_field(out, 6, s.encode())
    if period_type != (0, 0):
        body = bytearray()
        _int_field(body, 1, period_type[0])
        _int_field(body, 2, period_type[1])
        _bytes_field(out, 11, bytes(body))
    _int_field(out, 12, prof.period)
    return bytes(out)


def write_gzip(prof: Profile) -> bytes:
    # mtime=0 keeps the output byte-for-byte deterministic.
    return gzip.compress(encode(prof), mtime=0)


# --- decoding (for tests and for reading Go's profiles) -------------------------------------------


def _read_varint(data: bytes, pos: int) -> tuple[int, int]:
    result = 0
    shift = 0
    while True:
        if pos >= len(data):
            raise TraceError("truncated varint in profile")
        b = data[pos]
        pos += 1
        result |= (b & 0x7F) << shift
        if b < 0x80:
            return result, pos
        shift += 7
        if shift > 63:
            raise TraceError("varint too long in profile")


def _fields(data: bytes) -> list[tuple[int, int, Any]]:
    out = []
    pos = 0
    while pos < len(data):
        key, pos = _read_varint(data, pos)
        field_no, wire = key >> 3, key & 7
        if wire == 0:
            value, pos = _read_varint(data, pos)
        elif wire == 2:
            n, pos = _read_varint(data, pos)
            if pos + n > len(data):
                raise TraceError("truncated field in profile")
            value = data[pos : pos + n]
            pos += n
        elif wire == 1:
            value = int.from_bytes(data[pos : pos + 8], "little")
            pos += 8
        elif wire == 5:
            value = int.from_bytes(data[pos : pos + 4], "little")
            pos += 4
        else:
            raise TraceError(f"bad wire type {wire} in profile")
        out.append((field_no, wire, value))
    return out


def _ints(wire: int, value: Any) -> list[int]:
    if wire == 0:
        return [value]
    vals = []
    pos = 0
    while pos < len(value):
        v, pos = _read_varint(value, pos)
        vals.append(v)
    return vals


def _signed(v: int) -> int:
    return v - (1 << 64) if v >= 1 << 63 else v


def decode(data: bytes) -> Profile:
    """Parse profile.proto bytes, gzipped or not."""
    if data[:2] == b"\x1f\x8b":
        try:
            data = gzip.decompress(data)
        except (OSError, EOFError) as exc:
            raise TraceError(f"bad gzip in profile: {exc}") from exc
    strings: list[str] = []
    raw_types: list[tuple[int, int]] = []
    raw_functions: dict[int, tuple[int, int, int]] = {}
    prof = Profile()
    raw_period_type = (0, 0)
    for field_no, _wire, value in _fields(data):
        if field_no == 1:
            f = {n: v for n, _w, v in _fields(value)}
            raw_types.append((f.get(1, 0), f.get(2, 0)))
        elif field_no == 2:
            locs: list[int] = []
            values: list[int] = []
            for n, w, v in _fields(value):
                if n == 1:
                    locs += _ints(w, v)
                elif n == 2:
                    values += [_signed(x) for x in _ints(w, v)]
            prof.samples.append((locs, values))
        elif field_no == 4:
            lid = address = 0
            lines = []
            for n, _w, v in _fields(value):
                if n == 1:
                    lid = v
                elif n == 3:
                    address = v
                elif n == 4:
                    lf = {a: b for a, _x, b in _fields(v)}
                    lines.append((lf.get(1, 0), _signed(lf.get(2, 0))))
            prof.locations[lid] = (address, lines)
        elif field_no == 5:
            f = {n: v for n, _w, v in _fields(value)}
            raw_functions[f.get(1, 0)] = (f.get(2, 0), f.get(3, 0), f.get(4, 0))
        elif field_no == 6:
            strings.append(bytes(value).decode("utf-8", "replace"))
        elif field_no == 11:
            f = {n: v for n, _w, v in _fields(value)}
            raw_period_type = (f.get(1, 0), f.get(2, 0))
        elif field_no == 12:
            prof.period = _signed(value)

    if not strings:
        strings.append("")

    def s(i: int) -> str:
        if i >= len(strings):
            raise TraceError(f"string index {i} out of range in profile")
        return strings[i]

    prof.sample_types = [(s(a), s(b)) for a, b in raw_types]
    prof.functions = {fid: (s(a), s(b), s(c)) for fid, (a, b, c) in raw_functions.items()}
    prof.period_type = (s(raw_period_type[0]), s(raw_period_type[1]))
    return prof
