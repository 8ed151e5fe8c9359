"""Transports for Dissociated IPC: delimited and tagged messages over stream sockets.

The protocol needs a transport that delimits messages and can attach a uint64 tag to some. Over
TCP and Unix stream sockets we frame every message ourselves: a 24-byte header (kind, version,
tag, payload length; see arrowipc.dissociated._wire) and the payload. A tagged message is
sent with one sendmsg over a gather list (header + the body's buffers, never packed). Unix
sockets also carry file descriptors (the shared-memory segments) as SCM_RIGHTS with a segment
frame.

Control frames of our framing (not part of the protocol's messages): hello (client -> server:
what the client can map), error (server -> client, then the server closes), segment (a shared
memory segment), stream end (nothing more for this stream on this connection) and segment ack.
"""
from __future__ import annotations

import array
import collections
import fcntl
import os
import select
import socket
import struct
import termios
import threading
from typing import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:
    from collections.abc import Callable

    from typing_extensions import Buffer as BytesLike

    # a message as a gather list of bytes-like parts; a frame as (kind, tag, parts)
    Parts = list[BytesLike]
    Frames = list[tuple[int, int, Parts]]

from . import _wire as wire
from .._core.buffer import Buffer, allocate, py_buffer
from ..errors import ArrowInvalid

__all__ = ["connect_tcp", "connect_unix", "DEFAULT_MAX_FRAME", "error_payload", "ERROR_PROTOCOL",
           "ERROR_SERVER", "ERROR_UNKNOWN_TICKET", "Frame", "HELLO_MEMFD", "HELLO_NAMED",
           "hello_payload", "HELLO_PEER", "HELLO_VERSION", "listen_tcp", "listen_unix",
           "MAX_CONTROL_PAYLOAD", "parse_error", "parse_hello", "parse_peer_probe",
           "parse_peer_reply", "parse_segment", "parse_segment_ack", "peer_pid",
           "peer_probe_payload", "peer_reply_payload",
           "PREALLOC_LIMIT", "segment_ack_payload", "SEGMENT_FD", "SEGMENT_FD_SINGLE",
           "SEGMENT_FD_BODIES", "SEGMENT_NAMED", "segment_payload", "SOCKET_BUFFER",
           "SocketTransport", "Transport", "TransportClosed"]

_IOV_MAX = 1024
_MAX_FDS_PER_RECV = 16
_ANCILLARY_SPACE = socket.CMSG_SPACE(_MAX_FDS_PER_RECV * 4)
_MSG_CTRUNC = int(socket.MSG_CTRUNC)   # a plain int: flags & an IntFlag runs enum code per read
_MAX_UNCLAIMED_FDS = 64
_NO_LIMIT = (1 << 64) - 1
_READ_AHEAD = 64 << 10         # small enough that a large payload is mostly read in place
# Socket buffers of 1 MiB (the kernel doubles it): a few frames in flight. 4 MiB cost ~25% more
# CPU per byte on both sides in a two-process measurement (the bytes in flight no longer fit
# in a core's cache between the sender's copy in and the receiver's copy out).
SOCKET_BUFFER = 1 << 20
_INLINE_PAYLOAD = 32 << 10      # payloads up to this size are gathered in the read-ahead buffer
# Payloads larger than this grow as bytes arrive rather than being allocated from the claim.
PREALLOC_LIMIT = 256 << 20
DEFAULT_MAX_FRAME = 1 << 36
# Frames of our own framing besides messages and tagged messages (hello, error, segment, ...)
# are small: an error's text is cut at 64 KiB. A longer one is refused before it is read.
MAX_CONTROL_PAYLOAD = 1 << 20

HELLO_VERSION = 1
HELLO_MEMFD = 1                 # the client maps memfds received over this Unix socket
HELLO_NAMED = 2                 # the client maps named segments (/dev/shm) on this host
HELLO_PEER = 4                  # the client may read the server's memory (process_vm_readv)
_HELLO = struct.Struct("<II")

ERROR_UNKNOWN_TICKET = 1
ERROR_SERVER = 2
ERROR_PROTOCOL = 3
_ERROR = struct.Struct("<I")

SEGMENT_FD = 0
SEGMENT_NAMED = 1
SEGMENT_FD_SINGLE = 2           # descriptor attached; the segment holds one body only
SEGMENT_FD_BODIES = 3           # descriptor attached; the segment holds a count of bodies
_SEGMENT = struct.Struct("<QQB")
_SEGMENT_BODIES = struct.Struct("<I")
_SEGMENT_ACK = struct.Struct("<Q")
_PEER_PROBE = struct.Struct("<QQ")      # address, then 16 bytes the client must find there
_PEER_REPLY = struct.Struct("<I")
_MAX_SEGMENT_NAME = 255


class Frame(NamedTuple):
    """One received frame: its kind, tag, payload and any descriptor it carried."""
    kind: int
    tag: int
    payload: Buffer
    fd: int | None          # the descriptor a segment frame carried (Unix sockets)


class TransportClosed(ArrowInvalid):
    """The peer closed the connection (or it was closed here)."""


class Transport:
    """What the protocol needs from a transport (a subclass implements send_frame/receive)."""

    closed = False

    def send_message(self, parts: Parts) -> None:
        """An untagged (metadata) message made of `parts`."""
        self.send_frame(wire.FRAME_MESSAGE, 0, parts)

    def send_tagged(self, tag: int, parts: Parts) -> None:
        """A tagged message whose body is the gather list `parts` (sent without packing)."""
        self.send_frame(wire.FRAME_TAGGED, tag, parts)

    def send_frame(self, kind: int, tag: int, parts: Parts, fd: int | None = None,
                   blocking: bool = True) -> bool:
        """Send one frame of `parts`; False when blocking=False and the connection is busy."""
        raise NotImplementedError

    def send_frames(self, frames: Frames, fd: int | None = None, blocking: bool = True) -> bool:
        """Send several (kind, tag, parts) frames in order; `fd` goes with the first."""
        for kind, tag, parts in frames:
            self.send_frame(kind, tag, parts, fd, blocking)
            fd = None
        return True

    def receive(self) -> Frame | None:
        """The next frame, or None at the end of the connection."""
        raise NotImplementedError

    def sending(self) -> bool:
        """Whether a send holds the connection right now."""
        return False

    def close(self) -> None:
        """Close the connection."""
        raise NotImplementedError


class SocketTransport(Transport):
    """Our framing over a connected TCP or Unix stream socket."""

    def __init__(self, sock: socket.socket, *, max_frame: int = DEFAULT_MAX_FRAME,
                 timeout: float | None = None, name: str = "connection", keep_fds: bool = True):
        self.sock = sock
        # False: the peer sends no descriptors (a server's client); any that come are closed as
        # they arrive, so a peer cannot make us hold them
        self.keep_fds = keep_fds
        self.name = name
        self.is_unix = sock.family == socket.AF_UNIX
        self.max_frame = int(max_frame)
        self.closed = False
        self.after_send = None            # called after each send that held the lock
        # the largest payload of a message frame (a metadata message: its prefix and flatbuffer)
        self.max_message: int | None = None
        # called when a send must wait for the peer to read
        self.send_blocked: Callable[[], object] | None = None
        self._send_lock = threading.Lock()
        # descriptors received, each as (start, end, fd): it came with the read of stream bytes
        # [start, end) (Unix sockets), so it rides on a frame starting there or before
        self._fds: collections.deque[tuple[int, int, int]] = collections.deque()
        self._received = 0                 # stream bytes read so far (Unix sockets)
        self._rbuf = bytearray(_READ_AHEAD)     # frames read ahead of the one being parsed
        self._rview = memoryview(self._rbuf)
        self._rpos = self._rend = 0
        # Non-blocking, with our own wait: a socket with a timeout makes Python poll() before
        # every send and receive, one extra system call per call even when the bytes are there.
        # We try the call first and poll only when it would block.
        self.timeout = timeout
        sock.setblocking(False)
        for option in (socket.SO_SNDBUF, socket.SO_RCVBUF):
            # a batch or two in flight rather than the default ~200 KiB: a sender blocked on a
            # full socket costs a context switch per refill (the kernel caps it at wmem_max)
            try:
                if sock.getsockopt(socket.SOL_SOCKET, option) < SOCKET_BUFFER:
                    sock.setsockopt(socket.SOL_SOCKET, option, SOCKET_BUFFER)
            except OSError:
                pass
        if sock.family in (socket.AF_INET, socket.AF_INET6):
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def __repr__(self) -> str:
        return f"<SocketTransport {self.name} {'unix' if self.is_unix else 'tcp'}>"

    # -- sending --------------------------------------------------------------------------------
    def send_frame(self, kind: int, tag: int, parts: Parts, fd: int | None = None,
                   blocking: bool = True) -> bool:
        """Send one frame; with blocking=False, give up (return False) if another send holds
        the connection (used from finalizers, which may run inside a send)."""
        return self.send_frames([(kind, tag, parts)], fd, blocking)

    def send_frames(self, frames: Frames, fd: int | None = None, blocking: bool = True) -> bool:
        """Send (kind, tag, parts) frames back to back in as few sendmsg calls as possible (a
        message's metadata and body together: one wake-up of the reader, not two)."""
        iov, total = wire.gather_frames(frames)
        if not self._send_lock.acquire(blocking):
            return False
        try:
            if self.closed:
                raise TransportClosed(f"{self.name}: send on a closed connection")
            self._sendmsg_all(iov, total, fd)
        except OSError as e:
            self._mark_closed()
            raise TransportClosed(f"{self.name}: send failed: {e}") from e
        finally:
            self._send_lock.release()
        hook = self.after_send
        if hook is not None:
            hook()
        return True

    def sending(self) -> bool:
        """Whether a send holds the connection right now."""
        return self._send_lock.locked()

    def unread_bytes(self) -> int:
        """Bytes sent and not yet read by the peer (Unix sockets; for TCP, not yet acknowledged);
        -1 when the socket cannot tell."""
        try:
            raw = fcntl.ioctl(self.sock.fileno(), termios.TIOCOUTQ, b"\0\0\0\0")
        except OSError:
            return -1
        count: int = struct.unpack("i", raw)[0]
        return count

    def _wait(self, event: int, what: str) -> None:
        """Wait until the socket is ready for `event` (POLLIN/POLLOUT); TimeoutError naming
        `what` after the transport's timeout."""
        poller = select.poll()
        poller.register(self.sock, event)
        wait_ms = None if self.timeout is None else max(0, int(self.timeout * 1000))
        if not poller.poll(wait_ms):
            raise TimeoutError(f"{self.name}: {what} for {self.timeout} s")

    def _sendmsg_all(self, views: list[BytesLike], total: int, fd: int | None) -> None:
        """Send `total` bytes of buffers `views` (the list is consumed)."""
        ancillary = [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", [fd]))] \
            if fd is not None else []
        i = 0
        while True:
            try:
                sent = self.sock.sendmsg(views[i:i + _IOV_MAX], ancillary)
            except BlockingIOError:
                hook = self.send_blocked
                if hook is not None:
                    hook()
                self._wait(select.POLLOUT, "the peer read nothing")
                continue
            ancillary = []                 # the descriptor goes with the first byte only
            total -= sent
            if not total:
                return
            while sent:                    # a part sent: resume after what went out
                v = memoryview(views[i]).cast("B")
                if sent >= v.nbytes:
                    sent -= v.nbytes
                    i += 1
                else:
                    views[i] = v[sent:]
                    sent = 0

    # -- receiving ------------------------------------------------------------------------------
    def pending(self) -> bool:
        """Whether bytes already read from the socket wait in the read-ahead buffer (poll the
        socket only when not: they would never wake it)."""
        return self._rend > self._rpos

    def frame_ready(self) -> bool:
        """Whether receive() can return without waiting: a whole frame in the read-ahead buffer
        (or an end, or an error, which receive() then reports), after reading what the socket
        holds now. Never waits; a frame whose payload does not fit the buffer does not count."""
        if self.closed:
            return True
        if self._rend == len(self._rbuf):
            self._compact()
        if self._rend < len(self._rbuf):
            try:
                n = self._recv_some(self._rview[self._rend:], wait=False)
            except TransportClosed:
                return True
            if n == 0:
                return True
            if n > 0:
                self._rend += n
        have = self._rend - self._rpos
        if have < wire.FRAME_HEADER_SIZE:
            return False
        try:
            _, _, length = wire.parse_frame_header(
                self._rview[self._rpos:self._rpos + wire.FRAME_HEADER_SIZE], self.max_frame)
        except ArrowInvalid:
            return True
        return bool(have >= wire.FRAME_HEADER_SIZE + length)

    def receive(self) -> Frame | None:
        """The next frame, or None when the peer closed the connection at a frame boundary."""
        # the frame read ahead already, well-formed (the common case) in one call; anything
        # else through the checks below
        start = self._received - (self._rend - self._rpos)
        taken = wire.take_frame(self._rbuf, self._rpos, self._rend, self.max_frame,
                                _NO_LIMIT if self.max_message is None else self.max_message,
                                MAX_CONTROL_PAYLOAD)
        if taken is not None:
            kind, tag, payload, self._rpos = taken
            return Frame(kind, tag, payload, self._frame_fd(
                kind, start, start + wire.FRAME_HEADER_SIZE + payload.size) if self._fds else None)
        if self.closed and self._rend == self._rpos:
            return None
        if not self._fill(wire.FRAME_HEADER_SIZE):
            self._mark_closed()
            return None
        start = self._rpos
        offset = self._received - (self._rend - start)      # of the frame in the stream
        try:
            kind, tag, length = wire.parse_frame_header(
                self._rview[start:start + wire.FRAME_HEADER_SIZE], self.max_frame)
        except ArrowInvalid as e:
            raise ArrowInvalid(f"{self.name}: {e}") from e
        if kind > wire.FRAME_TAGGED and length > MAX_CONTROL_PAYLOAD:
            raise ArrowInvalid(f"{self.name}: {wire.FRAME_KIND_NAMES[kind]} frame claims {length} "
                               f"bytes; control frames carry at most {MAX_CONTROL_PAYLOAD}")
        if kind == wire.FRAME_MESSAGE and self.max_message is not None and \
                length > self.max_message:
            raise ArrowInvalid(f"{self.name}: message frame claims {length} bytes; a metadata "
                               f"message takes at most {self.max_message} (the 5-byte prefix and "
                               f"max_metadata_size bytes of flatbuffer)")
        self._rpos = start + wire.FRAME_HEADER_SIZE
        payload = self._recv_payload(length)
        fd = self._frame_fd(kind, offset, offset + wire.FRAME_HEADER_SIZE + length) \
            if self._fds else None
        return Frame(kind, tag, payload, fd)

    def _frame_fd(self, kind: int, start: int, end: int) -> int | None:
        """The descriptor of the frame at stream bytes [start, end): for a segment frame, the
        first that came with the read of its first byte. A descriptor the frame does not take
        and that came with its bytes (or earlier ones) rides on no segment frame: it is closed
        (a peer's descriptors on other frames, or more than one on a segment frame)."""
        fds = self._fds
        while fds and fds[0][1] <= start:          # came with the bytes of earlier frames
            os.close(fds.popleft()[2])
        fd = None
        if kind == wire.FRAME_SEGMENT and fds and fds[0][0] <= start:
            fd = fds.popleft()[2]
            while fds and fds[0][0] <= start:      # more with the same read: one per segment
                os.close(fds.popleft()[2])
        while fds and fds[0][1] <= end:
            os.close(fds.popleft()[2])
        return fd

    def _fill(self, want: int) -> bool:
        """At least `want` (<= the buffer's size) bytes in the read-ahead buffer, reading as much
        as the socket has; False when the peer closed before the first of them."""
        have = self._rend - self._rpos
        if have >= want:
            return True
        if self._rpos + want > len(self._rbuf):
            self._compact()
        while self._rend - self._rpos < want:
            try:
                n = self._recv_some(self._rview[self._rend:],
                                    need=want - (self._rend - self._rpos))
            except TransportClosed:
                if self._rend == self._rpos:       # a reset between frames: the peer is gone
                    return False
                raise
            if n == 0:
                if self._rend == self._rpos:
                    return False
                self._mark_closed()
                raise TransportClosed(f"{self.name}: connection closed inside a frame: expected "
                                      f"{want} bytes, got {self._rend - self._rpos}")
            self._rend += n
        return True

    def _recv_payload(self, length: int) -> Buffer:
        have = self._rend - self._rpos
        if length <= have or length <= _INLINE_PAYLOAD:
            # small payloads (metadata, type-1 pairs, requests) come out of the read-ahead buffer:
            # one recv serves many frames
            if length > have:
                self._fill(length)
            buf = allocate(length, False)
            if length:
                memoryview(buf)[:] = self._rview[self._rpos:self._rpos + length]
                self._rpos += length
            return buf
        first = min(length, PREALLOC_LIMIT)
        buf = allocate(first, False)
        view = memoryview(buf)
        view[:have] = self._rview[self._rpos:self._rend]
        self._rpos = self._rend = 0
        self._recv_exact(view[have:])
        got = first
        while got < length:               # a large claim: grow only as the bytes arrive
            bigger = allocate(min(length, 2 * got), False)
            view = memoryview(bigger)
            view[:got] = memoryview(buf)
            self._recv_exact(view[got:])
            got, buf = bigger.size, bigger
        return buf

    def _recv_exact(self, view: memoryview) -> None:
        got, want = 0, view.nbytes
        while got < want:
            n = self._recv_some(view[got:])
            if n == 0:
                self._mark_closed()
                raise TransportClosed(f"{self.name}: connection closed inside a frame: expected "
                                      f"{want} bytes, got {got}")
            got += n

    def _compact(self) -> None:
        """Move the partial frame in the read-ahead buffer to its front."""
        have = self._rend - self._rpos
        self._rview[:have] = self._rview[self._rpos:self._rend]
        self._rpos, self._rend = 0, have

    def _recv_some(self, view: memoryview, wait: bool = True, need: int | None = None) -> int:
        """Bytes read into `view` (0: the peer closed); with wait=False, -1 when none are there
        yet. `need`: the bytes the caller waits for (a timeout names them; default: the view's
        size)."""
        # Descriptors ride on the first byte of a segment frame; on a Unix socket every read is a
        # recvmsg, so that none is ever dropped whatever the read-ahead covers.
        while True:
            try:
                if self.is_unix:
                    return self._recvmsg_into(view)
                return self.sock.recv_into(view)
            except BlockingIOError:
                if not wait:
                    return -1
            except OSError as e:
                self._mark_closed()
                raise TransportClosed(f"{self.name}: receive failed: {e}") from e
            self._wait(select.POLLIN, f"no data (expected "
                                      f"{view.nbytes if need is None else need} more bytes)")

    def _recvmsg_into(self, view: memoryview) -> int:
        n, ancdata, flags, _ = self.sock.recvmsg_into([view], _ANCILLARY_SPACE)
        for level, ctype, data in ancdata:
            if level == socket.SOL_SOCKET and ctype == socket.SCM_RIGHTS:
                fds = array.array("i")
                fds.frombytes(data[:len(data) - len(data) % 4])
                if self.keep_fds and n:
                    self._fds.extend((self._received, self._received + n, fd) for fd in fds)
                else:
                    for fd in fds:
                        os.close(fd)
        self._received += n
        if flags & _MSG_CTRUNC:
            raise ArrowInvalid(f"{self.name}: more than {_MAX_FDS_PER_RECV} descriptors in one "
                               f"message")
        if len(self._fds) > _MAX_UNCLAIMED_FDS:
            raise ArrowInvalid(f"{self.name}: {len(self._fds)} descriptors arrived without "
                               f"segment frames")
        return n

    # -- closing --------------------------------------------------------------------------------
    def _mark_closed(self) -> None:
        self.closed = True

    def error_left(self) -> tuple[int, str] | None:
        """After a send failed: (code, message) of an error frame the peer sent before it closed
        (a server turning a client away says why), when one is next and whole; None otherwise.
        Never waits; what it reads is not kept (the connection is over)."""
        data = bytes(self._rview[self._rpos:self._rend])
        want = wire.FRAME_HEADER_SIZE + MAX_CONTROL_PAYLOAD
        try:
            while len(data) < want:
                got = self.sock.recv(want - len(data), socket.MSG_DONTWAIT)
                if not got:
                    break
                data += got
        except OSError:                   # nothing more (or a reset after what came)
            pass
        if len(data) < wire.FRAME_HEADER_SIZE:
            return None
        try:
            kind, _, length = wire.parse_frame_header(data[:wire.FRAME_HEADER_SIZE],
                                                      MAX_CONTROL_PAYLOAD)
            if kind != wire.FRAME_ERROR or len(data) < wire.FRAME_HEADER_SIZE + length:
                return None
            return parse_error(py_buffer(data[wire.FRAME_HEADER_SIZE:
                                              wire.FRAME_HEADER_SIZE + length]))
        except ArrowInvalid:
            return None

    def shutdown(self) -> None:
        """Wake a thread blocked on this socket (the socket stays open until close)."""
        try:
            self.sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass

    def close(self) -> None:
        """Close the socket (and any descriptors received and not yet taken)."""
        self.closed = True
        self.shutdown()
        try:
            self.sock.close()
        except OSError:
            pass
        while self._fds:
            try:
                os.close(self._fds.popleft()[2])
            except OSError:
                pass


# -- control frames --------------------------------------------------------------------------------

def hello_payload(flags: int) -> bytes:
    """The payload of a hello frame announcing `flags`."""
    return _HELLO.pack(HELLO_VERSION, flags)


def parse_hello(payload: Buffer) -> int:
    """The flags of a hello frame (ArrowInvalid for another version or size)."""
    if payload.size != _HELLO.size:
        raise ArrowInvalid(f"hello frame has {payload.size} bytes; expected {_HELLO.size}")
    version: int
    flags: int
    version, flags = _HELLO.unpack(payload.to_pybytes())
    if version != HELLO_VERSION:
        raise ArrowInvalid(f"hello frame version {version}; expected {HELLO_VERSION}")
    return flags


def error_payload(code: int, text: str) -> bytes:
    """The payload of an error frame: `code` and the message (cut to 64 KiB)."""
    return _ERROR.pack(code) + text.encode("utf-8", "replace")[:65536]


def parse_error(payload: Buffer) -> tuple[int, str]:
    """(code, message) of an error frame."""
    if payload.size < _ERROR.size:
        raise ArrowInvalid(f"error frame has {payload.size} bytes; expected at least {_ERROR.size}")
    raw = payload.to_pybytes()
    return _ERROR.unpack_from(raw)[0], raw[_ERROR.size:].decode("utf-8", "replace")


def segment_payload(segment_id: int, size: int, name: str | None = None,
                    bodies: int = 0) -> bytes:
    """The payload announcing segment `segment_id` of `size` bytes: by descriptor, or by
    `name` under /dev/shm. bodies > 0 says the segment holds exactly that many bodies and is
    never reused (form 2 for one, form 3 with the count), so the client can let go of it once
    it has placed them."""
    if name is None:
        if bodies == 1:
            return _SEGMENT.pack(segment_id, size, SEGMENT_FD_SINGLE)
        if bodies > 1:
            return _SEGMENT.pack(segment_id, size, SEGMENT_FD_BODIES) + \
                _SEGMENT_BODIES.pack(bodies)
        return _SEGMENT.pack(segment_id, size, SEGMENT_FD)
    return _SEGMENT.pack(segment_id, size, SEGMENT_NAMED) + name.encode("ascii")


def parse_segment(payload: Buffer) -> tuple[int, int, str | None, int]:
    """(segment id, size, name or None when the descriptor is attached, bodies it holds: 0 when
    the server may reuse it)."""
    if payload.size < _SEGMENT.size or payload.size > _SEGMENT.size + _MAX_SEGMENT_NAME:
        raise ArrowInvalid(f"segment frame has {payload.size} bytes; expected {_SEGMENT.size} to "
                           f"{_SEGMENT.size + _MAX_SEGMENT_NAME}")
    raw = payload.to_pybytes()
    segment_id, size, form = _SEGMENT.unpack_from(raw)
    name = raw[_SEGMENT.size:]
    if form in (SEGMENT_FD, SEGMENT_FD_SINGLE):
        if name:
            raise ArrowInvalid(f"segment frame {segment_id} carries a descriptor and a name")
        return segment_id, size, None, 1 if form == SEGMENT_FD_SINGLE else 0
    if form == SEGMENT_FD_BODIES:
        if len(name) != _SEGMENT_BODIES.size:
            raise ArrowInvalid(f"segment frame {segment_id} (form 3) has {len(name)} bytes after "
                               f"its form; expected {_SEGMENT_BODIES.size} (the body count)")
        (bodies,) = _SEGMENT_BODIES.unpack(name)
        if bodies == 0:
            raise ArrowInvalid(f"segment frame {segment_id} (form 3) holds 0 bodies; expected at "
                               f"least 1")
        return segment_id, size, None, bodies
    if form != SEGMENT_NAMED:
        raise ArrowInvalid(f"segment frame {segment_id} has form {form}; expected 0 (descriptor), "
                           f"1 (named), 2 (descriptor, one body) or 3 (descriptor, a count of "
                           f"bodies)")
    try:
        text = name.decode("ascii")
    except UnicodeDecodeError:
        raise ArrowInvalid(f"segment frame {segment_id}: name is not ASCII") from None
    return segment_id, size, text, 0


def segment_ack_payload(segment_id: int) -> bytes:
    """The payload acknowledging that named segment `segment_id` is mapped."""
    return _SEGMENT_ACK.pack(segment_id)


def parse_segment_ack(payload: Buffer) -> int:
    """The segment id a segment acknowledgement names."""
    if payload.size != _SEGMENT_ACK.size:
        raise ArrowInvalid(f"segment ack has {payload.size} bytes; expected {_SEGMENT_ACK.size}")
    segment: int = _SEGMENT_ACK.unpack(payload.to_pybytes())[0]
    return segment


def peer_probe_payload(address: int, expected: bytes) -> bytes:
    """The payload asking the peer to read `expected` at `address` of this process."""
    return _PEER_PROBE.pack(address, len(expected)) + expected


def parse_peer_probe(payload: Buffer) -> tuple[int, bytes]:
    """(address, the bytes expected there) of a server's peer-memory probe."""
    raw = payload.to_pybytes()
    if len(raw) < _PEER_PROBE.size:
        raise ArrowInvalid(f"peer memory frame has {len(raw)} bytes; expected at least "
                           f"{_PEER_PROBE.size}")
    address, n = _PEER_PROBE.unpack_from(raw)
    if n != len(raw) - _PEER_PROBE.size or not 0 < n <= 64:
        raise ArrowInvalid(f"peer memory frame announces {n} probe bytes and carries "
                           f"{len(raw) - _PEER_PROBE.size}; expected 1..64, the same")
    return address, raw[_PEER_PROBE.size:]


def peer_reply_payload(ok: bool) -> bytes:
    """The payload answering a peer probe: whether the bytes read matched."""
    return _PEER_REPLY.pack(1 if ok else 0)


def parse_peer_reply(payload: Buffer) -> bool:
    """Whether the peer read the probe's bytes."""
    if payload.size != _PEER_REPLY.size:
        raise ArrowInvalid(f"peer memory reply has {payload.size} bytes; expected "
                           f"{_PEER_REPLY.size}")
    value: int = _PEER_REPLY.unpack(payload.to_pybytes())[0]
    if value not in (0, 1):
        raise ArrowInvalid(f"peer memory reply is {value}; expected 0 or 1")
    return value == 1


def peer_pid(sock: socket.socket) -> int:
    """The pid of the process at the other end of a Unix socket (SO_PEERCRED)."""
    creds = sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
    pid: int = struct.unpack("3i", creds)[0]
    return pid


# -- connecting and listening -------------------------------------------------------------------

def connect_tcp(host: str, port: int, *, timeout: float | None = 60.0,
                max_frame: int = DEFAULT_MAX_FRAME) -> SocketTransport:
    """A transport connected to HOST:PORT."""
    sock = socket.create_connection((host, port), timeout=timeout)
    return SocketTransport(sock, max_frame=max_frame, timeout=timeout, name=f"tcp {host}:{port}")


def connect_unix(path: str, *, timeout: float | None = 60.0,
                 max_frame: int = DEFAULT_MAX_FRAME) -> SocketTransport:
    """A transport connected to the Unix socket at `path`."""
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.settimeout(timeout)
    try:
        sock.connect(path)
    except OSError:
        sock.close()
        raise
    return SocketTransport(sock, max_frame=max_frame, timeout=timeout, name=f"unix {path}")


def listen_tcp(host: str = "127.0.0.1", port: int = 0, backlog: int = 64) -> socket.socket:
    """A listening TCP socket (port 0: any free port)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    sock.listen(backlog)
    return sock


def listen_unix(path: str, backlog: int = 64) -> socket.socket:
    """A listening Unix socket at `path`."""
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.bind(path)
    sock.listen(backlog)
    return sock
