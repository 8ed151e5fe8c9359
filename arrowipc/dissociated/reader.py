"""The Dissociated IPC client: request a ticket, reassemble metadata and bodies by sequence number.

Untagged messages are metadata, tagged ones bodies, whatever connection they come on. Messages
are decoded strictly in sequence order with the IPC engine's own decoder (MessageDecoder), so
dictionaries, deltas, replacements and compression behave exactly as in an IPC stream. Type-1
bodies become zero-copy views of the server's shared memory; a body's addresses go back in a
free_data message when the last view of it goes.
"""
from __future__ import annotations

import os
import selectors
import threading
import time

from .. import types as T
from . import _wire as wire
from ..ipc._batch_decode import decode_record_batch_header
from .._core.buffer import allocate
from ._shm import Mapping, peer_read, place_regions, scatter_copy
from ..ipc._framing import decode_message
from ..errors import ArrowInvalid, ArrowKeyError
from ..ipc import metadata as md
from ..ipc.options import IpcReadOptions, ReadStats
from ..ipc.reader import MessageDecoder
from ..table import RecordBatch, Table
from . import transport as tp
from .layout import split_address
from .segments import DEFAULT_MAX_MAPPED_BYTES, FreeChannel, Segment, SegmentTable, SharedBody
from .uri import SCHEME_UNIX, parse_uri

TYPE_CHECKING = False               # typing itself is not imported at run time
if TYPE_CHECKING:
    from collections.abc import Callable, Iterator
    from typing import Any, NoReturn, TypeVar

    from .._core.buffer import Buffer
    from ..ipc._framing import Message
    from .transport import Frame, SocketTransport
    from .uri import DissociatedURI

    _Parsed = TypeVar("_Parsed")

__all__ = ["connect", "DEFAULT_MAX_PENDING", "DEFAULT_MAX_PENDING_BYTES", "DEFAULT_TIMEOUT",
           "DissociatedClient", "DissociatedReader"]

DEFAULT_TIMEOUT = 60.0
DEFAULT_MAX_PENDING = 4096
DEFAULT_MAX_PENDING_BYTES = 8 << 30
_LOOPBACK = ("127.0.0.1", "::1", "localhost")
_FREE_EARLY = 16               # deferred free_data addresses sent without waiting for a pause
# a type-1 body in the server's memory this large is copied on a helper thread while the caller
# works on the batch before it (the copy costs about 0.1-0.2 ms per MiB: worth a thread)
READ_AHEAD_BYTES = 4 << 20
_BODY_HEADERS = (md.HEADER_RECORD_BATCH, md.HEADER_DICTIONARY_BATCH)


class _Channel:
    """One connection: its transport, the tags from its URI, its segments and free_data sender."""

    def __init__(self, uri: DissociatedURI, transport: SocketTransport, name: str,
                 max_mapped_bytes: int) -> None:
        self.uri = uri
        self.name = name
        self.transport = transport
        self.want_tag = uri.want_data
        self.free = FreeChannel(transport, uri.free_data)
        self.segments = SegmentTable(name, token=uri.remote_handle,
                                     max_mapped_bytes=max_mapped_bytes)
        self.ended = True             # nothing more expected until a request is sent
        self.peer_pid: int | None = None   # set once we proved we can read the server's memory
        self.hello_flags = 0          # the shared memory our hello offered (tp.HELLO_*)


class _Pending:
    """A metadata message waiting for its turn (and its body, when it has one); `size`: the
    bytes it holds (its frame's payload), counted against max_pending_bytes."""
    __slots__ = ("message", "needs_body", "size")

    def __init__(self, message: Message, needs_body: bool, size: int) -> None:
        self.message = message
        self.needs_body = needs_body
        self.size = size


class _Body:
    """A body that arrived, waiting for its metadata's turn: bytes (type 0) or the addresses
    of its regions in shared memory (type 1)."""
    __slots__ = ("channel", "body_type", "payload", "total", "pairs", "size")

    def __init__(self, channel: _Channel, body_type: int, payload: Buffer, total: int | None = None,
                 pairs: list[tuple[int, int]] | None = None) -> None:
        self.channel = channel
        self.body_type = body_type
        self.payload = payload
        self.total = total
        self.pairs = pairs
        self.size = payload.size


class _PeerCopy:
    """A type-1 body being copied out of the server's memory by a helper thread (peer_read
    runs without the GIL): the reader's read-ahead."""
    __slots__ = ("body", "decoded", "addresses", "_thread", "_out", "_error")

    def __init__(self, body: _Body, pid: int, length: int,
                 regions: list[tuple[int, int, int]], decoded: Any, addresses: list[int]) -> None:
        self.body = body
        self.decoded = decoded
        self.addresses = addresses
        self._out: Buffer | None = None
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, args=(pid, length, regions),
                                        daemon=True, name="arrowipc-dissociated-read-ahead")
        self._thread.start()

    def _run(self, pid: int, length: int, regions: list[tuple[int, int, int]]) -> None:
        try:
            self._out = peer_read(pid, length, regions)
        except BaseException as e:          # handed to the reader, raised in its thread
            self._error = e

    def result(self) -> Buffer:
        """The copied body once the copy is done; raises what the copy raised."""
        self._thread.join()
        if self._error is not None:
            raise self._error
        assert self._out is not None        # no error: the copy produced it
        return self._out


class DissociatedClient:
    """Connections to a dissociated server (one URI, or a metadata and a data URI); reads one
    stream at a time.

    max_mapped_bytes caps the shared-memory segments one connection maps at a time (mapping
    costs address space only; pages are touched where bodies point); a larger segment is
    refused with ArrowInvalid.
    """

    def __init__(self, uri: str, *, data_uri: str | None = None,
                 timeout: float | None = DEFAULT_TIMEOUT, shared_memory: bool | None = None,
                 max_frame: int = tp.DEFAULT_MAX_FRAME,
                 max_mapped_bytes: int = DEFAULT_MAX_MAPPED_BYTES) -> None:
        self.timeout = timeout
        self.channels: list[_Channel] = []
        self.streaming = False        # a reader has requested a stream and not reached its end
        self.broken = False
        try:
            for which, text in (("metadata", uri), ("data", data_uri)):
                if text is None:
                    continue
                u = parse_uri(text)
                name = f"{which} connection {text.split('?')[0]}" if data_uri else \
                    f"connection {text.split('?')[0]}"
                if u.scheme == SCHEME_UNIX:
                    assert u.path is not None               # parse_uri sets it for unix URIs
                    t = tp.connect_unix(u.path, timeout=timeout, max_frame=max_frame)
                else:
                    assert u.host is not None and u.port is not None    # and these for tcp
                    t = tp.connect_tcp(u.host, u.port, timeout=timeout, max_frame=max_frame)
                ch = _Channel(u, t, name, max_mapped_bytes)
                self.channels.append(ch)
                flags = 0
                if shared_memory is not False:
                    if u.scheme == SCHEME_UNIX:
                        flags |= tp.HELLO_MEMFD | tp.HELLO_PEER
                    elif shared_memory or u.host in _LOOPBACK:
                        flags |= tp.HELLO_NAMED
                ch.hello_flags = flags
                _send_to(ch, wire.FRAME_HELLO, 0, [tp.hello_payload(flags)])
        except BaseException:
            self.close()
            raise

    def read(self, ticket: bytes | str, *, options: IpcReadOptions | None = None,
             first_sequence: int = 0,
             accept_shift55: bool = False, max_pending: int = DEFAULT_MAX_PENDING,
             max_pending_bytes: int = DEFAULT_MAX_PENDING_BYTES) -> "DissociatedReader":
        """Request `ticket` (bytes or str) and return the reader of its stream (the options as
        connect() takes them)."""
        if self.broken:
            raise ArrowInvalid("this dissociated client failed earlier; open a new one")
        if self.streaming:
            raise ArrowInvalid("the previous stream on this client is not finished; read it to "
                               "the end (or close the client) before requesting another")
        reader = DissociatedReader(self, _ticket_bytes(ticket), options=options,
                                   first_sequence=first_sequence, accept_shift55=accept_shift55,
                                   max_pending=max_pending, max_pending_bytes=max_pending_bytes)
        reader._start()
        return reader

    def close(self) -> None:
        """Close the connections; the server then frees every block it handed out here (batches
        still alive keep their mappings and stay valid)."""
        for ch in self.channels:
            ch.free.flush()
            ch.transport.close()
            ch.segments.close()

    def __enter__(self) -> DissociatedClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _ticket_bytes(ticket: bytes | str) -> bytes:
    if isinstance(ticket, str):
        return ticket.encode("utf-8")
    return bytes(ticket)


class DissociatedReader:
    """Batches of one dissociated stream, in sequence order (a pyarrow-like stream reader)."""

    def __init__(self, client: DissociatedClient, ticket: bytes, *,
                 options: IpcReadOptions | None = None,
                 first_sequence: int = 0, accept_shift55: bool = False,
                 max_pending: int = DEFAULT_MAX_PENDING,
                 max_pending_bytes: int = DEFAULT_MAX_PENDING_BYTES, owns_client: bool = False
                 ) -> None:
        self._client = client
        self.ticket = ticket
        self._decoder = MessageDecoder(options, "dissociated stream")
        self._first = wire.sequence_at(first_sequence, 0)
        self._accept55 = bool(accept_shift55)
        self._max_pending = int(max_pending)
        self._max_pending_bytes = int(max_pending_bytes)
        self._owns_client = owns_client
        self._next = 0                 # stream position of the next message to decode
        self._eos: int | None = None   # stream position of the end-of-stream message
        self._meta: dict[int, _Pending] = {}        # position -> metadata waiting
        self._bodies: dict[int, _Body] = {}         # position -> body waiting
        self._pending_bytes = 0
        self._finished = False
        self._schema: T.Schema | None = None
        self._selector: selectors.BaseSelector | None = None
        self._ahead: _PeerCopy | None = None       # the next body, being copied from the server
        self._deferred: Exception | None = None    # met while reading ahead: raised in turn
        self._large_peer_body = False      # the last body came from the server's memory, large

    # -- setup ------------------------------------------------------------------------------------
    def _start(self) -> None:
        try:
            self._client.streaming = True
            for ch in self._client.channels:
                ch.ended = False
                # a metadata message is refused at its frame header when its flatbuffer would
                # pass max_metadata_size (a stream reader's limit), before it is read
                ch.transport.max_message = wire.PREFIX_SIZE + \
                    self._decoder.options.max_metadata_size
                _send_to(ch, wire.FRAME_TAGGED, ch.want_tag, [self.ticket])
            self._advance()                               # decodes the schema first
            if self._decoder.schema is None:
                raise ArrowInvalid(f"dissociated stream: ended before its schema (sequence "
                                   f"{self._first})")
            self._schema = self._decoder.schema
        except BaseException:
            self._fail()
            raise

    @property
    def schema(self) -> T.Schema:
        """The schema of the stream."""
        assert self._schema is not None     # _start read it before the reader was handed out
        return self._schema

    @property
    def stats(self) -> ReadStats:
        """The read statistics so far (pyarrow's ReadStats)."""
        return self._decoder.stats.snapshot()

    # -- iteration ---------------------------------------------------------------------------------
    def read_next_batch(self) -> RecordBatch:
        """The next RecordBatch; StopIteration at the end of the stream."""
        if self._finished:
            raise StopIteration
        try:
            batch = self._advance()
        except BaseException:
            self._fail()
            raise
        if batch is None:
            raise StopIteration
        return batch

    def __iter__(self) -> Iterator[RecordBatch]:
        while True:
            try:
                yield self.read_next_batch()
            except StopIteration:
                return

    def read_all(self) -> Table:
        """Every remaining batch as one Table."""
        return Table(self.schema, list(self))

    def __arrow_c_stream__(self, requested_schema: object = None) -> object:
        from ..interop import export_stream
        return export_stream(self.schema, iter(self), requested_schema)

    def close(self) -> None:
        """Stop reading; if the stream is not finished, the connection is closed (the server
        frees this client's blocks; batches already returned stay valid)."""
        if not self._finished:
            self._finished = True
            self._client.broken = True
            self._client.close()
        elif self._owns_client:
            self._client.close()
        self._drop_buffered()

    def __enter__(self) -> DissociatedReader:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _fail(self) -> None:
        self._finished = True
        self._client.broken = True
        self._client.close()
        self._drop_buffered()

    def _drop_buffered(self) -> None:
        self._ahead = None              # a copy still running finishes on its own, unused
        self._meta.clear()
        self._bodies.clear()
        self._pending_bytes = 0
        if self._selector is not None:
            self._selector.close()
            self._selector = None

    # -- the reassembly loop -----------------------------------------------------------------------
    def _advance(self) -> RecordBatch | None:
        """Decode messages in order until a batch comes out (or the schema, at the start);
        None at the end of the stream."""
        if self._deferred is not None:
            error, self._deferred = self._deferred, None
            raise error
        while True:
            pos = self._next
            if self._eos is not None and pos == self._eos:
                self._finish()
                return None
            entry = self._meta.get(pos)
            if entry is not None and (not entry.needs_body or pos in self._bodies):
                del self._meta[pos]
                self._pending_bytes -= entry.size
                msg = entry.message
                header = None
                if entry.needs_body:
                    body = self._bodies.pop(pos)
                    self._pending_bytes -= body.size
                    msg.body, header = self._body_buffer(pos, msg, body)
                self._next = pos + 1
                batch = self._decode(pos, msg, header)
                if batch is not None and self._large_peer_body:
                    self._read_ahead()
                if pos == 0 or batch is not None:
                    return batch
                continue
            if not self._receive():
                self._raise_missing(pos, entry)

    def _decode(self, pos: int, msg: Message, header: Any = None) -> RecordBatch | None:
        try:
            if pos == 0:
                self._decoder.read_schema_message(msg)
                return None
            batch: RecordBatch | None = self._decoder.decode(msg, header)
            if batch is not None:
                # its checks run when a column is first taken (it may not be assembled yet):
                # what they raise names the message
                batch._where = f"dissociated stream, sequence {self._seq(pos)}"
            return batch
        except ArrowInvalid as e:
            # the decoder names the stream itself ("dissociated stream: ..."): say it once
            text = str(e).removeprefix("dissociated stream: ")
            raise ArrowInvalid(f"dissociated stream, sequence {self._seq(pos)}: {text}") from e

    def _finish(self) -> None:
        """End of stream reached: wait for every connection's stream end, then check leftovers."""
        assert self._eos is not None        # _advance calls this at the end-of-stream position
        while any(not ch.ended for ch in self._client.channels):
            if not self._receive():
                break
        if self._bodies:
            pos = min(self._bodies)
            raise ArrowInvalid(f"orphan body with sequence {self._seq(pos)}: the stream ended at "
                               f"sequence {self._seq(self._eos)} without a metadata message for it")
        self._finished = True
        self._client.streaming = False
        for ch in self._client.channels:
            ch.free.flush()
        self._schema_only_decoder()

    def _schema_only_decoder(self) -> None:
        # The stream is over: drop the dictionary memo so dictionary bodies no batch uses are
        # freed (batches keep the dictionaries they reference).
        self._decoder.memo = None

    def _raise_missing(self, pos: int, entry: _Pending | None) -> NoReturn:
        seq = self._seq(pos)
        if entry is not None:
            raise ArrowInvalid(f"missing body for sequence {seq}: its {entry.message.type} "
                               f"metadata arrived but the connections ended without the body")
        if self._eos is not None:
            raise ArrowInvalid(f"gap before end of stream: metadata message with sequence {seq} "
                               f"never arrived (end of stream at sequence {self._seq(self._eos)})")
        raise ArrowInvalid(f"connections ended before the end-of-stream message; the next "
                           f"expected sequence was {seq}")

    def _seq(self, pos: int) -> int:
        return wire.sequence_at(self._first, pos)

    # -- reading ahead -----------------------------------------------------------------------------
    def _read_ahead(self) -> None:
        """Start copying the next body out of the server's memory on a helper thread, so the
        copy overlaps whatever the caller does with the batch being returned: only a type-1 body
        of READ_AHEAD_BYTES or more, on a peer-memory connection, whose frames have arrived
        already (frames that are waiting are handled now; what they raise is raised by the next
        read, in order; a frame not whole yet is left for later, so the batch being returned
        never waits for it). A body that fails a check is left for its turn, which raises."""
        if self._ahead is not None or self._deferred is not None:
            return
        pos = self._next
        try:
            while pos not in self._meta or pos not in self._bodies:
                ready = next((ch for ch in self._client.channels
                              if not ch.ended and ch.transport.frame_ready()), None)
                if ready is None:
                    return
                self._receive_from(ready)
        except Exception as e:
            self._deferred = e
            return
        entry, body = self._meta.get(pos), self._bodies.get(pos)
        if entry is None or body is None or body.body_type != wire.BODY_SHARED:
            return
        pid, length = body.channel.peer_pid, entry.message.body_length
        if pid is None or length < READ_AHEAD_BYTES:
            return
        try:
            decoded, placed, addresses, in_peer, _ = self._place(self._seq(pos), entry.message,
                                                                 body, length)
        except ArrowInvalid:
            return
        if not in_peer:
            return
        self._ahead = _PeerCopy(body, pid, length, [(a, n, d) for a, n, d in placed if n],
                                decoded, addresses)

    # -- receiving ---------------------------------------------------------------------------------
    def _receive(self) -> bool:
        """Handle one frame from a connection that still has something for this stream; False
        when none has."""
        live = [ch for ch in self._client.channels if not ch.ended]
        if not live:
            return False
        self._receive_from(live[0] if len(live) == 1 else self._ready_channel(live))
        return True

    def _receive_from(self, ch: _Channel) -> None:
        """Handle the next frame of `ch` (its end, when it closed)."""
        for c in self._client.channels:
            # about to wait (or a few bodies copied out already): give their blocks back now
            if c.free.pending and (len(c.free.pending) >= _FREE_EARLY or
                                   not c.transport.pending()):
                c.free.flush()
        frame = ch.transport.receive()
        if frame is None:
            ch.ended = True
            return
        self._handle(ch, frame)

    def _ready_channel(self, live: list[_Channel]) -> _Channel:
        for ch in live:
            if ch.transport.pending():          # read ahead already: the socket may stay quiet
                return ch
        if self._selector is None:
            self._selector = selectors.DefaultSelector()
            for ch in self._client.channels:
                self._selector.register(ch.transport.sock, selectors.EVENT_READ, ch)
        timeout = self._client.timeout
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            wait = None if deadline is None else max(0.0, deadline - time.monotonic())
            for key, _ in self._selector.select(wait):
                ready: _Channel = key.data          # registered with each channel as its data
                if not ready.ended:
                    return ready
            if deadline is not None and time.monotonic() >= deadline:
                raise TimeoutError(f"dissociated stream: nothing arrived for {timeout} s while "
                                   f"waiting for sequence {self._seq(self._next)}")

    def _handle(self, ch: _Channel, frame: Frame) -> None:
        kind = frame.kind
        if kind == wire.FRAME_MESSAGE:
            self._on_metadata(frame.payload)
        elif kind == wire.FRAME_TAGGED:
            self._on_body(ch, frame.tag, frame.payload)
        elif kind == wire.FRAME_SEGMENT:
            try:
                seg_id, size, name, bodies = _parse_on(ch, tp.parse_segment, frame.payload)
                # a descriptor only when we offered to map memfds; a name when we offered
                # shared memory at all (named files on this host)
                offered = ch.hello_flags & tp.HELLO_MEMFD if name is None else ch.hello_flags
                if not offered:
                    raise ArrowInvalid(f"{ch.name}: segment frame {seg_id} "
                                       f"({'a descriptor' if name is None else 'named'}) on a "
                                       f"connection whose hello offered no such shared memory "
                                       f"(flags 0x{ch.hello_flags:x})")
            except ArrowInvalid:
                if frame.fd is not None:        # add() closes it; a frame refused before, here
                    os.close(frame.fd)
                raise
            if ch.segments.add(seg_id, size, frame.fd, name, bodies):
                ch.transport.send_frame(wire.FRAME_SEGMENT_ACK, 0, [tp.segment_ack_payload(seg_id)])
        elif kind == wire.FRAME_PEER:
            self._answer_peer_probe(ch, frame.payload)
        elif kind == wire.FRAME_STREAM_END:
            if frame.payload.size:
                raise ArrowInvalid(f"{ch.name}: stream-end frame with a {frame.payload.size}-byte "
                                   f"payload; expected none")
            ch.ended = True
        elif kind == wire.FRAME_ERROR:
            raise _server_error(*_parse_on(ch, tp.parse_error, frame.payload))
        else:
            raise ArrowInvalid(f"{ch.name}: unexpected {wire.FRAME_KIND_NAMES[kind]} frame from "
                               f"the server")

    def _answer_peer_probe(self, ch: _Channel, payload: Buffer) -> None:
        """The server offers type-1 addresses in its own memory: accept when we can read its
        probe bytes there (same host, and the kernel lets us: process_vm_readv)."""
        if ch.peer_pid is not None or not ch.transport.is_unix:
            raise ArrowInvalid(f"{ch.name}: unexpected peer memory frame")
        if not ch.hello_flags & tp.HELLO_PEER:
            raise ArrowInvalid(f"{ch.name}: peer memory frame on a connection whose hello did "
                               f"not offer to read the server's memory (flags "
                               f"0x{ch.hello_flags:x})")
        address, expected = _parse_on(ch, tp.parse_peer_probe, payload)
        pid = tp.peer_pid(ch.transport.sock)
        try:
            ok = pid > 0 and peer_read(pid, len(expected),
                                       [(address, len(expected), 0)]).to_pybytes() == expected
        except ArrowInvalid:
            ok = False
        if ok:
            ch.peer_pid = pid
        ch.transport.send_frame(wire.FRAME_PEER, 0, [tp.peer_reply_payload(ok)])

    def _position(self, seq: int, what: str) -> int:
        pos = wire.unwrap_sequence(seq, self._first, self._next)
        if pos < 0:
            raise ArrowInvalid(f"{what} with sequence {seq} lies before the start of the stream "
                               f"(sequence {self._first})")
        return pos

    def _on_metadata(self, payload: Buffer) -> None:
        kind, seq, flatbuffer = wire.parse_metadata_message(payload)
        if kind == wire.MESSAGE_END_OF_STREAM:
            pos = self._position(seq, "end-of-stream message")
            if self._eos is not None:
                raise ArrowInvalid(f"second end-of-stream message (sequence {seq}); the first had "
                                   f"sequence {self._seq(self._eos)}")
            if pos < self._next:
                raise ArrowInvalid(f"end-of-stream message has sequence {seq}, but messages up to "
                                   f"sequence {self._seq(self._next - 1)} were already processed")
            if pos == 0:
                raise ArrowInvalid(f"end-of-stream message with sequence {seq} before any schema")
            late_bodies = [p for p in self._bodies if p >= pos]
            if late_bodies:
                raise ArrowInvalid(f"orphan body with sequence {self._seq(min(late_bodies))}: it "
                                   f"lies after the end of stream at sequence {seq}")
            late = [p for p in self._meta if p >= pos]
            if late:
                raise ArrowInvalid(f"end-of-stream message has sequence {seq} but a metadata "
                                   f"message with sequence {self._seq(min(late))} arrived, which "
                                   f"lies after it")
            self._eos = pos
            return
        pos = self._position(seq, "metadata message")
        if pos < self._next or pos in self._meta:
            raise ArrowInvalid(f"duplicate metadata message with sequence {seq}")
        if self._eos is not None and pos >= self._eos:
            raise ArrowInvalid(f"metadata message with sequence {seq} arrived after the end of "
                               f"stream at sequence {self._seq(self._eos)}")
        try:
            msg = decode_message(flatbuffer)
        except ArrowInvalid as e:
            raise ArrowInvalid(f"metadata message with sequence {seq}: {e}") from e
        if pos == 0 and msg.header_type != md.HEADER_SCHEMA:
            raise ArrowInvalid(f"the first message (sequence {seq}) must be a schema, found a "
                               f"{msg.type} message")
        if pos != 0 and msg.header_type == md.HEADER_SCHEMA:
            raise ArrowInvalid(f"metadata message with sequence {seq} is a second schema")
        needs_body = msg.header_type in _BODY_HEADERS
        if not needs_body and msg.body_length:
            raise ArrowInvalid(f"{msg.type} message with sequence {seq} declares a "
                               f"{msg.body_length}-byte body")
        if not needs_body and pos in self._bodies:
            raise ArrowInvalid(f"orphan body with sequence {seq}: its metadata is a {msg.type} "
                               f"message, which has no body")
        self._meta[pos] = _Pending(msg, needs_body, payload.size)
        self._pending_bytes += payload.size
        self._check_pending_limits(seq)

    def _on_body(self, ch: _Channel, tag: int, payload: Buffer) -> None:
        seq, body_type = wire.parse_body_tag(tag, self._accept55)
        if body_type not in (wire.BODY_BYTES, wire.BODY_SHARED):
            raise ArrowInvalid(f"body with sequence {seq} has body type {body_type}; expected 0 "
                               f"(IPC body bytes) or 1 (shared memory)")
        pos = self._position(seq, "body")
        if pos < self._next:
            raise ArrowInvalid(f"duplicate or orphan body with sequence {seq}: message {seq} was "
                               f"already processed")
        if pos in self._bodies:
            raise ArrowInvalid(f"duplicate body with sequence {seq}")
        if self._eos is not None and pos >= self._eos:
            raise ArrowInvalid(f"orphan body with sequence {seq}: it lies after the end of stream "
                               f"at sequence {self._seq(self._eos)}")
        entry = self._meta.get(pos)
        if entry is not None and not entry.needs_body:
            raise ArrowInvalid(f"orphan body with sequence {seq}: its metadata is a "
                               f"{entry.message.type} message, which has no body")
        if pos == 0:
            raise ArrowInvalid(f"orphan body with sequence {seq}: the first message is the schema, "
                               f"which has no body")
        if body_type == wire.BODY_SHARED:
            total, pairs = wire.parse_shared_body(payload, seq)
            body = _Body(ch, body_type, payload, total, pairs)
        else:
            body = _Body(ch, body_type, payload)
        self._bodies[pos] = body
        self._pending_bytes += body.size
        self._check_pending_limits(seq)

    def _check_pending_limits(self, seq: int) -> None:
        waiting = len(self._meta) + len(self._bodies)
        if waiting > self._max_pending or self._pending_bytes > self._max_pending_bytes:
            raise ArrowInvalid(f"{waiting} messages ({self._pending_bytes} bytes) are waiting for "
                               f"sequence {self._seq(self._next)} (limits {self._max_pending} "
                               f"messages, {self._max_pending_bytes} bytes); last arrival: "
                               f"sequence {seq}")

    # -- bodies ------------------------------------------------------------------------------------
    def _body_buffer(self, pos: int, msg: Message, body: _Body) -> tuple[Buffer, Any]:
        """The body's buffer and, for a type-1 body, its RecordBatch header (decoded here to
        place the pairs; the decoder takes it rather than decoding it again)."""
        seq = self._seq(pos)
        length = msg.body_length
        if body.body_type == wire.BODY_BYTES:
            if body.size != length:
                raise ArrowInvalid(f"body of sequence {seq} has {body.size} bytes; its metadata "
                                   f"declares a {length}-byte body")
            return body.payload, None
        return self._shared_body_buffer(seq, msg, body, length)

    def _place(self, seq: int, msg: Message, body: _Body, length: int
               ) -> tuple[Any, list[tuple[int, int, int]], list[int], bool, Any]:
        """Check a type-1 body's pairs against its metadata: (decoded RecordBatch header,
        [(address, length, offset in the body)], the distinct addresses to free, whether the
        body lies in the server's own memory rather than in segments, and the body's base in
        one segment as place_regions gives it)."""
        pairs, ch = body.pairs, body.channel
        assert pairs is not None and body.total is not None     # a type-1 body has both
        try:
            header = msg.header if msg.header_type == md.HEADER_RECORD_BATCH else \
                msg.header.table(1, "RecordBatch")
            if header is None:
                raise ArrowInvalid("a dictionary batch without data")
            decoded = decode_record_batch_header(header, msg.legacy_codec)
        except ArrowInvalid as e:
            raise ArrowInvalid(f"type-1 body of sequence {seq}: its metadata: {e}") from e
        placed, addresses, in_peer, base = place_regions(pairs, decoded.buffers_list(), length,
                                                         body.total, seq, ch.peer_pid is not None)
        if in_peer and length > ch.transport.max_frame:
            # the server's memory: never more than a frame could bring (the server must map
            # every region before we allocate for it)
            raise ArrowInvalid(f"type-1 body of sequence {seq} has {length} bytes; this "
                               f"connection takes at most {ch.transport.max_frame}")
        return decoded, placed, addresses, in_peer, base

    def _shared_body_buffer(self, seq: int, msg: Message, body: _Body, length: int
                            ) -> tuple[Buffer, Any]:
        """A zero-copy view when the pairs describe the body laid out in one write-sealed segment;
        otherwise one copy into a new allocation (and the addresses are released at once, in
        the next free_data message)."""
        ch = body.channel
        ahead = self._ahead
        if ahead is not None and ahead.body is body:
            self._ahead = None
            out = _peer_result(seq, ahead.result)   # what the copy raised, it raises here
            ch.free.release(ahead.addresses, flush=False, nbytes=length)
            return out, ahead.decoded
        decoded, placed, addresses, in_peer, base = self._place(seq, msg, body, length)
        self._large_peer_body = in_peer and length >= READ_AHEAD_BYTES
        if in_peer:
            # addresses in the server's memory: one copy straight from there
            assert ch.peer_pid is not None              # _place says so only for a peer
            pid = ch.peer_pid
            out = _peer_result(seq, lambda: peer_read(pid, length, [(a, n, d) for a, n, d in placed
                                                                    if n]))
            ch.free.release(addresses, flush=False, nbytes=length)
            return out, decoded
        # one base in one segment for every non-empty region -> the body is a slice
        if base is None:                              # no bytes at all in the regions
            ch.free.release(addresses, flush=False)
            return allocate(length, True), decoded
        if base and base[1] >= 0:
            seg = ch.segments.get(base[0], seq)
            seg.claim(base[1], length, seq, ch.name)
            ch.segments.placed(seg)       # a segment of counted bodies goes once all are placed
            if isinstance(seg.mapping, Mapping) and seg.immutable:   # (never a named one)
                # write-sealed: nobody can change these bytes any more, so views are safe to
                # hand out (to pyarrow too); the addresses go back when the last view goes
                return seg.mapping.view(base[1], length, SharedBody(seg.mapping, addresses,
                                                                     ch.free)), decoded
            # the server can still write this segment: copy the body out, free it at once (a
            # named segment is read, and may have been cut short: that names the body)
            mapping, start = seg.mapping, base[1]
            out = _peer_result(seq, lambda: mapping.copy(start, length))
        else:
            pieces: list[tuple[int, int, int, int]] = []    # (segment, offset, length, dest)
            used: dict[int, Segment] = {}
            for address, n, dest in placed:
                if n:
                    seg_id, off = split_address(address)
                    seg = used.get(seg_id) or ch.segments.get(seg_id, seq)
                    seg.claim(off, n, seq, ch.name)
                    pieces.append((seg_id, off, n, dest))
                    used[seg_id] = seg
            _check_disjoint(seq, pieces, ch.name)
            regions: list[tuple[Any, int]] = [
                (_peer_result(seq, lambda: used[s].mapping.view(o, n)), d)
                for s, o, n, d in pieces]
            out = scatter_copy(length, regions)
            del regions
            for seg in used.values():
                ch.segments.placed(seg)
        ch.free.release(addresses, flush=False, nbytes=length)
        return out, decoded


def _check_disjoint(seq: int, pieces: list[tuple[int, int, int, int]], name: str) -> None:
    """The regions (segment, offset, length, dest) of one body copied from segments must not
    overlap: each byte of a segment lands in the body once at most, so the body is never larger
    than the segments it names (one region named again and again would make a small segment
    a body of any size). ArrowInvalid naming the two regions."""
    ordered = sorted(pieces)
    for (s1, o1, n1, _), (s2, o2, n2, _) in zip(ordered, ordered[1:]):
        if s1 == s2 and o2 < o1 + n1:
            raise ArrowInvalid(f"type-1 body of sequence {seq}: region [{o2}, {o2}+{n2}) overlaps "
                               f"region [{o1}, {o1}+{n1}) of the same body in segment {s1} of "
                               f"{name}; the regions of a body must not overlap")


def _server_error(code: int, text: str) -> ArrowInvalid | ArrowKeyError:
    """The exception an error frame from the server stands for."""
    if code == tp.ERROR_UNKNOWN_TICKET:
        return ArrowKeyError(f"dissociated server: {text}")
    return ArrowInvalid(f"dissociated server error: {text}")


def _send_to(ch: _Channel, kind: int, tag: int, parts: list[Any]) -> None:
    """Send one frame to the server; when the send fails because the server closed the
    connection after saying why (an error frame: it turned us away), raise what it said."""
    try:
        ch.transport.send_frame(kind, tag, parts)
    except tp.TransportClosed as e:
        said = ch.transport.error_left()
        if said is None:
            raise
        raise _server_error(*said) from e


def _parse_on(ch: _Channel, parse: Callable[[Buffer], _Parsed], payload: Buffer) -> _Parsed:
    """parse(payload) of a control frame from `ch`, its failure naming the connection."""
    try:
        return parse(payload)
    except ArrowInvalid as e:
        raise ArrowInvalid(f"{ch.name}: {e}") from e


def _peer_result(seq: int, read: Callable[[], Buffer]) -> Buffer:
    """read() (a copy from the server's memory or a named segment), its failure naming the
    body's sequence."""
    try:
        return read()
    except ArrowInvalid as e:
        raise ArrowInvalid(f"type-1 body of sequence {seq}: {e}") from e


def connect(uri: str, ticket: bytes | str, *, data_uri: str | None = None,
            options: IpcReadOptions | None = None,
            timeout: float | None = DEFAULT_TIMEOUT, shared_memory: bool | None = None,
            first_sequence: int = 0, accept_shift55: bool = False,
            max_pending: int = DEFAULT_MAX_PENDING,
            max_pending_bytes: int = DEFAULT_MAX_PENDING_BYTES,
            max_mapped_bytes: int = DEFAULT_MAX_MAPPED_BYTES) -> DissociatedReader:
    """Connect to a dissociated server, request `ticket`, and return the stream's reader.

    With `data_uri`, metadata comes from `uri` and bodies from `data_uri` (two connections, each
    sent the ticket with its own want_data tag). The reader owns the connection(s): they
    stay open while batches over shared memory are alive (so their blocks are freed one by one)
    and close with reader.close(), or once the reader and every such batch are gone.
    max_pending and max_pending_bytes bound the messages (metadata and bodies) that may wait for
    an earlier sequence number, in count and in bytes.
    """
    client = DissociatedClient(uri, data_uri=data_uri, timeout=timeout,
                               shared_memory=shared_memory, max_mapped_bytes=max_mapped_bytes)
    try:
        reader = DissociatedReader(client, _ticket_bytes(ticket), options=options,
                                   first_sequence=first_sequence, accept_shift55=accept_shift55,
                                   max_pending=max_pending, max_pending_bytes=max_pending_bytes,
                                   owns_client=True)
        reader._start()
    except BaseException:
        client.close()
        raise
    return reader
