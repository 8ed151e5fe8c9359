from libc.stdint cimport int64_t
from arrowipc._core.buffer cimport Buffer
from arrowipc.ipc._flatbuf cimport FlatTable

cdef class Message:
    cdef readonly Buffer metadata
    """The raw Message flatbuffer."""
    cdef public Buffer body
    """The message body (None until read)."""
    cdef readonly int header_type
    """The header's type id (see arrowipc.ipc.format.HEADER_NAMES)."""
    cdef readonly int version
    """The metadata version number (4 for V4, 5 for V5)."""
    cdef readonly int64_t body_length
    """The body's length in bytes, as the header states it."""
    cdef readonly int64_t offset
    """Where the message starts in its stream or file (-1 when unknown)."""
    cdef readonly FlatTable header
    """The header table (Schema, RecordBatch or DictionaryBatch)."""
    cdef readonly int legacy_codec
    """The codec of Arrow 0.17's experimental body compression (0: LZ4_FRAME, 1: ZSTD), named in
    a V4 batch message's custom metadata; -1 when the body is not compressed that way."""
    cdef FlatTable _table
    cdef object _custom_metadata
    cdef bint _custom_decoded

cpdef tuple check_block(tuple block, Py_ssize_t i, str what, int64_t limit)
cpdef Message decode_message(object metadata, int64_t offset=*)
cpdef tuple read_frame(Buffer buf, int64_t pos, int64_t end, int64_t max_metadata, str where,
                       bint with_body=*, int64_t base=*)
