"""Arrays: zero-copy views over ArrayData, with pyarrow's names.

An Array never owns memory itself: its ArrayData holds Buffers, and each Buffer keeps its owner (input
bytes, a memory map, an allocation, an imported C array) alive. Slicing is O(1).
"""
from __future__ import annotations

from ._core.arraydata import ArrayData
from ._core import bitmap as _bitmap
from .errors import ArrowIndexError, ArrowInvalid, ArrowTypeError
from .validate import null_count_of
from .types import (BinaryType, DataType, ExtensionType, Field, FixedSizeBinaryType, Kind,
                    MapType)
from . import pandas_shim as _pandas
from .tableops import ArrayOps, ChunkedArrayOps, referenced_buffer_size, total_buffer_size

__all__ = ["Array", "ChunkedArray", "array", "chunked_array", "make_array", "nulls"]

TYPE_CHECKING = False               # typing itself is not imported at run time (slow)
if TYPE_CHECKING:
    import builtins
    from typing import Any, Iterable, Iterator

    from ._core.buffer import Buffer
    from .scalar import Scalar


class Array(ArrayOps):
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
        return referenced_buffer_size(self.data)

    # -- slicing and access ---------------------------------------------------------------------
    def slice(self, offset: int = 0, length: int | None = None) -> Array:
        """A zero-copy view of `length` values (to the end by default) from `offset`."""
        return make_array(self.data.slice(offset, length))

    def __getitem__(self, key: int | builtins.slice) -> Any:
        if isinstance(key, slice):
            start, stop, step = key.indices(len(self))
            if step != 1:
                raise ArrowInvalid("only contiguous slices (step 1) are supported")
            return self.slice(start, max(0, stop - start))
        n = len(self)
        i = int(key)
        if i < 0:
            i += n
        if not 0 <= i < n:
            raise ArrowIndexError(f"index {key} out of bounds for array of length {n}")
        from ._upcalls import Scalar
        return Scalar(self.slice(i, 1))

    def __iter__(self) -> Iterator[Scalar]:
        from ._upcalls import Scalar
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
        from .to_python import maps_as_pydicts as as_dicts, to_pylist
        return as_dicts(to_pylist(self.data), self.type, maps_as_pydicts)

    def to_numpy(self, zero_copy_only: bool = True, writable: bool = False) -> Any:
        """A numpy view of the values (fixed-width primitive types; zero-copy without nulls)."""
        from .to_python import to_numpy
        return to_numpy(self.data, zero_copy_only=zero_copy_only, writable=writable)

    to_pandas = _pandas.array_to_pandas
    from_pandas = classmethod(_pandas.array_from_pandas)

    def equals(self, other: object) -> bool:
        """Same type and values; `other` may be any object exporting `__arrow_c_array__`."""
        if not isinstance(other, Array) and hasattr(other, "__arrow_c_array__"):
            other = array(other)
        if not isinstance(other, Array) or other.type != self.type or len(other) != len(self):
            return False
        return _values_equal(self.to_pylist(), other.to_pylist())

    def validate(self, full: bool = False) -> None:
        """Check the structure (and values, with `full`); ArrowInvalid if broken."""
        from .validate import validate_array
        validate_array(self.data, full=full)

    # -- interop --------------------------------------------------------------------------------
    def __arrow_c_schema__(self) -> object:
        from .interop import export_schema
        return export_schema(Field("", self.type))

    def __arrow_c_array__(self, requested_schema: object = None) -> tuple[object, object]:
        from .interop import export_array
        return export_array(self.data, Field("", self.type), requested_schema)

    def __str__(self) -> str:
        return self.to_string()

    def __repr__(self) -> str:
        # pyarrow's form: the object's identity line, then the printout
        return f"{object.__repr__(self)}\n{self.to_string()}"

    def __reduce__(self) -> tuple[Any, ...]:
        return (array, (self.to_pylist(), self.type))


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


def _values_equal(a: list[Any], b: list[Any]) -> bool:
    if len(a) != len(b):
        return False
    for x, y in zip(a, b):
        if x != y and not (x != x and y != y):  # NaN == NaN for array equality
            return False
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

    def flatten(self) -> list[Array]:
        """One array per field, each sliced to this array's offset and length."""
        return [self.field(i) for i in range(self.type.num_fields)]


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


class ChunkedArray(ChunkedArrayOps):
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
                raise ArrowInvalid(f"chunk of type {c.type} in a ChunkedArray of type {type}")
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

    def equals(self, other: object) -> bool:
        """Whether `other` is a ChunkedArray of the same type and values (chunking aside)."""
        return (isinstance(other, ChunkedArray) and other.type == self.type
                and _values_equal(self.to_pylist(), other.to_pylist()))

    def to_numpy(self, zero_copy_only: bool = False) -> Any:
        """The values as one numpy array (copied when there are several chunks)."""
        import numpy as np
        if len(self.chunks) == 1:
            return self.chunks[0].to_numpy(zero_copy_only=False)
        if not self.chunks:
            return np.array([])
        return np.concatenate([c.to_numpy(zero_copy_only=False) for c in self.chunks])

    to_pandas = _pandas.chunked_array_to_pandas

    def __arrow_c_stream__(self, requested_schema: object = None) -> object:
        from .interop import export_array_stream
        return export_array_stream(Field("", self.type), (c.data for c in self.chunks),
                                   requested_schema)

    def __str__(self) -> str:
        return self.to_string()

    def __repr__(self) -> str:
        # pyarrow's form: the object's identity line, then the printout
        return f"{object.__repr__(self)}\n{self.to_string()}"


def array(obj: Any, type: DataType | str | None = None, from_pandas: bool = False) -> Array:
    """An Array from a Python sequence, a numpy array, or any __arrow_c_array__ exporter."""
    from .types import ensure_type
    if isinstance(obj, Array):
        if type is not None and ensure_type(type) != obj.type:
            raise ArrowTypeError(f"array of type {obj.type} cannot be used as {type}")
        return obj
    if type is not None:
        type = ensure_type(type)
    if _pandas.is_pandas_series(obj):
        return Array.from_pandas(obj, type=type)
    if hasattr(obj, "__arrow_c_array__"):
        from .interop import import_array
        field, data = import_array(obj)
        return make_array(data)
    if hasattr(obj, "__arrow_c_stream__"):
        from .interop import import_array_stream
        chunks = [make_array(d) for d in import_array_stream(obj)[1]]
        if len(chunks) == 1:
            return chunks[0]
        raise ArrowInvalid("array() got a stream of several chunks; use chunked_array()")
    from .from_python import array_data_from_python
    return make_array(array_data_from_python(obj, type))


def chunked_array(chunks: Iterable[Array | Any] | Any, type: DataType | str | None = None
                  ) -> ChunkedArray:
    """A ChunkedArray from arrays or sequences of one type, or an __arrow_c_stream__ exporter."""
    if hasattr(chunks, "__arrow_c_stream__") and not isinstance(chunks, (list, tuple)):
        from .interop import import_array_stream
        field, datas = import_array_stream(chunks)
        return ChunkedArray([make_array(d) for d in datas], field.type)
    from .types import ensure_type
    return ChunkedArray(chunks, ensure_type(type) if type is not None else None)


def nulls(length: int, type: DataType | str | None = None) -> Array:
    """An array of `length` nulls (of type null unless `type` is given)."""
    from .types import null as _null, ensure_type
    t = ensure_type(type) if type is not None else _null()
    return array([None] * length, type=t)


from . import _upcalls                              # noqa: E402   (the lower modules' Array makers)
_upcalls.register(__name__, Array=Array, make_array=make_array, array=array,
                  chunked_array=chunked_array, ChunkedArray=ChunkedArray)

