"""Stream files written by write_dataset carry batch statistics, and a scan skips the batches
they rule out before decoding them (a stream has no footer: no file is ruled out unread)."""
import numpy as np
import pytest

import arrowipc as A
import arrowipc.dataset as ds
from arrowipc.dataset import field
from arrowipc.ipc import metadata as md
from arrowipc.ipc import reader as reader_module
from arrowipc.ipc.statistics import KEY, read_statistics


@pytest.fixture
def stream_dir(tmp_path):
    """One stream file of 10 batches of 100 rows, x sorted."""
    n = 1000
    table = A.table({"x": np.arange(n), "s": [f"v{i}" for i in range(n)]})
    root = str(tmp_path / "streams")
    ds.write_dataset(table, root, format="stream", max_rows_per_group=100)
    return root


@pytest.fixture
def decoded(monkeypatch):
    """The record batch messages decoded (bodies read into arrays), counted."""
    seen = []
    original = reader_module.MessageDecoder.decode

    def counting(self, msg, header=None):
        if msg.header_type == md.HEADER_RECORD_BATCH:
            seen.append(msg.offset)
        return original(self, msg, header)
    monkeypatch.setattr(reader_module.MessageDecoder, "decode", counting)
    return seen


def test_write_dataset_puts_batch_statistics_in_each_stream_batch(stream_dir):
    data = ds.dataset(stream_dir, format="stream")
    (path,) = data.files
    with A.ipc.open_stream(path) as reader:
        docs = [read_statistics(item.custom_metadata)
                for item in reader.iter_batches_with_custom_metadata()]
    assert len(docs) == 10
    assert all(d is not None for d in docs)
    assert [d["columns"]["x"]["min"] for d in docs] == list(range(0, 1000, 100))
    assert [d["columns"]["x"]["max"] for d in docs] == list(range(99, 1000, 100))


def test_stream_statistics_can_be_turned_off(tmp_path):
    root = str(tmp_path / "plain")
    options = ds.IpcStreamFormat().make_write_options(statistics=False)
    ds.write_dataset(A.table({"x": [1, 2]}), root, format="stream", file_options=options)
    (path,) = ds.dataset(root, format="stream").files
    with A.ipc.open_stream(path) as reader:
        item = reader.read_next_batch_with_custom_metadata()
    assert not item.custom_metadata or KEY.encode() not in item.custom_metadata


def test_a_filter_decodes_only_the_stream_batches_its_range_needs(stream_dir, decoded):
    data = ds.dataset(stream_dir, format="stream")
    got = data.to_table(filter=(field("x") >= 250) & (field("x") < 420))
    assert got.column("x").to_pylist() == list(range(250, 420))
    assert len(decoded) == 3                    # batches 2, 3 and 4 of 10


def test_skipped_stream_batches_keep_their_batch_index(stream_dir):
    data = ds.dataset(stream_dir, format="stream")
    got = data.to_table(columns=["x", "__batch_index", "__last_in_fragment"],
                        filter=field("x") >= 950)
    assert set(got.column("__batch_index").to_pylist()) == {9}
    assert got.column("__last_in_fragment").to_pylist()[-1] is True


def test_count_rows_with_a_value_filter_skips_stream_batches(stream_dir, decoded):
    data = ds.dataset(stream_dir, format="stream")
    assert data.count_rows(filter=field("x") < 150) == 150
    assert len(decoded) == 2


def test_streams_without_statistics_are_filtered_by_rows(tmp_path, decoded):
    path = str(tmp_path / "plain.arrows")
    table = A.table({"x": np.arange(300)})
    with A.ipc.new_stream(path, table.schema) as w:
        w.write_table(table, max_chunksize=100)
    got = ds.dataset(path, format="stream").to_table(filter=field("x") > 250)
    assert got.num_rows == 49
    assert len(decoded) == 3


def test_new_stream_writes_statistics_when_asked(tmp_path):
    path = str(tmp_path / "s.arrows")
    table = A.table({"x": [3, 1, 2]})
    with A.ipc.new_stream(path, table.schema, statistics=True) as w:
        w.write_table(table)
    with A.ipc.open_stream(path) as reader:
        doc = read_statistics(reader.read_next_batch_with_custom_metadata().custom_metadata)
    assert doc["columns"]["x"]["min"] == 1 and doc["columns"]["x"]["max"] == 3
