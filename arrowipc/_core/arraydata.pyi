"""Typed stubs for arrowipc._core.arraydata (the physical description of one array)."""
from typing import Any

from typing_extensions import disjoint_base

from .buffer import Buffer

@disjoint_base
class ArrayData:
    # a DataType subclass; Any because layout code reads the attributes of the subclass it
    # dispatched to by `type.kind` (an int), which a checker cannot follow
    type: Any
    length: int
    offset: int
    null_count: int
    buffers: list[Buffer | None]
    children: list[ArrayData]
    dictionary: ArrayData | None
    def __init__(self, type: Any, length: int, offset: int = 0, null_count: int = -1,
                 buffers: list[Buffer | None] | None = None,
                 children: list[ArrayData] | None = None,
                 dictionary: ArrayData | None = None) -> None: ...
    def copy_with(self, **changes: Any) -> ArrayData: ...
    def slice(self, offset: int = 0, length: int | None = None) -> ArrayData: ...
    def list_values(self) -> ArrayData: ...
    def with_type(self, type: Any) -> ArrayData: ...

@disjoint_base
class RecordBatchFields:
    schema: Any
    _cols: Any
    num_rows: int
    _pending: Any
    _where: str
    _lazy: Any

def untrack_acyclic(obj: object) -> None: ...
def views_memory_of(d: ArrayData, owner_type: type) -> bool: ...
