"""Reads of HTTP(S) and S3 objects that stay on one version of the object, with timeouts.

A file-format read fetches its ranges in several requests. An object replaced between two of
them (same layout, other values) would otherwise give a table that mixes both versions, so the
object's version is pinned when the reader opens it and every later response is checked:

* HTTP(S): the size, ETag and Last-Modified of the HEAD answer. Each range request carries
  ``If-Match`` (a strong ETag), and its answer must be a 206 whose Content-Range is the range asked
  for, of an object of the pinned size, with the pinned ETag (or Last-Modified when the server
  sends no ETag). A server that ignores Range (a 200 with the whole object) is served from that
  one body, when it is the pinned size and at most WHOLE_OBJECT_LIMIT bytes; without a size
  (no Content-Length) the object is read whole, once.
* S3 (s3fs): the ETag and, in a versioned bucket, the VersionId of the answer that opened the
  object, a GetObject of its last REMOTE_TAIL_READ_SIZE bytes (which also gives its size and
  the file format's footer: one request, where a HEAD and a read of the end were two; a HEAD
  when that is refused); each later GetObject names the version and carries ``IfMatch``, and
  its ContentRange is checked as above.

A response from another version or for other bytes raises ArrowIOError (an OSError: the input
was fine, the object changed under the reader) naming the URL and the range.

Timeouts (IpcReadOptions(connect_timeout=, read_timeout=)): `connect_timeout` bounds opening a
connection, `read_timeout` the wait for a response's headers and for each MiB of its body, so
a server that sends nothing, or drips bytes, fails with a TimeoutError naming the URL instead of
holding the read. Every network failure is an OSError naming the URL.

Streams are read front to back in one GET (one response: one version, no mixing).
"""
from __future__ import annotations

import asyncio
import errno
import re
from typing import TYPE_CHECKING, NamedTuple

from ..errors import ArrowException, ArrowIOError
from .remote import CONNECT_TIMEOUT, READ_TIMEOUT

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable
    from typing import Any

__all__ = ["CONNECT_TIMEOUT", "READ_TIMEOUT", "WHOLE_OBJECT_LIMIT", "HttpObject", "HttpStream",
           "S3Object", "Timeouts", "is_http_fs", "is_s3_fs", "timeouts_of"]

# the body is read in chunks of this size, each within the read timeout
_CHUNK = 1 << 20
# the largest object taken whole from a server that ignores Range (or sends no size)
WHOLE_OBJECT_LIMIT = 1 << 30

_CONTENT_RANGE = re.compile(r"^\s*bytes\s+(\d+)-(\d+)/(\d+|\*)\s*$")


class Timeouts(NamedTuple):
    """Network timeouts of one read, in seconds."""
    connect: float = CONNECT_TIMEOUT
    read: float = READ_TIMEOUT


def timeouts_of(options: Any) -> Timeouts:
    """The timeouts set on `options` (an IpcReadOptions, or None for the defaults)."""
    return Timeouts(float(getattr(options, "connect_timeout", CONNECT_TIMEOUT)),
                    float(getattr(options, "read_timeout", READ_TIMEOUT)))


def is_http_fs(fs: Any) -> bool:
    """Whether `fs` is fsspec's HTTP filesystem (its aiohttp session is used directly)."""
    protocol = getattr(fs, "protocol", ())
    protocols = {protocol} if isinstance(protocol, str) else set(protocol)
    return bool(protocols & {"http", "https"}) and hasattr(fs, "set_session")


def is_s3_fs(fs: Any) -> bool:
    """Whether `fs` is s3fs's filesystem (its GetObject calls are used directly)."""
    return hasattr(fs, "_call_s3") and hasattr(fs, "split_path") and hasattr(fs, "loop")


def changed_error(name: str, what: str) -> ArrowIOError:
    """The error for a response that comes from another version of the object than the one
    the reader opened, or for other bytes than it asked for."""
    return ArrowIOError(f"{name}: {what}; the object changed while it was read, or the server "
                        f"answers wrongly (reopen it to read the new version)")


def _run(loop: Any, make: Callable[[], Awaitable[Any]]) -> Any:
    """Run the coroutine `make()` on fsspec's event loop and return its result, raising its
    own exception (fsspec's sync() would turn a TimeoutError into its FSTimeoutError)."""
    from fsspec.asyn import sync

    async def outcome() -> tuple[bool, Any]:
        try:
            return True, await make()
        except BaseException as e:   # handed over to the calling thread and raised there
            return False, e
    ok, result = sync(loop, outcome)
    if not ok:
        raise result
    return result


def _network_error(error: BaseException, name: str, timeouts: Timeouts, what: str) -> OSError:
    """An OSError naming the URL and what was being read for a failure of the network library
    (aiohttp's and botocore's exceptions are not all OSErrors, and none names the URL)."""
    if isinstance(error, ArrowException) and isinstance(error, OSError):
        return error
    if isinstance(error, OSError) and str(error).startswith(name):
        return error
    if isinstance(error, (asyncio.TimeoutError, TimeoutError)):
        return TimeoutError(f"{name}: no answer for {what} within the time allowed "
                            f"(IpcReadOptions(connect_timeout={timeouts.connect:g}, "
                            f"read_timeout={timeouts.read:g}))")
    message = f"{name}: {what} failed: {error or type(error).__name__}"
    if type(error).__module__ == "builtins" and isinstance(error, OSError):
        return type(error)(message)               # FileNotFoundError, ConnectionResetError...
    if isinstance(error, OSError):                # aiohttp's connection errors are OSErrors
        return ConnectionError(message)
    return OSError(message)


async def _read_body(read: Callable[[int], Awaitable[bytes]], limit: int,
                     timeouts: Timeouts) -> bytes:
    """Up to `limit` bytes of a body (fewer at its end), each MiB within the read timeout."""
    parts: list[bytes] = []
    got = 0
    while got < limit:
        want = min(limit - got, _CHUNK)

        async def chunk(want: int = want) -> list[bytes]:
            pieces: list[bytes] = []
            have = 0
            while have < want:
                piece = await read(want - have)
                if not piece:
                    break
                pieces.append(piece)
                have += len(piece)
            return pieces
        pieces = await asyncio.wait_for(chunk(), timeouts.read)
        n = sum(map(len, pieces))
        parts.extend(pieces)
        got += n
        if n < want:
            break
    return b"".join(parts)


def _status_error(name: str, status: int, reason: str | None, what: str) -> OSError:
    """The OSError for an HTTP error status, naming the URL (and `what` was asked, if given)."""
    asked = f" for {what}" if what else ""
    if status in (404, 410):
        return FileNotFoundError(errno.ENOENT, f"{name}: not found (HTTP {status}){asked}")
    if status in (401, 403):
        return PermissionError(errno.EACCES, f"{name}: access refused (HTTP {status}){asked}")
    return OSError(f"{name}: HTTP {status}{' ' + reason if reason else ''}{asked}")


def _span(offset: int, n: int) -> str:
    return f"bytes {offset}-{offset + n - 1}"


def _check_content_range(name: str, size: int, header: str | None, offset: int, n: int,
                         what: str) -> None:
    """A 206 answer's Content-Range must be the range asked for, of an object of the pinned
    size (its end clipped at the object's end: a read past it is a truncated file)."""
    m = _CONTENT_RANGE.match(header or "")
    if m is None:
        raise changed_error(name, f"the answer to {what} has Content-Range {header!r}, expected "
                                  f"'bytes {offset}-{offset + n - 1}/{size}'")
    first, last, total = int(m.group(1)), int(m.group(2)), m.group(3)
    if total != "*" and int(total) != size:
        raise changed_error(name, f"the answer to {what} is part of an object of {total} bytes "
                                  f"(Content-Range {header}), the object was opened with {size}")
    if first != offset or last < first or last > offset + n - 1 or \
            (last != offset + n - 1 and last != size - 1):
        raise changed_error(name, f"the answer to {what} holds other bytes (Content-Range "
                                  f"{header})")


# -- HTTP(S) -----------------------------------------------------------------------------------
class RangeReads:
    """read_at and read_many over an object's `_get(offset, n)` coroutine, run on its
    filesystem's event loop (`self.fs.loop`); the ranges of one read_many go out concurrently."""
    fs: Any
    # every request runs on the loop's thread, whichever thread asked: reads may come at once
    concurrent = True
    # the version opened is pinned: every later answer must be of it (RangeSource.reopened)
    pinned = True

    async def _get(self, offset: int, n: int) -> bytes:
        raise NotImplementedError

    def read_at(self, offset: int, n: int) -> bytes:
        """Up to n bytes at `offset` (fewer only past the object's end)."""
        data: bytes = _run(self.fs.loop, lambda: self._get(offset, n))
        return data

    def read_many(self, ranges: list[tuple[int, int]]) -> list[bytes]:
        """Each (offset, length) range, fetched concurrently."""
        async def all_ranges() -> list[bytes]:
            return list(await asyncio.gather(*(self._get(o, n) for o, n in ranges)))
        parts: list[bytes] = _run(self.fs.loop, all_ranges)
        return parts


class ForwardReads:
    """readinto and seekable for an object read front to back through its read(n)."""

    def read(self, n: int = -1) -> bytes:
        raise NotImplementedError

    def readinto(self, view: memoryview) -> int:
        data = self.read(memoryview(view).nbytes)
        view[:len(data)] = data
        return len(data)

    def seekable(self) -> bool:
        return False


class _HttpClient:
    """Requests for one URL through fsspec's HTTP filesystem (its session, headers, auth),
    with the timeouts and errors naming the URL."""

    def __init__(self, fs: Any, url: str, name: str, timeouts: Timeouts) -> None:
        self.fs = fs
        self.url = url
        self.name = name
        self.timeouts = timeouts

    async def send(self, method: str, headers: dict[str, str], what: str) -> Any:
        """The response to one request (headers read, body not yet)."""
        session = await self.fs.set_session()
        kw = dict(self.fs.kwargs)
        all_headers = dict(kw.pop("headers", None) or {})
        all_headers.update(headers)
        all_headers["Accept-Encoding"] = "identity"   # sizes and ranges of the stored bytes
        try:
            return await asyncio.wait_for(
                session.request(method, self.fs.encode_url(self.url), headers=all_headers, **kw),
                self.timeouts.connect + self.timeouts.read)
        except BaseException as e:
            raise _network_error(e, self.name, self.timeouts, what) from e

    async def read(self, resp: Any, limit: int, what: str) -> bytes:
        """Up to `limit` bytes of the response's body."""
        try:
            return await _read_body(resp.content.read, limit, self.timeouts)
        except BaseException as e:
            raise _network_error(e, self.name, self.timeouts, what) from e


class HttpObject(RangeReads):
    """Range reads of one version of an HTTP(S) object through fsspec's HTTP filesystem (its
    session, headers and auth), as a RangeSource backend: read_at, read_many, size."""

    def __init__(self, fs: Any, url: str, name: str, timeouts: Timeouts) -> None:
        self.fs = fs
        self.name = name
        self._client = _HttpClient(fs, url, name, timeouts)
        self.etag: str | None = None
        self.last_modified: str | None = None
        # the whole object, once a server sent it (no size, or Range ignored)
        self._whole: bytes | None = None
        size = _run(fs.loop, self._head)
        if size is None:
            self._whole = _run(fs.loop, lambda: self._get_whole(None))
            size = len(self._whole)
        self.size: int = size

    async def _head(self) -> int | None:
        """Pin size, ETag and Last-Modified; None when the server gives no usable size."""
        resp = await self._client.send("HEAD", {}, "the HEAD request")
        async with resp:
            if resp.status in (404, 410):
                raise _status_error(self.name, resp.status, resp.reason, "")
            if resp.status >= 400:      # no HEAD here (some signed URLs): read it whole
                return None
            self._pin(resp.headers)
            length = resp.headers.get("Content-Length")
            encoding = resp.headers.get("Content-Encoding", "identity") or "identity"
            if length is None or not length.isdigit() or encoding != "identity":
                return None
            return int(length)

    def _pin(self, headers: Any) -> None:
        self.etag = headers.get("ETag") or None
        self.last_modified = headers.get("Last-Modified") or None

    def _check_version(self, headers: Any, what: str) -> None:
        etag = headers.get("ETag") or None
        if self.etag is not None and etag is not None and etag != self.etag:
            raise changed_error(self.name, f"{what} came with ETag {etag}, the object was opened "
                                           f"with ETag {self.etag}")
        modified = headers.get("Last-Modified") or None
        if (self.etag is None or etag is None) and self.last_modified is not None and \
                modified is not None and modified != self.last_modified:
            raise changed_error(self.name, f"{what} came with Last-Modified {modified}, the "
                                           f"object was opened with Last-Modified "
                                           f"{self.last_modified}")

    async def _get_whole(self, expected: int | None) -> bytes:
        """The whole object in one GET (a server without sizes); `expected`: its pinned size."""
        resp = await self._client.send("GET", {}, "the GET request")
        async with resp:
            if resp.status != 200:
                raise _status_error(self.name, resp.status, resp.reason, "the whole object")
            if expected is None:
                self._pin(resp.headers)
            else:
                self._check_version(resp.headers, "the whole object")
            return await self._whole_body(resp, "the whole object")

    async def _whole_body(self, resp: Any, what: str) -> bytes:
        data = await self._client.read(resp, WHOLE_OBJECT_LIMIT + 1, what)
        if len(data) > WHOLE_OBJECT_LIMIT:
            raise ArrowIOError(f"{self.name}: the server sends the whole object for every "
                               f"request (it ignores Range or gives no size) and it is larger "
                               f"than {WHOLE_OBJECT_LIMIT} bytes; copy it locally to read it")
        return data

    async def _get(self, offset: int, n: int) -> bytes:
        if self._whole is not None:
            return self._whole[offset:offset + n]
        what = _span(offset, n)
        headers = {"Range": f"bytes={offset}-{offset + n - 1}"}
        if self.etag is not None and not self.etag.startswith("W/"):
            headers["If-Match"] = self.etag           # the server refuses another version
        resp = await self._client.send("GET", headers, what)
        async with resp:
            if resp.status == 412:
                raise changed_error(self.name, f"the server refused {what} for ETag {self.etag} "
                                               f"(HTTP 412 Precondition Failed)")
            if resp.status == 416 and offset >= self.size:
                return b""                            # past the end: a truncated file
            if resp.status == 200:                    # Range ignored: the whole object came
                self._check_version(resp.headers, f"the answer to {what}")
                length = resp.headers.get("Content-Length")
                if length is not None and length.isdigit() and int(length) != self.size:
                    raise changed_error(self.name, f"the answer to {what} is a whole object of "
                                                   f"{length} bytes, the object was opened with "
                                                   f"{self.size}")
                whole = await self._whole_body(resp, what)
                if len(whole) != self.size:
                    raise changed_error(self.name, f"the answer to {what} is a whole object of "
                                                   f"{len(whole)} bytes, the object was opened "
                                                   f"with {self.size}")
                self._whole = whole
                return whole[offset:offset + n]
            if resp.status != 206:
                raise _status_error(self.name, resp.status, resp.reason, what)
            self._check_version(resp.headers, f"the answer to {what}")
            _check_content_range(self.name, self.size, resp.headers.get("Content-Range"), offset, n,
                                 what)
            data = await self._client.read(resp, n, what)
        return data

    def read_whole(self) -> bytes:
        """The whole object (recovery reads all of it)."""
        if self._whole is None:
            self._whole = _run(self.fs.loop, lambda: self._get_whole(self.size))
            if len(self._whole) != self.size:
                raise changed_error(self.name, f"the whole object has {len(self._whole)} bytes, "
                                               f"it was opened with {self.size}")
        return self._whole

    def close(self) -> None:
        self._whole = None


class HttpStream(ForwardReads):
    """An HTTP(S) object read front to back in one GET, as a file object (read, readinto)."""

    def __init__(self, fs: Any, url: str, name: str, timeouts: Timeouts) -> None:
        self._fs = fs
        self.name = name
        self._client = _HttpClient(fs, url, name, timeouts)
        self._resp: Any = _run(fs.loop, self._open)

    async def _open(self) -> Any:
        resp = await self._client.send("GET", {}, "the GET request")
        if resp.status != 200:
            resp.release()
            raise _status_error(self.name, resp.status, resp.reason, "")
        return resp

    def read(self, n: int = -1) -> bytes:
        """Up to n bytes (all the rest when n < 0); fewer only at the end."""
        if self._resp is None:
            return b""
        limit = n if n >= 0 else (1 << 62)
        data: bytes = _run(self._fs.loop,
                           lambda: self._client.read(self._resp, limit, "the stream"))
        return data

    def close(self) -> None:
        resp, self._resp = self._resp, None
        if resp is not None:
            async def close() -> None:          # on the loop that owns the connection
                resp.close()
            _run(self._fs.loop, close)


# -- S3 ----------------------------------------------------------------------------------------
class S3Object(RangeReads):
    """Range reads of one version of an S3 object through s3fs (its credentials, endpoint and
    session), as a RangeSource backend: read_at, read_many, size."""

    def __init__(self, fs: Any, path: str, name: str, timeouts: Timeouts, tail: int = 0
                 ) -> None:
        self.fs = fs
        self.name = name
        self.timeouts = timeouts
        self.bucket, self.key, version = fs.split_path(path)
        self.version_id: str | None = version
        # the object's last `tail` bytes, fetched by the request that opened it: reads that
        # fall inside are served from them (the file format's footer, a small file whole)
        self._tail_start = 0
        self._tail = b""
        self._signed: str | None = None     # presigned GET URL ("": none can serve)
        if tail > 0 and _run(fs.loop, lambda: self._open_with_tail(tail)):
            return
        info = fs.info(path, refresh=True)       # the object now, not a cached listing
        self.size: int = int(info["size"])
        self.etag: str | None = info.get("ETag") or None
        found = info.get("VersionId")
        self.version_id = version or (found if found not in (None, "null") else None)

    @property
    def opening_bytes(self) -> int:
        """The bytes the request that opened the object brought (its tail)."""
        return len(self._tail)

    def kept(self, offset: int, n: int) -> bytes | None:
        """Bytes [offset, offset + n) from the tail fetched when the object was opened (cut at
        the object's end, as a read there is), or None when they are not all in it."""
        if not self._tail or offset < self._tail_start or n <= 0:
            return None
        at = offset - self._tail_start
        return self._tail[at:at + n]

    async def _open_with_tail(self, n: int) -> bool:
        """Open the object by a GET of its last n bytes (a suffix range), which tells its size,
        ETag and version as a HEAD would: one request where a HEAD and a read of the footer were
        two. Asked by the presigned URL the ranges use (the Python cost of a GetObject is paid
        once per object otherwise, a scan's largest client cost after decoding), else, or when
        that answer is not the range asked, by a GetObject. False when that is refused or not
        as asked too (an empty object, a store without suffix ranges): the caller asks HEAD,
        which also reports what failed."""
        if await self._open_presigned(n):
            return True
        what = f"the last {n} bytes"
        pin = {"VersionId": self.version_id} if self.version_id is not None else {}
        try:
            resp = await asyncio.wait_for(
                self.fs._call_s3("get_object", Bucket=self.bucket, Key=self.key,
                                 Range=f"bytes=-{n}", **pin),
                self.timeouts.connect + self.timeouts.read)
        except Exception:
            return False
        body = resp["Body"]
        try:
            m = _CONTENT_RANGE.match(resp.get("ContentRange") or "")
            if m is None or m.group(3) == "*":
                return False
            first, last, size = int(m.group(1)), int(m.group(2)), int(m.group(3))
            if last != size - 1 or first != max(0, size - n):
                return False
            try:
                data = await _read_body(body.read, last - first + 1, self.timeouts)
            except BaseException as e:
                raise _network_error(e, self.name, self.timeouts, what) from e
            if len(data) != last - first + 1:
                return False
        finally:
            body.close()
        self.size = size
        self.etag = resp.get("ETag") or None
        found = resp.get("VersionId")
        if self.version_id is None and found not in (None, "null"):
            self.version_id = found
        self._tail_start, self._tail = first, data
        return True

    async def _open_presigned(self, n: int) -> bool:
        """_open_with_tail through the presigned URL; False when no URL can serve or the
        answer is not the suffix range asked (the caller asks by GetObject: an error is
        reported from its answer)."""
        if self._signed is None:
            self._signed = await _presigned_url(self.fs, self.bucket, self.key, self.version_id)
        if not self._signed:
            return False
        what = f"the last {n} bytes"
        session = await _presigned_session(self.fs)
        headers = {"Range": f"bytes=-{n}", "Accept-Encoding": "identity"}
        try:
            resp = await asyncio.wait_for(session.get(self._signed, headers=headers),
                                          self.timeouts.connect + self.timeouts.read)
        except Exception:
            return False
        async with resp:
            m = _CONTENT_RANGE.match(resp.headers.get("Content-Range") or "")
            if resp.status != 206 or m is None or m.group(3) == "*":
                return False
            first, last, size = int(m.group(1)), int(m.group(2)), int(m.group(3))
            if last != size - 1 or first != max(0, size - n):
                return False
            try:
                data = await _read_body(resp.content.read, last - first + 1, self.timeouts)
            except BaseException as e:
                raise _network_error(e, self.name, self.timeouts, what) from e
            if len(data) != last - first + 1:
                return False
            etag, found = resp.headers.get("ETag"), resp.headers.get("x-amz-version-id")
        self.size = size
        self.etag = etag or None
        if self.version_id is None and found not in (None, "null"):
            # the ranges that follow read this version: by a URL signed for it
            self.version_id, self._signed = found, None
        self._tail_start, self._tail = first, data
        return True

    async def _get(self, offset: int, n: int) -> bytes:
        if n <= 0:
            return b""
        if offset >= self.size:
            return b""                                # past the end: a truncated file
        kept = self.kept(offset, n)
        if kept is not None:
            return kept
        what = _span(offset, n)
        data = await self._get_presigned(offset, n, what)
        if data is not None:
            return data
        pin: dict[str, str] = {}
        if self.etag is not None:
            pin["IfMatch"] = self.etag
        if self.version_id is not None:
            pin["VersionId"] = self.version_id
        try:
            resp = await asyncio.wait_for(
                self.fs._call_s3("get_object", Bucket=self.bucket, Key=self.key,
                                 Range=f"bytes={offset}-{offset + n - 1}", **pin),
                self.timeouts.connect + self.timeouts.read)
        except OSError as e:
            if e.errno == errno.EINVAL and "condition" in str(e).lower():
                raise changed_error(self.name, f"S3 refused {what} for ETag {self.etag} "
                                               f"(PreconditionFailed)") from e
            raise _network_error(e, self.name, self.timeouts, what) from e
        except BaseException as e:
            raise _network_error(e, self.name, self.timeouts, what) from e
        body = resp["Body"]
        try:
            etag = resp.get("ETag")
            if self.etag is not None and etag is not None and etag != self.etag:
                raise changed_error(self.name, f"the answer to {what} came with ETag {etag}, the "
                                               f"object was opened with ETag {self.etag}")
            header = resp.get("ContentRange")
            _check_content_range(self.name, self.size, header, offset, n, what)
            try:
                return await _read_body(body.read, n, self.timeouts)
            except BaseException as e:
                raise _network_error(e, self.name, self.timeouts, what) from e
        finally:
            body.close()

    async def _get_presigned(self, offset: int, n: int, what: str) -> bytes | None:
        """Bytes [offset, offset + n) by a plain HTTP GET of a URL presigned for this version of
        the object (signed once, by s3fs's client: its credentials and endpoint), with Range and
        If-Match; a request costs a quarter of a GetObject's Python time. None when the
        filesystem sends more than credentials with its requests (requester pays, encryption
        keys) or the answer is not the range asked (an expired URL, an error): the caller asks
        through s3fs, whose answer says what is wrong. Checked as a GetObject's answer is."""
        if self._signed is None:
            self._signed = await _presigned_url(self.fs, self.bucket, self.key, self.version_id)
        if not self._signed:
            return None
        session = await _presigned_session(self.fs)
        headers = {"Range": f"bytes={offset}-{offset + n - 1}", "Accept-Encoding": "identity"}
        if self.etag is not None:
            headers["If-Match"] = self.etag
        try:
            resp = await asyncio.wait_for(session.get(self._signed, headers=headers),
                                          self.timeouts.connect + self.timeouts.read)
        except BaseException as e:
            raise _network_error(e, self.name, self.timeouts, what) from e
        async with resp:
            if resp.status != 206:
                return None
            etag = resp.headers.get("ETag")
            if self.etag is not None and etag is not None and etag != self.etag:
                raise changed_error(self.name, f"the answer to {what} came with ETag {etag}, the "
                                               f"object was opened with ETag {self.etag}")
            _check_content_range(self.name, self.size, resp.headers.get("Content-Range"),
                                 offset, n, what)
            try:
                data: bytes = await _read_body(resp.content.read, n, self.timeouts)
            except BaseException as e:
                raise _network_error(e, self.name, self.timeouts, what) from e
        return data

    def close(self) -> None:
        pass


# a presigned URL is good for this long; a reader kept open longer falls back to GetObject
PRESIGNED_SECONDS = 3600


async def _presigned_url(fs: Any, bucket: str, key: str, version_id: str | None) -> str:
    """A GET URL for the object presigned by s3fs's client, or "" when its requests carry
    more than what a URL can (requester pays, customer keys, extra arguments)."""
    client = getattr(fs, "s3", None)
    if client is None or getattr(fs, "req_kw", None) or getattr(fs, "s3_additional_kwargs", None) \
            or not hasattr(client, "generate_presigned_url"):
        return ""
    params = {"Bucket": bucket, "Key": key}
    if version_id is not None:
        params["VersionId"] = version_id
    try:
        url: str = await client.generate_presigned_url("get_object", Params=params,
                                                       ExpiresIn=PRESIGNED_SECONDS)
    except Exception:
        return ""
    return url


_sessions: dict[int, Any] = {}


async def _presigned_session(fs: Any) -> Any:
    """The aiohttp session presigned reads of `fs` share (one per filesystem object, on its
    loop; closed when the filesystem is collected, or at exit)."""
    session = _sessions.get(id(fs))
    if session is None:
        import weakref
        import aiohttp
        session = _sessions[id(fs)] = aiohttp.ClientSession()
        weakref.finalize(fs, _close_session, id(fs), fs.loop, session)
    return session


def _close_session(key: int, loop: Any, session: Any) -> None:
    _sessions.pop(key, None)
    try:
        if loop is not None and loop.is_running() and not loop.is_closed():
            from fsspec.asyn import sync
            sync(loop, session.close, timeout=1)
            return
    except Exception:
        pass
    connector = getattr(session, "_connector", None)
    if connector is not None:
        connector._close()          # the loop is gone: drop the sockets directly
