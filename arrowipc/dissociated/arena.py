"""Shared memory for type-1 bodies: the server's arena, the client's segment table, and the
owner object that sends free_data when the last view of a body goes.

Addresses in type-1 pairs are our offsets: segment id in bits 40-63, byte offset in the segment
in bits 0-39. Segments are memfds passed over the Unix socket (sealed against shrinking and
growing, mapped read-only by the client) or, opted in for TCP on one host, files under /dev/shm
whose names the server announces and unlinks once the client has mapped them.
"""
from __future__ import annotations

import bisect
import collections
import fcntl
import os
import secrets
import stat
import threading
from typing import TYPE_CHECKING, Any, Iterable, Literal

from . import _wire as wire
from .._core.buffer import allocate
from ._shm import PEER_SEGMENT_BASE, SEGMENT_SHIFT, map_segment
from ..errors import ArrowInvalid
from . import transport as tp

if TYPE_CHECKING:
    from ._shm import Mapping
    from .transport import Transport

    # (sequence, block address, addresses still to be freed) of a block not yet freed
    Outstanding = tuple[int, int, frozenset[int]]

__all__ = ["address_of", "Block", "BLOCK_ALIGNMENT", "DEFAULT_MAX_MAPPED_BYTES",
           "DEFAULT_SEGMENT_SIZE", "FreeChannel", "MAX_NAMED_SEGMENTS", "MAX_SEGMENT_ID",
           "MAX_SEGMENT_SIZE", "NAME_PREFIX", "NamedFile", "OFFSET_MASK", "PAGE_SIZE",
           "PEER_SEGMENT_ADDRESS", "PEER_SEGMENT_BASE", "PeerLedger", "Segment",
           "SEGMENT_GRANULE", "SEGMENT_SHIFT", "SegmentTable", "SharedArena", "SharedBody",
           "SharedBudget", "SHM_DIR", "split_address"]

# SEGMENT_SHIFT and PEER_SEGMENT_BASE (the ids of a peer-memory connection's segments for small
# bodies) are defined in _shm, whose place_regions reads addresses on the client's path.
OFFSET_MASK = (1 << SEGMENT_SHIFT) - 1
# On a peer-memory connection, the type-1 addresses from here up name segments (segment ids from
# PEER_SEGMENT_BASE), those below the server's own memory.
PEER_SEGMENT_ADDRESS = PEER_SEGMENT_BASE << SEGMENT_SHIFT
MAX_SEGMENT_SIZE = 1 << SEGMENT_SHIFT
MAX_SEGMENT_ID = (1 << 24) - 1
BLOCK_ALIGNMENT = 64
SEGMENT_GRANULE = 1 << 20
PAGE_SIZE = 4096
DEFAULT_SEGMENT_SIZE = 64 << 20
DEFAULT_MAX_MAPPED_BYTES = 1 << 36       # what one client connection maps, at most
# a named segment is read through its descriptor (NamedFile), held until the connection closes
MAX_NAMED_SEGMENTS = 256
SHM_DIR = "/dev/shm"
_IOV_MAX = 1024                # buffers one pwritev takes
_FREE_BATCH = 4096             # addresses that make a deferred free_data go out at once
# Bytes of bodies copied out whose addresses the client gives back without waiting for a pause:
# the server places each body at the lowest free offset, so the memory its bodies cycle through
# stays about this plus what is in flight, in the CPU caches of both sides.
FREE_FLUSH_BYTES = 4 << 20
NAME_PREFIX = "arrowipc-"
_SEALS = fcntl.F_SEAL_SHRINK | fcntl.F_SEAL_GROW | fcntl.F_SEAL_SEAL


def address_of(segment_id: int, offset: int) -> int:
    """A type-1 address: the segment id in bits 40-63, the offset in bits 0-39."""
    return (segment_id << SEGMENT_SHIFT) | offset


def split_address(address: int) -> tuple[int, int]:
    """(segment id, offset) of a type-1 address."""
    return address >> SEGMENT_SHIFT, address & OFFSET_MASK


def _round_up(n: int, k: int) -> int:
    return (n + k - 1) // k * k


# -- server side ---------------------------------------------------------------------------------

class Block:
    """One body's region in a segment, alive until every address handed out for it is freed."""
    __slots__ = ("segment", "offset", "size", "sequence", "pending", "parts")

    def __init__(self, segment: _Segment | None, offset: int, size: int) -> None:
        self.segment = segment            # None for a PeerLedger's block
        self.offset = offset
        self.size = size
        self.sequence: int | None = None
        self.pending: set[int] = set()
        self.parts: list[Any] | None = None     # the body parts a peer reads (PeerLedger)

    @property
    def address(self) -> int:
        """The block's type-1 address (an arena's block)."""
        assert self.segment is not None, "a peer block has no segment address"
        return address_of(self.segment.id, self.offset)


class _Segment:
    __slots__ = ("id", "size", "mapping", "free", "path", "fd", "live", "bodies", "sealed")

    def __init__(self, segment_id: int, size: int, mapping: Mapping | None, path: str | None,
                 fd: int | None) -> None:
        self.id = segment_id
        self.size = size                  # a sealed arena's open segment: the bytes used so far
        self.mapping = mapping            # None in a sealed arena and for a named segment
                                          # (written with pwritev)
        self.free = [[0, size]]           # sorted [offset, size] ranges
        self.path = path
        # a sealed arena's segments keep their descriptor until dropped: the last reference to
        # the memory goes here, so freeing its pages is the server's work, not the client's (a
        # named segment keeps it to be written through)
        self.fd = fd
        self.live = 0                     # blocks allocated in it and not yet released
        self.bodies = 0                   # bodies handed out from it (a sealed segment's count)
        self.sealed = False               # write-sealed and announced (a sealed arena's)

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


class SharedBudget:
    """Bytes of shared memory the server's arenas may hold at once, over every connection."""

    def __init__(self, limit: int) -> None:
        self.limit = int(limit)
        self.used = 0
        self._lock = threading.Lock()

    def reserve(self, n: int) -> bool:
        """Take n bytes from the budget; False (nothing taken) when they are not left."""
        with self._lock:
            if n > self.limit - self.used:
                return False
            self.used += n
            return True

    def release(self, n: int) -> None:
        """Give n reserved bytes back."""
        with self._lock:
            self.used -= n


class SharedArena:
    """Per connection: segments announced to one client, blocks handed out, frees applied.

    Two ways to keep the client safe from bytes that change under it (see docs/PROTOCOL.md §5):

    * reused (default): segments start at 1 MiB and double up to segment_size (a larger body gets
      a segment of its own size), are pre-faulted and reused when blocks are freed, so their pages
      stay faulted in. The server can write them again, so the client copies each body out and
      frees it at once. A segment is never given to another client.
    * sealed: bodies are packed one after another into a fresh memfd (the open segment),
      written with pwritev, so the server never maps it. Before the frames naming them go out
      (seal_pending, from the server's send path) the segment gets F_SEAL_WRITE and is announced
      once with the count of bodies in it; the next body opens a new memfd (segments are
      re-created, never reused). The client maps it once as final bytes, hands out zero-copy
      views of every body in it, and forgets it once it has placed that many bodies (the views
      keep it mapped); the server drops it when its last body is freed.

    Flow control: at most `window` bodies and `window_bytes` bytes are handed out and not yet
    freed; the arena holds at most max_bytes of segments, and every arena of the server draws on
    one SharedBudget. allocate() returns None when a limit is reached; the server then waits for
    frees a while, or sends the body as bytes.
    """

    def __init__(self, transport: Transport, *, named: bool = False, token: str | None = None,
                 segment_size: int = DEFAULT_SEGMENT_SIZE, max_bytes: int = 1 << 30,
                 populate: bool = True, sealed: bool = False, budget: SharedBudget | None = None,
                 window: int = 64, window_bytes: int = 256 << 20, first_segment_id: int = 0
                 ) -> None:
        self.transport = transport
        self.named = named
        self.sealed = sealed and not named          # named files cannot be sealed
        self.token = token or secrets.token_hex(8)
        self.segment_size = int(segment_size)
        self.max_bytes = int(max_bytes)
        self.populate = populate
        self.budget = budget
        self.window = int(window)
        self.window_bytes = int(window_bytes)
        self.segments: dict[int, _Segment] = {}
        self._open: _Segment | None = None         # sealed: the segment bodies go into now
        self._unsealed: list[_Segment] = []        # sealed: full, waiting for seal_pending
        self._closing: list[int] = []              # descriptors of segments dropped by free()
        self.next_id = int(first_segment_id)
        self.by_address: dict[int, Block] = {}     # handed-out address -> Block
        self.blocks: set[Block] = set()            # blocks not yet fully freed
        self.outstanding_bytes = 0
        self.lock = threading.Lock()
        self.freed = threading.Condition(self.lock)
        self.closed = False
        self.mapped_bytes = 0
        self.blocks_allocated = 0
        self.blocks_released = 0
        self.unknown_frees = 0
        self.frees = 0                    # blocks released so far (wakes waiters)
        self.peak_outstanding = 0

    # allocation ---------------------------------------------------------------------------------
    def allocate(self, size: int) -> Block | None:
        """A block of at least `size` bytes, or None when a window, the arena's byte limit or the
        server's budget is reached."""
        need = _round_up(max(size, 1), BLOCK_ALIGNMENT)
        with self.lock:
            if self.closed:
                return None
            if self.blocks and (len(self.blocks) >= self.window
                                or need > self.window_bytes - self.outstanding_bytes):
                return None
            if not self.sealed:
                for seg in self.segments.values():
                    off = seg.take(need)
                    if off is not None:
                        return self._new_block(seg, off, need)
            if self.sealed:
                return self._allocate_packed(need)
            # grow geometrically up to segment_size: small streams map (and pre-fault) little
            target = min(self.segment_size, max(SEGMENT_GRANULE, self.mapped_bytes))
            seg_size = max(target, _round_up(need, SEGMENT_GRANULE))
            if (seg_size > MAX_SEGMENT_SIZE or self.next_id > MAX_SEGMENT_ID
                    or self.mapped_bytes + seg_size > self.max_bytes):
                return None
            if self.budget is not None and not self.budget.reserve(seg_size):
                return None
            try:
                seg = self._new_segment(seg_size)
            except BaseException:
                if self.budget is not None:
                    self.budget.release(seg_size)
                raise
            off = seg.take(need)
            assert off is not None, "a new segment holds the block it was made for"
            return self._new_block(seg, off, need)

    def _allocate_packed(self, need: int) -> Block | None:
        """A sealed arena's block: the next `need` bytes of the open segment, or of a new one
        when it is full (the full one waits in _unsealed for seal_pending). The limits count the
        bytes used, block by block."""
        seg = self._open
        if seg is not None and seg.live and need > self.segment_size - seg.size:
            self._unsealed.append(seg)
            seg = self._open = None
        if seg is not None and need > MAX_SEGMENT_SIZE - seg.size:
            return None
        if (self.mapped_bytes + need > self.max_bytes
                or (seg is None and self.next_id > MAX_SEGMENT_ID)):
            return None
        if self.budget is not None and not self.budget.reserve(need):
            return None
        if seg is None:
            try:
                fd = os.memfd_create(f"arrowipc-segment-{self.next_id}",
                                     os.MFD_CLOEXEC | os.MFD_ALLOW_SEALING)
            except BaseException:
                if self.budget is not None:
                    self.budget.release(need)
                raise
            seg = self._open = _Segment(self.next_id, 0, None, None, fd)
            self.segments[seg.id] = seg
            self.next_id += 1
        off = seg.size
        seg.size += need
        self.mapped_bytes += need
        return self._new_block(seg, off, need)

    def seal_pending(self) -> list[tuple[bytes, int]]:
        """Seal every segment holding bodies not yet announced: (segment frame payload,
        descriptor) for each, in order; the caller sends each payload with its descriptor
        before any frame naming those bodies, then closes the descriptor: it is a duplicate,
        since a client's free_data (for addresses it guessed) may drop the segment and close the
        arena's own before the send goes out. The segment is cut to the bytes used, and
        F_SEAL_WRITE is granted because nothing ever mapped it writable."""
        out: list[tuple[bytes, int]] = []
        with self.lock:
            pending = self._unsealed
            if self._open is not None and self._open.live:
                pending.append(self._open)
                self._open = None
            self._unsealed = []
            for seg in pending:
                fd = seg.fd
                assert fd is not None and not seg.sealed, "sealed once, with its descriptor"
                seg.sealed = True                 # from now on its last free drops it
                if seg.live == 0:                 # freed already, by a client that guessed
                    self._drop_segment(seg)
                    continue
                os.ftruncate(fd, seg.size)
                fcntl.fcntl(fd, fcntl.F_ADD_SEALS, _SEALS | fcntl.F_SEAL_WRITE)
                try:
                    fd = os.dup(fd)
                except OSError:                   # out of descriptors: none of ours stays
                    for _, dup in out:
                        os.close(dup)
                    raise
                out.append((tp.segment_payload(seg.id, seg.size, bodies=max(seg.bodies, 1)), fd))
        return out

    def _new_block(self, seg: _Segment, off: int, size: int) -> Block:
        block = Block(seg, off, size)
        blocks = self.blocks
        blocks.add(block)
        if len(blocks) > self.peak_outstanding:
            self.peak_outstanding = len(blocks)
        seg.live += 1
        self.outstanding_bytes += size
        self.blocks_allocated += 1
        return block

    def _new_segment(self, size: int) -> _Segment:
        seg_id = self.next_id
        path: str | None = None
        fd: int | None
        if self.named:
            path = os.path.join(SHM_DIR, f"{NAME_PREFIX}{self.token}-{os.getpid()}-"
                                         f"{id(self):x}-{seg_id}")
            fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
        else:
            fd = os.memfd_create(f"arrowipc-segment-{seg_id}",
                                 os.MFD_CLOEXEC | os.MFD_ALLOW_SEALING)
        try:
            os.ftruncate(fd, size)
            if path is not None:                # named
                # written through the descriptor, never mapped: a named file cannot be sealed,
                # and a client that cut it short would make a write into a mapping of it fault
                # (SIGBUS) and kill the server; a write merely extends the file again
                seg = _Segment(seg_id, size, None, path, fd)
                self.transport.send_frame(wire.FRAME_SEGMENT, 0, [
                    tp.segment_payload(seg_id, size, os.path.basename(path))])
                fd = None                       # the segment's now, closed when it is dropped
            else:
                fcntl.fcntl(fd, fcntl.F_ADD_SEALS, _SEALS)
                mapping = map_segment(fd, size, True, self.populate)
                seg = _Segment(seg_id, size, mapping, path, None)
                self.transport.send_frame(wire.FRAME_SEGMENT, 0,
                                          [tp.segment_payload(seg_id, size)], fd=fd)
        except BaseException:
            if path is not None:
                _unlink(path)
            raise
        finally:
            if fd is not None:
                os.close(fd)
        self.segments[seg_id] = seg
        self.next_id += 1
        self.mapped_bytes += size
        return seg

    def place(self, parts: list[Any], spans: list[tuple[int, int]], size: int, sequence: int,
              writes: list[tuple[SharedArena, Block, list[Any]]] | None = None
              ) -> bytes | None:
        """The type-1 payload of a body placed here: a block allocated, the body `parts` (a
        `size`-byte packed body) copied in, and the (address, length) pair of each of the
        header's buffer `spans` ((offset, length) in the body) handed out; None when a limit is
        reached (as allocate). The server's one call per body.

        writes: when given, the copy is queued there as (arena, block, parts) rather than made
        now, for the caller to make (arena.write) before the frame naming the body goes out: a
        send's copies then run back to back, and the bookkeeping of its bodies runs in caches
        that no 1 MiB copy has just emptied."""
        block = self.allocate(size)
        if block is None:
            return None
        try:
            if writes is None:
                self.write(block, parts)
            payload, addresses = wire.encode_placed_body(
                size, address_of(block.segment.id, block.offset), spans)  # type: ignore[union-attr]
            self.hand_out(block, addresses, sequence)
        except BaseException:
            self.discard(block)
            raise
        if writes is not None:
            writes.append((self, block, parts))
        return payload

    def write(self, block: Block, parts: list[Any]) -> None:
        """Copy the body `parts` into the block's memory (a sealed arena's segment and a named one
        are written through their descriptor: no mapping of them ever exists here)."""
        seg = block.segment
        assert seg is not None
        if seg.mapping is not None:
            seg.mapping.write_parts(block.offset, parts)
            return
        # a sealed arena's segment (writes only until it is sealed), or a named one
        assert seg.fd is not None and not seg.sealed, "a sealed arena writes only unsealed ones"
        _pwrite_all(seg.fd, block.offset, parts)

    def publish(self) -> None:
        """Seal and announce every segment with bodies not yet announced (when there is no
        send path to do it before the body frames: the server's test hook)."""
        sealed = self.seal_pending()
        try:
            for payload, fd in sealed:
                self.transport.send_frame(wire.FRAME_SEGMENT, 0, [payload], fd=fd)
        finally:
            for _, fd in sealed:
                os.close(fd)

    def hand_out(self, block: Block, addresses: Iterable[int], sequence: int) -> None:
        """Record the addresses sent for `block`; each must come back in a free_data message."""
        with self.lock:
            block.sequence = sequence
            for a in addresses:
                if a not in self.by_address:
                    self.by_address[a] = block
                    block.pending.add(a)
            if block.segment is not None:
                block.segment.bodies += 1
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
    def free(self, addresses: Iterable[int]) -> None:
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
            closing, self._closing = self._closing, []
        for fd in closing:          # frees the pages: not while the worker waits for the lock
            os.close(fd)

    def _release(self, block: Block) -> None:
        self.blocks.discard(block)
        self.blocks_released += 1
        self.outstanding_bytes -= block.size
        self.frees += 1
        self.freed.notify_all()
        if self.closed:
            return
        seg = block.segment
        assert seg is not None
        seg.live -= 1
        if self.sealed:
            if seg.live == 0 and seg.sealed:        # announced, and its last body is gone
                if seg.fd is not None:
                    self._closing.append(seg.fd)    # closed once the lock is let go
                    seg.fd = None
                self._drop_segment(seg)
        else:
            seg.give(block.offset, block.size)

    def _drop_segment(self, seg: _Segment) -> None:
        del self.segments[seg.id]
        self.mapped_bytes -= seg.size
        if self.budget is not None:
            self.budget.release(seg.size)
        if seg.fd is not None:
            os.close(seg.fd)
            seg.fd = None
        if seg.path is not None:
            _unlink(seg.path)
            seg.path = None
        if seg.mapping is not None:
            seg.mapping.close()

    def wait_for_free(self, timeout: float) -> bool:
        """Wait up to `timeout` seconds for a block to be released; False when none was (or
        none is outstanding)."""
        with self.lock:
            if not self.blocks or self.closed:
                return False
            seen = self.frees
            return self.freed.wait_for(lambda: self.frees != seen or self.closed, timeout) \
                and not self.closed

    def acknowledge(self, segment_id: int) -> None:
        """The client mapped a named segment: its name is no longer needed."""
        with self.lock:
            seg = self.segments.get(segment_id)
            if seg is not None and seg.path is not None:
                _unlink(seg.path)
                seg.path = None

    def outstanding(self) -> list[Outstanding]:
        """[(sequence, block address, addresses still to be freed)] for blocks not yet freed."""
        with self.lock:
            return sorted((b.sequence, b.address, frozenset(b.pending)) for b in self.blocks
                          if b.sequence is not None)

    def close(self) -> None:
        """The client is gone: release every block and unmap every segment (the caller makes
        sure nothing writes into them any more)."""
        with self.lock:
            for b in list(self.blocks):
                self._release(b)
            self.closed = True
            self.by_address.clear()
            self._open, self._unsealed = None, []
            for fd in self._closing:
                os.close(fd)
            self._closing = []
            for seg in list(self.segments.values()):
                self._drop_segment(seg)
            self.freed.notify_all()


def _overlapping(pairs: list[tuple[int, int]]) -> bool:
    """Whether two of the non-empty (address, length) regions overlap (a client reads each
    byte of our memory once at most: _shm.peer_read)."""
    ordered = sorted(p for p in pairs if p[1])
    return any(a2 < a1 + n1 for (a1, n1), (a2, _) in zip(ordered, ordered[1:]))


class PeerLedger:
    """Per connection, when the client reads type-1 bodies straight from the server's memory
    (process_vm_readv; docs/PROTOCOL.md §5): the addresses are the body parts' own, the parts are
    kept alive until the client frees them, and the same windows apply as to an arena."""

    def __init__(self, *, window: int = 64, window_bytes: int = 256 << 20) -> None:
        self.window = int(window)
        self.window_bytes = int(window_bytes)
        # address -> [blocks handing it out, oldest first]
        self.by_address: dict[int, list[Block]] = {}
        self.blocks: set[Block] = set()
        self.outstanding_bytes = 0
        self.lock = threading.Lock()
        self.freed = threading.Condition(self.lock)
        self.closed = False
        self.segments: dict[int, _Segment] = {}   # none: stats and tests look for arena-like fields
        self.blocks_allocated = 0
        self.blocks_released = 0
        self.unknown_frees = 0
        self.frees = 0
        self.peak_outstanding = 0

    def hand_out(self, parts: list[Any], spans: list[tuple[int, int]], size: int, sequence: int
                 ) -> list[tuple[int, int]] | None | Literal[False]:
        """[(address, length)] for the header's buffers `spans` ((offset, length) in the packed
        body that `parts` make up), recorded until freed; None when a window is full; False when
        a buffer is not one piece of memory, or when two share memory (the body then goes as
        bytes)."""
        from .._core.buffer import py_buffer
        views: list[Any] = []
        starts: list[int] = []
        pos = 0
        for p in parts:
            v = py_buffer(p)
            if v.size:
                views.append(v)
                starts.append(pos)
                pos += v.size
        pairs: list[tuple[int, int]] = []
        first = views[0].address if views else 0
        i = 0
        for off, n in spans:
            if n == 0:
                pairs.append((first, 0))
                continue
            while i + 1 < len(views) and starts[i + 1] <= off:
                i += 1
            v, start = views[i], starts[i]
            if not (start <= off and off + n <= start + v.size):
                return False                # e.g. a compressed buffer: prefix and data apart
            pairs.append((v.address + (off - start), n))
        if _overlapping(pairs):
            return False                    # buffers sharing memory: the client refuses those
        with self.lock:
            if self.closed or (self.blocks and (len(self.blocks) >= self.window or
                                                size > self.window_bytes -
                                                self.outstanding_bytes)):
                return None
            block = Block(None, 0, size)
            block.sequence = sequence
            block.parts = views                     # keeps the memory the client reads
            for a, _ in pairs:
                if a not in block.pending:
                    block.pending.add(a)
                    self.by_address.setdefault(a, []).append(block)
            self.blocks.add(block)
            self.outstanding_bytes += size
            self.blocks_allocated += 1
            self.peak_outstanding = max(self.peak_outstanding, len(self.blocks))
            if not block.pending:
                self._release(block)
        return pairs

    def free(self, addresses: Iterable[int]) -> None:
        """Apply one free_data message (an address handed out twice is freed oldest first)."""
        with self.lock:
            for a in addresses:
                holders = self.by_address.get(a)
                if not holders:
                    self.unknown_frees += 1
                    continue
                block = holders.pop(0)
                if not holders:
                    del self.by_address[a]
                block.pending.discard(a)
                if not block.pending:
                    self._release(block)

    def _release(self, block: Block) -> None:
        self.blocks.discard(block)
        block.parts = None
        self.blocks_released += 1
        self.outstanding_bytes -= block.size
        self.frees += 1
        self.freed.notify_all()

    def wait_for_free(self, timeout: float) -> bool:
        """Wait up to `timeout` seconds for a block to be released (as SharedArena's)."""
        with self.lock:
            if not self.blocks or self.closed:
                return False
            seen = self.frees
            return self.freed.wait_for(lambda: self.frees != seen or self.closed, timeout) \
                and not self.closed

    def outstanding(self) -> list[Outstanding]:
        """[(sequence, 0, addresses still to be freed)] for blocks not yet freed."""
        with self.lock:
            # every block here was handed out with its sequence
            return sorted((b.sequence, 0, frozenset(b.pending))  # type: ignore[misc]
                          for b in self.blocks)

    def acknowledge(self, segment_id: int) -> None:
        """Nothing to do: there are no named segments."""

    def close(self) -> None:
        """The client is gone: release every block."""
        with self.lock:
            for b in list(self.blocks):
                self._release(b)
            self.by_address.clear()
            self.closed = True
            self.freed.notify_all()


def _pwrite_all(fd: int, offset: int, parts: list[Any]) -> None:
    """Write the parts back to back at `offset` (pwritev, GIL released; short writes resumed)."""
    views = [memoryview(p).cast("B") for p in parts]
    views = [v for v in views if v.nbytes]
    while views:
        chunk = views[:_IOV_MAX]
        done = os.pwritev(fd, chunk, offset)
        offset += done
        while done:
            n = chunk[0].nbytes
            if done >= n:
                done -= n
                chunk.pop(0)
                views.pop(0)
            else:
                views[0] = views[0][done:]
                done = 0


def _unlink(path: str) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass


# -- client side ---------------------------------------------------------------------------------

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
