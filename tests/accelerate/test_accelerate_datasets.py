"""pyarrow.dataset under the accelerator: dataset() and write_dataset() on the IPC and Feather
formats are served by arrowipc.dataset, with pyarrow's own dataset class and objects, and give
what plain pyarrow gives; anything else falls back to pyarrow; pyarrow's own IPC/Feather dataset
tests pass under the accelerator."""
import os
import pathlib
import subprocess
import sys

import pytest

pa = pytest.importorskip("pyarrow")
import pyarrow.compute as pc  # noqa: E402
import pyarrow.dataset as ds  # noqa: E402

import arrowipc.accelerate as acc  # noqa: E402
from arrowipc.accelerate.datasets import ServedFileSystemDataset  # noqa: E402

REPO = pathlib.Path(__file__).resolve().parent.parent.parent
PYARROW_TEST_DATASET = pathlib.Path(pa.__file__).parent / "tests" / "test_dataset.py"
HANG_GUARD = 300           # seconds: a hung subprocess fails the test instead of the whole run


@pytest.fixture
def accelerated():
    acc.install(report=False)
    acc.reset_report()
    try:
        yield
    finally:
        acc.uninstall()
        acc.reset_report()


def _table():
    return pa.table({
        "a": pa.array([1, 2, None, 4, 5, 6], pa.int64()),
        "b": pa.array([0.5, None, 2.5, 3.5, 4.5, 5.5]),
        "s": pa.array(["u", "v", "w", None, "y", "z"]),
        "p": pa.array(["x", "y", "x", "z", "y", "x"]),
        "n": pa.array([1, 1, 2, 2, 1, 2], pa.int64()),
    })


def _record():
    from arrowipc.accelerate.record import RECORD
    return RECORD


def _served(entry):
    return _record().served[entry]


def _fell_back(entry):
    return {reason: n for (e, reason), n in _record().fell_back.items() if e == entry}


def _write_plain(table, path, **kwargs):
    was = acc.installed()
    acc.uninstall()
    try:
        ds.write_dataset(table, str(path), **kwargs)
    finally:
        if was:
            acc.install(report=False)


def _plain(fn):
    """fn() on plain pyarrow (the oracle), the accelerator put back after."""
    acc.uninstall()
    try:
        return fn()
    finally:
        acc.install(report=False)


SCANS = [
    dict(),
    dict(columns=["a", "p"]),
    dict(columns=["n", "s", "a"]),
    dict(filter=pc.field("n") == 2),
    dict(filter=(pc.field("a") > 1) & (pc.field("p") != "y")),
    dict(columns=["b", "n"], filter=pc.field("s").is_null() | (pc.field("b") < 3)),
    dict(filter=pc.field("p").isin(["x", "z"]) & ~pc.field("a").is_null()),
]


@pytest.mark.parametrize("fmt", ["ipc", "arrow", "feather"])
@pytest.mark.parametrize("scan", range(len(SCANS)))
def test_a_hive_partitioned_dataset_reads_as_plain_pyarrow(tmp_path, accelerated, fmt, scan):
    _write_plain(_table(), tmp_path, format=fmt, partitioning=["p", "n"],
                 partitioning_flavor="hive")
    kwargs = SCANS[scan]
    opened = ds.dataset(str(tmp_path), format=fmt, partitioning="hive")
    assert isinstance(opened, ds.FileSystemDataset) and isinstance(opened, ServedFileSystemDataset)
    got = opened.to_table(**kwargs)
    got_batches = pa.Table.from_batches(list(opened.to_batches(**kwargs)), schema=got.schema)
    got_count = opened.count_rows(filter=kwargs.get("filter"))
    got_head = opened.head(2, **kwargs)
    assert _served("dataset.dataset") == 1
    for entry in ("to_table", "to_batches", "count_rows", "head"):
        assert _served(f"dataset.FileSystemDataset.{entry}") == 1, acc.report()

    def oracle():
        theirs = ds.dataset(str(tmp_path), format=fmt, partitioning="hive")
        assert type(theirs) is ds.FileSystemDataset
        return (theirs.schema, theirs.files, theirs.to_table(**kwargs),
                theirs.count_rows(filter=kwargs.get("filter")), theirs.head(2, **kwargs))
    schema, files, expected, count, head = _plain(oracle)
    assert opened.schema.equals(schema, check_metadata=True) and opened.files == files
    assert type(got) is pa.Table and got.schema.equals(expected.schema)
    assert got.equals(expected)
    assert got_batches.equals(expected)
    assert got_count == count == expected.num_rows
    assert got_head.equals(head)


PROJECTIONS = [
    {"a2": pc.field("a") * 2, "p": pc.field("p")},
    {"total": pc.field("a") + pc.field("n"), "half": pc.field("b") / 2,
     "big": pc.field("a") > 3, "known": ~pc.field("s").is_null()},
    {"n": pc.field("n"), "as_float": pc.field("a").cast(pa.float64())},
]


@pytest.mark.parametrize("projection", range(len(PROJECTIONS)))
def test_a_projection_of_expressions_is_served_as_plain_pyarrow_computes_it(tmp_path,
                                                                            accelerated,
                                                                            projection):
    _write_plain(_table(), tmp_path, format="ipc", partitioning=["p", "n"],
                 partitioning_flavor="hive")
    columns = PROJECTIONS[projection]
    opened = ds.dataset(str(tmp_path), format="ipc", partitioning="hive")
    got = opened.to_table(columns=columns, filter=pc.field("p") != "z")
    head = opened.head(3, columns=columns)
    assert _served("dataset.FileSystemDataset.to_table") == 1, acc.report()
    assert _served("dataset.FileSystemDataset.head") == 1, acc.report()
    assert _record().fell_back == {}        # pyarrow's projection of no rows is not a call

    def oracle():
        theirs = ds.dataset(str(tmp_path), format="ipc", partitioning="hive")
        return (theirs.to_table(columns=columns, filter=pc.field("p") != "z"),
                theirs.head(3, columns=columns))
    expected, expected_head = _plain(oracle)
    assert got.schema.equals(expected.schema) and got.equals(expected)
    assert head.equals(expected_head)


def test_a_projection_pyarrow_refuses_falls_back_to_its_error(tmp_path, accelerated):
    _write_plain(_table(), tmp_path, format="ipc")
    opened = ds.dataset(str(tmp_path), format="ipc")
    with pytest.raises(pa.ArrowInvalid, match="No match for FieldRef.Name\\(absent\\)"):
        opened.to_table(columns={"x": pc.field("absent")})
    assert _served("dataset.FileSystemDataset.to_table") == 0
    assert list(_fell_back("dataset.FileSystemDataset.to_table")) == [
        "arrowipc refused the scan (ArrowInvalid); pyarrow's answer is kept"]


def test_the_served_dataset_works_with_every_later_pyarrow_call(tmp_path, accelerated):
    _write_plain(_table(), tmp_path / "in", format="ipc", partitioning=["p"],
                 partitioning_flavor="hive")
    opened = ds.dataset(str(tmp_path / "in"), format="ipc", partitioning="hive")
    expected = _plain(lambda: ds.dataset(str(tmp_path / "in"), format="ipc",
                                         partitioning="hive").to_table())
    assert isinstance(opened.partitioning, ds.HivePartitioning)
    assert [f.path for f in opened.get_fragments()] == opened.files
    assert opened.scanner(columns=["a"]).to_table().equals(expected.select(["a"]))
    assert ds.Scanner.from_dataset(opened).to_table().equals(expected)
    assert opened.filter(pc.field("p") == "x").to_table().equals(
        expected.filter(pc.field("p") == "x"))
    # pyarrow builds the filtered dataset as this class: its own filter must not be lost
    assert _fell_back("dataset.FileSystemDataset.to_table") == {
        "a dataset pyarrow derived (filter, replace_schema, pickle)": 1}
    # pyarrow's write_dataset takes the served dataset (its C++ dataset is pyarrow's own)
    ds.write_dataset(opened, str(tmp_path / "out"), format="ipc")
    copied = _plain(lambda: ds.dataset(str(tmp_path / "out"), format="ipc").to_table())
    assert copied.sort_by("a").equals(expected.sort_by("a"))


@pytest.mark.parametrize("fmt", ["ipc", "feather"])
def test_a_served_write_reads_back_as_plain_pyarrow_writes(tmp_path, accelerated, fmt):
    table = _table()
    ds.write_dataset(table, str(tmp_path / "served"), format=fmt, partitioning=["p", "n"],
                     partitioning_flavor="hive")
    assert _served("dataset.write_dataset") == 1, acc.report()
    _write_plain(table, tmp_path / "plain", format=fmt, partitioning=["p", "n"],
                 partitioning_flavor="hive")

    def read(sub):
        d = ds.dataset(str(tmp_path / sub), format=fmt, partitioning="hive")
        return d.files, d.to_table()
    served_files, served = _plain(lambda: read("served"))
    plain_files, plain = _plain(lambda: read("plain"))
    relative = [os.path.relpath(f, tmp_path / "served") for f in served_files]
    assert relative == [os.path.relpath(f, tmp_path / "plain") for f in plain_files]
    assert served.schema.equals(plain.schema) and served.equals(plain)


PARTITION_SCHEMA = pa.schema([("p", pa.string()), ("n", pa.int64())])


@pytest.mark.parametrize("flavor", ["hive", None, "filename"])
def test_a_write_partitioned_by_a_pyarrow_partitioning_is_served(tmp_path, accelerated, flavor):
    table = _table()
    ds.write_dataset(table, str(tmp_path / "served"), format="ipc",
                     partitioning=ds.partitioning(PARTITION_SCHEMA, flavor=flavor))
    assert _served("dataset.write_dataset") == 1, acc.report()
    _write_plain(table, tmp_path / "plain", format="ipc",
                 partitioning=ds.partitioning(PARTITION_SCHEMA, flavor=flavor))

    def read(sub):
        d = ds.dataset(str(tmp_path / sub), format="ipc",
                       partitioning=ds.partitioning(PARTITION_SCHEMA, flavor=flavor))
        return ([os.path.relpath(f, tmp_path / sub) for f in d.files],
                d.to_table().sort_by([("a", "ascending"), ("b", "ascending")]))
    served_files, served = _plain(lambda: read("served"))
    plain_files, plain = _plain(lambda: read("plain"))
    assert served_files == plain_files
    assert served.schema.equals(plain.schema) and served.equals(plain)


def test_a_pyarrow_partitioning_with_other_options_falls_back(tmp_path, accelerated):
    table = _table()
    ds.write_dataset(table, str(tmp_path / "out"), format="ipc",
                     partitioning=ds.HivePartitioning(PARTITION_SCHEMA, segment_encoding="none"))
    assert _served("dataset.write_dataset") == 0
    assert _fell_back("dataset.write_dataset") == {
        "a partitioning's null fallback or segment encoding": 1}
    ds.write_dataset(table, str(tmp_path / "typed"), format="ipc",
                     partitioning=ds.partitioning(pa.schema([("n", pa.int32())])))
    assert _fell_back("dataset.write_dataset")[
        "a partition field absent from the data or of another type"] == 1


def test_a_served_write_takes_pyarrow_file_options_and_batches(tmp_path, accelerated):
    table = _table()
    file_format = ds.IpcFileFormat()
    ds.write_dataset(table.to_batches(max_chunksize=2), str(tmp_path / "out"),
                     format=file_format,
                     file_options=file_format.make_write_options(compression="zstd"))
    assert _served("dataset.write_dataset") == 1, acc.report()
    read = _plain(lambda: ds.dataset(str(tmp_path / "out"), format="ipc").to_table())
    assert read.equals(table)
    import pyarrow.ipc as pa_ipc
    [path] = list((tmp_path / "out").iterdir())
    with pa_ipc.open_file(str(path)) as reader:
        assert reader.read_all().equals(table)


def test_a_served_write_gives_the_file_visitor_pyarrows_written_files(tmp_path, accelerated):
    table = pa.table({"a": [1, 2, 3], "p": ["x", "y", "x"]})
    seen = []
    ds.write_dataset(table, str(tmp_path / "out"), format="ipc", partitioning=["p"],
                     partitioning_flavor="hive", file_visitor=seen.append)
    assert _served("dataset.write_dataset") == 1, acc.report()
    theirs = []
    _plain(lambda: ds.write_dataset(table, str(tmp_path / "plain"), format="ipc",
                                    partitioning=["p"], partitioning_flavor="hive",
                                    file_visitor=theirs.append))
    assert all(type(w) is ds.WrittenFile and w.metadata is None for w in seen)
    assert sorted(w.path.replace("/out/", "/plain/") for w in seen) == \
        sorted(w.path for w in theirs)
    assert all(w.size == os.path.getsize(w.path) for w in seen)


def test_parquet_and_unknown_options_fall_back_to_pyarrow(tmp_path, accelerated):
    table = _table()
    ds.write_dataset(table, str(tmp_path / "pq"), format="parquet")
    ds.write_dataset(table, str(tmp_path / "visited"), format="ipc", schema=table.schema)
    assert _fell_back("dataset.write_dataset") == {"format 'parquet'": 1,
                                                   "schema was given": 1}
    parquet = ds.dataset(str(tmp_path / "pq"))            # pyarrow's default format: parquet
    assert type(parquet) is ds.FileSystemDataset
    assert parquet.to_table().equals(table)
    assert _fell_back("dataset.dataset") == {"format None": 1}

    opened = ds.dataset(str(tmp_path / "visited"), format="ipc")
    batch_readahead = opened.to_table(batch_readahead=2)
    assert batch_readahead.equals(table)
    with pytest.raises(pa.ArrowInvalid):                   # pyarrow's own error
        opened.to_table(columns=["absent"])
    assert _fell_back("dataset.FileSystemDataset.to_table") == {
        "the scan option 'batch_readahead'": 1,
        "a column absent from the schema (pyarrow raises)": 1}
    assert _served("dataset.FileSystemDataset.to_table") == 0


def test_a_pyarrow_filesystem_object_falls_back(tmp_path, accelerated):
    _write_plain(_table(), tmp_path, format="ipc")
    from pyarrow.fs import PyFileSystem, FSSpecHandler
    fsspec = pytest.importorskip("fsspec")
    fs = PyFileSystem(FSSpecHandler(fsspec.filesystem("file")))
    opened = ds.dataset(str(tmp_path), format="ipc", filesystem=fs)
    assert type(opened) is ds.FileSystemDataset
    assert opened.to_table().equals(_table())
    assert _fell_back("dataset.dataset") == {"a filesystem of type PyFileSystem": 1}


def test_uninstall_restores_pyarrow_dataset_exactly():
    before = (ds.dataset, ds.write_dataset)
    acc.install(report=False)
    try:
        assert ds.dataset is not before[0] and ds.write_dataset is not before[1]
        assert ds.dataset.__doc__ == before[0].__doc__
    finally:
        acc.uninstall()
    assert (ds.dataset, ds.write_dataset) == before
    assert ds.dataset is before[0] and ds.write_dataset is before[1]


def test_pyarrows_own_ipc_and_feather_dataset_tests_pass_under_the_accelerator(tmp_path):
    if not PYARROW_TEST_DATASET.exists():
        pytest.skip("the pyarrow wheel carries no tests")
    env = dict(os.environ, PYTHONPATH=str(REPO), ARROWIPC_ACCELERATE_REPORT="1")
    result = subprocess.run(
        [sys.executable, "-m", "arrowipc.accelerate", "-m", "pytest", str(PYARROW_TEST_DATASET),
         "-k", "ipc or feather", "-q", "-p", "no:cacheprovider"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=HANG_GUARD)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    assert " failed" not in result.stdout and " passed" in result.stdout
    assert "dataset.FileSystemDataset.to_table" in result.stderr    # the scans were served
    assert "served" in result.stderr.splitlines()[-1]
