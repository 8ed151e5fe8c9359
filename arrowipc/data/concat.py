"""Concatenation of arrays of one type into a single ArrayData (used for dictionary deltas,
combine_chunks and ChunkedArray flattening). Buffers are copied once, in bulk, per layout."""
from __future__ import annotations

from .._core.arraydata import ArrayData
from .._core.bitmap import concat_bitmaps
from .._core.buffer import concat_buffers
from .._core.offsets import concat_offsets
from ..validate import null_count_of
from ..errors import ArrowInvalid
from ..types import Kind

TYPE_CHECKING = False               # typing itself is not imported at run time
if TYPE_CHECKING:
    from typing import Any

    from .._core.buffer import Buffer


__all__ = ["concat_array_data"]


def _buffer(d: ArrayData, i: int) -> Buffer:
    """Buffer `i` of `d`, one its layout always has (only validity bitmaps may be absent)."""
    b = d.buffers[i]
    assert b is not None, f"{d.type} data without its buffer {i}"
    return b


def _bitmap_concat(parts: list[ArrayData], index: int) -> Buffer | None:
    """Validity (index 0) or bool values (index 1) of parts joined at bit 0 of a new bitmap."""
    if index == 0 and all(null_count_of(p) == 0 for p in parts):
        return None
    total = sum(p.length for p in parts)
    return concat_bitmaps([(p.buffers[index] if p.buffers else None, p.offset, p.length)
                           for p in parts], total)


def concat_array_data(parts: list[ArrayData]) -> ArrayData:
    """One ArrayData with the values of `parts` (all of one type) back to back."""
    if not parts:
        raise ArrowInvalid("concatenation needs at least one array")
    t = parts[0].type
    for p in parts[1:]:
        if p.type != t:
            raise ArrowInvalid(f"cannot concatenate arrays of type {t} and {p.type}")
    nonempty = [p for p in parts if p.length]
    if len(nonempty) <= 1:
        return nonempty[0] if nonempty else parts[0]
    parts = nonempty
    total = sum(p.length for p in parts)
    nulls = sum(null_count_of(p) for p in parts)
    kind = t.storage_type.kind
    validity = _bitmap_concat(parts, 0) if kind not in (Kind.NULL,) else None
    if kind == Kind.NULL:
        return ArrayData(t, total, 0, total, [], [])
    if kind == Kind.BOOL:
        return ArrayData(t, total, 0, nulls, [validity, _bitmap_concat(parts, 1)], [])
    if kind in (Kind.FIXED, Kind.DICTIONARY):
        st = t.storage_type
        w = st.index_type.byte_width if kind == Kind.DICTIONARY else st.byte_width
        values = concat_buffers([_buffer(p, 1).slice(p.offset * w, p.length * w) for p in parts],
                                total * w)
        dictionary = parts[0].dictionary
        if kind == Kind.DICTIONARY and any(p.dictionary is not dictionary for p in parts):
            raise ArrowInvalid("cannot concatenate dictionary arrays with different dictionaries")
        return ArrayData(t, total, 0, nulls, [validity, values], [], dictionary)
    if kind in (Kind.BINARY, Kind.LARGE_BINARY, Kind.LIST, Kind.LARGE_LIST):
        w = 4 if kind in (Kind.BINARY, Kind.LIST) else 8
        offsets, spans = concat_offsets([(_buffer(p, 1), p.offset, p.length) for p in parts], w)
        if kind in (Kind.BINARY, Kind.LARGE_BINARY):
            data = concat_buffers([_buffer(p, 2).slice(a, b - a)
                                   for p, (a, b) in zip(parts, spans)],
                                  sum(b - a for a, b in spans))
            return ArrayData(t, total, 0, nulls, [validity, offsets, data], [])
        child = concat_array_data([p.children[0].slice(a, b - a)
                                   for p, (a, b) in zip(parts, spans)])
        return ArrayData(t, total, 0, nulls, [validity, offsets], [child])
    if kind == Kind.FIXED_SIZE_LIST:
        size = t.storage_type.list_size
        child = concat_array_data([p.children[0].slice(p.offset * size, p.length * size)
                                   for p in parts])
        return ArrayData(t, total, 0, nulls, [validity], [child])
    if kind == Kind.STRUCT:
        children = [concat_array_data([p.children[k].slice(p.offset, p.length)
                                       for p in parts]) for k in range(t.storage_type.num_fields)]
        return ArrayData(t, total, 0, nulls, [validity], children)
    if kind == Kind.SPARSE_UNION:
        type_ids = concat_buffers([_buffer(p, 0).slice(p.offset, p.length) for p in parts], total)
        children = [concat_array_data([p.children[k].slice(p.offset, p.length)
                                       for p in parts]) for k in range(t.storage_type.num_fields)]
        return ArrayData(t, total, 0, 0, [type_ids], children)
    if kind == Kind.DENSE_UNION:
        return _concat_dense_union(t, parts, total)
    # remaining layouts (views, list views, run-end encoded): through Python values
    from .from_python import array_data_from_python
    from .to_python import to_pylist
    pylist: list[object] = []
    for p in parts:
        pylist += to_pylist(p)
    return array_data_from_python(pylist, t)


def _concat_dense_union(t: Any, parts: list[ArrayData], total: int) -> ArrayData:
    """Dense unions: children concatenated whole; each part's offsets shifted by the lengths of
    the same child in the parts before it."""
    from array import array as _pyarray
    codes = t.storage_type.type_codes
    child_of = {c: k for k, c in enumerate(codes)}
    type_ids = concat_buffers([_buffer(p, 0).slice(p.offset, p.length) for p in parts], total)
    base = [0] * len(codes)
    offsets = _pyarray("i")
    for p in parts:
        ids = memoryview(_buffer(p, 0))[p.offset:p.offset + p.length].cast("b")
        offs = memoryview(_buffer(p, 1))[p.offset * 4:(p.offset + p.length) * 4].cast("i")
        for code, o in zip(ids, offs):
            offsets.append(o + base[child_of[code]])
        for k in range(len(codes)):
            base[k] += p.children[k].length
    children = [concat_array_data([p.children[k] for p in parts]) for k in range(len(codes))]
    from .._core.buffer import py_buffer
    return ArrayData(t, total, 0, 0, [type_ids, py_buffer(offsets.tobytes())], children)
