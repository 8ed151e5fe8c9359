"""Arrow data to Python objects (`to_pylist`) and to numpy arrays (`to_numpy`).

Values follow pyarrow's `to_pylist()` without pandas installed: int/float/bool, str or bytes,
`decimal.Decimal`, `datetime` objects (tz-aware through `zoneinfo` or a fixed `timezone`), lists,
dicts for structs, (key, value) tuples for maps, and `MonthDayNano` for month_day_nano intervals.
Nanosecond timestamps, times and durations become datetime objects only when they are whole
microseconds; otherwise ArrowInvalid is raised (pyarrow raises a ValueError there too).

Every buffer is bounds-checked before it is read, since ArrayData may come from untrusted input.
Fixed-width values are decoded in bulk (`memoryview.cast(...).tolist()`); nulls are applied
afterwards by index, so there is no per-value Python work beyond building the result objects.
"""
from __future__ import annotations

import copy as _copy
import datetime as _dt
import decimal as _decimal
import re as _re
import struct as _struct
import sys as _sys
from bisect import bisect_left, bisect_right
from collections import namedtuple
from functools import lru_cache
from itertools import islice

from .._core.arraydata import ArrayData
from .._core.bitmap import unpack_bits
from .._core.offsets import check_offsets
from ..errors import ArrowCapacityError, ArrowInvalid
from ..types import (DecimalType, DictionaryType, DurationType, ExtensionType, FixedSizeBinaryType,
                    Kind, MapType, PrimitiveType, RunEndEncodedType, StructType, Time32Type,
                    Time64Type, TimestampType, UnionType)

TYPE_CHECKING = False               # typing itself is not imported at run time
if TYPE_CHECKING:
    from typing import Any, Callable

    from ..types import DataType

__all__ = ["check_maps_as_pydicts", "DayMilliseconds", "maps_as_pydicts", "MonthDayNano",
           "binary_spans", "ordered_numpy", "timezone_from_string", "to_numpy", "to_pylist",
           "validity_mask"]

MonthDayNano = namedtuple("MonthDayNano", ["months", "days", "nanoseconds"])
MonthDayNano.__doc__ = "A month_day_nano_interval value (equal, as a tuple, to pyarrow's)."
DayMilliseconds = namedtuple("DayMilliseconds", ["days", "milliseconds"])
DayMilliseconds.__doc__ = "A day_time_interval value (pyarrow cannot convert this type)."

_LITTLE = _sys.byteorder == "little"
_EPOCH = _dt.datetime(1970, 1, 1)
_EPOCH_UTC = _dt.datetime(1970, 1, 1, tzinfo=_dt.timezone.utc)
_EPOCH_ORDINAL = 719163            # date(1970, 1, 1).toordinal()
_MS_PER_DAY = 86_400_000
_DECIMAL_CONTEXT = _decimal.Context(prec=200)   # wide enough that scaleb never rounds

# memoryview/struct format of each fixed-width primitive, by type name.
_PRIMITIVE_FORMAT = {
    "int8": "b", "uint8": "B", "int16": "h", "uint16": "H", "int32": "i", "uint32": "I",
    "int64": "q", "uint64": "Q", "halffloat": "e", "float": "f", "double": "d",
    "date32[day]": "i", "date64[ms]": "q", "month_interval": "i",
}
_INT_FORMAT_BY_WIDTH = {1: "b", 2: "h", 4: "i", 8: "q"}
_NESTED_KINDS = frozenset((Kind.LIST, Kind.LARGE_LIST, Kind.LIST_VIEW, Kind.LARGE_LIST_VIEW,
                           Kind.FIXED_SIZE_LIST, Kind.STRUCT, Kind.SPARSE_UNION, Kind.DENSE_UNION,
                           Kind.RUN_END_ENCODED, Kind.DICTIONARY))


# -- public entry points ------------------------------------------------------------------------

# Above this many values a conversion first tries to allocate the list of results: an array that
# claims 2**40 rows (possible in a few bytes: nulls, run ends, empty structs) then fails at once
# instead of after building millions of objects.
_EARLY_SIZE_CHECK = 1 << 24

def to_pylist(data: ArrayData) -> list[Any]:
    """The values of `data` as Python objects (None for nulls), as pyarrow's to_pylist gives."""
    try:
        if data.length > _EARLY_SIZE_CHECK:
            [None] * data.length       # fails at once when not even the list itself fits
        return _to_list(data, "array")
    except MemoryError:
        # a valid array can be far longer than its bytes (nulls, run-end encoding, empty structs):
        # its Python form may simply not fit
        raise ArrowCapacityError(f"array: {data.length} values of type {data.type} do not fit in "
                                 f"memory as Python objects") from None


# -- buffer access (bounds-checked) -------------------------------------------------------------

def _storage_type(t: Any) -> Any:
    while isinstance(t, ExtensionType):
        t = t.storage
    return t


def _check_shape(data: ArrayData, where: str) -> None:
    if data.length < 0 or data.offset < 0:
        raise ArrowInvalid(f"{where}: negative length {data.length} or offset {data.offset}")


def _buffer(data: ArrayData, index: int, what: str, where: str) -> Any:
    bufs = data.buffers
    if index >= len(bufs) or bufs[index] is None:
        raise ArrowInvalid(f"{where}: {data.type} array of length {data.length} needs buffer "
                           f"{index} ({what}) but it is missing")
    return bufs[index]


def _byte_range(data: ArrayData, index: int, what: str, width: int, where: str,
                start: int | None = None, count: int | None = None) -> memoryview:
    """Bytes of elements [start, start + count) (default: this node's range) of buffer `index`."""
    start = data.offset if start is None else start
    count = data.length if count is None else count
    buf = _buffer(data, index, what, where)
    end = (start + count) * width          # Python ints: cannot overflow
    if end > buf.size:
        raise ArrowInvalid(f"{where}: buffer {index} ({what}) has {buf.size} bytes but elements "
                           f"[{start}, {start + count}) of {width} bytes need {end}")
    return memoryview(buf)[start * width:end]


def _unpack(view: memoryview, fmt: str) -> list[Any]:
    """Little-endian values of one format from a byte view, in bulk."""
    if fmt == "e" or not _LITTLE:
        size = _struct.calcsize(fmt)
        return list(_struct.unpack(f"<{len(view) // size}{fmt}", view))
    values: list[Any] = view.cast(fmt).tolist()  # type: ignore[call-overload]  # a struct code
    return values


def _child(data: ArrayData, i: int, where: str) -> ArrayData:
    if i >= len(data.children):
        raise ArrowInvalid(f"{where}: {data.type} array needs child {i} but has "
                           f"{len(data.children)} children")
    return data.children[i]


def _child_where(where: str, t: Any, i: int) -> str:
    name = t.field(i).name
    return f"{where}.{name}" if name else f"{where}.{i}"


def _slice(child: ArrayData, start: int, length: int, where: str) -> ArrayData:
    """A view of child elements [start, start + length), which must lie inside the child."""
    if start < 0 or length < 0 or start + length > child.length:
        raise ArrowInvalid(f"{where}: elements [{start}, {start + length}) are outside the child "
                           f"array of length {child.length}")
    return child.slice(start, length)


def _validity_bytes(data: ArrayData, where: str) -> bytes | None:
    """One byte (0/1) per slot, or None when every slot is valid."""
    if data.null_count == 0 or not data.buffers or data.buffers[0] is None or data.length == 0:
        return None
    try:
        return unpack_bits(data.buffers[0], data.offset, data.length)
    except ArrowInvalid as e:
        raise ArrowInvalid(f"{where}: validity bitmap (buffer 0): {e}") from None


def _null_positions(data: ArrayData, where: str) -> list[Any]:
    """Indices (from the node's offset) of null slots; empty when there are none."""
    valid = _validity_bytes(data, where)
    if valid is None:
        return []
    out = []
    i = valid.find(0)
    while i >= 0:
        out.append(i)
        i = valid.find(0, i + 1)
    return out


def _set_nulls(values: list[Any], nulls: list[Any]) -> list[Any]:
    for i in nulls:
        values[i] = None
    return values


def _map_valid(func: Any, raw: list[Any], nulls: list[Any], where: str, t: Any) -> list[Any]:
    """func over raw values, skipping null slots (which may hold anything); errors name the slot."""
    for i in nulls:
        raw[i] = 0
    try:
        out = list(map(func, raw))
    except (ValueError, OverflowError, ArithmeticError) as e:
        null_set = set(nulls)
        for i, v in enumerate(raw):
            if i in null_set:
                continue
            try:
                func(v)
            except (ValueError, OverflowError, ArithmeticError) as e2:
                raise ArrowInvalid(f"{where}: value {v} at index {i} cannot be converted to a "
                                   f"Python object for {t}: {e2}") from None
        raise ArrowInvalid(f"{where}: cannot convert {t} values: {e}") from None
    return _set_nulls(out, nulls)


# -- fixed width --------------------------------------------------------------------------------

def _raw_fixed(data: ArrayData, fmt: str, width: int, where: str) -> list[Any]:
    return _unpack(_byte_range(data, 1, "values", width, where), fmt)


def _primitive_list(data: Any, t: Any, where: Any) -> Any:
    fmt = _PRIMITIVE_FORMAT[t.name]
    raw = _raw_fixed(data, fmt, t.byte_width, where)
    return _set_nulls(raw, _null_positions(data, where))


def _bool_list(data: Any, t: Any, where: Any) -> Any:
    buf = _buffer(data, 1, "values", where)
    try:
        bits = unpack_bits(buf, data.offset, data.length)
    except ArrowInvalid as e:
        raise ArrowInvalid(f"{where}: values bitmap (buffer 1): {e}") from None
    return _set_nulls(list(map(bool, bits)), _null_positions(data, where))


def _ns_to_us(raw: list[Any], nulls: list[Any], where: str, t: Any) -> list[Any]:
    """Nanoseconds as microseconds, refusing values that are not whole microseconds (as pyarrow)."""
    null_set = set(nulls)
    for i, v in enumerate(raw):
        if v % 1000 and i not in null_set:
            raise ArrowInvalid(f"{where}: {t} value {v} at index {i} is not a whole number of "
                               f"microseconds and cannot become a Python datetime object")
    return [v // 1000 for v in raw]


def _pandas_if_installed() -> Any:
    """pandas when it can be imported, else None: pyarrow's to_pylist changes with it (below)."""
    import importlib.util
    if "pandas" not in _sys.modules and importlib.util.find_spec("pandas") is None:
        return None
    try:
        import pandas
    except ImportError:          # a broken install counts as none, as for pyarrow
        return None
    return pandas


def _temporal_list(data: Any, t: Any, where: Any, unit_of_us: Any, of_pandas_ns: Any = None) -> Any:
    """Shared path of timestamps, times and durations: int64/int32 counts → Python objects.

    Nanoseconds, as pyarrow converts them: with pandas installed, timestamps and durations become
    pandas Timestamps and Timedeltas (`of_pandas_ns(pandas)` builds one from a count) and times are
    cut to microseconds; without pandas, only whole microseconds convert.
    """
    width = t.byte_width
    raw = _raw_fixed(data, "i" if width == 4 else "q", width, where)
    nulls = _null_positions(data, where)
    unit = t.unit
    if unit == "ns":
        pandas = _pandas_if_installed()
        if pandas is not None and of_pandas_ns is not None:
            return _map_valid(of_pandas_ns(pandas), raw, nulls, where, t)
        if pandas is not None:
            raw = [v // 1000 for v in raw]
        else:
            raw = _ns_to_us(raw, nulls, where, t)
        unit = "us"
    return _map_valid(unit_of_us[unit], raw, nulls, where, t)


_DELTA: dict[str, Callable[[int], _dt.timedelta]] = {
    "s": lambda v: _dt.timedelta(seconds=v),
    "ms": lambda v: _dt.timedelta(milliseconds=v),
    "us": lambda v: _dt.timedelta(microseconds=v),
}
_NAIVE_DATETIME = {u: (lambda f: lambda v: _EPOCH + f(v))(f) for u, f in _DELTA.items()}
_TIME_OF_DAY = {u: (lambda f: lambda v: (_EPOCH + f(v)).time())(f) for u, f in _DELTA.items()}

_OFFSET_TZ = _re.compile(r"^([+-])(\d{2}):?(\d{2})$")


@lru_cache(maxsize=64)
def timezone_from_string(tz: str) -> _dt.tzinfo:
    """The tzinfo pyarrow uses for an Arrow time zone string: a fixed offset or a ZoneInfo."""
    m = _OFFSET_TZ.match(tz)
    if m:
        delta = _dt.timedelta(hours=int(m.group(2)), minutes=int(m.group(3)))
        if delta >= _dt.timedelta(hours=24):      # datetime.timezone would raise a ValueError
            raise ArrowInvalid(f"unknown time zone {tz!r}: a UTC offset must be under 24 hours")
        return _dt.timezone(-delta if m.group(1) == "-" else delta)
    try:
        import zoneinfo
        return zoneinfo.ZoneInfo(tz)
    except Exception as e:  # ZoneInfoNotFoundError, ValueError for malformed keys
        raise ArrowInvalid(f"unknown time zone {tz!r}: {e}") from None


def _timestamp_list(data: Any, t: Any, where: Any) -> Any:
    if t.tz is None:
        return _temporal_list(data, t, where, _NAIVE_DATETIME,
                              lambda pd: lambda v: pd.Timestamp(v, unit="ns"))
    tzinfo = timezone_from_string(t.tz)
    aware = {u: (lambda f: lambda v: (_EPOCH_UTC + f(v)).astimezone(tzinfo))(f)
             for u, f in _DELTA.items()}
    return _temporal_list(data, t, where, aware,
                          lambda pd: lambda v: pd.Timestamp(v, unit="ns", tz="UTC").tz_convert(tzinfo))


def _time_list(data: Any, t: Any, where: Any) -> Any:
    return _temporal_list(data, t, where, _TIME_OF_DAY)


def _duration_list(data: Any, t: Any, where: Any) -> Any:
    return _temporal_list(data, t, where, _DELTA, lambda pd: lambda v: pd.Timedelta(v, unit="ns"))


def _date32_list(data: Any, t: Any, where: Any) -> Any:
    raw = _raw_fixed(data, "i", 4, where)
    return _map_valid(lambda d: _dt.date.fromordinal(d + _EPOCH_ORDINAL), raw,
                      _null_positions(data, where), where, t)


def _date64_list(data: Any, t: Any, where: Any) -> Any:
    raw = _raw_fixed(data, "q", 8, where)
    return _map_valid(lambda ms: _dt.date.fromordinal(ms // _MS_PER_DAY + _EPOCH_ORDINAL), raw,
                      _null_positions(data, where), where, t)


def _month_day_nano_list(data: Any, t: Any, where: Any) -> Any:
    view = _byte_range(data, 1, "values", 16, where)
    out = list(map(MonthDayNano._make, _struct.iter_unpack("<iiq", view)))
    return _set_nulls(out, _null_positions(data, where))


def _day_time_list(data: Any, t: Any, where: Any) -> Any:
    view = _byte_range(data, 1, "values", 8, where)
    out = list(map(DayMilliseconds._make, _struct.iter_unpack("<ii", view)))
    return _set_nulls(out, _null_positions(data, where))


def _decimal_list(data: Any, t: Any, where: Any) -> Any:
    width = t.byte_width
    view = _byte_range(data, 1, "values", width, where)
    if width <= 8:
        raw = _unpack(view, "i" if width == 4 else "q")
    else:
        b = view.tobytes()
        raw = [int.from_bytes(b[i:i + width], "little", signed=True)
               for i in range(0, len(b), width)]
    exp = -t.scale
    ctx = _DECIMAL_CONTEXT
    return _map_valid(lambda v: _decimal.Decimal(v).scaleb(exp, ctx), raw,
                      _null_positions(data, where), where, t)


def _fixed_size_binary_list(data: Any, t: Any, where: Any) -> Any:
    width = t.byte_width
    b = _byte_range(data, 1, "values", width, where).tobytes()
    if width == 0:
        out = [b""] * data.length
    else:
        out = [b[i:i + width] for i in range(0, len(b), width)]
    return _set_nulls(out, _null_positions(data, where))


# -- variable width -----------------------------------------------------------------------------

def _offsets(data: ArrayData, index: int, width: int, target_size: int, what: str, where: str
             ) -> Any:
    """(offsets list for the node's length + 1 slots, first, last) after validation."""
    if data.length == 0:
        return [], 0, 0
    buf = _buffer(data, index, what, where)
    first, last = check_offsets(buf, data.offset, data.length, width, target_size,
                                f"{where}: {what} (buffer {index})")
    view = memoryview(buf)[data.offset * width:(data.offset + data.length + 1) * width]
    return _unpack(view, "i" if width == 4 else "q"), first, last


def _rebased_slices(offs: list[Any], first: int) -> Any:
    """Slices [offs[i] - first, offs[i + 1] - first), lazily (a list of slices is GC-heavy)."""
    if first:
        offs = [o - first for o in offs]
    return map(slice, offs, islice(offs, 1, None))


def _decode_utf8(pieces: list[Any], nulls: list[Any], where: str) -> list[Any]:
    try:
        return list(map(bytes.decode, pieces))
    except UnicodeDecodeError:
        null_set = set(nulls)
        out: list[Any] = []
        for i, p in enumerate(pieces):
            if i in null_set:
                out.append(None)
                continue
            try:
                out.append(p.decode())
            except UnicodeDecodeError as e:
                raise ArrowInvalid(f"{where}: value at index {i} is not valid UTF-8: {e}") from None
        return out


def _binary_list(data: Any, t: Any, where: Any) -> Any:
    width = 4 if t.kind == Kind.BINARY else 8
    bufs = data.buffers
    data_size = bufs[2].size if len(bufs) > 2 and bufs[2] is not None else 0
    offs, first, last = _offsets(data, 1, width, data_size, "offsets", where)
    nulls = _null_positions(data, where)
    if data.length == 0:
        return []
    raw = memoryview(bufs[2])[first:last].tobytes() if last > first else b""
    slices = _rebased_slices(offs, first)
    if t.is_utf8:
        if raw.isascii():   # byte offsets are character offsets: decode once, cut the str
            text = raw.decode("ascii")
            out = list(map(text.__getitem__, slices))
        else:
            out = _decode_utf8(list(map(raw.__getitem__, slices)), nulls, where)
    else:
        out = list(map(raw.__getitem__, slices))  # type: ignore[arg-type]  # slice keys
    return _set_nulls(out, nulls)


def _view_list(data: Any, t: Any, where: Any) -> Any:
    views = _byte_range(data, 1, "views", 16, where).tobytes()
    ints = _unpack(memoryview(views), "i")
    nulls = _null_positions(data, where)
    null_set = set(nulls)
    variadic = [memoryview(b) if b is not None else None for b in data.buffers[2:]]
    out: list[Any] = []
    append = out.append
    for i in range(data.length):
        if i in null_set:
            append(None)
            continue
        size = ints[4 * i]
        if 0 <= size <= 12:
            append(views[16 * i + 4:16 * i + 4 + size])
            continue
        index, start = ints[4 * i + 2], ints[4 * i + 3]
        if size < 0 or not 0 <= index < len(variadic) or variadic[index] is None:
            raise ArrowInvalid(f"{where}: view {i} has length {size} and data buffer index "
                               f"{index}, but there are {len(variadic)} data buffers")
        buf = variadic[index]
        if start < 0 or start + size > len(buf):
            raise ArrowInvalid(f"{where}: view {i} refers to bytes [{start}, {start + size}) of "
                               f"data buffer {index}, which has {len(buf)} bytes")
        append(buf[start:start + size].tobytes())
    if t.is_utf8:
        pieces = [b"" if v is None else v for v in out] if nulls else out
        return _set_nulls(_decode_utf8(pieces, nulls, where), nulls)
    return out


# -- nested -------------------------------------------------------------------------------------

def _fresh_copies(values: list[Any], value_type: Any) -> list[Any]:
    """Mutable values repeated by index (dictionaries, runs) must not be shared objects."""
    if _storage_type(value_type).kind not in _NESTED_KINDS:
        return values
    return [_copy.deepcopy(v) for v in values]


def _map_entries(entries: ArrayData, t: Any, where: str) -> list[Any]:
    """Map entries (a struct<key, value>) as (key, value) tuples."""
    st = _storage_type(entries.type)
    _check_shape(entries, where)
    cols = []
    for i in range(2):
        child = _child(entries, i, where)
        cols.append(_to_list(_slice(child, entries.offset, entries.length, where),
                             _child_where(where, st, i)))
    return list(zip(cols[0], cols[1]))


def _list_list(data: Any, t: Any, where: Any) -> Any:
    width = 4 if t.kind == Kind.LIST else 8
    child = _child(data, 0, where)
    offs, first, last = _offsets(data, 1, width, child.length, "offsets", where)
    nulls = _null_positions(data, where)
    if data.length == 0:
        return []
    inner = _slice(child, first, last - first, where)
    child_where = _child_where(where, t, 0)
    if isinstance(t, MapType):
        values = _map_entries(inner, t, child_where)
    else:
        values = _to_list(inner, child_where)
    return _set_nulls(list(map(values.__getitem__, _rebased_slices(offs, first))), nulls)


def _list_view_list(data: Any, t: Any, where: Any) -> Any:
    width = 4 if t.kind == Kind.LIST_VIEW else 8
    fmt = "i" if width == 4 else "q"
    child = _child(data, 0, where)
    offs = _unpack(_byte_range(data, 1, "offsets", width, where), fmt)
    sizes = _unpack(_byte_range(data, 2, "sizes", width, where), fmt)
    nulls = _null_positions(data, where)
    null_set = set(nulls)
    lo, hi = None, None
    for i, (o, s) in enumerate(zip(offs, sizes)):
        if i in null_set or s == 0:
            continue
        if o < 0 or s < 0 or o + s > child.length:
            raise ArrowInvalid(f"{where}: list view {i} covers child elements [{o}, {o + s}) "
                               f"but the child has {child.length}")
        lo = o if lo is None or o < lo else lo
        hi = o + s if hi is None or o + s > hi else hi
    if lo is None:
        return [None if i in null_set else [] for i in range(data.length)]
    values = _to_list(_slice(child, lo, hi - lo, where), _child_where(where, t, 0))
    return [None if i in null_set else (values[o - lo:o - lo + s] if s else [])
            for i, (o, s) in enumerate(zip(offs, sizes))]


def _fixed_size_list_list(data: Any, t: Any, where: Any) -> Any:
    size = t.list_size
    child = _child(data, 0, where)
    nulls = _null_positions(data, where)
    if size == 0:
        return _set_nulls([[] for _ in range(data.length)], nulls)
    values = _to_list(_slice(child, data.offset * size, data.length * size, where),
                      _child_where(where, t, 0))
    out = [values[i:i + size] for i in range(0, len(values), size)]
    return _set_nulls(out, nulls)


def _struct_list(data: Any, t: Any, where: Any) -> Any:
    names = [f.name for f in t.fields]
    if len(set(names)) != len(names):
        raise ArrowInvalid(f"{where}: cannot convert {t} to Python dicts: duplicate field names")
    cols = []
    for i in range(len(names)):
        child = _child(data, i, where)
        cols.append(_to_list(_slice(child, data.offset, data.length, where),
                             _child_where(where, t, i)))
    nulls = _null_positions(data, where)
    if cols:
        out = [dict(zip(names, row)) for row in zip(*cols)]
    else:
        out = [{} for _ in range(data.length)]
    return _set_nulls(out, nulls)


def _union_child_index(t: Any, codes: list[Any], where: str) -> list[Any]:
    by_code = {c: i for i, c in enumerate(t.type_codes)}
    idx = list(map(by_code.get, codes))
    if None in idx:
        i = idx.index(None)
        raise ArrowInvalid(f"{where}: type id {codes[i]} at index {i} is not one of the union's "
                           f"type codes {t.type_codes}")
    return idx


def _sparse_union_list(data: Any, t: Any, where: Any) -> Any:
    codes = _unpack(_byte_range(data, 0, "type ids", 1, where), "b")
    idx = _union_child_index(t, codes, where)
    cols: list[Any] = []
    used = set(idx)
    for i in range(t.num_fields):
        if i in used:
            child = _child(data, i, where)
            cols.append(_to_list(_slice(child, data.offset, data.length, where),
                                 _child_where(where, t, i)))
        else:
            cols.append(None)   # an unused child is never read
    return [cols[c][i] for i, c in enumerate(idx)]


def _dense_union_list(data: Any, t: Any, where: Any) -> Any:
    codes = _unpack(_byte_range(data, 0, "type ids", 1, where), "b")
    offs = _unpack(_byte_range(data, 1, "offsets", 4, where), "i")
    idx = _union_child_index(t, codes, where)
    cols: list[Any] = []
    starts: list[int] = []
    for i in range(t.num_fields):
        used = [o for c, o in zip(idx, offs) if c == i]
        if not used:
            cols.append(None)
            starts.append(0)
            continue
        child = _child(data, i, where)
        lo, hi = min(used), max(used)
        if lo < 0 or hi >= child.length:
            raise ArrowInvalid(f"{where}: dense union offsets of child {i} reach [{lo}, {hi}] "
                               f"but the child has {child.length} elements")
        cols.append(_to_list(_slice(child, lo, hi - lo + 1, where), _child_where(where, t, i)))
        starts.append(lo)
    return [cols[c][o - starts[c]] for c, o in zip(idx, offs)]


def _dictionary_list(data: Any, t: Any, where: Any) -> Any:
    it = t.index_type
    fmt = _PRIMITIVE_FORMAT[it.name]
    raw = _raw_fixed(data, fmt, it.byte_width, where)
    nulls = _null_positions(data, where)
    if data.dictionary is None:
        raise ArrowInvalid(f"{where}: dictionary array has no dictionary")
    values = _to_list(data.dictionary, f"{where}.dictionary")
    for i in nulls:
        raw[i] = 0
    if raw and (min(raw) < 0 or max(raw) >= len(values)):
        null_set = set(nulls)
        for i, v in enumerate(raw):
            if i not in null_set and not 0 <= v < len(values):
                raise ArrowInvalid(f"{where}: dictionary index {v} at index {i} is outside the "
                                   f"dictionary of {len(values)} values")
    if not values:     # only nulls can index an empty dictionary (checked above)
        return [None] * data.length
    out = _fresh_copies(list(map(values.__getitem__, raw)), t.value_type)
    return _set_nulls(out, nulls)


def _run_end_encoded_list(data: Any, t: Any, where: Any) -> Any:
    run_ends_data = _child(data, 0, where)
    values_data = _child(data, 1, where)
    if data.length == 0:
        return []
    rt = run_ends_data.type
    run_ends = _unpack(_byte_range(run_ends_data, 1, "run ends", rt.byte_width,
                                   f"{where}.run_ends"), _PRIMITIVE_FORMAT[rt.name])
    start, end = data.offset, data.offset + data.length
    if not run_ends or run_ends[0] <= 0 or run_ends[-1] < end:
        raise ArrowInvalid(f"{where}: run ends {run_ends[:1]}...{run_ends[-1:]} do not cover "
                           f"logical elements [{start}, {end})")
    if any(a >= b for a, b in zip(run_ends, islice(run_ends, 1, None))):
        raise ArrowInvalid(f"{where}: run ends must be strictly increasing")
    first = bisect_right(run_ends, start)
    last = bisect_left(run_ends, end)
    values = _to_list(_slice(values_data, first, last - first + 1, where), f"{where}.values")
    out = []
    pos = start
    for j in range(first, last + 1):
        stop = min(run_ends[j], end)
        out += [values[j - first]] * (stop - pos)
        pos = stop
    return _fresh_copies(out, t.value_type)


# -- dispatch -----------------------------------------------------------------------------------

def _fixed_handler(t: Any) -> Any:
    if isinstance(t, PrimitiveType):
        if t.is_integer or t.is_float or t.name == "month_interval":
            return _primitive_list
        return {"date32[day]": _date32_list, "date64[ms]": _date64_list,
                "month_day_nano_interval": _month_day_nano_list,
                "day_time_interval": _day_time_list}[t.name]
    if isinstance(t, TimestampType):
        return _timestamp_list
    if isinstance(t, (Time32Type, Time64Type)):
        return _time_list
    if isinstance(t, DurationType):
        return _duration_list
    if isinstance(t, DecimalType):
        return _decimal_list
    if isinstance(t, FixedSizeBinaryType):
        return _fixed_size_binary_list
    raise ArrowInvalid(f"no Python conversion for fixed-width type {t}")


_HANDLER_BY_KIND = {
    Kind.NULL: lambda data, t, where: [None] * data.length,
    Kind.BOOL: _bool_list,
    Kind.BINARY: _binary_list, Kind.LARGE_BINARY: _binary_list, Kind.VIEW: _view_list,
    Kind.LIST: _list_list, Kind.LARGE_LIST: _list_list,
    Kind.LIST_VIEW: _list_view_list, Kind.LARGE_LIST_VIEW: _list_view_list,
    Kind.FIXED_SIZE_LIST: _fixed_size_list_list, Kind.STRUCT: _struct_list,
    Kind.SPARSE_UNION: _sparse_union_list, Kind.DENSE_UNION: _dense_union_list,
    Kind.DICTIONARY: _dictionary_list, Kind.RUN_END_ENCODED: _run_end_encoded_list,
}


def _to_list(data: ArrayData, where: str) -> list[Any]:
    _check_shape(data, where)
    t = _storage_type(data.type)
    handler = _fixed_handler(t) if t.kind == Kind.FIXED else _HANDLER_BY_KIND[t.kind]
    if data.length == 0:
        return []
    values: list[Any] = handler(data, t, where)
    if isinstance(data.type, ExtensionType):
        convert = _CANONICAL_VALUE.get(data.type.extension_name)
        if convert is not None:
            values = [None if v is None else convert(v) for v in values]
    return values


def _uuid(v: Any) -> Any:
    import uuid
    return uuid.UUID(bytes=v)


def _datetime_in_offset(v: dict[str, Any]) -> Any:
    # the instant (an aware UTC datetime, or a pandas Timestamp for nanoseconds) in its offset
    import datetime
    offset = datetime.timezone(datetime.timedelta(minutes=v["offset_minutes"]))
    return v["timestamp"].astimezone(offset)


# Canonical extension types whose Python values differ from their storage (as in pyarrow; it
# does not know arrow.timestamp_with_offset, whose values are datetimes in their own offset).
_CANONICAL_VALUE: dict[str, Callable[[Any], Any]] = {
    "arrow.uuid": _uuid, "arrow.bool8": bool, "arrow.timestamp_with_offset": _datetime_in_offset}


# -- numpy --------------------------------------------------------------------------------------

def _zero_copy_dtype(t: Any) -> Any:
    """The numpy dtype that views the values buffer as-is, or None when a copy is needed."""
    if isinstance(t, PrimitiveType):
        if t.is_integer or t.is_float:
            return {"halffloat": "<f2", "float": "<f4", "double": "<f8"}.get(
                t.name, ("<i" if t.is_signed else "<u") + str(t.byte_width))
        if t.name == "date64[ms]":
            return "<M8[ms]"
        return None
    if isinstance(t, TimestampType):
        return f"<M8[{t.unit}]"
    if isinstance(t, DurationType):
        return f"<m8[{t.unit}]"
    return None


def _with_nulls(np: Any, values: Any, valid: Any) -> Any:
    """A copy of `values` where invalid slots hold NaN, NaT or None (pyarrow's choices)."""
    kind = values.dtype.kind
    if kind in "iu":
        out = values.astype("float64")
        out[~valid] = np.nan
    elif kind == "f":
        out = values.copy()
        out[~valid] = np.nan
    elif kind in "Mm":
        out = values.copy()
        out[~valid] = np.array("NaT", dtype=values.dtype)
    else:
        out = values.astype(object)
        out[~valid] = None
    return out


def _object_array(np: Any, values: list[Any]) -> Any:
    out = np.empty(len(values), dtype=object)
    out[:] = values
    return out


def _null_count(data: ArrayData, where: str) -> int:
    valid = _validity_bytes(data, where)
    return 0 if valid is None else valid.count(0)


def to_numpy(data: ArrayData, zero_copy_only: bool = True, writable: bool = False) -> Any:
    """A numpy array of the values: a read-only zero-copy view for fixed-width numbers,
    timestamps, durations and date64 without nulls; otherwise (when allowed) a copy, with NaN /
    NaT / None for nulls and object arrays for non-numeric types, as pyarrow does."""
    import numpy as np
    if writable and zero_copy_only:
        raise ArrowInvalid("cannot return a writable array when asking for zero-copy")
    where = "array"
    _check_shape(data, where)
    t = _storage_type(data.type)
    dtype = _zero_copy_dtype(t)
    if dtype is not None:
        view = _byte_range(data, 1, "values", t.byte_width, where) if data.length else b""
        values = np.frombuffer(view, dtype=dtype)
        values.flags.writeable = False
        valid = _validity_bytes(data, where)
        if valid is None or valid.count(0) == 0:
            return values.copy() if writable else values
        if zero_copy_only:
            raise ArrowInvalid(f"needed to copy 1 chunks with {valid.count(0)} nulls, but "
                               f"zero_copy_only was True")
        return _with_nulls(np, values, np.frombuffer(valid, dtype=np.bool_))
    if zero_copy_only:
        if t.kind == Kind.BOOL:
            raise ArrowInvalid("zero copy conversions are not possible with boolean types")
        raise ArrowInvalid(f"needed to copy 1 chunks with {_null_count(data, where)} nulls, but "
                           f"zero_copy_only was True ({data.type} has no zero-copy numpy form)")
    return _copied_numpy(np, data, t, where)


# fixed-width types whose values order as their raw integers do (numpy has no view of them)
_RAW_ORDERED = {"date32[day]": "<i4", "time32[s]": "<i4", "time32[ms]": "<i4",
                "time64[us]": "<i8", "time64[ns]": "<i8"}


def ordered_numpy(data: ArrayData) -> tuple[Any, Any] | None:
    """(values, valid) for a column of fixed-width numbers or temporal values: a zero-copy view
    of its values buffer in a numpy dtype that orders them as Arrow does (null slots hold what
    the buffer holds), and a bool array of the valid slots (None when all are); None for other
    types. For sorting: nothing is converted or copied."""
    import numpy as np
    where = "array"
    _check_shape(data, where)
    t = _storage_type(data.type)
    dtype = _zero_copy_dtype(t) or _RAW_ORDERED.get(t.name)
    if dtype is None:
        return None
    width = np.dtype(dtype).itemsize
    values = np.frombuffer(_byte_range(data, 1, "values", width, where) if data.length else b"",
                           dtype=dtype)
    valid = _validity_bytes(data, where)
    return values, None if valid is None else np.frombuffer(valid, dtype=np.bool_)


def validity_mask(data: ArrayData) -> Any:
    """A numpy bool array of the valid slots, or None when every slot is valid."""
    import numpy as np
    valid = _validity_bytes(data, "array")
    return None if valid is None else np.frombuffer(valid, dtype=np.bool_)


def binary_spans(data: ArrayData) -> tuple[Any, Any, Any]:
    """(starts, ends, bytes) of a string or binary column (not a view type): int64 numpy arrays
    of each value's [start, end) in `bytes`, a uint8 numpy view of its data buffer; checked to
    lie inside it (ArrowInvalid otherwise)."""
    import numpy as np
    where = "array"
    _check_shape(data, where)
    t = _storage_type(data.type)
    width = 4 if t.kind == Kind.BINARY else 8
    offsets = np.frombuffer(_byte_range(data, 1, "offsets", width, where, data.offset,
                                        data.length + 1), dtype=f"<i{width}").astype(np.int64)
    values = np.frombuffer(_buffer(data, 2, "data", where), dtype=np.uint8) \
        if data.length else np.zeros(0, np.uint8)
    starts, ends = offsets[:-1], offsets[1:]
    if len(starts) and (starts[0] < 0 or ends[-1] > len(values)
                        or bool(np.any(ends < starts))):
        raise ArrowInvalid(f"{where}: {data.type} offsets are not ascending within its "
                           f"{len(values)}-byte data buffer")
    return starts, ends, values


def _copied_numpy(np: Any, data: ArrayData, t: Any, where: str) -> Any:
    valid = _validity_bytes(data, where) if t.kind not in (
        Kind.NULL, Kind.SPARSE_UNION, Kind.DENSE_UNION, Kind.RUN_END_ENCODED) else None
    mask = None if valid is None else np.frombuffer(valid, dtype=np.bool_)
    if t.kind == Kind.BOOL:
        bits = unpack_bits(_buffer(data, 1, "values", where), data.offset, data.length) \
            if data.length else b""
        values = np.frombuffer(bytearray(bits), dtype=np.bool_)
        return values if mask is None or mask.all() else _with_nulls(np, values, mask)
    if t.name == "date32[day]":
        raw = np.frombuffer(_byte_range(data, 1, "values", 4, where) if data.length else b"",
                            dtype="<i4")
        values = raw.astype("M8[D]")
        return values if mask is None else _with_nulls(np, values, mask)
    if t.kind == Kind.DICTIONARY:
        if data.dictionary is None:
            raise ArrowInvalid(f"{where}: dictionary array has no dictionary")
        indices = ArrayData(t.index_type, data.length, data.offset, data.null_count, data.buffers)
        idx = to_numpy(indices, zero_copy_only=False)
        if mask is not None:
            idx = np.where(mask, idx, 0).astype(np.int64)
        dictionary = to_numpy(data.dictionary, zero_copy_only=False)
        if len(dictionary) == 0 and mask is not None and not mask.any():
            return _object_array(np, [None] * data.length)   # all null, nothing to index
        if len(idx) and (idx.min() < 0 or idx.max() >= len(dictionary)):
            raise ArrowInvalid(f"{where}: dictionary index outside the dictionary of "
                               f"{len(dictionary)} values")
        values = dictionary[idx]
        return values if mask is None or mask.all() else _with_nulls(np, values, mask)
    if t.kind == Kind.RUN_END_ENCODED:
        values = to_pylist(data)
        flat = _storage_type(t.value_type)
        if _zero_copy_dtype(flat) is not None and None not in values:
            return np.array(values, dtype=_zero_copy_dtype(flat).lstrip("<"))
        return _object_array(np, values)
    if t.kind in (Kind.LIST, Kind.LARGE_LIST, Kind.FIXED_SIZE_LIST) and not isinstance(t, MapType):
        return _list_of_arrays(np, data, t, where, mask)
    return _object_array(np, to_pylist(data))


def _list_of_arrays(np: Any, data: Any, t: Any, where: Any, mask: Any) -> Any:
    """Lists as an object array of numpy arrays, one per list (pyarrow's form)."""
    child = _child(data, 0, where)
    if t.kind == Kind.FIXED_SIZE_LIST:
        size = t.list_size
        first = data.offset * size
        bounds = [i * size for i in range(data.length + 1)]
        last = first + data.length * size
    else:
        width = 4 if t.kind == Kind.LIST else 8
        offs, first, last = _offsets(data, 1, width, child.length, "offsets", where)
        bounds = [o - first for o in offs] if offs else [0]
    inner = to_numpy(_slice(child, first, last - first, where), zero_copy_only=False)
    out = _object_array(np, [inner[a:b] for a, b in zip(bounds, bounds[1:])])
    if mask is not None:
        out[~mask] = None
    return out


# -- maps as dicts (to_pylist(maps_as_pydicts=...)) ---------------------------------------------

def check_maps_as_pydicts(mode: str | None) -> None:
    """pyarrow's accepted values of `maps_as_pydicts`."""
    if mode not in (None, "lossy", "strict"):
        raise ValueError(f"Invalid value for 'maps_as_pydicts': valid values are 'lossy', "
                         f"'strict' or `None` (default). Received {mode!r}.")


def maps_as_pydicts(values: list[Any], type: DataType, mode: str | None) -> list[Any]:
    """`values` (to_pylist's result for `type`) with every map value, at any depth, a dict
    instead of a list of (key, value) tuples. A repeated key keeps its last value: silently
    ("lossy") or raising KeyError ("strict"). None leaves `values` as they are."""
    check_maps_as_pydicts(mode)
    if mode is None or not _has_map(type):
        return values
    return [_map_value(v, type, mode) for v in values]


def _has_map(t: Any) -> bool:
    if isinstance(t, ExtensionType):
        t = t.storage
    if isinstance(t, MapType):
        return True
    if isinstance(t, DictionaryType):
        return _has_map(t.value_type)
    return any(_has_map(f.type) for f in getattr(t, "_fields", ()) or ())


def _map_value(v: Any, t: Any, mode: Any) -> Any:
    if v is None:
        return None
    if isinstance(t, ExtensionType):
        t = t.storage
    if isinstance(t, DictionaryType):
        return _map_value(v, t.value_type, mode)
    if isinstance(t, MapType):
        out = {}
        for k, item in v:
            if k in out:
                if mode == "strict":
                    raise KeyError(f"Converting to Python dictionary is not supported in strict "
                                   f"mode when duplicate keys are present (duplicate key was "
                                   f"'{k}').")
                import warnings
                warnings.warn(f"Encountered key '{k}' which was already encountered.")
            out[k] = _map_value(item, t.item_type, mode)
        return out
    if isinstance(t, StructType):
        return {f.name: _map_value(v[f.name], f.type, mode) for f in t.fields}
    if isinstance(t, RunEndEncodedType):
        return _map_value(v, t.value_type, mode)
    if isinstance(t, UnionType):
        return v                         # the child of each value is not known here
    if hasattr(t, "value_type") and isinstance(v, list):
        return [_map_value(x, t.value_type, mode) for x in v]
    return v
