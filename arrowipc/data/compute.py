"""Comparison, Kleene logic, null, membership and arithmetic kernels over ArrayData (what
expressions evaluate to), with pyarrow.compute's type promotion and null semantics.

An operand (a "datum") is either an ArrayData (a column) or a ScalarData (one value with its
type, held as a one-row ArrayData). Every kernel takes datums and returns one: an array when any
operand is an array, else a scalar. Boolean results are bit-packed, a null in giving a null out,
except where Kleene logic says otherwise. The loops are the Cython kernels of
_core/compute_kernels.pyx; this module chooses the kernel and promotes the operands:

- integers of one signedness meet in the wider type; a signed and an unsigned integer in a signed
  type wide enough for both (at most int64); an integer and a float in the float;
- timestamps, times and durations of one kind meet in the finer unit (a timestamp with a time
  zone meets only another with one); dates meet dates, and a date meets a timestamp as the
  timestamp of its midnight;
- strings and binaries compare bytewise (views and large layouts alike); decimals by value;
- dictionary-encoded and extension operands are decoded to their values first.
"""
from __future__ import annotations

import numpy as np

from .._core import compute_kernels as _k
from .._core.arraydata import ArrayData
from .._core.bitmap import count_set_bits, unpack_bits
from .._core.buffer import Buffer, py_buffer
from ..errors import ArrowInvalid, ArrowNotImplementedError, ArrowTypeError
from .. import types as T
from .cast import cast_data
from .from_python import array_data_from_python
from .to_python import to_pylist

TYPE_CHECKING = False               # typing itself is not imported at run time
if TYPE_CHECKING:
    from typing import Any, Union

    Datum = Union[ArrayData, "ScalarData"]

__all__ = ["ARITHMETIC", "COMPARISONS", "ScalarData", "and_kleene", "arithmetic", "broadcast",
           "common_numeric_type", "compare", "family", "index_of", "invert", "is_in", "is_nan",
           "is_null", "is_valid", "list_value_lengths", "or_kleene", "scalar_data", "sum_values"]

# function name -> the comparison it makes
COMPARISONS = {"equal": "==", "not_equal": "!=", "less": "<", "less_equal": "<=",
               "greater": ">", "greater_equal": ">="}
# function name (and its _checked variant) -> the operation
ARITHMETIC = {"add": "+", "subtract": "-", "multiply": "*", "divide": "/"}

_UNIT_FACTOR = {"s": 1, "ms": 1000, "us": 1000_000, "ns": 1000_000_000}
_NP = {"int8": np.int8, "int16": np.int16, "int32": np.int32, "int64": np.int64,
       "uint8": np.uint8, "uint16": np.uint16, "uint32": np.uint32, "uint64": np.uint64,
       "halffloat": np.float16, "float": np.float32, "double": np.float64}


# the Python values as_py keeps once made (immutable: a caller cannot change a kept one)
_KEPT_PY_TYPES = (int, float, str, bytes, bool, type(None))


class ScalarData:
    """One value of a type, as a one-row ArrayData (`data`)."""
    __slots__ = ("data", "_py")

    def __init__(self, data: ArrayData) -> None:
        self.data = data
        # (value,) once as_py has made an immutable one: a literal's value is asked for by
        # every batch's statistics check of a scan
        self._py: tuple[Any] | None = None

    @property
    def type(self) -> Any:
        return self.data.type

    def as_py(self) -> Any:
        kept = self._py
        if kept is not None:
            return kept[0]
        value = to_pylist(self.data)[0]
        if type(value) in _KEPT_PY_TYPES:
            self._py = (value,)
        return value


def scalar_data(value: Any, type: Any = None) -> ScalarData:
    """A ScalarData of a Python value (its type inferred as pyarrow.scalar infers it, unless
    given)."""
    return ScalarData(array_data_from_python([value], type))


def _rows(*datums: Datum) -> int | None:
    """The rows of the first array operand; None when all are scalars."""
    for d in datums:
        if isinstance(d, ArrayData):
            return d.length
    return None


def _data(d: Datum) -> ArrayData:
    return d if isinstance(d, ArrayData) else d.data


def broadcast(d: Datum, length: int) -> ArrayData:
    """An ArrayData of `length` rows: the array itself, or the scalar repeated."""
    if isinstance(d, ArrayData):
        return d
    if length == 1:
        return d.data
    from .selection import take
    return take(d.data, array_data_from_python(np.zeros(length, dtype=np.int32)))


def _result(d: ArrayData, rows: int | None) -> Datum:
    return ScalarData(d) if rows is None else d


# -- types ---------------------------------------------------------------------------------------------

def _decoded(d: Datum) -> Datum:
    """The datum with dictionary encoding and extension types taken off."""
    if isinstance(d, ScalarData):
        inner = _decoded(d.data)
        assert isinstance(inner, ArrayData)
        return ScalarData(inner)
    t = d.type
    if isinstance(t, T.DictionaryType):
        return _decoded(cast_data(d, t.value_type))
    storage = getattr(t, "storage_type", None)
    if storage is not None:
        return d.with_type(storage)
    return d


def family(t: Any) -> str:
    """The kind of values of a (decoded) type: int, float, bool, null, string, binary, decimal,
    date, timestamp, time, duration, or other."""
    name: str = t.name
    if getattr(t, "is_integer", False):
        return "int"
    if getattr(t, "is_float", False):
        return "float"
    if name in ("bool", "null"):
        return name
    if name in ("string", "large_string", "string_view"):
        return "string"
    if name in ("binary", "large_binary", "binary_view"):
        return "binary"
    for prefix in ("decimal", "date", "timestamp", "duration"):
        if name.startswith(prefix):
            return prefix
    if name.startswith("time32") or name.startswith("time64"):
        return "time"
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


# -- values as numpy (views where the layout allows) ----------------------------------------------------

def _np_dtype(t: Any) -> Any:
    dtype = _NP.get(t.name)
    if dtype is not None:
        return dtype
    if t.name == "date32[day]" or t.name.startswith("time32"):
        return np.int32
    return np.int64         # date64, timestamp, time64, duration


def _fixed_values(d: ArrayData) -> Any:
    """The values of fixed-width numeric or temporal data, a zero-copy numpy view."""
    dtype = _np_dtype(d.type)
    if d.length == 0:
        return np.zeros(0, dtype=dtype)
    width = np.dtype(dtype).itemsize
    buf = d.buffers[1] if len(d.buffers) > 1 else None
    if buf is None or d.offset < 0 or d.offset + d.length > buf.size // width:
        raise ArrowInvalid(f"{d.type} values: rows [{d.offset}, {d.offset}+{d.length}) need "
                           f"{(d.offset + d.length) * width} bytes, the buffer has "
                           f"{0 if buf is None else buf.size}")
    return np.frombuffer(buf, dtype=dtype,  # type: ignore[call-overload]
                         count=d.offset + d.length)[d.offset:]


def _bool_values(d: ArrayData) -> Any:
    if d.length == 0 or d.buffers[1] is None:
        return np.zeros(d.length, dtype=np.uint8)
    return np.frombuffer(unpack_bits(d.buffers[1], d.offset, d.length), dtype=np.uint8)


def _as_int64_in(d: ArrayData, fam: str, unit: str) -> Any:
    """Temporal values as int64 counts of `unit` (dates as their midnight)."""
    v = _fixed_values(d).astype(np.int64, copy=False)
    if fam == "date":
        ms = v * 86400000 if d.type.name == "date32[day]" else v
        return ms * _UNIT_FACTOR[unit] // 1000 if unit != "s" else ms // 1000
    scale = _UNIT_FACTOR[unit] // _UNIT_FACTOR[d.type.unit]
    return v * scale if scale != 1 else v


def _binary_layout(d: ArrayData) -> ArrayData:
    """String and binary data in an offsets layout (views cast to it first)."""
    name = d.type.name
    if name == "string_view":
        return cast_data(d, T.string())
    if name == "binary_view":
        return cast_data(d, T.binary())
    return d


def _implicit_cast(d: ArrayData, target: Any) -> ArrayData:
    """A numeric operand in the common type, cast safely as pyarrow does (an integer that does
    not fit, or beyond a float's exact range, raises ArrowInvalid)."""
    if d.type == target:
        return d
    return cast_data(d, target, True)


def _finer(a: str, b: str) -> str:
    return a if _UNIT_FACTOR[a] >= _UNIT_FACTOR[b] else b


def _numeric_pair(function: str, l: ArrayData, r: ArrayData) -> tuple[Any, Any]:
    """The values of two numeric or temporal operands as numpy arrays of one dtype."""
    lt, rt = l.type, r.type
    lf, rf = family(lt), family(rt)
    if lf in ("int", "float") and rf in ("int", "float"):
        common = common_numeric_type(lt, rt)
        return _fixed_values(_implicit_cast(l, common)), _fixed_values(_implicit_cast(r, common))
    if lf == rf and lf in ("time", "duration"):
        unit = _finer(lt.unit, rt.unit)
        return _as_int64_in(l, lf, unit), _as_int64_in(r, rf, unit)
    if lf == rf == "date":
        if lt.name == rt.name:
            return _fixed_values(l), _fixed_values(r)
        return _as_int64_in(l, lf, "ms"), _as_int64_in(r, rf, "ms")
    if {lf, rf} <= {"timestamp", "date"}:
        if lf == rf == "timestamp" and (lt.tz is None) != (rt.tz is None):
            raise _no_kernel(function, lt, rt)
        units = [t.unit for t in (lt, rt) if family(t) == "timestamp"]
        unit = units[0] if len(units) == 1 else _finer(units[0], units[1])
        return _as_int64_in(l, lf, unit), _as_int64_in(r, rf, unit)
    raise _no_kernel(function, lt, rt)


def _validity(l: ArrayData, r: ArrayData | None, n: int) -> tuple[Any, int]:
    """(validity bitmap from bit 0 over n rows, or None, null count) of the rows where every
    operand is valid (an operand of one row on more rows is a broadcast scalar)."""
    out = None
    for d in (l, r):
        if d is None or (d.null_count == 0 and d.type.name != "null"):
            continue
        if d.length == 1 and n != 1:
            if d.type.name == "null" or _is_null_at(d, 0):
                return py_buffer(bytes((n + 7) // 8)), n                  # all null
            continue
        bits = _k.validity_bits(d, n, False)
        out = bits if out is None else _k.and_bits(out, bits, n)
    if out is None:
        return None, 0
    nulls = n - count_set_bits(out, 0, n)
    return (out if nulls else None), nulls


def _is_null_at(d: ArrayData, i: int) -> bool:
    if d.type.name == "null":
        return True
    if d.null_count == 0 or d.buffers[0] is None:
        return False
    return unpack_bits(d.buffers[0], d.offset + i, 1) == b"\x00"


def _bool_data(values: Any, validity: Any, nulls: int, n: int) -> ArrayData:
    return ArrayData(T.bool_(), n, 0, nulls, [validity if nulls else None, values])


# -- comparisons --------------------------------------------------------------------------------------

def compare(function: str, left: Datum, right: Datum) -> Datum:
    """`left op right` for a function of COMPARISONS: a bool datum, null where either is."""
    op = _k.OP_CODES[COMPARISONS[function]]
    left, right = _decoded(left), _decoded(right)
    rows = _rows(left, right)
    n = 1 if rows is None else rows
    l, r = _data(left), _data(right)
    lf, rf = family(l.type), family(r.type)
    if lf == "null" or rf == "null":
        if "other" in (lf, rf):
            raise _no_kernel(function, l.type, r.type)
        zeros = _k.validity_bits(ArrayData(T.null(), n, 0, n), n, False)
        return _result(_bool_data(zeros, zeros, n, n), rows)
    validity, nulls = _validity(l, r, n)
    values: Buffer | None
    if lf in ("string", "binary") and rf in ("string", "binary"):
        values = _k.compare_binary(op, _binary_layout(l), _binary_layout(r), n)
    elif lf == rf == "bool":
        values = _k.compare_numbers(op, _bool_values(l), _bool_values(r), n)
    elif "decimal" in (lf, rf) and {lf, rf} <= {"decimal", "int", "float"}:
        values = _compare_decimals(op, l, r, n) if "float" not in (lf, rf) else None
        if values is None:
            values = _compare_objects(op, l, r, n, float if "float" in (lf, rf) else None)
    else:
        a, b = _numeric_pair(function, l, r)
        values = _k.compare_numbers(op, np.ascontiguousarray(a), np.ascontiguousarray(b), n)
    return _result(_bool_data(values, validity, nulls, n), rows)


_DECIMAL_WIDTHS = {32: np.int32, 64: np.int64, 128: np.int64}


def _decimal_words(d: ArrayData) -> Any:
    """The unscaled integers of decimal32/64 data (numpy), or the (low, high) 64-bit words of
    decimal128 data, as a zero-copy view."""
    bits = d.type.bit_width
    words = 2 if bits == 128 else 1
    width = bits // 8
    buf = d.buffers[1] if len(d.buffers) > 1 else None
    if d.length == 0:
        return np.zeros(0, dtype=_DECIMAL_WIDTHS[bits])
    if buf is None or d.offset < 0 or d.offset + d.length > buf.size // width:
        raise ArrowInvalid(f"{d.type} values: rows [{d.offset}, {d.offset}+{d.length}) need "
                           f"{(d.offset + d.length) * width} bytes, the buffer has "
                           f"{0 if buf is None else buf.size}")
    view = np.frombuffer(buf, dtype=_DECIMAL_WIDTHS[bits],  # type: ignore[call-overload]
                         count=(d.offset + d.length) * words)
    return view[d.offset * words:]


def _rescaled_scalar(s: ArrayData, t: Any) -> Any:
    """A one-row decimal or integer operand as the unscaled value(s) of decimal type `t`, or None
    when it is null or not exactly representable there."""
    from decimal import Decimal, InvalidOperation
    v = to_pylist(s)[0]
    if v is None:
        return None
    try:
        q = Decimal(v).scaleb(t.scale)
        if q != q.to_integral_value():
            return None
        unscaled = int(q)
    except (InvalidOperation, OverflowError, ValueError):
        return None
    bits = t.bit_width
    if not -(1 << (bits - 1)) <= unscaled < (1 << (bits - 1)):
        return None
    if bits == 128:
        return np.frombuffer(unscaled.to_bytes(16, "little", signed=True), dtype=np.int64).copy()
    return np.array([unscaled], dtype=_DECIMAL_WIDTHS[bits])


def _compare_decimals(op: int, l: ArrayData, r: ArrayData, n: int) -> Buffer | None:
    """The comparison of decimals of one scale and width (a scalar rescaled to the column's
    scale when exact) by their unscaled integers, or None for the exact but slow path."""
    lt, rt = l.type, r.type
    column = l if family(lt) == "decimal" and (l.length == n or family(rt) != "decimal") else r
    ct = column.type
    if family(ct) != "decimal" or ct.bit_width not in _DECIMAL_WIDTHS:
        return None
    sides = []
    for d in (l, r):
        if d is column:
            sides.append(_decimal_words(d))
        elif family(d.type) == "decimal" and d.type.bit_width == ct.bit_width and \
                d.type.scale == ct.scale:
            sides.append(_decimal_words(d))
        elif d.length == 1 and n != 1:
            value = _rescaled_scalar(d, ct)
            if value is None:
                return None
            sides.append(value)
        else:
            return None
    a, b = (np.ascontiguousarray(x) for x in sides)
    if ct.bit_width == 128:
        return _k.compare_decimal128(op, a, b, n)
    return _k.compare_numbers(op, a, b, n)


_PY_OPS: dict[int, Any] = {0: lambda a, b: a == b, 1: lambda a, b: a != b,
                           2: lambda a, b: a < b, 3: lambda a, b: a <= b,
                           4: lambda a, b: a > b, 5: lambda a, b: a >= b}


def _compare_objects(op: int, l: ArrayData, r: ArrayData, n: int, convert: Any) -> Buffer:
    """Decimals compared by their Python values (exact; not a hot path of ETL filters)."""
    lv, rv = to_pylist(l), to_pylist(r)
    if len(lv) == 1 and n != 1:
        lv = lv * n
    if len(rv) == 1 and n != 1:
        rv = rv * n
    f = _PY_OPS[op]
    if convert is not None:
        lv = [None if v is None else convert(v) for v in lv]
        rv = [None if v is None else convert(v) for v in rv]
    flags = bytes(1 if a is not None and b is not None and f(a, b) else 0 for a, b in zip(lv, rv))
    return py_buffer(np.packbits(np.frombuffer(flags, dtype=np.uint8), bitorder="little"
                                 ).tobytes()) if n else py_buffer(b"")


# -- Kleene logic ------------------------------------------------------------------------------------

def _check_bool(function: str, *datums: Datum) -> None:
    for d in datums:
        if family(d.type) not in ("bool", "null"):
            raise _no_kernel(function, *(x.type for x in datums))


def _kleene(function: str, left: Datum, right: Datum, is_and: bool) -> Datum:
    left, right = _decoded(left), _decoded(right)
    _check_bool(function, left, right)
    rows = _rows(left, right)
    n = 1 if rows is None else rows
    values, validity, nulls = _k.kleene(is_and, _data(left), isinstance(left, ScalarData),
                                        _data(right), isinstance(right, ScalarData), n)
    return _result(_bool_data(values, validity, nulls, n), rows)


def and_kleene(left: Datum, right: Datum) -> Datum:
    """Kleene AND: false when either side is false, else null when either is null."""
    return _kleene("and_kleene", left, right, True)


def or_kleene(left: Datum, right: Datum) -> Datum:
    """Kleene OR: true when either side is true, else null when either is null."""
    return _kleene("or_kleene", left, right, False)


def invert(d: Datum) -> Datum:
    """NOT of a bool datum (null stays null)."""
    d = _decoded(d)
    _check_bool("invert", d)
    rows = _rows(d)
    data = _data(d)
    n = data.length
    validity, nulls = _validity(data, None, n)
    return _result(_bool_data(_k.invert_bits(data, n), validity, nulls, n), rows)


# -- nulls and membership -------------------------------------------------------------------------

def is_null(d: Datum, nan_is_null: bool = False) -> Datum:
    """True where the value is null (or NaN, with nan_is_null); never null itself."""
    d = _decoded(d)
    rows, data = _rows(d), _data(d)
    n = data.length
    out = _k.validity_bits(data, n, True)
    if nan_is_null and family(data.type) == "float" and data.type.name != "halffloat":
        out = _k.or_bits(out, _k.nan_bits(np.ascontiguousarray(_fixed_values(data))), n)
    return _result(_bool_data(out, None, 0, n), rows)


def is_nan(d: Datum) -> Datum:
    """True where the value is NaN, null where it is null. pyarrow's kernels: floats (float16
    too); integers, durations, decimal128 and decimal256 are never NaN; the null type gives
    nulls; other types (decimal32 and decimal64 among them) have no kernel."""
    d = _decoded(d)
    rows, data = _rows(d), _data(d)
    n = data.length
    fam = family(data.type)
    wide_decimal = fam == "decimal" and data.type.bit_width >= 128
    if fam not in ("int", "float", "duration", "null") and not wide_decimal:
        raise _no_kernel("is_nan", data.type)
    validity, nulls = _validity(data, None, n)
    if fam == "float" and data.type.name == "halffloat":
        values = _packed(np.isnan(_fixed_values(data)))       # no C kernel for float16
    elif fam == "float":
        values = _k.nan_bits(np.ascontiguousarray(_fixed_values(data)))
    else:
        values = py_buffer(bytes((n + 7) // 8))
    return _result(_bool_data(values, validity, nulls, n), rows)


def _packed(flags: Any) -> Buffer:
    """A numpy bool array as a bitmap from bit 0."""
    return py_buffer(np.packbits(flags, bitorder="little").tobytes())


# -- vector and aggregate functions of the array methods (sum, index, value_lengths) -----------

def _sum_type(t: Any) -> Any:
    """pyarrow's result type of `sum` over values of (decoded) type `t`, or None when it has
    no kernel (float16, decimal32 and decimal64, temporal and text types...)."""
    fam = family(t)
    if fam == "int":
        return T.int64() if t.is_signed else T.uint64()
    if fam == "bool":
        return T.uint64()
    if fam == "float" and t.name != "halffloat":
        return T.float64()
    if fam == "null":
        return T.int64()
    if fam == "decimal" and t.bit_width == 128:
        return T.decimal128(38, t.scale)
    if fam == "decimal" and t.bit_width == 256:
        return T.decimal256(76, t.scale)
    return None


# rows summed at a time in a decimal's 32-bit pieces: 2**31 pieces of 32 bits fit an int64
_DECIMAL_SUM_BLOCK = 1 << 30


def _decimal_sum(d: ArrayData, valid: Any) -> int:
    """The exact sum of decimal128/256 values (their unscaled integers) where `valid` (or
    everywhere, None), vectorized: each value is split in 32-bit pieces, summed per piece."""
    width = d.type.bit_width // 8
    buf = d.buffers[1] if len(d.buffers) > 1 else None
    if d.length == 0:
        return 0
    if buf is None or d.offset < 0 or d.offset + d.length > buf.size // width:
        raise ArrowInvalid(f"{d.type} values: rows [{d.offset}, {d.offset}+{d.length}) need "
                           f"{(d.offset + d.length) * width} bytes, the buffer has "
                           f"{0 if buf is None else buf.size}")
    pieces = np.frombuffer(buf, dtype="<u4",  # type: ignore[call-overload]
                           count=(d.offset + d.length) * width // 4)
    pieces = pieces.reshape(-1, width // 4)[d.offset:]
    if valid is not None:
        pieces = pieces[valid]
    total = 0
    for start in range(0, len(pieces), _DECIMAL_SUM_BLOCK):
        block = pieces[start:start + _DECIMAL_SUM_BLOCK]
        low = block[:, :-1].astype(np.int64).sum(axis=0)
        high = int(block[:, -1].view(np.int32).astype(np.int64).sum())    # the signed piece
        total += sum(int(v) << (32 * i) for i, v in enumerate(low)) + (high << (8 * width - 32))
    return total


def _wrapped(value: int, bits: int, signed: bool) -> int:
    """`value` wrapped to a `bits`-wide integer, as fixed-width arithmetic gives it."""
    value &= (1 << bits) - 1
    if signed and value >> (bits - 1):
        value -= 1 << bits
    return value


def sum_values(chunks: list[ArrayData], type: Any, skip_nulls: bool = True,
               min_count: int = 1) -> ScalarData:
    """pyarrow's `sum` of the chunks of a column of `type`: int64 for signed integers, uint64
    for unsigned ones and booleans (both wrap on overflow), double for floats, decimal128(38,
    s) or decimal256(76, s) for decimals (wrapping at their width); null when fewer than
    `min_count` values are valid, or any is null and not `skip_nulls`."""
    datas = [_data(_decoded(c)) for c in chunks]
    value_type = type                      # decoded, as _decoded decodes the chunks
    while isinstance(value_type, (T.DictionaryType, T.ExtensionType)):
        value_type = (value_type.value_type if isinstance(value_type, T.DictionaryType)
                      else value_type.storage_type)
    out_t = _sum_type(value_type)
    if out_t is None:
        raise _no_kernel("sum", type)
    from .to_python import validity_mask
    from ..validate import null_count_of
    total: Any = 0.0 if out_t.name == "double" else 0
    count = nulls = 0
    fam = family(value_type)
    for d in datas:
        valid = None if fam == "null" else validity_mask(d)
        kept = 0 if fam == "null" else d.length if valid is None else d.length - null_count_of(d)
        count += kept
        nulls += d.length - kept
        if not kept:
            continue
        if fam == "decimal":
            total += _decimal_sum(d, valid)
            continue
        values = _bool_values(d) if fam == "bool" else _fixed_values(d)
        if fam == "float":
            # the valid values gathered: numpy sums a contiguous array pairwise
            values = values if valid is None else values[valid]
            total += float(values.astype(np.float64, copy=False).sum())
        else:
            dtype = np.uint64 if out_t.name == "uint64" else np.int64
            total += int(values.sum(dtype=dtype, where=True if valid is None else valid))
    if count < min_count or (nulls and not skip_nulls):
        return ScalarData(array_data_from_python([None], out_t))
    if fam == "decimal":
        bits = out_t.bit_width
        raw = _wrapped(total, bits, True).to_bytes(bits // 8, "little", signed=True)
        return ScalarData(ArrayData(out_t, 1, 0, 0, [None, py_buffer(raw)]))
    if out_t.name != "double":
        total = _wrapped(total, 64, out_t.name == "int64")
    return ScalarData(array_data_from_python([total], out_t))


def index_of(d: ArrayData, value: ScalarData) -> int:
    """The position of the first value of `d` equal to `value` (pyarrow's `index`), or -1; a
    null value is never found, and NaN equals nothing."""
    from .._core.select_kernels import effective_mask
    if d.type.name == "halffloat":
        raise _no_kernel("index", d.type)
    if isinstance(d.type, T.FixedSizeBinaryType):
        # compared as binary, which the comparison kernels take
        d, value = _fixed_as_binary(d), ScalarData(_fixed_as_binary(value.data))
    try:
        found = compare("equal", d, value)
    except ArrowNotImplementedError:
        raise _no_kernel("index", d.type) from None
    assert isinstance(found, ArrayData)
    bits, kept = effective_mask(found)
    if not kept:
        return -1
    flags = np.unpackbits(np.frombuffer(bits, dtype=np.uint8),  # type: ignore[call-overload]
                          count=d.length, bitorder="little")
    return int(np.argmax(flags))


def _fixed_as_binary(d: ArrayData) -> ArrayData:
    """Fixed-size binary data as large_binary over the same value bytes (offsets made, no
    value copied)."""
    width = d.type.byte_width
    offsets = np.arange(d.offset + d.length + 1, dtype=np.int64) * width
    return ArrayData(T.large_binary(), d.length, d.offset, d.null_count,
                     [d.buffers[0], py_buffer(offsets), d.buffers[1]])


def list_value_lengths(d: ArrayData) -> ArrayData:
    """The number of values in each list of a list, large list, list view, fixed-size list or
    map array (int32, int64 for the large variants), null where the list is null."""
    from .._core.bitmap import bitmap_view
    from ..validate import null_count_of
    t = d.type.storage_type
    kind = t.kind
    n = d.length
    wide = kind in (T.Kind.LARGE_LIST, T.Kind.LARGE_LIST_VIEW)
    out_t = T.int64() if wide else T.int32()
    dtype = np.int64 if wide else np.int32
    if kind == T.Kind.FIXED_SIZE_LIST:
        lengths = np.full(n, t.list_size, dtype=dtype)
    elif kind in (T.Kind.LIST, T.Kind.LARGE_LIST):
        offsets = _checked_view(d, 1, dtype, d.offset + n + 1 if n else 0, "offsets")
        lengths = np.diff(offsets[d.offset:]) if n else np.zeros(0, dtype)
    elif kind in (T.Kind.LIST_VIEW, T.Kind.LARGE_LIST_VIEW):
        lengths = _checked_view(d, 2, dtype, d.offset + n, "sizes")[d.offset:].copy()
    else:
        raise _no_kernel("list_value_length", d.type)
    nulls = null_count_of(d)
    bitmap = d.buffers[0]
    validity = bitmap_view(bitmap, d.offset, n) if nulls and bitmap is not None else None
    return ArrayData(out_t, n, 0, nulls, [validity, py_buffer(np.ascontiguousarray(lengths))])


def _checked_view(d: ArrayData, index: int, dtype: Any, count: int, what: str) -> Any:
    """The first `count` entries of buffer `index` of `d` as numpy `dtype`, checked to be
    there (untrusted input)."""
    width = np.dtype(dtype).itemsize
    buf = d.buffers[index] if len(d.buffers) > index else None
    size = 0 if buf is None else buf.size
    if count > size // width:
        raise ArrowInvalid(f"{d.type} {what}: {count} entries need {count * width} bytes, the "
                           f"buffer has {size}")
    if not count:
        return np.zeros(0, dtype)
    return np.frombuffer(buf, dtype=dtype, count=count)  # type: ignore[call-overload]


def is_valid(d: Datum) -> Datum:
    """True where the value is not null; never null itself."""
    d = _decoded(d)
    rows, data = _rows(d), _data(d)
    return _result(_bool_data(_k.validity_bits(data, data.length, False), None, 0,
                              data.length), rows)


def is_in(d: Datum, value_set: ArrayData, null_matching_behavior: str = "MATCH") -> Datum:
    """Whether each value is in `value_set`. MATCH: a null matches a null in the set (false
    otherwise); SKIP: a null never matches; EMIT_NULL: a null gives null; INCONCLUSIVE: null
    when the value is null, or is not found and the set holds a null."""
    d = _decoded(d)
    vs = _decoded(value_set)
    assert isinstance(vs, ArrayData)
    set_nulls = vs.length if vs.type.name == "null" else \
        (vs.length - count_set_bits(vs.buffers[0], vs.offset, vs.length)
         if vs.null_count != 0 and vs.buffers[0] is not None else 0)
    if set_nulls and vs.type.name != "null":
        # the members alone: a null slot's bytes are no member
        from .selection import Selection, apply
        keep = _bool_data(_k.validity_bits(vs, vs.length, False), None, 0, vs.length)
        vs = apply(vs, Selection.from_mask(keep, vs.length, "drop"))
    rows, data = _rows(d), _data(d)
    n = data.length
    fam, sfam = family(data.type), family(vs.type)
    numeric = ("int", "float")
    texts = ("string", "binary")
    compatible = fam == "null" or sfam == "null" or fam == sfam or \
        (fam in numeric and sfam in numeric) or (fam in texts and sfam in texts) or \
        ({fam, sfam} <= {"date", "timestamp"})
    if not compatible and fam not in ("other", "string") and sfam != "null":
        # pyarrow casts such a set to the values' type (strings to numbers, dates,
        # decimals...), never to strings; a set that does not cast is the mismatch below
        try:
            vs = cast_data(vs, data.type, True)
        except (ArrowInvalid, ArrowTypeError, ArrowNotImplementedError, ValueError,
                TypeError, OverflowError):
            pass
        else:
            sfam, compatible = fam, True
    if not compatible or fam == "other" or (sfam == "null" and fam in texts):
        raise ArrowTypeError(f"Array type doesn't match type of values set: {data.type} vs "
                             f"{value_set.type}")
    if fam == "null" or sfam == "null" or vs.length == 0 or n == 0:
        found = _k.validity_bits(ArrayData(T.null(), n, 0, n), n, False)     # none
    elif fam in texts:
        found = _k.is_in_binary(_binary_layout(data), _binary_layout(vs))
    elif fam == "bool":
        found = _k.is_in_numbers(_bool_values(data), _bool_values(vs))
    elif fam == "decimal":
        members = {v for v in to_pylist(vs) if v is not None}
        flags = bytes(1 if v is not None and v in members else 0 for v in to_pylist(data))
        found = py_buffer(np.packbits(np.frombuffer(flags, dtype=np.uint8),
                                      bitorder="little").tobytes())
    elif fam in numeric:
        values = np.ascontiguousarray(_fixed_values(data))
        found = _k.is_in_numbers(values, _members_as(values.dtype, vs))
    else:
        a, b = _numeric_pair("is_in", data, vs)
        found = _k.is_in_numbers(np.ascontiguousarray(a), np.ascontiguousarray(b))
    valid = _k.validity_bits(data, n, False)
    found = _k.and_bits(found, valid, n)          # a null slot's bytes never match
    has_nulls = data.type.name == "null" or data.null_count != 0
    validity, nulls = None, 0
    if null_matching_behavior == "MATCH":
        if set_nulls and has_nulls:
            found = _k.or_bits(found, _k.validity_bits(data, n, True), n)
    elif null_matching_behavior == "EMIT_NULL":
        validity, nulls = (valid, n - count_set_bits(valid, 0, n)) if has_nulls else (None, 0)
    elif null_matching_behavior == "INCONCLUSIVE":
        validity = valid if not set_nulls else found
        nulls = n - count_set_bits(validity, 0, n)
    return _result(_bool_data(found, validity, nulls, n), rows)


def _members_as(dtype: Any, vs: ArrayData) -> Any:
    """The numeric value set in `dtype`, keeping only members that convert exactly (the others
    cannot equal any value of that type)."""
    raw = _fixed_values(vs)
    if vs.null_count != 0 and vs.buffers[0] is not None:
        valid = np.frombuffer(unpack_bits(vs.buffers[0], vs.offset, vs.length), dtype=np.uint8)
        raw = raw[valid.astype(bool)]
    with np.errstate(all="ignore"):
        converted = raw.astype(dtype)
        back = converted.astype(raw.dtype)
    exact = (back == raw) | (np.isnan(raw) if raw.dtype.kind == "f" else False)
    if dtype == raw.dtype:
        return np.ascontiguousarray(raw)
    if np.dtype(dtype).kind in "iu" and raw.dtype.kind == "f":
        exact &= np.isfinite(raw)
    if np.dtype(dtype).kind in "iu" and raw.dtype.kind in "iu":
        # a value wrapped into range converts back to itself only when it was in range
        info = np.iinfo(dtype)
        exact &= (raw >= info.min) & (raw <= info.max) if raw.dtype.kind == "i" or \
            info.min >= 0 else (raw <= info.max)
    return np.ascontiguousarray(converted[exact])


# -- arithmetic ---------------------------------------------------------------------------------

def arithmetic(function: str, left: Datum, right: Datum) -> Datum:
    """add, subtract, multiply, divide (and their _checked variants) in the common numeric
    type: integers wrap (unchecked) or raise "overflow" (checked); integer division truncates
    and raises "divide by zero"; float division by zero gives inf unchecked, raises checked."""
    checked = function.endswith("_checked")
    op = _k.ARITH_CODES[ARITHMETIC[function.removesuffix("_checked")]]
    left, right = _decoded(left), _decoded(right)
    rows = _rows(left, right)
    n = 1 if rows is None else rows
    l, r = _data(left), _data(right)
    lf, rf = family(l.type), family(r.type)
    if lf not in ("int", "float", "null") or rf not in ("int", "float", "null") or \
            "halffloat" in (l.type.name, r.type.name):
        raise _no_kernel(function, l.type, r.type)
    if lf == "null" or rf == "null":
        other = r.type if lf == "null" else l.type
        return _result(array_data_from_python([None] * n, other), rows)
    out_t = common_numeric_type(l.type, r.type)
    dtype = _NP[out_t.name]
    a = np.ascontiguousarray(_fixed_values(_implicit_cast(l, out_t)))
    b = np.ascontiguousarray(_fixed_values(_implicit_cast(r, out_t)))
    validity, nulls = _validity(l, r, n)
    out = np.zeros(n, dtype=dtype)
    if nulls < n:
        if out_t.is_float:
            _k.arithmetic_floats(op, checked, a, b, out, validity)
        else:
            _k.arithmetic_ints(op, checked, a, b, out, validity)
    data = ArrayData(out_t, n, 0, nulls, [validity if nulls else None, py_buffer(out)])
    return _result(data, rows)
