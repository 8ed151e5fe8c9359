# Buffers: (pointer, size, owner). The owner keeps the memory alive for as long as any view,
# array, batch or exported capsule refers to the buffer.
from libc.stdint cimport uint8_t, int64_t

cdef class Buffer:
    cdef const uint8_t* ptr
    cdef int64_t size
    cdef readonly object base      # the object that keeps `ptr` alive (a Buffer or an owner)
    """The object that keeps the memory alive (a Buffer, bytes, an mmap or an allocation)."""
    cdef bint writable
    cdef Py_ssize_t _shape[1]
    cdef Py_ssize_t _strides[1]
    cdef int _exports

cdef Buffer wrap_pointer(const uint8_t* ptr, int64_t size, object base, bint writable=*)
cdef Buffer slice_unchecked(Buffer parent, int64_t offset, int64_t length)
cdef object root_exporter(Buffer buf)
cpdef Buffer py_buffer(object obj)
cpdef Buffer allocate(int64_t size, bint zero=*)
cdef uint8_t* mutable_data(Buffer buf) except NULL
