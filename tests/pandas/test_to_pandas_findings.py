"""to_pandas defects a probe found, each checked against pyarrow 26 (the oracle)."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.ipc as pipc
import pytest

import arrowipc
import arrowipc.ipc as aipc


def _stream(t: pa.Table) -> bytes:
    sink = pa.BufferOutputStream()
    with pipc.new_stream(sink, t.schema) as w:
        w.write_table(t)
    return sink.getvalue().to_pybytes()


def _null_chunk_empty_dictionary(index: int = 0) -> pa.DictionaryArray:
    """Two null slots (one holding `index`) over an empty dictionary: valid Arrow data."""
    idx = pa.Array.from_buffers(pa.int32(), 2, [pa.py_buffer(bytes([0])),
                                                pa.py_buffer(np.array([0, index], "i4").tobytes())])
    return pa.DictionaryArray.from_arrays(idx, pa.array([], pa.string()))


_D0 = pa.DictionaryArray.from_arrays(pa.array([0], pa.int32()), pa.array(["d0"]))


# -- 1. a chunk of nulls over an empty dictionary ---------------------------------------------

@pytest.mark.parametrize("index", [0, 7])
@pytest.mark.parametrize("null_first", [True, False])
def test_empty_dictionary_chunk_table(index, null_first):
    chunks = [_null_chunk_empty_dictionary(index), _D0]
    t = pa.table({"d": pa.chunked_array(chunks if null_first else chunks[::-1])})
    pd.testing.assert_frame_equal(arrowipc.table(t).to_pandas(), t.to_pandas())


@pytest.mark.parametrize("null_first", [True, False])
def test_empty_dictionary_chunk_chunked_array(null_first):
    chunks = [_null_chunk_empty_dictionary(), _D0]
    c = pa.chunked_array(chunks if null_first else chunks[::-1])
    pd.testing.assert_series_equal(arrowipc.chunked_array(c).to_pandas(), c.to_pandas())


def test_empty_dictionary_chunk_read_pandas():
    t = pa.table({"d": pa.chunked_array([_null_chunk_empty_dictionary(), _D0])})
    data = _stream(t)
    pd.testing.assert_frame_equal(aipc.open_stream(data).read_pandas(),
                                  pipc.open_stream(data).read_pandas())


def test_empty_dictionary_chunk_valid_index_still_refused():
    # a valid index past an empty dictionary is still malformed data
    bad = pa.Array.from_buffers(pa.int32(), 1, [None, pa.py_buffer(np.array([0], "i4").tobytes())])
    empty = pa.DictionaryArray.from_arrays(bad, pa.array([], pa.string()), safe=False)
    c = pa.chunked_array([empty, _D0])
    with pytest.raises(arrowipc.ArrowInvalid, match="outside the dictionary of 0 values"):
        arrowipc.chunked_array(c).to_pandas()


# -- 2. timestamp_as_object on a Series --------------------------------------------------------

@pytest.mark.parametrize("tz", [None, "UTC", "Asia/Tokyo"])
@pytest.mark.parametrize("unit", ["s", "ms", "us"])
def test_series_timestamp_as_object(unit, tz):
    c = pa.chunked_array([pa.array([0, None, 86_400], pa.timestamp(unit, tz))])
    pd.testing.assert_series_equal(arrowipc.chunked_array(c).to_pandas(timestamp_as_object=True),
                                   c.to_pandas(timestamp_as_object=True))
    pd.testing.assert_series_equal(
        arrowipc.array(c.chunk(0)).to_pandas(timestamp_as_object=True),
        c.chunk(0).to_pandas(timestamp_as_object=True))


# -- 3. zero_copy_only -------------------------------------------------------------------------

def _dict(values):
    return pa.array(values, pa.string()).dictionary_encode()


_NO_DATA_COLUMNS = {
    "index_only": lambda: pa.Table.from_pandas(pd.DataFrame(index=pd.Index([1, 2], name="idx"))),
    "range_index_only": lambda: pa.Table.from_pandas(pd.DataFrame(index=pd.RangeIndex(3))),
    "no_columns": lambda: pa.table({}),
}


@pytest.mark.parametrize("split_blocks", [False, True])
@pytest.mark.parametrize("case", sorted(_NO_DATA_COLUMNS))
def test_zero_copy_without_data_columns(case, split_blocks):
    t = _NO_DATA_COLUMNS[case]()
    pd.testing.assert_frame_equal(
        arrowipc.table(t).to_pandas(zero_copy_only=True, split_blocks=split_blocks),
        t.to_pandas(zero_copy_only=True, split_blocks=split_blocks))


_REFUSED = {
    "categorical_zero_rows": lambda: pa.table({"d": _dict([])}),
    "categorical": lambda: pa.table({"d": _dict(["a", "b"])}),
    "categorical_with_null": lambda: pa.table({"d": _dict(["a", None])}),
    "categorical_two_chunks": lambda: pa.table({"d": pa.chunked_array([_dict(["a", None]),
                                                                       _dict([None])])}),
    "categorical_then_int": lambda: pa.table({"d": _dict(["a", None]), "i": [1, 2]}),
    "int_then_categorical": lambda: pa.table({"i": [1, 2], "d": _dict(["a", None])}),
    "int": lambda: pa.table({"i": [1, 2]}),
}


@pytest.mark.parametrize("split_blocks", [False, True])
@pytest.mark.parametrize("case", sorted(_REFUSED))
def test_zero_copy_refusal_message(case, split_blocks):
    t = _REFUSED[case]()
    try:
        t.to_pandas(zero_copy_only=True, split_blocks=split_blocks)
    except pa.ArrowInvalid as e:
        expected = str(e)
    else:
        expected = None
    if expected is None:
        arrowipc.table(t).to_pandas(zero_copy_only=True, split_blocks=split_blocks)
        return
    with pytest.raises(arrowipc.ArrowInvalid) as got:
        arrowipc.table(t).to_pandas(zero_copy_only=True, split_blocks=split_blocks)
    assert str(got.value) == expected


@pytest.mark.parametrize("unit", ["s", "ns"])
def test_zero_copy_time_zone_column(unit):
    t = pa.table({"t": pa.array([1, 2], pa.timestamp(unit, "UTC"))})
    pd.testing.assert_frame_equal(
        arrowipc.table(t).to_pandas(zero_copy_only=True, split_blocks=True),
        t.to_pandas(zero_copy_only=True, split_blocks=True))
    pd.testing.assert_series_equal(arrowipc.table(t)["t"].to_pandas(zero_copy_only=True),
                                   t["t"].to_pandas(zero_copy_only=True))


# -- 4. categories= ---------------------------------------------------------------------------

_CATEGORY_CASES = {
    "int64_all_null": lambda: pa.array([None, None], pa.int64()),
    "duration_ms": lambda: pa.array([0, 5], pa.duration("ms")),
    "timestamp_tz": lambda: pa.array([0, 86_400], pa.timestamp("s", "Asia/Tokyo")),
    "null": lambda: pa.nulls(2),
    "struct": lambda: pa.array([{"a": 1}], pa.struct([("a", pa.int32())])),
    "list": lambda: pa.array([[1.0]], pa.list_(pa.float32())),
    "time64_ns": lambda: pa.array([1001], pa.time64("ns")),
    "bool": lambda: pa.array([True, None]),
}


@pytest.mark.parametrize("case", sorted(_CATEGORY_CASES))
def test_categories_option(case):
    t = pa.table({"x": _CATEGORY_CASES[case]()})
    try:
        expected = t.to_pandas(categories=["x"])
    except Exception as e:                  # noqa: BLE001   pyarrow's refusal is the oracle
        with pytest.raises(Exception) as got:
            arrowipc.table(t).to_pandas(categories=["x"])
        assert (type(got.value).__name__, str(got.value)) == (type(e).__name__, str(e))
        return
    pd.testing.assert_frame_equal(arrowipc.table(t).to_pandas(categories=["x"]), expected)


# -- an extension dtype (types_mapper, the pandas metadata) wins over categorical options -----

_EXT_FRAME = pd.DataFrame({
    "a": pd.array(["x", None, "x"], dtype="large_string[pyarrow]"),
    "b": pd.array(["y", "z", None], dtype="string"),
    "c": ["p", "q", "p"],
    "d": pd.array([1, 2, None], dtype="int64[pyarrow]"),
})


@pytest.mark.parametrize("kw", [
    {"strings_to_categorical": True},
    {"categories": ["a", "b", "c", "d"]},
    {"types_mapper": pd.ArrowDtype, "strings_to_categorical": True},
    {"types_mapper": pd.ArrowDtype, "categories": ["c"]},
], ids=["strings", "categories", "mapper-strings", "mapper-categories"])
def test_extension_dtype_before_categorical(kw):
    expected = pa.Table.from_pandas(_EXT_FRAME).to_pandas(**kw)
    got = arrowipc.Table.from_pandas(_EXT_FRAME).to_pandas(**kw)
    pd.testing.assert_frame_equal(got, expected)
    assert got.dtypes.to_dict() == expected.dtypes.to_dict()


@pytest.mark.parametrize("mapper", [pd.ArrowDtype, None])
def test_extension_dtype_before_categorical_column(mapper):
    expected = pa.chunked_array([["x", None, "x"]]).to_pandas(
        types_mapper=mapper, strings_to_categorical=True)
    got = arrowipc.chunked_array([["x", None, "x"]]).to_pandas(
        types_mapper=mapper, strings_to_categorical=True)
    pd.testing.assert_series_equal(got, expected)
