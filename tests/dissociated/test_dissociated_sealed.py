"""Write-sealed segments holding many bodies (issue 20): the server packs the bodies of a send
into one fresh memfd, seals it against writing and announces it once; the client maps it once and
hands out zero-copy views of every body in it. A segment that is not write-sealed is copied
from; body regions outside a segment or overlapping another body in it are refused, naming the
segment."""
import fcntl
import os
import threading

import pyarrow as pa
import pytest

import arrowipc
from arrowipc.dissociated import DissociatedServer, connect
from arrowipc.dissociated import _wire as wire
from arrowipc.dissociated import transport as tp
from arrowipc.dissociated._shm import map_segment
from arrowipc.errors import ArrowInvalid
from arrowipc.ipc.writer import MessageEncoder
from dissociated_helpers import TIMEOUT, FakeServer, int_batches, wait_until

INTS = int_batches(8, 4000)          # 8 bodies of 64 KiB: one send, so one segment


def ints(ticket: bytes):
    return arrowipc.table(INTS) if ticket == b"ints" else None


def mapping_of(address: int) -> tuple[int, int, str, str]:
    """(start, end, permissions, path) of the line of /proc/self/maps holding `address`."""
    with open("/proc/self/maps") as f:
        for line in f:
            fields = line.split(maxsplit=5)
            start, end = (int(x, 16) for x in fields[0].split("-"))
            if start <= address < end:
                return start, end, fields[1], fields[5].strip() if len(fields) > 5 else ""
    raise AssertionError(f"address 0x{address:x} is not mapped")


def body_buffers(batch) -> list:
    return [b for col in batch.columns for b in col.buffers() if b is not None and b.size]


def test_one_sealed_segment_holds_many_bodies_handed_out_zero_copy():
    with DissociatedServer(ints, body_mode="shared", seal_segments=True) as s:
        with connect(s.uri, b"ints", timeout=TIMEOUT) as reader:
            batches = list(reader)
            buffers = [buf for b in batches for buf in body_buffers(b)]
            assert {type(buf.base).__name__ for buf in buffers} == {"SharedBody"}
            mappings = {mapping_of(buf.address) for buf in buffers}
            assert len(mappings) == 1, mappings         # every body inside one mapping
            ((start, end, perms, path),) = mappings
            assert perms == "r--s" and "memfd:arrowipc-segment-" in path
            for buf in buffers:
                assert start <= buf.address and buf.address + buf.size <= end
            exported = pa.record_batch(batches[3])      # pyarrow reads the mapping in place
            ours = batches[3].column(0).buffers()[1]
            assert exported.column(0).buffers()[1].address == ours.address
            assert pa.Table.from_batches([pa.record_batch(b) for b in batches]).equals(INTS)
            # every body of the segment is placed: the client's table let go of it
            channel = reader._client.channels[0]
            assert channel.segments.mappings == {} and channel.segments.mapped_bytes == 0
            assert s.stats()["blocks_allocated"] == 8
            del batches, buffers, buf, exported, ours
            wait_until(lambda: s.stats()["blocks_outstanding"] == 0, what="bodies freed")
            wait_until(lambda: s.stats()["shared_bytes"] == 0, what="the segment dropped")


def test_segment_size_splits_one_send_into_several_sealed_segments():
    """Two 64 KiB bodies fill a 128 KiB segment: the eight bodies of one send go out in four
    segments, all announced before the bodies that name them."""
    with DissociatedServer(ints, body_mode="shared", seal_segments=True,
                           segment_size=128 << 10) as s:
        with connect(s.uri, b"ints", timeout=TIMEOUT) as reader:
            batches = list(reader)
            per_batch = [{mapping_of(buf.address)[:2] for buf in body_buffers(b)}
                         for b in batches]
            assert all(len(m) == 1 for m in per_batch)
            assert len(set.union(*per_batch)) == 4
            assert pa.Table.from_batches([pa.record_batch(b) for b in batches]).equals(INTS)


def test_the_server_cannot_write_a_segment_once_it_is_announced():
    """Once announced, the segment's bytes are final: writing through the descriptor the server
    keeps, or mapping it writable, fails (the kernel's F_SEAL_WRITE), and the client's views keep
    the values they were sent."""
    with DissociatedServer(ints, body_mode="shared", seal_segments=True) as s:
        with connect(s.uri, b"ints", timeout=TIMEOUT) as reader:
            batches = list(reader)
            (conn,) = s._connections
            segments = list(conn.arena.segments.values())
            assert segments and all(seg.sealed and seg.mapping is None for seg in segments)
            for seg in segments:
                seals = fcntl.fcntl(seg.fd, fcntl.F_GET_SEALS)
                assert seals & fcntl.F_SEAL_WRITE and seals & fcntl.F_SEAL_SHRINK
                with pytest.raises(PermissionError):
                    os.pwrite(seg.fd, b"\xff" * 64, 0)
                with pytest.raises(OSError):
                    map_segment(seg.fd, seg.size, True, False)
                with pytest.raises(OSError):
                    os.ftruncate(seg.fd, 0)
            assert pa.Table.from_batches([pa.record_batch(b) for b in batches]).equals(INTS)


# -- a scripted server: bodies placed by the test in one segment -----------------------------------

TWO = pa.table({"i": pa.array(range(300), pa.int64()),
                "s": [f"value-{i}" for i in range(300)]}).to_batches(max_chunksize=150)
GARBAGE = (0).to_bytes(4, "little") + (1 << 28).to_bytes(4, "little")   # offsets far apart


def two_bodies(place, *, write_sealed: bool = True, size: int | None = None,
               after=None):
    """A script sending TWO's batches as type-1 bodies in one announced segment (form 3, two
    bodies): place(i, body_length) gives body i's offset; `after(fd, mapping)` runs once the
    stream is sent (the hostile part)."""
    def script(t):
        ours = arrowipc.table(pa.Table.from_batches(TWO))
        enc = MessageEncoder(ours.schema)
        t.send_message([wire.metadata_prefix(1, 0), memoryview(enc.schema_message())[8:]])
        msgs = [m for b in ours.to_batches() for m in enc.batch_messages(b)]
        offsets = [place(i, m.body_length) for i, m in enumerate(msgs)]
        seg_size = size or max(off + m.body_length for off, m in zip(offsets, msgs))
        fd = os.memfd_create("hostile", os.MFD_ALLOW_SEALING)
        os.ftruncate(fd, seg_size)
        mapping = map_segment(fd, seg_size, True, False)
        for off, m in zip(offsets, msgs):
            if off + m.body_length <= seg_size:
                mapping.write_parts(off, m.parts)
        seals = fcntl.F_SEAL_SHRINK | fcntl.F_SEAL_GROW
        if write_sealed:
            mapping.close()
            seals |= fcntl.F_SEAL_WRITE
        fcntl.fcntl(fd, fcntl.F_ADD_SEALS, seals)
        t.send_frame(wire.FRAME_SEGMENT, 0, [tp.segment_payload(0, seg_size, bodies=2)], fd=fd)
        for seq, (off, m) in enumerate(zip(offsets, msgs), start=1):
            pairs = [(off + o if n else off, n) for o, n in m.spans]
            t.send_message([wire.metadata_prefix(1, seq), memoryview(m.metadata)[8:]])
            t.send_tagged(wire.body_tag(seq, 1), [wire.encode_shared_body(m.body_length, pairs)])
        t.send_message([wire.end_of_stream_message(len(msgs) + 1)])
        t.send_frame(wire.FRAME_STREAM_END, 0, [])
        try:
            if after is not None:
                after(fd, mapping)
        finally:
            os.close(fd)
    return script


def one_after_another(i, length):
    return 0 if i == 0 else (length + 4095) // 4096 * 4096 * i + 128


def test_a_write_sealed_segment_from_another_server_is_zero_copy_and_stays_final():
    outcome = []

    def try_to_write(fd, mapping):
        for attempt in (lambda: os.pwrite(fd, GARBAGE, 0),
                        lambda: map_segment(fd, 1 << 16, True, False)):
            try:
                attempt()
                outcome.append("written")
            except OSError:
                outcome.append("refused")

    with FakeServer(two_bodies(one_after_another, after=try_to_write)) as fake:
        with connect(fake.uri, b"t", timeout=TIMEOUT) as reader:
            batches = list(reader)
            wait_until(lambda: len(outcome) == 2, what="the server's write attempts")
            assert outcome == ["refused", "refused"]
            buffers = [buf for b in batches for buf in body_buffers(b)]
            assert {type(buf.base).__name__ for buf in buffers} == {"SharedBody"}
            assert len({mapping_of(buf.address)[:2] for buf in buffers}) == 1
            assert [pa.record_batch(b) for b in batches] == TWO
    assert fake.error is None


def test_an_unsealed_segment_of_many_bodies_is_copied_and_a_rewrite_changes_nothing():
    """The server keeps its writable mapping (no F_SEAL_WRITE) and rewrites the segment after
    the client exported the batches to pyarrow: the client had copied every body."""
    read_done, rewritten = threading.Event(), threading.Event()

    def rewrite(fd, mapping):
        read_done.wait(TIMEOUT)
        mapping.write_parts(0, [GARBAGE * (mapping.size // 8)])
        rewritten.set()

    with FakeServer(two_bodies(one_after_another, write_sealed=False, after=rewrite)) as fake:
        with connect(fake.uri, b"t", timeout=TIMEOUT) as reader:
            batches = list(reader)
            exported = [pa.record_batch(b) for b in batches]
            for b in batches:
                for buf in body_buffers(b):
                    assert type(buf.base).__name__ != "SharedBody"
                    assert mapping_of(buf.address)[3].find("memfd:hostile") < 0
            read_done.set()
            assert rewritten.wait(TIMEOUT)
            assert [b.column(1).to_pylist() for b in exported] == \
                [b.column(1).to_pylist() for b in TWO]
    assert fake.error is None


@pytest.mark.parametrize("place, size, expected", [
    # body 2 starts inside body 1
    (lambda i, n: 0 if i == 0 else 64, None,
     r"sequence 2: region \[64, 64\+\d+\) overlaps the body at \[0, \d+\) in segment 0 of "
     r"connection"),
    # body 2 is exactly body 1 again
    (lambda i, n: 0, None, r"sequence 2: region \[0, 0\+\d+\) overlaps the body at \[0, \d+\) "
                           r"in segment 0"),
    # body 2 runs past the end of the segment
    (lambda i, n: 0 if i == 0 else 8192 - 64, 8192,
     r"sequence 2: region \[8128, 8128\+\d+\) lies outside the 8192-byte segment 0 of connection"),
])
def test_body_regions_outside_or_overlapping_in_a_segment_are_refused(place, size, expected):
    with FakeServer(two_bodies(place, size=size)) as fake:
        with connect(fake.uri, b"t", timeout=TIMEOUT) as reader:
            with pytest.raises(ArrowInvalid, match=expected):
                list(reader)


def test_a_segment_of_counted_bodies_is_forgotten_once_they_are_placed():
    """Announced with two bodies, the segment leaves the client's table after the second (so a
    third body pointing into it is an error: the segment is unknown by then)."""
    with FakeServer(two_bodies(one_after_another)) as fake:
        with connect(fake.uri, b"t", timeout=TIMEOUT) as reader:
            channel = reader._client.channels[0]
            first = reader.read_next_batch()
            assert list(channel.segments.mappings) == [0]
            second = reader.read_next_batch()
            assert channel.segments.mappings == {} and channel.segments.mapped_bytes == 0
            assert [pa.record_batch(first), pa.record_batch(second)] == TWO


@pytest.mark.parametrize("tail, expected", [
    (b"", "form 3\\) has 0 bytes after its form; expected 4"),
    ((0).to_bytes(4, "little"), "holds 0 bodies; expected at least 1"),
    ((2).to_bytes(4, "little") + b"x", "has 5 bytes after its form"),
])
def test_segment_frames_counting_bodies_are_checked(tail, expected):
    from arrowipc._core.buffer import py_buffer
    payload = (7).to_bytes(8, "little") + (4096).to_bytes(8, "little") + bytes([3]) + tail
    with pytest.raises(ArrowInvalid, match=f"segment frame 7 .*{expected}"):
        tp.parse_segment(py_buffer(payload))
    assert tp.parse_segment(py_buffer(tp.segment_payload(7, 4096, bodies=5))) == (7, 4096, None, 5)
    assert tp.parse_segment(py_buffer(tp.segment_payload(7, 4096, bodies=1))) == (7, 4096, None, 1)
    assert tp.parse_segment(py_buffer(tp.segment_payload(7, 4096))) == (7, 4096, None, 0)
