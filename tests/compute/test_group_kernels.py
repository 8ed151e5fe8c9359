"""The group kernels (arrowipc/_core/group_kernels.pyx) on their own: numbering by first
appearance, per-group reductions and first rows against plain Python, the string hash's two
ways of reading a value's last bytes, and one test per bound rule with its message."""
import numpy as np
import pytest

import arrowipc
from arrowipc._core import group_kernels as gk

pa = pytest.importorskip("pyarrow")


def _python_appearances(codes):
    groups, firsts, seen = [], [], {}
    for i, c in enumerate(codes):
        if c not in seen:
            seen[c] = len(firsts)
            firsts.append(i)
        groups.append(seen[c])
    return groups, firsts


@pytest.mark.parametrize("seed", range(5))
def test_appearance_ids_number_codes_by_first_appearance(seed):
    rng = np.random.default_rng(seed)
    codes = rng.integers(-3, 9, int(rng.integers(0, 300)))
    valid = rng.random(len(codes)) < 0.8
    ids, firsts = np.empty(len(codes), np.int64), np.empty(len(codes), np.int64)
    count = gk.appearance_ids(codes, (-3) % 2 ** 64, 12, valid.view(np.uint8), ids, firsts)
    expected = _python_appearances([c if v else None for c, v in zip(codes.tolist(), valid)])
    assert (ids.tolist(), firsts[:count].tolist()) == expected


def test_first_row_ids_number_first_rows():
    first = np.array([0, 1, 0, 3, 1, 3, 6], np.int64)
    ids, firsts = np.empty(7, np.int64), np.empty(7, np.int64)
    count = gk.first_row_ids(first, ids, firsts)
    assert (ids.tolist(), firsts[:count].tolist()) == _python_appearances(first.tolist())


@pytest.mark.parametrize("dtype", [np.int8, np.int64, np.uint64, np.float32, np.float64])
@pytest.mark.parametrize("op", ["sum", "product", "min", "max"])
def test_group_reduce_as_python(dtype, op):
    rng = np.random.default_rng(7)
    n, count = 500, 9
    ids = rng.integers(0, count, n)
    values = rng.integers(0, 100, n).astype(dtype)
    if np.dtype(dtype).kind == "f":
        values[rng.random(n) < 0.1] = np.nan
    valid = rng.random(n) < 0.9
    python = {"sum": lambda a, b: a + b, "product": lambda a, b: a * b,
              "min": lambda a, b: b if np.isnan(b) or b < a else a,
              "max": lambda a, b: b if np.isnan(b) or b > a else a}[op]
    identity = {"sum": 0, "product": 1, "min": 127, "max": 0}[op]
    for skip_nan in (False, True):
        out = np.full(count, identity, dtype)
        counts = np.zeros(count, np.int64)
        gk.group_reduce(gk.OP_CODES[op], ids, values, valid.view(np.uint8), skip_nan, out,
                        counts)
        expected = np.full(count, identity, dtype)
        taken = np.zeros(count, np.int64)
        with np.errstate(over="ignore", invalid="ignore"):
            for g, v, ok in zip(ids, values, valid):
                if not ok or (skip_nan and np.isnan(v)):
                    continue
                expected[g] = python(expected[g], v)
                taken[g] += 1
        np.testing.assert_array_equal(out, expected)
        assert counts.tolist() == taken.tolist()


def test_group_first_rows():
    ids = np.array([2, 0, 2, 1, 0, 2], np.int64)
    mask = np.array([0, 1, 1, 0, 1, 1], np.uint8)
    first = np.full(4, -1, np.int64)
    gk.group_first_rows(ids, mask, False, first)
    last = np.full(4, -1, np.int64)
    gk.group_first_rows(ids, None, True, last)
    assert (first.tolist(), last.tolist()) == ([1, -1, 2, -1], [4, 3, 5, -1])


def test_strings_ending_their_buffer_group_with_their_equals():
    # a short value's last bytes are read as one masked word when eight bytes follow it in the
    # buffer, else byte by byte: equal values must hash alike either way
    values = ["ab", "abcdefghij", "xyz", "abcdefghij", "q", "xyz", "ab"]
    for cut in range(len(values)):
        column = pa.array(values[cut:] + values[:cut])
        got = arrowipc.table({"k": column, "v": list(range(len(values)))}) \
            .group_by("k", use_threads=False).aggregate([("v", "sum")])
        want = pa.table({"k": column, "v": list(range(len(values)))}) \
            .group_by("k", use_threads=False).aggregate([("v", "sum")])
        assert pa.table(got).to_pylist() == want.to_pylist()


def _arrays(n):
    return np.zeros(n, np.int64), np.zeros(n, np.int64)


def test_a_code_outside_the_bound_raises():
    ids, firsts = _arrays(3)
    with pytest.raises(ValueError, match=r"appearance_ids: code 9 of row 1 outside \[0, 0 \+ 4\)"):
        gk.appearance_ids(np.array([1, 9, 2]), 0, 4, None, ids, firsts)


def test_a_first_row_after_its_row_raises():
    ids, firsts = _arrays(3)
    with pytest.raises(ValueError, match="first_row_ids: row 1 names row 2, not one before it"):
        gk.first_row_ids(np.array([0, 2, 2]), ids, firsts)


@pytest.mark.parametrize("kernel", ["group_reduce", "group_first_rows"])
def test_a_group_id_outside_the_groups_raises(kernel):
    ids = np.array([0, 5, 1], np.int64)
    out = np.zeros(2, np.int64)
    call = {"group_reduce": lambda: gk.group_reduce(0, ids, ids, None, False, out, None),
            "group_first_rows": lambda: gk.group_first_rows(ids, None, False, out)}[kernel]
    with pytest.raises(ValueError, match=rf"{kernel}: group 5 of row 1 outside \[0, 2\)"):
        call()


def test_arrays_too_short_raise():
    ids, firsts = _arrays(2)
    with pytest.raises(ValueError, match="appearance_ids: arrays too short"):
        gk.appearance_ids(np.zeros(3, np.int64), 0, 4, None, ids, firsts)
    with pytest.raises(ValueError, match="group_reduce: arrays too short"):
        gk.group_reduce(0, np.zeros(3, np.int64), np.zeros(2, np.int64), None, False,
                        np.zeros(1, np.int64), None)
