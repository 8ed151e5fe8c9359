"""Types of the names arrowipc/_upcalls.py hands out once their providers registered them."""
from typing import Any

from .array import ChunkedArray as ChunkedArray
from .pandas_compat import (ToPandasOptions as ToPandasOptions,
                            chunked_to_series as chunked_to_series,
                            dataframe_to_arrays as dataframe_to_arrays,
                            dataframe_to_schema as dataframe_to_schema,
                            series_to_array as series_to_array,
                            table_to_dataframe as table_to_dataframe)
from .table import RecordBatch as RecordBatch, Table as Table, peer_as_ours as peer_as_ours

__all__ = ["PROVIDERS", "register"]

PROVIDERS: dict[str, str]


def register(module: str, **provided: Any) -> None: ...
