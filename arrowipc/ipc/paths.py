"""Local paths as sources: zero-copy where no other process can break the read, else read into
memory this process owns.

A plain shared memory map of a file is not safe to read by default: another process that
truncates the file kills ours with SIGBUS at the next touch of a missing page, and one that
rewrites it changes arrays after they were validated (offsets then point anywhere, and a
consumer given them through the C data interface reads out of bounds). So the whole file (every
batch of a stream, once its schema is read alone; every batch of the file format) is, by default:
- on Linux, mapped under a read lease (`_core.leased_map`): the kernel makes any process that
  opens the file for writing or truncates it wait until our handler has copied the mapped bytes
  into private memory at the same address, so the read stays zero-copy and keeps the bytes it
  validated. Files under LEASED_MAP_MIN_BYTES, and files no lease can be had on (another process
  has it open for writing; not our file, without CAP_LEASE; NFS and other file systems without
  leases; not Linux; ARROWIPC_LEASED_MAPS=0 in the environment) are read as below instead;
- otherwise read in one read into one aligned buffer (the fastest way to get every byte; batches
  are views of it), unless it is larger than READ_WHOLE_LIMIT, when streams are read message by
  message and files batch by batch, so memory stays bounded.
The file format otherwise (get_batch(i), count_rows, and projections of files whose batches are
large enough for skipping bytes to pay: reads_whole) reads through `PathSource`: positioned
reads (pread) of exactly the byte ranges a read needs, coalesced by the reader's plan.
`memory_map=True` maps the file plainly instead (zero-copy; the risks above are then the
caller's, and arrays are checked again when exported).

What a leased mapping does not cover: a writer that had the file open for writing or mapped
before our read (no lease is granted then: we copy, as pyarrow would); a lease break the
handler cannot serve for want of memory for the copy (it keeps the lease: the writer waits
/proc/sys/fs/lease-break-time seconds, 45 by default, then the kernel breaks the lease and a
truncation can again end the process with SIGBUS); and a child forked while the mapping is
alive, whose inherited copy of the mapping is not protected.
sources.open_path and open_path_random_access choose among these.
"""
from __future__ import annotations

import os
import stat
import threading

from .._core.buffer import Buffer, allocate_buffer
from .._core.leased_map import map_leased
from ..errors import ArrowInvalid

TYPE_CHECKING = False               # typing itself is not imported at run time
if TYPE_CHECKING:
    from .._typing import StrPath

__all__ = ["LEASED_MAPS", "LEASED_MAP_MIN_BYTES", "RANGED_MIN_BATCH_BYTES", "READ_WHOLE_LIMIT",
           "PathSource", "leased_map_if_unchanged", "read_fd", "read_path", "reads_whole"]

# Files up to this size are read whole when every batch is wanted; larger ones in pieces.
READ_WHOLE_LIMIT = 256 << 20
# A projected read fetches only the selected columns' ranges when batches average at least this
# many bytes; below it, the per-batch cost of planning and reading ranges (a few hundred
# microseconds) exceeds that of reading the whole file once and skipping columns in memory.
RANGED_MIN_BATCH_BYTES = 1 << 20
# Whole-file reads map the file under a read lease (see the module docstring) unless the
# environment says ARROWIPC_LEASED_MAPS=0; tests and callers may also set this to False.
LEASED_MAPS = os.environ.get("ARROWIPC_LEASED_MAPS", "1").strip() not in ("0", "false", "no", "off")
# Smaller files are copied: one read of a few pages costs less than a lease, a mapping and its
# page faults.
LEASED_MAP_MIN_BYTES = 64 << 10


def reads_whole(size: int, num_batches: int, projected: bool) -> bool:
    """Whether reading every batch of a `size`-byte local file reads the whole file at once."""
    if size > READ_WHOLE_LIMIT:
        return False
    return not projected or size < RANGED_MIN_BATCH_BYTES * max(1, num_batches)

_HAS_PREAD = hasattr(os, "preadv")
# Whole-file reads at least this large are split over threads: one copy stream from the page
# cache does not saturate the memory bus (as concat_buffers' parallel gather).
PARALLEL_READ_BYTES = 16 << 20
_READ_THREADS = max(1, min(4, os.cpu_count() or 1))


def _open_fd(path: str) -> int:
    if os.name == "nt" and os.path.isdir(path):     # opening a directory fails otherwise there
        raise IsADirectoryError(21, "Is a directory", path)
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_BINARY", 0) | getattr(os, "O_CLOEXEC", 0))
    try:
        # POSIX opens a directory read-only: told by the open file, not by a stat of the path
        if stat.S_ISDIR(os.fstat(fd).st_mode):
            raise IsADirectoryError(21, "Is a directory", path)
    except BaseException:
        os.close(fd)
        raise
    return fd


def _read_into(fd: int, view: memoryview, offset: int) -> int:
    """Bytes read into `view` from file offset `offset` (fewer only at the end of the file)."""
    got, n = 0, view.nbytes
    while got < n:
        if _HAS_PREAD:
            k = os.preadv(fd, [view[got:]], offset + got)
        else:                                       # callers hold the source's lock
            os.lseek(fd, offset + got, os.SEEK_SET)
            data = os.read(fd, min(n - got, 1 << 30))
            k = len(data)
            view[got:got + k] = data
        if k <= 0:
            break
        got += k
    return got


def _read_range_into(fd: int, view: memoryview, offset: int = 0) -> int:
    """Bytes read into `view` from file offset `offset`, in parts on threads when it is large
    (positioned reads need no shared file offset); fewer only at the end of the file."""
    n = view.nbytes
    if not _HAS_PREAD or _READ_THREADS == 1 or n < PARALLEL_READ_BYTES:
        return _read_into(fd, view, offset)
    from concurrent.futures import ThreadPoolExecutor
    step = ((n // _READ_THREADS) + 4095) & ~4095       # page-aligned parts
    starts = list(range(0, n, step))
    with ThreadPoolExecutor(len(starts)) as pool:
        got = list(pool.map(lambda o: _read_into(fd, view[o:o + step], offset + o), starts))
    total = 0
    for o, k in zip(starts, got):          # a part cut short ends what was read
        total += k
        if k < min(step, n - o):
            break
    return total


def _leased_whole(fd: int, size: int) -> Buffer | None:
    """The whole file open as `fd` mapped under a read lease, or None (read a copy then)."""
    if not LEASED_MAPS or size < LEASED_MAP_MIN_BYTES:
        return None
    return map_leased(fd)


def read_fd(fd: int) -> Buffer:
    """The whole file open as `fd`: mapped under a read lease (no other process can change or
    cut what it views, see the module docstring), else read into a 64-byte-aligned buffer this
    process owns (what it holds when the read starts; shorter if it is truncated meanwhile)."""
    size = os.fstat(fd).st_size
    leased = _leased_whole(fd, size)
    if leased is not None:
        return leased
    buf = allocate_buffer(size, zero=False)
    got = _read_range_into(fd, memoryview(buf)) if size else 0
    return buf if got == size else buf.slice(0, got)


def leased_map_if_unchanged(path: StrPath, key: tuple[int, int]) -> Buffer | None:
    """The file at `path` mapped whole under a read lease when its (size, mtime in ns) is still
    `key` once mapped (no other process can change it from then on); None when it changed, is
    gone, is too small to map or no lease can be had."""
    try:
        fd = _open_fd(os.fspath(path))
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        if (st.st_size, st.st_mtime_ns) != key:
            return None
        mapped = _leased_whole(fd, st.st_size)
        if mapped is None:
            return None
        st = os.fstat(fd)           # a write between the check and the lease is seen here
        if (st.st_size, st.st_mtime_ns) != key or mapped.size != st.st_size:
            return None
        return mapped
    finally:
        os.close(fd)


def read_path(path: StrPath) -> Buffer:
    """The whole file at `path` (as read_fd: mapped under a read lease, else read into memory
    this process owns)."""
    fd = _open_fd(os.fspath(path))
    try:
        return read_fd(fd)
    finally:
        os.close(fd)


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
            got = _read_range_into(fd, view, offset)
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

    def leased_whole(self) -> Buffer | None:
        """The whole file mapped under a read lease, or None where no lease can be had (then
        nothing is read: the caller goes on with ranged reads)."""
        fd = self._fd
        if fd is None:
            raise ValueError(f"{self.name}: read from a closed file")
        leased = _leased_whole(fd, os.fstat(fd).st_size)
        if leased is not None:
            self.read_requests += 1
            self.bytes_read += leased.size
        return leased

    def read_whole(self) -> Buffer:
        """The whole file as it is now, in one read (for the reader's in-memory path): mapped
        under a read lease where one can be had, as read_fd."""
        fd = self._fd
        if fd is None:
            raise ValueError(f"{self.name}: read from a closed file")
        size = os.fstat(fd).st_size
        leased = _leased_whole(fd, size)
        if leased is not None:
            self.read_requests += 1
            self.bytes_read += leased.size
            return leased
        out = allocate_buffer(size, zero=False)
        if _HAS_PREAD:
            got = _read_range_into(fd, memoryview(out)) if size else 0
        else:
            with self._lock:
                got = _read_into(fd, memoryview(out), 0)
        self.read_requests += 1
        self.bytes_read += got
        return out if got == size else out.slice(0, got)

    def close(self) -> None:
        """Close the file (buffers already read stay valid: they are ours)."""
        fd, self._fd = self._fd, None
        if fd is not None:
            os.close(fd)

    def __del__(self) -> None:
        if getattr(self, "_fd", None) is not None:   # __init__ may have failed before
            self.close()
