"""A generation's tables (strings, stacks, CPU samples) from the compiled loops of tables.py.

Two kinds of checks:

* hand-built table batches, hostile and not, whose expected messages and offsets are
  read off Go's generation.go (addStrings, addStacks, addCPUSamples,
  validateStackStrings) and off the bytes the test lays out; Go's own reader
  (go tool trace -d=parsed) must reject the same traces with the same message;
* real traces: every stack, frame and string equals what a plain reading of
  the table batches (a few lines of Python over wire.read_uvarint, below) gives,
  through the array layout and through the lazy ``stacks`` / ``pcs`` views.

Go also checks that every PC of a stack has a frame ("found unknown pc"); that
cannot happen when reading bytes (each PC comes with its frame), so no trace can
test it.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from goblueprint.errors import TraceError
from goblueprint.trace import spec, wire
from goblueprint.trace.generation import read_generation, read_generation_with_spill
from goblueprint.trace.reader import Reader
from goblueprint.trace.wire import uvarint as uv

from .conftest import same_error

HEADER = len(spec.header(spec.GO126))  # 16: batches start here
OVERFLOW = "binary: varint overflows a 64-bit integer"


class TraceBuilder:
    """A one-generation trace, batch by batch; remembers where each batch's data starts."""

    def __init__(self, version: int = spec.GO126) -> None:
        self.version = version
        self.buf = bytearray(spec.header(version))
        self.data_at: list[int] = []  # file offset of each batch's first data byte
        sync = [spec.EV_FREQUENCY, *uv(1_000_000_000)]
        if version >= spec.GO125:
            sync = [spec.EV_SYNC, *sync, spec.EV_CLOCK_SNAPSHOT, 0, 0, 0, 0]
        self.batch(bytes(sync))

    def batch(self, data: bytes, m: int = 0) -> int:
        head = bytes([spec.EV_EVENT_BATCH]) + uv(1) + uv(m) + uv(1) + uv(len(data))
        self.data_at.append(len(self.buf) + len(head))
        self.buf += head + data
        return self.data_at[-1]

    def strings(self, *items: tuple[int, bytes]) -> int:
        data = bytes([spec.EV_STRINGS])
        for sid, s in items:
            data += bytes([spec.EV_STRING]) + uv(sid) + uv(len(s)) + s
        return self.batch(data)

    def stacks(self, *items: tuple[int, list[tuple[int, int, int, int]]]) -> int:
        data = bytes([spec.EV_STACKS])
        for sid, frames in items:
            data += bytes([spec.EV_STACK]) + uv(sid) + uv(len(frames))
            for frame in frames:
                data += b"".join(uv(x) for x in frame)
        return self.batch(data)

    def done(self) -> bytes:
        if self.version >= spec.GO126:
            self.buf.append(spec.EV_END_OF_GENERATION)
        return bytes(self.buf)


def read_one(data: bytes):
    """The first generation of DATA, as the reader reads it (either generation reader)."""
    version, pos = wire.read_header(data)
    if version >= spec.GO126:
        g, _ = read_generation(data, pos, len(data), version)
    else:
        g, _, err, _ = read_generation_with_spill(data, pos, len(data), None, version)
        assert err is None
    return g


def wire_error(data: bytes) -> wire.WireError:
    with pytest.raises(wire.WireError) as info:
        read_one(data)
    return info.value


def base(version: int = spec.GO126) -> TraceBuilder:
    b = TraceBuilder(version)
    b.strings((1, b"main.f"), (2, b"/src/f.go"), (3, b"main.main"))
    return b


F1 = (0x401000, 1, 2, 10)  # pc, funcID, fileID, line
F2 = (0x402000, 3, 2, 20)


# ---------------------------------------------------------------------------
# Well-formed tables


@pytest.mark.parametrize("version", [spec.GO122, spec.GO125, spec.GO126])
def test_tables_layout_and_views(version):
    b = base(version)
    b.stacks((9, [F1, F2]), (4, [F2]), (6, []))
    b.strings((7, b"\xc3\xa9\xff"))  # not UTF-8: the bad byte is kept (surrogateescape)
    b.stacks((5, [(0x401000, 3, 3, 99), F2]))  # pc seen before: its first frame wins
    g = read_one(b.done())
    t = g.table
    assert t.stack_ids.dtype == np.uint64 and t.stack_ids.tolist() == [0, 4, 5, 6, 9]
    assert t.string_ids.dtype == np.uint64 and t.string_ids.tolist() == [0, 1, 2, 3, 7]
    assert t.strings[7] == "\xe9\udcff"
    assert t.strings[1] == "main.f" and t.strings[0] == ""
    # Frames of stack stack_ids[k] are [stack_lo[k], stack_hi[k]); values are the PC's first frame.
    frames = {
        sid: [
            (int(t.frame_pc[j]), int(t.frame_func[j]), int(t.frame_file[j]), int(t.frame_line[j]))
            for j in range(lo, hi)
        ]
        for sid, lo, hi in zip(t.stack_ids.tolist(), t.stack_lo.tolist(), t.stack_hi.tolist(), strict=True)
    }
    assert frames == {0: [], 4: [F2], 5: [F1, F2], 6: [], 9: [F1, F2]}
    assert t._stacks is None and t._pcs is None  # nothing built yet
    assert t.stacks == {0: (), 4: (F2[0],), 5: (F1[0], F2[0]), 6: (), 9: (F1[0], F2[0])}
    assert t.pcs == {F1[0]: F1, F2[0]: F2}
    assert t.stacks is t.stacks  # built once


def test_max_frames_is_accepted():
    frames = [(0x1000 + i, 1, 2, i) for i in range(spec.MAX_FRAMES_PER_STACK)]
    b = base()
    b.stacks((1, frames))
    t = read_one(b.done()).table
    assert t.stacks[1] == tuple(f[0] for f in frames)
    assert len(t.pcs) == spec.MAX_FRAMES_PER_STACK


def test_generation_without_stacks():
    t = read_one(base().done()).table
    assert t.stack_ids.tolist() == [0] and t.stacks == {0: ()} and t.pcs == {}


# ---------------------------------------------------------------------------
# Hostile tables: Go's message, and the offset where Go's reader stood


def stacks_error_cases():
    """(name, trace, message, offset or None for the generation's offset)."""
    cases = []

    b = base()
    at = b.batch(bytes([spec.EV_STACKS, spec.EV_STACK]) + uv(1) + uv(129))
    # EvStacks at, EvStack at+1, id at+2, the count at+3 and at+4: Go stops after it
    cases.append(("nframes>128", b.done(), "invalid stack size 129, maximum is 128", at + 5))

    b = base()
    data = bytes([spec.EV_STACKS, spec.EV_STACK]) + uv(7) + uv(2) + b"".join(uv(x) for x in F1) + uv(F2[0])
    at = b.batch(data)
    cases.append(("frame cut", b.done(), "reading frame 2's funcID for stack 7: EOF", at + len(data)))

    b = base()
    data = bytes([spec.EV_STACKS, spec.EV_STACK]) + uv(7) + uv(2) + b"".join(uv(x) for x in F1) + b"\x80"
    at = b.batch(data)
    cases.append(("pc cut", b.done(), "reading frame 2's PC for stack 7: unexpected EOF", at + len(data)))

    b = base()
    data = bytes([spec.EV_STACKS, spec.EV_STACK]) + uv(7) + uv(1) + uv(F1[0]) + uv(1) + uv(2) + b"\xff" * 10
    at = b.batch(data + b"\x01")
    cases.append(
        ("line overflow", b.done(), f"reading frame 1's line for stack 7: {OVERFLOW}", at + len(data))
    )

    b = base()
    data = bytes([spec.EV_STACKS, spec.EV_STACK]) + uv(3) + uv(0) + bytes([spec.EV_STRING])
    at = b.batch(data)
    cases.append(("wrong event", b.done(), "expected stack event, got 5", at + len(data) - 1))

    b = base()
    b.stacks((5, [F1]), (6, [F2]), (5, [F2, F1]), (8, []))
    at = b.data_at[-1]
    # EvStacks, stack 5 (3 + 7 bytes), stack 6 (3 + 7), then the second 5 (3 + 14)
    msg = f"multiple trace.stacks with the same ID: id=5, new=\t{F2[0]:#x}\n\t{F1[0]:#x}\n, existing=\t{F1[0]:#x}\n"
    cases.append(("duplicate id", b.done(), msg, at + 1 + 10 + 10 + 17))

    b = base()
    b.stacks((5, [F1]))
    at = b.stacks((2, []), (5, [F2]))
    msg = f"multiple trace.stacks with the same ID: id=5, new=\t{F2[0]:#x}\n, existing=\t{F1[0]:#x}\n"
    cases.append(("duplicate id across batches", b.done(), msg, at + 1 + 3 + 10))

    b = base()
    at = b.stacks((0, [F1]))
    msg = f"multiple trace.stacks with the same ID: id=0, new=\t{F1[0]:#x}\n, existing="
    cases.append(("stack id 0", b.done(), msg, at + 1 + 10))

    b = base()
    b.stacks((7, [F1, (0x403000, 9, 2, 1)]))
    cases.append(("bad func id", b.done(), "found invalid func string ID 9 for stack 7", None))

    b = base()
    b.stacks((7, [F1]), (3, [(0x403000, 1, 12, 1)]))
    cases.append(("bad file id", b.done(), "found invalid file string ID 12 for stack 3", None))

    b = base()
    # Stack 3 comes first with the bad frame; stack 2 repeats the PC with good IDs.  Go keeps
    # the first frame of a PC and walks stacks in ID order: stack 2 is reported, with ID 9.
    b.stacks((3, [(0x403000, 9, 2, 1)]), (2, [(0x403000, 1, 2, 1)]))
    cases.append(("first frame of a pc wins", b.done(), "found invalid func string ID 9 for stack 2", None))

    b = base()
    b.stacks((4, [F1]), (5, [(F1[0], 9, 99, 1)]))  # bad IDs on a PC seen before: ignored by Go
    cases.append(("later frame of a pc ignored", b.done(), None, None))
    return cases


def strings_error_cases():
    cases = []

    b = TraceBuilder()
    at = b.strings((1, b"main.f"), (2, b"x"), (1, b"main.g"))
    msg = "multiple strings with the same ID: id=1, new=main.g, existing=main.f"
    cases.append(("duplicate string", b.done(), msg, at + 1 + 9 + 4 + 9))

    b = TraceBuilder()
    at = b.strings((0, b"zero"))
    cases.append(
        ("string id 0", b.done(), "multiple strings with the same ID: id=0, new=zero, existing=", at + 8)
    )

    b = TraceBuilder()
    b.strings((4, b"\xfe"))
    at = b.strings((4, b"ok"))
    msg = "multiple strings with the same ID: id=4, new=ok, existing=\udcfe"
    cases.append(("duplicate across batches", b.done(), msg, at + 1 + 5))

    b = TraceBuilder()
    data = bytes([spec.EV_STRINGS, spec.EV_STRING]) + uv(1) + uv(1025) + b"x" * 1025
    at = b.batch(data)
    cases.append(("string too long", b.done(), "invalid string size 1025, maximum is 1024", at + 5))

    b = TraceBuilder()
    data = bytes([spec.EV_STRINGS, spec.EV_STRING]) + uv(1) + uv(10) + b"abc"
    at = b.batch(data)
    cases.append(("string cut", b.done(), "failed to read full string: read 3 but wanted 10", at + 4))

    b = TraceBuilder()
    data = bytes([spec.EV_STRINGS, spec.EV_STRING]) + b"\x80"
    at = b.batch(data)
    cases.append(("string id cut", b.done(), "unexpected EOF", at + 3))

    b = TraceBuilder()
    data = bytes([spec.EV_STRINGS, spec.EV_STACK])
    at = b.batch(data)
    cases.append(("wrong string event", b.done(), "expected string event, got 3", at + 1))

    b = TraceBuilder()
    data = bytes([spec.EV_CPU_SAMPLES, spec.EV_CPU_SAMPLE, 1, 2, 3, 4])
    at = b.batch(data)
    cases.append(("sample cut", b.done(), "EOF", at + len(data)))

    b = TraceBuilder()
    data = bytes([spec.EV_CPU_SAMPLES, spec.EV_CPU_SAMPLE, 1, 2, 3, 4, 5, spec.EV_STACK])
    at = b.batch(data)
    cases.append(("wrong sample event", b.done(), "expected CPU sample event, got 3", at + len(data) - 1))
    return cases


CASES = stacks_error_cases() + strings_error_cases()


@pytest.mark.parametrize(("name", "data", "message", "offset"), CASES, ids=[c[0] for c in CASES])
def test_hostile_tables(name, data, message, offset):
    if message is None:
        read_one(data)
        return
    err = wire_error(data)
    assert err.message == message
    assert err.offset == (HEADER if offset is None else offset)
    assert err.gen == 1
    if message == "EOF":
        # A bare io.EOF from a table batch: Go's reader (and ours) takes it for the end.
        assert list(Reader(data))
        return
    # The same through the Reader: a TraceError with that offset and generation.
    with pytest.raises(TraceError) as info:
        for _ in Reader(data):
            pass
    assert info.value.message == message
    assert (info.value.offset, info.value.generation) == (err.offset, 1)


@pytest.mark.slow
@pytest.mark.parametrize(("name", "data", "message", "offset"), CASES, ids=[c[0] for c in CASES])
def test_hostile_tables_same_as_go(name, data, message, offset, go_parsed, tmp_path):
    path = tmp_path / "t.trace"
    path.write_bytes(data)
    want = go_parsed(path)
    assert same_error(None if message == "EOF" else message, want.error), want.error


@pytest.mark.parametrize("version", [spec.GO122, spec.GO125])
def test_hostile_stacks_with_spill_reader(version):
    b = base(version)
    b.stacks((5, [F1]), (5, []))
    err = wire_error(b.done())
    assert err.message == f"multiple trace.stacks with the same ID: id=5, new=, existing=\t{F1[0]:#x}\n"
    assert (err.offset, err.gen) == (b.data_at[-1] + 1 + 10 + 3, 1)


# ---------------------------------------------------------------------------
# Real traces: the compiled tables equal a plain reading of the same batches


def plain_tables(data: bytes) -> list[tuple[dict, dict, dict]]:
    """(strings, stacks, pcs) of every generation, read batch by batch in plain Python."""
    out: list[tuple[dict, dict, dict]] = []
    cur = None
    last_gen = None
    for gen, b in wire.batch_layout(data):
        if gen != last_gen and gen != 0:
            cur = ({0: ""}, {0: ()}, {})
            out.append(cur)
            last_gen = gen
        if b.exp or b.first not in (spec.EV_STRINGS, spec.EV_STACKS):
            continue
        strings, stacks, pcs = cur
        pos, end = b.start + 1, b.end
        while pos < end:
            pos += 1  # EvString / EvStack
            sid, pos = wire.read_uvarint(data, pos, end)
            n, pos = wire.read_uvarint(data, pos, end)
            if b.first == spec.EV_STRINGS:
                strings[sid] = data[pos : pos + n].decode("utf-8", "surrogateescape")
                pos += n
                continue
            frames = []
            for _ in range(n):
                frame = []
                for _ in range(4):
                    x, pos = wire.read_uvarint(data, pos, end)
                    frame.append(x)
                frames.append(frame[0])
                pcs.setdefault(frame[0], tuple(frame))
            stacks[sid] = tuple(frames)
    return out


def check_trace(data: bytes) -> int:
    want = plain_tables(data)
    version, pos = wire.read_header(data)
    got = []
    spill = None
    while True:
        if version >= spec.GO126:
            g, pos = read_generation(data, pos, len(data), version)
            if g is None:
                break
        else:
            if spill is None and got:
                break
            g, spill, err, pos = read_generation_with_spill(data, pos, len(data), spill, version)
            assert err is None
        got.append(g.table)
    assert len(got) == len(want)
    frames = 0
    for t, (strings, stacks, pcs) in zip(got, want, strict=True):
        assert t.strings == strings
        assert t.string_ids.tolist() == sorted(strings)
        assert t.stack_ids.tolist() == sorted(stacks)
        # The arrays, frame by frame, then the lazy views.
        for sid, lo, hi in zip(t.stack_ids.tolist(), t.stack_lo.tolist(), t.stack_hi.tolist(), strict=True):
            assert t.frame_pc[lo:hi].tolist() == list(stacks[sid])
            for j in range(lo, hi):
                pc = int(t.frame_pc[j])
                assert (pc, int(t.frame_func[j]), int(t.frame_file[j]), int(t.frame_line[j])) == pcs[pc]
            frames += hi - lo
        assert t.stacks == stacks
        assert t.pcs == pcs
        assert list(t.pcs) == list(pcs)  # same order of first appearance
    return frames


@pytest.mark.slow
@pytest.mark.parametrize("go", ["1.22", "1.27"])
def test_real_trace_tables(go, go_trace):
    assert check_trace(go_trace("sched", go=go).read_bytes()) > 500


@pytest.mark.slow
def test_big_trace_tables(go_trace):
    path: Path = go_trace("big", scale=40)
    assert check_trace(path.read_bytes()) > 5000


# ---------------------------------------------------------------------------
# Batch headers: compiled in chunks, with read_batch taking any batch it does not


def test_many_batches_in_one_generation():
    b = base()
    for i in range(600):  # more than one compiled chunk of headers
        b.batch(b"", m=i % 7)
    data = b.done()
    g = read_one(data)
    want = [bt for gen, bt in wire.batch_layout(data) if bt.first != spec.EV_END_OF_GENERATION]
    got = sorted((bt for bts in g.batches.values() for bt in bts), key=lambda bt: bt.offset)
    assert [(bt.m, bt.offset, bt.start, bt.end, bt.first) for bt in got] == [
        (bt.m, bt.offset, bt.start, bt.end, bt.first) for bt in want if bt.first != spec.EV_STRINGS
    ][1:]  # the sync batch and the strings batch are tables
    assert g.batch_ms == list(range(7))


@pytest.mark.parametrize(
    ("tail", "message"),
    [
        (b"\x07", "expected batch event, got event 7"),
        (b"\x01\x01\x00\x01\x80", "failed to read full batch: read 0 but wanted 128"),
    ],
)
def test_bad_batch_after_a_chunk(tail, message):
    b = base()
    for _ in range(300):
        b.batch(b"")
    at = len(b.buf)
    data = bytes(b.buf) + tail + b"\x01"
    err = wire_error(data)
    assert (err.message, err.offset, err.gen) == (message, at, 1)
