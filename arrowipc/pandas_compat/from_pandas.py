"""pandas DataFrames, Series and numpy arrays to Arrow: the Arrow types pyarrow infers, the
values as zero-copy as pyarrow's (numbers), and the `pandas` schema metadata pyarrow writes."""
from __future__ import annotations

import json as _json

from .._core.arraydata import ArrayData
from .._core import pandas_kernels as _k
from ..array import BINARY_CHUNK_LIMIT, binary_chunk_bounds, binary_chunk_data
from ..errors import (ArrowCapacityError, ArrowException, ArrowInvalid, ArrowNotImplementedError,
                      ArrowTypeError)
from ..types import DataType, Field, Kind, Schema
from .common import _GENERATED_INDEX, _NAT, _numpy, _pandas, _run
from .metadata import (_column_index_descriptor, _column_metadata, _column_name_to_string,
                       _index_level_name, _level_name, _tz_string)

TYPE_CHECKING = False               # typing itself is not imported at run time
if TYPE_CHECKING:
    from typing import Any

    from ..array import Array

__all__ = ["dataframe_to_arrays", "dataframe_to_schema", "ndarray_to_array_data",
           "series_to_array", "series_to_array_data"]


def _index_levels(index: Any) -> list[Any]:
    n = len(getattr(index, "levels", [index]))
    return [index.get_level_values(i) for i in range(n)]


def _index_level_by_name(df: Any, name: Any) -> Any:
    key = name
    if name not in df.index.names and _GENERATED_INDEX.match(name):
        key = int(name[len("__index_level_"):-2])
    return df.index.get_level_values(key)


def dataframe_to_arrays(df: Any, schema: Schema | None = None, preserve_index: bool | None = None,
                        nthreads: int | None = None, columns: Any = None, safe: bool = True,
                        chunked: bool = False) -> tuple[list[Any], Schema]:
    """(arrays, final schema) for Table/RecordBatch.from_pandas (pyarrow's rules and metadata).

    With `chunked`, a column pandas holds in several Arrow chunks (Arrow-backed dtypes) stays
    chunked and every array is a ChunkedArray (for a Table); otherwise chunks are combined."""
    if schema is not None and not isinstance(schema, Schema):
        from ..data.interop import peer_as_ours
        ours = peer_as_ours(schema, "schema")         # pyarrow's (or another library's)
        if ours is None:
            raise TypeError(f"schema must be a Schema, not {type(schema).__name__}")
        schema = ours
    pd = _pandas()
    if not isinstance(df, pd.DataFrame):
        raise ArrowTypeError(f"from_pandas expects a pandas.DataFrame, got {type(df).__name__}")
    if columns is not None:
        wanted = [c for c in columns if c in df.columns]
        cols_of_interest = wanted
    elif schema is not None:
        cols_of_interest = list(schema.names)
    else:
        cols_of_interest = list(df.columns)
    if not df.columns.is_unique:
        raise ValueError(f"Duplicate column names found: {list(df.columns)}")

    index_levels: list[Any] = []
    index_descriptors: list[dict[str, Any] | str] = []     # a RangeIndex's dict, or a column name
    index_column_names: list[Any] = []
    to_convert: list[Any] = []
    fields_given: list[Field | None] = []
    column_names: list[Any] = []
    field_names: list[str] = []
    if schema is not None:
        for name in schema.names:
            try:
                col = df[name]
                is_index = False
            except KeyError:
                try:
                    col = _index_level_by_name(df, name)
                except (KeyError, IndexError):
                    raise KeyError(f"name '{name}' present in the specified schema is not found "
                                   f"in the columns or index") from None
                if preserve_index is False:
                    raise ValueError(f"name '{name}' present in the specified schema corresponds "
                                     f"to the index, but 'preserve_index=False' was specified")
                if preserve_index is None and isinstance(col, pd.RangeIndex):
                    raise ValueError(
                        f"name '{name}' is present in the schema, but it is a RangeIndex which "
                        f"will not be converted as a column in the Table, but saved as "
                        f"metadata-only not in columns. Specify 'preserve_index=True' to force "
                        f"it being added as a column, or remove it from the specified schema")
                is_index = True
            to_convert.append(col)
            fields_given.append(schema.field(name))
            column_names.append(name)
            if is_index:
                index_column_names.append(name)
                index_descriptors.append(name)
                index_levels.append(col)
        data_names = column_names
        field_names = column_names
        all_names = column_names + index_column_names
        n_data = len(column_names) - len(index_column_names)
    else:
        index_levels = _index_levels(df.index) if preserve_index is not False else []
        for name in cols_of_interest:
            col = df[name]
            if isinstance(col, pd.DataFrame):
                raise ValueError(f"Duplicate column names found: {list(df.columns)}")
            if isinstance(col.dtype, pd.SparseDtype):
                raise TypeError(f"Sparse pandas data (column {name}) not supported.")
            name = _column_name_to_string(name)
            to_convert.append(col)
            fields_given.append(None)
            column_names.append(name)
            field_names.append(str(name))
        for i, level in enumerate(index_levels):
            name = _index_level_name(level, i, column_names + index_column_names)
            descr: dict[str, Any] | str
            if isinstance(level, pd.RangeIndex) and preserve_index is None:
                descr = {"kind": "range", "name": _level_name(level.name), "start": level.start,
                         "stop": level.stop, "step": level.step}
            else:
                to_convert.append(level)
                fields_given.append(None)
                descr = name
                index_column_names.append(name)
            index_descriptors.append(descr)
        data_names = column_names
        all_names = field_names + index_column_names
        n_data = len(column_names)

    tasks = []
    for col, fld, name in zip(to_convert, fields_given, all_names):
        tasks.append(lambda col=col, fld=fld, name=name: _convert_series(
            pd, col, fld, name, safe, chunked))
    threads = nthreads is None or nthreads > 1
    arrays = _run(tasks, threads and len(df) * len(tasks) > 100_000)

    types = [a.type for a in arrays]
    fields = []
    for name, arr, fld in zip(all_names, arrays, fields_given):
        if fld is not None:
            fields.append(fld)
        else:
            fields.append(Field(str(name) if name is not None else "None", arr.type))

    # the pandas metadata (pyarrow's construct_metadata)
    column_md = [_column_metadata(pd, col, name, t, str(fname))
                 for col, name, fname, t in zip(to_convert[:n_data], data_names[:n_data],
                                                field_names[:n_data], types[:n_data])]
    serialized = [(lv, d) for lv, d in zip(index_levels, index_descriptors)
                  if not isinstance(d, dict)]
    index_md, column_indexes = [], []
    if preserve_index is not False:
        for (level, descr), t in zip(serialized, types[n_data:]):
            index_md.append(_column_metadata(pd, level, _column_name_to_string(level.name), t,
                                             descr))
        levels = getattr(df.columns, "levels", [df.columns])
        names = getattr(df.columns, "names", [df.columns.name])
        for level, name in zip(levels, names):
            column_indexes.append(_column_index_descriptor(pd, level, name))
    else:
        index_descriptors = []
    attributes = df.attrs
    try:
        _json.dumps(attributes)
    except Exception as e:
        import warnings
        warnings.warn(f"Could not serialize pd.DataFrame.attrs: {e}, defaulting to empty "
                      f"attributes.", UserWarning, stacklevel=4)
        attributes = {}
    from .._version import __version__
    meta = {b"pandas": _json.dumps({
        "index_columns": index_descriptors,
        "column_indexes": column_indexes,
        "columns": column_md + index_md,
        "attributes": attributes,
        "creator": {"library": "arrowipc", "version": __version__},
        "pandas_version": pd.__version__,
    }).encode("utf8")}
    old = schema.metadata if schema is not None else None
    md = dict(old or {})
    md.update(meta)
    return arrays, Schema(fields, md)


def _convert_series(pd: Any, col: Any, field: Field | None, name: Any, safe: bool,
                    chunked: bool = False) -> Any:
    from ..array import ChunkedArray, make_array
    try:
        data = series_to_array_data(col, field.type if field is not None else None, safe,
                                    chunked)
        if isinstance(data, list):
            return ChunkedArray([make_array(d) for d in data], data[0].type)
        if chunked:
            return ChunkedArray([make_array(data)], data.type)
    except (ArrowInvalid, ArrowTypeError, ArrowNotImplementedError) as e:
        dtype = getattr(col, "dtype", None)
        e.args = (e.args[0] if e.args else str(e),
                  f"Conversion failed for column {name!s} with type {dtype}")
        raise
    return make_array(data)


def _buffer_of(np: Any, values: Any) -> Any:
    from .._core.buffer import py_buffer
    values = np.ascontiguousarray(values)
    if values.dtype.byteorder == ">":
        values = values.astype(values.dtype.newbyteorder("<"))
    return py_buffer(values.view("uint8").reshape(-1) if values.ndim else values)


def series_to_array_data(col: Any, type: DataType | None = None, safe: bool = True,
                         keep_chunks: bool = False) -> Any:
    """One pandas Series/Index/array as ArrayData, typed like pyarrow's from_pandas (a list of
    ArrayData chunks when keep_chunks and pandas holds the column as several Arrow chunks)."""
    pd, np = _pandas(), _numpy()
    from .. import types as T
    values = col.array if hasattr(col, "array") else col
    dtype = getattr(values, "dtype", None)
    if isinstance(values, pd.arrays.NumpyExtensionArray) and not isinstance(dtype, pd.StringDtype):
        # (pandas' python-storage strings are one too: their dtype types them, nulls or not)
        values = values.to_numpy()
        dtype = values.dtype
    if isinstance(dtype, pd.CategoricalDtype):
        return _categorical_data(pd, np, values, type, safe)
    if isinstance(dtype, pd.StringDtype):
        if dtype.storage == "pyarrow" and hasattr(values, "_pa_array"):
            return _from_arrow_exporter(values._pa_array, type, keep_chunks)
        t = type if type is not None else T.string()
        data = _object_data(np, np.asarray(values._ndarray), T.string(), safe)
        if isinstance(data, list):          # over 2 GiB: pyarrow's chunks
            return [_cast_if_needed(d, t, safe) for d in data]
        return _cast_if_needed(data, t, safe)
    if isinstance(dtype, pd.DatetimeTZDtype):
        ints = np.asarray(values.asi8 if hasattr(values, "asi8") else values.view("i8"))
        t = T.timestamp(dtype.unit, _tz_string(dtype.tz))
        return _cast_if_needed(_sentinel_data(np, ints, t), type, safe)
    from pandas.core.arrays.masked import BaseMaskedArray
    if isinstance(values, BaseMaskedArray):
        data = values._data
        t = _numpy_type(np, data.dtype)
        return _cast_if_needed(_masked_data(np, data, values._mask, t), type, safe)
    if hasattr(values, "_pa_array"):          # ArrowExtensionArray: pyarrow already holds it
        return _from_arrow_exporter(values._pa_array, type, keep_chunks)
    if isinstance(dtype, pd.IntervalDtype) or isinstance(dtype, pd.PeriodDtype):
        raise ArrowNotImplementedError(f"converting pandas {dtype} columns is not supported "
                                       f"without pyarrow's extension types")
    if not isinstance(values, np.ndarray):
        values = np.asarray(values)
    return ndarray_to_array_data(values, type, safe)


def _from_arrow_exporter(obj: Any, type: Any, keep_chunks: bool = False) -> Any:
    from ..array import chunked_array
    ca = chunked_array(obj)
    if keep_chunks and len(ca.chunks) > 1 and (type is None or type == ca.type):
        return [c.data for c in ca.chunks]
    # combine_chunks also covers zero chunks (pandas backs an empty column with none)
    data = ca.chunks[0].data if len(ca.chunks) == 1 else ca.combine_chunks().data
    return _cast_if_needed(data, type, True)


def _cast_if_needed(data: ArrayData, type: Any, safe: bool) -> ArrayData:
    if type is None or data.type == type:
        return data
    from ..array import make_array
    from ..data.from_python import array_data_from_python
    arr = make_array(data)
    try:
        return array_data_from_python(arr.to_pylist(), type)
    except (ArrowInvalid, ArrowTypeError) as e:
        raise ArrowInvalid(f"cannot convert {data.type} to {type}: {e}") from None


def _numpy_type(np: Any, dtype: Any) -> DataType:
    from .. import types as T
    k = dtype.kind
    if k == "b":
        return T.bool_()
    if k in "iu":
        return T.type_for_alias(f"{'int' if k == 'i' else 'uint'}{dtype.itemsize * 8}")
    if k == "f":
        return {2: T.float16(), 4: T.float32(), 8: T.float64()}[dtype.itemsize]
    raise ArrowNotImplementedError(f"no Arrow type for numpy dtype {dtype}")


def _masked_data(np: Any, data: Any, mask: Any, t: Any) -> ArrayData:
    from .._core.bitmap import pack_bools
    n = len(data)
    nulls = int(mask.sum()) if n else 0
    validity = None
    if nulls:
        validity, _ = pack_bools(np.ascontiguousarray(~mask).view(np.uint8))
    if t.kind == Kind.BOOL:
        bits, _ = pack_bools(np.ascontiguousarray(data).view(np.uint8))
        return ArrayData(t, n, 0, nulls, [validity, bits])
    return ArrayData(t, n, 0, nulls, [validity, _buffer_of(np, data)])


def _sentinel_data(np: Any, ints: Any, t: Any) -> ArrayData:
    ints = np.ascontiguousarray(ints, dtype="int64")
    validity, nulls = _k.sentinel_validity(ints, _NAT)
    return ArrayData(t, len(ints), 0, nulls, [validity, _buffer_of(np, ints)])


def ndarray_to_array_data(values: Any, type: DataType | None = None, safe: bool = True
                          ) -> ArrayData | list[ArrayData]:
    """A 1-D numpy array as ArrayData: numbers zero-copy (NaN as null for floats), datetimes and
    timedeltas with NaT as null, booleans packed, objects inferred like pyarrow. Binary or string
    objects over 2 GiB in all come as a list of ArrayData chunks, split where pyarrow splits."""
    np = _numpy()
    from .. import types as T
    if values.ndim != 1:
        raise ArrowInvalid(f"only 1-D arrays can be converted, got {values.ndim} dimensions")
    k = values.dtype.kind
    n = len(values)
    if k == "O":
        return _object_data(np, values, type, safe)
    if k in "iu":
        t = _numpy_type(np, values.dtype)
        return _cast_if_needed(ArrayData(t, n, 0, 0, [None, _buffer_of(np, values)]), type, safe)
    if k == "f":
        t = _numpy_type(np, values.dtype)
        validity, nulls = _k.float_validity(np.ascontiguousarray(values))
        data = ArrayData(t, n, 0, nulls, [validity, _buffer_of(np, values)])
        return _cast_if_needed(data, type, safe)
    if k == "b":
        from .._core.bitmap import pack_bools
        bits, _ = pack_bools(np.ascontiguousarray(values).view(np.uint8))
        return _cast_if_needed(ArrayData(T.bool_(), n, 0, 0, [None, bits]), type, safe)
    if k in "Mm":
        unit, count = np.datetime_data(values.dtype)
        if count != 1 or unit not in ("s", "ms", "us", "ns", "D"):
            raise ArrowNotImplementedError(f"unsupported numpy unit in {values.dtype}")
        if unit == "D":
            ints = values.view("int64")
            validity, nulls = _k.sentinel_validity(np.ascontiguousarray(ints), _NAT)
            days = ints.astype("int32")
            return _cast_if_needed(ArrayData(T.date32(), n, 0, nulls,
                                             [validity, _buffer_of(np, days)]), type, safe)
        t = T.timestamp(unit) if k == "M" else T.duration(unit)
        return _cast_if_needed(_sentinel_data(np, values.view("int64"), t), type, safe)
    if k in "US":
        return _object_data(np, values.astype(object), type, safe)
    raise ArrowNotImplementedError(f"converting numpy dtype {values.dtype} is not supported")


def _object_data(np: Any, values: Any, type: Any, safe: bool) -> ArrayData | list[ArrayData]:
    """An object array: strings in one C pass; everything else through arrowipc.array's
    inference (pyarrow's rules: NaN and None are null, mixed types raise). ArrayData, or a list
    of ArrayData chunks where pyarrow splits binary or string values over 2 GiB (as pa.array)."""
    from .. import types as T
    values = np.ascontiguousarray(values, dtype=object)
    want_string = type is None or (type.kind in (Kind.BINARY, Kind.LARGE_BINARY) and
                                   getattr(type, "is_utf8", False))
    if want_string:
        offsets, data, validity, nulls, bad = _k.objects_to_utf8(values)
        if bad < 0 and (type is not None or len(values) > nulls):
            t = type if type is not None else T.string()
            assert data is not None             # set whenever no value was refused (bad < 0)
            if t.kind == Kind.BINARY:
                wide = np.frombuffer(offsets, dtype="int64")
                if data.size > BINARY_CHUNK_LIMIT:
                    # pyarrow's chunks (as pa.array), each piece converted again in C
                    bounds = binary_chunk_bounds(wide, t, "from_pandas", BINARY_CHUNK_LIMIT)
                    pieces = []
                    for a, b in zip(bounds, bounds[1:]):
                        piece = _object_data(np, values[a:b], t, safe)
                        assert not isinstance(piece, list)      # each piece fits
                        pieces.append(piece)
                    return pieces
                offsets = _buffer_of(np, wide.astype("int32"))
            return ArrayData(t, len(values), 0, nulls, [validity, offsets, data])
    from ..data.from_python import array_data_from_python
    pd = _pandas()
    items = values.tolist()
    missing = pd.isna(values) if len(values) else np.zeros(0, dtype=bool)
    if missing.any():
        for i in np.flatnonzero(missing).tolist():
            items[i] = None
    if type is None and any(isinstance(v, np.ndarray) for v in items):
        type = _numpy_lists_type(np, items)
    items = [_python_value(pd, np, v) for v in items]
    try:
        return array_data_from_python(items, type)
    except ArrowCapacityError:
        chunks = binary_chunk_data(items, type)       # pyarrow's chunks, as pa.array
        if chunks is None:
            raise
        return chunks


def _numpy_lists_type(np: Any, items: list[Any]) -> Any:
    """The list type pyarrow infers for an object column holding numpy arrays: from their
    dtypes (int32 arrays make list<int32>), which the Python values they become no longer say;
    None to infer from those values."""
    from ..data.from_python import numpy_arrays_type, infer_type
    from .. import types as T
    unified = numpy_arrays_type(items)     # raises where pyarrow refuses to mix the dtypes
    if unified is not None:
        return T.list_(unified)
    try:
        t = infer_type(items)
    except ArrowException:
        return None
    return t if t.kind == Kind.LIST else None


def _python_value(pd: Any, np: Any, v: Any, nested: bool = False) -> Any:
    """numpy and pandas scalars inside object columns as the Python values pyarrow sees; inside
    lists, arrays and dicts NaN is a null too (pyarrow's from_pandas semantics)."""
    if nested and isinstance(v, float) and v != v:
        return None
    if isinstance(v, np.ndarray):
        return [_python_value(pd, np, x, True) for x in v.tolist()]
    if isinstance(v, (list, tuple)) and not hasattr(v, "_fields"):
        return type(v)(_python_value(pd, np, x, True) for x in v)
    if isinstance(v, dict):
        return {k: _python_value(pd, np, x, True) for k, x in v.items()}
    if isinstance(v, np.generic):
        v = v.item()
        return None if nested and isinstance(v, float) and v != v else v
    if isinstance(v, pd.Timestamp):
        return v.to_pydatetime(warn=False)
    if isinstance(v, pd.Timedelta):
        return v.to_pytimedelta()
    if isinstance(v, pd.DateOffset):
        from ..data.to_python import MonthDayNano
        kw = v.kwds
        months = kw.get("years", 0) * 12 + kw.get("months", 0)
        days = kw.get("weeks", 0) * 7 + kw.get("days", 0)
        ns = (((kw.get("hours", 0) * 60 + kw.get("minutes", 0)) * 60 + kw.get("seconds", 0))
              * 1_000_000 + kw.get("microseconds", 0)) * 1000 + kw.get("nanoseconds", 0)
        return MonthDayNano(int(months * v.n), int(days * v.n), int(ns * v.n))
    return v


def _categorical_data(pd: Any, np: Any, values: Any, type: Any, safe: Any) -> ArrayData:
    from .. import types as T
    codes = np.asarray(values.codes)
    cats = values.categories
    if len(cats) == 0 and isinstance(cats.dtype, pd.StringDtype):
        # pyarrow infers no type from no string categories (non-empty ones are large_string)
        cat_data = series_to_array_data(np.array([], dtype=object), None, safe)
    else:
        cat_data = series_to_array_data(pd.Series(cats, copy=False), None, safe)
    index_type = _numpy_type(np, codes.dtype)
    validity, nulls = _k.sentinel_validity(np.ascontiguousarray(codes), -1)
    t = T.dictionary(index_type, cat_data.type, bool(values.ordered))
    data = ArrayData(t, len(codes), 0, nulls, [validity, _buffer_of(np, codes)], [], cat_data)
    return data if type is None or type == t else _cast_if_needed(data, type, safe)


def dataframe_to_schema(df: Any, preserve_index: bool | None = None) -> Schema:
    """The schema Table.from_pandas(df) would have (Schema.from_pandas)."""
    schema: Schema = dataframe_to_arrays(df, None, preserve_index)[1]
    return schema


def series_to_array(obj: Any, mask: Any = None, type: DataType | str | None = None,
                    safe: bool = True) -> Array:
    """Array.from_pandas: a Series, Index or array-like as an Array."""
    from ..array import make_array
    from ..types import ensure_type
    np = _numpy()
    t = ensure_type(type) if type is not None else None
    data = series_to_array_data(obj, t, safe)
    chunks = data if isinstance(data, list) else [data]
    if mask is not None:
        mask = np.asarray(mask, dtype=bool)
        from ..array import array as _array
        values = [v for d in chunks for v in make_array(d).to_pylist()]
        values = [None if m else v for v, m in zip(values, mask.tolist())]
        return _array(values, type=chunks[0].type)
    if len(chunks) > 1:                 # over 2 GiB of binary or string: pyarrow's chunks too
        from ..array import ChunkedArray
        chunked = ChunkedArray([make_array(d) for d in chunks], chunks[0].type)
        return chunked          # type: ignore[return-value]  # as pa.Array.from_pandas
    return make_array(chunks[0])
