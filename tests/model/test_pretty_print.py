"""Array, ChunkedArray, RecordBatch and Table printing (`to_string`, `str`, `repr`) against
pyarrow 26, character for character: every type IPC holds, every printing option, slices,
chunking, nested layouts, and the cost of printing (only the shown window is converted).
"""
from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc
import pytest

import arrowipc as ai
from tests.model.test_printing_and_sizes import _layout_samples
from tests.strategies import ISSUE2_CASE_IDS, make_table

# pyarrow has no Python array class for the two interval layouts: they are compared through
# chunked arrays, whose printing runs in C++
WRAPPABLE_CASES = [c for c in ISSUE2_CASE_IDS if c not in ("month_interval", "day_time_interval")]

ARRAY_OPTIONS = [
    {}, {"skip_new_lines": True}, {"window": 1}, {"window": 0}, {"window": -1}, {"window": 3},
    {"element_size_limit": 4}, {"element_size_limit": 0}, {"element_size_limit": 1},
    {"element_size_limit": -1}, {"indent": 3, "top_level_indent": 2}, {"indent": 0},
    {"indent": 0, "skip_new_lines": True}, {"container_window": 1},
    {"window": 2, "container_window": 0, "skip_new_lines": True, "element_size_limit": 7},
]
CHUNKED_OPTIONS = [
    {}, {"skip_new_lines": True}, {"window": 1, "container_window": 1}, {"window": 0},
    {"container_window": 0}, {"element_size_limit": 4}, {"indent": 3},
    {"indent": 2, "skip_new_lines": True, "window": 2, "element_size_limit": 9},
]


def _layouts():
    """Arrays of every layout make_table does not build, and nested shapes worth a look."""
    yield from _layout_samples()      # run-end encoded, unions, views, dictionary, uuid, nulls
    yield "ree_string", pc.run_end_encode(pa.array(["a", "a", None, "b"] * 6))
    yield "binary_view", pa.array([b"a", b"b" * 24, None] * 8, pa.binary_view())
    yield "large_list_view", pa.array([[1, 2], [3], None] * 8, pa.large_list_view(pa.int64()))
    yield "dictionary_of_lists", pa.DictionaryArray.from_arrays(
        pa.array([0, 1, None, 2] * 6, pa.int8()), pa.array([[1], [2, 3], None]))
    yield "struct_with_nulls", pa.array(
        [{"x": i, "y": [{"q": "s"}] * (i % 3)} if i % 4 else None for i in range(24)])
    yield "list_of_lists", pa.array([[[1, 2], None, [3, 4, 5, 6, 7]]] * 23 + [None])
    yield "map", pa.array([[("a", 1), ("b", None)], None, []] * 8, pa.map_(pa.string(), pa.int64()))
    yield "unicode", pa.array(["héllo wörld " * 3, "日本語" * 40, None] * 8)
    yield "floats", pa.array([0.1, 1e20, -0.0, float("nan"), 3.4e38, 1e-7, None, -float("inf")]
                             * 3, pa.float32())
    yield "struct_of_union", pa.StructArray.from_arrays(
        [pa.UnionArray.from_sparse(pa.array([0, 1] * 12, pa.int8()),
                                   [pa.array(range(24)), pa.array(["ab", None] * 12)]),
         pa.array(range(24))], ["u", "i"])


LAYOUTS = dict(_layouts())


def _column(case):
    return LAYOUTS[case] if case in LAYOUTS else make_table([case], [24]).column(0).chunk(0)


def _slices(n):
    return [(0, n), (1, n - 1), (3, 5), (2, 0), (n - 1, 1)]


@pytest.mark.parametrize("case", WRAPPABLE_CASES + list(LAYOUTS))
def test_array_to_string_matches_pyarrow_for_every_type_option_and_slice(case):
    theirs = _column(case)
    ours = ai.array(theirs)
    for offset, length in _slices(len(theirs)):
        a, b = theirs.slice(offset, length), ours.slice(offset, length)
        for options in ARRAY_OPTIONS:
            assert b.to_string(**options) == a.to_string(**options), (offset, length, options)
        assert str(b) == str(a)


@pytest.mark.parametrize("case", ISSUE2_CASE_IDS)
def test_chunked_array_to_string_matches_pyarrow(case):
    theirs = make_table([case], [25, 3, 7, 0, 1, 2]).column(0)
    ours = ai.chunked_array(theirs)
    for options in CHUNKED_OPTIONS:
        assert ours.to_string(**options) == theirs.to_string(**options), options
    assert str(ours) == str(theirs)
    # (sliced where no empty chunk falls inside: pyarrow keeps those in a slice, arrowipc not)
    sliced = theirs.slice(20, 10)
    assert ours.slice(20, 10).to_string() == sliced.to_string()


def test_chunked_array_of_every_layout_and_no_chunks():
    for case, column in LAYOUTS.items():
        theirs = pa.chunked_array([column, column.slice(5, 3)] * 3)
        ours = ai.chunked_array(theirs)
        for options in CHUNKED_OPTIONS:
            assert ours.to_string(**options) == theirs.to_string(**options), (case, options)
    empty = pa.chunked_array([], pa.int64())
    assert ai.chunked_array([], ai.int64()).to_string() == empty.to_string()
    assert ai.chunked_array([], ai.int64()).to_string(skip_new_lines=True) == \
        empty.to_string(skip_new_lines=True)


def test_the_issue_example_prints_as_pyarrow():
    data = pa.table({"a": pa.array([{"x": 1, "y": [{"q": "s"}]}])})
    expected = data.to_string(preview_cols=1)
    assert "  -- child 1 type: list<item: struct<q: string>>\n" in expected
    assert ai.table(data).to_string(preview_cols=1) == expected.replace("pyarrow.", "arrowipc.")


@pytest.mark.parametrize("preview_cols", [0, 1, 3, 10, 100])
def test_table_and_batch_preview_columns_match_pyarrow(preview_cols):
    table = make_table(ISSUE2_CASE_IDS, [4, 9]).slice(2, 8)
    # a RecordBatch's columns are pyarrow Arrays: no interval columns there
    batch = make_table(WRAPPABLE_CASES, [12]).to_batches()[0].slice(1, 9)
    for theirs, ours in ((table, ai.table(table)), (batch, ai.record_batch(batch))):
        expected = theirs.to_string(preview_cols=preview_cols).replace("pyarrow.", "arrowipc.")
        assert ours.to_string(preview_cols=preview_cols) == expected
        expected = theirs.to_string(preview_cols=preview_cols, show_metadata=True)
        assert ours.to_string(preview_cols=preview_cols, show_metadata=True) == \
            expected.replace("pyarrow.", "arrowipc.")


def test_str_and_repr_follow_pyarrow():
    table = make_table(["int64", "string", "struct", "list"], [3, 2])
    ours = ai.table(table)
    assert repr(ours) == str(ours) == repr(table).replace("pyarrow.", "arrowipc.")
    batch = table.combine_chunks().to_batches()[0]
    assert repr(ai.record_batch(batch)) == repr(batch).replace("pyarrow.", "arrowipc.")
    column = ours.column(2)
    assert str(column) == str(table.column(2))
    head, _, body = repr(column).partition("\n")
    assert head.startswith("<arrowipc.array.ChunkedArray object at 0x") and body == str(column)
    arr = column.chunk(0)
    head, _, body = repr(arr).partition("\n")
    assert head.startswith(f"<arrowipc.array.{type(arr).__name__} object at 0x")
    assert body == str(arr) == str(table.column(2).chunk(0))


def test_to_string_keywords_and_defaults_are_pyarrows():
    import inspect
    expected = {
        ai.Array.to_string: {"indent": 2, "top_level_indent": 0, "window": 10,
                             "container_window": 2, "skip_new_lines": False,
                             "element_size_limit": 100},
        ai.ChunkedArray.to_string: {"indent": 0, "window": 5, "container_window": 2,
                                    "skip_new_lines": False, "element_size_limit": 100},
    }
    for method, defaults in expected.items():
        params = dict(inspect.signature(method).parameters)
        params.pop("self")
        assert {k: p.default for k, p in params.items()} == defaults
        assert all(p.kind is p.KEYWORD_ONLY for p in params.values())
    # pyarrow's own docstrings state the same defaults
    assert "indent=2, int top_level_indent=0, int window=10" in pa.Array.to_string.__doc__
    assert "indent=0, int window=5, int container_window=2" in pa.ChunkedArray.to_string.__doc__


class _Counter:
    """Counts the rows the printer converts to text, and every to_pylist call's size."""

    def __init__(self, monkeypatch):
        import arrowipc.data.pretty as pretty
        import arrowipc.to_python as to_python
        self.formatted = 0
        self.listed = 0
        real_format, real_clip = pretty._format_run, pretty._clipped_binary
        real_list = to_python.to_pylist

        def format_run(d):
            self.formatted += d.length
            return real_format(d)

        def clipped_binary(d, keep):
            self.formatted += d.length
            return real_clip(d, keep)

        def to_pylist(d, *args, **kwargs):
            self.listed += d.length
            return real_list(d, *args, **kwargs)
        monkeypatch.setattr(pretty, "_format_run", format_run)
        monkeypatch.setattr(pretty, "_clipped_binary", clipped_binary)
        monkeypatch.setattr(to_python, "to_pylist", to_pylist)


@pytest.mark.parametrize("case", ["int64", "string", "timestamp_us_tz", "decimal128", "list",
                                  "struct", "map_of_struct", "list_of_list"])
def test_printing_a_big_array_converts_only_the_shown_window(case, monkeypatch):
    theirs = make_table([case], [40]).column(0).chunk(0)
    # 200_000 rows, the same 40 repeated: a window of 10 + 10 must read about 20 rows
    big = ai.array(pa.concat_arrays([theirs] * 5000))
    counter = _Counter(monkeypatch)
    text = big.to_string()
    assert text == pa.concat_arrays([theirs] * 5000).to_string()
    assert 0 < counter.formatted <= 200 and counter.listed <= 200, (counter.formatted,
                                                                     counter.listed)
    counter.formatted = counter.listed = 0
    ai.chunked_array([big] * 3).to_string()
    assert 0 < counter.formatted <= 300 and counter.listed <= 300


@pytest.mark.parametrize("type_", [pa.string(), pa.large_binary()])
def test_a_huge_value_is_read_only_as_far_as_it_prints(type_, monkeypatch):
    huge = b"\xc3\xa9" * 3_000_000                       # 6 MB of "é"
    # limits cut "é" (two bytes) in its middle too
    theirs = pa.array([b"ab", huge, None, huge[:20]], pa.binary()).cast(type_)
    ours = ai.array(theirs)
    counter = _Counter(monkeypatch)
    for options in ({}, {"element_size_limit": 7}, {"element_size_limit": 2},
                    {"skip_new_lines": True}):
        assert ours.to_string(**options) == theirs.to_string(**options), options
    assert counter.listed == 0
    # without a limit (a string's limit is two bytes less) the whole value prints, as pyarrow's
    for limit in (-1, 0, 1):
        assert ours.to_string(element_size_limit=limit) == \
            theirs.to_string(element_size_limit=limit)
