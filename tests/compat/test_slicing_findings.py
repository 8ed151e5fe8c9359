"""Row slicing, chunked indices and masks, from_pylist's columns and `is_cpu`, each checked
against pyarrow 26 as the oracle (findings of the ETL probe: strided slices of a RecordBatch
returned wrong rows, Table[slice] raised, chunked take/filter arguments were refused)."""
import pytest

import arrowipc as A

pa = pytest.importorskip("pyarrow")

SLICES = [slice(1, 3), slice(-2, None), slice(None, None, 2), slice(None, None, -1),
          slice(1, 3, 1), slice(10, 20), slice(None, None, 3), slice(4, 1, -1),
          slice(-1, -7, -2), slice(1, 1), slice(5, 2), slice(-100, 100, 2),
          slice(100, -100, -3), slice(None, None, 100), slice(2, None, -1)]


def pa_table():
    """Six rows in two chunks (so slices cross a chunk boundary)."""
    return pa.Table.from_batches([pa.record_batch({"x": [0, 1, 2], "s": ["a", None, "c"]}),
                                  pa.record_batch({"x": [3, None, 5], "s": ["d", "e", "f"]})])


def views(t):
    """The four kinds of object over one table: table, batch, column, array."""
    batch = t.combine_chunks().to_batches()[0]
    return {"table": t, "batch": batch, "column": t["x"], "array": batch["x"]}


def rows(obj):
    """Comparable content: the Python values, and the kind of object (Table stays Table)."""
    name = type(obj).__name__
    kind = name if name in ("Table", "RecordBatch", "ChunkedArray") else "Array"
    return kind, obj.to_pylist()


@pytest.mark.parametrize("kind", ["table", "batch", "column", "array"])
@pytest.mark.parametrize("key", SLICES, ids=str)
def test_getitem_slice_matches_pyarrow(kind, key):
    theirs = views(pa_table())[kind][key]
    ours = views(A.table(pa_table()))[kind][key]
    assert rows(ours) == rows(theirs)
    assert ours.schema == theirs.schema if kind in ("table", "batch") else ours.type == theirs.type


@pytest.mark.parametrize("kind", ["table", "batch", "column", "array"])
def test_getitem_slice_step_zero_raises_valueerror(kind):
    with pytest.raises(ValueError):
        views(pa_table())[kind][::0]
    with pytest.raises(ValueError):
        views(A.table(pa_table()))[kind][::0]


@pytest.mark.parametrize("kind", ["table", "batch", "column", "array"])
def test_contiguous_slice_stays_zero_copy(kind):
    ours = views(A.table(pa_table()))[kind]
    part = ours[1:3]
    first = part.chunk(0) if hasattr(part, "chunk") else part
    if kind in ("table", "batch"):
        col = part.column(0)
        first = col.chunk(0) if hasattr(col, "chunk") else col
    assert first.offset == 1 and len(part) == 2     # a view (offset kept), not a copy


def test_table_getitem_int_and_str_still_columns():
    t, o = pa_table(), A.table(pa_table())
    assert o[0].to_pylist() == t[0].to_pylist()
    assert o["s"].to_pylist() == t["s"].to_pylist()


CHUNKED_INDICES = [[[0, 1], [3]], [[2]], [[5, 0], [], [4, None]], [[]]]
CHUNKED_MASKS = [[[True, False], [True, True, False, True]],
                 [[True, False, None, True, False, True]],
                 [[False], [True, None], [], [True, True, False]]]


def _pa_chunked(chunks, typ):
    return pa.chunked_array(chunks, typ)


@pytest.mark.parametrize("chunks", CHUNKED_INDICES, ids=str)
@pytest.mark.parametrize("lib", ["pyarrow", "arrowipc"])
@pytest.mark.parametrize("kind", ["table", "column", "array", "batch"])
def test_take_chunked_indices_matches_pyarrow(kind, lib, chunks):
    idx = _pa_chunked(chunks, pa.int64())
    ours_idx = idx if lib == "pyarrow" else A.chunked_array(idx)
    ours = views(A.table(pa_table()))[kind].take(ours_idx)
    if kind == "batch":
        # pyarrow raises ArrowNotImplementedError here; ours gives the rows, as a table's take
        expect = pa_table().take(idx).to_pylist()
        assert ours.to_pylist() == expect
        return
    theirs = views(pa_table())[kind].take(idx)
    assert rows(ours) == rows(theirs)


@pytest.mark.parametrize("chunks", CHUNKED_MASKS, ids=str)
@pytest.mark.parametrize("lib", ["pyarrow", "arrowipc"])
@pytest.mark.parametrize("kind", ["table", "batch", "column", "array"])
@pytest.mark.parametrize("nulls", ["drop", "emit_null"])
def test_filter_chunked_mask_matches_pyarrow(kind, lib, chunks, nulls):
    mask = _pa_chunked(chunks, pa.bool_())
    ours_mask = mask if lib == "pyarrow" else A.chunked_array(mask)
    theirs = views(pa_table())[kind].filter(mask, null_selection_behavior=nulls)
    ours = views(A.table(pa_table()))[kind].filter(ours_mask, null_selection_behavior=nulls)
    assert rows(ours) == rows(theirs)


ROWS = [
    [{"a": 1, "b": "x"}, {"a": None, "c": 2.5}],
    [{"b": "x"}, {"a": 1, "b": "y"}, {}],
    [{}, {"a": 1}],
    [],
]


@pytest.mark.parametrize("mapping", ROWS, ids=str)
@pytest.mark.parametrize("cls", ["Table", "RecordBatch"])
def test_from_pylist_takes_first_row_keys(cls, mapping):
    theirs = getattr(pa, cls).from_pylist(mapping)
    ours = getattr(A, cls).from_pylist(mapping)
    assert ours.schema.names == theirs.schema.names
    assert ours.to_pylist() == theirs.to_pylist()


@pytest.mark.parametrize("kind", ["table", "batch", "column", "array"])
def test_is_cpu(kind):
    assert views(pa_table())[kind].is_cpu is True
    assert views(A.table(pa_table()))[kind].is_cpu is True
