"""One trace generation: its batches grouped by M and its tables.

Mirrors Go's generation.go: the strings, stacks, CPU samples and sync
(frequency + clock snapshot) batches are decoded up front; event batches are
only indexed (decoded lazily by the batch cursors).  Two readers exist, as in
Go: Go 1.26+ traces end each generation with an explicit EndOfGeneration
batch; older ones are split when the generation number changes, the first
batch of the next generation being "spilled" over.

The byte loops (table batches, and the batch headers of Go 1.26+
generations) are compiled (tables.py) and hand back arrays plus an error code;
Go's messages are formatted here, on the error path only.
"""

from __future__ import annotations

import numpy as np

from goblueprint.trace import kernels, spec
from goblueprint.trace.gosort import sort_func
from goblueprint.trace.kernels import table_codes as tables
from goblueprint.trace.wire import (
    EOF,
    OVERFLOW,
    UNEXPECTED_EOF,
    Batch,
    WireError,
    freq_from_hz,
    mul,
    read_batch,
    read_uvarint,
)

_U64 = 1 << 64
_INT64_MAX = (1 << 63) - 1


class EvTable:
    """Per-generation lookup tables (Go's evTable, including its sync data).

    Stacks are numpy arrays (built by the compiled loops of tables.py):
    ``stack_ids`` is every stack ID of the generation sorted, 0 included, and
    stack ``stack_ids[k]`` has the frames ``[stack_lo[k], stack_hi[k])`` of
    ``frame_pc`` / ``frame_func`` / ``frame_file`` / ``frame_line``.  The
    frame arrays are in file order and every frame carries the funcID, fileID
    and line of the first frame with its PC, as Go's pcs map keeps the first.
    ``string_ids`` is every string ID, sorted, 0 included.  ``stacks`` (ID ->
    tuple of PCs, in ID order) and ``pcs`` (PC -> (pc, funcID, fileID, line))
    are dict views of those arrays, built on first use: a reader that never
    looks at a stack never pays for them.
    """

    __slots__ = (
        "_pc_first",
        "_pcs",
        "_stack_chunks",
        "_stacks",
        "cpu_batch_offset",
        "exp_batches",
        "extra_string_ids",
        "extra_strings",
        "frame_file",
        "frame_func",
        "frame_line",
        "frame_pc",
        "freq",
        "has_clock_snapshot",
        "snap_mono",
        "snap_nsec",
        "snap_sec",
        "snap_time",
        "stack_hi",
        "stack_ids",
        "stack_lo",
        "stack_text",
        "string_ids",
        "strings",
    )

    def __init__(self) -> None:
        self.freq = 0.0
        self.has_clock_snapshot = False
        self.snap_time = 0
        self.snap_mono = 0
        self.snap_sec = 0
        self.snap_nsec = 0
        # ID 0 is always present and means "no string / no stack".
        self.strings: dict[int, str] = {0: ""}
        self.string_ids = np.zeros(1, np.uint64)
        self.stack_ids = np.zeros(1, np.uint64)
        self.stack_lo = np.zeros(1, np.int64)
        self.stack_hi = np.zeros(1, np.int64)
        self.frame_pc = self.frame_func = self.frame_file = self.frame_line = _NO_U64
        self._pc_first = _NO_I64  # index of the first frame of each PC
        self._stacks: dict[int, tuple[int, ...]] | None = None
        self._pcs: dict[int, tuple[int, int, int, int]] | None = None
        # The stacks batches read so far, as scan_stacks returned them (until _finish).
        self._stack_chunks: list[tuple] | None = []
        self.extra_strings: list[str] = []
        self.extra_string_ids: dict[str, int] = {}
        self.exp_batches: dict[int, list] = {}
        # File offset of the generation's first CPU samples batch: where a sample's bad
        # stack ID (which Go only notices when printing it) is reported.
        self.cpu_batch_offset: int | None = None
        # Printed stacks (Event.string), by (prefix, stack ID): stacks repeat a lot.
        self.stack_text: dict[tuple[str, int], str] = {}

    @property
    def stacks(self) -> dict[int, tuple[int, ...]]:
        """Stack ID -> its PCs (0 -> ()); built from the arrays on first use."""
        d = self._stacks
        if d is None:
            pcs = self.frame_pc.tolist()
            ids = self.stack_ids.tolist()
            d = {
                sid: tuple(pcs[lo:hi])
                for sid, lo, hi in zip(ids, self.stack_lo.tolist(), self.stack_hi.tolist(), strict=True)
            }
            self._stacks = d
        return d

    @property
    def pcs(self) -> dict[int, tuple[int, int, int, int]]:
        """PC -> (pc, funcID, fileID, line) of its first frame; built on first use."""
        d = self._pcs
        if d is None:
            first = self._pc_first  # in order of first appearance, as the dict used to be filled
            pcs = self.frame_pc[first].tolist()
            d = dict(
                zip(
                    pcs,
                    zip(
                        pcs,
                        self.frame_func[first].tolist(),
                        self.frame_file[first].tolist(),
                        self.frame_line[first].tolist(),
                        strict=True,
                    ),
                    strict=True,
                )
            )
            self._pcs = d
        return d

    def add_extra_string(self, s: str) -> int:
        if s == "":
            return 0
        i = self.extra_string_ids.get(s)
        if i is None:
            self.extra_strings.append(s)
            i = self.extra_string_ids[s] = len(self.extra_strings)
        return i

    def get_extra_string(self, i: int) -> str:
        return self.extra_strings[i - 1] if i else ""


_NO_U64 = np.zeros(0, np.uint64)
_NO_I64 = np.zeros(0, np.int64)


class Generation:
    __slots__ = ("batch_ms", "batches", "cpu_samples", "gen", "min_ts", "offset", "table")

    def __init__(self, offset: int) -> None:
        self.gen = 0
        self.batches: dict[int, list[Batch]] = {}
        self.batch_ms: list[int] = []  # Ms in order of first appearance
        self.cpu_samples: list[tuple[int, int, int, int, int]] = []  # (time, m, p, g, stack)
        self.min_ts = 0
        self.table = EvTable()
        self.offset = offset  # file offset of the first batch


def _stack_repr(pcs) -> str:
    # Go formats a stack with its String method: one "\t%#v\n" line per PC.
    return "".join(f"\t{pc:#x}\n" for pc in pcs)


def _as_u8(buf) -> np.ndarray:
    """A zero-copy, read-only uint8 view for the compiled loops (one type whatever the buffer)."""
    a = np.frombuffer(buf, dtype=np.uint8)
    a.flags.writeable = False
    return a


# Go's binary.ReadUvarint errors, by tables.V_* outcome.
_VARINT_MSG = {tables.V_EOF: EOF, tables.V_UNEXPECTED_EOF: UNEXPECTED_EOF, tables.V_OVERFLOW: OVERFLOW}
_FRAME_FIELDS = ("PC", "funcID", "fileID", "line")


def _decode(buf, start: int, end: int) -> str:
    # surrogateescape keeps arbitrary bytes (Go strings are bytes) and lets
    # the quoting reproduce Go's \x escapes for invalid UTF-8.
    return str(buf[start:end], "utf-8", "surrogateescape")


def _add_strings(g: Generation, buf, b: Batch) -> None:
    t = g.table
    ids, offs, ends, ascii, code, off, a, c, u, repeat, known = kernels.get().scan_strings(
        _as_u8(buf), b.start + 1, b.end, spec.MAX_EVENT_TRAILER_DATA_SIZE, spec.EV_STRING, t.string_ids
    )  # b.start + 1: skip the EvStrings byte
    strings = t.strings
    if repeat >= 0:
        # Go inserts as it reads: this string fails before anything after it.
        sid = int(ids[repeat])
        new = _decode(buf, int(offs[repeat]), int(ends[repeat]))
        existing = strings.get(sid)
        if existing is None:
            j = int(np.flatnonzero(ids[:repeat] == ids[repeat])[0])
            existing = _decode(buf, int(offs[j]), int(ends[j]))
        raise WireError(
            f"multiple strings with the same ID: id={sid}, new={new}, existing={existing}", int(ends[repeat])
        )
    if code != tables.E_NONE:
        off = int(off)
        if code == tables.E_EVENT:
            raise WireError(f"expected string event, got {a}", off)
        if code == tables.E_VARINT:
            raise WireError(_VARINT_MSG[c], off)
        if code == tables.E_SIZE:
            raise WireError(f"invalid string size {u}, maximum is {spec.MAX_EVENT_TRAILER_DATA_SIZE}", off)
        raise WireError(f"failed to read full string: read {a} but wanted {u}", off)
    if ascii:
        # The common case: one decode of the batch, then str slices (a quarter of
        # the cost of decoding each string).  Latin-1 maps the varint bytes
        # around the strings one to one, so positions stay byte offsets.
        base = b.start
        text = str(buf[base : b.end], "latin-1")
        new = [text[o:e] for o, e in zip((offs - base).tolist(), (ends - base).tolist(), strict=True)]
    else:
        new = [_decode(buf, o, e) for o, e in zip(offs.tolist(), ends.tolist(), strict=True)]
    strings.update(zip(ids.tolist(), new, strict=True))
    t.string_ids = known


def _add_stacks(g: Generation, buf, b: Batch) -> None:
    t = g.table
    chunk = kernels.get().scan_stacks(
        _as_u8(buf), b.start + 1, b.end, spec.MAX_FRAMES_PER_STACK, spec.EV_STACK, t.stack_ids
    )  # b.start + 1: skip the EvStacks byte
    ids, starts, ends, pcs, _funcs, _files, _lines, code, off, a, fld, c, u, repeat, known = chunk
    if repeat >= 0:
        sid = int(ids[repeat])
        new = pcs[starts[repeat] : starts[repeat + 1]].tolist()
        raise WireError(
            f"multiple trace.stacks with the same ID: id={sid}, new={_stack_repr(new)}, "
            f"existing={_stack_repr(_find_stack([*t._stack_chunks, chunk], sid))}",
            int(ends[repeat]),
        )
    if code != tables.E_NONE:
        off = int(off)
        if code == tables.E_EVENT:
            raise WireError(f"expected stack event, got {a}", off)
        if code == tables.E_VARINT:
            raise WireError(_VARINT_MSG[c], off)
        if code == tables.E_SIZE:
            raise WireError(f"invalid stack size {u}, maximum is {spec.MAX_FRAMES_PER_STACK}", off)
        raise WireError(f"reading frame {a}'s {_FRAME_FIELDS[fld]} for stack {u}: {_VARINT_MSG[c]}", off)
    t._stack_chunks.append(chunk)
    t.stack_ids = known


def _find_stack(chunks: list[tuple], sid: int) -> list[int]:
    """The PCs of the first stack with ID sid in the chunks ([] for ID 0: Go's zero stack)."""
    if sid == 0:
        return []
    for chunk in chunks:
        ids, starts, pcs = chunk[0], chunk[1], chunk[3]
        hit = np.flatnonzero(ids == np.uint64(sid))
        if hit.size:
            i = int(hit[0])
            return pcs[starts[i] : starts[i + 1]].tolist()
    return []


def _add_cpu_samples(g: Generation, buf, b: Batch) -> None:
    ts, ms, ps, gs, stks, code, off, a, c = kernels.get().scan_cpu_samples(
        _as_u8(buf), b.start + 1, b.end, spec.EV_CPU_SAMPLE
    )  # b.start + 1: skip the EvCPUSamples byte
    if code == tables.E_EVENT:
        raise WireError(f"expected CPU sample event, got {a}", int(off))
    if code == tables.E_VARINT:
        raise WireError(_VARINT_MSG[c], int(off))
    if g.table.cpu_batch_offset is None:
        g.table.cpu_batch_offset = b.offset
    # Raw timestamps for now: _finish converts them once the frequency is known.
    g.cpu_samples.extend(zip(ts.tolist(), ms.tolist(), ps.tolist(), gs.tolist(), stks.tolist(), strict=True))


def _set_sync(g: Generation, buf, b: Batch, version: int) -> None:
    t = g.table
    pos, end = b.start, b.end
    if version >= spec.GO125:
        pos += 1  # the EvSync byte
    last_ts = b.time
    while pos < end:
        ev = buf[pos]
        pos += 1
        if ev == spec.EV_FREQUENCY:
            if t.freq != 0:
                raise WireError("found multiple frequency events", pos - 1)
            f, pos = read_uvarint(buf, pos, end)
            t.freq = freq_from_hz(f)
        elif ev == spec.EV_CLOCK_SNAPSHOT and version >= spec.GO125:
            if t.has_clock_snapshot:
                raise WireError("found multiple clock snapshot events", pos - 1)
            t.has_clock_snapshot = True
            tdiff, pos = read_uvarint(buf, pos, end)
            last_ts = (last_ts + tdiff) % _U64
            t.snap_time = last_ts
            t.snap_mono, pos = read_uvarint(buf, pos, end)
            sec, pos = read_uvarint(buf, pos, end)
            nsec, pos = read_uvarint(buf, pos, end)
            # time.Unix(int64(sec), int64(nsec))
            t.snap_sec = sec - _U64 if sec > _INT64_MAX else sec
            t.snap_nsec = nsec - _U64 if nsec > _INT64_MAX else nsec
        else:
            raise WireError(f"expected frequency or clock snapshot event, got {ev}", pos - 1)


def process_batch(g: Generation, buf, b: Batch, version: int) -> None:
    """Go's processBatch: route a batch to its table or to its M's list."""
    first = b.first
    if b.exp == 0 and first == spec.EV_STRINGS:
        _add_strings(g, buf, b)
    elif b.exp == 0 and first == spec.EV_STACKS:
        _add_stacks(g, buf, b)
    elif b.exp == 0 and first == spec.EV_CPU_SAMPLES:
        _add_cpu_samples(g, buf, b)
    elif b.is_sync_batch(version):
        _set_sync(g, buf, b, version)
    elif b.exp != 0:
        from goblueprint.trace.events import ExperimentalBatch

        g.table.exp_batches.setdefault(b.exp, []).append(ExperimentalBatch(b.m, bytes(buf[b.start : b.end])))
    elif first == spec.EV_END_OF_GENERATION:
        raise WireError("internal error: unexpectedly processing EndOfGeneration; broken trace?", b.offset)
    else:
        lst = g.batches.get(b.m)
        if lst is None:
            g.batch_ms.append(b.m)
            g.batches[b.m] = [b]
        else:
            lst.append(b)


def _finish(g: Generation, version: int, check_snapshot: bool) -> None:
    t = g.table
    if t.freq == 0:
        raise WireError("no frequency event found", g.offset, g.gen)
    if check_snapshot and not t.has_clock_snapshot:
        raise WireError("no clock snapshot event found", g.offset, g.gen)
    _index_stacks(g)
    # Convert CPU sample timestamps and sort them by time (Go's fixUpCPUSamples).
    freq = t.freq
    samples = [(mul(freq, ts), m, p, gid, stk) for ts, m, p, gid, stk in g.cpu_samples]
    sort_func(samples, key=_sample_time)  # Go's unstable sort: ties end up where Go puts them
    g.cpu_samples = samples


def _index_stacks(g: Generation) -> None:
    """Lay out the generation's stacks (tables.finish_stacks) and run Go's validateStackStrings.

    Go also reports a stack PC missing from its pcs map ("found unknown pc"),
    which cannot happen here: every PC of a stack comes with its frame.
    """
    t = g.table
    chunks = t._stack_chunks or []
    if len(chunks) == 1:
        ids, starts, _, pcs, funcs, files, lines = chunks[0][:7]
    elif chunks:
        ids = np.concatenate([ch[0] for ch in chunks])
        base = np.cumsum([0] + [ch[3].shape[0] for ch in chunks])
        starts = np.concatenate([ch[1][:-1] + base[k] for k, ch in enumerate(chunks)] + [base[-1:]])
        pcs, funcs, files, lines = (np.concatenate([ch[k] for ch in chunks]) for k in (3, 4, 5, 6))
    else:
        ids, starts = _NO_U64, np.zeros(1, np.int64)
        pcs = funcs = files = lines = _NO_U64
    sids, lo, hi, funcs, files, lines, first, code, bad_stack, bad_id = kernels.get().finish_stacks(
        ids, starts, pcs, funcs, files, lines, t.string_ids
    )
    t._stack_chunks = None
    t.stack_ids, t.stack_lo, t.stack_hi = sids, lo, hi
    t.frame_pc, t.frame_func, t.frame_file, t.frame_line = pcs, funcs, files, lines
    t._pc_first = first
    t._stacks = t._pcs = None
    if code == tables.E_FUNC_ID:
        raise WireError(f"found invalid func string ID {bad_id} for stack {bad_stack}", g.offset, g.gen)
    if code == tables.E_FILE_ID:
        raise WireError(f"found invalid file string ID {bad_id} for stack {bad_stack}", g.offset, g.gen)


def _sample_time(s: tuple[int, int, int, int, int]) -> int:
    return s[0]


# Batch headers per compiled call (a generation of the 30 MB benchmark trace has about 13).
_BATCH_CHUNK = 256


def _batches(buf, pos: int, end: int, g: Generation):
    """(batch, gen, pos after it) as read_batch returns them, up to the end or an error.

    The headers of well-formed batches come from one compiled call per chunk;
    any batch the compiled loop does not take (a malformed one, whatever its
    fault) is read by read_batch itself, so errors and the EOF cases stay its
    own.  Errors get the generation read so far, as Go's reader reports them.
    """
    arr = _as_u8(buf)
    while True:
        recs, tss, gens, pos, stop = kernels.get().scan_batch_headers(
            arr,
            pos,
            end,
            _BATCH_CHUNK,
            spec.MAX_BATCH_SIZE,
            spec.EV_EVENT_BATCH,
            spec.EV_EXPERIMENTAL_BATCH,
            spec.EV_END_OF_GENERATION,
        )
        for (m, start, stop_at, exp, first, offset), ts, gen in zip(
            recs.tolist(), tss.tolist(), gens.tolist(), strict=True
        ):
            yield Batch(m, ts, start, stop_at, exp, first, offset), gen, stop_at
        if stop == tables.B_FULL or stop == tables.B_EOG:
            continue
        try:
            b, gen, pos = read_batch(buf, pos, end)  # B_END: (None, 0, pos); B_ASK: Go's error
        except WireError as err:
            err.gen = err.gen or g.gen or None
            raise
        yield b, gen, pos
        if b is None:
            return


def read_generation(buf, pos: int, end: int, version: int) -> tuple[Generation | None, int]:
    """Go 1.26+: read batches up to EndOfGeneration. Returns (generation or None at the end, new pos)."""
    g = Generation(pos)
    for b, gen, after in _batches(buf, pos, end, g):
        pos = after
        if b is None:
            if g.batches:
                raise WireError("incomplete generation found; trace likely truncated", pos, g.gen)
            return None, pos
        if g.gen == 0:
            g.gen = gen
        if b.first == spec.EV_END_OF_GENERATION and b.exp == 0:
            break
        if gen == 0:
            raise WireError(f"invalid generation number {gen}", b.offset)
        if gen != g.gen:
            raise WireError(
                "broken trace: missing end-of-generation event, or generations are interleaved", b.offset, gen
            )
        if g.min_ts == 0 or b.time < g.min_ts:
            g.min_ts = b.time
        try:
            process_batch(g, buf, b, version)
        except WireError as err:
            err.gen = g.gen
            raise
    _finish(g, version, True)
    return g, pos


def read_generation_with_spill(
    buf, pos: int, end: int, spill: tuple[int, Batch] | None, version: int
) -> tuple[Generation, tuple[int, Batch] | None, WireError | None, int]:
    """Go 1.22-1.25: read one generation, stopping at the first batch of the next.

    Returns (generation, spilled (gen, batch) or None, deferred error, new pos).
    A read error after at least one batch is deferred (the generation so far is
    still returned), as in Go.
    """
    g = Generation(pos)
    if spill is not None:
        g.gen = spill[0]
        g.min_ts = spill[1].time
        g.offset = spill[1].offset
        try:
            process_batch(g, buf, spill[1], version)
        except WireError as err:
            err.gen = g.gen
            raise
        spill = None
    spill_err = None
    while True:
        try:
            b, gen, pos = read_batch(buf, pos, end)
        except WireError as err:
            if g.gen != 0:
                spill_err = err
                break
            raise
        if b is None:
            break
        if gen == 0:
            raise WireError(f"invalid generation number {gen}", b.offset)
        if g.gen == 0:
            g.gen = gen
        if gen == g.gen + 1:
            spill = (gen, b)
            break
        if gen != g.gen:
            raise WireError("generations out of order", b.offset, gen)
        if g.min_ts == 0 or b.time < g.min_ts:
            g.min_ts = b.time
        try:
            process_batch(g, buf, b, version)
        except WireError as err:
            err.gen = g.gen
            raise
    _finish(g, version, version >= spec.GO125)
    return g, spill, spill_err, pos
