"""Dataset.take / Scanner.take / FileFragment.take: pyarrow's results and errors, reading only
the batches that hold the rows asked (counted by instrumenting the reads, never by time)."""
import numpy as np
import pytest

import arrowipc as A
import arrowipc.dataset as ds
from arrowipc.dataset import field, fragments
from arrowipc.ipc.reader import RecordBatchFileReader

pa = pytest.importorskip("pyarrow")
pads = pytest.importorskip("pyarrow.dataset")


@pytest.fixture
def reads(monkeypatch):
    """(file name, batch index) of every batch body read; files opened."""
    seen = {"batches": [], "opened": []}

    class CountingReader(RecordBatchFileReader):
        def __init__(self, source, *args, **kwargs):
            super().__init__(source, *args, **kwargs)
            seen["opened"].append(source)
            self._counted = source

        def get_batch(self, i):
            seen["batches"].append((self._counted.rsplit("/", 1)[-1], i))
            return super().get_batch(i)

        def batch_in_place(self, i):
            batch = super().batch_in_place(i)
            if batch is not None:           # else get_batch reads it, and counts it
                seen["batches"].append((self._counted.rsplit("/", 1)[-1], i))
            return batch

    monkeypatch.setattr(fragments, "RecordBatchFileReader", CountingReader)
    return seen


@pytest.fixture
def root(tmp_path):
    """3 files (part-0..2) of 40, 40 and 20 rows, batches of 10 rows, written by pyarrow (no
    statistics: lengths come from headers) and the same by arrowipc (footer statistics)."""
    table = pa.table({"a": np.arange(100), "s": [f"v{i}" for i in range(100)]})
    out = {}
    for who in ("pyarrow", "arrowipc"):
        path = str(tmp_path / who)
        if who == "pyarrow":
            pads.write_dataset(table, path, format="ipc", max_rows_per_file=40,
                               max_rows_per_group=10)
        else:
            ds.write_dataset(table, path, format="ipc", max_rows_per_file=40,
                             max_rows_per_group=10)
        out[who] = path
    return out


INDEX_FORMS = [
    [3, 1, 1, 99, 0],
    np.array([55, 7, 55]),
    np.array([2, 5], dtype=np.uint64),
    np.array([3.0, 1.0]),
    ["4", "2"],
    [True, False],
    [],
]


@pytest.mark.parametrize("who", ["pyarrow", "arrowipc"])
@pytest.mark.parametrize("indices", INDEX_FORMS, ids=repr)
def test_take_gives_pyarrows_rows_in_the_order_asked(root, who, indices):
    want = pads.dataset(root[who], format="ipc").take(indices)
    got = ds.dataset(root[who], format="ipc").take(indices)
    assert got.to_pydict() == want.to_pydict()
    assert got.schema.names == want.schema.names


@pytest.mark.parametrize("make", [lambda v: pa.array(v), lambda v: pa.chunked_array([v[:1], v[1:]]),
                                  lambda v: A.array(v), lambda v: A.chunked_array([v[:1], v[1:]])],
                         ids=["pa.array", "pa.chunked", "array", "chunked"])
def test_take_accepts_arrays_and_chunked_arrays(root, make):
    got = ds.dataset(root["arrowipc"], format="ipc").take(make([42, 8, 42]))
    assert got.column("a").to_pylist() == [42, 8, 42]


@pytest.mark.parametrize("indices, exc, message", [
    ([-1], IndexError, "Index -1 out of bounds"),
    ([10, -3, -12], IndexError, "Index -12 out of bounds"),
    ([100], IndexError, "Some indices were out of bounds: 100"),
    ([102, 5, 101], IndexError, "Some indices were out of bounds: 101, 102"),
    ([103, 100, 101, 102], IndexError, "Some indices were out of bounds: 100, 101, 102, ..."),
    ([1.5], ValueError, "Float value 1.500000 was truncated converting to int64"),
    (np.array([[1, 2]]), ValueError, "only handle 1-dimensional arrays"),
    (3, TypeError, "'int' object is not iterable"),
])
def test_take_errors_are_pyarrows(root, indices, exc, message):
    with pytest.raises(exc) as want:
        pads.dataset(root["pyarrow"], format="ipc").take(indices)
    assert str(want.value) == message
    with pytest.raises(exc) as got:
        ds.dataset(root["pyarrow"], format="ipc").take(indices)
    assert str(got.value) == message
    assert type(got.value).__name__ == type(want.value).__name__


def test_null_indices_are_not_implemented_as_in_pyarrow(root):
    with pytest.raises(NotImplementedError, match="null take indices"):
        pads.dataset(root["pyarrow"], format="ipc").take(pa.array([1, None]))
    with pytest.raises(NotImplementedError, match="null take indices"):
        ds.dataset(root["pyarrow"], format="ipc").take(pa.array([1, None]))


@pytest.mark.parametrize("who", ["pyarrow", "arrowipc"])
def test_take_reads_only_the_batches_holding_the_rows(root, who, reads):
    data = ds.dataset(root[who], format="ipc")
    reads["batches"].clear()
    reads["opened"].clear()
    got = data.take([45, 12, 47, 13])
    assert got.column("a").to_pylist() == [45, 12, 47, 13]
    assert sorted(reads["batches"]) == [("part-0.arrow", 1), ("part-1.arrow", 0)]
    # the walk stops after the batch holding the largest position: part-2 is never opened
    assert not any(p.endswith("part-2.arrow") for p in reads["opened"])


def test_a_second_take_skips_files_by_their_kept_footer_unopened(root, reads):
    data = ds.dataset(root["arrowipc"], format="ipc")
    data.count_rows()                           # keeps each file's footer summary
    reads["opened"].clear()
    assert data.take([85]).column("a").to_pylist() == [85]
    assert [p.rsplit("/", 1)[-1] for p in reads["opened"]] == ["part-2.arrow"]


def test_take_counts_positions_after_the_filter_as_pyarrow(root):
    kept = list(range(0, 100, 3))
    expr_a, expr_p = field("a").isin(kept), pads.field("a").isin(kept)
    want = pads.dataset(root["pyarrow"], format="ipc").take([0, 20, 33, 5], filter=expr_p,
                                                            columns=["s"])
    got = ds.dataset(root["pyarrow"], format="ipc").take([0, 20, 33, 5], filter=expr_a,
                                                         columns=["s"])
    assert got.to_pydict() == want.to_pydict()
    with pytest.raises(IndexError, match="Some indices were out of bounds: 34"):
        ds.dataset(root["pyarrow"], format="ipc").take([34], filter=expr_a)


def test_scanner_and_fragment_take(root):
    data = ds.dataset(root["arrowipc"], format="ipc")
    scanner = data.scanner(filter=field("a") > 3)
    assert scanner.take([0, 1]).column("a").to_pylist() == [4, 5]
    with pytest.raises(IndexError, match="Some indices were out of bounds: 96"):
        scanner.take([96])
    fragment = list(data.get_fragments())[1]
    assert fragment.take([1, 0]).column("a").to_pylist() == [41, 40]
    with pytest.raises(IndexError, match="Some indices were out of bounds: 40"):
        fragment.take([40])


def test_take_from_streams_and_partitions(tmp_path):
    table = A.table({"k": np.repeat([1, 2], 50), "x": np.arange(100)})
    path = str(tmp_path / "s")
    ds.write_dataset(table, path, format="stream", partitioning=["k"],
                     partitioning_flavor="hive", max_rows_per_group=16)
    data = ds.dataset(path, format="stream", partitioning="hive")
    got = data.take([99, 0, 50, 49])
    assert got.column("x").to_pylist() == [99, 0, 50, 49]
    assert got.column("k").to_pylist() == [2, 1, 2, 1]
    assert data.take([3], filter=field("x") >= 60).column("x").to_pylist() == [63]


def test_take_of_an_in_memory_dataset():
    data = ds.dataset(A.table({"a": [5, 6, 7]}))
    assert data.take([2, 0]).column("a").to_pylist() == [7, 5]
    with pytest.raises(IndexError, match="Some indices were out of bounds: 3"):
        data.take([3])


def _with_batch_block(tmp_path, k, edit):
    """A file of three 3-row batches (pyarrow's) whose k-th record batch block is edit(block)."""
    import re
    import struct
    path = str(tmp_path / "bad.arrow")
    t = pa.table({"x": pa.array(range(9), pa.int64())})
    with pa.ipc.new_file(path, t.schema) as w:
        w.write_table(t, max_chunksize=3)
    blocks = A.ipc.open_file(path).record_batch_blocks
    data = bytearray(open(path, "rb").read())
    footer = len(data) - 10 - struct.unpack_from("<i", data, len(data) - 10)[0]
    at = re.compile(re.escape(struct.pack("<qi4xq", *blocks[k]))).search(data, footer).start()
    struct.pack_into("<qi4xq", data, at, *edit(blocks[k]))
    open(path, "wb").write(bytes(data))
    return path


@pytest.mark.parametrize("edit,message", [
    (lambda b: (b[0], b[1], 1 << 40), r"file: record batch block 1 \(offset \d+, metadata \d+, "
                                      r"body 1099511627776\) lies outside the data section"),
    (lambda b: (8, b[1], b[2]), "file: record batch block 1 holds a schema message")],
    ids=["block past the data section", "block at the schema"])
def test_take_over_a_bad_block_is_an_error_naming_the_file(tmp_path, edit, message):
    # the batch lengths take walks were read from the headers with no file named, and a block
    # at the schema message read its header as a batch's
    import re
    path = _with_batch_block(tmp_path, 1, edit)
    with pytest.raises(A.ArrowInvalid, match=f"^{re.escape(path)}: {message}"):
        ds.dataset(path, format="ipc").take([0, 7])
    with pytest.raises((pa.ArrowInvalid, OSError)):     # pyarrow refuses it too
        pads.dataset(path, format="ipc").take([0, 7])
