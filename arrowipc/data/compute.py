"""Comparison, boolean, membership and arithmetic kernels over ArrayData (what expressions
evaluate to), with pyarrow.compute's type promotion and null semantics.

An operand (a "datum") is either an ArrayData (a column) or a ScalarData (one value with its
type, held as a one-row ArrayData). Every kernel takes datums and returns one: an array when any
operand is an array, else a scalar. Boolean results are bit-packed, with the validity of the
operands combined (a null in, a null out), except where Kleene logic says otherwise.

Promotion follows pyarrow: integers of one signedness widen to the wider; a signed and an
unsigned integer meet in a signed type wide enough for both (at most int64); an integer meets
a float in that float; temporal values of one kind meet in the finer unit; dictionary-encoded
operands are decoded first.
"""
from __future__ import annotations

import numpy as np

from .._core.arraydata import ArrayData
from .._core.bitmap import unpack_bits
from .._core.buffer import py_buffer
from ..errors import ArrowInvalid, ArrowNotImplementedError
from .. import types as T
from .cast import cast_data
from .from_python import array_data_from_python
from .to_python import to_pylist

TYPE_CHECKING = False               # typing itself is not imported at run time
if TYPE_CHECKING:
    from typing import Any, Union

    Datum = Union[ArrayData, "ScalarData"]

__all__ = ["COMPARISONS", "ARITHMETIC", "ScalarData", "arithmetic", "and_kleene", "broadcast",
           "common_numeric_type", "compare", "invert", "is_in", "is_null", "is_valid",
           "or_kleene", "scalar_data"]

# function name -> the comparison it makes
COMPARISONS = {"equal": "==", "not_equal": "!=", "less": "<", "less_equal": "<=",
               "greater": ">", "greater_equal": ">="}
# function name (and its checked variant) -> the operation
ARITHMETIC = {"add": "+", "subtract": "-", "multiply": "*", "divide": "/"}

_UNIT_FACTOR = {"s": 1, "ms": 1000, "us": 1000_000, "ns": 1000_000_000}


class ScalarData:
    """One value of a type, as a one-row ArrayData (`data`)."""
    __slots__ = ("data",)

    def __init__(self, data: ArrayData) -> None:
        self.data = data

    @property
    def type(self) -> Any:
        return self.data.type

    @property
    def is_valid(self) -> bool:
        return self.data.null_count == 0 if self.data.null_count >= 0 else \
            to_pylist(self.data)[0] is not None

    def as_py(self) -> Any:
        return to_pylist(self.data)[0]


def scalar_data(value: Any, type: Any = None) -> ScalarData:
    """A ScalarData of a Python value (its type inferred as pyarrow.scalar infers it, unless
    given)."""
    return ScalarData(array_data_from_python([value], type))


def _length(*datums: Datum) -> int | None:
    for d in datums:
        if isinstance(d, ArrayData):
            return d.length
    return None


def broadcast(d: Datum, length: int) -> ArrayData:
    """An ArrayData of `length` rows: the array itself, or the scalar repeated."""
    if isinstance(d, ArrayData):
        return d
    if length == 1:
        return d.data
    from .selection import take
    idx = array_data_from_python(np.zeros(length, dtype=np.int32))
    return take(d.data, idx)


# -- the type of a datum, decoded ------------------------------------------------------------------

def _decoded(d: Datum) -> Datum:
    """The datum with dictionary encoding and extension types taken off."""
    t = d.type
    if isinstance(d, ScalarData):
        return ScalarData(_decoded(d.data))  # type: ignore[arg-type]
    if _is_dictionary(t):
        return _decoded(cast_data(d, t.value_type))
    storage = getattr(t, "storage_type", None)
    if storage is not None:
        return d.with_type(storage)
    return d


def _is_dictionary(t: Any) -> bool:
    return bool(t.name.startswith("dictionary<"))


def _family(t: Any) -> str:
    """The comparison family of a (decoded) type."""
    name = t.name
    if getattr(t, "is_integer", False):
        return "int"
    if getattr(t, "is_float", False):
        return "float"
    if name == "bool":
        return "bool"
    if name == "null":
        return "null"
    if name in ("string", "large_string", "string_view"):
        return "string"
    if name in ("binary", "large_binary", "binary_view") or name.startswith("fixed_size_binary"):
        return "binary"
    if name.startswith("decimal"):
        return "decimal"
    if name.startswith("date"):
        return "date"
    if name.startswith("timestamp"):
        return "timestamp"
    if name.startswith("time32") or name.startswith("time64"):
        return "time"
    if name.startswith("duration"):
        return "duration"
    return "other"


def common_numeric_type(a: Any, b: Any) -> Any:
    """pyarrow's common numeric type of two integer or float types."""
    if getattr(a, "is_float", False) or getattr(b, "is_float", False):
        widths = [t.bit_width for t in (a, b) if getattr(t, "is_float", False)]
        return {16: T.float16(), 32: T.float32(), 64: T.float64()}[max(widths)]
    if a.is_signed == b.is_signed:
        return a if a.bit_width >= b.bit_width else b
    signed, unsigned = (a, b) if a.is_signed else (b, a)
    bits = min(64, max(signed.bit_width, 2 * unsigned.bit_width))
    return {8: T.int8(), 16: T.int16(), 32: T.int32(), 64: T.int64()}[bits]


def _no_kernel(function: str, *types: Any) -> ArrowNotImplementedError:
    return ArrowNotImplementedError(
        f"Function '{function}' has no kernel matching input types "
        f"({', '.join(str(t) for t in types)})")


# -- numpy views of a datum --------------------------------------------------------------------------

_NP = {"int8": np.int8, "int16": np.int16, "int32": np.int32, "int64": np.int64,
       "uint8": np.uint8, "uint16": np.uint16, "uint32": np.uint32, "uint64": np.uint64,
       "halffloat": np.float16, "float": np.float32, "double": np.float64}


def _np_dtype(t: Any) -> Any:
    dtype = _NP.get(t.name)
    if dtype is not None:
        return dtype
    if t.name == "date32[day]" or t.name.startswith("time32"):
        return np.int32
    return np.int64         # date64, timestamp, time64, duration


def _validity(d: ArrayData) -> Any:
    """A numpy bool array of the valid rows, or None when there is no null."""
    if d.type.name == "null":
        return np.zeros(d.length, dtype=bool)
    if d.null_count == 0 or d.buffers[0] is None:
        return None
    bits = unpack_bits(d.buffers[0], d.offset, d.length)
    return np.frombuffer(bits, dtype=np.uint8).astype(bool)


def _values(d: ArrayData) -> Any:
    """The values of a decoded ArrayData as a numpy array (objects for strings, binaries and
    decimals; nulls there are None)."""
    fam = _family(d.type)
    if fam == "bool":
        if d.buffers[1] is None:
            return np.zeros(d.length, dtype=bool)
        return np.frombuffer(unpack_bits(d.buffers[1], d.offset, d.length), dtype=np.uint8
                             ).astype(bool)
    if fam in ("int", "float", "date", "timestamp", "time", "duration"):
        dtype = _np_dtype(d.type)
        if d.length == 0:
            return np.zeros(0, dtype=dtype)
        return np.frombuffer(d.buffers[1], dtype=dtype,  # type: ignore[call-overload]
                             count=d.offset + d.length)[d.offset:]
    if fam == "null":
        return np.zeros(d.length, dtype=bool)
    out = np.empty(d.length, dtype=object)
    out[:] = to_pylist(d)
    return out


def _bool_data(values: Any, valid: Any, length: int) -> ArrayData:
    """A bool ArrayData of numpy bools `values` with numpy validity `valid` (None: all valid)."""
    vals = np.packbits(np.asarray(values, dtype=bool), bitorder="little")
    if valid is None:
        return ArrayData(T.bool_(), length, 0, 0, [None, py_buffer(vals.tobytes())])
    valid = np.asarray(valid, dtype=bool)
    nulls = int(length - np.count_nonzero(valid))
    vbits = np.packbits(valid, bitorder="little")
    return ArrayData(T.bool_(), length, 0, nulls,
                     [py_buffer(vbits.tobytes()) if nulls else None, py_buffer(vals.tobytes())])


def _both_valid(a: Any, b: Any) -> Any:
    if a is None:
        return b
    if b is None:
        return a
    return a & b


def _result(d: ArrayData, scalar: bool) -> Datum:
    return ScalarData(d) if scalar else d


def _operands(function: str, left: Datum, right: Datum) -> tuple[Any, Any, Any, Any, int, bool]:
    """(left values, right values, left validity, right validity, length, both scalar) as numpy,
    promoted to a type the two can be compared or computed in."""
    left, right = _decoded(left), _decoded(right)
    n = _length(left, right)
    both_scalar = n is None
    length = 1 if n is None else n
    lt, rt = left.type, right.type
    lf, rf = _family(lt), _family(rt)
    ld = broadcast(left, length)
    rd = broadcast(right, length)
    if lf == "null" or rf == "null":
        if lf == "other" or rf == "other":
            raise _no_kernel(function, lt, rt)
        zeros = np.zeros(length, dtype=bool)
        return zeros, zeros, zeros, zeros, length, both_scalar
    if lf in ("int", "float") and rf in ("int", "float"):
        common = common_numeric_type(lt, rt)
        dtype = _NP[common.name]
        lv = _values(ld).astype(dtype, copy=False)
        rv = _values(rd).astype(dtype, copy=False)
    elif lf == rf and lf in ("timestamp", "time", "duration"):
        lu, ru = lt.unit, rt.unit
        unit = lu if _UNIT_FACTOR[lu] >= _UNIT_FACTOR[ru] else ru
        lv = _values(ld).astype(np.int64) * (_UNIT_FACTOR[unit] // _UNIT_FACTOR[lu])
        rv = _values(rd).astype(np.int64) * (_UNIT_FACTOR[unit] // _UNIT_FACTOR[ru])
    elif lf == rf == "date":
        lv = _values(ld).astype(np.int64) * (86400000 if lt.name == "date32[day]" else 1)
        rv = _values(rd).astype(np.int64) * (86400000 if rt.name == "date32[day]" else 1)
    elif lf == rf and lf in ("bool", "string", "binary", "decimal"):
        lv, rv = _values(ld), _values(rd)
    else:
        raise _no_kernel(function, lt, rt)
    return lv, rv, _validity(ld), _validity(rd), length, both_scalar


# -- comparisons ---------------------------------------------------------------------------------

def compare(function: str, left: Datum, right: Datum) -> Datum:
    """`left op right` for a function of COMPARISONS: a bool datum, null where either is."""
    op = COMPARISONS[function]
    lv, rv, lvalid, rvalid, length, both_scalar = _operands(function, left, right)
    valid = _both_valid(lvalid, rvalid)
    if lv.dtype == object:
        # nulls are None in object arrays: give them a placeholder the comparison accepts
        mask = np.ones(length, dtype=bool) if valid is None else valid
        out = np.zeros(length, dtype=bool)
        idx = np.nonzero(mask)[0]
        a, b = lv[idx], rv[idx]
        out[idx] = _OPS[op](a, b).astype(bool) if len(idx) else out[idx]
        values = out
    else:
        with np.errstate(invalid="ignore"):
            values = _OPS[op](lv, rv)
    return _result(_bool_data(values, valid, length), both_scalar)


_OPS: dict[str, Any] = {"==": np.equal, "!=": np.not_equal, "<": np.less, "<=": np.less_equal,
                        ">": np.greater, ">=": np.greater_equal}


# -- Kleene logic ------------------------------------------------------------------------------------

def _bools(function: str, d: Datum) -> tuple[Any, Any, int | None]:
    d = _decoded(d)
    fam = _family(d.type)
    if fam not in ("bool", "null"):
        raise _no_kernel(function, d.type)
    data = d if isinstance(d, ArrayData) else d.data
    v, valid = _values(data), _validity(data)
    return v, (np.ones(data.length, dtype=bool) if valid is None else valid), \
        (data.length if isinstance(d, ArrayData) else None)


def _kleene(function: str, left: Datum, right: Datum, is_and: bool) -> Datum:
    n = _length(left, right)
    length = 1 if n is None else n
    lv, lok, _ = _bools(function, left)
    rv, rok, _ = _bools(function, right)
    if len(lv) != length:
        lv, lok = np.repeat(lv, length), np.repeat(lok, length)
    if len(rv) != length:
        rv, rok = np.repeat(rv, length), np.repeat(rok, length)
    lt, rt = lok & lv, rok & rv                   # known true
    lf, rf = lok & ~lv, rok & ~rv                 # known false
    if is_and:
        values = lt & rt
        valid = (lok & rok) | lf | rf
    else:
        values = lt | rt
        valid = (lok & rok) | lt | rt
    return _result(_bool_data(values & valid, None if valid.all() else valid, length), n is None)


def and_kleene(left: Datum, right: Datum) -> Datum:
    """Kleene AND: false when either side is false, else null when either is null."""
    return _kleene("and_kleene", left, right, True)


def or_kleene(left: Datum, right: Datum) -> Datum:
    """Kleene OR: true when either side is true, else null when either is null."""
    return _kleene("or_kleene", left, right, False)


def invert(d: Datum) -> Datum:
    """NOT of a bool datum (null stays null)."""
    v, ok, n = _bools("invert", d)
    length = len(v)
    return _result(_bool_data(~v & ok, None if ok.all() else ok, length), n is None)


# -- nulls and membership -------------------------------------------------------------------------

def is_null(d: Datum, nan_is_null: bool = False) -> Datum:
    """True where the value is null (or NaN, with nan_is_null); never null itself."""
    d = _decoded(d)
    data = d if isinstance(d, ArrayData) else d.data
    valid = _validity(data)
    out = np.zeros(data.length, dtype=bool) if valid is None else ~valid
    if nan_is_null and _family(data.type) == "float":
        with np.errstate(invalid="ignore"):
            out = out | np.isnan(_values(data))
    return _result(_bool_data(out, None, data.length), not isinstance(d, ArrayData))


def is_valid(d: Datum) -> Datum:
    """True where the value is not null; never null itself."""
    d = _decoded(d)
    data = d if isinstance(d, ArrayData) else d.data
    valid = _validity(data)
    out = np.ones(data.length, dtype=bool) if valid is None else valid
    return _result(_bool_data(out, None, data.length), not isinstance(d, ArrayData))


def is_in(d: Datum, value_set: ArrayData, null_matching_behavior: str = "MATCH") -> Datum:
    """Whether each value is in `value_set`. MATCH: a null matches a null in the set (false
    otherwise); SKIP: a null never matches; EMIT_NULL: a null gives null; INCONCLUSIVE: null
    when the value is null, or is not found and the set holds a null."""
    d = _decoded(d)
    vs = _decoded(value_set)
    assert isinstance(vs, ArrayData)
    data = d if isinstance(d, ArrayData) else d.data
    fam, sfam = _family(data.type), _family(vs.type)
    if sfam == "null" or vs.length == 0:
        sfam = fam
    numeric = ("int", "float")
    if not (fam == sfam or (fam in numeric and sfam in numeric) or fam == "null"):
        raise ArrowInvalid(f"Array type didn't match type of values set: {data.type} vs {vs.type}")
    valid = _validity(data)
    svalid = _validity(vs)
    set_has_null = svalid is not None and not svalid.all()
    members = [v for v in to_pylist(vs) if v is not None]
    length = data.length
    if fam == "null":
        found = np.zeros(length, dtype=bool)
    elif fam in numeric and members:
        vals = _values(data)
        with np.errstate(invalid="ignore"):
            found = np.isin(vals, np.asarray(members))
        if fam == "float" and any(m != m for m in members):
            found |= np.isnan(vals)
    else:
        keys = set(_key(v) for v in members)
        found = np.fromiter((_key(v) in keys for v in _values(data)), dtype=bool, count=length) \
            if fam not in numeric else np.zeros(length, dtype=bool)
    isnull = np.zeros(length, dtype=bool) if valid is None else ~valid
    found &= ~isnull
    out_valid = None
    if null_matching_behavior == "MATCH":
        if set_has_null:
            found |= isnull
    elif null_matching_behavior == "EMIT_NULL":
        out_valid = None if valid is None else valid
    elif null_matching_behavior == "INCONCLUSIVE":
        out_valid = ~isnull & (found | (not set_has_null))
    return _result(_bool_data(found, out_valid, length), not isinstance(d, ArrayData))


def _overflows(op: str, a: Any, b: Any, r: Any, live: Any) -> bool:
    """Whether any live row of the wrapped result `r` of `a op b` overflowed its type."""
    signed = r.dtype.kind == "i"
    with np.errstate(all="ignore"):
        if op == "+":
            bad = ((a ^ r) & (b ^ r)) < 0 if signed else r < a
        elif op == "-":
            bad = ((a ^ b) & (a ^ r)) < 0 if signed else a < b
        else:
            nonzero = b != 0
            safe_b = np.where(nonzero, b, 1).astype(r.dtype)
            bad = nonzero & ((r // safe_b != a) | (r % safe_b != 0))
            if signed:
                low = np.iinfo(r.dtype).min
                bad |= ((a == -1) & (b == low)) | ((b == -1) & (a == low))
    return bool(np.any(bad & live))


def _key(v: Any) -> Any:
    # 1 and True are equal in Python but not in Arrow; NaN is found by NaN in pyarrow's sets
    if isinstance(v, float) and v != v:
        return ("nan",)
    return (type(v) is bool, v)


# -- arithmetic ---------------------------------------------------------------------------------

def arithmetic(function: str, left: Datum, right: Datum) -> Datum:
    """add, subtract, multiply, divide (and their _checked variants): the common numeric type,
    integer overflow wrapping (unchecked) or raising (checked), integer division truncating,
    integer division by zero raising "divide by zero"."""
    checked = function.endswith("_checked")
    base = function.removesuffix("_checked")
    op = ARITHMETIC[base]
    l, r = _decoded(left), _decoded(right)
    lf, rf = _family(l.type), _family(r.type)
    numeric = ("int", "float", "null")
    if lf not in numeric or rf not in numeric:
        raise _no_kernel(function, l.type, r.type)
    if lf == "null" or rf == "null":
        other = r.type if lf == "null" else l.type
        out_t = other if other.name != "null" else T.null()
        n = _length(l, r)
        length = 1 if n is None else n
        data = array_data_from_python([None] * length, out_t)
        return _result(data, n is None)
    out_t = common_numeric_type(l.type, r.type)
    lv, rv, lvalid, rvalid, length, both_scalar = _operands(function, l, r)
    valid = _both_valid(lvalid, rvalid)
    dtype = _NP[out_t.name]
    is_int = np.dtype(dtype).kind in "iu"
    live = np.ones(length, dtype=bool) if valid is None else valid
    if is_int:
        with np.errstate(all="ignore"):
            if op == "/":
                if np.any((rv == 0) & live):
                    raise ArrowInvalid("divide by zero")
                safe_r = np.where(rv == 0, 1, rv).astype(dtype)
                q = np.floor_divide(lv, safe_r)
                rem = lv - q * safe_r
                # numpy floors; Arrow truncates toward zero
                q = q + ((rem != 0) & ((lv < 0) != (safe_r < 0))).astype(dtype)
                values = q.astype(dtype)
            else:
                values = {"+": np.add, "-": np.subtract, "*": np.multiply}[op](lv, rv).astype(dtype)
        if checked and op != "/" and length and _overflows(op, lv, rv, values, live):
            raise ArrowInvalid("overflow")
    else:
        if checked and op == "/" and np.any((rv == 0) & live):
            raise ArrowInvalid("divide by zero")
        with np.errstate(all="ignore"):
            values = {"+": np.add, "-": np.subtract, "*": np.multiply,
                      "/": np.true_divide}[op](lv, rv).astype(dtype)
    if valid is not None:
        values = np.where(valid, values, np.zeros(1, dtype=dtype))
    vbuf = None
    nulls = 0
    if valid is not None:
        nulls = int(length - np.count_nonzero(valid))
        if nulls:
            vbuf = py_buffer(np.packbits(valid, bitorder="little").tobytes())
    data = ArrayData(out_t, length, 0, nulls, [vbuf, py_buffer(np.ascontiguousarray(values).tobytes())])
    return _result(data, both_scalar)

