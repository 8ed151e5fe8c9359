"""spark.readStream.format("arrowipc") on the Python data source: a directory files arrive in.

    spark.readStream.format("arrowipc").schema("id bigint, name string")
         .option("maxFilesPerTrigger", 100).load("incoming/")

Each trigger lists the load path and takes the complete files (`is_complete`: an IPC file ends
with its magic, a stream with its end-of-stream marker) it has not read yet, oldest modification
time first. The offset is a high-water mark over (modification time, path): a micro-batch reads
the files whose key lies in (start, end], so a query restarted from its checkpoint replays an
unfinished batch with the same files and goes on after the committed one. The price of needing
no state beyond the offset: a file that appears with a modification time older than files
already read (moved in with its original time) is not read; give it a new time (os.utime) when
renaming it into place. The JVM source numbers files in a log in the checkpoint instead and has
no such limit.

A load path holding `col=value` directories (or read with option basePath) streams as a
partitioned table: each trigger lists every partition's directory (new ones too), and the files
read carry their directories' values as the partition columns (typed by the stream's schema).
A filter on a partition column does not prune files here: Spark gives a Python stream reader no
filters, so every new file is read and Spark drops the rows.

Planning a batch's files and reading them are the batch reader's (datasource.ArrowIpcReader).
"""
from __future__ import annotations

import os

from pyspark.sql.datasource import DataSourceStreamReader

__all__ = ["ArrowIpcStreamReader", "INITIAL_KEY", "is_complete", "OPT_LATEST_FIRST",
           "OPT_MAX_FILES_PER_TRIGGER"]

try:                             # pyspark >= 4.2
    from pyspark.sql.streaming.datasource import SupportsTriggerAvailableNow
except ImportError:              # pragma: no cover - older pyspark: Trigger.AvailableNow reads all
    SupportsTriggerAvailableNow = object  # type: ignore[assignment,misc]

from datetime import timedelta

from ..errors import ArrowException, ArrowInvalid
from .inputs import (OPT_PATH, _is_remote, _option, absolute, detect_format, find_input_paths,
                     parse_count, read_input_schema)

_ONE_US = timedelta(microseconds=1)

TYPE_CHECKING = False               # typing itself is not imported at run time
if TYPE_CHECKING:
    from typing import Any, Iterator, Mapping

    Key = tuple[int, str]               # (modification time in ns, path)
    Offset = dict[str, Any]

OPT_MAX_FILES_PER_TRIGGER = "maxFilesPerTrigger"
OPT_LATEST_FIRST = "latestFirst"


def _open_bytes(path: str) -> tuple[Any, int]:
    """(binary file object, size) of a local path or an fsspec URL."""
    if _is_remote(path):
        from ..ipc.filesystems import resolve
        _kind, fs, fs_path = resolve(path)
        f = fs.open(fs_path, "rb")
        return f, int(f.size)
    f = open(path, "rb")
    return f, os.fstat(f.fileno()).st_size


def is_complete(path: str) -> bool:
    """Whether the IPC file or stream at `path` (a local path or an fsspec URL) has been written
    completely (never raises: a file that cannot be read as IPC, or not yet, is not complete)."""
    from .. import ipc
    from ..ipc.format import FORMAT_FILE, sniff
    from ..ipc.message import read_message_header
    from ..ipc.sources import FileSource
    try:
        f, size = _open_bytes(path)
        with f:
            head = f.read(8)
            kind = sniff(head)
            if kind is None or not head:
                return False
            if kind == FORMAT_FILE:
                ipc.open_file(path).close()  # checks the trailing magic and the footer
                return True
            f.seek(0)
            source = FileSource(f, name=path)
            while source.pos < size:
                msg = read_message_header(source, where=path)
                if msg is None:
                    return True               # the end-of-stream marker
                end = source.pos + msg.body_length
                if end > size:
                    return False
                source.pos = f.seek(end)
            return False                      # whole messages so far, but no marker yet
    except (OSError, ArrowException, ValueError):
        return False


# where fsspec filesystems put a file's modification time: local, s3fs, adlfs, gcsfs, others,
# and memory:// (whose files are never modified after creation)
_MTIME_KEYS = ("mtime", "LastModified", "last_modified", "updated", "modified", "created")


def _mtime_ns(path: str) -> int:
    """The modification time of a local path or an fsspec URL, in ns since the epoch."""
    if not _is_remote(path):
        return os.stat(path).st_mtime_ns
    from datetime import datetime, timezone
    from ..ipc.filesystems import resolve
    _kind, fs, fs_path = resolve(path)
    info = fs.info(fs_path)
    for name in _MTIME_KEYS:
        value = info.get(name)
        if value is None:
            continue
        if isinstance(value, str):
            value = datetime.fromisoformat(value.replace("Z", "+00:00"))
        if isinstance(value, datetime):
            if value.tzinfo is None:
                value = value.replace(tzinfo=timezone.utc)
            epoch = datetime(1970, 1, 1, tzinfo=timezone.utc)
            return (value - epoch) // _ONE_US * 1000
        return int(float(value) * 1e9)
    raise ArrowInvalid(f"arrowipc: readStream needs each file's modification time, and the "
                       f"filesystem of {path} reports none (expected one of "
                       f"{', '.join(_MTIME_KEYS)} in its info(), found {sorted(info)})")


def _pyspark_version() -> str:
    import pyspark
    return str(pyspark.__version__)


def _key(path: str) -> Key:
    return (_mtime_ns(path), path)


def _offset(key: Key) -> Offset:
    return {"mtime_ns": key[0], "path": key[1]}


def _key_of(offset: Offset) -> Key:
    return (int(offset["mtime_ns"]), str(offset["path"]))


INITIAL_KEY: Key = (-1, "")


class ArrowIpcStreamReader(DataSourceStreamReader, SupportsTriggerAvailableNow):
    """The Python source's micro-batch reader; `batch_reader` plans and reads the files."""

    def __init__(self, options: Mapping[str, Any], batch_reader: Any) -> None:
        self.options = dict(options)
        self.batch_reader = batch_reader
        max_files = _option(options, OPT_MAX_FILES_PER_TRIGGER)
        self.max_files = (parse_count(max_files, OPT_MAX_FILES_PER_TRIGGER)
                          if max_files is not None else None)
        if self.max_files is not None and SupportsTriggerAvailableNow is object:
            # before 4.2 Spark asks latestOffset() without the start: after a restart a capped
            # answer could lie behind the committed offset, and files would be read again
            raise ArrowInvalid(f"arrowipc: option {OPT_MAX_FILES_PER_TRIGGER} needs pyspark "
                               f">= 4.2 on the Python source (or the JVM source); this is "
                               f"pyspark {_pyspark_version()}")
        latest_first = str(_option(options, OPT_LATEST_FIRST, "false")).lower()
        if latest_first not in ("true", "false"):
            raise ArrowInvalid(f"arrowipc: option {OPT_LATEST_FIRST} must be true or false; "
                               f"got {latest_first!r}")
        if latest_first == "true":
            raise ArrowInvalid("arrowipc: latestFirst=true needs the JVM data source (the jar "
                               "on Spark's classpath): the Python source's offset is a "
                               "high-water mark of modification times")
        self.available_now: Key | None = None        # Trigger.AvailableNow: the last key present at its start
        self.last = _offset(INITIAL_KEY)  # the offset returned last (pyspark < 4.2 gives no start)
        # a partitioned directory: its partition columns, and each file's raw directory values
        self.partition_columns: tuple[str, ...] | None = None
        self.partition_values: dict[str, tuple[str | None, ...]] = {}

    def _listed(self) -> list[str]:
        """The data files under the load path now; of a partitioned directory (col=value
        directories, or option basePath), those of every partition, their directories'
        values kept in `self.partition_values` for `partitions`."""
        from .partitions import discover, is_partitioned
        path = str(_option(self.options, OPT_PATH, ""))
        try:
            if not is_partitioned(path, self.options):
                return find_input_paths(path)
            found = discover(path, self.options)
        except ArrowInvalid as e:
            if "names no" in str(e):
                return []                # nothing there yet
            raise
        self.partition_columns = found.columns
        for file, values in found.files:
            self.partition_values[absolute(file)] = values
        return [file for file, _ in found.files]

    def _complete_files(self, after: Key, upto: Key | None = None) -> list[tuple[Key, str]]:
        """[(key, path)] of the complete files with after < key (<= upto), in key order."""
        paths = self._listed()
        out = []
        for p in paths:
            path = absolute(p)
            try:
                key = _key(path)
            except OSError:
                continue                 # removed since listed
            if key > after and (upto is None or key <= upto) and is_complete(path):
                out.append((key, path))
        out.sort()
        return out

    def initialOffset(self) -> Offset:
        """The offset before any file: a stream starts with every complete file present."""
        return _offset(INITIAL_KEY)

    def getDefaultReadLimit(self) -> Any:
        """At most maxFilesPerTrigger files per micro-batch when the option is set, else all
        complete files."""
        from pyspark.sql.streaming.datasource import ReadAllAvailable, ReadMaxFiles
        return ReadMaxFiles(self.max_files) if self.max_files else ReadAllAvailable()

    def latestOffset(self, start: Offset | None = None, limit: Any = None) -> Offset:
        """The offset of the last complete file the next micro-batch reads after `start`
        (the offset returned last when None), within `limit` files; `start` when none is new."""
        if start is None:                # pyspark < 4.2, which has no read limits either
            start = self.last
        found = self._complete_files(_key_of(start), self.available_now)
        cap = self.max_files
        if limit is not None:
            from pyspark.sql.streaming.datasource import ReadAllAvailable, ReadMaxFiles
            if isinstance(limit, ReadMaxFiles):
                cap = limit.max_files
            elif isinstance(limit, ReadAllAvailable):
                cap = None               # what the trigger asks for; row or byte limits do not
        if cap:                          # apply to files
            found = found[:cap]
        self.last = _offset(found[-1][0]) if found else start
        return self.last

    def prepareForTriggerAvailableNow(self) -> None:
        """Trigger.AvailableNow: remember the last complete file present now, so the stream
        stops after reading up to it."""
        found = self._complete_files(INITIAL_KEY)
        self.available_now = found[-1][0] if found else INITIAL_KEY

    def partitions(self, start: Offset, end: Offset) -> list[Any]:
        """The partitions reading the complete files after `start` up to `end`, planned as a
        batch read plans them (their schemas checked against the stream's)."""
        files = [path for _, path in self._complete_files(_key_of(start), _key_of(end))]
        if not files:
            return []
        if self.partition_columns is not None:
            from .partitions import Discovered
            # types come from the stream's schema: the directories' own are not used here
            found = Discovered(self.partition_columns,
                               tuple((f, self.partition_values[f]) for f in files),
                               ("string",) * len(self.partition_columns))
            parts: list[Any] = self.batch_reader.plan_partitioned(found, stream=True)
            return parts
        inputs = []
        for path in files:
            inp = detect_format(path)
            inputs.append((inp, read_input_schema(inp)))
        parts = self.batch_reader.plan(inputs, stream=True)
        return parts

    def read(self, partition: Any) -> Iterator[Any]:
        """The pyarrow record batches of one partition (read by the batch reader)."""
        batches: Iterator[Any] = self.batch_reader.read(partition)
        return batches

    def commit(self, end: Offset) -> None:
        """Spark has processed everything up to `end`; nothing is kept to release."""
        pass                             # nothing to release: the offset is the whole state
