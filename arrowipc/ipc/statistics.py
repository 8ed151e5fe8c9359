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

A file written with statistics also carries their summary in the footer's custom metadata (the
file-level metadata pyarrow reads as RecordBatchFileReader.metadata), so a reader can rule out a
whole file, or count its rows, from the footer alone:

    "arrowipc:file_statistics" -> {"version": 1, "rows": <int>, "batch_rows": [<int>, ...],
                                   "columns": {"<column>": {"null_count": <int>,
                                                            "min": <v>, "max": <v>}}}

"batch_rows" lists the rows of each record batch in footer order. A column's "null_count" is
the sum over the batches, "min"/"max" the extremes of the batches' (same encoding) and are left
out when a batch holding a non-null value left its own out. A summary whose "batch_rows" does not
match the footer's record batches (a file rewritten by another tool) is ignored. The file writer
also copies the batches' headers into the footer when they are small enough (remote.HEADERS_KEY),
so a reader over a network has every batch's statistics from the read that brings the footer.
"""
from __future__ import annotations

import json
from decimal import Decimal

import numpy as np

from ..errors import ArrowException

TYPE_CHECKING = False               # typing itself is not imported at run time
if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping, Sequence
    from typing import Any, Callable

    from ..array import Array
    from ..table import RecordBatch
    from ..types import DataType, Schema
    from .reader import RecordBatchFileReader

    Statistics = dict[str, Any]     # a JSON document as the module docstring describes

KEY = "arrowipc:statistics"
FILE_KEY = "arrowipc:file_statistics"
VERSION = 1
MAX_STRING_CHARS = 64

__all__ = ["FILE_KEY", "KEY", "FileSummary", "batch_statistics", "file_statistics",
           "matching_batches", "might_match", "read_statistics", "statistics_metadata"]

_NUMPY: dict[str, type[np.generic]] = {
    "int8": np.int8, "int16": np.int16, "int32": np.int32, "int64": np.int64,
    "uint8": np.uint8, "uint16": np.uint16, "uint32": np.uint32, "uint64": np.uint64,
    "halffloat": np.float16, "float": np.float32, "double": np.float64,
    "date32[day]": np.int32, "date64[ms]": np.int64,
}
_STRINGS = ("string", "large_string", "string_view")


def _physical(t: DataType) -> type[np.generic] | None:
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


def _valid_values(col: Array, dtype: type[np.generic]) -> np.ndarray[Any, Any]:
    """The non-null values of a fixed-width column, as numpy values of `dtype` (no copy when it
    has no nulls)."""
    d = col.data
    # a fixed-width layout always has its values buffer (a Buffer, read by the buffer protocol)
    values: np.ndarray[Any, Any] = np.frombuffer(
        d.buffers[1],  # type: ignore[call-overload]
        dtype=dtype, count=d.offset + d.length)[d.offset:]
    if col.null_count:
        valid = col.is_valid()
        assert not isinstance(valid, bool)      # without an index: an Array
        values = values[valid.to_numpy(zero_copy_only=False)]
    return values


def _column_statistics(col: Array) -> Statistics:
    out: Statistics = {"null_count": int(col.null_count)}
    if col.null_count == len(col):
        return out
    t = col.type
    if t.name.startswith("dictionary"):
        values = col.dictionary  # type: ignore[attr-defined]  # a dictionary type: DictionaryArray
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


def batch_statistics(batch: RecordBatch) -> Statistics:
    """The statistics of an arrowipc RecordBatch (the JSON document described above)."""
    names = batch.schema.names
    columns: dict[str, Statistics] = {}
    for name, col in zip(names, batch.columns):
        if names.count(name) == 1:
            columns[name] = _column_statistics(col)
    return {"version": VERSION, "rows": batch.num_rows, "columns": columns}


def statistics_metadata(batch: RecordBatch,
                        custom_metadata: Mapping[Any, Any] | Iterable[tuple[Any, Any]] | None = None,
                        stats: Statistics | None = None) -> dict[Any, Any]:
    """`custom_metadata` (a mapping, (key, value) pairs or None) with the batch's statistics (`stats`, computed
    when not given) added under KEY."""
    out = dict(custom_metadata or {})
    out[KEY] = json.dumps(stats if stats is not None else batch_statistics(batch),
                          separators=(",", ":"))
    return out


def _is_decimal(t: DataType) -> bool:
    while t.name.startswith("dictionary"):
        t = t.value_type  # type: ignore[attr-defined]  # a dictionary type: DictionaryType
    return t.name.startswith("decimal")


class FileSummary:
    """Folds the statistics of a file's batches, in order, into the footer's summary document."""

    def __init__(self, schema: Schema) -> None:
        # decimals are JSON strings compared as numbers; every other string compares as text
        self._decimal = {f.name for f in schema if _is_decimal(f.type)}
        self._batch_rows: list[int] = []
        self._columns: dict[str, Statistics] = {}
        self._unbounded: dict[str, set[str]] = {}     # column -> {"min", "max"} a batch left out

    def add(self, stats: Statistics) -> None:
        """Fold in the statistics of the file's next record batch."""
        rows = stats["rows"]
        first = not self._batch_rows
        self._batch_rows.append(rows)
        for name, s in stats["columns"].items():
            c = self._columns.setdefault(name, {"null_count": 0}) if first else self._columns.get(name)
            if c is None:
                continue
            c["null_count"] += s["null_count"]
            if s["null_count"] >= rows:
                continue                    # no value: says nothing about the bounds
            key = Decimal if name in self._decimal else None
            gone = self._unbounded.setdefault(name, set())
            pick: Callable[..., Any]
            for bound, pick in (("min", min), ("max", max)):
                if bound in gone:
                    continue
                v = s.get(bound)
                if v is None:
                    gone.add(bound)
                    c.pop(bound, None)
                elif bound not in c:
                    c[bound] = v
                else:
                    c[bound] = pick(c[bound], v, key=key)
        if not first:                       # a column missing from one batch has no summary
            for name in [n for n in self._columns if n not in stats["columns"]]:
                del self._columns[name]

    def document(self) -> Statistics:
        """The summary of the batches added so far (the document the module docstring describes)."""
        return {"version": VERSION, "rows": sum(self._batch_rows),
                "batch_rows": list(self._batch_rows), "columns": self._columns}

    def metadata(self, footer_metadata: Mapping[Any, Any] | None = None) -> dict[Any, Any]:
        """`footer_metadata` (a mapping or None) with the summary added under FILE_KEY."""
        out = dict(footer_metadata or {})
        out[FILE_KEY] = json.dumps(self.document(), separators=(",", ":"))
        return out


def _json_document(raw: str | bytes) -> Any:
    """json.loads(raw), without its guess at the encoding of bytes when they are UTF-8 text
    (what writers write): the guess, in Python, is about a tenth of parsing a batch's
    statistics, read several times per file by a first scan."""
    if isinstance(raw, bytes):
        try:
            return json.loads(raw.decode())
        except ValueError:          # not UTF-8 (a UnicodeDecodeError), or another encoding
            pass
    return json.loads(raw)


def _parse(custom_metadata: Mapping[Any, Any] | None, key: str) -> Statistics | None:
    if not custom_metadata:
        return None
    raw = custom_metadata.get(key)
    if raw is None:
        raw = custom_metadata.get(key.encode())
    if raw is None:
        return None
    try:
        doc = _json_document(raw)
    except (ValueError, UnicodeDecodeError, RecursionError):
        return None                     # RecursionError: json.loads of deeply nested input
    if not isinstance(doc, dict) or doc.get("version") != VERSION or not isinstance(
            doc.get("columns"), dict):
        return None
    return doc


def read_statistics(custom_metadata: Mapping[Any, Any] | None) -> Statistics | None:
    """The statistics in a batch's custom metadata (bytes or str keys), None when absent or of an
    unknown version or malformed (files written by others read as before)."""
    return _parse(custom_metadata, KEY)


def file_statistics(reader: RecordBatchFileReader) -> Statistics | None:
    """The footer's summary of a RecordBatchFileReader's statistics, None when the footer has
    none, or one that does not describe this file's record batches (their headers' rows are
    read to check it: a header that cannot be read is left to the read that follows)."""
    doc = footer_statistics(reader.metadata, reader.num_record_batches)
    if doc is None:
        return None
    try:
        lengths = reader.batch_lengths()
    except (ArrowException, OSError):
        return None
    return doc if doc["batch_rows"] == lengths else None


def footer_statistics(metadata: Mapping[Any, Any] | None, batches: int,
                      lengths: Sequence[int] | None = None) -> Statistics | None:
    """The statistics summary in a file footer's custom `metadata`, None when it has none, or
    one that does not describe the footer's `batches` record batches (of `lengths` rows, when
    given: a summary whose rows are not the headers' would make counts and takes wrong)."""
    doc = _parse(metadata, FILE_KEY)
    if doc is None:
        return None
    rows = doc.get("batch_rows")
    if (not isinstance(rows, list) or len(rows) != batches
            or not all(type(r) is int and r >= 0 for r in rows) or doc.get("rows") != sum(rows)
            or (lengths is not None and rows != list(lengths))):
        return None
    return doc


def _all_match(stats: Statistics | None, filters: Iterable[Sequence[Any]]) -> bool:
    return all(might_match(stats, *f) for f in filters)


def matching_batches(reader: RecordBatchFileReader, filters: Iterable[Sequence[Any]]) -> list[int]:
    """Indices of the record batches of a RecordBatchFileReader that may hold a row passing every
    filter, each `(column, op, value)` as might_match takes them (`("a", "is_null")` needs no
    value). The footer's summary rules out the whole file first; then each batch's statistics
    (its message header only, no body read). Batches without statistics always match."""
    filters = [tuple(f) for f in filters]
    if not filters:
        return list(range(reader.num_record_batches))
    summary = file_statistics(reader)
    if summary is not None and not _all_match(summary, filters):
        return []
    out = []
    for i in range(reader.num_record_batches):
        msg = reader.read_block_message("record batch", i, with_body=False)
        if _all_match(read_statistics(msg.custom_metadata), filters):
            out.append(i)
    return out


def might_match(stats: Statistics | None, column: str, op: str, value: Any = None) -> bool:
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
