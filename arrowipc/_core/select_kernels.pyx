# cython: language_level=3, boundscheck=False, wraparound=False
"""Selection kernels: take (gather rows by index) and filter (keep rows by a boolean mask), over
ArrayData of any layout, and the selections they run on.

A selection is an int64 buffer of row numbers into the source, where -1 stands for "a null row"
(a null index, or a null mask slot with null_selection_behavior="emit_null"). Every layout takes a
selection: fixed-width values and bits are gathered, variable-width values are gathered in two
passes (offsets, then bytes), lists turn the selection into one over their child, structs and
sparse unions pass it to their children, and views, list views, dense unions and dictionaries
gather only their fixed-width part and keep the rest (the data buffers, the child, the dictionary)
zero-copy. filter on fixed-width and boolean data skips the selection and compacts directly.

The input may come from untrusted bytes: every buffer is checked to hold the rows it is indexed
by before any pointer is formed (checked and checked_bits, shared with cast_kernels through
select_kernels.pxd), offsets read during a gather are checked against the data they point into,
and a selection is bounds-checked once when it is built. The loops run with the GIL released and
create no Python object per value.
"""
from libc.stdint cimport (uint8_t, int8_t, int16_t, int32_t, int64_t, uint16_t, uint32_t,
                          uint64_t, INT32_MAX)
from libc.string cimport memcpy, memset

from arrowipc._core.numeric_types cimport integer_t, unsigned_t, offset_t
from arrowipc._core.buffer cimport Buffer, allocate, mutable_data
from arrowipc._core.arraydata cimport ArrayData, make_array_data
from arrowipc._core.kinds cimport *
from arrowipc._core.kernels cimport arrowipc_count_set_bits

from arrowipc.errors import (ArrowCapacityError, ArrowIndexError, ArrowInvalid,
                             ArrowNotImplementedError)


# -- bounds (get_bit, set_bit, byte_at, buffer_at and out_ptr are inline, in the .pxd) ----------

cdef const uint8_t* checked(object buf, int64_t start, int64_t count, int64_t width,
                            str what) except? NULL:
    # The address of element `start` of a buffer whose elements [start, start + count) of
    # `width` bytes are checked to exist (no overflow); NULL for an absent buffer.
    if buf is None:
        if count == 0:
            return NULL
        raise ArrowInvalid(f"{what}: the buffer is missing but {count} values are indexed")
    cdef Buffer b = <Buffer>buf
    if start < 0 or count < 0:
        raise ArrowInvalid(f"{what}: negative offset {start} or length {count}")
    if count and (start > b.size // width or count > b.size // width - start):
        raise ArrowInvalid(f"{what}: elements [{start}, {start}+{count}) of {width} bytes need "
                           f"{(start + count) * width} bytes but the buffer has {b.size}")
    return b.ptr + start * width if count else b.ptr


cdef const uint8_t* checked_bits(object buf, int64_t offset, int64_t length,
                                 str what) except? NULL:
    # Bitmap bytes whose bits [offset, offset + length) are checked to exist; NULL for None.
    if buf is None:
        return NULL
    cdef Buffer b = <Buffer>buf
    if offset < 0 or length < 0:
        raise ArrowInvalid(f"{what}: negative offset {offset} or length {length}")
    if length and (offset > b.size * 8 or length > b.size * 8 - offset):
        raise ArrowInvalid(f"{what}: bits [{offset}, {offset}+{length}) need "
                           f"{(offset + length + 7) // 8} bytes but the bitmap has {b.size}")
    return b.ptr


# -- selections ---------------------------------------------------------------------------------

cdef int64_t _widen(const integer_t* src, const uint8_t* valid, int64_t voff, int64_t n,
                    int64_t bound, int64_t* dst, bint* any_null) noexcept nogil:
    # Returns the position of the first out-of-range index, or -1.
    cdef int64_t i, v
    for i in range(n):
        if valid != NULL and not get_bit(valid, voff + i):
            dst[i] = -1
            any_null[0] = True
            continue
        if integer_t is uint64_t:
            if src[i] >= <uint64_t>bound:
                return i
            v = <int64_t>src[i]
        else:
            v = <int64_t>src[i]
            if v < 0 or v >= bound:
                return i
        dst[i] = v
    return -1


def selection_from_indices(ArrayData idx, int64_t bound):
    """(int64 selection Buffer, has nulls) from an integer index array; an index outside
    [0, bound) raises ArrowIndexError as pyarrow does."""
    cdef object t = idx.type
    if not getattr(t, "is_integer", False):
        raise ArrowNotImplementedError(f"take indices must be integers, got {t}")
    cdef int64_t n = idx.length, off = idx.offset, bad = -1
    cdef int width = t.byte_width
    cdef bint signed = t.is_signed, any_null = False
    cdef const uint8_t* src = checked(buffer_at(idx, 1), off, n, width, "take indices")
    cdef const uint8_t* valid = checked_bits(buffer_at(idx, 0), off, n, "take indices validity")
    cdef Buffer out = allocate(n * 8, False)
    cdef int64_t* dst = <int64_t*>out_ptr(out)
    with nogil:
        if signed and width == 1:
            bad = _widen(<const int8_t*>src, valid, off, n, bound, dst, &any_null)
        elif signed and width == 2:
            bad = _widen(<const int16_t*>src, valid, off, n, bound, dst, &any_null)
        elif signed and width == 4:
            bad = _widen(<const int32_t*>src, valid, off, n, bound, dst, &any_null)
        elif signed:
            bad = _widen(<const int64_t*>src, valid, off, n, bound, dst, &any_null)
        elif width == 1:
            bad = _widen(<const uint8_t*>src, valid, off, n, bound, dst, &any_null)
        elif width == 2:
            bad = _widen(<const uint16_t*>src, valid, off, n, bound, dst, &any_null)
        elif width == 4:
            bad = _widen(<const uint32_t*>src, valid, off, n, bound, dst, &any_null)
        else:
            bad = _widen(<const uint64_t*>src, valid, off, n, bound, dst, &any_null)
    if bad >= 0:
        raise ArrowIndexError(f"Index {_index_value(src, width, signed, bad)} out of bounds")
    return out, any_null


cdef object _index_value(const uint8_t* src, int width, bint signed, int64_t i):
    if width == 1:
        return (<const int8_t*>src)[i] if signed else (<const uint8_t*>src)[i]
    if width == 2:
        return (<const int16_t*>src)[i] if signed else (<const uint16_t*>src)[i]
    if width == 4:
        return (<const int32_t*>src)[i] if signed else (<const uint32_t*>src)[i]
    return (<const int64_t*>src)[i] if signed else (<const uint64_t*>src)[i]


def effective_mask(ArrayData mask):
    """(bitmap Buffer at bit 0, set count) of the slots a boolean mask keeps when null slots are
    dropped: the values AND the validity."""
    cdef int64_t n = mask.length, off = mask.offset, i, count = 0
    cdef const uint8_t* vals = checked_bits(buffer_at(mask, 1), off, n, "filter mask")
    cdef const uint8_t* valid = checked_bits(buffer_at(mask, 0), off, n, "filter mask validity")
    if vals == NULL and n:
        raise ArrowInvalid("filter mask: the values bitmap is missing")
    cdef Buffer out = allocate((n + 7) // 8, True)
    cdef uint8_t* dst = out_ptr(out)
    cdef int64_t nbytes = n >> 3
    cdef uint8_t b
    with nogil:
        for i in range(nbytes):
            b = byte_at(vals, off + i * 8)
            if valid != NULL:
                b &= byte_at(valid, off + i * 8)
            dst[i] = b
            count += POP8[b]
        for i in range(nbytes * 8, n):
            if get_bit(vals, off + i) and (valid == NULL or get_bit(valid, off + i)):
                set_bit(dst, i)
                count += 1
    return out, count


def selection_from_mask(ArrayData mask, bint emit_null):
    """(int64 selection Buffer, has nulls) of the rows a boolean mask keeps; null slots are
    dropped, or kept as null rows when `emit_null`."""
    cdef int64_t n = mask.length, off = mask.offset, i, k = 0, total = 0
    cdef const uint8_t* vals = checked_bits(buffer_at(mask, 1), off, n, "filter mask")
    cdef const uint8_t* valid = checked_bits(buffer_at(mask, 0), off, n, "filter mask validity")
    if vals == NULL and n:
        raise ArrowInvalid("filter mask: the values bitmap is missing")
    cdef bint any_null = False
    with nogil:
        for i in range(n):
            if valid != NULL and not get_bit(valid, off + i):
                if emit_null:
                    total += 1
                    any_null = True
            elif get_bit(vals, off + i):
                total += 1
    cdef Buffer out = allocate(total * 8, False)
    cdef int64_t* dst = <int64_t*>out_ptr(out)
    with nogil:
        for i in range(n):
            if valid != NULL and not get_bit(valid, off + i):
                if emit_null:
                    dst[k] = -1
                    k += 1
            elif get_bit(vals, off + i):
                dst[k] = i
                k += 1
    return out, any_null


# -- take ---------------------------------------------------------------------------------------

cdef void _gather(const uint8_t* src, int64_t width, const int64_t* sel, int64_t n,
                  uint8_t* dst) noexcept nogil:
    # src is element 0 of the source; a -1 in the selection writes zeros
    cdef int64_t i, j
    if width == 8:
        for i in range(n):
            j = sel[i]
            (<uint64_t*>dst)[i] = (<const uint64_t*>src)[j] if j >= 0 else 0
    elif width == 4:
        for i in range(n):
            j = sel[i]
            (<uint32_t*>dst)[i] = (<const uint32_t*>src)[j] if j >= 0 else 0
    elif width == 2:
        for i in range(n):
            j = sel[i]
            (<uint16_t*>dst)[i] = (<const uint16_t*>src)[j] if j >= 0 else 0
    elif width == 1:
        for i in range(n):
            j = sel[i]
            dst[i] = src[j] if j >= 0 else 0
    else:
        for i in range(n):
            j = sel[i]
            if j >= 0:
                memcpy(dst + i * width, src + j * width, <size_t>width)
            else:
                memset(dst + i * width, 0, <size_t>width)


cdef int64_t _gather_bits(const uint8_t* src, int64_t soff, const int64_t* sel, int64_t n,
                          uint8_t* dst) noexcept nogil:
    # dst is zeroed; src NULL means "all set". Returns the number of set bits written.
    cdef int64_t i, j, count = 0
    for i in range(n):
        j = sel[i]
        if j >= 0 and (src == NULL or get_bit(src, soff + j)):
            dst[i >> 3] |= <uint8_t>(1 << (i & 7))
            count += 1
    return count


cdef tuple take_validity(ArrayData d, Buffer sel, int64_t n, bint sel_nulls):
    # (validity Buffer or None, null count) of the taken rows
    cdef const uint8_t* src = checked_bits(buffer_at(d, 0), d.offset, d.length, "validity")
    if src == NULL and not sel_nulls:
        return None, 0
    if src != NULL and d.null_count == 0 and not sel_nulls:
        return None, 0
    cdef Buffer out = allocate((n + 7) // 8, True)
    cdef uint8_t* dst = out_ptr(out)
    cdef const int64_t* s = <const int64_t*>sel.ptr
    cdef int64_t count
    with nogil:
        count = _gather_bits(src, d.offset, s, n, dst)
    if count == n:
        return None, 0
    return out, n - count


cdef Buffer take_fixed(object buf, int64_t offset, int64_t length, int64_t width,
                       Buffer sel, int64_t n, str what):
    cdef const uint8_t* src = checked(buf, offset, length, width, what)
    cdef Buffer out = allocate(n * width, False)
    cdef uint8_t* dst = out_ptr(out)
    cdef const int64_t* s = <const int64_t*>sel.ptr
    with nogil:
        _gather(src, width, s, n, dst)
    return out


cdef int _offset_ranges(const uint8_t* offs, int owidth, const int64_t* sel, int64_t n,
                        int64_t limit, uint8_t* out_offs, int out_width, int64_t* total,
                        int64_t* bad) noexcept nogil:
    # Pass 1 of a variable-width gather: the output offsets. 0 ok, 1 a bad source range
    # (at row bad[0]), 2 the output overflows 32-bit offsets.
    cdef int64_t i, j, a, b, pos = 0
    if out_width == 4:
        (<int32_t*>out_offs)[0] = 0
    else:
        (<int64_t*>out_offs)[0] = 0
    for i in range(n):
        j = sel[i]
        if j >= 0:
            if owidth == 4:
                a = (<const int32_t*>offs)[j]
                b = (<const int32_t*>offs)[j + 1]
            else:
                a = (<const int64_t*>offs)[j]
                b = (<const int64_t*>offs)[j + 1]
            if a < 0 or b < a or b > limit:
                bad[0] = j
                return 1
            pos += b - a
        if out_width == 4:
            if pos > INT32_MAX:
                return 2
            (<int32_t*>out_offs)[i + 1] = <int32_t>pos
        else:
            (<int64_t*>out_offs)[i + 1] = pos
    total[0] = pos
    return 0


cdef inline void _copy_value(uint8_t* dst, const uint8_t* data, int64_t a, int64_t length,
                             int64_t data_size) noexcept nogil:
    # Short values (most strings) move as one fixed 16-byte copy the compiler inlines, when the
    # source has 16 readable bytes; dst always has 16 bytes of slack.
    if length <= 16 and a <= data_size - 16:
        memcpy(dst, data + a, 16)
    else:
        memcpy(dst, data + a, <size_t>length)


cdef void _copy_ranges(const uint8_t* offs, int owidth, const uint8_t* data, const int64_t* sel,
                       int64_t n, uint8_t* dst, int64_t data_size) noexcept nogil:
    # Pass 2: the bytes of each selected row, back to back (ranges checked by pass 1)
    cdef int64_t i, j, a, b, pos = 0
    for i in range(n):
        j = sel[i]
        if j < 0:
            continue
        if owidth == 4:
            a = (<const int32_t*>offs)[j]
            b = (<const int32_t*>offs)[j + 1]
        else:
            a = (<const int64_t*>offs)[j]
            b = (<const int64_t*>offs)[j + 1]
        _copy_value(dst + pos, data, a, b - a, data_size)
        pos += b - a


cdef void _child_selection(const uint8_t* offs, int owidth, const int64_t* sel, int64_t n,
                           int64_t* dst) noexcept nogil:
    # The child rows of the selected list rows, in order (ranges checked by pass 1)
    cdef int64_t i, j, a, b, k, pos = 0
    for i in range(n):
        j = sel[i]
        if j < 0:
            continue
        if owidth == 4:
            a = (<const int32_t*>offs)[j]
            b = (<const int32_t*>offs)[j + 1]
        else:
            a = (<const int64_t*>offs)[j]
            b = (<const int64_t*>offs)[j + 1]
        for k in range(a, b):
            dst[pos] = k
            pos += 1


cdef void _fixed_list_selection(const int64_t* sel, int64_t n, int64_t base, int64_t size,
                                int64_t* dst) noexcept nogil:
    cdef int64_t i, j, k
    for i in range(n):
        j = sel[i]
        for k in range(size):
            dst[i * size + k] = (base + j) * size + k if j >= 0 else -1


cdef tuple take_offsets(ArrayData d, int owidth, int64_t limit, Buffer sel, int64_t n,
                        str what):
    # (output offsets Buffer, total) for a binary or list node
    cdef const uint8_t* offs = checked(buffer_at(d, 1), d.offset, d.length + 1, owidth,
                                       f"{what} offsets")
    cdef Buffer out = allocate((n + 1) * owidth, False)
    cdef uint8_t* dst = out_ptr(out)
    cdef const int64_t* s = <const int64_t*>sel.ptr
    cdef int64_t total = 0, bad = 0
    cdef int rc
    with nogil:
        rc = _offset_ranges(offs, owidth, s, n, limit, dst, owidth, &total, &bad)
    if rc == 1:
        raise ArrowInvalid(f"{what}: the offsets of row {bad} are decreasing or point outside "
                           f"the {limit} values they index")
    if rc == 2:
        raise ArrowCapacityError(f"{what}: the taken values exceed 2 GiB; use the large type")
    return out, total


cdef ArrayData view_of_child(ArrayData child, ArrayData parent):
    # The child rows that parent rows [0, parent.length) refer to (struct, sparse union)
    return make_array_data(child.type, parent.length, child.offset + parent.offset,
                           0 if child.null_count == 0 else -1, child.buffers, child.children,
                           child.dictionary)


def take(ArrayData d, Buffer sel, int64_t n, bint sel_nulls):
    """The rows `sel` (an int64 selection of n rows, -1 for a null row) of `d`, as new ArrayData.

    Indices must already be bounds-checked against d.length (selection_from_indices does)."""
    if sel.size < n * 8:
        raise ArrowInvalid(f"selection of {n} rows has only {sel.size} bytes")
    cdef object t = d.type
    cdef object st = t.storage_type
    cdef int kind = st.kind
    cdef int64_t off = d.offset, length = d.length, w, total, size
    cdef object validity
    cdef int64_t nulls
    cdef const uint8_t* offs
    cdef const uint8_t* data
    cdef const int64_t* s = <const int64_t*>sel.ptr
    cdef Buffer out, offsets, child_sel
    cdef ArrayData child
    cdef uint8_t* dst
    cdef int64_t* csel
    cdef object data_buf
    validity, nulls = None, 0
    if kind == K_NULL:
        return make_array_data(t, n, 0, n, [], [], None)
    if kind in (K_SPARSE_UNION, K_DENSE_UNION, K_REE):
        if kind == K_REE or sel_nulls:
            raise ArrowNotImplementedError(f"take of {t} with null rows")
    if kind not in (K_SPARSE_UNION, K_DENSE_UNION, K_REE):
        validity, nulls = take_validity(d, sel, n, sel_nulls)
    if kind == K_BOOL:
        data = checked_bits(buffer_at(d, 1), off, length, "boolean values")
        if data == NULL and length:
            raise ArrowInvalid("boolean values: the buffer is missing")
        out = allocate((n + 7) // 8, True)
        if data != NULL:
            dst = out_ptr(out)
            with nogil:
                _gather_bits(data, off, s, n, dst)
        return make_array_data(t, n, 0, nulls, [validity, out], [], None)
    if kind == K_FIXED or kind == K_DICTIONARY:
        w = st.index_type.byte_width if kind == K_DICTIONARY else st.byte_width
        out = take_fixed(buffer_at(d, 1), off, length, w, sel, n, "values")
        return make_array_data(t, n, 0, nulls, [validity, out], [], d.dictionary)
    if kind == K_VIEW:
        out = take_fixed(buffer_at(d, 1), off, length, 16, sel, n, "views")
        return make_array_data(t, n, 0, nulls, [validity, out] + list(d.buffers[2:]), [], None)
    if kind == K_LIST_VIEW or kind == K_LARGE_LIST_VIEW:
        w = 4 if kind == K_LIST_VIEW else 8
        out = take_fixed(buffer_at(d, 1), off, length, w, sel, n, "list view offsets")
        offsets = take_fixed(buffer_at(d, 2), off, length, w, sel, n, "list view sizes")
        return make_array_data(t, n, 0, nulls, [validity, out, offsets], list(d.children), None)
    if kind == K_BINARY or kind == K_LARGE_BINARY:
        w = 4 if kind == K_BINARY else 8
        data_buf = buffer_at(d, 2)
        size = 0 if data_buf is None else (<Buffer>data_buf).size
        offsets, total = take_offsets(d, w, size, sel, n, "binary")
        offs = (<Buffer>d.buffers[1]).ptr + off * w
        out = allocate(total + 16, False)
        data = (<Buffer>data_buf).ptr if data_buf is not None else NULL
        dst = out_ptr(out)
        with nogil:
            _copy_ranges(offs, w, data, s, n, dst, size)
        return make_array_data(t, n, 0, nulls, [validity, offsets, out.slice(0, total)], [],
                               None)
    if kind == K_LIST or kind == K_LARGE_LIST:
        w = 4 if kind == K_LIST else 8
        child = d.children[0]
        offsets, total = take_offsets(d, w, child.length, sel, n, "list")
        offs = (<Buffer>d.buffers[1]).ptr + off * w
        child_sel = allocate(total * 8, False)
        csel = <int64_t*>out_ptr(child_sel)
        with nogil:
            _child_selection(offs, w, s, n, csel)
        return make_array_data(t, n, 0, nulls, [validity, offsets],
                               [take(child, child_sel, total, False)], None)
    if kind == K_FIXED_SIZE_LIST:
        size = st.list_size
        child = d.children[0]
        if size and (off + length > child.length // size):
            raise ArrowInvalid(f"fixed-size list: {off + length} rows of {size} need "
                               f"{(off + length) * size} child values, the child has {child.length}")
        child_sel = allocate(n * size * 8, False)
        csel = <int64_t*>out_ptr(child_sel)
        with nogil:
            _fixed_list_selection(s, n, off, size, csel)
        return make_array_data(t, n, 0, nulls, [validity],
                               [take(child, child_sel, n * size, sel_nulls)], None)
    if kind == K_STRUCT:
        children = [take(view_of_child(c, d), sel, n, sel_nulls) for c in d.children]
        return make_array_data(t, n, 0, nulls, [validity], children, None)
    if kind == K_SPARSE_UNION:
        out = take_fixed(buffer_at(d, 0), off, length, 1, sel, n, "union type ids")
        children = [take(view_of_child(c, d), sel, n, False) for c in d.children]
        return make_array_data(t, n, 0, 0, [out], children, None)
    if kind == K_DENSE_UNION:
        return take_dense_union(d, sel, n)
    raise ArrowNotImplementedError(f"take of {t}")


cdef ArrayData take_dense_union(ArrayData d, Buffer sel, int64_t n):
    # Each child keeps, in order, the child rows the selected rows point at, so offsets stay
    # increasing per child (the format requires it).
    cdef object st = d.type.storage_type
    cdef list codes = list(st.type_codes)
    cdef int nchild = len(codes), k
    cdef int8_t[128] child_of
    cdef int64_t[128] child_len
    cdef int64_t[128] counts
    cdef int64_t* cursel[128]
    cdef int64_t i, j, c, o
    cdef int bad_row = -1
    memset(child_of, 0xFF, sizeof(child_of))
    for k in range(nchild):
        if not 0 <= codes[k] < 128:
            raise ArrowInvalid(f"dense union: type code {codes[k]} outside 0..127")
        child_of[codes[k]] = k
        child_len[k] = (<ArrayData>d.children[k]).length
        counts[k] = 0
    cdef const int8_t* ids = <const int8_t*>checked(buffer_at(d, 0), d.offset, d.length, 1,
                                                    "union type ids")
    cdef const int32_t* offs = <const int32_t*>checked(buffer_at(d, 1), d.offset, d.length, 4,
                                                       "union offsets")
    cdef const int64_t* s = <const int64_t*>sel.ptr
    cdef Buffer out_ids = allocate(n, False)
    cdef Buffer out_offs = allocate(n * 4, False)
    cdef int8_t* dids = <int8_t*>out_ptr(out_ids)
    cdef int32_t* doffs = <int32_t*>out_ptr(out_offs)
    with nogil:
        for i in range(n):
            j = s[i]
            c = ids[j]
            if c < 0 or child_of[c] < 0 or offs[j] < 0 or offs[j] >= child_len[child_of[c]]:
                bad_row = <int>min(j, 2147483647)
                break
            counts[child_of[c]] += 1
    if bad_row >= 0:
        raise ArrowInvalid(f"dense union: row {bad_row} has an unknown type id or an offset "
                           f"outside its child")
    cdef list sels = [allocate(counts[k] * 8, False) for k in range(nchild)]
    for k in range(nchild):
        cursel[k] = <int64_t*>out_ptr(<Buffer>sels[k])
        counts[k] = 0
    with nogil:
        for i in range(n):
            j = s[i]
            c = ids[j]
            k = child_of[c]
            o = counts[k]
            cursel[k][o] = offs[j]
            dids[i] = <int8_t>c
            doffs[i] = <int32_t>o
            counts[k] = o + 1
    children = [take(d.children[k], sels[k], counts[k], False) for k in range(nchild)]
    return make_array_data(d.type, n, 0, 0, [out_ids, out_offs], children, None)


# -- filter (direct compaction for fixed-width and boolean layouts) ------------------------------

cdef void _compact_words(const unsigned_t* src, const uint8_t* mask, int64_t n,
                         unsigned_t* dst) noexcept nogil:
    # Branch-free: every row of a mixed mask byte is written at the output cursor and the cursor
    # moves on only for kept rows (random masks make a branch per row mispredict half the
    # time). dst has room for 8 rows past the kept ones. Zero bytes are skipped, full ones
    # copied as a block.
    cdef int64_t i = 0, k = 0, nbytes = n >> 3
    cdef int bit
    cdef uint8_t m
    for i in range(nbytes):
        m = mask[i]
        if m == 0:
            continue
        if m == 0xFF:
            memcpy(dst + k, src + i * 8, 8 * sizeof(unsigned_t))
            k += 8
            continue
        for bit in range(8):
            dst[k] = src[i * 8 + bit]
            k += (m >> bit) & 1
    for i in range(nbytes * 8, n):
        if get_bit(mask, i):
            dst[k] = src[i]
            k += 1


cdef void _compact(const uint8_t* src, int64_t width, const uint8_t* mask, int64_t n,
                   uint8_t* dst) noexcept nogil:
    # src is element 0; mask bits start at bit 0
    cdef int64_t i, k = 0
    if width == 8:
        _compact_words(<const uint64_t*>src, mask, n, <uint64_t*>dst)
    elif width == 4:
        _compact_words(<const uint32_t*>src, mask, n, <uint32_t*>dst)
    elif width == 2:
        _compact_words(<const uint16_t*>src, mask, n, <uint16_t*>dst)
    elif width == 1:
        _compact_words(<const uint8_t*>src, mask, n, <uint8_t*>dst)
    else:
        for i in range(n):
            if get_bit(mask, i):
                memcpy(dst + k * width, src + i * width, <size_t>width)
                k += 1


# PEXT8[m << 8 | s]: the bits of s where m has a one, packed to the low end; POP8: set bits.
# Bit compaction then costs one lookup per 8 rows instead of a branch per row.
cdef uint8_t PEXT8[65536]
cdef uint8_t POP8[256]


cdef void _init_tables() noexcept:
    cdef int m, v, b, k
    cdef uint8_t out
    for m in range(256):
        POP8[m] = <uint8_t>(((m >> 0) & 1) + ((m >> 1) & 1) + ((m >> 2) & 1) + ((m >> 3) & 1)
                            + ((m >> 4) & 1) + ((m >> 5) & 1) + ((m >> 6) & 1) + ((m >> 7) & 1))
        for v in range(256):
            out = 0
            k = 0
            for b in range(8):
                if (m >> b) & 1:
                    out |= <uint8_t>(((v >> b) & 1) << k)
                    k += 1
            PEXT8[(m << 8) | v] = out


_init_tables()


cdef int64_t _compact_bits(const uint8_t* src, int64_t soff, const uint8_t* mask, int64_t n,
                           uint8_t* dst) noexcept nogil:
    # The bits of src (from soff; NULL means all set) where the mask (from bit 0) is set,
    # packed from bit 0 of dst (zeroed). Returns the number of set bits written.
    cdef int64_t i, nbytes = n >> 3, ob = 0, count = 0, k = 0
    cdef uint64_t acc = 0
    cdef int nacc = 0
    cdef uint8_t m, v
    for i in range(nbytes):
        m = mask[i]
        if m == 0:
            continue
        v = PEXT8[(<int>m << 8) | (0xFF if src == NULL else byte_at(src, soff + i * 8))]
        count += POP8[v]
        acc |= (<uint64_t>v) << nacc
        nacc += POP8[m]
        while nacc >= 8:
            dst[ob] = <uint8_t>acc
            ob += 1
            acc >>= 8
            nacc -= 8
    k = ob * 8 + nacc
    if nacc:
        dst[ob] = <uint8_t>acc
    for i in range(nbytes * 8, n):
        if get_bit(mask, i):
            if src == NULL or get_bit(src, soff + i):
                dst[k >> 3] |= <uint8_t>(1 << (k & 7))
                count += 1
            k += 1
    return count


cdef int _filter_offsets(const offset_t* offs, const uint8_t* mask, int64_t n, int64_t limit,
                         offset_t* out_offs, int64_t* total, int64_t* bad) noexcept nogil:
    # The output offsets of the kept rows of a binary node: 0 ok, 1 a bad range (row bad[0]),
    # 2 more than 2 GiB for 32-bit offsets. Branch-free per row (every row writes at the
    # cursor, kept rows advance it; out_offs has one slot of slack); zero mask bytes skipped.
    cdef int64_t i, j, a, b, k = 0, pos = 0
    cdef int64_t nbytes = (n + 7) >> 3, end
    cdef int keep, broken = 0
    cdef uint8_t m
    out_offs[0] = 0
    for j in range(nbytes):
        m = mask[j]
        if m == 0:
            continue
        end = j * 8 + 8 if j * 8 + 8 <= n else n
        for i in range(j * 8, end):
            keep = (m >> (i & 7)) & 1
            a = offs[i]
            b = offs[i + 1]
            broken |= (a < 0) | (b < a) | (b > limit)
            pos += keep * (b - a)
            out_offs[k + 1] = <offset_t>pos
            k += keep
    if broken:
        # find the row, the slow way: only kept rows are read by the copy
        for i in range(n):
            if get_bit(mask, i):
                a = offs[i]
                b = offs[i + 1]
                if a < 0 or b < a or b > limit:
                    bad[0] = i
                    return 1
    if offset_t is int32_t and pos > INT32_MAX:
        return 2
    total[0] = pos
    return 0


cdef void _filter_values(const offset_t* offs, const uint8_t* data, int64_t data_size,
                         const uint8_t* mask, int64_t n, uint8_t* dst) noexcept nogil:
    # The bytes of the kept rows, back to back (kept ranges checked by _filter_offsets). Short
    # values are copied whether kept or not and overwritten by the next kept one (dst has 16
    # bytes of slack); only long kept values take a sized copy. Zero mask bytes are skipped.
    cdef int64_t i, j, a, length, pos = 0, end
    cdef int64_t nbytes = (n + 7) >> 3
    cdef int keep
    cdef uint8_t m
    for j in range(nbytes):
        m = mask[j]
        if m == 0:
            continue
        end = j * 8 + 8 if j * 8 + 8 <= n else n
        for i in range(j * 8, end):
            keep = (m >> (i & 7)) & 1
            a = offs[i]
            length = offs[i + 1] - a
            if length <= 16 and 0 <= a <= data_size - 16:
                memcpy(dst + pos, data + a, 16)
            elif keep:
                memcpy(dst + pos, data + a, <size_t>length)
            pos += keep * length


def filter_binary(ArrayData d, Buffer mask, int64_t kept):
    """Rows of a binary or string node (32 or 64-bit offsets) whose bit in `mask` (at bit 0,
    `kept` bits set) is set: offsets and bytes compacted in two passes over the mask."""
    cdef object t = d.type
    cdef int kind = t.storage_type.kind
    cdef int w = 4 if kind == K_BINARY else 8
    cdef int64_t off = d.offset, n = d.length, total = 0, bad = 0, count, nulls = 0
    if mask.size * 8 < n:
        raise ArrowInvalid(f"filter mask of {mask.size * 8} bits for {n} rows")
    cdef const uint8_t* m = mask.ptr
    cdef const uint8_t* offs = checked(buffer_at(d, 1), off, n + 1, w, "binary offsets")
    cdef object data_buf = buffer_at(d, 2)
    cdef int64_t size = 0 if data_buf is None else (<Buffer>data_buf).size
    cdef const uint8_t* data = (<Buffer>data_buf).ptr if data_buf is not None else NULL
    cdef const uint8_t* valid = checked_bits(buffer_at(d, 0), off, n, "validity")
    cdef Buffer vout = None
    cdef uint8_t* vdst
    if valid != NULL and d.null_count != 0:
        vout = allocate((kept + 7) // 8, True)
        vdst = out_ptr(vout)
        with nogil:
            count = _compact_bits(valid, off, m, n, vdst)
        nulls = kept - count
        if nulls == 0:
            vout = None
    cdef Buffer offsets = allocate((kept + 2) * w, False)    # one slot of slack
    cdef uint8_t* odst = out_ptr(offsets)
    cdef int rc
    with nogil:
        if w == 4:
            rc = _filter_offsets(<const int32_t*>offs, m, n, size, <int32_t*>odst, &total, &bad)
        else:
            rc = _filter_offsets(<const int64_t*>offs, m, n, size, <int64_t*>odst, &total, &bad)
    if rc == 1:
        raise ArrowInvalid(f"binary: the offsets of row {bad} are decreasing or point outside "
                           f"the {size} values they index")
    if rc == 2:
        raise ArrowCapacityError("binary: the kept values exceed 2 GiB; use the large type")
    cdef Buffer out = allocate(total + 16, False)
    cdef uint8_t* dst = out_ptr(out)
    with nogil:
        if w == 4:
            _filter_values(<const int32_t*>offs, data, size, m, n, dst)
        else:
            _filter_values(<const int64_t*>offs, data, size, m, n, dst)
    return make_array_data(t, kept, 0, nulls,
                           [vout, offsets.slice(0, (kept + 1) * w), out.slice(0, total)], [],
                           None)


def filter_fixed(ArrayData d, Buffer mask, int64_t kept):
    """Rows of a fixed-width, boolean or dictionary node whose bit in `mask` (at bit 0, no
    nulls, `kept` bits set) is set; None for other layouts (the caller takes a selection)."""
    cdef object t = d.type
    cdef object st = t.storage_type
    cdef int kind = st.kind
    cdef int64_t off = d.offset, n = d.length, w, count, nulls = 0
    if kind not in (K_FIXED, K_BOOL, K_DICTIONARY):
        return None
    if mask.size * 8 < n:
        raise ArrowInvalid(f"filter mask of {mask.size * 8} bits for {n} rows")
    cdef const uint8_t* m = mask.ptr
    cdef const uint8_t* valid = checked_bits(buffer_at(d, 0), off, n, "validity")
    cdef const uint8_t* src
    cdef Buffer out, vout = None
    cdef uint8_t* dst
    if valid != NULL and d.null_count != 0:
        vout = allocate((kept + 7) // 8, True)
        dst = out_ptr(vout)
        with nogil:
            count = _compact_bits(valid, off, m, n, dst)
        nulls = kept - count
        if nulls == 0:
            vout = None
    if kind == K_BOOL:
        src = checked_bits(buffer_at(d, 1), off, n, "boolean values")
        if src == NULL and n:
            raise ArrowInvalid("boolean values: the buffer is missing")
        out = allocate((kept + 7) // 8, True)
        dst = out_ptr(out)
        if n:
            with nogil:
                _compact_bits(src, off, m, n, dst)
        return make_array_data(t, kept, 0, nulls, [vout, out], [], None)
    w = st.index_type.byte_width if kind == K_DICTIONARY else st.byte_width
    src = checked(buffer_at(d, 1), off, n, w, "values")
    out = allocate((kept + 8) * w, False)      # slack for the branch-free writes
    dst = out_ptr(out)
    if n:
        with nogil:
            _compact(src, w, m, n, dst)
    return make_array_data(t, kept, 0, nulls, [vout, out.slice(0, kept * w)], [], d.dictionary)


def invert_bits(Buffer bits, int64_t n):
    """A new bitmap of n bits at bit 0: the complement of `bits` (tail bits zero)."""
    cdef const uint8_t* src = checked_bits(bits, 0, n, "bitmap")
    cdef Buffer out = allocate((n + 7) // 8, True)
    cdef uint8_t* dst = out_ptr(out)
    cdef int64_t i, nbytes = n // 8
    with nogil:
        for i in range(nbytes):
            dst[i] = <uint8_t>~src[i]
        for i in range(nbytes * 8, n):
            if not get_bit(src, i):
                set_bit(dst, i)
    return out


def fill_selection(ArrayData d):
    """(int64 selection Buffer) picking row i where `d` is valid and row d.length (a fill value
    placed after the data) where it is null."""
    cdef int64_t n = d.length, off = d.offset, i
    cdef const uint8_t* valid = checked_bits(buffer_at(d, 0), off, n, "validity")
    cdef Buffer out = allocate(n * 8, False)
    cdef int64_t* dst = <int64_t*>out_ptr(out)
    with nogil:
        for i in range(n):
            dst[i] = i if valid == NULL or get_bit(valid, off + i) else n
    return out


def split_selection(Buffer sel, int64_t n, list starts):
    """A selection over rows of several chunks (chunk k holds rows [starts[k], starts[k+1]))
    split into ([per-chunk selection of local rows], permutation): the per-chunk selections keep
    the order rows appear in, and permutation[i] is where output row i sits once the per-chunk
    results are concatenated (-1 for a null row). Taking chunk by chunk this way avoids
    concatenating whole columns first."""
    cdef int64_t nchunks = len(starts) - 1, i, j, k, lo, hi, mid
    if sel.size < n * 8:
        raise ArrowInvalid(f"selection of {n} rows has only {sel.size} bytes")
    cdef const int64_t* s = <const int64_t*>sel.ptr
    cdef Buffer bounds = allocate((nchunks + 1) * 8, False)
    cdef int64_t* b = <int64_t*>out_ptr(bounds)
    for k in range(nchunks + 1):
        b[k] = starts[k]
    cdef Buffer which = allocate(n * 8, False)
    cdef int64_t* w = <int64_t*>out_ptr(which)
    cdef Buffer counts_buf = allocate(nchunks * 8, True)
    cdef int64_t* counts = <int64_t*>out_ptr(counts_buf)
    with nogil:
        for i in range(n):
            j = s[i]
            if j < 0:
                w[i] = -1
                continue
            lo = 0
            hi = nchunks - 1
            while lo < hi:                  # the last chunk whose start is <= j
                mid = (lo + hi + 1) >> 1
                if b[mid] <= j:
                    lo = mid
                else:
                    hi = mid - 1
            w[i] = lo
            counts[lo] += 1
    cdef list parts = [allocate(counts[k] * 8, False) for k in range(nchunks)]
    cdef Buffer bases_buf = allocate(nchunks * 8, False)
    cdef int64_t* bases = <int64_t*>out_ptr(bases_buf)
    cdef Buffer fill_buf = allocate(nchunks * 8, True)
    cdef int64_t* fill = <int64_t*>out_ptr(fill_buf)
    cdef Buffer ptrs_buf = allocate(nchunks * 8, False)
    cdef int64_t** ptrs = <int64_t**>out_ptr(ptrs_buf)
    cdef int64_t base = 0
    for k in range(nchunks):
        bases[k] = base
        base += counts[k]
        ptrs[k] = <int64_t*>out_ptr(<Buffer>parts[k])
    cdef Buffer perm = allocate(n * 8, False)
    cdef int64_t* p = <int64_t*>out_ptr(perm)
    with nogil:
        for i in range(n):
            k = w[i]
            if k < 0:
                p[i] = -1
                continue
            ptrs[k][fill[k]] = s[i] - b[k]
            p[i] = bases[k] + fill[k]
            fill[k] += 1
    return [(parts[k], counts[k]) for k in range(nchunks)], perm
