"""What a user writes against arrowipc, checked by `mypy --strict` in tests/typing/test_typing.py.

It also runs (the test executes it), so every line is real use: build a table, write it as a file
and a stream with options, read both back, walk batches and columns, and catch a format error.
`assert_type` pins what the public API returns, so a reader or writer whose annotation is lost,
or that returns `Any`, fails the type check.
"""
from __future__ import annotations

import os
import sys
import tempfile

from typing_extensions import assert_type

import arrowipc
from arrowipc import ipc


def build() -> arrowipc.Table:
    schema = arrowipc.schema([arrowipc.field("id", arrowipc.int64(), nullable=False),
                              ("name", arrowipc.string())], metadata={"origin": "user_script"})
    assert_type(schema, arrowipc.Schema)
    ids = arrowipc.array([1, 2, 3], type=arrowipc.int64())
    assert_type(ids, arrowipc.Array)
    return arrowipc.table([ids, arrowipc.array(["a", None, "c"])], schema=schema)


def write(table: arrowipc.Table, folder: str) -> tuple[str, arrowipc.Buffer]:
    path = os.path.join(folder, "data.arrow")
    options = ipc.IpcWriteOptions(compression="zstd")
    with ipc.new_file(path, table.schema, options=options) as fw:
        assert_type(fw, ipc.RecordBatchFileWriter)
        fw.write_table(table, max_chunksize=2)
    sink = arrowipc.BufferOutputStream()
    with ipc.new_stream(sink, table.schema) as sw:
        assert_type(sw, ipc.RecordBatchStreamWriter)
        for batch in table.to_batches():
            sw.write_batch(batch, custom_metadata={"part": "1"})
    return path, sink.getvalue()


def read(path: str, stream: arrowipc.Buffer) -> int:
    with ipc.open_file(path) as reader:
        assert_type(reader, ipc.RecordBatchFileReader)
        n: int = reader.num_record_batches
        first = reader.get_batch(0)
        assert_type(first, arrowipc.RecordBatch)
        table = reader.read_all()
        assert_type(table, arrowipc.Table)
    rows: list[dict[str, object]] = table.to_pylist()
    column = table.column("name")
    assert_type(column, arrowipc.ChunkedArray)
    names: list[object] = column.to_pylist()
    field = table.schema.field("id")
    assert_type(field, arrowipc.Field)
    assert_type(field.type, arrowipc.DataType)
    assert field.type == arrowipc.int64() and not field.nullable

    options = ipc.IpcReadOptions(included_fields=[1])
    sr = ipc.open_stream(stream, options=options)
    assert_type(sr, ipc.RecordBatchStreamReader)
    total = 0
    for batch in sr:
        assert_type(batch, arrowipc.RecordBatch)
        total += batch.num_rows
        assert batch.schema.names == ["name"]
    print(f"{n} batches, {len(rows)} rows, names {names}, {total} streamed", file=sys.stderr)
    return total


def read_garbage() -> str:
    try:
        ipc.open_stream(b"not an arrow stream").read_all()
    except arrowipc.ArrowInvalid as e:
        return str(e)
    raise AssertionError("garbage was read")


def main() -> int:
    table = build()
    with tempfile.TemporaryDirectory() as folder:
        path, stream = write(table, folder)
        assert read(path, stream) == table.num_rows
    assert read_garbage()
    return 0


if __name__ == "__main__":
    sys.exit(main())
