"""Dataset.sort_by: the rows of a scan in the order of sort keys, as pyarrow's order_by sorts.

Each key ranks its column's values (ties equal); the ranks of all keys are sorted together with a
stable sort, so rows equal on every key keep their scan order. Nulls and NaNs go where the key's
null placement says: at the end, values < NaN < null; at the start, null < NaN < values, in
either sort order.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ..errors import ArrowInvalid, ArrowNotImplementedError
from ..table import Table

__all__ = ["sort_keys", "sorted_table"]

_ORDERS = ("ascending", "descending")
_PLACEMENTS = ("at_start", "at_end")


def sort_keys(sorting: Any, null_placement: str | None = None) -> list[tuple[str, str, str]]:
    """(name, order, null placement) of each key of `sorting`: a column name (ascending) or a
    list of (name, order) or (name, order, null_placement); `null_placement`, when given,
    places the nulls of every key (as pyarrow's keyword does)."""
    if null_placement is not None and null_placement not in _PLACEMENTS:
        raise ValueError(f'"{null_placement}" is not a valid null placement')
    entries = [(sorting, "ascending")] if isinstance(sorting, str) else list(sorting)
    if not entries:
        raise ArrowInvalid("`ordering` must be an explicit non-empty ordering")
    keys = []
    for entry in entries:
        if isinstance(entry, str) or not isinstance(entry, (tuple, list)) \
                or len(entry) not in (2, 3):
            raise ValueError(f"a sort key is (name, order) or (name, order, null_placement), "
                             f"got {entry!r}")
        name, order = entry[0], entry[1]
        placement = entry[2] if len(entry) == 3 else "at_end"
        if order not in _ORDERS:
            raise ValueError(f'"{order}" is not a valid sort order')
        if placement not in _PLACEMENTS:
            raise ValueError(f'"{placement}" is not a valid null placement')
        keys.append((name, order, null_placement or placement))
    return keys


def sorted_table(table: Table, keys: Sequence[tuple[str, str, str]]) -> Table:
    """`table`'s rows ordered by `keys` (sort_keys'), ties in their order in `table`."""
    ranks = []
    for name, order, placement in keys:
        if name not in table.schema.names:
            raise ArrowInvalid(f"Invalid sort key column: No match for FieldRef.Name({name}) "
                               f"in {table.schema}")
        ranks.append(_key_ranks(table.column(name).to_pylist(), order, placement, name))
    # np.lexsort is stable and sorts by its last key first
    order_of_rows = np.lexsort(ranks[::-1]) if table.num_rows else np.zeros(0, np.int64)
    return table.take(order_of_rows).combine_chunks()


def _key_ranks(values: list[Any], order: str, placement: str, name: str) -> np.ndarray:
    """Each row's position in the order of one key: ties equal, nulls and NaNs placed."""
    n = len(values)
    nulls = np.fromiter((v is None for v in values), bool, n)
    nans = np.fromiter((isinstance(v, float) and v != v for v in values), bool, n)
    valid = np.flatnonzero(~(nulls | nans))
    present = [values[i] for i in valid]
    if any(isinstance(v, (dict, list, tuple)) for v in present):
        raise ArrowNotImplementedError(f"sort_by: column '{name}' is nested; sort keys are "
                                       f"columns of numbers, strings, binary or temporal values")
    out = np.zeros(n, np.int64)
    if present:
        try:
            by_value = sorted(range(len(present)), key=present.__getitem__)
        except TypeError as e:
            raise ArrowNotImplementedError(f"sort_by: the values of column '{name}' cannot be "
                                           f"ordered: {e}") from None
        dense = np.zeros(len(present), np.int64)
        rank = 0
        for j in range(1, len(by_value)):
            if present[by_value[j]] != present[by_value[j - 1]]:
                rank += 1
            dense[by_value[j]] = rank
        top = rank
        out[valid] = dense if order == "ascending" else top - dense
    else:
        top = 0
    if placement == "at_end":
        out[nans] = top + 1
        out[nulls] = top + 2
    else:
        out[nans] = -1
        out[nulls] = -2
    return out
