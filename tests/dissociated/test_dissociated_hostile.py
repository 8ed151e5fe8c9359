"""A hostile or greedy peer (issue 20): a server that rewrites shared memory after sending it, a
sparse or oversized segment, a descriptor that is not a memfd; clients that flood requests or
never read; type-1 flow control by what the client frees."""
import os
import socket
import subprocess
import sys
import tempfile
import textwrap

import pyarrow as pa
import pytest

import arrowipc
from arrowipc.dissociated import DissociatedServer, connect
from arrowipc.dissociated import _wire as wire
from arrowipc.dissociated import transport as tp
from arrowipc.errors import ArrowInvalid
from dissociated_helpers import (TIMEOUT, FakeServer, int_batches, protocol_error,
                                 raw_connection, read_fake, send_stream, small_table,
                                 wait_until)

TESTS = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(TESTS))


# -- D1: memory the server can still write is never handed out -------------------------------------

REWRITE = textwrap.dedent("""
    import fcntl, os, sys, threading
    sys.path[:0] = [sys.argv[1], sys.argv[2], os.path.dirname(sys.argv[2])]
    import pyarrow as pa
    import arrowipc
    from arrowipc.dissociated import DissociatedServer, connect
    from arrowipc.dissociated import _wire as wire, transport as tp
    from arrowipc.dissociated._shm import map_segment
    from arrowipc.ipc.writer import MessageEncoder
    from dissociated_helpers import FakeServer

    mode = sys.argv[3]
    table = pa.table({"i": pa.array(range(2000), pa.int64()),
                      "s": [f"value-{i}" for i in range(2000)]})
    expected = table.column("s").to_pylist()
    rewrite, done = threading.Event(), threading.Event()
    GARBAGE = (0).to_bytes(4, "little") + (1 << 28).to_bytes(4, "little")
    outcome = []

    def hostile(t):
        ours = arrowipc.table(table)
        enc = MessageEncoder(ours.schema)
        t.send_message([wire.metadata_prefix(1, 0), memoryview(enc.schema_message())[8:]])
        (m,) = enc.batch_messages(ours.to_batches()[0])
        size = (m.body_length + 4095) // 4096 * 4096
        fd = os.memfd_create("hostile", os.MFD_ALLOW_SEALING)
        os.ftruncate(fd, size)
        mapping = map_segment(fd, size, True, True)
        mapping.write_parts(0, m.parts)
        seals = fcntl.F_SEAL_SHRINK | fcntl.F_SEAL_GROW
        if mode == "future-write":
            seals |= 0x10                   # F_SEAL_FUTURE_WRITE: our mapping stays writable
        if mode == "write-sealed":
            mapping.close()
            seals |= fcntl.F_SEAL_WRITE
        fcntl.fcntl(fd, fcntl.F_ADD_SEALS, seals)
        t.send_frame(wire.FRAME_SEGMENT, 0, [tp.segment_payload(0, size)], fd=fd)
        pairs = [(off if n else 0, n) for off, n in m.spans]
        t.send_message([wire.metadata_prefix(1, 1), memoryview(m.metadata)[8:]])
        t.send_tagged(wire.body_tag(1, 1), [wire.encode_shared_body(m.body_length, pairs)])
        t.send_message([wire.end_of_stream_message(2)])
        t.send_frame(wire.FRAME_STREAM_END, 0, [])
        rewrite.wait(10)
        if mode == "write-sealed":
            try:
                map_segment(fd, size, True, False)
                outcome.append("rewritten")
            except OSError:
                outcome.append("rewrite refused")
        else:
            mapping.write_parts(0, [GARBAGE * (size // 8)])   # offsets 256 MiB apart
            outcome.append("rewritten")
        os.close(fd)
        done.set()

    def rewrite_server_segments(server):
        for conn in list(server._connections):
            for seg in conn.arena.segments.values():
                seg.mapping.write_parts(0, [GARBAGE * (seg.size // 8)])
        outcome.append("rewritten")
        done.set()

    ours = arrowipc.table(table)

    def rewrite_served_batches():
        import ctypes
        for b in ours.to_batches():
            for column in b.columns:
                for buf in column.buffers():
                    if buf is not None and buf.size:
                        garbage = GARBAGE * (buf.size // 8)
                        ctypes.memmove(buf.address, garbage, len(garbage))
        outcome.append("rewritten")
        done.set()

    if mode == "server":
        peer = DissociatedServer(lambda t: arrowipc.table(table), body_mode="shared",
                                 peer_memory=False)
        uri = peer.uri
    elif mode == "peer":
        peer = DissociatedServer(lambda t: ours, body_mode="shared", peer_memory=True,
                                 peer_threshold=0)
        uri = peer.uri
    else:
        peer = FakeServer(hostile)
        uri = peer.uri
    reader = connect(uri, b"t", timeout=10)
    batch = reader.read_next_batch()
    exported = pa.record_batch(batch)              # pyarrow reads the memory without checks
    owner = type(batch.column(1).buffers()[2].base).__name__
    if mode == "server":
        rewrite_server_segments(peer)
    if mode == "peer":
        assert reader._client.channels[0].peer_pid is not None
        rewrite_served_batches()
    rewrite.set()
    done.wait(10)
    same = exported.column(1).to_pylist() == expected
    print(owner, outcome[0], same, sep="|", flush=True)
    list(reader)
    reader.close()
    peer.close()
""")


@pytest.mark.parametrize("mode, owner, outcome", [
    ("shrink-grow", "copied", "rewritten"),        # what the server used to send
    ("future-write", "copied", "rewritten"),       # F_SEAL_FUTURE_WRITE spares open mappings
    ("server", "copied", "rewritten"),             # our server's reused segments
    ("peer", "copied", "rewritten"),               # read from the server's own memory
    ("write-sealed", "SharedBody", "rewrite refused"),   # final bytes: zero copy
])
def test_a_server_rewriting_shared_memory_cannot_crash_a_consumer(mode, owner, outcome):
    """The hostile server rewrites the segment (string offsets included) after the consumer has
    exported the batch to pyarrow: in a subprocess, which must exit cleanly with the values it
    was sent."""
    p = subprocess.run([sys.executable, "-c", REWRITE, REPO, TESTS, mode], capture_output=True,
                       text=True, timeout=60)
    assert p.returncode == 0, (p.returncode, p.stderr[-2000:])
    got_owner, got_outcome, same = p.stdout.strip().split("|")
    assert (got_owner if got_owner == "SharedBody" else "copied") == owner
    assert got_outcome == outcome
    assert same == "True"


# -- D2: mapping costs no memory; the cap refuses what is too big --------------------------------

def rss_bytes() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def sealed_memfd(size: int) -> int:
    import fcntl
    fd = os.memfd_create("sparse", os.MFD_ALLOW_SEALING)
    os.ftruncate(fd, size)
    fcntl.fcntl(fd, fcntl.F_ADD_SEALS, fcntl.F_SEAL_SHRINK | fcntl.F_SEAL_GROW)
    return fd


def announce_then_stream(size: int):
    def script(t):
        fd = sealed_memfd(size)
        t.send_frame(wire.FRAME_SEGMENT, 0, [tp.segment_payload(0, size)], fd=fd)
        os.close(fd)
        send_stream(t, small_table())
    return script


def test_a_sparse_segment_costs_the_client_no_memory():
    size = 512 << 20
    with FakeServer(announce_then_stream(size)) as fake:
        before = rss_bytes()
        with connect(fake.uri, b"t", timeout=TIMEOUT) as reader:
            assert pa.table(reader.read_all()).equals(small_table())
            segments = reader._client.channels[0].segments
            assert segments.mapped_bytes == size          # mapped, not populated
            assert rss_bytes() - before < 32 << 20


def test_a_segment_above_the_mapping_cap_is_refused():
    with FakeServer(announce_then_stream(4 << 20)) as fake:
        with pytest.raises(ArrowInvalid, match=r"segment 0 has size 4194304, but 0 bytes are "
                                               r"mapped already and this connection maps at "
                                               r"most 1048576 \(max_mapped_bytes\)"):
            connect(fake.uri, b"t", timeout=TIMEOUT, max_mapped_bytes=1 << 20)


# -- D5: a descriptor that is not a memfd -----------------------------------------------------------

@pytest.mark.parametrize("kind", ["regular file", "pipe", "socket", "directory",
                                  "O_PATH of a sealed memfd"])
def test_a_descriptor_that_is_not_a_memfd_is_named(kind):
    def script(t):
        if kind == "pipe":
            fd, other = os.pipe()
            os.close(other)
        elif kind == "socket":
            one, other = socket.socketpair()
            other.close()
            fd = one.detach()
        elif kind == "directory":
            fd = os.open(tempfile.gettempdir(), os.O_RDONLY | os.O_DIRECTORY)
        elif kind.startswith("O_PATH"):
            import fcntl
            memfd = os.memfd_create("o-path", os.MFD_ALLOW_SEALING)
            os.ftruncate(memfd, 4096)
            fcntl.fcntl(memfd, fcntl.F_ADD_SEALS, fcntl.F_SEAL_SHRINK | fcntl.F_SEAL_GROW)
            fd = os.open(f"/proc/self/fd/{memfd}", os.O_PATH)
            os.close(memfd)
        else:
            fd, path = tempfile.mkstemp()
            os.unlink(path)
            os.ftruncate(fd, 4096)
        t.send_frame(wire.FRAME_SEGMENT, 0, [tp.segment_payload(7, 4096)], fd=fd)
        os.close(fd)
        t.shutdown()

    expected = "a regular file" if kind in ("regular file", "O_PATH of a sealed memfd") else \
        "not a file"
    with pytest.raises(ArrowInvalid, match=f"segment 7: its descriptor is not a memfd "
                                           f"\\({expected}; F_GET_SEALS failed: .*\\); "
                                           f"expected a sealed memfd"):
        read_fake(script)


# -- D3: a bounded request queue -------------------------------------------------------------------

BIG = int_batches(40, 50_000)          # 32 MB: more than the socket holds


def test_requests_queued_behind_a_stalled_stream_are_bounded():
    with DissociatedServer(lambda t: arrowipc.table(BIG), body_mode="bytes",
                           max_queued_requests=3) as s:
        with raw_connection(s.unix_path) as t:
            t.send_frame(wire.FRAME_HELLO, 0, [tp.hello_payload(0)])
            for _ in range(6):                 # one served (stalled: we do not read), then more
                t.send_frame(wire.FRAME_TAGGED, 1, [b"ticket"])
            text = protocol_error(t)
        assert "requests (" in text and "waiting behind the stream being served; the limits " \
            "are 3 requests and 16777216 bytes" in text
        wait_until(lambda: s.stats()["open_connections"] == 0, what="the flooding client gone")
        assert s.stats()["errors"] == 1


def test_queued_ticket_bytes_are_bounded():
    with DissociatedServer(lambda t: arrowipc.table(BIG), body_mode="bytes") as s:
        with raw_connection(s.unix_path) as t:
            t.send_frame(wire.FRAME_HELLO, 0, [tp.hello_payload(0)])
            t.send_frame(wire.FRAME_TAGGED, 1, [b"stalled"])
            for _ in range(2):
                t.send_frame(wire.FRAME_TAGGED, 1, [b"x" * (9 << 20)])
            assert "the limits are 8 requests and 16777216 bytes" in protocol_error(t)


# -- D4: windows and the server's budget ------------------------------------------------------------

MIB_BATCHES = int_batches(24, 1 << 16)   # 1 MiB bodies


def idle_client(path: str) -> socket.socket:
    """Asks for a stream over shared memory, then never reads."""
    t = tp.connect_unix(path, timeout=TIMEOUT)
    t.send_frame(wire.FRAME_HELLO, 0, [tp.hello_payload(tp.HELLO_MEMFD)])
    t.send_frame(wire.FRAME_TAGGED, 1, [b"t"])
    return t


def test_idle_clients_pin_at_most_their_window_and_the_budget():
    with DissociatedServer(lambda t: arrowipc.table(MIB_BATCHES), body_mode="shared",
                           window_bytes=2 << 20, shared_memory_budget=5 << 20,
                           window_wait=0.1) as s:
        idle = [idle_client(s.unix_path) for _ in range(4)]
        try:
            # each stream fills its window, waits in vain for frees, then sends bytes and
            # blocks on its full socket
            wait_until(lambda: s.stats()["blocks_allocated"] >= 5, what="windows filled")
            stats = s.stats()
            assert stats["shared_bytes"] <= 5 << 20
            assert stats["peak_outstanding_blocks"] <= 2
            # a reading client is still served in full (from peer memory, or as bytes: the
            # budget is taken)
            with connect(s.uri, b"t", timeout=TIMEOUT) as reader:
                assert pa.table(reader.read_all()).equals(MIB_BATCHES)
            assert s.stats()["shared_bytes"] <= 5 << 20
        finally:
            for t in idle:
                t.close()
        wait_until(lambda: s.stats()["open_connections"] == 0, what="idle clients gone")
        assert s.stats()["shared_bytes"] == 0 and s.stats()["blocks_outstanding"] == 0


@pytest.fixture
def patient_server(monkeypatch):
    """The server never gives up on a client's frees (no window_wait, no keeping timeout), so what
    goes through shared memory does not depend on how fast this machine schedules the client."""
    from arrowipc.dissociated import server as server_module
    monkeypatch.setattr(server_module, "_KEEPING_SECONDS", 3600.0)
    return {"window_wait": 3600.0}


def test_a_reading_client_keeps_the_window_moving(patient_server):
    """Copied-out bodies are freed as the client reads, so bodies keep going through shared
    memory while at most `window` are outstanding."""
    with DissociatedServer(lambda t: arrowipc.table(MIB_BATCHES), body_mode="shared",
                           window=3, **patient_server) as s:
        with connect(s.uri, b"t", timeout=TIMEOUT) as reader:
            kept = reader.read_all()               # kept: they are copies
        assert pa.table(kept).equals(MIB_BATCHES)
        stats = s.stats()
        assert stats["blocks_allocated"] >= 20 and stats["peak_outstanding_blocks"] <= 3


def test_a_client_keeping_zero_copy_batches_gets_the_rest_as_bytes():
    """Sealed segments stay outstanding while the batches live; past the window the server does
    not wait for frees that will not come (the client has read everything): bytes instead."""
    with DissociatedServer(lambda t: arrowipc.table(MIB_BATCHES), body_mode="shared",
                           seal_segments=True, window=3, window_wait=30) as s:
        with connect(s.uri, b"t", timeout=TIMEOUT) as reader:
            kept = list(reader)
        owners = [type(b.column(0).buffers()[1].base).__name__ for b in kept]
        assert owners.count("SharedBody") == 3
        assert pa.Table.from_batches([pa.record_batch(b) for b in kept]).equals(MIB_BATCHES)
        assert s.stats()["peak_outstanding_blocks"] <= 3
        del kept
        wait_until(lambda: s.stats()["blocks_outstanding"] == 0, what="sealed blocks freed")
        assert s.stats()["shared_bytes"] == 0      # one-body segments go with their body


# -- peer memory: one copy, straight from the server ---------------------------------------------

def test_peer_memory_bodies_are_read_from_the_server_and_freed(patient_server):
    with DissociatedServer(lambda t: arrowipc.table(MIB_BATCHES), body_mode="shared",
                           peer_memory=True, peer_threshold=0, window=4, **patient_server) as s:
        with connect(s.uri, b"t", timeout=TIMEOUT) as reader:
            kept = list(reader)
            assert reader._client.channels[0].peer_pid == os.getpid()   # the server is here
            values = kept[0].column(0).buffers()[1]
            assert type(values.base).__name__ != "SharedBody" and values.address % 64 == 0
            assert pa.Table.from_batches([pa.record_batch(b) for b in kept]).equals(MIB_BATCHES)
            stats = s.stats()
            assert stats["blocks_allocated"] >= 20 and stats["peak_outstanding_blocks"] <= 4
            assert stats["shared_bytes"] == 0                           # no segment at all
            wait_until(lambda: s.stats()["blocks_outstanding"] == 0, what="bodies freed")


def peer_probe(t, expected: bytes, shown: bytes):
    from arrowipc._core.buffer import py_buffer
    t.send_frame(wire.FRAME_PEER, 0, [tp.peer_probe_payload(py_buffer(shown).address,
                                                            expected)])


def test_a_probe_the_client_cannot_read_is_refused_and_bodies_come_as_bytes():
    shown = b"0123456789abcdef"

    def script(t):
        peer_probe(t, b"fedcba9876543210", shown)     # not what is at that address
        send_stream(t, small_table())

    with FakeServer(script) as fake:
        with connect(fake.uri, b"t", timeout=TIMEOUT) as reader:
            assert pa.table(reader.read_all()).equals(small_table())
            assert reader._client.channels[0].peer_pid is None
        wait_until(lambda: any(f.kind == wire.FRAME_PEER for f in fake.received),
                   what="the client's answer")
    replies = [f for f in fake.received if f.kind == wire.FRAME_PEER]
    assert [tp.parse_peer_reply(f.payload) for f in replies] == [False]


def test_a_peer_address_the_server_does_not_map_is_an_error():
    shown = b"0123456789abcdef"

    def script(t):
        from arrowipc.ipc.writer import MessageEncoder
        peer_probe(t, shown, shown)
        ours = arrowipc.table(small_table())
        enc = MessageEncoder(ours.schema)
        t.send_message([wire.metadata_prefix(1, 0), memoryview(enc.schema_message())[8:]])
        (m,) = enc.batch_messages(ours.to_batches()[0])
        pairs = [(4096 + off, n) for off, n in m.spans]    # page 1: never mapped
        t.send_message([wire.metadata_prefix(1, 1), memoryview(m.metadata)[8:]])
        t.send_tagged(wire.body_tag(1, 1), [wire.encode_shared_body(m.body_length, pairs)])
        t.send_message([wire.end_of_stream_message(2)])
        t.send_frame(wire.FRAME_STREAM_END, 0, [])

    with pytest.raises(ArrowInvalid, match=f"reading \\d+ bytes from the memory of process "
                                           f"{os.getpid()} failed: Bad address"):
        read_fake(script)


def test_a_peer_body_larger_than_a_frame_could_be_is_refused():
    """Reading from the server's memory allocates what the body claims: never more than the
    connection's frame limit, as if the bytes had come through the socket."""
    from arrowipc.dissociated import DissociatedClient
    with DissociatedServer(lambda t: arrowipc.table(MIB_BATCHES), body_mode="shared",
                           peer_threshold=0) as s:
        with DissociatedClient(s.uri, timeout=TIMEOUT, max_frame=1 << 19) as client:
            with pytest.raises(ArrowInvalid, match=r"type-1 body of sequence 1 has 1048576 "
                                                   r"bytes; this connection takes at most 524288"):
                list(client.read(b"t"))


def test_a_large_peer_claim_is_probed_before_anything_is_allocated():
    from arrowipc._core.buffer import py_buffer
    from arrowipc.dissociated._shm import peer_read
    small = b"x" * 4096
    before = rss_bytes()
    with pytest.raises(ArrowInvalid, match=f"memory of process {os.getpid()} failed: Bad address"):
        peer_read(os.getpid(), 1 << 40, [(py_buffer(small).address, 1 << 40, 0)])
    assert rss_bytes() - before < 64 << 20
    assert peer_read(os.getpid(), 4096, [(py_buffer(small).address, 4096, 0)]).to_pybytes() == \
        small
