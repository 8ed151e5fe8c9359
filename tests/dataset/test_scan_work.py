"""Where a scan does its work: which thread decodes a batch, when partition columns are made
and which files share them. Every result is checked against pyarrow's."""
import os
import struct
import sys
import threading

import numpy as np
import pyarrow as pa
import pyarrow.dataset as pds
import pyarrow.feather as pfeather
import pytest

import arrowipc.dataset as ds
from arrowipc.dataset import field, fragments
from arrowipc.errors import ArrowInvalid
from arrowipc.ipc.reader import RecordBatchFileReader

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                "ipc"))
from ipc_surgery import FOOTER_RECORD_BATCHES, file_blocks  # noqa: E402


@pytest.fixture
def decodes(monkeypatch):
    """{"in place": [thread ident of each batch decoded as views of its file],
    "read": [... of each batch get_batch decoded], "plans": [... of each file planned]}."""
    seen = {"in place": [], "read": [], "plans": []}

    class RecordingReader(RecordBatchFileReader):
        def batch_in_place(self, i):
            batch = super().batch_in_place(i)
            if batch is not None:
                seen["in place"].append(threading.get_ident())
            return batch

        def get_batch(self, i):
            seen["read"].append(threading.get_ident())
            return super().get_batch(i)

    plan = fragments.FileFragment.plan

    def recording_plan(self, *args, **kwargs):
        seen["plans"].append(threading.get_ident())
        return plan(self, *args, **kwargs)

    monkeypatch.setattr(fragments, "RecordBatchFileReader", RecordingReader)
    monkeypatch.setattr(fragments.FileFragment, "plan", recording_plan)
    return seen


def _files(root, compression="uncompressed", files=6):
    """`files` files of 2 batches of 50,000 rows (2 columns), written by pyarrow."""
    os.makedirs(root)
    rng = np.random.default_rng(11)
    for k in range(files):
        table = pa.table({"a": np.arange(100_000) + k * 100_000,
                          "b": rng.integers(0, 1000, 100_000)})
        pfeather.write_feather(table, os.path.join(root, f"part{k}.arrow"),
                               compression=compression, chunksize=50_000)
    return root


def _same_as_pyarrow(ours, root, **kwargs):
    theirs = pds.dataset(root, format="ipc").to_table(**kwargs)
    assert ours.to_pyarrow().equals(theirs)


def test_batches_read_in_place_decode_in_the_consumers_thread(tmp_path, decodes):
    """Uncompressed local files with no filter: the files are opened and the batches decoded
    where the scan is consumed (the work holds the GIL: a pool thread would only take turns
    with this one). Only the first batch goes to the pool, before any batch told how the
    files decode."""
    root = _files(str(tmp_path / "plain"))
    here = threading.get_ident()
    table = ds.dataset(root, format="ipc").to_table(batch_readahead=1)
    _same_as_pyarrow(table, root)
    assert set(decodes["plans"]) == {here}
    assert decodes["read"] == []
    assert len(decodes["in place"]) == 12
    assert decodes["in place"][1:] == [here] * 11
    assert decodes["in place"][0] != here


def test_files_on_a_network_file_system_are_opened_on_the_pool(tmp_path, decodes, monkeypatch):
    """Opening a file on a network file system (NFS, SMB, FUSE) waits on the network: a scan
    and a count then open the files on the pool, several at a time."""
    monkeypatch.setattr(fragments, "on_network_file_system", lambda path: True)
    root = _files(str(tmp_path / "nfs"))
    here = threading.get_ident()
    data = ds.dataset(root, format="ipc")
    _same_as_pyarrow(data.to_table(), root)
    assert decodes["plans"] and here not in decodes["plans"]
    decodes["plans"].clear()
    assert data.count_rows(filter=field("b") < 10) == \
        pds.dataset(root, format="ipc").count_rows(filter=pds.field("b") < 10)
    assert decodes["plans"] and here not in decodes["plans"]


def test_compressed_batches_decode_on_the_pool(tmp_path, decodes):
    """Compressed bodies release the GIL while they decompress: each batch is decoded on the
    pool, none in the consumer's thread."""
    root = _files(str(tmp_path / "lz4"), compression="lz4")
    here = threading.get_ident()
    table = ds.dataset(root, format="ipc").to_table(batch_readahead=1)
    _same_as_pyarrow(table, root)
    assert decodes["in place"] == []
    assert len(decodes["read"]) == 12
    assert here not in decodes["read"]


def test_a_filtered_scan_decodes_on_the_pool(tmp_path, decodes):
    """A filter left to apply to the rows runs kernels that release the GIL: the batches go
    to the pool even when they decode in place."""
    root = _files(str(tmp_path / "plain"))
    here = threading.get_ident()
    table = ds.dataset(root, format="ipc").to_table(filter=field("b") < 10, batch_readahead=1)
    _same_as_pyarrow(table, root, filter=pds.field("b") < 10)
    assert len(decodes["in place"]) == 12
    assert here not in decodes["in place"]


def test_without_threads_every_batch_decodes_in_the_consumers_thread(tmp_path, decodes):
    root = _files(str(tmp_path / "lz4"), compression="lz4")
    table = ds.dataset(root, format="ipc").to_table(use_threads=False)
    _same_as_pyarrow(table, root)
    assert set(decodes["read"]) == {threading.get_ident()}


@pytest.fixture
def hive_root(tmp_path):
    """2 dates x 3 countries, one file each, 4 batches of 5,000 rows a file, by pyarrow."""
    n = 120_000
    ids = np.arange(n)
    table = pa.table({"date": pa.array(20260101 + ids * 2 // n, pa.int32()),
                      "country": pa.array(np.array(["DE", "FR", "US"])[ids % 3]),
                      "x": ids, "b": np.random.default_rng(2).integers(0, 1000, n)})
    root = str(tmp_path / "hive")
    pds.write_dataset(table, root, format="ipc", partitioning=["date", "country"],
                      partitioning_flavor="hive", max_rows_per_group=5_000)
    return root


def _value_buffers(table, name):
    """{value: set of the addresses of the data buffers holding it} of partition column
    `name` of a scan's table."""
    out = {}
    for chunk in table.column(name).chunks:
        data = chunk.data
        value = chunk[0].as_py()
        out.setdefault(value, set()).add(data.buffers[-1].address)
    return out


def _files_holding(table, name):
    """{value of partition column `name`: how many files hold it} of a scan's table."""
    files = {}
    for path, chunk in zip(table.column("__filename").chunks, table.column(name).chunks):
        files.setdefault(chunk[0].as_py(), set()).add(path[0].as_py())
    return {value: len(paths) for value, paths in files.items()}


def test_files_with_one_partition_value_share_its_column(hive_root):
    """The files with one partition value share the column a scan makes for it (views of it,
    as long as each batch), instead of making their own: it is made again only when a batch
    is longer than it (then twice as long)."""
    data = ds.dataset(hive_root, format="ipc", partitioning="hive")
    ours = data.to_table(columns=["x", "b", "date", "country", "__filename"])
    theirs = pds.dataset(hive_root, format="ipc", partitioning="hive").to_table()
    assert ours.drop_columns(["__filename"]).to_pyarrow().equals(theirs)
    for name in ("date", "country"):
        made = _value_buffers(ours, name)
        files = _files_holding(ours, name)
        assert set(made) == set(files)
        assert all(len(made[value]) < files[value] for value in files), name


def test_partition_columns_past_the_scans_bound_are_made_per_file(hive_root, monkeypatch):
    """Past the bytes a scan keeps to share, each file makes its own partition columns: no
    two files share one."""
    monkeypatch.setattr(fragments, "REPEATED_VALUES_BYTES", 0)
    data = ds.dataset(hive_root, format="ipc", partitioning="hive")
    ours = data.to_table(columns=["x", "b", "date", "country", "__filename"])
    theirs = pds.dataset(hive_root, format="ipc", partitioning="hive").to_table()
    assert ours.drop_columns(["__filename"]).to_pyarrow().equals(theirs)
    files_of = {}
    for path, chunk in zip(ours.column("__filename").chunks, ours.column("date").chunks):
        files_of.setdefault(chunk.data.buffers[-1].address, set()).add(path[0].as_py())
    assert all(len(paths) == 1 for paths in files_of.values())
    assert len(files_of) >= len(data.files)


def test_a_filter_on_file_columns_drops_rows_before_partition_columns_are_made(
        hive_root, monkeypatch):
    """A filter that reads file columns alone is applied before the partition columns are
    made: they are made for the rows kept (a column grows, doubling, when a batch keeps more),
    not for whole batches. A filter on a partition column and a file column, and one on a
    special column, give pyarrow's rows too."""
    made = []
    repeat = fragments._repeat

    def recording_repeat(value, type_, n, dictionary=None):
        made.append(n)
        return repeat(value, type_, n, dictionary)
    monkeypatch.setattr(fragments, "_repeat", recording_repeat)
    data = ds.dataset(hive_root, format="ipc", partitioning="hive")
    theirs = pds.dataset(hive_root, format="ipc", partitioning="hive")
    ours = data.to_table(filter=field("b") < 10)
    expected = theirs.to_table(filter=pds.field("b") < 10)
    assert ours.to_pyarrow().equals(expected)
    most_kept = max(len(b) for b in data.to_batches(filter=field("b") < 10))
    assert 0 < max(made) <= 2 * most_kept < 5_000
    both = (field("b") < 10) | (field("country") == "DE")
    assert data.to_table(filter=both).to_pyarrow().equals(
        theirs.to_table(filter=(pds.field("b") < 10) | (pds.field("country") == "DE")))
    # pyarrow refuses special columns in a filter: its rows of the second file instead
    special = (field("b") < 10) & (field("__fragment_index") == 1)
    second = pds.dataset(data.files[1], format="ipc").to_table(filter=pds.field("b") < 10)
    got = data.to_table(filter=special, columns=["x", "b"]).to_pyarrow()
    assert got.equals(second.select(["x", "b"]))


@pytest.mark.parametrize("compression", ["uncompressed", "lz4"])
@pytest.mark.parametrize("use_threads", [True, False])
def test_a_bad_batch_after_a_files_first_is_the_scans_error(tmp_path, compression, use_threads):
    """A file whose first batch reads and whose second does not (its footer block points
    outside the file): the scan raises the decode's error naming the file, wherever the batch
    was decoded; the rows before it are not handed out as the whole answer."""
    root = _files(str(tmp_path / "bad"), compression=compression, files=3)
    victim = os.path.join(root, "part1.arrow")
    data = bytearray(open(victim, "rb").read())
    pos, _ = file_blocks(bytes(data), FOOTER_RECORD_BATCHES)[1]
    offset, meta, _ = struct.unpack_from("<qi4xq", data, pos)
    struct.pack_into("<qi4xq", data, pos, offset, meta, 1 << 40)
    open(victim, "wb").write(bytes(data))
    with pytest.raises(ArrowInvalid, match="part1.arrow.*record batch block 1"):
        ds.dataset(root, format="ipc").to_table(use_threads=use_threads)
    with pytest.raises(ArrowInvalid, match="part1.arrow.*record batch block 1"):
        list(ds.dataset(root, format="ipc").to_batches(use_threads=use_threads,
                                                        batch_readahead=1))
