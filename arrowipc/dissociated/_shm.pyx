# cython: language_level=3
"""Shared-memory mappings for Dissociated IPC type-1 bodies.

A Mapping is one mmap'ed segment file (a sealed memfd, or a named file under /dev/shm): read-write
on the server, which copies body buffers into it, read-only on the client, which copies bodies
out of it (copy) or, for a segment nobody can write any more, hands out zero-copy views whose
owner keeps the mapping alive (view). Copies run without the GIL.
"""
from libc.stdint cimport uint8_t, int64_t, uint64_t
from libc.string cimport memcpy

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

DEF PEER_PROBE_ABOVE = 256 << 20      # bodies larger than this are probed before allocating
DEF PEER_PARALLEL_BYTES = 8 << 20     # bodies from this size are read by two threads

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


def scatter_copy(int64_t total, list regions):
    """A new zeroed aligned Buffer of `total` bytes with each (source Buffer, destination offset)
    copied in; every region is bounds-checked against `total`."""
    cdef Buffer out = allocate(total, True)
    cdef Buffer src
    cdef int64_t dest, n
    cdef uint8_t* dst = <uint8_t*>out.ptr
    for source, dest in regions:
        src = py_buffer(source)
        n = src.size
        if dest < 0 or n > total or dest > total - n:
            raise ArrowInvalid(f"{n} bytes at body offset {dest} do not fit in a {total}-byte body")
        with nogil:
            memcpy(dst + dest, src.ptr, <size_t>n)
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
        if total > PEER_PROBE_ABOVE:
            # a large claim: the peer must map the last byte of every region before we allocate
            probes = <arrowipc_peer_region*>malloc(sizeof(arrowipc_peer_region) * (n + 1))
            probe = <uint8_t*>malloc(<size_t>n + 1)
            if probes == NULL or probe == NULL:
                raise MemoryError()
            for i in range(n):
                probes[i].address = wanted[i].address + <uint64_t>wanted[i].length - 1 \
                    if wanted[i].length else wanted[i].address
                probes[i].length = 1 if wanted[i].length else 0
                probes[i].dest = i
            with nogil:
                got = arrowipc_peer_read(pid, probes, n, probe, 1)
        if got >= 0:
            out = allocate(total, covered != total)
            with nogil:
                got = arrowipc_peer_read(pid, wanted, n, <uint8_t*>out.ptr, threads)
    finally:
        free(wanted)
        free(probes)
        free(probe)
    if got < 0:
        # EFAULT also stands for a short read: the peer does not map all of a region
        raise ArrowInvalid(f"reading {covered} bytes from the memory of process {pid} failed: "
                           f"{_os.strerror(<int>-got)}")
    return out
