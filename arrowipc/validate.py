"""Validation of arrays: structural (bounds: nothing can read out of range) and full (values too).

Structural validation checks every buffer size against the type, length and offset, then runs the
same O(n) content checks the IPC reader defers (offsets, views, list views, union ids, run ends,
dictionary indices). Full validation adds what pyarrow's validate(full=True) checks: null counts
against the bitmaps, UTF-8, binary view prefixes, decimal precision, date64 and time ranges, dense
union offsets that never decrease within a child, and map keys without nulls. Both levels run
their O(n) loops in C without the GIL (arrowipc._core.content_checks).

`null_count_of` lives here too, below the Array classes: the null count a node reports, counted
from its validity bitmap when the producer left it unknown.
"""
from __future__ import annotations

from ._core import bitmap as _bitmap
from ._core.arraydata import ArrayData
from ._core.content_checks import check_content, check_values
from .errors import ArrowInvalid
from .types import Kind

TYPE_CHECKING = False               # typing itself is not imported at run time
if TYPE_CHECKING:
    from ._core.buffer import Buffer

MAX_DEPTH = 64


def _computed_null_count(data: ArrayData) -> int:
    kind = data.type.kind
    if kind == Kind.NULL:
        return data.length
    if kind in (Kind.SPARSE_UNION, Kind.DENSE_UNION, Kind.RUN_END_ENCODED):
        return 0  # these layouts have no validity bitmap of their own
    validity = data.buffers[0] if data.buffers else None
    if validity is None or data.length == 0:
        return 0
    return data.length - _bitmap.count_set_bits(validity, data.offset, data.length)


def null_count_of(data: ArrayData) -> int:
    """The null count of `data`, computed (and cached) when the producer did not give it."""
    if data.null_count < 0:
        data.null_count = _computed_null_count(data)
    return data.null_count


def _need(buf: Buffer | None, nbytes: int, what: str, where: str) -> None:
    size = 0 if buf is None else buf.size
    if nbytes > size:
        raise ArrowInvalid(f"{where}: the {what} buffer needs {nbytes} bytes, has {size}")


def _buffer_count(d: ArrayData, expected: int, where: str) -> None:
    if len(d.buffers) < expected:
        raise ArrowInvalid(f"{where}: expected {expected} buffers for type {d.type}, "
                           f"got {len(d.buffers)}")


__all__ = ["validate_array", "validate_values"]


def validate_array(d: ArrayData, full: bool = False, where: str = "array", depth: int = 1) -> None:
    """Raise ArrowInvalid naming the first problem found in `d` (and its children)."""
    if depth > MAX_DEPTH:
        raise ArrowInvalid(f"{where}: nesting deeper than {MAX_DEPTH}")
    t = d.type.storage_type
    kind = t.kind
    off, n = d.offset, d.length
    if off < 0 or n < 0:
        raise ArrowInvalid(f"{where}: negative offset {off} or length {n}")
    if d.null_count > n:
        raise ArrowInvalid(f"{where}: null count {d.null_count} exceeds length {n}")
    if d.null_count < -1:
        raise ArrowInvalid(f"{where}: null count {d.null_count} is negative")
    has_validity = kind not in (Kind.NULL, Kind.SPARSE_UNION, Kind.DENSE_UNION, Kind.RUN_END_ENCODED)
    if has_validity:
        _buffer_count(d, 1, where)
        if d.buffers[0] is not None:
            _need(d.buffers[0], (off + n + 7) // 8, "validity", where)
        elif d.null_count > 0:
            raise ArrowInvalid(f"{where}: null count {d.null_count} but no validity bitmap")
    if len(d.children) != t.num_fields and kind != Kind.DICTIONARY:
        raise ArrowInvalid(f"{where}: type {t} needs {t.num_fields} children, got {len(d.children)}")
    if kind == Kind.BOOL:
        _buffer_count(d, 2, where)
        _need(d.buffers[1], (off + n + 7) // 8, "values", where)
    elif kind in (Kind.FIXED, Kind.DICTIONARY):
        _buffer_count(d, 2, where)
        w = t.index_type.byte_width if kind == Kind.DICTIONARY else t.byte_width
        _need(d.buffers[1], (off + n) * w, "values", where)
    elif kind in (Kind.BINARY, Kind.LARGE_BINARY, Kind.LIST, Kind.LARGE_LIST):
        _buffer_count(d, 3 if kind in (Kind.BINARY, Kind.LARGE_BINARY) else 2, where)
        w = 4 if kind in (Kind.BINARY, Kind.LIST) else 8
        if n:
            _need(d.buffers[1], (off + n + 1) * w, "offsets", where)
    elif kind == Kind.VIEW:
        _buffer_count(d, 2, where)
    elif kind in (Kind.LIST_VIEW, Kind.LARGE_LIST_VIEW):
        _buffer_count(d, 3, where)
    elif kind in (Kind.SPARSE_UNION, Kind.DENSE_UNION):
        _buffer_count(d, 1 if kind == Kind.SPARSE_UNION else 2, where)
    elif kind == Kind.FIXED_SIZE_LIST:
        need = (off + n) * t.list_size
        if d.children[0].length < need:
            raise ArrowInvalid(f"{where}: fixed size list needs {need} child values, "
                               f"child has {d.children[0].length}")
    elif kind == Kind.STRUCT:
        for k, c in enumerate(d.children):
            if c.length < off + n:
                raise ArrowInvalid(f"{where}: struct child {k} has {c.length} values, expected "
                                   f"at least {off + n}")
    if kind == Kind.DICTIONARY:
        if d.dictionary is None:
            raise ArrowInvalid(f"{where}: dictionary array without a dictionary")
        if d.dictionary.type != t.value_type:
            raise ArrowInvalid(f"{where}: dictionary has type {d.dictionary.type}, expected "
                               f"{t.value_type}")
        validate_array(d.dictionary, full, f"{where}.dictionary", depth + 1)
    for k, c in enumerate(d.children):
        f = t.field(k)
        if c.type != f.type:
            raise ArrowInvalid(f"{where}: child {k} has type {c.type}, expected {f.type}")
        validate_array(c, full, f"{where}.{f.name}", depth + 1)
    check_content(d, where)
    if full:
        check_values(d, where)


def validate_values(d: ArrayData, where: str, dictionaries: bool = False) -> None:
    """The full level's value checks for `d` and its children, after the structural checks have
    passed (the IPC reader's eager full validation). Dictionaries are checked only when asked:
    the reader checks each one once, when its dictionary batch arrives, not with every batch."""
    check_values(d, where)
    t = d.type.storage_type
    for k, c in enumerate(d.children):
        validate_values(c, f"{where}.{t.field(k).name}", dictionaries)
    if dictionaries and d.dictionary is not None:
        validate_values(d.dictionary, f"{where}.dictionary", dictionaries)
