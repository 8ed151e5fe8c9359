"""A dataset's files (FileFragment) and how one is scanned: pruned in stages, then decoded.

A fragment's scan is planned before any body is read:

    1. partition   the filter bound to the fragment's partition values; known false: no file
                   is opened
    2. file        the footer's statistics summary (ipc/statistics.py); ruled out: no batch is
                   read
    3. batch       each record batch's statistics, from its message header (footer order, no
                   body read); only files whose footer has a summary are asked; kept with the
                   summary for later scans
    4. rows        the surviving batches are decoded, projected to the columns the scan and
                   the filter need (views of the file mapped under a read lease; without a
                   lease, ranged reads of those columns' buffers), and filtered

Stream files have no footer: no file is ruled out before it is read. They are read front to
back, and a batch whose statistics (in its header) rule it out is skipped undecoded.
Each batch is then brought to the dataset's schema (columns a file lacks read as nulls, other
types cast), given its partition and special columns, and split to the scan's batch size.
"""
from __future__ import annotations

import os
import sys
import threading
import weakref
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal, NamedTuple

import numpy as np

from .. import types as T
from .._core.arraydata import ArrayData
from .._core.bitmap import count_set_bits
from .._core.buffer import py_buffer
from .._core.compute_kernels import (OP_CODES, count_compare, count_compare_files,
                                     count_compare_spans)
from ..array import Array, array, mask_selection, nulls
from ..data.selection import apply
from ..errors import ArrowException, ArrowInvalid, ArrowNotImplementedError, ArrowTypeError
from ..ipc.filesystems import RangeSource
from ..ipc.mounts import on_network_file_system
from ..ipc.options import IpcReadOptions
from ..ipc.paths import leased_map_if_unchanged
from ..ipc.reader import (RecordBatchFileReader, RecordBatchStreamReader, decoded_footer,
                          local_file_rows)
from ..ipc.statistics import file_statistics, footer_statistics, might_match, read_statistics
from ..table import RecordBatch, Table
from . import _exprs
from .formats import FileFormat, IpcStreamFormat, _SniffedFormat, sniff_format

if TYPE_CHECKING:
    from .._core.buffer import Buffer
    from ..expression import Expression
    from ..ipc.statistics import Statistics
    from .discovery import Storage
    from .scanner import Scanner

__all__ = ["FileFragment", "Fragment", "PendingCount", "SPECIAL_FIELDS", "ScanSpec",
           "named_error", "run_counts"]

SPECIAL_FIELDS: dict[str, T.DataType] = {
    "__filename": T.string(), "__fragment_index": T.int32(), "__batch_index": T.int32(),
    "__last_in_fragment": T.bool_()}


def named_error(e: BaseException, path: str) -> BaseException:
    """`e` with a message that names the file `path` (same class; already naming it: as is)."""
    message = str(e)
    if path in message:
        return e
    try:
        out = type(e)(f"{path}: {message}")
    except Exception:
        return e
    out.__cause__ = e
    return out


class PendingCount(NamedTuple):
    """A file's filtered count left to one kernel call: the values found at `spans` ((byte
    offset, count) pairs, checked again by the kernel) of `data`, the file as mapped, compared
    with `number` by comparison `op`. The call releases the GIL for every batch of the file at
    once, so a count can run it on another thread while this one plans the next file."""
    data: Buffer
    spans: np.ndarray[Any, Any]
    op: int
    number: np.ndarray[Any, Any]

    def run(self) -> int:
        """The rows counted."""
        return int(count_compare_spans(self.op, self.data, self.spans, self.number))


def run_counts(counts: Sequence[PendingCount]) -> int:
    """The rows of all `counts`: those that compare alike (all of one scan do) counted by one
    kernel call, the GIL released once for all their files."""
    alike: dict[tuple[int, Any], list[PendingCount]] = {}
    for c in counts:
        alike.setdefault((c.op, c.number.dtype), []).append(c)
    return sum(int(count_compare_files(op, [c.data for c in same], [c.spans for c in same],
                                       same[0].number))
               for (op, _), same in alike.items())


def _kernel_spans(spans: Sequence[tuple[int, int]], width: int) -> list[int] | None:
    """The (byte offset, values) pairs of the spans that hold values, flattened as the count
    kernels take them; None when one of them is not aligned to the `width`-byte values (the
    kernel refuses it: the file is counted the general way)."""
    wanted = [part for span in spans if span[1] for part in span]
    if any(start % width for start in wanted[::2]):
        return None
    return wanted


class _DirectCount(NamedTuple):
    """A `column op number` filter as a count on the column's values takes it."""
    name: str
    op: str                         # "<" ... "!=" (OP_CODES)
    value: int | float
    type: T.DataType                # the column's type in the dataset
    number: np.ndarray[Any, Any]    # the value as one value of the column's numpy type
    width: int                      # bytes a value


# functions whose value is bool whatever their arguments' types
_BOOLEAN_FUNCTIONS = frozenset({
    "equal", "not_equal", "less", "less_equal", "greater", "greater_equal", "and_kleene",
    "or_kleene", "and", "or", "xor", "invert", "is_null", "is_valid", "is_nan", "is_in",
    "starts_with", "ends_with", "match_substring"})


class ScanSpec:
    """What a scan asks of each fragment: the columns to read and produce, the filter, the
    batch size. Built once per scan by the Scanner."""

    def __init__(self, dataset_schema: T.Schema, partition_names: Sequence[str],
                 outputs: list[tuple[str, str | Expression]], filter: Expression | None,
                 batch_size: int, cache_metadata: bool = True) -> None:
        self.dataset_schema = dataset_schema
        self.filter = filter
        self.batch_size = batch_size
        # pyarrow's switch: False opens every remote file anew (no kept opening)
        self.cache_metadata = cache_metadata
        self.outputs = outputs
        needed: set[str] = _exprs.field_names(filter)
        for _, source in outputs:
            needed |= {source} if isinstance(source, str) else _exprs.field_names(source)
        names = set(dataset_schema.names)
        for name in needed:
            if name not in names and name not in SPECIAL_FIELDS:
                raise ArrowInvalid(f"No match for FieldRef.Name({name}) in {dataset_schema}")
        if filter is not None and not (filter._kind == "call"
                                       and filter._function in _BOOLEAN_FUNCTIONS):
            # a call of these gives bool (or fails on its arguments' types when evaluated);
            # anything else is evaluated over a probe of no rows to find its type
            kind = self._type_of(filter)
            if not kind.equals(T.bool_()):
                raise ArrowTypeError(f"Filter expression must evaluate to bool, but {filter} "
                                     f"evaluates to {kind}")
        self.partition_names = [n for n in partition_names if n in needed]
        self.special_names = [n for n in SPECIAL_FIELDS if n in needed and n not in names]
        parts = set(partition_names)
        # the file columns to read, in dataset order
        self.file_names = [f.name for f in dataset_schema if f.name in needed
                           and f.name not in parts]
        # as pyarrow's: a column taken as it is keeps its field (nullability, metadata), and
        # the schema its metadata
        self.output_schema = T.schema([self._field_of(name, source) for name, source in outputs],
                                      metadata=dataset_schema.metadata)
        # id of a residual filter -> (it, its `column op number` form): files whose partition
        # values bind the filter alike share one residual object, examined once
        self._comparisons: dict[int, tuple[Expression | None,
                                           tuple[str, str, int | float] | None]] = {}
        self._direct: dict[int, tuple[Expression | None, _DirectCount | None]] = {}
        self.constants = _RepeatedValues(REPEATED_VALUES_BYTES)

    def comparison_of(self, residual: Expression | None) -> tuple[str, str, int | float] | None:
        """_exprs.column_comparison(residual), worked out once per residual object."""
        known = self._comparisons.get(id(residual))
        if known is not None and known[0] is residual:
            return known[1]
        comparison = _exprs.column_comparison(residual)
        self._comparisons[id(residual)] = (residual, comparison)
        return comparison

    def direct_count(self, residual: Expression | None) -> _DirectCount | None:
        """How a `column op number` residual is counted on the column's values where a file
        holds them (see FileFragment.count_from_headers), worked out once per residual
        object; None when it cannot be: another filter, a column not of the dataset or not a
        plain number type, the number not exact in the column's type."""
        known = self._direct.get(id(residual))
        if known is not None and known[0] is residual:
            return known[1]
        found = None
        comparison = self.comparison_of(residual)
        if comparison is not None and comparison[0] in self.dataset_schema.names:
            name, op, value = comparison
            target = self.dataset_schema.field(name).type
            dtype = _COUNTED_TYPES.get(target.name)
            number = None if dtype is None else _number_in(value, dtype)
            if number is not None:
                found = _DirectCount(name, op, value, target, number, number.itemsize)
        self._direct[id(residual)] = (residual, found)
        return found

    def _field_of(self, name: str, source: str | Expression) -> T.Field:
        column = source if isinstance(source, str) else _exprs.top_field(source)
        if column is not None and column in self.dataset_schema.names:
            found = self.dataset_schema.field(column)
            return found if found.name == name else found.with_name(name)
        return T.field(name, self._type_of(source))

    def _type_of(self, source: str | Expression) -> T.DataType:
        if isinstance(source, str):
            if source in SPECIAL_FIELDS and source not in self.dataset_schema.names:
                return SPECIAL_FIELDS[source]
            return self.dataset_schema.field(source).type
        probe = RecordBatch.from_arrays(
            [nulls(0, f.type) for f in self.dataset_schema]
            + [nulls(0, t) for n, t in SPECIAL_FIELDS.items()
               if n not in self.dataset_schema.names],
            names=self.dataset_schema.names + [n for n in SPECIAL_FIELDS
                                               if n not in self.dataset_schema.names])
        value_type: T.DataType = source.evaluate(probe).type
        return value_type


class Fragment:
    """A part of a dataset, scanned alone (pyarrow.dataset.Fragment): the base of FileFragment,
    and what an InMemoryDataset's get_fragments() gives, one per record batch."""

    def __init__(self) -> None:
        raise TypeError(f"Do not call {type(self).__name__}'s constructor directly; fragments "
                        f"come from a dataset's get_fragments()")

    @property
    def partition_expression(self) -> Expression:
        """The expression every row of the fragment satisfies (true: none known)."""
        from ..expression import scalar
        return scalar(True)

    @property
    def physical_schema(self) -> T.Schema:
        """The schema of the fragment's data as stored."""
        raise NotImplementedError

    def scanner(self, schema: T.Schema | None = None, columns: Any = None, filter: Any = None,
                batch_size: int = 131072, use_threads: bool = True, **kwargs: Any) -> Scanner:
        """A Scanner over this fragment alone."""
        raise NotImplementedError

    def to_table(self, schema: T.Schema | None = None, columns: Any = None, filter: Any = None,
                 batch_size: int = 131072, use_threads: bool = True, **kwargs: Any) -> Table:
        """The fragment read as a Table, as Dataset.to_table reads it."""
        return self.scanner(schema, columns, filter, batch_size, use_threads,
                            **kwargs).to_table()

    def to_batches(self, schema: T.Schema | None = None, columns: Any = None, filter: Any = None,
                   batch_size: int = 131072, use_threads: bool = True, **kwargs: Any
                   ) -> Iterator[RecordBatch]:
        """The fragment's batches."""
        return self.scanner(schema, columns, filter, batch_size, use_threads,
                            **kwargs).to_batches()

    def count_rows(self, filter: Any = None, **kwargs: Any) -> int:
        """Rows of the fragment (passing `filter`)."""
        return self.scanner(filter=filter, **kwargs).count_rows()

    def head(self, num_rows: int, columns: Any = None, filter: Any = None, **kwargs: Any) -> Table:
        """The first `num_rows` rows."""
        return self.scanner(columns=columns, filter=filter, **kwargs).head(num_rows)

    def take(self, indices: Any, columns: Any = None, filter: Any = None, **kwargs: Any) -> Table:
        """The rows at `indices`."""
        return self.scanner(columns=columns, filter=filter, **kwargs).take(indices)


class FileFragment(Fragment):
    """One file of a dataset (pyarrow.dataset.FileFragment): its path, format and partition."""

    def __init__(self, path: str, format: FileFormat, storage: Storage,
                 partition_values: Mapping[str, Any] | None = None, index: int = 0,
                 partition_fields: Sequence[str] = ()) -> None:
        self.path = path
        self._format = format
        self._storage = storage
        self.partition_values: dict[str, Any] = dict(partition_values or {})
        # the dataset's partition fields this fragment's path does not give: null here
        for name in partition_fields:
            self.partition_values.setdefault(name, None)
        self._given = set((partition_values or {}).keys())
        # the partition expression given as such (FileSystemDataset.from_paths), which may say
        # more than the values taken from it; None: the values' `field == value` terms
        self.given_expression: Expression | None = None
        # the partitioning's dictionary of each dictionary-typed partition field: its column
        # indexes into it, as pyarrow's does (set by dataset())
        self.partition_dictionaries: dict[str, Array] = {}
        # the partitioning's type of each partition field: its partition expression's literals
        # have it, as pyarrow's (set by dataset(); untyped literals without it)
        self.partition_types: dict[str, T.DataType] = {}
        self.index = index
        self._schema: T.Schema | None = None
        self._kept_reader: RecordBatchFileReader | None = None
        # a remote file's opening, kept for the next reader (RangeSource.reopened): the object's
        # pinned version and the bytes its opening read brought (the footer), so a later scan
        # opens it with no request; every range read must still match that version
        self._opening: RangeSource | None = None
        self._over_network: bool | None = None      # see opens_over_a_network
        # the footer's statistics summary of a local file, as last read: ((size, mtime), summary
        # or None, physical schema); a later scan prunes or counts by it without opening the
        # file while the file's size and mtime are unchanged (pyarrow's cache_metadata)
        self._footer_kept: tuple[tuple[int, int], Statistics | None, T.Schema] | None = None
        # the rows of a local file counted from its footer and headers alone, under the same
        # (size, mtime) key, with the footer's bytes, decoded into _footer when a later scan
        # asks for it: ((size, mtime), rows, footer or None once decoded, each batch's rows)
        self._rows: tuple[tuple[int, int], int, bytes | None, list[int]] | None = None
        # each batch's statistics as last read, under the same (size, mtime) key
        self._batch_statistics: tuple[tuple[int, int], list[Statistics | None]] | None = None
        # where a `column op number` count found each batch's values of a column, by column
        # name, under the same key: ((size, mtime), the column's type, per batch (byte offset
        # in the file, values) or None); a later count counts there, no reader opened
        self._value_spans: dict[str, tuple[tuple[int, int], T.DataType,
                                           list[tuple[int, int] | None]]] = {}

    def __getstate__(self) -> dict[str, Any]:
        """The fragment without what this process keeps of its file (a reader left open, a
        remote file's opening, statistics read): a copy unpickled elsewhere (pyarrow's
        fragments and datasets pickle) reads the file again on its first scan."""
        state = dict(self.__dict__)
        state.update(_kept_reader=None, _opening=None, _over_network=None, _footer=None,
                     _batch_statistics=None, _value_spans={})
        return state

    # -- pyarrow's attributes -------------------------------------------------------------------
    @property
    def format(self) -> FileFormat:
        """The file's format (sniffed from its first bytes for format=None)."""
        return self._resolved_format()

    @property
    def filesystem(self) -> Any:
        """The filesystem object the file is read through (None: local)."""
        return self._storage.filesystem

    @property
    def partition_expression(self) -> Expression:
        """`field == value` for each partition value the path gives (pyarrow's form)."""
        from .partitioning import values_expression
        if self.given_expression is not None:
            return self.given_expression
        return values_expression({k: v for k, v in self.partition_values.items()
                                  if k in self._given}, self.partition_types)

    @property
    def physical_schema(self) -> T.Schema:
        """The schema stored in the file."""
        if self._schema is None:
            self.inspect(keep_reader=False)
        assert self._schema is not None
        return self._schema

    def inspect(self, keep_reader: bool = True) -> T.Schema:
        """The file's schema, read from its footer (or first message); with `keep_reader`, the
        reader opened for it serves the next scan, so the footer is read once."""
        reader = self._open(None)
        self._schema = reader.schema
        if keep_reader and not isinstance(reader, RecordBatchStreamReader):
            self._kept_reader = reader
        elif isinstance(reader, RecordBatchStreamReader):
            reader.close()
        return self._schema

    def open(self) -> Any:
        """The file opened for reading: a pyarrow NativeFile, as pyarrow's fragments give, when
        pyarrow is loaded in the process (it is not imported for this); else a binary file
        object."""
        f = self._open_binary()
        pa: Any = sys.modules.get("pyarrow")
        native = getattr(pa, "NativeFile", None)
        if native is None or isinstance(f, native):
            return f
        return pa.PythonFile(f, mode="r")

    @property
    def is_remote(self) -> bool:
        """Whether the file is read through a filesystem object (a URL, fsspec or pyarrow
        filesystem) rather than from a local path."""
        return self._storage.kind != "local"

    @property
    def opens_over_a_network(self) -> bool:
        """Whether opening the file waits on a network: a remote file, or a local path on a
        network file system (NFS, SMB, FUSE ...: ipc/mounts.py), asked once."""
        if self._over_network is None:
            self._over_network = self.is_remote or on_network_file_system(self.path)
        return self._over_network

    def _open_binary(self) -> Any:
        kind, fs = self._storage
        if kind == "local":
            return open(self.path, "rb")
        if kind == "fsspec":
            return fs.open(self.path, "rb")
        return fs.open_input_file(self.path)

    def __repr__(self) -> str:
        from .partitioning import get_partition_keys
        keys = get_partition_keys(self.partition_expression)
        # as pyarrow shows them: the last term first
        shown = f" partition=[{', '.join(f'{k}={v}' for k, v in reversed(keys.items()))}]" \
            if keys else ""
        return (f"<arrowipc.dataset.FileFragment type={self.format.type_name} "
                f"path={self.path}{shown}>")

    # -- reading --------------------------------------------------------------------------------
    def _head_bytes(self) -> bytes:
        with self._open_binary() as f:
            data: bytes = f.read(8)
        return data

    def _resolved_format(self) -> FileFormat:
        if isinstance(self._format, _SniffedFormat):
            try:
                self._format = sniff_format(self._head_bytes(), self.path)
            except (ArrowException, OSError) as e:
                raise named_error(e, self.path) from None
        return self._format

    def is_stream(self) -> bool:
        """Whether the file is read as a stream."""
        return isinstance(self._resolved_format(), IpcStreamFormat)

    def _open(self, included: list[int] | None, reopen: bool = True
              ) -> RecordBatchFileReader | RecordBatchStreamReader:
        """The file's reader, projected to the file fields `included` (None: all); a remote
        file by its kept opening when there is one and `reopen`."""
        # no projection: the readers' defaults, which cost less to make than options checked anew
        options = IpcReadOptions(included_fields=included) if included else None
        fs = self._storage.reader_filesystem()
        try:
            if self.is_stream():
                return RecordBatchStreamReader(self.path, options=options, filesystem=fs)
            opening = self._opening.reopened() if self._opening is not None and reopen \
                else None
            if opening is not None:
                return RecordBatchFileReader(opening, options=options)
            reader = RecordBatchFileReader(self.path, options=options, filesystem=fs)
        except (ArrowException, OSError, ValueError) as e:
            self.forget_opening()
            raise named_error(e, self.path) from None
        if self.is_remote:
            kept = reader.reopened_source()
            if kept is not None and _KEPT_OPENINGS.take(kept):
                self._opening = kept
        return reader

    def forget_opening(self, only: RangeSource | None = None) -> None:
        """Open the remote file anew next time: a read failed (the object may have changed
        since its opening was kept: the ranges read from it must match its version).
        `only`: forget the opening kept only if it is still this one."""
        if only is None or self._opening is only:
            self._opening = None

    def scanner(self, schema: T.Schema | None = None, columns: Any = None, filter: Any = None,
                batch_size: int = 131072, use_threads: bool = True, **kwargs: Any) -> Scanner:
        """A Scanner over this fragment alone. Without `schema` it scans the file's own columns,
        as pyarrow does: the partition columns come with a schema that has them (the
        dataset's)."""
        from .partitioning import as_schema
        from .scanner import Scanner
        schema = self.physical_schema if schema is None else as_schema(schema)
        return Scanner(schema, [self], list(self._given), columns=columns, filter=filter,
                       batch_size=batch_size, use_threads=use_threads, **kwargs)

    # -- planning (stages 1 to 3) ---------------------------------------------------------------
    def _file_key(self) -> tuple[int, int] | None:
        """(size, mtime in ns) of a local file, None elsewhere or when it cannot be read."""
        if self._storage.kind != "local":
            return None
        try:
            st = os.stat(self.path)
        except OSError:
            return None
        return (st.st_size, st.st_mtime_ns)

    @property
    def _footer(self) -> tuple[tuple[int, int], Statistics | None, T.Schema] | None:
        """The kept footer summary (see __init__), decoded from the bytes a count kept if the
        count was the last to read the file."""
        rows = self._rows
        if self._footer_kept is None and rows is not None and rows[2] is not None:
            self._rows = (rows[0], rows[1], None, rows[3])
            try:
                schema, metadata, batches = decoded_footer(rows[2])
            except ArrowException:
                return None                     # read again by the scan: its error is raised
            self._footer_kept = (rows[0], footer_statistics(metadata, batches, rows[3]),
                                 schema)
        return self._footer_kept

    @_footer.setter
    def _footer(self, kept: tuple[tuple[int, int], Statistics | None, T.Schema] | None) -> None:
        self._footer_kept = kept

    def _cached_footer(self) -> tuple[Statistics | None, T.Schema] | None:
        """The summary and schema kept from the last footer read, if the file is unchanged."""
        if self._footer is None:
            return None
        key = self._file_key()
        if key is None or key != self._footer[0]:
            self._footer = None
            return None
        return self._footer[1], self._footer[2]

    def ruled_out_by_footer(self, rest: Expression | None) -> bool:
        """Whether the kept footer summary proves no row passes `rest` (no file opened)."""
        cached = self._cached_footer() if rest is not None else None
        if cached is None or cached[0] is None:
            return False
        return not _exprs.might_match(rest, cached[0], cached[1])

    def rows_from_footer(self) -> int | None:
        """The file's rows from the kept count or footer summary (None: not kept)."""
        if self._rows is not None and self._rows[0] == self._file_key():
            return self._rows[1]
        cached = self._cached_footer()
        if cached is None or cached[0] is None:
            return None
        return int(cached[0]["rows"])

    def _statistics_of_batches(self, reader: RecordBatchFileReader, key: tuple[int, int] | None,
                               n: int) -> list[Statistics | None]:
        """Each record batch's statistics (from its message header, no body read), kept for
        the next scan while the file's size and mtime are unchanged."""
        kept = self._batch_statistics
        if kept is not None and key is not None and kept[0] == key and len(kept[1]) == n:
            return kept[1]
        stats = [read_statistics(metadata) for metadata in reader.batch_custom_metadata()]
        if key is not None:
            self._batch_statistics = (key, stats)
        return stats

    def count_from_value_spans(self, spec: ScanSpec, rest: Expression | None
                               ) -> int | PendingCount | None:
        """The rows passing `rest`, a `column op number` filter, counted on the column's values
        where an earlier count of this version of the file found them (its footer summary,
        batch statistics and value spans all kept under the file's current size and mtime):
        the file is mapped under a read lease, its surviving batches' values left to one
        kernel call (a PendingCount), with no reader, footer read or batch decoded; an int
        when nothing is left to count. None when anything needed is not kept or the file
        changed (the caller plans and reads it)."""
        footer = self._footer
        if footer is None:
            return None                 # nothing kept: not even the filter is looked at
        comparison = spec.comparison_of(rest)
        if comparison is None:
            return None
        name, op = comparison[:2]
        key = self._file_key()
        if key is None or footer[0] != key:
            return None
        assert rest is not None
        summary, physical = footer[1], footer[2]
        # a file with statistics: its footer, then each batch's, rule out what they can
        if summary is not None and not _exprs.might_match(rest, summary, physical):
            return 0
        spans = self._value_spans.get(name)
        if spans is None or spans[0] != key:
            return None
        located = spans[2]
        if summary is not None:
            batch_stats = self._batch_statistics
            if batch_stats is None or batch_stats[0] != key \
                    or len(batch_stats[1]) != len(located):
                return None
            located = [span for span, stats in zip(located, batch_stats[1])
                       if _exprs.might_match(rest, stats, physical)]
        direct = spec.direct_count(rest)
        if direct is None or not spans[1].equals(direct.type):
            return None
        found = [span for span in located if span is not None]
        if len(found) < len(located):
            return None                 # a batch this count needs was not found before
        wanted = _kernel_spans(found, direct.width)
        if wanted is None:
            return None
        if not wanted:
            return 0
        mapped = leased_map_if_unchanged(self.path, key)
        if mapped is None:
            return None
        # the kernel checks each span against the mapping again (recorded from a mapping of
        # this size, they fit)
        return PendingCount(mapped, np.array(wanted, dtype=np.int64), OP_CODES[op],
                            direct.number)

    def count_from_headers(self, spec: ScanSpec, rest: Expression | None
                           ) -> int | PendingCount | None:
        """The rows passing `rest`, a `column op number` filter, in a local file no count has
        read yet (see count_from_value_spans for later ones): the file is mapped whole under a
        read lease; its footer summary and each batch's statistics rule out what they can; the
        surviving batches' values are found from their headers alone (no batch decoded) and
        left to one kernel call, a PendingCount. The footer summary, batch statistics and value
        spans found are kept for the next scan. None when the file, a batch or the column does
        not allow it, or anything read is odd: the caller plans and reads the file, which
        reports what is wrong."""
        direct = spec.direct_count(rest)
        if direct is None or not self.counts_from_local_footer():
            return None
        key = self._file_key()
        if key is None:
            return None
        mapped = leased_map_if_unchanged(self.path, key)
        if mapped is None:
            return None
        name, op, value = direct.name, direct.op, direct.value
        try:
            reader = RecordBatchFileReader(mapped)
            physical = reader.schema
            index = physical.get_field_index(name)      # -1 when missing or not unique
            if index < 0 or not physical.field(index).type.equals(direct.type):
                return None
            summary = file_statistics(reader)
            self._schema = physical
            self._footer = (key, summary, physical)
            # a plain number column compared with a number: what Expression.might_match asks
            if summary is not None and not might_match(summary, name, op, value):
                return 0
            n = reader.num_record_batches
            stats: list[Statistics | None] = []
            spans: list[tuple[int, int] | None] = [None] * n
            for i in range(n):
                msg = reader.read_block_message("record batch", i, with_body=False)
                if summary is not None:
                    stats.append(read_statistics(msg.custom_metadata))
                    if not might_match(stats[i], name, op, value):
                        continue
                found = reader.values_in_file(i, index, msg)
                if found is None or found[2] != 0:
                    return None         # nulls, compressed, odd: decoded and masked
                spans[i] = found[:2]
        except (ArrowException, OSError, ValueError):
            return None
        wanted = _kernel_spans([span for span in spans if span is not None], direct.width)
        if wanted is None:
            return None
        if summary is not None:
            self._batch_statistics = (key, stats)
        self._value_spans[name] = (key, direct.type, spans)
        if not wanted:
            return 0
        return PendingCount(mapped, np.array(wanted, dtype=np.int64), OP_CODES[op],
                            direct.number)

    def counts_from_local_footer(self) -> bool:
        """Whether the file is counted from a local file's footer, headers and mapping (no
        stream to decode, nothing remote or on a network file system to wait for): cheaper in
        the caller's thread than handed to a pool."""
        return self._storage.kind == "local" and kind_of(self._format) == "file" \
            and not self.opens_over_a_network

    def count_all_rows(self, reopen: bool = True) -> int | None:
        """All the file's rows, from its footer alone: the kept count or statistics summary, a
        local file's batch headers, or a remote file's statistics summary (kept for later scans)
        or batch headers; no plan is made. None for a stream (read to count). `reopen`: see
        _open."""
        rows = self.rows_from_footer()
        if rows is not None:
            return rows
        if self.is_stream():
            return None
        if self._storage.kind == "local" and self._kept_reader is None:
            # the footer and the batch headers read directly, no reader set up; a file not well
            # formed is opened below, for the reader's error
            found = local_file_rows(self.path)
            if found is not None:
                self._rows = ((found.size, found.mtime_ns), found.rows, found.footer,
                              found.lengths)
                if self._footer_kept is not None and self._footer_kept[0] != self._rows[0]:
                    self._footer_kept = None        # of an earlier version of the file
                return found.rows
        key = self._file_key()
        reader, self._kept_reader = self._kept_reader or self._open(None, reopen), None
        assert isinstance(reader, RecordBatchFileReader)
        try:
            physical = reader.schema
            self._schema = physical
            summary = file_statistics(reader)
            if key is not None:
                self._footer = (key, summary, physical)
            return int(summary["rows"]) if summary is not None else reader.count_rows()
        except (ArrowException, OSError) as e:
            raise named_error(e, self.path) from None
        finally:
            reader.close()

    def residual(self, spec: ScanSpec) -> Expression | None | Literal[False]:
        """Stage 1: the scan's filter bound to this file's partition values (False: the
        partition rules the file out; None: no filter left)."""
        return _exprs.residual(spec.filter, self.partition_values)

    def plan(self, spec: ScanSpec, rest: Expression | None | Literal[False] | str = "bind"
             ) -> FragmentPlan | None:
        """The work a scan leaves in this file, or None when the filter rules it out (`rest`:
        the residual already bound, when the caller did stage 1)."""
        if isinstance(rest, str):
            rest = self.residual(spec)
        if rest is False:
            return None
        stream = self.is_stream()
        key = None if stream else self._file_key()
        # the footer summary kept from an earlier scan of this version of the file: it may rule
        # the file out unopened, and is not parsed or asked again below
        kept = self._footer if key is not None and self._footer is not None \
            and self._footer[0] == key else None
        if kept is not None and rest is not None and kept[1] is not None \
                and not _exprs.might_match(rest, kept[1], kept[2]):
            return None
        reader, self._kept_reader = \
            self._kept_reader or self._open(None, spec.cache_metadata), None
        physical = reader.schema
        self._schema = physical
        wanted = [n for n in spec.file_names if n in physical.names]
        if rest is not None:
            wanted += sorted(n for n in _exprs.field_names(rest)
                             if n in physical.names and n not in wanted)
        try:
            included = sorted({_field_index(physical, n) for n in wanted})
            if stream and not included and len(physical):
                included = [0]              # a stream is decoded whole: read the least
            if included and len(included) < len(physical):
                _project(reader, included)
        except (ArrowException, OSError) as e:
            raise named_error(e, self.path) from None
        plan = FragmentPlan(self, reader, rest, spec, bool(included))
        plan.file_key = key
        if stream:
            return plan
        assert isinstance(reader, RecordBatchFileReader)
        try:
            if kept is not None:
                summary = kept[1]
            else:
                summary = file_statistics(reader)
                if key is not None:
                    self._footer = (key, summary, physical)
                if rest is not None and not _exprs.might_match(rest, summary, physical):
                    return None
            n = reader.num_record_batches
            plan.batch_rows = list(summary["batch_rows"]) if summary is not None else None
            if n and plan.reads_columns:
                # a local file mapped under a read lease: its batches' headers and columns are
                # views of the mapping, not copies of their ranges (pages are faulted in as
                # read); mapped before the batch statistics are read, which then need no read
                reader._map_local_file()
            if rest is not None and summary is not None:
                stats = self._statistics_of_batches(reader, key, n)
                plan.batches = [i for i in range(n)
                                if _exprs.might_match(rest, stats[i], physical)]
            else:
                plan.batches = list(range(n))
        except (ArrowException, OSError) as e:
            raise named_error(e, self.path) from None
        return plan


# the bodies a window of adjacent batches fetched together may hold (FragmentPlan._from_window)
WINDOW_LIMIT = 32 << 20


FileFormat._fragment_class = FileFragment      # what FileFormat.make_fragment makes


class _Window:
    """A run of adjacent surviving batches of one file, fetched together by the first task
    that reads one of them."""

    def __init__(self, indices: list[int]) -> None:
        self.indices = indices
        self.started = False
        self.done = threading.Event()
        self.batches: dict[int, RecordBatch] = {}


def _runs(batches: Sequence[int], body_length: Callable[[int], int] | None = None,
          limit: int = 0) -> list[list[int]]:
    """`batches` (ascending) cut into runs of adjacent indices; with `body_length`, a run is
    also cut where its bodies would pass `limit` bytes."""
    runs: list[list[int]] = []
    size = 0
    for i in batches:
        n = body_length(i) if body_length is not None else 0
        if runs and runs[-1][-1] == i - 1 and (body_length is None or size + n <= limit):
            runs[-1].append(i)
            size += n
        else:
            runs.append([i])
            size = n
    return runs


def _windows(batches: Sequence[int], body_length: Callable[[int], int]) -> dict[int, _Window]:
    """Surviving batch -> its window: runs of adjacent batches, split where their bodies
    would pass WINDOW_LIMIT; batches alone in their run have none."""
    out: dict[int, _Window] = {}
    for run in _runs(batches, body_length, WINDOW_LIMIT):
        if len(run) > 1:
            window = _Window(run)
            for k in run:
                out[k] = window
    return out


class FragmentPlan:
    """A fragment's surviving batches (file format) or whole stream, and the filter left."""

    def __init__(self, fragment: FileFragment, reader: RecordBatchFileReader |
                 RecordBatchStreamReader, residual: Expression | None, spec: ScanSpec,
                 reads_columns: bool) -> None:
        self.fragment = fragment
        self.reader = reader
        # the opening the fragment kept when this plan was made: a failed read forgets it,
        # and only it (another plan may have kept a newer one since)
        self.opening = fragment._opening
        self.residual = residual
        self.spec = spec
        self.reads_columns = reads_columns
        self.batches: list[int] = []
        self.batch_rows: list[int] | None = None
        self._blocks: list[tuple[int, int, int]] | None = None
        self._repeated: dict[str, Array] = {}
        self._lock = threading.Lock()
        # `column op number`: a filtered count counts it on the column's values in one kernel
        self._comparison = spec.comparison_of(residual)
        # the filter reads no partition or special column: rows are dropped before those
        # columns are made (finish)
        referenced = _exprs.field_names(residual)
        self._filters_file_columns = bool(referenced) and referenced <= set(spec.file_names)
        self._numbers: dict[str, Any] = {}      # column type name -> the number in it, or None
        self._direct_type: T.DataType | None = None     # the column type last found countable
        self.file_key: tuple[int, int] | None = None     # (size, mtime) when planned
        # per batch, where a direct count found the compared column's values in the file
        # (kept by the fragment for the next count, see count_from_value_spans)
        self._spans: list[tuple[int, int] | None] | None = None
        self._spans_type: T.DataType | None = None
        # a file behind a network link: surviving batch -> the run of adjacent survivors
        # fetched with it (see _from_window)
        self._windows: dict[int, _Window] | None = None
        self.fetch_windows = False          # set by a scan that reads every survivor ahead
        # whether the batches read so far were views of the mapped file, decoded in one call
        # (None: none read yet); the scan decodes such batches in the consumer's thread
        self.in_place: bool | None = None
        # set by the scan: some of the plan's batches were handed out; the plan was replaced
        # by one made anew (its first read failed through a kept opening, Scanner._tagged)
        self.handed_out = False
        self.replaced = False

    @property
    def is_stream(self) -> bool:
        return isinstance(self.reader, RecordBatchStreamReader)

    def batch_length(self, i: int) -> int:
        """Rows of record batch i, from the footer's summary or the batch's header."""
        if self.batch_rows is not None:
            return self.batch_rows[i]
        assert isinstance(self.reader, RecordBatchFileReader)
        try:
            return self.reader.batch_length(i)
        except (ArrowException, OSError) as e:
            raise named_error(e, self.fragment.path) from None

    def body_length(self, i: int) -> int:
        """The size of record batch i's message body in the file (footer block, no read)."""
        if self._blocks is None:
            assert isinstance(self.reader, RecordBatchFileReader)
            self._blocks = self.reader.record_batch_blocks      # a copy: taken once
        return int(self._blocks[i][2])

    def read(self, i: int) -> RecordBatch:
        """Record batch i of the file, as read (projected)."""
        assert isinstance(self.reader, RecordBatchFileReader)
        try:
            if not self.reads_columns:
                return RecordBatch(T.schema([]), [], self.batch_length(i))
            if self.fetch_windows and self.fragment.is_remote:
                batch = self._from_window(i)
                if batch is not None:
                    return batch
            if self.in_place is not False:
                batch = self.reader.batch_in_place(i)
                self.in_place = batch is not None
                if batch is not None:
                    return batch
            return self.reader.get_batch(i)
        except (ArrowException, OSError) as e:
            self.fragment.forget_opening(self.opening)
            raise named_error(e, self.fragment.path) from None

    def _from_window(self, i: int) -> RecordBatch | None:
        """Surviving batch i of a file behind a network link, fetched with the run of adjacent
        survivors around it (at most WINDOW_LIMIT bytes of bodies): the scan reads each batch
        in a task of its own, and the first task of a run fetches the run for all of them, so
        adjacent ranges are one request (coalesced, as the read options allow) instead of a
        request per batch. None when i is in no run of two or more, or the run's fetch failed
        (the batch is then read alone, which raises its own error)."""
        with self._lock:
            if self._windows is None:
                self._windows = _windows(self.batches, self.body_length)
            window = self._windows.pop(i, None)
            if window is None:
                return None
            fetch = not window.started
            window.started = True
        if fetch:
            assert isinstance(self.reader, RecordBatchFileReader)
            try:
                for k, batch in zip(window.indices,
                                    self.reader.iter_batch_range(window.indices[0],
                                                                 window.indices[-1] + 1)):
                    window.batches[k] = batch
            except (ArrowException, OSError):
                window.batches.clear()          # each batch read alone, raising its error
            finally:
                window.done.set()
        else:
            window.done.wait()
        return window.batches.pop(i, None)

    def read_surviving(self) -> Iterator[tuple[int, RecordBatch]]:
        """(index, batch as read) of the file's surviving batches, in order: each run of
        consecutive batches of a file behind a network link fetched a window at a time (their
        headers, then their buffers, concurrently), not one request after another."""
        assert isinstance(self.reader, RecordBatchFileReader)
        if not self.reads_columns or not self.fragment.is_remote:
            for i in self.batches:
                yield i, self.read(i)
            return
        try:
            for run in _runs(self.batches):
                yield from zip(run, self.reader.iter_batch_range(run[0], run[-1] + 1))
        except (ArrowException, OSError) as e:
            self.fragment.forget_opening(self.opening)
            raise named_error(e, self.fragment.path) from None

    def stream_batches(self) -> Iterator[RecordBatch]:
        """The stream's batches, read one at a time (those the batch statistics leave)."""
        for _, batch in self.indexed_stream_batches():
            yield batch

    def indexed_stream_batches(self) -> Iterator[tuple[int, RecordBatch]]:
        """(index in the stream, batch) for the stream's batches, read one at a time. With a
        filter left, a batch whose statistics (in its header's custom metadata, as write_dataset
        writes them) rule it out is skipped before its body is decoded: stage 3 as the headers
        come, since a stream has no footer to plan from."""
        assert isinstance(self.reader, RecordBatchStreamReader)
        reader, rest = self.reader, self.residual
        physical = self.fragment.physical_schema        # kept by plan(): no second read

        def keep(custom_metadata: Any) -> bool:
            if rest is None:
                return True
            return _exprs.might_match(rest, read_statistics(custom_metadata), physical)
        try:
            yield from reader.iter_batches_where(keep)
        except (ArrowException, OSError) as e:
            raise named_error(e, self.fragment.path) from None
        finally:
            reader.close()

    def _completed(self, batch: RecordBatch, batch_index: int, last: bool) -> RecordBatch:
        """`batch` (as read) in the dataset's types, with the partition and special columns
        the scan needs."""
        return self._with_derived(self._file_columns(batch), batch.num_rows, batch_index, last)

    def _file_columns(self, batch: RecordBatch) -> dict[str, Array]:
        """The scan's file columns of `batch` (as read) in the dataset's types: a column the
        file lacks reads as nulls, one of another type is cast (a cast there is no kernel for
        stays an ArrowNotImplementedError, as pyarrow's scans raise it; a failing one is an
        ArrowInvalid)."""
        spec, frag = self.spec, self.fragment
        n = batch.num_rows
        columns: dict[str, Array] = {}
        schema = spec.dataset_schema
        names = batch.schema.names
        for name in spec.file_names:
            target = schema.field(name).type
            if name in names:
                col = batch.column(name)
                if not col.type.equals(target):
                    try:
                        col = col.cast(target)
                    except (ArrowException, ValueError, TypeError, NotImplementedError) as e:
                        kind = (ArrowNotImplementedError if isinstance(e, NotImplementedError)
                                else ArrowInvalid)
                        raise kind(f"{frag.path}: column '{name}' of type {col.type} "
                                   f"does not match the dataset's {target}: {e}") from None
                columns[name] = col
            else:
                columns[name] = nulls(n, target)
        return columns

    def _with_derived(self, columns: dict[str, Array], n: int, batch_index: int, last: bool
                      ) -> RecordBatch:
        """A batch of n rows: the file `columns`, then the partition and special columns."""
        spec, frag = self.spec, self.fragment
        schema = spec.dataset_schema
        for name in spec.partition_names:
            columns[name] = self._partition_column(name, schema.field(name).type, n)
        for name in spec.special_names:
            value = {"__filename": frag.path, "__fragment_index": frag.index,
                     "__batch_index": batch_index, "__last_in_fragment": last}[name]
            columns[name] = _repeat(value, SPECIAL_FIELDS[name], n)
        return _batch_of(columns, n)

    def _partition_column(self, name: str, type_: T.DataType, n: int) -> Array:
        """The file's partition column `name` for a batch of n rows. It is made once per file,
        at the length of the file's longest surviving batch when the footer gives the lengths
        and no filter leaves fewer rows, and a shorter batch takes a zero-copy slice; the lock
        keeps batches completed on several decode threads from making it twice."""
        with self._lock:
            repeated = self._repeated.get(name)
            if repeated is None or len(repeated) < n:
                longest = n
                if self.batch_rows is not None and self.batches and self.residual is None:
                    longest = max(n, max(self.batch_rows[i] for i in self.batches))
                repeated = self._repeated[name] = self.spec.constants.column(
                    self.fragment.partition_values.get(name), type_, longest,
                    self.fragment.partition_dictionaries.get(name))
        return repeated if len(repeated) == n else repeated.slice(0, n)

    def _mask_of(self, full: RecordBatch) -> Array:
        """The residual filter's mask over `full` (its errors name the file)."""
        assert self.residual is not None
        try:
            return _exprs.row_mask(self.residual, full)
        except (ArrowException, ValueError, TypeError) as e:
            raise named_error(e, self.fragment.path) from None

    def count_matching(self, batch: RecordBatch, batch_index: int = -1) -> int:
        """Rows of `batch` (as read; file batch `batch_index`, -1 if not known) the residual
        filter keeps: true, not null."""
        if self.residual is None:
            return batch.num_rows
        try:
            counted = self._counted_directly(batch, batch_index)
            if counted is not None:
                return counted
            if self._filters_file_columns:
                columns = self._file_columns(batch)
                return _true_count(self._mask_of(_batch_of(columns, batch.num_rows)))
            return _true_count(self._mask_of(self._completed(batch, 0, False)))
        except (ArrowException, OSError) as e:
            # the batch's deferred content checks run at its first column access, here
            raise named_error(e, self.fragment.path) from None

    def keep_value_spans(self) -> None:
        """Hand the fragment where this count found the compared column's values in each
        batch, when every surviving batch was counted directly on a view of the file."""
        spans, key = self._spans, self.file_key
        if spans is None or key is None or self._comparison is None \
                or self._spans_type is None or self.is_stream:
            return
        if any(spans[i] is None for i in self.batches):
            return
        name = self._comparison[0]
        known = self.fragment._value_spans.get(name)
        if known is not None and known[0] == key and known[1].equals(self._spans_type) \
                and len(known[2]) == len(spans):
            # batches an earlier count found and this one's filter ruled out stay known
            spans = [mine if mine is not None else theirs for mine, theirs in zip(spans, known[2])]
        self.fragment._value_spans[name] = (key, self._spans_type, spans)

    def _keep_span(self, batch_index: int, buf: Any, type_: T.DataType, start: int,
                   n: int) -> bool:
        """Record where batch `batch_index`'s compared values lie in the file, when `buf` is a
        view of the file as read (mapped); whether they were recorded."""
        if batch_index < 0 or not isinstance(self.reader, RecordBatchFileReader):
            return False
        at = self.reader.offset_in_file(buf)
        if at is None:
            return False
        if self._spans is None:
            self._spans = [None] * self.reader.num_record_batches
            self._spans_type = type_
        if batch_index < len(self._spans) and type_.equals(self._spans_type):
            self._spans[batch_index] = (at + start, n)
            return True
        return False

    def _direct_values(self, batch: RecordBatch
                       ) -> tuple[Buffer | None, T.DataType, int, int, Any] | None:
        """(values buffer, type, byte offset of the first value in it, values, the number as a
        one-value array of the column's type) of the column a `column op number` residual
        compares, when the count can run on its values (no mask, no batch made): a plain
        number column without nulls in the dataset's type, the number exact in it (no values:
        no buffer needed); None otherwise."""
        if self._comparison is None:
            return None
        name, op, value = self._comparison
        if name not in batch.schema.names:
            return None
        data = batch.column(name).data
        dtype = _COUNTED_TYPES.get(data.type.name)
        if dtype is None or data.null_count != 0:
            return None
        # a file's batches (and files of one schema) share their type objects: one equals()
        if data.type is not self._direct_type:
            if not data.type.equals(self.spec.dataset_schema.field(name).type):
                return None
            self._direct_type = data.type
        number = self._numbers.get(data.type.name, _UNSET)
        if number is _UNSET:
            number = self._numbers[data.type.name] = _number_in(value, dtype)
        if number is None:
            return None
        width = np.dtype(dtype).itemsize
        buf = data.buffers[1] if len(data.buffers) > 1 else None
        if data.length == 0:
            return None, data.type, 0, 0, number        # no values: nothing to count
        if buf is None or data.offset < 0 or data.offset > buf.size // width - data.length:
            return None                 # the general path reports the short buffer
        return buf, data.type, data.offset * width, data.length, number

    def _counted_directly(self, batch: RecordBatch, batch_index: int = -1) -> int | None:
        """The rows of `batch` passing a `column op number` residual, counted on the column's
        values (see _direct_values); None when they cannot be."""
        found = self._direct_values(batch)
        if found is None:
            return None
        buf, type_, start, n, number = found
        if n == 0:
            return 0
        assert buf is not None              # values need their buffer (_direct_values)
        dtype = _COUNTED_TYPES[type_.name]
        values = np.frombuffer(buf, dtype=dtype,  # type: ignore[call-overload]
                               count=n, offset=start)
        self._keep_span(batch_index, buf, type_, start, n)
        assert self._comparison is not None
        return int(count_compare(OP_CODES[self._comparison[1]], values, number))

    def count_surviving(self) -> tuple[int, PendingCount | None]:
        """Rows of the surviving batches the residual keeps: those counted here, and a
        PendingCount of the values found in the file as mapped, for a `column op number`
        residual counted on them (None: nothing left to count). The batches are read (their
        headers and the compared column checked) here either way."""
        assert isinstance(self.reader, RecordBatchFileReader) and self.residual is not None
        whole = self.reader.file_buffer() if self._comparison is not None else None
        total = 0
        spans: list[int] = []
        for i, batch in self.read_surviving():
            found = self._direct_values(batch) if whole is not None else None
            if found is not None:
                buf, type_, start, n, _ = found
                if n == 0:
                    continue
                assert buf is not None
                at = self.reader.offset_in_file(buf)
                width = np.dtype(_COUNTED_TYPES[type_.name]).itemsize
                if at is not None and (at + start) % width == 0 \
                        and self._keep_span(i, buf, type_, start, n):
                    spans += (at + start, n)
                    continue
            total += self.count_matching(batch, i)
        self.keep_value_spans()
        if not spans:
            return total, None
        # every span recorded is of the one type _spans_type (the dataset's), its number known
        assert whole is not None and self._comparison is not None and self._spans_type
        return total, PendingCount(whole, np.array(spans, dtype=np.int64),
                                   OP_CODES[self._comparison[1]],
                                   self._numbers[self._spans_type.name])

    # -- stage 4 and assembly -------------------------------------------------------------------
    def finish(self, batch: RecordBatch, batch_index: int, last: bool) -> list[RecordBatch]:
        """`batch` (as read) filtered, completed with partition and special columns, projected
        to the scan's outputs and split to its batch size."""
        spec = self.spec
        try:
            columns = self._file_columns(batch)
        except (ArrowException, OSError) as e:
            # the batch's deferred content checks run at its first column access, here
            raise named_error(e, self.fragment.path) from None
        n = batch.num_rows
        if self._filters_file_columns:
            # the filter reads file columns alone: the rows it drops are dropped before the
            # partition and special columns are made, at the length kept
            kept = _kept_rows(_batch_of(columns, n), self._mask_of)
            if kept is None:
                return []
            columns, n = dict(zip(columns, kept.columns)), kept.num_rows
        full = self._with_derived(columns, n, batch_index, last)
        if self.residual is not None and not self._filters_file_columns:
            kept = _kept_rows(full, self._mask_of)
            if kept is None:
                return []
            full = kept
        out_cols = []
        for name, source in spec.outputs:
            if isinstance(source, str):
                out_cols.append(full.column(source))
            else:
                value = source.evaluate(full)
                assert isinstance(value, Array)     # a batch's value is an Array
                out_cols.append(value)
        out = RecordBatch(spec.output_schema, [c.data for c in out_cols], full.num_rows)
        size = spec.batch_size
        if out.num_rows <= size:
            return [out]
        return [out.slice(o, size) for o in range(0, out.num_rows, size)]


def _batch_of(columns: dict[str, Array], n: int) -> RecordBatch:
    """A batch of n rows of `columns` (name -> column)."""
    if not columns:
        return RecordBatch(T.schema([]), [], n)
    return RecordBatch.from_arrays(list(columns.values()), names=list(columns))


def _kept_rows(batch: RecordBatch, mask_of: Callable[[RecordBatch], Array]
               ) -> RecordBatch | None:
    """The rows of `batch` that `mask_of(batch)` keeps (None: none). The columns are filtered
    one after another in this thread: a scan already decodes its batches in parallel."""
    mask = mask_of(batch)
    kept = _true_count(mask)
    if kept == 0:
        return None
    if kept == batch.num_rows:
        return batch
    selection = mask_selection(mask, batch.num_rows, "drop")
    return RecordBatch(batch.schema, [apply(c.data, selection) for c in batch.columns], kept)


def _true_count(mask: Array) -> int:
    """How many values of a boolean Array are true (nulls are not)."""
    data = mask.data
    if not mask.null_count and len(data.buffers) > 1 and data.buffers[1] is not None:
        return count_set_bits(data.buffers[1], data.offset, data.length)   # no unpacking
    if mask.null_count:
        mask = mask.fill_null(False)
    return int(np.count_nonzero(np.asarray(mask.to_numpy(zero_copy_only=False))))


def _field_index(schema: T.Schema, name: str) -> int:
    """The index of the field `name` of a file's schema, which must name it once."""
    i = schema.get_field_index(name)
    if i < 0:
        raise ArrowInvalid(f"Multiple matches for FieldRef.Name({name}) in {schema}")
    return i


def _project(reader: RecordBatchFileReader | RecordBatchStreamReader, included: list[int]
             ) -> None:
    """Read only the top-level fields `included` from now on: the footer (or schema message)
    already read is kept, so a file's footer is read once per scan."""
    decoder = reader.decoder
    assert decoder.info is not None
    decoder.options.included_fields = included
    decoder.set_schema(decoder.info, decoder.column_plan)


# the column types a `column op number` filter is counted on directly, as numpy dtypes
_COUNTED_TYPES: dict[str, Any] = {
    "int8": np.int8, "int16": np.int16, "int32": np.int32, "int64": np.int64,
    "uint8": np.uint8, "uint16": np.uint16, "uint32": np.uint32, "uint64": np.uint64,
    "float": np.float32, "double": np.float64}

_UNSET: Any = object()


def _number_in(value: int | float, dtype: Any) -> Any:
    """`value` as a one-value numpy array of `dtype` when it is exactly that number there (a
    direct count compares in the column's type), else None (the general path compares)."""
    if np.dtype(dtype).kind in "iu":
        if isinstance(value, float):
            return None                 # compared as doubles by pyarrow
        info = np.iinfo(dtype)
        if not info.min <= value <= info.max:
            return None
        return np.array([value], dtype=dtype)
    with np.errstate(over="ignore"):    # too large for float32: inf, declined below
        number = np.array([value], dtype=np.float64).astype(dtype)
    if value != value or float(number[0]) != value:
        return None                     # NaN, or not exact in the column's type
    return number


# the fixed-width types a partition value is repeated in by numpy (not through take())
_NUMPY_TYPES: dict[str, Any] = {
    "int8": np.int8, "int16": np.int16, "int32": np.int32, "int64": np.int64,
    "uint8": np.uint8, "uint16": np.uint16, "uint32": np.uint32, "uint64": np.uint64,
    "float": np.float32, "double": np.float64}

# the variable-width types a partition value is repeated in by its bytes, with their offsets
_OFFSET_TYPES: dict[str, Any] = {"string": np.int32, "binary": np.int32,
                                 "large_string": np.int64, "large_binary": np.int64}


# the bytes the openings of remote files kept for later scans may hold, in all (FileFragment:
# an opening keeps the object's last 64 KiB, its footer with them)
KEPT_OPENINGS_BYTES = 256 << 20


class _OpeningBudget:
    """The bytes held by the kept openings of remote files, bounded: past the bound, a file is
    opened by a request at each scan. An opening's bytes count until it is collected."""

    def __init__(self) -> None:
        self._held = 0
        self._lock = threading.Lock()

    def take(self, opening: RangeSource) -> bool:
        """Whether `opening` may be kept (its bytes then count until it is collected)."""
        n = opening.kept_bytes
        with self._lock:
            if self._held + n > KEPT_OPENINGS_BYTES:
                return False
            self._held += n
        weakref.finalize(opening, self._give_back, n)
        return True

    def _give_back(self, n: int) -> None:
        with self._lock:
            self._held -= n


_KEPT_OPENINGS = _OpeningBudget()


# the bytes of partition columns a scan keeps to share among its files (see _RepeatedValues)
REPEATED_VALUES_BYTES = 64 << 20


class _RepeatedValues:
    """The partition columns made for one scan, shared by every file with the same value: a
    hive tree has few values per level (20 dates, 3 countries) and many files, and making
    each file's columns anew is a fresh allocation, its pages faulted in, per file. At most
    `limit` bytes are kept; past that, columns are made per file."""

    def __init__(self, limit: int) -> None:
        self._limit = limit
        self._held = 0
        # (type, value's type, value, id of the dictionary) -> (column, the dictionary, kept
        # alive so that its id stays its own)
        self._columns: dict[Any, tuple[Array, Array | None]] = {}
        self._lock = threading.Lock()

    def column(self, value: Any, type_: T.DataType, n: int, dictionary: Array | None) -> Array:
        """`value` n times as an Array of `type_` (see _repeat)."""
        try:
            key = (type_, type(value), value, id(dictionary))
            hash(key)
        except TypeError:                   # an unhashable value: made for this file alone
            return _repeat(value, type_, n, dictionary)
        with self._lock:
            entry = self._columns.get(key)
            known = None if entry is None else entry[0]
            if known is not None and len(known) >= n:
                return known if len(known) == n else known.slice(0, n)
            # a longer batch (a filter keeps more rows): twice as long, so a scan makes few
            made = _repeat(value, type_, n if known is None else max(n, 2 * len(known)),
                           dictionary)
            size = made.nbytes - (0 if known is None else known.nbytes)
            if self._held + size <= self._limit:
                self._columns[key] = (made, dictionary)
                self._held += size
        return made if len(made) == n else made.slice(0, n)


def _repeat(value: Any, type_: T.DataType, n: int, dictionary: Array | None = None) -> Array:
    """`value` n times as an Array of `type_` (a dictionary type: indexes into `dictionary`
    when it holds the value)."""
    if value is None:
        return nulls(n, type_)
    if dictionary is not None and isinstance(type_, T.DictionaryType) \
            and dictionary.type.equals(type_.value_type):
        known = dictionary.to_pylist()
        index_dtype = _NUMPY_TYPES.get(str(type_.index_type))
        if value in known and index_dtype is not None:
            indices = array(np.full(n, known.index(value), dtype=index_dtype), type_.index_type)
            return Array(ArrayData(type_, n, 0, 0, [None, indices.data.buffers[1]],
                                   dictionary=dictionary.data))
    dtype = _NUMPY_TYPES.get(str(type_))
    if dtype is not None and isinstance(value, (int, float)) and not isinstance(value, bool):
        try:
            return array(np.full(n, value, dtype=dtype), type_)
        except (OverflowError, ValueError, TypeError):
            pass                        # out of the type's range: as take() reports it
    offsets_type = _OFFSET_TYPES.get(str(type_))
    if offsets_type is not None and isinstance(value, (str, bytes)):
        raw = value.encode() if isinstance(value, str) else value
        if isinstance(value, str) == str(type_).endswith("string") \
                and len(raw) * n <= np.iinfo(offsets_type).max:
            offsets = np.arange(n + 1, dtype=offsets_type) * offsets_type(len(raw))
            return Array(ArrayData(type_, n, 0, 0, [None, py_buffer(offsets),
                                                    py_buffer(raw * n)]))
    one = array([value], type_.value_type if isinstance(type_, T.DictionaryType) else type_)
    if isinstance(type_, T.DictionaryType):
        one = one.cast(type_)
    if n == 1:
        return one
    return one.take(np.zeros(n, dtype=np.int64))


def relative_to(path: str, base: str | None) -> str | None:
    """`path` relative to directory `base` with '/' separators, or None when not under it."""
    if base is None:
        return None
    norm_base = base.replace(os.sep, "/").rstrip("/")
    norm = path.replace(os.sep, "/")
    if norm_base and not norm.startswith(norm_base + "/"):
        return None
    return norm[len(norm_base) + 1:] if norm_base else norm.lstrip("/")


def kind_of(format: FileFormat) -> Literal["file", "stream", "auto"]:
    """The reading kind of a format."""
    if isinstance(format, _SniffedFormat):
        return "auto"
    return "stream" if format.is_stream else "file"
