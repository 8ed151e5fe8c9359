"""Local paths as sources, read as pyarrow reads them by default: into memory this process owns.

A shared memory map of a file is not safe to read by default: another process that truncates
the file kills ours with SIGBUS at the next touch of a missing page, and one that rewrites it
changes arrays after they were validated (offsets then point anywhere, and a consumer given
them through the C data interface reads out of bounds). So a path is read with ordinary reads:
- the stream format, and the file format read whole without projection: the whole file in one
  read into one aligned buffer (the fastest way to get every byte; batches are views of it),
  unless it is larger than READ_WHOLE_LIMIT, when streams are read message by message and
  files batch by batch, so memory stays bounded;
- the file format otherwise (get_batch(i), projection, count_rows): `PathSource`, positioned
  reads (pread) of exactly the byte ranges a read needs, coalesced by the reader's plan.
`memory_map=True` maps the file instead (zero-copy; the risks above are then the caller's).
"""
from __future__ import annotations

import os
import threading

from .._core.buffer import Buffer, allocate_buffer
from ..errors import ArrowInvalid
from ..io import map_file

TYPE_CHECKING = False               # typing itself is not imported at run time
if TYPE_CHECKING:
    from .._typing import StrPath
    from .sources import BufferSource, FileSource

__all__ = ["READ_WHOLE_LIMIT", "PathSource", "open_path", "open_path_random_access", "read_path"]

# Files up to this size are read whole when every byte is wanted; larger ones in pieces.
READ_WHOLE_LIMIT = 256 << 20

_HAS_PREAD = hasattr(os, "preadv")


def _open_fd(path: str) -> int:
    if os.path.isdir(path):
        raise IsADirectoryError(21, "Is a directory", path)
    return os.open(path, os.O_RDONLY | getattr(os, "O_BINARY", 0) | getattr(os, "O_CLOEXEC", 0))


def _read_into(fd: int, view: memoryview, offset: int) -> int:
    """Bytes read into `view` from file offset `offset` (fewer only at the end of the file)."""
    got, n = 0, view.nbytes
    while got < n:
        if _HAS_PREAD:
            k = os.preadv(fd, [view[got:]], offset + got)
        else:                                       # callers hold the source's lock
            os.lseek(fd, offset + got, os.SEEK_SET)
            k = os.readv(fd, [view[got:]])
        if k <= 0:
            break
        got += k
    return got


def read_path(path: StrPath) -> Buffer:
    """The whole file at `path`, read into a 64-byte-aligned buffer this process owns (what
    the file holds when the read starts; shorter if it is truncated meanwhile)."""
    name = os.fspath(path)
    fd = _open_fd(name)
    try:
        size = os.fstat(fd).st_size
        buf = allocate_buffer(size, zero=False)
        got = _read_into(fd, memoryview(buf), 0) if size else 0
    finally:
        os.close(fd)
    return buf if got == size else buf.slice(0, got)


def _short_read(name: str, offset: int, expected: int, got: int) -> ArrowInvalid:
    return ArrowInvalid(f"{name}: expected {expected} bytes at offset {offset}, got {got} "
                        f"(file truncated)")


class PathSource:
    """Random access to a local file by positioned reads into buffers of ours: the file
    reader's source for a path (footer, then the ranges each read needs). Safe across threads.

    `bytes_read` and `read_requests` count the reads made (a request is one range).
    """

    def __init__(self, path: StrPath) -> None:
        self._fd: int | None = None
        self.name = os.fspath(path)
        self._fd = _open_fd(self.name)
        self._lock = threading.Lock()
        self.size: int = os.fstat(self._fd).st_size
        self.pos = 0
        self.seekable = True
        self.bytes_read = 0
        self.read_requests = 0

    def _fill(self, view: memoryview, offset: int) -> int:
        fd = self._fd
        if fd is None:
            raise ValueError(f"{self.name}: read from a closed file")
        if _HAS_PREAD:
            got = _read_into(fd, view, offset)
        else:
            with self._lock:
                got = _read_into(fd, view, offset)
        self.read_requests += 1
        self.bytes_read += got
        return got

    def read_at(self, offset: int, n: int) -> Buffer:
        """Exactly n bytes at `offset` (ArrowInvalid when the file ends first)."""
        if offset < 0 or n < 0:
            raise ArrowInvalid(f"{self.name}: bytes [{offset}, {offset}+{n}) are not a range")
        out = allocate_buffer(n, zero=False)
        got = self._fill(memoryview(out), offset) if n else 0
        if got != n:
            raise _short_read(self.name, offset, n, got)
        return out

    def read(self, n: int) -> Buffer:
        """Up to n bytes at the current position (fewer only at the end)."""
        n = max(0, n)
        out = allocate_buffer(n, zero=False)
        got = self._fill(memoryview(out), self.pos) if n else 0
        self.pos += got
        return out if got == n else out.slice(0, got)

    def fetch(self, ranges: list[tuple[int, int]], targets: list[memoryview]) -> None:
        """Read each (offset, length) range into its target (a writable memoryview of that
        length), in the order given; a short read means the file was truncated."""
        for (o, n), target in zip(ranges, targets):
            got = self._fill(target, o)
            if got != n:
                raise _short_read(self.name, o, n, got)

    def read_whole(self) -> Buffer:
        """The whole file as it is now, in one read (for the reader's in-memory path)."""
        fd = self._fd
        if fd is None:
            raise ValueError(f"{self.name}: read from a closed file")
        size = os.fstat(fd).st_size
        out = allocate_buffer(size, zero=False)
        got = self._fill(memoryview(out), 0) if size else 0
        return out if got == size else out.slice(0, got)

    def close(self) -> None:
        """Close the file (buffers already read stay valid: they are ours)."""
        fd, self._fd = self._fd, None
        if fd is not None:
            os.close(fd)

    def __del__(self) -> None:
        if getattr(self, "_fd", None) is not None:   # __init__ may have failed before
            self.close()


def open_path(path: StrPath, memory_map: bool = False) -> BufferSource | FileSource:
    """The source a stream, message or whole-file read of a local path reads: a mapping when
    `memory_map`; otherwise the whole file read into memory, or, past READ_WHOLE_LIMIT, the
    file read front to back."""
    from .sources import BufferSource, FileSource
    name = os.fspath(path)
    if memory_map:
        return BufferSource(map_file(name), name=name)
    if os.path.getsize(name) <= READ_WHOLE_LIMIT:
        return BufferSource(read_path(name), name=name)
    return FileSource(open(name, "rb", buffering=0), name=name, owns=True)


def open_path_random_access(path: StrPath, memory_map: bool = False
                            ) -> BufferSource | PathSource:
    """The source the file format's reader reads a local path through: a mapping when
    `memory_map`, else a PathSource (positioned reads of the ranges each read needs)."""
    from .sources import BufferSource
    name = os.fspath(path)
    if memory_map:
        return BufferSource(map_file(name), name=name)
    return PathSource(name)
