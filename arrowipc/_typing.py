"""Type aliases shared by the annotations of the public API (imported only by type checkers:
modules name them under `if TYPE_CHECKING:`, so nothing here loads at run time)."""
from __future__ import annotations

import os
from typing import Any, Awaitable, Protocol, Union

from typing_extensions import Buffer as ReadableBuffer, TypeAlias

__all__ = ["AsyncReadable", "CapsuleLike", "ReadableBuffer", "SinkLike", "SourceLike", "StrPath"]

StrPath: TypeAlias = Union[str, "os.PathLike[str]"]


class Readable(Protocol):
    """A file-like object the readers can read from (`read(n)`; seek/tell/readinto are used when
    present)."""
    def read(self, n: int = ..., /) -> Any: ...


class Writable(Protocol):
    """A file-like object the writers can write to."""
    def write(self, data: Any, /) -> Any: ...


class AsyncReadable(Protocol):
    """An object with an awaitable `read(n)`, like asyncio.StreamReader."""
    def read(self, n: int = ..., /) -> Awaitable[bytes]: ...


#: what the IPC readers take: bytes-like objects (bytes, Buffer, mmap, memoryview), paths and
#: readable file-like objects
SourceLike: TypeAlias = Union[ReadableBuffer, StrPath, Readable]
#: what the IPC writers take: paths and writable file-like objects (BufferOutputStream included)
SinkLike: TypeAlias = Union[StrPath, Writable]
#: a PyCapsule of the Arrow C data interface
CapsuleLike: TypeAlias = object
