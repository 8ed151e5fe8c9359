"""write_dataset: data written as IPC files under a base directory, partitioned (pyarrow's).

Each input batch is split by its partition columns' values (which are not stored in the files);
each partition directory gets its files `part-{i}.arrow` (basename_template), `i` counting per
directory from 0. A file is written under a temporary name and renamed when it is complete
(ipc/sinks.py: a `.`-name every reader skips), so a failed or interrupted write leaves no
partial file under a final name. Files are written with statistics (min, max and null counts
per batch and in the footer) unless `file_options` says otherwise, so later reads prune.

Partition values are written as layout.py says: Hive's escapes, `__HIVE_DEFAULT_PARTITION__`
for null and for the empty string.
"""
from __future__ import annotations

import os
import shutil
from collections import OrderedDict, deque
from collections.abc import Callable, Iterator
from typing import Any, NamedTuple

import numpy as np

from .. import types as T
from ..array import Array
from ..batch_reader import RecordBatchReader
from ..errors import ArrowInvalid
from ..ipc.writer import RecordBatchFileWriter, RecordBatchStreamWriter
from ..table import RecordBatch, Table
from .discovery import Storage, filesystem_argument, storage_of
from .formats import FileFormat, IpcFileFormat, IpcFileWriteOptions, as_format
from .partitioning import (DirectoryPartitioning, FilenamePartitioning, HivePartitioning,
                           Partitioning, PartitioningFactory, as_schema)

__all__ = ["WrittenFile", "write_dataset"]

_BEHAVIORS = ("error", "overwrite_or_ignore", "delete_matching")


class WrittenFile(NamedTuple):
    """What file_visitor is given for each file written (pyarrow's WrittenFile)."""
    path: str
    metadata: Any
    size: int | None


_AS_THEY_COME = 1 << 62       # a scan's batch_size that slices no batch


def _batches_of(data: Any, schema: T.Schema | None) -> tuple[T.Schema, Iterator[RecordBatch]]:
    """(schema, batches) of what write_dataset takes, as pyarrow reads it: tables and batches
    (or a list of them) as an InMemoryDataset of `schema` (an item of another schema is an
    ArrowTypeError; the schema's metadata is written), a reader, stream or iterable of batches
    as Scanner.from_batches reads it (projected to `schema`), a Dataset scanned whole (`schema`
    is not used, as in pyarrow)."""
    from .datasets import Dataset, InMemoryDataset, _arrowipc_data
    from .scanner import Scanner
    if type(data).__name__ in ("Table", "RecordBatch") and (
            hasattr(data, "__arrow_c_stream__") or hasattr(data, "__arrow_c_array__")):
        data = _arrowipc_data(data)         # pyarrow's, through the C data interface
    if isinstance(data, (Table, RecordBatch, list, tuple)):
        if isinstance(data, (list, tuple)) and not data and schema is None:
            raise ValueError("Must provide schema to write an empty list")
        memory = InMemoryDataset(data, schema)
        return memory.schema, iter(memory._batches)     # as given, not sliced by a scan
    if isinstance(data, Dataset):
        scanner = data.scanner()
        return scanner.projected_schema, scanner.to_batches()
    if isinstance(data, Scanner):
        if schema is not None:
            raise ValueError("Cannot specify a schema when writing a Scanner")
        return data.projected_schema, data.to_batches()
    is_reader = isinstance(data, RecordBatchReader) or (
        type(data).__name__ == "RecordBatchReader" and hasattr(data, "__arrow_c_stream__"))
    if is_reader and schema is not None:
        raise ValueError("Cannot specify a schema when providing a RecordBatchReader")
    if not (isinstance(data, RecordBatchReader) or hasattr(data, "__arrow_c_stream__")):
        if not hasattr(data, "__iter__") or isinstance(data, (str, bytes)):
            raise TypeError(f"Unsupported data type for write_dataset: {type(data).__name__}: "
                            f"give a Table, RecordBatch, list of them, RecordBatchReader, "
                            f"Dataset, Scanner, an iterable of batches (with schema=) or an "
                            f"object with __arrow_c_stream__")
        if schema is None:
            raise ValueError("write_dataset needs schema= with an iterable of batches")
        data = _each_batch(data)
    # the batches as they come (a scan would slice them at its batch_size)
    scanner = Scanner.from_batches(data, schema=schema, batch_size=_AS_THEY_COME)
    return scanner.projected_schema, scanner.to_batches()


def _each_batch(items: Any) -> Iterator[RecordBatch]:
    """The record batches of an iterable of batches or tables (ours or any library's)."""
    from ..table import record_batch
    for item in items:
        if isinstance(item, RecordBatch):
            yield item
        elif isinstance(item, Table):
            yield from item.to_batches()
        else:
            yield record_batch(item)


def _resolve_partitioning(partitioning: Any, flavor: str | None, schema: T.Schema
                          ) -> Partitioning | None:
    if partitioning is None:
        return None
    if isinstance(partitioning, Partitioning):
        return partitioning
    if isinstance(partitioning, PartitioningFactory):
        if partitioning.schema is not None:
            return partitioning._make(partitioning.schema)
        partitioning = partitioning.field_names
        flavor = flavor or None
    if isinstance(partitioning, (list, tuple)):
        fields = []
        for name in partitioning:
            if name not in schema.names:
                raise KeyError(f"Column {name} does not exist in schema")
            fields.append(schema.field(name))
        part_schema = T.schema(fields)
        if flavor is None or flavor == "directory":
            return DirectoryPartitioning(part_schema)
        if flavor == "hive":
            return HivePartitioning(part_schema)
        if flavor == "filename":
            return FilenamePartitioning(part_schema)
        raise ValueError(f"Unsupported partitioning_flavor: {flavor!r}")
    from .datasets import _from_pyarrow_partitioning
    converted = _from_pyarrow_partitioning(partitioning)
    if isinstance(converted, Partitioning):
        return converted
    raise ValueError("write_dataset needs a Partitioning with a schema, or field names")


class _OpenFile:
    __slots__ = ("path", "writer", "rows", "pending", "pending_rows")

    def __init__(self, path: str, writer: Any) -> None:
        self.path = path
        self.writer = writer
        self.rows = 0                   # written to the file so far
        self.pending: deque[RecordBatch] = deque()
        self.pending_rows = 0


class _DatasetWriter:
    """The files of one write_dataset call: open writers per directory, counters, limits."""

    def __init__(self, base_dir: str, storage: Storage, format: FileFormat,
                 options: IpcFileWriteOptions, schema: T.Schema, basename_template: str,
                 max_open_files: int, max_rows_per_file: int, min_rows_per_group: int,
                 max_rows_per_group: int, file_visitor: Callable[[WrittenFile], Any] | None,
                 existing_data_behavior: str, create_dir: bool) -> None:
        self.base_dir = base_dir
        self.storage = storage
        self.format = format
        self.options = options
        self.schema = schema
        self.basename_template = basename_template
        self.max_open_files = max_open_files
        self.max_rows_per_file = max_rows_per_file
        self.min_rows_per_group = min_rows_per_group
        self.max_rows_per_group = max_rows_per_group
        self.file_visitor = file_visitor
        self.behavior = existing_data_behavior
        self.create_dir = create_dir
        self.open: OrderedDict[tuple[str, str], _OpenFile] = OrderedDict()
        self.counters: dict[tuple[str, str], int] = {}
        self.touched: set[str] = set()

    # -- paths ----------------------------------------------------------------------------------
    def _join(self, *parts: str) -> str:
        parts = tuple(p for p in parts if p)
        if self.storage.kind == "local":
            return os.path.join(*parts)
        return "/".join(p.strip("/") if i else p.rstrip("/") for i, p in enumerate(parts))

    def _prepare_dir(self, directory: str) -> None:
        if directory in self.touched:
            return
        self.touched.add(directory)
        kind, fs = self.storage
        if self.behavior == "delete_matching" and directory != self.base_dir:
            if kind == "local":
                if os.path.isdir(directory):
                    shutil.rmtree(directory)
            elif kind == "fsspec":
                if fs.exists(directory):
                    fs.rm(directory, recursive=True)
            else:
                fs.delete_dir_contents(directory, missing_dir_ok=True)
        if kind == "local":
            os.makedirs(directory, exist_ok=True)
        elif kind == "fsspec":
            fs.makedirs(directory, exist_ok=True)
        else:
            fs.create_dir(directory, recursive=True)

    # -- writing --------------------------------------------------------------------------------
    def _open_file(self, key: tuple[str, str]) -> _OpenFile:
        directory, prefix = key
        dir_path = self._join(self.base_dir, directory) if directory else self.base_dir
        if self.create_dir or directory:
            self._prepare_dir(dir_path)
        i = self.counters.get(key, 0)
        self.counters[key] = i + 1
        path = self._join(dir_path, prefix + self.basename_template.format(i=i))
        while len(self.open) >= self.max_open_files:
            self._close(next(iter(self.open)))
        fs = self.storage.filesystem
        wo = self.options.write_options
        writer: Any
        if self.format.is_stream:
            writer = RecordBatchStreamWriter(path, self.schema, options=wo,
                                             statistics=self.options.statistics, filesystem=fs)
        else:
            writer = RecordBatchFileWriter(path, self.schema, options=wo,
                                           statistics=self.options.statistics, filesystem=fs)
        handle = _OpenFile(path, writer)
        self.open[key] = handle
        return handle

    def _flush(self, handle: _OpenFile, final: bool = False) -> None:
        """Write the pending rows as Arrow C++'s dataset writer does: while at least
        min_rows_per_group rows wait (any, when the file is `final`), one record batch of the
        first max_rows_per_group of them, made of the pending batches (the last one split where
        the group ends). Fewer rows than the minimum wait for the next batch or the close."""
        pending, limit = handle.pending, self.max_rows_per_group
        floor = 1 if final else max(1, self.min_rows_per_group)
        while handle.pending_rows >= floor:
            group: list[RecordBatch] = []
            rows = 0
            while pending and rows < limit:
                b = pending[0]
                if b.num_rows <= limit - rows:
                    group.append(pending.popleft())
                    rows += b.num_rows
                else:
                    group.append(b.slice(0, limit - rows))
                    pending[0] = b.slice(limit - rows)
                    rows = limit
            handle.pending_rows -= rows
            handle.writer.write_batch(group[0] if len(group) == 1 else Table.from_batches(
                group, self.schema).combine_chunks().to_batches()[0])
        if final:
            pending.clear()

    def _close(self, key: tuple[str, str]) -> None:
        handle = self.open.pop(key)
        self._flush(handle, final=True)
        handle.writer.close()
        if self.file_visitor is not None:
            self.file_visitor(WrittenFile(handle.path, None, self.storage.size(handle.path)))

    def write(self, key: tuple[str, str], batch: RecordBatch) -> None:
        offset = 0
        while offset < batch.num_rows:
            handle = self.open.get(key)
            if handle is None:
                handle = self._open_file(key)
            else:
                self.open.move_to_end(key)
            room = batch.num_rows - offset
            if self.max_rows_per_file:
                room = min(room, self.max_rows_per_file - handle.rows)
            part = batch.slice(offset, room) if (offset or room < batch.num_rows) else batch
            offset += room
            handle.rows += room
            handle.pending.append(part)
            handle.pending_rows += room
            if handle.pending_rows >= max(1, self.min_rows_per_group):
                self._flush(handle)
            if self.max_rows_per_file and handle.rows >= self.max_rows_per_file:
                self._close(key)

    def close(self) -> None:
        for key in list(self.open):
            self._close(key)

    def abort(self, error: BaseException) -> None:
        """Give up every open file: their temporary files go, no final name appears."""
        for handle in self.open.values():
            try:
                handle.writer.__exit__(type(error), error, None)
            except Exception:
                pass
        self.open.clear()


def _value_codes(col: Array) -> tuple[np.ndarray[Any, Any], int]:
    """(code per row, number of codes): 0 for null, 1.. for the distinct values (numpy sorts
    them; no Python object per value unless the column holds strings)."""
    validity = col.is_valid()
    assert isinstance(validity, Array)
    valid = np.asarray(validity.to_numpy(zero_copy_only=False), dtype=np.bool_)
    if isinstance(col.type, T.DictionaryType):
        indices = col.indices  # type: ignore[attr-defined]
        idx = np.asarray(indices.fill_null(0).to_numpy(zero_copy_only=False), dtype=np.int64)
        card = len(col.dictionary) + 1  # type: ignore[attr-defined]
        return np.where(valid, idx + 1, 0), card
    values = _fixed_width_values(col)
    if values is None:
        values = np.asarray(col.to_numpy(zero_copy_only=False))
    if not valid.all():
        values = values.copy()
        values[~valid] = values[valid][0] if valid.any() else values[0]
        if values.dtype == object and not valid.any():
            values[:] = ""
    inverse = _distinct_codes(values)
    return np.where(valid, inverse + 1, 0), int(inverse.max(initial=-1)) + 2


def _distinct_codes(values: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
    """0.. for each distinct value, per row. Data written partition by partition comes in long
    runs of one value: then only the runs' first values are sorted."""
    n = len(values)
    if n > 1:
        change = np.flatnonzero(values[1:] != values[:-1]) + 1
        if len(change) < n // 8:
            starts = np.concatenate(([0], change))
            _, run_codes = np.unique(values[starts], return_inverse=True)
            lengths = np.diff(np.concatenate((starts, [n])))
            return np.repeat(run_codes.reshape(-1).astype(np.int64), lengths)
    _, inverse = np.unique(values, return_inverse=True)
    return inverse.reshape(-1).astype(np.int64)


_SHORT = 32     # longest value a string partition column is grouped by as fixed-width bytes


def _fixed_width_values(col: Array) -> np.ndarray[Any, Any] | None:
    """A string or binary column as numpy values compared in C, no Python object per value:
    up to 7 bytes, one uint64 per value (the bytes and the length); up to _SHORT bytes, fixed-
    width byte strings with the length appended (so values differing only by trailing NULs
    stay apart). None for other columns and for longer values."""
    t = col.type
    large = t in (T.large_string(), T.large_binary())
    if not (large or t in (T.string(), T.binary())):
        return None
    n = len(col)
    bufs = col.buffers()
    offsets = np.frombuffer(memoryview(bufs[1]),  # type: ignore[arg-type]
                            dtype=np.int64 if large else np.int32)[
        col.offset:col.offset + n + 1].astype(np.int64)
    lengths = np.diff(offsets)
    width = int(lengths.max(initial=0))
    if width > _SHORT:
        return None
    cells = 8 if width <= 7 else width + 1
    matrix = np.zeros((n, cells), dtype=np.uint8)
    if width:
        data = np.frombuffer(memoryview(bufs[2]), dtype=np.uint8)  # type: ignore[arg-type]
        columns = np.arange(width)
        inside = columns[None, :] < lengths[:, None]
        positions = np.minimum(offsets[:-1, None] + columns[None, :], max(len(data) - 1, 0))
        matrix[:, :width] = np.where(inside, data[positions] if len(data) else 0, 0)
    matrix[:, cells - 1] = lengths.astype(np.uint8)
    if cells == 8:
        return matrix.view(np.uint64).reshape(n)
    return matrix.view(f"S{cells}").reshape(n)   # the length byte ends every value


def _group_rows(batch: RecordBatch, names: list[str]
                ) -> list[tuple[list[Any], np.ndarray[Any, Any]]]:
    """(partition values, row indices) of each distinct combination of the `names` columns'
    values in `batch`, in order of first appearance."""
    n = batch.num_rows
    codes = np.zeros(n, dtype=np.int64)
    for name in names:
        col_codes, card = _value_codes(batch.column(name))
        codes = codes * card + col_codes
    _, first, inverse = np.unique(codes, return_index=True, return_inverse=True)
    order = np.argsort(inverse, kind="stable")
    counts = np.bincount(inverse, minlength=len(first))
    bounds = np.concatenate(([0], np.cumsum(counts)))
    groups = []
    for g in np.argsort(first, kind="stable"):
        rows = order[bounds[g]:bounds[g + 1]]
        row0 = int(rows[0])
        values = [batch.column(name).slice(row0, 1).to_pylist()[0] for name in names]
        groups.append((values, rows))
    return groups


def write_dataset(data: Any, base_dir: str | os.PathLike[str], *,
                  basename_template: str | None = None, format: Any = None,
                  partitioning: Any = None, partitioning_flavor: str | None = None,
                  schema: T.Schema | None = None, filesystem: Any = None,
                  file_options: IpcFileWriteOptions | None = None, use_threads: bool = True,
                  preserve_order: bool = False, max_partitions: int | None = None,
                  max_open_files: int | None = None, max_rows_per_file: int | None = None,
                  min_rows_per_group: int | None = None, max_rows_per_group: int | None = None,
                  file_visitor: Callable[[WrittenFile], Any] | None = None,
                  existing_data_behavior: str = "error", create_dir: bool = True) -> None:
    """Write `data` (a Table, RecordBatch, list of them, RecordBatchReader, Dataset, Scanner or
    an object with __arrow_c_stream__) as IPC files under `base_dir` (pyarrow's
    write_dataset). format: "ipc"/"arrow"/"feather" (default "ipc") or "stream".
    Defaults: max_partitions 1024, max_open_files 1024, max_rows_per_file 0 (no limit),
    min_rows_per_group 0, max_rows_per_group 1048576."""
    fmt = as_format(format, IpcFileFormat)
    if file_options is None:
        file_options = fmt.make_write_options()
    elif not isinstance(file_options, IpcFileWriteOptions):
        raise TypeError(f"file_options must come from the format's make_write_options(), not "
                        f"{type(file_options).__name__}")
    if existing_data_behavior not in _BEHAVIORS:
        raise ValueError(f"existing_data_behavior must be one of {', '.join(_BEHAVIORS)}; got "
                         f"{existing_data_behavior!r}")
    max_partitions = 1024 if max_partitions is None else int(max_partitions)
    max_open_files = 1024 if max_open_files is None else int(max_open_files)
    max_rows_per_file = 0 if max_rows_per_file is None else int(max_rows_per_file)
    min_rows_per_group = 0 if min_rows_per_group is None else int(min_rows_per_group)
    max_rows_per_group = 1024 * 1024 if max_rows_per_group is None else int(max_rows_per_group)
    if max_rows_per_group <= 0:
        raise ArrowInvalid("max_rows_per_group must be a positive number")
    if max_partitions <= 0 or max_open_files <= 0:
        raise ValueError("max_partitions and max_open_files must be positive")
    if max_rows_per_file < 0 or min_rows_per_group < 0:
        raise ValueError("max_rows_per_file and min_rows_per_group must not be negative")
    if min_rows_per_group > max_rows_per_group:
        raise ArrowInvalid("min_rows_per_group must be less than or equal to max_rows_per_group")
    # as pyarrow: the default group size (1048576 rows) too is refused above a file's limit
    if max_rows_per_file and max_rows_per_group > max_rows_per_file:
        raise ArrowInvalid("max_rows_per_group must be less than or equal to max_rows_per_file")
    if basename_template is None:
        basename_template = f"part-{{i}}.{fmt.default_extname}"
    elif "{i}" not in basename_template:
        raise ArrowInvalid("basename_template did not contain '{i}'")

    if schema is not None:
        schema = as_schema(schema)
    data_schema, batches = _batches_of(data, schema)
    part = _resolve_partitioning(partitioning, partitioning_flavor, data_schema)
    part_names = [] if part is None else list(part.schema.names)
    for name in part_names:
        if name not in data_schema.names:
            raise KeyError(f"Column {name} does not exist in schema")
    kept = [i for i, f in enumerate(data_schema) if f.name not in part_names]
    file_schema = T.schema([data_schema.field(i) for i in kept], data_schema.metadata)

    filesystem, base_dir = filesystem_argument(filesystem, base_dir)
    storage, base = storage_of(base_dir, filesystem)
    _check_existing(storage, base, existing_data_behavior)
    writer = _DatasetWriter(base, storage, fmt, file_options, file_schema, basename_template,
                            max_open_files, max_rows_per_file, min_rows_per_group,
                            max_rows_per_group, file_visitor, existing_data_behavior, create_dir)
    try:
        for batch in batches:
            if batch.num_rows == 0:
                continue
            if part is None:
                writer.write(("", ""), batch)
                continue
            groups = _group_rows(batch, part_names)
            if len(groups) > max_partitions:
                raise ArrowInvalid(f"Fragment would be written into {len(groups)} partitions. "
                                   f"This exceeds the maximum of {max_partitions}")
            body = batch.select(kept)
            for values, rows in groups:
                key = part.format_values(values)
                sub = body if len(rows) == batch.num_rows else body.take(rows)
                writer.write(key, RecordBatch(file_schema, [c.data for c in sub.columns],
                                              sub.num_rows))
        writer.close()
    except BaseException as e:
        writer.abort(e)
        raise


def _check_existing(storage: Storage, base: str, behavior: str) -> None:
    kind, fs = storage
    if behavior != "error":
        return
    if kind == "local":
        nonempty = os.path.isdir(base) and bool(os.listdir(base))
    elif kind == "fsspec":
        nonempty = bool(fs.exists(base) and fs.isdir(base) and fs.ls(base))
    else:
        import pyarrow.fs as pafs
        infos = fs.get_file_info(pafs.FileSelector(base, allow_not_found=True))
        nonempty = bool(infos)
    if nonempty:
        raise ArrowInvalid(f"Could not write to {base} as the directory is not empty and "
                           f"existing_data_behavior is to error")

