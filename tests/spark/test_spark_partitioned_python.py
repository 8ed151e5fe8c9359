"""Partitioned tables on the Python source ("arrowipc_python"): hive-style directories written by
pyarrow (and by Spark's JVM source) read with the partition columns Spark's file sources show
(types inferred as Spark infers them, basePath, a user schema), partitions pruned at planning by
pushed filters, one test per error rule; and partitionBy, which Spark refuses for a Python data
source before the source runs."""
import os

import pyarrow as pa
import pyarrow.dataset as ds
import pytest
from pyspark.sql.datasource import EqualTo, GreaterThan, In, IsNull
from pyspark.sql.types import StructType

from arrowipc.errors import ArrowInvalid
from arrowipc.spark.datasource import ArrowIpcDataSource, ArrowIpcFilteringReader
from arrowipc.spark.partitions import infer_type

pytestmark = pytest.mark.spark

TABLE = pa.table({"id": pa.array([1, 2, 3, 4, 5], pa.int64()),
                  "country": ["DE", None, "a/b=c", "x y", "DE"],
                  "year": pa.array([2024, 2024, 2025, None, 2025], pa.int32()),
                  "v": ["a", "b", "c", "d", "e"]})


def _hive(path, table=TABLE, columns=("country", "year")):
    part = ds.partitioning(pa.schema([table.schema.field(c) for c in columns]), flavor="hive")
    ds.write_dataset(table, str(path), format="ipc", partitioning=part)
    return str(path)


def _schema(path, **options):
    return ArrowIpcDataSource(dict(options, path=path)).schema()


def test_pyarrow_hive_layout_reads_with_partition_columns_last(spark, tmp_path):
    df = spark.read.format("arrowipc_python").load(_hive(tmp_path / "a"))
    assert df.columns == ["id", "v", "country", "year"]
    assert dict(df.dtypes) == {"id": "bigint", "v": "string", "country": "string", "year": "int"}
    want = sorted(TABLE.select(["id", "v", "country", "year"]).to_pylist(), key=lambda r: r["id"])
    assert [r.asDict() for r in df.orderBy("id").collect()] == want


def test_the_python_source_reads_what_spark_parquet_infers(spark, tmp_path):
    path = _hive(tmp_path / "a")
    ours = spark.read.format("arrowipc_python").load(path)
    pq_path = str(tmp_path / "p")
    part = ds.partitioning(pa.schema([TABLE.schema.field("country"), TABLE.schema.field("year")]),
                           flavor="hive")
    ds.write_dataset(TABLE, pq_path, format="parquet", partitioning=part)
    theirs = spark.read.parquet(pq_path)
    assert ours.schema == theirs.select(*ours.columns).schema
    assert sorted(ours.collect()) == sorted(theirs.select(*ours.columns).collect())


def test_spark_jvm_written_partitions_read_with_the_python_source(spark, jvm, tmp_path):
    path = str(tmp_path / "a")
    rows = [(1, "DE", "a"), (2, None, "b"), (3, "a/b=c", "c"), (4, "", "d")]
    (spark.createDataFrame(rows, "id long, country string, v string").write.format("arrowipc")
     .partitionBy("country").save(path))
    df = spark.read.format("arrowipc_python").load(path)
    assert sorted(tuple(r) for r in df.collect()) == [
        (1, "a", "DE"), (2, "b", None), (3, "c", "a/b=c"), (4, "d", None)]


@pytest.mark.parametrize("raw, spark_type", [
    ("7", "integer"), ("-7", "integer"), ("01", "integer"), ("2147483648", "bigint"),
    ("99999999999999999999", "decimal(20,0)"), ("1.5", "double"), ("1e3", "double"),
    ("2024-01-31", "date"), ("2024-01-31 10:20:30", "timestamp"), ("2024-02-30", "string"),
    ("DE", "string"), ("true", "string")])
def test_partition_values_infer_spark_types(raw, spark_type):
    assert infer_type(raw) == spark_type


def test_mixed_values_widen_as_spark_widens(tmp_path):
    t = pa.table({"id": [1, 2, 3], "k": ["1", "2.5", "3"], "s": ["1", "x", "2"]})
    schema = _schema(_hive(tmp_path / "a", t, ("k", "s")))
    assert [(f.name, f.dataType.simpleString()) for f in schema.fields] == [
        ("id", "bigint"), ("k", "double"), ("s", "string")]


def test_type_inference_option_keeps_strings(tmp_path):
    path = _hive(tmp_path / "a")
    schema = _schema(path, partitionColumnTypeInference="false")
    assert schema["year"].dataType.simpleString() == "string"


def test_nested_partitions_at_any_depth_and_base_path(spark, tmp_path):
    path = _hive(tmp_path / "a")
    df = spark.read.format("arrowipc_python").option("basePath", path).load(
        os.path.join(path, "country=DE"))
    assert sorted((r.id, r.country, r.year) for r in df.collect()) == [(1, "DE", 2024), (5, "DE", 2025)]


def test_a_user_schema_names_and_types_partition_columns(spark, tmp_path):
    path = _hive(tmp_path / "a")
    df = spark.read.format("arrowipc_python").schema("year long, id long").load(path)
    assert df.columns == ["year", "id"]
    assert sorted(tuple(r) for r in df.where("year is not null").collect()) == [
        (2024, 1), (2024, 2), (2025, 3), (2025, 5)]
    assert [tuple(r) for r in df.where("year is null").collect()] == [(None, 4)]


def _reader(path, ddl, *filters):
    reader = ArrowIpcFilteringReader({"path": path}, _ddl(ddl), True)
    reader.pushFilters(list(filters))
    return reader


def _ddl(ddl):
    from pyspark.sql.types import IntegerType, LongType, StringType, StructField
    types = {"bigint": LongType(), "string": StringType(), "int": IntegerType()}
    return StructType([StructField(n, types[t]) for n, t in (c.split() for c in ddl.split(","))])


SCHEMA_DDL = "id bigint, v string, country string, year int"


def test_filters_on_partition_columns_prune_partitions_at_planning(tmp_path):
    path = _hive(tmp_path / "a")
    parts = _reader(path, SCHEMA_DDL, EqualTo(("country",), "DE")).partitions()
    assert sorted(os.path.relpath(os.path.dirname(p.path), path) for p in parts) == [
        "country=DE/year=2024", "country=DE/year=2025"]
    parts = _reader(path, SCHEMA_DDL, EqualTo(("country",), "DE"),
                    GreaterThan(("year",), 2024)).partitions()
    assert [p.values for p in parts] == [("DE", 2025)]
    parts = _reader(path, SCHEMA_DDL, IsNull(("year",))).partitions()
    assert [p.values for p in parts] == [("x y", None)]
    parts = _reader(path, SCHEMA_DDL, In(("country",), ("a/b=c", "nowhere"))).partitions()
    assert [p.values for p in parts] == [("a/b=c", 2025)]
    assert _reader(path, SCHEMA_DDL, EqualTo(("country",), "nowhere")).partitions() == []
    # a filter on a data column prunes no partition
    assert len(_reader(path, SCHEMA_DDL, EqualTo(("v",), "a")).partitions()) == 5


def test_conflicting_partition_directories_are_an_error(tmp_path):
    path = _hive(tmp_path / "a")
    other = tmp_path / "a" / "year=2030"
    other.mkdir()
    pa.ipc.new_file(str(other / "x.arrow"), TABLE.select(["id"]).schema).close()
    with pytest.raises(ArrowInvalid, match=r"conflicting partition directories .* partition "
                                           r"columns \['country', 'year'\].* \['year'\]"):
        _schema(path)


def test_a_file_beside_partition_directories_is_an_error(tmp_path):
    path = _hive(tmp_path / "a")
    pa.ipc.new_file(os.path.join(path, "loose.arrow"), TABLE.select(["id"]).schema).close()
    with pytest.raises(ArrowInvalid, match=r"loose.arrow is in partition columns \[\]"):
        _schema(path)


def test_base_path_must_be_a_parent_of_the_load_path(tmp_path):
    path = _hive(tmp_path / "a")
    with pytest.raises(ArrowInvalid, match="basePath .* is not a parent of the load path"):
        _schema(path, basePath=str(tmp_path / "elsewhere"))


def test_a_partition_value_the_user_schema_cannot_hold_is_an_error(tmp_path):
    path = _hive(tmp_path / "a")
    reader = ArrowIpcFilteringReader({"path": path}, _ddl("id bigint, country int"), False)
    reader.pushFilters([])
    with pytest.raises(ArrowInvalid, match=r"partition value 'DE' of .*country=DE.* cannot be read "
                                           r"as int"):
        reader.partitions()


def test_type_inference_option_must_be_a_boolean(tmp_path):
    with pytest.raises(ArrowInvalid, match="partitionColumnTypeInference must be true or false; "
                                           "got 'yes'"):
        _schema(_hive(tmp_path / "a"), partitionColumnTypeInference="yes")


def test_partition_by_is_refused_by_spark_for_the_python_source(spark, tmp_path):
    df = spark.createDataFrame([(1, "DE")], "id long, country string")
    with pytest.raises(Exception, match="partitioning or clustering columns do not match"):
        (df.write.format("arrowipc_python").mode("overwrite").partitionBy("country")
         .save(str(tmp_path / "w")))
    assert not os.path.exists(tmp_path / "w" / "country=DE")
