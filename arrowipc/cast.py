"""Casts between types, with pyarrow's safe-cast rules: a safe cast raises ArrowInvalid where
pyarrow's would (an integer out of range, a float with a fraction, a timestamp losing precision,
bytes that are not UTF-8, text that does not parse); `safe=False` lets values wrap or truncate.

Numeric and temporal conversions run in the Cython kernels (arrowipc/_core/select_kernels.pyx);
relabelling casts (int64 to timestamp, string to binary, a time zone change) are zero-copy;
nested types cast their children; dictionaries decode through take. Conversions between text and
numbers go through Python values (they are per-value parsing and formatting either way).
Unsupported pairs raise ArrowNotImplementedError as pyarrow does.
"""
from __future__ import annotations

import re

from ._core.arraydata import ArrayData
from ._core import select_kernels as _k
from .errors import ArrowInvalid, ArrowNotImplementedError
from .types import (BinaryType, DictionaryType, DurationType, ExtensionType,
                    FixedSizeListType, Kind, LargeListType, ListType, StructType, Time32Type,
                    Time64Type, TimestampType, ensure_type, int32, int64)

_CODES = _k.NUMERIC_CODES
_UNITS_PER_SECOND = {"s": 1, "ms": 1000, "us": 1_000_000, "ns": 1_000_000_000}
_MS_PER_DAY = 86_400_000


def _unit(t) -> str | None:
    """The time unit of a temporal type counted in units (dates count days or ms)."""
    if isinstance(t, (TimestampType, DurationType, Time32Type, Time64Type)):
        return t.unit
    if t.name == "date64[ms]":
        return "ms"
    return None


def _width(t) -> int:
    return t.byte_width


def _validity(d: ArrayData):
    from ._core.bitmap import bitmap_view
    from .array import null_count_of
    if null_count_of(d) == 0 or not d.buffers or d.buffers[0] is None:
        return None
    return bitmap_view(d.buffers[0], d.offset, d.length)


def _value(d: ArrayData, i: int):
    from .array import make_array
    return make_array(d).slice(i, 1).to_pylist()[0]


def _relabel(d: ArrayData, t) -> ArrayData:
    return ArrayData(t, d.length, d.offset, d.null_count, d.buffers, d.children, d.dictionary)


def cast_data(d: ArrayData, target, safe: bool = True) -> ArrayData:
    """`d` converted to type `target` (see the module docstring for the rules)."""
    target = ensure_type(target)
    src = d.type
    if src == target:
        return d
    if isinstance(src, ExtensionType):
        return cast_data(_relabel(d, src.storage_type), target, safe)
    if isinstance(target, ExtensionType):
        return _relabel(cast_data(d, target.storage_type, safe), target)
    n = d.length
    if src.kind == Kind.NULL:
        from .from_python import array_data_from_python
        return array_data_from_python([None] * n, target)
    if isinstance(src, DictionaryType):
        if isinstance(target, DictionaryType):
            idx = cast_data(ArrayData(src.index_type, n, d.offset, d.null_count, d.buffers),
                            target.index_type, safe)
            dictionary = cast_data(d.dictionary, target.value_type, safe)
            return ArrayData(target, idx.length, idx.offset, idx.null_count, idx.buffers, [],
                             dictionary)
        from .array import make_array
        decoded = make_array(d.dictionary).take(make_array(
            ArrayData(src.index_type, n, d.offset, d.null_count, d.buffers))).data
        return cast_data(decoded, target, safe)
    if isinstance(target, DictionaryType):
        return _dictionary_encode(cast_data(d, target.value_type, safe), target)
    sname, tname = src.name, target.name
    if sname in _CODES and tname in _CODES:
        return _numeric(d, src, target, safe)
    if src.kind == Kind.BOOL and tname in _CODES:
        return ArrayData(target, n, 0, d.null_count if d.null_count >= 0 else -1,
                         [_validity(d), _k.bits_to_numeric(d, _CODES[tname])])
    if sname in _CODES and target.kind == Kind.BOOL:
        return ArrayData(target, n, 0, d.null_count, [_validity(d),
                                                       _k.nonzero_bits(d, _CODES[sname])])
    temporal = _temporal(d, src, target, safe)
    if temporal is not None:
        return temporal
    if isinstance(src, BinaryType) and isinstance(target, BinaryType):
        return _binary(d, src, target)
    if isinstance(target, BinaryType) and target.is_utf8 and target.kind != Kind.VIEW:
        return _to_text(d, src, target)
    if isinstance(src, BinaryType) and src.is_utf8:
        return _from_text(d, src, target)
    if _is_list(src) and _is_list(target):
        return _list(d, src, target, safe)
    if isinstance(src, StructType) and isinstance(target, StructType):
        return _struct(d, src, target, safe)
    raise unsupported(src, target)


def unsupported(src, target) -> ArrowNotImplementedError:
    """pyarrow's error for a pair of types no cast function handles."""
    name = re.split(r"[\[<(]", str(target))[0]
    return ArrowNotImplementedError(f"Unsupported cast from {src} to {name} using function "
                                    f"cast_{name}")


def _lossless(src, target) -> bool:
    """Every value of `src` converts exactly (or pyarrow does not check: float to float)."""
    if getattr(src, "is_float", False):
        return getattr(target, "is_float", False)
    if getattr(target, "is_float", False):
        return src.bit_width < (24 if target.name == "float" else 53)
    (slo, shi), (tlo, thi) = _int_range(src), _int_range(target)
    return tlo <= slo and shi <= thi


def _numeric(d, src, target, safe) -> ArrayData:
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
    return ArrayData(target, d.length, 0, d.null_count, [_validity(d), values])


def _int_range(t) -> tuple:
    bits = t.bit_width
    if t.is_signed:
        return -(1 << (bits - 1)), (1 << (bits - 1)) - 1
    return 0, (1 << bits) - 1


def _storage_int(t):
    """The integer type a temporal type is stored as (None for non-temporal types)."""
    if isinstance(t, (TimestampType, DurationType, Time64Type)) or t.name == "date64[ms]":
        return int64()
    if isinstance(t, Time32Type) or t.name == "date32[day]":
        return int32()
    return None


def _temporal(d, src, target, safe):
    s_int, t_int = _storage_int(src), _storage_int(target)
    if s_int is None and t_int is None:
        return None
    if s_int is None:
        if src != t_int:
            return None
        # an integer of the storage type counts the target's units: relabel (zero-copy)
        return _relabel(d, target)
    if t_int is None:
        if target != s_int:
            return None
        return _relabel(d, target)
    sdate, tdate = src.name.startswith("date"), target.name.startswith("date")
    same_family = (
        (isinstance(src, TimestampType) and isinstance(target, TimestampType))
        or (isinstance(src, DurationType) and isinstance(target, DurationType))
        or (isinstance(src, (Time32Type, Time64Type)) and isinstance(target, (Time32Type, Time64Type)))
        or (sdate and tdate)
        or (isinstance(src, TimestampType) and tdate)
        or (sdate and isinstance(target, TimestampType)))
    if isinstance(src, TimestampType) and isinstance(target, (Time32Type, Time64Type)):
        # the time of day: the value modulo a day, then the target's unit
        su, tu = _UNITS_PER_SECOND[src.unit], _UNITS_PER_SECOND[target.unit]
        of_day = ArrayData(int64(), d.length, 0, 0,
                           [None, _k.rescale(d, 8, 8, 1, 1, False, su * 86400)[0]])
        mul, div = (tu // su, 1) if tu >= su else (1, su // tu)
        values, bad, _ = _k.rescale(of_day, 8, _width(target), mul, div, safe)
        if bad >= 0:
            raise ArrowInvalid(f"Cast would lose data: {_value(of_day, bad)}")
        return ArrayData(target, d.length, 0, d.null_count, [_validity(d), values])
    if not same_family:
        return None
    su = _UNITS_PER_SECOND[_unit(src)] if _unit(src) else None
    tu = _UNITS_PER_SECOND[_unit(target)] if _unit(target) else None
    exact = safe
    if src.name == "date32[day]":
        mul, div = tu * 86400, 1                         # days -> target units
    elif target.name == "date32[day]":
        # to days: a timestamp truncates to its date; a date64 must be whole days (safe)
        mul, div, exact = 1, su * 86400, safe and src.name == "date64[ms]"
    elif target.name == "date64[ms]" and isinstance(src, TimestampType):
        # timestamp -> date64: whole days in ms (through date32)
        days = _temporal(d, src, _date32(), safe)
        return _temporal(days, _date32(), target, safe)
    else:
        mul, div = (tu // su, 1) if tu >= su else (1, su // tu)
    values, bad, why = _k.rescale(d, _width(src), _width(target), mul, div, exact)
    if bad >= 0:
        v = make_int(d, bad)
        if why == 1:
            raise ArrowInvalid(f"Casting from {src} to {target} would lose data: {v}")
        raise ArrowInvalid(f"Casting from {src} to {target} would result in out of bounds "
                           f"{_family(target)}: {v}")
    return ArrayData(target, d.length, 0, d.null_count, [_validity(d), values])


def _date32():
    from .types import date32
    return date32()


def _family(t) -> str:
    return "timestamp" if isinstance(t, TimestampType) else t.name.split("[")[0]


def make_int(d, i) -> int:
    return _value(_relabel(d, _storage_int(d.type)), i)


def _binary(d, src, target) -> ArrayData:
    from .array import make_array
    if target.kind == Kind.VIEW or src.kind == Kind.VIEW:
        values = make_array(d).to_pylist()
        if target.is_utf8 and not src.is_utf8:
            values = [_decode(v) for v in values]
        elif src.is_utf8 and not target.is_utf8:
            values = [None if v is None else v.encode() for v in values]
        from .from_python import array_data_from_python
        return array_data_from_python(values, target)
    if target.is_utf8 and not src.is_utf8:
        _check_utf8(d)
    if src.kind == target.kind:
        return _relabel(d, target)
    fw, tw = (4, 8) if src.kind == Kind.BINARY else (8, 4)
    widened = _k.widen_offsets(d, fw, tw)
    if widened is None:
        raise ArrowInvalid(f"Failed casting from {src} to {target}: input array too large")
    offsets, first = widened
    data = d.buffers[2].slice(first) if d.buffers[2] is not None else None
    return ArrayData(target, d.length, 0, d.null_count, [_validity(d), offsets, data])


def _decode(v):
    if v is None:
        return None
    try:
        return v.decode()
    except UnicodeDecodeError:
        raise ArrowInvalid("Invalid UTF8 payload") from None


def _check_utf8(d) -> None:
    from .validate import validate_array
    try:
        validate_array(_relabel(d, _string_like(d.type)), full=True)
    except ArrowInvalid:
        raise ArrowInvalid("Invalid UTF8 payload") from None


def _string_like(t):
    from .types import large_string, string
    return string() if t.kind == Kind.BINARY else large_string()


def _dictionary_encode(d: ArrayData, target) -> ArrayData:
    from .array import array, make_array
    from .selection import _hash_key
    values = make_array(d).to_pylist()
    position: dict = {}
    firsts, codes = [], []
    for i, v in enumerate(values):
        if v is None:
            codes.append(None)
            continue
        key = _hash_key(v)
        j = position.get(key)
        if j is None:
            j = position[key] = len(firsts)
            firsts.append(i)
        codes.append(j)
    idx = array(codes, target.index_type).data
    dictionary = make_array(d).take(array(firsts, int64())).data
    return ArrayData(target, idx.length, idx.offset, idx.null_count, idx.buffers, [], dictionary)


# -- text ---------------------------------------------------------------------------------------

_INT_TEXT = re.compile(r"-?[0-9]+\Z")
_FLOAT_TEXT = re.compile(r"[-+]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][-+]?[0-9]+)?\Z|"
                         r"[-+]?(nan|inf|infinity)\Z", re.IGNORECASE)


def _to_text(d, src, target) -> ArrayData:
    from .array import make_array
    from .from_python import array_data_from_python
    values = make_array(d).to_pylist()
    if src.kind == Kind.BOOL:
        out = [None if v is None else ("true" if v else "false") for v in values]
    elif getattr(src, "is_integer", False):
        out = [None if v is None else str(v) for v in values]
    elif src.name == "double":
        out = [None if v is None else format_float(v) for v in values]
    elif src.name == "float":
        out = [None if v is None else format_float(v, _float32_repr(v)) for v in values]
    elif src.name == "date32[day]":
        out = [None if v is None else v.isoformat() for v in values]
    else:
        raise unsupported(src, target)
    return array_data_from_python(out, target)


def _float32_repr(v: float) -> str:
    """The shortest digits that read back as the same float32."""
    import struct
    for p in range(1, 10):
        r = f"{v:.{p}g}"
        if struct.unpack("f", struct.pack("f", float(r)))[0] == v:
            return repr(float(r))
    return repr(v)


def format_float(v: float, shortest: str | None = None) -> str:
    """A double as pyarrow prints it: the shortest digits that round-trip, in fixed notation for
    decimal exponents -6 to 9 and in exponent form (1e+10, 1.5e-7) outside."""
    if v != v:
        return "nan"
    if v in (float("inf"), float("-inf")):
        return "inf" if v > 0 else "-inf"
    r = repr(v) if shortest is None else shortest
    sign = "-" if r.startswith("-") else ""
    mant, _, exp = r.lstrip("-").partition("e")
    whole, _, frac = mant.partition(".")
    raw = whole + frac
    digits = raw.lstrip("0")
    # the decimal point sits after `point` digits of `digits`
    point = len(whole) + (int(exp) if exp else 0) - (len(raw) - len(digits))
    digits = digits.rstrip("0")
    if not digits:
        return sign + "0"
    if -5 <= point <= 0:
        return sign + "0." + "0" * (-point) + digits
    if 0 < point <= 10:
        if point >= len(digits):
            return sign + digits + "0" * (point - len(digits))
        return sign + digits[:point] + "." + digits[point:]
    return sign + _exp_form(digits, point)


def _exp_form(digits: str, point: int) -> str:
    e = point - 1
    m = digits[0] + ("." + digits[1:] if len(digits) > 1 else "")
    return f"{m}e{'+' if e >= 0 else '-'}{abs(e)}"


def _from_text(d, src, target) -> ArrayData:
    from .array import make_array
    from .from_python import array_data_from_python
    values = make_array(d).to_pylist()
    out = []
    if getattr(target, "is_integer", False):
        lo, hi = _int_range(target)
        for v in values:
            if v is None:
                out.append(None)
                continue
            if not _INT_TEXT.match(v) or not lo <= int(v) <= hi:
                raise ArrowInvalid(f"Failed to parse string: '{v}' as a scalar of type {target}")
            out.append(int(v))
    elif getattr(target, "is_float", False):
        for v in values:
            if v is None:
                out.append(None)
                continue
            if not _FLOAT_TEXT.match(v):
                raise ArrowInvalid(f"Failed to parse string: '{v}' as a scalar of type {target}")
            out.append(float(v))
    elif target.kind == Kind.BOOL:
        truth = {"true": True, "1": True, "false": False, "0": False}
        for v in values:
            if v is None:
                out.append(None)
                continue
            b = truth.get(v.lower())
            if b is None:
                raise ArrowInvalid(f"Failed to parse value: {v}")
            out.append(b)
    elif target.name == "date32[day]":
        import datetime
        for v in values:
            if v is None:
                out.append(None)
                continue
            try:
                out.append(datetime.date.fromisoformat(v) if len(v) == 10 else None)
            except ValueError:
                out.append(None)
            if out[-1] is None:
                raise ArrowInvalid(f"Failed to parse string: '{v}' as a scalar of type {target}")
    else:
        raise unsupported(src, target)
    return array_data_from_python(out, target)


# -- nested -------------------------------------------------------------------------------------

def _is_list(t) -> bool:
    return isinstance(t, (ListType, LargeListType, FixedSizeListType))


def _list(d, src, target, safe) -> ArrayData:
    from .array import make_array
    arr = make_array(d)
    if isinstance(target, FixedSizeListType) != isinstance(src, FixedSizeListType):
        if isinstance(target, FixedSizeListType):
            sizes = {len(v) for v in arr.to_pylist() if v is not None}
            if sizes - {target.list_size}:
                raise ArrowInvalid("ListType can only be casted to FixedSizeListType if the "
                                   "lists are all the expected size.")
        from .from_python import array_data_from_python
        values = cast_data(arr.flatten().data, target.value_type, safe)
        child = make_array(values).to_pylist()
        out, pos = [], 0
        for v in arr.to_pylist():
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
        child = cast_data(arr.flatten().data, target.value_type, safe)
        return ArrayData(target, d.length, 0, d.null_count, [_validity(d)], [child])
    fw = 4 if isinstance(src, ListType) else 8
    tw = 4 if isinstance(target, ListType) else 8
    widened = _k.widen_offsets(d, fw, tw)
    if widened is None:
        raise ArrowInvalid(f"Failed casting from {src} to {target}: input array too large")
    offsets, first = widened
    child = make_array(d.children[0])
    last = int(memoryview(offsets).cast("i" if tw == 4 else "q")[d.length]) if d.length else 0
    values = cast_data(child.slice(first, last).data, target.value_type, safe)
    return ArrayData(target, d.length, 0, d.null_count, [_validity(d), offsets], [values])


def _struct(d, src, target, safe) -> ArrayData:
    from .array import make_array
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
        child = make_array(d.children[k]).slice(d.offset, d.length).data
        children.append(cast_data(child, f.type, safe))
        k += 1
    return ArrayData(target, d.length, 0, d.null_count, [_validity(d)], children)
