"""Schema printing and referenced byte sizes against pyarrow.

`str(schema)` / `Schema.to_string` follow Arrow's schema printer exactly (nested "child i" lines,
field and schema metadata, truncation, per-piece size limit); `nbytes` follows pyarrow's
referenced-range rules for every layout and every slice of it.
"""
from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc
import pytest

import arrowipc as ai
from tests.strategies import ISSUE2_CASE_IDS, make_batch, make_table


def nested_schema(lib, metadata=True):
    """The same schema built through `lib` (pyarrow or arrowipc): every nesting form."""
    meta = (lambda m: m) if metadata else (lambda m: None)
    return lib.schema([
        lib.field("a", lib.struct([
            lib.field("x", lib.int32(), nullable=False),
            lib.field("y", lib.list_(lib.field("it", lib.struct([
                lib.field("q", lib.string(), metadata=meta({"m": "n"}))]),
                metadata=meta({"i": "j"}))))]), metadata=meta({"x": "y"})),
        lib.field("m", lib.map_(lib.string(), lib.list_(lib.int8())), nullable=False),
        lib.field("u", lib.dense_union([lib.field("i", lib.int8()),
                                        lib.field("s", lib.struct([("z", lib.int8())]))])),
        lib.field("su", lib.sparse_union([lib.field("i", lib.int8())])),
        lib.field("d", lib.dictionary(lib.int8(), lib.string())),
        lib.field("ds", lib.dictionary(lib.int8(), lib.struct([("a", lib.int8())]))),
        lib.field("fl", lib.list_(lib.int8(), 3)),
        lib.field("ll", lib.large_list(lib.int8())),
        lib.field("lv", lib.list_view(lib.int8())),
        lib.field("r", lib.run_end_encoded(lib.int32(), lib.string())),
        lib.field("e", lib.int8(), metadata=meta({"k": "v", "long": "x" * 100, b"\xff": b"\xfe",
                                                  "edge": "z" * 64, "over": "z" * 65, "g": ""})),
        lib.field("averyverylongname", lib.struct([("x" * 30, lib.int8())])),
    ], metadata=meta({"a": "b", "long": "y" * 100}))


@pytest.mark.parametrize("options", [
    {}, {"truncate_metadata": False}, {"show_field_metadata": False},
    {"show_schema_metadata": False}, {"element_size_limit": 3}, {"element_size_limit": 10},
    {"truncate_metadata": False, "element_size_limit": 50}])
def test_schema_to_string_matches_pyarrow(options):
    assert nested_schema(ai).to_string(**options) == nested_schema(pa).to_string(**options)


def test_str_and_repr_of_a_schema_are_pyarrows():
    expected = str(nested_schema(pa))
    assert "  child 0, x: int32 not null" in expected        # the nested lines are there
    assert str(nested_schema(ai)) == expected
    assert repr(nested_schema(ai)) == repr(nested_schema(pa))
    assert str(ai.schema([])) == str(pa.schema([])) == ""
    assert str(ai.schema([], metadata={"a": "b"})) == str(pa.schema([], metadata={"a": "b"}))


def test_schema_of_every_type_prints_as_pyarrows():
    schema = make_batch(ISSUE2_CASE_IDS, 1).schema
    assert str(ai.schema(schema)) == str(schema)


@pytest.mark.parametrize("show_metadata", [False, True])
def test_table_and_batch_to_string_print_nested_fields(show_metadata):
    data = pa.table({"a": pa.array([{"x": 1, "y": [{"q": "s"}]}])})
    data = data.cast(pa.schema([nested_schema(pa).field("a")]).with_metadata({"t": "u"}))
    for theirs, ours in ((data, ai.table(data)),
                         (data.to_batches()[0], ai.record_batch(data.to_batches()[0]))):
        expected = theirs.to_string(show_metadata=show_metadata)
        assert ours.to_string(show_metadata=show_metadata) == \
            expected.replace("pyarrow.", "arrowipc.")


def _layout_samples():
    yield "ree", pc.run_end_encode(pa.array([1, 1, 2, 2, 2, 3, 3, 3, 3, 3, 4, 4] * 2))
    yield "dense_union", pa.UnionArray.from_dense(
        pa.array([0, 1, 1, 0] * 6, pa.int8()), pa.array([0, 0, 1, 1, 2, 2, 3, 3] * 3, pa.int32()),
        [pa.array(range(24)), pa.array(["a", None] * 12)])
    yield "sparse_union", pa.UnionArray.from_sparse(
        pa.array([0, 1] * 12, pa.int8()), [pa.array(range(24)), pa.array(["ab", None] * 12)])
    yield "string_view", pa.array(["a", "b" * 24, None] * 8, pa.string_view())
    yield "list_view", pa.array([[1, 2], [3], None] * 8, pa.list_view(pa.int64()))
    yield "dictionary", pa.array(["x", "y", None] * 8).dictionary_encode()
    yield "uuid", pa.array([b"0123456789abcdef"] * 24, pa.uuid())
    yield "nulls", pa.nulls(24)


# pyarrow has no Python array class for the two interval layouts (KeyError from chunk(i))
WRAPPABLE_CASES = [c for c in ISSUE2_CASE_IDS if c not in ("month_interval", "day_time_interval")]


@pytest.mark.parametrize("case", WRAPPABLE_CASES + [name for name, _ in _layout_samples()])
def test_nbytes_of_every_slice_matches_pyarrow(case):
    samples = dict(_layout_samples())
    column = samples[case] if case in samples else make_table([case], [24]).column(0).chunk(0)
    ours = ai.array(column)
    checked = 0
    for offset in range(0, 25, 3):
        for length in (0, 1, 2, 7, 8, 9, 24 - offset):
            if offset + length <= 24:
                assert ours.slice(offset, length).nbytes == column.slice(offset, length).nbytes, \
                    (case, offset, length)
                checked += 1
    assert checked > 20


def test_nbytes_of_chunked_arrays_batches_and_tables_match_pyarrow():
    table = make_table(ISSUE2_CASE_IDS, [10, 17]).slice(3, 20)
    ours = ai.table(table)
    assert ours.nbytes == table.nbytes
    assert ai.record_batch(table.to_batches()[1]).nbytes == table.to_batches()[1].nbytes
    for i in range(table.num_columns):
        assert ours.column(i).nbytes == table.column(i).nbytes, table.schema.field(i).name
