"""Sort kernels: the order of rows by sort keys, as pyarrow's sort_indices gives it.

Each key ranks its column's values (ties equal) with numpy: fixed-width numbers and temporal
values as their raw buffers (no conversion), other orderable values (strings, binary, booleans,
decimals) as Python objects compared in numpy's sort. The ranks of all keys are then sorted
together with a stable sort, so rows equal on every key keep their order. Nulls and NaNs go where
the key's null placement says: at the end, values < NaN < null; at the start, null < NaN <
values, in either sort order (pyarrow's placements).
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from .._core.arraydata import ArrayData
from ..errors import ArrowInvalid, ArrowNotImplementedError
from ..types import ExtensionType, Kind
from .to_python import ordered_numpy, to_pylist

__all__ = ["SortKey", "sort_indices", "sort_keys"]

SortKey = tuple[str, str, str]          # (column name, order, null placement)

_ORDERS = ("ascending", "descending")
_PLACEMENTS = ("at_start", "at_end")
_UNORDERED_KINDS = frozenset((Kind.LIST, Kind.LARGE_LIST, Kind.LIST_VIEW, Kind.LARGE_LIST_VIEW,
                              Kind.FIXED_SIZE_LIST, Kind.STRUCT, Kind.SPARSE_UNION,
                              Kind.DENSE_UNION))        # maps are lists of entries


def sort_keys(sorting: Any, null_placement: str | None = None) -> list[SortKey]:
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


def sort_indices(columns: Sequence[Sequence[ArrayData]], keys: Sequence[SortKey],
                 num_rows: int) -> np.ndarray[Any, Any]:
    """The row indices (int64) that order `num_rows` rows by `keys`; `columns[k]` holds key
    k's column as chunks. Rows equal on every key keep their order."""
    if not num_rows:
        return np.zeros(0, np.int64)
    ranks = [_key_ranks(chunks, order, placement, name, num_rows)
             for chunks, (name, order, placement) in zip(columns, keys)]
    # np.lexsort is stable and sorts by its last key first
    return np.lexsort(ranks[::-1]).astype(np.int64, copy=False)


def _key_ranks(chunks: Sequence[ArrayData], order: str, placement: str, name: str,
               num_rows: int) -> np.ndarray[Any, Any]:
    """Each row's position in the order of one key: ties equal, nulls and NaNs placed."""
    values, nulls = _values_and_nulls(chunks, name)
    if len(values) != num_rows:
        raise ArrowInvalid(f"sort key {name!r} has {len(values)} values for {num_rows} rows")
    nans = np.isnan(values) if values.dtype.kind == "f" else np.zeros(num_rows, np.bool_)
    if nulls is not None:
        nans &= ~nulls
    present = ~nans if nulls is None else ~(nans | nulls)
    out = np.zeros(num_rows, np.int64)
    top = 0
    if present.any():
        try:
            distinct, dense = np.unique(values[present], return_inverse=True)
        except TypeError as e:
            raise ArrowNotImplementedError(f"sort_by: the values of column '{name}' cannot be "
                                           f"ordered: {e}") from None
        top = len(distinct) - 1
        out[present] = dense if order == "ascending" else top - dense
    if placement == "at_end":
        out[nans] = top + 1
        if nulls is not None:
            out[nulls] = top + 2
    else:
        out[nans] = -1
        if nulls is not None:
            out[nulls] = -2
    return out


def _values_and_nulls(chunks: Sequence[ArrayData], name: str
                      ) -> tuple[np.ndarray[Any, Any], np.ndarray[Any, Any] | None]:
    """One key column's values in an orderable numpy array (null slots arbitrary) and its null
    mask (None: no nulls)."""
    values, nulls = [], []
    any_null = False
    for data in chunks:
        t = data.type
        while isinstance(t, ExtensionType):
            t = t.storage
        if t.kind in _UNORDERED_KINDS:
            raise ArrowNotImplementedError(
                f"sort_by: column '{name}' is nested ({data.type}); sort keys are columns of "
                f"numbers, strings, binary, booleans, temporal or decimal values")
        raw = ordered_numpy(data)
        if raw is not None:
            vals, valid = raw
            mask = np.zeros(len(vals), np.bool_) if valid is None else ~valid
        else:
            pylist = to_pylist(data)
            mask = np.fromiter((v is None for v in pylist), np.bool_, len(pylist))
            vals = np.empty(len(pylist), object)
            vals[:] = pylist
        any_null = any_null or bool(mask.any())
        values.append(vals)
        nulls.append(mask)
    if not values:
        return np.zeros(0, np.int64), None
    joined = values[0] if len(values) == 1 else np.concatenate(values)
    return joined, (np.concatenate(nulls) if any_null else None)
