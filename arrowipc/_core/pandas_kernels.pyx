# cython: language_level=3, boundscheck=False, wraparound=False
"""Kernels of the pandas conversion (arrowipc/pandas_compat/): Arrow buffers into numpy blocks
and pandas' inputs back into Arrow buffers.

Numeric work (copies, integer-to-float with NaN for nulls, NaT and -1 sentinels, NaN/NaT
detection) runs with the GIL released, so the caller can convert several columns at once on
threads. Building Python objects (str, bytes) needs the GIL; those loops read the buffers through
raw pointers and create one object per distinct value when deduplicating.

Every offset and length comes from ArrayData that may have been read from untrusted input: each
range is checked against the buffer's size before any pointer is formed (written so it cannot
overflow), and offsets are checked to be non-decreasing and inside the data buffer.
"""
from cpython.ref cimport Py_INCREF, PyObject
from libc.stdint cimport uint8_t, int8_t, int16_t, int32_t, int64_t, uint16_t, uint32_t, uint64_t
from libc.string cimport memcmp, memcpy
from libc.stdlib cimport calloc, free

import numpy as np

from arrowipc._core.numeric_types cimport integer_t, floating_t, signed_t
from arrowipc._core.buffer cimport Buffer, allocate, mutable_data, py_buffer
from arrowipc.errors import ArrowInvalid



cdef uint8_t* _ptr(object arr, bint write=True) except NULL:
    # The data pointer of a C-contiguous numpy array (numpy's own headers are not needed for one
    # address); callers check the length and item size before writing through it.
    if not arr.flags.c_contiguous:
        raise ArrowInvalid("pandas kernels need C-contiguous arrays")
    if write and not arr.flags.writeable:
        raise ArrowInvalid("pandas kernels cannot write into a read-only array")
    cdef size_t address = arr.__array_interface__["data"][0]
    if address == 0:
        return <uint8_t*>&_EMPTY
    return <uint8_t*>address


cdef uint8_t _EMPTY = 0


cdef inline int check_range(Buffer buf, int64_t start, int64_t count, int64_t width,
                            str what) except -1:
    # elements [start, start + count) of `width` bytes must lie inside buf (no overflow)
    if start < 0 or count < 0:
        raise ArrowInvalid(f"{what}: negative offset {start} or length {count}")
    if count == 0:
        return 0
    if start > buf.size // width or count > buf.size // width - start:
        raise ArrowInvalid(f"{what}: elements [{start}, {start}+{count}) of {width} bytes need "
                           f"{(start + count) * width} bytes but the buffer has {buf.size}")
    return 0


cdef inline const uint8_t* bits_ptr(object bitmap, int64_t off, int64_t count,
                                    str what) except? NULL:
    # The bytes of a bitmap whose bits [off, off + count) are checked to exist; NULL for None
    # (no bitmap). Written so it cannot overflow.
    if bitmap is None:
        return NULL
    cdef Buffer b = bitmap
    if off < 0 or count < 0 or count > b.size * 8 - off:
        raise ArrowInvalid(f"{what}: bits [{off}, {off}+{count}) need more than the "
                           f"{b.size} bytes it has")
    return b.ptr


cdef inline bint bit(const uint8_t* bits, int64_t i) noexcept nogil:
    return (bits[i >> 3] >> (i & 7)) & 1


def copy_values(Buffer src, int64_t start, int64_t count, int64_t width, object out,
                int64_t out_start):
    """Copy elements [start, start + count) of `width` bytes into out[out_start:] (same dtype)."""
    check_range(src, start, count, width, "values buffer")
    if out_start < 0 or count > len(out) - out_start or out.itemsize != width:
        raise ArrowInvalid("copy_values: output too small or of another width")
    cdef uint8_t* dst = <uint8_t*>_ptr(out) + out_start * width
    cdef const uint8_t* s = src.ptr + start * width
    if count:
        with nogil:
            memcpy(dst, s, count * width)


cdef void _ints_to_float(const integer_t* src, floating_t* dst, const uint8_t* valid,
                         int64_t voff, int64_t n) noexcept nogil:
    cdef int64_t i
    cdef floating_t nan = <floating_t>(0.0 / 0.0)
    if valid == NULL:
        for i in range(n):
            dst[i] = <floating_t>src[i]
    else:
        for i in range(n):
            dst[i] = <floating_t>src[i] if bit(valid, voff + i) else nan


cdef int _typed_ints_to_float(integer_t* tag, const uint8_t* s, uint8_t* d, int fwidth,
                              const uint8_t* vp, int64_t voff, int64_t n) noexcept nogil:
    if fwidth == 8:
        _ints_to_float[integer_t, double](<const integer_t*>s, <double*>d, vp, voff, n)
    else:
        _ints_to_float[integer_t, float](<const integer_t*>s, <float*>d, vp, voff, n)
    return 0


def ints_to_float(Buffer src, str code, int64_t start, int64_t count, object validity,
                  int64_t voff, object out, int64_t out_start):
    """Integers (numpy type code `code`, e.g. "i8", "u4") -> float64/float32 in out, NaN where the
    validity bitmap (a Buffer, or None: all valid) has a 0 bit at voff + i."""
    cdef int width = int(code[1:])
    check_range(src, start, count, width, "values buffer")
    cdef const uint8_t* vp = bits_ptr(validity, voff, count, "validity bitmap")
    cdef int fwidth = out.itemsize
    if out_start < 0 or count > len(out) - out_start or fwidth not in (4, 8):
        raise ArrowInvalid("ints_to_float: output too small or not float32/float64")
    cdef const uint8_t* s = src.ptr + start * width
    cdef uint8_t* d = <uint8_t*>_ptr(out) + out_start * fwidth
    cdef bint signed = code[0] == "i"
    if count == 0:
        return
    with nogil:
        if signed and width == 1:
            _typed_ints_to_float(<int8_t*>NULL, s, d, fwidth, vp, voff, count)
        elif signed and width == 2:
            _typed_ints_to_float(<int16_t*>NULL, s, d, fwidth, vp, voff, count)
        elif signed and width == 4:
            _typed_ints_to_float(<int32_t*>NULL, s, d, fwidth, vp, voff, count)
        elif signed:
            _typed_ints_to_float(<int64_t*>NULL, s, d, fwidth, vp, voff, count)
        elif width == 1:
            _typed_ints_to_float(<uint8_t*>NULL, s, d, fwidth, vp, voff, count)
        elif width == 2:
            _typed_ints_to_float(<uint16_t*>NULL, s, d, fwidth, vp, voff, count)
        elif width == 4:
            _typed_ints_to_float(<uint32_t*>NULL, s, d, fwidth, vp, voff, count)
        else:
            _typed_ints_to_float(<uint64_t*>NULL, s, d, fwidth, vp, voff, count)


def fill_nulls(object out, int64_t out_start, int64_t count, Buffer validity, int64_t voff,
               object fill):
    """out[out_start + i] = fill wherever bit voff + i of the validity bitmap is 0.

    out is float16/32/64 (fill NaN), int64-based datetime/timedelta (fill NaT) or integer codes
    (fill -1)."""
    cdef const uint8_t* vp = bits_ptr(validity, voff, count, "validity bitmap")
    if out_start < 0 or count > len(out) - out_start:
        raise ArrowInvalid("fill_nulls: output too small")
    cdef uint8_t* base = <uint8_t*>_ptr(out)
    cdef int w = out.itemsize
    cdef str pykind = out.dtype.kind
    cdef char kind = ord(pykind)
    cdef int64_t i, ival = 0
    cdef double dval = 0
    cdef uint16_t hval = 0x7e00          # float16 NaN
    if kind == c'f':
        dval = float("nan")
    elif kind == c'M' or kind == c'm':
        ival = <int64_t>(-9223372036854775807) - 1   # NaT
    else:
        ival = int(fill)
    with nogil:
        for i in range(count):
            if not bit(vp, voff + i):
                if kind == c'f':
                    if w == 8:
                        (<double*>base)[out_start + i] = dval
                    elif w == 4:
                        (<float*>base)[out_start + i] = <float>dval
                    else:
                        (<uint16_t*>base)[out_start + i] = hval
                elif w == 8:
                    (<int64_t*>base)[out_start + i] = ival
                elif w == 4:
                    (<int32_t*>base)[out_start + i] = <int32_t>ival
                elif w == 2:
                    (<int16_t*>base)[out_start + i] = <int16_t>ival
                else:
                    (<int8_t*>base)[out_start + i] = <int8_t>ival


def unpack_bools(Buffer bits, int64_t boff, int64_t count, object out, int64_t out_start):
    """out[out_start + i] (numpy bool) = bit boff + i."""
    if boff < 0 or count < 0 or count > bits.size * 8 - boff:
        raise ArrowInvalid(f"boolean values: bits [{boff}, {boff}+{count}) need more than the "
                           f"{bits.size} bytes the buffer has")
    if out_start < 0 or count > len(out) - out_start or out.itemsize != 1:
        raise ArrowInvalid("unpack_bools: output too small")
    cdef uint8_t* d = <uint8_t*>_ptr(out) + out_start
    cdef const uint8_t* s = bits.ptr
    cdef int64_t i
    with nogil:
        for i in range(count):
            d[i] = bit(s, boff + i)


cdef extern from "Python.h":
    # raw forms: a new reference or NULL with an exception set, no automatic reference counting
    PyObject* _decode_utf8 "PyUnicode_DecodeUTF8"(const char* s, Py_ssize_t size,
                                                  const char* errors)
    PyObject* _new_bytes "PyBytes_FromStringAndSize"(const char* s, Py_ssize_t size)
    void Py_XDECREF(PyObject* o)


# Deduplication table: open addressing over (bytes, hash) with the object made for them. Small
# and bounded: past DEDUP_MAX_DISTINCT distinct values per call new values are simply not
# remembered (a column of unique strings then costs one probe per value, nothing more).
DEF DEDUP_SLOTS = 1 << 16
DEF DEDUP_MAX_DISTINCT = DEDUP_SLOTS // 2

cdef struct DedupSlot:
    const uint8_t* ptr
    int64_t size
    uint64_t hash
    PyObject* obj             # a strong reference; NULL: empty slot


cdef inline uint64_t hash_bytes(const uint8_t* p, int64_t n) noexcept nogil:
    cdef uint64_t h = 0x9E3779B97F4A7C15ULL ^ <uint64_t>n
    cdef uint64_t w
    cdef int64_t i = 0
    while i + 8 <= n:
        memcpy(&w, p + i, 8)
        h = (h ^ w) * 0x100000001B3ULL
        h ^= h >> 29
        i += 8
    while i < n:
        h = (h ^ p[i]) * 0x100000001B3ULL
        i += 1
    return h ^ (h >> 32)


cdef PyObject* new_value(const uint8_t* p, int64_t n, bint utf8) except NULL:
    # a new str or bytes; NULL (with Python's UnicodeDecodeError or MemoryError set) propagates
    if utf8:
        return _decode_utf8(<const char*>p, n, NULL)
    return _new_bytes(<const char*>p, n)


def binary_to_objects(Buffer offsets, Buffer data, int64_t start, int64_t count, int owidth,
                      object validity, int64_t voff, bint utf8, bint dedup, object na_value,
                      object out, int64_t out_start):
    """Strings (utf8) or bytes of a binary/string array into out[out_start:] (an object array);
    na_value where the validity bitmap has a 0 bit. With dedup, equal values share one object
    (found through a bounded hash table on the raw bytes, so a repeated value costs a hash and a
    comparison, not an object)."""
    check_range(offsets, start, count + 1 if count else 0, owidth, "offsets buffer")
    if out_start < 0 or count > len(out) - out_start or out.dtype.kind != "O":
        raise ArrowInvalid("binary_to_objects: output too small or not of object dtype")
    cdef const uint8_t* vp = bits_ptr(validity, voff, count, "validity bitmap")
    cdef const int32_t* o32 = <const int32_t*>(offsets.ptr + start * 4)
    cdef const int64_t* o64 = <const int64_t*>(offsets.ptr + start * 8)
    cdef int64_t i, lo, hi, prev, size
    cdef int64_t dsize = data.size if data is not None else 0
    cdef const uint8_t* dp = data.ptr if data is not None else NULL
    cdef PyObject** dst = <PyObject**>_ptr(out) + out_start
    cdef PyObject* na = <PyObject*>na_value
    cdef PyObject* v
    cdef DedupSlot* table = NULL
    cdef DedupSlot* slot
    cdef uint64_t h, mask = DEDUP_SLOTS - 1
    cdef int64_t distinct = 0
    if count == 0:
        return
    if dedup:
        table = <DedupSlot*>calloc(DEDUP_SLOTS, sizeof(DedupSlot))
        if table == NULL:
            raise MemoryError("binary_to_objects: no memory for the deduplication table")
    try:
        prev = o32[0] if owidth == 4 else o64[0]
        for i in range(count):
            lo = prev
            hi = o32[i + 1] if owidth == 4 else o64[i + 1]
            if lo < 0 or hi < lo or hi > dsize:
                raise ArrowInvalid(f"offsets buffer: value {i} spans [{lo}, {hi}) outside the "
                                   f"data buffer of {dsize} bytes")
            prev = hi
            if vp != NULL and not bit(vp, voff + i):
                v = na
                Py_INCREF(<object>v)
            elif table != NULL:
                size = hi - lo
                h = hash_bytes(dp + lo, size)
                slot = &table[h & mask]
                while slot.obj != NULL and not (slot.hash == h and slot.size == size and
                                                memcmp(slot.ptr, dp + lo, size) == 0):
                    slot = &table[(slot - table + 1) & mask]
                if slot.obj != NULL:
                    v = slot.obj
                    Py_INCREF(<object>v)
                else:
                    v = new_value(dp + lo, size, utf8)
                    if distinct < DEDUP_MAX_DISTINCT:
                        slot.ptr = dp + lo
                        slot.size = size
                        slot.hash = h
                        slot.obj = v
                        Py_INCREF(<object>v)        # the table's own reference
                        distinct += 1
            else:
                v = new_value(dp + lo, hi - lo, utf8)
            Py_XDECREF(dst[i])                      # the slot's previous object (None)
            dst[i] = v
    finally:
        if table != NULL:
            for i in range(DEDUP_SLOTS):
                Py_XDECREF(table[i].obj)
            free(table)


def float_validity(object values):
    """(bitmap Buffer, null count) marking NaN slots of a float16/32/64 array as null; (None, 0)
    when there are none."""
    cdef int64_t n = len(values), i, nulls = 0
    cdef int w = values.itemsize
    if not values.flags.c_contiguous:
        values = np.ascontiguousarray(values)
    cdef const uint8_t* p = <const uint8_t*>_ptr(values, False)
    with nogil:
        for i in range(n):
            if w == 8:
                nulls += (<const double*>p)[i] != (<const double*>p)[i]
            elif w == 4:
                nulls += (<const float*>p)[i] != (<const float*>p)[i]
            else:
                nulls += ((<const uint16_t*>p)[i] & 0x7c00) == 0x7c00 and \
                         ((<const uint16_t*>p)[i] & 0x03ff) != 0
    if nulls == 0:
        return None, 0
    cdef Buffer out = allocate((n + 7) // 8, True)
    cdef uint8_t* d = mutable_data(out)
    cdef bint ok
    with nogil:
        for i in range(n):
            if w == 8:
                ok = (<const double*>p)[i] == (<const double*>p)[i]
            elif w == 4:
                ok = (<const float*>p)[i] == (<const float*>p)[i]
            else:
                ok = not (((<const uint16_t*>p)[i] & 0x7c00) == 0x7c00 and
                          ((<const uint16_t*>p)[i] & 0x03ff) != 0)
            if ok:
                d[i >> 3] |= <uint8_t>(1 << (i & 7))
    return out, nulls


cdef inline int64_t _int_at(const uint8_t* p, int w, int64_t i) noexcept nogil:
    if w == 8:
        return (<const int64_t*>p)[i]
    if w == 4:
        return (<const int32_t*>p)[i]
    if w == 2:
        return (<const int16_t*>p)[i]
    return (<const int8_t*>p)[i]


def sentinel_validity(object values, int64_t sentinel):
    """(bitmap Buffer, null count) marking slots of a signed integer array equal to `sentinel`
    as null (datetime64/timedelta64 viewed as int64: NaT; category codes of any width: -1);
    (None, 0) when there are none."""
    cdef int w = values.itemsize
    if w not in (1, 2, 4, 8) or values.dtype.kind not in ("i", "M", "m"):
        raise ArrowInvalid(f"sentinel_validity: expected signed integers, got {values.dtype}")
    cdef int64_t n = len(values), i, nulls = 0
    cdef const uint8_t* p = _ptr(values, False)
    with nogil:
        for i in range(n):
            nulls += _int_at(p, w, i) == sentinel
    if nulls == 0:
        return None, 0
    cdef Buffer out = allocate((n + 7) // 8, True)
    cdef uint8_t* d = mutable_data(out)
    with nogil:
        for i in range(n):
            if _int_at(p, w, i) != sentinel:
                d[i >> 3] |= <uint8_t>(1 << (i & 7))
    return out, nulls


cdef extern from "Python.h":
    const char* _utf8_and_size "PyUnicode_AsUTF8AndSize"(PyObject* s, Py_ssize_t* size)
    bint _is_exact_str "PyUnicode_CheckExact"(PyObject* o)
    bint _is_exact_float "PyFloat_CheckExact"(PyObject* o)
    double _float_value "PyFloat_AS_DOUBLE"(PyObject* o)
    PyObject* _Py_None "Py_None"


def objects_to_utf8(object values):
    """A string column from an object array holding only str and missing values (None, float
    NaN).

    Returns (offsets Buffer (int64), data Buffer, validity Buffer or None, null count, index of
    the first value that is neither str nor None/float NaN, or -1). When that index is not -1 the
    buffers are None and the caller infers the column's type another way. Two passes over the
    objects, no Python object made: the first sizes the data, the second copies it."""
    cdef int64_t n = len(values), i, total = 0, nulls = 0
    cdef Py_ssize_t size
    cdef const char* s
    cdef PyObject* v
    if not values.flags.c_contiguous:
        values = np.ascontiguousarray(values)
    cdef PyObject** src = <PyObject**>_ptr(values, False)
    for i in range(n):
        v = src[i]
        if _is_exact_str(v):
            s = _utf8_and_size(v, &size)      # ASCII: the str's own bytes, nothing allocated
            if s == NULL:
                raise ArrowInvalid(f"value {i} cannot be encoded as UTF-8")
            total += size
        elif v == _Py_None or (_is_exact_float(v) and _float_value(v) != _float_value(v)):
            nulls += 1
        else:
            return None, None, None, 0, i
    cdef Buffer offs = allocate((n + 1) * 8, False)
    cdef Buffer data = allocate(total, False)
    cdef int64_t* o = <int64_t*>mutable_data(offs)
    cdef uint8_t* d = mutable_data(data) if total else NULL
    cdef Buffer valid = allocate((n + 7) // 8, True) if nulls else None
    cdef uint8_t* vp = mutable_data(valid) if nulls else NULL
    cdef int64_t pos = 0
    o[0] = 0
    for i in range(n):
        v = src[i]
        if _is_exact_str(v):
            s = _utf8_and_size(v, &size)      # cached by the first pass
            memcpy(d + pos, s, size)
            pos += size
            if vp != NULL:
                vp[i >> 3] |= <uint8_t>(1 << (i & 7))
        o[i + 1] = pos
    return offs, data, valid, nulls, -1
