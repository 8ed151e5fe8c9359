"""Type-1 bodies on a peer-memory connection (issue 20): process_vm_readv split over two threads,
small bodies through segments (ids from PEER_SEGMENT_BASE) beside large ones read from the
server's memory, and the reader copying the next large body while the caller holds a batch."""
import os
import threading

import numpy as np
import pyarrow as pa
import pytest

import arrowipc
from arrowipc._core.buffer import allocate, py_buffer
from arrowipc.dissociated import DissociatedServer, connect
from arrowipc.dissociated import _wire as wire
from arrowipc.dissociated import transport as tp
from arrowipc.dissociated._shm import peer_read, scatter_copy
from arrowipc.dissociated.reader import READ_AHEAD_BYTES
from arrowipc.dissociated.shm import PEER_SEGMENT_BASE, PeerLedger, address_of
from arrowipc.errors import ArrowInvalid
from arrowipc.ipc.writer import MessageEncoder
from dissociated_helpers import TIMEOUT, FakeServer, int_batches, read_fake, wait_until

UNMAPPED = 4096                    # page 1 of the address space: never mapped


# -- peer_read: two threads, one result ------------------------------------------------------------

def test_peer_read_over_two_threads_places_every_region_and_zeroes_the_gaps():
    """Over 8 MiB the read is split by bytes between two threads, through region boundaries and
    past the 1024 iovecs one system call takes; the result is the same as one copy."""
    rng = np.random.default_rng(7)
    source = rng.integers(0, 256, 24 << 20, dtype=np.uint8)
    base = py_buffer(source).address
    lengths = rng.integers(0, 24 << 10, 1500)
    regions, expected, src, dest = [], [], 0, 0
    for n in lengths.tolist():
        regions.append((base + src, n, dest))
        expected.append((src, n, dest))
        src += n + 64
        dest += n + (n % 3) * 8            # gaps here and there: zero in the result
    total = dest + 100
    assert total > 8 << 20 and len(regions) > 1024
    out = np.frombuffer(peer_read(os.getpid(), total, regions), dtype=np.uint8)
    want = np.zeros(total, dtype=np.uint8)
    for s, n, d in expected:
        want[d:d + n] = source[s:s + n]
    assert np.array_equal(out, want)


def _stale_block(size: int) -> int:
    """Leave a block of `size` bytes full of 0xFF in arrowipc's pool, so that the next
    allocation of that size gets those bytes back (nothing zeroes it unless asked); its address."""
    block = allocate(size, False)
    np.frombuffer(block, dtype=np.uint8)[:] = 0xFF
    address = block.address
    del block
    return address


@pytest.mark.parametrize("copy", ["peer_read", "scatter_copy"])
def test_a_copied_body_is_zero_wherever_no_region_lands_in_any_order_or_overlap(copy):
    """A body's copy is not zeroed first (the regions cover nearly all of it): the gaps between
    regions are zeroed after, whatever the order of the regions, and also when overlapping
    regions add up to the whole body and still leave gaps (the lengths' sum proves nothing)."""
    mib = 1 << 20
    total = 4 * mib + 192                       # a size no other test leaves in the pool
    source = np.random.default_rng(3).integers(1, 256, total, dtype=np.uint8)
    # (offset, length), shuffled; the fourth overlaps the fifth by 6096 bytes, and the lengths
    # add up to `total` while [1000, 2000) and the last 5096 bytes get nothing
    spans = [(3 * mib, mib - 4904), (0, 1000), (2 * mib, mib), (mib - 6096, mib + 6096),
             (2000, mib - 2000)]
    assert sum(n for _, n in spans) == total
    stale = _stale_block(total)
    if copy == "peer_read":
        # the same bytes twice over: every region from a place of its own in the peer's memory
        # (overlapping ones are refused there), the overlap the same bytes whichever lands last
        twice = np.concatenate([source, source])
        at = py_buffer(twice).address
        out = peer_read(os.getpid(), total, [(at + d + (i % 2) * total, n, d)
                                             for i, (d, n) in enumerate(spans)])
    else:
        out = scatter_copy(total, [(source[d:d + n], d) for d, n in spans])
    assert out.address == stale                 # the pool's block, 0xFF where nothing lands
    want = np.zeros(total, dtype=np.uint8)
    for d, n in spans:
        want[d:d + n] = source[d:d + n]
    got = np.frombuffer(out, dtype=np.uint8)
    assert np.array_equal(got, want)
    assert not got[1000:2000].any() and not got[total - 5096:].any()


def test_peer_read_refuses_regions_of_the_peers_memory_that_overlap():
    """Each byte of the server's memory comes once at most: one region named again and again
    would make a few bytes the server maps a body of any size (up to max_frame) here."""
    source = np.ones(1 << 16, dtype=np.uint8)
    base = py_buffer(source).address
    peer_read(os.getpid(), 8192, [(base + 4096, 4096, 0), (base, 4096, 4096)])   # adjacent: fine
    regions = [(base + 4096, 4096, 4096 * i) for i in range(64)]
    with pytest.raises(ArrowInvalid, match=rf"regions \[0x{base + 4096:x}, \+4096\) and "
                                           rf"\[0x{base + 4096:x}, \+4096\) of the memory of "
                                           rf"process {os.getpid()} overlap; each byte may be "
                                           rf"brought once"):
        peer_read(os.getpid(), 64 * 4096, regions)
    with pytest.raises(ArrowInvalid, match="overlap"):
        peer_read(os.getpid(), 8192, [(base + 100, 4096, 4096), (base, 4096, 0)])


def test_a_large_body_whose_columns_share_a_buffer_goes_as_bytes_and_reads_back():
    """Two columns of one array share their buffers: the server does not name the same memory
    twice (the client would refuse it) but sends that body as bytes."""
    values = pa.array(np.arange(1 << 20, dtype=np.int64))           # 8 MiB: the server's memory
    shared = pa.table({"a": values, "b": values})
    with DissociatedServer(lambda t: arrowipc.table(shared), body_mode="shared",
                           window_wait=3600.0) as s:
        with connect(s.uri, b"t", timeout=TIMEOUT) as reader:
            assert pa.table(reader.read_all()).equals(shared)
            assert reader._client.channels[0].peer_pid == os.getpid()
            (conn,) = s._connections
            assert conn.arena.blocks_allocated == 0                 # nothing from our memory


@pytest.mark.parametrize("where", ["first half", "second half"])
def test_peer_read_of_an_unmapped_region_in_either_thread_is_an_error(where):
    source = np.ones(16 << 20, dtype=np.uint8)
    base = py_buffer(source).address
    half = 8 << 20
    regions = [(base, half, 0), (base + half, half, half)]
    bad = 0 if where == "first half" else 1
    regions[bad] = (UNMAPPED, half, regions[bad][2])
    with pytest.raises(ArrowInvalid, match=f"reading {16 << 20} bytes from the memory of process "
                                           f"{os.getpid()} failed: Bad address"):
        peer_read(os.getpid(), 16 << 20, regions)


# -- small bodies through segments, large ones from the server's memory ----------------------------

MIXED = pa.concat_tables([int_batches(3, 1 << 13),       # 64 KiB bodies: segments
                          int_batches(2, 1 << 20, 1),    # 8 MiB bodies: the server's memory
                          int_batches(3, 1 << 13, 2)])


def test_a_peer_connection_sends_small_bodies_through_segments_and_large_ones_from_memory():
    from arrowipc.dissociated import server as server_module
    with DissociatedServer(lambda t: arrowipc.table(MIXED), body_mode="shared",
                           window_wait=3600.0) as s:
        with connect(s.uri, b"t", timeout=TIMEOUT) as reader:
            assert pa.table(reader.read_all()).equals(MIXED)
            assert reader._client.channels[0].peer_pid == os.getpid()
            (conn,) = s._connections
            assert isinstance(conn, server_module._Connection)
            assert isinstance(conn.arena, PeerLedger)
            assert conn.arena.blocks_allocated == 2                 # the two 8 MiB bodies
            assert conn.segment_arena is not None
            assert conn.segment_arena.blocks_allocated == 6         # the six 64 KiB bodies
            assert min(conn.segment_arena.segments) >= PEER_SEGMENT_BASE
            assert s.stats()["shared_bytes"] > 0
        wait_until(lambda: s.stats()["blocks_outstanding"] == 0, what="every body freed")


def test_peer_threshold_zero_reads_every_body_from_the_servers_memory():
    with DissociatedServer(lambda t: arrowipc.table(MIXED), body_mode="shared",
                           peer_threshold=0, window_wait=3600.0) as s:
        with connect(s.uri, b"t", timeout=TIMEOUT) as reader:
            assert pa.table(reader.read_all()).equals(MIXED)
            (conn,) = s._connections
            assert conn.arena.blocks_allocated == 8 and conn.segment_arena is None
            assert s.stats()["shared_bytes"] == 0


def test_small_bodies_of_a_peer_connection_cycle_through_at_most_8_mib_of_blocks():
    """The small-body segments keep a short window (2 x peer_threshold: 8 MiB here): 40 bodies of
    1 MiB each, read at once, never have more than 8 blocks outstanding, however far ahead the
    server could run (the connection's own window allows 64 bodies and 256 MiB)."""
    table = int_batches(40, (1 << 20) // 16)             # two 512 KiB buffers: 1 MiB bodies
    with DissociatedServer(lambda t: arrowipc.table(table), body_mode="shared",
                           window_wait=3600.0) as s:
        with connect(s.uri, b"t", timeout=TIMEOUT) as reader:
            assert pa.table(reader.read_all()).equals(table)
            (conn,) = s._connections
            arena = conn.segment_arena
            assert arena is not None and arena.window_bytes == 8 << 20
            assert arena.blocks_allocated == 40
            assert 1 <= arena.peak_outstanding <= 8
        wait_until(lambda: s.stats()["blocks_outstanding"] == 0, what="every body freed")


def test_the_small_body_window_follows_peer_threshold_within_its_floor_and_window_bytes():
    with DissociatedServer(lambda t: arrowipc.table(MIXED), body_mode="shared",
                           peer_threshold=16 << 20, window_bytes=48 << 20) as s:
        with connect(s.uri, b"t", timeout=TIMEOUT) as reader:
            assert pa.table(reader.read_all()).equals(MIXED)
            (conn,) = s._connections
            assert conn.segment_arena.window_bytes == 32 << 20      # 2 x 16 MiB
    with DissociatedServer(lambda t: arrowipc.table(MIXED), body_mode="shared",
                           peer_threshold=16 << 20, window_bytes=24 << 20) as s:
        with connect(s.uri, b"t", timeout=TIMEOUT) as reader:
            assert pa.table(reader.read_all()).equals(MIXED)
            (conn,) = s._connections
            assert conn.segment_arena.window_bytes == 24 << 20      # not 2 x 16 MiB
    with DissociatedServer(lambda t: arrowipc.table(MIXED), body_mode="shared",
                           peer_threshold=1 << 20) as s:
        with connect(s.uri, b"t", timeout=TIMEOUT) as reader:
            assert pa.table(reader.read_all()).equals(MIXED)
            (conn,) = s._connections
            assert conn.segment_arena.window_bytes == 4 << 20       # the floor, not 2 x 1 MiB


SHOWN = b"0123456789abcdef"             # the probe's bytes: alive for as long as the module


def peer_probe(t):
    t.send_frame(wire.FRAME_PEER, 0, [tp.peer_probe_payload(py_buffer(SHOWN).address, SHOWN)])


def peer_bodies(t, table, count: int | None = None):
    """Send the peer probe and `table`'s schema; yield (sequence, encoded message, pairs in this
    process's memory) for its first `count` batches."""
    peer_probe(t)
    enc = MessageEncoder(table.schema)
    t.send_message([wire.metadata_prefix(1, 0), memoryview(enc.schema_message())[8:]])
    for seq, b in enumerate(table.to_batches()[:count], 1):
        (m,) = enc.batch_messages(b)
        yield seq, m, PeerLedger().hand_out(m.parts, m.spans, m.body_length, seq)


def test_a_body_mixing_server_memory_and_segment_addresses_is_refused():
    ours = arrowipc.table(int_batches(1, 64))

    def script(t):
        ((_, m, pairs),) = peer_bodies(t, ours)
        assert pairs
        (address, n) = pairs[-1]
        pairs[-1] = (address_of(PEER_SEGMENT_BASE, 0), n)     # the last buffer "in a segment"
        t.send_message([wire.metadata_prefix(1, 1), memoryview(m.metadata)[8:]])
        t.send_tagged(wire.body_tag(1, 1), [wire.encode_shared_body(m.body_length, pairs)])
        t.send_message([wire.end_of_stream_message(2)])
        t.send_frame(wire.FRAME_STREAM_END, 0, [])

    with pytest.raises(ArrowInvalid, match="type-1 body of sequence 1 mixes addresses in the "
                                           "server's memory with addresses in shared segments"):
        read_fake(script)


# -- reading ahead -------------------------------------------------------------------------------

LARGE = int_batches(3, READ_AHEAD_BYTES // 8 + 1000)       # bodies just over READ_AHEAD_BYTES


def large_peer_stream(bad_sequence: int | None = None):
    """A fake server's script: every body of LARGE as addresses in this process's memory (the
    body `bad_sequence` at an unmapped page), all sent before the client reads a batch."""
    sent = threading.Event()
    ours = arrowipc.table(LARGE)

    def script(t):
        seq = 0
        for seq, m, pairs in peer_bodies(t, ours):
            assert pairs and m.body_length >= READ_AHEAD_BYTES
            if seq == bad_sequence:
                # unmapped pages, one region apart (overlapping ones are refused before)
                pairs = [(UNMAPPED + i * (64 << 20) if n else a, n)
                         for i, (a, n) in enumerate(pairs)]
            t.send_message([wire.metadata_prefix(1, seq), memoryview(m.metadata)[8:]])
            t.send_tagged(wire.body_tag(seq, 1), [wire.encode_shared_body(m.body_length, pairs)])
        t.send_message([wire.end_of_stream_message(seq + 1)])
        t.send_frame(wire.FRAME_STREAM_END, 0, [])
        sent.set()

    return script, sent


def test_the_reader_copies_the_next_large_body_while_the_caller_holds_a_batch():
    script, sent = large_peer_stream()
    with FakeServer(script) as fake:
        with connect(fake.uri, b"t", timeout=TIMEOUT) as reader:
            assert sent.wait(TIMEOUT)
            first = reader.read_next_batch()
            ahead = reader._ahead
            assert ahead is not None and ahead.body is reader._bodies[reader._next]
            rest = list(reader)
            assert reader._ahead is None
            assert pa.Table.from_batches([pa.record_batch(b) for b in [first, *rest]]).equals(
                LARGE)
            # the body read ahead is a copy of its own (not a view of anything the server holds)
            assert all(b.column(0).buffers()[1].address % 64 == 0 for b in rest)
    frees = [a for f in fake.received if f.kind == wire.FRAME_TAGGED and f.tag == 2
             for a in wire.parse_free_data(f.payload)]
    assert len(frees) >= 3                       # every body's addresses came back


def test_a_bad_body_read_ahead_fails_in_its_turn_after_the_batch_before_it():
    script, sent = large_peer_stream(bad_sequence=2)
    with FakeServer(script) as fake:
        with connect(fake.uri, b"t", timeout=TIMEOUT) as reader:
            assert sent.wait(TIMEOUT)
            first = reader.read_next_batch()             # returned whole: its copy was fine
            assert pa.record_batch(first).equals(LARGE.to_batches()[0])
            assert reader._ahead is not None              # the bad one is being read already
            with pytest.raises(ArrowInvalid, match=f"memory of process {os.getpid()} failed: "
                                                   f"Bad address"):
                reader.read_next_batch()


def test_a_frame_cut_short_after_a_large_body_does_not_hold_back_the_batch_before_it():
    """Reading ahead takes only whole frames: the batch already here is returned at once, and the
    rest of the stream is read when it comes."""
    go = threading.Event()
    ours = arrowipc.table(LARGE)

    def script(t):
        frames = []
        for seq, m, pairs in peer_bodies(t, ours, 2):
            meta = bytes(memoryview(m.metadata)[8:])
            frames.append(wire.frame_header(wire.FRAME_MESSAGE, 0, 5 + len(meta)) +
                          bytes(wire.metadata_prefix(1, seq)) + meta)
            shared = bytes(wire.encode_shared_body(m.body_length, pairs))
            frames.append(wire.frame_header(wire.FRAME_TAGGED, wire.body_tag(seq, 1),
                                            len(shared)) + shared)
        rest = b"".join(frames[2:])
        t.sock.sendall(b"".join(frames[:2]) + rest[:10])     # batch 1, then 10 bytes of batch 2
        assert go.wait(TIMEOUT)
        t.sock.sendall(rest[10:])
        t.send_message([wire.end_of_stream_message(3)])
        t.send_frame(wire.FRAME_STREAM_END, 0, [])

    with FakeServer(script) as fake:
        with connect(fake.uri, b"t", timeout=TIMEOUT) as reader:
            first = reader.read_next_batch()
            assert reader._deferred is None          # no wait ran into the timeout
            go.set()
            second = reader.read_next_batch()
            assert list(reader) == []
    assert pa.Table.from_batches([pa.record_batch(first), pa.record_batch(second)]).equals(
        pa.Table.from_batches(LARGE.to_batches()[:2]))
