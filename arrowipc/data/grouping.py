"""Grouping kernels: the group of each row by key columns, and pyarrow's hash aggregations
(hash_sum, hash_count, hash_list, ...) per group, ArrayData in, ArrayData out.

Keys: each key column is coded by the hash kernels (arrowipc/data/hashing.py: integers of a
narrow range by value, other numbers by their bits as pyarrow hashes them, strings and binaries
by their bytes, through a hash set), dictionaries by their values' codes, other types through
Python values; a null is a code of its own. One key's codes are its groups already; several
keys' codes combine into one, numbered by first appearance, the order pyarrow's hash
aggregation gives (_core/group_kernels). Aggregations reduce each row into its group in row order with the group
kernels (sums, products, min and max, counts, first and last rows), or over the rows sorted
stably by group: no Python per row on numbers; list and distinct are one take each.
"""
from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

import numpy as np

from .._core import group_kernels as _g
from .._core.arraydata import ArrayData
from .._core.buffer import py_buffer
from ..errors import ArrowInvalid, ArrowKeyError, ArrowNotImplementedError
from ..types import (DataType, DictionaryType, DurationType, FixedSizeBinaryType, Kind,
                     TimestampType, bool_, float64, int64, list_, struct, uint64)
from .compute import _no_kernel as no_kernel
from .hashing import appearances, first_appearance, numeric_values, storage_type
from .selection import Selection, apply, hash_key, parallel_map
from .sorting import _UNORDERED_KINDS as _NESTED_KINDS, _key_ranks
from .to_python import to_pylist, validity_mask

__all__ = ["Aggregation", "FUNCTIONS", "aggregate", "aggregation_specs"]

# (target columns, function name as pyarrow runs it, options, output column name)
Aggregation = tuple[list[ArrayData], str, Any, str]

# function -> number of columns it takes
FUNCTIONS = {"count": 1, "count_all": 0, "count_distinct": 1, "sum": 1, "mean": 1, "min": 1,
             "max": 1, "min_max": 1, "first": 1, "last": 1, "first_last": 1, "list": 1,
             "distinct": 1, "product": 1, "stddev": 1, "variance": 1, "any": 1, "all": 1,
             "one": 1}
# pyarrow's other hash aggregations, which arrowipc does not compute
_NOT_OURS = {"approximate_median", "tdigest", "kurtosis", "skew", "pivot_wider"}
# hash-only functions: pyarrow has no scalar function of these names (group_by([]) raises)
_HASH_ONLY = {"list", "distinct", "one", "pivot_wider"}
# pyarrow refuses these with use_threads=True (the order of rows is not kept across threads)
_ORDERED = {"first", "last", "first_last"}

_BIG = 1 << 62          # codes of combined keys stay below this (int64 without overflow)
_REDUCE_OPS = {np.add: _g.OP_CODES["sum"], np.multiply: _g.OP_CODES["product"],
               np.minimum: _g.OP_CODES["min"], np.maximum: _g.OP_CODES["max"]}


# -- aggregation specs, as pyarrow's TableGroupBy.aggregate reads them ---------------------------

def aggregation_specs(aggregations: Any, grouped: bool) -> list[tuple[list[str], str, Any, str]]:
    """(target names, function, options, output name) of each aggregation: pyarrow's rules,
    hash_ added or removed by `grouped`, names "<targets joined by _>_<function>"."""
    specs = []
    for aggr in aggregations:
        if len(aggr) == 2:
            target, func = aggr
            opt = None
        else:
            target, func, opt = aggr
        target = list(target) if isinstance(target, (list, tuple)) else [target]
        if grouped and not func.startswith("hash_"):
            func = "hash_" + func
        if not grouped and func.startswith("hash_"):
            func = func[5:]
        bare = func[5:] if func.startswith("hash_") else func
        name = bare if not target else "_".join(target) + "_" + bare
        specs.append((target, func, opt, name))
    return specs


def _options(opt: Any) -> dict[str, Any]:
    """The settings of a FunctionOptions object: its attributes when it has them, else what its
    repr shows (pyarrow's options, e.g. "CountOptions(mode=ALL)", expose no attributes)."""
    if opt is None:
        return {}
    found = {k: getattr(opt, k) for k in ("mode", "skip_nulls", "min_count", "ddof")
             if hasattr(opt, k)}
    if found:
        return found
    m = re.fullmatch(r"\w+\((.*)\)", repr(opt), re.S)
    if m is None:
        raise TypeError(f"expected a FunctionOptions object, got {opt!r}")
    for part in m.group(1).split(","):
        key, _, value = part.strip().partition("=")
        v: Any = value.strip()
        if v in ("true", "false"):
            v = v == "true"
        elif re.fullmatch(r"-?\d+", v):
            v = int(v)
        else:
            v = v.lower()
        found[key.strip()] = v
    return found


# -- group ids ------------------------------------------------------------------------------------

def _dense(codes: Any, bound: int) -> tuple[Any, int]:
    """`codes` in [0, bound) renumbered 0..count-1 (in the order of their values)."""
    n = len(codes)
    if bound <= 4 * n + 1024:          # a table of every possible code costs O(n)
        present = np.bincount(codes, minlength=bound) > 0
        remap = np.cumsum(present) - 1
        return remap[codes], int(remap[-1]) + 1 if bound else 0
    uniq, inverse = np.unique(codes, return_inverse=True)
    return inverse.reshape(-1), len(uniq)


def _combine(a: tuple[Any, int], b: tuple[Any, int]) -> tuple[Any, int]:
    """One code per pair of codes."""
    (ca, ba), (cb, bb) = a, b
    if ba > _BIG // max(bb, 1):
        ca, ba = _dense(ca, ba)
        cb, bb = _dense(cb, bb)
        if ba > _BIG // max(bb, 1):       # still too many: number the pairs by sorting
            pairs = np.unique(np.stack([ca, cb], axis=1), axis=0, return_inverse=True)
            return pairs[1].reshape(-1), len(pairs[0])
    return ca * bb + cb, ba * bb


def _value_codes(data: ArrayData) -> tuple[Any, int]:
    """(codes, bound): equal values of `data` share a code in [0, bound), nulls one of their
    own. Types the hash kernels take are coded by them (by first appearance); dictionaries by
    their values' codes; other types (string views, decimals, fixed-size binaries) through
    Python values, one dict lookup each."""
    n = data.length
    t = storage_type(data.type)
    if t.kind == Kind.NULL:
        return np.zeros(n, np.int64), 1
    if t.kind in _NESTED_KINDS:
        raise ArrowNotImplementedError(f"Keys of type {data.type}")
    hashed = first_appearance(data, hashed_only=True)
    if hashed is not None:
        return hashed[0], len(hashed[1])
    if isinstance(t, DictionaryType):
        idx = ArrayData(t.index_type, n, data.offset, data.null_count, data.buffers)
        found = numeric_values(idx)
        assert found is not None and data.dictionary is not None
        indices, valid = found
        words, wbound = _value_codes(data.dictionary)
        indices = indices.astype(np.int64)
        if valid is not None:
            indices = np.where(valid, indices, 0)
        if n and (indices.min() < 0 or indices.max() >= len(words)):
            raise ArrowInvalid(f"dictionary indices out of bounds for {len(words)} values")
        codes = words[indices] if n else np.zeros(0, np.int64)
        return _with_null_code(codes, wbound, valid)
    seen: dict[Any, int] = {}
    values = to_pylist(data)
    out = np.fromiter((-1 if v is None else seen.setdefault(hash_key(v), len(seen))
                       for v in values), np.int64, len(values))
    out[out < 0] = len(seen)
    return out, len(seen) + 1


def _with_null_code(codes: Any, bound: int, valid: Any) -> tuple[Any, int]:
    if valid is None:
        return codes, bound
    codes = np.where(valid, codes, bound)
    return codes, bound + 1


class Groups:
    """The group of each of `n` rows (0..count-1 by first appearance), and the row order and
    segment bounds the reductions share."""

    def __init__(self, gid: Any, count: int, first_rows: Any) -> None:
        self.gid = gid
        self.count = count
        self.first_rows = first_rows          # the first row of each group
        self.n = len(gid)
        self.sizes = np.bincount(gid, minlength=count).astype(np.int64, copy=False)
        self._order: Any = None

    @classmethod
    def of_keys(cls, keys: Sequence[ArrayData], n: int) -> Groups:
        """The groups of rows equal on every key column (a null equal to a null)."""
        if not keys:                            # one group of every row, even of none
            return cls(np.zeros(n, np.int64), 1, np.zeros(1, np.int64))
        if len(keys) == 1 and n and storage_type(keys[0].type).kind not in _NESTED_KINDS:
            hashed = first_appearance(keys[0], hashed_only=True)
            if hashed is not None:              # groups numbered by first appearance already
                return cls(hashed[0], len(hashed[1]), hashed[1])
        codes = _value_codes(keys[0])
        for k in keys[1:]:
            codes = _combine(codes, _value_codes(k))
        if codes[1] > 4 * n + 1024:             # too wide for a table of every code
            codes = _dense(*codes)
        gid, firsts = appearances(*codes)
        return cls(gid, len(firsts), firsts)

    @property
    def order(self) -> Any:
        """The rows sorted stably by group: numpy's radix sort on 16-bit halves of the group
        ids (a comparison sort of int64 is several times slower)."""
        if self._order is None:
            if self.count <= 1 << 16:
                self._order = np.argsort(self.gid.astype(np.uint16), kind="stable")
            else:
                low = np.argsort((self.gid & 0xFFFF).astype(np.uint16), kind="stable")
                high = (self.gid[low] >> 16).astype(np.uint32)
                self._order = low[np.argsort(high, kind="stable")]
        return self._order

    def tally(self, mask: Any = None) -> Any:
        """Rows per group (where `mask`)."""
        if mask is None:
            return self.sizes
        counts = np.zeros(self.count, np.int64)
        self.reduce(np.add, _bytes(mask), 0, mask, counts=counts)   # the sums are not used
        return counts

    def reduce(self, ufunc: Any, values: Any, identity: Any, valid: Any = None,
               skip_nan: bool = False, counts: Any = None) -> Any:
        """ufunc (add, multiply, minimum, maximum) reduced over each group's values in row
        order (identity for none), leaving out rows where `valid` is false and, with
        `skip_nan`, NaNs; integers wrap. `counts` (int64 per group) adds the values taken."""
        if values.dtype == np.float16:      # no kernel of its own: exact in float32
            return self.reduce(ufunc, values.astype(np.float32), identity, valid, skip_nan,
                               counts).astype(np.float16)
        out = np.full(self.count, identity, values.dtype)
        op = _REDUCE_OPS.get(ufunc)
        if op is None or values.dtype.kind not in "iuf":        # Python integers, say
            assert valid is None and counts is None and not skip_nan
            ufunc.at(out, self.gid, values)
        else:
            _g.group_reduce(op, self.gid, np.ascontiguousarray(values),
                            None if valid is None else _bytes(valid), skip_nan, out, counts)
        return out

    def first_row(self, mask: Any, last: bool = False) -> Any:
        """The first (or last) row of each group where `mask` is true, -1 where none is."""
        out = np.full(self.count, -1, np.int64)
        _g.group_first_rows(self.gid, None if mask is None else _bytes(mask), last, out)
        return out


def _bytes(mask: Any) -> Any:
    """A boolean mask as the uint8 array the kernels take (no copy when contiguous)."""
    return np.ascontiguousarray(mask, np.bool_).view(np.uint8)


# -- results --------------------------------------------------------------------------------------

def _bitmap(valid: Any) -> Any:
    return py_buffer(np.packbits(valid.astype(np.bool_), bitorder="little").tobytes())


def _fixed(type: DataType, values: Any, valid: Any = None) -> ArrayData:
    """ArrayData of `type` over numpy `values` (null where `valid` is false)."""
    n = len(values)
    nulls = 0 if valid is None else n - int(np.count_nonzero(valid))
    bits = None if not nulls else _bitmap(valid)
    if storage_type(type).kind == Kind.BOOL:
        buf = _bitmap(values)
    else:
        buf = py_buffer(np.ascontiguousarray(values).tobytes())
    return ArrayData(type, n, 0, nulls, [bits, buf])


def _rows(data: ArrayData, rows: Any) -> ArrayData:
    """The rows of `data` at int64 `rows` (-1: a null row)."""
    rows = np.ascontiguousarray(rows, np.int64)
    sel = Selection(py_buffer(rows.tobytes()), len(rows), bool((rows < 0).any()))
    return apply(data, sel)


def _list_of(data: ArrayData, rows: Any, sizes: Any) -> ArrayData:
    """A list<item: type> array: group g holds `sizes[g]` of `rows`, in order."""
    offsets = np.zeros(len(sizes) + 1, np.int32)
    np.cumsum(sizes, out=offsets[1:])
    child = _rows(data, rows)
    return ArrayData(list_(data.type), len(sizes), 0, 0,
                     [None, py_buffer(offsets.tobytes())], [child])


def _struct_of(names: tuple[str, str], parts: tuple[ArrayData, ArrayData]) -> ArrayData:
    t = struct([(names[0], parts[0].type), (names[1], parts[1].type)])
    return ArrayData(t, parts[0].length, 0, 0, [None], list(parts))


# -- the aggregations ---------------------------------------------------------------------------

def _no_kernel(func: str, t: DataType) -> ArrowNotImplementedError:
    # a hash_ kernel's inputs end with the group ids' type
    groups = ("uint32",) if func.startswith("hash_") else ()
    return no_kernel(func, t, *groups)


def _family(t: Any) -> str:
    """"number", "bool", "temporal", "binary", "decimal" or "other"."""
    s = storage_type(t)
    if s.kind == Kind.BOOL:
        return "bool"
    if getattr(s, "is_integer", False) or getattr(s, "is_float", False):
        return "float16" if s.name == "halffloat" else "number"
    if isinstance(s, DurationType):
        return "duration"
    if isinstance(s, TimestampType) or s.name.startswith(("date", "time")):
        return "temporal"
    if s.kind in (Kind.BINARY, Kind.LARGE_BINARY) or isinstance(s, FixedSizeBinaryType):
        return "binary"
    if s.name.startswith("decimal"):
        return "decimal"
    if isinstance(s, DictionaryType):
        return "dictionary"
    if s.kind == Kind.NULL:
        return "null"
    if s.kind in _NESTED_KINDS:
        return "nested"
    return "other"


_ACCEPTS = {
    "sum": {"number", "bool"}, "product": {"number", "bool"}, "mean": {"number", "bool"},
    "stddev": {"number"}, "variance": {"number"}, "any": {"bool"}, "all": {"bool"},
    "min": {"number", "bool", "temporal", "binary", "decimal"},
    "first": {"number", "bool", "temporal", "binary"},
    "list": {"number", "bool", "temporal", "binary", "decimal", "other", "null"},
}
for _f in ("max", "min_max", "one"):
    _ACCEPTS[_f] = _ACCEPTS["min"]
for _f in ("last", "first_last"):
    _ACCEPTS[_f] = _ACCEPTS["first"]
# decimals pyarrow aggregates but arrowipc does not (yet)
_DECIMAL_TOO = {"sum", "product", "mean", "stddev", "variance"}
# what pyarrow's kernels give for a column of the null type: nulls of this type (None: null)
_OF_NULLS: dict[str, Any] = {"sum": int64, "product": int64, "mean": float64, "min": None,
                             "max": None, "one": None, "min_max": None}
# the kernel pyarrow runs for a function (its error messages name it)
_KERNEL_OF = {"min": "min_max", "max": "min_max", "first": "first_last", "last": "first_last"}


def aggregate(keys: Sequence[ArrayData], aggregations: Sequence[Aggregation], num_rows: int,
              use_threads: bool) -> list[ArrayData]:
    """The columns of the grouped result: the key columns (one row per group, in order of
    first appearance), then each aggregation's."""
    for _, func, _, _ in aggregations:
        bare = func[5:] if func.startswith("hash_") else func
        if bare not in FUNCTIONS and bare not in _NOT_OURS or (not keys and bare in _HASH_ONLY):
            raise ArrowKeyError(f"No function registered with name: {func}")
        if bare in _NOT_OURS:
            raise ArrowNotImplementedError(f"arrowipc does not compute {func} (docs/table-ops.md"
                                           f" lists the aggregations it does)")
    for targets, func, _, _ in aggregations:
        bare = func[5:] if func.startswith("hash_") else func
        wanted = FUNCTIONS[bare]
        if len(targets) != wanted:
            extra = 1 if keys else 0            # the group ids are an argument of hash_*
            raise ArrowInvalid(f"Function '{func}' accepts {wanted + extra} arguments but "
                               f"{len(targets) + extra} passed")
    if use_threads and any((f[5:] if f.startswith("hash_") else f) in _ORDERED
                           for _, f, _, _ in aggregations):
        raise ArrowNotImplementedError("Using ordered aggregator in multiple threaded execution "
                                       "is not supported")
    groups = Groups.of_keys(keys, num_rows)

    def computed(aggregation: Aggregation) -> ArrayData:
        targets, func, opt, _ = aggregation
        bare = func[5:] if func.startswith("hash_") else func
        return _aggregate(groups, bare, func, targets[0] if targets else None, _options(opt))

    # the kernels release the GIL: with use_threads, aggregations run side by side
    columns = parallel_map(computed, list(aggregations), num_rows) if use_threads else \
        [computed(a) for a in aggregations]
    return [_rows(d, groups.first_rows) for d in keys] + columns


def _aggregate(g: Groups, bare: str, func: str, data: ArrayData | None,
               opts: dict[str, Any]) -> ArrayData:
    """One aggregation over the groups."""
    if bare == "count_all":
        return _fixed(int64(), g.sizes)
    assert data is not None
    t = data.type
    family = _family(t)
    skip_nulls = bool(opts.get("skip_nulls", True))
    valid = validity_mask(data)
    if storage_type(t).kind == Kind.NULL:
        valid = np.zeros(data.length, np.bool_)
    nvalid = g.tally(valid) if valid is not None else g.sizes
    has_nulls = nvalid < g.sizes
    if bare == "count":
        mode = _mode(opts)
        return _fixed(int64(), {"only_valid": nvalid, "only_null": g.sizes - nvalid,
                                "all": g.sizes}[mode])
    if bare in ("count_distinct", "distinct"):
        if family == "nested":                  # pyarrow groups by the values: no nested keys
            raise ArrowNotImplementedError(f"Keys of type {t}")
        if family == "null" and bare == "count_distinct":
            return _fixed(int64(), (g.sizes > 0).astype(np.int64))    # pyarrow counts the null
        return _distinct(g, bare, data, valid, _mode(opts))
    if family == "null" and bare in _OF_NULLS:
        # no values: a null of the type pyarrow's kernel gives, in every group
        none = np.zeros(g.count, np.bool_)
        if bare == "min_max":
            part = ArrayData(t, g.count, 0, g.count, [])
            return _struct_of(("min", "max"), (part, part))
        if _OF_NULLS[bare] is None:
            return ArrayData(t, g.count, 0, g.count, [])
        return _fixed(_OF_NULLS[bare](), np.zeros(g.count, np.int64), none)
    accepted = _ACCEPTS.get(bare, set())
    if family not in accepted:
        if family == "decimal" and bare in _DECIMAL_TOO:
            raise ArrowNotImplementedError(f"arrowipc does not compute {func} of {t} values "
                                           f"(pyarrow does): cast them to float64 first")
        raise _no_kernel(func.replace(bare, _KERNEL_OF.get(bare, bare)), t)
    if bare == "list":
        return _list_of(data, g.order, g.sizes)
    if bare in ("first", "last", "one", "first_last"):
        if bare == "first_last":
            parts = (_first(g, data, valid, skip_nulls, False),
                     _first(g, data, valid, skip_nulls, True))
            return _struct_of(("first", "last"), parts)
        return _first(g, data, valid, skip_nulls or bare == "one", bare == "last")
    if bare in ("min", "max", "min_max"):
        if bare == "min_max":
            return _struct_of(("min", "max"), (_extreme(g, data, valid, skip_nulls, "min"),
                                               _extreme(g, data, valid, skip_nulls, "max")))
        return _extreme(g, data, valid, skip_nulls, bare)
    found = numeric_values(data)
    assert found is not None
    values = found[0]
    min_count = int(opts.get("min_count", 0 if bare in ("stddev", "variance") else 1))
    # the result is null with too few values, or with a null when nulls are not skipped
    ok = nvalid >= min_count
    if not skip_nulls:
        ok &= ~has_nulls
    if bare in ("any", "all"):
        b = values.astype(np.bool_)
        if valid is not None:
            b = b & valid if bare == "any" else b | ~valid
        hits = g.tally(b if bare == "any" else ~b) > 0
        result = hits if bare == "any" else ~hits
        # Kleene logic: a true (any) or false (all) decides whatever the nulls
        decided = (nvalid >= min_count) & (hits | ~has_nulls | skip_nulls)
        return _fixed(bool_(), result, decided)
    if bare in ("sum", "product", "mean"):
        return _sum(g, bare, values, valid, nvalid, ok)
    ddof = int(opts.get("ddof", 0))
    return _variance(g, bare, values, valid, nvalid, ok & (nvalid > ddof), ddof)


def _mode(opts: dict[str, Any]) -> str:
    """CountOptions' mode; pyarrow's repr shows only_valid as NON_NULL, only_null as NULLS."""
    mode = str(opts.get("mode", "only_valid")).lower()
    mode = {"non_null": "only_valid", "nulls": "only_null"}.get(mode, mode)
    if mode not in ("only_valid", "only_null", "all"):
        raise ValueError(f'"{mode}" is not a valid mode')
    return mode


def _sum(g: Groups, bare: str, values: Any, valid: Any, nvalid: Any, ok: Any) -> ArrayData:
    kind = values.dtype.kind
    # pyarrow's accumulators: int64 for signed, uint64 for unsigned and booleans, double
    acc, out_type = ((np.float64, float64()) if kind == "f" else
                     (np.int64, int64()) if kind == "i" else (np.uint64, uint64()))
    if bare == "mean":                  # pyarrow's mean adds in double (no wrap-around)
        acc = np.float64
    v = values.astype(acc, copy=False)
    if bare == "product":
        total = g.reduce(np.multiply, v, 1, valid)
    else:
        total = g.reduce(np.add, v, 0, valid)   # integers wrap on overflow, as pyarrow's
    if bare == "mean":
        with np.errstate(invalid="ignore", divide="ignore"):
            return _fixed(float64(), total.astype(np.float64) / nvalid, ok)
    return _fixed(out_type, total, ok)


def _variance(g: Groups, bare: str, values: Any, valid: Any, nvalid: Any, ok: Any,
              ddof: int) -> ArrayData:
    """pyarrow's two algorithms: integers of up to 32 bits sum and sum squares exactly (m2 =
    square_sum - sum * sum / count, the division split in whole and fraction), wider integers
    and floats take the mean, then the squared deviations from it."""
    with np.errstate(invalid="ignore", divide="ignore"):
        if values.dtype.kind in "iu" and values.dtype.itemsize <= 4:
            m2 = _exact_m2(g, values, valid, nvalid)
        else:
            v = values.astype(np.float64)
            if valid is not None:
                v = np.where(valid, v, 0.0)
            mean = np.bincount(g.gid, weights=v, minlength=g.count) / nvalid
            dev = v - mean[g.gid] if g.n else v
            if valid is not None:
                dev = np.where(valid, dev, 0.0)
            m2 = np.bincount(g.gid, weights=dev * dev, minlength=g.count)
        result = np.where(ok, m2 / np.where(ok, nvalid - ddof, 1), 0.0)
    if bare == "stddev":
        result = np.sqrt(result)
    return _fixed(float64(), result, ok)


def _exact_m2(g: Groups, values: Any, valid: Any, nvalid: Any) -> Any:
    """Each group's sum of squared deviations from integer sums, as pyarrow computes it."""
    v = values.astype(np.int64)
    if valid is not None:
        v = np.where(valid, v, 0)
    peak = int(np.abs(v).max(initial=0))
    # int64 holds the squares' sums when no group can overflow them; else Python integers
    exact = peak * peak * max(g.n, 1) < _BIG
    w = v if exact else v.astype(object)
    total = g.reduce(np.add, w, 0)
    squares = g.reduce(np.add, w * w, 0)
    if not (exact and int(np.abs(total).max(initial=0)) < 3_000_000_000):
        total, squares = total.astype(object), squares.astype(object)
    count = np.maximum(nvalid, 1)
    total_square = total * total
    whole = total_square // count
    fraction = (total_square % count).astype(np.float64) / count
    return (squares - whole).astype(np.float64) - fraction


def _first(g: Groups, data: ArrayData, valid: Any, skip_nulls: bool, last: bool) -> ArrayData:
    """The first (last) value of each group: the first valid one when skipping nulls."""
    mask = np.ones(g.n, np.bool_) if valid is None or not skip_nulls else valid
    return _rows(data, g.first_row(mask, last))


def _extreme(g: Groups, data: ArrayData, valid: Any, skip_nulls: bool, which: str
             ) -> ArrayData:
    """The min or max of each group's values: null without a value (or with a null when nulls
    are not skipped); NaNs only where a group holds nothing else."""
    nvalid = g.tally(valid) if valid is not None else g.sizes
    ok = nvalid > 0
    if not skip_nulls:
        ok &= nvalid == g.sizes
    found = numeric_values(data)
    if found is None:                       # strings and binaries: by their ranks
        ranks = _key_ranks([data], "ascending", "at_end", "", g.n) if g.n else \
            np.zeros(0, np.int64)
        if valid is not None:           # nulls never win
            ranks = np.where(valid, ranks, _BIG if which == "min" else -1)
        best = g.reduce(np.minimum if which == "min" else np.maximum, ranks,
                        _BIG if which == "min" else -1)
        match = ranks == best[g.gid]
        if valid is not None:
            match &= valid
        rows = g.first_row(match)
        return _rows(data, np.where(ok, rows, -1))
    values = found[0]
    kind = values.dtype.kind
    if kind == "f":
        identity = np.inf if which == "min" else -np.inf
    else:
        info = np.iinfo(values.dtype)
        identity = info.max if which == "min" else info.min
    usable = np.zeros(g.count, np.int64) if kind == "f" else None
    best = g.reduce(np.minimum if which == "min" else np.maximum, values, identity, valid,
                    kind == "f", usable)
    if usable is not None:              # NaN where a group holds nothing else
        best[usable == 0] = np.nan
    return _fixed(data.type, best, ok)


def _distinct(g: Groups, bare: str, data: ArrayData, valid: Any, mode: str) -> ArrayData:
    """count_distinct or distinct: each group's distinct values (in order of first appearance),
    nulls counted as `mode` says."""
    codes, bound = _value_codes(data) if g.n else (np.zeros(0, np.int64), 1)
    keep = np.ones(g.n, np.bool_)
    if valid is not None or storage_type(data.type).kind == Kind.NULL:
        is_null = ~valid if valid is not None else np.ones(g.n, np.bool_)
        if mode == "only_valid":
            keep = ~is_null
        elif mode == "only_null":
            keep = is_null
    elif mode == "only_null":
        keep = np.zeros(g.n, np.bool_)
    pair, _ = _combine((g.gid, max(g.count, 1)), (codes, bound))
    rows = np.flatnonzero(keep)
    if len(rows):
        _, first = np.unique(pair[rows], return_index=True)
        firsts = np.sort(rows[first])            # rows sorted: groups' values in appearance
    else:
        firsts = np.zeros(0, np.int64)
    sizes = np.bincount(g.gid[firsts], minlength=g.count).astype(np.int64)
    if bare == "count_distinct":
        return _fixed(int64(), sizes)
    firsts = firsts[np.argsort(g.gid[firsts], kind="stable")]
    return _list_of(data, firsts, sizes)
