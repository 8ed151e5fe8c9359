"""Join kernels: the rows a hash join or an as-of join pairs, as numpy row numbers, and the
joined columns with pyarrow's names (Table.join and Table.join_asof, Acero's rules).

Keys: each right row's key is coded as the first right row of its value, and each left row's
value is looked up among the right's in a hash set (the membership kernels', GIL released;
integers of a narrow range through a table), so a left row and a right row match when their
codes are equal on every key; a null key never matches, as in pyarrow's hash join. The right
rows are grouped by code (a counting sort) and the pairs written in one pass (compute_kernels'
join_build and join_pairs); a right table of unique keys takes a shortcut, one lookup per left
row (join_unique). No Python per row.
Output order: the left rows in their order, each with its matches in the right table's order,
then the right rows no left row matched (pyarrow's order is its hash table's and its threads').
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from .._core import compute_kernels as _k
from .._core.arraydata import ArrayData
from .._core.buffer import py_buffer
from ..errors import ArrowInvalid
from ..types import Field, Kind, binary, field, string
from .cast import cast_data
from .grouping import _combine, _dense, _value_codes
from .hashing import first_equal, index_in, numeric_values, storage_type
from .selection import Selection, apply, combined_data, parallel_map
from .sorting import _UNORDERED_KINDS as _NESTED_KINDS
from .to_python import validity_mask

__all__ = ["JOIN_TYPES", "Side", "asof_columns", "asof_rows", "hash_join", "join_rows",
           "take_rows", "true_rows"]

JOIN_TYPES = ("inner", "left outer", "right outer", "full outer", "left semi", "right semi",
              "left anti", "right anti")


def _column_codes(a: ArrayData, b: ArrayData) -> tuple[Any, Any, int]:
    """(left codes, right codes, bound) of one key column on each side: a right row's code is
    the first right row of its value, a left row's the same row found by hashing (dictionaries
    and other types: both columns coded together by the grouping kernels); -1 for a null key
    and for a left value no right row has."""
    n = a.length
    lc = rc = None
    if a.type == b.type:
        t = storage_type(a.type)
        if t.kind == Kind.VIEW:         # the hash kernels read offsets layouts
            target = string() if t.name == "string_view" else binary()
            a, b = cast_data(a, target, True), cast_data(b, target, True)
        lc, rc = index_in(a, b), first_equal(b)
    bound = b.length
    if lc is None or rc is None:
        both, bound = _value_codes(combined_data([a, b], a.type))
        lc, rc = both[:n].copy(), both[n:].copy()
    for codes, side in ((lc, a), (rc, b)):
        mask = validity_mask(side)
        if mask is not None:
            codes[~mask] = -1
    return lc, rc, bound


def _key_codes(left: Sequence[ArrayData], right: Sequence[ArrayData]) -> tuple[Any, Any, int]:
    """(left codes, right codes, bound): rows equal on every key share a code in [0, bound);
    -1 for a row with a null key, or a left row with a key no right row has."""
    per_key = [_column_codes(a, b) for a, b in zip(left, right)]
    if len(per_key) == 1:
        return per_key[0]
    # several keys: each key's codes over both sides, combined, renumbered densely
    n = left[0].length
    valid: Any = None
    codes: tuple[Any, int] | None = None
    for lc, rc, bound in per_key:
        both = np.concatenate([lc, rc])
        valid = both >= 0 if valid is None else valid & (both >= 0)
        found = (np.maximum(both, 0), max(bound, 1))
        codes = found if codes is None else _combine(codes, found)
    assert codes is not None
    dense = np.full(len(valid), -1, np.int64)
    count = 0
    if valid.any():
        dense[valid], count = _dense(codes[0][valid], codes[1])
    return dense[:n], dense[n:], count


def join_rows(left_keys: Sequence[ArrayData], right_keys: Sequence[ArrayData], n: int, m: int,
              join_type: str, keep: Callable[[Any, Any], Any] | None = None
              ) -> tuple[Any, Any]:
    """(left rows, right rows) of a `join_type` join of n left rows and m right rows on the key
    columns, int64 arrays with -1 for the side an outer row lacks (None for the side a semi or
    anti join does not output). `keep(left rows, right rows)`, a bool array, drops matched
    pairs (pyarrow's filter_expression): a left row none of whose pairs is kept is unmatched."""
    lcodes, rcodes, bound = _key_codes(left_keys, right_keys)
    lcodes = np.ascontiguousarray(lcodes, np.int64)
    rcodes = np.ascontiguousarray(rcodes, np.int64)

    def matched(codes: Any, other: Any) -> Any:
        """The rows of `codes` whose code `other` has too."""
        out = np.empty(len(codes), np.bool_)
        # -1 (no code) counted in bin 0, away from the codes
        _k.join_matched(codes, np.bincount(other + 1, minlength=bound + 1)[1:].astype(np.int64),
                        out.view(np.uint8))
        return out

    if keep is None and join_type in ("left semi", "left anti"):
        want = matched(lcodes, rcodes)
        return np.flatnonzero(want if join_type == "left semi" else ~want).astype(np.int64), None
    if keep is None and join_type in ("right semi", "right anti"):
        want = matched(rcodes, lcodes)
        return None, np.flatnonzero(want if join_type == "right semi" else ~want).astype(np.int64)
    # the right rows grouped by code, and where each code's group starts
    per_code = np.bincount(rcodes + 1, minlength=bound + 1)[1:].astype(np.int64)
    if keep is None and join_type != "right outer" and (not bound or per_code.max() <= 1):
        # each left row has at most one right row (a dimension table's unique keys)
        right_of_code = np.full(bound + 1, -1, np.int64)
        right_of_code[rcodes] = np.arange(m, dtype=np.int64)     # -1 codes land in the spare
        right_of_code[bound] = -1
        # a full outer join's unmatched right rows go after the pairs, in the same arrays
        extra = m if join_type == "full outer" else 0
        left_rows, right_rows = np.empty(n + extra, np.int64), np.empty(n + extra, np.int64)
        hit = np.zeros(m, np.uint8) if extra else None
        pairs = _k.join_unique(lcodes, right_of_code, join_type == "inner", left_rows,
                               right_rows, hit)
        if hit is not None:
            lonely = np.flatnonzero(hit == 0)
            left_rows[pairs:pairs + len(lonely)] = -1
            right_rows[pairs:pairs + len(lonely)] = lonely
            pairs += len(lonely)
        return left_rows[:pairs], right_rows[:pairs]
    starts = np.empty(bound, np.int64)
    order = np.empty(int(per_code.sum()), np.int64)
    _k.join_build(rcodes, per_code, starts, order)
    outer_left = keep is None and join_type in ("left outer", "full outer")
    total = _k.join_count(lcodes, per_code, outer_left)
    left_rows = np.empty(total, np.int64)
    right_rows = np.empty(total, np.int64)
    _k.join_pairs(lcodes, starts, per_code, order, outer_left, left_rows, right_rows)
    if keep is not None:
        if total:
            kept = np.asarray(keep(left_rows, right_rows), np.bool_)
            left_rows, right_rows = left_rows[kept], right_rows[kept]
        left_matched = np.zeros(n, np.bool_)
        left_matched[left_rows] = True
        right_matched = np.zeros(m, np.bool_)
        right_matched[right_rows] = True
        if join_type in ("left semi", "left anti"):
            want = left_matched if join_type == "left semi" else ~left_matched
            return np.flatnonzero(want).astype(np.int64), None
        if join_type in ("right semi", "right anti"):
            want = right_matched if join_type == "right semi" else ~right_matched
            return None, np.flatnonzero(want).astype(np.int64)
        if join_type in ("left outer", "full outer"):
            # the unmatched left rows in their place among the pairs, with no right row
            lonely = np.flatnonzero(~left_matched)
            at = np.searchsorted(left_rows, lonely)
            left_rows = np.insert(left_rows, at, lonely)
            right_rows = np.insert(right_rows, at, -1)
    if join_type in ("right outer", "full outer"):
        if keep is None:
            right_matched = matched(rcodes, lcodes)
        lonely = np.flatnonzero(~right_matched)
        left_rows = np.concatenate([left_rows, np.full(len(lonely), -1, np.int64)])
        right_rows = np.concatenate([right_rows, lonely])
    return left_rows, right_rows


def row_selection(rows: Any, length: int) -> Selection | None:
    """The Selection of `rows` (int64; -1 gives a null row) to apply to every column of one
    input, built once; None when `rows` are all `length` rows in order (columns kept as are)."""
    rows = np.ascontiguousarray(rows, np.int64)
    if len(rows) == length and bool((rows == np.arange(length)).all()):
        return None
    has_nulls = bool(len(rows)) and int(rows.min()) < 0
    return Selection(py_buffer(rows), len(rows), has_nulls)


def take_rows(data: ArrayData, rows: Selection | None) -> ArrayData:
    """The rows of `data` a row_selection keeps."""
    return data if rows is None else apply(data, rows)


def true_rows(data: ArrayData) -> Any:
    """A numpy bool array: the rows where the boolean `data` is true (null as false)."""
    found = numeric_values(data)
    assert found is not None, data.type
    values, valid = found
    rows = values.astype(np.bool_)
    return rows if valid is None else rows & valid


class Side:
    """One input of a join: its fields, their names, whole columns (one ArrayData each), rows."""

    def __init__(self, fields: list[Field], columns: list[ArrayData], num_rows: int) -> None:
        self.fields, self.columns, self.num_rows = fields, columns, num_rows
        self.names = [f.name for f in fields]

    def key_index(self, name: Any, side: str) -> int:
        if not isinstance(name, str) or self.names.count(name) != 1:
            raise ArrowInvalid(f"No match or multiple matches for key field reference "
                               f"FieldRef.Name({name}) on {side} side of the join")
        return self.names.index(name)


def hash_join(left: Side, right: Side, left_keys: list[str], right_keys: list[str],
              join_type: str, left_suffix: str, right_suffix: str, coalesce_keys: bool,
              keep: Callable[[Any, Any], Any] | None
              ) -> tuple[list[Field], list[ArrayData]]:
    """(fields, columns) of pyarrow's Table.join: the columns pyarrow keeps for `join_type` and
    `coalesce_keys`, a name in both sides' outputs suffixed on each side; every field nullable
    and without metadata, as pyarrow's."""
    if join_type not in JOIN_TYPES:
        raise ValueError("Unsupported join type")
    if len(left_keys) != len(right_keys):
        raise ArrowInvalid("key_cmp and keys must have the same size")
    if not left_keys:
        raise ArrowInvalid("key_cmp and keys cannot be empty")
    li = [left.key_index(k, "left") for k in left_keys]
    ri = [right.key_index(k, "right") for k in right_keys]
    for a, b in zip(li, ri):
        lt, rt = left.columns[a].type, right.columns[b].type
        if lt != rt:
            raise ArrowInvalid(f"Incompatible data types for corresponding join field keys: "
                               f"FieldRef.Name({left.names[a]}) of type {lt} and "
                               f"FieldRef.Name({right.names[b]}) of type {rt}")
        if storage_type(lt).kind in _NESTED_KINDS:
            raise ArrowInvalid(f"Data type {lt} is not supported in join key field")
    # the columns each side gives (pyarrow's _perform_join)
    lout, rout = list(range(len(left.names))), list(range(len(right.names)))
    if join_type in ("left semi", "left anti"):
        rout = []
    elif join_type in ("right semi", "right anti"):
        lout = []
    elif coalesce_keys and join_type in ("inner", "left outer", "full outer"):
        rout = [i for i in rout if i not in ri]
    elif coalesce_keys and join_type == "right outer":
        lout = [i for i in lout if i not in li]
    for side, out in ((left, lout), (right, rout)):
        for i in out:
            if storage_type(side.columns[i].type).kind in _NESTED_KINDS:
                raise ArrowInvalid(f"Data type {side.columns[i].type} is not supported in join "
                                   f"non-key field {side.names[i]}")
    lrows, rrows = join_rows([left.columns[i] for i in li], [right.columns[i] for i in ri],
                             left.num_rows, right.num_rows, join_type, keep)
    # a name in the other side's output is suffixed (a full outer join's coalesced keys are
    # named as the left's, after pyarrow suffixes against every column of the other side)
    full_coalesced = coalesce_keys and join_type == "full outer"
    lclash = set(right.names) if full_coalesced else {right.names[i] for i in rout}
    rclash = set(left.names) if full_coalesced else {left.names[i] for i in lout}
    lsel = row_selection(lrows, left.num_rows) if lout else None
    rsel = row_selection(rrows, right.num_rows) if rout else None
    names: list[str] = []
    takes: list[tuple[ArrayData, Selection | None]] = []
    for i in lout:
        name = left.names[i]
        if full_coalesced and i in li:
            other = right.columns[ri[li.index(i)]]
            both = combined_data([left.columns[i], other], other.type)
            pick = np.where(lrows >= 0, lrows, left.num_rows + rrows)
            names.append(name)
            takes.append((both, row_selection(pick, -1)))
            continue
        names.append(name + left_suffix if name in lclash else name)
        takes.append((left.columns[i], lsel))
    for i in rout:
        name = right.names[i]
        names.append(name + right_suffix if name in rclash else name)
        takes.append((right.columns[i], rsel))
    rows = len(lrows) if lrows is not None else len(rrows)
    columns = parallel_map(lambda task: take_rows(*task), takes, rows)
    return [field(n, c.type) for n, c in zip(names, columns)], columns


# -- as-of joins ----------------------------------------------------------------------------------

def _on_values(data: ArrayData, name: str) -> tuple[Any, Any]:
    """(int64 values, valid) of an as-of join's on-key: integers and temporal values, checked
    to be in order where valid (Acero's rule)."""
    found = numeric_values(data) if storage_type(data.type).kind != Kind.BOOL else None
    if found is None or found[0].dtype.kind not in "iu":     # integers and temporal values
        raise ArrowInvalid(f"Unsupported type for on-key {name} : {data.type}")
    values, valid = found
    if values.dtype == np.uint64 and len(values) and int(values.max()) >= 1 << 63:
        raise ArrowInvalid(f"on-key {name} holds a value past 2**63 - 1")
    values = values.astype(np.int64, copy=False)
    present = values if valid is None else values[valid]
    if len(present) > 1 and bool((present[1:] < present[:-1]).any()):
        raise ArrowInvalid("AsofJoin does not allow out-of-order on-key values")
    return values, valid


def asof_columns(left: Side, right: Side, on: str, by: list[str], tolerance: int,
                 right_on: str, right_by: list[str]) -> tuple[list[Field], list[ArrayData]]:
    """(fields, columns) of pyarrow's Table.join_asof: every left column, then the right's but
    its on-key and by-keys, each right one taken at the row `asof_rows` picks; the fields are
    the inputs' (nullability and metadata kept, as pyarrow keeps them)."""
    rout = [i for i, name in enumerate(right.names) if name not in [right_on] + right_by]
    clash = set(left.names) & {right.names[i] for i in rout}
    if clash:
        raise ValueError(f"Columns {clash} present in both tables. AsofJoin does not support "
                         f"column collisions.")
    if len(by) != len(right_by):
        raise ArrowInvalid("AsofJoin: the left and right by-keys differ in number")

    def column(side: Side, name: str) -> ArrayData:
        if name not in side.names:
            raise ArrowInvalid(f"No match for FieldRef.Name({name}) in "
                               f"{', '.join(side.names)}")
        return side.columns[side.names.index(name)]

    lby, rby = [column(left, k) for k in by], [column(right, k) for k in right_by]
    for name, a, b in zip(by, lby, rby):
        if a.type != b.type:
            raise ArrowInvalid(f"Expected by-key type {a.type} but got {b.type} for field "
                               f"{name} in input 1")
    rows = asof_rows(column(left, on), column(right, right_on), lby, rby, tolerance, on)
    picked = row_selection(rows, right.num_rows)
    return (left.fields + [right.fields[i] for i in rout],
            left.columns + [take_rows(right.columns[i], picked) for i in rout])


def asof_rows(left_on: ArrayData, right_on: ArrayData, left_by: Sequence[ArrayData],
              right_by: Sequence[ArrayData], tolerance: int, name: str) -> Any:
    """The right row each left row takes in an as-of join (-1: none): a right row of equal by-keys
    (a null equal to a null) whose on-key is within `tolerance` of the left's, on its side (a
    negative tolerance looks back, a positive one ahead, 0 wants equal); the nearest, and of equal
    on-keys the last looking back, the first looking ahead (Acero's choice)."""
    if left_on.type != right_on.type:
        raise ArrowInvalid(f"Expected on-key type {left_on.type} but got {right_on.type} for "
                           f"field {name} in input 1")
    lv, lvalid = _on_values(left_on, name)
    rv, rvalid = _on_values(right_on, name)
    n, m = len(lv), len(rv)
    # by-keys coded together, nulls as values (not the join's -1)
    codes: tuple[Any, int] = (np.zeros(n + m, np.int64), 1)
    for a, b in zip(left_by, right_by):
        codes = _combine(codes, _value_codes(combined_data([a, b], a.type)))
    group = _dense(*codes)[0] if n + m else np.zeros(0, np.int64)
    lgroup, rgroup = group[:n], group[n:]
    out = np.full(n, -1, np.int64)
    rrows = np.flatnonzero(np.ones(m, np.bool_) if rvalid is None else rvalid)
    if not len(rrows) or not n:
        return out
    # every left row and usable right row in one order by (by-keys, on-key); of equal keys the
    # right rows come first looking back (a left row takes the last of them), last looking
    # ahead (it takes the first), each side in its own order
    back = tolerance <= 0
    g = np.concatenate([lgroup, rgroup[rrows]])
    v = np.concatenate([lv, rv[rrows]])
    is_right = np.concatenate([np.zeros(n, np.bool_), np.ones(len(rrows), np.bool_)])
    side = is_right if not back else ~is_right
    order = np.lexsort((np.arange(len(g)), side, v, g))
    at = np.arange(len(order), dtype=np.int64)
    right_at = is_right[order]
    if back:            # the nearest right row at or before each position
        near = np.maximum.accumulate(np.where(right_at, at, -1))
    else:               # the nearest right row at or after it
        near = np.minimum.accumulate(np.where(right_at, at, len(at))[::-1])[::-1]
    left_at = np.flatnonzero(~right_at)
    found = near[left_at]
    inside = (found >= 0) & (found < len(at))
    found = np.where(inside, found, 0)
    row = order[left_at]                        # the left row at each left position
    other = order[found]                        # the entry there: a right row (n + k)
    ok = inside & (g[other] == g[row]) & (np.abs(v[other] - v[row]) <= abs(tolerance))
    if lvalid is not None:
        ok &= lvalid[row]
    out[row[ok]] = rrows[other[ok] - n]
    return out
