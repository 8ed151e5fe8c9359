"""The Arrow PyCapsule interface: our objects to and from any Arrow library, zero-copy.

Exports back `__arrow_c_schema__`, `__arrow_c_array__` and `__arrow_c_stream__` of the model
classes; imports take any object exposing those methods (pyarrow, polars, nanoarrow, duckdb...).
The C-level work (structs, release callbacks, buffer sizes) lives in `arrowipc._core.cdata`;
what its schema descriptions mean as types, in `arrowipc._cschema`.

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
from typing import TYPE_CHECKING, Any, Iterable, Iterator

from ._core import cdata
from ._core.arraydata import ArrayData, views_memory_of
from ._cschema import field_from_node, schema_node
from .errors import ArrowInvalid, ArrowTypeError
from .types import DataType, Field, Schema, StructType

if TYPE_CHECKING:
    from .table import RecordBatch

__all__ = ["export_array", "export_array_stream", "export_schema", "export_stream", "import_array",
           "import_array_stream", "import_field", "import_record_batch", "import_schema",
           "import_stream"]


# -- export -------------------------------------------------------------------------------------

def _field_of(obj: object) -> Field:
    if isinstance(obj, Field):
        return obj
    if isinstance(obj, DataType):
        return Field("", obj)
    raise ArrowTypeError(f"expected a Field, DataType or Schema, got {type(obj).__name__}")


def _check_requested_schema(requested_schema: object) -> None:
    """Validate `requested_schema` is a schema capsule; what it asks for is not honoured."""
    if requested_schema is not None:
        field_from_node(cdata.import_schema_capsule(requested_schema))


def _checked_if_mapped(data: ArrayData, what: str) -> ArrayData:
    """`data`, its bounds checked again when it views a shared file mapping (see the module
    docstring)."""
    if views_memory_of(data, mmap.mmap):
        from .validate import validate_array
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
    _check_requested_schema(requested_schema)
    if data.type != field.type:
        raise ArrowTypeError(f"array of type {data.type} exported as field of type {field.type}")
    schema_capsule = cdata.export_schema_capsule(schema_node(field.type, field.name,
                                                             field.nullable, field.metadata))
    return schema_capsule, cdata.export_array_capsule(_checked_if_mapped(data, "array"))


def export_stream(schema: Schema, batches: Iterable[RecordBatch], requested_schema: object = None
                  ) -> object:
    """An "arrow_array_stream" PyCapsule of record batches (each a non-null struct array)."""
    _check_requested_schema(requested_schema)
    struct_type = StructType(schema.fields)

    def struct_arrays() -> Iterator[ArrayData]:
        for b in batches:
            if not b.schema.equals(schema):
                raise ArrowInvalid(f"record batch with schema\n{b.schema}\n"
                                   f"in a stream of\n{schema}")
            yield _checked_if_mapped(b._as_struct_data(), "record batch")

    return cdata.export_stream_capsule(schema_node(struct_type, "", False, schema.metadata),
                                       struct_arrays())


def export_array_stream(field: Field, arrays: Iterable[ArrayData], requested_schema: object = None
                        ) -> object:
    """An "arrow_array_stream" PyCapsule of ArrayData chunks, all of `field`'s type."""
    _check_requested_schema(requested_schema)

    def checked() -> Iterator[ArrayData]:
        for d in arrays:
            if d.type != field.type:
                raise ArrowInvalid(f"chunk of type {d.type} in a stream of {field.type}")
            yield _checked_if_mapped(d, "chunk")

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


def _schema_from_struct_field(f: Field) -> Schema:
    if not isinstance(f.type, StructType):
        raise ArrowTypeError(f"a schema must be exported as a struct type, got {f.type}")
    return Schema(f.type.fields, f.metadata)


def import_schema(obj: object) -> Schema:
    """A Schema from an object with `__arrow_c_schema__` describing a struct (pyarrow's form)."""
    return _schema_from_struct_field(import_field(obj))


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


def _batch_from_struct(schema: Schema, data: ArrayData) -> RecordBatch:
    """A RecordBatch whose columns are the children of a struct array without top-level nulls."""
    from ._upcalls import RecordBatch, make_array
    from .validate import null_count_of
    if null_count_of(data) != 0:
        raise ArrowInvalid(f"a struct array with {data.null_count} null rows cannot be a record "
                           "batch (top-level validity must be absent or all valid)")
    columns = []
    for f, c in zip(schema, data.children):
        # The struct's offset applies to its children; bake it into each column.
        if data.offset == 0 and c.length == data.length:
            columns.append(c)
        else:
            columns.append(make_array(c).slice(data.offset, data.length).data)
    return RecordBatch(schema, columns, data.length)


def import_record_batch(obj: object) -> RecordBatch:
    """A RecordBatch from an object whose `__arrow_c_array__` gives a struct array."""
    f, data = import_array(obj)
    return _batch_from_struct(_schema_from_struct_field(f), data)


def _stream_capsule_of(obj: Any) -> object:
    if not hasattr(obj, "__arrow_c_stream__"):
        raise ArrowTypeError(f"{type(obj).__name__} does not implement __arrow_c_stream__")
    return obj.__arrow_c_stream__()


def import_array_stream(obj: object) -> tuple[Field, Iterator[ArrayData]]:
    """(Field, iterator of ArrayData) from an object with `__arrow_c_stream__`."""
    return cdata.import_stream_capsule(_stream_capsule_of(obj), field_from_node)


def import_stream(obj: object) -> tuple[Schema, Iterator[RecordBatch]]:
    """(Schema, iterator of RecordBatch) from an object whose stream yields struct arrays."""
    f, arrays = import_array_stream(obj)
    schema = _schema_from_struct_field(f)

    def batches() -> Iterator[RecordBatch]:
        for data in arrays:
            yield _batch_from_struct(schema, data)

    return schema, batches()


# -- comparison with other libraries' objects -----------------------------------------------------

def peer_as_ours(obj: object, kind: str) -> Any:
    """`obj`, an object of another Arrow library, imported as our `kind` ("type", "field",
    "schema", "batch" or "table") through the PyCapsule interface, or None when it does not speak
    it (or describes another kind of object). Used by equality, so `ours == theirs` compares
    contents, whichever library made `theirs`.

    Types, fields and schemas all export `__arrow_c_schema__`; they are told apart by pyarrow's
    attribute names (a field has `nullable`, a schema `names`), as the capsule alone cannot.
    """
    try:
        if kind == "table":
            if hasattr(obj, "__arrow_c_stream__") and not hasattr(obj, "__arrow_c_array__"):
                from ._upcalls import Table
                schema, batches = import_stream(obj)
                return Table(schema, list(batches))
            return None
        if kind == "batch":
            if hasattr(obj, "__arrow_c_array__") and hasattr(obj, "num_columns"):
                return import_record_batch(obj)
            return None
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


from . import _upcalls                              # noqa: E402   (the type vocabulary's exports)
_upcalls.register(__name__, export_schema=export_schema, import_schema=import_schema,
                  peer_as_ours=peer_as_ours)
