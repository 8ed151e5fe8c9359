"""What every `arrowipc` command shares: exit statuses, usage errors, the input (sniffed,
read into memory), column selection, and the words of the reports.

Only the standard library is imported here: the IPC engine loads inside the functions, so
`arrowipc --help` costs about an `import arrowipc`.
"""
from __future__ import annotations

import argparse
import os
from typing import TYPE_CHECKING, Any, Callable

if TYPE_CHECKING:
    from ..ipc import RecordBatchFileReader, RecordBatchStreamReader
    from ..table import RecordBatch
    from ..types import Schema

__all__ = ["column_list", "COMPRESSIONS", "EXIT_INTERNAL", "EXIT_INTERRUPTED", "EXIT_INVALID_DATA",
           "EXIT_IO", "EXIT_OK", "EXIT_UNSUPPORTED", "EXIT_USAGE", "FILE_EXTENSIONS",
           "human_bytes", "Input", "json_input", "one_line", "open_reader", "output_kind",
           "plural", "projected_schema", "select_in_order", "select_in_order_schema",
           "sniff_format", "STREAM_EXTENSIONS", "UsageError"]

EXIT_OK = 0
EXIT_INVALID_DATA = 1
EXIT_USAGE = 2
EXIT_IO = 3
EXIT_UNSUPPORTED = 4
EXIT_INTERNAL = 5
EXIT_INTERRUPTED = 130

COMPRESSIONS = ("lz4", "zstd", "none")


class UsageError(Exception):
    """A command line that cannot be carried out (exit status 2)."""

    prog: str       # the command to name in the message, when it is not the top-level one



STREAM_EXTENSIONS = (".arrows", ".stream", ".ipcstream")
FILE_EXTENSIONS = (".arrow", ".arrow_file", ".feather", ".ipc")


# -- the input -------------------------------------------------------------------------------------

def sniff_format(head: bytes) -> tuple[str, str]:
    """("file", magic) or ("stream", framing) from the first 8 bytes; ArrowInvalid otherwise."""
    from ..errors import ArrowInvalid
    from ..ipc.format import CONTINUATION, FORMAT_FILE, FORMAT_STREAM, describe_bytes, file_magic, sniff
    if len(head) == 0:
        raise ArrowInvalid("empty input (0 bytes): expected an Arrow IPC file or stream")
    kind = sniff(head)
    if kind == FORMAT_FILE:
        return "file", (file_magic(head) or b"").decode()
    if kind == FORMAT_STREAM:       # pre-0.15 framing: a bare int32 metadata length
        return "stream", "continuation" if head.startswith(CONTINUATION) else "legacy"
    raise ArrowInvalid(f"expected an Arrow IPC file (magic 'ARROW1' or 'ALKAID1') or stream "
                       f"(continuation marker ff ff ff ff) at byte 0, found "
                       f"{describe_bytes(head[:8])}")


class Input:
    """One command-line input: a path (read into memory as the readers read paths) or stdin ("-",
    read whole)."""

    def __init__(self, name: str) -> None:
        self.name = name
        if name == "-":
            import sys
            self.data: bytes | None = sys.stdin.buffer.read()
            self.size = len(self.data)
            head = self.data[:8]
        else:
            if os.path.isdir(name):
                raise IsADirectoryError(21, "Is a directory", name)
            with open(name, "rb") as f:
                head = f.read(8)
            self.data = None
            self.size = os.path.getsize(name)
        self.kind, self.detail = sniff_format(head)

    @property
    def source(self) -> bytes | str:
        """What to hand to open_file / open_stream / open_source."""
        return self.data if self.data is not None else self.name

    @property
    def label(self) -> str:
        """The input's name in reports ("<stdin>" for "-")."""
        return "<stdin>" if self.name == "-" else self.name


def output_kind(path: str, to: str | None) -> str:
    """'file' or 'stream' for an output, from --to or the path's extension."""
    if to:
        return to
    ext = os.path.splitext(path)[1].lower()
    if path == "-" or ext in STREAM_EXTENSIONS:
        return "stream"
    if ext in FILE_EXTENSIONS:
        return "file"
    raise ValueError(f"cannot tell the output format from {path!r}: use an extension "
                     f"({', '.join(FILE_EXTENSIONS)} for files, {', '.join(STREAM_EXTENSIONS)} "
                     f"for streams) or --to file|stream")


# -- naming fields ---------------------------------------------------------------------------------


# -- columns ---------------------------------------------------------------------------------------

def column_list(text: str | None) -> list[str] | None:
    """The names of --columns NAME,NAME,... (None when the option is absent)."""
    if text is None:
        return None
    names = [c.strip() for c in text.split(",")]
    if not all(names):
        raise UsageError(f"--columns needs comma-separated names, got {text!r}")
    return names


def open_reader(inp: Input, columns: list[str] | None = None
                ) -> RecordBatchFileReader | RecordBatchStreamReader:
    """A file or stream reader for `inp`, projected to `columns` (names) when given."""
    from ..ipc import IpcReadOptions, open_file, open_stream
    opener: Callable[..., RecordBatchFileReader | RecordBatchStreamReader] = \
        open_file if inp.kind == "file" else open_stream
    reader = opener(inp.source)
    if not columns:
        return reader
    schema = reader.schema
    indices = []
    for name in columns:
        found = schema.get_all_field_indices(name)
        if not found:
            raise UsageError(f"no column named {name!r}; the columns are: "
                             f"{', '.join(schema.names)}")
        if len(found) > 1:
            raise UsageError(f"column name {name!r} is ambiguous: {len(found)} columns have it")
        indices.append(found[0])
    return opener(inp.source, options=IpcReadOptions(included_fields=indices))


def select_in_order(batch: RecordBatch, columns: list[str] | None) -> RecordBatch:
    """The projected batch with its columns in the order they were asked for."""
    if not columns or list(batch.schema.names) == list(columns):
        return batch
    return batch.select(columns)


def select_in_order_schema(schema: Schema, columns: list[str] | None) -> Schema:
    """The projected schema with its fields in the order they were asked for."""
    if not columns or list(schema.names) == list(columns):
        return schema
    from ..types import Schema
    return Schema([schema.field(schema.get_field_index(c)) for c in columns], schema.metadata)


# -- recover ---------------------------------------------------------------------------------------

def projected_schema(schema: Schema, columns: list[str] | None) -> Schema:
    """The schema a recovery writes when only `columns` are kept."""
    return select_in_order_schema(schema, columns)



# -- reports ---------------------------------------------------------------------------------------

def human_bytes(n: int) -> str:
    """A byte count for people: "512 B", "1.5 MiB"."""
    if n < 1024:
        return f"{n} B"
    size = float(n)
    for unit in ("KiB", "MiB", "GiB", "TiB"):
        size /= 1024
        if size < 1024 or unit == "TiB":
            return f"{size:.1f} {unit}"
    return f"{n} B"  # pragma: no cover


def plural(n: int, word: str) -> str:
    """`n` and `word`, pluralised in English when n != 1: "1 batch", "3 batches"."""
    return f"{n:,} {word}" + ("" if n == 1 else ("es" if word.endswith("ch") else "s"))


def one_line(e: BaseException | str) -> str:
    """An exception's message on one line (its class name when the message is empty)."""
    text = " ".join(str(e).split())
    return text or type(e).__name__


def json_input(args: argparse.Namespace, failed: Callable[[str, str], dict[str, Any]]) -> Input:
    """The Input of `args.file`; with --json, an input that cannot be opened or is not Arrow IPC
    still gets a JSON object on stdout, `failed(path, message)`, before the one-line error."""
    from ..errors import ArrowInvalid
    try:
        return Input(args.file)
    except (ArrowInvalid, OSError) as e:
        if args.json:
            import json
            path = "<stdin>" if args.file == "-" else args.file
            print(json.dumps(failed(path, one_line(e)), indent=2, ensure_ascii=False))
        raise


