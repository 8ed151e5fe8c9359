"""What the dataset asks of an expression, in one place (the expression module is arrowipc's).

    as_expression    pyarrow's or ours, or None
    residual         bound to a fragment's partition values and folded: None when it is
                     known true for every row, False when known false or null
    residuals        residual for many fragments at once: evaluated over a batch of their
                     partition values when the expression names partition fields only, else
                     bound once per distinct tuple of the values it names
    might_match      whether a statistics document (ipc/statistics.py) leaves rows possible
    row_mask         the boolean Array of a batch's rows the expression keeps (null drops)
    column_comparison  (column, operator, number) when the expression is `column op number`
    top_field        the name of the top-level column the expression is a reference to
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal

from ..array import Array

if TYPE_CHECKING:
    from ..expression import Expression
    from .. import types as T
    from ..table import RecordBatch

__all__ = ["as_expression", "column_comparison", "field_names", "might_match", "residual",
           "residuals", "row_mask", "top_field"]


def as_expression(obj: Any) -> Expression | None:
    """`obj` as an arrowipc Expression (None stays None; pyarrow Expressions are converted)."""
    if obj is None:
        return None
    from ..expression import to_expression
    return to_expression(obj)


def top_field(expr: Expression) -> str | None:
    """The column `expr` refers to when it is a plain reference to a top-level column."""
    if expr._kind == "field" and len(expr._path) == 1 and isinstance(expr._path[0], str):
        return expr._path[0]
    return None


def field_names(expr: Expression | None) -> set[str]:
    """The top-level column names `expr` refers to."""
    if expr is None:
        return set()
    return set(expr.field_names())


def residual(expr: Expression | None, values: Mapping[str, Any]
             ) -> Expression | None | Literal[False]:
    """`expr` with the partition `values` substituted and folded: None when it holds for every
    row (no filter left), False when it holds for none (true nowhere, or null)."""
    if expr is None:
        return None
    bound = expr.bind(dict(values)) if values else expr
    if bound.is_literal():
        value = bound.literal()
        return None if value is True else False
    return bound


def residuals(expr: Expression | None, values: Sequence[Mapping[str, Any]],
              schema: T.Schema | None = None) -> list[Expression | None | Literal[False]]:
    """residual(expr, v) for each mapping of partition values in `values` (each holding the
    same partition fields), computed once per distinct partition rather than once per file.

    When `expr` names partition fields only (in `schema`, the dataset's), it is evaluated once
    over a batch holding one row per entry: true keeps the entry with no filter left, false or
    null rules it out. Otherwise it is bound once per distinct tuple of the values it names."""
    if expr is None or not values:
        return [None] * len(values)
    names = sorted(field_names(expr))
    if names and schema is not None and all(n in values[0] and n in schema.names
                                            for n in names):
        known = _evaluated(expr, values, names, schema)
        if known is not None:
            return known
    cache: dict[tuple[Any, ...], Expression | None | Literal[False]] = {}
    out: list[Expression | None | Literal[False]] = []
    for v in values:
        key = tuple((n, v.get(n)) for n in names if n in v)
        try:
            rest = cache[key]
        except KeyError:
            rest = cache[key] = residual(expr, dict(key))
        except TypeError:               # a value that cannot be a key: bind it alone
            rest = residual(expr, v)
        out.append(rest)
    return out


def _evaluated(expr: Expression, values: Sequence[Mapping[str, Any]], names: list[str],
               schema: T.Schema) -> list[Expression | None | Literal[False]] | None:
    """expr evaluated over a batch of the partition `values` (None: it cannot be, bind it)."""
    from .. import types as T
    from ..array import array
    from ..errors import ArrowException
    from ..table import RecordBatch
    if any(v.keys() != values[0].keys() for v in values):
        return None
    try:
        columns = []
        for n in names:
            type_ = schema.field(n).type
            plain = type_.value_type if isinstance(type_, T.DictionaryType) else type_
            column = array([v[n] for v in values], plain)
            columns.append(column.cast(type_) if plain is not type_ else column)
        mask = expr.evaluate(RecordBatch.from_arrays(columns, names=names))
        if not isinstance(mask, Array) or not mask.type.equals(T.bool_()):
            return None
        kept = mask.to_pylist()
    except (ArrowException, ValueError, TypeError, OverflowError):
        return None
    return [None if k is True else False for k in kept]


def might_match(expr: Expression | None, stats: Any, schema: Any = None) -> bool:
    """Whether rows described by the statistics document `stats` (of columns of `schema`) may
    satisfy `expr`."""
    if expr is None or stats is None:
        return True
    return bool(expr.might_match(stats, schema))


def value_of(expr: Expression, batch: RecordBatch) -> Array:
    """The value of `expr` on each row of `batch`."""
    value = expr.evaluate(batch)
    assert isinstance(value, Array)     # a batch's value is an Array
    return value


def row_mask(expr: Expression, batch: RecordBatch) -> Array:
    """The boolean mask of the rows of `batch` where `expr` is true."""
    mask = expr.evaluate(batch)
    assert isinstance(mask, Array)      # a batch's value is an Array
    return mask


# a comparison with its operands swapped: `10 > b` is `b < 10`
_TURNED = {"equal": "equal", "not_equal": "not_equal", "less": "greater",
           "less_equal": "greater_equal", "greater": "less", "greater_equal": "less_equal"}


def column_comparison(expr: Expression | None) -> tuple[str, str, int | float] | None:
    """(column name, operator as "<" ... "!=", the number) when `expr` compares one top-level
    column with an integer or floating-point literal, either way round (`10 > b` is `b < 10`);
    None for anything else."""
    from ..data import compute as K
    if expr is None or expr._kind != "call" or expr._function not in K.COMPARISONS \
            or len(expr._args) != 2:
        return None
    function = expr._function
    left, right = expr._args
    if left._kind == "literal" and right._kind == "field":
        left, right, function = right, left, _TURNED[function]
    if left._kind != "field" or right._kind != "literal" or len(left._path) != 1 \
            or not isinstance(left._path[0], str) or right._literal is None \
            or K.family(right._literal.type) not in ("int", "float"):
        return None
    value = right._literal.as_py()
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        return None
    return left._path[0], K.COMPARISONS[function], value


def expression_argument(name: str, obj: Any) -> Expression | None:
    """An Expression argument (pyarrow's converted) or None; TypeError naming the argument
    for anything else (a bare value is not taken as a literal here)."""
    from ..expression import Expression
    if obj is None or isinstance(obj, Expression):
        return obj
    if type(obj).__name__ == "Expression" and type(obj).__module__.startswith("pyarrow"):
        return as_expression(obj)
    raise TypeError(f"Argument '{name}' has incorrect type (expected Expression, got "
                    f"{type(obj).__name__})")
