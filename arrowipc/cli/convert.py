"""`arrowipc convert` and `arrowipc recover`: rewrite IPC data, or rescue what a crash left.

Both read batch by batch and write through the package's own writers, so memory stays at about one
batch (plus one output batch when regrouping rows). Output goes to a temporary file beside the
destination and is renamed over it at the end: a failed run never leaves half a file behind.
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from typing import IO, TYPE_CHECKING, Any, BinaryIO, Callable, Iterable, Iterator, cast

if TYPE_CHECKING:
    from ..ipc import IpcWriteOptions
    from ..ipc import RecordBatchFileReader, RecordBatchStreamReader
    from ..table import RecordBatch
    from ..types import DictionaryType, MetadataLike, Schema

__all__ = ["BatchPairs", "compression_choice", "convert", "input_codec",
           "output_kind_or_usage_error", "Progress", "PROGRESS_MIN_BYTES", "refuse_same_file",
           "regroup", "replacements_as_deltas", "report", "run", "summary_line", "write_batches",
           "write_options"]

# a batch and the custom metadata of its message, as the readers' *_with_custom_metadata give
BatchPairs = Iterable[tuple["RecordBatch", Any]]

from ..ipc.format import ALKAID_MAGIC, FILE_MAGIC
from .common import (EXIT_OK, Input, UsageError, column_list, human_bytes, open_reader,
                     output_kind, plural, select_in_order, select_in_order_schema)

PROGRESS_MIN_BYTES = 64 << 20        # below this a run is too quick for a progress bar to help


# -- progress -------------------------------------------------------------------------------------

class Progress:
    """A one-line progress bar on stderr with rate and time left, redrawn at most ten times a second."""

    def __init__(self, total: int, label: str, enabled: bool,
                 stream: IO[str] | None = None) -> None:
        self.total = max(total, 1)
        self.label = label
        self.enabled = enabled
        self.stream = stream if stream is not None else sys.stderr
        self._start = time.monotonic()
        self._last = 0.0
        self._drawn = False

    @classmethod
    def auto(cls, total: int, label: str, forced: bool | None,
             stream: IO[str] | None = None) -> "Progress":
        """A bar that draws when `forced`, or (forced None) for big inputs on a terminal."""
        stream = stream if stream is not None else sys.stderr
        if forced is None:
            isatty = getattr(stream, "isatty", None)
            enabled = bool(isatty and isatty()) and total >= PROGRESS_MIN_BYTES
        else:
            enabled = forced
        return cls(total, label, enabled, stream)

    def update(self, done: int, force: bool = False) -> None:
        """Redraw with `done` bytes processed (at most ten times a second unless `force`)."""
        if not self.enabled:
            return
        now = time.monotonic()
        if not force and now - self._last < 0.1:
            return
        self._last = now
        self.stream.write("\r" + self.line(done, now - self._start))
        self.stream.flush()
        self._drawn = True

    def line(self, done: int, elapsed: float) -> str:
        """The bar after `elapsed` seconds with `done` of the total bytes processed."""
        frac = min(max(done / self.total, 0.0), 1.0)
        filled = int(frac * 30)
        rate = done / elapsed if elapsed > 0 else 0.0
        if frac >= 1.0:
            left = f"done in {_duration(elapsed)}"
        elif rate > 0:
            left = f"ETA {_duration((self.total - done) / rate)}"
        else:
            left = "ETA --:--"
        return (f"{self.label} {frac * 100:5.1f}% [{'#' * filled}{'.' * (30 - filled)}]"
                f" {human_bytes(done)} / {human_bytes(self.total)}, {human_bytes(int(rate))}/s, {left}")

    def close(self) -> None:
        """Draw the finished bar and end its line (nothing when it never drew)."""
        if self._drawn:
            self.update(self.total, force=True)
            self.stream.write("\n")
            self.stream.flush()


def _duration(seconds: float) -> str:
    """m:ss, or h:mm:ss from an hour on."""
    seconds = int(seconds + 0.5)
    h, rest = divmod(seconds, 3600)
    m, sec = divmod(rest, 60)
    return f"{h}:{m:02d}:{sec:02d}" if h else f"{m}:{sec:02d}"


# -- reading ---------------------------------------------------------------------------------------

def input_codec(inp: Input) -> str | None:
    """The compression of the input's first record batch (None when uncompressed)."""
    from .inspect import describe
    report = describe(inp, batch_limit=1)
    first = next((b["compression"] for b in report["batches"]), "none")
    return None if first == "none" else first


# -- writing ---------------------------------------------------------------------------------------

def write_options(compression: str | None) -> IpcWriteOptions:
    """The writers' options: `compression`, and dictionary deltas allowed."""
    from ..ipc import IpcWriteOptions
    return IpcWriteOptions(compression=compression, emit_dictionary_deltas=True)


class _Output:
    """The destination: a file renamed into place on success (arrowipc.ipc.sinks.AtomicFile), or
    stdout ("-")."""

    def __init__(self, path: str) -> None:
        from ..ipc.sinks import AtomicFile
        self.path = path
        self.atomic: AtomicFile | None = None
        self.sink: BinaryIO
        if path == "-":
            self.sink = sys.stdout.buffer
        else:
            self.atomic = AtomicFile(path)
            self.sink = self.atomic.file

    def commit(self) -> None:
        """Put the output in place (flush it, for stdout)."""
        if self.atomic is not None:
            self.atomic.commit()
        else:
            self.sink.flush()

    def abort(self) -> None:
        """Remove the temporary file (nothing to undo on stdout)."""
        if self.atomic is not None:
            self.atomic.abort()


def regroup(batches_with_metadata: BatchPairs, schema: Schema, rows: int
            ) -> Iterator[tuple[RecordBatch, None]]:
    """(batch, None) pairs of exactly `rows` rows (the last may be shorter)."""
    from ..data.concat import concat_array_data
    from ..ipc.dictionary import unify_table_dictionaries
    from ..table import RecordBatch, Table
    pending: list[RecordBatch] = []
    count = 0

    def combined(parts: list[RecordBatch]) -> RecordBatch:
        if len(parts) == 1:
            return parts[0]
        parts = unify_table_dictionaries(Table(schema, parts)).to_batches()
        cols = [concat_array_data([p._columns[i] for p in parts]) for i in range(len(schema))]
        return RecordBatch(schema, cols, sum(p.num_rows for p in parts))

    for batch, _ in batches_with_metadata:
        if batch.num_rows == 0:
            continue
        pending.append(batch)
        count += batch.num_rows
        if count < rows:
            continue
        whole = combined(pending)
        start = 0
        while whole.num_rows - start >= rows:
            yield whole.slice(start, rows), None
            start += rows
        pending = [whole.slice(start)] if start < whole.num_rows else []
        count = whole.num_rows - start
    if count:
        yield combined(pending), None


def _hashable(v: Any) -> Any:
    """`v` as a dict key: lists and dicts as tuples, each value with its type (1 and True
    differ)."""
    if isinstance(v, list):
        return tuple(_hashable(x) for x in v)
    if isinstance(v, dict):
        return tuple((k, _hashable(x)) for k, x in v.items())
    return (type(v), v)


def replacements_as_deltas(pairs: BatchPairs, schema: Schema) -> Iterator[tuple[RecordBatch, Any]]:
    """(batch, metadata) pairs whose top-level dictionaries only ever grow.

    The file format forbids replacing a dictionary; a stream may. Each dictionary column keeps one
    growing dictionary here: a batch whose dictionary does not extend it gets its indices
    remapped onto it, so the writer can emit deltas instead of replacements. (Dictionaries whose
    values hold dictionaries themselves are passed through unchanged.)
    """
    from .._core.arraydata import ArrayData
    from ..array import make_array
    from ..data.from_python import array_data_from_python
    from ..ipc.dictionary import dictionary_paths
    from ..table import RecordBatch
    nested = {p[0] for p, _ in dictionary_paths(schema) if len(p) > 1}
    dict_cols = [p[0] for p, _ in dictionary_paths(schema) if len(p) == 1 and p[0] not in nested]
    if not dict_cols:
        yield from pairs
        return
    state: dict[int, tuple[list[Any], dict[Any, int] | None, Any]] = \
        {i: ([], None, None) for i in dict_cols}    # values, value -> index, last dictionary
    for batch, custom in pairs:
        columns = list(batch._columns)
        changed = False
        for i in dict_cols:
            col = columns[i]
            values, index, last = state[i]
            if col.dictionary is None or col.dictionary is last:
                continue
            new = make_array(col.dictionary).to_pylist()
            if new[:len(values)] == values:
                values.extend(new[len(values):])
                state[i] = (values, None, col.dictionary)
                continue
            if index is None:
                index = {}
                for k, v in enumerate(values):
                    index.setdefault(_hashable(v), k)
            for v in new:
                if _hashable(v) not in index:
                    index[_hashable(v)] = len(values)
                    values.append(v)
            dtype = cast("DictionaryType", schema.field(i).type)
            indices_only = col.copy_with(type=dtype.index_type, dictionary=None)
            positions = make_array(indices_only).to_pylist()
            remapped = [None if x is None else index[_hashable(new[x])] for x in positions]
            dictionary = array_data_from_python(values, dtype.value_type)
            indices = array_data_from_python(remapped, dtype.index_type)
            columns[i] = ArrayData(dtype, indices.length, 0, indices.null_count, indices.buffers,
                                   [], dictionary)
            state[i] = (list(values), index, dictionary)
            changed = True
        yield (RecordBatch(batch.schema, columns, batch.num_rows) if changed else batch), custom


def write_batches(schema: Schema, pairs: BatchPairs, dst: str, kind: str,
                  compression: str | None, footer_metadata: MetadataLike = None,
                  magic: bytes = FILE_MAGIC, progress: Progress | None = None,
                  position: Callable[[], int] | None = None) -> dict[str, Any]:
    """Write (batch, custom_metadata) pairs to `dst`; a summary dict of what was written."""
    from ..ipc import RecordBatchFileWriter, RecordBatchStreamWriter, new_file, new_stream
    out = _Output(dst)
    options = write_options(compression)
    batches = rows = 0
    try:
        writer: RecordBatchFileWriter | RecordBatchStreamWriter
        if kind == "file":
            writer = new_file(out.sink, schema, options=options, metadata=footer_metadata,
                              magic=magic)
        else:
            writer = new_stream(out.sink, schema, options=options)
        with writer:
            for batch, custom in pairs:
                writer.write_batch(batch, custom_metadata=custom)
                batches += 1
                rows += batch.num_rows
                if progress is not None and position is not None:
                    progress.update(position())
        out.commit()
    except BaseException:
        out.abort()
        raise
    finally:
        if progress is not None:
            progress.close()
    return {"path": dst, "format": kind, "batches": batches, "rows": rows,
            "compression": compression or "none",
            "magic": magic.decode() if kind == "file" else None}


def _stream_position(reader: RecordBatchStreamReader) -> Callable[[], int]:
    """How many bytes of the input the stream reader has consumed."""
    src = getattr(reader, "_source", None)
    return (lambda: getattr(src, "pos", 0)) if src is not None else (lambda: 0)


def _file_batches(reader: RecordBatchFileReader, counter: list[int]) -> BatchPairs:
    """The file's batches, counting them in counter[0]."""
    for pair in reader.iter_batches_with_custom_metadata():
        counter[0] += 1
        yield pair


def convert(inp: Input, dst: str, kind: str, compression: str | None, batch_rows: int | None,
            columns: list[str] | None, magic: bytes, progress: bool | None) -> dict[str, Any]:
    """Rewrite `inp` as `dst`; a summary dict of what was written."""
    from ..ipc import RecordBatchFileReader
    reader = open_reader(inp, columns)
    schema = select_in_order_schema(reader.schema, columns)
    bar = Progress.auto(inp.size, "converting", progress)
    pairs: BatchPairs
    position: Callable[[], int]
    if isinstance(reader, RecordBatchFileReader):       # inp.kind == "file"
        counter = [0]
        pairs = _file_batches(reader, counter)
        n = max(reader.num_record_batches, 1)

        def file_position() -> int:        # batches done, as a share of the input's bytes
            return inp.size * counter[0] // n
        position = file_position
        footer_metadata = reader.metadata
    else:
        pairs = reader.iter_batches_with_custom_metadata()
        position = _stream_position(reader)
        footer_metadata = None
    pairs = ((select_in_order(b, columns), m) for b, m in pairs)
    if batch_rows:
        pairs = regroup(pairs, schema, batch_rows)
    if kind == "file" and inp.kind == "stream":
        pairs = replacements_as_deltas(pairs, schema)
    return write_batches(schema, pairs, dst, kind, compression, footer_metadata if kind == "file"
                         else None, magic, bar, position)


# -- the command ----------------------------------------------------------------------------------

def output_kind_or_usage_error(dst: str, to: str | None) -> str:
    """output_kind, with a usage error (exit status 2) when it cannot tell."""
    try:
        return output_kind(dst, to)
    except ValueError as e:
        raise UsageError(str(e)) from None


def compression_choice(choice: str | None, detect: Callable[[], str | None]) -> str | None:
    """The output codec: --compression's choice, or the input's (`detect()`) when absent."""
    if choice is None:
        return detect()                       # keep the input's codec
    return None if choice == "none" else choice


def refuse_same_file(src: str, dst: str) -> None:
    """A usage error when the output would overwrite the input."""
    if src != "-" and dst != "-" and os.path.exists(dst) and os.path.samefile(src, dst):
        raise UsageError(f"the output {dst!r} is the input: write to another path")


def summary_line(s: dict[str, Any]) -> str:
    """One line describing what write_batches wrote."""
    kind = f"file (magic {s['magic']})" if s["format"] == "file" else "stream"
    return (f"{kind}, {s['batches']:,} record batch{'es' if s['batches'] != 1 else ''}, "
            f"{s['rows']:,} row{'s' if s['rows'] != 1 else ''}, compression {s['compression']}")


def report(args: argparse.Namespace, line: str) -> None:
    """Print the summary `line` unless --quiet."""
    if args.quiet:
        return
    # with the data on stdout, the summary goes to stderr
    print(line, file=sys.stderr if args.dst == "-" else sys.stdout)


def _run_dataset(args: argparse.Namespace, files: list[str]) -> int:
    """`arrowipc convert DIR OUT`: the dataset's files merged into one file or stream."""
    from .datasets import open_dataset
    kind = output_kind_or_usage_error(args.dst, args.to)
    if args.alkaid:
        raise UsageError("--alkaid is for one input file, not a dataset")
    compression = (input_codec(Input(files[0])) if args.compression is None
                   else None if args.compression == "none" else args.compression)
    data = open_dataset(args.src)
    scanner = data.scanner(columns=column_list(args.columns))
    pairs: Any = ((b, None) for b in scanner.to_batches())
    if args.batch_rows:
        pairs = regroup(pairs, scanner.projected_schema, args.batch_rows)
    summary = write_batches(scanner.projected_schema, pairs, args.dst, kind, compression)
    report(args, f"wrote {'<stdout>' if args.dst == '-' else args.dst} from "
                 f"{plural(len(files), 'file')}: {summary_line(summary)}")
    return EXIT_OK


def run(args: argparse.Namespace) -> int:
    """`arrowipc convert` with parsed arguments; returns the exit status."""
    from .datasets import dataset_files
    files = dataset_files(args.src)
    if files is not None:                   # a directory or a glob: a dataset
        return _run_dataset(args, files)
    kind = output_kind_or_usage_error(args.dst, args.to)
    if args.alkaid and kind != "file":
        raise UsageError("--alkaid sets the file magic: it needs a file output "
                         "(.arrow or --to file)")
    refuse_same_file(args.src, args.dst)
    inp = Input(args.src)
    compression = compression_choice(args.compression, lambda: input_codec(inp))
    summary = convert(inp, args.dst, kind, compression, args.batch_rows,
                      column_list(args.columns), ALKAID_MAGIC if args.alkaid else FILE_MAGIC,
                      args.progress)
    report(args, f"wrote {'<stdout>' if args.dst == '-' else args.dst}: {summary_line(summary)}")
    return EXIT_OK
