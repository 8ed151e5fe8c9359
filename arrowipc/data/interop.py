"""The Arrow PyCapsule interface for types, fields and ArrayData: to and from any Arrow library,
zero-copy.

Exports back `__arrow_c_schema__`, `__arrow_c_array__` and `__arrow_c_stream__` of the model
classes; imports take any object exposing those methods (pyarrow, polars, nanoarrow, duckdb...).
The C-level work (structs, release callbacks, buffer sizes) lives in `arrowipc._core.cdata`;
what its schema descriptions mean as types, in `arrowipc.data.cschema`. Record batches and tables
(struct arrays and streams of them) are assembled in arrowipc/table.py over these functions.

Arrays that view a shared memory map of a file (memory_map=True, arrowipc.memory_map, an mmap
passed as a source) are checked again before export: another process may have rewritten the
file since they were read and validated, and a consumer trusts what it is given (out-of-range
offsets or indices would make it read out of bounds). The bounds checks of validation run
again on those arrays only (ArrowInvalid when they fail); memory we own is exported as is.

`requested_schema`: the protocol lets a producer ignore it, and we do unless it describes exactly
the type we would export anyway (then it is trivially honoured). We never cast on export; a
consumer that asked for another type receives ours and can check it.
"""
from __future__ import annotations

import mmap
from typing import Any, Iterable, Iterator

from .._core import cdata
from .._core.arraydata import ArrayData, views_memory_of
from .cschema import field_from_node, schema_node
from ..errors import ArrowInvalid, ArrowTypeError
from ..types import DataType, Field, Schema, StructType

__all__ = ["check_requested_schema", "checked_if_mapped", "export_array", "export_array_stream", "export_schema",
           "import_array", "import_array_stream", "import_field", "import_schema", "peer_as_ours",
           "schema_from_struct_field"]


# -- export -------------------------------------------------------------------------------------

def _field_of(obj: object) -> Field:
    if isinstance(obj, Field):
        return obj
    if isinstance(obj, DataType):
        return Field("", obj)
    raise ArrowTypeError(f"expected a Field, DataType or Schema, got {type(obj).__name__}")


def check_requested_schema(requested_schema: object) -> None:
    """Validate `requested_schema` is a schema capsule; what it asks for is not honoured."""
    if requested_schema is not None:
        field_from_node(cdata.import_schema_capsule(requested_schema))


def checked_if_mapped(data: ArrayData, what: str) -> ArrayData:
    """`data`, its bounds checked again when it views a shared file mapping (see the module
    docstring)."""
    if views_memory_of(data, mmap.mmap):
        from ..validate import validate_array
        validate_array(data, False, f"{what} (memory-mapped, checked again on export)")
    return data


def export_schema(obj: Field | DataType | Schema) -> object:
    """An "arrow_schema" PyCapsule for a Field, a DataType or a Schema."""
    if isinstance(obj, Schema):
        return cdata.export_schema_capsule(schema_node(StructType(obj.fields), "", False,
                                                       obj.metadata))
    f = _field_of(obj)
    return cdata.export_schema_capsule(schema_node(f.type, f.name, f.nullable, f.metadata))


def export_array(data: ArrayData, field: Field, requested_schema: object = None
                 ) -> tuple[object, object]:
    """(schema capsule, array capsule) for `data`, described by `field` (see module docstring)."""
    check_requested_schema(requested_schema)
    if data.type != field.type:
        raise ArrowTypeError(f"array of type {data.type} exported as field of type {field.type}")
    schema_capsule = cdata.export_schema_capsule(schema_node(field.type, field.name,
                                                             field.nullable, field.metadata))
    return schema_capsule, cdata.export_array_capsule(checked_if_mapped(data, "array"))


def export_array_stream(field: Field, arrays: Iterable[ArrayData], requested_schema: object = None
                        ) -> object:
    """An "arrow_array_stream" PyCapsule of ArrayData chunks, all of `field`'s type."""
    check_requested_schema(requested_schema)

    def checked() -> Iterator[ArrayData]:
        for d in arrays:
            if d.type != field.type:
                raise ArrowInvalid(f"chunk of type {d.type} in a stream of {field.type}")
            yield checked_if_mapped(d, "chunk")

    return cdata.export_stream_capsule(schema_node(field.type, field.name, field.nullable,
                                                   field.metadata), checked())


# -- import -------------------------------------------------------------------------------------

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


def _array_capsules_of(obj: Any) -> tuple[object, object]:
    if not hasattr(obj, "__arrow_c_array__"):
        raise ArrowTypeError(f"{type(obj).__name__} does not implement __arrow_c_array__")
    capsules = obj.__arrow_c_array__()
    if not (isinstance(capsules, tuple) and len(capsules) == 2):
        raise ArrowTypeError("__arrow_c_array__ must return a (schema, array) pair of capsules")
    return capsules


def import_array(obj: object) -> tuple[Field, ArrayData]:
    """(Field, ArrayData) from an object with `__arrow_c_array__`, zero-copy."""
    schema_capsule, array_capsule = _array_capsules_of(obj)
    field = field_from_node(cdata.import_schema_capsule(schema_capsule))
    return field, cdata.import_array_capsule(array_capsule, field.type)


def _stream_capsule_of(obj: Any) -> object:
    if not hasattr(obj, "__arrow_c_stream__"):
        raise ArrowTypeError(f"{type(obj).__name__} does not implement __arrow_c_stream__")
    return obj.__arrow_c_stream__()


def import_array_stream(obj: object) -> tuple[Field, Iterator[ArrayData]]:
    """(Field, iterator of ArrayData) from an object with `__arrow_c_stream__`."""
    return cdata.import_stream_capsule(_stream_capsule_of(obj), field_from_node)


# -- comparison with other libraries' objects -----------------------------------------------------

def peer_as_ours(obj: object, kind: str) -> Any:
    """`obj`, an object of another Arrow library, imported as our `kind` ("type", "field" or
    "schema"; arrowipc.table.peer_as_ours adds "batch" and "table") through the PyCapsule
    interface, or None when it does not speak it (or describes another kind of object). Used by
    equality, so `ours == theirs` compares contents, whichever library made `theirs`.

    Types, fields and schemas all export `__arrow_c_schema__`; they are told apart by pyarrow's
    attribute names (a field has `nullable`, a schema `names`), as the capsule alone cannot.
    """
    try:
        if not hasattr(obj, "__arrow_c_schema__"):
            return None
        is_field, is_schema = hasattr(obj, "nullable"), hasattr(obj, "names")
        if kind == "schema":
            return import_schema(obj) if is_schema else None
        if kind == "field":
            return import_field(obj) if is_field and not is_schema else None
        if kind == "type":
            return import_field(obj).type if not (is_field or is_schema) else None
    except (ArrowInvalid, ArrowTypeError, TypeError, ValueError):
        return None
    return None

