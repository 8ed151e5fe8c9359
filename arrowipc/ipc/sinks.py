"""Where written IPC data goes: atomic replacement of a path.

A path is written to a temporary file in the same directory and renamed over the final name only
on success, so a crash or an error never leaves a truncated file under that name. The new file
gets the permissions any newly created file gets (0666 less the umask), or keeps those of the file
it replaces; errors name the path the caller gave, never the temporary one.
"""
from __future__ import annotations

import os
import secrets
import stat

__all__ = ["AtomicFile"]


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
        """Close the file and rename it into place; with `durable`, fsync it first."""
        if self.tmp_path is None:
            return
        try:
            self.file.flush()
            if durable:
                os.fsync(self.file.fileno())  # the data is on disk before the name points at it
            self.file.close()
            os.replace(self.tmp_path, self.target)
        except OSError as e:
            self.abort()
            raise _naming(e, self.path) from None
        except BaseException:
            self.abort()
            raise
        self.tmp_path = None

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


def _naming(error: OSError, path: str) -> OSError:
    """The same OSError, about `path` (the caller's name) instead of the temporary file."""
    return type(error)(error.errno, error.strerror, path)
