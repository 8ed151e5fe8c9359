"""arrowipc: the Apache Arrow columnar format and its IPC protocols, Cython-accelerated.

`import arrowipc` is cheap: numpy, flatbuffers and the codecs load only when a feature needs them.
"""
from .errors import (ArrowCapacityError, ArrowException, ArrowIndexError, ArrowInvalid,
                     ArrowIOError, ArrowKeyError, ArrowNotImplementedError, ArrowTypeError)
from .types import (DataType, Field, Schema, binary, binary_view, bool_, date32, date64,
                    day_time_interval, decimal32, decimal64, decimal128, decimal256, dense_union,
                    dictionary, double, duration, field, fixed_size_binary, fixed_size_list,
                    float16, float32, float64, float_, halffloat, int8, int16, int32, int64,
                    large_binary, large_list, large_list_view, large_string, large_utf8, list_,
                    list_view, map_, month_day_nano_interval, month_interval, null,
                    run_end_encoded, schema, sparse_union, string, string_view, struct, time32,
                    time64, timestamp, type_for_alias, uint8, uint16, uint32, uint64, union, utf8,
                    utf8_view)
from .types import KeyValueMetadata
from .types import (DecimalType, DictionaryType, DurationType, ExtensionType,
                    FixedSizeBinaryType, FixedSizeListType, LargeListType, ListType, MapType,
                    StructType, Time32Type, Time64Type, TimestampType, UnionType)
from ._core.buffer import Buffer, allocate_buffer, py_buffer
from .array import Array, ChunkedArray, array, chunked_array, nulls
from .table import RecordBatch, Table, TableGroupBy, concat_tables, record_batch, table
from .unify import unify_schemas
from .scalar import Scalar, scalar
from .io import BufferOutputStream, BufferReader, MemoryMappedFile, OSFile, memory_map
from .extension import register_extension_type, unregister_extension_type
from . import pandas_shim as _pandas

# The pandas methods (pyarrow's signatures, arrowipc/pandas_shim.py; the conversion loads on first
# use) are bound here: the shim sits above the objects and types, which do not import it.
Array.to_pandas = _pandas.array_to_pandas
Array.from_pandas = classmethod(_pandas.array_from_pandas)
ChunkedArray.to_pandas = _pandas.chunked_array_to_pandas
RecordBatch.to_pandas = _pandas.batch_to_pandas
RecordBatch.from_pandas = classmethod(_pandas.batch_from_pandas)
Table.to_pandas = _pandas.table_to_pandas
Table.from_pandas = classmethod(_pandas.table_from_pandas)
Schema.from_pandas = classmethod(_pandas.schema_from_pandas)       # type: ignore[assignment]
Schema.pandas_metadata = property(_pandas.schema_pandas_metadata)  # type: ignore[assignment]

from ._version import __version__ as __version__   # re-exported

__all__ = [
    "Array", "ArrowCapacityError", "ArrowException", "ArrowIndexError", "ArrowInvalid", "ArrowIOError",
    "KeyValueMetadata", "RecordBatchReader", "Tensor",
    "ArrowKeyError", "ArrowNotImplementedError", "ArrowTypeError", "Buffer",
    "BufferOutputStream", "BufferReader", "ChunkedArray", "DataType", "DecimalType",
    "DictionaryType", "DurationType", "ExtensionType", "Field", "FixedSizeBinaryType",
    "FixedSizeListType", "LargeListType", "ListType", "MapType", "MemoryMappedFile", "OSFile",
    "RecordBatch", "RecordBatchFileReader", "RecordBatchFileWriter", "RecordBatchStreamReader",
    "RecordBatchStreamWriter",
    "Schema",
    "StructType", "Table", "TableGroupBy", "Time32Type", "Time64Type", "TimestampType", "UnionType",
    "allocate_buffer", "array", "binary", "binary_view", "bool_", "chunked_array",
    "concat_tables", "date32", "date64", "day_time_interval", "decimal128", "decimal256",
    "decimal32", "decimal64", "dense_union", "dictionary", "double", "duration", "field",
    "fixed_size_binary", "fixed_size_list", "float16", "float32", "float64", "float_",
    "halffloat", "int16", "int32", "int64", "int8", "large_binary", "large_list",
    "large_list_view", "large_string", "large_utf8", "list_", "list_view", "map_", "memory_map",
    "month_day_nano_interval", "month_interval", "null", "nulls", "py_buffer", "record_batch",
    "register_extension_type", "run_end_encoded", "schema", "sparse_union", "string",
    "string_view", "struct", "table", "time32", "time64", "timestamp", "type_for_alias",
    "uint16", "uint32", "uint64", "uint8", "unify_schemas", "union", "unregister_extension_type",
    "utf8", "utf8_view",
]

# Classes whose modules load on first use: they sit above the model (readers, tensors) and
# `import arrowipc` stays light without them.
_LAZY_CLASSES = {"RecordBatchReader": ".batch_reader", "Tensor": ".tensor",
                 "RecordBatchFileReader": ".ipc", "RecordBatchStreamReader": ".ipc",
                 "RecordBatchFileWriter": ".ipc", "RecordBatchStreamWriter": ".ipc",
                 "SparseCOOTensor": ".tensor", "SparseCSRMatrix": ".tensor",
                 "SparseCSCMatrix": ".tensor", "SparseCSFTensor": ".tensor"}

TYPE_CHECKING = False               # typing itself is not imported at run time
if TYPE_CHECKING:
    # what the lazy __getattr__ below returns, spelled out for type checkers
    from . import dataset, dissociated, feather, integration, ipc, validate
    from .batch_reader import RecordBatchReader
    from .ipc import (RecordBatchFileReader, RecordBatchFileWriter, RecordBatchStreamReader,
                      RecordBatchStreamWriter)
    from .ipc.recover import recover
    from .tensor import Tensor
    _LAZY = (dataset, dissociated, feather, integration, ipc, recover, validate,
             RecordBatchReader, Tensor, RecordBatchFileReader, RecordBatchFileWriter,
             RecordBatchStreamReader, RecordBatchStreamWriter)
else:
    def __dir__() -> list[str]:
        return sorted(set(globals()) | set(_LAZY_CLASSES))

    def __getattr__(name: str) -> object:
        if name in _LAZY_CLASSES:
            import importlib
            return getattr(importlib.import_module(_LAZY_CLASSES[name], __name__), name)
        # Subpackages load on first use so plain `import arrowipc` stays light.
        if name in ("ipc", "dataset", "feather", "dissociated", "integration", "validate"):
            import importlib
            return importlib.import_module("." + name, __name__)
        if name == "recover":             # arrowipc.recover = arrowipc.ipc.recover
            import importlib
            return importlib.import_module(".ipc", __name__).recover
        raise AttributeError(f"module 'arrowipc' has no attribute {name!r}")
