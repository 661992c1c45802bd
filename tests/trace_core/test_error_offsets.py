"""Reader errors say where: the byte offset of the event (or batch) at fault.

Ordering and table-ID errors are found after decoding, from the cursor's
position; the offset is recomputed only when the error is raised.  These tests
check that it lands on the right bytes: inside the file, inside a batch of the
M and generation the error names, and on the event Go's reader rejects.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from goblueprint import toolchain
from goblueprint.errors import TraceError
from goblueprint.trace import spec
from goblueprint.trace.reader import Reader
from goblueprint.trace.textform import parse_test_file
from goblueprint.trace.wire import batch_layout, read_batch, read_uvarint

from .conftest import GO_TRACE_TESTDATA, same_error

_TESTS = toolchain.find("1.27").goroot / GO_TRACE_TESTDATA / "tests"
FAILURES = [p for p in sorted(_TESTS.glob("*.test")) if parse_test_file(p.read_bytes()).expect_failure]

# The event each FAILURE test of Go's is about, read off its trace text: in
# create-syscall-with-p the M has no P after GoDestroySyscall, so the GoSyscallEnd
# that follows the second GoCreateSyscall is rejected; in fail-first-gen-first the
# first generation's GoCreate runs without a P.
AT_FAULT = {
    "go122-create-syscall-with-p": "GoSyscallEnd",
    "go122-fail-first-gen-first": "GoCreate",
}


def read_error(data: bytes) -> TraceError:
    with pytest.raises(TraceError) as info:
        for _ in Reader(data):
            pass
    return info.value


def batches(data: bytes) -> list[tuple[int, int, int, int]]:
    """(gen, M, header offset, end) of every batch that reads cleanly."""
    return [(gen, b.m, b.offset, b.end) for gen, b in batch_layout(data)]


def assert_points_into_batch(data: bytes, err: TraceError) -> tuple[int, int, int, int]:
    assert err.offset is not None and f"offset {err.offset}" in str(err), str(err)
    assert 0 <= err.offset < len(data), str(err)
    hits = [b for b in batches(data) if b[2] <= err.offset < b[3]]
    assert len(hits) == 1, f"{err}: offset in no batch"
    gen, m, _, _ = hits[0]
    assert (gen, m) == (err.generation, err.m), f"{err}: offset is in the batch of gen {gen}, M {m}"
    return hits[0]


def test_failure_corpus_present():
    assert set(AT_FAULT) <= {p.stem for p in FAILURES}


@pytest.mark.parametrize("path", FAILURES, ids=lambda p: p.stem)
def test_golden_failure_names_event_at_fault(path: Path):
    test = parse_test_file(path.read_bytes())
    err = read_error(test.wire)
    assert test.matches(err.message), err.message  # still Go's text
    assert_points_into_batch(test.wire, err)
    if path.stem in AT_FAULT:
        assert spec.SPECS[test.wire[err.offset]].name == AT_FAULT[path.stem], str(err)


def _timed_events(data: bytes, start: int, end: int) -> list[tuple[int, int]]:
    """(offset, type) of each event of a clean batch, by the spec's argument counts."""
    out = []
    pos = start
    while pos < end:
        typ = data[pos]
        s = spec.SPECS[typ]
        out.append((pos, typ))
        pos += 1
        for _ in range(len(s.args)):
            while data[pos] >= 0x80:
                pos += 1
            pos += 1
    return out


@pytest.mark.slow
def test_flipped_type_byte_names_that_event(go_trace, go_parsed, tmp_path):
    # Rewrite the type byte of one early event of a real trace to another type with the
    # same argument count (so the bytes still decode).  Whenever the ordering engine or
    # the ID checks reject a mutant, the offset must be the start of an event in a batch
    # of the M the error names, at or after the rewritten byte when in that batch; and
    # at least one mutant must be rejected at exactly the rewritten event.  Go rejects
    # the first such mutant with the same message.
    data = go_trace("sched", go="1.27").read_bytes()
    nargs = {t: len(s.args) for t, s in enumerate(spec.SPECS) if s.is_timed_event and s.args}
    checked = 0
    exact = False
    go_checked = False
    for gen, m, off, _ in batches(data):
        if m < 0 or gen != 1 or exact:
            continue
        b, _, _ = read_batch(data, off, len(data))
        if b.first not in nargs:
            continue  # a table batch (strings, stacks, CPU samples): not ordered
        for pos, typ in _timed_events(data, b.start, b.end)[1:4]:
            for new in sorted(t for t in nargs if nargs[t] == nargs[typ] and t != typ)[:3]:
                mutant = bytearray(data)
                mutant[pos] = new
                mutant = bytes(mutant)
                try:
                    for _ in Reader(mutant):
                        pass
                    continue
                except TraceError as exc:
                    err = exc
                if err.m is None or "failed to advance" in err.message:
                    continue  # a decoding error or no single event at fault
                _, _, off2, _ = assert_points_into_batch(mutant, err)
                b2, _, _ = read_batch(mutant, off2, len(mutant))
                starts = [o for o, _ in _timed_events(mutant, b2.start, b2.end)]
                assert err.offset in starts, f"{err}: not the start of an event"
                if off2 == off:
                    assert err.offset >= pos, f"{err}: before the rewritten event at {pos}"
                checked += 1
                exact = exact or err.offset == pos
                if not go_checked:
                    trace = tmp_path / "mutant.trace"
                    trace.write_bytes(mutant)
                    assert same_error(err.message, go_parsed(trace).error)
                    go_checked = True
    assert checked and exact, f"{checked} rejected mutants, one at its own event: {exact}"


def test_invalid_stack_id_names_that_event(go_parsed, tmp_path):
    # The table-ID check runs on an event after its cursor moved on: it must still point at
    # that event, not at the cursor's new front.  Go's create-syscall-with-p trace with the
    # first GoSyscallBegin naming stack 7 (no stacks exist; same byte length).
    text = (_TESTS / "go122-create-syscall-with-p.test").read_bytes()
    old = b"GoSyscallBegin dt=1 p_seq=2 stack=0"
    assert text.count(old) == 1
    wire = parse_test_file(text.replace(old, old[:-1] + b"7")).wire
    err = read_error(wire)
    _, _, off, _ = assert_points_into_batch(wire, err)
    b, _, _ = read_batch(wire, off, len(wire))
    begins = [o for o, t in _timed_events(wire, b.start, b.end) if spec.SPECS[t].name == "GoSyscallBegin"]
    assert err.offset == begins[0], str(err)
    trace = tmp_path / "stack7.trace"
    trace.write_bytes(wire)
    assert same_error(err.message, go_parsed(trace).error)
    assert "invalid stack ID 7" in err.message


def test_cpu_sample_with_unknown_stack_names_its_batch(own_trace):
    # Go accepts the trace and only fails on printing such a sample; so do we, with
    # the offset of the generation's CPU samples batch.
    data = bytearray(own_trace("cpusample", "1.27").read_bytes())
    batch = next(b for _, b in batch_layout(bytes(data)) if b.first == spec.EV_CPU_SAMPLES and b.exp == 0)
    pos = batch.start + 2  # the batch's EvCPUSamples byte, then the first sample's EvCPUSample byte
    for _ in range(4):  # time, m, p, g
        _, pos = read_uvarint(data, pos, batch.end)
    _, end = read_uvarint(data, pos, batch.end)
    # The same number of bytes, all continuation bits set but the last: an ID no stack has.
    data[pos:end] = bytes([0xFF] * (end - pos - 1) + [0x7F])
    samples = [ev for ev in Reader(bytes(data)) if ev.typ == spec.EV_CPU_SAMPLE]
    assert samples
    with pytest.raises(TraceError) as err:
        for ev in samples:
            ev.stack.frames()
    assert "found invalid stack ID" in err.value.message
    assert err.value.offset == batch.offset
