"""In-memory sinks, buffer readers and memory maps (pyarrow.io names)."""
from __future__ import annotations

import io
import mmap
import os

from ._core.buffer import Buffer, concat_buffers, py_buffer


class BufferOutputStream:
    """An in-memory sink. Immutable inputs are kept by reference and joined once in getvalue()."""

    def __init__(self) -> None:
        self._parts = []
        self._size = 0
        self.closed = False

    def write(self, data) -> int:
        if self.closed:
            raise ValueError("write to a closed BufferOutputStream")
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

    def _extend(self, parts: list, nbytes: int) -> None:
        """Append immutable parts by reference (the IPC writer's gather path)."""
        if self.closed:
            raise ValueError("write to a closed BufferOutputStream")
        self._parts.extend(parts)
        self._size += nbytes

    def tell(self) -> int:
        return self._size

    def flush(self) -> None:
        pass

    def close(self) -> None:
        self.closed = True

    def writable(self) -> bool:
        return True

    def getvalue(self) -> Buffer:
        """The bytes written so far as one 64-byte-aligned Buffer (one gather copy)."""
        if len(self._parts) != 1:
            self._parts = [concat_buffers(self._parts, self._size)]
        return py_buffer(self._parts[0])


class BufferReader(io.RawIOBase):
    """A read-only file-like object over a buffer (zero-copy source for the IPC readers)."""

    def __init__(self, obj) -> None:
        super().__init__()
        self.buffer = py_buffer(obj)
        self._pos = 0

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def tell(self):
        return self._pos

    def seek(self, pos, whence: int = 0):
        base = {0: 0, 1: self._pos, 2: self.buffer.size}[whence]
        self._pos = max(0, base + pos)
        return self._pos

    def readinto(self, b):
        mv = memoryview(b).cast("B")
        n = max(0, min(len(mv), self.buffer.size - self._pos))
        mv[:n] = memoryview(self.buffer)[self._pos:self._pos + n]
        self._pos += n
        return n

    def read_buffer(self, n: int) -> Buffer:
        n = max(0, min(n, self.buffer.size - self._pos))
        out = self.buffer.slice(self._pos, n)
        self._pos += n
        return out


def memory_map(path, mode: str = "r") -> Buffer:
    """A read-only, zero-copy Buffer over the whole file at `path`."""
    if mode != "r":
        raise ValueError("only read-only memory maps are supported")
    with open(os.fspath(path), "rb") as f:
        size = os.fstat(f.fileno()).st_size
        if size == 0:
            return py_buffer(b"")
        mm = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
    return py_buffer(mm)
