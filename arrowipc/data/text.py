"""Values as text and text as values: how pyarrow prints and parses dates, times, timestamps,
durations, floats and decimals. Casts to and from strings (arrowipc.data.cast) and Arrow's
pretty printer (arrowipc.data.pretty) both use these, so a value prints the same in both; also
the fixed-width value access the two share (values_bytes, valid_flags, validity_bitmap).
"""
from __future__ import annotations

import re

from .._core.arraydata import ArrayData
from ..errors import ArrowInvalid
from ..types import (DurationType, Kind, Time32Type, Time64Type, TimestampType, int32, int64)

TYPE_CHECKING = False               # typing itself is not imported at run time
if TYPE_CHECKING:
    from typing import Any

__all__ = ["MS_PER_DAY", "UNITS_PER_SECOND", "civil_days", "decimal_text", "float32_repr",
           "format_float", "local_times", "parse_decimal", "parse_temporal", "storage_int",
           "temporal_text", "temporal_text_fixed", "unscaled", "valid_flags", "validity_bitmap",
           "values_bytes"]


UNITS_PER_SECOND = {"s": 1, "ms": 1000, "us": 1_000_000, "ns": 1_000_000_000}


MS_PER_DAY = 86_400_000



def validity_bitmap(d: ArrayData) -> Any:
    from .._core.bitmap import bitmap_view
    from ..validate import null_count_of
    if null_count_of(d) == 0 or not d.buffers or d.buffers[0] is None:
        return None
    return bitmap_view(d.buffers[0], d.offset, d.length)



def storage_int(t: Any) -> Any:
    """The integer type a temporal type is stored as (None for non-temporal types)."""
    if isinstance(t, (TimestampType, DurationType, Time64Type)) or t.name == "date64[ms]":
        return int64()
    if isinstance(t, Time32Type) or t.name == "date32[day]":
        return int32()
    return None


_DIGITS = {"s": 0, "ms": 3, "us": 6, "ns": 9}



def temporal_text(d: ArrayData, src: Any) -> list[Any]:
    """Dates, times, timestamps and durations as pyarrow prints them: ISO dates, times with as
    many fraction digits as the unit has, timestamps as `date time`, followed by the UTC offset
    (+HHMM, or Z for the "UTC" zone) when they have a time zone; a value outside the years
    -32767 to 32767 (or a time outside the day) prints as `<value out of range: v>`."""
    import numpy as np
    width = 4 if storage_int(src) == int32() else 8
    ints = np.frombuffer(values_bytes(d, width), dtype=np.int32 if width == 4
                         else np.int64).astype(np.int64)
    valid = valid_flags(d)
    text: list[Any]
    if isinstance(src, DurationType):
        text = ints.astype(str).tolist()
    elif isinstance(src, (Time32Type, Time64Type)):
        per_day = 86400 * UNITS_PER_SECOND[src.unit]
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
            stamps, suffix = local_times(stamps, ints, unit, tz)
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



def temporal_text_fixed(d: ArrayData, src: Any, target: Any) -> ArrayData | None:
    """Dates, times and timestamps (naive, UTC or a fixed offset) in the years 1000 to 9999:
    every text has one length, so the digits are written column by column into a byte matrix
    with numpy and the offsets are multiples of the row; None where the per-row path is needed
    (durations, named zones, other years, times outside the day, string_view)."""
    import numpy as np
    from .._core.buffer import py_buffer
    if target.kind == Kind.VIEW or isinstance(src, DurationType) or d.length == 0:
        return None
    tz = getattr(src, "tz", None)
    m = re.fullmatch(r"([+-])(\d\d):?(\d\d)", tz) if tz and tz != "UTC" else None
    if tz and tz != "UTC" and m is None:
        return None
    n = d.length
    width = 4 if storage_int(src) == int32() else 8
    ints = np.frombuffer(values_bytes(d, width), dtype=np.int32 if width == 4
                         else np.int64).astype(np.int64)
    flags = valid_flags(d)
    if flags is not None:
        ints = np.where(flags, ints, 0)         # the rows under nulls print as the epoch
    unit = getattr(src, "unit", None)
    per_second = UNITS_PER_SECOND[unit] if unit else 1
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
                     [validity_bitmap(d), py_buffer(offsets), py_buffer(cells)])



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



def local_times(stamps: Any, ints: Any, unit: Any, tz: Any) -> Any:
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



def float32_repr(v: float) -> str:
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


_DATE_TEXT = r"(\d{4})-(\d\d)-(\d\d)"


_TIME_TEXT = r"[T ](\d\d)(?::(\d\d)(?::(\d\d)(?:\.(\d+))?)?)?"


_ZONE_TEXT = r"(Z|[+-]\d\d(?::?\d\d)?)"


_NAIVE_STAMP = re.compile(_DATE_TEXT + "(?:" + _TIME_TEXT + r")?\Z")


_ZONED_STAMP = re.compile(_DATE_TEXT + _TIME_TEXT + _ZONE_TEXT + r"\Z")


_NO_ZONE = (": expected a zone offset. If these timestamps are in local time, cast to timestamp "
            "without timezone, then call assume_timezone.")


_ZONE_NOT_EXPECTED = ": expected no zone offset."



def parse_temporal(text: str, target: Any) -> Any:
    """(the value in the target's units or None, the reason pyarrow appends) for ISO 8601 text
    as pyarrow's safe cast reads it: `YYYY-MM-DD` for dates; for timestamps an optional time
    (`T` or a space, then HH, HH:MM or HH:MM:SS with at most as many fraction digits as the unit
    holds), ending with a zone offset (Z, +HH, +HHMM, +HH:MM) exactly when the type has a zone."""
    if not isinstance(target, TimestampType):
        m = re.fullmatch(_DATE_TEXT, text)
        days = civil_days(*map(int, m.groups())) if m else None
        if days is None:
            return None, ""
        return (days if target.name == "date32[day]" else days * MS_PER_DAY), ""
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
    per_second = UNITS_PER_SECOND[target.unit]
    digits = len(str(per_second)) - 1
    days = civil_days(int(year), int(month), int(day))
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



def civil_days(year: int, month: int, day: int) -> Any:
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



def unscaled(d: ArrayData) -> list[Any]:
    """The unscaled integers of a decimal array (None for nulls)."""
    import numpy as np
    w = d.type.byte_width
    valid = valid_flags(d)
    raw: Any = values_bytes(d, w)
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



def values_bytes(d: ArrayData, width: int) -> memoryview:
    """The bytes of `d`'s fixed-width values (offset applied), checked to hold every row."""
    buf = d.buffers[1] if len(d.buffers) > 1 else None
    raw = memoryview(buf if buf is not None else b"").cast("B")
    start, size = d.offset * width, d.length * width
    if not (size <= len(raw) and start <= len(raw) - size):
        raise ArrowInvalid(f"Values buffer of {d.type} holds {len(raw)} bytes, expected at least "
                           f"{start + size} for {d.length} values at offset {d.offset}")
    return raw[start:start + size]



def valid_flags(d: ArrayData) -> Any:
    """The validity of each row as a numpy bool array (None when there are no nulls)."""
    import numpy as np
    bits = validity_bitmap(d)
    if bits is None:
        return None
    return np.unpackbits(np.frombuffer(memoryview(bits), dtype=np.uint8),
                         bitorder="little")[:d.length].astype(bool)



def decimal_text(v: int, scale: int) -> str:
    import decimal
    context = decimal.Context(prec=len(str(abs(v))) + 2)
    return str(decimal.Decimal(v).scaleb(-scale, context=context))


_DECIMAL_TEXT = re.compile(r"[-+]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][-+]?[0-9]+)?\Z")



def parse_decimal(text: str) -> Any:
    """(unscaled integer, scale) of decimal text as pyarrow reads it, or None."""
    import decimal
    if not _DECIMAL_TEXT.match(text):
        return None
    t = decimal.Decimal(text).as_tuple()
    digits = int("".join(map(str, t.digits)) or "0")
    return (-digits if t.sign else digits), -t.exponent  # type: ignore[operator]  # finite
