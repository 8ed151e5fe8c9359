"""Where IPC bytes come from: in-memory buffers (zero-copy), file-like objects (exact reads) and
local paths (read into memory of ours, as needed: paths.py; mapped only when asked).

A source never reads ahead: the stream reader asks for exactly the prefix, metadata and body of
each message, so a file-like object is left positioned right after the end-of-stream marker.
"""
from __future__ import annotations

import os

from .._core.buffer import Buffer, allocate_buffer, py_buffer
from ..errors import ArrowInvalid
from ..io import BufferReader, MemoryMappedFile, map_file
from . import paths as local_paths
from .paths import PathSource, read_fd, read_path

TYPE_CHECKING = False               # typing itself is not imported at run time
if TYPE_CHECKING:
    from typing import Any, Callable

    from .._typing import StrPath

__all__ = ["as_buffer", "BufferSource", "FileSource", "LocalFileSource", "open_path",
           "open_path_random_access", "open_source"]

# Bodies larger than this are read in chunks, so a header that claims a huge body cannot make us
# allocate more than the stream actually delivers.
_DIRECT_READ_LIMIT = 64 << 20


class BufferSource:
    """Reads from a Buffer; every read is a zero-copy slice."""

    def __init__(self, buf: Buffer, name: str = "buffer") -> None:
        self.buf = buf
        self.pos = 0
        self.end = buf.size
        self.name = name

    @property
    def size(self) -> int:
        """The buffer's length in bytes."""
        return self.buf.size

    def read(self, n: int) -> Buffer:
        """Up to n bytes (fewer only at the end)."""
        n = max(0, min(n, self.buf.size - self.pos))
        out = self.buf.slice(self.pos, n)
        self.pos += n
        return out

    def read_at(self, offset: int, n: int) -> Buffer:
        """Exactly n bytes at `offset` (ArrowInvalid when they are not all there)."""
        if offset < 0 or n < 0 or offset > self.buf.size or n > self.buf.size - offset:
            raise ArrowInvalid(f"{self.name}: bytes [{offset}, {offset}+{n}) are outside the "
                               f"{self.buf.size}-byte input")
        return self.buf.slice(offset, n)

    def close(self) -> None:
        """Nothing to release: the buffer belongs to its owner."""


class FileSource:
    """Reads from a file-like object with read()/readinto(); bodies land in aligned buffers.

    `bytes_read` and `read_requests` count what was asked of the object (a request is one
    read() of ours, however many calls the object needed to fill it).
    """

    def __init__(self, f: Any, name: str = "file", owns: bool = False) -> None:
        self.f = f
        self.name = name
        self.owns = owns
        self.pos = f.tell() if _seekable(f) else 0
        self._readinto: Any = getattr(f, "readinto", None)
        self._read_buffer = getattr(f, "read_buffer", None)
        self.bytes_read = 0
        self.read_requests = 0

    @property
    def size(self) -> int:
        """The object's length in bytes (it is seeked to the end and back)."""
        cur = self.f.tell()
        end: int = self.f.seek(0, os.SEEK_END)
        self.f.seek(cur)
        return end

    def read(self, n: int) -> Buffer:
        """Up to n bytes (fewer only at the end), as one request."""
        if n <= 0:
            return py_buffer(b"")
        out = self._read(n)
        self.read_requests += 1
        self.bytes_read += out.size
        return out

    def _read(self, n: int) -> Buffer:
        if self._read_buffer is not None:          # zero-copy BufferReader, pyarrow NativeFile
            out = as_buffer(self._read_buffer(n))
            self.pos += out.size
            return out
        if n <= _DIRECT_READ_LIMIT and self._readinto is not None:
            out = allocate_buffer(n, zero=False)
            got = self._readinto_fully(out, n)
            self.pos += got
            return out if got == n else out.slice(0, got)
        chunks: list[bytes] = []
        got = 0
        while got < n:
            chunk = self.f.read(min(n - got, _DIRECT_READ_LIMIT))
            if not chunk:
                break
            chunks.append(chunk)
            got += len(chunk)
        self.pos += got
        data = b"".join(chunks)
        return py_buffer(data)

    def _readinto_fully(self, out: Buffer | memoryview, n: int) -> int:
        """Bytes read into the first `n` of `out` (fewer only at the end of the object)."""
        view = memoryview(out)  # our allocations are writable
        got = 0
        while got < n:
            k = self._readinto(view[got:n])
            if not k:
                break
            got += k
        return got

    def read_at(self, offset: int, n: int) -> Buffer:
        """Exactly n bytes at `offset` (ArrowInvalid when the file ends first)."""
        self.f.seek(offset)
        self.pos = offset
        out = self.read(n)
        if out.size != n:
            raise _short_read(self.name, offset, n, out.size)
        return out

    @property
    def seekable(self) -> bool:
        """Whether the object can seek: its seekable() says, or, lacking one, having seek()."""
        if getattr(self.f, "seekable", None) is None:
            return hasattr(self.f, "seek") and hasattr(self.f, "tell")
        return _seekable(self.f)

    def fetch(self, ranges: list[tuple[int, int]], targets: list[memoryview]) -> None:
        """Read each (offset, length) range into its target (a writable memoryview of that
        length): through the object's filesystem in one concurrent call when it is an fsspec
        file, else one seek and read per range, in the order given (file order for a plan)."""
        cat_ranges = _cat_ranges_of(self.f) if len(ranges) > 1 else None
        if cat_ranges is not None:
            try:
                parts = cat_ranges([self.f.path] * len(ranges), [o for o, _ in ranges],
                                   [o + n for o, n in ranges], on_error="raise")
            except Exception as e:      # the filesystem's own errors (network, auth)
                raise _io_error(e, self.name) from e
            fill_targets(self, ranges, parts, targets)
            return
        for (o, n), target in zip(ranges, targets):
            self.f.seek(o)
            self.pos = o
            got = self.read_into(target)
            if got != n:
                raise _short_read(self.name, o, n, got)

    def read_into(self, view: memoryview) -> int:
        """Read up to len(view) bytes at the current position into `view` (one request)."""
        n = view.nbytes
        if self._readinto is not None:
            got = self._readinto_fully(view, n)
            self.pos += got
        else:
            data = self._read(n)                 # which moves pos itself
            got = data.size
            view[:got] = memoryview(data)
        self.read_requests += 1
        self.bytes_read += got
        return got

    def close(self) -> None:
        """Close the object when this source opened it."""
        if self.owns:
            self.f.close()


def _cat_ranges_of(f: Any) -> Callable[..., list[bytes]] | None:
    """fsspec's concurrent multi-range read for an fsspec file object, else None."""
    fs = getattr(f, "fs", None)
    if fs is None or not isinstance(getattr(f, "path", None), str):
        return None
    return getattr(fs, "cat_ranges", None)


def fill_targets(source: Any, ranges: list[tuple[int, int]], parts: list[Any],
                 targets: list[memoryview]) -> None:
    """Copy the part fetched for each (offset, length) range into its target, counting one
    request and its bytes in the source's statistics; a short part means a truncated file."""
    for (o, n), data, target in zip(ranges, parts, targets):
        if isinstance(data, BaseException):  # a filesystem that reports failures in the list
            raise _io_error(data if isinstance(data, Exception) else OSError(str(data)),
                            source.name) from data
        source.read_requests += 1
        source.bytes_read += len(data)
        if len(data) != n:
            raise _short_read(source.name, o, n, len(data))
        target[:] = data


def _short_read(name: str, offset: int, expected: int, got: int) -> ArrowInvalid:
    return ArrowInvalid(f"{name}: expected {expected} bytes at offset {offset}, got {got} "
                        f"(file truncated)")


def _io_error(error: Exception, name: str) -> OSError:
    """An OSError naming the source (a URL) for an error the I/O layer raised."""
    if isinstance(error, OSError) and name in str(error):
        return error
    cls = type(error) if isinstance(error, OSError) else OSError
    try:
        return cls(f"{name}: {error}")
    except TypeError:
        return OSError(f"{name}: {error}")


def as_buffer(obj: Any) -> Buffer:
    """`obj` (any object exporting the buffer protocol, e.g. a pyarrow.Buffer) as a Buffer: a
    zero-copy view that keeps `obj` alive."""
    return obj if isinstance(obj, Buffer) else py_buffer(obj)


def _seekable(f: Any) -> bool:
    try:
        return bool(f.seekable())
    except Exception:
        return False


def open_source(source: object) -> BufferSource | FileSource:
    """A BufferSource or FileSource for bytes-like objects, Buffers, paths and file-likes.

    A path is read whole into memory (see paths.py: never mapped; the readers read paths
    through open_path, as needed); a memory-mapped file is read zero-copy from its position."""
    if isinstance(source, (bytes, bytearray, memoryview, Buffer)):
        return BufferSource(py_buffer(source))
    if isinstance(source, (str, os.PathLike)):
        return BufferSource(read_path(source), name=os.fspath(source))
    if isinstance(source, MemoryMappedFile):
        mapped = BufferSource(source.buffer, name=source.path)
        mapped.pos = min(source.tell(), mapped.end)
        return mapped
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


class LocalFileSource(FileSource):
    """A local file a reader opened by path, read front to back as needed (a schema, a message)
    until the reader wants its batches: then `in_memory()` reads it whole."""

    def in_memory(self) -> BufferSource | LocalFileSource:
        """The rest of the file as a BufferSource at the same position (the whole file read in
        one read, so positions stay the file's), or this source past READ_WHOLE_LIMIT."""
        fd = self.f.fileno()
        if os.fstat(fd).st_size > local_paths.READ_WHOLE_LIMIT:
            return self
        whole = read_fd(fd)
        self.read_requests += 1
        self.bytes_read += whole.size
        out = BufferSource(whole, name=self.name)
        out.pos = min(self.pos, whole.size)
        self.close()
        return out

    def __del__(self) -> None:
        # a reader dropped without close() closes the file it opened, quietly (as pyarrow's)
        f = getattr(self, "f", None)
        if f is not None and not f.closed:
            f.close()


def open_path(path: StrPath, memory_map: bool = False) -> BufferSource | LocalFileSource:
    """The source a stream or message read of a local path reads: a mapping when `memory_map`,
    else the file, read as needed (LocalFileSource.in_memory reads it whole for batches)."""
    name = os.fspath(path)
    if memory_map:
        return BufferSource(map_file(name), name=name)
    if os.path.isdir(name):
        raise IsADirectoryError(21, "Is a directory", name)
    return LocalFileSource(open(name, "rb", buffering=0), name=name, owns=True)


def open_path_random_access(path: StrPath, memory_map: bool = False
                            ) -> BufferSource | PathSource:
    """The source the file format's reader reads a local path through: a mapping when
    `memory_map`, else a PathSource (positioned reads of the ranges each read needs)."""
    name = os.fspath(path)
    if memory_map:
        return BufferSource(map_file(name), name=name)
    return PathSource(name)
