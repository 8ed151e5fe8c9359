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
from ._core import cast_kernels as _k
from .errors import ArrowInvalid, ArrowNotImplementedError
from .types import (BinaryType, DecimalType, DictionaryType, DurationType, ExtensionType,
                    FixedSizeListType, Kind, LargeListType, LargeListViewType, ListType,
                    ListViewType, RunEndEncodedType, StructType, Time32Type, Time64Type,
                    TimestampType, UnionType, ensure_type, float32, float64, int32, int64)

TYPE_CHECKING = False               # typing itself is not imported at run time
if TYPE_CHECKING:
    from typing import Any

    from .types import DataType

__all__ = ["cast_data", "format_float", "make_int", "unsupported"]

_CODES = _k.NUMERIC_CODES
_UNITS_PER_SECOND = {"s": 1, "ms": 1000, "us": 1_000_000, "ns": 1_000_000_000}
_MS_PER_DAY = 86_400_000


def _unit(t: Any) -> str | None:
    """The time unit of a temporal type counted in units (dates count days or ms)."""
    if isinstance(t, (TimestampType, DurationType, Time32Type, Time64Type)):
        return t.unit
    if t.name == "date64[ms]":
        return "ms"
    return None


def _width(t: DataType) -> int:
    return t.byte_width


def _validity(d: ArrayData) -> Any:
    from ._core.bitmap import bitmap_view
    from .validate import null_count_of
    if null_count_of(d) == 0 or not d.buffers or d.buffers[0] is None:
        return None
    return bitmap_view(d.buffers[0], d.offset, d.length)


def _value(d: ArrayData, i: int) -> Any:
    from ._upcalls import make_array
    return make_array(d).slice(i, 1).to_pylist()[0]


def _relabel(d: ArrayData, t: Any) -> ArrayData:
    return ArrayData(t, d.length, d.offset, d.null_count, d.buffers, d.children, d.dictionary)


def cast_data(d: ArrayData, target: Any, safe: bool = True) -> ArrayData:
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
        assert d.dictionary is not None        # a dictionary array carries its dictionary
        if isinstance(target, DictionaryType):
            idx = cast_data(ArrayData(src.index_type, n, d.offset, d.null_count, d.buffers),
                            target.index_type, safe)
            dictionary = cast_data(d.dictionary, target.value_type, safe)
            return ArrayData(target, idx.length, idx.offset, idx.null_count, idx.buffers, [],
                             dictionary)
        from ._upcalls import make_array
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
    return ArrayData(target, d.length, 0, d.null_count, [_validity(d), values])


def _int_range(t: Any) -> tuple[int, int]:
    bits = t.bit_width
    if t.is_signed:
        return -(1 << (bits - 1)), (1 << (bits - 1)) - 1
    return 0, (1 << bits) - 1


def _storage_int(t: Any) -> Any:
    """The integer type a temporal type is stored as (None for non-temporal types)."""
    if isinstance(t, (TimestampType, DurationType, Time64Type)) or t.name == "date64[ms]":
        return int64()
    if isinstance(t, Time32Type) or t.name == "date32[day]":
        return int32()
    return None


def _temporal(d: ArrayData, src: Any, target: Any, safe: bool) -> ArrayData | None:
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
        su, tu = _UNITS_PER_SECOND[src.unit], _UNITS_PER_SECOND[target.unit]
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
            flags = _valid_flags(d)
            if flags is not None:
                lost &= flags
            rows = np.flatnonzero(lost)
            last = int(rows[-1]) if len(rows) else bad
            raise ArrowInvalid(f"Cast would lose data: {int(ticks[last])}")
        return ArrayData(target, d.length, 0, d.null_count, [_validity(d), values])
    if not same_family:
        return None
    # same family: both have a unit (mypy cannot see _unit's result checked)
    su = _UNITS_PER_SECOND[_unit(src)] if _unit(src) else None  # type: ignore[index,assignment]
    tu = (_UNITS_PER_SECOND[_unit(target)]  # type: ignore[index,assignment]
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
    return ArrayData(target, d.length, 0, d.null_count, [_validity(d), values])


def _naive(t: Any) -> Any:
    from .types import timestamp
    return timestamp(t.unit)


def _wall_clock(d: ArrayData, src: Any) -> ArrayData:
    """A zoned timestamp array's local times, as a naive timestamp array."""
    import numpy as np
    from ._core.buffer import py_buffer
    ints = np.frombuffer(_values_bytes(d, 8), dtype=np.int64)
    local, _ = _local(ints.astype(f"datetime64[{src.unit}]"), ints, src.unit, src.tz)
    values = local.astype(np.int64)
    return ArrayData(_naive(src), d.length, 0, d.null_count, [_validity(d), py_buffer(values)])


def _date32() -> Any:
    from .types import date32
    return date32()


def _family(t: Any) -> str:
    return "timestamp" if isinstance(t, TimestampType) else t.name.split("[")[0]


def make_int(d: ArrayData, i: Any) -> int:
    """Value i of temporal data `d` (date, time, timestamp, duration) as its stored integer."""
    value: int = _value(_relabel(d, _storage_int(d.type)), i)
    return value


def _binary(d: ArrayData, src: Any, target: Any, safe: bool = True) -> ArrayData:
    from ._upcalls import make_array
    if target.kind == Kind.VIEW or src.kind == Kind.VIEW:
        values = make_array(d).to_pylist()
        from .from_python import array_data_from_python
        if target.is_utf8 and not src.is_utf8 and not safe:
            # unchecked: the bytes as they are, relabelled
            from .types import binary_view
            return _relabel(array_data_from_python(values, binary_view()), target)
        if target.is_utf8 and not src.is_utf8:
            values = [_decode(v) for v in values]
        elif src.is_utf8 and not target.is_utf8:
            values = [None if v is None else v.encode() for v in values]
        from .from_python import array_data_from_python
        return array_data_from_python(values, target)
    if target.is_utf8 and not src.is_utf8 and safe:
        _check_utf8(d)                      # unchecked, pyarrow relabels the bytes as they are
    if src.kind == target.kind:
        return _relabel(d, target)
    fw, tw = (4, 8) if src.kind == Kind.BINARY else (8, 4)
    widened = _k.widen_offsets(d, fw, tw)
    if widened is None:
        raise ArrowInvalid(f"Failed casting from {src} to {target}: input array too large")
    offsets, first = widened
    data = d.buffers[2].slice(first) if d.buffers[2] is not None else None
    return ArrayData(target, d.length, 0, d.null_count, [_validity(d), offsets, data])


def _decode(v: Any) -> Any:
    if v is None:
        return None
    try:
        return v.decode()
    except UnicodeDecodeError:
        raise ArrowInvalid("Invalid UTF8 payload") from None


def _check_utf8(d: ArrayData) -> None:
    from .validate import validate_array
    try:
        validate_array(_relabel(d, _string_like(d.type)), full=True)
    except ArrowInvalid:
        raise ArrowInvalid("Invalid UTF8 payload") from None


def _string_like(t: Any) -> Any:
    from .types import large_string, string
    return string() if t.kind == Kind.BINARY else large_string()


def _dictionary_encode(d: ArrayData, target: Any) -> ArrayData:
    from ._upcalls import array, make_array
    from .selection import _hash_key
    values = make_array(d).to_pylist()
    position: dict[Any, int] = {}
    firsts: list[int] = []
    codes: list[int | None] = []
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


def _to_text(d: ArrayData, src: Any, target: Any) -> ArrayData:
    from ._upcalls import make_array
    from .from_python import array_data_from_python
    if _storage_int(src) is not None:
        fast = _temporal_text_fixed(d, src, target)
        if fast is not None:
            return fast
        return array_data_from_python(_temporal_text(d, src), target)
    if src.kind not in (Kind.BOOL, Kind.FIXED) or isinstance(src, DecimalType):
        raise unsupported(src, target)
    values = make_array(d).to_pylist()
    if src.kind == Kind.BOOL:
        out = [None if v is None else ("true" if v else "false") for v in values]
    elif getattr(src, "is_integer", False):
        out = [None if v is None else str(v) for v in values]
    elif src.name == "double":
        out = [None if v is None else format_float(v) for v in values]
    elif src.name == "float":
        out = [None if v is None else format_float(v, _float32_repr(v)) for v in values]
    else:
        raise unsupported(src, target)
    return array_data_from_python(out, target)


_DIGITS = {"s": 0, "ms": 3, "us": 6, "ns": 9}


def _temporal_text(d: ArrayData, src: Any) -> list[Any]:
    """Dates, times, timestamps and durations as pyarrow prints them: ISO dates, times with as
    many fraction digits as the unit has, timestamps as `date time`, followed by the UTC offset
    (+HHMM, or Z for the "UTC" zone) when they have a time zone; a value outside the years
    -32767 to 32767 (or a time outside the day) prints as `<value out of range: v>`."""
    import numpy as np
    width = 4 if _storage_int(src) == int32() else 8
    ints = np.frombuffer(_values_bytes(d, width), dtype=np.int32 if width == 4
                         else np.int64).astype(np.int64)
    valid = _valid_flags(d)
    text: list[Any]
    if isinstance(src, DurationType):
        text = ints.astype(str).tolist()
    elif isinstance(src, (Time32Type, Time64Type)):
        per_day = 86400 * _UNITS_PER_SECOND[src.unit]
        clock = np.datetime_as_string(  # type: ignore[call-overload]  # a datetime64 array
            ints.astype(f"datetime64[{src.unit}]"), unit=src.unit)
        text = [c[11:] if 0 <= v < per_day else f"<value out of range: {v}>"
                for c, v in zip(clock.tolist(), ints.tolist())]
    else:
        unit = src.unit if isinstance(src, TimestampType) else ("ms" if src.name == "date64[ms]"
                                                               else "D")
        stamps = ints.astype(f"datetime64[{unit}]")
        tz = getattr(src, "tz", None)
        suffix = None
        if tz:
            stamps, suffix = _local(stamps, ints, unit, tz)
        years = stamps.astype("datetime64[Y]").astype(np.int64) + 1970
        in_range = ((years >= -32767) & (years <= 32767)).tolist()
        if isinstance(src, TimestampType):
            stamp_text = np.datetime_as_string(  # type: ignore[call-overload]  # datetime64
                stamps, unit=unit).tolist()
            text = [t.replace("T", " ") for t in stamp_text]
        else:
            text = np.datetime_as_string(stamps.astype("datetime64[D]"), unit="D").tolist()
        if suffix is not None:
            text = [t + z for t, z in zip(text, suffix)]
        text = [t if ok else f"<value out of range: {v}>"
                for t, ok, v in zip(text, in_range, ints.tolist())]
    if valid is not None:
        text = [t if ok else None for t, ok in zip(text, valid.tolist())]
    return text


def _temporal_text_fixed(d: ArrayData, src: Any, target: Any) -> ArrayData | None:
    """Dates, times and timestamps (naive, UTC or a fixed offset) in the years 1000 to 9999:
    every text has one length, so the digits are written column by column into a byte matrix
    with numpy and the offsets are multiples of the row; None where the per-row path is needed
    (durations, named zones, other years, times outside the day, string_view)."""
    import numpy as np
    from ._core.buffer import py_buffer
    if target.kind == Kind.VIEW or isinstance(src, DurationType) or d.length == 0:
        return None
    tz = getattr(src, "tz", None)
    m = re.fullmatch(r"([+-])(\d\d):?(\d\d)", tz) if tz and tz != "UTC" else None
    if tz and tz != "UTC" and m is None:
        return None
    n = d.length
    width = 4 if _storage_int(src) == int32() else 8
    ints = np.frombuffer(_values_bytes(d, width), dtype=np.int32 if width == 4
                         else np.int64).astype(np.int64)
    flags = _valid_flags(d)
    if flags is not None:
        ints = np.where(flags, ints, 0)         # the rows under nulls print as the epoch
    unit = getattr(src, "unit", None)
    per_second = _UNITS_PER_SECOND[unit] if unit else 1
    fraction_digits = _DIGITS[unit] if unit else 0
    clock = not src.name.startswith("date")
    if isinstance(src, (Time32Type, Time64Type)):
        if ((ints < 0) | (ints >= 86400 * per_second)).any():
            return None
        days, of_day = None, ints
    else:
        if src.name == "date32[day]":
            ticks = ints * 86400
        elif src.name == "date64[ms]":
            ticks, per_second = ints, 1000          # milliseconds; only the day prints
        else:
            ticks = ints
        if m is not None:
            minutes = (int(m.group(2)) * 60 + int(m.group(3))) * (1 if m.group(1) == "+" else -1)
            ticks = ticks + minutes * 60 * per_second
        days = ticks // (86400 * per_second)
        of_day = ticks - days * (86400 * per_second)
    suffix = "" if not tz else ("Z" if m is None else
                                f"{m.group(1)}{m.group(2)}{m.group(3)}")
    columns: list[Any] = []                     # (text, or (values, digit count))
    if days is not None:
        year, month, day = _civil_from_days(days)
        if ((year < 1000) | (year > 9999)).any():
            return None
        columns += [(year, 4), "-", (month, 2), "-", (day, 2)]
        if clock:
            columns.append(" ")
    if clock:
        seconds = of_day // per_second
        columns += [(seconds // 3600, 2), ":", (seconds // 60 % 60, 2), ":", (seconds % 60, 2)]
        if fraction_digits:
            columns += [".", (of_day % per_second, fraction_digits)]
    columns += list(suffix)
    size = sum(1 if isinstance(c, str) else c[1] for c in columns)
    if n * size >= (1 << 31):
        return None
    cells = np.empty((n, size), dtype=np.uint8)
    at = 0
    for c in columns:
        if isinstance(c, str):
            cells[:, at] = ord(c)
            at += 1
            continue
        values, count = c
        for k in range(count - 1, -1, -1):
            cells[:, at + k] = values % 10 + 48
            values = values // 10
        at += count
    owidth = np.int64 if target.kind == Kind.LARGE_BINARY else np.int32
    offsets = np.arange(n + 1, dtype=owidth) * size
    return ArrayData(target, n, 0, d.null_count,
                     [_validity(d), py_buffer(offsets), py_buffer(cells)])


def _civil_from_days(days: Any) -> Any:
    """(year, month, day) numpy arrays of the proleptic Gregorian dates `days` after 1970-01-01."""
    z = days + 719468
    era = z // 146097
    doe = z - era * 146097
    yoe = (doe - doe // 1460 + doe // 36524 - doe // 146096) // 365
    doy = doe - (365 * yoe + yoe // 4 - yoe // 100)
    mp = (5 * doy + 2) // 153
    day = doy - (153 * mp + 2) // 5 + 1
    month = mp + 3 - 12 * (mp >= 10)
    year = yoe + era * 400 + (month <= 2)
    return year, month, day


def _local(stamps: Any, ints: Any, unit: Any, tz: Any) -> Any:
    """Local wall-clock times of UTC instants and their offset suffixes."""
    import datetime
    import numpy as np
    if tz == "UTC":
        return stamps, ["Z"] * len(ints)
    m = re.fullmatch(r"([+-])(\d\d):?(\d\d)", tz)
    if m:
        minutes = (int(m.group(2)) * 60 + int(m.group(3))) * (1 if m.group(1) == "+" else -1)
        offsets = np.full(len(ints), minutes, dtype=np.int64)
    else:
        import zoneinfo
        zone = zoneinfo.ZoneInfo(tz)
        seconds = stamps.astype("datetime64[s]").astype(np.int64).tolist()
        epoch = datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc)
        offsets = np.array([_offset_minutes(zone, epoch, s) for s in seconds], dtype=np.int64)
    local = stamps + offsets.astype("timedelta64[m]").astype(f"timedelta64[{unit}]")
    suffix = [f"{'-' if o < 0 else '+'}{abs(o) // 60:02d}{abs(o) % 60:02d}"
              for o in offsets.tolist()]
    return local, suffix


def _offset_minutes(zone: Any, epoch: Any, seconds: int) -> int:
    import datetime
    try:
        when = epoch + datetime.timedelta(seconds=seconds)
    except OverflowError:
        return 0
    return int(zone.utcoffset(when.replace(tzinfo=None)).total_seconds() // 60)


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


def _from_text(d: ArrayData, src: Any, target: Any) -> ArrayData:
    # pyarrow's parsers run over every value and report the LAST one that fails
    from ._upcalls import make_array
    from .from_python import array_data_from_python
    temporal = target.name in ("date32[day]", "date64[ms]") or isinstance(target, TimestampType)
    if (temporal and (src.kind == Kind.VIEW or not src.is_utf8)) or (
            src.kind == Kind.VIEW and target.name == "halffloat"):
        raise unsupported(src, target)      # pyarrow parses these from string and large_string
    values = make_array(d).to_pylist()
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
            parsed, why = _parse_temporal(v, target)
            out.append(parsed)
            if parsed is None:
                errors.append(f"Failed to parse string: '{v}' as a scalar of type {target}{why}")
        _raise_last(errors)
        return _relabel(array_data_from_python(out, _storage_int(target)), target)
    else:
        raise unsupported(src, target)
    _raise_last(errors)
    return array_data_from_python(out, target)


_DATE_TEXT = r"(\d{4})-(\d\d)-(\d\d)"
_TIME_TEXT = r"[T ](\d\d)(?::(\d\d)(?::(\d\d)(?:\.(\d+))?)?)?"
_ZONE_TEXT = r"(Z|[+-]\d\d(?::?\d\d)?)"
_NAIVE_STAMP = re.compile(_DATE_TEXT + "(?:" + _TIME_TEXT + r")?\Z")
_ZONED_STAMP = re.compile(_DATE_TEXT + _TIME_TEXT + _ZONE_TEXT + r"\Z")
_NO_ZONE = (": expected a zone offset. If these timestamps are in local time, cast to timestamp "
            "without timezone, then call assume_timezone.")
_ZONE_NOT_EXPECTED = ": expected no zone offset."


def _parse_temporal(text: str, target: Any) -> Any:
    """(the value in the target's units or None, the reason pyarrow appends) for ISO 8601 text
    as pyarrow's safe cast reads it: `YYYY-MM-DD` for dates; for timestamps an optional time
    (`T` or a space, then HH, HH:MM or HH:MM:SS with at most as many fraction digits as the unit
    holds), ending with a zone offset (Z, +HH, +HHMM, +HH:MM) exactly when the type has a zone."""
    if not isinstance(target, TimestampType):
        m = re.fullmatch(_DATE_TEXT, text)
        days = _civil_days(*map(int, m.groups())) if m else None
        if days is None:
            return None, ""
        return (days if target.name == "date32[day]" else days * _MS_PER_DAY), ""
    zoned = bool(target.tz)
    m = (_ZONED_STAMP if zoned else _NAIVE_STAMP).match(text)
    if m is None or (zoned and not _zone_ok(m.group(8))):
        # an offset pyarrow reads where none is expected, or none where one must be
        shaped = re.fullmatch(_DATE_TEXT + _TIME_TEXT + _ZONE_TEXT, text)
        has_zone = bool(shaped) and _zone_ok(shaped.group(8))  # type: ignore[union-attr]
        if zoned:
            return None, "" if has_zone else _NO_ZONE
        return None, _ZONE_NOT_EXPECTED if has_zone else ""
    year, month, day, hour, minute, second, fraction = m.groups()[:7]
    per_second = _UNITS_PER_SECOND[target.unit]
    digits = len(str(per_second)) - 1
    days = _civil_days(int(year), int(month), int(day))
    if days is None or (fraction is not None and len(fraction) > digits):
        return None, ""
    hour, minute, second = int(hour or 0), int(minute or 0), int(second or 0)
    if hour > 23 or minute > 59 or second > 59:
        return None, ""
    seconds = days * 86400 + hour * 3600 + minute * 60 + second
    value = seconds * per_second + int((fraction or "").ljust(digits, "0") or 0)
    if zoned:
        value -= _zone_minutes(m.group(8)) * 60 * per_second
    if not -(1 << 63) <= value < (1 << 63):
        return None, ""
    return value, ""


def _civil_days(year: int, month: int, day: int) -> Any:
    """Days since 1970-01-01 of a proleptic Gregorian date (year 0 included), or None."""
    leap = year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)
    lengths = (31, 29 if leap else 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)
    if not (1 <= month <= 12 and 1 <= day <= lengths[month - 1]):
        return None
    y = year - (month <= 2)
    era = y // 400
    yoe = y - era * 400
    doy = (153 * (month + (-3 if month > 2 else 9)) + 2) // 5 + day - 1
    doe = yoe * 365 + yoe // 4 - yoe // 100 + doy
    return era * 146097 + doe - 719468


def _zone_ok(zone: str) -> bool:
    if zone == "Z":
        return True
    digits = zone[1:].replace(":", "")
    return int(digits[:2]) < 24 and (len(digits) == 2 or int(digits[2:]) < 60)


def _zone_minutes(zone: str) -> int:
    if zone == "Z":
        return 0
    digits = zone[1:].replace(":", "")
    minutes = int(digits[:2]) * 60 + (int(digits[2:]) if len(digits) > 2 else 0)
    return -minutes if zone[0] == "-" else minutes


# -- nested -------------------------------------------------------------------------------------

def _is_list(t: Any) -> bool:
    return isinstance(t, (ListType, LargeListType, FixedSizeListType))


def _list(d: ArrayData, src: Any, target: Any, safe: bool) -> ArrayData:
    from ._upcalls import make_array
    arr: Any = make_array(d)                # a list array (flatten)
    if isinstance(target, FixedSizeListType) != isinstance(src, FixedSizeListType):
        if isinstance(target, FixedSizeListType):
            sizes = {len(v) for v in arr.to_pylist() if v is not None}
            if sizes - {target.list_size}:
                raise ArrowInvalid("ListType can only be casted to FixedSizeListType if the "
                                   "lists are all the expected size.")
        from .from_python import array_data_from_python
        values = cast_data(arr.flatten().data, target.value_type, safe)
        child: Any = make_array(values).to_pylist()
        out: list[Any] = []
        pos = 0
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


def _struct(d: ArrayData, src: Any, target: Any, safe: bool) -> ArrayData:
    from ._upcalls import make_array
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


# -- decimals -----------------------------------------------------------------------------------
# Decimal values are read and written as their unscaled integers (two's complement, little-endian);
# the arithmetic is exact Python integers, so every width (32 to 256 bits) follows one path.

_INT_DIGITS = {8: 3, 16: 5, 32: 10, 64: 19}      # decimal digits of the widest value of an integer


def _unscaled(d: ArrayData) -> list[Any]:
    """The unscaled integers of a decimal array (None for nulls)."""
    import numpy as np
    w = d.type.byte_width
    valid = _valid_flags(d)
    raw: Any = _values_bytes(d, w)
    out: list[Any]
    if w <= 8:
        out = np.frombuffer(raw, dtype=np.int32 if w == 4 else np.int64).tolist()
    else:
        raw = bytes(raw)
        out = [int.from_bytes(raw[i:i + w], "little", signed=True)
               for i in range(0, len(raw), w)]
    if valid is not None:
        flags = valid.tolist()
        out = [v if flags[i] else None for i, v in enumerate(out)]
    return out


# -- decimals, vectorised: whenever every unscaled value fits in an int64 (the common case: up to
# 18 digits), integer <-> decimal and decimal <-> decimal run as numpy array arithmetic

_INT64_MAX = (1 << 63) - 1


def _unscaled_int64(d: ArrayData) -> Any:
    """The unscaled values of a decimal array as an int64 numpy array, or None when one does
    not fit (nulls count as 0)."""
    import numpy as np
    w = d.type.byte_width
    raw = _values_bytes(d, w)
    if w <= 8:
        values = np.frombuffer(raw, dtype=np.int32 if w == 4 else np.int64).astype(np.int64)
    else:
        words = np.frombuffer(raw, dtype=np.int64).reshape(d.length, w // 8)
        values = words[:, 0]
        # the higher words must all be the low word's sign
        if not (words[:, 1:] == (values >> 63)[:, None]).all():
            return None
        values = values.copy()
    flags = _valid_flags(d)
    if flags is not None:
        values[~flags] = 0
    return values


def _decimal_from_int64(values: Any, target: Any, null_count: int, validity: Any) -> ArrayData:
    """A decimal array of int64 unscaled values (sign-extended to the target's width; wrapped to
    32 bits for decimal32)."""
    import numpy as np
    from ._core.buffer import py_buffer
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
    valid = _valid_flags(d)
    if tgt_dec and getattr(src, "is_integer", False):
        p, s = target.precision, target.scale
        need = _INT_DIGITS[src.bit_width] + (1 if src.bit_width == 64 and not src.is_signed
                                             else 0) + s
        if s < 0 or need > p or need > 18:
            return None                     # the per-value path raises, or needs big integers
        raw = _values_bytes(d, src.byte_width)
        ints = np.frombuffer(raw, dtype=np.dtype(f"{'i' if src.is_signed else 'u'}"
                                                  f"{src.byte_width}")).astype(np.int64)
        return _decimal_from_int64(ints * np.int64(10 ** s), target, d.null_count, _validity(d))
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
        from ._core.buffer import py_buffer
        dtype = np.dtype(f"{'i' if target.is_signed else 'u'}{target.byte_width}")
        return ArrayData(target, d.length, 0, d.null_count,
                         [_validity(d), py_buffer(q.astype(dtype))])
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
    return _decimal_from_int64(r, target, d.null_count, _validity(d))


def _values_bytes(d: ArrayData, width: int) -> memoryview:
    """The bytes of `d`'s fixed-width values (offset applied), checked to hold every row."""
    buf = d.buffers[1] if len(d.buffers) > 1 else None
    raw = memoryview(buf if buf is not None else b"").cast("B")
    start, size = d.offset * width, d.length * width
    if not (size <= len(raw) and start <= len(raw) - size):
        raise ArrowInvalid(f"Values buffer of {d.type} holds {len(raw)} bytes, expected at least "
                           f"{start + size} for {d.length} values at offset {d.offset}")
    return raw[start:start + size]


def _valid_flags(d: ArrayData) -> Any:
    """The validity of each row as a numpy bool array (None when there are no nulls)."""
    import numpy as np
    bits = _validity(d)
    if bits is None:
        return None
    return np.unpackbits(np.frombuffer(memoryview(bits), dtype=np.uint8),
                         bitorder="little")[:d.length].astype(bool)


def _decimal_data(values: list[Any], target: Any, null_count: int, validity: Any) -> ArrayData:
    """A decimal array of unscaled integers, wrapped to the target's width (as pyarrow does
    where a cast is not checked)."""
    from ._core.buffer import py_buffer
    w = target.byte_width
    mask = (1 << (8 * w)) - 1
    data = b"".join(((v or 0) & mask).to_bytes(w, "little") for v in values)
    return ArrayData(target, len(values), 0, null_count, [validity, py_buffer(data)])


def _decimal(d: ArrayData, src: Any, target: Any, safe: bool) -> ArrayData:
    # pyarrow's decimal kernels convert every value and report the LAST failure (each failing
    # value overwrites the status), so errors are collected and the last one raised
    from ._upcalls import make_array
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
        u = _unscaled(d)
        if isinstance(target, DecimalType):
            out = _rescale_decimal(u, scale, target, safe, errors, target.byte_width == 4)
        elif getattr(target, "is_integer", False):
            out = _decimal_to_int(u, src, target, safe, errors)
            _raise_last(errors)
            return array_data_from_python(out, target)
        elif target.name in ("float", "double"):
            return _decimal_to_real(d, u, scale, target)
        elif isinstance(target, BinaryType) and target.is_utf8:
            return array_data_from_python([None if v is None else _decimal_text(v, scale)
                                           for v in u], target)
        else:
            raise unsupported(src, target)
    else:
        p, s = target.precision, target.scale
        if not (getattr(src, "is_integer", False) or src.name in ("float", "double")
                or isinstance(src, BinaryType)):
            raise unsupported(src, target)
        values = make_array(d).to_pylist()
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
                parsed = _parse_decimal(text)
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
    return _decimal_data(out, target, d.null_count, _validity(d))


def _raise_last(errors: list[str]) -> None:
    if errors:
        raise ArrowInvalid(errors[-1])


def _decimal_text(v: int, scale: int) -> str:
    import decimal
    context = decimal.Context(prec=len(str(abs(v))) + 2)
    return str(decimal.Decimal(v).scaleb(-scale, context=context))


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
        q = _trunc_div(v, 10 ** scale) if scale >= 0 else v * 10 ** -scale
        if safe:
            if q * 10 ** scale != v:
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
    from ._core.buffer import py_buffer
    ftype = np.float32 if target.name == "float" else np.float64
    exact = 1 << (24 if ftype is np.float32 else 53)
    tenth = ftype(10.0 ** -scale)
    if all(v is None or -exact <= v <= exact for v in u):
        values = np.array([v or 0 for v in u], dtype=np.int64).astype(ftype) * tenth
    else:
        values = np.array([_decimal_real(v or 0, scale, ftype, exact) for v in u], dtype=ftype)
    return ArrayData(target, d.length, 0, d.null_count, [_validity(d), py_buffer(values)])


def _decimal_to_real_vectorised(d: ArrayData, scale: int, target: Any) -> ArrayData | None:
    """_decimal_to_real as numpy arithmetic when every unscaled value is exact in the target."""
    import numpy as np
    from ._core.buffer import py_buffer
    u = _unscaled_int64(d)
    ftype = np.float32 if target.name == "float" else np.float64
    exact = 1 << (24 if ftype is np.float32 else 53)
    if u is None or (np.abs(u) > exact).any():
        return None
    values = u.astype(ftype) * ftype(10.0 ** -scale)
    return ArrayData(target, d.length, 0, d.null_count, [_validity(d), py_buffer(values)])


def _decimal_real(v: int, scale: int, ftype: Any, exact: int) -> Any:
    def no_split(m: int, sc: int) -> Any:
        x = ftype(0)
        for k in range(3, -1, -1):              # 64-bit words, most significant first
            word = (m >> (64 * k)) & 0xFFFFFFFFFFFFFFFF
            if word:
                x = ftype(x + ftype(word) * ftype(2.0 ** (64 * k)))
        return ftype(x * ftype(10.0 ** -sc))
    sign = -1 if v < 0 else 1
    m = abs(v)
    if scale <= 0 or m <= exact:
        return sign * no_split(m, scale)
    whole, fraction = divmod(m, 10 ** scale)
    return sign * ftype(no_split(whole, 0) + no_split(fraction, scale))


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
            r = v * 10 ** (s - scale)
        else:
            r = _trunc_div(v, 10 ** (scale - s))
            if safe and r * 10 ** (scale - s) != v:
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


_DECIMAL_TEXT = re.compile(r"[-+]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][-+]?[0-9]+)?\Z")


def _parse_decimal(text: str) -> Any:
    """(unscaled integer, scale) of decimal text as pyarrow reads it, or None."""
    import decimal
    if not _DECIMAL_TEXT.match(text):
        return None
    t = decimal.Decimal(text).as_tuple()
    digits = int("".join(map(str, t.digits)) or "0")
    return (-digits if t.sign else digits), -t.exponent  # type: ignore[operator]  # finite


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
        x = float(np.rint(v * 10.0 ** s))
        ok = abs(x) < 10.0 ** p
        r = int(x) if ok else 0
    else:
        ftype = np.float32 if src.name == "float" else np.float64
        with np.errstate(over="ignore"):    # a limit beyond float32's range is infinity
            ok = abs(v) <= float(ftype(10.0 ** (p - s)))
        r = round(Fraction(v) * 10 ** s) if ok else 0
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
    from ._core.buffer import py_buffer
    if src.name == "halffloat":
        if target.name not in _CODES:
            if isinstance(target, BinaryType) and target.is_utf8:
                from ._upcalls import make_array
                from .from_python import array_data_from_python
                values: Any = make_array(d).to_pylist()
                return array_data_from_python(
                    [None if v is None else format_float(v) for v in values], target)
            return None
        raw: Any = _values_bytes(d, 2)
        wide: Any = np.frombuffer(raw, dtype=np.float16).astype(np.float32)
        as_f32 = ArrayData(float32(), d.length, 0, d.null_count,
                           [_validity(d), py_buffer(wide)])
        try:
            return cast_data(as_f32, target, safe)
        except ArrowInvalid as e:
            if "truncated" not in str(e):
                raise
            # pyarrow names the value by its raw 16 bits
            m = re.match(r"Float value (\S+) was truncated", str(e))
            bits = np.frombuffer(raw, dtype=np.uint16)
            valid = _valid_flags(d)
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
    return ArrayData(target, d.length, 0, d.null_count, [_validity(d), py_buffer(half)])

