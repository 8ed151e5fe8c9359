"""Malformed input found by fuzzing both sides (a server replaying a recorded session with
mutations; clients sending mutated, cut, oversized or out-of-order frames): each rule here is one
defect that was found, with the error it must give (type and message: what was expected, what
was found, where)."""
import os
import re
import struct
import subprocess
import sys
import textwrap

import pyarrow as pa
import pytest

import arrowipc
from arrowipc._core.buffer import py_buffer
from arrowipc.dissociated import DissociatedClient, DissociatedServer, connect
from arrowipc.dissociated import _wire as wire
from arrowipc.dissociated import transport as tp
from arrowipc.dissociated.shm import PeerLedger, SharedArena
from arrowipc.errors import ArrowInvalid
from arrowipc.ipc.options import IpcWriteOptions
from arrowipc.ipc.writer import MessageEncoder
from dissociated_helpers import (TIMEOUT, FakeServer, descriptors_named, int_batches,
                                 protocol_error, raw_connection, read_fake, small_table,
                                 wait_until)

TWO_COLUMNS = pa.table({"a": pa.array(range(1001), pa.int64()),
                        "b": pa.array(range(1001), pa.int64())})
REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SHOWN = b"0123456789abcdef"             # a peer probe's bytes: alive as long as the module


# -- a few flatbuffer offsets, to break one field of a real message --------------------------------

def _u16(buf: bytes, pos: int) -> int:
    return struct.unpack_from("<H", buf, pos)[0]


def field_position(buf: bytes, table: int, field: int) -> int:
    """Where field `field` of the flatbuffer table at byte `table` is stored."""
    vtable = table - struct.unpack_from("<i", buf, table)[0]
    entry = 4 + 2 * field
    assert entry < _u16(buf, vtable), f"field {field} is not in the table"
    offset = _u16(buf, vtable + entry)
    assert offset, f"field {field} is absent"
    return table + offset


def header_table(buf: bytes) -> int:
    """Where the Message's header table (field 2) starts."""
    root = struct.unpack_from("<I", buf, 0)[0]
    at = field_position(buf, root, 2)
    return at + struct.unpack_from("<I", buf, at)[0]


def patched(metadata: bytes, fmt: str, value: int, where) -> bytes:
    out = bytearray(metadata)
    struct.pack_into(fmt, out, where(bytes(out)), value)
    return bytes(out)


def body_length_at(buf: bytes) -> int:
    return field_position(buf, struct.unpack_from("<I", buf, 0)[0], 3)


def one_batch():
    """(encoder, the schema message, the batch's encoded message, its flatbuffer) of TWO_COLUMNS."""
    ours = arrowipc.table(TWO_COLUMNS)
    enc = MessageEncoder(ours.schema, IpcWriteOptions(alignment=64))
    schema = bytes(memoryview(enc.schema_message())[8:])
    (m,) = enc.batch_messages(ours.to_batches()[0])
    return schema, m, bytes(memoryview(m.metadata)[8:])


def stream_of(metadata: bytes, body_tag: int, body_parts, probe: bool = False):
    """A fake server's script: the schema, one batch with this metadata and body, the end."""
    schema, _, _ = one_batch()

    def script(t):
        if probe:
            t.send_frame(wire.FRAME_PEER, 0, [tp.peer_probe_payload(py_buffer(SHOWN).address,
                                                                    SHOWN)])
        t.send_message([wire.metadata_prefix(1, 0), schema])
        t.send_message([wire.metadata_prefix(1, 1), metadata])
        t.send_tagged(body_tag, body_parts(t))
        t.send_message([wire.end_of_stream_message(2)])
        t.send_frame(wire.FRAME_STREAM_END, 0, [])
    return script


# -- the client --------------------------------------------------------------------------------------

CLAIM = 64 << 20        # what the metadata claims; the regions bring 16016 bytes


def scattered_segment_pairs(m, total: int = CLAIM):
    """One pair per buffer, each in its own block of a segment (in reverse order: scattered)."""
    def parts(t):
        arena = SharedArena(t)
        body = b"".join(bytes(p) for p in m.parts)
        pairs = [None] * len(m.spans)
        for i in reversed(range(len(m.spans))):
            off, n = m.spans[i]
            block = arena.allocate(max(n, 1))
            arena.write(block, [body[off:off + n]])
            pairs[i] = (block.address, n)
        return [wire.encode_shared_body(total, pairs)]
    return parts


def peer_memory_pairs(m):
    """One pair per buffer, at the buffers' addresses in this (the server's) process."""
    def parts(t):
        pairs = PeerLedger().hand_out(m.parts, m.spans, m.body_length, 1)
        return [wire.encode_shared_body(CLAIM, pairs)]
    return parts


@pytest.mark.parametrize("where", ["segments", "peer memory"])
def test_type1_regions_far_short_of_the_body_length_are_refused_before_allocating(where):
    """Bytes of a body that no region brings would be zeros allocated here: only padding between
    buffers may be missing, or a bodyLength claim would allocate what the server never gave."""
    _, m, metadata = one_batch()
    metadata = patched(metadata, "<q", CLAIM, body_length_at)
    pairs = scattered_segment_pairs(m) if where == "segments" else peer_memory_pairs(m)
    with pytest.raises(ArrowInvalid, match=r"^type-1 body of sequence 1: its 4 regions bring 16016 "
                                           r"bytes of a 67108864-byte body; expected at most 320 "
                                           r"bytes of padding between them \(64 per buffer\), "
                                           r"found 67092848$"):
        read_fake(stream_of(metadata, wire.body_tag(1, 1), pairs, probe=where == "peer memory"))


def test_a_broken_record_batch_header_of_a_type1_body_names_its_sequence():
    _, m, metadata = one_batch()
    # the nodes vector (RecordBatch field 1) points far past the end of the metadata
    metadata = patched(metadata, "<I", 1 << 20, lambda b: field_position(b, header_table(b), 1))
    with pytest.raises(ArrowInvalid, match=r"^type-1 body of sequence 1: its metadata: flatbuffer "
                                           r"RecordBatch: .*beyond the \d+-byte metadata"):
        read_fake(stream_of(metadata, wire.body_tag(1, 1),
                             scattered_segment_pairs(m, m.body_length)))


def test_a_broken_dictionary_batch_header_of_a_type1_body_names_its_sequence():
    ours = arrowipc.table(pa.table({"d": pa.array(["x", "y", "x"]).dictionary_encode()}))
    enc = MessageEncoder(ours.schema)
    schema = bytes(memoryview(enc.schema_message())[8:])
    dictionary, _ = enc.batch_messages(ours.to_batches()[0])
    # the DictionaryBatch's data (field 1) points far past the end of the metadata
    metadata = patched(bytes(memoryview(dictionary.metadata)[8:]), "<I", 1 << 20,
                       lambda b: field_position(b, header_table(b), 1))

    def script(t):
        t.send_message([wire.metadata_prefix(1, 0), schema])
        t.send_message([wire.metadata_prefix(1, 1), metadata])
        t.send_tagged(wire.body_tag(1, 1), [wire.encode_shared_body(
            dictionary.body_length, [(0, dictionary.body_length)])])
        t.shutdown()

    with pytest.raises(ArrowInvalid, match=r"^type-1 body of sequence 1: its metadata: flatbuffer "
                                           r"DictionaryBatch: field 1 points to byte \d+, beyond "
                                           r"the \d+-byte metadata$"):
        read_fake(script)


def test_a_peer_read_that_fails_names_the_body_sequence():
    _, m, metadata = one_batch()

    def unmapped(t):
        return [wire.encode_shared_body(m.body_length, [(4096 + off, n) for off, n in m.spans])]

    with pytest.raises(ArrowInvalid, match=r"^type-1 body of sequence 1: reading 16016 bytes from "
                                           r"the memory of process \d+ failed: Bad address$"):
        read_fake(stream_of(metadata, wire.body_tag(1, 1), unmapped, probe=True))


@pytest.mark.parametrize("reserved", [1 << 32, 1 << 45, 1 << 55])
def test_a_body_tag_with_reserved_bits_set_is_refused_naming_the_tag(reserved):
    # bits 32-55 of a body tag MUST be 0: an otherwise good type-0 body is refused
    _, m, metadata = one_batch()
    tag = wire.body_tag(1, 0) | reserved
    with pytest.raises(ArrowInvalid, match=rf"body tag 0x{tag:016x} \(sequence 1\) has reserved "
                       rf"bits 32-55 set \(0x{reserved:016x}\); the protocol requires them to "
                       rf"be 0"):
        read_fake(stream_of(metadata, tag, lambda t: m.parts))
    # the same stream with a clean tag reads
    read_fake(stream_of(metadata, wire.body_tag(1, 0), lambda t: m.parts))


def test_a_batch_the_decoder_refuses_names_the_stream_once():
    _, m, metadata = one_batch()
    # the batch claims 5000 rows; its buffers hold 1001
    metadata = patched(metadata, "<q", 5000, lambda b: field_position(b, header_table(b), 0))
    with pytest.raises(ArrowInvalid) as info:
        read_fake(stream_of(metadata, wire.body_tag(1, 0), lambda t: m.parts))
    text = str(info.value)
    assert text.startswith("dissociated stream, sequence 1: ") and \
        text.count("dissociated stream") == 1, text


def test_a_check_run_when_a_column_is_taken_names_the_sequence():
    """A batch's O(n) checks run when a column is first taken, after the batch was handed out:
    what they raise names the message as the checks made while reading do."""
    ours = arrowipc.table(pa.table({"s": pa.array(["ab", "c"])}))
    enc = MessageEncoder(ours.schema, IpcWriteOptions(alignment=64))
    schema = bytes(memoryview(enc.schema_message())[8:])
    (m,) = enc.batch_messages(ours.to_batches()[0])
    body = bytearray(b"".join(bytes(memoryview(p)) for p in m.parts))
    offsets, _ = m.spans[1]                              # the offsets 0, 2, 3
    struct.pack_into("<i", body, offsets + 8, 100)       # the last past the 3 bytes of data

    def script(t):
        t.send_message([wire.metadata_prefix(1, 0), schema])
        t.send_message([wire.metadata_prefix(1, 1), bytes(memoryview(m.metadata)[8:])])
        t.send_tagged(wire.body_tag(1, 0), [bytes(body)])
        t.send_message([wire.end_of_stream_message(2)])
        t.send_frame(wire.FRAME_STREAM_END, 0, [])

    (batch,) = read_fake(script)
    with pytest.raises(ArrowInvalid, match=r"^dissociated stream, sequence 1: field 's': offsets: "
                                           r"last offset 100 is beyond the end of the data"):
        batch.column(0)


def test_a_metadata_version_error_does_not_name_a_byte_offset_it_does_not_know():
    _, m, metadata = one_batch()
    metadata = patched(metadata, "<h", 7, lambda b: field_position(
        b, struct.unpack_from("<I", b, 0)[0], 0))
    with pytest.raises(ArrowInvalid, match=r"^metadata message with sequence 1: message: metadata "
                                           r"version V8 is newer than V5, the newest this reader "
                                           r"understands$"):
        read_fake(stream_of(metadata, wire.body_tag(1, 0), lambda t: m.parts))


def test_a_timeout_between_frames_names_the_bytes_awaited():
    """A server that goes quiet after the schema: the wait is for a frame header (24 bytes), not
    for whatever room the read-ahead buffer has."""
    schema, _, _ = one_batch()

    def script(t):
        t.send_message([wire.metadata_prefix(1, 0), schema])    # then silence until we go

    with FakeServer(script) as fake:
        with pytest.raises(TimeoutError, match=r"no data \(expected 24 more bytes\) for 0.5 s"):
            with connect(fake.uri, b"t", timeout=0.5) as reader:
                list(reader)


@pytest.mark.parametrize("sent, expected", [
    (b"\xde\xad\xbe\xef" * 6, r"frame header version 173; expected 1"),
    (bytes([9, 1]) + bytes(22), r"unknown frame kind 9"),
    (bytes([5, 1]) + bytes(14) + struct.pack("<Q", 4) + bytes(4), r"segment frame has 4 bytes"),
    (bytes([8, 1]) + bytes(14) + struct.pack("<Q", 3) + bytes(3), r"peer memory frame has 3 bytes"),
    (bytes([4, 1]) + bytes(14) + struct.pack("<Q", 1) + bytes(1), r"error frame has 1 bytes"),
])
def test_a_malformed_frame_names_the_connection_it_came_on(sent, expected):
    def script(t):
        t.sock.sendall(sent)
        t.shutdown()

    with FakeServer(script) as fake:
        # "unix PATH: ..." (the transport) or "connection arrowipc+unix://PATH: ..." (the reader)
        with pytest.raises(ArrowInvalid, match=f"^(unix |connection arrowipc\\+unix://)"
                                               f"{re.escape(fake.path)}: {expected}"):
            with connect(fake.uri, b"t", timeout=TIMEOUT) as reader:
                list(reader)


# -- the server --------------------------------------------------------------------------------------

def test_a_client_whose_stream_send_times_out_is_dropped_and_its_blocks_released():
    """The server gives up on a client that stopped reading (send_timeout): it sends nothing more
    there, so the connection ends and the client's shared memory goes back at once (not when the
    client finally closes)."""
    big = arrowipc.table(int_batches(40, 50_000))          # 16 MB: more than the socket holds
    with DissociatedServer(lambda t: big, body_mode="shared", peer_memory=False, window=4,
                           window_wait=0.1, send_timeout=0.5) as s:
        with raw_connection(s.unix_path) as t:
            t.send_frame(wire.FRAME_HELLO, 0, [tp.hello_payload(tp.HELLO_MEMFD)])
            t.send_frame(wire.FRAME_TAGGED, 1, [b"t"])
            wait_until(lambda: s.stats()["blocks_allocated"] >= 4, what="the window filled")
            wait_until(lambda: s.stats()["open_connections"] == 0,
                       what="the stalled client dropped")
            stats = s.stats()
            assert stats["shared_bytes"] == 0 and stats["blocks_outstanding"] == 0


EMFILE = textwrap.dedent("""
    import os, resource, socket, sys
    sys.path[:0] = [sys.argv[1]]
    import arrowipc
    from arrowipc.dissociated import DissociatedServer, connect
    table = arrowipc.table({"a": [1, 2, 3]})
    with DissociatedServer(lambda ticket: table, body_mode="bytes") as s:
        clients = [socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) for _ in range(40)]
        # 10 descriptors to spare: the server runs out of them while accepting the 40 clients
        spare = len(os.listdir("/proc/self/fd")) + 10
        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        resource.setrlimit(resource.RLIMIT_NOFILE, (spare, hard))
        for c in clients:
            c.connect(s.unix_path)
        # wait until the server has taken all it could (the count stays put for a second)
        import time
        counts = []
        while len(counts) < 5 or len(set(counts[-5:])) > 1:
            counts.append(s.stats()["connections"])
            time.sleep(0.2)
        assert counts[-1] < len(clients), counts
        for c in clients:
            c.close()
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
        with connect(s.uri, b"t", timeout=float(sys.argv[2])) as reader:
            print(reader.read_all().column(0).to_pylist())
""")


def test_a_server_out_of_descriptors_goes_on_accepting_once_they_are_back():
    """accept() failing for want of descriptors (EMFILE) stopped the server for good: every
    later client waited in the backlog until its timeout."""
    out = subprocess.run([sys.executable, "-c", EMFILE, REPO, str(TIMEOUT)], capture_output=True,
                         text=True, timeout=6 * TIMEOUT)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[1, 2, 3]"


def test_a_connection_that_gets_no_thread_is_refused_alone(monkeypatch):
    from arrowipc.dissociated import server as server_module
    table = arrowipc.table(int_batches(1, 10))
    start = server_module._Connection.start
    refused = []

    def no_thread_for_the_first(conn):
        if not refused:
            refused.append(conn)
            raise RuntimeError("can't start new thread")
        start(conn)

    monkeypatch.setattr(server_module._Connection, "start", no_thread_for_the_first)
    with DissociatedServer(lambda ticket: table, body_mode="bytes") as s:
        with pytest.raises(ArrowInvalid):
            with connect(s.uri, b"t", timeout=TIMEOUT) as reader:
                list(reader)
        with connect(s.uri, b"t", timeout=TIMEOUT) as reader:
            assert pa.table(reader.read_all()).equals(pa.table(int_batches(1, 10)))
        wait_until(lambda: s.stats()["open_connections"] == 0, what="both clients gone")


def test_a_long_free_data_list_costs_the_server_little_beyond_its_bytes():
    """A free_data message may be as long as any request (16 MiB: two million addresses). Read as
    one list of Python ints it cost the server about 80 MiB of objects per message and client
    (20 MiB for the 4 MiB here); the addresses are now taken in pieces."""
    import tracemalloc
    count = (4 << 20) // 8                              # half a million addresses
    payload = struct.pack("<Q", 12345) * count          # made before tracing starts
    with DissociatedServer(lambda ticket: None, body_mode="shared") as s:
        with raw_connection(s.unix_path) as t:
            t.send_frame(wire.FRAME_HELLO, 0, [tp.hello_payload(tp.HELLO_MEMFD)])
            tracemalloc.start()
            try:
                t.send_frame(wire.FRAME_TAGGED, 2, [payload])
                wait_until(lambda: s.stats()["unknown_frees"] == count, timeout=6 * TIMEOUT,
                           what="the frees counted (slow while tracing)")
                peak = tracemalloc.get_traced_memory()[1]
            finally:
                tracemalloc.stop()
    assert peak < 2 << 20, f"{peak} bytes of Python objects for one free_data message"


@pytest.mark.parametrize("before", ["hello", "request"])
def test_a_hello_after_a_hello_or_a_request_is_a_protocol_error(before):
    """A second hello used to send a second peer probe (whose answer was then refused as 'a
    reply without a probe') and could change what the client maps in the middle of a stream."""
    table = arrowipc.table(int_batches(1, 10))
    with DissociatedServer(lambda ticket: table, body_mode="bytes") as s:
        with raw_connection(s.unix_path) as t:
            if before == "hello":
                t.send_frame(wire.FRAME_HELLO, 0, [tp.hello_payload(0)])
            else:
                t.send_frame(wire.FRAME_TAGGED, 1, [b"t"])
            t.send_frame(wire.FRAME_HELLO, 0, [tp.hello_payload(tp.HELLO_MEMFD | tp.HELLO_PEER)])
            assert protocol_error(t) == ("protocol error: hello frame after a hello or a "
                                         "request; expected one hello, before the first request")
        with connect(s.uri, b"t", timeout=TIMEOUT) as reader:
            assert pa.table(reader.read_all()).equals(pa.table(int_batches(1, 10)))


def test_a_refused_client_that_never_stops_sending_is_let_go():
    """After a protocol error the server reads what the client still sends, for a while: not
    for as long as the client keeps sending."""
    import threading
    with DissociatedServer(lambda ticket: None, body_mode="bytes") as s:
        with raw_connection(s.unix_path) as t:
            t.sock.sendall(b"\xff" * 24)                   # a bad frame header: refused
            assert protocol_error(t).startswith("protocol error: ")
            stop = threading.Event()

            def flood():
                while not stop.is_set():
                    try:
                        t.sock.send(b"\x00" * 4096)
                    except BlockingIOError:
                        stop.wait(0.001)
                    except OSError:
                        return

            sender = threading.Thread(target=flood, daemon=True)
            sender.start()
            try:
                wait_until(lambda: s.stats()["open_connections"] == 0,
                           what="the flooding client let go")
            finally:
                stop.set()
                sender.join(TIMEOUT)


@pytest.mark.parametrize("kind", ["fifo", "symlink"])
def test_a_named_segment_that_is_not_a_plain_file_is_refused_without_waiting(kind):
    """Opening a FIFO a server left under /dev/shm waited for a writer forever (the client's
    timeout did not apply); a symlink could lead the client to any file of its own."""
    import tempfile
    name = f"arrowipc-malformed-{kind}-{os.getpid()}"
    path = os.path.join("/dev/shm", name)
    target = None
    if kind == "fifo":
        os.mkfifo(path)
        expected = f"shared segment '{name}' is not a regular file; expected a file the server " \
                   f"created under /dev/shm"
    else:
        fd, target = tempfile.mkstemp()
        os.write(fd, bytes(4096))
        os.close(fd)
        os.symlink(target, path)
        expected = f"cannot open shared segment '{name}': .*symbolic links"

    def script(t):
        t.send_frame(wire.FRAME_SEGMENT, 0, [tp.segment_payload(0, 4096, name)])
        t.shutdown()

    try:
        with pytest.raises(ArrowInvalid, match=expected):
            read_fake(script)
    finally:
        os.unlink(path)
        if target is not None:
            os.unlink(target)


@pytest.mark.parametrize("kind", [wire.FRAME_ERROR, wire.FRAME_SEGMENT, wire.FRAME_PEER,
                                  wire.FRAME_STREAM_END])
def test_a_control_frame_longer_than_any_could_be_is_refused_before_it_is_read(kind):
    """An error frame of 1 GiB (the server cuts its texts at 64 KiB) was read whole, copied and
    decoded into the exception's message."""
    claim = tp.MAX_CONTROL_PAYLOAD + 1

    def script(t):
        t.sock.sendall(bytes([kind, 1]) + bytes(14) + struct.pack("<Q", claim))
        t.shutdown()

    name = wire.FRAME_KIND_NAMES[kind]
    with FakeServer(script) as fake:
        with pytest.raises(ArrowInvalid, match=f"^unix {re.escape(fake.path)}: {name} frame claims "
                                               f"{claim} bytes; control frames carry at most "
                                               f"{tp.MAX_CONTROL_PAYLOAD}$"):
            with connect(fake.uri, b"t", timeout=TIMEOUT) as reader:
                list(reader)


def test_a_client_control_frame_longer_than_any_could_be_gets_a_protocol_error():
    with DissociatedServer(lambda ticket: None, body_mode="bytes") as s:
        with raw_connection(s.unix_path) as t:
            t.sock.sendall(bytes([wire.FRAME_HELLO, 1]) + bytes(14) + struct.pack("<Q", 2 << 20))
            assert protocol_error(t) == ("protocol error: dissociated client connection: hello "
                                         "frame claims 2097152 bytes; control frames carry at "
                                         "most 1048576")


def test_a_descriptor_a_client_sends_with_a_segment_frame_is_closed():
    """A client's descriptor that came with a segment frame (which clients may not send) was
    popped from the transport and never closed: each one leaked a descriptor of the server."""
    import array
    import socket
    name = f"malformed-client-{os.getpid()}"
    with DissociatedServer(lambda ticket: None, body_mode="bytes") as s:
        with raw_connection(s.unix_path) as t:
            fd = os.memfd_create(name)
            try:
                header = bytes([wire.FRAME_SEGMENT, 1]) + bytes(14) + struct.pack("<Q", 0)
                t.sock.sendmsg([header], [(socket.SOL_SOCKET, socket.SCM_RIGHTS,
                                          array.array("i", [fd]))])
            finally:
                os.close(fd)
            assert protocol_error(t) == ("protocol error: unexpected segment frame from a "
                                         "client")
        wait_until(lambda: s.stats()["open_connections"] == 0, what="the client gone")
        assert descriptors_named(name) == []


def test_a_descriptor_that_came_with_a_malformed_segment_frame_is_closed():
    name = f"malformed-server-{os.getpid()}"

    def script(t):
        fd = os.memfd_create(name)
        try:
            t.send_frame(wire.FRAME_SEGMENT, 0, [struct.pack("<QQB", 0, 4096, 9)], fd=fd)
        finally:
            os.close(fd)
        t.shutdown()

    with pytest.raises(ArrowInvalid, match="segment frame 0 has form 9"):
        read_fake(script)
    assert descriptors_named(name) == []


def test_a_client_gone_before_its_socket_is_set_up_does_not_stop_the_server(monkeypatch):
    """Setting up an accepted socket can fail (a client that reset at once): that ended the
    accept thread, and with it the server."""
    table = arrowipc.table(int_batches(1, 10))
    real = tp.SocketTransport
    failed = []

    def transport(sock, **kw):
        if kw.get("name") == "dissociated client connection" and not failed:
            failed.append(sock)
            raise ConnectionResetError("reset before setsockopt")
        return real(sock, **kw)

    monkeypatch.setattr(tp, "SocketTransport", transport)
    with DissociatedServer(lambda ticket: table, body_mode="bytes") as s:
        with pytest.raises(ArrowInvalid):
            with connect(s.uri, b"t", timeout=TIMEOUT) as reader:
                list(reader)
        assert failed
        with connect(s.uri, b"t", timeout=TIMEOUT) as reader:
            assert pa.table(reader.read_all()).equals(pa.table(int_batches(1, 10)))


def test_a_metadata_frame_above_max_metadata_size_is_refused_before_it_is_read():
    """A stream reader refuses a flatbuffer above max_metadata_size; a dissociated metadata
    frame of 64 GiB was read (as its bytes came) before anything looked at its size."""
    limit = 1 << 20
    claim = wire.PREFIX_SIZE + limit + 1
    schema = arrowipc.table(small_table()).schema

    def script(t):
        schema_message = MessageEncoder(schema).schema_message()
        t.send_message([wire.metadata_prefix(1, 0), memoryview(schema_message)[8:]])
        t.sock.sendall(bytes([wire.FRAME_MESSAGE, 1]) + bytes(14) + struct.pack("<Q", claim))
        # no payload follows: the client must not wait for it

    with FakeServer(script) as fake:
        with pytest.raises(ArrowInvalid, match=f"^unix {re.escape(fake.path)}: message frame "
                                               f"claims {claim} bytes; a metadata message takes "
                                               f"at most {claim - 1} \\(the 5-byte prefix and "
                                               f"max_metadata_size bytes of flatbuffer\\)$"):
            with connect(fake.uri, b"t", timeout=TIMEOUT,
                         options=arrowipc.ipc.IpcReadOptions(max_metadata_size=limit)) as reader:
                list(reader)


def test_metadata_waiting_for_an_earlier_sequence_counts_toward_max_pending_bytes():
    """Metadata messages held in the reorder buffer count as bytes, not only bodies: a server
    sending metadata past a gap it never fills is refused at max_pending_bytes."""
    table = arrowipc.table(pa.table({"i": pa.array(range(10), pa.int64())}))
    enc = MessageEncoder(table.schema)
    (m,) = enc.batch_messages(table.to_batches()[0])
    metadata = memoryview(m.metadata)[8:]

    def script(t):
        t.send_message([wire.metadata_prefix(1, 0), memoryview(enc.schema_message())[8:]])
        for seq in range(2, 200):            # sequence 1 never comes
            t.send_message([wire.metadata_prefix(1, seq), metadata])
        t.receive()                          # until the client goes

    limit = 20 * (wire.PREFIX_SIZE + len(metadata))
    with FakeServer(script) as fake:
        client = DissociatedClient(fake.uri, timeout=TIMEOUT)
        try:
            with pytest.raises(ArrowInvalid, match=r"^21 messages \(\d+ bytes\) are waiting for "
                                                   r"sequence 1 \(limits 4096 messages, "
                                                   f"{limit} bytes\\); last arrival: sequence 22$"):
                with client.read(b"t", max_pending_bytes=limit) as reader:
                    list(reader)
        finally:
            client.close()
