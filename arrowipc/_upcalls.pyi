"""Types of the names arrowipc/_upcalls.py hands out once their providers registered them."""
from typing import Any

from .array import (Array as Array, ChunkedArray as ChunkedArray, array as array,
                    chunked_array as chunked_array, make_array as make_array)
from .batch_reader import RecordBatchReader as RecordBatchReader
from .from_python import array_data_from_python as array_data_from_python
from .ipc.writer import (serialize_record_batch as serialize_record_batch,
                         serialize_schema as serialize_schema)
from .pandas_compat import (ToPandasOptions as ToPandasOptions,
                            chunked_to_series as chunked_to_series,
                            dataframe_to_arrays as dataframe_to_arrays,
                            dataframe_to_schema as dataframe_to_schema,
                            series_to_array as series_to_array,
                            table_to_dataframe as table_to_dataframe)
from .scalar import Scalar as Scalar
from .table import RecordBatch as RecordBatch, Table as Table

__all__ = ["PROVIDERS", "register"]

PROVIDERS: dict[str, str]


def register(module: str, **provided: Any) -> None: ...
