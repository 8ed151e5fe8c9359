"""Arrow's array pretty-printer (what pyarrow's `to_string`, `str` and `repr` show), value for
value and space for space.

The layout, learned from pyarrow 26's output:

- a flat or list array is `[`, one element a line at `indent + indent_size`, `]`; with
  `skip_new_lines` the same on one line. Only `window` elements at each end are shown (lists and
  list views: `container_window`), with `...` between, unless exactly one would be hidden;
- nulls print as `null`, a null-type array as `N nulls`;
- structs print `-- is_valid:` (the validity as a bool array, or `all not null`) then each child
  as `-- child i type: T` and the child's own printout; unions add `-- type_ids:` and, dense,
  `-- value_offsets:`; dictionaries print `-- dictionary:` and `-- indices:`, run-end encoded
  arrays `-- run_ends:` and `-- values:` (both whole, as Arrow does for a slice too), extension
  arrays their storage;
- every piece of text (a value, a `-- ...` label) longer than `element_size_limit` bytes is cut
  there and followed by ` (... N chars omitted)`; a string keeps two bytes fewer for its quotes.

Only the shown elements are ever converted: each printer reads the window's rows through
zero-copy slices, so printing a 5M-row column costs the same as printing 21 rows.
"""
from __future__ import annotations

from .._core.arraydata import ArrayData
from .._core.bitmap import count_set_bits, unpack_bits
from ..errors import ArrowInvalid
from ..types import (DataType, DecimalType, DurationType, ExtensionType, Kind, Time32Type,
                    Time64Type, TimestampType)

__all__ = ["PrintOptions", "array_to_string", "chunked_array_to_string"]

TYPE_CHECKING = False               # typing itself is not imported at run time
if TYPE_CHECKING:
    from collections.abc import Callable, Sequence


class PrintOptions:
    """Arrow's PrettyPrintOptions, the fields the array printer reads."""
    __slots__ = ("indent", "indent_size", "window", "container_window", "skip_new_lines",
                 "element_size_limit")

    def __init__(self, indent: int = 0, indent_size: int = 2, window: int = 10,
                 container_window: int = 2, skip_new_lines: bool = False,
                 element_size_limit: int = 100) -> None:
        self.indent = indent
        self.indent_size = indent_size
        self.window = window
        self.container_window = container_window
        self.skip_new_lines = bool(skip_new_lines)
        self.element_size_limit = element_size_limit


def array_to_string(data: ArrayData, options: PrintOptions) -> str:
    """The printout of one array."""
    out: list[str] = []
    _ArrayPrinter(options, options.indent, out).print(data)
    return "".join(out)


def chunked_array_to_string(chunks: Sequence[ArrayData], type_: DataType,
                            options: PrintOptions) -> str:
    """The printout of a chunked array: its chunks as a list of arrays; only `container_window`
    chunks at each end are shown. Struct chunks always go on lines of their own."""
    out: list[str] = []
    pad = " " * options.indent
    skip = options.skip_new_lines and type_.storage_type.kind != Kind.STRUCT
    out.append(pad + "[")
    if not skip:
        out.append("\n")
    window = options.container_window
    n = len(chunks)
    chunk_options = PrintOptions(options.indent + options.indent_size, options.indent_size,
                                 options.window, options.container_window,
                                 options.skip_new_lines, options.element_size_limit)
    first = True
    i = 0
    while i < n:
        if not first:
            out.append(",")
            if not skip:
                out.append("\n")
        first = False
        if window <= i < n - window:
            out.append(pad + "...,")
            if not skip:
                out.append("\n")
            i = n - window
            first = True                 # the ellipsis carries the delimiter itself
            continue
        _ArrayPrinter(chunk_options, chunk_options.indent, out).print(chunks[i])
        i += 1
    if not options.skip_new_lines:
        out.append("\n")
    out.append(pad + "]")
    return "".join(out)


def _shown_rows(n: int, window: int) -> list[int | None]:
    """The rows Arrow's element loop prints, None standing for the `...`: the first and last
    `window`, or every row when at most one would be hidden."""
    if n == 2 * window + 1 or not max(window, 0) < n - window:
        return list(range(n))
    head = list(range(max(window, 0)))
    return head + [None] + list(range(n - window, n)) if window > 0 else head + [None]


class _ArrayPrinter:
    """One level of Arrow's ArrayPrinter: writes into `out` at its own indent."""
    __slots__ = ("options", "indent", "out")

    def __init__(self, options: PrintOptions, indent: int, out: list[str]) -> None:
        self.options = options
        self.indent = indent
        self.out = out

    # -- text primitives ------------------------------------------------------------------------
    def write(self, text: str, limit: int | None = None) -> None:
        """`text`, cut at `limit` bytes (element_size_limit by default; negative: no limit)."""
        if limit is None:
            limit = self.options.element_size_limit
        raw = text.encode("utf-8", "surrogateescape")
        size = text.size if isinstance(text, _Clipped) else len(raw)
        if 0 <= limit < size:
            self.out.append(raw[:limit].decode("utf-8", "replace")
                            + f" (... {size - limit} chars omitted)")
        else:
            self.out.append(text)

    def newline(self) -> None:
        if not self.options.skip_new_lines:
            self.out.append("\n")

    def pad(self) -> None:
        self.out.append(" " * self.indent)

    def pad_after_newline(self) -> None:
        if not self.options.skip_new_lines:
            self.out.append(" " * self.indent)

    def child(self, deeper: bool) -> _ArrayPrinter:
        return _ArrayPrinter(self.options, self.indent + (self.options.indent_size if deeper
                                                          else 0), self.out)

    def open(self, n: int) -> None:
        if not self.options.skip_new_lines:
            self.pad()
        self.out.append("[")
        if n > 0:
            self.newline()
            self.indent += self.options.indent_size

    def close(self, n: int) -> None:
        if n > 0:
            self.indent -= self.options.indent_size
            if not self.options.skip_new_lines:
                self.pad()
        self.out.append("]")

    # -- arrays ---------------------------------------------------------------------------------
    def print(self, d: ArrayData) -> None:
        t = d.type
        if isinstance(t, ExtensionType):
            d = d.with_type(t.storage_type)
            t = d.type
        kind = t.kind
        if kind == Kind.NULL:
            self.out.append(f"{d.length} nulls")
        elif kind == Kind.STRUCT:
            self.validity(d)
            self.children([c.slice(d.offset, d.length) for c in d.children])
        elif kind in (Kind.SPARSE_UNION, Kind.DENSE_UNION):
            self.union(d)
        elif kind == Kind.DICTIONARY:
            if d.dictionary is None:
                raise ArrowInvalid("a dictionary array without its dictionary")
            self.labelled(("-- dictionary:\n", d.dictionary),
                          ("-- indices:\n",
                           d.copy_with(type=t.index_type, children=[], dictionary=None)))
        elif kind == Kind.RUN_END_ENCODED:
            self.labelled(("-- run_ends:\n", d.children[0]), ("-- values:\n", d.children[1]))
        else:
            self.open(d.length)
            if d.length > 0:
                self.values(d)
            self.close(d.length)

    def labelled(self, *parts: tuple[str, ArrayData]) -> None:
        for label, part in parts:
            self.newline()
            self.pad()
            self.write(label)
            self.child(True).print(part)

    def validity(self, d: ArrayData) -> None:
        from ..types import bool_
        self.pad()
        self.write("-- is_valid:")
        if d.type.kind not in (Kind.SPARSE_UNION, Kind.DENSE_UNION) and _has_nulls(d):
            self.newline()
            self.pad()
            self.child(True).print(ArrayData(bool_(), d.length, d.offset, 0,
                                             [None, d.buffers[0]]))
        else:
            self.write(" all not null")

    def children(self, children: list[ArrayData]) -> None:
        for i, c in enumerate(children):
            self.write("\n")                  # a child's label always starts a line
            self.pad()
            self.write(f"-- child {i} type: {c.type}\n")
            self.child(True).print(c)

    def union(self, d: ArrayData) -> None:
        from ..types import int32, uint8
        self.validity(d)
        self.newline()
        self.pad()
        self.write("-- type_ids: ")
        self.child(True).print(ArrayData(uint8(), d.length, d.offset, 0, [None, d.buffers[0]]))
        if d.type.kind == Kind.DENSE_UNION:
            self.newline()
            self.pad()
            self.write("-- value_offsets: ")
            self.child(True).print(ArrayData(int32(), d.length, d.offset, 0,
                                             [None, d.buffers[1]]))
            # the offsets point into whole children
            self.children(list(d.children))
        else:
            self.children([c.slice(d.offset, d.length) for c in d.children])

    def values(self, d: ArrayData) -> None:
        """The elements of a flat, list or map array (Arrow's WriteValues)."""
        t = d.type
        kind = t.kind
        is_map = _is_map(t)
        is_list = not is_map and kind in (Kind.LIST, Kind.LARGE_LIST, Kind.LIST_VIEW,
                                          Kind.LARGE_LIST_VIEW, Kind.FIXED_SIZE_LIST)
        n = d.length
        window = self.options.container_window if is_list else self.options.window
        rows = _shown_rows(n, window)
        shown = [r for r in rows if r is not None]
        valid = _validity_of(d, shown)
        write_element: Callable[[int], None]
        if is_map:
            write_element = self.map_element(d)
        elif is_list:
            write_element = self.list_element(d)
        else:
            limit = self.options.element_size_limit
            quoted = getattr(t, "is_utf8", False)
            texts = _formatted(d, shown, limit - 2 if quoted else limit)

            def write_element(i: int) -> None:
                self.pad_after_newline()
                if quoted:
                    self.out.append('"')
                    self.write(texts[i], limit - 2)
                    self.out.append('"')
                else:
                    self.write(texts[i])
        skip = self.options.skip_new_lines
        for i in rows:
            if i is None:
                # the `...` stands at the first hidden row
                self.pad_after_newline()
                self.out.append("...")
                if skip and max(window, 0) != n - 1:
                    self.out.append(",")
                self.newline()
                continue
            last = i == n - 1
            if not valid[i]:
                self.pad_after_newline()
                self.out.append("null")
                if not last:
                    self.out.append(",")
            else:
                write_element(i)
                if not last:
                    self.out.append(",")
            self.newline()

    def list_element(self, d: ArrayData) -> Callable[[int], None]:
        ranges = _list_ranges(d)
        values = d.children[0]
        inner = self.child(False)

        def write(i: int) -> None:
            start, length = ranges(i)
            inner.print(values.slice(start, length))
        return write

    def map_element(self, d: ArrayData) -> Callable[[int], None]:
        ranges = _list_ranges(d)
        entries = d.children[0]
        keys = entries.children[0].slice(entries.offset, entries.length)
        items = entries.children[1].slice(entries.offset, entries.length)
        inner = self.child(False)

        def write(i: int) -> None:
            start, length = ranges(i)
            self.pad_after_newline()
            self.out.append("keys:")
            self.newline()
            inner.print(keys.slice(start, length))
            self.newline()
            self.pad_after_newline()
            self.out.append("values:")
            self.newline()
            inner.print(items.slice(start, length))
        return write


# -- reading the shown rows ---------------------------------------------------------------------

def _is_map(t: DataType) -> bool:
    from ..types import MapType
    return isinstance(t, MapType)


def _has_nulls(d: ArrayData) -> bool:
    """Whether `d` has a null: its null count when known, else a count of its bitmap's bits
    (this module stays below the Array classes)."""
    if d.null_count >= 0:
        return d.null_count > 0
    validity = d.buffers[0] if d.buffers else None
    return validity is not None and count_set_bits(validity, d.offset, d.length) < d.length


def _validity_of(d: ArrayData, rows: list[int]) -> dict[int, bool]:
    """Whether each of `rows` holds a value (only those rows' bits are read)."""
    validity = d.buffers[0] if d.buffers else None
    if validity is None or d.null_count == 0:
        return dict.fromkeys(rows, True)
    out = {}
    for start, stop in _runs(rows):
        bits = unpack_bits(validity, d.offset + start, stop - start)
        for k in range(start, stop):
            out[k] = bool(bits[k - start])
    return out


def _runs(rows: list[int]) -> list[tuple[int, int]]:
    """`rows` (ascending) as [start, stop) runs of consecutive rows."""
    runs: list[tuple[int, int]] = []
    for r in rows:
        if runs and runs[-1][1] == r:
            runs[-1] = (runs[-1][0], r + 1)
        else:
            runs.append((r, r + 1))
    return runs


def _list_ranges(d: ArrayData) -> Callable[[int], tuple[int, int]]:
    """Row -> (start, length) of its values in the (unsliced) child array."""
    kind = d.type.kind
    if kind == Kind.FIXED_SIZE_LIST:
        size = d.type.list_size
        return lambda i: ((d.offset + i) * size, size)
    import struct
    wide = kind in (Kind.LARGE_LIST, Kind.LARGE_LIST_VIEW)
    code, width = ("q", 8) if wide else ("i", 4)
    offsets = _buffer(d, 1)
    if kind in (Kind.LIST_VIEW, Kind.LARGE_LIST_VIEW):
        sizes = _buffer(d, 2)
        return lambda i: (struct.unpack_from(code, offsets, (d.offset + i) * width)[0],
                          struct.unpack_from(code, sizes, (d.offset + i) * width)[0])

    def offset_range(i: int) -> tuple[int, int]:
        start, end = struct.unpack_from(code * 2, offsets, (d.offset + i) * width)
        return start, end - start
    return offset_range


def _buffer(d: ArrayData, i: int) -> memoryview:
    buf = d.buffers[i] if i < len(d.buffers) else None
    if buf is None:
        raise ArrowInvalid(f"{d.type} array without its buffer {i}")
    return memoryview(buf)


class _Clipped(str):
    """The first bytes of a long value's text (undecodable bytes kept as surrogates), and
    `size`, the length in bytes of the whole text: what the printer needs of a value it cuts."""

    size: int

    def __new__(cls, text: str, size: int) -> _Clipped:
        clipped = super().__new__(cls, text)
        clipped.size = size
        return clipped


def _formatted(d: ArrayData, rows: list[int], keep: int) -> dict[int, str]:
    """The text of each of `rows` of a flat array ("" for nulls); binary and string values are
    read only `keep` bytes of text far (all of them when `keep` is negative)."""
    out: dict[int, str] = {}
    for start, stop in _runs(rows):
        run = d.slice(start, stop - start)
        texts: Sequence[str | None]
        if d.type.kind in (Kind.BINARY, Kind.LARGE_BINARY) and keep >= 0:
            texts = _clipped_binary(run, keep)
        else:
            texts = _format_run(run)
        for k, text in enumerate(texts):
            out[start + k] = "" if text is None else text      # a null's is never printed
    return out


def _clipped_binary(d: ArrayData, keep: int) -> list[str]:
    """The texts of a (short) binary or string array, each cut after `keep` bytes of text: a
    100-byte window of a huge value costs 100 bytes."""
    import struct
    code, width = ("q", 8) if d.type.kind == Kind.LARGE_BINARY else ("i", 4)
    offsets = struct.unpack_from(f"={d.length + 1}{code}", _buffer(d, 1), d.offset * width)
    data = _buffer(d, 2)
    utf8 = getattr(d.type, "is_utf8", False)
    out: list[str] = []
    for start, end in zip(offsets, offsets[1:]):
        size = end - start
        take = min(size, keep if utf8 else (keep + 1) // 2)   # hex: two characters a byte
        value = bytes(data[start:start + take])
        if take == size:
            out.append(value.decode("utf-8", "replace") if utf8 else value.hex().upper())
        elif utf8:
            out.append(_Clipped(value.decode("utf-8", "surrogateescape"), size))
        else:
            out.append(_Clipped(value.hex().upper(), 2 * size))
    return out


def _format_run(d: ArrayData) -> list[str | None]:
    """Arrow's text for every value of a (short) flat array; anything for nulls."""
    from . import text
    from .to_python import to_pylist
    from ..types import timestamp
    t = d.type
    if isinstance(t, DecimalType):
        return [None if v is None else text.decimal_text(v, t.scale)
                for v in text.unscaled(d)]
    if isinstance(t, DurationType):
        return [None if v is None else str(v) for v in text.temporal_text(d, t)]
    if isinstance(t, TimestampType) and t.tz:
        # Arrow prints the UTC instant whatever the zone
        return text.temporal_text(d.with_type(timestamp(t.unit, "UTC")), timestamp(t.unit, "UTC"))
    if isinstance(t, (Time32Type, Time64Type, TimestampType)) or t.name in ("date32[day]",
                                                                              "date64[ms]"):
        return text.temporal_text(d, t)
    values = to_pylist(d)
    name = t.name
    if t.kind == Kind.BOOL:
        return [None if v is None else ("true" if v else "false") for v in values]
    if name in ("double", "halffloat"):
        return [None if v is None else text.format_float(v) for v in values]
    if name == "float":
        return [None if v is None else text.format_float(v, text.float32_repr(v))
                for v in values]
    if name == "month_interval":
        return [None if v is None else f"{v}M" for v in values]
    if name == "day_time_interval":
        return [None if v is None else f"{v[0]}d{v[1]}ms" for v in values]
    if name == "month_day_nano_interval":
        return [None if v is None else f"{v[0]}M{v[1]}d{v[2]}ns" for v in values]
    if t.kind in (Kind.BINARY, Kind.LARGE_BINARY, Kind.VIEW) or t.kind == Kind.FIXED and \
            not getattr(t, "is_integer", False):
        if getattr(t, "is_utf8", False):
            return values
        return [None if v is None else bytes(v).hex().upper() for v in values]
    return [None if v is None else str(v) for v in values]
