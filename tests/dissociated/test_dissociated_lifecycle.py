"""Shared-memory lifecycle (free_data when the last view goes, a kept batch keeps exactly its block,
a killed client's blocks freed by the server), unknown tickets and server failures, and hostile
frames in both directions."""
import array
import os
import socket
import struct
import subprocess
import sys
import textwrap

import pyarrow as pa
import pytest

import arrowipc
from arrowipc.dissociated import _wire as wire
from arrowipc.dissociated import DissociatedClient, DissociatedServer, connect
from arrowipc.dissociated import transport as tp
from arrowipc.errors import ArrowInvalid, ArrowKeyError
from dissociated_helpers import (TIMEOUT, FakeServer, delta_dictionary_batches, int_batches,
                                 raw_connection, send_stream, small_table, wait_until)

INTS = int_batches(5, 2000)
DICTS = pa.Table.from_batches(delta_dictionary_batches())
REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def resolve(ticket):
    return {b"ints": arrowipc.table(INTS), b"dicts": arrowipc.table(DICTS)}.get(ticket)


def outstanding_sequences(server) -> list:
    return [seq for seq, _, _ in server.outstanding()]


# -- free_data ------------------------------------------------------------------------------------

def test_every_block_is_freed_once_the_batches_are_dropped():
    with DissociatedServer(resolve, body_mode="shared", seal_segments=True) as s:
        reader = connect(s.uri, b"ints", timeout=TIMEOUT)
        batches = list(reader)
        assert s.stats()["blocks_allocated"] == 5
        assert outstanding_sequences(s) == [1, 2, 3, 4, 5]
        del batches
        wait_until(lambda: s.stats()["blocks_outstanding"] == 0, what="all blocks freed")
        stats = s.stats()
        assert stats["blocks_released"] == 5 and stats["unknown_frees"] == 0
        free = reader._client.channels[0].free
        assert free.sent_messages >= 1 and free.sent_addresses >= 5
        # the connection is still open: freeing happened through free_data, not a disconnect
        assert stats["open_connections"] == 1
        reader.close()


class _RecordingTransport:
    """What FreeChannel needs of a transport; records each free_data's addresses."""
    closed = False

    def __init__(self):
        self.sent, self.after_send = [], None

    def send_frame(self, kind, tag, parts, blocking=True):
        assert (kind, tag) == (wire.FRAME_TAGGED, 2)
        self.sent.append(list(wire.parse_free_data(arrowipc.py_buffer(parts[0]))))
        return True

    def sending(self):
        return False


def test_deferred_frees_go_out_once_their_bodies_reach_free_flush_bytes():
    """A reader that never pauses still gives blocks back every FREE_FLUSH_BYTES of bodies, so
    the server can reuse them while they are in the caches."""
    from arrowipc.dissociated.shm import FREE_FLUSH_BYTES, FreeChannel
    t = _RecordingTransport()
    free = FreeChannel(t, 2)
    free.release([64, 128], flush=False, nbytes=FREE_FLUSH_BYTES - 1)
    assert t.sent == [] and free.pending_bytes == FREE_FLUSH_BYTES - 1
    free.release([256], flush=False, nbytes=1)
    assert t.sent == [[64, 128, 256]] and free.pending_bytes == 0 and not free.pending
    free.release([512], flush=False, nbytes=FREE_FLUSH_BYTES // 2)
    assert t.sent == [[64, 128, 256]]            # below the threshold: waits for a pause
    free.flush()
    assert t.sent == [[64, 128, 256], [512]] and free.pending_bytes == 0


def test_a_kept_batch_keeps_exactly_its_block():
    with DissociatedServer(resolve, body_mode="shared", seal_segments=True) as s:
        reader = connect(s.uri, b"ints", timeout=TIMEOUT)
        batches = list(reader)
        kept = batches[2]                 # message 3 (0 is the schema)
        kept_values = pa.record_batch(kept).column(0)
        del batches
        wait_until(lambda: outstanding_sequences(s) == [3], what="only block 3 outstanding")
        # a slice, a pyarrow export and a column all keep the same block
        view = kept.slice(10, 5)
        exported = pa.record_batch(kept)
        del kept
        wait_until(lambda: outstanding_sequences(s) == [3], timeout=0.3, what="still kept")
        del view
        assert outstanding_sequences(s) == [3]
        assert exported.column(0).equals(kept_values)
        del exported, kept_values
        wait_until(lambda: outstanding_sequences(s) == [], what="block 3 freed")
        reader.close()


def test_batches_dropped_on_other_threads_while_reading_are_all_freed():
    import queue
    import random
    import threading
    table = int_batches(40, 500, seed=3)
    handoff = queue.Queue()

    def dropper(seed):
        rng = random.Random(seed)
        while True:
            batch = handoff.get()
            if batch is None:
                return
            if rng.random() < 0.5:
                threading.Event().wait(rng.random() * 0.002)
            del batch

    threads = [threading.Thread(target=dropper, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    with DissociatedServer(lambda t: arrowipc.table(table), body_mode="shared",
                           seal_segments=True) as s:
        reader = connect(s.uri, b"x", timeout=TIMEOUT)
        rows = 0
        for batch in reader:
            rows += batch.num_rows
            handoff.put(batch)
            del batch
        for _ in threads:
            handoff.put(None)
        for t in threads:
            t.join(TIMEOUT)
        assert rows == table.num_rows
        wait_until(lambda: s.stats()["blocks_outstanding"] == 0, what="every block freed")
        assert s.stats()["blocks_released"] == 40 and s.stats()["unknown_frees"] == 0
        reader.close()


def test_dictionary_blocks_live_as_long_as_the_batches_using_them():
    with DissociatedServer(resolve, body_mode="shared", seal_segments=True,
                           options=arrowipc.ipc.IpcWriteOptions(emit_dictionary_deltas=True)) as s:
        reader = connect(s.uri, b"dicts", timeout=TIMEOUT)
        batches = list(reader)
        # messages: dictionary 1, deltas 3 and 5, replacement 7; batches 2, 4, 6, 8. A delta is
        # concatenated with the dictionary into new memory, so the delta blocks go at once
        wait_until(lambda: outstanding_sequences(s) == [1, 2, 4, 6, 7, 8],
                   what="delta blocks freed")
        last = batches[-1]
        del batches
        # the last batch uses the replacement dictionary (7) only
        wait_until(lambda: outstanding_sequences(s) == [7, 8], what="blocks of the last batch")
        assert pa.record_batch(last).to_pylist() == DICTS.to_batches()[-1].to_pylist()
        del last
        wait_until(lambda: outstanding_sequences(s) == [], what="every block freed")
        reader.close()


def test_closing_the_client_releases_everything_but_batches_stay_valid():
    with DissociatedServer(resolve, body_mode="shared", seal_segments=True) as s:
        reader = connect(s.uri, b"ints", timeout=TIMEOUT)
        batches = list(reader)
        reader.close()
        wait_until(lambda: s.stats()["open_connections"] == 0, what="disconnect seen")
        assert s.stats()["blocks_outstanding"] == 0
        got = pa.Table.from_batches([pa.record_batch(b) for b in batches])
        assert got.equals(INTS)          # the client's mappings outlive the server's release


CLIENT = textwrap.dedent("""
    import sys, time
    sys.path.insert(0, sys.argv[1])
    from arrowipc.dissociated import connect
    reader = connect(sys.argv[2], b"ints", timeout=10)
    kept = [reader.read_next_batch(), reader.read_next_batch()]
    print("ready", flush=True)
    time.sleep(60)
""")


def test_a_client_killed_mid_stream_frees_its_blocks_on_the_server():
    with DissociatedServer(resolve, body_mode="shared", seal_segments=True) as s:
        proc = subprocess.Popen([sys.executable, "-c", CLIENT, REPO, s.uri],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            line = proc.stdout.readline()
            assert line.strip() == "ready", proc.stderr.read()
            wait_until(lambda: s.stats()["blocks_outstanding"] >= 2, what="blocks handed out")
            proc.kill()
            proc.wait(TIMEOUT)
            wait_until(lambda: s.stats()["open_connections"] == 0, what="the disconnect")
            stats = s.stats()
            assert stats["blocks_outstanding"] == 0
            assert stats["blocks_released"] == stats["blocks_allocated"] >= 2
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait(TIMEOUT)
            proc.stdout.close()
            proc.stderr.close()
        # the server goes on serving
        with connect(s.uri, b"ints", timeout=TIMEOUT) as reader:
            assert pa.table(reader.read_all()).equals(INTS)


def test_unknown_and_repeated_free_data_addresses_are_counted_and_ignored():
    with DissociatedServer(resolve, body_mode="shared", seal_segments=True) as s:
        with DissociatedClient(s.uri, timeout=TIMEOUT) as client:
            batches = list(client.read(b"ints"))
            free = client.channels[0].free
            free.release([123456789, 1 << 63])
            del batches
            wait_until(lambda: s.stats()["blocks_outstanding"] == 0, what="blocks freed")
            wait_until(lambda: s.stats()["unknown_frees"] == 2, what="unknown frees counted")
            free.release([0])         # block 0's address again: already freed
            wait_until(lambda: s.stats()["unknown_frees"] == 3, what="repeated free counted")
            # and the connection still serves
            assert pa.table(client.read(b"ints").read_all()).equals(INTS)


# -- errors from the server ---------------------------------------------------------------------

def test_unknown_ticket_gives_one_clear_error():
    with DissociatedServer(resolve) as s:
        with pytest.raises(ArrowKeyError, match="unknown ticket b'nothing-here'"):
            connect(s.uri, b"nothing-here", timeout=TIMEOUT)
        # a KeyError from the resolver means the same
        with DissociatedServer(lambda t: {}[t]) as s2:
            with pytest.raises(ArrowKeyError, match="unknown ticket b'k'"):
                connect(s2.uri, b"k", timeout=TIMEOUT)
        wait_until(lambda: s.stats()["open_connections"] == 0, what="refused client gone")
        assert s.stats()["errors"] == 1


def test_a_failing_batch_iterator_reaches_the_client():
    def failing(ticket):
        def batches():
            yield arrowipc.record_batch(INTS.to_batches()[0])
            raise RuntimeError("disk on fire")
        return arrowipc.schema(INTS.schema), batches()

    with DissociatedServer(failing, body_mode="shared") as s:
        reader = connect(s.uri, b"x", timeout=TIMEOUT)
        with pytest.raises(ArrowInvalid, match="RuntimeError while serving ticket b'x': disk on "
                                               "fire"):
            list(reader)
        wait_until(lambda: s.stats()["open_connections"] == 0, what="the disconnect")
        assert s.stats()["blocks_outstanding"] == 0


# -- hostile frames from a server -----------------------------------------------------------------

def raw(data: bytes):
    return lambda t: t.sock.sendall(data)


def frame(kind, tag, payload: bytes, fd=None):
    return lambda t: t.send_frame(kind, tag, [payload], fd=fd)


def then(*steps):
    def script(t):
        for step in steps:
            step(t)
    return script


def schema_message():
    from arrowipc.ipc.writer import MessageEncoder
    enc = MessageEncoder(arrowipc.schema(small_table().schema))
    return wire.metadata_prefix(1, 0) + bytes(memoryview(enc.schema_message())[8:])


def unsealed_memfd(size=4096):
    fd = os.memfd_create("unsealed")
    os.ftruncate(fd, size)
    return fd


def sealed_memfd(size=4096):
    import fcntl
    fd = os.memfd_create("sealed", os.MFD_ALLOW_SEALING)
    os.ftruncate(fd, size)
    fcntl.fcntl(fd, fcntl.F_ADD_SEALS, fcntl.F_SEAL_SHRINK | fcntl.F_SEAL_GROW)
    return fd


HOSTILE_SERVER = {
    "garbage-header": (raw(b"\xde\xad\xbe\xef" * 6), "frame header version"),
    "unknown-kind": (raw(bytes.fromhex("0901000000000000") + bytes(16)), "unknown frame kind 9"),
    "huge-claim": (raw(bytes.fromhex("0101000000000000") + bytes(8) + struct.pack("<Q", 1 << 62)),
                   "claims 4611686018427387904 bytes; the limit is"),
    "truncated-frame": (raw(bytes.fromhex("0101000000000000") + bytes(8) + struct.pack("<Q", 100)
                            + b"\x01\x00"), "connection closed inside a frame: expected 100 bytes"),
    "eos-too-long": (then(frame(1, 0, schema_message()), frame(1, 0, b"\x00\x01\x00\x00\x00\x00")),
                     "has 6 bytes; expected exactly 5"),
    "garbage-flatbuffer": (frame(1, 0, b"\x01\x00\x00\x00\x00" + b"\x07" * 40),
                           "metadata message with sequence 0"),
    "first-not-schema": (frame(1, 0, b"\x00\x00\x00\x00\x00"), "before any schema"),
    "stream-end-payload": (frame(6, 0, b"x"), "stream-end frame with a 1-byte payload"),
    "hello-from-server": (frame(3, 0, struct.pack("<II", 1, 0)), "unexpected hello frame"),
    "bad-error-frame": (frame(4, 0, b"\x01"), "error frame has 1 bytes"),
    "server-error-text": (frame(4, 0, struct.pack("<I", 2) + b"boom"),
                          "dissociated server error: boom"),
    "segment-without-fd": (frame(5, 0, struct.pack("<QQB", 0, 4096, 0)),
                           "segment 0 arrived without its descriptor"),
    "segment-bad-form": (frame(5, 0, struct.pack("<QQB", 0, 4096, 9)), "has form 9"),
    "segment-short": (frame(5, 0, b"\x00" * 4), "segment frame has 4 bytes"),
    "segment-unsealed": (lambda t: t.send_frame(5, 0, [struct.pack("<QQB", 0, 4096, 0)],
                                                fd=unsealed_memfd()),
                         "not sealed against shrinking"),
    "segment-larger-than-file": (lambda t: t.send_frame(5, 0, [struct.pack("<QQB", 0, 1 << 20, 0)],
                                                        fd=sealed_memfd()),
                                 "announced as 1048576 bytes but the file has 4096"),
    "segment-twice": (then(lambda t: t.send_frame(5, 0, [struct.pack("<QQB", 3, 4096, 0)],
                                                  fd=sealed_memfd()),
                           lambda t: t.send_frame(5, 0, [struct.pack("<QQB", 3, 4096, 0)],
                                                  fd=sealed_memfd())),
                      "segment 3 announced twice"),
    "segment-bad-name": (frame(5, 0, struct.pack("<QQB", 0, 4096, 1) + b"../etc/passwd"),
                         "has name '../etc/passwd'"),
    "stray-descriptors": (lambda t: t.sock.sendmsg(
        [b"\x00"], [(socket.SOL_SOCKET, socket.SCM_RIGHTS,
                     array.array("i", [sealed_memfd()] * 20))]),
        "more than 16 descriptors"),
}


@pytest.mark.parametrize("name", list(HOSTILE_SERVER))
def test_hostile_server_frames_raise_arrow_invalid(name):
    script, expected = HOSTILE_SERVER[name]

    def run(t):
        script(t)
        t.shutdown()

    with FakeServer(run) as fake:
        with pytest.raises(ArrowInvalid, match=expected):
            with connect(fake.uri, b"t", timeout=TIMEOUT) as reader:
                list(reader)
    assert fake.error is None


def test_a_well_formed_fake_stream_reads_fine():
    """The hostile cases above differ from a good stream only in what they break."""
    with FakeServer(lambda t: send_stream(t, small_table())) as fake:
        with connect(fake.uri, b"t", timeout=TIMEOUT) as reader:
            assert pa.table(reader.read_all()).equals(small_table())


def test_a_silent_server_times_out():
    with FakeServer(lambda t: None) as fake:
        with pytest.raises(TimeoutError):
            connect(fake.uri, b"t", timeout=0.5)


# -- hostile frames from a client ---------------------------------------------------------------

HOSTILE_CLIENT = {
    "garbage-header": lambda t: t.sock.sendall(b"\xff" * 24),
    "unknown-tag": lambda t: t.send_frame(wire.FRAME_TAGGED, 77, [b"ticket"]),
    "short-free-data": lambda t: t.send_frame(wire.FRAME_TAGGED, 2, [b"\x00" * 7]),
    "huge-claim": lambda t: t.sock.sendall(bytes.fromhex("0201000000000000") + struct.pack(
        "<QQ", 1, 1 << 40)),
    "server-frame-kind": lambda t: t.send_frame(wire.FRAME_STREAM_END, 0, []),
    "bad-hello": lambda t: t.send_frame(wire.FRAME_HELLO, 0, [b"\x01"]),
}


@pytest.mark.parametrize("name", list(HOSTILE_CLIENT))
def test_hostile_client_frames_get_an_error_and_the_server_goes_on(name):
    with DissociatedServer(resolve, body_mode="shared", seal_segments=True) as s:
        with raw_connection(s.unix_path) as t:
            HOSTILE_CLIENT[name](t)
            reply = t.receive()
            assert reply is not None and reply.kind == wire.FRAME_ERROR
            code, text = tp.parse_error(reply.payload)
            assert code == tp.ERROR_PROTOCOL and text.startswith("protocol error:")
            assert t.receive() is None          # then the server closes its side
        wait_until(lambda: s.stats()["open_connections"] == 0, what="the hostile client gone")
        with connect(s.uri, b"ints", timeout=TIMEOUT) as reader:
            assert pa.table(reader.read_all()).equals(INTS)


def test_a_client_past_max_connections_gets_an_error_and_the_others_go_on():
    """Each connection costs the server two threads: past max_connections a client is turned
    away with an error frame saying why (no thread, no eventfd), and once one of the served ones
    leaves, the next is served."""
    table = int_batches(2, 64)
    with DissociatedServer(lambda t: arrowipc.table(table), max_connections=2) as s:
        first, second = connect(s.uri, b"t", timeout=TIMEOUT), connect(s.uri, b"t", timeout=TIMEOUT)
        assert pa.table(first.read_all()).equals(table)
        with pytest.raises(ArrowInvalid, match=r"the server serves 2 connections already "
                                               r"\(max_connections=2\); try again later"):
            with connect(s.uri, b"t", timeout=TIMEOUT) as third:
                third.read_all()
        # no connection object (its threads, its eventfd) was made for it: a count of the
        # process's threads would also see other tests' connections end
        assert len(s._connections) == 2 and s.stats()["connections"] == 2
        assert pa.table(second.read_all()).equals(table)
        first.close()
        wait_until(lambda: len(s._connections) == 1, what="the first connection gone")
        with connect(s.uri, b"t", timeout=TIMEOUT) as fourth:
            assert pa.table(fourth.read_all()).equals(table)
        second.close()


def test_max_connections_must_be_positive():
    with pytest.raises(ValueError, match="max_connections must be positive, got 0"):
        DissociatedServer(lambda t: None, max_connections=0)


def test_a_send_refused_by_a_server_that_closed_raises_what_the_server_said():
    """The server wrote an error frame and closed before our hello went out: the failed send
    reads the frame left behind and raises it, not the broken pipe."""
    from arrowipc.dissociated.reader import _send_to
    ours, theirs = socket.socketpair()
    payload = tp.error_payload(tp.ERROR_SERVER, "turned away: too many connections")
    theirs.sendall(wire.frame_header(wire.FRAME_ERROR, 0, len(payload)) + payload)
    theirs.close()
    t = tp.SocketTransport(ours, name="test connection")
    ch = type("Channel", (), {"transport": t})()
    with pytest.raises(ArrowInvalid, match="^dissociated server error: turned away: too many "
                                           "connections$"):
        _send_to(ch, wire.FRAME_HELLO, 0, [tp.hello_payload(0)])
    t.close()
    # nothing (or anything but a whole error frame) left behind: the send's own error
    for left in (b"", wire.frame_header(wire.FRAME_ERROR, 0, len(payload)) + payload[:3]):
        ours, theirs = socket.socketpair()
        theirs.sendall(left)
        theirs.close()
        t = tp.SocketTransport(ours, name="test connection")
        ch = type("Channel", (), {"transport": t})()
        with pytest.raises(tp.TransportClosed, match="test connection: send failed"):
            _send_to(ch, wire.FRAME_HELLO, 0, [tp.hello_payload(0)])
        t.close()
