"""One IPC message as a Buffer: Schema.serialize and RecordBatch.serialize (pyarrow's
ipc.serialize_schema-like helpers, re-exported by arrowipc.ipc.writer and arrowipc.ipc).

Only the encoders (ipc/metadata.py, the Cython ipc/_batch_encode), the options and the codecs:
no writer, no object module, so the objects can call down here without an import cycle
(tests/docs/test_layering.py).
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from . import metadata as md
from ._batch_encode import encode_record_batch, encode_schema_message
from .format import COMPRESSION_IDS
from .options import IpcWriteOptions, as_write_options

if TYPE_CHECKING:
    from .._core.buffer import Buffer
    from ..table import RecordBatch
    from ..types import Schema

__all__ = ["serialize_record_batch", "serialize_schema"]


def serialize_schema(schema: Schema, options: IpcWriteOptions | None = None) -> Buffer:
    """The framed Schema message as a Buffer (pyarrow's Schema.serialize)."""
    from .._core.buffer import py_buffer
    options = as_write_options(options)
    blob, pos = md.schema_blob(schema)
    return py_buffer(encode_schema_message(blob, pos, int(options.metadata_version),
                                           options.use_legacy_format,
                                           md.schema_blob_alignment(schema)))


def serialize_record_batch(batch: RecordBatch, options: IpcWriteOptions | None = None) -> Buffer:
    """The framed RecordBatch message (metadata and body) as one Buffer (RecordBatch.serialize)."""
    from .._core.buffer import concat_buffers
    options = as_write_options(options)
    codec = COMPRESSION_IDS[options.compression]
    compress = None
    if codec >= 0:
        from .compression import make_body_compressor
        compress = make_body_compressor(options)
    meta, parts, body_len = encode_record_batch(batch._columns, batch.num_rows, options.alignment,
                                                int(options.metadata_version), None, codec,
                                                options.use_legacy_format, compress)
    return concat_buffers([meta] + parts, len(meta) + body_len)
