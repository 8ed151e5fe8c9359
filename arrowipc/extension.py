"""Extension types: a registry by name, the canonical Arrow types, and the metadata mapping.

A field whose metadata carries `ARROW:extension:name` (or the Alkaid variant's
`ALKAID:extension:name`) is read as the registered extension type over its storage. Names nobody
registered stay as their storage type with the metadata kept on the field, so nothing is lost.
"""
from __future__ import annotations

from .errors import ArrowKeyError, ArrowTypeError
from .types import DataType, ExtensionType

EXTENSION_NAME_KEYS = (b"ARROW:extension:name", b"ALKAID:extension:name")
EXTENSION_METADATA_KEYS = (b"ARROW:extension:metadata", b"ALKAID:extension:metadata")

# The canonical extension types of the Arrow specification, read as extension types by default.
CANONICAL_NAMES = ("arrow.uuid", "arrow.json", "arrow.bool8", "arrow.opaque",
                   "arrow.fixed_shape_tensor", "arrow.variable_shape_tensor", "arrow.parquet.variant")

_registry: dict = {}


class CanonicalExtensionType(ExtensionType):
    """One of the specification's canonical extension types: storage plus serialized metadata."""
    __slots__ = ()

    @classmethod
    def __arrow_ext_deserialize__(cls, name: str, storage_type: DataType, serialized: bytes):
        return cls(name, storage_type, serialized)


def register_extension_type(ext_type) -> None:
    """Register an ExtensionType (instance or class with `extension_name`) for reading.

    Reading calls `type(ext).__arrow_ext_deserialize__(storage_type, serialized)` when defined,
    and otherwise rebuilds a generic ExtensionType with the registered name.
    """
    name = getattr(ext_type, "extension_name", None)
    if not isinstance(name, str) or not name:
        raise ArrowTypeError("extension types need a non-empty `extension_name`")
    if name in _registry:
        raise ArrowKeyError(f"an extension type named {name!r} is already registered")
    _registry[name] = ext_type


def unregister_extension_type(name: str) -> None:
    if name not in _registry:
        raise ArrowKeyError(f"no extension type named {name!r} is registered")
    del _registry[name]


def _build(name: str, storage: DataType, serialized: bytes):
    registered = _registry.get(name)
    if registered is None:
        if name in CANONICAL_NAMES:
            return CanonicalExtensionType(name, storage, serialized)
        return None
    cls = registered if isinstance(registered, type) else type(registered)
    deserialize = getattr(cls, "__arrow_ext_deserialize__", None)
    if deserialize is not None and cls is not CanonicalExtensionType and cls is not ExtensionType:
        return deserialize(storage, serialized)
    return ExtensionType(name, storage, serialized)


def apply_extension_metadata(storage: DataType, metadata):
    """(type, remaining field metadata) for a field read from IPC or the C data interface."""
    if not metadata:
        return storage, metadata
    name_key = next((k for k in EXTENSION_NAME_KEYS if k in metadata), None)
    if name_key is None:
        return storage, metadata
    name = metadata[name_key].decode("utf-8", errors="replace")
    meta_key = EXTENSION_METADATA_KEYS[EXTENSION_NAME_KEYS.index(name_key)]
    serialized = metadata.get(meta_key, b"")
    ext = _build(name, storage, serialized)
    if ext is None:
        return storage, metadata        # unknown: keep storage and the metadata as they are
    rest = {k: v for k, v in metadata.items() if k not in (name_key, meta_key)}
    return ext, (rest or None)


def uuid() -> ExtensionType:
    from .types import fixed_size_binary
    return CanonicalExtensionType("arrow.uuid", fixed_size_binary(16), b"")


def json_(storage: DataType | None = None) -> ExtensionType:
    from .types import string
    return CanonicalExtensionType("arrow.json", storage or string(), b"")


def bool8() -> ExtensionType:
    from .types import int8
    return CanonicalExtensionType("arrow.bool8", int8(), b"")
