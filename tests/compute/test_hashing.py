"""unique, value_counts and dictionary_encode (the hash kernels of arrowipc/data/hashing.py),
with pyarrow as the oracle: random columns of every hashed type with nulls, NaNs, -0.0, null
slots holding a valid value's bytes, slices and chunked columns; the index overflow rule."""
import numpy as np
import pytest

import arrowipc
from arrowipc.errors import ArrowInvalid

pa = pytest.importorskip("pyarrow")


def same(expected, got):
    """Equal, NaN equal to NaN (pyarrow's equals says NaN != NaN)."""
    got = pa.array(got)
    assert got.type == expected.type
    assert repr(got.to_pylist()) == repr(expected.to_pylist()), (got, expected)
    if pa.types.is_dictionary(expected.type):
        assert repr(got.dictionary.to_pylist()) == repr(expected.dictionary.to_pylist())
        assert got.indices.to_pylist() == expected.indices.to_pylist()


def _column(rng, kind, n):
    mask = rng.random(n) < 0.15
    if kind == "int64":
        return pa.array(rng.integers(-5, 5, n), mask=mask)
    if kind == "wide int64":               # a range too wide for a table: hashed
        return pa.array(rng.choice([-(2 ** 62), 0, 7, 2 ** 62], n), mask=mask)
    if kind == "uint8":
        return pa.array(rng.integers(0, 255, n).astype(np.uint8), mask=mask)
    if kind == "int8":                     # negative codes of a narrow range: by value
        return pa.array(rng.integers(-128, -120, n).astype(np.int8), mask=mask)
    if kind == "top uint64":               # a narrow range above 2**63: by value
        return pa.array(np.uint64(2 ** 64 - 9) + rng.integers(0, 8, n).astype(np.uint64),
                        mask=mask)
    if kind == "double":
        return pa.array(rng.choice([0.0, -0.0, np.nan, 1.5, -2.25], n), mask=mask)
    if kind == "float32":
        return pa.array(rng.choice([0.0, -0.0, np.nan, 1.5], n).astype(np.float32), mask=mask)
    if kind == "bool":
        return pa.array(rng.random(n) < 0.5, mask=mask)
    if kind == "string":
        return pa.array([f"v{x}" * (x % 3) for x in rng.integers(0, 6, n)], mask=mask)
    if kind == "large_binary":
        return pa.array([bytes([x]) * x for x in rng.integers(0, 5, n)], pa.large_binary(),
                        mask=mask)
    if kind == "timestamp":
        return pa.array(rng.integers(0, 4, n).astype("datetime64[ms]"), mask=mask)
    if kind == "date32":
        return pa.array(rng.integers(0, 4, n).astype("datetime64[D]"), pa.date32(), mask=mask)
    raise AssertionError(kind)


KINDS = ["int64", "wide int64", "uint8", "int8", "top uint64", "double", "float32", "bool",
         "string", "large_binary", "timestamp", "date32"]


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("seed", range(4))
def test_hash_kernels_as_pyarrow(kind, seed):
    rng = np.random.default_rng(seed)
    column = _column(rng, kind, int(rng.integers(0, 200)))
    for data in (column, column.slice(3, 50)):
        ours = arrowipc.array(data)
        same(data.unique(), ours.unique())
        same(data.value_counts(), ours.value_counts())
        same(data.dictionary_encode(), ours.dictionary_encode())
        same(data.dictionary_encode(null_encoding="encode"),
             ours.dictionary_encode(null_encoding="encode"))


def test_a_null_slot_holding_a_valid_values_bytes_is_still_a_null():
    # slot 0 is null but holds 7, the value of slot 1 (a buffer made by hand)
    values = pa.py_buffer(np.array([7, 7, 3, 7], np.int64).tobytes())
    data = pa.Array.from_buffers(pa.int64(), 4, [pa.py_buffer(bytes([0b1110])), values])
    ours = arrowipc.array(data)
    assert ours.unique().to_pylist() == [None, 7, 3] == data.unique().to_pylist()
    same(data.dictionary_encode(), ours.dictionary_encode())
    same(data.value_counts(), ours.value_counts())


def test_chunked_columns_as_pyarrow():
    chunked = pa.chunked_array([["a", None, "b"], [], ["b", "c", None]])
    ours = arrowipc.chunked_array(chunked)
    same(chunked.unique(), ours.unique())
    same(chunked.value_counts(), ours.value_counts())
    encoded = ours.dictionary_encode()
    assert pa.chunked_array(encoded).equals(chunked.dictionary_encode())


def test_too_many_values_for_the_index_type_is_arrow_invalid_as_pyarrow():
    values = arrowipc.array([str(i) for i in range(300)])
    with pytest.raises(ArrowInvalid, match="Integer value 128 not in range: -128 to 127"):
        values.cast(arrowipc.dictionary(arrowipc.int8(), arrowipc.string()))
    with pytest.raises(ArrowInvalid, match="Integer value 256 not in range: 0 to 255"):
        values.cast(arrowipc.dictionary(arrowipc.uint8(), arrowipc.string()))
    encoded = values.cast(arrowipc.dictionary(arrowipc.int16(), arrowipc.string()))
    assert encoded.to_pylist() == values.to_pylist()


@pytest.mark.parametrize("kind", ["string", "double", "wide int64"])
@pytest.mark.parametrize("pieces", [2, 3])
def test_a_column_hashed_in_pieces_as_pyarrow(monkeypatch, kind, pieces):
    # first_equal cuts a column of repeated values in one piece per core, then renames each
    # piece's rows to the first equal row of the whole column: made to happen on small columns
    from arrowipc.data import hashing
    monkeypatch.setattr(hashing, "PARALLEL_MIN_ROWS", 64)
    monkeypatch.setattr(hashing.os, "cpu_count", lambda: pieces)
    rng = np.random.default_rng(pieces)
    column = _column(rng, kind, 3000)
    for data in (column, column.slice(7, 2500)):
        ours = arrowipc.array(data)
        same(data.unique(), ours.unique())
        same(data.value_counts(), ours.value_counts())
        same(data.dictionary_encode(), ours.dictionary_encode())


def test_a_column_of_distinct_values_is_hashed_in_one_pass(monkeypatch):
    from arrowipc.data import hashing
    monkeypatch.setattr(hashing, "PARALLEL_MIN_ROWS", 64)
    monkeypatch.setattr(hashing.os, "cpu_count", lambda: 2)
    calls = []
    real = hashing.parallel_map
    monkeypatch.setattr(hashing, "parallel_map",
                        lambda f, items, rows: calls.append(len(items)) or real(f, items, rows))
    data = pa.array([f"v{i}" for i in range(3000)])
    same(data.unique(), arrowipc.array(data).unique())
    assert calls == [1]


@pytest.mark.parametrize("pieces", [1, 2])
def test_string_offsets_outside_the_data_name_the_columns_row(monkeypatch, pieces):
    # a column cut in pieces names the row of the whole column, not of its piece
    import struct
    from arrowipc._core.arraydata import ArrayData
    from arrowipc._core.buffer import py_buffer
    from arrowipc.array import make_array
    from arrowipc.data import hashing
    monkeypatch.setattr(hashing, "PARALLEL_MIN_ROWS", 64)
    monkeypatch.setattr(hashing.os, "cpu_count", lambda: pieces)
    n, bad = 3000, 2900
    ends = [(i % 3) + 1 for i in range(n)]          # "a", "ab", "abc" repeated
    offsets = np.concatenate([[0], np.cumsum(ends)]).astype(np.int32)
    data = b"".join(b"abc"[:e] for e in ends)
    offsets[bad + 1:] += 10 ** 6                    # value 2900 claims bytes far past the data
    column = make_array(ArrayData(arrowipc.string(), n, 0, 0,
                                  [None, py_buffer(offsets.tobytes()), py_buffer(data)]))
    start = int(offsets[bad])
    with pytest.raises(ArrowInvalid, match=rf"^values: value {bad} spans bytes \[{start}, "):
        column.unique()
    import arrowipc.compute as ac
    with pytest.raises(ArrowInvalid, match=rf"^is_in: value {bad} of the values spans bytes"):
        ac.index_in(column, value_set=arrowipc.array(["ab"]))
