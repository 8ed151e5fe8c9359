"""Record batches and tables.

A RecordBatch is a schema plus one ArrayData per column, all of the same length; a Table is a schema
plus a list of record batches. Columns are wrapped as Arrays only when asked for, so the IPC reader
creates a handful of objects per batch.
"""
from __future__ import annotations

import threading
from _collections_abc import Iterable, Sequence  # as collections.abc; typing is slow to import

from ._core.arraydata import ArrayData, RecordBatchFields, untrack_acyclic
from ._core.content_checks import run_pending_checks
from .array import (Array, ChunkedArray, argument_data, array, chunk_slices, is_pandas_dataframe,
                    make_array, mask_selection, nulls, slice_rows)
from .errors import (ArrowCapacityError, ArrowIndexError, ArrowInvalid, ArrowKeyError,
                     ArrowNotImplementedError, ArrowTypeError)
from .types import Field, Schema, StructType

__all__ = ["RecordBatch", "Table", "TableGroupBy", "concat_tables", "record_batch", "table"]

TYPE_CHECKING = False               # typing itself is not imported at run time (slow)
if TYPE_CHECKING:
    from typing import Any, Iterator

    from typing_extensions import Self

    from . import pandas_shim as _pandas
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


# -- what batches and tables share -----------------------------------------------------------------

def _field_of(field_: Any) -> Field | None:
    """The Field that add/append/set_column's `field_` names: ours, or another library's
    (pyarrow's...) imported through the PyCapsule interface; None for a column name."""
    if isinstance(field_, str):
        return None
    if isinstance(field_, Field):
        return field_
    from .data.cschema import peer_as_ours
    ours: Field | None = peer_as_ours(field_, "field")
    if ours is None:
        # pyarrow's builtins: a ValueError for a type or schema (pa.field refuses to give one
        # a second type), a TypeError for anything else
        error = ArrowInvalid if hasattr(field_, "__arrow_c_schema__") else ArrowTypeError
        raise error(f"field_ must be a str or a Field, got {type(field_).__name__}")
    return ours


def _is_chunk(obj: object) -> bool:
    """Whether `obj`, an item of a column given as a list, is a chunk (a list of values, an
    Array, any __arrow_c_array__ exporter, a numpy array) rather than a value."""
    return (isinstance(obj, (list, Array)) or hasattr(obj, "__arrow_c_array__")
            or type(obj).__name__ == "ndarray")


class TabularOps:
    """Column editing, selection, casts and printing shared by RecordBatch and Table."""
    __slots__ = ()

    # subclasses: _with_columns(schema, columns) builds the same kind of object from columns of
    # their own kind (Arrays for a batch, ChunkedArrays for a table); _as_column(x) converts.
    # Declared here for type checkers:
    schema: Schema
    # what pyarrow calls the object in its messages, and the builtin it raises when an added
    # column's type is not its field's (ArrowInvalid for a table, ArrowTypeError for a batch)
    _noun: str
    _field_mismatch: type[Exception]
    if TYPE_CHECKING:
        @property
        def num_rows(self) -> int: ...
        @property
        def num_columns(self) -> int: ...
        def column(self, i: int | str) -> Any: ...
        def _with_columns(self, schema: Schema, columns: list[Any],
                          num_rows: int | None = None) -> Self: ...
        @staticmethod
        def _as_column(column: Any, type: Any = None) -> Any: ...
        def take(self, indices: Any) -> Self: ...

    @property
    def is_cpu(self) -> bool:
        """True: every buffer is in CPU memory (pyarrow's property; no other device here)."""
        return True

    def to_tensor(self, null_to_nan: bool = False, row_major: bool = True,
                  memory_pool: Any = None) -> Any:
        """The columns as a 2-D Tensor (rows × columns) of their common type (integers and
        floats, promoted as pyarrow merges them: int32 beside float32 is float64), row-major
        or column-major; nulls are an ArrowTypeError unless null_to_nan (then NaN, in a float
        type), as pyarrow's to_tensor."""
        import numpy as np

        from ._core.buffer import py_buffer
        from .tensor import Tensor, numpy_dtype_of
        from .types import float32
        from .unify import unify_types
        columns = [self.column(i) for i in range(self.num_columns)]
        for f in self.schema:
            if not (getattr(f.type, "is_integer", False) or f.type.name in (
                    "halffloat", "float", "double")):
                raise ArrowTypeError(f"DataType is not supported: {f.type}")
        if not null_to_nan and any(c.null_count for c in columns):
            raise ArrowTypeError("Can only convert a Table or RecordBatch with no nulls. Set "
                                 "null_to_nan to true to convert nulls to NaN")
        target = self.schema.field(0).type if columns else float32()
        for f in list(self.schema)[1:]:
            if f.type != target and "halffloat" in (f.type.name, target.name):
                raise ArrowNotImplementedError("Casting from or to halffloat is not supported.")
            target = unify_types(target, f.type, "permissive", f.name)
        if getattr(target, "is_integer", False) and null_to_nan:
            target = unify_types(target, float32(), "permissive")
        out = np.empty((self.num_rows, len(columns)), numpy_dtype_of(target),
                       order="C" if row_major else "F")
        for j, column in enumerate(columns):
            values = column.cast(target) if column.type != target else column
            out[:, j] = values.to_numpy(zero_copy_only=False) if column.null_count == 0 else \
                np.where(np.asarray(column.is_valid()), values.fill_null(0).to_numpy(), np.nan)
        if not out.size:            # no values: pyarrow's strides are the row-major ones
            item = out.dtype.itemsize
            return Tensor._make(target, py_buffer(b""), out.shape, (item * out.shape[1], item))
        return Tensor._over(out)            # row- or column-major as made, zero-copy

    def itercolumns(self) -> Iterator[Any]:
        """The columns, one by one."""
        for i in range(self.num_columns):
            yield self.column(i)

    def _index_for(self, i: Any, what: str) -> int:
        n = self.num_columns
        if not isinstance(i, int) or not 0 <= i < n:
            raise ArrowInvalid(f"Invalid column index to {what} field.")
        return i

    def sort_by(self, sorting: str | Sequence[tuple[str, str] | tuple[str, str, str]],
                **kwargs: Any) -> Self:
        """The rows ordered by `sorting`: a column name (ascending) or a list of (name,
        "ascending" | "descending"[, "at_start" | "at_end"]); `null_placement=` places every
        key's nulls ("at_end" by default, after NaNs). Rows equal on every key keep their order
        (pyarrow's sort_by)."""
        from .data.sorting import sort_indices, sort_keys     # numpy: imported when first sorting
        unknown = sorted(set(kwargs) - {"null_placement"})
        if unknown:
            raise TypeError(f"sort_by() got an unexpected keyword argument '{unknown[0]}'")
        keys = sort_keys(sorting, kwargs.get("null_placement"))
        columns = []
        for name, _, _ in keys:
            if name not in self.schema.names:
                raise ArrowInvalid(f"Invalid sort key column: No match for "
                                   f"FieldRef.Name({name}) in {self.schema}")
            col = self.column(name)
            columns.append([c.data for c in getattr(col, "chunks", [col])])
        return self.take(sort_indices(columns, keys, self.num_rows))

    def select(self, columns: str | int | Iterable[str | int]) -> Self:
        """The named (or numbered) columns, in the order given."""
        if isinstance(columns, (str, int)):
            columns = [columns]
        idx = []
        for c in columns:
            if isinstance(c, str):
                j = self.schema.get_field_index(c)
                if j < 0:
                    raise KeyError(f'Field "{c}" does not exist in schema')
            else:
                j = c + self.num_columns if c < 0 else c
                if not 0 <= j < self.num_columns:
                    raise ArrowIndexError(f"column index {c} out of range for "
                                          f"{self.num_columns} columns")
            idx.append(j)
        from .types import Schema
        sch = Schema([self.schema.field(j) for j in idx], self.schema.metadata)
        return self._with_columns(sch, [self.column(j) for j in idx])

    def drop_columns(self, columns: str | Iterable[str]) -> Self:
        """Without the named columns (KeyError when one is missing)."""
        if isinstance(columns, str):
            columns = [columns]
        drop = set()
        for c in columns:
            found = self.schema.get_all_field_indices(c)
            if not found:
                raise KeyError(f"Column {c!r} not found")
            drop.update(found)
        keep = [i for i in range(self.num_columns) if i not in drop]
        return self.select(keep)

    def rename_columns(self, names: list[str] | dict[str, str]) -> Self:
        """The columns renamed: a list of every new name, or a dict of old name to new."""
        from .types import Schema
        if isinstance(names, dict):
            for old in names:
                if old not in self.schema.names:
                    raise KeyError(f"Column {old!r} not found")
            new = [names.get(f.name, f.name) for f in self.schema]
        else:
            new = list(names)
            if len(new) != self.num_columns:
                raise ArrowInvalid(f"tried to rename a table of {self.num_columns} columns but "
                                   f"only {len(new)} names were provided")
        # pyarrow's result has no schema metadata
        sch = Schema([f.with_name(n) for f, n in zip(self.schema, new)])
        return self._with_columns(sch, list(self.itercolumns()))

    def add_column(self, i: int, field_: str | Field, column: Any) -> Self:
        """A new column inserted at position i. `field_` is a name or a Field (ours, or
        another library's: pyarrow's...); `column` an Array or ChunkedArray (ours or another
        library's), a list of chunks (a table's), or values."""
        if not isinstance(i, int) or not 0 <= i <= self.num_columns:
            raise ArrowInvalid("Invalid column index to add field.")
        return self._insert(i, field_, column, replace=False)

    def append_column(self, field_: str | Field, column: Any) -> Self:
        """A new column at the end (`field_` and `column` as add_column takes them)."""
        return self._insert(self.num_columns, field_, column, replace=False)

    def set_column(self, i: int, field_: str | Field, column: Any) -> Self:
        """Column i replaced (`field_` and `column` as add_column takes them)."""
        self._index_for(i, "set")
        return self._insert(i, field_, column, replace=True)

    def remove_column(self, i: int) -> Self:
        """Without column i."""
        self._index_for(i, "remove")
        return self.select([j for j in range(self.num_columns) if j != i])

    def _insert(self, i: int, field_: str | Field, column: Any, replace: bool) -> Self:
        from .types import Schema
        f = _field_of(field_)
        col = self._as_column(column, None if f is None else f.type)
        if len(col) != self.num_rows and self.num_columns:
            raise ArrowInvalid(f"Added column's length must match {self._noun}'s length. "
                               f"Expected length {self.num_rows} but got length {len(col)}")
        if f is None:
            f = Field(str(field_), col.type)
        elif f.type != col.type:
            raise self._field_mismatch(f"Field type {f.type} does not match the column's type "
                                       f"{col.type}")
        fields = list(self.schema)
        cols = list(self.itercolumns())
        if replace:
            fields[i], cols[i] = f, col
        else:
            fields.insert(i, f)
            cols.insert(i, col)
        return self._with_columns(Schema(fields, self.schema.metadata), cols,
                                  num_rows=len(col) if not self.num_columns else None)

    def cast(self, target_schema: Any, safe: bool | None = None, options: Any = None) -> Self:
        """Every column converted to the type of the target schema's field of the same name."""
        from .types import Schema, schema as _schema
        if not isinstance(target_schema, Schema):
            target_schema = _schema(target_schema)
        if target_schema.names != self.schema.names:
            raise ValueError(f"Target schema's field names are not matching the table's field "
                             f"names: {self.schema.names}, {target_schema.names}")
        safe = True if safe is None else bool(safe)
        from .data.selection import parallel_map
        cols = parallel_map(lambda cf: cf[0].cast(cf[1].type, safe=safe),
                            list(zip(self.itercolumns(), target_schema)), self.num_rows)
        return self._with_columns(target_schema, cols)

    def flatten(self, memory_pool: Any = None) -> Self:
        """Struct columns replaced by one column per field, named parent.child."""
        from .types import Field, Schema, StructType
        fields, cols = [], []
        for f, c in zip(self.schema, self.itercolumns()):
            if isinstance(f.type, StructType):
                for k, sub in enumerate(f.type.fields):
                    fields.append(Field(f"{f.name}.{sub.name}", sub.type,
                                        sub.nullable or f.nullable, sub.metadata))
                    cols.append(_struct_field(c, k))
            else:
                fields.append(f)
                cols.append(c)
        return self._with_columns(Schema(fields, self.schema.metadata), cols)

    def __array__(self, dtype: Any = None, copy: bool | None = None) -> Any:
        """numpy's conversion (np.asarray(table)), as pyarrow's: a (rows, columns) array of
        the columns' numpy forms stacked; copy=False raises ValueError (stacking copies)."""
        import numpy as np
        if copy is False:
            raise ValueError(f"Unable to avoid a copy while creating a numpy array as requested "
                             f"(converting a {type(self).__name__} always results in a copy).\n"
                             "If using `np.array(obj, copy=False)` replace it with "
                             "`np.asarray(obj)` to allow a copy when needed")
        columns = [np.asarray(c, dtype=dtype) for c in self.itercolumns()]
        if not columns:
            return np.empty((self.num_rows, 0), dtype=dtype)
        return np.stack(columns, axis=1)

    def get_total_buffer_size(self) -> int:
        """Bytes of every buffer the columns refer to, counted once each."""
        datas = []
        for c in self.itercolumns():
            datas += [x.data for x in getattr(c, "chunks", [c])]
        from .data.sizes import total_buffer_size
        return total_buffer_size(datas)

    def to_string(self, *, show_metadata: bool = False, preview_cols: int = 0) -> str:
        """The schema and, with preview_cols, the first columns' values (pyarrow's layout)."""
        sch = self.schema.to_string(show_field_metadata=show_metadata,
                                    show_schema_metadata=show_metadata)
        out = [f"arrowipc.{type(self).__name__}", sch]
        if preview_cols:
            out.append("----")
            for i in range(min(preview_cols, self.num_columns)):
                out.append(f"{self.schema.field(i).name}: "
                           f"{self.column(i).to_string(indent=0, skip_new_lines=True)}")
            if preview_cols < self.num_columns:
                out.append("...")
        return "\n".join(out)


def _struct_field(col: Any, k: int) -> Any:
    """Child `k` of a struct column (Array or ChunkedArray), null where the parent is null."""
    if isinstance(col, ChunkedArray):
        t = col.type.fields[k].type
        return ChunkedArray([_struct_field(c, k) for c in col.chunks], t)
    from .data.selection import struct_field
    return make_array(struct_field(col.data, k))


def _expression_mask(data: RecordBatch | Table, mask: Any) -> Any:
    """A filter's mask: the mask itself, or the boolean values of an Expression on `data` with
    its nulls as false (pyarrow drops the rows an expression filter leaves null)."""
    cls = type(mask)
    if cls.__name__ != "Expression":
        return mask
    from .expression import Expression, to_expression
    expr = mask if isinstance(mask, Expression) else to_expression(mask)
    if expr is None:
        return mask
    values = expr.evaluate(data)
    if values.type.name != "bool":
        raise ArrowTypeError(f"Filter expression must evaluate to bool, but {expr} evaluates to "
                             f"{values.type}")
    return values.fill_null(False)


# Assembling a lazily decoded batch takes microseconds with the GIL held: one lock for all.
_ASSEMBLY_LOCK = threading.Lock()


class RecordBatch(RecordBatchFields, TabularOps):
    """Equal-length columns under a schema."""
    # the fields (schema, _cols, num_rows, _pending, _where, _lazy) are RecordBatchFields' C
    # struct: the IPC decoder fills them without a Python attribute lookup each
    __slots__ = ()
    schema: Schema
    num_rows: int                   # a field here; Table computes it (TabularOps declares both)
    _cols: list[ArrayData] | None

    def __init__(self, schema: Schema, columns: list[ArrayData], num_rows: int,
                 pending: Any = None, where: str = "record batch") -> None:
        # Internal constructor: columns are ArrayData; use from_arrays / from_pydict instead.
        # `pending` holds the O(n) structural checks of a batch read from IPC; they run before
        # any column data is handed out (the gate is the `_columns` property), and what they
        # raise names the batch as `where` does. The IPC decoder makes batches without this
        # constructor: `_cols` None and `_lazy` the decoded, checked header and body, assembled
        # into columns on first access (`_assembled`).
        self.schema = schema
        self._cols = columns
        self.num_rows = num_rows
        self._pending = pending
        self._where = where
        self._lazy: Any = None
        if type(self) is RecordBatch:
            # a schema, ArrayData and checks: no cycle can pass through a batch, and readers
            # make thousands of them (the collector's traversals cost more than the reading)
            untrack_acyclic(self)

    @property
    def _columns(self) -> list[ArrayData]:
        cols = self._cols
        if cols is None:
            cols = self._assembled()
        pending = self._pending
        if pending is not None:
            # Cleared only after the checks pass: a second thread arriving meanwhile (the checks
            # release the GIL) runs them too instead of getting unchecked columns.
            run_pending_checks(pending, self._where)
            self._pending = None
        return cols

    def _assembled(self) -> list[ArrayData]:
        """The columns of a batch decoded lazily, assembled once whichever thread asks first
        (datasets hand batches decoded on a pool to other threads). The pending checks are set
        before the columns, so a thread that sees the columns sees the checks too."""
        with _ASSEMBLY_LOCK:
            if self._cols is None:
                cols, self._pending = self._lazy.assemble()
                self._cols = cols
                self._lazy = None           # the body stays alive through the columns only
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
        # pyarrow takes the columns from the first row's keys only (later keys are dropped)
        names = list(schema.names) if schema is not None else (
            list(mapping[0].keys()) if mapping else [])
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
        cols = self._cols
        return len(cols) if cols is not None else len(self.schema)

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
        """The column at index or name `i`; for a slice, the rows (strided ones taken)."""
        if isinstance(i, slice):
            return slice_rows(self, i)
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

    # -- operations (the shared ones are TabularOps' above) ---------------------------------------
    def _with_columns(self, schema: Schema, columns: list[Any],
                      num_rows: int | None = None) -> RecordBatch:
        return RecordBatch(schema, [c.data for c in columns],
                           self.num_rows if num_rows is None else num_rows)

    _noun = "record batch"
    _field_mismatch = ArrowTypeError

    @staticmethod
    def _as_column(column: Any, type: Any = None) -> Array:
        if isinstance(column, ChunkedArray):
            return column.combine_chunks()
        if hasattr(column, "__arrow_c_stream__") and not hasattr(column, "__arrow_c_array__"):
            # another library's chunked array, as pyarrow's batches take one: combined
            from .array import chunked_array
            return chunked_array(column).combine_chunks()
        return array(column, type)

    def filter(self, mask: Any, null_selection_behavior: str = "drop") -> RecordBatch:
        """The rows where the boolean `mask` is true (null slots dropped, or null rows with
        null_selection_behavior="emit_null"); `mask` may be an Expression (arrowipc's or
        pyarrow's), whose null rows are dropped."""
        from .data.selection import apply, parallel_map
        mask = _expression_mask(self, mask)
        sel = mask_selection(mask, self.num_rows, null_selection_behavior)
        cols = parallel_map(lambda c: apply(c, sel), self._columns, self.num_rows)
        return RecordBatch(self.schema, cols, sel.count)

    def take(self, indices: Any) -> RecordBatch:
        """The rows at `indices`."""
        from .data.selection import Selection, apply, parallel_map
        sel = Selection.from_indices(argument_data(indices), self.num_rows)
        cols = parallel_map(lambda c: apply(c, sel), self._columns, sel.count)
        return RecordBatch(self.schema, cols, sel.count)

    def drop_null(self) -> RecordBatch:
        """The rows without a null in any column (a column's own validity: a struct's null
        child does not count, as in pyarrow); the batch itself when there is none."""
        from .data.selection import valid_rows
        from .types import bool_
        bits = valid_rows(self._columns, self.num_rows)
        if bits is None:
            return self
        return self.filter(make_array(ArrayData(bool_(), self.num_rows, 0, 0, [None, bits])))

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

    # pandas (arrowipc/pandas_shim.py: pyarrow's signatures; the conversion loads on first use),
    # bound by arrowipc/__init__.py: the pandas shim sits above the objects
    if TYPE_CHECKING:
        to_pandas = _pandas.batch_to_pandas
        from_pandas = classmethod(_pandas.batch_from_pandas)

    def to_struct_array(self) -> Array:
        """The batch as one struct array (zero-copy)."""
        return make_array(self._as_struct_data())

    def _as_struct_data(self) -> ArrayData:
        return ArrayData(StructType(self.schema.fields), self.num_rows, 0, 0, [None],
                         list(self._columns))

    def to_pyarrow(self) -> Any:
        """The same data as a pyarrow.RecordBatch, zero-copy (arrowipc.handoff; needs pyarrow)."""
        from .handoff import to_pyarrow
        return to_pyarrow(self, "batch")

    def equals(self, other: object, check_metadata: bool = False) -> bool:
        """Same schema and values; `other` may be any object speaking the Arrow PyCapsule
        interface (a pyarrow.RecordBatch...)."""
        if not isinstance(other, RecordBatch):
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
        from .ipc.serialize import serialize_record_batch   # the encoder only, not the writer
        return serialize_record_batch(self, options)

    # -- interop --------------------------------------------------------------------------------
    def __arrow_c_schema__(self) -> object:
        return self.schema.__arrow_c_schema__()

    def __arrow_c_array__(self, requested_schema: object = None) -> tuple[object, object]:
        from .data.interop import export_array
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
    def _empty(cls, schema: Schema) -> Table:
        """A Table of `schema` with no rows: one batch of empty columns (Schema.empty_table)."""
        from .data.from_python import array_data_from_python
        cols = [array_data_from_python([], f.type) for f in schema]
        return cls(schema, [RecordBatch(schema, cols, 0)])

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

    def __getitem__(self, i: int | str | slice) -> Any:
        """The column at index or name `i`; for a slice, the rows (strided ones taken)."""
        if isinstance(i, slice):
            return slice_rows(self, i)
        return self.column(i)

    def field(self, i: int | str) -> Field:
        """The schema field at index `i`, or the one named `i`."""
        return self.schema.field(i)

    @property
    def nbytes(self) -> int:
        """The bytes the batches' buffers span."""
        return sum(b.nbytes for b in self._batches)

    def to_struct_array(self, max_chunksize: int | None = None) -> ChunkedArray:
        """The rows as a struct column, a chunk per record batch (of at most `max_chunksize`
        rows when given), the columns as its children, zero-copy."""
        from .types import StructType
        struct = StructType(list(self.schema))
        return ChunkedArray([make_array(ArrayData(struct, b.num_rows, 0, 0, [None],
                                                  [c.data for c in b.columns]))
                             for b in self.to_batches(max_chunksize)], struct)

    @staticmethod
    def from_struct_array(struct_array: Any) -> Table:
        """A table of a struct array's (or column's) fields, a null struct giving nulls in
        every column (pyarrow's Table.from_struct_array)."""
        from .types import StructType
        column = struct_array if isinstance(struct_array, (Array, ChunkedArray)) \
            else array(struct_array)
        if not isinstance(column.type, StructType):
            raise ArrowTypeError(f"Argument 'struct_array' has incorrect type (expected a "
                                 f"struct array, got {column.type})")
        from .data.selection import struct_field
        chunks = column.chunks if isinstance(column, ChunkedArray) else [column]
        schema = Schema(list(column.type))
        return Table(schema, [RecordBatch(schema, [struct_field(chunk.data, k)
                                                   for k in range(len(schema))], len(chunk))
                              for chunk in chunks])

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
        from .batch_reader import RecordBatchReader        # above the model: loaded on use
        return RecordBatchReader._make(self.schema, self.to_batches(max_chunksize))

    def slice(self, offset: int = 0, length: int | None = None) -> Table:
        """A zero-copy view of `length` rows (to the end by default) from `offset`."""
        if offset < 0:
            raise ArrowIndexError(f"slice offset must be >= 0, got {offset}")
        pieces = chunk_slices([b.num_rows for b in self._batches], offset, length)
        return Table(self.schema, [self._batches[k].slice(lo, n) for k, lo, n in pieces])

    # -- operations (the shared ones are TabularOps' above) ---------------------------------------
    def _with_columns(self, schema: Schema, columns: list[Any],
                      num_rows: int | None = None) -> Table:
        if not columns:
            n = self.num_rows if num_rows is None else num_rows
            return Table(schema, [RecordBatch(schema, [], b.num_rows) for b in self._batches]
                         if num_rows is None else [RecordBatch(schema, [], n)])
        return Table.from_arrays(columns, schema=schema)

    _noun = "table"
    _field_mismatch = ArrowInvalid

    @staticmethod
    def _as_column(column: Any, type: Any = None) -> ChunkedArray:
        from .array import chunked_array
        if isinstance(column, ChunkedArray):
            return column
        if isinstance(column, Array):
            return ChunkedArray([column], column.type)
        if hasattr(column, "__arrow_c_stream__") and not hasattr(column, "__arrow_c_array__"):
            return chunked_array(column)            # another library's chunked array
        if isinstance(column, list) and column and _is_chunk(column[0]):
            # a list of chunks, as pyarrow reads it (values, ours or other libraries' arrays)
            return chunked_array(column, type)
        return ChunkedArray([array(column, type)])

    def filter(self, mask: Any, null_selection_behavior: str = "drop") -> Table:
        """The rows where the boolean `mask` is true, batch by batch (null mask slots dropped,
        or null rows with null_selection_behavior="emit_null"); `mask` may be an Expression
        (arrowipc's or pyarrow's), whose null rows are dropped."""
        from .data.selection import apply, parallel_map
        mask = _expression_mask(self, mask)
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
        from .data.concat import concat_array_data
        from .data.selection import Selection, apply, parallel_map
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
                from .data.selection import combined_data
                return apply(combined_data([c.data for c in self.column(i).chunks],
                                           self.schema.field(i).type), sel)
            pieces = [apply(d, pick) for d, pick in zip(datas, picks)]
            return _k.take(concat_array_data(pieces), perm, sel.count, sel.has_nulls)
        cols = parallel_map(column, list(range(self.num_columns)), sel.count)
        return Table(self.schema, [RecordBatch(self.schema, cols, sel.count)])

    def group_by(self, keys: str | list[str], use_threads: bool = True) -> TableGroupBy:
        """A grouping of the rows by the `keys` columns, to aggregate (pyarrow's group_by):
        ``table.group_by("k").aggregate([("v", "sum")])``."""
        return TableGroupBy(self, keys, use_threads=use_threads)

    def join(self, right_table: Any, keys: str | list[str], right_keys: str | list[str] | None
             = None, join_type: str = "left outer", left_suffix: str | None = None,
             right_suffix: str | None = None, coalesce_keys: bool = True,
             use_threads: bool = True, filter_expression: Any = None) -> Table:
        """This table's rows joined with `right_table`'s where the `keys` columns (here) equal
        the `right_keys` columns (there; `keys` by default), as pyarrow's Table.join: join_type
        "inner", "left outer", "right outer", "full outer", "left semi", "right semi", "left
        anti" or "right anti"; a null key matches nothing; a column name both sides give is
        suffixed; `coalesce_keys` keeps one copy of the keys; `filter_expression` (columns
        named as in either input) drops matched pairs. Rows come in the left table's order,
        then the right rows no left row matched (pyarrow's order is its threads')."""
        from .data.joining import hash_join
        left, right = _join_side(self), _join_side(right_table)
        keep = None
        if filter_expression is not None:
            keep = _pair_filter(filter_expression, left, right)
        lkeys = [keys] if isinstance(keys, str) else list(keys)
        rkeys = lkeys if right_keys is None else \
            [right_keys] if isinstance(right_keys, str) else list(right_keys)
        fields, columns = hash_join(left, right, lkeys, rkeys, join_type, left_suffix or "",
                                    right_suffix or "", coalesce_keys, keep)
        schema = Schema(fields)
        rows = columns[0].length if columns else 0
        return Table(schema, [RecordBatch(schema, columns, rows)])

    def join_asof(self, right_table: Any, on: str, by: str | list[str], tolerance: int,
                  right_on: str | None = None, right_by: str | list[str] | None = None
                  ) -> Table:
        """Each row of this table with the right table's row of equal `by` columns whose `on`
        value is the nearest within `tolerance` (pyarrow's Table.join_asof): a negative
        tolerance looks back (right on-key <= left on-key), a positive one ahead, 0 wants them
        equal; right columns are null where no row qualifies. Both tables sorted by `on`."""
        from .data.joining import asof_columns
        by = [by] if isinstance(by, str) else list(by)
        rby = by if right_by is None else [right_by] if isinstance(right_by, str) \
            else list(right_by)
        fields, columns = asof_columns(_join_side(self), _join_side(right_table), on, by,
                                       int(tolerance), on if right_on is None else right_on, rby)
        schema = Schema(fields)
        return Table(schema, [RecordBatch(schema, columns, self.num_rows)])

    def combine_chunks(self, memory_pool: Any = None) -> Table:
        """One batch: every column's chunks concatenated (dictionaries unified)."""
        if len(self._batches) == 1:
            return self
        from .data.selection import combined_data, parallel_map
        cols = parallel_map(lambda ca: combined_data([c.data for c in ca.chunks], ca.type),
                            list(self.itercolumns()), self.num_rows)
        if not self._batches:
            from .data.from_python import array_data_from_python
            cols = [array_data_from_python([], f.type) for f in self.schema]
        return Table(self.schema, [RecordBatch(self.schema, cols, self.num_rows)])

    def drop_null(self) -> Table:
        """The rows without a null in any column, batch by batch (see RecordBatch.drop_null);
        as in pyarrow, batches left with no row go, and a table without nulls is returned as
        it is."""
        batches = [b.drop_null() for b in self._batches]
        if all(mine is b for mine, b in zip(batches, self._batches)):
            return self
        return Table(self.schema, [b for b in batches if b.num_rows])

    def drop(self, columns: str | Iterable[str]) -> Table:
        """Without the named columns: pyarrow's alias of drop_columns, kept for old code."""
        return self.drop_columns(columns)

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

    # pandas (arrowipc/pandas_shim.py: pyarrow's signatures; the conversion loads on first use),
    # bound by arrowipc/__init__.py: the pandas shim sits above the objects
    if TYPE_CHECKING:
        to_pandas = _pandas.table_to_pandas
        from_pandas = classmethod(_pandas.table_from_pandas)

    def replace_schema_metadata(self, metadata: MetadataLike = None) -> Table:
        """The same batches under a schema with `metadata`."""
        sch = self.schema.with_metadata(metadata)
        return Table(sch, [RecordBatch(sch, b._columns, b.num_rows) for b in self._batches])

    def to_pyarrow(self) -> Any:
        """The same data as a pyarrow.Table, zero-copy (arrowipc.handoff; needs pyarrow)."""
        from .handoff import to_pyarrow
        return to_pyarrow(self, "table")

    def equals(self, other: object, check_metadata: bool = False) -> bool:
        """Same schema and values; `other` may be any object speaking the Arrow PyCapsule
        interface (a pyarrow.Table...)."""
        if not isinstance(other, Table):
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
    if is_pandas_dataframe(data):
        return RecordBatch.from_pandas(data, schema=schema)
    if hasattr(data, "__arrow_c_array__"):
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
    if is_pandas_dataframe(data):
        return Table.from_pandas(data, schema=schema)
    if hasattr(data, "__arrow_c_stream__"):
        sch, batches = import_stream(data)
        return Table(sch, list(batches))
    if hasattr(data, "__arrow_c_array__"):
        b = record_batch(data)
        return Table(b.schema, [b])
    if isinstance(data, dict):
        return Table.from_pydict(data, schema, metadata)
    return Table.from_arrays(list(data), names, schema, metadata)


# -- the C data interface: record batches and streams of them ------------------------------------
# A record batch crosses the interface as a struct array without top-level nulls, a table or
# reader as a stream of them (arrowipc.data.interop does types, fields and ArrayData).

def export_stream(schema: Schema, batches: Iterable[RecordBatch], requested_schema: object = None
                  ) -> object:
    """An "arrow_array_stream" PyCapsule of record batches (each a non-null struct array)."""
    from ._core import cdata
    from .data.cschema import schema_node
    from .data.interop import check_requested_schema, checked_if_mapped
    check_requested_schema(requested_schema)
    struct_type = StructType(schema.fields)

    def struct_arrays() -> Iterator[ArrayData]:
        # One StructType for the whole stream: building one (and comparing schemas field by
        # field) per batch cost more than exporting the batch's buffers.
        for b in batches:
            if b.schema is not schema and not b.schema.equals(schema):
                raise ArrowInvalid(f"record batch with schema\n{b.schema}\n"
                                   f"in a stream of\n{schema}")
            yield checked_if_mapped(ArrayData(struct_type, b.num_rows, 0, 0, [None],
                                              list(b._columns)), "record batch")

    return cdata.export_stream_capsule(schema_node(struct_type, "", False, schema.metadata),
                                       struct_arrays())


def _batch_from_struct(schema: Schema, data: ArrayData) -> RecordBatch:
    """A RecordBatch whose columns are the children of a struct array without top-level nulls."""
    from .validate import null_count_of
    if null_count_of(data) != 0:
        raise ArrowInvalid(f"a struct array with {data.null_count} null rows cannot be a record "
                           "batch (top-level validity must be absent or all valid)")
    columns = []
    for f, c in zip(schema, data.children):
        # The struct's offset applies to its children; bake it into each column.
        if data.offset == 0 and c.length == data.length:
            columns.append(c)
        else:
            columns.append(c.slice(data.offset, data.length))
    return RecordBatch(schema, columns, data.length)


def import_record_batch(obj: object) -> RecordBatch:
    """A RecordBatch from an object whose `__arrow_c_array__` gives a struct array."""
    from .data.interop import import_array, schema_from_struct_field
    f, data = import_array(obj)
    return _batch_from_struct(schema_from_struct_field(f), data)


def import_stream(obj: object) -> tuple[Schema, Iterator[RecordBatch]]:
    """(Schema, iterator of RecordBatch) from an object whose stream yields struct arrays."""
    from .data.interop import import_array_stream, schema_from_struct_field
    f, arrays = import_array_stream(obj)
    schema = schema_from_struct_field(f)

    def batches() -> Iterator[RecordBatch]:
        for data in arrays:
            yield _batch_from_struct(schema, data)

    return schema, batches()


def peer_as_ours(obj: object, kind: str) -> Any:
    """arrowipc.data.interop.peer_as_ours, with the kinds "batch" and "table" too: `obj`, another
    Arrow library's object, imported as ours, or None when it does not speak the interface."""
    from .data import interop
    if kind not in ("batch", "table"):
        return interop.peer_as_ours(obj, kind)
    try:
        if kind == "table":
            if hasattr(obj, "__arrow_c_stream__") and not hasattr(obj, "__arrow_c_array__"):
                schema, batches = import_stream(obj)
                return Table(schema, list(batches))
            return None
        if hasattr(obj, "__arrow_c_array__") and hasattr(obj, "num_columns"):
            return import_record_batch(obj)
        return None
    except (ArrowInvalid, ArrowTypeError, TypeError, ValueError):
        return None


def concat_tables(tables: Iterable[Table], memory_pool: Any = None, promote_options: str = "none",
                  **kwargs: Any) -> Table:
    """One Table holding the batches of `tables`, as pyarrow's concat_tables: with
    `promote_options="none"` the schemas must be equal (metadata aside) and nothing is copied;
    "default" and "permissive" unify them first (arrowipc.unify: columns matched by name,
    missing ones filled with nulls, types promoted as pyarrow does) and cast what differs."""
    from .unify import PROMOTE_OPTIONS, unify_schemas
    if promote_options not in PROMOTE_OPTIONS:
        raise ValueError(f"Invalid promote_options: {promote_options}")
    tables = list(tables)
    if not tables:
        raise ArrowInvalid("Must pass at least one table")
    for i, t in enumerate(tables):
        if not isinstance(t, Table):
            raise TypeError(f"concat_tables takes Tables; the one at index {i} is a "
                            f"{type(t).__name__}")
    first = tables[0].schema
    if promote_options == "none":
        for i, t in enumerate(tables[1:], 1):
            if not t.schema.equals(first):
                mine, theirs = (_fields_text(s) for s in (first, t.schema))
                raise ArrowInvalid(f"Schema at index {i} was different: \n{mine}\nvs\n{theirs}")
        return Table.from_batches([b for t in tables for b in t._batches], first)
    unified = unify_schemas([t.schema for t in tables], promote_options=promote_options)
    return Table.from_batches([_conformed(b, unified) for t in tables for b in t._batches],
                              unified)


def _fields_text(schema: Schema) -> str:
    # a line per field, as Arrow C++ prints a schema in its messages (no child lines)
    return "\n".join(f"{f.name}: {f.type}{'' if f.nullable else ' not null'}" for f in schema)


def _conformed(batch: RecordBatch, schema: Schema) -> RecordBatch:
    """`batch` with the columns of `schema`: its own where the type agrees, cast where it
    differs, nulls where it has no such column."""
    columns = []
    for f in schema:
        if f.name not in batch.schema.names:
            columns.append(nulls(batch.num_rows, f.type))
            continue
        column = batch.column(f.name)
        columns.append(column if column.type == f.type else column.cast(f.type))
    return RecordBatch.from_arrays(columns, schema=schema)




# -- Schema's methods that return objects or IPC bytes ----------------------------------------
# The type vocabulary (types.py) sits below the objects and the IPC encoder, so these methods of
# Schema are defined here and attached when this module loads (`import arrowipc` always loads it);
# types.py declares them for type checkers.

def _schema_empty_table(self: Schema) -> Table:
    """A Table of this schema with no rows."""
    return Table._empty(self)


class TableGroupBy:
    """A grouping of the rows of `table` by the columns `keys` (a name or a list of names), to
    aggregate (pyarrow's TableGroupBy; `Table.group_by` makes one). Groups come in order of
    first appearance, whatever `use_threads` (pyarrow's order is its hash table's, mostly the
    same); the kernels are arrowipc/data/grouping.py's."""

    def __init__(self, table: Any, keys: str | list[str], use_threads: bool = True) -> None:
        if isinstance(keys, str):
            keys = [keys]
        self._table = table
        self.keys = keys
        self._use_threads = use_threads

    def aggregate(self, aggregations: list[tuple[Any, ...]]) -> Table:
        """A Table of the key columns, then one column per aggregation: (column, function[,
        options]) where column is a name, a list of names or [] (count_all), function a hash
        aggregation's name ("sum" or "hash_sum"), options a pyarrow FunctionOptions
        (CountOptions, ScalarAggregateOptions, VarianceOptions) or None. The output column of
        ("amount", "sum") is "amount_sum", of ([], "count_all") "count_all"."""
        from .data.grouping import aggregate, aggregation_specs   # numpy: loaded on first use
        from .data.selection import combined_data
        from .types import field
        tab = self._table
        if isinstance(tab, RecordBatch):
            tab = Table.from_batches([tab])
        elif not isinstance(tab, Table):
            tab = table(tab)            # another library's table, through its stream capsule
        keys = list(self.keys)
        specs = aggregation_specs(aggregations, bool(keys))

        def column(name: Any) -> Any:
            if not isinstance(name, str) or name not in tab.schema.names:
                raise ArrowInvalid(f"No match for FieldRef.Name({name}) in {tab.schema}")
            col = tab.column(name)
            return combined_data([c.data for c in col.chunks], col.type)

        # pyarrow resolves the aggregations' columns before the keys'
        targets = [([column(t) for t in target], func, opt, name)
                   for target, func, opt, name in specs]
        key_data = [column(k) for k in keys]
        columns = aggregate(key_data, targets, tab.num_rows, bool(self._use_threads))
        names = keys + [name for _, _, _, name in specs]
        schema = Schema([field(n, c.type) for n, c in zip(names, columns)])
        rows = columns[0].length if columns else 1 if not keys else 0
        return Table(schema, [RecordBatch(schema, columns, rows)])


def _join_side(data: Any) -> Any:
    """A join's input (a Table, a RecordBatch or another library's table) as data.joining's
    Side: names and whole columns."""
    from .data.joining import Side
    from .data.selection import combined_data
    tab = Table.from_batches([data]) if isinstance(data, RecordBatch) else \
        data if isinstance(data, Table) else table(data)
    columns = [combined_data([c.data for c in col.chunks], col.type) for col in tab.columns]
    return Side(list(tab.schema), columns, tab.num_rows)


def _pair_filter(expression: Any, left: Any, right: Any) -> Any:
    """keep(left rows, right rows) of a join's filter_expression: its columns, each found in
    exactly one input (pyarrow's rule), taken at the pairs' rows, and the rows it is true on."""
    from .data.joining import row_selection, take_rows, true_rows
    from .expression import to_expression
    expr = to_expression(expression)
    assert expr is not None
    where = {}
    for name in sorted(expr.field_names()):
        found = [(side, which) for side, which in ((left, 0), (right, 1)) if name in side.names]
        if len(found) != 1:
            raise ArrowInvalid(f"FieldRefFieldRef.Name({name})was "
                               + ("found in both left and right schemas" if found
                                  else "not found in either left or right schema"))
        where[name] = found[0]

    def keep(left_rows: Any, right_rows: Any) -> Any:
        pairs = (row_selection(left_rows, -1), row_selection(right_rows, -1))
        columns = {name: take_rows(side.columns[side.names.index(name)], pairs[which])
                   for name, (side, which) in where.items()}
        return true_rows(expr.evaluate_data(columns, len(left_rows)))
    return keep


def _schema_serialize(self: Schema) -> Buffer:
    """The framed IPC Schema message as a Buffer."""
    from .ipc.serialize import serialize_schema         # the encoder only, loaded on use
    return serialize_schema(self)


Schema.empty_table = _schema_empty_table              # type: ignore[method-assign]
Schema.serialize = _schema_serialize                  # type: ignore[method-assign]


from . import _upcalls                              # noqa: E402   (the pandas shim and conversion)
_upcalls.register(__name__, RecordBatch=RecordBatch, Table=Table, peer_as_ours=peer_as_ours)
