"""Defects that ETL scripts written against pyarrow hit when switched to arrowipc, each checked
with pyarrow as the oracle."""
import pytest

import arrowipc as A

pa = pytest.importorskip("pyarrow")

EVERY_TYPE = [
    A.null(), A.bool_(), A.int8(), A.uint8(), A.int16(), A.uint16(), A.int32(), A.uint32(),
    A.int64(), A.uint64(), A.float16(), A.float32(), A.float64(), A.string(), A.binary(),
    A.large_string(), A.large_binary(), A.string_view(), A.binary_view(), A.binary(3),
    A.date32(), A.date64(), A.timestamp("s", "UTC"), A.timestamp("ns"), A.time32("s"),
    A.time64("us"), A.duration("s"), A.month_day_nano_interval(), A.month_interval(),
    A.day_time_interval(), A.decimal32(5, 2), A.decimal64(5, 2), A.decimal128(5, 2),
    A.decimal256(40, 2), A.list_(A.int8()), A.large_list(A.int8()), A.list_view(A.int8()),
    A.large_list_view(A.int8()), A.list_(A.int8(), 3), A.struct([("a", A.int8())]),
    A.map_(A.int8(), A.string()), A.dictionary(A.int8(), A.string()),
    A.run_end_encoded(A.int32(), A.int8()), A.sparse_union([A.field("a", A.int8())]),
    A.dense_union([A.field("a", A.int8())]),
]


def as_pyarrow(t):
    return pa.schema(A.schema([A.field("x", t)])).field(0).type


@pytest.mark.parametrize("t", EVERY_TYPE, ids=str)
def test_type_ids_are_pyarrows_so_its_predicates_answer(t):
    # D5: DataType.id was the type's name, so every pyarrow.types.is_* said False
    theirs = as_pyarrow(t)
    assert isinstance(t.id, int) and t.id == theirs.id
    predicates = [getattr(pa.types, n) for n in dir(pa.types) if n.startswith("is_")]
    for is_ in predicates:
        try:
            expected = is_(theirs)
        except (AttributeError, TypeError):     # predicates that read more than the id
            continue
        try:
            got = is_(t)
        except (AttributeError, TypeError):
            continue
        assert got == expected, is_.__name__


def test_extension_type_id_is_pyarrows():
    class Uuid(A.ExtensionType):
        def __init__(self):
            super().__init__("example.uuid", A.binary(16))

    assert Uuid().id == 31 == pa.uuid().id   # Type::EXTENSION


@pytest.mark.parametrize("t", EVERY_TYPE, ids=str)
def test_to_numpy_of_a_column_without_chunks_has_the_columns_dtype(t):
    # D3: Spark's empty part files give columns with no chunks; to_numpy() gave float64 always
    ours = A.chunked_array([], type=t).to_numpy()
    if "list_view" in str(t):
        # pyarrow 26 aborts the process on an empty list-view ChunkedArray's to_numpy(): its
        # array's conversion is the oracle
        theirs = pa.array([], type=as_pyarrow(t)).to_numpy(zero_copy_only=False)
    else:
        try:
            theirs = pa.chunked_array([], type=as_pyarrow(t)).to_numpy()
        except (pa.ArrowNotImplementedError, pa.ArrowInvalid, pa.ArrowKeyError):
            pytest.skip(f"pyarrow has no numpy form of an empty {t} column")
    assert ours.shape == theirs.shape == (0,) and ours.dtype == theirs.dtype


NAN = float("nan")


@pytest.mark.parametrize("values, other", [
    ([1.0, NAN], [1.0, NAN]),                   # NaN equals nothing, not even NaN
    ([[NAN]], [[NAN]]),
    ([0.0, None], [-0.0, None]),                # 0.0 equals -0.0
    ([1, None, 3], [1, None, 3]),
    ([1, None, 3], [1, 2, 3]),
    (["a", None], ["a", None]),
    ([{"x": 1.5}], [{"x": NAN}]),
])
def test_equals_has_pyarrows_semantics(values, other):
    # D6: equality compared Python values with NaN == NaN
    expected = pa.array(values).equals(pa.array(other))
    assert A.array(values).equals(A.array(other)) is expected
    assert A.chunked_array([values]).equals(A.chunked_array([other])) is expected
    assert A.table({"c": values}).equals(A.table({"c": other})) is expected
    assert A.record_batch({"c": values}).equals(A.record_batch({"c": other})) is expected


def test_dictionary_arrays_compare_indices_and_dictionaries():
    # D6: two dictionary arrays that decode to the same values but are encoded differently are
    # not equal in pyarrow
    def both(indices, dictionary):
        theirs = pa.DictionaryArray.from_arrays(pa.array(indices, pa.int32()), pa.array(dictionary))
        return A.array(theirs), theirs

    ours1, theirs1 = both([0, 1, None], ["a", "b"])
    ours2, theirs2 = both([1, 0, None], ["b", "a"])
    ours3, theirs3 = both([0, 1, None], ["a", "b"])
    assert ours1.to_pylist() == ours2.to_pylist()
    assert ours1.equals(ours2) is theirs1.equals(theirs2) is False
    assert ours1.equals(ours3) is theirs1.equals(theirs3) is True
    # dictionary chunks each keep their own dictionary when chunkings differ
    c1 = A.chunked_array([ours1, ours3])
    c2 = A.chunked_array([ours3.slice(0, 2), A.chunked_array([ours3, ours1]).combine_chunks().slice(2, 4)])
    assert c1.equals(c2) is pa.chunked_array([theirs1, theirs3]).equals(
        pa.chunked_array([theirs3.slice(0, 2), pa.concat_arrays([theirs3, theirs1]).slice(2, 4)]))


def test_chunked_array_equals_a_pyarrow_chunked_array():
    # D4: ChunkedArray.equals(<pyarrow ChunkedArray>) was always False on equal data
    theirs = pa.chunked_array([[1, 2], [None, 4]])
    ours = A.chunked_array([[1], [2, None, 4]])
    assert ours.equals(theirs) and ours.equals(A.chunked_array(theirs))
    assert not ours.equals(pa.chunked_array([[1, 2], [3, 4]]))
    assert not ours.equals(pa.chunked_array([[1, 2, None, 4]], pa.int32()))   # another type
    assert not ours.equals(pa.table({"a": [1, 2, None, 4]}))                  # not a column
    assert ours.equals(ours) and not ours.equals(None) and not ours.equals([1, 2, None, 4])
