"""Where IPC bytes come from: in-memory buffers (zero-copy) and file-like objects (exact reads).

A source never reads ahead: the stream reader asks for exactly the prefix, metadata and body of
each message, so a file-like object is left positioned right after the end-of-stream marker.
"""
from __future__ import annotations

import os

from .._core.buffer import Buffer, allocate_buffer, py_buffer
from ..errors import ArrowInvalid
from ..io import BufferReader, memory_map

TYPE_CHECKING = False               # typing itself is not imported at run time
if TYPE_CHECKING:
    from typing import Any

# Bodies larger than this are read in chunks, so a header that claims a huge body cannot make us
# allocate more than the stream actually delivers.
_DIRECT_READ_LIMIT = 64 << 20


class BufferSource:
    """Reads from a Buffer; every read is a zero-copy slice."""

    def __init__(self, buf: Buffer, name: str = "buffer"):
        self.buf = buf
        self.pos = 0
        self.end = buf.size
        self.name = name

    @property
    def size(self) -> int:
        return self.buf.size

    def read(self, n: int) -> Buffer:
        """Up to n bytes (fewer only at the end)."""
        n = max(0, min(n, self.buf.size - self.pos))
        out = self.buf.slice(self.pos, n)
        self.pos += n
        return out

    def read_at(self, offset: int, n: int) -> Buffer:
        if offset < 0 or n < 0 or offset > self.buf.size or n > self.buf.size - offset:
            raise ArrowInvalid(f"{self.name}: bytes [{offset}, {offset}+{n}) are outside the "
                               f"{self.buf.size}-byte input")
        return self.buf.slice(offset, n)

    def close(self):
        pass


class FileSource:
    """Reads from a file-like object with read()/readinto(); bodies land in aligned buffers."""

    def __init__(self, f, name: str = "file", owns: bool = False):
        self.f = f
        self.name = name
        self.owns = owns
        self.pos = f.tell() if _seekable(f) else 0
        self._readinto: Any = getattr(f, "readinto", None)
        self._read_buffer = getattr(f, "read_buffer", None)

    @property
    def size(self) -> int:
        cur = self.f.tell()
        end = self.f.seek(0, os.SEEK_END)
        self.f.seek(cur)
        return end

    def read(self, n: int) -> Buffer:
        if n <= 0:
            return py_buffer(b"")
        if self._read_buffer is not None:          # zero-copy BufferReader, pyarrow NativeFile
            out = as_buffer(self._read_buffer(n))
            self.pos += out.size
            return out
        if n <= _DIRECT_READ_LIMIT and self._readinto is not None:
            out = allocate_buffer(n, zero=False)
            got = self._readinto_fully(out, n)
            self.pos += got
            return out if got == n else out.slice(0, got)
        chunks, got = [], 0
        while got < n:
            chunk = self.f.read(min(n - got, _DIRECT_READ_LIMIT))
            if not chunk:
                break
            chunks.append(chunk)
            got += len(chunk)
        self.pos += got
        data = b"".join(chunks)
        return py_buffer(data)

    def _readinto_fully(self, out: Buffer, n: int) -> int:
        view = memoryview(out)  # our allocations are writable
        got = 0
        while got < n:
            k = self._readinto(view[got:n])
            if not k:
                break
            got += k
        return got

    def read_at(self, offset: int, n: int) -> Buffer:
        self.f.seek(offset)
        self.pos = offset
        out = self.read(n)
        if out.size != n:
            raise ArrowInvalid(f"{self.name}: expected {n} bytes at offset {offset}, "
                               f"got {out.size} (file truncated)")
        return out

    def close(self):
        if self.owns:
            self.f.close()


def as_buffer(obj) -> Buffer:
    """`obj` (any object exporting the buffer protocol, e.g. a pyarrow.Buffer) as a Buffer: a
    zero-copy view that keeps `obj` alive."""
    return obj if isinstance(obj, Buffer) else py_buffer(obj)


def _seekable(f) -> bool:
    try:
        return bool(f.seekable())
    except Exception:
        return False


def open_source(source: object) -> BufferSource | FileSource:
    """A BufferSource or FileSource for bytes-like objects, Buffers, paths and file-likes."""
    if isinstance(source, (bytes, bytearray, memoryview, Buffer)):
        return BufferSource(py_buffer(source))
    if isinstance(source, (str, os.PathLike)):
        return BufferSource(memory_map(source), name=os.fspath(source))
    if isinstance(source, BufferReader):
        return FileSource(source, name="BufferReader")
    if hasattr(source, "read"):
        return FileSource(source, name=getattr(source, "name", "file-like object")
                          if isinstance(getattr(source, "name", None), str) else "file-like object")
    try:
        return BufferSource(py_buffer(source))
    except TypeError:
        raise TypeError(f"cannot read IPC data from a {type(source).__name__}: expected bytes, "
                        f"a buffer, a path or a file-like object") from None
