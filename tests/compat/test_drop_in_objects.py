"""Drop-in behaviour of the objects (tables, batches, schemas, types, arrays) that ETL scripts
written for pyarrow rely on, each checked against pyarrow 26 as the oracle: pyarrow's fields in
column and schema edits, lists of chunks, hashes that agree with pyarrow's, numpy conversion
through `__array__`, `==` on arrays, and the array and table methods scripts call."""
import math
from decimal import Decimal

import numpy as np
import pytest

import arrowipc as A

pa = pytest.importorskip("pyarrow")
pc = pytest.importorskip("pyarrow.compute")


def ours_table(pa_table):
    """An arrowipc Table of the same data and chunking as a pyarrow one."""
    return A.table(pa_table)


def same_table(ours, theirs, column="n"):
    """Schema (metadata included) and values of `ours` equal pyarrow's, and so does the chunk
    layout of `column` (an arrowipc Table is a list of batches: its other columns take the
    same chunk boundaries, where pyarrow's columns keep their own)."""
    assert pa.table(ours).equals(theirs, check_metadata=True)
    assert ([len(c) for c in ours.column(column).chunks]
            == [len(c) for c in theirs.column(column).chunks])


def same_batch(ours, theirs):
    assert pa.record_batch(ours).equals(theirs, check_metadata=True)


# -- 1. pyarrow's fields in column and schema edits ----------------------------------------------

FIELDS = [pa.field("n", pa.int8()), pa.field("n", pa.int8(), nullable=False),
          pa.field("n", pa.int8(), metadata={"k": "v"})]


@pytest.mark.parametrize("field", FIELDS, ids=str)
@pytest.mark.parametrize("edit", ["append", "add", "set"])
@pytest.mark.parametrize("kind", ["table", "batch"])
def test_a_pyarrow_field_names_an_added_column(field, edit, kind):
    if kind == "table":
        theirs, ours, same = pa.table({"a": [1, 2], "b": ["x", "y"]}), ours_table, same_table
    else:
        theirs, ours, same = pa.record_batch({"a": [1, 2], "b": ["x", "y"]}), \
            A.record_batch, same_batch
    column = pa.array([1, 2], pa.int8())
    call = {"append": lambda t: t.append_column(field, column),
            "add": lambda t: t.add_column(1, field, column),
            "set": lambda t: t.set_column(0, field, column)}[edit]
    same(call(ours(theirs)), call(theirs))


@pytest.mark.parametrize("kind, error", [("table", ValueError), ("batch", TypeError)])
def test_a_field_of_another_type_than_the_column_raises_pyarrows_builtin(kind, error):
    # pyarrow: ArrowInvalid (a ValueError) for a table, ArrowTypeError for a batch
    theirs = pa.table({"a": [1, 2]}) if kind == "table" else pa.record_batch({"a": [1, 2]})
    ours = A.table(theirs) if kind == "table" else A.record_batch(theirs)
    for obj in (theirs, ours):
        with pytest.raises(error):
            obj.append_column(pa.field("n", pa.int8()), pa.array([1, 2]))


def builtin_of(error):
    """The builtin exception class an Arrow exception derives from (ValueError...)."""
    return next(c for c in type(error).__mro__ if c.__module__ == "builtins")


@pytest.mark.parametrize("not_a_field", [pa.int8(), pa.schema([("q", pa.int8())]), 3], ids=repr)
@pytest.mark.parametrize("kind", ["table", "batch"])
def test_what_is_not_a_field_is_refused_as_by_pyarrow(not_a_field, kind):
    theirs = pa.table({"a": [1, 2]}) if kind == "table" else pa.record_batch({"a": [1, 2]})
    ours = A.table(theirs) if kind == "table" else A.record_batch(theirs)
    column = [[1, 2]] if kind == "table" else [1, 2]
    with pytest.raises(Exception) as expected:
        theirs.append_column(not_a_field, column)
    with pytest.raises(builtin_of(expected.value)):
        ours.append_column(not_a_field, column)
    for schema in (theirs.schema, ours.schema):
        with pytest.raises(TypeError):
            schema.append(not_a_field)


@pytest.mark.parametrize("field", FIELDS, ids=str)
@pytest.mark.parametrize("edit", ["append", "insert", "set"])
def test_schema_edits_take_pyarrow_fields(field, edit):
    theirs = pa.schema([("a", pa.int64()), ("b", pa.string())], metadata={"s": "1"})
    call = {"append": lambda s: s.append(field), "insert": lambda s: s.insert(1, field),
            "set": lambda s: s.set(0, field)}[edit]
    got = call(A.schema(theirs))
    assert isinstance(got, A.Schema)
    assert pa.schema(got).equals(call(theirs), check_metadata=True)


def test_a_schema_is_built_from_pyarrow_fields():
    fields = [pa.field("a", pa.int64(), False), pa.field("b", pa.list_(pa.string()))]
    assert pa.schema(A.schema(fields)).equals(pa.schema(fields), check_metadata=True)


# -- 2. a column given as a list of chunks ---------------------------------------------------------

CHUNK_LISTS = {
    "pyarrow arrays": lambda: [pa.array([1]), pa.array([2, 3])],
    "pyarrow int8 arrays": lambda: [pa.array([1], pa.int8()), pa.array([2, 3], pa.int8())],
    "arrowipc arrays": lambda: [A.array([1]), A.array([2, 3])],
    "lists": lambda: [[1], [2, 3]],
    "numpy arrays": lambda: [np.array([1]), np.array([2, 3])],
    "one pyarrow array": lambda: [pa.array(["x", None, "z"])],
}


def _as_pyarrow_chunks(chunks):
    return [pa.array(c) if isinstance(c, A.Array) else c for c in chunks]


@pytest.mark.parametrize("name", list(CHUNK_LISTS))
@pytest.mark.parametrize("edit", ["append", "add", "set"])
def test_a_list_of_chunks_is_a_chunked_column(name, edit):
    theirs = pa.table({"a": [1, 2, 3]})
    chunks = CHUNK_LISTS[name]()

    def call(t, c):
        return {"append": lambda: t.append_column("n", c),
                "add": lambda: t.add_column(0, "n", c),
                "set": lambda: t.set_column(0, "n", c)}[edit]()

    same_table(call(ours_table(theirs), chunks), call(theirs, _as_pyarrow_chunks(chunks)))


def test_chunks_of_different_types_raise_pyarrows_builtin():
    chunks = [pa.array([1], pa.int8()), pa.array([2, 3])]
    for obj in (pa.table({"a": [1, 2, 3]}), A.table({"a": [1, 2, 3]})):
        with pytest.raises(TypeError, match="Array chunks must all be same type"):
            obj.append_column("n", chunks)


def test_a_pyarrow_chunked_array_is_a_column_of_a_table_and_of_a_batch():
    column = pa.chunked_array([[1], [2, 3]])
    theirs = pa.table({"a": [1, 2, 3]})
    same_table(ours_table(theirs).append_column("n", column), theirs.append_column("n", column))
    batch = pa.record_batch({"a": [1, 2, 3]})
    same_batch(A.record_batch(batch).append_column("n", column),
               batch.append_column("n", column))


def test_a_batch_column_of_the_wrong_length_names_the_batch():
    with pytest.raises(ValueError, match="record batch's length"):
        A.record_batch({"a": [1, 2]}).append_column("n", [[1, 2]])


# -- 3. hashes that agree with pyarrow's --------------------------------------------------------

TYPES = [
    A.null(), A.bool_(), A.int8(), A.uint64(), A.float16(), A.float64(), A.string(),
    A.large_binary(), A.string_view(), A.binary(3), A.date32(), A.date64(),
    A.timestamp("s", "UTC"), A.timestamp("us", "Europe/Paris"), A.timestamp("ns"),
    A.time32("ms"), A.time64("us"), A.duration("s"), A.month_day_nano_interval(),
    A.decimal32(5, 2), A.decimal128(38, 10), A.decimal256(40, 2), A.list_(A.int8()),
    A.list_(A.field("x", A.int64(), False)), A.large_list(A.string()), A.list_view(A.int8()),
    A.fixed_size_list(A.field("v", A.float32()), 4), A.struct([("a", A.int8())]),
    A.struct([A.field("a", A.int8(), False), ("b", A.list_(A.string()))]),
    A.map_(A.int8(), A.string()), A.map_(A.string(), A.int64(), keys_sorted=True),
    A.dictionary(A.int8(), A.string()), A.dictionary(A.int32(), A.string(), ordered=True),
    A.run_end_encoded(A.int32(), A.int8()), A.sparse_union([A.field("a", A.int8())]),
    A.dense_union([A.field("a", A.int8()), A.field("b", A.string())]),
]


def as_pyarrow_type(t):
    return pa.schema(A.schema([A.field("x", t)])).field(0).type


@pytest.mark.parametrize("t", TYPES, ids=str)
def test_a_dict_keyed_by_pyarrow_types_finds_ours(t):
    theirs = as_pyarrow_type(t)
    assert t == theirs and hash(t) == hash(theirs) == hash(str(t))
    assert {theirs: "found"}.get(t) == "found"
    assert {t: "found"}.get(theirs) == "found"
    assert hash(t) == hash(str(t)) and t == str(t)       # a type equals its str: same hash


def test_equal_types_hash_equal():
    assert hash(A.list_(A.int64())) == hash(A.list_(A.field("item", A.int64())))
    assert len({A.int64(), A.int64(), A.int32(), A.struct([("a", A.int8())]),
                A.struct([("a", A.int8())])}) == 3


@pytest.mark.parametrize("field", [
    A.field("a", A.int64()), A.field("a", A.int64(), False),
    A.field("a", A.string(), metadata={"k": "v"}), A.field("", A.list_(A.int8())),
], ids=str)
def test_a_dict_keyed_by_pyarrow_fields_finds_ours(field):
    theirs = pa.field(field)
    assert field == theirs and hash(field) == hash(theirs)
    assert {theirs: "found"}.get(field) == "found"
    # as in pyarrow, metadata is neither compared nor hashed
    assert hash(field) == hash(field.with_metadata({"other": "1"}))


@pytest.mark.parametrize("metadata", [None, {"k": "v"}, {"a": "1", "b": "2"}])
def test_a_dict_keyed_by_pyarrow_schemas_finds_ours(metadata):
    theirs = pa.schema([pa.field("a", pa.int64(), False), ("b", pa.list_(pa.string()))],
                       metadata=metadata)
    ours = A.schema(theirs)
    assert ours == theirs and hash(ours) == hash(theirs)
    assert {theirs: "found"}.get(ours) == "found"


def test_schema_metadata_takes_part_in_the_hash_as_in_pyarrow():
    # pyarrow hashes the schema metadata although == ignores it: so do we, to find its keys
    theirs = [pa.schema([("a", pa.int8())], metadata=m) for m in (None, {"k": "v"})]
    ours = [A.schema(s) for s in theirs]
    assert (ours[0] == ours[1]) == (theirs[0] == theirs[1])
    assert (hash(ours[0]) == hash(ours[1])) == (hash(theirs[0]) == hash(theirs[1]))


def test_a_struct_type_equals_pyarrows():
    # pyarrow's struct types have `names` as schemas do: they were taken for schemas
    assert A.struct([("a", A.int8())]) == pa.struct([("a", pa.int8())])
    assert A.struct([("a", A.int8())]) != pa.schema([("a", pa.int8())])
    assert A.schema([("a", A.int8())]) != pa.struct([("a", pa.int8())])


# -- 4. numpy and pandas conversion through __array__ --------------------------------------------

COLUMNS = {
    "int64": pa.array([1, 2, 3]),
    "int64 nulls": pa.array([1, None, 3]),
    "uint8": pa.array([1, 2, 255], pa.uint8()),
    "float32 nulls": pa.array([1.5, None, float("nan")], pa.float32()),
    "float64": pa.array([0.5, 1.5, -2.0]),
    "bool": pa.array([True, False, True]),
    "bool nulls": pa.array([True, None, False]),
    "string": pa.array(["x", None, "zz"]),
    "large_binary": pa.array([b"x", None, b""], pa.large_binary()),
    "date32": pa.array([0, None, 19000], pa.date32()),
    "timestamp": pa.array([0, 10**12, None], pa.timestamp("us")),
    "timestamp tz": pa.array([0, 10**9, 5], pa.timestamp("s", "UTC")),
    "duration": pa.array([1, None, 3], pa.duration("ms")),
    "decimal": pa.array([Decimal("1.25"), None, Decimal("-3.50")], pa.decimal128(5, 2)),
    "list": pa.array([[1, 2], None, []]),
    "struct": pa.array([{"a": 1}, None, {"a": 3}]),
    "dictionary": pa.array(["a", "b", None]).dictionary_encode(),
    "null": pa.nulls(3),
}


def assert_same_numpy(ours, theirs):
    """Same dtype, shape and values (NaN, NaT and None where pyarrow has them)."""
    assert (ours.dtype, ours.shape) == (theirs.dtype, theirs.shape)
    if ours.dtype != object:
        np.testing.assert_array_equal(ours, theirs)
        return
    for mine, other in zip(ours.ravel(), theirs.ravel()):
        if isinstance(other, np.ndarray):
            np.testing.assert_array_equal(mine, other)
        elif isinstance(other, float) and math.isnan(other):
            assert isinstance(mine, float) and math.isnan(mine)
        else:
            assert type(mine) is type(other) and mine == other


@pytest.mark.parametrize("name", list(COLUMNS))
def test_np_asarray_of_an_array_is_pyarrows(name):
    theirs = COLUMNS[name]
    assert_same_numpy(np.asarray(A.array(theirs)), np.asarray(theirs))


@pytest.mark.parametrize("name", list(COLUMNS))
def test_np_asarray_of_a_chunked_array_is_pyarrows(name):
    theirs = pa.chunked_array([COLUMNS[name], COLUMNS[name].slice(1)])
    expected = np.asarray(theirs)
    if name == "dictionary":
        # pyarrow 26 gives a dictionary value for a null of a chunked dictionary column
        # (['a', 'b', 'b', 'b', 'b']): its chunks' own conversions are the oracle
        expected = np.concatenate([np.asarray(c) for c in theirs.chunks])
    assert_same_numpy(np.asarray(A.chunked_array(theirs)), expected)


@pytest.mark.filterwarnings("ignore:invalid value encountered in cast")   # NaN to int32
@pytest.mark.parametrize("name", ["int64", "int64 nulls", "bool", "float64", "decimal"])
@pytest.mark.parametrize("dtype", ["float64", "int32", "object"])
def test_np_asarray_with_a_dtype_is_pyarrows(name, dtype):
    theirs = COLUMNS[name]
    try:
        expected = np.asarray(theirs, dtype=dtype)
    except (TypeError, ValueError) as e:
        with pytest.raises(type(e)):
            np.asarray(A.array(theirs), dtype=dtype)
        return
    assert_same_numpy(np.asarray(A.array(theirs), dtype=dtype), expected)
    chunked = pa.chunked_array([theirs])
    assert_same_numpy(np.asarray(A.chunked_array(chunked), dtype=dtype),
                      np.asarray(chunked, dtype=dtype))


@pytest.mark.parametrize("name", ["int64", "int64 nulls", "string", "bool"])
def test_copy_false_is_refused_as_by_pyarrow(name):
    theirs = COLUMNS[name]
    for pa_obj, ours in [(theirs, A.array(theirs)),
                         (pa.chunked_array([theirs]), A.chunked_array([A.array(theirs)])),
                         (pa.table({"x": theirs}), A.table({"x": A.array(theirs)}))]:
        try:
            expected = np.array(pa_obj, copy=False)
        except ValueError:
            with pytest.raises(ValueError, match="Unable to avoid a copy"):
                np.array(ours, copy=False)
            continue
        got = np.array(ours, copy=False)
        assert_same_numpy(got, expected)
        assert not got.flags.writeable          # a view of the arrow buffer, as pyarrow's


def test_copy_true_gives_a_writable_copy_as_pyarrow():
    ours = A.array([1, 2, 3])
    copied = np.array(ours, copy=True)
    assert copied.flags.writeable == np.array(pa.array([1, 2, 3]), copy=True).flags.writeable
    copied[0] = 9
    assert ours.to_pylist() == [1, 2, 3]


@pytest.mark.parametrize("columns", [
    {"a": [1, 2], "b": [1.5, None]},
    {"a": [1, 2], "b": ["x", None]},
    {"a": [True, False], "b": [1, None]},
    {"a": pa.array([0, 1], pa.timestamp("ms"))},
], ids=str)
def test_np_asarray_of_a_table_and_a_batch_is_pyarrows(columns):
    theirs = pa.table(columns)
    assert_same_numpy(np.asarray(A.table(theirs)), np.asarray(theirs))
    batch = pa.record_batch(columns)
    assert_same_numpy(np.asarray(A.record_batch(batch)), np.asarray(batch))
    assert_same_numpy(np.asarray(A.table(theirs), dtype="object"),
                      np.asarray(theirs, dtype="object"))


def test_np_asarray_of_a_table_without_columns_is_pyarrows():
    theirs = pa.table({"a": [1, 2]}).select([])
    assert_same_numpy(np.asarray(A.table({"a": [1, 2]}).select([])), np.asarray(theirs))


@pytest.mark.parametrize("name", ["int64", "int64 nulls", "float64", "string", "bool nulls",
                                  "timestamp", "date32"])
def test_a_pandas_series_of_a_column_is_pyarrows(name):
    pd = pytest.importorskip("pandas")
    theirs = pa.chunked_array([COLUMNS[name]])
    pd.testing.assert_series_equal(pd.Series(A.chunked_array(theirs)), pd.Series(theirs))
    pd.testing.assert_series_equal(pd.Series(A.array(COLUMNS[name])),
                                   pd.Series(COLUMNS[name]))


# -- 5. == on arrays and chunked arrays -----------------------------------------------------------

NAN = float("nan")
EQUALITY_CASES = [
    ([1, 2, 3], [1, 2, 3], None),
    ([1, None, 3], [1, None, 3], None),
    ([1, None, 3], [1, 2, 3], None),
    ([1.0, NAN], [1.0, NAN], None),                 # NaN equals nothing, as in pyarrow
    ([0.0], [-0.0], None),
    (["a", None], ["a", None], None),
    ([1, 2], [1, 2], "int8"),                       # another type: unequal
    ([[1], None], [[1], None], None),
    ([1, 2], [1, 2, 3], None),
]


@pytest.mark.parametrize("left, right, right_type", EQUALITY_CASES, ids=str)
def test_array_eq_compares_values_as_pyarrow(left, right, right_type):
    theirs_l, theirs_r = pa.array(left), pa.array(right, right_type)
    expected = theirs_l == theirs_r
    ours_l, ours_r = A.array(theirs_l), A.array(theirs_r)
    assert (ours_l == ours_r) is expected
    assert (ours_l != ours_r) is (not expected)
    assert (ours_l == theirs_r) is expected          # against pyarrow's, both ways
    assert (theirs_r == ours_l) is expected


@pytest.mark.parametrize("left, right, right_type", EQUALITY_CASES, ids=str)
def test_chunked_array_eq_compares_values_as_pyarrow(left, right, right_type):
    theirs_l = pa.chunked_array([pa.array(left)])
    whole = pa.array(right, right_type)
    theirs_r = pa.chunked_array([whole.slice(0, 1), whole.slice(1)])     # chunked otherwise
    expected = theirs_l == theirs_r
    ours_l, ours_r = A.chunked_array(theirs_l), A.chunked_array(theirs_r)
    assert (ours_l == ours_r) is expected
    assert (ours_l != ours_r) is (not expected)
    assert (ours_l == theirs_r) is expected
    assert (theirs_r == ours_l) is expected


@pytest.mark.parametrize("other", [None, 1, "x", [1, 2], (1, 2), pa.scalar(1)], ids=repr)
def test_eq_with_what_is_not_an_array_is_false_as_in_pyarrow(other):
    for theirs, ours in [(pa.array([1, 2]), A.array([1, 2])),
                         (pa.chunked_array([[1, 2]]), A.chunked_array([[1, 2]]))]:
        assert (ours == other) is (theirs == other) is False
        assert (ours != other) is (theirs != other) is True


def test_an_array_and_a_chunked_array_are_unequal_as_in_pyarrow():
    assert (pa.array([1]) == pa.chunked_array([[1]])) is False
    assert (A.array([1]) == A.chunked_array([[1]])) is False
    assert (A.chunked_array([[1]]) == A.array([1])) is False
    assert (A.array([1]) == pa.chunked_array([[1]])) is False


def test_eq_with_a_numpy_array_is_numpys_elementwise_comparison_as_in_pyarrow():
    values = np.array([1, 5, 3])
    np.testing.assert_array_equal(A.array([1, 2, 3]) == values, pa.array([1, 2, 3]) == values)
    np.testing.assert_array_equal(A.chunked_array([[1, 2, 3]]) == values,
                                  pa.chunked_array([[1, 2, 3]]) == values)


def test_a_stream_reader_is_not_consumed_by_a_comparison():
    reader = pa.RecordBatchReader.from_batches(pa.schema([("a", pa.int64())]), [])
    assert (A.chunked_array([[1]]) == reader) is False
    assert reader.read_all().num_rows == 0


def test_arrays_are_unhashable_as_in_pyarrow():
    for theirs, ours in [(pa.array([1]), A.array([1])),
                         (pa.chunked_array([[1]]), A.chunked_array([[1]]))]:
        for obj in (theirs, ours):
            with pytest.raises(TypeError, match="unhashable"):
                hash(obj)


# -- 6. the array, column and table methods ETL scripts call --------------------------------------

SAMPLES = {
    "int8": pa.array([3, None, -1, 3], pa.int8()),
    "uint32": pa.array([3, None, 1, 7], pa.uint32()),
    "int64": pa.array([5, 2, None, 2]),
    "float16": pa.array(np.array([1.5, np.nan, 0.5], np.float16)),
    "float32": pa.array([1.5, None, NAN, -2.0], pa.float32()),
    "float64": pa.array([0.5, NAN, None, -1.0, 0.5]),
    "bool": pa.array([True, None, False, True]),
    "string": pa.array(["b", None, "a", "b"]),
    "large_string": pa.array(["b", None, "a"], pa.large_string()),
    "string_view": pa.array(["b", None, "a"], pa.string_view()),
    "binary": pa.array([b"b", None, b"a"]),
    "fixed_size_binary": pa.array([b"bb", None, b"aa"], pa.binary(2)),
    "date32": pa.array([3, None, 1], pa.date32()),
    "timestamp": pa.array([3, None, 1], pa.timestamp("ms", "UTC")),
    "time64": pa.array([3, None, 1], pa.time64("us")),
    "duration": pa.array([3, None, 1], pa.duration("s")),
    "decimal32": pa.array([Decimal("1.25"), None], pa.decimal32(5, 2)),
    "decimal128": pa.array([Decimal("1.25"), None, Decimal("-3.50"), Decimal("1.25")],
                           pa.decimal128(5, 2)),
    "decimal256": pa.array([Decimal("1.25"), None, Decimal("-3.50")], pa.decimal256(40, 2)),
    "list": pa.array([[1, 2], None, []]),
    "struct": pa.array([{"a": 2, "b": "x"}, None, {"a": 1, "b": None}, {"a": 1, "b": "y"}]),
    "dictionary": pa.array(["b", None, "a", "b"]).dictionary_encode(),
    "null": pa.nulls(3),
    "empty": pa.array([], pa.int64()),
}

# Where pyarrow 26 has no kernel (ArrowNotImplementedError) or fails on valid data, arrowipc
# computes the result: (method, sample) pairs checked to succeed rather than to match.
BEYOND_PYARROW = {
    ("drop_null", "string_view"), ("index", "string_view"), ("index", "duration"),
    ("index", "decimal32"), ("index", "dictionary"), ("sort", "float16"),
    ("sort", "string_view"), ("sort", "decimal32"), ("dictionary_encode", "decimal32"),
    ("dictionary_encode", "list"), ("dictionary_encode", "struct"),
    # pyarrow raises TypeError re-encoding a dictionary array with nulls as values, and gives
    # "" for the null of a string_view dictionary
    ("dictionary_encode", "dictionary"), ("dictionary_encode", "string_view"),
}
# ... and for ChunkedArray (pyarrow's chunked sort of dictionaries and structs fails too)
BEYOND_PYARROW_CHUNKED = BEYOND_PYARROW | {("sort", "dictionary"), ("sort", "struct")}


def normalized(value):
    """A Python value with NaN made comparable."""
    if isinstance(value, float) and math.isnan(value):
        return "NaN"
    if isinstance(value, list):
        return [normalized(v) for v in value]
    if isinstance(value, dict):
        return {k: normalized(v) for k, v in value.items()}
    return value


def outcome(call):
    """What a call gives, comparable across libraries: ("raises", builtin), ("scalar", type,
    value), ("array", type, values, chunk lengths) or ("value", value)."""
    try:
        got = call()
    except Exception as e:          # noqa: BLE001  (the builtin is what is compared)
        return ("raises", builtin_of(e).__name__)
    if hasattr(got, "as_py") and not hasattr(got, "to_pylist"):
        return ("scalar", str(got.type), normalized(got.as_py()))
    if hasattr(got, "to_pylist"):
        chunks = [len(c) for c in got.chunks] if hasattr(got, "chunks") else None
        return ("array", str(got.type), normalized(got.to_pylist()), chunks)
    return ("value", normalized(got))


def check_method(method, name, call, chunked=False):
    """`call` gives on arrowipc's array (or column) what it gives on pyarrow's."""
    theirs = SAMPLES[name]
    if chunked:
        theirs = pa.chunked_array([theirs, theirs.slice(1)])
    ours = A.chunked_array(theirs) if chunked else A.array(theirs)
    expected, got = outcome(lambda: call(theirs)), outcome(lambda: call(ours))
    beyond = BEYOND_PYARROW_CHUNKED if chunked else BEYOND_PYARROW
    if (method, name) in beyond:
        assert got[0] == "array" or got[0] == "scalar", got
        return
    assert got == expected


def last_value(name):
    values = [v for v in SAMPLES[name].to_pylist() if v is not None]
    return values[-1] if values else None


@pytest.mark.parametrize("chunked", [False, True], ids=["Array", "ChunkedArray"])
@pytest.mark.parametrize("name", list(SAMPLES))
def test_drop_null_is_pyarrows(name, chunked):
    check_method("drop_null", name, lambda a: a.drop_null(), chunked)


@pytest.mark.parametrize("chunked", [False, True], ids=["Array", "ChunkedArray"])
@pytest.mark.parametrize("name", list(SAMPLES))
def test_is_nan_is_pyarrows(name, chunked):
    check_method("is_nan", name, lambda a: a.is_nan(), chunked)


@pytest.mark.parametrize("bounds", [{}, {"start": 1}, {"end": 1}, {"start": 1, "end": 3}],
                         ids=str)
@pytest.mark.parametrize("chunked", [False, True], ids=["Array", "ChunkedArray"])
@pytest.mark.parametrize("name", list(SAMPLES))
def test_index_is_pyarrows(name, chunked, bounds):
    value = last_value(name)
    check_method("index", name, lambda a: a.index(value, **bounds), chunked)


@pytest.mark.parametrize("value", [2, 2.7, -2.5, None, NAN, 300, pa.scalar(2, pa.int8()),
                                   A.scalar(2, A.int16())], ids=repr)
def test_index_converts_the_value_as_pyarrow(value):
    theirs = pa.array([1, 2, -2, None], pa.int8())
    if isinstance(value, A.Scalar):
        expected = outcome(lambda: theirs.index(pa.scalar(value.as_py(), pa.int16())))
    else:
        expected = outcome(lambda: theirs.index(value))
    assert outcome(lambda: A.array(theirs).index(value)) == expected


def test_index_searches_across_chunks_as_pyarrow():
    theirs = pa.chunked_array([[1, 2], [], [3, 2], [2]])
    ours = A.chunked_array(theirs)
    for value, bounds in [(3, {}), (2, {"start": 2}), (2, {"start": 4}), (2, {"start": 5}),
                          (2, {"end": 1}), (9, {})]:
        assert outcome(lambda: ours.index(value, **bounds)) == \
            outcome(lambda: theirs.index(value, **bounds))


@pytest.mark.parametrize("options", [{}, {"min_count": 0}, {"skip_nulls": False},
                                     {"min_count": 3}], ids=str)
@pytest.mark.parametrize("name", list(SAMPLES))
def test_sum_is_pyarrows(name, options):
    check_method("sum", name, lambda a: a.sum(**options))


@pytest.mark.parametrize("values, type", [
    ([2**63 - 1, 1], pa.int64()),                        # wraps as pyarrow's
    ([2**64 - 1, 2], pa.uint64()),
    ([-128, -128, 127], pa.int8()),                      # summed in int64, not int8
    ([Decimal("9" * 38)] * 2, pa.decimal128(38, 0)),     # wraps at 128 bits
    ([Decimal("-" + "9" * 37 + ".5")] * 3, pa.decimal128(38, 1)),
    ([Decimal("1" * 70 + ".25"), Decimal("-0.5")], pa.decimal256(76, 2)),
    ([0.1] * 10, pa.float32()),                          # float32 summed as double
], ids=str)
def test_sum_keeps_pyarrows_width_and_overflow(values, type):
    theirs = pa.array(values, type)
    ours = A.array(theirs)
    assert outcome(lambda: ours.sum()) == outcome(lambda: theirs.sum())
    halves = [theirs.slice(0, 1), theirs.slice(1)]      # chunks summed apart, then together
    assert A.chunked_array(pa.chunked_array(halves)).combine_chunks().sum().as_py() == \
        theirs.sum().as_py()


def test_sum_takes_pyarrows_options_only():
    for arr in (pa.array([1]), A.array([1])):
        with pytest.raises(TypeError):
            arr.sum(foo=1)
        with pytest.raises(TypeError):
            arr.sum(False)


SORTS = [{}, {"order": "descending"}, {"null_placement": "at_start"},
         {"order": "descending", "null_placement": "at_start"}]


@pytest.mark.parametrize("options", SORTS, ids=str)
@pytest.mark.parametrize("chunked", [False, True], ids=["Array", "ChunkedArray"])
@pytest.mark.parametrize("name", list(SAMPLES))
def test_sort_is_pyarrows(name, chunked, options):
    check_method("sort", name, lambda a: a.sort(**options), chunked)


@pytest.mark.parametrize("options", SORTS, ids=str)
def test_a_struct_array_sorts_by_its_fields_and_by_one_as_pyarrow(options):
    theirs = pa.StructArray.from_arrays(
        [pa.array([2, 1, 7, 1, None, 1]), pa.array(["x", "z", "q", None, "y", "a"])],
        names=["a", "b"], mask=pa.array([False, False, True, False, False, False]))
    ours = A.array(theirs)
    assert outcome(lambda: ours.sort(**options)) == outcome(lambda: theirs.sort(**options))
    for by in ("a", "b"):
        assert outcome(lambda: ours.sort(by=by, **options)) == \
            outcome(lambda: theirs.sort(by=by, **options))


@pytest.mark.parametrize("options, error", [({"order": "up"}, ValueError),
                                            ({"null_placement": "middle"}, ValueError),
                                            ({"foo": 1}, TypeError)], ids=str)
def test_sort_refuses_bad_options_as_pyarrow(options, error):
    for arr in (pa.array([2, 1]), A.array([2, 1]), pa.chunked_array([[2, 1]]),
                A.chunked_array([[2, 1]])):
        with pytest.raises(error):
            arr.sort(**options)


@pytest.mark.parametrize("name", list(SAMPLES))
def test_tolist_is_to_pylist(name):
    check_method("tolist", name, lambda a: a.tolist())


class _Encoded:
    """A dictionary array or column with its dictionaries among its values, so outcome()
    compares them too (values in order of first appearance, nulls as pyarrow places them)."""

    def __init__(self, encoded):
        self.type, self._encoded = encoded.type, encoded
        if hasattr(encoded, "chunks"):
            self.chunks = encoded.chunks

    def to_pylist(self):
        pieces = getattr(self._encoded, "chunks", [self._encoded])
        return [self._encoded.to_pylist(), [c.dictionary.to_pylist() for c in pieces]]


@pytest.mark.parametrize("null_encoding", ["mask", "encode"])
@pytest.mark.parametrize("chunked", [False, True], ids=["Array", "ChunkedArray"])
@pytest.mark.parametrize("name", list(SAMPLES))
def test_dictionary_encode_is_pyarrows(name, chunked, null_encoding):
    check_method("dictionary_encode", name,
                 lambda a: _Encoded(a.dictionary_encode(null_encoding=null_encoding)), chunked)


def test_dictionary_encode_refuses_an_unknown_null_encoding_as_pyarrow():
    for arr in (pa.array(["a"]), A.array(["a"]), pa.chunked_array([["a"]]),
                A.chunked_array([["a"]])):
        with pytest.raises(ValueError, match='"bad" is not a valid null encoding'):
            arr.dictionary_encode(null_encoding="bad")


@pytest.mark.parametrize("name", ["string", "dictionary", "int64", "struct"])
def test_dictionary_decode_is_pyarrows(name):
    if name == "struct":
        theirs = pa.DictionaryArray.from_arrays(pa.array([1, 0, None, 1], pa.int8()),
                                                SAMPLES["struct"])
    else:
        theirs = SAMPLES[name].dictionary_encode() if name != "dictionary" else SAMPLES[name]
    ours = A.array(theirs)
    assert outcome(lambda: ours.dictionary_decode()) == \
        outcome(lambda: theirs.dictionary_decode())


LISTS = {
    "list": pa.array([[1, 2], None, [], [3]]),
    "large_list": pa.array([[1, 2], None, [], [3]], pa.large_list(pa.int64())),
    "list_view": pa.array([[1, 2], None, [], [3]], pa.list_view(pa.int64())),
    "large_list_view": pa.array([[1, 2], None, []], pa.large_list_view(pa.int64())),
    "fixed_size_list": pa.array([[1, 2], None, [3, 4]], pa.list_(pa.int64(), 2)),
    "list sliced": pa.array([[1, 2], None, [], [3, 4, 5]]).slice(1),
    "list_view sliced": pa.array([[1], None, [2, 3]], pa.list_view(pa.int64())).slice(1, 2),
}


@pytest.mark.parametrize("name", list(LISTS))
def test_value_lengths_is_pyarrows(name):
    theirs = LISTS[name]
    assert outcome(lambda: A.array(theirs).value_lengths()) == \
        outcome(lambda: theirs.value_lengths())


def test_value_lengths_of_a_map_array_counts_its_entries():
    # pyarrow 26 has no list_value_length kernel for maps; arrowipc counts the entries
    theirs = pa.array([[("a", 1), ("b", 2)], None, []], pa.map_(pa.string(), pa.int64()))
    assert A.array(theirs).value_lengths().to_pylist() == [2, None, 0]


def test_chunked_array_length_is_len():
    theirs = pa.chunked_array([[1, 2], [], [3]])
    assert A.chunked_array(theirs).length() == theirs.length() == 3


@pytest.mark.parametrize("chunks", [[[1], [], [2]], [[None], [None, 1], [2]], [[1], [], [None]],
                                    [[None]], [[None], [None]], [[], []], []], ids=str)
def test_chunked_drop_null_keeps_pyarrows_chunks(chunks):
    theirs = pa.chunked_array([pa.array(c, pa.int64()) for c in chunks], pa.int64())
    assert outcome(lambda: A.chunked_array(theirs).drop_null()) == \
        outcome(lambda: theirs.drop_null())


STRUCT = pa.struct([("a", pa.int64()), ("b", pa.string())])


@pytest.mark.parametrize("chunks", [
    [pa.array([{"a": 1, "b": "x"}, None], STRUCT), pa.array([{"a": None, "b": "y"}], STRUCT)],
    # values stored under null structs (as IPC data may hold them) come out null
    [pa.StructArray.from_arrays([pa.array([1, 2, 3]), pa.array(["x", "y", "z"])],
                                fields=list(STRUCT), mask=pa.array([False, True, False]))],
    [pa.StructArray.from_arrays([pa.array([1, 2, 3]), pa.array(["x", "y", "z"])],
                                fields=list(STRUCT),
                                mask=pa.array([True, False, False])).slice(1)],
    [],
], ids=["nulls", "values under nulls", "sliced", "no chunks"])
def test_flatten_of_a_struct_column_is_pyarrows(chunks):
    theirs = pa.chunked_array(chunks, STRUCT)
    ours = A.chunked_array(theirs)
    got, expected = ours.flatten(), theirs.flatten()
    assert [outcome(lambda: c) for c in got] == [outcome(lambda: c) for c in expected]
    for arr in chunks:              # the arrays' own flatten too
        assert [outcome(lambda: c) for c in A.array(arr).flatten()] == \
            [outcome(lambda: c) for c in arr.flatten()]


def test_flatten_of_another_column_is_itself():
    theirs = pa.chunked_array([[1], [2]])
    assert [outcome(lambda: c) for c in A.chunked_array(theirs).flatten()] == \
        [outcome(lambda: c) for c in theirs.flatten()]


@pytest.mark.parametrize("chunks", [[["a"], [], ["b", "a"]], [["a", None], ["b"]], [[], []], []],
                         ids=str)
def test_chunked_dictionary_encode_shares_one_dictionary_as_pyarrow(chunks):
    theirs = pa.chunked_array([pa.array(c, pa.string()) for c in chunks], pa.string())
    ours, expected = A.chunked_array(theirs).dictionary_encode(), theirs.dictionary_encode()
    assert outcome(lambda: ours) == outcome(lambda: expected)
    assert [c.dictionary.to_pylist() for c in ours.chunks] == \
        [c.dictionary.to_pylist() for c in expected.chunks]


TABLES = {
    "nulls": lambda: pa.Table.from_batches([
        pa.record_batch({"a": pa.array([1, None, 3]), "b": ["x", "y", None]}),
        pa.record_batch({"a": pa.array([4, 5], pa.int64()), "b": ["z", "w"]})]),
    "batches emptied": lambda: pa.Table.from_batches([
        pa.record_batch({"a": pa.array([None], pa.int64())}),
        pa.record_batch({"a": pa.array([1], pa.int64())}),
        pa.record_batch({"a": pa.array([None], pa.int64())})]),
    "all null": lambda: pa.Table.from_batches([
        pa.record_batch({"a": pa.array([None], pa.int64())}),
        pa.record_batch({"a": pa.array([None], pa.int64())})]),
    "no nulls": lambda: pa.Table.from_batches([
        pa.record_batch({"a": pa.array([1], pa.int64())}),
        pa.record_batch({"a": pa.array([], pa.int64())}),
        pa.record_batch({"a": pa.array([2], pa.int64())})]),
    "null column": lambda: pa.table({"a": [1, 2], "n": pa.nulls(2)}),
    "struct with a null child": lambda: pa.table({"s": pa.array([{"a": None}, None, {"a": 1}])}),
    "union": lambda: pa.table({"u": pa.UnionArray.from_sparse(
        pa.array([0, 0], pa.int8()), [pa.array([1, None])])}),
    "dictionary with a null value": lambda: pa.table({"d": pa.DictionaryArray.from_arrays(
        pa.array([0, 1, None]), pa.array(["a", None]))}),
    "no columns": lambda: pa.table({"a": [1, None]}).select([]),
}


@pytest.mark.parametrize("name", list(TABLES))
def test_table_drop_null_is_pyarrows(name):
    theirs = TABLES[name]()
    got, expected = A.table(theirs).drop_null(), theirs.drop_null()
    assert pa.table(got).equals(expected, check_metadata=True)
    assert [b.num_rows for b in got.to_batches()] == [b.num_rows for b in expected.to_batches()]


@pytest.mark.parametrize("name", list(TABLES))
def test_record_batch_drop_null_is_pyarrows(name):
    theirs = TABLES[name]().combine_chunks().to_batches()
    if not theirs:
        pytest.skip("no batch")
    got, expected = A.record_batch(theirs[0]).drop_null(), theirs[0].drop_null()
    assert pa.record_batch(got).equals(expected, check_metadata=True)


@pytest.mark.parametrize("name", list(SAMPLES))
def test_eq_over_every_kind_of_values_is_pyarrows(name):
    # equal values at other offsets, another value, a null moved: as pyarrow's equals says
    theirs = SAMPLES[name]
    rebuilt = pa.concat_arrays([pa.array([None], theirs.type).cast(theirs.type)
                                if pa.types.is_null(theirs.type) else theirs.slice(0, 1),
                                theirs]).slice(1)
    others = [theirs, rebuilt, theirs.slice(1)]
    if len(theirs) and not pa.types.is_string_view(theirs.type):   # (pyarrow cannot take)
        others.append(theirs[::-1])
    for left in (theirs, theirs.slice(1)):
        for right in others:
            if left.type != right.type:
                continue
            expected = left.equals(right)
            assert (A.array(left) == A.array(right)) is expected, (left, right)
            assert (A.array(left) == right) is expected
