"""Stream and file writers (pyarrow.ipc.RecordBatchStreamWriter / RecordBatchFileWriter).

Each batch is flattened and its header encoded in Cython; the body goes out as a gather list:
appended by reference to an in-memory sink, sent with os.writev to real files, and packed with a
single copy only for file-likes that want one contiguous buffer.
"""
from __future__ import annotations

import copy
import os
import stat
import struct
from typing import TYPE_CHECKING, Any, NamedTuple

from .. import types as T
from ._batch_encode import (encode_dictionary_batch, encode_footer, encode_record_batch,
                                  encode_schema_message, flatten_columns)
from ..errors import ArrowInvalid
from ..io import BufferOutputStream
from ..table import RecordBatch, Table, record_batch, table
from . import metadata as md
from .dictionary import DictionaryTracker, unify_table_dictionaries
from .format import COMPRESSION_IDS, EOS_MARKER, FILE_MAGIC, FILE_MAGICS, LEGACY_EOS
from .options import IpcWriteOptions, MetadataVersion, WriteStats
from .sinks import AtomicFile

if TYPE_CHECKING:
    from typing_extensions import Self

    from .._core.buffer import Buffer
    from .._typing import SinkLike

__all__ = ["EncodedMessage", "MessageEncoder", "RecordBatchFileWriter", "RecordBatchStreamWriter",
           "new_file", "new_stream", "serialize_record_batch", "serialize_schema"]

_IOV_MAX = 1024


class _Sink:
    """Adapts a path, a file-like object or a BufferOutputStream to gather writes.

    A path is written atomically: to a temporary file in the same directory, renamed over the
    final name only when the writer closes successfully, so a crash or an error never leaves a
    truncated file under that name. (Paths that are not regular files, such as /dev/stdout or a
    FIFO, are written in place.)
    """

    def __init__(self, sink):
        self.owns = False
        self.atomic: AtomicFile | None = None     # a path's temporary file until close()
        if isinstance(sink, (str, os.PathLike)):
            sink = self._open_path(os.fspath(sink))
            self.owns = True
        if not hasattr(sink, "write"):
            raise TypeError(f"cannot write IPC data to a {type(sink).__name__}: expected a path, "
                            f"a file-like object or a BufferOutputStream")
        self.f = sink
        self.pos = 0
        self._memory = isinstance(sink, BufferOutputStream)
        self._fd = None
        if not self._memory:
            try:
                if hasattr(sink, "fileno") and not hasattr(sink, "getbuffer"):
                    fd = sink.fileno()
                    sink.flush()
                    self._fd = fd
            except (OSError, ValueError, AttributeError):
                self._fd = None
        if hasattr(sink, "tell"):
            try:
                self.pos = sink.tell()
            except (OSError, ValueError):
                self.pos = 0

    def write(self, data) -> None:
        if self._fd is not None:
            mv = memoryview(data)
            while mv.nbytes:
                n = os.write(self._fd, mv)
                mv = mv[n:]
        else:
            self.f.write(data)
        self.pos += len(data)

    def write_parts(self, parts: list, nbytes: int) -> None:
        if self._memory:
            self.f._extend(parts, nbytes)
        elif self._fd is not None:
            for i in range(0, len(parts), _IOV_MAX):
                chunk = parts[i:i + _IOV_MAX]
                want = sum(len(p) for p in chunk)
                done = os.writev(self._fd, chunk)
                if done != want:           # short write: finish the rest one by one
                    self._finish_short_write(chunk, done)
        else:
            self.f.write(b"".join(parts))
        self.pos += nbytes

    def _finish_short_write(self, chunk, done):
        for p in chunk:
            n = len(p)
            if done >= n:
                done -= n
                continue
            mv = memoryview(p)[done:]
            done = 0
            while mv.nbytes:
                k = os.write(self._fd, mv)
                mv = mv[k:]

    def _open_path(self, path: str):
        try:
            st = os.stat(os.path.realpath(path))
        except OSError:
            st = None
        if st is not None and not stat.S_ISREG(st.st_mode):
            return open(path, "wb")
        self.atomic = AtomicFile(path)
        return self.atomic.file

    def close(self):
        if self.owns:
            if self.atomic is not None:
                self.atomic.commit(durable=True)
            else:
                self.f.close()
        elif hasattr(self.f, "flush") and not self._memory:
            try:
                self.f.flush()
            except (OSError, ValueError):
                pass

    def abort(self):
        """Give up a path write: the temporary file goes, the final name is left untouched."""
        if self.atomic is not None:
            self.atomic.abort()


class EncodedMessage(NamedTuple):
    """One encoded message: framed metadata (prefix + flatbuffer padded to 8) and its body as a
    gather list of unpacked buffers and padding."""
    header_type: int               # md.HEADER_DICTIONARY_BATCH or md.HEADER_RECORD_BATCH
    metadata: bytes
    parts: list
    body_length: int
    dictionary_kind: str | None    # "new", "delta" or "replace" for dictionary batches


class MessageEncoder:
    """Schema, dictionaries and record batches -> encoded messages, without I/O.

    The stream and file writers write what it returns; the dissociated server sends the same
    messages with metadata and bodies on separate channels. Dictionary tracking (new, delta,
    replacement), compression and the write statistics live here, once for every consumer.
    """

    def __init__(self, schema, options: IpcWriteOptions | None = None, file_mode: bool = False):
        self.options = options or IpcWriteOptions()
        if not isinstance(schema, T.Schema):
            schema = T.schema(schema)
        self.schema = schema
        self.stats = WriteStats()
        self._version = int(self.options.metadata_version)
        self._codec = COMPRESSION_IDS[self.options.compression]
        self._compress = None
        # Compressed buffers are never viewed in place (frames are decompressed into fresh
        # aligned allocations), so their bodies use the format's 8-byte minimum alignment.
        self._body_alignment = self.options.alignment
        if self._codec >= 0:
            from .compression import make_body_compressor
            self._compress = make_body_compressor(self.options)
            self._body_alignment = 8
        self.dictionaries = DictionaryTracker(schema, self.options, file_mode)
        self._has_dicts = bool(self.dictionaries)

    @property
    def prefix_length(self) -> int:
        """Bytes of framing before the flatbuffer in `metadata` (4 for the legacy format)."""
        return 4 if self.options.use_legacy_format else 8

    def schema_message(self) -> bytes:
        blob, pos = md.schema_blob(self.schema)     # encoded once per Schema object
        self.stats.num_messages += 1
        return encode_schema_message(blob, pos, self._version, self.options.use_legacy_format)

    def batch_messages(self, batch, custom_metadata=None, _flat=None, _compressed=None) -> list:
        """[EncodedMessage]: the dictionary batches this batch needs, then the batch itself.

        _flat/_compressed: the batch already flattened and its buffers compressed (by a writer
        that compresses several batches in one parallel call)."""
        if not isinstance(batch, RecordBatch):
            batch = record_batch(batch)
        if batch.schema is not self.schema and not batch.schema.equals(self.schema):
            raise ArrowInvalid(f"batch schema does not match the writer's schema:\n{batch.schema}\n"
                               f"vs\n{self.schema}")
        md_bytes = T.normalize_metadata(custom_metadata) if custom_metadata is not None else None
        out = self._dictionary_messages(batch) if self._has_dicts else []
        stats = self.stats
        meta, parts, body_len = encode_record_batch(
            batch._columns, batch.num_rows, self._body_alignment, self._version, md_bytes,
            self._codec, self.options.use_legacy_format, self._compress, _flat, _compressed)
        stats.num_messages += 1
        stats.num_record_batches += 1
        stats.total_serialized_body_size += body_len
        if self._compress is None:
            stats.total_raw_body_size += body_len
        else:
            flat = _flat if _flat is not None else flatten_columns(batch._columns, batch.num_rows,
                                                                   self._version)
            stats.total_raw_body_size += sum(len(x) + (-len(x)) % 8
                                             for x in flat.buffers if x is not None)
        out.append(EncodedMessage(md.HEADER_RECORD_BATCH, meta, parts, body_len, None))
        return out

    def _dictionary_messages(self, batch) -> list:
        out = []
        stats, options = self.stats, self.options
        for dict_id, values, is_delta, kind in self.dictionaries.dictionaries_for(self.schema,
                                                                                  batch._columns):
            meta, parts, body_len = encode_dictionary_batch(
                dict_id, values, is_delta, self._body_alignment, self._version, self._codec,
                options.use_legacy_format, self._compress)
            stats.num_messages += 1
            stats.num_dictionary_batches += 1
            if kind == "delta":
                stats.num_dictionary_deltas += 1
            elif kind == "replace":
                stats.num_replaced_dictionaries += 1
            out.append(EncodedMessage(md.HEADER_DICTIONARY_BATCH, meta, parts, body_len, kind))
        return out


class _WriterBase:
    _file_mode = False

    def __init__(self, sink: SinkLike, schema: T.Schema, *, options: IpcWriteOptions | None = None,
                 use_legacy_format: bool | None = None,
                 metadata_version: MetadataVersion | int | None = None) -> None:
        options = options or IpcWriteOptions()
        if use_legacy_format is not None or metadata_version is not None:
            # the caller's options may serve other writers: override a copy, never the original
            options = copy.copy(options)
            if use_legacy_format is not None:
                options.use_legacy_format = bool(use_legacy_format)
            if metadata_version is not None:
                options.metadata_version = MetadataVersion(metadata_version)
        self.options = options
        self._encoder = enc = MessageEncoder(schema, self.options, self._file_mode)
        self.schema = enc.schema
        self.stats = enc.stats
        self._dicts = enc.dictionaries
        self._has_dicts = enc._has_dicts
        self._version = enc._version
        self._compress = enc._compress
        self._sink = _Sink(sink)
        self._closed = False
        self._start()
        self._write_message_bytes(enc.schema_message(), [], 0)

    def _start(self) -> None:
        pass

    def _write_message_bytes(self, meta: bytes, parts: list, body_len: int):
        sink = self._sink
        if sink._memory:                      # one append for metadata and body
            sink.f._extend([meta] + parts if body_len else [meta], len(meta) + body_len)
            sink.pos += len(meta) + body_len
        else:
            sink.write(meta)
            if body_len:
                sink.write_parts(parts, body_len)

    # -- public API -----------------------------------------------------------------------------
    def write_batch(self, batch: RecordBatch, custom_metadata: T.MetadataLike = None,
                    _flat: Any = None, _compressed: Any = None) -> None:
        """Write one record batch (and the dictionaries it needs), with optional custom metadata."""
        if self._closed:
            raise ArrowInvalid("write to a closed writer")
        for m in self._encoder.batch_messages(batch, custom_metadata, _flat, _compressed):
            start = self._sink.pos
            self._write_message_bytes(m.metadata, m.parts, m.body_length)
            if m.header_type == md.HEADER_RECORD_BATCH:
                self._after_batch(start, len(m.metadata), m.body_length)
            else:
                self._after_dictionary(start, len(m.metadata), m.body_length)

    def _after_batch(self, offset: int, meta_len: int, body_len: int) -> None:
        pass

    def _after_dictionary(self, offset: int, meta_len: int, body_len: int) -> None:
        pass

    def _finish(self) -> None:
        raise NotImplementedError

    def write_table(self, table_: Table | object, max_chunksize: int | None = None) -> None:
        """Write a Table (or any Arrow stream exporter) as batches of at most `max_chunksize` rows."""
        if not isinstance(table_, Table):
            table_ = table(table_)
        # as in pyarrow, only files unify (a stream can replace dictionaries instead)
        if self.options.unify_dictionaries and self._has_dicts and self._file_mode:
            table_ = unify_table_dictionaries(table_)
        batches = table_.to_batches(max_chunksize)
        if self._compress is not None and self.options.use_threads and len(batches) > 1:
            self._write_batches_compressed_together(batches)
            return
        for b in batches:
            self.write_batch(b)

    # Raw bytes of the batches whose buffers are compressed in one parallel call.
    _COMPRESS_WINDOW_BYTES = 256 << 20

    def _write_batches_compressed_together(self, batches):
        """Compress the buffers of several batches in one parallel call (threads stay busy
        across batch boundaries), then write the batches in order."""
        version = self._version
        i = 0
        while i < len(batches):
            window, flats, size = [], [], 0
            while i < len(batches) and (not window or size < self._COMPRESS_WINDOW_BYTES):
                b = batches[i]
                if b.schema is not self.schema and not b.schema.equals(self.schema):
                    raise ArrowInvalid(f"batch schema does not match the writer's schema:\n"
                                       f"{b.schema}\nvs\n{self.schema}")
                fb = flatten_columns(b._columns, b.num_rows, version)
                window.append(b)
                flats.append(fb)
                size += sum(len(x) for x in fb.buffers if x is not None)
                i += 1
            everything = [x for fb in flats for x in fb.buffers]
            packed = self._compress(everything)
            pos = 0
            for b, fb in zip(window, flats):
                n = len(fb.buffers)
                self.write_batch(b, None, fb, packed[pos:pos + n])
                pos += n

    def write(self, table_or_batch: RecordBatch | Table | object) -> None:
        """Write a RecordBatch, a Table, or anything arrowipc.table() or record_batch() takes."""
        if isinstance(table_or_batch, RecordBatch):
            self.write_batch(table_or_batch)
        elif isinstance(table_or_batch, Table):
            self.write_table(table_or_batch)
        elif hasattr(table_or_batch, "__arrow_c_stream__"):
            self.write_table(table(table_or_batch))
        else:
            self.write_batch(record_batch(table_or_batch))

    def close(self) -> None:
        """Finish the stream or file (end-of-stream marker, footer) and close a sink opened here."""
        if self._closed:
            return
        self._finish()
        self._closed = True
        self._sink.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: object) -> None:
        if exc_type is not None and self._sink.atomic is not None:
            # an error inside the block: a path sink keeps its previous contents (or stays absent)
            self._closed = True
            self._sink.abort()
            return
        self.close()


class RecordBatchStreamWriter(_WriterBase):
    """Writes the IPC stream format: schema, batches, end-of-stream marker."""

    def __init__(self, sink: SinkLike, schema: T.Schema, *, use_legacy_format: bool | None = None,
                 options: IpcWriteOptions | None = None) -> None:
        super().__init__(sink, schema, options=options, use_legacy_format=use_legacy_format)

    def _finish(self) -> None:
        self._sink.write(LEGACY_EOS if self.options.use_legacy_format else EOS_MARKER)


class RecordBatchFileWriter(_WriterBase):
    """Writes the IPC file format: magic, stream messages, footer, footer length, magic."""

    def __init__(self, sink: SinkLike, schema: T.Schema, *, use_legacy_format: bool | None = None,
                 options: IpcWriteOptions | None = None, metadata: T.MetadataLike = None,
                 magic: bytes = FILE_MAGIC) -> None:
        if magic not in FILE_MAGICS:
            raise ValueError(f"file magic must be b'ARROW1' or b'ALKAID1', got {magic!r}")
        self._magic = magic
        # an explicitly empty mapping is written as an empty (present) metadata vector
        self._footer_metadata = T.normalize_metadata(metadata) if metadata else (
            {} if metadata is not None else None)
        self._batch_blocks: list[tuple[int, int, int]] = []
        self._dict_blocks: list[tuple[int, int, int]] = []
        super().__init__(sink, schema, options=options, use_legacy_format=use_legacy_format)

    def _start(self) -> None:
        head = self._magic + bytes((-len(self._magic)) % 8)
        self._sink.write(head)

    _file_mode = True

    def _after_batch(self, offset: int, meta_len: int, body_len: int) -> None:
        self._batch_blocks.append((offset, meta_len, body_len))

    def _after_dictionary(self, offset: int, meta_len: int, body_len: int) -> None:
        self._dict_blocks.append((offset, meta_len, body_len))

    def _finish(self) -> None:
        self._sink.write(LEGACY_EOS if self.options.use_legacy_format else EOS_MARKER)
        blob, pos = md.schema_blob(self.schema)
        footer = encode_footer(blob, pos, self._dict_blocks, self._batch_blocks,
                               self._footer_metadata, self._version)
        self._sink.write(footer)
        self._sink.write(struct.pack("<i", len(footer)) + self._magic)


def new_stream(sink: SinkLike, schema: T.Schema, *, use_legacy_format: bool | None = None,
               options: IpcWriteOptions | None = None) -> RecordBatchStreamWriter:
    """A RecordBatchStreamWriter writing to `sink` (a path, a file-like or a BufferOutputStream)."""
    return RecordBatchStreamWriter(sink, schema, use_legacy_format=use_legacy_format, options=options)


def new_file(sink: SinkLike, schema: T.Schema, *, use_legacy_format: bool | None = None,
             options: IpcWriteOptions | None = None, metadata: T.MetadataLike = None,
             magic: bytes = FILE_MAGIC) -> RecordBatchFileWriter:
    """A RecordBatchFileWriter writing to `sink`; `metadata` goes in the footer."""
    return RecordBatchFileWriter(sink, schema, use_legacy_format=use_legacy_format,
                                 options=options, metadata=metadata, magic=magic)


def serialize_schema(schema: T.Schema, options: IpcWriteOptions | None = None) -> Buffer:
    """The framed Schema message as a Buffer (pyarrow's Schema.serialize)."""
    from .._core.buffer import py_buffer
    options = options or IpcWriteOptions()
    blob, pos = md.schema_blob(schema)
    return py_buffer(encode_schema_message(blob, pos, int(options.metadata_version),
                                           options.use_legacy_format))


def serialize_record_batch(batch: RecordBatch, options: IpcWriteOptions | None = None) -> Buffer:
    """The framed RecordBatch message (metadata and body) as one Buffer (RecordBatch.serialize)."""
    from .._core.buffer import concat_buffers
    options = options or IpcWriteOptions()
    codec = COMPRESSION_IDS[options.compression]
    compress = None
    if codec >= 0:
        from .compression import make_body_compressor
        compress = make_body_compressor(options)
    meta, parts, body_len = encode_record_batch(batch._columns, batch.num_rows, options.alignment,
                                                int(options.metadata_version), None, codec,
                                                options.use_legacy_format, compress)
    return concat_buffers([meta] + parts, len(meta) + body_len)
