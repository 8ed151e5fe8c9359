"""Byte-level surgery on IPC streams and files, for tests that need inputs no writer produces.

An independent reader of the framing and of the few flatbuffer fields the tests patch (no
arrowipc, no generated code): split a stream into its framed messages (continuation or legacy
framing), find where a field of a Message / RecordBatch / DictionaryBatch / Footer table lives in
the bytes, and put messages back together as a stream.  Positions are absolute offsets into the
bytes given, so a test can patch them in a bytearray.
"""
from __future__ import annotations

import struct
from dataclasses import dataclass

CONTINUATION = b"\xff\xff\xff\xff"
EOS = CONTINUATION + b"\x00\x00\x00\x00"
LEGACY_EOS = b"\x00\x00\x00\x00"

# Schema.fbs / Message.fbs facts
HEADER_SCHEMA, HEADER_DICTIONARY_BATCH, HEADER_RECORD_BATCH = 1, 2, 3
MESSAGE_VERSION, MESSAGE_HEADER_TYPE, MESSAGE_HEADER, MESSAGE_BODY_LENGTH = 0, 1, 2, 3
RECORD_BATCH_LENGTH, RECORD_BATCH_NODES, RECORD_BATCH_BUFFERS, RECORD_BATCH_COMPRESSION = 0, 1, 2, 3
DICTIONARY_ID, DICTIONARY_DATA, DICTIONARY_IS_DELTA = 0, 1, 2
SCHEMA_ENDIANNESS = 0
FOOTER_VERSION, FOOTER_SCHEMA, FOOTER_DICTIONARIES, FOOTER_RECORD_BATCHES = 0, 1, 2, 3
BODY_COMPRESSION_CODEC = 0


class FlatTable:
    """A flatbuffer table at absolute position `pos` of `buf`."""

    def __init__(self, buf, pos: int):
        self.buf = buf
        self.pos = pos
        self.vtable = pos - struct.unpack_from("<i", buf, pos)[0]
        self.vtable_size = struct.unpack_from("<H", buf, self.vtable)[0]

    @classmethod
    def root(cls, buf, start: int = 0) -> "FlatTable":
        return cls(buf, start + struct.unpack_from("<I", buf, start)[0])

    def field_pos(self, index: int):
        """Absolute position of field `index`, or None when the field is absent (default)."""
        entry = 4 + 2 * index
        if entry >= self.vtable_size:
            return None
        offset = struct.unpack_from("<H", self.buf, self.vtable + entry)[0]
        return None if offset == 0 else self.pos + offset

    def scalar(self, index: int, fmt: str, default=0):
        pos = self.field_pos(index)
        return default if pos is None else struct.unpack_from("<" + fmt, self.buf, pos)[0]

    def table(self, index: int):
        pos = self.field_pos(index)
        return None if pos is None else FlatTable(self.buf, pos + struct.unpack_from("<I", self.buf, pos)[0])

    def tables(self, index: int):
        """The tables of a vector of tables (empty when absent)."""
        pos = self.field_pos(index)
        if pos is None:
            return []
        start = pos + struct.unpack_from("<I", self.buf, pos)[0]
        count = struct.unpack_from("<I", self.buf, start)[0]
        out = []
        for i in range(count):
            at = start + 4 + 4 * i
            out.append(FlatTable(self.buf, at + struct.unpack_from("<I", self.buf, at)[0]))
        return out

    def struct_vector(self, index: int, fmt: str):
        """[(absolute position, unpacked tuple)] of a vector of structs."""
        pos = self.field_pos(index)
        if pos is None:
            return []
        start = pos + struct.unpack_from("<I", self.buf, pos)[0]
        count = struct.unpack_from("<I", self.buf, start)[0]
        size = struct.calcsize("<" + fmt)
        return [(start + 4 + i * size, struct.unpack_from("<" + fmt, self.buf, start + 4 + i * size))
                for i in range(count)]


@dataclass
class Frame:
    """One encapsulated message: where its prefix, metadata and body sit in the data."""
    start: int
    legacy: bool
    meta_start: int
    meta_len: int
    body_start: int
    body_len: int
    data: object

    @property
    def end(self) -> int:
        return self.body_start + self.body_len

    @property
    def message(self) -> FlatTable:
        return FlatTable.root(self.data, self.meta_start)

    @property
    def header_type(self) -> int:
        return self.message.scalar(MESSAGE_HEADER_TYPE, "B")

    @property
    def version(self) -> int:
        return self.message.scalar(MESSAGE_VERSION, "h")

    def bytes(self) -> bytes:
        return bytes(self.data[self.start: self.end])

    def record_batch(self) -> FlatTable:
        """The RecordBatch table of a record batch or dictionary batch message."""
        header = self.message.table(MESSAGE_HEADER)
        if self.header_type == HEADER_DICTIONARY_BATCH:
            return header.table(DICTIONARY_DATA)
        assert self.header_type == HEADER_RECORD_BATCH, self.header_type
        return header

    def buffers(self):
        """[(position of the Buffer struct, body offset, length)] of the body buffers."""
        return [(pos, off, n) for pos, (off, n) in self.record_batch().struct_vector(RECORD_BATCH_BUFFERS, "qq")]

    def codec(self):
        """BodyCompression codec (0 LZ4_FRAME, 1 ZSTD) or None when the body is not compressed."""
        compression = self.record_batch().table(RECORD_BATCH_COMPRESSION)
        return None if compression is None else compression.scalar(BODY_COMPRESSION_CODEC, "b")

    def compressed_prefixes(self):
        """[(absolute position of the int64 prefix, prefix value)] of every non-empty buffer."""
        out = []
        for _, off, n in self.buffers():
            if n:
                pos = self.body_start + off
                out.append((pos, struct.unpack_from("<q", self.data, pos)[0]))
        return out


def split_stream(data, start: int = 0):
    """(frames, position after the end-of-stream marker, the marker) of a stream at `start`.

    Accepts both framings: continuation marker + int32 length, or the legacy bare int32 length.
    A stream that simply stops (no marker) returns marker b"".
    """
    frames = []
    pos = start
    while True:
        if pos == len(data):
            return frames, pos, b""
        if bytes(data[pos:pos + 4]) == CONTINUATION:
            length = struct.unpack_from("<i", data, pos + 4)[0]
            prefix, legacy = 8, False
        else:
            length = struct.unpack_from("<i", data, pos)[0]
            prefix, legacy = 4, True
        if length == 0:
            return frames, pos + prefix, bytes(data[pos:pos + prefix])
        meta_start = pos + prefix
        frame = Frame(pos, legacy, meta_start, length, meta_start + length, 0, data)
        frame.body_len = frame.message.scalar(MESSAGE_BODY_LENGTH, "q")
        frames.append(frame)
        pos = frame.end


def join_stream(frames, legacy: bool = False) -> bytes:
    """A stream made of the given framed messages (Frame or bytes) and an end-of-stream marker."""
    parts = [f.bytes() if isinstance(f, Frame) else bytes(f) for f in frames]
    return b"".join(parts) + (LEGACY_EOS if legacy else EOS)


def file_footer(data):
    """(footer FlatTable, magic) of an IPC file; the magic is found at the end of the file."""
    magic = b"ALKAID1" if bytes(data[-7:]) == b"ALKAID1" else b"ARROW1"
    footer_size = struct.unpack_from("<i", data, len(data) - len(magic) - 4)[0]
    footer_start = len(data) - len(magic) - 4 - footer_size
    return FlatTable.root(data, footer_start), magic


def file_blocks(data, which: int):
    """[(position, (offset, metaDataLength, bodyLength))] of footer dictionaries (2) or batches (3)."""
    footer, _ = file_footer(data)
    return [(pos, (off, meta_len, body_len))
            for pos, (off, meta_len, body_len) in footer.struct_vector(which, "qi4xq")]


def file_frames(data):
    """Frames of a file's messages, after the 8-byte magic, up to its end-of-stream marker."""
    head = 8
    frames, _, _ = split_stream(data, head)
    return frames


def replace_buffer(data: bytearray, frame: Frame, buffer_index: int, content: bytes) -> None:
    """Put `content` where body buffer `buffer_index` of `frame` starts, and patch the buffer's
    length in the header to len(content); the rest of the old buffer stays as unused body bytes.
    `content` must fit in the old buffer (positions of everything else are unchanged)."""
    pos, offset, length = frame.buffers()[buffer_index]
    assert len(content) <= length, f"{len(content)} bytes do not fit in a {length}-byte buffer"
    start = frame.body_start + offset
    data[start:start + len(content)] = content
    struct.pack_into("<q", data, pos + 8, len(content))


def with_footer_metadata(data: bytes, metadata: dict) -> bytes:
    """An IPC file's bytes rewritten by pyarrow with the same batches, per-batch custom metadata
    and layout (checked: the same blocks and record batch headers), and the footer metadata
    given: a footer no arrowipc writer would write."""
    import pyarrow as pa

    theirs = pa.ipc.open_file(pa.py_buffer(data))
    sink = pa.BufferOutputStream()
    with pa.ipc.new_file(sink, theirs.schema, metadata=metadata) as writer:
        for i in range(theirs.num_record_batches):
            batch = theirs.get_batch_with_custom_metadata(i)
            writer.write_batch(batch.batch, custom_metadata=batch.custom_metadata)
    out = sink.getvalue().to_pybytes()

    def headers(b):
        return [(block, b[block[0]:block[0] + block[1]])
                for _, block in file_blocks(b, FOOTER_RECORD_BATCHES)]
    assert headers(out) == headers(data), "pyarrow laid the batches out anew"
    return out
