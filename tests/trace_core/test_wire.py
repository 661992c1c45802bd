"""The wire layer: varints, headers, and the two batch decoders agreeing with each other."""

from __future__ import annotations

import pytest

from goblueprint.errors import TraceError, UnsupportedTraceVersion
from goblueprint.trace import generation, spec, wire


@pytest.mark.parametrize("x", [0, 1, 127, 128, 300, 2**32, 2**63, 2**64 - 1])
def test_uvarint_roundtrip(x):
    data = wire.uvarint(x) + b"\xff"
    assert wire.read_uvarint(data, 0, len(data)) == (x, len(data) - 1)


def test_uvarint_encoding_is_gos():
    # binary.AppendUvarint's bytes, so the roundtrip above does not only agree with itself.
    assert [wire.uvarint(x) for x in (0, 127, 128, 300)] == [b"\x00", b"\x7f", b"\x80\x01", b"\xac\x02"]


def test_uvarint_non_minimal_accepted():
    # Go's decoder accepts redundant continuation bytes: 0x80 0x00 is 0.
    assert wire.read_uvarint(b"\x80\x80\x00", 0, 3) == (0, 3)
    assert wire.read_uvarint(b"\x81\x00", 0, 2) == (1, 2)


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"", "EOF"),
        (b"\x80", "unexpected EOF"),
        (b"\xff" * 9 + b"\x02", "binary: varint overflows a 64-bit integer"),
        (b"\xff" * 10 + b"\x01", "binary: varint overflows a 64-bit integer"),
    ],
)
def test_uvarint_errors_are_gos(data, message):
    with pytest.raises(wire.WireError) as err:
        wire.read_uvarint(data, 0, len(data))
    assert err.value.message == message


def test_header_versions():
    for v in (spec.GO122, spec.GO123, spec.GO125, spec.GO126):
        assert wire.read_header(spec.header(v)) == (v, 16)


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"", "bad file format: not a Go execution trace?"),
        (b"go 1.x trace\x00\x00\x00", "bad file format: not a Go execution trace?"),
        (b"go 1.22 trace\x00\x00", "bad file format: not a Go execution trace?"),
        (b"go 1.24 trace\x00\x00\x00", "unknown or unsupported trace version go 1.24"),
        (b"go 1.99 trace\x00\x00\x00", "unknown or unsupported trace version go 1.99"),
    ],
)
def test_header_errors(data, message):
    with pytest.raises(TraceError) as err:
        wire.read_header(data)
    assert err.value.message == message


@pytest.mark.parametrize("v", [11, 19, 21])
def test_old_format_is_unsupported(v):
    with pytest.raises(UnsupportedTraceVersion, match="format version not supported yet"):
        wire.read_header(spec.header(v))


def test_version_tables_are_prefixes():
    # Each newer format understands everything the older one did.
    assert spec.VERSION_SPECS[22] == spec.SPECS[:45]
    assert spec.event_name(22, spec.EV_GO_SWITCH) == "Invalid(45)"
    assert spec.event_name(23, spec.EV_GO_SWITCH) == "GoSwitch"
    assert spec.event_name(25, spec.EV_END_OF_GENERATION) == "Invalid(52)"
    assert spec.event_name(26, spec.EV_END_OF_GENERATION) == "EndOfGeneration"


def _batches(data: bytes):
    version, pos = wire.read_header(data)
    end = len(data)
    spill = None
    while True:
        if version >= spec.GO126:
            g, pos = generation.read_generation(data, pos, end, version)
            if g is None:
                return
        else:
            if spill is None and pos >= end:
                return
            g, spill, _err, pos = generation.read_generation_with_spill(data, pos, end, spill, version)
        for m in g.batch_ms:
            for b in g.batches[m]:
                yield g.table.freq, b
        if version < spec.GO126 and spill is None:
            return
