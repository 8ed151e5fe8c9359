"""Arrays, chunked arrays and scalars: zero-copy views over ArrayData, with pyarrow's names.

An Array never owns memory itself: its ArrayData holds Buffers, and each Buffer keeps its owner (input
bytes, a memory map, an allocation, an imported C array) alive. Slicing is O(1). The objects own
all their methods; take, filter, cast, printing and the rest are short bodies over the kernels of
arrowipc/data/ (ArrayData in, ArrayData out), whose results they wrap.
"""
from __future__ import annotations

from ._core.arraydata import ArrayData
from ._core import bitmap as _bitmap
from .errors import ArrowCapacityError, ArrowIndexError, ArrowInvalid, ArrowTypeError
from .validate import null_count_of
from .types import (BinaryType, DataType, DictionaryType, ExtensionType, Field,
                    FixedSizeBinaryType, Kind, MapType, StructType)

__all__ = ["Array", "BINARY_CHUNK_LIMIT", "ChunkedArray", "Scalar", "argument_data", "array",
           "binary_chunk_bounds", "binary_chunk_data", "chunk_slices", "chunked_array",
           "is_pandas_dataframe", "is_pandas_series", "make_array", "mask_selection", "nulls",
           "scalar"]

TYPE_CHECKING = False               # typing itself is not imported at run time (slow)
if TYPE_CHECKING:
    import builtins
    from typing import Any, Iterable, Iterator

    from . import pandas_shim as _pandas
    from ._core.buffer import Buffer
    from .data.selection import Selection


class Array:
    """A sequence of values of one type, backed by ArrayData."""
    __slots__ = ("data",)

    def __init__(self, data: ArrayData):
        if not isinstance(data, ArrayData):
            raise ArrowTypeError("use arrowipc.array() to build arrays")
        self.data = data

    # -- shape ----------------------------------------------------------------------------------
    @property
    def type(self) -> DataType:
        """The array's data type."""
        return self.data.type  # type: ignore[no-any-return]

    @property
    def offset(self) -> int:
        """The offset into the buffers, in elements (nonzero for slices)."""
        return self.data.offset

    def __len__(self) -> int:
        return self.data.length

    @property
    def null_count(self) -> int:
        """The number of nulls."""
        return null_count_of(self.data)

    def buffers(self) -> list[Buffer | None]:
        """This node's buffers followed by its children's, in pre-order (pyarrow's order)."""
        out = list(self.data.buffers)
        for c in self.data.children:
            out += make_array(c).buffers()
        return out

    @property
    def nbytes(self) -> int:
        """The bytes of the buffer ranges this array references (a slice counts its part;
        dictionaries count whole), as pyarrow's `nbytes`."""
        from .data.sizes import referenced_buffer_size
        return referenced_buffer_size(self.data)

    @property
    def is_cpu(self) -> bool:
        """True: the buffers are in CPU memory (pyarrow's property; no other device here)."""
        return True

    # -- slicing and access ---------------------------------------------------------------------
    def slice(self, offset: int = 0, length: int | None = None) -> Array:
        """A zero-copy view of `length` values (to the end by default) from `offset`."""
        return make_array(self.data.slice(offset, length))

    def __getitem__(self, key: int | builtins.slice) -> Any:
        if isinstance(key, slice):
            return slice_rows(self, key)
        n = len(self)
        i = int(key)
        if i < 0:
            i += n
        if not 0 <= i < n:
            raise ArrowIndexError(f"index {key} out of bounds for array of length {n}")
        return Scalar(self.slice(i, 1))

    def __iter__(self) -> Iterator[Scalar]:
        for i in range(len(self)):
            yield Scalar(self.slice(i, 1))

    def is_valid(self, i: int | None = None) -> bool | Array:
        """Without an index: a bool Array saying which slots hold a value; with one: a bool."""
        if i is not None:
            return bool(self._validity_bytes()[i])
        return _validity_array(self, invert=False)

    def is_null(self, i: int | None = None, *, nan_is_null: bool = False) -> bool | Array:
        """Without an index: a bool Array, true where the slot is null (or NaN with
        nan_is_null); with one: a bool."""
        if i is not None:
            return not self.is_valid(i)
        if nan_is_null and getattr(self.type, "is_float", False):
            return array([v is None or v != v for v in self.to_pylist()], type="bool")
        return _validity_array(self, invert=True)

    def _validity_bytes(self) -> bytes:
        d = self.data
        if d.type.kind == Kind.NULL:
            return bytes(d.length)
        if d.type.kind in (Kind.SPARSE_UNION, Kind.DENSE_UNION, Kind.RUN_END_ENCODED):
            return bytes(1 if v is not None else 0 for v in self.to_pylist())
        validity = d.buffers[0] if d.buffers else None
        if validity is None:
            return b"\x01" * d.length
        return _bitmap.unpack_bits(validity, d.offset, d.length)

    # -- conversion -----------------------------------------------------------------------------
    def to_pylist(self, *, maps_as_pydicts: str | None = None) -> list[Any]:
        """The values as Python objects (None for nulls); maps as lists of (key, value) tuples,
        or dicts with maps_as_pydicts="lossy" (last value of a repeated key) or "strict"
        (KeyError on a repeated key)."""
        from .data.to_python import maps_as_pydicts as as_dicts, to_pylist
        return as_dicts(to_pylist(self.data), self.type, maps_as_pydicts)

    def to_numpy(self, zero_copy_only: bool = True, writable: bool = False) -> Any:
        """A numpy view of the values (fixed-width primitive types; zero-copy without nulls)."""
        from .data.to_python import to_numpy
        return to_numpy(self.data, zero_copy_only=zero_copy_only, writable=writable)

    def __array__(self, dtype: Any = None, copy: bool | None = None) -> Any:
        """numpy's conversion (np.asarray, pd.Series), as pyarrow's: to_numpy's values (a
        zero-copy view where one exists); copy=False raises ValueError when none does."""
        import numpy as np
        if copy is False:
            try:
                values = self.to_numpy(zero_copy_only=True)
            except ArrowInvalid:
                raise ValueError(_NO_COPY_AVOIDED) from None
            return np.array(values, dtype=dtype, copy=False)
        values = self.to_numpy(zero_copy_only=False)
        t = self.type
        if copy is True and self.null_count == 0 and (
                getattr(t, "is_integer", False) or getattr(t, "is_float", False)):
            # to_numpy gave a view of the buffer: copy it (pyarrow copies numbers only)
            return np.array(values, dtype=dtype, copy=True)
        return values if dtype is None else np.asarray(values, dtype=dtype)

    if TYPE_CHECKING:   # bound by arrowipc/__init__.py: the pandas shim sits above the objects
        to_pandas = _pandas.array_to_pandas
        from_pandas = classmethod(_pandas.array_from_pandas)

    def to_pyarrow(self) -> Any:
        """The same data as a pyarrow.Array, zero-copy (arrowipc.handoff; needs pyarrow)."""
        from .handoff import to_pyarrow
        return to_pyarrow(self, "array")

    def equals(self, other: object) -> bool:
        """Same type and values; `other` may be any object exporting `__arrow_c_array__`."""
        if not isinstance(other, Array) and hasattr(other, "__arrow_c_array__"):
            other = array(other)
        if not isinstance(other, Array) or other.type != self.type:
            return False
        return _data_equal(self.data, other.data)

    def __eq__(self, other: object) -> bool:
        # pyarrow's: equals() for another array (ours, or any __arrow_c_array__ exporter but a
        # record batch); NotImplemented for anything else, so Python asks the other side (a
        # numpy array compares elementwise, other objects are unequal)
        if isinstance(other, Array) or (hasattr(other, "__arrow_c_array__")
                                        and not hasattr(other, "num_columns")):
            try:
                return self.equals(other)
            except TypeError:
                return NotImplemented
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]   # unhashable, as pyarrow's arrays

    def validate(self, full: bool = False) -> None:
        """Check the structure (and values, with `full`); ArrowInvalid if broken."""
        from .validate import validate_array
        validate_array(self.data, full=full)

    @staticmethod
    def from_buffers(type: Any, length: int, buffers: list[Any], null_count: int = -1,
                     offset: int = 0, children: list[Any] | None = None) -> Array:
        """An array of `type` over `buffers` (arrowipc's or pyarrow's Buffers, anything with
        the buffer protocol, None for an absent one) and `children` (arrays), zero-copy, as
        pyarrow's Array.from_buffers; its structure is checked (ArrowInvalid naming the
        buffer that is too small)."""
        from ._core.buffer import py_buffer
        from .types import ensure_type
        from .validate import validate_array
        t = ensure_type(type)
        kids = [c.data if isinstance(c, Array) else array(c).data for c in children or []]
        data = ArrayData(t, length, offset, null_count,
                         [None if b is None else py_buffer(b) for b in buffers], kids)
        validate_array(data, where=f"array of type {t} and length {length}")
        return make_array(data)

    def view(self, target_type: Any) -> Array:
        """The same buffers read as `target_type`, of the same layout (int64 as uint64 or a
        timestamp, string as binary...); ArrowInvalid for another layout, as pyarrow."""
        from .types import ensure_type
        target = ensure_type(target_type)
        if not _same_layout(self.type, target):
            raise ArrowInvalid(f"Can't view array of type {self.type} as {target}: "
                               f"incompatible layouts")
        return make_array(_viewed(self.data, target))

    # -- interop --------------------------------------------------------------------------------
    def __arrow_c_schema__(self) -> object:
        from .data.interop import export_schema
        return export_schema(Field("", self.type))

    def __arrow_c_array__(self, requested_schema: object = None) -> tuple[object, object]:
        from .data.interop import export_array
        return export_array(self.data, Field("", self.type), requested_schema)

    def __str__(self) -> str:
        return self.to_string()

    def __repr__(self) -> str:
        # pyarrow's form: the object's identity line, then the printout
        return f"{object.__repr__(self)}\n{self.to_string()}"

    def __reduce__(self) -> tuple[Any, ...]:
        return (array, (self.to_pylist(), self.type))

    # -- operations (kernels of arrowipc/data/) --------------------------------------------------
    def take(self, indices: Any) -> Array:
        """The values at `indices` (integers; a null index gives a null), as a new Array (a
        ChunkedArray, one chunk per chunk of `indices`, when they are chunked, as pyarrow)."""
        from .data.selection import take
        if is_chunked_argument(indices):
            out = ChunkedArray([self.take(c) for c in _argument_chunks(indices)], self.type)
            return out                                      # type: ignore[return-value]
        return make_array(take(self.data, argument_data(indices)))

    def filter(self, mask: Any, null_selection_behavior: str = "drop") -> Array:
        """The values where the boolean `mask` is true; null mask slots are dropped, or give a
        null with null_selection_behavior="emit_null". A chunked mask gives a ChunkedArray
        chunked as the mask (pyarrow's)."""
        from .data.selection import apply
        if is_chunked_argument(mask):
            chunks = _argument_chunks(mask)
            if sum(len(m) for m in chunks) == len(self):
                pieces, pos = [], 0
                for m in chunks:
                    pieces.append(self.slice(pos, len(m)).filter(m, null_selection_behavior))
                    pos += len(m)
                return ChunkedArray(pieces, self.type)        # type: ignore[return-value]
        return make_array(apply(self.data, mask_selection(mask, len(self),
                                                          null_selection_behavior)))

    def cast(self, target_type: Any = None, safe: bool | None = None,
             options: Any = None) -> Array:
        """The values converted to `target_type`; a safe cast (the default) raises ArrowInvalid
        where pyarrow's would."""
        from .data.cast import cast_data
        target_type, safe = _cast_args(target_type, safe, options)
        return make_array(cast_data(self.data, target_type, safe))

    def fill_null(self, fill_value: Any) -> Array:
        """The values with nulls replaced by `fill_value`."""
        from .data.selection import fill_null
        if self.null_count == 0:
            return self
        if not hasattr(fill_value, "type"):
            fill = array([fill_value]).cast(self.type) if fill_value is not None else None
        else:
            fill = array([fill_value.as_py()] if hasattr(fill_value, "as_py") else fill_value,
                         fill_value.type).cast(self.type)
        if fill is None:
            return self
        return make_array(fill_null(self.data, fill.data))

    def unique(self) -> Array:
        """The distinct values in order of first appearance."""
        from .data.hashing import unique
        return make_array(unique(self.data))

    def value_counts(self) -> Array:
        """struct<values, counts: int64> of the distinct values in order of first appearance."""
        from .data.hashing import value_counts
        return make_array(value_counts(self.data))

    def dictionary_encode(self, null_encoding: str = "mask") -> Array:
        """The values as a dictionary<int32, type> array, in order of first appearance; with
        null_encoding="encode" a null is a dictionary value, with "mask" a null index. A
        dictionary array is returned as it is."""
        from .data.cast import dictionary_encode
        return make_array(dictionary_encode(self.data, null_encoding))

    def tolist(self) -> list[Any]:
        """The values as Python objects: pyarrow's alias of to_pylist()."""
        return self.to_pylist()

    def drop_null(self) -> Array:
        """The values that are not null. As in pyarrow, only the array's own validity counts:
        union and run-end encoded arrays, which have none, keep every row."""
        from .data.selection import drop_null
        return make_array(drop_null(self.data))

    def is_nan(self) -> Array:
        """A bool array, true where the value is NaN and null where it is null (floats;
        integers, durations, decimal128 and decimal256 are never NaN; the null type gives
        nulls; other types raise ArrowNotImplementedError, as in pyarrow)."""
        from .data.compute import is_nan
        return make_array(is_nan(self.data))  # type: ignore[arg-type]   # an array in, one out

    def index(self, value: Any, start: int | None = None, end: int | None = None, *,
              memory_pool: Any = None) -> Scalar:
        """The position of the first value equal to `value` within [start, end), as an int64
        Scalar; -1 when there is none (a null value is never found, NaN equals nothing)."""
        return _index(self, value, start, end)

    def sum(self, **kwargs: Any) -> Scalar:
        """The sum of the values (options skip_nulls=True, min_count=1, as pyarrow's
        ScalarAggregateOptions): an int64 Scalar for signed integers, uint64 for unsigned ones
        and booleans (wrapping on overflow), double for floats, decimal128(38, s) or
        decimal256(76, s) for decimals; null below min_count valid values, or on a null
        without skip_nulls."""
        from .data.compute import sum_values
        skip_nulls, min_count = _aggregate_options("sum", kwargs)
        return Scalar(make_array(sum_values([self.data], self.type, skip_nulls,
                                            min_count).data))

    def sort(self, order: str = "ascending", null_placement: str = "at_end",
             **kwargs: Any) -> Array:
        """The values sorted ("ascending" or "descending"); nulls, and NaNs before them, go
        "at_end" or "at_start" (pyarrow's sort)."""
        return self.take(_sort_indices([[self.data]], order, null_placement, kwargs,
                                       len(self)))

    def get_total_buffer_size(self) -> int:
        """Bytes of every buffer this array refers to, counted once each (slices count whole)."""
        from .data.sizes import total_buffer_size
        return total_buffer_size([self.data])

    def to_string(self, *, indent: int = 2, top_level_indent: int = 0, window: int = 10,
                  container_window: int = 2, skip_new_lines: bool = False,
                  element_size_limit: int = 100) -> str:
        """Arrow's pretty-printed form of the values (arrowipc/data/pretty.py); only the `window`
        values at each end are read."""
        from .data.pretty import PrintOptions, array_to_string
        # pyarrow 26 does not hand container_window to the printer: lists keep Arrow's 2
        return array_to_string(self.data, PrintOptions(top_level_indent, indent, window, 2,
                                                       skip_new_lines, element_size_limit))


_NO_COPY_AVOIDED = ("Unable to avoid a copy while creating a numpy array as requested.\n"
                    "If using `np.array(obj, copy=False)` replace it with `np.asarray(obj)` to "
                    "allow a copy when needed")


def _validity_array(arr: Array, invert: bool) -> Array:
    """The validity of `arr` as a BooleanArray: the bitmap itself (zero-copy when its offset is
    a whole byte) or its complement."""
    from .types import bool_
    d = arr.data
    validity = d.buffers[0] if d.buffers and d.type.kind not in (
        Kind.NULL, Kind.SPARSE_UNION, Kind.DENSE_UNION, Kind.RUN_END_ENCODED) else None
    if validity is None or null_count_of(d) == 0:
        bits, _ = _bitmap.pack_bools(arr._validity_bytes())
    else:
        bits = _bitmap.bitmap_view(validity, d.offset, d.length)
    if invert:
        from ._core.select_kernels import invert_bits
        bits = invert_bits(bits, d.length)
    return make_array(ArrayData(bool_(), d.length, 0, 0, [None, bits]))


def _data_equal(a: ArrayData, b: ArrayData) -> bool:
    """pyarrow's Array.equals for two arrays of one type: the same length, nulls in the same
    slots and equal values in the others. As in pyarrow, NaN equals nothing, itself included
    (0.0 equals -0.0), and dictionary arrays are equal when their indices and their
    dictionaries are, not when they merely decode to equal values."""
    if a.length != b.length:
        return False
    if a.type.kind == Kind.DICTIONARY:
        index_type = a.type.index_type
        if a.dictionary is None or b.dictionary is None:
            return a.dictionary is b.dictionary and a.length == 0
        return (_data_equal(ArrayData(index_type, a.length, a.offset, a.null_count, a.buffers),
                            ArrayData(index_type, b.length, b.offset, b.null_count, b.buffers))
                and _data_equal(a.dictionary, b.dictionary))
    fast = _kernel_equal(a, b)
    if fast is not None:
        return fast
    # == on the Python values: None matches None only, NaN never matches (each value is a
    # fresh float object, so list equality's identity shortcut cannot pair two NaNs)
    from .data.to_python import to_pylist
    return to_pylist(a) == to_pylist(b)


def _kernel_equal(a: ArrayData, b: ArrayData) -> bool | None:
    """_data_equal by the comparison kernel, with no Python value made (`==` on columns is
    common in ETL code): nulls in the same slots and every other slot equal ("equal" gives
    false for NaN, true for 0.0 and -0.0, as pyarrow's equals). None for the types that kernel
    does not compare (nested, fixed-size binary, intervals...)."""
    import numpy as np
    from ._core.select_kernels import effective_mask
    from .data.compute import compare
    from .data.to_python import validity_mask
    from .errors import ArrowNotImplementedError
    if a.type.kind in (Kind.NULL, Kind.SPARSE_UNION, Kind.DENSE_UNION, Kind.RUN_END_ENCODED,
                       Kind.DICTIONARY) or a.type.storage_type.name == "halffloat":
        return None                     # (the comparison kernel has no float16 loop)
    try:
        found = compare("equal", a, b)
    except ArrowNotImplementedError:
        return None
    valid_a, valid_b = validity_mask(a), validity_mask(b)
    valid = a.length
    if valid_a is not None or valid_b is not None:
        mine = valid_a if valid_a is not None else np.ones(a.length, np.bool_)
        theirs = valid_b if valid_b is not None else np.ones(b.length, np.bool_)
        if not np.array_equal(mine, theirs):
            return False                # a null where the other has a value
        valid = int(mine.sum())
    assert isinstance(found, ArrayData)
    return effective_mask(found)[1] == valid


def _chunks_equal(mine: list[Array], theirs: list[Array]) -> bool:
    """Whether two chunk lists of one type and total length hold equal values: compared piece
    by piece where both chunkings agree, as pyarrow does (no concatenation, so dictionary
    chunks keep their own dictionaries)."""
    i = j = at_mine = at_theirs = 0
    while i < len(mine) and j < len(theirs):
        a, b = mine[i], theirs[j]
        n = min(len(a) - at_mine, len(b) - at_theirs)
        if n and not _data_equal(a.data.slice(at_mine, n), b.data.slice(at_theirs, n)):
            return False
        at_mine, at_theirs = at_mine + n, at_theirs + n
        if at_mine == len(a):
            i, at_mine = i + 1, 0
        if at_theirs == len(b):
            j, at_theirs = j + 1, 0
    return True


class BooleanArray(Array):
    """An array of booleans, one bit per value."""
    __slots__ = ()


class NumericArray(Array):
    """An array of fixed-width values: integers, floating point numbers, decimals, dates,
    times, timestamps, durations and intervals."""
    __slots__ = ()


class BinaryArray(Array):
    """An array of variable-length byte strings (binary, large_binary, binary_view); also
    the base of StringArray."""
    __slots__ = ()

    @property
    def offsets(self) -> "Array":
        """The value offsets of this array's slice as an integer array of length + 1 (int32
        for binary and string, int64 for the large variants), indexing the whole data buffer."""
        from .types import int32, int64
        t = int32() if self.type.kind == Kind.BINARY else int64()
        d = self.data
        return make_array(ArrayData(t, d.length + 1, d.offset, 0, [None, d.buffers[1]]))


class StringArray(BinaryArray):
    """An array of UTF-8 strings (string, large_string, string_view)."""
    __slots__ = ()


class FixedSizeBinaryArray(Array):
    """An array of byte strings that all have the type's byte width."""
    __slots__ = ()


class BaseListArray(Array):
    """The common base of the list array classes: `values`, `offsets` and `flatten()`."""
    __slots__ = ()

    @property
    def values(self) -> Array:
        """The child array holding the list values, whole: a slice of this array does not
        slice it (`flatten()` does)."""
        return make_array(self.data.children[0])

    @property
    def offsets(self) -> Array:
        """The list offsets as an integer array (int32, or int64 for the large variants):
        length + 1 entries for lists, each list's start for list views."""
        from .types import int32, int64
        t = int32() if self.type.kind in (Kind.LIST, Kind.LIST_VIEW) else int64()
        d = self.data
        n = d.length + (1 if d.type.kind in (Kind.LIST, Kind.LARGE_LIST) else 0)
        return make_array(ArrayData(t, n, d.offset, 0, [None, d.buffers[1]]))

    def value_lengths(self) -> Array:
        """The number of values in each list (int32; int64 for the large variants), null
        where the list is null."""
        from .data.compute import list_value_lengths
        return make_array(list_value_lengths(self.data))

    def flatten(self) -> Array:
        """The child values this (possibly sliced) list array refers to."""
        d = self.data
        if d.type.kind in (Kind.FIXED_SIZE_LIST, Kind.LIST, Kind.LARGE_LIST):
            return make_array(d.list_values())
        # list views may share or reorder child ranges: gather the referenced values
        values = [v for x in self.to_pylist() if x is not None for v in x]
        return array(values, type=d.type.value_type)


class ListArray(BaseListArray):
    """An array of variable-size lists with 32-bit offsets."""
    __slots__ = ()


class LargeListArray(BaseListArray):
    """An array of variable-size lists with 64-bit offsets."""
    __slots__ = ()


class ListViewArray(BaseListArray):
    """An array of list views: each list has its own 32-bit offset and size into the
    child values, which lists may share or visit out of order."""
    __slots__ = ()


class LargeListViewArray(BaseListArray):
    """An array of list views with 64-bit offsets and sizes."""
    __slots__ = ()


class FixedSizeListArray(BaseListArray):
    """An array of lists that all hold the type's `list_size` values."""
    __slots__ = ()


class MapArray(ListArray):
    """An array of maps: each value is a list of key/item entries (a list of structs)."""
    __slots__ = ()

    @property
    def keys(self) -> Array:
        """The keys of every entry of the maps in this array, as one flat array."""
        return self.flatten().field(0)  # type: ignore[attr-defined, no-any-return]  # a StructArray

    @property
    def items(self) -> Array:
        """The items of every entry of the maps in this array, as one flat array."""
        return self.flatten().field(1)  # type: ignore[attr-defined, no-any-return]  # a StructArray


class StructArray(Array):
    """An array of structs: one child array per field, all of this array's length."""
    __slots__ = ()

    def field(self, i: int | str) -> Array:
        """Child i (or the child named i), sliced to this array's offset and length."""
        j: int = i if not isinstance(i, str) else self.data.type.get_field_index(i)
        if j < 0 and isinstance(i, str):
            raise KeyError(i)
        d = self.data
        return make_array(d.children[j].slice(d.offset, d.length))

    def flatten(self, memory_pool: Any = None) -> list[Array]:
        """One array per field, each sliced to this array's offset and length and null where
        the struct is null (pyarrow's flatten; `field(i)` gives the child as stored)."""
        from .data.selection import struct_field
        return [make_array(struct_field(self.data, k)) for k in range(self.type.num_fields)]

    def sort(self, order: str = "ascending", null_placement: str = "at_end",
             by: str | int | None = None, **kwargs: Any) -> StructArray:
        """The structs sorted by their fields in order (or by the field `by` alone), each
        field's nulls placed by `null_placement`, as are null structs (pyarrow's sort)."""
        from .data.selection import struct_field
        if by is not None:
            k = by if isinstance(by, int) else self.data.type.get_field_index(by)
            if not isinstance(by, int) and k < 0:
                raise KeyError(by)
            keys = [[struct_field(self.data, k)]]
        else:
            # null structs first or last whatever the order: their own key, then the fields
            nulls = self.is_null()
            assert isinstance(nulls, Array)
            keys = [[nulls.data]] + [[struct_field(self.data, k)]
                                     for k in range(self.type.num_fields)]
        indices = _sort_indices(keys, order, null_placement, kwargs, len(self),
                                null_key=by is None)
        return self.take(indices)  # type: ignore[return-value]   # a StructArray's rows


class UnionArray(Array):
    """An array whose values each come from one of several child arrays (sparse or dense
    union), chosen by a type code per value."""
    __slots__ = ()

    def field(self, i: int) -> Array:
        """Child `i` (not sliced: a union's children are indexed through its offsets)."""
        return make_array(self.data.children[i])


class DictionaryArray(Array):
    """An array of integer indices into a dictionary of values."""
    __slots__ = ()

    @property
    def indices(self) -> Array:
        """The indices into the dictionary, as an integer array with this array's nulls."""
        d = self.data
        return make_array(ArrayData(d.type.index_type, d.length, d.offset, d.null_count,
                                    d.buffers, [], None))

    def dictionary_decode(self) -> Array:
        """The values the indices stand for, as an array of the dictionary's type."""
        return self.cast(self.type.value_type)  # type: ignore[attr-defined]   # a DictionaryType

    @property
    def dictionary(self) -> Array:
        """The dictionary values."""
        return make_array(self.data.dictionary)  # type: ignore[arg-type]   # set on every dictionary array


class RunEndEncodedArray(Array):
    """An array stored as runs: a run-ends child and a values child holding one value
    per run."""
    __slots__ = ()

    @property
    def run_ends(self) -> Array:
        """The run-ends child (each run's exclusive end position), as stored: a slice of this
        array does not slice it."""
        return make_array(self.data.children[0])

    @property
    def values(self) -> Array:
        """The values child, one value per run, as stored (not sliced)."""
        return make_array(self.data.children[1])


class ExtensionArray(Array):
    """An array of an extension type: its values are held as the type's storage type."""
    __slots__ = ()

    @property
    def storage(self) -> Array:
        """The same values as an array of the storage type (a view, no copy)."""
        d = self.data
        return make_array(ArrayData(d.type.storage, d.length, d.offset, d.null_count, d.buffers,
                                    d.children, d.dictionary))


class NullArray(Array):
    """An array of the null type: every value is null and no buffer is stored."""
    __slots__ = ()


_CLASS_BY_KIND = {
    Kind.NULL: NullArray, Kind.BOOL: BooleanArray, Kind.FIXED: NumericArray,
    Kind.LARGE_BINARY: BinaryArray, Kind.BINARY: BinaryArray, Kind.VIEW: BinaryArray,
    Kind.LIST: ListArray, Kind.LARGE_LIST: LargeListArray, Kind.LIST_VIEW: ListViewArray,
    Kind.LARGE_LIST_VIEW: LargeListViewArray, Kind.FIXED_SIZE_LIST: FixedSizeListArray,
    Kind.STRUCT: StructArray, Kind.SPARSE_UNION: UnionArray, Kind.DENSE_UNION: UnionArray,
    Kind.RUN_END_ENCODED: RunEndEncodedArray, Kind.DICTIONARY: DictionaryArray,
}


def _array_class(t: DataType) -> type[Array]:
    if isinstance(t, ExtensionType):
        return ExtensionArray
    if isinstance(t, MapType):
        return MapArray
    if isinstance(t, FixedSizeBinaryType):
        return FixedSizeBinaryArray
    if isinstance(t, BinaryType) and t.is_utf8:
        return StringArray
    return _CLASS_BY_KIND[t.kind]


# Array class by (type class, utf8): wide batches ask for thousands of columns at a time.
_CLASS_CACHE: dict[tuple[Any, ...], type[Array]] = {}


def make_array(data: ArrayData) -> Array:
    """The Array subclass that fits `data`'s type, as a view over it."""
    t = data.type
    key = (type(t), t.kind, getattr(t, "is_utf8", False))
    cls = _CLASS_CACHE.get(key)
    if cls is None:
        cls = _CLASS_CACHE[key] = _array_class(t)
    return cls(data)


class ChunkedArray:
    """A column made of several arrays of one type (what Table.column returns)."""
    __slots__ = ("type", "chunks", "_name", "_offsets")

    def __init__(self, chunks: Iterable[Array | Any], type: DataType | None = None) -> None:
        self._name: str | None = None      # the column's name when a Table hands it out (pandas uses it)
        self._offsets: list[int] | None = None   # first row of each chunk (ChunkedArrayOps._starts)
        chunks = [c if isinstance(c, Array) else array(c, type) for c in chunks]
        if type is None:
            if not chunks:
                raise ArrowInvalid("cannot infer the type of a ChunkedArray without chunks")
            type = chunks[0].type
        for c in chunks:
            if c.type != type:
                # pyarrow's error and builtin (TypeError)
                raise ArrowTypeError(f"Array chunks must all be same type: a chunk of type "
                                     f"{c.type} in a ChunkedArray of type {type}")
        self.type = type
        self.chunks = chunks

    @property
    def num_chunks(self) -> int:
        """The number of chunks."""
        return len(self.chunks)

    def chunk(self, i: int) -> Array:
        """Chunk `i`."""
        return self.chunks[i]

    def __len__(self) -> int:
        return sum(len(c) for c in self.chunks)

    @property
    def null_count(self) -> int:
        """The number of nulls over all chunks."""
        return sum(c.null_count for c in self.chunks)

    def to_pylist(self, *, maps_as_pydicts: str | None = None) -> list[Any]:
        """The values of every chunk as Python objects (see Array.to_pylist)."""
        out: list[Any] = []
        for c in self.chunks:
            out += c.to_pylist(maps_as_pydicts=maps_as_pydicts)
        return out

    def to_pyarrow(self) -> Any:
        """The same data as a pyarrow.ChunkedArray, zero-copy (arrowipc.handoff; needs pyarrow)."""
        from .handoff import to_pyarrow
        return to_pyarrow(self, "chunked_array")

    def equals(self, other: object) -> bool:
        """Whether `other` has the same type and values, chunking aside (pyarrow's semantics:
        NaN equals nothing, dictionary arrays compare indices and dictionaries); `other` may be
        any ChunkedArray speaking the Arrow PyCapsule stream interface (a pyarrow one...)."""
        if (not isinstance(other, ChunkedArray) and hasattr(other, "__arrow_c_stream__")
                and not hasattr(other, "num_columns")):
            try:
                other = chunked_array(other)
            except (ArrowInvalid, TypeError, ValueError):
                return False
        if not isinstance(other, ChunkedArray) or other.type != self.type:
            return False
        if len(self) != len(other):
            return False
        return _chunks_equal(self.chunks, other.chunks)

    def __eq__(self, other: object) -> bool:
        # pyarrow's: equals() for another chunked array (ours, or another library's with
        # __arrow_c_stream__ and num_chunks: a stream reader is never consumed by a
        # comparison); NotImplemented for anything else, so Python asks the other side
        if isinstance(other, ChunkedArray) or (hasattr(other, "__arrow_c_stream__")
                                               and hasattr(other, "num_chunks")):
            return self.equals(other)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]   # unhashable, as pyarrow's chunked arrays

    def to_numpy(self, zero_copy_only: bool = False) -> Any:
        """The values as one numpy array (copied when there are several chunks)."""
        import numpy as np
        if len(self.chunks) == 1:
            return self.chunks[0].to_numpy(zero_copy_only=False)
        if not self.chunks:     # an empty array of the column's own dtype, as pyarrow's
            return nulls(0, self.type).to_numpy(zero_copy_only=False)
        return np.concatenate([c.to_numpy(zero_copy_only=False) for c in self.chunks])

    def __array__(self, dtype: Any = None, copy: bool | None = None) -> Any:
        """numpy's conversion (np.asarray, pd.Series), as pyarrow's: to_numpy's values;
        copy=False raises ValueError (the chunks are concatenated)."""
        if copy is False:
            raise ValueError("Unable to avoid a copy while creating a numpy array as requested "
                             "(converting a ChunkedArray always results in a copy).\n"
                             "If using `np.array(obj, copy=False)` replace it with "
                             "`np.asarray(obj)` to allow a copy when needed")
        values = self.to_numpy()
        return values if dtype is None else values.astype(dtype, copy=False)

    if TYPE_CHECKING:   # bound by arrowipc/__init__.py: the pandas shim sits above the objects
        to_pandas = _pandas.chunked_array_to_pandas

    def __arrow_c_stream__(self, requested_schema: object = None) -> object:
        from .data.interop import export_array_stream
        return export_array_stream(Field("", self.type), (c.data for c in self.chunks),
                                   requested_schema)

    def __str__(self) -> str:
        return self.to_string()

    def __repr__(self) -> str:
        # pyarrow's form: the object's identity line, then the printout
        return f"{object.__repr__(self)}\n{self.to_string()}"

    # -- operations (kernels of arrowipc/data/) --------------------------------------------------
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

    @property
    def is_cpu(self) -> bool:
        """True: the chunks are in CPU memory (pyarrow's property; no other device here)."""
        return True

    def __getitem__(self, key: int | slice) -> Any:
        """A Scalar for an integer (O(log chunks)), a ChunkedArray for a slice."""
        if isinstance(key, slice):
            return slice_rows(self, key)
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

    def slice(self, offset: int = 0, length: int | None = None) -> ChunkedArray:
        """Rows [offset, offset + length) as a ChunkedArray of zero-copy chunk slices."""
        if offset < 0:
            raise IndexError("Offset must be non-negative")
        pieces = chunk_slices([len(c) for c in self.chunks], offset, length)
        return self._like([self.chunks[k].slice(lo, n) for k, lo, n in pieces])

    def _like(self, chunks: list[Array]) -> ChunkedArray:
        ca = type(self)(chunks, self.type)
        ca._name = self._name
        return ca

    def iterchunks(self) -> Iterator[Array]:
        """The chunks, one by one."""
        return iter(self.chunks)

    def combine_chunks(self, memory_pool: Any = None) -> Array:
        """The chunks concatenated into one Array (dictionaries unified)."""
        from .data.selection import combined_data
        return make_array(combined_data([c.data for c in self.chunks], self.type))

    def validate(self, *, full: bool = False) -> None:
        """Check every chunk's structure (and values, with `full`); ArrowInvalid if broken."""
        for chunk in self.chunks:
            chunk.validate(full=full)

    def unify_dictionaries(self, memory_pool: Any = None) -> ChunkedArray:
        """Dictionary chunks re-encoded against one shared dictionary."""
        from .types import DictionaryType
        if not isinstance(self.type, DictionaryType):
            return self
        from .data.selection import unify_chunks
        return self._like([make_array(d) for d in unify_chunks([c.data for c in self.chunks])])

    def take(self, indices: Any) -> ChunkedArray:
        """The values at `indices`, as a one-chunk ChunkedArray (one chunk per chunk of
        `indices` when they are chunked, as pyarrow)."""
        one = self.combine_chunks()
        if is_chunked_argument(indices):
            return self._like([one.take(c) for c in _argument_chunks(indices)])
        return self._like([one.take(indices)])

    def filter(self, mask: Any, null_selection_behavior: str = "drop") -> ChunkedArray:
        """The values where `mask` is true, chunk by chunk."""
        from .data.selection import apply
        sel = mask_selection(mask, len(self), null_selection_behavior)
        if sel.mask is None:
            out: Any = self.combine_chunks().filter(mask, null_selection_behavior)
            # a chunked mask gives chunks already (Array.filter follows the mask's chunks)
            return self._like(list(out.chunks) if isinstance(out, ChunkedArray) else [out])
        starts = self._starts()
        return self._like([make_array(apply(c.data, sel.slice(starts[k], starts[k + 1])))
                           for k, c in enumerate(self.chunks)])

    def cast(self, target_type: Any = None, safe: bool | None = None,
             options: Any = None) -> ChunkedArray:
        """Every chunk converted to `target_type` (pyarrow's safe-cast rules)."""
        from .types import ensure_type
        target_type, safe = _cast_args(target_type, safe, options)
        t = ensure_type(target_type)
        ca = type(self)([c.cast(t, safe=safe) for c in self.chunks], t)
        ca._name = self._name
        return ca

    def fill_null(self, fill_value: Any) -> ChunkedArray:
        """Nulls replaced by `fill_value`, chunk by chunk."""
        return self._like([c.fill_null(fill_value) for c in self.chunks])

    def is_null(self, *, nan_is_null: bool = False) -> ChunkedArray:
        """A boolean ChunkedArray, true where the value is null."""
        from .types import bool_
        ca = type(self)([c.is_null(nan_is_null=nan_is_null) for c in self.chunks], bool_())
        return ca

    def is_valid(self) -> ChunkedArray:
        """A boolean ChunkedArray, true where the value is not null."""
        from .types import bool_
        return type(self)([c.is_valid() for c in self.chunks], bool_())

    def unique(self) -> Array:
        """The distinct values in order of first appearance, as an Array."""
        return self.combine_chunks().unique()

    def length(self) -> int:
        """The number of values (pyarrow's alias of len())."""
        return len(self)

    def drop_null(self) -> ChunkedArray:
        """The values that are not null, chunk by chunk; as in pyarrow, chunks left with no
        value go (one empty chunk stays when none is left), and a column without nulls is
        returned as it is."""
        if self.null_count == 0:
            return self
        chunks = [c.drop_null() for c in self.chunks if c.null_count != len(c)]
        return self._like(chunks or [array([], self.type)])

    def flatten(self, memory_pool: Any = None) -> list[ChunkedArray]:
        """A struct column as one ChunkedArray per field, null where the struct is null (the
        column itself, in a list, for other types)."""
        from .data.selection import struct_field
        if not isinstance(self.type, StructType):
            return [self]
        return [ChunkedArray([make_array(struct_field(c.data, k)) for c in self.chunks],
                             f.type) for k, f in enumerate(self.type.fields)]

    def dictionary_encode(self, null_encoding: str = "mask") -> ChunkedArray:
        """The column as dictionary<int32, type> chunks sharing one dictionary (values in order
        of first appearance; see Array.dictionary_encode); empty chunks are left out, as
        pyarrow leaves them."""
        from .data.cast import dictionary_encode
        from .data.selection import combined_data
        kept = [c for c in self.chunks if len(c)]
        whole = dictionary_encode(combined_data([c.data for c in kept], self.type),
                                  null_encoding)
        pieces, pos = [], 0
        for c in kept:
            pieces.append(make_array(whole.slice(pos, len(c))))
            pos += len(c)
        ca = type(self)(pieces, whole.type)
        ca._name = self._name
        return ca

    def index(self, value: Any, start: int | None = None, end: int | None = None, *,
              memory_pool: Any = None) -> Scalar:
        """The position of the first value equal to `value` within [start, end), as an int64
        Scalar; -1 when there is none (see Array.index)."""
        return _index(self, value, start, end)

    def is_nan(self) -> ChunkedArray:
        """A bool column, true where the value is NaN (see Array.is_nan): one chunk, none for a
        column without values, as pyarrow's."""
        from .types import bool_
        result = self.combine_chunks().is_nan()       # raises for a type without a kernel
        return type(self)([result] if len(result) else [], bool_())

    def sort(self, order: str = "ascending", null_placement: str = "at_end",
             **kwargs: Any) -> ChunkedArray:
        """The values sorted, as a one-chunk column (see Array.sort)."""
        if isinstance(self.type, StructType):
            combined = self.combine_chunks()
            assert isinstance(combined, StructArray)
            return self._like([combined.sort(order, null_placement, **kwargs)])
        from .errors import ArrowNotImplementedError
        try:
            indices = _sort_indices([[c.data for c in self.chunks]], order, null_placement,
                                    kwargs, len(self))
        except ArrowNotImplementedError:
            # pyarrow's chunked sort words it so, and raises a TypeError
            raise ArrowTypeError(f"Sorting not supported for type {self.type}") from None
        return self.take(indices)

    def value_counts(self) -> Array:
        """struct<values, counts: int64> over every chunk."""
        return self.combine_chunks().value_counts()

    @property
    def nbytes(self) -> int:
        """The bytes of the buffer ranges the chunks reference (pyarrow's `nbytes`)."""
        from .data.sizes import referenced_buffer_size
        return sum(referenced_buffer_size(c.data) for c in self.chunks)

    def get_total_buffer_size(self) -> int:
        """Bytes of every buffer the chunks refer to, counted once each."""
        from .data.sizes import total_buffer_size
        return total_buffer_size([c.data for c in self.chunks])

    def to_string(self, *, indent: int = 0, window: int = 5, container_window: int = 2,
                  skip_new_lines: bool = False, element_size_limit: int = 100) -> str:
        """Arrow's pretty-printed form: the chunks as a list of arrays, `container_window`
        chunks (and list elements) and `window` values at each end (arrowipc/data/pretty.py)."""
        from .data.pretty import PrintOptions, chunked_array_to_string
        return chunked_array_to_string([c.data for c in self.chunks], self.type,
                                       PrintOptions(indent, 2, window, container_window,
                                                    skip_new_lines, element_size_limit))


def _aggregate_options(function: str, kwargs: dict[str, Any]) -> tuple[bool, int]:
    """(skip_nulls, min_count) from the keywords of an aggregate method, as pyarrow's
    ScalarAggregateOptions takes them."""
    unknown = sorted(set(kwargs) - {"skip_nulls", "min_count"})
    if unknown:
        raise TypeError(f"{function}() got an unexpected keyword argument '{unknown[0]}'")
    return bool(kwargs.get("skip_nulls", True)), int(kwargs.get("min_count", 1))


def _sort_indices(columns: list[list[ArrayData]], order: str, null_placement: str,
                  kwargs: dict[str, Any], length: int, null_key: bool = False) -> Any:
    """The int64 row order of `columns` (each one key, in turn, given as its chunks) by
    pyarrow's SortOptions; with `null_key` the first column is a bool null mask that places
    null rows as `null_placement` says, whatever the order."""
    from .data.sorting import sort_indices, sort_keys
    from .errors import ArrowNotImplementedError
    if kwargs:
        raise TypeError(f"sort() got an unexpected keyword argument '{next(iter(kwargs))}'")
    keys = sort_keys([(str(i), order, null_placement) for i in range(len(columns))])
    if null_key:
        keys[0] = ("nulls", "ascending" if null_placement == "at_end" else "descending",
                   "at_end")
    if all(c.type.kind == Kind.NULL for chunks in columns for c in chunks):
        import numpy as np
        return np.arange(length, dtype=np.int64)        # all null: all equal, order kept
    try:
        return sort_indices(columns, keys, length)
    except ArrowNotImplementedError:
        types = ", ".join(str(chunks[0].type) for chunks in columns[1 if null_key else 0:]
                          if chunks)
        raise ArrowNotImplementedError(f"Function 'array_sort_indices' has no kernel matching "
                                       f"input types ({types})") from None


def _index_value(value: Any, type: DataType) -> Any:
    """The ScalarData an index() looks for: `value` (a Python value, or a Scalar, ours or
    pyarrow's) as a value of `type`, converted as pyarrow.scalar converts it."""
    import math
    from .data.compute import scalar_data
    if hasattr(value, "as_py") and hasattr(value, "type"):
        value = value.as_py()
    if isinstance(value, float) and getattr(type, "is_integer", False) and math.isfinite(value):
        value = int(value)          # pyarrow.scalar(2.7, pa.int8()) truncates to 2
    return scalar_data(value, type)


def _index(column: Array | ChunkedArray, value: Any, start: int | None, end: int | None
           ) -> Scalar:
    """pyarrow's index(): the first position of `value` in column[start:end], or -1."""
    from .data.compute import index_of
    from .types import int64
    if start is not None:
        column = column.slice(start, None if end is None else end - start)
    elif end is not None:
        column = column.slice(0, end)
    if column.type.name == "halffloat":           # pyarrow's answer, before any conversion
        from .errors import ArrowNotImplementedError
        raise ArrowNotImplementedError("Function 'index' has no kernel matching input types "
                                       "(halffloat)")
    wanted = _index_value(value, column.type)
    found, pos = -1, 0
    for c in column.chunks if isinstance(column, ChunkedArray) else [column]:
        i = index_of(c.data, wanted)
        if i >= 0:
            found = pos + i + (start or 0)
            break
        pos += len(c)
    return scalar(found, int64())


def is_pandas_dataframe(obj: object) -> bool:
    """True for a pandas.DataFrame (without importing pandas when it is not loaded)."""
    import sys
    frame = getattr(sys.modules.get("pandas"), "DataFrame", None)   # None while pandas loads
    return frame is not None and isinstance(obj, frame)


def is_pandas_series(obj: object) -> bool:
    """True for a pandas.Series or Index (without importing pandas when it is not loaded)."""
    import sys
    pd = sys.modules.get("pandas")
    series, index = getattr(pd, "Series", None), getattr(pd, "Index", None)
    return series is not None and index is not None and isinstance(obj, (series, index))


def array(obj: Any, type: DataType | str | None = None, from_pandas: bool = False) -> Array:
    """An Array from a Python sequence, a numpy array, or any __arrow_c_array__ exporter.

    As pa.array, Python binary or string values of more than BINARY_CHUNK_LIMIT bytes in all give
    a ChunkedArray instead, split where a chunk would pass the limit (the annotation names the
    usual answer, so that the many callers building small arrays need no check)."""
    from .types import ensure_type
    if isinstance(obj, Array):
        if type is not None and ensure_type(type) != obj.type:
            raise ArrowTypeError(f"array of type {obj.type} cannot be used as {type}")
        return obj
    if type is not None:
        type = ensure_type(type)
    if is_pandas_series(obj):
        return Array.from_pandas(obj, type=type)
    if hasattr(obj, "__arrow_c_array__"):
        from .data.interop import import_array
        field, data = import_array(obj)
        return make_array(data)
    if hasattr(obj, "__arrow_c_stream__"):
        from .data.interop import import_array_stream
        chunks = [make_array(d) for d in import_array_stream(obj)[1]]
        if len(chunks) == 1:
            return chunks[0]
        raise ArrowInvalid("array() got a stream of several chunks; use chunked_array()")
    from .data.from_python import array_data_from_python
    try:
        return make_array(array_data_from_python(obj, type))
    except ArrowCapacityError:
        pieces = binary_chunk_data(obj, type)
        if pieces is None:
            raise
        chunked = ChunkedArray([make_array(d) for d in pieces], pieces[0].type)
        return chunked          # type: ignore[return-value]  # see the docstring


# The most bytes one chunk of 32-bit-offset binary or string holds when built from Python values:
# pyarrow's BinaryBuilder memory limit (INT32_MAX - 1). pa.array starts a new chunk at the value
# that would pass it and returns a ChunkedArray.
BINARY_CHUNK_LIMIT = 2**31 - 2


def binary_chunk_bounds(offsets: Any, type: DataType, where: str,
                         limit: int = BINARY_CHUNK_LIMIT) -> list[int]:
    """[0, b1, ..., n]: the row bounds that split n binary or string values into chunks of at most
    `limit` bytes, greedily as pyarrow does (a value that would take its chunk past the limit
    starts the next one). `offsets` are the values' n + 1 cumulative byte offsets from 0 (a list
    or a numpy array). A single value over the limit raises ArrowCapacityError."""
    from bisect import bisect_right
    n = len(offsets) - 1
    bounds, start = [0], 0
    while offsets[n] - offsets[start] > limit:
        end = bisect_right(offsets, offsets[start] + limit, lo=start) - 1
        if end == start:
            size = int(offsets[start + 1] - offsets[start])
            raise ArrowCapacityError(
                f"{where}: value {start} is {size} bytes, more than one {type} array holds "
                f"({limit}); use large_{type}")
        bounds.append(end)
        start = end
    bounds.append(n)
    return bounds


def binary_chunk_data(obj: Any, type: DataType | None) -> list[ArrayData] | None:
    """pa.array's chunks for Python binary or string values (a list, a tuple or a numpy array of
    objects, bytes or str) over BINARY_CHUNK_LIMIT bytes in all (None for any other type or
    input): each piece built by the usual kernel."""
    import sys
    from itertools import accumulate
    from .data.from_python import array_data_from_python, infer_type
    np = sys.modules.get("numpy")
    if np is not None and isinstance(obj, np.ndarray) and obj.ndim == 1 and \
            obj.dtype.kind in "OSU":
        # as the kernel takes such arrays: their Python values, masked entries as nulls
        mask = np.ma.getmaskarray(obj) if isinstance(obj, np.ma.MaskedArray) else None
        values = np.asarray(obj.data if mask is not None else obj).tolist()
        if mask is not None:
            for i in np.flatnonzero(mask).tolist():
                values[i] = None
    elif isinstance(obj, (list, tuple)):
        values = list(obj)
    else:
        return None
    t = type if type is not None else infer_type(values)
    if t.kind != Kind.BINARY:           # string and binary (32-bit offsets), not large_ or views
        return None

    def nbytes(v: Any) -> int:
        if v is None:
            return 0
        if isinstance(v, str):
            return len(v) if v.isascii() else len(v.encode("utf8", "surrogatepass"))
        return memoryview(v).nbytes

    offsets = list(accumulate(map(nbytes, values), initial=0))
    bounds = binary_chunk_bounds(offsets, t, "array")
    return [array_data_from_python(values[a:b], t) for a, b in zip(bounds, bounds[1:])]


def chunked_array(chunks: Iterable[Array | Any] | Any, type: DataType | str | None = None
                  ) -> ChunkedArray:
    """A ChunkedArray from arrays or sequences of one type, or an __arrow_c_stream__ exporter."""
    if hasattr(chunks, "__arrow_c_stream__") and not isinstance(chunks, (list, tuple)):
        from .data.interop import import_array_stream
        field, datas = import_array_stream(chunks)
        return ChunkedArray([make_array(d) for d in datas], field.type)
    from .types import ensure_type
    return ChunkedArray(chunks, ensure_type(type) if type is not None else None)


def nulls(length: int, type: DataType | str | None = None) -> Array:
    """An array of `length` nulls (of type null unless `type` is given)."""
    from .types import null as _null, ensure_type
    t = ensure_type(type) if type is not None else _null()
    return array([None] * length, type=t)


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


def slice_rows(obj: Any, key: slice) -> Any:
    """`obj[key]` for a slice of an Array, ChunkedArray, RecordBatch or Table, as pyarrow: step 1
    is a zero-copy slice; any other step a take of the strided rows (a negative one reverses)."""
    start, stop, step = key.indices(len(obj))      # ValueError for step 0, as pyarrow
    if step == 1:
        return obj.slice(start, max(0, stop - start))
    import numpy as np
    from .types import int64
    return obj.take(array(np.arange(start, stop, step, dtype=np.int64), int64()))


def is_chunked_argument(obj: Any) -> bool:
    """True for a ChunkedArray argument: ours, or another library's (a stream, not an array)."""
    return isinstance(obj, ChunkedArray) or (
        not isinstance(obj, Array) and hasattr(obj, "__arrow_c_stream__")
        and not hasattr(obj, "__arrow_c_array__"))


def _argument_chunks(obj: Any) -> list[Array]:
    """The chunks of a chunked argument (is_chunked_argument), as our Arrays."""
    return list((obj if isinstance(obj, ChunkedArray) else chunked_array(obj)).chunks)


def argument_data(obj: Any, type: DataType | None = None) -> ArrayData:
    """The ArrayData of a method's array argument: an Array's own, a ChunkedArray's chunks
    combined, else what arrowipc.array makes of it (a list, a numpy array...)."""
    if isinstance(obj, Array):
        return obj.data
    if is_chunked_argument(obj):
        # indices or a mask in several chunks (pyarrow's too): one array of them
        from .data.selection import combined_data
        ca = obj if isinstance(obj, ChunkedArray) else chunked_array(obj)
        return combined_data([c.data for c in ca.chunks], ca.type)
    return array(obj, type=type).data


def mask_selection(mask: Any, length: int, null_selection_behavior: str) -> Selection:
    """The rows of `length` a filter keeps, from its boolean `mask` argument."""
    from .data.selection import Selection, check_null_selection_behavior
    from .types import bool_
    check_null_selection_behavior(null_selection_behavior)
    return Selection.from_mask(argument_data(mask, bool_()), length, null_selection_behavior)


# -- scalars: one value of an Array or ChunkedArray, as pyarrow's `arr[i]` returns it -------------
# A Scalar is a one-row view of its array (O(1) to make; the value converts to Python only when
# `as_py()` asks). Two scalars are equal when their types are equal and their values are; that
# holds against pyarrow's scalars too, which have the same `type` and `as_py()`.

def _same_layout(a: DataType, b: DataType) -> bool:
    """Whether values of `a` are laid out as values of `b`: the same buffers of the same
    widths, and children of the same layouts."""
    a, b = a.storage_type, b.storage_type
    if a.kind != b.kind or isinstance(a, DictionaryType) or isinstance(b, DictionaryType):
        return a == b
    if a.kind == Kind.FIXED and a.byte_width != b.byte_width:
        return False
    if a.kind == Kind.FIXED_SIZE_LIST and a.list_size != b.list_size:  # type: ignore[attr-defined]
        return False
    fa, fb = a.fields, b.fields
    return len(fa) == len(fb) and all(_same_layout(x.type, y.type) for x, y in zip(fa, fb))


def _viewed(data: ArrayData, target: DataType) -> ArrayData:
    """`data`'s buffers under `target` (of the same layout), children viewed in turn."""
    kids = [_viewed(c, f.type) for c, f in zip(data.children, target.storage_type.fields)]
    return ArrayData(target, data.length, data.offset, data.null_count, data.buffers, kids)


class Scalar:
    """One value of an array, with its type and validity."""
    __slots__ = ("_array",)

    def __init__(self, array: Array) -> None:
        # Internal: `array` is a one-row arrowipc Array; use arr[i] or arrowipc.scalar().
        self._array = array

    @property
    def type(self) -> DataType:
        """The DataType of the value."""
        return self._array.type

    @property
    def is_valid(self) -> bool:
        """False for a null."""
        return self._array.null_count == 0

    def as_py(self, **kwargs: Any) -> Any:
        """The value as a Python object (None for a null), as Array.to_pylist gives it."""
        return self._array.to_pylist()[0]

    def cast(self, target_type: Any = None, safe: bool = True, options: Any = None) -> "Scalar":
        """This value converted to `target_type` (pyarrow's safe-cast rules)."""
        return Scalar(self._array.cast(target_type, safe=safe, options=options))

    def validate(self, *, full: bool = False) -> None:
        """Check the value's memory (and its content when `full`)."""
        self._array.validate(full=full)

    def to_pyarrow(self) -> Any:
        """The same data as a pyarrow.Scalar, zero-copy (arrowipc.handoff; needs pyarrow)."""
        from .handoff import to_pyarrow
        return to_pyarrow(self._array, "scalar")

    def equals(self, other: object) -> bool:
        """True when `other` (ours or pyarrow's) has an equal type and an equal value."""
        if not hasattr(other, "as_py") or not hasattr(other, "type"):
            return False
        if not _same_type(self.type, other.type):
            return False
        a, b = self.as_py(), other.as_py()
        return bool(a == b or (a != a and b != b))

    def __eq__(self, other: object) -> bool:
        return self.equals(other)

    def __hash__(self) -> int:
        v = self.as_py()
        try:
            return hash((str(self.type), v))
        except TypeError:
            return hash((str(self.type), repr(v)))

    def __bool__(self) -> bool:
        return self.is_valid

    def __str__(self) -> str:
        return str(self.as_py())

    def __repr__(self) -> str:
        name = type(self.type).__name__
        return f"<arrowipc.Scalar[{self.type}] ({name}): {self.as_py()!r}>"

    def __reduce__(self) -> tuple[Any, tuple[Any, DataType]]:
        return (scalar, (self.as_py(), self.type))

    # nested values: pyarrow lets list and struct scalars be indexed
    def __len__(self) -> int:
        v = self.as_py()
        if not isinstance(v, (list, dict)):
            raise TypeError(f"a {self.type} scalar has no length")
        return len(v)

    def __getitem__(self, key: Any) -> Any:
        arr = self._array
        if isinstance(arr, StructArray):
            return arr.field(key)[0]
        if isinstance(arr, BaseListArray) and self.is_valid:
            return arr.flatten()[key]
        raise TypeError(f"a {self.type} scalar cannot be indexed")

    @property
    def values(self) -> Array | None:
        """The values of a list scalar as an Array (None when null)."""
        if isinstance(self._array, BaseListArray):
            return self._array.flatten() if self.is_valid else None
        raise AttributeError("values")


def _same_type(a: Any, b: Any) -> bool:
    if a == b:
        return True
    # a pyarrow type: compare through its string form, which arrowipc types reproduce
    return type(a).__module__.split(".")[0] != type(b).__module__.split(".")[0] and str(a) == str(b)


def scalar(value: Any, type: Any = None) -> Scalar:
    """A Scalar holding `value` (type inferred as arrowipc.array infers it, unless given)."""
    if isinstance(value, Scalar):
        return value if type is None else value.cast(type)
    return Scalar(array([value], type=type))


from . import _upcalls                              # noqa: E402   (the pandas shim's ChunkedArray)
_upcalls.register(__name__, ChunkedArray=ChunkedArray)

