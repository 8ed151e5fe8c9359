"""The Dissociated IPC server: serves tickets as metadata and body message streams.

A ticket is resolved by a user callback to a schema and batches; the IPC engine's MessageEncoder
turns them into messages (dictionaries, deltas, replacements and compression exactly as in an IPC
stream). Each message's flatbuffer goes out untagged with the 5-byte prefix; each RecordBatch and
DictionaryBatch body goes out tagged, either as the IPC body bytes (type 0, a gather send of the
unpacked buffers) or as (offset, length) pairs into a shared-memory segment (type 1).

Every connection has a receiver thread (requests, free_data, disconnects) and a worker thread
that sends the requested streams one at a time. While the worker sends batches held in memory it
reads the client's frames itself, after each gathered send and while it waits for room, and the
receiver sleeps: a free_data message then costs no thread wake-up and no GIL hand-off. The
receiver reads again whenever the worker stops (the stream ends, a send must wait for the client
to read, a frame is not whole yet) and handles what the worker's read raised.
"""
from __future__ import annotations

import errno
import os
import queue
import select
import socket
import tempfile
import threading
import time

from .. import types as T
from . import _wire as wire
from ..errors import ArrowInvalid
from ..ipc.options import IpcWriteOptions
from ..ipc.writer import MessageEncoder
from ..table import RecordBatch, Table
from . import transport as tp
from .arena import DEFAULT_SEGMENT_SIZE, PeerLedger, SharedArena, SharedBudget
from .layout import PEER_SEGMENT_ADDRESS, PEER_SEGMENT_BASE
from .uri import SCHEME_TCP, SCHEME_UNIX, DissociatedURI, format_uri

TYPE_CHECKING = False               # typing itself is not imported at run time
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Iterator
    from typing import Any, Literal, TypeVar

    from ..ipc.writer import EncodedMessage
    from .arena import Block, Outstanding
    from .transport import Frame, Frames, Parts

    Resolver = Callable[[bytes], Any]       # ticket -> what DissociatedServer's docstring lists
    Ledger = SharedArena | PeerLedger
    FrameTuple = tuple[int, int, Parts]     # (frame kind, tag, parts)
    _Attempt = TypeVar("_Attempt")

__all__ = ["BODY_MODES", "DEFAULT_PEER_THRESHOLD", "DEFAULT_SHM_THRESHOLD", "DissociatedServer",
           "ROLE_BODIES", "ROLE_BOTH", "ROLE_METADATA", "UnknownTicket"]

ROLE_BOTH, ROLE_METADATA, ROLE_BODIES = "both", "metadata", "bodies"
BODY_MODES = ("bytes", "shared", "auto")
DEFAULT_SHM_THRESHOLD = 1 << 20
# Below this, a type-1 body goes through a shared segment even when the client can read our
# memory: process_vm_readv pins the source page by page (about 0.3 ms per MiB of 4 KiB pages
# here), while a copy into a reused segment and one out of it, on two cores, cost less.
DEFAULT_PEER_THRESHOLD = 4 << 20
_MAX_REQUEST_FRAME = 1 << 24          # tickets and free_data lists; nothing a client sends is big
_DRAIN_SECONDS = 2.0
_FREE_DATA_PIECE = 64 << 10          # free_data addresses are parsed this many bytes at a time
_ACCEPT_RETRY_SECONDS = 0.05          # accept() failed for want of descriptors: try again after
_WINDOW_POLL = 0.002                  # how often a full window checks whether the client drained
_KEEPING_SECONDS = 0.2                # drained this long without a free: the client keeps bodies
_PEER_WAIT = 2.0                      # how long the first type-1 body waits for the probe's answer
_TURNED_AWAY_DRAIN = 64 << 10           # bytes read and dropped from a client turned away
_SMALL_BODY_WINDOW_BYTES = 4 << 20    # a peer connection's segments, at least (_small_body_arena)
# Bodies gathered into one send: 4 MiB of bodies in the send itself (few system calls); of bodies
# placed in shared memory, few enough that the first is still in the caches when the client
# copies it out (interleaved runs, 256 x 1 MiB type 1: 2 MiB took 5 ms less client CPU a
# transfer than 4 MiB; 8 MiB was slower still; 1 MiB, a send per batch, slower too)
_COALESCE_BYTES = 4 << 20
_COALESCE_SHARED_BYTES = 2 << 20
_COALESCE_FRAMES = 256
_IN_MEMORY: tuple[type, ...] = (type(iter([])), type(iter(())))


class UnknownTicket(KeyError):
    """Raised by (or on behalf of) a resolver that does not know a ticket."""


class DissociatedServer:
    """Serves tickets over a Unix socket (unix_path; by default a fresh one in a temporary
    directory) or TCP (host, port; port 0 picks a free one).

    resolver(ticket: bytes) returns (schema, iterable of batches), an arrowipc Table or
    RecordBatch, or any object with __arrow_c_stream__; it returns None or raises KeyError for an
    unknown ticket. With separate metadata and data connections it is called once per
    connection, so it must give the same data each time.

    body_mode: "bytes" (type 0), "shared" (type 1 whenever the connection can map shared
    memory), "auto" (type 1 from shm_threshold bytes), or a callable (sequence, body_length) ->
    bool choosing type 1 per body. Shared memory works over Unix sockets (memfd) and, when
    tcp_shared_memory=True, over TCP to a client on the same host (named segments in /dev/shm).

    Shared memory (docs/PROTOCOL.md §5): seal_segments=False reuses pre-faulted segments the
    client copies bodies out of; seal_segments=True packs the bodies of each send into a fresh
    memfd that is write-sealed before it is announced (once, for all of them), so the client
    hands out zero-copy views. Limits: at most
    `window` type-1 bodies and `window_bytes` bytes outstanding (sent, not yet freed) per
    connection (past them the server waits up to window_wait seconds for free_data, then sends
    bytes), max_shared_bytes of segments per connection and shared_memory_budget over all
    connections. With peer_memory (the default; not with seal_segments), a client on the same
    host that may read this process's memory (process_vm_readv; it proves it on a probe) gets
    type-1 addresses of the bodies' own buffers: no copy here, one copy there, no segment; bodies
    smaller than peer_threshold still go through segments there (ids from PEER_SEGMENT_BASE,
    with a window of 2 x peer_threshold, 4 MiB at least, within window_bytes). A
    connection queues at most max_queued_requests requests behind the stream it is serving; one
    more is a protocol error. At most max_connections clients are served at once (each costs
    two threads and a few descriptors); one more gets an error frame saying so, and is closed.

    schedule (a test hook) receives each stream's frames as a list of (frame kind, tag, parts)
    and returns the frames to send, in the order to send them (reordered, dropped, added).
    first_sequence (also for tests; the spec starts at 0) numbers the schema message.
    """

    def __init__(self, resolver: Resolver, *, unix_path: str | None = None,
                 host: str | None = None, port: int = 0,
                 body_mode: str | Callable[[int, int], bool] = "auto",
                 shm_threshold: int = DEFAULT_SHM_THRESHOLD,
                 options: IpcWriteOptions | None = None, want_data: int = 1, free_data: int = 2,
                 want_metadata: int = 3, want_bodies: int = 4, tcp_shared_memory: bool = False,
                 tag_shift: int = wire.BODY_TYPE_SHIFT, first_sequence: int = 0,
                 segment_size: int = DEFAULT_SEGMENT_SIZE, max_shared_bytes: int = 1 << 30,
                 shared_memory_budget: int = 4 << 30, seal_segments: bool = False,
                 window: int = 64, window_bytes: int = 256 << 20, window_wait: float = 1.0,
                 max_queued_requests: int = 8, peer_memory: bool = True,
                 peer_threshold: int = DEFAULT_PEER_THRESHOLD, send_timeout: float | None = 60.0,
                 max_connections: int = 256,
                 schedule: Callable[[Frames], Iterable[FrameTuple]] | None = None) -> None:
        if not callable(body_mode) and body_mode not in BODY_MODES:
            raise ValueError(f"body_mode must be one of {BODY_MODES} or a callable, got "
                             f"{body_mode!r}")
        tags = [want_data, want_metadata, want_bodies, free_data]
        if len(set(tags)) != 4 or not all(0 <= t < 1 << 64 for t in tags):
            raise ValueError(f"want_data, want_metadata, want_bodies and free_data must be "
                             f"distinct uint64 values, got {tags}")
        if tag_shift not in (wire.BODY_TYPE_SHIFT, wire.LEGACY_BODY_TYPE_SHIFT):
            raise ValueError(f"tag_shift must be 56 (the spec) or 55 (compatibility), got "
                             f"{tag_shift}")
        self.resolver = resolver
        self.body_mode = body_mode
        self.shm_threshold = int(shm_threshold)
        # bodies are viewed in place by the client (shared segments): buffers 64-byte aligned,
        # as Arrow recommends for memory, unless the caller's options say otherwise
        self.options = options or IpcWriteOptions(alignment=64)
        if self.options.use_legacy_format:
            raise ValueError("the dissociated protocol carries flatbuffers without IPC framing; "
                             "use_legacy_format does not apply")
        self.roles = {want_data: ROLE_BOTH, want_metadata: ROLE_METADATA, want_bodies: ROLE_BODIES}
        self.want_data, self.free_data = want_data, free_data
        self.want_metadata, self.want_bodies = want_metadata, want_bodies
        self.tcp_shared_memory = bool(tcp_shared_memory)
        self.tag_shift = tag_shift
        self.first_sequence = wire.sequence_at(first_sequence, 0)
        self.segment_size = int(segment_size)
        self.max_shared_bytes = int(max_shared_bytes)
        self.budget = SharedBudget(shared_memory_budget)
        self.seal_segments = bool(seal_segments)
        self.window, self.window_bytes = int(window), int(window_bytes)
        self.window_wait = float(window_wait)
        if self.window < 1 or self.window_bytes < 1 or self.window_wait < 0:
            raise ValueError(f"window and window_bytes must be positive and window_wait >= 0, got "
                             f"{window}, {window_bytes}, {window_wait}")
        self.max_queued_requests = int(max_queued_requests)
        self.max_connections = int(max_connections)
        if self.max_connections < 1:
            raise ValueError(f"max_connections must be positive, got {max_connections}")
        self.peer_memory = bool(peer_memory)
        self.peer_threshold = int(peer_threshold)
        self.send_timeout = send_timeout
        self.schedule = schedule
        self.token = os.urandom(8)
        self._lock = threading.Lock()
        self._connections: set[_Connection] = set()
        self._totals: dict[str, int] = {
            "connections": 0, "blocks_allocated": 0, "blocks_released": 0, "unknown_frees": 0,
            "streams": 0, "errors": 0, "peak_outstanding_blocks": 0}
        self._closed = False
        self._tmpdir: str | None = None
        if unix_path is None and host is None:
            self._tmpdir = tempfile.mkdtemp(prefix="arrowipc-dissociated-")
            unix_path = os.path.join(self._tmpdir, "server.sock")
        self.unix_path = unix_path
        if unix_path is not None:
            self._listener = tp.listen_unix(unix_path)
            self.host: str | None = None
            self.port: int | None = None
        else:
            assert host is not None               # with no unix_path and no host: a unix socket
            self._listener = tp.listen_tcp(host, port)
            self.host, self.port = self._listener.getsockname()[:2]
        self._accept_thread = threading.Thread(target=self._accept_loop, daemon=True,
                                               name="arrowipc-dissociated-accept")
        self._accept_thread.start()

    # -- addresses ---------------------------------------------------------------------------------
    def _uri(self, want: int) -> str:
        if self.unix_path is not None:
            u = DissociatedURI(SCHEME_UNIX, want, self.free_data, path=self.unix_path)
        else:
            handle = self.token if self.tcp_shared_memory else None
            u = DissociatedURI(SCHEME_TCP, want, self.free_data, handle, host=self.host,
                               port=self.port)
        return format_uri(u)

    @property
    def uri(self) -> str:
        """Metadata and bodies on one connection."""
        return self._uri(self.want_data)

    @property
    def metadata_uri(self) -> str:
        """Only the metadata stream (pair it with data_uri on another connection)."""
        return self._uri(self.want_metadata)

    @property
    def data_uri(self) -> str:
        """Only the body stream."""
        return self._uri(self.want_bodies)

    # -- lifecycle ---------------------------------------------------------------------------------
    def _accept_loop(self) -> None:
        while True:
            try:
                sock, _ = self._listener.accept()
            except OSError as e:
                if self._closed or e.errno in (errno.EBADF, errno.EINVAL, errno.ENOTSOCK):
                    return
                # out of descriptors or memory (many clients at once), or a client gone before
                # we took it: the listener is fine, so wait a little and go on serving
                time.sleep(_ACCEPT_RETRY_SECONDS)
                continue
            if self._closed:
                sock.close()
                return
            with self._lock:
                served = len(self._connections)
            if served >= self.max_connections:
                _turn_away(sock, f"the server serves {served} connections already "
                                 f"(max_connections={self.max_connections}); try again later")
                continue
            try:
                conn = _Connection(self, sock)
            except OSError:                     # the client went before its socket was set up
                sock.close()
                continue
            with self._lock:
                self._connections.add(conn)
                self._totals["connections"] += 1
            try:
                conn.start()
            except RuntimeError:                # no thread to spare: refuse this client only
                conn.requests.put(None)
                conn.transport.close()
                if not conn.receiver.is_alive():    # else the receiver closes it as it ends
                    wake, conn.wake = conn.wake, -1
                    os.close(wake)
                self._forget(conn)

    def close(self) -> None:
        """Stop accepting, drop every connection (freeing their blocks) and wait for threads."""
        if self._closed:
            return
        self._closed = True
        try:
            self._listener.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self._listener.close()
        if self.unix_path is not None:
            # wake accept() on platforms where closing the listener does not
            try:
                s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                s.settimeout(0.2)
                s.connect(self.unix_path)
                s.close()
            except OSError:
                pass
        self._accept_thread.join(5)
        with self._lock:
            conns = list(self._connections)
        for c in conns:
            c.transport.shutdown()
        for c in conns:
            c.join(10)
        if self.unix_path is not None:
            try:
                os.unlink(self.unix_path)
            except OSError:
                pass
        if self._tmpdir is not None:
            try:
                os.rmdir(self._tmpdir)
            except OSError:
                pass

    def __enter__(self) -> DissociatedServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _forget(self, conn: _Connection) -> None:
        with self._lock:
            self._connections.discard(conn)
            for ledger in conn.ledgers():
                for key in ("blocks_allocated", "blocks_released", "unknown_frees"):
                    self._totals[key] += getattr(ledger, key)
                self._totals["peak_outstanding_blocks"] = max(
                    self._totals["peak_outstanding_blocks"], ledger.peak_outstanding)

    # -- observability -----------------------------------------------------------------------------
    def stats(self) -> dict[str, int]:
        """Counters over every connection so far: blocks allocated and released (freed by the
        client or on disconnect), blocks outstanding (and the most one connection ever had),
        free_data addresses not recognised, and the bytes of shared-memory segments held now
        (shared_bytes, within shared_memory_budget)."""
        with self._lock:
            out = dict(self._totals)
            conns = list(self._connections)
        out["open_connections"] = len(conns)
        out.setdefault("peak_outstanding_blocks", 0)
        outstanding = 0
        for c in conns:
            for a in c.ledgers():
                out["peak_outstanding_blocks"] = max(out["peak_outstanding_blocks"],
                                                     a.peak_outstanding)
                out["blocks_allocated"] += a.blocks_allocated
                out["blocks_released"] += a.blocks_released
                out["unknown_frees"] += a.unknown_frees
                outstanding += len(a.blocks)
        out["blocks_outstanding"] = outstanding
        out["shared_bytes"] = self.budget.used
        return out

    def outstanding(self) -> list[Outstanding]:
        """[(sequence, block address, addresses not yet freed)] over the open connections."""
        with self._lock:
            conns = list(self._connections)
        out: list[Outstanding] = []
        for c in conns:
            for a in c.ledgers():
                out.extend(a.outstanding())
        return sorted(out)

    # -- streams -----------------------------------------------------------------------------------
    def resolve(self, ticket: bytes) -> tuple[T.Schema, Iterator[RecordBatch]]:
        """(Schema, iterator of batches) for a ticket; UnknownTicket when the resolver says so."""
        try:
            result = self.resolver(ticket)
        except KeyError as e:
            raise UnknownTicket(ticket) from e
        if result is None:
            raise UnknownTicket(ticket)
        if isinstance(result, Table):
            return result.schema, iter(result.to_batches())
        if isinstance(result, RecordBatch):
            return result.schema, iter([result])
        if isinstance(result, tuple) and len(result) == 2:
            schema, batches = result
            if not isinstance(schema, T.Schema):
                schema = T.schema(schema)
            return schema, iter(batches)
        if hasattr(result, "__arrow_c_stream__"):
            from ..interop import import_stream
            return import_stream(result)
        raise TypeError(f"the resolver returned a {type(result).__name__}; expected (schema, "
                        f"batches), a Table, a RecordBatch or an object with __arrow_c_stream__")


def _ticket_text(ticket: bytes) -> str:
    text = repr(ticket[:200])
    return text + (f" ... ({len(ticket)} bytes)" if len(ticket) > 200 else "")


class _Connection:
    """One client connection: a receiver thread and a worker thread."""

    def __init__(self, server: DissociatedServer, sock: socket.socket) -> None:
        self.server = server
        self.transport = tp.SocketTransport(sock, timeout=server.send_timeout,
                                            max_frame=_MAX_REQUEST_FRAME,
                                            name="dissociated client connection",
                                            keep_fds=False)    # a client sends none
        self.hello_flags = 0
        self.greeted = False              # a hello or a request came: no hello may follow
        self.arena: Ledger | None = None
        self.segment_arena: SharedArena | None = None    # small bodies of a peer connection
        self.failed = False
        self.requests: queue.Queue[tuple[str, bytes] | None] = queue.Queue()
        self.peer_probe: bytes | None = None            # bytes the client must read from our memory
        self.peer_reply = threading.Event()       # answered, or decided without the answer
        self.peer_answered = False
        self.peer_lock = threading.Lock()  # the probe's answer against the worker's choice
        self.keeping = False              # the client holds its type-1 bodies (see _with_room)
        self.keeping_since = 0
        self.queued = 0                   # requests waiting behind the stream being served
        self.queued_bytes = 0
        self._queue_lock = threading.Lock()
        # While the worker streams batches held in memory, it reads the client's frames itself
        # (free_data, mostly) each time it sends a gathered send or waits for room, and the
        # receiver sleeps on `wake` instead of the socket: a free_data message then wakes no
        # second thread, which would take the GIL from the worker and the core from the client
        # (two context switches and two GIL hand-offs per message, on both processes' cores).
        self.inline = False               # the worker reads the socket (see _pump)
        self.read_lock = threading.Lock()   # held by whichever thread reads a frame
        self.inline_failure: BaseException | None = None   # what the worker's read raised
        self.inline_ended = False         # the worker read the end of the connection
        self.wake = os.eventfd(0, os.EFD_NONBLOCK | os.EFD_CLOEXEC)
        # a client that stops reading makes our send wait: the receiver reads meanwhile (a
        # client flooding requests then is refused at once, as when nothing is being sent)
        self.transport.send_blocked = lambda: self._read_inline(False)
        self.receiver = threading.Thread(target=self._receive_loop, daemon=True,
                                         name="arrowipc-dissociated-receiver")
        self.worker = threading.Thread(target=self._work_loop, daemon=True,
                                       name="arrowipc-dissociated-worker")

    def start(self) -> None:
        """Start the worker and receiver threads."""
        self.worker.start()
        self.receiver.start()

    def join(self, timeout: float | None) -> None:
        """Wait for both threads (up to `timeout` seconds each)."""
        self.receiver.join(timeout)
        self.worker.join(timeout)

    def ledgers(self) -> list[Ledger]:
        """What records this connection's type-1 bodies: its arena or peer ledger, and the
        segments of a peer connection's small bodies."""
        return [a for a in (self.arena, self.segment_arena) if a is not None]

    # -- receiving: requests, free_data, disconnect ------------------------------------------------
    def _receive_loop(self) -> None:
        t = self.transport
        idle = select.poll()
        idle.register(t.sock, select.POLLIN)
        idle.register(self.wake, select.POLLIN)
        parked = select.poll()
        parked.register(self.wake, select.POLLIN)
        try:
            while True:
                if self.inline_failure is not None or self.inline_ended:
                    with self.read_lock:
                        failure, self.inline_failure = self.inline_failure, None
                    if failure is not None:
                        raise failure        # what the worker's read raised, handled here
                    break                    # the worker read the end of the connection
                if self.inline:
                    parked.poll()            # the worker reads the socket until it wakes us
                    self._drain_wake()
                    continue
                # wait without a timeout: an idle client is fine; a started frame must finish
                if not t.pending():
                    try:
                        ready = idle.poll()
                    except OSError:
                        break
                    if any(fd == self.wake for fd, _ in ready):
                        self._drain_wake()
                        continue             # the flags changed: look again
                with self.read_lock:
                    if self.inline or not (t.pending() or _readable(t.sock)):
                        continue             # the worker took what woke us
                    frame = t.receive()
                    if frame is None:
                        break
                    if frame.fd is not None:     # a client sends no descriptors: keep none
                        os.close(frame.fd)
                    self._handle(frame)
        except (ArrowInvalid, TimeoutError) as e:
            if not t.closed:
                self._refuse(tp.ERROR_PROTOCOL, f"protocol error: {e}")
                self._drain()
        except OSError:
            pass
        finally:
            self._disconnect()

    def _drain_wake(self) -> None:
        try:
            os.eventfd_read(self.wake)
        except OSError:                 # nothing there (another wake-up took it), or closed
            pass

    def _wake_receiver(self) -> None:
        try:
            os.eventfd_write(self.wake, 1)
        except OSError:                 # the receiver is gone and closed it
            pass

    def _read_inline(self, on: bool) -> None:
        """Start or stop reading the client's frames on the worker (see __init__)."""
        if self.inline != on:
            self.inline = on
            self._wake_receiver()

    def _pump(self, wait: float) -> bool:
        """The worker, reading inline: handle the frames the client has sent, waiting up to
        `wait` seconds for one when none is there; False (nothing done) when the receiver is
        reading a frame. A protocol error or the end of the connection goes to the receiver,
        which handles it as its own (error frame, disconnect); the stream being served then
        ends with _ClientGone."""
        t = self.transport
        if not self.read_lock.acquire(blocking=False):
            return False                # the receiver is reading a frame: it handles this one
        try:
            if wait > 0 and not t.frame_ready():
                _poll_socket(t.sock, wait)
            while t.frame_ready():
                frame = t.receive()
                if frame is None:
                    self.inline_ended = True
                    break
                if frame.fd is not None:     # a client sends no descriptors: keep none
                    os.close(frame.fd)
                self._handle(frame)
            partial = t.pending()
        except (ArrowInvalid, TimeoutError, OSError) as e:
            self.inline_failure = e
        finally:
            self.read_lock.release()
        if self.inline_failure is not None or self.inline_ended:
            self._read_inline(False)
            raise _ClientGone()
        if partial:
            # a frame not whole yet (or too large for the read-ahead buffer): the receiver
            # waits for the rest, so the worker never blocks on a client's half frame
            self._read_inline(False)
        return True

    def _wait_for_free(self, ledger: Ledger, timeout: float) -> bool:
        """Wait up to `timeout` seconds for the client to free a block of `ledger`; False when
        none was freed."""
        frees = ledger.frees
        if self.inline and self._pump(timeout):
            return ledger.frees != frees
        return ledger.wait_for_free(timeout)

    def _handle(self, frame: Frame) -> None:
        s = self.server
        if frame.kind == wire.FRAME_TAGGED:
            if frame.tag == s.free_data:
                payload = frame.payload
                if payload.size <= _FREE_DATA_PIECE:
                    self._free(wire.parse_free_data(payload))
                    return
                # a long list is taken in pieces: 16 MiB of addresses as one list of Python
                # ints would cost the server over 100 MiB
                if payload.size % 8:
                    wire.parse_free_data(payload)       # raises: says what is wrong
                view = memoryview(payload)
                for start in range(0, payload.size, _FREE_DATA_PIECE):
                    self._free(wire.parse_free_data(view[start:start + _FREE_DATA_PIECE]))
                return
            role = s.roles.get(frame.tag)
            if role is None:
                raise ArrowInvalid(f"tagged message with tag {frame.tag}; this server takes "
                                   f"want_data={s.want_data}, {s.want_metadata} (metadata only), "
                                   f"{s.want_bodies} (bodies only) and free_data={s.free_data}")
            self.greeted = True
            size = frame.payload.size
            with self._queue_lock:
                if self.queued >= s.max_queued_requests or \
                        size > _MAX_REQUEST_FRAME - self.queued_bytes:
                    raise ArrowInvalid(
                        f"{self.queued + 1} requests ({self.queued_bytes + size} bytes of "
                        f"tickets) waiting behind the stream being served; the limits are "
                        f"{s.max_queued_requests} requests and {_MAX_REQUEST_FRAME} bytes")
                self.queued += 1
                self.queued_bytes += size
            self.requests.put((role, frame.payload.to_pybytes()))
        elif frame.kind == wire.FRAME_HELLO:
            if self.greeted:
                raise ArrowInvalid("hello frame after a hello or a request; expected one hello, "
                                   "before the first request")
            self.greeted = True
            self.hello_flags = tp.parse_hello(frame.payload)
            if s.peer_memory and not s.seal_segments and self.transport.is_unix and \
                    self.hello_flags & tp.HELLO_PEER:
                from .._core.buffer import py_buffer
                self.peer_probe = os.urandom(16)
                self.transport.send_frame(wire.FRAME_PEER, 0, [tp.peer_probe_payload(
                    py_buffer(self.peer_probe).address, self.peer_probe)])
            else:
                self.peer_reply.set()
        elif frame.kind == wire.FRAME_PEER:
            ok = tp.parse_peer_reply(frame.payload)
            with self.peer_lock:
                if self.peer_probe is None or self.peer_answered:
                    raise ArrowInvalid("peer memory reply without a probe (or a second one)")
                self.peer_answered = True
                if ok and not self.peer_reply.is_set() and self.arena is None:
                    self.arena = PeerLedger(window=s.window, window_bytes=s.window_bytes)
                self.peer_reply.set()
        elif frame.kind == wire.FRAME_SEGMENT_ACK:
            seg_id = tp.parse_segment_ack(frame.payload)
            arena = self.segment_arena if seg_id >= PEER_SEGMENT_BASE and \
                self.segment_arena is not None else self.arena
            if arena is not None:
                arena.acknowledge(seg_id)
        else:
            raise ArrowInvalid(f"unexpected {wire.FRAME_KIND_NAMES[frame.kind]} frame from a "
                               f"client")

    def _free(self, addresses: list[int]) -> None:
        """Apply free_data addresses to the ledger that handed them out."""
        if self.segment_arena is not None:
            # a peer connection: segment addresses lie from PEER_SEGMENT_ADDRESS up, the
            # server's own memory below
            in_segments = [a for a in addresses if a >= PEER_SEGMENT_ADDRESS]
            if len(in_segments) != len(addresses):
                self.segment_arena.free(in_segments)
                addresses = [a for a in addresses if a < PEER_SEGMENT_ADDRESS]
            else:
                self.segment_arena.free(addresses)
                return
        if self.arena is not None:
            self.arena.free(addresses)
        else:
            with self.server._lock:
                self.server._totals["unknown_frees"] += len(addresses)

    def _drain(self) -> None:
        """After refusing a client, read (and ignore) until it closes, for a short while."""
        t = self.transport
        deadline = time.monotonic() + _DRAIN_SECONDS     # a client that never stops sending
        try:
            t.sock.settimeout(_DRAIN_SECONDS)
            while t.sock.recv(1 << 16) and time.monotonic() < deadline:
                pass
        except OSError:
            pass

    def _disconnect(self) -> None:
        self.requests.put(None)
        self.transport.shutdown()
        for ledger in self.ledgers():
            with ledger.lock:            # wake a worker waiting for frees that cannot come now
                ledger.freed.notify_all()
        if threading.current_thread() is not self.worker:
            self.worker.join()
        for ledger in self.ledgers():
            ledger.close()               # nothing writes into the segments any more
        self.transport.close()
        if threading.current_thread() is self.receiver:
            # the worker is gone: nobody wakes the receiver now (-1: a late write fails rather
            # than land in whatever reuses the descriptor number)
            wake, self.wake = self.wake, -1
            os.close(wake)
        self.server._forget(self)

    def _refuse(self, code: int, text: str) -> None:
        """Send an error frame and stop sending (the client reads it, then closes)."""
        self.failed = True
        with self.server._lock:
            self.server._totals["errors"] += 1
        try:
            self.transport.send_frame(wire.FRAME_ERROR, 0, [tp.error_payload(code, text)])
            self.transport.sock.shutdown(socket.SHUT_WR)
        except (ArrowInvalid, OSError):
            pass

    # -- the worker: one stream at a time ----------------------------------------------------------
    def _work_loop(self) -> None:
        while True:
            req = self.requests.get()
            if req is None:
                return
            role, ticket = req
            with self._queue_lock:
                self.queued -= 1
                self.queued_bytes -= len(ticket)
            if self.failed:
                continue
            try:
                self._serve(role, ticket)
            except _ClientGone:
                continue                # the receiver refuses the client or ends the connection
            except tp.TransportClosed:
                # a send failed or timed out: nothing more goes to this client, so end the
                # connection (the receiver then releases its blocks) rather than keep them
                self.transport.shutdown()
                return
            except UnknownTicket:
                self._refuse(tp.ERROR_UNKNOWN_TICKET, f"unknown ticket {_ticket_text(ticket)}")
            except Exception as e:           # the resolver or the data failed: tell the client
                self._refuse(tp.ERROR_SERVER, f"{type(e).__name__} while serving ticket "
                                              f"{_ticket_text(ticket)}: {e}")

    def _shared_memory_arena(self) -> Ledger | None:
        arena = self.arena
        if arena is not None and self.peer_reply.is_set():
            return arena                                # decided: the answer cannot change it
        if self.peer_probe is not None and not self.peer_reply.is_set():
            self.peer_reply.wait(_PEER_WAIT)            # the client is answering the probe
        with self.peer_lock:
            self.peer_reply.set()                       # too late for a reply now: decided
            if self.arena is not None:
                return self.arena
        if self.arena is None:
            self.arena = self._new_arena(0)
        return self.arena

    def _small_body_arena(self) -> SharedArena | None:
        """A peer connection's segments for bodies under peer_threshold (None when the client
        maps no memfd segments)."""
        if self.segment_arena is None and self.transport.is_unix and \
                self.hello_flags & tp.HELLO_MEMFD:
            s = self.server
            # small bodies need little run-ahead to keep the client busy: room for two of the
            # largest (one copied out while the next is written) keeps the blocks they cycle
            # through few, and in the CPU caches of both sides (interleaved runs, 256 x 1 MiB:
            # 4-8 MiB of window gave 4-5 % more than 16 MiB, and used less CPU)
            self.segment_arena = self._new_arena(PEER_SEGMENT_BASE, min(
                s.window_bytes, max(_SMALL_BODY_WINDOW_BYTES, 2 * s.peer_threshold)))
        return self.segment_arena

    def _new_arena(self, first_segment_id: int, window_bytes: int | None = None
                   ) -> SharedArena | None:
        s = self.server
        if self.transport.is_unix and self.hello_flags & tp.HELLO_MEMFD:
            named = False
        elif (not self.transport.is_unix and s.tcp_shared_memory
              and self.hello_flags & tp.HELLO_NAMED):
            named = True
        else:
            return None
        return SharedArena(self.transport, named=named, token=s.token.hex(),
                           segment_size=s.segment_size, max_bytes=s.max_shared_bytes,
                           sealed=s.seal_segments, budget=s.budget, window=s.window,
                           window_bytes=s.window_bytes if window_bytes is None else window_bytes,
                           first_segment_id=first_segment_id)

    def _wants_shared(self, seq: int, body_length: int) -> bool:
        mode = self.server.body_mode
        if body_length == 0:
            return False
        if callable(mode):
            return bool(mode(seq, body_length))
        return mode == "shared" or (mode == "auto" and body_length >= self.server.shm_threshold)

    def _serve(self, role: str, ticket: bytes) -> None:
        s = self.server
        self.keeping = False
        schema, batches = s.resolve(ticket)
        if s.schedule is not None:
            # the test hook sees every frame first: no window waits (nothing is sent meanwhile)
            groups = [g for g, _, _ in self._stream_frames(role, schema, batches, None)]
            for f in s.schedule([f for g in groups for f in g]):
                self.transport.send_frames([f])
            self.transport.send_frames([(wire.FRAME_STREAM_END, 0, [])])
        else:
            # batches already in memory are gathered into few sends; batches from a generator
            # go out as they come (it may take its time for the next one)
            in_memory = isinstance(batches, _IN_MEMORY)
            # batches in memory never keep the worker from reading the client's frees
            out = _Outbox(self.transport, in_memory, self if in_memory else None)
            try:
                try:
                    for group, inline, shared in self._stream_frames(role, schema, batches, out):
                        out.add(group, inline, shared)
                except _ClientGone:
                    raise
                except Exception:
                    out.flush()           # what was produced before the failure goes first
                    raise
                out.add([(wire.FRAME_STREAM_END, 0, [])])
                out.flush()
            finally:
                self._read_inline(False)
        with s._lock:
            s._totals["streams"] += 1

    def _stream_frames(self, role: str, schema: T.Schema, batches: Iterable[RecordBatch],
                       out: _Outbox | None) -> Iterator[tuple[Frames, int, int]]:
        """(frames, bytes of bodies not in shared memory, bytes of bodies placed there): the
        (frame kind, tag, parts) this role sends, one list per batch (its dictionary messages and
        itself, metadata and bodies), sent together."""
        s = self.server
        shared_tag = wire.BODY_SHARED << s.tag_shift
        encoder = MessageEncoder(schema, s.options)
        skip = encoder.prefix_length
        position = 0

        def metadata(framed: bytes) -> FrameTuple:
            seq = wire.sequence_at(s.first_sequence, position)
            return (wire.FRAME_MESSAGE, 0,
                    [wire.metadata_prefix(wire.MESSAGE_METADATA, seq), memoryview(framed)[skip:]])

        if role != ROLE_BODIES:
            yield [metadata(encoder.schema_message())], 0, 0
        position += 1
        for batch in batches:
            group: Frames = []
            inline = shared = 0
            for m in encoder.batch_messages(batch):
                if role != ROLE_BODIES:
                    group.append(metadata(m.metadata))
                placed = False
                if role != ROLE_METADATA:
                    body = self._body_frame(wire.sequence_at(s.first_sequence, position), m, out)
                    group.append(body)
                    placed = body[1] & ~wire.TAG_SEQUENCE_MASK == shared_tag     # type 1
                if placed:
                    shared += m.body_length
                else:
                    inline += m.body_length
                position += 1
            yield group, inline, shared
        if role != ROLE_BODIES:
            yield [(wire.FRAME_MESSAGE, 0, [wire.end_of_stream_message(
                wire.sequence_at(s.first_sequence, position))])], 0, 0

    def _with_room(self, ledger: Ledger, attempt: Callable[[], _Attempt | None],
                   out: _Outbox | None) -> _Attempt | None:
        """attempt() (a block, or the pairs of a peer body) once the window has room: waits for
        the client's free_data while it is full; None (send bytes) when nothing comes back
        within window_wait, or when the client has read everything sent for _KEEPING_SECONDS and
        still holds its bodies (it keeps its batches: from then on bodies past the window go as
        bytes at once, until it frees one)."""
        frees = ledger.frees
        result = attempt()
        if result is not None or out is None:
            return result
        if self.keeping and ledger.frees == self.keeping_since:
            return None
        deadline = time.monotonic() + self.server.window_wait
        drained_since: float | None = None
        while True:
            out.flush()                   # the client can only free what it has received
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return None
            if self._wait_for_free(ledger, min(remaining, _WINDOW_POLL)):
                drained_since = None
            elif not ledger.blocks or self.transport.closed:
                return attempt()
            elif self.transport.unread_bytes() == 0:
                now = time.monotonic()
                if drained_since is None:
                    drained_since = now
                elif now - drained_since >= _KEEPING_SECONDS and ledger.frees == frees:
                    self.keeping, self.keeping_since = True, ledger.frees
                    return None
            result = attempt()
            if result is not None:
                self.keeping = False
                return result

    def _body_frame(self, seq: int, m: EncodedMessage, out: _Outbox | None) -> FrameTuple:
        shift = self.server.tag_shift
        length = m.body_length
        spans = m.spans
        assert spans is not None                # the encoder fills them for every batch message
        if self._wants_shared(seq, length):
            arena = self._shared_memory_arena()
            if isinstance(arena, PeerLedger) and length < self.server.peer_threshold:
                arena = self._small_body_arena() or arena
            if isinstance(arena, PeerLedger):
                pairs: list[tuple[int, int]] | Literal[False] | None = self._with_room(
                    arena, lambda: arena.hand_out(m.parts, spans, length, seq), out)
                if pairs:
                    return (wire.FRAME_TAGGED, wire.body_tag(seq, wire.BODY_SHARED, shift),
                            [wire.encode_shared_body(length, pairs)])
                return wire.FRAME_TAGGED, wire.body_tag(seq, wire.BODY_BYTES, shift), m.parts
            if arena is not None:
                parts = m.parts
                payload = arena.place(parts, spans, length, seq,
                                      None if out is None else out.writes)
                if payload is None:
                    # out.writes is read at each attempt: a flush while waiting for room renews it
                    payload = self._with_room(arena, lambda: arena.place(
                        parts, spans, length, seq, None if out is None else out.writes), out)
                if payload is not None:
                    if arena.sealed:
                        if out is None:
                            arena.publish()     # no send path to seal before the body frame
                        else:
                            out.arena = arena   # its flush seals and announces the segment
                    return (wire.FRAME_TAGGED, wire.body_tag(seq, wire.BODY_SHARED, shift),
                            [payload])
        return wire.FRAME_TAGGED, wire.body_tag(seq, wire.BODY_BYTES, shift), m.parts


def _turn_away(sock: socket.socket, text: str) -> None:
    """Send a client we will not serve one error frame (it fits any socket buffer: the send
    cannot wait on the client) and close its connection."""
    try:
        sock.setblocking(False)
        payload = tp.error_payload(tp.ERROR_SERVER, text)
        sock.send(wire.frame_header(wire.FRAME_ERROR, 0, len(payload)) + payload)
        sock.shutdown(socket.SHUT_WR)
        sock.recv(_TURNED_AWAY_DRAIN)   # what came already (its hello): closing on unread bytes
    except OSError:                     # would reset the connection, losing the error frame
        pass
    finally:
        sock.close()


class _ClientGone(Exception):
    """The worker's inline read found a protocol error or the end of the connection: the
    receiver takes it from there."""


def _readable(sock: socket.socket) -> bool:
    """Whether the socket has bytes (or an end) to read now."""
    return _poll_socket(sock, 0)


def _poll_socket(sock: socket.socket, wait: float) -> bool:
    p = select.poll()
    p.register(sock, select.POLLIN)
    return bool(p.poll(wait * 1000))


class _Outbox:
    """Frames of several batches gathered into one sendmsg: one wake-up of the client and one
    system call for many small batches. Flushed once _COALESCE_BYTES of bodies sent as bytes (or
    by another connection), _COALESCE_SHARED_BYTES of bodies in shared memory or _COALESCE_FRAMES
    frames are pending, and before any wait for frees."""
    __slots__ = ("transport", "frames", "inline", "shared", "gather", "arena", "reader", "writes")

    def __init__(self, transport: tp.SocketTransport, gather: bool = True,
                 reader: _Connection | None = None) -> None:
        self.transport = transport
        self.frames: Frames = []
        self.inline = 0                   # body bytes queued (sent in the send itself, or elsewhere)
        self.shared = 0                   # body bytes queued in shared memory
        self.gather = gather
        self.arena: SharedArena | None = None     # a sealed arena whose bodies are queued
        self.reader = reader        # reads the client's frames after each send (see _pump)
        # (arena, block, parts) of the queued bodies, copied into shared memory at the flush,
        # back to back (SharedArena.place)
        self.writes: list[tuple[SharedArena, Block, list[Any]]] = []

    def add(self, group: Frames, inline: int = 0, shared: int = 0) -> None:
        """Queue one batch's frames (its body bytes: `shared` of them placed in shared memory,
        `inline` the others); flush past the limits."""
        self.frames.extend(group)
        self.inline += inline
        self.shared += shared
        if not self.gather or self.inline >= _COALESCE_BYTES or \
                self.shared >= _COALESCE_SHARED_BYTES or len(self.frames) >= _COALESCE_FRAMES:
            self.flush()

    def flush(self) -> None:
        """Send the queued frames in one gather send; segments holding their bodies are sealed
        and announced first (the last one in the same send, its descriptor attached)."""
        if not self.frames:
            return
        frames, self.frames, self.inline, self.shared = self.frames, [], 0, 0
        writes, self.writes = self.writes, []
        for arena, block, parts in writes:    # before sealing: a sealed segment takes no writes
            arena.write(block, parts)
        sealed = self.arena.seal_pending() if self.arena is not None else []
        fd = None
        try:
            if sealed:
                for payload, seg_fd in sealed[:-1]:
                    self.transport.send_frame(wire.FRAME_SEGMENT, 0, [payload], fd=seg_fd)
                payload, fd = sealed[-1]
                frames.insert(0, (wire.FRAME_SEGMENT, 0, [payload]))
            self.transport.send_frames(frames, fd)
        finally:
            for _, seg_fd in sealed:       # duplicates (see seal_pending): ours to close
                os.close(seg_fd)
        reader = self.reader
        if reader is not None and reader.peer_reply.is_set():
            # the arena is decided (the probe's answer, read by the receiver, came or is moot):
            # from now on the worker reads the frees of what it sends
            reader._read_inline(True)
            reader._pump(0)

