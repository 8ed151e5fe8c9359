"""The comparison, Kleene logic, null, membership and arithmetic kernels (arrowipc.compute's
function forms over data/compute.py and _core/compute_kernels.pyx), with pyarrow.compute as the
oracle: every kernel on every type family, random seeded arrays with nulls (and NaN), sliced
arrays, scalars on either side, and the type promotion of mixed operands."""
import datetime
import decimal

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pytest

import arrowipc
import arrowipc.compute as ac
from arrowipc._core.buffer import py_buffer
from arrowipc.errors import ArrowInvalid, ArrowNotImplementedError, ArrowTypeError

N = 200
COMPARISONS = ["equal", "not_equal", "less", "less_equal", "greater", "greater_equal"]


def _random_values(t, rng, n):
    """n random Python values of pyarrow type t, about 15% null; few distinct values, so
    equalities happen."""
    null = rng.random(n) < 0.15
    if pa.types.is_integer(t):
        info = np.iinfo(t.to_pandas_dtype())
        lo, hi = max(info.min, -50), min(info.max, 50)
        vals = [int(v) for v in rng.integers(lo, hi + 1, n)]
        if rng.random() < 0.5:              # the extremes too
            vals[0], vals[1] = int(info.min), int(info.max)
    elif pa.types.is_floating(t):
        vals = [float(v) for v in rng.integers(-5, 6, n) / 2]
        for i in rng.integers(0, n, 5):
            vals[int(i)] = float("nan")
        vals[2] = -0.0
    elif pa.types.is_boolean(t):
        vals = [bool(v) for v in rng.integers(0, 2, n)]
    elif pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_string_view(t):
        words = ["", "a", "ab", "abc", "b", "ba", "zz", "é", "a\x00", "long string value x"]
        vals = [words[int(i)] for i in rng.integers(0, len(words), n)]
    elif pa.types.is_binary(t) or pa.types.is_large_binary(t) or pa.types.is_binary_view(t):
        words = [b"", b"\x00", b"\xff", b"ab", b"a", b"\x00\x01", b"abc"]
        vals = [words[int(i)] for i in rng.integers(0, len(words), n)]
    elif pa.types.is_decimal(t):
        vals = [decimal.Decimal(int(v)).scaleb(-t.scale) for v in rng.integers(-300, 300, n)]
    else:
        # temporal types: their integers
        raw = pa.array(rng.integers(-20, 20, n).astype(np.int64) * 3, pa.int64())
        storage = pa.int32() if t.bit_width == 32 else pa.int64()
        values = [None if null[i] else v for i, v in enumerate(raw.cast(storage).to_pylist())]
        return pa.array(values, storage).cast(t)
    return pa.array([None if null[i] else v for i, v in enumerate(vals)], t)


TYPES = [pa.int8(), pa.int16(), pa.int32(), pa.int64(), pa.uint8(), pa.uint16(), pa.uint32(),
         pa.uint64(), pa.float32(), pa.float64(), pa.bool_(), pa.date32(), pa.date64(),
         pa.timestamp("s"), pa.timestamp("ms"), pa.timestamp("us"), pa.timestamp("ns", "UTC"),
         pa.time32("s"), pa.time32("ms"), pa.time64("us"), pa.time64("ns"),
         pa.duration("s"), pa.duration("ns"), pa.string(), pa.large_string(), pa.string_view(),
         pa.binary(), pa.large_binary(), pa.decimal128(10, 2)]


def _ours(a):
    return arrowipc.array(a)


def _py(values):
    # NaN as a marker that equals itself
    return ["NaN" if isinstance(v, float) and v != v else v for v in values]


def _same(ours, theirs):
    assert str(ours.type) == str(theirs.type)
    assert _py(ours.to_pylist()) == _py(theirs.to_pylist())


def _same_or_same_error(ours_call, theirs_call):
    """Both give equal results, or both raise the same message (pyarrow casts mixed operands
    to their common type safely: a value that does not fit raises)."""
    try:
        theirs = theirs_call()
    except pa.ArrowInvalid as e:
        with pytest.raises(ArrowInvalid) as ours:
            ours_call()
        assert str(ours.value) == str(e)
        return
    _same(ours_call(), theirs)


@pytest.mark.parametrize("t", TYPES, ids=str)
@pytest.mark.parametrize("function", COMPARISONS)
def test_comparison_of_arrays_matches_pyarrow(t, function):
    rng = np.random.default_rng(abs(hash((str(t), function))) % 2**32)
    a, b = _random_values(t, rng, N), _random_values(t, rng, N)
    expected = getattr(pc, function)(a, b)
    _same(getattr(ac, function)(_ours(a), _ours(b)), expected)
    # sliced operands (bit offsets that are not multiples of 8)
    _same(getattr(ac, function)(_ours(a).slice(3, 101), _ours(b).slice(5, 101)),
          getattr(pc, function)(a.slice(3, 101), b.slice(5, 101)))


@pytest.mark.parametrize("t", TYPES, ids=str)
@pytest.mark.parametrize("function", COMPARISONS)
def test_comparison_with_a_scalar_matches_pyarrow(t, function):
    rng = np.random.default_rng(7)
    a = _random_values(t, rng, N)
    i = next(i for i, v in enumerate(a) if v.is_valid)
    s, ours_s = a[i], _ours(a)[i]
    _same(getattr(ac, function)(_ours(a), ours_s), getattr(pc, function)(a, s))
    _same(getattr(ac, function)(ours_s, _ours(a)), getattr(pc, function)(s, a))
    null_s = arrowipc.array([None], type=_ours(a).type)[0]
    _same(getattr(ac, function)(_ours(a), null_s),
          getattr(pc, function)(a, pa.scalar(None, t)))


MIXED = [(pa.int8(), pa.uint16()), (pa.int32(), pa.float32()), (pa.uint64(), pa.int64()),
         (pa.uint8(), pa.int8()), (pa.int64(), pa.float64()), (pa.uint32(), pa.uint8()),
         (pa.timestamp("s"), pa.timestamp("ns")), (pa.date32(), pa.date64()),
         (pa.time32("ms"), pa.time64("us")), (pa.duration("s"), pa.duration("ms")),
         (pa.date32(), pa.timestamp("ms")), (pa.string(), pa.large_string()),
         (pa.string(), pa.binary()), (pa.decimal128(10, 2), pa.decimal128(12, 1)),
         (pa.decimal128(10, 2), pa.int64()), (pa.decimal128(10, 2), pa.float64())]


@pytest.mark.parametrize("ta,tb", MIXED, ids=str)
@pytest.mark.parametrize("function", ["equal", "less", "greater_equal"])
def test_comparison_of_mixed_types_promotes_as_pyarrow(ta, tb, function):
    rng = np.random.default_rng(11)
    a = _random_values(ta, rng, N)
    b = _random_values(tb, rng, N) if not pa.types.is_decimal(tb) else \
        pa.array([None if v is None else decimal.Decimal(v).quantize(decimal.Decimal("0.1"))
                  for v in a.to_pylist()], tb)
    _same_or_same_error(lambda: getattr(ac, function)(_ours(a), _ours(b)),
                        lambda: getattr(pc, function)(a, b))


def test_python_scalars_are_promoted_not_truncated():
    a = pa.array([1, 2, None, -128, 127], pa.int8())
    for value in (1000, -1000, 1.5, 2):
        for function in COMPARISONS:
            _same(getattr(ac, function)(_ours(a), value), getattr(pc, function)(a, value))


def test_dictionary_and_chunked_operands_are_decoded():
    d = pa.array(["a", "b", None, "a", "c"]).dictionary_encode()
    _same(ac.equal(_ours(d), "a"), pc.equal(d, "a"))
    ch = pa.chunked_array([[1, 2], [3, None, 5]])
    ours = ac.greater(arrowipc.chunked_array([[1, 2], [3, None, 5]]), 2)
    assert isinstance(ours, arrowipc.ChunkedArray)
    assert ours.to_pylist() == pc.greater(ch, 2).to_pylist()


def test_comparing_unrelated_types_raises_as_pyarrow():
    with pytest.raises(ArrowNotImplementedError) as e:
        ac.equal(arrowipc.array([1], type="int8"), "a")
    with pytest.raises(pa.ArrowNotImplementedError) as theirs:
        pc.equal(pa.array([1], pa.int8()), "a")
    assert str(e.value) == str(theirs.value) == \
        "Function 'equal' has no kernel matching input types (int8, string)"


def test_timestamps_with_and_without_time_zone_do_not_compare():
    a, b = pa.array([1], pa.timestamp("s", "UTC")), pa.array([1000], pa.timestamp("ms"))
    with pytest.raises(pa.ArrowNotImplementedError):
        pc.equal(a, b)
    with pytest.raises(ArrowNotImplementedError, match="no kernel matching input types"):
        ac.equal(_ours(a), _ours(b))


# -- Kleene logic, nulls, membership -------------------------------------------------------------

BOOLS = pa.array([True, False, None] * 3)
OTHER = pa.array([True] * 3 + [False] * 3 + [None] * 3)


@pytest.mark.parametrize("function", ["and_kleene", "or_kleene"])
def test_kleene_truth_tables_match_pyarrow(function):
    _same(getattr(ac, function)(_ours(BOOLS), _ours(OTHER)), getattr(pc, function)(BOOLS, OTHER))
    for s in (True, False, None):
        ps = pa.scalar(s, pa.bool_())
        _same(getattr(ac, function)(_ours(BOOLS), arrowipc.array([s], type="bool")[0]),
              getattr(pc, function)(BOOLS, ps))
        _same(getattr(ac, function)(arrowipc.array([s], type="bool")[0], _ours(BOOLS)),
              getattr(pc, function)(ps, BOOLS))


@pytest.mark.parametrize("seed", range(4))
def test_kleene_on_random_sliced_arrays(seed):
    rng = np.random.default_rng(seed)
    a, b = _random_values(pa.bool_(), rng, 300), _random_values(pa.bool_(), rng, 300)
    for function in ("and_kleene", "or_kleene"):
        _same(getattr(ac, function)(_ours(a).slice(seed, 250), _ours(b).slice(7, 250)),
              getattr(pc, function)(a.slice(seed, 250), b.slice(7, 250)))
    _same(ac.invert(_ours(a).slice(seed + 1)), pc.invert(a.slice(seed + 1)))


def test_kleene_refuses_non_booleans():
    with pytest.raises(ArrowNotImplementedError,
                       match=r"Function 'and_kleene' has no kernel matching input types "
                             r"\(int64, bool\)"):
        ac.and_kleene(arrowipc.array([1]), arrowipc.array([True]))


@pytest.mark.parametrize("t", TYPES, ids=str)
def test_is_null_and_is_valid_match_pyarrow(t):
    a = _random_values(t, np.random.default_rng(3), N)
    _same(ac.is_null(_ours(a)), pc.is_null(a))
    _same(ac.is_valid(_ours(a)), pc.is_valid(a))
    _same(ac.is_null(_ours(a), nan_is_null=True), pc.is_null(a, nan_is_null=True))
    _same(ac.is_null(_ours(a).slice(5)), pc.is_null(a.slice(5)))
    if pa.types.is_integer(t) or pa.types.is_floating(t):
        _same(ac.is_nan(_ours(a).slice(3)), pc.is_nan(a.slice(3)))


@pytest.mark.parametrize("t", TYPES, ids=str)
def test_is_in_matches_pyarrow(t):
    rng = np.random.default_rng(5)
    a = _random_values(t, rng, N)
    members = [v for v in a.to_pylist()[:6]]
    value_set = pa.array(members, t)
    if pa.types.is_string_view(t):        # pyarrow has no is_in for views: ask it on strings
        _same(ac.is_in(_ours(a), value_set=_ours(value_set)),
              pc.is_in(a.cast(pa.string()), value_set=value_set.cast(pa.string())))
        return
    _same(ac.is_in(_ours(a), value_set=_ours(value_set)), pc.is_in(a, value_set=value_set))
    _same(ac.is_in(_ours(a), value_set=_ours(value_set), skip_nulls=True),
          pc.is_in(a, value_set=value_set, skip_nulls=True))
    no_null = value_set.filter(pc.is_valid(value_set))
    _same(ac.is_in(_ours(a), value_set=_ours(no_null)), pc.is_in(a, value_set=no_null))


def test_is_in_nan_zero_and_cross_type_sets_as_pyarrow():
    a = pa.array([float("nan"), 0.0, -0.0, None, 1.0])
    vs = pa.array([float("nan"), 0.0])
    _same(ac.is_in(_ours(a), value_set=_ours(vs)), pc.is_in(a, value_set=vs))
    ints = pa.array([1, 2, None, 44], pa.int8())
    vs = pa.array([1, 300, 44])
    _same(ac.is_in(_ours(ints), value_set=_ours(vs)), pc.is_in(ints, value_set=vs))
    strings = pa.array(["a", "b", None])
    _same(ac.is_in(_ours(strings), value_set=arrowipc.array([b"a"])),
          pc.is_in(strings, value_set=pa.array([b"a"])))


def test_is_in_with_a_set_of_another_kind_raises_as_pyarrow():
    with pytest.raises(pa.ArrowTypeError) as theirs:
        pc.is_in(pa.array(["a"]), value_set=pa.array([1]))
    with pytest.raises(ArrowTypeError) as ours:
        ac.is_in(arrowipc.array(["a"]), value_set=arrowipc.array([1]))
    assert str(ours.value) == str(theirs.value)


# -- arithmetic -----------------------------------------------------------------------------------

NUMERIC = [pa.int8(), pa.int16(), pa.int32(), pa.int64(), pa.uint8(), pa.uint16(), pa.uint32(),
           pa.uint64(), pa.float32(), pa.float64()]


@pytest.mark.parametrize("t", NUMERIC, ids=str)
@pytest.mark.parametrize("function", ["add", "subtract", "multiply"])
def test_unchecked_arithmetic_wraps_as_pyarrow(t, function):
    rng = np.random.default_rng(13)
    a, b = _random_values(t, rng, N), _random_values(t, rng, N)
    _same(getattr(ac, function)(_ours(a), _ours(b)), getattr(pc, function)(a, b))


@pytest.mark.parametrize("ta,tb", [(pa.int8(), pa.uint8()), (pa.int8(), pa.uint64()),
                                   (pa.uint32(), pa.int8()), (pa.int32(), pa.float32()),
                                   (pa.int64(), pa.float32()), (pa.float32(), pa.float64()),
                                   (pa.uint16(), pa.uint32())], ids=str)
@pytest.mark.parametrize("function", ["add", "subtract", "multiply", "divide"])
def test_arithmetic_type_promotion_matches_pyarrow(ta, tb, function):
    rng = np.random.default_rng(17)
    a = _random_values(ta, rng, N)
    b = pa.array([None if v is None or v == 0 else v for v in
                  _random_values(tb, rng, N).to_pylist()], tb)
    _same_or_same_error(lambda: getattr(ac, function)(_ours(a), _ours(b)),
                        lambda: getattr(pc, function)(a, b))


def test_integer_division_truncates_and_python_scalars_promote():
    a = pa.array([7, -7, 7, -7, None], pa.int8())
    b = pa.array([2, 2, -2, -2, 1], pa.int16())
    _same(ac.divide(_ours(a), _ours(b)), pc.divide(a, b))
    _same(ac.add(_ours(a), 1000), pc.add(a, 1000))
    _same(ac.multiply(_ours(a), 1.5), pc.multiply(a, 1.5))
    m = pa.array([-2**63])
    _same(ac.divide(_ours(m), -1), pc.divide(m, -1))


@pytest.mark.parametrize("function,a,b", [
    ("divide", [1, 2], [1, 0]),
    ("divide_checked", [1.0], [0.0]),
])
def test_division_by_zero_raises_as_pyarrow(function, a, b):
    with pytest.raises(pa.ArrowInvalid, match="divide by zero"):
        getattr(pc, function)(pa.array(a), pa.array(b))
    with pytest.raises(ArrowInvalid, match="^divide by zero$"):
        getattr(ac, function)(arrowipc.array(a), arrowipc.array(b))


def test_float_division_by_zero_unchecked_and_null_divisors():
    ours = ac.divide(arrowipc.array([1.0, -1.0]), 0.0).to_pylist()
    assert ours == pc.divide(pa.array([1.0, -1.0]), 0.0).to_pylist()
    # a zero divisor in a null row is never divided by
    _same(ac.divide(arrowipc.array([1, None]), arrowipc.array([1, 0])),
          pc.divide(pa.array([1, None]), pa.array([1, 0])))


@pytest.mark.parametrize("function,t,a,b", [
    ("add_checked", pa.int8(), 127, 1), ("subtract_checked", pa.uint8(), 1, 2),
    ("multiply_checked", pa.int64(), 2**62, 2), ("add_checked", pa.int64(), -2**63, -1),
    ("divide_checked", pa.int64(), -2**63, -1),
])
def test_checked_overflow_raises_as_pyarrow(function, t, a, b):
    with pytest.raises(pa.ArrowInvalid, match="overflow"):
        getattr(pc, function)(pa.array([a], t), pa.array([b], t))
    with pytest.raises(ArrowInvalid, match="^overflow$"):
        getattr(ac, function)(arrowipc.array([a], type=str(t)), arrowipc.array([b], type=str(t)))


def test_arithmetic_on_non_numbers_raises_as_pyarrow():
    with pytest.raises(pa.ArrowNotImplementedError) as theirs:
        pc.add(pa.array(["a"]), pa.array([1]))
    with pytest.raises(ArrowNotImplementedError) as ours:
        ac.add(arrowipc.array(["a"]), arrowipc.array([1]))
    assert str(ours.value) == str(theirs.value)


def test_scalars_in_give_a_scalar_out():
    out = ac.add(arrowipc.array([2])[0], 3)
    assert isinstance(out, arrowipc.Scalar) and out.as_py() == 5
    assert ac.less(arrowipc.array([2])[0], 3).as_py() is True


def test_temporal_scalars_from_python():
    a = pa.array([datetime.date(2020, 1, d) for d in (1, 2, 3)])
    _same(ac.greater(_ours(a), arrowipc.array([datetime.date(2020, 1, 2)])[0]),
          pc.greater(a, pa.scalar(datetime.date(2020, 1, 2))))


DECIMALS = [pa.decimal32(7, 2), pa.decimal64(15, 3), pa.decimal128(10, 2), pa.decimal128(38, 0),
            pa.decimal256(40, 2)]


@pytest.mark.parametrize("t", DECIMALS, ids=str)
@pytest.mark.parametrize("function", COMPARISONS)
def test_decimal_comparisons_match_pyarrow(t, function):
    # same scale and width: compared by their unscaled integers (decimal128 by its two words);
    # a Python Decimal rescaled to the column's scale when exact, else compared by value
    rng = np.random.default_rng(23)
    a, b = _random_values(t, rng, N), _random_values(t, rng, N)
    _same(getattr(ac, function)(_ours(a).slice(3), _ours(b).slice(3)),
          getattr(pc, function)(a.slice(3), b.slice(3)))
    for literal in (decimal.Decimal("-1.5"), decimal.Decimal("0.255"), decimal.Decimal(2),
                    decimal.Decimal("-10") ** 30):
        if len(literal.as_tuple().digits) > t.precision or \
                (t.precision == 38 and literal != literal.to_integral_value()):
            continue        # pyarrow: no common decimal type within 38 digits (we compare)
        theirs = pa.scalar(literal)
        ours = arrowipc.array([literal])[0]
        _same_or_same_error(lambda: getattr(ac, function)(_ours(a), ours),
                            lambda: getattr(pc, function)(a, theirs))
        _same_or_same_error(lambda: getattr(ac, function)(ours, _ours(a)),
                            lambda: getattr(pc, function)(theirs, a))


# -- damaged data: the kernels check before they read ----------------------------------------------

def _damaged_strings():
    """Two strings whose second one claims bytes [2, 50) of a 4-byte data buffer."""
    import struct
    from arrowipc._core.arraydata import ArrayData
    from arrowipc._core.buffer import py_buffer
    from arrowipc.array import make_array
    return make_array(ArrayData(arrowipc.string(), 2, 0, 0,
                                [None, py_buffer(struct.pack("<3i", 0, 2, 50)),
                                 py_buffer(b"abcd")]))


def test_string_offsets_outside_the_data_raise_in_comparisons():
    with pytest.raises(ArrowInvalid, match=r"^left operand: value 1 spans bytes \[2, 50\) but "
                                           r"the data has 4$"):
        ac.equal(_damaged_strings(), "ab")
    with pytest.raises(ArrowInvalid, match=r"^right operand: value 1 spans bytes"):
        ac.less("ab", _damaged_strings())


def test_string_offsets_outside_the_data_raise_in_is_in():
    with pytest.raises(ArrowInvalid, match=r"^is_in: value 1 of the values spans bytes \[2, 50\)"):
        ac.is_in(_damaged_strings(), value_set=arrowipc.array(["ab"]))
    with pytest.raises(ArrowInvalid, match=r"^is_in: value 1 of the value set spans bytes"):
        ac.is_in(arrowipc.array(["ab"]), value_set=_damaged_strings())


def test_a_values_buffer_shorter_than_its_rows_raises():
    from arrowipc._core.arraydata import ArrayData
    from arrowipc._core.buffer import py_buffer
    from arrowipc.array import make_array
    short = make_array(ArrayData(arrowipc.int64(), 10, 0, 0, [None, py_buffer(b"12345678")]))
    for call in (lambda: ac.greater(short, 1), lambda: ac.add(short, 1)):
        with pytest.raises(ArrowInvalid, match=r"^int64 values: rows \[0, 0\+10\) need 80 bytes, "
                                               r"the buffer has 8$"):
            call()
    bits = make_array(ArrayData(arrowipc.bool_(), 100, 0, 0, [None, py_buffer(b"\x01")]))
    with pytest.raises(ArrowInvalid, match=r"bits \[0, 0\+100\) need 13 bytes but the bitmap "
                                           r"has 1"):
        ac.invert(bits)


@pytest.mark.parametrize("dtype", [np.int8, np.uint16, np.int32, np.int64, np.uint64,
                                   np.float32, np.float64])
def test_count_compare_counts_what_the_comparison_bitmap_holds(dtype):
    from arrowipc._core import compute_kernels as K
    rng = np.random.default_rng(7)
    values = rng.integers(0, 100, 1003).astype(dtype)
    if values.dtype.kind == "f":
        values[::17] = np.nan
    number = np.array([40], dtype=dtype)
    for op, code in K.OP_CODES.items():
        expected = int(np.count_nonzero(pc.call_function(
            {"==": "equal", "!=": "not_equal", "<": "less", "<=": "less_equal",
             ">": "greater", ">=": "greater_equal"}[op],
            [pa.array(values), pa.scalar(number[0])]).to_numpy(zero_copy_only=False)))
        assert K.count_compare(code, values, number) == expected, op
    assert K.count_compare(2, values[:0], number) == 0
    with pytest.raises(ValueError, match="one value to compare with, got 2"):
        K.count_compare(2, values, np.array([1, 2], dtype=dtype))


@pytest.mark.parametrize("dtype", [np.int8, np.uint16, np.int32, np.int64, np.float32,
                                   np.float64])
def test_count_compare_spans_sums_count_compare_over_each_span(dtype):
    from arrowipc._core import compute_kernels as K
    rng = np.random.default_rng(11)
    values = rng.integers(0, 100, 2000).astype(dtype)
    data = py_buffer(values.tobytes())
    width = values.dtype.itemsize
    runs = [(0, 0), (5, 300), (900, 1100), (1999, 1)]     # (first value, values)
    spans = np.array([[first * width, n] for first, n in runs], dtype=np.int64).reshape(-1)
    number = np.array([40], dtype=dtype)
    for code in K.OP_CODES.values():
        expected = sum(K.count_compare(code, values[first:first + n], number)
                       for first, n in runs)
        assert K.count_compare_spans(code, data, spans, number) == expected
    assert K.count_compare_spans(2, data, np.array([], dtype=np.int64), number) == 0


def test_count_compare_spans_checks_every_span_before_reading():
    from arrowipc._core import compute_kernels as K
    data = py_buffer(np.arange(100, dtype=np.int64).tobytes())
    number = np.array([60], dtype=np.int64)

    def spans(*pairs):
        return np.array(pairs, dtype=np.int64)
    with pytest.raises(ValueError, match=r"^span 1 \(100 values of 8 bytes at byte 8\) does not "
                                         r"lie inside the 800 bytes given$"):
        K.count_compare_spans(2, data, spans(0, 10, 8, 100), number)
    for start, n in [(-8, 1), (0, -1), (808, 0), (2**62, 2**62), (8, 2**62)]:
        with pytest.raises(ValueError, match=r"^span 0 .* does not lie inside"):
            K.count_compare_spans(2, data, spans(start, n), number)
    with pytest.raises(ValueError, match=r"^span 0 at byte 4 is not aligned to its 8-byte "
                                         r"values$"):
        K.count_compare_spans(2, data, spans(4, 1), number)
    with pytest.raises(ValueError, match=r"^spans are \(offset, count\) pairs, got 3 numbers$"):
        K.count_compare_spans(2, data, spans(0, 1, 8), number)
    with pytest.raises(ValueError, match="one value to compare with, got 2"):
        K.count_compare_spans(2, data, spans(0, 1), np.array([1, 2], dtype=np.int64))


def test_count_compare_files_sums_count_compare_spans_over_each_buffer():
    from arrowipc._core import compute_kernels as K
    rng = np.random.default_rng(12)
    files = [rng.integers(0, 100, n).astype(np.int32) for n in (500, 0, 1200)]
    data = [py_buffer(v.tobytes()) for v in files]
    spans = [np.array([0, 100, 400, 100], dtype=np.int64), np.array([], dtype=np.int64),
             np.array([4 * 7, 1193], dtype=np.int64)]
    number = np.array([30], dtype=np.int32)
    for code in K.OP_CODES.values():
        expected = sum(K.count_compare_spans(code, d, s, number) for d, s in zip(data, spans))
        assert K.count_compare_files(code, data, spans, number) == expected
    assert K.count_compare_files(2, [], [], number) == 0


def test_count_compare_files_checks_every_buffers_spans_before_reading():
    from arrowipc._core import compute_kernels as K
    good = py_buffer(np.arange(10, dtype=np.int64).tobytes())
    short = py_buffer(np.arange(2, dtype=np.int64).tobytes())
    number = np.array([5], dtype=np.int64)
    spans = np.array([0, 3], dtype=np.int64)
    with pytest.raises(ValueError, match=r"^span 0 \(3 values of 8 bytes at byte 0\) does not "
                                         r"lie inside the 16 bytes given$"):
        K.count_compare_files(2, [good, short], [spans, spans], number)
    with pytest.raises(ValueError, match=r"^2 buffers but 1 span lists$"):
        K.count_compare_files(2, [good, good], [spans], number)
    with pytest.raises(TypeError):
        K.count_compare_files(2, [b"not a buffer"], [spans], number)
    with pytest.raises(ValueError, match="one value to compare with, got 2"):
        K.count_compare_files(2, [good], [spans], np.array([1, 2], dtype=np.int64))
