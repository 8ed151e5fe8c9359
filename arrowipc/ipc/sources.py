"""Where IPC bytes come from: in-memory buffers (zero-copy), file-like objects (exact reads) and
local paths (read into memory of ours, as needed: paths.py; mapped only when asked).

A source never reads ahead: the stream reader asks for exactly the prefix, metadata and body of
each message, so a file-like object is left positioned right after the end-of-stream marker.
"""
from __future__ import annotations

import os

from .._core.buffer import Buffer, allocate_buffer, py_buffer
from ..errors import ArrowCapacityError, ArrowException, ArrowInvalid, ArrowIOError
from ..io import BufferReader, MemoryMappedFile, map_file
from . import paths as local_paths
from .paths import PathSource, read_fd, read_path

TYPE_CHECKING = False               # typing itself is not imported at run time
if TYPE_CHECKING:
    from typing import Any, Callable

    from .._typing import StrPath

__all__ = ["allocate_claimed", "as_buffer", "BufferSource", "FileSource", "LocalFileSource",
           "open_path", "open_path_random_access", "open_source"]

# Bodies larger than this are allocated only as far as the object says it holds them (seekable
# objects) or grown as they arrive (the others), so a header that claims a huge body cannot make
# us allocate more than the stream actually delivers; either way they are read into one buffer
# once.
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

    The object is not trusted to keep its contract: a read that returns more than asked, a
    negative count, None (a non-blocking object with no data ready) or an object of the wrong
    type, a seek that lands elsewhere, a size or position that is not a count, and any
    exception it raises are ArrowIOError (an OSError) naming the source and the byte offset;
    an OSError of its own keeps its class, with the source and offset added.
    """

    def __init__(self, f: Any, name: str = "file", owns: bool = False) -> None:
        self.f = f
        self.name = name
        self.owns = owns
        self.pos = 0
        if _seekable(f):
            self.pos = self._position(self._call("tell", 0, f.tell), "tell()", 0)
        self._readinto: Any = getattr(f, "readinto", None)
        self._read_buffer = getattr(f, "read_buffer", None)
        self.bytes_read = 0
        self.read_requests = 0

    # -- the object's answers, checked ---------------------------------------------------------
    def _call(self, what: str, offset: int, method: Any, *args: Any) -> Any:
        """method(*args), its exceptions made ArrowIOError/OSError naming the source."""
        try:
            return method(*args)
        except ArrowException:
            raise
        except OSError as e:
            if self.name in str(e):     # already says where (a URL's own reader, say)
                raise
            raise _io_error(e, f"{self.name}: {what} at byte {offset}") from e
        except Exception as e:      # noqa: BLE001 -- whatever a broken object raises
            raise ArrowIOError(f"{self.name}: {what} at byte {offset} raised "
                               f"{type(e).__name__}: {e}") from e

    def _misbehaves(self, what: str, offset: int, found: str) -> ArrowIOError:
        return ArrowIOError(f"{self.name}: the file object's {what} at byte {offset} {found}")

    def _position(self, value: Any, what: str, offset: int) -> int:
        if type(value) is not int or value < 0:     # bool is not a position either
            raise self._misbehaves(what, offset, f"returned {value!r}, expected a position "
                                                 f"(an int >= 0)")
        return value

    def _count(self, value: Any, limit: int) -> int:
        """The byte count a readinto() of `limit` bytes returned, checked."""
        if value is None:
            raise self._misbehaves(f"readinto() of {limit} bytes", self.pos,
                                   "returned None: no data ready (a non-blocking object?)")
        if type(value) is not int or not 0 <= value <= limit:
            raise self._misbehaves(f"readinto() of {limit} bytes", self.pos,
                                   f"returned {value!r}, expected 0..{limit}")
        return value

    def _bytes(self, data: Any, limit: int, what: str = "read") -> Buffer:
        """The bytes-like object a read of `limit` bytes returned, checked, as a Buffer."""
        if data is None:
            raise self._misbehaves(f"{what}({limit})", self.pos,
                                   "returned None: no data ready (a non-blocking object?)")
        try:
            out = as_buffer(data)
        except (TypeError, ValueError, BufferError):
            raise self._misbehaves(f"{what}({limit})", self.pos,
                                   f"returned a {type(data).__name__}, expected bytes") from None
        if out.size > limit:
            raise self._misbehaves(f"{what}({limit})", self.pos,
                                   f"returned {out.size} bytes, more than asked")
        return out

    def _seek(self, offset: int, whence: int = os.SEEK_SET) -> int | None:
        """Seek; the position the object reports (None when its seek() reports none)."""
        landed = self._call("seek()", offset, self.f.seek, offset, whence)
        if landed is None:
            return None
        landed = self._position(landed, f"seek({offset}, {whence})", offset)
        if whence == os.SEEK_SET and landed != offset:
            raise self._misbehaves(f"seek({offset})", offset, f"moved to byte {landed}")
        return landed

    @property
    def size(self) -> int:
        """The object's length in bytes (it is seeked to the end and back)."""
        cur = self._position(self._call("tell()", self.pos, self.f.tell), "tell()", self.pos)
        end = self._seek(0, os.SEEK_END)
        if end is None:
            end = self._position(self._call("tell()", cur, self.f.tell), "tell()", cur)
        self._seek(cur)
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
            out = self._bytes(self._call("read_buffer()", self.pos, self._read_buffer, n), n,
                              "read_buffer")
            self.pos += out.size
            return out
        if self._readinto is not None and (n <= _DIRECT_READ_LIMIT or self.seekable):
            if n > _DIRECT_READ_LIMIT:
                # a size claimed by a header: allocated only when the object holds that much
                # more (else what it holds, and the short read says the input is truncated)
                n = min(n, self._remaining())
            out = self._allocate(n)
            got = self._readinto_fully(out, n)
            self.pos += got
            return out if got == n else out.slice(0, got)
        # read() only: a large body grows as it arrives (in place: no second copy of it)
        grown = bytearray()
        while len(grown) < n:
            want = min(n - len(grown), _DIRECT_READ_LIMIT)
            chunk = self._bytes(self._call("read()", self.pos, self.f.read, want), want)
            got = chunk.size
            if not got:
                break
            grown += memoryview(chunk)
            del chunk                       # freed before the next one is read
            self.pos += got
        return py_buffer(grown if len(grown) else b"")

    def _remaining(self) -> int:
        """Bytes a seekable object holds past the current position."""
        return max(0, self.size - self.pos)

    def _allocate(self, n: int) -> Buffer:
        return allocate_claimed(n, self.name, self.pos)

    def _readinto_fully(self, out: Buffer | memoryview, n: int) -> int:
        """Bytes read into the first `n` of `out` (fewer only at the end of the object)."""
        view = memoryview(out)  # our allocations are writable
        got = 0
        while got < n:
            k = self._count(self._call("readinto()", self.pos + got, self._readinto,
                                       view[got:n]), n - got)
            if not k:
                break
            got += k
        return got

    def read_at(self, offset: int, n: int) -> Buffer:
        """Exactly n bytes at `offset` (ArrowInvalid when the file ends first)."""
        self._seek(offset)
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
            self._seek(o)
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
    request and its bytes in the source's statistics; a short part means a truncated file.
    The filesystem is not trusted to answer as asked: an answer missing (its target, allocated
    uninitialised, would be decoded as it is), one that is not bytes or longer than its range
    is an ArrowIOError naming the source and the range."""
    parts = list(parts)
    if len(parts) != len(ranges):
        raise ArrowIOError(f"{source.name}: {len(ranges)} ranges asked for in one request, "
                           f"{len(parts)} answers came back")
    count_read = getattr(source, "count_read", None)     # a source read from several threads
    for (o, n), data, target in zip(ranges, parts, targets):
        if isinstance(data, BaseException):  # a filesystem that reports failures in the list
            raise _io_error(data if isinstance(data, Exception) else OSError(str(data)),
                            source.name) from data
        answer = checked_answer(source.name, data, o, n)
        if count_read is not None:
            count_read(answer.nbytes)
        else:
            source.read_requests += 1
            source.bytes_read += answer.nbytes
        if answer.nbytes != n:
            raise _short_read(source.name, o, n, answer.nbytes)
        target[:] = answer


def checked_answer(name: str, data: Any, offset: int, n: int) -> memoryview:
    """The bytes a filesystem answered to a read of `n` bytes at `offset`, as a memoryview;
    ArrowIOError naming the source and the range when they are not bytes or more than asked
    (fewer are the caller's to report: the end of the object, or a truncated file)."""
    try:
        answer = memoryview(data).cast("B")
    except (TypeError, ValueError):         # not bytes-like, or not contiguous
        raise ArrowIOError(f"{name}: the answer to bytes {offset}-{offset + n - 1} is a "
                           f"{type(data).__name__}, expected bytes") from None
    if answer.nbytes > n:
        raise ArrowIOError(f"{name}: the answer to bytes {offset}-{offset + n - 1} holds "
                           f"{answer.nbytes} bytes, more than the {n} asked")
    return answer


def allocate_claimed(n: int, name: str, offset: int) -> Buffer:
    """An uninitialised buffer for the `n` bytes input `name` claims at `offset`;
    ArrowCapacityError (not MemoryError) when they cannot be allocated."""
    try:
        return allocate_buffer(n, zero=False)
    except MemoryError:
        raise ArrowCapacityError(f"{name}: cannot allocate the {n} bytes the input claims at "
                                 f"byte {offset}") from None


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
