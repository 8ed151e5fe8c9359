"""Stream and file writers (pyarrow.ipc.RecordBatchStreamWriter / RecordBatchFileWriter).

Each batch is flattened and its header encoded in Cython; the body goes out as a gather list:
appended by reference to an in-memory sink, sent with os.writev to real files, and packed with a
single copy only for file-likes that want one contiguous buffer.
"""
from __future__ import annotations

import os
import secrets
import stat
import struct

from .. import types as T
from .._core.batch_encode import encode_dictionary_batch, encode_record_batch
from ..errors import ArrowInvalid
from ..io import BufferOutputStream
from ..table import RecordBatch, Table, record_batch, table
from . import metadata as md
from .dictionary import DictionaryTracker, unify_table_dictionaries
from .message import EOS_MARKER
from .options import COMPRESSION_CODECS, IpcWriteOptions, MetadataVersion, WriteStats

_IOV_MAX = 1024
_LEGACY_EOS = b"\x00\x00\x00\x00"


class _Sink:
    """Adapts a path, a file-like object or a BufferOutputStream to gather writes.

    A path is written atomically: to a temporary file in the same directory, renamed over the
    final name only when the writer closes successfully, so a crash or an error never leaves a
    truncated file under that name. (Paths that are not regular files, such as /dev/stdout or a
    FIFO, are written in place.)
    """

    def __init__(self, sink):
        self.owns = False
        self.path = self.tmp_path = None
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
        target = os.path.realpath(path)
        try:
            st = os.stat(target)
        except FileNotFoundError:
            st = None
        if st is not None and not stat.S_ISREG(st.st_mode):
            return open(path, "wb")
        directory, name = os.path.split(target)
        tmp = os.path.join(directory, f".{name}.{secrets.token_hex(6)}.tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0), 0o666)
        if st is not None:
            os.chmod(tmp, stat.S_IMODE(st.st_mode))  # replacing a file keeps its permissions
        self.path, self.tmp_path = target, tmp
        return os.fdopen(fd, "wb")

    def close(self):
        if self.owns:
            if self.tmp_path is not None:
                try:
                    self.f.flush()
                    os.fsync(self.f.fileno())  # the data is on disk before the name points at it
                    self.f.close()
                    os.replace(self.tmp_path, self.path)
                except BaseException:
                    self.abort()
                    raise
                self.tmp_path = None
            else:
                self.f.close()
        elif hasattr(self.f, "flush") and not self._memory:
            try:
                self.f.flush()
            except (OSError, ValueError):
                pass

    def abort(self):
        """Give up a path write: the temporary file goes, the final name is left untouched."""
        if self.tmp_path is not None:
            tmp, self.tmp_path = self.tmp_path, None
            try:
                self.f.close()
            except (OSError, ValueError):
                pass
            try:
                os.unlink(tmp)
            except OSError:
                pass

    def __del__(self):
        # a writer dropped without close() never commits its file
        if getattr(self, "tmp_path", None) is not None:
            self.abort()


class _WriterBase:
    _file_mode = False

    def __init__(self, sink, schema, *, options: IpcWriteOptions | None = None, use_legacy_format=None,
                 metadata_version=None):
        self.options = options or IpcWriteOptions()
        if use_legacy_format is not None:
            self.options.use_legacy_format = bool(use_legacy_format)
        if metadata_version is not None:
            self.options.metadata_version = MetadataVersion(metadata_version)
        if not isinstance(schema, T.Schema):
            schema = T.schema(schema)
        self.schema = schema
        self._sink = _Sink(sink)
        self._closed = False
        self.stats = WriteStats()
        self._version = int(self.options.metadata_version)
        self._codec = COMPRESSION_CODECS[self.options.compression]
        self._compress = None
        if self._codec >= 0:
            from .compression import make_body_compressor
            self._compress = make_body_compressor(self.options)
        self._dict_ids = md.DictionaryIds()
        self._dicts = DictionaryTracker(schema, self.options, self._file_mode)
        self._start()
        self._write_schema()

    def _start(self):
        pass

    def _write_schema(self):
        # Schemas are immutable: the encoded message is cached on the Schema object.
        key = (self._version, self.options.use_legacy_format)
        cache = self.schema._ipc_cache
        if cache is None:
            cache = self.schema._ipc_cache = {}
        framed = cache.get(key)
        if framed is None:
            fb = md.encode_schema_message(self.schema, self._version, self._dict_ids)
            framed = cache[key] = _frame(fb, self.options.use_legacy_format)
        self._write_message_bytes(framed, [], 0)

    def _write_message_bytes(self, meta: bytes, parts: list, body_len: int):
        self._sink.write(meta)
        if body_len:
            self._sink.write_parts(parts, body_len)
        self.stats.num_messages += 1

    # -- public API -----------------------------------------------------------------------------
    def write_batch(self, batch, custom_metadata=None):
        if self._closed:
            raise ArrowInvalid("write to a closed writer")
        if not isinstance(batch, RecordBatch):
            batch = record_batch(batch)
        if batch.schema is not self.schema and not batch.schema.equals(self.schema):
            raise ArrowInvalid(f"batch schema does not match the writer's schema:\n{batch.schema}\n"
                               f"vs\n{self.schema}")
        md_bytes = T.normalize_metadata(custom_metadata)
        if self._dicts:
            self._write_dictionaries(batch)
        start = self._sink.pos
        meta, parts, body_len = encode_record_batch(
            batch._columns, batch.num_rows, self.options.alignment, self._version, md_bytes,
            self._codec, self.options.use_legacy_format, self._compress)
        self._write_message_bytes(meta, parts, body_len)
        self.stats.num_record_batches += 1
        self.stats.total_serialized_body_size += body_len
        self.stats.total_raw_body_size += (body_len if self._compress is None
                                           else self._compress.last_raw_size)
        self._after_batch(start, len(meta), body_len)

    def _after_batch(self, offset, meta_len, body_len):
        pass

    def _after_dictionary(self, offset, meta_len, body_len):
        pass

    def _write_dictionaries(self, batch):
        for dict_id, values, is_delta, kind in self._dicts.dictionaries_for(self.schema, batch._columns):
            start = self._sink.pos
            meta, parts, body_len = encode_dictionary_batch(
                dict_id, values, is_delta, self.options.alignment, self._version, self._codec,
                self.options.use_legacy_format, self._compress)
            self._write_message_bytes(meta, parts, body_len)
            self.stats.num_dictionary_batches += 1
            if kind == "delta":
                self.stats.num_dictionary_deltas += 1
            elif kind == "replace":
                self.stats.num_replaced_dictionaries += 1
            self._after_dictionary(start, len(meta), body_len)

    def write_table(self, table_, max_chunksize: int | None = None):
        if not isinstance(table_, Table):
            table_ = table(table_)
        if self.options.unify_dictionaries and self._dicts:
            table_ = unify_table_dictionaries(table_)
        for b in table_.to_batches(max_chunksize):
            self.write_batch(b)

    def write(self, table_or_batch):
        if isinstance(table_or_batch, RecordBatch):
            self.write_batch(table_or_batch)
        elif isinstance(table_or_batch, Table):
            self.write_table(table_or_batch)
        elif hasattr(table_or_batch, "__arrow_c_stream__"):
            self.write_table(table(table_or_batch))
        else:
            self.write_batch(record_batch(table_or_batch))

    def close(self):
        if self._closed:
            return
        self._finish()
        self._closed = True
        self._sink.close()

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb):
        if exc_type is not None and self._sink.tmp_path is not None:
            # an error inside the block: a path sink keeps its previous contents (or stays absent)
            self._closed = True
            self._sink.abort()
            return
        self.close()


def _frame(flatbuffer: bytes, legacy: bool) -> bytes:
    pad = (-len(flatbuffer) - (4 if legacy else 0)) % 8
    n = len(flatbuffer) + pad
    prefix = struct.pack("<i", n) if legacy else b"\xff\xff\xff\xff" + struct.pack("<i", n)
    return prefix + flatbuffer + bytes(pad)


class RecordBatchStreamWriter(_WriterBase):
    """Writes the IPC stream format: schema, batches, end-of-stream marker."""

    def __init__(self, sink, schema, *, use_legacy_format=None, options=None):
        super().__init__(sink, schema, options=options, use_legacy_format=use_legacy_format)

    def _finish(self):
        self._sink.write(_LEGACY_EOS if self.options.use_legacy_format else EOS_MARKER)


class RecordBatchFileWriter(_WriterBase):
    """Writes the IPC file format: magic, stream messages, footer, footer length, magic."""

    def __init__(self, sink, schema, *, use_legacy_format=None, options=None, metadata=None,
                 magic: bytes = b"ARROW1"):
        if magic not in (b"ARROW1", b"ALKAID1"):
            raise ValueError(f"file magic must be b'ARROW1' or b'ALKAID1', got {magic!r}")
        self._magic = magic
        # an explicitly empty mapping is written as an empty (present) metadata vector
        self._footer_metadata = T.normalize_metadata(metadata) if metadata else (
            {} if metadata is not None else None)
        self._batch_blocks = []
        self._dict_blocks = []
        super().__init__(sink, schema, options=options, use_legacy_format=use_legacy_format)

    def _start(self):
        head = self._magic + bytes((-len(self._magic)) % 8)
        self._sink.write(head)

    _file_mode = True

    def _after_batch(self, offset, meta_len, body_len):
        self._batch_blocks.append((offset, meta_len, body_len))

    def _after_dictionary(self, offset, meta_len, body_len):
        self._dict_blocks.append((offset, meta_len, body_len))

    def _finish(self):
        self._sink.write(_LEGACY_EOS if self.options.use_legacy_format else EOS_MARKER)
        footer = md.encode_footer(self.schema, self._dict_blocks, self._batch_blocks,
                                  self._footer_metadata, self._version, md.DictionaryIds())
        self._sink.write(footer)
        self._sink.write(struct.pack("<i", len(footer)) + self._magic)


def new_stream(sink, schema, *, use_legacy_format=None, options=None) -> RecordBatchStreamWriter:
    return RecordBatchStreamWriter(sink, schema, use_legacy_format=use_legacy_format, options=options)


def new_file(sink, schema, *, use_legacy_format=None, options=None, metadata=None,
             magic: bytes = b"ARROW1") -> RecordBatchFileWriter:
    return RecordBatchFileWriter(sink, schema, use_legacy_format=use_legacy_format,
                                 options=options, metadata=metadata, magic=magic)


def serialize_schema(schema: T.Schema, options: IpcWriteOptions | None = None):
    """The framed Schema message as a Buffer (pyarrow's Schema.serialize)."""
    from .._core.buffer import py_buffer
    options = options or IpcWriteOptions()
    fb = md.encode_schema_message(schema, int(options.metadata_version), md.DictionaryIds())
    return py_buffer(_frame(fb, options.use_legacy_format))


def serialize_record_batch(batch: RecordBatch, options: IpcWriteOptions | None = None):
    """The framed RecordBatch message (metadata and body) as one Buffer (RecordBatch.serialize)."""
    from .._core.buffer import concat_buffers
    options = options or IpcWriteOptions()
    codec = COMPRESSION_CODECS[options.compression]
    compress = None
    if codec >= 0:
        from .compression import make_body_compressor
        compress = make_body_compressor(options)
    meta, parts, body_len = encode_record_batch(batch._columns, batch.num_rows, options.alignment,
                                                int(options.metadata_version), None, codec,
                                                options.use_legacy_format, compress)
    return concat_buffers([meta] + parts, len(meta) + body_len)
