from libc.stdint cimport uint8_t, uint16_t, int16_t, uint32_t, int32_t, int64_t
from libc.string cimport memcpy
from arrowipc._core.buffer cimport Buffer

cdef class Extent:
    cdef int64_t lo, hi
    cdef inline void add(self, int64_t start, int64_t end) noexcept:
        if start < self.lo:
            self.lo = start
        if end > self.hi:
            self.hi = end

cdef class FlatTable:
    cdef readonly Buffer buf
    cdef readonly int64_t pos
    cdef int64_t vt_pos
    cdef int64_t vt_size
    cdef int64_t inline_size
    cdef int depth
    cdef str what
    cdef Extent extent          # None unless the table records what is read (recording())
    cdef int64_t field_pos(self, int slot)
    cdef int64_t scalar_pos(self, int slot, int width) except -2
    cdef int64_t get_i64(self, int slot, int64_t default) except? -0x7fffffffffffffff
    cdef int32_t get_i32(self, int slot, int32_t default) except? -0x7fffffff
    cdef int16_t get_i16(self, int slot, int16_t default) except? -0x7fff
    cdef int get_u8(self, int slot, int default) except -1
    cdef int64_t deref(self, int slot) except -2
    cdef int64_t vector_at(self, int slot, int64_t elem_size, int64_t* count) except -2

cdef FlatTable table_at(Buffer buf, int64_t pos, str what, int depth, Extent extent=*)
cpdef FlatTable root_table(object data, str what=*)

# Unaligned little-endian reads, defined here so every module that cimports them inlines them.
cdef inline uint32_t rd_u32(const uint8_t* p) noexcept nogil:
    cdef uint32_t v
    memcpy(&v, p, 4)
    return v


cdef inline int64_t rd_i64(const uint8_t* p) noexcept nogil:
    cdef int64_t v
    memcpy(&v, p, 8)
    return v


cdef inline int32_t rd_i32(const uint8_t* p) noexcept nogil:
    cdef int32_t v
    memcpy(&v, p, 4)
    return v


cdef inline uint16_t rd_u16(const uint8_t* p) noexcept nogil:
    cdef uint16_t v
    memcpy(&v, p, 2)
    return v
