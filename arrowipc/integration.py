"""Apache Arrow's integration-testing JSON format, read into and written from the columnar model.

The format (Arrow docs, "Integration Testing") spells out every buffer of every node: a file is
{"schema", "batches", "dictionaries"}; a column is {"name", "count", VALIDITY, OFFSET, SIZE, DATA,
TYPE_ID, VIEWS, VARIADIC_DATA_BUFFERS, "children"}. Reading builds ArrayData straight from those
buffers (no Python-value round trip), so what the JSON says is exactly what the arrays hold, nulls'
slots included. Writing is the mirror image and works on sliced arrays too.

Value encodings: 64-bit integers (and timestamps, time64, durations, date64, 64-bit offsets) and
decimals are strings; binary is upper-case hex; utf8 is a JSON string; day-time and
month-day-nano intervals are objects; views are objects with SIZE and INLINED, or PREFIX_HEX,
BUFFER_INDEX and OFFSET. A dictionary-encoded field carries {"id", "indexType", "isOrdered"} and
its "type" is the value type; each dictionary-encoded node gets `ArrayData.dictionary`, the values
of the "dictionaries" entry with that id (nested dictionaries resolved the same way). The writer
numbers dictionaries in schema pre-order, as the IPC writer does.
"""
from __future__ import annotations

import gzip
import json
import os
import struct
from bisect import bisect_left, bisect_right
from typing import Any, Iterable, Mapping

from . import types as T
from ._core.arraydata import ArrayData
from ._core.bitmap import pack_bools, unpack_bits
from ._core.buffer import Buffer, py_buffer
from .errors import ArrowInvalid, ArrowNotImplementedError
from .extension import apply_extension_metadata
from .table import RecordBatch, Table
from .types import Kind

__all__ = ["read_json", "read_json_table", "write_json"]

_UNIT_BY_NAME = {"SECOND": "s", "MILLISECOND": "ms", "MICROSECOND": "us", "NANOSECOND": "ns"}
_NAME_BY_UNIT = {v: k for k, v in _UNIT_BY_NAME.items()}
_FLOAT_BY_PRECISION = {"HALF": T.float16, "SINGLE": T.float32, "DOUBLE": T.float64}
_PRECISION_BY_FLOAT = {"halffloat": "HALF", "float": "SINGLE", "double": "DOUBLE"}
_INTERVALS = {"YEAR_MONTH": T.month_interval, "DAY_TIME": T.day_time_interval,
              "MONTH_DAY_NANO": T.month_day_nano_interval}
_INTERVAL_UNIT = {"month_interval": "YEAR_MONTH", "day_time_interval": "DAY_TIME",
                  "month_day_nano_interval": "MONTH_DAY_NANO"}
_SIMPLE_TYPES = {"null": T.null, "bool": T.bool_, "utf8": T.string, "binary": T.binary,
                 "largeutf8": T.large_string, "largebinary": T.large_binary,
                 "utf8view": T.string_view, "binaryview": T.binary_view}
_SIMPLE_NAMES = {t().name: n for n, t in _SIMPLE_TYPES.items()}
_LIST_TYPES = {"list": T.ListType, "largelist": T.LargeListType, "listview": T.ListViewType,
               "largelistview": T.LargeListViewType}
_LIST_NAMES = {v: k for k, v in _LIST_TYPES.items()}
_GZIP_MAGIC = b"\x1f\x8b"


# == types =========================================================================================

def _need(obj: Any, key: str, where: str) -> Any:
    """obj[key], or ArrowInvalid naming the missing member and what was found."""
    try:
        return obj[key]
    except (KeyError, TypeError):
        found = sorted(obj) if isinstance(obj, dict) else type(obj).__name__
        raise ArrowInvalid(f"{where}: expected a {key!r} member, found {found}") from None


def _int_type_from_json(t: dict[str, Any], where: str) -> T.DataType:
    bits, signed = _need(t, "bitWidth", where), _need(t, "isSigned", where)
    if bits not in (8, 16, 32, 64):
        raise ArrowInvalid(f"{where}: integer bitWidth must be 8, 16, 32 or 64, got {bits!r}")
    return T.type_for_alias(("int" if signed else "uint") + str(bits))


def _unit(t: dict[str, Any], where: str) -> str:
    unit = _need(t, "unit", where)
    if unit not in _UNIT_BY_NAME:
        raise ArrowInvalid(f"{where}: time unit must be one of {sorted(_UNIT_BY_NAME)}, got {unit!r}")
    return _UNIT_BY_NAME[unit]


def _type_from_json(t: dict[str, Any], children: list[Any], where: str) -> T.DataType:
    """The DataType of a JSON "type" object whose field has child `children` (Fields)."""
    name = _need(t, "name", where)

    def need_children(n: int) -> None:
        if len(children) != n:
            raise ArrowInvalid(f"{where}: type {name!r} needs {n} child field(s), got {len(children)}")

    try:
        if name in _SIMPLE_TYPES:
            return _SIMPLE_TYPES[name]()
        if name == "int":
            return _int_type_from_json(t, where)
        if name == "floatingpoint":
            prec = _need(t, "precision", where)
            if prec not in _FLOAT_BY_PRECISION:
                raise ArrowInvalid(f"{where}: precision must be HALF, SINGLE or DOUBLE, got {prec!r}")
            return _FLOAT_BY_PRECISION[prec]()
        if name == "decimal":
            return T.DecimalType(int(t.get("bitWidth", 128)), int(_need(t, "precision", where)),
                                 int(t.get("scale", 0)))
        if name == "fixedsizebinary":
            return T.fixed_size_binary(int(_need(t, "byteWidth", where)))
        if name == "date":
            unit = _need(t, "unit", where)
            if unit not in ("DAY", "MILLISECOND"):
                raise ArrowInvalid(f"{where}: date unit must be DAY or MILLISECOND, got {unit!r}")
            return T.date32() if unit == "DAY" else T.date64()
        if name == "time":
            unit, bits = _unit(t, where), int(_need(t, "bitWidth", where))
            if (bits, unit) not in ((32, "s"), (32, "ms"), (64, "us"), (64, "ns")):
                raise ArrowInvalid(f"{where}: time of {bits} bits cannot have unit {unit!r}")
            return T.time32(unit) if bits == 32 else T.time64(unit)
        if name == "timestamp":
            return T.timestamp(_unit(t, where), t.get("timezone"))
        if name == "duration":
            return T.duration(_unit(t, where))
        if name == "interval":
            unit = _need(t, "unit", where)
            if unit not in _INTERVALS:
                raise ArrowInvalid(f"{where}: interval unit must be one of {sorted(_INTERVALS)}, "
                                   f"got {unit!r}")
            return _INTERVALS[unit]()
        if name in _LIST_TYPES:
            need_children(1)
            return _LIST_TYPES[name](children[0])
        if name == "fixedsizelist":
            need_children(1)
            return T.fixed_size_list(children[0], int(_need(t, "listSize", where)))
        if name == "struct":
            return T.StructType(children)
        if name == "map":
            need_children(1)
            entries = children[0]
            if not isinstance(entries.type, T.StructType) or entries.type.num_fields != 2:
                raise ArrowInvalid(f"{where}: map entries must be a struct of 2 fields, "
                                   f"got {entries.type}")
            key, item = entries.type.fields
            return T.MapType(key, item, bool(t.get("keysSorted", False)), entries_name=entries.name)
        if name == "union":
            mode = _need(t, "mode", where)
            if mode not in ("SPARSE", "DENSE"):
                raise ArrowInvalid(f"{where}: union mode must be SPARSE or DENSE, got {mode!r}")
            return T.UnionType(children, mode.lower(), t.get("typeIds"))
        if name == "runendencoded":
            need_children(2)
            return T.RunEndEncodedType(children[0].type, children[1])
    except (TypeError, ValueError) as e:    # ArrowInvalid included: add the place
        if isinstance(e, ArrowInvalid) and str(e).startswith(where):
            raise
        raise ArrowInvalid(f"{where}: bad {name!r} type {t}: {e}") from None
    raise ArrowInvalid(f"{where}: unknown type name {name!r}")


def _metadata_from_json(items: Any, where: str) -> dict[bytes, bytes] | None:
    """Field or schema metadata from its JSON [{key, value}] list (None when empty)."""
    if not items:
        return None
    if not isinstance(items, list):
        raise ArrowInvalid(f"{where}: metadata must be a list of {{key, value}}, got {items!r}")
    out: dict[bytes, bytes] = {}
    for kv in items:
        out[str(_need(kv, "key", where)).encode()] = str(_need(kv, "value", where)).encode()
    return out


class _FieldNode:
    """A schema field plus what the JSON says beyond the type: its dictionary id (or None) and
    the nodes of its children (the children of the value type for dictionary fields)."""
    __slots__ = ("field", "dict_id", "children")

    def __init__(self, field: T.Field, dict_id: int | None, children: list[_FieldNode]) -> None:
        self.field = field
        self.dict_id = dict_id
        self.children = children


def _field_from_json(obj: dict[str, Any], where: str, dict_values: dict[int, _FieldNode],
                     depth: int = 0) -> _FieldNode:
    """The _FieldNode of a JSON field; dictionary value fields are recorded in `dict_values`."""
    if depth > 64:
        raise ArrowInvalid(f"{where}: fields nested deeper than 64 levels")
    name = _need(obj, "name", where)
    if not isinstance(name, str):
        raise ArrowInvalid(f"{where}: field name must be a string, got {name!r}")
    where = f"{where}.{name}" if depth else f"field {name!r}"
    children = [_field_from_json(c, where, dict_values, depth + 1)
                for c in obj.get("children") or []]
    dtype = _type_from_json(_need(obj, "type", where), [c.field for c in children], where)
    nullable = bool(obj.get("nullable", True))
    dtype, metadata = apply_extension_metadata(dtype, _metadata_from_json(obj.get("metadata"), where),
                                               where=where)
    enc = obj.get("dictionary")
    if enc is None:
        return _FieldNode(T.Field(name, dtype, nullable, metadata), None, children)
    dict_id = _need(enc, "id", where)
    if not isinstance(dict_id, int):
        raise ArrowInvalid(f"{where}: dictionary id must be an integer, got {dict_id!r}")
    index_type = _int_type_from_json(_need(enc, "indexType", where), f"{where} (indexType)")
    value_node = _FieldNode(T.Field(name, dtype, nullable, metadata), None, children)
    prev = dict_values.setdefault(dict_id, value_node)
    if prev.field.type != dtype:
        raise ArrowInvalid(f"{where}: dictionary id {dict_id} holds {prev.field.type} values "
                           f"elsewhere but {dtype} here")
    dtype = T.DictionaryType(index_type, dtype, bool(enc.get("isOrdered", False)))
    return _FieldNode(T.Field(name, dtype, nullable, metadata), dict_id, children)


def _metadata_to_json(metadata: Mapping[bytes, bytes]) -> list[dict[str, str]]:
    return [{"key": k.decode("utf-8", "surrogateescape"), "value": v.decode("utf-8", "surrogateescape")}
            for k, v in metadata.items()]


def _type_to_json(t: T.DataType) -> dict[str, Any]:
    if t.name in _SIMPLE_NAMES and isinstance(t, (T.PrimitiveType, T.BinaryType)):
        return {"name": _SIMPLE_NAMES[t.name]}
    if isinstance(t, T.PrimitiveType):
        if t.is_integer:
            return {"name": "int", "isSigned": t.is_signed, "bitWidth": t.bit_width}
        if t.is_float:
            return {"name": "floatingpoint", "precision": _PRECISION_BY_FLOAT[t.name]}
        if t.name in ("date32[day]", "date64[ms]"):
            return {"name": "date", "unit": "DAY" if t.name == "date32[day]" else "MILLISECOND"}
        if t.name in _INTERVAL_UNIT:
            return {"name": "interval", "unit": _INTERVAL_UNIT[t.name]}
    if isinstance(t, T.DecimalType):
        return {"name": "decimal", "precision": t.precision, "scale": t.scale,
                "bitWidth": t.bit_width}
    if isinstance(t, T.FixedSizeBinaryType):
        return {"name": "fixedsizebinary", "byteWidth": t.byte_width}
    if isinstance(t, T.TimestampType):
        out = {"name": "timestamp", "unit": _NAME_BY_UNIT[t.unit]}
        if t.tz is not None:
            out["timezone"] = t.tz
        return out
    if isinstance(t, (T.Time32Type, T.Time64Type)):
        return {"name": "time", "unit": _NAME_BY_UNIT[t.unit], "bitWidth": t.bit_width}
    if isinstance(t, T.DurationType):
        return {"name": "duration", "unit": _NAME_BY_UNIT[t.unit]}
    if type(t) in _LIST_NAMES:
        return {"name": _LIST_NAMES[type(t)]}   # type: ignore[index]  # a list type: in the map
    if isinstance(t, T.FixedSizeListType):
        return {"name": "fixedsizelist", "listSize": t.list_size}
    if isinstance(t, T.MapType):
        return {"name": "map", "keysSorted": t.keys_sorted}
    if isinstance(t, T.StructType):
        return {"name": "struct"}
    if isinstance(t, T.UnionType):
        return {"name": "union", "mode": t.mode.upper(), "typeIds": list(t.type_codes)}
    if isinstance(t, T.RunEndEncodedType):
        return {"name": "runendencoded"}
    raise ArrowNotImplementedError(f"no integration JSON form for type {t}")


def _field_to_json(f: T.Field, path: tuple[int, ...], ids: dict[tuple[int, ...], int]
                   ) -> dict[str, Any]:
    t = f.type
    metadata: dict[bytes, bytes] = dict(f.metadata) if f.metadata else {}
    dictionary = None
    if isinstance(t, T.DictionaryType):
        it = t.index_type
        dictionary = {"id": ids[path], "indexType": _type_to_json(it), "isOrdered": t.ordered}
        t = t.value_type
    if isinstance(t, T.ExtensionType):
        if isinstance(t.storage, T.DictionaryType):
            raise ArrowNotImplementedError(f"field {f.name!r}: an extension type over a "
                                           f"dictionary has no integration JSON form")
        metadata[b"ARROW:extension:name"] = t.extension_name.encode()
        metadata[b"ARROW:extension:metadata"] = t.serialized
        t = t.storage
    out = {"name": f.name, "type": _type_to_json(t), "nullable": f.nullable,
           "children": [_field_to_json(c, path + (k,), ids) for k, c in enumerate(t.fields)]}
    if dictionary is not None:
        out["dictionary"] = dictionary
    if metadata:
        out["metadata"] = _metadata_to_json(metadata)
    return out


# == fixed-width values ============================================================================

def _int_code(t: Any) -> str:
    """struct code of an integer-like type (unsigned only for unsigned integer types)."""
    code = {1: "b", 2: "h", 4: "i", 8: "q"}[t.byte_width]
    unsigned = isinstance(t, T.PrimitiveType) and t.is_integer and not t.is_signed
    return code.upper() if unsigned else code


class _FixedCodec:
    """JSON DATA values <-> the bytes of a fixed-width values buffer, for one type."""

    def __init__(self, t: Any) -> None:
        self.width = t.byte_width
        self.code: str | None = None           # struct code when values are plain numbers
        self.as_string = False      # 64-bit integers travel as JSON strings
        self.kind = "struct"
        if isinstance(t, T.PrimitiveType) and t.is_float:
            self.code = {"halffloat": "e", "float": "f", "double": "d"}[t.name]
            self.kind = "float"
        elif isinstance(t, T.DecimalType):
            self.kind = "decimal"
        elif isinstance(t, T.FixedSizeBinaryType):
            self.kind = "hex"
        elif t.name == "day_time_interval":
            self.kind = "day_time"
        elif t.name == "month_day_nano_interval":
            self.kind = "month_day_nano"
        else:   # integers, dates, times, timestamps, durations, month intervals
            self.code = _int_code(t)
            self.as_string = self.width == 8
        self.type = t

    def encode(self, values: list[Any], where: str) -> bytes:
        n, kind = len(values), self.kind
        try:
            if kind == "struct":
                return struct.pack(f"<{n}{self.code}", *map(int, values))
            if kind == "float":
                return struct.pack(f"<{n}{self.code}", *map(float, values))
            if kind == "decimal":
                w = self.width
                return b"".join(int(v).to_bytes(w, "little", signed=True) for v in values)
            if kind == "hex":
                out = b"".join(map(bytes.fromhex, values))
                if len(out) != n * self.width:
                    bad = next(v for v in values if len(v) != 2 * self.width)
                    raise ArrowInvalid(f"{where}: {self.type} value {bad!r} is not "
                                       f"{self.width} bytes of hex")
                return out
            if kind == "day_time":
                return b"".join(struct.pack("<ii", int(_need(v, "days", where)),
                                            int(_need(v, "milliseconds", where))) for v in values)
            return b"".join(struct.pack("<iiq", int(_need(v, "months", where)),
                                        int(_need(v, "days", where)),
                                        int(_need(v, "nanoseconds", where))) for v in values)
        except ArrowInvalid:
            raise
        except (struct.error, OverflowError, ValueError, TypeError, AttributeError) as e:
            raise ArrowInvalid(f"{where}: DATA does not hold valid {self.type} values: {e}") from None

    def decode(self, view: memoryview, n: int) -> list[Any]:
        kind, w = self.kind, self.width
        if kind == "struct":
            vals = list(struct.unpack(f"<{n}{self.code}", view))
            return list(map(str, vals)) if self.as_string else vals
        if kind == "float":
            return list(struct.unpack(f"<{n}{self.code}", view))
        raw = view.tobytes()
        if kind == "decimal":
            return [str(int.from_bytes(raw[i:i + w], "little", signed=True))
                    for i in range(0, n * w, w)]
        if kind == "hex":
            return [raw[i:i + w].hex().upper() for i in range(0, n * w, w)]
        if kind == "day_time":
            return [{"days": d, "milliseconds": ms} for d, ms in struct.iter_unpack("<ii", raw)]
        return [{"months": m, "days": d, "nanoseconds": ns}
                for m, d, ns in struct.iter_unpack("<iiq", raw)]


# == reading =======================================================================================

def _load_document(source: Any) -> dict[str, Any]:
    """The top-level JSON object of an integration file (gzip detected by its magic)."""
    if hasattr(source, "read"):
        raw = source.read()
    elif isinstance(source, (bytes, bytearray, memoryview)):
        raw = bytes(source)
    else:
        with open(os.fspath(source), "rb") as f:
            raw = f.read()
    if isinstance(raw, str):
        raw = raw.encode()
    if raw[:2] == _GZIP_MAGIC:
        try:
            raw = gzip.decompress(raw)
        except (OSError, EOFError) as e:
            raise ArrowInvalid(f"integration JSON: corrupt gzip data: {e}") from None
    try:
        doc = json.loads(raw)
    except ValueError as e:
        raise ArrowInvalid(f"integration JSON: not valid JSON: {e}") from None
    if not isinstance(doc, dict):
        raise ArrowInvalid(f"integration JSON: expected an object at the top, found "
                           f"{type(doc).__name__}")
    return doc


def _int_list(values: Any, where: str, what: str) -> list[int]:
    try:
        return [int(v) for v in values]
    except (TypeError, ValueError) as e:
        raise ArrowInvalid(f"{where}: {what} must hold integers: {e}") from None


class _ColumnReader:
    """Builds ArrayData from JSON columns; dictionaries are built once per id, on first use."""

    def __init__(self, dict_values: dict[int, _FieldNode],
                 dict_batches: dict[int, list[Any]]) -> None:
        self.dict_values = dict_values      # id -> _FieldNode of the values
        self.dict_batches = dict_batches    # id -> [JSON record batch, ...] (later ones: deltas)
        self.built: dict[int, ArrayData] = {}
        self.building: set[int] = set()

    def dictionary(self, dict_id: int, where: str) -> ArrayData | None:
        """The values of dictionary `dict_id` with its deltas (None when the file has none)."""
        out = self.built.get(dict_id)
        if out is not None:
            return out
        if dict_id in self.building:
            raise ArrowInvalid(f"{where}: dictionary {dict_id} contains itself")
        batches = self.dict_batches.get(dict_id)
        node = self.dict_values[dict_id]
        if not batches:
            return None     # the caller decides whether an absent dictionary is an error
        self.building.add(dict_id)
        parts = []
        for k, batch in enumerate(batches):
            here = f"dictionary {dict_id}" + (f" (delta {k})" if k else "")
            cols = _need(batch, "columns", here)
            if not isinstance(cols, list) or len(cols) != 1:
                raise ArrowInvalid(f"{here}: expected one column, found "
                                   f"{len(cols) if isinstance(cols, list) else cols!r}")
            data = self.column(cols[0], node.field.type, node, here, check_name=False)
            count = _need(batch, "count", here)
            if count != data.length:
                raise ArrowInvalid(f"{here}: batch count {count} but the column has {data.length}")
            parts.append(data)
        self.building.discard(dict_id)
        if len(parts) == 1:
            out = parts[0]
        else:
            from .data.concat import concat_array_data
            out = concat_array_data(parts)
        self.built[dict_id] = out
        return out

    def column(self, col: dict[str, Any], t: T.DataType, node: _FieldNode, where: str,
               check_name: bool = True) -> ArrayData:
        if not isinstance(col, dict):
            raise ArrowInvalid(f"{where}: expected a column object, found {type(col).__name__}")
        if check_name and "name" in col and col["name"] != node.field.name:
            raise ArrowInvalid(f"{where}: column is named {col['name']!r} but the schema field "
                               f"is {node.field.name!r}")
        n = _need(col, "count", where)
        if not isinstance(n, int) or n < 0:
            raise ArrowInvalid(f"{where}: count must be a non-negative integer, got {n!r}")
        if isinstance(t, T.DictionaryType):
            validity, nulls = self.validity(col, n, where)
            values = py_buffer(_FixedCodec(t.index_type).encode(self.data(col, n, where), where))
            assert node.dict_id is not None, "a dictionary field's node has its id"
            dictionary = self.dictionary(node.dict_id, where)
            if dictionary is None:
                if nulls < n:
                    raise ArrowInvalid(f"{where}: dictionary id {node.dict_id} has no entry in "
                                       f"'dictionaries'")
                from .data.from_python import array_data_from_python
                dictionary = array_data_from_python([], t.value_type)   # only nulls index it
            return ArrayData(t, n, 0, nulls, [validity, values], [], dictionary)
        st: Any = t.storage_type          # the subclass `kind` dispatches on
        kind = st.kind
        if kind == Kind.NULL:
            return ArrayData(t, n, 0, n, [], [])
        if kind == Kind.SPARSE_UNION or kind == Kind.DENSE_UNION:
            return self.union(col, n, t, st, node, where)
        if kind == Kind.RUN_END_ENCODED:
            return ArrayData(t, n, 0, 0, [], self.children(col, st, node, where))
        validity, nulls = self.validity(col, n, where)
        if kind == Kind.BOOL:
            bits = bytes(map(bool, self.data(col, n, where)))
            return ArrayData(t, n, 0, nulls, [validity, pack_bools(bits)[0]], [])
        if kind == Kind.FIXED:
            raw = _FixedCodec(st).encode(self.data(col, n, where), where)
            return ArrayData(t, n, 0, nulls, [validity, py_buffer(raw)], [])
        if kind == Kind.BINARY or kind == Kind.LARGE_BINARY:
            offsets, data = self.binary(col, n, st, kind == Kind.LARGE_BINARY, where)
            return ArrayData(t, n, 0, nulls, [validity, offsets, data], [])
        if kind == Kind.VIEW:
            return ArrayData(t, n, 0, nulls, [validity, *self.views(col, n, st, where)], [])
        children = self.children(col, st, node, where)
        if kind in (Kind.LIST, Kind.LARGE_LIST):
            offsets = self.offsets(col, "OFFSET", n + 1, kind == Kind.LARGE_LIST, where)
            return ArrayData(t, n, 0, nulls, [validity, offsets], children)
        if kind in (Kind.LIST_VIEW, Kind.LARGE_LIST_VIEW):
            large = kind == Kind.LARGE_LIST_VIEW
            return ArrayData(t, n, 0, nulls, [validity, self.offsets(col, "OFFSET", n, large, where),
                                              self.offsets(col, "SIZE", n, large, where)], children)
        if kind == Kind.FIXED_SIZE_LIST:
            need = n * st.list_size
            if children[0].length < need:
                raise ArrowInvalid(f"{where}: {n} lists of {st.list_size} need {need} child "
                                   f"values, the child has {children[0].length}")
            return ArrayData(t, n, 0, nulls, [validity], children)
        if kind == Kind.STRUCT:
            for f, c in zip(st.fields, children):
                if c.length < n:
                    raise ArrowInvalid(f"{where}: struct of {n} rows but child {f.name!r} has "
                                       f"{c.length}")
            return ArrayData(t, n, 0, nulls, [validity], children)
        raise ArrowNotImplementedError(f"{where}: cannot read {t} from integration JSON")

    # -- buffers --------------------------------------------------------------------------------
    @staticmethod
    def validity(col: dict[str, Any], n: int, where: str) -> tuple[Buffer | None, int]:
        """(bitmap or None when all valid, null count)."""
        bits = col.get("VALIDITY")
        if bits is None:
            return None, 0
        if not isinstance(bits, list) or len(bits) != n:
            raise ArrowInvalid(f"{where}: VALIDITY must list {n} entries of 0 or 1, found "
                               f"{len(bits) if isinstance(bits, list) else bits!r}")
        try:
            packed = bytes(map(int, bits))
        except (TypeError, ValueError) as e:
            raise ArrowInvalid(f"{where}: VALIDITY must hold 0 or 1: {e}") from None
        bitmap, valid = pack_bools(packed)
        return (None, 0) if valid == n else (bitmap, n - valid)

    @staticmethod
    def data(col: dict[str, Any], n: int, where: str) -> list[Any]:
        values = col.get("DATA")
        if values is None and n == 0:
            return []
        if not isinstance(values, list) or len(values) != n:
            raise ArrowInvalid(f"{where}: DATA must list {n} values, found "
                               f"{len(values) if isinstance(values, list) else values!r}")
        return values

    @staticmethod
    def offsets(col: dict[str, Any], key: str, count: int, large: bool, where: str) -> Buffer:
        """The `key` (OFFSET or SIZE) buffer of `count` int32 (int64 when large) values."""
        values = col.get(key)
        if values is None and count <= 1:
            values = [0] * count
        if not isinstance(values, list) or len(values) != count:
            raise ArrowInvalid(f"{where}: {key} must list {count} integers, found "
                               f"{len(values) if isinstance(values, list) else values!r}")
        values = _int_list(values, where, key)
        try:
            return py_buffer(struct.pack(f"<{count}{'q' if large else 'i'}", *values))
        except struct.error as e:
            raise ArrowInvalid(f"{where}: {key} values do not fit in "
                               f"{'64' if large else '32'} bits: {e}") from None

    def binary(self, col: dict[str, Any], n: int, st: Any, large: bool, where: str
               ) -> tuple[Buffer, Buffer]:
        """(offsets, data) buffers of a binary or string column."""
        pieces = self.values_as_bytes(self.data(col, n, where), st.is_utf8, where)
        lengths = list(map(len, pieces))
        if col.get("OFFSET") is None:
            offs, pos = [0], 0
            for ln in lengths:
                pos += ln
                offs.append(pos)
            col = dict(col, OFFSET=offs)
        offsets = self.offsets(col, "OFFSET", n + 1, large, where)
        offs = _int_list(col["OFFSET"], where, "OFFSET")
        for i, ln in enumerate(lengths):
            if offs[i + 1] - offs[i] != ln:
                raise ArrowInvalid(f"{where}: OFFSET gives value {i} {offs[i + 1] - offs[i]} bytes "
                                   f"but DATA[{i}] has {ln}")
        if offs[0] < 0:
            raise ArrowInvalid(f"{where}: OFFSET starts at {offs[0]}, below 0")
        # Offsets need not start at 0: the data buffer then starts with that many filler bytes.
        return offsets, py_buffer(bytes(offs[0]) + b"".join(pieces))

    @staticmethod
    def values_as_bytes(values: list[Any], is_utf8: bool, where: str) -> list[Any]:
        try:
            if is_utf8:
                return [v.encode("utf-8", "surrogateescape") for v in values]
            return list(map(bytes.fromhex, values))
        except (AttributeError, TypeError, ValueError) as e:
            what = "strings" if is_utf8 else "hex strings"
            raise ArrowInvalid(f"{where}: DATA must hold {what}: {e}") from None

    def views(self, col: dict[str, Any], n: int, st: Any, where: str) -> list[Buffer]:
        views = _need(col, "VIEWS", where) if n else col.get("VIEWS", [])
        if not isinstance(views, list) or len(views) != n:
            raise ArrowInvalid(f"{where}: VIEWS must list {n} views, found "
                               f"{len(views) if isinstance(views, list) else views!r}")
        variadic = self.values_as_bytes(col.get("VARIADIC_DATA_BUFFERS") or [], False,
                                        f"{where} (VARIADIC_DATA_BUFFERS)")
        out = bytearray()
        for i, v in enumerate(views):
            here = f"{where}: view {i}"
            size = int(_need(v, "SIZE", here))
            if size < 0:
                raise ArrowInvalid(f"{here}: SIZE must be >= 0, got {size}")
            if size <= 12:
                inlined = self.values_as_bytes([_need(v, "INLINED", here)], st.is_utf8, here)[0]
                if len(inlined) != size:
                    raise ArrowInvalid(f"{here}: SIZE is {size} but INLINED holds {len(inlined)} "
                                       f"bytes")
                out += struct.pack("<i12s", size, inlined)
                continue
            prefix = self.values_as_bytes([_need(v, "PREFIX_HEX", here)], False, here)[0]
            index, offset = int(_need(v, "BUFFER_INDEX", here)), int(_need(v, "OFFSET", here))
            if not 0 <= index < len(variadic):
                raise ArrowInvalid(f"{here}: BUFFER_INDEX {index} but there are {len(variadic)} "
                                   f"variadic data buffers")
            buf = variadic[index]
            if offset < 0 or size > len(buf) - offset:
                raise ArrowInvalid(f"{here}: bytes [{offset}, {offset + size}) are outside "
                                   f"variadic buffer {index} of {len(buf)} bytes")
            if prefix != buf[offset:offset + 4]:
                raise ArrowInvalid(f"{here}: PREFIX_HEX {prefix.hex().upper()} differs from the "
                                   f"data's first bytes {buf[offset:offset + 4].hex().upper()}")
            try:
                out += struct.pack("<i4sii", size, prefix, index, offset)
            except struct.error as e:
                raise ArrowInvalid(f"{here}: {e}") from None
        return [py_buffer(bytes(out))] + [py_buffer(b) for b in variadic]

    def children(self, col: dict[str, Any], st: Any, node: _FieldNode, where: str
                 ) -> list[ArrayData]:
        kids = col.get("children") or []
        fields = st.fields
        if len(kids) != len(fields):
            raise ArrowInvalid(f"{where}: {st} needs {len(fields)} child column(s), found {len(kids)}")
        return [self.column(c, f.type, sub, f"{where}.{f.name}")
                for c, f, sub in zip(kids, fields, node.children)]

    def union(self, col: dict[str, Any], n: int, t: Any, st: Any, node: _FieldNode,
              where: str) -> ArrayData:
        # Pre-1.0 writers gave unions a VALIDITY too; like the IPC reader, accept it when all 1.
        if self.validity(col, n, where)[1]:
            raise ArrowInvalid(f"{where}: union column has top-level nulls in VALIDITY; unions "
                               f"have no validity bitmap (nulls live in the children)")
        ids = _int_list(self.data(dict(DATA=col.get("TYPE_ID")), n, f"{where} (TYPE_ID)"),
                        where, "TYPE_ID")
        codes = set(st.type_codes)
        bad = next((c for c in ids if c not in codes), None)
        if bad is not None:
            raise ArrowInvalid(f"{where}: TYPE_ID {bad} is not one of the union's type ids "
                               f"{st.type_codes}")
        buffers: list[Buffer | None] = [py_buffer(struct.pack(f"<{n}b", *ids))]
        if st.kind == Kind.DENSE_UNION:
            buffers.append(self.offsets(col, "OFFSET", n, False, where))
        return ArrayData(t, n, 0, 0, buffers, self.children(col, st, node, where))


def _read_document(doc: dict[str, Any]) -> tuple[T.Schema, list[RecordBatch]]:
    """(Schema, batches) of a parsed integration document."""
    schema_obj = _need(doc, "schema", "integration JSON")
    dict_values: dict[int, _FieldNode] = {}
    nodes = [_field_from_json(f, "schema", dict_values)
             for f in _need(schema_obj, "fields", "schema") or []]
    schema = T.Schema([n.field for n in nodes],
                      _metadata_from_json(schema_obj.get("metadata"), "schema"))
    dict_batches: dict[int, list[Any]] = {}
    for k, d in enumerate(doc.get("dictionaries") or []):
        where = f"dictionaries[{k}]"
        dict_id = _need(d, "id", where)
        if dict_id not in dict_values:
            raise ArrowInvalid(f"{where}: dictionary id {dict_id!r}, which no field of the schema "
                               f"uses")
        have = dict_batches.setdefault(dict_id, [])
        if have and not d.get("isDelta", False):
            raise ArrowInvalid(f"{where}: a second dictionary for id {dict_id} that is not a delta")
        have.append(_need(d, "data", where))
    reader = _ColumnReader(dict_values, dict_batches)
    batches = []
    for b, batch in enumerate(_need(doc, "batches", "integration JSON") or []):
        where = f"batch {b}"
        count = _need(batch, "count", where)
        cols = _need(batch, "columns", where)
        if not isinstance(cols, list) or len(cols) != len(nodes):
            raise ArrowInvalid(f"{where}: the schema has {len(nodes)} fields but the batch has "
                               f"{len(cols) if isinstance(cols, list) else cols!r} columns")
        data = []
        for i, (col, node) in enumerate(zip(cols, nodes)):
            d = reader.column(col, node.field.type, node, f"{where}, column {i} ({node.field.name!r})")
            if d.length != count:
                raise ArrowInvalid(f"{where}: column {node.field.name!r} has {d.length} rows, the "
                                   f"batch count is {count}")
            data.append(d)
        batches.append(RecordBatch(schema, data, count))
    return schema, batches


def read_json(source: Any) -> tuple[T.Schema, list[RecordBatch]]:
    """(Schema, [RecordBatch]) from an integration JSON file: a path (.json or .json.gz), bytes,
    or a binary file-like object (gzip is detected from its magic bytes)."""
    return _read_document(_load_document(source))


def read_json_table(source: Any) -> Table:
    """The batches of an integration JSON file as one Table."""
    schema, batches = read_json(source)
    return Table(schema, batches)


# == writing =======================================================================================

def _sliced(data: ArrayData, start: int, length: int, where: str) -> ArrayData:
    if start < 0 or length < 0 or start + length > data.length:
        raise ArrowInvalid(f"{where}: elements [{start}, {start + length}) are outside the child "
                           f"array of length {data.length}")
    return data.slice(start, length)


def _buffer_view(data: ArrayData, index: int, width: int, start: int, count: int, what: str,
                 where: str) -> memoryview:
    bufs = data.buffers
    buf = bufs[index] if index < len(bufs) else None
    if buf is None:
        if count == 0:
            return memoryview(b"")
        raise ArrowInvalid(f"{where}: {data.type} array needs buffer {index} ({what})")
    end = (start + count) * width
    if start < 0 or end > buf.size:
        raise ArrowInvalid(f"{where}: buffer {index} ({what}) has {buf.size} bytes but elements "
                           f"[{start}, {start + count}) of {width} bytes need {end}")
    return memoryview(buf)[start * width:end]


def _ints(data: ArrayData, index: int, width: int, start: int, count: int, what: str,
          where: str) -> list[Any]:
    view = _buffer_view(data, index, width, start, count, what, where)
    return list(struct.unpack(f"<{count}{'bhiq'[(1, 2, 4, 8).index(width)]}", view))


def _bits(data: ArrayData, index: int, where: str) -> list[Any]:
    bufs = data.buffers
    buf = bufs[index] if index < len(bufs) else None
    if buf is None:
        if index == 0 or data.length == 0:
            return [1] * data.length
        raise ArrowInvalid(f"{where}: {data.type} array needs buffer {index}")
    try:
        return list(unpack_bits(buf, data.offset, data.length))
    except ArrowInvalid as e:
        raise ArrowInvalid(f"{where}: buffer {index}: {e}") from None


def _offsets_json(values: list[Any], large: bool) -> list[Any]:
    return list(map(str, values)) if large else values


class _ColumnWriter:
    """Turns ArrayData into JSON columns, collecting each dictionary under its pre-order id."""

    def __init__(self, ids: dict[tuple[int, ...], int]) -> None:
        self.ids = ids               # path -> dictionary id
        # id -> (ArrayData, JSON column)
        self.dictionaries: dict[int, tuple[ArrayData, dict[str, Any]]] = {}

    def column(self, data: ArrayData, name: str, t: T.DataType, path: tuple[int, ...],
               where: str) -> dict[str, Any]:
        n = data.length
        out: dict[str, Any] = {"name": name, "count": n}
        if isinstance(t, T.DictionaryType):
            out["VALIDITY"] = _bits(data, 0, where)
            view = _buffer_view(data, 1, t.index_type.byte_width, data.offset, n, "indices", where)
            out["DATA"] = _FixedCodec(t.index_type).decode(view, n)
            if data.dictionary is None:
                raise ArrowInvalid(f"{where}: dictionary array has no dictionary")
            self.add_dictionary(data.dictionary, t.value_type, path, where)
            return out
        st: Any = t.storage_type          # the subclass `kind` dispatches on
        kind = st.kind
        if kind == Kind.NULL:
            return out
        if kind == Kind.SPARSE_UNION or kind == Kind.DENSE_UNION:
            out["TYPE_ID"] = _ints(data, 0, 1, data.offset, n, "type ids", where)
            if kind == Kind.SPARSE_UNION:
                kids = [_sliced(c, data.offset, n, where) for c in data.children]
            else:
                out["OFFSET"] = _ints(data, 1, 4, data.offset, n, "offsets", where)
                kids = list(data.children)
            out["children"] = self.children(kids, st, path, where)
            return out
        if kind == Kind.RUN_END_ENCODED:
            out["children"] = self.run_end_encoded(data, st, path, where)
            return out
        out["VALIDITY"] = _bits(data, 0, where)
        if kind == Kind.BOOL:
            out["DATA"] = [bool(b) for b in _bits(data, 1, where)]
        elif kind == Kind.FIXED:
            w = st.byte_width
            out["DATA"] = _FixedCodec(st).decode(
                _buffer_view(data, 1, w, data.offset, n, "values", where), n)
        elif kind == Kind.BINARY or kind == Kind.LARGE_BINARY:
            large = kind == Kind.LARGE_BINARY
            offs = _ints(data, 1, 8 if large else 4, data.offset, n + 1, "offsets", where)
            first = offs[0]
            raw = _buffer_view(data, 2, 1, first, offs[-1] - first, "data", where).tobytes()
            rel = [o - first for o in offs]
            if any(b < a for a, b in zip(rel, rel[1:])):
                raise ArrowInvalid(f"{where}: offsets decrease")
            pieces = [raw[a:b] for a, b in zip(rel, rel[1:])]
            out["OFFSET"] = _offsets_json(rel, large)
            out["DATA"] = self.bytes_json(pieces, st.is_utf8)
        elif kind == Kind.VIEW:
            out["VIEWS"] = self.views(data, st, where)
            out["VARIADIC_DATA_BUFFERS"] = [memoryview(b).hex().upper()  # type: ignore[arg-type]
                                            for b in data.buffers[2:]]  # present: data buffers
        elif kind in (Kind.LIST, Kind.LARGE_LIST):
            large = kind == Kind.LARGE_LIST
            offs = _ints(data, 1, 8 if large else 4, data.offset, n + 1, "offsets", where)
            first = offs[0] if offs else 0
            child = _sliced(data.children[0], first, offs[-1] - first, where)
            out["OFFSET"] = _offsets_json([o - first for o in offs], large)
            out["children"] = self.children([child], st, path, where)
        elif kind in (Kind.LIST_VIEW, Kind.LARGE_LIST_VIEW):
            large = kind == Kind.LARGE_LIST_VIEW
            w = 8 if large else 4
            out["OFFSET"] = _offsets_json(_ints(data, 1, w, data.offset, n, "offsets", where), large)
            out["SIZE"] = _offsets_json(_ints(data, 2, w, data.offset, n, "sizes", where), large)
            out["children"] = self.children(list(data.children), st, path, where)
        elif kind == Kind.FIXED_SIZE_LIST:
            size = st.list_size
            child = _sliced(data.children[0], data.offset * size, n * size, where)
            out["children"] = self.children([child], st, path, where)
        elif kind == Kind.STRUCT:
            kids = [_sliced(c, data.offset, n, where) for c in data.children]
            out["children"] = self.children(kids, st, path, where)
        else:
            raise ArrowNotImplementedError(f"{where}: cannot write {t} as integration JSON")
        return out

    def children(self, kids: list[ArrayData], st: Any, path: tuple[int, ...], where: str
                 ) -> list[dict[str, Any]]:
        fields = st.fields
        if len(kids) != len(fields):
            raise ArrowInvalid(f"{where}: {st} needs {len(fields)} children, the array has "
                               f"{len(kids)}")
        return [self.column(c, f.name, f.type, path + (k,), f"{where}.{f.name}")
                for k, (c, f) in enumerate(zip(kids, fields))]

    @staticmethod
    def bytes_json(pieces: list[bytes], is_utf8: bool) -> list[str]:
        if is_utf8:
            return [p.decode("utf-8", "surrogateescape") for p in pieces]
        return [p.hex().upper() for p in pieces]

    def views(self, data: ArrayData, st: Any, where: str) -> list[dict[str, Any]]:
        n = data.length
        raw = _buffer_view(data, 1, 16, data.offset, n, "views", where).tobytes()
        out = []
        for i in range(n):
            size, = struct.unpack_from("<i", raw, 16 * i)
            if size <= 12:
                inlined = raw[16 * i + 4:16 * i + 4 + max(size, 0)]
                out.append({"SIZE": size, "INLINED": self.bytes_json([inlined], st.is_utf8)[0]})
            else:
                prefix, index, offset = struct.unpack_from("<4sii", raw, 16 * i + 4)
                out.append({"SIZE": size, "PREFIX_HEX": prefix.hex().upper(),
                            "BUFFER_INDEX": index, "OFFSET": offset})
        return out

    def run_end_encoded(self, data: ArrayData, st: Any, path: tuple[int, ...], where: str
                        ) -> list[dict[str, Any]]:
        run_ends_data, values = data.children[0], data.children[1]
        width = st.run_end_type.byte_width
        ends = _ints(run_ends_data, 1, width, run_ends_data.offset, run_ends_data.length,
                     "run ends", f"{where}.run_ends")
        start, stop = data.offset, data.offset + data.length
        if data.length == 0:
            first, last = 0, -1
        else:
            if not ends or ends[-1] < stop:
                raise ArrowInvalid(f"{where}: run ends do not cover elements [{start}, {stop})")
            first, last = bisect_right(ends, start), bisect_left(ends, stop)
        kept = [min(e, stop) - start for e in ends[first:last + 1]]
        run_ends_json = {"name": st.field(0).name, "count": len(kept),
                         "VALIDITY": [1] * len(kept),
                         "DATA": _offsets_json(kept, width == 8)}
        values_json = self.column(_sliced(values, first, len(kept), where), st.field(1).name,
                                  st.field(1).type, path + (1,), f"{where}.values")
        return [run_ends_json, values_json]

    def add_dictionary(self, values: ArrayData, value_type: T.DataType, path: tuple[int, ...],
                       where: str) -> None:
        """Record the dictionary at `path`: the first, the same again, or one that extends it."""
        dict_id = self.ids[path]
        # The dictionary's own nested dictionaries sit below `path`, like in the schema.
        encoded = self.column(values, f"DICT{dict_id}", value_type, path, f"{where} (dictionary)")
        prev = self.dictionaries.get(dict_id)
        if prev is None or prev[0] is values:
            self.dictionaries[dict_id] = (values, encoded)
            return
        old_data, old = prev
        if old == encoded:
            return
        # One dictionary per id in this format: a later batch may only extend the earlier one.
        short, long_ = (old_data, values) if old_data.length <= values.length else (values, old_data)
        long_json = encoded if long_ is values else old
        short_json = old if long_ is values else encoded
        head = self.column(_sliced(long_, 0, short.length, where), f"DICT{dict_id}", value_type,
                           path, f"{where} (dictionary)")
        if head != short_json:
            raise ArrowInvalid(f"{where}: batches use different dictionaries for id {dict_id}; "
                               f"the integration JSON format holds one dictionary per id")
        self.dictionaries[dict_id] = (long_, long_json)


def _document(schema: T.Schema, batches: list[RecordBatch]) -> dict[str, Any]:
    """The integration JSON document of `schema` and `batches`."""
    from .ipc.dictionary import dictionary_paths
    ids = {path: i for i, (path, _) in enumerate(dictionary_paths(schema))}
    doc: dict[str, Any] = {"schema": {"fields": [_field_to_json(f, (i,), ids)
                                                 for i, f in enumerate(schema)]}}
    if schema.metadata:
        doc["schema"]["metadata"] = _metadata_to_json(schema.metadata)
    writer = _ColumnWriter(ids)
    out_batches = []
    for b, batch in enumerate(batches):
        if not batch.schema.equals(schema):
            raise ArrowInvalid(f"batch {b} has schema\n{batch.schema}\nbut the file has\n{schema}")
        cols = []
        for i, (f, data) in enumerate(zip(schema, batch._columns)):
            where = f"batch {b}, column {i} ({f.name!r})"
            if data.length != batch.num_rows:
                raise ArrowInvalid(f"{where}: {data.length} rows, the batch has {batch.num_rows}")
            cols.append(writer.column(data, f.name, f.type, (i,), where))
        out_batches.append({"count": batch.num_rows, "columns": cols})
    doc["batches"] = out_batches
    if ids:
        dictionaries = []
        for dict_id in sorted(writer.dictionaries):
            data, encoded = writer.dictionaries[dict_id]
            dictionaries.append({"id": dict_id, "data": {"count": data.length,
                                                         "columns": [encoded]}})
        doc["dictionaries"] = dictionaries
    return doc


def write_json(destination: Any, schema: T.Schema, batches: Iterable[RecordBatch]) -> None:
    """Write `schema` and `batches` as integration JSON to a path (gzip when it ends in .gz) or a
    binary file-like object."""
    text = json.dumps(_document(schema, list(batches)), separators=(",", ":")).encode()
    if hasattr(destination, "write"):
        destination.write(text)
        return
    path = os.fspath(destination)
    if str(path).endswith(".gz"):
        text = gzip.compress(text)
    with open(path, "wb") as f:
        f.write(text)
