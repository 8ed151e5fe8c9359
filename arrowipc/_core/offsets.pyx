# cython: language_level=3
"""Offset buffers: validation (monotonic, inside the data) and re-basing of sliced offsets."""
from libc.stdint cimport uint8_t, int32_t, int64_t

from arrowipc._core.buffer cimport Buffer, allocate, mutable_data
from arrowipc._core.kernels cimport (arrowipc_check_offsets32, arrowipc_check_offsets64,
                                     arrowipc_rebase_offsets32, arrowipc_rebase_offsets64,
                                     ARROWIPC_OFFSETS_NEGATIVE, ARROWIPC_OFFSETS_DECREASING)
from arrowipc.errors import ArrowInvalid


cdef inline int check_span(Buffer offsets, int64_t offset, int64_t length, int width, str where) except -1:
    # offsets[offset .. offset + length] (length + 1 values) must fit in the buffer.
    if offset < 0 or length < 0:
        raise ArrowInvalid(f"{where}: negative offset {offset} or length {length}")
    # overflow-safe: length + 1 would wrap for a length of 2**63 - 1
    if offset > offsets.size // width or length > offsets.size // width - offset - 1:
        raise ArrowInvalid(f"{where}: {<object>length + 1} offsets from index {offset} need "
                           f"{(<object>offset + length + 1) * width} bytes but the offsets buffer "
                           f"has {offsets.size}")
    return 0


def check_offsets(Buffer offsets, int64_t offset, int64_t length, int width, int64_t data_size,
                  str where="offsets"):
    """Validate offsets[offset .. offset + length]: non-negative, non-decreasing, last <= data_size.

    Returns (first, last). Raises ArrowInvalid naming the index of the first bad offset.
    """
    cdef int64_t bad = 0, first, last
    cdef int code
    if length == 0 and offsets.size == 0:
        return 0, 0          # a zero-length array may omit its offsets buffer entirely
    check_span(offsets, offset, length, width, where)
    if width == 4:
        with nogil:
            code = arrowipc_check_offsets32((<const int32_t*>offsets.ptr) + offset, length, data_size, &bad)
        first = (<const int32_t*>offsets.ptr)[offset]
        last = (<const int32_t*>offsets.ptr)[offset + length]
    else:
        with nogil:
            code = arrowipc_check_offsets64((<const int64_t*>offsets.ptr) + offset, length, data_size, &bad)
        first = (<const int64_t*>offsets.ptr)[offset]
        last = (<const int64_t*>offsets.ptr)[offset + length]
    if code == ARROWIPC_OFFSETS_NEGATIVE:
        raise ArrowInvalid(f"{where}: offset 0 is {first}, expected >= 0")
    if code == ARROWIPC_OFFSETS_DECREASING:
        raise ArrowInvalid(f"{where}: offsets must not decrease, but offset {bad} is less than offset {bad - 1}")
    if code != 0:
        raise ArrowInvalid(f"{where}: last offset {last} is beyond the end of the data ({data_size} bytes or values)")
    return first, last


def read_offset_pair(Buffer offsets, int64_t offset, int64_t length, int width):
    """(offsets[offset], offsets[offset + length]) after a bounds check of the span."""
    if length == 0 and offsets.size == 0:
        return 0, 0
    check_span(offsets, offset, length, width, "offsets")
    if width == 4:
        return (<const int32_t*>offsets.ptr)[offset], (<const int32_t*>offsets.ptr)[offset + length]
    return (<const int64_t*>offsets.ptr)[offset], (<const int64_t*>offsets.ptr)[offset + length]


def rebase_offsets(Buffer offsets, int64_t offset, int64_t length, int width):
    """(new offsets Buffer starting at 0, first, last) for offsets[offset .. offset + length].

    Zero-copy when the first offset already is 0.
    """
    first, last = read_offset_pair(offsets, offset, length, width)
    if offsets.size == 0:
        out = allocate(width, True)
        return out, 0, 0
    if first == 0:
        return offsets.slice(offset * width, (length + 1) * width), first, last
    cdef Buffer out2 = allocate((length + 1) * width, False)
    cdef uint8_t* dst = mutable_data(out2)
    cdef const uint8_t* src = offsets.ptr + offset * width
    if width == 4:
        with nogil:
            arrowipc_rebase_offsets32(<const int32_t*>src, length, 0, <int32_t*>dst)
    else:
        with nogil:
            arrowipc_rebase_offsets64(<const int64_t*>src, length, 0, <int64_t*>dst)
    return out2, first, last


def concat_offsets(list pieces, int width):
    """Offsets for several offset ranges laid back to back: pieces are (offsets Buffer, offset,
    length); returns (Buffer of sum(length) + 1 offsets, [(first, last)] per piece)."""
    cdef int64_t total = 0, base = 0, pos = 0, first, last, offset, length
    cdef list spans = []
    for offs, offset, length in pieces:
        first, last = read_offset_pair(offs, offset, length, width)
        if last < first:
            raise ArrowInvalid(f"offsets: last offset {last} is before the first {first}")
        spans.append((first, last))
        total += length
        base += last - first
    if width == 4 and base > 0x7fffffff:
        raise ArrowInvalid(f"concatenated data of {base} bytes overflows 32-bit offsets")
    cdef Buffer out = allocate((total + 1) * width, True)
    cdef uint8_t* dst = mutable_data(out)
    cdef Buffer b
    base = 0
    for (offs, offset, length), (first, last) in zip(pieces, spans):
        b = offs
        if length == 0:
            continue
        if width == 4:
            arrowipc_rebase_offsets32((<const int32_t*>b.ptr) + offset, length, <int32_t>base,
                                      (<int32_t*>dst) + pos)
        else:
            arrowipc_rebase_offsets64((<const int64_t*>b.ptr) + offset, length, base,
                                      (<int64_t*>dst) + pos)
        pos += length
        base += last - first
    if width == 4:
        (<int32_t*>dst)[total] = <int32_t>base
    else:
        (<int64_t*>dst)[total] = base
    return out, spans
