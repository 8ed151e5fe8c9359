# cython: language_level=3
"""Validity bitmaps: counting, packing, unpacking and re-basing to bit 0, with the GIL released."""
from libc.stdint cimport uint8_t, int64_t

from arrowipc._core.buffer cimport Buffer, allocate, py_buffer, mutable_data
from arrowipc._core.kernels cimport (arrowipc_count_set_bits, arrowipc_copy_bits,
                                     arrowipc_pack_bools, arrowipc_unpack_bits,
                                     arrowipc_copy_bits_to)
from arrowipc.errors import ArrowInvalid


cdef inline int check_bits(Buffer buf, int64_t offset, int64_t length, str what) except -1:
    # Bits [offset, offset + length) must lie inside the buffer; written so it cannot overflow.
    if offset < 0 or length < 0:
        raise ArrowInvalid(f"{what}: negative offset {offset} or length {length}")
    if length == 0:
        return 0
    if offset > buf.size * 8 or length > buf.size * 8 - offset:
        raise ArrowInvalid(f"{what}: bits [{offset}, {offset}+{length}) need "
                           f"{(offset + length + 7) // 8} bytes but the bitmap has {buf.size}")
    return 0


cpdef int64_t count_set_bits(Buffer buf, int64_t offset, int64_t length) except -1:
    """Number of set bits in [offset, offset + length)."""
    check_bits(buf, offset, length, "bitmap")
    cdef int64_t n
    with nogil:
        n = arrowipc_count_set_bits(buf.ptr, offset, length)
    return n


cpdef Buffer copy_bitmap(Buffer buf, int64_t offset, int64_t length):
    """The bits [offset, offset + length) as a new bitmap starting at bit 0 (tail bits zeroed)."""
    check_bits(buf, offset, length, "bitmap")
    cdef Buffer out = allocate((length + 7) // 8, False)
    cdef uint8_t* dst = mutable_data(out) if out.size else NULL
    if length:
        with nogil:
            arrowipc_copy_bits(buf.ptr, offset, length, dst)
    return out


cpdef Buffer bitmap_view(Buffer buf, int64_t offset, int64_t length):
    """The bitmap for [offset, offset + length) starting at bit 0: a zero-copy slice when the
    offset is a whole number of bytes, a shifted copy otherwise."""
    check_bits(buf, offset, length, "bitmap")
    if offset % 8 == 0:
        return buf.slice(offset // 8, (length + 7) // 8)
    return copy_bitmap(buf, offset, length)


def pack_bools(values):
    """(bitmap Buffer, number of set bits) from a buffer of bytes where non-zero means true."""
    cdef Buffer src = py_buffer(values)
    cdef int64_t n = src.size
    cdef Buffer out = allocate((n + 7) // 8, False)
    cdef int64_t count = 0
    cdef uint8_t* dst = mutable_data(out) if out.size else NULL
    if n:
        with nogil:
            count = arrowipc_pack_bools(src.ptr, n, dst)
    return out, count


def unpack_bits(Buffer buf, int64_t offset, int64_t length):
    """bytes of 0/1, one per bit in [offset, offset + length)."""
    check_bits(buf, offset, length, "bitmap")
    cdef bytearray out = bytearray(length)
    cdef uint8_t* dst = <uint8_t*>(<char*>out) if length else NULL
    if length:
        with nogil:
            arrowipc_unpack_bits(buf.ptr, offset, length, dst)
    return bytes(out)


def concat_bitmaps(list parts, int64_t total):
    """One bitmap of `total` bits from (bitmap Buffer or None meaning all set, bit offset, length)
    parts laid back to back from bit 0."""
    cdef Buffer out = allocate((total + 7) // 8, True)
    cdef uint8_t* dst = mutable_data(out) if out.size else NULL
    cdef int64_t pos = 0, off, n
    cdef Buffer src
    cdef const uint8_t* sp
    for buf, off, n in parts:
        if n > total - pos:
            raise ArrowInvalid(f"bitmap parts hold more than the {total} bits declared")
        sp = NULL
        if buf is not None:
            src = buf
            check_bits(src, off, n, "bitmap")
            sp = src.ptr
        with nogil:
            arrowipc_copy_bits_to(sp, off, dst, pos, n)
        pos += n
    return out
