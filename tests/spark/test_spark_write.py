"""Writing through the "arrowipc" data source: types, options, the commit protocol.

Written files are read back with pyarrow (the oracle) as well as through the data source.
"""
import datetime as dt
import glob
import os
from decimal import Decimal

import pyarrow as pa
import pytest

pytestmark = pytest.mark.spark

UTC = dt.timezone.utc

ALL_TYPES_DDL = (
    "id int, flag boolean, b tinyint, s smallint, l bigint, f float, d double, "
    "dec decimal(10,2), wide decimal(38,18), str string, bin binary, day date, ts timestamp, "
    "ntz timestamp_ntz, span interval day to second, ints array<int>, names array<string>, "
    "m map<string,bigint>, st struct<a:int,b:string>, points array<struct<x:double,y:double>>, "
    "nested map<string,array<int>>")

ROWS = [
    (1, True, -1, 300, 2**40, 1.5, -2.25, Decimal("12.34"), Decimal("-1.000000000000000001"),
     "héllo", b"\x00\xff", dt.date(2026, 1, 2), dt.datetime(2026, 1, 2, 3, 4, 5, 6, tzinfo=UTC),
     dt.datetime(2026, 1, 2, 3, 4, 5), dt.timedelta(days=1, microseconds=7), [1, None, 3],
     ["a", "b"], {"k": 1}, (7, "seven"), [(1.0, 2.0)], {"xs": [1, 2]}),
    (2, None, None, None, None, None, None, None, None, None, None, None, None, None, None, None,
     None, None, None, None, None),
    (3, False, 127, -32768, -(2**63), float("-inf"), 0.0, Decimal("-99999999.99"), Decimal("0"),
     "", b"", dt.date(1900, 1, 1), dt.datetime(1969, 12, 31, 23, 59, 59, 999999, tzinfo=UTC),
     dt.datetime(1, 1, 1), dt.timedelta(seconds=-1), [], [], {}, (None, None), [],
     {"empty": []}),
]

EXPECTED_ARROW_TYPES = {
    "id": pa.int32(), "flag": pa.bool_(), "b": pa.int8(), "s": pa.int16(), "l": pa.int64(),
    "f": pa.float32(), "d": pa.float64(), "dec": pa.decimal128(10, 2),
    "wide": pa.decimal128(38, 18), "str": pa.string(), "bin": pa.binary(), "day": pa.date32(),
    "ts": pa.timestamp("us", tz="UTC"), "ntz": pa.timestamp("us"), "span": pa.duration("us"),
    "ints": pa.list_(pa.int32()), "names": pa.list_(pa.string()),
    "m": pa.map_(pa.string(), pa.int64()),
    "st": pa.struct([("a", pa.int32()), ("b", pa.string())]),
    "points": pa.list_(pa.struct([("x", pa.float64()), ("y", pa.float64())])),
    "nested": pa.map_(pa.string(), pa.list_(pa.int32())),
}


def _data_files(path):
    return sorted(p for p in glob.glob(os.path.join(path, "*"))
                  if not os.path.basename(p).startswith(("_", ".")))


def _read_with_pyarrow(path):
    tables = []
    for p in _data_files(path):
        with open(p, "rb") as f:
            magic = f.read(6)
        reader = pa.ipc.open_file(p) if magic == b"ARROW1" else pa.ipc.open_stream(p)
        tables.append(reader.read_all())
    return pa.concat_tables(tables)


def _ids(spark, path):
    return sorted(r["id"] for r in spark.read.format("arrowipc").load(path).select("id").collect())


def test_every_spark_type_round_trips(spark, tmp_path):
    out = str(tmp_path / "out")
    df = spark.createDataFrame(ROWS, ALL_TYPES_DDL)
    df.write.format("arrowipc").mode("overwrite").option("compression", "zstd").save(out)
    written = _read_with_pyarrow(out).sort_by("id")
    for name, expected_type in EXPECTED_ARROW_TYPES.items():
        assert written.schema.field(name).type.equals(expected_type), name
    as_rows = written.to_pylist()
    assert as_rows[0]["str"] == "héllo" and as_rows[0]["m"] == [("k", 1)]
    assert as_rows[0]["ts"] == dt.datetime(2026, 1, 2, 3, 4, 5, 6, tzinfo=UTC)
    assert as_rows[2]["ntz"] == dt.datetime(1, 1, 1)
    assert as_rows[2]["wide"] == Decimal("0E-18")
    assert all(v is None for k, v in as_rows[1].items() if k != "id")

    back = spark.read.format("arrowipc").load(out)
    assert back.schema.simpleString() == df.schema.simpleString()
    assert back.orderBy("id").toArrow().equals(df.orderBy("id").toArrow())


@pytest.mark.parametrize("compression", ["none", "lz4", "zstd"])
@pytest.mark.parametrize("fmt", ["file", "stream"])
def test_compression_and_format_options(spark, tmp_path, compression, fmt):
    out = str(tmp_path / "out")
    df = spark.range(0, 20000, numPartitions=2).selectExpr("id", "id % 3 as small",
                                                           "'same text' as t")
    (df.write.format("arrowipc").mode("overwrite").option("compression", compression)
     .option("format", fmt).save(out))
    files = _data_files(out)
    assert len(files) == 2
    assert all(f.endswith(".arrow" if fmt == "file" else ".arrows") for f in files)
    table = _read_with_pyarrow(out).sort_by("id")
    assert table.column("id").to_pylist() == list(range(20000))
    size = sum(os.path.getsize(f) for f in files)
    raw = 20000 * (8 + 8 + 4 + len("same text"))   # values and string offsets, uncompressed
    if compression == "none":
        assert size > raw
    else:                                          # 'small' and 't' shrink to almost nothing
        assert size < raw // 2
    assert _ids(spark, out) == list(range(20000))


def test_rows_per_batch(spark, tmp_path):
    out = str(tmp_path / "out")
    df = spark.range(0, 1050, numPartitions=1)
    df.write.format("arrowipc").mode("append").option("rowsPerBatch", 100).save(out)
    [path] = _data_files(out)
    reader = pa.ipc.open_file(path)
    sizes = [reader.get_batch(i).num_rows for i in range(reader.num_record_batches)]
    assert sizes == [100] * 10 + [50]
    assert reader.read_all().column("id").to_pylist() == list(range(1050))


def test_append_then_overwrite(spark, tmp_path):
    out = str(tmp_path / "out")
    spark.range(0, 10, numPartitions=2).write.format("arrowipc").mode("append").save(out)
    first = _data_files(out)
    spark.range(10, 15, numPartitions=1).write.format("arrowipc").mode("append").save(out)
    assert _ids(spark, out) == list(range(15))
    assert set(first) < set(_data_files(out))
    assert os.path.exists(os.path.join(out, "_SUCCESS"))

    spark.range(100, 103, numPartitions=1).write.format("arrowipc").mode("overwrite").save(out)
    assert _ids(spark, out) == [100, 101, 102]
    assert not set(first) & set(_data_files(out))
    assert sorted(os.listdir(out)) == sorted(["_SUCCESS"] + [os.path.basename(p)
                                                             for p in _data_files(out)])


def _failing_frame(spark):
    from pyspark.sql import functions as F
    from pyspark.sql.types import LongType

    @F.udf(LongType(), useArrow=False)
    def explode_on_13(x):
        if x == 13:
            raise ValueError("task failure on purpose")
        return x

    return spark.range(0, 20, numPartitions=2).select(explode_on_13("id").alias("id"))


def test_failing_task_leaves_nothing_under_the_output_path(spark, tmp_path):
    out = str(tmp_path / "fresh")
    with pytest.raises(Exception, match="task failure on purpose"):
        _failing_frame(spark).write.format("arrowipc").mode("append").save(out)
    assert not os.path.exists(out) or os.listdir(out) == []


def test_failed_overwrite_keeps_the_old_files(spark, tmp_path):
    out = str(tmp_path / "out")
    spark.range(0, 5, numPartitions=1).write.format("arrowipc").mode("overwrite").save(out)
    before = sorted(os.listdir(out))
    with pytest.raises(Exception, match="task failure on purpose"):
        _failing_frame(spark).write.format("arrowipc").mode("overwrite").save(out)
    assert sorted(os.listdir(out)) == before
    assert _ids(spark, out) == list(range(5))


def test_empty_result_writes_a_schema_only_file(spark, tmp_path):
    out = str(tmp_path / "out")
    df = spark.createDataFrame([], "a int, b string")
    df.write.format("arrowipc").mode("overwrite").save(out)
    files = _data_files(out)
    assert len(files) == 1
    assert pa.ipc.open_file(files[0]).schema.equals(pa.schema([("a", pa.int32()),
                                                               ("b", pa.string())]))
    back = spark.read.format("arrowipc").load(out)
    assert back.schema.simpleString() == "struct<a:int,b:string>" and back.count() == 0


def test_bad_write_options_raise(spark, tmp_path):
    df = spark.range(1)
    for key, value in [("compression", "gzip"), ("format", "parquet"), ("rowsPerBatch", "-1")]:
        with pytest.raises(Exception, match=key):
            df.write.format("arrowipc").mode("append").option(key, value).save(str(tmp_path / key))
