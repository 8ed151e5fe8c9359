"""Arrow IPC streams and files, mirroring pyarrow.ipc."""
from ..batch_reader import RecordBatchReader
from .message import Message, MessageReader, read_message
from .options import (Alignment, IpcReadOptions, IpcWriteOptions, MetadataVersion, ReadStats,
                      WriteStats)
from .pandas_serialization import deserialize_pandas, serialize_pandas
from .reader import (RecordBatchFileReader, RecordBatchStreamReader, RecordBatchWithMetadata,
                     open_file, open_stream, read_record_batch, read_schema)
from .recover import RecoveredFileReader, RecoveryReport, recover
from .tensor_io import get_tensor_size, read_tensor, write_tensor
from .stream_decoder import (AsyncRecordBatchStreamReader, StreamDecoder, iter_stream_chunks,
                             open_stream_async)
from .writer import (RecordBatchFileWriter, RecordBatchStreamWriter, get_record_batch_size,
                     new_file, new_stream, serialize_record_batch, serialize_schema)

__all__ = [
    "Alignment", "RecordBatchReader", "deserialize_pandas", "get_record_batch_size",
    "serialize_pandas", "get_tensor_size", "read_tensor", "write_tensor",
    "AsyncRecordBatchStreamReader", "StreamDecoder", "iter_stream_chunks", "open_stream_async",
    "IpcReadOptions", "IpcWriteOptions", "Message", "MessageReader", "MetadataVersion",
    "ReadStats", "RecordBatchFileReader", "RecordBatchFileWriter", "RecordBatchStreamReader",
    "RecordBatchStreamWriter", "RecoveredFileReader", "RecoveryReport", "RecordBatchWithMetadata", "WriteStats", "new_file", "new_stream",
    "open_file", "open_stream", "read_message", "recover", "read_record_batch", "read_schema",
    "serialize_record_batch", "serialize_schema",
]
