"""Where written IPC data goes: atomic replacement of a path, or a fresh file written through.

`AtomicFile`: a path is written to a temporary file in the same directory and renamed over the
final name only on success, so a crash or an error never leaves a truncated file under that name.
`open_fresh`: a new empty file is renamed over the name at once and written through there (the
stream writers, so another process can follow the stream); the previous file is replaced, never
truncated in place. Either way the new file gets the permissions any newly created file gets
(0666 less the umask), or keeps those of the file it replaces; errors name the path the caller
gave, never the temporary one.

Durability is a separate, explicit choice (`commit(durable=True)`): the rename alone is atomic
against crashes of this process, as pyarrow's writes are, but after a power loss the name may
point at a file whose blocks never reached the disk. `durable` fsyncs the file before the rename
and the directory after it, so both survive; that waits for the device, which for files larger
than the page cache absorbs costs about as long as writing them again (see docs/compression.md).
"""
from __future__ import annotations

import errno
import os
import secrets
import stat
import sys

TYPE_CHECKING = False               # typing itself is not imported at run time
if TYPE_CHECKING:
    from typing import Any, BinaryIO

__all__ = ["AtomicFile", "fsync_directory", "open_fresh"]


class AtomicFile:
    """A binary file object for `path` that becomes visible under that name only on `commit()`."""

    def __init__(self, path: str) -> None:
        self.path = os.fspath(path)
        target = os.path.realpath(self.path)
        directory, name = os.path.split(target)
        self.target = target
        self.tmp_path: str | None = os.path.join(directory, f".{name}.{secrets.token_hex(6)}.tmp")
        try:
            st = os.stat(target)
        except FileNotFoundError:
            st = None
        except OSError as e:
            raise _naming(e, self.path) from None
        try:
            # 0o666 and the umask, like open(path, "wb"): mkstemp's 0600 would surprise users
            fd = os.open(self.tmp_path, os.O_WRONLY | os.O_CREAT | os.O_EXCL
                         | getattr(os, "O_BINARY", 0), 0o666)
        except OSError as e:
            self.tmp_path = None
            raise _naming(e, self.path) from None
        if st is not None:
            os.chmod(self.tmp_path, stat.S_IMODE(st.st_mode))  # replacing a file keeps its mode
        self.file = os.fdopen(fd, "wb")

    def commit(self, durable: bool = False) -> None:
        """Close the file and rename it into place; with `durable`, fsync the file before the
        rename and its directory after it, so a power loss keeps either the old or the new file."""
        if self.tmp_path is None:
            return
        try:
            self.file.flush()
            if durable:
                os.fsync(self.file.fileno())  # the data is on disk before the name points at it
            self.file.close()
            replaced = _exchange(self.tmp_path, self.target)
            if not replaced:
                os.replace(self.tmp_path, self.target)
            if durable:
                fsync_directory(os.path.dirname(self.target))   # the rename itself is on disk
        except OSError as e:
            self.abort()
            raise _naming(e, self.path) from None
        except BaseException:
            self.abort()
            raise
        tmp, self.tmp_path = self.tmp_path, None
        if replaced:                 # the temporary name now holds the previous file
            try:
                os.unlink(tmp)
            except OSError:
                pass

    def abort(self) -> None:
        """Give up: the temporary file goes, the final name is left untouched."""
        if self.tmp_path is None:
            return
        tmp, self.tmp_path = self.tmp_path, None
        try:
            self.file.close()
        except (OSError, ValueError):
            pass
        try:
            os.unlink(tmp)
        except OSError:
            pass

    def __del__(self) -> None:
        # dropped without commit(): never publish a partial file
        if getattr(self, "tmp_path", None) is not None:
            self.abort()


def open_fresh(path: str) -> BinaryIO:
    """A new, empty binary file put under `path` by one rename, open for writing there.

    Why not truncate the file in place (open(path, "wb"), as pyarrow): ext4 (auto_da_alloc)
    starts writeback of the whole file when one truncated to zero is closed after being written
    again, which doubles the time of a large write the page cache would otherwise absorb; a rename
    of an empty file costs nothing of the kind. So the name always holds either the previous file
    or the new one, and a process still reading the previous file keeps its bytes."""
    fresh = AtomicFile(path)
    assert fresh.tmp_path is not None          # the constructor either made it or raised
    try:
        os.replace(fresh.tmp_path, fresh.target)
    except OSError as e:
        fresh.abort()
        raise _naming(e, fresh.path) from None
    fresh.tmp_path = None                      # published: nothing left to remove
    return fresh.file


# None until looked up, then False (not available) or libc's renameat2
_renameat2: Any = None


def _exchange(tmp: str, target: str) -> bool:
    """Swap `tmp` and an existing `target` in one atomic step (Linux renameat2 with
    RENAME_EXCHANGE); False where that is not possible, and the caller renames instead.

    Why not a plain rename: ext4 (auto_da_alloc) starts writeback of the whole new file when a
    rename replaces an existing one, which doubles the time of a large write that the page cache
    would otherwise absorb. An exchange publishes the new file just as atomically without it;
    the old file, left under the temporary name, is then unlinked."""
    global _renameat2
    if _renameat2 is None:
        _renameat2 = False
        if sys.platform.startswith("linux"):
            try:
                import ctypes
                fn = ctypes.CDLL(None, use_errno=True).renameat2
                fn.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p,
                               ctypes.c_uint]
                fn.restype = ctypes.c_int
                _renameat2 = fn
            except (OSError, AttributeError):      # no libc symbol (glibc < 2.28, musl)
                pass
    if not _renameat2:
        return False
    try:
        if not stat.S_ISREG(os.lstat(target).st_mode):
            return False
    except OSError:
        return False                               # nothing to replace: a rename is enough
    # -100 is AT_FDCWD, 2 is RENAME_EXCHANGE
    if _renameat2(-100, os.fsencode(tmp), -100, os.fsencode(target), 2) == 0:
        return True
    # unsupported by this filesystem (EINVAL), or the target vanished meanwhile: rename instead
    return False


def fsync_directory(directory: str) -> None:
    """Flush a directory's entries (new names, renames) to disk; a no-op where directories cannot
    be opened (Windows)."""
    try:
        fd = os.open(directory or ".", os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except (OSError, PermissionError):
        return
    try:
        os.fsync(fd)
    except OSError as e:
        if e.errno not in (errno.EINVAL, errno.EBADF):   # filesystems without directory fsync
            raise
    finally:
        os.close(fd)


def _naming(error: OSError, path: str) -> OSError:
    """The same OSError, about `path` (the caller's name) instead of the temporary file."""
    return type(error)(error.errno, error.strerror, path)
