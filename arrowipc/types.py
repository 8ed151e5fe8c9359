"""Data types, fields and schemas: the logical half of the columnar model.

Every member of the `Type` union of Schema.fbs has a DataType here, plus dictionary and extension
types (which the format expresses through Field attributes). Each type knows its physical layout
(`kind`, `buffer_count`, `byte_width`), which is what the IPC reader, the writer and the C data
interface dispatch on. Names, factories and string forms follow pyarrow.
"""
from __future__ import annotations

from _collections_abc import Iterable, Iterator, Mapping  # as collections.abc; typing is slow

from .errors import ArrowInvalid, ArrowKeyError, ArrowTypeError

TYPE_CHECKING = False               # typing itself is not imported at run time (slow)
if TYPE_CHECKING:
    from typing import Any, Callable, TypeAlias, Union

    from ._core.buffer import Buffer
    from .table import Table

    #: what metadata arguments accept: a mapping or pairs of str or bytes
    MetadataLike: TypeAlias = Union[Mapping[str, str], Mapping[bytes, bytes], Mapping[str, bytes],
                                    Mapping[bytes, str],
                                    Iterable[tuple[Union[str, bytes], Union[str, bytes]]], None]
    #: a child of a nested type: a Field, or a DataType (named by its position)
    FieldLike: TypeAlias = Union['Field', 'DataType']

__all__ = [
    # classes
    "BinaryType", "DataType", "DecimalType", "DictionaryType", "DurationType", "ExtensionType",
    "Field", "FixedSizeBinaryType", "FixedSizeListType", "KeyValueMetadata", "Kind",
    "LargeListType", "LargeListViewType", "ListType", "ListViewType", "MapType", "PrimitiveType",
    "RunEndEncodedType", "Schema", "StructType", "Time32Type", "Time64Type", "TimestampType",
    "UnionType",
    # type factories and their pyarrow aliases
    "binary", "binary_view", "bool_", "date32", "date64", "day_time_interval", "decimal128",
    "decimal256", "decimal32", "decimal64", "dense_union", "dictionary", "double", "duration",
    "fixed_size_binary", "fixed_size_list", "float16", "float32", "float64", "float_",
    "halffloat", "int16", "int32", "int64", "int8", "large_binary", "large_list",
    "large_list_view", "large_string", "large_utf8", "list_", "list_view", "map_",
    "month_day_nano_interval", "month_interval", "null", "run_end_encoded", "sparse_union",
    "string", "string_view", "struct", "time32", "time64", "timestamp", "uint16", "uint32",
    "uint64", "uint8", "union", "utf8", "utf8_view",
    # fields, schemas, metadata and lookups
    "TIME_UNITS", "ensure_type", "field", "normalize_metadata", "schema", "type_for_alias",
]


class Kind:
    """Physical layout families; small ints so the Cython layer can switch on them.

    The values are defined once, in arrowipc/_core/kinds.pxd.
    """
    NULL = BOOL = FIXED = BINARY = LARGE_BINARY = VIEW = LIST = LARGE_LIST = LIST_VIEW = 0
    LARGE_LIST_VIEW = FIXED_SIZE_LIST = STRUCT = SPARSE_UNION = DENSE_UNION = 0
    RUN_END_ENCODED = DICTIONARY = 0


def _load_kinds() -> None:
    from ._core.kinds import KINDS
    for name, value in KINDS.items():
        setattr(Kind, name, value)


_load_kinds()


TIME_UNITS = ("s", "ms", "us", "ns")


def _check_unit(unit: str) -> str:
    if unit not in TIME_UNITS:
        raise ArrowInvalid(f"time unit must be one of {TIME_UNITS}, got {unit!r}")
    return unit


def normalize_metadata(metadata: MetadataLike) -> dict[bytes, bytes] | None:
    """Metadata as a dict of bytes to bytes (pyarrow's form), or None when empty."""
    if not metadata:
        return None
    out: dict[bytes, bytes] = {}
    items = metadata.items() if isinstance(metadata, Mapping) else metadata
    for k, v in items:
        out[k.encode() if isinstance(k, str) else bytes(k)] = v.encode() if isinstance(v, str) else bytes(v)
    return out


class KeyValueMetadata(Mapping):  # type: ignore[type-arg]   # Mapping[bytes, bytes], str keys too
    """Key-value metadata, such as a record batch's custom metadata (pyarrow.KeyValueMetadata).

    Keys and values are bytes; lookups take str or bytes keys, and the mapping compares equal to
    any mapping with the same items whether they are spelled as str or bytes (so
    ``md == {"batch_id": "0"}`` holds). Duplicate keys, which the format allows, are kept:
    `get_all` returns every value of a key, item access the last one.
    """
    __slots__ = ("_pairs", "_dict")

    def __init__(self, __arg0__: Any = None, **kwargs: str | bytes) -> None:
        pairs = []
        items: Any = []
        if __arg0__ is not None:
            items = __arg0__.items() if isinstance(__arg0__, Mapping) else __arg0__
        for k, v in list(items) + list(kwargs.items()):
            pairs.append((_as_bytes(k), _as_bytes(v)))
        self._pairs = tuple(pairs)
        self._dict = dict(pairs)

    def __getitem__(self, key: str | bytes) -> bytes:
        return self._dict[_as_bytes(key)]

    def __contains__(self, key: object) -> bool:
        return isinstance(key, (str, bytes)) and _as_bytes(key) in self._dict

    def __iter__(self) -> Iterator[bytes]:
        return iter(k for k, _ in self._pairs)

    def __len__(self) -> int:
        return len(self._pairs)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, KeyValueMetadata):
            return self.equals(other)
        if isinstance(other, Mapping):
            try:
                return self.equals(KeyValueMetadata(other))
            except TypeError:
                return False
        return NotImplemented

    def equals(self, other: KeyValueMetadata) -> bool:
        """Whether both hold the same pairs, in any order of keys (pyarrow's rule: the pairs
        sorted by key, a repeated key's values in their order)."""
        if not isinstance(other, KeyValueMetadata):
            if type(other).__name__ != "KeyValueMetadata" or not isinstance(other, Mapping):
                raise TypeError(f"Argument 'other' has incorrect type (expected "
                                f"KeyValueMetadata, got {type(other).__name__})")
            other = KeyValueMetadata(other.items())
        by_key = sorted(self._pairs, key=lambda pair: pair[0])   # stable: repeats keep order
        return len(self._pairs) == len(other._pairs) and \
            by_key == sorted(other._pairs, key=lambda pair: pair[0])

    __hash__ = None  # type: ignore[assignment]   # mutable-looking mapping: unhashable

    def key(self, i: int) -> bytes:
        """The i-th key."""
        return self._pairs[i][0]

    def value(self, i: int) -> bytes:
        """The i-th value."""
        return self._pairs[i][1]

    def keys(self) -> list[bytes]:  # type: ignore[override]   # pyarrow returns lists
        """The keys, in order (repeated keys repeated)."""
        return [k for k, _ in self._pairs]

    def values(self) -> list[bytes]:  # type: ignore[override]
        """The values, in order."""
        return [v for _, v in self._pairs]

    def items(self) -> list[tuple[bytes, bytes]]:  # type: ignore[override]
        """The (key, value) pairs, in order."""
        return list(self._pairs)

    def get_all(self, key: str | bytes) -> list[bytes]:
        """Every value stored under `key` (keys may repeat)."""
        key = _as_bytes(key)
        return [v for k, v in self._pairs if k == key]

    def to_dict(self) -> dict[bytes, bytes]:
        """A dict of bytes to bytes (the last value of a repeated key)."""
        return dict(self._dict)

    def __repr__(self) -> str:
        # pyarrow's text: one `key: value` line a pair under a heading
        return "\n-- metadata --" + "".join(
            f"\n{k.decode(errors='replace')}: {v.decode(errors='replace')}" for k, v in self._pairs)


def _as_bytes(value: object) -> bytes:
    if isinstance(value, str):
        return value.encode()
    if isinstance(value, (bytes, bytearray, memoryview)):
        return bytes(value)
    raise TypeError(f"metadata keys and values must be str or bytes, not {type(value).__name__}")


def _peer(other: object, kind: str) -> Any:
    """`other` (another library's object) imported for comparison, or None."""
    if other is None or isinstance(other, (str, bytes, int, float)):
        return None
    from .data.cschema import peer_as_ours
    return peer_as_ours(other, kind)


# pyarrow's type ids (arrow::Type::type), by the name of the type without its parameters
_PYARROW_TYPE_IDS = {
    "null": 0, "bool": 1, "uint8": 2, "int8": 3, "uint16": 4, "int16": 5, "uint32": 6, "int32": 7,
    "uint64": 8, "int64": 9, "halffloat": 10, "float": 11, "double": 12, "string": 13,
    "binary": 14, "fixed_size_binary": 15, "date32": 16, "date64": 17, "timestamp": 18,
    "time32": 19, "time64": 20, "month_interval": 21, "day_time_interval": 22, "decimal128": 23,
    "decimal256": 24, "list": 25, "struct": 26, "sparse_union": 27, "dense_union": 28,
    "dictionary": 29, "map": 30, "extension": 31, "fixed_size_list": 32, "duration": 33,
    "large_string": 34, "large_binary": 35, "large_list": 36, "month_day_nano_interval": 37,
    "run_end_encoded": 38, "string_view": 39, "binary_view": 40, "list_view": 41,
    "large_list_view": 42, "decimal32": 43, "decimal64": 44,
}


class DataType:
    """Base of all types. Subclasses set `kind`, `name` and layout attributes."""
    __slots__ = ("kind", "name", "byte_width", "bit_width")

    def __init__(self, kind: int, name: str, bit_width: int = 0) -> None:
        self.kind = kind
        self.name = name
        self.bit_width = bit_width
        self.byte_width = bit_width // 8

    # -- identity -------------------------------------------------------------------------------
    def _key(self) -> tuple[Any, ...]:
        return (self.name,)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, str):
            return str(self) == other
        if not isinstance(other, DataType):
            other = _peer(other, "type")
        return isinstance(other, DataType) and type(other) is type(self) and self._key() == other._key()

    def __ne__(self, other: object) -> bool:
        return not self.__eq__(other)

    def __hash__(self) -> int:
        # pyarrow's hash (its str), so a dict keyed by pyarrow's types finds ours; equal types
        # print alike, and a type equals its str
        return hash(str(self))

    def to_pyarrow(self) -> Any:
        """The same data as a pyarrow.DataType, zero-copy (arrowipc.handoff; needs pyarrow)."""
        from .handoff import to_pyarrow
        return to_pyarrow(Field("", self), "type")

    def equals(self, other: object, check_metadata: bool = False) -> bool:
        """Whether `other` (ours, or any object speaking the Arrow PyCapsule interface) is the
        same type."""
        return self == other

    def __str__(self) -> str:
        return self.name

    def __repr__(self) -> str:
        # pyarrow's: the type's class, DataType for the plain ones (numbers, strings...)
        return f"{self._class_shown()}({self})"

    def _class_shown(self) -> str:
        return "DataType" if type(self) in (DataType, PrimitiveType, BinaryType) \
            else type(self).__name__

    # -- layout ---------------------------------------------------------------------------------
    @property
    def id(self) -> int:
        """pyarrow's integer id of the type (`pyarrow.lib.Type_*`), so that the predicates of
        `pyarrow.types` (`is_string`, `is_integer`, ...) answer for these types as for pyarrow's."""
        return _PYARROW_TYPE_IDS[self.name.partition("[")[0].partition("(")[0].partition("<")[0]]

    @property
    def num_fields(self) -> int:
        """The number of child fields (0 for a type without children)."""
        return 0

    def field(self, i: int | str) -> "Field":
        """The child field at index `i` (or named `i`); a type without children raises."""
        raise ArrowTypeError(f"type {self} has no child fields")

    @property
    def fields(self) -> list[Field]:
        """The child fields (none for a type without children)."""
        return []

    @property
    def storage_type(self) -> "DataType":
        """The type the values are stored as: the type itself, except for extension types."""
        return self

    def __arrow_c_schema__(self) -> object:
        from .data.cschema import export_schema
        return export_schema(self)


class PrimitiveType(DataType):
    """A type fully described by its name and width (null, bool, ints, floats, dates, intervals)."""
    __slots__ = ("is_signed", "is_integer", "is_float")

    def __init__(self, kind: int, name: str, bit_width: int = 0, is_integer: bool = False, is_signed: bool = False, is_float: bool = False) -> None:
        super().__init__(kind, name, bit_width)
        self.is_integer = is_integer
        self.is_signed = is_signed
        self.is_float = is_float


class BinaryType(DataType):
    """utf8/binary in their offset (32/64-bit) and view flavours."""
    __slots__ = ("is_utf8",)

    def __init__(self, kind: int, name: str, is_utf8: bool) -> None:
        super().__init__(kind, name, 0)
        self.is_utf8 = is_utf8


class FixedSizeBinaryType(DataType):
    """Binary values of one fixed width, `byte_width` bytes each."""
    __slots__ = ()

    def __init__(self, byte_width: int) -> None:
        byte_width = int(byte_width)
        if byte_width < 0:
            raise ArrowInvalid(f"fixed_size_binary width must be >= 0, got {byte_width}")
        super().__init__(Kind.FIXED, f"fixed_size_binary[{byte_width}]", byte_width * 8)

    def _key(self) -> tuple[Any, ...]:
        return ("fsb", self.byte_width)


class DecimalType(DataType):
    """A decimal of `precision` digits, `scale` after the point, in 32 to 256 bits."""
    __slots__ = ("precision", "scale")
    _MAX_PRECISION = {32: 9, 64: 18, 128: 38, 256: 76}

    def _class_shown(self) -> str:
        return f"Decimal{self.bit_width}Type"

    def __init__(self, bit_width: int, precision: int, scale: int = 0) -> None:
        maxp = self._MAX_PRECISION.get(bit_width)
        if maxp is None:
            raise ArrowInvalid(f"decimal bit width must be 32, 64, 128 or 256, got {bit_width}")
        if not 1 <= precision <= maxp:
            raise ArrowInvalid(f"decimal{bit_width} precision must be in [1, {maxp}], got {precision}")
        super().__init__(Kind.FIXED, f"decimal{bit_width}({precision}, {scale})", bit_width)
        self.precision = int(precision)
        self.scale = int(scale)

    def _key(self) -> tuple[Any, ...]:
        return ("decimal", self.bit_width, self.precision, self.scale)


class TimestampType(DataType):
    """A 64-bit instant since the Unix epoch in `unit`, with an optional time zone `tz`."""
    __slots__ = ("unit", "tz")

    def __init__(self, unit: str, tz: str | None = None) -> None:
        _check_unit(unit)
        name = f"timestamp[{unit}]" if tz is None else f"timestamp[{unit}, tz={tz}]"
        super().__init__(Kind.FIXED, name, 64)
        self.unit = unit
        self.tz = tz

    def _key(self) -> tuple[Any, ...]:
        return ("timestamp", self.unit, self.tz)


class Time32Type(DataType):
    """A 32-bit time of day in seconds or milliseconds."""
    __slots__ = ("unit",)

    def __init__(self, unit: str) -> None:
        if unit not in ("s", "ms"):
            raise ArrowInvalid(f"time32 unit must be 's' or 'ms', got {unit!r}")
        super().__init__(Kind.FIXED, f"time32[{unit}]", 32)
        self.unit = unit

    def _key(self) -> tuple[Any, ...]:
        return ("time32", self.unit)


class Time64Type(DataType):
    """A 64-bit time of day in microseconds or nanoseconds."""
    __slots__ = ("unit",)

    def __init__(self, unit: str) -> None:
        if unit not in ("us", "ns"):
            raise ArrowInvalid(f"time64 unit must be 'us' or 'ns', got {unit!r}")
        super().__init__(Kind.FIXED, f"time64[{unit}]", 64)
        self.unit = unit

    def _key(self) -> tuple[Any, ...]:
        return ("time64", self.unit)


class DurationType(DataType):
    """A 64-bit length of time in `unit`."""
    __slots__ = ("unit",)

    def __init__(self, unit: str) -> None:
        _check_unit(unit)
        super().__init__(Kind.FIXED, f"duration[{unit}]", 64)
        self.unit = unit

    def _key(self) -> tuple[Any, ...]:
        return ("duration", self.unit)


class _NestedType(DataType):
    """A type with child fields."""
    __slots__ = ("_fields",)
    _fields: tuple[Field, ...]

    @property
    def num_fields(self) -> int:
        """The number of child fields."""
        return len(self._fields)

    @property
    def fields(self) -> list[Field]:
        """The child fields."""
        return list(self._fields)

    def field(self, i: int | str) -> Field:
        """The child field at index `i`, or the one named `i`."""
        if isinstance(i, str):
            for f in self._fields:
                if f.name == i:
                    return f
            raise ArrowKeyError(i)
        return self._fields[i]

    def __iter__(self) -> Iterator[Field]:
        return iter(self._fields)

    def __len__(self) -> int:
        return len(self._fields)

    def _key(self) -> tuple[Any, ...]:
        return (self.name,) + tuple(f._key() for f in self._fields)


def _as_field(value: object, default_name: str) -> "Field":
    if isinstance(value, Field):
        return value
    if isinstance(value, DataType):
        return Field(default_name, value)
    raise ArrowTypeError(f"expected a DataType or Field, got {type(value).__name__}")


class _ListLike(_NestedType):
    __slots__ = ()
    _label = "list"

    def __init__(self, kind: int, value: FieldLike) -> None:
        f = _as_field(value, "item")
        super().__init__(kind, self._label, 0)
        self._fields = (f,)

    @property
    def value_field(self) -> "Field":
        """The field of the list values."""
        return self._fields[0]

    @property
    def value_type(self) -> DataType:
        """The type of the list values."""
        return self._fields[0].type

    def __str__(self) -> str:
        return f"{self._label}<{self._fields[0]._short()}>"


class ListType(_ListLike):
    """Variable-size lists with 32-bit offsets."""
    __slots__ = ()
    _label = "list"

    def __init__(self, value: FieldLike) -> None:
        super().__init__(Kind.LIST, value)


class LargeListType(_ListLike):
    """Variable-size lists with 64-bit offsets."""
    __slots__ = ()
    _label = "large_list"

    def __init__(self, value: FieldLike) -> None:
        super().__init__(Kind.LARGE_LIST, value)


class ListViewType(_ListLike):
    """Lists as (offset, size) views into one child array, 32-bit."""
    __slots__ = ()
    _label = "list_view"

    def __init__(self, value: FieldLike) -> None:
        super().__init__(Kind.LIST_VIEW, value)


class LargeListViewType(_ListLike):
    """Lists as (offset, size) views into one child array, 64-bit."""
    __slots__ = ()
    _label = "large_list_view"

    def __init__(self, value: FieldLike) -> None:
        super().__init__(Kind.LARGE_LIST_VIEW, value)


class FixedSizeListType(_ListLike):
    """Lists of exactly `list_size` values each."""
    __slots__ = ("list_size",)
    _label = "fixed_size_list"

    def __init__(self, value: FieldLike, list_size: int) -> None:
        list_size = int(list_size)
        if list_size < 0:
            raise ArrowInvalid(f"fixed_size_list size must be >= 0, got {list_size}")
        super().__init__(Kind.FIXED_SIZE_LIST, value)
        self.list_size = list_size

    def _key(self) -> tuple[Any, ...]:
        return super()._key() + (self.list_size,)

    def __str__(self) -> str:
        return f"fixed_size_list<{self._fields[0]._short()}>[{self.list_size}]"


class MapType(_NestedType):
    """map<key, item>: physically list<entries: struct<key, value>>; keys are never null."""
    __slots__ = ("keys_sorted",)

    def __init__(self, key: FieldLike, item: FieldLike, keys_sorted: bool = False, entries_name: str = "entries") -> None:
        kf = _as_field(key, "key")
        if kf.nullable:
            kf = kf.with_nullable(False)
        itf = _as_field(item, "value")
        entries = Field(entries_name, StructType([kf, itf]), nullable=False)
        super().__init__(Kind.LIST, "map", 0)
        self._fields = (entries,)
        self.keys_sorted = bool(keys_sorted)

    @property
    def key_field(self) -> "Field":
        """The field of the keys (never nullable)."""
        return self._fields[0].type.field(0)

    @property
    def item_field(self) -> "Field":
        """The field of the values."""
        return self._fields[0].type.field(1)

    @property
    def key_type(self) -> DataType:
        """The type of the keys."""
        return self.key_field.type

    @property
    def item_type(self) -> DataType:
        """The type of the values."""
        return self.item_field.type

    @property
    def value_field(self) -> Field:
        """The `entries` struct field (a map is a list of entries)."""
        return self._fields[0]

    @property
    def value_type(self) -> DataType:
        """The `entries` struct type."""
        return self._fields[0].type

    def _key(self) -> tuple[Any, ...]:
        return ("map", self.key_field._key(), self.item_field._key(), self.keys_sorted)

    def __str__(self) -> str:
        s = f"map<{self.key_type}, {self.item_type}"
        if not self.item_field.nullable:
            s += " not null"
        return s + (", keys_sorted>" if self.keys_sorted else ">")


class StructType(_NestedType):
    """A record of named child fields, one child array per field."""
    __slots__ = ()

    def __init__(self, fields: Iterable[FieldLike | tuple[str, DataType]]) -> None:
        fs = []
        for f in fields:
            if isinstance(f, tuple):
                f = Field(f[0], f[1])
            fs.append(_as_field(f, ""))
        super().__init__(Kind.STRUCT, "struct", 0)
        self._fields = tuple(fs)

    def get_field_index(self, name: str) -> int:
        """Index of the only child called `name`, or -1 when none or several are."""
        idx = [i for i, f in enumerate(self._fields) if f.name == name]
        return idx[0] if len(idx) == 1 else -1

    def __str__(self) -> str:
        return "struct<" + ", ".join(f._short() for f in self._fields) + ">"


class UnionType(_NestedType):
    """A value of one of several child types per slot; `mode` is 'sparse' or 'dense'."""
    __slots__ = ("mode", "type_codes")

    def __init__(self, fields: Iterable[FieldLike], mode: str,
                 type_codes: Iterable[int] | None = None) -> None:
        if mode not in ("sparse", "dense"):
            raise ArrowInvalid(f"union mode must be 'sparse' or 'dense', got {mode!r}")
        fs = tuple(_as_field(f, str(i)) for i, f in enumerate(fields))
        codes = list(range(len(fs))) if type_codes is None else [int(c) for c in type_codes]
        if len(codes) != len(fs):
            raise ArrowInvalid(f"union has {len(fs)} children but {len(codes)} type codes")
        if any(not 0 <= c <= 127 for c in codes) or len(set(codes)) != len(codes):
            raise ArrowInvalid(f"union type codes must be distinct and in [0, 127], got {codes}")
        super().__init__(Kind.SPARSE_UNION if mode == "sparse" else Kind.DENSE_UNION,
                         f"{mode}_union", 0)
        self._fields = fs
        self.mode = mode
        self.type_codes = codes

    def _class_shown(self) -> str:
        return "SparseUnionType" if self.mode == "sparse" else "DenseUnionType"

    def _key(self) -> tuple[Any, ...]:
        return super()._key() + (tuple(self.type_codes),)

    def __str__(self) -> str:
        inner = ", ".join(f"{f._short()}={c}" for f, c in zip(self._fields, self.type_codes))
        return f"{self.mode}_union<{inner}>"


class DictionaryType(DataType):
    """Values stored once in a dictionary and referenced by integer indices."""
    __slots__ = ("index_type", "value_type", "ordered")

    def __init__(self, index_type: DataType, value_type: DataType, ordered: bool = False) -> None:
        if not (isinstance(index_type, PrimitiveType) and index_type.is_integer):
            raise ArrowTypeError(f"dictionary index type must be an integer type, got {index_type}")
        super().__init__(Kind.DICTIONARY, "dictionary", index_type.bit_width)
        self.index_type = index_type
        self.value_type = value_type
        self.ordered = bool(ordered)

    def _key(self) -> tuple[Any, ...]:
        return ("dictionary", self.index_type._key(), self.value_type._key(), self.ordered)

    def __str__(self) -> str:
        return (f"dictionary<values={self.value_type}, indices={self.index_type}, "
                f"ordered={int(self.ordered)}>")


class RunEndEncodedType(_NestedType):
    """Runs of equal values stored once, with the logical index where each run ends."""
    __slots__ = ()

    def __init__(self, run_end_type: DataType, value_type: DataType | Field) -> None:
        if str(run_end_type) not in ("int16", "int32", "int64"):
            raise ArrowTypeError(f"run end type must be int16, int32 or int64, got {run_end_type}")
        super().__init__(Kind.RUN_END_ENCODED, "run_end_encoded", 0)
        self._fields = (Field("run_ends", run_end_type, nullable=False),
                        _as_field(value_type, "values"))

    @property
    def run_end_type(self) -> DataType:
        """The integer type of the run ends."""
        return self._fields[0].type

    @property
    def value_type(self) -> DataType:
        """The type of the run values."""
        return self._fields[1].type

    def __str__(self) -> str:
        return f"run_end_encoded<run_ends: {self.run_end_type}, values: {self.value_type}>"


class ExtensionType(DataType):
    """A user type over a storage type, identified by ARROW:extension:name in field metadata."""
    __slots__ = ("extension_name", "storage", "serialized")

    def __init__(self, extension_name: str, storage_type: DataType, serialized: bytes = b"") -> None:
        super().__init__(storage_type.kind, f"extension<{extension_name}>", storage_type.bit_width)
        self.extension_name = extension_name
        self.storage = storage_type
        self.serialized = bytes(serialized)

    @property
    def storage_type(self) -> DataType:
        """The type the values are stored as."""
        return self.storage

    @property
    def num_fields(self) -> int:
        """The storage type's number of child fields."""
        return self.storage.num_fields

    @property
    def fields(self) -> list[Field]:
        """The storage type's child fields."""
        return self.storage.fields

    def field(self, i: int | str) -> Field:
        """The storage type's child field `i`."""
        return self.storage.field(i)

    def __arrow_ext_serialize__(self) -> bytes:
        return self.serialized

    def _key(self) -> tuple[Any, ...]:
        return ("extension", self.extension_name, self.storage._key(), self.serialized)

    # Extension types are equal by name, storage and metadata, whatever Python class holds them.
    def __eq__(self, other: object) -> bool:
        if not isinstance(other, DataType):
            other = _peer(other, "type")
        return isinstance(other, ExtensionType) and self._key() == other._key()

    __hash__ = DataType.__hash__        # (defining __eq__ would drop the inherited one)


# -- factories (pyarrow names) ------------------------------------------------------------------

def _prim(kind: int, name: str, bits: int, is_integer: bool = False, is_signed: bool = False,
          is_float: bool = False) -> Callable[[], PrimitiveType]:
    t = PrimitiveType(kind, name, bits, is_integer, is_signed, is_float)

    def factory() -> PrimitiveType:
        return t
    factory.__name__ = factory.__qualname__ = name
    factory.__doc__ = f"The {name} type."
    return factory


null = _prim(Kind.NULL, "null", 0)
bool_ = _prim(Kind.BOOL, "bool", 1)
int8 = _prim(Kind.FIXED, "int8", 8, is_integer=True, is_signed=True)
int16 = _prim(Kind.FIXED, "int16", 16, is_integer=True, is_signed=True)
int32 = _prim(Kind.FIXED, "int32", 32, is_integer=True, is_signed=True)
int64 = _prim(Kind.FIXED, "int64", 64, is_integer=True, is_signed=True)
uint8 = _prim(Kind.FIXED, "uint8", 8, is_integer=True)
uint16 = _prim(Kind.FIXED, "uint16", 16, is_integer=True)
uint32 = _prim(Kind.FIXED, "uint32", 32, is_integer=True)
uint64 = _prim(Kind.FIXED, "uint64", 64, is_integer=True)
float16 = _prim(Kind.FIXED, "halffloat", 16, is_float=True)
float32 = _prim(Kind.FIXED, "float", 32, is_float=True)
float64 = _prim(Kind.FIXED, "double", 64, is_float=True)
date32 = _prim(Kind.FIXED, "date32[day]", 32)
date64 = _prim(Kind.FIXED, "date64[ms]", 64)
month_day_nano_interval = _prim(Kind.FIXED, "month_day_nano_interval", 128)
month_interval = _prim(Kind.FIXED, "month_interval", 32)
day_time_interval = _prim(Kind.FIXED, "day_time_interval", 64)
halffloat, float_, double = float16, float32, float64

_string = BinaryType(Kind.BINARY, "string", True)
_binary = BinaryType(Kind.BINARY, "binary", False)
_large_string = BinaryType(Kind.LARGE_BINARY, "large_string", True)
_large_binary = BinaryType(Kind.LARGE_BINARY, "large_binary", False)
_string_view = BinaryType(Kind.VIEW, "string_view", True)
_binary_view = BinaryType(Kind.VIEW, "binary_view", False)


def string() -> BinaryType:
    """The UTF-8 string type (32-bit offsets)."""
    return _string


utf8 = string


def large_string() -> BinaryType:
    """The UTF-8 string type with 64-bit offsets."""
    return _large_string


large_utf8 = large_string


def string_view() -> BinaryType:
    """The UTF-8 string view type."""
    return _string_view


utf8_view = string_view


def binary(length: int = -1) -> DataType:
    """The binary type; with a `length`, fixed_size_binary of that width."""
    return _binary if length == -1 else FixedSizeBinaryType(length)


def large_binary() -> BinaryType:
    """The binary type with 64-bit offsets."""
    return _large_binary


def binary_view() -> BinaryType:
    """The binary view type."""
    return _binary_view


def fixed_size_binary(byte_width: int) -> FixedSizeBinaryType:
    """Binary values of exactly `byte_width` bytes."""
    return FixedSizeBinaryType(byte_width)


def decimal32(precision: int, scale: int = 0) -> DecimalType:
    """A 32-bit decimal (precision 1 to 9)."""
    return DecimalType(32, precision, scale)


def decimal64(precision: int, scale: int = 0) -> DecimalType:
    """A 64-bit decimal (precision 1 to 18)."""
    return DecimalType(64, precision, scale)


def decimal128(precision: int, scale: int = 0) -> DecimalType:
    """A 128-bit decimal (precision 1 to 38)."""
    return DecimalType(128, precision, scale)


def decimal256(precision: int, scale: int = 0) -> DecimalType:
    """A 256-bit decimal (precision 1 to 76)."""
    return DecimalType(256, precision, scale)


def timestamp(unit: str, tz: str | None = None) -> TimestampType:
    """A timestamp in `unit` ('s', 'ms', 'us', 'ns'), optionally with a time zone."""
    return TimestampType(unit, tz)


def time32(unit: str) -> Time32Type:
    """A 32-bit time of day in 's' or 'ms'."""
    return Time32Type(unit)


def time64(unit: str) -> Time64Type:
    """A 64-bit time of day in 'us' or 'ns'."""
    return Time64Type(unit)


def duration(unit: str) -> DurationType:
    """A duration in `unit` ('s', 'ms', 'us', 'ns')."""
    return DurationType(unit)


def list_(value_type: FieldLike, list_size: int = -1) -> ListType | FixedSizeListType:
    """A list of `value_type`; with a `list_size`, a fixed-size list."""
    return ListType(value_type) if list_size == -1 else FixedSizeListType(value_type, list_size)


def large_list(value_type: FieldLike) -> LargeListType:
    """A list of `value_type` with 64-bit offsets."""
    return LargeListType(value_type)


def list_view(value_type: FieldLike) -> ListViewType:
    """A list view of `value_type`."""
    return ListViewType(value_type)


def large_list_view(value_type: FieldLike) -> LargeListViewType:
    """A list view of `value_type` with 64-bit offsets and sizes."""
    return LargeListViewType(value_type)


def fixed_size_list(value_type: FieldLike, list_size: int) -> FixedSizeListType:
    """Lists of exactly `list_size` values of `value_type`."""
    return FixedSizeListType(value_type, list_size)


def map_(key_type: FieldLike, item_type: FieldLike, keys_sorted: bool = False) -> MapType:
    """A map from `key_type` to `item_type`."""
    return MapType(key_type, item_type, keys_sorted)


def struct(fields: Iterable[FieldLike | tuple[str, DataType]] | Mapping[str, DataType]
           ) -> StructType:
    """A struct of fields, (name, type) pairs or a name-to-type mapping."""
    if isinstance(fields, Mapping):
        fields = list(fields.items())
    return StructType(fields)


def sparse_union(child_fields: Iterable[FieldLike], type_codes: Iterable[int] | None = None
                 ) -> UnionType:
    """A sparse union of the child fields."""
    return UnionType(child_fields, "sparse", type_codes)


def dense_union(child_fields: Iterable[FieldLike], type_codes: Iterable[int] | None = None
                ) -> UnionType:
    """A dense union of the child fields."""
    return UnionType(child_fields, "dense", type_codes)


def union(child_fields: Iterable[FieldLike], mode: str,
          type_codes: Iterable[int] | None = None) -> UnionType:
    """A union of the child fields; `mode` is 'sparse' or 'dense'."""
    return UnionType(child_fields, mode, type_codes)


def dictionary(index_type: DataType, value_type: DataType, ordered: bool = False
               ) -> DictionaryType:
    """Dictionary-encoded `value_type` with integer `index_type` indices."""
    return DictionaryType(index_type, value_type, ordered)


def run_end_encoded(run_end_type: DataType, value_type: DataType) -> RunEndEncodedType:
    """Run-end encoded `value_type` with `run_end_type` (int16/32/64) run ends."""
    return RunEndEncodedType(run_end_type, value_type)


_BY_NAME: dict[str, Callable[[], DataType]] = {t().name: t for t in (
    null, bool_, int8, int16, int32, int64, uint8, uint16, uint32, uint64, float16, float32,
    float64, date32, date64, month_interval, day_time_interval, month_day_nano_interval,
    string, binary, large_string, large_binary, string_view, binary_view)}
_BY_NAME.update({"float16": float16, "float32": float32, "float64": float64, "utf8": string,
                 "large_utf8": large_string, "date32": date32, "date64": date64,
                 "boolean": bool_, "float": float32, "str": string, "large_str": large_string})
# pyarrow's other aliases: numpy's short codes and the units of the temporal types
_BY_NAME.update({f"{k}{n // 8}": t for k, n, t in (
    ("i", 8, int8), ("i", 16, int16), ("i", 32, int32), ("i", 64, int64), ("u", 8, uint8),
    ("u", 16, uint16), ("u", 32, uint32), ("u", 64, uint64), ("f", 16, float16),
    ("f", 32, float32), ("f", 64, float64))})


def _of_unit(make: Callable[[str], DataType], unit: str) -> Callable[[], DataType]:
    return lambda: make(unit)


_BY_NAME.update({t(u).name: _of_unit(t, u) for t, units in (
    (timestamp, "s ms us ns"), (duration, "s ms us ns"), (time32, "s ms"), (time64, "us ns"))
    for u in units.split()})


def type_for_alias(name: str) -> DataType:
    """A type from its alias, as pyarrow's type_for_alias (any case): 'int64', 'i8', 'string',
    'str', 'double', 'f8', 'date32[day]', 'timestamp[ms]', 'duration[s]', ..."""
    try:
        return _BY_NAME[name.lower()]()
    except KeyError:
        raise ArrowInvalid(f"no type named {name!r}") from None


def ensure_type(t: DataType | str) -> DataType:
    """`t` if a DataType, else the type named `t`."""
    if isinstance(t, DataType):
        return t
    if isinstance(t, str):
        return type_for_alias(t)
    ours = _peer(t, "type")           # pyarrow's (or another library's) type
    if ours is not None:
        return ours
    raise ArrowTypeError(f"expected a DataType, got {type(t).__module__}.{type(t).__name__}")


# -- fields and schemas -------------------------------------------------------------------------

class Field:
    """A named, typed column of a schema or child of a nested type, with its metadata."""
    __slots__ = ("name", "type", "nullable", "metadata")

    def __init__(self, name: str, type: DataType | str, nullable: bool = True,
                 metadata: MetadataLike = None) -> None:
        if not isinstance(name, str):
            raise ArrowTypeError(f"field name must be a str, got {type(name).__name__}")
        self.name = name
        self.type = ensure_type(type)
        self.nullable = bool(nullable)
        self.metadata = normalize_metadata(metadata)

    def _key(self) -> tuple[Any, ...]:
        return (self.name, self.type._key(), self.nullable)

    def to_pyarrow(self) -> Any:
        """The same data as a pyarrow.Field, zero-copy (arrowipc.handoff; needs pyarrow)."""
        from .handoff import to_pyarrow
        return to_pyarrow(self, "field")

    def equals(self, other: object, check_metadata: bool = False) -> bool:
        """Same name, type and nullability (and metadata if asked); `other` may be any object
        speaking the Arrow PyCapsule interface."""
        if not isinstance(other, Field):
            other = _peer(other, "field")
        if not isinstance(other, Field) or self._key() != other._key():
            return False
        return not check_metadata or self.metadata == other.metadata

    def __eq__(self, other: object) -> bool:
        return self.equals(other)

    def __hash__(self) -> int:
        # pyarrow's Field hash, so dicts keyed by pyarrow's fields find ours
        return hash((self.name, self.type, self.nullable))

    def with_name(self, name: str) -> Field:
        """A copy named `name`."""
        return Field(name, self.type, self.nullable, self.metadata)

    def with_type(self, new_type: DataType | str) -> Field:
        """This field with another type."""
        return Field(self.name, new_type, self.nullable, self.metadata)

    def with_nullable(self, nullable: bool) -> Field:
        """A copy with the given nullability."""
        return Field(self.name, self.type, nullable, self.metadata)

    def with_metadata(self, metadata: MetadataLike) -> Field:
        """A copy with `metadata` in place of the field's metadata."""
        return Field(self.name, self.type, self.nullable, metadata)

    def remove_metadata(self) -> Field:
        """A copy without metadata."""
        return Field(self.name, self.type, self.nullable, None)

    def _short(self) -> str:
        return f"{self.name}: {self.type}" + ("" if self.nullable else " not null")

    def __str__(self) -> str:
        return f"pyarrow.Field<{self._short()}>".replace("pyarrow", "arrowipc")

    __repr__ = __str__

    def __arrow_c_schema__(self) -> object:
        from .data.cschema import export_schema
        return export_schema(self)


def field(name: str, type: DataType | str, nullable: bool = True, metadata: MetadataLike = None
          ) -> Field:
    """A Field: name, type, nullability and metadata."""
    return Field(name, type, nullable, metadata)


class Schema:
    """The fields of a record batch or table, with schema-level metadata."""
    __slots__ = ("_fields", "metadata", "_index", "_ipc_cache", "_fields_key", "endianness")

    def __init__(self, fields: Iterable[Field | tuple[str, DataType]], metadata: MetadataLike = None,
                 endianness: str = "little") -> None:
        fs = []
        for f in fields:
            if isinstance(f, tuple):
                f = Field(f[0], f[1])
            if not isinstance(f, Field):
                # another library's field (pyarrow's...), imported through its capsule
                theirs = f
                f = _peer(theirs, "field")
                if f is None:
                    raise ArrowTypeError(f"schema members must be Fields, got "
                                         f"{type(theirs).__name__}")
            fs.append(f)
        self._fields = tuple(fs)
        self.metadata = normalize_metadata(metadata)
        self._index: dict[str, int] | None = None
        self._ipc_cache: Any = None   # encoded Schema messages, filled by the IPC writer
        self._fields_key: tuple[Any, ...] | None = None  # the fields' identity keys, built on first comparison
        # byte order of the data: "big" only for batches read with ensure_native_endian=False
        self.endianness = endianness

    def __len__(self) -> int:
        return len(self._fields)

    def __iter__(self) -> Iterator[Field]:
        return iter(self._fields)

    def __getitem__(self, i: int | str) -> Field:
        return self.field(i)

    @property
    def names(self) -> list[str]:
        """The field names, in order."""
        return [f.name for f in self._fields]

    @property
    def types(self) -> list[DataType]:
        """The field types, in order."""
        return [f.type for f in self._fields]

    @property
    def fields(self) -> list[Field]:
        """The fields, in order."""
        return list(self._fields)

    def get_field_index(self, name: str) -> int:
        """Index of the only field called `name`, or -1 when none or several are."""
        if self._index is None:
            idx: dict[str, int] = {}
            for i, f in enumerate(self._fields):
                idx[f.name] = -1 if f.name in idx else i
            self._index = idx
        return self._index.get(name, -1)

    def get_all_field_indices(self, name: str) -> list[int]:
        """Indices of every field called `name`."""
        return [i for i, f in enumerate(self._fields) if f.name == name]

    def field_by_name(self, name: str) -> Field | None:
        """The only field called `name`, None when none or several are (pyarrow's deprecated
        form of `field`: a FutureWarning, as pyarrow's)."""
        import warnings
        warnings.warn("The 'field_by_name' method is deprecated, use 'field' instead",
                      FutureWarning, stacklevel=2)
        i = self.get_field_index(name)
        return self._fields[i] if i >= 0 else None

    def field(self, i: int | str) -> Field:
        """The field at index `i`, or the only one named `i` (ArrowKeyError otherwise)."""
        if isinstance(i, str):
            j = self.get_field_index(i)
            if j < 0:
                raise ArrowKeyError(f"no single field named {i!r} in schema")
            return self._fields[j]
        return self._fields[i]

    def _key(self) -> tuple[Any, ...]:
        # Schemas and fields are immutable: the key is built once and compared as one tuple
        # (writers check every batch's schema against theirs).
        if self._fields_key is None:
            self._fields_key = tuple(f._key() for f in self._fields)
        return self._fields_key

    def to_pyarrow(self) -> Any:
        """The same data as a pyarrow.Schema, zero-copy (arrowipc.handoff; needs pyarrow)."""
        from .handoff import to_pyarrow
        return to_pyarrow(self, "schema")

    def equals(self, other: object, check_metadata: bool = False) -> bool:
        """Same fields (and metadata if asked); `other` may be any object speaking the Arrow
        PyCapsule interface."""
        if not isinstance(other, Schema):
            other = _peer(other, "schema")
        if not isinstance(other, Schema) or len(other) != len(self):
            return False
        if self._key() != other._key():
            return False
        if not check_metadata:
            return True
        return self.metadata == other.metadata and all(
            a.metadata == b.metadata for a, b in zip(self._fields, other._fields))

    def __eq__(self, other: object) -> bool:
        return self.equals(other)

    def __hash__(self) -> int:
        # pyarrow's Schema hash: the fields and the schema metadata. As in pyarrow, two schemas
        # that differ only in metadata are equal (without check_metadata) but hash apart.
        metadata = frozenset(self.metadata.items() if self.metadata else ())
        return hash((self._fields, metadata))

    def with_metadata(self, metadata: MetadataLike) -> Schema:
        """A copy with `metadata` in place of the schema's metadata."""
        return Schema(self._fields, metadata)

    def remove_metadata(self) -> Schema:
        """A copy without schema metadata."""
        return Schema(self._fields, None)

    def append(self, field: Field) -> Schema:
        """This schema with `field` (ours, or another library's through the PyCapsule interface)
        added at the end."""
        return Schema(self._fields + (field,), self.metadata)

    def add_metadata(self, metadata: MetadataLike) -> Schema:
        """The schema with `metadata` (pyarrow's deprecated alias: it replaces, not merges)."""
        return self.with_metadata(metadata)

    def insert(self, i: int, field: Field) -> Schema:
        """The schema with `field` (ours or another library's) inserted at position i."""
        if not 0 <= i <= len(self._fields):
            raise ArrowInvalid("Invalid column index to add field.")
        return Schema(self._fields[:i] + (field,) + self._fields[i:], self.metadata)

    def set(self, i: int, field: Field) -> Schema:
        """The schema with field i replaced by `field` (ours or another library's)."""
        if not 0 <= i < len(self._fields):
            raise ArrowInvalid("Invalid column index to set field.")
        return Schema(self._fields[:i] + (field,) + self._fields[i + 1:], self.metadata)

    def remove(self, i: int) -> Schema:
        """A copy without the field at index `i`."""
        return Schema(self._fields[:i] + self._fields[i + 1:], self.metadata)

    def to_string(self, truncate_metadata: bool = True, show_field_metadata: bool = True,
                  show_schema_metadata: bool = True, element_size_limit: int = 100) -> str:
        """The schema as pyarrow prints it: a line per field, a "child i" line per nested field,
        field and schema metadata as quoted values (long ones cut to a line unless
        `truncate_metadata` is False); any single piece longer than `element_size_limit`
        characters is cut with "(... N chars omitted)"."""
        return _SchemaPrinter(truncate_metadata, show_field_metadata, show_schema_metadata,
                              element_size_limit).schema(self)

    def __str__(self) -> str:
        return self.to_string()

    __repr__ = __str__

    if TYPE_CHECKING:
        # Methods returning objects of the layers above, attached by them when they load (both
        # load with `import arrowipc`), so this module imports nothing above it:
        # arrowipc/table.py attaches empty_table and serialize (over arrowipc/ipc/serialize.py),
        # arrowipc/__init__.py from_pandas and pandas_metadata (arrowipc/pandas_shim.py).
        def empty_table(self) -> Table:
            """A Table of this schema with no rows."""

        def serialize(self) -> Buffer:
            """The framed IPC Schema message as a Buffer."""

        @classmethod
        def from_pandas(cls, df: Any, preserve_index: bool | None = None) -> Schema:
            """The schema Table.from_pandas(df) would have (arrowipc/pandas_shim.py)."""

        @property
        def pandas_metadata(self) -> dict[str, Any] | None:
            """The `pandas` schema metadata as a dict (None when absent), as pyarrow gives it."""

    def __arrow_c_schema__(self) -> object:
        from .data.cschema import export_schema
        return export_schema(self)



class _SchemaPrinter:
    """Arrow's schema pretty-printer layout, piece by piece, so str(schema) matches pyarrow's.

    A field at nesting depth d prints its children at indent 4d + 2 ("child i, name: type") and
    its metadata at 2d + 2; a truncated metadata value keeps max(10, 70 - len(key) - indent)
    bytes. Each piece (name, type, " not null", "child i, ", a metadata line) is cut on its own
    at `element_size_limit` characters."""

    def __init__(self, truncate_metadata: bool, show_field_metadata: bool,
                 show_schema_metadata: bool, element_size_limit: int) -> None:
        self.truncate = truncate_metadata
        self.field_metadata = show_field_metadata
        self.schema_metadata = show_schema_metadata
        self.limit = element_size_limit
        self.out: list[str] = []

    def _write(self, piece: str) -> None:
        if len(piece) > self.limit:
            piece = f"{piece[:self.limit]} (... {len(piece) - self.limit} chars omitted)"
        self.out.append(piece)

    def _newline(self, indent: int) -> None:
        self.out.append("\n" + " " * indent)

    def _metadata(self, title: str, metadata: Mapping[bytes, bytes], indent: int) -> None:
        if not metadata:
            return
        self._newline(indent)
        self._write(title)
        for key, value in metadata.items():
            self._newline(indent)
            keep = max(10, 70 - len(key) - indent)
            k = key.decode("utf-8", "replace")
            if self.truncate and len(value) > keep:
                self._write(f"{k}: '{value[:keep].decode('utf-8', 'replace')}' + "
                            f"{len(value) - keep}")
            else:
                self._write(f"{k}: '{value.decode('utf-8', 'replace')}'")

    def _field(self, field: Field, depth: int) -> None:
        self._write(field.name)
        self._write(": ")
        self._write(str(field.type))
        if not field.nullable:
            self._write(" not null")
        t = field.type
        # extension and dictionary types print no children (their storage/values do not show)
        children = [] if t.storage_type is not t else t.fields
        for i, child in enumerate(children):
            self._newline(4 * depth + 2)
            self._write(f"child {i}, ")
            self._field(child, depth + 1)
        if self.field_metadata and field.metadata:
            self._metadata("-- field metadata --", field.metadata, 2 * depth + 2)

    def schema(self, schema: Schema) -> str:
        for i, field in enumerate(schema):
            if i:
                self._newline(0)
            self._field(field, 0)
        if self.schema_metadata and schema.metadata:
            self._metadata("-- schema metadata --", schema.metadata, 0)
        return "".join(self.out)

def schema(fields: Iterable[Field | tuple[str, DataType]] | Mapping[str, DataType] | Schema | Any,
           metadata: MetadataLike = None) -> Schema:
    """A Schema from fields, (name, type) pairs, a mapping, or any __arrow_c_schema__ exporter."""
    if hasattr(fields, "__arrow_c_schema__") and not isinstance(fields, (list, tuple, Schema)):
        from .data.cschema import import_schema
        return import_schema(fields)
    if isinstance(fields, Schema):
        return Schema(fields, metadata if metadata is not None else fields.metadata)
    if isinstance(fields, Mapping):
        fields = list(fields.items())
    return Schema(fields, metadata)
