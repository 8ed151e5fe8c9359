"""Arrival order: bodies before metadata, dictionary bodies after the batches using them, random
schedules, sequence numbers rolling over; and every ordering error the client must name: missing,
duplicate and orphan bodies, gaps before the end of stream, malformed tags and type-1 payloads."""
import struct

import pyarrow as pa
import pytest

import arrowipc
from arrowipc.dissociated import _wire as wire
from arrowipc.dissociated import DissociatedServer, connect
from arrowipc.errors import ArrowInvalid
from arrowipc.ipc import IpcWriteOptions
from arrowipc.dissociated.shm import SharedArena
from arrowipc.ipc.writer import MessageEncoder
from dissociated_helpers import (TIMEOUT, FakeServer, add_body, bodies_first,
                                 delta_dictionary_batches,
                                 dictionary_bodies_last, drop, duplicate, extra_types_table,
                                 frame_sequence, replace_body, retag, reversed_order, shuffled,
                                 wait_until)

DICTS = pa.Table.from_batches(delta_dictionary_batches())
EXTRA = extra_types_table()
U32_MAX = 0xFFFFFFFF


def serve(schedule=None, body_mode="bytes", **kw):
    kw.setdefault("peer_memory", False)       # type-1 pairs here are segment addresses
    return DissociatedServer(lambda t: arrowipc.table(EXTRA if t == b"extra" else DICTS),
                             body_mode=body_mode, schedule=schedule,
                             options=IpcWriteOptions(emit_dictionary_deltas=True, alignment=64), **kw)


def read_all(server, ticket=b"dicts", split=False, **kw) -> pa.Table:
    if split:
        reader = connect(server.metadata_uri, ticket, data_uri=server.data_uri, timeout=TIMEOUT,
                         **kw)
    else:
        reader = connect(server.uri, ticket, timeout=TIMEOUT, **kw)
    with reader:
        return pa.table(reader.read_all())


SCHEDULES = {
    "bodies-first": bodies_first,
    "reversed": reversed_order,
    "dictionary-bodies-last": dictionary_bodies_last,
    **{f"random-{seed}": shuffled(seed) for seed in range(6)},
}


@pytest.mark.parametrize("mode", ["bytes", "shared"])
@pytest.mark.parametrize("name", list(SCHEDULES))
def test_any_arrival_order_gives_the_same_stream(name, mode):
    with serve(SCHEDULES[name], mode) as s:
        assert read_all(s).equals(DICTS)
        assert read_all(s, b"extra").equals(EXTRA)


@pytest.mark.parametrize("mode", ["bytes", "shared"])
def test_set_tag_bits_32_to_55_are_refused(mode):
    """Bits 32-55 of a body tag are reserved and MUST be 0: a peer that sets them is refused,
    the error naming the tag."""
    every_body = lambda frames: [(k, t | (0xABCDEF << 32), p) if k == wire.FRAME_TAGGED  # noqa: E731
                                 else (k, t, p) for k, t, p in frames]
    with serve(every_body, mode) as s:
        with pytest.raises(arrowipc.ArrowInvalid, match=r"body tag 0x0[01]abcdef[0-9a-f]{8} "
                           r"\(sequence \d+\) has reserved bits 32-55 set"):
            read_all(s)


def test_dictionary_body_really_arrives_after_the_batch_using_it():
    seen = []

    def spy(frames):
        out = dictionary_bodies_last(frames)
        seen.extend(frame_sequence(f) for f in out)
        return out

    with serve(spy) as s:
        assert read_all(s).equals(DICTS)
    # message 1 is the first dictionary, 2 the first batch using it
    assert seen.index(("body", 1)) > seen.index(("body", 2))


def test_split_connections_with_reordered_streams():
    with serve(shuffled(99), "shared") as s:
        assert read_all(s, split=True).equals(DICTS)


@pytest.mark.parametrize("first", [U32_MAX - 2, U32_MAX])
@pytest.mark.parametrize("mode", ["bytes", "shared"])
def test_sequence_numbers_roll_over(first, mode):
    sequences = []

    def spy(frames):
        sequences.extend(frame_sequence(f)[1] for f in frames)
        return shuffled(3)(frames)

    with serve(spy, mode, first_sequence=first) as s:
        assert read_all(s, first_sequence=first).equals(DICTS)
    assert U32_MAX in sequences and 0 in sequences and 1 in sequences
    # a client expecting the spec's start (0) sees a stream that starts elsewhere
    with serve(None, mode, first_sequence=first) as s:
        with pytest.raises(ArrowInvalid):
            read_all(s)


# -- errors the client names ---------------------------------------------------------------------
# DICTS as messages: 0 schema, 1 dictionary, 2 batch, 3 delta, 4 batch, 5 delta, 6 batch,
# 7 replacement, 8 batch, 9 end of stream.

@pytest.mark.parametrize("schedule, expected", [
    (drop("body", 4), "missing body for sequence 4"),
    (drop("body", 1), "missing body for sequence 1"),
    (drop("metadata", 3), "gap before end of stream: metadata message with sequence 3"),
    (drop("eos", 9), "connections ended before the end-of-stream message; the next expected "
                     "sequence was 9"),
    (duplicate("body", 2), "duplicate (or orphan )?body with sequence 2"),
    (duplicate("metadata", 5), "duplicate metadata message with sequence 5"),
    (duplicate("eos", 9), "second end-of-stream message"),
    (add_body(0, 0), "orphan body with sequence 0"),
    (add_body(0), "orphan body with sequence 0"),
    (add_body(9), "orphan body with sequence 9"),
    (add_body(12, 0), "orphan body with sequence 12"),
    (add_body(12), "orphan body with sequence 12"),
    (add_body(U32_MAX, 0), "body with sequence 4294967295 lies before the start"),
    (retag(3, lambda t: (t & U32_MAX) | (7 << 56)), "sequence 3 has body type 7"),
    (replace_body(2, b"\x00" * 8), "body of sequence 2 has 8 bytes; its metadata declares"),
    (replace_body(2, b"\x00" * 8, 1), "type-1 body of sequence 2 has 8 bytes"),
    (replace_body(2, struct.pack("<QQ", 0, 3), 1), "declares 3 buffers"),
], ids=lambda v: v if isinstance(v, str) else None)
def test_ordering_errors_name_the_sequence(schedule, expected):
    with serve(schedule) as s:
        with pytest.raises(ArrowInvalid, match=expected):
            read_all(s)


def test_type1_pairs_outside_their_segment_or_in_unknown_segments():
    def pairs_for(seq, pairs, total):
        return replace_body(seq, wire.encode_shared_body(total, pairs), 1)

    # message 2 (the first batch of DICTS) has 4 buffers in a 128-byte body
    with serve(pairs_for(2, [(5 << 40, 128)], 128)) as s:
        with pytest.raises(ArrowInvalid, match="segment 5, which .* never announced"):
            read_all(s)
    with serve(pairs_for(2, [(0, 8)], 8)) as s:
        with pytest.raises(ArrowInvalid, match="1 regions .* must add up to the body length 128; "
                                               "they add up to 8"):
            read_all(s)
    with serve(pairs_for(2, [(0, 0), (0, 8), (64, 0), (64, 8)], 128)) as s:
        with pytest.raises(ArrowInvalid, match="buffer 1 has length 8 but the metadata's buffer 1 "
                                               "has 6"):
            read_all(s)

    # regions past the end of a real segment
    def out_of_bounds(frames):
        out = []
        for k, t, p in frames:
            if k == wire.FRAME_TAGGED and (t & U32_MAX) == 2 and (t >> 56) == 1:
                total, pairs = wire.parse_shared_body(b"".join(bytes(x) for x in p))
                pairs = [((a & ~((1 << 40) - 1)) | ((1 << 40) - 64), n) if n else (a, n)
                         for a, n in pairs]
                p = [wire.encode_shared_body(total, pairs)]
            out.append((k, t, p))
        return out

    with serve(out_of_bounds, "shared") as s:
        with pytest.raises(ArrowInvalid, match="outside the .*-byte segment"):
            read_all(s)

    # a total that is neither the body length nor the sum of the lengths
    def bad_total(frames):
        out = []
        for k, t, p in frames:
            if k == wire.FRAME_TAGGED and (t & U32_MAX) == 2 and (t >> 56) == 1:
                total, pairs = wire.parse_shared_body(b"".join(bytes(x) for x in p))
                p = [wire.encode_shared_body(total + 1, pairs)]
            out.append((k, t, p))
        return out

    with serve(bad_total, "shared") as s:
        with pytest.raises(ArrowInvalid, match="type-1 body of sequence 2 declares a total"):
            read_all(s)


def test_scattered_type1_regions_are_copied_into_one_body():
    """One pair per buffer, but the buffers lie apart (in reverse order): the client copies them
    into one body and frees the addresses at once."""
    table = pa.table({"i": pa.array(range(100), pa.int64()),
                      "s": pa.array([str(i) if i % 3 else None for i in range(100)])})
    handed_out = []

    def script(t):
        arena = SharedArena(t)
        ours = arrowipc.table(table)
        enc = MessageEncoder(ours.schema)
        t.send_message([wire.metadata_prefix(1, 0), memoryview(enc.schema_message())[8:]])
        (m,) = enc.batch_messages(ours.to_batches()[0])
        t.send_message([wire.metadata_prefix(1, 1), memoryview(m.metadata)[8:]])
        body = b"".join(bytes(p) for p in m.parts)
        spans = m.spans
        pairs = [None] * len(spans)
        for i in reversed(range(len(spans))):
            off, n = spans[i]
            block = arena.allocate(n)
            arena.write(block, [body[off:off + n]])
            pairs[i] = (block.address, n)
        handed_out.extend(a for a, _ in pairs)
        t.send_tagged(wire.body_tag(1, 1), [wire.encode_shared_body(m.body_length, pairs)])
        t.send_message([wire.end_of_stream_message(2)])
        t.send_frame(wire.FRAME_STREAM_END, 0, [])

    with FakeServer(script) as fake:
        with connect(fake.uri, b"t", timeout=TIMEOUT) as reader:
            batch = reader.read_next_batch()
            assert type(batch.column(0).buffers()[1].base).__name__ != "SharedBody"
            assert pa.record_batch(batch).equals(table.to_batches()[0])
            assert list(reader) == []
            freed = wait_until(lambda: [a for f in fake.received if f.kind == wire.FRAME_TAGGED
                                        and f.tag == fake.free_data
                                        for a in wire.parse_free_data(f.payload)],
                               what="free_data from the client")
    assert sorted(set(freed)) == sorted(set(handed_out))


def test_bounded_reorder_buffer():
    with serve(reversed_order) as s:
        with pytest.raises(ArrowInvalid, match="messages .* are waiting for sequence 0"):
            read_all(s, max_pending=5)
