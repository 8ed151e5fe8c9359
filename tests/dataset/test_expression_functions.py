"""starts_with, ends_with, match_substring, abs and negate (and their _checked variants) in
dataset filters and projections: pyarrow expressions passed to arrowipc.dataset, each result
compared with pyarrow.dataset's on the same data (in memory and as a written IPC dataset)."""
import pytest

import arrowipc.compute as apc
import arrowipc.dataset as ds
from arrowipc.errors import ArrowInvalid, ArrowNotImplementedError

pa = pytest.importorskip("pyarrow")
pc = pytest.importorskip("pyarrow.compute")
pads = pytest.importorskip("pyarrow.dataset")

WORDS = ["apple", None, "Apple pie", "", "banana", "ANANAS", "xa", "a", "straße", "STRASSE",
         "Ébène", "ébène", "\u212aelvin", "kelvin", "İstanbul", "istanbul", "ıI", "σίσυφος",
         "ΣΊΣΥΦΟΣ", "naïve", "NAÏVE", None, "aaaa", "ab\u00e9", "日本語テキスト", "テキスト"]
PATTERNS = ["a", "A", "an", "ana", "aa", "", "é", "É", "ss", "ß", "k", "K", "i", "İ", "ı",
            "σ", "Σ", "ï", "テキ", "ト", "apple pie", "nowhere", "ab\u00e9"]
FUNCTIONS = ["starts_with", "ends_with", "match_substring"]


def _table(type_, sliced):
    words = WORDS * 3
    arr = pa.array(words, type_)
    if sliced:          # an offset into the buffers, and nulls on both sides of the slice
        arr = arr.slice(5, len(words) - 9)
    return pa.table({"s": arr, "n": pa.array(range(len(arr)))})


def _same(table, tmp_path, *, filter=None, columns=None):
    want = pads.dataset(table).to_table(filter=filter, columns=columns)
    got = ds.dataset(table).to_table(filter=filter, columns=columns)
    assert got.to_pydict() == want.to_pydict()
    path = str(tmp_path / "d")
    pads.write_dataset(table, path, format="ipc", max_rows_per_group=16,
                       existing_data_behavior="overwrite_or_ignore")
    got = ds.dataset(path, format="ipc").to_table(filter=filter, columns=columns)
    want = pads.dataset(path, format="ipc").to_table(filter=filter, columns=columns)
    assert got.to_pydict() == want.to_pydict()
    return want


@pytest.mark.parametrize("type_", [pa.string(), pa.large_string(), pa.binary(),
                                   pa.large_binary()])
@pytest.mark.parametrize("sliced", [False, True])
@pytest.mark.parametrize("ignore_case", [False, True])
@pytest.mark.parametrize("function", FUNCTIONS)
def test_string_predicates_project_as_pyarrows(tmp_path, type_, sliced, ignore_case, function):
    table = _table(type_, sliced)
    make = getattr(pc, function)
    columns = {f"p{i}": make(pc.field("s"), pattern=p, ignore_case=ignore_case)
               for i, p in enumerate(PATTERNS)}
    columns["n"] = pc.field("n")
    _same(table, tmp_path, columns=columns)


@pytest.mark.parametrize("type_", [pa.string(), pa.large_binary()])
@pytest.mark.parametrize("function", FUNCTIONS)
@pytest.mark.parametrize("pattern,ignore_case", [("a", False), ("A", True), ("", False),
                                                  ("é", True), ("ss", True)])
def test_string_predicates_filter_as_pyarrows(tmp_path, type_, function, pattern, ignore_case):
    table = _table(type_, True)
    e = getattr(pc, function)(pc.field("s"), pattern=pattern, ignore_case=ignore_case)
    _same(table, tmp_path, filter=e & (pc.field("n") >= 0))


def test_match_substring_finds_overlapping_and_row_crossing_occurrences(tmp_path):
    # "aba" spans the end of "ab" into "aba"; "aa" occurrences overlap inside "aaaa"
    table = pa.table({"s": ["ab", "aba", "a", "a", "aaaa", "b", "ba"]})
    _same(table, tmp_path, columns={p: pc.match_substring(pc.field("s"), p)
                                    for p in ["aba", "aa", "ab", "ba", "bab", "aaaaa"]})


def test_the_expressions_print_and_build_as_pyarrows():
    e = pc.starts_with(pc.field("sku"), "a", ignore_case=True)
    ours = ds.dataset(pa.table({"sku": ["a"]})).scanner(filter=e)
    assert ours is not None
    assert str(apc.starts_with(apc.field("sku"), "a", ignore_case=True)) == str(e)
    assert str(apc.match_substring(apc.field("s"), pattern="x")) == \
        str(pc.match_substring(pc.field("s"), pattern="x"))
    assert str(apc.abs_checked(apc.field("x"))) == str(pc.abs_checked(pc.field("x")))
    assert not hasattr(ds.field("sku"), "starts_with")


def test_the_compute_functions_on_arrays():
    a = pa.array(["ab", None, "xA", ""], pa.large_string())
    for f in FUNCTIONS:
        for ic in (False, True):
            got = getattr(apc, f)(a, "a", ignore_case=ic)
            assert got.to_pylist() == getattr(pc, f)(a, "a", ignore_case=ic).to_pylist()
    chunked = pa.chunked_array([[-3, None], [4]], pa.int16())
    assert apc.negate(chunked).to_pylist() == [3, None, -4]
    assert apc.abs(pa.array([-1.5, None])).to_pylist() == [1.5, None]


NUMERIC = [pa.int8(), pa.int16(), pa.int32(), pa.int64(), pa.uint8(), pa.uint16(),
           pa.uint32(), pa.uint64(), pa.float32(), pa.float64(), pa.duration("ms")]


def _numbers(type_, sliced):
    if pa.types.is_floating(type_):
        values = [-1.5, None, 0.0, -0.0, 2.25, float("inf"), float("-inf"), -3.0]
    elif pa.types.is_unsigned_integer(type_):
        values = [0, 1, None, 2 ** type_.bit_width - 1, 7, None, 128]
    else:
        # durations near int64 limits do not convert to timedelta: smaller ones
        bits = 32 if pa.types.is_duration(type_) else type_.bit_width
        values = [-(2 ** (bits - 1)) + 1, 2 ** (bits - 1) - 1, None, 0, -5, 5, -1]
    arr = pa.array(values * 2, type_)
    return arr.slice(1, len(arr) - 2) if sliced else arr


@pytest.mark.parametrize("type_", NUMERIC)
@pytest.mark.parametrize("sliced", [False, True])
def test_abs_and_negate_project_as_pyarrows(tmp_path, type_, sliced):
    table = pa.table({"x": _numbers(type_, sliced)})
    functions = ["abs", "negate", "abs_checked"]
    if not pa.types.is_unsigned_integer(type_):
        functions.append("negate_checked")
    want = _same(table, tmp_path, columns={f: getattr(pc, f)(pc.field("x")) for f in functions})
    assert want.num_rows == table.num_rows
    _same(table, tmp_path, filter=pc.negate(pc.abs(pc.field("x"))) <= pc.negate(pc.field("x")))


@pytest.mark.parametrize("type_", [pa.int8(), pa.int16(), pa.int32(), pa.int64()])
def test_the_unchecked_variants_wrap_int_min_and_the_checked_ones_raise(tmp_path, type_):
    low = -(2 ** (type_.bit_width - 1))
    table = pa.table({"x": pa.array([low, None, 3], type_)})
    _same(table, tmp_path, columns={"a": pc.abs(pc.field("x")), "n": pc.negate(pc.field("x"))})
    for f in ("abs_checked", "negate_checked"):
        with pytest.raises(pa.ArrowInvalid, match="^overflow$"):
            pads.dataset(table).to_table(columns={"y": getattr(pc, f)(pc.field("x"))})
        with pytest.raises(ArrowInvalid, match="^overflow$"):
            ds.dataset(table).to_table(columns={"y": getattr(pc, f)(pc.field("x"))})
    # INT_MIN under a null is not a value: no overflow
    masked = pa.array([low, 1], type_, mask=pa.array([True, False]))
    table = pa.table({"x": masked})
    _same(table, tmp_path, columns={"y": pc.abs_checked(pc.field("x"))})


def test_negate_checked_of_unsigned_has_no_kernel_as_in_pyarrow():
    table = pa.table({"x": pa.array([1, 2], pa.uint32())})
    e = {"y": pc.negate_checked(pc.field("x"))}
    with pytest.raises(pa.ArrowNotImplementedError) as theirs:
        pads.dataset(table).to_table(columns=e)
    with pytest.raises(ArrowNotImplementedError) as ours:
        ds.dataset(table).to_table(columns=e)
    assert str(ours.value) in str(theirs.value)


def test_a_string_predicate_of_a_number_has_no_kernel():
    table = pa.table({"x": pa.array([1, 2])})
    e = pc.starts_with(pc.field("x"), "1")
    with pytest.raises(pa.ArrowNotImplementedError):
        pads.dataset(table).to_table(filter=e)
    with pytest.raises(ArrowNotImplementedError, match="starts_with"):
        ds.dataset(table).to_table(filter=e)


_PYARROW_ALIASES = [
    "null", "bool", "boolean", "i1", "int8", "i2", "int16", "i4", "int32", "i8", "int64", "u1",
    "uint8", "u2", "uint16", "u4", "uint32", "u8", "uint64", "f2", "halffloat", "float16", "f4",
    "float", "float32", "f8", "double", "float64", "string", "str", "utf8", "binary",
    "large_string", "large_str", "large_utf8", "large_binary", "binary_view", "string_view",
    "date32", "date64", "date32[day]", "date64[ms]", "time32[s]", "time32[ms]", "time64[us]",
    "time64[ns]", "timestamp[s]", "timestamp[ms]", "timestamp[us]", "timestamp[ns]",
    "duration[s]", "duration[ms]", "duration[us]", "duration[ns]", "month_day_nano_interval",
    "Int8", "DOUBLE", "Timestamp[MS]",
]


def test_a_cast_takes_every_type_alias_pyarrow_takes(tmp_path):
    import pyarrow.feather as pf
    from arrowipc.types import type_for_alias
    for name in _PYARROW_ALIASES:
        assert str(type_for_alias(name)) == str(pa.type_for_alias(name)), name
    with pytest.raises(ValueError, match="^no type named 'time32\\[us\\]'$"):
        type_for_alias("time32[us]")
    pf.write_feather(pa.table({"d": pa.array([0, 365], pa.int32()).cast("date32")}),
                     str(tmp_path / "x.arrow"))
    ours = ds.dataset(str(tmp_path), format="ipc").to_table(
        columns={"d": ds.field("d").cast("timestamp[s]")})
    theirs = pads.dataset(str(tmp_path), format="ipc").to_table(
        columns={"d": pads.field("d").cast("timestamp[s]")})
    assert ours.to_pyarrow().equals(theirs)
