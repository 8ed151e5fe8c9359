"""Python sequences and numpy arrays to ArrayData (what `arrowipc.array(obj, type)` builds).

Types are inferred like pyarrow when not given. Buffers are built in bulk: `array.array` or
`struct` over the whole column, `b"".join` for variable-width data, and validity packed in C with
`pack_bools`. A column without nulls gets no validity buffer. Contiguous numpy arrays of a
fixed-width dtype are wrapped without copying.

Errors: a value of the wrong Python type raises ArrowTypeError; a value out of range for the
type (or otherwise invalid for it) raises ArrowInvalid; both name the value, its index and the type.
"""
from __future__ import annotations

import datetime as _dt
import decimal as _decimal
import numbers as _numbers
import struct as _struct
import sys as _sys
from array import array as _array
from collections.abc import Mapping as _Mapping
from itertools import accumulate, chain, repeat
from operator import is_not

from .._core.arraydata import ArrayData
from .._core.bitmap import pack_bools
from .._core.buffer import py_buffer
from ..errors import (ArrowCapacityError, ArrowInvalid, ArrowNotImplementedError,
                     ArrowTypeError)
from .. import types as _t
from ..types import (DecimalType, DurationType, ExtensionType, FixedSizeBinaryType, Kind, MapType,
                    PrimitiveType, Time32Type, Time64Type, TimestampType)

TYPE_CHECKING = False               # typing itself is not imported at run time
if TYPE_CHECKING:
    from typing import Any, Callable

__all__ = ["array_data_from_python", "infer_type"]

_NoneType = type(None)
_LITTLE = _sys.byteorder == "little"
_EPOCH = _dt.datetime(1970, 1, 1)
_EPOCH_UTC = _dt.datetime(1970, 1, 1, tzinfo=_dt.timezone.utc)
_EPOCH_ORDINAL = 719163
_ONE_US = _dt.timedelta(microseconds=1)
_US_PER_UNIT = {"s": 1_000_000, "ms": 1000, "us": 1}
_INT32_MAX = 2**31 - 1

# array.array type codes for each integer width and signedness (checked at import).
_ARRAY_CODE = {"int8": "b", "uint8": "B", "int16": "h", "uint16": "H", "int32": "i",
               "uint32": "I", "int64": "q", "uint64": "Q", "float": "f", "double": "d"}
assert _array("i").itemsize == 4 and _array("q").itemsize == 8


def array_data_from_python(obj: Any, type: _t.DataType | str | None = None) -> ArrayData:
    """ArrayData from a Python sequence (None = null) or a 1-d numpy array, of `type` or of the
    type pyarrow would infer."""
    if type is not None:
        type = _t.ensure_type(type)
    if _is_ndarray(obj):
        return _from_numpy(obj, type, "array")
    if isinstance(obj, (str, bytes, bytearray, _Mapping)):
        raise ArrowTypeError(f"expected a sequence of values, got {obj.__class__.__name__}")
    values = obj if isinstance(obj, list) else list(obj)
    if type is None:
        type = infer_type(values)
    return _build(values, type, "array")


# -- helpers ------------------------------------------------------------------------------------

def _is_ndarray(obj: Any) -> bool:
    np = _sys.modules.get("numpy")
    return np is not None and isinstance(obj, np.ndarray)


def _describe(v: Any) -> str:
    r = repr(v)
    return r if len(r) <= 60 else r[:57] + "..."


def _validity(values: list[Any]) -> Any:
    """(validity Buffer or None, null count, null indices) for a list where None is null."""
    valid = bytes(map(is_not, values, repeat(None)))
    first = valid.find(0)
    if first < 0:
        return None, 0, []
    nulls = []
    i = first
    while i >= 0:
        nulls.append(i)
        i = valid.find(0, i + 1)
    bitmap, _ = pack_bools(valid)
    return bitmap, len(nulls), nulls


def _filled(values: list[Any], nulls: list[Any], filler: Any) -> list[Any]:
    """A copy of values with nulls replaced by `filler` (the list itself when there are none)."""
    if not nulls:
        return values
    out = list(values)
    for i in nulls:
        out[i] = filler
    return out


def _value_types(values: list[Any]) -> set[type]:
    types = set(map(type, values))
    types.discard(_NoneType)
    return types


def _map_checked(func: Any, values: list[Any], nulls: list[Any], t: Any, where: str) -> list[Any]:
    """func over every value; an error is re-raised naming the first bad value and its index."""
    try:
        return list(map(func, values))
    except (ArrowTypeError, ArrowInvalid, TypeError, ValueError, OverflowError, ArithmeticError):
        null_set = set(nulls)
        for i, v in enumerate(values):
            if i in null_set:
                continue
            try:
                func(v)
            except (ArrowTypeError, ArrowInvalid) as e:
                raise e.__class__(f"{where}: value {_describe(v)} at index {i}: {e}") from None
            except TypeError as e:
                raise ArrowTypeError(f"{where}: cannot convert {_describe(v)} "
                                     f"({v.__class__.__name__}) at index {i} to {t}: {e}") from None
            except (ValueError, OverflowError, ArithmeticError) as e:
                raise ArrowInvalid(f"{where}: cannot convert {_describe(v)} at index {i} to "
                                   f"{t}: {e}") from None
        raise


def _pack_array(code: str, values: list[Any], nulls: list[Any], t: Any, where: str) -> _array[Any]:
    """array.array of `values`; out-of-range values raise ArrowInvalid naming them."""
    try:
        out = _array(code, values)
    except OverflowError:
        lo, hi = _int_range(t)
        for i, v in enumerate(values):
            if not lo <= v <= hi:
                # pyarrow's OverflowError where Python cannot make the C integer it converts
                # through (a C long, unsigned for unsigned types), ArrowInvalid after that
                error = ArrowInvalid if (-(1 << 63) <= v < (1 << 63) if lo < 0 else
                                         0 <= v < (1 << 64)) else IntegerOverflow
                raise error(f"{where}: value {v} at index {i} does not fit in {t} "
                            f"(range [{lo}, {hi}])") from None
        raise
    except TypeError as e:
        for i, v in enumerate(values):
            if not isinstance(v, (int, float)):
                raise ArrowTypeError(f"{where}: value {_describe(v)} at index {i} is a "
                                     f"{v.__class__.__name__}, expected a number for {t}") from None
        raise ArrowTypeError(f"{where}: {e}") from None
    if not _LITTLE:
        out.byteswap()
    return out


class IntegerOverflow(ArrowInvalid, OverflowError):
    """A Python int outside what C converts it through: an OverflowError, as pyarrow raises,
    and an ArrowInvalid (a ValueError) as every other out-of-range value here."""


def _int_range(t: Any) -> tuple[Any, ...]:
    bits = t.bit_width
    if not getattr(t, "is_integer", False) or t.is_signed:   # dates, times, ...: signed
        return -(1 << (bits - 1)), (1 << (bits - 1)) - 1
    return 0, (1 << bits) - 1


def _data(t: Any, n: int, null_count: int, buffers: list[Any], children: Any = None,
          dictionary: Any = None) -> ArrayData:
    return ArrayData(t, n, 0, null_count, buffers, children or [], dictionary)


# -- inference ----------------------------------------------------------------------------------

def _is_numpy_type(tp: type) -> bool:
    return tp.__module__ == "numpy"


_CATEGORY_CACHE: dict[type, str] = {}


def _category(tp: type) -> str:
    """The inference category of a Python type (cached)."""
    c = _CATEGORY_CACHE.get(tp)
    if c is not None:
        return c
    if issubclass(tp, bool) or (_is_numpy_type(tp) and tp.__name__ in ("bool_", "bool")):
        c = "bool"
    elif issubclass(tp, _numbers.Integral):
        c = "int"
    elif issubclass(tp, _decimal.Decimal):
        c = "decimal"
    elif issubclass(tp, (float, _numbers.Real)):
        c = "float"
    elif issubclass(tp, str):
        c = "str"
    elif issubclass(tp, (bytes, bytearray, memoryview)):
        c = "bytes"
    elif issubclass(tp, _dt.datetime):
        c = "datetime"
    elif issubclass(tp, _dt.date):
        c = "date"
    elif issubclass(tp, _dt.time):
        c = "time"
    elif issubclass(tp, _dt.timedelta):
        c = "timedelta"
    elif issubclass(tp, tuple) and tp.__name__ == "MonthDayNano":
        c = "interval"
    elif issubclass(tp, (list, tuple)) or (_is_numpy_type(tp) and tp.__name__ == "ndarray"):
        c = "list"
    elif issubclass(tp, _Mapping):
        c = "dict"
    else:
        c = "unknown"
    _CATEGORY_CACHE[tp] = c
    return c


def _numpy_scalar_type(types: set[type]) -> _t.DataType | None:
    """The type of numpy scalars when all values are numpy scalars of one kind, else None."""
    if not all(_is_numpy_type(tp) for tp in types):
        return None
    np = _sys.modules["numpy"]
    widest = np.result_type(*types)
    if widest.kind in "iu" and len(types) > 1:
        return None     # pyarrow refuses to mix numpy integer dtypes; use int64
    return _type_for_dtype(widest)


def infer_type(values: list[Any]) -> _t.DataType:
    """The Arrow type pyarrow would infer for a list of Python values."""
    types = _value_types(values)
    if not types:
        return _t.null()
    cats = {_category(tp) for tp in types}
    if "unknown" in cats:
        bad = next(v for v in values if v is not None and _category(type(v)) == "unknown")
        raise ArrowInvalid(f"Could not convert {_describe(bad)} with type {_tp_name(type(bad))}: "
                           f"did not recognize Python value type when inferring an Arrow data type")
    if cats == {"bool"}:
        return _t.bool_()
    if cats <= {"int", "float"}:
        np_type = _numpy_scalar_type(types)
        if np_type is not None:
            return np_type
        return _t.int64() if cats == {"int"} else _t.float64()
    if cats == {"str"}:
        return _t.string()
    if cats <= {"str", "bytes"}:
        return _t.binary()
    if cats <= {"decimal", "int"}:
        return _infer_decimal(values)
    if cats == {"datetime"}:
        first = next(v for v in values if v is not None)
        return _t.timestamp("us", _tz_name(first.tzinfo) if first.tzinfo is not None else None)
    if cats <= {"date", "datetime"}:
        return _t.date32()
    if cats == {"time"}:
        return _t.time64("us")
    if cats == {"timedelta"}:
        return _t.duration("us")
    if cats == {"interval"}:
        return _t.month_day_nano_interval()
    if cats == {"list"}:
        unified = numpy_arrays_type(values)
        if unified is not None:
            return _t.list_(unified)
        flat = list(chain.from_iterable(v for v in values if v is not None))
        if not flat:
            # empty numpy arrays still say their type (pyarrow takes it from the dtype)
            typed = _empty_arrays_type(values)
            if typed is not None:
                return _t.list_(typed)
        return _t.list_(infer_type(flat))
    if cats == {"dict"}:
        return _infer_struct(values)
    first = next(v for v in values if v is not None)
    if _category(type(first)) not in ("str", "bytes"):     # strings first: their converter fails
        if "list" in cats:
            raise ArrowInvalid("cannot mix list and non-list, non-null values")
        if "dict" in cats:
            raise ArrowInvalid("cannot mix struct and non-struct, non-null values")
    raise _mixed_types_error(values)


# Sets of inference categories that make one Arrow type (infer_type's cases)
_ONE_TYPE = ({"bool"}, {"int", "float"}, {"str", "bytes"}, {"decimal", "int"}, {"date", "datetime"},
             {"time"}, {"timedelta"}, {"interval"})


def _mixed_types_error(values: list[Any]) -> Exception:
    """The error pyarrow raises for scalars of types that make no one Arrow type: it infers the
    type of the values before the first value that does not fit them, and that value then fails
    to convert (ArrowInvalid or ArrowTypeError, as its converter for that type says)."""
    seen: set[str] = set()
    at, bad = 0, None
    for at, bad in enumerate(values):
        if bad is None:
            continue
        c = _category(type(bad))
        if not any(seen | {c} <= one for one in _ONE_TYPE):
            break
        seen.add(c)
    target = infer_type(values[:at])
    tp = type(bad)
    if target.name in ("string", "binary"):
        return ArrowTypeError(f"Expected bytes, got a '{_tp_name(tp)}' object")
    if isinstance(target, _t.DecimalType):
        return ArrowTypeError(f"int or Decimal object expected, got {tp.__name__}")
    if target.name in _PY_NUMBER_TYPES:
        if target.name != "bool" and _category(tp) == "bool":
            return ArrowTypeError("Expected integer, got bool")
        return ArrowInvalid(f"Could not convert {_describe(bad)} with type {_tp_name(tp)}: "
                            f"tried to convert to "
                            f"{'boolean' if target.name == 'bool' else target}")
    return ArrowTypeError(f"object of type {tp!r} cannot be converted to int")


_PY_NUMBER_TYPES = {"bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32",
                    "uint64", "halffloat", "float", "double"}


def _tp_name(tp: type) -> str:
    """A type's name as CPython's tp_name spells it (pyarrow's messages quote that): module
    prefixed for types defined in C outside builtins."""
    if tp.__flags__ & (1 << 9) or tp.__module__ == "builtins":     # Py_TPFLAGS_HEAPTYPE
        return tp.__name__
    return f"{tp.__module__}.{tp.__qualname__}"


_NUMPY_INTS = {"int8": 1, "int16": 2, "int32": 4, "int64": 8}
_NUMPY_UINTS = {"uint8": 1, "uint16": 2, "uint32": 4, "uint64": 8}
_NUMPY_FLOATS = ("float16", "float32", "float64")


def _unify_dtypes(current: str, seen: str) -> str | None:
    """pyarrow's unification of the dtypes of numpy arrays in a list column, one more array at a
    time (its NumPyDtypeUnifier, order-dependent as there): the dtype of the values so far, or
    None where pyarrow refuses to mix the two."""
    if current == seen:
        return current
    for own, other in ((_NUMPY_INTS, _NUMPY_UINTS), (_NUMPY_UINTS, _NUMPY_INTS)):
        if current in own:
            if seen in own:
                return max(current, seen, key=own.__getitem__)
            if seen in other:               # only a narrower unsigned fits a signed dtype
                return current if own is _NUMPY_INTS and other[seen] < own[current] else None
            if seen == "float32":
                return "float32" if own[current] <= 2 else "float64"
            return "float64" if seen == "float64" else None
    if current == "float16":
        return seen if seen in _NUMPY_FLOATS else None
    if current == "float32":
        return None if seen in ("float16", "bool") else seen if seen == "float64" else "float32"
    if current == "float64":
        return "float64" if seen in _NUMPY_INTS or seen in _NUMPY_UINTS else None
    return None                             # bool mixes with nothing else


def numpy_arrays_type(values: list[Any]) -> _t.DataType | None:
    """The value type pyarrow gives a list column of 1-D numpy arrays of numbers or booleans:
    their dtypes unified (empty arrays included), not the values they hold. None when the
    values are not all such arrays."""
    current = None
    for v in values:
        if v is None:
            continue
        if not (_is_numpy_type(type(v)) and type(v).__name__ == "ndarray" and v.ndim == 1 and
                v.dtype.kind in "biuf" and v.dtype.isnative):
            return None
        seen = v.dtype.name
        unified = seen if current is None else _unify_dtypes(current, seen)
        if unified is None:
            raise ArrowInvalid(f"Cannot mix NumPy dtypes {current} and {seen}")
        current = unified
    return None if current is None else _type_for_dtype(_sys.modules["numpy"].dtype(current))


def _empty_arrays_type(values: list[Any]) -> _t.DataType | None:
    """The type the dtype of the first numpy array among `values` (all empty) gives, if any."""
    for v in values:
        if v is not None and _is_numpy_type(type(v)) and v.dtype.kind != "O":
            return _t.string() if v.dtype.kind == "U" else _t.binary() if \
                v.dtype.kind == "S" else _type_for_dtype(v.dtype)
    return None


def _infer_struct(values: list[Any]) -> _t.DataType:
    keys: dict[Any, Any] = {}
    for row in values:
        if row is None:
            continue
        for k in row:
            keys.setdefault(_field_name(k), k)
    fields = []
    for name, key in keys.items():
        col = [None if row is None else row.get(key) for row in values]
        fields.append(_t.field(name, infer_type(col)))
    return _t.struct(fields)


def _field_name(k: Any) -> str:
    if isinstance(k, str):
        return k
    if isinstance(k, bytes):
        return k.decode()
    raise ArrowTypeError(f"struct keys must be str or bytes, got {k.__class__.__name__}")


def _infer_decimal(values: list[Any]) -> _t.DataType:
    max_scale = 0
    max_int_digits = 0
    for v in values:
        if v is None:
            continue
        if not isinstance(v, _decimal.Decimal):
            v = _decimal.Decimal(v)
        if not v.is_finite():
            raise ArrowInvalid(f"cannot convert {v} to an Arrow decimal")
        _, digits, exp = v.as_tuple()
        assert isinstance(exp, int)             # a finite decimal (checked above)
        if exp >= 0:
            precision, scale = len(digits) + exp, 0
        else:
            scale = -exp
            precision = max(len(digits), scale)
        max_scale = max(max_scale, scale)
        max_int_digits = max(max_int_digits, precision - scale)
    precision = max(max_int_digits + max_scale, 1)
    if precision <= 38:
        return _t.decimal128(precision, max_scale)
    if precision <= 76:
        return _t.decimal256(precision, max_scale)
    raise ArrowInvalid(f"decimal values need precision {precision}, more than the 76 digits "
                       f"decimal256 holds")


def _tz_name(tz: Any) -> str:
    """The Arrow time zone string of a tzinfo (pyarrow's rules)."""
    if tz is _dt.timezone.utc:
        return "UTC"
    if isinstance(tz, _dt.timezone):
        off = tz.utcoffset(None)
        sign = "-" if off < _dt.timedelta(0) else "+"
        minutes = abs(off) // _dt.timedelta(minutes=1)
        return f"{sign}{minutes // 60:02d}:{minutes % 60:02d}"
    key = getattr(tz, "key", None) or getattr(tz, "zone", None)   # zoneinfo / pytz
    if isinstance(key, str):
        return key
    raise ArrowNotImplementedError(f"cannot name the time zone of tzinfo {tz!r}")


# -- builders -----------------------------------------------------------------------------------

def _build(values: list[Any], t: Any, where: str) -> ArrayData:
    if isinstance(t, ExtensionType):
        return _build(values, t.storage, where).copy_with(type=t)
    kind = t.kind
    if kind == Kind.FIXED:
        return _build_fixed(values, t, where)
    return _BUILDER_BY_KIND[kind](values, t, where)


def _build_null(values: list[Any], t: Any, where: str) -> ArrayData:
    if _value_types(values):
        i = next(i for i, v in enumerate(values) if v is not None)
        raise ArrowInvalid(f"{where}: a null array holds only None, got {_describe(values[i])} "
                           f"at index {i}")
    return _data(t, len(values), len(values), [])


def _as_bool(v: Any) -> Any:
    if v.__class__ is bool or _category(v.__class__) == "bool":
        return bool(v)
    raise ArrowTypeError(f"expected a bool, got {v.__class__.__name__}")


def _build_bool(values: list[Any], t: Any, where: str) -> ArrayData:
    validity, null_count, nulls = _validity(values)
    vals = _filled(values, nulls, False)
    if _value_types(vals) - {bool}:
        vals = _map_checked(_as_bool, vals, nulls, t, where)
    bits, _ = pack_bools(bytes(vals))
    return _data(t, len(values), null_count, [validity, bits])


def _as_int(v: Any) -> Any:
    if isinstance(v, int) and not isinstance(v, bool):
        return int(v)
    c = _category(v.__class__)
    if c == "int":
        return int(v)
    if c == "float":
        f = float(v)
        if f.is_integer():
            return int(f)
        raise ArrowInvalid(f"float {f} is not an integer")
    raise ArrowTypeError(f"expected an integer, got {v.__class__.__name__}")


def _build_int(values: list[Any], t: Any, where: str) -> ArrayData:
    validity, null_count, nulls = _validity(values)
    vals = _filled(values, nulls, 0)
    if _value_types(vals) - {int}:
        vals = _map_checked(_as_int, vals, nulls, t, where)
    arr = _pack_array(_ARRAY_CODE[t.name], vals, nulls, t, where)
    return _data(t, len(values), null_count, [validity, py_buffer(arr)])


_FLOAT_EXACT_INT = 2**53


def _as_float(v: Any) -> Any:
    c = _category(v.__class__)
    if c == "int":
        if not -_FLOAT_EXACT_INT <= v <= _FLOAT_EXACT_INT:
            raise ArrowInvalid(f"integer {v} cannot be represented exactly as a float")
        return float(v)
    if c in ("float", "bool"):
        return float(v)
    raise ArrowTypeError(f"expected a float, got {v.__class__.__name__}")


def _build_float(values: list[Any], t: Any, where: str) -> ArrayData:
    validity, null_count, nulls = _validity(values)
    vals = _filled(values, nulls, 0.0)
    if _value_types(vals) - {float}:
        vals = _map_checked(_as_float, vals, nulls, t, where)
    if t.name == "halffloat":
        try:
            raw = _struct.pack(f"<{len(vals)}e", *vals)
        except OverflowError:   # beyond float16 range: infinity, as pyarrow does
            raw = b"".join(_pack_half(v) for v in vals)
        return _data(t, len(values), null_count, [validity, py_buffer(raw)])
    arr = _pack_array(_ARRAY_CODE[t.name], vals, nulls, t, where)
    return _data(t, len(values), null_count, [validity, py_buffer(arr)])


def _pack_half(v: float) -> bytes:
    try:
        return _struct.pack("<e", v)
    except OverflowError:
        return _struct.pack("<e", float("inf") if v > 0 else float("-inf"))


def _build_fixed_ints(values: list[Any], t: Any, where: str, to_int: Any, code: Any) -> ArrayData:
    """Fixed-width types stored as one integer per value, after a per-value conversion."""
    validity, null_count, nulls = _validity(values)
    vals = _filled(values, nulls, 0)
    if _value_types(vals) - {int}:
        vals = _map_checked(to_int, vals, nulls, t, where)
    arr = _pack_array(code, vals, nulls, t, where)
    return _data(t, len(values), null_count, [validity, py_buffer(arr)])


def _int_only(kind_name: Any) -> Any:
    def convert(v: Any) -> Any:
        if isinstance(v, int) and not isinstance(v, bool) or _category(v.__class__) == "int":
            return int(v)
        raise ArrowTypeError(f"expected {kind_name}, got {v.__class__.__name__}")
    return convert


def _date32_value(v: Any) -> Any:
    if isinstance(v, _dt.date):
        return v.toordinal() - _EPOCH_ORDINAL
    return _int_only("a date or an int")(v)


def _date64_value(v: Any) -> Any:
    if isinstance(v, _dt.date):
        return (v.toordinal() - _EPOCH_ORDINAL) * 86_400_000
    return _int_only("a date or an int")(v)


def _datetime_us(v: _dt.datetime) -> int:
    if v.tzinfo is None or v.utcoffset() is None:
        return (v - _EPOCH) // _ONE_US
    return (v - _EPOCH_UTC) // _ONE_US


def _in_unit(us: int, unit: str) -> int:
    return us * 1000 if unit == "ns" else us // _US_PER_UNIT[unit]   # floor, as pyarrow


def _timestamp_converter(unit: Any) -> Any:
    def convert(v: Any) -> Any:
        if isinstance(v, _dt.datetime):
            return _in_unit(_datetime_us(v), unit)
        return _int_only("a datetime or an int")(v)
    return convert


def _time_converter(unit: Any) -> Any:
    def convert(v: Any) -> Any:
        if isinstance(v, _dt.time):
            us = ((v.hour * 60 + v.minute) * 60 + v.second) * 1_000_000 + v.microsecond
            return _in_unit(us, unit)
        return _int_only("a time or an int")(v)
    return convert


def _duration_converter(unit: Any) -> Any:
    def convert(v: Any) -> Any:
        if isinstance(v, _dt.timedelta):
            return _in_unit(v // _ONE_US, unit)
        return _int_only("a timedelta or an int")(v)
    return convert


def _build_day_time(values: list[Any], t: Any, where: str) -> ArrayData:
    validity, null_count, nulls = _validity(values)
    vals = _filled(values, nulls, (0, 0))
    packer = _struct.Struct("<ii")

    def pack(v: Any) -> Any:
        if not isinstance(v, (tuple, list)) or len(v) != 2:
            raise ArrowTypeError(f"expected a (days, milliseconds) pair, got "
                                 f"{v.__class__.__name__}")
        return packer.pack(*map(_int_only("an int"), v))
    raw = b"".join(_map_checked(pack, vals, nulls, t, where))
    return _data(t, len(values), null_count, [validity, py_buffer(raw)])


def _build_month_day_nano(values: list[Any], t: Any, where: str) -> ArrayData:
    validity, null_count, nulls = _validity(values)
    vals = _filled(values, nulls, (0, 0, 0))
    packer = _struct.Struct("<iiq")

    def pack(v: Any) -> Any:
        if isinstance(v, _dt.timedelta):
            return packer.pack(0, v.days, (v.seconds * 1_000_000 + v.microseconds) * 1000)
        if not isinstance(v, (tuple, list)) or len(v) != 3:
            raise ArrowTypeError(f"expected a (months, days, nanoseconds) tuple, got "
                                 f"{v.__class__.__name__}")
        try:
            return packer.pack(*map(_int_only("an int"), v))
        except _struct.error as e:
            raise ArrowInvalid(f"interval parts {tuple(v)} out of range: {e}") from None
    raw = b"".join(_map_checked(pack, vals, nulls, t, where))
    return _data(t, len(values), null_count, [validity, py_buffer(raw)])


def _decimal_converter(t: Any) -> Any:
    scale, precision = t.scale, t.precision
    limit = 10 ** precision

    def convert(v: Any) -> Any:
        if isinstance(v, _decimal.Decimal):
            if not v.is_finite():
                raise ArrowInvalid(f"{v} is not a finite decimal")
            sign, digits, exp = v.as_tuple()
            unscaled = int("".join(map(str, digits)) or "0")
            shift = exp + scale
            # a value's exponent and a type's scale may be vast: 10 ** shift is made only where
            # its result can fit
            if unscaled == 0:
                pass
            elif shift > precision:
                raise ArrowInvalid(f"{v} does not fit in {t} (precision {precision})")
            elif shift >= 0:
                unscaled *= 10 ** shift
            elif -shift > len(digits):
                raise ArrowInvalid(f"rescaling {v} to scale {scale} would lose digits")
            else:
                unscaled, rest = divmod(unscaled, 10 ** -shift)
                if rest:
                    raise ArrowInvalid(f"rescaling {v} to scale {scale} would lose digits")
            if sign:
                unscaled = -unscaled
        elif isinstance(v, int) and not isinstance(v, bool) or _category(v.__class__) == "int":
            unscaled = int(v)
            if unscaled and scale > precision:      # 10 ** scale is made only if it can fit
                raise ArrowInvalid(f"{v} does not fit in {t} (precision {precision})")
            if unscaled:
                unscaled = unscaled * 10 ** scale if scale >= 0 else \
                    _int_descaled(unscaled, -scale)
        else:
            raise ArrowTypeError(f"expected a Decimal or an int, got {v.__class__.__name__}")
        if not -limit < unscaled < limit:
            raise ArrowInvalid(f"{v} does not fit in {t} (precision {precision})")
        return unscaled
    return convert


def _int_descaled(v: int, digits: int) -> int:
    q: int
    if not v:
        return 0
    if digits > len(str(abs(v))):             # every digit is below the scale
        raise ArrowInvalid(f"rescaling {v} to scale {-digits} would lose digits")
    q, r = divmod(v, 10 ** digits)
    if r:
        raise ArrowInvalid(f"rescaling {v} to scale {-digits} would lose digits")
    return q


def _build_decimal(values: list[Any], t: Any, where: str) -> ArrayData:
    validity, null_count, nulls = _validity(values)
    vals = _map_checked(_decimal_converter(t), _filled(values, nulls, 0), nulls, t, where)
    width = t.byte_width
    if width <= 8:
        arr = _pack_array("i" if width == 4 else "q", vals, nulls, t, where)
        return _data(t, len(values), null_count, [validity, py_buffer(arr)])
    raw = b"".join([v.to_bytes(width, "little", signed=True) for v in vals])
    return _data(t, len(values), null_count, [validity, py_buffer(raw)])


def _as_bytes(v: Any, utf8_check: bool = False) -> bytes:
    if isinstance(v, bytes):
        b = v
    elif isinstance(v, str):
        return v.encode()
    elif isinstance(v, (bytearray, memoryview)):
        b = bytes(v)
    else:
        raise ArrowTypeError(f"expected bytes or str, got {v.__class__.__name__}")
    if utf8_check:
        b.decode()      # UnicodeDecodeError is a ValueError: reported as ArrowInvalid
    return b


def _encoded(values: list[Any], nulls: list[Any], t: Any, where: Any) -> list[Any]:
    """Each value as bytes (str encoded to UTF-8); bytes given for a string type must be UTF-8."""
    types = _value_types(values)
    if types == {str}:
        return _map_checked(str.encode, _filled(values, nulls, ""), nulls, t, where)
    vals = _filled(values, nulls, b"")
    if types == {bytes} and not t.is_utf8:
        return vals
    if t.is_utf8:
        return _map_checked(lambda v: _as_bytes(v, True), vals, nulls, t, where)
    return _map_checked(_as_bytes, vals, nulls, t, where)


def _offsets_buffer(lengths: Any, code: str, t: Any, where: str, hint: str) -> Any:
    try:
        arr = _array(code, accumulate(lengths, initial=0))
    except OverflowError:
        raise ArrowCapacityError(f"{where}: {t} offsets exceed 2**31 - 1; use {hint}") from None
    if not _LITTLE:
        arr.byteswap()
    return py_buffer(arr)


def _build_binary(values: list[Any], t: Any, where: str) -> ArrayData:
    validity, null_count, nulls = _validity(values)
    code = "i" if t.kind == Kind.BINARY else "q"
    if _value_types(values) == {str}:
        strings = _filled(values, nulls, "")
        text = "".join(strings)
        if text.isascii():      # one encode for the column; lengths in characters are bytes
            offsets = _offsets_buffer(map(len, strings), code, t, where, "a large_ type")
            return _data(t, len(values), null_count,
                         [validity, offsets, py_buffer(text.encode("ascii"))])
    encoded = _encoded(values, nulls, t, where)
    offsets = _offsets_buffer(map(len, encoded), code, t, where, "a large_ type")
    return _data(t, len(values), null_count, [validity, offsets, py_buffer(b"".join(encoded))])


_INLINE_VIEW = _struct.Struct("<i12s")
_REF_VIEW = _struct.Struct("<i4sii")


def _build_view(values: list[Any], t: Any, where: str) -> ArrayData:
    """16-byte views: strings up to 12 bytes inline, longer ones as prefix + buffer + offset."""
    validity, null_count, nulls = _validity(values)
    encoded = _encoded(values, nulls, t, where)
    views: list[Any] = []
    data_buffers: list[Any] = []
    pieces: list[Any] = []
    size = 0
    inline, ref = _INLINE_VIEW.pack, _REF_VIEW.pack
    for b in encoded:
        n = len(b)
        if n <= 12:
            views.append(inline(n, b))
            continue
        if n > _INT32_MAX:
            raise ArrowCapacityError(f"{where}: a {t} value of {n} bytes exceeds 2**31 - 1")
        if size + n > _INT32_MAX:       # offsets are int32: start another data buffer
            data_buffers.append(b"".join(pieces))
            pieces, size = [], 0
        views.append(ref(n, b[:4], len(data_buffers), size))
        pieces.append(b)
        size += n
    if pieces:
        data_buffers.append(b"".join(pieces))
    buffers = [validity, py_buffer(b"".join(views))] + [py_buffer(d) for d in data_buffers]
    return _data(t, len(values), null_count, buffers)


def _fsb_converter(width: Any) -> Any:
    def convert(v: Any) -> Any:
        b = _as_bytes(v)
        if len(b) != width:
            raise ArrowInvalid(f"expected {width} bytes, got {len(b)}")
        return b
    return convert


def _build_fixed_size_binary(values: list[Any], t: Any, where: str) -> ArrayData:
    validity, null_count, nulls = _validity(values)
    width = t.byte_width
    vals = _map_checked(_fsb_converter(width), _filled(values, nulls, bytes(width)), nulls, t,
                        where)
    return _data(t, len(values), null_count, [validity, py_buffer(b"".join(vals))])


def _build_fixed(values: list[Any], t: Any, where: str) -> ArrayData:
    if isinstance(t, PrimitiveType):
        if t.is_integer:
            return _build_int(values, t, where)
        if t.is_float:
            return _build_float(values, t, where)
        name = t.name
        if name == "date32[day]":
            return _build_fixed_ints(values, t, where, _date32_value, "i")
        if name == "date64[ms]":
            return _build_fixed_ints(values, t, where, _date64_value, "q")
        if name == "month_interval":
            return _build_fixed_ints(values, t, where, _int_only("an int"), "i")
        if name == "day_time_interval":
            return _build_day_time(values, t, where)
        if name == "month_day_nano_interval":
            return _build_month_day_nano(values, t, where)
    if isinstance(t, TimestampType):
        return _build_fixed_ints(values, t, where, _timestamp_converter(t.unit), "q")
    if isinstance(t, Time32Type):
        return _build_fixed_ints(values, t, where, _time_converter(t.unit), "i")
    if isinstance(t, Time64Type):
        return _build_fixed_ints(values, t, where, _time_converter(t.unit), "q")
    if isinstance(t, DurationType):
        return _build_fixed_ints(values, t, where, _duration_converter(t.unit), "q")
    if isinstance(t, DecimalType):
        return _build_decimal(values, t, where)
    if isinstance(t, FixedSizeBinaryType):
        return _build_fixed_size_binary(values, t, where)
    raise ArrowNotImplementedError(f"{where}: cannot build {t} from Python objects")


# -- nested builders ----------------------------------------------------------------------------

def _as_sequence(v: Any) -> Any:
    if isinstance(v, (list, tuple)):
        return v
    if isinstance(v, (str, bytes, bytearray, _Mapping)) or not hasattr(v, "__iter__"):
        raise ArrowTypeError(f"expected a list, got {v.__class__.__name__}")
    return list(v)


def _child_where(where: str, t: Any, i: int) -> str:
    name = t.field(i).name
    return f"{where}.{name}" if name else f"{where}.{i}"


def _lists(values: Any, nulls: Any, t: Any, where: Any) -> list[Any]:
    return _map_checked(_as_sequence, _filled(values, nulls, ()), nulls, t, where)


def _build_list(values: list[Any], t: Any, where: str) -> ArrayData:
    validity, null_count, nulls = _validity(values)
    lists = _lists(values, nulls, t, where)
    lengths = list(map(len, lists))
    child = _build(list(chain.from_iterable(lists)), t.value_type, _child_where(where, t, 0))
    code = "i" if t.kind in (Kind.LIST, Kind.LIST_VIEW) else "q"
    if t.kind in (Kind.LIST, Kind.LARGE_LIST):
        buffers = [validity, _offsets_buffer(lengths, code, t, where, "a large_list")]
    else:
        starts = _offsets_buffer(lengths[:-1], code, t, where, "a large_list_view") \
            if lengths else py_buffer(_array(code))
        sizes = _array(code, lengths)
        if not _LITTLE:
            sizes.byteswap()
        buffers = [validity, starts, py_buffer(sizes)]
    return _data(t, len(values), null_count, buffers, [child])


def _build_fixed_size_list(values: list[Any], t: Any, where: str) -> ArrayData:
    validity, null_count, nulls = _validity(values)
    size = t.list_size
    lists = _lists(values, nulls, t, where)
    null_set = set(nulls)
    for i, v in enumerate(lists):
        if len(v) != size and i not in null_set:
            raise ArrowInvalid(f"{where}: list at index {i} has {len(v)} values, {t} needs {size}")
    filler = [None] * size
    for i in nulls:
        lists[i] = filler
    child = _build(list(chain.from_iterable(lists)), t.value_type, _child_where(where, t, 0))
    return _data(t, len(values), null_count, [validity], [child])


def _map_pairs(v: Any) -> Any:
    """The (key, value) pairs of one map value: a dict, pairs, or {'key':, 'value':} dicts."""
    if isinstance(v, _Mapping):
        return list(v.items())
    pairs = []
    for p in _as_sequence(v):
        if isinstance(p, _Mapping) and "key" in p:
            pairs.append((p["key"], p.get("value")))
        elif isinstance(p, (tuple, list)) and len(p) == 2:
            pairs.append((p[0], p[1]))
        else:
            raise ArrowTypeError(f"map entries must be (key, value) pairs, got "
                                 f"{p.__class__.__name__}")
    return pairs


def _build_map(values: list[Any], t: Any, where: str) -> ArrayData:
    validity, null_count, nulls = _validity(values)
    maps = _map_checked(_map_pairs, _filled(values, nulls, {}), nulls, t, where)
    lengths = list(map(len, maps))
    pairs = list(chain.from_iterable(maps))
    keys = [p[0] for p in pairs]
    items = [p[1] for p in pairs]
    entries_type = t.value_type
    entries_where = _child_where(where, t, 0)
    if any(k is None for k in keys):
        raise ArrowInvalid(f"{where}: map keys cannot be null")
    key_data = _build(keys, t.key_type, _child_where(entries_where, entries_type, 0))
    item_data = _build(items, t.item_type, _child_where(entries_where, entries_type, 1))
    entries = _data(entries_type, len(pairs), 0, [None], [key_data, item_data])
    offsets = _offsets_buffer(lengths, "i", t, where, "smaller batches")
    return _data(t, len(values), null_count, [validity, offsets], [entries])


def _build_struct(values: list[Any], t: Any, where: str) -> ArrayData:
    validity, null_count, nulls = _validity(values)
    fields = t.fields
    names = [f.name for f in fields]
    columns = [[None] * len(values) for _ in fields]
    for i, row in enumerate(values):
        if row is None:
            continue
        if isinstance(row, _Mapping):
            for j, name in enumerate(names):
                v = row.get(name)
                if v is None and name.encode() in row:
                    v = row[name.encode()]
                columns[j][i] = v
        elif isinstance(row, (tuple, list)):
            if len(row) != len(fields):
                raise ArrowInvalid(f"{where}: row {i} has {len(row)} values, {t} has "
                                   f"{len(fields)} fields")
            for j, v in enumerate(row):
                columns[j][i] = v
        else:
            raise ArrowTypeError(f"{where}: expected a dict or tuple for {t} at index {i}, "
                                 f"got {row.__class__.__name__}")
    children = [_build(col, f.type, _child_where(where, t, j))
                for j, (col, f) in enumerate(zip(columns, fields))]
    return _data(t, len(values), null_count, [validity], children)


def _union_rows(values: Any, t: Any, where: Any) -> Any:
    """(type codes, child indices, values) from (type_code, value) pairs; None goes to child 0."""
    index_of = {c: i for i, c in enumerate(t.type_codes)}
    if not index_of:
        if values:
            raise ArrowInvalid(f"{where}: a union without children cannot hold values")
        return [], [], []
    codes, idx, vals = [], [], []
    for i, v in enumerate(values):
        if v is None:
            code, value = t.type_codes[0], None
        elif isinstance(v, tuple) and len(v) == 2:
            code, value = v
        else:
            raise ArrowTypeError(f"{where}: union values must be (type_code, value) tuples, got "
                                 f"{v.__class__.__name__} at index {i}")
        j = index_of.get(code)
        if j is None:
            raise ArrowInvalid(f"{where}: type code {code!r} at index {i} is not one of "
                               f"{t.type_codes}")
        codes.append(code)
        idx.append(j)
        vals.append(value)
    return codes, idx, vals


def _build_union(values: list[Any], t: Any, where: str) -> ArrayData:
    codes, idx, vals = _union_rows(values, t, where)
    type_ids = py_buffer(_array("b", codes))
    n = len(values)
    if t.kind == Kind.SPARSE_UNION:
        children = []
        for j, f in enumerate(t.fields):
            col = [v if c == j else None for c, v in zip(idx, vals)]
            children.append(_build(col, f.type, _child_where(where, t, j)))
        return _data(t, n, 0, [type_ids], children)
    per_child: list[list[Any]] = [[] for _ in t.fields]
    offsets = _array("i")
    for c, v in zip(idx, vals):
        offsets.append(len(per_child[c]))
        per_child[c].append(v)
    if not _LITTLE:
        offsets.byteswap()
    children = [_build(col, f.type, _child_where(where, t, j))
                for j, (col, f) in enumerate(zip(per_child, t.fields))]
    return _data(t, n, 0, [type_ids, py_buffer(offsets)], children)


class _NaNKey:
    """One dictionary key for every NaN, so NaNs share a dictionary entry."""


def _hash_key(v: Any) -> Any:
    try:
        hash(v)
    except TypeError:
        return _frozen(v)
    if isinstance(v, float) and v != v:
        return _NaNKey
    return v


def _frozen(v: Any) -> Any:
    if isinstance(v, _Mapping):
        return ("__dict__",) + tuple((k, _frozen(x)) for k, x in v.items())
    if isinstance(v, (list, tuple)):
        return ("__list__",) + tuple(_frozen(x) for x in v)
    try:
        hash(v)
        return v
    except TypeError:
        return ("__repr__", repr(v))


def _build_dictionary(values: list[Any], t: Any, where: str) -> ArrayData:
    validity, null_count, nulls = _validity(values)
    position: dict[Any, Any] = {}
    uniques: list[Any] = []
    indices: list[Any] = []
    for v in values:
        if v is None:
            indices.append(0)
            continue
        k = _hash_key(v)
        j = position.get(k)
        if j is None:
            j = position[k] = len(uniques)
            uniques.append(v)
        indices.append(j)
    lo, hi = _int_range(t.index_type)
    if len(uniques) - 1 > hi:
        raise ArrowInvalid(f"{where}: {len(uniques)} distinct values do not fit in index type "
                           f"{t.index_type}")
    dictionary = _build(uniques, t.value_type, f"{where}.dictionary")
    arr = _pack_array(_ARRAY_CODE[t.index_type.name], indices, nulls, t.index_type, where)
    return _data(t, len(values), null_count, [validity, py_buffer(arr)], dictionary=dictionary)


def _same_run(a: Any, b: Any) -> bool:
    if a is b:
        return True
    if a is None or b is None or a.__class__ is not b.__class__:
        return False
    try:
        return bool(a == b) or (a != a and b != b)   # NaNs form one run
    except (TypeError, ValueError):
        return False


def _build_run_end_encoded(values: list[Any], t: Any, where: str) -> ArrayData:
    run_values: list[Any] = []
    run_ends: list[int] = []
    for i, v in enumerate(values):
        if run_values and _same_run(run_values[-1], v):
            run_ends[-1] = i + 1
        else:
            run_values.append(v)
            run_ends.append(i + 1)
    rt = t.run_end_type
    lo, hi = _int_range(rt)
    if len(values) > hi:
        raise ArrowInvalid(f"{where}: {len(values)} values do not fit run ends of type {rt}")
    ends = _data(rt, len(run_ends), 0,
                 [None, py_buffer(_pack_array(_ARRAY_CODE[rt.name], run_ends, [], rt, where))])
    vals = _build(run_values, t.value_type, f"{where}.values")
    return _data(t, len(values), 0, [], [ends, vals])


_BUILDER_BY_KIND: dict[int, Callable[[list[Any], Any, str], ArrayData]] = {
    Kind.NULL: _build_null, Kind.BOOL: _build_bool,
    Kind.BINARY: _build_binary, Kind.LARGE_BINARY: _build_binary, Kind.VIEW: _build_view,
    Kind.LIST: lambda v, t, w: (_build_map if isinstance(t, MapType) else _build_list)(v, t, w),
    Kind.LARGE_LIST: _build_list, Kind.LIST_VIEW: _build_list, Kind.LARGE_LIST_VIEW: _build_list,
    Kind.FIXED_SIZE_LIST: _build_fixed_size_list, Kind.STRUCT: _build_struct,
    Kind.SPARSE_UNION: _build_union, Kind.DENSE_UNION: _build_union,
    Kind.DICTIONARY: _build_dictionary, Kind.RUN_END_ENCODED: _build_run_end_encoded,
}


# -- numpy --------------------------------------------------------------------------------------

_NUMPY_NAME_TO_TYPE = {
    "bool": _t.bool_, "int8": _t.int8, "int16": _t.int16, "int32": _t.int32, "int64": _t.int64,
    "uint8": _t.uint8, "uint16": _t.uint16, "uint32": _t.uint32, "uint64": _t.uint64,
    "float16": _t.float16, "float32": _t.float32, "float64": _t.float64,
}


def _type_for_dtype(dtype: Any) -> _t.DataType | None:
    """The Arrow type whose values buffer a numpy dtype matches, or None."""
    make = _NUMPY_NAME_TO_TYPE.get(dtype.name)
    if make is not None:
        return make()
    if dtype.kind in "Mm":
        unit = _datetime_unit(dtype)
        if dtype.kind == "M":
            return _t.date32() if unit == "D" else _t.timestamp(unit)
        return _t.duration(unit)
    return None


def _datetime_unit(dtype: Any) -> str:
    np = _sys.modules["numpy"]
    unit: str
    unit, count = np.datetime_data(dtype)
    if count != 1 or unit not in ("s", "ms", "us", "ns") + (("D",) if dtype.kind == "M" else ()):
        raise ArrowNotImplementedError(f"unsupported numpy {dtype} unit {count}{unit}")
    return unit


def _from_numpy(arr: Any, t: Any, where: str) -> ArrayData:
    import numpy as np
    if arr.ndim != 1:
        raise ArrowInvalid(f"only 1-dimensional numpy arrays can be converted, got {arr.ndim} "
                           f"dimensions")
    mask = None
    if isinstance(arr, np.ma.MaskedArray):
        mask = np.ma.getmaskarray(arr)
        arr = np.asarray(arr.data)
        if not mask.any():
            mask = None
    natural = _type_for_dtype(arr.dtype) if arr.dtype.kind in "biufMm" else None
    target = t.storage if isinstance(t, ExtensionType) else t
    if natural is None or (target is not None and target != natural):
        if (natural is not None and arr.dtype.kind in "Mm" and target is not None
                and isinstance(target, (TimestampType, DurationType))
                and (arr.dtype.kind == "M") == isinstance(target, TimestampType)):
            arr = arr.astype(f"{arr.dtype.kind}8[{target.unit}]")   # a unit change stays in numpy
            natural = target
        else:
            values = arr.tolist()
            if mask is not None:
                for i in np.flatnonzero(mask).tolist():
                    values[i] = None
            return array_data_from_python(values, t)
    if arr.dtype.byteorder not in ("=", "|", "<" if _LITTLE else ">"):
        arr = arr.astype(arr.dtype.newbyteorder("="))
    if not arr.flags.c_contiguous:
        arr = np.ascontiguousarray(arr)
    if arr.dtype.kind in "Mm":
        nat = arr.view(np.int64) == np.iinfo(np.int64).min
        if nat.any():
            mask = nat if mask is None else (mask | nat)
    n = len(arr)
    if mask is not None:
        validity, valid_count = pack_bools(np.logical_not(mask).view(np.uint8))
        null_count = n - valid_count
    else:
        validity, null_count = None, 0
    if natural.kind == Kind.BOOL:
        values, _ = pack_bools(arr.view(np.uint8))
    elif natural == _t.date32():
        days = arr.view(np.int64)
        if mask is not None:
            days = np.where(mask, 0, days)
        if n and (days.min() < -2**31 or days.max() > _INT32_MAX):
            raise ArrowInvalid(f"{where}: datetime64[D] values out of the date32 range")
        values = py_buffer(days.astype("<i4"))
    else:
        values = py_buffer(arr)      # zero-copy: the Buffer keeps the ndarray alive
    result = _data(natural, n, null_count, [validity, values])
    return result.copy_with(type=t) if isinstance(t, ExtensionType) else result

