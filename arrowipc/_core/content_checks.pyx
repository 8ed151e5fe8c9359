# cython: language_level=3
"""The O(n) checks of one node, in two levels.

`check_content` (structural): offsets, views, list views, union ids and offsets, run ends and
dictionary indices -- everything a later access needs to stay in bounds. It serves the IPC
reader's deferred checks and Array/RecordBatch.validate().

`check_values` (full, run after check_content): null counts against the validity bitmap, UTF-8,
binary view prefixes, decimal precision, date64/time ranges, dense union offsets that never
decrease within a child, and map keys without nulls -- what pyarrow's validate(full=True) checks.

The loops are C kernels run without the GIL; neither function recurses into children.
Logical types (map, decimal, date64, time) are recognised by their names: the physical layer
imports nothing above itself, the type classes included.
"""
from libc.stdint cimport uint8_t, int8_t, int32_t, int64_t, INT64_MIN, INT64_MAX
from libc.stdlib cimport malloc, free

from arrowipc._core.buffer cimport Buffer
from arrowipc._core.arraydata cimport ArrayData
from arrowipc._core.kernels cimport (
    arrowipc_count_set_bits, arrowipc_check_utf8_offsets32, arrowipc_check_utf8_offsets64,
    arrowipc_check_view_values, arrowipc_check_decimals, arrowipc_check_int_range,
    arrowipc_check_union_offsets_monotonic, ARROWIPC_CHECK_INVALID_UTF8, ARROWIPC_CHECK_PRECISION,
    ARROWIPC_CHECK_BAD_PREFIX, ARROWIPC_CHECK_NOT_MULTIPLE,
    arrowipc_check_views, arrowipc_check_list_views32, arrowipc_check_list_views64,
    arrowipc_check_union, arrowipc_check_indices, arrowipc_check_run_ends,
    ARROWIPC_CHECK_NEGATIVE, ARROWIPC_CHECK_OUT_OF_RANGE, ARROWIPC_CHECK_BAD_BUFFER,
    ARROWIPC_CHECK_NOT_INCREASING, ARROWIPC_CHECK_UNDECLARED)
from arrowipc._core.offsets import check_offsets
from arrowipc.errors import ArrowInvalid

from arrowipc._core.kinds cimport *


cdef inline const uint8_t* validity_ptr(ArrayData d):
    cdef object v = d.buffers[0] if d.buffers else None
    if v is None or d.null_count == 0:
        return NULL
    return (<Buffer>v).ptr


cdef int need_bytes(object buf, int64_t nbytes, str what, str where) except -1:
    cdef int64_t size = 0 if buf is None else (<Buffer>buf).size
    if nbytes > size:
        raise ArrowInvalid(f"{where}: {what} needs {nbytes} bytes, buffer has {size}")
    return 0


def check_content(ArrayData d, str where):
    """Raise ArrowInvalid unless every value-level reference of `d` stays in bounds."""
    cdef object t = d.type.storage_type
    cdef int kind = t.kind
    cdef int64_t bad = 0, i, n, w
    cdef int code = 0
    cdef int signed = 0
    cdef int64_t* sizes = NULL
    cdef Buffer b, b2
    cdef int8_t child_for_code[128]
    cdef int64_t child_lengths[128]
    cdef const uint8_t* valid = validity_ptr(d)
    cdef int64_t off = d.offset, length = d.length
    if d.length == 0:
        return

    if kind == K_BINARY or kind == K_LARGE_BINARY:
        check_offsets(d.buffers[1], off, length, 4 if kind == K_BINARY else 8,
                      d.buffers[2].size if d.buffers[2] is not None else 0, f"{where}: offsets")
        return
    if kind == K_LIST or kind == K_LARGE_LIST:
        check_offsets(d.buffers[1], off, length, 4 if kind == K_LIST else 8,
                      (<ArrayData>d.children[0]).length, f"{where}: offsets")
        return

    if kind == K_VIEW:
        need_bytes(d.buffers[1], (off + length) * 16, "the views", where)
        b = d.buffers[1]
        n = len(d.buffers) - 2
        sizes = <int64_t*>malloc(sizeof(int64_t) * (n if n > 0 else 1))
        try:
            for i in range(n):
                sizes[i] = (<Buffer>d.buffers[2 + i]).size if d.buffers[2 + i] is not None else 0
            with nogil:
                code = arrowipc_check_views(b.ptr, valid, off, length, sizes, n, &bad)
        finally:
            free(sizes)
        if code == ARROWIPC_CHECK_NEGATIVE:
            raise ArrowInvalid(f"{where}: view {bad} has a negative length or offset")
        if code == ARROWIPC_CHECK_BAD_BUFFER:
            raise ArrowInvalid(f"{where}: view {bad} refers to a data buffer that does not exist "
                               f"({n} variadic buffers)")
        if code:
            raise ArrowInvalid(f"{where}: view {bad} extends past the end of its data buffer")
        return

    if kind == K_LIST_VIEW or kind == K_LARGE_LIST_VIEW:
        w = 4 if kind == K_LIST_VIEW else 8
        need_bytes(d.buffers[1], (off + length) * w, "the list view offsets", where)
        need_bytes(d.buffers[2], (off + length) * w, "the list view sizes", where)
        b, b2 = d.buffers[1], d.buffers[2]
        n = (<ArrayData>d.children[0]).length
        with nogil:
            if w == 4:
                code = arrowipc_check_list_views32(<const int32_t*>b.ptr, <const int32_t*>b2.ptr,
                                                   valid, off, length, n, &bad)
            else:
                code = arrowipc_check_list_views64(<const int64_t*>b.ptr, <const int64_t*>b2.ptr,
                                                   valid, off, length, n, &bad)
        if code == ARROWIPC_CHECK_NEGATIVE:
            raise ArrowInvalid(f"{where}: list view {bad} has a negative offset or size")
        if code:
            raise ArrowInvalid(f"{where}: list view {bad} extends past the {n} child values")
        return

    if kind == K_SPARSE_UNION or kind == K_DENSE_UNION:
        need_bytes(d.buffers[0], off + length, "the type ids", where)
        for i in range(128):
            child_for_code[i] = -1
        for i, c in enumerate(t.type_codes):
            child_for_code[c] = <int8_t>i
            child_lengths[i] = (<ArrayData>d.children[i]).length
            if kind == K_SPARSE_UNION and child_lengths[i] < off + length:
                raise ArrowInvalid(f"{where}: sparse union child {i} has {child_lengths[i]} values, "
                                   f"expected at least {off + length}")
        b = d.buffers[0]
        if kind == K_DENSE_UNION:
            need_bytes(d.buffers[1], (off + length) * 4, "the union offsets", where)
            b2 = d.buffers[1]
            with nogil:
                code = arrowipc_check_union(<const int8_t*>b.ptr, <const int32_t*>b2.ptr, off,
                                            length, child_for_code, child_lengths, &bad)
        else:
            with nogil:
                code = arrowipc_check_union(<const int8_t*>b.ptr, NULL, off, length,
                                            child_for_code, child_lengths, &bad)
        if code == ARROWIPC_CHECK_UNDECLARED:
            raise ArrowInvalid(f"{where}: slot {bad} has type id "
                               f"{(<const int8_t*>b.ptr)[off + bad]}, not one of the declared "
                               f"{list(t.type_codes)}")
        if code == ARROWIPC_CHECK_NEGATIVE:
            raise ArrowInvalid(f"{where}: dense union offset {bad} is negative")
        if code:
            raise ArrowInvalid(f"{where}: dense union offset {bad} is past the end of its child")
        return

    if kind == K_REE:
        run_ends, values = d.children[0], d.children[1]
        if (<ArrayData>run_ends).length != (<ArrayData>values).length:
            raise ArrowInvalid(f"{where}: {(<ArrayData>run_ends).length} run ends but "
                               f"{(<ArrayData>values).length} values")
        if _null_count(<ArrayData>run_ends):
            raise ArrowInvalid(f"{where}: run ends must not be null")
        w = (<ArrayData>run_ends).type.byte_width
        n = (<ArrayData>run_ends).length
        need_bytes((<ArrayData>run_ends).buffers[1], ((<ArrayData>run_ends).offset + n) * w,
                   "the run ends", where)
        b = (<ArrayData>run_ends).buffers[1]
        i = (<ArrayData>run_ends).offset
        with nogil:
            code = arrowipc_check_run_ends(b.ptr, <int>w, i, n, &bad)
        if code == ARROWIPC_CHECK_NEGATIVE:
            raise ArrowInvalid(f"{where}: run end {bad} is not positive")
        if code:
            raise ArrowInvalid(f"{where}: run end {bad} is not greater than the one before")
        if n == 0 or _run_end_at(b, w, i + n - 1) < off + length:
            raise ArrowInvalid(f"{where}: the run ends cover "
                               f"{_run_end_at(b, w, i + n - 1) if n else 0} values, expected at "
                               f"least {off + length}")
        return

    if kind == K_DICTIONARY:
        w = t.index_type.byte_width
        need_bytes(d.buffers[1], (off + length) * w, "the indices", where)
        n = (<ArrayData>d.dictionary).length if d.dictionary is not None else 0
        b = d.buffers[1]
        signed = 1 if t.index_type.is_signed else 0
        with nogil:
            code = arrowipc_check_indices(b.ptr, <int>w, signed, valid, off, length, n, &bad)
        if code:
            raise ArrowInvalid(f"{where}: dictionary index at slot {bad} is outside the "
                               f"dictionary of {n} values")
        return


cdef int64_t _run_end_at(Buffer b, int64_t w, int64_t i):
    if w == 2:
        return (<const short*>b.ptr)[i]
    if w == 4:
        return (<const int32_t*>b.ptr)[i]
    return (<const int64_t*>b.ptr)[i]


# Ranges of the time types by unit: [0, one day) in that unit.
_DAY_IN_UNIT = {"s": 86400, "ms": 86400 * 1000, "us": 86400 * 1000000, "ns": 86400 * 1000000000}
_MILLIS_PER_DAY = 86400 * 1000


def check_values(ArrayData d, str where):
    """Raise ArrowInvalid unless the values of `d` are valid (the full level); `d` must already
    have passed check_content."""
    cdef object t = d.type.storage_type
    cdef int kind = t.kind
    cdef int64_t bad = 0, bad_byte = 0, actual, n, i
    cdef int code = 0
    cdef Buffer b, b2
    cdef const uint8_t* valid = validity_ptr(d)
    cdef int64_t off = d.offset, length = d.length
    cdef const uint8_t** data_ptrs = NULL
    cdef int utf8

    _check_null_count(d, kind, where)
    if length == 0:
        return

    if kind == K_BINARY or kind == K_LARGE_BINARY:
        if not t.is_utf8:
            return
        if d.buffers[2] is None:        # only empty values can pass the structural check
            return
        b, b2 = d.buffers[1], d.buffers[2]
        with nogil:
            if kind == K_BINARY:
                code = arrowipc_check_utf8_offsets32(<const int32_t*>b.ptr, b2.ptr, valid, off,
                                                     length, &bad, &bad_byte)
            else:
                code = arrowipc_check_utf8_offsets64(<const int64_t*>b.ptr, b2.ptr, valid, off,
                                                     length, &bad, &bad_byte)
        if code:
            raise ArrowInvalid(f"{where}: value {bad} is not valid UTF-8 (bad byte at offset "
                               f"{bad_byte} of the value)")
        return

    if kind == K_VIEW:
        b = d.buffers[1]
        n = len(d.buffers) - 2
        utf8 = 1 if t.is_utf8 else 0
        data_ptrs = <const uint8_t**>malloc(sizeof(uint8_t*) * (n if n > 0 else 1))
        if data_ptrs == NULL:
            raise MemoryError()
        try:
            for i in range(n):
                # an absent buffer has size 0, so no view that passed check_content points in it
                # an if, not a conditional expression: Cython would type that one's temporary without const
                data_ptrs[i] = NULL
                if d.buffers[2 + i] is not None:
                    data_ptrs[i] = (<Buffer>d.buffers[2 + i]).ptr
            with nogil:
                code = arrowipc_check_view_values(b.ptr, valid, off, length, data_ptrs, utf8,
                                                  &bad, &bad_byte)
        finally:
            free(data_ptrs)
        if code == ARROWIPC_CHECK_BAD_PREFIX:
            raise ArrowInvalid(f"{where}: view {bad} has a prefix that differs from the first 4 "
                               f"bytes of its data")
        if code:
            raise ArrowInvalid(f"{where}: value {bad} is not valid UTF-8 (bad byte at offset "
                               f"{bad_byte} of the value)")
        return

    if kind == K_FIXED:
        _check_fixed_values(d, t, valid, where)
        return

    if kind == K_DENSE_UNION:
        b, b2 = d.buffers[0], d.buffers[1]
        with nogil:
            code = arrowipc_check_union_offsets_monotonic(<const int8_t*>b.ptr,
                                                          <const int32_t*>b2.ptr, off, length, &bad)
        if code:
            raise ArrowInvalid(f"{where}: dense union offset {bad} is less than the previous "
                               f"offset into the same child")
        return

    if kind == K_LIST and t.name == "map":
        keys = (<ArrayData>d.children[0]).children[0]
        nulls = _null_count(<ArrayData>keys)
        if nulls:
            raise ArrowInvalid(f"{where}: map keys must not be null, found {nulls} null keys")
        return


cdef int64_t _null_count(ArrayData d) except -1:
    # The null count of a child array, counted from its bitmap when the producer left it unknown
    # (the model's null_count_of, kept here so the physical layer imports nothing above it).
    cdef Buffer v
    if d.null_count >= 0:
        return d.null_count
    if d.length == 0 or not d.buffers or d.buffers[0] is None:
        return 0
    v = d.buffers[0]
    with nogil:
        return d.length - arrowipc_count_set_bits(v.ptr, d.offset, d.length)


cdef object _decimal_at(Buffer b, int width, int scale, int64_t slot):
    # The decimal in `slot` of a little-endian fixed-width buffer, for an error message.
    import decimal
    cdef int64_t start = slot * width
    unscaled = int.from_bytes((<const char*>b.ptr)[start:start + width], "little", signed=True)
    # never rounds, and takes any int32 scale a header can claim
    wide = decimal.Context(prec=200, Emax=decimal.MAX_EMAX, Emin=decimal.MIN_EMIN)
    return decimal.Decimal(unscaled).scaleb(-scale, wide)


cdef int _check_null_count(ArrayData d, int kind, str where) except -1:
    # A known null count must match the bitmap (or be the length for null arrays, 0 for layouts
    # without a validity bitmap).
    cdef int64_t actual
    cdef Buffer v
    if d.null_count < 0:
        return 0
    if kind == K_NULL:
        actual = d.length
    elif kind in (K_SPARSE_UNION, K_DENSE_UNION, K_REE):
        actual = 0
    elif d.buffers and d.buffers[0] is not None:
        v = d.buffers[0]
        with nogil:
            actual = d.length - arrowipc_count_set_bits(v.ptr, d.offset, d.length)
    else:
        actual = 0
    if actual != d.null_count:
        raise ArrowInvalid(f"{where}: null count is {d.null_count} but the validity bitmap has "
                           f"{actual} nulls")
    return 0


cdef int _check_fixed_values(ArrayData d, object t, const uint8_t* valid, str where) except -1:
    cdef Buffer b = d.buffers[1]
    cdef int64_t bad = 0, lo = 0, hi = 0, multiple = 0
    cdef int code = 0, width = 0, precision = 0
    cdef int64_t off = d.offset, length = d.length
    if t.name.startswith("decimal"):
        width = t.byte_width
        precision = t.precision
        with nogil:
            code = arrowipc_check_decimals(b.ptr, width, precision, valid, off, length, &bad)
        if code:
            value = _decimal_at(b, width, t.scale, off + bad)
            raise ArrowInvalid(f"{where}: decimal value {value} at slot {bad} does not fit "
                               f"precision {precision}")
        return 0
    if t.name.startswith("date64"):
        width, lo, hi, multiple = 8, INT64_MIN, INT64_MAX, _MILLIS_PER_DAY
    elif t.name.startswith(("time32[", "time64[")):
        width = t.byte_width
        lo, hi = 0, _DAY_IN_UNIT[t.unit] - 1
    else:
        return 0
    with nogil:
        code = arrowipc_check_int_range(b.ptr, width, valid, off, length, lo, hi, multiple, &bad)
    if code == ARROWIPC_CHECK_NOT_MULTIPLE:
        raise ArrowInvalid(f"{where}: date64 value {_int_at(b, width, off + bad)} at slot {bad} "
                           f"is not a whole number of days")
    if code:
        raise ArrowInvalid(f"{where}: {t} value {_int_at(b, width, off + bad)} at slot {bad} is "
                           f"outside [0, {hi + 1})")
    return 0


cdef int64_t _int_at(Buffer b, int width, int64_t i):
    if width == 4:
        return (<const int32_t*>b.ptr)[i]
    return (<const int64_t*>b.ptr)[i]


def run_pending_checks(tuple pending, str where="record batch"):
    """Run the deferred content checks collected while assembling a batch.

    `pending` is (entries, names): entries are (node, label) where a label is a field name or an
    index into `names` (the plan's dotted names, so no string is built unless a check fails).
    """
    entries, names = pending
    for node, label in entries:
        name = names[label] if type(label) is int else label
        check_content(node, f"{where}: field {name!r}")
