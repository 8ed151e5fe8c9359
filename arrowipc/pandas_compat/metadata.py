"""The `pandas` schema metadata, in pyarrow's format: what from_pandas writes (a column's
pandas_type and numpy_type, index and column index descriptors, names) and what to_pandas reads
back from it (the DataFrame's columns Index).

Metadata read back comes with the data, so it is untrusted: check_pandas_metadata checks its
shape before to_pandas uses any of it, and every value it names (dtype strings, index levels,
time zones) that pandas or numpy refuse is an ArrowInvalid saying which entry holds it. What
pyarrow 26 tolerates is tolerated (keys it reads with a default, index columns not in the table,
a range index whose length does not match); what it fails on with a KeyError, TypeError or
AttributeError is an ArrowInvalid here."""
from __future__ import annotations

import json as _json

from ..errors import ArrowInvalid, ArrowTypeError
from ..types import (DataType, DecimalType, DictionaryType, ExtensionType, FixedSizeBinaryType,
                     Kind, MapType, Time32Type, Time64Type, TimestampType)
from .common import _numpy, _tzinfo

TYPE_CHECKING = False               # typing itself is not imported at run time
if TYPE_CHECKING:
    from typing import Any


def _json_type(value: Any) -> str:
    """The JSON name of a parsed value's type, for messages."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    return "a list" if isinstance(value, list) else "an object"


def _expect(ok: bool, where: str, expected: str, value: Any) -> None:
    if not ok:
        found = repr(value) if len(repr(value)) <= 60 else _json_type(value)
        raise ArrowInvalid(f"pandas metadata: {where} must be {expected}, found {found}")


def _is_label(value: Any) -> bool:
    # a column or index label: pyarrow writes strings or null (numbers name pandas' own labels)
    return value is None or isinstance(value, (str, int, float))


def check_pandas_metadata(meta: dict[str, Any]) -> None:
    """ArrowInvalid, naming the entry, the key, what was expected and what was found, for the
    first part of parsed `pandas` metadata that to_pandas cannot read: the rules pyarrow 26
    relies on (its KeyError, TypeError and AttributeError cases) made explicit."""
    for key in ("columns", "index_columns"):
        if key not in meta:
            raise ArrowInvalid(f"pandas metadata: the key '{key}' is missing (keys found: "
                               f"{sorted(meta)[:10]})")
        _expect(isinstance(meta[key], list), f"'{key}'", "a list", meta[key])
    _expect(isinstance(meta.get("column_indexes", []), list), "'column_indexes'", "a list",
            meta.get("column_indexes"))
    _expect(isinstance(meta.get("attributes", {}), dict), "'attributes'", "an object",
            meta.get("attributes"))
    field_names = set()
    for i, c in enumerate(meta["columns"]):
        where = f"columns[{i}]"
        _expect(isinstance(c, dict), where, "an object", c)
        if "name" not in c:
            raise ArrowInvalid(f"pandas metadata: {where} has no 'name' (keys found: "
                               f"{sorted(c)[:10]})")
        # field_name: the name of the column in the table
        if "field_name" in c:
            _expect(isinstance(c["field_name"], str), f"{where}.field_name", "a string",
                    c["field_name"])
        if not c.get("field_name"):
            # metadata without field names (older writers): the name is the column's
            _expect(isinstance(c["name"], (str, type(None))), f"{where}.name",
                    "a string or null (there is no 'field_name')", c["name"])
        _expect(_is_label(c["name"]), f"{where}.name", "a string or null", c["name"])
        if c["name"] is None and "field_name" not in c:
            raise ArrowInvalid(f"pandas metadata: {where} has a null 'name' and no "
                               f"'field_name'")
        field_name = c.get("field_name", c["name"])
        field_names.add(field_name)
        for key in ("pandas_type", "numpy_type"):
            if key not in c:
                raise ArrowInvalid(f"pandas metadata: {where} ({field_name!r}) has no '{key}'")
            _expect(isinstance(c[key], str), f"{where}.{key} ({field_name!r})", "a string",
                    c[key])
        _expect(isinstance(c.get("metadata"), (dict, type(None))),
                f"{where}.metadata ({field_name!r})", "an object or null", c.get("metadata"))
        if c["pandas_type"] == "datetimetz" and "metadata" not in c:
            raise ArrowInvalid(f"pandas metadata: {where} ({field_name!r}) is a datetimetz "
                               f"column without 'metadata'")
        if c["pandas_type"] == "datetimetz" and c.get("metadata"):
            tz = c["metadata"].get("timezone")
            _expect(isinstance(tz, (str, type(None))), f"{where}.metadata.timezone "
                    f"({field_name!r})", "a string or null", tz)
    for i, descr in enumerate(meta["index_columns"]):
        where = f"index_columns[{i}]"
        if isinstance(descr, str):
            if descr not in field_names:
                raise ArrowInvalid(f"pandas metadata: {where} names the column {descr!r}, "
                                   f"which no entry of 'columns' describes")
            continue
        _expect(isinstance(descr, dict), where, "a column name or an object", descr)
        if descr.get("kind") != "range":
            raise ArrowInvalid(f"pandas metadata: {where} has the index kind "
                               f"{descr.get('kind')!r}; expected 'range' or a column name")
        for key in ("name", "start", "stop", "step"):
            if key not in descr:
                raise ArrowInvalid(f"pandas metadata: {where} (a range index) has no '{key}'")
        _expect(_is_label(descr["name"]), f"{where}.name", "a string or null", descr["name"])
        # start, stop and step are checked by pandas' RangeIndex (to_pandas names the entry)
    for i, ci in enumerate(meta.get("column_indexes", [])):
        where = f"column_indexes[{i}]"
        _expect(isinstance(ci, dict), where, "an object", ci)
        if "name" not in ci:
            raise ArrowInvalid(f"pandas metadata: {where} has no 'name' (keys found: "
                               f"{sorted(ci)[:10]})")
        _expect(_is_label(ci["name"]), f"{where}.name", "a string or null", ci["name"])
        _expect(isinstance(ci.get("pandas_type", ""), str), f"{where}.pandas_type", "a string",
                ci.get("pandas_type"))
        _expect(isinstance(ci.get("numpy_type", ""), (str, type(None))),
                f"{where}.numpy_type", "a string", ci.get("numpy_type"))
        if ci.get("pandas_type") == "datetimetz":
            md = ci.get("metadata")
            _expect(isinstance(md, dict) and isinstance(md.get("timezone"), str),
                    f"{where}.metadata", "an object with a 'timezone' string", md)


def _column_index(pd: Any, names: list[Any], columns_meta: Any, column_indexes: Any) -> Any:
    """The DataFrame's columns Index, as pyarrow rebuilds it from the metadata (checked by
    check_pandas_metadata); a level its column_indexes entry describes with a type pandas cannot
    give it is an ArrowInvalid naming the entry."""
    try:
        return _rebuild_column_index(pd, names, columns_meta, column_indexes)
    except ArrowInvalid:
        raise
    except (ValueError, TypeError, KeyError, AttributeError, OverflowError, SyntaxError,
            RecursionError, MemoryError, NotImplementedError, ArithmeticError) as e:
        # pandas', numpy's or literal_eval's refusal of a dtype string, a time zone or a
        # column name the metadata gives (a "bytes" level of numbers: no str.encode)
        raise ArrowInvalid(f"pandas metadata: cannot rebuild the columns index that "
                           f"'column_indexes' describes ({str(e)[:200]})") from None


def _rebuild_column_index(pd: Any, names: list[Any], columns_meta: Any, column_indexes: Any
                          ) -> Any:
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
