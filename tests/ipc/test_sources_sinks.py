"""Where arrowipc reads from and writes to.

Sources: bytes, bytearray, memoryview, arrowipc Buffer, any buffer-protocol object, a path (str
and pathlib), file-likes (io.BytesIO, an open file, a socket's makefile).  A file-like is never
read past the end-of-stream marker: two streams back to back are read by two open_stream calls,
and a socket reader gets each batch while the writer still holds the connection open.
Reads from memory are zero-copy (buffer addresses inside the input), misaligned input still
reads right, and batches outlive their reader and source.
Sinks: a path (str and pathlib), file-likes, BufferOutputStream.
"""
import gc
import io
import pathlib
import re
import socket
import threading

import pytest

pa = pytest.importorskip("pyarrow")
import numpy as np  # noqa: E402
import pyarrow.ipc as pa_ipc  # noqa: E402

import arrowipc  # noqa: E402
from arrowipc import ipc  # noqa: E402

import strategies as S  # noqa: E402

SOCKET_TIMEOUT = 20  # seconds; a reader that waits for more than one message fails, not hangs


def sample_table():
    return S.make_table(["int64", "string", "list", "struct", "bool", "float64"], [13, 0, 29], seed=3)


def arrowipc_buffer(data: bytes):
    """An arrowipc Buffer over `data` (public py_buffer if exported, else the core one)."""
    factory = getattr(arrowipc, "py_buffer", None)
    if factory is None:
        from arrowipc._core.buffer import py_buffer as factory
    return factory(data)


def memory_address(obj) -> int:
    """Address of the first byte of a bytes / bytearray / memoryview object."""
    return np.frombuffer(obj, dtype=np.uint8).ctypes.data


# ---------------------------------------------------------------------------------------------
# sources

IN_MEMORY_SOURCES = {
    "bytes": lambda data: data,
    "bytearray": lambda data: bytearray(data),
    "memoryview": lambda data: memoryview(data),
    "arrowipc_buffer": arrowipc_buffer,
    "numpy_array": lambda data: np.frombuffer(data, dtype=np.uint8),
}


@pytest.mark.parametrize("form", ["stream", "file"])
@pytest.mark.parametrize("kind", list(IN_MEMORY_SOURCES))
def test_in_memory_sources(kind, form):
    table = sample_table()
    data = S.pa_stream_bytes(table) if form == "stream" else S.pa_file_bytes(table)
    source = IN_MEMORY_SOURCES[kind](data)
    opener = ipc.open_stream if form == "stream" else ipc.open_file
    with opener(source) as reader:
        S.assert_table_matches(reader.read_all(), table)


@pytest.mark.parametrize("form", ["stream", "file"])
@pytest.mark.parametrize("kind", ["str", "pathlib"])
def test_path_sources(kind, form, tmp_path):
    table = sample_table()
    path = tmp_path / f"data.{form}"
    path.write_bytes(S.pa_stream_bytes(table) if form == "stream" else S.pa_file_bytes(table))
    source = str(path) if kind == "str" else pathlib.Path(path)
    opener = ipc.open_stream if form == "stream" else ipc.open_file
    with opener(source) as reader:
        S.assert_table_matches(reader.read_all(), table)


@pytest.mark.parametrize("form", ["stream", "file"])
@pytest.mark.parametrize("kind", ["bytesio", "open_file"])
def test_file_like_sources(kind, form, tmp_path):
    table = sample_table()
    data = S.pa_stream_bytes(table) if form == "stream" else S.pa_file_bytes(table)
    opener = ipc.open_stream if form == "stream" else ipc.open_file
    if kind == "bytesio":
        with opener(io.BytesIO(data)) as reader:
            S.assert_table_matches(reader.read_all(), table)
    else:
        path = tmp_path / "data.arrow"
        path.write_bytes(data)
        with open(path, "rb") as f:
            with opener(f) as reader:
                S.assert_table_matches(reader.read_all(), table)
            # like pyarrow, closing the reader leaves the caller's file open
            assert not f.closed


def test_file_reader_random_access_on_file_like(tmp_path):
    table = sample_table()
    path = tmp_path / "data.arrow"
    path.write_bytes(S.pa_file_bytes(table))
    with open(path, "rb") as f, ipc.open_file(f) as reader:
        batches = table.to_batches()
        for i in (2, 0, 1):
            S.assert_batch_matches(reader.get_batch(i), batches[i])


@pytest.mark.parametrize("writer", ["pyarrow", "arrowipc"])
def test_two_streams_back_to_back_in_one_file_like(writer):
    first = S.make_table(["int32", "string"], [5, 6], seed=1)
    second = S.make_table(["float64", "list"], [7], seed=2, metadata={b"which": b"second"})
    sink = io.BytesIO()
    for table in (first, second):
        if writer == "pyarrow":
            with pa_ipc.new_stream(sink, table.schema) as w:
                w.write_table(table)
        else:
            ours = arrowipc.table(table)
            with ipc.new_stream(sink, ours.schema) as w:
                w.write_table(ours)
    first_length = len(S.pa_stream_bytes(first)) if writer == "pyarrow" else None
    sink.seek(0)
    got_first = ipc.open_stream(sink).read_all()
    end_of_first = sink.tell()
    if first_length is not None:
        assert end_of_first == first_length, "the first reader read past its EOS marker"
    got_second = ipc.open_stream(sink).read_all()
    assert sink.tell() == len(sink.getvalue())
    S.assert_table_matches(got_first, first)
    S.assert_table_matches(got_second, second)
    # and the oracle agrees on where the first stream ends
    sink.seek(0)
    pa_ipc.open_stream(sink).read_all()
    assert sink.tell() == end_of_first


def test_stream_followed_by_garbage_reads_only_the_stream(tmp_path):
    table = sample_table()
    data = S.pa_stream_bytes(table)
    path = tmp_path / "stream_then_garbage"
    path.write_bytes(data + b"not arrow at all" * 4)
    with open(path, "rb") as f:
        S.assert_table_matches(ipc.open_stream(f).read_all(), table)
        assert f.tell() == len(data)


class ReadOnlyStream:
    """A minimal file-like: read() and `closed` only; no seek, tell, readinto or fileno."""

    closed = False

    def __init__(self, data: bytes):
        self._data = memoryview(data)
        self.position = 0

    def read(self, size=-1):
        if size is None or size < 0:
            size = len(self._data) - self.position
        chunk = bytes(self._data[self.position: self.position + size])
        self.position += len(chunk)
        return chunk


def test_read_only_file_like_source():
    table = sample_table()
    data = S.pa_stream_bytes(table)
    source = ReadOnlyStream(data + b"\xff" * 32)
    S.assert_table_matches(ipc.open_stream(source).read_all(), table)
    assert source.position == len(data)


# ---------------------------------------------------------------------------------------------
# sockets: a writer thread on one end, a reader on the other

def run_socket_pair(write, read):
    """Run write(wfile) in a thread and read(rfile) here; the writer keeps its end open until
    the reader is done, so a reader that waits for EOF instead of EOS times out."""
    writer_end, reader_end = socket.socketpair()
    reader_end.settimeout(SOCKET_TIMEOUT)
    reader_done = threading.Event()
    errors = []

    def writer_thread():
        try:
            with writer_end.makefile("wb") as wfile:
                write(wfile)
                wfile.flush()
            reader_done.wait(SOCKET_TIMEOUT)
        except BaseException as exc:  # surfaced in the main thread
            errors.append(exc)
        finally:
            writer_end.close()

    thread = threading.Thread(target=writer_thread, daemon=True)
    thread.start()
    try:
        with reader_end.makefile("rb") as rfile:
            return read(rfile)
    finally:
        reader_done.set()
        thread.join(SOCKET_TIMEOUT)
        reader_end.close()
        assert not errors, errors


def test_socket_pyarrow_writer_arrowipc_reader():
    table = sample_table()

    def write(wfile):
        with pa_ipc.new_stream(wfile, table.schema) as w:
            w.write_table(table)

    got = run_socket_pair(write, lambda rfile: ipc.open_stream(rfile).read_all())
    S.assert_table_matches(got, table)


def test_socket_arrowipc_writer_pyarrow_reader():
    table = sample_table()
    ours = arrowipc.table(table)

    def write(wfile):
        with ipc.new_stream(wfile, ours.schema) as w:
            w.write_table(ours)

    got = run_socket_pair(write, lambda rfile: pa_ipc.open_stream(rfile).read_all())
    got.validate(full=True)
    assert got.equals(table)
    S.assert_schema_equal(got.schema, table.schema)


def test_socket_reader_gets_each_batch_before_the_next_is_sent():
    # the writer sends batch k+1 only after the reader has batch k: a reader that reads ahead
    # (buffering past the current message) blocks and times out
    batches = [S.make_batch(["int32", "string"], n, seed=n) for n in (3, 5, 2)]
    received = [threading.Event() for _ in batches]

    def write(wfile):
        with pa_ipc.new_stream(wfile, batches[0].schema) as w:
            for batch, event in zip(batches, received):
                w.write_batch(batch)
                wfile.flush()
                assert event.wait(SOCKET_TIMEOUT), "reader did not get the batch"

    def read(rfile):
        reader = ipc.open_stream(rfile)
        got = []
        for event in received:
            got.append(reader.read_next_batch())
            event.set()
        with pytest.raises(StopIteration):
            reader.read_next_batch()
        return got

    got = run_socket_pair(write, read)
    for ours, theirs in zip(got, batches):
        S.assert_batch_matches(ours, theirs)


def test_socket_arrowipc_writer_sends_each_batch_as_written():
    batches = [S.make_batch(["int64", "list"], n, seed=n) for n in (4, 1, 6)]
    received = [threading.Event() for _ in batches]

    def write(wfile):
        schema = arrowipc.schema(batches[0].schema)
        with ipc.new_stream(wfile, schema) as w:
            for batch, event in zip(batches, received):
                w.write_batch(arrowipc.record_batch(batch))
                wfile.flush()
                assert event.wait(SOCKET_TIMEOUT), "reader did not get the batch"

    def read(rfile):
        reader = pa_ipc.open_stream(rfile)
        got = []
        for event in received:
            got.append(reader.read_next_batch())
            event.set()
        return got

    got = run_socket_pair(write, read)
    for theirs_read, written in zip(got, batches):
        theirs_read.validate(full=True)
        assert theirs_read.equals(written)


# ---------------------------------------------------------------------------------------------
# zero-copy, alignment, ownership

def buffer_ranges(batch):
    """(address, size) of every non-empty buffer of every column, nested children included."""
    ranges = []

    def visit(array):
        for buf in array.buffers():
            if buf is not None and buf.size > 0:
                ranges.append((buf.address, buf.size))

    for i in range(batch.num_columns):
        visit(batch.column(i))
    return ranges


@pytest.mark.parametrize("form", ["stream", "file"])
@pytest.mark.parametrize("kind", ["bytes", "bytearray", "memoryview"])
def test_reading_from_memory_is_zero_copy(kind, form):
    batch = S.make_batch(["int64", "float64", "string", "bool", "list", "struct"], 200, seed=5)
    data = S.pa_stream_bytes([batch]) if form == "stream" else S.pa_file_bytes([batch])
    source = {"bytes": data, "bytearray": bytearray(data), "memoryview": memoryview(data)}[kind]
    start = memory_address(source)
    end = start + len(data)
    opener = ipc.open_stream if form == "stream" else ipc.open_file
    reader = opener(source)
    got = reader.read_next_batch() if form == "stream" else reader.get_batch(0)
    ours_ranges = buffer_ranges(got)
    assert ours_ranges, "no buffers to check"
    for address, size in ours_ranges:
        assert start <= address and address + size <= end, (hex(address), size, hex(start), hex(end))
    # exported to pyarrow through the C data interface, still the same memory
    exported = S.to_pa_batch(got)
    for address, size in buffer_ranges(exported):
        assert start <= address and address + size <= end, (hex(address), size)
    assert exported.equals(batch)


@pytest.mark.parametrize("form", ["stream", "file"])
def test_misaligned_input_reads_correctly(form):
    batch = S.make_batch(["int64", "float64", "decimal128", "int16", "string", "list", "struct",
                          "month_day_nano_interval", "timestamp_us_tz"], 77, seed=6)
    data = S.pa_stream_bytes([batch]) if form == "stream" else S.pa_file_bytes([batch])
    holder = bytearray(len(data) + 1)
    holder[1:] = data
    source = memoryview(holder)[1:]
    assert memory_address(source) % 2 == 1, "source is not misaligned"
    opener = ipc.open_stream if form == "stream" else ipc.open_file
    with opener(source) as reader:
        table = reader.read_all()
    exported = S.to_pa_table(table)
    exported.validate(full=True)
    S.assert_table_matches(table, pa.Table.from_batches([batch]))


def test_batches_outlive_reader_and_source_bytes():
    table = sample_table()
    source = bytearray(S.pa_stream_bytes(table))
    reader = ipc.open_stream(source)
    batches = list(reader)
    reader.close()
    del reader, source
    gc.collect()
    for ours, theirs in zip(batches, table.to_batches()):
        S.assert_batch_matches(ours, theirs)


@pytest.mark.parametrize("form", ["stream", "file"])
def test_batches_outlive_reader_and_file_path(form, tmp_path):
    table = sample_table()
    path = tmp_path / "data.arrow"
    path.write_bytes(S.pa_stream_bytes(table) if form == "stream" else S.pa_file_bytes(table))
    opener = ipc.open_stream if form == "stream" else ipc.open_file
    with opener(str(path)) as reader:
        got = reader.read_all()
    path.unlink()
    gc.collect()
    S.assert_table_matches(got, table)


# ---------------------------------------------------------------------------------------------
# sinks

SINK_KINDS = ["str", "pathlib", "bytesio", "open_file", "buffer_output_stream"]


def write_ours(sink, table, form):
    ours = arrowipc.table(table)
    opener = ipc.new_stream if form == "stream" else ipc.new_file
    with opener(sink, ours.schema) as writer:
        writer.write_table(ours)



@pytest.mark.parametrize("form", ["stream", "file"])
@pytest.mark.parametrize("rows", [10, 200_000])
def test_a_file_object_gets_the_bytes_written_to_memory(form, rows):
    # a body's parts are joined into one write while small, written one by one when large
    # (copied once, by the sink): the same bytes either way
    table = pa.table({"i": pa.array(range(rows), pa.int64()),
                      "s": pa.array([str(i % 97) for i in range(rows)])})
    sink = io.BytesIO()
    write_ours(sink, table, form)
    ours = arrowipc.BufferOutputStream()
    write_ours(ours, table, form)
    assert sink.getvalue() == S.as_bytes(ours.getvalue())
    S.assert_pa_reads_back(sink.getvalue(), table, form, [rows])

@pytest.mark.parametrize("form", ["stream", "file"])
@pytest.mark.parametrize("kind", SINK_KINDS)
def test_sinks(kind, form, tmp_path):
    table = sample_table()
    path = tmp_path / f"out.{form}"
    if kind == "str":
        write_ours(str(path), table, form)
        data = path.read_bytes()
    elif kind == "pathlib":
        write_ours(path, table, form)
        data = path.read_bytes()
    elif kind == "bytesio":
        sink = io.BytesIO()
        write_ours(sink, table, form)
        data = sink.getvalue()
    elif kind == "open_file":
        with open(path, "wb") as f:
            write_ours(f, table, form)
            assert not f.closed
        data = path.read_bytes()
    else:
        sink = arrowipc.BufferOutputStream()
        write_ours(sink, table, form)
        buf = sink.getvalue()
        assert len(buf) == buf.size
        data = S.as_bytes(buf)
    S.assert_pa_reads_back(data, table, form, [13, 0, 29])


def test_path_sink_overwrites_existing_file(tmp_path):
    path = tmp_path / "out.arrows"
    path.write_bytes(b"x" * 100_000)
    table = S.make_table(["int8"], [3])
    write_ours(str(path), table, "stream")
    data = path.read_bytes()
    assert len(data) < 100_000
    S.assert_pa_reads_back(data, table, "stream")


def _count_fsyncs(monkeypatch) -> list:
    """Paths fsynced from now on (file descriptors resolved through /proc/self/fd)."""
    import os
    synced, real = [], os.fsync

    def counting(fd):
        synced.append(os.path.realpath(f"/proc/self/fd/{fd}"))
        return real(fd)

    monkeypatch.setattr(os, "fsync", counting)
    return synced


@pytest.mark.parametrize("form", ["stream", "file"])
def test_path_write_does_not_fsync_by_default(form, tmp_path, monkeypatch):
    synced = _count_fsyncs(monkeypatch)
    table = S.make_table(["int64"], [5])
    write_ours(str(tmp_path / "out"), table, form)
    assert synced == []
    S.assert_pa_reads_back((tmp_path / "out").read_bytes(), table, form)


@pytest.mark.parametrize("form", ["stream", "file"])
def test_durable_path_write_fsyncs_file_then_directory(form, tmp_path, monkeypatch):
    synced = _count_fsyncs(monkeypatch)
    table = S.make_table(["int64", "string"], [5, 7])
    opener = ipc.new_stream if form == "stream" else ipc.new_file
    path = tmp_path / "out"
    with opener(path, table.schema, durable=True) as writer:
        writer.write_table(table)
    # the file (a file writer's temporary file in the same directory, before the rename; a
    # stream writer's own file, written through), then the directory
    assert len(synced) == 2
    if form == "file":
        assert synced[0].startswith(str(tmp_path.resolve() / ".out.")) and synced[0].endswith(".tmp")
    else:
        assert synced[0] == str(path.resolve())
    assert synced[1] == str(tmp_path.resolve())
    assert [p.name for p in tmp_path.iterdir()] == ["out"]
    S.assert_pa_reads_back(path.read_bytes(), table, form, [5, 7])


def test_durable_write_aborted_leaves_nothing_and_syncs_nothing(tmp_path, monkeypatch):
    synced = _count_fsyncs(monkeypatch)
    table = S.make_table(["int64"], [5])
    with pytest.raises(RuntimeError):
        with ipc.new_file(tmp_path / "out", table.schema, durable=True) as writer:
            writer.write_table(table)
            raise RuntimeError("stop")
    assert synced == [] and list(tmp_path.iterdir()) == []


def test_durable_needs_a_path_sink():
    table = S.make_table(["int64"], [5])
    with pytest.raises(ValueError, match="durable=True needs a path sink"):
        ipc.new_stream(io.BytesIO(), table.schema, durable=True)


@pytest.mark.parametrize("exchange", [True, False], ids=["exchange", "rename"])
def test_path_sink_replaces_existing_file_atomically(exchange, tmp_path, monkeypatch):
    """Replacing a file swaps it in one step (or renames over it where the exchange is not
    available); either way the old file's mode is kept and no temporary file is left behind,
    and a hard link to the old file still sees the old contents."""
    import os
    import stat
    from arrowipc.ipc import sinks
    if not exchange:
        monkeypatch.setattr(sinks, "_exchange", lambda tmp, target: False)
    path = tmp_path / "out.arrow"
    path.write_bytes(b"old" * 1000)
    os.chmod(path, 0o640)
    os.link(path, tmp_path / "old-link")
    table = S.make_table(["int64", "string"], [9])
    for _ in range(2):
        write_ours(str(path), table, "file")
        assert sorted(p.name for p in tmp_path.iterdir()) == ["old-link", "out.arrow"]
        assert stat.S_IMODE(os.stat(path).st_mode) == 0o640
        S.assert_pa_reads_back(path.read_bytes(), table, "file", [9])
    assert (tmp_path / "old-link").read_bytes() == b"old" * 1000


def test_file_like_sink_written_at_its_current_position():
    table = S.make_table(["string"], [4])
    sink = io.BytesIO()
    sink.write(b"HEADER!!")
    write_ours(sink, table, "stream")
    data = sink.getvalue()
    assert data[:8] == b"HEADER!!"
    S.assert_pa_reads_back(data[8:], table, "stream")


def test_arrowipc_reads_its_own_buffer_output():
    table = sample_table()
    sink = arrowipc.BufferOutputStream()
    write_ours(sink, table, "file")
    with ipc.open_file(sink.getvalue()) as reader:
        S.assert_table_matches(reader.read_all(), table)


def test_freed_large_blocks_are_pooled_and_bounded():
    """Large freed blocks are kept for reuse (no page faults on the next large write), within
    the pool's byte bound, and can be handed back to the system."""
    from arrowipc._core.buffer import allocate_buffer, pooled_bytes, release_pooled_memory
    release_pooled_memory()
    assert pooled_bytes() == 0
    block = allocate_buffer(8 << 20, False)
    address = block.address
    del block
    assert pooled_bytes() >= 8 << 20
    again = allocate_buffer((8 << 20) - 100, False)       # a close size reuses the block
    assert again.address == address and pooled_bytes() == 0
    del again
    # many large blocks freed at once: the pool keeps at most 1 GiB of them
    blocks = [allocate_buffer(96 << 20, False) for _ in range(14)]
    del blocks
    assert 0 < pooled_bytes() <= 1 << 30
    release_pooled_memory()
    assert pooled_bytes() == 0
    small = allocate_buffer(1000)                          # small blocks are never pooled
    del small
    assert pooled_bytes() == 0


@pytest.mark.parametrize("sizes", [[0, 1, 7, 64], [(6 << 20) + 3, 0, (5 << 20) + 1, 17, (7 << 20) - 5]],
                         ids=["small", "parallel"])
def test_concat_buffers_is_exact_below_and_above_the_parallel_threshold(sizes):
    import random
    from arrowipc._core.buffer import concat_buffers
    rnd = random.Random(len(sizes))
    parts = [rnd.randbytes(n) for n in sizes]
    out = concat_buffers(parts, sum(sizes))
    assert out.address % 64 == 0
    assert bytes(out) == b"".join(parts)
    with pytest.raises(ValueError, match="expected"):
        concat_buffers(parts, sum(sizes) + 1)
    with pytest.raises(ValueError, match="larger than the declared total"):
        concat_buffers(parts, max(0, sum(sizes) - 2))


def test_file_reader_footer_index():
    """The footer's blocks and the messages they point at, for tools (validate, recover, Spark)."""
    import pyarrow as pa
    batch = pa.record_batch({"d": pa.array(["x", "y", "x"]).dictionary_encode(), "n": [1, 2, 3]})
    sink = pa.BufferOutputStream()
    with pa.ipc.new_file(sink, batch.schema) as writer:
        writer.write_batch(batch)
        writer.write_batch(batch)
    data = sink.getvalue().to_pybytes()
    reader = ipc.open_file(data)
    blocks = reader.record_batch_blocks
    assert len(blocks) == reader.num_record_batches == 2
    assert len(reader.dictionary_blocks) == reader.num_dictionaries == 1
    assert all(off < reader.footer_offset for off, _, _ in blocks + reader.dictionary_blocks)
    assert reader.footer_offset == len(data) - 10 - int.from_bytes(data[-10:-6], "little")
    msg = reader.read_block_message("record batch", 1, with_body=False)
    assert (msg.offset, msg.type) == (blocks[1][0], "record batch")
    assert reader.read_block_message("dictionary", 0).type == "dictionary"
    with pytest.raises(IndexError, match="record batch block 2 out of range for 2 blocks"):
        reader.read_block_message("record batch", 2)
    with pytest.raises(ValueError, match="kind must be"):
        reader.read_block_message("schema", 0)


def test_read_batches_stay_out_of_the_cyclic_gc():
    """Batches, their column lists and their ArrayData lists are acyclic: the readers leave them
    out of the collector (whose traversals otherwise dominate reads of many small batches), and
    they are still freed by reference counting."""
    import gc
    from arrowipc._core.buffer import live_allocations
    import pyarrow as pa
    batch = pa.record_batch({"s": ["a", None, "ccc"], "l": pa.array([[1], [], None], pa.list_(pa.int8()))})
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, batch.schema, options=pa.ipc.IpcWriteOptions(compression="lz4")) as w:
        for _ in range(3):
            w.write_batch(batch)
    before = live_allocations()
    got = list(ipc.open_stream(sink.getvalue().to_pybytes()))
    assert live_allocations() > before                     # decompressed buffers
    for b in got:
        assert not gc.is_tracked(b)
        cols = b._columns
        assert not gc.is_tracked(cols)
        assert not gc.is_tracked(cols[1].buffers) and not gc.is_tracked(cols[1].children)
        assert pa.record_batch(b).equals(batch)

    class Tagged(arrowipc.RecordBatch):                   # subclasses may add cycles: tracked
        pass

    assert gc.is_tracked(Tagged(got[0].schema, got[0]._columns, 3))
    del got, b, cols
    assert live_allocations() == before                    # freed without the collector


# -- file objects that break their contract (issue 32, F10) ----------------------------------

def five_batches(form):
    batches = [pa.record_batch({"a": pa.array(range(k, k + 50), pa.int64())}) for k in range(5)]
    sink = pa.BufferOutputStream()
    opener = pa_ipc.new_stream if form == "stream" else pa_ipc.new_file
    with opener(sink, batches[0].schema) as w:
        for b in batches:
            w.write_batch(b)
    return sink.getvalue().to_pybytes()


class Misbehaving(io.RawIOBase):
    """A readable, seekable file object over `data` whose `call`-th call of `method` breaks
    the contract as `how` says (the calls before it are honest)."""

    def __init__(self, data, method, how, call):
        self.inner, self.method, self.how, self.call, self.calls = io.BytesIO(data), method, how, \
            call, 0

    def _breaks(self, method):
        if method != self.method:
            return False
        self.calls += 1
        return self.calls == self.call

    def readable(self):
        return True

    def seekable(self):
        return True

    def readinto(self, view):
        if self._breaks("readinto"):
            if self.how == "raise":
                raise RuntimeError("the device went away")
            if self.how == "oserror":
                raise ConnectionResetError("connection reset by peer")
            got = self.inner.readinto(view)
            return {"negative": -1, "none": None, "more": got + 100, "float": float(got),
                    "str": "4"}[self.how]
        return self.inner.readinto(view)

    def read(self, n=-1):
        if self._breaks("read"):
            if self.how == "raise":
                raise RuntimeError("the device went away")
            got = self.inner.read(n)
            return {"more": got + b"\0" * 3, "none": None, "str": "abcd", "int": 4}[self.how]
        return self.inner.read(n)

    def seek(self, offset, whence=0):
        landed = self.inner.seek(offset, whence)
        if self._breaks("seek"):
            return {"elsewhere": landed + 8, "str": str(landed), "negative": -1}[self.how]
        return landed

    def tell(self):
        return "0" if self._breaks("tell") else self.inner.tell()


class ReadOnly(Misbehaving):
    """The same without readinto (read() is the object's only way to give bytes)."""
    readinto = property()       # getattr(f, "readinto", None) finds nothing usable

    def __getattribute__(self, name):
        if name == "readinto":
            raise AttributeError(name)
        return super().__getattribute__(name)


MISBEHAVIOURS = [("readinto", how) for how in ("negative", "none", "more", "float", "str",
                                                "raise", "oserror")] + \
    [("read", how) for how in ("more", "none", "str", "int", "raise")] + \
    [("seek", how) for how in ("elsewhere", "str", "negative")] + [("tell", "str")]


def read_all_of(f, form):
    got = []
    reader = ipc.open_stream(f) if form == "stream" else ipc.open_file(f)
    for batch in reader:
        got.append(batch)
    return got


@pytest.mark.parametrize("form", ["stream", "file"])
@pytest.mark.parametrize("method, how", MISBEHAVIOURS, ids=[f"{m}-{h}" for m, h in MISBEHAVIOURS])
def test_a_file_object_that_breaks_its_contract_is_an_error_naming_it(form, method, how):
    data = five_batches(form)
    cls = ReadOnly if method == "read" else Misbehaving
    expected = [b for b in read_all_of(io.BytesIO(data), form)]
    broke_at = None
    for call in range(1, 40):
        f = cls(data, method, how, call)
        f.name = "broken.arrow"
        try:
            got = read_all_of(f, form)
        except (arrowipc.errors.ArrowException, OSError) as e:
            # a lie about the size reads as a truncated file; every other break is an I/O error
            assert isinstance(e, (arrowipc.errors.ArrowIOError, ConnectionResetError)) or (
                method == "seek" and isinstance(e, arrowipc.errors.ArrowInvalid)), repr(e)
            assert "broken.arrow" in str(e) and re.search(r"at (byte|offset) \d+", str(e)), str(e)
            broke_at = call
            continue
        # the broken call was never made: every batch, unchanged
        assert f.calls < call, (call, len(got))
        assert [b.equals(e) for b, e in zip(got, expected)] == [True] * len(expected)
        break
    if method in ("readinto", "read"):
        assert broke_at is not None and broke_at > 3        # mid-way, after good batches too


# -- what a file object's claims may make the reader allocate (issue 32, F7) -------------------

def stream_of_one_large_body(rows=12_000_000):
    batch = pa.record_batch({"a": pa.array(np.arange(rows, dtype=np.int64))})
    sink = pa.BufferOutputStream()
    with pa_ipc.new_stream(sink, batch.schema) as w:
        w.write_batch(batch)
    return sink.getvalue().to_pybytes(), rows * 8


class PipeLike:
    """A non-seekable object with read() only (a pipe's), handing out copies."""

    def __init__(self, data):
        self.view, self.pos = memoryview(data), 0

    def read(self, n=-1):
        out = bytes(self.view[self.pos:self.pos + n])
        self.pos += len(out)
        return out


@pytest.mark.parametrize("make", [io.BytesIO, PipeLike], ids=["readinto", "read-only"])
def test_a_body_over_64_mib_from_a_file_object_is_read_into_one_buffer_once(make):
    import tracemalloc
    data, body = stream_of_one_large_body()
    f = make(data)
    tracemalloc.start()
    try:
        (batch,) = list(ipc.open_stream(f))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert batch.num_rows == body // 8 and batch.column(0)[body // 8 - 1].as_py() == body // 8 - 1
    # the chunks joined at the end peaked at twice the body; read once, the body is held once
    # (in memory of arrowipc's own for readinto, which tracemalloc does not see, or grown in
    # place from the chunks read() hands out, one chunk at a time)
    assert peak < 1.5 * body, (peak, body)


def file_object_claiming(size_claim):
    """A file object that claims to be `size_claim` bytes past a one-batch file's body and
    whose footer (and the message itself) claim that body: a few hundred real bytes."""
    import struct
    import ipc_surgery as X
    batch = pa.record_batch({"a": pa.array(range(10), pa.int64()),
                             "b": pa.array(range(10), pa.int64())})
    sink = pa.BufferOutputStream()
    with pa_ipc.new_file(sink, batch.schema) as w:
        w.write_batch(batch)
    data = bytearray(sink.getvalue().to_pybytes())
    (frame,) = [f for f in X.file_frames(bytes(data)) if f.header_type == X.HEADER_RECORD_BATCH]
    struct.pack_into("<q", data, frame.message.field_pos(X.MESSAGE_BODY_LENGTH), size_claim)
    footer_start = len(data) - 10 - struct.unpack_from("<i", data, len(data) - 10)[0]
    block = struct.pack("<qi4xq", frame.start, frame.body_start - frame.start, frame.body_len)
    struct.pack_into("<q", data, bytes(data).index(block, footer_start) + 16, size_claim)
    head, tail = bytes(data[:footer_start]), bytes(data[footer_start:])
    tail_start = frame.body_start + size_claim

    class Claiming(io.RawIOBase):
        """head, then zeros up to tail_start, then the footer and trailer."""
        pos = 0
        name = "claims.arrow"

        def readable(self):
            return True

        def seekable(self):
            return True

        def seek(self, offset, whence=0):
            self.pos = offset + (0, self.pos, tail_start + len(tail))[whence]
            return self.pos

        def tell(self):
            return self.pos

        def readinto(self, view):
            n = max(0, min(len(view), tail_start + len(tail) - self.pos))
            out = bytearray(n)
            if self.pos < len(head):
                k = min(n, len(head) - self.pos)
                out[:k] = head[self.pos:self.pos + k]
            if self.pos + n > tail_start:
                a = max(self.pos, tail_start)
                out[a - self.pos:] = tail[a - tail_start:self.pos + n - tail_start]
            view[:n] = out
            self.pos += n
            return n

    return Claiming()


def test_a_body_a_file_object_claims_but_memory_cannot_hold_is_a_capacity_error():
    from arrowipc._core.buffer import allocate_buffer
    claim = 1 << 39                     # 512 GiB, under the 1 TiB refused before allocating
    try:
        allocate_buffer(claim, zero=False)
    except MemoryError:
        pass
    else:                               # overcommit that promises it (pages never touched)
        pytest.skip("this machine's memory overcommit grants a 512 GiB allocation")
    for options in (ipc.IpcReadOptions(included_fields=[1]), None):
        reader = ipc.open_file(file_object_claiming(claim), options=options)
        with pytest.raises(arrowipc.errors.ArrowCapacityError,
                           match=r"claims.arrow: cannot allocate the \d+ bytes the input "
                                 r"claims at byte \d+"):
            reader.get_batch(0)
