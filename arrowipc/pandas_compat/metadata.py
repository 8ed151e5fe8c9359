"""The `pandas` schema metadata, in pyarrow's format: what from_pandas writes (a column's
pandas_type and numpy_type, index and column index descriptors, names) and what to_pandas reads
back from it (the DataFrame's columns Index)."""
from __future__ import annotations

import json as _json

from ..errors import ArrowTypeError
from ..types import (DataType, DecimalType, DictionaryType, ExtensionType, FixedSizeBinaryType,
                     Kind, MapType, Time32Type, Time64Type, TimestampType)
from .common import _numpy, _tzinfo

TYPE_CHECKING = False               # typing itself is not imported at run time
if TYPE_CHECKING:
    from typing import Any


def _column_index(pd: Any, names: list[Any], columns_meta: Any, column_indexes: Any) -> Any:
    """The DataFrame's columns Index, as pyarrow rebuilds it from the metadata."""
    import ast
    np = _numpy()
    if columns_meta:
        by_field: dict[Any, Any] = {}
        for c in columns_meta:
            if isinstance(c, dict):
                by_field[c.get("field_name", c.get("name"))] = c.get("name")
        values = [by_field.get(n, n) for n in names]
    else:
        values = list(names)
    if len(column_indexes) > 1:
        columns = pd.MultiIndex.from_tuples([ast.literal_eval(v) for v in values],
                                            names=[ci.get("name") for ci in column_indexes])
    else:
        columns = pd.Index(values, name=column_indexes[0].get("name") if column_indexes else None)
    if not column_indexes:
        return columns
    levels = list(getattr(columns, "levels", None) or [columns])
    codes = getattr(columns, "codes", None) or [None]
    new_levels = []
    logical = {"date": "datetime64[D]", "datetime": "datetime64[ns]",
               "datetimetz": "datetime64[ns]", "unicode": "str", "bytes": np.bytes_,
               "string": "str", "integer": np.int64, "floating": np.float64,
               "decimal": np.object_, "empty": np.object_}
    for i, level in enumerate(levels):
        ci = column_indexes[i] if i < len(column_indexes) else {}
        pandas_type = ci.get("pandas_type", str(level.dtype))
        numpy_type = ci.get("numpy_type")
        dtype = logical.get(pandas_type)
        if dtype is None:
            dtype = np.object_ if "mixed" in pandas_type else np.dtype(pandas_type)
        if dtype is np.bytes_:
            level = level.map(lambda s: s.encode("UTF-8"))
        elif pandas_type == "datetimetz":
            tz = _tzinfo(column_indexes[0]["metadata"]["timezone"])
            level = pd.to_datetime(level, utc=True).tz_convert(tz)
            level = level.as_unit(np.datetime_data(numpy_type)[0])
        elif pandas_type == "decimal":
            import decimal
            level = pd.Index([decimal.Decimal(x) for x in level])
        elif level.dtype == "str" and numpy_type == "object" and (
                "mixed" in pandas_type or pandas_type in ("unicode", "string")):
            new_levels.append(level)
            continue
        elif level.dtype != dtype:
            level = level.astype(dtype)
        if level.dtype != numpy_type and pandas_type != "datetimetz":
            level = level.astype(numpy_type)
        new_levels.append(level)
    if len(new_levels) > 1:
        return pd.MultiIndex(new_levels, codes, names=columns.names)
    return pd.Index(new_levels[0], dtype=new_levels[0].dtype, name=columns.name)


def _column_name_to_string(name: Any) -> Any:
    if isinstance(name, str):
        return name
    if isinstance(name, bytes):
        return name.decode("utf8")
    if isinstance(name, tuple):
        return str(tuple(map(_column_name_to_string, name)))
    from collections.abc import Sequence
    if isinstance(name, Sequence):
        raise TypeError("Unsupported type for MultiIndex level")
    if name is None or (isinstance(name, float) and name != name):
        return name
    return str(name)


def _logical_type(t: DataType) -> str:
    """pandas_type of a column in the metadata, from its Arrow type (pyarrow's mapping)."""
    simple = {Kind.NULL: "empty", Kind.BOOL: "bool"}
    if t.kind in simple:
        return simple[t.kind]
    names = {"int8": "int8", "int16": "int16", "int32": "int32", "int64": "int64",
             "uint8": "uint8", "uint16": "uint16", "uint32": "uint32", "uint64": "uint64",
             "halffloat": "float16", "float": "float32", "double": "float64",
             "date32[day]": "date", "date64[ms]": "date"}
    if isinstance(t, ExtensionType):
        return "object"
    if t.name in names:
        return names[t.name]
    if isinstance(t, (Time32Type, Time64Type)):
        return "time"
    if isinstance(t, FixedSizeBinaryType):
        return "bytes"
    if t.kind == Kind.BINARY:
        return "unicode" if t.is_utf8 else "bytes"  # type: ignore[attr-defined]  # BINARY
    if isinstance(t, DictionaryType):
        return "categorical"
    if t.kind == Kind.LIST and not isinstance(t, MapType):
        return f"list[{_logical_type(t.value_type)}]"  # type: ignore[attr-defined]  # LIST
    if isinstance(t, TimestampType):
        return "datetimetz" if t.tz is not None else "datetime"
    if isinstance(t, DecimalType):
        return "decimal"
    return "object"


def _tz_string(tz: Any) -> str:
    """Arrow's time zone string for a tzinfo (pyarrow's tzinfo_to_string)."""
    import datetime as dt
    key: str | None = getattr(tz, "key", None) or getattr(tz, "zone", None)
    if key:
        return key
    if tz is dt.timezone.utc:
        return "UTC"
    if isinstance(tz, dt.timezone) or hasattr(tz, "utcoffset"):
        off = tz.utcoffset(None)
        if off is not None:
            total = int(off.total_seconds())
            sign = "-" if total < 0 else "+"
            total = abs(total)
            return f"{sign}{total // 3600:02d}:{total % 3600 // 60:02d}"
    name = str(tz)
    if name:
        return name
    raise ArrowTypeError(f"cannot express time zone {tz!r} as an Arrow time zone string")


def _dtype_info(pd: Any, col: Any) -> Any:
    """(numpy_type string, extra metadata) of a pandas column for the metadata."""
    dtype = col.dtype
    if isinstance(dtype, pd.CategoricalDtype):
        cats = getattr(col, "cat", col)
        return str(cats.codes.dtype), {"num_categories": len(cats.categories),
                                       "ordered": bool(cats.ordered)}
    if hasattr(dtype, "tz"):
        return f"datetime64[{dtype.unit}]", {"timezone": _tz_string(dtype.tz)}
    return str(dtype), None


def _column_metadata(pd: Any, col: Any, name: Any, t: DataType, field_name: str) -> dict[str, Any]:
    logical = _logical_type(t)
    numpy_type, extra = _dtype_info(pd, col)
    if logical == "decimal":
        extra = {"precision": t.precision, "scale": t.scale}  # type: ignore[attr-defined]
        numpy_type = "object"
    if name is not None and not (isinstance(name, float) and name != name) and \
            not isinstance(name, str):
        raise TypeError(f"Column name must be a string. Got column {name} of type "
                        f"{type(name).__name__}")
    return {"name": name, "field_name": field_name, "pandas_type": logical,
            "numpy_type": numpy_type, "metadata": extra}


def _numpy_logical_type(pd: Any, level: Any) -> str:
    np = _numpy()
    mapping = {np.bool_: "bool", np.int8: "int8", np.int16: "int16", np.int32: "int32",
               np.int64: "int64", np.uint8: "uint8", np.uint16: "uint16", np.uint32: "uint32",
               np.uint64: "uint64", np.float32: "float32", np.float64: "float64",
               np.str_: "string", np.bytes_: "bytes"}
    t = getattr(level.dtype, "type", None)
    if t in mapping and isinstance(level.dtype, np.dtype):
        return mapping[t]
    if str(level.dtype) == "datetime64[D]":
        return "date"
    if hasattr(level.dtype, "tz"):
        return "datetimetz"
    if str(level.dtype).startswith("datetime64"):
        return str(level.dtype)
    result = pd.api.types.infer_dtype(level, skipna=False)
    return "unicode" if result == "string" else result


def _column_index_descriptor(pd: Any, level: Any, name: Any) -> dict[str, Any]:
    numpy_type, extra = _dtype_info(pd, level)
    pandas_type = _numpy_logical_type(pd, level)
    if "mixed" in pandas_type:
        import warnings
        warnings.warn("The DataFrame has column names of mixed type. They will be converted to "
                      "strings and not roundtrip correctly.", UserWarning, stacklevel=5)
    if pandas_type == "unicode":
        extra = {"encoding": "UTF-8"}
    return {"name": name, "field_name": name, "pandas_type": pandas_type,
            "numpy_type": numpy_type, "metadata": extra}


def _level_name(name: Any) -> Any:
    try:
        _json.dumps(name)
        return name
    except TypeError:
        return str(name)


def _index_level_name(index: Any, i: int, column_names: list[Any]) -> Any:
    if index.name is not None and index.name not in column_names:
        return _column_name_to_string(index.name)
    j = i
    while f"__index_level_{j:d}__" in column_names:
        j += 1
    return f"__index_level_{j:d}__"
