"""Malformed arrays (as IPC input can hold) raise ArrowInvalid from to_pandas, never crash."""
from __future__ import annotations

import struct

import pytest

import arrowipc
from arrowipc._core.arraydata import ArrayData
from arrowipc.array import make_array


def _buf(data: bytes):
    return arrowipc.py_buffer(data)


def test_short_values_buffer():
    bad = make_array(ArrayData(arrowipc.int64(), 10, 0, 0, [None, _buf(bytes(8))]))
    with pytest.raises(arrowipc.ArrowInvalid, match=r"int64 values buffer of 8 bytes is too "
                       r"short for elements \[0, 10\)"):
        bad.to_pandas()                              # the zero-copy view
    table = arrowipc.RecordBatch.from_arrays([bad, arrowipc.array([1.0] * 10)], names=["a", "b"])
    with pytest.raises(arrowipc.ArrowInvalid, match=r"elements \[0, 0\+10\) of 8 bytes need 80 "
                       r"bytes but the buffer has 8"):
        table.to_pandas()                            # the copy into a block


def test_short_validity_bitmap():
    bad = make_array(ArrayData(arrowipc.int32(), 20, 0, 3, [_buf(b"\xff"), _buf(bytes(80))]))
    with pytest.raises(arrowipc.ArrowInvalid, match="validity bitmap"):
        bad.to_pandas()


def test_string_offsets_outside_data():
    offsets = struct.pack("<3i", 0, 2, 50)
    bad = make_array(ArrayData(arrowipc.binary(), 2, 0, 0, [None, _buf(offsets), _buf(b"abcd")]))
    with pytest.raises(arrowipc.ArrowInvalid, match=r"offsets buffer: value 1 spans \[2, 50\) "
                       r"outside the data buffer of 4 bytes"):
        bad.to_pandas()


def test_decreasing_string_offsets():
    offsets = struct.pack("<3i", 0, 3, 1)
    bad = make_array(ArrayData(arrowipc.string(), 2, 0, 0, [None, _buf(offsets), _buf(b"abcd")]))
    with pytest.raises(arrowipc.ArrowInvalid):
        bad.to_pandas()          # checked before pandas' Arrow-backed strings get the buffers
    import pandas as pd
    python_str = pd.StringDtype("python", na_value=float("nan"))
    with pytest.raises(arrowipc.ArrowInvalid, match=r"value 1 spans \[3, 1\)"):
        bad.to_pandas(types_mapper=lambda t: python_str)


def test_invalid_utf8():
    offsets = struct.pack("<2i", 0, 2)
    bad = make_array(ArrayData(arrowipc.string(), 1, 0, 0, [None, _buf(offsets), _buf(b"\xff\xfe")]))
    import pandas as pd
    python_str = pd.StringDtype("python", na_value=float("nan"))
    with pytest.raises(arrowipc.ArrowInvalid, match="string array holds invalid UTF-8"):
        bad.to_pandas(types_mapper=lambda t: python_str)


def test_dictionary_index_outside_dictionary():
    dictionary = arrowipc.array(["a", "b"]).data
    t = arrowipc.dictionary(arrowipc.int8(), arrowipc.string())
    bad = make_array(ArrayData(t, 2, 0, 0, [None, _buf(bytes([0, 7]))], [], dictionary))
    with pytest.raises(arrowipc.ArrowInvalid, match="dictionary index outside the dictionary of "
                       "2 values"):
        bad.to_pandas()


def test_list_offsets_outside_child():
    child = arrowipc.array([1, 2, 3]).data
    offsets = struct.pack("<3i", 0, 2, 9)
    bad = make_array(ArrayData(arrowipc.list_(arrowipc.int64()), 2, 0, 0,
                               [None, _buf(offsets)], [child]))
    with pytest.raises(arrowipc.ArrowInvalid, match="offsets point outside the child array of "
                       "length 3"):
        bad.to_pandas()


def test_run_ends_not_increasing():
    ends = arrowipc.array([3, 2], type=arrowipc.int32()).data
    values = arrowipc.array([1, 2]).data
    t = arrowipc.run_end_encoded(arrowipc.int32(), arrowipc.int64())
    bad = make_array(ArrayData(t, 3, 0, 0, [], [ends, values]))
    with pytest.raises(arrowipc.ArrowInvalid, match="run ends must be positive and strictly "
                       "increasing"):
        bad.to_pandas()


def test_bad_pandas_metadata():
    schema = arrowipc.schema([("a", arrowipc.int64())], metadata={"pandas": "{not json"})
    t = arrowipc.Table.from_arrays([arrowipc.array([1])], schema=schema)
    with pytest.raises(arrowipc.ArrowInvalid, match="schema metadata 'pandas' is not valid JSON"):
        t.to_pandas()
    assert t.to_pandas(ignore_metadata=True)["a"].tolist() == [1]


def test_table_without_batches():
    import pyarrow as pa
    schema = arrowipc.schema([("i", arrowipc.int64()), ("s", arrowipc.string()),
                              ("d", arrowipc.dictionary(arrowipc.int8(), arrowipc.string()))])
    from pandas_oracle import assert_same
    assert_same(arrowipc.Table(schema, []).to_pandas(), pa.schema(schema).empty_table().to_pandas())


def test_dictionary_index_outside_one_of_several_dictionaries():
    t = arrowipc.dictionary(arrowipc.int8(), arrowipc.string())
    good = make_array(ArrayData(t, 1, 0, 0, [None, _buf(bytes([0]))], [],
                                arrowipc.array(["a"]).data))
    bad = make_array(ArrayData(t, 2, 0, 0, [None, _buf(bytes([1, 5]))], [],
                               arrowipc.array(["b", "c"]).data))
    column = arrowipc.chunked_array([good, bad])
    with pytest.raises(arrowipc.ArrowInvalid, match="dictionary index outside the dictionary of "
                       "2 values"):
        column.to_pandas()
    # a null slot may hold any index
    valid_bits = _buf(bytes([0b01]))
    nulls = make_array(ArrayData(t, 2, 0, 1, [valid_bits, _buf(bytes([1, 99]))], [],
                                 arrowipc.array(["b", "c"]).data))
    assert arrowipc.chunked_array([good, nulls]).to_pandas().tolist()[:2] == ["a", "c"]


_NULL_VIEW_WITH_NEGATIVE_LENGTH = """
import struct
import pyarrow  # noqa: F401  (pandas then keeps strings in Arrow memory, cast by pyarrow)
import arrowipc
from arrowipc._core.arraydata import ArrayData
from arrowipc.array import make_array
views = struct.pack("<i12s", 2, b"ab") + struct.pack("<i12s", -2**31, bytes(12))
data = ArrayData(arrowipc.string_view(), 2, 0, 1,
                 [arrowipc.py_buffer(b"\\x01"), arrowipc.py_buffer(views)])
array = make_array(data)
array.validate(full=True)          # valid: a null slot's view may hold anything
print(array.to_pandas().tolist())
"""


def test_string_view_with_any_bytes_in_a_null_slot_view():
    # A mutated binary_view.arrow_file (mutation fuzzing): the view of a null slot claims
    # -2**31 bytes. pyarrow 26's string_view -> large_string cast, which pandas runs on the
    # Arrow strings it is handed, reads that view and crashes; the views are now cast by
    # arrowipc, which skips null slots. In a child process: the crash would end pytest.
    import os
    import subprocess
    import sys
    pytest.importorskip("pyarrow")
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    done = subprocess.run([sys.executable, "-c", _NULL_VIEW_WITH_NEGATIVE_LENGTH],
                          capture_output=True, text=True, timeout=120,
                          env=dict(os.environ, PYTHONPATH=root))
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "['ab', nan]"          # pandas' str dtype: NaN for nulls


def test_binary_views_reach_arrow_backed_pandas_as_binary_not_strings():
    # The views are cast by arrowipc before pandas gets them (see above): binary views to
    # large_binary (bytes that are not UTF-8 must pass), string views to large_string; pandas'
    # dtypes and values are pyarrow's.
    pd = pytest.importorskip("pandas")
    pa = pytest.importorskip("pyarrow")
    table = pa.table({"b": pa.array([b"\xff\xfe", None, b"long enough to be out of line"],
                                    pa.binary_view()),
                      "s": pa.array(["a", None, "ünïcode, long enough to be out of line"],
                                    pa.string_view())})
    ours = arrowipc.table(table).to_pandas(types_mapper=pd.ArrowDtype)
    theirs = table.to_pandas(types_mapper=pd.ArrowDtype)
    assert ours.dtypes.to_dict() == theirs.dtypes.to_dict()
    for name in ("b", "s"):
        assert pa.array(ours[name].array).to_pylist() == pa.array(theirs[name].array).to_pylist()
