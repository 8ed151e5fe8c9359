"""Paths are read safely by default: a file another process truncates or rewrites after (or
while) we read it never crashes us, and the data already read stays what it was.

The default read of a path reads into memory of ours (pyarrow's default), so:
  * truncation after a read, or between two batches, gives the old data or ArrowInvalid/OSError,
    never SIGBUS;
  * a rewrite in place after a read changes nothing we hold, and pyarrow, given our arrays through
    the C data interface, sees the data as read;
  * the read-modify-write of one path (read, change, write back to the same path while the first
    table is alive) works and gives correct data;
  * get_batch(i) reads batch i only, a projected read only the chosen columns' buffers.
memory_map=True (and arrowipc.memory_map, a file object as pyarrow's) maps the file, zero-copy;
arrays viewing a mapping are checked again when exported, so a rewrite with out-of-range offsets is
ArrowInvalid at pa.table(), not a crash in pyarrow.

The risky part of each test runs in a child process, and the file is changed by this (another)
process while the child waits, so a signal fails the test instead of killing pytest.
"""
import os
import signal
import subprocess
import sys
import tempfile
import textwrap
import threading

import pytest

pa = pytest.importorskip("pyarrow")

import arrowipc  # noqa: E402
from arrowipc import ipc  # noqa: E402
from arrowipc._core.buffer import exporter_of  # noqa: E402
from arrowipc.errors import ArrowInvalid  # noqa: E402

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CHILD_TIMEOUT = 120         # seconds: a hang guard for the child, not a speed limit
ROWS, BATCHES = 2000, 4


def table():
    """A table with a string column (offsets a rewrite can push out of range) and an int one."""
    n = ROWS * BATCHES
    return pa.table({"s": [f"value-{i}" for i in range(n)], "i": list(range(n))})


def write(path, tab, kind="file"):
    opener = pa.ipc.new_file if kind == "file" else pa.ipc.new_stream
    with opener(str(path), tab.schema) as w:
        for b in tab.to_batches(max_chunksize=ROWS):
            w.write_batch(b)


def rewritten_bytes(data: bytes) -> bytes:
    """The same file with every 4-byte word from byte 64 up to its last 256 bytes set to
    0x5ffffff0 (1.5 GB): a string column's offsets point far outside its data, the footer stays."""
    body = bytearray(data)
    for k in range(64, len(body) - 256, 4):
        body[k:k + 4] = (0x5FFFFFF0).to_bytes(4, "little")
    return bytes(body)


PRELUDE = """
import os, sys
sys.path.insert(0, {repo!r})
import pyarrow as pa
import arrowipc
from arrowipc import ipc
from arrowipc.errors import ArrowInvalid
path = {path!r}
def wait_for_parent():
    print("ready", flush=True)
    assert sys.stdin.readline().strip() == "go"
"""


def run_child(body, path, change=None):
    """Run `body` in a child; when it calls wait_for_parent(), apply `change` (a callable taking
    the path) here, then let it go on. Returns the child's stdout; fails on a signal or an error."""
    script = PRELUDE.format(repo=REPO, path=str(path)) + textwrap.dedent(body)
    with tempfile.TemporaryFile("w+") as err:
        child = subprocess.Popen([sys.executable, "-c", script], stdin=subprocess.PIPE,
                                 stdout=subprocess.PIPE, stderr=err, text=True)
        guard = threading.Timer(CHILD_TIMEOUT, child.kill)
        guard.start()
        try:
            out = child.stdout.readline()
            if out.strip() == "ready":
                if change is not None:
                    change(path)
                child.stdin.write("go\n")
                child.stdin.flush()
                out = ""
            child.stdin.close()
            out += child.stdout.read()
            child.wait()
        finally:
            guard.cancel()
            if child.poll() is None:
                child.kill()
                child.wait()
        err.seek(0)
        errors = err.read()
    if child.returncode < 0:
        pytest.fail(f"the reader was killed by {signal.Signals(-child.returncode).name}\n{errors}")
    assert child.returncode == 0, errors
    return out


def truncate_to(size):
    def change(path):
        os.truncate(path, size)
    return change


def rewrite_in_place(path):
    with open(path, "rb") as f:
        data = f.read()
    with open(path, "r+b") as f:             # same inode, same size: what a mapping would see
        f.write(rewritten_bytes(data))


# -- the default read of a path: into memory of ours ---------------------------------------------

READS = {
    "open_file.read_all": "ipc.open_file(path).read_all()",
    "open_stream.read_all": "ipc.open_stream(path).read_all()",
    "open_file.projected": "ipc.open_file(path, options=ipc.IpcReadOptions("
                           "included_fields=[0])).read_all()",
    "open_file.get_batch": "ipc.open_file(path).get_batch(2)",
    "read_pandas": "ipc.open_file(path).read_pandas()",
}


def expected_of(name):
    t = table()
    if name == "open_file.projected":
        return t.select(["s"])
    if name == "open_file.get_batch":
        return pa.Table.from_batches([t.to_batches(max_chunksize=ROWS)[2]])
    return t


@pytest.mark.parametrize("name", list(READS))
@pytest.mark.parametrize("change", ["truncate", "rewrite"])
def test_data_read_from_a_path_survives_the_file_changing(name, change, tmp_path):
    path = tmp_path / ("t.arrows" if "stream" in name else "t.arrow")
    write(path, table(), "stream" if "stream" in name else "file")
    body = f"""
    got = {READS[name]}
    wait_for_parent()
    if hasattr(got, "to_pandas") and {name!r} != "read_pandas":
        print(pa.table(got).to_pandas().to_json())      # through the C data interface
    else:
        print(got.to_json())
    """
    expected = expected_of(name).to_pandas().to_json()
    out = run_child(body, path, truncate_to(100) if change == "truncate" else rewrite_in_place)
    assert out.strip() == expected


def test_truncation_between_two_batches_of_a_file_is_an_error_not_a_signal(tmp_path):
    path = tmp_path / "t.arrow"
    write(path, table())
    out = run_child("""
    reader = ipc.open_file(path)
    first = reader.get_batch(0)
    wait_for_parent()
    try:
        reader.get_batch(3)
    except (ArrowInvalid, OSError) as e:
        print(type(e).__name__, e)
    print(pa.record_batch(first).column(1)[5].as_py())
    """, path, truncate_to(os.path.getsize(path) // 2))
    error, value = out.strip().splitlines()
    # ArrowTruncatedBody: an ArrowInvalid, and an OSError as pyarrow's
    assert error.split()[0] in ("ArrowInvalid", "ArrowTruncatedBody") and "truncated" in error \
        and str(path) in error
    assert value == "5"


@pytest.mark.parametrize("kind", ["file", "stream"])
def test_truncation_while_a_large_path_is_read_in_pieces(kind, tmp_path):
    # past READ_WHOLE_LIMIT a path is read a batch (a message) at a time: the batches before the
    # cut are whole, then an error
    path = tmp_path / f"t.{kind}"
    write(path, table(), kind)
    out = run_child(f"""
    import arrowipc.ipc.paths
    arrowipc.ipc.paths.READ_WHOLE_LIMIT = 0
    reader = ipc.open_file(path) if {kind!r} == "file" else ipc.open_stream(path)
    batches = iter(reader)
    first = next(batches)
    wait_for_parent()
    got = [first]
    try:
        for b in batches:
            got.append(b)
    except (ArrowInvalid, OSError) as e:
        print(type(e).__name__, e)
    print(len(got), pa.record_batch(first).column(1)[7].as_py())
    """, path, truncate_to(os.path.getsize(path) // 2))
    error, tail = out.strip().splitlines()
    assert error.split()[0] in ("ArrowInvalid", "ArrowTruncatedBody") and "truncated" in error
    count, value = tail.split()
    assert 1 <= int(count) < BATCHES and value == "7"


def test_read_modify_write_of_one_path(tmp_path):
    # read a table from p, change it, write it back to p (pyarrow's writer truncates p in place)
    # while the first table is alive: both tables are right
    path = tmp_path / "t.arrow"
    write(path, table())
    out = run_child("""
    first = ipc.open_file(path).read_all()
    changed = pa.table(first).append_column("j", pa.array(range(first.num_rows)))
    import pyarrow.compute as pc
    changed = changed.filter(pc.greater(changed["i"], 10))
    with pa.ipc.new_file(path, changed.schema) as w:
        w.write_table(changed)
    again = ipc.open_file(path).read_all()
    print(pa.table(first).to_pandas().to_json())
    print(pa.table(again).equals(changed), again.num_rows)
    """, path)
    first, second = out.strip().splitlines()
    assert first == table().to_pandas().to_json()
    assert second == f"True {ROWS * BATCHES - 11}"


def test_a_path_is_read_into_memory_of_ours(tmp_path):
    path = tmp_path / "t.arrow"
    write(path, table())
    for got in (ipc.open_file(path).read_all(), ipc.open_stream(pa_stream_path(tmp_path)).read_all(),
                ipc.open_file(path).get_batch(1),
                ipc.open_file(path, options=ipc.IpcReadOptions(included_fields=[0])).read_all()):
        for column in got.columns:
            for chunk in getattr(column, "chunks", [column]):
                for buf in chunk.data.buffers:
                    assert buf is None or type(exporter_of(buf)).__name__ != "mmap"


def pa_stream_path(tmp_path):
    path = tmp_path / "t.arrows"
    if not path.exists():
        write(path, table(), "stream")
    return path


def test_get_batch_and_projection_read_only_what_they_need(tmp_path):
    path = tmp_path / "t.arrow"
    rows = 400_000
    big = pa.table({"x": pa.array(range(rows), pa.int64()), "y": pa.array(range(rows), pa.int64())})
    with pa.ipc.new_file(str(path), big.schema) as w:
        for b in big.to_batches(max_chunksize=rows // 4):
            w.write_batch(b)
    size = os.path.getsize(path)
    assert size > 6_400_000
    reader = ipc.open_file(path)
    opened = reader.io_stats.bytes_read
    assert 0 < opened < 70_000                         # the footer and the tail, not the file
    assert reader.get_batch(2).column(0)[0].as_py() == rows // 2
    one_batch = reader.io_stats.bytes_read - opened
    assert 1_600_000 <= one_batch < 1_610_000          # 100,000 rows x 2 columns x 8 bytes

    # batches of 1.6 MB: a projection reads the selected column's buffers only
    projected = ipc.open_file(path, options=ipc.IpcReadOptions(included_fields=[1]))
    opened = projected.io_stats.bytes_read
    got = projected.read_all()
    assert pa.table(got).equals(big.select(["y"]))
    assert 3_200_000 <= projected.io_stats.bytes_read - opened < 3_210_000     # column y only

    # every batch without projection: the whole file in one read
    whole = ipc.open_file(path)
    opened = whole.io_stats.bytes_read
    assert pa.table(whole.read_all()).equals(big)
    assert whole.io_stats.bytes_read - opened == size


def test_get_batch_over_every_batch_reads_the_file_whole_after_an_eighth(tmp_path):
    # a scan by get_batch: the first reads fetch their batch only, then the whole file is read
    path = tmp_path / "t.arrow"
    t = pa.table({"i": pa.array(range(64 * 100), pa.int64())})
    with pa.ipc.new_file(str(path), t.schema) as w:
        for b in t.to_batches(max_chunksize=100):
            w.write_batch(b)
    reader = ipc.open_file(path)
    opened = reader.io_stats
    got = [reader.get_batch(i) for i in range(7)]
    assert reader.io_stats.read_requests - opened.read_requests == 7
    got += [reader.get_batch(i) for i in range(7, 64)]
    assert reader.io_stats.read_requests - opened.read_requests == 8      # then the file, once
    assert reader.io_stats.bytes_read - opened.bytes_read < 2 * os.path.getsize(path)
    assert pa.Table.from_batches([pa.record_batch(b) for b in got]).equals(t)


def test_a_projection_of_small_batches_reads_the_file_once(tmp_path):
    # below RANGED_MIN_BATCH_BYTES per batch, planning ranges costs more than it saves
    path = tmp_path / "t.arrow"
    write(path, table())
    projected = ipc.open_file(path, options=ipc.IpcReadOptions(included_fields=[1]))
    opened = projected.io_stats
    assert pa.table(projected.read_all()).equals(table().select(["i"]))
    assert projected.io_stats.bytes_read - opened.bytes_read == os.path.getsize(path)
    assert projected.io_stats.read_requests - opened.read_requests == 1


# -- memory_map=True: zero-copy, the user's choice, checked again on export -----------------------

def mapped_exporter(got):
    return type(exporter_of(got.column(0).chunks[0].data.buffers[1])).__name__


def test_memory_map_true_maps_the_file(tmp_path):
    path = tmp_path / "t.arrow"
    write(path, table())
    got = ipc.open_file(path, memory_map=True).read_all()
    assert mapped_exporter(got) == "mmap"
    assert pa.table(got).equals(table())
    stream = pa_stream_path(tmp_path)
    got = ipc.open_stream(stream, memory_map=True).read_all()
    assert mapped_exporter(got) == "mmap" and pa.table(got).equals(table())
    assert mapped_exporter(ipc.open_file(path).read_all()) != "mmap"


@pytest.mark.parametrize("how", ["memory_map=True", "arrowipc.memory_map"])
def test_export_of_a_rewritten_mapping_is_checked_again(how, tmp_path):
    path = tmp_path / "t.arrow"
    write(path, table())
    source = "ipc.open_file(path, memory_map=True)" if how == "memory_map=True" \
        else "ipc.open_file(arrowipc.memory_map(path))"
    out = run_child(f"""
    got = {source}.read_all()
    assert pa.table(got).num_rows == {ROWS * BATCHES}       # checked and exported once
    wait_for_parent()
    try:
        pa.table(got)
        print("exported")
    except Exception as e:          # ours, raised inside pyarrow's import: its ArrowInvalid
        print(type(e).__name__, e)
    """, path, rewrite_in_place)
    assert out.startswith("ArrowInvalid"), out
    assert "memory-mapped, checked again on export" in out and "offset" in out


def test_export_of_an_unchanged_mapping_is_zero_copy(tmp_path):
    path = tmp_path / "t.arrow"
    write(path, table())
    got = ipc.open_file(path, memory_map=True).read_all()
    col = got.column(0).chunks[0]
    exported = pa.table(got).column(0).chunks[0]
    assert exported.buffers()[2].address == col.data.buffers[2].address


def test_memory_map_is_a_file_object_as_pyarrows(tmp_path):
    path = tmp_path / "t.arrows"
    write(path, table(), "stream")
    size = os.path.getsize(path)
    with arrowipc.memory_map(path) as src, pa.memory_map(str(path)) as theirs:
        assert src.size() == theirs.size() == size
        assert src.read(8) == theirs.read(8)
        assert src.tell() == theirs.tell() == 8
        assert src.seek(0) == theirs.seek(0) == 0
        assert src.read_buffer(16).to_pybytes() == theirs.read_buffer(16).to_pybytes()
        assert src.seek(-4, 2) == size - 4
        assert src.read() == theirs.read_at(4, size - 4)
        src.seek(0)
        got = ipc.open_stream(src).read_all()
        assert pa.table(got).equals(table())
        assert mapped_exporter(got) == "mmap"                     # a view of the mapping
    assert src.closed
    with pytest.raises(ValueError, match="closed"):
        src.read(1)
    assert pa.table(got).equals(table())                          # the views keep it mapped


def test_memory_map_refuses_writable_modes(tmp_path):
    path = tmp_path / "t.arrow"
    path.write_bytes(b"x")
    with pytest.raises(ValueError, match="read-only"):
        arrowipc.memory_map(path, "r+")


def test_a_missing_path_is_an_os_error(tmp_path):
    with pytest.raises(FileNotFoundError):
        ipc.open_file(tmp_path / "missing.arrow")
    with pytest.raises(FileNotFoundError):
        ipc.open_stream(tmp_path / "missing.arrows")
    with pytest.raises(IsADirectoryError):
        ipc.open_file(tmp_path)


def test_a_file_that_changes_size_before_a_whole_read_is_an_error(tmp_path):
    path = tmp_path / "t.arrow"
    write(path, table())
    reader = ipc.open_file(path)
    with open(path, "ab") as f:
        f.write(b"\0" * 64)
    with pytest.raises(ArrowInvalid, match="changed size while being read"):
        reader.read_all()


def test_reads_split_over_threads_give_the_file_as_it_is(tmp_path, monkeypatch):
    from arrowipc.ipc import paths
    monkeypatch.setattr(paths, "PARALLEL_READ_BYTES", 4096)
    monkeypatch.setattr(paths, "_READ_THREADS", 3)
    path = tmp_path / "bytes"
    data = os.urandom(100_003)
    path.write_bytes(data)
    assert paths.read_path(path).to_pybytes() == data
    source = paths.PathSource(path)
    assert source.read_at(10_001, 50_000).to_pybytes() == data[10_001:60_001]
    os.truncate(path, 70_000)                        # a part comes back short: the rest is cut
    assert paths.read_path(path).to_pybytes() == data[:70_000]
    with pytest.raises(ArrowInvalid, match=r"expected 50000 bytes at offset 30000, got 40000"):
        source.read_at(30_000, 50_000)
    source.close()


def test_a_stream_path_is_read_whole_only_when_batches_are_wanted(tmp_path):
    path = pa_stream_path(tmp_path)
    size = os.path.getsize(path)
    reader = ipc.open_stream(path)
    assert reader.schema.names == ["s", "i"]
    schema_bytes = reader.io_stats.bytes_read
    assert 0 < schema_bytes < 1000                   # the schema message alone
    assert pa.table(reader.read_all()).equals(table())
    assert reader.io_stats.bytes_read == schema_bytes + size
    assert ipc.read_schema(path).names == ["s", "i"]
