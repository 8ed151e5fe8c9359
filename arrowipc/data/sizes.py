"""Buffer size counting over ArrayData: the bytes an array's buffers hold (`get_total_buffer_size`)
and the bytes it references (`nbytes`, pyarrow's rules for slices)."""
from __future__ import annotations

from ..errors import ArrowTypeError
from ..types import Kind

TYPE_CHECKING = False               # typing itself is not imported at run time
if TYPE_CHECKING:
    from typing import Any, Iterable

    from .._core.arraydata import ArrayData
    from .._core.buffer import Buffer

__all__ = ["referenced_buffer_size", "total_buffer_size"]


def total_buffer_size(datas: Iterable[ArrayData]) -> int:
    """Bytes of the buffers under `datas` (ArrayData), children and dictionaries included, each
    buffer counted once by address."""
    seen: set[int] = set()
    total = 0
    stack = list(datas)
    while stack:
        d = stack.pop()
        for b in d.buffers:
            if b is not None and b.address not in seen:
                seen.add(b.address)
                total += b.size
        stack.extend(d.children)
        if d.dictionary is not None:
            stack.append(d.dictionary)
    return total


def referenced_buffer_size(data: ArrayData) -> int:
    """Bytes of the buffer ranges `data` (ArrayData) references, by pyarrow's rules for
    `nbytes`: a slice counts its own part of each buffer (bitmaps by covering bytes, offsets
    `length` entries, the values the offsets span), dictionaries whole, view types' data buffers
    and list views' children whole, a dense union's children by counting type ids."""
    return _referenced(data, data.offset, data.length)


def _int_at(buf: Any, width: int, index: int) -> int:
    import struct
    value: int = struct.unpack_from("=" + {1: "b", 2: "h", 4: "i", 8: "q"}[width], buf,
                                    index * width)[0]
    return value


def _covering_bytes(bit_offset: int, bits: int) -> int:
    return (bit_offset + bits + 7) // 8 - bit_offset // 8


def _referenced(d: Any, offset: int, length: int) -> int:
    # d: ArrayData whose buffers and dictionary its layout (`kind`) guarantees present
    t = d.type.storage_type
    k = t.kind
    bufs: list[Buffer | None] = d.buffers
    total = 0
    # pyarrow counts no validity bitmap for structs (nor unions, which have none)
    if k not in (Kind.NULL, Kind.STRUCT, Kind.SPARSE_UNION, Kind.DENSE_UNION,
                 Kind.RUN_END_ENCODED) and bufs and bufs[0] is not None:
        total += _covering_bytes(offset, length)
    if k == Kind.NULL:
        return 0
    if k in (Kind.BOOL, Kind.FIXED, Kind.DICTIONARY):
        width = t.index_type.bit_width if k == Kind.DICTIONARY else t.bit_width
        total += _covering_bytes(offset * width, length * width)
        if k == Kind.DICTIONARY:
            dic = d.dictionary
            total += _referenced(dic, dic.offset, dic.length)
        return total
    if k in (Kind.BINARY, Kind.LARGE_BINARY, Kind.LIST, Kind.LARGE_LIST):
        w = 4 if k in (Kind.BINARY, Kind.LIST) else 8
        total += w * length
        start = _int_at(bufs[1], w, offset)
        end = _int_at(bufs[1], w, offset + length)
        if k in (Kind.BINARY, Kind.LARGE_BINARY):
            return total + end - start
        return total + _referenced(d.children[0], start, end - start)
    if k == Kind.VIEW:
        return total + 16 * length + sum(b.size for b in bufs[2:] if b is not None)
    if k in (Kind.LIST_VIEW, Kind.LARGE_LIST_VIEW):
        w = 4 if k == Kind.LIST_VIEW else 8
        child = d.children[0]
        return total + 2 * w * length + _referenced(child, child.offset, child.length)
    if k == Kind.FIXED_SIZE_LIST:
        n = t.list_size
        return total + _referenced(d.children[0], offset * n, length * n)
    if k in (Kind.STRUCT, Kind.SPARSE_UNION):
        if k == Kind.SPARSE_UNION:
            total += length
        return total + sum(_referenced(c, offset + c.offset, length) for c in d.children)
    if k == Kind.DENSE_UNION:
        total += 5 * length                   # int8 type ids and int32 offsets
        import numpy as np
        # a union's buffers are (type ids, offsets); children are counted from the type ids
        ids = np.frombuffer(bufs[0], np.int8, count=offset + length)  # type: ignore[call-overload]
        before = np.bincount(ids[:offset], minlength=128)
        within = np.bincount(ids[offset:], minlength=128)
        return total + sum(_referenced(c, int(before[code]) + c.offset, int(within[code]))
                           for code, c in zip(t.type_codes, d.children))
    if k == Kind.RUN_END_ENCODED:
        run_ends = d.children[0]
        w = run_ends.type.bit_width // 8
        n = run_ends.length

        def first_run_ending_after(pos: int) -> int:
            lo, hi = 0, n
            while lo < hi:
                mid = (lo + hi) // 2
                if _int_at(run_ends.buffers[1], w, run_ends.offset + mid) > pos:
                    hi = mid
                else:
                    lo = mid + 1
            return lo
        phys = first_run_ending_after(offset)
        count = 0 if length == 0 else first_run_ending_after(offset + length - 1) - phys + 1
        return sum(_referenced(c, c.offset + phys, count) for c in d.children)
    raise ArrowTypeError(f"Extracting byte ranges not supported for type {d.type}")
