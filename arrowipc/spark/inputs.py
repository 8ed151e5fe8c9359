"""Input discovery and split planning for the Spark data source (pure arrowipc, no Spark).

A load path is a file, a directory (its .arrow/.arrows/.feather files) or a glob. A file in the
IPC file format (.arrow, Feather V2) splits into ranges of record batches taken from its footer;
a stream (.arrows) has no index, so it is read whole by one partition.
"""
from __future__ import annotations

import glob
import os
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..errors import ArrowInvalid

if TYPE_CHECKING:
    from ..types import Schema

__all__ = ["absolute", "batch_sizes", "BatchRange", "DEFAULT_BYTES_PER_PARTITION", "detect_format",
           "find_input_paths", "group_batches", "InputFile", "local_path", "parse_count",
           "parse_size", "plan_ranges", "read_input_schema", "SUFFIXES"]

SUFFIXES = (".arrow", ".arrows", ".feather", ".ipc")
DEFAULT_BYTES_PER_PARTITION = 128 * 1024 * 1024   # like spark.sql.files.maxPartitionBytes


@dataclass(frozen=True)
class InputFile:
    """One input of a read: its path and which IPC format it holds."""
    path: str
    is_file_format: bool        # IPC file format (footer), else stream format


@dataclass(frozen=True)
class BatchRange:
    """Record batches [start, end) of one input; end None means 'to the end' (streams)."""
    path: str
    is_file_format: bool
    start: int
    end: int | None


OPT_PATH = "path"                        # the read and write sources' input/output option


def _option(options: Any, name: str, default: Any = None) -> Any:
    """Option `name` of a source (the batch and the streaming one), or `default`."""
    # Spark hands options over case-insensitively; plain dicts (tests) may use either case.
    value = options.get(name)
    if value is None:
        value = options.get(name.lower())
    return default if value is None else value


def local_path(path: str) -> str:
    """A local path from a load path; accepts Spark-style 'file:' URIs."""
    if path.startswith("file://"):
        return path[len("file://"):]
    if path.startswith("file:"):
        return path[len("file:"):]
    if re.match(r"^[a-zA-Z][a-zA-Z0-9+.-]*://", path):
        raise ArrowInvalid(f"arrowipc: only local (or shared, mounted) paths are supported, got {path!r}")
    return path


def absolute(path: str) -> str:
    """A local path made absolute (executors may run elsewhere); a URL as it is."""
    return path if _is_remote(path) else os.path.abspath(path)


def _is_remote(path: str) -> bool:
    """A URL other than file:// (s3://, gs://, http://...): read through fsspec."""
    return bool(re.match(r"^[a-zA-Z][a-zA-Z0-9+.-]+://", path)) and not path.startswith("file:")


def _remote_input_paths(url: str) -> list[str]:
    """The data files a remote load path names (an object, a prefix or a glob), as URLs."""
    from ..ipc.filesystems import resolve
    _kind, fs, path = resolve(url)
    protocol = url.split("://", 1)[0]

    def as_url(p: str) -> str:
        return p if "://" in p else f"{protocol}://{p.lstrip('/')}"

    if fs.isdir(path):
        names = [p for p in fs.ls(path, detail=False) if fs.isfile(p)]
        return sorted(as_url(p) for p in names if _is_data_name(p.rstrip("/").rsplit("/", 1)[-1]))
    if fs.isfile(path):
        return [url]
    return sorted(as_url(p) for p in fs.glob(path) if fs.isfile(p))


def _is_data_name(name: str) -> bool:
    # Spark's convention: names starting with '_' or '.' are metadata (_SUCCESS, _temporary).
    return not name.startswith(("_", ".")) and name.endswith(SUFFIXES)


def _files_in(directory: str) -> list[str]:
    return sorted(os.path.join(directory, n) for n in os.listdir(directory)
                  if _is_data_name(n) and os.path.isfile(os.path.join(directory, n)))


def find_input_paths(path: str) -> list[str]:
    """The data files a load path names, sorted; raises when it names none."""
    if not path:
        raise ArrowInvalid("arrowipc: no path given; use .load(path) or .option('path', ...)")
    if _is_remote(path):
        found = _remote_input_paths(path)
        if not found:
            raise ArrowInvalid(f"arrowipc: {path!r} names no {'/'.join(SUFFIXES)} files")
        return found
    path = local_path(path)
    if os.path.isdir(path):
        found = _files_in(path)
    elif os.path.isfile(path):
        found = [path]
    else:
        found = []
        for match in sorted(glob.glob(path)):
            if os.path.isdir(match):
                found.extend(_files_in(match))
            elif os.path.isfile(match):
                found.append(match)
    if not found:
        raise ArrowInvalid(f"arrowipc: {path!r} names no {'/'.join(SUFFIXES)} files")
    return found


def detect_format(path: str) -> InputFile:
    """Whether `path` holds the IPC file format (magic ARROW1 or ALKAID1) or a stream."""
    from ..ipc.format import FEATHER_V1_MAGIC, FORMAT_FILE, describe_bytes, sniff
    if _is_remote(path):
        from ..ipc.filesystems import resolve
        _kind, fs, fs_path = resolve(path)
        head = fs.cat_file(fs_path, start=0, end=8)
    else:
        with open(path, "rb") as f:
            head = f.read(8)
    if head.startswith(FEATHER_V1_MAGIC):
        raise ArrowInvalid(f"arrowipc: {path} is a Feather V1 file, which is not Arrow IPC; "
                           f"rewrite it as Feather V2 / Arrow IPC")
    kind = sniff(head)
    if kind is None:
        raise ArrowInvalid(f"arrowipc: {path} is not an Arrow IPC file or stream: expected the "
                           f"magic 'ARROW1' or 'ALKAID1' or a continuation marker at byte 0, "
                           f"found {describe_bytes(head)}")
    return InputFile(path, kind == FORMAT_FILE)


def read_input_schema(inp: InputFile) -> Schema:
    """The arrowipc Schema of one input, read from its footer or first message."""
    from .. import ipc      # loaded on first use: importing the data source stays cheap
    try:
        if inp.is_file_format:
            return ipc.open_file(inp.path).schema
        if _is_remote(inp.path):
            return ipc.open_stream(inp.path).schema
        with open(inp.path, "rb") as f:
            return ipc.open_stream(f).schema
    except ArrowInvalid as e:
        raise ArrowInvalid(f"arrowipc: cannot read the schema of {inp.path}: {e}") from e


def batch_sizes(path: str, with_rows: bool) -> list[tuple[int | None, int]]:
    """[(rows or None, bytes)] per record batch of an IPC file, from its footer alone.

    Row counts come from each batch's metadata header; bodies are neither read nor decompressed.
    """
    from .. import ipc
    from ..ipc._batch_decode import decode_record_batch_header
    reader = ipc.open_file(path)
    # The footer's blocks (offset, metadata length, body length) are the file's batch index.
    sizes: list[tuple[int | None, int]] = []
    for i, (_, meta_len, body_len) in enumerate(reader.record_batch_blocks):
        rows = None
        if with_rows:
            msg = reader.read_block_message("record batch", i, with_body=False)
            rows = decode_record_batch_header(msg.header).length
        sizes.append((rows, meta_len + body_len))
    return sizes


def group_batches(sizes: list[tuple[int | None, int]], rows_per_partition: int | None,
                  bytes_per_partition: int | None) -> list[tuple[int, int]]:
    """Consecutive [start, end) ranges whose rows (or bytes) stay within the target.

    A range closes before the batch that would take it past the target, so a range is over the
    target only when one batch alone is.
    """
    use_rows = rows_per_partition is not None
    target = rows_per_partition if use_rows else bytes_per_partition
    ranges: list[tuple[int, int]] = []
    start = acc = 0
    for i, (rows, nbytes) in enumerate(sizes):
        amount = rows if use_rows else nbytes
        assert amount is not None and target is not None     # rows are counted when use_rows
        if i > start and acc + amount > target:
            ranges.append((start, i))
            start, acc = i, 0
        acc += amount
    if start < len(sizes):
        ranges.append((start, len(sizes)))
    return ranges


def plan_ranges(inputs: list[InputFile], rows_per_partition: int | None = None,
                bytes_per_partition: int | None = None) -> list[BatchRange]:
    """The BatchRanges covering every input, in input order."""
    if rows_per_partition is None and bytes_per_partition is None:
        bytes_per_partition = DEFAULT_BYTES_PER_PARTITION
    out = []
    for inp in inputs:
        if not inp.is_file_format:
            out.append(BatchRange(inp.path, False, 0, None))
            continue
        sizes = batch_sizes(inp.path, rows_per_partition is not None)
        for start, end in group_batches(sizes, rows_per_partition, bytes_per_partition):
            out.append(BatchRange(inp.path, True, start, end))
    return out


_SIZE_SUFFIX = {"": 1, "b": 1, "k": 1 << 10, "kb": 1 << 10, "m": 1 << 20, "mb": 1 << 20,
                "g": 1 << 30, "gb": 1 << 30}


def parse_size(text: str, option: str) -> int:
    """A positive byte count from '1048576', '64m', '1g', '512kb'."""
    m = re.fullmatch(r"\s*(\d+)\s*([a-zA-Z]*)\s*", str(text))
    if not m or m.group(2).lower() not in _SIZE_SUFFIX or int(m.group(1)) <= 0:
        raise ArrowInvalid(f"arrowipc: option {option} expects a positive size such as "
                           f"134217728, 64m or 1g; got {text!r}")
    return int(m.group(1)) * _SIZE_SUFFIX[m.group(2).lower()]


def parse_count(text: str, option: str) -> int:
    """A positive integer option."""
    try:
        value = int(str(text).strip())
    except ValueError:
        value = 0
    if value <= 0:
        raise ArrowInvalid(f"arrowipc: option {option} expects a positive integer, got {text!r}")
    return value
