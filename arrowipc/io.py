"""In-memory sinks, buffer readers and memory maps (pyarrow.io names)."""
from __future__ import annotations

import io
import mmap
import os

from ._core.buffer import Buffer, concat_buffers, py_buffer

__all__ = ["BufferOutputStream", "BufferReader", "memory_map"]

TYPE_CHECKING = False               # typing itself is not imported at run time
if TYPE_CHECKING:
    from typing import Any

    from _typeshed import ReadableBuffer, StrPath, WriteableBuffer


class BufferOutputStream:
    """An in-memory sink. Immutable inputs are kept by reference and joined once in getvalue()."""

    def __init__(self) -> None:
        self._parts: list[Buffer | bytes] = []
        self._size = 0
        self.closed = False

    def write(self, data: ReadableBuffer) -> int:
        """Append `data` (kept by reference when immutable); returns the number of bytes."""
        if self.closed:
            raise ValueError("write to a closed BufferOutputStream")
        part: Buffer | bytes
        if isinstance(data, Buffer) and not data.is_mutable:
            part = data
        elif isinstance(data, bytes):
            part = data
        else:
            part = bytes(data)  # the caller may reuse a mutable buffer: keep a copy
        n = len(part)
        if n:
            self._parts.append(part)
            self._size += n
        return n

    def _extend(self, parts: list[Any], nbytes: int) -> None:
        """Append immutable parts by reference (the IPC writer's gather path)."""
        if self.closed:
            raise ValueError("write to a closed BufferOutputStream")
        self._parts.extend(parts)
        self._size += nbytes

    def tell(self) -> int:
        """The number of bytes written so far."""
        return self._size

    def flush(self) -> None:
        """Nothing to flush: the bytes are in memory."""


    def close(self) -> None:
        """Refuse further writes; getvalue() still works."""
        self.closed = True

    def writable(self) -> bool:
        """True: a sink is writable."""
        return True

    def getvalue(self) -> Buffer:
        """The bytes written so far as one 64-byte-aligned Buffer (one gather copy)."""
        if len(self._parts) != 1:
            self._parts = [concat_buffers(self._parts, self._size)]
        return py_buffer(self._parts[0])


class BufferReader(io.RawIOBase):
    """A read-only file-like object over a buffer (zero-copy source for the IPC readers)."""

    def __init__(self, obj: ReadableBuffer) -> None:
        super().__init__()
        self.buffer = py_buffer(obj)
        self._pos = 0

    def readable(self) -> bool:
        """True."""
        return True

    def seekable(self) -> bool:
        """True."""
        return True

    def tell(self) -> int:
        """The current position."""
        return self._pos

    def seek(self, pos: int, whence: int = 0) -> int:
        """Move to `pos` relative to the start (0), the position (1) or the end (2)."""
        base = {0: 0, 1: self._pos, 2: self.buffer.size}[whence]
        self._pos = max(0, base + pos)
        return self._pos

    def readinto(self, b: WriteableBuffer) -> int:
        """Copy the next bytes into `b`; returns how many (0 at the end)."""
        mv = memoryview(b).cast("B")
        n = max(0, min(len(mv), self.buffer.size - self._pos))
        mv[:n] = memoryview(self.buffer)[self._pos:self._pos + n]
        self._pos += n
        return n

    def read_buffer(self, n: int) -> Buffer:
        """The next `n` bytes (fewer at the end) as a zero-copy Buffer."""
        n = max(0, min(n, self.buffer.size - self._pos))
        out = self.buffer.slice(self._pos, n)
        self._pos += n
        return out


def memory_map(path: StrPath, mode: str = "r") -> Buffer:
    """A read-only, zero-copy Buffer over the whole file at `path`."""
    if mode != "r":
        raise ValueError("only read-only memory maps are supported")
    with open(os.fspath(path), "rb") as f:
        size = os.fstat(f.fileno()).st_size
        if size == 0:
            return py_buffer(b"")
        mm = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
    return py_buffer(mm)
