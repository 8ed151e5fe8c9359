# cython: language_level=3
"""Zero-copy reads of local files that no other process can break: a mapping protected by a read
lease (Linux; cpp/arrowipc_leased_map.c does the work).

A plain shared mapping of a file lets another process kill ours (truncating the file: SIGBUS at
the next touch of a lost page) or change bytes after they were validated (rewriting it in place).
Under a read lease the kernel makes any process that opens the file for writing, or truncates it,
wait until our lease-break handler has copied the mapped bytes into private memory at the same
address (mremap): pointers into the mapping stay valid and keep the bytes they had. So a buffer
from map_leased is as safe as one we read, and needs no re-check on export.

map_leased gives None whenever no lease can be had (another process has the file open for
writing, a file we do not own without CAP_LEASE, a file system without leases such as NFS, no
/proc, not Linux, an empty file, or the table of mappings full: at most 4096 mappings, and at
most a quarter of the descriptor limit, as each holds a descriptor): the caller then reads a copy.
"""
from libc.stdint cimport uint8_t, int64_t

from arrowipc._core.buffer cimport Buffer, wrap_pointer

cdef extern from "arrowipc_leased_map.h" nogil:
    int ARROWIPC_LEASE_OK
    int arrowipc_leased_map_fd(int fd, int* slot, const uint8_t** data, int64_t* size, int* err)
    void arrowipc_leased_map_release(int slot)
    int arrowipc_leased_map_is_file_backed(int slot)
    int arrowipc_leased_map_live()
    int arrowipc_leased_map_signal()

# why the last map_leased call gave None (a code of arrowipc_leased_map.h, and its errno)
cdef int _last_code = 0
cdef int _last_errno = 0


cdef class LeasedMapping:
    """The owner of one leased mapping: unmaps it (and drops its lease) when the last buffer
    viewing it is freed."""
    cdef int slot
    cdef readonly int64_t size
    """The mapping's size in bytes (the file's size when mapped)."""

    def __cinit__(self):
        self.slot = -1
        self.size = 0

    def __init__(self, *args):
        raise TypeError("LeasedMapping is made by map_leased(fd)")

    def __dealloc__(self):
        cdef int slot = self.slot
        self.slot = -1
        if slot >= 0:
            with nogil:
                arrowipc_leased_map_release(slot)

    @property
    def file_backed(self):
        """Whether the mapping still views the file (False once a writer broke the lease and
        its bytes were copied into private memory)."""
        return self.slot >= 0 and arrowipc_leased_map_is_file_backed(self.slot) != 0


def map_leased(int fd):
    """The whole file open as `fd`, mapped read-only under a read lease of our own (a Buffer
    whose base is a LeasedMapping), or None when no lease can be had (read a copy then)."""
    global _last_code, _last_errno
    cdef int slot = -1, err = 0, code
    cdef const uint8_t* data = NULL
    cdef int64_t size = 0
    with nogil:
        code = arrowipc_leased_map_fd(fd, &slot, &data, &size, &err)
    _last_code, _last_errno = code, err
    if code != ARROWIPC_LEASE_OK:
        return None
    cdef LeasedMapping owner = LeasedMapping.__new__(LeasedMapping)
    owner.slot = slot
    owner.size = size
    return wrap_pointer(data, size, owner)


def last_lease_failure():
    """(code, errno) of the last map_leased call: (0, 0) when it mapped (codes: see
    cpp/arrowipc_leased_map.h; for diagnostics and tests)."""
    return (_last_code, _last_errno)


def live_leased_maps():
    """How many leased mappings are alive (for leak tests)."""
    return arrowipc_leased_map_live()


def lease_break_signal():
    """The real-time signal lease breaks are delivered by (0 where leases are unavailable)."""
    return arrowipc_leased_map_signal()
