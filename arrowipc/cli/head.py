"""`arrowipc head`: rows of record batches as an aligned text table.

Values go through `to_pylist` and are printed compactly (null, true/false, ISO dates, nested values
inline). Timestamps, times and durations are formatted from their stored integers, one format per
column (the unit's fraction digits on every row; nanoseconds and dates out of Python's range
included); a value that cannot be shown (a string that is not valid UTF-8) is shown as its bytes in
hex, and the rest of its column as usual, so head never fails on data it can read.
"""
from __future__ import annotations

import argparse
import datetime as _dt
import json
import sys
from typing import TYPE_CHECKING, Any

from .. import types as T
from ..errors import ArrowInvalid
from .common import (EXIT_OK, Input, column_list, open_reader, plural, projected_schema,
                     select_in_order)

if TYPE_CHECKING:
    from ..array import Array
    from ..table import RecordBatch

__all__ = ["clip", "column_cells", "format_value", "render_rows", "run"]

_NUMERIC_KINDS = ("int", "uint", "float", "double", "halffloat", "decimal")
_UNIT_DIGITS = {"s": 0, "ms": 3, "us": 6, "ns": 9}
_EPOCH = _dt.datetime(1970, 1, 1)


def _is_numeric(t: T.DataType) -> bool:
    if isinstance(t, T.DictionaryType):
        t = t.value_type
    return str(t).startswith(_NUMERIC_KINDS)


def format_value(v: Any, nested: bool = False) -> str:
    """A compact text form of one Python value from to_pylist."""
    if v is None:
        return "null"
    if v is True or v is False:
        return "true" if v else "false"
    if isinstance(v, str):
        if nested:
            return json.dumps(v, ensure_ascii=False)
        return v.translate(_ESCAPES)
    if isinstance(v, (bytes, bytearray)):
        return repr(bytes(v))
    if isinstance(v, float):
        return repr(v)
    if isinstance(v, (_dt.datetime, _dt.date, _dt.time)):
        return v.isoformat()
    if isinstance(v, dict):
        return "{" + ", ".join(f"{k}: {format_value(x, True)}" for k, x in v.items()) + "}"
    if isinstance(v, tuple) and hasattr(v, "_fields"):            # interval named tuples
        return "(" + ", ".join(f"{k}={x}" for k, x in zip(v._fields, v)) + ")"
    if isinstance(v, tuple):
        return "(" + ", ".join(format_value(x, True) for x in v) + ")"
    if isinstance(v, list):
        return "[" + ", ".join(format_value(x, True) for x in v) + "]"
    return str(v)


_ESCAPES = str.maketrans({"\n": "\\n", "\r": "\\r", "\t": "\\t", "\x00": "\\0"})


def _raw_integers(arr: Array) -> list[Any]:
    """The stored integers of a temporal column (same width, as signed ints)."""
    from ..array import make_array
    t = arr.type
    width = t.bit_width
    as_int = T.int64() if width == 64 else T.int32()
    return make_array(arr.data.copy_with(type=as_int)).to_pylist()


def _temporal_strings(arr: Array) -> list[str]:
    """Cells of a timestamp/time/duration column, formatted from the raw integers."""
    t = arr.type
    unit = getattr(t, "unit", None)
    raw = _raw_integers(arr)
    digits = _UNIT_DIGITS.get(unit or "", 0)
    scale = 10 ** digits
    out = []
    for v in raw:
        if v is None:
            out.append("null")
            continue
        whole, frac = divmod(v, scale)
        frac_s = f".{frac:0{digits}d}" if digits else ""
        try:
            if isinstance(t, T.TimestampType):
                s = (_EPOCH + _dt.timedelta(seconds=whole)).isoformat() + frac_s
                out.append(s + ("Z" if t.tz else ""))        # the UTC instant
            elif isinstance(t, (T.Time32Type, T.Time64Type)):
                out.append((_dt.datetime.min + _dt.timedelta(seconds=whole)).time().isoformat()
                           + frac_s)
            else:
                out.append(f"{v}{unit}")
        except (OverflowError, ValueError):
            out.append(f"{v}{unit}")
    return out


def _utf8_cells(arr: Array) -> tuple[list[str], str]:
    """(cells, note) of a string column holding invalid UTF-8: the bad values as hex bytes."""
    from ..array import make_array
    as_bytes = {T.Kind.BINARY: T.binary(), T.Kind.LARGE_BINARY: T.large_binary(),
                T.Kind.VIEW: T.binary_view()}[arr.type.kind]
    cells: list[str] = []
    bad: list[int] = []
    for row, raw in enumerate(make_array(arr.data.copy_with(type=as_bytes)).to_pylist()):
        if raw is None:
            cells.append("null")
            continue
        try:
            cells.append(format_value(raw.decode("utf-8")))
        except UnicodeDecodeError:
            cells.append(f"<invalid UTF-8: {raw.hex(' ')}>")
            bad.append(row)
    rows = ", ".join(str(r) for r in bad[:5]) + (", …" if len(bad) > 5 else "")
    return cells, f"not valid UTF-8 at row {rows} of this batch, shown as hex bytes"


def column_cells(arr: Array) -> tuple[list[str], str | None]:
    """(cells, note): the text of every value of an Array, and a note about values shown raw."""
    t = arr.type
    if isinstance(t, (T.TimestampType, T.Time32Type, T.Time64Type, T.DurationType)):
        return _temporal_strings(arr), None
    try:
        return [format_value(v) for v in arr.to_pylist()], None
    except (ArrowInvalid, OverflowError, ValueError) as e:
        if isinstance(t, T.BinaryType) and t.is_utf8:
            return _utf8_cells(arr)
        return ["?"] * len(arr), f"values cannot be shown ({e})"


def clip(s: str, width: int) -> str:
    """`s` cut to `width` characters, ending in an ellipsis when cut."""
    return s if len(s) <= width else s[:max(1, width - 1)] + "…"


def render_rows(schema: T.Schema, batches: list[RecordBatch], max_width: int = 40
                ) -> tuple[list[str], list[str]]:
    """(text lines, notes) of an aligned table of the rows of `batches` under `schema`."""
    names = [f.name for f in schema]
    types = [str(f.type) for f in schema]
    right = [_is_numeric(f.type) for f in schema]
    columns: list[list[str]] = [[] for _ in names]
    notes: list[str] = []
    for b in batches:
        for i in range(len(names)):
            cells, note = column_cells(b.column(i))
            columns[i].extend(clip(c, max_width) for c in cells)
            if note and not any(n.startswith(f"{names[i]}:") for n in notes):
                notes.append(f"{names[i]}: {note}")
    headers = [clip(n, max_width) for n in names]
    types = [clip(t, max_width) for t in types]
    widths = [max([len(h), len(t)] + [len(c) for c in col])
              for h, t, col in zip(headers, types, columns)]

    def line(cells: list[str], align: bool = True) -> str:
        parts = [c.rjust(w) if align and r else c.ljust(w)
                 for c, w, r in zip(cells, widths, right)]
        return " | ".join(parts).rstrip()

    out = [line(headers, False), line(types, False), "-+-".join("-" * w for w in widths)]
    nrows = len(columns[0]) if columns else 0
    for r in range(nrows):
        out.append(line([col[r] for col in columns]))
    return out, notes


def _run_dataset(args: argparse.Namespace, files: list[str]) -> int:
    """`arrowipc head DIR`: the first rows across the files, in the dataset's order."""
    from .datasets import open_dataset
    columns = column_list(args.columns)
    data = open_dataset(args.file)
    table = data.head(args.n, columns=columns)
    lines, notes = render_rows(table.schema, table.to_batches(), args.max_width)
    print("\n".join(lines))
    print(f"({table.num_rows:,} of {plural(data.count_rows(), 'row')} in "
          f"{plural(len(files), 'file')})")
    for note in notes:
        print(f"note: {note}", file=sys.stderr)
    return EXIT_OK


def run(args: argparse.Namespace) -> int:
    """`arrowipc head` with parsed arguments; returns the exit status."""
    from .datasets import dataset_files
    files = dataset_files(args.file)
    if files is not None:                   # a directory or a glob: a dataset
        return _run_dataset(args, files)
    from ..ipc import RecordBatchFileReader
    columns = column_list(args.columns)
    inp = Input(args.file)
    reader = open_reader(inp, columns)
    batches: list[RecordBatch] = []
    shown = 0
    if args.n:
        for batch in reader:
            take = min(args.n - shown, batch.num_rows)
            batches.append(select_in_order(batch.slice(0, take), columns))
            shown += take
            if shown >= args.n:
                break
    schema = batches[0].schema if batches else projected_schema(reader.schema, columns)
    lines, notes = render_rows(schema, batches, args.max_width)
    print("\n".join(lines))
    if isinstance(reader, RecordBatchFileReader):        # inp.kind == "file"
        print(f"({shown:,} of {plural(reader.count_rows(), 'row')})")
    else:
        print(f"(first {plural(shown, 'row')})" if shown == args.n
              else f"({plural(shown, 'row')}, the whole stream)")
    for note in notes:
        print(f"note: {note}", file=sys.stderr)
    return EXIT_OK
