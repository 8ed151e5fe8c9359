"""The JVM source on corrupt and unreadable inputs (issue 32, F8): every failure is an
IpcException naming the file (and the batch, message byte, column or value where known), never a
raw IndexOutOfBoundsException, NullPointerException, UnsupportedOperationException,
AnalysisException, OutOfMemoryError or StackOverflowError; and strings that are not UTF-8 are refused, as the
Python readers refuse them, instead of reaching Spark as replacement characters.

The inputs are made here by byte surgery on files pyarrow writes (tests/ipc/ipc_surgery.py); the
Python reader's verdict on the same bytes is checked beside the JVM's. All cases share one test
(one round of Spark jobs) since Spark tests are slow.
"""
import os
import struct
import sys

import numpy as np
import pyarrow as pa
import pytest

from arrowipc import ipc
from arrowipc.errors import ArrowInvalid

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                "ipc"))
try:
    import ipc_surgery as X
finally:
    sys.path.pop(0)

pytestmark = pytest.mark.spark

FIELD_TYPE_TYPE, FIELD_CHILDREN = 2, 5
SCHEMA_FIELDS = 1


def file_bytes(table: pa.Table) -> bytearray:
    sink = pa.BufferOutputStream()
    with pa.ipc.new_file(sink, table.schema) as writer:
        writer.write_table(table)
    return bytearray(sink.getvalue().to_pybytes())


def schemas(data: bytearray):
    """The Schema tables of a file: the footer's and the leading schema message's."""
    footer, _ = X.file_footer(data)
    return [footer.table(X.FOOTER_SCHEMA), X.file_frames(data)[0].message.table(X.MESSAGE_HEADER)]


def vector_length_pos(table: X.FlatTable, index: int) -> int:
    pos = table.field_pos(index)
    return pos + struct.unpack_from("<I", table.buf, pos)[0]


def unknown_type_id() -> bytes:
    """Field 'a' with a type id no Arrow type has (was UnsupportedOperationException)."""
    data = file_bytes(pa.table({"a": pa.array([1, 2, 3], pa.int32())}))
    for schema in schemas(data):
        data[schema.tables(SCHEMA_FIELDS)[0].field_pos(FIELD_TYPE_TYPE)] = 99
    return bytes(data)


def childless_list() -> bytes:
    """A list field whose children vector is empty (was IndexOutOfBoundsException)."""
    data = file_bytes(pa.table({"l": pa.array([[1], [2, 3]], pa.list_(pa.int64()))}))
    for schema in schemas(data):
        field = schema.tables(SCHEMA_FIELDS)[0]
        struct.pack_into("<I", data, vector_length_pos(field, FIELD_CHILDREN), 0)
    return bytes(data)


def self_nested_list() -> bytes:
    """A list field whose child is the field itself: endless nesting (was StackOverflowError;
    found by tests/fuzz/jvm_fuzz.py)."""
    data = file_bytes(pa.table({"l": pa.array([[1], [2, 3]], pa.list_(pa.int64()))}))
    for schema in schemas(data):
        field = schema.tables(SCHEMA_FIELDS)[0]
        entry = vector_length_pos(field, FIELD_CHILDREN) + 4
        struct.pack_into("<I", data, entry, (field.pos - entry) & 0xFFFFFFFF)
    return bytes(data)


def huge_buffer_count() -> bytes:
    """A record batch claiming 2**31 - 1 buffers (was OutOfMemoryError)."""
    data = file_bytes(pa.table({"a": pa.array(np.arange(10), pa.int64())}))
    batch = X.file_frames(data)[1].record_batch()
    struct.pack_into("<I", data, vector_length_pos(batch, X.RECORD_BATCH_BUFFERS), 0x7FFFFFFF)
    return bytes(data)


def header_out_of_range() -> bytes:
    """A record batch message whose header offset points past its metadata (was a raw
    IndexOutOfBoundsException from the flatbuffer accessor)."""
    data = file_bytes(pa.table({"a": pa.array(np.arange(10), pa.int64())}))
    message = X.file_frames(data)[1].message
    struct.pack_into("<I", data, message.field_pos(X.MESSAGE_HEADER), 0x7FFFFFF0)
    return bytes(data)


def invalid_utf8() -> bytes:
    """Value 1 of string column 's' is b'\\xff\\xfebad' (was returned with replacement
    characters)."""
    offsets = pa.py_buffer(np.array([0, 2, 7, 9], dtype=np.int32).tobytes())
    strings = pa.Array.from_buffers(pa.string(), 3, [None, offsets,
                                                     pa.py_buffer(b"ok\xff\xfebadok")])
    return bytes(file_bytes(pa.table({"s": strings})))


CORRUPT = {
    "type-id.arrow": (unknown_type_id, "has corrupt metadata (IllegalArgumentException: field "
                                       "'a' has type id 99, which is not an Arrow type)"),
    "childless-list.arrow": (childless_list, "field 'l' of {path} has Arrow type List, which Spark "
                                             "cannot hold: a list needs one child field, found 0"),
    "self-nested.arrow": (self_nested_list, "has corrupt metadata (IllegalArgumentException: "
                                            "field 'l' is nested more than 64 levels deep)"),
    "buffer-count.arrow": (huge_buffer_count, "(record batch 0) claims 1 field nodes, 2147483647 "
                                              "buffers and 0 variadic buffer counts, more than "
                                              "its"),
    "header.arrow": (header_out_of_range, "(record batch 0, message at byte"),
    "utf8.arrow": (invalid_utf8, "(record batch 0) column 's': value 1 is not valid UTF-8 (bad "
                                 "byte at offset 0 of the value)"),
}


def python_verdict(path: str) -> BaseException | None:
    try:
        table = ipc.open_file(path).read_all()
        for column in table.columns:
            column.to_pylist()
    except Exception as e:
        return e
    return None


def test_corrupt_inputs_fail_with_an_ipc_exception_naming_the_file(spark, jvm, tmp_path):
    for name, (make, expected) in CORRUPT.items():
        path = str(tmp_path / name)
        with open(path, "wb") as f:
            f.write(make())
        # the Python reader refuses the same bytes
        assert isinstance(python_verdict(path), ArrowInvalid), name
        with pytest.raises(Exception) as info:
            spark.read.format("arrowipc").load(path).collect()
        message = str(info.value)
        assert f"io.arrowipc.spark.IpcException: arrowipc: " in message, (name, message[:2000])
        first = message[message.index("io.arrowipc.spark.IpcException: "):].split("\n")[0]
        assert path in first, (name, first)
        assert expected.format(path=path) in first, (name, first)


def test_negative_scale_decimal_names_the_field_and_file(spark, jvm, tmp_path):
    """A valid file Spark cannot hold (a decimal of negative scale) was Spark's own
    AnalysisException, without the file."""
    import decimal
    path = str(tmp_path / "negative-scale.arrow")
    table = pa.table({"d": pa.array([decimal.Decimal("1E+3")], pa.decimal128(5, -2))})
    with open(path, "wb") as f:
        f.write(bytes(file_bytes(table)))
    with pytest.raises(Exception) as info:
        spark.read.format("arrowipc").load(path).collect()
    assert (f"field 'd' of {path} has Arrow type Decimal(5, -2, 128), which Spark cannot hold: "
            f"Spark decimals need 1 <= precision and 0 <= scale <= precision, found precision 5 "
            f"and scale -2") in str(info.value)
