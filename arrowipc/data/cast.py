"""Casts between types, with pyarrow's safe-cast rules: a safe cast raises ArrowInvalid where
pyarrow's would (an integer out of range, a float with a fraction, a timestamp losing precision,
bytes that are not UTF-8, text that does not parse); `safe=False` lets values wrap or truncate.

Numeric and temporal conversions run in the Cython kernels (arrowipc/_core/cast_kernels.pyx);
relabelling casts (int64 to timestamp, string to binary, a time zone change) are zero-copy;
nested types cast their children; dictionaries decode through take. Conversions between text and
numbers go through Python values (they are per-value parsing and formatting either way).
Unsupported pairs raise ArrowNotImplementedError as pyarrow does.
"""
from __future__ import annotations

import re

from .._core.arraydata import ArrayData
from .._core import cast_kernels as _k
from ..errors import ArrowInvalid, ArrowNotImplementedError
from .selection import take
from .text import (MS_PER_DAY, UNITS_PER_SECOND, civil_days, decimal_text, float32_repr,
                   format_float, local_times, parse_decimal, parse_temporal, storage_int,
                   temporal_text, temporal_text_fixed, unscaled, valid_flags, validity_bitmap,
                   values_bytes)
from .to_python import to_pylist
from ..types import (BinaryType, DecimalType, DictionaryType, DurationType, ExtensionType,
                    FixedSizeListType, Kind, LargeListType, LargeListViewType, ListType,
                    ListViewType, RunEndEncodedType, StructType, Time32Type, Time64Type,
                    TimestampType, UnionType, ensure_type, float32, float64, int32, int64)

TYPE_CHECKING = False               # typing itself is not imported at run time
if TYPE_CHECKING:
    from typing import Any

    from ..types import DataType

__all__ = ["cast_data", "dictionary_encode", "format_float", "make_int", "unsupported"]

_CODES = _k.NUMERIC_CODES


def _unit(t: Any) -> str | None:
    """The time unit of a temporal type counted in units (dates count days or ms)."""
    if isinstance(t, (TimestampType, DurationType, Time32Type, Time64Type)):
        return t.unit
    if t.name == "date64[ms]":
        return "ms"
    return None


def _width(t: DataType) -> int:
    return t.byte_width


def _value(d: ArrayData, i: int) -> Any:
    return to_pylist(d.slice(i, 1))[0]


def cast_data(d: ArrayData, target: Any, safe: bool = True) -> ArrayData:
    """`d` converted to type `target` (see the module docstring for the rules)."""
    target = ensure_type(target)
    src = d.type
    if src == target:
        return d
    if isinstance(src, ExtensionType):
        return cast_data(d.with_type(src.storage_type), target, safe)
    if isinstance(target, ExtensionType):
        return cast_data(d, target.storage_type, safe).with_type(target)
    n = d.length
    if src.kind == Kind.NULL:
        from .from_python import array_data_from_python
        return array_data_from_python([None] * n, target)
    if isinstance(src, DictionaryType):
        assert d.dictionary is not None        # a dictionary array carries its dictionary
        if isinstance(target, DictionaryType):
            idx = cast_data(ArrayData(src.index_type, n, d.offset, d.null_count, d.buffers),
                            target.index_type, safe)
            dictionary = cast_data(d.dictionary, target.value_type, safe)
            return ArrayData(target, idx.length, idx.offset, idx.null_count, idx.buffers, [],
                             dictionary)
        decoded = take(d.dictionary, ArrayData(src.index_type, n, d.offset, d.null_count,
                                               d.buffers))
        return cast_data(decoded, target, safe)
    if isinstance(target, DictionaryType):
        return _dictionary_encode(cast_data(d, target.value_type, safe), target)
    sname, tname = src.name, target.name
    if sname in _CODES and tname in _CODES:
        return _numeric(d, src, target, safe)
    if src.kind == Kind.BOOL and tname in _CODES:
        return ArrayData(target, n, 0, d.null_count if d.null_count >= 0 else -1,
                         [validity_bitmap(d), _k.bits_to_numeric(d, _CODES[tname])])
    if sname in _CODES and target.kind == Kind.BOOL:
        return ArrayData(target, n, 0, d.null_count, [validity_bitmap(d),
                                                       _k.nonzero_bits(d, _CODES[sname])])
    if isinstance(src, DecimalType) or isinstance(target, DecimalType):
        if "halffloat" in (sname, tname) or Kind.BOOL in (src.kind, target.kind):
            raise unsupported(src, target)
        return _decimal(d, src, target, safe)
    if sname == "halffloat" or tname == "halffloat":
        half = _half(d, src, target, safe)
        if half is not None:
            return half
    temporal = _temporal(d, src, target, safe)
    if temporal is not None:
        return temporal
    if isinstance(src, BinaryType) and isinstance(target, BinaryType):
        return _binary(d, src, target, safe)
    if isinstance(target, BinaryType) and target.is_utf8:
        return _to_text(d, src, target)
    if isinstance(src, BinaryType):
        return _from_text(d, src, target)
    if _is_list(src) and _is_list(target):
        return _list(d, src, target, safe)
    if isinstance(src, StructType) and isinstance(target, StructType):
        return _struct(d, src, target, safe)
    raise unsupported(src, target)


# pyarrow's names for a target type and its cast function, where they differ from our type name
_CAST_NAMES = {"halffloat": ("halffloat", "func"), "decimal128": ("decimal128", "cast_decimal"),
               "bool": ("bool", "cast_boolean"),
               "string": ("utf8", "cast_string"), "large_string": ("large_utf8",
                                                                   "cast_large_string"),
               "string_view": ("utf8_view", "cast_string_view")}


def unsupported(src: Any, target: Any) -> ArrowNotImplementedError:
    """pyarrow's error for a pair of types no cast function handles."""
    if isinstance(target, (UnionType, RunEndEncodedType, ListViewType, LargeListViewType)):
        # pyarrow has no cast function at all for these targets
        return ArrowNotImplementedError(f"Unsupported cast to {target} from {src}")
    name = re.split(r"[\[<(]", str(target))[0]
    label, function = _CAST_NAMES.get(name, (name, f"cast_{name}"))
    return ArrowNotImplementedError(f"Unsupported cast from {src} to {label} using function "
                                    f"{function}")


def _lossless(src: Any, target: Any) -> bool:
    """Every value of `src` converts exactly (or pyarrow does not check: float to float)."""
    if getattr(src, "is_float", False):
        return bool(getattr(target, "is_float", False))
    if getattr(target, "is_float", False):
        return bool(src.bit_width < (24 if target.name == "float" else 53))
    (slo, shi), (tlo, thi) = _int_range(src), _int_range(target)
    return bool(tlo <= slo and shi <= thi)


def _numeric(d: ArrayData, src: Any, target: Any, safe: bool) -> ArrayData:
    check = safe and not _lossless(src, target)
    values, bad = _k.cast_numeric(d, _CODES[src.name], _CODES[target.name], check)
    if bad >= 0:
        v = _value(d, bad)
        if getattr(src, "is_float", False):
            raise ArrowInvalid(f"Float value {v:f} was truncated converting to {target}")
        if getattr(target, "is_float", False):
            m = 1 << (24 if target.name == "float" else 53)
            lo = -m if src.is_signed else 0
            raise ArrowInvalid(f"Integer value {v} not in range: {lo} to {m}")
        # pyarrow names the values both types can hold
        (slo, shi), (tlo, thi) = _int_range(src), _int_range(target)
        raise ArrowInvalid(f"Integer value {v} not in range: {max(slo, tlo)} to {min(shi, thi)}")
    return ArrayData(target, d.length, 0, d.null_count, [validity_bitmap(d), values])


def _int_range(t: Any) -> tuple[int, int]:
    bits = t.bit_width
    if t.is_signed:
        return -(1 << (bits - 1)), (1 << (bits - 1)) - 1
    return 0, (1 << bits) - 1


def _temporal(d: ArrayData, src: Any, target: Any, safe: bool) -> ArrayData | None:
    s_int, t_int = storage_int(src), storage_int(target)
    if s_int is None and t_int is None:
        return None
    if s_int is None:
        if src != t_int:
            return None
        # an integer of the storage type counts the target's units: relabel (zero-copy)
        return d.with_type(target)
    if t_int is None:
        if target != s_int:
            return None
        return d.with_type(target)
    sdate, tdate = src.name.startswith("date"), target.name.startswith("date")
    if (isinstance(src, TimestampType) and src.tz
            and (tdate or isinstance(target, (Time32Type, Time64Type)))):
        # the date and the time of day are those of the zone's wall clock
        return _temporal(_wall_clock(d, src), _naive(src), target, safe)
    same_family = (
        (isinstance(src, TimestampType) and isinstance(target, TimestampType))
        or (isinstance(src, DurationType) and isinstance(target, DurationType))
        or (isinstance(src, (Time32Type, Time64Type)) and isinstance(target, (Time32Type, Time64Type)))
        or (sdate and tdate)
        or (isinstance(src, TimestampType) and tdate)
        or (sdate and isinstance(target, TimestampType)))
    if isinstance(src, TimestampType) and isinstance(target, (Time32Type, Time64Type)):
        # the time of day: the value modulo a day, then the target's unit
        su, tu = UNITS_PER_SECOND[src.unit], UNITS_PER_SECOND[target.unit]
        of_day = ArrayData(int64(), d.length, 0, 0,
                           [None, _k.rescale(d, 8, 8, 1, 1, False, su * 86400)[0]])
        mul, div = (tu // su, 1) if tu >= su else (1, su // tu)
        values, bad, _ = _k.rescale(of_day, 8, _width(target), mul, div, safe)
        if bad >= 0:
            # pyarrow reports the last value losing data
            import numpy as np
            ticks = np.frombuffer(memoryview(of_day.buffers[1]),  # type: ignore[arg-type]
                                  dtype=np.int64)[:d.length]      # (its values buffer)
            lost = ticks % div != 0
            flags = valid_flags(d)
            if flags is not None:
                lost &= flags
            rows = np.flatnonzero(lost)
            last = int(rows[-1]) if len(rows) else bad
            raise ArrowInvalid(f"Cast would lose data: {int(ticks[last])}")
        return ArrayData(target, d.length, 0, d.null_count, [validity_bitmap(d), values])
    if not same_family:
        return None
    # same family: both have a unit (mypy cannot see _unit's result checked)
    su = UNITS_PER_SECOND[_unit(src)] if _unit(src) else None  # type: ignore[index,assignment]
    tu = (UNITS_PER_SECOND[_unit(target)]  # type: ignore[index,assignment]
          if _unit(target) else None)
    exact = safe
    if src.name == "date32[day]":
        mul, div = tu * 86400, 1                         # days -> target units
    elif target.name == "date32[day]":
        # to days: a timestamp truncates to its date; a date64 must be whole days (safe)
        mul, div, exact = 1, su * 86400, safe and src.name == "date64[ms]"
    elif target.name == "date64[ms]" and isinstance(src, TimestampType):
        # timestamp -> date64: whole days in ms (through date32)
        days = _temporal(d, src, _date32(), safe)
        assert days is not None                 # timestamp to date32 is always supported
        return _temporal(days, _date32(), target, safe)
    else:
        mul, div = (tu // su, 1) if tu >= su else (1, su // tu)
    # a unit change truncates toward zero (pyarrow's unchecked cast); only a date floors
    values, bad, why = _k.rescale(d, _width(src), _width(target), mul, div, exact, 0, tdate)
    if bad >= 0:
        v = make_int(d, bad)
        if why == 1:
            raise ArrowInvalid(f"Casting from {src} to {target} would lose data: {v}")
        raise ArrowInvalid(f"Casting from {src} to {target} would result in out of bounds "
                           f"{_family(target)}: {v}")
    return ArrayData(target, d.length, 0, d.null_count, [validity_bitmap(d), values])


def _naive(t: Any) -> Any:
    from ..types import timestamp
    return timestamp(t.unit)


def _wall_clock(d: ArrayData, src: Any) -> ArrayData:
    """A zoned timestamp array's local times, as a naive timestamp array."""
    import numpy as np
    from .._core.buffer import py_buffer
    ints = np.frombuffer(values_bytes(d, 8), dtype=np.int64)
    local, _ = local_times(ints.astype(f"datetime64[{src.unit}]"), ints, src.unit, src.tz)
    values = local.astype(np.int64)
    return ArrayData(_naive(src), d.length, 0, d.null_count,
                     [validity_bitmap(d), py_buffer(values)])


def _date32() -> Any:
    from ..types import date32
    return date32()


def _family(t: Any) -> str:
    return "timestamp" if isinstance(t, TimestampType) else t.name.split("[")[0]


def make_int(d: ArrayData, i: Any) -> int:
    """Value i of temporal data `d` (date, time, timestamp, duration) as its stored integer."""
    value: int = _value(d.with_type(storage_int(d.type)), i)
    return value


def _binary(d: ArrayData, src: Any, target: Any, safe: bool = True) -> ArrayData:
    if target.kind == Kind.VIEW or src.kind == Kind.VIEW:
        values = to_pylist(d)
        from .from_python import array_data_from_python
        if target.is_utf8 and not src.is_utf8 and not safe:
            # unchecked: the bytes as they are, relabelled
            from ..types import binary_view
            return array_data_from_python(values, binary_view()).with_type(target)
        if target.is_utf8 and not src.is_utf8:
            values = [_decode(v) for v in values]
        elif src.is_utf8 and not target.is_utf8:
            values = [None if v is None else v.encode() for v in values]
        from .from_python import array_data_from_python
        return array_data_from_python(values, target)
    if target.is_utf8 and not src.is_utf8 and safe:
        _check_utf8(d)                      # unchecked, pyarrow relabels the bytes as they are
    if src.kind == target.kind:
        return d.with_type(target)
    fw, tw = (4, 8) if src.kind == Kind.BINARY else (8, 4)
    widened = _k.widen_offsets(d, fw, tw)
    if widened is None:
        raise ArrowInvalid(f"Failed casting from {src} to {target}: input array too large")
    offsets, first = widened
    data = d.buffers[2].slice(first) if d.buffers[2] is not None else None
    return ArrayData(target, d.length, 0, d.null_count, [validity_bitmap(d), offsets, data])


def _decode(v: Any) -> Any:
    if v is None:
        return None
    try:
        return v.decode()
    except UnicodeDecodeError:
        raise ArrowInvalid("Invalid UTF8 payload") from None


def _check_utf8(d: ArrayData) -> None:
    from ..validate import validate_array
    try:
        validate_array(d.with_type(_string_like(d.type)), full=True)
    except ArrowInvalid:
        raise ArrowInvalid("Invalid UTF8 payload") from None


def _string_like(t: Any) -> Any:
    from ..types import large_string, string
    return string() if t.kind == Kind.BINARY else large_string()


def dictionary_encode(d: ArrayData, null_encoding: str = "mask") -> ArrayData:
    """`d` as a dictionary<int32, type> array, values in order of first appearance (pyarrow's
    dictionary_encode); null_encoding="encode" makes a null a dictionary value (at its first
    appearance) where "mask" (the default) leaves null indices. Dictionary data is returned
    as it is."""
    from ..types import DictionaryType, int32
    if null_encoding not in ("mask", "encode"):
        raise ValueError(f'"{null_encoding}" is not a valid null encoding')
    if isinstance(d.type, DictionaryType):
        return d
    target = DictionaryType(int32(), d.type)
    if d.type.kind == Kind.NULL and d.length:
        # pyarrow's dictionary of null values is one null, whatever the encoding
        out = _dictionary_encode(d, target, True)
        if null_encoding == "mask":
            from .from_python import array_data_from_python
            idx = array_data_from_python([None] * d.length, int32())
            out = ArrayData(target, idx.length, 0, idx.null_count, idx.buffers, [],
                            out.dictionary)
        return out
    return _dictionary_encode(d, target, null_encoding == "encode")


def _dictionary_encode(d: ArrayData, target: Any, encode_nulls: bool = False) -> ArrayData:
    from .hashing import dictionary_encoded         # numpy: loaded on first use
    return dictionary_encoded(d, target, encode_nulls)


# -- text ---------------------------------------------------------------------------------------

_INT_TEXT = re.compile(r"-?[0-9]+\Z")
_FLOAT_TEXT = re.compile(r"[-+]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][-+]?[0-9]+)?\Z|"
                         r"[-+]?(nan|inf|infinity)\Z", re.IGNORECASE)


def _to_text(d: ArrayData, src: Any, target: Any) -> ArrayData:
    from .from_python import array_data_from_python
    if storage_int(src) is not None:
        fast = temporal_text_fixed(d, src, target)
        if fast is not None:
            return fast
        return array_data_from_python(temporal_text(d, src), target)
    if src.kind not in (Kind.BOOL, Kind.FIXED) or isinstance(src, DecimalType):
        raise unsupported(src, target)
    values = to_pylist(d)
    if src.kind == Kind.BOOL:
        out = [None if v is None else ("true" if v else "false") for v in values]
    elif getattr(src, "is_integer", False):
        out = [None if v is None else str(v) for v in values]
    elif src.name == "double":
        out = [None if v is None else format_float(v) for v in values]
    elif src.name == "float":
        out = [None if v is None else format_float(v, float32_repr(v)) for v in values]
    else:
        raise unsupported(src, target)
    return array_data_from_python(out, target)


def _from_text(d: ArrayData, src: Any, target: Any) -> ArrayData:
    # pyarrow's parsers run over every value and report the LAST one that fails
    from .from_python import array_data_from_python
    temporal = target.name in ("date32[day]", "date64[ms]") or isinstance(target, TimestampType)
    if (temporal and (src.kind == Kind.VIEW or not src.is_utf8)) or (
            src.kind == Kind.VIEW and target.name == "halffloat"):
        raise unsupported(src, target)      # pyarrow parses these from string and large_string
    values = to_pylist(d)
    if not src.is_utf8:
        # bytes parse as text; pyarrow's message shows undecodable bytes as U+FFFD
        values = [None if v is None else v.decode("utf-8", "replace") for v in values]
    out: list[Any] = []
    errors: list[str] = []
    if getattr(target, "is_integer", False):
        lo, hi = _int_range(target)
        for v in values:
            ok: object = v is None or (_INT_TEXT.match(v) and lo <= int(v) <= hi)
            out.append(None if v is None or not ok else int(v))
            if not ok:
                errors.append(f"Failed to parse string: '{v}' as a scalar of type {target}")
    elif getattr(target, "is_float", False):
        for v in values:
            ok = v is None or _FLOAT_TEXT.match(v)
            out.append(None if v is None or not ok else float(v))
            if not ok:
                errors.append(f"Failed to parse string: '{v}' as a scalar of type {target}")
    elif target.kind == Kind.BOOL:
        truth = {"true": True, "1": True, "false": False, "0": False}
        for v in values:
            b = None if v is None else truth.get(v.lower())
            out.append(b)
            if v is not None and b is None:
                errors.append(f"Failed to parse value: {v}")
    elif temporal:
        for v in values:
            if v is None:
                out.append(None)
                continue
            parsed, why = parse_temporal(v, target)
            out.append(parsed)
            if parsed is None:
                errors.append(f"Failed to parse string: '{v}' as a scalar of type {target}{why}")
        _raise_last(errors)
        return array_data_from_python(out, storage_int(target)).with_type(target)
    else:
        raise unsupported(src, target)
    _raise_last(errors)
    return array_data_from_python(out, target)


# -- nested -------------------------------------------------------------------------------------

def _is_list(t: Any) -> bool:
    return isinstance(t, (ListType, LargeListType, FixedSizeListType))


def _list(d: ArrayData, src: Any, target: Any, safe: bool) -> ArrayData:
    if isinstance(target, FixedSizeListType) != isinstance(src, FixedSizeListType):
        lists = to_pylist(d)
        if isinstance(target, FixedSizeListType):
            sizes = {len(v) for v in lists if v is not None}
            if sizes - {target.list_size}:
                raise ArrowInvalid("ListType can only be casted to FixedSizeListType if the "
                                   "lists are all the expected size.")
        from .from_python import array_data_from_python
        values = cast_data(d.list_values(), target.value_type, safe)
        child: Any = to_pylist(values)
        out: list[Any] = []
        pos = 0
        for v in lists:
            if v is None:
                out.append(None)
                continue
            out.append(child[pos:pos + len(v)])
            pos += len(v)
        return array_data_from_python(out, target)
    if isinstance(src, FixedSizeListType):
        if src.list_size != target.list_size:
            raise ArrowInvalid(f"Size of FixedSizeList is not the same. input list: {src} "
                               f"output list: {target}")
        child = cast_data(d.list_values(), target.value_type, safe)
        return ArrayData(target, d.length, 0, d.null_count, [validity_bitmap(d)], [child])
    fw = 4 if isinstance(src, ListType) else 8
    tw = 4 if isinstance(target, ListType) else 8
    widened = _k.widen_offsets(d, fw, tw)
    if widened is None:
        raise ArrowInvalid(f"Failed casting from {src} to {target}: input array too large")
    offsets, first = widened
    last = int(memoryview(offsets).cast("i" if tw == 4 else "q")[d.length]) if d.length else 0
    values = cast_data(d.children[0].slice(first, last), target.value_type, safe)
    return ArrayData(target, d.length, 0, d.null_count, [validity_bitmap(d), offsets], [values])


def _struct(d: ArrayData, src: Any, target: Any, safe: bool) -> ArrayData:
    names = [f.name for f in src.fields]
    children = []
    k = 0
    for f in target.fields:
        # fields are matched by name, in order; a target may drop source fields (pyarrow 26)
        while k < len(names) and names[k] != f.name:
            k += 1
        if k == len(names):
            raise ArrowInvalid(f"struct fields don't match or are in the wrong order: Input "
                               f"fields: {src} output fields: {target}")
        child = d.children[k].slice(d.offset, d.length)
        children.append(cast_data(child, f.type, safe))
        k += 1
    return ArrayData(target, d.length, 0, d.null_count, [validity_bitmap(d)], children)


# -- decimals -----------------------------------------------------------------------------------
# Decimal values are read and written as their unscaled integers (two's complement, little-endian);
# the arithmetic is exact Python integers, so every width (32 to 256 bits) follows one path.

_INT_DIGITS = {8: 3, 16: 5, 32: 10, 64: 19}      # decimal digits of the widest value of an integer


# -- decimals, vectorised: whenever every unscaled value fits in an int64 (the common case: up to
# 18 digits), integer <-> decimal and decimal <-> decimal run as numpy array arithmetic

_INT64_MAX = (1 << 63) - 1


def _unscaled_int64(d: ArrayData) -> Any:
    """The unscaled values of a decimal array as an int64 numpy array, or None when one does
    not fit (nulls count as 0)."""
    import numpy as np
    w = d.type.byte_width
    raw = values_bytes(d, w)
    if w <= 8:
        values = np.frombuffer(raw, dtype=np.int32 if w == 4 else np.int64).astype(np.int64)
    else:
        words = np.frombuffer(raw, dtype=np.int64).reshape(d.length, w // 8)
        values = words[:, 0]
        # the higher words must all be the low word's sign
        if not (words[:, 1:] == (values >> 63)[:, None]).all():
            return None
        values = values.copy()
    flags = valid_flags(d)
    if flags is not None:
        values[~flags] = 0
    return values


def _decimal_from_int64(values: Any, target: Any, null_count: int, validity: Any) -> ArrayData:
    """A decimal array of int64 unscaled values (sign-extended to the target's width; wrapped to
    32 bits for decimal32)."""
    import numpy as np
    from .._core.buffer import py_buffer
    w = target.byte_width
    if w == 4:
        data = values.astype(np.int32)
    elif w == 8:
        data = values.astype(np.int64)
    else:
        data = np.empty((len(values), w // 8), dtype=np.int64)
        data[:, :] = (values >> 63)[:, None]
        data[:, 0] = values
    return ArrayData(target, len(values), 0, null_count, [validity, py_buffer(data)])


def _last_error(masks_and_messages: Any, valid: Any) -> None:
    """Raise the message of the last row flagged by any mask (pyarrow reports the last failure);
    earlier masks win on the same row."""
    import numpy as np
    last, message = -1, None
    for mask, text in masks_and_messages:
        if valid is not None:
            mask = mask & valid
        rows = np.flatnonzero(mask)
        if len(rows) and rows[-1] > last:
            last, message = int(rows[-1]), text
    if message is not None:
        raise ArrowInvalid(message)


def _toward_zero(u: Any, unit: Any) -> Any:
    """u / unit truncated toward zero (numpy's // floors)."""
    q = u // unit
    return q + ((u % unit != 0) & (u < 0))


def _decimal_vectorised(d: ArrayData, src: Any, target: Any, safe: bool) -> ArrayData | None:
    """The cast as numpy array arithmetic, or None where the per-value path is needed (values
    beyond int64, a scale beyond 18 digits, unchecked narrowing to decimal32)."""
    import numpy as np
    src_dec, tgt_dec = isinstance(src, DecimalType), isinstance(target, DecimalType)
    valid = valid_flags(d)
    if tgt_dec and getattr(src, "is_integer", False):
        p, s = target.precision, target.scale
        need = _INT_DIGITS[src.bit_width] + (1 if src.bit_width == 64 and not src.is_signed
                                             else 0) + s
        if s < 0 or need > p or need > 18:
            return None                     # the per-value path raises, or needs big integers
        raw = values_bytes(d, src.byte_width)
        ints = np.frombuffer(raw, dtype=np.dtype(f"{'i' if src.is_signed else 'u'}"
                                                  f"{src.byte_width}")).astype(np.int64)
        return _decimal_from_int64(ints * np.int64(10 ** s), target, d.null_count,
                                   validity_bitmap(d))
    if not src_dec or not (tgt_dec or getattr(target, "is_integer", False)):
        return None
    u = _unscaled_int64(d)
    if u is None:
        return None
    if getattr(target, "is_integer", False):
        if src.scale < 0:
            return None
        unit = np.int64(10 ** src.scale) if src.scale <= 18 else None
        if unit is None:
            return None
        q = _toward_zero(u, unit)
        if safe:
            lo, hi = _int_range(target)
            # each value range-checked (not pyarrow 26's always-failing pairs: see _decimal_to_int)
            lost = q * unit != u
            lo, hi = np.int64(max(lo, -(1 << 63))), np.int64(min(hi, _INT64_MAX))
            out_of = (q < lo) | (q > hi)
            _last_error([(lost, "Rescaling Decimal value would cause data loss"),
                         (out_of & ~lost, "Integer value out of bounds")], valid)
        from .._core.buffer import py_buffer
        dtype = np.dtype(f"{'i' if target.is_signed else 'u'}{target.byte_width}")
        return ArrayData(target, d.length, 0, d.null_count,
                         [validity_bitmap(d), py_buffer(q.astype(dtype))])
    # decimal -> decimal
    k = target.scale - src.scale
    if not safe and target.byte_width == 4:
        return None                         # wraps before rescaling: the per-value path
    if k >= 0:
        if k > 18 or (np.abs(u) > _INT64_MAX // 10 ** k).any():
            return None
        r = u * np.int64(10 ** k)
        lost = np.zeros(len(u), dtype=bool)
    else:
        if -k > 18:
            return None
        unit = np.int64(10 ** -k)
        r = _toward_zero(u, unit)
        lost = r * unit != u
    if safe:
        p = target.precision
        big = np.abs(r) >= 10 ** p if p <= 18 else np.zeros(len(r), dtype=bool)
        _last_error([(lost, "Rescaling Decimal value would cause data loss"),
                     (big & ~lost, f"Decimal value does not fit in precision {p}")], valid)
    return _decimal_from_int64(r, target, d.null_count, validity_bitmap(d))


def _decimal_data(values: list[Any], target: Any, null_count: int, validity: Any) -> ArrayData:
    """A decimal array of unscaled integers, wrapped to the target's width (as pyarrow does
    where a cast is not checked)."""
    from .._core.buffer import py_buffer
    w = target.byte_width
    mask = (1 << (8 * w)) - 1
    data = b"".join(((v or 0) & mask).to_bytes(w, "little") for v in values)
    return ArrayData(target, len(values), 0, null_count, [validity, py_buffer(data)])


def _decimal(d: ArrayData, src: Any, target: Any, safe: bool) -> ArrayData:
    # pyarrow's decimal kernels convert every value and report the LAST failure (each failing
    # value overwrites the status), so errors are collected and the last one raised
    from .from_python import array_data_from_python
    errors: list[str] = []
    fast = _decimal_vectorised(d, src, target, safe)
    if fast is not None:
        return fast
    if isinstance(src, DecimalType):
        scale = src.scale
        if target.name in ("float", "double"):
            fast = _decimal_to_real_vectorised(d, scale, target)
            if fast is not None:
                return fast
        u = unscaled(d)
        if isinstance(target, DecimalType):
            out = _rescale_decimal(u, scale, target, safe, errors, target.byte_width == 4)
        elif getattr(target, "is_integer", False):
            out = _decimal_to_int(u, src, target, safe, errors)
            _raise_last(errors)
            return array_data_from_python(out, target)
        elif target.name in ("float", "double"):
            return _decimal_to_real(d, u, scale, target)
        elif isinstance(target, BinaryType) and target.is_utf8:
            return array_data_from_python([None if v is None else decimal_text(v, scale)
                                           for v in u], target)
        else:
            raise unsupported(src, target)
    else:
        p, s = target.precision, target.scale
        if not (getattr(src, "is_integer", False) or src.name in ("float", "double")
                or isinstance(src, BinaryType)):
            raise unsupported(src, target)
        values = to_pylist(d)
        if getattr(src, "is_integer", False):
            need = _INT_DIGITS[src.bit_width] + (1 if src.bit_width == 64 and not src.is_signed
                                                 else 0) + s
            if s < 0:
                raise ArrowInvalid("Scale must be non-negative")
            if need > p:
                raise ArrowInvalid(f"Precision is not great enough for the result. It should "
                                   f"be at least {need}")
            out = [None if v is None else v * 10 ** s for v in values]
        elif src.name in ("float", "double"):
            out = [None if v is None else _real_to_decimal(v, src, target, safe, errors)
                   for v in values]
        elif isinstance(src, BinaryType):
            out = []
            for v in values:
                if v is None:
                    out.append(None)
                    continue
                text = v if isinstance(v, str) else v.decode("utf-8", "replace")
                parsed = parse_decimal(text)
                if text == "":
                    errors.append(f"Empty string cannot be converted to "
                                  f"{str(target).split('(')[0]}")
                    out.append(0)
                    continue
                if parsed is None:
                    errors.append(f"The string '{text}' is not a valid "
                                  f"{str(target).split('(')[0]} number")
                    out.append(0)
                    continue
                digits, scale = parsed
                out.append(_rescale_decimal([digits], scale, target, safe, errors)[0])
        else:
            raise unsupported(src, target)
    _raise_last(errors)
    return _decimal_data(out, target, d.null_count, validity_bitmap(d))


def _raise_last(errors: list[str]) -> None:
    if errors:
        raise ArrowInvalid(errors[-1])


def _decimal_to_int(u: Any, src: Any, target: Any, safe: bool, errors: list[str]) -> list[Any]:
    lo, hi = _int_range(target)
    scale = src.scale
    # Deliberately not pyarrow 26's behaviour: its safe check rejects every value when the target
    # is wider than the decimal's storage or unsigned and as wide (decimal32 to int64, uint32,
    # uint64; decimal64 to uint64), a bug that refuses valid data; we range-check each value
    # (docs/pyarrow-compat.md).
    out: list[Any] = []
    for v in u:
        if v is None:
            out.append(None)
            continue
        q = _trunc_div(v, _pow10(scale)) if scale >= 0 else v * _pow10(-scale)
        if safe:
            if (q * _pow10(scale) if scale >= 0 else _trunc_div(q, _pow10(-scale))) != v:
                errors.append("Rescaling Decimal value would cause data loss")
            elif not lo <= q <= hi:
                errors.append("Integer value out of bounds")
        out.append((q - lo) % (1 << target.bit_width) + lo)
    return out


def _decimal_to_real(d: ArrayData, u: Any, scale: Any, target: Any) -> ArrayData:
    """Decimals as floats with pyarrow's arithmetic (not always the correctly rounded quotient):
    an integer small enough to be exact in the target is multiplied by 10**-scale in the target's
    precision; a larger one is split into its whole part and its fraction, each converted so."""
    import numpy as np
    from .._core.buffer import py_buffer
    ftype = np.float32 if target.name == "float" else np.float64
    exact = 1 << (24 if ftype is np.float32 else 53)
    tenth = ftype(_pow10_real(-scale))
    if all(v is None or -exact <= v <= exact for v in u):
        values = np.array([v or 0 for v in u], dtype=np.int64).astype(ftype) * tenth
    else:
        values = np.array([_decimal_real(v or 0, scale, ftype, exact) for v in u], dtype=ftype)
    return ArrayData(target, d.length, 0, d.null_count, [validity_bitmap(d), py_buffer(values)])


def _decimal_to_real_vectorised(d: ArrayData, scale: int, target: Any) -> ArrayData | None:
    """_decimal_to_real as numpy arithmetic when every unscaled value is exact in the target."""
    import numpy as np
    from .._core.buffer import py_buffer
    u = _unscaled_int64(d)
    ftype = np.float32 if target.name == "float" else np.float64
    exact = 1 << (24 if ftype is np.float32 else 53)
    if u is None or (np.abs(u) > exact).any():
        return None
    with np.errstate(over="ignore", invalid="ignore"):    # a scale past the float's range
        values = u.astype(ftype) * ftype(_pow10_real(-scale))
    return ArrayData(target, d.length, 0, d.null_count, [validity_bitmap(d), py_buffer(values)])


def _decimal_real(v: int, scale: int, ftype: Any, exact: int) -> Any:
    def no_split(m: int, sc: int) -> Any:
        x = ftype(0)
        for k in range(3, -1, -1):              # 64-bit words, most significant first
            word = (m >> (64 * k)) & 0xFFFFFFFFFFFFFFFF
            if word:
                x = ftype(x + ftype(word) * ftype(2.0 ** (64 * k)))
        return ftype(x * ftype(_pow10_real(-sc)))
    sign = -1 if v < 0 else 1
    m = abs(v)
    if scale <= 0 or m <= exact:
        return sign * no_split(m, scale)
    whole, fraction = divmod(m, _pow10(scale))
    return sign * ftype(no_split(whole, 0) + no_split(fraction, scale))


# A decimal's scale comes from a schema, which may come from outside, and may be any int32.
# Unscaled values hold at most 76 digits, so a cast shifting them by more digits than this keeps
# nothing of them; 10 ** shift for a shift of billions would take hours (pyarrow 26 crashes).
_MAX_SCALE_SHIFT = 400


def _pow10(shift: int) -> int:
    """10 ** shift for a decimal cast's change of scale, refused beyond _MAX_SCALE_SHIFT."""
    if shift > _MAX_SCALE_SHIFT:
        raise ArrowInvalid(f"Rescaling Decimal by {shift} digits is out of range (a cast shifts "
                           f"a decimal's digits by at most {_MAX_SCALE_SHIFT})")
    return int(10 ** shift)


def _pow10_real(shift: int) -> float:
    """10.0 ** shift, infinity or 0.0 where a float cannot hold it (no OverflowError)."""
    if shift > 400:
        return float("inf")
    if shift < -400:
        return 0.0
    return 10.0 ** shift


def _trunc_div(a: int, b: int) -> int:
    q = abs(a) // b
    return q if a >= 0 else -q


def _rescale_decimal(u: list[Any], scale: int, target: Any, safe: bool, errors: list[str],
                     wrap_first: bool = True) -> list[Any]:
    """Unscaled integers at `scale` moved to the target's scale (checked when `safe`; else
    truncated and wrapped to the target's width, as pyarrow does: before the rescale for a
    decimal32 target, after it for wider ones)."""
    p, s = target.precision, target.scale
    limit = 10 ** p
    bits = 8 * target.byte_width
    out: list[Any] = []
    for v in u:
        if v is None:
            out.append(None)
            continue
        if not safe and wrap_first:
            v = _wrap(v, bits)
        if s >= scale:
            r = v * _pow10(s - scale)
        else:
            r = _trunc_div(v, _pow10(scale - s))
            if safe and r * _pow10(scale - s) != v:
                errors.append("Rescaling Decimal value would cause data loss")
                out.append(0)
                continue
        if safe and not -limit < r < limit:
            errors.append(f"Decimal value does not fit in precision {p}")
        out.append(r if safe or wrap_first else _wrap(r, bits))
    return out


def _wrap(v: int, bits: int) -> int:
    """`v` in two's complement of `bits` bits (the low bits, as a narrowing store keeps)."""
    half = 1 << (bits - 1)
    return (v + half) % (1 << bits) - half


def _real_to_decimal(v: float, src: Any, target: Any, safe: bool, errors: list[str]) -> Any:
    """A float as pyarrow converts it: decimal32 scales in double precision and rounds to even;
    wider decimals take the exact product rounded, after checking the float against
    10**(precision - scale) in the source's precision. Overflow is an error when safe, else 0."""
    import math
    from fractions import Fraction
    import numpy as np
    p, s = target.precision, target.scale
    if not math.isfinite(v):
        if safe:
            errors.append(f"Cannot convert {v} to Decimal128")
        return 0
    if target.byte_width == 4 or s < 0:
        x = float(np.rint(v * _pow10_real(s)))
        ok = abs(x) < 10.0 ** p
        r = int(x) if ok else 0
    else:
        ftype = np.float32 if src.name == "float" else np.float64
        with np.errstate(over="ignore"):    # a limit beyond float32's range is infinity
            ok = abs(v) <= float(ftype(_pow10_real(p - s)))
        r = round(Fraction(v) * _pow10(s)) if ok else 0
        ok = ok and abs(r) < 10 ** p
    if not ok:
        if safe:
            errors.append(f"Cannot convert {v:f} to {_decimal_label(target)}(precision = {p}, "
                          f"scale = {s}): overflow")
        return 0
    return r


def _decimal_label(t: Any) -> str:
    return "Decimal" + str(t).split("(")[0][len("decimal"):]


# -- half floats --------------------------------------------------------------------------------

def _half(d: ArrayData, src: Any, target: Any, safe: bool) -> ArrayData | None:
    """float16 to and from other numbers through float32, vectorised with numpy (pyarrow checks
    only float16 to integer casts for truncation, as it does float32's)."""
    import numpy as np
    from .._core.buffer import py_buffer
    if src.name == "halffloat":
        if target.name not in _CODES:
            if isinstance(target, BinaryType) and target.is_utf8:
                from .from_python import array_data_from_python
                values: Any = to_pylist(d)
                return array_data_from_python(
                    [None if v is None else format_float(v) for v in values], target)
            return None
        raw: Any = values_bytes(d, 2)
        wide: Any = np.frombuffer(raw, dtype=np.float16).astype(np.float32)
        as_f32 = ArrayData(float32(), d.length, 0, d.null_count,
                           [validity_bitmap(d), py_buffer(wide)])
        try:
            return cast_data(as_f32, target, safe)
        except ArrowInvalid as e:
            if "truncated" not in str(e):
                raise
            # pyarrow names the value by its raw 16 bits
            m = re.match(r"Float value (\S+) was truncated", str(e))
            bits = np.frombuffer(raw, dtype=np.uint16)
            valid = valid_flags(d)
            for i in range(d.length):
                if (valid is None or valid[i]) and m and f"{float(wide[i]):f}" == m.group(1):
                    raise ArrowInvalid(f"Float value {int(bits[i])} was truncated converting "
                                       f"to {target}") from None
            raise
    if src.name not in _CODES:
        return None
    # integers are range-checked as for float32 (pyarrow's message names float32's range)
    via = src if src.name == "double" else (float64() if getattr(src, "bit_width", 0) == 64
                                            and src.is_integer else float32())
    wide = cast_data(d, via, safe and not getattr(src, "is_float", False))
    raw = memoryview(wide.buffers[1])[wide.offset * wide.type.byte_width:]
    values = np.frombuffer(raw, dtype=np.float32 if via.name == "float" else np.float64)
    with np.errstate(over="ignore"):        # beyond 65504 is infinity, as in pyarrow
        half = values[:d.length].astype(np.float16)
    return ArrayData(target, d.length, 0, d.null_count, [validity_bitmap(d), py_buffer(half)])

