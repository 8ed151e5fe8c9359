"""Stream and file readers (pyarrow.ipc.RecordBatchStreamReader / RecordBatchFileReader).

`MessageDecoder` turns messages into schemas and batches without doing I/O; the readers feed it
from a source. Both keep dictionaries in a memo, project columns before touching their buffers,
and hand out batches whose buffers are views of the input.

One pipeline: every reader (and the push decoder, the CLI, recovery and the Dissociated reader)
drives the decoder through its public methods only -- `frame_and_decode` for in-memory bytes,
`decode` / `read_record_batch_window` for framed messages. Each message is framed once (a window
that looks ahead hands the message it stops at to the next read), and the decoder alone counts
what was read.
"""
from __future__ import annotations

import bisect
import os
import stat
import struct
import threading
from collections import deque
from typing import (TYPE_CHECKING, Any, Iterable, Iterator, Literal, NamedTuple, Sequence, cast,
                    overload)

from .. import types as T
from ._batch_decode import (PlainBatchDecoder, ReadCounters, assemble_columns, buffer_needed_mask,
                            decode_record_batch_header, fixed_width_values, make_plan,
                            next_message_fast)
from .._core.content_checks import run_pending_checks
from .._core.buffer import Buffer, py_buffer
from ._flatbuf import ExtentCache, recording, root_table
from ._framing import check_block, file_blocks, is_message_like, read_frame
from ..errors import (ArrowException, ArrowInvalid, ArrowIOError, ArrowNotImplementedError,
                      ArrowTruncatedBody)
from ..extension import registry_generation
from ..batch_reader import RecordBatchReader, RecordBatchWithMetadata
from ..table import RecordBatch, Table
from ..validate import validate_values
from . import metadata as md
from .dictionary import DictionaryMemo
from .filesystems import RangeSource, open_reading
from .format import (CONTINUATION, FILE_MAGICS, MAX_METADATA_SIZE, describe_bytes,
                     file_magic)
from .limits import check_schema_bounds, schema_size
from .message import (Message, missing_eos_error, no_schema_error, read_first_message,
                      read_message_from, read_message_header)
from .options import IOStats, IpcReadOptions, ReadStats, as_read_options
from .remote import (HEADERS_KEY, TAIL_READ_SIZE, body_ranges, coalesce, decode_batch_headers,
                     dictionary_ids_needed)
from . import paths as local_paths
from .paths import PathSource
from .sources import BufferSource, LocalFileSource, allocate_claimed

if TYPE_CHECKING:
    from collections.abc import Callable

    from typing_extensions import Self

    from .._core.arraydata import ArrayData
    from .._typing import SourceLike
    from ..types import KeyValueMetadata
    from ._batch_decode import RecordBatchHeader
    from ._flatbuf import FlatTable
    from .recover import RecoveryReport

    Plan = tuple[Any, list[int]]            # make_plan's decode plan of a schema's fields
    # the O(n) content checks assemble_columns defers (run before any column data is handed
    # out); None when there are none
    Pending = Any
    Block = tuple[int, int, int]            # a footer block: (offset, metadata length, body length)
    # what a window of compressed batches yields: a batch with its message, or the error met
    WindowItem = tuple[RecordBatch, Message] | ArrowException

__all__ = ["MessageDecoder", "RecordBatchFileReader", "RecordBatchStreamReader",
           "RecordBatchWithMetadata", "read_record_batch", "read_schema"]


class MessageDecoder:
    """Schema + dictionary memo + projection: decodes messages into batches (no I/O)."""

    def __init__(self, options: IpcReadOptions | None = None, where: str = "stream") -> None:
        self.options = as_read_options(options)
        self.where = where
        self.info: md.SchemaInfo | None = None
        # the schema batches are returned with (after projection); every user reads the schema
        # message first, so the attribute is typed as set
        self.schema: T.Schema = None  # type: ignore[assignment]
        self.stats = ReadCounters()     # counted in C: safe from several threads without a lock
        # the full schema's decode plan: set by set_schema, before any message is decoded
        self._plan: Plan = None  # type: ignore[assignment]
        self._included: list[bool] | None = None
        self._out_index = None
        self.memo: DictionaryMemo | None = None     # when the schema has dictionaries
        self._level = self.options.validate
        self._limits = (self.options.max_buffers, self.options.max_variadic_buffers)
        self._max_metadata = self.options.max_metadata_size
        self._plain = False         # `plain`, kept up to date by set_schema (read per message)
        self._fast: PlainBatchDecoder | None = None     # frame_and_decode's one-call path

    # -- schema ---------------------------------------------------------------------------------
    def read_schema_message(self, msg: Message) -> None:
        """Decode the Schema message `msg` (the first of a stream) and read with its schema."""
        if msg.header_type != md.HEADER_SCHEMA:
            raise ArrowInvalid(f"{self.where}: expected a schema message first, found a {msg.type} "
                               f"message at byte {msg.offset}")
        self.count_message()
        self.set_schema(*_decoded_schema(msg.header, self.options, self.where))

    def set_schema(self, info: md.SchemaInfo, plan: Plan | None = None) -> None:
        """Read batches of the schema `info` describes (`plan`: its decode plan, when already
        made), projected by the options' included_fields."""
        self.info = info
        # Big-endian input is swapped to native order unless the caller asked to keep it.
        self._swap = info.endianness == md.ENDIAN_BIG and self.options.ensure_native_endian
        # Big-endian data kept as-is cannot be checked by native-order kernels: the caller asked
        # for the raw bytes, and gets them unchecked.
        self._keep_foreign = info.endianness == md.ENDIAN_BIG and not self._swap
        full = info.schema
        self._plan = plan if plan is not None else make_plan([(f.name, f.type) for f in full])
        self.memo = None
        if info.dictionaries:
            self.memo = DictionaryMemo(info, self.stats, self.where, self.where == "file")
            self._dict_plans: dict[int, Plan] = {i: make_plan([(f"dictionary {i}", d.value_type)])
                                for i, d in info.dictionaries.items()}
        self._plain = self.memo is None and not self._swap and not self._keep_foreign
        inc = self.options.included_fields
        if info.endianness == md.ENDIAN_BIG and not self._swap:
            full = T.Schema(full.fields, full.metadata, endianness="big")
        self._fast = None
        if not inc:                 # empty: every field (pyarrow's default)
            self.schema = full
        else:
            n = len(full)
            for i in inc:
                if not 0 <= i < n:
                    raise ArrowInvalid(f"included_fields has index {i} but the schema has {n} fields")
            keep = sorted(set(inc))
            self._included = [i in keep for i in range(n)]
            self.schema = T.Schema([full.field(i) for i in keep], full.metadata)
        if self._plain and self._level != "full":
            self._fast = PlainBatchDecoder(self._plan, self._included, self.where, self._limits,
                                           self._max_metadata, self.schema, RecordBatch,
                                           self._level == "structural", self.stats)
            # bound straight to the Cython method: no Python frame per message on small batches
            self.frame_and_decode = self._fast.frame_and_decode  # type: ignore[method-assign]
        else:
            self.__dict__.pop("frame_and_decode", None)

    # -- batches --------------------------------------------------------------------------------
    def read_record_batch_message(self, msg: Message,
                                  header: RecordBatchHeader | None = None) -> RecordBatch:
        """The RecordBatch of a record batch message (any codec, dictionaries, byte order);
        `header`: its RecordBatch header, when the caller decoded it already."""
        self.count_record_batch()
        if header is None:
            header = decode_record_batch_header(msg.header, msg.legacy_codec)
        cols, pending = self._assemble(header, msg, self._plan, self._included)
        return self._finish_batch(header, cols, pending)

    def read_record_batch_window(self, first: Message, peek: Callable[[], Message | None]
                                 ) -> list[WindowItem]:
        """[(RecordBatch, Message)] for `first`, a compressed record batch, and the compressed
        record batches `peek()` returns after it (None when the next message is not one), their
        buffers decompressed together in one parallel run so the threads stay busy across
        batches. The window closes at WINDOW_MESSAGES messages or WINDOW_BYTES claimed
        uncompressed bytes. A message that fails ends the list with its exception: the batches
        before it are complete and are still handed out first."""
        from .compression import BodyDecompression
        work = BodyDecompression(self.options.use_threads, self.options.max_decompressed_size)
        staged: list[tuple[Message, RecordBatchHeader, int]] = []
        failure: ArrowException | None = None
        msg: Message | None = first
        while msg is not None:
            try:
                assert msg.body is not None         # record batch messages are read whole
                header = decode_record_batch_header(msg.header, msg.legacy_codec)
                needed = self.buffers_needed(header, msg)
                slot = work.add(header, msg.body, header.codec, needed, self._message_where(msg))
                staged.append((msg, header, slot))
            except ArrowException as e:
                failure = e
                break
            if len(staged) >= WINDOW_MESSAGES or work.claimed >= WINDOW_BYTES:
                break
            try:
                msg = peek()
            except ArrowException as e:     # the batches staged before it are still handed out
                failure = e
                break
        prepared = work.run()
        out: list[WindowItem] = []
        for staged_msg, header, slot in staged:
            try:
                buffers = prepared[slot]
                if isinstance(buffers, ArrowException):
                    raise buffers
                self.count_record_batch()
                assert staged_msg.body is not None
                cols, pending = assemble_columns(self._plan, header, staged_msg.body,
                                                 self._included, buffers, self.where,
                                                 staged_msg.version, self._limits)
                out.append((self._finish_batch(header, cols, pending), staged_msg))
            except ArrowException as e:
                out.append(e)
                return out
        if failure is not None:
            out.append(failure)
        return out

    def _finish_batch(self, header: RecordBatchHeader, cols: list[ArrayData | None],
                      pending: Pending) -> RecordBatch:
        if self._swap:
            cols, pending = self._swapped(cols, pending)
        if self.memo is not None:
            assert self.info is not None            # set with the memo
            for i, (f, col) in enumerate(zip(self.info.schema, cols)):
                if col is not None:
                    self.memo.resolve(col, f.type, (i,))
        if self._included is not None:
            cols = [c for c in cols if c is not None]
        # every column is present now: only excluded ones are None, and they were dropped
        return self.make_batch(cast("list[ArrayData]", cols), header.length, pending)

    def make_batch(self, cols: list[ArrayData], num_rows: int, pending: Pending) -> RecordBatch:
        """A RecordBatch of assembled columns, checked as the validation level says.

        structural: the O(n) checks stay pending and run before any column data is handed out
        (the batch's `_columns` gate), so no access can go out of bounds and plain reads cost no
        more than pyarrow's. full: the same checks plus the value checks, run now, so the read
        itself raises. none: skipped (trusted input only). Big-endian data kept in its byte order
        (ensure_native_endian=False) cannot be checked by the native-order kernels and is handed
        out unchecked, as the caller asked for the raw bytes.
        """
        level = "none" if self._keep_foreign else self._level
        if level == "structural":
            return RecordBatch(self.schema, cols, num_rows, pending)
        if level == "full":
            if pending is not None:
                run_pending_checks(pending, self.where)
            for f, col in zip(self.schema, cols):
                validate_values(col, f"{self.where}: field {f.name!r}")
        return RecordBatch(self.schema, cols, num_rows, None)

    def count_record_batch(self) -> None:
        """Count one record batch message in the statistics (every read path calls this)."""
        self.stats.count_record_batch()

    def count_message(self) -> None:
        """Count one message that is not a record batch (a schema, a dictionary batch)."""
        self.stats.count_message()

    def frame_and_decode(self, buf: Buffer, start: int, end: int
                         ) -> tuple[Message | None, int, RecordBatch | None]:
        """(message or None at the end-of-stream marker, next position, RecordBatch or None)
        for the message framed at `start` in `buf` (not past `end`), in one Cython call.

        The batch is None when the message needs the general path (`decode` or a window of
        compressed batches): a dictionary batch, a compressed batch, or a decoder that swaps
        byte order or attaches dictionaries. The message is then handed back, framed, so the
        caller never frames it again."""
        if self._fast is not None:
            return self._fast.frame_and_decode(buf, start, end)
        if not self._plain:
            msg, pos = read_frame(buf, start, end, self._max_metadata, self.where, True)
            return msg, pos, None
        msg, pos, cols, pending, num_rows = next_message_fast(
            buf, start, end, self._max_metadata, self._plan, self._included, self.where,
            self._limits)
        if cols is None:
            return msg, pos, None
        self.count_record_batch()
        if self._included is not None:
            cols = [c for c in cols if c is not None]
        columns = cast("list[ArrayData]", cols)     # only excluded columns were None
        if self._level == "structural":
            return msg, pos, RecordBatch(self.schema, columns, num_rows, pending)
        return msg, pos, self.make_batch(columns, num_rows, pending)

    @property
    def plain_decoder(self) -> PlainBatchDecoder | None:
        """The one-call Cython decoder when it applies (nothing to resolve, not full
        validation), else None."""
        return self._fast

    @property
    def included(self) -> list[bool] | None:
        """Per top-level field of the full schema, whether it is read; None when all are."""
        return self._included

    def buffers_needed(self, header: RecordBatchHeader, msg: Message) -> list[bool]:
        """Which body buffers of record batch `header` (of `msg`) the included fields read."""
        return buffer_needed_mask(self._plan, header, self._included, msg.version)

    @property
    def column_plan(self) -> Plan:
        """The decode plan of the full schema: per top-level field, its nodes and buffers in
        message order (for tools that map a record batch's buffers back to columns)."""
        return self._plan

    def is_included(self, index: int) -> bool:
        """Whether top-level field `index` is read (included_fields keeps it, or reads all)."""
        return self._included is None or self._included[index]

    def values_span(self, msg: Message, index: int, body_size: int) -> tuple[int, int, int] | None:
        """(offset in the body, values, null count) of top-level column `index`'s values in
        record batch message `msg` (header only: its body of `body_size` bytes not read), when
        they are used as they lie: one uncompressed fixed-width node in native byte order; None
        otherwise (decode the batch then)."""
        info = self.info
        if msg.header_type != md.HEADER_RECORD_BATCH or info is None \
                or info.endianness == md.ENDIAN_BIG:
            return None
        header = decode_record_batch_header(msg.header, msg.legacy_codec)
        return fixed_width_values(self._plan, header, index, body_size, msg.version)

    def decode_column(self, msg: Message, index: int) -> ArrayData:
        """Top-level column `index` of record batch message `msg`, decoded on its own: byte-swapped,
        its dictionary attached and every check of the validation level run. A tool finds which
        column of a failing batch is bad this way; ArrowInvalid names what is wrong."""
        header = decode_record_batch_header(msg.header, msg.legacy_codec)
        assert self.info is not None                # the schema message was read
        n = len(self.info.schema)
        cols, pending = self._assemble(header, msg, self._plan, [j == index for j in range(n)])
        if self._swap:
            cols, pending = self._swapped(cols, pending)
        col = cols[index]
        assert col is not None                      # the one column included
        if self.memo is not None:
            self.memo.resolve(col, self.info.schema.field(index).type, (index,))
        if pending:
            run_pending_checks(pending, self.where)
        return col

    def _message_where(self, msg: Message) -> str:
        return f"{self.where}: message at byte {msg.offset}"

    def _assemble(self, header: RecordBatchHeader, msg: Message, plan: Plan,
                  included: list[bool] | None) -> tuple[list[ArrayData | None], Pending]:
        assert msg.body is not None                 # batch messages are decoded with their body
        prepared = None
        if header.codec >= 0:
            from .compression import decompress_body_buffers
            prepared = decompress_body_buffers(header, msg.body, header.codec,
                                               buffer_needed_mask(plan, header, included,
                                                                  msg.version),
                                               self.options.use_threads, self._message_where(msg),
                                               self.options.max_decompressed_size)
        return assemble_columns(plan, header, msg.body, included, prepared, self.where, msg.version,
                                self._limits)

    @property
    def plain(self) -> bool:
        """No dictionaries and native byte order: batches can take the one-call Cython path."""
        return self._plain

    def _swapped(self, cols: list[ArrayData | None], pending: Pending
                 ) -> tuple[list[ArrayData | None], Pending]:
        """Columns byte-swapped to native order, with every node's content check queued again
        (the checks must read the swapped values, after dictionaries are attached)."""
        from .endian import swap_array_data
        out = [None if c is None else swap_array_data(c) for c in cols]
        queued: list[tuple[ArrayData, str]] = []

        def queue(node: ArrayData, name: str) -> None:
            queued.append((node, name))
            for k, child in enumerate(node.children):
                queue(child, f"{name}[{k}]")

        assert self.info is not None
        for f, c in zip(self.info.schema, out):
            if c is not None:
                queue(c, f.name)
        return out, (queued, None)

    def read_dictionary_message(self, msg: Message,
                                header: RecordBatchHeader | None = None) -> None:
        """Decode a DictionaryBatch and apply it to the memo (new, delta or replacement);
        `header`: its data's RecordBatch header, when the caller decoded it already."""
        self.count_message()
        t = msg.header
        dict_id, is_delta = t.int64(0), t.boolean(2)
        if self.memo is None or dict_id not in self._dict_plans:
            raise ArrowInvalid(f"{self.where}: dictionary batch at byte {msg.offset} has id "
                               f"{dict_id}, which no field of the schema uses")
        if header is None:
            data = t.table(1, "RecordBatch")
            if data is None:
                raise ArrowInvalid(f"{self.where}: dictionary batch at byte {msg.offset} has no "
                                   f"data")
            header = decode_record_batch_header(data, msg.legacy_codec)
        cols, pending = self._assemble(header, msg, self._dict_plans[dict_id], None)
        if self._swap:
            cols, pending = self._swapped(cols, pending)
        values = cols[0]
        assert values is not None and self.info is not None
        entry = self.info.dictionaries[dict_id]
        self.memo.resolve(values, entry.value_type, entry.path, skip_self=True)
        # A dictionary is checked once, when it arrives, at the reader's level.
        if pending and self._level != "none" and not self._keep_foreign:
            run_pending_checks(pending, f"{self.where}: dictionary {dict_id}")
        if self._level == "full" and not self._keep_foreign:
            validate_values(values, f"{self.where}: dictionary {dict_id}")
        self.memo.add(dict_id, values, is_delta)

    def decode(self, msg: Message,
               header: RecordBatchHeader | None = None) -> RecordBatch | None:
        """A RecordBatch for a record batch message, None after absorbing a dictionary batch
        (`header`: the batch's RecordBatch header, when the caller decoded it already)."""
        if msg.header_type == md.HEADER_RECORD_BATCH:
            if self._fast is not None:
                batch: RecordBatch | None = self._fast.decode(msg, header)
                if batch is not None:           # None: compressed, for the general path
                    return batch
            return self.read_record_batch_message(msg, header)
        if msg.header_type == md.HEADER_DICTIONARY_BATCH:
            self.read_dictionary_message(msg, header)
            return None
        if msg.header_type == md.HEADER_SCHEMA:
            raise ArrowInvalid(f"{self.where}: unexpected second schema message at byte {msg.offset}")
        raise ArrowNotImplementedError(f"{self.where}: {msg.type} messages are not supported in "
                                       f"record batch streams")


# Schema tables decoded, found again by the bytes their decode read (_flatbuf.ExtentCache), under
# the extension registry's generation: (info, plan, field count, depth)
_SCHEMA_CACHE = ExtentCache(64)
_SCHEMA_CACHE_MAX_FIELDS = 2048


def _decoded_schema(schema_table: FlatTable, options: IpcReadOptions, where: str
                    ) -> tuple[md.SchemaInfo, Plan]:
    """(SchemaInfo, plan) for a Schema table, interned by the bytes its decode reads.

    Schemas, fields and types are immutable, so streams and files that share a schema (the usual
    case in ETL) share one decoded copy instead of rebuilding thousands of Field objects. The key
    is the span of bytes the decode read, not the message or footer around it: the footers of a
    dataset's files differ in their blocks and statistics, not in their schema. The field count
    and depth are bounded before anything is built, and re-checked on a cache hit against the
    current reader's options. Registering or unregistering an extension type starts a new
    generation of entries.
    """
    # the extension registry decides which types the same bytes decode to
    generation = registry_generation()
    hit = _SCHEMA_CACHE.get(schema_table, generation)
    if hit is None:
        recorded = recording(schema_table)
        n_fields, depth = schema_size(recorded, options.max_fields, options.max_nesting_depth,
                                      where)
        info = md.decode_schema(recorded)
        hit = (info, make_plan([(f.name, f.type) for f in info.schema]), n_fields, depth)
        # only schemas of ordinary size are kept: 64 huge ones (up to max_fields each, from a
        # few bytes of input) would otherwise stay in memory
        if n_fields <= _SCHEMA_CACHE_MAX_FIELDS:
            _SCHEMA_CACHE.put(recorded, generation, hit)
    else:
        check_schema_bounds(hit[2], hit[3], options, where)
    return hit[0], hit[1]


# Compressed record batches of in-memory input are decoded a window at a time: the buffers of
# all of them decompress in one parallel run, so both cores stay busy across batch boundaries.
# A window decodes ahead at most this many messages, or uncompressed bytes (past the first batch).
WINDOW_BYTES = 256 << 20
WINDOW_MESSAGES = 64


def _batch_number(i: Any) -> int:
    """A batch number as pyarrow converts one: an integer, or a number with __int__ (a float
    is truncated toward zero, as int() does); a value past int64 is an OverflowError and
    anything else (a string) a TypeError."""
    if isinstance(i, (str, bytes)) or not hasattr(type(i), "__int__"):
        raise TypeError(f"an integer is required, got {type(i).__name__}")
    n = int(i)
    if not -(1 << 63) <= n < (1 << 63):
        raise OverflowError("Python int too large to convert to C long")
    return n


def _is_compressed_batch(msg: Message) -> bool:
    return (msg.header_type == md.HEADER_RECORD_BATCH
            and decode_record_batch_header(msg.header, msg.legacy_codec).codec >= 0)


class _ReaderBase:
    _decoder: MessageDecoder
    _source: Any        # a BufferSource, a FileSource or a filesystem's ranged source

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Release the source."""

    def read_all(self) -> Table:
        """Every remaining batch as one Table."""
        raise NotImplementedError

    @property
    def stats(self) -> ReadStats:
        """What has been read so far (a snapshot)."""
        return self._decoder.stats.snapshot()

    @property
    def io_stats(self) -> IOStats:
        """What the reader asked of its file object or filesystem so far (bytes, requests)."""
        counted = getattr(self, "_read_through", self._source)
        return IOStats(getattr(counted, "bytes_read", 0), getattr(counted, "read_requests", 0))

    @property
    def schema(self) -> T.Schema:
        """The schema of the batches (projected by `included_fields`)."""
        return self._decoder.schema

    @property
    def decoder(self) -> MessageDecoder:
        """The decoder this reader drives (schema, dictionaries, projection, statistics): tools
        such as `arrowipc validate` and `inspect` read messages through it as the reader does."""
        return self._decoder

    @property
    def source(self) -> Any:
        """Where the bytes come from (an in-memory BufferSource or a file-object source)."""
        return self._source

    def read_pandas(self, **options: Any) -> Any:
        """Every remaining batch as one pandas.DataFrame (the options of Table.to_pandas)."""
        return self.read_all().to_pandas(**options)


class RecordBatchStreamReader(_ReaderBase, RecordBatchReader):
    """Reads the IPC stream format from bytes, a path or a file-like object (a
    RecordBatchReader: `cast`, `read_pandas`, `__arrow_c_stream__`)."""

    def __init__(self, source: SourceLike, *, options: IpcReadOptions | None = None,
                 memory_pool: object = None, filesystem: Any = None,
                 memory_map: bool = False) -> None:
        self._source = open_reading(source, filesystem, False, memory_map, options)
        self._decoder = MessageDecoder(options, "stream")
        self._done = False
        # decoded ahead: (batch, message) or the exception met
        self._ready: deque[WindowItem] = deque()
        # (message or None for the end-of-stream marker, its start) framed by a window's
        # look-ahead and not part of the window: the next read takes it instead of framing again
        self._held: tuple[Message | None, int] | None = None
        first = read_message_from(self._source, self._decoder.options.max_metadata_size)
        if first is None:
            raise no_schema_error(self._source.pos)
        self._decoder.read_schema_message(first)

    def _end_of_stream(self, start: int) -> None:
        """Called when no message follows position `start`: a clean end needs the end-of-stream
        marker (the reader moved past it), otherwise the stream was cut at a message boundary."""
        self._done = True
        if self._source.pos == start and not self._decoder.options.allow_missing_eos:
            raise missing_eos_error(start, self._decoder.stats.num_record_batches)

    def _windowed(self, msg: Message) -> bool:
        return (isinstance(self._source, BufferSource) and self._decoder.plain
                and _is_compressed_batch(msg))

    def _decode_window(self, first: Message) -> None:
        """Decode `first`, a compressed record batch, with the compressed record batches that
        follow it, into self._ready. A message that cannot be framed ends the window; it is
        read (and its error raised) after the batches before it are handed out."""
        src, limit = self._source, self._decoder.options.max_metadata_size

        def peek() -> Message | None:
            start = src.pos
            try:
                msg = read_message_from(src, limit)
            except ArrowException:
                src.pos = start             # framed again by the next read, which raises
                return None
            try:
                if msg is not None and _is_compressed_batch(msg):
                    return msg
            except ArrowException:
                pass                        # a header that does not decode: the next read raises
            self._held = (msg, start)
            return None

        self._ready.extend(self._decoder.read_record_batch_window(first, peek))

    def _next_message(self) -> tuple[Message | None, int]:
        """(the next message or None at the end, its start): the one a window's look-ahead
        framed, or the next one framed from the source."""
        if self._held is not None:
            held, self._held = self._held, None
            return held
        start = self._source.pos
        return read_message_from(self._source, self._decoder.options.max_metadata_size), start

    def _next_ready(self) -> tuple[RecordBatch, Message]:
        item = self._ready.popleft()
        if isinstance(item, BaseException):
            raise item
        return item

    def _batches_wanted(self) -> None:
        """A local file opened by path is read whole once batches are wanted (the schema alone
        was read from it so far): fastest, and every later read comes from memory of ours."""
        if isinstance(self._source, LocalFileSource) and not hasattr(self, "_read_through"):
            self._read_through = self._source
            self._source = self._source.in_memory()   # itself past READ_WHOLE_LIMIT

    def read_next_batch_with_custom_metadata(self) -> RecordBatchWithMetadata:
        """The next batch with its custom metadata; StopIteration at the end of the stream."""
        if isinstance(self._source, LocalFileSource):
            self._batches_wanted()
        msg: Message | None
        batch: RecordBatch | None
        if self._ready:
            batch, msg = self._next_ready()
            return RecordBatchWithMetadata(batch, msg.custom_metadata)
        if self._done:
            raise StopIteration
        dec = self._decoder
        while True:
            msg, start = self._next_message()
            if msg is None:
                self._end_of_stream(start)
                raise StopIteration
            if self._windowed(msg):
                self._decode_window(msg)
                batch, msg = self._next_ready()
                return RecordBatchWithMetadata(batch, msg.custom_metadata)
            batch = dec.decode(msg)
            if batch is not None:
                return RecordBatchWithMetadata(batch, msg.custom_metadata)

    def read_next_batch(self) -> RecordBatch:
        """The next batch; StopIteration at the end of the stream."""
        return self.read_next_batch_with_custom_metadata().batch

    def iter_batches_with_custom_metadata(self) -> Iterator[RecordBatchWithMetadata]:
        """The remaining batches, each with its custom metadata."""
        while True:
            try:
                yield self.read_next_batch_with_custom_metadata()
            except StopIteration:
                return

    def iter_batches_where(self, keep: Callable[[Any], bool]
                           ) -> Iterator[tuple[int, RecordBatch]]:
        """(index, batch) for each remaining record batch whose custom metadata `keep` accepts;
        the others are framed and counted but their bodies are not decoded (how a dataset
        skips a stream's batches by their statistics). Indices count every batch read."""
        if isinstance(self._source, LocalFileSource):
            self._batches_wanted()
        index = 0
        dec = self._decoder
        while self._ready:                  # decoded ahead already: filtered here
            ready, ready_msg = self._next_ready()
            if keep(ready_msg.custom_metadata):
                yield index, ready
            index += 1
        if self._done:
            return
        while True:
            msg, start = self._next_message()
            if msg is None:
                self._end_of_stream(start)
                return
            if msg.header_type == md.HEADER_RECORD_BATCH and not keep(msg.custom_metadata):
                dec.count_record_batch()
                index += 1
                continue
            batch = dec.decode(msg)
            if batch is not None:
                yield index, batch
                index += 1

    def __iter__(self) -> Iterator[RecordBatch]:
        # The hot loop: no custom metadata decoding, no namedtuple per batch. In memory with
        # nothing decoded ahead, the in-memory generator itself is the iterator (one generator
        # frame per batch, not two).
        if isinstance(self._source, LocalFileSource):
            self._batches_wanted()
        src = self._source
        if not self._ready and not self._done and isinstance(src, BufferSource) \
                and self._decoder.plain:
            return self._iter_in_memory(self._decoder, src)
        return self._iter_general()

    def _iter_general(self) -> Iterator[RecordBatch]:
        while self._ready:
            yield self._next_ready()[0]
        if self._done:
            return
        dec, src = self._decoder, self._source
        if isinstance(src, BufferSource) and dec.plain:
            yield from self._iter_in_memory(dec, src)
            return
        while True:
            msg, start = self._next_message()
            if msg is None:
                self._end_of_stream(start)
                return
            if msg.header_type == md.HEADER_RECORD_BATCH:
                yield dec.read_record_batch_message(msg)
            else:
                batch = dec.decode(msg)
                if batch is not None:
                    yield batch

    def _iter_in_memory(self, dec: MessageDecoder, src: BufferSource) -> Iterator[RecordBatch]:
        buf, end, frame_and_decode = src.buf, src.end, dec.frame_and_decode
        while True:
            if self._held is not None:
                (msg, start), batch, self._held = self._held, None, None
            else:
                start = src.pos
                msg, src.pos, batch = frame_and_decode(buf, start, end)
            if batch is not None:
                yield batch
                continue
            if msg is None:
                self._end_of_stream(start)
                return
            if msg.header_type == md.HEADER_RECORD_BATCH and self._windowed(msg):
                self._decode_window(msg)
                while self._ready:
                    yield self._next_ready()[0]
                continue
            batch = dec.decode(msg)
            if batch is not None:
                yield batch

    def read_all(self) -> Table:
        """Every remaining batch as one Table."""
        return Table(self.schema, list(self))

    def close(self) -> None:
        """Stop reading: iteration ends (a file the reader opened itself is closed)."""
        self._done = True
        self._source.close()

    def __arrow_c_stream__(self, requested_schema: object = None) -> object:
        from ..interop import export_stream
        return export_stream(self.schema, iter(self), requested_schema)


def _leading_magic(src: Any) -> bytes:
    """The file magic at the start of `src`, or ArrowInvalid saying what is there instead."""
    head = src.read_at(0, 8).to_pybytes()
    magic = file_magic(head)
    if magic is None:
        # a stream's first message starts with the continuation marker: say what it is
        hint = ("; it starts as an IPC stream does (a message's continuation marker "
                "ff ff ff ff): read it with ipc.open_stream") if head[:4] == CONTINUATION else ""
        raise ArrowInvalid(f"file: expected the magic 'ARROW1' or 'ALKAID1' at byte 0, "
                           f"found {describe_bytes(head[:8])}{hint}")
    return magic


class RecordBatchFileReader(_ReaderBase):
    """Random access to the IPC file format: footer, get_batch(i), count_rows()."""

    recovery: RecoveryReport | None = None    # set by open_file(recover=True)
    _plain_blocks: PlainBatchDecoder | None = None      # see _in_memory_paths

    def __init__(self, source: SourceLike, footer_offset: int | None = None, *,
                 options: IpcReadOptions | None = None, memory_pool: object = None,
                 filesystem: Any = None, memory_map: bool = False) -> None:
        self._source = open_reading(source, filesystem, True, memory_map, options)
        self._decoder = MessageDecoder(options, "file")
        # get_batch may be called from several threads: the lock covers the dictionaries (read
        # once) and file-like sources (seek + read); in-memory batches need no lock.
        self._lock = threading.Lock()
        if not isinstance(self._source, BufferSource) and not self._source.seekable:
            raise ArrowInvalid(NOT_SEEKABLE)
        size = footer_offset if footer_offset is not None else self._source.size
        self._read_footer(size)

    def _read_footer(self, size: int) -> None:
        src = self._source
        if size < 12 + 10:
            raise ArrowInvalid(f"file: {size} bytes is too small for an Arrow IPC file "
                               f"(magic, footer and trailer need at least 22)")
        # an object store's first bytes cost a request of their own: there the leading magic is
        # checked (as pyarrow never does) at full validation, or to explain a bad trailer
        remote = getattr(src, "remote", False)
        magic = None if remote and self._decoder.options.validate != "full" \
            else _leading_magic(src)
        # one read at the end brings the trailer and, unless it is large, the footer with it
        last = src.read_at(size - min(size, TAIL_READ_SIZE), min(size, TAIL_READ_SIZE))
        last_start = size - last.size
        if magic is None:
            magic = next((m for m in FILE_MAGICS if last.slice(
                last.size - len(m), len(m)).to_pybytes() == m), None) or _leading_magic(src)
        self.magic = magic
        tail_len = len(magic)
        tail = last.slice(last.size - tail_len - 4, tail_len + 4).to_pybytes()
        if tail[4:] not in FILE_MAGICS:
            raise ArrowInvalid(f"file: expected the magic at the end (byte {size - tail_len}), "
                               f"found {tail[4:].hex(' ')}; the file may be truncated")
        footer_len: int = struct.unpack("<i", tail[:4])[0]
        footer_end = size - tail_len - 4
        if footer_len <= 0 or footer_len > footer_end - 8:
            raise ArrowInvalid(f"file: footer length {footer_len} does not fit in the "
                               f"{size}-byte file")
        if footer_len > self._decoder.options.max_metadata_size:
            raise ArrowInvalid(f"file: footer of {footer_len} bytes is larger than the limit of "
                               f"{self._decoder.options.max_metadata_size} "
                               f"(IpcReadOptions(max_metadata_size=...))")
        footer_start = footer_end - footer_len
        footer = root_table(last.slice(footer_start - last_start, footer_len)
                            if footer_start >= last_start else src.read_at(footer_start, footer_len),
                            "Footer")
        version = footer.int16(0)
        if version > md.METADATA_V5:
            raise ArrowInvalid(f"file: footer metadata version V{version + 1} is newer than V5")
        schema_table = footer.table(1, "Schema")
        if schema_table is None:
            raise ArrowInvalid("file: footer has no schema")
        footer_schema = _decoded_schema(schema_table, self._decoder.options, "file")
        if self._decoder.options.validate == "full":
            self._check_stream_schema(footer_schema[0], size)
        self._decoder.set_schema(*footer_schema)
        self._decoder.count_message()               # the footer's schema, counted as pyarrow does
        self._dict_blocks = self._blocks(footer, 2)
        self._batch_blocks = self._blocks(footer, 3)
        self.metadata = md.decode_custom_metadata(footer, 4)
        self._footer_start = footer_end - footer_len
        self._dictionaries_read = False
        self._in_memory_paths()
        # sources that are not in memory fetch only what a read needs (remote.py plans it)
        self._ranged = not isinstance(src, BufferSource)
        # record batch metadata fetched by batch_custom_metadata(), by block index: the batch
        # read that follows takes it instead of fetching it again
        self._heads: dict[int, Buffer] = {}
        # each record batch's metadata as copied in the footer (remote.py), decoded when a
        # read first needs a header from a source not in memory (False until then): a
        # projected read plans its buffer ranges from the footer alone, fetching no header
        self._head_copies: list[Buffer] | None | Literal[False] = False
        if self._decoder.options.validate == "full":
            self._copied_heads()                # checked when the file is opened

    def _copied_heads(self) -> list[Buffer] | None:
        """The record batch headers copied in the footer, or None (absent, not matching the
        footer's blocks, not all framing as record batch headers of their blocks, or a source
        in memory, where a header costs nothing). At full validation each is compared with the
        file's header first."""
        copies = self._head_copies
        if copies is False:
            decoded = decode_batch_headers(self.metadata, self._batch_blocks) \
                if self._ranged else None
            copies = None if decoded is None else [py_buffer(c) for c in decoded]
            if copies is not None and self._decoder.options.validate == "full":
                self._check_head_copies(copies)
            if copies is not None and not self._copies_frame(copies):
                copies = None
            self._head_copies = copies
        return copies

    def _copies_frame(self, copies: list[Buffer]) -> bool:
        """Whether every header copy frames as a record batch message filling its block's
        metadata, with a body within the block's. One that does not cannot be the file's
        header: used, its errors would blame the file's own header (its byte offsets are the
        block's), and the file would fail where pyarrow, which ignores the copies, reads it.
        The copies are ignored then and the headers read from the file."""
        max_metadata = self._decoder.options.max_metadata_size
        for (off, meta_len, body_len), copy in zip(self._batch_blocks, copies):
            head = _Fetched(copy, off, off + meta_len + max(body_len, 0))
            try:
                msg = read_message_header(head, max_metadata, "file")
                if (msg is None or msg.header_type != md.HEADER_RECORD_BATCH
                        or head.pos != off + meta_len or msg.body_length > body_len):
                    return False
                decode_record_batch_header(msg.header, msg.legacy_codec)
            except ArrowException:
                return False
        return True

    def _check_head_copies(self, copies: list[Buffer]) -> None:
        """Full validation: every record batch header copied in the footer is the file's own
        (the headers fetched at once, concurrently where the source can)."""
        blocks, spans = [], []
        for i, block in enumerate(self._batch_blocks):
            try:
                off, meta_len, _ = self._check_block(block, i, "record batch")
            except ArrowException:
                continue                        # reported when the batch is read
            blocks.append((i, off))
            spans.append((off, meta_len))
        for (i, off), real in zip(blocks, self._fetch_spans(spans)):
            copy, actual = copies[i].to_pybytes(), real.to_pybytes()
            if copy != actual:
                at = next(k for k in range(len(copy)) if copy[k] != actual[k])
                raise ArrowInvalid(f"file: record batch {i}'s header copy in the footer "
                                   f"({HEADERS_KEY}) differs from its header at byte {off + at}")

    def _in_memory_paths(self) -> None:
        """Batches of a file held in memory are framed and decoded in one call: `_fast` when
        nothing is to be resolved, and `_plain_blocks` (with the block checked too, from
        get_batch with no Python frame between) when not validating fully either."""
        in_memory = isinstance(self._source, BufferSource)
        self._fast = in_memory and self._decoder.plain
        self._plain_blocks = self._decoder.plain_decoder if in_memory else None

    def _check_stream_schema(self, footer: md.SchemaInfo, size: int) -> None:
        """Full validation: the schema message that opens the file's stream must be the footer's
        schema (the format requires them equal; readers use the footer's)."""
        at = 8                                      # the magic, padded to 8 bytes
        where = f"file: the stream's schema message at byte {at}"
        if size - at < 8:
            raise ArrowInvalid(f"{where}: expected a message, found {max(size - at, 0)} bytes")
        prefix = self._source.read_at(at, 8).to_pybytes()
        length = struct.unpack_from("<i", prefix, 4 if prefix[:4] == CONTINUATION else 0)[0]
        frame_size = (8 if prefix[:4] == CONTINUATION else 4) + max(length, 0)
        frame = self._source.read_at(at, min(frame_size, size - at))
        msg, _ = read_frame(frame, 0, frame.size, self._decoder.options.max_metadata_size,
                            "file", False, at)
        if msg is None or msg.header_type != md.HEADER_SCHEMA:
            found = "the end-of-stream marker" if msg is None else f"a {msg.type} message"
            raise ArrowInvalid(f"{where}: expected the schema, found {found}")
        stream = _decoded_schema(msg.header, self._decoder.options, "file")[0]
        if not (stream.schema.equals(footer.schema, check_metadata=True)
                and stream.endianness == footer.endianness
                and stream.dictionaries == footer.dictionaries):
            raise ArrowInvalid(f"{where}: differs from the footer's schema (the format requires "
                               f"them equal): stream\n{stream.schema}\nfooter\n{footer.schema}")

    def _blocks(self, footer: FlatTable, slot: int) -> list[Block]:
        return file_blocks(*footer.structs(slot, 24))

    @property
    def num_record_batches(self) -> int:
        """The number of record batches in the footer."""
        return len(self._batch_blocks)

    @property
    def num_dictionaries(self) -> int:
        """The number of dictionary batches in the footer."""
        return len(self._dict_blocks)

    # -- the footer's index, for tools (validation, recovery, partition planning) ---------------
    @property
    def record_batch_blocks(self) -> list[Block]:
        """(offset, metadata length, body length) of each record batch, as the footer lists them."""
        return list(self._batch_blocks)

    @property
    def dictionary_blocks(self) -> list[Block]:
        """(offset, metadata length, body length) of each dictionary batch in the footer."""
        return list(self._dict_blocks)

    @property
    def footer_offset(self) -> int:
        """The byte at which the footer starts: the end of the data section."""
        return self._footer_start

    def read_block_message(self, kind: str, i: int, with_body: bool = True) -> Message:
        """The message footer block `i` of `kind` ("record batch" or "dictionary") points at,
        checked to lie inside the data section (its body not read unless `with_body`)."""
        if kind not in ("record batch", "dictionary"):
            raise ValueError(f"kind must be 'record batch' or 'dictionary', got {kind!r}")
        blocks = self._batch_blocks if kind == "record batch" else self._dict_blocks
        if not 0 <= i < len(blocks):
            raise IndexError(f"{kind} block {i} out of range for {len(blocks)} blocks")
        return self._read_block(blocks[i], i, kind, with_body)

    def batch_custom_metadata(self) -> list[KeyValueMetadata | None]:
        """Each record batch's custom metadata, from its message header (no body read). A file
        not in memory fetches every header at once (concurrently, coalesced where they are
        close) and keeps them for the batch reads that follow, which do not fetch them again."""
        return [msg.custom_metadata for msg in self._batch_headers()]

    def batch_lengths(self) -> list[int]:
        """Each record batch's rows, from its message header (no body read; fetched as
        batch_custom_metadata fetches them); an error for a block holding another message."""
        out = []
        for i, msg in enumerate(self._batch_headers()):
            _check_batch_message(msg, i)
            out.append(decode_record_batch_header(msg.header, msg.legacy_codec).length)
        return out

    def batch_length(self, i: int) -> int:
        """Record batch i's rows, from its message header (no body read), checked as
        count_rows checks each."""
        msg = self._read_block(self._batch_blocks[i], i, "record batch", with_body=False,
                               body_fits=True)
        _check_batch_message(msg, i)
        return decode_record_batch_header(msg.header, msg.legacy_codec).length

    def _batch_headers(self) -> list[Message]:
        """Each record batch block's message, its body not read (see batch_custom_metadata)."""
        n = len(self._batch_blocks)
        if isinstance(self._source, BufferSource):
            return [self.read_block_message("record batch", i, with_body=False)
                    for i in range(n)]
        blocks = [self._check_block(self._batch_blocks[i], i, "record batch") for i in range(n)]
        copies = self._copied_heads()
        with self._lock:
            missing = [] if copies is not None else [i for i in range(n) if i not in self._heads]
            fetched = self._fetch_spans([blocks[i][:2] for i in missing]) if missing else []
            self._heads.update(zip(missing, fetched))
            heads = [copies[i] if copies is not None else self._heads[i] for i in range(n)]
        out = []
        for i, ((off, meta_len, body_len), head) in enumerate(zip(blocks, heads)):
            msg = read_message_header(_Fetched(head, off, off + meta_len + body_len),
                                      self._decoder.options.max_metadata_size, "file")
            if msg is None:
                raise ArrowInvalid(f"file: record batch block {i} at byte {off} holds no message")
            out.append(msg)
        return out

    def _kept_head(self, i: int) -> Buffer | None:
        """Record batch i's metadata bytes when they need no request: copied in the footer, or
        kept by batch_custom_metadata (handed out once)."""
        kept = self._heads.pop(i, None)
        if kept is None:
            copies = self._copied_heads()
            if copies is not None:
                kept = copies[i]
        return kept

    def _head(self, i: int, off: int, meta_len: int) -> Buffer:
        """Record batch i's metadata bytes: copied or kept (_kept_head), else fetched."""
        kept = self._kept_head(i)
        return kept if kept is not None else self._source.read_at(off, meta_len)

    def _check_block(self, block: Block, i: int, what: str) -> Block:
        return check_block(block, i, what, self._footer_start)

    def _read_block(self, block: Block, i: int, what: str, with_body: bool = True,
                    body_fits: bool = False) -> Message:
        """The message of block i. `body_fits` (header only): ArrowTruncatedBody, as reading
        the block whole raises, when the header claims a body longer than the block has."""
        off, meta_len, body_len = self._check_block(block, i, what)
        src = self._source
        read = read_message_from if with_body else read_message_header
        source: _BoundedSource | _Fetched
        if isinstance(src, BufferSource):
            source = _BoundedSource(src, off, off + meta_len + body_len)
        else:
            length = meta_len + body_len if with_body else meta_len
            source = _Fetched(src.read_at(off, length), off, off + meta_len + body_len)
        msg = read(source, self._decoder.options.max_metadata_size, "file")
        if msg is None:
            raise ArrowInvalid(f"file: {what} block {i} at byte {off} holds no message")
        if body_fits:
            _check_block_lengths(msg, (off, meta_len, body_len), source.pos - off, i, what)
        return msg

    def _ensure_dictionaries(self) -> None:
        with self._lock:
            if self._dictionaries_read:
                return
            if self._ranged:
                self._fetch_dictionaries()
            else:
                for i, block in enumerate(self._dict_blocks):
                    self._read_dictionary(self._read_block(block, i, "dictionary"), i)
            self._dictionaries_read = True

    def _read_dictionary(self, msg: Message, i: int) -> None:
        if msg.header_type != md.HEADER_DICTIONARY_BATCH:
            raise ArrowInvalid(f"file: dictionary block {i} holds a {msg.type} message")
        self._decoder.read_dictionary_message(msg)

    # -- sources not in memory: fetch only the ranges a read needs ------------------------------
    def _fetch_dictionaries(self) -> None:
        """The dictionaries the selected columns use, the blocks fetched in coalesced ranges.

        Without projection every block is fetched whole. With it, a dictionary's id is known
        only from its metadata: blocks with small bodies are fetched whole anyway, the others
        metadata first and the body only when a selected column uses the id."""
        dec, opts = self._decoder, self._decoder.options
        blocks = [self._check_block(b, i, "dictionary") for i, b in enumerate(self._dict_blocks)]
        wanted = dictionary_ids_needed(dec.info, dec.included)
        whole = [wanted is None or body_len < opts.hole_size_limit
                 for _off, _meta_len, body_len in blocks]
        # each block's fetched Buffer, replaced by its Message once framed
        heads: list[Any] = self._fetch_spans([(off, meta_len + body_len if w else meta_len)
                                              for (off, meta_len, body_len), w
                                              in zip(blocks, whole)])
        late = []
        for i, ((off, meta_len, body_len), w, head) in enumerate(zip(blocks, whole, heads)):
            end = off + meta_len + body_len
            if w:
                msg = read_message_from(_Fetched(head, off, end), opts.max_metadata_size, "file")
            else:
                assert wanted is not None       # blocks are fetched whole when all are wanted
                msg = read_message_header(_Fetched(head, off, end), opts.max_metadata_size,
                                          "file")
                if (msg is not None and msg.header_type == md.HEADER_DICTIONARY_BATCH
                        and msg.header.int64(0) not in wanted):
                    continue                    # no selected column uses this dictionary
                late.append(i)
            if msg is None:
                raise ArrowInvalid(f"file: dictionary block {i} at byte {off} holds no message")
            heads[i] = msg
        bodies = self._fetch_spans([(blocks[i][0], blocks[i][1] + blocks[i][2]) for i in late])
        for i, data in zip(late, bodies):
            off, meta_len, body_len = blocks[i]
            heads[i] = read_message_from(_Fetched(data, off, off + meta_len + body_len),
                                         opts.max_metadata_size, "file")
        for i, msg in enumerate(heads):
            if isinstance(msg, Message):
                self._read_dictionary(msg, i)

    def _fetch_spans(self, spans: list[tuple[int, int]]) -> list[Buffer]:
        """A Buffer for each (offset, length) span, fetched as coalesced ranges (each range in a
        buffer of its own: one buffer over all of them would allocate the holes between them)."""
        opts = self._decoder.options
        ranges = coalesce(spans, opts.hole_size_limit, opts.range_size_limit)
        fetched = [allocate_claimed(n, self._source.name, o) for o, n in ranges]
        self._source.fetch(ranges, [memoryview(b) for b in fetched])
        starts = [o for o, _n in ranges]
        out = []
        for o, n in spans:
            k = bisect.bisect_right(starts, o) - 1
            out.append(fetched[k].slice(o - starts[k], n))
        return out

    def _fetch_batches(self, first: int, last: int) -> list[Message | None]:
        """Messages of record batches [first, last) with the selected columns' buffers, in two
        fetches for the lot (all metadata, then all buffer ranges: concurrent where the source
        can, in file order otherwise). None for a batch whose metadata cannot be used here:
        get_batch reads it again and raises its error in its turn."""
        dec, opts = self._decoder, self._decoder.options
        blocks = []
        for i in range(first, last):
            try:
                blocks.append(self._check_block(self._batch_blocks[i], i, "record batch"))
            except ArrowException:
                break                   # this batch and those after it: one by one
        kept = [self._kept_head(first + k) for k in range(len(blocks))]
        new_heads = iter(self._fetch_spans([(off, meta_len) for (off, meta_len, _), head
                                            in zip(blocks, kept) if head is None]))
        heads = [head if head is not None else next(new_heads) for head in kept]
        msgs: list[Message | None] = []
        ranges: list[tuple[int, int]] = []
        targets: list[memoryview] = []
        for (off, meta_len, body_len), head in zip(blocks, heads):
            end = off + meta_len + body_len
            fetched = _Fetched(head, off, end)
            try:
                msg = read_message_header(fetched, opts.max_metadata_size, "file")
                if (msg is None or msg.header_type != md.HEADER_RECORD_BATCH
                        or msg.body_length > end - fetched.pos):
                    msgs.append(None)
                    continue
                header = decode_record_batch_header(msg.header, msg.legacy_codec)
                needed = dec.buffers_needed(header, msg)
            except ArrowException:
                msgs.append(None)
                continue
            body_start = fetched.pos
            body = allocate_claimed(msg.body_length, self._source.name, body_start)
            view = memoryview(body)
            for o, n in coalesce(body_ranges(header.buffers_list(), needed, body_start,
                                             msg.body_length),
                                 opts.hole_size_limit, opts.range_size_limit):
                ranges.append((o, n))
                targets.append(view[o - body_start:o - body_start + n])
            msg.body = body
            msgs.append(msg)
        self._fetch_coalesced(ranges, targets)
        return msgs + [None] * (last - first - len(msgs))

    def _fetch_coalesced(self, ranges: list[tuple[int, int]], targets: list[memoryview]) -> None:
        """Fetch each (offset, length) range of the file into its target, ranges of different
        batches close enough (the options' hole and range size limits) fetched as one request
        and copied out: adjacent batches read whole cost one request, not one each."""
        opts = self._decoder.options
        merged = coalesce(ranges, opts.hole_size_limit, opts.range_size_limit)
        if len(merged) == len(ranges):
            self._source.fetch(ranges, targets)
            return
        name = self._source.name
        scratch = [allocate_claimed(n, name, o) for o, n in merged]
        self._source.fetch(merged, [memoryview(b) for b in scratch])
        starts = [o for o, _ in merged]
        for (o, n), target in zip(ranges, targets):
            if n <= 0:
                continue
            k = bisect.bisect_right(starts, o) - 1  # coalesce merges ranges, never splits one
            at = o - starts[k]
            target[:] = memoryview(scratch[k])[at:at + n]

    def iter_batch_range(self, first: int, last: int) -> Iterator[RecordBatch]:
        """Record batches [first, last), in order. A file not in memory is fetched a window at
        a time (each window's headers, then its buffers, concurrently where the source can,
        adjacent ranges coalesced as the options allow), not batch by batch."""
        if not 0 <= first <= last <= len(self._batch_blocks):
            raise IndexError(f"record batches [{first}, {last}) out of range for "
                             f"{len(self._batch_blocks)} batches")
        if self._ranged:
            yield from self._iter_ranged(first, last)
            return
        for i in range(first, last):
            yield self.get_batch(i)

    def _iter_ranged(self, first: int = 0, n: int | None = None) -> Iterator[RecordBatch]:
        """Projected batches [first, n) from a source not in memory, planned a window at a
        time."""
        if not self._dictionaries_read:
            self._ensure_dictionaries()
        dec, blocks = self._decoder, self._batch_blocks
        n = len(blocks) if n is None else n
        while first < n:
            # a window holds at most WINDOW_MESSAGES batches and WINDOW_BYTES of (sparse) bodies
            last, claimed = first + 1, max(0, blocks[first][2])
            while (last < n and last - first < WINDOW_MESSAGES
                   and claimed + max(0, blocks[last][2]) <= WINDOW_BYTES):
                claimed += max(0, blocks[last][2])
                last += 1
            with self._lock:
                msgs = self._fetch_batches(first, last)
            k = 0
            while k < len(msgs):
                msg = msgs[k]
                k += 1
                if msg is None:
                    yield self.get_batch(first + k - 1)
                elif dec.plain and _is_compressed_batch(msg):
                    # the compressed batches fetched together decompress together: one
                    # parallel run over all their buffers, not a run (and threads) per batch
                    def peek() -> Message | None:
                        nonlocal k
                        following = msgs[k] if k < len(msgs) else None
                        if following is None or not _is_compressed_batch(following):
                            return None
                        k += 1
                        return following
                    for item in dec.read_record_batch_window(msg, peek):
                        if isinstance(item, BaseException):
                            raise item
                        yield item[0]
                else:
                    yield dec.read_record_batch_message(msg)
            first = last

    def _read_whole_file(self, leased_only: bool = False) -> None:
        """Every batch is wanted: read the whole local file in one read (faster than a read per
        batch, see paths.reads_whole) and go on in memory, as for bytes. With `leased_only`,
        only a mapping under a read lease is taken (no bytes are copied; without a lease the
        reader goes on with ranged reads)."""
        with self._lock:
            src = self._source
            if not isinstance(src, PathSource):
                return                          # another thread did it
            size = src.size
            leased = src.leased_whole() if leased_only else None
            if leased_only and leased is None:
                return
            whole = leased if leased is not None else src.read_whole()
            if whole.size != size:
                raise ArrowInvalid(f"{src.name}: the file changed size while being read "
                                   f"({size} bytes when opened, {whole.size} now)")
            self._source = BufferSource(whole, name=src.name)
            self._read_through = src             # io_stats go on counting what was read
            src.close()
            self._in_memory_paths()
            self._ranged = False

    def _count_path_batch_read(self, n: int) -> None:
        """get_batch on a local file reads batch i only, until an eighth of the batches have
        been read so (a scan, most likely): then a file of small batches, whose per-batch reads
        cost more than copying, is read whole, as for iteration (paths.reads_whole)."""
        self._path_batch_reads = getattr(self, "_path_batch_reads", 0) + 1
        src = self._source
        if (self._path_batch_reads >= max(4, n // 8) and isinstance(src, PathSource)
                and local_paths.reads_whole(src.size, n, True)):
            self._read_whole_file()

    def _fetch_batch(self, i: int) -> Message:
        """Record batch i's message: the whole block in one request without projection; with
        it, the metadata, then only the buffers of the selected columns, coalesced."""
        if isinstance(self._source, BufferSource):      # a local file read whole meanwhile
            return self._read_block(self._batch_blocks[i], i, "record batch")
        dec, opts, src = self._decoder, self._decoder.options, self._source
        off, meta_len, body_len = self._check_block(self._batch_blocks[i], i, "record batch")
        end = off + meta_len + body_len
        if dec.included is None:
            self._heads.pop(i, None)            # the whole block is read: its metadata too
            msg = read_message_from(_Fetched(src.read_at(off, meta_len + body_len), off, end),
                                    opts.max_metadata_size, "file")
        else:
            head = _Fetched(self._head(i, off, meta_len), off, end)
            msg = read_message_header(head, opts.max_metadata_size, "file")
            if msg is not None and msg.header_type == md.HEADER_RECORD_BATCH:
                body_start = head.pos
                if msg.body_length > end - body_start:
                    raise ArrowTruncatedBody(f"file: truncated {msg.type} message at byte "
                                             f"{msg.offset}: expected a {msg.body_length}-byte "
                                             f"body, got {end - body_start}")
                header = decode_record_batch_header(msg.header, msg.legacy_codec)
                needed = dec.buffers_needed(header, msg)
                body = allocate_claimed(msg.body_length, src.name, body_start)
                ranges = coalesce(body_ranges(header.buffers_list(), needed, body_start,
                                              msg.body_length),
                                  opts.hole_size_limit, opts.range_size_limit)
                view = memoryview(body)
                src.fetch(ranges, [view[o - body_start:o - body_start + n] for o, n in ranges])
                msg.body = body
            elif msg is not None:
                msg = self._read_block(self._batch_blocks[i], i, "record batch")
        if msg is None:
            raise ArrowInvalid(f"file: record batch block {i} at byte {off} holds no message")
        return msg

    @overload
    def _get(self, i: int, with_metadata: Literal[False]) -> RecordBatch: ...
    @overload
    def _get(self, i: int, with_metadata: Literal[True]
             ) -> tuple[RecordBatch, KeyValueMetadata | None]: ...

    def _get(self, i: int, with_metadata: bool
             ) -> RecordBatch | tuple[RecordBatch, KeyValueMetadata | None]:
        n = len(self._batch_blocks)
        if not 0 <= i < n:
            # pyarrow's error (a ValueError) and its refusal of negative numbers
            raise ArrowInvalid(f"Batch number {i} out of range: the file has {n} record batches")
        if not self._dictionaries_read:
            self._ensure_dictionaries()
        if isinstance(self._source, PathSource):
            self._count_path_batch_read(n)
        src, msg = self._source, None
        if self._fast:
            batch, msg = self._framed_once(i)
            if batch is not None:
                assert msg is not None              # a batch comes with its message
                return (batch, msg.custom_metadata) if with_metadata else batch
        if msg is None:                 # else framed above: a compressed batch, decoded below
            if isinstance(src, BufferSource):
                msg = self._read_block(self._batch_blocks[i], i, "record batch")
            elif getattr(src, "concurrent", False):
                msg = self._fetch_batch(i)      # the batches of a file fetched at once
            else:
                with self._lock:
                    msg = self._fetch_batch(i)
        batch = self._block_batch(msg, i)
        return (batch, msg.custom_metadata) if with_metadata else batch

    def _block_batch(self, msg: Message, i: int) -> RecordBatch:
        """The batch of record batch block i, its message already framed."""
        _check_batch_message(msg, i)
        return self._decoder.read_record_batch_message(msg)

    def _framed_once(self, i: int) -> tuple[RecordBatch | None, Message | None]:
        """(batch, message) of block i in memory, framed and decoded in one Cython call; batch is
        None when the message needs the general path (compressed, dictionaries, byte order)."""
        plain = self._plain_blocks
        if plain is not None:
            msg, batch = plain.block_batch(self._source.buf, self._batch_blocks, i,
                                           self._footer_start)
            return batch, msg
        off, meta_len, body_len = self._check_block(self._batch_blocks[i], i, "record batch")
        msg, _, batch = self._decoder.frame_and_decode(self._source.buf, off,
                                                       off + meta_len + body_len)
        return batch, msg

    def values_in_file(self, i: int, index: int, msg: Message | None = None
                       ) -> tuple[int, int, int] | None:
        """(byte offset in the file, values, null count) of top-level column `index`'s values
        in record batch i, read from its header alone (`msg`: the message header
        read_block_message gave, when already read), when they are used as they lie in the
        file: an uncompressed fixed-width column in native byte order (a count can read them
        there); None otherwise, or when the header is odd (get_batch decodes and reports it)."""
        off, meta_len, body_len = self._check_block(self._batch_blocks[i], i, "record batch")
        if msg is None:
            msg = self.read_block_message("record batch", i, with_body=False)
        found = self._decoder.values_span(msg, index, body_len)
        if found is None:
            return None
        return off + meta_len + found[0], found[1], found[2]

    def get_batch_with_custom_metadata(self, i: int) -> RecordBatchWithMetadata:
        """Batch `i` with its custom metadata."""
        if type(i) is not int:
            i = _batch_number(i)
        return RecordBatchWithMetadata(*self._get(i, True))

    def _map_local_file(self) -> bool:
        """Map a local file whole under a read lease (zero-copy, safe from other processes: see
        paths.py), so later reads of any batches or columns view the mapping instead of copying
        their ranges; a dataset scan asks it of each file it reads. Nothing changes where no
        lease can be had or the source is not a local path. Whether the file is now read from
        memory."""
        if isinstance(self._source, PathSource):
            self._read_whole_file(leased_only=True)
        return isinstance(self._source, BufferSource)

    def file_buffer(self) -> Buffer | None:
        """The whole file as the one mapping or buffer it is read from (where offset_in_file
        counts from), None when it is read by ranges."""
        src = self._source
        return src.buf if isinstance(src, BufferSource) else None

    def offset_in_file(self, buf: Buffer) -> int | None:
        """Where `buf` starts in the file, when the file is read from one mapping or buffer and
        `buf` is a view of it (an uncompressed column's values); None otherwise."""
        src = self._source
        if not isinstance(src, BufferSource):
            return None
        start = buf.address - src.buf.address
        if start < 0 or buf.size > src.buf.size or start > src.buf.size - buf.size:
            return None
        return start

    def get_batch(self, i: int) -> RecordBatch:
        """Batch `i` (its dictionaries are read on first use)."""
        if type(i) is not int:
            i = _batch_number(i)
        plain = self._plain_blocks
        if plain is not None:
            msg, batch = plain.block_batch(self._source.buf, self._batch_blocks, i,
                                           self._footer_start)
            if batch is not None:
                return cast(RecordBatch, batch)
            if msg is not None:             # compressed: framed and checked, decoded here
                return self._decoder.read_record_batch_message(msg)
        return self._get(i, False)

    get_record_batch = get_batch

    @property
    def reopened(self) -> bool:
        """Whether the reader reads a remote object through an opening kept from another reader
        (RangeSource.reopened): it made no request to open it."""
        return isinstance(self._source, RangeSource) and not self._source.opened_here

    def reopened_source(self) -> RangeSource | None:
        """A source over the same version of the remote object this reader reads, opened
        without a request (RangeSource.reopened): another reader of it reads the footer from
        the bytes its opening brought. None for other sources."""
        src = self._source
        return src.reopened() if isinstance(src, RangeSource) else None

    def batch_in_place(self, i: int) -> RecordBatch | None:
        """Batch `i` when it decodes as views of the file held whole in memory (no codec, no
        dictionaries, native byte order: one Cython call, no copy), None otherwise (get_batch
        reads it). A scan runs such a decode where it is consumed: it never waits on I/O or a
        codec, so another thread would only add hand-offs."""
        plain = self._plain_blocks
        if plain is None:
            return None
        batch = plain.block_batch(self._source.buf, self._batch_blocks, i, self._footer_start)[1]
        return cast("RecordBatch | None", batch)

    def __iter__(self) -> Iterator[RecordBatch]:
        if (isinstance(self._source, PathSource)
                and local_paths.reads_whole(self._source.size, len(self._batch_blocks),
                                            self._decoder.included is not None)):
            self._read_whole_file()
        if self._ranged and self._decoder.included is not None:
            yield from self._iter_ranged()
            return
        n, i = len(self._batch_blocks), 0
        held: Message | None = None     # block i's message, framed by a window's look-ahead
        while i < n:
            msg, held = held, None
            if msg is None and self._fast:  # each block framed once: decoded, or kept for a window
                batch, msg = self._framed_once(i)
                if batch is not None:
                    yield batch
                    i += 1
                    continue
            if msg is None or not _is_compressed_batch(msg):
                # framed already (only in memory, without dictionaries), or read by get_batch
                yield self.get_batch(i) if msg is None else self._block_batch(msg, i)
                i += 1
                continue
            # a window of consecutive compressed batches, decompressed together
            j = i + 1

            def peek() -> Message | None:
                nonlocal j, held
                if j >= n or held is not None:
                    return None
                try:
                    m = self._read_block(self._batch_blocks[j], j, "record batch")
                    compressed = _is_compressed_batch(m)
                except ArrowException:
                    return None             # read again by get_batch, which raises
                if not compressed:
                    held = m                # not part of the window: decoded next, unframed again
                    return None
                j += 1
                return m

            for item in self._decoder.read_record_batch_window(msg, peek):
                if isinstance(item, BaseException):
                    raise item
                yield item[0]
            i = j

    def iter_batches_with_custom_metadata(self) -> Iterator[RecordBatchWithMetadata]:
        """Every batch in order, each with its custom metadata."""
        for i in range(len(self._batch_blocks)):
            yield self.get_batch_with_custom_metadata(i)

    def filter_batches(self, filters: Iterable[Sequence[Any]]) -> Iterator[RecordBatch]:
        """The record batches that may hold a row passing every filter (not in pyarrow), each
        `(column, op, value)` with op one of "==", "<", "<=", ">", ">=", "in", "is_null",
        "not_null". Batches are skipped by the statistics arrowipc writes (new_file(...,
        statistics=True)): the footer's summary first, then each batch's header, so a skipped
        batch's body is never read. Rows are not filtered; files without statistics yield
        every batch."""
        from .statistics import matching_batches
        for i in matching_batches(self, filters):
            yield self.get_batch(i)

    def count_rows(self) -> int:
        """Total rows, from each batch's header only (no body is read)."""
        total = 0
        with self._lock:
            for i, block in enumerate(self._batch_blocks):
                msg = self._read_block(block, i, "record batch", with_body=False,
                                       body_fits=True)
                _check_batch_message(msg, i)
                total += decode_record_batch_header(msg.header, msg.legacy_codec).length
        return total

    def read_all(self) -> Table:
        """Every batch as one Table."""
        return Table(self.schema, list(self))

    def close(self) -> None:
        """Close the source (a file the reader opened itself)."""
        self._source.close()

    def __arrow_c_stream__(self, requested_schema: object = None) -> object:
        from ..interop import export_stream
        return export_stream(self.schema, iter(self), requested_schema)


def _check_batch_message(msg: Message, i: int) -> None:
    """ArrowInvalid unless `msg`, read at record batch block i, is a record batch."""
    if msg.header_type != md.HEADER_RECORD_BATCH:
        raise ArrowInvalid(f"file: record batch block {i} holds a {msg.type} message")


# the message a block of each kind holds
HEADER_TYPE = {"record batch": md.HEADER_RECORD_BATCH, "dictionary": md.HEADER_DICTIONARY_BATCH}


def _check_block_lengths(msg: Message, block: Block, framed: int, i: int, what: str) -> None:
    """ArrowTruncatedBody, as reading the block whole raises, when the header of block i (its
    message's metadata `framed` bytes long, prefix included) claims a body longer than the
    block has; an error too, as pyarrow's count and read raise, when a message of the block's
    kind has other lengths than the block."""
    off, meta_len, body_len = block
    if msg.body_length > meta_len + body_len - framed:
        raise ArrowTruncatedBody(f"file: truncated {msg.type} message at byte {off}. "
                                 f"Expected to be able to read {msg.body_length} bytes for "
                                 f"message body, got {meta_len + body_len - framed}")
    if msg.header_type == HEADER_TYPE[what]:
        if framed != meta_len:
            raise ArrowInvalid(f"file: {what} block {i} at byte {off}: the block's metadata "
                               f"length is {meta_len}, but the message's framed metadata "
                               f"is {framed} bytes")
        if msg.body_length != body_len:
            raise ArrowIOError(f"file: {what} block {i} at byte {off}: the block's body "
                               f"length is {body_len}, but the message header's is "
                               f"{msg.body_length}")

NOT_SEEKABLE = ("file: the file format needs a seekable source; read it as a stream or buffer "
                "it")


class FileRows(NamedTuple):
    """What local_file_rows reads of a file."""
    rows: int
    size: int
    mtime_ns: int
    footer: bytes           # the footer's flatbuffer: decoded_footer decodes it when asked
    lengths: list[int]      # each record batch's rows, from its header


def decoded_footer(footer: bytes) -> tuple[T.Schema, dict[bytes, bytes] | None, int]:
    """The schema, custom metadata and number of record batches of a footer that
    local_file_rows read (RecordBatchFileReader's schema, metadata and num_record_batches)."""
    table = root_table(footer, "Footer")
    schema_table = table.table(1, "Schema")
    if schema_table is None:
        raise ArrowInvalid("file: footer has no schema")
    info = _decoded_schema(schema_table, IpcReadOptions(), "file")[0]
    return info.schema, md.decode_custom_metadata(table, 4), len(file_blocks(*table.structs(3, 24)))


def local_file_rows(path: str, max_metadata: int = MAX_METADATA_SIZE) -> FileRows | None:
    """The rows, size and mtime of the IPC file at the local `path`, from its footer and its
    record batch headers alone: no reader, schema or body. None when the file is anything but
    a well-formed file (the checks are the reader's): the caller then opens it with
    RecordBatchFileReader, which says what is wrong. A dataset's first `count_rows()` counts
    each file so, in a quarter of the time a reader takes to open and count."""
    try:
        # non-blocking: a FIFO opened for reading would wait for a writer
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except (OSError, ValueError):
        return None
    try:
        st = os.fstat(fd)
        size = st.st_size
        if not stat.S_ISREG(st.st_mode) or size < 12 + 10:
            return None
        tail_start = size - min(size, TAIL_READ_SIZE)
        tail = os.pread(fd, size - tail_start, tail_start)
        magic = file_magic(tail[:8] if tail_start == 0 else os.pread(fd, 8, 0))
        if magic is None or len(tail) != size - tail_start or not tail.endswith(magic):
            return None
        footer_end = size - len(magic) - 4
        footer_len = int.from_bytes(tail[footer_end - tail_start:][:4], "little", signed=True)
        if footer_len <= 0 or footer_len > footer_end - 8 or footer_len > max_metadata:
            return None
        footer_start = footer_end - footer_len
        raw = tail[footer_start - tail_start:footer_end - tail_start] \
            if footer_start >= tail_start else os.pread(fd, footer_len, footer_start)
        footer = root_table(raw, "Footer")
        if footer.int16(0) > md.METADATA_V5 or footer.table(1, "Schema") is None:
            return None
        lengths = []
        for i, block in enumerate(file_blocks(*footer.structs(3, 24))):
            off, meta_len, _ = check_block(block, i, "record batch", footer_start)
            head = tail[off - tail_start:off - tail_start + meta_len] if off >= tail_start \
                else os.pread(fd, meta_len, off)
            if len(head) != meta_len:
                return None
            msg, framed = read_frame(py_buffer(head), 0, meta_len, max_metadata, "file", False)
            if msg is None:
                return None
            # not a batch, or its lengths are not the block's: the reader's error
            _check_batch_message(msg, i)
            _check_block_lengths(msg, block, framed, i, "record batch")
            # the header decoded whole, as RecordBatchFileReader.count_rows decodes it: a
            # header whose nodes or buffers do not decode is the reader's error
            length = decode_record_batch_header(msg.header, msg.legacy_codec).length
            if length < 0:
                return None
            lengths.append(length)
        return FileRows(sum(lengths), size, st.st_mtime_ns, raw, lengths)
    except (ArrowException, OSError, ValueError):
        return None
    finally:
        os.close(fd)


class _Fetched:
    """Bytes fetched from file offset `base` on, read as a source positioned in file offsets
    (so messages report their place in the file); reads stop at `end`, the block's end."""

    def __init__(self, data: Buffer, base: int, end: int) -> None:
        self.data = data
        self.base = base
        self.pos = base
        self.end = end

    def read(self, n: int) -> Buffer:
        start = self.pos - self.base
        n = max(0, min(n, self.end - self.pos, self.data.size - start))
        self.pos += n
        return self.data.slice(start, n)


class _BoundedSource:
    """A view of a BufferSource limited to [start, end): a block's message cannot read past it."""

    def __init__(self, src: BufferSource, start: int, end: int) -> None:
        self.buf = src.buf
        self.pos = start
        self.end = end
        self.name = src.name

    def read(self, n: int) -> Buffer:
        n = max(0, min(n, self.end - self.pos))
        out = self.buf.slice(self.pos, n)
        self.pos += n
        return out


def _message_of_type(obj: Message | SourceLike, header_type: int, type_name: str, what: str
                     ) -> Message:
    """The message `obj` is or holds first; OSError (in pyarrow's words) when it is of another
    type. A pyarrow.Message (any `is_message_like` object) is read from its `serialize()`
    bytes."""
    if isinstance(obj, Message):
        msg: Message | None = obj
    elif is_message_like(obj):
        msg = read_first_message(cast(Any, obj).serialize())
    else:
        msg = read_first_message(obj)
    if msg is None:
        raise ArrowInvalid(f"{what}: expected a message, found the end of the stream")
    if msg.header_type != header_type:
        raise ArrowIOError(f"{what}: Expected IPC message of type {type_name} but got "
                           f"{msg.type}")
    return msg


def read_schema(obj: Message | SourceLike, dictionary_memo: object = None) -> T.Schema:
    """The schema of a Schema message (a Message, ours or pyarrow's, bytes, a buffer or a
    stream)."""
    msg = _message_of_type(obj, md.HEADER_SCHEMA, "schema", "read_schema")
    return md.decode_schema(msg.header).schema


def read_record_batch(obj: Message | SourceLike, schema: T.Schema | object,
                      dictionary_memo: object = None, *,
                      options: IpcReadOptions | None = None) -> RecordBatch:
    """A RecordBatch from a record batch message (a Message, ours or pyarrow's, bytes or a stream)
    and its schema (ours, or any object exporting `__arrow_c_schema__`, such as a
    pyarrow.Schema)."""
    msg = _message_of_type(obj, md.HEADER_RECORD_BATCH, "record batch", "read_record_batch")
    if not isinstance(schema, T.Schema):
        schema = T.schema(schema)
    dec = MessageDecoder(options, "message")
    dec.set_schema(md.SchemaInfo(schema))
    return dec.read_record_batch_message(msg)
