"""Malformed `pandas` schema metadata: to_pandas raises ArrowInvalid naming the entry, what was
expected and what was found (docs/pandas.md), where it used to raise AttributeError, TypeError or
KeyError or to ignore it; where pyarrow 26 tolerates a case, the DataFrame is pyarrow's. One test
per rule. The metadata is edited from what from_pandas writes for a small DataFrame."""
from __future__ import annotations

import json

import pandas as pd
import pyarrow as pa
import pytest

import arrowipc
from pandas_oracle import assert_same


def _frame() -> pd.DataFrame:
    df = pd.DataFrame({"a": [1, 2, 3], "s": ["x", "y", None],
                       "t": pd.date_range("2020-01-01", periods=3, tz="Europe/Paris")},
                      index=pd.Index(["p", "q", "r"], name="key"))
    df.attrs = {"source": "test"}
    return df


def _with_metadata(edit, df: pd.DataFrame | None = None) -> tuple[arrowipc.Table, pa.Table]:
    """(our table, pyarrow's) of `df` whose `pandas` metadata is edit(parsed metadata) (edit
    may change it in place and return None, or return the new value: bytes are used as is)."""
    theirs = pa.Table.from_pandas(_frame() if df is None else df)
    meta = json.loads(theirs.schema.metadata[b"pandas"])
    result = edit(meta)
    meta = meta if result is None else result
    raw = meta if isinstance(meta, bytes) else json.dumps(meta).encode()
    theirs = theirs.replace_schema_metadata({b"pandas": raw})
    return arrowipc.table(theirs), theirs


def _invalid(edit, match: str, df: pd.DataFrame | None = None) -> None:
    ours, _ = _with_metadata(edit, df)
    with pytest.raises(arrowipc.ArrowInvalid, match=match):
        ours.to_pandas()
    ours.to_pandas(ignore_metadata=True)        # the data itself is fine


def _column(meta: dict, name: str) -> dict:
    return next(c for c in meta["columns"] if c["field_name"] == name)


# -- the document ---------------------------------------------------------------------------------

def test_json_nested_beyond_the_recursion_limit():
    _invalid(lambda m: b"[" * 100_000 + b"]" * 100_000,
             "schema metadata 'pandas' nests its JSON values deeper")


def test_json_null_is_no_metadata_as_in_pyarrow():
    ours, theirs = _with_metadata(lambda m: b"null")
    assert_same(ours.to_pandas(), theirs.to_pandas())


@pytest.mark.parametrize("key", ["columns", "index_columns"])
def test_required_key_missing(key):
    _invalid(lambda m: m.pop(key) and None, f"pandas metadata: the key '{key}' is missing "
             r"\(keys found: \[")


def test_column_indexes_not_a_list():
    _invalid(lambda m: m.update(column_indexes={"name": None}),
             r"'column_indexes' must be a list, found \{'name': None\}")


def test_attributes_not_an_object():
    _invalid(lambda m: m.update(attributes=[1, 2]),
             r"'attributes' must be an object, found \[1, 2\]")


# -- the entries of 'columns' ------------------------------------------------------------------------

def test_column_entry_not_an_object():
    _invalid(lambda m: m["columns"].insert(1, "a"), r"columns\[1\] must be an object, found 'a'")


def test_column_entry_without_name():
    _invalid(lambda m: m["columns"][0].pop("name") and None,
             r"columns\[0\] has no 'name' \(keys found: \['field_name', 'metadata'")


def test_column_field_name_not_a_string():
    _invalid(lambda m: m["columns"][0].update(field_name=["a"]),
             r"columns\[0\].field_name must be a string, found \['a'\]")


def test_column_name_not_a_label():
    _invalid(lambda m: m["columns"][0].update(name={"x": 1}),
             r"columns\[0\].name must be a string or null, found \{'x': 1\}")


@pytest.mark.parametrize("key", ["pandas_type", "numpy_type"])
def test_column_type_string_missing(key):
    _invalid(lambda m: _column(m, "a").pop(key) and None,
             rf"columns\[0\] \('a'\) has no '{key}'")


@pytest.mark.parametrize("key", ["pandas_type", "numpy_type"])
def test_column_type_not_a_string(key):
    _invalid(lambda m: _column(m, "a").update({key: 64}),
             rf"columns\[0\].{key} \('a'\) must be a string, found 64")


def test_column_numpy_type_pandas_does_not_know():
    _invalid(lambda m: _column(m, "a").update(numpy_type="int9000"),
             r"the numpy_type 'int9000' of column 'a' is not a dtype pandas knows")


def test_column_numpy_type_names_a_dtype_its_data_cannot_have():
    # pandas' boolean dtype refuses int64 data (pyarrow: TypeError from __from_arrow__)
    _invalid(lambda m: _column(m, "a").update(numpy_type="boolean"),
             r"column 'a' cannot become the dtype boolean its numpy_type names: TypeError: "
             r"Expected array of boolean type, got int64 instead")


def test_column_metadata_not_an_object():
    _invalid(lambda m: _column(m, "t").update(metadata="Europe/Paris"),
             r"columns\[2\].metadata \('t'\) must be an object or null, found 'Europe/Paris'")


def test_datetimetz_column_without_metadata():
    _invalid(lambda m: _column(m, "t").pop("metadata") and None,
             r"columns\[2\] \('t'\) is a datetimetz column without 'metadata'")


def test_datetimetz_column_with_an_unknown_time_zone():
    _invalid(lambda m: _column(m, "t")["metadata"].update(timezone="Not/AZone"),
             r"columns\[2\] \('t'\): unknown time zone 'Not/AZone'")


def test_datetimetz_column_with_another_time_zone_as_in_pyarrow():
    # pyarrow gives the column the metadata's zone (in nanoseconds)
    ours, theirs = _with_metadata(lambda m: _column(m, "t")["metadata"].update(timezone="UTC"))
    assert_same(ours.to_pandas(), theirs.to_pandas())
    assert str(ours.to_pandas()["t"].dtype) == "datetime64[ns, UTC]"


# -- 'index_columns' -----------------------------------------------------------------------------

def test_index_column_no_entry_describes():
    _invalid(lambda m: m["columns"].pop() and None, r"index_columns\[0\] names the column 'key', which "
             r"no entry of 'columns' describes")


def test_index_column_named_twice():
    _invalid(lambda m: m["index_columns"].append("key"),
             r"index_columns names 'key' twice")


@pytest.mark.parametrize("descr, message", [
    (7, r"index_columns\[1\] must be a column name or an object, found 7"),
    ({"kind": "interval"}, r"index_columns\[1\] has the index kind 'interval'; expected "
                           r"'range' or a column name"),
    ({"start": 0}, r"index_columns\[1\] has the index kind None"),
])
def test_index_descriptor_of_an_unknown_kind(descr, message):
    _invalid(lambda m: m["index_columns"].append(descr), message)


def test_range_index_descriptor_without_a_key():
    _invalid(lambda m: m.update(index_columns=[{"kind": "range", "start": 0, "stop": 3,
                                                "step": 1}]),
             r"index_columns\[0\] \(a range index\) has no 'name'")


def test_range_index_pandas_cannot_make():
    _invalid(lambda m: m.update(index_columns=[{"kind": "range", "name": None, "start": -2 ** 63,
                                                "stop": 2 ** 63, "step": 1}]),
             r"index_columns\[0\] is not a range pandas can make")


# -- 'column_indexes' ----------------------------------------------------------------------------

def test_column_index_entry_not_an_object():
    _invalid(lambda m: m.update(column_indexes=["x"]),
             r"column_indexes\[0\] must be an object, found 'x'")


def test_column_index_entry_without_name():
    _invalid(lambda m: m["column_indexes"][0].pop("name") and None,
             r"column_indexes\[0\] has no 'name'")


def test_column_index_pandas_type_numpy_does_not_know():
    _invalid(lambda m: m["column_indexes"][0].update(pandas_type="no such type"),
             r"cannot rebuild the columns index that 'column_indexes' describes")


def test_column_index_datetimetz_without_time_zone():
    _invalid(lambda m: m["column_indexes"][0].update(pandas_type="datetimetz", metadata=None),
             r"column_indexes\[0\].metadata must be an object with a 'timezone' string, "
             r"found None")


def test_column_index_levels_that_are_not_tuples():
    # two levels: every column name must be a tuple literal
    _invalid(lambda m: m["column_indexes"].append(dict(m["column_indexes"][0])),
             r"cannot rebuild the columns index that 'column_indexes' describes")
