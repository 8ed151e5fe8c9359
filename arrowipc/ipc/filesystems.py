"""URLs and filesystem objects as sources and sinks: s3://, gs://, az://, http(s)://, file:// and
any fsspec URL, or `filesystem=` an fsspec or a pyarrow filesystem (both duck-typed: pyarrow is
never imported here, fsspec only when a URL needs it).

Reading the file format goes through `RangeSource`, which fetches byte ranges (several at once,
concurrently: fsspec's `cat_ranges`, or threads over a pyarrow file's `read_at`) so the reader's
plan (remote.py) costs few requests. Streams are read front to back through the filesystem's own
file object. Writes never leave a partial object under the final name: files that can defer their
commit (s3fs, gcsfs and local files, opened with `autocommit=False`) are committed when the writer closes and
discarded on failure; other filesystems get the bytes in one upload from a local spool.
"""
from __future__ import annotations

import os
import re
import shutil
import tempfile
import threading
from concurrent.futures import ThreadPoolExecutor
from urllib.parse import unquote, urlsplit

from .._core.buffer import Buffer, py_buffer
from ..errors import ArrowException
from .object_reads import (ForwardReads, HttpObject, HttpStream, S3Object, Timeouts, is_http_fs,
                           is_s3_fs, timeouts_of)
from .paths import read_path
from .remote import REMOTE_TAIL_READ_SIZE
from .sources import (FileSource, _io_error, _short_read, checked_answer, fill_targets,
                      open_path, open_path_random_access, open_source)

TYPE_CHECKING = False               # typing itself is not imported at run time
if TYPE_CHECKING:
    from typing import Any, Callable, TypeGuard

__all__ = ["RangeSource", "is_url", "open_input", "open_output", "resolve"]

# a scheme of two letters or more: "C:\\data" is a Windows path, not a URL
_URL = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]+)://")
# ranges fetched at once from a pyarrow file (its read_at is safe across threads)
_THREADS = 8


def is_url(path: object) -> TypeGuard[str]:
    """Whether `path` is a string of the form scheme://..."""
    return isinstance(path, str) and _URL.match(path) is not None


def _file_url_path(url: str) -> str:
    parts = urlsplit(url)
    if parts.netloc not in ("", "localhost"):
        return "//" + parts.netloc + unquote(parts.path)
    return unquote(parts.path)


def _is_pyarrow_fs(fs: Any) -> bool:
    return hasattr(fs, "open_input_file") and hasattr(fs, "open_output_stream")


def _is_fsspec_fs(fs: Any) -> bool:
    return hasattr(fs, "cat_ranges") and hasattr(fs, "open") and hasattr(fs, "_strip_protocol")


def _timeout_options(url: str, timeouts: Timeouts | None) -> dict[str, Any]:
    """fsspec storage options that set `timeouts` on the filesystem made for `url`: aiohttp's
    for http(s) (without its 300 s total: object_reads bounds each wait), botocore's for s3."""
    if timeouts is None:
        return {}
    scheme = url.split("://", 1)[0].lower()
    if scheme in ("http", "https"):
        import aiohttp
        return {"client_kwargs": {"timeout": aiohttp.ClientTimeout(
            total=None, sock_connect=timeouts.connect, sock_read=timeouts.read)}}
    if scheme in ("s3", "s3a"):
        return {"config_kwargs": {"connect_timeout": timeouts.connect,
                                  "read_timeout": timeouts.read}}
    return {}


def resolve(path: Any, filesystem: Any = None,
            timeouts: Timeouts | None = None) -> tuple[str, Any, str]:
    """(kind, filesystem, path): kind "local" (a plain path), "fsspec" or "pyarrow".

    Without `filesystem`, file:// URLs are local paths and other URLs go to fsspec (the
    optional extra `arrowipc[remote]`), the http(s) and s3 filesystems with `timeouts`; plain
    paths stay local.
    """
    if filesystem is None:
        if not is_url(path):
            return "local", None, os.fspath(path)
        if path.lower().startswith("file://"):
            return "local", None, _file_url_path(path)
        try:
            from fsspec.core import url_to_fs
        except ImportError:
            raise ImportError(f"{path}: reading and writing URLs needs fsspec (and the "
                              f"filesystem's package, such as s3fs or gcsfs): pip install "
                              f"'arrowipc[remote]'") from None
        try:
            fs, fs_path = url_to_fs(path, **_timeout_options(path, timeouts))
        except (ImportError, ValueError) as e:
            raise type(e)(f"{path}: {e}") from e
        return "fsspec", fs, fs_path
    path = os.fspath(path)
    if _is_pyarrow_fs(filesystem):
        m = _URL.match(path)
        return "pyarrow", filesystem, path[m.end():] if m else path
    if _is_fsspec_fs(filesystem):
        return "fsspec", filesystem, filesystem._strip_protocol(path)
    raise TypeError(f"filesystem must be an fsspec filesystem or a pyarrow filesystem, got a "
                    f"{type(filesystem).__name__}")


# -- reading ---------------------------------------------------------------------------------------
class RangeSource:
    """A random-access source over a filesystem object: reads by (offset, length), several
    ranges fetched concurrently, with the same errors as a local file (a short object reads as a
    truncated file; I/O failures are OSError naming the URL)."""

    # the file reader leaves out reads it can do without here (each is a request)
    remote = True

    def __init__(self, backend: Any, size: int, name: str, opened_here: bool = True) -> None:
        self._backend = backend
        self.size = size
        self.name = name
        self.pos = 0
        # the request that opened the object, if it brought bytes (S3Object: its tail) and was
        # made for this source (see reopened)
        self.opened_here = opened_here
        self.bytes_read = self.kept_bytes if opened_here else 0
        self.read_requests = 1 if self.bytes_read else 0
        self.seekable = True
        # whether read_at and fetch may be called from several threads at once (the backend's
        # requests are independent): the file reader then does not serialise a scan's batch
        # reads of one file
        self.concurrent: bool = bool(getattr(backend, "concurrent", False))
        self._counting = threading.Lock()

    def count_read(self, nbytes: int) -> None:
        """Count one request that brought `nbytes` (exact when threads read at once)."""
        with self._counting:
            self.read_requests += 1
            self.bytes_read += nbytes

    def _get(self, offset: int, n: int) -> bytes:
        kept = getattr(self._backend, "kept", None)
        held: bytes | None = kept(offset, n) if kept is not None else None
        if held is not None:
            return held                 # fetched (and counted) when the object was opened
        try:
            data: bytes = self._backend.read_at(offset, n)
        except ArrowException:
            raise
        except Exception as e:
            raise _io_error(e, self.name) from e
        self.count_read(checked_answer(self.name, data, offset, n).nbytes)
        return data

    def read(self, n: int = -1) -> Buffer:
        """Up to n bytes at the current position (fewer only at the end; n < 0: to the end)."""
        n = self.size - self.pos if n < 0 else n
        n = max(0, min(n, self.size - self.pos))
        data = self._get(self.pos, n) if n else b""
        self.pos += len(data)
        return py_buffer(data)

    def read_at(self, offset: int, n: int) -> Buffer:
        """Exactly n bytes at `offset` (a shorter object is a truncated file)."""
        data = self._get(offset, n) if n else b""
        self.pos = offset + len(data)
        if len(data) != n:
            raise _short_read(self.name, offset, n, len(data))
        return py_buffer(data)

    def fetch(self, ranges: list[tuple[int, int]], targets: list[memoryview]) -> None:
        """Read each (offset, length) range into its target (a writable memoryview)."""
        if not ranges:
            return
        try:
            parts = (self._backend.read_many(ranges) if len(ranges) > 1
                     else [self._backend.read_at(*ranges[0])])
        except ArrowException:
            raise
        except Exception as e:
            raise _io_error(e, self.name) from e
        fill_targets(self, ranges, parts, targets)

    def close(self) -> None:
        """Release the filesystem's file, if the backend holds one (and is this source's)."""
        if self.opened_here:
            self._backend.close()

    def reopened(self) -> RangeSource | None:
        """A new source over the same version of the object, opened without a request: the
        backend pins the version it opened (every later range must match it: If-Match) and
        keeps what the opening read brought. None when the backend pins no version (another
        filesystem's file: its object may have changed since)."""
        if not getattr(self._backend, "pinned", False):
            return None
        return RangeSource(self._backend, self.size, self.name, opened_here=False)

    @property
    def kept_bytes(self) -> int:
        """The bytes the backend keeps from the request that opened the object."""
        return int(getattr(self._backend, "opening_bytes", 0))


class _FsspecRanges:
    def __init__(self, fs: Any, path: str) -> None:
        self.fs = fs
        self.path = path
        # an async filesystem's requests run on its event loop, independent of each other
        self.concurrent = bool(getattr(fs, "async_impl", False))

    def read_at(self, offset: int, n: int) -> bytes:
        data: bytes = self.fs.cat_file(self.path, start=offset, end=offset + n)
        return data

    def read_many(self, ranges: list[tuple[int, int]]) -> list[bytes]:
        # one call: async filesystems (s3fs, gcsfs, http) run the requests concurrently
        parts: list[bytes] = self.fs.cat_ranges([self.path] * len(ranges),
                                                [o for o, _ in ranges], [o + n for o, n in ranges],
                                                on_error="raise")
        return parts

    def close(self) -> None:
        pass


class _GuardedFile(ForwardReads):
    """An fsspec file object read front to back whose failures are OSErrors naming the URL
    (the filesystem's own exceptions, aiohttp's or botocore's, would escape without it)."""

    def __init__(self, f: Any, name: str) -> None:
        self._f = f
        self.name = name

    def _call(self, method: Callable[..., Any], *args: Any) -> Any:
        try:
            return method(*args)
        except ArrowException:
            raise
        except Exception as e:
            raise _io_error(e, self.name) from e

    def read(self, n: int = -1) -> bytes:
        data: bytes = self._call(self._f.read, n)
        return data

    def close(self) -> None:
        self._call(self._f.close)


class _PyarrowRanges:
    concurrent = True                   # a pyarrow file's read_at is safe across threads

    def __init__(self, f: Any) -> None:
        self.f = f

    def read_at(self, offset: int, n: int) -> bytes:
        data = self.f.read_at(n, offset)
        if isinstance(data, bytes):
            return data
        raw: bytes = data.to_pybytes()
        return raw

    def read_many(self, ranges: list[tuple[int, int]]) -> list[bytes]:
        with ThreadPoolExecutor(min(_THREADS, len(ranges))) as pool:
            return list(pool.map(lambda r: self.read_at(*r), ranges))

    def close(self) -> None:
        self.f.close()


class _PlainReader:
    """A pyarrow input stream as a plain file object (its read_buffer gives pyarrow buffers,
    which our sources must not take for their own)."""

    def __init__(self, f: Any) -> None:
        self._f = f

    def read(self, n: int = -1) -> bytes:
        data: bytes = self._f.read(n)
        return data

    def readinto(self, view: memoryview) -> int:
        got: int = self._f.readinto(view)
        return got

    def seekable(self) -> bool:
        return False

    def close(self) -> None:
        self._f.close()


def open_input(source: Any, filesystem: Any = None, random_access: bool = False,
               timeouts: Timeouts | None = None) -> object:
    """A source for a URL or a path on `filesystem`: a RangeSource when the reader needs random
    access (the file format), pinned to the version of the object it opened where the
    filesystem tells versions (HTTP, S3: object_reads.py), else a FileSource over a file object
    read front to back; None when `source` is neither (the caller's own open_source takes it)."""
    if filesystem is None and not is_url(source):
        return None
    timeouts = timeouts or Timeouts()
    name = source if isinstance(source, str) else os.fspath(source)
    kind, fs, path = resolve(source, filesystem, timeouts)
    if kind == "local":
        return path
    try:
        if kind == "fsspec":
            if is_http_fs(fs):
                if random_access:
                    http = HttpObject(fs, path, name, timeouts)
                    return RangeSource(http, http.size, name)
                return FileSource(HttpStream(fs, path, name, timeouts), name=name, owns=True)
            if random_access:
                if is_s3_fs(fs):
                    # opened by a read of its tail: the file format's footer comes with it
                    s3 = S3Object(fs, path, name, timeouts, tail=REMOTE_TAIL_READ_SIZE)
                    return RangeSource(s3, s3.size, name)
                return RangeSource(_FsspecRanges(fs, path), int(fs.size(path)), name)
            return FileSource(_GuardedFile(fs.open(path, "rb"), name), name=name, owns=True)
        if random_access:
            f = fs.open_input_file(path)
            return RangeSource(_PyarrowRanges(f), int(f.size()), name)
        return FileSource(_PlainReader(fs.open_input_stream(path)), name=name, owns=True)
    except (ArrowException, TypeError):
        raise
    except Exception as e:
        raise _io_error(e, name) from e


def read_all(source: Any, filesystem: Any = None) -> Buffer | None:
    """The whole object a URL or a path on `filesystem` names (recovery scans its input front to
    back, so it needs all of it), read into memory for file:// URLs; None when `source` is
    neither."""
    if filesystem is None and not is_url(source):
        return None
    name = source if isinstance(source, str) else os.fspath(source)
    timeouts = Timeouts()
    kind, fs, path = resolve(source, filesystem, timeouts)
    if kind == "local":
        return read_path(path)
    try:
        if kind == "fsspec" and is_http_fs(fs):
            stream = HttpStream(fs, path, name, timeouts)
            try:
                data = stream.read()
            finally:
                stream.close()
        elif kind == "fsspec":
            data = fs.cat_file(path)
        else:
            with fs.open_input_stream(path) as f:
                data = f.read()
    except (ArrowException, TypeError):
        raise
    except Exception as e:
        raise _io_error(e, name) from e
    return data if isinstance(data, Buffer) else py_buffer(data)


def open_reading(source: Any, filesystem: Any = None, random_access: bool = False,
                 memory_map: bool = False, options: Any = None) -> Any:
    """The source a reader reads: URLs and paths on `filesystem` through open_input (byte ranges
    for the file format, a file object read front to back otherwise, with the timeouts of
    `options`, an IpcReadOptions), local paths (and the local path of a file:// URL) read into
    memory or, when `memory_map`, mapped (paths.py), anything else through open_source.
    `memory_map` applies to local paths only."""
    if filesystem is None and isinstance(source, (bytes, memoryview, Buffer)):
        return open_source(source)              # bytes in memory: nothing to open
    if isinstance(source, RangeSource):
        return source                           # an object opened already (reopened)
    src = open_input(source, filesystem, random_access, timeouts_of(options))
    if src is None:
        if not isinstance(source, (str, os.PathLike)):
            return open_source(source)
        src = os.fspath(source)
    if isinstance(src, str):                    # a local path, perhaps from a file:// URL
        if random_access:
            return open_path_random_access(src, memory_map)
        return open_path(src, memory_map)
    return src


# -- writing ---------------------------------------------------------------------------------------
class _DeferredCommit:
    """An fsspec file opened with autocommit=False: published by commit(), dropped by abort()."""

    def __init__(self, fs: Any, path: str, name: str) -> None:
        self.fs = fs
        self.name = name
        self.file = fs.open(path, "wb", autocommit=False)
        self._done = False

    def _forget(self) -> None:
        # fsspec lists deferred files on the filesystem's transaction; we commit them ourselves
        files = getattr(getattr(self.fs, "_transaction", None), "files", None)
        if files is not None and self.file in files:
            files.remove(self.file)

    def commit(self, durable: bool = False) -> None:
        if self._done:
            return
        self._done = True
        try:
            self.file.close()
            self.file.commit()
        except Exception as e:
            self._discard()
            raise _io_error(e, self.name) from e
        finally:
            self._forget()

    def _discard(self) -> None:
        try:
            self.file.discard()
        except Exception:
            pass
        # a discarded buffered file must not flush when it is closed or collected later (it
        # would start a new upload); fsspec skips closing files already marked closed
        try:
            if hasattr(self.file, "forced"):
                self.file.closed = True
            else:
                self.file.close()
        except Exception:
            pass

    def abort(self) -> None:
        if self._done:
            return
        self._done = True
        self._discard()
        self._forget()

    def __del__(self) -> None:
        # dropped without commit(): never publish a partial object
        if not getattr(self, "_done", True):
            self.abort()


class _SpooledUpload:
    """Bytes spooled to a local temporary file and uploaded in one go on commit()."""

    def __init__(self, upload: Callable[[str], object], name: str) -> None:
        self._upload = upload
        self.name = name
        self.file: Any = tempfile.NamedTemporaryFile(prefix=".arrowipc-", suffix=".tmp",
                                                     delete=False)

    def commit(self, durable: bool = False) -> None:
        if self.file is None:
            return
        f, self.file = self.file, None
        try:
            f.close()
            self._upload(f.name)
        except Exception as e:
            raise _io_error(e, self.name) from e
        finally:
            _unlink(f.name)

    def abort(self) -> None:
        if self.file is None:
            return
        f, self.file = self.file, None
        try:
            f.close()
        finally:
            _unlink(f.name)

    def __del__(self) -> None:
        if getattr(self, "file", None) is not None:
            self.abort()


def _unlink(path: str) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass


# fsspec implementations whose files honour autocommit=False: the upload (a multipart upload
# for s3fs and gcsfs, a temporary file for local paths) is published by commit() alone. Others
# (the memory filesystem among them) may publish on close, so they get a spooled upload.
_DEFERRED_PROTOCOLS = {"s3", "s3a", "gs", "gcs", "file", "local"}


def _defers_commit(fs: Any) -> bool:
    protocol = getattr(fs, "protocol", ())
    protocols = {protocol} if isinstance(protocol, str) else set(protocol)
    return bool(protocols & _DEFERRED_PROTOCOLS)


def open_output(sink: Any, filesystem: Any = None) -> object:
    """An object with `.file`, `commit()` and `abort()` for a URL or a path on `filesystem`, or
    None when `sink` is neither (a plain path: the writer's own atomic file takes it)."""
    if filesystem is None and not is_url(sink):
        return None
    name = sink if isinstance(sink, str) else os.fspath(sink)
    kind, fs, path = resolve(sink, filesystem)
    if kind == "local":
        from .sinks import AtomicFile
        return AtomicFile(path)
    try:
        if kind == "fsspec":
            if _defers_commit(fs):
                return _DeferredCommit(fs, path, name)
            return _SpooledUpload(lambda local: fs.put_file(local, path), name)

        def upload(local: str) -> None:
            with open(local, "rb") as src, fs.open_output_stream(path) as out:
                shutil.copyfileobj(src, out, 8 << 20)
        return _SpooledUpload(upload, name)
    except (ArrowException, TypeError):
        raise
    except Exception as e:
        raise _io_error(e, name) from e
