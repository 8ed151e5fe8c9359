"""RecordBatchFileReader.values_in_file: where a fixed-width column's values lie in the file,
from a record batch's header alone (what a dataset count reads in place of decoding)."""
import os

import numpy as np
import pyarrow as pa
import pyarrow.ipc as pipc
import pytest

from arrowipc.ipc import open_file
from arrowipc.ipc._batch_decode import decode_record_batch_header, fixed_width_values

GOLD = os.path.join(os.path.dirname(__file__), "..", "data", "arrow-testing", "data",
                    "arrow-ipc-stream", "integration", "1.0.0-bigendian")


def _file_bytes(table, **options):
    sink = pa.BufferOutputStream()
    with pipc.new_file(sink, table.schema, options=pipc.IpcWriteOptions(**options)) as w:
        w.write_table(table, max_chunksize=300)
    return sink.getvalue().to_pybytes()


def _mixed_table():
    """Number columns of every width behind columns whose buffers come first and vary in
    count: strings, views (variadic buffers), lists, structs, booleans, dictionaries."""
    n = 1000
    rng = np.random.default_rng(1)
    return pa.table({
        "s": pa.array([f"v{i}" for i in range(n)]),
        "view": pa.array([f"a long enough string {i}" for i in range(n)], pa.string_view()),
        "lst": pa.array([[i, i + 1] for i in range(n)], pa.list_(pa.int32())),
        "st": pa.array([{"x": i, "y": str(i)} for i in range(n)]),
        "flag": pa.array(rng.integers(0, 2, n).astype(bool)),
        "dict": pa.array([f"k{i % 4}" for i in range(n)]).dictionary_encode(),
        "i8": pa.array(rng.integers(-100, 100, n).astype(np.int8)),
        "u16": pa.array(rng.integers(0, 60000, n).astype(np.uint16)),
        "i32": pa.array(rng.integers(-10**9, 10**9, n).astype(np.int32)),
        "i64": pa.array(rng.integers(-10**15, 10**15, n)),
        "f32": pa.array(rng.random(n).astype(np.float32)),
        "f64": pa.array(rng.random(n)),
        "when": pa.array(np.arange(n).astype("datetime64[ms]")),
        "nullable": pa.array([None if i % 9 == 0 else i for i in range(n)], pa.int64()),
    })


def test_the_values_of_every_fixed_width_column_are_found_where_the_file_holds_them():
    table = _mixed_table()
    data = _file_bytes(table)
    reader = open_file(data)
    assert reader.num_record_batches == 4
    for name in ["i8", "u16", "i32", "i64", "f32", "f64", "when", "nullable"]:
        index = table.schema.get_field_index(name)
        column = table.column(name)
        dtype = np.dtype(column.type.to_pandas_dtype()) if name != "when" \
            else np.dtype(np.int64)
        for i in range(reader.num_record_batches):
            found = reader.values_in_file(i, index)
            assert found is not None, (name, i)
            offset, n, nulls = found
            expected = column.slice(300 * i, 300)
            assert n == len(expected) and nulls == expected.null_count
            got = np.frombuffer(data, dtype=dtype, count=n, offset=offset)
            valid = ~np.asarray(expected.is_null())
            want = expected.cast(pa.int64() if name == "when" else column.type) \
                .fill_null(0).to_numpy(zero_copy_only=False).astype(dtype)
            assert np.array_equal(got[valid], want[valid]), (name, i)


@pytest.mark.parametrize("name", ["s", "view", "lst", "st", "flag", "dict"])
def test_columns_that_are_not_one_fixed_width_node_are_not_found(name):
    table = _mixed_table()
    reader = open_file(_file_bytes(table))
    assert reader.values_in_file(0, table.schema.get_field_index(name)) is None


@pytest.mark.parametrize("codec", ["lz4", "zstd"])
def test_values_of_a_compressed_body_are_not_found(codec):
    table = pa.table({"x": np.arange(1000)})
    reader = open_file(_file_bytes(table, compression=codec))
    assert reader.values_in_file(0, 0) is None


def test_values_of_a_big_endian_file_are_not_found():
    with open(os.path.join(GOLD, "generated_primitive.arrow_file"), "rb") as f:
        reader = open_file(f.read())
    names = reader.schema.names
    index = next(i for i, f in enumerate(reader.schema) if str(f.type) == "int64")
    assert reader.schema.field(index).name in names
    assert all(reader.values_in_file(i, index) is None
               for i in range(reader.num_record_batches))


def test_a_values_buffer_past_the_body_or_a_bad_index_is_not_found():
    table = pa.table({"a": np.arange(300), "b": np.arange(300.0)})
    reader = open_file(_file_bytes(table))
    msg = reader.read_block_message("record batch", 0, with_body=False)
    header = decode_record_batch_header(msg.header)
    plan = reader._decoder.column_plan
    body = reader.record_batch_blocks[0][2]
    # a's values fill bytes [0, 2400); b's (no validity bitmap: no nulls) follow
    assert fixed_width_values(plan, header, 1, body) == (2400, 300, 0)
    # b's values need 2400 bytes from byte 2400: a body any shorter cannot hold them
    assert fixed_width_values(plan, header, 1, 4799) is None
    assert fixed_width_values(plan, header, 1, 4800) == (2400, 300, 0)
    for index in (-1, 2, 10**6):
        assert fixed_width_values(plan, header, index, body) is None
    assert reader.values_in_file(0, 1) == (reader.record_batch_blocks[0][0]
                                          + reader.record_batch_blocks[0][1] + 2400, 300, 0)
