"""An InMemoryDataset's fragments and FileSystemDataset.from_paths, with pyarrow as the oracle."""
import pyarrow as pa
import pyarrow.dataset as pds
import pyarrow.feather as pfeather
import pyarrow.fs as pafs
import pyarrow.ipc as pipc
import pytest

import arrowipc.dataset as ds


def _pa(table):
    return table.to_pyarrow()


def _in_memory_sources():
    batch = pa.record_batch({"a": pa.array(range(10)), "s": [str(i) for i in range(10)]})
    two_chunks = pa.Table.from_batches([batch, batch.slice(2, 5)])
    return {
        "batch": lambda: batch,
        "table of two chunks": lambda: two_chunks,
        "list of batches": lambda: [batch, batch.slice(0, 3)],
        "list of tables": lambda: [two_chunks, pa.Table.from_batches([batch])],
        "reader of three batches": lambda: pa.RecordBatchReader.from_batches(
            batch.schema, [batch, batch, batch.slice(7)]),
    }


@pytest.mark.parametrize("name", list(_in_memory_sources()))
def test_an_in_memory_dataset_has_one_fragment_per_batch_as_pyarrow(name):
    make = _in_memory_sources()[name]
    ours = list(ds.dataset(make()).get_fragments())
    theirs = list(pds.dataset(make()).get_fragments())
    assert len(ours) == len(theirs)
    for mine, want in zip(ours, theirs):
        assert isinstance(mine, ds.Fragment) and not isinstance(mine, ds.FileFragment)
        assert str(mine.partition_expression) == str(want.partition_expression) == "true"
        assert _pa(mine.to_table()).equals(want.to_table())
        assert mine.physical_schema.to_pyarrow().equals(want.physical_schema)


def test_an_in_memory_fragment_scans_as_pyarrow_scans_it():
    batch = pa.record_batch({"a": pa.array(range(10)), "s": [str(i) for i in range(10)]})
    mine = next(ds.dataset([batch]).get_fragments())
    want = next(pds.dataset([batch]).get_fragments())
    int32 = pa.schema([("a", pa.int32()), ("s", pa.string())])
    cases = [  # (ours, pyarrow's)
        (dict(columns=["s"]), dict(columns=["s"])),
        (dict(columns={"x": ds.field("a") * 2}, filter=ds.field("a") > 3),
         dict(columns={"x": pds.field("a") * 2}, filter=pds.field("a") > 3)),
        (dict(filter=ds.field("s") == "7"), dict(filter=pds.field("s") == "7")),
        (dict(schema=int32), dict(schema=int32)),
    ]
    for kwargs, theirs in cases:
        assert _pa(mine.to_table(**kwargs)).equals(want.to_table(**theirs)), kwargs
    assert [b.num_rows for b in mine.to_batches(batch_size=4)] == \
        [b.num_rows for b in want.to_batches(batch_size=4)] == [4, 4, 2]
    assert mine.count_rows(filter=ds.field("a") >= 6) == \
        want.count_rows(filter=pds.field("a") >= 6) == 4
    assert _pa(mine.head(3)).equals(want.head(3))
    assert _pa(mine.take([1, 8])).equals(want.take([1, 8]))
    assert _pa(ds.Scanner.from_fragment(mine, columns=["a"]).to_table()).equals(
        pds.Scanner.from_fragment(want, columns=["a"]).to_table())


def test_an_in_memory_datasets_filter_rules_out_no_fragment_as_pyarrows():
    batch = pa.record_batch({"a": pa.array(range(10))})
    never = ds.field("a") > 100
    assert len(list(ds.dataset([batch, batch]).get_fragments(filter=never))) == \
        len(list(pds.dataset([batch, batch]).get_fragments(filter=pds.field("a") > 100))) == 2


def test_an_in_memory_scan_tags_each_batch_with_its_fragment():
    batch = pa.record_batch({"a": pa.array(range(10))})
    tagged = list(ds.dataset([batch, batch.slice(0, 4)]).scanner(batch_size=3).scan_batches())
    assert [t.record_batch.num_rows for t in tagged] == [3, 3, 3, 1, 3, 1]
    fragments = [t.fragment for t in tagged]
    assert all(isinstance(f, ds.Fragment) for f in fragments)
    assert [f.count_rows() for f in fragments] == [10] * 4 + [4] * 2


def test_a_fragment_is_not_constructed_directly():
    with pytest.raises(TypeError, match="Do not call Fragment's constructor directly"):
        ds.Fragment()


# -- FileSystemDataset.from_paths -----------------------------------------------------------------
_SCHEMA = pa.schema([("a", pa.int64()), ("part", pa.int32()), ("level", pa.int64())])


def _write(path, table, kind):
    if kind == "stream":
        with pipc.new_stream(path, table.schema) as w:
            w.write_table(table)
    else:
        pfeather.write_feather(table, path, compression="uncompressed")


@pytest.fixture(params=["ipc", "feather", "stream"])
def two_files(tmp_path, request):
    kind = request.param
    paths = [str(tmp_path / "x.arrow"), str(tmp_path / "y.arrow")]
    _write(paths[0], pa.table({"a": [1, 2, 3]}), kind)
    _write(paths[1], pa.table({"a": [4, 5]}), kind)
    formats = {"ipc": (ds.IpcFileFormat, pds.IpcFileFormat),
               "feather": (ds.FeatherFileFormat, pds.FeatherFileFormat),
               "stream": (ds.IpcStreamFormat, None)}
    return paths, formats[kind]


def _both(paths, formats, **kwargs):
    ours_format, their_format = formats
    ours = ds.FileSystemDataset.from_paths(
        paths, schema=_SCHEMA, format=ours_format(), filesystem=pafs.LocalFileSystem(),
        partitions=kwargs.get("partitions"), root_partition=kwargs.get("root_partition"))
    # pyarrow has no stream format for datasets: its file format reads the same rows
    theirs = pds.FileSystemDataset.from_paths(
        paths if their_format is not None else [], schema=_SCHEMA,
        format=(their_format or pds.IpcFileFormat)(), filesystem=pafs.LocalFileSystem(),
        partitions=kwargs.get("their_partitions") if their_format is not None else None,
        root_partition=kwargs.get("their_root"))
    return ours, theirs, their_format is not None


def test_from_paths_reads_partitions_and_root_partition_as_pyarrow(two_files):
    paths, formats = two_files
    ours, theirs, comparable = _both(
        paths, formats,
        partitions=[ds.field("part") == 1, ds.field("part") == 2],
        root_partition=ds.field("level") == ds.scalar(7),
        their_partitions=[pds.field("part") == 1, pds.field("part") == 2],
        their_root=pds.field("level") == pds.scalar(7))
    assert isinstance(ours, ds.FileSystemDataset)
    assert ours.files == paths
    assert ours.partitioning is None
    assert str(ours.partition_expression) == "(level == 7)"
    assert [str(f.partition_expression) for f in ours.get_fragments()] == \
        ["(part == 1)", "(part == 2)"]
    want = pa.table({"a": [1, 2, 3, 4, 5], "part": pa.array([1, 1, 1, 2, 2], pa.int32()),
                     "level": pa.nulls(5, pa.int64())})
    assert _pa(ours.to_table()).equals(want)
    assert _pa(ours.to_table(filter=ds.field("part") == 2)).equals(want.slice(3))
    assert len(list(ours.get_fragments(filter=ds.field("part") == 2))) == 1
    assert ours.count_rows(filter=ds.field("level") == 8) == 0
    assert len(list(ours.get_fragments(filter=ds.field("level") == 8))) == 0
    if comparable:
        assert theirs.to_table().equals(want)
        assert theirs.to_table(filter=pds.field("part") == 2).equals(want.slice(3))
        assert str(theirs.partition_expression) == str(ours.partition_expression)
        assert len(list(theirs.get_fragments(filter=pds.field("level") == 8))) == 0


def test_from_paths_partition_that_fixes_no_value_reads_as_nulls_as_pyarrow(two_files):
    paths, formats = two_files
    ours, theirs, comparable = _both(
        paths[:1], formats, partitions=[ds.field("part") > 1],
        their_partitions=[pds.field("part") > 1])
    assert str(next(ours.get_fragments()).partition_expression) == "(part > 1)"
    got = _pa(ours.to_table())
    assert got.column("part").null_count == 3
    if comparable:
        assert got.equals(theirs.to_table())


def test_from_paths_defaults_have_no_partitions(two_files):
    paths, formats = two_files
    ours, theirs, comparable = _both(paths, formats)
    assert str(ours.partition_expression) == "true"
    assert all(str(f.partition_expression) == "true" for f in ours.get_fragments())
    assert _pa(ours.to_table()).column("a").to_pylist() == [1, 2, 3, 4, 5]
    if comparable:
        assert _pa(ours.to_table()).equals(theirs.to_table())


@pytest.mark.parametrize("filesystem", [None, pafs.LocalFileSystem()])
def test_from_paths_touches_no_file_until_a_scan(tmp_path, filesystem):
    path = str(tmp_path / "nonexistingfile.arrow")
    ours = ds.FileSystemDataset.from_paths([path], schema=_SCHEMA, format=ds.IpcFileFormat(),
                                           filesystem=filesystem)
    assert [f.path for f in ours.get_fragments()] == [path]
    with pytest.raises(FileNotFoundError, match="nonexistingfile.arrow"):
        ours.to_table()
    with pytest.raises(FileNotFoundError, match="nonexistingfile.arrow"):
        ours.count_rows()


def test_from_paths_a_file_its_partition_rules_out_is_not_opened(tmp_path):
    present = str(tmp_path / "x.arrow")
    _write(present, pa.table({"a": [1, 2]}), "ipc")
    missing = str(tmp_path / "missing.arrow")
    ours = ds.FileSystemDataset.from_paths(
        [present, missing], schema=_SCHEMA, format=ds.IpcFileFormat(),
        partitions=[ds.field("part") == 1, ds.field("part") == 2])
    assert ours.to_table(filter=ds.field("part") == 1).column("a").to_pylist() == [1, 2]


def _from_paths(**kwargs):
    args = dict(paths=["x.arrow"], schema=_SCHEMA, format=ds.IpcFileFormat())
    args.update(kwargs)
    return ds.FileSystemDataset.from_paths(**args)


def test_from_paths_needs_a_schema():
    with pytest.raises(TypeError,
                       match=r"Argument 'schema' has incorrect type \(expected Schema, got "
                             r"NoneType\)"):
        _from_paths(schema=None)


def test_from_paths_needs_a_file_format_object():
    with pytest.raises(TypeError,
                       match=r"Argument 'format' has incorrect type \(expected FileFormat, got "
                             r"str\)"):
        _from_paths(format="ipc")


def test_from_paths_takes_paths_only():
    with pytest.raises(TypeError, match="cannot construct a FileSource from 1"):
        _from_paths(paths=[1])


def test_from_paths_needs_one_partition_per_path():
    with pytest.raises(ValueError, match="must be equal to the number of partitions: 1 files, "
                                         "2 partitions"):
        _from_paths(partitions=[ds.field("part") == 1, ds.field("part") == 2])


def test_from_paths_partitions_are_expressions():
    with pytest.raises(TypeError, match=r"Argument 'partition_expression' has incorrect type "
                                        r"\(expected Expression, got int\)"):
        _from_paths(partitions=[1])


def test_root_partition_is_an_expression():
    with pytest.raises(TypeError, match=r"Argument 'root_partition' has incorrect type "
                                        r"\(expected Expression, got int\)"):
        _from_paths(root_partition=1)
    with pytest.raises(TypeError, match="Argument 'root_partition' has incorrect type"):
        ds.FileSystemDataset([], schema=_SCHEMA, format=ds.IpcFileFormat(), root_partition=1)


def test_file_system_dataset_arguments_in_pyarrows_order():
    with pytest.raises(TypeError, match=r"Argument 'schema' has incorrect type \(expected "
                                        r"Schema, got IpcFileFormat\)"):
        ds.FileSystemDataset([], ds.IpcFileFormat(), _SCHEMA)


def test_from_paths_accepts_pyarrow_expressions():
    ours = _from_paths(partitions=[pds.field("part") == 3],
                       root_partition=pds.field("level") == 7)
    assert str(ours.partition_expression) == "(level == 7)"
    assert next(ours.get_fragments()).partition_values == {"part": 3}


# -- filesystem= as a URI or a directory (pyarrow's SubTreeFileSystem) -------------------------
@pytest.fixture
def tree(tmp_path):
    (tmp_path / "sub").mkdir()
    pfeather.write_feather(pa.table({"a": [1, 2]}), str(tmp_path / "sub" / "x.arrow"))
    return tmp_path


@pytest.mark.parametrize("source, base", [
    ("sub/x.arrow", "uri"), ("sub", "directory"), (["sub/x.arrow"], "uri"),
    ("x.arrow", "uri of sub"), ("/sub/x.arrow", "directory"),
])
def test_a_filesystem_uri_reads_paths_below_it_as_pyarrow(tree, source, base):
    filesystem = {"uri": tree.as_uri(), "directory": str(tree),
                  "uri of sub": (tree / "sub").as_uri()}[base]
    theirs = pds.dataset(source, format="ipc", filesystem=filesystem)
    ours = ds.dataset(source, format="ipc", filesystem=filesystem)
    assert ours.to_table().equals(theirs.to_table())
    # ours lists the files by their whole path (pyarrow's relative to the sub-tree)
    assert ours.files == [str(tree / "sub" / "x.arrow")]


def test_a_filesystem_uri_must_name_a_directory(tree):
    uri = tree.as_uri() + "/nothing"
    with pytest.raises(ValueError) as theirs:
        pds.dataset("sub/x.arrow", format="ipc", filesystem=uri)
    with pytest.raises(ValueError) as ours:
        ds.dataset("sub/x.arrow", format="ipc", filesystem=uri)
    assert str(ours.value) == str(theirs.value) == (
        f"The path component of the filesystem URI must point to a directory but it has a "
        f"type: `NotFound`. The path component is `{tree}/nothing` and the given filesystem "
        f"URI is `{uri}`")


def test_write_dataset_takes_a_filesystem_uri(tree):
    table = pa.table({"a": [1, 2, 3]})
    ds.write_dataset(table, "out", format="ipc", filesystem=tree.as_uri())
    assert pds.dataset(str(tree / "out"), format="ipc").to_table().equals(table)


@pytest.mark.parametrize("filesystem", [pafs._MockFileSystem, "memory"])
def test_a_path_object_with_a_filesystem_not_local_is_a_type_error_as_pyarrows(tree, filesystem):
    import fsspec
    fs = fsspec.filesystem("memory") if filesystem == "memory" else filesystem()
    path = tree / "sub" / "x.arrow"
    expected = "Expected string path; path-like objects are only allowed with a local filesystem"
    with pytest.raises(TypeError, match=f"^{expected}$"):
        pds.dataset(path, format="ipc", filesystem=fs)
    with pytest.raises(TypeError, match=f"^{expected} \\(got a PosixPath and a "
                                        f"{type(fs).__name__}\\)$"):
        ds.dataset(path, format="ipc", filesystem=fs)
    with pytest.raises(TypeError, match=f"^{expected} "):
        ds.write_dataset(pa.table({"a": [1]}), tree / "out", format="ipc", filesystem=fs)
    # a local filesystem (pyarrow's or fsspec's) takes it
    for local in (pafs.LocalFileSystem(), fsspec.filesystem("file")):
        assert ds.dataset(path, format="ipc", filesystem=local).to_table().num_rows == 2


# -- FileFormat.make_fragment and inspect, and datasets of such fragments -----------------------
def test_format_inspect_and_make_fragment_as_pyarrows(tree):
    import fsspec
    path = tree / "sub" / "x.arrow"
    fsspec_local = pafs.PyFileSystem(pafs.FSSpecHandler(fsspec.filesystem("file")))
    for filesystem in (None, pafs.LocalFileSystem(), fsspec_local):
        # pyarrow needs a filesystem for a path; ours reads a local one without
        theirs = pds.IpcFileFormat().inspect(str(path), filesystem or pafs.LocalFileSystem())
        assert ds.IpcFileFormat().inspect(str(path), filesystem).equals(theirs)
        fragment = ds.IpcFileFormat().make_fragment(str(path), filesystem)
        assert fragment.physical_schema.equals(theirs)
        # a path object too, with any filesystem (dataset() takes it with a local one only)
        assert ds.IpcFileFormat().inspect(path, filesystem).equals(
            pds.IpcFileFormat().inspect(path, filesystem or pafs.LocalFileSystem()))
        assert fragment.partition_expression.equals(ds.scalar(True))
    assert ds.FeatherFileFormat().inspect(path).equals(theirs)
    with pytest.raises(TypeError, match="^make_fragment takes the path of a file, got a "
                                        "BufferReader "):
        ds.IpcFileFormat().make_fragment(pa.BufferReader(b"abc"))


def test_a_dataset_of_made_fragments_reads_their_partition_values_as_pyarrows(tree):
    path = str(tree / "sub" / "x.arrow")
    schema = pa.schema([("a", pa.int64()), ("part", pa.int64())])

    def make(mod, filesystem):
        fmt = mod.IpcFileFormat()
        fragments = [fmt.make_fragment(path, filesystem, mod.field("part") == 1),
                     fmt.make_fragment(path, filesystem, mod.field("part") == 2),
                     fmt.make_fragment(path, filesystem)]
        return mod.FileSystemDataset(fragments, schema=schema, format=fmt,
                                     filesystem=filesystem)
    ours, theirs = make(ds, None), make(pds, pafs.LocalFileSystem())
    assert [f.partition_expression.equals(g.partition_expression)
            for f, g in zip(ours.get_fragments(), theirs.get_fragments())] == [True] * 3
    assert _pa(ours.to_table()).equals(theirs.to_table())
    for make_filter in (lambda mod: mod.field("part") == 2,
                        lambda mod: mod.field("part").is_null()):
        expected = make_filter(pds)
        for expr in (make_filter(ds), expected):        # pyarrow's expressions are taken too
            assert _pa(ours.to_table(filter=expr)).equals(theirs.to_table(filter=expected))
            assert ours.count_rows(filter=expr) == theirs.count_rows(filter=expected)


# -- FileSystemDatasetFactory and FileSystemFactoryOptions ----------------------------------------
@pytest.fixture
def encoded_tree():
    mockfs = pafs._MockFileSystem()
    schema = pa.schema([("i64", pa.int64())])
    for directory in ["directory/2021-05-04 00%3A00%3A00/%24",
                      "hive/date=2021-05-04 00%3A00%3A00/string=%24"]:
        mockfs.create_dir(directory)
        with mockfs.open_output_stream(directory + "/0.feather") as sink:
            with pipc.new_file(sink, schema) as writer:
                writer.write_table(pa.table([pa.array(range(4))], schema=schema))
    return mockfs


@pytest.mark.parametrize("flavor", ["directory", "hive"])
@pytest.mark.parametrize("how", ["schema", "names none", "object none"])
def test_filesystem_dataset_factory_as_pyarrows(encoded_tree, flavor, how):
    import pickle
    timestamp_schema = pa.schema([("date", pa.timestamp("s")), ("string", pa.string())])
    string_schema = pa.schema([("date", pa.string()), ("string", pa.string())])
    results = []
    for mod in (pds, ds):
        cls = mod.HivePartitioning if flavor == "hive" else mod.DirectoryPartitioning
        options = mod.FileSystemFactoryOptions(flavor)
        if how == "schema":
            options.partitioning_factory = pickle.loads(pickle.dumps(
                cls.discover(schema=timestamp_schema)))
        elif how == "names none":
            options.partitioning_factory = (
                cls.discover(segment_encoding="none") if flavor == "hive"
                else cls.discover(["date", "string"], segment_encoding="none"))
        else:
            options.partitioning = cls(string_schema, segment_encoding="none")
        factory = mod.FileSystemDatasetFactory(
            encoded_tree, pafs.FileSelector(flavor, recursive=True), mod.IpcFileFormat(),
            options)
        data = factory.finish()
        results.append((str(factory.inspect()), [str(f.partition_expression)
                                                 for f in data.get_fragments()],
                        pa.table(data.to_table()).to_pydict()))
    theirs, ours = results
    assert ours == theirs


def test_filesystem_dataset_factory_inspects_every_file_as_pyarrows(tmp_path):
    paths = []
    for i, type_ in enumerate((pa.int8(), pa.int16())):
        paths.append(str(tmp_path / f"{i}.arrow"))
        pfeather.write_feather(pa.table({"v": pa.array([i], type_)}), paths[-1])
    local = pafs.LocalFileSystem()
    for mod in (pds, ds):
        factory = mod.FileSystemDatasetFactory(local, paths, mod.IpcFileFormat())
        with pytest.raises(TypeError, match="^Unable to merge: Field v has incompatible "
                                            "types: int8 vs int16"):
            factory.inspect()
        assert str(factory.inspect(promote_options="permissive")) == "v: int16"
        assert str(factory.inspect(fragments=1)) == "v: int8"
        assert str(factory.finish().schema) == "v: int8"
        with pytest.raises(ValueError, match="^Invalid promote_options: bad$"):
            factory.inspect(promote_options="bad")
        for bad in ("one", -1):
            with pytest.raises(ValueError, match=f"^Fragment count must be a non-negative int "
                                                 f"or None; got {bad!r}$"):
                factory.inspect(fragments=bad)
    for mod in (pds, ds):
        options = mod.FileSystemFactoryOptions()
        assert (options.exclude_invalid_files, options.selector_ignore_prefixes,
                type(options.partitioning).__name__, len(options.partitioning.schema),
                options.partitioning_factory) == (
            False, [".", "_"], "DirectoryPartitioning", 0, None)
