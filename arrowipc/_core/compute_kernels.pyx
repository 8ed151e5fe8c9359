# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""Comparison, Kleene logic, membership and arithmetic kernels (what expressions evaluate to).

Operands are either typed contiguous arrays of one numeric type (numbers, and temporal values
as their integers), already promoted to a common type by arrowipc/data/compute.py, or the
buffers of binary/string ArrayData and of bit-packed booleans. An operand of length 1 is a
scalar, broadcast over the rows. Results are bit-packed (comparisons, membership, logic) or
typed arrays (arithmetic).

Buffers may come from untrusted bytes: every buffer is checked to hold the rows it is read at
before a pointer is formed, and binary offsets are checked against the data as they are read.
The loops run with the GIL released and create no Python object per value.
"""
from libc.stdint cimport (uint8_t, int8_t, int16_t, int32_t, int64_t, uint16_t, uint32_t,
                          uint64_t)
from libc.string cimport memcmp, memcpy, memset
from libc.stdlib cimport malloc, free
from libc.math cimport isnan, NAN

from arrowipc._core.numeric_types cimport numeric_t, integer_t, floating_t
from arrowipc._core.buffer cimport Buffer, allocate, mutable_data
from arrowipc._core.arraydata cimport ArrayData
from arrowipc._core.select_kernels cimport get_bit, set_bit, byte_at, buffer_at, checked, checked_bits

from arrowipc.errors import ArrowInvalid


cdef extern from *:
    """
    #define ARROWIPC_ADD_OVF(a, b, r) __builtin_add_overflow((a), (b), (r))
    #define ARROWIPC_SUB_OVF(a, b, r) __builtin_sub_overflow((a), (b), (r))
    #define ARROWIPC_MUL_OVF(a, b, r) __builtin_mul_overflow((a), (b), (r))
    """
    bint ARROWIPC_ADD_OVF(...) nogil
    bint ARROWIPC_SUB_OVF(...) nogil
    bint ARROWIPC_MUL_OVF(...) nogil


cdef extern from *:
    """
    /* 64-bit integer comparisons have no SSE2 instruction, so the count loop over int64 is
       compiled a second time for AVX2 (vpcmpgtq) and chosen at run time where the CPU has it */
    #if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
    #define ARROWIPC_HAVE_AVX2_COUNT 1
    #define ARROWIPC_COUNT_I64(NAME, EXPR) \
        __attribute__((target("avx2"))) static int64_t NAME(const int64_t* a, int64_t v, \
                                                           int64_t n) { \
            int64_t c = 0; \
            for (int64_t i = 0; i < n; i++) c += (EXPR); \
            return c; \
        }
    ARROWIPC_COUNT_I64(arrowipc_count_i64_eq, a[i] == v)
    ARROWIPC_COUNT_I64(arrowipc_count_i64_ne, a[i] != v)
    ARROWIPC_COUNT_I64(arrowipc_count_i64_lt, a[i] < v)
    ARROWIPC_COUNT_I64(arrowipc_count_i64_le, a[i] <= v)
    ARROWIPC_COUNT_I64(arrowipc_count_i64_gt, a[i] > v)
    ARROWIPC_COUNT_I64(arrowipc_count_i64_ge, a[i] >= v)
    static int arrowipc_count_i64_avx2(int op, const int64_t* a, int64_t v, int64_t n,
                                       int64_t* out) {
        if (!__builtin_cpu_supports("avx2")) return 0;
        switch (op) {
            case 0: *out = arrowipc_count_i64_eq(a, v, n); break;
            case 1: *out = arrowipc_count_i64_ne(a, v, n); break;
            case 2: *out = arrowipc_count_i64_lt(a, v, n); break;
            case 3: *out = arrowipc_count_i64_le(a, v, n); break;
            case 4: *out = arrowipc_count_i64_gt(a, v, n); break;
            default: *out = arrowipc_count_i64_ge(a, v, n); break;
        }
        return 1;
    }
    #else
    static int arrowipc_count_i64_avx2(int op, const int64_t* a, int64_t v, int64_t n,
                                       int64_t* out) { return 0; }
    #endif
    """
    int arrowipc_count_i64_avx2(int op, const int64_t* a, int64_t v, int64_t n,
                                int64_t* out) nogil


# comparison codes (arrowipc/data/compute.py passes them)
OP_CODES = {"==": 0, "!=": 1, "<": 2, "<=": 3, ">": 4, ">=": 5}
# arithmetic codes
ARITH_CODES = {"+": 0, "-": 1, "*": 2, "/": 3}
# kernel error codes, raised as ArrowInvalid with these messages
cdef int ERR_OK = 0, ERR_OVERFLOW = 1, ERR_DIV_ZERO = 2, ERR_OFFSETS = 3

cdef inline bint _cmp_result(int op, int c) noexcept nogil:
    # c: <0, 0, >0 as memcmp gives
    if op == 0:
        return c == 0
    if op == 1:
        return c != 0
    if op == 2:
        return c < 0
    if op == 3:
        return c <= 0
    if op == 4:
        return c > 0
    return c >= 0


cdef inline bint _cmp_num(int op, numeric_t x, numeric_t y) noexcept nogil:
    # C's comparisons give IEEE semantics for NaN: every one false but !=, as pyarrow's
    if op == 0:
        return x == y
    if op == 1:
        return x != y
    if op == 2:
        return x < y
    if op == 3:
        return x <= y
    if op == 4:
        return x > y
    return x >= y


cdef Buffer _bits_out(int64_t n):
    return allocate((n + 7) // 8, True)


cdef void _compare_loop(int op, const numeric_t* a, int64_t step_a, const numeric_t* b, int64_t step_b,
                       int64_t n, uint8_t* dst) noexcept nogil:
    # one loop per operator and per operand shape, each with its constants known to the C
    # compiler (the operator tested once, not once a value; a scalar's step not multiplied)
    if step_a == 1 and step_b == 0:
        if op == 0:
            _compare_shaped(0, a, 1, b, 0, n, dst)
        elif op == 1:
            _compare_shaped(1, a, 1, b, 0, n, dst)
        elif op == 2:
            _compare_shaped(2, a, 1, b, 0, n, dst)
        elif op == 3:
            _compare_shaped(3, a, 1, b, 0, n, dst)
        elif op == 4:
            _compare_shaped(4, a, 1, b, 0, n, dst)
        else:
            _compare_shaped(5, a, 1, b, 0, n, dst)
    elif step_a == 1 and step_b == 1:
        if op == 0:
            _compare_shaped(0, a, 1, b, 1, n, dst)
        elif op == 1:
            _compare_shaped(1, a, 1, b, 1, n, dst)
        elif op == 2:
            _compare_shaped(2, a, 1, b, 1, n, dst)
        elif op == 3:
            _compare_shaped(3, a, 1, b, 1, n, dst)
        elif op == 4:
            _compare_shaped(4, a, 1, b, 1, n, dst)
        else:
            _compare_shaped(5, a, 1, b, 1, n, dst)
    else:
        _compare_shaped(op, a, step_a, b, step_b, n, dst)


cdef inline void _compare_shaped(int op, const numeric_t* a, int64_t step_a, const numeric_t* b,
                                 int64_t step_b, int64_t n, uint8_t* dst) noexcept nogil:
    # 8 results per output byte, without a branch per value (random data would mispredict)
    cdef int64_t i, j, k, full = n >> 3
    cdef uint8_t byte
    for i in range(full):
        byte = 0
        for j in range(8):
            k = i * 8 + j
            byte |= <uint8_t>(_cmp_num(op, a[k * step_a], b[k * step_b]) << j)
        dst[i] = byte
    if n & 7:
        byte = 0
        for j in range(n & 7):
            k = full * 8 + j
            byte |= <uint8_t>(_cmp_num(op, a[k * step_a], b[k * step_b]) << j)
        dst[full] = byte


def compare_numbers(int op, const numeric_t[::1] a, const numeric_t[::1] b, int64_t n):
    """Bitmap of `a op b` over n rows (an operand of length 1 is broadcast)."""
    cdef int64_t la = a.shape[0], lb = b.shape[0]
    if (la != n and la != 1) or (lb != n and lb != 1):
        raise ValueError(f"operands of {la} and {lb} values for {n} rows")
    cdef Buffer out = _bits_out(n)
    if n == 0:
        return out
    cdef uint8_t* dst = mutable_data(out)
    cdef int64_t step_a = 1 if la == n else 0, step_b = 1 if lb == n else 0
    with nogil:
        _compare_loop(op, &a[0], step_a, &b[0], step_b, n, dst)
    return out


cdef inline int64_t _count_shaped(int op, const numeric_t* a, numeric_t v, int64_t n) noexcept nogil:
    cdef int64_t i, c = 0
    for i in range(n):
        c += _cmp_num(op, a[i], v)
    return c


def count_compare(int op, const numeric_t[::1] values, const numeric_t[::1] value):
    """How many of `values` satisfy `values[i] op value[0]` (a count, no bitmap made: a
    filtered count_rows over a column without nulls)."""
    if value.shape[0] != 1:
        raise ValueError(f"one value to compare with, got {value.shape[0]}")
    cdef int64_t n = values.shape[0], c = 0
    if n == 0:
        return 0
    cdef const numeric_t* a = &values[0]
    cdef numeric_t v = value[0]
    with nogil:
        c = _count_dispatch(op, a, v, n)
    return c


cdef inline int64_t _count_dispatch(int op, const numeric_t* a, numeric_t v,
                                    int64_t n) noexcept nogil:
    cdef int64_t c = 0
    if numeric_t is int64_t:
        if arrowipc_count_i64_avx2(op, a, v, n, &c):
            return c
    if op == 0:
        return _count_shaped(0, a, v, n)
    if op == 1:
        return _count_shaped(1, a, v, n)
    if op == 2:
        return _count_shaped(2, a, v, n)
    if op == 3:
        return _count_shaped(3, a, v, n)
    if op == 4:
        return _count_shaped(4, a, v, n)
    return _count_shaped(5, a, v, n)


cdef int _check_spans(Buffer data, const int64_t[::1] spans, int64_t width) except -1:
    """ValueError unless every (byte offset, count) pair of `spans` lies inside `data` (no
    overflow) and starts at a multiple of the value width."""
    cdef int64_t size = data.size, k, start, n
    if spans.shape[0] % 2:
        raise ValueError(f"spans are (offset, count) pairs, got {spans.shape[0]} numbers")
    for k in range(spans.shape[0] // 2):
        start, n = spans[2 * k], spans[2 * k + 1]
        if start < 0 or n < 0 or start > size or n > (size - start) // width:
            raise ValueError(f"span {k} ({n} values of {width} bytes at byte {start}) does not "
                             f"lie inside the {size} bytes given")
        if (<size_t>(data.ptr + start)) % width:
            raise ValueError(f"span {k} at byte {start} is not aligned to its {width}-byte "
                             f"values")
    return 0


cdef inline int64_t _count_spans(int op, const uint8_t* base, const int64_t* spans,
                                 int64_t pairs, numeric_t v) noexcept nogil:
    cdef int64_t k, n, total = 0
    for k in range(pairs):
        n = spans[2 * k + 1]
        if n:
            total += _count_dispatch(op, <const numeric_t*>(base + spans[2 * k]), v, n)
    return total


def count_compare_spans(int op, Buffer data, const int64_t[::1] spans,
                        const numeric_t[::1] value):
    """How many values satisfy `value op value[0]` in the runs of values of `data` that
    `spans` lists as (byte offset, count) pairs: a filtered count over every batch of a file
    in one call, the GIL released once. Every span is checked to lie inside `data` (no
    overflow) and to start at a multiple of the value width, before any value is read:
    ValueError otherwise, naming the span."""
    if value.shape[0] != 1:
        raise ValueError(f"one value to compare with, got {value.shape[0]}")
    _check_spans(data, spans, sizeof(numeric_t))
    cdef int64_t pairs = spans.shape[0] // 2, total = 0
    if pairs == 0:
        return 0
    cdef numeric_t v = value[0]
    with nogil:
        total = _count_spans(op, data.ptr, &spans[0], pairs, v)
    return total


def count_compare_files(int op, list data, list spans, const numeric_t[::1] value):
    """count_compare_spans over several buffers (files) at once: `spans[i]`, an int64 array
    of (byte offset, count) pairs, lists runs of values in `data[i]`; all are checked first,
    then counted with the GIL released once for all of them (a thread counting many files
    takes the GIL from the one planning them once, not once a file)."""
    if value.shape[0] != 1:
        raise ValueError(f"one value to compare with, got {value.shape[0]}")
    cdef Py_ssize_t m = len(data), i
    if len(spans) != m:
        raise ValueError(f"{m} buffers but {len(spans)} span lists")
    cdef const int64_t[::1] one
    cdef const uint8_t** bases = <const uint8_t**>malloc(sizeof(uint8_t*) * (m + 1))
    cdef const int64_t** lists = <const int64_t**>malloc(sizeof(int64_t*) * (m + 1))
    cdef int64_t* pairs = <int64_t*>malloc(sizeof(int64_t) * (m + 1))
    cdef int64_t total = 0
    cdef numeric_t v = value[0]
    try:
        if not (bases and lists and pairs):
            raise MemoryError()
        for i in range(m):
            one = spans[i]
            _check_spans(<Buffer?>data[i], one, sizeof(numeric_t))
            bases[i] = (<Buffer>data[i]).ptr
            pairs[i] = one.shape[0] // 2
            lists[i] = &one[0] if pairs[i] else NULL
        # the arrays stay alive in `spans`, the buffers in `data`, both held by the caller
        with nogil:
            for i in range(m):
                if pairs[i]:
                    total += _count_spans(op, bases[i], lists[i], pairs[i], v)
    finally:
        free(bases)
        free(lists)
        free(pairs)
    return total


cdef inline int _cmp128(const int64_t* x, const int64_t* y) noexcept nogil:
    # little-endian two's complement 128-bit integers: the high words signed, the low unsigned
    if x[1] != y[1]:
        return -1 if x[1] < y[1] else 1
    if x[0] != y[0]:
        return -1 if <uint64_t>x[0] < <uint64_t>y[0] else 1
    return 0


def compare_decimal128(int op, const int64_t[::1] a, const int64_t[::1] b, int64_t n):
    """Bitmap of `a op b` over n rows of 128-bit decimals of one scale, each given as its two
    64-bit words (low, high); an operand of one value is broadcast."""
    cdef int64_t la = a.shape[0] // 2, lb = b.shape[0] // 2, i
    if a.shape[0] % 2 or b.shape[0] % 2 or (la != n and la != 1) or (lb != n and lb != 1):
        raise ValueError(f"operands of {a.shape[0]} and {b.shape[0]} words for {n} rows")
    cdef Buffer out = _bits_out(n)
    if n == 0:
        return out
    cdef uint8_t* dst = mutable_data(out)
    cdef int64_t step_a = 2 if la == n else 0, step_b = 2 if lb == n else 0
    with nogil:
        for i in range(n):
            if _cmp_result(op, _cmp128(&a[i * step_a], &b[i * step_b])):
                set_bit(dst, i)
    return out


# -- binary and string values ----------------------------------------------------------------------

cdef struct BinaryView:
    const uint8_t* offsets      # at the array's offset
    int width                   # 4 or 8
    const uint8_t* data
    int64_t data_size
    int64_t length


cdef inline int64_t _offset_at(const BinaryView* v, int64_t i) noexcept nogil:
    if v.width == 4:
        return (<const int32_t*>v.offsets)[i]
    return (<const int64_t*>v.offsets)[i]


cdef inline int _value(const BinaryView* v, int64_t i, const uint8_t** p, int64_t* size
                       ) noexcept nogil:
    # the bytes of value i, checked against the data; ERR_OFFSETS when they are out of it
    cdef int64_t start = _offset_at(v, i), end = _offset_at(v, i + 1)
    if start < 0 or end < start or end > v.data_size:
        return ERR_OFFSETS
    p[0] = v.data + start
    size[0] = end - start
    return ERR_OK


cdef int _binary_view(ArrayData d, BinaryView* v, str what) except -1:
    cdef int width = 8 if d.type.name in ("large_string", "large_binary") else 4
    v.width = width
    v.length = d.length
    v.offsets = checked(buffer_at(d, 1), d.offset, d.length + 1, width, what + " offsets")
    data = buffer_at(d, 2)
    if data is None:
        v.data, v.data_size = NULL, 0
    else:
        v.data, v.data_size = (<Buffer>data).ptr, (<Buffer>data).size
    if v.offsets == NULL:
        raise ArrowInvalid(f"{what}: the offsets buffer is missing")
    return 0


cdef inline int _bytes_cmp(const uint8_t* p, int64_t lp, const uint8_t* q, int64_t lq
                           ) noexcept nogil:
    cdef int64_t m = lp if lp < lq else lq
    cdef int c = memcmp(p, q, m) if m else 0
    if c != 0:
        return c
    return -1 if lp < lq else (1 if lp > lq else 0)


def compare_binary(int op, ArrayData a, ArrayData b, int64_t n):
    """Bitmap of `a op b` over n rows for string/binary (32- or 64-bit offset) arrays, compared
    bytewise; an operand of one row is broadcast."""
    cdef BinaryView va, vb
    _binary_view(a, &va, "left operand")
    _binary_view(b, &vb, "right operand")
    if (va.length != n and va.length != 1) or (vb.length != n and vb.length != 1):
        raise ValueError(f"operands of {va.length} and {vb.length} values for {n} rows")
    cdef Buffer out = _bits_out(n)
    if n == 0:
        return out
    cdef uint8_t* dst = mutable_data(out)
    cdef int64_t i, ia, ib, lp = 0, lq = 0
    cdef const uint8_t* p = NULL
    cdef const uint8_t* q = NULL
    cdef int err = ERR_OK
    cdef bint a_scalar = va.length == 1 and n != 1, b_scalar = vb.length == 1 and n != 1
    cdef int64_t bad_row = 0
    cdef int bad_side = 0
    with nogil:
        if a_scalar:
            err = _value(&va, 0, &p, &lp)
            bad_side = 1
        if b_scalar and err == ERR_OK:
            err = _value(&vb, 0, &q, &lq)
            bad_side = 2
        for i in range(n):
            if err != ERR_OK:
                break
            bad_row = i
            if not a_scalar:
                err = _value(&va, i, &p, &lp)
                bad_side = 1
            if not b_scalar and err == ERR_OK:
                err = _value(&vb, i, &q, &lq)
                bad_side = 2
            if err == ERR_OK and _cmp_result(op, _bytes_cmp(p, lp, q, lq)):
                set_bit(dst, i)
    if err != ERR_OK:
        v = &va if bad_side == 1 else &vb
        row = 0 if (a_scalar if bad_side == 1 else b_scalar) else bad_row
        raise ArrowInvalid(f"{'left' if bad_side == 1 else 'right'} operand: value {row} spans "
                           f"bytes [{_offset_at(v, row)}, {_offset_at(v, row + 1)}) but the data "
                           f"has {v.data_size}")
    return out


# -- Kleene logic over bitmaps -----------------------------------------------------------------------

cdef struct Bits:
    const uint8_t* values       # NULL: constant `constant`
    const uint8_t* valid        # NULL: all valid (or constant validity `valid_constant`)
    int64_t offset
    uint8_t constant
    uint8_t valid_constant


cdef int _bits(ArrayData d, bint scalar, Bits* b, str what) except -1:
    b.offset = d.offset
    cdef const uint8_t* vals = checked_bits(buffer_at(d, 1), d.offset, d.length, what)
    cdef const uint8_t* valid = checked_bits(buffer_at(d, 0), d.offset, d.length,
                                             what + " validity")
    if d.null_count == 0:
        valid = NULL
    b.values, b.valid = vals, valid
    b.constant, b.valid_constant = 0, 0xFF
    if d.type.name == "null":
        b.values, b.valid, b.valid_constant = NULL, NULL, 0
        return 0
    if vals == NULL and d.length:
        raise ArrowInvalid(f"{what}: the values bitmap is missing")
    if scalar:
        # a scalar: its one bit spread over a whole byte
        b.constant = 0xFF if get_bit(vals, d.offset) else 0
        b.valid_constant = 0xFF if valid == NULL or get_bit(valid, d.offset) else 0
        b.values, b.valid = NULL, NULL
    return 0


cdef inline uint8_t _byte(const uint8_t* p, int64_t bit, uint8_t constant, int64_t n_left
                          ) noexcept nogil:
    # 8 bits from `bit` on, or fewer at the end (the rest zero)
    cdef uint8_t out = 0
    cdef int j
    if p == NULL:
        return constant
    if n_left >= 8:
        return byte_at(p, bit)
    for j in range(n_left):
        if get_bit(p, bit + j):
            out |= <uint8_t>(1 << j)
    return out


def kleene(bint is_and, ArrayData a, bint a_scalar, ArrayData b, bint b_scalar, int64_t n):
    """(values bitmap, validity bitmap or None, null count) of Kleene AND (is_and) or OR of two
    bool operands over n rows: AND is false where either is false, OR true where either is
    true; otherwise null where either is null."""
    cdef Bits x, y
    _bits(a, a_scalar, &x, "left operand")
    _bits(b, b_scalar, &y, "right operand")
    cdef Buffer vals = _bits_out(n), valid = _bits_out(n)
    cdef uint8_t* dv = mutable_data(vals) if n else NULL
    cdef uint8_t* dk = mutable_data(valid) if n else NULL
    cdef int64_t i, nbytes = (n + 7) // 8, left, nulls = 0
    cdef uint8_t xv, xk, yv, yk, k, mask
    with nogil:
        for i in range(nbytes):
            left = n - i * 8
            mask = 0xFF if left >= 8 else <uint8_t>((1 << left) - 1)
            xv = _byte(x.values, x.offset + i * 8, x.constant, left)
            xk = _byte(x.valid, x.offset + i * 8, x.valid_constant, left)
            yv = _byte(y.values, y.offset + i * 8, y.constant, left)
            yk = _byte(y.valid, y.offset + i * 8, y.valid_constant, left)
            if is_and:
                # known false on either side decides; else both must be known
                k = (xk & yk) | (xk & ~xv) | (yk & ~yv)
                dv[i] = <uint8_t>(xv & yv & xk & yk & mask)
            else:
                k = (xk & yk) | (xk & xv) | (yk & yv)
                dv[i] = <uint8_t>(((xv & xk) | (yv & yk)) & mask)
            k &= mask
            dk[i] = k
            nulls += _popcount8(<uint8_t>(~k & mask))
    return vals, (valid if nulls else None), nulls


cdef inline int _popcount8(uint8_t v) noexcept nogil:
    cdef int c = 0
    while v:
        v &= <uint8_t>(v - 1)
        c += 1
    return c


def invert_bits(ArrayData a, int64_t n):
    """The values bitmap of NOT a (its validity is a's own), starting at bit 0."""
    cdef Bits x
    _bits(a, a.length == 1 and n != 1, &x, "operand")
    cdef Buffer vals = _bits_out(n)
    cdef uint8_t* dv = mutable_data(vals) if n else NULL
    cdef int64_t i, nbytes = (n + 7) // 8, left
    cdef uint8_t mask
    with nogil:
        for i in range(nbytes):
            left = n - i * 8
            mask = 0xFF if left >= 8 else <uint8_t>((1 << left) - 1)
            dv[i] = <uint8_t>(~_byte(x.values, x.offset + i * 8, x.constant, left) & mask)
    return vals


def validity_bits(ArrayData a, int64_t n, bint invert):
    """The validity of `a` (or its nulls, with invert) as a bitmap from bit 0 over n rows."""
    cdef const uint8_t* valid = checked_bits(buffer_at(a, 0), a.offset, a.length, "validity")
    cdef bint all_valid = valid == NULL or a.null_count == 0
    cdef Buffer out = _bits_out(n)
    cdef uint8_t* dv = mutable_data(out) if n else NULL
    cdef int64_t i, nbytes = (n + 7) // 8, left
    cdef uint8_t mask, v
    if a.type.name == "null":
        all_valid, valid = False, NULL
    with nogil:
        for i in range(nbytes):
            left = n - i * 8
            mask = 0xFF if left >= 8 else <uint8_t>((1 << left) - 1)
            if valid != NULL and not all_valid:
                v = _byte(valid, a.offset + i * 8, 0, left)
            else:
                v = 0xFF if all_valid else 0
            dv[i] = <uint8_t>((~v if invert else v) & mask)
    return out


def nan_bits(const floating_t[::1] values):
    """Bitmap of the NaN values."""
    cdef int64_t n = values.shape[0], i
    cdef Buffer out = _bits_out(n)
    cdef uint8_t* dst = mutable_data(out) if n else NULL
    with nogil:
        for i in range(n):
            if isnan(values[i]):
                set_bit(dst, i)
    return out


def and_bits(Buffer a, Buffer b, int64_t n):
    """a & b, bitmaps from bit 0 over n rows."""
    cdef int64_t nbytes = (n + 7) // 8, i
    if a.size < nbytes or b.size < nbytes:
        raise ValueError("bitmaps shorter than their rows")
    cdef Buffer out = _bits_out(n)
    cdef uint8_t* dst = mutable_data(out) if n else NULL
    with nogil:
        for i in range(nbytes):
            dst[i] = a.ptr[i] & b.ptr[i]
    return out


def or_bits(Buffer a, Buffer b, int64_t n):
    """a | b, bitmaps from bit 0 over n rows."""
    cdef int64_t nbytes = (n + 7) // 8, i
    if a.size < nbytes or b.size < nbytes:
        raise ValueError("bitmaps shorter than their rows")
    cdef Buffer out = _bits_out(n)
    cdef uint8_t* dst = mutable_data(out) if n else NULL
    with nogil:
        for i in range(nbytes):
            dst[i] = a.ptr[i] | b.ptr[i]
    return out


# -- membership: an open-addressing hash set over the value set's bytes ---------------------------------

cdef extern from *:
    """
    #define ARROWIPC_LITTLE_ENDIAN (__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__)
    """
    bint ARROWIPC_LITTLE_ENDIAN


cdef inline uint64_t _hash(const uint8_t* p, int64_t n, const uint8_t* end) noexcept nogil:
    # eight bytes at a time, each word multiplied in; then murmur3's finalizer. The last 1-7
    # bytes are one little-endian word: loaded whole and masked when eight bytes from them
    # still lie before `end` (the buffer's end), else assembled byte by byte (a memcpy of a
    # variable size is a call); both give the same word.
    cdef uint64_t h = 0x9E3779B97F4A7C15ULL ^ <uint64_t>n
    cdef uint64_t w
    cdef int64_t i = 0, k
    while n - i >= 8:
        memcpy(&w, p + i, 8)
        h = (h ^ w) * 0xff51afd7ed558ccdULL
        h ^= h >> 32
        i += 8
    if i < n:
        if ARROWIPC_LITTLE_ENDIAN and end - (p + i) >= 8:
            memcpy(&w, p + i, 8)
            w &= (<uint64_t>1 << (8 * (n - i))) - 1
        else:
            w = 0
            for k in range(n - i):
                w |= (<uint64_t>p[i + k]) << (8 * k)
        h = (h ^ w) * 0xc4ceb9fe1a85ec53ULL
    h ^= h >> 33
    h *= 0xff51afd7ed558ccdULL
    return h ^ (h >> 33)


cdef struct Slot:
    int64_t row                 # -1: empty
    uint64_t hash               # the row's value's: compared before its bytes


cdef struct HashSet:
    Slot* slots                 # a member (its first row) per distinct value
    uint64_t mask


cdef int _set_init(HashSet* s, int64_t members) except -1:
    cdef uint64_t size = 8
    while size < <uint64_t>(members * 2 + 1):
        size <<= 1
    s.slots = <Slot*>malloc(size * sizeof(Slot))
    if s.slots == NULL:
        raise MemoryError()
    memset(s.slots, 0xFF, size * sizeof(Slot))
    s.mask = size - 1
    return 0


cdef inline void _keep(Slot* slot, int64_t row, uint64_t h) noexcept nogil:
    slot.row = row
    slot.hash = h


cdef inline uint64_t _hash_fixed(const uint8_t* p, int width) noexcept nogil:
    # a value of up to 8 bytes as one word, mixed (murmur3's finalizer): a byte loop per
    # value costs more than the lookup
    cdef uint64_t h = 0
    if width > 8:
        return _hash(p, width, p + width)
    memcpy(&h, p, width)
    h ^= h >> 33
    h *= 0xff51afd7ed558ccdULL
    h ^= h >> 33
    h *= 0xc4ceb9fe1a85ec53ULL
    return h ^ (h >> 33)


cdef inline uint64_t _probe_fixed(const HashSet* s, const uint8_t* members, int width,
                                  const uint8_t* key, uint64_t h, bint* found) noexcept nogil:
    cdef uint64_t j = h & s.mask
    cdef int64_t m
    while True:
        m = s.slots[j].row
        if m < 0:
            found[0] = False
            return j
        if s.slots[j].hash == h and memcmp(members + m * width, key, width) == 0:
            found[0] = True
            return j
        j = (j + 1) & s.mask


cdef int _find_numbers(const numeric_t[::1] values, const numeric_t[::1] members,
                      uint8_t* bits, int64_t* index) except -1:
    """Each value looked up among the members, by bytes after giving every NaN one pattern
    (0.0 and -0.0 differ, NaN finds NaN: pyarrow's rule): its bit set in `bits` when found,
    or index[i] the position of the first equal member, -1 when none (either may be NULL)."""
    cdef int64_t n = values.shape[0], m = members.shape[0], i
    cdef HashSet s
    cdef int width = sizeof(numeric_t)
    cdef numeric_t* canon = <numeric_t*>malloc(m * sizeof(numeric_t) + 1)
    if canon == NULL:
        raise MemoryError()
    try:
        _set_init(&s, m)
    except BaseException:
        free(canon)
        raise
    cdef bint found
    cdef uint64_t j, h
    cdef numeric_t key
    with nogil:
        for i in range(m):
            canon[i] = _nan_canonical(members[i])
            h = _hash_fixed(<const uint8_t*>&canon[i], width)
            j = _probe_fixed(&s, <const uint8_t*>canon, width, <const uint8_t*>&canon[i], h,
                             &found)
            if not found:
                _keep(&s.slots[j], i, h)
        for i in range(n):
            key = _nan_canonical(values[i])
            j = _probe_fixed(&s, <const uint8_t*>canon, width, <const uint8_t*>&key,
                             _hash_fixed(<const uint8_t*>&key, width), &found)
            if bits != NULL and found:
                set_bit(bits, i)
            if index != NULL:
                index[i] = s.slots[j].row if found else -1
    free(s.slots)
    free(canon)
    return 0


def is_in_numbers(const numeric_t[::1] values, const numeric_t[::1] members):
    """Bitmap of the values found among `members` (same type), compared by their bytes after
    giving every NaN one pattern (0.0 and -0.0 differ, NaN finds NaN: pyarrow's rule)."""
    cdef int64_t n = values.shape[0]
    cdef Buffer out = _bits_out(n)
    if n == 0 or members.shape[0] == 0:
        return out
    _find_numbers(values, members, mutable_data(out), NULL)
    return out


def index_in_numbers(const numeric_t[::1] values, const numeric_t[::1] members,
                     int64_t[::1] out):
    """out[i]: the position of the first member equal to values[i] (is_in_numbers' equality),
    -1 where none. `out` has a slot per value."""
    if out.shape[0] != values.shape[0]:
        raise ValueError(f"index_in: {out.shape[0]} output slots for {values.shape[0]} values")
    if values.shape[0]:
        _find_numbers(values, members, NULL, &out[0])


cdef inline numeric_t _nan_canonical(numeric_t v) noexcept nogil:
    if numeric_t is float or numeric_t is double:
        if isnan(v):
            return <numeric_t>NAN
    return v


cdef inline uint64_t _probe_binary(const Slot* slots, uint64_t mask, const BinaryView* rows,
                                   const uint8_t* p, int64_t size, uint64_t h,
                                   bint* found) noexcept nogil:
    """The slot holding a row of `rows` whose bytes are p[:size] (found), or the empty slot
    where such a row would go; rows in the table were checked when they went in. A row's
    bytes are read only when its hash is p's."""
    cdef uint64_t j = h & mask
    cdef const uint8_t* q = NULL
    cdef int64_t lq = 0
    while slots[j].row >= 0:
        if slots[j].hash == h:
            _value(rows, slots[j].row, &q, &lq)
            if lq == size and (size == 0 or memcmp(p, q, size) == 0):
                found[0] = True
                return j
        j = (j + 1) & mask
    found[0] = False
    return j


cdef int _find_binary(ArrayData values, ArrayData members, uint8_t* bits,
                     int64_t* index, int64_t row_base=0) except -1:
    """_find_numbers for string/binary values, bytewise; a value whose offsets leave its data
    is an ArrowInvalid naming the row."""
    cdef BinaryView vv, vm
    _binary_view(values, &vv, "values")
    _binary_view(members, &vm, "value set")
    cdef int64_t n = vv.length, m = vm.length, i, lp = 0
    cdef HashSet s
    _set_init(&s, m)
    cdef const uint8_t* p = NULL
    cdef uint64_t j, h
    cdef int err = ERR_OK
    cdef BinaryView* bad = &vm
    cdef int64_t bad_row = 0
    cdef bint found
    with nogil:
        for i in range(m):
            err = _value(&vm, i, &p, &lp)
            if err != ERR_OK:
                bad_row = i
                break
            h = _hash(p, lp, vm.data + vm.data_size)
            j = _probe_binary(s.slots, s.mask, &vm, p, lp, h, &found)
            if not found:
                _keep(&s.slots[j], i, h)
        for i in range(n):
            if err != ERR_OK:
                break
            err = _value(&vv, i, &p, &lp)
            if err != ERR_OK:
                bad, bad_row = &vv, i
                break
            j = _probe_binary(s.slots, s.mask, &vm, p, lp, _hash(p, lp, vv.data + vv.data_size),
                              &found)
            if bits != NULL and found:
                set_bit(bits, i)
            if index != NULL:
                index[i] = s.slots[j].row if found else -1
    free(s.slots)
    if err != ERR_OK:
        # the values may be a piece of a column: the row named is the column's
        raise ArrowInvalid(f"is_in: value {bad_row + (row_base if bad == &vv else 0)} of the "
                           f"{'value set' if bad == &vm else 'values'}"
                           f" spans bytes [{_offset_at(bad, bad_row)}, "
                           f"{_offset_at(bad, bad_row + 1)}) but the data has {bad.data_size}")
    return 0


def is_in_binary(ArrayData values, ArrayData members):
    """Bitmap of the string/binary values found among `members` (bytewise)."""
    cdef Buffer out = _bits_out(values.length)
    if values.length == 0 or members.length == 0:
        return out
    _find_binary(values, members, mutable_data(out), NULL)
    return out


def index_in_binary(ArrayData values, ArrayData members, int64_t[::1] out,
                    int64_t row_base=0):
    """out[i]: the position of the first member equal to value i (bytewise), -1 where none.
    `values` may be a piece of a column starting at row `row_base` (named in errors)."""
    if out.shape[0] != values.length:
        raise ValueError(f"index_in: {out.shape[0]} output slots for {values.length} values")
    if values.length:
        _find_binary(values, members, NULL, &out[0], row_base)


# -- first equal value: a column looked up in itself, in one pass ----------------------------------

cdef struct GrowingSet:
    Slot* slots                 # each distinct value's first row, with its hash
    uint64_t mask
    int64_t used


cdef int _grown(GrowingSet* s) noexcept nogil:
    """The table doubled, its rows placed again by their hashes; -1 when out of memory."""
    cdef uint64_t size = (s.mask + 1) * 2, j, k
    cdef Slot* slots = <Slot*>malloc(size * sizeof(Slot))
    if slots == NULL:
        return -1
    memset(slots, 0xFF, size * sizeof(Slot))
    for k in range(s.mask + 1):
        if s.slots[k].row >= 0:
            j = s.slots[k].hash & (size - 1)
            while slots[j].row >= 0:
                j = (j + 1) & (size - 1)
            slots[j] = s.slots[k]
    free(s.slots)
    s.slots, s.mask = slots, size - 1
    return 0


cdef int _growing_init(GrowingSet* s) except -1:
    s.slots = <Slot*>malloc(1024 * sizeof(Slot))
    if s.slots == NULL:
        raise MemoryError()
    memset(s.slots, 0xFF, 1024 * sizeof(Slot))
    s.mask, s.used = 1023, 0
    return 0


cdef inline int64_t _first_row(GrowingSet* s, uint64_t j, int64_t i, uint64_t h,
                               bint found) noexcept nogil:
    # row i's first equal row: the one found at slot j, or i itself, kept in the empty slot j
    if found:
        return s.slots[j].row
    _keep(&s.slots[j], i, h)
    s.used += 1
    return i


def first_equal_numbers(const numeric_t[::1] values, int64_t[::1] out):
    """out[i]: the first row whose value equals value i (by bytes, every NaN one NaN: the
    membership kernels' equality), in one pass over a hash set of the distinct values."""
    cdef int64_t n = values.shape[0], i
    if out.shape[0] != n:
        raise ValueError(f"first_equal: {out.shape[0]} output slots for {n} values")
    cdef GrowingSet s
    _growing_init(&s)
    cdef int width = sizeof(numeric_t), err = 0
    cdef numeric_t key, other
    cdef uint64_t j, h
    cdef bint found
    with nogil:
        for i in range(n):
            if s.used * 2 >= <int64_t>s.mask and _grown(&s) != 0:
                err = 1
                break
            key = _nan_canonical(values[i])
            h = _hash_fixed(<const uint8_t*>&key, width)
            j = h & s.mask
            found = False
            while s.slots[j].row >= 0:
                if s.slots[j].hash == h:
                    other = _nan_canonical(values[s.slots[j].row])
                    if memcmp(&other, &key, width) == 0:
                        found = True
                        break
                j = (j + 1) & s.mask
            out[i] = _first_row(&s, j, i, h, found)
    free(s.slots)
    if err:
        raise MemoryError()


def first_equal_binary(ArrayData values, int64_t[::1] out, int64_t row_base=0):
    """first_equal_numbers for string/binary values, bytewise; a value whose offsets leave its
    data is an ArrowInvalid naming the row (`values` may be a piece of a column starting at row
    `row_base`: out then holds rows of the piece)."""
    cdef BinaryView v
    _binary_view(values, &v, "values")
    cdef int64_t n = v.length, i = 0, lp = 0
    if out.shape[0] != n:
        raise ValueError(f"first_equal: {out.shape[0]} output slots for {n} values")
    cdef GrowingSet s
    _growing_init(&s)
    cdef const uint8_t* p = NULL
    cdef const uint8_t* end = v.data + v.data_size
    cdef uint64_t j, h
    cdef int err = ERR_OK
    cdef bint found
    with nogil:
        for i in range(n):
            if s.used * 2 >= <int64_t>s.mask and _grown(&s) != 0:
                err = -1
                break
            err = _value(&v, i, &p, &lp)
            if err != ERR_OK:
                break
            h = _hash(p, lp, end)
            j = _probe_binary(s.slots, s.mask, &v, p, lp, h, &found)
            out[i] = _first_row(&s, j, i, h, found)
    free(s.slots)
    if err == -1:
        raise MemoryError()
    if err != ERR_OK:
        raise ArrowInvalid(f"values: value {row_base + i} spans bytes [{_offset_at(&v, i)}, "
                           f"{_offset_at(&v, i + 1)}) but the data has {v.data_size}")


# -- hash join pairs -------------------------------------------------------------------------------

def index_in_range(const integer_t[::1] values, int64_t lo, const int64_t[::1] table,
                   int64_t[::1] out):
    """out[i] = table[values[i] - lo] where that lies in the table, else -1: index_in for
    integer members of a narrow range (the table holds each value's first member, or -1)."""
    cdef int64_t n = values.shape[0], size = table.shape[0], i
    cdef uint64_t at
    if out.shape[0] != n:
        raise ValueError(f"index_in_range: {out.shape[0]} output slots for {n} values")
    with nogil:
        for i in range(n):
            # the difference taken modulo 2**64 (no signed overflow), once the value is known
            # not to lie below lo
            at = <uint64_t>values[i] - <uint64_t>lo
            if values[i] < <integer_t>lo or at >= <uint64_t>size:
                out[i] = -1
            else:
                out[i] = table[at]


def join_matched(const int64_t[::1] left_codes, const int64_t[::1] counts, uint8_t[::1] out):
    """out[i] = 1 where left row i's code has a right row (counts[code] > 0), else 0."""
    cdef int64_t n = left_codes.shape[0], bound = counts.shape[0], i, c
    if out.shape[0] != n:
        raise ValueError(f"join_matched: {out.shape[0]} output slots for {n} rows")
    with nogil:
        for i in range(n):
            c = left_codes[i]
            out[i] = 1 if 0 <= c < bound and counts[c] > 0 else 0


def join_unique(const int64_t[::1] left_codes, const int64_t[::1] right_of_code, bint inner,
                int64_t[::1] left_rows, int64_t[::1] right_rows, uint8_t[::1] right_hit):
    """The pairs of a join whose right side has at most one row per code (right_of_code[c], or
    -1): with `inner` only the matched left rows, else every left row (-1: no right row);
    right_hit[r] (None: not wanted) set for each right row paired. Returns the number of
    pairs written."""
    cdef int64_t n = left_codes.shape[0], bound = right_of_code.shape[0], i, c, r, k = 0
    cdef int64_t m = right_hit.shape[0] if right_hit is not None else 0
    cdef bint hits = right_hit is not None
    if left_rows.shape[0] < n or right_rows.shape[0] < n:
        raise ValueError(f"join_unique: fewer output slots than the {n} rows")
    with nogil:
        for i in range(n):
            c = left_codes[i]
            r = right_of_code[c] if 0 <= c < bound else -1
            if r < 0 and inner:
                continue
            if hits and 0 <= r < m:
                right_hit[r] = 1
            left_rows[k] = i
            right_rows[k] = r
            k += 1
    return k


def join_build(const int64_t[::1] right_codes, const int64_t[::1] counts, int64_t[::1] starts,
               int64_t[::1] order):
    """The build side of a hash join, by a counting sort: starts[c] where code c's right rows
    begin in `order`, and `order` the right rows of codes >= 0 grouped by code, each group in
    row order (`counts`: the rows of each code, as the codes give them)."""
    cdef int64_t m = right_codes.shape[0], bound = counts.shape[0], i, c, at = 0
    cdef int err = 0
    if starts.shape[0] != bound:
        raise ValueError("join_build: starts and counts of different lengths")
    with nogil:
        for c in range(bound):
            starts[c] = at
            at += counts[c]
        if at > order.shape[0]:
            err = 1
        else:
            for i in range(m):
                c = right_codes[i]
                if c < 0:
                    continue
                if c >= bound or starts[c] >= order.shape[0]:
                    err = 1
                    break
                order[starts[c]] = i
                starts[c] += 1
            for c in range(bound):          # back to where each group begins
                starts[c] -= counts[c]
    if err:
        raise ValueError("join_build: the codes disagree with their counts")


def join_count(const int64_t[::1] left_codes, const int64_t[::1] counts, bint keep_unmatched):
    """How many pairs join_pairs writes for these codes (see there)."""
    cdef int64_t n = left_codes.shape[0], bound = counts.shape[0], i = 0, c = 0, many, total = 0
    cdef int err = 0
    with nogil:
        for i in range(n):
            c = left_codes[i]
            many = 0
            if c >= bound:
                err = 1
                break
            if c >= 0:
                many = counts[c]
            if many < 0:
                err = 1
                break
            total += many if many else (1 if keep_unmatched else 0)
    if err:
        raise ValueError(f"join_count: left row {i} has code {c} outside the {bound} codes")
    return total


def join_pairs(const int64_t[::1] left_codes, const int64_t[::1] starts,
               const int64_t[::1] counts, const int64_t[::1] order, bint keep_unmatched,
               int64_t[::1] left_out, int64_t[::1] right_out):
    """The (left row, right row) pairs of a hash join, in left row order: left row i of code
    c >= 0 pairs with the right rows order[starts[c] .. starts[c] + counts[c]); a row with code
    -1 or no right row gives (i, -1) when `keep_unmatched` (a left outer join). The outputs have
    as many slots as the pairs (the caller counted them); returns how many were written."""
    cdef int64_t n = left_codes.shape[0], bound = starts.shape[0], m = order.shape[0]
    cdef int64_t size = left_out.shape[0], i = 0, c = 0, k, first, many, w = 0
    cdef int err = 0
    if right_out.shape[0] != size or counts.shape[0] != bound:
        raise ValueError("join_pairs: output or code arrays of different lengths")
    with nogil:
        for i in range(n):
            c = left_codes[i]
            many = 0
            if c >= 0:
                if c >= bound:
                    err = 1
                    break
                first, many = starts[c], counts[c]
                if first < 0 or many < 0 or first > m - many or many > size - w:
                    err = 1
                    break
                for k in range(many):
                    left_out[w] = i
                    right_out[w] = order[first + k]
                    w += 1
            if many == 0 and keep_unmatched:
                if w >= size:
                    err = 1
                    break
                left_out[w] = i
                right_out[w] = -1
                w += 1
    if err:
        raise ValueError(f"join_pairs: left row {i} (code {c}) lies outside the codes or the "
                         f"{size} output slots")
    return w


# -- arithmetic -----------------------------------------------------------------------------------------

cdef inline int _int_op(int op, bint check, integer_t x, integer_t y, integer_t* r) noexcept nogil:
    cdef bint ovf = False
    if op == 0:
        ovf = ARROWIPC_ADD_OVF(x, y, r)
    elif op == 1:
        ovf = ARROWIPC_SUB_OVF(x, y, r)
    elif op == 2:
        ovf = ARROWIPC_MUL_OVF(x, y, r)
    else:
        if y == 0:
            return ERR_DIV_ZERO
        # the one quotient that does not fit (minimum / -1) wraps to 0 unchecked, as pyarrow's
        if <integer_t>(-1) < 0 and y == <integer_t>(-1) and \
                x == <integer_t>((<uint64_t>1) << (sizeof(integer_t) * 8 - 1)):
            r[0] = 0
            return ERR_OVERFLOW if check else ERR_OK
        r[0] = <integer_t>(x / y)
        return ERR_OK
    return ERR_OVERFLOW if (ovf and check) else ERR_OK


def arithmetic_ints(int op, bint check, const integer_t[::1] a, const integer_t[::1] b, integer_t[::1] out,
                    valid):
    """out = a op b over out's rows (an operand of one value is broadcast): integers wrapping
    (unchecked) or raising "overflow" (check); division truncates and refuses zero. Rows whose
    bit in `valid` (a bitmap from bit 0, or None) is clear are skipped (left as they are)."""
    cdef int64_t n = out.shape[0], la = a.shape[0], lb = b.shape[0], i
    if (la != n and la != 1) or (lb != n and lb != 1):
        raise ValueError(f"operands of {la} and {lb} values for {n} rows")
    cdef const uint8_t* vbits = checked_bits(valid, 0, n, "validity")
    cdef int err = ERR_OK
    cdef integer_t r = 0
    with nogil:
        for i in range(n):
            if vbits != NULL and not get_bit(vbits, i):
                continue
            err = _int_op(op, check, a[i if la != 1 else 0], b[i if lb != 1 else 0], &r)
            if err != ERR_OK:
                break
            out[i] = r
    if err == ERR_OVERFLOW:
        raise ArrowInvalid("overflow")
    if err == ERR_DIV_ZERO:
        raise ArrowInvalid("divide by zero")


def arithmetic_floats(int op, bint check, const floating_t[::1] a, const floating_t[::1] b,
                      floating_t[::1] out, valid):
    """out = a op b over out's rows (IEEE results; with check, a division by zero raises
    "divide by zero"). Rows whose bit in `valid` is clear are skipped."""
    cdef int64_t n = out.shape[0], la = a.shape[0], lb = b.shape[0], i
    if (la != n and la != 1) or (lb != n and lb != 1):
        raise ValueError(f"operands of {la} and {lb} values for {n} rows")
    cdef const uint8_t* vbits = checked_bits(valid, 0, n, "validity")
    cdef bint div_zero = False
    cdef floating_t x, y
    with nogil:
        for i in range(n):
            if vbits != NULL and not get_bit(vbits, i):
                continue
            x = a[i if la != 1 else 0]
            y = b[i if lb != 1 else 0]
            if op == 0:
                out[i] = x + y
            elif op == 1:
                out[i] = x - y
            elif op == 2:
                out[i] = x * y
            else:
                if check and y == 0:
                    div_zero = True
                    break
                out[i] = x / y
    if div_zero:
        raise ArrowInvalid("divide by zero")
