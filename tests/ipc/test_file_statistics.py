"""The footer's summary of the batch statistics (ipc.statistics FILE_KEY) and the batch selection
that uses it (RecordBatchFileReader.filter_batches, statistics.matching_batches); pyarrow reads
the files as the oracle."""
import json
from decimal import Decimal

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pytest

import arrowipc
from arrowipc import ipc
from arrowipc.ipc import statistics as S


def _write(path, table, chunk, **kw):
    with ipc.new_file(path, arrowipc.schema(table.schema), statistics=True, **kw) as w:
        w.write_table(arrowipc.table(table), max_chunksize=chunk)


def _summary(path):
    md = pa.ipc.open_file(path).metadata           # pyarrow: the footer's custom metadata
    return json.loads(md[S.FILE_KEY.encode()])


def test_footer_summary_folds_every_batch(tmp_path):
    path = str(tmp_path / "f.arrow")
    t = pa.table({
        "i": pa.array([5, None, -3, 8, None, None], pa.int64()),
        "f": pa.array([1.5, 2.0, float("nan"), 0.5, 1.0, 1.0]),
        "s": pa.array(["b", "a", None, "é", "c", "x" * 70]),
        "dec": pa.array([Decimal("9.50"), Decimal("10.25"), None, Decimal("-1.00"), None, None],
                        pa.decimal128(6, 2)),
        "n": pa.nulls(6, pa.int32()),
    })
    _write(path, t, 2, metadata={"mine": "kept"})
    doc = _summary(path)
    assert doc["version"] == 1 and doc["rows"] == 6 and doc["batch_rows"] == [2, 2, 2]
    cols = doc["columns"]
    assert cols["i"] == {"null_count": 3, "min": -3, "max": 8}
    assert cols["f"] == {"null_count": 0}             # a NaN in one batch: no bounds for the file
    assert cols["s"] == {"null_count": 1, "min": "a"}  # a batch's max was too long to keep
    assert cols["dec"] == {"null_count": 3, "min": "-1.00", "max": "10.25"}   # compared as numbers
    assert cols["n"] == {"null_count": 6}
    r = pa.ipc.open_file(path)
    assert r.metadata[b"mine"] == b"kept"
    assert r.read_all().drop_columns(["f"]).equals(t.drop_columns(["f"]))     # NaN != NaN


def test_summary_bounds_match_pyarrow(tmp_path):
    rng = np.random.default_rng(3)
    t = pa.table({"a": rng.integers(-10**9, 10**9, 50_000), "b": rng.random(50_000),
                  "s": pa.array([f"k{v}" for v in rng.integers(0, 999, 50_000)])})
    path = str(tmp_path / "r.arrow")
    _write(path, t, 4096, options=ipc.IpcWriteOptions(compression="lz4"))
    cols = _summary(path)["columns"]
    for c in ("a", "b", "s"):
        mm = pc.min_max(t[c]).as_py()
        assert (cols[c]["min"], cols[c]["max"]) == (mm["min"], mm["max"])
    assert _summary(path)["batch_rows"] == [b.num_rows for b in pa.ipc.open_file(path).read_all()
                                            .to_batches()]


def test_no_summary_without_statistics_and_empty_file(tmp_path):
    plain = str(tmp_path / "p.arrow")
    t = pa.table({"a": [1, 2]})
    with ipc.new_file(plain, arrowipc.schema(t.schema)) as w:
        w.write_table(arrowipc.table(t))
    assert pa.ipc.open_file(plain).metadata is None
    assert S.file_statistics(ipc.open_file(plain)) is None
    empty = str(tmp_path / "e.arrow")
    with ipc.new_file(empty, arrowipc.schema(t.schema), statistics=True):
        pass
    assert _summary(empty) == {"version": 1, "rows": 0, "batch_rows": [], "columns": {}}
    assert list(ipc.open_file(empty).filter_batches([("a", "==", 1)])) == []


def test_filter_batches_skips_by_summary_then_by_batch(tmp_path):
    path = str(tmp_path / "sorted.arrow")
    t = pa.table({"id": pa.array(np.arange(10_000, dtype=np.int64)),
                  "tag": pa.array([f"t{i // 1000}" for i in range(10_000)])})
    _write(path, t, 1000)
    r = ipc.open_file(path)
    assert S.matching_batches(r, [("id", ">=", 4200), ("id", "<", 4300)]) == [4]
    got = list(r.filter_batches([("id", ">=", 4200), ("id", "<", 5100)]))
    assert [b.num_rows for b in got] == [1000, 1000]
    assert pa.table(arrowipc.Table.from_batches(got)).equals(t.slice(4000, 2000))
    assert S.matching_batches(r, [("tag", "in", ["t3", "t9"])]) == [3, 9]
    assert S.matching_batches(r, []) == list(range(10))
    # the summary alone rules the file out: no batch header is read
    r2 = ipc.open_file(path)
    r2.read_block_message = None                   # reading any batch would now fail
    assert S.matching_batches(r2, [("id", ">", 10_000)]) == []
    assert S.matching_batches(r2, [("id", "is_null")]) == []
    assert list(r2.filter_batches([("tag", "<", "t")])) == []


def test_filter_batches_without_statistics_yields_every_batch(tmp_path):
    path = str(tmp_path / "plain.arrow")
    t = pa.table({"id": pa.array(np.arange(100, dtype=np.int64))})
    with pa.ipc.new_file(path, t.schema) as w:
        w.write_table(t, max_chunksize=10)
    assert len(list(ipc.open_file(path).filter_batches([("id", "<", 5)]))) == 10


@pytest.mark.parametrize("summary", [
    '{"version": 1, "rows": 3, "batch_rows": [3], "columns": {"id": {"null_count": 0, "min": 900, "max": 901}}}',
    '{"version": 1, "rows": 11, "batch_rows": [5, 5], "columns": {"id": {"null_count": 0, "min": 900}}}',
    '{"version": 1, "rows": 10, "batch_rows": [5, -5, 10], "columns": {}}',
    '{"version": 1, "rows": 10, "batch_rows": [3, 7], "columns": {}}',
    '{"version": 2, "rows": 10, "batch_rows": [10], "columns": {}}',
    'not json',
])
def test_a_summary_not_describing_the_file_is_ignored(tmp_path, summary):
    """A footer summary with the wrong batch count or rows (in all, or batch by batch against
    the headers), another version or bad JSON is ignored: the batches' own statistics
    decide."""
    path = str(tmp_path / "odd.arrow")
    t = pa.table({"id": pa.array(np.arange(10, dtype=np.int64))})
    with ipc.new_file(path, arrowipc.schema(t.schema), statistics=False,
                      metadata={S.FILE_KEY: summary}) as w:
        w.write_table(arrowipc.table(t), max_chunksize=5)
    r = ipc.open_file(path)
    assert S.file_statistics(r) is None
    assert S.matching_batches(r, [("id", "==", 3)]) == [0, 1]
