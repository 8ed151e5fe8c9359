"""Feather V2 (Arrow IPC files) through arrowipc.feather, pyarrow.feather as the oracle: round
trips both ways, compression and chunk defaults, column selection, sources, FeatherDataset, and
writes that fail leaving nothing under the destination's name.
"""
import io
import os

import pytest

import arrowipc
import arrowipc.feather as feather
from arrowipc import ArrowInvalid

pa = pytest.importorskip("pyarrow")
pf = pytest.importorskip("pyarrow.feather")


def _table(n=1000):
    return pa.table({
        "i": pa.array(range(n), pa.int64()),
        "f": pa.array([i / 7 if i % 5 else None for i in range(n)], pa.float64()),
        "s": pa.array([f"v{i % 13}" if i % 3 else None for i in range(n)]),
        "c": pa.array([["x", "y", "z"][i % 3] for i in range(n)]).dictionary_encode(),
        "l": pa.array([[i, i + 1] if i % 4 else None for i in range(n)]),
        "st": pa.array([{"a": i, "b": str(i)} for i in range(n)]),
        "ts": pa.array(range(n), pa.timestamp("us", "UTC")),
        "d": pa.array([i * 1.5 for i in range(n)], pa.float32()),
    })


def test_pyarrow_reads_what_arrowipc_writes(tmp_path):
    expected = _table()
    path = tmp_path / "ours.feather"
    feather.write_feather(arrowipc.table(expected), str(path))
    assert pf.read_table(path).equals(expected)


def test_arrowipc_reads_what_pyarrow_writes(tmp_path):
    expected = _table()
    path = tmp_path / "theirs.feather"
    for compression in ("lz4", "zstd", "uncompressed"):
        pf.write_feather(expected, path, compression=compression, chunksize=300)
        got = feather.read_table(str(path))
        assert pa.table(got).equals(expected)
        assert got.schema.equals(arrowipc.schema(expected.schema))


def test_lz4_is_the_default_as_in_pyarrow(tmp_path):
    table = arrowipc.table(_table(5000))
    paths = {}
    for name, kwargs in (("default", {}), ("lz4", {"compression": "lz4"}),
                         ("none", {"compression": "uncompressed"}),
                         ("zstd", {"compression": "zstd"})):
        paths[name] = tmp_path / f"{name}.feather"
        feather.write_feather(table, str(paths[name]), **kwargs)
        assert pf.read_table(paths[name]).equals(pa.table(table))
    size = {k: p.stat().st_size for k, p in paths.items()}
    assert paths["default"].read_bytes() == paths["lz4"].read_bytes()
    assert size["lz4"] < size["none"] and size["zstd"] < size["none"]
    # pyarrow's default writes the same kind of file: LZ4, as small as ours within a margin
    pf.write_feather(pa.table(table), tmp_path / "theirs.feather")
    theirs = (tmp_path / "theirs.feather").stat().st_size
    assert abs(theirs - size["lz4"]) < size["none"] - size["lz4"]


@pytest.mark.parametrize("chunksize,batches", [(None, 2), (100, 700 // 100 + 1), (0, 1), (-1, 1)])
def test_chunksize_bounds_the_rows_per_batch_as_in_pyarrow(tmp_path, chunksize, batches):
    n = 64 * 1024 + 5 if chunksize is None else 701
    table = pa.table({"a": pa.array(range(n), pa.int32())})
    ours, theirs = tmp_path / "ours.feather", tmp_path / "theirs.feather"
    feather.write_feather(arrowipc.table(table), str(ours), chunksize=chunksize)
    pf.write_feather(table, theirs, chunksize=chunksize)
    sizes = [pa.ipc.open_file(ours).get_batch(i).num_rows
             for i in range(pa.ipc.open_file(ours).num_record_batches)]
    expected = [pa.ipc.open_file(theirs).get_batch(i).num_rows
                for i in range(pa.ipc.open_file(theirs).num_record_batches)]
    assert sizes == expected
    assert len(sizes) == batches


@pytest.mark.parametrize("level", [1, 9, 30, -5])
def test_compression_levels_are_accepted_as_by_pyarrow(tmp_path, level):
    table = _table(200)
    for codec in ("lz4", "zstd"):
        pf.write_feather(table, tmp_path / "theirs.feather", compression=codec,
                         compression_level=level)
        path = tmp_path / "ours.feather"
        feather.write_feather(arrowipc.table(table), str(path), compression=codec,
                              compression_level=level)
        assert pf.read_table(path).equals(table)


@pytest.mark.parametrize("kwargs,error,message", [
    (dict(compression="snappy"), ValueError,
     r'compression="snappy" not supported, must be one of \{'),
    (dict(compression="LZ4"), ValueError, r'compression="LZ4" not supported'),
    (dict(compression="uncompressed", compression_level=5), ValueError,
     r"Codec 'uncompressed' doesn't support setting a compression level."),
])
def test_bad_options_fail_as_in_pyarrow(tmp_path, kwargs, error, message):
    with pytest.raises(error, match=message):
        pf.write_feather(pa.table({"a": [1]}), tmp_path / "theirs.feather", **kwargs)
    path = tmp_path / "ours.feather"
    with pytest.raises(error, match=message):
        feather.write_feather(arrowipc.table({"a": [1]}), str(path), **kwargs)
    assert not path.exists()


def test_a_dataframe_with_a_bad_version_is_refused():
    pd = pytest.importorskip("pandas")
    with pytest.raises(ValueError, match="Version value should either be 1 or 2"):
        feather.write_feather(pd.DataFrame({"a": [1]}), io.BytesIO(), version=3)


def test_a_destination_that_is_not_writable_is_refused():
    with pytest.raises(TypeError, match="Unable to write to object of type: <class 'NoneType'>"):
        feather.write_feather(arrowipc.table({"a": [1]}), None)


def test_writes_to_file_objects(tmp_path):
    sink = io.BytesIO()
    feather.write_feather(arrowipc.table(_table(50)), sink)
    assert pf.read_table(pa.BufferReader(sink.getvalue())).equals(_table(50))
    with open(tmp_path / "f.feather", "wb") as f:
        feather.write_feather(arrowipc.table(_table(50)), f)
    assert pf.read_table(tmp_path / "f.feather").equals(_table(50))


def test_a_pyarrow_table_is_written_too(tmp_path):
    # any Arrow stream exporter, beyond pyarrow (which takes only its own Table)
    path = tmp_path / "ours.feather"
    feather.write_feather(_table(10), str(path))
    assert pf.read_table(path).equals(_table(10))


# -- a failed write leaves nothing new under the destination's name ------------------------------

def _no_temporary_files(directory):
    return [p.name for p in directory.iterdir() if p.name.endswith(".tmp")] == []


def test_a_write_failing_midway_leaves_no_file(tmp_path, monkeypatch):
    from arrowipc.ipc import RecordBatchFileWriter
    written = []
    original = RecordBatchFileWriter.write_batch

    def failing(self, batch, *args, **kwargs):
        if written:
            raise OSError(28, "No space left on device")
        written.append(batch)
        return original(self, batch, *args, **kwargs)
    monkeypatch.setattr(RecordBatchFileWriter, "write_batch", failing)
    path = tmp_path / "ours.feather"
    with pytest.raises(OSError, match="No space left on device"):
        feather.write_feather(arrowipc.table(_table(500)), str(path), chunksize=100,
                              compression="uncompressed")
    assert written                     # the failure came after a batch was written
    assert not path.exists()
    assert _no_temporary_files(tmp_path)


@pytest.mark.filterwarnings("ignore:Feather V1 files are deprecated:DeprecationWarning")
def test_a_failed_write_keeps_the_previous_file(tmp_path, monkeypatch):
    # pyarrow deletes it; arrowipc's atomic write leaves it untouched (docs/pyarrow-compat.md)
    path = tmp_path / "ours.feather"
    feather.write_feather(arrowipc.table({"a": [1]}), str(path))
    before = path.read_bytes()
    with pytest.raises(TypeError, match="Unsupported Feather V1 type"):
        feather.write_feather(arrowipc.table({"a": pa.array([1], pa.duration("s"))}), str(path),
                              version=1)
    assert path.read_bytes() == before
    assert _no_temporary_files(tmp_path)


@pytest.mark.filterwarnings("ignore:Feather V1 files are deprecated:DeprecationWarning")
def test_a_v1_write_failing_midway_leaves_no_file(tmp_path, monkeypatch):
    from arrowipc.ipc import feather_v1
    calls = []
    original = feather_v1._V1Writer.array

    def failing(self, d):
        if calls:
            raise OSError(5, "Input/output error")
        calls.append(d)
        return original(self, d)
    monkeypatch.setattr(feather_v1._V1Writer, "array", failing)
    path = tmp_path / "ours.feather"
    with pytest.raises(OSError, match="Input/output error"):
        feather.write_feather(arrowipc.table({"a": [1], "b": [2]}), str(path), version=1)
    assert calls and not path.exists()
    assert _no_temporary_files(tmp_path)


# -- reading: sources and selections -------------------------------------------------------------

def test_every_kind_of_source(tmp_path):
    path = tmp_path / "theirs.feather"
    expected = _table(100)
    pf.write_feather(expected, path)
    data = path.read_bytes()
    for source in (str(path), path, data, pa.py_buffer(data), io.BytesIO(data),
                   pa.BufferReader(data), arrowipc.py_buffer(data)):
        assert pa.table(feather.read_table(source)).equals(expected), type(source)
    with open(path, "rb") as f:
        assert pa.table(feather.read_table(f)).equals(expected)
    with pa.memory_map(str(path)) as f:
        assert pa.table(feather.read_table(f)).equals(expected)
    assert pa.table(feather.read_table(str(path), memory_map=True)).equals(expected)
    assert pa.table(feather.read_table(str(path), use_threads=False)).equals(expected)


def test_a_file_object_read_twice_for_a_projection(tmp_path):
    # a projection opens the file again: a file object must be read from where it started
    path = tmp_path / "theirs.feather"
    pf.write_feather(_table(100), path)
    f = io.BytesIO(b"junk" + path.read_bytes())
    f.seek(4)
    with pytest.raises(ArrowInvalid):     # V2 positions are the file's: as pyarrow, no offset
        feather.read_table(f, columns=["s"])
    f = io.BytesIO(path.read_bytes())
    assert feather.read_table(f, columns=["s", "i"]).column_names == ["s", "i"]


@pytest.mark.parametrize("columns", [["a", "c"], ["b", "a"], ["a", "a"], [0, 2], ["c"], [2],
                                     ("a",), "ab"])
def test_selections_pyarrow_gets_right(tmp_path, columns):
    path = tmp_path / "theirs.feather"
    pf.write_feather(pa.table({"c": [1], "a": [2], "b": [3]}), path)
    want = pf.read_table(path, columns=columns)
    got = feather.read_table(str(path), columns=columns)
    if list(columns) == ["a", "c"]:
        # pyarrow returns the file's order when the names asked happen to be sorted
        assert want.column_names == ["c", "a"]
        assert got.column_names == ["a", "c"]
        return
    assert pa.table(got).equals(want)


@pytest.mark.parametrize("columns,expected", [([1, 1], ["a", "a"]), ([2, 0], ["b", "c"]),
                                              ([], ["c", "a", "b"])])
def test_selections_in_the_order_asked(tmp_path, columns, expected):
    # pyarrow 26 fails with IndexError on repeated or unsorted indices of a V2 file; arrowipc
    # gives the columns asked, in that order, as pyarrow does for V1 files. No selection reads
    # every column, as pyarrow's V2 read.
    path = tmp_path / "theirs.feather"
    pf.write_feather(pa.table({"c": [1], "a": [2], "b": [3]}), path)
    assert feather.read_table(str(path), columns=columns).column_names == expected


@pytest.mark.parametrize("columns,error,message", [
    ([5], ArrowInvalid, "Out of bounds field index: 5"),
    ([-1], ArrowInvalid, "Out of bounds field index: -1"),
    (["zz"], ArrowInvalid, "Field named zz is not found"),
    (["a", 1], TypeError, r"Columns must be indices or names. Got columns \['a', 1\] of types "
                          r"\['str', 'int'\]"),
    ([True], TypeError, r"Columns must be indices or names. Got columns \[True\] of types "
                        r"\['bool'\]"),
    (3, TypeError, "Columns must be a sequence but, got int"),
])
def test_bad_selections_fail_as_in_pyarrow(tmp_path, columns, error, message):
    path = tmp_path / "theirs.feather"
    pf.write_feather(pa.table({"c": [1], "a": [2], "b": [3]}), path)
    with pytest.raises(ValueError if error is ArrowInvalid else error, match=message):
        pf.read_table(path, columns=columns)
    with pytest.raises(error, match=message):
        feather.read_table(str(path), columns=columns)


def test_a_name_that_is_not_unique_is_not_found(tmp_path):
    path = tmp_path / "theirs.feather"
    pf.write_feather(pa.table([[1], [2]], names=["a", "a"]), path)
    with pytest.raises(ValueError, match="Field named a is not found"):
        pf.read_table(path, columns=["a"])
    with pytest.raises(ArrowInvalid, match="Field named a is not found"):
        feather.read_table(str(path), columns=["a"])


def test_a_projection_reads_only_the_columns_asked(tmp_path):
    # the other columns' bytes are not read: a file whose unselected column is corrupt reads
    path = tmp_path / "ours.feather"
    feather.write_feather(arrowipc.table({"a": list(range(100)), "b": ["x" * 50] * 100}),
                          str(path), compression="uncompressed")
    data = bytearray(path.read_bytes())
    where = bytes(data).find(b"x" * 50)
    data[where:where + 8] = b"\xff" * 8          # invalid UTF-8 inside column b's values
    with pytest.raises(ArrowInvalid):
        feather.read_table(bytes(data)).validate(full=True)
    assert feather.read_table(bytes(data), columns=["a"]).column("a").to_pylist() == \
        list(range(100))


def test_files_of_neither_format_are_refused():
    with pytest.raises(ArrowInvalid, match=r"buffer: File is too small to be a well-formed "
                                           r"file \(5 bytes"):
        feather.read_table(b"ARROW")
    with pytest.raises(ArrowInvalid, match=r"Not a Feather V1 or Arrow IPC file"):
        feather.read_table(b"PAR1" + bytes(100))


def test_a_missing_file_is_file_not_found(tmp_path):
    with pytest.raises(FileNotFoundError):
        pf.read_table(str(tmp_path / "missing.feather"))
    with pytest.raises(FileNotFoundError):
        feather.read_table(str(tmp_path / "missing.feather"))


# -- FeatherDataset ------------------------------------------------------------------------------

def test_a_dataset_reads_its_files_as_one_table(tmp_path):
    paths = []
    for k in range(3):
        paths.append(str(tmp_path / f"part{k}.feather"))
        pf.write_feather(_table(20).slice(k * 5, 5), paths[-1])
    expected = pf.FeatherDataset(paths).read_table(columns=["s", "i"])
    got = feather.FeatherDataset(paths).read_table(columns=["s", "i"])
    assert pa.table(got).equals(expected)
    assert pa.table(feather.FeatherDataset(paths).read_table()).equals(
        pf.FeatherDataset(paths).read_table())


def test_a_dataset_refuses_files_of_another_schema(tmp_path):
    paths = [str(tmp_path / "a.feather"), str(tmp_path / "b.feather")]
    pf.write_feather(pa.table({"a": [1]}), paths[0])
    pf.write_feather(pa.table({"a": ["x"]}), paths[1])
    with pytest.raises(ValueError, match=rf"Schema in {paths[1]} was different. \n"):
        pf.FeatherDataset(paths).read_table()
    with pytest.raises(ValueError, match=rf"Schema in {paths[1]} was different. \n"):
        feather.FeatherDataset(paths).read_table()


def test_a_dataset_reads_pandas(tmp_path):
    pytest.importorskip("pandas")
    paths = [str(tmp_path / "a.feather"), str(tmp_path / "b.feather")]
    pf.write_feather(pa.table({"a": [1, 2], "s": ["x", None]}), paths[0])
    pf.write_feather(pa.table({"a": [3], "s": ["z"]}), paths[1])
    got = feather.FeatherDataset(paths).read_pandas(columns=["s"])
    expected = pf.FeatherDataset(paths).read_pandas(columns=["s"])
    assert got.equals(expected)


def test_the_module_surface_is_pyarrows():
    import inspect
    for name in ("read_table", "read_feather", "write_feather", "check_chunked_overflow"):
        assert inspect.signature(getattr(feather, name)).parameters.keys() == \
            inspect.signature(getattr(pf, name)).parameters.keys(), name
        for p in inspect.signature(getattr(pf, name)).parameters.values():
            assert inspect.signature(getattr(feather, name)).parameters[p.name].default == \
                p.default, (name, p.name)
    assert issubclass(feather.FeatherError, Exception)
    assert set(feather.__all__) >= {"FeatherDataset", "FeatherError", "read_feather",
                                    "read_table", "write_feather"}
    assert os.path.basename(feather.__file__) == "feather.py"


@pytest.mark.parametrize("compression", ["uncompressed", "lz4", "zstd"])
@pytest.mark.parametrize("sliced", [False, True])
def test_fixed_size_binary_of_width_zero_is_written(compression, sliced):
    """pyarrow's test_roundtrip found it: a binary(0) column has no value bytes at all, so no
    size check on them may refuse it."""
    table = pa.table({"x": pa.array([b"", None, b"", b""], pa.binary(0)), "y": [1, 2, 3, 4]})
    if sliced:
        table = table.slice(1, 2)
    sink = io.BytesIO()
    feather.write_feather(table, sink, compression=compression)
    sink.seek(0)
    assert pf.read_table(sink).equals(table)
