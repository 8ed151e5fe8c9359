"""The client's shared memory for type-1 bodies: the segments one connection announced, mapped
read-only (or, named ones, read through their descriptor), the checks a body's regions pass
before they are viewed, and the free_data messages sent when the last view of a body goes.

The server's side is arena.py; the address layout both share is layout.py.
"""
from __future__ import annotations

import bisect
import collections
import fcntl
import os
import stat
import threading
from typing import TYPE_CHECKING, Any, Iterable

from . import _wire as wire
from .._core.buffer import allocate
from ._shm import map_segment
from ..errors import ArrowInvalid
from .layout import MAX_SEGMENT_SIZE, NAME_PREFIX, SHM_DIR

if TYPE_CHECKING:
    from ._shm import Mapping

__all__ = ["DEFAULT_MAX_MAPPED_BYTES", "FREE_FLUSH_BYTES", "FreeChannel", "MAX_NAMED_SEGMENTS",
           "NamedFile", "Segment", "SegmentTable", "SharedBody"]

DEFAULT_MAX_MAPPED_BYTES = 1 << 36       # what one client connection maps, at most
# a named segment is read through its descriptor (NamedFile), held until the connection closes
MAX_NAMED_SEGMENTS = 256
_FREE_BATCH = 4096             # addresses that make a deferred free_data go out at once
# Bytes of bodies copied out whose addresses the client gives back without waiting for a pause:
# the server places each body at the lowest free offset, so the memory its bodies cycle through
# stays about this plus what is in flight, in the CPU caches of both sides.
FREE_FLUSH_BYTES = 4 << 20


class NamedFile:
    """A named segment on the client, read with pread rather than mapped: a named file cannot be
    sealed, so the server can cut it short at any moment, and reading a mapping past the end of
    its file faults (SIGBUS) where a read merely comes up short. Bodies in it are copied out
    anyway (the server could rewrite them), so no mapping is needed."""
    __slots__ = ("fd", "size", "where")

    def __init__(self, fd: int, size: int, where: str) -> None:
        self.fd = fd
        self.size = size
        self.where = where

    def copy(self, offset: int, length: int) -> Any:
        """The `length` bytes at `offset`, in a new buffer (ArrowInvalid when the file holds
        fewer now)."""
        if offset < 0 or length < 0 or offset > self.size - length:
            raise ArrowInvalid(f"region [{offset}, {offset}+{length}) lies outside the "
                               f"{self.size}-byte {self.where}")
        out = allocate(length, False)
        view = memoryview(out).cast("B")
        got = 0
        while got < length:
            try:
                n = os.preadv(self.fd, [view[got:]], offset + got)
            except OSError as e:
                raise ArrowInvalid(f"reading [{offset}, {offset}+{length}) of {self.where} "
                                   f"failed: {e}") from None
            if n == 0:
                raise ArrowInvalid(f"{self.where} was cut short: expected {length} bytes at "
                                   f"offset {offset} of its announced {self.size}, the file "
                                   f"ends after {got} of them")
            got += n
        return out

    def view(self, offset: int, length: int) -> Any:
        """A copy (a named segment is never viewed in place)."""
        return self.copy(offset, length)

    def close(self) -> None:
        fd, self.fd = self.fd, -1
        if fd >= 0:
            os.close(fd)

    def __del__(self) -> None:
        try:
            self.close()
        except OSError:
            pass


class Segment:
    """A segment mapped on the client: its mapping, whether its bytes can still change, and how
    many bodies it holds (0: a segment the server reuses) with the spans of those placed."""
    __slots__ = ("id", "mapping", "immutable", "bodies", "placed", "spans")

    def __init__(self, segment_id: int, mapping: Mapping | NamedFile, immutable: bool,
                 bodies: int) -> None:
        self.id = segment_id
        self.mapping = mapping
        self.immutable = immutable
        self.bodies = bodies
        self.placed = 0                             # bodies placed from it so far
        self.spans: list[tuple[int, int]] = []      # sorted (start, end) of their regions

    def claim(self, start: int, length: int, sequence: int, name: str) -> None:
        """Check that [start, start + length) lies in the segment and, in a segment of counted
        bodies (never reused), overlaps no body placed before: ArrowInvalid naming both."""
        size = self.mapping.size
        if start < 0 or length > size or start > size - length:
            raise ArrowInvalid(f"type-1 body of sequence {sequence}: region [{start}, {start}+"
                               f"{length}) lies outside the {size}-byte segment {self.id} of "
                               f"{name}")
        if not self.bodies:
            return
        spans = self.spans
        i = bisect.bisect_left(spans, (start, start))
        for lo, hi in spans[max(i - 1, 0):i + 1]:
            if start < hi and lo < start + length:
                raise ArrowInvalid(f"type-1 body of sequence {sequence}: region [{start}, "
                                   f"{start}+{length}) overlaps the body at [{lo}, {hi}) in "
                                   f"segment {self.id} of {name}; bodies in a segment must not "
                                   f"overlap")
        spans.insert(i, (start, start + length))


class SegmentTable:
    """The segments one connection announced, mapped read-only and without pre-faulting.

    Mapping costs address space only: pages are touched where bodies point (a copy reads exactly
    the regions a body names), so a sparse segment costs no memory. The sizes of the mapped
    segments add up to at most max_mapped_bytes.
    """

    def __init__(self, name: str, *, max_segments: int = 4096, token: bytes | None = None,
                 max_mapped_bytes: int = DEFAULT_MAX_MAPPED_BYTES) -> None:
        self.name = name
        self.max_segments = max_segments
        self.max_mapped_bytes = int(max_mapped_bytes)
        self.mapped_bytes = 0
        self.token = token
        self.mappings: dict[int, Segment] = {}
        self.named = 0                  # named segments held (a descriptor each)

    def add(self, segment_id: int, size: int, fd: int | None, name: str | None,
            bodies: int = 0) -> bool:
        """Map an announced segment (holding `bodies` bodies; 0: reused); returns True when the
        server wants an ack (named)."""
        try:
            if segment_id in self.mappings:
                raise ArrowInvalid(f"{self.name}: segment {segment_id} announced twice")
            if len(self.mappings) >= self.max_segments:
                raise ArrowInvalid(f"{self.name}: more than {self.max_segments} segments")
            if size <= 0 or size > MAX_SEGMENT_SIZE:
                raise ArrowInvalid(f"{self.name}: segment {segment_id} has size {size}; expected "
                                   f"1..{MAX_SEGMENT_SIZE}")
            if size > self.max_mapped_bytes - self.mapped_bytes:
                raise ArrowInvalid(f"{self.name}: segment {segment_id} has size {size}, but "
                                   f"{self.mapped_bytes} bytes are mapped already and this "
                                   f"connection maps at most {self.max_mapped_bytes} "
                                   f"(max_mapped_bytes)")
            immutable = False
            if name is None:
                if fd is None:
                    raise ArrowInvalid(f"{self.name}: segment {segment_id} arrived without its "
                                       f"descriptor")
                seals = self._seals(segment_id, fd)
                if not seals & fcntl.F_SEAL_SHRINK:
                    raise ArrowInvalid(f"{self.name}: segment {segment_id} is not sealed against "
                                       f"shrinking (seals 0x{seals:x}); refusing to map it")
                # F_SEAL_WRITE is only granted once no writable mapping exists, and nothing can
                # undo it: the bytes are final. F_SEAL_FUTURE_WRITE alone is not enough (the
                # sender keeps the writable mappings it already has).
                immutable = bool(seals & fcntl.F_SEAL_WRITE)
            else:
                if fd is not None:
                    raise ArrowInvalid(f"{self.name}: segment {segment_id} has a name and a "
                                       f"descriptor")
                if self.named >= MAX_NAMED_SEGMENTS:
                    raise ArrowInvalid(f"{self.name}: named segment {segment_id} would be the "
                                       f"{self.named + 1}th; a connection holds at most "
                                       f"{MAX_NAMED_SEGMENTS} (a descriptor each)")
                fd = self._open_named(segment_id, name)
            actual = os.fstat(fd).st_size
            if actual < size:
                raise ArrowInvalid(f"{self.name}: segment {segment_id} announced as {size} bytes "
                                   f"but the file has {actual}")
            mapping: Mapping | NamedFile
            if name is not None:
                # never mapped: the server can cut the file short (see NamedFile)
                mapping = NamedFile(fd, size, f"named segment {segment_id} of {self.name}")
                fd = None
                self.named += 1
            else:
                try:
                    mapping = map_segment(fd, size, False, False)
                except OSError as e:
                    raise ArrowInvalid(f"{self.name}: cannot map segment {segment_id} ({size} "
                                       f"bytes): {e}") from None
            self.mappings[segment_id] = Segment(segment_id, mapping, immutable, bodies)
            self.mapped_bytes += size
        finally:
            if fd is not None:
                os.close(fd)
        return name is not None

    def close(self) -> None:
        """The connection is closed: let go of the descriptors of named segments (mappings stay
        while views of them live)."""
        for seg in self.mappings.values():
            if isinstance(seg.mapping, NamedFile):
                seg.mapping.close()

    def placed(self, seg: Segment) -> None:
        """One more body of a segment of counted bodies is placed: once all are, the table lets
        go of it (views alive keep it mapped)."""
        seg.placed += 1
        if seg.bodies and seg.placed >= seg.bodies:
            if self.mappings.pop(seg.id, None) is seg:
                self.mapped_bytes -= seg.mapping.size

    def _seals(self, segment_id: int, fd: int) -> int:
        try:
            seals: int = fcntl.fcntl(fd, fcntl.F_GET_SEALS)
            return seals
        except OSError as e:
            kind = "a regular file" if stat.S_ISREG(os.fstat(fd).st_mode) else "not a file"
            raise ArrowInvalid(f"{self.name}: segment {segment_id}: its descriptor is not a "
                               f"memfd ({kind}; F_GET_SEALS failed: {e.strerror}); expected a "
                               f"sealed memfd") from None

    def _open_named(self, segment_id: int, name: str) -> int:
        if ("/" in name or not name.startswith(NAME_PREFIX) or name in (".", "..")
                or (self.token is not None and not name.startswith(
                    NAME_PREFIX + self.token.hex() + "-"))):
            raise ArrowInvalid(f"{self.name}: segment {segment_id} has name {name!r}; expected "
                               f"{NAME_PREFIX}<remote_handle>-... under {SHM_DIR}")
        try:
            # non-blocking and not through a symlink: opening a FIFO the server put there would
            # wait for a writer forever, a link could lead to any file of ours
            fd = os.open(os.path.join(SHM_DIR, name),
                         os.O_RDONLY | os.O_CLOEXEC | os.O_NONBLOCK | os.O_NOFOLLOW)
        except OSError as e:
            raise ArrowInvalid(f"{self.name}: cannot open shared segment {name!r}: {e} (is the "
                               f"server on another host?)") from None
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            os.close(fd)
            raise ArrowInvalid(f"{self.name}: shared segment {name!r} is not a regular file; "
                               f"expected a file the server created under {SHM_DIR}")
        return fd

    def get(self, segment_id: int, sequence: int) -> Segment:
        """The mapped segment `segment_id` (ArrowInvalid naming the body when it is unknown)."""
        seg = self.mappings.get(segment_id)
        if seg is None:
            raise ArrowInvalid(f"type-1 body of sequence {sequence} points into segment "
                               f"{segment_id}, which {self.name} never announced")
        return seg


class FreeChannel:
    """Sends free_data for addresses whose last view went away, coalescing what is pending.

    Releases may come from finalizers at any moment, on any thread, even inside a send on this
    thread, so they only queue and try a non-blocking send; a send that held the connection
    meanwhile flushes the queue when it finishes (the transport's after_send hook).
    """

    def __init__(self, transport: Any, tag: int | None) -> None:
        self.transport = transport
        self.tag = tag
        self.pending: collections.deque[int] = collections.deque()
        self.pending_bytes = 0            # body bytes behind the queued addresses
        self.sent_messages = 0
        self.sent_addresses = 0
        self._local = threading.local()
        transport.after_send = self.flush

    def release(self, addresses: Iterable[int], flush: bool = True, nbytes: int = 0) -> None:
        """Queue addresses for free_data (`nbytes`: the body bytes they held); flush=False leaves
        them for the reader's next flush (before it waits for data), so one message frees many
        bodies, unless FREE_FLUSH_BYTES of bodies are queued."""
        if self.tag is None or self.transport.closed:
            return
        self.pending.extend(addresses)
        self.pending_bytes += nbytes
        if flush or len(self.pending) >= _FREE_BATCH or self.pending_bytes >= FREE_FLUSH_BYTES:
            self.flush()

    def flush(self) -> None:
        """Send the queued addresses (unless this thread is inside such a send already)."""
        local = self._local
        if getattr(local, "active", False):      # our own free_data send's hook
            return
        local.active = True
        try:
            while self.pending and not self.transport.closed:
                if self._send_pending() and self.transport.sending():
                    return                       # that send flushes when it is done
        finally:
            local.active = False

    def _send_pending(self) -> bool:
        """Send what is queued; True when another send holds the connection (it flushes after)."""
        self.pending_bytes = 0
        while self.pending:
            batch: list[int] = []
            while self.pending and len(batch) < 65536:
                batch.append(self.pending.popleft())
            payload = wire.encode_free_data(batch)
            try:
                sent: bool = self.transport.send_frame(wire.FRAME_TAGGED, self.tag, [payload],
                                                 blocking=False)
            except ArrowInvalid:
                self.pending.clear()           # connection gone: the server frees everything
                return False
            if not sent:
                self.pending.extendleft(reversed(batch))
                return True
            self.sent_messages += 1
            self.sent_addresses += len(batch)
        return False


class SharedBody:
    """Owner of the zero-copy views of one type-1 body: keeps the segment mapped and, when the
    last view goes, releases the body's addresses."""
    __slots__ = ("mapping", "addresses", "channel")

    def __init__(self, mapping: Mapping, addresses: list[int], channel: FreeChannel) -> None:
        self.mapping = mapping
        self.addresses = addresses
        self.channel = channel

    def __del__(self) -> None:
        try:
            self.channel.release(self.addresses)
        except Exception:       # never raise from a finalizer (interpreter shutdown, closed socket)
            pass
