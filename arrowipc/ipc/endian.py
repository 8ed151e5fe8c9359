"""Byte-swapping big-endian IPC data to native (little-endian) order, one buffer copy per buffer.

Every multi-byte value is swapped element by element at its own width: integers, floats,
temporal values, decimals (whole 16/32-byte integers), interval parts, offsets, sizes, union
offsets, and the length/buffer index/offset words of binary views. Bitmaps, bytes and type ids
are left alone.
"""
from __future__ import annotations

from .. import types as T
from .._core.arraydata import ArrayData
from .._core.buffer import py_buffer
from ..types import Kind

TYPE_CHECKING = False               # typing itself is not imported at run time
if TYPE_CHECKING:
    from .._core.buffer import Buffer


__all__ = ["swap_array_data"]


def _swap(buf: Buffer | None, width: int, count: int | None = None,
          parts: tuple[int, ...] | None = None) -> Buffer | None:
    """A swapped copy of `buf` viewed as elements of `width` bytes (or of several parts)."""
    import numpy as np
    if buf is None or buf.size == 0:
        return buf
    raw = np.frombuffer(memoryview(buf), dtype=np.uint8)
    if parts is not None:                      # a struct of several words per element
        step = sum(parts)
        n = raw.size // step
        out = raw[: n * step].copy().reshape(n, step)
        pos = 0
        for w in parts:
            out[:, pos:pos + w] = out[:, pos:pos + w][:, ::-1]
            pos += w
        return py_buffer(np.concatenate([out.reshape(-1), raw[n * step:]]))
    n = raw.size // width
    body = raw[: n * width].reshape(n, width)[:, ::-1].reshape(-1)
    return py_buffer(np.concatenate([body, raw[n * width:]]))


_INTERVAL_PARTS = {"day_time_interval": (4, 4), "month_day_nano_interval": (4, 4, 8)}


def swap_array_data(d: ArrayData) -> ArrayData:
    """`d` with every multi-byte value in native order (new buffers where needed)."""
    t = d.type.storage_type
    kind = t.kind
    bufs = list(d.buffers)
    if kind == Kind.FIXED:
        if t.name in _INTERVAL_PARTS:
            bufs[1] = _swap(bufs[1], 0, parts=_INTERVAL_PARTS[t.name])
        elif not isinstance(t, T.FixedSizeBinaryType) and t.byte_width > 1:
            bufs[1] = _swap(bufs[1], t.byte_width)
    elif kind == Kind.DICTIONARY:
        if t.index_type.byte_width > 1:
            bufs[1] = _swap(bufs[1], t.index_type.byte_width)
    elif kind in (Kind.BINARY, Kind.LIST):
        bufs[1] = _swap(bufs[1], 4)
    elif kind in (Kind.LARGE_BINARY, Kind.LARGE_LIST):
        bufs[1] = _swap(bufs[1], 8)
    elif kind == Kind.LIST_VIEW:
        bufs[1], bufs[2] = _swap(bufs[1], 4), _swap(bufs[2], 4)
    elif kind == Kind.LARGE_LIST_VIEW:
        bufs[1], bufs[2] = _swap(bufs[1], 8), _swap(bufs[2], 8)
    elif kind == Kind.DENSE_UNION:
        bufs[1] = _swap(bufs[1], 4)
    elif kind == Kind.VIEW:
        bufs[1] = _swap_views(bufs[1])
    children = [swap_array_data(c) for c in d.children]
    dictionary = swap_array_data(d.dictionary) if d.dictionary is not None else None
    return ArrayData(d.type, d.length, d.offset, d.null_count, bufs, children, dictionary)


def _swap_views(buf: Buffer | None) -> Buffer | None:
    """Views: swap the length word always; buffer index and offset only for out-of-line views."""
    import numpy as np
    if buf is None or buf.size == 0:
        return buf
    v = np.frombuffer(memoryview(buf), dtype=np.uint8)[: buf.size // 16 * 16].copy().reshape(-1, 16)
    v[:, 0:4] = v[:, 0:4][:, ::-1]
    lengths = v[:, 0:4].copy().view("<i4").reshape(-1)
    out_of_line = lengths > 12
    for lo, hi in ((8, 12), (12, 16)):
        part = v[out_of_line, lo:hi]
        v[out_of_line, lo:hi] = part[:, ::-1]
    return py_buffer(v.reshape(-1))
