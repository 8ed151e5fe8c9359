"""Expressions (arrowipc.compute.field / scalar / Expression) against pyarrow's: printing,
conversion of pyarrow Expression objects, evaluation and Table/RecordBatch.filter, bind and
might_match (the dataset planner's contract), and pyarrow's error for each misuse."""
import datetime
import decimal
import pickle

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.dataset as ds
import pytest

import arrowipc
import arrowipc.compute as ac
from arrowipc.errors import ArrowInvalid, ArrowNotImplementedError, ArrowTypeError
from arrowipc.expression import to_expression
from arrowipc.ipc.statistics import batch_statistics


# Each builder makes the same expression from a module with pyarrow.compute's names (pc or ac).
BUILDERS = {
    "compare": lambda m: m.field("x") > 3,
    "reflected": lambda m: 3 < m.field("x"),
    "all_comparisons": lambda m: (m.field("x") == 1) | (m.field("x") != 2) | (m.field("x") < 3) |
    (m.field("x") <= 4) | (m.field("x") >= 5),
    "kleene": lambda m: (m.field("x") > 1) & ~(m.field("s") == "b") | m.field("b"),
    "nested": lambda m: m.field("st", "a") > 1,
    "nested_tuple": lambda m: m.field(("st", "a")) >= 2,
    "by_index": lambda m: m.field(0) > 1,
    "isin": lambda m: m.field("s").isin(["a", "c", None]),
    "isin_ints": lambda m: m.field("x").isin([1, 5, 7]),
    "isin_empty": lambda m: m.field("x").isin([]),
    "is_null": lambda m: m.field("f").is_null(),
    "is_null_nan": lambda m: m.field("f").is_null(nan_is_null=True),
    "is_valid": lambda m: m.field("x").is_valid(),
    "is_nan": lambda m: m.field("f").is_nan(),
    "arith": lambda m: (m.field("x") + 1) * 2 - m.field("f") / 4 > 0,
    "rarith": lambda m: m.scalar(10) - m.field("x") > m.field("f"),
    "cast": lambda m: m.field("x").cast("float64") / 2 >= 1.5,
    "cast_unsafe": lambda m: m.field("f").cast(pa.int8() if m is pc else arrowipc.int8(),
                                               safe=False) == 1,
    "strings": lambda m: (m.field("s") >= "b") & (m.field("s") != ""),
    "literal_true": lambda m: m.scalar(True),
    "literal_and": lambda m: m.scalar(True) & (m.field("x") > 2),
    "dates": lambda m: m.field("d") > datetime.date(2020, 1, 2),
    "timestamps": lambda m: m.field("ts") <= datetime.datetime(2020, 1, 1, 12),
    "decimal": lambda m: m.field("dec") > decimal.Decimal("1.5"),
    "floats": lambda m: m.field("f") < 0.5,
    "null_literal": lambda m: m.field("x") == m.scalar(None),
    "none_operand": lambda m: m.field("x") != None,  # noqa: E711 (an expression, not a test)
    "isin_numpy": lambda m: m.field("x").isin(np.array([1, 2])),
    "isin_typed": lambda m: m.field("x").isin(
        pa.array([1, 2], pa.int8()) if m is pc else arrowipc.array([1, 2], type="int8")),
    "typed_scalar": lambda m: m.field("x") == (pa.scalar(5, pa.int8()) if m is pc else
                                               arrowipc.array([5], type="int8")[0]),
    "and_python_bool": lambda m: (m.field("x") > 1) & True,
}


def _table(n=64, seed=0):
    rng = np.random.default_rng(seed)
    null = rng.random(n) < 0.2

    def nulls(values):
        return [None if null[(i * 7 + len(values)) % n] and i % 3 else v
                for i, v in enumerate(values)]
    x = nulls([int(v) for v in rng.integers(-3, 9, n)])
    f = nulls([float(v) for v in rng.integers(-4, 5, n) / 2])
    if n > 5:
        f[5] = float("nan")
    return pa.table({
        "x": pa.array(x, pa.int64()),
        "s": pa.array(nulls([["a", "b", "c", ""][int(i)] for i in rng.integers(0, 4, n)])),
        "b": pa.array(nulls([bool(v) for v in rng.integers(0, 2, n)])),
        "f": pa.array(f),
        "st": pa.array(nulls([{"a": int(v)} for v in rng.integers(0, 4, n)]),
                       pa.struct([("a", pa.int64())])),
        "d": pa.array(nulls([datetime.date(2020, 1, 1 + int(v)) for v in rng.integers(0, 4, n)])),
        "ts": pa.array(nulls([datetime.datetime(2020, 1, 1, int(v)) for v in
                              rng.integers(0, 24, n)]), pa.timestamp("us")),
        "dec": pa.array(nulls([decimal.Decimal(int(v)) / 2 for v in rng.integers(0, 6, n)]),
                        pa.decimal128(6, 2)),
    })


@pytest.mark.parametrize("name", sorted(BUILDERS))
def test_printing_matches_pyarrow(name):
    theirs, ours = BUILDERS[name](pc), BUILDERS[name](ac)
    assert str(ours) == str(theirs)
    assert repr(ours) == repr(theirs).replace("<pyarrow.compute.", "<arrowipc.compute.")


def test_operators_use_the_checked_functions_as_pyarrow():
    assert str(ac.field("x") + 1) == "add_checked(x, 1)"
    assert str(ac.field("x") / 2) == "divide_checked(x, 2)"


@pytest.mark.parametrize("name", sorted(BUILDERS))
def test_pyarrow_expressions_are_converted(name):
    theirs = BUILDERS[name](pc)
    if name == "by_index":
        # pyarrow cannot serialize a reference by position, so it cannot be handed over
        with pytest.raises(ArrowNotImplementedError, match="pyarrow does not serialize it"):
            to_expression(theirs)
        return
    converted = to_expression(theirs)
    assert str(converted) == str(theirs)
    assert converted.equals(BUILDERS[name](ac))
    assert converted.equals(theirs)


@pytest.mark.parametrize("name", sorted(BUILDERS))
def test_table_filter_with_an_expression_matches_pyarrow(name):
    pt = _table()
    ours = arrowipc.table(pt)
    expected = pt.filter(BUILDERS[name](pc))
    got = ours.filter(BUILDERS[name](ac))
    assert got.to_pydict() == expected.to_pydict() or \
        str(got.to_pydict()) == str(expected.to_pydict())        # NaN rows compare by text
    # pyarrow's own Expression object, and a RecordBatch
    if name != "by_index":
        assert str(ours.filter(BUILDERS[name](pc)).to_pydict()) == str(expected.to_pydict())
    batch = ours.to_batches()[0]
    assert str(batch.filter(BUILDERS[name](ac)).to_pydict()) == \
        str(pt.to_batches()[0].filter(BUILDERS[name](pc)).to_pydict())


@pytest.mark.parametrize("name", ["arith", "rarith", "cast", "kleene", "isin", "is_null_nan"])
def test_evaluate_matches_pyarrow_projection(name):
    pt = _table(seed=3)
    inner = BUILDERS[name](pc)
    # the boolean expression's operands, evaluated as pyarrow's dataset projection does
    expected = ds.dataset(pt).to_table(columns={"r": inner}).column("r")
    got = BUILDERS[name](ac).evaluate(arrowipc.table(pt))
    assert isinstance(got, arrowipc.ChunkedArray)
    assert got.to_pylist() == expected.to_pylist()
    arith = (ac.field("x") + 1) * 2 - ac.field("f") / 4
    expected = ds.dataset(pt).to_table(
        columns={"r": (pc.field("x") + 1) * 2 - pc.field("f") / 4}).column("r")
    assert str(arith.evaluate(arrowipc.table(pt).to_batches()[0]).to_pylist()) == \
        str(expected.to_pylist())


def test_evaluate_data_on_columns():
    t = arrowipc.table({"x": [1, 2, None], "y": [3, 2, 1]})
    cols = {n: t.column(n).chunk(0).data for n in t.column_names}
    out = (ac.field("x") < ac.field("y")).evaluate_data(cols, 3)
    assert arrowipc.array([True, False, None]).equals(arrowipc.Array(out)) or \
        arrowipc.array([True, False, None]).to_pylist() == [True, False, None]
    from arrowipc.array import make_array
    assert make_array(out).to_pylist() == [True, False, None]
    # a literal is broadcast to the rows
    assert make_array(ac.scalar(True).evaluate_data(cols, 3)).to_pylist() == [True] * 3


def test_nested_field_takes_the_struct_nulls():
    st = pa.array([{"a": 1}, None, {"a": 3}], pa.struct([("a", pa.int64())]))
    pt = pa.table({"st": st}).slice(1)
    assert arrowipc.table(pt).filter(ac.field("st", "a") >= 0).to_pydict() == \
        pt.filter(pc.field("st", "a") >= 0).to_pydict()


def test_field_names_are_the_top_level_columns():
    e = (ac.field("a") > 1) & ac.field("st", "x").isin([1]) | ~ac.field("b").is_null()
    assert e.field_names() == frozenset({"a", "st", "b"})
    assert ac.scalar(1).field_names() == frozenset()


def test_pickle_round_trip():
    e = (ac.field("x") > 3) & ac.field("s").isin(["a", None]) | ac.field("f").cast("int8")
    back = pickle.loads(pickle.dumps(e))
    assert str(back) == str(e) and back.equals(e)


def test_equals_compares_literal_types_as_pyarrow():
    assert (pc.field("x") == 1).equals(pc.field("x") == 1.0) is False
    assert (ac.field("x") == 1).equals(ac.field("x") == 1.0) is False
    assert (ac.field("x") == 1).equals(ac.field("x") == 1) is True


# -- bind, literal, might_match -----------------------------------------------------------------

PARTITION_EXPRESSIONS = {
    "and": lambda m: (m.field("p") == "DE") & (m.field("x") > 3),
    "or": lambda m: (m.field("p") == "DE") | (m.field("x") > 3),
    "not": lambda m: ~(m.field("p") == "DE"),
    "isin": lambda m: m.field("p").isin(["DE", None]) & (m.field("x") < 5),
    "is_null": lambda m: m.field("p").is_null() | (m.field("x") == 1),
    "null_cmp": lambda m: (m.field("p") != "FR") & m.field("x").is_valid(),
}


@pytest.mark.parametrize("p", ["DE", "FR", None])
@pytest.mark.parametrize("name", sorted(PARTITION_EXPRESSIONS))
def test_bind_gives_the_rows_of_the_whole_expression(name, p):
    # binding the partition value, then filtering, keeps exactly the rows the whole expression
    # keeps on the table with the partition column added (pyarrow as the oracle)
    pt = pa.table({"x": pa.array([1, 2, None, 4, 5, 6])})
    with_p = pt.append_column("p", pa.array([p] * len(pt), pa.string()))
    expected = with_p.filter(PARTITION_EXPRESSIONS[name](pc)).drop_columns(["p"])
    bound = PARTITION_EXPRESSIONS[name](ac).bind({"p": p})
    assert "p" not in bound.field_names()
    ours = arrowipc.table(pt)
    if bound.is_literal():
        keep = bound.literal() is True
        got = ours if keep else ours.slice(0, 0)
    else:
        got = ours.filter(bound)
    assert got.to_pydict() == expected.to_pydict()


def test_bind_folds_constants_with_kleene_logic():
    e = (ac.field("p") == "DE") & (ac.field("x") > 3)
    assert e.bind({"p": "FR"}).literal() is False
    assert str(e.bind({"p": "DE"})) == "(x > 3)"
    assert str(e.bind({"p": None})) == "(null[bool] and (x > 3))"
    assert ((ac.field("p") == "DE") | ac.field("x").is_null()).bind({"p": "DE"}).literal() is True
    assert (ac.field("p") + 1).bind({"p": 2}).literal() == 3
    assert ac.field("x").bind({"p": 1}).is_literal() is False


def test_bind_leaves_a_function_it_cannot_evaluate_unfolded():
    e = to_expression(pc.utf8_upper(pc.field("p")) == "DE")
    bound = e.bind({"p": "de"})
    assert str(bound) == '(utf8_upper("de") == "DE")'
    with pytest.raises(ArrowNotImplementedError,
                       match="arrowipc cannot evaluate the function 'utf8_upper'"):
        bound.evaluate(arrowipc.table({"x": [1]}))


def test_literal_of_a_non_literal_raises():
    with pytest.raises(ArrowTypeError, match=r"expression \(x > 1\) is not a literal"):
        (ac.field("x") > 1).literal()


def _stats(pt):
    return batch_statistics(arrowipc.record_batch(pt.to_batches()[0]))


def test_might_match_is_never_wrong_on_random_batches():
    rng = np.random.default_rng(0)
    exprs = [lambda m, v=v: op(m, v) for v in (-4, 0, 3, 9, 20) for op in (
        lambda m, v: m.field("x") > v, lambda m, v: m.field("x") == v,
        lambda m, v: v >= m.field("x"), lambda m, v: (m.field("x") < v) & (m.field("f") > 0),
        lambda m, v: (m.field("x") < v) | m.field("s").isin(["zz"]),
        lambda m, v: m.field("x").isin([v, v + 1]), lambda m, v: ~(m.field("x") > v))]
    exprs += [lambda m: m.field("s") == "b", lambda m: m.field("s") < "a",
              lambda m: m.field("x").is_null(), lambda m: m.field("x").is_valid(),
              lambda m: m.field("x").isin([None])]
    pruned = 0
    for seed in range(12):
        pt = _table(n=int(rng.integers(1, 30)), seed=seed)
        pt = pt.slice(0, len(pt))
        stats = _stats(pt)
        for make in exprs:
            matches = pt.filter(make(pc)).num_rows
            might = make(ac).might_match(stats)
            assert might or matches == 0, (str(make(ac)), stats)
            pruned += not might
    assert pruned >= 8          # the statistics do rule batches out


def test_might_match_truth_table():
    stats = {"version": 1, "rows": 10, "columns": {
        "x": {"null_count": 0, "min": 3, "max": 7},
        "n": {"null_count": 10},
        "dec": {"null_count": 0, "min": "1.50", "max": "10.25"}}}
    x = ac.field("x")
    cases = [
        (x > 7, False), (x > 6, True), (x >= 7, True), (x < 3, False), (x <= 3, True),
        (x == 8, False),
        (x == 5, True),
        (8 <= x, False),
        (2 > x, False),
        (x.isin([1, 2, 8]), False),
        (x.isin([1, 4]), True),
        (x.is_null(), False),
        (x.is_valid(), True),
        ((x > 7) & (x < 5), False),
        ((x > 7) | (x < 5), True),
        ((x > 7) | (x > 8), False),
        (~(x > 1), True),
        (x == ac.scalar(None), False),
        (ac.scalar(False), False),
        (ac.scalar(True), True),
        (ac.field("n") > 1, False),
        (ac.field("n").is_null(), True),
        (ac.field("unknown") > 1, True),
        (ac.field("dec") > decimal.Decimal("10.3"), False),
        (ac.field("dec") > decimal.Decimal("9.99"), True),
        (x != 5, True),
        (ac.field("st", "a") > 100, True),
    ]
    for expr, expected in cases:
        assert expr.might_match(stats) is expected, str(expr)
    assert (x > 100).might_match(None) is True


def test_might_match_compares_temporal_literals_in_the_column_unit():
    pt = pa.table({"ts": pa.array([datetime.datetime(2020, 1, 1, h) for h in (1, 2, 3)],
                                  pa.timestamp("ms")),
                   "d": pa.array([datetime.date(2020, 1, d) for d in (1, 2)] + [None])})
    ours = arrowipc.table(pt)
    stats = _stats(pt)
    late = ac.field("ts") > datetime.datetime(2020, 1, 1, 3)
    early = ac.field("d") < datetime.date(2020, 1, 1)
    assert late.might_match(stats, ours.schema) is False
    assert early.might_match(stats, ours.schema) is False
    assert (ac.field("d") <= datetime.date(2020, 1, 1)).might_match(stats, ours.schema) is True
    # without the schema the unit is unknown: no pruning, never a wrong answer
    assert late.might_match(stats) is True


def test_to_expression_accepts_none_literals_and_expressions():
    assert to_expression(None) is None
    e = ac.field("x") > 1
    assert to_expression(e) is e
    assert to_expression(True).literal() is True
    assert str(to_expression(pc.field("x") > 1)) == "(x > 1)"


# -- pyarrow's error for each misuse -------------------------------------------------------------

def _both_raise(ours_call, theirs_call, ours_type):
    with pytest.raises(Exception) as theirs:
        theirs_call()
    with pytest.raises(ours_type) as ours:
        ours_call()
    assert str(ours.value) == str(theirs.value)
    return ours.value


def test_unknown_field_raises_as_pyarrow():
    pt = _table()
    _both_raise(lambda: arrowipc.table(pt).filter(ac.field("nope") > 1),
                lambda: pt.filter(pc.field("nope") > 1), ArrowInvalid)
    _both_raise(lambda: arrowipc.table(pt).filter(ac.field("st", "zz") > 1),
                lambda: pt.filter(pc.field("st", "zz") > 1), ArrowInvalid)


def test_non_boolean_filter_raises_as_pyarrow():
    pt = _table()
    _both_raise(lambda: arrowipc.table(pt).filter(ac.field("x") + 1),
                lambda: pt.filter(pc.field("x") + 1), ArrowTypeError)
    _both_raise(lambda: arrowipc.table(pt).filter(ac.scalar(None)),
                lambda: pt.filter(pc.scalar(None)), ArrowTypeError)


def test_bool_of_an_expression_raises_as_pyarrow():
    _both_raise(lambda: bool(ac.field("x") > 1), lambda: bool(pc.field("x") > 1), ValueError)


def test_constructor_and_field_misuse_raise_as_pyarrow():
    _both_raise(lambda: ac.Expression(), lambda: pc.Expression(), TypeError)
    _both_raise(lambda: ac.field(), lambda: pc.field(), ValueError)
    _both_raise(lambda: ac.field(1.5), lambda: pc.field(1.5), TypeError)
    _both_raise(lambda: ac.field("x").cast(), lambda: pc.field("x").cast(), TypeError)


def test_equals_with_a_non_expression_raises_type_error():
    with pytest.raises(TypeError, match="Argument 'other' has incorrect type"):
        ac.field("x").equals(1)


def test_type_errors_inside_an_expression_raise_as_pyarrow():
    pt = _table()
    _both_raise(lambda: arrowipc.table(pt).filter(ac.field("s") > 1),
                lambda: pt.filter(pc.field("s") > 1), Exception)
    _both_raise(lambda: arrowipc.table(pt).filter(ac.field("x") / 0 > 1),
                lambda: pt.filter(pc.field("x") / 0 > 1), ArrowInvalid)


def test_mask_filters_are_unchanged():
    t = arrowipc.table({"x": [1, 2, 3]})
    assert t.filter([True, None, True]).to_pydict() == {"x": [1, 3]}
    assert t.filter([True, None, False], null_selection_behavior="emit_null").to_pydict() == \
        {"x": [1, None]}


def test_pyarrow_scalars_and_arrays_inside_arrowipc_expressions():
    theirs = pc.field("x") == pa.scalar(5, pa.int8())
    assert str(ac.field("x") == pa.scalar(5, pa.int8())) == str(theirs)
    e = ac.field("x").isin(pa.array([1, None], pa.int16()))
    assert str(e) == str(pc.field("x").isin(pa.array([1, None], pa.int16())))
    t = arrowipc.table({"x": [1, 2, None]})
    assert t.filter(e).to_pydict() == {"x": [1, None]}
