"""Hive-style partitioned directories for the Python Spark source (pure arrowipc, no Spark).

A load path holding `column=value` directories (at any depth), or read with option basePath, is
a partitioned table, as Spark's file sources read it: the data files under it, each with the
values its directories name; the partition columns come after the files' columns, their types
inferred from the values as Spark infers them (read option partitionColumnTypeInference=false
keeps them strings: the spark.sql.sources setting of that name is not visible to a Python data
source). Names, escapes and the default partition follow arrowipc.dataset.layout, which the
dataset reader and writer share.
"""
from __future__ import annotations

import datetime
import decimal
import os
import re
from dataclasses import dataclass
from typing import Any

from ..dataset.layout import is_skipped_name, parse_partition_path, parse_partition_segment
from ..errors import ArrowInvalid
from .inputs import SUFFIXES, local_path

__all__ = ["Discovered", "discover", "infer_type", "is_partitioned", "matches",
           "OPT_BASE_PATH", "OPT_TYPE_INFERENCE"]

OPT_BASE_PATH = "basePath"
OPT_TYPE_INFERENCE = "partitionColumnTypeInference"

_INT = re.compile(r"[+-]?\d+")
_FLOAT = re.compile(r"[+-]?(\d+\.?\d*([eE][+-]?\d+)?|\.\d+([eE][+-]?\d+)?|NaN|Infinity)[dDfF]?")
_DATE = re.compile(r"\d{4}-\d{1,2}-\d{1,2}")
_TIMESTAMP = re.compile(r"\d{4}-\d{1,2}-\d{1,2}[ T]\d{1,2}:\d{2}(:\d{2}(\.\d{1,9})?)?")


@dataclass(frozen=True)
class Discovered:
    """The data files of a partitioned load path and their partition values.

    `columns`: the partition columns, outermost first; `files`: (path, raw values as the
    directories name them, None for the default partition); `types`: each column's Spark
    type name (integer, bigint, decimal(p,0), double, date, timestamp, string).
    """
    columns: tuple[str, ...]
    files: tuple[tuple[str, tuple[str | None, ...]], ...]
    types: tuple[str, ...]


def _is_data_name(name: str) -> bool:
    return not is_skipped_name(name) and name.endswith(SUFFIXES)


def is_partitioned(path: str, options: Any) -> bool:
    """Whether a load path is read as a partitioned table: option basePath is given, or the
    path is a local directory holding a `column=value` directory."""
    from .inputs import _option
    if _option(options, OPT_BASE_PATH) is not None:
        return True
    if not path or re.match(r"^[a-zA-Z][a-zA-Z0-9+.-]+://", path) and not path.startswith("file:"):
        return False
    directory = local_path(path)
    if not os.path.isdir(directory):
        return False
    return any(entry.is_dir() and not is_skipped_name(entry.name)
               and parse_partition_segment(entry.name) is not None
               for entry in os.scandir(directory))


def discover(path: str, options: Any) -> Discovered:
    """The data files under `path` (recursively) with the partition values their directories
    below the base (option basePath, else `path`) name; raises when the directories disagree
    on the partition columns, or a file sits beside partition directories."""
    from .inputs import _option
    root = os.path.abspath(local_path(path))
    base_opt = _option(options, OPT_BASE_PATH)
    base = os.path.abspath(local_path(str(base_opt))) if base_opt is not None else root
    if os.path.relpath(root, base).startswith(".."):
        raise ArrowInvalid(f"arrowipc: option {OPT_BASE_PATH} {base_opt!r} is not a parent of "
                           f"the load path {path!r}")
    found: list[tuple[str, tuple[str, ...], tuple[str | None, ...]]] = []
    for directory, dirs, names in os.walk(root):
        dirs[:] = sorted(d for d in dirs if not is_skipped_name(d))
        for name in sorted(names):
            if _is_data_name(name):
                pairs = parse_partition_path(os.path.relpath(directory, base).replace(os.sep, "/"))
                found.append((os.path.join(directory, name), tuple(c for c, _ in pairs),
                              tuple(v for _, v in pairs)))
    if not found:
        raise ArrowInvalid(f"arrowipc: {path!r} names no {'/'.join(SUFFIXES)} files")
    columns = found[0][1]
    for file, cols, _ in found:
        if cols != columns:
            raise ArrowInvalid(
                f"arrowipc: conflicting partition directories under {base}: {found[0][0]} is in "
                f"partition columns {list(columns)}, {file} in {list(cols)}; every data file must "
                f"sit in directories naming the same columns, in the same order")
    lowered = [c.lower() for c in columns]
    if len(set(lowered)) != len(lowered):
        raise ArrowInvalid(f"arrowipc: the directories under {base} name a partition column "
                           f"twice: {list(columns)}")
    infer = str(_option(options, OPT_TYPE_INFERENCE, "true")).lower()
    if infer not in ("true", "false"):
        raise ArrowInvalid(f"arrowipc: option {OPT_TYPE_INFERENCE} must be true or false; "
                           f"got {infer!r}")
    types = tuple(_unify([infer_type(v) if infer == "true" else "string"
                          for _, _, values in found for v in [values[k]] if v is not None])
                  for k in range(len(columns)))
    return Discovered(columns, tuple((f, values) for f, _, values in found), types)


def infer_type(raw: str) -> str:
    """The Spark type Spark's partition inference gives a directory value: integer, bigint,
    decimal(p,0) (an integer beyond bigint), double, timestamp, date, else string."""
    if _INT.fullmatch(raw):
        n = int(raw)
        if -2**31 <= n < 2**31:
            return "integer"
        if -2**63 <= n < 2**63:
            return "bigint"
        digits = len(raw.lstrip("+-").lstrip("0")) or 1
        return f"decimal({digits},0)" if digits <= 38 else "string"
    if _FLOAT.fullmatch(raw):
        return "double"
    if _TIMESTAMP.fullmatch(raw) and _parse_timestamp(raw) is not None:
        return "timestamp"
    if _DATE.fullmatch(raw) and _parse_date(raw) is not None:
        return "date"
    return "string"


def _unify(types: list[str]) -> str:
    """The type of a column whose values have `types` (Spark's widening for partition values)."""
    if not types:
        return "string"                    # only default partitions: nulls of type string
    kinds = set(types)
    if len(kinds) == 1:
        return types[0]
    if kinds <= {"integer", "bigint"}:
        return "bigint"
    if all(t in ("integer", "bigint", "double") or t.startswith("decimal") for t in kinds):
        if "double" in kinds:
            return "double"
        width = max([int(t[8:-3]) for t in kinds if t.startswith("decimal")]
                    + [10 if "integer" in kinds else 0, 20 if "bigint" in kinds else 0])
        return f"decimal({min(width, 38)},0)"
    if kinds == {"date", "timestamp"}:
        return "timestamp"
    return "string"


def _parse_date(raw: str) -> datetime.date | None:
    try:
        y, m, d = (int(x) for x in raw.split("-"))
        return datetime.date(y, m, d)
    except ValueError:
        return None


def _parse_timestamp(raw: str) -> datetime.datetime | None:
    day, _, clock = raw.replace("T", " ").partition(" ")
    date = _parse_date(day)
    if date is None:
        return None
    parts = clock.split(":")
    try:
        seconds = decimal.Decimal(parts[2]) if len(parts) > 2 else decimal.Decimal(0)
        whole = int(seconds)
        micros = int((seconds - whole) * 1_000_000)
        return datetime.datetime(date.year, date.month, date.day, int(parts[0]), int(parts[1]),
                                 whole, micros, tzinfo=datetime.timezone.utc)
    except (ValueError, IndexError):
        return None


def value_of(raw: str | None, spark_type: str, where: str) -> Any:
    """The Python value of a directory's raw value read as `spark_type` (a simpleString)."""
    if raw is None:
        return None
    try:
        if spark_type in ("integer", "int", "bigint", "long", "smallint", "short", "tinyint", "byte"):
            return int(raw)
        if spark_type.startswith("decimal"):
            return decimal.Decimal(raw)
        if spark_type in ("double", "float"):
            return float(raw.rstrip("dDfF").replace("Infinity", "inf"))
        if spark_type == "date":
            value = _parse_date(raw)
        elif spark_type in ("timestamp", "timestamp_ntz"):
            value = _parse_timestamp(raw)
        elif spark_type == "boolean":
            if raw.lower() not in ("true", "false"):
                raise ValueError(raw)
            return raw.lower() == "true"
        elif spark_type == "string":
            return raw
        else:
            value = None
        if value is None:
            raise ValueError(raw)
        return value
    except (ValueError, decimal.InvalidOperation):
        raise ArrowInvalid(f"arrowipc: the partition value {raw!r} of {where} cannot be read as "
                           f"{spark_type}") from None


_OPS = {"==": lambda a, b: a == b, ">": lambda a, b: a > b, ">=": lambda a, b: a >= b,
        "<": lambda a, b: a < b, "<=": lambda a, b: a <= b}


def matches(value: Any, op: str, operand: Any) -> bool:
    """Whether a partition's value can pass a pushed filter (column, op, operand): False only
    when it certainly cannot, so that pruning never drops a row Spark would keep."""
    if op == "is_null":
        return value is None
    if op == "not_null":
        return value is not None
    if value is None:
        return False                      # comparisons and In are never true for null
    try:
        if op == "in":
            return any(value == o for o in operand if o is not None)
        return bool(_OPS[op](value, operand))
    except (TypeError, KeyError):
        return True
