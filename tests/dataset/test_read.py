"""arrowipc.dataset reads as pyarrow.dataset does: files, directories, partitions, scans."""
import os
import re

import numpy as np
import pyarrow as pa
import pyarrow.dataset as pds
import pyarrow.feather as pfeather
import pyarrow.ipc as pipc
import pytest

import arrowipc as A
import arrowipc.dataset as ds
from arrowipc.dataset import field


def _ours(table):
    return table.to_pyarrow()


def _write_file(path, table, chunksize=None):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    pfeather.write_feather(table, path, compression="uncompressed", chunksize=chunksize)


def _write_stream(path, table, chunksize=None):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with pipc.new_stream(path, table.schema) as w:
        for b in table.to_batches(max_chunksize=chunksize):
            w.write_batch(b)


@pytest.fixture
def hive_dir(tmp_path):
    """A hive-partitioned dataset written by pyarrow: 3 years x 2 countries, 2 batches a file."""
    n = 1200
    table = pa.table({
        "year": pa.array(np.repeat([2024, 2025, 2026], n // 3), pa.int64()),
        "country": pa.array(["DE", "FR"] * (n // 2)),
        "x": pa.array(np.arange(n)),
        "y": pa.array(np.arange(n) * 0.5),
        "s": pa.array([f"v{i:04d}" for i in range(n)]),
    })
    root = tmp_path / "hive"
    pds.write_dataset(table, root, format="ipc", partitioning=["year", "country"],
                      partitioning_flavor="hive", max_rows_per_group=100)
    return str(root)


@pytest.mark.parametrize("fmt", ["ipc", "arrow", "feather", None])
def test_a_single_file_reads_as_pyarrow_reads_it(tmp_path, fmt):
    table = pa.table({"a": pa.array([1, 2, 3], "int8"), "b": pa.array([.1, .2, .3])})
    path = str(tmp_path / "test.arrow")
    _write_file(path, table)
    ours = ds.dataset(path, format=fmt)
    assert ours.files == [path]
    assert _ours(ours.to_table()).equals(table)
    assert ours.to_table(columns=["b", "a"]).column_names == ["b", "a"]
    assert ours.to_table(columns=["a", "a"]).column_names == ["a", "a"]


def test_a_directory_lists_files_in_pyarrows_order(tmp_path):
    table = pa.table({"a": [1]})
    for rel in ["b/2.arrow", "a/10.arrow", "a/9.arrow", "c.arrow", "a/b/c/d.arrow", "B.arrow"]:
        _write_file(str(tmp_path / rel), table)
    ours = ds.dataset(str(tmp_path), format="ipc")
    theirs = pds.dataset(str(tmp_path), format="ipc")
    assert ours.files == theirs.files


def test_hive_partitions_written_by_pyarrow_read_alike(hive_dir):
    ours = ds.dataset(hive_dir, format="ipc", partitioning="hive")
    theirs = pds.dataset(hive_dir, format="ipc", partitioning="hive")
    assert ours.files == theirs.files
    assert ours.schema.to_pyarrow().equals(theirs.schema)
    assert str(ours.schema.field("year").type) == "int32"
    assert _ours(ours.to_table()).equals(theirs.to_table())
    assert [str(f.partition_expression) for f in ours.get_fragments()] == \
        [str(f.partition_expression) for f in theirs.get_fragments()]


def test_partitioning_arguments_as_pyarrow_takes_them(hive_dir, tmp_path):
    table = pa.table({"v": list(range(4)), "a": ["x", "x", "y", "y"], "b": [1, 2, 1, 2]})
    root = str(tmp_path / "dirpart")
    pds.write_dataset(table, root, format="ipc", partitioning=["a", "b"])
    for ours_part, theirs_part in [
        (["a", "b"], ["a", "b"]),
        (ds.DirectoryPartitioning.discover(["a", "b"]), pds.DirectoryPartitioning.discover(["a", "b"])),
        (ds.DirectoryPartitioning.discover(["a", "b"], infer_dictionary=True),
         pds.DirectoryPartitioning.discover(["a", "b"], infer_dictionary=True)),
        (ds.partitioning(A.schema([("a", A.string()), ("b", A.int64())])),
         pds.partitioning(pa.schema([("a", pa.string()), ("b", pa.int64())]))),
    ]:
        ours = ds.dataset(root, format="ipc", partitioning=ours_part)
        theirs = pds.dataset(root, format="ipc", partitioning=theirs_part)
        assert ours.schema.to_pyarrow().equals(theirs.schema), ours_part
        assert ours.to_table().to_pylist() == theirs.to_table().to_pylist()


@pytest.mark.parametrize("klass", ["DirectoryPartitioning", "HivePartitioning",
                                   "FilenamePartitioning"])
def test_partitionings_round_trip_through_write_dataset(tmp_path, klass):
    table = A.table({"f1": list(range(20)), "f2": [i / 3 for i in range(20)],
                     "part": ["a"] * 10 + ["b"] * 10})
    part = getattr(ds, klass)(A.schema([("part", A.string())]))
    ds.write_dataset(table, str(tmp_path), format="ipc", partitioning=part)
    back = ds.dataset(str(tmp_path), format="ipc", partitioning=part).to_table()
    assert back.equals(table)
    pa_part = getattr(pds, klass)(pa.schema([("part", pa.string())]))
    assert pds.dataset(str(tmp_path), format="ipc", partitioning=pa_part).to_table().equals(
        _ours(table))


def test_partition_type_inference_follows_pyarrow(tmp_path):
    cases = {"ints": ["1", "-5", "007"], "big": ["1", "3000000000"], "floats": ["1.5", "2"],
             "plus": ["+1", "2"], "dates": ["2026-01-01", "2026-01-02"],
             "nulls": ["1", "__HIVE_DEFAULT_PARTITION__"], "empty": ["1", ""]}
    for name, values in cases.items():
        root = tmp_path / name
        for i, v in enumerate(values):
            _write_file(str(root / f"k={v}" / "f.arrow"), pa.table({"x": [i]}))
        ours = ds.dataset(str(root), format="ipc", partitioning="hive")
        theirs = pds.dataset(str(root), format="ipc", partitioning="hive")
        assert ours.schema.to_pyarrow().equals(theirs.schema), name
        assert ours.to_table().to_pylist() == theirs.to_table().to_pylist(), name


def test_an_explicit_partition_schema_parses_values_as_its_types(tmp_path):
    root = tmp_path / "typed"
    _write_file(str(root / "d=2026-01-02" / "n=7" / "f.arrow"), pa.table({"x": [1]}))
    schema = A.schema([("d", A.date32()), ("n", A.int8())])
    got = ds.dataset(str(root), format="ipc", partitioning=ds.partitioning(schema, flavor="hive"))
    theirs = pds.dataset(str(root), format="ipc", partitioning=pds.partitioning(
        schema.to_pyarrow(), flavor="hive"))
    assert _ours(got.to_table()).equals(theirs.to_table())


def test_spark_layouts_are_read_without_their_side_files(tmp_path):
    """What a Spark job leaves: part files, _SUCCESS, .crc side files, _temporary, staging,
    copies in progress, escaped values and the default partition."""
    root = tmp_path / "spark"
    t1, t2, t3 = (pa.table({"v": [i]}) for i in (1, 2, 3))
    _write_file(str(root / "day=2026-01-01" / "c=a%3Ab%2Fc" / "part-00000-uuid.c000.arrow"), t1)
    _write_file(str(root / "day=2026-01-01" / "c=__HIVE_DEFAULT_PARTITION__" / "part-00001.arrow"), t2)
    _write_file(str(root / "day=2026-01-02" / "c=x+y z" / "part-00002.arrow"), t3)
    junk = pa.table({"v": [999]})
    (root / "_SUCCESS").write_bytes(b"")
    (root / "day=2026-01-01" / "c=a%3Ab%2Fc" / ".part-00000-uuid.c000.arrow.crc").write_bytes(b"crc")
    _write_file(str(root / "_temporary" / "0" / "task" / "day=2026-01-03" / "part-9.arrow"), junk)
    _write_file(str(root / ".spark-staging-1234" / "part-9.arrow"), junk)
    _write_file(str(root / "day=2026-01-02" / "part-7.arrow._COPYING_"), junk)
    _write_file(str(root / "day=2026-01-02" / "_col=1" / "part-8.arrow"), t1)
    got = ds.dataset(str(root), format="ipc", partitioning="hive")
    assert [os.path.relpath(p, root) for p in got.files] == [
        "day=2026-01-01/c=__HIVE_DEFAULT_PARTITION__/part-00001.arrow",
        "day=2026-01-01/c=a%3Ab%2Fc/part-00000-uuid.c000.arrow",
        "day=2026-01-02/_col=1/part-8.arrow",
        "day=2026-01-02/c=x+y z/part-00002.arrow",
    ]
    rows = got.to_table(columns=["v", "day", "c"]).to_pylist()
    assert rows == [
        {"v": 2, "day": "2026-01-01", "c": None},
        {"v": 1, "day": "2026-01-01", "c": "a:b/c"},
        {"v": 1, "day": "2026-01-02", "c": None},
        {"v": 3, "day": "2026-01-02", "c": "x+y z"},
    ]


def test_a_folder_of_streams_reads_with_format_stream_or_sniffed(tmp_path):
    table = pa.table({"x": list(range(10)), "s": [str(i) for i in range(10)]})
    _write_stream(str(tmp_path / "s" / "a.arrows"), table.slice(0, 6), chunksize=2)
    _write_stream(str(tmp_path / "s" / "b.arrows"), table.slice(6), chunksize=2)
    for fmt in ("stream", None):
        got = ds.dataset(str(tmp_path / "s"), format=fmt)
        assert _ours(got.to_table()).equals(table)
        assert got.count_rows() == 10
        assert got.to_table(filter=field("x") >= 5).column("x").to_pylist() == [5, 6, 7, 8, 9]
        assert [f.format.type_name for f in got.get_fragments()] == ["stream", "stream"]


def test_file_and_stream_files_mix_when_sniffed(tmp_path):
    table = pa.table({"x": list(range(4))})
    _write_file(str(tmp_path / "m" / "1.arrow"), table.slice(0, 2))
    _write_stream(str(tmp_path / "m" / "2.arrows"), table.slice(2))
    got = ds.dataset(str(tmp_path / "m"))
    assert _ours(got.to_table()).equals(table)
    assert [f.format.type_name for f in got.get_fragments()] == ["ipc", "stream"]


def test_stream_files_are_read_batch_by_batch(tmp_path, monkeypatch):
    table = pa.table({"x": list(range(100))})
    _write_stream(str(tmp_path / "lazy" / "a.arrows"), table, chunksize=10)
    from arrowipc.ipc.reader import RecordBatchStreamReader
    reads = []
    original = RecordBatchStreamReader.read_next_batch

    def counting(self):
        reads.append(1)
        return original(self)

    monkeypatch.setattr(RecordBatchStreamReader, "read_next_batch", counting)
    got = ds.dataset(str(tmp_path / "lazy"), format="stream").head(5)
    assert got.column("x").to_pylist() == [0, 1, 2, 3, 4]
    assert len(reads) <= 2          # the first batch, and at most the one after it


def test_special_columns_match_pyarrow(hive_dir):
    cols = ["x", "__filename", "__fragment_index", "__batch_index", "__last_in_fragment"]
    ours = ds.dataset(hive_dir, format="ipc", partitioning="hive").to_table(columns=cols)
    theirs = pds.dataset(hive_dir, format="ipc", partitioning="hive").to_table(columns=cols)
    assert ours.schema.to_pyarrow().equals(theirs.schema)
    assert ours.to_pydict() == theirs.to_pydict()


FILTERS = [
    lambda f: f("x") < 100,
    lambda f: f("year") == 2025,
    lambda f: (f("country") == "FR") & (f("x") >= 1100),
    lambda f: f("s").isin(["v0003", "v0999"]),
    lambda f: (f("y") > 10) | (f("year") == 2024),
    lambda f: ~(f("x") < 1190),
    lambda f: f("x").is_null(),
]


@pytest.mark.parametrize("make", FILTERS)
def test_filters_give_pyarrows_rows(hive_dir, make):
    ours = ds.dataset(hive_dir, format="ipc", partitioning="hive")
    theirs = pds.dataset(hive_dir, format="ipc", partitioning="hive")
    expected = theirs.to_table(filter=make(pds.field))
    assert _ours(ours.to_table(filter=make(field))).equals(expected)
    # pyarrow's Expression objects are taken too
    assert _ours(ours.to_table(filter=make(pds.field))).equals(expected)
    assert ours.count_rows(filter=make(field)) == expected.num_rows


def test_filters_may_use_the_special_columns(hive_dir):
    # pyarrow refuses them in a filter (No match for FieldRef); arrowipc evaluates them
    ours = ds.dataset(hive_dir, format="ipc", partitioning="hive")
    first = ours.files[0]
    got = ours.to_table(filter=field("__filename") == first, columns=["x", "__filename"])
    assert set(got.column("__filename").to_pylist()) == {first}
    assert got.num_rows == 200
    assert ours.count_rows(filter=field("__fragment_index") == 5) == 200


def test_columns_as_a_dict_of_expressions(hive_dir):
    ours = ds.dataset(hive_dir, format="ipc", partitioning="hive")
    theirs = pds.dataset(hive_dir, format="ipc", partitioning="hive")
    def cols(f):
        return {"twice": f("x") * 2, "year": f("year"), "s": f("s")}
    got = ours.to_table(columns=cols(field), filter=field("x") < 5)
    assert _ours(got).equals(theirs.to_table(columns=cols(pds.field), filter=pds.field("x") < 5))


def test_head_take_and_count_rows_match_pyarrow(hive_dir):
    ours = ds.dataset(hive_dir, format="ipc", partitioning="hive")
    theirs = pds.dataset(hive_dir, format="ipc", partitioning="hive")
    assert _ours(ours.head(7)).equals(theirs.head(7))
    assert _ours(ours.head(250, columns=["x"])).equals(theirs.head(250, columns=["x"]))
    assert _ours(ours.head(0)).equals(theirs.head(0))
    idx = [0, 5, 1199, 600, 5]
    assert _ours(ours.take(idx)).equals(theirs.take(idx))
    assert ours.count_rows() == theirs.count_rows() == 1200
    with pytest.raises(IndexError):
        ours.take([1200])


def test_batch_size_splits_batches_as_pyarrow(tmp_path):
    table = pa.table({"x": np.arange(300_000)})
    _write_file(str(tmp_path / "big" / "a.arrow"), table, chunksize=300_000)
    ours = ds.dataset(str(tmp_path / "big"), format="ipc")
    theirs = pds.dataset(str(tmp_path / "big"), format="ipc")
    assert [b.num_rows for b in ours.to_batches()] == [b.num_rows for b in theirs.to_batches()]
    assert [b.num_rows for b in ours.to_batches(batch_size=100_000)] == \
        [b.num_rows for b in theirs.to_batches(batch_size=100_000)]


def test_scanner_methods(hive_dir):
    ours = ds.dataset(hive_dir, format="ipc", partitioning="hive")
    sc = ours.scanner(columns=["x", "year"], filter=field("country") == "DE", use_threads=False)
    table = sc.to_table()
    assert sc.projected_schema.names == ["x", "year"]
    assert sc.count_rows() == table.num_rows == 600
    assert sc.to_reader().read_all().equals(table)
    assert sc.head(3).equals(table.slice(0, 3))
    tagged = list(sc.scan_batches())
    assert sum(t.record_batch.num_rows for t in tagged) == 600
    assert all(t.fragment.partition_values["country"] == "DE" for t in tagged)
    threaded = ours.scanner(columns=["x", "year"], filter=field("country") == "DE")
    assert threaded.to_table().equals(table)


def test_sources_globs_and_lists(tmp_path):
    table = pa.table({"x": [1, 2]})
    for name in ("a.arrow", "b.arrow", "c.feather"):
        _write_file(str(tmp_path / "g" / name), table)
    got = ds.dataset(str(tmp_path / "g" / "*.arrow"), format="ipc")
    assert [os.path.basename(p) for p in got.files] == ["a.arrow", "b.arrow"]
    listed = [str(tmp_path / "g" / "c.feather"), str(tmp_path / "g" / "a.arrow")]
    got = ds.dataset(listed, format="ipc")
    assert got.files == listed                      # a list keeps its order, as pyarrow's
    assert got.count_rows() == 4
    got = ds.dataset("file://" + str(tmp_path / "g"), format="ipc")
    assert len(got.files) == 3


def test_an_empty_dataset_as_pyarrow(tmp_path):
    empty = ds.dataset([], format="ipc")
    table = empty.to_table()
    assert table.num_rows == 0 and table.num_columns == 0
    schema = A.schema([("a", A.int64())])
    assert ds.dataset([], format="ipc", schema=schema).to_table().schema.equals(schema)


def test_dataset_filter_applies_to_every_read(hive_dir):
    ours = ds.dataset(hive_dir, format="ipc", partitioning="hive").filter(field("year") == 2026)
    assert ours.count_rows() == 400
    assert set(ours.to_table(columns=["year"]).column("year").to_pylist()) == {2026}
    assert ours.count_rows(filter=field("country") == "DE") == 200


def test_in_memory_sources(tmp_path):
    batch = A.record_batch({"a": list(range(10))})
    table = A.Table.from_batches([batch])
    for source in (batch, table, [batch], [table]):
        got = ds.dataset(source)
        assert got.to_table().equals(table)
        assert got.to_table(filter=field("a") > 7).column("a").to_pylist() == [8, 9]


def test_fragments_read_alone(hive_dir):
    ours = ds.dataset(hive_dir, format="ipc", partitioning="hive")
    frag = next(iter(ours.get_fragments()))
    assert frag.to_table(schema=ours.schema).num_rows == 200
    assert frag.count_rows() == 200
    with frag.open() as f:
        assert f.read(6) == b"ARROW1"
    assert repr(frag).startswith("<arrowipc.dataset.FileFragment type=ipc path=")


def test_remote_filesystems_are_read_through_fsspec(tmp_path):
    fsspec = pytest.importorskip("fsspec")
    fs = fsspec.filesystem("memory")
    table = pa.table({"x": list(range(6))})
    for i, part in enumerate(["k=1", "k=2"]):
        sink = pa.BufferOutputStream()
        with pipc.new_file(sink, table.schema) as w:
            w.write_table(table.slice(i * 3, 3))
        fs.pipe(f"/dsroot/{part}/part-0.arrow", sink.getvalue().to_pybytes())
    fs.pipe("/dsroot/_SUCCESS", b"")
    got = ds.dataset("memory://dsroot", format="ipc", partitioning="hive")
    assert got.to_table().to_pydict() == {"x": list(range(6)), "k": [1, 1, 1, 2, 2, 2]}
    got = ds.dataset("/dsroot", format="ipc", partitioning="hive", filesystem=fs)
    assert got.count_rows(filter=field("k") == 2) == 3


def test_remote_filtered_count_fetches_a_files_batches_a_window_at_a_time(monkeypatch):
    """count_rows(filter) on a file behind a network link reads its surviving batches as a
    run (headers, then buffers, each fetch concurrent), not with a request per batch in turn;
    the count is pyarrow's."""
    fsspec = pytest.importorskip("fsspec")
    from arrowipc.ipc.reader import RecordBatchFileReader
    fs = fsspec.filesystem("memory")
    table = pa.table({"b": np.arange(5000) % 100, "c": np.arange(5000) * 1.5})
    sink = pa.BufferOutputStream()
    with pipc.new_file(sink, table.schema) as w:
        w.write_table(table, max_chunksize=1000)
    fs.pipe("/windowed/part-0.arrow", sink.getvalue().to_pybytes())
    one_by_one = []
    original = RecordBatchFileReader.get_batch
    monkeypatch.setattr(RecordBatchFileReader, "get_batch",
                        lambda self, i: one_by_one.append(i) or original(self, i))
    got = ds.dataset("memory://windowed", format="ipc")
    expected = pds.dataset(pa.table(table)).count_rows(filter=pds.field("b") < 10)
    assert got.count_rows(filter=field("b") < 10) == expected == 500
    assert one_by_one == []


def test_null_filter_results_drop_rows_in_scans_and_counts(tmp_path):
    table = pa.table({"x": [1, None, 7, None, 9], "s": ["a", None, "c", "d", None]})
    _write_file(str(tmp_path / "n" / "a.arrow"), table, chunksize=2)
    ours = ds.dataset(str(tmp_path / "n"), format="ipc")
    theirs = pds.dataset(str(tmp_path / "n"), format="ipc")
    for make in (lambda f: f("x") > 5, lambda f: (f("x") > 5) | (f("s") == "a"),
                 lambda f: ~(f("x") > 5), lambda f: f("s").is_valid()):
        expected = theirs.to_table(filter=make(pds.field))
        assert _ours(ours.to_table(filter=make(field))).equals(expected)
        assert ours.count_rows(filter=make(field)) == expected.num_rows


def test_pyarrow_schemas_are_taken_wherever_a_schema_is(tmp_path):
    table = pa.table({"v": [1, 2], "k": ["a", "b"]})
    part = ds.partitioning(pa.schema([("k", pa.string())]), flavor="hive")
    assert isinstance(part, ds.HivePartitioning)
    ds.write_dataset(table, str(tmp_path / "o"), partitioning=part,
                     schema=table.schema)
    got = ds.dataset(str(tmp_path / "o"), partitioning=part,
                     schema=pa.schema([("v", pa.int64()), ("k", pa.string())]))
    assert _ours(got.to_table()).equals(table)
    with pytest.raises(ValueError, match="Expected a Schema"):
        ds.partitioning(["k"], flavor="hive")


def test_a_relative_file_uri_is_refused_as_pyarrow_refuses_it():
    with pytest.raises(A.ArrowInvalid, match="cannot be relative"):
        ds.dataset("file:i-am-not-existing.arrow", format="ipc")


def test_scanner_from_batches(tmp_path):
    table = pa.table({"x": list(range(10))})
    sc = ds.Scanner.from_batches(table.to_batches(), schema=table.schema,
                                 filter=field("x") >= 7)
    assert sc.to_table().column("x").to_pylist() == [7, 8, 9]
    reader = pa.RecordBatchReader.from_batches(table.schema, table.to_batches())
    assert ds.Scanner.from_batches(reader).count_rows() == 10


def test_a_parquet_file_among_sniffed_files_is_named(tmp_path):
    import pyarrow.parquet as pq
    path = str(tmp_path / "x.parquet")
    pq.write_table(pa.table({"x": [1]}), path)
    with pytest.raises(A.ArrowInvalid, match="x.parquet: a Parquet file, not Arrow IPC"):
        ds.dataset(path).to_table()


def test_a_scan_views_local_files_through_leased_mappings(tmp_path):
    """A scan's columns are views of each file mapped under a read lease (no copy of the ranges
    read), and the mappings go when the scan's data does."""
    import gc
    from arrowipc._core.leased_map import lease_break_signal, live_leased_maps
    from arrowipc.ipc import paths
    n = 100_000                 # 1.6 MB a file in two batches: ranged reads before
    for k in range(2):
        _write_file(str(tmp_path / f"part{k}.arrow"),
                    pa.table({"a": np.arange(n, dtype=np.int64) + k * n,
                              "b": np.arange(n, dtype=np.float64)}), chunksize=50_000)
    data = ds.dataset(str(tmp_path), format="ipc")
    gc.collect()
    before = live_leased_maps()
    table = data.to_table(columns=["a"])
    expected = pa.chunked_array([np.arange(2 * n, dtype=np.int64)])
    assert table.column("a").to_pylist() == expected.to_pylist()
    if not paths.LEASED_MAPS or lease_break_signal() == 0:
        pytest.skip("leased maps are off here (not Linux, or ARROWIPC_LEASED_MAPS=0)")
    if live_leased_maps() == before:
        # no lease on this filesystem: the scan read copies, as it may
        import fcntl
        probe = os.open(str(tmp_path / "part0.arrow"), os.O_RDONLY)
        try:
            fcntl.fcntl(probe, getattr(fcntl, "F_SETLEASE", 1024), fcntl.F_RDLCK)
        except OSError:
            pytest.skip("this filesystem or kernel grants no read lease")
        finally:
            os.close(probe)
    assert live_leased_maps() == before + 2
    assert data.count_rows(filter=field("a") < 10) == 10
    del table
    gc.collect()
    assert live_leased_maps() == before


def test_filtered_counts_on_number_columns_match_pyarrow(tmp_path):
    """count_rows(column op number) counts a plain number column on its values; every case
    the direct count declines (nulls, a number not exact in the column's type, NaN, a float
    beside an integer column, a value out of the type's range) goes the general way: all
    agree with pyarrow."""
    n = 3000
    rng = np.random.default_rng(5)
    f64 = rng.random(n) * 10
    f64[::13] = np.nan
    table = pa.table({
        "i8": pa.array(rng.integers(-100, 100, n), pa.int8()),
        "u32": pa.array(rng.integers(0, 1000, n), pa.uint32()),
        "i64": pa.array(rng.integers(-10**12, 10**12, n), pa.int64()),
        "f32": pa.array(rng.random(n).astype(np.float32)),
        "f64": pa.array(f64),
        "nulls": pa.array([None if i % 7 == 0 else i for i in range(n)], pa.int64()),
    })
    _write_file(str(tmp_path / "t.arrow"), table, chunksize=1000)
    ours = ds.dataset(str(tmp_path / "t.arrow"), format="ipc")
    theirs = pds.dataset(str(tmp_path / "t.arrow"), format="ipc")
    cases = [("i8", 10), ("i8", 300), ("i8", -300), ("i8", 2.5), ("u32", -1), ("u32", 500),
             ("i64", 0), ("i64", 2**70), ("f32", 0.5), ("f32", 0.1), ("f32", 1e300),
             ("f64", 5),
             ("f64", 5.5), ("f64", float("nan")), ("nulls", 1500)]
    for name, number in cases:
        for op in ("__eq__", "__ne__", "__lt__", "__le__", "__gt__", "__ge__"):
            try:
                expected = theirs.count_rows(filter=getattr(pds.field(name), op)(number))
            except (pa.ArrowInvalid, pa.ArrowNotImplementedError, OverflowError):
                continue            # pyarrow refuses it: not a case for the direct count
            got = ours.count_rows(filter=getattr(field(name), op)(number))
            assert got == expected, (name, op, number)
    # the number on the left: the comparison turned round
    assert ours.count_rows(filter=ds.scalar(500) > field("u32")) == \
        theirs.count_rows(filter=pds.scalar(500) > pds.field("u32"))


@pytest.mark.parametrize("use_threads", [True, False])
def test_a_first_filtered_count_of_local_files_plans_them_here_and_counts_as_pyarrow(
        tmp_path, monkeypatch, use_threads):
    """count_rows(column op number) over local files plans each file in the caller's thread
    and counts the values it finds in one kernel call per file (on the pool with threads); a
    batch the direct count declines (nulls) is counted the general way beside the others,
    and a file too small to map is counted as read. The first count, the next (from the
    values' places kept) and pyarrow's agree, and no mapping outlives the counts."""
    import gc
    import threading
    from arrowipc._core.leased_map import live_leased_maps
    from arrowipc.dataset import fragments
    n = 20_000
    rng = np.random.default_rng(3)
    with_nulls = pa.array([None if i % 5 == 0 else int(v)
                           for i, v in enumerate(rng.integers(0, 1000, n))], pa.int64())
    for k in range(3):
        b = pa.chunked_array([rng.integers(0, 1000, n), with_nulls if k == 1 else
                              rng.integers(0, 1000, n), rng.integers(0, 1000, n)])
        _write_file(str(tmp_path / f"part{k}.arrow"),
                    pa.table({"b": b, "c": rng.random(3 * n)}), chunksize=n)
    _write_file(str(tmp_path / "small.arrow"), pa.table({"b": [1, 50, 3], "c": [0.0] * 3}))
    planned_on = set()
    plan = fragments.FileFragment.plan

    def recording_plan(self, *args, **kwargs):
        planned_on.add(threading.get_ident())
        return plan(self, *args, **kwargs)
    monkeypatch.setattr(fragments.FileFragment, "plan", recording_plan)
    theirs = pds.dataset(str(tmp_path), format="ipc")
    data = ds.dataset(str(tmp_path), format="ipc")
    gc.collect()
    before = live_leased_maps()
    for op in ("__lt__", "__ge__", "__ne__"):
        expected = theirs.count_rows(filter=getattr(pds.field("b"), op)(10))
        for _ in range(2):
            got = data.count_rows(filter=getattr(field("b"), op)(10), use_threads=use_threads)
            assert got == expected, op
    assert planned_on == {threading.get_ident()}
    gc.collect()
    assert live_leased_maps() == before


@pytest.mark.parametrize("type_, texts", [
    (pa.int8(), ["-128", "127", "007", "-0"]), (pa.uint8(), ["0", "255", "010"]),
    (pa.int64(), ["-9223372036854775808", "9223372036854775807"]),
    (pa.uint64(), ["18446744073709551615"])])
def test_integer_partition_values_parse_as_pyarrow(tmp_path, type_, texts):
    for i, text in enumerate(texts):
        _write_file(str(tmp_path / f"k={text}" / "f.arrow"), pa.table({"x": [i]}))
    part = pds.partitioning(pa.schema([("k", type_)]), flavor="hive")
    ours = ds.dataset(str(tmp_path), format="ipc", partitioning=part)
    theirs = pds.dataset(str(tmp_path), format="ipc", partitioning=part)
    assert sorted(ours.to_table().to_pylist(), key=lambda r: r["x"]) == \
        sorted(theirs.to_table().to_pylist(), key=lambda r: r["x"])


@pytest.mark.parametrize("type_, text", [(pa.int8(), "128"), (pa.int8(), "-129"),
                                         (pa.uint8(), "256"), (pa.uint8(), "-1"),
                                         (pa.int32(), "+5"), (pa.int32(), "1_0")])
def test_an_integer_partition_value_out_of_its_type_is_an_error(tmp_path, type_, text):
    _write_file(str(tmp_path / f"k={text}" / "f.arrow"), pa.table({"x": [1]}))
    part = pds.partitioning(pa.schema([("k", type_)]), flavor="hive")
    with pytest.raises(pa.ArrowInvalid):
        pds.dataset(str(tmp_path), format="ipc", partitioning=part).to_table()
    with pytest.raises(A.ArrowInvalid, match=re.escape(
            f"error parsing '{text}' as scalar of type {type_} for partition field 'k'")):
        ds.dataset(str(tmp_path), format="ipc", partitioning=part).to_table()


@pytest.mark.parametrize("partitioning", ["hive", "hive dictionary"])
def test_datasets_and_fragments_pickle_as_pyarrows_do(tmp_path, partitioning):
    import pickle
    table = pa.table({"a": [1, 2, 3, 4], "part": ["x", "x", "y", "z"]})
    pds.write_dataset(table, str(tmp_path), format="ipc", partitioning=["part"],
                      partitioning_flavor="hive")
    how = {"hive": "hive",
           "hive dictionary": ds.HivePartitioning.discover(infer_dictionary=True)}[partitioning]
    theirs_how = {"hive": "hive",
                  "hive dictionary": pds.HivePartitioning.discover(infer_dictionary=True)}
    ours = ds.dataset(str(tmp_path), format="ipc", partitioning=how)
    theirs = pds.dataset(str(tmp_path), format="ipc", partitioning=theirs_how[partitioning])
    ours.count_rows(filter=field("a") > 1)      # footers, statistics and readers kept
    pairs = [(ours, theirs), (next(ours.get_fragments()), next(theirs.get_fragments())),
             (ds.dataset([ours, ours]), pds.dataset([theirs, theirs])),
             (ours.filter(field("a") > 1), theirs.filter(pds.field("a") > 1))]
    for mine, expected in pairs:
        back = pickle.loads(pickle.dumps(mine))
        assert type(back) is type(mine)
        assert _ours(back.to_table()).equals(expected.to_table())
    back = pickle.loads(pickle.dumps(ours))
    assert back.count_rows(filter=field("a") > 1) == theirs.count_rows(filter=pds.field("a") > 1)
    assert back.schema.equals(ours.schema) and back.files == ours.files


def _partitioning_as_pyarrows(ours, theirs):
    assert type(ours).__name__ == type(theirs).__name__
    assert ours.schema.equals(theirs.schema)
    assert len(ours.dictionaries) == len(theirs.dictionaries)
    for a, b in zip(ours.dictionaries, theirs.dictionaries):
        assert (a is None and b is None) or _ours(a).equals(b)


@pytest.mark.parametrize("how", ["hive", "hive dictionary", "hive schema", "hive object",
                                 "directory names", "directory schema dictionary", "none",
                                 "none, one file"])
def test_a_datasets_partitioning_is_pyarrows(tmp_path, how):
    table = pa.table({"a": [1, 2, 3, 4, 5], "p": ["b", "a", "x", "b", "c"],
                      "q": [3, 1, 2, 3, 1]})
    flavor = "hive" if how.startswith("hive") else None
    pds.write_dataset(table, str(tmp_path), format="ipc", partitioning=["p", "q"],
                      partitioning_flavor=flavor)
    schema = pa.schema([("p", pa.string()), ("q", pa.int8())])
    dict_schema = pa.schema([("p", pa.dictionary(pa.int32(), pa.string())), ("q", pa.int8())])

    def make(mod):
        return {"hive": "hive",
                "hive dictionary": mod.HivePartitioning.discover(infer_dictionary=True),
                "hive schema": mod.HivePartitioning.discover(schema=schema),
                "hive object": mod.HivePartitioning(schema),
                "directory names": ["p", "q"],
                "directory schema dictionary": mod.DirectoryPartitioning.discover(
                    schema=dict_schema),
                "none": None, "none, one file": None}[how]
    source = str(tmp_path / "b" / "3" / "part-0.arrow") if how == "none, one file" \
        else str(tmp_path)
    ours = ds.dataset(source, format="ipc", partitioning=make(ds))
    theirs = pds.dataset(source, format="ipc", partitioning=make(pds))
    _partitioning_as_pyarrows(ours.partitioning, theirs.partitioning)
    assert _ours(ours.to_table()).equals(theirs.to_table())
    # built from fragments or paths, a dataset has none
    assert ds.FileSystemDataset(list(ours.get_fragments()), ours.schema,
                                ours.format).partitioning is None


@pytest.mark.parametrize("how", ["hive", "hive int8", "parse timestamp"])
def test_partition_expressions_have_the_fields_types_as_pyarrows(tmp_path, how):
    table = pa.table({"a": [1, 2], "p": ["x", "y"], "q": [1, 2]})
    pds.write_dataset(table, str(tmp_path), format="ipc", partitioning=["p", "q"],
                      partitioning_flavor="hive")
    typed = pa.schema([("p", pa.string()), ("q", pa.int8())])

    def expression(mod):
        if how == "parse timestamp":
            return mod.HivePartitioning(pa.schema([("t", pa.timestamp("s"))])).parse(
                "/t=2021-01-02 03:04:05/")
        data = mod.dataset(str(tmp_path), format="ipc",
                           partitioning="hive" if how == "hive" else mod.HivePartitioning(typed))
        return next(iter(data.get_fragments())).partition_expression
    ours, theirs = expression(ds), expression(pds)
    assert str(ours) == str(theirs)
    for literal in (1, pa.scalar(1, pa.int32()), pa.scalar(1, pa.int8())):
        expected = (pds.field("p") == "x") & (pds.field("q") == literal)
        assert ours.equals(expected) == theirs.equals(expected)
