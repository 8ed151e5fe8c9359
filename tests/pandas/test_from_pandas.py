"""from_pandas() gives pyarrow's schema (types and `pandas` metadata) and values, and both
libraries read the result back into the same DataFrame."""
from __future__ import annotations

import datetime
import decimal
import json

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

import arrowipc
from pandas_oracle import assert_same


def _frames():
    rng = np.random.default_rng(7)
    n = 12
    yield "numbers", pd.DataFrame({
        "i8": rng.integers(-100, 100, n).astype("int8"),
        "u32": rng.integers(0, 1000, n).astype("uint32"),
        "i64": rng.integers(-2**62, 2**62, n),
        "f32": rng.standard_normal(n).astype("float32"),
        "f64": np.where(rng.random(n) < 0.3, np.nan, rng.standard_normal(n)),
        "b": rng.random(n) < 0.5,
    })
    yield "strings", pd.DataFrame({
        "s": pd.array(["a", None, "ccc", "é😀"] * 3, dtype="str"),
        "obj_s": pd.Series(["x", None, "y", np.nan] * 3, dtype=object),
        "bytes": pd.Series([b"a", None, b"\x00\xff"] * 4, dtype=object),
        "py_str": pd.Series(["p", "q", "r"] * 4, dtype="string[python]"),
    })
    yield "temporal", pd.DataFrame({
        "ts_ns": pd.to_datetime(["2020-01-01 00:00:00", None, "1999-12-31 23:59:59.123456789"] * 4, format="ISO8601").as_unit("ns"),
        "ts_s": pd.Series(np.array([0, 86400, -5] * 4, dtype="datetime64[s]")),
        "tz": pd.to_datetime(["2020-01-01", None, "2021-06-01"] * 4).tz_localize("Europe/Paris"),
        "utc": pd.to_datetime(["2020-01-01", "2020-02-01", None] * 4, utc=True),
        "td": pd.to_timedelta([1, None, -3] * 4, unit="s"),
        "date": pd.Series([datetime.date(2020, 1, 1), None, datetime.date(1, 1, 1)] * 4,
                          dtype=object),
        "time": pd.Series([datetime.time(1, 2, 3), None, datetime.time(23, 59)] * 4, dtype=object),
        "pydt": pd.Series([datetime.datetime(2020, 1, 1, 5), None, datetime.datetime(3000, 1, 1)] * 4,
                          dtype=object),
    })
    yield "objects", pd.DataFrame({
        "dec": pd.Series([decimal.Decimal("1.25"), None, decimal.Decimal("-100.5")] * 4),
        "lists": pd.Series([[1, 2], None, []] * 4),
        "structs": pd.Series([{"a": 1, "b": "x"}, None, {"a": None, "b": "y"}] * 4),
        "nested": pd.Series([[[1.5]], [], None] * 4),
        "mixed_num": pd.Series([1, 2.5, None] * 4, dtype=object),
        "bools": pd.Series([True, None, False] * 4, dtype=object),
        "all_none": pd.Series([None] * 12, dtype=object),
    })
    yield "extension", pd.DataFrame({
        "Int64": pd.array([1, None, 3] * 4, dtype="Int64"),
        "UInt8": pd.array([1, None, 3] * 4, dtype="UInt8"),
        "Float64": pd.array([1.5, None, 3] * 4, dtype="Float64"),
        "boolean": pd.array([True, None, False] * 4, dtype="boolean"),
        "cat": pd.Categorical(["a", "b", None, "a"] * 3),
        "cat_ord": pd.Categorical([3, 1, 2] * 4, categories=[3, 2, 1], ordered=True),
    })


FRAMES = dict(_frames())


def _meta(schema):
    md = json.loads(schema.metadata[b"pandas"])
    md.pop("creator")
    return md


def _compare(df, via_stream=True, **kwargs):
    expected = pa.Table.from_pandas(df, **kwargs)
    got = arrowipc.Table.from_pandas(df, **kwargs)
    got_pa = pa.table(got)
    assert got_pa.schema.remove_metadata() == expected.schema.remove_metadata()
    assert _meta(got_pa.schema) == _meta(expected.schema)
    assert json.loads(got.schema.metadata[b"pandas"])["creator"] == {
        "library": "arrowipc", "version": arrowipc.__version__}
    assert got_pa.to_pylist() == expected.to_pylist()
    # both libraries read ours back into the DataFrame pyarrow reads its own back into
    assert_same(got_pa.to_pandas(), expected.to_pandas())
    assert_same(got.to_pandas(), expected.to_pandas())
    if not via_stream:
        return got
    # and pyarrow's own metadata is honoured by arrowipc's to_pandas
    assert_same(arrowipc.table(expected).to_pandas(), expected.to_pandas())
    assert_same(arrowipc.table(expected).to_pandas(ignore_metadata=True),
                expected.to_pandas(ignore_metadata=True))
    return got


@pytest.mark.parametrize("name", list(FRAMES))
def test_frames_match_pyarrow(name):
    _compare(FRAMES[name])


@pytest.mark.parametrize("name", list(FRAMES))
def test_record_batch_and_schema(name):
    df = FRAMES[name]
    got = arrowipc.RecordBatch.from_pandas(df)
    expected = pa.RecordBatch.from_pandas(df)
    assert pa.record_batch(got).schema.remove_metadata() == expected.schema.remove_metadata()
    assert _meta(arrowipc.Schema.from_pandas(df)) == _meta(pa.Schema.from_pandas(df))
    assert pa.Schema.from_pandas(df).remove_metadata() == \
        pa.schema(arrowipc.Schema.from_pandas(df)).remove_metadata()


@pytest.mark.parametrize("column", [
    pd.Categorical(np.array([], dtype="<U1")),                 # pandas' str dtype: null values
    pd.Categorical(pd.array([], dtype="string")),
    pd.Categorical(np.array([], dtype=object)),
    pd.Categorical(pd.array([], dtype="Int64")),
    pd.Categorical([], categories=["a", "b"]),
    pd.Series([], dtype="str"),                                # backed by zero pyarrow chunks
], ids=["str", "string", "object", "Int64", "declared", "plain-str"])
def test_empty_columns(column):
    # pyarrow's C stream leaves out empty batches, and with them an empty column's declared
    # categories: through the stream neither library can see them
    _compare(pd.DataFrame({"c": column}), via_stream=len(getattr(column, "categories", ())) == 0)


@pytest.mark.parametrize("preserve_index", [None, True, False])
@pytest.mark.parametrize("index", [
    pd.RangeIndex(3, 15, name="r"),
    pd.RangeIndex(0, 24, 2),
    pd.Index(list("abcdefghijkl"), name="letters"),
    pd.Index(np.arange(12) * 3),
    pd.MultiIndex.from_arrays([np.arange(12), list("abcdefghijkl")], names=["n", None]),
    pd.DatetimeIndex(pd.date_range("2020-01-01", periods=12, tz="UTC"), name="when"),
])
def test_indexes(index, preserve_index):
    df = pd.DataFrame({"v": np.arange(12.0), "w": list("xyzxyzxyzxyz")}, index=index)
    _compare(df, preserve_index=preserve_index)


def test_column_names_and_column_index():
    df = pd.DataFrame({"a": [1, 2], "b": [3, 4]})
    df.columns = pd.MultiIndex.from_tuples([("A", "x"), ("B", "y")], names=["L0", "L1"])
    _compare(df)
    df2 = pd.DataFrame({1: [1, 2], 2: [3, 4]})
    _compare(df2)
    df3 = pd.DataFrame({"a": [1]})
    df3.columns.name = "cols"
    df3.attrs = {"source": "test"}
    _compare(df3)


def test_schema_and_columns_arguments():
    df = pd.DataFrame({"a": [1, 2], "b": ["x", "y"], "c": [1.5, 2.5]})
    sch_pa = pa.schema([("c", pa.float32()), ("a", pa.int32())])
    expected = pa.Table.from_pandas(df, schema=sch_pa)
    got = pa.table(arrowipc.Table.from_pandas(df, schema=arrowipc.schema(sch_pa)))
    assert got.schema.remove_metadata() == expected.schema.remove_metadata()
    assert got.to_pylist() == expected.to_pylist()
    assert _meta(got.schema) == _meta(expected.schema)
    expected = pa.Table.from_pandas(df, columns=["b", "a"])
    got = pa.table(arrowipc.Table.from_pandas(df, columns=["b", "a"]))
    assert got.schema.remove_metadata() == expected.schema.remove_metadata()
    assert _meta(got.schema) == _meta(expected.schema)


def test_schema_argument_may_be_pyarrows():
    # a drop-in caller passes pyarrow's schema (it used to fail: TypeError or AttributeError)
    df = pd.DataFrame({"a": [1, 2], "b": ["x", None], "c": [1.5, 2.5],
                       "d": pd.Series([[1], None], dtype=object)})
    sch_pa = pa.schema([("c", pa.float32()), ("a", pa.int32()), ("d", pa.list_(pa.int8()))])
    for cls, pa_cls in ((arrowipc.Table, pa.Table), (arrowipc.RecordBatch, pa.RecordBatch)):
        expected = pa_cls.from_pandas(df, schema=sch_pa)
        assert cls.from_pandas(df, schema=sch_pa).equals(expected)
    with pytest.raises(TypeError, match="schema must be a Schema"):
        arrowipc.Table.from_pandas(df, schema="c")


def test_table_and_record_batch_functions_take_dataframes():
    df = FRAMES["numbers"]
    assert pa.table(arrowipc.table(df)).equals(pa.Table.from_pandas(df))
    assert pa.record_batch(arrowipc.record_batch(df)).equals(pa.RecordBatch.from_pandas(df))


@pytest.mark.parametrize("values", [[1, "x"], ["x", 1], [[1], 2], [2.5, "x"], [True, 1],
                                    [{"a": 1}, 1], ["x", b"y", 1]], ids=repr)
def test_mixed_object_column_raises_like_pyarrow(values):
    # the same exception class as pyarrow's (ValueError or TypeError), and the same message
    df = pd.DataFrame({"o": pd.Series(values, dtype=object)})
    with pytest.raises(pa.ArrowException) as expected:
        pa.Table.from_pandas(df)
    error = arrowipc.ArrowInvalid if isinstance(expected.value, ValueError) else \
        arrowipc.ArrowTypeError
    with pytest.raises(error) as got:
        arrowipc.Table.from_pandas(df)
    assert got.value.args == expected.value.args
    assert got.value.args[-1] == "Conversion failed for column o with type object"


@pytest.mark.parametrize("values", [
    [np.array([1, 2], dtype="int32"), None], [np.array([1.5, np.nan], dtype="float32")],
    [np.arange(0), None], [np.array([], dtype="float32")], [np.array([], dtype="U1")],
    [np.array([], dtype="bool"), None], [np.array([1], dtype="int8"), [3]],
], ids=repr)
def test_numpy_arrays_in_object_columns_keep_their_dtype(values):
    # pyarrow types the lists by the arrays' dtype (even when they are empty)
    df = pd.DataFrame({"x": pd.Series(values, dtype=object)})
    expected = pa.Table.from_pandas(df)
    got = arrowipc.Table.from_pandas(df)
    assert got.schema.field("x").type == expected.schema.field("x").type
    assert got.equals(expected)
    assert arrowipc.array(values).type == pa.array(values).type


@pytest.mark.parametrize("dtype", [pd.StringDtype("python"),
                                   pd.StringDtype("python", na_value=np.nan)], ids=str)
def test_python_strings_without_values_are_strings(dtype):
    # the dtype says string even when no value does (all null, or empty)
    for values in ([None, None], []):
        s = pd.Series(values, dtype=dtype)
        expected = pa.Table.from_pandas(pd.DataFrame({"x": s}))
        assert arrowipc.Table.from_pandas(pd.DataFrame({"x": s})).equals(expected)
        assert arrowipc.array(s).type == pa.array(s).type == pa.string()


def test_duplicate_columns_raise():
    df = pd.DataFrame([[1, 2]], columns=["a", "a"])
    with pytest.raises(ValueError, match=r"Duplicate column names found: \['a', 'a'\]"):
        arrowipc.Table.from_pandas(df)


def test_zero_copy_numbers():
    values = np.arange(10, dtype="int64")
    floats = np.array([1.5, np.nan, 3.0])
    arr = arrowipc.Array.from_pandas(pd.Series(values, copy=False))
    assert arr.buffers()[1].address == values.__array_interface__["data"][0]   # not copied
    farr = arrowipc.Array.from_pandas(pd.Series(floats, copy=False))
    assert farr.buffers()[1].address == floats.__array_interface__["data"][0]
    assert farr.null_count == 1


def test_array_from_pandas():
    s = pd.Series([1.5, np.nan, 3.0])
    assert pa.array(arrowipc.Array.from_pandas(s)).equals(pa.Array.from_pandas(s))
    assert pa.array(arrowipc.array(s)).equals(pa.array(s))


@pytest.mark.parametrize("name", list(FRAMES))
def test_ipc_file_round_trip_through_pyarrow(name, tmp_path):
    """from_pandas, written by arrowipc to an IPC file, read back by pyarrow: the DataFrame
    pyarrow gets is the one it gets from its own file (and arrowipc's read_pandas agrees)."""
    df = FRAMES[name].set_index(pd.Index(np.arange(len(FRAMES[name])) * 2, name="k"))
    path = tmp_path / "frame.arrow"
    ours_table = arrowipc.Table.from_pandas(df)
    with arrowipc.ipc.new_file(str(path), ours_table.schema) as w:
        w.write_table(ours_table)
    back = pa.ipc.open_file(str(path)).read_pandas()
    assert_same(back, pa.Table.from_pandas(df).to_pandas())
    assert_same(arrowipc.ipc.open_file(str(path)).read_pandas(), back)
    if name == "numbers":
        assert_same(back, df)          # these round-trip exactly


def test_stream_reader_read_pandas():
    df = FRAMES["numbers"]
    table = pa.Table.from_pandas(df)
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, table.schema) as w:
        w.write_table(table, max_chunksize=5)
    data = sink.getvalue().to_pybytes()
    assert_same(arrowipc.ipc.open_stream(data).read_pandas(), pa.ipc.open_stream(data).read_pandas())
    assert_same(arrowipc.ipc.open_stream(data).read_pandas(split_blocks=True), df)


def test_array_from_pandas_mask_and_type():
    s = pd.Series([1, 2, 3])
    mask = np.array([False, True, False])
    got = pa.array(arrowipc.Array.from_pandas(s, mask=mask, type=arrowipc.int32()))
    assert got.equals(pa.Array.from_pandas(s, mask=mask, type=pa.int32()))


CASES_FROM_FRAMES = [c for c in __import__("strategies").ISSUE2_CASE_IDS
                     if c not in ("month_interval", "day_time_interval",
                                  "large_list_of_fixed_size_binary")]


@pytest.mark.parametrize("case", CASES_FROM_FRAMES)
def test_frames_pyarrow_made_from_every_type(case):
    """The DataFrames pyarrow's to_pandas makes from every type, back through from_pandas:
    the same inferred types, values and metadata as pyarrow (or pyarrow's error)."""
    from strategies import make_table
    df = make_table([case], [9, 6], seed=11, null_ratio=0.3).to_pandas()
    try:
        expected = pa.Table.from_pandas(df)
    except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError):
        with pytest.raises((arrowipc.ArrowInvalid, arrowipc.ArrowTypeError,
                            arrowipc.ArrowNotImplementedError)):
            arrowipc.Table.from_pandas(df)
        return
    got = pa.table(arrowipc.Table.from_pandas(df))
    assert got.schema.remove_metadata() == expected.schema.remove_metadata()
    assert _meta(got.schema) == _meta(expected.schema)
    assert got.to_pylist() == expected.to_pylist()


@pytest.mark.parametrize("frame", [
    pd.DataFrame({"x": pd.Categorical(["a", "b"])}, index=pd.CategoricalIndex(["p", "q"])),
    pd.DataFrame({"a": [1, 2]}, index=pd.Index([1.5, 2.5], name="f")),
    pd.DataFrame({"a": [1, 2]}, index=pd.Index([pd.Timestamp("2020-01-01"),
                                                pd.Timestamp("2021-01-01")], name="when")),
    pd.DataFrame([[1, 2]], columns=pd.Index([pd.Timestamp("2020-01-01", tz="UTC"),
                                             pd.Timestamp("2021-01-01", tz="UTC")])),
    pd.DataFrame([[1, 2]], columns=pd.Index([1.5, 2.5])),
])
def test_more_index_and_column_kinds(frame):
    _compare(frame)


def test_sliced_table_with_range_index_metadata():
    expected = pa.Table.from_pandas(pd.DataFrame({"a": [1, 2, 3]})).slice(1)
    assert_same(arrowipc.table(expected).to_pandas(), expected.to_pandas())


def test_schema_pandas_metadata():
    df = pd.DataFrame({"a": [1, 2]}, index=pd.Index(["x", "y"], name="k"))
    ours_md = arrowipc.Table.from_pandas(df).schema.pandas_metadata
    pa_md = pa.Table.from_pandas(df).schema.pandas_metadata
    ours_md.pop("creator")
    pa_md.pop("creator")
    assert ours_md == pa_md
    assert arrowipc.schema([("a", arrowipc.int64())]).pandas_metadata is None


@pytest.mark.parametrize("index", [pd.RangeIndex(5), pd.RangeIndex(5, 15, 2),
                                   pd.Index(list("abcde"), name="k")], ids=repr)
@pytest.mark.parametrize("preserve_index", [None, True, False])
def test_frame_without_columns_has_pyarrows_number_of_rows(index, preserve_index):
    # no columns: pyarrow keeps the rows only through a RangeIndex stored as metadata, so
    # preserve_index=False (or a schema without fields) gives a table of no rows
    df = pd.DataFrame(index=index)
    for cls, pa_cls in ((arrowipc.Table, pa.Table), (arrowipc.RecordBatch, pa.RecordBatch)):
        expected = pa_cls.from_pandas(df, preserve_index=preserve_index)
        assert cls.from_pandas(df, preserve_index=preserve_index).num_rows == expected.num_rows
    expected = pa.Table.from_pandas(df, schema=pa.schema([]))
    assert arrowipc.Table.from_pandas(df, schema=arrowipc.schema([])).num_rows == expected.num_rows
    three = pd.DataFrame({"a": [1, 2, 3]}, index=index[:3])
    expected = pa.Table.from_pandas(three, columns=[], preserve_index=preserve_index)
    got = arrowipc.Table.from_pandas(three, columns=[], preserve_index=preserve_index)
    assert got.num_rows == expected.num_rows


@pytest.mark.parametrize("names", [[None], [np.nan], [None, "a"], [1.5, None], ["a", "b"], []],
                         ids=repr)
def test_column_index_with_missing_names_is_described_like_pyarrow(names):
    # pyarrow infers the column index's pandas_type without skipping missing names: [None] and
    # [None, "a"] are "mixed" (with its warning), not "empty" and "unicode"
    import warnings
    df = pd.DataFrame([[1] * len(names)], columns=pd.Index(names, dtype=object))
    with warnings.catch_warnings(record=True) as expected_warnings:
        warnings.simplefilter("always")
        expected = pa.Table.from_pandas(df).schema.pandas_metadata["column_indexes"]
    with warnings.catch_warnings(record=True) as got_warnings:
        warnings.simplefilter("always")
        got = arrowipc.Table.from_pandas(df).schema.pandas_metadata["column_indexes"]
    assert got == expected
    assert [str(w.message) for w in got_warnings] == [str(w.message) for w in expected_warnings]


@pytest.mark.parametrize("dtypes", [
    ["int32", "float64"], ["float64", "int32"], ["int32", "float32"], ["float32", "int32"],
    ["int16", "float32"], ["float32", "float16"], ["float64", "float32"], ["int8", "uint8"],
    ["int16", "uint8"], ["uint64", "int64"], ["bool", "int8"], ["float32", "bool"],
    ["int8", "float16"], ["int8", "int32", "float32"], ["uint8", "uint32", "float32"],
], ids="-".join)
@pytest.mark.parametrize("length", [0, 2])
def test_numpy_arrays_of_several_dtypes_unify_like_pyarrow(dtypes, length):
    # pyarrow unifies the arrays' dtypes, empty arrays included and in order (an empty float64
    # array among int32 ones makes list<double>), and refuses some mixes ("Cannot mix NumPy
    # dtypes int8 and uint8"); the values those arrays hold do not decide the type
    values = [np.arange(2).astype(dtypes[0])] + [np.arange(length).astype(d) for d in dtypes[1:]]
    values.insert(1, None)
    df = pd.DataFrame({"x": pd.Series(values, dtype=object)})
    try:
        expected_array, expected_table = pa.array(values), pa.Table.from_pandas(df)
    except pa.ArrowInvalid as e:
        with pytest.raises(arrowipc.ArrowInvalid) as got:
            arrowipc.array(values)
        assert str(got.value) == str(e)
        with pytest.raises(arrowipc.ArrowInvalid) as got:
            arrowipc.Table.from_pandas(df)
        assert got.value.args == (str(e), "Conversion failed for column x with type object")
        return
    got = arrowipc.array(values)
    assert got.type == expected_array.type
    assert got.to_pylist() == expected_array.to_pylist()
    assert arrowipc.Table.from_pandas(df).equals(expected_table)
