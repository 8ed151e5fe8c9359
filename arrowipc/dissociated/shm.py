"""Shared memory for type-1 bodies: the server's arena, the client's segment table, and the
owner object that sends free_data when the last view of a body goes.

Addresses in type-1 pairs are our offsets: segment id in bits 40-63, byte offset in the segment
in bits 0-39. Segments are memfds passed over the Unix socket (sealed against shrinking and
growing, mapped read-only by the client) or, opted in for TCP on one host, files under /dev/shm
whose names the server announces and unlinks once the client has mapped them.
"""
from __future__ import annotations

import collections
import fcntl
import os
import secrets
import threading

from . import _wire as wire
from ._shm import map_segment
from ..errors import ArrowInvalid
from . import transport as tp

SEGMENT_SHIFT = 40
OFFSET_MASK = (1 << SEGMENT_SHIFT) - 1
MAX_SEGMENT_SIZE = 1 << SEGMENT_SHIFT
MAX_SEGMENT_ID = (1 << 24) - 1
BLOCK_ALIGNMENT = 64
SEGMENT_GRANULE = 1 << 20
DEFAULT_SEGMENT_SIZE = 64 << 20
SHM_DIR = "/dev/shm"
NAME_PREFIX = "arrowipc-"
_SEALS = fcntl.F_SEAL_SHRINK | fcntl.F_SEAL_GROW | fcntl.F_SEAL_SEAL


def address_of(segment_id: int, offset: int) -> int:
    return (segment_id << SEGMENT_SHIFT) | offset


def split_address(address: int) -> tuple[int, int]:
    return address >> SEGMENT_SHIFT, address & OFFSET_MASK


def _round_up(n: int, k: int) -> int:
    return (n + k - 1) // k * k


# -- server side ---------------------------------------------------------------------------------

class Block:
    """One body's region in a segment, alive until every address handed out for it is freed."""
    __slots__ = ("segment", "offset", "size", "sequence", "pending")

    def __init__(self, segment, offset: int, size: int):
        self.segment = segment
        self.offset = offset
        self.size = size
        self.sequence = None
        self.pending: set = set()

    @property
    def address(self) -> int:
        return address_of(self.segment.id, self.offset)


class _Segment:
    __slots__ = ("id", "size", "mapping", "free", "path")

    def __init__(self, segment_id: int, size: int, mapping, path: str | None):
        self.id = segment_id
        self.size = size
        self.mapping = mapping
        self.free = [[0, size]]           # sorted [offset, size] ranges
        self.path = path

    def take(self, size: int) -> int | None:
        for i, (off, n) in enumerate(self.free):
            if n >= size:
                if n == size:
                    del self.free[i]
                else:
                    self.free[i] = [off + size, n - size]
                return off
        return None

    def give(self, off: int, size: int) -> None:
        ranges = self.free
        lo, hi = 0, len(ranges)
        while lo < hi:
            mid = (lo + hi) // 2
            if ranges[mid][0] < off:
                lo = mid + 1
            else:
                hi = mid
        ranges.insert(lo, [off, size])
        if lo + 1 < len(ranges) and ranges[lo][0] + ranges[lo][1] == ranges[lo + 1][0]:
            ranges[lo][1] += ranges[lo + 1][1]
            del ranges[lo + 1]
        if lo > 0 and ranges[lo - 1][0] + ranges[lo - 1][1] == ranges[lo][0]:
            ranges[lo - 1][1] += ranges[lo][1]
            del ranges[lo]


class SharedArena:
    """Per connection: segments announced to one client, blocks handed out, frees applied.

    Segments start at 1 MiB and double up to segment_size (a larger body gets a segment of its
    own size). Freed blocks are reused, so their pages stay faulted in; segments live until the
    client disconnects (a client may still map a segment after its blocks are freed, so a segment is
    never given to another client).
    """

    def __init__(self, transport, *, named: bool = False, token: str | None = None,
                 segment_size: int = DEFAULT_SEGMENT_SIZE, max_bytes: int = 8 << 30,
                 populate: bool = True):
        self.transport = transport
        self.named = named
        self.token = token or secrets.token_hex(8)
        self.segment_size = int(segment_size)
        self.max_bytes = int(max_bytes)
        self.populate = populate
        self.segments: list = []
        self.by_address: dict = {}        # handed-out address -> Block
        self.blocks: set = set()          # blocks not yet fully freed
        self.lock = threading.Lock()
        self.closed = False
        self.mapped_bytes = 0
        self.blocks_allocated = 0
        self.blocks_released = 0
        self.unknown_frees = 0

    # allocation ---------------------------------------------------------------------------------
    def allocate(self, size: int) -> Block | None:
        """A block of at least `size` bytes, or None when the arena's byte limit is reached."""
        need = _round_up(max(size, 1), BLOCK_ALIGNMENT)
        with self.lock:
            if self.closed:
                return None
            for seg in self.segments:
                off = seg.take(need)
                if off is not None:
                    return self._new_block(seg, off, need)
            # grow geometrically up to segment_size: small streams map (and pre-fault) little
            target = min(self.segment_size, max(SEGMENT_GRANULE, self.mapped_bytes))
            seg_size = max(target, _round_up(need, SEGMENT_GRANULE))
            if (seg_size > MAX_SEGMENT_SIZE or len(self.segments) > MAX_SEGMENT_ID
                    or self.mapped_bytes + seg_size > self.max_bytes):
                return None
            seg = self._new_segment(seg_size)
            return self._new_block(seg, seg.take(need), need)

    def _new_block(self, seg, off: int, size: int) -> Block:
        block = Block(seg, off, size)
        self.blocks.add(block)
        self.blocks_allocated += 1
        return block

    def _new_segment(self, size: int) -> _Segment:
        seg_id = len(self.segments)
        path = None
        if self.named:
            path = os.path.join(SHM_DIR, f"{NAME_PREFIX}{self.token}-{os.getpid()}-"
                                         f"{id(self):x}-{seg_id}")
            fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
        else:
            fd = os.memfd_create(f"arrowipc-segment-{seg_id}",
                                 os.MFD_CLOEXEC | os.MFD_ALLOW_SEALING)
        try:
            os.ftruncate(fd, size)
            if not self.named:
                fcntl.fcntl(fd, fcntl.F_ADD_SEALS, _SEALS)
            mapping = map_segment(fd, size, True, self.populate)
            seg = _Segment(seg_id, size, mapping, path)
            if self.named:
                name = os.path.basename(path)
                self.transport.send_frame(wire.FRAME_SEGMENT, 0,
                                          [tp.segment_payload(seg_id, size, name)])
            else:
                self.transport.send_frame(wire.FRAME_SEGMENT, 0, [tp.segment_payload(seg_id, size)],
                                          fd=fd)
        except BaseException:
            if path is not None:
                _unlink(path)
            raise
        finally:
            os.close(fd)
        self.segments.append(seg)
        self.mapped_bytes += size
        return seg

    def write(self, block: Block, parts: list) -> None:
        block.segment.mapping.write_parts(block.offset, parts)

    def hand_out(self, block: Block, addresses, sequence: int) -> None:
        """Record the addresses sent for `block`; each must come back in a free_data message."""
        with self.lock:
            block.sequence = sequence
            for a in addresses:
                if a not in self.by_address:
                    self.by_address[a] = block
                    block.pending.add(a)
            if not block.pending:          # nothing handed out: nothing to wait for
                self._release(block)

    def discard(self, block: Block) -> None:
        """Give back a block that was never handed out (a failed send)."""
        with self.lock:
            for a in block.pending:
                self.by_address.pop(a, None)
            block.pending.clear()
            if block in self.blocks:
                self._release(block)

    # freeing ------------------------------------------------------------------------------------
    def free(self, addresses) -> None:
        """Apply one free_data message; unknown or repeated addresses are counted and ignored."""
        with self.lock:
            for a in addresses:
                block = self.by_address.pop(a, None)
                if block is None:
                    self.unknown_frees += 1
                    continue
                block.pending.discard(a)
                if not block.pending:
                    self._release(block)

    def _release(self, block: Block) -> None:
        self.blocks.discard(block)
        self.blocks_released += 1
        if not self.closed:
            block.segment.give(block.offset, block.size)

    def acknowledge(self, segment_id: int) -> None:
        """The client mapped a named segment: its name is no longer needed."""
        with self.lock:
            if 0 <= segment_id < len(self.segments):
                seg = self.segments[segment_id]
                if seg.path is not None:
                    _unlink(seg.path)
                    seg.path = None

    def outstanding(self) -> list:
        """[(sequence, block address, addresses still to be freed)] for blocks not yet freed."""
        with self.lock:
            return sorted((b.sequence, b.address, frozenset(b.pending)) for b in self.blocks
                          if b.sequence is not None)

    def close(self) -> None:
        """The client is gone: release every block and unmap every segment (the caller makes
        sure nothing writes into them any more)."""
        with self.lock:
            self.closed = True
            for b in list(self.blocks):
                self.blocks.discard(b)
                self.blocks_released += 1
            self.by_address.clear()
            for seg in self.segments:
                if seg.path is not None:
                    _unlink(seg.path)
                    seg.path = None
                seg.mapping.close()


def _unlink(path: str) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass


# -- client side ---------------------------------------------------------------------------------

class SegmentTable:
    """The segments one connection announced, mapped read-only."""

    def __init__(self, name: str, *, max_segments: int = 4096, token: bytes | None = None):
        self.name = name
        self.max_segments = max_segments
        self.token = token
        self.mappings: dict = {}

    def add(self, segment_id: int, size: int, fd: int | None, name: str | None):
        """Map an announced segment; returns True when the server wants an ack (named)."""
        try:
            if segment_id in self.mappings:
                raise ArrowInvalid(f"{self.name}: segment {segment_id} announced twice")
            if len(self.mappings) >= self.max_segments:
                raise ArrowInvalid(f"{self.name}: more than {self.max_segments} segments")
            if size <= 0 or size > MAX_SEGMENT_SIZE:
                raise ArrowInvalid(f"{self.name}: segment {segment_id} has size {size}; expected "
                                   f"1..{MAX_SEGMENT_SIZE}")
            if name is None:
                if fd is None:
                    raise ArrowInvalid(f"{self.name}: segment {segment_id} arrived without its "
                                       f"descriptor")
                seals = fcntl.fcntl(fd, fcntl.F_GET_SEALS)
                if not seals & fcntl.F_SEAL_SHRINK:
                    raise ArrowInvalid(f"{self.name}: segment {segment_id} is not sealed against "
                                       f"shrinking (seals 0x{seals:x}); refusing to map it")
            else:
                if fd is not None:
                    raise ArrowInvalid(f"{self.name}: segment {segment_id} has a name and a "
                                       f"descriptor")
                fd = self._open_named(segment_id, name)
            actual = os.fstat(fd).st_size
            if actual < size:
                raise ArrowInvalid(f"{self.name}: segment {segment_id} announced as {size} bytes "
                                   f"but the file has {actual}")
            try:
                self.mappings[segment_id] = map_segment(fd, size, False, True)
            except OSError as e:
                raise ArrowInvalid(f"{self.name}: cannot map segment {segment_id} ({size} "
                                   f"bytes): {e}") from None
        finally:
            if fd is not None:
                os.close(fd)
        return name is not None

    def _open_named(self, segment_id: int, name: str) -> int:
        if ("/" in name or not name.startswith(NAME_PREFIX) or name in (".", "..")
                or (self.token is not None and not name.startswith(
                    NAME_PREFIX + self.token.hex() + "-"))):
            raise ArrowInvalid(f"{self.name}: segment {segment_id} has name {name!r}; expected "
                               f"{NAME_PREFIX}<remote_handle>-... under {SHM_DIR}")
        try:
            return os.open(os.path.join(SHM_DIR, name), os.O_RDONLY | os.O_CLOEXEC)
        except OSError as e:
            raise ArrowInvalid(f"{self.name}: cannot open shared segment {name!r}: {e} (is the "
                               f"server on another host?)") from None

    def get(self, segment_id: int, sequence):
        m = self.mappings.get(segment_id)
        if m is None:
            raise ArrowInvalid(f"type-1 body of sequence {sequence} points into segment "
                               f"{segment_id}, which {self.name} never announced")
        return m


class FreeChannel:
    """Sends free_data for addresses whose last view went away, coalescing what is pending.

    Releases may come from finalizers at any moment, on any thread, even inside a send on this
    thread, so they only queue and try a non-blocking send; a send that held the connection
    meanwhile flushes the queue when it finishes (the transport's after_send hook).
    """

    def __init__(self, transport, tag: int | None):
        self.transport = transport
        self.tag = tag
        self.pending: collections.deque = collections.deque()
        self.sent_messages = 0
        self.sent_addresses = 0
        self._local = threading.local()
        transport.after_send = self.flush

    def release(self, addresses) -> None:
        if self.tag is None or self.transport.closed:
            return
        self.pending.extend(addresses)
        self.flush()

    def flush(self) -> None:
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
        while self.pending:
            batch = []
            while self.pending and len(batch) < 65536:
                batch.append(self.pending.popleft())
            payload = wire.encode_free_data(batch)
            try:
                sent = self.transport.send_frame(wire.FRAME_TAGGED, self.tag, [payload],
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

    def __init__(self, mapping, addresses: list, channel: FreeChannel):
        self.mapping = mapping
        self.addresses = addresses
        self.channel = channel

    def __del__(self):
        try:
            self.channel.release(self.addresses)
        except Exception:       # never raise from a finalizer (interpreter shutdown, closed socket)
            pass
