"""The server's send path for batches held in memory: the worker reads the client's frames itself
(free_data above all) while the receiver sleeps, a protocol error it reads is refused as the
receiver would, batches from a generator leave every frame to the receiver; the bodies of a
gathered send are copied into shared memory at its flush."""
import threading

import pyarrow as pa
import pytest

import arrowipc
from arrowipc.dissociated import DissociatedServer, connect
from arrowipc.dissociated import _wire as wire
from arrowipc.dissociated import server as server_module
from arrowipc.dissociated import transport as tp
from arrowipc.dissociated.shm import SharedArena, address_of
from dissociated_helpers import TIMEOUT, int_batches, protocol_error, raw_connection, wait_until

MIB_BATCHES = int_batches(24, 1 << 16)     # 1 MiB bodies: three windows of WINDOW
WINDOW = 8


@pytest.fixture
def free_readers(monkeypatch):
    """Per free_data frame the server handles, whether its worker thread read it."""
    seen = []
    real = server_module._Connection._handle

    def recording(self, frame):
        if frame.kind == wire.FRAME_TAGGED and frame.tag == self.server.free_data:
            seen.append(threading.current_thread() is self.worker)
        return real(self, frame)

    monkeypatch.setattr(server_module._Connection, "_handle", recording)
    return seen


def _serve(source, **options):
    return DissociatedServer(source, body_mode="shared", peer_memory=False, window=WINDOW,
                             window_wait=30, **options)


def test_the_worker_reads_the_frees_of_batches_it_sends_from_memory(free_readers):
    table = arrowipc.table(MIB_BATCHES)
    with _serve(lambda t: table) as s:
        with connect(s.uri, b"t", timeout=TIMEOUT) as reader:
            assert pa.table(reader.read_all()).equals(MIB_BATCHES)
        # the window made the worker wait for frees at least once: it read them itself
        assert any(free_readers)
        wait_until(lambda: s.stats()["blocks_outstanding"] == 0, what="every block freed")
        assert s.stats()["blocks_allocated"] >= 20 and s.stats()["errors"] == 0


def test_batches_from_a_generator_leave_the_frees_to_the_receiver(free_readers):
    table = arrowipc.table(MIB_BATCHES)
    with _serve(lambda t: (table.schema, (b for b in table.to_batches()))) as s:
        with connect(s.uri, b"t", timeout=TIMEOUT) as reader:
            assert pa.table(reader.read_all()).equals(MIB_BATCHES)
        wait_until(lambda: s.stats()["blocks_outstanding"] == 0, what="every block freed")
    assert free_readers and not any(free_readers)


def test_a_protocol_error_the_worker_reads_is_refused_as_the_receiver_would(monkeypatch):
    monkeypatch.setattr(server_module, "_KEEPING_SECONDS", 3600.0)   # wait for our frees
    readers = []
    real = server_module._Connection._handle

    def recording(self, frame):
        readers.append((frame.kind, frame.tag, threading.current_thread() is self.worker))
        return real(self, frame)

    monkeypatch.setattr(server_module._Connection, "_handle", recording)
    table = arrowipc.table(MIB_BATCHES)
    with _serve(lambda t: table) as s:
        with raw_connection(s.unix_path) as t:
            t.send_frame(wire.FRAME_HELLO, 0, [tp.hello_payload(tp.HELLO_MEMFD)])
            t.send_frame(wire.FRAME_TAGGED, 1, [b"t"])
            # we free nothing: the server fills its window and waits, reading our frames
            wait_until(lambda: s.stats()["blocks_outstanding"] == WINDOW, what="a full window")
            t.send_frame(wire.FRAME_TAGGED, 99, [b"?"])
            text = protocol_error(t)
        assert text == ("protocol error: tagged message with tag 99; this server takes "
                        "want_data=1, 3 (metadata only), 4 (bodies only) and free_data=2")
        assert (wire.FRAME_TAGGED, 99, True) in readers
        wait_until(lambda: s.stats()["open_connections"] == 0, what="the client dropped")
        assert s.stats()["errors"] == 1 and s.stats()["blocks_outstanding"] == 0


def test_a_client_that_stops_reading_leaves_its_requests_to_the_receiver(monkeypatch):
    """A send waiting for the client to read hands the socket back to the receiver, so a flood
    of requests behind the stalled stream is refused while the client still reads nothing."""
    switches = []
    real = server_module._Connection._read_inline

    def recording(self, on):
        switches.append(on)
        return real(self, on)

    monkeypatch.setattr(server_module._Connection, "_read_inline", recording)
    big = arrowipc.table(int_batches(40, 50_000))        # 32 MB: more than the socket holds
    with DissociatedServer(lambda t: big, body_mode="bytes", max_queued_requests=3) as s:
        with raw_connection(s.unix_path) as t:
            t.send_frame(wire.FRAME_HELLO, 0, [tp.hello_payload(0)])
            t.send_frame(wire.FRAME_TAGGED, 1, [b"ticket"])
            bodies = 0
            while bodies < 12:                 # two gathered sends: the worker reads inline
                frame = t.receive()
                bodies += frame.kind == wire.FRAME_TAGGED
            assert True in switches
            # we stop reading: a send waits, and the receiver reads while it does
            for _ in range(5):
                t.send_frame(wire.FRAME_TAGGED, 1, [b"ticket"])
            wait_until(lambda: s.stats()["errors"] == 1, what="the flood refused")
            assert s.stats()["streams"] == 0
            text = protocol_error(t)
        assert "waiting behind the stream being served; the limits are 3 requests" in text


class _SegmentSink:
    """What SharedArena needs of a transport: somewhere to announce its segments."""

    def __init__(self):
        self.frames = []
        self.closed = False

    def send_frame(self, kind, tag, parts, fd=None, blocking=True):
        self.frames.append((kind, tag, parts))
        return True


def test_a_queued_body_is_copied_when_the_send_path_writes_it():
    arena = SharedArena(_SegmentSink())
    try:
        body = [b"x" * 100, b"\0" * 28, b"y" * 64]       # buffers of 100 and 64 bytes, padded
        spans = [(0, 100), (128, 0), (128, 64)]
        writes = []
        payload = arena.place(body, spans, 192, 7, writes)
        total, pairs = wire.parse_shared_body(payload, 7)
        base = address_of(0, 0)
        assert (total, pairs) == (192, [(base, 100), (base, 0), (base + 128, 64)])
        ((owner, block, parts),) = writes
        segment = arena.segments[0]
        assert segment.mapping.copy(0, 192).to_pybytes() == bytes(192)   # not copied yet
        owner.write(block, parts)
        assert segment.mapping.copy(0, 192).to_pybytes() == b"".join(body)
        assert arena.outstanding() == [(7, base, frozenset({base, base + 128}))]
    finally:
        arena.close()


@pytest.fixture
def bodies_per_send(monkeypatch):
    """The body frames of each of the server's sends that carry metadata (the client's sends of
    free_data carry none)."""
    sends = []
    real = tp.SocketTransport.send_frames

    def recording(self, frames, fd=None, blocking=True):
        if any(kind == wire.FRAME_MESSAGE for kind, _, _ in frames):
            sends.append(sum(kind == wire.FRAME_TAGGED for kind, _, _ in frames))
        return real(self, frames, fd, blocking)

    monkeypatch.setattr(tp.SocketTransport, "send_frames", recording)
    return sends


@pytest.mark.parametrize("body_mode, most", [("shared", 2), ("bytes", 4)])
def test_a_gathered_send_holds_2_mib_of_shared_bodies_or_4_mib_of_bytes(bodies_per_send,
                                                                        body_mode, most):
    """1 MiB bodies: two to a send when they are placed in shared memory (the first is still in
    the caches when the client copies it), four when the send carries them."""
    table = arrowipc.table(MIB_BATCHES)
    with DissociatedServer(lambda t: table, body_mode=body_mode, peer_memory=False,
                           window_wait=30) as s:
        with connect(s.uri, b"t", timeout=TIMEOUT) as reader:
            assert pa.table(reader.read_all()).equals(MIB_BATCHES)
    assert sum(bodies_per_send) == len(MIB_BATCHES.to_batches())
    assert max(bodies_per_send) == most
