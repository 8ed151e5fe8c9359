"""Arrow IPC streams and files, mirroring pyarrow.ipc."""
from .message import Message, MessageReader, read_message
from .options import IpcReadOptions, IpcWriteOptions, MetadataVersion, ReadStats, WriteStats
from .reader import (RecordBatchFileReader, RecordBatchStreamReader, RecordBatchWithMetadata,
                     open_file, open_stream, read_record_batch, read_schema)
from .writer import (RecordBatchFileWriter, RecordBatchStreamWriter, new_file, new_stream,
                     serialize_record_batch, serialize_schema)

__all__ = [
    "IpcReadOptions", "IpcWriteOptions", "Message", "MessageReader", "MetadataVersion",
    "ReadStats", "RecordBatchFileReader", "RecordBatchFileWriter", "RecordBatchStreamReader",
    "RecordBatchStreamWriter", "RecordBatchWithMetadata", "WriteStats", "new_file", "new_stream",
    "open_file", "open_stream", "read_message", "read_record_batch", "read_schema",
    "serialize_record_batch", "serialize_schema",
]
