# cython: language_level=3
"""Zero-copy buffers.

A Buffer is a pointer, a size and an owner. Views of input bytes (bytes, mmap, memoryview) hold a
Py_buffer on the input through a `_PyBufferOwner`; allocations (decompression, re-alignment, bitmap
shifts, packing) are 64-byte aligned and freed by an `_AlignedAllocation` when the last view dies.
A zero-length buffer never exposes a NULL pointer.
"""
cimport cython
from cpython.buffer cimport PyObject_GetBuffer, PyBuffer_Release, PyBUF_SIMPLE, PyBUF_WRITABLE, PyBUF_ANY_CONTIGUOUS
from libc.stdint cimport uint8_t, int64_t, uintptr_t
from libc.stdlib cimport free, malloc
from libc.string cimport memset, memcmp, memcpy

from arrowipc._core.kernels cimport arrowipc_gather

from arrowipc.errors import ArrowInvalid, ArrowCapacityError

cdef extern from "stdlib.h" nogil:
    int posix_memalign(void** memptr, size_t alignment, size_t size)

# Exported for zero-length buffers: aligned, never NULL, never written.
cdef uint8_t[128] _ZERO_BYTES
memset(_ZERO_BYTES, 0, 128)
cdef const uint8_t* ZERO_PTR = <const uint8_t*>(((<uintptr_t>_ZERO_BYTES) + 63) & ~(<uintptr_t>63))

cdef int64_t _live_allocations = 0   # number of _AlignedAllocation alive; tests assert it returns to 0


@cython.no_gc
cdef class _PyBufferOwner:
    """Holds a Py_buffer on an exporter for as long as some Buffer points into it."""
    cdef Py_buffer view
    cdef bint held

    def __dealloc__(self):
        if self.held:
            PyBuffer_Release(&self.view)
            self.held = False

    @property
    def obj(self):
        if self.held and self.view.obj is not None:
            return self.view.obj
        return None


# Recently freed large blocks, kept for reuse: writing into fresh pages costs a page fault and a
# kernel page clear per 4 KiB, which dominates large sequential writes (decompression, packing).
# Blocks idle for longer than POOL_IDLE_SECONDS go back to the system at the next pool call.
DEF POOL_MIN_BLOCK = 1 << 20
DEF POOL_SLOTS = 64
DEF POOL_IDLE_SECONDS = 10
cdef int64_t POOL_MAX_BYTES = (<int64_t>1) << 30
cdef void* _pool_ptr[POOL_SLOTS]
cdef int64_t _pool_cap[POOL_SLOTS]
cdef int64_t _pool_since[POOL_SLOTS]      # monotonic seconds at which the block was pooled
cdef int64_t _pool_bytes = 0
# Blocks this large are aligned to, and advised as, transparent huge pages: a 2 MiB page is one
# fault instead of 512.
DEF HUGE_PAGE = 1 << 21
DEF HUGE_BLOCK_MIN = 1 << 22

cdef extern from "time.h" nogil:
    ctypedef long time_t
    struct timespec:
        time_t tv_sec
        long tv_nsec
    int clock_gettime(int clk_id, timespec* tp)
    int CLOCK_MONOTONIC_COARSE

cdef extern from "sys/mman.h" nogil:
    int madvise(void* addr, size_t length, int advice)
    int MADV_HUGEPAGE


cdef inline int64_t _now() noexcept:
    cdef timespec ts
    clock_gettime(CLOCK_MONOTONIC_COARSE, &ts)
    return ts.tv_sec


cdef void _pool_drop(int i) noexcept:
    global _pool_bytes
    free(_pool_ptr[i])
    _pool_bytes -= _pool_cap[i]
    _pool_ptr[i] = NULL


cdef void _pool_expire(int64_t now) noexcept:
    cdef int i
    for i in range(POOL_SLOTS):
        if _pool_ptr[i] != NULL and now - _pool_since[i] > POOL_IDLE_SECONDS:
            _pool_drop(i)


cdef void* pool_take(int64_t capacity) noexcept:
    """A cached block of at least `capacity` bytes (and at most twice that), or NULL."""
    global _pool_bytes
    cdef int i, best = -1
    if _pool_bytes == 0:
        return NULL
    _pool_expire(_now())
    for i in range(POOL_SLOTS):
        if _pool_ptr[i] != NULL and capacity <= _pool_cap[i] <= 2 * capacity:
            if best < 0 or _pool_cap[i] < _pool_cap[best]:
                best = i
    if best < 0:
        return NULL
    cdef void* p = _pool_ptr[best]
    _pool_ptr[best] = NULL
    _pool_bytes -= _pool_cap[best]
    return p


cdef void pool_give(void* p, int64_t capacity) noexcept:
    """Keep a freed block for reuse, evicting the oldest; free it when it does not fit."""
    global _pool_bytes
    cdef int i, victim = -1
    cdef int64_t now
    if capacity < POOL_MIN_BLOCK or capacity > POOL_MAX_BYTES:
        free(p)
        return
    now = _now()
    _pool_expire(now)
    for i in range(POOL_SLOTS):
        if _pool_ptr[i] == NULL:
            victim = i
            break
        if victim < 0 or _pool_since[i] < _pool_since[victim]:
            victim = i
    if _pool_ptr[victim] != NULL:
        _pool_drop(victim)
    # make room by dropping the oldest blocks
    while _pool_bytes + capacity > POOL_MAX_BYTES:
        i = -1
        for victim in range(POOL_SLOTS):
            if _pool_ptr[victim] != NULL and (i < 0 or _pool_since[victim] < _pool_since[i]):
                i = victim
        if i < 0:
            break
        _pool_drop(i)
    for i in range(POOL_SLOTS):
        if _pool_ptr[i] == NULL:
            _pool_ptr[i] = p
            _pool_cap[i] = capacity
            _pool_since[i] = now
            _pool_bytes += capacity
            return
    free(p)


def release_pooled_memory():
    """Return every cached block to the system."""
    for i in range(POOL_SLOTS):
        if _pool_ptr[i] != NULL:
            _pool_drop(i)


def pooled_bytes():
    """Bytes of freed blocks kept for reuse."""
    return _pool_bytes


@cython.no_gc
cdef class _AlignedAllocation:
    """Memory arrowipc allocated itself (64-byte aligned)."""
    cdef void* ptr
    cdef int64_t size
    cdef int64_t capacity

    def __dealloc__(self):
        global _live_allocations
        if self.ptr != NULL:
            pool_give(self.ptr, self.capacity)
            self.ptr = NULL
            _live_allocations -= 1


def live_allocations():
    """How many arrowipc-owned allocations are alive (for leak tests)."""
    return _live_allocations


@cython.no_gc
cdef class Buffer:
    """A contiguous, immutable (unless allocated by us) range of bytes that keeps its owner alive."""

    def __cinit__(self):
        self.ptr = ZERO_PTR
        self.size = 0
        self.base = None
        self.writable = False
        self._exports = 0

    def __init__(self, *args):
        if args:
            raise TypeError("use arrowipc.py_buffer(obj) or arrowipc.allocate_buffer(size)")

    @property
    def size(self):
        """The number of bytes."""
        return self.size

    @property
    def address(self):
        """The address of the first byte, as an int."""
        return <uintptr_t>self.ptr

    @property
    def is_mutable(self):
        """Whether the bytes may be written (only buffers arrowipc allocated)."""
        return bool(self.writable)

    def __len__(self):
        return self.size

    def __bool__(self):
        return True

    def slice(self, int64_t offset=0, length=None):
        """A zero-copy view of [offset, offset + length) of this buffer (bounds-checked)."""
        cdef int64_t n
        if offset < 0 or offset > self.size:
            raise ArrowInvalid(f"slice offset {offset} outside buffer of {self.size} bytes")
        n = self.size - offset if length is None else <int64_t>length
        if n < 0 or n > self.size - offset:
            raise ArrowInvalid(f"slice [{offset}, {offset}+{n}) outside buffer of {self.size} bytes")
        return slice_unchecked(self, offset, n)

    def to_pybytes(self):
        """The contents as a new bytes object (a copy)."""
        return (<char*>self.ptr)[:self.size] if self.size else b""

    def equals(self, other):
        """Whether `other` (a Buffer or any bytes-like object) holds the same bytes."""
        cdef Buffer o = other if isinstance(other, Buffer) else py_buffer(other)
        return o.size == self.size and (self.size == 0 or memcmp(o.ptr, self.ptr, self.size) == 0)

    def __eq__(self, other):
        try:
            return self.equals(other)
        except TypeError:
            return NotImplemented

    def __hash__(self):
        return hash(self.to_pybytes())

    def __repr__(self):
        return f"<arrowipc.Buffer address=0x{<uintptr_t>self.ptr:x} size={self.size}>"

    def __getbuffer__(self, Py_buffer* view, int flags):
        if (flags & PyBUF_WRITABLE) and not self.writable:
            raise BufferError("arrowipc.Buffer is read-only")
        self._shape[0] = <Py_ssize_t>self.size
        self._strides[0] = 1
        view.buf = <void*>self.ptr
        view.obj = self
        view.len = <Py_ssize_t>self.size
        view.readonly = 0 if self.writable else 1
        view.itemsize = 1
        view.format = "B"
        view.ndim = 1
        view.shape = self._shape
        view.strides = self._strides
        view.suboffsets = NULL
        view.internal = NULL
        self._exports += 1

    def __releasebuffer__(self, Py_buffer* view):
        self._exports -= 1


cdef Buffer wrap_pointer(const uint8_t* ptr, int64_t size, object base, bint writable=False):
    cdef Buffer b = Buffer.__new__(Buffer)
    b.ptr = ptr if (ptr != NULL and size > 0) else ZERO_PTR
    b.size = size
    b.base = base
    b.writable = writable
    return b


cdef object root_exporter(Buffer buf):
    """The object whose memory `buf` views (bytes, an mmap, another library's buffer), following
    the owner chain; an allocation of ours for the memory we allocated."""
    cdef object owner = buf.base
    cdef int hops
    for hops in range(64):                  # chains are a level or two deep: a bound, not a limit
        if isinstance(owner, Buffer):
            owner = (<Buffer>owner).base
        elif isinstance(owner, _PyBufferOwner):
            owner = (<_PyBufferOwner>owner).obj
        else:
            break
    return owner


def exporter_of(Buffer buf):
    """The object whose memory `buf` views (see root_exporter)."""
    return root_exporter(buf)


cdef Buffer slice_unchecked(Buffer parent, int64_t offset, int64_t length):
    # Slices point at the parent's owner, never at the parent, so chains stay one level deep.
    cdef object owner = parent.base if parent.base is not None else parent
    return wrap_pointer(parent.ptr + offset, length, owner, parent.writable)


cpdef Buffer py_buffer(object obj):
    """A zero-copy Buffer over any object that supports the buffer protocol (C-contiguous)."""
    if isinstance(obj, Buffer):
        return <Buffer>obj
    cdef _PyBufferOwner owner = _PyBufferOwner.__new__(_PyBufferOwner)
    PyObject_GetBuffer(obj, &owner.view, PyBUF_SIMPLE | PyBUF_ANY_CONTIGUOUS)
    owner.held = True
    return wrap_pointer(<const uint8_t*>owner.view.buf, owner.view.len, owner, False)


# No single allocation may exceed this unless the caller raises the limit (untrusted sizes).
cdef int64_t MAX_ALLOCATION = (<int64_t>1) << 40


cpdef Buffer allocate(int64_t size, bint zero=True):
    """A new 64-byte-aligned, writable buffer owned by arrowipc."""
    global _live_allocations
    cdef void* p = NULL
    if size < 0 or size > MAX_ALLOCATION:
        raise ArrowCapacityError(f"refusing to allocate {size} bytes (limit {MAX_ALLOCATION})")
    if size == 0:
        return wrap_pointer(NULL, 0, None, True)
    cdef int64_t capacity = (size + 63) & ~63
    if capacity >= POOL_MIN_BLOCK:
        p = pool_take(capacity)
    if p == NULL:
        if capacity >= HUGE_BLOCK_MIN:
            if posix_memalign(&p, HUGE_PAGE, <size_t>capacity) != 0 or p == NULL:
                raise MemoryError(f"cannot allocate {size} bytes")
            madvise(p, <size_t>(capacity & ~(<int64_t>HUGE_PAGE - 1)), MADV_HUGEPAGE)
        elif posix_memalign(&p, 64, <size_t>capacity) != 0 or p == NULL:
            raise MemoryError(f"cannot allocate {size} bytes")
    if zero:
        memset(p, 0, <size_t>capacity)
    else:
        # Zero the tail padding so written padding is deterministic.
        memset(<uint8_t*>p + (size & ~63), 0, <size_t>(capacity - (size & ~63)))
    cdef _AlignedAllocation a = _AlignedAllocation.__new__(_AlignedAllocation)
    a.ptr = p
    a.size = size
    a.capacity = capacity
    _live_allocations += 1
    return wrap_pointer(<const uint8_t*>p, size, a, True)


# Gathers at least this large are copied by two threads (one memcpy stream does not saturate
# the memory bus; a large getvalue() or concatenation is otherwise a serial tail).
DEF PARALLEL_GATHER_BYTES = 16 << 20


def concat_buffers(list parts, int64_t total):
    """One aligned Buffer holding the parts back to back (a single gather copy, GIL released)."""
    cdef Buffer out = allocate(total, False)
    cdef Py_ssize_t n = len(parts), i
    cdef int64_t pos = 0
    cdef list held = [py_buffer(part) for part in parts]    # keeps every source alive
    cdef Buffer b
    cdef const uint8_t** srcs = <const uint8_t**>malloc(sizeof(uint8_t*) * (n + 1))
    cdef int64_t* sizes = <int64_t*>malloc(sizeof(int64_t) * (n + 1))
    cdef int threads = 2 if total >= PARALLEL_GATHER_BYTES else 1
    try:
        if srcs == NULL or sizes == NULL:
            raise MemoryError()
        for i in range(n):
            b = held[i]
            if b.size > total - pos:
                raise ValueError("parts are larger than the declared total")
            srcs[i] = b.ptr
            sizes[i] = b.size
            pos += b.size
        if pos != total:
            raise ValueError(f"parts hold {pos} bytes, expected {total}")
        with nogil:
            arrowipc_gather(<uint8_t*>out.ptr, srcs, sizes, n, threads)
    finally:
        free(srcs)
        free(sizes)
    return out


cdef uint8_t* mutable_data(Buffer buf) except NULL:
    if not buf.writable:
        raise BufferError("buffer is read-only")
    return <uint8_t*>buf.ptr


def allocate_buffer(int64_t size, bint zero=True):
    """A new mutable, 64-byte-aligned Buffer of `size` bytes (zeroed unless `zero=False`)."""
    return allocate(size, zero)

