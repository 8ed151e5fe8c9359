"""Handing arrowipc objects to pyarrow: `obj.to_pyarrow()` on tables, batches, arrays, chunked
arrays, scalars, schemas, fields and types.

arrowipc's objects are not pyarrow's: a function of pyarrow's that checks its argument's class
(`pa.concat_tables`, `pyarrow.compute`, `pq.write_table`, `pa.types.is_*` on fields...) refuses
them. Each conversion here goes through the Arrow PyCapsule interface, so no buffer is copied:
the pyarrow object views arrowipc's memory, which stays alive as long as pyarrow needs it.

pyarrow is imported here only when a conversion is asked for: `import arrowipc` and everything
else in the package work without it.
"""
from __future__ import annotations

from typing import Any

__all__ = ["to_pyarrow"]


def to_pyarrow(obj: Any, kind: str) -> Any:
    """The pyarrow object holding the same data as arrowipc's `obj`, made without copying.
    `kind` says what `obj` is: "table", "batch", "chunked_array", "array", "scalar" (a length-1
    array of the value), "schema", "field" or "type" (a field of that type)."""
    try:
        import pyarrow as pa
    except ImportError:
        raise ImportError("to_pyarrow() needs pyarrow: pip install pyarrow") from None
    if kind == "scalar":
        return pa.array(obj)[0]
    if kind == "type":
        return pa.field(obj).type
    convert = {"table": pa.table, "batch": pa.record_batch, "chunked_array": pa.chunked_array,
               "array": pa.array, "schema": pa.schema, "field": pa.field}[kind]
    return convert(obj)
