"""The server's shared memory for type-1 bodies: per connection, the arena of segments bodies are
written into (SharedArena) or the ledger of bodies a peer reads in place (PeerLedger), the
windows that bound what is handed out, and the frees the client sends back applied.

Segments are memfds passed over the Unix socket (sealed against shrinking and growing; the client
maps them read-only) or, opted in for TCP on one host, files under /dev/shm whose names the server
announces and unlinks once the client has mapped them. The client's side is segments.py; the
address layout both share is layout.py.
"""
from __future__ import annotations

import fcntl
import os
import secrets
import threading
from typing import TYPE_CHECKING, Any, Iterable, Literal

from . import _wire as wire
from ._shm import map_segment
from . import transport as tp
from .layout import (MAX_SEGMENT_ID, MAX_SEGMENT_SIZE, NAME_PREFIX, SHM_DIR, address_of)

if TYPE_CHECKING:
    from ._shm import Mapping
    from .transport import Transport

    # (sequence, block address, addresses still to be freed) of a block not yet freed
    Outstanding = tuple[int, int, frozenset[int]]

__all__ = ["Block", "BLOCK_ALIGNMENT", "DEFAULT_SEGMENT_SIZE", "PAGE_SIZE", "PeerLedger",
           "SEGMENT_GRANULE", "SharedArena", "SharedBudget"]

BLOCK_ALIGNMENT = 64
SEGMENT_GRANULE = 1 << 20
PAGE_SIZE = 4096
DEFAULT_SEGMENT_SIZE = 64 << 20
_IOV_MAX = 1024                # buffers one pwritev takes
_SEALS = fcntl.F_SEAL_SHRINK | fcntl.F_SEAL_GROW | fcntl.F_SEAL_SEAL


def _round_up(n: int, k: int) -> int:
    return (n + k - 1) // k * k


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
