"""A push decoder for the IPC stream format: fed bytes as they arrive, it hands out each record
batch as soon as its message is complete.

    decoder = ipc.StreamDecoder()
    for chunk in chunks:                   # any sizes: 1 byte, a socket read, an HTTP body part
        for batch in decoder.feed(chunk):
            handle(batch)
    decoder.finish()                       # ArrowInvalid if the stream stopped mid-way

    async for batch in ipc.open_stream_async(asyncio_stream_reader):
        handle(batch)

It does no I/O and never reads ahead: a message is framed once all its bytes are there (by the
same Cython framing as the readers, offsets counted from the start of the stream) and decoded by
the readers' MessageDecoder, so validation levels, limits and error messages are the stream
reader's. Only the bytes of one incomplete message are held; a message that arrives in one
`bytes` chunk is used in place, one that spans chunks is joined once -- unless that leaves it at
another 8-byte alignment than the stream reader's in-memory input gives it: it is then copied
once to that alignment (which decides whether its buffers are re-aligned). Chunks other than `bytes`
(bytearray, memoryview, a socket's receive buffer) are copied, as their owner may reuse them.

Errors. Fed the same bytes in any chunking, the decoder gives the batches the stream reader
(`ipc.open_stream`) gives, then the same error: no good batch is lost and none is made up.
  * A message that fails raises its error from the `feed` that completes it -- unless that chunk
    completed good batches before it: `feed` then returns those batches and the error is raised
    by the next call (`feed` or `finish`). `error` tells whether one is waiting.
  * Errors are sticky: after one, every `feed` and `finish` raises it again; the bad message is
    never skipped, so nothing after it is decoded.
  * `finish()` says whether the bytes so far end the stream cleanly: the error met, or the
    reader's error for input that stops there (no schema, a message cut short, no end-of-stream
    marker). A cut is not an error of the bytes: it may be asked at any point and feeding may
    go on after it.
  * A stream of only an end-of-stream marker has no schema: the reader's "no schema" error.
The async reader hands out every batch, then raises the error; between reads it always awaits
its source, and it stops reading at the end-of-stream marker or at an error.
"""
from __future__ import annotations

import struct
from collections import deque
from typing import TYPE_CHECKING, AsyncIterator, Iterable, Iterator

from .. import types as T
from .._core.buffer import allocate_buffer, py_buffer
from ._framing import Message, decode_message, read_frame
from ..errors import ArrowException, ArrowInvalid, ArrowIOError
from ..table import RecordBatch
from .format import CONTINUATION
from .message import missing_eos_error, no_schema_error
from .options import IpcReadOptions, ReadStats
from .reader import MessageDecoder, RecordBatchWithMetadata

if TYPE_CHECKING:
    from .._core.buffer import Buffer
    from .._typing import AsyncReadable, ReadableBuffer
    from ..table import Table

__all__ = ["AsyncRecordBatchStreamReader", "StreamDecoder", "iter_stream_chunks", "open_stream_async"]

_I32 = struct.Struct("<i")


class StreamDecoder:
    """Decodes an Arrow IPC stream pushed to it in chunks of any size (no I/O, no read-ahead)."""

    def __init__(self, options: IpcReadOptions | None = None) -> None:
        self._decoder = MessageDecoder(options, "stream")
        self._max_metadata = self._decoder.options.max_metadata_size
        self._chunks: deque[memoryview | bytes] = deque()  # the bytes held for the next message
        self._held = 0                    # their total size
        self._offset = 0                  # stream offset of the first byte held
        self._frame_size = 0              # size of the message being received, once known
        self._head_size = 0               # its prefix and metadata, once known
        self._head = b""                  # those bytes, once all arrived (finish() asks often)
        self._has_schema = False
        self._ended = False
        self._error: ArrowException | None = None     # what stopped decoding, raised again

    # -- state -------------------------------------------------------------------------------

    @property
    def schema(self) -> T.Schema | None:
        """The stream's schema (projected by `included_fields`), None until its message arrived."""
        return self._decoder.schema if self._has_schema else None

    @property
    def stats(self) -> ReadStats:
        """Messages, batches and dictionaries decoded so far (as the readers count them)."""
        return self._decoder.stats.snapshot()

    @property
    def ended(self) -> bool:
        """True once the end-of-stream marker arrived; later bytes are ignored, as a reader
        never looks past that marker."""
        return self._ended

    @property
    def error(self) -> ArrowException | None:
        """The error that stopped decoding (raised again by every later feed and finish), None
        while the bytes are good."""
        return self._error

    @property
    def bytes_held(self) -> int:
        """Bytes received that belong to a message not complete yet."""
        return self._held

    @property
    def position(self) -> int:
        """Stream offset up to which every message has been decoded."""
        return self._offset

    # -- feeding -----------------------------------------------------------------------------

    def feed(self, data: ReadableBuffer) -> list[RecordBatch]:
        """Take the next bytes of the stream; the record batches they complete, in order.
        A message that fails raises its error here, or, when this chunk completed good batches
        before it, from the next call (those batches are returned first); the error is sticky."""
        return [batch for batch, _ in self._feed_messages(data)]

    def feed_with_custom_metadata(self, data: ReadableBuffer) -> list[RecordBatchWithMetadata]:
        """As `feed`, with each batch's custom metadata (metadata that does not decode is an
        error of its batch, as in the stream reader's read_next_batch_with_custom_metadata)."""
        return self._with_custom_metadata(self._feed_messages(data))

    def _with_custom_metadata(self, pairs: list[tuple[RecordBatch, Message]]
                             ) -> list[RecordBatchWithMetadata]:
        """RecordBatchWithMetadata of (batch, message) pairs `_feed_messages` returned: those
        before the first whose custom metadata fails, which becomes the decoder's error."""
        out: list[RecordBatchWithMetadata] = []
        for batch, msg in pairs:
            try:
                out.append(RecordBatchWithMetadata(batch, msg.custom_metadata))
            except ArrowException as e:
                self._error = e             # it comes before any error met later in the chunk
                if not out:
                    raise
                break
        return out

    def _feed_messages(self, data: ReadableBuffer) -> list[tuple[RecordBatch, Message]]:
        """As `feed`, each batch with its message."""
        if self._error is not None:
            raise self._error.with_traceback(None)
        if self._ended:
            return []
        if not isinstance(data, bytes):
            data = bytes(memoryview(data).cast("B"))   # its owner may reuse the memory
        if not data:
            return []
        self._chunks.append(memoryview(data))           # sliced without copying
        self._held += len(data)
        out: list[tuple[RecordBatch, Message]] = []
        try:
            while not self._ended:
                size = self._frame_size or self._next_frame_size()
                if size is None or self._held < size:
                    break
                self._frame_size = self._head_size = 0
                self._head = b""
                frame = self._take(size)
                if (frame.address - self._offset) & 7:
                    frame = _placed_as_in_memory(frame, self._offset)
                msg, _ = read_frame(frame, 0, size, self._max_metadata, "stream", True,
                                    self._offset)
                self._offset += size
                if msg is None:                 # the end-of-stream marker
                    if not self._has_schema:    # the stream reader's refusal of the same bytes
                        raise no_schema_error(self._offset)
                    self._ended = True
                    self._chunks.clear()
                    self._held = 0
                elif not self._has_schema:
                    self._decoder.read_schema_message(msg)
                    self._has_schema = True
                else:
                    batch = self._decoder.decode(msg)
                    if batch is not None:
                        out.append((batch, msg))
        except ArrowException as e:
            # sticky: the bad message stays unread, so nothing after it can be decoded
            self._error = e
            if not out:
                raise
            # the batches this chunk completed before the bad message are handed out now, the
            # error by the next feed or finish
        return out

    def finish(self) -> None:
        """Check that the bytes fed so far end the stream cleanly; ArrowInvalid otherwise, with
        the stream reader's message for the same bytes: the error that stopped decoding, or what
        the reader says of input that stops here. A stop is not an error of the bytes: asking
        changes nothing, so it may be asked at any point and more bytes fed afterwards."""
        if self._error is not None:
            raise self._error.with_traceback(None)
        if self._ended:
            return
        if self._held:                      # a message cut short: the framing says where
            # Its verdict needs the prefix and metadata and the count of body bytes, not their
            # values: zeros stand in for the body, so asking costs no join of the chunks held.
            frame = bytearray(self._held)
            head = self._head or self._peek(min(self._held, self._head_size or 8))
            frame[:len(head)] = head
            read_frame(py_buffer(frame), 0, self._held, self._max_metadata, "stream", True,
                       self._offset)
            raise ArrowInvalid(f"stream: incomplete message at byte {self._offset}")  # not reached
        if not self._has_schema:
            raise no_schema_error(self._offset)
        if not self._decoder.options.allow_missing_eos:
            raise missing_eos_error(self._offset, self._decoder.stats.num_record_batches)

    # -- framing -----------------------------------------------------------------------------

    def _next_frame_size(self) -> int | None:
        """Bytes of the next message (prefix, metadata, body), or None until enough arrived to
        know. A prefix the framing refuses raises its error at once."""
        if self._held < 4:
            return None
        head = self._peek(min(self._held, 8))
        length: int
        prefix, length = 4, _I32.unpack_from(head)[0]
        if head[:4] == CONTINUATION:
            if len(head) < 8:
                return None
            prefix, length = 8, _I32.unpack_from(head, 4)[0]
        if length == 0:
            return prefix                    # end-of-stream marker
        if length < 0 or length > self._max_metadata:
            frame = py_buffer(head)          # the framing raises its own message for this
            read_frame(frame, 0, len(head), self._max_metadata, "stream", False, self._offset)
        self._head_size = prefix + length
        if self._held < prefix + length:
            return None
        self._head = self._peek(prefix + length)
        body_length: int = decode_message(py_buffer(self._head[prefix:]), self._offset).body_length
        self._frame_size = prefix + length + body_length
        return self._frame_size

    def _peek(self, n: int) -> bytes:
        """A copy of the first `n` held bytes (prefixes and metadata only: small)."""
        first = self._chunks[0]
        if len(first) >= n:
            return bytes(first[:n])
        return bytes(self._take(n, keep=True))

    def _take(self, n: int, keep: bool = False) -> Buffer:
        """A Buffer of the first `n` held bytes, removed unless `keep`: a zero-copy view when one
        chunk holds them, else joined once."""
        first = self._chunks[0]
        if len(first) >= n:
            out = py_buffer(first[:n])
            if not keep:
                self._held -= n
                if len(first) == n:
                    self._chunks.popleft()
                else:
                    self._chunks[0] = first[n:]
            return out
        parts: list[memoryview | bytes] = []
        got = i = 0
        while got < n:
            chunk = self._chunks[i]
            part = chunk[:n - got]
            parts.append(part)
            got += len(part)
            i += 1
        joined = b"".join(parts)
        for _ in range(i):
            self._chunks.popleft()
        if len(part) < len(chunk):
            self._chunks.appendleft(chunk[len(part):])
        if keep:
            # the joined bytes replace the chunks they came from, so asking again (the head of a
            # message arriving a byte at a time) joins only what arrived since
            self._chunks.appendleft(joined)
        else:
            self._held -= n
        return py_buffer(joined)


def _placed_as_in_memory(frame: Buffer, offset: int) -> Buffer:
    """A copy of `frame` (the message at stream `offset`) at an address congruent to `offset`
    modulo 8, where it sits when the stream reader reads the whole stream from memory: whether
    a buffer is misaligned, and so re-aligned (or refused when re-aligning would copy more than
    the body), then does not depend on how the stream was cut into chunks."""
    shift = offset & 7
    placed = allocate_buffer(frame.size + shift, zero=False)
    memoryview(placed)[shift:] = memoryview(frame)
    return placed.slice(shift, frame.size)


class AsyncRecordBatchStreamReader:
    """`async for batch in reader`: an IPC stream read from an asyncio.StreamReader (or any object
    with an awaitable `read(n)`), decoded by a StreamDecoder as the bytes arrive."""

    def __init__(self, source: AsyncReadable, options: IpcReadOptions | None = None,
                 chunk_size: int = 1 << 16) -> None:
        self._source = source
        self._chunk_size = chunk_size
        self._decoder = StreamDecoder(options)
        self._ready: deque[tuple[RecordBatch, Message]] = deque()
        self._source_done = False           # its read() returned no bytes: it has ended

    @property
    def schema(self) -> T.Schema | None:
        """The schema, once its message has arrived (after the first `await` at the latest)."""
        return self._decoder.schema

    @property
    def stats(self) -> ReadStats:
        """Messages, batches and dictionaries decoded so far."""
        return self._decoder.stats          # the StreamDecoder's stats: already a snapshot

    async def read_schema(self) -> T.Schema:
        """Read until the schema message has arrived; the schema."""
        while (schema := self._decoder.schema) is None:
            if not await self._pull():
                # not reached: finish() raised the stream reader's "no schema" error
                raise no_schema_error(self._decoder.position)
        return schema

    async def read_next_batch_with_custom_metadata(self) -> RecordBatchWithMetadata:
        """The next batch with its custom metadata; StopAsyncIteration at the end."""
        while not self._ready:
            if not await self._pull():
                raise StopAsyncIteration
        (item,) = self._decoder._with_custom_metadata([self._ready[0]])
        self._ready.popleft()
        return item

    async def read_next_batch(self) -> RecordBatch:
        """The next batch; StopAsyncIteration at the end."""
        while not self._ready:
            if not await self._pull():
                raise StopAsyncIteration
        return self._ready.popleft()[0]

    async def read_all(self) -> Table:
        """Every remaining batch as a Table."""
        from ..table import Table
        schema = await self.read_schema()
        return Table(schema, [batch async for batch in self])

    async def _pull(self) -> bool:
        """Read one chunk of the source and feed it: True. At the end of the source, of the
        stream, or after an error: False once finish() has checked the end (it raises unless
        the stream ended cleanly). Each call awaits the source or ends the read, so no loop over
        it can spin without yielding to the event loop."""
        dec = self._decoder
        if not (self._source_done or dec.ended or dec.error is not None):
            data = await self._source.read(self._chunk_size)
            if not isinstance(data, (bytes, bytearray, memoryview)):
                raise ArrowIOError(f"stream: the source's read({self._chunk_size}) at byte "
                                   f"{dec.position + dec.bytes_held} returned "
                                   f"{type(data).__name__}, expected bytes")
            if data:
                self._ready.extend(dec._feed_messages(data))
                return True
            self._source_done = True
        dec.finish()
        return False

    def __aiter__(self) -> AsyncIterator[RecordBatch]:
        return self

    async def __anext__(self) -> RecordBatch:
        return await self.read_next_batch()


def open_stream_async(source: AsyncReadable, *, options: IpcReadOptions | None = None,
                      chunk_size: int = 1 << 16) -> AsyncRecordBatchStreamReader:
    """An async reader of the IPC stream coming from `source` (asyncio.StreamReader or any object
    with an awaitable read(n)): `async for batch in ipc.open_stream_async(reader)`."""
    return AsyncRecordBatchStreamReader(source, options, chunk_size)


def iter_stream_chunks(chunks: Iterable[ReadableBuffer], options: IpcReadOptions | None = None) -> Iterator[RecordBatch]:
    """The batches of a stream given as an iterable of byte chunks (an HTTP body, say)."""
    decoder = StreamDecoder(options)
    for chunk in chunks:
        yield from decoder.feed(chunk)
    decoder.finish()
