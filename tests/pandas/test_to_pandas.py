"""to_pandas() equals pyarrow 26's, type by type, chunked and sliced, and with each option."""
from __future__ import annotations

import datetime
import os

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

import arrowipc
from strategies import ISSUE2_CASE_IDS, make_table

from pandas_oracle import NOT_CONVERTIBLE, assert_converts_like_pyarrow, assert_same, ours

CASES = [c for c in ISSUE2_CASE_IDS if c not in NOT_CONVERTIBLE]
# pyarrow raises ArrowNotImplementedError for lists of fixed-size binary (and so do we)
TABLE_CASES = [c for c in CASES if c != "large_list_of_fixed_size_binary"]


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("seed", [0, 1])
def test_each_type_matches_pyarrow(case, seed):
    expected_table = make_table([case], [0, 9, 14], seed=seed, null_ratio=0.3)
    assert_converts_like_pyarrow(ours(expected_table), expected_table)


@pytest.mark.parametrize("case", CASES)
def test_each_type_without_nulls(case):
    expected_table = make_table([case], [11], seed=5, null_ratio=0.0)
    assert_converts_like_pyarrow(ours(expected_table), expected_table)


def test_random_wide_tables():
    for seed in range(3):
        expected_table = make_table(TABLE_CASES, [5, 0, 8], seed=seed, null_ratio=0.2)
        assert_same(ours(expected_table).to_pandas(), expected_table.to_pandas())
        assert_same(ours(expected_table).to_pandas(split_blocks=True, use_threads=False),
                    expected_table.to_pandas(split_blocks=True, use_threads=False))


def test_sliced_table():
    expected_table = make_table(TABLE_CASES, [10, 10], seed=4).slice(3, 12)
    assert_same(ours(expected_table).to_pandas(), expected_table.to_pandas())


@pytest.mark.parametrize("case", CASES)
def test_chunked_array_and_array(case):
    table = make_table([case], [6, 7], seed=2)
    col = table.column(0)
    assert_converts_like_pyarrow(ours(table).column(0), col)
    assert_converts_like_pyarrow(ours(col.chunk(1)), col.chunk(1))
    assert_converts_like_pyarrow(arrowipc.table(table).to_batches()[1], table.to_batches()[1])


def test_dictionaries():
    d1 = pa.array(["b", "a", None, "b"]).dictionary_encode()
    d2 = pa.DictionaryArray.from_arrays(pa.array([0, 1, None], pa.int8()), pa.array(["c", "b"]))
    ca = pa.chunked_array([d1, d1.cast(pa.dictionary(pa.int32(), pa.string()))])
    assert_same(ours(ca).to_pandas(), ca.to_pandas())
    # different dictionaries per chunk are unified (first chunk's order, then new values)
    ca2 = pa.chunked_array([d1.cast(pa.dictionary(pa.int8(), pa.string())), d2])
    assert_same(ours(ca2).to_pandas(), ca2.to_pandas())
    t = pa.table({"o": pa.DictionaryArray.from_arrays(pa.array([2, 0, 1], pa.int16()),
                                                     pa.array([10, 20, 30]), ordered=True)})
    assert_same(ours(t).to_pandas(), t.to_pandas())


@pytest.mark.parametrize("index_type", [pa.uint8(), pa.uint16(), pa.uint32(), pa.uint64()])
def test_unsigned_dictionary_indices_convert_like_pyarrow(index_type):
    # pandas' codes are signed (-1 is a null): unsigned indices used to overflow the range check
    d = pa.DictionaryArray.from_arrays(pa.array([0, 1, None, 1], index_type), pa.array(["a", "b"]))
    other = pa.DictionaryArray.from_arrays(pa.array([1, 0], index_type), pa.array(["c", "b"]))
    for t in (pa.table({"x": d}), pa.table({"x": pa.chunked_array([d, other])})):
        assert_same(ours(t).to_pandas(), t.to_pandas())
    # a null slot may hold any index: it is not range-checked
    garbage = pa.Array.from_buffers(index_type, 3, [pa.py_buffer(bytes([0b101])), pa.py_buffer(
        np.array([1, 250, 0], dtype=index_type.to_pandas_dtype()).tobytes())])
    t = pa.table({"x": pa.DictionaryArray.from_arrays(garbage, pa.array(["a", "b"]))})
    assert_same(ours(t).to_pandas(), t.to_pandas())


def test_unsigned_dictionary_index_outside_the_dictionary_is_refused():
    bad = pa.DictionaryArray.from_arrays(pa.array([1, 200], pa.uint8()), pa.array(["a", "b"]),
                                         safe=False)
    with pytest.raises(arrowipc.ArrowInvalid, match="outside the dictionary of 2 values"):
        ours(pa.table({"x": bad})).to_pandas()


def test_gold_unsigned_dictionaries_fail_read_pandas_like_pyarrow():
    import arrowipc.ipc
    import testdata
    path = testdata.required(os.path.join(testdata.integration_dir("1.0.0-littleendian"),
                                          "generated_dictionary_unsigned.stream"))
    # every dictionary of that file holds nulls, which pandas refuses as categories: the
    # same ValueError as pyarrow's (it used to be an OverflowError of the unsigned indices)
    with pytest.raises(ValueError) as expected:
        pa.ipc.open_stream(path).read_pandas()
    with pytest.raises(ValueError) as got:
        arrowipc.ipc.open_stream(path).read_pandas()
    assert str(got.value) == str(expected.value)


def test_time64_nanoseconds_are_not_dropped():
    # pyarrow refuses a time64[ns] value datetime.time cannot hold, whatever `safe` says,
    # at top level, in lists, structs and dictionaries
    arrays = [pa.array([None, 5, 7], pa.time64("ns")),
              pa.array([[1000, 1]], pa.list_(pa.time64("ns"))),
              pa.array([{"a": 3}], pa.struct([("a", pa.time64("ns"))])),
              pa.array([1, 2], pa.time64("ns")).dictionary_encode()]
    for a in arrays:
        t = pa.table({"x": a})
        for safe in (True, False):
            with pytest.raises(pa.ArrowInvalid) as expected:
                t.to_pandas(safe=safe)
            with pytest.raises(arrowipc.ArrowInvalid) as got:
                ours(t).to_pandas(safe=safe)
            assert str(got.value) == str(expected.value)
    # whole microseconds convert, and a null slot's value is not looked at
    null_slot = pa.Array.from_buffers(pa.time64("ns"), 2, [pa.py_buffer(bytes([2])), pa.py_buffer(
        np.array([5, 1000], dtype="i8").tobytes())])
    for a in (pa.array([1000, None], pa.time64("ns")), null_slot):
        t = pa.table({"x": a})
        assert_same(ours(t).to_pandas(), t.to_pandas())


@pytest.mark.parametrize("options", [
    {"coerce_temporal_nanoseconds": True}, {"date_as_object": False},
    {"integer_object_nulls": True}, {"timestamp_as_object": True},
])
def test_options_other_than_types_mapper_leave_index_levels_alone(options):
    # pyarrow converts index levels with the column's to_pandas(types_mapper=...) only
    levels = [pd.date_range("2001-01-01", periods=3, freq="h", unit="us"),
              pd.date_range("2001-01-01", periods=3, freq="h", unit="us", tz="UTC"),
              pd.to_timedelta([1, 2, 3], unit="s").as_unit("us"),
              pd.Index([datetime.date(2000, 1, 1)] * 3, dtype=object),
              pd.Index(pd.array([1, None, 3], dtype="Int64"))]
    for i, level in enumerate(levels):
        df = pd.DataFrame({"a": [1, 2, 3]}, index=level.rename(f"level{i}"))
        t = pa.Table.from_pandas(df)
        assert_same(ours(t).to_pandas(**options), t.to_pandas(**options))
    multi = pd.MultiIndex.from_arrays(levels[:2], names=["x", "y"])
    t = pa.Table.from_pandas(pd.DataFrame({"a": [1, 2, 3]}, index=multi))
    assert_same(ours(t).to_pandas(**options), t.to_pandas(**options))


def test_list_values_typed_by_the_span_of_the_chunks_lists():
    # pyarrow converts the child values the chunk's lists span, null lists included: a null
    # child value outside them (in a slice's neighbours) leaves bools as bools, one under a
    # null list makes them objects
    lists = pa.array([[False], [True, None], [True, False], None, [True], [False, True]],
                     pa.list_(pa.bool_()))
    nested = pa.StructArray.from_arrays([pa.array(range(6)), lists], names=["a", "d"])
    under_null = pa.ListArray.from_arrays(pa.array([0, 2, 3, 4], pa.int32()),
                                          pa.array([True, None, False, True]),
                                          mask=pa.array([True, False, False]))
    for arr in (lists.slice(2, 4), nested.slice(2, 4), under_null, under_null.slice(1),
                pa.array([[1, None], [2], [3]], pa.large_list(pa.int64())).slice(1)):
        t = pa.table({"x": arr})
        assert_same(ours(t).to_pandas(), t.to_pandas())


@pytest.mark.parametrize("split_blocks", [False, True])
def test_zero_copy_only_refusals_come_in_pyarrow_order(split_blocks):
    # a type pandas has no block for is refused before the multi-column block; with split
    # blocks the columns are taken in order, each one's type and then its copy
    import testdata
    path = testdata.required(os.path.join(testdata.integration_dir("0.14.1"),
                                          "generated_interval.arrow_file"))
    table = pa.ipc.open_file(path).read_all()     # durations with nulls, then intervals
    for t in (table, table.select([4, 0])):
        with pytest.raises(pa.ArrowException) as expected:
            t.to_pandas(zero_copy_only=True, split_blocks=split_blocks)
        error = arrowipc.ArrowInvalid if isinstance(expected.value, ValueError) else \
            arrowipc.ArrowNotImplementedError
        with pytest.raises(error):
            ours(t).to_pandas(zero_copy_only=True, split_blocks=split_blocks)


def test_run_end_encoded_fields_like_pyarrow():
    # in a table, pyarrow picks pandas' str dtype by field type: a run-end encoded field of
    # strings gives objects (its arrays alone give str); split blocks refuse those fields
    import testdata
    path = testdata.required(os.path.join(testdata.integration_dir("cpp-21.0.0"),
                                          "generated_run_end_encoded.stream"))
    table = pa.ipc.open_stream(path).read_all()
    assert_same(ours(table).to_pandas(), table.to_pandas())
    assert_same(arrowipc.ipc.open_stream(path).read_pandas(), table.to_pandas())
    with pytest.raises(pa.ArrowNotImplementedError) as expected:
        table.to_pandas(split_blocks=True)
    with pytest.raises(arrowipc.ArrowNotImplementedError) as got:
        ours(table).to_pandas(split_blocks=True)
    assert str(got.value) == str(expected.value)
    strings = pa.RunEndEncodedArray.from_arrays(pa.array([2, 3], pa.int32()), pa.array(["a", None]))
    assert_same(ours(strings).to_pandas(), strings.to_pandas())


@pytest.mark.parametrize("tz", [None, "UTC", "Asia/Tokyo"])
def test_nanosecond_coercion_out_of_range_names_the_type(tz):
    t = pa.table({"x": pa.array([2**62, None], pa.timestamp("s", tz))})
    with pytest.raises(pa.ArrowInvalid) as expected:
        t.to_pandas(coerce_temporal_nanoseconds=True)
    with pytest.raises(arrowipc.ArrowInvalid) as got:
        ours(t).to_pandas(coerce_temporal_nanoseconds=True)
    assert str(got.value) == str(expected.value)


def test_dictionaries_that_cannot_be_unified_fail_like_pyarrow():
    # chunks with different dictionaries are unified, which pyarrow refuses for a dictionary of
    # null type (ArrowNotImplementedError) and for dictionaries holding nulls (ArrowInvalid)
    idx = pa.array([0, 1], pa.int32())
    cases = [[pa.DictionaryArray.from_arrays(idx, pa.nulls(2)),
              pa.DictionaryArray.from_arrays(idx.slice(0, 1), pa.nulls(1))],
             [pa.DictionaryArray.from_arrays(idx, pa.array(["a", None])),
              pa.DictionaryArray.from_arrays(idx.slice(1), pa.array(["q", "b"]))]]
    for chunks in cases:
        t = pa.table({"x": pa.chunked_array(chunks)})
        with pytest.raises(pa.ArrowException) as expected:
            t.to_pandas()
        error = arrowipc.ArrowInvalid if isinstance(expected.value, ValueError) else \
            arrowipc.ArrowNotImplementedError
        with pytest.raises(error) as got:
            ours(t).to_pandas()
        assert str(got.value) == str(expected.value)


def test_timezones_and_units():
    for tz in ("UTC", "Europe/Paris", "+05:30", "-02:00", "America/New_York"):
        for unit in ("s", "ms", "us", "ns"):
            t = pa.table({"t": pa.array([0, None, 1_700_000_000], pa.timestamp(unit, tz))})
            assert_same(ours(t).to_pandas(), t.to_pandas())


@pytest.mark.parametrize("options", [
    {"date_as_object": False},
    {"timestamp_as_object": True},
    {"integer_object_nulls": True},
    {"coerce_temporal_nanoseconds": True},
    {"strings_to_categorical": True},
    {"categories": ["int64", "string"]},
    {"split_blocks": True},
    {"use_threads": False},
    {"deduplicate_objects": False},
    {"maps_as_pydicts": "lossy"},
    {"maps_as_pydicts": "strict"},
    {"ignore_metadata": True},
    {"self_destruct": True},
    {"split_blocks": True, "self_destruct": True},
])
def test_options_match_pyarrow(options):
    cases = ["int64", "bool", "string", "large_string", "date32", "date64", "timestamp_ms",
             "timestamp_us_tz", "duration_s", "map", "list", "struct", "float32", "uint8"]
    expected_table = make_table(cases, [4, 6], seed=3, null_ratio=0.3)
    assert_converts_like_pyarrow(ours(expected_table), expected_table, **options)


def test_strings_to_categorical_takes_every_binary_layout():
    # pyarrow encodes binary, large and view layouts too; fixed-size binary stays objects
    t = pa.table({"s": pa.array(["x", None, "y", "x"]), "b": pa.array([b"x", None, b"y", b"x"]),
                  "lb": pa.array([b"p", b"q", None, b"p"], pa.large_binary()),
                  "sv": pa.array(["a", "b", "a", None], pa.string_view()),
                  "bv": pa.array([b"a", b"b", b"a", None], pa.binary_view()),
                  "fsb": pa.array([b"ab", b"cd", None, b"ab"], pa.binary(2))})
    got = ours(t).to_pandas(strings_to_categorical=True)
    assert [str(d) for d in got.dtypes] == ["category"] * 5 + ["object"]
    assert_same(got, t.to_pandas(strings_to_categorical=True))


def test_coerce_temporal_nanoseconds_in_range():
    t = pa.table({"t": pa.array([0, None, 1_700_000_000_000], pa.timestamp("ms", "UTC")),
                  "d": pa.array([5, None, -3], pa.duration("s")),
                  "day": pa.array([1, None, 19000], pa.date32())})
    opts = {"coerce_temporal_nanoseconds": True, "date_as_object": False}
    assert_same(ours(t).to_pandas(**opts), t.to_pandas(**opts))


def test_timestamp_as_object_nanoseconds():
    t = pa.table({"n": pa.array([1001, None], pa.timestamp("ns")),
                  "z": pa.array([1001, None], pa.timestamp("ns", "UTC"))})
    assert_same(ours(t).to_pandas(timestamp_as_object=True), t.to_pandas(timestamp_as_object=True))


def test_types_mapper():
    t = pa.table({"i": pa.array([1, None, 3]), "f": pa.array([1.5, None, 2.0]),
                  "b": pa.array([True, None, False]),
                  "s": pa.array(["x", None, "z"])})
    mapping = {"int64": pd.Int64Dtype(), "double": pd.Float64Dtype(), "bool": pd.BooleanDtype(),
               "string": pd.StringDtype("python")}

    def by_name(typ):
        return mapping.get(str(typ))
    assert_same(ours(t).to_pandas(types_mapper=by_name), t.to_pandas(types_mapper=by_name))
    # the usual idiom: a dict keyed by pyarrow types (pyarrow is loaded here, so the mapper is
    # given pyarrow types, as pyarrow gives them)
    by_type = {pa.int64(): pd.Int64Dtype(), pa.bool_(): pd.BooleanDtype()}.get
    assert_same(ours(t).to_pandas(types_mapper=by_type), t.to_pandas(types_mapper=by_type))


def test_zero_copy_only():
    t = pa.table({"i": pa.array([1, 2, 3])})
    got = ours(t).to_pandas(zero_copy_only=True, split_blocks=True)
    assert_same(got, t.to_pandas(zero_copy_only=True, split_blocks=True))
    assert_same(ours(t).column(0).to_pandas(zero_copy_only=True),
                t.column(0).to_pandas(zero_copy_only=True))
    with pytest.raises(arrowipc.ArrowInvalid, match="Needed to copy 1 chunks with 1 nulls, but "
                       "zero_copy_only was True"):
        ours(pa.chunked_array([[1, None]])).to_pandas(zero_copy_only=True)
    with pytest.raises(arrowipc.ArrowInvalid, match="Needed to copy 2 chunks with 0 nulls"):
        ours(pa.chunked_array([[1], [2]])).to_pandas(zero_copy_only=True)
    with pytest.raises(arrowipc.ArrowInvalid, match="Zero copy conversions not possible with "
                       "boolean types"):
        ours(pa.array([True])).to_pandas(zero_copy_only=True)
    with pytest.raises(arrowipc.ArrowInvalid, match="Cannot do zero copy conversion into "
                       "multi-column DataFrame block"):
        ours(pa.table({"a": [1]})).to_pandas(zero_copy_only=True)


def test_zero_copy_views():
    t = pa.table({"i": pa.array(np.arange(10)), "t": pa.array(np.arange(10), pa.timestamp("ms"))})
    ours_t = ours(t)
    df = ours_t.to_pandas(split_blocks=True)
    buf = ours_t.column(0).chunks[0].buffers()[1]
    assert np.shares_memory(df["i"].to_numpy(), np.frombuffer(buf, dtype="int64"))
    arr = ours(t.column(1).chunk(0))
    s = arr.to_pandas()
    tbuf = arr.buffers()[1]
    assert np.shares_memory(s.to_numpy(), np.frombuffer(tbuf, dtype="int64"))
    # consolidated blocks (the default) are copies, as in pyarrow
    assert not np.shares_memory(ours_t.to_pandas()["i"].to_numpy(),
                                np.frombuffer(buf, dtype="int64"))


def test_unsupported_types_raise_like_pyarrow():
    u = pa.UnionArray.from_sparse(pa.array([0, 1], pa.int8()), [pa.array([1, 2]), pa.array(["a", "b"])])
    with pytest.raises(arrowipc.ArrowNotImplementedError, match="No known equivalent Pandas block"):
        ours(u).to_pandas()


def test_run_end_encoded():
    ree = pa.RunEndEncodedArray.from_arrays([2, 5, 6], [1, None, 3])
    assert_same(ours(ree).to_pandas(), ree.to_pandas())
    assert_same(ours(ree.slice(1, 4)).to_pandas(), ree.slice(1, 4).to_pandas())


def test_extension_types():
    u = pa.array([b"0123456789abcdef", None], pa.uuid())
    assert_same(ours(u).to_pandas(), u.to_pandas())
    b8 = pa.array([1, 0, None], pa.bool8())
    assert_same(ours(b8).to_pandas(), b8.to_pandas())


def test_column_name_from_table():
    t = pa.table({"a": [1, 2]})
    s = ours(t).column("a").to_pandas()
    assert_same(s, t.column("a").to_pandas())


def test_empty_and_no_columns():
    t = pa.table({"a": pa.array([], pa.int64()), "s": pa.array([], pa.string())})
    assert_same(ours(t).to_pandas(), t.to_pandas())
    e = pa.table({})
    assert_same(ours(e).to_pandas(), e.to_pandas())


def test_view_and_list_view_types():
    t = pa.table({"sv": pa.array(["a", None, "ccc" * 10], pa.string_view()),
                  "bv": pa.array([b"a", None, b"x" * 20], pa.binary_view()),
                  "lv": pa.array([[1, 2], None, []], pa.list_view(pa.int64()))})
    assert_same(ours(t).to_pandas(), t.to_pandas())


@pytest.mark.parametrize("unit", ["s", "ms", "us", "ns"])
@pytest.mark.parametrize("tz", [None, "UTC", "Europe/Paris", "+03:00"])
def test_nested_timestamps(unit, tz):
    t = pa.timestamp(unit, tz)
    values = [1001, None, 1_700_000_000]
    cols = {"list": pa.array([values, None], pa.list_(t)),
            "struct": pa.array([{"x": v} for v in values], pa.struct([("x", t)])),
            "map": pa.array([[(1, v)] for v in values], pa.map_(pa.int8(), t))}
    for arr in cols.values():
        assert_converts_like_pyarrow(ours(arr), arr)


def test_types_mapper_to_arrow_dtype():
    # pandas.ArrowDtype is built by pandas from pyarrow arrays: handed over zero-copy
    t = pa.table({"i": pa.array([1, None, 3]), "s": pa.array(["a", None, "c"])})
    assert_same(ours(t).to_pandas(types_mapper=pd.ArrowDtype), t.to_pandas(types_mapper=pd.ArrowDtype))


@pytest.mark.parametrize("dedup", [True, False])
def test_python_string_storage_many_distinct_values(dedup):
    # more distinct values than the deduplication table remembers, each repeated
    values = [f"value-{i % 50_000}" if i % 7 else None for i in range(120_000)]
    arr = pa.array(values, pa.large_string())
    python_str = pd.StringDtype("python", na_value=np.nan)
    got = ours(arr).to_pandas(types_mapper=lambda t: python_str, deduplicate_objects=dedup)
    expected = arr.to_pandas(types_mapper=lambda t: python_str, deduplicate_objects=dedup)
    assert_same(got, expected)
    objs = got.array._ndarray
    if dedup:
        assert objs[2] is objs[50_002]               # remembered: one object per value
    binary = pa.array([v.encode() if v else None for v in values])
    got_b = ours(binary).to_pandas(deduplicate_objects=dedup)
    assert_same(got_b, binary.to_pandas(deduplicate_objects=dedup))


def test_property_random_batches():
    """Random type mixes, lengths, null ratios and slices: pyarrow's DataFrame or pyarrow's
    error, every time."""
    from hypothesis import HealthCheck, given, settings
    from strategies import record_batches

    @settings(max_examples=80, deadline=None, suppress_health_check=list(HealthCheck))
    @given(record_batches(max_columns=5, max_length=30))
    def check(sample):
        batch, (offset, length) = sample
        if any(name.rsplit("_", 1)[0] in NOT_CONVERTIBLE for name in batch.schema.names):
            return
        sliced = batch.slice(offset, length)
        assert_converts_like_pyarrow(ours(sliced), sliced)
        table = pa.Table.from_batches([sliced, batch])
        assert_converts_like_pyarrow(ours(table), table)
    check()


def test_without_pandas_api_internals(monkeypatch):
    """pandas releases without pandas.api.internals get the same frame via the constructor."""
    import sys
    expected_table = make_table(["int64", "string", "float32", "timestamp_ms_tz", "bool"], [5, 4],
                                seed=8)
    expected = expected_table.to_pandas()            # pyarrow needs the module itself
    monkeypatch.setitem(sys.modules, "pandas.api.internals", None)   # import fails
    assert_same(ours(expected_table).to_pandas(), expected)
    assert_same(ours(expected_table).to_pandas(split_blocks=True), expected)


def test_pandas_2_strings_are_objects(monkeypatch):
    """Before pandas 3 (and without future.infer_string) pyarrow gives strings as objects with
    None for nulls; so do we."""
    monkeypatch.setattr(pd, "__version__", "2.2.3")
    t = pa.table({"s": pa.array(["x", None, "x"]),
                  "l": pa.array(["y", None, "z"], pa.large_string())})
    df = ours(t).to_pandas()
    assert df["s"].dtype == object and df["l"].dtype == object
    assert df["s"].tolist() == ["x", None, "x"] and df["l"].tolist() == ["y", None, "z"]
    assert df["s"].iloc[0] is df["s"].iloc[2]          # deduplicated
