"""The JVM data source (the jar from java/): what only it does, checked on the shared session.

test_spark_read.py and test_spark_write.py run against whichever source "arrowipc" resolves to
(the JVM source when the jar is built); here: column pruning proven by the body bytes the JVM
read, large multi-block LZ4 bodies, ALKAID1 files, a NOT NULL schema over nulls, and the Python
source still reachable beside it.
"""
import numpy as np
import pyarrow as pa
import pytest

import arrowipc
from arrowipc import ipc

pytestmark = pytest.mark.spark

N = 200_000


def _table():
    rng = np.random.default_rng(7)
    return pa.table({f"c{i}": pa.array(rng.integers(0, 1000, N, dtype=np.int64)) for i in range(4)})


def test_only_the_selected_columns_buffers_are_read(spark, jvm, tmp_path):
    t = _table()
    path = str(tmp_path / "wide.arrow")
    with pa.ipc.new_file(path, t.schema) as w:
        w.write_table(t, max_chunksize=50_000)
    df = spark.read.format("arrowipc").load(path)
    assert df.selectExpr("sum(c2)").collect()[0][0] == pa.compute.sum(t["c2"]).as_py()
    one_column = jvm.bodyBytesRead()
    jvm.reset()
    assert df.selectExpr("sum(c0 + c1 + c2 + c3)").collect()[0][0] == sum(
        pa.compute.sum(t[c]).as_py() for c in t.column_names)
    all_columns = jvm.bodyBytesRead()
    assert one_column == N * 8                      # one int64 column, no validity buffer
    assert all_columns == 4 * one_column
    jvm.reset()
    assert df.count() == N
    assert jvm.bodyBytesRead() == 0                 # count(*) reads message headers only


@pytest.mark.parametrize("writer", ["pyarrow", "arrowipc"])
@pytest.mark.parametrize("compression", ["lz4", "zstd"])
def test_large_compressed_bodies(spark, jvm, tmp_path, compression, writer):
    # LZ4 frames of many linked 64 KiB blocks, as pyarrow writes them; arrowipc's writer cuts
    # the 32 MB buffer in pieces (ZSTD frames back to back, LZ4 blocks joined in one frame)
    n = 4_000_000
    values = pa.array(np.arange(n, dtype=np.int64) % 977)
    strings = pa.array(np.char.add("v", (np.arange(n) % 1013).astype(str)).astype(object))
    t = pa.table({"v": values, "s": strings})
    path = str(tmp_path / f"big-{compression}.arrow")
    lib = pa.ipc if writer == "pyarrow" else ipc
    with lib.new_file(path, t.schema,
                      options=lib.IpcWriteOptions(compression=compression)) as w:
        w.write_table(t if writer == "pyarrow" else arrowipc.table(t))
    row = spark.read.format("arrowipc").load(path).selectExpr(
        "sum(v)", "count(distinct s)", "max(s)").collect()[0]
    assert row[0] == pa.compute.sum(values).as_py()
    assert row[1] == 1013 and row[2] == "v999"


def test_alkaid1_file(spark, jvm, tmp_path):
    path = str(tmp_path / "alkaid.arrow")
    batch = arrowipc.record_batch(pa.record_batch({"a": pa.array([1, 2, 3], pa.int32())}))
    with ipc.new_file(path, batch.schema, magic=b"ALKAID1") as w:
        w.write_batch(batch)
    with open(path, "rb") as f:
        assert f.read(7) == b"ALKAID1"
    assert [r.a for r in spark.read.format("arrowipc").load(path).collect()] == [1, 2, 3]


@pytest.mark.parametrize("fmt", ["arrowipc", "arrowipc_python"])
def test_not_null_schema_over_nulls_names_column_and_file(spark, jvm, tmp_path, fmt):
    path = str(tmp_path / "nulls.arrow")
    with pa.ipc.new_file(path, pa.schema([("a", pa.int64())])) as w:
        w.write_table(pa.table({"a": pa.array([1, None, 3], pa.int64())}))
    df = spark.read.format(fmt).schema("a bigint not null").load(path)
    with pytest.raises(Exception) as info:
        df.collect()
    assert f"column 'a' of {path} (record batch 0) has 1 nulls but the schema declares it " \
           f"NOT NULL" in str(info.value)


def test_python_source_still_reads_beside_the_jvm_source(spark, jvm, tmp_path):
    path = str(tmp_path / "both.arrow")
    with pa.ipc.new_file(path, pa.schema([("a", pa.int64())])) as w:
        w.write_table(pa.table({"a": [5, 6]}))
    jvm_rows = spark.read.format("arrowipc").load(path).collect()
    py_rows = spark.read.format("arrowipc_python").load(path).collect()
    assert jvm_rows == py_rows and [r.a for r in py_rows] == [5, 6]
    assert "BatchScan arrowipc" in spark.read.format("arrowipc").load(path)._jdf.queryExecution() \
        .executedPlan().toString()


def test_batches_skipped_by_statistics(spark, jvm, tmp_path):
    path = str(tmp_path / "sorted.arrow")
    ids = pa.array(np.arange(100_000, dtype=np.int64))
    t = pa.table({"id": ids, "tag": pa.array([f"t{i // 10_000}" for i in range(100_000)])})
    with ipc.new_file(path, arrowipc.schema(t.schema), statistics=True) as w:
        w.write_table(arrowipc.table(t), max_chunksize=10_000)
    df = spark.read.format("arrowipc").load(path)
    assert df.where("id >= 42000 and id < 43000").count() == 1000
    assert (jvm.batchesRead(), jvm.batchesSkipped()) == (1, 9)
    jvm.reset()
    assert df.where("tag = 't7' or id = 5").count() == 10_001
    assert (jvm.batchesRead(), jvm.batchesSkipped()) == (2, 8)
    jvm.reset()
    assert df.where("id is null").count() == 0
    assert jvm.batchesRead() == 0
    # the same filters over a file without statistics read every batch
    plain = str(tmp_path / "plain.arrow")
    with pa.ipc.new_file(plain, t.schema) as w:
        w.write_table(t, max_chunksize=10_000)
    jvm.reset()
    assert spark.read.format("arrowipc").load(plain).where("id < 10").count() == 10
    assert (jvm.batchesRead(), jvm.batchesSkipped()) == (10, 0)


def test_a_later_write_removes_the_temporary_files_of_a_killed_driver(spark, jvm, tmp_path):
    import os
    import subprocess
    import sys
    out = tmp_path / "out"
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    abandoned = out / "_temporary" / "0123abcd"
    (abandoned / "attempt-7").mkdir(parents=True)
    (abandoned / "attempt-7" / "part-00000-0123abcd.arrow").write_bytes(b"x" * 1000)
    (abandoned / "_driver").write_text(f"{os.uname().nodename} {dead.pid}\n")
    alive = out / "_temporary" / "4567ef"
    alive.mkdir()
    (alive / "_driver").write_text(f"{os.uname().nodename} {os.getpid()}\n")
    spark.range(3).write.format("arrowipc").mode("overwrite").save(str(out))
    assert not abandoned.exists() and alive.exists()
    assert sorted(r.id for r in spark.read.format("arrowipc").load(str(out)).collect()) == [0, 1, 2]


def test_corrupt_offsets_fail_naming_file_batch_and_column(spark, jvm, tmp_path):
    path = str(tmp_path / "offsets.arrow")
    with pa.ipc.new_file(path, pa.schema([("s", pa.string())])) as w:
        w.write_table(pa.table({"s": ["ab", "cd", "ef", "gh"]}))
    offset, meta_len, _ = ipc.open_file(path).record_batch_blocks[0]
    with open(path, "r+b") as f:      # the body starts with the offsets (no validity buffer)
        f.seek(offset + meta_len + 2 * 4)
        f.write((1 << 30).to_bytes(4, "little"))
    with pytest.raises(Exception) as info:
        spark.read.format("arrowipc").load(path).collect()
    message = str(info.value)
    assert f"arrowipc: {path} (record batch 0) column 's': offset 3 (6) is smaller than the " \
           f"one before ({1 << 30})" in message


@pytest.mark.parametrize("fmt", ["file", "stream"])
def test_jvm_writer_writes_statistics_that_skip_batches(spark, jvm, tmp_path, fmt):
    import glob
    import json
    out = str(tmp_path / "out")
    df = spark.range(0, 40_000, numPartitions=1).selectExpr(
        "id", "cast(id % 7 as int) as k", "concat('s', cast(id as string)) as s",
        "cast(id as double) / 2 as x")
    (df.write.format("arrowipc").mode("overwrite").option("format", fmt)
     .option("rowsPerBatch", 10_000).option("compression", "zstd").save(out))
    [path] = glob.glob(out + "/*.arrow*")
    reader = pa.ipc.open_file(path) if fmt == "file" else pa.ipc.open_stream(path)
    batches = [reader.get_batch_with_custom_metadata(i) for i in range(reader.num_record_batches)] \
        if fmt == "file" else list(reader.iter_batches_with_custom_metadata())
    docs = [json.loads(b.custom_metadata[b"arrowipc:statistics"]) for b in batches]
    assert docs[1] == {"version": 1, "rows": 10_000, "columns": {
        "id": {"null_count": 0, "min": 10_000, "max": 19_999},
        "k": {"null_count": 0, "min": 0, "max": 6},
        "s": {"null_count": 0, "min": "s10000", "max": "s19999"},
        "x": {"null_count": 0, "min": 5000.0, "max": 9999.5}}}
    jvm.reset()
    assert spark.read.format("arrowipc").load(out).where("id between 25000 and 25009").count() == 10
    assert (jvm.batchesRead(), jvm.batchesSkipped()) == (1, 3)


def test_jvm_writer_durable_option(spark, jvm, tmp_path):
    out = str(tmp_path / "out")
    spark.range(5).write.format("arrowipc").mode("overwrite").option("durable", "true").save(out)
    assert sorted(r.id for r in spark.read.format("arrowipc").load(out).collect()) == list(range(5))
    with pytest.raises(Exception, match="option durable must be true or false; got 'yes'"):
        spark.range(1).write.format("arrowipc").mode("overwrite").option("durable", "yes").save(out)


def test_user_schema_is_checked_by_count_as_by_a_scan(spark, jvm, tmp_path):
    # count(*) answered from footers checks each file against the whole user schema, as a scan
    # does: a file lacking a NOT NULL column fails both (and a projection that skips the column)
    d = tmp_path / "d"
    d.mkdir()
    for name, t in [("ab.arrow", pa.table({"a": [1, 2], "b": [3, 4]})),
                    ("a.arrow", pa.table({"a": [5, 6, 7]}))]:
        with pa.ipc.new_file(str(d / name), t.schema) as w:
            w.write_table(t)
    strict = spark.read.format("arrowipc").schema("a bigint, b bigint not null")
    for action in [lambda: strict.load(str(d)).collect(),
                   lambda: strict.load(str(d)).count(),
                   lambda: strict.option("aggregatePushdown", "false").load(str(d)).count(),
                   lambda: strict.load(str(d)).select("a").collect()]:
        with pytest.raises(Exception) as info:
            action()
        assert "a.arrow has no column 'b', which the given schema declares non-nullable" \
            in str(info.value)
    # a nullable column may be missing: null where a file lacks it, and counted
    loose = spark.read.format("arrowipc").schema("a bigint, b bigint").load(str(d))
    assert loose.count() == 5
    assert sorted(loose.collect()) == sorted([(1, 3), (2, 4), (5, None), (6, None), (7, None)])
    # a column that cannot be read as the declared type fails count(*) too
    wrong = spark.read.format("arrowipc").schema("a bigint, b boolean").load(str(d))
    with pytest.raises(Exception, match="cannot be read as the boolean"):
        wrong.count()
