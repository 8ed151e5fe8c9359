"""spark.readStream.format("arrowipc") over a directory files arrive in, on both sources.

Each test runs against the JVM source ("arrowipc" with the jar) and the Python source
("arrowipc_python", the fallback without the jar): files added between triggers are read exactly
once, a query restarted from its checkpoint goes on where it stopped, a file still being written
is left until it is complete, and maxFilesPerTrigger bounds each micro-batch.
"""
import os
import uuid

import pyarrow as pa
import pytest

pytestmark = pytest.mark.spark


@pytest.fixture(params=["jvm", "python"])
def source(request, spark):
    if request.param == "jvm":
        request.getfixturevalue("jvm")      # skips, saying why, without the jar
        return "arrowipc"
    return "arrowipc_python"


SCHEMA = pa.schema([("id", pa.int64()), ("name", pa.string())])


def _table(first, n):
    return pa.table({"id": pa.array(range(first, first + n), pa.int64()),
                     "name": [f"n{i}" for i in range(first, first + n)]}, schema=SCHEMA)


def _file_bytes(t):
    sink = pa.BufferOutputStream()
    with pa.ipc.new_file(sink, t.schema) as w:
        w.write_table(t, max_chunksize=3)
    return sink.getvalue().to_pybytes()


def _stream_bytes(t):
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, t.schema) as w:
        w.write_table(t, max_chunksize=3)
    return sink.getvalue().to_pybytes()


_clock = [1_700_000_000]


def _put(directory, name, data):
    """Write a file as a producer does (to a hidden name, then renamed into place), with a
    modification time later than every file before it."""
    tmp = os.path.join(directory, "." + name + ".tmp")
    with open(tmp, "wb") as f:
        f.write(data)
    _clock[0] += 10
    os.utime(tmp, (_clock[0], _clock[0]))
    os.rename(tmp, os.path.join(directory, name))


def _ids(spark, query_name):
    return sorted(r[0] for r in spark.sql(f"select id from {query_name}").collect())


def _start(spark, source, directory, checkpoint, name, **options):
    reader = spark.readStream.format(source).schema("id bigint, name string")
    for k, v in options.items():
        reader = reader.option(k, v)
    return (reader.load(str(directory)).writeStream.format("memory").queryName(name)
            .option("checkpointLocation", str(checkpoint)).start())


def _name():
    return "s" + uuid.uuid4().hex[:12]


def test_files_added_between_triggers_are_read_once(spark, source, tmp_path):
    d = tmp_path / "in"
    d.mkdir()
    _put(d, "a.arrow", _file_bytes(_table(0, 5)))
    _put(d, "b.arrows", _stream_bytes(_table(5, 4)))
    name = _name()
    q = _start(spark, source, d, tmp_path / "ck", name)
    try:
        q.processAllAvailable()
        assert _ids(spark, name) == list(range(9))
        _put(d, "c.arrow", _file_bytes(_table(9, 7)))
        _put(d, "d.feather", _file_bytes(_table(16, 1)))
        q.processAllAvailable()
        q.processAllAvailable()
        assert _ids(spark, name) == list(range(17))
        rows = spark.sql(f"select id, name from {name} where id = 12").collect()
        assert [tuple(r) for r in rows] == [(12, "n12")]
    finally:
        q.stop()


def _run_collecting(spark, source, directory, checkpoint, **options):
    """Run a query over `directory` until it has read all there is; the ids each batch read.
    (foreachBatch: the memory sink does not restart from a checkpoint.)"""
    batches = []

    def record(df, batch_id):
        batches.append(sorted(r[0] for r in df.collect()))

    reader = spark.readStream.format(source).schema("id bigint, name string")
    for k, v in options.items():
        reader = reader.option(k, v)
    q = (reader.load(str(directory)).writeStream.foreachBatch(record)
         .option("checkpointLocation", str(checkpoint)).start())
    try:
        q.processAllAvailable()
    finally:
        q.stop()
    return [b for b in batches if b]


def test_restart_from_checkpoint_reads_only_new_files(spark, source, tmp_path):
    d = tmp_path / "in"
    d.mkdir()
    ck = tmp_path / "ck"
    _put(d, "a.arrow", _file_bytes(_table(0, 3)))
    assert _run_collecting(spark, source, d, ck) == [[0, 1, 2]]
    _put(d, "b.arrow", _file_bytes(_table(3, 2)))
    _put(d, "c.arrows", _stream_bytes(_table(5, 2)))
    assert _run_collecting(spark, source, d, ck) == [[3, 4, 5, 6]]
    assert _run_collecting(spark, source, d, ck) == []


@pytest.mark.parametrize("kind", ["file", "stream"])
def test_incomplete_file_waits_until_complete(spark, source, tmp_path, kind):
    d = tmp_path / "in"
    d.mkdir()
    _put(d, "a.arrow", _file_bytes(_table(0, 2)))
    data = (_file_bytes if kind == "file" else _stream_bytes)(_table(100, 10))
    name = _name()
    q = _start(spark, source, d, tmp_path / "ck", name)
    try:
        q.processAllAvailable()
        # a writer still going: everything but the trailing magic / end-of-stream marker
        growing = d / ("b.arrow" if kind == "file" else "b.arrows")
        with open(growing, "wb") as f:
            f.write(data[:-8])
        q.processAllAvailable()
        assert _ids(spark, name) == [0, 1]
        with open(growing, "wb") as f:
            f.write(data)
        q.processAllAvailable()
        assert _ids(spark, name) == [0, 1] + list(range(100, 110))
    finally:
        q.stop()


def test_max_files_per_trigger(spark, source, tmp_path):
    d = tmp_path / "in"
    d.mkdir()
    for i in range(5):
        _put(d, f"f{i}.arrow", _file_bytes(_table(10 * i, i + 1)))
    # oldest modification time first, two files a batch
    assert _run_collecting(spark, source, d, tmp_path / "ck", maxFilesPerTrigger=2) == [
        [0, 10, 11], [20, 21, 22, 30, 31, 32, 33], [40, 41, 42, 43, 44]]


def test_schema_inferred_from_the_files_present(spark, source, tmp_path):
    d = tmp_path / "in"
    d.mkdir()
    _put(d, "a.arrow", _file_bytes(_table(0, 2)))
    name = _name()
    df = spark.readStream.format(source).load(str(d))
    assert df.schema.simpleString() == "struct<id:bigint,name:string>"
    q = (df.writeStream.format("memory").queryName(name)
         .option("checkpointLocation", str(tmp_path / "ck")).start())
    try:
        q.processAllAvailable()
        _put(d, "b.arrow", _file_bytes(_table(2, 1)))
        q.processAllAvailable()
        assert _ids(spark, name) == [0, 1, 2]
    finally:
        q.stop()


def test_empty_directory_needs_a_schema(spark, source, tmp_path):
    d = tmp_path / "in"
    d.mkdir()
    with pytest.raises(Exception, match="schema"):
        spark.readStream.format(source).load(str(d))


@pytest.mark.parametrize("kind", ["file", "stream", "legacy-stream"])
def test_is_complete_only_for_the_whole_input(tmp_path, kind):
    from arrowipc.spark.streaming import is_complete
    t = _table(0, 7)
    if kind == "file":
        data = _file_bytes(t)
    else:
        sink = pa.BufferOutputStream()
        options = pa.ipc.IpcWriteOptions(use_legacy_format=kind == "legacy-stream")
        with pa.ipc.new_stream(sink, t.schema, options=options) as w:
            w.write_table(t, max_chunksize=3)
        data = sink.getvalue().to_pybytes()
    path = tmp_path / "x.arrow"
    for cut in range(len(data)):
        path.write_bytes(data[:cut])
        assert not is_complete(str(path)), cut
    path.write_bytes(data)
    assert is_complete(str(path))


def test_unfinished_batch_is_replayed_with_the_same_files(spark, source, tmp_path):
    d = tmp_path / "in"
    d.mkdir()
    ck = tmp_path / "ck"
    _put(d, "a.arrow", _file_bytes(_table(0, 2)))
    _put(d, "b.arrows", _stream_bytes(_table(2, 2)))
    assert _run_collecting(spark, source, d, ck) == [[0, 1, 2, 3]]
    # as if the query had died after planning batch 0 but before committing it
    os.remove(ck / "commits" / "0")
    if (ck / "commits" / ".0.crc").exists():
        os.remove(ck / "commits" / ".0.crc")
    _put(d, "c.arrow", _file_bytes(_table(4, 1)))
    assert _run_collecting(spark, source, d, ck) == [[0, 1, 2, 3], [4]]


def test_a_file_with_another_schema_fails_the_inferred_stream(spark, source, tmp_path):
    d = tmp_path / "in"
    d.mkdir()
    _put(d, "a.arrow", _file_bytes(_table(0, 2)))
    df = spark.readStream.format(source).load(str(d))
    q = (df.writeStream.format("memory").queryName(_name())
         .option("checkpointLocation", str(tmp_path / "ck")).start())
    try:
        q.processAllAvailable()
        _put(d, "b.arrow", _file_bytes(pa.table({"id": pa.array([1], pa.int32())})))
        with pytest.raises(Exception, match="b.arrow"):
            q.processAllAvailable()
    finally:
        q.stop()


def test_jvm_reads_a_file_moved_in_with_an_old_time(spark, jvm, tmp_path):
    # The JVM source numbers files in its checkpoint: a modification time older than files
    # already read does not hide a new file (the Python source's high-water mark would).
    d = tmp_path / "in"
    d.mkdir()
    _put(d, "a.arrow", _file_bytes(_table(0, 2)))
    name = _name()
    q = _start(spark, "arrowipc", d, tmp_path / "ck", name)
    try:
        q.processAllAvailable()
        old = d / "old.arrow"
        old.write_bytes(_file_bytes(_table(10, 2)))
        os.utime(old, (1_000_000, 1_000_000))
        q.processAllAvailable()
        assert _ids(spark, name) == [0, 1, 10, 11]
    finally:
        q.stop()


def test_jvm_latest_first(spark, jvm, tmp_path):
    d = tmp_path / "in"
    d.mkdir()
    for i in range(3):
        _put(d, f"f{i}.arrow", _file_bytes(_table(10 * i, 1)))
    assert _run_collecting(spark, "arrowipc", d, tmp_path / "ck", maxFilesPerTrigger=2,
                           latestFirst="true") == [[10, 20], [0]]


def test_python_latest_first_needs_the_jvm(spark, tmp_path):
    d = tmp_path / "in"
    d.mkdir()
    _put(d, "a.arrow", _file_bytes(_table(0, 1)))
    with pytest.raises(Exception, match="latestFirst=true needs the JVM"):
        _run_collecting(spark, "arrowipc_python", d, tmp_path / "ck", latestFirst="true")


def test_jvm_stream_over_hadoop_uris(spark, jvm, tmp_path):
    # Input and checkpoint as file:// URIs, so both go through Hadoop FileSystems: the file log
    # is written and read back through the checkpoint's, and files are admitted by the
    # modification times the listing gave (here not the order of their names).
    d = tmp_path / "in"
    d.mkdir()
    for name, first, when in [("a.arrow", 0, 3), ("b.arrow", 10, 2), ("c.arrow", 20, 1)]:
        path = d / name
        path.write_bytes(_file_bytes(_table(first, 1)))
        os.utime(path, (1_600_000_000 + when, 1_600_000_000 + when))
    url, ck = "file://" + str(d), "file://" + str(tmp_path / "ck")
    assert _run_collecting(spark, "arrowipc", url, ck, maxFilesPerTrigger=1) == [[20], [10], [0]]
    log = tmp_path / "ck" / "sources" / "0" / "files"
    assert sorted(os.listdir(log)) == ["1", "2", "3"]            # no temporary file, no .crc left
    assert (log / "1").read_text() == f"arrowipc-stream-files v1\n{url}/c.arrow\n".replace(
        "file://", "file:")
    assert _run_collecting(spark, "arrowipc", url, ck, maxFilesPerTrigger=2,
                           latestFirst="true") == []
    # a restart reads the log back and admits only the new files, newest first
    for name, first, when in [("x.arrow", 30, 4), ("y.arrow", 40, 6), ("z.arrow", 50, 5)]:
        path = d / name
        path.write_bytes(_file_bytes(_table(first, 1)))
        os.utime(path, (1_600_000_000 + when, 1_600_000_000 + when))
    assert _run_collecting(spark, "arrowipc", url, ck, maxFilesPerTrigger=2,
                           latestFirst="true") == [[40, 50], [30]]


def test_jvm_checkpoint_on_another_hadoop_file_system(spark, jvm, tmp_path):
    # a checkpoint that is no local path and no file: URI (Hadoop's viewfs mounted on the temporary
    # folder, standing for hdfs:// or s3a://): the file log goes through its FileSystem
    mount = "viewfs-" + uuid.uuid4().hex[:8]
    spark._jsc.hadoopConfiguration().set(f"fs.viewfs.mounttable.{mount}.link./t",
                                         "file://" + str(tmp_path))
    d = tmp_path / "in"
    d.mkdir()
    _put(d, "a.arrow", _file_bytes(_table(0, 2)))
    ck = f"viewfs://{mount}/t/ck"
    assert _run_collecting(spark, "arrowipc", d, ck) == [[0, 1]]
    assert (tmp_path / "ck" / "sources" / "0" / "files" / "1").exists()
    _put(d, "b.arrow", _file_bytes(_table(2, 1)))
    assert _run_collecting(spark, "arrowipc", d, ck) == [[2]]


def test_python_source_streams_from_an_fsspec_url():
    # files under any fsspec URL: complete ones found in modification-time order, each once
    fsspec = pytest.importorskip("fsspec")
    from arrowipc.spark.streaming import INITIAL_KEY, ArrowIpcStreamReader, _offset, is_complete
    fs = fsspec.filesystem("memory")
    root = "/stream-" + uuid.uuid4().hex[:8]
    data = _file_bytes(_table(0, 4))
    fs.pipe(root + "/a.arrow", data)
    fs.pipe(root + "/b.arrows", _stream_bytes(_table(4, 2)))
    fs.pipe(root + "/c.arrow", data[:-3])                     # still being written
    url = "memory:/" + root
    assert [is_complete(f"{url}/{n}") for n in ("a.arrow", "b.arrows", "c.arrow")] == \
        [True, True, False]
    reader = ArrowIpcStreamReader({"path": url}, batch_reader=None)
    first = reader.latestOffset(_offset(INITIAL_KEY), None)
    assert first["path"] == f"{url}/b.arrows" and first["mtime_ns"] > 0
    assert [p for _, p in reader._complete_files(INITIAL_KEY)] == \
        [f"{url}/a.arrow", f"{url}/b.arrows"]
    fs.pipe(root + "/c.arrow", data)
    assert reader.latestOffset(first, None)["path"] == f"{url}/c.arrow"
    assert reader.latestOffset(reader.latestOffset(first, None), None)["path"] == f"{url}/c.arrow"


def test_a_partitioned_directory_streams_new_files_with_their_partition_values(spark, source,
                                                                                tmp_path):
    # files arriving in an existing col=value directory and in a new one are read once each,
    # with the values their directories name
    d = tmp_path / "in"
    for c in ("DE", "FR"):
        (d / f"country={c}").mkdir(parents=True)
    _put(d / "country=DE", "a.arrow", _file_bytes(_table(0, 3)))
    _put(d / "country=FR", "b.arrows", _stream_bytes(_table(3, 2)))
    name = _name()
    q = (spark.readStream.format(source).schema("id bigint, name string, country string")
         .load(str(d)).writeStream.format("memory").queryName(name)
         .option("checkpointLocation", str(tmp_path / "ck")).start())
    try:
        q.processAllAvailable()
        rows = lambda: sorted((r.id, r.country) for r in spark.sql(f"select * from {name}").collect())
        assert rows() == [(0, "DE"), (1, "DE"), (2, "DE"), (3, "FR"), (4, "FR")]
        _put(d / "country=DE", "c.arrow", _file_bytes(_table(5, 1)))
        (d / "country=NL").mkdir()
        _put(d / "country=NL", "d.arrow", _file_bytes(_table(6, 2)))
        q.processAllAvailable()
        assert rows()[5:] == [(5, "DE"), (6, "NL"), (7, "NL")]
        assert spark.sql(f"select name from {name} where id = 6").collect()[0].name == "n6"
    finally:
        q.stop()


def test_jvm_partitioned_stream_opens_only_the_filtered_partitions_files(spark, jvm, tmp_path):
    d = tmp_path / "in"
    for c in ("DE", "FR"):
        (d / f"country={c}").mkdir(parents=True)
        _put(d / f"country={c}", "a.arrow", _file_bytes(_table(0 if c == "DE" else 10, 2)))
    name = _name()
    q = (spark.readStream.format("arrowipc").schema("id bigint, name string, country string")
         .load(str(d)).where("country = 'FR'").writeStream.format("memory").queryName(name)
         .option("checkpointLocation", str(tmp_path / "ck")).start())
    try:
        q.processAllAvailable()
        _put(d / "country=DE", "b.arrow", _file_bytes(_table(2, 2)))
        _put(d / "country=FR", "b.arrow", _file_bytes(_table(12, 2)))
        q.processAllAvailable()
        assert _ids(spark, name) == [10, 11, 12, 13]
        assert jvm.filesOpened() == 2          # the FR files; DE's are pruned by their directory
    finally:
        q.stop()
