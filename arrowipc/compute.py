"""pyarrow.compute's names for what arrowipc computes: expressions (`field`, `scalar`,
`Expression`) and the comparison, Kleene logic, null, membership and arithmetic functions on
Arrays, ChunkedArrays and scalars, returning arrowipc objects; the aggregations of a whole column
(`sum`, `mean`, `min`, `max`, `count`, `count_distinct`, ... each a Scalar, by the grouping
kernels with no key) and the vector functions the arrays have as methods (`cast`, `take`,
`filter`, `unique`, `value_counts`, `dictionary_encode`, `fill_null`, `drop_null`, `index_in`).
This module's `sum`, `min`, `max`, `any`, `all` and `filter` are pyarrow's, not the builtins.

    import arrowipc.compute as pc
    pc.greater(table["x"], 3); table.filter(pc.field("x") > 3)
"""
from __future__ import annotations

import builtins

from .array import Array, ChunkedArray, Scalar, array, make_array
from .data import compute as K
from .data import string_predicates as SP
from .expression import Expression, field, scalar, to_expression

TYPE_CHECKING = False               # typing itself is not imported at run time
if TYPE_CHECKING:
    from typing import Any

__all__ = ["Expression", "abs", "abs_checked", "add", "add_checked", "and_kleene", "divide",
           "divide_checked", "ends_with", "equal", "field", "greater", "greater_equal", "invert",
           "is_in", "is_nan", "is_null", "is_valid", "less", "less_equal", "match_substring",
           "multiply", "multiply_checked", "negate", "negate_checked", "not_equal", "or_kleene",
           "scalar", "starts_with", "subtract", "subtract_checked", "to_expression"]


def _datum(value: Any) -> Any:
    """A ChunkedArray's chunks, an Array's ArrayData, or a ScalarData of anything else."""
    if isinstance(value, ChunkedArray):
        return [c.data for c in value.chunks]
    if isinstance(value, Array):
        return value.data
    if isinstance(value, Scalar):
        return K.ScalarData(value._array.data)   # noqa: SLF001
    if isinstance(value, Expression):
        raise TypeError("compute functions take arrays and scalars; an Expression is "
                        "evaluated with Expression.evaluate or Table.filter")
    if hasattr(value, "__arrow_c_array__") or hasattr(value, "__arrow_c_stream__"):
        ours = array(value) if hasattr(value, "__arrow_c_array__") else None
        if ours is not None:
            return ours.data
        from .array import chunked_array
        return [c.data for c in chunked_array(value).chunks]
    if type(value).__module__.startswith("pyarrow") and hasattr(value, "as_py"):
        return K.ScalarData(array([value.as_py()], type=_type_of(value)).data)
    return K.scalar_data(value)


def _type_of(value: Any) -> Any:
    from .data.cschema import import_field
    return import_field(value.type).type


def _wrap(out: Any) -> Any:
    if isinstance(out, K.ScalarData):
        return Scalar(make_array(out.data))
    return make_array(out)


def _call(kernel: Any, *args: Any) -> Any:
    """Apply `kernel` to the datums of `args`, chunk by chunk where one is a ChunkedArray."""
    datums = [_datum(a) for a in args]
    chunked = [d for d in datums if isinstance(d, list)]
    if not chunked:
        return _wrap(kernel(*datums))
    lengths = [len(c) for c in chunked]
    if len(set(lengths)) > 1 or builtins.any(
            [x.length for x in c] != [x.length for x in chunked[0]] for c in chunked):
        from .data.selection import combined_data
        datums = [combined_data(d, d[0].type) if isinstance(d, list) and d else d
                  for d in datums]
        return ChunkedArray([_wrap(kernel(*datums))])
    chunks = []
    for i in range(lengths[0]):
        chunks.append(_wrap(kernel(*[d[i] if isinstance(d, list) else d for d in datums])))
    if not chunks:
        empty = [d for d in args if isinstance(d, ChunkedArray)][0]
        probe = kernel(*[make_array_of(empty) if isinstance(d, list) else d for d in datums])
        return ChunkedArray([], type=probe.type)
    return ChunkedArray(chunks)


def make_array_of(chunked: ChunkedArray) -> Any:
    """An empty ArrayData of a ChunkedArray's type."""
    return array([], type=chunked.type).data


def equal(x: Any, y: Any) -> Any:
    """x == y, null where either is null."""
    return _call(lambda a, b: K.compare("equal", a, b), x, y)


def not_equal(x: Any, y: Any) -> Any:
    """x != y, null where either is null."""
    return _call(lambda a, b: K.compare("not_equal", a, b), x, y)


def less(x: Any, y: Any) -> Any:
    """x < y, null where either is null."""
    return _call(lambda a, b: K.compare("less", a, b), x, y)


def less_equal(x: Any, y: Any) -> Any:
    """x <= y, null where either is null."""
    return _call(lambda a, b: K.compare("less_equal", a, b), x, y)


def greater(x: Any, y: Any) -> Any:
    """x > y, null where either is null."""
    return _call(lambda a, b: K.compare("greater", a, b), x, y)


def greater_equal(x: Any, y: Any) -> Any:
    """x >= y, null where either is null."""
    return _call(lambda a, b: K.compare("greater_equal", a, b), x, y)


def and_kleene(x: Any, y: Any) -> Any:
    """Kleene AND: false if either is false, else null if either is null."""
    return _call(K.and_kleene, x, y)


def or_kleene(x: Any, y: Any) -> Any:
    """Kleene OR: true if either is true, else null if either is null."""
    return _call(K.or_kleene, x, y)


def invert(values: Any) -> Any:
    """NOT of booleans (null stays null)."""
    return _call(K.invert, values)


def is_null(values: Any, *, nan_is_null: bool = False) -> Any:
    """True where the value is null (or NaN with nan_is_null)."""
    return _call(lambda a: K.is_null(a, nan_is_null), values)


def is_nan(values: Any) -> Any:
    """True where the value is NaN, null where it is null."""
    return _call(K.is_nan, values)


def is_valid(values: Any) -> Any:
    """True where the value is not null."""
    return _call(K.is_valid, values)


def is_in(values: Any, value_set: Any = None, *, skip_nulls: bool = False) -> Any:
    """Whether each value is in `value_set` (a null matches a null in the set unless
    skip_nulls)."""
    if value_set is None:
        raise TypeError("is_in() needs value_set")
    vs = value_set if isinstance(value_set, Array) else \
        ChunkedArray.combine_chunks(value_set) if isinstance(value_set, ChunkedArray) else \
        array(value_set if not hasattr(value_set, "to_pylist") else value_set.to_pylist())
    behavior = "SKIP" if skip_nulls else "MATCH"
    return _call(lambda a: K.is_in(a, vs.data, behavior), values)


_ARITH_DOCS = {
    "add": "x + y elementwise in the common numeric type; integers wrap on overflow.",
    "subtract": "x - y elementwise in the common numeric type; integers wrap on overflow.",
    "multiply": "x * y elementwise in the common numeric type; integers wrap on overflow.",
    "divide": "x / y elementwise in the common numeric type: integers divide truncating and a "
              "zero divisor raises ArrowInvalid; floats give inf or nan.",
    "add_checked": "x + y elementwise; integer overflow raises ArrowInvalid.",
    "subtract_checked": "x - y elementwise; integer overflow raises ArrowInvalid.",
    "multiply_checked": "x * y elementwise; integer overflow raises ArrowInvalid.",
    "divide_checked": "x / y elementwise; a zero divisor (float ones too) and integer overflow "
                      "raise ArrowInvalid.",
}


def _arith(name: str) -> Any:
    def function(x: Any, y: Any) -> Any:
        return _call(lambda a, b: K.arithmetic(name, a, b), x, y)
    function.__name__ = name
    function.__qualname__ = name
    function.__doc__ = _ARITH_DOCS[name]
    return function


add = _arith("add")
subtract = _arith("subtract")
multiply = _arith("multiply")
divide = _arith("divide")
add_checked = _arith("add_checked")
subtract_checked = _arith("subtract_checked")
multiply_checked = _arith("multiply_checked")
divide_checked = _arith("divide_checked")


# -- string predicates and unary arithmetic: on arrays as the functions above, and, as pyarrow's,
# on an Expression too (a call to evaluate later: how dataset filters use them)

def _is_expression(value: Any) -> bool:
    """Whether `value` is an Expression, ours or pyarrow's."""
    return isinstance(value, Expression) or type(value).__name__ == "Expression"


def _string_predicate(name: str) -> Any:
    def function(strings: Any, /, pattern: str, *, ignore_case: bool = False) -> Any:
        if _is_expression(strings):
            return Expression._call(name, [strings],  # noqa: SLF001
                                    {"pattern": pattern, "ignore_case": ignore_case})
        return _call(lambda a: SP.string_predicate(name, a, pattern, ignore_case), strings)
    function.__name__ = function.__qualname__ = name
    function.__doc__ = {
        "starts_with": "Whether each string or binary value starts with `pattern`.",
        "ends_with": "Whether each string or binary value ends with `pattern`.",
        "match_substring": "Whether each string or binary value contains `pattern`.",
    }[name] + " Null where the value is null; ignore_case folds case as pyarrow does."
    return function


def _unary(name: str) -> Any:
    def function(x: Any, /) -> Any:
        if _is_expression(x):
            return Expression._call(name, [x])  # noqa: SLF001
        return _call(lambda a: SP.unary_arithmetic(name, a), x)
    function.__name__ = function.__qualname__ = name
    what = "absolute value" if name.startswith("abs") else "negation"
    function.__doc__ = (f"The {what} of each integer, float or duration; " +
                        ("integer overflow (INT_MIN) raises ArrowInvalid." if "checked" in name
                         else "integers wrap (INT_MIN stays INT_MIN)."))
    return function


starts_with = _string_predicate("starts_with")
ends_with = _string_predicate("ends_with")
match_substring = _string_predicate("match_substring")
abs = _unary("abs")     # noqa: A001 (pyarrow.compute's name)
abs_checked = _unary("abs_checked")
negate = _unary("negate")
negate_checked = _unary("negate_checked")


# -- aggregations over a whole column, as pyarrow.compute's (a Scalar each) ----------------------

def _column_data(values: Any) -> Any:
    """One ArrayData of `values`: an Array's, a ChunkedArray's chunks joined, or another
    library's array or stream imported; a list or numpy array converted."""
    from .array import chunked_array
    from .data.selection import combined_data
    if isinstance(values, (list, tuple)) or type(values).__module__ == "numpy":
        return array(values).data
    if not isinstance(values, (Array, ChunkedArray)) and hasattr(values, "__arrow_c_stream__") \
            and not hasattr(values, "__arrow_c_array__"):
        values = chunked_array(values)          # another library's column, its type kept
    if isinstance(values, ChunkedArray):
        return combined_data([c.data for c in values.chunks], values.type)
    datum = _datum(values)
    if isinstance(datum, K.ScalarData):
        raise TypeError(f"an aggregation takes an array, got {type(values).__name__}")
    return datum


class _Options:
    """The settings an aggregation kernel reads (pyarrow's ScalarAggregateOptions,
    CountOptions and VarianceOptions, by attribute)."""

    def __init__(self, **settings: Any) -> None:
        self.__dict__.update(settings)


def _aggregated(function: str, values: Any, options: Any, settings: dict[str, Any]) -> Scalar:
    from .data.grouping import aggregate
    data = _column_data(values)
    opts = options if options is not None else _Options(**settings)
    [out] = aggregate([], [([data], function, opts, function)], data.length, False)
    return Scalar(make_array(out))


def _scalar_aggregation(name: str, doc: str) -> Any:
    """pyarrow.compute's `name`: an aggregation taking ScalarAggregateOptions' keywords."""
    def function(array: Any, /, *, skip_nulls: bool = True, min_count: int = 1,
                 options: Any = None, memory_pool: Any = None) -> Scalar:
        return _aggregated(name, array, options, {"skip_nulls": skip_nulls,
                                                  "min_count": min_count})
    function.__name__ = function.__qualname__ = name
    function.__doc__ = doc
    return function


sum = _scalar_aggregation(  # noqa: A001 (pyarrow.compute's name)
    "sum", "The sum of the values (int64 for signed integers, uint64 for unsigned ones, double "
    "for floats); null when fewer than `min_count` values are not null, or a null is met with "
    "skip_nulls=False.")
product = _scalar_aggregation("product", "The product of the values (the types of sum).")
mean = _scalar_aggregation("mean", "The mean of the values, a double.")
min = _scalar_aggregation(  # noqa: A001
    "min", "The smallest value (NaN only when every value is NaN).")
max = _scalar_aggregation(  # noqa: A001
    "max", "The largest value (NaN only when every value is NaN).")
min_max = _scalar_aggregation("min_max", "A struct scalar {min, max} of the values.")
any = _scalar_aggregation(  # noqa: A001
    "any", "Whether any boolean value is true (Kleene logic with skip_nulls=False).")
all = _scalar_aggregation(  # noqa: A001
    "all", "Whether every boolean value is true (Kleene logic with skip_nulls=False).")
first = _scalar_aggregation("first", "The first value (the first not null with skip_nulls).")
last = _scalar_aggregation("last", "The last value (the last not null with skip_nulls).")


def count(array: Any, /, mode: str = "only_valid", *, options: Any = None,
          memory_pool: Any = None) -> Scalar:
    """The number of values: "only_valid" (not null), "only_null" or "all"."""
    return _aggregated("count", array, options, {"mode": mode})


def count_distinct(array: Any, /, mode: str = "only_valid", *, options: Any = None,
                   memory_pool: Any = None) -> Scalar:
    """The number of distinct values ("only_valid", "only_null" or "all", as count)."""
    return _aggregated("count_distinct", array, options, {"mode": mode})


def stddev(array: Any, /, *, ddof: int = 0, skip_nulls: bool = True, min_count: int = 0,
           options: Any = None, memory_pool: Any = None) -> Scalar:
    """The standard deviation of the values (`ddof` delta degrees of freedom), a double."""
    return _aggregated("stddev", array, options, {"ddof": ddof, "skip_nulls": skip_nulls,
                                                  "min_count": min_count})


def variance(array: Any, /, *, ddof: int = 0, skip_nulls: bool = True, min_count: int = 0,
             options: Any = None, memory_pool: Any = None) -> Scalar:
    """The variance of the values (`ddof` delta degrees of freedom), a double."""
    return _aggregated("variance", array, options, {"ddof": ddof, "skip_nulls": skip_nulls,
                                                    "min_count": min_count})


# -- vector functions: the arrays' own methods under pyarrow.compute's names --------------------

def _ours(values: Any) -> Any:
    """An arrowipc Array, ChunkedArray, RecordBatch or Table of `values` (others imported)."""
    from .table import RecordBatch, Table, table
    if isinstance(values, (Array, ChunkedArray, RecordBatch, Table)):
        return values
    if hasattr(values, "__arrow_c_stream__") and not hasattr(values, "__arrow_c_array__"):
        if hasattr(values, "schema") and hasattr(values, "num_rows"):
            return table(values)
        from .array import chunked_array
        return chunked_array(values)
    return array(values)


def cast(arr: Any, target_type: Any = None, safe: bool | None = None, options: Any = None,
         memory_pool: Any = None) -> Any:
    """The values cast to `target_type` (safe by default: a value that does not fit raises)."""
    return _ours(arr).cast(target_type, safe=safe if safe is not None else True,
                           options=options)


def take(data: Any, indices: Any, *, boundscheck: bool = True, memory_pool: Any = None) -> Any:
    """The rows of `data` at `indices` (a null index gives a null row)."""
    return _ours(data).take(indices)


def filter(input: Any, selection_filter: Any, /,  # noqa: A001
           null_selection_behavior: str = "drop", *, options: Any = None,
           memory_pool: Any = None) -> Any:
    """The rows where the boolean `selection_filter` is true (null rows dropped or emitted)."""
    return _ours(input).filter(selection_filter, null_selection_behavior)


def unique(array: Any, /, *, memory_pool: Any = None) -> Array:
    """The distinct values in order of first appearance."""
    return _ours(array).unique()  # type: ignore[no-any-return]


def value_counts(array: Any, /, *, memory_pool: Any = None) -> Array:
    """struct<values, counts> of the distinct values in order of first appearance."""
    return _ours(array).value_counts()  # type: ignore[no-any-return]


def dictionary_encode(array: Any, /, null_encoding: str = "mask", *, options: Any = None,
                      memory_pool: Any = None) -> Any:
    """The values as a dictionary<int32, type> array (nulls as null indices, or encoded)."""
    return _ours(array).dictionary_encode(null_encoding)


def fill_null(values: Any, fill_value: Any) -> Any:
    """The values with their nulls replaced by `fill_value`."""
    return _ours(values).fill_null(fill_value)


def drop_null(input: Any, /, *, memory_pool: Any = None) -> Any:
    """The values (or rows) without nulls."""
    return _ours(input).drop_null()


def index_in(values: Any, /, value_set: Any, *, skip_nulls: bool = False,
             options: Any = None, memory_pool: Any = None) -> Any:
    """The position of each value in `value_set` (int32), null where it is not there (a null
    finds a null in the set unless skip_nulls)."""
    from .types import int32
    ours, members = _ours(values), _ours(value_set)
    if isinstance(members, ChunkedArray):
        members = members.combine_chunks()
    if isinstance(ours, ChunkedArray):
        return ChunkedArray([index_in(c, members, skip_nulls=skip_nulls) for c in ours.chunks],
                            int32())
    return make_array(_index_in_data(ours.data, members.data, skip_nulls))


def _index_in_data(values: Any, members: Any, skip_nulls: bool) -> Any:
    """index_in over ArrayData: the hash kernels' first equal member of each value, nulls
    looked up as nulls."""
    import numpy as np

    from ._core.arraydata import ArrayData
    from ._core.buffer import py_buffer
    from .data.cast import cast_data
    from .data.hashing import index_in_valid as first_member
    from .data.to_python import validity_mask
    from .errors import ArrowNotImplementedError, ArrowTypeError
    from .types import int32
    if values.type != members.type:
        try:
            members = cast_data(members, values.type, True)
        except (ValueError, TypeError, ArrowNotImplementedError):
            raise ArrowTypeError(f"Array type doesn't match type of values set: {values.type} "
                                 f"vs {members.type}") from None
    found = first_member(values, members)
    if found is None:
        raise ArrowNotImplementedError(f"index_in of {values.type}")
    valid, set_valid = validity_mask(values), validity_mask(members)
    if valid is not None:
        null_at = np.flatnonzero(~set_valid) if set_valid is not None else np.zeros(0)
        found[~valid] = null_at[0] if len(null_at) and not skip_nulls else -1
    ok = found >= 0
    bits = None if ok.all() else py_buffer(np.packbits(ok, bitorder="little"))
    return ArrayData(int32(), len(found), 0, int(len(ok) - np.count_nonzero(ok)),
                     [bits, py_buffer(np.where(ok, found, 0).astype(np.int32))])


__all__ += ["all", "any", "cast", "count", "count_distinct", "dictionary_encode", "drop_null",
            "fill_null", "filter", "first", "index_in", "last", "max", "mean", "min", "min_max",
            "product", "stddev", "sum", "take", "unique", "value_counts", "variance"]
