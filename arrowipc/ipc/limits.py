"""Resource bounds on untrusted IPC input, checked before the memory they guard is allocated.

A flatbuffer vector may point at the same table many times, so a schema of a few kilobytes can
describe billions of fields (each level multiplying the one above). `schema_size` walks the
field tree without building anything and stops as soon as a bound is passed. (The claims of
compressed buffers are bounded where their prefixes are read, in `compression.BodyDecompression`.)
"""
from __future__ import annotations

from ..errors import ArrowInvalid

TYPE_CHECKING = False               # typing itself is not imported at run time
if TYPE_CHECKING:
    from ._flatbuf import FlatTable
    from .options import IpcReadOptions

__all__ = ["check_schema_bounds", "schema_size"]

_FIELD_CHILDREN = 5        # Field.children in Schema.fbs
_SCHEMA_FIELDS = 1         # Schema.fields


def schema_size(schema_table: FlatTable, max_fields: int, max_depth: int, where: str = "schema"
                ) -> tuple[int, int]:
    """(number of fields, deepest nesting) of a Schema table, nested fields counted.

    Raises ArrowInvalid as soon as either passes its bound; the walk visits at most max_fields + 1
    fields, whatever the metadata claims.
    """
    count, deepest = 0, 0
    n = schema_table.vector_length(_SCHEMA_FIELDS)
    if n > max_fields:
        raise ArrowInvalid(f"{where}: the schema has {n} top-level fields, more than the limit of "
                           f"{max_fields} (IpcReadOptions(max_fields=...))")
    stack = [(t, 1) for t in schema_table.tables(_SCHEMA_FIELDS, "Field")]
    while stack:
        t, depth = stack.pop()
        count += 1
        if count > max_fields:
            raise ArrowInvalid(f"{where}: the schema has more than {max_fields} fields, nested "
                               f"fields counted (IpcReadOptions(max_fields=...))")
        if depth > max_depth:
            raise ArrowInvalid(f"{where}: fields are nested more than {max_depth} levels deep "
                               f"(IpcReadOptions(max_nesting_depth=...))")
        deepest = max(deepest, depth)
        # the vector's length first: never materialize more entries than the bound allows
        if t.vector_length(_FIELD_CHILDREN) > max_fields - count:
            raise ArrowInvalid(f"{where}: the schema has more than {max_fields} fields, nested "
                               f"fields counted (IpcReadOptions(max_fields=...))")
        stack.extend((c, depth + 1) for c in t.tables(_FIELD_CHILDREN, "Field"))
    return count, deepest


def check_schema_bounds(n_fields: int, depth: int, options: IpcReadOptions, where: str = "schema"
                        ) -> None:
    """Re-check a schema decoded (and cached) earlier against this reader's options."""
    if n_fields > options.max_fields:
        raise ArrowInvalid(f"{where}: the schema has {n_fields} fields, nested fields counted, "
                           f"more than the limit of {options.max_fields} "
                           f"(IpcReadOptions(max_fields=...))")
    if depth > options.max_nesting_depth:
        raise ArrowInvalid(f"{where}: fields are nested {depth} levels deep, more than the limit "
                           f"of {options.max_nesting_depth} (IpcReadOptions(max_nesting_depth=...))")
