"""The four pruning stages, proven by counting what is opened and read (never by time)."""
import os

import numpy as np
import pytest

import arrowipc as A
import arrowipc.dataset as ds
from arrowipc.dataset import field, fragments
from arrowipc.ipc.reader import RecordBatchFileReader


class Counts:
    def __init__(self):
        self.opened = []            # paths of the files whose reader was made
        self.batches = []           # (path, batch index) of every batch body read
        self.columns = []           # the columns of every batch read


@pytest.fixture
def counts(monkeypatch):
    seen = Counts()

    class CountingReader(RecordBatchFileReader):
        def __init__(self, source, *args, options=None, **kwargs):
            super().__init__(source, *args, options=options, **kwargs)
            seen.opened.append(source)
            self._counted_path = source

        def get_batch(self, i):
            seen.batches.append((self._counted_path, i))
            batch = super().get_batch(i)
            seen.columns.append(batch.schema.names)
            return batch

        def batch_in_place(self, i):
            batch = super().batch_in_place(i)
            if batch is not None:           # else get_batch reads it, and counts it
                seen.batches.append((self._counted_path, i))
                seen.columns.append(batch.schema.names)
            return batch

    monkeypatch.setattr(fragments, "RecordBatchFileReader", CountingReader)
    return seen


@pytest.fixture
def sorted_dir(tmp_path):
    """4 partitions of k; x sorted and unique, 10 batches of 100 rows per file, statistics on."""
    n = 4000
    table = A.table({"k": np.repeat(np.arange(4), n // 4), "x": np.arange(n),
                     "y": np.arange(n) * 2.0, "z": [f"s{i}" for i in range(n)]})
    root = str(tmp_path / "sorted")
    ds.write_dataset(table, root, partitioning=["k"], partitioning_flavor="hive",
                     max_rows_per_group=100)
    return root


def _data(root):
    return ds.dataset(root, format="ipc", partitioning="hive")


def test_a_partition_filter_opens_only_that_partitions_files(sorted_dir, counts):
    got = _data(sorted_dir).to_table(filter=field("k") == 2)
    assert got.num_rows == 1000
    # the dataset's schema comes from the first file (k=0); the scan opens k=2's only
    assert len(counts.opened) == 2
    scanned = counts.opened[1:]
    assert "k=0" in counts.opened[0] and "k=2" in scanned[0]
    assert {p for p, _ in counts.batches} == {scanned[0]}


def test_footer_statistics_rule_out_files_without_reading_a_batch(sorted_dir, counts):
    got = _data(sorted_dir).to_table(filter=field("x") == 3500)
    assert got.column("x").to_pylist() == [3500]
    # every file is opened once (its footer read; the first file's reader, opened for the
    # schema, serves the scan), but only k=3's holds x=3500: one batch read
    assert len(counts.opened) == 4
    assert counts.batches == [(p, 5) for p in counts.opened if "k=3" in p][:1]


def test_batch_statistics_pick_the_batches_a_range_needs(sorted_dir, counts):
    got = _data(sorted_dir).to_table(filter=(field("x") >= 1150) & (field("x") < 1350))
    assert got.column("x").to_pylist() == list(range(1150, 1350))
    k1 = [p for p in counts.opened if "k=1" in p][0]
    assert sorted(counts.batches) == [(k1, 1), (k1, 2), (k1, 3)]


def test_count_rows_reads_no_batch_without_a_row_filter(sorted_dir, counts):
    data = _data(sorted_dir)
    assert data.count_rows() == 4000
    assert data.count_rows(filter=field("k") >= 2) == 2000
    assert data.count_rows(filter=field("x") > 100_000) == 0
    assert counts.batches == []


def test_count_rows_reads_only_the_batches_a_value_filter_leaves(sorted_dir, counts):
    assert _data(sorted_dir).count_rows(filter=field("x") < 150) == 150
    assert len(counts.batches) == 2
    assert counts.columns == [["x"], ["x"]]           # only the filter's column


def test_projection_reads_only_the_chosen_columns(sorted_dir, counts):
    got = _data(sorted_dir).to_table(columns=["z"])
    assert got.num_rows == 4000
    assert counts.columns and all(names == ["z"] for names in counts.columns)


def test_files_without_statistics_are_read_and_filtered_by_rows(tmp_path, counts):
    import pyarrow as pa
    import pyarrow.feather as pf
    root = tmp_path / "plain"
    root.mkdir()
    pf.write_feather(pa.table({"x": list(range(100))}), str(root / "a.arrow"), chunksize=10)
    got = ds.dataset(str(root), format="ipc").to_table(filter=field("x") == 42)
    assert got.column("x").to_pylist() == [42]
    assert len(counts.batches) == 10


def test_head_stops_reading(sorted_dir, counts):
    got = _data(sorted_dir).head(5, use_threads=False)
    assert got.column("x").to_pylist() == [0, 1, 2, 3, 4]
    assert len(counts.batches) == 1


@pytest.fixture
def two_level_dir(tmp_path):
    """k (4 values) x j (2 values): 8 files, x unique."""
    n = 800
    table = A.table({"k": np.repeat(np.arange(4), n // 4), "j": np.tile([0, 1], n // 2),
                     "x": np.arange(n)})
    root = str(tmp_path / "two")
    ds.write_dataset(table, root, partitioning=["k", "j"], partitioning_flavor="hive")
    return root


def _count_binds(monkeypatch):
    from arrowipc.dataset import _exprs
    calls = []
    real = _exprs.residual

    def counting(expr, values):
        calls.append(dict(values))
        return real(expr, values)

    monkeypatch.setattr(_exprs, "residual", counting)
    return calls


def test_a_partition_only_filter_is_evaluated_once_not_bound_per_file(two_level_dir,
                                                                      monkeypatch, counts):
    binds = _count_binds(monkeypatch)
    data = _data(two_level_dir)
    got = data.to_table(filter=field("k") == 2)
    assert got.num_rows == 200
    assert binds == []
    assert len(counts.opened) == 1 + 2          # the schema's file, then k=2's two files
    assert len(list(data.get_fragments(filter=field("k") == 2))) == 2
    assert binds == []


def test_a_mixed_filter_is_bound_once_per_distinct_partition_value(two_level_dir, monkeypatch,
                                                                   counts):
    binds = _count_binds(monkeypatch)
    got = _data(two_level_dir).to_table(filter=(field("k") == 2) & (field("x") >= 500))
    assert sorted(got.column("x").to_pylist()) == list(range(500, 600))
    # 8 files, 4 values of k: the values of j, which the filter does not name, are not bound
    assert sorted(b["k"] for b in binds) == [0, 1, 2, 3]


def test_a_second_scan_prunes_and_counts_by_the_kept_footer_without_opening(sorted_dir,
                                                                            counts):
    data = _data(sorted_dir)
    assert data.count_rows() == 4000
    opened = len(counts.opened)
    # the schema's file (its reader kept by discovery); the others are counted from their
    # footers and batch headers, with no reader
    assert opened == 1
    # the footers read by the first scan answer these: no file is opened again
    assert data.count_rows() == 4000
    assert data.to_table(filter=field("x") > 100_000).num_rows == 0
    assert data.count_rows(filter=field("x") < -1) == 0
    assert len(counts.opened) == opened
    # only the file that may hold x=3500 is opened, and one batch of it read
    got = data.to_table(filter=field("x") == 3500)
    assert got.column("x").to_pylist() == [3500]
    assert len(counts.opened) == opened + 1 and "k=3" in counts.opened[-1]
    assert len(counts.batches) == 1


def test_a_rewritten_file_is_read_again_not_pruned_by_its_old_footer(tmp_path, counts):
    root = str(tmp_path / "rewrite")
    ds.write_dataset(A.table({"x": np.arange(10)}), root, basename_template="part-{i}.arrow")
    data = ds.dataset(root, format="ipc")
    assert data.count_rows(filter=field("x") >= 100) == 0
    path = data.files[0]
    import os
    before = os.stat(path).st_mtime_ns
    ds.write_dataset(A.table({"x": np.arange(200)}), root, basename_template="part-{i}.arrow",
                     existing_data_behavior="overwrite_or_ignore")
    os.utime(path, ns=(before + 10**9, before + 10**9))     # a new mtime, whatever the clock
    assert data.count_rows(filter=field("x") >= 100) == 100
    assert data.count_rows() == 200


def test_a_files_partition_column_is_made_once_per_batch_length(sorted_dir, monkeypatch):
    made = []
    real = fragments._repeat

    def counting(value, type_, n, *dictionary):
        made.append((value, n))
        return real(value, type_, n, *dictionary)

    monkeypatch.setattr(fragments, "_repeat", counting)
    got = _data(sorted_dir).to_table(columns=["k", "x"])
    assert got.num_rows == 4000
    assert got.column("k").to_pylist() == [i // 1000 for i in range(4000)]
    assert sorted(made) == [(k, 100) for k in range(4)]     # 4 files of 10 batches of 100


def test_a_shorter_batchs_partition_column_is_a_slice_of_the_files_first(tmp_path,
                                                                       monkeypatch):
    made = []
    real = fragments._repeat

    def counting(value, type_, n, *dictionary):
        made.append((value, n))
        return real(value, type_, n, *dictionary)

    monkeypatch.setattr(fragments, "_repeat", counting)
    root = str(tmp_path / "short")
    ds.write_dataset(A.table({"k": ["a"] * 250, "x": np.arange(250)}), root,
                     partitioning=["k"], partitioning_flavor="hive", max_rows_per_group=100)
    got = _data(root).to_table()
    assert [b.num_rows for b in got.to_batches()] == [100, 100, 50]
    assert got.column("k").to_pylist() == ["a"] * 250
    assert made == [("a", 100)]


@pytest.mark.parametrize("value, type_", [
    (7, A.int8()), (-3, A.int64()), (2**63, A.uint64()), (1.5, A.float32()),
    ("DE", A.string()), ("é", A.large_string()), ("", A.string()), (b"\x00b", A.binary()),
    (True, A.bool_())])
def test_a_repeated_partition_value_is_pyarrows_array_of_it(value, type_):
    import pyarrow as pa
    got = fragments._repeat(value, type_, 5)
    got.validate(full=True)
    expected = pa.array([value] * 5, pa.type_for_alias(str(type_)) if str(type_) != "bool"
                        else pa.bool_())
    assert got.type == type_
    assert got.to_pylist() == expected.to_pylist()


def test_true_count_of_sliced_and_null_masks():
    values = [True, False, True, None, True, True, False, True, True, True, False] * 7
    mask = A.array(values)
    for offset, length in [(0, len(values)), (1, 7), (3, 8), (9, 60), (13, 0)]:
        part = mask.slice(offset, length)
        assert fragments._true_count(part) == sum(v is True for v in values[offset:offset
                                                                             + length])
        filled = part.fill_null(False)
        assert fragments._true_count(filled) == sum(v is True for v in values[offset:offset
                                                                               + length])


def test_discovery_parses_each_distinct_partition_value_once(two_level_dir, monkeypatch):
    import sys
    partitioning = sys.modules["arrowipc.dataset.partitioning"]
    parsed = []
    real = partitioning.parse_partition_value

    def counting(text, type_, field_name, where):
        parsed.append((field_name, text))
        return real(text, type_, field_name, where)

    monkeypatch.setattr(partitioning, "parse_partition_value", counting)
    data = _data(two_level_dir)
    assert len(data.files) == 8
    assert sorted(parsed) == [("j", "0"), ("j", "1")] + [("k", str(k)) for k in range(4)]
    assert sorted((f.partition_values["k"], f.partition_values["j"])
                  for f in data.get_fragments()) == [(k, j) for k in range(4) for j in (0, 1)]


def test_batch_statistics_are_read_once_per_file_version(sorted_dir, monkeypatch):
    """A dataset object keeps each file's batch statistics: a later scan reads no batch header
    for them, and a file rewritten since (another size or mtime) is read again."""
    headers = []
    original = RecordBatchFileReader.batch_custom_metadata

    def counting(self):
        found = original(self)
        headers.extend(range(len(found)))
        return found

    monkeypatch.setattr(RecordBatchFileReader, "batch_custom_metadata", counting)
    data = _data(sorted_dir)
    where = (field("x") >= 150) & (field("x") < 250)
    assert data.to_table(filter=where).column("x").to_pylist() == list(range(150, 250))
    assert len(headers) == 10               # k=0's file: its ten batches' statistics
    headers.clear()
    assert data.count_rows(filter=where) == 100
    assert data.to_table(filter=where).num_rows == 100
    assert headers == []
    # k=0's file rewritten with other rows: its statistics are read again, and rule anew
    k0 = [f.path for f in data.get_fragments() if "k=0" in f.path][0]
    A.feather.write_feather(A.table({"x": np.arange(200, 205), "y": np.zeros(5),
                                     "z": ["a"] * 5}), k0, compression="uncompressed")
    assert data.count_rows(filter=where) == 5
    assert data.to_table(filter=where).column("x").to_pylist() == list(range(200, 205))


def _leases_granted(path):
    """Whether this system maps `path` under a read lease (else counts read as before)."""
    from arrowipc._core.leased_map import map_leased
    from arrowipc.ipc import paths
    if not paths.LEASED_MAPS:
        return False
    fd = os.open(path, os.O_RDONLY)
    try:
        return map_leased(fd) is not None
    finally:
        os.close(fd)


@pytest.mark.parametrize("statistics", [True, False])
def test_a_second_filtered_count_counts_where_the_first_found_the_values(tmp_path, counts,
                                                                         statistics):
    """`count_rows(column op number)` again on an unchanged file counts on the values where
    the first count found them, in a mapping of the file: no reader is opened, no batch read.
    A file rewritten since is read again; every answer is pyarrow's."""
    pa = pytest.importorskip("pyarrow")
    pds = pytest.importorskip("pyarrow.dataset")
    rng = np.random.default_rng(7)
    root = tmp_path / "values"
    root.mkdir()
    for k in range(3):
        table = pa.table({"b": rng.integers(0, 1000, 30_000), "c": rng.random(30_000)})
        path = str(root / f"part-{k}.arrow")
        if statistics:
            ds.write_dataset(A.table(table), str(root), basename_template=f"part-{k}-{{i}}.arrow",
                             max_rows_per_group=10_000,
                             existing_data_behavior="overwrite_or_ignore")
        else:                       # no statistics; the sink closed (no writer holds it)
            with pa.OSFile(path, "wb") as sink, pa.ipc.new_file(sink, table.schema) as w:
                w.write_table(table, max_chunksize=10_000)
    data, theirs = _data(str(root)), pds.dataset(str(root), format="ipc")
    if not _leases_granted(data.files[0]):
        pytest.skip("no read lease on this filesystem: counts read the file each time")
    for where, pwhere in [(field("b") < 10, pds.field("b") < 10),
                          (field("b") >= 990, pds.field("b") >= 990),
                          (field("b") != 3, pds.field("b") != 3)]:
        expected = theirs.count_rows(filter=pwhere)
        assert data.count_rows(filter=where) == expected
        opened, read = len(counts.opened), len(counts.batches)
        assert data.count_rows(filter=where) == expected
        assert data.scanner(filter=where, use_threads=False).count_rows() == expected
        assert (len(counts.opened), len(counts.batches)) == (opened, read)
    # a filter on another column is not answered from b's spans
    opened = len(counts.opened)
    assert data.count_rows(filter=field("c") < 0.5) == \
        theirs.count_rows(filter=pds.field("c") < 0.5)
    assert len(counts.opened) == opened + 3
    # one file rewritten (another size and mtime): read again, counted anew
    first = data.files[0]
    before = os.stat(first).st_mtime_ns
    small = pa.table({"b": np.arange(20_000) % 5, "c": np.zeros(20_000)})
    with pa.OSFile(first, "wb") as sink, pa.ipc.new_file(sink, small.schema) as w:
        w.write_table(small)
    os.utime(first, ns=(before + 10**9, before + 10**9))
    expected = pds.dataset(str(root), format="ipc").count_rows(filter=pds.field("b") < 10)
    opened = len(counts.opened)
    assert data.count_rows(filter=field("b") < 10) == expected
    assert len(counts.opened) == opened + 1


def _number_files(root, statistics=True, compression=None):
    """Three files of 30 000 rows (large enough to map): b random in [0, 1000), x sorted, in
    batches of 10 000; with statistics (write_dataset) or without (pyarrow's writer)."""
    pa = pytest.importorskip("pyarrow")
    rng = np.random.default_rng(8)
    os.makedirs(root, exist_ok=True)
    for k in range(3):
        table = pa.table({"b": rng.integers(0, 1000, 30_000),
                          "x": np.arange(k * 30_000, (k + 1) * 30_000)})
        if statistics:
            options = ds.IpcFileFormat().make_write_options(compression=compression)
            ds.write_dataset(A.table(table), root, basename_template=f"part-{k}-{{i}}.arrow",
                             max_rows_per_group=10_000, file_options=options,
                             existing_data_behavior="overwrite_or_ignore")
        else:
            with pa.OSFile(os.path.join(root, f"part-{k}.arrow"), "wb") as sink, \
                    pa.ipc.new_file(sink, table.schema, options=pa.ipc.IpcWriteOptions(
                        compression=compression)) as w:
                w.write_table(table, max_chunksize=10_000)


@pytest.mark.parametrize("statistics", [True, False])
def test_a_first_filtered_count_decodes_no_batch_and_keeps_where_the_values_are(
        tmp_path, counts, statistics):
    """The first `count_rows(column op number)` of a local file finds the column's values
    from the batches' headers (no batch decoded), the batch statistics leaving out the
    batches they rule out; what it found serves the next count, which opens no reader.
    Every answer is pyarrow's."""
    pds = pytest.importorskip("pyarrow.dataset")
    root = str(tmp_path / "numbers")
    _number_files(root, statistics)
    if not _leases_granted(os.path.join(root, sorted(os.listdir(root))[0])):
        pytest.skip("no read lease on this filesystem: counts read the file each time")
    theirs = pds.dataset(root, format="ipc")
    for where, pwhere in [(field("b") < 10, pds.field("b") < 10),
                          (field("x") >= 45_000, pds.field("x") >= 45_000),
                          (field("b") != 7, pds.field("b") != 7)]:
        data = _data(root)
        expected = theirs.count_rows(filter=pwhere)
        assert data.count_rows(filter=where) == expected
        assert counts.batches == []
        opened = len(counts.opened)
        assert data.count_rows(filter=where) == expected
        assert len(counts.opened) == opened
    # x >= 45 000: the first file is ruled out by its footer, the second keeps its last two
    # batches, the third all three (by their statistics; without them every batch is read)
    data = _data(root)
    assert data.count_rows(filter=field("x") >= 45_000) == 45_000
    kept = [frag._value_spans["x"][2] for frag in data.get_fragments()
            if "x" in frag._value_spans]
    if statistics:
        assert [[span is not None for span in spans] for spans in kept] == \
            [[False, True, True], [True, True, True]]
    else:
        assert [[span is not None for span in spans] for spans in kept] == [[True] * 3] * 3


@pytest.mark.parametrize("case", ["lz4", "nulls", "int32 in an int64 dataset"])
def test_a_first_filtered_count_the_headers_cannot_serve_decodes_the_batches(tmp_path, counts,
                                                                            case):
    """Compressed bodies, a column with nulls, or a file column of another type than the
    dataset's: the count decodes the column's batches (and casts or masks) as any scan,
    and agrees with pyarrow."""
    pa = pytest.importorskip("pyarrow")
    pds = pytest.importorskip("pyarrow.dataset")
    root = str(tmp_path / "numbers")
    schema = None
    if case == "lz4":
        _number_files(root, compression="lz4")
    else:
        os.makedirs(root)
        rng = np.random.default_rng(9)
        for k in range(2):
            values = rng.integers(0, 1000, 30_000)
            b = pa.array(values, mask=values % 7 == 0) if case == "nulls" \
                else pa.array(values.astype(np.int32))
            ds.write_dataset(A.table(pa.table({"b": b})), root,
                             basename_template=f"part-{k}-{{i}}.arrow", max_rows_per_group=10_000,
                             existing_data_behavior="overwrite_or_ignore")
        if case != "nulls":
            schema = pa.schema([("b", pa.int64())])
    expected = pds.dataset(root, format="ipc", schema=schema).count_rows(
        filter=pds.field("b") < 10)
    got = ds.dataset(root, format="ipc", schema=schema).count_rows(filter=field("b") < 10)
    assert got == expected
    assert counts.batches                           # decoded, not read in place


def test_empty_batches_are_counted_as_none_in_a_first_and_a_later_count(tmp_path, counts):
    pa = pytest.importorskip("pyarrow")
    pds = pytest.importorskip("pyarrow.dataset")
    path = str(tmp_path / "gaps.arrow")
    rng = np.random.default_rng(4)
    schema = pa.schema([("b", pa.int64())])
    with pa.OSFile(path, "wb") as sink, pa.ipc.new_file(sink, schema) as w:
        for n in (20_000, 0, 15_000, 0):
            w.write_batch(pa.record_batch([pa.array(rng.integers(0, 100, n))], schema=schema))
    if not _leases_granted(path):
        pytest.skip("no read lease on this filesystem: counts read the file each time")
    expected = pds.dataset(path, format="ipc").count_rows(filter=pds.field("b") < 10)
    data = _data(path)
    assert data.count_rows(filter=field("b") < 10) == expected
    assert data.count_rows(filter=field("b") < 10) == expected
    assert counts.batches == []


def _summary_lying_about_rows(tmp_path):
    """A file of two 5-row batches whose footer summary says they hold 3 rows each (right in
    form: two batches, rows the sum of batch_rows)."""
    import json

    import pyarrow as pa
    from arrowipc.ipc.statistics import FILE_KEY
    path = str(tmp_path / "lie.arrow")
    t = pa.table({"id": pa.array(range(10), pa.int64())})
    lie = json.dumps({"version": 1, "rows": 6, "batch_rows": [3, 3],
                      "columns": {"id": {"null_count": 0, "min": 0, "max": 9}}})
    with pa.ipc.new_file(path, t.schema, metadata={FILE_KEY: lie}) as w:
        w.write_table(t, max_chunksize=5)
    return path


@pytest.mark.parametrize("first", ["nothing", "to_table", "count_rows", "filtered"])
def test_a_summary_whose_rows_are_not_the_headers_is_not_used(tmp_path, first):
    # counts and takes came from the summary's rows (6, and indices past 5 out of bounds)
    # once the file had been opened; pyarrow, which ignores the summary, is the oracle
    import pyarrow.dataset as pds
    path = _summary_lying_about_rows(tmp_path)
    theirs = pds.dataset(path, format="ipc")
    d = ds.dataset(path, format="ipc")
    if first == "to_table":
        d.to_table()
    elif first == "count_rows":
        d.count_rows()
    elif first == "filtered":
        d.to_table(filter=field("id") > 4)
    assert d.count_rows() == theirs.count_rows() == 10
    assert [f.count_rows() for f in d.get_fragments()] == [10]
    assert d.take([7, 9]).to_pydict() == theirs.take([7, 9]).to_pydict()
    assert d.head(8).num_rows == 8
    assert d.count_rows(filter=field("id") > 4) == 5
