"""Hash kernels over ArrayData: each value's first equal value (index_in), and what is built on
it: unique, value_counts and dictionary_encode in order of first appearance, and the key codes
of hash joins (arrowipc/data/joining.py).

Lookups run in the membership kernels' hash sets (arrowipc/_core/compute_kernels.pyx: open
addressing over the values' bytes, GIL released, the values cut into one piece per core), or
through a table indexed by value when integers span a narrow range. Numbers and temporal
values compare by their bytes after every NaN is made one NaN (-0.0 apart from 0.0, as
pyarrow hashes them); strings and binaries bytewise. Other types (decimals, fixed-size binary,
dictionaries, nested values) go through Python values, one dict lookup each.
"""
from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

import numpy as np

from .._core import compute_kernels as _k
from .._core import group_kernels as _g
from .._core.arraydata import ArrayData
from .._core.bitmap import unpack_bits
from .._core.buffer import py_buffer
from ..errors import ArrowInvalid
from ..types import DictionaryType, ExtensionType, Kind, StructType, field, int64
from .selection import PARALLEL_MIN_ROWS, hash_key, parallel_map, take
from .to_python import ordered_numpy, to_pylist, validity_mask

__all__ = ["appearances", "dictionary_encoded", "first_appearance", "first_equal", "index_in",
           "index_in_valid", "numeric_values", "storage_type", "unique", "value_counts"]


def storage_type(t: Any) -> Any:
    """The type an extension type stores its values as (other types as they are)."""
    while isinstance(t, ExtensionType):
        t = t.storage_type
    return t


def numeric_values(data: ArrayData) -> tuple[Any, Any] | None:
    """(values, valid) of fixed-width numbers, temporal values and booleans as numpy (integers
    for temporal values, uint8 for booleans; valid None when all are), else None."""
    t = storage_type(data.type)
    if t.kind == Kind.BOOL:
        bits = data.buffers[1]
        values = np.frombuffer(unpack_bits(bits, data.offset, data.length), np.uint8) \
            if data.length and bits is not None else np.zeros(data.length, np.uint8)
        return values, validity_mask(data)
    found = ordered_numpy(data)
    if found is None:
        return None
    values, valid = found
    if values.dtype.kind in "Mm":
        values = values.view(np.int64)
    return values, valid


def index_in(values: ArrayData, members: ArrayData) -> Any | None:
    """For each value, the row of the first equal member (-1: none), as int64 numpy; None for a
    type without a kernel (string and binary views too: cast them first). Null slots are looked
    up by the bytes they hold: callers mask them."""
    return _lookup(values, members)


def index_in_valid(values: ArrayData, members: ArrayData) -> Any | None:
    """index_in among the valid members only: a null slot of `members` is no member, even when
    its bytes equal a value (null slots of `values` are still looked up by their bytes)."""
    valid = validity_mask(members)
    if valid is None:
        return _lookup(values, members)
    rows = np.flatnonzero(valid)
    found = _lookup(values, take(members, _rows_data(rows)))
    return None if found is None else np.where(found >= 0, rows[np.maximum(found, 0)], -1)


def first_equal(data: ArrayData) -> Any | None:
    """For each row, the first row of an equal value (index_in of the column in itself, in one
    pass over a hash set of its distinct values); None as index_in."""
    return _lookup(data, None)


def _lookup(values: ArrayData, members: ArrayData | None) -> Any | None:
    out = np.empty(values.length, np.int64)
    t = storage_type(values.type)
    if t.kind in (Kind.BINARY, Kind.LARGE_BINARY):
        if members is None:
            _first_equal_in_pieces(
                lambda at, size: _k.first_equal_binary(values.slice(at, size), out[at:at + size],
                                                       at),
                lambda rows, among, got: _k.index_in_binary(take(values, _rows_data(rows)),
                                                            take(values, _rows_data(among)), got),
                out)
        else:
            _in_pieces(lambda at, size: _k.index_in_binary(values.slice(at, size), members,
                                                           out[at:at + size], at), len(out))
        return out
    if isinstance(t, DictionaryType):
        return None
    a = numeric_values(values)
    b = a if members is None else numeric_values(members)
    if a is None or b is None or a[0].dtype != b[0].dtype:
        return None
    found, wanted = a[0], b[0]
    if found.dtype == np.float16:       # no kernel of its own: its bits, every NaN one NaN
        found, wanted = (np.where(np.isnan(x), np.float16("nan"), x).view(np.uint16)
                         for x in (found, wanted))
    if found.dtype.kind in "iu" and len(wanted):
        direct = _index_in_range(found, wanted)
        if direct is not None:
            return direct
    found, wanted = np.ascontiguousarray(found), np.ascontiguousarray(wanted)
    if members is None:
        _first_equal_in_pieces(
            lambda at, size: _k.first_equal_numbers(found[at:at + size], out[at:at + size]),
            lambda rows, among, got: _k.index_in_numbers(found[rows], found[among], got), out)
    else:
        _in_pieces(lambda at, size: _k.index_in_numbers(found[at:at + size], wanted,
                                                        out[at:at + size]), len(out))
    return out


def _first_equal_in_pieces(first_equal_piece: Callable[[int, int], None],
                           index_in_rows: Callable[[Any, Any, Any], None], out: Any) -> None:
    """first_equal into `out`, one piece of rows per core when there are enough of them:
    first_equal_piece(start, size) numbers a piece by its own rows (in parallel, the kernels
    release the GIL), then each piece's distinct values are looked up among those of the
    pieces before it (index_in_rows(rows, among, found) writes the index in `among` of each
    row's value, or -1), and its rows renamed to the first equal row of the whole column."""
    n = len(out)
    pieces = min(os.cpu_count() or 1, max(1, n // (4 * PARALLEL_MIN_ROWS)))
    if pieces > 1 and not _repeats_within(first_equal_piece, out):
        pieces = 1
    bounds = [n * i // pieces for i in range(pieces + 1)]
    parallel_map(lambda i: first_equal_piece(bounds[i], bounds[i + 1] - bounds[i]),
                 list(range(pieces)), n)
    if pieces == 1:
        return
    distinct = None                     # the first row of each value found so far
    for at, end in zip(bounds, bounds[1:]):
        local = out[at:end]
        firsts = np.flatnonzero(local == np.arange(end - at))
        if distinct is None:
            distinct = firsts
            continue
        found = np.empty(len(firsts), np.int64)
        index_in_rows(firsts + at, distinct, found)
        rename = np.empty(end - at, np.int64)
        rename[firsts] = np.where(found >= 0, distinct[found], firsts + at)
        out[at:end] = rename[local]
        distinct = np.concatenate([distinct, firsts[found < 0] + at])


_WINDOW = 4096


def _repeats_within(first_equal_piece: Callable[[int, int], None], out: Any) -> bool:
    """Whether rows repeat values in each of four windows spread over the column (at most half
    of a window's values distinct). Merging pieces costs a lookup per distinct value of each
    piece: worth it for repeated values only."""
    n = len(out)
    window = min(_WINDOW, n // 4)
    for k in range(4):
        at = (n - window) * k // 3
        first_equal_piece(at, window)           # into out, which the pieces write again
        if np.count_nonzero(out[at:at + window] == np.arange(window)) > window // 2:
            return False
    return True


def _in_pieces(probe: Callable[[int, int], None], n: int) -> None:
    """probe(start, size) over n values, in one piece per core when there are enough values
    (the kernels release the GIL; each piece builds its own hash set of the members)."""
    pieces = min(os.cpu_count() or 1, max(1, n // PARALLEL_MIN_ROWS))
    bounds = [n * i // pieces for i in range(pieces + 1)]
    parallel_map(lambda i: probe(bounds[i], bounds[i + 1] - bounds[i]), list(range(pieces)), n)


def _index_in_range(values: Any, members: Any) -> Any | None:
    """index_in of integers whose members span a small range: a table indexed by value (no
    hashing); None when the range is too wide for one."""
    lo, hi = int(members.min()), int(members.max())
    if hi - lo > 4 * (len(values) + len(members)) + 1024:
        return None

    def offsets(x: Any) -> Any:         # x - lo, without overflow in x's own type
        if x.dtype == np.uint64:
            return (x - np.uint64(lo)).astype(np.int64)
        return x.astype(np.int64) - lo

    table = np.full(hi - lo + 1, -1, np.int64)
    # the first member of each value wins: written last
    table[offsets(members[::-1])] = np.arange(len(members) - 1, -1, -1, dtype=np.int64)
    out = np.empty(len(values), np.int64)
    _k.index_in_range(np.ascontiguousarray(values), lo, table, out)
    return out


def first_appearance(data: ArrayData, hashed_only: bool = False) -> tuple[Any, Any, int] | None:
    """(group of each row, first row of each group, the nulls' group or -1): rows of equal
    values share a group (nulls one of their own), numbered by first appearance. A type
    without a hash kernel goes through Python values, or gives None if `hashed_only`."""
    n = data.length
    valid = validity_mask(data) if n else None
    if valid is not None and valid.all():
        valid = None                    # no nulls
    found = _appearances_in_range(data, valid)
    if found is not None:
        groups, firsts = found
    else:
        first = first_equal(data) if n else np.zeros(0, np.int64)
        if first is None:                   # no kernel: Python values, one dict lookup each
            if hashed_only:
                return None
            seen: dict[Any, int] = {}
            first = np.fromiter((seen.setdefault(hash_key(v), i)
                                 for i, v in enumerate(to_pylist(data))), np.int64, n)
        elif valid is not None:
            # a null slot's bytes may equal a valid value's: first rows among valid rows only
            kept = np.flatnonzero(valid)
            codes = first[kept]
            smallest = np.full(n, -1, np.int64)
            smallest[codes[::-1]] = kept[::-1]          # repeated codes: the last written wins
            first[kept] = smallest[codes]
            first[~valid] = int(np.argmin(valid))       # every null with the first null
        groups = np.empty(n, np.int64)
        firsts = np.empty(n, np.int64)
        firsts = firsts[:_g.first_row_ids(first, groups, firsts)]
    null_group = int(groups[int(np.argmin(valid))]) if valid is not None else -1
    return groups, firsts, null_group


def _appearances_in_range(data: ArrayData, valid: Any) -> tuple[Any, Any] | None:
    """appearances() of integers (booleans, temporal values) spanning a small range, by value
    with no hashing, null rows (valid false) one group; None for other data."""
    if not data.length or isinstance(storage_type(data.type), DictionaryType):
        return None
    found = numeric_values(data)
    if found is None or found[0].dtype.kind not in "iu":
        return None
    values = np.ascontiguousarray(found[0])
    lo, hi = int(values.min()), int(values.max())
    if hi - lo > 4 * len(values) + 1024:
        return None
    return appearances(values, hi - lo + 1, lo, valid)


def appearances(codes: Any, bound: int, lo: int = 0, valid: Any = None) -> tuple[Any, Any]:
    """(group of each row, first row of each group): integer `codes` in [lo, lo + bound)
    numbered by first appearance, the rows where `valid` is false one group."""
    n = len(codes)
    groups = np.empty(n, np.int64)
    firsts = np.empty(min(n, bound + 1), np.int64)
    count = _g.appearance_ids(codes, lo % (1 << 64), bound,
                              None if valid is None else valid.view(np.uint8), groups, firsts)
    return groups, firsts[:count]


def _groups(data: ArrayData) -> tuple[Any, Any, int]:
    found = first_appearance(data)
    assert found is not None
    return found


def _rows_data(rows: Any) -> ArrayData:
    rows = np.ascontiguousarray(rows, np.int64)
    return ArrayData(int64(), len(rows), 0, 0, [None, py_buffer(rows)])


def unique(data: ArrayData) -> ArrayData:
    """The distinct values of `data` in order of first appearance (one null if any)."""
    return take(data, _rows_data(_groups(data)[1]))


def value_counts(data: ArrayData) -> ArrayData:
    """A struct array of {values, counts} in order of first appearance (pyarrow's layout)."""
    groups, firsts, _ = _groups(data)
    counts = np.bincount(groups, minlength=len(firsts)).astype(np.int64)
    uniq = take(data, _rows_data(firsts))
    t = StructType([field("values", data.type), field("counts", int64())])
    return ArrayData(t, uniq.length, 0, 0, [None], [uniq, _rows_data(counts)])


def dictionary_encoded(data: ArrayData, target: DictionaryType, encode_nulls: bool
                       ) -> ArrayData:
    """`data` as a `target` dictionary array, its values in order of first appearance: a null
    a dictionary value where `encode_nulls`, else a null index."""
    groups, firsts, null_group = _groups(data)
    valid = None
    if null_group >= 0 and not encode_nulls:
        # the null group out of the dictionary, the groups after it one lower
        firsts = np.delete(firsts, null_group)
        groups = groups - (groups > null_group)
        valid = validity_mask(data)
        groups[~valid] = 0
    index_type = target.index_type
    bits = index_type.bit_width
    least = -(1 << (bits - 1)) if index_type.is_signed else 0
    most = (1 << (bits - 1)) - 1 if index_type.is_signed else (1 << bits) - 1
    if len(firsts) - 1 > most:          # pyarrow's words, for the first index that overflows
        raise ArrowInvalid(f"Integer value {most + 1} not in range: {least} to {most}")
    indices = groups.astype(np.dtype(f"{'i' if index_type.is_signed else 'u'}{bits // 8}"))
    buffers: list[Any] = [None, py_buffer(indices)]
    nulls = 0
    if valid is not None:
        buffers[0] = py_buffer(np.packbits(valid, bitorder="little"))
        nulls = int(len(valid) - np.count_nonzero(valid))
    return ArrayData(target, data.length, 0, nulls, buffers, [], take(data, _rows_data(firsts)))

