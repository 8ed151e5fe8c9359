"""array_data_from_python against pa.array: same type, same values, buffers pyarrow validates."""
import datetime as dt
import zoneinfo
from decimal import Decimal as D

import pytest

pa = pytest.importorskip("pyarrow")
np = pytest.importorskip("numpy")

import arrowipc as ai
from arrowipc.errors import (ArrowCapacityError, ArrowInvalid, ArrowNotImplementedError,
                             ArrowTypeError)
from arrowipc.from_python import array_data_from_python, infer_type
from arrowipc.to_python import MonthDayNano, to_pylist
from arrowipc.validate import validate_array

from tests.model.helpers import ipc_type, pa_type, pyarrow_from_data

PARIS = zoneinfo.ZoneInfo("Europe/Paris")


def built(values, pa_t=None):
    """Our ArrayData for values (typed as pa_t if given), checked against pa.array."""
    want = pa.array(values, pa_t)
    data = array_data_from_python(values, None if pa_t is None else ipc_type(pa_t))
    assert data.type == ipc_type(want.type), f"{data.type} != {want.type}"
    assert data.length == len(want) and data.offset == 0
    assert data.null_count == want.null_count
    if data.null_count == 0 and data.buffers and data.type.kind not in (
            ai.types.Kind.SPARSE_UNION, ai.types.Kind.DENSE_UNION):
        assert data.buffers[0] is None, "no nulls: the validity buffer is omitted"
    if not (pa_t is not None and pa.types.is_decimal(pa_t) and pa_t.precision > 28):
        # arrowipc.validate checks decimal precision with a 28-digit Decimal context (reported)
        validate_array(data, full=True)
    ours = pyarrow_from_data(data)
    ours.validate(full=True)
    assert ours.type == want.type
    assert repr(ours.to_pylist()) == repr(want.to_pylist()), f"\n{ours}\n!=\n{want}"
    assert repr(to_pylist(data)) == repr(want.to_pylist())
    return data


# -- inference ----------------------------------------------------------------------------------

INFERRED = [
    [], [None, None], [True, None, False], [1, None, -(2**63), 2**63 - 1], [1, 2.5, None],
    [2.5, 1], [float("nan"), None, float("inf")], ["a", None, "héllo", ""],
    [b"a", None, b"\x00"], ["a", b"b"], [D("1.23"), D("-100.5"), None], [D("0.001")], [D(0)],
    [D("-0.00")], [D("1E+3")], [D("1.5"), 1], [D("1234567890123456789012345678901234567890")],
    [dt.date(2020, 1, 1), None, dt.date(1, 1, 1), dt.date(9999, 12, 31)],
    [dt.date(2020, 1, 1), dt.datetime(2020, 1, 2, 5)],
    [dt.datetime(2020, 1, 1, 1, 2, 3, 4), None, dt.datetime(1900, 1, 1)],
    [dt.datetime(2020, 1, 1, tzinfo=dt.timezone.utc)],
    [dt.datetime(2020, 6, 1, 12, tzinfo=PARIS), dt.datetime(2020, 1, 1)],
    [dt.datetime(2020, 1, 1), dt.datetime(2020, 1, 1, tzinfo=PARIS)],
    [dt.datetime(2020, 1, 1, tzinfo=dt.timezone(dt.timedelta(hours=-5, minutes=-30)))],
    [dt.time(1, 2, 3, 4), None], [dt.timedelta(1, 2, 3), dt.timedelta(-1), None],
    [[1, 2], None, [None], []], [[], []], [[1], [2.5]], [(1, 2)], [[[1]], [None, [2, 3]]],
    [{"a": 1}, {"b": "x"}, None, {}], [{}], [{"a": [1]}, {"a": None}, {"b": {"c": 1.5}}],
    [{b"a": 1}], [np.int8(1), np.int8(2)], [np.int16(1), 2], [np.float16(1), np.float32(2)],
    [np.float32(1.5), None], [np.bool_(True), False], [pa.MonthDayNano([1, 2, 3]), None],
]


@pytest.mark.parametrize("values", INFERRED, ids=repr)
def test_inferred_like_pyarrow(values):
    built(values)


def test_iterables_and_generators():
    assert to_pylist(array_data_from_python(range(3))) == [0, 1, 2]
    assert to_pylist(array_data_from_python(x * 2 for x in range(3))) == [0, 2, 4]
    assert to_pylist(array_data_from_python((1.5, None))) == [1.5, None]


@pytest.mark.parametrize("values,error", [
    ([True, 1], ArrowInvalid), ([1, True], ArrowTypeError), ([1, "a"], ArrowInvalid),
    (["a", 1], ArrowTypeError), ([[1], "a"], ArrowInvalid), ([object()], ArrowInvalid),
    ([{1: 2}], ArrowTypeError), ([D("NaN")], ArrowInvalid), ([2**63], ArrowInvalid),
    ([dt.time(1), dt.datetime(2020, 1, 1)], ArrowTypeError), ("abc", ArrowTypeError),
    ({"a": 1}, ArrowTypeError),
])
def test_inference_errors(values, error):
    with pytest.raises(error):
        array_data_from_python(values)


_O = object()
MIXED = [
    [1, "a"], ["a", 1], [1.5, "a"], ["a", 1.5], [None, "a", 1], [1, "a", 2.5], [1, 2.5, "a"],
    [True, 1], [1, True], [True, 2.5], [True, "a"], ["a", True], [b"x", 1], [1, b"x"],
    [[1], 3], [3, [1]], [[1], "a"], ["a", [1]], [b"x", [1]], [{"a": 1}, 1], [1, {"a": 1}],
    [[1], {"a": 1}], [{"a": 1}, [1]], ["a", {"a": 1}], [[1, "a"]], [{"a": 1}, {"a": "x"}],
    [1, dt.date(2000, 1, 1)], [dt.date(2000, 1, 1), "a"], ["a", dt.date(2000, 1, 1)],
    [1, dt.datetime(2000, 1, 1)], [dt.time(1), "a"], ["a", dt.time(1)],
    [dt.timedelta(1), "a"], [D(1), 1.5], [1.5, D(1)], [D(1), "a"], ["a", D(1)], [_O], [1, _O],
]


@pytest.mark.parametrize("values", MIXED, ids=repr)
def test_mixed_python_types_fail_like_pyarrow(values):
    # pyarrow infers the type of the values before the first one that does not fit them; that
    # value's conversion then fails, ArrowInvalid or ArrowTypeError by the inferred type
    with pytest.raises(pa.ArrowException) as expected:
        pa.array(values)
    error = ArrowInvalid if isinstance(expected.value, ValueError) else ArrowTypeError
    with pytest.raises(error) as got:
        array_data_from_python(values)
    assert str(got.value) == str(expected.value)


@pytest.mark.parametrize("values,type_name", [
    ([2**63], None), ([1, 2**64], None), ([-(2**63) - 1], None), ([2**63], "int64"),
    ([2**63], "int32"), ([2**64], "uint64"), ([-1], "uint64"), ([-1], "uint8"),
    ([-(2**63) - 1], "int8"), ([2**40], "int32"), ([300], "uint8"), ([-129], "int8"),
], ids=repr)
def test_integers_out_of_range_raise_pyarrows_builtin(values, type_name):
    # pyarrow: OverflowError when Python cannot make the C integer it converts through (a
    # long, or an unsigned one for unsigned types), ArrowInvalid when that fits but the type not
    with pytest.raises((pa.ArrowInvalid, OverflowError)) as expected:
        pa.array(values, type_name and getattr(pa, type_name)())
    with pytest.raises(ArrowInvalid) as got:
        array_data_from_python(values, type_name and getattr(ai, type_name)())
    assert isinstance(got.value, OverflowError) == isinstance(expected.value, OverflowError)
    assert "does not fit in" in str(got.value)


def test_type_argument_may_be_pyarrows():
    # a pyarrow type is imported through the C interface (it was refused with "expected a
    # DataType, got DataType"); anything else names its class in full
    for values, t in (([1, None], pa.int32()), ([[1]], pa.list_(pa.int8())),
                      ([1.5], pa.float16()), (["x"], pa.large_string())):
        assert ai.array(values, t).equals(pa.array(values, t))
    with pytest.raises(ArrowTypeError, match="expected a DataType, got pyarrow.lib.Field"):
        ai.array([1], pa.field("a", pa.int8()))


# -- every type, explicitly ---------------------------------------------------------------------

TYPED = [
    ([None, None], pa.null()),
    ([True, None, False] * 4, pa.bool_()),
    ([1, None, -128, 127], pa.int8()), ([0, 255, None], pa.uint8()),
    ([-(2**15), 2**15 - 1], pa.int16()), ([2**16 - 1, None], pa.uint16()),
    ([-(2**31), None, 2**31 - 1], pa.int32()), ([2**32 - 1], pa.uint32()),
    ([-(2**63), 2**63 - 1, None], pa.int64()), ([2**64 - 1, 0, None], pa.uint64()),
    ([1.0, 2], pa.int8()), ([np.int64(5), None], pa.int8()),
    ([1.5, None, 2, -0.0, 1e10], pa.float16()), ([1.5, None, 1e300, 2], pa.float32()),
    ([1, None, 2.5, True], pa.float64()), ([np.float64(5.5), np.float32(1.5)], pa.float32()),
    ([D("1.5"), 1, None, D("-9999999.99")], pa.decimal32(9, 2)),
    ([D("1.5"), None, D("99999999999999.9999")], pa.decimal64(18, 4)),
    ([D("1.50"), D("-12345678901234567890.123456789012345678")], pa.decimal128(38, 18)),
    ([D("1.5"), None, D("-" + "9" * 56 + ".12345678901234567890")], pa.decimal256(76, 20)),
    ([D("1.2E+3"), None, 1200], pa.decimal128(5, -2)), ([D("1.50")], pa.decimal128(5, 1)),
    ([dt.date(2020, 1, 1), None, 1, dt.datetime(2020, 1, 1, 5)], pa.date32()),
    ([dt.date(2020, 1, 1), 86_400_000, dt.datetime(2020, 1, 1, 5), None], pa.date64()),
    ([dt.time(1, 2, 3, 4500), None, 5], pa.time32("s")),
    ([dt.time(1, 2, 3, 4500)], pa.time32("ms")),
    ([dt.time(23, 59, 59, 999999), None], pa.time64("us")),
    ([dt.time(1, 2, 3, 4500), 5000], pa.time64("ns")),
    ([dt.datetime(2020, 1, 1, 0, 0, 0, 1500), None, 5], pa.timestamp("s")),
    ([dt.datetime(1969, 12, 31, 23, 59, 59, 999999)], pa.timestamp("s")),
    ([dt.datetime(1969, 12, 31, 23, 59, 59, 999999)], pa.timestamp("ms")),
    ([dt.datetime(2020, 1, 1, 0, 0, 0, 1500)], pa.timestamp("ns")),
    ([dt.datetime(2020, 6, 1, 12, tzinfo=PARIS), dt.datetime(2020, 1, 1)],
     pa.timestamp("us", "UTC")),
    ([dt.datetime(2020, 6, 1, 12)], pa.timestamp("ms", "Europe/Paris")),
    ([dt.timedelta(1, 2, 3500), None, -7], pa.duration("ms")),
    ([dt.timedelta(microseconds=-1500)], pa.duration("ms")),
    ([dt.timedelta(1, 2, 3)], pa.duration("ns")),
    ([dt.timedelta(1, 2, 3)], pa.duration("s")),
    ([(1, 2, 3), None, MonthDayNano(-1, -2, 2**63 - 1)], pa.month_day_nano_interval()),
    ([dt.timedelta(1, 2, 3)], pa.month_day_nano_interval()),
    ([b"ab", None, "cd", bytearray(b"ef")], pa.binary(2)), ([b"", None], pa.binary(0)),
    (["a", None, "héllo", b"bytes"], pa.string()),
    (["a", None, b"x", bytearray(b"y")], pa.binary()),
    (["a", None, "ü" * 100], pa.large_string()), ([b"a", None], pa.large_binary()),
    (["", "a" * 12, "b" * 13, None, "ü" * 20, "short"], pa.string_view()),
    ([b"", b"a" * 12, b"b" * 13, None, bytes(range(256))], pa.binary_view()),
    ([[1, 2], None, [], [None]], pa.list_(pa.int8())),
    ([[1, 2], None, [], [None]], pa.large_list(pa.int8())),
    ([[1, 2], None, [], [None]], pa.list_view(pa.int8())),
    ([[1, 2], None, [], [None]], pa.large_list_view(pa.int8())),
    ([[1, 2], None, [None, 3], (4, 5)], pa.list_(pa.int8(), 2)),
    ([[], None, []], pa.list_(pa.int8(), 0)),
    ([np.array([1, 2]), None], pa.list_(pa.int64())),
    ([{"a": 1}, None, {"b": 2}, {"a": 3, "c": 4}], pa.struct([("a", pa.int8()), ("b", pa.int8())])),
    ([(5, 6), None, (None, 7)], pa.struct([("a", pa.int8()), ("b", pa.int8())])),
    ([{"x": {"y": [1, None]}}, None, {"x": None}],
     pa.struct([("x", pa.struct([("y", pa.list_(pa.int8()))]))])),
    ([{}, None], pa.struct([])),
    ([[("a", 2)], None, {"x": 3}, []], pa.map_(pa.string(), pa.int8())),
    ([[{"key": "k", "value": None}], None], pa.map_(pa.string(), pa.int8())),
    ([{"a": [1]}, {}], pa.map_(pa.string(), pa.list_(pa.int64()))),
    (["a", "b", "a", None, "c"], pa.dictionary(pa.int8(), pa.string())),
    ([1.5, float("nan"), 1.5, None, float("nan")], pa.dictionary(pa.uint16(), pa.float64())),
    ([1, 1, 2, None, None, 1], pa.run_end_encoded(pa.int32(), pa.int64())),
    (["a", "a", "a"], pa.run_end_encoded(pa.int16(), pa.string())),
    ([], pa.run_end_encoded(pa.int64(), pa.string())),
    ([None, None], pa.run_end_encoded(pa.int64(), pa.string())),
]


@pytest.mark.parametrize("values,t", TYPED,
                         ids=lambda x: str(x) if isinstance(x, pa.DataType) else "")
def test_typed_like_pyarrow(values, t):
    data = built(values, t)
    if pa.types.is_dictionary(t):
        # indices and dictionary as pyarrow's own dictionary encoding would give them
        want = pa.array(values, t)
        ours = pyarrow_from_data(data)
        assert ours.dictionary.equals(want.dictionary) or pa.types.is_floating(t.value_type)
    if pa.types.is_run_end_encoded(t):
        want = pa.array(values, t)
        assert pyarrow_from_data(data).run_ends.equals(want.run_ends)


def test_dictionary_of_lists():
    # pyarrow cannot build this from Python; check our encoding directly.
    t = ai.dictionary(ai.int32(), ai.list_(ai.int8()))
    data = array_data_from_python([[1], [1], None, [2], [1]], t)
    assert to_pylist(data.dictionary) == [[1], [2]]
    ours = pyarrow_from_data(data)
    ours.validate(full=True)
    assert ours.indices.to_pylist() == [0, 0, None, 1, 0]
    assert ours.to_pylist() == [[1], [1], None, [2], [1]]


def test_mixed_struct_rows_and_map_entries():
    # pyarrow wants one row form per array; we accept dicts and tuples side by side.
    t = ai.struct([("a", ai.int8()), ("b", ai.int8())])
    assert to_pylist(array_data_from_python([{"b": 2}, (5, 6)], t)) == [
        {"a": None, "b": 2}, {"a": 5, "b": 6}]
    m = ai.map_(ai.string(), ai.int8())
    data = array_data_from_python([[("a", 1), {"key": "b", "value": 2}], {"c": 3}], m)
    assert to_pylist(data) == [[("a", 1), ("b", 2)], [("c", 3)]]
    pyarrow_from_data(data).validate(full=True)


def test_views_inline_and_out_of_line():
    values = ["", "x" * 12, "y" * 13, None, "z" * 40]
    data = array_data_from_python(values, ai.string_view())
    views = bytes(memoryview(data.buffers[1]))
    assert len(views) == 16 * 5 and len(data.buffers) == 3      # one variadic data buffer
    assert views[16:20] == (12).to_bytes(4, "little") and views[20:32] == b"x" * 12
    assert views[32:36] == (13).to_bytes(4, "little") and views[36:40] == b"yyyy"
    assert views[40:48] == bytes(8)                               # buffer 0, offset 0
    assert views[72:80] == (0).to_bytes(4, "little") + (13).to_bytes(4, "little")
    assert bytes(memoryview(data.buffers[2])) == b"y" * 13 + b"z" * 40
    short = array_data_from_python(["a", "b"], ai.binary_view())
    assert len(short.buffers) == 2                                # no data buffers needed


def test_extension_type_builds_storage():
    ext = ai.ExtensionType("my.uuid", ai.fixed_size_binary(4), b"meta")
    data = array_data_from_python([b"abcd", None], ext)
    assert data.type == ext and data.null_count == 1
    assert to_pylist(data) == [b"abcd", None]
    ours = pyarrow_from_data(data)
    ours.validate(full=True)
    assert ours.storage.to_pylist() == [b"abcd", None]


def test_unions_from_type_code_pairs():
    fields = [ai.field("i", ai.int64()), ai.field("s", ai.string())]
    values = [(5, 1), (7, "a"), None, (7, None), (5, 2)]
    for make, pa_make in ((ai.sparse_union, pa.sparse_union), (ai.dense_union, pa.dense_union)):
        t = make(fields, [5, 7])
        data = array_data_from_python(values, t)
        assert data.null_count == 0
        ours = pyarrow_from_data(data)
        ours.validate(full=True)
        assert ours.type == pa_make([pa.field("i", pa.int64()), pa.field("s", pa.string())], [5, 7])
        assert ours.to_pylist() == [1, "a", None, None, 2]
        assert to_pylist(data) == [1, "a", None, None, 2]
    with pytest.raises(ArrowTypeError, match="type_code, value"):
        array_data_from_python([1], ai.sparse_union(fields))
    with pytest.raises(ArrowInvalid, match="type code 3"):
        array_data_from_python([(3, 1)], ai.dense_union(fields))


def test_day_time_and_month_intervals():
    data = array_data_from_python([(1, 500), None, (-2, -1)], ai.day_time_interval())
    assert to_pylist(data) == [(1, 500), None, (-2, -1)]
    data = array_data_from_python([12, None, -3], ai.month_interval())
    assert to_pylist(data) == [12, None, -3] and data.null_count == 1


def test_exact_null_count_and_validity_bits():
    values = [None if i % 3 == 0 else i for i in range(20)]
    data = array_data_from_python(values, ai.int32())
    assert data.null_count == 7
    bits = bytes(memoryview(data.buffers[0]))
    assert [(bits[i // 8] >> (i % 8)) & 1 for i in range(20)] == [v is not None for v in values]


# -- errors -------------------------------------------------------------------------------------

@pytest.mark.parametrize("values,t,error,match", [
    ([300], ai.int8(), ArrowInvalid, "300 at index 0 does not fit in int8"),
    ([1, -1], ai.uint8(), ArrowInvalid, "-1 at index 1"),
    ([2**64], ai.uint64(), ArrowInvalid, "does not fit"),
    ([1, True], ai.int8(), ArrowTypeError, "bool"),
    ([1.5], ai.int32(), ArrowInvalid, "not an integer"),
    (["1"], ai.int8(), ArrowTypeError, "str"),
    ([2**53 + 1], ai.float64(), ArrowInvalid, "exactly"),
    ([D("1.5")], ai.float64(), ArrowTypeError, "Decimal"),
    (["x"], ai.float32(), ArrowTypeError, "index 0"),
    ([1, 0], ai.bool_(), ArrowTypeError, "bool"),
    ([1], ai.string(), ArrowTypeError, "int"),
    ([b"\xff"], ai.string(), ArrowInvalid, "index 0"),
    ([b"abc"], ai.fixed_size_binary(2), ArrowInvalid, "expected 2 bytes, got 3"),
    ([D("1.555")], ai.decimal128(5, 2), ArrowInvalid, "lose digits"),
    ([D("1000")], ai.decimal128(5, 2), ArrowInvalid, "precision 5"),
    ([10**9], ai.decimal32(9, 0), ArrowInvalid, "precision 9"),
    ([1.5], ai.decimal128(5, 2), ArrowTypeError, "float"),
    ([D("Infinity")], ai.decimal128(5, 2), ArrowInvalid, "finite"),
    ([1], ai.null(), ArrowInvalid, "only None"),
    ([[1]], ai.fixed_size_list(ai.int8(), 2), ArrowInvalid, "has 1 values"),
    (["ab"], ai.list_(ai.int8()), ArrowTypeError, "expected a list"),
    ([[(None, 2)]], ai.map_(ai.string(), ai.int8()), ArrowInvalid, "keys cannot be null"),
    ([[1]], ai.map_(ai.string(), ai.int8()), ArrowTypeError, "pairs"),
    ([5], ai.struct([("a", ai.int8())]), ArrowTypeError, "dict or tuple"),
    ([(1, 2)], ai.struct([("a", ai.int8())]), ArrowInvalid, "1 fields"),
    ([{"a": 300}], ai.struct([("a", ai.int8())]), ArrowInvalid, r"array\.a: value 300"),
    ([[1, 300]], ai.list_(ai.int8()), ArrowInvalid, r"array\.item: value 300 at index 1"),
    ([dt.date(2020, 1, 1)], ai.timestamp("s"), ArrowTypeError, "date"),
    ([2**31], ai.date32(), ArrowInvalid, "does not fit"),
    ([(1, 2**31, 0)], ai.month_day_nano_interval(), ArrowInvalid, "out of range"),
    ([list(range(200))], ai.dictionary(ai.int8(), ai.int64()), ArrowTypeError, "int"),
    ([str(i) for i in range(200)], ai.dictionary(ai.int8(), ai.string()), ArrowInvalid,
     "do not fit in index type int8"),
    ([1] * 40000, ai.run_end_encoded(ai.int16(), ai.int8()), ArrowInvalid, "run ends"),
])
def test_conversion_errors(values, t, error, match):
    with pytest.raises(error, match=match):
        array_data_from_python(values, t)


def test_pyarrow_raises_too_for_the_same_inputs():
    # A sample of the above, to keep the oracle honest (pyarrow's exception classes vary).
    for values, t in [([300], pa.int8()), ([1, True], pa.int8()), ([b"abc"], pa.binary(2)),
                      ([D("1.555")], pa.decimal128(5, 2)), ([1], pa.null()),
                      ([[(None, 2)]], pa.map_(pa.string(), pa.int8()))]:
        with pytest.raises((pa.ArrowInvalid, pa.ArrowTypeError, OverflowError)):
            pa.array(values, t)


def test_int_offsets_overflow_is_a_capacity_error(monkeypatch):
    import arrowipc.from_python as fp
    monkeypatch.setattr(fp, "_INT32_MAX", 20)
    with pytest.raises(ArrowCapacityError):
        fp._offsets_buffer([2**31], "i", ai.string(), "array", "large_string")
    data = array_data_from_python(["a" * 13, "b" * 13], ai.string_view())
    assert len(data.buffers) == 4         # each long value got its own data buffer
    ours = pyarrow_from_data(data)
    ours.validate(full=True)
    assert ours.to_pylist() == ["a" * 13, "b" * 13]


# -- numpy --------------------------------------------------------------------------------------

def address(buf):
    return buf.address


@pytest.mark.parametrize("dtype", ["int8", "uint16", "int32", "uint64", "float16", "float32",
                                   "float64"])
def test_numpy_numbers_are_zero_copy(dtype):
    arr = np.arange(10).astype(dtype)
    data = array_data_from_python(arr)
    assert data.type == ipc_type(pa.array(arr).type) and data.null_count == 0
    assert address(data.buffers[1]) == arr.ctypes.data
    assert data.buffers[0] is None
    assert pyarrow_from_data(data).equals(pa.array(arr))
    arr[0] = 7     # a view: later changes show through, as with pyarrow
    assert to_pylist(data)[0] == 7


@pytest.mark.parametrize("dtype", ["M8[s]", "M8[ms]", "M8[us]", "M8[ns]", "m8[s]", "m8[ms]",
                                   "m8[us]", "m8[ns]", "M8[D]"])
def test_numpy_datetimes(dtype):
    arr = np.array([0, 1_000_000_000, -5, np.iinfo(np.int64).min, 86400 * 1000], dtype="i8")
    arr = arr.view(dtype) if not dtype.endswith("[D]") else np.array(
        ["2020-01-01", "NaT", "1969-12-31"], dtype=dtype)
    data = array_data_from_python(arr)
    want = pa.array(arr)
    assert data.type == ipc_type(want.type)
    assert data.null_count == want.null_count == 1
    ours = pyarrow_from_data(data)
    ours.validate(full=True)
    assert ours.equals(want)
    if not dtype.endswith("[D]"):
        assert address(data.buffers[1]) == arr.ctypes.data


def test_numpy_unsupported_datetime_unit():
    with pytest.raises(ArrowNotImplementedError):
        array_data_from_python(np.array(["2020-01-01"], dtype="M8[m]"))


def test_numpy_bool_masked_strided_swapped():
    b = np.array([True, False, True] * 5)
    data = built_np(b)
    assert data.type == ai.bool_()
    masked = np.ma.masked_array([1, 2, 3], mask=[0, 1, 0])
    data = built_np(masked)
    assert data.null_count == 1 and to_pylist(data) == [1, None, 3]
    strided = np.arange(10)[::3]
    assert to_pylist(built_np(strided)) == [0, 3, 6, 9]
    swapped = np.arange(4, dtype=">i4")
    assert to_pylist(array_data_from_python(swapped)) == [0, 1, 2, 3]
    with pytest.raises(ArrowInvalid, match="1-dimensional"):
        array_data_from_python(np.zeros((2, 2)))


def built_np(arr):
    data = array_data_from_python(arr)
    ours = pyarrow_from_data(data)
    ours.validate(full=True)
    want = pa.array(arr)
    assert ours.type == want.type
    assert repr(ours.to_pylist()) == repr(want.to_pylist())
    return data


@pytest.mark.parametrize("arr", [np.array(["a", "bc"]), np.array([b"a", b"bc"]),
                                 np.array(["a", None], dtype=object), np.array([], dtype=object),
                                 np.array([None, None], dtype=object),
                                 np.array([1.0, None], dtype=object), np.array([1.0, np.nan])],
                         ids=repr)
def test_numpy_sequences(arr):
    built_np(arr)


def test_numpy_with_explicit_types():
    data = array_data_from_python(np.array([1, 2, 3]), ai.int8())
    assert to_pylist(data) == [1, 2, 3] and data.type == ai.int8()
    with pytest.raises(ArrowInvalid, match="300"):
        array_data_from_python(np.array([1, 300]), ai.int8())
    data = array_data_from_python(np.array([1, 2]), ai.timestamp("s"))
    assert pyarrow_from_data(data).equals(pa.array(np.array([1, 2]), pa.timestamp("s")))
    secs = np.array(["2020-01-01T00:00:01"], dtype="M8[s]")
    data = array_data_from_python(secs, ai.timestamp("ms"))
    assert pyarrow_from_data(data).equals(pa.array(secs, pa.timestamp("ms")))
    same = np.arange(3, dtype=np.int16)
    data = array_data_from_python(same, ai.int16())
    assert address(data.buffers[1]) == same.ctypes.data


def test_infer_type_is_public_and_matches_pyarrow():
    assert infer_type([1, None]) == ai.int64()
    assert infer_type([[{"a": 1.5}]]) == ipc_type(pa.array([[{"a": 1.5}]]).type)
    assert pa_type(infer_type([dt.datetime(2020, 1, 1, tzinfo=PARIS)])) == pa.timestamp(
        "us", "Europe/Paris")
