"""Encapsulated messages: framing (continuation marker, length, metadata, padding, body).

Reading goes peek prefix -> verify -> decode header; decoding needs no I/O, so the same code serves
streams, files, and the dissociated protocol where metadata and body arrive separately.
"""
from __future__ import annotations

import struct

from .._core.buffer import Buffer, py_buffer
from .._core.flatbuf import root_table
from ..errors import ArrowInvalid
from . import metadata as md
from .options import MAX_METADATA_SIZE
from .sources import open_source

CONTINUATION = b"\xff\xff\xff\xff"
EOS_MARKER = CONTINUATION + b"\x00\x00\x00\x00"
_U32 = struct.Struct("<I")
_I32 = struct.Struct("<i")

_TYPE_NAMES = {md.HEADER_SCHEMA: "schema", md.HEADER_RECORD_BATCH: "record batch",
               md.HEADER_DICTIONARY_BATCH: "dictionary", md.HEADER_TENSOR: "tensor",
               md.HEADER_SPARSE_TENSOR: "sparse tensor"}


class Message:
    """One IPC message: the decoded Message table, its raw metadata and its body."""
    __slots__ = ("metadata", "body", "header_type", "version", "header", "body_length",
                 "custom_metadata", "offset")

    def __init__(self, metadata: Buffer, body: Buffer | None, offset: int = -1):
        self.metadata = metadata
        self.offset = offset
        table = root_table(metadata, "Message")
        self.version = table.int16(0)
        self.header_type = table.uint8(1)
        self.body_length = table.int64(3)
        if self.version < 0 or self.version > md.METADATA_V5:
            raise ArrowInvalid(f"message at byte {offset}: metadata version V{self.version + 1} "
                               f"is newer than V5, the newest this reader understands")
        if self.version < md.METADATA_V4:
            raise ArrowInvalid(f"message at byte {offset}: metadata version V{self.version + 1} "
                               f"(before Arrow 0.8) is not supported; expected V4 or V5")
        if self.body_length < 0:
            raise ArrowInvalid(f"message at byte {offset}: body length {self.body_length} is negative")
        if self.header_type not in _TYPE_NAMES:
            raise ArrowInvalid(f"message at byte {offset}: unknown header type {self.header_type}")
        self.header = table.table(2, md.HEADER_NAMES.get(self.header_type, "header"))
        if self.header is None:
            raise ArrowInvalid(f"message at byte {offset}: {self.type} message without a header")
        self.custom_metadata = md.decode_custom_metadata(table, 4)
        self.body = body

    @property
    def type(self) -> str:
        return _TYPE_NAMES.get(self.header_type, "unknown")

    @property
    def metadata_version(self):
        from .options import MetadataVersion
        return MetadataVersion(self.version)

    def serialize(self, alignment: int = 8) -> Buffer:
        """The framed message (prefix, metadata padded to 8, body)."""
        meta = self.metadata.to_pybytes()
        pad = (-len(meta)) % 8
        out = CONTINUATION + _I32.pack(len(meta) + pad) + meta + bytes(pad)
        if self.body is not None:
            out += self.body.to_pybytes()
        return py_buffer(out)

    def equals(self, other) -> bool:
        return (isinstance(other, Message) and self.metadata.equals(other.metadata)
                and (self.body or b"") == (other.body or b""))

    def __repr__(self):
        return (f"<arrowipc.ipc.Message type={self.type} metadata_length={self.metadata.size} "
                f"body_length={self.body_length}>")


def read_message_from(source, max_metadata_size: int = MAX_METADATA_SIZE, where: str = "stream"):
    """The next message of `source`, or None at end of stream (EOS marker or clean EOF).

    Reads exactly the prefix, the metadata and the body, never more. Accepts the legacy framing
    (int32 length without the continuation marker) as well.
    """
    start = source.pos
    first = source.read(4)
    if first.size == 0:
        return None                                   # clean end without an EOS marker
    if first.size < 4:
        raise ArrowInvalid(f"{where}: truncated message prefix at byte {start}: expected 4 bytes, "
                           f"got {first.size}")
    if first.to_pybytes() == CONTINUATION:
        raw = source.read(4)
        if raw.size < 4:
            raise ArrowInvalid(f"{where}: truncated message length at byte {start + 4}: expected "
                               f"4 bytes, got {raw.size}")
        length = _I32.unpack(raw.to_pybytes())[0]
        prefix = 8
    else:
        length = _I32.unpack(first.to_pybytes())[0]   # pre-0.15 framing
        prefix = 4
    if length == 0:
        return None                                   # end-of-stream marker
    if length < 0 or length > max_metadata_size:
        raise ArrowInvalid(f"{where}: message at byte {start} claims {length} bytes of metadata; "
                           f"expected 1..{max_metadata_size}")
    meta = source.read(length)
    if meta.size < length:
        raise ArrowInvalid(f"{where}: truncated message at byte {start}: expected {length} bytes "
                           f"of metadata, got {meta.size}")
    msg = Message(meta, None, start)
    if msg.body_length:
        body = source.read(msg.body_length)
        if body.size < msg.body_length:
            raise ArrowInvalid(f"{where}: truncated {msg.type} message at byte {start}: expected a "
                               f"{msg.body_length}-byte body, got {body.size}")
        msg.body = body
    else:
        msg.body = py_buffer(b"")
    return msg


def read_message(source) -> Message:
    """Read one message (pyarrow.ipc.read_message)."""
    src = source if hasattr(source, "pos") and hasattr(source, "read_at") else open_source(source)
    msg = read_message_from(src)
    if msg is None:
        raise ArrowInvalid("expected a message, found the end of the stream")
    return msg


class MessageReader:
    """Iterates the messages of a stream (pyarrow.ipc.MessageReader)."""

    def __init__(self, source):
        self._source = open_source(source)

    @classmethod
    def open_stream(cls, source) -> "MessageReader":
        return cls(source)

    def read_next_message(self) -> Message:
        msg = read_message_from(self._source)
        if msg is None:
            raise StopIteration
        return msg

    def __iter__(self):
        while True:
            msg = read_message_from(self._source)
            if msg is None:
                return
            yield msg
