"""Dissociated IPC URIs: where to connect, and the protocol's query parameters.

Forms (our schemes; the spec only asks for an identifiable scheme):
    arrowipc+tcp://HOST:PORT?want_data=N[&free_data=M][&remote_handle=B64]
    arrowipc+unix:///ABSOLUTE/SOCKET/PATH?want_data=N[&free_data=M]
`want_data` (required) and `free_data` (optional) are uint64 decimals; `remote_handle` is base64
(we emit the URL-safe alphabet without padding and accept both alphabets, padded or not).
"""
from __future__ import annotations

import base64
import binascii
import dataclasses
import re
from urllib.parse import parse_qsl, quote, unquote, urlsplit

from ..errors import ArrowInvalid

__all__ = ["decode_remote_handle", "DissociatedURI", "encode_remote_handle", "format_uri",
           "parse_uri", "SCHEME_TCP", "SCHEME_UNIX"]

SCHEME_TCP = "arrowipc+tcp"
SCHEME_UNIX = "arrowipc+unix"
_UINT64_MAX = (1 << 64) - 1
_DECIMAL = re.compile(r"[0-9]{1,20}\Z")
_KNOWN = ("want_data", "free_data", "remote_handle")


@dataclasses.dataclass(frozen=True)
class DissociatedURI:
    """A parsed Dissociated IPC URI: where to connect and the protocol parameters."""
    scheme: str                       # SCHEME_TCP or SCHEME_UNIX
    want_data: int
    free_data: int | None = None
    remote_handle: bytes | None = None
    host: str | None = None           # TCP
    port: int | None = None           # TCP
    path: str | None = None           # Unix socket path

    def __str__(self) -> str:
        return format_uri(self)


def encode_remote_handle(handle: bytes) -> str:
    """`handle` in URL-safe base64 without padding."""
    return base64.urlsafe_b64encode(bytes(handle)).rstrip(b"=").decode("ascii")


def decode_remote_handle(text: str) -> bytes:
    """Base64 in either alphabet, with or without padding."""
    if not re.fullmatch(r"[A-Za-z0-9+/_-]*={0,2}", text):
        raise ArrowInvalid(f"remote_handle {text!r} is not base64")
    body = text.rstrip("=")
    if len(body) % 4 == 1:
        raise ArrowInvalid(f"remote_handle {text!r} has a base64 length that no data encodes to")
    padded = body.replace("+", "-").replace("/", "_") + "=" * (-len(body) % 4)
    try:
        return base64.urlsafe_b64decode(padded)
    except (binascii.Error, ValueError) as e:
        raise ArrowInvalid(f"remote_handle {text!r} is not base64: {e}") from None


def _uint64_param(name: str, value: str) -> int:
    if not _DECIMAL.match(value):
        raise ArrowInvalid(f"URI parameter {name}={value!r}: expected a uint64 in decimal")
    n = int(value)
    if n > _UINT64_MAX:
        raise ArrowInvalid(f"URI parameter {name}={value}: larger than the uint64 maximum "
                           f"{_UINT64_MAX}")
    return n


def parse_uri(uri: str) -> DissociatedURI:
    """A DissociatedURI from text; raises ArrowInvalid naming what is wrong."""
    if not isinstance(uri, str):
        raise ArrowInvalid(f"a dissociated URI is a str, got {type(uri).__name__}")
    parts = urlsplit(uri)
    scheme = parts.scheme.lower()
    if scheme not in (SCHEME_TCP, SCHEME_UNIX):
        raise ArrowInvalid(f"URI {uri!r}: scheme {parts.scheme!r} is not {SCHEME_TCP!r} or "
                           f"{SCHEME_UNIX!r}")
    params: dict[str, str] = {}
    for name, value in parse_qsl(parts.query, keep_blank_values=True, strict_parsing=False):
        if name in params:
            raise ArrowInvalid(f"URI {uri!r}: parameter {name!r} appears more than once")
        params[name] = value
    if "want_data" not in params:
        raise ArrowInvalid(f"URI {uri!r}: the required parameter want_data is missing")
    want = _uint64_param("want_data", params["want_data"])
    free = _uint64_param("free_data", params["free_data"]) if "free_data" in params else None
    if free is not None and free == want:
        raise ArrowInvalid(f"URI {uri!r}: want_data and free_data are both {want}; the server "
                           f"could not tell a request from a release")
    handle = decode_remote_handle(params["remote_handle"]) if "remote_handle" in params else None
    if scheme == SCHEME_TCP:
        try:
            host, port = parts.hostname, parts.port
        except ValueError as e:
            raise ArrowInvalid(f"URI {uri!r}: {e}") from None
        if not host or port is None:
            raise ArrowInvalid(f"URI {uri!r}: expected {SCHEME_TCP}://HOST:PORT")
        return DissociatedURI(SCHEME_TCP, want, free, handle, host=host, port=port)
    if parts.netloc:
        raise ArrowInvalid(f"URI {uri!r}: a Unix socket URI has no host; expected "
                           f"{SCHEME_UNIX}:///absolute/path")
    path = unquote(parts.path)
    if not path.startswith("/"):
        raise ArrowInvalid(f"URI {uri!r}: the Unix socket path must be absolute")
    return DissociatedURI(SCHEME_UNIX, want, free, handle, path=path)


def format_uri(u: DissociatedURI) -> str:
    """The text form of `u` (what parse_uri reads back)."""
    query = f"want_data={u.want_data}"
    if u.free_data is not None:
        query += f"&free_data={u.free_data}"
    if u.remote_handle is not None:
        query += f"&remote_handle={encode_remote_handle(u.remote_handle)}"
    if u.scheme == SCHEME_TCP:
        assert u.host is not None, "a TCP URI has a host"      # parse_uri sets it
        host = f"[{u.host}]" if ":" in u.host else u.host
        return f"{SCHEME_TCP}://{host}:{u.port}?{query}"
    assert u.path is not None, "a Unix socket URI has a path"  # parse_uri sets it
    return f"{SCHEME_UNIX}://{quote(u.path)}?{query}"
