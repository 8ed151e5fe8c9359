"""What the dataset asks of an expression, in one place (the expression module is arrowipc's).

    as_expression    pyarrow's or ours, or None
    residual         bound to a fragment's partition values and folded: None when it is
                     known true for every row, False when known false or null
    might_match      whether a statistics document (ipc/statistics.py) leaves rows possible
    row_mask         the boolean Array of a batch's rows the expression keeps (null drops)
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Literal

from ..array import Array

if TYPE_CHECKING:
    from ..expression import Expression
    from ..table import RecordBatch

__all__ = ["as_expression", "field_names", "might_match", "residual", "row_mask"]


def as_expression(obj: Any) -> Expression | None:
    """`obj` as an arrowipc Expression (None stays None; pyarrow Expressions are converted)."""
    if obj is None:
        return None
    from ..expression import to_expression
    return to_expression(obj)


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
