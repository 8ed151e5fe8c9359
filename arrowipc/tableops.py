"""The structural operations ETL code calls on arrays, columns, batches and tables, with pyarrow's
names, signatures and results: column selection and editing, take, filter, cast, combine_chunks,
unify_dictionaries, flatten, to_string and buffer sizes.

They are mixins: Array and ChunkedArray (arrowipc/array.py) and RecordBatch and Table
(arrowipc/table.py) inherit them, so those modules keep the model and this one the operations.
Row selection is arrowipc/selection.py over the Cython kernels; casts are arrowipc/cast.py.
"""
from __future__ import annotations

from .errors import ArrowIndexError, ArrowInvalid, ArrowTypeError

__all__ = ["TabularOps", "argument_data", "mask_selection"]

TYPE_CHECKING = False               # typing itself is not imported at run time
if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator
    from typing import Any

    from typing_extensions import Self

    from ._core.arraydata import ArrayData
    from ._core.buffer import Buffer
    from .array import Array, ChunkedArray
    from .selection import Selection
    from .types import DataType, Field, Schema


# -- arrays -------------------------------------------------------------------------------------

class ArrayOps:
    """take, filter, cast and the vector functions of Array."""
    __slots__ = ()

    # what Array provides, declared for type checkers (the mixin has no state of its own)
    data: ArrayData
    if TYPE_CHECKING:
        @property
        def type(self) -> DataType: ...
        def __len__(self) -> int: ...
        def to_pylist(self, *, maps_as_pydicts: str | None = None) -> list[Any]: ...
        @property
        def null_count(self) -> int: ...

    def take(self, indices: Any) -> Array:
        """The values at `indices` (integers; a null index gives a null), as a new Array."""
        from ._upcalls import make_array
        from .selection import take
        return make_array(take(self.data, argument_data(indices)))

    def filter(self, mask: Any, null_selection_behavior: str = "drop") -> Array:
        """The values where the boolean `mask` is true; null mask slots are dropped, or give a
        null with null_selection_behavior="emit_null"."""
        from ._upcalls import make_array
        from .selection import apply
        return make_array(apply(self.data, mask_selection(mask, len(self),
                                                          null_selection_behavior)))

    def cast(self, target_type: Any = None, safe: bool | None = None,
             options: Any = None) -> Array:
        """The values converted to `target_type`; a safe cast (the default) raises ArrowInvalid
        where pyarrow's would."""
        from ._upcalls import make_array
        from .cast import cast_data
        target_type, safe = _cast_args(target_type, safe, options)
        return make_array(cast_data(self.data, target_type, safe))

    def fill_null(self, fill_value: Any) -> Array:
        """The values with nulls replaced by `fill_value`."""
        from ._upcalls import array, make_array
        from .selection import fill_null
        if self.null_count == 0:
            return self                         # type: ignore[return-value]  # self is an Array
        if not hasattr(fill_value, "type"):
            fill = array([fill_value]).cast(self.type) if fill_value is not None else None
        else:
            fill = array([fill_value.as_py()] if hasattr(fill_value, "as_py") else fill_value,
                         fill_value.type).cast(self.type)
        if fill is None:
            return self                         # type: ignore[return-value]  # self is an Array
        return make_array(fill_null(self.data, fill.data))

    def unique(self) -> Array:
        """The distinct values in order of first appearance."""
        from ._upcalls import make_array
        from .selection import unique
        return make_array(unique(self.data))

    def value_counts(self) -> Array:
        """struct<values, counts: int64> of the distinct values in order of first appearance."""
        from ._upcalls import make_array
        from .selection import value_counts
        return make_array(value_counts(self.data))

    def dictionary_encode(self, null_encoding: str = "mask") -> Array:
        """The values as a dictionary<int32, type> array."""
        from .types import DictionaryType, int32
        return self.cast(DictionaryType(int32(), self.type))

    def get_total_buffer_size(self) -> int:
        """Bytes of every buffer this array refers to, counted once each (slices count whole)."""
        return total_buffer_size([self.data])

    def to_string(self, *, indent: int = 2, top_level_indent: int = 0, window: int = 10,
                  container_window: int = 2, skip_new_lines: bool = False,
                  element_size_limit: int = 100) -> str:
        """Arrow's pretty-printed form of the values (arrowipc/_pretty.py); only the `window`
        values at each end are read."""
        from ._pretty import PrintOptions, array_to_string
        # pyarrow 26 does not hand container_window to the printer: lists keep Arrow's 2
        return array_to_string(self.data, PrintOptions(top_level_indent, indent, window, 2,
                                                       skip_new_lines, element_size_limit))


def _cast_args(target_type: Any, safe: bool | None, options: Any) -> tuple[Any, bool]:
    """(target type, safe) from cast's arguments, pyarrow's CastOptions taking precedence."""
    if options is not None:
        target_type = getattr(options, "target_type", target_type)
        if safe is None and hasattr(options, "allow_int_overflow"):
            safe = not options.allow_int_overflow
    if target_type is None:
        raise ValueError("Cast target type must not be None")
    return target_type, True if safe is None else bool(safe)


def chunk_slices(lengths: list[int], offset: int, length: int | None) -> list[tuple[int, int, int]]:
    """[(chunk index, start, count)] of the rows [offset, offset + length) over chunks of these
    lengths, by Arrow's rule for slicing a chunked array (and so a table): chunks that end at or
    before `offset` are left out, then every chunk is taken until `length` rows are covered, empty
    ones between them included; an empty slice keeps one empty chunk. No `length` means as many
    rows as all the chunks hold, as in Arrow."""
    total = sum(lengths)
    offset = min(offset, total)
    # not clamped to the rows left: a longer length takes the empty chunks at the end too
    length = total if length is None else max(0, length)
    k = 0
    while k < len(lengths) and offset >= lengths[k]:
        offset -= lengths[k]
        k += 1
    if lengths and (length == 0 or k == len(lengths)):
        return [(min(k, len(lengths) - 1), 0, 0)]
    out = []
    while k < len(lengths) and length > 0:
        n = min(length, lengths[k] - offset)
        out.append((k, offset, n))
        length -= n
        offset = 0
        k += 1
    return out


def total_buffer_size(datas: Iterable[ArrayData]) -> int:
    """Bytes of the buffers under `datas` (ArrayData), children and dictionaries included, each
    buffer counted once by address."""
    seen: set[int] = set()
    total = 0
    stack = list(datas)
    while stack:
        d = stack.pop()
        for b in d.buffers:
            if b is not None and b.address not in seen:
                seen.add(b.address)
                total += b.size
        stack.extend(d.children)
        if d.dictionary is not None:
            stack.append(d.dictionary)
    return total


def referenced_buffer_size(data: ArrayData) -> int:
    """Bytes of the buffer ranges `data` (ArrayData) references, by pyarrow's rules for
    `nbytes`: a slice counts its own part of each buffer (bitmaps by covering bytes, offsets
    `length` entries, the values the offsets span), dictionaries whole, view types' data buffers
    and list views' children whole, a dense union's children by counting type ids."""
    return _referenced(data, data.offset, data.length)


def _int_at(buf: Any, width: int, index: int) -> int:
    import struct
    value: int = struct.unpack_from("=" + {1: "b", 2: "h", 4: "i", 8: "q"}[width], buf,
                                    index * width)[0]
    return value


def _covering_bytes(bit_offset: int, bits: int) -> int:
    return (bit_offset + bits + 7) // 8 - bit_offset // 8


def _referenced(d: Any, offset: int, length: int) -> int:
    # d: ArrayData whose buffers and dictionary its layout (`kind`) guarantees present
    from .types import Kind
    t = d.type.storage_type
    k = t.kind
    bufs: list[Buffer | None] = d.buffers
    total = 0
    # pyarrow counts no validity bitmap for structs (nor unions, which have none)
    if k not in (Kind.NULL, Kind.STRUCT, Kind.SPARSE_UNION, Kind.DENSE_UNION,
                 Kind.RUN_END_ENCODED) and bufs and bufs[0] is not None:
        total += _covering_bytes(offset, length)
    if k == Kind.NULL:
        return 0
    if k in (Kind.BOOL, Kind.FIXED, Kind.DICTIONARY):
        width = t.index_type.bit_width if k == Kind.DICTIONARY else t.bit_width
        total += _covering_bytes(offset * width, length * width)
        if k == Kind.DICTIONARY:
            dic = d.dictionary
            total += _referenced(dic, dic.offset, dic.length)
        return total
    if k in (Kind.BINARY, Kind.LARGE_BINARY, Kind.LIST, Kind.LARGE_LIST):
        w = 4 if k in (Kind.BINARY, Kind.LIST) else 8
        total += w * length
        start = _int_at(bufs[1], w, offset)
        end = _int_at(bufs[1], w, offset + length)
        if k in (Kind.BINARY, Kind.LARGE_BINARY):
            return total + end - start
        return total + _referenced(d.children[0], start, end - start)
    if k == Kind.VIEW:
        return total + 16 * length + sum(b.size for b in bufs[2:] if b is not None)
    if k in (Kind.LIST_VIEW, Kind.LARGE_LIST_VIEW):
        w = 4 if k == Kind.LIST_VIEW else 8
        child = d.children[0]
        return total + 2 * w * length + _referenced(child, child.offset, child.length)
    if k == Kind.FIXED_SIZE_LIST:
        n = t.list_size
        return total + _referenced(d.children[0], offset * n, length * n)
    if k in (Kind.STRUCT, Kind.SPARSE_UNION):
        if k == Kind.SPARSE_UNION:
            total += length
        return total + sum(_referenced(c, offset + c.offset, length) for c in d.children)
    if k == Kind.DENSE_UNION:
        total += 5 * length                   # int8 type ids and int32 offsets
        import numpy as np
        # a union's buffers are (type ids, offsets); children are counted from the type ids
        ids = np.frombuffer(bufs[0], np.int8, count=offset + length)  # type: ignore[call-overload]
        before = np.bincount(ids[:offset], minlength=128)
        within = np.bincount(ids[offset:], minlength=128)
        return total + sum(_referenced(c, int(before[code]) + c.offset, int(within[code]))
                           for code, c in zip(t.type_codes, d.children))
    if k == Kind.RUN_END_ENCODED:
        run_ends = d.children[0]
        w = run_ends.type.bit_width // 8
        n = run_ends.length

        def first_run_ending_after(pos: int) -> int:
            lo, hi = 0, n
            while lo < hi:
                mid = (lo + hi) // 2
                if _int_at(run_ends.buffers[1], w, run_ends.offset + mid) > pos:
                    hi = mid
                else:
                    lo = mid + 1
            return lo
        phys = first_run_ending_after(offset)
        count = 0 if length == 0 else first_run_ending_after(offset + length - 1) - phys + 1
        return sum(_referenced(c, c.offset + phys, count) for c in d.children)
    raise ArrowTypeError(f"Extracting byte ranges not supported for type {d.type}")

class ChunkedArrayOps:
    """Access, selection and vector functions of ChunkedArray."""
    if TYPE_CHECKING:               # checkers see ChunkedArray's slots, which these methods set
        __slots__ = ("_offsets", "_name")
    else:
        __slots__ = ()
    # ChunkedArray's slots and methods, declared for type checkers
    _offsets: list[int] | None
    _name: str | None
    type: DataType
    chunks: list[Array]
    if TYPE_CHECKING:
        def __init__(self, chunks: Iterable[Array | Any], type: DataType | None = None) -> None: ...
        def __len__(self) -> int: ...

    def _starts(self) -> list[int]:
        # the first row of each chunk, then the length (cached: chunks never change)
        starts = getattr(self, "_offsets", None)
        if starts is None:
            starts, pos = [0], 0
            for c in self.chunks:
                pos += len(c)
                starts.append(pos)
            self._offsets = starts
        return starts

    def __getitem__(self, key: int | slice) -> Any:
        """A Scalar for an integer (O(log chunks)), a ChunkedArray for a slice."""
        if isinstance(key, slice):
            start, stop, step = key.indices(len(self))
            if step != 1:
                raise ArrowInvalid("only contiguous slices (step 1) are supported")
            return self.slice(start, max(0, stop - start))
        return self._scalar_at(key)

    def _scalar_at(self, i: int) -> Any:
        from bisect import bisect_right
        starts = self._starts()
        n = starts[-1]
        i = int(i)
        if i < 0:
            i += n
        if not 0 <= i < n:
            raise IndexError("index out of bounds")
        k = bisect_right(starts, i) - 1
        return self.chunks[k][i - starts[k]]

    def __iter__(self) -> Iterator[Any]:
        for c in self.chunks:
            yield from c

    def slice(self, offset: int = 0, length: int | None = None) -> Self:
        """Rows [offset, offset + length) as a ChunkedArray of zero-copy chunk slices."""
        if offset < 0:
            raise IndexError("Offset must be non-negative")
        pieces = chunk_slices([len(c) for c in self.chunks], offset, length)
        return self._like([self.chunks[k].slice(lo, n) for k, lo, n in pieces])

    def _like(self, chunks: list[Array]) -> Self:
        ca = type(self)(chunks, self.type)
        ca._name = self._name
        return ca

    def iterchunks(self) -> Iterator[Array]:
        """The chunks, one by one."""
        return iter(self.chunks)

    def combine_chunks(self, memory_pool: Any = None) -> Array:
        """The chunks concatenated into one Array (dictionaries unified)."""
        from ._upcalls import make_array
        from .selection import combined_data
        return make_array(combined_data([c.data for c in self.chunks], self.type))

    def unify_dictionaries(self, memory_pool: Any = None) -> Self:
        """Dictionary chunks re-encoded against one shared dictionary."""
        from .types import DictionaryType
        if not isinstance(self.type, DictionaryType):
            return self
        from ._upcalls import make_array
        from .selection import unify_chunks
        return self._like([make_array(d) for d in unify_chunks([c.data for c in self.chunks])])

    def take(self, indices: Any) -> Self:
        """The values at `indices`, as a one-chunk ChunkedArray."""
        return self._like([self.combine_chunks().take(indices)])

    def filter(self, mask: Any, null_selection_behavior: str = "drop") -> Self:
        """The values where `mask` is true, chunk by chunk."""
        from ._upcalls import make_array
        from .selection import apply
        sel = mask_selection(mask, len(self), null_selection_behavior)
        if sel.mask is None:
            return self._like([self.combine_chunks().filter(mask, null_selection_behavior)])
        starts = self._starts()
        return self._like([make_array(apply(c.data, sel.slice(starts[k], starts[k + 1])))
                           for k, c in enumerate(self.chunks)])

    def cast(self, target_type: Any = None, safe: bool | None = None,
             options: Any = None) -> Self:
        """Every chunk converted to `target_type` (pyarrow's safe-cast rules)."""
        from .types import ensure_type
        target_type, safe = _cast_args(target_type, safe, options)
        t = ensure_type(target_type)
        ca = type(self)([c.cast(t, safe=safe) for c in self.chunks], t)
        ca._name = self._name
        return ca

    def fill_null(self, fill_value: Any) -> Self:
        """Nulls replaced by `fill_value`, chunk by chunk."""
        return self._like([c.fill_null(fill_value) for c in self.chunks])

    def is_null(self, *, nan_is_null: bool = False) -> Self:
        """A boolean ChunkedArray, true where the value is null."""
        from .types import bool_
        ca = type(self)([c.is_null(nan_is_null=nan_is_null) for c in self.chunks], bool_())
        return ca

    def is_valid(self) -> Self:
        """A boolean ChunkedArray, true where the value is not null."""
        from .types import bool_
        return type(self)([c.is_valid() for c in self.chunks], bool_())

    def unique(self) -> Array:
        """The distinct values in order of first appearance, as an Array."""
        return self.combine_chunks().unique()

    def value_counts(self) -> Array:
        """struct<values, counts: int64> over every chunk."""
        return self.combine_chunks().value_counts()

    @property
    def nbytes(self) -> int:
        """The bytes of the buffer ranges the chunks reference (pyarrow's `nbytes`)."""
        return sum(referenced_buffer_size(c.data) for c in self.chunks)

    def get_total_buffer_size(self) -> int:
        """Bytes of every buffer the chunks refer to, counted once each."""
        return total_buffer_size([c.data for c in self.chunks])

    def to_string(self, *, indent: int = 0, window: int = 5, container_window: int = 2,
                  skip_new_lines: bool = False, element_size_limit: int = 100) -> str:
        """Arrow's pretty-printed form: the chunks as a list of arrays, `container_window`
        chunks (and list elements) and `window` values at each end (arrowipc/_pretty.py)."""
        from ._pretty import PrintOptions, chunked_array_to_string
        return chunked_array_to_string([c.data for c in self.chunks], self.type,
                                       PrintOptions(indent, 2, window, container_window,
                                                    skip_new_lines, element_size_limit))


# -- batches and tables -------------------------------------------------------------------------

def _field_and_type(field_: Any, column: Any) -> Field:
    from .types import Field
    if isinstance(field_, Field):
        return field_
    if not isinstance(field_, str):
        raise ArrowTypeError(f"field_ must be a str or a Field, got {type(field_).__name__}")
    return Field(field_, column.type)


class TabularOps:
    """Column editing, selection, casts and printing shared by RecordBatch and Table."""
    __slots__ = ()

    # subclasses: _with_columns(schema, columns) builds the same kind of object from columns of
    # their own kind (Arrays for a batch, ChunkedArrays for a table); _as_column(x) converts.
    # Declared here for type checkers:
    schema: Schema
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

    def itercolumns(self) -> Iterator[Any]:
        """The columns, one by one."""
        for i in range(self.num_columns):
            yield self.column(i)

    def _index_for(self, i: Any, what: str) -> int:
        n = self.num_columns
        if not isinstance(i, int) or not 0 <= i < n:
            raise ArrowInvalid(f"Invalid column index to {what} field.")
        return i

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
        """A new column inserted at position i."""
        if not isinstance(i, int) or not 0 <= i <= self.num_columns:
            raise ArrowInvalid("Invalid column index to add field.")
        return self._insert(i, field_, column, replace=False)

    def append_column(self, field_: str | Field, column: Any) -> Self:
        """A new column at the end."""
        return self._insert(self.num_columns, field_, column, replace=False)

    def set_column(self, i: int, field_: str | Field, column: Any) -> Self:
        """Column i replaced."""
        self._index_for(i, "set")
        return self._insert(i, field_, column, replace=True)

    def remove_column(self, i: int) -> Self:
        """Without column i."""
        self._index_for(i, "remove")
        return self.select([j for j in range(self.num_columns) if j != i])

    def _insert(self, i: int, field_: str | Field, column: Any, replace: bool) -> Self:
        from .types import Schema
        col = self._as_column(column, field_.type if hasattr(field_, "type") and
                              not isinstance(field_, str) else None)
        if len(col) != self.num_rows and self.num_columns:
            raise ArrowInvalid(f"Added column's length must match table's length. Expected "
                               f"length {self.num_rows} but got length {len(col)}")
        f = _field_and_type(field_, col)
        if f.type != col.type:
            raise ArrowTypeError(f"Field type {f.type} does not match the column's type "
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
        from .selection import parallel_map
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

    def get_total_buffer_size(self) -> int:
        """Bytes of every buffer the columns refer to, counted once each."""
        datas = []
        for c in self.itercolumns():
            datas += [x.data for x in getattr(c, "chunks", [c])]
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
    from ._upcalls import ChunkedArray
    if isinstance(col, ChunkedArray):
        t = col.type.fields[k].type
        return ChunkedArray([_struct_field(c, k) for c in col.chunks], t)
    # a child under a null parent becomes null (pyarrow's flatten)
    child = col.field(k)
    if col.null_count:
        # take row i where the parent is valid, a null where it is not
        from array import array as _pyarray
        from ._core.arraydata import ArrayData
        from ._core.bitmap import bitmap_view
        from ._core.buffer import py_buffer
        from ._upcalls import make_array
        from .types import int64
        d = col.data
        rows = py_buffer(_pyarray("q", range(d.length)))
        idx = ArrayData(int64(), d.length, 0, -1,
                        [bitmap_view(d.buffers[0], d.offset, d.length), rows])
        return child.take(make_array(idx))
    return child


def argument_data(obj: Any, type: DataType | None = None) -> ArrayData:
    """The ArrayData of a method's array argument: an Array's own, a ChunkedArray's chunks
    combined, else what arrowipc.array makes of it (a list, a numpy array...)."""
    from ._upcalls import Array, ChunkedArray, array
    if isinstance(obj, Array):
        return obj.data
    if isinstance(obj, ChunkedArray):
        from .selection import combined_data
        return combined_data([c.data for c in obj.chunks], obj.type)
    return array(obj, type=type).data


def mask_selection(mask: Any, length: int, null_selection_behavior: str) -> Selection:
    """The rows of `length` a filter keeps, from its boolean `mask` argument."""
    from .selection import Selection, check_null_selection_behavior
    from .types import bool_
    check_null_selection_behavior(null_selection_behavior)
    return Selection.from_mask(argument_data(mask, bool_()), length, null_selection_behavior)
