"""Servers the remote-read tests and benchmarks start on 127.0.0.1 at a free port.

* `s3_server()`: moto's S3 API in server mode, behind a middleware that records every request
  (method, path, Range header, body bytes sent), so tests assert what a read cost on the wire.
* `CountingFile(data)`: a file object over bytes that logs each read call.
* `in_thread(run)`: run a read in a thread the harness abandons if a misbehaving peer hangs it.
* `http_server(files)`: a small HTTP/1.1 server for bytes objects, with HEAD and single-range
  GET (206 and Content-Range), optionally ETags, recording requests the same way; and, on
  request, misbehaving as hostile or broken servers do (`Misbehaviour`).
"""
from __future__ import annotations

import contextlib
import hashlib
import http.server
import io
import re
import threading
import time
from dataclasses import dataclass, field

BUCKET = "arrowipc-test"
CREDENTIALS = {"key": "testing", "secret": "testing"}
HANG_GUARD = 120        # seconds: the harness gives up on a read that hangs (never a time check)


def in_thread(run):
    """run() in a thread the harness abandons after HANG_GUARD seconds: (result, error)."""
    out = {}

    def target():
        try:
            out["result"] = run()
        except BaseException as e:            # handed to the test
            out["error"] = e
    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    thread.join(HANG_GUARD)
    assert not thread.is_alive(), "the read hung"
    return out.get("result"), out.get("error")


@dataclass
class Requests:
    """What a server was asked: (method, path, range header or None, bytes sent) per request."""
    log: list = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def add(self, method, path, range_header, nbytes):
        self.add_entry([method, path, range_header, nbytes])

    def add_entry(self, entry: list):
        with self.lock:
            self.log.append(entry)

    def clear(self):
        with self.lock:
            self.log.clear()

    def gets(self, path_suffix: str = "") -> list:
        with self.lock:
            return [r for r in self.log if r[0] == "GET" and r[1].endswith(path_suffix)]

    def get_bytes(self, path_suffix: str = "") -> int:
        return sum(r[3] for r in self.gets(path_suffix))


class _Counting:
    """WSGI middleware: records each request and the body bytes of its response."""

    def __init__(self, app, requests: Requests):
        self.app = app
        self.requests = requests

    def __call__(self, environ, start_response):
        body = self.app(environ, start_response)
        entry = [environ["REQUEST_METHOD"], environ.get("PATH_INFO", ""),
                 environ.get("HTTP_RANGE"), 0]
        self.requests.add_entry(entry)
        try:
            for chunk in body:
                # counted before it is sent: when the client has the bytes, the log has them
                entry[3] += len(chunk)
                yield chunk
        finally:
            if hasattr(body, "close"):
                body.close()


@contextlib.contextmanager
def s3_server():
    """(endpoint URL, Requests) of a moto S3 server holding an empty bucket BUCKET."""
    from moto.server import DomainDispatcherApplication, create_backend_app
    from werkzeug.serving import make_server
    from werkzeug.serving import WSGIRequestHandler
    try:
        from moto.server import MotoRequestHandler as base
    except ImportError:          # older moto
        base = WSGIRequestHandler
    quiet = type("QuietHandler", (base,), {"log": lambda *args, **kwargs: None})
    requests = Requests()
    app = _Counting(DomainDispatcherApplication(create_backend_app), requests)
    server = make_server("127.0.0.1", 0, app, threaded=True, request_handler=quiet)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    endpoint = f"http://127.0.0.1:{server.server_port}"
    try:
        import boto3
        boto3.client("s3", endpoint_url=endpoint, region_name="us-east-1",
                     aws_access_key_id=CREDENTIALS["key"],
                     aws_secret_access_key=CREDENTIALS["secret"]).create_bucket(Bucket=BUCKET)
        requests.clear()
        yield endpoint, requests
    finally:
        server.shutdown()
        thread.join()


def s3_filesystem(endpoint: str):
    """A fresh s3fs filesystem for the moto server at `endpoint` (no instance cache, no listing
    cache: every test sees the server's state)."""
    import s3fs
    return s3fs.S3FileSystem(client_kwargs={"endpoint_url": endpoint, "region_name": "us-east-1"},
                             skip_instance_cache=True, use_listings_cache=False, **CREDENTIALS)


class CountingFile(io.RawIOBase):
    """A seekable file object over bytes that logs each read call (offset, bytes)."""

    def __init__(self, data: bytes, seekable: bool = True):
        self._b = io.BytesIO(data)
        self._seekable = seekable
        self.reads: list = []

    def readable(self):
        return True

    def seekable(self):
        return self._seekable

    def seek(self, offset, whence=0):
        if not self._seekable:
            raise io.UnsupportedOperation("seek")
        return self._b.seek(offset, whence)

    def tell(self):
        return self._b.tell()

    def readinto(self, view):
        pos = self._b.tell()
        n = self._b.readinto(view)
        self.reads.append((pos, n))
        return n

    def read(self, n=-1):
        pos = self._b.tell()
        data = self._b.read(n)
        self.reads.append((pos, len(data)))
        return data

    @property
    def nbytes(self) -> int:
        return sum(n for _, n in self.reads)


_RANGE = re.compile(r"bytes=(\d+)-(\d*)$")


@dataclass
class Misbehaviour:
    """How `http_server` departs from a correct server (the default departs in nothing).

    `if_match`: honour If-Match (412 when the ETag differs); `ignore_range`: answer every GET
    with 200 and the whole object; `range_shift`: send the bytes `range_shift` further on, with a
    Content-Range saying so; `content_length`: send Content-Length (without it, the body ends
    when the connection closes); `drip`: seconds between body bytes; `cut_body`: bytes of a
    body sent before the connection is closed (Content-Length says the whole); `stall_body`: bytes
    of a body sent before the server stops sending, the connection left open until the client
    closes it; `get_status`: an error status for every GET (HEAD still answers)."""
    if_match: bool = False
    ignore_range: bool = False
    range_shift: int = 0
    content_length: bool = True
    drip: float | None = None
    cut_body: int | None = None
    stall_body: int | None = None
    get_status: int | None = None


class _Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    # headers and body are two writes: with Nagle the body waits for the client's delayed ACK
    # of the headers (~40 ms a request on Linux)
    disable_nagle_algorithm = True
    files: dict = {}
    etags = False
    last_modified = None
    requests: Requests
    misbehaviour = Misbehaviour()

    def log_message(self, *args):        # quiet
        pass

    def _send(self, with_body: bool):
        data = self.files.get(self.path)
        if data is None:
            self._empty(404, None)
            return
        bad = self.misbehaviour
        etag = '"' + hashlib.sha256(data).hexdigest()[:32] + '"'
        if with_body and bad.get_status is not None:
            self._empty(bad.get_status, None)
            return
        if bad.if_match and self.headers.get("If-Match") not in (None, etag):
            self._empty(412, None)
            return
        rng = self.headers.get("Range")
        status, start, end = 200, 0, len(data)
        if rng is not None and not bad.ignore_range:
            m = _RANGE.match(rng.strip())
            if m is None or int(m.group(1)) >= len(data):
                self._empty(416, rng, f"bytes */{len(data)}")
                return
            start = int(m.group(1))
            end = min(len(data), int(m.group(2)) + 1) if m.group(2) else len(data)
            start, end = min(start + bad.range_shift, len(data) - 1), \
                min(end + bad.range_shift, len(data))
            status = 206
        self.send_response(status)
        self.send_header("Content-Type", "application/octet-stream")
        self.send_header("Accept-Ranges", "bytes")
        if self.etags:
            self.send_header("ETag", etag)
        if self.last_modified:
            self.send_header("Last-Modified", self.last_modified(data)
                             if callable(self.last_modified) else self.last_modified)
        if bad.content_length:
            self.send_header("Content-Length", str(end - start))
        else:
            self.send_header("Connection", "close")
            self.close_connection = True
        if status == 206:
            self.send_header("Content-Range", f"bytes {start}-{end - 1}/{len(data)}")
        self.end_headers()
        sent = 0
        if with_body:
            body = data[start:end]
            if bad.cut_body is not None:
                body = body[:bad.cut_body]
                self.close_connection = True
            try:
                if bad.stall_body is not None:
                    self.wfile.write(body[:bad.stall_body])
                    self.wfile.flush()
                    self.rfile.read(1)          # silent until the client hangs up
                    self.close_connection = True
                elif bad.drip is None:
                    self.wfile.write(body)
                else:
                    for i in range(len(body)):
                        self.wfile.write(body[i:i + 1])
                        self.wfile.flush()
                        time.sleep(bad.drip)
            except OSError:                 # the client gave up
                self.close_connection = True
            sent = len(body)
        self.requests.add(self.command, self.path, rng, sent)

    def _empty(self, status, rng, content_range=None):
        self.send_response(status)
        if content_range:
            self.send_header("Content-Range", content_range)
        self.send_header("Content-Length", "0")
        self.end_headers()
        self.requests.add(self.command, self.path, rng, 0)

    def do_GET(self):
        self._send(True)

    def do_HEAD(self):
        self._send(False)


@contextlib.contextmanager
def http_server(files: dict, etags: bool = False, last_modified: str | None = None,
                misbehaviour: Misbehaviour | None = None):
    """(base URL, Requests) of a server for `files` ({"/name": bytes}), changeable while up;
    with `etags`, answers carry an ETag (a hash of the object's bytes), as object stores send;
    with `last_modified`, that Last-Modified header, or the one it gives for an object's bytes
    when it is a function (answers always carry a Date); with
    `misbehaviour`, the ways it breaks HTTP."""
    requests = Requests()
    handler = type("Handler", (_Handler,), {"files": files, "requests": requests, "etags": etags,
                                            "last_modified": staticmethod(last_modified)
                                            if callable(last_modified) else last_modified,
                                            "misbehaviour": misbehaviour or Misbehaviour()})
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True         # a dripping answer must not hold the shutdown
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_port}", requests
    finally:
        server.shutdown()
        server.server_close()
        thread.join()
