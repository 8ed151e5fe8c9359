"""Record batches and tables.

A RecordBatch is a schema plus one ArrayData per column, all of the same length; a Table is a schema
plus a list of record batches. Columns are wrapped as Arrays only when asked for, so the IPC reader
creates a handful of objects per batch.
"""
from __future__ import annotations

from _collections_abc import Iterable  # as collections.abc; typing is slow to import

from ._core.arraydata import ArrayData, untrack_acyclic
from ._core.content_checks import run_pending_checks
from .array import Array, ChunkedArray, array, make_array
from . import pandas_shim as _pandas
from .errors import (ArrowCapacityError, ArrowIndexError, ArrowInvalid, ArrowKeyError,
                     ArrowTypeError)
from .types import Field, Schema, StructType
from .tableops import TabularOps, argument_data, chunk_slices, mask_selection

__all__ = ["RecordBatch", "Table", "concat_tables", "record_batch", "table"]

TYPE_CHECKING = False               # typing itself is not imported at run time (slow)
if TYPE_CHECKING:
    from typing import Any, Iterator

    from ._core.buffer import Buffer
    from .batch_reader import RecordBatchReader   # annotations only: the reader sits above the model
    from .ipc.options import IpcWriteOptions
    from .types import MetadataLike


# What one row of a column-less batch costs as a Python dict (an empty dict and its list slot).
_EMPTY_DICT_BYTES = 72


def _physical_memory() -> int:
    import os
    try:
        return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return 1 << 62


def _column_index(schema: Schema, i: int | str) -> int:
    if isinstance(i, str):
        j = schema.get_field_index(i)
        if j < 0:
            raise ArrowKeyError(f"no single column named {i!r}")
        return j
    n = len(schema)
    j = i + n if i < 0 else i
    if not 0 <= j < n:
        raise ArrowIndexError(f"column index {i} out of range for {n} columns")
    return j


def _schema_from_arrays(arrays: list[Array], names: list[str] | None, schema: Schema | None,
                       metadata: MetadataLike) -> Schema:
    if schema is not None:
        if len(schema) != len(arrays):
            raise ArrowInvalid(f"schema has {len(schema)} fields but {len(arrays)} arrays were given")
        for f, a in zip(schema, arrays):
            if f.type != a.type:
                raise ArrowTypeError(f"column {f.name!r}: schema says {f.type}, array is {a.type}")
        return schema if metadata is None else schema.with_metadata(metadata)
    if names is None or len(names) != len(arrays):
        raise ArrowInvalid("from_arrays needs one name per array (or a schema)")
    return Schema([Field(n, a.type) for n, a in zip(names, arrays)], metadata)


class RecordBatch(TabularOps):
    """Equal-length columns under a schema."""
    __slots__ = ("schema", "_cols", "num_rows", "_pending", "_where")
    num_rows: int                   # a slot here; Table computes it (TabularOps declares both)

    def __init__(self, schema: Schema, columns: list[ArrayData], num_rows: int,
                 pending: Any = None, where: str = "record batch") -> None:
        # Internal constructor: columns are ArrayData; use from_arrays / from_pydict instead.
        # `pending` holds the O(n) structural checks of a batch read from IPC; they run before
        # any column data is handed out (the gate is the `_columns` property), and what they
        # raise names the batch as `where` does.
        self.schema = schema
        self._cols = columns
        self.num_rows = num_rows
        self._pending = pending
        self._where = where
        if type(self) is RecordBatch:
            # a schema, ArrayData and checks: no cycle can pass through a batch, and readers
            # make thousands of them (the collector's traversals cost more than the reading)
            untrack_acyclic(self)

    @property
    def _columns(self) -> list[ArrayData]:
        pending = self._pending
        if pending is not None:
            # Cleared only after the checks pass: a second thread arriving meanwhile (the checks
            # release the GIL) runs them too instead of getting unchecked columns.
            run_pending_checks(pending, self._where)
            self._pending = None
        return self._cols

    # -- construction ---------------------------------------------------------------------------
    @classmethod
    def from_arrays(cls, arrays: list[Any], names: list[str] | None = None,
                    schema: Schema | None = None, metadata: MetadataLike = None) -> RecordBatch:
        """A batch from equal-length arrays (or sequences), named by `names` or typed by `schema`."""
        arrays = [a if isinstance(a, Array) else array(a, schema.field(i).type if schema else None)
                  for i, a in enumerate(arrays)]
        sch = _schema_from_arrays(arrays, names, schema, metadata)
        n = len(arrays[0]) if arrays else 0
        for f, a in zip(sch, arrays):
            if len(a) != n:
                raise ArrowInvalid(f"column {f.name!r} has {len(a)} rows, expected {n}")
        return cls(sch, [a.data for a in arrays], n)

    @classmethod
    def from_pydict(cls, mapping: dict[str, Any], schema: Schema | None = None,
                    metadata: MetadataLike = None) -> RecordBatch:
        """A batch from a dict of column name to values."""
        if schema is not None:
            arrays = [array(mapping[f.name], f.type) for f in schema]
            return cls.from_arrays(arrays, schema=schema, metadata=metadata)
        names = list(mapping.keys())
        return cls.from_arrays([array(v) for v in mapping.values()], names=names, metadata=metadata)

    @classmethod
    def from_pylist(cls, mapping: list[dict[str, Any]], schema: Schema | None = None,
                    metadata: MetadataLike = None) -> RecordBatch:
        """A RecordBatch from a list of rows, each a dict of column name to value."""
        names = list(schema.names) if schema is not None else list(dict.fromkeys(
            k for r in mapping for k in r))
        return cls.from_pydict({n: [r.get(n) for r in mapping] for n in names}, schema, metadata)

    @classmethod
    def from_struct_array(cls, arr: Array) -> RecordBatch:
        """A batch whose columns are the children of a struct array."""
        d = arr.data
        if not isinstance(d.type, StructType):
            raise ArrowTypeError(f"expected a struct array, got {d.type}")
        cols = [c.slice(d.offset, d.length) for c in d.children]
        return cls(Schema(d.type.fields), cols, d.length)

    # -- shape and access -----------------------------------------------------------------------
    @property
    def num_columns(self) -> int:
        """The number of columns."""
        return len(self._cols)

    @property
    def column_names(self) -> list[str]:
        """The column names, in order."""
        return self.schema.names

    @property
    def columns(self) -> list[Array]:
        """The columns as Arrays."""
        return [make_array(c) for c in self._columns]

    def column(self, i: int | str) -> Array:
        """The column at index `i`, or the one named `i`."""
        return make_array(self._columns[_column_index(self.schema, i)])

    def field(self, i: int | str) -> Field:
        """The schema field at index `i`, or the one named `i`."""
        return self.schema.field(i)

    def __getitem__(self, i: int | str | slice) -> Any:
        if isinstance(i, slice):
            start, stop, _ = i.indices(self.num_rows)
            return self.slice(start, max(0, stop - start))
        return self.column(i)

    def __len__(self) -> int:
        return self.num_rows

    @property
    def shape(self) -> tuple[int, int]:
        """(number of rows, number of columns)."""
        return (self.num_rows, self.num_columns)

    @property
    def nbytes(self) -> int:
        """The bytes the columns' buffers span (sliced views count their part)."""
        return sum(make_array(c).nbytes for c in self._columns)

    def slice(self, offset: int = 0, length: int | None = None) -> RecordBatch:
        """A zero-copy view of `length` rows (to the end by default) from `offset`."""
        if offset < 0:
            raise ArrowIndexError(f"slice offset must be >= 0, got {offset}")
        offset = min(offset, self.num_rows)
        length = self.num_rows - offset if length is None else max(0, min(length, self.num_rows - offset))
        cols = [c.slice(offset, length) for c in self._columns]
        return RecordBatch(self.schema, cols, length)

    # -- operations (the shared ones are in arrowipc/tableops.py) ------------------------------
    def _with_columns(self, schema: Schema, columns: list[Any],
                      num_rows: int | None = None) -> RecordBatch:
        return RecordBatch(schema, [c.data for c in columns],
                           self.num_rows if num_rows is None else num_rows)

    @staticmethod
    def _as_column(column: Any, type: Any = None) -> Array:
        if isinstance(column, ChunkedArray):
            return column.combine_chunks()
        return array(column, type)

    def filter(self, mask: Any, null_selection_behavior: str = "drop") -> RecordBatch:
        """The rows where the boolean `mask` is true (null slots dropped, or null rows with
        null_selection_behavior="emit_null")."""
        from .selection import apply, parallel_map
        sel = mask_selection(mask, self.num_rows, null_selection_behavior)
        cols = parallel_map(lambda c: apply(c, sel), self._columns, self.num_rows)
        return RecordBatch(self.schema, cols, sel.count)

    def take(self, indices: Any) -> RecordBatch:
        """The rows at `indices`."""
        from .selection import Selection, apply, parallel_map
        sel = Selection.from_indices(argument_data(indices), self.num_rows)
        cols = parallel_map(lambda c: apply(c, sel), self._columns, sel.count)
        return RecordBatch(self.schema, cols, sel.count)

    def replace_schema_metadata(self, metadata: MetadataLike = None) -> RecordBatch:
        """The same columns under a schema with `metadata`."""
        return RecordBatch(self.schema.with_metadata(metadata), self._columns, self.num_rows)

    # -- conversion -----------------------------------------------------------------------------
    def to_pydict(self, *, maps_as_pydicts: str | None = None) -> dict[str, list[Any]]:
        """Column name -> list of Python values (see Array.to_pylist for maps_as_pydicts)."""
        return {f.name: make_array(c).to_pylist(maps_as_pydicts=maps_as_pydicts)
                for f, c in zip(self.schema, self._columns)}

    def to_pylist(self, *, maps_as_pydicts: str | None = None) -> list[dict[str, Any]]:
        """One dict per row (see Array.to_pylist for maps_as_pydicts)."""
        names = self.schema.names
        cols = [make_array(c).to_pylist(maps_as_pydicts=maps_as_pydicts) for c in self._columns]
        try:
            if not cols:
                # a batch without columns can claim any number of rows: refuse at once what
                # cannot fit in this machine's memory rather than grow until the OS kills us
                if self.num_rows * _EMPTY_DICT_BYTES > _physical_memory():
                    raise MemoryError
                [None] * self.num_rows          # fails at once when the rows cannot fit
                return [{} for _ in range(self.num_rows)]
            return [dict(zip(names, row)) for row in zip(*cols)]
        except MemoryError:
            raise ArrowCapacityError(f"record batch: {self.num_rows} rows do not fit in memory as "
                                     f"Python dicts") from None

    # pandas (arrowipc/pandas_shim.py: pyarrow's signatures; the conversion loads on first use)
    to_pandas = _pandas.batch_to_pandas
    from_pandas = classmethod(_pandas.batch_from_pandas)

    def to_struct_array(self) -> Array:
        """The batch as one struct array (zero-copy)."""
        return make_array(self._as_struct_data())

    def _as_struct_data(self) -> ArrayData:
        return ArrayData(StructType(self.schema.fields), self.num_rows, 0, 0, [None],
                         list(self._columns))

    def equals(self, other: object, check_metadata: bool = False) -> bool:
        """Same schema and values; `other` may be any object speaking the Arrow PyCapsule
        interface (a pyarrow.RecordBatch...)."""
        if not isinstance(other, RecordBatch):
            from .interop import peer_as_ours
            other = peer_as_ours(other, "batch")
        if not isinstance(other, RecordBatch) or not self.schema.equals(other.schema, check_metadata):
            return False
        return other.num_rows == self.num_rows and all(
            make_array(a).equals(make_array(b)) for a, b in zip(self._columns, other._columns))

    def __eq__(self, other: object) -> bool:
        return self.equals(other)

    __hash__ = None  # type: ignore[assignment]   # mutable-looking containers are unhashable

    def validate(self, full: bool = False) -> None:
        """Check the columns' structure (and values, with `full`); ArrowInvalid if broken."""
        from .validate import validate_array
        for f, c in zip(self.schema, self._columns):
            if c.length != self.num_rows:
                raise ArrowInvalid(f"column {f.name!r} has {c.length} rows, the batch has {self.num_rows}")
            validate_array(c, full=full, where=f"column {f.name!r}")

    def serialize(self, options: IpcWriteOptions | None = None) -> Buffer:
        """The framed IPC RecordBatch message (metadata and body) as one Buffer."""
        from ._upcalls import serialize_record_batch
        return serialize_record_batch(self, options)

    # -- interop --------------------------------------------------------------------------------
    def __arrow_c_schema__(self) -> object:
        return self.schema.__arrow_c_schema__()

    def __arrow_c_array__(self, requested_schema: object = None) -> tuple[object, object]:
        from .interop import export_array
        return export_array(self._as_struct_data(),
                            Field("", StructType(self.schema.fields), False, self.schema.metadata),
                            requested_schema)

    def __repr__(self) -> str:
        # pyarrow's form (str() too): the schema and the first ten columns' values
        return self.to_string(preview_cols=10)


class Table(TabularOps):
    """A schema and a sequence of record batches sharing it."""
    __slots__ = ("schema", "_batches")

    def __init__(self, schema: Schema, batches: list[RecordBatch]) -> None:
        self.schema = schema
        self._batches = batches

    @classmethod
    def from_batches(cls, batches: Iterable[RecordBatch | Any], schema: Schema | None = None) -> Table:
        """A Table of record batches sharing one schema (needed when there are none)."""
        batches = [b if isinstance(b, RecordBatch) else record_batch(b) for b in batches]
        if schema is None:
            if not batches:
                raise ArrowInvalid("from_batches needs a schema when there are no batches")
            schema = batches[0].schema
        for i, b in enumerate(batches):
            if not b.schema.equals(schema):
                raise ArrowInvalid(f"batch {i} has schema\n{b.schema}\nexpected\n{schema}")
        return cls(schema, batches)

    @classmethod
    def from_arrays(cls, arrays: list[Any], names: list[str] | None = None,
                    schema: Schema | None = None, metadata: MetadataLike = None) -> Table:
        """A Table from equal-length arrays or chunked arrays, named by `names` or typed by `schema`."""
        if arrays and all(isinstance(a, ChunkedArray) for a in arrays):
            sch = _schema_from_arrays(arrays, names, schema, metadata)
            return cls.from_batches(
                [RecordBatch.from_arrays(list(chunks), schema=sch)
                 for chunks in _aligned_chunks(arrays)], sch)
        b = RecordBatch.from_arrays(arrays, names, schema, metadata)
        return cls(b.schema, [b])

    @classmethod
    def from_pydict(cls, mapping: dict[str, Any], schema: Schema | None = None,
                    metadata: MetadataLike = None) -> Table:
        """A Table from a dict of column name to values."""
        b = RecordBatch.from_pydict(mapping, schema, metadata)
        return cls(b.schema, [b])

    @classmethod
    def from_pylist(cls, mapping: list[dict[str, Any]], schema: Schema | None = None,
                    metadata: MetadataLike = None) -> Table:
        """A Table from a list of rows, each a dict of column name to value."""
        b = RecordBatch.from_pylist(mapping, schema, metadata)
        return cls(b.schema, [b])

    @property
    def num_rows(self) -> int:
        """The number of rows, over all batches."""
        return sum(b.num_rows for b in self._batches)

    @property
    def num_columns(self) -> int:
        """The number of columns."""
        return len(self.schema)

    @property
    def column_names(self) -> list[str]:
        """The column names, in order."""
        return self.schema.names

    @property
    def shape(self) -> tuple[int, int]:
        """(number of rows, number of columns)."""
        return (self.num_rows, self.num_columns)

    def __len__(self) -> int:
        return self.num_rows

    @property
    def columns(self) -> list[ChunkedArray]:
        """The columns as ChunkedArrays (one chunk per batch)."""
        return [self.column(i) for i in range(len(self.schema))]

    def column(self, i: int | str) -> ChunkedArray:
        """The column at index `i`, or the one named `i`, as a ChunkedArray."""
        j = _column_index(self.schema, i)
        ca = ChunkedArray([b.column(j) for b in self._batches], self.schema.field(j).type)
        ca._name = self.schema.field(j).name
        return ca

    def __getitem__(self, i: int | str) -> ChunkedArray:
        return self.column(i)

    def field(self, i: int | str) -> Field:
        """The schema field at index `i`, or the one named `i`."""
        return self.schema.field(i)

    @property
    def nbytes(self) -> int:
        """The bytes the batches' buffers span."""
        return sum(b.nbytes for b in self._batches)

    def to_batches(self, max_chunksize: int | None = None) -> list[RecordBatch]:
        """The record batches, split to at most `max_chunksize` rows each when given; as pyarrow,
        empty batches after the last row are left out (all of them in a table of no rows)."""
        if max_chunksize is not None and max_chunksize <= 0:
            raise ValueError(f"'max_chunksize' should be strictly positive, got {max_chunksize}")
        batches = list(self._batches)
        while batches and batches[-1].num_rows == 0:
            batches.pop()
        if max_chunksize is None:
            return batches
        out: list[RecordBatch] = []
        for b in batches:
            if b.num_rows == 0:
                out.append(b)
            for off in range(0, b.num_rows, max_chunksize):
                out.append(b.slice(off, max_chunksize))
        return out

    def to_reader(self, max_chunksize: int | None = None) -> RecordBatchReader:
        """A RecordBatchReader over the batches (split to at most max_chunksize rows)."""
        from ._upcalls import RecordBatchReader
        return RecordBatchReader._make(self.schema, self.to_batches(max_chunksize))

    def slice(self, offset: int = 0, length: int | None = None) -> Table:
        """A zero-copy view of `length` rows (to the end by default) from `offset`."""
        if offset < 0:
            raise ArrowIndexError(f"slice offset must be >= 0, got {offset}")
        pieces = chunk_slices([b.num_rows for b in self._batches], offset, length)
        return Table(self.schema, [self._batches[k].slice(lo, n) for k, lo, n in pieces])

    # -- operations (the shared ones are in arrowipc/tableops.py) ------------------------------
    def _with_columns(self, schema: Schema, columns: list[Any],
                      num_rows: int | None = None) -> Table:
        if not columns:
            n = self.num_rows if num_rows is None else num_rows
            return Table(schema, [RecordBatch(schema, [], b.num_rows) for b in self._batches]
                         if num_rows is None else [RecordBatch(schema, [], n)])
        return Table.from_arrays(columns, schema=schema)

    @staticmethod
    def _as_column(column: Any, type: Any = None) -> ChunkedArray:
        from .array import chunked_array
        if isinstance(column, ChunkedArray):
            return column
        if isinstance(column, Array):
            return ChunkedArray([column], column.type)
        if isinstance(column, list) and column and isinstance(column[0], (list, Array)):
            return chunked_array(column, type)
        return ChunkedArray([array(column, type)])

    def filter(self, mask: Any, null_selection_behavior: str = "drop") -> Table:
        """The rows where the boolean `mask` is true, batch by batch (null mask slots dropped,
        or null rows with null_selection_behavior="emit_null")."""
        from .selection import apply, parallel_map
        sel = mask_selection(mask, self.num_rows, null_selection_behavior)
        if sel.mask is None:
            one = self.combine_chunks()
            batch = one._batches[0] if one._batches else RecordBatch(self.schema, [], 0)
            return Table(self.schema, [batch.filter(mask, null_selection_behavior)])
        # one task per (batch, column), the batch's part of the mask shared by its columns
        parts, tasks, pos = [], [], 0
        for b in self._batches:
            part = sel.slice(pos, pos + b.num_rows)
            parts.append(part)
            tasks += [(c, part) for c in b._columns]
            pos += b.num_rows
        cols = parallel_map(lambda t: apply(*t), tasks, self.num_rows)
        out, k = [], 0
        for b, part in zip(self._batches, parts):
            out.append(RecordBatch(self.schema, cols[k:k + b.num_columns], part.count))
            k += b.num_columns
        return Table(self.schema, out)

    def take(self, indices: Any) -> Table:
        """The rows at `indices`, as a one-batch table."""
        if len(self._batches) <= 1:
            one = self if self._batches else self.schema.empty_table()
            return Table(self.schema, [one._batches[0].take(indices)])
        # Each batch gives the rows it holds, in order; the parts (as many rows as asked for,
        # not the whole table) are concatenated and put in the asked order by one more take.
        from ._core import select_kernels as _k
        from .concat import concat_array_data
        from .selection import Selection, apply, parallel_map
        sel = Selection.from_indices(argument_data(indices), self.num_rows)
        starts = [0]
        for b in self._batches:
            starts.append(starts[-1] + b.num_rows)
        parts, perm = _k.split_selection(sel.indices(), sel.count, starts)
        picks = [Selection(buf, count, False) for buf, count in parts]

        def column(i: int) -> Any:
            datas = [b._columns[i] for b in self._batches]
            if any(d.dictionary is not datas[0].dictionary for d in datas):
                # dictionaries differ: one unified column, then the take
                from .selection import combined_data
                return apply(combined_data([c.data for c in self.column(i).chunks],
                                           self.schema.field(i).type), sel)
            pieces = [apply(d, pick) for d, pick in zip(datas, picks)]
            return _k.take(concat_array_data(pieces), perm, sel.count, sel.has_nulls)
        cols = parallel_map(column, list(range(self.num_columns)), sel.count)
        return Table(self.schema, [RecordBatch(self.schema, cols, sel.count)])

    def combine_chunks(self, memory_pool: Any = None) -> Table:
        """One batch: every column's chunks concatenated (dictionaries unified)."""
        if len(self._batches) == 1:
            return self
        from .selection import combined_data, parallel_map
        cols = parallel_map(lambda ca: combined_data([c.data for c in ca.chunks], ca.type),
                            list(self.itercolumns()), self.num_rows)
        if not self._batches:
            from .from_python import array_data_from_python
            cols = [array_data_from_python([], f.type) for f in self.schema]
        return Table(self.schema, [RecordBatch(self.schema, cols, self.num_rows)])

    def unify_dictionaries(self, memory_pool: Any = None) -> Table:
        """Dictionary columns re-encoded against one dictionary per column."""
        from .types import DictionaryType
        if not any(isinstance(f.type, DictionaryType) for f in self.schema):
            return self
        cols = [c.unify_dictionaries() if isinstance(c.type, DictionaryType) else c
                for c in self.itercolumns()]
        return Table.from_arrays(cols, schema=self.schema)

    def to_pydict(self, *, maps_as_pydicts: str | None = None) -> dict[str, list[Any]]:
        """Column name -> list of Python values (see Array.to_pylist for maps_as_pydicts)."""
        return {f.name: self.column(i).to_pylist(maps_as_pydicts=maps_as_pydicts)
                for i, f in enumerate(self.schema)}

    def to_pylist(self, *, maps_as_pydicts: str | None = None) -> list[dict[str, Any]]:
        """One dict per row (see Array.to_pylist for maps_as_pydicts)."""
        out: list[dict[str, Any]] = []
        for b in self._batches:
            out += b.to_pylist(maps_as_pydicts=maps_as_pydicts)
        return out

    # pandas (arrowipc/pandas_shim.py: pyarrow's signatures; the conversion loads on first use)
    to_pandas = _pandas.table_to_pandas
    from_pandas = classmethod(_pandas.table_from_pandas)

    def replace_schema_metadata(self, metadata: MetadataLike = None) -> Table:
        """The same batches under a schema with `metadata`."""
        sch = self.schema.with_metadata(metadata)
        return Table(sch, [RecordBatch(sch, b._columns, b.num_rows) for b in self._batches])

    def equals(self, other: object, check_metadata: bool = False) -> bool:
        """Same schema and values; `other` may be any object speaking the Arrow PyCapsule
        interface (a pyarrow.Table...)."""
        if not isinstance(other, Table):
            from .interop import peer_as_ours
            other = peer_as_ours(other, "table")
        if not isinstance(other, Table) or not self.schema.equals(other.schema, check_metadata):
            return False
        return other.num_rows == self.num_rows and all(
            self.column(i).equals(other.column(i)) for i in range(self.num_columns))

    def __eq__(self, other: object) -> bool:
        return self.equals(other)

    __hash__ = None  # type: ignore[assignment]   # mutable-looking containers are unhashable

    def validate(self, full: bool = False) -> None:
        """Validate every batch (see RecordBatch.validate)."""
        for b in self._batches:
            b.validate(full=full)

    def __arrow_c_schema__(self) -> object:
        return self.schema.__arrow_c_schema__()

    def __arrow_c_stream__(self, requested_schema: object = None) -> object:
        from .interop import export_stream
        return export_stream(self.schema, iter(self._batches), requested_schema)

    def __repr__(self) -> str:
        # pyarrow's form (str() too): the schema and the first ten columns' values
        return self.to_string(preview_cols=10)


def _aligned_chunks(chunked: list[ChunkedArray]) -> Iterator[list[Array]]:
    """Re-chunk several ChunkedArrays of equal length to common chunk boundaries."""
    seen: set[int] = set()
    for ca in chunked:
        pos = 0
        for c in ca.chunks:
            pos += len(c)
            seen.add(pos)
    bounds = sorted(b for b in seen if b > 0)
    if not bounds and all(ca.chunks for ca in chunked):
        # no rows: one empty batch, as pyarrow keeps its empty chunks (and their dictionaries)
        yield [ca.chunks[0] for ca in chunked]
        return
    start = 0
    for end in bounds:
        yield [_chunked_slice(ca, start, end - start) for ca in chunked]
        start = end


def _chunked_slice(ca: ChunkedArray, offset: int, length: int) -> Array:
    pos = 0
    for c in ca.chunks:
        if pos <= offset < pos + len(c) and offset + length <= pos + len(c):
            return c.slice(offset - pos, length)
        pos += len(c)
    return array(ca.to_pylist()[offset:offset + length], ca.type)


def record_batch(data: Any, names: list[str] | None = None, schema: Schema | None = None,
                 metadata: MetadataLike = None) -> RecordBatch:
    """A RecordBatch from arrays, a dict of columns, or any __arrow_c_array__ exporter."""
    if isinstance(data, RecordBatch):
        return data
    if _pandas.is_pandas_dataframe(data):
        return RecordBatch.from_pandas(data, schema=schema)
    if hasattr(data, "__arrow_c_array__"):
        from .interop import import_record_batch
        return import_record_batch(data)
    if isinstance(data, dict):
        return RecordBatch.from_pydict(data, schema, metadata)
    return RecordBatch.from_arrays(list(data), names, schema, metadata)


def table(data: Any, names: list[str] | None = None, schema: Schema | None = None,
          metadata: MetadataLike = None) -> Table:
    """A Table from a dict of columns, arrays, or any __arrow_c_stream__/__arrow_c_array__ exporter."""
    if isinstance(data, Table):
        return data
    if isinstance(data, RecordBatch):
        return Table(data.schema, [data])
    if _pandas.is_pandas_dataframe(data):
        return Table.from_pandas(data, schema=schema)
    if hasattr(data, "__arrow_c_stream__"):
        from .interop import import_stream
        sch, batches = import_stream(data)
        return Table(sch, list(batches))
    if hasattr(data, "__arrow_c_array__"):
        b = record_batch(data)
        return Table(b.schema, [b])
    if isinstance(data, dict):
        return Table.from_pydict(data, schema, metadata)
    return Table.from_arrays(list(data), names, schema, metadata)


def concat_tables(tables: Iterable[Table]) -> Table:
    """One Table holding the batches of `tables` (same schema), without copying."""
    tables = list(tables)
    if not tables:
        raise ArrowInvalid("concat_tables needs at least one table")
    return Table.from_batches([b for t in tables for b in t._batches], tables[0].schema)


from . import _upcalls                              # noqa: E402   (Schema.empty_table, the pandas shim)
_upcalls.register(__name__, RecordBatch=RecordBatch, Table=Table)
