"""Reading Arrow IPC through the "arrowipc" Spark data source, on a real local SparkSession.

Input files are written by pyarrow (the oracle writer) unless a type needs arrowipc; expected
values are spelled out by hand, so the conversion to Spark's types is checked independently.
"""
import datetime as dt
import os
import sys
from decimal import Decimal

import numpy as np
import pyarrow as pa
import pyarrow.feather as feather
import pytest

import arrowipc
from arrowipc import ipc

pytestmark = pytest.mark.spark

UTC = dt.timezone.utc


def _ts(*args):
    return dt.datetime(*args, tzinfo=UTC)


def _struct_with_dictionary():
    return pa.StructArray.from_arrays(
        [pa.array([1, 2, None, 4], pa.int32()),
         pa.array(["x", "y", "x", None]).dictionary_encode().cast(
             pa.dictionary(pa.int8(), pa.string()))],
        fields=[pa.field("a", pa.int32()), pa.field("b", pa.dictionary(pa.int8(), pa.string()))],
        mask=pa.array([False, False, True, False]))


def _nested():
    inner = pa.StructArray.from_arrays(
        [pa.array(["p", "q", "p"], pa.large_string()).dictionary_encode(),
         pa.array([[1], [], [2, 255]], pa.list_view(pa.uint8()))], names=["x", "y"])
    return pa.ListArray.from_arrays(pa.array([0, 2, 2, 3, 3], pa.int32()), inner,
                                    mask=pa.array([False, True, False, False]))


# (column, source array, Spark type, the values Spark must return)
CASES = [
    ("bool", pa.array([True, None, False, True]), "boolean", [True, None, False, True]),
    ("i8", pa.array([-128, None, 0, 127], pa.int8()), "tinyint", [-128, None, 0, 127]),
    ("i16", pa.array([-32768, None, 1, 32767], pa.int16()), "smallint", [-32768, None, 1, 32767]),
    ("i32", pa.array([-2**31, None, 2, 2**31 - 1], pa.int32()), "int", [-2**31, None, 2, 2**31 - 1]),
    ("i64", pa.array([-2**63, None, 3, 2**63 - 1], pa.int64()), "bigint",
     [-2**63, None, 3, 2**63 - 1]),
    ("u8", pa.array([0, None, 200, 255], pa.uint8()), "smallint", [0, None, 200, 255]),
    ("u16", pa.array([0, None, 40000, 65535], pa.uint16()), "int", [0, None, 40000, 65535]),
    ("u32", pa.array([0, None, 3_000_000_000, 2**32 - 1], pa.uint32()), "bigint",
     [0, None, 3_000_000_000, 2**32 - 1]),
    ("u64", pa.array([0, None, 2**63, 2**64 - 1], pa.uint64()), "decimal(20,0)",
     [Decimal(0), None, Decimal(2**63), Decimal(2**64 - 1)]),
    ("f16", pa.array(np.array([1.5, 0, -2.25, 65504], np.float16),
                     mask=np.array([False, True, False, False])), "float", [1.5, None, -2.25, 65504.0]),
    ("f32", pa.array([1.5, None, float("inf"), -0.5], pa.float32()), "float",
     [1.5, None, float("inf"), -0.5]),
    ("f64", pa.array([1e300, None, -2.5, 0.0]), "double", [1e300, None, -2.5, 0.0]),
    ("dec32", pa.array([Decimal("1.25"), None, Decimal("-99999.99"), Decimal("0")],
                       pa.decimal32(7, 2)), "decimal(7,2)",
     [Decimal("1.25"), None, Decimal("-99999.99"), Decimal("0.00")]),
    ("dec64", pa.array([Decimal("12345678901234.5678"), None, Decimal("-1"), Decimal("0")],
                       pa.decimal64(18, 4)), "decimal(18,4)",
     [Decimal("12345678901234.5678"), None, Decimal("-1.0000"), Decimal("0.0000")]),
    ("dec128", pa.array([Decimal("1234567890123456789012345678.0123456789"), None,
                         Decimal("-0.0000000001"), Decimal("0")], pa.decimal128(38, 10)),
     "decimal(38,10)", [Decimal("1234567890123456789012345678.0123456789"), None,
                        Decimal("-0.0000000001"), Decimal("0E-10")]),
    ("dec256", pa.array([Decimal(10**38 - 1), None, Decimal(-5), Decimal(0)],
                        pa.decimal256(38, 0)), "decimal(38,0)",
     [Decimal(10**38 - 1), None, Decimal(-5), Decimal(0)]),
    ("str", pa.array(["a", None, "", "日本"]), "string", ["a", None, "", "日本"]),
    ("lstr", pa.array(["b", None, "longer text", ""], pa.large_string()), "string",
     ["b", None, "longer text", ""]),
    ("sview", pa.array(["c", None, "a string longer than twelve", "x"], pa.string_view()),
     "string", ["c", None, "a string longer than twelve", "x"]),
    ("bin", pa.array([b"\x00\x01", None, b"", b"z"]), "binary", [b"\x00\x01", None, b"", b"z"]),
    ("lbin", pa.array([b"a", None, b"bb", b""], pa.large_binary()), "binary",
     [b"a", None, b"bb", b""]),
    ("bview", pa.array([b"a", None, b"binary longer than twelve", b""], pa.binary_view()),
     "binary", [b"a", None, b"binary longer than twelve", b""]),
    ("fsb", pa.array([b"abc", None, b"xyz", b"\x00\x00\x00"], pa.binary(3)), "binary",
     [b"abc", None, b"xyz", b"\x00\x00\x00"]),
    ("d32", pa.array([dt.date(1970, 1, 1), None, dt.date(2026, 11, 21), dt.date(1900, 3, 1)]),
     "date", [dt.date(1970, 1, 1), None, dt.date(2026, 11, 21), dt.date(1900, 3, 1)]),
    ("d64", pa.array([dt.date(1970, 1, 2), None, dt.date(2000, 2, 29), dt.date(1969, 12, 31)],
                     pa.date64()), "date",
     [dt.date(1970, 1, 2), None, dt.date(2000, 2, 29), dt.date(1969, 12, 31)]),
    ("ts_s", pa.array([0, None, 1_700_000_000, -1], pa.timestamp("s", tz="UTC")), "timestamp",
     [_ts(1970, 1, 1), None, _ts(2023, 11, 14, 22, 13, 20), _ts(1969, 12, 31, 23, 59, 59)]),
    ("ts_ms_tokyo", pa.array([1, None, 1_700_000_000_123, -1], pa.timestamp("ms", tz="Asia/Tokyo")),
     "timestamp", [_ts(1970, 1, 1, 0, 0, 0, 1000), None, _ts(2023, 11, 14, 22, 13, 20, 123000),
                   _ts(1969, 12, 31, 23, 59, 59, 999000)]),
    ("ts_us", pa.array([1, None, 2, 3], pa.timestamp("us", tz="+02:00")), "timestamp",
     [_ts(1970, 1, 1, 0, 0, 0, 1), None, _ts(1970, 1, 1, 0, 0, 0, 2), _ts(1970, 1, 1, 0, 0, 0, 3)]),
    # nanoseconds round down to the microsecond, also before 1970
    ("ts_ns", pa.array([1_999, None, -1, 1_700_000_000_123_456_789], pa.timestamp("ns", tz="UTC")),
     "timestamp", [_ts(1970, 1, 1, 0, 0, 0, 1), None, _ts(1969, 12, 31, 23, 59, 59, 999999),
                   _ts(2023, 11, 14, 22, 13, 20, 123456)]),
    ("ntz", pa.array([0, None, 86_400_000_001, -1], pa.timestamp("us")), "timestamp_ntz",
     [dt.datetime(1970, 1, 1), None, dt.datetime(1970, 1, 2, 0, 0, 0, 1),
      dt.datetime(1969, 12, 31, 23, 59, 59, 999999)]),
    ("t32s", pa.array([0, None, 3661, 86399], pa.time32("s")), "time(6)",
     [dt.time(0), None, dt.time(1, 1, 1), dt.time(23, 59, 59)]),
    ("t32ms", pa.array([1, None, 3_661_500, 0], pa.time32("ms")), "time(6)",
     [dt.time(0, 0, 0, 1000), None, dt.time(1, 1, 1, 500000), dt.time(0)]),
    ("t64us", pa.array([1, None, 43_200_000_000, 0], pa.time64("us")), "time(6)",
     [dt.time(0, 0, 0, 1), None, dt.time(12), dt.time(0)]),
    ("t64ns", pa.array([1_000, None, 5_000, 86_399_999_999_000], pa.time64("ns")), "time(6)",
     [dt.time(0, 0, 0, 1), None, dt.time(0, 0, 0, 5), dt.time(23, 59, 59, 999999)]),
    ("dur_s", pa.array([1, None, -86_400, 0], pa.duration("s")), "interval day to second",
     [dt.timedelta(seconds=1), None, dt.timedelta(days=-1), dt.timedelta(0)]),
    ("dur_ms", pa.array([1, None, 1500, 0], pa.duration("ms")), "interval day to second",
     [dt.timedelta(milliseconds=1), None, dt.timedelta(seconds=1.5), dt.timedelta(0)]),
    ("dur_us", pa.array([1, None, 2, 3], pa.duration("us")), "interval day to second",
     [dt.timedelta(microseconds=1), None, dt.timedelta(microseconds=2),
      dt.timedelta(microseconds=3)]),
    ("dur_ns", pa.array([1_000, None, 2_999, 0], pa.duration("ns")), "interval day to second",
     [dt.timedelta(microseconds=1), None, dt.timedelta(microseconds=2), dt.timedelta(0)]),
    ("list", pa.array([[1, None], None, [], [3]], pa.list_(pa.int32())), "array<int>",
     [[1, None], None, [], [3]]),
    ("llist", pa.array([["a"], None, [], ["b", None]], pa.large_list(pa.string())),
     "array<string>", [["a"], None, [], ["b", None]]),
    ("lview", pa.ListViewArray.from_arrays(pa.array([2, 0, 0, 1], pa.int32()),
                                           pa.array([1, 0, 2, 2], pa.int32()),
                                           pa.array([10, 11, 12], pa.int64()),
                                           mask=pa.array([False, True, False, False])),
     "array<bigint>", [[12], None, [10, 11], [11, 12]]),
    ("llview", pa.array([[1], None, [2, 3], []], pa.large_list_view(pa.int16())),
     "array<smallint>", [[1], None, [2, 3], []]),
    ("fsl", pa.array([[1, 2], None, [3, None], [0, 0]], pa.list_(pa.int8(), 2)), "array<tinyint>",
     [[1, 2], None, [3, None], [0, 0]]),
    ("map", pa.array([[("a", 1)], None, [], [("b", 2), ("c", None)]],
                     pa.map_(pa.string(), pa.uint16())), "map<string,int>",
     [[("a", 1)], None, [], [("b", 2), ("c", None)]]),
    ("struct", _struct_with_dictionary(), "struct<a:int,b:string>",
     [{"a": 1, "b": "x"}, {"a": 2, "b": "y"}, None, {"a": 4, "b": None}]),
    ("dict_str", pa.array(["x", None, "y", "x"]).dictionary_encode().cast(
        pa.dictionary(pa.int16(), pa.string())), "string", ["x", None, "y", "x"]),
    ("dict_int", pa.array([7, 7, None, -1]).dictionary_encode().cast(
        pa.dictionary(pa.int8(), pa.int64())), "bigint", [7, 7, None, -1]),
    ("ree", pa.RunEndEncodedArray.from_arrays(pa.array([2, 3, 4], pa.int32()),
                                              pa.array(["r", None, "s"])), "string",
     ["r", "r", None, "s"]),
    ("null", pa.nulls(4), "void", [None, None, None, None]),
    ("uuid", pa.array([b"0123456789abcdef", None, bytes(16), b"fedcba9876543210"], pa.uuid()),
     "binary", [b"0123456789abcdef", None, bytes(16), b"fedcba9876543210"]),
    ("nested", _nested(), "array<struct<x:string,y:array<smallint>>>",
     [[{"x": "p", "y": [1]}, {"x": "q", "y": []}], None, [{"x": "p", "y": [2, 255]}], []]),
]


def _write_pyarrow_file(path, table, **kw):
    with pa.ipc.new_file(path, table.schema, **kw) as w:
        w.write_table(table)


def _spark_types(df):
    return {f.name: f.dataType.simpleString() for f in df.schema.fields}


def test_every_arrow_type_reads_as_the_spark_type_and_values(spark, tmp_path):
    table = pa.table({name: arr for name, arr, _, _ in CASES})
    _write_pyarrow_file(str(tmp_path / "types.arrow"), table)
    df = spark.read.format("arrowipc").load(str(tmp_path))
    assert _spark_types(df) == {name: st for name, _, st, _ in CASES}
    got = df.toArrow().to_pydict()
    for name, _, _, expected in CASES:
        assert got[name] == expected, name


def test_day_time_interval_and_nullable_columns_written_by_arrowipc(spark, tmp_path):
    batch = arrowipc.record_batch({
        "id": arrowipc.array([1, 2, 3], type=arrowipc.int64()),
        "dt": arrowipc.array([(1, 500), None, (-2, 3)], type=arrowipc.day_time_interval()),
    })
    with ipc.new_file(str(tmp_path / "intervals.arrow"), batch.schema) as w:
        w.write_batch(batch)
        w.write_batch(batch.slice(1))
    df = spark.read.format("arrowipc").load(str(tmp_path / "intervals.arrow"))
    assert _spark_types(df) == {"id": "bigint", "dt": "interval day to second"}
    got = df.toArrow().to_pydict()
    assert got["id"] == [1, 2, 3, 2, 3]
    assert got["dt"] == [dt.timedelta(days=1, milliseconds=500), None,
                         dt.timedelta(days=-2, milliseconds=3), None,
                         dt.timedelta(days=-2, milliseconds=3)]


@pytest.mark.parametrize("column, arrow_type, message", [
    ("u", pa.sparse_union([pa.field("i", pa.int32())]), "union"),
    ("mdn", pa.month_day_nano_interval(), "month-day-nanosecond"),
    ("wide", pa.decimal256(50, 0), "at most 38 digits"),
])
def test_types_spark_cannot_hold_raise_naming_field_and_file(spark, tmp_path, column, arrow_type,
                                                              message):
    if pa.types.is_union(arrow_type):
        arr = pa.UnionArray.from_sparse(pa.array([0, 0], pa.int8()), [pa.array([1, 2], pa.int32())],
                                        ["i"])
    else:
        arr = pa.nulls(2, arrow_type)
    path = str(tmp_path / "bad.arrow")
    _write_pyarrow_file(path, pa.table({"ok": [1, 2], column: arr}))
    with pytest.raises(Exception) as info:
        spark.read.format("arrowipc").load(path).collect()
    text = str(info.value)
    assert "Spark cannot hold" in text and message in text
    assert repr(column) in text and "bad.arrow" in text


def test_schema_mismatch_names_the_file(spark, tmp_path):
    _write_pyarrow_file(str(tmp_path / "a.arrow"), pa.table({"x": [1], "y": ["s"]}))
    _write_pyarrow_file(str(tmp_path / "b.arrow"),
                        pa.table({"x": [2], "y": pa.array([5], pa.int32())}))
    with pytest.raises(Exception) as info:
        spark.read.format("arrowipc").load(str(tmp_path)).collect()
    text = str(info.value)
    assert "b.arrow" in text and "differs from that of" in text and "'y'" in text


def test_layouts_that_read_as_the_same_spark_type_do_not_mismatch(spark, tmp_path):
    _write_pyarrow_file(str(tmp_path / "a.arrow"), pa.table({"s": pa.array(["a"])}))
    _write_pyarrow_file(str(tmp_path / "b.arrow"), pa.table({"s": pa.array(["b"], pa.large_string())}))
    _write_pyarrow_file(str(tmp_path / "c.arrow"),
                        pa.table({"s": pa.array(["c"]).dictionary_encode()}))
    rows = spark.read.format("arrowipc").load(str(tmp_path)).toArrow().to_pydict()
    assert rows == {"s": ["a", "b", "c"]}


@pytest.mark.parametrize("how", ["reader schema", "schema option"])
def test_user_schema_conforms_files_that_differ(spark, tmp_path, how):
    _write_pyarrow_file(str(tmp_path / "a.arrow"),
                        pa.table({"x": pa.array([1, 2], pa.int32()), "y": ["s", None]}))
    _write_pyarrow_file(str(tmp_path / "b.arrow"),
                        pa.table({"Y": pa.array([5], pa.int8()), "x": pa.array([3], pa.int64()),
                                  "extra": [True]}))
    ddl = "x bigint, y string, z double"
    reader = spark.read.format("arrowipc")
    reader = reader.schema(ddl) if how == "reader schema" else reader.option("schema", ddl)
    df = reader.load(str(tmp_path))
    assert _spark_types(df) == {"x": "bigint", "y": "string", "z": "double"}
    assert df.toArrow().to_pydict() == {"x": [1, 2, 3], "y": ["s", None, "5"],
                                        "z": [None, None, None]}


def _numbered_batches(n_batches, rows):
    return [pa.record_batch({"id": pa.array(np.arange(i * rows, (i + 1) * rows, dtype=np.int64)),
                             "tag": pa.array([f"b{i}"] * rows)})
            for i in range(n_batches)]


def _rows_per_partition(df):
    from pyspark.sql import functions as F
    counts = df.groupBy(F.spark_partition_id().alias("p")).count().collect()
    return [r["count"] for r in sorted(counts, key=lambda r: r["p"])]


def test_split_by_record_batch_ranges(spark, tmp_path):
    path = str(tmp_path / "ten.arrow")
    batches = _numbered_batches(10, 100)
    with pa.ipc.new_file(path, batches[0].schema) as w:
        for b in batches:
            w.write_batch(b)
    read = spark.read.format("arrowipc")
    by_rows = read.option("rowsPerPartition", 250).load(path)
    assert by_rows.rdd.getNumPartitions() == 5
    assert _rows_per_partition(by_rows) == [200] * 5
    assert [r["id"] for r in by_rows.select("id").collect()] == list(range(1000))
    assert spark.read.format("arrowipc").option("rowsPerPartition", 100).load(path) \
        .rdd.getNumPartitions() == 10
    assert spark.read.format("arrowipc").option("bytesPerPartition", "1").load(path) \
        .rdd.getNumPartitions() == 10
    whole = spark.read.format("arrowipc").option("bytesPerPartition", "1g").load(path)
    assert whole.rdd.getNumPartitions() == 1
    assert whole.count() == 1000


def test_bad_partition_options_raise(spark, tmp_path):
    path = str(tmp_path / "one.arrow")
    _write_pyarrow_file(path, pa.table({"a": [1]}))
    for key, value in [("rowsPerPartition", "0"), ("bytesPerPartition", "lots")]:
        with pytest.raises(Exception, match=key):
            spark.read.format("arrowipc").option(key, value).load(path).collect()


@pytest.mark.parametrize("compression", [None, "lz4", "zstd"])
def test_compressed_file_input(spark, tmp_path, compression):
    path = str(tmp_path / "c.arrow")
    batches = _numbered_batches(3, 1000)
    options = pa.ipc.IpcWriteOptions(compression=compression)
    with pa.ipc.new_file(path, batches[0].schema, options=options) as w:
        for b in batches:
            w.write_batch(b)
    got = spark.read.format("arrowipc").load(path).toArrow()
    assert got.column("id").to_pylist() == list(range(3000))
    assert got.column("tag").to_pylist() == [f"b{i // 1000}" for i in range(3000)]


def test_stream_and_feather_inputs_in_one_directory(spark, tmp_path):
    batches = _numbered_batches(4, 50)
    options = pa.ipc.IpcWriteOptions(compression="lz4")
    with pa.ipc.new_stream(str(tmp_path / "a.arrows"), batches[0].schema, options=options) as w:
        for b in batches[:2]:
            w.write_batch(b)
    feather.write_feather(pa.Table.from_batches(batches[2:]), str(tmp_path / "b.feather"),
                          compression="zstd", chunksize=50)
    (tmp_path / "_SUCCESS").write_text("")
    (tmp_path / ".hidden.arrow").write_bytes(b"not arrow")
    (tmp_path / "notes.txt").write_text("ignored")
    df = spark.read.format("arrowipc").option("rowsPerPartition", 50).load(str(tmp_path))
    assert df.rdd.getNumPartitions() == 3      # the stream whole, the feather file per batch
    assert [r["id"] for r in df.select("id").collect()] == list(range(200))
    single = spark.read.format("arrowipc").load(str(tmp_path / "a.arrows"))
    assert single.count() == 100


def test_glob_and_file_uri_paths(spark, tmp_path):
    for k in range(3):
        _write_pyarrow_file(str(tmp_path / f"part{k}.arrow"), pa.table({"k": [k]}))
    _write_pyarrow_file(str(tmp_path / "other.arrow"), pa.table({"k": [99]}))
    df = spark.read.format("arrowipc").load(str(tmp_path / "part*.arrow"))
    assert sorted(r["k"] for r in df.collect()) == [0, 1, 2]
    df = spark.read.format("arrowipc").load("file://" + str(tmp_path / "other.arrow"))
    assert [r["k"] for r in df.collect()] == [99]


def test_empty_file_and_missing_path(spark, tmp_path):
    path = str(tmp_path / "empty.arrow")
    schema = pa.schema([("a", pa.int32()), ("b", pa.string())])
    with pa.ipc.new_file(path, schema):
        pass
    df = spark.read.format("arrowipc").load(path)
    assert _spark_types(df) == {"a": "int", "b": "string"}
    assert df.count() == 0
    with pytest.raises(Exception, match="names no"):
        spark.read.format("arrowipc").load(str(tmp_path / "nothing-here"))


def test_corrupt_input_names_the_file(spark, tmp_path):
    path = tmp_path / "broken.arrow"
    path.write_bytes(b"ARROW1\x00\x00garbage")
    with pytest.raises(Exception) as info:
        spark.read.format("arrowipc").load(str(path)).collect()
    assert "broken.arrow" in str(info.value)


def test_alkaid1_file_reads_like_its_arrow1_twin(spark, tmp_path):
    # Format detection goes through ipc.format.sniff: an ALKAID1 file is the file format (split by
    # record batch ranges from its footer), not a stream.
    batches = [arrowipc.record_batch({"id": list(range(k * 100, k * 100 + 100)),
                                      "tag": [f"b{k}"] * 100}) for k in range(4)]
    for name, magic in (("twin.arrow", b"ARROW1"), ("alkaid.arrow", b"ALKAID1")):
        with ipc.new_file(str(tmp_path / name), batches[0].schema, magic=magic) as w:
            for b in batches:
                w.write_batch(b)
    assert (tmp_path / "alkaid.arrow").read_bytes()[:7] == b"ALKAID1"
    read = spark.read.format("arrowipc").option("rowsPerPartition", 100)
    alkaid = read.load(str(tmp_path / "alkaid.arrow"))
    twin = read.load(str(tmp_path / "twin.arrow"))
    assert alkaid.rdd.getNumPartitions() == twin.rdd.getNumPartitions() == 4
    assert alkaid.collect() == twin.collect()
    assert [r["id"] for r in alkaid.collect()] == list(range(400))


def test_input_that_is_not_arrow_names_the_file_and_its_bytes(spark, tmp_path):
    path = tmp_path / "data.arrow"
    path.write_bytes(b"PAR1" + bytes(60))
    with pytest.raises(Exception, match=r"data\.arrow is not an Arrow IPC file or stream.*Parquet"):
        spark.read.format("arrowipc").load(str(path)).collect()


def _file_with_a_corrupt_first_batch(path):
    """A zstd file with statistics whose first batch (ids 0-9) has a corrupt body: a reader
    that decodes it fails, one that skips it by its statistics does not."""
    t = arrowipc.table(pa.table({"id": pa.array(np.arange(30, dtype=np.int64))}))
    with ipc.new_file(path, t.schema, statistics=True,
                      options=ipc.IpcWriteOptions(compression="zstd")) as w:
        w.write_table(t, max_chunksize=10)
    offset, meta_len, _ = ipc.open_file(path).record_batch_blocks[0]
    with open(path, "r+b") as f:
        f.seek(offset + meta_len + 8)          # the data buffer's ZSTD frame, after its prefix
        f.write(b"\x00" * 8)


@pytest.mark.parametrize("fmt", ["arrowipc", "arrowipc_python"])
def test_filters_skip_batches_by_statistics(spark, tmp_path, fmt):
    path = str(tmp_path / "skip.arrow")
    _file_with_a_corrupt_first_batch(path)
    reader = spark.read.format(fmt)
    if fmt == "arrowipc_python":
        reader = reader.option("filterPushdown", "true")
    spark.conf.set("spark.sql.python.filterPushdown.enabled", "true")
    try:
        ids = [r.id for r in reader.load(path).where("id >= 12 and id < 14").collect()]
    finally:
        spark.conf.unset("spark.sql.python.filterPushdown.enabled")
    assert ids == [12, 13]
    with pytest.raises(Exception, match="ZSTD|zstd"):      # no filter: the corrupt batch is read
        spark.read.format(fmt).load(path).collect()


def test_python_source_reads_a_file_over_http(spark, tmp_path):
    # the Python source opens its inputs with ipc.open_file, which takes URLs (through fsspec): a
    # file served over HTTP with Range support reads like the local file
    pytest.importorskip("fsspec")
    pytest.importorskip("aiohttp")
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    try:
        from remote_servers import http_server
    finally:
        sys.path.pop(0)
    batches = _numbered_batches(4, 250)
    sink = pa.BufferOutputStream()
    with pa.ipc.new_file(sink, batches[0].schema) as w:
        for b in batches:
            w.write_batch(b)
    with http_server({"/events.arrow": sink.getvalue().to_pybytes()}) as (base, _):
        df = spark.read.format("arrowipc_python").option("rowsPerPartition", 500) \
            .load(f"{base}/events.arrow")
        assert df.rdd.getNumPartitions() == 2
        assert sorted(r["id"] for r in df.select("id").collect()) == list(range(1000))
