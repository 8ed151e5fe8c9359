"""Shared helpers of the dissociated tests: data sets, frame schedules, a scripted fake server.

Everything runs over loopback TCP or Unix sockets in a temporary directory, with timeouts.
"""
from __future__ import annotations

import contextlib
import fcntl
import gc
import os
import random
import shutil
import socket
import tempfile
import threading
import time

import numpy as np
import pyarrow as pa

import arrowipc
import strategies as S
from arrowipc.dissociated import _wire as wire
from arrowipc.dissociated import connect
from arrowipc.ipc._framing import decode_message
from arrowipc.dissociated import transport as tp
from arrowipc.dissociated.uri import SCHEME_UNIX, DissociatedURI, format_uri

TIMEOUT = 10.0


def descriptors_named(name: str) -> list:
    """This process's descriptors open on the memfd called `name`."""
    out = []
    for fd in os.listdir("/proc/self/fd"):
        try:
            if os.readlink(f"/proc/self/fd/{fd}") == f"/memfd:{name} (deleted)":
                out.append(fd)
        except OSError:
            pass
    return out


def sealed_segment(name: str, parts=(), size: int = 4096, write_sealed: bool = True) -> int:
    """A memfd of `size` bytes holding `parts` back to back from offset 0, sealed against
    shrinking and growing, and against writing unless write_sealed=False (a reused segment):
    its descriptor."""
    fd = os.memfd_create(name, os.MFD_ALLOW_SEALING)
    os.ftruncate(fd, size)
    os.pwrite(fd, b"".join(bytes(p) for p in parts), 0)
    fcntl.fcntl(fd, fcntl.F_ADD_SEALS, fcntl.F_SEAL_SHRINK | fcntl.F_SEAL_GROW |
                (fcntl.F_SEAL_WRITE if write_sealed else 0))
    return fd


def announce_segment(t, name: str, parts=(), size: int = 4096, write_sealed: bool = True) -> None:
    """Send segment 0 (sealed_segment's) over transport `t`, its descriptor attached."""
    fd = sealed_segment(name, parts, size, write_sealed)
    try:
        t.send_frame(wire.FRAME_SEGMENT, 0, [tp.segment_payload(0, size)], fd=fd)
    finally:
        os.close(fd)


def wait_until(predicate, timeout: float = TIMEOUT, what: str = "condition"):
    """Poll `predicate` (collecting garbage between tries) until it is true."""
    deadline = time.monotonic() + timeout
    while True:
        gc.collect()
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout} s waiting for {what}")
        time.sleep(0.02)


# -- data ---------------------------------------------------------------------------------------

def extra_types_table(lengths=(9, 0, 5)) -> pa.Table:
    """Types beyond issue 2, built with pyarrow: dictionaries, unions, views, run-end encoded."""
    batches = []
    for k, n in enumerate(lengths):
        rng = random.Random(100 + k)
        words = ["red", "green", "blue", None, "cyan"]
        strings = [rng.choice(words) for _ in range(n)]
        dict_col = pa.array(strings, pa.string()).dictionary_encode()
        ints = pa.array([rng.randrange(-50, 50) if rng.random() > 0.2 else None for _ in range(n)],
                        pa.int32())
        types = pa.array([i % 2 for i in range(n)], pa.int8())
        sparse = pa.UnionArray.from_sparse(
            types, [pa.array(range(n), pa.int64()), pa.array([str(i) for i in range(n)], pa.string())])
        offsets = pa.array([i // 2 for i in range(n)], pa.int32())
        dense = pa.UnionArray.from_dense(types, offsets,
                                         [pa.array(range((n + 1) // 2), pa.float64()),
                                          pa.array([b"x" * i for i in range(n // 2)], pa.binary())])
        views = pa.array([s if s is None else s * 7 for s in strings], pa.string_view())
        list_view = pa.array([[1, 2], None, [], [3]] * (n // 4) + [[4]] * (n % 4),
                             pa.list_view(pa.int16()))
        ree = pa.RunEndEncodedArray.from_arrays(
            pa.array([2 * i + 2 for i in range((n + 1) // 2)], pa.int32()),
            pa.array([f"run{i}" for i in range((n + 1) // 2)])) if n else \
            pa.RunEndEncodedArray.from_arrays(pa.array([], pa.int32()), pa.array([], pa.string()))
        if n % 2:
            ree = ree.slice(0, n)
        batches.append(pa.RecordBatch.from_arrays(
            [dict_col, ints, sparse, dense, views, list_view, ree],
            names=["dict", "ints", "sparse_union", "dense_union", "string_view", "list_view",
                   "ree"]))
    return pa.Table.from_batches(batches)


def issue2_type_table() -> pa.Table:
    """Every issue-2 type (primitive, binary, temporal, decimal, nested), in 3 batches."""
    return S.make_table(S.ISSUE2_CASE_IDS, [9, 0, 5], seed=7)


def delta_dictionary_batches() -> list:
    """Batches whose dictionary grows (deltas), then changes (a replacement)."""
    values = ["a", "b", "c", "d", "e", "f"]
    out = []
    for k, (n_dict, idx) in enumerate([(2, [0, 1, 1]), (4, [3, 2, 0]), (6, [5, 4]), (6, [0])]):
        dictionary = pa.array(values[:n_dict])
        if k == 3:
            dictionary = pa.array(["z", "y", "x", "w", "v", "u"])     # not a prefix: replaced
        arr = pa.DictionaryArray.from_arrays(pa.array(idx, pa.int16()), dictionary)
        out.append(pa.record_batch([arr, pa.array(range(len(idx)), pa.int64())],
                                   names=["d", "i"]))
    return out


def int_batches(count: int, rows: int, seed: int = 0) -> pa.Table:
    rng = np.random.default_rng(seed)
    return pa.Table.from_batches([
        pa.record_batch([pa.array(rng.integers(0, 1 << 40, rows)),
                         pa.array(rng.random(rows))], names=["i", "f"]) for _ in range(count)])


def plain_stream_table(table: pa.Table, options=None) -> pa.Table:
    """The table after a round trip through our plain IPC stream writer and reader."""
    sink = arrowipc.BufferOutputStream()
    ours = arrowipc.table(table)
    with arrowipc.ipc.new_stream(sink, ours.schema, options=options) as w:
        for b in ours.to_batches():
            w.write_batch(b)
    return pa.table(arrowipc.ipc.open_stream(sink.getvalue()).read_all())


def batch_lengths(table) -> list:
    return [b.num_rows for b in table.to_batches()]


# -- schedules (DissociatedServer's test hook) -----------------------------------------------------

def frame_sequence(frame) -> tuple[str, int]:
    """('metadata' | 'eos' | 'body', sequence) of a (kind, tag, parts) frame."""
    kind, tag, parts = frame
    if kind == wire.FRAME_TAGGED:
        return "body", tag & 0xFFFFFFFF
    payload = b"".join(bytes(p) for p in parts)
    k, seq, _ = wire.parse_metadata_message(payload)
    return ("eos" if k == wire.MESSAGE_END_OF_STREAM else "metadata"), seq


def frame_header_type(frame) -> int | None:
    kind, _, parts = frame
    if kind != wire.FRAME_MESSAGE or len(parts) < 2:
        return None
    return decode_message(bytes(parts[1])).header_type


def bodies_first(frames):
    return [f for f in frames if f[0] == wire.FRAME_TAGGED] + \
        [f for f in frames if f[0] != wire.FRAME_TAGGED]


def reversed_order(frames):
    return list(reversed(frames))


def dictionary_bodies_last(frames):
    """Every dictionary batch's body moved after the record batch bodies that use it."""
    dict_seqs = {frame_sequence(f)[1] for f in frames if frame_header_type(f) == 2}
    late = [f for f in frames if f[0] == wire.FRAME_TAGGED and (f[1] & 0xFFFFFFFF) in dict_seqs]
    late_ids = {id(f) for f in late}
    return [f for f in frames if id(f) not in late_ids] + late


def shuffled(seed: int):
    def schedule(frames):
        out = list(frames)
        random.Random(seed).shuffle(out)
        return out
    return schedule


def drop(what: str, seq: int):
    def schedule(frames):
        return [f for f in frames if frame_sequence(f) != (what, seq)]
    return schedule


def duplicate(what: str, seq: int):
    def schedule(frames):
        out = []
        for f in frames:
            out.append(f)
            if frame_sequence(f) == (what, seq):
                out.append(f)
        return out
    return schedule


def add_body(seq: int, position: int = -1, body_type: int = 0, payload: bytes = b""):
    def schedule(frames):
        out = list(frames)
        frame = (wire.FRAME_TAGGED, wire.body_tag(seq, body_type), [payload])
        out.insert(len(out) if position == -1 else position, frame)
        return out
    return schedule


def retag(seq: int, new_tag):
    def schedule(frames):
        return [(k, new_tag(t), p) if k == wire.FRAME_TAGGED and (t & 0xFFFFFFFF) == seq
                else (k, t, p) for k, t, p in frames]
    return schedule


def replace_body(seq: int, payload: bytes, body_type: int | None = None):
    def schedule(frames):
        out = []
        for k, t, p in frames:
            if k == wire.FRAME_TAGGED and (t & 0xFFFFFFFF) == seq:
                t = t if body_type is None else wire.body_tag(seq, body_type)
                p = [payload]
            out.append((k, t, p))
        return out
    return schedule


# -- a scripted server for hostile input -----------------------------------------------------------

class FakeServer:
    """Accepts one connection on a Unix socket, reads the hello and the want_data request, then
    runs `script(transport)` to send whatever the test wants."""

    def __init__(self, script, want_data: int = 1, free_data: int = 2):
        self.dir = tempfile.mkdtemp(prefix="arrowipc-fake-")
        self.path = os.path.join(self.dir, "fake.sock")
        self.listener = tp.listen_unix(self.path)
        self.script = script
        self.want_data, self.free_data = want_data, free_data
        self.received = []
        self.error = None
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    @property
    def uri(self) -> str:
        return format_uri(DissociatedURI(SCHEME_UNIX, self.want_data, self.free_data,
                                         path=self.path))

    def _run(self):
        self.listener.settimeout(TIMEOUT)
        try:
            sock, _ = self.listener.accept()
        except OSError as e:
            self.error = e
            return
        t = tp.SocketTransport(sock, timeout=TIMEOUT, name="fake server")
        try:
            while True:
                frame = t.receive()
                if frame is None:
                    return
                self.received.append(frame)
                if frame.kind == wire.FRAME_TAGGED and frame.tag == self.want_data:
                    break
            self.script(t)
            # keep reading until the client goes (free_data and acks are recorded)
            while True:
                frame = t.receive()
                if frame is None:
                    return
                self.received.append(frame)
        except Exception as e:          # noqa: BLE001 - reported by close()
            self.error = e
        finally:
            t.close()

    def close(self):
        self.listener.close()
        self.thread.join(TIMEOUT)
        shutil.rmtree(self.dir, ignore_errors=True)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def read_fake(script) -> list:
    """Every batch a client reads from a FakeServer running `script` (what the read raises, it
    raises)."""
    with FakeServer(script) as fake:
        with connect(fake.uri, b"t", timeout=TIMEOUT) as reader:
            return list(reader)


def protocol_error(t) -> str:
    """The text of the protocol-error frame the server answers with (then it closes), reading and
    dropping whatever it sent before."""
    while True:
        frame = t.receive()
        assert frame is not None, "the server closed without an error frame"
        if frame.kind == wire.FRAME_ERROR:
            code, text = tp.parse_error(frame.payload)
            assert code == tp.ERROR_PROTOCOL
            return text


def send_stream(t, table: pa.Table, body_type: int = 0):
    """A correct type-0 stream of `table` sent with the transport's primitives."""
    from arrowipc.ipc.writer import MessageEncoder
    ours = arrowipc.table(table)
    enc = MessageEncoder(ours.schema)
    seq = 0
    t.send_message([wire.metadata_prefix(1, seq), memoryview(enc.schema_message())[8:]])
    for b in ours.to_batches():
        for m in enc.batch_messages(b):
            seq += 1
            t.send_message([wire.metadata_prefix(1, seq), memoryview(m.metadata)[8:]])
            t.send_tagged(wire.body_tag(seq, body_type), m.parts)
    t.send_message([wire.end_of_stream_message(seq + 1)])
    t.send_frame(wire.FRAME_STREAM_END, 0, [])


@contextlib.contextmanager
def raw_connection(path: str):
    """A client-side transport to a real server, for sending hostile frames."""
    t = tp.connect_unix(path, timeout=TIMEOUT)
    try:
        yield t
    finally:
        t.close()


def small_table() -> pa.Table:
    return pa.table({"a": pa.array(range(20), pa.int64()), "s": [str(i) for i in range(20)]})


def connect_error_free(sock_path: str) -> bool:
    try:
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.connect(sock_path)
        s.close()
        return True
    except OSError:
        return False
