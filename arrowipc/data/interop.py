"""The Arrow PyCapsule interface for types, fields and ArrayData: to and from any Arrow library,
zero-copy.

Exports back `__arrow_c_schema__`, `__arrow_c_array__` and `__arrow_c_stream__` of the model
classes; imports take any object exposing those methods (pyarrow, polars, nanoarrow, duckdb...).
The C-level work (structs, release callbacks, buffer sizes) lives in `arrowipc._core.cdata`;
what its schema descriptions mean as types, and the schema capsules of types, fields and
schemas themselves, in `arrowipc.data.cschema` (re-exported here). Record batches and tables
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
from .cschema import (check_requested_schema, export_schema, field_from_node, import_field,
                      import_schema, peer_as_ours, schema_from_struct_field, schema_node)
from ..errors import ArrowInvalid, ArrowTypeError
from ..types import Field

__all__ = ["check_requested_schema", "checked_if_mapped", "export_array", "export_array_stream",
           "export_schema", "import_array", "import_array_stream", "import_field", "import_schema",
           "peer_as_ours", "schema_from_struct_field"]


# -- export -------------------------------------------------------------------------------------

def checked_if_mapped(data: ArrayData, what: str) -> ArrayData:
    """`data`, its bounds checked again when it views a shared file mapping (see the module
    docstring)."""
    if views_memory_of(data, mmap.mmap):
        from ..validate import validate_array
        validate_array(data, False, f"{what} (memory-mapped, checked again on export)")
    return data


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
