"""Defects the ETL scripts (tests/etl) and pyarrow's own test_dataset.py, run against
arrowipc.dataset, found; each pinned against pyarrow's behaviour."""
import pytest

import arrowipc.dataset as ds

pa = pytest.importorskip("pyarrow")
pads = pytest.importorskip("pyarrow.dataset")


@pytest.fixture
def hive(tmp_path):
    path = str(tmp_path / "h")
    pads.write_dataset(pa.table({"a": [1, 2, 3], "p": ["x", "y", "x"]}), path, format="ipc",
                       partitioning=["p"], partitioning_flavor="hive")
    return path


def _first_fragments(path):
    ours = next(iter(ds.dataset(path, format="ipc", partitioning="hive").get_fragments()))
    theirs = next(iter(pads.dataset(path, format="ipc", partitioning="hive").get_fragments()))
    return ours, theirs


@pytest.mark.parametrize("call", [
    lambda f: f.to_table(),
    lambda f: f.head(1),
    lambda f: f.take([0]),
    lambda f: f.to_table(filter=pads.field("a") > 1),
])
def test_a_fragment_scanned_without_a_schema_has_the_files_columns_only(hive, call):
    ours, theirs = _first_fragments(hive)
    want = call(theirs)
    got = call(ours)
    assert got.schema.names == want.schema.names == ["a"]
    assert got.to_pydict() == want.to_pydict()


def test_a_fragment_scanned_with_the_datasets_schema_has_the_partition_columns(hive):
    ours, theirs = _first_fragments(hive)
    schema = pads.dataset(hive, format="ipc", partitioning="hive").schema
    assert ours.to_table(schema=schema).to_pydict() == \
        theirs.to_table(schema=schema).to_pydict() == {"a": [1, 3], "p": ["x", "x"]}


def test_a_partition_field_without_the_datasets_schema_is_no_match(hive):
    ours, theirs = _first_fragments(hive)
    with pytest.raises(ValueError, match=r"No match for FieldRef.Name\(p\)") as want:
        theirs.count_rows(filter=pads.field("p") == "x")
    with pytest.raises(ValueError, match=r"No match for FieldRef.Name\(p\)") as got:
        ours.count_rows(filter=ds.field("p") == "x")
    assert type(got.value).__name__ == type(want.value).__name__


@pytest.mark.parametrize("make", [
    lambda ts: ts,
    lambda ts: [t.to_batches()[0] for t in ts],
    lambda ts: [ts[0].slice(0, 0), *ts],
], ids=["tables", "batches", "with an empty table"])
def test_a_list_of_pyarrow_tables_or_batches_is_an_in_memory_dataset(make):
    tables = [pa.table({"a": [1, 2]}), pa.table({"a": [3]})]
    want = pads.dataset(make(tables))
    got = ds.dataset(make(tables))
    assert type(got).__name__ == type(want).__name__ == "InMemoryDataset"
    assert got.to_table().to_pydict() == want.to_table().to_pydict()
    assert got.count_rows(filter=ds.field("a") > 1) == 2


def test_write_dataset_refuses_a_schema_with_a_reader_as_pyarrow(tmp_path):
    import arrowipc as A
    table = pa.table({"a": [1, 2]})
    message = "Cannot specify a schema when providing a RecordBatchReader"
    with pytest.raises(ValueError, match=message):
        pads.write_dataset(pa.RecordBatchReader.from_batches(table.schema, table.to_batches()),
                           str(tmp_path / "p"), format="ipc", schema=table.schema)
    for reader in (pa.RecordBatchReader.from_batches(table.schema, table.to_batches()),
                   A.RecordBatchReader.from_batches(A.table(table).schema,
                                                    A.table(table).to_batches())):
        with pytest.raises(ValueError, match=message):
            ds.write_dataset(reader, str(tmp_path / "o"), format="ipc", schema=table.schema)


def _dictionary_of(table, name):
    return [pa.table(table).column(name).chunk(i).dictionary.to_pylist()
            for i in range(pa.table(table).column(name).num_chunks)]


@pytest.fixture
def cities(tmp_path):
    path = str(tmp_path / "c")
    pads.write_dataset(pa.table({"a": [1, 2, 3, 4], "c": ["rome", "oslo", "lima", "rome"]}),
                       path, format="ipc", partitioning=["c"], partitioning_flavor="hive")
    return path


@pytest.mark.parametrize("filter_", [None, "rome"])
def test_an_inferred_dictionary_partition_column_holds_every_value_found(cities, filter_):
    """pandas sees the categories of all partitions, not just the one read."""
    def read(mod):
        data = mod.dataset(cities, format="ipc",
                           partitioning=mod.HivePartitioning.discover(infer_dictionary=True))
        return data.to_table(filter=None if filter_ is None else mod.field("c") == filter_)
    want, got = read(pads), read(ds)
    assert _dictionary_of(got, "c") == _dictionary_of(want, "c")
    assert pa.table(got).to_pydict() == want.to_pydict()
    assert list(pa.table(got).to_pandas()["c"].cat.categories) == ["lima", "oslo", "rome"]


def test_a_pyarrow_partitionings_dictionaries_are_kept(cities):
    part = pads.partitioning(pa.schema([("c", pa.dictionary(pa.int32(), pa.string()))]),
                             flavor="hive",
                             dictionaries={"c": pa.array(["zz", "rome", "oslo", "lima"])})
    want = pads.dataset(cities, format="ipc", partitioning=part).to_table()
    got = ds.dataset(cities, format="ipc", partitioning=part).to_table()
    assert _dictionary_of(got, "c") == _dictionary_of(want, "c")
    assert pa.table(got).to_pydict() == want.to_pydict()


@pytest.mark.parametrize("options, message", [
    (dict(max_rows_per_file=128), "max_rows_per_group must be less than or equal to "
                                  "max_rows_per_file"),
    (dict(max_rows_per_file=128, max_rows_per_group=200),
     "max_rows_per_group must be less than or equal to max_rows_per_file"),
    (dict(min_rows_per_group=10, max_rows_per_group=5),
     "min_rows_per_group must be less than or equal to max_rows_per_group"),
    (dict(max_rows_per_group=0), "max_rows_per_group must be a positive number"),
])
def test_write_dataset_refuses_row_limits_as_pyarrow(tmp_path, options, message):
    table = pa.table({"a": list(range(10))})
    with pytest.raises(ValueError) as want:
        pads.write_dataset(table, str(tmp_path / "p"), format="ipc", **options)
    with pytest.raises(ValueError) as got:
        ds.write_dataset(table, str(tmp_path / "o"), format="ipc", **options)
    assert str(got.value) == str(want.value) == message
    assert type(got.value).__name__ == type(want.value).__name__ == "ArrowInvalid"
    assert not (tmp_path / "o").exists() or not any((tmp_path / "o").iterdir())


@pytest.mark.parametrize("factory", [
    lambda: pads.HivePartitioning.discover(infer_dictionary=True),
    lambda: pads.HivePartitioning.discover(schema=pa.schema([("c", pa.string())])),
], ids=["infer_dictionary", "schema"])
def test_a_pyarrow_partitioning_factorys_options_are_kept(cities, factory):
    want = pads.dataset(cities, format="ipc", partitioning=factory())
    got = ds.dataset(cities, format="ipc", partitioning=factory())
    assert str(got.schema.field("c").type) == str(want.schema.field("c").type)
    assert pa.table(got.to_table()).to_pydict() == want.to_table().to_pydict()
    if pa.types.is_dictionary(want.schema.field("c").type):
        assert _dictionary_of(got.to_table(), "c") == _dictionary_of(want.to_table(), "c")


def test_a_pyarrow_directory_partitioning_factory_is_converted(tmp_path):
    path = str(tmp_path / "d")
    pads.write_dataset(pa.table({"a": [1, 2], "c": ["x", "y"]}), path, format="ipc",
                       partitioning=["c"])
    factory = pads.DirectoryPartitioning.discover(["c"], infer_dictionary=True)
    want = pads.dataset(path, format="ipc", partitioning=factory)
    got = ds.dataset(path, format="ipc", partitioning=factory)
    assert str(got.schema.field("c").type) == str(want.schema.field("c").type)
    assert pa.table(got.to_table()).to_pydict() == want.to_table().to_pydict()


def test_fragment_open_gives_a_pyarrow_native_file_when_pyarrow_is_loaded(hive):
    """pyarrow's own test_dataset asserts it (assert_dataset_fragment_convenience_methods)."""
    ours, _ = _first_fragments(hive)
    with ours.open() as nf:
        assert isinstance(nf, pa.NativeFile)
        assert not nf.closed and nf.seekable() and nf.readable() and not nf.writable()
        assert nf.read(6) == b"ARROW1"
    assert nf.closed


def test_a_dot_path_in_columns_reads_a_struct_child_named_by_its_last_step(tmp_path):
    table = pa.table({"id": [1, 2], "a.b": [3, 4],
                      "s": [{"x": 1, "t": {"y": "p"}}, {"x": None, "t": {"y": "q"}}]})
    path = str(tmp_path / "n")
    pads.write_dataset(table, path, format="ipc")
    columns = ["id", "s.x", "s.t.y", "a.b", "s.t"]
    want = pads.dataset(path, format="ipc").to_table(columns=columns)
    got = ds.dataset(path, format="ipc").to_table(columns=columns)
    assert got.schema.names == want.schema.names == ["id", "x", "y", "a.b", "t"]
    assert pa.table(got).to_pylist() == want.to_pylist()
    with pytest.raises(ValueError, match=r"No match for FieldRef.Name\(s.z\)"):
        ds.dataset(path, format="ipc").to_table(columns=["s.z"])


def test_head_of_a_filtered_in_memory_dataset_as_pyarrow():
    """pyarrow's test_dataset_filter[mem]: head() of an InMemoryDataset gave no rows."""
    table = pa.table({"colA": [1, 2, 6, 8], "col2": ["a", "b", "f", "g"]})
    for mod in (pads, ds):
        data = mod.dataset(table).filter(mod.field("colA") < 3)
        assert data.head(5).to_pydict() == {"colA": [1, 2], "col2": ["a", "b"]}
        assert data.head(1).to_pydict() == {"colA": [1], "col2": ["a"]}
        assert mod.dataset(table).head(2, filter=mod.field("colA") > 3).to_pydict() == \
            {"colA": [6, 8], "col2": ["f", "g"]}
    assert [b.num_rows for b, _ in ds.dataset(table).scanner().scan_batches()] == [4]


def test_a_string_as_a_columns_dict_value_is_a_type_error_as_pyarrow():
    table = pa.table({"A": [1]})
    with pytest.raises(TypeError) as want:
        pads.dataset(table).to_table(columns={"A": "A"})
    with pytest.raises(TypeError) as got:
        ds.dataset(table).to_table(columns={"A": "A"})
    assert str(got.value) == str(want.value)


def test_write_dataset_refuses_a_schema_with_a_scanner_as_pyarrow(tmp_path):
    table = pa.table({"A": [1]})
    with pytest.raises(ValueError) as want:
        pads.write_dataset(pads.dataset(table).scanner(), str(tmp_path / "p"),
                           schema=table.schema, format="ipc")
    with pytest.raises(ValueError) as got:
        ds.write_dataset(ds.dataset(table).scanner(), str(tmp_path / "o"),
                         schema=table.schema, format="ipc")
    assert str(got.value) == str(want.value) == "Cannot specify a schema when writing a Scanner"


@pytest.mark.parametrize("make", [
    lambda s: ds.DirectoryPartitioning(s, segment_encoding="none"),
    lambda s: ds.FilenamePartitioning(s, segment_encoding="none"),
    lambda s: ds.HivePartitioning(s, segment_encoding="none", null_fallback="xyz"),
], ids=["directory", "filename", "hive"])
def test_a_partitioning_pickles_with_its_options(make):
    """pyarrow's test_partitioning_pickling: the segment encoding was lost."""
    import pickle
    schema = pa.schema([("i64", pa.int64()), ("f64", pa.float64())])
    part = make(schema)
    back = pickle.loads(pickle.dumps(part))
    assert back == part
    assert back.segment_encoding == "none"
    if isinstance(part, ds.HivePartitioning):      # another null_fallback: not equal
        assert part != ds.HivePartitioning(schema, segment_encoding="none")


@pytest.fixture
def described(tmp_path):
    """A hive dataset whose schema has metadata, a non-nullable column with field metadata,
    written from pandas (its metadata says how to rebuild the frame)."""
    import pandas as pd
    frame = pd.DataFrame({"a": pd.array([1, None], dtype="Int64"), "s": ["u", "v"],
                          "p": ["x", "y"]}, index=pd.Index(["r1", "r2"], name="rid"))
    table = pa.Table.from_pandas(frame)
    fields = [pa.field("a", pa.int64(), nullable=True, metadata={"unit": "kg"})] + \
        [table.schema.field(i) for i in range(1, table.num_columns)]
    fields[1] = fields[1].with_nullable(False)
    table = table.cast(pa.schema(fields, metadata=table.schema.metadata))
    path = str(tmp_path / "described")
    pads.write_dataset(table, path, format="ipc", partitioning=["p"],
                       partitioning_flavor="hive")
    return path, table


@pytest.mark.parametrize("call", [
    lambda d, m: d.to_table(),
    lambda d, m: d.to_table(columns=["s", "a"]),
    lambda d, m: d.to_table(columns={"renamed": m.field("a"), "twice": m.field("a") * 2}),
    lambda d, m: d.to_table(filter=m.field("a") > 0),
    lambda d, m: d.head(1),
    lambda d, m: d.take([1]),
    lambda d, m: pa.Table.from_batches(list(d.to_batches())) if m is pads else
    pa.table(next(iter(d.to_batches()))),
    lambda d, m: d.scanner(columns=["a"]).to_reader().read_all(),
    lambda d, m: next(iter(d.get_fragments())).to_table(),
], ids=["to_table", "columns", "expressions", "filter", "head", "take", "to_batches",
        "to_reader", "fragment"])
def test_scans_keep_the_schemas_metadata_and_the_fields_nullability(described, call):
    """A column taken as it is keeps its field (nullability, metadata), and a scan's schema
    the dataset's metadata, as in pyarrow; a computed column is a plain nullable field."""
    path, _ = described
    want = call(pads.dataset(path, format="ipc", partitioning="hive"), pads).schema
    got = pa.schema(call(ds.dataset(path, format="ipc", partitioning="hive"), ds).schema)
    assert got.equals(want, check_metadata=True), f"{got}\n!=\n{want}"


def test_a_pandas_frame_comes_back_through_a_dataset(described):
    """pandas' metadata rides the scan: the index and the nullable dtypes come back."""
    path, table = described
    want = pads.dataset(path, format="ipc", partitioning="hive").to_table().to_pandas()
    got = ds.dataset(path, format="ipc", partitioning="hive").to_table().to_pandas()
    assert list(got.index) == list(want.index) == ["r1", "r2"]
    assert got.dtypes.to_dict() == want.dtypes.to_dict()
    assert got.equals(want)


def test_an_in_memory_dataset_keeps_the_tables_schema(described):
    _, table = described
    got = pa.schema(ds.dataset(table).to_table().schema)
    assert got.equals(pads.dataset(table).to_table().schema, check_metadata=True)


@pytest.mark.parametrize("make", [
    lambda m: m.field("a"), lambda m: m.field("a") + 1, lambda m: m.field("s"),
    lambda m: m.field("n"), lambda m: m.scalar(None), lambda m: m.scalar(1)])
def test_a_filter_that_is_not_boolean_is_a_type_error(make):
    """pyarrow's ArrowTypeError, word for word, not a kernel's complaint about the mask."""
    table = pa.table({"a": [1, 2], "n": pa.nulls(2), "s": ["x", "y"]})
    with pytest.raises(pa.ArrowTypeError) as theirs:
        pads.dataset(table).to_table(filter=make(pads))
    from arrowipc.errors import ArrowTypeError
    with pytest.raises(ArrowTypeError) as ours:
        ds.dataset(table).to_table(filter=make(ds))
    assert isinstance(ours.value, TypeError)
    assert str(ours.value) == str(theirs.value)


def test_get_partition_keys_of_each_fragment_as_pyarrow(tmp_path):
    """The usual loop: for each fragment, its partition keys as a dict."""
    path = str(tmp_path / "keys")
    table = pa.table({"v": [1, 2, 3, 4], "year": [2025, 2026, 2026, None],
                      "country": ["DE", "FR", "DE", "FR"]})
    pads.write_dataset(table, path, format="ipc", partitioning=["year", "country"],
                       partitioning_flavor="hive")

    def keys(module):
        data = module.dataset(path, format="ipc", partitioning="hive")
        return sorted((f.path, module.get_partition_keys(f.partition_expression))
                      for f in data.get_fragments())
    assert keys(ds) == keys(pads)


@pytest.mark.parametrize("make", [
    lambda m: (m.field("a") == 1) & (m.field("b") == "x"),
    lambda m: m.field("a").is_null(),
    lambda m: m.scalar(True),
    lambda m: (m.field("a") > 1) & (m.field("c") == 2.5),
    lambda m: m.scalar(3) == m.field("a"),           # a literal first fixes nothing
    lambda m: m.field("d") == m.scalar(pa.scalar(None, pa.int32())),
    lambda m: ~(m.field("a") == 1),
])
def test_get_partition_keys_of_expressions_as_pyarrow(make):
    assert ds.get_partition_keys(make(ds)) == pads.get_partition_keys(make(pads))
    assert ds.get_partition_keys(make(pads)) == pads.get_partition_keys(make(pads))


def test_datasets_and_scanners_hand_over_through_the_capsule_interface(hive):
    """pyarrow and polars read a dataset or a scanner as an Arrow C stream; a dataset is
    scanned anew at each call."""
    import polars as pl
    want = pads.dataset(hive, format="ipc", partitioning="hive")
    data = ds.dataset(hive, format="ipc", partitioning="hive")
    for _ in range(2):
        assert pa.table(data).equals(want.to_table())
    scanner = data.scanner(columns=["a"], filter=ds.field("p") == "x")
    theirs = want.to_table(columns=["a"], filter=pads.field("p") == "x")
    assert pa.RecordBatchReader.from_stream(scanner).read_all().equals(theirs)
    assert pl.DataFrame(data).sort("a").to_dicts() == \
        pl.DataFrame(want.to_table()).sort("a").to_dicts()


FORMATTED = [
    lambda m: (m.field("bar") == "ant bee") & (m.field("foo") == "A"),
    lambda m: m.field("foo") == "b c/é+%",
    lambda m: m.field("bar") == "x",
    lambda m: m.field("foo").is_null() & (m.field("bar") == "1"),
    lambda m: m.scalar(True),
    lambda m: (m.field("foo") == "A") & (m.field("bar") > "3"),
    lambda m: (m.field("foo") == "A") | (m.field("bar") == "3"),
]


@pytest.mark.parametrize("flavor", ["HivePartitioning", "DirectoryPartitioning",
                                    "FilenamePartitioning"])
@pytest.mark.parametrize("make", FORMATTED)
def test_partitioning_format_spells_paths_as_pyarrow(flavor, make):
    """(directory, file name prefix) of a partition expression, pyarrow's text: Hive's values
    percent-escaped, a level skipped an ArrowInvalid for directories and file names."""
    schema = pa.schema([("foo", pa.string()), ("bar", pa.string())])
    try:
        want = getattr(pads, flavor)(schema).format(make(pads))
    except pa.ArrowInvalid as e:
        from arrowipc.errors import ArrowInvalid
        with pytest.raises(ArrowInvalid) as ours:
            getattr(ds, flavor)(schema).format(make(ds))
        assert str(ours.value) in str(e)
        return
    assert getattr(ds, flavor)(schema).format(make(ds)) == want


def test_partitionings_with_other_dictionaries_differ():
    schema = pa.schema([("g", pa.int64()), ("k", pa.dictionary(pa.int8(), pa.string()))])
    with_a = ds.DirectoryPartitioning(schema, dictionaries={"k": pa.array(["a"])})
    assert with_a != ds.DirectoryPartitioning(schema)
    assert with_a == ds.DirectoryPartitioning(schema, dictionaries={"k": pa.array(["a"])})
    assert with_a != ds.DirectoryPartitioning(schema, dictionaries={"k": pa.array(["b"])})


@pytest.mark.parametrize("abstract", ["FileFormat", "Dataset"])
def test_abstract_classes_are_not_made(abstract):
    with pytest.raises(TypeError):
        getattr(pads, abstract)()
    with pytest.raises(TypeError):
        getattr(ds, abstract)()


def test_filter_none_is_a_type_error():
    with pytest.raises(TypeError, match="must not be None"):
        pads.dataset(pa.table({"a": [1]})).filter(None)
    with pytest.raises(TypeError, match="Argument 'expression' must not be None"):
        ds.dataset(pa.table({"a": [1]})).filter(None)


def test_the_old_name_of_get_partition_keys_is_kept():
    assert ds._get_partition_keys(ds.field("a") == 1) == pads._get_partition_keys(
        pads.field("a") == 1) == {"a": 1}


def test_a_fragments_repr_shows_its_partition_as_pyarrow(tmp_path):
    path = str(tmp_path / "shown")
    pads.write_dataset(pa.table({"a": [1, 2], "y": [2025, None], "c": ["D E", "F"]}), path,
                       format="ipc", partitioning=["y", "c"], partitioning_flavor="hive")
    for kwargs in ({"partitioning": "hive"}, {}):
        shown = [sorted(repr(f).split(" ", 1)[1] for f in
                        m.dataset(path, format="ipc", **kwargs).get_fragments())
                 for m in (ds, pads)]
        assert shown[0] == shown[1]


# -- isin with a value set of strings on a number, date or timestamp column (and partition) -----

@pytest.fixture
def typed(tmp_path):
    import datetime
    path = str(tmp_path / "t")
    t = pa.table({"n": pa.array([1, 7, 7, None], pa.int32()),
                  "ts": pa.array([datetime.datetime(2026, 1, d) for d in (1, 2, 3, 4)],
                                 pa.timestamp("s")),
                  "d": pa.array([datetime.date(2026, 1, d) for d in (1, 2, 3, 4)]),
                  "year": pa.array([2020, 2021, 2020, 2021], pa.int32())})
    pads.write_dataset(t, path, format="ipc", partitioning=["year"], partitioning_flavor="hive")
    return path


@pytest.mark.parametrize("column, values", [
    ("n", ["7"]), ("n", ["7", None]), ("n", ["7", "x"]), ("n", ["2.5"]),
    ("ts", ["2026-01-02 00:00:00"]), ("ts", ["2026-01-02T00:00:00Z"]), ("d", ["2026-01-03"]),
    ("year", ["2020"]), ("year", ["2021", None]),
])
def test_isin_casts_a_set_of_strings_to_the_columns_type_as_pyarrow(typed, column, values):
    def run(mod):
        d = mod.dataset(typed, format="ipc", partitioning="hive")
        try:
            t = d.to_table(filter=mod.field(column).isin(values), columns=["n", "d"])
            return sorted(t.to_pylist(), key=str)
        except TypeError as e:          # the message may start with the file's path
            return "TypeError", str(e).split("Array type")[-1]
    assert run(ds) == run(pads)


@pytest.mark.parametrize("values", [[1], [True], [1.0]])
def test_isin_never_casts_a_set_to_strings_as_pyarrow(values):
    import arrowipc
    import arrowipc.compute as ac
    import pyarrow.compute as pc
    with pytest.raises(TypeError) as want:
        pc.is_in(pa.array(["1", "2"]), value_set=pa.array(values))
    with pytest.raises(TypeError) as got:
        ac.is_in(arrowipc.array(["1", "2"]), value_set=arrowipc.array(values))
    assert str(got.value) == str(want.value)
