"""write_dataset writes what pyarrow.dataset reads, with pyarrow's options and errors."""
import os

import numpy as np
import pyarrow as pa
import pyarrow.dataset as pds
import pyarrow.ipc as pipc
import pytest

import arrowipc as A
import arrowipc.dataset as ds
from arrowipc.dataset import field
from arrowipc.errors import ArrowInvalid
from arrowipc.ipc.statistics import FILE_KEY


def _files(root):
    out = []
    for d, _, names in os.walk(root):
        out += [os.path.relpath(os.path.join(d, n), root) for n in names]
    return sorted(out)


@pytest.fixture
def table():
    n = 100
    return A.table({"k": [i % 3 for i in range(n)], "c": ["x" if i < 50 else "y" for i in range(n)],
                    "v": list(range(n)), "s": [f"s{i}" for i in range(n)]})


def test_an_unpartitioned_write_is_part_0_and_reads_back_in_pyarrow(tmp_path, table):
    ds.write_dataset(table, str(tmp_path / "o"))
    assert _files(tmp_path / "o") == ["part-0.arrow"]
    assert pds.dataset(str(tmp_path / "o"), format="ipc").to_table().equals(table.to_pyarrow())
    ds.write_dataset(table, str(tmp_path / "f"), format="feather")
    assert _files(tmp_path / "f") == ["part-0.feather"]


@pytest.mark.parametrize("flavor", [None, "hive"])
def test_partitioned_writes_match_pyarrows_layout_and_values(tmp_path, table, flavor):
    ds.write_dataset(table, str(tmp_path / "ours"), partitioning=["k", "c"],
                     partitioning_flavor=flavor)
    pds.write_dataset(table.to_pyarrow(), str(tmp_path / "theirs"), format="ipc",
                      partitioning=["k", "c"], partitioning_flavor=flavor)
    assert _files(tmp_path / "ours") == _files(tmp_path / "theirs")
    part = "hive" if flavor else ["k", "c"]
    read = pds.dataset(str(tmp_path / "ours"), format="ipc", partitioning=part).to_table()
    expected = pds.dataset(str(tmp_path / "theirs"), format="ipc", partitioning=part).to_table()
    assert read.sort_by("v").equals(expected.sort_by("v"))
    # partition columns are not stored in the files
    one = os.path.join(tmp_path / "ours", _files(tmp_path / "ours")[0])
    assert pipc.open_file(one).schema.names == ["v", "s"]


def test_null_empty_and_escaped_values_follow_the_layout(tmp_path):
    t = A.table({"k": ["a/b:c", None, "", "x y+z", "é"], "v": [1, 2, 3, 4, 5]})
    ds.write_dataset(t, str(tmp_path / "o"), partitioning=["k"], partitioning_flavor="hive")
    assert _files(tmp_path / "o") == [
        "k=__HIVE_DEFAULT_PARTITION__/part-0.arrow", "k=a%2Fb%3Ac/part-0.arrow",
        "k=x y+z/part-0.arrow", "k=é/part-0.arrow"]
    ours = ds.dataset(str(tmp_path / "o"), partitioning="hive").to_table()
    theirs = pds.dataset(str(tmp_path / "o"), format="ipc", partitioning="hive").to_table()
    assert sorted(ours.to_pylist(), key=lambda r: r["v"]) == [
        {"v": 1, "k": "a/b:c"}, {"v": 2, "k": None}, {"v": 3, "k": None},
        {"v": 4, "k": "x y+z"}, {"v": 5, "k": "é"}]
    assert ours.to_pylist() == theirs.to_pylist()


def test_hive_null_fallback_and_directory_nulls_as_pyarrow(tmp_path):
    t = A.table({"a": ["x", None, "z"], "b": ["x", "y", None]})
    part = ds.HivePartitioning(A.schema([("a", A.string()), ("b", A.string())]), None, "xyz")
    ds.write_dataset(t, str(tmp_path / "h"), partitioning=part)
    assert _files(tmp_path / "h") == ["a=x/b=x/part-0.arrow", "a=xyz/b=y/part-0.arrow",
                                      "a=z/b=xyz/part-0.arrow"]
    t2 = A.table({"a": ["x", "y", "z"], "b": ["x", "y", None]})
    ds.write_dataset(t2, str(tmp_path / "d"), partitioning=ds.partitioning(
        A.schema([("a", A.string()), ("b", A.string())])))
    assert _files(tmp_path / "d") == ["x/x/part-0.arrow", "y/y/part-0.arrow", "z/part-0.arrow"]
    with pytest.raises(ArrowInvalid, match="No partition key for a but a key was provided "
                                           "subsequently for b"):
        ds.write_dataset(A.table({"a": [None], "b": ["x"]}), str(tmp_path / "bad"),
                         partitioning=ds.partitioning(A.schema([("a", A.string()),
                                                                ("b", A.string())])))


def test_files_carry_statistics_so_reads_prune(tmp_path, table):
    ds.write_dataset(table, str(tmp_path / "o"), max_rows_per_group=10)
    ours = A.ipc.open_file(str(tmp_path / "o" / "part-0.arrow"))
    assert FILE_KEY in {k.decode() if isinstance(k, bytes) else k for k in ours.metadata}
    assert ours.num_record_batches == 10
    no_stats = ds.IpcFileFormat().make_write_options(statistics=False)
    ds.write_dataset(table, str(tmp_path / "n"), file_options=no_stats)
    plain = A.ipc.open_file(str(tmp_path / "n" / "part-0.arrow"))
    assert not plain.metadata or FILE_KEY not in {
        k.decode() if isinstance(k, bytes) else k for k in plain.metadata}


def test_schema_metadata_is_written(tmp_path):
    t = A.table({"a": [1, 2, 3]}).replace_schema_metadata({b"key": b"value"})
    ds.write_dataset(t, str(tmp_path / "o"))
    back = pipc.open_file(str(tmp_path / "o" / "part-0.arrow")).schema
    assert back.metadata[b"key"] == b"value"


def test_rows_per_file_and_per_group_as_pyarrow(tmp_path, table):
    opts = dict(max_rows_per_file=30, max_rows_per_group=10, min_rows_per_group=5)
    ds.write_dataset(table, str(tmp_path / "ours"), **opts)
    pds.write_dataset(table.to_pyarrow(), str(tmp_path / "theirs"), format="ipc", **opts)
    assert _files(tmp_path / "ours") == _files(tmp_path / "theirs")
    for name in _files(tmp_path / "ours"):
        a = pipc.open_file(os.path.join(tmp_path / "ours", name))
        b = pipc.open_file(os.path.join(tmp_path / "theirs", name))
        assert a.num_record_batches == b.num_record_batches
        assert a.read_all().equals(b.read_all())


def test_min_rows_per_group_gathers_small_batches(tmp_path):
    batches = [A.record_batch({"a": [i, i]}) for i in range(10)]
    ds.write_dataset(batches, str(tmp_path / "o"), min_rows_per_group=8)
    reader = pipc.open_file(str(tmp_path / "o" / "part-0.arrow"))
    assert [reader.get_batch(i).num_rows for i in range(reader.num_record_batches)] == [8, 8, 4]


def _group_sizes(directory):
    sizes = {}
    for name in _files(directory):
        with pipc.open_file(os.path.join(directory, name)) as reader:
            sizes[name] = [reader.get_batch(i).num_rows
                           for i in range(reader.num_record_batches)]
    return sizes


@pytest.mark.parametrize("lengths, opts", [
    # a group's tail under the minimum waits for the next batch (8, 7, 8, 6, 8, 8), not 8, 2...
    ([5, 5, 5, 5, 5, 4, 4, 4, 4, 4], dict(min_rows_per_group=6, max_rows_per_group=8)),
    ([3, 3, 3, 0, 3], dict(min_rows_per_group=4, max_rows_per_group=5, max_rows_per_file=7)),
    ([5, 5, 5], dict(min_rows_per_group=4, max_rows_per_group=5, partitioning=["b"])),
    ([1, 1, 1, 1], dict(min_rows_per_group=10, max_rows_per_group=20)),
    ([7, 0, 7], dict(max_rows_per_group=3)),
])
def test_record_batches_per_file_as_pyarrow_groups_them(tmp_path, lengths, opts):
    batches = [pa.record_batch({"a": pa.array(range(n), pa.int64()),
                                "b": pa.array([i % 2 for i in range(n)], pa.int64())})
               for n in lengths]
    ds.write_dataset(batches, str(tmp_path / "ours"), use_threads=False, **opts)
    pds.write_dataset(batches, str(tmp_path / "theirs"), format="ipc", use_threads=False, **opts)
    assert _group_sizes(tmp_path / "ours") == _group_sizes(tmp_path / "theirs")
    assert (pds.dataset(str(tmp_path / "ours"), format="ipc").to_table()
            .equals(pds.dataset(str(tmp_path / "theirs"), format="ipc").to_table()))


def test_basename_template_and_file_visitor(tmp_path, table):
    seen = []
    ds.write_dataset(table, str(tmp_path / "o"), basename_template="dat_{i}.arrow",
                     partitioning=["c"], file_visitor=seen.append)
    assert _files(tmp_path / "o") == ["x/dat_0.arrow", "y/dat_0.arrow"]
    assert sorted(os.path.relpath(w.path, tmp_path / "o") for w in seen) == _files(tmp_path / "o")
    assert all(w.size == os.path.getsize(w.path) for w in seen)
    with pytest.raises(ValueError, match="basename_template did not contain '{i}'"):
        ds.write_dataset(table, str(tmp_path / "p"), basename_template="dat.arrow")


def test_existing_data_behaviors(tmp_path, table):
    root = str(tmp_path / "o")
    ds.write_dataset(table, root, partitioning=["c"])
    with pytest.raises(ArrowInvalid, match="Could not write to .* as the directory is not empty "
                                           "and existing_data_behavior is to error"):
        ds.write_dataset(table, root, partitioning=["c"])
    extra = os.path.join(root, "x", "old.arrow")
    os.rename(os.path.join(root, "x", "part-0.arrow"), extra)
    ds.write_dataset(table, root, partitioning=["c"], existing_data_behavior="overwrite_or_ignore")
    assert _files(root) == ["x/old.arrow", "x/part-0.arrow", "y/part-0.arrow"]
    ds.write_dataset(table.slice(0, 10), root, partitioning=["c"],
                     existing_data_behavior="delete_matching")
    assert _files(root) == ["x/part-0.arrow", "y/part-0.arrow"]   # y untouched
    with pytest.raises(ValueError, match="existing_data_behavior must be one of"):
        ds.write_dataset(table, root, existing_data_behavior="nope")


def test_the_stream_format_writes_arrows_files(tmp_path, table):
    ds.write_dataset(table, str(tmp_path / "o"), format="stream", max_rows_per_file=60,
                     max_rows_per_group=60)
    assert _files(tmp_path / "o") == ["part-0.arrows", "part-1.arrows"]
    with pipc.open_stream(str(tmp_path / "o" / "part-0.arrows")) as r:
        assert r.read_all().num_rows == 60
    assert ds.dataset(str(tmp_path / "o")).to_table().equals(table)


def test_compression_through_file_options(tmp_path, table):
    fmt = ds.IpcFileFormat()
    ds.write_dataset(table, str(tmp_path / "o"), format=fmt,
                     file_options=fmt.make_write_options(compression="lz4"))
    assert pds.dataset(str(tmp_path / "o"), format="ipc").to_table().equals(table.to_pyarrow())
    with pytest.raises(ValueError, match="Compression type"):
        fmt.make_write_options(compression="brotli")


def test_inputs_of_every_kind(tmp_path, table):
    batches = table.to_batches()
    sources = {
        "table": table, "batch": batches[0], "batches": batches, "tables": [table, table],
        "reader": A.RecordBatchReader.from_batches(table.schema, batches),
        "pyarrow": table.to_pyarrow(),                   # __arrow_c_stream__
        "dataset": ds.dataset(table),
    }
    for name, source in sources.items():
        root = str(tmp_path / name)
        ds.write_dataset(source, root)
        got = ds.dataset(root).to_table()
        expected = {"batch": batches[0].num_rows, "tables": 200}.get(name, 100)
        assert got.num_rows == expected, name


def test_a_dataset_is_rewritten_with_a_filter(tmp_path, table):
    ds.write_dataset(table, str(tmp_path / "a"), partitioning=["k"], partitioning_flavor="hive")
    source = ds.dataset(str(tmp_path / "a"), partitioning="hive")
    ds.write_dataset(source.scanner(filter=field("v") < 10), str(tmp_path / "b"),
                     partitioning=["k"], partitioning_flavor="hive")
    back = ds.dataset(str(tmp_path / "b"), partitioning="hive").to_table()
    assert sorted(back.column("v").to_pylist()) == list(range(10))


def test_a_failed_write_leaves_no_file_under_a_final_name(tmp_path, table):
    def batches():
        yield from table.to_batches()
        raise RuntimeError("the source failed")

    reader = A.RecordBatchReader.from_batches(table.schema, batches())
    with pytest.raises(RuntimeError, match="the source failed"):
        ds.write_dataset(reader, str(tmp_path / "o"), partitioning=["c"])
    assert _files(tmp_path / "o") == []      # neither final names nor temporary files


def test_max_partitions(tmp_path):
    t = A.table({"k": list(range(5)), "v": list(range(5))})
    with pytest.raises(ArrowInvalid, match="Fragment would be written into 5 partitions. This "
                                           "exceeds the maximum of 3"):
        ds.write_dataset(t, str(tmp_path / "o"), partitioning=["k"], max_partitions=3)


def test_max_open_files_closes_files_and_opens_new_ones(tmp_path):
    t = A.table({"k": [0, 1, 2, 0, 1, 2], "v": list(range(6))})
    ds.write_dataset([t.slice(0, 3), t.slice(3)], str(tmp_path / "o"), partitioning=["k"],
                     max_open_files=2)
    back = ds.dataset(str(tmp_path / "o"), partitioning=["k"]).to_table()
    assert sorted(back.column("v").to_pylist()) == list(range(6))


def test_arguments_after_base_dir_are_keywords(tmp_path, table):
    with pytest.raises(TypeError):
        ds.write_dataset(table, str(tmp_path), "basename-{i}.arrow")


def test_write_is_read_by_pyarrow_with_large_data(tmp_path):
    n = 50_000
    t = A.table({"d": np.repeat(np.arange(5), n // 5), "x": np.arange(n)})
    ds.write_dataset(t, str(tmp_path / "o"), partitioning=["d"], partitioning_flavor="hive",
                     max_rows_per_group=4096)
    theirs = pds.dataset(str(tmp_path / "o"), format="ipc", partitioning="hive")
    assert theirs.count_rows() == n
    assert theirs.to_table(filter=pds.field("d") == 3).num_rows == n // 5


@pytest.mark.parametrize("width", [3, 12, 40])
def test_rows_are_grouped_by_their_values_whatever_their_width(width):
    from arrowipc.dataset.writer import _group_rows
    rng = np.random.default_rng(width)
    words = ["", "a", "a\x00", "ab", "b" * width, "é" * (width // 2), None, "x" * (width - 1)]
    picks = [words[i] for i in rng.integers(0, len(words), 500)]
    runs = sorted(picks, key=lambda v: (v is None, v or ""))        # long runs: the run path
    for values in (picks, runs):
        batch = A.record_batch({"k": A.array(values, A.string()), "i": list(range(500))})
        groups = _group_rows(batch, ["k"])
        expected = {}
        for i, v in enumerate(values):
            expected.setdefault(v, []).append(i)
        assert [g[0][0] for g in groups] == list(expected)          # first appearance order
        assert [list(g[1]) for g in groups] == list(expected.values())


def test_a_partition_column_missing_from_the_data_is_a_key_error(tmp_path):
    table = A.table({"original_column": list(range(20))})
    scanner = ds.dataset(table).scanner(columns={"renamed_column": field("original_column")})
    ds.write_dataset(scanner, str(tmp_path / "a"), partitioning=["renamed_column"])
    assert len(_files(tmp_path / "a")) == 20
    with pytest.raises(KeyError, match="'Column original_column does not exist in schema"):
        ds.write_dataset(scanner, str(tmp_path / "b"), partitioning=["original_column"])


def test_an_iterable_of_batches_with_a_schema(tmp_path, table):
    ds.write_dataset((b for b in table.to_pyarrow().to_batches()), str(tmp_path / "o"),
                     schema=table.schema, basename_template="dat_{i}.arrow")
    assert ds.dataset(str(tmp_path / "o")).to_table().equals(table)
    with pytest.raises(ValueError, match="needs schema= with an iterable of batches"):
        ds.write_dataset((b for b in table.to_batches()), str(tmp_path / "p"))


_DATA = {
    "table": lambda t: t, "batch": lambda t: t.to_batches()[0], "list": lambda t: t.to_batches(),
    "iterator": lambda t: iter(t.to_batches()),
}
_SCHEMAS = {
    "int32": pa.schema([("i", pa.int32()), ("s", pa.string())]),
    "reordered": pa.schema([("s", pa.string()), ("i", pa.int64())]),
    "fewer": pa.schema([("i", pa.int64())]),
    "metadata": pa.schema([("i", pa.int64()), ("s", pa.string())], metadata={"k": "v"}),
}


@pytest.mark.parametrize("data", sorted(_DATA))
@pytest.mark.parametrize("schema", sorted(_SCHEMAS))
def test_schema_given_to_write_dataset_is_taken_as_pyarrow_takes_it(tmp_path, data, schema):
    # tables and batches must have it (as an InMemoryDataset); an iterator is projected to it
    table = pa.table({"i": pa.array([1, 2], pa.int64()), "s": ["a", "b"]})
    results = []
    for name, write in (("theirs", pds.write_dataset), ("ours", ds.write_dataset)):
        try:
            write(_DATA[data](table), str(tmp_path / name), format="ipc",
                  schema=_SCHEMAS[schema])
        except Exception as e:      # noqa: BLE001 - the class and message are compared
            results.append((isinstance(e, TypeError), type(e).__name__, str(e)))
        else:
            back = pds.dataset(str(tmp_path / name), format="ipc").to_table()
            results.append((back.schema, back.schema.metadata, back.to_pydict()))
    theirs, ours = results
    assert ours == theirs


def test_from_batches_takes_no_schema_with_a_reader_as_pyarrows():
    table = pa.table({"i": [1, 2]})
    for source, what in ((lambda: pa.RecordBatchReader.from_batches(table.schema,
                                                                    table.to_batches()),
                          "a RecordBatchReader"),
                         (lambda: A.table({"i": [1]}), "an object implementing the Arrow "
                                                       "PyCapsule Protocol")):
        for mod in (pds, ds):
            with pytest.raises(ValueError, match=f"^Cannot specify a schema when providing "
                                                 f"{what}$"):
                mod.Scanner.from_batches(source(), schema=table.schema)


@pytest.mark.parametrize("data", sorted(_DATA))
def test_batches_are_written_as_they_come_whatever_checks_the_schema(tmp_path, data):
    table = pa.table({"i": np.arange(200_000)})
    ds.write_dataset(_DATA[data](table), str(tmp_path / "o"), schema=table.schema)
    assert _group_sizes(tmp_path / "o") == {"part-0.arrow": [200_000]}
