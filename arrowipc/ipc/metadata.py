"""Schema, Field and DataType to and from their flatbuffer form (format/Schema.fbs, File.fbs).

Decoding walks verified tables (arrowipc.ipc._flatbuf), so corrupt metadata raises ArrowInvalid.
Encoding uses the flatbuffers builder; it runs once per stream or file, never per batch.
Slot numbers below are the field indices of the .fbs tables.
"""
from __future__ import annotations

from dataclasses import dataclass, field as dc_field

from .. import types as T
from ..errors import ArrowInvalid, ArrowNotImplementedError
from ._flatbuf import FlatTable

TYPE_CHECKING = False               # typing itself is not imported at run time
if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping, Sequence
    from typing import Any

    Builder = Any                   # a flatbuffers.Builder (the flatbuffers package is untyped)
    Path = tuple[int, ...]          # child indices from the schema root

# The format's ids (metadata versions, header and type union members, ...) live in .format; they
# are re-exported here because every metadata user needs them beside the conversions.
from .format import (  # noqa: F401
    ENDIAN_BIG, ENDIAN_LITTLE, FEATURE_COMPRESSED_BODY, FEATURE_DICTIONARY_REPLACEMENT,
    FEATURE_UNUSED, HEADER_DICTIONARY_BATCH, HEADER_NAMES, HEADER_NONE, HEADER_RECORD_BATCH,
    HEADER_SCHEMA, HEADER_SPARSE_TENSOR, HEADER_TENSOR, MAX_NESTING_DEPTH, METADATA_V1,
    METADATA_V2, METADATA_V3, METADATA_V4, METADATA_V5, TIME_UNIT_CODES, TIME_UNITS_BY_CODE,
    TYPE_BINARY, TYPE_BINARY_VIEW, TYPE_BOOL, TYPE_DATE, TYPE_DECIMAL, TYPE_DURATION,
    TYPE_FIXED_SIZE_BINARY, TYPE_FIXED_SIZE_LIST, TYPE_FLOAT, TYPE_INT, TYPE_INTERVAL,
    TYPE_LARGE_BINARY, TYPE_LARGE_LIST, TYPE_LARGE_LIST_VIEW, TYPE_LARGE_UTF8, TYPE_LIST,
    TYPE_LIST_VIEW, TYPE_MAP, TYPE_NONE, TYPE_NULL, TYPE_RUN_END_ENCODED, TYPE_STRUCT, TYPE_TIME,
    TYPE_TIMESTAMP, TYPE_UNION, TYPE_UTF8, TYPE_UTF8_VIEW)

# the format ids are re-exported: the codec modules name them through `metadata`
__all__ = [
    "DictionaryField", "SchemaInfo", "decode_custom_metadata", "decode_schema",
    "encode_custom_metadata", "DictionaryIds", "encode_schema_table", "schema_blob",
    "ENDIAN_BIG", "ENDIAN_LITTLE", "FEATURE_COMPRESSED_BODY", "FEATURE_DICTIONARY_REPLACEMENT",
    "FEATURE_UNUSED", "HEADER_DICTIONARY_BATCH", "HEADER_NAMES", "HEADER_NONE",
    "HEADER_RECORD_BATCH", "HEADER_SCHEMA", "HEADER_SPARSE_TENSOR", "HEADER_TENSOR",
    "MAX_NESTING_DEPTH", "METADATA_V1", "METADATA_V2", "METADATA_V3", "METADATA_V4",
    "METADATA_V5", "TIME_UNIT_CODES", "TIME_UNITS_BY_CODE", "TYPE_BINARY", "TYPE_BINARY_VIEW",
    "TYPE_BOOL", "TYPE_DATE", "TYPE_DECIMAL", "TYPE_DURATION", "TYPE_FIXED_SIZE_BINARY",
    "TYPE_FIXED_SIZE_LIST", "TYPE_FLOAT", "TYPE_INT", "TYPE_INTERVAL", "TYPE_LARGE_BINARY",
    "TYPE_LARGE_LIST", "TYPE_LARGE_LIST_VIEW", "TYPE_LARGE_UTF8", "TYPE_LIST", "TYPE_LIST_VIEW",
    "TYPE_MAP", "TYPE_NONE", "TYPE_NULL", "TYPE_RUN_END_ENCODED", "TYPE_STRUCT", "TYPE_TIME",
    "TYPE_TIMESTAMP", "TYPE_UNION", "TYPE_UTF8", "TYPE_UTF8_VIEW",
]



@dataclass
class DictionaryField:
    """Where the fields using one dictionary id sit (several when the id is shared)."""
    id: int
    value_type: T.DataType
    path: Path  # child indices from the schema root, of the first field using the id
    paths: list[Path] = dc_field(default_factory=list)  # every field using the id


@dataclass
class SchemaInfo:
    """A decoded Schema message: the schema plus what the reader needs beyond it."""
    schema: T.Schema
    endianness: int = ENDIAN_LITTLE
    features: list[int] = dc_field(default_factory=list)
    dictionaries: dict[int, DictionaryField] = dc_field(default_factory=dict)  # id -> field


# -- decoding ---------------------------------------------------------------------------------------

def decode_custom_metadata(table: FlatTable, slot: int) -> dict[bytes, bytes] | None:
    """dict of bytes -> bytes; None when the field is absent, {} when present but empty."""
    if not table.has(slot):
        return None
    kvs = table.tables(slot, "KeyValue")
    out: dict[bytes, bytes] = {}
    for kv in kvs:
        k, v = kv.bytes_field(0), kv.bytes_field(1)
        out[k or b""] = v or b""
    return out


def _int_type(t: FlatTable | None, where: str) -> T.DataType:
    if t is None:
        raise ArrowInvalid(f"{where}: Int type table is missing")
    bits, signed = t.int32(0), t.boolean(1)
    name = ("int" if signed else "uint") + str(bits)
    if bits not in (8, 16, 32, 64):
        raise ArrowInvalid(f"{where}: integer bit width must be 8, 16, 32 or 64, got {bits}")
    return T.type_for_alias(name)


def _decode_type(type_id: int, t: FlatTable | None, children: list[T.Field],
                 where: str) -> T.DataType:
    def need(n: int) -> None:
        if len(children) != n:
            raise ArrowInvalid(f"{where}: type {type_id} needs {n} child field(s), got {len(children)}")

    if type_id == TYPE_NULL:
        return T.null()
    if type_id == TYPE_BOOL:
        return T.bool_()
    if type_id == TYPE_UTF8:
        return T.string()
    if type_id == TYPE_BINARY:
        return T.binary()
    if type_id == TYPE_LARGE_UTF8:
        return T.large_string()
    if type_id == TYPE_LARGE_BINARY:
        return T.large_binary()
    if type_id == TYPE_UTF8_VIEW:
        return T.string_view()
    if type_id == TYPE_BINARY_VIEW:
        return T.binary_view()
    if t is None:
        raise ArrowInvalid(f"{where}: type {type_id} has no type table")
    if type_id == TYPE_INT:
        return _int_type(t, where)
    if type_id == TYPE_FLOAT:
        prec = t.int16(0)
        if prec not in (0, 1, 2):
            raise ArrowInvalid(f"{where}: floating point precision must be 0, 1 or 2, got {prec}")
        return (T.float16, T.float32, T.float64)[prec]()
    if type_id == TYPE_DECIMAL:
        bits = t.int32(2, 128)
        try:
            return T.DecimalType(bits, t.int32(0), t.int32(1))
        except ArrowInvalid as e:
            raise ArrowInvalid(f"{where}: {e}") from None
    if type_id == TYPE_DATE:
        unit = t.int16(0, 1)
        if unit not in (0, 1):
            raise ArrowInvalid(f"{where}: date unit must be 0 (day) or 1 (ms), got {unit}")
        return T.date32() if unit == 0 else T.date64()
    if type_id in (TYPE_TIME, TYPE_TIMESTAMP, TYPE_DURATION):
        code = t.int16(0, 0 if type_id == TYPE_TIMESTAMP else 1)
        time_unit = TIME_UNITS_BY_CODE.get(code)
        if time_unit is None:
            raise ArrowInvalid(f"{where}: time unit must be 0..3, got {code}")
        if type_id == TYPE_TIMESTAMP:
            return T.timestamp(time_unit, t.string(1))
        if type_id == TYPE_DURATION:
            return T.duration(time_unit)
        bits = t.int32(1, 32)
        if (bits, time_unit) not in ((32, "s"), (32, "ms"), (64, "us"), (64, "ns")):
            raise ArrowInvalid(f"{where}: time of {bits} bits cannot have unit {time_unit!r}")
        return T.time32(time_unit) if bits == 32 else T.time64(time_unit)
    if type_id == TYPE_INTERVAL:
        unit = t.int16(0)
        if unit not in (0, 1, 2):
            raise ArrowInvalid(f"{where}: interval unit must be 0, 1 or 2, got {unit}")
        return (T.month_interval, T.day_time_interval, T.month_day_nano_interval)[unit]()
    if type_id == TYPE_FIXED_SIZE_BINARY:
        width = t.int32(0)
        if width < 0:
            raise ArrowInvalid(f"{where}: fixed size binary width must be >= 0, got {width}")
        return T.fixed_size_binary(width)
    if type_id in (TYPE_LIST, TYPE_LARGE_LIST, TYPE_LIST_VIEW, TYPE_LARGE_LIST_VIEW):
        need(1)
        cls = {TYPE_LIST: T.ListType, TYPE_LARGE_LIST: T.LargeListType,
               TYPE_LIST_VIEW: T.ListViewType, TYPE_LARGE_LIST_VIEW: T.LargeListViewType}[type_id]
        return cls(children[0])
    if type_id == TYPE_FIXED_SIZE_LIST:
        need(1)
        size = t.int32(0)
        if size < 0:
            raise ArrowInvalid(f"{where}: fixed size list size must be >= 0, got {size}")
        return T.fixed_size_list(children[0], size)
    if type_id == TYPE_STRUCT:
        return T.StructType(children)
    if type_id == TYPE_MAP:
        need(1)
        entries = children[0]
        if not isinstance(entries.type, T.StructType) or entries.type.num_fields != 2:
            raise ArrowInvalid(f"{where}: map entries must be a struct of 2 fields, got {entries.type}")
        k, v = entries.type.fields
        mt = T.MapType(k, v, t.boolean(0), entries_name=entries.name)
        return mt
    if type_id == TYPE_UNION:
        mode = t.int16(0)
        if mode not in (0, 1):
            raise ArrowInvalid(f"{where}: union mode must be 0 (sparse) or 1 (dense), got {mode}")
        codes = t.int32s(1) if t.has(1) else None
        try:
            return T.UnionType(children, "sparse" if mode == 0 else "dense", codes)
        except ArrowInvalid as e:
            raise ArrowInvalid(f"{where}: {e}") from None
    if type_id == TYPE_RUN_END_ENCODED:
        need(2)
        try:
            return T.RunEndEncodedType(children[0].type, children[1])
        except Exception as e:
            raise ArrowInvalid(f"{where}: {e}") from None
    raise ArrowInvalid(f"{where}: unknown type id {type_id} (expected 1..26)")


def _decode_field(t: FlatTable, path: Path, info: SchemaInfo, depth: int) -> T.Field:
    if depth > MAX_NESTING_DEPTH:
        raise ArrowInvalid(f"field nesting deeper than {MAX_NESTING_DEPTH} levels at path {path}")
    name = t.string(0) or ""
    where = f"field {name!r}"
    nullable = t.boolean(1)
    type_id = t.uint8(2)
    children = [_decode_field(c, path + (i,), info, depth + 1)
                for i, c in enumerate(t.tables(5, "Field"))]
    dtype = _decode_type(type_id, t.table(3, "Type"), children, where)
    metadata: Mapping[bytes, bytes] | None = decode_custom_metadata(t, 6)
    dtype, metadata = _apply_extension(dtype, metadata, where)
    enc = t.table(4, "DictionaryEncoding")
    if enc is not None:
        dict_id = enc.int64(0)
        index = _int_type(enc.table(1, "Int"), where) if enc.has(1) else T.int32()
        if dict_id in info.dictionaries:
            prev = info.dictionaries[dict_id]
            if prev.value_type != dtype:
                raise ArrowInvalid(f"{where}: dictionary id {dict_id} is used for {prev.value_type} "
                                   f"and {dtype}")
        info.dictionaries.setdefault(dict_id, DictionaryField(dict_id, dtype, path)).paths.append(path)
        dtype = T.DictionaryType(index, dtype, enc.boolean(2))
    return T.Field(name, dtype, nullable, metadata)


def _apply_extension(dtype: T.DataType, metadata: Mapping[bytes, bytes] | None, where: str
                     ) -> tuple[T.DataType, Mapping[bytes, bytes] | None]:
    from ..extension import apply_extension_metadata
    return apply_extension_metadata(dtype, metadata, where=where)


def decode_schema(t: FlatTable) -> SchemaInfo:
    """The Schema table `t` (of a Schema message or a file footer) decoded, with its dictionary
    fields and endianness."""
    info = SchemaInfo(T.Schema([]))
    info.endianness = t.int16(0)
    if info.endianness not in (ENDIAN_LITTLE, ENDIAN_BIG):
        raise ArrowInvalid(f"schema endianness must be 0 or 1, got {info.endianness}")
    fields = [_decode_field(f, (i,), info, 1) for i, f in enumerate(t.tables(1, "Field"))]
    info.features = t.int64s(3)
    info.schema = T.Schema(fields, decode_custom_metadata(t, 2))
    return info


# -- encoding ---------------------------------------------------------------------------------------

def _builder() -> Builder:
    import flatbuffers  # lazy: only writers need it
    # fields at their schema default are left out, as pyarrow leaves them out
    return flatbuffers.Builder(1024)


def _end_vector(b: Builder) -> int:
    end: int
    try:
        end = b.EndVector()
    except TypeError:  # flatbuffers < 2.0
        end = b.EndVector(0)
    return end


def _offsets_vector(b: Builder, offsets: Sequence[int]) -> int:
    b.StartVector(4, len(offsets), 4)
    for o in reversed(offsets):
        b.PrependUOffsetTRelative(o)
    return _end_vector(b)


def encode_custom_metadata(b: Builder, metadata: Mapping[bytes, bytes] | None) -> int | None:
    """Offset of a [KeyValue] vector, or None when there is no metadata ({} writes an empty one)."""
    if metadata is None:
        return None
    kvs: list[int] = []
    for k, v in metadata.items():
        ko, vo = b.CreateString(bytes(k)), b.CreateString(bytes(v))
        b.StartObject(2)
        b.PrependUOffsetTRelativeSlot(1, vo, 0)         # pyarrow's order: value, then key
        b.PrependUOffsetTRelativeSlot(0, ko, 0)
        kvs.append(b.EndObject())
    return _offsets_vector(b, kvs)


_SCALAR_SIZES = {"Int64": 8, "Int32": 4, "Uint32": 4, "Int16": 2, "Uint8": 1, "Bool": 1}


def _table(b: Builder, nslots: int, scalars: Iterable[tuple[Any, ...]] = (),
           offsets: Iterable[tuple[int, int | None]] = ()) -> int:
    """A table from (slot, kind, value[, schema default]) scalars and (slot, offset) children;
    a scalar equal to its default (0 unless given: Schema.fbs) is left out.

    Fields go in largest first, the last slot first among equals, as flatc's generated builders
    (pyarrow's among them) add them: no padding between them, and the same bytes as pyarrow's."""
    fields = [(_SCALAR_SIZES[s[1]], s[0], s[1], s[2], s[3] if len(s) > 3 else 0)
              for s in scalars]
    fields += [(4, slot, None, off, 0) for slot, off in offsets if off is not None]
    b.StartObject(nslots)
    for _, slot, kind, value, default in sorted(fields, key=lambda f: (-f[0], -f[1])):
        if kind is None:
            b.PrependUOffsetTRelativeSlot(slot, value, 0)
        else:
            getattr(b, "Prepend" + kind + "Slot")(slot, value, default)
    end: int = b.EndObject()
    return end


def _encode_type(b: Builder, t: T.DataType) -> tuple[int, int]:
    """(type id, offset of the type table) for a non-dictionary type."""
    if isinstance(t, T.ExtensionType):
        t = t.storage
    name = t.name
    if isinstance(t, T.PrimitiveType):
        if t.kind == T.Kind.NULL:
            return TYPE_NULL, _table(b, 0)
        if t.kind == T.Kind.BOOL:
            return TYPE_BOOL, _table(b, 0)
        if t.is_integer:
            return TYPE_INT, _table(b, 2, [(0, "Int32", t.bit_width), (1, "Bool", t.is_signed)])
        if t.is_float:
            return TYPE_FLOAT, _table(b, 1, [(0, "Int16", {16: 0, 32: 1, 64: 2}[t.bit_width])])
        if name.startswith("date"):
            return TYPE_DATE, _table(b, 1, [(0, "Int16", 0 if name == "date32[day]" else 1, 1)])
        units = {"month_interval": 0, "day_time_interval": 1, "month_day_nano_interval": 2}
        return TYPE_INTERVAL, _table(b, 1, [(0, "Int16", units[name])])
    if isinstance(t, T.BinaryType):
        tid = {"string": TYPE_UTF8, "binary": TYPE_BINARY, "large_string": TYPE_LARGE_UTF8,
               "large_binary": TYPE_LARGE_BINARY, "string_view": TYPE_UTF8_VIEW,
               "binary_view": TYPE_BINARY_VIEW}[name]
        return tid, _table(b, 0)
    if isinstance(t, T.FixedSizeBinaryType):
        return TYPE_FIXED_SIZE_BINARY, _table(b, 1, [(0, "Int32", t.byte_width)])
    if isinstance(t, T.DecimalType):
        return TYPE_DECIMAL, _table(b, 3, [(0, "Int32", t.precision), (1, "Int32", t.scale),
                                          (2, "Int32", t.bit_width, 128)])
    if isinstance(t, T.TimestampType):
        tz = b.CreateString(t.tz) if t.tz is not None else None
        return TYPE_TIMESTAMP, _table(b, 2, [(0, "Int16", TIME_UNIT_CODES[t.unit])], [(1, tz)])
    if isinstance(t, (T.Time32Type, T.Time64Type)):
        return TYPE_TIME, _table(b, 2, [(0, "Int16", TIME_UNIT_CODES[t.unit], 1),
                                       (1, "Int32", t.bit_width, 32)])
    if isinstance(t, T.DurationType):
        return TYPE_DURATION, _table(b, 1, [(0, "Int16", TIME_UNIT_CODES[t.unit], 1)])
    if isinstance(t, T.MapType):
        return TYPE_MAP, _table(b, 1, [(0, "Bool", t.keys_sorted)])
    if isinstance(t, T.FixedSizeListType):
        return TYPE_FIXED_SIZE_LIST, _table(b, 1, [(0, "Int32", t.list_size)])
    if isinstance(t, T.ListType):
        return TYPE_LIST, _table(b, 0)
    if isinstance(t, T.LargeListType):
        return TYPE_LARGE_LIST, _table(b, 0)
    if isinstance(t, T.ListViewType):
        return TYPE_LIST_VIEW, _table(b, 0)
    if isinstance(t, T.LargeListViewType):
        return TYPE_LARGE_LIST_VIEW, _table(b, 0)
    if isinstance(t, T.StructType):
        return TYPE_STRUCT, _table(b, 0)
    if isinstance(t, T.UnionType):
        b.StartVector(4, len(t.type_codes), 4)
        for c in reversed(t.type_codes):
            b.PrependInt32(c)
        codes = _end_vector(b)
        return TYPE_UNION, _table(b, 2, [(0, "Int16", 0 if t.mode == "sparse" else 1)], [(1, codes)])
    if isinstance(t, T.RunEndEncodedType):
        return TYPE_RUN_END_ENCODED, _table(b, 0)
    raise ArrowNotImplementedError(f"cannot encode type {t}")


def _field_metadata(f: T.Field, t: T.DataType) -> dict[bytes, bytes] | None:
    md = dict(f.metadata) if f.metadata else {}
    if isinstance(t, T.ExtensionType):
        md[b"ARROW:extension:name"] = t.extension_name.encode()
        md[b"ARROW:extension:metadata"] = t.serialized
    return md or None


def _encode_field(b: Builder, f: T.Field, dict_ids: DictionaryIds) -> int:
    # Created in pyarrow's order (child fields, type, dictionary encoding, metadata, name,
    # children vector), so the encoded schema is pyarrow's byte for byte.
    t = f.type
    dictionary = None
    if isinstance(t, T.DictionaryType):
        dictionary = t
        dict_id = dict_ids.id_for(f)         # ids in schema pre-order: before the children's
        t = t.value_type
    storage = t.storage if isinstance(t, T.ExtensionType) else t
    children = [_encode_field(b, c, dict_ids.child(i)) for i, c in enumerate(storage.fields)]
    type_id, type_off = _encode_type(b, t)
    dict_enc = None
    if dictionary is not None:
        idx = dictionary.index_type
        int_t = _table(b, 2, [(0, "Int32", idx.bit_width), (1, "Bool", idx.is_signed)])
        dict_enc = _table(b, 4, [(0, "Int64", dict_id), (2, "Bool", dictionary.ordered),
                                 (3, "Int16", 0)], [(1, int_t)])
    md = encode_custom_metadata(b, _field_metadata(f, t))
    name = b.CreateString(f.name)
    children_vec = _offsets_vector(b, children)
    return _table(b, 7, [(1, "Bool", f.nullable), (2, "Uint8", type_id)],
                  [(0, name), (3, type_off), (4, dict_enc), (5, children_vec), (6, md)])


class DictionaryIds:
    """Assigns dictionary ids to dictionary-encoded fields in schema pre-order (0, 1, 2, ...)."""

    def __init__(self, ids: dict[Path, int] | None = None, path: Path = ()) -> None:
        self._ids = ids if ids is not None else {}
        self._path = path

    def child(self, i: int) -> DictionaryIds:
        """The ids of child field `i` of this one (sharing one numbering)."""
        return DictionaryIds(self._ids, self._path + (i,))

    def id_for(self, f: T.Field) -> int:
        """The dictionary id of this field, `f` (assigned on first use)."""
        return self._ids.setdefault(self._path, len(self._ids))

    @property
    def by_path(self) -> dict[Path, int]:
        """Field path -> dictionary id, for every id assigned so far."""
        return self._ids


def encode_schema_table(b: Builder, schema: T.Schema, dict_ids: DictionaryIds,
                        features: Sequence[int] = ()) -> int:
    """Offset of `schema`'s Schema table written into builder `b`, numbering its dictionary
    fields with `dict_ids`."""
    fields = [_encode_field(b, f, dict_ids.child(i)) for i, f in enumerate(schema)]
    fields_vec = _offsets_vector(b, fields)
    md = encode_custom_metadata(b, schema.metadata)
    feats = None
    if features:
        b.StartVector(8, len(features), 8)
        for x in reversed(list(features)):
            b.PrependInt64(x)
        feats = _end_vector(b)
    return _table(b, 4, [(0, "Int16", ENDIAN_LITTLE)], [(1, fields_vec), (2, md), (3, feats)])


def schema_blob(schema: T.Schema) -> tuple[bytes, int]:
    """(bytes, table position): the Schema table and everything it references as one
    self-contained flatbuffer region, encoded once per Schema object (schemas are immutable) and
    embedded verbatim in Schema messages and file footers."""
    cache = schema._ipc_cache
    if cache is None:
        cache = schema._ipc_cache = {}
    hit: tuple[bytes, int] | None = cache.get("blob")
    if hit is None:
        b = _builder()
        end_offset = encode_schema_table(b, schema, DictionaryIds())
        data = bytes(b.Bytes[b.Head():])
        hit = cache["blob"] = (data, len(data) - end_offset)
        cache["blob_alignment"] = b.minalign
    return hit


def schema_blob_alignment(schema: T.Schema) -> int:
    """The largest alignment inside schema_blob(schema) (4, or 8 with 64-bit fields): a message
    around it is padded to that, then to 8 at its end, as pyarrow pads it."""
    schema_blob(schema)
    alignment: int = schema._ipc_cache["blob_alignment"]
    return alignment
