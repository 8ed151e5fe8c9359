"""Datasets: FileSystemDataset (files found by discovery.py) and `dataset()`, pyarrow's names.

A dataset is a list of fragments, a schema and a partitioning; every read is a Scanner
(scanner.py). The schema is the first file's (pyarrow inspects one fragment), followed by the
partition fields; a file whose columns differ reads as that schema: a missing column as nulls,
another type cast to the dataset's (an error naming the file when the cast fails).
"""
from __future__ import annotations

import os
from collections.abc import Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

from .. import types as T
from ..errors import ArrowException, ArrowInvalid, ArrowTypeError
from ..table import RecordBatch, Table
from ..unify import unify_schemas, unify_types
from . import _exprs
from .discovery import FileSource, Storage, discover, filesystem_argument, storage_of
from .formats import FileFormat, as_format
from .fragments import FileFragment, Fragment, named_error, relative_to
from .layout import DEFAULT_IGNORE_PREFIXES
from .partitioning import (DirectoryPartitioning, Partitioning, PartitioningFactory, as_schema,
                           equality_values)
from .partitioning import partitioning as make_partitioning
from .scanner import Scanner

if TYPE_CHECKING:
    from ..batch_reader import RecordBatchReader
    from ..expression import Expression

__all__ = ["Dataset", "FileSystemDataset", "FileSystemDatasetFactory", "FileSystemFactoryOptions",
           "InMemoryDataset", "dataset"]


class Dataset:
    """The base of the datasets: a schema and fragments, read through Scanners."""

    _schema: T.Schema
    _filter: Expression | None = None
    _partition_fields: Sequence[str] = ()

    def __init__(self) -> None:
        raise TypeError(f"{type(self).__name__} is abstract: datasets come from dataset(), "
                        f"FileSystemDataset.from_paths() or InMemoryDataset(...)")

    @property
    def schema(self) -> T.Schema:
        """The dataset's schema: the files' columns, then the partition fields."""
        return self._schema

    @property
    def partition_expression(self) -> Expression:
        """The expression every row satisfies (true: the dataset as a whole has none)."""
        from ..expression import scalar
        return scalar(True)

    def _fragments(self) -> list[FileFragment]:
        raise NotImplementedError

    def _fragments_for(self, expr: Expression | None) -> list[FileFragment]:
        """The fragments a scan with filter `expr` starts from."""
        return self._fragments()

    def _partition_names(self) -> list[str]:
        return []

    def _combined(self, filter: Any) -> Expression | None:
        given = _exprs.as_expression(filter)
        if self._filter is None:
            return given
        return self._filter if given is None else self._filter & given

    def get_fragments(self, filter: Any = None) -> Iterator[Fragment]:
        """The fragments whose partition expression does not rule out `filter`. A filtered
        dataset (`dataset.filter(expr)`) has none to give: a ValueError, as pyarrow's."""
        self._check_unfiltered()
        expr = _exprs.as_expression(filter)
        fragments = self._fragments_for(expr)
        kept = _exprs.residuals(expr, [f.partition_values for f in fragments], self._schema)
        return iter([fragment for fragment, rest in zip(fragments, kept) if rest is not False])

    def _check_unfiltered(self) -> None:
        # pyarrow's rule: it would be unclear whether the filter applies to the fragments or
        # to the rows in them
        if self._filter is not None:
            raise ValueError("Retrieving fragments of a filtered or projected dataset is not "
                             "allowed. Remove the filtering.")

    def scanner(self, columns: Any = None, filter: Any = None, batch_size: int = 131072,
                batch_readahead: int = 16, fragment_readahead: int = 4,
                fragment_scan_options: Any = None, use_threads: bool = True,
                cache_metadata: bool = True, memory_pool: Any = None,
                target_bytes_readahead: int | None = None) -> Scanner:
        """A Scanner of this dataset (pyarrow's keywords; `target_bytes_readahead`, ours,
        bounds the bytes of the batches decoded ahead)."""
        expr = self._combined(filter)
        return Scanner(self._schema, self._fragments_for(expr), self._partition_names(),
                       columns=columns, filter=expr, batch_size=batch_size,
                       batch_readahead=batch_readahead, fragment_readahead=fragment_readahead,
                       use_threads=use_threads, cache_metadata=cache_metadata,
                       target_bytes_readahead=target_bytes_readahead)

    def to_table(self, columns: Any = None, filter: Any = None, **kwargs: Any) -> Table:
        """The dataset read as a Table (columns a list of names or a dict of name to
        expression; filter an expression)."""
        return self.scanner(columns, filter, **kwargs).to_table()

    def to_batches(self, columns: Any = None, filter: Any = None, **kwargs: Any
                   ) -> Iterator[RecordBatch]:
        """The dataset's batches, in order, read as they are consumed."""
        return self.scanner(columns, filter, **kwargs).to_batches()

    def to_reader(self, columns: Any = None, filter: Any = None, **kwargs: Any
                  ) -> RecordBatchReader:
        """The dataset as a RecordBatchReader."""
        return self.scanner(columns, filter, **kwargs).to_reader()

    def __arrow_c_stream__(self, requested_schema: object = None) -> object:
        """The dataset's rows as an Arrow C stream (the PyCapsule interface), scanned anew at
        each call: duckdb, polars and pyarrow read a dataset so (pyarrow's datasets are found
        by their class instead)."""
        return self.scanner().to_reader().__arrow_c_stream__(requested_schema)

    def head(self, num_rows: int, columns: Any = None, filter: Any = None,
             **kwargs: Any) -> Table:
        """The first `num_rows` rows."""
        return self.scanner(columns, filter, **kwargs).head(num_rows)

    def take(self, indices: Any, columns: Any = None, filter: Any = None,
             **kwargs: Any) -> Table:
        """The rows at `indices`."""
        return self.scanner(columns, filter, **kwargs).take(indices)

    def count_rows(self, filter: Any = None, **kwargs: Any) -> int:
        """Rows (passing `filter`), from footers and headers when the filter allows."""
        return self.scanner(None, filter, **kwargs).count_rows()

    def filter(self, expression: Any) -> Dataset:
        """This dataset with `expression` applied to every later read."""
        if expression is None:
            raise TypeError("Argument 'expression' must not be None")
        out = self._copy()
        out._filter = self._combined(expression)
        return out

    def replace_schema(self, schema: T.Schema) -> Dataset:
        """This dataset read as `schema`: its fields in any order, fewer, or more (read as
        nulls); a field keeping its name keeps its type (another is an ArrowTypeError, as
        pyarrow's replace_schema raises)."""
        schema = as_schema(schema)
        for new in schema:
            i = self._schema.get_field_index(new.name)
            old = self._schema.field(i) if i >= 0 else None
            if old is not None and not old.type.equals(new.type):
                raise ArrowTypeError(f"fields had matching names but differing types. From: "
                                     f"{old.name}: {old.type} To: {new.name}: {new.type}")
        return self._read_as(schema)

    def _read_as(self, schema: T.Schema) -> Dataset:
        """This dataset read as `schema`, whatever its types (UnionDataset's children: their
        columns are cast to the union's)."""
        out = self._copy()
        out._schema = schema
        return out

    def _copy(self) -> Dataset:
        out = object.__new__(type(self))
        out.__dict__.update(self.__dict__)
        return out

    def join(self, right_dataset: Any, keys: str | list[str],
             right_keys: str | list[str] | None = None, join_type: str = "left outer",
             left_suffix: str | None = None, right_suffix: str | None = None,
             coalesce_keys: bool = True, use_threads: bool = True) -> InMemoryDataset:
        """This dataset's rows (after its filter) joined with `right_dataset`'s (a dataset or a
        table) on the key columns: Table.join's rules, as pyarrow's Dataset.join."""
        return InMemoryDataset(self.to_table().join(
            _joined_table(right_dataset), keys, right_keys, join_type, left_suffix,
            right_suffix, coalesce_keys, use_threads))

    def join_asof(self, right_dataset: Any, on: str, by: str | list[str], tolerance: int,
                  right_on: str | None = None, right_by: str | list[str] | None = None
                  ) -> InMemoryDataset:
        """This dataset's rows each with the nearest row of `right_dataset` (a dataset or a
        table) within `tolerance` on `on`, of equal `by` columns: Table.join_asof's rules."""
        return InMemoryDataset(self.to_table().join_asof(
            _joined_table(right_dataset), on, by, tolerance, right_on, right_by))

    def sort_by(self, sorting: Any, **kwargs: Any) -> InMemoryDataset:
        """This dataset's rows (after its filter) sorted: `sorting` a column name (ascending)
        or a list of (name, "ascending" | "descending"[, "at_start" | "at_end"]);
        `null_placement=` places the nulls of every key. Equal rows keep their order."""
        from ..data.sorting import sort_keys
        unknown = sorted(set(kwargs) - {"null_placement"})
        if unknown:         # bad keywords and keys fail before the scan
            raise TypeError(f"sort_by() got an unexpected keyword argument '{unknown[0]}'")
        sort_keys(sorting, kwargs.get("null_placement"))
        return InMemoryDataset(self.to_table().sort_by(sorting, **kwargs).combine_chunks())


class FileSystemDataset(Dataset):
    """A dataset of files (pyarrow.dataset.FileSystemDataset)."""

    def __init__(self, fragments: Sequence[FileFragment], schema: T.Schema, format: FileFormat,
                 filesystem: Any = None, partitioning: Partitioning | None = None,
                 root_partition: Any = None) -> None:
        self._fragment_list = list(fragments)
        self._schema = _schema_argument("schema", schema)
        self._format = _format_argument("format", format)
        self._filesystem = filesystem
        self._partitioning = partitioning
        self._root_partition = _expression_argument("root_partition", root_partition)
        # the root partition's `field == value` terms: a filter they make false reads no file
        self._root_values = ({} if self._root_partition is None
                             else equality_values(self._root_partition))
        if partitioning is None:
            # the fields the fragments' partition expressions fix that the schema has (as
            # pyarrow fills them): a fragment whose expression does not fix one reads nulls
            names = [n for n in dict.fromkeys(k for f in self._fragment_list
                                              for k in f.partition_values)
                     if n in self._schema.names]
            for fragment in self._fragment_list:
                for name in names:
                    fragment.partition_values.setdefault(name, None)
            self._partition_fields = names

    @classmethod
    def from_paths(cls, paths: Iterable[Any], schema: T.Schema | None = None,
                   format: FileFormat | None = None, filesystem: Any = None,
                   partitions: Sequence[Any] | None = None, root_partition: Any = None
                   ) -> FileSystemDataset:
        """A dataset of the files `paths` (on `filesystem`; None: local paths), read as
        `format`, with `schema`, each file's partition expression the matching entry of
        `partitions`. Nothing is opened here: a missing file is found by the first scan.

        A partition expression's `field == value` (and `is_null(field)`) terms give the
        fragment's values of those fields: its rows carry them, and filters on them rule the
        file out unread; a partition field that a file's expression does not fix reads as
        nulls there."""
        schema = _schema_argument("schema", schema)
        format = _format_argument("format", format)
        root = _expression_argument("root_partition", root_partition)
        sources: list[Any] = []
        for path in paths:
            if not isinstance(path, (str, os.PathLike)):
                raise TypeError(f"cannot construct a FileSource from {path!r}: expected a path")
            sources.append(path)
        if partitions is None:
            expressions: list[Expression | None] = [None] * len(sources)
        else:
            expressions = [_expression_argument("partition_expression", e)
                           for e in partitions]
            if len(expressions) != len(sources):
                raise ValueError(f"The number of files resulting from paths_or_selector must "
                                 f"be equal to the number of partitions: {len(sources)} files, "
                                 f"{len(expressions)} partitions")
        storage: Storage | None = None
        located: list[str] = []
        for source in sources:
            one, path = storage_of(source, filesystem)
            if storage is not None and one.kind != storage.kind:
                raise ValueError("the paths of a dataset must all be on one filesystem")
            storage = one
            located.append(path)
        if storage is None:
            storage = Storage("local", filesystem)
        values = [{} if e is None else equality_values(e) for e in expressions]
        # the partition fields: those some file's expression fixes that the schema has
        names = [n for n in dict.fromkeys(k for v in values for k in v) if n in schema.names]
        fragments = []
        for i, (path, expr, given) in enumerate(zip(located, expressions, values)):
            fragment = FileFragment(path, format, storage, given, i, names)
            fragment.given_expression = expr
            fragments.append(fragment)
        dataset = cls(fragments, schema, format, filesystem, None, root)
        dataset._partition_fields = names
        return dataset

    @property
    def files(self) -> list[str]:
        """The files' paths, in the dataset's order."""
        return [f.path for f in self._fragment_list]

    @property
    def format(self) -> FileFormat:
        """The format the files are read as."""
        return self._format

    @property
    def filesystem(self) -> Any:
        """The filesystem the files are read through (None: local files)."""
        return self._filesystem

    @property
    def partitioning(self) -> Partitioning | None:
        """The partitioning found or given; dataset() without one gives a DirectoryPartitioning
        of no field, as pyarrow's discovery does (None: FileSystemDataset(...), from_paths)."""
        return self._partitioning

    def _fragments(self) -> list[FileFragment]:
        return self._fragment_list

    def _partition_names(self) -> list[str]:
        if self._partitioning is None:
            return list(self._partition_fields)
        return list(self._partitioning.schema.names)

    @property
    def partition_expression(self) -> Expression:
        """The expression every row satisfies (root_partition; true without one)."""
        if self._root_partition is None:
            return super().partition_expression
        return self._root_partition

    def _fragments_for(self, expr: Expression | None) -> list[FileFragment]:
        if self._root_values and _exprs.residual(expr, self._root_values) is False:
            return []
        return self._fragment_list

    def __repr__(self) -> str:
        return f"<arrowipc.dataset.FileSystemDataset files={len(self._fragment_list)}>"


class InMemoryDataset(Dataset):
    """Tables or batches in memory as a dataset (pyarrow.dataset.InMemoryDataset): what
    `dataset(table)` gives. Scans read the batches; nothing is pruned."""

    def __init__(self, source: Any, schema: T.Schema | None = None) -> None:
        from ..table import table as to_table
        schema = None if schema is None else as_schema(schema)
        if isinstance(source, (Table, RecordBatch)):
            items: list[Any] = [source]
        elif hasattr(source, "__arrow_c_stream__") and not isinstance(source, list):
            items = [to_table(source)]
        else:
            items = list(source)
            if not items and schema is None:
                raise ValueError("Must provide schema to construct in-memory dataset from an "
                                 "empty list")
        batches: list[RecordBatch] = []
        first: T.Schema | None = None
        for item in items:
            item = _arrowipc_data(item)     # pyarrow's tables and batches, through the C ABI
            if isinstance(item, Table):
                batches.extend(item.to_batches())
            elif isinstance(item, RecordBatch):
                batches.append(item)
            else:
                raise TypeError(f"Expected a list of tables or batches. The given list "
                                f"contains a {type(item).__name__}")
            first = first or item.schema
        sch = schema if schema is not None else first
        assert sch is not None
        for b in batches:
            if not b.schema.equals(sch):
                raise ArrowTypeError(f"Item has schema\n{b.schema}\nwhich does not match "
                                     f"expected schema\n{sch}")
        self._schema = sch
        self._batches = batches

    def _fragments(self) -> list[FileFragment]:
        return []

    def get_fragments(self, filter: Any = None) -> Iterator[Fragment]:
        """One fragment per record batch, in order; as pyarrow's, they have no partition
        expression, so `filter` rules none out."""
        from .memory import InMemoryFragment
        self._check_unfiltered()
        _exprs.as_expression(filter)
        return iter([InMemoryFragment(batch) for batch in self._batches])

    def scanner(self, columns: Any = None, filter: Any = None, batch_size: int = 131072,
                batch_readahead: int = 16, fragment_readahead: int = 4,
                fragment_scan_options: Any = None, use_threads: bool = True,
                cache_metadata: bool = True, memory_pool: Any = None,
                target_bytes_readahead: int | None = None) -> Scanner:
        from .memory import InMemoryFragment, MemoryScanner
        return MemoryScanner(self._schema, self._batches, columns=columns,
                             filter=self._combined(filter), batch_size=batch_size,
                             fragments=[InMemoryFragment(b) for b in self._batches])


class UnionDataset(Dataset):
    """Datasets read as one (pyarrow.dataset.UnionDataset): what `dataset([ds1, ds2])` gives.
    Each child is read as the union's schema (a column a child lacks reads as nulls), the
    children one after another, in order."""

    def __init__(self, schema: T.Schema, children: Iterable[Dataset]) -> None:
        self._schema = _schema_argument("schema", schema)
        self._children = [child._read_as(self._schema) for child in children]
        for child in self._children:
            if not isinstance(child, Dataset):
                raise TypeError(f"Expected a list of Datasets, got a {type(child).__name__}")

    @property
    def children(self) -> list[Dataset]:
        """The datasets, each read as the union's schema."""
        return list(self._children)

    def get_fragments(self, filter: Any = None) -> Iterator[Fragment]:
        """The children's fragments, in order, that `filter` does not rule out."""
        self._check_unfiltered()
        expr = _exprs.as_expression(filter)
        return (fragment for child in self._children for fragment in child.get_fragments(expr))

    def scanner(self, columns: Any = None, filter: Any = None, batch_size: int = 131072,
                batch_readahead: int = 16, fragment_readahead: int = 4,
                fragment_scan_options: Any = None, use_threads: bool = True,
                cache_metadata: bool = True, memory_pool: Any = None,
                target_bytes_readahead: int | None = None) -> Scanner:
        from .scanner import UnionScanner
        expr = self._combined(filter)
        children = [child.scanner(columns, expr, batch_size=batch_size,
                                  batch_readahead=batch_readahead,
                                  fragment_readahead=fragment_readahead,
                                  use_threads=use_threads, cache_metadata=cache_metadata,
                                  target_bytes_readahead=target_bytes_readahead)
                    for child in self._children]
        return UnionScanner(self._schema, children, columns=columns, filter=expr,
                            batch_size=batch_size, use_threads=use_threads)

    def _read_as(self, schema: T.Schema) -> Dataset:
        return UnionDataset(schema, self._children)

    def __repr__(self) -> str:
        return f"<arrowipc.dataset.UnionDataset children={len(self._children)}>"


def _union_of(children: list[Dataset], schema: Any, given: dict[str, Any]) -> UnionDataset:
    """dataset([ds1, ds2, ...]): pyarrow's rules for a list of datasets."""
    if any(v for v in given.values()):
        raise ValueError("When passing a list of Datasets, you cannot pass any additional "
                         "arguments")
    for child in children:
        if child._filter is not None:
            raise ValueError("Creating an UnionDataset from filtered or projected Datasets is "
                             "currently not supported. Union the unfiltered datasets and "
                             "apply the filter to the resulting union.")
    if schema is None:
        schema = unify_schemas([child.schema for child in children])
    return UnionDataset(schema, children)


def _schema_argument(name: str, obj: Any) -> T.Schema:
    """A Schema argument (pyarrow's converted); TypeError naming the argument otherwise."""
    if isinstance(obj, T.Schema):
        return obj
    if type(obj).__name__ == "Schema" and hasattr(obj, "__arrow_c_schema__"):
        return as_schema(obj)
    raise TypeError(f"Argument '{name}' has incorrect type (expected Schema, got "
                    f"{type(obj).__name__})")


def _format_argument(name: str, obj: Any) -> FileFormat:
    if isinstance(obj, FileFormat):
        return obj
    raise TypeError(f"Argument '{name}' has incorrect type (expected FileFormat, got "
                    f"{type(obj).__name__})")


_expression_argument = _exprs.expression_argument


def _partitioning_of(partitioning: Any, relative: list[str | None], base_dir: str | None
                     ) -> Partitioning | None:
    if partitioning is None:
        return None
    if isinstance(partitioning, str):
        if partitioning != "hive":
            raise ValueError(f"Expected Partitioning or PartitioningFactory, got "
                             f"'{partitioning}' (the only flavor name taken is 'hive')")
        partitioning = make_partitioning(flavor="hive")
    elif isinstance(partitioning, list):
        partitioning = make_partitioning(field_names=partitioning)
    elif not isinstance(partitioning, (Partitioning, PartitioningFactory)):
        kind = type(partitioning).__module__ + "." + type(partitioning).__name__
        if "pyarrow" in kind:
            partitioning = _from_pyarrow_partitioning(partitioning)
        else:
            raise ValueError(f"Expected Partitioning or PartitioningFactory, got "
                             f"{type(partitioning)}")
    if isinstance(partitioning, PartitioningFactory):
        return partitioning.finish([r for r in relative if r is not None])
    assert isinstance(partitioning, Partitioning)
    return partitioning


def _from_pyarrow_partitioning(obj: Any) -> Partitioning | PartitioningFactory:
    """A pyarrow Partitioning (or factory) as ours."""
    from ..table import table as to_table
    from .partitioning import (DirectoryPartitioning, FilenamePartitioning, HivePartitioning)
    name = type(obj).__name__
    schema = getattr(obj, "schema", None)
    if schema is None:
        flavor = getattr(obj, "type_name", "")
        # a factory shows its options only through pickling: (constructor, its arguments)
        try:
            args = tuple(obj.__reduce__()[1])
        except Exception:
            args = ()
        args = tuple(as_schema(a) if hasattr(a, "names") and hasattr(a, "types") else a
                     for a in args)
        if flavor == "hive" and len(args) == 5:
            return HivePartitioning.discover(*args)
        if flavor == "directory" and len(args) == 5:
            return DirectoryPartitioning.discover(*args)
        if flavor == "filename" and len(args) == 4:
            return FilenamePartitioning.discover(*args)
        if flavor == "hive":
            return HivePartitioning.discover()
        raise ValueError(f"Expected Partitioning or PartitioningFactory, got {type(obj)}: "
                         f"give arrowipc.dataset's own partitioning factory")
    ours: T.Schema = to_table(obj.schema.empty_table()).schema
    classes: dict[str, type[Partitioning]] = {
        "HivePartitioning": HivePartitioning, "DirectoryPartitioning": DirectoryPartitioning,
        "FilenamePartitioning": FilenamePartitioning}
    if name not in classes:
        raise ValueError(f"Expected Partitioning or PartitioningFactory, got {type(obj)}")
    from ..array import array
    dictionaries = [None if d is None else array(d) for d in getattr(obj, "dictionaries", [])]
    return classes[name](ours, dictionaries or None)


def _is_data(obj: Any) -> bool:
    """A table or batch, arrowipc's or another library's (pyarrow's) by the C data interface."""
    return isinstance(obj, (Table, RecordBatch)) or (
        not isinstance(obj, (str, os.PathLike, Dataset))
        and (hasattr(obj, "__arrow_c_array__") or hasattr(obj, "__arrow_c_stream__")))


def _arrowipc_data(obj: Any) -> Any:
    """`obj` as an arrowipc Table or RecordBatch when it is another library's (else as is)."""
    if isinstance(obj, (Table, RecordBatch)):
        return obj
    from ..table import record_batch, table
    if hasattr(obj, "__arrow_c_array__"):
        return record_batch(obj)
    if hasattr(obj, "__arrow_c_stream__"):
        return table(obj)
    return obj


def _joined_table(obj: Any) -> Any:
    """The right input of a dataset join: a dataset's table (after its filter), or data."""
    if isinstance(obj, Dataset):
        return obj.to_table()
    if _is_data(obj):
        return _arrowipc_data(obj)
    raise TypeError(f"Expected a dataset or a table to join, got {type(obj).__name__}")


def _check_source_list(items: list[Any]) -> None:
    kinds = {type(x).__name__ for x in items if not isinstance(x, (str, os.PathLike))}
    if kinds:
        raise TypeError(f"Expected a list of path-like or dataset objects, or a list of "
                        f"batches or tables. The given list contains the following types: "
                        f"{', '.join(sorted(kinds))}")


def dataset(source: Any, schema: T.Schema | None = None, format: Any = None,
            filesystem: Any = None, partitioning: Any = None,
            partition_base_dir: str | None = None, exclude_invalid_files: bool = False,
            ignore_prefixes: Iterable[str] | None = None) -> Dataset:
    """A dataset of IPC files (pyarrow.dataset.dataset).

    source: a file, a directory (walked recursively, Spark and Hive side files skipped), a glob,
    a URL, or a list of them; a Table, RecordBatch, list of them or a stream-exporting object
    gives an InMemoryDataset. format: "ipc"/"arrow"/"feather" (the file format), "stream", a
    FileFormat, or None to sniff each file. partitioning: "hive", a list of field names
    (directory partitioning), a Partitioning or a PartitioningFactory.
    """
    prefixes: Iterable[str] | None = (DEFAULT_IGNORE_PREFIXES if ignore_prefixes is None
                                      else ignore_prefixes)
    if isinstance(source, (Table, RecordBatch)):
        return InMemoryDataset(source, schema)
    if isinstance(source, (list, tuple)):
        items = list(source)
        if items and all(isinstance(x, Dataset) for x in items):
            return _union_of(items, schema, {
                "format": format, "filesystem": filesystem, "partitioning": partitioning,
                "partition_base_dir": partition_base_dir,
                "exclude_invalid_files": exclude_invalid_files,
                "ignore_prefixes": ignore_prefixes})
        if items and all(_is_data(x) for x in items):
            return InMemoryDataset(items, schema)
        _check_source_list(items)
    elif not isinstance(source, (str, os.PathLike)):
        if hasattr(source, "__arrow_c_stream__"):
            return InMemoryDataset(source, schema)
        raise TypeError(f"Expected a path-like, list of path-likes or a list of Datasets "
                        f"instead of the given type: {type(source).__name__}")
    if schema is not None:
        schema = as_schema(schema)
    fmt = as_format(format)
    if isinstance(filesystem, str) and partition_base_dir is not None:
        partition_base_dir = filesystem_argument(filesystem, partition_base_dir)[1]
    filesystem, source = filesystem_argument(filesystem, source)
    if isinstance(source, str) and source.lower().startswith("file:") \
            and not source.lower().startswith("file://"):
        raise ArrowInvalid(f"URI '{source}' is invalid: file URI cannot be relative")
    storage, found = discover(source, filesystem, prefixes)
    if partition_base_dir is not None:
        base = partition_base_dir.rstrip("/")
        found = [FileSource(f.path, base) for f in found]
    relative = [relative_to(f.path, f.base_dir) for f in found]
    part = _partitioning_of(partitioning, relative, None)
    fragments = []
    for i, (source_file, rel) in enumerate(zip(found, relative)):
        values = (part.values_of(rel, f"directory '{_dirname(source_file.path)}'")
                  if (part is not None and rel is not None) else {})
        fragments.append(FileFragment(source_file.path, fmt, storage, values, i,
                                      part.schema.names if part is not None else ()))
    if part is not None:
        dictionaries = {f.name: d for f, d in zip(part.schema, part.dictionaries)
                        if d is not None and isinstance(f.type, T.DictionaryType)}
        types = {f.name: f.type for f in part.schema}
        for fragment in fragments:
            fragment.partition_dictionaries = dictionaries
            fragment.partition_types = types
    if exclude_invalid_files:
        fragments = [f for f in fragments if _is_valid(f)]
        for i, f in enumerate(fragments):
            f.index = i
    if schema is None:
        schema = _inspect(fragments, part)
    result = FileSystemDataset(fragments, schema, fmt, storage.filesystem, part)
    if part is None:
        # pyarrow's discovery reports a partitioning of no field
        result._partitioning = DirectoryPartitioning(T.schema([]))
    return result


def _dirname(path: str) -> str:
    return path.rsplit("/", 1)[0] if "/" in path else os.path.dirname(path)


def _is_valid(fragment: FileFragment) -> bool:
    try:
        fragment.physical_schema
    except (ArrowException, OSError, ValueError):
        return False
    return True


def _inspect(fragments: list[FileFragment], part: Partitioning | None) -> T.Schema:
    """The first file's schema followed by the partition fields (pyarrow inspects one file)."""
    fields: list[T.Field] = []
    if fragments:
        try:
            fields = list(fragments[0].inspect())
        except (ArrowException, OSError) as e:
            raise named_error(e, fragments[0].path) from None
    at = {f.name: i for i, f in enumerate(fields)}
    for f in part.schema if part is not None else ():
        i = at.get(f.name)
        if i is None:
            fields.append(f)
            continue
        # a partition field that is also a column of the file: its values are the partition's,
        # and the types must merge as pyarrow merges them (equal, or null and another)
        try:
            merged = unify_types(fields[i].type, f.type, "default", f.name)
        except ArrowTypeError as e:
            raise named_error(e, fragments[0].path) from None
        if merged != fields[i].type:
            fields[i] = fields[i].with_type(merged)
    metadata = fragments[0].physical_schema.metadata if fragments else None
    return T.schema(fields, metadata)



class FileSystemFactoryOptions:
    """How FileSystemDatasetFactory finds a dataset's files and partitions (pyarrow's
    FileSystemFactoryOptions): `partitioning` (a DirectoryPartitioning of no field by
    default, as pyarrow's) or `partitioning_factory` (one slot: the last set is used),
    `partition_base_dir`, `exclude_invalid_files` (False), `selector_ignore_prefixes`
    ([".", "_"])."""

    def __init__(self, partition_base_dir: str | None = None, partitioning: Any = None,
                 exclude_invalid_files: bool | None = None,
                 selector_ignore_prefixes: list[str] | None = None) -> None:
        self.partition_base_dir = partition_base_dir
        self._partitioning: Any = (DirectoryPartitioning(T.schema([])) if partitioning is None
                                   else partitioning)
        self.exclude_invalid_files = bool(exclude_invalid_files)
        self.selector_ignore_prefixes = (list(DEFAULT_IGNORE_PREFIXES)
                                         if selector_ignore_prefixes is None
                                         else list(selector_ignore_prefixes))

    @property
    def partitioning(self) -> Partitioning | None:
        """The Partitioning set (None when a factory is, or nothing)."""
        return self._partitioning if isinstance(self._partitioning, Partitioning) else None

    @partitioning.setter
    def partitioning(self, value: Any) -> None:
        self._partitioning = value

    @property
    def partitioning_factory(self) -> PartitioningFactory | None:
        """The PartitioningFactory set (None when a Partitioning is, or nothing)."""
        return (self._partitioning if isinstance(self._partitioning, PartitioningFactory)
                else None)

    @partitioning_factory.setter
    def partitioning_factory(self, value: Any) -> None:
        self._partitioning = value


class DatasetFactory:
    """The base of dataset factories (pyarrow's DatasetFactory): `inspect()` a schema,
    `finish()` a dataset. Made as a FileSystemDatasetFactory."""

    def __init__(self) -> None:
        raise TypeError(f"{type(self).__name__} is made as a FileSystemDatasetFactory")


class FileSystemDatasetFactory(DatasetFactory):
    """A dataset's files on a filesystem, inspected before the dataset is made (pyarrow's
    FileSystemDatasetFactory): `inspect()` gives its files' schemas unified, `finish()` the
    FileSystemDataset dataset() would make. `paths_or_selector`: a list of paths, or a pyarrow
    FileSelector (its directory is the partition base directory unless the options say
    another)."""

    def __init__(self, filesystem: Any, paths_or_selector: Any, format: FileFormat,
                 options: FileSystemFactoryOptions | None = None) -> None:
        self._format = _format_argument("format", format)
        self._options = options if options is not None else FileSystemFactoryOptions()
        self._filesystem = filesystem
        base = getattr(paths_or_selector, "base_dir", None)
        if isinstance(base, str):
            if not getattr(paths_or_selector, "recursive", False):
                # only the directory's own files: the filesystem lists them
                infos = filesystem.get_file_info(paths_or_selector)
                self._source: Any = [i.path for i in infos if i.is_file]
            else:
                self._source = base
            self._base_dir: str | None = self._options.partition_base_dir or base
        elif isinstance(paths_or_selector, (list, tuple)):
            self._source = [os.fspath(p) for p in paths_or_selector]
            self._base_dir = self._options.partition_base_dir
        else:
            raise TypeError(f"Expected a list of paths or a FileSelector, got a "
                            f"{type(paths_or_selector).__name__}")

    def _dataset(self, schema: T.Schema | None) -> Dataset:
        opts = self._options
        return dataset(self._source, schema=schema, format=self._format,
                       filesystem=self._filesystem, partitioning=opts._partitioning,
                       partition_base_dir=self._base_dir,
                       exclude_invalid_files=opts.exclude_invalid_files,
                       ignore_prefixes=opts.selector_ignore_prefixes)

    def inspect(self, *, promote_options: str = "default", fragments: int | None = None
                ) -> T.Schema:
        """The schemas of the first `fragments` files (None: all), unified as unify_schemas
        unifies them with `promote_options` ("default" or "permissive"), then the partition
        fields (pyarrow's inspect; dataset() and finish() read the first file's)."""
        if promote_options not in ("default", "permissive"):
            raise ValueError(f"Invalid promote_options: {promote_options}")
        if fragments is not None and (not isinstance(fragments, int)
                                      or isinstance(fragments, bool) or fragments < 0):
            raise ValueError(f"Fragment count must be a non-negative int or None; got "
                             f"{fragments!r}")
        found = self._dataset(None)
        assert isinstance(found, FileSystemDataset)
        files = found._fragment_list[:fragments]
        if not files:
            return found.schema
        unified = unify_schemas([f.physical_schema for f in files],
                                promote_options=promote_options)
        part = found.partitioning
        return T.schema(list(unified) + [f for f in (part.schema if part is not None else ())
                                         if f.name not in unified.names], unified.metadata)

    def finish(self, schema: T.Schema | None = None) -> Dataset:
        """The FileSystemDataset (with `schema`, or the one inspect() finds)."""
        return self._dataset(None if schema is None else _schema_argument("schema", schema))
