# The bit and bounds helpers the selection kernels share with the cast kernels (cast_kernels.pyx):
# inline bit access, and the two checks every kernel makes before it forms a pointer into a buffer.
from libc.stdint cimport uint8_t, int64_t

from arrowipc._core.buffer cimport Buffer, mutable_data
from arrowipc._core.arraydata cimport ArrayData


cdef inline bint get_bit(const uint8_t* p, int64_t i) noexcept nogil:
    return (p[i >> 3] >> (i & 7)) & 1


cdef inline void set_bit(uint8_t* p, int64_t i) noexcept nogil:
    p[i >> 3] |= <uint8_t>(1 << (i & 7))


cdef inline uint8_t byte_at(const uint8_t* p, int64_t bit) noexcept nogil:
    # the 8 bits from `bit` on; the caller guarantees bits [bit, bit + 8) exist
    cdef int shift = bit & 7
    cdef const uint8_t* q = p + (bit >> 3)
    if shift == 0:
        return q[0]
    return <uint8_t>((q[0] >> shift) | (q[1] << (8 - shift)))


cdef inline object buffer_at(ArrayData d, int i):
    return d.buffers[i] if len(d.buffers) > i else None


cdef inline uint8_t* out_ptr(Buffer b):
    return mutable_data(b)


# The address of elements [start, start + count) of `width` bytes of a buffer, checked to exist
# (ArrowInvalid naming `what` otherwise); NULL for an absent buffer holding nothing.
cdef const uint8_t* checked(object buf, int64_t start, int64_t count, int64_t width,
                            str what) except? NULL
# The bytes of a bitmap whose bits [offset, offset + length) are checked to exist; NULL for None.
cdef const uint8_t* checked_bits(object buf, int64_t offset, int64_t length,
                                 str what) except? NULL
