"""Extension types: a registry by name, the canonical Arrow types, and the metadata mapping.

A field whose metadata carries `ARROW:extension:name` (or the Alkaid variant's
`ALKAID:extension:name`) is read as the registered extension type over its storage. Names nobody
registered stay as their storage type with the metadata kept on the field, so nothing is lost.
"""
from __future__ import annotations

TYPE_CHECKING = False               # typing and json are not imported by `import arrowipc`
if TYPE_CHECKING:
    from typing import Any, Callable, Mapping

from .errors import ArrowInvalid, ArrowKeyError, ArrowTypeError
from .types import (DataType, DictionaryType, ExtensionType, FixedSizeListType, ListType,
                    RunEndEncodedType, StructType, TimestampType, binary, binary_view,
                    fixed_size_binary, int8, int16, int32, large_binary, large_string, string,
                    string_view)

__all__ = ["apply_extension_metadata", "bool8", "CANONICAL_NAMES", "CanonicalExtensionType",
           "check_canonical", "EXTENSION_METADATA_KEYS", "EXTENSION_NAME_KEYS", "json_",
           "register_extension_type", "registry_generation", "timestamp_with_offset",
           "unregister_extension_type", "uuid"]

EXTENSION_NAME_KEYS = (b"ARROW:extension:name", b"ALKAID:extension:name")
EXTENSION_METADATA_KEYS = (b"ARROW:extension:metadata", b"ALKAID:extension:metadata")

_registry: dict[str, ExtensionType | type[ExtensionType]] = {}
_registry_generation = 0      # bumped by every (un)registration: decoded-schema caches key on it


def registry_generation() -> int:
    """A number that changes whenever an extension type is registered or unregistered, so a
    cache of decoded schemas (whose types depend on the registry) knows when to stop trusting
    its entries."""
    return _registry_generation


class CanonicalExtensionType(ExtensionType):
    """One of the specification's canonical extension types: storage plus serialized metadata."""
    __slots__ = ()

    @classmethod
    def __arrow_ext_deserialize__(cls, name: str, storage_type: DataType, serialized: bytes
                                  ) -> CanonicalExtensionType:
        return cls(name, storage_type, serialized)


def register_extension_type(ext_type: ExtensionType | type[ExtensionType]) -> None:
    """Register an ExtensionType (instance or class with `extension_name`) for reading.

    Reading calls `type(ext).__arrow_ext_deserialize__(storage_type, serialized)` when defined,
    and otherwise rebuilds a generic ExtensionType with the registered name.
    """
    name = getattr(ext_type, "extension_name", None)
    if not isinstance(name, str) or not name:
        raise ArrowTypeError("extension types need a non-empty `extension_name`")
    if name in _registry:
        raise ArrowKeyError(f"an extension type named {name!r} is already registered")
    global _registry_generation
    _registry[name] = ext_type
    _registry_generation += 1


def unregister_extension_type(name: str) -> None:
    """Forget the extension type registered as `name` (ArrowKeyError if none is)."""
    if name not in _registry:
        raise ArrowKeyError(f"no extension type named {name!r} is registered")
    global _registry_generation
    del _registry[name]
    _registry_generation += 1


def _json_object(name: str, serialized: bytes, where: str, required: bool) -> dict[str, Any]:
    """The JSON object a canonical type serializes its parameters to ({} when absent and
    optional)."""
    if not serialized and not required:
        return {}
    try:
        import json
        value = json.loads(serialized.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError) as e:
        raise ArrowInvalid(f"{where}: {name} metadata must be a JSON object, found "
                           f"{serialized[:60]!r} ({_short(e)})") from None
    if not isinstance(value, dict):
        raise ArrowInvalid(f"{where}: {name} metadata must be a JSON object, found "
                           f"{type(value).__name__}")
    return value


def _short(value: Any) -> str:
    """A parameter as quoted in an error: hostile metadata can be megabytes long."""
    text = str(value) if isinstance(value, BaseException) else repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def _check_tensor_layout(name: str, params: dict[str, Any], ndim: int, where: str) -> None:
    """dim_names and permutation, where present, describe each of the ndim dimensions once."""
    names = params.get("dim_names")
    if names is not None and not (isinstance(names, list) and len(names) == ndim
                                  and all(isinstance(n, str) for n in names)):
        raise ArrowInvalid(f"{where}: {name} dim_names must be {ndim} strings, found "
                           f"{_short(names)}")
    perm = params.get("permutation")
    if perm is not None and not (isinstance(perm, list) and all(type(k) is int for k in perm)
                                 and sorted(perm) == list(range(ndim))):
        raise ArrowInvalid(f"{where}: {name} permutation must order 0..{ndim - 1}, found "
                           f"{_short(perm)}")


def _product_up_to(dims: list[int], bound: int) -> int:
    """The product of non-negative dims, or bound + 1 once it passes bound (a hostile shape of
    many huge numbers must not build a huge integer)."""
    if 0 in dims:
        return 0
    product = 1
    for d in dims:
        product *= d
        if product > bound:
            return bound + 1
    return product


def _check_fixed_shape_tensor(name: str, storage: DataType, serialized: bytes, where: str) -> str | None:
    if not isinstance(storage, FixedSizeListType):
        return "a fixed_size_list"
    params = _json_object(name, serialized, where, required=True)
    shape = params.get("shape")
    if not (isinstance(shape, list) and all(type(d) is int and d >= 0 for d in shape)):
        raise ArrowInvalid(f"{where}: {name} shape must be a list of non-negative integers, "
                           f"found {_short(shape)}")
    if _product_up_to(shape, storage.list_size) != storage.list_size:
        raise ArrowInvalid(f"{where}: {name} shape {_short(shape)} does not hold the "
                           f"{storage.list_size} values of each storage list")
    _check_tensor_layout(name, params, len(shape), where)
    return None


def _check_variable_shape_tensor(name: str, storage: DataType, serialized: bytes, where: str) -> str | None:
    if not isinstance(storage, StructType):
        return "struct<data: list, shape: fixed_size_list<int32>>"
    data_at, shape_at = storage.get_field_index("data"), storage.get_field_index("shape")
    shape = storage.field(shape_at).type if shape_at >= 0 else None
    if (data_at < 0 or not isinstance(storage.field(data_at).type, ListType)
            or not isinstance(shape, FixedSizeListType) or shape.value_type != int32()):
        return "struct<data: list, shape: fixed_size_list<int32>>"
    params = _json_object(name, serialized, where, required=False)
    _check_tensor_layout(name, params, shape.list_size, where)
    uniform = params.get("uniform_shape")
    if uniform is not None and not (isinstance(uniform, list) and len(uniform) == shape.list_size
                                    and all(d is None or type(d) is int for d in uniform)):
        raise ArrowInvalid(f"{where}: {name} uniform_shape must be {shape.list_size} integers or "
                           f"nulls, found {_short(uniform)}")
    return None


def _check_opaque(name: str, storage: DataType, serialized: bytes, where: str) -> str | None:
    params = _json_object(name, serialized, where, required=True)
    for key in ("type_name", "vendor_name"):
        if not isinstance(params.get(key), str):
            raise ArrowInvalid(f"{where}: {name} metadata needs a string {key!r}, found "
                               f"{_short(params.get(key))}")
    return None


_OFFSET_STORAGE = ("struct<timestamp: timestamp[unit, tz=UTC], offset_minutes: int16> (the "
                   "offsets may be dictionary or run-end encoded int16)")


def _check_timestamp_with_offset(name: str, storage: DataType, serialized: bytes,
                                 where: str) -> str | None:
    # the UTC instant and the offset in minutes it was written with, in this order
    if not (isinstance(storage, StructType) and storage.num_fields == 2
            and [f.name for f in storage] == ["timestamp", "offset_minutes"]):
        return _OFFSET_STORAGE
    instant, offset = storage.field(0).type, storage.field(1).type
    if isinstance(offset, (DictionaryType, RunEndEncodedType)):
        offset = offset.value_type
    if not (isinstance(instant, TimestampType) and instant.tz == "UTC") or offset != int16():
        return _OFFSET_STORAGE
    if serialized:
        raise ArrowInvalid(f"{where}: {name} metadata must be empty, found {_short(serialized)}")
    return None


def _check_variant(name: str, storage: DataType, serialized: bytes, where: str) -> str | None:
    at = storage.get_field_index("metadata") if isinstance(storage, StructType) else -1
    if at < 0 or storage.field(at).type not in (binary(), large_binary(), binary_view()):
        return "a struct with a binary 'metadata' field"
    return None


# a canonical type's check: (name, storage, serialized, where) -> the storage it expected, or None
if TYPE_CHECKING:
    _Check = Callable[[str, DataType, bytes, str], "str | None"]


def _storage_is(expected: str, *types: DataType) -> _Check:
    return lambda name, storage, serialized, where: None if storage in types else expected


# What the specification requires of each canonical type: a check returning the storage it
# expected when the storage is wrong (raising itself for bad parameters), None when all is well.
_CANONICAL_CHECKS: dict[str, _Check] = {
    "arrow.uuid": _storage_is("fixed_size_binary(16)", fixed_size_binary(16)),
    "arrow.bool8": _storage_is("int8", int8()),
    "arrow.json": _storage_is("string, large_string or string_view", string(), large_string(),
                              string_view()),
    "arrow.opaque": _check_opaque,
    "arrow.fixed_shape_tensor": _check_fixed_shape_tensor,
    "arrow.variable_shape_tensor": _check_variable_shape_tensor,
    "arrow.parquet.variant": _check_variant,
    "arrow.timestamp_with_offset": _check_timestamp_with_offset,
}
# The canonical extension types of the Arrow specification, read as extension types by default.
CANONICAL_NAMES = tuple(_CANONICAL_CHECKS)


def check_canonical(name: str, storage: DataType, serialized: bytes, where: str) -> None:
    """ArrowInvalid unless `storage` and the serialized parameters are what the canonical type
    `name` requires: its values are interpreted by that definition (a UUID is 16 bytes)."""
    expected = _CANONICAL_CHECKS[name](name, storage, serialized, where)
    if expected is not None:
        raise ArrowInvalid(f"{where}: {name} storage must be {expected}, found {storage}")


def _build(name: str, storage: DataType, serialized: bytes, where: str = "field"
           ) -> ExtensionType | None:
    registered = _registry.get(name)
    if registered is None:
        if name in CANONICAL_NAMES:
            check_canonical(name, storage, serialized, where)
            return CanonicalExtensionType(name, storage, serialized)
        return None
    cls = registered if isinstance(registered, type) else type(registered)
    deserialize = getattr(cls, "__arrow_ext_deserialize__", None)
    if deserialize is not None and cls is not CanonicalExtensionType and cls is not ExtensionType:
        ext: ExtensionType = deserialize(storage, serialized)
        return ext
    return ExtensionType(name, storage, serialized)


def apply_extension_metadata(storage: DataType, metadata: Mapping[bytes, bytes] | None,
                             keep_unknown: bool = False, where: str = "field"
                             ) -> tuple[DataType, Mapping[bytes, bytes] | None]:
    """(type, remaining field metadata) for a field read from IPC or the C data interface.

    Unknown names stay storage + metadata, unless `keep_unknown` (a bare array has no field to
    hold the metadata): then they become a generic ExtensionType so nothing is lost.
    """
    if not metadata:
        return storage, metadata
    name_key = next((k for k in EXTENSION_NAME_KEYS if k in metadata), None)
    if name_key is None:
        return storage, metadata
    name = metadata[name_key].decode("utf-8", errors="replace")
    meta_key = EXTENSION_METADATA_KEYS[EXTENSION_NAME_KEYS.index(name_key)]
    serialized = metadata.get(meta_key, b"")
    ext = _build(name, storage, serialized, where)
    if ext is None and keep_unknown:
        ext = ExtensionType(name, storage, serialized)
    if ext is None:
        return storage, metadata        # unknown: keep storage and the metadata as they are
    rest = {k: v for k, v in metadata.items() if k not in (name_key, meta_key)}
    return ext, (rest or None)


def uuid() -> ExtensionType:
    """The canonical arrow.uuid type (fixed_size_binary(16) storage)."""
    from .types import fixed_size_binary
    return CanonicalExtensionType("arrow.uuid", fixed_size_binary(16), b"")


def json_(storage: DataType | None = None) -> ExtensionType:
    """The canonical arrow.json type over `storage` (string by default)."""
    from .types import string
    return CanonicalExtensionType("arrow.json", storage or string(), b"")


def timestamp_with_offset(unit: str = "us") -> ExtensionType:
    """The canonical arrow.timestamp_with_offset type: each value an instant (a UTC timestamp in
    `unit`) with the offset from UTC, in minutes, it was recorded in (SQL's TIMESTAMP WITH TIME
    ZONE); its Python values are datetimes in that offset."""
    from .types import field, struct, timestamp
    storage = struct([field("timestamp", timestamp(unit, "UTC"), nullable=False),
                      field("offset_minutes", int16(), nullable=False)])
    return CanonicalExtensionType("arrow.timestamp_with_offset", storage, b"")


def bool8() -> ExtensionType:
    """The canonical arrow.bool8 type (int8 storage)."""
    from .types import int8
    return CanonicalExtensionType("arrow.bool8", int8(), b"")
