"""Hostile directory trees: loops, dangling links, files that change between discovery and scan,
partition names that are not what they claim (bad escapes, bytes that are not UTF-8, values
that do not parse, repeated keys). pyarrow.dataset is the oracle on the same tree; where we
differ on purpose, docs/datasets.md says so and the test says which line.
"""
import errno
import os
import re

import pyarrow as pa
import pyarrow.dataset as pds
import pyarrow.feather as pf
import pytest

import arrowipc as A
import arrowipc.dataset as ds
from arrowipc.errors import ArrowInvalid


def _write(root, rel, table=None):
    """An IPC file at root/rel (rel may be bytes, for names that are not UTF-8)."""
    table = table if table is not None else pa.table({"x": [1, 2]})
    root_b = os.fsencode(str(root))
    path = os.path.join(root_b, os.fsencode(rel))
    os.makedirs(os.path.dirname(path), exist_ok=True)
    tmp = os.path.join(root_b, b"_tmp_write.arrow")
    pf.write_feather(table, os.fsdecode(tmp), compression="uncompressed")
    os.rename(tmp, path)
    return os.fsdecode(path)


def _rel(root, files):
    return sorted(os.path.relpath(f, str(root)) for f in files)


def _listed(tmp_path, sub):
    """(ours, pyarrow's) files of the dataset at tmp_path/sub, relative to tmp_path."""
    return (_rel(tmp_path, ds.dataset(str(tmp_path / sub), format="ipc").files),
            _rel(tmp_path, pds.dataset(str(tmp_path / sub), format="ipc").files))


def _rows(table):
    return sorted(table.to_pylist(), key=repr)


# -- symlinks -----------------------------------------------------------------------------------

def test_a_symlink_loop_to_the_root_is_walked_once(tmp_path):
    # pyarrow lists a.arrow again under loop/, loop/loop/, ... until the system's symlink limit;
    # we list it once (docs/datasets.md, "Every difference")
    _write(tmp_path, "a.arrow")
    os.symlink(str(tmp_path), str(tmp_path / "loop"))
    got = ds.dataset(str(tmp_path), format="ipc")
    assert _rel(tmp_path, got.files) == ["a.arrow"]
    assert got.to_table().column("x").to_pylist() == [1, 2]
    assert len(pds.dataset(str(tmp_path), format="ipc").files) > 1


def test_a_symlink_loop_below_the_root_is_walked_once(tmp_path):
    _write(tmp_path, "sub/b.arrow")
    os.symlink(str(tmp_path / "sub"), str(tmp_path / "sub" / "self"))
    got = ds.dataset(str(tmp_path), format="ipc")
    assert _rel(tmp_path, got.files) == ["sub/b.arrow"]


def test_a_symlink_to_another_directory_is_followed_as_by_pyarrow(tmp_path):
    _write(tmp_path, "data/a.arrow")
    _write(tmp_path, "other/b.arrow")
    os.symlink(str(tmp_path / "other"), str(tmp_path / "data" / "linked"))
    got, want = _listed(tmp_path, "data")
    assert got == want == ["data/a.arrow", "data/linked/b.arrow"]


def test_two_links_to_one_directory_are_both_listed_as_by_pyarrow(tmp_path):
    # not a loop: the same directory reached by two paths is read under both, as pyarrow does
    _write(tmp_path, "shared/a.arrow")
    os.makedirs(str(tmp_path / "data"))
    os.symlink(str(tmp_path / "shared"), str(tmp_path / "data" / "one"))
    os.symlink(str(tmp_path / "shared"), str(tmp_path / "data" / "two"))
    got, want = _listed(tmp_path, "data")
    assert got == want == ["data/one/a.arrow", "data/two/a.arrow"]


def test_a_dangling_symlink_is_passed_over_as_by_pyarrow(tmp_path):
    _write(tmp_path, "a.arrow")
    os.symlink(str(tmp_path / "gone.arrow"), str(tmp_path / "dangling.arrow"))
    got = ds.dataset(str(tmp_path), format="ipc").files
    assert _rel(tmp_path, got) == _rel(tmp_path, pds.dataset(str(tmp_path), format="ipc").files) \
        == ["a.arrow"]


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads a directory without read permission")
def test_a_directory_without_read_permission_is_an_error_naming_it(tmp_path):
    _write(tmp_path, "a.arrow")
    locked = tmp_path / "locked"
    _write(tmp_path, "locked/b.arrow")
    locked.chmod(0)
    try:
        with pytest.raises(PermissionError, match=re.escape(str(locked))):
            ds.dataset(str(tmp_path), format="ipc")
        with pytest.raises(OSError):
            pds.dataset(str(tmp_path), format="ipc")
    finally:
        locked.chmod(0o755)


def test_a_tree_deeper_than_the_path_limit_is_an_os_error_naming_the_path(tmp_path):
    # twenty 250-byte partition names: the full path passes the system's 4096; pyarrow fails too
    _write(tmp_path, "a.arrow")
    fd = os.open(str(tmp_path), os.O_RDONLY)
    try:
        for i in range(20):
            name = f"k{i}=" + "v" * 240
            os.mkdir(name, dir_fd=fd)
            deeper = os.open(name, os.O_RDONLY, dir_fd=fd)
            os.close(fd)
            fd = deeper
    finally:
        os.close(fd)
    with pytest.raises(OSError, match=re.escape(str(tmp_path / ("k0=" + "v" * 240)))) as e:
        ds.dataset(str(tmp_path), format="ipc", partitioning="hive")
    assert e.value.errno == 36
    with pytest.raises(OSError, match="File name too long"):
        pds.dataset(str(tmp_path), format="ipc", partitioning="hive")


def test_a_source_path_the_system_refuses_is_its_error_not_a_missing_file(tmp_path):
    too_long = str(tmp_path / ("x" * 300))
    with pytest.raises(OSError) as theirs:
        pds.dataset(too_long, format="ipc")
    with pytest.raises(OSError, match=re.escape(too_long) + ": File name too long") as ours:
        ds.dataset(too_long, format="ipc")
    assert ours.value.errno == theirs.value.errno == errno.ENAMETOOLONG
    assert not isinstance(ours.value, FileNotFoundError)
    with pytest.raises(FileNotFoundError, match="no such file or directory"):
        ds.dataset(str(tmp_path / "absent"), format="ipc")


# -- files that change between discovery and scan -------------------------------------------------

@pytest.mark.parametrize("exclude", [False, True])
def test_a_file_deleted_after_discovery_is_an_error_naming_it(tmp_path, exclude):
    # exclude_invalid_files checks at discovery only: pyarrow raises here too
    _write(tmp_path, "a.arrow")
    gone = _write(tmp_path, "b.arrow")
    got = ds.dataset(str(tmp_path), format="ipc", exclude_invalid_files=exclude)
    want = pds.dataset(str(tmp_path), format="ipc", exclude_invalid_files=exclude)
    os.remove(gone)
    with pytest.raises(FileNotFoundError, match=re.escape(gone)):
        got.to_table()
    with pytest.raises(FileNotFoundError):
        want.to_table()


@pytest.mark.parametrize("exclude", [False, True])
@pytest.mark.parametrize("keep,message", [
    (100, r"expected the magic at the end \(byte 94\), found .*; the file may be truncated"),
    (0, r"0 bytes is too small for an Arrow IPC file")])
def test_a_file_cut_after_discovery_is_an_error_naming_it(tmp_path, exclude, keep, message):
    _write(tmp_path, "a.arrow")
    cut = _write(tmp_path, "b.arrow")
    got = ds.dataset(str(tmp_path), format="ipc", exclude_invalid_files=exclude)
    want = pds.dataset(str(tmp_path), format="ipc", exclude_invalid_files=exclude)
    with open(cut, "r+b") as f:
        f.truncate(keep)
    with pytest.raises(ArrowInvalid, match=f"^{re.escape(cut)}: file: {message}"):
        got.to_table()
    with pytest.raises(pa.ArrowInvalid):
        want.to_table()


def test_a_file_replaced_with_the_same_size_and_mtime_reads_its_new_content(tmp_path):
    # the footer and statistics kept from the first scan are keyed by (size, mtime): a file
    # rewritten under the same key must still not give the old rows or prune by the old values
    path = _write(tmp_path, "f.arrow", pa.table({"x": [1, 2]}))
    before = os.stat(path)
    got = ds.dataset(str(tmp_path), format="ipc")
    want = pds.dataset(str(tmp_path), format="ipc")
    assert got.to_table(filter=ds.field("x") > 1).to_pylist() == [{"x": 2}]
    new = _write(tmp_path, "new.arrow", pa.table({"x": [3, 4]}))
    assert os.path.getsize(new) == before.st_size
    os.replace(new, path)
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert got.to_table().to_pylist() == want.to_table().to_pylist() == [{"x": 3}, {"x": 4}]
    assert got.count_rows(filter=ds.field("x") > 2) == \
        want.count_rows(filter=pds.field("x") > 2) == 2


# -- partition names ---------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["a=%zz", "a=%", "a=%4", "a=x%2Fy", "a=%00", "a=",
                                  "a=" + "v" * 250])
def test_odd_hive_segments_read_as_pyarrow_reads_them(tmp_path, name):
    # an escape that is not %XX with two hex digits is kept as written
    _write(tmp_path, name + "/f.arrow")
    got = ds.dataset(str(tmp_path), format="ipc", partitioning="hive").to_table()
    want = pds.dataset(str(tmp_path), format="ipc", partitioning="hive").to_table()
    assert [str(t) for t in got.schema.types] == [str(t) for t in want.schema.types]
    assert _rows(got) == _rows(want)


@pytest.mark.parametrize("name,value", [("a=%FF", "\xff"), ("a=%C3", "\xc3"),
                                        ("a=%E2%82", "\xe2\x82")])
def test_escapes_not_spelling_utf8_read_as_spark_reads_them(tmp_path, name, value):
    # pyarrow refuses them ("not valid UTF-8 after URL decoding"); we read each escape as the
    # character of its code, as Spark's unescapePathName (docs/datasets.md, "Every difference")
    _write(tmp_path, name + "/f.arrow")
    got = ds.dataset(str(tmp_path), format="ipc", partitioning="hive").to_table()
    assert got.column("a").to_pylist() == [value, value]
    with pytest.raises(pa.ArrowInvalid, match="not valid UTF-8"):
        pds.dataset(str(tmp_path), format="ipc", partitioning="hive").to_table()


@pytest.mark.parametrize("schema", [None, A.schema([("a", A.string())]),
                                    A.schema([("a", A.int32())])],
                         ids=["discovered", "string", "int32"])
def test_a_partition_value_that_is_not_utf8_is_an_error_naming_the_directory(tmp_path, schema):
    _write(tmp_path, b"a=\xff\xfe/f.arrow")
    part = "hive" if schema is None else ds.partitioning(schema, flavor="hive")
    with pytest.raises(ArrowInvalid, match=r"directory '.*a=\\xff\\xfe': expected a partition "
                                           r"segment of UTF-8 text, found '\\xff\\xfe'"):
        ds.dataset(str(tmp_path), format="ipc", partitioning=part).to_table()
    with pytest.raises(pa.ArrowInvalid, match="not valid UTF-8"):
        pds.dataset(str(tmp_path), format="ipc", partitioning="hive").to_table()


def test_a_partition_name_that_is_not_utf8_is_an_error_naming_the_directory(tmp_path):
    _write(tmp_path, b"k\xff=1/f.arrow")
    with pytest.raises(ArrowInvalid, match=r"directory 'k\\xff=1': expected a partition "
                                           r"segment of UTF-8 text, found 'k\\xff'"):
        ds.dataset(str(tmp_path), format="ipc", partitioning="hive")


def test_a_directory_partition_that_is_not_utf8_is_an_error_naming_the_directory(tmp_path):
    _write(tmp_path, b"\xe9t\xe9/f.arrow")
    part = ds.partitioning(A.schema([("season", A.string())]))
    with pytest.raises(ArrowInvalid, match=r"directory '.*\\xe9t\\xe9': expected a partition "
                                           r"segment of UTF-8 text, found '\\xe9t\\xe9'"):
        ds.dataset(str(tmp_path), format="ipc", partitioning=part).to_table()


def test_a_file_name_that_is_not_utf8_is_read_without_partitioning(tmp_path):
    # only partition values must be text; pyarrow fails listing such a file (UnicodeDecodeError)
    path = _write(tmp_path, b"f\xff.arrow")
    got = ds.dataset(str(tmp_path), format="ipc")
    assert got.files == [path]
    assert got.to_table().column("x").to_pylist() == [1, 2]


@pytest.mark.parametrize("pa_type,type_,text", [
    (pa.int32(), A.int32(), "x"), (pa.int8(), A.int8(), "300"),
    (pa.date32(), A.date32(), "2020-13-01"), (pa.bool_(), A.bool_(), "maybe"),
    (pa.timestamp("s"), A.timestamp("s"), "nope")])
def test_a_value_that_does_not_parse_is_an_error_naming_the_directory(tmp_path, pa_type, type_,
                                                                      text):
    _write(tmp_path, f"a={text}/f.arrow")
    part = ds.partitioning(A.schema([("a", type_)]), flavor="hive")
    directory = str(tmp_path / f"a={text}")
    with pytest.raises(ArrowInvalid, match=re.escape(
            f"error parsing '{text}' as scalar of type {type_} for partition field 'a' of "
            f"directory '{directory}'")):
        ds.dataset(str(tmp_path), format="ipc", partitioning=part).to_table()
    with pytest.raises(pa.ArrowInvalid, match=re.escape(f"error parsing '{text}'")):
        pds.dataset(str(tmp_path), format="ipc", partitioning=pds.partitioning(
            pa.schema([("a", pa_type)]), flavor="hive")).to_table()


@pytest.mark.parametrize("pa_type,type_", [(pa.int32(), A.int32()), (pa.date32(), A.date32()),
                                           (pa.bool_(), A.bool_()), (pa.float64(), A.float64()),
                                           (pa.timestamp("s"), A.timestamp("s"))])
def test_the_hive_default_partition_is_null_for_every_type_as_in_pyarrow(tmp_path, pa_type,
                                                                         type_):
    _write(tmp_path, "a=__HIVE_DEFAULT_PARTITION__/f.arrow")
    got = ds.dataset(str(tmp_path), format="ipc",
                     partitioning=ds.partitioning(A.schema([("a", type_)]), flavor="hive"))
    want = pds.dataset(str(tmp_path), format="ipc",
                       partitioning=pds.partitioning(pa.schema([("a", pa_type)]), flavor="hive"))
    assert got.to_table().column("a").to_pylist() == want.to_table().column("a").to_pylist() \
        == [None, None]


@pytest.mark.parametrize("name", ["=", "=1"])
def test_a_segment_without_a_key_is_not_a_partition(tmp_path, name):
    # pyarrow makes a field named "" of it; we pass it over, as Spark does (docs/datasets.md)
    _write(tmp_path, name + "/f.arrow")
    got = ds.dataset(str(tmp_path), format="ipc", partitioning="hive")
    assert got.schema.names == ["x"]
    assert pds.dataset(str(tmp_path), format="ipc", partitioning="hive").schema.names == ["x", ""]


def test_a_key_repeated_deeper_takes_the_first_value_as_in_pyarrow(tmp_path):
    _write(tmp_path, "a=1/a=2/f.arrow")
    got = ds.dataset(str(tmp_path), format="ipc", partitioning="hive")
    want = pds.dataset(str(tmp_path), format="ipc", partitioning="hive")
    assert got.to_table().column("a").to_pylist() == \
        want.to_table().column("a").to_pylist() == [1, 1]
    assert got.to_table(filter=ds.field("a") == 1).num_rows == \
        want.to_table(filter=pds.field("a") == 1).num_rows == 2


def test_a_key_repeated_deeper_takes_the_first_value_with_a_schema(tmp_path):
    _write(tmp_path, "a=x/a=y/f.arrow")
    got = ds.dataset(str(tmp_path), format="ipc",
                     partitioning=ds.partitioning(A.schema([("a", A.string())]), flavor="hive"))
    want = pds.dataset(str(tmp_path), format="ipc",
                       partitioning=pds.partitioning(pa.schema([("a", pa.string())]),
                                                     flavor="hive"))
    assert got.to_table().column("a").to_pylist() == \
        want.to_table().column("a").to_pylist() == ["x", "x"]


def test_a_file_named_like_a_partition_is_a_file_as_in_pyarrow(tmp_path):
    _write(tmp_path, "a=1/b=2")
    _write(tmp_path, "a=1.arrow")
    got = ds.dataset(str(tmp_path), format="ipc", partitioning="hive")
    want = pds.dataset(str(tmp_path), format="ipc", partitioning="hive")
    assert _rel(tmp_path, got.files) == _rel(tmp_path, want.files) == ["a=1.arrow", "a=1/b=2"]
    assert got.schema.names == want.schema.names == ["x", "a"]
    assert _rows(got.to_table()) == _rows(want.to_table())


# -- a partition key that is also a column of the files -------------------------------------------

@pytest.mark.parametrize("directory,column,types", [
    ("x=5", pa.array([1, 2], pa.int64()), "int64 vs int32"),
    ("x=abc", pa.array([1, 2], pa.int64()), "int64 vs string")])
def test_a_partition_key_of_another_type_than_the_column_is_refused_as_by_pyarrow(
        tmp_path, directory, column, types):
    # the partition's values would replace the file's: pyarrow refuses the pair of types
    path = _write(tmp_path, directory + "/f.arrow", pa.table({"x": column}))
    message = f"Unable to merge: Field x has incompatible types: {types}"
    with pytest.raises(A.ArrowTypeError, match="^" + re.escape(f"{path}: {message}") + "$"):
        ds.dataset(str(tmp_path), format="ipc", partitioning="hive")
    with pytest.raises(pa.ArrowTypeError, match=re.escape(message)):
        pds.dataset(str(tmp_path), format="ipc", partitioning="hive")


@pytest.mark.parametrize("column", [pa.array([1, 2], pa.int32()), pa.nulls(2)])
def test_a_partition_key_of_the_columns_type_gives_its_values_as_in_pyarrow(tmp_path, column):
    # equal types, or a null column: the partition's value, the merged type
    _write(tmp_path, "x=5/f.arrow", pa.table({"x": column}))
    got = ds.dataset(str(tmp_path), format="ipc", partitioning="hive")
    want = pds.dataset(str(tmp_path), format="ipc", partitioning="hive")
    assert str(got.schema) == str(want.schema) == "x: int32"
    assert got.to_table().to_pylist() == want.to_table().to_pylist() == [{"x": 5}, {"x": 5}]


@pytest.mark.parametrize("flavor", ["directory", "filename"])
def test_a_discovered_field_no_path_gives_is_refused_as_by_pyarrow(tmp_path, flavor):
    # a file at the root: no directory (nor file name prefix) gives field 'a' a value
    _write(tmp_path, "f.arrow")
    mine = (ds.DirectoryPartitioning if flavor == "directory" else ds.FilenamePartitioning)
    theirs = (pds.DirectoryPartitioning if flavor == "directory" else pds.FilenamePartitioning)
    message = "No non-null segments were available for field 'a'; couldn't infer type"
    with pytest.raises(ArrowInvalid, match=re.escape(message)):
        ds.dataset(str(tmp_path), format="ipc", partitioning=mine.discover(["a"]))
    with pytest.raises(pa.ArrowInvalid, match=re.escape(message)):
        pds.dataset(str(tmp_path), format="ipc", partitioning=theirs.discover(["a"]))


def test_a_discovered_field_with_a_value_somewhere_is_null_elsewhere_as_in_pyarrow(tmp_path):
    _write(tmp_path, "f.arrow")
    _write(tmp_path, "2020/g.arrow")
    got = ds.dataset(str(tmp_path), format="ipc",
                     partitioning=ds.DirectoryPartitioning.discover(["a"]))
    want = pds.dataset(str(tmp_path), format="ipc",
                       partitioning=pds.DirectoryPartitioning.discover(["a"]))
    assert str(got.schema) == str(want.schema)
    assert _rows(got.to_table()) == _rows(want.to_table())
