"""`arrowipc validate`: every problem of an IPC file or stream, each with where it is.

The reader stops at the first problem; this check goes on. Messages are read in order (for a file:
the data section between the magic and the footer), each record batch is decoded, its deferred
checks run and every column is validated (`validate_array`, structural or full). When a batch does
not decode, each column is decoded alone to name every column at fault. For files the footer is
read too and every block it lists is matched against the messages found.
"""
from __future__ import annotations

import argparse
from typing import Any

from .. import types as T
from ..ipc._batch_decode import decode_record_batch_header
from ..errors import ArrowInvalid, ArrowNotImplementedError
from ..ipc import metadata as md
from ..ipc.message import Message, read_message_from
from ..ipc.reader import MessageDecoder, RecordBatchFileReader
from ..ipc.sources import BufferSource, FileSource, open_source
from ..validate import validate_array
from .common import EXIT_INVALID_DATA, EXIT_OK, Input, json_input, plural

__all__ = ["render_validation", "run", "validate_input"]

_BAD_DATA = (ArrowInvalid, ArrowNotImplementedError)


def _text(e: BaseException) -> str:
    return " ".join(str(e).split())


class _Checker:
    def __init__(self, full: bool) -> None:
        self.full = full
        self.problems: list[dict[str, str]] = []
        self.batches = 0
        self.rows = 0
        self.dictionary_batches = 0
        self.messages: dict[int, tuple[int, int]] = {}               # offset -> (header type, body length) for the footer check

    def problem(self, where: str, e: BaseException | str) -> None:
        """Record a problem at `where` (an exception or a message)."""
        self.problems.append({"where": where, "message": e if isinstance(e, str) else _text(e)})

    # -- one stream of messages --------------------------------------------------------------------
    def check_messages(self, src: BufferSource | FileSource, where: str
                       ) -> MessageDecoder | None:
        """Check every message of `src`; the decoder, or None when the schema message failed."""
        dec = MessageDecoder(None, where)
        limit = dec.options.max_metadata_size
        start = src.pos
        try:
            first = read_message_from(src, limit, where)
        except _BAD_DATA as e:
            self.problem(f"schema message at byte {start}", e)
            return None
        if first is None:
            self.problem(f"byte {start}", f"{where}: expected a schema message, found the end "
                                          f"of the {where}")
            return None
        try:
            dec.read_schema_message(first)
        except _BAD_DATA as e:
            self.problem(f"schema message at byte {start}", e)
            return None
        index = 0
        while True:
            pos = src.pos
            try:
                msg = read_message_from(src, limit, where)
            except _BAD_DATA as e:
                # the framing is lost: nothing after this point can be located
                self.problem(f"message at byte {pos}", e)
                return dec
            if msg is None:
                return dec
            self.messages[msg.offset] = (msg.header_type, msg.body_length)
            if msg.header_type == md.HEADER_RECORD_BATCH:
                self.check_batch(dec, msg, index)
                index += 1
            elif msg.header_type == md.HEADER_DICTIONARY_BATCH:
                self.dictionary_batches += 1
                try:
                    dec.read_dictionary_message(msg)
                except _BAD_DATA as e:
                    self.problem(f"dictionary batch at byte {msg.offset}", e)
            else:
                self.problem(f"message at byte {msg.offset}",
                             f"{where}: unexpected {msg.type} message")

    def check_batch(self, dec: MessageDecoder, msg: Message, index: int) -> None:
        """Decode and check record batch `index`; each problem is recorded."""
        where = f"record batch {index} (byte {msg.offset})"
        self.batches += 1
        try:
            batch = dec.read_record_batch_message(msg)
            columns = batch._columns          # runs the deferred O(n) checks
        except _BAD_DATA as e:
            found = self._column_problems(dec, msg)
            if found:
                for name, err in found:
                    self.problem(f"{where}, column {name!r}", err)
            else:
                self.problem(where, e)
            return
        self.rows += batch.num_rows
        for f, col in zip(batch.schema, columns):
            if col.length != batch.num_rows:
                self.problem(f"{where}, column {f.name!r}",
                             f"{col.length} values but the batch has {batch.num_rows} rows")
            try:
                validate_array(col, full=self.full, where=f"field {f.name!r}")
            except _BAD_DATA as e:
                self.problem(f"{where}, column {f.name!r}", e)

    def _column_problems(self, dec: MessageDecoder, msg: Message
                         ) -> list[tuple[str, BaseException]]:
        """[(column name, error)] from decoding each column of a failing batch on its own."""
        try:
            decode_record_batch_header(msg.header, msg.legacy_codec)      # a header that fails says it all
        except _BAD_DATA:
            return []
        assert dec.info is not None, "the schema message was read"
        schema = dec.info.schema
        out: list[tuple[str, BaseException]] = []
        for c, f in enumerate(schema):
            if not dec.is_included(c):
                continue
            try:
                col = dec.decode_column(msg, c)
                validate_array(col, full=self.full, where=f"field {f.name!r}")
            except _BAD_DATA as e:
                out.append((f.name, e))
        return out

    # -- the file footer ---------------------------------------------------------------------------
    def check_blocks(self, reader: RecordBatchFileReader) -> None:
        """Check the messages the footer points at (when the data section could not be read)."""
        dec = reader.decoder
        for i in range(reader.num_dictionaries):
            try:
                msg = reader.read_block_message("dictionary", i)
                self.dictionary_batches += 1
                dec.read_dictionary_message(msg)
            except _BAD_DATA as e:
                self.problem(f"footer dictionary block {i}", e)
        for i in range(reader.num_record_batches):
            try:
                msg = reader.read_block_message("record batch", i)
            except _BAD_DATA as e:
                self.problem(f"footer record batch block {i}", e)
                continue
            if msg.header_type != md.HEADER_RECORD_BATCH:
                self.problem(f"footer record batch block {i}", f"holds a {msg.type} message")
                continue
            self.check_batch(dec, msg, i)

    def check_footer(self, reader: RecordBatchFileReader, schema: T.Schema | None) -> None:
        if schema is not None and not reader.schema.equals(schema):
            self.problem("footer", "the footer's schema differs from the schema message: "
                                   + _schema_difference(schema, reader.schema))
        for what, blocks, want in (
                ("dictionary", reader.dictionary_blocks, md.HEADER_DICTIONARY_BATCH),
                ("record batch", reader.record_batch_blocks, md.HEADER_RECORD_BATCH)):
            for i, (off, meta_len, body_len) in enumerate(blocks):
                found = self.messages.get(off)
                if found is None:
                    self.problem(f"footer {what} block {i}",
                                 f"points at byte {off}, where no message starts")
                elif found[0] != want:
                    self.problem(f"footer {what} block {i}",
                                 f"points at byte {off}, which holds a "
                                 f"{md.HEADER_NAMES.get(found[0], found[0])} message")
                elif found[1] != body_len:
                    self.problem(f"footer {what} block {i}",
                                 f"says the body at byte {off} has {body_len} bytes, the message "
                                 f"says {found[1]}")
        batch_msgs = sum(1 for t, _ in self.messages.values() if t == md.HEADER_RECORD_BATCH)
        if reader.num_record_batches != batch_msgs:
            self.problem("footer", f"lists {reader.num_record_batches} record batches, the data "
                                   f"section holds {batch_msgs}")


def _schema_difference(a: T.Schema, b: T.Schema) -> str:
    if len(a) != len(b):
        return f"{len(a)} fields against {len(b)}"
    for i, (x, y) in enumerate(zip(a, b)):
        if not x.equals(y):
            return f"field {i} is '{x._short()}' against '{y._short()}'"
    return "the schema metadata differs"


def validate_input(inp: Input, full: bool = False) -> dict[str, Any]:
    """{"valid", "problems": [{"where", "message"}], counts...} for one input."""
    check = _Checker(full)
    if inp.kind == "file":
        reader = None
        try:
            reader = RecordBatchFileReader(inp.source)
        except _BAD_DATA as e:
            check.problem("footer", e)
        src = open_source(inp.source)
        src.pos = 8                       # past the magic and its padding
        if reader is not None:
            assert isinstance(src, BufferSource)      # a file input is bytes or a path
            src.end = reader.footer_offset
        dec = check.check_messages(src, "file")
        if reader is not None and dec is None:
            check.check_blocks(reader)        # no usable schema message: follow the footer
        elif reader is not None and dec is not None:
            assert dec.info is not None       # check_messages read the schema message
            check.check_footer(reader, dec.info.schema)
    else:
        check.check_messages(open_source(inp.source), "stream")
    return {"path": inp.label, "format": inp.kind, "level": "full" if full else "structural",
            "valid": not check.problems, "record_batches": check.batches, "rows": check.rows,
            "dictionary_batches": check.dictionary_batches, "problems": check.problems}


def render_validation(r: dict[str, Any]) -> str:
    """The text report of validate_input's result."""
    kind = r["format"]
    counts = (f"{r['record_batches']:,} record batch{'es' if r['record_batches'] != 1 else ''}, "
              f"{r['rows']:,} row{'s' if r['rows'] != 1 else ''}")
    if r["valid"]:
        return f"valid: {r['path']} ({kind}, {counts}; {r['level']} checks)"
    lines = [f"problem: {p['where']}: {p['message']}" for p in r["problems"]]
    n = len(r["problems"])
    lines.append(f"invalid: {r['path']} ({kind}): {n} problem{'s' if n != 1 else ''} "
                 f"({r['level']} checks)")
    return "\n".join(lines)


def _run_dataset(args: argparse.Namespace, files: list[str]) -> int:
    """`arrowipc validate DIR`: each file checked, then how many are valid."""
    results = [validate_input(Input(path), full=args.full) for path in files]
    invalid = [r for r in results if not r["valid"]]
    batches = sum(r["record_batches"] for r in results)
    rows = sum(r["rows"] for r in results)
    if args.json:
        import json
        print(json.dumps({"dataset": args.file, "valid": not invalid, "files": results,
                          "invalid_files": len(invalid), "record_batches": batches,
                          "rows": rows}, indent=2, ensure_ascii=False))
    else:
        for r in results:
            print(render_validation(r))
        if invalid:
            print(f"invalid: {args.file}: {len(invalid)} of {plural(len(results), 'file')} "
                  f"invalid")
        else:
            print(f"valid: {args.file}: {plural(len(results), 'file')}, "
                  f"{plural(batches, 'record batch')}, {plural(rows, 'row')}")
    return EXIT_INVALID_DATA if invalid else EXIT_OK


def run(args: argparse.Namespace) -> int:
    """`arrowipc validate` with parsed arguments; returns the exit status."""
    from .datasets import dataset_files
    files = dataset_files(args.file)
    if files is not None:                   # a directory or a glob: a dataset
        return _run_dataset(args, files)
    inp = json_input(args, lambda path, message: {
        "path": path, "valid": False, "problems": [{"where": "the input", "message": message}]})
    result = validate_input(inp, full=args.full)
    if args.json:
        import json
        print(json.dumps(result, indent=2, ensure_ascii=False))
    else:
        print(render_validation(result))
    return EXIT_OK if result["valid"] else EXIT_INVALID_DATA
