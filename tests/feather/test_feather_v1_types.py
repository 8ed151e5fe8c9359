"""Feather V1 files of every type V1 can hold, pyarrow as the oracle: files pyarrow writes with
`version=1` read by arrowipc equal pyarrow's reads of them, and files arrowipc writes with
`version=1` are read by pyarrow as the table written.
"""
import warnings

import pytest

import arrowipc
import arrowipc.feather as feather
from arrowipc import ArrowInvalid, ArrowNotImplementedError, ArrowTypeError

pa = pytest.importorskip("pyarrow")
pf = pytest.importorskip("pyarrow.feather")

pytestmark = pytest.mark.filterwarnings("ignore:Feather V1 files are deprecated:DeprecationWarning")


def _every_v1_type(n=5):
    """A pyarrow table with a column of each type V1 holds, nulls in most of them."""
    def nulls(values):
        return [None if i % 3 == 1 else v for i, v in enumerate(values)]
    ints = list(range(n))
    cols = {"bool": pa.array(nulls([i % 2 == 0 for i in ints]), pa.bool_()),
            "bool_no_nulls": pa.array([i % 3 == 0 for i in ints], pa.bool_())}
    for t in (pa.int8(), pa.int16(), pa.int32(), pa.int64(),
              pa.uint8(), pa.uint16(), pa.uint32(), pa.uint64()):
        cols[str(t)] = pa.array(nulls(ints), t)
    cols["uint64_max"] = pa.array([2**64 - 1] * n, pa.uint64())
    cols["int64_min"] = pa.array([-2**63] * n, pa.int64())
    cols["float"] = pa.array(nulls([i / 2 for i in ints]), pa.float32())
    cols["double"] = pa.array(nulls([i / 3 for i in ints]), pa.float64())
    cols["utf8"] = pa.array(nulls([f"é{i}" * i for i in ints]), pa.string())
    cols["binary"] = pa.array(nulls([bytes([i]) * i for i in ints]), pa.binary())
    cols["large_utf8"] = pa.array(nulls([f"s{i}" for i in ints]), pa.large_string())
    cols["large_binary"] = pa.array(nulls([b"b" * i for i in ints]), pa.large_binary())
    cols["date32"] = pa.array(nulls([i * 1000 - 2000 for i in ints]), pa.date32())
    for unit in ("s", "ms", "us", "ns"):
        cols[f"ts_{unit}"] = pa.array(nulls(ints), pa.timestamp(unit))
    cols["ts_tz"] = pa.array(nulls(ints), pa.timestamp("us", "America/New_York"))
    cols["time32_s"] = pa.array(nulls(ints), pa.time32("s"))
    cols["time32_ms"] = pa.array(nulls(ints), pa.time32("ms"))
    cols["category"] = pa.array(nulls([["a", "b", "c"][i % 3] for i in ints]),
                                pa.string()).dictionary_encode()
    cols["category_ordered"] = pa.DictionaryArray.from_arrays(
        pa.array([i % 2 for i in ints], pa.int8()), pa.array(["lo", "hi"]), ordered=True)
    cols["category_int_levels"] = pa.DictionaryArray.from_arrays(
        pa.array([i % 2 for i in ints], pa.int16()), pa.array([10, 20], pa.int64()))
    cols["null"] = pa.nulls(n)
    return pa.table(cols)


def test_nan_is_read_and_written(tmp_path):
    # apart: pyarrow's Table.equals says NaN differs from NaN
    import math
    path = tmp_path / "t.feather"
    _pyarrow_writes_v1(pa.table({"x": [float("nan"), None, 1.0]}), path)
    x = feather.read_table(str(path)).column("x").to_pylist()
    assert math.isnan(x[0]) and x[1:] == [None, 1.0]
    feather.write_feather(feather.read_table(str(path)), str(path), version=1)
    x = _pyarrow_reads(path).column("x").to_pylist()
    assert math.isnan(x[0]) and x[1:] == [None, 1.0]


def _pyarrow_writes_v1(table, path):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        pf.write_feather(table, path, version=1)


def _pyarrow_reads(path):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        return pf.read_table(path)


@pytest.mark.parametrize("n", [0, 1, 5, 70])
def test_arrowipc_reads_what_pyarrow_writes(tmp_path, n):
    path = tmp_path / "t.feather"
    _pyarrow_writes_v1(_every_v1_type(n), path)
    ours = feather.read_table(str(path))
    expected = _pyarrow_reads(path)
    assert ours.schema.equals(expected.schema)
    assert pa.table(ours).equals(expected)
    assert ours.num_rows == n


def test_a_v1_read_warns_as_pyarrow_does(tmp_path):
    path = tmp_path / "t.feather"
    _pyarrow_writes_v1(pa.table({"a": [1]}), path)
    with pytest.warns(DeprecationWarning, match="Feather V1 files are deprecated as of 25.0.0"):
        feather.read_table(str(path))


def test_sliced_columns_written_by_pyarrow_are_read(tmp_path):
    # pyarrow writes a slice's string offsets as they are (not starting at 0) and its bitmaps
    # shifted: both must read back as the slice
    path = tmp_path / "t.feather"
    table = _every_v1_type(20).slice(3, 11)
    _pyarrow_writes_v1(table, path)
    assert pa.table(feather.read_table(str(path))).equals(_pyarrow_reads(path))
    assert feather.read_table(str(path)).to_pydict() == pa.table(table).to_pydict()


@pytest.mark.parametrize("n", [0, 1, 5, 70])
def test_pyarrow_reads_what_arrowipc_writes(tmp_path, n):
    expected = _every_v1_type(n)
    ours = arrowipc.table(expected)
    path = tmp_path / "ours.feather"
    with pytest.warns(DeprecationWarning, match="Feather V1 files are deprecated"):
        feather.write_feather(ours, str(path), version=1)
    assert path.read_bytes()[:4] == b"FEA1" and path.read_bytes()[-4:] == b"FEA1"
    read = _pyarrow_reads(path)
    # a null column is written as all-null strings, as pyarrow writes it
    want = expected.set_column(expected.schema.get_field_index("null"), "null",
                               pa.nulls(n, pa.string()))
    assert read.equals(want)


def test_sliced_tables_are_written_from_the_slice(tmp_path):
    path = tmp_path / "ours.feather"
    table = _every_v1_type(30).slice(7, 13)
    feather.write_feather(arrowipc.table(table), str(path), version=1)
    read = _pyarrow_reads(path)
    assert read.drop_columns(["null"]).equals(table.drop_columns(["null"]))


def test_columns_are_selected_in_the_order_asked(tmp_path):
    path = tmp_path / "t.feather"
    _pyarrow_writes_v1(pa.table({"c": [1], "a": [2], "b": [3]}), path)
    for columns in (["a", "c"], ["b", "a"], ["a", "a"], [1, 1], [2, 0], [0, 2], []):
        got = feather.read_table(str(path), columns=columns)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            want = pf.read_table(path, columns=columns)
        assert got.column_names == want.column_names, columns
        assert pa.table(got).equals(want)


@pytest.mark.parametrize("columns,error,message", [
    ([5], ArrowInvalid, "Field index 5 is out of bounds"),
    ([-1], ArrowInvalid, "Field index -1 is out of bounds"),
    (["zz"], ArrowInvalid, "Field named zz is not found"),
    (["a", 1], TypeError, r"Columns must be indices or names. Got columns \['a', 1\] of types "
                          r"\['str', 'int'\]"),
    (3, TypeError, "Columns must be a sequence but, got int"),
])
def test_bad_selections_fail_as_in_pyarrow(tmp_path, columns, error, message):
    path = tmp_path / "t.feather"
    _pyarrow_writes_v1(pa.table({"c": [1], "a": [2], "b": [3]}), path)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        with pytest.raises(error.__mro__[2] if error is ArrowInvalid else error, match=message):
            pf.read_table(path, columns=columns)
    with pytest.raises(error, match=message):
        feather.read_table(str(path), columns=columns)


def test_v1_sources_other_than_paths(tmp_path):
    import io
    path = tmp_path / "t.feather"
    _pyarrow_writes_v1(_every_v1_type(4), path)
    data = path.read_bytes()
    expected = _pyarrow_reads(path)
    for source in (data, pa.py_buffer(data), io.BytesIO(data), open(path, "rb"),
                   arrowipc.py_buffer(data)):
        assert pa.table(feather.read_table(source)).equals(expected)
    assert pa.table(feather.read_table(str(path), memory_map=True)).equals(expected)


# -- writing V1: pyarrow's refusals --------------------------------------------------------------

@pytest.mark.parametrize("column,error,message", [
    (pa.array([1], pa.duration("s")), ArrowTypeError,
     r"Unsupported Feather V1 type: duration\[s\]. Use V2 format to serialize all Arrow types."),
    (pa.array([1], pa.date64()), ArrowTypeError, r"Unsupported Feather V1 type: date64\[ms\]"),
    (pa.array([[1]]), ArrowTypeError, r"Unsupported Feather V1 type: list<item: int64>"),
    (pa.array([1], pa.time64("us")), ArrowNotImplementedError, r"time64\[us\]"),
])
def test_types_v1_cannot_hold_are_refused_as_by_pyarrow(tmp_path, column, error, message):
    table = pa.table({"x": column})
    builtin = error.__mro__[2]          # the builtin both libraries' classes derive from
    with pytest.raises(builtin, match=message):
        _pyarrow_writes_v1(table, tmp_path / "theirs.feather")
    path = tmp_path / "ours.feather"
    with pytest.raises(error, match=message):
        feather.write_feather(arrowipc.table(table), str(path), version=1)
    assert not path.exists()


def test_chunked_columns_are_refused_as_by_pyarrow(tmp_path):
    table = pa.concat_tables([pa.table({"a": [1]}), pa.table({"a": [2]})])
    message = "Writing chunked arrays not supported in Feather V1"
    with pytest.raises(pa.ArrowInvalid, match=message):
        _pyarrow_writes_v1(table, tmp_path / "theirs.feather")
    with pytest.raises(ArrowInvalid, match=message):
        feather.write_feather(arrowipc.table(table), str(tmp_path / "ours.feather"), version=1)
    assert not (tmp_path / "ours.feather").exists()


@pytest.mark.parametrize("kwargs,message", [
    (dict(compression="lz4"), "Feather V1 files do not support compression option"),
    (dict(compression="uncompressed"), "Feather V1 files do not support compression option"),
    (dict(chunksize=5), "Feather V1 files do not support chunksize option"),
])
def test_v1_options_are_refused_as_by_pyarrow(tmp_path, kwargs, message):
    with pytest.raises(ValueError, match=message):
        pf.write_feather(pa.table({"a": [1]}), tmp_path / "theirs.feather", version=1,
                         **kwargs)
    with pytest.raises(ValueError, match=message):
        feather.write_feather(arrowipc.table({"a": [1]}), str(tmp_path / "ours.feather"),
                              version=1, **kwargs)


def test_duplicate_names_are_refused_in_v1(tmp_path):
    table = arrowipc.table(pa.table([[1], [2]], names=["a", "a"]))
    with pytest.raises(ValueError, match="cannot serialize duplicate column names"):
        feather.write_feather(table, str(tmp_path / "ours.feather"), version=1)


def test_v1_writes_to_a_file_object(tmp_path):
    import io
    sink = io.BytesIO()
    feather.write_feather(arrowipc.table({"a": [1, 2], "s": ["x", None]}), sink, version=1)
    assert pa.table(feather.read_table(sink.getvalue())).equals(
        pa.table({"a": [1, 2], "s": ["x", None]}))
    assert pf.read_table(pa.BufferReader(sink.getvalue())).to_pydict() == {"a": [1, 2],
                                                                          "s": ["x", None]}


def test_files_of_feather_before_0_3_have_unpadded_buffers():
    # CTable.version 1 (Feather < 0.3): the bitmap and offsets are not padded to 8 bytes. A string
    # column ["ab", None, "c"]: bitmap 1 byte, offsets 16 bytes, values 3 bytes, back to back.
    import struct
    import feather_v1_craft as craft
    body = bytes([0b101]) + struct.pack("<4i", 0, 2, 2, 3) + b"abc"
    col = {"name": "s", "values": dict(type=craft.UTF8, offset=8, length=3, null_count=1,
                                       total_bytes=len(body))}
    data = craft.v1_file(body, [col], 3, version=1)
    assert pa.table(feather.read_table(data)).equals(pf.read_table(pa.BufferReader(data)))
    assert feather.read_table(data).to_pydict() == {"s": ["ab", None, "c"]}
