from typing import Any
from .buffer import Buffer

class ArrayData:
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

def untrack_acyclic(obj: object) -> None: ...
