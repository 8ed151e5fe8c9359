"""arrowipc.compute's aggregations and vector functions under pyarrow.compute's names, with
pyarrow.compute as the oracle: every option, chunked and empty columns, all-null columns."""
import math

import numpy as np
import pytest

import arrowipc
import arrowipc.compute as ac

pa = pytest.importorskip("pyarrow")
pc = pytest.importorskip("pyarrow.compute")

rng = np.random.default_rng(1)
COLUMNS = [
    pa.array(rng.integers(-5, 5, 50), mask=rng.random(50) < 0.2),
    pa.array(rng.normal(size=50)),
    pa.array(rng.integers(0, 9, 20).astype(np.uint8)),
    pa.chunked_array([[1, 2, None], [], [4]]),
    pa.array([True, False, None]),
    pa.array([], pa.int64()),
    pa.array([None, None], pa.float64()),
    pa.array(["b", "a", None, "b"]),
]
AGGREGATIONS = [
    ("sum", {}), ("sum", {"min_count": 0}), ("sum", {"skip_nulls": False}), ("mean", {}),
    ("min", {}), ("max", {}), ("min_max", {}), ("product", {}), ("count", {}),
    ("count", {"mode": "all"}), ("count", {"mode": "only_null"}), ("count_distinct", {}),
    ("count_distinct", {"mode": "all"}), ("stddev", {}), ("variance", {"ddof": 1}),
    ("any", {}), ("all", {}), ("first", {}), ("last", {}),
]


def _ours(column):
    if isinstance(column, pa.ChunkedArray):
        return arrowipc.chunked_array(column)
    return arrowipc.array(column)


def _outcome(call):
    try:
        return call().as_py()
    except Exception as exc:        # the class of error is compared, not its words
        return ("error", isinstance(exc, (TypeError, NotImplementedError, KeyError)))


@pytest.mark.parametrize("column", COLUMNS, ids=lambda c: str(c.type))
@pytest.mark.parametrize("function, options", AGGREGATIONS,
                         ids=[f"{f}{o}" for f, o in AGGREGATIONS])
def test_aggregations_as_pyarrow(column, function, options):
    expected = _outcome(lambda: getattr(pc, function)(column, **options))
    got = _outcome(lambda: getattr(ac, function)(_ours(column), **options))
    if isinstance(expected, float) and isinstance(got, float):
        assert math.isclose(expected, got, rel_tol=1e-12) or (
            math.isnan(expected) and math.isnan(got))
    else:
        assert repr(got) == repr(expected)


def test_aggregations_take_pyarrow_options_and_plain_values():
    values = arrowipc.array([1, None, 3])
    options = pc.ScalarAggregateOptions(skip_nulls=False)
    assert ac.sum(values, options=options).as_py() is None
    assert ac.count(values, options=pc.CountOptions(mode="all")).as_py() == 3
    assert ac.sum([1, 2, 3]).as_py() == 6 and ac.mean(np.arange(5)).as_py() == 2.0
    assert ac.max(pa.array([4, 9, 1])).as_py() == 9                  # another library's array
    with pytest.raises(TypeError, match="an aggregation takes an array, got int"):
        ac.sum(5)


def test_vector_functions_as_pyarrow():
    theirs = pa.array([1, 2, 3, None, 2])
    ours = arrowipc.array(theirs)
    pairs = [
        (ac.cast(ours, arrowipc.float64()), pc.cast(theirs, pa.float64())),
        (ac.take(ours, [0, 2, None]), pc.take(theirs, pa.array([0, 2, None]))),
        (ac.filter(ours, [True, False, True, None, False]),
         pc.filter(theirs, pa.array([True, False, True, None, False]))),
        (ac.filter(ours, [True, False, True, None, False], "emit_null"),
         pc.filter(theirs, pa.array([True, False, True, None, False]), "emit_null")),
        (ac.unique(ours), pc.unique(theirs)),
        (ac.value_counts(ours), pc.value_counts(theirs)),
        (ac.dictionary_encode(ours), pc.dictionary_encode(theirs)),
        (ac.fill_null(ours, 0), pc.fill_null(theirs, 0)),
        (ac.drop_null(ours), pc.drop_null(theirs)),
        (ac.index_in(ours, arrowipc.array([2, None])),
         pc.index_in(theirs, value_set=pa.array([2, None]))),
        (ac.index_in(ours, arrowipc.array([2, None]), skip_nulls=True),
         pc.index_in(theirs, value_set=pa.array([2, None]), skip_nulls=True)),
        (ac.index_in(arrowipc.array(["a", "b", None]), pa.array(["b", "x"])),
         pc.index_in(pa.array(["a", "b", None]), value_set=pa.array(["b", "x"]))),
    ]
    for got, expected in pairs:
        assert pa.array(got).equals(expected), (got, expected)


def test_vector_functions_on_tables_and_chunked_columns():
    table = arrowipc.table({"x": [3, 1, None], "s": ["c", "a", "b"]})
    assert ac.take(table, [2, 0]).to_pydict() == {"x": [None, 3], "s": ["b", "c"]}
    assert ac.drop_null(table).num_rows == 2
    chunked = arrowipc.chunked_array([[1, 2], [2, None]])
    assert ac.index_in(chunked, arrowipc.array([2])).to_pylist() == [None, 0, 0, None]
    assert ac.sum(chunked).as_py() == 5 and ac.count_distinct(chunked).as_py() == 2


@pytest.mark.parametrize("value_set, values", [
    (pa.array([None, 0, 5, 0]), pa.array([0, 5, None, 7])),      # the null slot holds 0
    (pa.array(["", None, "a"]), pa.array(["", "a", None])),       # ... and an empty string
])
def test_index_in_skips_a_null_slot_holding_a_members_bytes(value_set, values):
    for skip_nulls in (False, True):
        got = ac.index_in(arrowipc.array(values), arrowipc.array(value_set),
                          skip_nulls=skip_nulls)
        assert got.to_pylist() == \
            pc.index_in(values, value_set=value_set, skip_nulls=skip_nulls).to_pylist()
