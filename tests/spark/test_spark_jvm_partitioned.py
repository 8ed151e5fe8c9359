"""Partitioned tables on the JVM source: partitionBy writes hive-style col=value directories as
Spark's Parquet source does (its escaping, __HIVE_DEFAULT_PARTITION__, partition columns kept out
of the files, dynamic and static overwrite, maxRecordsPerFile, nothing left by a failed job);
reads discover them (type inference, basePath, a user schema), prune partitions before any file
is opened (ReadStats.filesOpened), keep statistics skipping and count(*) from footers; catalog
tables (CREATE TABLE ... USING arrowipc, INSERT INTO, spark.table). Spark's Parquet source, on the
same data, is the oracle for layout and values."""
import datetime
import os

import pyarrow as pa
import pyarrow.dataset as ds
import pytest

from arrowipc import ipc

pytestmark = pytest.mark.spark

ROWS = [(1, "DE", "a"), (2, "FR", "b"), (3, None, "c"), (4, "", "d"), (5, "a/b=c", "e"),
        (6, "DE", "f"), (7, "x y%", "g")]
SCHEMA = "id long, country string, v string"


def _layout(root):
    """The relative paths of the directories and data files under `root` (no _SUCCESS, .crc)."""
    out = []
    for d, dirs, files in os.walk(root):
        rel = os.path.relpath(d, root)
        out += [os.path.join(rel, x) for x in dirs]
        out += [os.path.join(rel, "<file>") for f in files
                if not f.startswith(("_", ".")) and rel != "."]
    return sorted(set(p.replace("./", "", 1) for p in out))


def _files(root):
    return sorted(os.path.join(d, f) for d, _, fs in os.walk(root) for f in fs
                  if not f.startswith(("_", ".")))


def _write(spark, path, rows=ROWS, schema=SCHEMA, fmt="arrowipc", mode="overwrite", by=("country",),
           **options):
    w = spark.createDataFrame(rows, schema).coalesce(1).write.format(fmt).mode(mode)
    for k, v in options.items():
        w = w.option(k, v)
    w.partitionBy(*by).save(path)


def test_partition_by_writes_the_directories_spark_parquet_writes(spark, jvm, tmp_path):
    _write(spark, str(tmp_path / "a"))
    _write(spark, str(tmp_path / "p"), fmt="parquet")
    assert _layout(tmp_path / "a") == _layout(tmp_path / "p")
    dirs = set(os.listdir(tmp_path / "a"))
    # null and "" go to the default partition; / = % escaped as Spark escapes them
    assert {"country=DE", "country=FR", "country=__HIVE_DEFAULT_PARTITION__", "country=a%2Fb%3Dc",
            "country=x y%25"} <= dirs
    assert all(f.endswith(".arrow") for f in _files(tmp_path / "a"))


def test_partition_columns_are_not_stored_in_the_files(spark, jvm, tmp_path):
    _write(spark, str(tmp_path / "a"))
    for f in _files(tmp_path / "a"):
        assert ipc.open_file(f).schema.names == ["id", "v"]


def test_partitioned_table_reads_back_as_parquet_does(spark, jvm, tmp_path):
    _write(spark, str(tmp_path / "a"))
    _write(spark, str(tmp_path / "p"), fmt="parquet")
    got = spark.read.format("arrowipc").load(str(tmp_path / "a"))
    want = spark.read.parquet(str(tmp_path / "p"))
    assert got.schema == want.schema
    assert got.columns == ["id", "v", "country"]
    assert sorted(got.collect()) == sorted(want.collect())
    # the scan is columnar: batches with the partition values as constant columns
    assert "Batched: true" in got._jdf.queryExecution().executedPlan().toString()


def test_partition_filter_opens_only_the_matching_partitions_files(spark, jvm, tmp_path):
    _write(spark, str(tmp_path / "a"))
    df = spark.read.format("arrowipc").load(str(tmp_path / "a"))
    jvm.reset()
    assert sorted(r.id for r in df.where("country = 'DE'").collect()) == [1, 6]
    assert jvm.filesOpened() == 1
    jvm.reset()
    assert [r.id for r in df.where("country is null").collect()] == sorted([3, 4])
    assert jvm.filesOpened() == 1
    jvm.reset()
    assert df.where("country = 'nowhere'").count() == 0
    assert jvm.filesOpened() == 0
    jvm.reset()
    assert df.count() == len(ROWS)
    assert jvm.filesOpened() == len(_files(tmp_path / "a"))


def test_count_with_a_partition_filter_reads_footers_only(spark, jvm, tmp_path):
    _write(spark, str(tmp_path / "a"))
    df = spark.read.format("arrowipc").load(str(tmp_path / "a"))
    jvm.reset()
    assert df.where("country = 'DE'").count() == 2
    assert (jvm.filesOpened(), jvm.filesCountedFromFooter(), jvm.bodyBytesRead()) == (1, 1, 0)


def test_statistics_skip_batches_inside_partitions(spark, jvm, tmp_path):
    rows = [(i, "DE" if i % 2 else "FR", f"v{i}") for i in range(4_000)]
    _write(spark, str(tmp_path / "a"), rows=rows, rowsPerBatch="500")
    df = spark.read.format("arrowipc").load(str(tmp_path / "a"))
    jvm.reset()
    assert sorted(r.id for r in df.where("country = 'DE' and id between 1001 and 1005").collect()) \
        == [1001, 1003, 1005]
    assert jvm.filesOpened() == 1
    assert jvm.batchesRead() == 1 and jvm.batchesSkipped() == 3
    # a file whose footer rules the filter out is not read at all
    jvm.reset()
    assert df.where("id > 100000").count() == 0
    assert (jvm.filesSkipped(), jvm.batchesRead()) == (2, 0)


def test_nested_partitions_are_discovered_at_any_depth_with_inferred_types(spark, jvm, tmp_path):
    rows = [(i, 2024 + i % 2, i % 3, datetime.date(2024, 1, 1 + i % 2), 1.5 * (i % 2), f"v{i}")
            for i in range(12)]
    schema = "id long, year int, month int, day date, ratio double, v string"
    _write(spark, str(tmp_path / "a"), rows=rows, schema=schema, by=("year", "month", "day", "ratio"))
    _write(spark, str(tmp_path / "p"), rows=rows, schema=schema, fmt="parquet",
           by=("year", "month", "day", "ratio"))
    got = spark.read.format("arrowipc").load(str(tmp_path / "a"))
    want = spark.read.parquet(str(tmp_path / "p"))
    assert got.schema == want.schema
    assert dict(got.dtypes)["year"] == "int" and dict(got.dtypes)["day"] == "date"
    assert sorted(got.collect()) == sorted(want.collect())
    jvm.reset()
    assert got.where("year = 2025 and month = 1").count() == 2
    assert jvm.filesOpened() == 1


def test_type_inference_can_be_turned_off(spark, jvm, tmp_path):
    _write(spark, str(tmp_path / "a"), rows=[(1, 7, "a"), (2, 8, "b")], schema="id long, k int, v string",
           by=("k",))
    spark.conf.set("spark.sql.sources.partitionColumnTypeInference.enabled", "false")
    try:
        df = spark.read.format("arrowipc").load(str(tmp_path / "a"))
        assert dict(df.dtypes)["k"] == "string"
        assert sorted(r.k for r in df.collect()) == ["7", "8"]
    finally:
        spark.conf.unset("spark.sql.sources.partitionColumnTypeInference.enabled")
    assert dict(spark.read.format("arrowipc").load(str(tmp_path / "a")).dtypes)["k"] == "int"


def test_base_path_keeps_the_partition_column_of_a_partition_directory(spark, jvm, tmp_path):
    _write(spark, str(tmp_path / "a"))
    one = str(tmp_path / "a" / "country=DE")
    df = spark.read.format("arrowipc").option("basePath", str(tmp_path / "a")).load(one)
    assert sorted((r.id, r.country) for r in df.collect()) == [(1, "DE"), (6, "DE")]
    # without basePath the directory is a plain directory of files: no partition column
    assert spark.read.format("arrowipc").load(one).columns == ["id", "v"]


def test_a_user_schema_names_and_types_the_partition_columns(spark, jvm, tmp_path):
    _write(spark, str(tmp_path / "a"), rows=[(1, 7, "a"), (2, 8, "b")], schema="id long, k int, v string",
           by=("k",))
    df = spark.read.format("arrowipc").schema("id long, v string, k long").load(str(tmp_path / "a"))
    assert dict(df.dtypes) == {"id": "bigint", "v": "string", "k": "bigint"}
    assert sorted(tuple(r) for r in df.collect()) == [(1, "a", 7), (2, "b", 8)]


def test_dynamic_overwrite_replaces_only_the_partitions_written(spark, jvm, tmp_path):
    path = str(tmp_path / "a")
    _write(spark, path)
    spark.conf.set("spark.sql.sources.partitionOverwriteMode", "dynamic")
    try:
        _write(spark, path, rows=[(100, "DE", "new")])
    finally:
        spark.conf.unset("spark.sql.sources.partitionOverwriteMode")
    got = spark.read.format("arrowipc").load(path)
    assert sorted(r.id for r in got.where("country = 'DE'").collect()) == [100]
    assert got.count() == len(ROWS) - 2 + 1
    # the write option says the same
    _write(spark, path, rows=[(200, "FR", "new")], partitionOverwriteMode="dynamic")
    got = spark.read.format("arrowipc").load(path)
    assert sorted(r.id for r in got.where("country in ('DE', 'FR')").collect()) == [100, 200]
    assert got.count() == len(ROWS) - 2 + 1


def test_static_overwrite_replaces_every_partition(spark, jvm, tmp_path):
    path = str(tmp_path / "a")
    _write(spark, path)
    _write(spark, path, rows=[(100, "DE", "new")])
    assert os.listdir(path) != [] and sorted(d for d in os.listdir(path) if "=" in d) == ["country=DE"]
    assert [r.id for r in spark.read.format("arrowipc").load(path).collect()] == [100]


def test_append_adds_files_to_the_partitions(spark, jvm, tmp_path):
    path = str(tmp_path / "a")
    _write(spark, path)
    _write(spark, path, rows=[(100, "DE", "new"), (101, "NL", "new")], mode="append")
    got = spark.read.format("arrowipc").load(path)
    assert sorted(r.id for r in got.where("country = 'DE'").collect()) == [1, 6, 100]
    assert got.count() == len(ROWS) + 2


def test_max_records_per_file_splits_each_partition(spark, jvm, tmp_path):
    rows = [(i, "DE" if i < 10 else "FR", "v") for i in range(13)]
    _write(spark, str(tmp_path / "a"), rows=rows, maxRecordsPerFile="4")
    assert len(_files(tmp_path / "a" / "country=DE")) == 3        # 4 + 4 + 2
    assert len(_files(tmp_path / "a" / "country=FR")) == 1
    assert spark.read.format("arrowipc").load(str(tmp_path / "a")).count() == 13


def test_a_failed_job_leaves_nothing_partial(spark, jvm, tmp_path):
    from pyspark.sql.functions import udf
    path = str(tmp_path / "a")
    _write(spark, path)
    before = _files(path)

    @udf("string")
    def explode_on_3(v):
        if v == "c":
            raise ValueError("boom")
        return v

    df = spark.createDataFrame(ROWS, SCHEMA).repartition(2).withColumn("v", explode_on_3("v"))
    with pytest.raises(Exception, match="boom"):
        df.write.format("arrowipc").mode("append").partitionBy("country").save(path)
    assert _files(path) == before
    assert not os.path.exists(os.path.join(path, "_temporary"))
    with pytest.raises(Exception, match="boom"):
        df.write.format("arrowipc").partitionBy("country").save(str(tmp_path / "new"))
    assert _files(tmp_path / "new") == []


def test_spark_writes_and_pyarrow_reads_the_hive_layout(spark, jvm, tmp_path):
    _write(spark, str(tmp_path / "a"), rows=[(1, "DE", "a"), (2, None, "b"), (3, "a/b=c", "c"),
                                             (4, "x y", "d")])
    part = ds.partitioning(pa.schema([("country", pa.string())]), flavor="hive")
    t = ds.dataset(str(tmp_path / "a"), format="ipc", partitioning=part,
                   exclude_invalid_files=False).to_table().sort_by("id")
    assert t.schema.field("id").type == pa.int64() and t.schema.field("v").type == pa.string()
    assert t.to_pylist() == [{"id": 1, "v": "a", "country": "DE"}, {"id": 2, "v": "b", "country": None},
                             {"id": 3, "v": "c", "country": "a/b=c"}, {"id": 4, "v": "d", "country": "x y"}]


def test_pyarrow_writes_the_hive_layout_and_spark_reads_it(spark, jvm, tmp_path):
    t = pa.table({"id": pa.array([1, 2, 3, 4], pa.int64()),
                  "country": ["DE", None, "a/b=c", "x y"],
                  "year": pa.array([2024, 2024, 2025, None], pa.int32()),
                  "v": ["a", "b", "c", "d"]})
    part = ds.partitioning(pa.schema([("country", pa.string()), ("year", pa.int32())]), flavor="hive")
    ds.write_dataset(t, str(tmp_path / "a"), format="ipc", partitioning=part)
    df = spark.read.format("arrowipc").load(str(tmp_path / "a"))
    assert dict(df.dtypes) == {"id": "bigint", "v": "string", "country": "string", "year": "int"}
    assert sorted(tuple(r) for r in df.select("id", "v", "country", "year").collect()) == [
        (1, "a", "DE", 2024), (2, "b", None, 2024), (3, "c", "a/b=c", 2025), (4, "d", "x y", None)]
    jvm.reset()
    assert df.where("year = 2025").count() == 1 and jvm.filesOpened() == 1


@pytest.fixture(scope="module")
def catalog_session(spark):
    """A session whose session catalog loads arrowipc tables as file source tables."""
    session = spark.newSession()
    session.conf.set("spark.sql.catalog.spark_catalog", "io.arrowipc.spark.ArrowIpcSessionCatalog")
    return session


def test_create_table_over_a_partitioned_location(catalog_session, jvm, tmp_path):
    s = catalog_session
    path = str(tmp_path / "a")
    _write(s, path)
    s.sql(f"CREATE TABLE part_loc USING arrowipc LOCATION '{path}'")
    try:
        assert s.table("part_loc").columns == ["id", "v", "country"]
        assert s.table("part_loc").count() == len(ROWS)
        s.sql("INSERT INTO part_loc VALUES (9, 'z', 'IT')")
        assert os.path.isdir(os.path.join(path, "country=IT"))
        jvm.reset()
        assert [r.id for r in s.table("part_loc").where("country = 'IT'").collect()] == [9]
        assert jvm.filesOpened() == 1
    finally:
        s.sql("DROP TABLE part_loc")
    assert os.path.isdir(path)                   # an external table's files stay


def test_create_partitioned_table_insert_and_overwrite_a_partition(catalog_session, jvm, tmp_path):
    s = catalog_session
    path = str(tmp_path / "t")
    s.sql(f"CREATE TABLE part_new (id long, country string) USING arrowipc PARTITIONED BY (country) "
          f"LOCATION '{path}'")
    try:
        s.sql("INSERT INTO part_new VALUES (1, 'A'), (2, 'B')")
        s.sql("INSERT OVERWRITE part_new PARTITION (country = 'A') VALUES (3)")
        assert sorted(tuple(r) for r in s.table("part_new").collect()) == [(2, "B"), (3, "A")]
        assert sorted(d for d in os.listdir(path) if "=" in d) == ["country=A", "country=B"]
        s.sql("CREATE TABLE part_ctas USING arrowipc PARTITIONED BY (country) "
              f"LOCATION '{tmp_path / 'c'}' AS SELECT * FROM part_new")
        assert sorted(tuple(r) for r in s.table("part_ctas").collect()) == [(2, "B"), (3, "A")]
        assert os.path.isdir(tmp_path / "c" / "country=B")
    finally:
        s.sql("DROP TABLE IF EXISTS part_new")
        s.sql("DROP TABLE IF EXISTS part_ctas")


def test_a_stream_reads_a_partitioned_directory(spark, jvm, tmp_path):
    # the partitioned layout is streamed by Spark's file stream source over the file format
    path = str(tmp_path / "a")
    _write(spark, path, rows=[(1, "DE", "a"), (2, "FR", "b")])
    stream = (spark.readStream.format("arrowipc").schema("id long, v string, country string")
              .load(path))
    q = (stream.writeStream.format("memory").queryName("partitioned_stream")
         .option("checkpointLocation", str(tmp_path / "ck")).trigger(availableNow=True).start())
    q.awaitTermination()
    assert sorted(tuple(r) for r in spark.table("partitioned_stream").collect()) == [
        (1, "a", "DE"), (2, "b", "FR")]


def test_the_schema_option_applies_to_a_partitioned_path(spark, jvm, tmp_path):
    # option("schema") is the user schema on the file format path too, as .schema(...) is
    path = str(tmp_path / "a")
    _write(spark, path, rows=[(1, "DE", "a"), (2, "FR", "b")])
    df = spark.read.format("arrowipc").option("schema", "id long, country string").load(path)
    assert df.columns == ["id", "country"]           # the files' v left out, as the schema says
    assert sorted(tuple(r) for r in df.collect()) == [(1, "DE"), (2, "FR")]


def test_the_schema_option_cannot_retype_a_partition_column(spark, jvm, tmp_path):
    path = str(tmp_path / "a")
    _write(spark, path, rows=[(1, 7, "a")], schema="id long, k int, v string", by=("k",))
    df = spark.read.format("arrowipc").option("schema", "id long, k string").load(path)
    with pytest.raises(Exception, match="option schema declares partition column 'k' as string, "
                                        "but Spark inferred int"):
        df.collect()
