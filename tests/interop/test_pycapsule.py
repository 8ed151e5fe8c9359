"""The Arrow PyCapsule / C data interface, both directions, with pyarrow as the oracle.

Every type of arrowipc.types goes pyarrow -> arrowipc -> pyarrow and must come back equal, valid
(`validate(full=True)`), with the very same buffer addresses (zero-copy both ways), alive after the
pyarrow original is gone, and with every exported C struct released once the consumers are gone.
"""
import ctypes
import datetime
import decimal
import gc
import uuid

import numpy as np
import pyarrow as pa
import pytest

import arrowipc
from arrowipc import interop
from arrowipc.data import cschema as _cschema
from arrowipc._core import cdata
from arrowipc._core.arraydata import ArrayData
from arrowipc.array import make_array
from arrowipc.errors import ArrowInvalid, ArrowTypeError

N = 40
ZERO_ADDRESS = arrowipc.allocate_buffer(0).address   # what a NULL foreign pointer becomes


# -- a registered extension type ------------------------------------------------------------------

class PointType(pa.ExtensionType):
    def __init__(self):
        super().__init__(pa.struct([("x", pa.float64()), ("y", pa.float64())]),
                         "arrowipc.test.point")

    def __arrow_ext_serialize__(self):
        return b"crs=wgs84"

    @classmethod
    def __arrow_ext_deserialize__(cls, storage_type, serialized):
        assert serialized == b"crs=wgs84"
        return cls()


try:
    pa.register_extension_type(PointType())
except pa.ArrowKeyError:
    pass  # already registered by an earlier import of this module


# -- pyarrow arrays of every type -----------------------------------------------------------------

def _ints(n=N):
    return [None if i % 7 == 3 else i for i in range(n)]


def _micros(n=N):
    # nanosecond values that convert to Python datetimes without loss
    return [None if v is None else v * 1000 for v in _ints(n)]


def _mask(n=N):
    return np.array([i % 7 == 3 for i in range(n)])


def _strings(n=N):
    return [None if i % 6 == 1 else ("é" * (i % 5) + f"s{i}" * (i % 4)) for i in range(n)]


def _long_strings(n=N):
    # Mixes inline (<= 12 bytes) and out-of-line view entries.
    return [None if i % 6 == 1 else (f"v{i}" if i % 3 else f"out-of-line string number {i:04d}")
            for i in range(n)]


def _list_view():
    values = pa.array([None if i % 9 == 4 else i for i in range(30)], pa.int32())
    offsets = pa.array([(7 * i) % 25 for i in range(N)], pa.int32())
    sizes = pa.array([i % 5 for i in range(N)], pa.int32())
    mask = pa.array([i % 8 == 5 for i in range(N)])
    return pa.ListViewArray.from_arrays(offsets, sizes, values, mask=mask)


def _large_list_view():
    values = pa.array([f"x{i}" for i in range(30)])
    offsets = pa.array([(11 * i) % 26 for i in range(N)], pa.int64())
    sizes = pa.array([i % 4 for i in range(N)], pa.int64())
    return pa.LargeListViewArray.from_arrays(offsets, sizes, values)


def _sparse_union():
    types = pa.array([3 if i % 3 else 9 for i in range(N)], pa.int8())
    return pa.UnionArray.from_sparse(
        types, [pa.array(_ints(), pa.int32()), pa.array(_strings())], ["i", "s"], [3, 9])


def _dense_union():
    types = pa.array([5 if i % 3 else 2 for i in range(N)], pa.int8())
    counters = {5: 0, 2: 0}
    offsets = []
    for t in types.to_pylist():
        offsets.append(counters[t])
        counters[t] += 1
    return pa.UnionArray.from_dense(
        types, pa.array(offsets, pa.int32()),
        [pa.array(_ints(counters[5]), pa.float64()), pa.array(_strings(counters[2]))],
        ["f", "s"], [5, 2])


def _ree(run_end_type, values):
    run_ends = pa.array(np.cumsum([1 + i % 3 for i in range(len(values))]), run_end_type)
    return pa.RunEndEncodedArray.from_arrays(run_ends, values)


def _map():
    rows = [None if i % 5 == 2 else [(f"k{j}", None if j == 1 else i * j) for j in range(i % 4)]
            for i in range(N)]
    return pa.array(rows, pa.map_(pa.string(), pa.int32(), keys_sorted=True))


def _struct():
    rows = [None if i % 6 == 4 else {"a": None if i % 5 == 0 else i, "b": f"b{i}",
                                     "c": [i, None] if i % 2 else None} for i in range(N)]
    return pa.array(rows, pa.struct([("a", pa.int16()), pa.field("b", pa.string(), nullable=False),
                                     ("c", pa.list_(pa.int64()))]))


def _nested():
    # list<struct<l: list<string>, d: dictionary<int16, string>, m: map<int8, bool>>>
    inner = pa.StructArray.from_arrays(
        [pa.array([[f"x{i}", None][: i % 3] if i % 4 else None for i in range(60)],
                  pa.list_(pa.string())),
         pa.DictionaryArray.from_arrays(pa.array([None if i % 5 == 0 else i % 3 for i in range(60)],
                                                 pa.int16()), pa.array(["p", "q", "r"])),
         pa.array([[(i % 100, i % 2 == 0)] if i % 3 else [] for i in range(60)],
                  pa.map_(pa.int8(), pa.bool_()))],
        names=["l", "d", "m"])
    offsets = pa.array([0, 2, 2, 5] + [5 + i for i in range(1, N - 3)], pa.int32())
    return pa.ListArray.from_arrays(offsets, inner.slice(3, offsets[-1].as_py()),
                                    mask=pa.array([i % 9 == 8 for i in range(N)]))


def _point():
    storage = pa.array([None if i % 4 == 1 else {"x": i * 0.5, "y": -i * 1.0} for i in range(N)],
                       PointType().storage_type)
    return pa.ExtensionArray.from_storage(PointType(), storage)


def _uuid():
    storage = pa.array([None if i % 5 == 0 else uuid.UUID(int=i * 7919).bytes for i in range(N)],
                       pa.binary(16))
    return pa.ExtensionArray.from_storage(pa.uuid(), storage)


def _string_view_multi():
    # Several variadic data buffers.
    parts = [pa.array(_long_strings(N // 2), pa.string_view()),
             pa.array([s and s.upper() * 2 for s in _long_strings(N // 2)], pa.string_view())]
    return pa.concat_arrays(parts)


DEC = decimal.Decimal

CASES = {
    "null": lambda: pa.nulls(N),
    "bool": lambda: pa.array([None if i % 5 == 0 else i % 3 == 0 for i in range(N)]),
    "int8": lambda: pa.array(_ints(), pa.int8()),
    "int16": lambda: pa.array(_ints(), pa.int16()),
    "int32": lambda: pa.array(_ints(), pa.int32()),
    "int64": lambda: pa.array(_ints(), pa.int64()),
    "uint8": lambda: pa.array(_ints(), pa.uint8()),
    "uint16": lambda: pa.array(_ints(), pa.uint16()),
    "uint32": lambda: pa.array(_ints(), pa.uint32()),
    "uint64": lambda: pa.array(_ints(), pa.uint64()),
    "float16": lambda: pa.array(np.arange(N, dtype=np.float16) / 4, mask=_mask()),
    "float32": lambda: pa.array(np.arange(N, dtype=np.float32) / 3, mask=_mask()),
    "float64": lambda: pa.array(np.arange(N, dtype=np.float64) / 3, mask=_mask()),
    "decimal32": lambda: pa.array([None if i % 4 == 0 else DEC(i) / 100 for i in range(N)],
                                  pa.decimal32(7, 2)),
    "decimal64": lambda: pa.array([None if i % 4 == 0 else DEC(i * 10**9) / 1000 for i in range(N)],
                                  pa.decimal64(16, 3)),
    "decimal128": lambda: pa.array([None if i % 4 == 0 else DEC(-i * 10**20) / 10**4
                                    for i in range(N)], pa.decimal128(30, 4)),
    "decimal256": lambda: pa.array([None if i % 4 == 0 else DEC(i * 10**45) / 10**5
                                    for i in range(N)], pa.decimal256(60, 5)),
    "date32": lambda: pa.array([None if i % 7 == 3 else datetime.date(2020, 1, 1)
                                + datetime.timedelta(days=i * 37) for i in range(N)]),
    "date64": lambda: pa.array([None if i % 7 == 3 else i * 86_400_000 for i in range(N)],
                               pa.date64()),
    "time32[s]": lambda: pa.array(_ints(), pa.time32("s")),
    "time32[ms]": lambda: pa.array(_ints(), pa.time32("ms")),
    "time64[us]": lambda: pa.array(_ints(), pa.time64("us")),
    "time64[ns]": lambda: pa.array(_micros(), pa.time64("ns")),
    "timestamp[s]": lambda: pa.array(_ints(), pa.timestamp("s")),
    "timestamp[ms, tz]": lambda: pa.array(_ints(), pa.timestamp("ms", tz="Europe/Paris")),
    "timestamp[us, UTC]": lambda: pa.array(_ints(), pa.timestamp("us", tz="UTC")),
    "timestamp[ns, offset]": lambda: pa.array(_micros(), pa.timestamp("ns", tz="+05:30")),
    "duration[s]": lambda: pa.array(_ints(), pa.duration("s")),
    "duration[ms]": lambda: pa.array(_ints(), pa.duration("ms")),
    "duration[us]": lambda: pa.array(_ints(), pa.duration("us")),
    "duration[ns]": lambda: pa.array(_micros(), pa.duration("ns")),
    "month_day_nano_interval": lambda: pa.array(
        [None if i % 7 == 3 else (i, -i, i * 1000) for i in range(N)],
        pa.month_day_nano_interval()),
    "binary": lambda: pa.array([s and s.encode() for s in _strings()], pa.binary()),
    "string": lambda: pa.array(_strings(), pa.string()),
    "large_binary": lambda: pa.array([s and s.encode() for s in _strings()], pa.large_binary()),
    "large_string": lambda: pa.array(_strings(), pa.large_string()),
    "binary_view": lambda: pa.array([s and s.encode() for s in _long_strings()], pa.binary_view()),
    "string_view": lambda: pa.array(_long_strings(), pa.string_view()),
    "string_view_multi_buffer": _string_view_multi,
    "fixed_size_binary": lambda: pa.array([None if i % 4 == 2 else bytes([i % 256]) * 5
                                           for i in range(N)], pa.binary(5)),
    "list": lambda: pa.array([None if i % 5 == 0 else [j if j % 3 else None for j in range(i % 4)]
                              for i in range(N)], pa.list_(pa.int32())),
    "large_list": lambda: pa.array([None if i % 5 == 0 else [f"{j}" for j in range(i % 3)]
                                    for i in range(N)], pa.large_list(pa.string())),
    "list_view": _list_view,
    "large_list_view": _large_list_view,
    "fixed_size_list": lambda: pa.array([None if i % 6 == 0 else [i, None, -i] for i in range(N)],
                                        pa.list_(pa.int16(), 3)),
    "struct": _struct,
    "map_keys_sorted": _map,
    "sparse_union": _sparse_union,
    "dense_union": _dense_union,
    "dictionary": lambda: pa.array(_strings()).dictionary_encode(),
    "dictionary_ordered_int8": lambda: pa.DictionaryArray.from_arrays(
        pa.array([None if i % 7 == 3 else i % 4 for i in range(N)], pa.int8()),
        pa.array([1.5, None, 3.5, 4.5]), ordered=True),
    "run_end_encoded_int16": lambda: _ree(pa.int16(), pa.array(_strings(20))),
    "run_end_encoded_int32": lambda: _ree(pa.int32(), pa.array(_ints(20), pa.float64())),
    "run_end_encoded_int64": lambda: _ree(pa.int64(), pa.array(_ints(20), pa.int8())),
    "extension_uuid": _uuid,
    "extension_json": lambda: pa.ExtensionArray.from_storage(
        pa.json_(), pa.array([None if i % 3 == 0 else f'{{"a": {i}}}' for i in range(N)])),
    "extension_registered": _point,
    "nested": _nested,
}

# Slices whose offsets are not multiples of 8 (and a slice of a slice).
SLICES = {
    "whole": lambda a: a,
    "offset3": lambda a: a.slice(3, 25),
    "offset5_of_offset11": lambda a: a.slice(11).slice(5, 17),
    "empty": lambda a: a.slice(13, 0),
}


def _pa_buffers(arr):
    """The pyarrow buffers of `arr` (pre-order), its dictionaries included."""
    out = [b for b in arr.buffers() if b is not None]
    if isinstance(arr, pa.DictionaryArray):
        out += _pa_buffers(arr.dictionary)
    return out


def _our_buffers(arr):
    """The same for an arrowipc Array (NULL foreign pointers become a shared static address)."""
    out = [b for b in arr.buffers() if b is not None and b.address != ZERO_ADDRESS]
    if arr.data.dictionary is not None:
        out += _our_buffers(make_array(arr.data.dictionary))
    return out


def _pa_addresses(arr):
    return [b.address for b in _pa_buffers(arr)]


def _our_addresses(arr):
    return [b.address for b in _our_buffers(arr)]


def _pyarrow_validates_own_c_round_trip(arr):
    """False where pyarrow rejects its own export (e.g. empty view slices with an offset: its
    importer gives a length-0 array 0-byte buffers, then validation wants offset * 16 bytes)."""
    try:
        if isinstance(arr, pa.Table):
            pa.RecordBatchReader._import_from_c_capsule(
                arr.__arrow_c_stream__()).read_all().validate(full=True)
        else:
            pa.Array._import_from_c_capsule(*arr.__arrow_c_array__()).validate(full=True)
    except pa.ArrowInvalid:
        return False
    return True


def _live_counts():
    gc.collect()
    return cdata.live_exports(), cdata.live_schema_exports(), cdata.live_imports()


@pytest.fixture(autouse=True)
def no_leaks():
    """Every C struct a test exports or imports is released by the end of that test."""
    before = _live_counts()
    yield
    assert _live_counts() == before, "(exports, schema exports, imports) alive after the test"


# -- arrays ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("slicer", list(SLICES), ids=list(SLICES))
@pytest.mark.parametrize("case", list(CASES), ids=list(CASES))
def test_array_round_trip_zero_copy(case, slicer):
    exports_before = cdata.live_exports()
    original = SLICES[slicer](CASES[case]())
    original.validate(full=True)
    ours = arrowipc.array(original)
    assert len(ours) == len(original)
    assert ours.offset == original.offset
    assert ours.null_count == original.null_count
    assert str(ours.type) == str(original.type) or isinstance(original, pa.ExtensionArray)
    assert _our_addresses(ours) == _pa_addresses(original)
    # Sizes computed from type, length and offset: exact for whole arrays, never past the end.
    sizes = [(b.size, p.size) for b, p in zip(_our_buffers(ours), _pa_buffers(original))]
    if slicer == "whole":
        assert all(ours_size == theirs for ours_size, theirs in sizes), sizes
    assert all(ours_size <= theirs for ours_size, theirs in sizes), sizes

    back = pa.array(ours)
    if _pyarrow_validates_own_c_round_trip(original):
        back.validate(full=True)
    assert back.type == original.type
    assert back.equals(original)
    assert back.to_pylist() == original.to_pylist()
    assert _pa_addresses(back) == _pa_addresses(original)
    if case != "null":   # pyarrow releases an import without buffers at once
        assert cdata.live_exports() > exports_before   # `back` still holds our export
    del back
    gc.collect()
    assert cdata.live_exports() == exports_before


@pytest.mark.parametrize("case", list(CASES), ids=list(CASES))
def test_imported_array_outlives_the_original(case):
    imports_before = cdata.live_imports()
    expected = CASES[case]().slice(3, 30).to_pylist()
    original = CASES[case]().slice(3, 30)
    ours = arrowipc.array(original)
    addresses = _our_addresses(ours)
    del original
    gc.collect()
    if case != "null":   # no buffers, nothing to hold
        assert cdata.live_imports() > imports_before   # `ours` still holds the producer's memory
    back = pa.array(ours)
    del ours
    gc.collect()
    # pyarrow -> arrowipc -> pyarrow: the last consumer keeps the whole chain alive.
    back.validate(full=True)
    assert back.to_pylist() == expected
    assert _pa_addresses(back) == addresses
    del back
    gc.collect()
    assert cdata.live_imports() == imports_before


@pytest.mark.parametrize("case", ["int64", "string", "string_view", "struct", "dictionary",
                                  "dense_union", "run_end_encoded_int32", "nested"])
def test_export_keeps_our_buffers_alive(case):
    exports_before = cdata.live_exports()
    ours = arrowipc.array(CASES[case]())
    expected = pa.array(ours).to_pylist()
    capsules = ours.__arrow_c_array__()
    del ours
    gc.collect()
    assert cdata.live_exports() > exports_before
    back = pa.Array._import_from_c_capsule(*capsules)
    del capsules
    back.validate(full=True)
    assert back.to_pylist() == expected


def test_array_types_map_to_arrowipc_types():
    expected = {
        "null": arrowipc.null(), "bool": arrowipc.bool_(), "uint16": arrowipc.uint16(),
        "float16": arrowipc.float16(), "decimal32": arrowipc.decimal32(7, 2),
        "decimal64": arrowipc.decimal64(16, 3), "decimal128": arrowipc.decimal128(30, 4),
        "decimal256": arrowipc.decimal256(60, 5), "date64": arrowipc.date64(),
        "time32[ms]": arrowipc.time32("ms"), "time64[ns]": arrowipc.time64("ns"),
        "timestamp[ms, tz]": arrowipc.timestamp("ms", "Europe/Paris"),
        "timestamp[s]": arrowipc.timestamp("s"), "duration[us]": arrowipc.duration("us"),
        "month_day_nano_interval": arrowipc.month_day_nano_interval(),
        "large_binary": arrowipc.large_binary(), "string_view": arrowipc.string_view(),
        "binary_view": arrowipc.binary_view(), "fixed_size_binary": arrowipc.binary(5),
        "large_list": arrowipc.large_list(arrowipc.string()),
        "list_view": arrowipc.list_view(arrowipc.int32()),
        "large_list_view": arrowipc.large_list_view(arrowipc.string()),
        "fixed_size_list": arrowipc.list_(arrowipc.int16(), 3),
        "map_keys_sorted": arrowipc.map_(arrowipc.string(), arrowipc.int32(), keys_sorted=True),
        "sparse_union": arrowipc.sparse_union([arrowipc.field("i", arrowipc.int32()),
                                               arrowipc.field("s", arrowipc.string())], [3, 9]),
        "dense_union": arrowipc.dense_union([arrowipc.field("f", arrowipc.float64()),
                                             arrowipc.field("s", arrowipc.string())], [5, 2]),
        "dictionary_ordered_int8": arrowipc.dictionary(arrowipc.int8(), arrowipc.float64(), True),
        "run_end_encoded_int16": arrowipc.run_end_encoded(arrowipc.int16(), arrowipc.string()),
        "extension_uuid": arrowipc.ExtensionType("arrow.uuid", arrowipc.binary(16)),
        "extension_registered": arrowipc.ExtensionType(
            "arrowipc.test.point",
            arrowipc.struct([("x", arrowipc.float64()), ("y", arrowipc.float64())]),
            b"crs=wgs84"),
    }
    for case, t in expected.items():
        assert arrowipc.array(CASES[case]()).type == t, case


def test_arrowipc_allocations_live_until_the_consumer_releases():
    from arrowipc._core.buffer import live_allocations
    before = live_allocations()
    values = arrowipc.allocate_buffer(8 * 6)
    np.frombuffer(memoryview(values), dtype=np.int64)[:] = [10, 11, 12, 13, 14, 15]
    validity = arrowipc.allocate_buffer(1)
    memoryview(validity)[0] = 0b110111
    ours = make_array(ArrayData(arrowipc.int64(), 4, 2, -1, [validity, values]))
    address = values.address
    back = pa.array(ours)
    del ours, values, validity
    gc.collect()
    assert live_allocations() == before + 2
    back.validate(full=True)
    assert back.to_pylist() == [12, None, 14, 15]
    assert back.buffers()[1].address == address
    del back
    gc.collect()
    assert live_allocations() == before


def test_dictionary_and_flags_survive():
    ours = arrowipc.array(CASES["dictionary_ordered_int8"]())
    assert ours.type.ordered
    original = CASES["dictionary"]()
    values = make_array(arrowipc.array(original).data.dictionary)
    assert values.type == arrowipc.string()
    assert _our_addresses(values) == _pa_addresses(original.dictionary)
    m = arrowipc.array(CASES["map_keys_sorted"]())
    assert m.type.keys_sorted
    assert not m.type.key_field.nullable


def test_views_export_variadic_sizes_buffer():
    original = _string_view_multi()
    ours = arrowipc.array(original)
    n_data = len(ours.data.buffers) - 2
    assert n_data == len(original.buffers()) - 2 >= 2
    schema_capsule, array_capsule = ours.__arrow_c_array__()
    # Read the exported ArrowArray directly: n_buffers = 2 + data buffers + 1 sizes buffer.
    ptr = ctypes.pythonapi.PyCapsule_GetPointer
    ptr.restype, ptr.argtypes = ctypes.c_void_p, [ctypes.py_object, ctypes.c_char_p]
    raw = ctypes.cast(ptr(array_capsule, b"arrow_array"), ctypes.POINTER(_CArray)).contents
    assert raw.n_buffers == 2 + n_data + 1
    sizes = ctypes.cast(raw.buffers[raw.n_buffers - 1], ctypes.POINTER(ctypes.c_int64))
    assert [sizes[i] for i in range(n_data)] == [b.size for b in ours.data.buffers[2:]]
    assert ([raw.buffers[i] for i in range(2, 2 + n_data)]
            == [b.address for b in ours.data.buffers[2:]])
    del schema_capsule, array_capsule, raw


def test_buffer_counts_of_special_layouts():
    def exported(arr):
        _, capsule = arrowipc.array(arr).__arrow_c_array__()
        ptr = ctypes.pythonapi.PyCapsule_GetPointer
        ptr.restype, ptr.argtypes = ctypes.c_void_p, [ctypes.py_object, ctypes.c_char_p]
        raw = ctypes.cast(ptr(capsule, b"arrow_array"), ctypes.POINTER(_CArray)).contents
        return raw.n_buffers, raw.n_children, raw.null_count, capsule

    assert exported(pa.nulls(5))[:3] == (0, 0, 5)
    assert exported(_sparse_union())[:2] == (1, 2)
    assert exported(_dense_union())[:2] == (2, 2)
    assert exported(CASES["run_end_encoded_int32"]())[:2] == (0, 2)


def test_month_and_day_time_intervals():
    # pyarrow has these types but no Python array classes: go through a record batch (C++ only).
    months = ArrayData(arrowipc.month_interval(), 5, 1, -1,
                       [arrowipc.py_buffer(bytes([0b11101])),
                        arrowipc.py_buffer(np.arange(6, dtype=np.int32).tobytes())])
    day_ms = ArrayData(arrowipc.day_time_interval(), 5, 0, 0,
                       [None, arrowipc.py_buffer(np.arange(10, dtype=np.int32).tobytes())])
    batch = arrowipc.RecordBatch.from_arrays([make_array(months), make_array(day_ms)],
                                             names=["m", "d"])
    pb = pa.record_batch(batch)
    pb.validate(full=True)
    assert str(pb.schema.field("m").type) == "month_interval"
    assert str(pb.schema.field("d").type) == "day_time_interval"
    again = arrowipc.record_batch(pb)
    assert again.schema == batch.schema
    m, d = again.column(0).data, again.column(1).data
    assert (m.offset, m.length) == (1, 5)
    assert m.buffers[0].address == months.buffers[0].address
    assert m.buffers[1].address == months.buffers[1].address
    assert m.buffers[1].size == 6 * 4   # (offset + length) * 4 bytes
    assert m.buffers[0].size == 1
    assert d.buffers[0] is None
    assert d.buffers[1].to_pybytes() == np.arange(10, dtype=np.int32).tobytes()
    del pb, again, m, d


# -- record batches, tables, streams -------------------------------------------------------------

def _wide_batch():
    names = [c for c in CASES if c not in ("null",)]
    arrays = [CASES[c]().slice(3, 30) for c in names] + [pa.nulls(30)]
    fields = [pa.field(n, a.type, metadata={"col": n}) for n, a in zip(names, arrays)]
    fields.append(pa.field("null", pa.null()))
    schema = pa.schema(fields, metadata={"origin": "test", "empty": ""})
    return pa.RecordBatch.from_arrays(arrays, schema=schema)


def test_record_batch_round_trip():
    original = _wide_batch().slice(5, 20)
    ours = arrowipc.record_batch(original)
    assert ours.num_rows == 20 and ours.num_columns == original.num_columns
    assert ours.schema.metadata == {b"origin": b"test", b"empty": b""}
    for i in range(original.num_columns):
        col = ours.column(i)
        assert len(col) == 20
        assert _our_addresses(col) == _pa_addresses(original.column(i)), original.schema.names[i]
    back = pa.record_batch(ours)
    back.validate(full=True)
    assert back.schema.equals(original.schema, check_metadata=True)
    assert back.equals(original)
    for i in range(original.num_columns):
        assert _pa_addresses(back.column(i)) == _pa_addresses(original.column(i))


def test_record_batch_from_struct_array_applies_offset():
    struct = _struct().slice(0, N)  # has top-level nulls: not a batch
    with pytest.raises(ArrowInvalid, match="null"):
        arrowipc.record_batch(struct)
    valid = pa.StructArray.from_arrays([pa.array(range(N)), pa.array(_strings())], ["a", "b"])
    ours = arrowipc.record_batch(valid.slice(7, 9))
    assert pa.record_batch(ours).equals(pa.RecordBatch.from_struct_array(valid.slice(7, 9)))


def test_table_round_trip_through_streams():
    batch = _wide_batch()
    original = pa.Table.from_batches([batch.slice(0, 11), batch.slice(11, 0), batch.slice(11)])
    ours = arrowipc.table(original)
    assert ours.num_rows == original.num_rows
    assert len(ours.to_batches()) == 3
    assert ours.schema.metadata == original.schema.metadata
    back = pa.table(ours)
    assert not _pyarrow_validates_own_c_round_trip(original)   # the empty view slice, see above
    for chunk in back.to_batches():
        if chunk.num_rows:
            chunk.validate(full=True)
    assert back.schema.equals(original.schema, check_metadata=True)
    assert back.equals(original)
    for name in ("string_view", "nested", "dense_union"):
        for a, b in zip(back.column(name).chunks, original.column(name).chunks):
            assert _pa_addresses(a) == _pa_addresses(b)
    del back
    reader = pa.RecordBatchReader.from_stream(ours)
    assert reader.read_all().equals(original)


def test_table_outlives_the_original():
    original = pa.table({"s": _strings(), "l": CASES["list"]()})
    expected = original.to_pylist()
    ours = arrowipc.table(original)
    del original
    gc.collect()
    assert pa.table(ours).to_pylist() == expected


def test_chunked_array_stream_round_trip():
    original = pa.chunked_array([CASES["large_list"]().slice(2, 9), CASES["large_list"]()])
    ours = arrowipc.chunked_array(original)
    assert ours.num_chunks == 2 and ours.type == arrowipc.large_list(arrowipc.string())
    back = pa.chunked_array(ours)
    back.validate(full=True)
    assert back.equals(original)
    assert [_pa_addresses(c) for c in back.chunks] == [_pa_addresses(c) for c in original.chunks]


def test_stream_errors_reach_the_consumer():
    schema = arrowipc.schema([("x", arrowipc.int64())])
    good = arrowipc.record_batch(pa.record_batch({"x": pa.array([1, 2], pa.int64())}))

    def failing():
        yield good
        raise ValueError("disk on fire")

    capsule = interop.export_stream(schema, failing())
    reader = pa.RecordBatchReader._import_from_c_capsule(capsule)
    assert reader.read_next_batch().num_rows == 2
    with pytest.raises(pa.ArrowInvalid, match="disk on fire"):
        reader.read_next_batch()
    del reader, capsule

    # and through our own importer: the producer's message and code map to ArrowInvalid
    sch, batches = interop.import_stream(_StreamHolder(interop.export_stream(schema, failing())))
    assert next(batches).num_rows == 2
    with pytest.raises(ArrowInvalid, match="disk on fire"):
        next(batches)
    del batches


def test_stream_batches_with_an_equal_schema_export_and_others_are_refused():
    # batches sharing the stream's Schema object take the identity path; an equal but separate
    # Schema is compared; a different one is an error that reaches the consumer
    schema = arrowipc.schema([("x", arrowipc.int64()), ("s", arrowipc.string())])
    same = arrowipc.record_batch(pa.record_batch({"x": pa.array([1, 2], pa.int64()),
                                                  "s": pa.array(["a", None])}))
    assert same.schema is not schema and same.schema.equals(schema)
    shared = arrowipc.RecordBatch.from_arrays(same.columns, schema=schema)
    reader = pa.RecordBatchReader._import_from_c_capsule(
        interop.export_stream(schema, iter([shared, same])))
    assert reader.schema.equals(pa.schema([("x", pa.int64()), ("s", pa.string())]))
    got = reader.read_all()
    assert got.to_pydict() == {"x": [1, 2, 1, 2], "s": ["a", None, "a", None]}
    del reader, got

    other = arrowipc.record_batch(pa.record_batch({"x": pa.array([1], pa.int32()),
                                                   "s": pa.array(["a"])}))
    reader = pa.RecordBatchReader._import_from_c_capsule(
        interop.export_stream(schema, iter([shared, other])))
    first = reader.read_next_batch()
    assert first.num_rows == 2
    with pytest.raises(pa.ArrowInvalid, match="in a stream of"):
        reader.read_next_batch()
    del reader, first
    gc.collect()
    assert cdata.live_exports() == 0


def test_export_errors_name_the_type():
    bad = ArrayData(arrowipc.list_(arrowipc.int32()), 0, 0, 0,
                    [None, arrowipc.py_buffer(b"\0" * 4)], [])
    with pytest.raises(ArrowInvalid, match=r"exporting an array of type list<item: int32>: "
                                           "expected 1 children, found 0"):
        cdata.export_array_capsule(bad)


class _StreamHolder:
    def __init__(self, capsule):
        self.capsule = capsule

    def __arrow_c_stream__(self, requested_schema=None):
        return self.capsule


def test_stream_released_early_by_consumer():
    batch = _wide_batch()
    ours = arrowipc.table(pa.Table.from_batches([batch] * 3))
    before = _live_counts()
    reader = pa.RecordBatchReader.from_stream(ours)
    reader.read_next_batch()
    assert cdata.live_exports() > before[0]
    del reader
    gc.collect()
    assert _live_counts() == before
    # ours imported from pyarrow: drop the iterator half-way, the producer stream is released
    sch, it = interop.import_stream(pa.Table.from_batches([batch] * 3))
    first = next(it)
    assert cdata.live_imports() >= before[2] + 2   # the stream and the batch
    del it
    gc.collect()
    assert cdata.live_imports() == before[2] + 1   # the stream is released, the batch lives
    assert pa.record_batch(first).equals(batch)


# -- schemas and types ----------------------------------------------------------------------------

def test_schema_round_trip_exact():
    fields = [pa.field(n, CASES[n]().type, nullable=i % 2 == 0,
                       metadata={"i": str(i), "name": n} if i % 3 else None)
              for i, n in enumerate(CASES)]
    fields += [pa.field("ts_tz", pa.timestamp("s", tz="America/New_York")),
               pa.field("deep", pa.list_(pa.field("elem", pa.struct([
                   pa.field("k", pa.map_(pa.int64(), pa.list_(pa.uuid())), nullable=False,
                            metadata={"inner": "yes"})]), nullable=False))),
               pa.field("fsl0", pa.list_(pa.int8(), 0)),
               pa.field("empty_struct", pa.struct([])),
               pa.field("empty_union", pa.sparse_union([])),
               pa.field("dict_of_ext", pa.dictionary(pa.uint32(), pa.json_())),
               pa.field("ree_list", pa.run_end_encoded(pa.int64(), pa.list_(pa.string())))]
    original = pa.schema(fields, metadata={"schema-level": "meta", "bin\x00key": "v\x01"})
    ours = arrowipc.schema(original)
    assert ours.names == original.names
    assert ours.metadata == {b"schema-level": b"meta", b"bin\x00key": b"v\x01"}
    assert ours.field("struct").type.field("b").nullable is False
    back = pa.schema(ours)
    assert back.equals(original, check_metadata=True)
    for f, g in zip(back, original):
        assert f.equals(g, check_metadata=True), f.name


def test_field_and_type_exports():
    f = arrowipc.field("x", arrowipc.timestamp("us", "UTC"), nullable=False, metadata={"a": "b"})
    pf = pa.field(f)
    assert pf.equals(pa.field("x", pa.timestamp("us", "UTC"), False, {"a": "b"}),
                     check_metadata=True)
    assert pa.DataType._import_from_c_capsule(
        arrowipc.dense_union([arrowipc.field("a", arrowipc.int8())], [42]).__arrow_c_schema__()
    ) == pa.dense_union([pa.field("a", pa.int8())], [42])
    ext = arrowipc.ExtensionType("arrow.uuid", arrowipc.binary(16))
    assert pa.field(arrowipc.field("u", ext)).type == pa.uuid()
    assert interop.import_field(pa.field("u", pa.uuid())).type == ext


def test_pyarrow_types_of_every_format():
    # format strings exercised through pyarrow's own import of our schemas
    ours = [arrowipc.decimal128(38, 10), arrowipc.decimal256(76, 0), arrowipc.decimal32(9, 9),
            arrowipc.decimal64(18, -2), arrowipc.time32("s"), arrowipc.time64("us"),
            arrowipc.timestamp("ns", "Asia/Tokyo"), arrowipc.duration("ms"),
            arrowipc.month_interval(), arrowipc.day_time_interval(), arrowipc.float16(),
            arrowipc.fixed_size_binary(0), arrowipc.list_view(arrowipc.null()),
            arrowipc.map_(arrowipc.string(), arrowipc.map_(arrowipc.int8(), arrowipc.bool_()))]
    names = ["decimal128(38, 10)", "decimal256(76, 0)", "decimal32(9, 9)", "decimal64(18, -2)",
             "time32[s]", "time64[us]", "timestamp[ns, tz=Asia/Tokyo]", "duration[ms]",
             "month_interval", "day_time_interval", "halffloat", "fixed_size_binary[0]",
             "list_view<item: null>", "map<string, map<int8, bool>>"]
    for t, name in zip(ours, names):
        pt = pa.DataType._import_from_c_capsule(t.__arrow_c_schema__())
        assert str(pt) == name
        assert interop.import_field(pt).type == t


def test_requested_schema_is_accepted():
    ours = arrowipc.array(pa.array([1, 2, 3], pa.int32()))
    # same type: honoured trivially; another type: ignored (we never cast)
    assert pa.array(ours, type=pa.int32()).equals(pa.array([1, 2, 3], pa.int32()))
    schema_capsule, _ = ours.__arrow_c_array__(pa.int64().__arrow_c_schema__())
    assert interop.import_field(_SchemaHolder(schema_capsule)).type == arrowipc.int32()
    with pytest.raises(ArrowTypeError):
        ours.__arrow_c_array__("not a capsule")


class _SchemaHolder:
    def __init__(self, capsule):
        self.capsule = capsule

    def __arrow_c_schema__(self):
        return self.capsule


def test_the_physical_layer_carries_schema_nodes_unchanged():
    # _core.cdata knows no types: it writes and reads the C struct a SchemaNode describes, and
    # the model's reading of it (arrowipc.data.cschema) is what pyarrow reads from the same capsule
    node = cdata.SchemaNode(
        "+s", "root", {b"k": b"v\x00w"}, cdata.FLAG_NULLABLE,
        (cdata.SchemaNode("+m", "m", None, cdata.FLAG_MAP_KEYS_SORTED, (
            cdata.SchemaNode("+s", "entries", None, 0, (
                cdata.SchemaNode("u", "key", None, 0, (), None),
                cdata.SchemaNode("l", "value", None, cdata.FLAG_NULLABLE, (), None)), None),),
            None),
         cdata.SchemaNode("c", "d", None, cdata.FLAG_DICTIONARY_ORDERED,
                          (), cdata.SchemaNode("vu", "", None, cdata.FLAG_NULLABLE, (), None))),
        None)
    before = cdata.live_schema_exports()
    capsule = cdata.export_schema_capsule(node)
    assert cdata.import_schema_capsule(capsule) == node   # reading leaves the struct in place
    ours = _cschema.field_from_node(cdata.import_schema_capsule(capsule))
    theirs = pa.field(_SchemaHolder(capsule))                # moves the struct out
    assert theirs.equals(pa.field("root", pa.struct([
        pa.field("m", pa.map_(pa.string(), pa.int64(), keys_sorted=True), False),
        pa.field("d", pa.dictionary(pa.int8(), pa.string_view(), ordered=True), False)]),
        metadata={b"k": b"v\x00w"}), check_metadata=True)
    assert ours.equals(interop.import_field(theirs), check_metadata=True)
    assert _cschema.schema_node(ours.type, ours.name, ours.nullable, ours.metadata) == node
    del capsule, theirs
    assert cdata.live_schema_exports() == before
    with pytest.raises(ArrowTypeError, match="SchemaNode"):
        cdata.export_schema_capsule(("i", "", None, 0, (), None))
    with pytest.raises(ArrowTypeError, match="SchemaNode"):
        cdata.export_stream_capsule(arrowipc.int8(), iter([]))


# -- malformed input ------------------------------------------------------------------------------

class _CSchema(ctypes.Structure):
    pass


_CSchema._fields_ = [
    ("format", ctypes.c_char_p), ("name", ctypes.c_char_p), ("metadata", ctypes.c_char_p),
    ("flags", ctypes.c_int64), ("n_children", ctypes.c_int64),
    ("children", ctypes.POINTER(ctypes.POINTER(_CSchema))),
    ("dictionary", ctypes.POINTER(_CSchema)),
    ("release", ctypes.c_void_p), ("private_data", ctypes.c_void_p)]


class _CArray(ctypes.Structure):
    pass


_CArray._fields_ = [
    ("length", ctypes.c_int64), ("null_count", ctypes.c_int64), ("offset", ctypes.c_int64),
    ("n_buffers", ctypes.c_int64), ("n_children", ctypes.c_int64),
    ("buffers", ctypes.POINTER(ctypes.c_void_p)),
    ("children", ctypes.POINTER(ctypes.POINTER(_CArray))),
    ("dictionary", ctypes.POINTER(_CArray)),
    ("release", ctypes.c_void_p), ("private_data", ctypes.c_void_p)]

_RELEASE_SCHEMA = ctypes.CFUNCTYPE(None, ctypes.POINTER(_CSchema))(
    lambda s: setattr(s.contents, "release", None))
_RELEASE_ARRAY = ctypes.CFUNCTYPE(None, ctypes.POINTER(_CArray))(
    lambda a: setattr(a.contents, "release", None))


def _capsule(struct, name):
    new = ctypes.pythonapi.PyCapsule_New
    new.restype = ctypes.py_object
    new.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
    return new(ctypes.addressof(struct), name, None)


def _foreign_schema(fmt, children=(), flags=2, dictionary=None):
    s = _CSchema(format=fmt, name=b"f", metadata=None, flags=flags, n_children=len(children))
    keep = [s, list(children), dictionary]
    if children:
        arr = (ctypes.POINTER(_CSchema) * len(children))(*[ctypes.pointer(c) for c in children])
        s.children = ctypes.cast(arr, ctypes.POINTER(ctypes.POINTER(_CSchema)))
        keep.append(arr)
    if dictionary is not None:
        s.dictionary = ctypes.pointer(dictionary)
    s.release = ctypes.cast(_RELEASE_SCHEMA, ctypes.c_void_p)
    s._keep = keep
    return s


@pytest.mark.parametrize("fmt", [b"q", b"w:x", b"w:-3", b"d:5", b"d:1,2,3,4", b"d:5,2,100",
                                 b"d:99,0", b"tsx:", b"tts:", b"tt", b"ttx", b"tDq", b"+w:",
                                 b"+us:1,x", b"+ud:1,1", b"+ud:200", b"", b"vx", b"tiX"])
def test_malformed_format_strings_raise(fmt):
    with pytest.raises(ArrowInvalid) as info:
        interop.import_field(_capsule(_foreign_schema(fmt), b"arrow_schema"))
    assert repr(fmt.decode()) in str(info.value)


def test_malformed_children_raise():
    child = _foreign_schema(b"i")
    for fmt, children in [(b"+l", []), (b"+l", [child, child]), (b"+m", [child]),
                          (b"+r", [_foreign_schema(b"g"), child]), (b"+us:1", []),
                          (b"i", [child])]:
        with pytest.raises(ArrowInvalid, match="format"):
            interop.import_field(_capsule(_foreign_schema(fmt, children), b"arrow_schema"))
    with pytest.raises(ArrowInvalid, match="not an integer"):
        float_indices = _foreign_schema(b"g", dictionary=_foreign_schema(b"u"))
        interop.import_field(_capsule(float_indices, b"arrow_schema"))
    released = _foreign_schema(b"i")
    released.release = None
    with pytest.raises(ArrowInvalid, match="released"):
        interop.import_field(_capsule(released, b"arrow_schema"))
    with pytest.raises(ArrowTypeError, match="arrow_schema"):
        interop.import_field(_capsule(_foreign_schema(b"i"), b"arrow_array"))


def test_foreign_time_zones_do_not_grow_the_leaf_type_cache():
    # the model remembers the types of childless formats ("tsu:UTC") to read wide schemas fast;
    # a producer sending ever new time zones must not make that memory grow without bound
    for i in range(_cschema._LEAF_TYPES_MAX + 50):
        f = interop.import_field(_capsule(_foreign_schema(f"tsu:Zone/{i}".encode()),
                                          b"arrow_schema"))
        assert f.type == arrowipc.timestamp("us", f"Zone/{i}")
    assert len(_cschema._LEAF_TYPES) <= _cschema._LEAF_TYPES_MAX
    assert interop.import_field(pa.field("t", pa.timestamp("s", "UTC"))).type == \
        arrowipc.timestamp("s", "UTC")


def _foreign_array(length, buffers, offset=0, null_count=0):
    bufs = (ctypes.c_void_p * max(len(buffers), 1))(*buffers)
    a = _CArray(length=length, null_count=null_count, offset=offset, n_buffers=len(buffers),
                n_children=0, buffers=ctypes.cast(bufs, ctypes.POINTER(ctypes.c_void_p)))
    a.release = ctypes.cast(_RELEASE_ARRAY, ctypes.c_void_p)
    a._keep = bufs
    return a


def test_malformed_arrays_raise():
    data = ctypes.create_string_buffer(64)
    offsets = (ctypes.c_int32 * 3)(3, 5, 2)   # ends before it starts
    cases = [
        (arrowipc.int32(), _foreign_array(2, [None]), "expected 2 buffers"),
        (arrowipc.int32(), _foreign_array(-1, [None, ctypes.addressof(data)]), "length"),
        (arrowipc.int32(), _foreign_array(2, [None, None]), "NULL"),
        (arrowipc.int32(), _foreign_array(2, [None, ctypes.addressof(data)], null_count=1),
         "validity"),
        (arrowipc.string(), _foreign_array(2, [None, ctypes.addressof(offsets),
                                               ctypes.addressof(data)]), "offsets"),
        (arrowipc.string_view(), _foreign_array(1, [None, ctypes.addressof(data)]), "at least 3"),
        (arrowipc.list_(arrowipc.int8()), _foreign_array(0, [None, ctypes.addressof(data)]),
         "children"),
    ]
    for t, arr, message in cases:
        with pytest.raises(ArrowInvalid, match=message):
            cdata.import_array_capsule(_capsule(arr, b"arrow_array"), t)
        assert arr.release is None   # moved in, then released by our owner
    gc.collect()


def test_foreign_zero_length_buffers_keep_their_pointer():
    data = ctypes.create_string_buffer(8)
    arr = _foreign_array(0, [None, ctypes.addressof(data)])
    imported = cdata.import_array_capsule(_capsule(arr, b"arrow_array"), arrowipc.int64())
    assert imported.buffers[0] is None
    assert imported.buffers[1].address == ctypes.addressof(data)
    assert imported.buffers[1].size == 0
    empty = _foreign_array(0, [None, None, None])
    s = cdata.import_array_capsule(_capsule(empty, b"arrow_array"), arrowipc.string())
    assert s.buffers[1].size == 4 and s.buffers[1].to_pybytes() == bytes(4)
    del imported, s
