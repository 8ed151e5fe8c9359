"""pyarrow.compute's names for what arrowipc computes: expressions (`field`, `scalar`,
`Expression`) and the comparison, Kleene logic, null, membership and arithmetic functions on
Arrays, ChunkedArrays and scalars, returning arrowipc objects.

    import arrowipc.compute as pc
    pc.greater(table["x"], 3); table.filter(pc.field("x") > 3)
"""
from __future__ import annotations

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
    if len(set(lengths)) > 1 or any(
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
