"""Arrow IPC streams and files, mirroring pyarrow.ipc.

As in pyarrow, this is the public face: the classes live in the modules below, and the functions
that open readers are defined here, above both the readers and recovery (which builds on them).
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal, overload

from ..batch_reader import RecordBatchReader
from .message import Message, MessageReader, read_message
from .options import (Alignment, IpcReadOptions, IpcWriteOptions, MetadataVersion, ReadStats,
                      WriteStats)
from .pandas_serialization import deserialize_pandas, serialize_pandas
from .reader import (RecordBatchFileReader, RecordBatchStreamReader, RecordBatchWithMetadata,
                     read_record_batch, read_schema)
from .recover import RecoveredFileReader, RecoveryReport, open_file_recovering, recover
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
    "RecordBatchStreamWriter", "RecoveredFileReader", "RecoveryReport", "RecordBatchWithMetadata",
    "WriteStats", "new_file", "new_stream",
    "open_file", "open_stream", "read_message", "recover", "read_record_batch", "read_schema",
    "serialize_record_batch", "serialize_schema",
]

if TYPE_CHECKING:
    from .._typing import SourceLike


def open_stream(source: SourceLike, *, options: IpcReadOptions | None = None,
                memory_pool: object = None, filesystem: Any = None,
                memory_map: bool = False) -> RecordBatchStreamReader:
    """A RecordBatchStreamReader over bytes, a Buffer, a path, a URL (s3://, gs://, az://,
    http(s)://, file:// or any fsspec URL), a path on `filesystem` (an fsspec or pyarrow
    filesystem) or a file-like object.

    A local path is read into memory this process owns, as pyarrow reads it. memory_map=True
    (not in pyarrow.ipc; pyarrow.feather's keyword) maps it instead: zero-copy, but another
    process that truncates the file while it is mapped kills this one (SIGBUS), and one that
    rewrites it changes the data read (arrays exported through the C data interface are checked
    again first). Map only files nothing else writes while they are in use."""
    return RecordBatchStreamReader(source, options=options, filesystem=filesystem,
                                   memory_map=memory_map)


@overload
def open_file(source: SourceLike, footer_offset: int | None = None, *,
              options: IpcReadOptions | None = None, memory_pool: object = None,
              recover: Literal[False] = False, filesystem: Any = None,
              memory_map: bool = False) -> RecordBatchFileReader: ...


@overload
def open_file(source: SourceLike, footer_offset: int | None = None, *,
              options: IpcReadOptions | None = None, memory_pool: object = None,
              recover: bool, filesystem: Any = None, memory_map: bool = False
              ) -> RecordBatchFileReader | RecoveredFileReader: ...


def open_file(source: SourceLike, footer_offset: int | None = None, *,
              options: IpcReadOptions | None = None, memory_pool: object = None,
              recover: bool = False, filesystem: Any = None, memory_map: bool = False
              ) -> RecordBatchFileReader | RecoveredFileReader:
    """A RecordBatchFileReader over bytes, a Buffer, a path, a URL or a path on `filesystem`
    (see open_stream; only the byte ranges a read needs are fetched) or a seekable file-like
    object.

    A local path is read as pyarrow reads it, into memory this process owns: get_batch(i) and
    projected reads read only the byte ranges they need, a whole read reads the file at once.
    memory_map=True maps it instead, zero-copy, with the risk open_stream describes (a file
    truncated by another process while mapped kills this one with SIGBUS); recovery always
    reads the file into memory.

    With recover=True a file whose footer is missing or damaged is read as a stream instead
    (arrowipc.ipc.recover): the reader then holds every complete batch before the damage, and
    its `recovery` attribute says what was found.
    """
    if recover:
        return open_file_recovering(source, footer_offset, options, filesystem)
    return RecordBatchFileReader(source, footer_offset, options=options, filesystem=filesystem,
                                 memory_map=memory_map)
