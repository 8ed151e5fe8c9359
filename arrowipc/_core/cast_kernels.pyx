# cython: language_level=3, boundscheck=False, wraparound=False
"""Numeric and temporal cast kernels over ArrayData: conversions between the integer and floating
point types (safe casts stop at the first valid value that does not fit, as pyarrow's do), unit
changes of temporal values (rescale), numbers to and from booleans, and 32/64-bit offsets.

The input may come from untrusted bytes: every buffer is checked to hold the rows it is read at
(select_kernels' checked and checked_bits) before any pointer is formed. The loops run with the
GIL released and create no Python object per value.
"""
from libc.stdint cimport (uint8_t, int8_t, int16_t, int32_t, int64_t, uint16_t, uint32_t,
                          uint64_t, INT32_MAX, INT64_MAX, INT64_MIN)
from libc.string cimport memcpy
from libc.math cimport trunc, isnan

from arrowipc._core.numeric_types cimport numeric_t, numeric_out_t
from arrowipc._core.buffer cimport Buffer, allocate
from arrowipc._core.arraydata cimport ArrayData
from arrowipc._core.select_kernels cimport (get_bit, set_bit, byte_at, buffer_at, out_ptr,
                                            checked, checked_bits)

from arrowipc.errors import ArrowInvalid


cdef extern from *:
    bint mul_overflow "__builtin_mul_overflow"(int64_t a, int64_t b, int64_t* out) nogil


# -- numeric casts ------------------------------------------------------------------------------

# Numeric type codes, in this order: i8 i16 i32 i64 u8 u16 u32 u64 f32 f64.
NUMERIC_CODES = {"int8": 0, "int16": 1, "int32": 2, "int64": 3, "uint8": 4, "uint16": 5,
                 "uint32": 6, "uint64": 7, "float": 8, "double": 9}
# Integers up to these magnitudes convert to float / double exactly (pyarrow's safe limit).
cdef int64_t MAX_EXACT_FLOAT = 1 << 24
cdef int64_t MAX_EXACT_DOUBLE = (<int64_t>1) << 53
cdef int[10] WIDTH_OF = [1, 2, 4, 8, 1, 2, 4, 8, 4, 8]
# The range of each integer code, filled from the widths (no literal beyond int64 in C).
cdef int64_t INT_MIN_OF[8]
cdef uint64_t INT_MAX_OF[8]


cdef void _init_ranges() noexcept:
    cdef int code, bits
    for code in range(8):
        bits = 8 * WIDTH_OF[code]
        if code < 4:
            INT_MIN_OF[code] = -(<int64_t>1 << (bits - 1)) if bits < 64 else INT64_MIN
            INT_MAX_OF[code] = (<uint64_t>1 << (bits - 1)) - 1
        else:
            INT_MIN_OF[code] = 0
            INT_MAX_OF[code] = (<uint64_t>1 << bits) - 1 if bits < 64 else ~(<uint64_t>0)


_init_ranges()


# SPREAD8[b]: bit k of b in byte k (booleans to 8-bit numbers, eight rows per lookup).
cdef uint64_t SPREAD8[256]


cdef void _init_spread() noexcept:
    cdef int m, b
    for m in range(256):
        SPREAD8[m] = 0
        for b in range(8):
            SPREAD8[m] |= (<uint64_t>((m >> b) & 1)) << (8 * b)


_init_spread()


cdef bint _all_fit(const numeric_t* s, numeric_out_t* unused, int64_t n, int dst_code) noexcept nogil:
    # One branch-free pass over every slot (nulls included): do all values fit the target?
    cdef int64_t i, lo, hi_s
    cdef uint64_t hi_u
    cdef int bad = 0
    if numeric_out_t is float or numeric_out_t is double:
        if numeric_out_t is float:
            hi_s = MAX_EXACT_FLOAT
        else:
            hi_s = MAX_EXACT_DOUBLE
        if numeric_t is uint64_t or numeric_t is uint32_t or numeric_t is uint16_t or numeric_t is uint8_t:
            for i in range(n):
                bad |= <uint64_t>s[i] > <uint64_t>hi_s
        else:
            for i in range(n):
                bad |= (<int64_t>s[i] < -hi_s) | (<int64_t>s[i] > hi_s)
    else:
        lo = INT_MIN_OF[dst_code]
        hi_u = INT_MAX_OF[dst_code]
        if numeric_t is uint64_t or numeric_t is uint32_t or numeric_t is uint16_t or numeric_t is uint8_t:
            for i in range(n):
                bad |= <uint64_t>s[i] > hi_u
        else:
            hi_s = <int64_t>hi_u if hi_u <= <uint64_t>INT64_MAX else INT64_MAX
            for i in range(n):
                bad |= (<int64_t>s[i] < lo) | (<int64_t>s[i] > hi_s)
    return bad == 0


cdef int64_t _cast_loop(const numeric_t* s, numeric_out_t* d, const uint8_t* valid, int64_t voff,
                        int64_t n, bint safe, int dst_code) noexcept nogil:
    # Returns the first row whose value does not fit (safe casts), or -1. The common case is
    # two tight loops (a range check, then the conversion) the compiler vectorizes; the
    # row-by-row pass that reads the validity runs only when a value does not fit (it may sit
    # under a null) and for floats to integers.
    cdef int64_t i
    cdef bint row_by_row
    if numeric_t is float or numeric_t is double:
        row_by_row = not (numeric_out_t is float or numeric_out_t is double)
    else:
        row_by_row = safe and not _all_fit(s, d, n, dst_code)
    if row_by_row:
        return _cast_checked(s, d, valid, voff, n, safe, dst_code)
    for i in range(n):
        d[i] = <numeric_out_t>s[i]
    return -1


cdef int64_t _cast_checked(const numeric_t* s, numeric_out_t* d, const uint8_t* valid, int64_t voff,
                           int64_t n, bint safe, int dst_code) noexcept nogil:
    # Row by row: the first valid row whose value does not fit (safe casts), or -1.
    cdef int64_t i
    cdef int64_t lo = INT_MIN_OF[dst_code] if dst_code < 8 else 0
    cdef uint64_t hi = INT_MAX_OF[dst_code] if dst_code < 8 else 0
    cdef bint ok
    cdef double f, fhi
    cdef int64_t sv
    cdef uint64_t uv
    for i in range(n):
        if safe and valid != NULL and not get_bit(valid, voff + i):
            d[i] = 0
        elif numeric_t is float or numeric_t is double:
            f = <double>s[i]
            if numeric_out_t is float or numeric_out_t is double:
                d[i] = <numeric_out_t>f
            else:
                # to an integer: whole and inside the range (2^63 and 2^64 are exact doubles)
                fhi = <double>hi + 1.0
                ok = (not isnan(f)) and f < fhi and (f >= <double>lo or f > <double>lo - 1.0)
                if safe and not (ok and trunc(f) == f):
                    return i
                # unsafe: fractions truncate and values wrap through int64 as pyarrow's do;
                # NaN and values beyond 64 bits (undefined in C) give 0
                if ok:
                    d[i] = <numeric_out_t>f
                elif (not isnan(f)) and f >= -9223372036854775808.0 and f < 9223372036854775808.0:
                    d[i] = <numeric_out_t>(<int64_t>f)
                else:
                    d[i] = 0
        else:
            ok = True
            if numeric_out_t is float or numeric_out_t is double:
                if safe:
                    # every integer of magnitude up to 2^mantissa is exact
                    if numeric_t is uint64_t or numeric_t is uint32_t or numeric_t is uint16_t or numeric_t is uint8_t:
                        if numeric_out_t is float:
                            ok = <uint64_t>s[i] <= <uint64_t>MAX_EXACT_FLOAT
                        else:
                            ok = <uint64_t>s[i] <= <uint64_t>MAX_EXACT_DOUBLE
                    else:
                        sv = <int64_t>s[i]
                        if numeric_out_t is float:
                            ok = -MAX_EXACT_FLOAT <= sv <= MAX_EXACT_FLOAT
                        else:
                            ok = -MAX_EXACT_DOUBLE <= sv <= MAX_EXACT_DOUBLE
            elif safe:
                if numeric_t is uint64_t or numeric_t is uint32_t or numeric_t is uint16_t or numeric_t is uint8_t:
                    ok = <uint64_t>s[i] <= hi
                else:
                    sv = <int64_t>s[i]
                    if lo == 0:
                        ok = sv >= 0 and <uint64_t>sv <= hi
                    else:
                        ok = sv >= lo and (sv < 0 or <uint64_t>sv <= hi)
            if not ok:
                return i
            d[i] = <numeric_out_t>s[i]
    return -1


cdef int64_t _cast_to(const numeric_t* s, int dst_code, uint8_t* out, const uint8_t* valid,
                      int64_t voff, int64_t n, bint safe) noexcept nogil:
    if dst_code == 0:
        return _cast_loop(s, <int8_t*>out, valid, voff, n, safe, dst_code)
    if dst_code == 1:
        return _cast_loop(s, <int16_t*>out, valid, voff, n, safe, dst_code)
    if dst_code == 2:
        return _cast_loop(s, <int32_t*>out, valid, voff, n, safe, dst_code)
    if dst_code == 3:
        return _cast_loop(s, <int64_t*>out, valid, voff, n, safe, dst_code)
    if dst_code == 4:
        return _cast_loop(s, <uint8_t*>out, valid, voff, n, safe, dst_code)
    if dst_code == 5:
        return _cast_loop(s, <uint16_t*>out, valid, voff, n, safe, dst_code)
    if dst_code == 6:
        return _cast_loop(s, <uint32_t*>out, valid, voff, n, safe, dst_code)
    if dst_code == 7:
        return _cast_loop(s, <uint64_t*>out, valid, voff, n, safe, dst_code)
    if dst_code == 8:
        return _cast_loop(s, <float*>out, valid, voff, n, safe, dst_code)
    return _cast_loop(s, <double*>out, valid, voff, n, safe, dst_code)




def cast_numeric(ArrayData d, int src_code, int dst_code, bint safe):
    """(values Buffer at row 0, first bad row or -1) of `d`'s numeric values converted to
    `dst_code` (NUMERIC_CODES); a safe cast stops at the first valid value that does not fit."""
    if not (0 <= src_code < 10 and 0 <= dst_code < 10):
        raise ArrowInvalid(f"numeric cast codes {src_code} -> {dst_code}")
    cdef int64_t off = d.offset, n = d.length, bad = -1
    cdef const uint8_t* src = checked(buffer_at(d, 1), off, n, WIDTH_OF[src_code], "values")
    cdef const uint8_t* valid = checked_bits(buffer_at(d, 0), off, n, "validity")
    if d.null_count == 0:
        valid = NULL
    cdef Buffer out = allocate(n * WIDTH_OF[dst_code], False)
    cdef uint8_t* dst = out_ptr(out)
    if n:
        with nogil:
            if src_code == 0:
                bad = _cast_to(<const int8_t*>src, dst_code, dst, valid, off, n, safe)
            elif src_code == 1:
                bad = _cast_to(<const int16_t*>src, dst_code, dst, valid, off, n, safe)
            elif src_code == 2:
                bad = _cast_to(<const int32_t*>src, dst_code, dst, valid, off, n, safe)
            elif src_code == 3:
                bad = _cast_to(<const int64_t*>src, dst_code, dst, valid, off, n, safe)
            elif src_code == 4:
                bad = _cast_to(<const uint8_t*>src, dst_code, dst, valid, off, n, safe)
            elif src_code == 5:
                bad = _cast_to(<const uint16_t*>src, dst_code, dst, valid, off, n, safe)
            elif src_code == 6:
                bad = _cast_to(<const uint32_t*>src, dst_code, dst, valid, off, n, safe)
            elif src_code == 7:
                bad = _cast_to(<const uint64_t*>src, dst_code, dst, valid, off, n, safe)
            elif src_code == 8:
                bad = _cast_to(<const float*>src, dst_code, dst, valid, off, n, safe)
            else:
                bad = _cast_to(<const double*>src, dst_code, dst, valid, off, n, safe)
    return out, bad


cdef int64_t _rescale(const uint8_t* src, int swidth, uint8_t* dst, int dwidth,
                      const uint8_t* valid, int64_t voff, int64_t n, int64_t mul, int64_t div,
                      bint exact, int64_t modulo, bint floor, int* why) noexcept nogil:
    # (value floor-mod modulo, when given) * mul, or / div (floor or truncation; exact when
    # asked);
    # why: 1 lost data, 2 out of range
    cdef int64_t i, v, r
    for i in range(n):
        if valid != NULL and not get_bit(valid, voff + i):
            r = 0
        else:
            v = (<const int32_t*>src)[i] if swidth == 4 else (<const int64_t*>src)[i]
            if modulo > 0:
                v = v % modulo
                if v < 0:
                    v += modulo
            if mul != 1:
                if mul_overflow(v, mul, &r):
                    why[0] = 2
                    return i
            else:
                r = v // div
                if v % div != 0:
                    if v < 0 and floor:
                        r -= 1     # C division truncates; a date floors
                    if exact:
                        why[0] = 1
                        return i
            if dwidth == 4 and (r < -2147483648 or r > 2147483647):
                why[0] = 2
                return i
        if dwidth == 4:
            (<int32_t*>dst)[i] = <int32_t>r
        else:
            (<int64_t*>dst)[i] = r
    return -1


def rescale(ArrayData d, int swidth, int dwidth, int64_t mul, int64_t div, bint exact,
            int64_t modulo=0, bint floor=True):
    """(values Buffer, first bad row or -1, reason) of `d`'s 32/64-bit integer values (taken
    modulo `modulo` first when it is positive: a time of day) multiplied by `mul` or divided
    by `div` (temporal unit changes; flooring when `floor`, as a date does, else truncating
    toward zero, as pyarrow's unit changes do); reason 1: a division was not exact and
    `exact` was asked, 2: the result does not fit."""
    if mul < 1 or div < 1 or swidth not in (4, 8) or dwidth not in (4, 8):
        raise ArrowInvalid(f"rescale by {mul}/{div} from {swidth} to {dwidth} bytes")
    cdef int64_t off = d.offset, n = d.length, bad = -1
    cdef int why = 0
    cdef const uint8_t* src = checked(buffer_at(d, 1), off, n, swidth, "values")
    cdef const uint8_t* valid = checked_bits(buffer_at(d, 0), off, n, "validity")
    if d.null_count == 0:
        valid = NULL
    cdef Buffer out = allocate(n * dwidth, False)
    cdef uint8_t* dst = out_ptr(out)
    if n:
        with nogil:
            bad = _rescale(src, swidth, dst, dwidth, valid, off, n, mul, div, exact, modulo,
                           floor, &why)
    return out, bad, why


def nonzero_bits(ArrayData d, int code):
    """(bitmap Buffer at bit 0) of `d`'s numeric values that are not zero (cast to bool)."""
    cdef int64_t off = d.offset, n = d.length, i
    cdef int w = WIDTH_OF[code]
    cdef const uint8_t* src = checked(buffer_at(d, 1), off, n, w, "values")
    cdef Buffer out = allocate((n + 7) // 8, True)
    cdef uint8_t* dst = out_ptr(out)
    cdef bint nz
    with nogil:
        for i in range(n):
            if code == 8:
                nz = (<const float*>src)[i] != 0
            elif code == 9:
                nz = (<const double*>src)[i] != 0
            elif w == 1:
                nz = src[i] != 0
            elif w == 2:
                nz = (<const uint16_t*>src)[i] != 0
            elif w == 4:
                nz = (<const uint32_t*>src)[i] != 0
            else:
                nz = (<const uint64_t*>src)[i] != 0
            if nz:
                set_bit(dst, i)
    return out


def bits_to_numeric(ArrayData d, int code):
    """(values Buffer) of `d`'s boolean values as 0/1 of numeric type `code`."""
    cdef int64_t off = d.offset, n = d.length, i
    cdef const uint8_t* src = checked_bits(buffer_at(d, 1), off, n, "boolean values")
    if src == NULL and n:
        raise ArrowInvalid("boolean values: the buffer is missing")
    cdef int w = WIDTH_OF[code]
    cdef Buffer out = allocate(n * w, True)
    cdef uint8_t* dst = out_ptr(out)
    with nogil:
        if code == 8:
            for i in range(n):
                (<float*>dst)[i] = <float>get_bit(src, off + i)
        elif code == 9:
            for i in range(n):
                (<double*>dst)[i] = <double>get_bit(src, off + i)
        elif w == 1:
            # eight bits at a time: SPREAD8[b] holds bit k of b in byte k
            for i in range(n >> 3):
                memcpy(dst + i * 8, &SPREAD8[byte_at(src, off + i * 8)], 8)
            for i in range((n >> 3) << 3, n):
                dst[i] = get_bit(src, off + i)
        elif w == 2:
            for i in range(n):
                (<uint16_t*>dst)[i] = get_bit(src, off + i)
        elif w == 4:
            for i in range(n):
                (<uint32_t*>dst)[i] = get_bit(src, off + i)
        else:
            for i in range(n):
                (<uint64_t*>dst)[i] = get_bit(src, off + i)
    return out


def widen_offsets(ArrayData d, int from_width, int to_width):
    """(offsets Buffer at row 0 of width `to_width`, first value) of a binary or list node's
    offsets converted between 32 and 64 bits; None when a 64-bit offset does not fit 32 bits."""
    cdef int64_t off = d.offset, n = d.length + 1, i, v
    cdef const uint8_t* src = checked(buffer_at(d, 1), off, n, from_width, "offsets")
    cdef Buffer out = allocate(n * to_width, False)
    cdef uint8_t* dst = out_ptr(out)
    cdef int64_t first = (<const int32_t*>src)[0] if from_width == 4 else (<const int64_t*>src)[0]
    cdef bint fits = True
    cdef int64_t last
    with nogil:
        if from_width == 4 and to_width == 8:
            for i in range(n):
                (<int64_t*>dst)[i] = (<const int32_t*>src)[i] - first
        elif from_width == 8 and to_width == 4:
            last = (<const int64_t*>src)[n - 1] - first
            if last < 0 or last > INT32_MAX:
                fits = False
            else:
                for i in range(n):
                    v = (<const int64_t*>src)[i] - first
                    if v < 0 or v > last:       # offsets must not decrease
                        fits = False
                        break
                    (<int32_t*>dst)[i] = <int32_t>v
        elif from_width == 4:
            for i in range(n):
                (<int32_t*>dst)[i] = (<const int32_t*>src)[i] - <int32_t>first
        else:
            for i in range(n):
                (<int64_t*>dst)[i] = (<const int64_t*>src)[i] - first
    if not fits:
        return None
    return out, first
