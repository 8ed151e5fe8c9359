"""The file footer's blocks: each checked before it is read, in memory and from a path.

A block (offset, metadata length, body length) comes from untrusted bytes: one that points
outside the data section, at no message, or at a message that is not a record batch is refused
with an error naming the block, whichever read path meets it (get_batch on bytes, iteration,
a file on disk). Batch numbers out of range are pyarrow's ValueError, negative ones included.
"""
from __future__ import annotations

import struct
import threading

import pytest

pa = pytest.importorskip("pyarrow")

from arrowipc import ipc  # noqa: E402
from arrowipc.errors import ArrowInvalid  # noqa: E402

from ipc_surgery import FOOTER_RECORD_BATCHES, file_blocks  # noqa: E402

NUM_BATCHES = 4


def _file_bytes(compression: str | None = None) -> bytes:
    sink = pa.BufferOutputStream()
    schema = pa.schema([("i", pa.int64()), ("s", pa.string())])
    options = pa.ipc.IpcWriteOptions(compression=compression)
    with pa.ipc.new_file(sink, schema, options=options) as w:
        for k in range(NUM_BATCHES):
            w.write_batch(pa.record_batch([pa.array(range(k, k + 50)),
                                           pa.array([f"v{j}" for j in range(50)])], schema))
    return sink.getvalue().to_pybytes()


def _footer_start(data: bytes) -> int:
    magic_len = 6
    size = struct.unpack_from("<i", data, len(data) - magic_len - 4)[0]
    return len(data) - magic_len - 4 - size


def _with_block(data: bytes, i: int, block: tuple[int, int, int]) -> bytes:
    """`data` with record batch block i of its footer replaced by `block`."""
    out = bytearray(data)
    pos, _ = file_blocks(data, FOOTER_RECORD_BATCHES)[i]
    struct.pack_into("<qi4xq", out, pos, *block)
    return bytes(out)


def _readers(data: bytes, tmp_path):
    path = tmp_path / "f.arrow"
    path.write_bytes(data)
    return {"bytes": lambda: ipc.open_file(data), "path": lambda: ipc.open_file(str(path))}


@pytest.mark.parametrize("source", ["bytes", "path"])
def test_a_block_outside_the_data_section_is_refused_naming_it(source, tmp_path):
    data = _file_bytes()
    limit = _footer_start(data)
    bad = _with_block(data, 2, (limit + 8, 200, 64))
    reader = _readers(bad, tmp_path)[source]()
    assert reader.get_batch(1).num_rows == 50          # the other blocks read as before
    with pytest.raises(ArrowInvalid, match=rf"file: record batch block 2 \(offset {limit + 8}, "
                       rf"metadata 200, body 64\) lies outside the data section \[8, {limit}\)"):
        reader.get_batch(2)
    with pytest.raises(ArrowInvalid, match="record batch block 2"):
        list(_readers(bad, tmp_path)[source]())


@pytest.mark.parametrize("source", ["bytes", "path"])
def test_a_block_whose_body_runs_past_the_data_section_is_refused(source, tmp_path):
    data = _file_bytes()
    limit = _footer_start(data)
    _, (off, meta_len, _body) = file_blocks(data, FOOTER_RECORD_BATCHES)[3]
    bad = _with_block(data, 3, (off, meta_len, 2**62))     # no overflow in the check
    with pytest.raises(ArrowInvalid, match=rf"lies outside the data section \[8, {limit}\)"):
        _readers(bad, tmp_path)[source]().get_batch(3)


def test_a_block_pointing_at_no_message_is_refused():
    data = _file_bytes()
    eos = _footer_start(data) - 8                       # the stream's end-of-stream marker
    bad = _with_block(data, 0, (eos, 8, 0))
    with pytest.raises(ArrowInvalid, match=rf"file: record batch block 0 at byte {eos} holds "
                                           r"no message"):
        ipc.open_file(bad).get_batch(0)


def test_a_block_pointing_at_the_schema_message_is_refused():
    data = _file_bytes()
    first_batch = file_blocks(data, FOOTER_RECORD_BATCHES)[0][1][0]
    bad = _with_block(data, 1, (8, first_batch - 8, 0))
    with pytest.raises(ArrowInvalid, match="file: record batch block 1 holds a schema message"):
        ipc.open_file(bad).get_batch(1)


@pytest.mark.parametrize("i", [NUM_BATCHES, NUM_BATCHES + 10, -1, -NUM_BATCHES])
def test_a_batch_number_out_of_range_is_pyarrows_value_error(i):
    data = _file_bytes()
    with pytest.raises(ValueError, match=f"Batch number {i} out of range") as theirs:
        pa.ipc.open_file(pa.py_buffer(data)).get_batch(i)
    with pytest.raises(ValueError, match=f"Batch number {i} out of range: the file has "
                                         f"{NUM_BATCHES} record batches") as ours:
        ipc.open_file(data).get_batch(i)
    assert isinstance(ours.value, ArrowInvalid) and type(theirs.value) is ValueError


@pytest.mark.parametrize("compression", [None, "lz4", "zstd"])
def test_get_batch_in_any_order_equals_pyarrow(compression):
    data = _file_bytes(compression)
    theirs = pa.ipc.open_file(pa.py_buffer(data))
    ours = ipc.open_file(data)
    for i in (3, 0, 2, 2, 1):
        assert pa.record_batch(ours.get_batch(i)).equals(theirs.get_batch(i))
    assert ours.stats.num_record_batches == 5


def test_batches_read_on_several_threads_are_all_counted():
    data = _file_bytes()
    reader = ipc.open_file(data)
    rounds, threads = 200, 4

    def read():
        for _ in range(rounds):
            for i in range(NUM_BATCHES):
                reader.get_batch(i)

    workers = [threading.Thread(target=read) for _ in range(threads)]
    for w in workers:
        w.start()
    for w in workers:
        w.join(timeout=60)
    stats = reader.stats
    assert stats.num_record_batches == rounds * threads * NUM_BATCHES
    assert stats.num_messages == stats.num_record_batches + 1       # and the footer's schema
