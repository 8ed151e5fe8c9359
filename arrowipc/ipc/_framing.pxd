from libc.stdint cimport int64_t
from arrowipc._core.buffer cimport Buffer
from arrowipc.ipc._flatbuf cimport FlatTable

cdef class Message:
    cdef readonly Buffer metadata
    cdef public Buffer body
    cdef readonly int header_type
    cdef readonly int version
    cdef readonly int64_t body_length
    cdef readonly int64_t offset
    cdef readonly FlatTable header
    cdef FlatTable _table
    cdef object _custom_metadata
    cdef bint _custom_decoded

cpdef Message decode_message(object metadata, int64_t offset=*)
cpdef tuple read_frame(Buffer buf, int64_t pos, int64_t end, int64_t max_metadata, str where,
                       bint with_body=*, int64_t base=*)
