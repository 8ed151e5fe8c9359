"""Defects the ETL scripts (tests/etl) found, each pinned against pyarrow's behaviour."""
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
