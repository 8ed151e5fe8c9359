"""pyarrow.dataset on IPC/Feather files, served by arrowipc.dataset with pyarrow objects.

`dataset(source, format="ipc"|"arrow"|"feather")` lets pyarrow discover the files (so the schema,
the fragments, their partition expressions and `partitioning` are pyarrow's own) and hands back a
`ServedFileSystemDataset`: a Python subclass of pyarrow's `FileSystemDataset` built over those
fragments, so it is a real pyarrow dataset that every pyarrow call takes (`ds.write_dataset`,
`Scanner.from_dataset`, `.filter()`, `.get_fragments()`, DuckDB...). Only its scan entry points
(`to_table`, `to_batches`, `head`, `count_rows`) are answered by arrowipc.dataset, opened once
over the same arguments; results cross through the C data interface. A scan arrowipc cannot
serve (an option pyarrow must apply, a filter or projection it cannot convert, a schema or file
list that differs from pyarrow's) runs pyarrow's own method, and the report says why.

`write_dataset(..., format="ipc"|"arrow"|"feather")` of pyarrow tables and batches to a local
directory is written by arrowipc.dataset.write_dataset.
"""
from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from typing import Any

import pyarrow as pa
import pyarrow.dataset as pa_ds
import pyarrow.fs as pa_fs

from .. import errors as ai_errors
from .record import RECORD, passthrough
from .served import Unservable, pyarrow_error

__all__ = ["DATASET_NAMES", "ServedFileSystemDataset", "build_dataset_patches"]

DATASET_NAMES = ("dataset", "write_dataset")
SERVED_FORMATS = ("ipc", "arrow", "feather")


def _format_name(format: Any) -> str:
    if isinstance(format, str) and format in SERVED_FORMATS:
        return format
    # pyarrow's format objects carry no read option; FeatherFileFormat is an IpcFileFormat
    if isinstance(format, pa_ds.FeatherFileFormat):
        return "feather"
    if isinstance(format, pa_ds.IpcFileFormat):
        return "ipc"
    raise Unservable(f"format {format!r}" if isinstance(format, str) or format is None
                     else f"a format of type {type(format).__name__}")


def _local_filesystem(filesystem: Any) -> None:
    if filesystem is not None and not isinstance(filesystem, pa_fs.LocalFileSystem):
        raise Unservable(f"a filesystem of type {type(filesystem).__name__}")


def _local_path(path: Any) -> str:
    if isinstance(path, os.PathLike):
        path = os.fspath(path)
    if not isinstance(path, str):
        raise Unservable(f"a source of type {type(path).__name__}")
    if "://" in path or path.lower().startswith("file:"):
        raise Unservable("a URL string")
    return path


class ServedFileSystemDataset(pa_ds.FileSystemDataset):  # type: ignore[misc]
    """pyarrow's FileSystemDataset whose scans arrowipc.dataset answers (see the module doc)."""

    # set by _serve_dataset right after construction
    _arrowipc_args: dict[str, Any]
    _arrowipc_pyarrow: Any
    _arrowipc_opened: Any

    @property
    def partitioning(self) -> Any:
        # pyarrow's own dataset knows the partitioning it discovered; a rebuilt one does not
        found = getattr(self, "_arrowipc_pyarrow", None)
        return super().partitioning if found is None else found.partitioning

    def _ours(self, entry: str) -> Any:
        """arrowipc's dataset over the same files, or Unservable."""
        if getattr(self, "_arrowipc_args", None) is None:
            # pyarrow makes `.filter()`, `.replace_schema()` and unpickled copies of this class
            # itself, without what _serve_dataset sets: they carry a filter or schema of their own
            raise Unservable("a dataset pyarrow derived (filter, replace_schema, pickle)")
        if self._arrowipc_opened is None:
            from .. import dataset as ai_dataset
            args = dict(self._arrowipc_args)
            args["schema"] = self.schema
            try:
                ours: Any = ai_dataset.dataset(**args)
            except ai_errors.ArrowException as exc:
                raise Unservable(f"arrowipc refused the dataset ({type(exc).__name__})") from exc
            if sorted(ours.files) != sorted(self.files):
                raise Unservable("arrowipc found other files than pyarrow")
            self._arrowipc_opened = ours
        return self._arrowipc_opened

    def _scan_args(self, columns: Any, filter: Any, kwargs: dict[str, Any]) -> dict[str, Any]:
        for name, value in kwargs.items():
            if name == "use_threads":
                continue
            if name == "batch_size" and value is None:
                continue
            if value is not None:
                raise Unservable(f"the scan option {name!r}")
        args: dict[str, Any] = {"columns": None}
        if isinstance(columns, dict):
            if not all(isinstance(k, str) and isinstance(v, pa_ds.Expression)
                       for k, v in columns.items()):
                raise Unservable("columns as a dict other than names to expressions")
            args["columns"] = {k: _converted(v, "a column expression")
                               for k, v in columns.items()}
        elif columns is not None:
            if not (isinstance(columns, (list, tuple))
                    and all(isinstance(c, str) for c in columns)):
                raise Unservable("columns other than a list of names or a dict of expressions")
            if any(c not in self.schema.names for c in columns):
                raise Unservable("a column absent from the schema (pyarrow raises)")
            args["columns"] = list(columns)
        if filter is not None:
            if not isinstance(filter, pa_ds.Expression):
                raise Unservable(f"a filter of type {type(filter).__name__}")
            args["filter"] = _converted(filter, "a filter")
        return args

    def _expected_schema(self, columns: Any) -> Any:
        if columns is None:
            return self.schema
        if isinstance(columns, dict):
            # the types pyarrow's projection gives: its own scan of no rows of this schema
            try:
                with passthrough():
                    return pa_ds.InMemoryDataset(self.schema.empty_table()).to_table(
                        columns=columns).schema
            except (pa.ArrowException, ValueError, TypeError) as exc:
                raise Unservable(f"a projection pyarrow refuses ({type(exc).__name__})") \
                    from exc
        return pa.schema([self.schema.field(c) for c in columns])

    def _serve(self, entry: str, run: Callable[[Any, dict[str, Any]], Any],
               fall_back: Callable[[], Any], columns: Any, filter: Any,
               kwargs: dict[str, Any]) -> Any:
        entry = f"dataset.FileSystemDataset.{entry}"
        try:
            ours = self._ours(entry)
            args = self._scan_args(columns, filter, kwargs)
            result = run(ours, args)
        except Unservable as why:
            RECORD.fall_back(entry, str(why))
            with passthrough():
                return fall_back()
        except ai_errors.ArrowException as exc:
            RECORD.fall_back(entry, f"arrowipc refused the scan ({type(exc).__name__}); "
                                    "pyarrow's answer is kept")
            with passthrough():
                return fall_back()
        RECORD.serve(entry)
        return result

    def _checked(self, table: Any, columns: Any) -> Any:
        if not table.schema.equals(self._expected_schema(columns), check_metadata=False):
            raise Unservable("arrowipc's schema differs from pyarrow's")
        return table

    def to_table(self, columns: Any = None, filter: Any = None, **kwargs: Any) -> Any:
        def run(ours: Any, args: dict[str, Any]) -> Any:
            return self._checked(pa.table(ours.to_table(**args)), columns)
        return self._serve("to_table", run,
                           lambda: super(ServedFileSystemDataset, self).to_table(
                               columns=columns, filter=filter, **kwargs),
                           columns, filter, kwargs)

    def to_batches(self, columns: Any = None, filter: Any = None,
                   **kwargs: Any) -> Iterator[Any]:
        def run(ours: Any, args: dict[str, Any]) -> Any:
            reader = pa.RecordBatchReader.from_stream(ours.to_reader(**args))
            if not reader.schema.equals(self._expected_schema(columns), check_metadata=False):
                raise Unservable("arrowipc's schema differs from pyarrow's")
            return iter(reader)
        result: Iterator[Any] = self._serve(
            "to_batches", run,
            lambda: super(ServedFileSystemDataset, self).to_batches(
                columns=columns, filter=filter, **kwargs),
            columns, filter, kwargs)
        return result

    def head(self, num_rows: int, columns: Any = None, filter: Any = None,
             **kwargs: Any) -> Any:
        def run(ours: Any, args: dict[str, Any]) -> Any:
            return self._checked(pa.table(ours.head(num_rows, **args)), columns)
        return self._serve("head", run,
                           lambda: super(ServedFileSystemDataset, self).head(
                               num_rows, columns=columns, filter=filter, **kwargs),
                           columns, filter, kwargs)

    def count_rows(self, filter: Any = None, **kwargs: Any) -> int:
        def run(ours: Any, args: dict[str, Any]) -> Any:
            return int(ours.count_rows(filter=args.get("filter")))
        result: int = self._serve("count_rows", run,
                                  lambda: super(ServedFileSystemDataset, self).count_rows(
                                      filter=filter, **kwargs),
                                  None, filter, kwargs)
        return result


def _converted(expression: Any, what: str) -> Any:
    """A pyarrow Expression as arrowipc's (Unservable when arrowipc cannot convert it)."""
    from ..expression import to_expression
    try:
        return to_expression(expression)
    except (ai_errors.ArrowException, ValueError, TypeError) as exc:
        raise Unservable(f"{what} arrowipc cannot convert ({type(exc).__name__})") from exc


def _serve_dataset(original: Callable[..., Any], source: Any, schema: Any, format: Any,
                   filesystem: Any, partitioning: Any, partition_base_dir: Any,
                   exclude_invalid_files: Any, ignore_prefixes: Any) -> Any:
    """Unservable before pyarrow runs, else the served dataset over pyarrow's discovery."""
    fmt = _format_name(format)
    _local_filesystem(filesystem)
    if isinstance(source, (list, tuple)):
        if not source:
            raise Unservable("an empty source list")
        paths: Any = [_local_path(p) for p in source]
    else:
        paths = _local_path(source)
    if schema is not None and not isinstance(schema, pa.Schema):
        raise Unservable(f"a schema of type {type(schema).__name__}")
    if partitioning is not None and not isinstance(
            partitioning, (str, list, pa_ds.Partitioning, pa_ds.PartitioningFactory)):
        raise Unservable(f"a partitioning of type {type(partitioning).__name__}")
    with passthrough():
        found = original(source, schema=schema, format=format, filesystem=filesystem,
                         partitioning=partitioning, partition_base_dir=partition_base_dir,
                         exclude_invalid_files=exclude_invalid_files,
                         ignore_prefixes=ignore_prefixes)
    if type(found) is not pa_ds.FileSystemDataset:
        return found
    served = ServedFileSystemDataset(list(found.get_fragments()), found.schema, found.format,
                                     found.filesystem, found.partition_expression)
    served._arrowipc_pyarrow = found
    served._arrowipc_opened = None
    served._arrowipc_args = {
        "source": paths, "format": fmt, "partitioning": partitioning,
        "partition_base_dir": partition_base_dir,
        "exclude_invalid_files": bool(exclude_invalid_files),
        "ignore_prefixes": ignore_prefixes}
    return served


def _written_data(data: Any) -> Any:
    if isinstance(data, (pa.Table, pa.RecordBatch)):
        return data
    if isinstance(data, (list, tuple)) and data and all(
            isinstance(d, (pa.Table, pa.RecordBatch)) for d in data):
        # arrowipc takes one stream: pyarrow's concatenation of the pieces, zero-copy
        if any(d.schema != data[0].schema for d in data):
            raise Unservable("pieces of differing schemas (pyarrow raises)")
        return pa.Table.from_batches([b for d in data for b in (
            d.to_batches() if isinstance(d, pa.Table) else [d])], schema=data[0].schema)
    raise Unservable(f"data of type {type(data).__name__}")


def _check_written_partitioning(partitioning: Any, schema: Any) -> None:
    """Unservable unless a pyarrow Partitioning writes as arrowipc's of its flavor and schema
    does: the default segment encoding and null fallback, its fields in the data with their
    types (pyarrow casts or raises otherwise)."""
    kind = type(partitioning).__name__
    if kind not in ("HivePartitioning", "DirectoryPartitioning", "FilenamePartitioning"):
        raise Unservable(f"a partitioning of type {kind}")
    options = tuple(partitioning.__reduce__()[1])[2:]     # (null fallback,) segment encoding
    default = ("__HIVE_DEFAULT_PARTITION__", "uri") if kind == "HivePartitioning" else ("uri",)
    if options != default:
        raise Unservable("a partitioning's null fallback or segment encoding")
    for field in partitioning.schema:
        i = schema.get_field_index(field.name)
        if i < 0 or not schema.field(i).type.equals(field.type):
            raise Unservable("a partition field absent from the data or of another type")


def _file_options(fmt: str, file_options: Any) -> Any:
    """arrowipc's write options of pyarrow's IpcFileWriteOptions (None: the format's default)."""
    if file_options is None:
        return None
    if not isinstance(file_options, pa_ds.IpcFileWriteOptions):
        raise Unservable(f"file_options of type {type(file_options).__name__}")
    if (_format_name(file_options.format) == "feather") != (fmt == "feather"):
        raise Unservable("file_options of another format (pyarrow raises)")
    from .. import dataset as ai_dataset
    from .served import _write_options
    options = ai_dataset.IpcFileFormat().make_write_options() if fmt != "feather" else \
        ai_dataset.FeatherFileFormat().make_write_options()
    options.write_options = _write_options(file_options.write_options)
    return options


def build_dataset_patches(originals: dict[str, Any]) -> dict[str, Any]:
    """{name: served replacement} for pyarrow.dataset's `dataset` and `write_dataset`."""
    original_dataset = originals["dataset"]
    original_write = originals["write_dataset"]

    def dataset(source: Any, schema: Any = None, format: Any = None, filesystem: Any = None,
                partitioning: Any = None, partition_base_dir: Any = None,
                exclude_invalid_files: Any = None, ignore_prefixes: Any = None) -> Any:
        try:
            result = _serve_dataset(original_dataset, source, schema, format, filesystem,
                                    partitioning, partition_base_dir, exclude_invalid_files,
                                    ignore_prefixes)
        except Unservable as why:
            RECORD.fall_back("dataset.dataset", str(why))
            with passthrough():
                return original_dataset(source, schema=schema, format=format,
                                        filesystem=filesystem, partitioning=partitioning,
                                        partition_base_dir=partition_base_dir,
                                        exclude_invalid_files=exclude_invalid_files,
                                        ignore_prefixes=ignore_prefixes)
        if isinstance(result, ServedFileSystemDataset):
            RECORD.serve("dataset.dataset")
        else:
            RECORD.fall_back("dataset.dataset", "not a file system dataset")
        return result

    dataset.__doc__ = original_dataset.__doc__
    dataset.__wrapped__ = original_dataset  # type: ignore[attr-defined]

    def write_dataset(data: Any, base_dir: Any, *, basename_template: Any = None,
                      format: Any = None, partitioning: Any = None,
                      partitioning_flavor: Any = None, schema: Any = None,
                      filesystem: Any = None, file_options: Any = None, use_threads: bool = True,
                      preserve_order: bool = False, max_partitions: Any = None,
                      max_open_files: Any = None, max_rows_per_file: Any = None,
                      min_rows_per_group: Any = None, max_rows_per_group: Any = None,
                      file_visitor: Any = None, existing_data_behavior: str = "error",
                      create_dir: bool = True) -> None:
        kwargs = dict(basename_template=basename_template, format=format,
                      partitioning=partitioning, partitioning_flavor=partitioning_flavor,
                      schema=schema, filesystem=filesystem, file_options=file_options,
                      use_threads=use_threads, preserve_order=preserve_order,
                      max_partitions=max_partitions, max_open_files=max_open_files,
                      max_rows_per_file=max_rows_per_file,
                      min_rows_per_group=min_rows_per_group,
                      max_rows_per_group=max_rows_per_group, file_visitor=file_visitor,
                      existing_data_behavior=existing_data_behavior, create_dir=create_dir)
        entry = "dataset.write_dataset"
        try:
            fmt = _format_name(format)
            _local_filesystem(filesystem)
            path = _local_path(base_dir)
            options = _file_options(fmt, file_options)
            if schema is not None:
                raise Unservable("schema was given")
            written = _written_data(data)
            if isinstance(partitioning, pa_ds.Partitioning):
                _check_written_partitioning(partitioning, written.schema)
            elif partitioning is not None:
                if not (isinstance(partitioning, (list, tuple))
                        and all(isinstance(p, str) for p in partitioning)):
                    raise Unservable("partitioning other than a list of field names or a "
                                     "pyarrow Partitioning")
                if partitioning_flavor not in (None, "hive"):
                    raise Unservable(f"partitioning_flavor {partitioning_flavor!r}")
                if any(p not in written.schema.names for p in partitioning):
                    raise Unservable("a partition field absent from the data (pyarrow raises)")
                partitioning = list(partitioning)
        except Unservable as why:
            RECORD.fall_back(entry, str(why))
            with passthrough():
                return original_write(data, base_dir, **kwargs)  # type: ignore[no-any-return]
        from .. import dataset as ai_dataset
        ours = dict(kwargs, format=fmt, file_options=options, partitioning=partitioning or None)
        if file_visitor is not None:
            # the visitor gets pyarrow's WrittenFile, as from pyarrow's writer
            ours["file_visitor"] = lambda written: file_visitor(
                pa_ds.WrittenFile(written.path, written.metadata, written.size))
        try:
            ai_dataset.write_dataset(written, path, **ours)
        except ai_errors.ArrowException as exc:
            raise pyarrow_error(exc) from exc
        RECORD.serve(entry)
        return None

    write_dataset.__doc__ = original_write.__doc__
    write_dataset.__wrapped__ = original_write  # type: ignore[attr-defined]
    return {"dataset": dataset, "write_dataset": write_dataset}
