# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""Kernels over group ids (what a group_by computes once its keys are coded).

Rows carry int64 codes (a key's code, or the row of the first equal value); groups are numbered
by first appearance, and each aggregation reduces the values of every row into its group's slot,
in row order. Codes and group ids are checked against their bounds as they are read, so a wrong
id raises instead of writing out of bounds. The loops run with the GIL released and create no
Python object per value.
"""
from libc.stdint cimport uint8_t, int64_t, uint64_t
from libc.stdlib cimport malloc, free

from arrowipc._core.numeric_types cimport integer_t, numeric_t

OP_CODES = {"sum": 0, "product": 1, "min": 2, "max": 3}
cdef enum:
    OP_SUM = 0
    OP_PRODUCT = 1
    OP_MIN = 2
    OP_MAX = 3


def appearance_ids(const integer_t[::1] codes, uint64_t lo, int64_t bound,
                   const uint8_t[::1] valid, int64_t[::1] ids, int64_t[::1] firsts):
    """Number the distinct codes by first appearance: ids[i] is row i's group, firsts[g] the
    first row of group g; returns the number of groups. Each code minus `lo` (two's complement
    bits, so that signed and unsigned codes subtract alike) lies in [0, bound); the rows where
    `valid` (None: every row) is 0 share one more group, whatever their codes."""
    cdef int64_t n = codes.shape[0], i, count = 0, bad = -1
    cdef uint64_t c
    cdef bint use_valid = valid is not None
    if bound < 0 or ids.shape[0] < n or firsts.shape[0] < min(n, bound + 1) or \
            (use_valid and valid.shape[0] < n):
        raise ValueError("appearance_ids: arrays too short")
    cdef int64_t* group = <int64_t*>malloc(sizeof(int64_t) * (bound + 1))
    if group == NULL:
        raise MemoryError()
    try:
        with nogil:
            for i in range(bound + 1):
                group[i] = -1
            for i in range(n):
                if use_valid and not valid[i]:
                    c = <uint64_t>bound
                else:
                    c = <uint64_t>codes[i] - lo
                    if c >= <uint64_t>bound:
                        bad = i
                        break
                if group[c] < 0:
                    group[c] = count
                    firsts[count] = i
                    count += 1
                ids[i] = group[c]
    finally:
        free(group)
    if bad >= 0:
        raise ValueError(f"appearance_ids: code {codes[bad]} of row {bad} outside "
                         f"[{lo}, {lo} + {bound})")
    return count


def first_row_ids(const int64_t[::1] first, int64_t[::1] ids, int64_t[::1] firsts):
    """appearance_ids of codes that are rows: first[i], the first row of a value equal to row
    i's, is at most i, so the group of that row is known when row i comes (no table)."""
    cdef int64_t n = first.shape[0], i, f, count = 0, bad = -1
    if ids.shape[0] < n or firsts.shape[0] < n:
        raise ValueError("first_row_ids: arrays too short")
    with nogil:
        for i in range(n):
            f = first[i]
            if f < 0 or f > i:
                bad = i
                break
            if f == i:
                ids[i] = count
                firsts[count] = i
                count += 1
            else:
                ids[i] = ids[f]
    if bad >= 0:
        raise ValueError(f"first_row_ids: row {bad} names row {first[bad]}, not one before it")
    return count


cdef inline bint _better(int op, numeric_t v, numeric_t r) noexcept nogil:
    # np.minimum / np.maximum: a NaN wins and stays; ties keep what is there
    if numeric_t is float or numeric_t is double:
        if r != r:
            return False
        if v != v:
            return True
    return v < r if op == OP_MIN else v > r


cdef inline int64_t _reduce_loop(const int op, const int64_t[::1] ids,
                                 const numeric_t[::1] values, const uint8_t[::1] valid,
                                 bint use_valid, bint skip_nan, numeric_t[::1] out,
                                 int64_t[::1] counts, bint counting) noexcept nogil:
    """group_reduce's loop; the row of the first group id out of bounds, or -1."""
    cdef int64_t n = ids.shape[0], groups = out.shape[0], i, g
    cdef numeric_t v
    for i in range(n):
        g = ids[i]
        if g < 0 or g >= groups:
            return i
        if use_valid and not valid[i]:
            continue
        v = values[i]
        if numeric_t is float or numeric_t is double:
            if skip_nan and v != v:
                continue
        if counting:
            counts[g] += 1
        if op == OP_SUM:
            if numeric_t is float or numeric_t is double:
                out[g] = out[g] + v
            else:               # in unsigned arithmetic: wraps without undefined behaviour
                out[g] = <numeric_t>(<uint64_t>out[g] + <uint64_t>v)
        elif op == OP_PRODUCT:
            if numeric_t is float or numeric_t is double:
                out[g] = out[g] * v
            else:
                out[g] = <numeric_t>(<uint64_t>out[g] * <uint64_t>v)
        elif _better(op, v, out[g]):
            out[g] = v
    return -1


def group_reduce(int op, const int64_t[::1] ids, const numeric_t[::1] values,
                 const uint8_t[::1] valid, bint skip_nan, numeric_t[::1] out,
                 int64_t[::1] counts):
    """out[ids[i]] = op(out[ids[i]], values[i]) over the rows in order (out holds each group's
    identity), leaving out the rows where `valid` (None: every row) is 0 and, with `skip_nan`,
    NaN values; `counts` (None: not wanted) receives the number of values each group took.
    Sums and products of integers wrap around, as numpy's and pyarrow's do."""
    cdef int64_t n = ids.shape[0], groups = out.shape[0], bad = -1
    cdef bint use_valid = valid is not None, counting = counts is not None
    if values.shape[0] < n or (use_valid and valid.shape[0] < n) or \
            (counting and counts.shape[0] < groups):
        raise ValueError("group_reduce: arrays too short")
    with nogil:
        # one loop per operation: the operation's branch stays out of the loop
        if op == OP_SUM:
            bad = _reduce_loop(OP_SUM, ids, values, valid, use_valid, skip_nan, out, counts,
                               counting)
        elif op == OP_PRODUCT:
            bad = _reduce_loop(OP_PRODUCT, ids, values, valid, use_valid, skip_nan, out,
                               counts, counting)
        elif op == OP_MIN:
            bad = _reduce_loop(OP_MIN, ids, values, valid, use_valid, skip_nan, out, counts,
                               counting)
        else:
            bad = _reduce_loop(OP_MAX, ids, values, valid, use_valid, skip_nan, out, counts,
                               counting)
    if bad >= 0:
        raise ValueError(f"group_reduce: group {ids[bad]} of row {bad} outside [0, {groups})")


def group_first_rows(const int64_t[::1] ids, const uint8_t[::1] mask, bint last,
                     int64_t[::1] out):
    """The first (last) row of each group where `mask` (None: every row) is set; out starts at
    -1 and keeps it for a group without one."""
    cdef int64_t n = ids.shape[0], groups = out.shape[0], i, g, bad = -1
    cdef bint use_mask = mask is not None
    if use_mask and mask.shape[0] < n:
        raise ValueError("group_first_rows: mask shorter than ids")
    with nogil:
        for i in range(n):
            g = ids[i]
            if g < 0 or g >= groups:
                bad = i
                break
            if use_mask and not mask[i]:
                continue
            if last or out[g] < 0:
                out[g] = i
    if bad >= 0:
        raise ValueError(f"group_first_rows: group {ids[bad]} of row {bad} outside "
                         f"[0, {groups})")
