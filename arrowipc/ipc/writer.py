"""Stream and file writers (pyarrow.ipc.RecordBatchStreamWriter / RecordBatchFileWriter).

Each batch is flattened and its header encoded in Cython; the body goes out as a gather list:
appended by reference to an in-memory sink, sent with os.writev to real files (metadata and body
in one call), and packed with a single copy only for file-likes that want one contiguous buffer.

Large messages to a file descriptor are written by a background thread, one write in flight per
sink, so the next batch is flattened and compressed (GIL released) while the kernel copies the
previous one: compress n+1 while writing n. A write in flight may outlive `write_batch` only when
every byte it sends is the writer's own (compressed frames, headers, padding). Buffers stored raw
are the caller's memory: to a file writer's temporary file, they are written at their offsets
(pwritev) before `write_batch` returns and the rest goes to the background, so typical batches,
some columns compressible and some not, overlap without a copy; to other file descriptors
(a stream's path among them, written in order so a reader following it never meets a hole), raw
buffers under half a message are copied, and otherwise `write_batch` waits for the write, as
pyarrow's synchronous write does. Errors of a background write surface at the next write or at
close.
"""
from __future__ import annotations

import os
import stat
import struct
import warnings
from typing import TYPE_CHECKING, Any, BinaryIO, NamedTuple

from .. import types as T
from ._batch_encode import (encode_dictionary_batch, encode_footer, encode_record_batch,
                                  encode_schema_message, flatten_columns)
from ..errors import ArrowInvalid
from ..io import BufferOutputStream
from ..table import RecordBatch, Table, record_batch
from ..table import table as _table
from . import metadata as md
from .dictionary import DictionaryTracker, unify_table_dictionaries
from .format import COMPRESSION_IDS, EOS_MARKER, FILE_MAGIC, FILE_MAGICS, LEGACY_EOS
from .filesystems import is_url, open_output
from .options import IpcWriteOptions, MetadataVersion, WriteCounters, WriteStats, as_write_options
from .remote import BATCH_HEADERS_LIMIT, HEADERS_KEY, encode_batch_headers
from .serialize import serialize_record_batch, serialize_schema
from .sinks import AtomicFile, fsync_directory, open_fresh

if TYPE_CHECKING:
    from concurrent.futures import Future, ThreadPoolExecutor

    from typing_extensions import Self

    from .._core.buffer import Buffer
    from .._typing import SinkLike
    from ._batch_encode import FlatBatch
    from .compression import BodyCompressorLike

__all__ = ["EncodedMessage", "MessageEncoder", "RecordBatchFileWriter", "RecordBatchStreamWriter",
           "new_file", "new_stream", "serialize_record_batch", "serialize_schema"]

_IOV_MAX = 1024
# A file object other than ours gets a body's parts joined into one write below this size or
# while parts average under _JOIN_MAX_PART bytes (calls cost more than the copy); above, each
# part is written as it is, so the body is copied once, by the sink.
_JOIN_MAX_BYTES = 1 << 16
_JOIN_MAX_PART = 4096
# write_message_split writes a message in order at once when the codec left more runs than this
# raw and its own bytes (prefixes, compressed buffers) are fewer than this
_SPLIT_MAX_RAW_RUNS = 16
_SPLIT_MIN_OWN_BYTES = 4 << 20
# Messages from this size on go to a file descriptor in the background (below it the thread
# hand-off costs more than the overlap saves).
_BACKGROUND_MIN_BYTES = 1 << 20
_background: ThreadPoolExecutor | None = None


def _background_pool() -> ThreadPoolExecutor:
    global _background
    if _background is None:
        from concurrent.futures import ThreadPoolExecutor
        _background = ThreadPoolExecutor(max_workers=4, thread_name_prefix="arrowipc-write")
    return _background


def _forget_background_pool() -> None:
    # a forked child has none of the parent's threads: a pool that believes it has idle workers
    # would queue writes nobody runs
    global _background
    _background = None


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_background_pool)


def _detach_raw(parts: list[Any], body_len: int) -> list[Any] | None:
    """The parts with every buffer stored raw (the caller's memory) copied, so that their write
    may outlive write_batch; None when raw bytes are over half the body (copying them would cost
    about what overlapping the write saves: the write then happens before write_batch returns)."""
    from .compression import RAW_PREFIX
    from .._core.buffer import concat_buffers
    raw = [i + 1 for i, p in enumerate(parts) if p is RAW_PREFIX]
    if 2 * sum(len(parts[i]) for i in raw) > body_len:
        return None
    out = list(parts)
    for i in raw:
        out[i] = concat_buffers([parts[i]], len(parts[i]))
    return out


def _writer_owns(parts: list[Any]) -> bool:
    """Every part is the writer's own bytes: compressed frames, prefixes, padding, headers (a
    buffer stored raw follows the raw-marker prefix and is the caller's memory)."""
    from .compression import RAW_PREFIX
    for p in parts:
        if p is RAW_PREFIX:
            return False
    return True


class _Sink:
    """Adapts a path, a file-like object or a BufferOutputStream to gather writes.

    A path is written atomically by default: to a temporary file in the same directory, renamed
    over the final name only when the writer closes successfully, so a crash or an error never
    leaves a truncated file under that name. With `in_place` (the stream writers, as pyarrow's) it
    is written through under its own name, so a reader in another process can follow the stream
    as it grows; paths that are not regular files (/dev/stdout, a FIFO) are always written in
    place. With `durable`, the file and its directory are fsynced at close, so the new contents
    also survive a power loss; like pyarrow, the default does not wait for the disk.
    """

    def __init__(self, sink: SinkLike, durable: bool = False, filesystem: Any = None,
                 in_place: bool = False) -> None:
        self.owns = False
        self.durable = bool(durable)
        self.in_place_path: str | None = None     # a path written through under its own name
        # ... to a new file renamed there at open (open_fresh): the directory of that rename
        self.fresh_directory: str | None = None
        self.atomic: AtomicFile | None = None     # a path's temporary file until close()
        # a URL or a path on `filesystem`: an upload published only on close (filesystems.py)
        remote: Any = (open_output(sink, filesystem) if isinstance(sink, (str, os.PathLike))
                       else None)
        if remote is not None:
            self.atomic = remote
            sink = remote.file
            self.owns = True
        elif isinstance(sink, (str, os.PathLike)):
            sink = self._open_path(os.fspath(sink), in_place)
            self.owns = True
        if not hasattr(sink, "write"):
            raise TypeError(f"cannot write IPC data to a {type(sink).__name__}: expected a path, "
                            f"a file-like object or a BufferOutputStream")
        file: Any = sink                          # duck-typed: write(), maybe fileno/flush/tell
        self.f = file
        self.pos = 0
        self._memory = isinstance(file, BufferOutputStream)
        self._fd: int | None = None
        self._pending: Future[None] | None = None   # the background write in flight, if any
        self.background = True                    # False: every write in the calling thread
        # a regular file of our own (a path's temporary file): parts can go to their offsets
        self.positional = isinstance(self.atomic, AtomicFile) and hasattr(os, "pwritev")
        if not self._memory:
            try:
                if hasattr(file, "fileno") and not hasattr(file, "getbuffer"):
                    fd = file.fileno()
                    file.flush()
                    self._fd = fd
            except (OSError, ValueError, AttributeError):
                self._fd = None
        if hasattr(file, "tell"):
            try:
                self.pos = file.tell()
            except (OSError, ValueError):
                self.pos = 0

    def write(self, data: bytes) -> None:
        self.wait()
        if self._fd is not None:
            mv = memoryview(data)
            while mv.nbytes:
                n = os.write(self._fd, mv)
                mv = mv[n:]
        else:
            self.f.write(data)
        self.pos += len(data)

    def write_message(self, meta: bytes, parts: list[Any], body_len: int) -> None:
        """Framed metadata then the body's gather list; large messages to a file descriptor go
        out in the background (after the previous one: one write in flight)."""
        self.wait()
        nbytes = len(meta) + body_len
        if self._memory:                      # one append for metadata and body
            self.f._extend([meta] + parts if body_len else [meta], nbytes)
        elif self._fd is not None:
            chunk = [meta] + parts if body_len else [meta]
            if nbytes >= _BACKGROUND_MIN_BYTES and self.background:
                self._pending = _background_pool().submit(self._writev_all, chunk, nbytes)
            else:
                self._writev_all(chunk, nbytes)
        else:
            self.f.write(meta)
            if body_len >= _JOIN_MAX_BYTES and len(parts) <= body_len // _JOIN_MAX_PART:
                for part in parts:              # large parts: one copy, into the sink
                    self.f.write(part)
            elif body_len:
                self.f.write(b"".join(parts))   # many small parts: one call
        self.pos += nbytes

    def write_message_split(self, meta: bytes, parts: list[Any], body_len: int) -> None:
        """A message whose body holds buffers stored raw (the caller's memory), to a regular
        file: those buffers are written now, at their offsets, and everything else (the writer's
        own bytes) in the background. Nothing of the caller's is in flight when this returns,
        and nothing is copied to make it so."""
        from .compression import RAW_PREFIX
        assert self._fd is not None                 # only for a path's file (see the caller)
        self.wait()
        start = self.pos
        pos = start + len(meta)
        own: list[tuple[int, list[Any]]] = [(start, [meta])]       # runs of (offset, parts)
        raw: list[tuple[int, list[Any]]] = []
        own_end, raw_end = pos, -1                           # where each last run ends
        own_bytes = 0
        after_prefix = False
        for p in parts:
            n = len(p)
            if after_prefix:                                 # follows a -1 prefix: raw
                if raw_end == pos:
                    raw[-1][1].append(p)
                else:
                    raw.append((pos, [p]))
                raw_end = pos + n
            else:
                if own_end == pos:
                    own[-1][1].append(p)
                else:
                    own.append((pos, [p]))
                own_end = pos + n
                own_bytes += n
            after_prefix = p is RAW_PREFIX
            pos += n
        self.pos = pos
        os.lseek(self._fd, pos, os.SEEK_SET)        # where the next plain write starts
        if len(raw) > _SPLIT_MAX_RAW_RUNS and own_bytes < _SPLIT_MIN_OWN_BYTES:
            # many buffers the codec left raw between prefixes of our own (incompressible
            # columns): a system call per run costs more than the background write saves,
            # so the whole message goes now, in order, IOV_MAX parts a call
            self._pwritev_all(start, [meta, *parts])
            return
        for at, chunk in raw:
            self._pwritev_all(at, chunk)
        self._pending = _background_pool().submit(self._pwrite_runs, own)

    def _pwrite_runs(self, runs: list[tuple[int, list[Any]]]) -> None:
        for at, chunk in runs:
            self._pwritev_all(at, chunk)

    def _pwritev_all(self, at: int, parts: list[Any]) -> None:
        assert self._fd is not None
        for i in range(0, len(parts), _IOV_MAX):
            chunk = parts[i:i + _IOV_MAX]
            want = sum(len(p) for p in chunk)
            done = os.pwritev(self._fd, chunk, at)
            if done != want:           # short write: finish the rest one by one
                self._finish_short_pwrite(chunk, done, at)
            at += want

    def _finish_short_pwrite(self, chunk: list[Any], done: int, at: int) -> None:
        assert self._fd is not None
        for p in chunk:
            n = len(p)
            if done >= n:
                done -= n
                at += n
                continue
            mv = memoryview(p)[done:]
            at += done
            done = 0
            while mv.nbytes:
                k = os.pwrite(self._fd, mv, at)
                mv = mv[k:]
                at += k

    def wait(self) -> None:
        """Let the write in flight finish; its OSError is raised here."""
        if self._pending is not None:
            pending, self._pending = self._pending, None
            pending.result()

    def abort_pending(self) -> None:
        """Let the write in flight finish, ignoring its error (another one is on its way)."""
        try:
            self.wait()
        except OSError:
            pass

    def _writev_all(self, parts: list[Any], nbytes: int) -> None:
        """Write `parts` (`nbytes` in all) to the file descriptor, in writev calls of at most
        _IOV_MAX parts."""
        assert self._fd is not None           # only sinks with a file descriptor writev
        if len(parts) <= _IOV_MAX:            # the usual message: one call, its size known
            done = os.writev(self._fd, parts)
            if done != nbytes:
                self._finish_short_write(parts, done)
            return
        for i in range(0, len(parts), _IOV_MAX):
            chunk = parts[i:i + _IOV_MAX]
            want = sum(len(p) for p in chunk)
            done = os.writev(self._fd, chunk)
            if done != want:           # short write: finish the rest one by one
                self._finish_short_write(chunk, done)

    def _finish_short_write(self, chunk: list[Any], done: int) -> None:
        assert self._fd is not None
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

    def _open_path(self, path: str, in_place: bool) -> BinaryIO:
        try:
            st = os.stat(os.path.realpath(path))
        except OSError:
            st = None
        if st is not None and not stat.S_ISREG(st.st_mode):
            self.in_place_path = path
            return open(path, "wb")
        if in_place:
            self.in_place_path = path
            file = open_fresh(path)
            self.fresh_directory = os.path.dirname(os.path.realpath(path))
            return file
        self.atomic = AtomicFile(path)
        return self.atomic.file

    def close(self) -> None:
        try:
            self.wait()
        except BaseException:
            self.abort()
            raise
        if self.owns:
            if self.atomic is not None:
                self.atomic.commit(durable=self.durable)
            else:
                durable = self.durable and self.fresh_directory is not None
                if durable:
                    self.f.flush()
                    os.fsync(self.f.fileno())
                self.f.close()
                if durable and self.fresh_directory is not None:   # the rename done at open
                    fsync_directory(self.fresh_directory)
        elif hasattr(self.f, "flush") and not self._memory:
            try:
                self.f.flush()
            except (OSError, ValueError):
                pass

    def abort(self) -> None:
        """Give up a path write: the temporary file goes, the final name is left untouched."""
        self.abort_pending()                   # the error that made us give up matters more
        if self.atomic is not None:
            self.atomic.abort()


class EncodedMessage(NamedTuple):
    """One encoded message: framed metadata (prefix + flatbuffer padded to 8) and its body as a
    gather list of unpacked buffers and padding."""
    header_type: int               # md.HEADER_DICTIONARY_BATCH or md.HEADER_RECORD_BATCH
    metadata: bytes
    parts: list[Any]
    body_length: int
    dictionary_kind: str | None    # "new", "delta" or "replace" for dictionary batches
    # [(offset, length)] of the body buffers, as the header lists them (a sender that places
    # buffers itself, like the dissociated server, needs them without decoding the header)
    spans: list[tuple[int, int]] | None = None


class MessageEncoder:
    """Schema, dictionaries and record batches -> encoded messages, without I/O.

    The stream and file writers write what it returns; the dissociated server sends the same
    messages with metadata and bodies on separate channels. Dictionary tracking (new, delta,
    replacement), compression and the write statistics live here, once for every consumer.
    """

    def __init__(self, schema: T.Schema | Any, options: IpcWriteOptions | None = None,
                 file_mode: bool = False, spans: bool = True) -> None:
        self.options = as_write_options(options)
        self._spans = spans        # EncodedMessage.spans wanted (the writers do without)
        if not isinstance(schema, T.Schema):
            schema = T.schema(schema)
        self.schema = schema
        self._schema_matched: T.Schema | None = None   # the last other Schema found equal
        self.stats = WriteCounters()
        self._version = int(self.options.metadata_version)
        self._codec = COMPRESSION_IDS[self.options.compression]
        self._compress: BodyCompressorLike | None = None
        # Compressed buffers are never viewed in place (frames are decompressed into fresh
        # aligned allocations), so their bodies use the format's 8-byte minimum alignment.
        self._body_alignment = self.options.alignment
        if self._codec >= 0:
            from .compression import make_body_compressor
            self._compress = make_body_compressor(self.options)
            self._body_alignment = 8
        self.dictionaries = DictionaryTracker(schema, self.options, file_mode)
        self._has_dicts = bool(self.dictionaries)
        self._legacy = self.options.use_legacy_format     # the options are this encoder's copy
        # a batch is its one message, encoded as it is (plain_batch)
        self._plain = not self._has_dicts and self._compress is None and not spans

    @property
    def prefix_length(self) -> int:
        """Bytes of framing before the flatbuffer in `metadata` (4 for the legacy format)."""
        return 4 if self._legacy else 8

    def schema_message(self) -> bytes:
        """The framed Schema message (the first message of a stream or file), counted in the
        statistics."""
        blob, pos = md.schema_blob(self.schema)     # encoded once per Schema object
        self.stats.num_messages += 1
        return encode_schema_message(blob, pos, self._version, self._legacy,
                                     md.schema_blob_alignment(self.schema))

    def batch_messages(self, batch: RecordBatch | Any, custom_metadata: T.MetadataLike = None,
                       _flat: FlatBatch | None = None, _compressed: Any = None
                       ) -> list[EncodedMessage]:
        """[EncodedMessage]: the dictionary batches this batch needs, then the batch itself.

        _flat/_compressed: the batch already flattened and its buffers compressed (by a writer
        that compresses several batches in one parallel call: a PackedBody, or the list the
        Python codecs give)."""
        if not isinstance(batch, RecordBatch):
            batch = record_batch(batch)
        schema = batch.schema
        if schema is not self.schema and schema is not self._schema_matched:
            if not schema.equals(self.schema):
                raise ArrowInvalid(f"batch schema does not match the writer's schema:\n{schema}\n"
                                   f"vs\n{self.schema}")
            self._schema_matched = schema       # schemas are immutable: one check per object
        md_bytes = T.normalize_metadata(custom_metadata) if custom_metadata is not None else None
        out = self._dictionary_messages(batch) if self._has_dicts else []
        if self._compress is not None and _flat is None:
            # flattened once here: the raw size below and the encoder read the same FlatBatch
            _flat = flatten_columns(batch._columns, batch.num_rows, self._version)
        spans: list[tuple[int, int]] | None = [] if self._spans else None
        meta, parts, body_len = encode_record_batch(
            batch._columns, batch.num_rows, self._body_alignment, self._version, md_bytes,
            self._codec, self._legacy, self._compress, _flat, _compressed, spans)
        if self._compress is None:
            self._count_batch(body_len, body_len)
        else:
            assert _flat is not None           # flattened above when compressing
            self._count_batch(body_len, _flat.raw_body_size())
        out.append(EncodedMessage(md.HEADER_RECORD_BATCH, meta, parts, body_len, None, spans))
        return out

    def plain_batch(self, batch: RecordBatch | Any) -> tuple[bytes, list[Any], int] | None:
        """(metadata, body parts, body length) of `batch`'s message, encoded and counted, when
        the batch is that one message as it is: a RecordBatch of the writer's schema (the same
        Schema object as last time), no dictionaries, no compression, no spans wanted; None
        otherwise (batch_messages then). The per-batch path of a writer of small batches."""
        if not self._plain or type(batch) is not RecordBatch:
            return None
        schema = batch.schema
        if schema is not self.schema and schema is not self._schema_matched:
            return None
        meta, parts, body_len = encode_record_batch(
            batch._columns, batch.num_rows, self._body_alignment, self._version, None,
            self._codec, self._legacy, None, None, None, None)
        self._count_batch(body_len, body_len)
        return meta, parts, body_len

    def _count_batch(self, body_len: int, raw_len: int) -> None:
        stats = self.stats
        stats.num_messages += 1
        stats.num_record_batches += 1
        stats.total_serialized_body_size += body_len
        stats.total_raw_body_size += raw_len

    def _dictionary_messages(self, batch: RecordBatch) -> list[EncodedMessage]:
        out: list[EncodedMessage] = []
        stats, options = self.stats, self.options
        for dict_id, values, is_delta, kind in self.dictionaries.dictionaries_for(self.schema,
                                                                                  batch._columns):
            spans: list[tuple[int, int]] | None = [] if self._spans else None
            meta, parts, body_len = encode_dictionary_batch(
                dict_id, values, is_delta, self._body_alignment, self._version, self._codec,
                self._legacy, self._compress, spans)
            stats.num_messages += 1
            stats.num_dictionary_batches += 1
            if kind == "delta":
                stats.num_dictionary_deltas += 1
            elif kind == "replace":
                stats.num_replaced_dictionaries += 1
            out.append(EncodedMessage(md.HEADER_DICTIONARY_BATCH, meta, parts, body_len, kind,
                                      spans))
        return out


class _WriterBase:
    _file_mode = False
    _paths_in_place = False      # the stream writers write a path through, as pyarrow's do

    def __init__(self, sink: SinkLike, schema: T.Schema, *, options: IpcWriteOptions | None = None,
                 use_legacy_format: bool | None = None,
                 metadata_version: MetadataVersion | int | None = None, durable: bool = False,
                 filesystem: Any = None) -> None:
        # always a copy: use_legacy_format= and metadata_version= apply to this writer only, and
        # the caller's options object may serve other writers
        self.options = as_write_options(options, use_legacy_format)
        if metadata_version is not None:
            self.options.metadata_version = MetadataVersion(metadata_version)
        self._encoder = enc = MessageEncoder(schema, self.options, self._file_mode, spans=False)
        self.schema = enc.schema
        self._counters = enc.stats
        self._dicts = enc.dictionaries
        self._has_dicts = enc._has_dicts
        self._version = enc._version
        self._compress = enc._compress
        if durable and (not isinstance(sink, (str, os.PathLike)) or filesystem is not None
                        or (is_url(sink) and not sink.lower().startswith("file://"))):
            raise ValueError("durable=True needs a path sink (a local one: a file object's owner "
                             "decides when to fsync it, and an object store's upload is durable "
                             "when it completes)")
        self._closed = True      # until the schema is out: a failed start is not finished later
        self._sink = _Sink(sink, durable, filesystem, self._paths_in_place)
        self._sink.background = self.options.use_threads
        self._start()
        self._write_message_bytes(enc.schema_message(), [], 0)
        self._closed = False

    def _start(self) -> None:
        pass

    @property
    def stats(self) -> WriteStats:
        """What has been written so far (a snapshot)."""
        return self._counters.snapshot()

    @property
    def body_sizes(self) -> tuple[int, int]:
        """(raw, serialized) bytes of the record batch bodies written: before and after
        compression."""
        return (self._counters.total_raw_body_size, self._counters.total_serialized_body_size)

    @property
    def _use_legacy_format(self) -> bool:
        return self.options.use_legacy_format

    @property
    def _metadata_version(self) -> MetadataVersion:
        return self.options.metadata_version

    def _write_message_bytes(self, meta: bytes, parts: list[Any], body_len: int) -> None:
        self._sink.write_message(meta, parts, body_len)

    _statistics = False

    def _write_messages(self, batch: RecordBatch | Any, custom_metadata: T.MetadataLike = None,
                        _flat: FlatBatch | None = None, _compressed: Any = None
                        ) -> bool:
        """Write the batch's messages (the last may still be in flight); True unless a write
        in flight may send the caller's bytes (only a sink that writes in the background
        detaches them, so elsewhere the answer does not matter)."""
        if self._closed:
            raise ArrowInvalid("write to a closed writer")
        if self._statistics:
            from .statistics import batch_statistics, statistics_metadata
            if _flat is None:
                batch = record_batch(batch)
            stats = batch_statistics(batch)
            custom_metadata = statistics_metadata(batch, custom_metadata, stats)
        sink = self._sink
        owned = self._compress is not None
        # a path written in the background: buffers stored raw are copied when they are a small
        # part of the message, so the write of this batch overlaps compressing the next one
        detach = owned and sink.owns and sink.background and sink._fd is not None
        for m in self._encoder.batch_messages(batch, custom_metadata, _flat, _compressed):
            start = sink.pos
            parts: list[Any] | None
            parts = m.parts
            big = detach and len(m.metadata) + m.body_length >= _BACKGROUND_MIN_BYTES
            # whether every part is the writer's own matters only to a write in the background
            mine = detach and _writer_owns(parts)
            if detach and big and sink.positional and not mine:
                sink.write_message_split(m.metadata, parts, m.body_length)
            else:
                if detach and not mine:
                    parts = _detach_raw(parts, m.body_length) if big else None
                    if parts is None:
                        owned, parts = False, m.parts
                self._write_message_bytes(m.metadata, parts, m.body_length)
            if m.header_type == md.HEADER_RECORD_BATCH:
                self._after_batch(start, m.metadata, m.body_length)
            else:
                self._after_dictionary(start, len(m.metadata), m.body_length)
        if self._statistics:
            self._after_statistics(stats)          # once the batch is in the file
        return owned

    # -- public API -----------------------------------------------------------------------------
    def write_batch(self, batch: RecordBatch, custom_metadata: T.MetadataLike = None,
                    _flat: Any = None, _compressed: Any = None) -> None:
        """Write one record batch (and the dictionaries it needs), with optional custom metadata."""
        sink = self._sink
        try:
            plain = None if custom_metadata is not None or _flat is not None or self._closed \
                or self._statistics else self._encoder.plain_batch(batch)
            if plain is not None:       # the batch is its one message: written straight out
                start = sink.pos
                self._write_message_bytes(*plain)
                sink.wait()             # the caller's buffers are theirs again once we return
                self._after_batch(start, plain[0], plain[2])
                return
            owned = self._write_messages(batch, custom_metadata, _flat, _compressed)
        except BaseException:
            sink.abort_pending()
            raise
        if not owned or not sink.owns:
            # the caller's buffers (or file) are theirs again once we return
            sink.wait()

    def _finish(self) -> None:
        raise NotImplementedError

    def _after_batch(self, offset: int, metadata: bytes, body_len: int) -> None:
        pass

    def _after_statistics(self, stats: dict[str, Any]) -> None:
        pass

    def _after_dictionary(self, offset: int, meta_len: int, body_len: int) -> None:
        pass

    def write_table(self, table: Table | object, max_chunksize: int | None = None) -> None:
        """Write a Table (or any Arrow stream exporter) as batches of at most `max_chunksize` rows."""
        tbl = table if isinstance(table, Table) else _table(table)
        # as in pyarrow, only files unify (a stream can replace dictionaries instead)
        if self.options.unify_dictionaries and self._has_dicts and self._file_mode:
            tbl = unify_table_dictionaries(tbl)
        # pyarrow's writers take a chunk size of 0 or less as "no limit"
        batches = tbl.to_batches(max_chunksize if max_chunksize and max_chunksize > 0 else None)
        if self._compress is not None and self.options.use_threads and len(batches) > 1:
            try:
                self._write_batches_compressed_together(batches)
            except BaseException:
                self._sink.abort_pending()
                raise
            self._sink.wait()
            return
        for b in batches:
            self.write_batch(b)

    # Raw bytes of the batches whose buffers are compressed in one parallel call: enough to keep
    # the threads busy across small batches, small enough that writing one window overlaps with
    # compressing the next.
    _COMPRESS_WINDOW_BYTES = 64 << 20

    def _write_batches_compressed_together(self, batches: list[RecordBatch]) -> None:
        """Compress the buffers of several batches in one parallel call (threads stay busy
        across batch boundaries), then write the batches in order, the last one in the
        background while the next window compresses."""
        version = self._version
        compress = self._compress
        assert compress is not None            # write_table calls this only when compressing
        i = 0
        while i < len(batches):
            window: list[RecordBatch] = []
            flats: list[FlatBatch] = []
            size = 0
            while i < len(batches) and (not window or size < self._COMPRESS_WINDOW_BYTES):
                b = batches[i]
                if b.schema is not self.schema and not b.schema.equals(self.schema):
                    raise ArrowInvalid(f"batch schema does not match the writer's schema:\n"
                                       f"{b.schema}\nvs\n{self.schema}")
                fb = flatten_columns(b._columns, b.num_rows, version)
                window.append(b)
                flats.append(fb)
                size += fb.raw_body_size()
                i += 1
            bodies = compress.pack_batches(flats, self._encoder._body_alignment)
            for b, fb, body in zip(window, flats, bodies):
                self._write_messages(b, None, fb, body)

    def write(self, table_or_batch: RecordBatch | Table | object) -> None:
        """Write a RecordBatch, a Table, or anything arrowipc.table() or record_batch() takes."""
        if isinstance(table_or_batch, RecordBatch):
            self.write_batch(table_or_batch)
        elif isinstance(table_or_batch, Table):
            self.write_table(table_or_batch)
        elif hasattr(table_or_batch, "__arrow_c_stream__"):
            self.write_table(_table(table_or_batch))
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
        if exc_type is None:
            self.close()
        elif self._sink.atomic is not None:
            # an error inside the block: a path the file writer writes atomically keeps its
            # previous contents (or stays absent); the error says the write failed
            self._closed = True
            self._sink.abort()
        else:
            # elsewhere, as pyarrow: the stream is ended after the batches written so far; the
            # block's error is the one that propagates
            try:
                self.close()
            except Exception:
                pass

    def __del__(self) -> None:
        # A writer dropped without close(): say so (ResourceWarning, as for an unclosed file)
        # and finish what it owns, so what was written is never lost silently. A file object or
        # memory sink of the caller's is left as it is: the caller may have reused it.
        if getattr(self, "_closed", True):
            return
        sink = self._sink
        target = sink.in_place_path or getattr(sink.atomic, "path", None) or "its sink"
        try:
            warnings.warn(f"{type(self).__name__} for {target!s} was never closed" + (
                "; closed now, ending it after the batches written" if sink.owns else ""),
                ResourceWarning, source=self)
            if sink.owns:
                self.close()
            else:
                sink.wait()
        except Exception:
            pass


class RecordBatchStreamWriter(_WriterBase):
    """Writes the IPC stream format: schema, batches, end-of-stream marker.

    A path is written through under its own name, as pyarrow does, so another process can read
    the stream as it grows; an error inside `with` ends the stream after the batches written.

    `durable=True` (a path sink only, not in pyarrow) fsyncs the file and its directory at close.
    `statistics=True` (not in pyarrow) puts each batch's min/max/null counts in its custom
    metadata, under the key files use (ipc.statistics); a stream has no footer for a summary.
    """

    _paths_in_place = True

    def __init__(self, sink: SinkLike, schema: T.Schema, *, use_legacy_format: bool | None = None,
                 options: IpcWriteOptions | None = None, durable: bool = False,
                 filesystem: Any = None, statistics: bool = False) -> None:
        self._statistics = bool(statistics)
        super().__init__(sink, schema, options=options, use_legacy_format=use_legacy_format,
                         durable=durable, filesystem=filesystem)

    def _finish(self) -> None:
        self._sink.write(LEGACY_EOS if self.options.use_legacy_format else EOS_MARKER)


class RecordBatchFileWriter(_WriterBase):
    """Writes the IPC file format: magic, stream messages, footer, footer length, magic.

    `durable=True` (a path sink only, not in pyarrow) fsyncs the file and its directory at close.
    `statistics=True` (not in pyarrow) puts each batch's min/max/null counts in its custom
    metadata and their summary in the footer's (ipc.statistics), with a copy of the batches'
    headers when they are small enough, so a read over a network plans from the footer alone
    (ipc.remote).
    """

    def __init__(self, sink: SinkLike, schema: T.Schema, *, use_legacy_format: bool | None = None,
                 options: IpcWriteOptions | None = None, metadata: T.MetadataLike = None,
                 magic: bytes = FILE_MAGIC, durable: bool = False, statistics: bool = False,
                 filesystem: Any = None) -> None:
        self._statistics = bool(statistics)
        if magic not in FILE_MAGICS:
            raise ValueError(f"file magic must be b'ARROW1' or b'ALKAID1', got {magic!r}")
        self._magic = magic
        # an explicitly empty mapping is written as an empty (present) metadata vector
        self._footer_metadata = T.normalize_metadata(metadata) if metadata else (
            {} if metadata is not None else None)
        if self._footer_metadata:
            # header copies describe another file's batches (metadata kept by a rewrite)
            self._footer_metadata.pop(HEADERS_KEY.encode(), None)
        self._batch_blocks: list[tuple[int, int, int]] = []
        self._dict_blocks: list[tuple[int, int, int]] = []
        self._summary: Any = None              # statistics.FileSummary once a batch is written
        # with statistics, each record batch's message metadata, for the footer (remote.py)
        self._header_copies: list[bytes] | None = [] if self._statistics else None
        self._header_bytes = 0
        super().__init__(sink, schema, options=options, use_legacy_format=use_legacy_format,
                         durable=durable, filesystem=filesystem)

    def _start(self) -> None:
        head = self._magic + bytes((-len(self._magic)) % 8)
        self._sink.write(head)

    _file_mode = True

    def _after_batch(self, offset: int, metadata: bytes, body_len: int) -> None:
        self._batch_blocks.append((offset, len(metadata), body_len))
        copies = self._header_copies
        if copies is not None:
            # copied for the footer (remote.HEADERS_KEY) while they stay within the bound
            self._header_bytes += len(metadata)
            if self._header_bytes <= BATCH_HEADERS_LIMIT:
                copies.append(metadata)
            else:
                self._header_copies = None

    def _after_dictionary(self, offset: int, meta_len: int, body_len: int) -> None:
        self._dict_blocks.append((offset, meta_len, body_len))

    def _after_statistics(self, stats: dict[str, Any]) -> None:
        if self._summary is None:
            from .statistics import FileSummary
            self._summary = FileSummary(self.schema)
        self._summary.add(stats)

    def _finish(self) -> None:
        self._sink.write(LEGACY_EOS if self.options.use_legacy_format else EOS_MARKER)
        blob, pos = md.schema_blob(self.schema)
        footer_metadata = self._footer_metadata
        if self._statistics:
            from .statistics import FileSummary
            summary = self._summary or FileSummary(self.schema)
            extended = summary.metadata(footer_metadata)
            copies = encode_batch_headers(self._header_copies, self._batch_blocks) \
                if self._header_copies else None
            if copies is not None:
                extended[HEADERS_KEY] = copies
            footer_metadata = T.normalize_metadata(extended)
        footer = encode_footer(blob, pos, self._dict_blocks, self._batch_blocks,
                               footer_metadata, self._version,
                               md.schema_blob_alignment(self.schema))
        self._sink.write(footer)
        self._sink.write(struct.pack("<i", len(footer)) + self._magic)


def new_stream(sink: SinkLike, schema: T.Schema, *, use_legacy_format: bool | None = None,
               options: IpcWriteOptions | None = None, durable: bool = False,
               filesystem: Any = None, statistics: bool = False) -> RecordBatchStreamWriter:
    """A RecordBatchStreamWriter to a path, a URL (s3://, gs://, ... through fsspec), a path on
    `filesystem` (fsspec or pyarrow), a file-like object or a BufferOutputStream. A local path is
    written through under its own name, as pyarrow's (another process can follow the stream; an
    existing file is replaced by a new one at open); a URL or key appears only when the writer
    closes successfully. `durable=True` fsyncs a local path's file and directory at close;
    `statistics=True` writes each batch's min/max/null counts in its custom metadata
    (ipc.statistics)."""
    return RecordBatchStreamWriter(sink, schema, use_legacy_format=use_legacy_format,
                                   options=options, durable=durable, filesystem=filesystem,
                                   statistics=statistics)


def new_file(sink: SinkLike, schema: T.Schema, *, use_legacy_format: bool | None = None,
             options: IpcWriteOptions | None = None, metadata: T.MetadataLike = None,
             magic: bytes = FILE_MAGIC, durable: bool = False,
             statistics: bool = False, filesystem: Any = None) -> RecordBatchFileWriter:
    """A RecordBatchFileWriter to a path, a URL (s3://, gs://, ... through fsspec), a path on
    `filesystem` (fsspec or pyarrow), a file-like object or a BufferOutputStream; nothing appears
    under a path, URL or key unless the writer closes successfully. `durable=True` fsyncs a
    local path's file and directory at close; `statistics=True` writes each batch's min/max/null
    counts in its custom metadata and their summary in the footer's (ipc.statistics), with a
    copy of the batches' headers when small enough (ipc.remote)."""
    return RecordBatchFileWriter(sink, schema, use_legacy_format=use_legacy_format,
                                 options=options, metadata=metadata, magic=magic, durable=durable,
                                 statistics=statistics, filesystem=filesystem)


def get_record_batch_size(batch: RecordBatch | Any) -> int:
    """Bytes of the framed IPC message `batch` is written as: prefix, metadata and body
    (pyarrow.ipc.get_record_batch_size). `batch` may be any library's record batch."""
    if not isinstance(batch, RecordBatch):
        batch = record_batch(batch)
    return serialize_record_batch(batch).size

