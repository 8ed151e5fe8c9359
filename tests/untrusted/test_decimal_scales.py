"""A decimal's scale comes from a schema, which may come from outside and may be any int32: the
casts that shift a decimal's digits must answer at once for any of them (the dataset fuzz
target's finding: a file whose decimal scale a mutant made 2**31 - 1 hung the scan casting it to
the dataset's type, computing 10 ** 2147483645; pyarrow 26 crashes on the same cast)."""
import re

import numpy as np
import pyarrow as pa
import pyarrow.feather as pf
import pytest

import arrowipc as A
import arrowipc.dataset as ds
from arrowipc._core.arraydata import ArrayData
from arrowipc._core.buffer import py_buffer
from arrowipc.array import make_array
from arrowipc.errors import ArrowInvalid

HUGE = 2_000_000_000


def _decimals(scale, values=(12345, 0)):
    words = np.array([w for v in values for w in (v, 0)], dtype=np.int64)
    return make_array(ArrayData(A.decimal128(5, scale), len(values), 0, 0,
                                [None, py_buffer(words.tobytes())]))


@pytest.mark.parametrize("scale", [HUGE, -HUGE])
@pytest.mark.parametrize("target", [A.decimal128(5, 2), A.decimal256(40, 2), A.int64()],
                         ids=str)
@pytest.mark.parametrize("safe", [True, False])
def test_a_shift_of_more_digits_than_a_cast_keeps_is_refused(scale, target, safe):
    with pytest.raises(ArrowInvalid, match=r"^Rescaling Decimal by \d+ digits is out of range "
                                           r"\(a cast shifts a decimal's digits by at most 400\)"):
        _decimals(scale).cast(target, safe=safe)


@pytest.mark.parametrize("target", [A.float64(), A.float32()], ids=str)
def test_to_float_a_scale_past_the_floats_range_is_zero_or_infinity(target):
    assert _decimals(HUGE).cast(target).to_pylist() == [0.0, 0.0]
    assert _decimals(-HUGE, (12345,)).cast(target).to_pylist() == [float("inf")]


def test_shifts_within_the_bound_keep_pyarrows_results():
    ours = _decimals(300, (12345, 0))
    theirs = pa.Array.from_buffers(pa.decimal128(5, 300), 2, [None, pa.py_buffer(
        np.array([12345, 0, 0, 0], dtype=np.int64).tobytes())])
    for target, peer in ((A.decimal128(5, 2), pa.decimal128(5, 2)), (A.int64(), pa.int64())):
        assert ours.cast(target, safe=False).to_pylist() == \
            theirs.cast(peer, safe=False).to_pylist()


def test_a_dataset_file_whose_decimal_scale_is_huge_is_an_error_naming_it(tmp_path):
    first = str(tmp_path / "a.arrow")
    odd = str(tmp_path / "b.arrow")
    pf.write_feather(pa.table({"d": pa.array([1], pa.decimal128(5, 2))}), first)
    column = pa.Array.from_buffers(pa.decimal128(5, HUGE), 1, [None, pa.py_buffer(
        np.array([12345, 0], dtype=np.int64).tobytes())])
    pf.write_feather(pa.table({"d": column}), odd, compression="uncompressed")
    with pytest.raises(ArrowInvalid, match=f"^{re.escape(odd)}: column 'd' of type "
                                           r"decimal128\(5, 2000000000\)"):
        ds.dataset([first, odd], format="ipc").to_table()


@pytest.mark.parametrize("value, scale, message", [
    ("1E+999999999", 2, r"1E\+999999999 does not fit in decimal128\(10, 2\) \(precision 10\)"),
    ("1E-999999999", 2, r"rescaling 1E-999999999 to scale 2 would lose digits"),
    (5, HUGE, r"5 does not fit in decimal128\(10, 2000000000\) \(precision 10\)"),
    (5, -HUGE, r"rescaling 5 to scale -2000000000 would lose digits"),
])
def test_python_values_whose_shift_cannot_fit_are_refused_at_once(value, scale, message):
    import decimal
    v = decimal.Decimal(value) if isinstance(value, str) else value
    with pytest.raises(ArrowInvalid, match=message):
        A.array([v], A.decimal128(10, scale))


@pytest.mark.parametrize("scale", [HUGE, -HUGE])
def test_zero_converts_at_any_scale(scale):
    import decimal
    for zero in (0, decimal.Decimal("0E+999999999")):
        assert A.array([zero], A.decimal128(10, scale)).data.buffers[1].to_pybytes() == bytes(16)
