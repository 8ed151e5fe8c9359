"""to_pylist / to_numpy against pyarrow for every type, sliced and unsliced; malformed input."""
import datetime as dt
import struct
import subprocess
import sys
from decimal import Decimal as D

import pytest

pa = pytest.importorskip("pyarrow")
np = pytest.importorskip("numpy")

import arrowipc as ai
from arrowipc._core.arraydata import ArrayData
from arrowipc._core.buffer import py_buffer
from arrowipc.array import make_array
from arrowipc.errors import ArrowInvalid
from arrowipc.to_python import DayMilliseconds, MonthDayNano, to_numpy, to_pylist

from tests.model.helpers import data_from_pyarrow


def same(ours, theirs):
    """Equal values of equal Python types (repr is strict: types, tzinfo, Decimal exponent)."""
    return repr(ours) == repr(theirs)


def check(arr):
    """to_pylist of our view of `arr` equals pyarrow's, for the array and some slices of it."""
    n = len(arr)
    views = [arr, arr.slice(1), arr.slice(n // 2, n - n // 2 - 1), arr.slice(n, 0)]
    for view in views:
        got = to_pylist(data_from_pyarrow(view))
        want = view.to_pylist()
        assert same(got, want), f"{view.type} offset {view.offset}:\n{got}\n!=\n{want}"


def nine(*values):
    """Nine or more values with nulls at positions that straddle a bitmap byte boundary."""
    out = list(values)
    while len(out) < 9:
        out += values
    out[2] = None
    out[8] = None
    return out


# -- one case per type --------------------------------------------------------------------------

INT_CASES = [(t, lo, hi) for t, lo, hi in [
    (pa.int8(), -128, 127), (pa.int16(), -2**15, 2**15 - 1), (pa.int32(), -2**31, 2**31 - 1),
    (pa.int64(), -2**63, 2**63 - 1), (pa.uint8(), 0, 255), (pa.uint16(), 0, 2**16 - 1),
    (pa.uint32(), 0, 2**32 - 1), (pa.uint64(), 0, 2**64 - 1)]]


@pytest.mark.parametrize("t,lo,hi", INT_CASES, ids=[str(c[0]) for c in INT_CASES])
def test_integers(t, lo, hi):
    check(pa.array(nine(lo, hi, 0, 1, lo + 1, hi - 1), t))


@pytest.mark.parametrize("t", [pa.float16(), pa.float32(), pa.float64()], ids=str)
def test_floats(t):
    vals = nine(1.5, -0.0, float("inf"), float("-inf"), 65504.0, 1e-3, 2.0)
    if t == pa.float16():
        arr = pa.array(np.array([np.nan if v is None else v for v in vals], dtype=np.float16),
                       mask=np.array([v is None for v in vals]))
    else:
        arr = pa.array(vals, t)
    check(arr)
    nan = to_pylist(data_from_pyarrow(pa.array([float("nan")], t)))[0]
    assert nan != nan


def test_bool():
    check(pa.array(nine(True, False, True, True, False, False, True, False, True, True) * 3))


def test_null():
    check(pa.nulls(11))


def decimal_array(t, unscaled):
    """A pyarrow decimal array from unscaled ints (pa.array cannot take the extremes)."""
    width = t.bit_width // 8
    payload = b"".join((0 if v is None else v).to_bytes(width, "little", signed=True)
                       for v in unscaled)
    mask = pa.array([v is None for v in unscaled])
    validity = pa.compute.invert(mask).buffers()[1]
    return pa.Array.from_buffers(t, len(unscaled), [validity, pa.py_buffer(payload)])


@pytest.mark.parametrize("t", [pa.decimal32(9, 2), pa.decimal64(18, 4), pa.decimal128(38, 10),
                               pa.decimal256(76, 20), pa.decimal128(5, 0)], ids=str)
def test_decimals(t):
    big = 10 ** t.precision - 1
    arr = decimal_array(t, nine(0, 1, -1, big, -big, 15, -12325, 10 ** t.scale))
    arr.validate(full=True)
    check(arr)


def test_decimal_negative_scale():
    arr = pa.array([D("1.2E+3"), None, D("-5E+2")], pa.decimal128(5, -2))
    check(arr)
    assert to_pylist(data_from_pyarrow(arr)) == [D(1200), None, D(-500)]


def test_dates():
    days = nine(0, 1, -1, 18000, -719162, 2932896, 365)
    check(pa.array(days, pa.date32()))
    check(pa.array([None if d is None else d * 86_400_000 + 5 for d in days], pa.date64()))
    check(pa.array([-1, -86_400_001, None, 86_399_999], pa.date64()))


@pytest.mark.parametrize("t,scale", [(pa.time32("s"), 1), (pa.time32("ms"), 10**3),
                                     (pa.time64("us"), 10**6), (pa.time64("ns"), 10**9)], ids=str)
def test_times(t, scale):
    secs = nine(0, 1, 86399, 3723, 43200, 5, -1)
    vals = [None if s is None else s * scale for s in secs]
    if scale >= 1000:
        vals[1] += scale // 1000 * 7     # sub-second digits that survive conversion
    check(pa.array(vals, t))


@pytest.mark.parametrize("unit", ["s", "ms", "us", "ns"])
@pytest.mark.parametrize("tz", [None, "UTC", "Europe/Paris", "America/New_York", "+01:00",
                                "-05:30", "+00:00"])
def test_timestamps(unit, tz):
    per_sec = {"s": 1, "ms": 10**3, "us": 10**6, "ns": 10**9}[unit]
    secs = nine(0, 1, -1, 1_600_000_000, -2_000_000_000, 4_000_000_000, 1_000_000_007)
    vals = [None if s is None else s * per_sec for s in secs]
    if per_sec >= 1000:
        vals[1] += per_sec // 1000 * 3
    check(pa.array(vals, pa.timestamp(unit, tz)))


@pytest.mark.parametrize("unit", ["s", "ms", "us"])
def test_timestamps_at_the_ends_of_python_datetime(unit):
    per_sec = {"s": 1, "ms": 10**3, "us": 10**6}[unit]
    first, last = -62135596800 * per_sec, (253402300800 * per_sec) - 1
    check(pa.array([first, None, last], pa.timestamp(unit)))
    check(pa.array([first, None, last], pa.timestamp(unit, "UTC")))


@pytest.mark.parametrize("unit", ["s", "ms", "us", "ns"])
def test_durations(unit):
    per_sec = {"s": 1, "ms": 10**3, "us": 10**6, "ns": 10**9}[unit]
    vals = [None if s is None else s * per_sec for s in nine(0, 1, -1, 86400 * 365, -7, 3)]
    if per_sec >= 1000:
        vals[0] += per_sec // 1000 * 11
    check(pa.array(vals, pa.duration(unit)))


def test_month_day_nano_interval():
    arr = pa.array(nine((1, 2, 3), (-1, -2, -3), (2**31 - 1, -2**31, 2**63 - 1), (0, 0, 0)),
                   pa.month_day_nano_interval())
    check(arr)
    got = to_pylist(data_from_pyarrow(arr))
    assert got[0] == (1, 2, 3) and isinstance(got[0], MonthDayNano)
    assert got[0] == arr.to_pylist()[0] and got[0].nanoseconds == 3


def test_month_and_day_time_intervals():
    # pyarrow cannot make arrays of these types: build the buffers by hand.
    months = ArrayData(ai.month_interval(), 3, 1, -1,
                       [py_buffer(bytes([0b1011])), py_buffer(struct.pack("<4i", 9, 5, -7, 12))])
    assert to_pylist(months) == [5, None, 12]
    day_ms = ArrayData(ai.day_time_interval(), 2, 0, 0,
                       [None, py_buffer(struct.pack("<4i", 3, 1500, -1, -20))])
    got = to_pylist(day_ms)
    assert got == [(3, 1500), (-1, -20)] and isinstance(got[0], DayMilliseconds)
    assert got[1].milliseconds == -20


@pytest.mark.parametrize("t", [pa.string(), pa.large_string(), pa.string_view()], ids=str)
def test_strings(t):
    check(pa.array(nine("", "a", "héllo wörld ✓", "x" * 12, "y" * 13, "z" * 100, "日本語"),
                   t))
    check(pa.array(nine("ascii", "only", "", "abcdefghijklmnop"), t))


@pytest.mark.parametrize("t", [pa.binary(), pa.large_binary(), pa.binary_view()], ids=str)
def test_binaries(t):
    check(pa.array(nine(b"", b"\x00\xff", b"a" * 12, b"b" * 13, bytes(range(256))), t))


def test_fixed_size_binary():
    check(pa.array(nine(b"abc", b"\x00\x01\x02", b"xyz"), pa.binary(3)))
    check(pa.array([b"", None, b""], pa.binary(0)))


LIST_TYPES = [pa.list_(pa.int16()), pa.large_list(pa.int16()), pa.list_view(pa.int16()),
              pa.large_list_view(pa.int16()), pa.list_(pa.int16(), 2)]


@pytest.mark.parametrize("t", LIST_TYPES, ids=str)
def test_lists(t):
    if pa.types.is_fixed_size_list(t):
        vals = nine([1, 2], [None, 4], [5, 6], [-7, 8])
    else:
        vals = nine([1, 2], [], [None], [3, 4, 5], [6])
    check(pa.array(vals, t))


def test_list_with_sliced_child_and_nested_lists():
    values = pa.array([100, 101, 1, 2, None, 3, 4, 5, 6, 7]).slice(2)
    arr = pa.ListArray.from_arrays(pa.array([0, 2, 2, 5, 8], pa.int32()), values)
    check(arr)
    check(pa.array([[[1], None], None, [[2, 3], []], [[None]]] * 3))
    check(pa.array([["a", None], ["bc"], None, []] * 3, pa.large_list(pa.string_view())))


def test_list_view_out_of_order_and_shared_ranges():
    values = pa.array([0, 1, 2, 3, 4, 5, 6])
    arr = pa.ListViewArray.from_arrays(pa.array([4, 0, 2, 0, 6], pa.int32()),
                                       pa.array([3, 2, 0, 7, 1], pa.int32()), values,
                                       mask=pa.array([False, False, True, False, False]))
    check(arr)


def test_struct():
    t = pa.struct([("a", pa.int32()), ("b", pa.string()), ("c", pa.struct([("d", pa.bool_())]))])
    check(pa.array(nine({"a": 1, "b": "x", "c": {"d": True}}, {"a": None, "b": None, "c": None},
                        {"a": 3, "b": "zz", "c": {"d": None}}), t))
    check(pa.array([{}, None, {}] * 3, pa.struct([])))


def test_struct_with_sliced_children():
    a = pa.array([9, 9, 1, 2, 3, 4, 5, 6]).slice(2)
    b = pa.array(["q", "x", None, "z", "w", "v", "u"]).slice(1)
    arr = pa.StructArray.from_arrays([a, b], names=["a", "b"],
                                     mask=pa.array([False, True, False, False, False, False]))
    check(arr)


def test_struct_duplicate_names_raise_like_pyarrow():
    arr = pa.StructArray.from_arrays([pa.array([1]), pa.array([2])], names=["a", "a"])
    with pytest.raises(ValueError):
        arr.to_pylist()
    with pytest.raises(ArrowInvalid, match="duplicate field names"):
        to_pylist(data_from_pyarrow(arr))


def test_map():
    t = pa.map_(pa.string(), pa.int64())
    check(pa.array(nine([("a", 1), ("b", None)], [], [("c", 3)], [("d", 4), ("e", 5), ("f", 6)]),
                   t))
    got = to_pylist(data_from_pyarrow(pa.array([[("k", 1)]], t)))
    assert got == [[("k", 1)]] and isinstance(got[0][0], tuple)


def test_sparse_union():
    types = pa.array([0, 1, 0, 5, 1, 5, 0, 0, 1], pa.int8())
    children = [pa.array(list(range(9))), pa.array([str(i) for i in range(9)]),
                pa.array([None, 1.5] * 4 + [None])]
    arr = pa.UnionArray.from_sparse(types, children, ["i", "s", "f"], [0, 1, 5])
    check(arr)


def test_dense_union():
    types = pa.array([0, 1, 1, 0, 0, 1, 0, 1, 0], pa.int8())
    offsets = pa.array([0, 0, 1, 1, 2, 2, 3, 3, 1], pa.int32())
    arr = pa.UnionArray.from_dense(types, offsets, [pa.array([1, None, 3, 4]),
                                                    pa.array(["a", "b", None, "d"])])
    check(arr)


def test_dictionary():
    check(pa.array(nine("a", "b", "a", "c", "b"), pa.dictionary(pa.int8(), pa.string())))
    check(pa.array(nine(10, 20, 10), pa.dictionary(pa.uint32(), pa.int64())))
    lists = pa.DictionaryArray.from_arrays(pa.array([0, 1, 0, None, 1], pa.int16()),
                                           pa.array([[1, 2], [3]]))
    check(lists)
    got = to_pylist(data_from_pyarrow(lists))
    assert got[0] == got[2] and got[0] is not got[2]   # repeated nested values are not shared


def test_run_end_encoded():
    t = pa.run_end_encoded(pa.int32(), pa.string())
    check(pa.array(["a", "a", "a", None, None, "b", "c", "c", "c", "c"], t))
    check(pa.array([1, 1, 2, 2, 2, 3], pa.run_end_encoded(pa.int16(), pa.int64())))
    check(pa.array([[1], [1], [2]], pa.run_end_encoded(pa.int64(), pa.list_(pa.int8()))))


def test_extension_types_give_storage_values():
    # canonical arrow.uuid converts like pyarrow (uuid.UUID); other extensions give storage values
    uuids = pa.array([b"0123456789abcdef", None, b"fedcba9876543210"], pa.binary(16))
    arr = pa.ExtensionArray.from_storage(pa.uuid(), uuids)
    data = data_from_pyarrow(arr)
    assert isinstance(data.type, ai.ExtensionType)
    assert to_pylist(data) == arr.to_pylist()
    assert to_pylist(data_from_pyarrow(arr.storage.slice(1))) == uuids.slice(1).to_pylist()
    nested = ArrayData(ai.list_(data.type), 1, 0, 0,
                       [None, py_buffer(struct.pack("<2i", 0, 3))], [data])
    assert to_pylist(nested) == [arr.to_pylist()]
    other = ArrayData(ai.ExtensionType("my.ext", ai.binary(16)), data.length, data.offset,
                      data.null_count, data.buffers)
    assert to_pylist(other) == uuids.to_pylist()


def test_array_methods_use_the_converters():
    arr = make_array(data_from_pyarrow(pa.array([1, None, 3, 4]).slice(1)))
    assert arr.to_pylist() == [None, 3, 4]
    assert arr[1].as_py() == 3 and [v.as_py() for v in arr] == [None, 3, 4]   # Scalars, as pyarrow


def test_large_array_is_fast_enough_and_right():
    n = 200_000
    arr = pa.array(np.arange(n, dtype=np.int64), mask=np.arange(n) % 7 == 0)
    got = to_pylist(data_from_pyarrow(arr))
    assert got == arr.to_pylist()
    strings = pa.array([str(i) for i in range(n)])
    assert to_pylist(data_from_pyarrow(strings)) == strings.to_pylist()


# -- nanoseconds: pyarrow's behaviour with pandas installed and without ---------------------------

NS_TYPES = [pa.timestamp("ns"), pa.timestamp("ns", "UTC"), pa.timestamp("ns", "+05:30"),
            pa.time64("ns"), pa.duration("ns")]


@pytest.mark.parametrize("t", NS_TYPES, ids=str)
def test_nanoseconds_with_pandas_installed_are_pyarrows(t):
    pytest.importorskip("pandas")
    arr = pa.array([1000, 1001, None, 1_600_000_000_123_456_789], t)
    got, expected = to_pylist(data_from_pyarrow(arr)), arr.to_pylist()
    assert got == expected                      # pandas Timestamps/Timedeltas, times cut to us
    assert [type(v) for v in got] == [type(v) for v in expected]


NO_PANDAS_SCRIPT = """
import pyarrow as pa
from arrowipc.errors import ArrowInvalid
import arrowipc
arr = pa.array([1000, 1001], pa.{ctor})
try:
    arr.to_pylist()
except ValueError:
    pass
else:
    raise SystemExit("pyarrow converted without pandas")
try:
    arrowipc.array(arr).to_pylist()
except ArrowInvalid as e:
    assert "index 1" in str(e), e
else:
    raise SystemExit("arrowipc converted without pandas")
assert arrowipc.array(arr.slice(0, 1)).to_pylist() == arr.slice(0, 1).to_pylist()
print("ok")
"""


@pytest.mark.parametrize("ctor", ['timestamp("ns")', 'timestamp("ns", "UTC")', 'time64("ns")',
                                  'duration("ns")'])
def test_nanoseconds_without_pandas_raise_as_pyarrow(tmp_path, ctor):
    import os
    import subprocess
    import sys
    (tmp_path / "pandas").mkdir()
    (tmp_path / "pandas" / "__init__.py").write_text("raise ModuleNotFoundError('no pandas')\n")
    repo = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(tmp_path), repo]))
    p = subprocess.run([sys.executable, "-c", NO_PANDAS_SCRIPT.format(ctor=ctor)],
                       capture_output=True, text=True, env=env)
    assert p.stdout == "ok\n", p.stderr


def test_garbage_under_nulls_is_ignored():
    # Values in null slots are undefined: they must not be converted (or fail conversion).
    bad = struct.pack("<3i", 2**31 - 1, 5, -2**31)
    data = ArrayData(ai.date32(), 3, 0, 2, [py_buffer(bytes([0b010])), py_buffer(bad)])
    assert to_pylist(data) == [None, dt.date(1970, 1, 6), None]
    ts = ArrayData(ai.timestamp("ns"), 2, 0, 1, [py_buffer(b"\x02"), py_buffer(
        struct.pack("<2q", 7, 5000))])
    assert to_pylist(ts) == [None, dt.datetime(1970, 1, 1, 0, 0, 0, 5)]
    s = ArrayData(ai.string(), 2, 0, 1, [py_buffer(b"\x02"), py_buffer(
        struct.pack("<3i", 0, 2, 3)), py_buffer(b"\xff\xfea")])
    assert to_pylist(s) == [None, "a"]


def test_out_of_range_values_raise_arrow_invalid():
    data = ArrayData(ai.date32(), 1, 0, 0, [None, py_buffer(struct.pack("<i", 2**31 - 1))])
    with pytest.raises(ArrowInvalid, match="index 0"):
        to_pylist(data)
    data = ArrayData(ai.timestamp("s"), 1, 0, 0, [None, py_buffer(struct.pack("<q", 2**62))])
    with pytest.raises(ArrowInvalid):
        to_pylist(data)


# -- malformed input ----------------------------------------------------------------------------

def fixed(t, length, payload, offset=0, validity=None, null_count=-1):
    return ArrayData(t, length, offset, null_count, [validity, py_buffer(payload)])


@pytest.mark.parametrize("t,width", [(ai.int64(), 8), (ai.float16(), 2), (ai.decimal128(5, 1), 16),
                                     (ai.timestamp("us"), 8), (ai.month_day_nano_interval(), 16),
                                     (ai.fixed_size_binary(3), 3), (ai.date32(), 4)], ids=str)
def test_too_small_values_buffer(t, width):
    with pytest.raises(ArrowInvalid, match=r"buffer 1 \(values\) has"):
        to_pylist(fixed(t, 4, bytes(width * 4 - 1)))
    with pytest.raises(ArrowInvalid, match="buffer 1"):
        to_pylist(fixed(t, 2, bytes(width * 3), offset=2))


def test_missing_buffers_and_bad_shape():
    with pytest.raises(ArrowInvalid, match="missing"):
        to_pylist(ArrayData(ai.int32(), 2, 0, 0, [None]))
    with pytest.raises(ArrowInvalid, match="missing"):
        to_pylist(ArrayData(ai.string(), 2, 0, 0, [None, None, None]))
    with pytest.raises(ArrowInvalid, match="negative"):
        to_pylist(ArrayData(ai.int32(), -1, 0, 0, [None, py_buffer(bytes(8))]))
    with pytest.raises(ArrowInvalid, match="child 0"):
        to_pylist(ArrayData(ai.list_(ai.int8()), 1, 0, 0, [None, py_buffer(bytes(8))], []))


def test_too_small_validity_bitmap():
    with pytest.raises(ArrowInvalid, match="validity bitmap"):
        to_pylist(fixed(ai.int8(), 9, bytes(9), validity=py_buffer(b"\xff")))
    with pytest.raises(ArrowInvalid, match="buffer 1"):
        to_pylist(ArrayData(ai.bool_(), 9, 0, 0, [None, py_buffer(b"\xff")]))


def test_bad_offsets():
    data = py_buffer(b"abcdef")
    decreasing = ArrayData(ai.string(), 2, 0, 0, [None, py_buffer(struct.pack("<3i", 0, 4, 2)),
                                                 data])
    with pytest.raises(ArrowInvalid, match="must not decrease"):
        to_pylist(decreasing)
    beyond = ArrayData(ai.large_binary(), 1, 0, 0, [None, py_buffer(struct.pack("<2q", 0, 7)),
                                                   data])
    with pytest.raises(ArrowInvalid, match="beyond the end"):
        to_pylist(beyond)
    short = ArrayData(ai.string(), 3, 0, 0, [None, py_buffer(struct.pack("<3i", 0, 1, 2)), data])
    with pytest.raises(ArrowInvalid, match="offsets"):
        to_pylist(short)
    child = ArrayData(ai.int8(), 2, 0, 0, [None, py_buffer(b"\x01\x02")])
    lst = ArrayData(ai.list_(ai.int8()), 1, 0, 0, [None, py_buffer(struct.pack("<2i", 0, 3))],
                    [child])
    with pytest.raises(ArrowInvalid, match="beyond the end"):
        to_pylist(lst)


def test_invalid_utf8():
    s = ArrayData(ai.string(), 2, 0, 0, [None, py_buffer(struct.pack("<3i", 0, 1, 3)),
                                         py_buffer(b"a\xff\xfe")])
    with pytest.raises(ArrowInvalid, match="index 1 is not valid UTF-8"):
        to_pylist(s)


def test_bad_views():
    view = struct.pack("<i4sii", 20, b"abcd", 1, 0)
    data = ArrayData(ai.binary_view(), 1, 0, 0, [None, py_buffer(view), py_buffer(bytes(30))])
    with pytest.raises(ArrowInvalid, match="data buffer index 1"):
        to_pylist(data)
    view = struct.pack("<i4sii", 20, b"abcd", 0, 15)
    data = ArrayData(ai.binary_view(), 1, 0, 0, [None, py_buffer(view), py_buffer(bytes(30))])
    with pytest.raises(ArrowInvalid, match=r"bytes \[15, 35\)"):
        to_pylist(data)
    data = ArrayData(ai.string_view(), 2, 0, 0, [None, py_buffer(view)])
    with pytest.raises(ArrowInvalid, match="views"):
        to_pylist(data)


def test_bad_nested_children():
    short_child = ArrayData(ai.int8(), 2, 0, 0, [None, py_buffer(b"\x01\x02")])
    st = ArrayData(ai.struct([("a", ai.int8())]), 2, 1, 0, [None], [short_child])
    with pytest.raises(ArrowInvalid, match=r"\[1, 3\)"):
        to_pylist(st)
    fsl = ArrayData(ai.fixed_size_list(ai.int8(), 2), 2, 0, 0, [None], [short_child])
    with pytest.raises(ArrowInvalid, match="outside the child"):
        to_pylist(fsl)
    lv = ArrayData(ai.list_view(ai.int8()), 1, 0, 0,
                   [None, py_buffer(struct.pack("<i", 1)), py_buffer(struct.pack("<i", 2))],
                   [short_child])
    with pytest.raises(ArrowInvalid, match="list view 0"):
        to_pylist(lv)


def test_bad_unions_dictionaries_and_runs():
    child = ArrayData(ai.int8(), 2, 0, 0, [None, py_buffer(b"\x01\x02")])
    sparse = ArrayData(ai.sparse_union([ai.field("a", ai.int8())], [3]), 2, 0, 0,
                       [py_buffer(b"\x03\x04")], [child])
    with pytest.raises(ArrowInvalid, match="type id 4"):
        to_pylist(sparse)
    dense = ArrayData(ai.dense_union([ai.field("a", ai.int8())]), 1, 0, 0,
                      [py_buffer(b"\x00"), py_buffer(struct.pack("<i", 2))], [child])
    with pytest.raises(ArrowInvalid, match="dense union offsets"):
        to_pylist(dense)
    d = ArrayData(ai.dictionary(ai.int8(), ai.int8()), 2, 0, 0, [None, py_buffer(b"\x01\x02")],
                  [], child)
    with pytest.raises(ArrowInvalid, match="dictionary index 2 at index 1"):
        to_pylist(d)
    with pytest.raises(ArrowInvalid, match="no dictionary"):
        to_pylist(d.copy_with(dictionary=None))
    ends = ArrayData(ai.int32(), 2, 0, 0, [None, py_buffer(struct.pack("<2i", 1, 2))])
    ree = ArrayData(ai.run_end_encoded(ai.int32(), ai.int8()), 3, 0, 0, [], [ends, child])
    with pytest.raises(ArrowInvalid, match="do not cover"):
        to_pylist(ree)
    unsorted = ArrayData(ai.int32(), 2, 0, 0, [None, py_buffer(struct.pack("<2i", 2, 1))])
    with pytest.raises(ArrowInvalid):
        to_pylist(ree.copy_with(length=1, children=[unsorted, child]))


def test_errors_name_the_nested_field():
    short_child = ArrayData(ai.int64(), 1, 0, 0, [None, py_buffer(bytes(4))])
    st = ArrayData(ai.struct([("inner", ai.int64())]), 1, 0, 0, [None], [short_child])
    with pytest.raises(ArrowInvalid, match=r"array\.inner: buffer 1"):
        to_pylist(st)


# -- to_numpy -----------------------------------------------------------------------------------

NUMPY_ZERO_COPY = [pa.int8(), pa.uint16(), pa.int32(), pa.uint64(), pa.float16(), pa.float32(),
                   pa.float64(), pa.timestamp("ms"), pa.timestamp("ns", "UTC"), pa.duration("s"),
                   pa.duration("us")]


@pytest.mark.parametrize("t", NUMPY_ZERO_COPY, ids=str)
def test_to_numpy_zero_copy(t):
    arr = pa.array(np.arange(10).astype(np.int8 if t == pa.int8() else np.int64)).cast(t)
    sliced = arr.slice(3, 5)
    got = to_numpy(data_from_pyarrow(sliced))
    want = sliced.to_numpy()
    assert got.dtype == want.dtype and np.array_equal(got, want)
    assert not got.flags.writeable
    start = arr.buffers()[1].address + 3 * t.byte_width
    assert got.__array_interface__["data"][0] == start     # a view, not a copy
    writable = to_numpy(data_from_pyarrow(sliced), zero_copy_only=False, writable=True)
    assert writable.flags.writeable and np.array_equal(writable, want)
    assert writable.__array_interface__["data"][0] != start


def test_to_numpy_date64_is_a_view_date32_a_copy():
    d64 = pa.array([0, 86_400_000, None], pa.date64()).slice(0, 2)
    got = to_numpy(data_from_pyarrow(d64))     # pyarrow insists on a copy here; we can view
    assert got.dtype == np.dtype("M8[ms]") and np.array_equal(got, d64.to_numpy(False))
    d32 = pa.array([0, 1, None, 20000], pa.date32())
    with pytest.raises(ArrowInvalid):
        to_numpy(data_from_pyarrow(d32))
    got = to_numpy(data_from_pyarrow(d32), zero_copy_only=False)
    want = d32.to_numpy(zero_copy_only=False)
    assert got.dtype == want.dtype == np.dtype("M8[D]")
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("t", [pa.int16(), pa.uint64(), pa.float32(), pa.float16(),
                               pa.timestamp("us"), pa.duration("ns"), pa.bool_()], ids=str)
def test_to_numpy_with_nulls(t):
    vals = [1, None, 0, 1, None, 1] if t != pa.bool_() else [True, None, False, True, None, True]
    arr = pa.array(vals, t).slice(1)
    with pytest.raises(ArrowInvalid):
        to_numpy(data_from_pyarrow(arr))
    got = to_numpy(data_from_pyarrow(arr), zero_copy_only=False)
    want = arr.to_numpy(zero_copy_only=False)
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)


def test_to_numpy_bool_needs_a_copy():
    arr = pa.array([True, False, True, True, False, False, True, False, True]).slice(1)
    with pytest.raises(ArrowInvalid, match="boolean"):
        to_numpy(data_from_pyarrow(arr))
    got = to_numpy(data_from_pyarrow(arr), zero_copy_only=False)
    assert got.dtype == np.bool_ and got.tolist() == arr.to_pylist()


def test_to_numpy_writable_with_zero_copy_only_is_refused():
    with pytest.raises(ValueError):
        pa.array([1]).to_numpy(writable=True)
    with pytest.raises(ArrowInvalid, match="writable"):
        to_numpy(data_from_pyarrow(pa.array([1])), writable=True)


@pytest.mark.parametrize("arr", [
    pa.array(["a", None, "ccc"]), pa.array([b"x", None], pa.binary(1)), pa.nulls(3),
    pa.array([D("1.5"), None], pa.decimal128(5, 2)), pa.array([1, None], pa.time32("s")),
    pa.array([{"a": 1}, None]), pa.array(["x", "y", "x"]).dictionary_encode(),
    pa.array([1, 2, None, 2]).dictionary_encode(),
    pa.array([1, 1, 2], pa.run_end_encoded(pa.int32(), pa.int64())),
    pa.array([[1, 2], None, [3]]), pa.array([[1.5, None], [2.0, 3.0]], pa.list_(pa.float64(), 2)),
], ids=lambda a: str(a.type))
def test_to_numpy_copies_like_pyarrow(arr):
    with pytest.raises(ArrowInvalid):
        to_numpy(data_from_pyarrow(arr))
    got = to_numpy(data_from_pyarrow(arr), zero_copy_only=False)
    want = arr.to_numpy(zero_copy_only=False)
    assert got.dtype == want.dtype and len(got) == len(want)
    for g, w in zip(got, want):
        if isinstance(w, np.ndarray):
            assert g.dtype == w.dtype
            np.testing.assert_array_equal(g, w)
        elif isinstance(w, float) and w != w:
            assert g != g
        else:
            assert g == w


def test_to_numpy_through_array():
    arr = make_array(data_from_pyarrow(pa.array([1.5, 2.5])))
    assert arr.to_numpy().tolist() == [1.5, 2.5]


def test_import_does_not_load_numpy():
    code = ("import sys, arrowipc; a = arrowipc.array([1, None]); a.to_pylist(); "
            "assert 'numpy' not in sys.modules, 'numpy was imported'")
    subprocess.run([sys.executable, "-c", code], check=True)


# -- corrupted buffers: ArrowInvalid or a value, never another exception ------------------------

FUZZ_ARRAYS = [
    pa.array([1, None, 3, 4], pa.int32()), pa.array([True, None, False]),
    pa.array(["a", None, "bcd", "é" * 3]), pa.array([b"x" * 20, None, b"y"], pa.binary_view()),
    pa.array(["q" * 15, "r"], pa.string_view()), pa.array([[1, 2], None, [3]]),
    pa.array([[1], [2, 3]], pa.large_list_view(pa.int8())),
    pa.array([{"a": 1, "b": "x"}, None]), pa.array([[("k", 1)], []], pa.map_(pa.string(), pa.int8())),
    pa.array([D("1.5"), None], pa.decimal128(5, 2)), pa.array([1, None], pa.timestamp("ns", "UTC")),
    pa.array([1, 2], pa.date32()), pa.array([5, None], pa.time32("s")),
    pa.array([(1, 2, 3)], pa.month_day_nano_interval()),
    pa.array(["a", "b", "a"]).dictionary_encode(),
    pa.array([1, 1, 2], pa.run_end_encoded(pa.int16(), pa.int64())),
    pa.UnionArray.from_dense(pa.array([0, 1], pa.int8()), pa.array([0, 0], pa.int32()),
                             [pa.array([1]), pa.array(["a"])]),
    pa.UnionArray.from_sparse(pa.array([0, 1], pa.int8()), [pa.array([1, 2]), pa.array(["a", "b"])]),
    pa.array([[1, 2], [3, 4]], pa.list_(pa.int8(), 2)),
]


def nodes(data):
    yield data
    for c in data.children:
        yield from nodes(c)
    if data.dictionary is not None:
        yield from nodes(data.dictionary)


def test_corrupted_buffers_raise_arrow_invalid_only():
    import random
    rng = random.Random(1234)
    outcomes = {"ok": 0, "invalid": 0}
    for _ in range(600):
        arr = rng.choice(FUZZ_ARRAYS)
        data = data_from_pyarrow(arr)
        node = rng.choice([n for n in nodes(data) if any(b is not None for b in n.buffers)])
        i = rng.choice([i for i, b in enumerate(node.buffers) if b is not None])
        raw = bytearray(memoryview(node.buffers[i]))
        if rng.random() < 0.5 and raw:
            raw = raw[:rng.randrange(len(raw))]                   # truncate
        else:
            for _ in range(rng.randint(1, 4)):                    # scribble
                if raw:
                    raw[rng.randrange(len(raw))] = rng.randrange(256)
        node.buffers[i] = py_buffer(bytes(raw))
        try:
            to_pylist(data)
            outcomes["ok"] += 1
        except ArrowInvalid:
            outcomes["invalid"] += 1
    assert outcomes["invalid"] > 100 and outcomes["ok"] > 50, outcomes


def test_column_less_batch_claiming_more_rows_than_memory_refuses_at_once():
    """A batch without columns may claim any length; to_pylist would build that many empty dicts.
    Beyond what physical memory can hold it raises instead of growing until the OS kills us."""
    from arrowipc.errors import ArrowCapacityError
    batch = ai.RecordBatch(ai.schema([]), [], 1 << 40)
    with pytest.raises(ArrowCapacityError, match=f"record batch: {1 << 40} rows do not fit in "
                                                 f"memory as Python dicts"):
        batch.to_pylist()
    assert ai.RecordBatch(ai.schema([]), [], 3).to_pylist() == [{}, {}, {}]
