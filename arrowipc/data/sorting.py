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
from .to_python import binary_spans, ordered_numpy, to_pylist, validity_mask

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
    values, lengths, nulls = _values_and_nulls(chunks, name)
    if len(values) != num_rows:
        raise ArrowInvalid(f"sort key {name!r} has {len(values)} values for {num_rows} rows")
    nans = np.isnan(values) if values.dtype.kind == "f" else np.zeros(num_rows, np.bool_)
    if nulls is not None:
        nans &= ~nulls
    present = ~nans if nulls is None else ~(nans | nulls)
    out = np.zeros(num_rows, np.int64)
    top = 0
    if present.any():
        dense = _dense_ranks(values[present], None if lengths is None else lengths[present],
                             name)
        top = int(dense.max())
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


def _dense_ranks(values: np.ndarray[Any, Any], lengths: np.ndarray[Any, Any] | None,
                 name: str) -> np.ndarray[Any, Any]:
    """0-based ranks of `values` in ascending order, equal values equal; `lengths` breaks the
    ties of byte strings padded with zeros (the shorter first, as byte order has it)."""
    if lengths is None:
        try:
            return np.unique(values, return_inverse=True)[1].reshape(-1)
        except TypeError as e:
            raise ArrowNotImplementedError(f"sort_by: the values of column '{name}' cannot be "
                                           f"ordered: {e}") from None
    order = np.lexsort((lengths, values))
    ranked_values, ranked_lengths = values[order], lengths[order]
    step = np.empty(len(order), np.int64)
    step[0] = 0
    step[1:] = ((ranked_values[1:] != ranked_values[:-1])
                | (ranked_lengths[1:] != ranked_lengths[:-1]))
    out = np.empty(len(order), np.int64)
    out[order] = np.cumsum(step)
    return out


def _values_and_nulls(chunks: Sequence[ArrayData], name: str
                      ) -> tuple[np.ndarray[Any, Any], np.ndarray[Any, Any] | None,
                                 np.ndarray[Any, Any] | None]:
    """One key column's values in an orderable numpy array (null slots arbitrary), the byte
    lengths that break ties of zero-padded byte strings (None for other values), and its null
    mask (None: no nulls)."""
    types = []
    for data in chunks:
        t = data.type
        while isinstance(t, ExtensionType):
            t = t.storage
        if t.kind in _UNORDERED_KINDS:
            raise ArrowNotImplementedError(
                f"sort_by: column '{name}' is nested ({data.type}); sort keys are columns of "
                f"numbers, strings, binary, booleans, temporal or decimal values")
        types.append(t)
    if not chunks:
        return np.zeros(0, np.int64), None, None
    if all(t.kind in (Kind.BINARY, Kind.LARGE_BINARY) for t in types):
        padded = _padded_bytes(chunks)
        if padded is not None:
            return padded[0], padded[1], _nulls(chunks)
    values = []
    for data in chunks:
        raw = ordered_numpy(data)
        if raw is not None:
            values.append(raw[0])
        else:
            pylist = to_pylist(data)
            vals = np.empty(len(pylist), object)
            vals[:] = pylist
            values.append(vals)
    joined = values[0] if len(values) == 1 else np.concatenate(values)
    return joined, None, _nulls(chunks)


def _nulls(chunks: Sequence[ArrayData]) -> np.ndarray[Any, Any] | None:
    """The null mask of the chunks, end to end (None: no nulls)."""
    masks = [np.zeros(d.length, np.bool_) if (valid := validity_mask(d)) is None else ~valid
             for d in chunks]
    joined = masks[0] if len(masks) == 1 else np.concatenate(masks)
    return joined if joined.any() else None


# the padded copy of a string key is at most this many times its bytes (else: Python objects)
_PADDING_FACTOR = 4


def _padded_bytes(chunks: Sequence[ArrayData]
                  ) -> tuple[np.ndarray[Any, Any], np.ndarray[Any, Any]] | None:
    """(values as numpy byte strings zero-padded to the longest, their lengths) of string or
    binary chunks, copied from their offsets and data with no Python object per value; None
    when the padding would cost more than _PADDING_FACTOR times the bytes (a few long
    values), or the longest is empty."""
    spans = [binary_spans(d) for d in chunks]
    total = sum(len(data) for _, _, data in spans)
    lengths = np.concatenate([ends - starts for starts, ends, _ in spans])
    n = len(lengths)
    widest = int(lengths.max()) if n else 0
    if widest == 0 or n * widest > _PADDING_FACTOR * max(total, n):
        return None
    matrix = np.zeros((n, widest), np.uint8)
    row_start = 0
    for starts, ends, data in spans:
        count = len(starts)
        sizes = ends - starts
        rows = np.repeat(np.arange(row_start, row_start + count), sizes)
        # each byte's column in the matrix: its position within its value
        columns = np.arange(int(sizes.sum())) - np.repeat(np.cumsum(sizes) - sizes, sizes)
        matrix[rows, columns] = data[np.repeat(starts, sizes) + columns]
        row_start += count
    return matrix.view(f"S{widest}").reshape(n), lengths
