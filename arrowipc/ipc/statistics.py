"""Batch statistics: min, max and null count per column, kept in a record batch's custom metadata.

Any reader may ignore them (they are ordinary custom metadata); arrowipc's readers and its Spark
sources use them to skip record batches a filter rules out. One key per batch:

    "arrowipc:statistics" -> {"version": 1, "rows": <int>,
                              "columns": {"<top-level column name>":
                                          {"null_count": <int>, "min": <v>, "max": <v>}}}

A column appears only when its name is unique in the schema. "min" and "max" are present only
when the column has a non-null value and the type allows them, encoded in JSON as:

    integers (signed, unsigned)            JSON integers
    float16/32/64                          JSON numbers; absent when the batch holds a NaN
    date32 / date64                        integers: days / milliseconds since 1970-01-01
    timestamp, time32/64, duration         integers in the type's own unit
    decimal32/64/128/256                   strings of the decimal value ("-12.50")
    string, large_string, string_view      strings; a min longer than 64 characters is cut to
                                           its first 64 (still a lower bound), a longer max is
                                           left out
    dictionary-encoded columns             those of the dictionary's values (a looser bound)

Bounds are inclusive and only ever conservative: a reader may skip a batch only when no value
between min and max (and no null, per null_count) can satisfy its filter.
"""
from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, Mapping

import numpy as np

if TYPE_CHECKING:
    from ..table import RecordBatch
    from ..types import DataType

KEY = "arrowipc:statistics"
VERSION = 1
MAX_STRING_CHARS = 64

__all__ = ["KEY", "batch_statistics", "might_match", "read_statistics", "statistics_metadata"]

_NUMPY = {
    "int8": np.int8, "int16": np.int16, "int32": np.int32, "int64": np.int64,
    "uint8": np.uint8, "uint16": np.uint16, "uint32": np.uint32, "uint64": np.uint64,
    "halffloat": np.float16, "float": np.float32, "double": np.float64,
    "date32[day]": np.int32, "date64[ms]": np.int64,
}
_STRINGS = ("string", "large_string", "string_view")


def _physical(t: DataType) -> Any:
    """The numpy dtype of a fixed-width column whose values the statistics take as they are."""
    dtype = _NUMPY.get(t.name)
    if dtype is not None:
        return dtype
    prefix = t.name.split("[", 1)[0]
    if prefix in ("timestamp", "duration", "time64"):
        return np.int64
    if prefix == "time32":
        return np.int32
    return None


def _valid_values(col: Any, dtype: Any) -> np.ndarray[Any, Any]:
    """The non-null values of a fixed-width column, as numpy values of `dtype`."""
    d = col.data
    values: np.ndarray[Any, Any] = np.frombuffer(d.buffers[1], dtype=dtype, count=d.offset + d.length)[d.offset:]
    if col.null_count:
        values = values[col.is_valid().to_numpy(zero_copy_only=False)]
    return values


def _column_statistics(col: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"null_count": int(col.null_count)}
    if col.null_count == len(col):
        return out
    t = col.type
    if t.name.startswith("dictionary"):
        values = col.dictionary
        return dict(out, **{k: v for k, v in _column_statistics(values).items() if k != "null_count"})
    dtype = _physical(t)
    if dtype is not None:
        values = _valid_values(col, dtype)
        if values.dtype.kind == "f":
            if np.isnan(values).any():
                return out
            return dict(out, min=float(values.min()), max=float(values.max()))
        return dict(out, min=int(values.min()), max=int(values.max()))
    if t.name in _STRINGS:
        values = [v for v in col.to_pylist() if v is not None]
        lo, hi = min(values), max(values)
        out["min"] = lo[:MAX_STRING_CHARS]
        if len(hi) <= MAX_STRING_CHARS:
            out["max"] = hi
        return out
    if t.name.startswith("decimal"):
        values = [v for v in col.to_pylist() if v is not None]
        return dict(out, min=str(min(values)), max=str(max(values)))
    return out


def batch_statistics(batch: RecordBatch) -> dict[str, Any]:
    """The statistics of an arrowipc RecordBatch (the JSON document described above)."""
    names = batch.schema.names
    columns: dict[str, Any] = {}
    for name, col in zip(names, batch.columns):
        if names.count(name) == 1:
            columns[name] = _column_statistics(col)
    return {"version": VERSION, "rows": batch.num_rows, "columns": columns}


def statistics_metadata(batch: RecordBatch, custom_metadata: Mapping[Any, Any] | None = None
                        ) -> dict[Any, Any]:
    """`custom_metadata` (a mapping or None) with the batch's statistics added under KEY."""
    out = dict(custom_metadata or {})
    out[KEY] = json.dumps(batch_statistics(batch), separators=(",", ":"))
    return out


def read_statistics(custom_metadata: Mapping[Any, Any] | None) -> dict[str, Any] | None:
    """The statistics in a batch's custom metadata (bytes or str keys), None when absent or of an
    unknown version or malformed (files written by others read as before)."""
    if not custom_metadata:
        return None
    raw = custom_metadata.get(KEY)
    if raw is None:
        raw = custom_metadata.get(KEY.encode())
    if raw is None:
        return None
    try:
        doc = json.loads(raw)
    except (ValueError, UnicodeDecodeError):
        return None
    if not isinstance(doc, dict) or doc.get("version") != VERSION or not isinstance(
            doc.get("columns"), dict):
        return None
    return doc


def might_match(stats: dict[str, Any] | None, column: str, op: str, value: Any = None) -> bool:
    """Whether a batch with `stats` may hold a row where `column op value` holds.

    op: "==", "<", "<=", ">", ">=", "in" (value: a collection), "is_null", "not_null". False only
    when the statistics prove no row can match; unknown columns, types or ops give True.
    """
    if stats is None:
        return True
    s = stats["columns"].get(column)
    if s is None:
        return True
    rows, nulls = stats.get("rows"), s.get("null_count")
    if op == "is_null":
        return nulls is None or nulls > 0
    if op == "not_null":
        return nulls is None or rows is None or nulls < rows
    if rows is not None and nulls is not None and nulls >= rows:
        return False           # all null: no comparison holds
    lo, hi = s.get("min"), s.get("max")
    try:
        if op == "in":
            return any(might_match(stats, column, "==", v) for v in value)
        if op == "==":
            return (lo is None or lo <= value) and (hi is None or value <= hi)
        if op == "<":
            return lo is None or lo < value
        if op == "<=":
            return lo is None or lo <= value
        if op == ">":
            return hi is None or hi > value
        if op == ">=":
            return hi is None or hi >= value
    except TypeError:           # a value of another kind than the statistics: cannot tell
        return True
    return True
