"""The JVM source and the footer's statistics summary (ipc.statistics FILE_KEY): whole files
skipped at planning, count(*) answered from footers without a task opening a batch, the JVM
writer's summary; and delta dictionaries read by the JVM source. pyarrow (and Parquet through
Spark) give the expected results; ReadStats counts what the JVM read."""
import glob
import json

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from arrowipc import ipc
from arrowipc.ipc import statistics as S
from ipc_files import write_ipc_file

pytestmark = pytest.mark.spark

FILES, ROWS, CHUNK = 5, 20_000, 5_000


def _sorted_files(folder, statistics=True):
    """FILES files of ROWS rows each; file k holds ids [k * ROWS, (k + 1) * ROWS), in batches."""
    folder.mkdir()
    tables = []
    for k in range(FILES):
        ids = np.arange(k * ROWS, (k + 1) * ROWS, dtype=np.int64)
        t = pa.table({"id": ids, "v": pa.array(ids % 97, pa.int32()),
                      "s": pa.array([f"s{k}"] * ROWS)})
        tables.append(t)
        path = str(folder / f"part-{k}.arrow")
        write_ipc_file(path, t, statistics, CHUNK)
    return pa.concat_tables(tables)


def test_files_ruled_out_by_the_footer_are_never_opened_by_a_task(spark, jvm, tmp_path):
    t = _sorted_files(tmp_path / "d")
    df = spark.read.format("arrowipc").load(str(tmp_path / "d"))
    lo, hi = 2 * ROWS + 7_000, 2 * ROWS + 7_099          # inside one batch of file 2
    got = df.where(f"id between {lo} and {hi}").selectExpr("sum(v)", "count(*)").collect()[0]
    ids = t["id"].to_numpy()
    want = t.filter(pa.array((ids >= lo) & (ids <= hi)))
    assert (got[0], got[1]) == (pa.compute.sum(want["v"]).as_py(), 100)
    assert jvm.filesSkipped() == FILES - 1
    assert (jvm.batchesRead(), jvm.batchesSkipped()) == (1, ROWS // CHUNK - 1)
    jvm.reset()
    assert df.where("s = 's4' and v < 3").count() == want_count(t, "s4", 3)
    assert jvm.filesSkipped() == FILES - 1 and jvm.batchesRead() == ROWS // CHUNK
    jvm.reset()
    assert df.where("id is null or id > 999999999").count() == 0
    assert (jvm.filesSkipped(), jvm.batchesRead(), jvm.bodyBytesRead()) == (FILES, 0, 0)
    # the same queries over files without statistics read every batch
    _sorted_files(tmp_path / "plain", statistics=False)
    jvm.reset()
    plain = spark.read.format("arrowipc").load(str(tmp_path / "plain"))
    assert plain.where(f"id between {lo} and {hi}").count() == 100
    assert (jvm.filesSkipped(), jvm.batchesRead()) == (0, FILES * ROWS // CHUNK)


def want_count(t, tag, below):
    return sum(1 for s, v in zip(t["s"].to_pylist(), t["v"].to_pylist()) if s == tag and v < below)


def test_count_star_is_answered_from_footers(spark, jvm, tmp_path):
    t = _sorted_files(tmp_path / "d")
    pq.write_table(t, str(tmp_path / "t.parquet"))
    df = spark.read.format("arrowipc").load(str(tmp_path / "d"))
    plan = df.groupBy().count()._jdf.queryExecution().executedPlan().toString()
    assert "count(*) from footers" in plan
    jvm.reset()
    assert df.count() == spark.read.parquet(str(tmp_path / "t.parquet")).count() == t.num_rows
    assert jvm.filesCountedFromFooter() == FILES
    assert (jvm.batchesRead(), jvm.bodyBytesRead()) == (0, 0)     # no task opened a batch
    assert df.selectExpr("count(*) as n").collect()[0].n == t.num_rows
    # a filtered count and a grouped count still read (and stay exact)
    jvm.reset()
    assert df.where("v = 5").count() == int((t["v"].to_numpy() == 5).sum())
    assert jvm.batchesRead() > 0 and jvm.filesCountedFromFooter() == 0
    by_tag = {r["s"]: r["count"] for r in df.groupBy("s").count().collect()}
    assert by_tag == {f"s{k}": ROWS for k in range(FILES)}


def test_count_star_without_a_summary_reads_headers_only(spark, jvm, tmp_path):
    t = _sorted_files(tmp_path / "plain", statistics=False)
    stream = str(tmp_path / "plain" / "more.arrows")
    with pa.ipc.new_stream(stream, t.schema) as w:
        w.write_table(t.slice(0, 12_345), max_chunksize=1_000)
    assert spark.read.format("arrowipc").load(str(tmp_path / "plain")).count() == t.num_rows + 12_345
    assert (jvm.filesCountedFromFooter(), jvm.batchesRead(), jvm.bodyBytesRead()) == (0, 0, 0)


def test_a_summary_that_does_not_describe_the_file_is_ignored(spark, jvm, tmp_path):
    """A footer claiming other batch counts (a file rewritten by a tool that kept the footer
    metadata) neither skips the file nor answers count(*): the batches decide."""
    path = str(tmp_path / "odd.arrow")
    t = pa.table({"id": pa.array(np.arange(1000, dtype=np.int64))})
    lie = json.dumps({"version": 1, "rows": 5, "batch_rows": [5],
                      "columns": {"id": {"null_count": 0, "min": 10**6, "max": 10**6}}})
    with pa.ipc.new_file(path, t.schema, metadata={S.FILE_KEY: lie}) as w:
        w.write_table(t, max_chunksize=100)
    df = spark.read.format("arrowipc").load(path)
    assert df.count() == 1000 and jvm.filesCountedFromFooter() == 0
    assert df.where("id = 42").count() == 1 and jvm.filesSkipped() == 0


def test_jvm_writer_puts_the_summary_in_the_footer(spark, jvm, tmp_path):
    out = str(tmp_path / "out")
    df = spark.range(0, 30_000, numPartitions=2).selectExpr(
        "id", "cast(id % 7 as int) as k", "concat('s', cast(id as string)) as s",
        "cast(id as decimal(10, 2)) / 4 as d", "if(id % 2 = 0, null, cast(id as double)) as x")
    (df.write.format("arrowipc").mode("overwrite").option("rowsPerBatch", 4_000)
     .option("compression", "zstd").save(out))
    files = sorted(glob.glob(out + "/*.arrow"))
    assert len(files) == 2
    for path in files:
        r = pa.ipc.open_file(path)
        doc = json.loads(r.metadata[S.FILE_KEY.encode()])
        got = r.read_all()
        assert doc["rows"] == got.num_rows
        assert doc["batch_rows"] == [r.get_batch(i).num_rows for i in range(r.num_record_batches)]
        for c in ("id", "k", "s", "d", "x"):
            mm = pa.compute.min_max(got[c]).as_py()
            s = doc["columns"][c]
            want_min, want_max = mm["min"], mm["max"]
            if c == "d":
                want_min, want_max = str(want_min), str(want_max)
            assert (s["null_count"], s["min"], s["max"]) == (got[c].null_count, want_min, want_max)
        # arrowipc's Python reader uses the same summary
        assert S.file_statistics(ipc.open_file(path)) == doc
    jvm.reset()
    back = spark.read.format("arrowipc").load(out)
    assert back.count() == 30_000 and jvm.filesCountedFromFooter() == 2
    jvm.reset()
    assert back.where("id >= 29990").count() == 10
    assert jvm.filesSkipped() == 1


def _growing_dictionary_batches(n_batches=4):
    """Batches whose dictionaries each extend the previous one (what pyarrow writes as deltas)."""
    batches, seen = [], []
    for b in range(n_batches):
        words = [f"w{b}_{i % (b + 2)}" for i in range(10)] + [None, "w0_0"]
        seen += [w for w in dict.fromkeys(words) if w is not None and w not in seen]
        values = pa.array(seen)
        indices = pa.compute.index_in(pa.array(words), values)
        batches.append(pa.record_batch({"k": pa.DictionaryArray.from_arrays(indices, values),
                                        "n": pa.array(range(b * 12, b * 12 + 12))}))
    return batches


@pytest.mark.parametrize("fmt", ["stream", "file"])
def test_delta_dictionaries(spark, jvm, tmp_path, fmt):
    batches = _growing_dictionary_batches()
    path = str(tmp_path / ("d.arrows" if fmt == "stream" else "d.arrow"))
    new = pa.ipc.new_stream if fmt == "stream" else pa.ipc.new_file
    with new(path, batches[0].schema,
             options=pa.ipc.IpcWriteOptions(emit_dictionary_deltas=True)) as w:
        for b in batches:
            w.write_batch(b)
    with pa.OSFile(path) as f:
        if fmt == "file":
            f.seek(8)
        kinds = [m.type for m in pa.ipc.MessageReader.open_stream(f)]
    assert kinds.count("dictionary") == len(batches)             # the first, then deltas
    want = pa.Table.from_batches(batches)
    want_k = want["k"].cast(pa.string()).to_pylist()
    df = spark.read.format("arrowipc").load(path)
    rows = df.orderBy("n").collect()
    assert [r.k for r in rows] == want_k and [r.n for r in rows] == want["n"].to_pylist()
    assert df.where("k = 'w3_4'").count() == want_k.count("w3_4") == 2


def test_many_delta_dictionaries(spark, jvm, tmp_path):
    # one new value per batch, each sent as a delta: the dictionary grows part by part (the
    # parts are appended to in place, not copied per delta) and every batch reads its values
    n = 3000
    values = pa.array([f"v{i}" for i in range(n)])
    schema = pa.schema([("k", pa.dictionary(pa.int32(), pa.string())), ("n", pa.int64())])
    path = str(tmp_path / "many.arrows")
    with pa.ipc.new_stream(path, schema,
                           options=pa.ipc.IpcWriteOptions(emit_dictionary_deltas=True)) as w:
        for b in range(n):
            k = pa.DictionaryArray.from_arrays(pa.array([b, b // 2], pa.int32()), values[: b + 1])
            w.write_batch(pa.record_batch({"k": k, "n": pa.array([2 * b, 2 * b + 1])}, schema=schema))
    rows = spark.read.format("arrowipc").load(path).orderBy("n").collect()
    assert [r.k for r in rows] == [f"v{b // (1 + i)}" for b in range(n) for i in range(2)]
    assert [r.n for r in rows] == list(range(2 * n))
