"""Binary and string values over 2 GiB in all are split into chunks where pyarrow splits them:
pa.array returns a ChunkedArray and Table.from_pandas a chunked column (pyarrow's own
test_feather.py::test_chunked_binary_error_message writes such a frame to Feather V2)."""
from __future__ import annotations

import io

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.feather
import pytest

import arrowipc
import arrowipc.feather
from arrowipc.array import (BINARY_CHUNK_LIMIT, binary_chunk_bounds, binary_chunk_data,
                            make_array)
from arrowipc.errors import ArrowCapacityError
from arrowipc.pandas_compat import from_pandas as fp

MIB = 1 << 20


def offsets_of(sizes):
    out = [0]
    for n in sizes:
        out.append(out[-1] + n)
    return out


@pytest.mark.parametrize("sizes, bounds", [
    # pa.array(['x' * 2**30, 'x' * (2**30 - 1), 'y']) has chunks of 1 and 2 values: the second
    # value would bring the first chunk to 2**31 - 1 bytes, one past BinaryBuilder's limit
    ([1 << 30, (1 << 30) - 1, 1], [0, 1, 3]),
    # pyarrow's test frame: 1 byte then 2048 values of 1 MiB split as 2048 + 1
    ([1] + [MIB] * 2048, [0, 2048, 2049]),
    # exactly at the limit: one chunk
    ([BINARY_CHUNK_LIMIT - 5, 5], [0, 2]),
    ([], [0, 0]),
])
def test_chunk_bounds_follow_pyarrow(sizes, bounds):
    assert BINARY_CHUNK_LIMIT == 2**31 - 2
    assert binary_chunk_bounds(offsets_of(sizes), arrowipc.string(), "array") == bounds
    assert binary_chunk_bounds(np.array(offsets_of(sizes), dtype="int64"),
                                arrowipc.string(), "array") == bounds


def test_chunk_bounds_with_a_small_limit():
    sizes = [3, 4, 0, 3, 1, 10, 2]
    assert binary_chunk_bounds(offsets_of(sizes), arrowipc.binary(), "array", limit=10) == \
        [0, 4, 5, 6, 7]


def test_a_single_value_over_the_limit_is_refused_with_its_index():
    with pytest.raises(ArrowCapacityError) as e:
        binary_chunk_bounds(offsets_of([4, 12, 1]), arrowipc.binary(), "from_pandas", limit=10)
    assert str(e.value) == ("from_pandas: value 1 is 12 bytes, more than one binary array holds "
                            "(10); use large_binary")


def test_object_strings_over_the_limit_come_as_chunks(monkeypatch):
    """The C string pass is split at the bounds (the limit lowered so the data stays small)."""
    monkeypatch.setattr(fp, "BINARY_CHUNK_LIMIT", 6)
    values = np.array(["abc", None, "dé", "f", "ghijk", "x"], dtype=object)
    chunks = fp.ndarray_to_array_data(values, arrowipc.string())
    assert isinstance(chunks, list)
    assert [make_array(c).to_pylist() for c in chunks] == [["abc", None, "dé"], ["f", "ghijk"],
                                                           ["x"]]
    assert all(c.type == arrowipc.string() for c in chunks)


def test_array_from_pandas_over_the_limit_is_a_chunked_array(monkeypatch):
    monkeypatch.setattr(fp, "BINARY_CHUNK_LIMIT", 6)
    series = pd.Series(np.array(["abc", None, "dé", "f", "ghijk", "x"], dtype=object),
                       dtype=object)
    got = arrowipc.Array.from_pandas(series)
    assert isinstance(got, arrowipc.ChunkedArray) and got.type == arrowipc.string()
    assert [c.to_pylist() for c in got.chunks] == [["abc", None, "dé"], ["f", "ghijk"], ["x"]]
    masked = arrowipc.Array.from_pandas(series, mask=np.array([0, 0, 1, 0, 0, 0], dtype=bool))
    assert masked.to_pylist() == ["abc", None, None, "f", "ghijk", "x"]
    assert arrowipc.Array.from_pandas(series[:2]).to_pylist() == ["abc", None]


@pytest.mark.parametrize("values", [
    np.array([b"ab", None, b"cde", b"f"], dtype=object),
    np.array(["ab", "cd", "é"]),
    np.ma.masked_array(np.array(["ab", "cd", "e"]), mask=[False, True, False]),
    [b"x", None, bytearray(b"yz")],
])
def test_chunk_data_takes_what_array_takes(values):
    """Under the limit, one chunk with pa.array's type and values (numpy arrays as the kernel
    takes them: their Python values, masked entries null)."""
    pieces = binary_chunk_data(values, None)
    want = pa.array(values)
    assert len(pieces) == 1
    assert str(pieces[0].type) == str(want.type)
    assert make_array(pieces[0]).to_pylist() == [
        bytes(v) if isinstance(v, bytearray) else v for v in want.to_pylist()]


def test_chunk_data_leaves_other_types_alone():
    assert binary_chunk_data(np.arange(3), None) is None
    assert binary_chunk_data([1, 2], None) is None
    assert binary_chunk_data(["a"], arrowipc.large_string()) is None
    assert binary_chunk_data("abc", None) is None


@pytest.mark.slow
def test_more_than_2gib_of_binary_is_chunked_like_pyarrow():
    """Needs about 4 GiB of memory at its peak (pyarrow's result is freed before ours is made)."""
    values = [b"x"] + [b"x" * MIB] * 2048       # one 1 MiB object, 2 GiB + 1 byte of data
    theirs = pa.array(values)
    want = (type(theirs).__name__, str(theirs.type), [len(c) for c in theirs.chunks])
    del theirs
    ours = arrowipc.array(values)
    assert (type(ours).__name__, str(ours.type), [len(c) for c in ours.chunks]) == want
    assert [len(c) for c in ours.chunks] == [2048, 1]
    del ours
    as_numpy = np.array(values, dtype=object)
    theirs = pa.array(as_numpy)
    want = (type(theirs).__name__, str(theirs.type), [len(c) for c in theirs.chunks])
    del theirs
    ours = arrowipc.array(as_numpy)
    assert (type(ours).__name__, str(ours.type), [len(c) for c in ours.chunks]) == want
    del ours

    df = pd.DataFrame({"byte_col": values})
    theirs_t = pa.Table.from_pandas(df)
    want_chunks = [len(c) for c in theirs_t.column(0).chunks]
    del theirs_t
    table = arrowipc.Table.from_pandas(df)
    assert [len(c) for c in table.column(0).chunks] == want_chunks
    del table

    buf = io.BytesIO()
    arrowipc.feather.write_feather(df, buf, version=2)
    back = pyarrow.feather.read_table(pa.BufferReader(buf.getvalue()))
    assert back.column(0).type == pa.binary()
    assert back.num_rows == len(values)
    assert back.column(0)[2048].as_py() == b"x" * MIB
    with pytest.warns(DeprecationWarning, match="Feather V1"), \
            pytest.raises(ValueError, match="'byte_col' exceeds 2GB maximum capacity of a "
                                            "Feather binary column"):
        arrowipc.feather.write_feather(df, io.BytesIO(), version=1)
