# cython: language_level=3
"""Shared-memory mappings for Dissociated IPC type-1 bodies.

A Mapping is one mmap'ed segment file (a sealed memfd, or a named file under /dev/shm): read-write
on the server, which copies body buffers into it, read-only on the client, which copies bodies
out of it (copy) or, for a segment nobody can write any more, hands out zero-copy views whose
owner keeps the mapping alive (view). Copies run without the GIL.
"""
from libc.stdint cimport uint8_t, int64_t, uint64_t
from libc.string cimport memcpy, memset

from arrowipc._core.buffer cimport Buffer, py_buffer, wrap_pointer, allocate

import os as _os

from arrowipc.errors import ArrowInvalid

cdef extern from "sys/mman.h" nogil:
    void* mmap(void* addr, size_t length, int prot, int flags, int fd, long offset)
    int munmap(void* addr, size_t length)
    void* MAP_FAILED
    int PROT_READ
    int PROT_WRITE
    int MAP_SHARED
    int MAP_POPULATE

cdef extern from "errno.h":
    int errno

cdef extern from "arrowipc_kernels.h" nogil:
    ctypedef struct arrowipc_peer_region:
        uint64_t address
        int64_t length
        int64_t dest
    int64_t arrowipc_peer_read(int pid, const arrowipc_peer_region* regions, int64_t n,
                               uint8_t* dst, int threads)

cdef extern from "stdlib.h" nogil:
    void* malloc(size_t size)
    void free(void* p)
    void qsort(void* base, size_t n, size_t size, int (*compar)(const void*, const void*))

DEF PEER_PROBE_ABOVE = 256 << 20      # bodies larger than this are probed before allocating
DEF PEER_PARALLEL_BYTES = 8 << 20     # bodies from this size are read by two threads

# Our type-1 addresses (layout.py says more): segment id in bits 40-63, offset in bits 0-39. On a
# peer-memory connection segment ids start at PEER_SEGMENT_BASE, so their addresses (2^56 and
# up) can never be the server's own: user-space addresses lie below 2^56 (2^47 with 4-level
# page tables).
cdef int _SEGMENT_SHIFT = 40
cdef uint64_t _PEER_SEGMENT_BASE = 1 << 16
SEGMENT_SHIFT = _SEGMENT_SHIFT
PEER_SEGMENT_BASE = _PEER_SEGMENT_BASE
# Bytes of a type-1 body that no region brings (zeros in the client's copy) are only the padding
# between its buffers: at most this many per buffer (the IPC alignment is at most 64). More
# would let a bodyLength claim allocate memory the server never provided.
MAX_PADDING_PER_BUFFER = 64

cdef int _CORES = len(_os.sched_getaffinity(0))


cdef class Mapping:
    """One mapped segment: pointer, size, and whether this side may write it."""
    cdef uint8_t* ptr
    cdef readonly int64_t size
    cdef readonly bint writable

    def __dealloc__(self):
        if self.ptr != NULL:
            munmap(self.ptr, <size_t>self.size)
            self.ptr = NULL

    @property
    def closed(self):
        return self.ptr == NULL

    def close(self):
        """Unmap now. Only for the side that never hands out views (the server)."""
        if self.ptr != NULL:
            munmap(self.ptr, <size_t>self.size)
            self.ptr = NULL

    def write_parts(self, int64_t offset, list parts):
        """Copy the parts back to back into [offset, ...); returns the end offset."""
        cdef Buffer b
        cdef int64_t pos = offset, n
        if not self.writable:
            raise ArrowInvalid("mapping is read-only")
        if self.ptr == NULL:
            raise ArrowInvalid("mapping is closed")
        if offset < 0 or offset > self.size:
            raise ArrowInvalid(f"write at {offset} outside a {self.size}-byte mapping")
        for part in parts:
            b = py_buffer(part)
            n = b.size
            if n > self.size - pos:
                raise ArrowInvalid(f"{n} bytes at offset {pos} do not fit in a {self.size}-byte "
                                   f"mapping")
            with nogil:
                memcpy(self.ptr + pos, b.ptr, <size_t>n)
            pos += n
        return pos

    def copy(self, uint64_t offset, uint64_t length):
        """A new 64-byte-aligned Buffer holding [offset, offset + length) of the segment (one
        memcpy; the bytes can no longer change under the caller)."""
        if self.ptr == NULL:
            raise ArrowInvalid("mapping is closed")
        if length > <uint64_t>self.size or offset > <uint64_t>self.size - length:
            raise ArrowInvalid(f"region [{offset}, {offset}+{length}) lies outside the "
                               f"{self.size}-byte segment")
        cdef Buffer out = allocate(<int64_t>length, False)
        cdef uint8_t* dst = <uint8_t*>out.ptr
        cdef const uint8_t* src = self.ptr + offset
        if length:
            with nogil:
                memcpy(dst, src, <size_t>length)
        return out

    def view(self, uint64_t offset, uint64_t length, object owner=None):
        """A read-only zero-copy Buffer over [offset, offset + length) whose base is `owner`
        (which must keep this mapping alive), or the mapping itself."""
        if self.ptr == NULL:
            raise ArrowInvalid("mapping is closed")
        if length > <uint64_t>self.size or offset > <uint64_t>self.size - length:
            raise ArrowInvalid(f"region [{offset}, {offset}+{length}) lies outside the "
                               f"{self.size}-byte segment")
        return wrap_pointer(self.ptr + offset, <int64_t>length, self if owner is None else owner,
                            False)


def map_segment(int fd, int64_t size, bint writable, bint populate=False):
    """Map `size` bytes of fd shared. populate (MAP_POPULATE) pre-faults every page: the server
    does it for segments it fills and reuses; a client never does (a sparse segment would cost
    it the whole size), so only the pages bodies point to are ever touched."""
    if size <= 0:
        raise ArrowInvalid(f"segment size must be positive, got {size}")
    cdef int prot = PROT_READ | (PROT_WRITE if writable else 0)
    cdef int flags = MAP_SHARED | (MAP_POPULATE if populate else 0)
    cdef void* p
    with nogil:
        p = mmap(NULL, <size_t>size, prot, flags, fd, 0)
    if p == MAP_FAILED:
        import os
        err = errno
        raise OSError(err, f"mmap of a {size}-byte segment failed: {os.strerror(err)}")
    cdef Mapping m = Mapping.__new__(Mapping)
    m.ptr = <uint8_t*>p
    m.size = size
    m.writable = writable
    return m


cdef int _by_address(const void* a, const void* b) noexcept nogil:
    cdef uint64_t x = (<const arrowipc_peer_region*>a).address
    cdef uint64_t y = (<const arrowipc_peer_region*>b).address
    return (x > y) - (x < y)


cdef int _by_dest(const void* a, const void* b) noexcept nogil:
    cdef int64_t x = (<const arrowipc_peer_region*>a).dest, y = (<const arrowipc_peer_region*>b).dest
    return (x > y) - (x < y)


cdef void _zero_uncovered(uint8_t* dst, int64_t total, arrowipc_peer_region* regions,
                          int64_t n) noexcept nogil:
    """Zero the bytes of dst[0:total] that no region's [dest, dest + length) covers (the padding
    between a body's buffers), sorting `regions` by dest: a body's bytes are written once, not
    zeroed first and then copied over. Every region lies within total (checked by the caller)."""
    cdef int64_t i, pos = 0, end
    qsort(regions, <size_t>n, sizeof(arrowipc_peer_region), _by_dest)
    for i in range(n):
        if regions[i].dest > pos:
            memset(dst + pos, 0, <size_t>(regions[i].dest - pos))
        end = regions[i].dest + regions[i].length
        if end > pos:
            pos = end
    if total > pos:
        memset(dst + pos, 0, <size_t>(total - pos))


def scatter_copy(int64_t total, list regions):
    """A new aligned Buffer of `total` bytes with each (source Buffer, destination offset) copied
    in and zeros where none lands; every region is bounds-checked against `total`."""
    cdef Buffer src
    cdef int64_t dest, n, i, count = len(regions)
    cdef arrowipc_peer_region* spans = <arrowipc_peer_region*>malloc(
        sizeof(arrowipc_peer_region) * (count + 1))
    if spans == NULL:
        raise MemoryError()
    cdef Buffer out
    cdef uint8_t* dst
    try:
        out = allocate(total, False)
        dst = <uint8_t*>out.ptr
        for i in range(count):
            source, dest = regions[i]
            src = py_buffer(source)
            n = src.size
            if dest < 0 or n > total or dest > total - n:
                raise ArrowInvalid(f"{n} bytes at body offset {dest} do not fit in a {total}-byte "
                                   f"body")
            spans[i].address = 0
            spans[i].dest = dest
            spans[i].length = n
            with nogil:
                memcpy(dst + dest, src.ptr, <size_t>n)
        with nogil:
            _zero_uncovered(dst, total, spans, count)
    finally:
        free(spans)
    return out


def peer_read(int pid, int64_t total, list regions):
    """A new aligned Buffer of `total` bytes (zeroed where no region lands) with each
    (address, length, destination offset) region read from process `pid`'s memory by
    process_vm_readv: one copy, straight from the peer, split over two threads from
    PEER_PARALLEL_BYTES (the read is bound by the kernel pinning the peer's pages one by one, so
    a second core nearly halves it). Every region is bounds-checked against `total`; an address
    the peer does not map is an ArrowInvalid, never a fault here."""
    cdef int64_t n = len(regions), i, covered = 0, got = 0
    cdef uint64_t address, length, dest
    cdef Buffer out
    cdef arrowipc_peer_region* wanted = <arrowipc_peer_region*>malloc(
        sizeof(arrowipc_peer_region) * (n + 1))
    cdef arrowipc_peer_region* probes = NULL
    cdef uint8_t* probe = NULL
    cdef int threads = 2 if total >= PEER_PARALLEL_BYTES and _CORES > 1 else 1
    if wanted == NULL:
        raise MemoryError()
    try:
        for i in range(n):
            address, length, dest = regions[i]
            if length > <uint64_t>total or dest > <uint64_t>total - length:
                raise ArrowInvalid(f"{length} bytes at body offset {dest} do not fit in a "
                                   f"{total}-byte body")
            covered += <int64_t>length
            wanted[i].address = address
            wanted[i].length = <int64_t>length
            wanted[i].dest = <int64_t>dest
        probes = <arrowipc_peer_region*>malloc(sizeof(arrowipc_peer_region) * (n + 1))
        if probes == NULL:
            raise MemoryError()
        # each byte of the peer's memory is brought once at most: one region named again and
        # again would make a few bytes the peer maps a body of any size here
        memcpy(probes, wanted, sizeof(arrowipc_peer_region) * n)
        qsort(probes, <size_t>n, sizeof(arrowipc_peer_region), _by_address)
        for i in range(1, n):
            if probes[i - 1].length and probes[i].length and \
                    probes[i].address - probes[i - 1].address < <uint64_t>probes[i - 1].length:
                raise ArrowInvalid(f"regions [0x{probes[i].address:x}, +{probes[i].length}) and "
                                   f"[0x{probes[i - 1].address:x}, +{probes[i - 1].length}) of "
                                   f"the memory of process {pid} overlap; each byte may be "
                                   f"brought once")
        if total > PEER_PROBE_ABOVE:
            # a large claim: the peer must map the last byte of every region before we allocate
            probe = <uint8_t*>malloc(<size_t>n + 1)
            if probe == NULL:
                raise MemoryError()
            for i in range(n):
                probes[i].address = wanted[i].address + <uint64_t>wanted[i].length - 1 \
                    if wanted[i].length else wanted[i].address
                probes[i].length = 1 if wanted[i].length else 0
                probes[i].dest = i
            with nogil:
                got = arrowipc_peer_read(pid, probes, n, probe, 1)
        if got >= 0:
            out = allocate(total, False)
            with nogil:
                got = arrowipc_peer_read(pid, wanted, n, <uint8_t*>out.ptr, threads)
                if got >= 0:        # regions may overlap: their sum says nothing of gaps
                    _zero_uncovered(<uint8_t*>out.ptr, total, wanted, n)
    finally:
        free(wanted)
        free(probes)
        free(probe)
    if got < 0:
        # EFAULT also stands for a short read: the peer does not map all of a region
        raise ArrowInvalid(f"reading {covered} bytes from the memory of process {pid} failed: "
                           f"{_os.strerror(<int>-got)}")
    return out


def place_regions(list pairs, list spans, int64_t length, uint64_t total, object seq, bint peer):
    """Check a type-1 body's (address, length) pairs against the buffer spans (offset, length)
    of its metadata and the body length: ([(address, length, offset in the body)], the distinct
    addresses to free, in order, whether the body lies in the server's own memory (on a peer
    connection) rather than in segments, base). base: (segment id, segment offset of the body's
    byte 0) when every non-empty region lies in one segment at its place in the body, so the body
    is one slice of it; None when no region has bytes; False otherwise. Every rule broken raises
    ArrowInvalid naming sequence `seq`. One call per body on the client's path."""
    cdef Py_ssize_t np = len(pairs), ns = len(spans), i, nonempty = 0, in_segments = 0
    cdef uint64_t address, n, lengths_sum = 0, padding
    cdef int64_t off, span_len, dest = 0
    cdef bint saturated = False, scattered = False
    cdef uint64_t base_seg = 0
    cdef int64_t base_off = 0, here
    cdef list placed = []
    for i in range(np):
        n = pairs[i][1]
        if n > 0xFFFFFFFFFFFFFFFF - lengths_sum:
            saturated = True
            lengths_sum = 0xFFFFFFFFFFFFFFFF
        else:
            lengths_sum += n
    if total != <uint64_t>length and (saturated or total != lengths_sum):
        raise ArrowInvalid(f"type-1 body of sequence {seq} declares a total of {total} bytes; "
                           f"expected the metadata's body length {length} (or the sum of its "
                           f"buffer lengths, {sum([p[1] for p in pairs])})")
    if np == ns:
        for i in range(np):
            address, n = pairs[i]
            off, span_len = spans[i]
            if span_len < 0 or n != <uint64_t>span_len:
                raise ArrowInvalid(f"type-1 body of sequence {seq}: buffer {i} has length {n} "
                                   f"but the metadata's buffer {i} has {span_len}")
            if off < 0 or off > length or span_len > length - off:
                raise ArrowInvalid(f"sequence {seq}: metadata buffer {i} spans [{off}, "
                                   f"{off}+{span_len}) outside the {length}-byte body")
            placed.append((address, n, off))
        padding = MAX_PADDING_PER_BUFFER * (<uint64_t>ns + 1)
        if lengths_sum < <uint64_t>length and <uint64_t>length - lengths_sum > padding:
            raise ArrowInvalid(f"type-1 body of sequence {seq}: its {np} regions bring "
                               f"{lengths_sum} bytes of a {length}-byte body; expected at most "
                               f"{padding} bytes of padding between them "
                               f"({MAX_PADDING_PER_BUFFER} per buffer), found "
                               f"{<uint64_t>length - lengths_sum}")
    else:
        if saturated or lengths_sum != <uint64_t>length:
            raise ArrowInvalid(f"type-1 body of sequence {seq}: {np} regions (not one per "
                               f"metadata buffer, {ns}) must add up to the body length {length}; "
                               f"they add up to {sum([p[1] for p in pairs])}")
        for i in range(np):
            address, n = pairs[i]
            placed.append((address, n, dest))
            dest += <int64_t>n               # the regions add up to length: no overflow
    addresses = list(dict.fromkeys([p[0] for p in pairs]))
    for i in range(np):
        address, n, off = placed[i]
        if n == 0:
            continue
        nonempty += 1
        if (address >> _SEGMENT_SHIFT) >= _PEER_SEGMENT_BASE:
            in_segments += 1
        here = <int64_t>(address & ((<uint64_t>1 << _SEGMENT_SHIFT) - 1)) - off
        if nonempty == 1:
            base_seg, base_off = address >> _SEGMENT_SHIFT, here
        elif base_seg != address >> _SEGMENT_SHIFT or base_off != here:
            scattered = True
    in_peer = False
    if peer:
        # a peer connection: small bodies come in segments (ids from PEER_SEGMENT_BASE), the
        # others from the server's own memory; one body is all one or all the other
        if in_segments and in_segments != nonempty:
            raise ArrowInvalid(f"type-1 body of sequence {seq} mixes addresses in the server's "
                               f"memory with addresses in shared segments")
        in_peer = in_segments == 0
    if nonempty == 0:
        base = None
    elif scattered:
        base = False
    else:
        base = (base_seg, base_off)
    return placed, addresses, in_peer, base
