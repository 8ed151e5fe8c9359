from typing import Any, Callable

from typing_extensions import disjoint_base

from arrowipc._core.arraydata import ArrayData

PADDING: tuple[bytes, ...]

@disjoint_base
class FlatBatch:
    nodes: list[tuple[int, int]]
    buffers: list[Any]
    variadic_counts: list[int]
    version: int
    def __init__(self, version: int = 4) -> None: ...

def ree_physical_slice(d: ArrayData, offset: int, length: int) -> tuple[ArrayData, ArrayData]: ...
def flatten_columns(columns: list[ArrayData], num_rows: int, version: int = 4) -> FlatBatch: ...
def layout_body(buffers: list[Any], alignment: int) -> tuple[list[tuple[int, int]], list[Any], int]: ...
def encode_record_batch(columns: list[ArrayData], num_rows: int, alignment: int = 64, version: int = 4,
                        custom_metadata: dict[bytes, bytes] | None = None, codec: int = -1,
                        legacy: bool = False, compress: Callable[[list[Any]], list[Any]] | None = None,
                        flat: FlatBatch | None = None, compressed: list[Any] | None = None,
                        spans_out: list[tuple[int, int]] | None = None,
                        ) -> tuple[bytes, list[Any], int]: ...
def encode_dictionary_batch(dict_id: int, values: ArrayData, is_delta: bool, alignment: int = 64,
                            version: int = 4, codec: int = -1, legacy: bool = False,
                            compress: Callable[[list[Any]], list[Any]] | None = None,
                            spans_out: list[tuple[int, int]] | None = None,
                            ) -> tuple[bytes, list[Any], int]: ...
def encode_schema_message(blob: bytes, table_pos: int, version: int = 4, legacy: bool = False,
                          blob_alignment: int = 8) -> bytes: ...
def encode_footer(blob: bytes, table_pos: int, dictionaries: list[Any], record_batches: list[Any],
                  metadata: dict[bytes, bytes] | None = None, version: int = 4,
                  blob_alignment: int = 8) -> bytes: ...
