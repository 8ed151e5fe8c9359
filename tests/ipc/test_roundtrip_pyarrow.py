"""Round trips with pyarrow as the oracle, both directions, for every issue-2 type.

  pyarrow writes (stream, file)  -> arrowipc reads : equal to what was written
  arrowipc writes (stream, file) -> pyarrow reads  : equal, and validate(full=True) passes

plus nulls, slices at odd offsets, empty / zero-row / zero-column batches, many batches, schema,
field (nested), per-batch and file-footer metadata, and the reader/writer API that mirrors
pyarrow.ipc (context managers, stats, iteration, read_all, StopIteration, write_table chunking,
num_record_batches, count_rows, included_fields).
"""
import io

import pytest

pa = pytest.importorskip("pyarrow")
import pyarrow.ipc as pa_ipc  # noqa: E402

import arrowipc  # noqa: E402
from arrowipc import ipc  # noqa: E402

import strategies as S  # noqa: E402

FORMS = ["stream", "file"]
CASES = S.ISSUE2_CASE_IDS


# ---------------------------------------------------------------------------------------------
# helpers

def pa_write(batches, form, schema=None, custom_metadata=None, metadata=None):
    if form == "stream":
        return S.pa_stream_bytes(batches, schema, custom_metadata)
    return S.pa_file_bytes(batches, schema, custom_metadata, metadata=metadata)


def ours_write(batches, form, schema, custom_metadata=None, metadata=None, options=None):
    """Write arrowipc batches with arrowipc into a BufferOutputStream; return the bytes."""
    sink = arrowipc.BufferOutputStream()
    if form == "stream":
        writer = ipc.new_stream(sink, schema, options=options)
    else:
        writer = ipc.new_file(sink, schema, options=options, metadata=metadata)
    with writer:
        for i, batch in enumerate(batches):
            if custom_metadata is None:
                writer.write_batch(batch)
            else:
                writer.write_batch(batch, custom_metadata=custom_metadata[i])
    return S.as_bytes(sink.getvalue())


def ours_read_batches(data, form, options=None):
    """(schema, [batches]) read by arrowipc from bytes."""
    if form == "stream":
        with ipc.open_stream(data, options=options) as reader:
            return reader.schema, list(reader)
    with ipc.open_file(data, options=options) as reader:
        return reader.schema, [reader.get_batch(i) for i in range(reader.num_record_batches)]


def ours_read_table(data, form):
    opener = ipc.open_stream if form == "stream" else ipc.open_file
    with opener(data) as reader:
        return reader.read_all()


def import_batches(pa_batches):
    return [arrowipc.record_batch(b) for b in pa_batches]


def check_pa_to_ours(pa_batches, form, schema=None):
    schema = schema if schema is not None else pa_batches[0].schema
    expected = pa.Table.from_batches(pa_batches, schema=schema)
    data = pa_write(pa_batches, form, schema)
    S.assert_table_matches(ours_read_table(data, form), expected)
    got_schema, got_batches = ours_read_batches(data, form)
    S.assert_schema_equal(S.to_pa_schema(got_schema), schema)
    assert len(got_batches) == len(pa_batches)
    for ours, theirs in zip(got_batches, pa_batches):
        S.assert_batch_matches(ours, theirs)


def check_ours_to_pa(pa_batches, form, schema=None, ours_batches=None):
    schema = schema if schema is not None else pa_batches[0].schema
    expected = pa.Table.from_batches(pa_batches, schema=schema)
    if ours_batches is None:
        ours_batches = import_batches(pa_batches)
    data = ours_write(ours_batches, form, arrowipc.schema(schema))
    S.assert_pa_reads_back(data, expected, form, [b.num_rows for b in pa_batches])


# ---------------------------------------------------------------------------------------------
# every type, both directions, both forms

@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize("case", CASES)
def test_pyarrow_writes_arrowipc_reads(case, form):
    # three batches: with nulls, empty, no nulls
    batches = [S.make_batch([case], 40, seed=1), S.make_batch([case], 0, seed=2),
               S.make_batch([case], 19, seed=3, null_ratio=0.0)]
    check_pa_to_ours(batches, form)


@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize("case", CASES)
def test_arrowipc_writes_pyarrow_reads(case, form):
    batches = [S.make_batch([case], 40, seed=4), S.make_batch([case], 0, seed=5),
               S.make_batch([case], 19, seed=6, null_ratio=0.0)]
    check_ours_to_pa(batches, form)


@pytest.mark.parametrize("case", CASES)
def test_all_null_column_round_trips(case):
    batch = S.make_batch([case], 21, seed=7, null_ratio=1.0)
    check_pa_to_ours([batch], "stream")
    check_ours_to_pa([batch], "stream")


# ---------------------------------------------------------------------------------------------
# slices: offsets that are not a multiple of 8 reach bitmaps, offsets and children

SLICES = [(3, 17), (1, 0), (13, 27)]


@pytest.mark.parametrize("start,length", SLICES, ids=[f"slice{s}_{n}" for s, n in SLICES])
@pytest.mark.parametrize("case", CASES)
def test_sliced_pyarrow_batch_written_by_arrowipc(case, start, length):
    # the imported batch keeps pyarrow's offset; the writer must truncate and shift
    full = S.make_batch([case], 40, seed=8)
    sliced = full.slice(start, length)
    check_ours_to_pa([sliced], "stream", ours_batches=[arrowipc.record_batch(sliced)])


@pytest.mark.parametrize("case", CASES)
def test_arrowipc_slice_written_by_arrowipc(case):
    full = S.make_batch([case], 40, seed=9)
    ours_sliced = arrowipc.record_batch(full).slice(3, 17)
    check_ours_to_pa([full.slice(3, 17)], "file", ours_batches=[ours_sliced])


@pytest.mark.parametrize("case", CASES)
def test_sliced_batch_written_by_pyarrow_read_by_arrowipc(case):
    full = S.make_batch([case], 40, seed=10)
    check_pa_to_ours([full.slice(3, 17), full.slice(21, 11)], "stream")


@pytest.mark.parametrize("form", FORMS)
def test_arrowipc_reads_then_slices(form):
    full = S.make_batch(CASES, 40, seed=11)
    _, (batch,) = ours_read_batches(pa_write([full], form), form)
    S.assert_batch_matches(batch.slice(3, 17), full.slice(3, 17))


# ---------------------------------------------------------------------------------------------
# batch shapes

@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize("direction", ["pa_to_ours", "ours_to_pa"])
def test_all_types_in_one_batch(direction, form):
    batches = [S.make_batch(CASES, 33, seed=12), S.make_batch(CASES, 8, seed=13)]
    (check_pa_to_ours if direction == "pa_to_ours" else check_ours_to_pa)(batches, form)


@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize("direction", ["pa_to_ours", "ours_to_pa"])
def test_many_batches(direction, form):
    case_ids = ["int32", "string", "list", "struct", "bool"]
    batches = [S.make_batch(case_ids, n % 7, seed=n) for n in range(60)]
    (check_pa_to_ours if direction == "pa_to_ours" else check_ours_to_pa)(batches, form)


@pytest.mark.parametrize("form", FORMS)
def test_zero_batches_pyarrow_to_arrowipc(form):
    schema = S.make_batch(CASES, 0).schema
    data = pa_write([], form, schema=schema)
    table = ours_read_table(data, form)
    assert table.num_rows == 0
    S.assert_table_matches(table, pa.Table.from_batches([], schema=schema), check_batches=False)
    got_schema, got_batches = ours_read_batches(data, form)
    assert got_batches == []
    S.assert_schema_equal(S.to_pa_schema(got_schema), schema)


@pytest.mark.parametrize("form", FORMS)
def test_zero_batches_arrowipc_to_pyarrow(form):
    schema = S.make_batch(CASES, 0).schema
    data = ours_write([], form, arrowipc.schema(schema))
    got = S.assert_pa_reads_back(data, pa.Table.from_batches([], schema=schema), form, batch_lengths=[])
    assert got.num_rows == 0
    if form == "file":
        assert pa_ipc.open_file(pa.py_buffer(data)).num_record_batches == 0


@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize("direction", ["pa_to_ours", "ours_to_pa"])
def test_zero_row_batch(direction, form):
    batches = [S.make_batch(["int64", "string", "list", "struct", "map"], 0, seed=14)]
    (check_pa_to_ours if direction == "pa_to_ours" else check_ours_to_pa)(batches, form)


@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize("direction", ["pa_to_ours", "ours_to_pa"])
def test_zero_column_batches_keep_row_count(direction, form):
    batches = [pa.record_batch({"a": [1, 2, 3]}).select([]),
               pa.record_batch({"a": list(range(11))}).select([])]
    assert batches[0].num_rows == 3 and batches[0].num_columns == 0
    (check_pa_to_ours if direction == "pa_to_ours" else check_ours_to_pa)(batches, form)
    if direction == "pa_to_ours":
        _, got = ours_read_batches(pa_write(batches, form), form)
        assert [(b.num_rows, b.num_columns) for b in got] == [(3, 0), (11, 0)]


@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize("direction", ["pa_to_ours", "ours_to_pa"])
def test_non_nullable_fields(direction, form):
    schema = pa.schema([
        pa.field("id", pa.int64(), nullable=False),
        pa.field("name", pa.string(), nullable=False),
        pa.field("tags", pa.list_(pa.field("tag", pa.string(), nullable=False)), nullable=False),
        pa.field("point", pa.struct([pa.field("x", pa.float64(), nullable=False),
                                     pa.field("y", pa.float64())])),
    ])
    batch = pa.record_batch([
        pa.array([1, 2, 3], pa.int64()),
        pa.array(["a", "", "ccc"]),
        pa.array([["x"], [], ["y", "z"]], schema.field("tags").type),
        pa.array([{"x": 1.0, "y": None}, None, {"x": -2.5, "y": 3.0}], schema.field("point").type),
    ], schema=schema)
    (check_pa_to_ours if direction == "pa_to_ours" else check_ours_to_pa)([batch], form)


@pytest.mark.parametrize("direction", ["pa_to_ours", "ours_to_pa"])
def test_float_special_values_bit_exact(direction):
    values = [float("nan"), float("inf"), float("-inf"), -0.0, 0.0, 5e-324, None, 1.7976931348623157e308]
    batch = pa.record_batch({"f64": pa.array(values, pa.float64()), "f32": pa.array(values, pa.float32())})
    if direction == "pa_to_ours":
        _, (got,) = ours_read_batches(pa_write([batch], "stream"), "stream")
        got = S.to_pa_batch(got)
    else:
        data = ours_write([arrowipc.record_batch(batch)], "stream", arrowipc.schema(batch.schema))
        got = pa_ipc.open_stream(pa.py_buffer(data)).read_next_batch()
        got.validate(full=True)
    # compare bit patterns: NaN == NaN and -0.0 != 0.0
    for name, int_type in (("f64", pa.int64()), ("f32", pa.int32())):
        assert got.column(name).view(int_type).equals(batch.column(name).view(int_type)), name
    S.assert_pylist_equal(got.column("f64").to_pylist(), batch.column("f64").to_pylist())


@pytest.mark.parametrize("form", FORMS)
def test_larger_batch_round_trips(form):
    # a few thousand rows: multi-byte bitmaps, long offsets buffers
    batch = S.make_batch(["bool", "int16", "string", "list", "struct", "decimal128"], 5000, seed=15)
    check_pa_to_ours([batch], form)
    check_ours_to_pa([batch], form)


# ---------------------------------------------------------------------------------------------
# metadata

NESTED_METADATA_SCHEMA = pa.schema(
    [
        pa.field("plain", pa.int32(), metadata={b"unit": b"meters", b"empty": b""}),
        pa.field("nested", pa.struct([
            pa.field("inner", pa.string(), metadata={b"inner_key": b"inner_value"}),
            pa.field("deeper", pa.struct([pa.field("leaf", pa.int8(), metadata={b"leaf": b"1"})]),
                     metadata={b"level": b"2"}),
        ]), metadata={b"level": b"1"}),
        pa.field("items", pa.list_(pa.field("item", pa.float64(), metadata={b"item_meta": b"\x00\xffbinary"}))),
        pa.field("lookup", pa.map_(pa.string(), pa.field("value", pa.int64(), metadata={b"v": b"x"}))),
        pa.field("utf8_meta", pa.bool_(), metadata={"clé".encode(): "välue €".encode()}),
    ],
    metadata={b"schema_key": b"schema_value", b"pandas": b'{"x": 1}', b"": b"empty key"},
)


def metadata_batch(seed=16, length=12):
    arrays = [S.make_array(f.type, length, seed + i) for i, f in enumerate(NESTED_METADATA_SCHEMA)]
    return pa.RecordBatch.from_arrays(arrays, schema=NESTED_METADATA_SCHEMA)


def test_metadata_schema_is_what_we_think():
    # guard: pyarrow keeps nested field metadata in the schema we test with
    item = NESTED_METADATA_SCHEMA.field("items").type.value_field
    assert item.metadata == {b"item_meta": b"\x00\xffbinary"}


@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize("direction", ["pa_to_ours", "ours_to_pa"])
def test_schema_and_nested_field_metadata(direction, form):
    batches = [metadata_batch(), metadata_batch(seed=30, length=0)]
    (check_pa_to_ours if direction == "pa_to_ours" else check_ours_to_pa)(batches, form)


@pytest.mark.parametrize("form", FORMS)
def test_arrowipc_schema_object_carries_metadata(form):
    got_schema, _ = ours_read_batches(pa_write([metadata_batch()], form), form)
    assert got_schema.metadata == NESTED_METADATA_SCHEMA.metadata
    assert got_schema.field(0).metadata == {b"unit": b"meters", b"empty": b""}
    assert got_schema.field(1).type.field(0).metadata == {b"inner_key": b"inner_value"}


CUSTOM = [{b"batch": b"0", b"extra": b"\x00\x01"}, None, {b"batch": b"2"},
          {f"key{i:03d}".encode(): b"v" * i for i in range(40)}]


def normalise_custom(metadata):
    if metadata is None:
        return None
    return {bytes(k): bytes(v) for k, v in dict(metadata).items()}


def custom_batches():
    return [S.make_batch(["int32", "string"], n, seed=n) for n in (5, 0, 9, 3)]


def expected_custom():
    return [normalise_custom(m) for m in CUSTOM]


def test_custom_metadata_pyarrow_stream_to_arrowipc():
    batches = custom_batches()
    data = S.pa_stream_bytes(batches, custom_metadata=CUSTOM)
    got = []
    with ipc.open_stream(data) as reader:
        while True:
            try:
                batch, custom = reader.read_next_batch_with_custom_metadata()
            except StopIteration:
                break
            got.append((batch, custom))
    assert len(got) == len(batches)
    for (ours, _), theirs in zip(got, batches):
        S.assert_batch_matches(ours, theirs)
    assert [normalise_custom(c) for _, c in got] == expected_custom()


def test_custom_metadata_pyarrow_file_to_arrowipc():
    batches = custom_batches()
    data = S.pa_file_bytes(batches, custom_metadata=CUSTOM)
    with ipc.open_file(data) as reader:
        got = [reader.get_batch_with_custom_metadata(i) for i in range(reader.num_record_batches)]
    assert len(got) == len(batches)
    for pair, theirs in zip(got, batches):
        batch, _ = pair
        S.assert_batch_matches(batch, theirs)
    assert [normalise_custom(pair[1]) for pair in got] == expected_custom()


@pytest.mark.parametrize("form", FORMS)
def test_custom_metadata_arrowipc_to_pyarrow(form):
    batches = custom_batches()
    data = ours_write(import_batches(batches), form, arrowipc.schema(batches[0].schema), custom_metadata=CUSTOM)
    if form == "stream":
        pairs = list(pa_ipc.open_stream(pa.py_buffer(data)).iter_batches_with_custom_metadata())
    else:
        reader = pa_ipc.open_file(pa.py_buffer(data))
        pairs = [reader.get_batch_with_custom_metadata(i) for i in range(reader.num_record_batches)]
    assert [normalise_custom(p.custom_metadata) for p in pairs] == expected_custom()
    for pair, theirs in zip(pairs, batches):
        pair.batch.validate(full=True)
        assert pair.batch.equals(theirs)


def test_custom_metadata_str_keys_become_bytes():
    # like pyarrow, str keys and values are accepted and stored as UTF-8
    batch = S.make_batch(["int8"], 3)
    data = ours_write([arrowipc.record_batch(batch)], "stream", arrowipc.schema(batch.schema),
                      custom_metadata=[{"clé": "välue"}])
    pair = pa_ipc.open_stream(pa.py_buffer(data)).read_next_batch_with_custom_metadata()
    assert normalise_custom(pair.custom_metadata) == {"clé".encode(): "välue".encode()}


FOOTER = {b"footer_key": b"footer_value", b"writer": b"arrowipc tests"}


def test_footer_metadata_pyarrow_to_arrowipc():
    batch = S.make_batch(["int64"], 4)
    data = S.pa_file_bytes([batch], metadata=FOOTER)
    with ipc.open_file(data) as reader:
        assert normalise_custom(reader.metadata) == FOOTER


def test_footer_metadata_arrowipc_to_pyarrow():
    batch = S.make_batch(["int64"], 4)
    data = ours_write([arrowipc.record_batch(batch)], "file", arrowipc.schema(batch.schema), metadata=FOOTER)
    assert normalise_custom(pa_ipc.open_file(pa.py_buffer(data)).metadata) == FOOTER


def test_footer_metadata_absent_is_none():
    batch = S.make_batch(["int64"], 4)
    with ipc.open_file(S.pa_file_bytes([batch])) as reader:
        assert reader.metadata is None
    data = ours_write([arrowipc.record_batch(batch)], "file", arrowipc.schema(batch.schema))
    assert pa_ipc.open_file(pa.py_buffer(data)).metadata is None


# ---------------------------------------------------------------------------------------------
# write paths beyond write_batch

@pytest.mark.parametrize("form", FORMS)
def test_write_table_from_imported_table(form):
    table = S.make_table(["int32", "string", "struct", "month_interval"], [10, 7, 0, 4], seed=17,
                         metadata={b"t": b"1"})
    ours = arrowipc.table(table)
    sink = arrowipc.BufferOutputStream()
    opener = ipc.new_stream if form == "stream" else ipc.new_file
    with opener(sink, ours.schema) as writer:
        writer.write_table(ours)
    S.assert_pa_reads_back(S.as_bytes(sink.getvalue()), table, form, [10, 7, 0, 4])


@pytest.mark.parametrize("form", FORMS)
def test_write_table_max_chunksize_splits_like_pyarrow(form):
    table = S.make_table(["int64", "string", "list"], [5, 3], seed=18)
    ours = arrowipc.table(table)
    sink = arrowipc.BufferOutputStream()
    opener = ipc.new_stream if form == "stream" else ipc.new_file
    with opener(sink, ours.schema) as writer:
        writer.write_table(ours, max_chunksize=2)
    data = S.as_bytes(sink.getvalue())
    expected_lengths = [b.num_rows for b in pa_ipc.open_stream(S.pa_stream_bytes(table, max_chunksize=2))]
    assert expected_lengths == [2, 2, 1, 2, 1]
    S.assert_pa_reads_back(data, table, form, expected_lengths)


def test_writer_accepts_pyarrow_objects_through_capsules():
    # "our writers take theirs": a pyarrow schema, batch and table go in without conversion
    batch = S.make_batch(["int32", "string", "list"], 10, seed=19)
    table = pa.Table.from_batches([batch, batch.slice(2, 5)])
    sink = arrowipc.BufferOutputStream()
    with ipc.new_stream(sink, batch.schema) as writer:
        writer.write_batch(batch)
        writer.write_table(table)
    expected = pa.Table.from_batches([batch, batch, batch.slice(2, 5)])
    S.assert_pa_reads_back(S.as_bytes(sink.getvalue()), expected, "stream", [10, 10, 5])


@pytest.mark.parametrize("form", FORMS)
def test_write_options_alignment_8_round_trips(form):
    batch = S.make_batch(CASES, 23, seed=20)
    data = ours_write([arrowipc.record_batch(batch)], form, arrowipc.schema(batch.schema),
                      options=ipc.IpcWriteOptions(alignment=8))
    S.assert_pa_reads_back(data, pa.Table.from_batches([batch]), form, [23])


def test_write_batch_with_wrong_schema_is_rejected():
    batch = S.make_batch(["int32"], 3)
    other = S.make_batch(["string"], 3)
    sink = arrowipc.BufferOutputStream()
    with ipc.new_stream(sink, arrowipc.schema(batch.schema)) as writer:
        with pytest.raises((ValueError, TypeError)):
            writer.write_batch(arrowipc.record_batch(other))


# ---------------------------------------------------------------------------------------------
# property test: random type mixes, lengths, null ratios and slices, both directions

def test_random_batches_round_trip_both_directions():
    pytest.importorskip("hypothesis")
    from hypothesis import HealthCheck, given, settings

    @settings(max_examples=30, deadline=None, database=None,
              suppress_health_check=[HealthCheck.too_slow])
    @given(S.record_batches())
    def check(batch_and_slice):
        batch, (start, length) = batch_and_slice
        sliced = batch.slice(start, length)
        check_pa_to_ours([sliced], "stream")
        check_ours_to_pa([sliced], "file", ours_batches=[arrowipc.record_batch(batch).slice(start, length)])

    check()


# ---------------------------------------------------------------------------------------------
# reader / writer API mirroring pyarrow.ipc

def api_table():
    return S.make_table(["int32", "string", "float64"], [4, 3, 5], seed=21)


@pytest.mark.parametrize("form", FORMS)
def test_reader_is_a_context_manager_and_has_schema(form):
    table = api_table()
    data = pa_write(table.to_batches(), form)
    opener = ipc.open_stream if form == "stream" else ipc.open_file
    with opener(data) as reader:
        S.assert_schema_equal(S.to_pa_schema(reader.schema), table.schema)
        assert [reader.schema.field(i).name for i in range(3)] == ["int32", "string", "float64"]


def test_stream_reader_iterates_batches():
    table = api_table()
    reader = ipc.open_stream(S.pa_stream_bytes(table))
    got = [b for b in reader]
    assert [b.num_rows for b in got] == [4, 3, 5]
    for ours, theirs in zip(got, table.to_batches()):
        S.assert_batch_matches(ours, theirs)


def test_stream_read_next_batch_raises_stop_iteration_at_end():
    table = api_table()
    reader = ipc.open_stream(S.pa_stream_bytes(table))
    lengths = [reader.read_next_batch().num_rows for _ in range(3)]
    assert lengths == [4, 3, 5]
    with pytest.raises(StopIteration):
        reader.read_next_batch()
    with pytest.raises(StopIteration):
        reader.read_next_batch_with_custom_metadata()


def test_stream_read_all_after_partial_read_returns_the_rest():
    # pyarrow's read_all returns the batches not yet consumed
    table = api_table()
    data = S.pa_stream_bytes(table)
    theirs = pa_ipc.open_stream(data)
    theirs.read_next_batch()
    expected = theirs.read_all()
    ours = ipc.open_stream(data)
    ours.read_next_batch()
    S.assert_table_matches(ours.read_all(), expected)


def test_stream_reader_stats_match_pyarrow():
    table = api_table()
    data = S.pa_stream_bytes(table)
    theirs, ours = pa_ipc.open_stream(data), ipc.open_stream(data)
    for step in range(4):
        for reader in (theirs, ours):
            try:
                reader.read_next_batch()
            except StopIteration:
                pass
        for field in ("num_messages", "num_record_batches", "num_dictionary_batches",
                      "num_dictionary_deltas", "num_replaced_dictionaries"):
            assert getattr(ours.stats, field) == getattr(theirs.stats, field), (step, field)


@pytest.mark.parametrize("form", FORMS)
def test_writer_stats_match_pyarrow(form):
    table = api_table()
    theirs_sink = pa.BufferOutputStream()
    theirs = (pa_ipc.new_stream if form == "stream" else pa_ipc.new_file)(theirs_sink, table.schema)
    ours_table = arrowipc.table(table)
    ours = (ipc.new_stream if form == "stream" else ipc.new_file)(arrowipc.BufferOutputStream(), ours_table.schema)
    for writer, source in ((theirs, table), (ours, ours_table)):
        writer.write_table(source)
        writer.write_table(source, max_chunksize=2)
        writer.close()
    for field in ("num_messages", "num_record_batches", "num_dictionary_batches",
                  "num_dictionary_deltas", "num_replaced_dictionaries"):
        assert getattr(ours.stats, field) == getattr(theirs.stats, field), field


def test_file_reader_random_access_and_counts():
    table = api_table()
    data = S.pa_file_bytes(table)
    with ipc.open_file(data) as reader:
        assert reader.num_record_batches == 3
        assert reader.count_rows() == 12
        expected = table.to_batches()
        for i in (2, 0, 1, 2):  # any order, repeated
            S.assert_batch_matches(reader.get_batch(i), expected[i])
        assert reader.stats.num_record_batches >= 3
        with pytest.raises((IndexError, ValueError)):
            reader.get_batch(3)
        S.assert_table_matches(reader.read_all(), table)


def test_file_reader_stats_count_batches_read():
    table = api_table()
    with ipc.open_file(S.pa_file_bytes(table)) as reader:
        for i in range(reader.num_record_batches):
            reader.get_batch(i)
        assert reader.stats.num_record_batches == 3


@pytest.mark.parametrize("form", FORMS)
def test_included_fields_projection(form):
    table = S.make_table(["int32", "string", "struct", "float64"], [6, 4], seed=22)
    data = pa_write(table.to_batches(), form)
    options = ipc.IpcReadOptions(included_fields=[3, 1])
    theirs_options = pa_ipc.IpcReadOptions(included_fields=[3, 1])
    if form == "stream":
        expected_reader = pa_ipc.open_stream(data, options=theirs_options)
        expected = expected_reader.read_all()
        reader = ipc.open_stream(data, options=options)
        got = reader.read_all()
    else:
        expected_reader = pa_ipc.open_file(data, options=theirs_options)
        expected = expected_reader.read_all()
        reader = ipc.open_file(data, options=options)
        S.assert_batch_matches(reader.get_batch(1), expected.to_batches()[1])
        got = reader.read_all()
    assert expected.column_names == ["string", "float64"]
    S.assert_schema_equal(S.to_pa_schema(reader.schema), expected_reader.schema)
    S.assert_table_matches(got, expected)


@pytest.mark.parametrize("form", FORMS)
def test_writer_context_manager_closes_and_finishes(form):
    table = api_table()
    ours = arrowipc.table(table)
    sink = io.BytesIO()
    opener = ipc.new_stream if form == "stream" else ipc.new_file
    with opener(sink, ours.schema) as writer:
        writer.write_table(ours)
    # like pyarrow: the writer closes itself, not the sink
    assert not sink.closed
    S.assert_pa_reads_back(sink.getvalue(), table, form, [4, 3, 5])


def test_ipc_module_names_mirror_pyarrow():
    for name in ("RecordBatchStreamReader", "RecordBatchStreamWriter", "RecordBatchFileReader",
                 "RecordBatchFileWriter", "IpcReadOptions", "IpcWriteOptions", "MetadataVersion",
                 "ReadStats", "WriteStats", "MessageReader", "read_schema", "read_record_batch",
                 "read_message", "open_stream", "open_file", "new_stream", "new_file"):
        assert hasattr(ipc, name), name
    reader = ipc.open_stream(S.pa_stream_bytes(api_table()))
    assert isinstance(reader, ipc.RecordBatchStreamReader)
    assert isinstance(ipc.open_file(S.pa_file_bytes(api_table())), ipc.RecordBatchFileReader)
    table = arrowipc.table(api_table())
    assert isinstance(ipc.new_stream(arrowipc.BufferOutputStream(), table.schema), ipc.RecordBatchStreamWriter)
    assert isinstance(ipc.new_file(arrowipc.BufferOutputStream(), table.schema), ipc.RecordBatchFileWriter)
