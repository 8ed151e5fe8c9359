"""Finding a dataset's files: a file, a directory (recursive), a glob, a list; local or remote.

A directory is walked recursively (through symlinked directories, a loop once); names the
layout rules skip (layout.is_skipped_name: hidden and `_` names except `_`-partition
directories, Spark's side files) are left out at every level below the directory given, and the
files come back sorted by path, as pyarrow lists them. A glob (`*`, `?`, `[`) expands to the
files it matches and the files under the directories it matches. A list names files (or
directories and globs, expanded as above) and keeps its order.

Paths are local, URLs (fsspec: s3://, gs://, http(s)://, ...), or paths on a `filesystem=` (an
fsspec or a pyarrow filesystem), as the IPC readers take them (ipc/filesystems.py).
"""
from __future__ import annotations

import errno
import glob as globmod
import os
import sys
from collections.abc import Iterable
from typing import Any, NamedTuple

from ..ipc.filesystems import resolve
from .layout import DEFAULT_IGNORE_PREFIXES, is_skipped_name

__all__ = ["FileSource", "Storage", "discover", "filesystem_argument", "storage_of"]

_GLOB_CHARS = ("*", "?", "[")


class Storage(NamedTuple):
    """Where a dataset's files live: kind "local", "fsspec" or "pyarrow", and the filesystem
    object (None for local files) the readers are given."""
    kind: str
    filesystem: Any

    def reader_filesystem(self) -> Any:
        """The `filesystem=` to give the IPC readers."""
        return self.filesystem

    def is_dir(self, path: str) -> bool:
        if self.kind == "local":
            return os.path.isdir(path)
        if self.kind == "fsspec":
            return bool(self.filesystem.isdir(path))
        info = self.filesystem.get_file_info(path)
        return bool(info.type == _pyarrow_fs().FileType.Directory)

    def is_file(self, path: str) -> bool:
        if self.kind == "local":
            return os.path.isfile(path)
        if self.kind == "fsspec":
            return bool(self.filesystem.isfile(path))
        info = self.filesystem.get_file_info(path)
        return bool(info.type == _pyarrow_fs().FileType.File)

    def walk(self, base: str, ignore_prefixes: Iterable[str] | None) -> list[str]:
        """The files under directory `base` whose relative path has no skipped component."""
        prefixes = tuple(ignore_prefixes or ())
        if self.kind == "local":
            return _walk_local(base, prefixes)
        if self.kind == "fsspec":
            found = [str(p) for p in self.filesystem.find(base, withdirs=False, detail=False)]
        else:
            selector = _pyarrow_fs().FileSelector(base, recursive=True)
            found = [info.path for info in self.filesystem.get_file_info(selector)
                     if info.type == _pyarrow_fs().FileType.File]
        root = base.rstrip("/") + "/"
        out = []
        for path in found:
            rel = path[len(root):] if path.startswith(root) else path.rsplit("/", 1)[-1]
            if not any(is_skipped_name(part, prefixes) for part in rel.split("/")):
                out.append(path)
        return sorted(out)

    def glob(self, pattern: str) -> list[str]:
        if self.kind == "local":
            return sorted(globmod.glob(pattern))
        if self.kind == "fsspec":
            return sorted(str(p) for p in self.filesystem.glob(pattern))
        raise ValueError(f"{pattern}: globs are not expanded on a pyarrow filesystem; list the "
                         f"files or give their directory")

    def size(self, path: str) -> int | None:
        try:
            if self.kind == "local":
                return os.path.getsize(path)
            if self.kind == "fsspec":
                return int(self.filesystem.size(path))
            return int(self.filesystem.get_file_info(path).size)
        except (OSError, TypeError, ValueError):
            return None


def _pyarrow_fs() -> Any:
    # only reached with a pyarrow filesystem given by the caller: pyarrow is loaded already
    return sys.modules.get("pyarrow.fs") or __import__("pyarrow.fs", fromlist=["fs"])


def _walk_local(base: str, prefixes: tuple[str, ...]) -> list[str]:
    """The files under `base`, through symlinked directories too (as pyarrow walks them),
    except a symlink back to a directory of its own path: a loop is walked once, not until
    the system's symlink limit (pyarrow lists its files again at every level of it)."""
    out: list[str] = []
    root = os.stat(base)
    # each directory to list, with the (device, inode) of it and of the directories above it
    todo: list[tuple[str, frozenset[tuple[int, int]]]] = [
        (base, frozenset({(root.st_dev, root.st_ino)}))]
    while todo:
        directory, above = todo.pop()
        with os.scandir(directory) as entries:
            for entry in entries:
                if is_skipped_name(entry.name, prefixes):
                    continue
                if entry.is_dir():
                    if entry.is_symlink():
                        st = entry.stat()
                        key = (st.st_dev, st.st_ino)
                    else:
                        key = (entry.stat(follow_symlinks=False).st_dev, entry.inode())
                    if key not in above:
                        todo.append((entry.path, above | {key}))
                elif entry.is_file():
                    out.append(entry.path)
    return sorted(out)


class FileSource(NamedTuple):
    """A file of the dataset and the directory its partitions are read relative to (None: the
    file was named itself, and only partition_base_dir gives it partitions)."""
    path: str
    base_dir: str | None


def storage_of(source: Any, filesystem: Any) -> tuple[Storage, str]:
    """(Storage, path on it) of one path or URL."""
    kind, fs, path = resolve(source, filesystem)
    return Storage(kind, fs), path


def _in_subtree(base: str, path: Any, local: bool) -> Any:
    """`path` (or each path of a list) below directory `base`, as a SubTreeFileSystem reads it
    (a leading "/" stays inside the tree)."""
    if isinstance(path, (list, tuple)):
        return [_in_subtree(base, p, local) for p in path]
    if not isinstance(path, (str, os.PathLike)):
        return path
    rel = os.fspath(path).lstrip("/")
    if local:
        return os.path.join(base, rel) if rel else base
    return base.rstrip("/") + "/" + rel if rel else base


def filesystem_argument(filesystem: Any, source: Any, where: str = "path"
                        ) -> tuple[Any, Any]:
    """The `filesystem=` and `source` (a path or a list of paths) pyarrow's dataset functions
    take, as arrowipc's readers take them: (filesystem object or None, source).

    A string `filesystem` is a URI or a directory, as pyarrow reads it (a SubTreeFileSystem):
    its directory must exist, and the paths are below it (the filesystem becomes None for local
    files, fsspec's for a URL). A path-like object that is not a string is refused with any
    filesystem but a local one, as pyarrow refuses it (a `TypeError`)."""
    if isinstance(filesystem, str):
        kind, fs, base = resolve(filesystem)
        storage = Storage(kind, fs)
        if not storage.is_dir(base):
            found = "File" if storage.is_file(base) else "NotFound"
            raise ValueError(f"The path component of the filesystem URI must point to a "
                             f"directory but it has a type: `{found}`. The path component is "
                             f"`{base}` and the given filesystem URI is `{filesystem}`")
        return fs, _in_subtree(base, source, kind == "local")
    if (filesystem is not None and isinstance(source, os.PathLike)
            and type(filesystem).__name__ != "LocalFileSystem"):
        raise TypeError(f"Expected string {where}; path-like objects are only allowed with a "
                        f"local filesystem (got a {type(source).__name__} and a "
                        f"{type(filesystem).__name__})")
    return filesystem, source


def _expand(storage: Storage, path: str, ignore_prefixes: Iterable[str] | None,
            explicit: bool) -> list[FileSource]:
    if storage.is_dir(path):
        base = path.rstrip("/") or "/"
        return [FileSource(p, base) for p in storage.walk(base, ignore_prefixes)]
    if storage.is_file(path):
        return [FileSource(path, None)]
    if any(c in path for c in _GLOB_CHARS):
        head = path
        while any(c in head for c in _GLOB_CHARS):
            head = head.rsplit("/", 1)[0] if "/" in head else ""
        out: list[FileSource] = []
        for match in storage.glob(path):
            if storage.is_dir(match):
                out.extend(FileSource(p, match) for p in storage.walk(match, ignore_prefixes))
            elif not is_skipped_name(match.rsplit("/", 1)[-1], ignore_prefixes):
                out.append(FileSource(match, head or None))
        if not out and not explicit:
            raise FileNotFoundError(f"{path}: the glob matches no file")
        return out
    if storage.kind == "local":
        try:
            os.stat(path)
        except OSError as e:            # the system's own reason (a name too long, a loop...)
            if e.errno != errno.ENOENT:
                raise OSError(e.errno, f"{path}: {e.strerror}") from None
    raise FileNotFoundError(f"{path}: no such file or directory")


def discover(source: Any, filesystem: Any = None,
             ignore_prefixes: Iterable[str] | None = DEFAULT_IGNORE_PREFIXES
             ) -> tuple[Storage, list[FileSource]]:
    """The storage and files of `source`: a path, URL or glob, or a list of them."""
    if isinstance(source, (str, os.PathLike)):
        one, path = storage_of(source, filesystem)
        return one, _expand(one, path, ignore_prefixes, False)
    sources = list(source)
    if not sources:
        return Storage("local", filesystem), []
    files: list[FileSource] = []
    storage: Storage | None = None
    for item in sources:
        item_storage, path = storage_of(item, filesystem)
        if storage is None:
            storage = item_storage
        elif item_storage.kind != storage.kind:
            raise ValueError("the paths of a dataset must all be on one filesystem")
        files.extend(_expand(storage, path, ignore_prefixes, False))
    assert storage is not None
    return storage, files
