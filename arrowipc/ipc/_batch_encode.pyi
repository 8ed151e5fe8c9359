from typing import Any, Callable
from .arraydata import ArrayData

PADDING: tuple[bytes, ...]

class FlatBatch:
    nodes: list[tuple[int, int]]
    buffers: list[Any]
    variadic_counts: list[int]

def flatten_columns(columns: list[ArrayData], num_rows: int) -> FlatBatch: ...
def layout_body(buffers: list[Any], alignment: int) -> tuple[list[tuple[int, int]], list[Any], int]: ...
def encode_message(header_type: int, version: int, body_length: int, header_writer: Callable[..., int],
                   custom_metadata: dict[bytes, bytes] | None = None, legacy: bool = False) -> bytes: ...
def encode_record_batch(columns: list[ArrayData], num_rows: int, alignment: int = 64, version: int = 4,
                        custom_metadata: dict[bytes, bytes] | None = None, codec: int = -1,
                        legacy: bool = False, compress: Callable[[list[Any]], list[Any]] | None = None,
                        flat: FlatBatch | None = None, compressed: list[Any] | None = None,
                        ) -> tuple[bytes, list[Any], int]: ...
def encode_dictionary_batch(dict_id: int, values: ArrayData, is_delta: bool, alignment: int = 64,
                            version: int = 4, codec: int = -1, legacy: bool = False,
                            compress: Callable[[list[Any]], list[Any]] | None = None,
                            ) -> tuple[bytes, list[Any], int]: ...
