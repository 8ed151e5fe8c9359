"""Feather files, mirroring pyarrow.feather: `read_table`, `read_feather`, `write_feather`,
`FeatherDataset`, with pyarrow's arguments, defaults, warnings and errors.

Feather V2 is the Arrow IPC file format, read and written by arrowipc.ipc (LZ4 by default, as
pyarrow). Feather V1, the legacy format, is read from its own metadata by arrowipc/ipc/feather_v1.py
with the IPC reader's validation discipline, and written with `version=1`; as in pyarrow 26, both
warn that V1 is deprecated. pandas conversions are arrowipc's own; pyarrow is never imported.

Deliberate differences from pyarrow (docs/pyarrow-compat.md): `columns=` always gives the columns
in the order asked, repeats included (pyarrow's V2 reads return file order when the names asked
happen to be sorted, and fail with IndexError on repeated or unsorted indices); a failed write to
a path leaves any previous file there untouched (pyarrow deletes it); `source` may also be bytes.
"""
from __future__ import annotations

import os
import sys
import warnings
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Callable

from ._core.buffer import Buffer
from .errors import ArrowInvalid
from .io import map_file
from .ipc import IpcReadOptions, IpcWriteOptions, RecordBatchFileReader, new_file, open_file
from .ipc.format import FILE_MAGIC
from .ipc.feather_v1 import FEATHER_V1_MAGIC, FeatherV1File, codec_available, write_feather_v1
from .ipc.paths import read_path
from .ipc.sinks import AtomicFile
from .ipc.sources import BufferSource, FileSource, open_source
from .table import Table, concat_tables
from .table import table as _as_table
from . import types as T

if TYPE_CHECKING:
    from ._typing import SourceLike

__all__ = ["FeatherDataset", "FeatherError", "check_chunked_overflow", "read_feather",
           "read_table", "write_feather"]

# a file of fewer bytes is neither format (V1: magic, padding or length, magic)
_MIN_FILE_SIZE = 12
_DEFAULT_CHUNKSIZE = 64 * 1024
_FEATHER_SUPPORTED_CODECS = {"lz4", "zstd", "uncompressed"}
# the levels the codecs accept; pyarrow's codecs clamp others to these, and so does write_feather
_CODEC_LEVELS = {"lz4": (0, 12), "zstd": (-7, 22)}
_V1_READ_WARNING = ("Feather V1 files are deprecated as of 25.0.0 and support will be removed in "
                    "a future version. Consider rewriting this file in the Arrow IPC file "
                    "format (Feather V2).")
_V1_WRITE_WARNING = ("Feather V1 files are deprecated as of 25.0.0 and support will be removed "
                     "in a future version. Use the default version=2 to write Arrow IPC files "
                     "instead.")


class FeatherError(Exception):
    """pyarrow.feather's FeatherError (defined there, raised by nothing; kept for `except`)."""


class FeatherDataset:
    """Several Feather files read as one table.

    Parameters
    ----------
    path_or_paths : list of str
        The files' paths.
    validate_schema : bool, default True
        Check that every file has the first file's schema (ValueError naming the file if not).
    """

    def __init__(self, path_or_paths: list[Any], validate_schema: bool = True) -> None:
        self.paths = path_or_paths
        self.validate_schema = validate_schema

    def read_table(self, columns: Sequence[str | int] | None = None) -> Table:
        """The files' columns (all, or `columns`) concatenated into one Table."""
        first = _read_table(self.paths[0], columns=columns)
        self._tables = [first]
        self.schema = first.schema
        for path in self.paths[1:]:
            table = _read_table(path, columns=columns)
            if self.validate_schema:
                self.validate_schemas(path, table)
            self._tables.append(table)
        return concat_tables(self._tables)

    def validate_schemas(self, piece: Any, table: Table) -> None:
        """ValueError when `table` (read from `piece`) has another schema than the first file."""
        if not self.schema.equals(table.schema):
            raise ValueError(f"Schema in {piece} was different. \n{self.schema}\n\nvs\n\n"
                             f"{table.schema}")

    def read_pandas(self, columns: Sequence[str | int] | None = None,
                    use_threads: bool = True) -> Any:
        """The files' columns as one pandas.DataFrame."""
        return self.read_table(columns=columns).to_pandas(use_threads=use_threads)


def check_chunked_overflow(name: str, col: Any) -> None:
    """ValueError unless column `name` is one chunk (what a V1 file can hold), as pyarrow."""
    if col.num_chunks == 1:
        return
    if col.type in (T.binary(), T.string()):
        raise ValueError(f"Column '{name}' exceeds 2GB maximum capacity of a Feather binary "
                         f"column. This restriction may be lifted in the future")
    raise ValueError(f"Column '{name}' of type {col.type} was chunked on conversion to Arrow "
                     f"and cannot be currently written to Feather format")


def _is_data_frame(obj: object) -> bool:
    pd = sys.modules.get("pandas")        # a DataFrame exists only if pandas is loaded
    return pd is not None and isinstance(obj, pd.DataFrame)


def write_feather(df: Any, dest: Any, compression: str | None = None,
                  compression_level: int | None = None, chunksize: int | None = None,
                  version: int = 2) -> None:
    """Write a pandas.DataFrame or a Table to `dest` (a path or a writable file object) as
    Feather.

    compression is "lz4", "zstd" or "uncompressed"; None means LZ4 when the codec is available
    (V2 only), as in pyarrow. chunksize bounds the rows per record batch (default 64K; V2 only).
    version=1 writes the deprecated Feather V1 (DeprecationWarning): no compression, no chunks.
    A path is written to a temporary file renamed over it on success: a failed write leaves
    nothing new under that name."""
    if version == 1:
        warnings.warn(_V1_WRITE_WARNING, DeprecationWarning, stacklevel=2)
    if _is_data_frame(df):
        if version == 1:
            preserve_index: bool | None = False   # V1 has no place for the pandas metadata
        elif version == 2:
            preserve_index = None
        else:
            raise ValueError("Version value should either be 1 or 2")
        table = Table.from_pandas(df, preserve_index=preserve_index)
        if version == 1:
            for name, col in zip(table.column_names, table.columns):
                check_chunked_overflow(name, col)
    elif isinstance(df, Table):
        table = df
    elif hasattr(df, "__arrow_c_stream__"):
        table = _as_table(df)
    else:
        raise TypeError(f"Argument 'table' has incorrect type (expected arrowipc.Table, got "
                        f"{type(df).__name__})")

    if version == 1:
        if len(table.column_names) > len(set(table.column_names)):
            raise ValueError("cannot serialize duplicate column names")
        if compression is not None:
            raise ValueError("Feather V1 files do not support compression option")
        if chunksize is not None:
            raise ValueError("Feather V1 files do not support chunksize option")
    else:
        if compression is None and codec_available("lz4"):
            compression = "lz4"
        elif compression is not None and compression not in _FEATHER_SUPPORTED_CODECS:
            raise ValueError(f'compression="{compression}" not supported, must be one of '
                             f"{_FEATHER_SUPPORTED_CODECS}")

    is_path = isinstance(dest, (str, os.PathLike))
    if not is_path and not hasattr(dest, "write"):
        raise TypeError(f"Unable to write to object of type: {type(dest)}")
    if version != 2:          # pyarrow writes V1 for any version but 2 once a table is given
        _write_v1(table, dest, is_path)
        return
    codec = compression if compression in ("lz4", "zstd") else None
    if compression_level is not None:
        if codec is None:
            raise ArrowInvalid(f"Codec '{compression or 'uncompressed'}' doesn't support setting "
                               f"a compression level.")
        lo, hi = _CODEC_LEVELS[codec]
        compression_level = min(max(int(compression_level), lo), hi)
    options = IpcWriteOptions(compression=codec, compression_level=compression_level,
                              unify_dictionaries=True, allow_64bit=True)
    with new_file(dest, table.schema, options=options) as writer:
        writer.write_table(table, _DEFAULT_CHUNKSIZE if chunksize is None else chunksize)


def _write_v1(table: Table, dest: Any, is_path: bool) -> None:
    if not is_path:
        write_feather_v1(table, dest)
        return
    out = AtomicFile(os.fspath(dest))
    try:
        write_feather_v1(table, out.file)
        out.commit()
    except BaseException:
        out.abort()
        raise


def read_feather(source: SourceLike, columns: Sequence[str | int] | None = None,
                 use_threads: bool = True, memory_map: bool = False, **kwargs: Any) -> Any:
    """The Feather file `source` (all its columns, or `columns`) as a pandas.DataFrame; `kwargs`
    go to Table.to_pandas."""
    return _read_table(source, columns=columns, memory_map=memory_map,
                       use_threads=use_threads).to_pandas(use_threads=use_threads, **kwargs)


def read_table(source: SourceLike, columns: Sequence[str | int] | None = None,
               memory_map: bool = False, use_threads: bool = True) -> Table:
    """The Feather file (V1 or V2) `source` as a Table.

    source is a path, a file object, bytes or a buffer. columns, names or indices (not mixed),
    selects columns in the order given. memory_map maps a path instead of reading it (see
    arrowipc.ipc.open_file for the risks)."""
    return _read_table(source, columns=columns, memory_map=memory_map, use_threads=use_threads)


def _open(source: Any, memory_map: bool, options: IpcReadOptions
          ) -> tuple[FeatherV1File | RecordBatchFileReader, Callable[[IpcReadOptions],
                                                                    RecordBatchFileReader]]:
    """A reader for either version of the Feather file `source`, told apart by its magic, and
    how to open the file again as IPC with other options (a projection)."""
    if isinstance(source, (str, os.PathLike)):
        path = os.fspath(source)
        size = os.path.getsize(path)
        with open(path, "rb") as f:
            head = f.read(len(FILE_MAGIC))
        _check_head(head, size, path)
        if head.startswith(FEATHER_V1_MAGIC):
            return FeatherV1File(map_file(path) if memory_map else read_path(path), path), _no_ipc

        def reopen_path(opts: IpcReadOptions) -> RecordBatchFileReader:
            return open_file(path, options=opts, memory_map=memory_map)
        return reopen_path(options), reopen_path
    src = open_source(source)
    start = src.pos
    size = src.size
    head = src.read_at(0, min(size, len(FILE_MAGIC))).to_pybytes()
    _check_head(head, size, src.name)
    if head.startswith(FEATHER_V1_MAGIC):
        whole: Buffer = src.read_at(0, size)   # V1 offsets are positions in the whole file
        return FeatherV1File(whole, src.name), _no_ipc
    if isinstance(src, BufferSource):
        source = src.buf

    def reopen(opts: IpcReadOptions) -> RecordBatchFileReader:
        if isinstance(src, FileSource):
            src.f.seek(start)
        return open_file(source, options=opts)
    return reopen(options), reopen


def _no_ipc(options: IpcReadOptions) -> RecordBatchFileReader:
    raise AssertionError("a Feather V1 file is not reopened as IPC")


def _check_head(head: bytes, size: int, name: str) -> None:
    if size < _MIN_FILE_SIZE:
        raise ArrowInvalid(f"{name}: File is too small to be a well-formed file ({size} bytes; a "
                           f"Feather file has at least {_MIN_FILE_SIZE})")
    if not head.startswith(FEATHER_V1_MAGIC) and head != FILE_MAGIC:
        raise ArrowInvalid(f"{name}: Not a Feather V1 or Arrow IPC file: expected b'FEA1' or "
                           f"b'ARROW1' at byte 0, found {head!r}")


def _read_table(source: Any, columns: Sequence[str | int] | None = None,
                memory_map: bool = False, use_threads: bool = True) -> Table:
    reader, reopen = _open(source, memory_map, IpcReadOptions(use_threads=use_threads))
    if isinstance(reader, FeatherV1File):
        warnings.warn(_V1_READ_WARNING, DeprecationWarning, stacklevel=3)
    if columns is None:
        return reader.read() if isinstance(reader, FeatherV1File) else reader.read_all()
    if not isinstance(columns, Sequence):
        raise TypeError(f"Columns must be a sequence but, got {type(columns).__name__}")
    kinds = [type(c) for c in columns]
    if all(k is int for k in kinds):
        indices = [int(c) for c in columns]
    elif all(k is str for k in kinds):
        indices = []
        for name in columns:
            i = reader.schema.get_field_index(str(name))
            if i < 0:
                raise ArrowInvalid(f"Field named {name} is not found")
            indices.append(i)
    else:
        raise TypeError(f"Columns must be indices or names. Got columns {columns} of types "
                        f"{[k.__name__ for k in kinds]}")
    if isinstance(reader, FeatherV1File):
        return reader.read(indices)
    if not indices:                     # as pyarrow's V2 reads: no selection reads every column
        return reader.read_all()
    n = len(reader.schema)
    for i in indices:
        if not 0 <= i < n:
            raise ArrowInvalid(f"Out of bounds field index: {i}")
    wanted = sorted(set(indices))
    # opened again with the projection, so the other columns' bytes are never read
    table = reopen(IpcReadOptions(use_threads=use_threads, included_fields=wanted)).read_all()
    position = {i: k for k, i in enumerate(wanted)}
    return table.select([position[i] for i in indices])
