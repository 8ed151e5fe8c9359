"""Making malformed IPC input on purpose: a valid stream written by pyarrow, then patched.

`Crafted(stream_bytes)` locates every message, the field-node and buffer vectors of each record
batch header (inside the flatbuffer metadata) and each body, so a test can change one node
length, one buffer span or one value in a body and read the result back.
"""
from __future__ import annotations

import struct

import pyarrow as pa

from arrowipc.ipc._batch_decode import decode_record_batch_header
from arrowipc._core.buffer import py_buffer
from arrowipc.ipc._framing import read_frame

RECORD_BATCH, DICTIONARY_BATCH = 3, 2


def stream_bytes(batches, schema=None, **write_options) -> bytes:
    """An IPC stream written by pyarrow (the reference writer)."""
    if isinstance(batches, pa.RecordBatch):
        batches = [batches]
    schema = schema or batches[0].schema
    sink = pa.BufferOutputStream()
    opts = pa.ipc.IpcWriteOptions(**write_options)
    with pa.ipc.new_stream(sink, schema, options=opts) as w:
        for b in batches:
            w.write_batch(b)
    return sink.getvalue().to_pybytes()


def file_bytes(batches, schema=None) -> bytes:
    if isinstance(batches, pa.RecordBatch):
        batches = [batches]
    sink = pa.BufferOutputStream()
    with pa.ipc.new_file(sink, schema or batches[0].schema) as w:
        for b in batches:
            w.write_batch(b)
    return sink.getvalue().to_pybytes()


class MessageSpan:
    def __init__(self, start, meta_start, meta_len, body_start, body_len, header_type):
        self.start, self.meta_start, self.meta_len = start, meta_start, meta_len
        self.body_start, self.body_len, self.header_type = body_start, body_len, header_type
        self.nodes_at = self.buffers_at = None     # byte positions of the vectors' first entry
        self.nodes, self.buffers = [], []


class Crafted:
    def __init__(self, data: bytes, start: int = 0):
        self.data = bytearray(data)
        self.messages = []
        buf = py_buffer(bytes(data))
        pos = start
        while True:
            msg, nxt = read_frame(buf, pos, buf.size, 1 << 30, "stream", True)
            if msg is None:
                break
            prefix = 8 if data[pos:pos + 4] == b"\xff\xff\xff\xff" else 4
            span = MessageSpan(pos, pos + prefix, msg.metadata.size, nxt - msg.body_length,
                               msg.body_length, msg.header_type)
            if msg.header_type in (RECORD_BATCH, DICTIONARY_BATCH):
                table = msg.header if msg.header_type == RECORD_BATCH else msg.header.table(1, "RecordBatch")
                h = decode_record_batch_header(table)
                span.nodes, span.buffers = h.nodes_list(), h.buffers_list()
                meta = bytes(data[span.meta_start:span.meta_start + span.meta_len])
                if span.nodes:
                    span.nodes_at = self._find_vector(meta, span.nodes) + span.meta_start
                if span.buffers:
                    span.buffers_at = self._find_vector(meta, span.buffers) + span.meta_start
            self.messages.append(span)
            pos = nxt

    @staticmethod
    def _find_vector(meta: bytes, entries) -> int:
        raw = struct.pack("<I", len(entries)) + b"".join(struct.pack("<qq", a, b) for a, b in entries)
        at = meta.find(raw)
        assert at >= 0 and meta.find(raw, at + 1) < 0, "vector not found exactly once"
        return at + 4

    def batch(self, k: int = 0) -> MessageSpan:
        return [m for m in self.messages if m.header_type == RECORD_BATCH][k]

    def dictionary(self, k: int = 0) -> MessageSpan:
        return [m for m in self.messages if m.header_type == DICTIONARY_BATCH][k]

    # -- patches ----------------------------------------------------------------------------------
    def set_node(self, m: MessageSpan, i: int, length=None, null_count=None):
        at = m.nodes_at + 16 * i
        if length is not None:
            struct.pack_into("<q", self.data, at, length)
        if null_count is not None:
            struct.pack_into("<q", self.data, at + 8, null_count)

    def set_buffer(self, m: MessageSpan, i: int, offset=None, length=None):
        at = m.buffers_at + 16 * i
        if offset is not None:
            struct.pack_into("<q", self.data, at, offset)
        if length is not None:
            struct.pack_into("<q", self.data, at + 8, length)

    def write_value(self, m: MessageSpan, buffer_index: int, fmt: str, index: int, value):
        """Overwrite element `index` (struct format `fmt`) of body buffer `buffer_index`."""
        off, _ = m.buffers[buffer_index]
        size = struct.calcsize(fmt)
        struct.pack_into("<" + fmt, self.data, m.body_start + off + index * size, value)

    def write_bytes(self, m: MessageSpan, buffer_index: int, at: int, raw: bytes):
        off, _ = m.buffers[buffer_index]
        self.data[m.body_start + off + at:m.body_start + off + at + len(raw)] = raw

    def bytes(self) -> bytes:
        return bytes(self.data)
