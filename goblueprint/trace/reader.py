"""The trace Reader: yields Events in exactly the order Go's trace.Reader does.

Algorithm (Go's reader.go): read one generation's batches and tables, then let
the compiled engine (engine.py) order that generation's events: per-M cursors
in a min-heap by time, the scheduler-state checks of Go's order.go, CPU samples
injected by time, timestamps forced strictly increasing.  A Sync event starts
each generation and one ends the trace.

Streaming: one generation's batches and tables are held at a time, and its
events are ordered CHUNK_EVENTS at a time.  ``chunks()`` hands them over as
numpy columns (what counting and columnar stores
want); iterating the Reader turns those columns into ``Event`` objects.
"""

from __future__ import annotations

import mmap
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from goblueprint.errors import PathError, TraceError
from goblueprint.trace import spec
from goblueprint.trace.events import EV_SYNC_EVENT, Event
from goblueprint.trace.generation import EvTable, Generation, read_generation, read_generation_with_spill
from goblueprint.trace.kernels import codes as E
from goblueprint.trace.messages import engine_error, failed_to_advance
from goblueprint.trace.ordering import EngineState
from goblueprint.trace.wire import EOF, WireError, mul, read_header

_PAGE = mmap.PAGESIZE
# Events per chunk: the engine orders a generation this many events at a time, so a
# generation's events are never all in memory (2.4 MB of columns per chunk).
CHUNK_EVENTS = 1 << 15


@dataclass(slots=True)
class Chunk:
    """Consecutive events of one generation as columns (in the reader's order).

    ``typ`` is the wire type (255 for Sync), ``args`` Go's raw uint64 arguments
    including what the ordering smuggles in (old states, task info).
    """

    table: EvTable | None
    typ: np.ndarray  # uint8
    ts: np.ndarray  # int64, ns
    g: np.ndarray  # int64, -1 = none
    p: np.ndarray
    m: np.ndarray
    args: np.ndarray  # uint64, shape (n, 4)

    def __len__(self) -> int:
        return len(self.typ)

    def events(self) -> Iterator[Event]:
        table = self.table
        for g, p, m, typ, ts, args in zip(
            self.g.tolist(),
            self.p.tolist(),
            self.m.tolist(),
            self.typ.tolist(),
            self.ts.tolist(),
            self.args.tolist(),
            strict=True,
        ):
            yield Event(table, g, p, m, typ, ts, args)


def _sync_chunk(table: EvTable | None, ts: int, syncs: int) -> Chunk:
    one = np.full(1, -1, dtype=np.int64)
    args = np.zeros((1, 4), dtype=np.uint64)
    args[0, 0] = syncs
    return Chunk(table, np.full(1, EV_SYNC_EVENT, np.uint8), np.full(1, ts, np.int64), one, one, one, args)


class Reader:
    """Iterate over the events of a Go 1.22+ execution trace, as Go's trace.Reader.

    ``Reader(data)`` parses the header at once (raising TraceError or
    UnsupportedTraceVersion); iterating yields Events and raises TraceError
    after the events Go would have produced before failing.

    ``partial=True`` is how a command uses a trace that breaks part-way: the
    iteration ends quietly after the events Go would have produced, and the
    TraceError is kept in ``error`` (``events_read`` counts what came before it).
    A trace that breaks before any event but the opening Sync has nothing to use:
    its error is raised as without ``partial``.
    """

    def __init__(self, data: bytes | bytearray | memoryview | mmap.mmap, *, partial: bool = False) -> None:
        self._buf = data
        self._end = len(data)
        self.version, self._pos = read_header(data)
        self.partial = partial
        self.error: TraceError | None = None
        self.events_read = 0

    def __iter__(self) -> Iterator[Event]:
        return self._events()

    def close(self) -> None:
        """Release the file mapping of open_trace (a no-op for in-memory data)."""
        buf = self._buf
        if isinstance(buf, mmap.mmap) and not buf.closed:
            try:
                buf.close()
            except BufferError:
                pass  # a live iterator still reads it; the mapping goes when that does

    def __enter__(self) -> Reader:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def chunks(self) -> Iterator[Chunk]:
        """The events as column chunks: per generation its Sync, then its events.

        Raises TraceError (offset, generation, M) after the chunks Go would have
        produced before failing, exactly where iterating Events would (or, with
        ``partial``, stops there and keeps the error).
        """
        return self._until_error(self._chunks()) if self.partial else self._chunks()

    def _until_error(self, chunks: Iterator[Chunk]) -> Iterator[Chunk]:
        syncs = 0
        try:
            for chunk in chunks:
                self.events_read += len(chunk)
                if len(chunk) == 1 and chunk.typ[0] == EV_SYNC_EVENT:
                    syncs += 1
                yield chunk
        except TraceError as exc:
            if self.events_read == syncs:
                raise
            self.error = exc

    def _chunks(self) -> Iterator[Chunk]:
        raw = self._buf
        mapped = raw if isinstance(raw, mmap.mmap) else None
        # A view pins the mapping: close() during iteration then leaves it alone.
        buf = memoryview(raw) if mapped is not None else raw
        dbuf = np.frombuffer(buf, dtype=np.uint8) if len(buf) else np.zeros(0, np.uint8)
        dbuf.flags.writeable = False  # one array type for the compiled loops, whatever the buffer
        end = self._end
        version = self.version
        state = EngineState()
        strings: list[str] = [""]  # global string table: task and region names compare by text
        string_ids: dict[str, int] = {"": 0}
        pos = self._pos
        syncs = 0
        gen: Generation | None = None
        spill = None
        spill_err: WireError | None = None
        pending_err: TraceError | None = None
        gen_no: int | None = None
        dropped = 0

        def fail(msg: str, offset: int | None = None, m: int | None = None) -> TraceError:
            return TraceError(msg, offset=offset, generation=gen_no, m=m)

        while True:
            if pending_err is not None:
                if pending_err.message == EOF:
                    # Go hands back a bare io.EOF here (e.g. a sync or table batch cut
                    # short), which every ReadEvent caller takes for the end of the trace.
                    return
                raise pending_err
            new_gen = None
            done = False
            if version < spec.GO126:
                if spill_err is not None:
                    # Sync first, then the error (Go's spillErrSync).
                    pending_err = fail(spill_err.message, spill_err.offset)
                elif gen is not None and spill is None:
                    done = True
                else:
                    try:
                        new_gen, spill, spill_err, pos = read_generation_with_spill(
                            buf, pos, end, spill, version
                        )
                    except WireError as err:
                        gen_no = err.gen or gen_no
                        pending_err = fail(err.message, err.offset)
            else:
                try:
                    new_gen, pos = read_generation(buf, pos, end, version)
                except WireError as err:
                    gen_no = err.gen or gen_no
                    pending_err = fail(err.message, err.offset)
                if new_gen is None and pending_err is None:
                    done = True
            syncs += 1
            last_ts = int(state.sc[E.SC_LAST_TS])
            if new_gen is None:
                gen = None
                ts = last_ts + 1  # the final Sync is stamped lastTs, then forced past it
                state.sc[E.SC_LAST_TS] = ts
                yield _sync_chunk(None, ts, syncs)
                if done:
                    return
                continue
            gen = new_gen
            gen_no = gen.gen
            table = gen.table
            freq = table.freq
            sync_ts = mul(freq, gen.min_ts)
            if sync_ts <= last_ts:
                sync_ts = last_ts + 1
            state.sc[E.SC_LAST_TS] = sync_ts
            state.begin((dbuf, *_engine_inputs(gen, strings, string_ids)))
            synced = False
            while True:
                out, errinfo, front, finished = state.step(CHUNK_EVENTS)
                code, err_off, err_m, _, at_start = (int(x) for x in errinfo)
                if code and at_start:
                    # A cursor that fails on its first event fails before the generation's Sync.
                    raise fail(engine_error(code, state.ep, version, strings.__getitem__), err_off, err_m)
                if not synced:
                    synced = True
                    yield _sync_chunk(table, sync_ts, syncs)
                if out.shape[1]:
                    yield _chunk(table, out, strings)
                if code:
                    if code == E.E_FAILED_TO_ADVANCE:
                        msg = failed_to_advance(gen.gen, front, state)
                    else:
                        msg = engine_error(code, state.ep, version, strings.__getitem__)
                    raise fail(msg, err_off, err_m)
                if finished:
                    break
            state.compact()
            if mapped is not None and pos - dropped >= (4 << 20):
                # Give the pages of finished generations back: RSS stays bounded by
                # a generation, not by the file (the mapping re-reads them if needed).
                keep = min([pos, *(b.offset for b in _spilled(spill))]) // _PAGE * _PAGE
                if keep > dropped:
                    mapped.madvise(mmap.MADV_DONTNEED, 0, keep)
                    dropped = keep

    def _events(self) -> Iterator[Event]:
        for chunk in self.chunks():
            yield from chunk.events()


def _chunk(table: EvTable, out: np.ndarray, strings: list[str]) -> Chunk:
    """A Chunk of the engine's output (rows: type, time, g, p, m, then the 4 args)."""
    typ = out[0].astype(np.uint8)
    args = out[5:9].T.view(np.uint64)
    ends = np.flatnonzero(typ == spec.EV_USER_TASK_END)
    if len(ends):
        # The engine names an ended task by its global string id; Go's API
        # keeps it as an extra string of the generation's table.
        for i in ends.tolist():
            args[i, 3] = table.add_extra_string(strings[int(args[i, 3])])
    return Chunk(table, typ, out[1], out[2], out[3], out[4], args)


def _spilled(spill) -> list:
    return [spill[1]] if spill is not None else []


def _engine_inputs(gen: Generation, strings: list[str], string_ids: dict[str, int]) -> tuple:
    """The generation as run_step takes it (after the trace bytes); names interned."""
    table = gen.table
    freq = table.freq
    ms = gen.batch_ms
    counts = [0]
    starts: list[int] = []
    ends: list[int] = []
    bases: list[int] = []
    for m in ms:
        for b in gen.batches[m]:
            starts.append(b.start)
            ends.append(b.end)
            bases.append(mul(freq, b.time))
        counts.append(len(starts))
    # The engine binary-searches int64 views of Go's uint64 IDs: sort in that order.
    stack_arr = np.sort(table.stack_ids.view(np.int64))
    str_arr = np.sort(table.string_ids.view(np.int64))
    gids = []
    for sid in str_arr.view(np.uint64).tolist():
        text = table.strings[sid]
        gid = string_ids.get(text)
        if gid is None:
            gid = string_ids[text] = len(strings)
            strings.append(text)
        gids.append(gid)
    stk_dense = _dense_ids(stack_arr, np.ones(len(stack_arr), dtype=np.int64)) > 0
    str_dense = _dense_ids(str_arr, np.array(gids, dtype=np.int64))
    cpu = gen.cpu_samples
    if cpu:
        ct, cm, cp, cg, cs = zip(*cpu, strict=True)
        cpu_cols = (
            np.array(ct, dtype=np.int64),
            np.array(cm, dtype=np.int64),
            np.array(cp, dtype=np.int64),
            np.array(cg, dtype=np.int64),
            np.array([int(x) & ((1 << 64) - 1) for x in cs], dtype=np.uint64).view(np.int64),
        )
    else:
        z = np.zeros(0, dtype=np.int64)
        cpu_cols = (z, z, z, z, z)
    return (
        gen.gen,
        freq,
        np.array([int(m) for m in ms], dtype=np.int64),
        np.array(counts, dtype=np.int64),
        np.array(starts, dtype=np.int64),
        np.array(ends, dtype=np.int64),
        np.array(bases, dtype=np.int64),
        stack_arr,
        str_arr,
        np.array(gids, dtype=np.int64),
        stk_dense,
        str_dense,
        *cpu_cols,
    )


def _dense_ids(ids: np.ndarray, vals: np.ndarray) -> np.ndarray:
    """Sorted IDs as a direct-index table id -> val (-1 = absent) when they are small
    and dense, as the runtime writes them; otherwise empty (the engine binary-searches)."""
    n = len(ids)
    if n == 0 or ids[0] < 0 or ids[-1] > 4 * n + 4096:
        return np.empty(0, dtype=np.int64)
    t = np.full(int(ids[-1]) + 1, -1, dtype=np.int64)
    t[ids] = vals
    return t


def open_trace(path: str | Path, *, partial: bool = False) -> Reader:
    """A Reader over a trace file, memory-mapped (the mapping lives as long as the Reader)."""
    p = Path(path)
    try:
        with open(p, "rb") as f:
            size = f.seek(0, 2)
            if size == 0:
                data: bytes | mmap.mmap = b""
            else:
                data = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
    except OSError as err:
        raise PathError.from_os(p, err) from None
    return Reader(data, partial=partial)
