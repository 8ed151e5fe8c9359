"""Dataset.sort_by as pyarrow's: keys, orders, null and NaN placement, stability, errors."""
import math
import warnings

import pyarrow as pa
import pyarrow.dataset as pds
import pytest

import arrowipc.dataset as ds
from arrowipc import ArrowInvalid

_TABLE = pa.table({
    "f": [1.0, float("nan"), None, -2.0, 3.0, None, 1.0],
    "s": ["b", "a", None, "b", "a", "c", "b"],
    "i": [3, 1, 2, 2, 1, 3, 3],
    "row": list(range(7)),
})


def _rows(table):
    # NaN != NaN: compare it by name
    return [{k: ("nan" if isinstance(v, float) and math.isnan(v) else v) for k, v in r.items()}
            for r in table.to_pylist()]


@pytest.mark.parametrize("sorting, kwargs", [
    ("f", {}),
    ("s", {}),
    ([("f", "descending")], {}),
    ("f", {"null_placement": "at_start"}),
    ([("f", "descending")], {"null_placement": "at_start"}),
    ([("s", "ascending"), ("i", "descending")], {}),
    ([("f", "descending", "at_start")], {}),
    ([("s", "descending", "at_start"), ("f", "ascending", "at_end")], {}),
    ([("s", "ascending", "at_start"), ("f", "ascending")], {"null_placement": "at_end"}),
    ([("i", "ascending")], {}),
])
def test_sort_by_orders_rows_as_pyarrow(sorting, kwargs):
    ours = ds.dataset(_TABLE).sort_by(sorting, **kwargs)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)     # pyarrow's null_placement keyword
        theirs = pds.dataset(_TABLE).sort_by(sorting, **kwargs).to_table()
    assert isinstance(ours, ds.InMemoryDataset)
    got = ours.to_table().to_pyarrow()
    assert got.schema.equals(theirs.schema)
    assert _rows(got) == _rows(theirs)


def test_sort_by_sorts_the_filtered_rows_of_files(tmp_path):
    ds.write_dataset(pa.Table.from_batches(_TABLE.to_batches(max_chunksize=3)), tmp_path,
                     format="ipc", partitioning=["i"], partitioning_flavor="hive")
    ours = ds.dataset(tmp_path, partitioning="hive").filter(ds.field("row") > 1)
    theirs = pds.dataset(tmp_path, format="ipc", partitioning="hive").filter(
        pds.field("row") > 1)
    got = ours.sort_by([("i", "descending"), ("row", "ascending")]).to_table().to_pyarrow()
    want = theirs.sort_by([("i", "descending"), ("row", "ascending")]).to_table()
    assert _rows(got) == _rows(want)
    assert got.column("row").to_pylist() == [5, 6, 2, 3, 4]


def test_sort_by_of_an_empty_dataset():
    empty = ds.dataset(_TABLE.slice(0, 0)).sort_by("f").to_table()
    assert empty.num_rows == 0 and empty.schema.names == _TABLE.schema.names


def test_sort_by_an_unknown_column():
    with pytest.raises(ArrowInvalid, match=r"Invalid sort key column: No match for "
                                           r"FieldRef.Name\(zz\)"):
        ds.dataset(_TABLE).sort_by("zz")


def test_sort_by_an_unknown_order():
    with pytest.raises(ValueError, match='"up" is not a valid sort order'):
        ds.dataset(_TABLE).sort_by([("f", "up")])


def test_sort_by_an_unknown_null_placement():
    with pytest.raises(ValueError, match='"middle" is not a valid null placement'):
        ds.dataset(_TABLE).sort_by("f", null_placement="middle")
    with pytest.raises(ValueError, match='"middle" is not a valid null placement'):
        ds.dataset(_TABLE).sort_by([("f", "ascending", "middle")])


def test_sort_by_no_keys():
    with pytest.raises(ArrowInvalid, match="`ordering` must be an explicit non-empty ordering"):
        ds.dataset(_TABLE).sort_by([])


def test_sort_by_a_key_that_is_not_a_pair():
    with pytest.raises(ValueError, match=r"a sort key is \(name, order\) or \(name, order, "
                                         r"null_placement\), got \('f',\)"):
        ds.dataset(_TABLE).sort_by([("f",)])


def test_sort_by_takes_only_null_placement():
    with pytest.raises(TypeError, match="unexpected keyword argument 'bogus'"):
        ds.dataset(_TABLE).sort_by("f", bogus=1)


def test_sort_by_a_nested_column_is_not_implemented():
    table = pa.table({"x": [[1], [0]]})
    with pytest.raises(NotImplementedError, match="column 'x' is nested"):
        ds.dataset(table).sort_by("x")
