"""Casts over a matrix of types and values, with pyarrow 26 as the oracle.

Every source column (edge values and a null) is cast to every target, safe and unsafe, whole and
one value at a time: where pyarrow succeeds ours gives the same type and values; where it fails
ours raises the same exception class with the same message (pyarrow's kernels report the last
failing value for text, decimals and floats to decimals; the first for integer range checks).
The few places where pyarrow 26's result is undefined or an overflow artefact are listed in
`_comparable` and in docs/table-ops.md.
"""
from __future__ import annotations

import decimal
import math
import random

import pyarrow as pa
import pytest

import arrowipc as ai
from arrowipc.errors import ArrowInvalid, ArrowNotImplementedError
from tests.model.helpers import ipc_type

D = decimal.Decimal

SOURCES = {
    "int8": pa.array([0, 1, -1, 127, -128, 5, None], pa.int8()),
    "int32": pa.array([0, 1, -1, 2**31 - 1, -2**31, 999, 100000, None], pa.int32()),
    "int64": pa.array([0, 1, -1, 2**63 - 1, -2**63, 12345, 10**12, None], pa.int64()),
    "uint64": pa.array([0, 1, 2**64 - 1, 2**63, 77, None], pa.uint64()),
    "float16": pa.array([0.0, -0.0, 1.5, -2.25, 65504.0, 0.0001, float("nan"), float("inf"),
                         300.0, None], pa.float16()),
    "float32": pa.array([0.0, 1.5, -2.25, 3.4e38, 1e-7, 123.456, float("nan"), float("-inf"),
                         65519.0, 70000.0, None], pa.float32()),
    "float64": pa.array([0.0, 1.5, -2.25, 1e300, 1e-7, 123.456, 0.1, float("nan"),
                         float("inf"), 2.0**60, 12.345678, 2.675, 0.125, None], pa.float64()),
    "decimal32": pa.array([D("0.00"), D("1.23"), D("-999.99"), D("999.99"), D("5.00"), None],
                          pa.decimal32(5, 2)),
    "decimal64": pa.array([D("0"), D("1.234"), D("-123456789.123"), D("12.000"), None],
                          pa.decimal64(12, 3)),
    "decimal128": pa.array([D("0"), D("1.2345"), D("-9999999999999999.9999"), D("42.0000"),
                            D("0.0001"), None], pa.decimal128(20, 4)),
    "decimal256": pa.array([D("0"), D("1.23456"), D("-" + "9" * 35 + ".99999"), D("7.00000"),
                            None], pa.decimal256(40, 5)),
    "string": pa.array(["1", "-2", "1.5", "abc", "2020-01-01", "2020-01-01T12:34:56", "true",
                        "", " 1", "1e3", "12.345", None], pa.string()),
    "large_string": pa.array(["1", "-2", "1.5", "abc", "2020-01-01", "", "1e3", None],
                             pa.large_string()),
    "string_view": pa.array(["1", "-2", "1.5", "abc", "2020-01-01", "", "1e3", None],
                            pa.string_view()),
    "binary": pa.array([b"1", b"-2", b"1.5", b"\xff1", b"true", b"", b"1e3", None], pa.binary()),
    "bool": pa.array([True, False, None]),
    "timestamp_us": pa.array([0, 1_600_000_000_123_456, -1, -86_400_000_001, None],
                             pa.timestamp("us")),
    "timestamp_s": pa.array([0, 1_600_000_000, -1, None], pa.timestamp("s")),
    "timestamp_ns": pa.array([0, 1_600_000_000_123_456_789, -1, 10**9, None], pa.timestamp("ns")),
    "timestamp_utc": pa.array([0, 1_600_000_000_123, -1, None], pa.timestamp("ms", "UTC")),
    "timestamp_ny": pa.array([0, 1_600_000_000_123, -1, None],
                             pa.timestamp("ms", "America/New_York")),
    "timestamp_offset": pa.array([0, 1_600_000_000, None], pa.timestamp("s", "+05:30")),
    "date32": pa.array([0, 18262, -1, -719162, 2932896, None], pa.date32()),
    "date64": pa.array([0, 1_577_836_800_000, -86_400_000, 1, None], pa.date64()),
    "time32_s": pa.array([0, 3661, 86399, None], pa.time32("s")),
    "time32_ms": pa.array([0, 3661_001, 86399_999, 10, None], pa.time32("ms")),
    "time64_us": pa.array([0, 3661_000_001, 5_000_000, 1_500_000, None], pa.time64("us")),
    "time64_ns": pa.array([0, 3661_000_000_001, 86399_999_999_999, 100, None], pa.time64("ns")),
    "duration_s": pa.array([0, 1, -5, 86400 * 400, None], pa.duration("s")),
    "duration_ms": pa.array([0, 1500, -5, None], pa.duration("ms")),
    "interval": pa.array([pa.MonthDayNano([1, 2, 3]), None], pa.month_day_nano_interval()),
}

TARGETS = [
    pa.int8(), pa.int16(), pa.int32(), pa.int64(), pa.uint8(), pa.uint32(), pa.uint64(),
    pa.float16(), pa.float32(), pa.float64(),
    pa.decimal32(5, 2), pa.decimal32(9, 0), pa.decimal64(12, 3), pa.decimal64(18, 1),
    pa.decimal128(20, 4), pa.decimal128(38, 10), pa.decimal128(3, 1), pa.decimal256(40, 5),
    pa.decimal256(76, 0),
    pa.string(), pa.large_string(), pa.string_view(), pa.binary(), pa.bool_(),
    pa.timestamp("us"), pa.timestamp("s"), pa.timestamp("ns"), pa.timestamp("ms", "UTC"),
    pa.timestamp("ms", "America/New_York"), pa.date32(), pa.date64(), pa.time32("s"),
    pa.time64("ns"), pa.duration("s"), pa.month_day_nano_interval(),
    pa.run_end_encoded(pa.int32(), pa.int64()),
    pa.sparse_union([pa.field("a", pa.int64()), pa.field("b", pa.string())]),
    pa.dense_union([pa.field("a", pa.int64())]), pa.list_view(pa.int8()),
]


def _comparable(src: pa.DataType, target: pa.DataType, safe: bool, v) -> bool:
    """False for the values whose pyarrow 26 result is undefined or an overflow artefact."""
    if v is None:
        return True
    if safe and (pa.types.is_decimal32(src) and target in (pa.int64(), pa.uint32(), pa.uint64())
                 or pa.types.is_decimal64(src) and target == pa.uint64()):
        # pyarrow 26 refuses every value here (a bug); ours range-checks each one
        return False
    if pa.types.is_floating(src) and pa.types.is_integer(target) and not safe:
        # NaN, infinities and out-of-range floats: undefined in C, platform-specific in pyarrow
        return math.isfinite(v) and abs(v) < 2**31
    if pa.types.is_floating(src) and pa.types.is_decimal64(target):
        # pyarrow 26 mis-scales floats far below the decimal's unit for decimal64 targets
        return v == 0 or abs(v) >= 10.0 ** -target.scale
    if not safe and pa.types.is_temporal(src) and pa.types.is_temporal(target):
        # an unchecked unit change that overflows int64 wraps in pyarrow
        return _fits(v, src, target)
    if getattr(src, "tz", None) and pa.types.is_string(target):
        # pyarrow prints the wrapped local time of a zoned timestamp beyond the year 32767
        return abs(pa.scalar(v, src).value) < 10**11 * {"s": 1, "ms": 1000, "us": 10**6,
                                                         "ns": 10**9}[src.unit]
    return True


def _fits(v, src, target) -> bool:
    """The value casts safely (or the pair has no cast at all)."""
    try:
        pa.array([v], src).cast(target)
    except pa.ArrowInvalid:
        return False
    except pa.ArrowNotImplementedError:
        pass
    return True


def _outcome(thunk):
    try:
        return thunk()
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError, ArrowInvalid,
            ArrowNotImplementedError) as e:
        return e


def _assert_same(arr: pa.Array, target: pa.DataType, safe: bool, where: str) -> None:
    expected = _outcome(lambda: arr.cast(target, safe=safe))
    got = _outcome(lambda: pa.array(ai.array(arr).cast(ipc_type(target), safe=safe)))
    if isinstance(expected, Exception):
        assert type(got).__name__ == type(expected).__name__, f"{where}: {got!r} vs {expected!r}"
        assert str(got) == str(expected), where
        return
    assert not isinstance(got, Exception), f"{where}: {got!r}, pyarrow gives {expected}"
    assert got.type == expected.type, where
    if not got.equals(expected):          # NaN != NaN for equals: compare the values
        for g, e in zip(got.to_pylist(), expected.to_pylist()):
            same = g == e or (isinstance(g, float) and math.isnan(g) and math.isnan(e))
            assert same and type(g) is type(e), f"{where}: {g!r} != {e!r}"
    try:
        expected.validate(full=True)
    except pa.ArrowInvalid:
        return                            # pyarrow relabels out-of-range values as they are
    got.validate(full=True)


@pytest.mark.parametrize("name", list(SOURCES))
def test_cast_matrix_matches_pyarrow(name):
    source = SOURCES[name]
    for target in TARGETS:
        for safe in (True, False):
            keep = [_comparable(source.type, target, safe, v)
                    for v in source.to_pylist()] if source.type != pa.month_day_nano_interval() \
                else [True] * len(source)
            arr = pa.array([v for v, k in zip(source.to_pylist(), keep) if k], source.type)
            _assert_same(arr, target, safe, f"{name} -> {target} safe={safe}")
            for i in range(len(arr)):
                _assert_same(arr.slice(i, 1), target, safe,
                             f"{name}[{i}] -> {target} safe={safe}")


@pytest.mark.parametrize("source_type,target", [
    (pa.int32(), pa.decimal128(20, 4)), (pa.int16(), pa.decimal32(9, 2)),
    (pa.uint32(), pa.decimal64(18, 3)), (pa.decimal128(20, 4), pa.int64()),
    (pa.decimal64(12, 3), pa.decimal128(30, 6)), (pa.decimal256(40, 4), pa.decimal64(18, 2)),
    (pa.decimal128(20, 4), pa.float64()), (pa.decimal32(9, 2), pa.int16())],
    ids=str)
def test_long_decimal_columns_with_nulls_and_offsets_match_pyarrow(source_type, target):
    # the vectorised paths: many rows, nulls, a sliced start, safe and unsafe
    rng = random.Random(7)
    if pa.types.is_decimal(source_type):
        digits = min(source_type.precision, 9)
        values = [None if rng.random() < 0.1 else
                  D(rng.randrange(-10**digits + 1, 10**digits)).scaleb(-source_type.scale)
                  for _ in range(1000)]
        if pa.types.is_integer(target) or getattr(target, "scale", 99) < source_type.scale:
            # whole values, so the safe cast succeeds
            values = [None if v is None else v.to_integral_value(decimal.ROUND_DOWN)
                      for v in values]
    else:
        values = [None if rng.random() < 0.1 else rng.randrange(0, 30000) for _ in range(1000)]
    arr = pa.array(values, source_type).slice(3)
    for safe in (True, False):
        _assert_same(arr, target, safe, f"{source_type} -> {target} safe={safe}")


# -- the rules one by one ------------------------------------------------------------------------

def test_integer_to_decimal_checks_precision_from_the_type():
    # pyarrow rejects the type pair, whatever the values: int32 needs 10 digits before the point
    with pytest.raises(ArrowInvalid, match="It should be at least 12"):
        ai.array([1], ai.int32()).cast(ai.decimal32(5, 2))
    assert ai.array([1, -5], ai.int8()).cast(ai.decimal32(5, 2)).to_pylist() == [
        D("1.00"), D("-5.00")]


def test_decimal_rescale_rules():
    arr = ai.array(pa.array([D("1.23"), D("-999.99")], pa.decimal32(5, 2)))
    with pytest.raises(ArrowInvalid, match="^Rescaling Decimal value would cause data loss$"):
        arr.cast(ai.decimal32(3, 1))
    with pytest.raises(ArrowInvalid, match="^Decimal value does not fit in precision 4$"):
        arr.cast(ai.decimal32(4, 2))
    assert arr.cast(ai.decimal32(3, 1), safe=False).to_pylist() == [D("1.2"), D("-999.9")]
    assert arr.cast(ai.decimal256(40, 5)).to_pylist() == [D("1.23000"), D("-999.99000")]


def test_decimals_to_wider_integers_are_range_checked_per_value():
    # pyarrow 26's safe check rejects every decimal32 value cast to int64/uint32/uint64 and every
    # decimal64 value cast to uint64; we check each value instead (docs/pyarrow-compat.md)
    arr = ai.array(pa.array([D("5"), D("-7"), None], pa.decimal32(5, 0)))
    assert arr.cast(ai.int64()).to_pylist() == [5, -7, None]
    assert arr.cast(ai.int32()).to_pylist() == [5, -7, None]
    assert arr.cast(ai.int64(), safe=False).to_pylist() == [5, -7, None]
    with pytest.raises(ArrowInvalid, match="^Integer value out of bounds$"):
        arr.cast(ai.uint32())                           # -7 does not fit
    assert arr.slice(0, 1).cast(ai.uint64()).to_pylist() == [5]
    wide = ai.array(pa.array([D("123456789012")], pa.decimal64(18, 0)))
    assert wide.cast(ai.uint64()).to_pylist() == [123456789012]


def test_float_to_decimal32_rounds_half_to_even_after_scaling():
    got = ai.array([0.125, 2.675, -0.125]).cast(ai.decimal32(5, 2)).to_pylist()
    assert got == [D("0.12"), D("2.68"), D("-0.12")]
    with pytest.raises(ArrowInvalid, match=r"^Cannot convert nan to Decimal128$"):
        ai.array([float("nan")]).cast(ai.decimal64(5, 2))


def test_decimal_to_text_keeps_every_digit():
    arr = pa.array([D("-" + "9" * 35 + ".99999"), D("1E-7")], pa.decimal256(76, 7))
    assert ai.array(arr).cast(ai.string()).to_pylist() == arr.cast(pa.string()).to_pylist()


def test_text_errors_name_the_last_bad_value():
    with pytest.raises(ArrowInvalid, match="'y' as a scalar of type int8"):
        ai.array(["x", "y", "1"]).cast(ai.int8())
    with pytest.raises(ArrowInvalid, match="^Decimal value does not fit in precision 5$"):
        ai.array(["abc", "1e3"]).cast(ai.decimal32(5, 2))
    with pytest.raises(ArrowInvalid, match="^Empty string cannot be converted to decimal64$"):
        ai.array([""]).cast(ai.decimal64(5, 2))


def test_float16_truncation_names_the_raw_bits():
    with pytest.raises(ArrowInvalid, match="^Float value 15872 was truncated converting to int8$"):
        ai.array(pa.array([1.5], pa.float16())).cast(ai.int8())


TEXT = ["2020-01-01", "2020-01-01T12:34:56", "2020-01-01 12:34:56", "2020-01-01T12:34",
        "2020-01-01T12", "2020-01-01T12:34:56.123", "2020-01-01T12:34:56.123456789",
        "2020-01-01T12:34:56.1234567891", "2020-01-01T12:34:56Z", "2020-01-01T12:34:56+01:00",
        "2020-01-01T12:34:56+0100", "2020-01-01T12:34:56-05", "2020-1-1", "20200101",
        "2020-01-01T25:00:00", "2020-02-30", "abc", "", " 2020-01-01", "2020-01-01T12:34:56.",
        "0001-01-01", "0000-01-01", "9999-12-31T23:59:59", "2020-01-01T24:00:00",
        "2020-01-01T12:34:60", "2020-01-01 12:34:56.5Z", "+2020-01-01", "2020-13-01",
        "1900-02-29", "2000-02-29", "2020-01-01T12:34:56,5", "2020-01-01Z", "2020-01-01T12Z",
        "2020-01-01T12:34:56+24:00", "2020-01-01T12:34:56+23:59", "1677-09-21",
        "2262-04-11T23:47:16.854775807", "2262-04-12"]


@pytest.mark.parametrize("target", [pa.timestamp("s"), pa.timestamp("ms"), pa.timestamp("ns"),
                                    pa.timestamp("us", "UTC"), pa.timestamp("ns", "+01:00"),
                                    pa.timestamp("s", "America/New_York"), pa.date32(),
                                    pa.date64()], ids=str)
def test_text_to_timestamps_and_dates_follows_pyarrow(target):
    for text in TEXT:
        _assert_same(pa.array([text, None]), target, True, f"{text!r} -> {target}")


def test_pairs_without_a_cast_function_raise_pyarrow_message():
    ree = pa.run_end_encoded(pa.int32(), pa.int64())
    with pytest.raises(ArrowNotImplementedError,
                       match=r"^Unsupported cast to run_end_encoded<run_ends: int32, values: "
                             r"int64> from int8$"):
        ai.array([1], ai.int8()).cast(ipc_type(ree))
    with pytest.raises(ArrowNotImplementedError,
                       match="^Unsupported cast from bool to halffloat using function func$"):
        ai.array([True]).cast(ai.float16())
    with pytest.raises(ArrowNotImplementedError, match="to utf8 using function cast_string$"):
        ai.array(pa.array([pa.MonthDayNano([1, 2, 3])])).cast(ai.string())


@pytest.mark.parametrize("source,target", [
    (ai.decimal128(20, 4), ai.int64()), (ai.decimal32(5, 2), ai.decimal128(20, 4)),
    (ai.timestamp("us"), ai.string()), (ai.float16(), ai.float64()),
    (ai.date32(), ai.string()), (ai.int32(), ai.decimal128(20, 4))], ids=str)
def test_short_values_buffer_is_an_error_not_a_crash(source, target):
    # untrusted data: a values buffer one row short is reported, never read past
    from arrowipc._core.arraydata import ArrayData
    from arrowipc._core.buffer import py_buffer
    from arrowipc.cast import cast_data
    width = source.bit_width // 8
    d = ArrayData(source, 4, 0, 0, [None, py_buffer(bytes(3 * width))])
    with pytest.raises(ArrowInvalid, match=f"holds {3 * width} bytes, expected at least "
                                           f"{4 * width} for 4 values"):
        cast_data(d, target)


@pytest.mark.parametrize("source_type", [
    pa.timestamp("s"), pa.timestamp("ms"), pa.timestamp("us"), pa.timestamp("ns"),
    pa.timestamp("us", "UTC"), pa.timestamp("ms", "-03:30"), pa.timestamp("s", "Asia/Tokyo"),
    pa.date32(), pa.date64(), pa.time32("ms"), pa.time64("us"), pa.duration("ms")], ids=str)
@pytest.mark.parametrize("target", [pa.string(), pa.large_string(), pa.string_view()], ids=str)
def test_long_temporal_columns_to_text_match_pyarrow(source_type, target):
    # the fixed-width path (one text length for every row) and the per-row one, with nulls and a
    # sliced start
    rng = random.Random(11)
    if pa.types.is_time(source_type):
        top = 86400 * {"s": 1, "ms": 1000, "us": 10**6, "ns": 10**9}[source_type.unit]
    elif pa.types.is_date32(source_type):
        top = 2_900_000
    else:
        top = 2 * 10**9 * {"s": 1, "ms": 1000, "us": 10**6, "ns": 10**9}[
            getattr(source_type, "unit", "ms")]
    values = [None if rng.random() < 0.1 else rng.randrange(0, top) for _ in range(500)]
    storage = pa.int32() if source_type.bit_width == 32 else pa.int64()
    arr = pa.array(values, storage).cast(source_type).slice(5)
    _assert_same(arr, target, True, f"{source_type} -> {target}")
