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
from ..io import memory_map
from ..table import RecordBatch, Table
from . import metadata as md
from .options import IpcReadOptions, ReadStats
from .reader import (FILE_MAGICS, RecordBatchFileReader, RecordBatchStreamReader,
                     RecordBatchWithMetadata)


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


def _as_buffer(source) -> Buffer:
    if isinstance(source, (str, os.PathLike)):
        return memory_map(source)
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


def scan_batches(source, options: IpcReadOptions | None = None):
    """(schema or None, [RecordBatchWithMetadata], RecoveryReport) from reading `source` (a file
    or a stream) front to back, keeping every batch that arrived whole and passes the options'
    validation level."""
    buf = _as_buffer(source)
    start = _data_start(buf)
    view = buf.slice(start, buf.size - start)
    batches, rows, end, error = [], 0, start, None
    schema = None
    try:
        reader = RecordBatchStreamReader(view, options=options)
        schema = reader.schema
        end = start + reader._source.pos
        for item in reader.iter_batches_with_custom_metadata():
            item.batch._columns             # run the pending checks: a bad batch ends the scan
            batches.append(item)
            rows += item.batch.num_rows
            end = start + reader._source.pos
    except ArrowException as e:
        error = str(e)
    report = RecoveryReport(error is None, False, len(batches), rows, end, buf.size, error)
    return schema, batches, report


def _check_footer_blocks(reader: RecordBatchFileReader) -> None:
    # A footer that parses may still point at garbage: every block must hold a message of its kind.
    for what, count, header_type in (
            ("dictionary", reader.num_dictionaries, md.HEADER_DICTIONARY_BATCH),
            ("record batch", reader.num_record_batches, md.HEADER_RECORD_BATCH)):
        for i in range(count):
            msg = reader.read_block_message(what, i, with_body=False)
            if msg.header_type != header_type:
                raise ArrowInvalid(f"file: {what} block {i} holds a {msg.type} message")


class RecoveredFileReader:
    """The batches rescued from a file read as a stream, behind RecordBatchFileReader's API."""

    def __init__(self, schema: T.Schema, items: list, report: RecoveryReport):
        self.schema = schema
        self._items = items
        self.recovery = report
        self.metadata = None            # footer metadata is lost with the footer
        self.stats = ReadStats(num_messages=len(items) + 1, num_record_batches=len(items))

    @property
    def num_record_batches(self) -> int:
        return len(self._items)

    def get_batch_with_custom_metadata(self, i: int) -> RecordBatchWithMetadata:
        return self._items[i]

    def get_batch(self, i: int) -> RecordBatch:
        return self._items[i].batch

    get_record_batch = get_batch

    def __iter__(self):
        return (item.batch for item in self._items)

    def iter_batches_with_custom_metadata(self):
        return iter(self._items)

    def count_rows(self) -> int:
        return sum(item.batch.num_rows for item in self._items)

    def read_all(self) -> Table:
        return Table(self.schema, [item.batch for item in self._items])

    def close(self):
        pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __arrow_c_stream__(self, requested_schema=None):
        from ..interop import export_stream
        return export_stream(self.schema, iter(self), requested_schema)


def open_file_recovering(source, footer_offset=None, options: IpcReadOptions | None = None):
    """A RecordBatchFileReader when the footer is intact (every block checked), else a
    RecoveredFileReader over the batches a front-to-back scan rescues. Either has `recovery`."""
    buf = _as_buffer(source)
    try:
        reader = RecordBatchFileReader(buf, footer_offset, options=options)
        _check_footer_blocks(reader)
    except ArrowException as e:
        footer_error = str(e)
    else:
        reader.recovery = RecoveryReport(True, True, reader.num_record_batches, reader.count_rows(),
                                         buf.size, buf.size)
        return reader
    schema, items, report = scan_batches(buf, options)
    if schema is None:
        raise ArrowInvalid(f"file: nothing to recover: the footer is unusable ({footer_error}) and "
                           f"the data holds no schema ({report.error})")
    report.error = report.error or f"the footer is unusable: {footer_error}"
    report.complete = False
    return RecoveredFileReader(schema, items, report)


def recover(source, destination=None, *, options: IpcReadOptions | None = None) -> RecoveryReport:
    """Rescue every complete batch of an IPC file or stream; with `destination` (a path, a
    file-like object or a BufferOutputStream) write them as a valid IPC file.

    The footer is used when it is intact (keeping the file's metadata); otherwise the input is
    read front to back as a stream and reading stops at the first incomplete or invalid message.
    Raises ArrowInvalid only when not even a schema can be read.
    """
    buf = _as_buffer(source)
    if _data_start(buf):
        reader = open_file_recovering(buf, None, options)
        schema, report = reader.schema, reader.recovery
        items = list(reader.iter_batches_with_custom_metadata())
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
