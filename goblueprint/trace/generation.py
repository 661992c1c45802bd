"""One trace generation: its batches grouped by M and its tables.

Mirrors Go's generation.go: the strings, stacks, CPU samples and sync
(frequency + clock snapshot) batches are decoded up front; event batches are
only indexed (decoded lazily by the batch cursors).  Two readers exist, as in
Go: Go 1.26+ traces end each generation with an explicit EndOfGeneration
batch; older ones are split when the generation number changes, the first
batch of the next generation being "spilled" over.
"""

from __future__ import annotations

from goblueprint.trace import spec
from goblueprint.trace.gosort import sort_func
from goblueprint.trace.wire import (
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
    """Per-generation lookup tables (Go's evTable, including its sync data)."""

    __slots__ = (
        "exp_batches",
        "extra_string_ids",
        "extra_strings",
        "freq",
        "has_clock_snapshot",
        "pcs",
        "snap_mono",
        "snap_nsec",
        "snap_sec",
        "snap_time",
        "stack_text",
        "stacks",
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
        self.stacks: dict[int, tuple[int, ...]] = {0: ()}
        self.pcs: dict[int, tuple[int, int, int, int]] = {}  # pc -> (pc, funcID, fileID, line)
        self.extra_strings: list[str] = []
        self.extra_string_ids: dict[str, int] = {}
        self.exp_batches: dict[int, list] = {}
        # Printed stacks (Event.string), by (prefix, stack ID): stacks repeat a lot.
        self.stack_text: dict[tuple[str, int], str] = {}

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


def _add_strings(g: Generation, buf, b: Batch) -> None:
    strings = g.table.strings
    pos, end = b.start + 1, b.end  # skip the EvStrings byte
    while pos < end:
        ev = buf[pos]
        pos += 1
        if ev != spec.EV_STRING:
            raise WireError(f"expected string event, got {ev}", pos - 1)
        sid, pos = read_uvarint(buf, pos, end)
        n, pos = read_uvarint(buf, pos, end)
        if n > spec.MAX_EVENT_TRAILER_DATA_SIZE:
            raise WireError(f"invalid string size {n}, maximum is {spec.MAX_EVENT_TRAILER_DATA_SIZE}", pos)
        if pos + n > end:
            raise WireError(f"failed to read full string: read {end - pos} but wanted {n}", pos)
        # surrogateescape keeps arbitrary bytes (Go strings are bytes) and lets
        # the quoting reproduce Go's \x escapes for invalid UTF-8.
        s = bytes(buf[pos : pos + n]).decode("utf-8", "surrogateescape")
        pos += n
        if sid in strings:
            raise WireError(
                f"multiple strings with the same ID: id={sid}, new={s}, existing={strings[sid]}", pos
            )
        strings[sid] = s


def _add_stacks(g: Generation, buf, b: Batch) -> None:
    stacks = g.table.stacks
    pcs = g.table.pcs
    pos, end = b.start + 1, b.end  # skip the EvStacks byte
    while pos < end:
        ev = buf[pos]
        pos += 1
        if ev != spec.EV_STACK:
            raise WireError(f"expected stack event, got {ev}", pos - 1)
        sid, pos = read_uvarint(buf, pos, end)
        nframes, pos = read_uvarint(buf, pos, end)
        if nframes > spec.MAX_FRAMES_PER_STACK:
            raise WireError(f"invalid stack size {nframes}, maximum is {spec.MAX_FRAMES_PER_STACK}", pos)
        frames = []
        for i in range(1, nframes + 1):
            what = "PC"
            try:
                pc, pos = read_uvarint(buf, pos, end)
                what = "funcID"
                func_id, pos = read_uvarint(buf, pos, end)
                what = "fileID"
                file_id, pos = read_uvarint(buf, pos, end)
                what = "line"
                line, pos = read_uvarint(buf, pos, end)
            except WireError as err:
                raise WireError(
                    f"reading frame {i}'s {what} for stack {sid}: {err.message}", err.offset
                ) from None
            frames.append(pc)
            if pc not in pcs:
                pcs[pc] = (pc, func_id, file_id, line)
        if sid in stacks:
            raise WireError(
                f"multiple trace.stacks with the same ID: id={sid}, new={_stack_repr(frames)}, "
                f"existing={_stack_repr(stacks[sid])}",
                pos,
            )
        stacks[sid] = tuple(frames)


def _add_cpu_samples(g: Generation, buf, b: Batch) -> None:
    samples = g.cpu_samples
    pos, end = b.start + 1, b.end  # skip the EvCPUSamples byte
    while pos < end:
        ev = buf[pos]
        pos += 1
        if ev != spec.EV_CPU_SAMPLE:
            raise WireError(f"expected CPU sample event, got {ev}", pos - 1)
        ts, pos = read_uvarint(buf, pos, end)
        m, pos = read_uvarint(buf, pos, end)
        p, pos = read_uvarint(buf, pos, end)
        gid, pos = read_uvarint(buf, pos, end)
        stk, pos = read_uvarint(buf, pos, end)
        # IDs are int64 in Go; goroutine 0 means "no goroutine".
        m = m - _U64 if m > _INT64_MAX else m
        p = p - _U64 if p > _INT64_MAX else p
        gid = -1 if gid == 0 else (gid - _U64 if gid > _INT64_MAX else gid)
        samples.append((ts, m, p, gid, stk))


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
    # validateStackStrings (Go walks the compacted table in ID order).
    strings = t.strings
    pcs = t.pcs
    for sid in sorted(t.stacks):
        for pc in t.stacks[sid]:
            fr = pcs.get(pc)
            if fr is None:
                raise WireError(f"found unknown pc {pc:x} for stack {sid}", g.offset, g.gen)
            if fr[1] not in strings:
                raise WireError(f"found invalid func string ID {fr[1]} for stack {sid}", g.offset, g.gen)
            if fr[2] not in strings:
                raise WireError(f"found invalid file string ID {fr[2]} for stack {sid}", g.offset, g.gen)
    # Convert CPU sample timestamps and sort them by time (Go's fixUpCPUSamples).
    freq = t.freq
    samples = [(mul(freq, ts), m, p, gid, stk) for ts, m, p, gid, stk in g.cpu_samples]
    sort_func(samples, key=_sample_time)  # Go's unstable sort: ties end up where Go puts them
    g.cpu_samples = samples


def _sample_time(s: tuple[int, int, int, int, int]) -> int:
    return s[0]


def read_generation(buf, pos: int, end: int, version: int) -> tuple[Generation | None, int]:
    """Go 1.26+: read batches up to EndOfGeneration. Returns (generation or None at the end, new pos)."""
    g = Generation(pos)
    while True:
        try:
            b, gen, pos = read_batch(buf, pos, end)
        except WireError as err:
            err.gen = err.gen or g.gen or None
            raise
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
