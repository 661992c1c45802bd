"""The column-wise TrackEvent encoder against protobuf's own parser (Perfetto's bundled protos)."""

from __future__ import annotations

import io
import zlib

import numpy as np
from perfetto.protos.perfetto.trace import perfetto_trace_pb2 as pb

from goblueprint.timeline.perfetto_wire import PacketWriter, track_events


def test_every_field_and_varint_width_decodes_as_written() -> None:
    rng = np.random.default_rng(7)
    n = 3000
    # Values across every varint width a time below 2**63 takes, 1 to 9 bytes.
    delta = rng.integers(0, 1 << 62, n, dtype=np.int64) >> rng.integers(0, 63, n)
    delta[:3] = [0, 127, (1 << 63) - 1]
    kind = rng.integers(1, 5, n).astype(np.uint8)
    name = np.where(rng.random(n) < 0.5, rng.integers(1, 1 << 20, n), 0).astype(np.uint64)
    value = rng.normal(0, 1e12, n)
    flow_out = np.where(rng.random(n) < 0.3, rng.integers(1, 1 << 63, n, dtype=np.uint64), 0).astype(
        np.uint64
    )
    # Terminating flows: none, one or several per event.
    counts = rng.choice([0, 0, 1, 3], n)
    fin_ev = np.repeat(np.arange(n), counts)
    fin_id = rng.integers(1, 1 << 63, len(fin_ev), dtype=np.uint64)
    for seq in (1, 200, 70_000):
        data = track_events(seq, delta, kind, name, value, flow_out, fin_ev, fin_id).tobytes()
        packets = pb.Trace.FromString(data).packet
        assert len(packets) == n
        ids = np.split(fin_id, np.cumsum(counts)[:-1])
        for k, p in enumerate(packets):
            te = p.track_event
            assert p.timestamp == int(delta[k]) and p.trusted_packet_sequence_id == seq
            assert p.sequence_flags == pb.TracePacket.SEQ_NEEDS_INCREMENTAL_STATE
            assert te.type == kind[k] and te.name_iid == name[k] and te.HasField("name_iid") == (name[k] > 0)
            assert te.double_counter_value == value[k]
            assert list(te.flow_ids) == ([int(flow_out[k])] if flow_out[k] else [])
            assert list(te.terminating_flow_ids) == ids[k].tolist()
            assert not te.HasField("track_uuid")


def test_writer_chunks_are_deflated_packets_in_order() -> None:
    out = io.BytesIO()
    writer = PacketWriter(out, chunk=1000)
    blocks = []
    for k in range(20):
        n = 50 + k
        data = track_events(
            k + 1, np.arange(n, dtype=np.uint64), np.full(n, 3, np.uint8), np.ones(n, np.uint64), None,
            np.zeros(n, np.uint64), np.zeros(0, np.int64), np.zeros(0, np.uint64),
        )  # fmt: skip
        blocks.append(data)
        writer.write(data, n)
    writer.flush()
    outer = pb.Trace.FromString(out.getvalue()).packet
    assert len(outer) > 1 and all(p.HasField("compressed_packets") for p in outer)
    assert b"".join(zlib.decompress(p.compressed_packets) for p in outer) == b"".join(blocks)
    assert writer.packets == sum(50 + k for k in range(20))


def test_deferred_records_keep_their_place_and_estimates_cut_the_chunks() -> None:
    def block(k: int) -> bytes:
        n = 30 + k
        return track_events(
            k + 1, np.arange(n, dtype=np.uint64), np.full(n, 3, np.uint8), np.ones(n, np.uint64), None,
            np.zeros(n, np.uint64), np.zeros(0, np.int64), np.zeros(0, np.uint64),
        ).tobytes()  # fmt: skip

    def written(estimate: int) -> list[bytes]:
        out = io.BytesIO()
        writer = PacketWriter(out, chunk=1000)
        for k in range(30):
            if k % 3:
                writer.defer(lambda k=k: block(k), estimate, 30 + k)  # encoded on a worker, later
            else:
                writer.write(block(k), 30 + k)
        writer.flush()
        assert writer.packets == sum(30 + k for k in range(30))
        return [zlib.decompress(p.compressed_packets) for p in pb.Trace.FromString(out.getvalue()).packet]

    small, large = written(10), written(600)
    assert b"".join(small) == b"".join(large) == b"".join(block(k) for k in range(30))
    # Chunks are cut by the estimates, not by the bytes the workers made.
    assert len(small) < len(large)


def test_a_chunk_is_the_stream_of_its_pieces_joined() -> None:
    """A chunk is one zlib stream (what Perfetto inflates) of its pieces joined, those deferred
    encoded first, at the level the module states: however the records are split, the same bytes
    (the file must not change with where records end)."""
    import deflate

    from goblueprint.timeline.perfetto_wire import _LEVEL, _deflate

    rng = np.random.default_rng(3)
    # Packet-like bytes (runs, repeats, noise) well past deflate's window and lookahead.
    noise = rng.integers(0, 256, 5000, dtype=np.uint8)
    repeats = np.tile(np.arange(40, dtype=np.uint8), 4000)
    runs = np.repeat(rng.integers(0, 8, 3000, dtype=np.uint8), rng.integers(1, 9, 3000))
    data = np.concatenate([noise, repeats, runs]).tobytes()
    want = bytes(deflate.zlib_compress(data, _LEVEL))
    assert zlib.decompress(want) == data
    for sizes in ([1] * 300 + [len(data)], [258, 259, 262, 1 << 15, 3], [7] * 2000, [len(data)]):
        cuts = np.minimum(np.cumsum(sizes), len(data))
        pieces = [data[a:b] for a, b in zip([0, *cuts[:-1]], cuts, strict=True)]
        pieces.append(data[cuts[-1] :])
        got = _deflate(
            [np.frombuffer(p, np.uint8) if k % 2 else (lambda p=p: p) for k, p in enumerate(pieces)]
        )
        assert got == want


def test_records_made_at_once_are_cut_as_written_one_by_one() -> None:
    """``defer_records``: chunks are cut after the same records as by ``write`` and ``defer`` of
    each, and each chunk's records are asked for once, in order."""
    rng = np.random.default_rng(5)
    records = [rng.integers(0, 256, int(n), dtype=np.uint8).tobytes() for n in rng.integers(1, 400, 200)]
    sizes = np.array([len(r) if k % 3 else 7 * len(r) for k, r in enumerate(records)], np.int64)
    counts = rng.integers(1, 5, len(records))

    def one_by_one() -> list[bytes]:
        out = io.BytesIO()
        writer = PacketWriter(out, chunk=1000)
        for k, r in enumerate(records):
            if k % 3:
                writer.write(r, int(counts[k]))
            else:
                writer.defer(lambda r=r: r, int(sizes[k]), int(counts[k]))
        writer.flush()
        assert writer.packets == counts.sum()
        return [zlib.decompress(p.compressed_packets) for p in pb.Trace.FromString(out.getvalue()).packet]

    asked: list[tuple[int, int]] = []

    def encode(a: int, b: int) -> bytes:
        asked.append((a, b))
        return b"".join(records[a:b])

    out = io.BytesIO()
    writer = PacketWriter(out, chunk=1000)
    writer.defer_records(encode, sizes, counts)
    writer.flush()
    assert writer.packets == counts.sum()
    chunks = [zlib.decompress(p.compressed_packets) for p in pb.Trace.FromString(out.getvalue()).packet]
    assert chunks == one_by_one() and len(chunks) > 10
    assert [a for a, _ in asked] == [0] + [b for _, b in asked[:-1]] and asked[-1][1] == len(records)


def test_descriptors_and_heads_are_the_bytes_of_perfettos_classes() -> None:
    """The packets written without Perfetto's protobuf classes (descriptors, sequence heads,
    interned names) are the bytes those classes serialise: every optional field, varint widths,
    names beyond ASCII, and a head without names (which still holds an empty interned_data)."""
    from goblueprint.timeline.perfetto_wire import (
        EXPLICIT,
        UNIT_COUNT,
        UNIT_SIZE_BYTES,
        TrackDescriptor,
        descriptor_packet,
        intern_packet,
        sequence_head,
    )

    assert EXPLICIT == pb.TrackDescriptor.EXPLICIT
    assert (UNIT_COUNT, UNIT_SIZE_BYTES) == (
        pb.CounterDescriptor.UNIT_COUNT,
        pb.CounterDescriptor.UNIT_SIZE_BYTES,
    )

    def theirs(desc: TrackDescriptor):
        d = pb.TrackDescriptor(uuid=desc.uuid, name=desc.name, sibling_order_rank=desc.rank)
        if desc.parent:
            d.parent_uuid = desc.parent
        else:
            d.child_ordering = pb.TrackDescriptor.EXPLICIT
        if desc.counter_unit is not None:
            d.counter.unit = desc.counter_unit
        return d

    def serialised(*packets) -> bytes:
        return pb.Trace(packet=packets).SerializeToString()

    names = ["", "G1 runs", "wake-up → G17", "état: 準備", "x" * 300]
    for uuid, parent, rank, unit in [
        (1, 0, 0, None), (127, 128, 63, None), ((1 << 32) - 1, 3, 1 << 20, UNIT_COUNT), (70_000, 0, 5, UNIT_SIZE_BYTES),
    ]:  # fmt: skip
        for name in names:
            desc = TrackDescriptor(uuid, name, rank, parent, unit)
            for seq, flags, first in [(uuid, 1, True), (2, 2, False), ((1 << 32) - 1, 2, True)]:
                p = pb.TracePacket(trusted_packet_sequence_id=seq, track_descriptor=theirs(desc))
                p.sequence_flags = flags
                if first:
                    p.first_packet_on_sequence = True
                assert descriptor_packet(seq, flags, desc, first=first) == serialised(p)
            for used in ([], names[:1], names):
                head = pb.TracePacket(trusted_packet_sequence_id=uuid, first_packet_on_sequence=True)
                head.sequence_flags = 1
                head.trace_packet_defaults.timestamp_clock_id = 64
                head.trace_packet_defaults.track_event_defaults.track_uuid = uuid
                head.interned_data.event_names.extend(
                    pb.EventName(iid=k + 1, name=t) for k, t in enumerate(used)
                )
                head.clock_snapshot.clocks.add(clock_id=64, timestamp=0, is_incremental=True)
                head.clock_snapshot.clocks.add(clock_id=6, timestamp=0)
                assert sequence_head(desc, used) == serialised(head)
                for start in (1, 200):
                    p = pb.TracePacket(trusted_packet_sequence_id=uuid)
                    p.sequence_flags = 2
                    p.interned_data.event_names.extend(
                        pb.EventName(iid=start + k, name=t) for k, t in enumerate(used)
                    )
                    assert intern_packet(uuid, start, used) == serialised(p)


def test_the_export_does_not_load_perfettos_protobuf_classes(tmp_path) -> None:
    """The export writes its few descriptors itself: the module of Perfetto's classes alone held
    8 MB of its peak memory."""
    import subprocess
    import sys

    code = (
        "import io, sys\n"
        "from goblueprint.timeline.export_perfetto import write_perfetto\n"
        "from goblueprint.timeline.model import Timeline\n"
        "write_perfetto(Timeline(), io.BytesIO())\n"
        "print(sorted(m for m in sys.modules if m.startswith(('perfetto', 'google.protobuf'))))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=tmp_path
    )
    assert out.stdout.strip() == "[]"
