"""Table.sort_by and RecordBatch.sort_by as pyarrow's: every orderable type, nulls and NaNs
placed, several keys, chunked columns, stability, and pyarrow's errors."""
import datetime
import decimal
import math
import warnings

import numpy as np
import pytest

pa = pytest.importorskip("pyarrow")

import arrowipc  # noqa: E402
from arrowipc import ArrowInvalid, ArrowNotImplementedError  # noqa: E402

N = 300


def _column(kind, rng):
    nulls = rng.random(N) < 0.15
    small = rng.integers(0, 12, N)          # many ties: stability matters

    def masked(values):
        return [None if n else v for v, n in zip(values, nulls)]

    if kind == "int64":
        return pa.array(masked((small * 10**15 - 7).tolist()), pa.int64())
    if kind == "uint8":
        return pa.array(masked(small.tolist()), pa.uint8())
    if kind == "double":
        vals = [float("nan") if v == 5 else v / 3 for v in small.tolist()]
        return pa.array(masked(vals), pa.float64())
    if kind == "float16":
        return pa.array(masked((small / 4).astype(np.float16)), pa.float16())
    if kind == "string":
        return pa.array(masked([f"k{v:02d}é" for v in small]), pa.string())
    if kind == "large_binary":
        return pa.array(masked([bytes([v, 255 - v]) for v in small]), pa.large_binary())
    if kind == "string_view":
        return pa.array(masked([f"a longer string value {v}" for v in small]), pa.string_view())
    if kind == "bool":
        return pa.array(masked((small % 2 == 0).tolist()), pa.bool_())
    if kind == "timestamp_tz":
        return pa.array(masked((small * 10**9).tolist()), pa.timestamp("ns", "Europe/Paris"))
    if kind == "date32":
        return pa.array(masked([datetime.date(2020, 1, 1) + datetime.timedelta(days=int(v) * 40)
                                for v in small]), pa.date32())
    if kind == "time64":
        return pa.array(masked((small * 1000).tolist()), pa.time64("us"))
    if kind == "duration":
        return pa.array(masked((small - 6).tolist()), pa.duration("ms"))
    if kind == "decimal":
        return pa.array(masked([(decimal.Decimal(int(v) - 6) / 7).quantize(decimal.Decimal("1e-6"))
                                for v in small]), pa.decimal128(20, 6))
    if kind == "dictionary":
        return pa.array(masked([f"d{v}" for v in small]), pa.string()).dictionary_encode()
    raise AssertionError(kind)


# pyarrow cannot sort these: its order of the same values in a type it sorts is the oracle
SORTED_AS = {"float16": pa.float32(), "string_view": pa.string(), "dictionary": pa.string()}

KINDS = ["int64", "uint8", "double", "float16", "string", "large_binary", "string_view", "bool",
         "timestamp_tz", "date32", "time64", "duration", "decimal", "dictionary"]


def _rows(table):
    return [tuple("nan" if isinstance(v, float) and math.isnan(v) else v for v in r.values())
            for r in table.to_pylist()]


def _theirs(table, sorting, kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)     # pyarrow's null_placement keyword
        return table.sort_by(sorting, **kwargs)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("order, placement", [("ascending", "at_end"), ("descending", "at_end"),
                                              ("ascending", "at_start"),
                                              ("descending", "at_start")])
def test_one_key_of_each_type_orders_rows_as_pyarrow(kind, order, placement):
    rng = np.random.default_rng(KINDS.index(kind))
    table = pa.table({"k": _column(kind, rng), "row": pa.array(range(N))})
    sorting = [("k", order)]
    oracle = table if kind not in SORTED_AS else table.set_column(
        0, "k", table.column("k").cast(SORTED_AS[kind]))
    theirs = _theirs(oracle, sorting, {"null_placement": placement})
    ours = arrowipc.table(table).sort_by(sorting, null_placement=placement)
    assert isinstance(ours, arrowipc.Table)
    order = theirs.column("row").to_pylist()
    assert ours.column("row").to_pylist() == order
    rows = _rows(table)
    assert _rows(ours.to_pyarrow()) == [rows[i] for i in order]
    assert ours.schema.equals(arrowipc.schema(table.schema))


def test_several_keys_over_chunked_columns_keep_ties_in_order():
    rng = np.random.default_rng(7)
    table = pa.table({"s": _column("string", rng), "f": _column("double", rng),
                      "i": _column("int64", rng), "row": pa.array(range(N))})
    chunked = pa.Table.from_batches(table.to_batches(max_chunksize=37))
    sorting = [("s", "descending"), ("f", "ascending"), ("i", "descending")]
    ours = arrowipc.table(chunked).sort_by(sorting)
    assert _rows(ours.to_pyarrow()) == _rows(_theirs(table, sorting, {}))
    # rows equal on every key come in their original order
    keys = [(r["s"], r["f"], r["i"]) for r in ours.to_pylist()]
    rows = ours.column("row").to_pylist()
    for a in range(1, len(rows)):
        if repr(keys[a]) == repr(keys[a - 1]):
            assert rows[a] > rows[a - 1]


def test_a_record_batch_sorts_to_a_record_batch():
    batch = pa.record_batch({"k": [3, None, 1, 3, 2], "v": list("abcde")})
    ours = arrowipc.record_batch(batch).sort_by("k")
    assert isinstance(ours, arrowipc.RecordBatch)
    assert pa.record_batch(ours).equals(batch.sort_by("k"))


def test_a_per_key_placement_and_the_keyword_as_pyarrow():
    table = pa.table({"a": [None, 1.0, float("nan"), 1.0, None, 0.5],
                      "b": ["x", None, "y", "x", "z", None], "row": list(range(6))})
    for sorting, kwargs in [([("a", "descending", "at_start"), ("b", "ascending")], {}),
                            ([("b", "ascending", "at_start"), ("a", "ascending")],
                             {"null_placement": "at_end"})]:
        got = arrowipc.table(table).sort_by(sorting, **kwargs).to_pyarrow()
        assert _rows(got) == _rows(_theirs(table, sorting, kwargs))


def test_empty_and_all_null_keys():
    empty = pa.table({"k": pa.array([], pa.int32())})
    assert arrowipc.table(empty).sort_by("k").num_rows == 0
    nulls = pa.table({"k": pa.nulls(4, pa.int64()), "row": [0, 1, 2, 3]})
    assert arrowipc.table(nulls).sort_by("k").column("row").to_pylist() == [0, 1, 2, 3]


def test_an_unknown_key_is_pyarrows_error():
    table = arrowipc.table({"a": [1, 2]})
    with pytest.raises(ArrowInvalid, match=r"Invalid sort key column: No match for "
                                           r"FieldRef.Name\(zz\)"):
        table.sort_by("zz")


@pytest.mark.parametrize("sorting, kwargs, error, message", [
    ([("a", "up")], {}, ValueError, '"up" is not a valid sort order'),
    ("a", {"null_placement": "middle"}, ValueError, '"middle" is not a valid null placement'),
    ([], {}, ArrowInvalid, "must be an explicit non-empty ordering"),
    ("a", {"stable": True}, TypeError, "unexpected keyword argument 'stable'"),
])
def test_bad_orders_placements_and_keywords_are_refused(sorting, kwargs, error, message):
    with pytest.raises(error, match=message):
        arrowipc.table({"a": [1, 2]}).sort_by(sorting, **kwargs)


def test_a_nested_key_is_not_implemented_naming_the_column():
    table = arrowipc.table(pa.table({"l": [[1], [0]]}))
    with pytest.raises(ArrowNotImplementedError, match="sort_by: column 'l' is nested"):
        table.sort_by("l")


@pytest.mark.parametrize("type_", [pa.binary(), pa.large_binary()])
def test_byte_strings_order_bytewise_with_zero_bytes_and_prefixes(type_):
    values = [b"a\x00", b"", b"a", None, b"a\x00\x00", b"b", b"a\x00b", b"\x00", b"ab", b"a\x00",
              b"\xff", b"\x00\x00"]
    table = pa.table({"k": pa.array(values, type_), "row": list(range(len(values)))})
    for order in ("ascending", "descending"):
        want = _theirs(table, [("k", order)], {}).column("row").to_pylist()
        got = arrowipc.table(table).sort_by([("k", order)]).column("row").to_pylist()
        assert got == want


def test_sliced_chunks_of_different_widths_and_a_long_value_sort_as_pyarrow():
    rng = np.random.default_rng(3)
    words = [f"w{v}" * int(rng.integers(1, 4)) for v in rng.integers(0, 50, 400)]
    base = pa.array(words, pa.large_string())
    chunks = [base.slice(5, 100), base.slice(150, 90), pa.array(["é" * 3000, "a", None],
                                                                 pa.large_string())]
    table = pa.table({"k": pa.chunked_array(chunks), "row": list(range(193))})
    want = _theirs(table, "k", {}).column("row").to_pylist()
    assert arrowipc.table(table).sort_by("k").column("row").to_pylist() == want
    # without the long value the keys are sorted as padded byte strings
    short = table.slice(0, 190)
    want = _theirs(short, [("k", "descending")], {}).column("row").to_pylist()
    assert arrowipc.table(short).sort_by([("k", "descending")]).column("row").to_pylist() == want


def test_empty_strings_only():
    table = pa.table({"k": ["", None, ""], "row": [0, 1, 2]})
    assert arrowipc.table(table).sort_by("k").column("row").to_pylist() == [0, 2, 1]
