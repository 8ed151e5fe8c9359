"""Table.join, Table.join_asof and the datasets' joins, with pyarrow as the oracle: every join
type, key types, nulls, suffixes, coalesced keys, filter expressions; one test per error rule.
pyarrow's row order is its hash table's, so rows are compared as sorted lists."""
import numpy as np
import pytest

import arrowipc
from arrowipc import dataset as ds
from arrowipc.errors import ArrowInvalid

pa = pytest.importorskip("pyarrow")
pc = pytest.importorskip("pyarrow.compute")

JOIN_TYPES = ["inner", "left outer", "right outer", "full outer", "left semi", "right semi",
              "left anti", "right anti"]


def rows(table):
    """The rows of a table (ours or pyarrow's) as sorted tuples, by position (names repeat)."""
    t = pa.table(table)
    return sorted((tuple(repr(v) for v in row) for row in zip(*[c.to_pylist()
                                                               for c in t.columns])))


def same_join(expected, got):
    got = pa.table(got)
    assert got.schema.equals(expected.schema), (got.schema, expected.schema)
    assert rows(got) == rows(expected)


LEFT = pa.table({"k": [1, 2, 2, None, 5], "a": ["x", "y", "z", "n", "q"],
                 "v": [1.0, 2.0, 3.0, 4.0, 5.0]})
RIGHT = pa.table({"k": [2, 2, 3, None, 1], "v": [10, 20, 30, 40, 50],
                  "b": [True, False, True, None, False]})


@pytest.mark.parametrize("join_type", JOIN_TYPES)
@pytest.mark.parametrize("coalesce_keys", [True, False])
@pytest.mark.parametrize("suffixes", [(None, None), ("_l", "_r")])
def test_join_types_as_pyarrow(join_type, coalesce_keys, suffixes):
    kw = dict(join_type=join_type, coalesce_keys=coalesce_keys, left_suffix=suffixes[0],
              right_suffix=suffixes[1])
    same_join(LEFT.join(RIGHT, "k", **kw), arrowipc.table(LEFT).join(arrowipc.table(RIGHT),
                                                                      "k", **kw))


@pytest.mark.parametrize("join_type", JOIN_TYPES)
def test_filter_expression_drops_pairs_as_pyarrows(join_type):
    for ours, theirs in [(ds.field("b") == False, pc.field("b") == False),  # noqa: E712
                         (ds.field("a") != "y", pc.field("a") != "y")]:
        expected = LEFT.join(RIGHT, "k", join_type=join_type, filter_expression=theirs)
        got = arrowipc.table(LEFT).join(RIGHT, "k", join_type=join_type,
                                        filter_expression=ours)
        same_join(expected, got)
        # a pyarrow expression is taken as well
        same_join(expected, arrowipc.table(LEFT).join(RIGHT, "k", join_type=join_type,
                                                      filter_expression=theirs))


def _random_side(rng, n, names):
    keys = {
        "i": pa.array(rng.integers(0, 20, n), pa.int64(),
                      mask=rng.random(n) < 0.1),
        "s": pa.array([f"s{x}" * (x % 5) for x in rng.integers(0, 8, n)],
                      mask=rng.random(n) < 0.1),
        "f": pa.array(rng.choice([0.0, -0.0, 1.5, np.nan, 2.0], n)),
        "t": pa.array(rng.integers(0, 5, n).astype("datetime64[ms]")),
        "d": pa.array([f"d{x}" for x in rng.integers(0, 4, n)]).dictionary_encode(),
    }
    cols = {name: keys[name] for name in names}
    cols["payload"] = pa.array(rng.integers(0, 1000, n))
    return pa.table(cols)


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("names", [["i"], ["s"], ["f"], ["t"], ["i", "s"], ["s", "t", "i"],
                                   ["d"]])
def test_random_keys_as_pyarrow(seed, names):
    rng = np.random.default_rng(seed)
    left = _random_side(rng, int(rng.integers(0, 60)), names)
    right = _random_side(rng, int(rng.integers(0, 60)), names)
    for join_type in JOIN_TYPES:
        expected = left.join(right, names, join_type=join_type, right_suffix="_r")
        got = arrowipc.table(left).join(arrowipc.table(right), names, join_type=join_type,
                                        right_suffix="_r")
        same_join(expected, got)


def test_other_key_names_and_several_batches():
    left = pa.Table.from_batches(pa.table({"k": list(range(10)), "x": list(range(10))})
                                 .to_batches(max_chunksize=3))
    right = pa.table({"kk": [9, 3, 3, 11], "k": ["a", "b", "c", "d"]})
    for join_type in JOIN_TYPES:
        expected = left.join(right, "k", "kk", join_type=join_type, left_suffix="_l",
                             right_suffix="_r")
        got = arrowipc.table(left).join(right, ["k"], ["kk"], join_type=join_type,
                                        left_suffix="_l", right_suffix="_r")
        same_join(expected, got)


def test_left_outer_keeps_the_left_order():
    got = arrowipc.table(LEFT).join(arrowipc.table(RIGHT), "k")
    assert got.column("a").to_pylist() == ["x", "y", "y", "z", "z", "n", "q"]
    assert got.schema.names == ["k", "a", "v", "v", "b"]


def test_join_fields_are_nullable_without_metadata():
    schema = pa.schema([pa.field("k", pa.int64(), False, metadata={"m": "1"})],
                       metadata={"a": "b"})
    left = pa.table({"k": [1, 2]}, schema=schema)
    got = arrowipc.table(left).join(left, "k", join_type="inner")
    assert pa.schema(got.schema).equals(left.join(left, "k", join_type="inner").schema,
                                        check_metadata=True)


# -- errors, one test per rule, with pyarrow's builtin and message --------------------------------

def test_a_missing_key_is_arrow_invalid():
    with pytest.raises(ArrowInvalid, match=r"No match or multiple matches for key field "
                       r"reference FieldRef.Name\(zz\) on left side of the join"):
        arrowipc.table(LEFT).join(RIGHT, "zz")
    with pytest.raises(ArrowInvalid, match=r"FieldRef.Name\(zz\) on right side"):
        arrowipc.table(LEFT).join(RIGHT, "k", "zz")


def test_an_unknown_join_type_is_a_value_error():
    with pytest.raises(ValueError, match="Unsupported join type"):
        arrowipc.table(LEFT).join(RIGHT, "k", join_type="bogus")


def test_keys_of_other_types_are_arrow_invalid():
    other = RIGHT.set_column(0, "k", pa.array([1] * 5, pa.int32()))
    with pytest.raises(ArrowInvalid, match=r"Incompatible data types for corresponding join "
                       r"field keys: FieldRef.Name\(k\) of type int64 and FieldRef.Name\(k\) "
                       r"of type int32"):
        arrowipc.table(LEFT).join(other, "k")


def test_unequal_key_counts_are_arrow_invalid():
    with pytest.raises(ArrowInvalid, match="key_cmp and keys must have the same size"):
        arrowipc.table(LEFT).join(RIGHT, ["k", "v"], ["k"])


def test_no_keys_are_arrow_invalid():
    with pytest.raises(ArrowInvalid, match="key_cmp and keys cannot be empty"):
        arrowipc.table(LEFT).join(RIGHT, [])


def test_nested_columns_are_arrow_invalid_as_in_pyarrow():
    nested = RIGHT.append_column("l", pa.array([[1]] * 5))
    with pytest.raises(ArrowInvalid, match=r"Data type list<item: int64> is not supported in "
                       r"join non-key field l"):
        arrowipc.table(LEFT).join(nested, "k")
    with pytest.raises(ArrowInvalid, match="is not supported in join key field"):
        arrowipc.table(nested).join(nested, "l")


def test_filter_expression_names_one_side():
    with pytest.raises(ArrowInvalid, match=r"FieldRefFieldRef.Name\(v\)was found in both left "
                       r"and right schemas"):
        arrowipc.table(LEFT).join(RIGHT, "k", filter_expression=ds.field("v") > 1)
    with pytest.raises(ArrowInvalid, match=r"FieldRefFieldRef.Name\(v_r\)was not found in "
                       r"either left or right schema"):
        arrowipc.table(LEFT).join(RIGHT, "k", right_suffix="_r",
                                  filter_expression=ds.field("v_r") > 1)


# -- as-of joins -----------------------------------------------------------------------------------

ASOF_LEFT = pa.table({"on": [1, 2, 3, 5, 8], "k": ["a", "a", "b", "a", None]})
ASOF_RIGHT = pa.table({"on": [1, 2, 2, 3, 6, 8], "k": ["a", "a", "a", "b", "a", None],
                       "x": [10, 20, 21, 30, 60, 80]})


@pytest.mark.parametrize("tolerance", [-5, -2, -1, 0, 1, 2, 5])
def test_join_asof_as_pyarrow(tolerance):
    expected = ASOF_LEFT.join_asof(ASOF_RIGHT, "on", "k", tolerance)
    got = arrowipc.table(ASOF_LEFT).join_asof(arrowipc.table(ASOF_RIGHT), "on", "k", tolerance)
    assert pa.table(got).equals(expected, check_metadata=True)


@pytest.mark.parametrize("seed", range(8))
def test_random_join_asof_as_pyarrow(seed):
    rng = np.random.default_rng(seed)
    n, m = int(rng.integers(1, 80)), int(rng.integers(1, 80))
    left = pa.table({"t": np.sort(rng.integers(0, 50, n)), "g": rng.integers(0, 3, n),
                     "h": rng.choice(["p", "q"], n)})
    right = pa.table({"t": np.sort(rng.integers(0, 50, m)), "g": rng.integers(0, 3, m),
                      "h": rng.choice(["p", "q"], m), "val": np.arange(m)})
    for tolerance in (-7, -1, 0, 3):
        for by in (["g"], ["g", "h"], []):
            lt, r = left.select(["t"] + by), right.select(["t"] + by + ["val"])
            expected = lt.join_asof(r, "t", by, tolerance)
            got = arrowipc.table(lt).join_asof(arrowipc.table(r), "t", by, tolerance)
            assert pa.table(got).equals(expected), (tolerance, by)


def test_join_asof_timestamps_and_other_names():
    left = pa.table({"when": pa.array([1, 5, 9], pa.timestamp("s")), "k": [1, 1, 2]})
    right = pa.table({"at": pa.array([0, 4, 9], pa.timestamp("s")), "key": [1, 1, 2],
                      "y": ["a", "b", "c"]})
    expected = left.join_asof(right, "when", "k", -2, right_on="at", right_by="key")
    got = arrowipc.table(left).join_asof(right, "when", "k", -2, right_on="at", right_by="key")
    assert pa.table(got).equals(expected)


def test_join_asof_column_collisions_are_a_value_error():
    with pytest.raises(ValueError, match=r"Columns \{'k'\} present in both tables. AsofJoin "
                       r"does not support column collisions."):
        arrowipc.table(ASOF_LEFT).join_asof(ASOF_RIGHT, "on", [], 1)


def test_join_asof_out_of_order_is_arrow_invalid():
    unsorted = pa.table({"on": [5, 1], "k": ["a", "a"], "x": [1, 2]})
    with pytest.raises(ArrowInvalid, match="AsofJoin does not allow out-of-order on-key values"):
        arrowipc.table(ASOF_LEFT).join_asof(unsorted, "on", "k", 1)


def test_join_asof_on_key_types():
    floats = ASOF_RIGHT.set_column(0, "on", pa.array([1.0, 2, 2, 3, 6, 8]))
    with pytest.raises(ArrowInvalid, match="Expected on-key type int64 but got double for "
                       "field on in input 1"):
        arrowipc.table(ASOF_LEFT).join_asof(floats, "on", "k", 1)
    both = ASOF_LEFT.set_column(0, "on", pa.array([1.0, 2, 3, 4, 5]))
    with pytest.raises(ArrowInvalid, match="Unsupported type for on-key on : double"):
        arrowipc.table(both).join_asof(floats, "on", "k", 1)


# -- datasets ------------------------------------------------------------------------------------

def test_dataset_join_and_join_asof(tmp_path):
    ds.write_dataset(LEFT, tmp_path / "l", format="ipc")
    ds.write_dataset(RIGHT, tmp_path / "r", format="ipc")
    left, right = ds.dataset(tmp_path / "l", format="ipc"), ds.dataset(tmp_path / "r",
                                                                       format="ipc")
    for join_type in JOIN_TYPES:
        got = left.join(right, "k", join_type=join_type, right_suffix="_r")
        assert isinstance(got, ds.InMemoryDataset)
        same_join(LEFT.join(RIGHT, "k", join_type=join_type, right_suffix="_r"),
                  got.to_table())
    filtered = left.filter(ds.field("k") > 1)
    same_join(LEFT.filter(pc.field("k") > 1).join(RIGHT, "k", join_type="inner",
                                                  right_suffix="_r"),
              filtered.join(RIGHT, "k", join_type="inner", right_suffix="_r").to_table())
    ds.write_dataset(ASOF_LEFT, tmp_path / "al", format="ipc")
    got = ds.dataset(tmp_path / "al", format="ipc").join_asof(
        ds.dataset(ASOF_RIGHT), "on", "k", -1).to_table()
    assert pa.table(got).equals(ASOF_LEFT.join_asof(ASOF_RIGHT, "on", "k", -1))
    with pytest.raises(TypeError, match="Expected a dataset or a table to join, got int"):
        left.join(3, "k")


def test_fragments_of_a_filtered_dataset_are_a_value_error(tmp_path):
    ds.write_dataset(LEFT, tmp_path / "l", format="ipc")
    for data in (ds.dataset(tmp_path / "l", format="ipc"), ds.dataset(LEFT)):
        assert len(list(data.get_fragments())) == 1
        with pytest.raises(ValueError, match="Retrieving fragments of a filtered or projected "
                           "dataset is not allowed. Remove the filtering."):
            data.filter(ds.field("k") > 1).get_fragments()
