"""Encapsulated messages: framing (continuation marker, length, metadata, padding, body).

Reading goes peek prefix -> verify -> decode header; decoding needs no I/O, so the same code serves
streams, files, and the dissociated protocol where metadata and body arrive separately.
"""
from __future__ import annotations

import struct

from .._core.buffer import py_buffer
from . import _framing
from ..errors import ArrowInvalid, ArrowTruncatedBody
from .format import CONTINUATION, MAX_METADATA_SIZE, file_read_as_stream_hint
from .filesystems import open_reading

__all__ = ["Message", "MessageReader", "read_message"]

TYPE_CHECKING = False               # typing itself is not imported at run time
if TYPE_CHECKING:
    from typing import Any, Iterator

    from .._typing import SourceLike

_I32 = struct.Struct("<i")

Message = _framing.Message


def read_message_from(source: Any, max_metadata_size: int = MAX_METADATA_SIZE,
                      where: str = "stream") -> Message | None:
    """The next message of `source`, or None at end of stream (EOS marker or clean EOF).

    Reads exactly the prefix, the metadata and the body, never more.
    """
    if hasattr(source, "buf"):                      # in memory: zero-copy framing in Cython
        msg: Message | None
        msg, source.pos = _framing.read_frame(source.buf, source.pos, source.end, max_metadata_size,
                                              where, True)
        return msg
    msg = read_message_header(source, max_metadata_size, where)
    if msg is None:
        return None
    if msg.body_length:
        body = source.read(msg.body_length)
        if body.size < msg.body_length:
            raise ArrowTruncatedBody(f"{where}: truncated {msg.type} message at byte "
                                     f"{msg.offset}. Expected to be able to read "
                                     f"{msg.body_length} bytes for message body, got "
                                     f"{body.size}")
        msg.body = body
    else:
        msg.body = py_buffer(b"")
    return msg


def no_schema_error(pos: int) -> ArrowInvalid:
    """A stream that ends (at `pos`) before its schema message: the readers' and the push
    decoder's one wording."""
    return ArrowInvalid(f"stream: expected a schema message at byte {pos}, found the end of the "
                        f"stream (empty or truncated input)")


def missing_eos_error(pos: int, num_record_batches: int) -> ArrowInvalid:
    """A stream cut at a message boundary (`pos`), without its end-of-stream marker."""
    return ArrowInvalid(f"stream: truncated at byte {pos}: the input ends after "
                        f"{num_record_batches} record batches without an end-of-stream marker "
                        f"(IpcReadOptions(allow_missing_eos=True) accepts that)")


def read_message_header(source: Any, max_metadata_size: int = MAX_METADATA_SIZE,
                        where: str = "stream") -> Message | None:
    """The next message's prefix and metadata (body not read), or None at end of stream.

    Accepts the legacy framing (int32 length without the continuation marker) as well.
    """
    if hasattr(source, "buf"):
        msg: Message | None
        msg, source.pos = _framing.read_frame(source.buf, source.pos, source.end, max_metadata_size,
                                              where, False)
        return msg
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
        length: int = _I32.unpack(raw.to_pybytes())[0]
    else:
        length = _I32.unpack(first.to_pybytes())[0]   # pre-0.15 framing
    if length == 0:
        return None                                   # end-of-stream marker
    if length < 0 or length > max_metadata_size:
        head = first.to_pybytes() + (source.read(4).to_pybytes() if start == 0 else b"")
        raise ArrowInvalid(f"{where}: message at byte {start} claims {length} bytes of metadata; "
                           f"expected 1..{max_metadata_size}{file_read_as_stream_hint(head, start)}")
    meta = source.read(length)
    if meta.size < length:
        raise ArrowInvalid(f"{where}: truncated message at byte {start}: expected {length} bytes "
                           f"of metadata, got {meta.size}")
    return _framing.decode_message(meta, start)


def read_first_message(source: Any, where: str = "stream") -> Message | None:
    """The message at the start of `source` (None at its end); a connection opened here for a
    URL is closed afterwards (the body is in memory of its own by then), a caller's file object
    is left positioned after the message."""
    src = open_reading(source)
    try:
        return read_message_from(src, where=where)
    finally:
        _close_if_opened(src, source)


def _close_if_opened(src: Any, given: Any) -> None:
    # only what open_reading opened itself (a URL's connection); never a caller's object
    if src is not given and getattr(src, "owns", False):
        src.close()


def read_message(source: SourceLike) -> Message:
    """Read one message (pyarrow.ipc.read_message) from bytes, a buffer or a file-like object,
    which is left positioned after it.

    At the end of the input (or its end-of-stream marker) raises EOFError, as pyarrow does, so
    ``except EOFError: break`` ends a loop; a partial message raises ArrowInvalid.
    """
    src = source if hasattr(source, "pos") and hasattr(source, "read_at") else open_reading(source)
    start = src.pos
    try:
        msg = read_message_from(src)
    except ArrowInvalid as e:
        raise ArrowInvalid(f"Corrupted message: {e}") from None
    finally:
        _close_if_opened(src, source)
    if msg is None:
        raise EOFError(f"read_message: expected a message at byte {start}, found the end of "
                       f"the stream")
    return msg


class MessageReader:
    """Iterates the messages of a stream (pyarrow.ipc.MessageReader)."""

    def __init__(self, source: SourceLike) -> None:
        self._source = open_reading(source)

    @classmethod
    def open_stream(cls, source: SourceLike) -> MessageReader:
        """A MessageReader over `source` (pyarrow's constructor spelling)."""
        return cls(source)

    def read_next_message(self) -> Message:
        """The next message; StopIteration at the end of the stream."""
        msg = read_message_from(self._source)
        if msg is None:
            raise StopIteration
        return msg

    def __iter__(self) -> Iterator[Message]:
        while True:
            msg = read_message_from(self._source)
            if msg is None:
                return
            yield msg
