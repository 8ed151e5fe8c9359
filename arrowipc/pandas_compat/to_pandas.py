"""Arrow tables and columns to pandas: what pyarrow 26's `to_pandas()` produces.

How a column becomes pandas data:
- numbers, booleans without nulls, timestamps, durations (and dates with date_as_object=False)
  are copied by the kernels of `_core/pandas_kernels` straight into the 2-D block pandas keeps
  for their dtype (or, with split_blocks=True, handed over as zero-copy views when one chunk
  without nulls needs no conversion). Integers with nulls become float64 with NaN, as in pyarrow.
  These kernels release the GIL, so with use_threads the columns convert in parallel.
- strings become pandas' default `str` dtype, built as pandas itself would build it: with the
  "python" storage, an object array of str made by one C loop that creates each distinct string
  once; with the "pyarrow" storage (pandas chose it, so pandas has loaded pyarrow), our buffers are
  handed to pandas through the Arrow C stream interface without a copy. arrowipc never imports
  pyarrow: it only uses the module pandas already loaded.
- dictionaries become Categoricals (chunks with different dictionaries are unified first), time
  zones a DatetimeTZDtype, and everything else (decimals, dates, times, binary, lists, structs,
  maps) object columns of the Python values pyarrow gives.
"""
from __future__ import annotations

import sys as _sys

from .._core.arraydata import ArrayData
from .._core import pandas_kernels as _k
from ..errors import ArrowException, ArrowInvalid, ArrowNotImplementedError
from ..pandas_shim import schema_pandas_metadata
from ..types import (DataType, DictionaryType, DurationType, ExtensionType, Field,
                     FixedSizeBinaryType, Kind, MapType, PrimitiveType, Schema, TimestampType)
from .common import _GENERATED_INDEX, _NAT, _numpy, _pandas, _run, _storage, _tzinfo
from .metadata import _column_index, check_pandas_metadata

TYPE_CHECKING = False               # typing itself is not imported at run time
if TYPE_CHECKING:
    from typing import Any

__all__ = ["chunked_to_series", "table_to_dataframe", "ToPandasOptions"]


_MS_PER_DAY = 86_400_000


_NS_PER_UNIT = {"s": 1_000_000_000, "ms": 1_000_000, "us": 1000, "ns": 1}


# numpy dtype codes of Arrow's fixed-width numbers, by type name
_NUMERIC_CODE = {"int8": "i1", "int16": "i2", "int32": "i4", "int64": "i8", "uint8": "u1",
                 "uint16": "u2", "uint32": "u4", "uint64": "u8", "halffloat": "f2",
                 "float": "f4", "double": "f8"}


_STRING_KINDS = (Kind.BINARY, Kind.LARGE_BINARY, Kind.VIEW)


_LIST_KINDS = (Kind.LIST, Kind.LARGE_LIST, Kind.LIST_VIEW, Kind.LARGE_LIST_VIEW,
               Kind.FIXED_SIZE_LIST)


class ToPandasOptions:
    """The options of `to_pandas()` (pyarrow's names and defaults). `memory_pool` is accepted
    and ignored (arrowipc has one allocator); `safe` concerns casts pyarrow may make on the way,
    which this conversion never needs."""
    __slots__ = ("memory_pool", "categories", "strings_to_categorical", "zero_copy_only",
                 "integer_object_nulls", "date_as_object", "timestamp_as_object", "use_threads",
                 "deduplicate_objects", "ignore_metadata", "safe", "split_blocks",
                 "self_destruct", "maps_as_pydicts", "types_mapper", "coerce_temporal_nanoseconds")

    def __init__(self, memory_pool: object = None, categories: list[str] | None = None,
                 strings_to_categorical: bool = False, zero_copy_only: bool = False,
                 integer_object_nulls: bool = False, date_as_object: bool = True,
                 timestamp_as_object: bool = False, use_threads: bool = True,
                 deduplicate_objects: bool = True, ignore_metadata: bool = False, safe: bool = True,
                 split_blocks: bool = False, self_destruct: bool = False,
                 maps_as_pydicts: str | None = None, types_mapper: Any = None,
                 coerce_temporal_nanoseconds: bool = False) -> None:
        if maps_as_pydicts not in (None, "lossy", "strict"):
            raise ValueError(f"Invalid value for 'maps_as_pydicts': valid values are 'lossy', "
                             f"'strict' or `None` (default). Received {maps_as_pydicts!r}.")
        self.memory_pool = memory_pool
        self.categories = list(categories) if categories else []
        self.strings_to_categorical = bool(strings_to_categorical)
        self.zero_copy_only = bool(zero_copy_only)
        self.integer_object_nulls = bool(integer_object_nulls)
        self.date_as_object = bool(date_as_object)
        self.timestamp_as_object = bool(timestamp_as_object)
        self.use_threads = bool(use_threads)
        self.deduplicate_objects = bool(deduplicate_objects)
        self.ignore_metadata = bool(ignore_metadata)
        self.safe = bool(safe)
        self.split_blocks = bool(split_blocks)
        self.self_destruct = bool(self_destruct)
        self.maps_as_pydicts = maps_as_pydicts
        self.types_mapper = types_mapper
        self.coerce_temporal_nanoseconds = bool(coerce_temporal_nanoseconds)


def _null_count(d: ArrayData) -> int:
    from ..validate import null_count_of
    return null_count_of(d)


def _validity(d: ArrayData) -> Any:
    """The validity Buffer of a chunk that has nulls, else None."""
    if d.length == 0 or _null_count(d) == 0 or not d.buffers:
        return None
    return d.buffers[0]


def _values_buffer(d: ArrayData, what: str = "values") -> Any:
    if len(d.buffers) < 2 or d.buffers[1] is None:
        if d.length == 0:
            return None
        raise ArrowInvalid(f"{d.type} array of length {d.length} has no {what} buffer")
    return d.buffers[1]


def _copy_fixed(chunks: list[ArrayData], width: int, out: Any, fill_nulls: bool) -> None:
    """Fixed-width chunks copied back to back into `out`; nulls filled with NaN/NaT."""
    pos = 0
    for d in chunks:
        if d.length:
            _k.copy_values(_values_buffer(d), d.offset, d.length, width, out, pos)
        pos += d.length
    if fill_nulls:
        _fill_chunk_nulls(chunks, out)


def _fill_chunk_nulls(chunks: list[ArrayData], out: Any, fill: Any = None) -> None:
    """The null slots of chunks laid back to back in `out` set to NaN, NaT or `fill`."""
    pos = 0
    for d in chunks:
        v = _validity(d)
        if v is not None:
            _k.fill_nulls(out, pos, d.length, v, d.offset, fill)
        pos += d.length


def _signed_codes(np: Any, chunks: list[ArrayData], codes: Any, ncat: int) -> Any:
    """Unsigned dictionary indices as signed codes (pandas' codes are signed and use -1 for a
    null), wide enough for every index that can be valid."""
    # null slots may hold any index: zeroed first, so that only real indices are range-checked
    _fill_chunk_nulls(chunks, codes, 0)
    if len(codes) and int(codes.max()) >= max(ncat, 1):
        raise ArrowInvalid(f"dictionary index outside the dictionary of {ncat} values")
    return codes.astype({1: "i2", 2: "i4"}.get(codes.dtype.itemsize, "i8"))


def _zero_copy_view(np: Any, chunks: list[ArrayData], code: str) -> Any:
    """A read-only numpy view of the only chunk's values, or None when that needs a copy."""
    if len(chunks) != 1:
        return None
    d = chunks[0]
    if _null_count(d):
        return None
    width = int(code[-1]) if code[-1].isdigit() else np.dtype(code).itemsize
    buf = _values_buffer(d)
    if buf is None:
        return np.empty(0, dtype=code)
    if d.offset < 0 or d.length > buf.size // width - d.offset:
        raise ArrowInvalid(f"{d.type} values buffer of {buf.size} bytes is too short for "
                           f"elements [{d.offset}, {d.offset + d.length})")
    view = np.frombuffer(buf, dtype=code, count=d.length, offset=d.offset * width)
    view.flags.writeable = False
    return view


class _Column:
    """How one Arrow column becomes pandas data.

    `dtype` is the numpy dtype of a column that goes into a 2-D block (then `fill(out)` writes
    the values into a 1-D contiguous row of it, and `view()` may offer a zero-copy array), or None
    for a column pandas holds as an extension array (then `build()` returns it)."""
    __slots__ = ("dtype", "fill", "view", "build")

    def __init__(self, dtype: Any = None, fill: Any = None, view: Any = None, build: Any = None
                 ) -> None:
        self.dtype = dtype
        self.fill = fill
        self.view = view
        self.build = build

    def to_array(self, np: Any, n: int) -> Any:
        """The column on its own: a zero-copy view when there is one, else a filled array."""
        if self.dtype is None:
            return self.build()
        if self.view is not None:
            v = self.view()
            if v is not None:
                return v
        out = _empty(np, n, self.dtype)
        self.fill(out)
        return out


def _empty(np: Any, shape: Any, dtype: Any) -> Any:
    """An uninitialised array for converted values. Numeric ones come from arrowipc's allocator:
    its pool and huge pages spare the page faults fresh memory costs on every conversion (the
    array keeps the allocation alive; freeing the DataFrame returns it to the pool)."""
    dtype = np.dtype(dtype)
    count = 1
    for x in (shape if isinstance(shape, tuple) else (shape,)):
        count *= x
    if dtype.hasobject or count == 0:
        return np.empty(shape, dtype=dtype)
    from .._core.buffer import allocate
    return np.frombuffer(allocate(count * dtype.itemsize, False), dtype=dtype).reshape(shape)


def _total(chunks: list[ArrayData]) -> int:
    return sum(d.length for d in chunks)


def _any_nulls(chunks: list[ArrayData]) -> bool:
    return any(_null_count(d) for d in chunks)


def _objects_column(np: Any, chunks: list[ArrayData], convert: Any) -> _Column:
    """An object column whose values come chunk by chunk from convert(chunk) -> sequence."""
    def fill(out: Any) -> None:
        pos = 0
        for d in chunks:
            if d.length:
                out[pos:pos + d.length] = _as_object_array(np, convert(d))
            pos += d.length
    return _Column(np.dtype(object), fill)


def _as_object_array(np: Any, values: Any) -> Any:
    """An object array holding exactly these values (numpy would unpack sequences of equal
    length into a second dimension: fromiter never does)."""
    if isinstance(values, np.ndarray) and values.dtype == object:
        return values
    if isinstance(values, np.ndarray):
        values = values.tolist()
    return np.fromiter(values, dtype=object, count=len(values))


def _pylist(d: ArrayData) -> list[Any]:
    from ..data.to_python import to_pylist
    return to_pylist(d)


def _binary_objects(np: Any, d: ArrayData, utf8: bool, na_value: Any, dedup: bool, out: Any = None,
                    out_start: int = 0) -> Any:
    """str or bytes objects of one binary-like chunk (any layout) as an object array, or
    written into out[out_start:] when given."""
    t = _storage(d.type)
    if out is None:
        out = np.empty(d.length, dtype=object)
    if d.length == 0:
        return out
    if t.kind in (Kind.BINARY, Kind.LARGE_BINARY):
        width = 4 if t.kind == Kind.BINARY else 8
        data = d.buffers[2] if len(d.buffers) > 2 else None
        try:
            _k.binary_to_objects(_values_buffer(d, "offsets"), data, d.offset, d.length, width,
                                 _validity(d), d.offset, utf8, dedup, na_value, out, out_start)
        except UnicodeDecodeError as e:
            raise ArrowInvalid(f"{d.type} array holds invalid UTF-8: {e}") from None
        return out
    values = _pylist(d)       # views and fixed-size binary: already bounds-checked there
    part = _as_object_array(np, values)
    if na_value is not None and _null_count(d):
        part[[v is None for v in values]] = na_value
    out[out_start:out_start + d.length] = part
    return out


def _datetime_dtype(pd: Any, unit: str, tz: Any) -> Any:
    if tz is None:
        return _numpy().dtype(f"datetime64[{unit}]")
    return pd.DatetimeTZDtype(unit=unit, tz=_tzinfo(tz))


class _Converter:
    """Column conversions for one to_pandas call (options, pandas and numpy bound once)."""

    def __init__(self, opts: ToPandasOptions) -> None:
        self.o = opts
        self.pd = pd = _pandas()
        self.np = _numpy()
        # strings as pandas' `str` dtype: always from pandas 3, by option from 2.3 (pyarrow's rule)
        major, minor = (int(x) for x in pd.__version__.split(".")[:2])
        self.uses_string_dtype = major >= 3 or (
            (major, minor) >= (2, 3) and bool(pd.get_option("future.infer_string")))
        # set by table_to_dataframe: pyarrow's Table.to_pandas picks the str dtype by field type
        self.for_table = False

    # -- top level ------------------------------------------------------------------------------
    def column(self, chunks: list[ArrayData], t: DataType, ext_dtype: Any = None,
               categorical: bool = False) -> _Column:
        np, o = self.np, self.o
        if ext_dtype is not None:
            return _Column(build=lambda: self.extension(chunks, t, ext_dtype))
        st: Any = _storage(t)   # dispatched on its kind, which mypy does not follow
        if isinstance(t, ExtensionType) and t.extension_name == "arrow.uuid":
            return _objects_column(np, chunks, _pylist)
        k = st.kind
        if categorical and k != Kind.DICTIONARY:
            return _Column(build=lambda: self.encoded_categorical(chunks, st))
        if k == Kind.DICTIONARY:
            return _Column(build=lambda: self.categorical(chunks, st))
        if k == Kind.NULL:
            return _Column(np.dtype(object), lambda out: out.fill(None))
        if k == Kind.BOOL:
            if _any_nulls(chunks):
                return _objects_column(np, chunks, _pylist)
            return _Column(np.dtype(bool), lambda out: self._fill_bools(chunks, out))
        if isinstance(st, PrimitiveType) and st.name in _NUMERIC_CODE:
            return self.numeric(chunks, st)
        if isinstance(st, TimestampType):
            return self.timestamp(chunks, st)
        if isinstance(st, DurationType):
            unit = "ns" if o.coerce_temporal_nanoseconds else st.unit
            return self.temporal(chunks, st.unit, np.dtype(f"timedelta64[{unit}]"), str(st))
        if st.name in ("date32[day]", "date64[ms]"):
            if o.date_as_object:
                return _objects_column(np, chunks, _pylist)
            unit = "ns" if o.coerce_temporal_nanoseconds else "ms"
            return _Column(np.dtype(f"datetime64[{unit}]"),
                           lambda out: self._fill_dates(chunks, st, out))
        if k in _STRING_KINDS and not isinstance(st, FixedSizeBinaryType):
            dedup = o.deduplicate_objects
            if st.is_utf8 and self.uses_string_dtype:
                return _Column(build=lambda: self.strings(chunks, st))
            if st.is_utf8:                   # pandas < 3 without infer_string: objects
                return _objects_column(np, chunks,
                                       lambda d: _binary_objects(np, d, True, None, dedup))
            return _objects_column(np, chunks,
                                   lambda d: _binary_objects(np, d, False, None, dedup))
        if k == Kind.RUN_END_ENCODED:
            return _Column(build=lambda: self.run_end_decoded(chunks, st))
        if k in (Kind.SPARSE_UNION, Kind.DENSE_UNION):
            raise ArrowNotImplementedError(f"No known equivalent Pandas block for Arrow data of "
                                           f"type {t} is known.")
        if st.name in ("day_time_interval", "month_interval"):
            raise ArrowNotImplementedError(f"No known equivalent Pandas block for Arrow data of "
                                           f"type {t} is known.")
        _check_list_values(st)
        if len(chunks) > 1 and k in _LIST_KINDS:
            # pyarrow converts list values of all chunks together (a child with a null in any
            # chunk becomes float everywhere): one combined chunk gives the same
            from ..data.concat import concat_array_data
            chunks = [concat_array_data(list(chunks))]
        return _objects_column(np, chunks, self.objects)

    def to_numpy(self, d: ArrayData) -> Any:
        """One chunk as a numpy array, as pyarrow shapes list values (strings as object)."""
        st: Any = _storage(d.type)   # dispatched on its kind, which mypy does not follow
        np = self.np
        if st.kind in _STRING_KINDS and not isinstance(st, FixedSizeBinaryType):
            return _binary_objects(np, d, st.is_utf8, None, self.o.deduplicate_objects)
        if st.kind == Kind.DICTIONARY:
            return _as_object_array(np, _pylist(d))
        if isinstance(st, TimestampType) and st.tz is not None and not self.o.timestamp_as_object:
            # inside lists pyarrow gives the UTC values, without the time zone
            return self.temporal([d], st.unit, np.dtype(f"datetime64[{st.unit}]"),
                                 f"timestamp[{st.unit}]").to_array(np, d.length)
        col = self.column([d], d.type)
        if col.dtype is None:
            built = col.build()
            return np.asarray(built, dtype=object) if not isinstance(built, np.ndarray) else built
        return col.to_array(np, d.length)

    # -- numbers and time -----------------------------------------------------------------------
    def numeric(self, chunks: list[ArrayData], st: Any) -> _Column:
        np, o = self.np, self.o
        code = _NUMERIC_CODE[st.name]
        width = int(code[1])
        nulls = _any_nulls(chunks)
        if code[0] == "f":
            return _Column(np.dtype(code), lambda out: _copy_fixed(chunks, width, out, True),
                           lambda: _zero_copy_view(np, chunks, code))
        if not nulls:
            return _Column(np.dtype(code), lambda out: _copy_fixed(chunks, width, out, False),
                           lambda: _zero_copy_view(np, chunks, code))
        if o.integer_object_nulls:
            return _objects_column(np, chunks, _pylist)

        def fill(out: Any) -> None:
            pos = 0
            for d in chunks:
                if d.length:
                    _k.ints_to_float(_values_buffer(d), code, d.offset, d.length, _validity(d),
                                     d.offset, out, pos)
                pos += d.length
        return _Column(np.dtype("float64"), fill)

    def temporal(self, chunks: list[ArrayData], unit: str, dtype: Any, what: str = "") -> _Column:
        """int64 time values of `unit` into datetime64/timedelta64 of dtype's unit."""
        np = self.np
        factor = _NS_PER_UNIT[unit] // _NS_PER_UNIT[np.datetime_data(dtype)[0]]

        def fill(out: Any) -> None:
            _copy_fixed(chunks, 8, out, factor == 1)
            if factor != 1:
                ints = out.view("int64")
                self._scale(ints, factor, what)
                _fill_chunk_nulls(chunks, out)
        view = (lambda: _zero_copy_view(np, chunks, dtype.str)) if factor == 1 else None
        return _Column(dtype, fill, view)

    def _scale(self, ints: Any, factor: int, what: str) -> None:
        """ints *= factor in place, refusing values that leave int64 (NaT slots excepted) with
        pyarrow's message; `what` names the source type, e.g. "timestamp[ms]"."""
        np = self.np
        limit = np.iinfo(np.int64).max // factor
        bad = (ints != _NAT) & ((ints > limit) | (ints < -limit))
        if bad.any():
            kind = what.split("[")[0]
            raise ArrowInvalid(f"Casting from {what} to {kind}[ns] would result in out of "
                               f"bounds {kind}: {int(ints[bad][0])}")
        np.multiply(ints, factor, out=ints)

    def timestamp(self, chunks: list[ArrayData], st: TimestampType) -> _Column:
        np, pd, o = self.np, self.pd, self.o
        if o.timestamp_as_object and st.unit != "ns":
            # nanoseconds always fit datetime64[ns]: pyarrow keeps those columns as they are
            return _objects_column(np, chunks, _pylist)
        unit = "ns" if o.coerce_temporal_nanoseconds else st.unit
        naive = self.temporal(chunks, st.unit, np.dtype(f"datetime64[{unit}]"), str(st))
        if st.tz is None:
            return naive
        dtype = _datetime_dtype(pd, unit, st.tz)
        n = _total(chunks)

        def build() -> Any:
            values = naive.to_array(np, n)
            return pd.array(values.view("int64"), dtype=dtype, copy=False)
        # view: whether zero_copy_only can have it (the values viewed, the zone on the dtype)
        return _Column(build=build, view=naive.view)

    def _fill_dates(self, chunks: list[ArrayData], st: Any, out: Any) -> None:
        np = self.np
        ints = out.view("int64")
        if st.name == "date64[ms]":
            _copy_fixed(chunks, 8, ints, False)
        else:
            pos = 0
            for d in chunks:
                if d.length:
                    tmp = np.empty(d.length, dtype="int32")
                    _k.copy_values(_values_buffer(d), d.offset, d.length, 4, tmp, 0)
                    np.multiply(tmp, _MS_PER_DAY, out=ints[pos:pos + d.length], dtype="int64")
                pos += d.length
        if out.dtype == np.dtype("datetime64[ns]"):
            self._scale(ints, 1_000_000, "timestamp[ms]")
        _fill_chunk_nulls(chunks, out)

    def _fill_bools(self, chunks: list[ArrayData], out: Any) -> None:
        pos = 0
        for d in chunks:
            if d.length:
                _k.unpack_bools(_values_buffer(d), d.offset, d.length, out, pos)
            pos += d.length

    # -- strings --------------------------------------------------------------------------------
    def string_dtype(self) -> Any:
        """pandas' default `str` dtype, with the storage pandas resolves for it."""
        np, pd = self.np, self.pd
        return pd.StringDtype(na_value=np.nan)

    def strings(self, chunks: list[ArrayData], t: Any, dtype: Any = None) -> Any:
        np, pd = self.np, self.pd
        dtype = dtype or self.string_dtype()
        pa = _sys.modules.get("pyarrow")
        if dtype.storage == "pyarrow" and pa is not None:
            # pandas chose Arrow-backed strings, so it has loaded pyarrow: hand our buffers over
            # through the C stream interface (no copy) instead of building Python objects
            _check_for_export(chunks)
            t, chunks = _views_as_large_offsets(t, chunks)
            return dtype.__from_arrow__(pa.chunked_array(_capsule_chunks(chunks, t)))
        if dtype.storage == "pyarrow":
            dtype = pd.StringDtype("python", na_value=dtype.na_value)
        n = _total(chunks)
        values = np.empty(n, dtype=object)
        pos = 0
        for d in chunks:
            _binary_objects(np, d, True, dtype.na_value, self.o.deduplicate_objects, values, pos)
            pos += d.length
        cls = dtype.construct_array_type()
        simple_new = getattr(cls, "_simple_new", None)
        if simple_new is not None:
            # every value is a str or the dtype's NA: skip the constructor's per-value check
            return simple_new(values, dtype)
        return cls(values, dtype=dtype)

    # -- categoricals ---------------------------------------------------------------------------
    def categorical(self, chunks: list[ArrayData], st: DictionaryType) -> Any:
        np, pd = self.np, self.pd
        # an empty column still has its categories (pyarrow's too): then the first chunk's
        dicts = [d.dictionary for d in chunks if d.length] or [d.dictionary for d in chunks[:1]]
        if any(x is None for x in dicts):
            raise ArrowInvalid("dictionary array has no dictionary")
        first = dicts[0] if dicts else None
        codes_dtype = _NUMERIC_CODE[st.index_type.name]
        n = _total(chunks)
        codes = np.empty(n, dtype=codes_dtype)
        _copy_fixed(chunks, int(codes_dtype[1]), codes, False)
        if first is None:
            categories = self._dictionary_values([ArrayData(st.value_type, 0, 0, 0,
                                                            [None, None, None])])
        elif all(x is first for x in dicts) or all(
                _same_values(x, first) for x in dicts):  # type: ignore[arg-type]  # not None here
            categories = self._dictionary_values([first])
        else:
            # pyarrow's dictionary unifier refuses these, before pandas sees any category
            if _storage(st.value_type).kind == Kind.NULL:
                raise ArrowNotImplementedError(
                    "Unification of null dictionaries is not implemented")
            if any(_null_count(x) for x in dicts if x is not None):
                raise ArrowInvalid("Cannot yet unify dictionaries with nulls")
            categories, codes = self._unified(chunks, codes)
        ncat = len(categories)
        if n and ncat == 0 and not _any_nulls(chunks):
            raise ArrowInvalid("dictionary index outside the dictionary of 0 values")
        if codes.dtype.kind == "u":
            codes = _signed_codes(np, chunks, codes, ncat)
        _fill_chunk_nulls(chunks, codes, -1)
        if len(codes) and (codes.max(initial=-1) >= ncat or codes.min(initial=0) < -1):
            raise ArrowInvalid(f"dictionary index outside the dictionary of {ncat} values")
        return pd.Categorical.from_codes(codes, categories=categories, ordered=st.ordered)

    def _dictionary_values(self, dicts: Any) -> Any:
        """Dictionary values in the form pyarrow hands pandas as categories."""
        np = self.np
        parts = [self.to_numpy(x) for x in dicts]
        return parts[0] if len(parts) == 1 else np.concatenate(parts)

    def _unified(self, chunks: list[ArrayData], codes: Any) -> Any:
        """Categories covering every chunk's dictionary (first chunk's order, then new values in
        order of appearance, as Arrow's dictionary unification) and the remapped codes."""
        np = self.np
        seen: dict[Any, int] = {}
        order: list[Any] = []
        pos = 0
        remapped = codes.astype("int64")
        for d in chunks:
            values = self._dictionary_values([d.dictionary])
            mapping = np.empty(len(values), dtype="int64")
            for i, v in enumerate(values.tolist()):
                key = (type(v), v) if v == v else (type(v), "nan")
                j = seen.get(key)
                if j is None:
                    j = seen[key] = len(order)
                    order.append(values[i])
                mapping[i] = j
            part = remapped[pos:pos + d.length]
            if len(part):
                valid = self._valid_mask(d)
                if valid is not None:
                    part[~valid] = 0          # null slots may hold any index
                # only valid slots are checked: a chunk of nulls may have an empty dictionary
                checked = part if valid is None else part[valid]
                if len(checked) and (checked.min() < 0 or checked.max() >= len(values)):
                    raise ArrowInvalid(f"dictionary index outside the dictionary of "
                                       f"{len(values)} values")
                if len(values):               # else all null: the caller writes -1 there
                    part[:] = mapping[part]
            pos += d.length
        cats = np.empty(len(order), dtype=object)
        cats[:] = order
        if len(order) and all(isinstance(x, (int, float)) for x in order):
            cats = np.asarray(order)
        return cats, remapped

    def encoded_categorical(self, chunks: list[ArrayData], st: Any) -> Any:
        """`categories=` / strings_to_categorical: the column hash-encoded in order of first
        appearance (what Arrow's dictionary_encode gives), then a Categorical."""
        np, pd = self.np, self.pd
        if st.kind in _STRING_KINDS and getattr(st, "is_utf8", False):
            parts = [_binary_objects(np, d, True, None, True) for d in chunks]
        else:
            # pyarrow's dictionary_encode has no kernel for nested types; pandas refuses null
            # categories (pyarrow's dictionary of nulls holds one)
            if st.kind in _LIST_KINDS or st.kind == Kind.STRUCT or isinstance(st, MapType):
                raise ArrowNotImplementedError(f"Function 'dictionary_encode' has no kernel "
                                               f"matching input types ({st})")
            if st.kind == Kind.NULL and _total(chunks):
                raise ValueError("Categorical categories cannot be null")
            # the values as Python objects (nulls None): integers stay integers
            parts = [_as_object_array(np, _pylist(d)) for d in chunks]
        values = np.concatenate(parts) if parts else np.empty(0, dtype=object)
        codes, uniques = pd.factorize(values, use_na_sentinel=True)
        if isinstance(uniques, pd.Index):
            uniques = uniques.to_numpy()
        if parts and not (st.kind in _STRING_KINDS and getattr(st, "is_utf8", False)):
            # categories as pyarrow gives them: the dictionary (each value's first appearance)
            # converted as a column of its own type (int64 when empty, timedelta64[ms], ...)
            from ..data.from_python import array_data_from_python
            from ..data.selection import combined_data, take
            from ..types import int64
            _, first = np.unique(codes, return_index=True)
            first = first[1:] if len(codes) and codes.min() < 0 else first
            order = np.argsort(codes[first], kind="stable")
            idx = array_data_from_python(first[order].tolist(), int64())
            uniques = self.to_numpy(take(combined_data(list(chunks), st), idx))
        return pd.Categorical.from_codes(codes, categories=uniques)

    # -- run-end encoded ------------------------------------------------------------------------
    def run_end_decoded(self, chunks: list[ArrayData], st: Any) -> Any:
        np = self.np
        parts = []
        for d in chunks:
            if len(d.children) != 2:
                raise ArrowInvalid("run_end_encoded array needs 2 children")
            ends_d, values_d = d.children
            ends = self.column([ends_d], ends_d.type).to_array(np, ends_d.length).astype("int64")
            if len(ends) and (np.any(np.diff(ends) <= 0) or ends[0] <= 0):
                raise ArrowInvalid("run ends must be positive and strictly increasing")
            lo, hi = d.offset, d.offset + d.length
            if d.length and (not len(ends) or ends[-1] < hi):
                raise ArrowInvalid(f"run ends cover {ends[-1] if len(ends) else 0} values but "
                                   f"the array needs {hi}")
            first = int(np.searchsorted(ends, lo, side="right"))
            last = int(np.searchsorted(ends, hi - 1, side="right")) + 1 if d.length else first
            run_ends = np.minimum(ends[first:last], hi) - lo
            counts = np.diff(np.concatenate([[0], run_ends]))
            idx = np.repeat(np.arange(first, last), counts)
            if len(ends) > values_d.length:
                raise ArrowInvalid(f"run_end_encoded array has {len(ends)} runs but "
                                   f"{values_d.length} values")
            vt = _storage(values_d.type)
            if self.for_table and vt.kind in _STRING_KINDS and getattr(vt, "is_utf8", False):
                # a run-end encoded field is no string field: its strings stay objects there
                values = _binary_objects(np, values_d, True, None, self.o.deduplicate_objects)
            else:
                values = self.column([values_d], values_d.type).to_array(np, values_d.length)
            parts.append(values.take(idx))
        if not parts:
            return self.column([], st.value_type).to_array(np, 0)
        if len(parts) == 1:
            return parts[0]
        if isinstance(parts[0], np.ndarray):
            return np.concatenate(parts)
        return type(parts[0])._concat_same_type(parts)

    # -- objects for nested types ---------------------------------------------------------------
    def objects(self, d: ArrayData) -> Any:
        """The Python values pyarrow gives for one chunk inside an object column: lists as numpy
        arrays, structs as dicts, maps as lists of (key, item) tuples or dicts, and the
        to_pylist value otherwise."""
        np = self.np
        st: Any = _storage(d.type)   # dispatched on its kind, which mypy does not follow
        k = st.kind
        if isinstance(st, MapType):
            return self._maps(d, st)
        if k in _LIST_KINDS:
            return self._lists(d, st)
        if k == Kind.STRUCT:
            return self._structs(d, st)
        if st.name == "month_day_nano_interval":
            pd = self.pd
            return _as_object_array(np, [None if v is None else pd.DateOffset(
                months=v[0], days=v[1], nanoseconds=v[2]) for v in _pylist(d)])
        if k == Kind.DICTIONARY:
            return _as_object_array(np, _pylist(d))
        if k in _STRING_KINDS and not isinstance(st, FixedSizeBinaryType):
            return _binary_objects(np, d, st.is_utf8, None, self.o.deduplicate_objects)
        if k == Kind.RUN_END_ENCODED:
            return _as_object_array(np, _pylist(d))
        if st.name == "time64[ns]":
            self._check_whole_microseconds(d)
        return _as_object_array(np, _pylist(d))

    def _check_whole_microseconds(self, d: ArrayData) -> None:
        """datetime.time holds microseconds: pyarrow refuses (whatever `safe` says) to drop the
        nanoseconds of a time64[ns] value, where to_pylist truncates them."""
        buf = _values_buffer(d)
        if buf is None:
            return
        values = self.np.frombuffer(buf, dtype="i8", count=d.length, offset=d.offset * 8)
        lossy = values % 1000 != 0
        valid = self._valid_mask(d)
        if valid is not None:
            lossy &= valid
        if lossy.any():
            raise ArrowInvalid(f"Value {int(values[lossy.argmax()])} has non-zero nanoseconds")

    def _list_bounds(self, d: ArrayData, st: Any) -> Any:
        """(child ArrayData, per-list (start, stop) in the child) of one list-like chunk."""
        np = self.np
        if not d.children:
            raise ArrowInvalid(f"{st} array has no child")
        child = d.children[0]
        n = d.length
        if st.kind == Kind.FIXED_SIZE_LIST:
            size = st.list_size
            starts = (np.arange(n, dtype="int64") + d.offset) * size
            return child, starts, starts + size
        width = 4 if st.kind in (Kind.LIST, Kind.LIST_VIEW) else 8
        code = f"i{width}"
        if st.kind in (Kind.LIST, Kind.LARGE_LIST):
            offs = np.empty(n + 1, dtype=code)
            if n:
                _k.copy_values(_values_buffer(d, "offsets"), d.offset, n + 1, width, offs, 0)
            else:
                offs[0] = 0
            starts, stops = offs[:-1].astype("int64"), offs[1:].astype("int64")
        else:
            starts = np.empty(n, dtype=code)
            sizes = np.empty(n, dtype=code)
            if n:
                _k.copy_values(_values_buffer(d, "offsets"), d.offset, n, width, starts, 0)
                if len(d.buffers) < 3 or d.buffers[2] is None:
                    raise ArrowInvalid(f"{st} array has no sizes buffer")
                _k.copy_values(d.buffers[2], d.offset, n, width, sizes, 0)
            starts = starts.astype("int64")
            stops = starts + sizes.astype("int64")
        valid = self._valid_mask(d)
        check_starts, check_stops = (starts, stops) if valid is None else (starts[valid],
                                                                            stops[valid])
        if len(check_starts) and (check_starts.min() < 0 or (check_stops < check_starts).any()
                                  or check_stops.max() > child.length):
            raise ArrowInvalid(f"{st} offsets point outside the child array of length "
                               f"{child.length}")
        return child, starts, stops

    def _valid_mask(self, d: ArrayData) -> Any:
        v = _validity(d)
        if v is None:
            return None
        from .._core.bitmap import unpack_bits
        return self.np.frombuffer(unpack_bits(v, d.offset, d.length), dtype=bool)

    def _lists(self, d: ArrayData, st: Any) -> Any:
        np = self.np
        child, starts, stops = self._list_bounds(d, st)
        _check_list_values(st)
        valid = self._valid_mask(d)
        if st.kind in (Kind.LIST, Kind.LARGE_LIST, Kind.FIXED_SIZE_LIST) and len(starts):
            # the values this chunk's lists span, null lists included: pyarrow converts those
            # (a null outside them, say in a slice's neighbours, does not make them objects;
            # one under a null list does)
            lo, hi = int(starts.min()), int(stops.max())
            hi = max(hi, lo)
        else:
            lo, hi = 0, child.length
        sub = ArrayData(child.type, hi - lo, child.offset + lo,
                        0 if child.null_count == 0 else -1, child.buffers, child.children,
                        child.dictionary)
        values = self.to_numpy(sub)
        out = np.empty(d.length, dtype=object)
        s, e = (starts - lo).tolist(), (stops - lo).tolist()
        for i in range(d.length):
            out[i] = values[s[i]:e[i]]
        if valid is not None:
            out[~valid] = None
        return out

    def _structs(self, d: ArrayData, st: Any) -> Any:
        np = self.np
        names = [f.name for f in st.fields]
        if len(d.children) != len(names):
            raise ArrowInvalid(f"{st} array has {len(d.children)} children")
        cols = []
        for c in d.children:
            if c.offset + d.offset + d.length > c.offset + c.length and d.length:
                raise ArrowInvalid(f"{st} child of length {c.length} is shorter than the "
                                   f"struct's {d.offset + d.length} slots")
            sub = ArrayData(c.type, d.length, c.offset + d.offset,
                            0 if c.null_count == 0 else -1, c.buffers, c.children, c.dictionary)
            cols.append(self._nested_values(sub))
        rows = [dict(zip(names, r)) for r in zip(*cols)] if cols else [{} for _ in range(d.length)]
        out = _as_object_array(np, rows)
        valid = self._valid_mask(d)
        if valid is not None:
            out[~valid] = None
        return out

    def _maps(self, d: ArrayData, st: MapType) -> Any:
        np = self.np
        child, starts, stops = self._list_bounds(d, st)
        if len(child.children) != 2:
            raise ArrowInvalid("map entries need 2 children")
        kd, vd = child.children
        keys = self._nested_values(ArrayData(kd.type, child.length, kd.offset + child.offset, -1,
                                          kd.buffers, kd.children, kd.dictionary))
        items = self._nested_values(ArrayData(vd.type, child.length, vd.offset + child.offset, -1,
                                           vd.buffers, vd.children, vd.dictionary))
        valid = self._valid_mask(d)
        mode = self.o.maps_as_pydicts
        out = np.empty(d.length, dtype=object)
        s, e = starts.tolist(), stops.tolist()
        for i in range(d.length):
            if valid is not None and not valid[i]:
                continue
            ks, vs = keys[s[i]:e[i]], items[s[i]:e[i]]
            if mode is None:
                out[i] = list(zip(ks, vs))
            else:
                m = dict(zip(ks, vs))
                if len(m) != len(ks):
                    if mode == "strict":
                        raise ArrowInvalid(f"Encountered key duplication in map row {i} and "
                                           f"maps_as_pydicts='strict'")
                    import warnings
                    warnings.warn(f"Encountered key duplication in map row {i}: the last value "
                                  f"is kept", UserWarning, stacklevel=6)
                out[i] = m
        return out

    def _nested_values(self, d: ArrayData) -> Any:
        """Struct fields, map keys and items: converted as a numpy column would be (integers
        with nulls as floats, lists as arrays), then as Python values with None for nulls.
        Zoned timestamps are datetimes in their zone, except nanoseconds: those are integers
        there, as datetime64[ns] values become in Python (pyarrow's forms both)."""
        st = _storage(d.type)
        if isinstance(st, TimestampType) and st.tz is not None and st.unit != "ns":
            return _pylist(d)
        values = self.to_numpy(d).tolist()
        valid = self._valid_mask(d)
        if valid is not None:
            for i in self.np.flatnonzero(~valid).tolist():
                values[i] = None
        return values

    # -- extension dtypes -----------------------------------------------------------------------
    def extension(self, chunks: list[ArrayData], t: Any, dtype: Any) -> Any:
        """A pandas extension array of `dtype` (from types_mapper or the pandas metadata)."""
        np, pd = self.np, self.pd
        st = _storage(t)
        if isinstance(dtype, pd.StringDtype) and st.kind in _STRING_KINDS \
                and getattr(st, "is_utf8", False):
            return self.strings(chunks, st, dtype)
        from pandas.core.arrays.masked import BaseMaskedDtype  # pandas' own masked dtypes
        if isinstance(dtype, BaseMaskedDtype) and (
                st.kind == Kind.BOOL or (isinstance(st, PrimitiveType)
                                         and st.name in _NUMERIC_CODE)):
            # the types pandas' __from_arrow__ takes: booleans for `boolean`, numbers for the
            # numeric dtypes (pandas' TypeError and message, as pyarrow's to_pandas gives it)
            if (dtype.kind == "b") != (st.kind == Kind.BOOL):
                raise TypeError(f"Expected array of {dtype} type, got {t} instead")
            n = _total(chunks)
            if st.kind == Kind.BOOL:
                values = np.zeros(n, dtype=bool)
                self._fill_bools(chunks, values)
            else:
                code = _NUMERIC_CODE[st.name]
                values = np.empty(n, dtype=code)
                _copy_fixed(chunks, int(code[1]), values, False)
            mask = np.zeros(n, dtype=bool)
            pos = 0
            for d in chunks:
                m = self._valid_mask(d)
                if m is not None:
                    mask[pos:pos + d.length] = ~m
                pos += d.length
            converted = values.astype(dtype.numpy_dtype, copy=False)
            if converted.dtype != values.dtype and (converted.dtype.kind in "iu" or
                                                    values.dtype.kind in "iu"):
                # pandas casts with pyarrow's safe cast: a value that does not survive the
                # conversion is refused
                with np.errstate(invalid="ignore", over="ignore"):
                    lost = (converted.astype(values.dtype) != values) & ~mask
                if lost.any():
                    row = int(lost.argmax())
                    raise ArrowInvalid(f"value {values[row]!r} of row {row} does not convert "
                                       f"to {dtype} without loss")
            values = converted
            values[mask] = 0
            return dtype.construct_array_type()(values, mask)
        pa = _sys.modules.get("pyarrow")
        if pa is not None and hasattr(dtype, "__from_arrow__"):
            _check_for_export(chunks)
            t, chunks = _views_as_large_offsets(t, chunks)
            return dtype.__from_arrow__(pa.chunked_array(_capsule_chunks(chunks, t)))
        raise ArrowNotImplementedError(
            f"converting {t} to the pandas extension dtype {dtype} needs pyarrow arrays "
            f"(dtype.__from_arrow__); arrowipc builds pandas' masked and string dtypes itself")


def _check_list_values(t: DataType) -> None:
    """Refuse, before any data is read (empty columns too), the list values pyarrow cannot
    convert (fixed-size binary, views, extension types), with pyarrow's messages."""
    t = _storage(t)
    if t.kind in _LIST_KINDS and not isinstance(t, MapType):
        vt = t.value_type  # type: ignore[attr-defined]  # a list kind
        if isinstance(vt, ExtensionType):
            raise ArrowNotImplementedError("extension")
        if isinstance(vt, FixedSizeBinaryType) or vt.kind == Kind.VIEW:
            raise ArrowNotImplementedError(f"Not implemented type for Arrow list to pandas: {vt}")
        _check_list_values(vt)
    elif t.kind == Kind.STRUCT or isinstance(t, MapType):
        for f in t.fields:
            _check_list_values(f.type)


def _mapped(types_mapper: Any, t: DataType) -> Any:
    """types_mapper(type), given the type as pyarrow gives it when pyarrow is loaded (so mappers
    written for pyarrow work unchanged: dicts keyed by pyarrow types, pandas.ArrowDtype,
    pyarrow.types predicates), as an arrowipc DataType otherwise."""
    pa = _sys.modules.get("pyarrow")
    if pa is not None and hasattr(pa, "field"):
        t = pa.field(Field("", t)).type       # through the C schema interface
    return types_mapper(t)


def _same_values(a: ArrayData, b: ArrayData) -> bool:
    if a is b:
        return True
    if a.length != b.length or a.type != b.type:
        return False
    return _pylist(a) == _pylist(b)


def _check_for_export(chunks: list[ArrayData]) -> None:
    """Structural checks before chunks go to another library (which trusts what it is given):
    validity bitmaps and offsets inside their buffers, offsets non-decreasing."""
    from .._core.bitmap import count_set_bits
    from .._core.offsets import check_offsets
    for d in chunks:
        if d.buffers and d.buffers[0] is not None:
            count_set_bits(d.buffers[0], d.offset, d.length)
        k = _storage(d.type).kind
        if k in (Kind.BINARY, Kind.LARGE_BINARY) and d.length:
            data = d.buffers[2] if len(d.buffers) > 2 else None
            check_offsets(_values_buffer(d, "offsets"), d.offset, d.length,
                          4 if k == Kind.BINARY else 8, data.size if data is not None else 0,
                          f"{d.type} offsets")
        elif d.length:
            from ..array import make_array
            make_array(d).validate(full=True)


def _capsule_chunks(chunks: list[ArrayData], t: Any = None) -> Any:
    """A ChunkedArray over `chunks` (it exports the Arrow C stream interface)."""
    from ..array import ChunkedArray, make_array
    return ChunkedArray([make_array(d) for d in chunks], t if t is not None else
                        (chunks[0].type if chunks else None))


def _ext_dtypes(conv: _Converter, fields: Any, columns_meta: Any, categories: Any,
                from_metadata: set[str]) -> dict[str, Any]:
    """Field name -> pandas extension dtype (types_mapper first, then the metadata's numpy_type
    naming an extension dtype), as pyarrow decides them; the names whose dtype the metadata
    named are added to `from_metadata`."""
    pd, o = conv.pd, conv.o
    out = {}
    if o.types_mapper is not None:
        for f in fields:
            dt = _mapped(o.types_mapper, f.type)
            if dt is not None:
                out[f.name] = dt
    plain = {"int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
             "float16", "float32", "float64", "object", "bool"}
    types = {f.name: f.type for f in fields}
    for cm in columns_meta:                 # checked by check_pandas_metadata
        name = cm.get("field_name", cm["name"])
        numpy_type = cm["numpy_type"]
        if name in out or numpy_type in plain:
            continue
        try:
            dt = pd.api.types.pandas_dtype(numpy_type)
        except (TypeError, ValueError) as e:
            # pyarrow's TypeError: a dtype pandas does not know
            raise ArrowInvalid(f"pandas metadata: the numpy_type {numpy_type[:100]!r} of column "
                               f"{name!r} is not a dtype pandas knows ({e})") from None
        if not isinstance(dt, pd.api.extensions.ExtensionDtype):
            continue
        if isinstance(dt, pd.StringDtype):
            if o.strings_to_categorical or name in categories:
                continue
            t = types.get(name)
            if t is not None and _storage(t).kind == Kind.DICTIONARY:
                continue
        if hasattr(dt, "__from_arrow__"):
            out[name] = dt
            from_metadata.add(name)
    return out


def _metadata_dtype_build(build: Any, name: str, dtype: Any) -> Any:
    """build(), with the refusal of a column's data by the extension dtype the pandas metadata
    names (pandas' or pyarrow's TypeError, ValueError or NotImplementedError) an ArrowInvalid
    naming the column: the metadata asked for a dtype its data cannot have."""
    def run() -> Any:
        try:
            return build()
        except ArrowInvalid:
            raise
        except (ArrowException, TypeError, ValueError, NotImplementedError, KeyError,
                AttributeError, OverflowError) as e:
            raise ArrowInvalid(f"pandas metadata: column {name!r} cannot become the dtype "
                               f"{str(dtype)[:100]} its numpy_type names: "
                               f"{type(e).__name__}: {str(e)[:200]}") from None
    return run


def _metadata_time_zones(meta: dict[str, Any], fields: list[Field],
                         columns: list[list[ArrayData]]) -> list[list[ArrayData]]:
    """The columns, with a timestamp column whose `datetimetz` metadata names another time zone
    than its type's given that zone in nanoseconds, as pyarrow 26 does (`fields` is updated in
    place); a zone that does not exist is an ArrowInvalid naming the column."""
    index_names = [d for d in meta["index_columns"] if isinstance(d, str)]
    n_data = len(meta["columns"]) - len(index_names)
    position = {f.name: i for i, f in reversed(list(enumerate(fields)))}
    columns = list(columns)
    for i, cm in enumerate(meta["columns"]):
        raw_name = cm.get("field_name")
        if not raw_name:                    # metadata written without field names
            raw_name = cm["name"]
            if i >= n_data:
                raw_name = index_names[i - n_data]
            if raw_name is None:
                raw_name = "None"
        j = position.get(raw_name)
        if j is None or cm["pandas_type"] != "datetimetz":
            continue
        t = fields[j].type
        tz = (cm.get("metadata") or {}).get("timezone")
        if not isinstance(t, TimestampType) or not tz or tz == t.tz:
            continue
        try:
            _tzinfo(tz)
        except ArrowInvalid as e:
            raise ArrowInvalid(f"pandas metadata: columns[{i}] ({raw_name!r}): {e}") from None
        from .. import types as T
        from ..data.cast import cast_data
        target = T.timestamp("ns", tz)
        columns[j] = [cast_data(d, target) for d in columns[j]]
        fields[j] = Field(fields[j].name, target)
    return columns


def table_to_dataframe(schema: Schema, columns: list[list[ArrayData]], num_rows: int,
                       opts: ToPandasOptions,
                       release: Any = None) -> Any:
    """A DataFrame from `columns` (one list of ArrayData chunks per field of `schema`).

    `release(i)`, when given (self_destruct), is called once column i is converted so the caller
    can drop its references to that column's buffers."""
    conv = _Converter(opts)
    conv.for_table = True
    pd, np = conv.pd, conv.np
    fields = list(schema)
    meta = None if opts.ignore_metadata else schema_pandas_metadata(schema)
    if meta is not None:
        check_pandas_metadata(meta)
        columns = _metadata_time_zones(meta, fields, columns)
    columns_meta = meta["columns"] if meta else []
    column_indexes = meta.get("column_indexes", []) if meta else []
    attributes = meta.get("attributes", {}) if meta else {}
    categories = set(opts.categories)

    # index columns named in the metadata leave the table and become the index
    index_fields: list[Any] = []
    index_parts = []
    if meta is not None:
        meta_by_field = {c.get("field_name", c["name"]): c for c in columns_meta}
        for position, descr in enumerate(meta["index_columns"]):
            if isinstance(descr, str):
                j = schema.get_field_index(descr)
                if j < 0:
                    continue                # ARROW-1883: an index column the table lost
                if j in index_fields:
                    raise ArrowInvalid(f"pandas metadata: index_columns names {descr!r} "
                                       f"twice")
                logical = meta_by_field[descr]["name"]
                name = None if (logical == descr and _GENERATED_INDEX.match(descr)) else logical
                index_fields.append(j)
                index_parts.append(("column", j, name))
            else:                           # a range (check_pandas_metadata)
                try:
                    rng = pd.RangeIndex(descr["start"], descr["stop"], step=descr["step"],
                                        name=descr["name"])
                    length = len(rng)
                except (TypeError, ValueError, OverflowError) as err:
                    raise ArrowInvalid(f"pandas metadata: index_columns[{position}] is not a "
                                       f"range pandas can make ({err}): "
                                       f"{str(descr)[:200]}") from None
                if length == num_rows:      # else dropped, as pyarrow drops it
                    index_parts.append(("range", rng, descr["name"]))

    data_idx = [i for i in range(len(fields)) if i not in index_fields]
    data_fields = [fields[i] for i in data_idx]
    from_metadata: set[str] = set()
    ext = _ext_dtypes(conv, data_fields, columns_meta, categories, from_metadata)
    if meta is None and opts.types_mapper is None:
        ext = {}
    plans = []
    categorical = []                        # per data column: does it become a Categorical?
    for i in data_idx:
        f = fields[i]
        chunks = columns[i]
        e = ext.get(f.name)
        # pyarrow's rule: every string and binary layout (views too), not fixed-size binary; a
        # column given an extension dtype (types_mapper, the metadata) keeps it instead
        cat = opts.strings_to_categorical and _storage(f.type).kind in _STRING_KINDS
        cat = e is None and (cat or f.name in categories)
        if e is None and not cat and conv.uses_string_dtype and \
                _storage(f.type).kind in _STRING_KINDS and \
                getattr(_storage(f.type), "is_utf8", False) and not \
                isinstance(f.type, ExtensionType):
            e = conv.string_dtype()
        if opts.split_blocks and _storage(f.type).kind == Kind.RUN_END_ENCODED:
            # pyarrow's split-block writer has none for them
            raise ArrowNotImplementedError(f"No known equivalent Pandas block for Arrow data of "
                                           f"type {f.type} is known.")
        plans.append(conv.column(chunks, f.type, e if not cat else None, cat))
        categorical.append(cat or _storage(f.type).kind == Kind.DICTIONARY)
        if e is not None and not cat and f.name in from_metadata:
            plans[-1].build = _metadata_dtype_build(plans[-1].build, f.name, e)
        if opts.zero_copy_only and opts.split_blocks:
            # column by column, as pyarrow: a copy is refused before a later column's type
            _check_zero_copy(f, plans[-1], chunks, np)
    # after the plans: a type pandas has no block for is refused first (pyarrow's order)
    if opts.zero_copy_only and not opts.split_blocks:
        # pyarrow writes column by column: the first column decides the message (a Categorical
        # has its own, any other cannot land in a consolidated block); no column, no copy
        for i, cat in zip(data_idx, categorical):
            if cat:
                _refuse_copy(columns[i])
            raise ArrowInvalid("Cannot do zero copy conversion into multi-column DataFrame "
                               "block")

    # index arrays (converted like pyarrow: the column's own to_pandas, name restored after).
    # pyarrow passes that call types_mapper and nothing else: the other options (nanosecond
    # coercion, date_as_object, integer_object_nulls, ...) leave index levels alone
    index = None
    if index_parts:
        index_conv = _Converter(ToPandasOptions(types_mapper=opts.types_mapper))
        arrays, names = [], []
        for kind, what, name in index_parts:
            if kind == "range":
                arrays.append(what)
            else:
                f = fields[what]
                e = None
                if opts.types_mapper is not None:
                    e = _mapped(opts.types_mapper, f.type)
                if e is None and index_conv.uses_string_dtype and \
                        _storage(f.type).kind in _STRING_KINDS and \
                        getattr(_storage(f.type), "is_utf8", False):
                    e = index_conv.string_dtype()
                arr = index_conv.column(columns[what], f.type, e).to_array(
                    np, _total(columns[what]))
                arrays.append(pd.Index(arr, name=None))
            names.append(name)
        if len(arrays) > 1:
            index = pd.MultiIndex.from_arrays(arrays, names=names)
        else:
            index = arrays[0]
            if not isinstance(index, pd.Index):
                index = pd.Index(index, name=names[0])
            else:
                index = index.rename(names[0])
    if index is None:
        index = pd.RangeIndex(num_rows)
    col_index = _column_index(pd, [f.name for f in data_fields], columns_meta, column_indexes)

    blocks = _blocks(conv, plans, num_rows, release, data_idx)
    try:
        from pandas.api.internals import create_dataframe_from_blocks
    except ImportError:                     # pandas < 3
        create_dataframe_from_blocks = _frame_from_blocks
    df = create_dataframe_from_blocks(blocks, index=index, columns=col_index)
    df.attrs = attributes if isinstance(attributes, dict) else {}
    return df


def _frame_from_blocks(blocks: Any, index: Any, columns: Any) -> Any:
    """A DataFrame from (block, placement) pairs through the public constructor (pandas
    releases without pandas.api.internals); columns are handed over without copies."""
    pd = _pandas()
    arrays = [None] * len(columns)
    for arr, places in blocks:
        if getattr(arr, "ndim", 1) == 2:
            for row, pos in enumerate(places.tolist()):
                arrays[pos] = arr[row]
        else:
            arrays[int(places[0])] = arr
    df = pd.DataFrame(dict(enumerate(arrays)), index=index, copy=False)
    df.columns = columns
    return df


def _check_zero_copy(f: Field, plan: _Column, chunks: list[ArrayData], np: Any) -> None:
    st = _storage(f.type)
    if st.kind == Kind.BOOL:
        raise ArrowInvalid("Zero copy conversions not possible with boolean types")
    if plan.dtype is not None and plan.view is not None and len(chunks) == 1 and \
            not _null_count(chunks[0]):
        return
    if plan.dtype is None and st.kind in _STRING_KINDS and getattr(st, "is_utf8", False):
        return      # strings are wrapped, as in pyarrow
    if isinstance(st, TimestampType) and plan.dtype is None and plan.view is not None and \
            len(chunks) == 1 and not _null_count(chunks[0]):
        return      # with a time zone: the values viewed, the zone on the dtype (as pyarrow)
    _refuse_copy(chunks, st.kind == Kind.DICTIONARY)


def _refuse_copy(chunks: list[ArrayData], categorical: bool = True) -> None:
    """pyarrow's refusal of a column zero_copy_only cannot give without a copy."""
    nulls = sum(_null_count(d) for d in chunks)
    # pyarrow's categorical writer sees at least one chunk (an empty column has one)
    n = max(len(chunks), 1) if categorical else len(chunks)
    raise ArrowInvalid(f"Needed to copy {n} chunks with {nulls} nulls, but "
                       f"zero_copy_only was True")


def _blocks(conv: _Converter, plans: list[_Column], n: int, release: Any, data_idx: Any
            ) -> list[Any]:
    """(block array, placement) pairs: numpy columns consolidated by dtype into 2-D blocks
    (unless split_blocks), extension arrays one per block. Conversion tasks run in parallel."""
    np, o = conv.np, conv.o
    blocks = []
    placements_by_dtype: dict[Any, Any] = {}
    for pos, p in enumerate(plans):
        if p.dtype is None or o.split_blocks:
            continue
        placements_by_dtype.setdefault(p.dtype, []).append(pos)
    block_of = {}
    for dtype, places in placements_by_dtype.items():
        arr = _empty(np, (len(places), n), dtype)
        blocks.append((arr, np.array(places, dtype=np.intp)))
        for row, pos in enumerate(places):
            block_of[pos] = (arr, row)
    results: dict[Any, Any] = {}

    def task(pos: Any) -> Any:
        def run() -> None:
            p = plans[pos]
            if pos in block_of:
                arr, row = block_of[pos]
                p.fill(arr[row])
            elif p.dtype is None:
                results[pos] = p.build()
            else:
                results[pos] = p.to_array(np, n)
            if release is not None:       # self_destruct: drop this column's buffers now
                plans[pos] = None  # type: ignore[call-overload]  # done: its buffers may go
                release(data_idx[pos])
        return run
    tasks = [task(pos) for pos in range(len(plans))]
    _run(tasks, o.use_threads and not o.self_destruct)
    for pos in sorted(results):
        arr = results[pos]
        if isinstance(arr, np.ndarray):
            arr = arr.reshape(1, n)
        blocks.append((arr, np.array([pos], dtype=np.intp)))
    return blocks


def chunked_to_series(chunks: list[ArrayData], t: DataType, opts: ToPandasOptions,
                      name: Any = None) -> Any:
    """A Series from one column (ChunkedArray.to_pandas / Array.to_pandas)."""
    conv = _Converter(opts)
    pd, np = conv.pd, conv.np
    st = _storage(t)
    e = None
    if opts.types_mapper is not None:
        e = _mapped(opts.types_mapper, t)
    is_str = st.kind in _STRING_KINDS and getattr(st, "is_utf8", False)
    # a types_mapper's dtype wins over strings_to_categorical, as in pyarrow
    cat = e is None and opts.strings_to_categorical and st.kind in _STRING_KINDS
    if e is None and is_str and not cat and conv.uses_string_dtype and \
            not isinstance(t, ExtensionType):
        e = conv.string_dtype()
    plan = conv.column(chunks, t, e if not cat else None, cat)
    if opts.zero_copy_only:
        _check_zero_copy(Field(name or "", t), plan, chunks, np)
    values = plan.to_array(np, _total(chunks))
    if opts.timestamp_as_object and isinstance(st, TimestampType) and st.unit == "ns":
        # a Series of nanosecond timestamps as objects holds pandas Timestamps (and NaT)
        return pd.Series(values, name=name, copy=False).astype(object)
    if isinstance(values, np.ndarray) and values.dtype == object:
        # objects stay objects: pandas 3 would infer datetime64 from datetimes (as pyarrow, which
        # keeps timestamp_as_object's datetimes, with or without a time zone)
        return pd.Series(values, name=name, dtype=object, copy=False)
    return pd.Series(values, name=name, copy=False)


def _views_as_large_offsets(t: Any, chunks: list[Any]) -> tuple[Any, list[Any]]:
    """(type, chunks) to hand pandas through pyarrow: string and binary views cast here to
    large_string and large_binary. pandas casts what it gets with pyarrow's kernel, which reads
    the views of null slots too (any bytes in valid data: pyarrow 26 crashes on a negative
    length there); our cast skips them, and copies no more than that one would."""
    if t.kind != Kind.VIEW:
        return t, chunks
    from .. import types as T
    from ..data.cast import cast_data
    large = T.large_string() if t.is_utf8 else T.large_binary()
    return large, [cast_data(d, large) for d in chunks]
