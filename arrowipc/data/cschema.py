"""The C data interface's schema vocabulary: DataTypes and Fields to and from the SchemaNodes
of arrowipc._core.cdata (format strings, flags, extension metadata).

The C side (structs, strings, release callbacks, arrays) lives in `_core.cdata`, which knows no
type classes; this is the model's half, so the physical layer imports nothing above it
(tests/docs/test_layering.py). Pure Python: a schema is converted once per export or import,
never per value.
"""
from __future__ import annotations

from typing import Any, Callable, Mapping

from .._core import cdata
from .._core.cdata import (FLAG_DICTIONARY_ORDERED, FLAG_MAP_KEYS_SORTED, FLAG_NULLABLE,
                          SchemaNode)
from ..errors import ArrowInvalid, ArrowNotImplementedError, ArrowTypeError
from ..extension import EXTENSION_METADATA_KEYS, EXTENSION_NAME_KEYS, apply_extension_metadata
from ..types import (BinaryType, DataType, DecimalType, DictionaryType, DurationType,
                    ExtensionType, Field, FixedSizeBinaryType, FixedSizeListType,
                    LargeListType, LargeListViewType, ListType, ListViewType, MapType,
                    PrimitiveType, RunEndEncodedType, StructType, Time32Type, Time64Type,
                    Schema, TimestampType, UnionType, binary, binary_view, bool_, date32, date64,
                    day_time_interval, float16, float32, float64, int8, int16, int32, int64,
                    large_binary, large_string, month_day_nano_interval, month_interval, null,
                    string, string_view, uint8, uint16, uint32, uint64)

__all__ = ["check_requested_schema", "export_schema", "field_from_node", "format_string",
           "import_field", "import_schema", "peer_as_ours", "schema_from_struct_field",
           "schema_node"]

_TIME_LETTER = {"s": "s", "ms": "m", "us": "u", "ns": "n"}
_UNIT_OF_LETTER = {"s": "s", "m": "ms", "u": "us", "n": "ns"}

# Types identified by their format string alone.
_FACTORY_BY_FORMAT: dict[str, Callable[[], DataType]] = {
    "n": null, "b": bool_, "c": int8, "C": uint8, "s": int16, "S": uint16, "i": int32,
    "I": uint32, "l": int64, "L": uint64, "e": float16, "f": float32, "g": float64,
    "tdD": date32, "tdm": date64, "tiM": month_interval, "tiD": day_time_interval,
    "tin": month_day_nano_interval, "u": string, "z": binary, "U": large_string,
    "Z": large_binary, "vu": string_view, "vz": binary_view,
}
_FORMAT_BY_NAME = {factory().name: fmt for fmt, factory in _FACTORY_BY_FORMAT.items()}
# The types of formats without children seen so far ("tsu:UTC", "d:38,10"...), so most nodes
# are one lookup; types are values, shared like the factories' instances. Bounded: a producer
# may send any number of distinct time zones.
_LEAF_TYPES: dict[str, DataType] = {fmt: factory() for fmt, factory in _FACTORY_BY_FORMAT.items()}
_LEAF_TYPES_MAX = 1024
_LIST_BY_FORMAT: dict[str, Callable[[Field], DataType]] = {
    "+l": ListType, "+L": LargeListType, "+vl": ListViewType, "+vL": LargeListViewType}


# -- export -------------------------------------------------------------------------------------

def _time_format(prefix: str) -> Callable[[Any], str]:
    return lambda t: f"{prefix}{_TIME_LETTER[t.unit]}"


# The format string of each type class's own node, found through the class's MRO (one lookup
# for the classes of arrowipc.types, whose own subclasses find their base's entry).
_FORMAT_OF_CLASS: dict[type, Callable[[Any], str]] = {
    PrimitiveType: lambda t: _FORMAT_BY_NAME[t.name],
    BinaryType: lambda t: _FORMAT_BY_NAME[t.name],
    FixedSizeBinaryType: lambda t: f"w:{t.byte_width}",
    DecimalType: lambda t: (f"d:{t.precision},{t.scale}" if t.bit_width == 128
                            else f"d:{t.precision},{t.scale},{t.bit_width}"),
    TimestampType: lambda t: f"ts{_TIME_LETTER[t.unit]}:{t.tz or ''}",
    Time32Type: _time_format("tt"),
    Time64Type: _time_format("tt"),
    DurationType: _time_format("tD"),
    MapType: lambda t: "+m",
    ListType: lambda t: "+l",
    LargeListType: lambda t: "+L",
    ListViewType: lambda t: "+vl",
    LargeListViewType: lambda t: "+vL",
    FixedSizeListType: lambda t: f"+w:{t.list_size}",
    StructType: lambda t: "+s",
    UnionType: lambda t: ("+ud:" if t.mode == "dense" else "+us:") + ",".join(map(str, t.type_codes)),
    RunEndEncodedType: lambda t: "+r",
    DictionaryType: lambda t: _FORMAT_BY_NAME[t.index_type.name],   # the indices' format
}


def format_string(t: DataType) -> str:
    """The C data interface format string of a (non-extension) type's own node."""
    of = _FORMAT_OF_CLASS.get(type(t))
    if of is not None:
        return of(t)
    for cls in type(t).__mro__:
        of = _FORMAT_OF_CLASS.get(cls)
        if of is not None:
            return of(t)
    raise ArrowNotImplementedError(f"no C data interface format for type {t!r}")


def _node(t: DataType, name: str, nullable: bool, metadata: Mapping[bytes, bytes] | None
          ) -> SchemaNode:
    if isinstance(t, ExtensionType):
        # Extension types travel as their storage plus two reserved metadata keys.
        md = dict(metadata) if metadata else {}
        md[EXTENSION_NAME_KEYS[0]] = t.extension_name.encode()
        md[EXTENSION_METADATA_KEYS[0]] = t.serialized
        metadata = md
        t = t.storage
    flags = FLAG_NULLABLE if nullable else 0
    if isinstance(t, DictionaryType):
        if t.ordered:
            flags |= FLAG_DICTIONARY_ORDERED
        return SchemaNode(format_string(t), name, metadata, flags, (),
                          _node(t.value_type, "", True, None))
    if isinstance(t, MapType) and t.keys_sorted:
        flags |= FLAG_MAP_KEYS_SORTED
    fields = t.fields
    children = tuple([_node(f.type, f.name, f.nullable, f.metadata) for f in fields]) \
        if fields else ()
    return SchemaNode(format_string(t), name, metadata, flags, children, None)


def schema_node(type: DataType, name: str = "", nullable: bool = True,
                metadata: Mapping[bytes, bytes] | None = None) -> SchemaNode:
    """The SchemaNode describing one field of `type` (children and dictionary included)."""
    if not isinstance(type, DataType):
        raise ArrowTypeError(f"expected a DataType to export, got {type.__class__.__name__}")
    return _node(type, name or "", nullable, metadata)


# -- import -------------------------------------------------------------------------------------

# Where a node sits, as _core.cdata's structural checks name it ("C schema.0.dictionary"): a
# chain of (parent, child index or "dictionary") pairs from the root ("C schema",), spelled out
# only for an error message.
_Path = tuple[Any, ...]
_ROOT: _Path = ("C schema",)


def _where(path: _Path, name: str) -> str:
    segments = []
    while len(path) == 2:
        path, segment = path
        segments.append(str(segment))
    return ".".join([path[0], *reversed(segments)]) + f": field {name!r}"


class _Where:
    """A field's location for messages (see _where), spelled out only if a message is made."""
    __slots__ = ("path", "name")

    def __init__(self, path: _Path, name: str) -> None:
        self.path = path
        self.name = name

    def __format__(self, spec: str) -> str:
        return format(_where(self.path, self.name), spec)

    def __str__(self) -> str:
        return _where(self.path, self.name)


def _parse_int(text: str, fmt: str, where: _Where) -> int:
    try:
        return int(text)
    except ValueError:
        raise ArrowInvalid(f"{where}: malformed format string {fmt!r} "
                           f"(expected an integer, found {text!r})") from None


def _type_from_format(fmt: str, children: list[Field], flags: int, where: _Where) -> DataType:
    """The DataType a format string and the already imported child fields describe."""

    def want_children(n: int) -> None:
        if len(children) != n:
            raise ArrowInvalid(f"{where}: format {fmt!r} needs {n} child schemas, "
                               f"found {len(children)}")

    factory = _FACTORY_BY_FORMAT.get(fmt)
    if factory is not None:
        want_children(0)
        return factory()
    if fmt.startswith("w:"):
        want_children(0)
        return FixedSizeBinaryType(_parse_int(fmt[2:], fmt, where))
    if fmt.startswith("d:"):
        want_children(0)
        parts = fmt[2:].split(",")
        if len(parts) not in (2, 3):
            raise ArrowInvalid(f"{where}: malformed decimal format string {fmt!r} "
                               "(expected 'd:precision,scale[,bits]')")
        nums = [_parse_int(x, fmt, where) for x in parts]
        bits = nums[2] if len(nums) == 3 else 128
        return DecimalType(bits, nums[0], nums[1])
    if len(fmt) >= 3 and fmt[0] == "t":
        want_children(0)
        unit = _UNIT_OF_LETTER.get(fmt[2])
        if fmt[1] == "s" and unit is not None and len(fmt) >= 4 and fmt[3] == ":":
            tz = fmt[4:]
            return TimestampType(unit, tz if tz else None)
        if len(fmt) == 3 and unit is not None:
            if fmt[1] == "t":
                return Time32Type(unit) if unit in ("s", "ms") else Time64Type(unit)
            if fmt[1] == "D":
                return DurationType(unit)
    elif fmt in _LIST_BY_FORMAT:
        want_children(1)
        return _LIST_BY_FORMAT[fmt](children[0])
    elif fmt.startswith("+w:"):
        want_children(1)
        return FixedSizeListType(children[0], _parse_int(fmt[3:], fmt, where))
    elif fmt == "+s":
        return StructType(children)
    elif fmt == "+m":
        want_children(1)
        entries = children[0]
        if not isinstance(entries.type, StructType) or entries.type.num_fields != 2:
            raise ArrowInvalid(f"{where}: map entries must be a struct of 2 fields, "
                               f"found {entries.type}")
        return MapType(entries.type.field(0), entries.type.field(1),
                       bool(flags & FLAG_MAP_KEYS_SORTED), entries.name)
    elif fmt.startswith("+ud:") or fmt.startswith("+us:"):
        codes = [_parse_int(x, fmt, where) for x in fmt[4:].split(",")] if fmt[4:] else []
        if len(codes) != len(children):
            raise ArrowInvalid(f"{where}: union format {fmt!r} lists {len(codes)} type codes "
                               f"but the schema has {len(children)} children")
        return UnionType(children, "dense" if fmt[2] == "d" else "sparse", codes)
    elif fmt == "+r":
        want_children(2)
        return RunEndEncodedType(children[0].type, children[1])
    raise ArrowInvalid(f"{where}: unsupported or malformed format string {fmt!r}")


def _field_of(node: SchemaNode, depth: int, path: _Path) -> Field:
    fmt = node.format
    t: DataType | None = _LEAF_TYPES.get(fmt) if not node.children else None
    if t is None:
        children = [_field_of(c, depth + 1, (path, i)) for i, c in enumerate(node.children)]
        where = _Where(path, node.name)
        try:
            t = _type_from_format(fmt, children, node.flags, where)
        except (ArrowInvalid, ArrowTypeError) as exc:
            if fmt in str(exc):
                raise ArrowInvalid(str(exc)) from None
            raise ArrowInvalid(f"{where}: format string {fmt!r}: {exc}") from None
        if not children and len(_LEAF_TYPES) < _LEAF_TYPES_MAX:
            _LEAF_TYPES[fmt] = t
    if node.dictionary is not None:
        if not (isinstance(t, PrimitiveType) and t.is_integer):
            raise ArrowInvalid(f"{_where(path, node.name)}: dictionary index format {fmt!r} "
                               "is not an integer type")
        values = _field_of(node.dictionary, depth + 1, (path, "dictionary"))
        t = DictionaryType(t, values.type, bool(node.flags & FLAG_DICTIONARY_ORDERED))
    metadata = node.metadata
    if metadata is not None:
        # the same rule as IPC: registered and canonical names become extension types, unknown
        # names stay storage + metadata
        t, metadata = apply_extension_metadata(t, metadata, keep_unknown=(depth == 0),
                                               where=_where(path, node.name))
    return Field(node.name, t, bool(node.flags & FLAG_NULLABLE), metadata)


def field_from_node(node: SchemaNode) -> Field:
    """The Field an imported SchemaNode describes; malformed format strings raise ArrowInvalid
    saying which field and what was expected."""
    return _field_of(node, 0, _ROOT)


# -- schema capsules of types, fields and schemas ------------------------------------------------
# (here rather than in data.interop: the __arrow_c_schema__ of arrowipc.types calls them, and this
# module imports no more than types and extension, so that cycle stays three modules)

def _as_field(obj: object) -> Field:
    if isinstance(obj, Field):
        return obj
    if isinstance(obj, DataType):
        return Field("", obj)
    raise ArrowTypeError(f"expected a Field, DataType or Schema, got {type(obj).__name__}")


def check_requested_schema(requested_schema: object) -> None:
    """Validate `requested_schema` is a schema capsule; what it asks for is not honoured."""
    if requested_schema is not None:
        field_from_node(cdata.import_schema_capsule(requested_schema))


def export_schema(obj: Field | DataType | Schema) -> object:
    """An "arrow_schema" PyCapsule for a Field, a DataType or a Schema."""
    if isinstance(obj, Schema):
        return cdata.export_schema_capsule(schema_node(StructType(obj.fields), "", False,
                                                       obj.metadata))
    f = _as_field(obj)
    return cdata.export_schema_capsule(schema_node(f.type, f.name, f.nullable, f.metadata))


def _schema_capsule_of(obj: Any) -> object:
    if hasattr(obj, "__arrow_c_schema__"):
        return obj.__arrow_c_schema__()
    return obj  # a raw "arrow_schema" capsule; cdata checks its name


def import_field(obj: object) -> Field:
    """A Field from an object with `__arrow_c_schema__` (or an "arrow_schema" capsule)."""
    return field_from_node(cdata.import_schema_capsule(_schema_capsule_of(obj)))


def schema_from_struct_field(f: Field) -> Schema:
    if not isinstance(f.type, StructType):
        raise ArrowTypeError(f"a schema must be exported as a struct type, got {f.type}")
    return Schema(f.type.fields, f.metadata)


def import_schema(obj: object) -> Schema:
    """A Schema from an object with `__arrow_c_schema__` describing a struct (pyarrow's form)."""
    return schema_from_struct_field(import_field(obj))


# -- comparison with other libraries' objects -----------------------------------------------------

def peer_as_ours(obj: object, kind: str) -> Any:
    """`obj`, an object of another Arrow library, imported as our `kind` ("type", "field" or
    "schema"; arrowipc.table.peer_as_ours adds "batch" and "table") through the PyCapsule
    interface, or None when it does not speak it (or describes another kind of object). Used by
    equality, so `ours == theirs` compares contents, whichever library made `theirs`.

    Types, fields and schemas all export `__arrow_c_schema__`; they are told apart by pyarrow's
    attribute names (a field has `nullable`, a schema `names` and `metadata`: a struct type has
    `names` too), as the capsule alone cannot.
    """
    try:
        if not hasattr(obj, "__arrow_c_schema__"):
            return None
        is_field = hasattr(obj, "nullable")
        is_schema = hasattr(obj, "names") and hasattr(obj, "metadata") and not is_field
        if kind == "schema":
            return import_schema(obj) if is_schema else None
        if kind == "field":
            return import_field(obj) if is_field and not is_schema else None
        if kind == "type":
            return import_field(obj).type if not (is_field or is_schema) else None
    except (ArrowInvalid, ArrowTypeError, TypeError, ValueError):
        return None
    return None
