"""Batches decoded lazily (issue 36): a decoded batch keeps its checked header and body and makes
its column objects on first access, once, whichever thread asks first; everything a batch was
checked for before, it is still checked for before any data is handed out."""
from __future__ import annotations

import gc
import threading
import weakref

import pyarrow as pa
import pytest

from arrowipc import ipc
from arrowipc.errors import ArrowInvalid


def stream_bytes(table: pa.Table, max_chunksize: int | None = None) -> bytes:
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, table.schema) as w:
        w.write_table(table, max_chunksize=max_chunksize)
    return sink.getvalue().to_pybytes()


def file_bytes(table: pa.Table) -> bytes:
    sink = pa.BufferOutputStream()
    with pa.ipc.new_file(sink, table.schema) as w:
        w.write_table(table)
    return sink.getvalue().to_pybytes()


MIXED = pa.table({
    "i": pa.array([1, None, 3, 4], pa.int64()),
    "s": pa.array(["a", "bc", None, "def"]),
    "b": pa.array([True, False, None, True]),
    "l": pa.array([[1], [], None, [2, 3]], pa.list_(pa.int32())),
    "st": pa.array([{"x": 1}, {"x": None}, None, {"x": 4}], pa.struct([("x", pa.int16())])),
    "n": pa.nulls(4),
})


def test_decoded_batch_makes_no_columns_until_asked() -> None:
    batch = next(iter(ipc.open_stream(stream_bytes(MIXED))))
    # what iteration and the shape need comes from the header alone
    assert (batch.num_rows, batch.num_columns) == (4, 6)
    assert batch.schema.names == MIXED.schema.names
    assert batch._cols is None
    assert pa.record_batch(batch).equals(MIXED.to_batches()[0])
    assert batch._cols is not None and batch._lazy is None


@pytest.mark.parametrize("form", ["stream", "file"])
def test_lazy_batches_equal_pyarrow_every_way_they_are_read(form: str) -> None:
    data = stream_bytes(MIXED, 1) if form == "stream" else file_bytes(MIXED)
    if form == "stream":
        got = ipc.open_stream(data).read_all()
    else:
        reader = ipc.open_file(data)
        got = [reader.get_batch(i) for i in range(reader.num_record_batches)]
        got = pa.Table.from_batches([pa.record_batch(b) for b in got])
    assert pa.table(got).equals(MIXED)


def test_projected_lazy_batch_has_only_its_columns() -> None:
    options = ipc.IpcReadOptions(included_fields=[4, 1])
    batch = next(iter(ipc.open_stream(stream_bytes(MIXED), options=options)))
    assert batch.num_columns == 2 and batch._cols is None
    assert pa.record_batch(batch).equals(MIXED.select([1, 4]).to_batches()[0])


def test_lazy_batch_is_assembled_once_across_threads() -> None:
    table = pa.table({f"c{i}": pa.array(range(i, i + 100)) for i in range(20)})
    batches = list(ipc.open_stream(stream_bytes(table, 10)))
    assert all(b._cols is None for b in batches)
    start = threading.Barrier(8)
    seen: list[list[list[int]]] = []

    def worker() -> None:
        start.wait()
        seen.append([[id(c.data) for c in b.columns] for b in batches])

    threads = [threading.Thread(target=worker) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    # one set of column objects per batch, whichever thread made it
    assert len(seen) == 8 and all(s == seen[0] for s in seen)
    got = pa.Table.from_batches([pa.record_batch(b) for b in batches])
    assert got.equals(table)


def test_lazy_batch_keeps_its_source_alive_until_dropped() -> None:
    class Owner(bytearray):
        pass

    owner = Owner(stream_bytes(MIXED))
    alive = weakref.ref(owner)
    batch = next(iter(ipc.open_stream(memoryview(owner))))
    del owner
    gc.collect()
    assert alive() is not None               # the unassembled batch holds the body
    assert batch.column("s").to_pylist() == ["a", "bc", None, "def"]
    del batch
    gc.collect()
    assert alive() is None


def test_content_errors_of_a_lazy_batch_come_before_its_data() -> None:
    # the string column's last offset points past its data: a check that runs on first access
    good = pa.table({"s": pa.array(["ab", "cd"])})
    data = bytearray(stream_bytes(good))
    offsets = bytes(memoryview(good.column("s").chunk(0).buffers()[1]))
    at = data.rfind(offsets)
    data[at + 8:at + 12] = (200).to_bytes(4, "little")
    batch = next(iter(ipc.open_stream(bytes(data))))
    with pytest.raises(ArrowInvalid, match="offset"):
        batch.column(0)
    with pytest.raises(ArrowInvalid, match="offset"):
        batch.columns                        # still refused: the check did not pass


def test_bounds_errors_still_raise_while_iterating() -> None:
    # a buffer claimed past the body: found when the batch is decoded, as before
    good = pa.table({"i": pa.array([1, 2, 3], pa.int64())})
    data = bytearray(stream_bytes(good))
    schema_end = len(good.schema.serialize())
    # the values buffer's entry in the header: offset 0, length 24
    at = data.find(bytes(8) + (24).to_bytes(8, "little"), schema_end)
    assert at > 0
    data[at + 8:at + 16] = (4096).to_bytes(8, "little")
    with pytest.raises(ArrowInvalid, match="body has"):
        list(ipc.open_stream(bytes(data)))


def test_a_batch_not_yet_assembled_refuses_pickling_as_an_assembled_one() -> None:
    import pickle

    batch = next(iter(ipc.open_stream(stream_bytes(MIXED))))
    assert batch._cols is None
    with pytest.raises(TypeError, match="ArrayData is not picklable"):
        pickle.dumps(batch)
    batch.columns
    with pytest.raises(TypeError, match="ArrayData is not picklable"):
        pickle.dumps(batch)
