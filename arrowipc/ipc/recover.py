"""Rescue what a damaged IPC file or stream still holds.

An IPC file is the stream format between a leading magic and a trailing footer, so a file whose
footer is missing (the writer died) or damaged can still be read front to back as a stream: every
message that arrived whole is kept, and reading stops at the first one that did not. `recover`
does that and can write the rescued batches to a new, valid file; `open_file(..., recover=True)`
returns a file reader over them when the footer cannot be trusted.
"""
from __future__ import annotations

import os
from dataclasses import dataclass

from .. import types as T
from .._core.buffer import Buffer, py_buffer
from ..errors import ArrowException, ArrowInvalid
from ..table import RecordBatch, Table
from .options import IpcReadOptions, ReadStats
from .format import FILE_MAGICS, HEADER_DICTIONARY_BATCH, HEADER_RECORD_BATCH
from .filesystems import read_all
from .paths import read_path
from .reader import RecordBatchFileReader, RecordBatchWithMetadata

__all__ = ["RecoveredFileReader", "RecoveryReport", "RescuedBatches", "open_file_recovering",
           "recover", "scan_batches"]

TYPE_CHECKING = False               # typing itself is not imported at run time
if TYPE_CHECKING:
    from typing import Any, Iterator

    from .._typing import SinkLike, SourceLike


@dataclass
class RecoveryReport:
    """What a recovery found.

    complete: the input was whole (an intact footer, or a stream ending with its end-of-stream
    marker); used_footer: the batches come from the footer rather than a front-to-back scan;
    end: the byte just after the last complete message kept; error: why the scan stopped
    (None when complete).
    """
    complete: bool
    used_footer: bool
    num_batches: int
    num_rows: int
    end: int
    size: int
    error: str | None = None


def _as_buffer(source: SourceLike, filesystem: Any = None) -> Buffer:
    whole = read_all(source, filesystem)          # a URL, or a path on `filesystem`
    if whole is not None:
        return whole
    if isinstance(source, (str, os.PathLike)):
        return read_path(source)                  # ours: no mapping another process can cut
    if hasattr(source, "read") and not isinstance(source, (bytes, bytearray, memoryview, Buffer)):
        if hasattr(source, "seek"):
            source.seek(0)
        data = source.read()
        return data if isinstance(data, Buffer) else py_buffer(data)
    return py_buffer(source)


def _data_start(buf: Buffer) -> int:
    """Where the stream starts: after the file magic and its padding, or at 0 for a stream."""
    head = buf.slice(0, min(8, buf.size)).to_pybytes()
    for magic in FILE_MAGICS:
        if head.startswith(magic):
            return len(magic) + (-len(magic)) % 8
    return 0


class RescuedBatches:
    """Every complete record batch of a file or stream, read front to back as it comes.

    Messages are framed and decoded one at a time (no decompression window, so each position is
    exact); iteration yields RecordBatchWithMetadata and stops at the first message that is cut
    short, does not decode or fails the options' validation level. Memory stays at about one
    batch. For a file, a readable footer bounds the data section (`has_footer`). `report` is up
    to date after each batch; `position` is how far the scan has read (for progress bars);
    `stopped_at` is where the message that ended the scan starts (None when none failed).
    Raises ArrowInvalid when not even a schema can be read.
    """

    def __init__(self, source: SourceLike, options: IpcReadOptions | None = None) -> None:
        from .message import read_message_from
        from .reader import MessageDecoder
        from .sources import BufferSource
        buf = _as_buffer(source)
        start = _data_start(buf)
        end = buf.size
        self.where = "file" if start else "stream"
        self.has_footer = False
        if start:
            try:
                end = RecordBatchFileReader(buf).footer_offset
                self.has_footer = True
            except ArrowException:
                pass
        self._src = BufferSource(buf.slice(0, end))     # offsets stay those of the input
        self._src.pos = start
        self._read = read_message_from
        self._decoder = MessageDecoder(options, self.where)
        first = read_message_from(self._src, self._decoder.options.max_metadata_size, self.where)
        if first is None:
            raise ArrowInvalid(f"{self.where}: no schema message at byte {start}: there is "
                               f"nothing to recover")
        self._decoder.read_schema_message(first)
        self.schema: T.Schema = self._decoder.schema
        self.report = RecoveryReport(False, False, 0, 0, self._src.pos, buf.size)
        self.stopped_at: int | None = None     # where the first bad message starts, if one did

    @property
    def position(self) -> int:
        """How far the scan has read, in bytes from the start of the input."""
        return self._src.pos

    def __iter__(self) -> Iterator[RecordBatchWithMetadata]:
        dec, src, report = self._decoder, self._src, self.report
        while True:
            start = src.pos
            try:
                msg = self._read(src, dec.options.max_metadata_size, self.where)
                if msg is None:
                    # an end-of-stream marker was read (the position moved), or the data simply
                    # ended between two messages
                    report.complete = src.pos > start
                    report.end = src.pos
                    if not report.complete:
                        report.error = (f"{self.where}: the data ends at byte {start} between two "
                                        f"messages, without an end-of-stream marker")
                    return
                batch = dec.decode(msg)
                if batch is None:
                    report.end = src.pos
                    continue
                batch.validate()            # the deferred O(n) checks: a bad batch ends the scan
            except ArrowException as e:
                report.error = " ".join(str(e).split())
                self.stopped_at = start
                return
            report.num_batches += 1
            report.num_rows += batch.num_rows
            report.end = src.pos
            yield RecordBatchWithMetadata(batch, msg.custom_metadata)


def scan_batches(source: SourceLike, options: IpcReadOptions | None = None
                 ) -> tuple[T.Schema | None, list[RecordBatchWithMetadata], RecoveryReport]:
    """(schema or None, [RecordBatchWithMetadata], RecoveryReport) from reading `source` (a file
    or a stream) front to back, keeping every batch that arrived whole and passes the options'
    validation level."""
    buf = _as_buffer(source)
    try:
        scan = RescuedBatches(buf, options)
    except ArrowException as e:
        start = _data_start(buf)
        return None, [], RecoveryReport(False, False, 0, 0, start, buf.size, str(e))
    items = list(scan)
    return scan.schema, items, scan.report


def _validated(items: Iterator[RecordBatchWithMetadata]) -> list[RecordBatchWithMetadata]:
    """The items, each batch checked (the deferred O(n) checks run), as the scan checks them."""
    out = []
    for item in items:
        item.batch.validate()
        out.append(item)
    return out


def _check_footer_blocks(reader: RecordBatchFileReader) -> None:
    # A footer that parses may still point at garbage: every block must hold a message of its kind.
    for what, count, header_type in (
            ("dictionary", reader.num_dictionaries, HEADER_DICTIONARY_BATCH),
            ("record batch", reader.num_record_batches, HEADER_RECORD_BATCH)):
        for i in range(count):
            msg = reader.read_block_message(what, i, with_body=False)
            if msg.header_type != header_type:
                raise ArrowInvalid(f"file: {what} block {i} holds a {msg.type} message")


class RecoveredFileReader:
    """The batches rescued from a file read as a stream, behind RecordBatchFileReader's API."""

    def __init__(self, schema: T.Schema, items: list[RecordBatchWithMetadata],
                 report: RecoveryReport) -> None:
        self.schema = schema
        self._items = items
        self.recovery = report
        self.metadata: dict[bytes, bytes] | None = None            # footer metadata is lost with the footer
        self.stats = ReadStats(num_messages=len(items) + 1, num_record_batches=len(items))

    @property
    def num_record_batches(self) -> int:
        """The number of batches rescued."""
        return len(self._items)

    def get_batch_with_custom_metadata(self, i: int) -> RecordBatchWithMetadata:
        """Batch `i` with its custom metadata."""
        return self._items[i]

    def get_batch(self, i: int) -> RecordBatch:
        """Batch `i`."""
        return self._items[i].batch

    get_record_batch = get_batch

    def __iter__(self) -> Iterator[RecordBatch]:
        return (item.batch for item in self._items)

    def iter_batches_with_custom_metadata(self) -> Iterator[RecordBatchWithMetadata]:
        """The batches in order, each with its custom metadata."""
        return iter(self._items)

    def count_rows(self) -> int:
        """The number of rows rescued."""
        return sum(item.batch.num_rows for item in self._items)

    def read_all(self) -> Table:
        """Every rescued batch as one Table."""
        return Table(self.schema, [item.batch for item in self._items])

    def close(self) -> None:
        """Nothing to release: the batches are in memory."""

    def __enter__(self) -> RecoveredFileReader:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __arrow_c_stream__(self, requested_schema: object = None) -> object:
        from ..interop import export_stream
        return export_stream(self.schema, iter(self), requested_schema)


def open_file_recovering(source: SourceLike, footer_offset: int | None = None,
                         options: IpcReadOptions | None = None, filesystem: Any = None
                         ) -> RecordBatchFileReader | RecoveredFileReader:
    """A RecordBatchFileReader when the footer is intact (every block checked), else a
    RecoveredFileReader over the batches a front-to-back scan rescues. Either has `recovery`.
    A URL or a path on `filesystem` is fetched whole (the scan reads everything)."""
    buf = _as_buffer(source, filesystem)
    try:
        reader = RecordBatchFileReader(buf, footer_offset, options=options)
        _check_footer_blocks(reader)
        # every batch's header is decoded for its row count: one that does not decode makes
        # the footer's index unusable as it is, and the scan rescues the batches before it
        num_rows = reader.count_rows()
    except ArrowException as e:
        return _rescued_by_scan(buf, options, str(e))
    reader.recovery = RecoveryReport(True, True, reader.num_record_batches, num_rows, buf.size,
                                     buf.size)
    return reader


def _rescued_by_scan(buf: Buffer, options: IpcReadOptions | None, footer_error: str
                     ) -> RecoveredFileReader:
    """The batches a front-to-back scan of `buf` rescues, the footer being unusable for
    `footer_error`."""
    schema, items, report = scan_batches(buf, options)
    if schema is None:
        raise ArrowInvalid(f"file: nothing to recover: the footer is unusable ({footer_error}) and "
                           f"the data holds no schema ({report.error})")
    report.error = report.error or f"the footer is unusable: {footer_error}"
    report.complete = False
    return RecoveredFileReader(schema, items, report)


def recover(source: SourceLike, destination: SinkLike | None = None, *,
            options: IpcReadOptions | None = None, filesystem: Any = None) -> RecoveryReport:
    """Rescue every complete batch of an IPC file or stream; with `destination` (a path, a
    file-like object or a BufferOutputStream) write them as a valid IPC file.

    The footer is used when it is intact (keeping the file's metadata); otherwise the input is
    read front to back as a stream and reading stops at the first incomplete or invalid message.
    Raises ArrowInvalid only when not even a schema can be read. `source` may be a URL or a path
    on `filesystem`, as for open_file (fetched whole); a destination URL is written as new_file
    writes URLs.
    """
    buf = _as_buffer(source, filesystem)
    schema: T.Schema | None
    report: RecoveryReport | None
    if _data_start(buf):
        reader = open_file_recovering(buf, None, options)
        if isinstance(reader, RecordBatchFileReader):
            try:
                items = _validated(reader.iter_batches_with_custom_metadata())
            except ArrowException as e:
                # a batch the footer lists does not decode or fails the checks: the scan keeps
                # every batch before it (as `arrowipc recover` does)
                reader = _rescued_by_scan(buf, options, str(e))
        if isinstance(reader, RecoveredFileReader):
            items = list(reader.iter_batches_with_custom_metadata())
        schema, report = reader.schema, reader.recovery
        assert report is not None           # open_file_recovering always sets it
        file_metadata = reader.metadata
    else:
        schema, items, report = scan_batches(buf, options)
        if schema is None:
            raise ArrowInvalid(f"stream: nothing to recover: {report.error}")
        file_metadata = None
    if destination is not None:
        from .writer import new_file
        with new_file(destination, schema, metadata=file_metadata) as writer:
            for item in items:
                writer.write_batch(item.batch, item.custom_metadata)
    return report
