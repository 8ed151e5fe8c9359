# cython: language_level=3
"""The physical node of the columnar model: type, length, offset, null count, buffers, children.

Arrays, record batches and the C data interface are all views over ArrayData; the IPC reader builds
it straight from a message body and the writer flattens it back.
"""
cimport cython
from libc.stdint cimport int64_t

from arrowipc._core.kinds cimport K_FIXED_SIZE_LIST, K_LARGE_LIST, K_LIST, K_NULL
from arrowipc.errors import ArrowIndexError


@cython.no_gc
cdef class ArrayData:
    def __init__(self, type, int64_t length, int64_t offset=0, int64_t null_count=-1,
                 list buffers=None, list children=None, dictionary=None):
        self.type = type
        self.length = length
        self.offset = offset
        self.null_count = null_count
        self.buffers = buffers if buffers is not None else []
        self.children = children if children is not None else []
        self.dictionary = dictionary

    def copy_with(self, **changes):
        """A shallow copy with some attributes replaced."""
        cdef ArrayData d = make_array_data(self.type, self.length, self.offset, self.null_count,
                                           list(self.buffers), list(self.children), self.dictionary)
        for k, v in changes.items():
            setattr(d, k, v)
        return d

    def slice(self, int64_t offset=0, length=None):
        """A zero-copy view of `length` rows (to the end by default) from `offset`, which is
        relative to this array's own offset; both are clamped to the rows there are, as
        Array.slice does. Buffers, children and dictionary are shared. The view's null count is 0
        when this array has no null, its length for the null type, else -1 (counted on demand)."""
        cdef int64_t n = self.length
        cdef int64_t count
        if offset < 0:
            raise ArrowIndexError(f"slice offset must be >= 0, got {offset}")
        if offset > n:
            offset = n
        count = n - offset if length is None else max(0, min(<int64_t>length, n - offset))
        cdef int64_t null_count = 0
        if self.null_count != 0:
            null_count = count if self.type.kind == K_NULL else -1
        return make_array_data(self.type, count, self.offset + offset, null_count,
                               self.buffers, self.children, self.dictionary)

    def list_values(self):
        """The child values the rows of this list, large list or fixed-size list array refer to
        (what Array.flatten gives), zero-copy; the offsets read are bounds-checked."""
        from arrowipc._core.offsets import read_offset_pair
        cdef int kind = self.type.kind
        cdef ArrayData child = self.children[0]
        if kind == K_FIXED_SIZE_LIST:
            size = self.type.list_size
            return child.slice(self.offset * size, self.length * size)
        if kind != K_LIST and kind != K_LARGE_LIST:
            raise TypeError(f"list_values() needs a list, large list or fixed-size list array, "
                            f"not {self.type}")
        first, last = read_offset_pair(self.buffers[1], self.offset, self.length,
                                       4 if kind == K_LIST else 8)
        return child.slice(first, last - first)

    def with_type(self, type):
        """The same rows, buffers, children and dictionary labelled with another type of the same
        layout (an extension type and its storage, a timestamp and another unit's zone...)."""
        return make_array_data(type, self.length, self.offset, self.null_count, self.buffers,
                               self.children, self.dictionary)

    def __repr__(self):
        return (f"ArrayData(type={self.type}, length={self.length}, offset={self.offset}, "
                f"null_count={self.null_count}, buffers={len(self.buffers)}, "
                f"children={len(self.children)})")

    def __reduce__(self):
        raise TypeError("ArrayData is not picklable; write it with arrowipc.ipc instead")


cdef extern from "Python.h":
    int PyObject_GC_IsTracked(object o)
    void PyObject_GC_UnTrack(void* o)


cdef void untrack(object container) noexcept:
    if PyObject_GC_IsTracked(container):
        PyObject_GC_UnTrack(<void*>container)


def untrack_acyclic(obj):
    """Leave `obj`, which can never be part of a reference cycle, out of the cyclic GC."""
    untrack(obj)


cdef class RecordBatchFields:
    """The fields of arrowipc.table.RecordBatch, declared in arraydata.pxd; the class adds the
    behaviour. Not made directly."""


cdef ArrayData make_array_data(object type, int64_t length, int64_t offset, int64_t null_count,
                               list buffers, list children, object dictionary):
    """An ArrayData over `buffers` (Buffer or None) and `children` (ArrayData); both lists are
    left out of the cyclic GC (see untrack)."""
    cdef ArrayData d = ArrayData.__new__(ArrayData)
    untrack(buffers)
    untrack(children)
    d.type = type
    d.length = length
    d.offset = offset
    d.null_count = null_count
    d.buffers = buffers
    d.children = children
    d.dictionary = dictionary
    return d


from arrowipc._core.buffer cimport Buffer, root_exporter


def views_memory_of(ArrayData d, type owner_type):
    """Whether a buffer of `d`, of its children or of its dictionary views memory exported by
    an instance of `owner_type` (mmap.mmap: a shared mapping of a file)."""
    cdef object b
    cdef ArrayData c
    for b in d.buffers:
        if isinstance(b, Buffer) and isinstance(root_exporter(<Buffer>b), owner_type):
            return True
    for c in d.children:
        if views_memory_of(c, owner_type):
            return True
    return d.dictionary is not None and views_memory_of(d.dictionary, owner_type)
