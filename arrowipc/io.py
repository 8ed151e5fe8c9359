"""In-memory sinks, buffer readers and memory-mapped files (pyarrow.io names)."""
from __future__ import annotations

import io
import mmap
import os

from ._core.buffer import Buffer, concat_buffers, py_buffer

__all__ = ["BufferOutputStream", "BufferReader", "MemoryMappedFile", "OSFile", "memory_map"]

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


class MemoryMappedFile(io.RawIOBase):
    """A read-only file object over a memory map of a whole file (pyarrow's MemoryMappedFile):
    read/seek/tell/size/close and a context manager; `read_buffer(n)` and the IPC readers view
    the mapping without copying (a reader starts at the file's position and leaves it there, so
    several readers, in several threads, may share one mapping).

    The mapping is shared with the file: if another process truncates the file, touching the
    missing pages kills this process with SIGBUS; if it rewrites the file, arrays already read
    change under their feet. Map only files nothing else writes while they are in use (see
    docs/validation.md). Closing drops this object's reference; the mapping itself lives until
    the last Buffer or array viewing it is gone.
    """

    def __init__(self, path: StrPath) -> None:
        super().__init__()
        self.path = os.fspath(path)
        self._buffer: Buffer | None = map_file(self.path)
        self._pos = 0

    @property
    def buffer(self) -> Buffer:
        """The whole mapping as a zero-copy Buffer."""
        if self._buffer is None:
            raise ValueError(f"I/O operation on a closed memory map of {self.path}")
        return self._buffer

    def close(self) -> None:
        """Refuse further reads; Buffers already handed out keep the mapping alive."""
        self._buffer = None
        super().close()

    def readable(self) -> bool:
        """True."""
        return True

    def seekable(self) -> bool:
        """True."""
        return True

    def size(self) -> int:
        """The mapped file's length in bytes."""
        return self.buffer.size

    def tell(self) -> int:
        """The current position."""
        return self._pos if self.buffer is not None else 0   # the property raises when closed

    def seek(self, pos: int, whence: int = 0) -> int:
        """Move to `pos` relative to the start (0), the position (1) or the end (2)."""
        if whence not in (0, 1, 2):
            raise ValueError(f"whence must be 0, 1 or 2, got {whence}")
        base = (0, self._pos, self.buffer.size)[whence]
        self._pos = max(0, base + pos)
        return self._pos

    def read_buffer(self, nbytes: int | None = None) -> Buffer:
        """The next `nbytes` (all that is left when None; fewer at the end) as a zero-copy
        Buffer viewing the mapping."""
        buf = self.buffer
        left = max(0, buf.size - self._pos)
        n = left if nbytes is None or nbytes < 0 else min(nbytes, left)
        out = buf.slice(self._pos, n)
        self._pos += n
        return out

    def read(self, nbytes: int | None = -1) -> bytes:
        """The next `nbytes` (all that is left when None or negative) as bytes (a copy)."""
        return self.read_buffer(nbytes).to_pybytes()

    def readall(self) -> bytes:
        """Everything from the position to the end (a copy)."""
        return self.read(-1)

    def readinto(self, b: WriteableBuffer) -> int:
        """Copy the next bytes into `b`; returns how many (0 at the end)."""
        mv = memoryview(b).cast("B")
        data = self.read_buffer(len(mv))
        mv[:data.size] = memoryview(data)
        return data.size

    def __repr__(self) -> str:
        state = "closed" if self._buffer is None else f"{self._buffer.size} bytes"
        return f"<arrowipc.io.MemoryMappedFile {self.path!r} ({state})>"


class OSFile(io.FileIO):
    """A local file opened for reading ("r", "rb"), writing ("w", "wb": truncated first) or
    appending ("a", "ab"), as pyarrow.OSFile: a file object the IPC readers and writers and
    feather take. `read_buffer(n)` returns the next bytes as a Buffer, `size()` the file's
    length; `mode` is "rb", "wb" or "ab". A file opened to write is not seekable, as in
    pyarrow; reading it, or writing one opened to read, raises OSError."""

    def __init__(self, path: StrPath, mode: str = "r", memory_pool: object = None) -> None:
        if mode not in ("r", "rb", "w", "wb", "a", "ab"):
            raise ValueError(f"Invalid file mode: {mode}")
        super().__init__(os.fspath(path), mode[0])
        self.path = os.fspath(path)

    def seekable(self) -> bool:
        """True when opened to read (pyarrow's write-only files do not seek)."""
        return self.readable()

    def size(self) -> int:
        """The file's length in bytes (a file opened to read)."""
        if not self.readable():
            raise OSError("only valid on readable files")
        return os.fstat(self.fileno()).st_size

    def read_buffer(self, nbytes: int | None = None) -> Buffer:
        """The next `nbytes` (all that is left when None; fewer at the end) as a Buffer."""
        return py_buffer(self.read(-1 if nbytes is None else nbytes))

    def read(self, size: int | None = -1) -> bytes:
        """The next `size` bytes (all that is left when None or negative)."""
        if not self.readable():
            raise OSError("only valid on readable files")
        return super().read(size)

    def write(self, b: ReadableBuffer) -> int:
        """Write `b`; returns the number of bytes written."""
        if not self.writable():
            raise OSError("only valid on writable files")
        return super().write(b)

    def __repr__(self) -> str:
        state = "closed" if self.closed else self.mode
        return f"<arrowipc.io.OSFile {self.path!r} ({state})>"


def map_file(path: StrPath) -> Buffer:
    """A read-only, zero-copy Buffer over a shared memory map of the whole file at `path` (the
    risks of MemoryMappedFile apply)."""
    with open(os.fspath(path), "rb") as f:
        size = os.fstat(f.fileno()).st_size
        if size == 0:
            return py_buffer(b"")
        mm = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
    return py_buffer(mm)


def memory_map(path: StrPath, mode: str = "r") -> MemoryMappedFile:
    """Open the file at `path` memory-mapped, read-only, as pyarrow.memory_map does: a file
    object (a context manager) whose reads, and the IPC readers given it, view the mapping
    without copying. Another process truncating or rewriting the file while it is mapped can
    crash this one (SIGBUS) or change data already read: see MemoryMappedFile."""
    if mode != "r":
        raise ValueError("only read-only memory maps are supported")
    return MemoryMappedFile(path)
