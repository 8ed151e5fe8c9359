"""The "arrowipc" PySpark data source: Arrow IPC files and streams, read and written by arrowipc.

    spark.read.format("arrowipc").load("events/")            # a file, a directory or a glob
    df.write.format("arrowipc").mode("overwrite").option("compression", "zstd").save("out/")

Planning (file discovery, schemas, footers) runs on the driver; read and write run in the
executors' Python workers, which need arrowipc and pyarrow installed. pyarrow is imported only
inside the methods that run there, so importing this module stays cheap.
"""
from __future__ import annotations

import os
import uuid
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, cast

from pyspark.sql.datasource import (DataSource, DataSourceArrowWriter, DataSourceReader,
                                    InputPartition, WriterCommitMessage)

from ..errors import ArrowInvalid
from . import commit as C
from .partitions import Discovered
from .inputs import (OPT_PATH, _option, absolute, detect_format, find_input_paths, local_path,
                     parse_count, parse_size, plan_ranges, read_input_schema)

if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator, Mapping

    import pyarrow as pa
    from pyspark.sql.datasource import Filter
    from pyspark.sql.types import StructType

    from ..ipc.reader import RecordBatchFileReader, RecordBatchStreamReader
    from ..ipc.writer import RecordBatchFileWriter, RecordBatchStreamWriter
    from ..table import RecordBatch
    from ..types import Schema
    from .inputs import InputFile
    from .streaming import ArrowIpcStreamReader

    Inputs = list[tuple[InputFile, Schema]]     # each input with its arrowipc schema
    # what a partition reads: the included_fields (None: all) and, per output column, its
    # position in the batches read (None: read as nulls)
    ColumnPlan = tuple[list[int] | None, tuple[int | None, ...]]
    PushedFilter = tuple[str, str, Any]         # (column, ipc.statistics op, value)

__all__ = ["ArrowIpcCommitMessage", "ArrowIpcDataSource", "ArrowIpcFilteringReader",
           "ArrowIpcPythonDataSource",
           "ArrowIpcPartition", "ArrowIpcReader", "ArrowIpcWriter", "DEFAULT_ROWS_PER_BATCH",
           "OPT_BYTES_PER_PARTITION", "OPT_COMPRESSION", "OPT_DURABLE", "OPT_FILTER_PUSHDOWN",
           "OPT_FORMAT", "OPT_PATH", "OPT_ROWS_PER_BATCH", "OPT_ROWS_PER_PARTITION", "OPT_SCHEMA",
           "OPT_STATISTICS"]

# Read options
OPT_SCHEMA = "schema"                    # a DDL string; same effect as DataFrameReader.schema()
OPT_ROWS_PER_PARTITION = "rowsPerPartition"
OPT_BYTES_PER_PARTITION = "bytesPerPartition"
OPT_FILTER_PUSHDOWN = "filterPushdown"   # true: skip batches by statistics (Spark >= 4.1, see below)
# Write options
OPT_COMPRESSION = "compression"          # none | lz4 | zstd
OPT_FORMAT = "format"                    # file (.arrow) | stream (.arrows)
OPT_ROWS_PER_BATCH = "rowsPerBatch"
OPT_STATISTICS = "statistics"            # true (default): batch min/max/null counts (ipc.statistics)
OPT_DURABLE = "durable"                  # false (default) | true: fsync files and the commit
DEFAULT_ROWS_PER_BATCH = 65536

_COMPRESSIONS = {"none": None, "uncompressed": None, "lz4": "lz4", "lz4_frame": "lz4",
                 "zstd": "zstd"}
_FORMATS = {"file": ".arrow", "stream": ".arrows"}


class ArrowIpcPartition(InputPartition):
    """Record batches [start, end) of one input (end None: a whole stream).

    `columns[i]` is the position, in the batches read with `included_fields`, of the column that
    feeds data column i (None: the file lacks it and it reads as nulls); `values` are the
    partition column values of its directories (a partitioned table).
    """

    def __init__(self, index: int, path: str, is_file_format: bool, start: int, end: int | None,
                 included: list[int] | None, columns: tuple[int | None, ...],
                 values: tuple[Any, ...] = (), positions: tuple[int, ...] = ()) -> None:
        super().__init__(index)
        # a partitioned table's values, and the output columns they fill (ascending)
        self.values = values
        self.positions = positions
        self.path = path
        self.is_file_format = is_file_format
        self.start = start
        self.end = end
        self.included = included
        self.columns = columns

    def __repr__(self) -> str:
        where = f"batches [{self.start}, {self.end})" if self.is_file_format else "stream"
        return f"ArrowIpcPartition({self.value}, {self.path!r}, {where})"


@dataclass
class ArrowIpcCommitMessage(WriterCommitMessage):
    """What one write task produced: [(temporary path, final file name)], rows and bytes."""
    files: list[tuple[str, str]] = field(default_factory=list)
    rows: int = 0
    bytes: int = 0


def _match_columns(file_schema: Schema, spark_schema: StructType, path: str
                   ) -> tuple[int | None, ...]:
    """For each field of a user-given schema, the index of the file column feeding it."""
    from .spark_types import spark_type_of
    names = file_schema.names
    lowered: dict[str, list[int]] = {}
    for i, n in enumerate(names):
        lowered.setdefault(n.lower(), []).append(i)
    out: list[int | None] = []
    for f in spark_schema.fields:
        if names.count(f.name) == 1:
            i = names.index(f.name)
        elif len(lowered.get(f.name.lower(), [])) == 1:   # Spark resolves names case-insensitively
            i = lowered[f.name.lower()][0]
        elif f.name in names or f.name.lower() in lowered:
            raise ArrowInvalid(f"arrowipc: {path} has several columns named {f.name!r}")
        elif not f.nullable:
            raise ArrowInvalid(f"arrowipc: {path} has no column {f.name!r}, which the given "
                               f"schema declares non-nullable")
        else:
            out.append(None)
            continue
        spark_type_of(file_schema.field(i).type, f"field {names[i]!r} of {path}")
        out.append(i)
    return tuple(out)


def _inputs(options: Mapping[str, Any], discovered: Discovered | None = None) -> Inputs:
    """[(InputFile, arrowipc Schema)] for the load path (the files of a partitioned table when
    `discovered` is given), resolved to absolute paths."""
    if discovered is not None:
        paths = [f for f, _ in discovered.files]
    else:
        paths = find_input_paths(_option(options, OPT_PATH, ""))
    inputs = [detect_format(absolute(p)) for p in paths]
    return [(inp, read_input_schema(inp)) for inp in inputs]


def _discovered(options: Mapping[str, Any]) -> Discovered | None:
    """The files and partition values of a partitioned load path (None: not partitioned)."""
    from .partitions import discover, is_partitioned
    path = str(_option(options, OPT_PATH, ""))
    return discover(path, options) if is_partitioned(path, options) else None


def _partition_type(name: str) -> Any:
    """The Spark DataType of a partitions.infer_type name."""
    from pyspark.sql import types as T
    if name.startswith("decimal"):
        return T.DecimalType(int(name[8:-3]), 0)
    return {"integer": T.IntegerType(), "bigint": T.LongType(), "double": T.DoubleType(),
            "date": T.DateType(), "timestamp": T.TimestampType(), "string": T.StringType()}[name]


def _without(schema: StructType, names: Iterable[str]) -> StructType:
    """`schema` without the fields named (case-insensitively) in `names`."""
    from pyspark.sql.types import StructType
    drop = {n.lower() for n in names}
    return StructType([f for f in schema.fields if f.name.lower() not in drop])


def _common_spark_schema(inputs: Inputs) -> StructType:
    """The Spark schema every input shares; raises naming the first file that differs."""
    from .spark_types import describe_difference, spark_schema_of
    first_inp, first_schema = inputs[0]
    expected = spark_schema_of(first_schema, first_inp.path)
    for inp, schema in inputs[1:]:
        got = spark_schema_of(schema, inp.path)
        if got != expected:
            raise ArrowInvalid(
                f"arrowipc: the schema of {inp.path} differs from that of {first_inp.path}: "
                f"{describe_difference(got, expected)}. Read them separately, or give a schema "
                f"(DataFrameReader.schema(...) or option 'schema') to read them together")
    return expected


class ArrowIpcDataSource(DataSource):
    """Spark data source "arrowipc" over Arrow IPC files (.arrow/.feather) and streams (.arrows).

    Read options: path (file, directory or glob), schema (DDL; or DataFrameReader.schema()),
    rowsPerPartition or bytesPerPartition (default 128m) to split files by record batch ranges,
    filterPushdown (false; true skips batches by statistics and needs Spark's
    spark.sql.python.filterPushdown.enabled).
    Write options: compression (none/lz4/zstd), format (file/stream), rowsPerBatch (65536),
    statistics (true: each batch's min/max/null counts, for readers that skip batches).
    Write modes: append and overwrite.
    Streams (spark.readStream over a directory files arrive in, see streaming.py):
    maxFilesPerTrigger, latestFirst (false).
    """

    @classmethod
    def name(cls) -> str:
        """The format name Spark registers the source under: "arrowipc"."""
        return "arrowipc"

    def schema(self) -> StructType | str:
        """The `schema` option (a DDL string) when given, else the Spark schema the input
        files share (read from their footers or first messages)."""
        ddl: str | None = _option(self.options, OPT_SCHEMA)
        if ddl:
            return ddl
        # Remembered on the instance, which Spark pickles into the read planner: an inferred
        # schema means the files must agree; a schema given by the user means conform to it.
        self._schema_inferred = True
        discovered = _discovered(self.options)
        if discovered is not None:
            # the files' columns (a partition column a file also holds reads from the
            # directories), then the partition columns, as Spark's file sources order them
            from pyspark.sql.types import StructField
            data = _without(_common_spark_schema(_inputs(self.options, discovered)),
                            discovered.columns)
            for name, type_name in zip(discovered.columns, discovered.types):
                data.add(StructField(name, _partition_type(type_name), True))
            return data
        try:
            inputs = _inputs(self.options)
        except ArrowInvalid as e:
            if "names no" not in str(e):
                raise
            raise ArrowInvalid(f"{e}; a stream over a directory that holds no files yet needs a "
                               f"schema: spark.readStream.schema(...)") from None
        return _common_spark_schema(inputs)

    def _served_as_arrowipc(self) -> None:
        # "arrowipc" reaches this class only when the JVM source's jar is not on the classpath
        if self.name() == "arrowipc":
            from .jar import warn_python_source
            warn_python_source()

    def reader(self, schema: StructType) -> ArrowIpcReader:
        """The batch reader for `schema`; one that pushes filters when filterPushdown=true."""
        self._served_as_arrowipc()
        inferred = getattr(self, "_schema_inferred", False)
        # Spark fails every read of a reader that implements pushFilters unless
        # spark.sql.python.filterPushdown.enabled is on, and a reader cannot see that setting:
        # the option that says it is on chooses the reader that pushes filters.
        if str(_option(self.options, OPT_FILTER_PUSHDOWN, "false")).lower() == "true":
            return ArrowIpcFilteringReader(self.options, schema, inferred)
        return ArrowIpcReader(self.options, schema, inferred)

    def streamReader(self, schema: StructType) -> ArrowIpcStreamReader:
        """The micro-batch reader over a directory that files arrive in (streaming.py)."""
        self._served_as_arrowipc()
        from .streaming import ArrowIpcStreamReader
        return ArrowIpcStreamReader(self.options, ArrowIpcReader(
            self.options, schema, getattr(self, "_schema_inferred", False)))

    def writer(self, schema: StructType, overwrite: bool) -> ArrowIpcWriter:
        """The writer of a DataFrame with `schema`; `overwrite` replaces the output's files."""
        self._served_as_arrowipc()
        return ArrowIpcWriter(self.options, schema, overwrite)


class ArrowIpcPythonDataSource(ArrowIpcDataSource):
    """The Python source under its own name, "arrowipc_python": where the JVM source's jar is on
    the classpath "arrowipc" resolves to the JVM, and this name still reaches the Python source
    (for fsspec URLs such as s3:// or gs:// that the JVM cannot open)."""

    @classmethod
    def name(cls) -> str:
        """The format name of the Python source alone: "arrowipc_python"."""
        return "arrowipc_python"


class ArrowIpcReader(DataSourceReader):
    """Plans the partitions of a batch read (record batch ranges of the input files, the
    columns the schema needs) and reads them on the executors as pyarrow record batches."""

    def __init__(self, options: Mapping[str, Any], schema: StructType,
                 schema_inferred: bool) -> None:
        self.options = dict(options)
        self.spark_schema = schema
        self.schema_inferred = schema_inferred
        options = self.options
        rows = _option(options, OPT_ROWS_PER_PARTITION)
        nbytes = _option(options, OPT_BYTES_PER_PARTITION)
        if rows is not None and nbytes is not None:
            raise ArrowInvalid(f"arrowipc: give {OPT_ROWS_PER_PARTITION} or "
                               f"{OPT_BYTES_PER_PARTITION}, not both")
        self.rows = parse_count(rows, OPT_ROWS_PER_PARTITION) if rows is not None else None
        self.nbytes = parse_size(nbytes, OPT_BYTES_PER_PARTITION) if nbytes is not None else None

    def partitions(self) -> list[ArrowIpcPartition]:
        """The partitions of the load path's files (see `plan`); of a partitioned table, those
        of the partitions the pushed filters on partition columns do not rule out."""
        discovered = _discovered(self.options)
        if discovered is None:
            return self.plan(_inputs(self.options))
        return self.plan_partitioned(discovered, getattr(self, "filters", None) or [])

    def plan_partitioned(self, discovered: Discovered, pushed: list[PushedFilter] | None = None,
                         stream: bool = False) -> list[ArrowIpcPartition]:
        """The partitions reading the files of a partitioned table, each with the values of
        its directories, of the partitions the `pushed` filters on partition columns do not
        rule out; `stream` as for `plan`."""
        from .partitions import matches, value_of
        by_name = {f.name.lower(): f for f in self.spark_schema.fields}
        # the output positions of the partition columns the schema holds, and their types
        wanted = [(k, name, by_name[name.lower()]) for k, name in enumerate(discovered.columns)
                  if name.lower() in by_name]
        names = [f.name for f in self.spark_schema.fields]
        positions = [names.index(field.name) for _, _, field in wanted]
        order = sorted(range(len(wanted)), key=lambda j: positions[j])
        data_schema = _without(self.spark_schema, discovered.columns)
        pushed = pushed or []
        values: dict[str, tuple[Any, ...]] = {}
        kept = []
        for path, raw in discovered.files:
            typed = tuple(value_of(raw[k], field.dataType.simpleString(), path)
                          for k, _, field in wanted)
            row = {field.name.lower(): v for (_, _, field), v in zip(wanted, typed)}
            if all(matches(row[c.lower()], op, v) for c, op, v in pushed if c.lower() in row):
                kept.append((path, raw))
                values[os.path.abspath(path)] = typed
        if not kept:
            return []
        parts = self.plan(_inputs(self.options, Discovered(discovered.columns, tuple(kept),
                                                           discovered.types)),
                          stream=stream, data_schema=data_schema)
        for p in parts:
            p.values = tuple(values[p.path][j] for j in order)
            p.positions = tuple(positions[j] for j in order)
        return parts

    def plan(self, inputs: Inputs, stream: bool = False, data_schema: StructType | None = None
             ) -> list[ArrowIpcPartition]:
        """The partitions reading `inputs` [(InputFile, Schema)]; `stream`: they arrived in a
        streamed directory, whose files must each have the stream's schema when it was inferred;
        `data_schema`: the columns the files give (default: the read schema)."""
        spark_schema = self.spark_schema if data_schema is None else data_schema
        if self.schema_inferred and stream:
            from .spark_types import describe_difference, spark_schema_of
            for inp, schema in inputs:
                got = spark_schema_of(schema, inp.path)
                if got != spark_schema:      # of a partitioned table: its files' columns
                    raise ArrowInvalid(
                        f"arrowipc: the schema of {inp.path}, which arrived in the stream, "
                        f"differs from the stream's: {describe_difference(got, spark_schema)}"
                        f". Give the stream a schema (readStream.schema(...)) to read files that "
                        f"differ")
        elif self.schema_inferred:
            _common_spark_schema(inputs)
        column_plans: dict[str, ColumnPlan] = {}
        for inp, schema in inputs:
            columns: tuple[int | None, ...]
            if self.schema_inferred and data_schema is None:
                columns = tuple(range(len(schema)))
            else:
                columns = _match_columns(schema, spark_schema, inp.path)
            used = sorted({c for c in columns if c is not None})
            if used == list(range(len(schema))):
                column_plans[inp.path] = (None, columns)
            else:   # read only the columns used; positions shift to the projected batch
                position = {c: k for k, c in enumerate(used)}
                column_plans[inp.path] = (used, tuple(None if c is None else position[c]
                                                      for c in columns))
        parts: list[ArrowIpcPartition] = []
        for r in plan_ranges([inp for inp, _ in inputs], self.rows, self.nbytes):
            included, columns = column_plans[r.path]
            parts.append(ArrowIpcPartition(len(parts), r.path, r.is_file_format, r.start, r.end,
                                           included, columns))
        return parts

    def read(self, partition: Any) -> Iterator[pa.RecordBatch]:
        """The partition's batches as pyarrow record batches of the Spark schema's Arrow
        types (columns the file lacks read as nulls)."""
        if not isinstance(partition, ArrowIpcPartition):
            return iter(())      # Spark's placeholder when there is nothing to read
        return self._read(partition)

    def _read(self, p: ArrowIpcPartition) -> Iterator[pa.RecordBatch]:
        import pyarrow as pa
        from pyspark.sql.pandas.types import to_arrow_schema

        from .. import ipc
        from .conversion import conform_batch, day_time_columns_as_durations
        full = to_arrow_schema(self.spark_schema, timezone="UTC")
        target = full
        if p.positions:         # a partitioned table: the files give the other columns
            target = pa.schema([f for k, f in enumerate(full) if k not in p.positions])
        options = ipc.IpcReadOptions(included_fields=p.included) if p.included is not None else None
        reader: RecordBatchFileReader | RecordBatchStreamReader
        batches: Iterator[RecordBatch | None]
        if p.is_file_format:
            assert p.end is not None            # plan_ranges gives file ranges an end
            reader = ipc.open_file(p.path, options=options)
            batches = (reader.get_batch(i) for i in range(p.start, p.end))
            first = p.start
        else:
            reader = ipc.open_stream(p.path, options=options)
            batches = iter(reader)
            first = 0
        if p.is_file_format and getattr(self, "filters", None):
            # only the filtering reader's pushFilters sets `filters`
            batches = cast("ArrowIpcFilteringReader", self)._unskipped(
                cast("RecordBatchFileReader", reader), p)
        for i, batch in enumerate(batches, first):
            if batch is None:
                continue
            batch = day_time_columns_as_durations(batch)
            out = conform_batch(pa.record_batch(batch), p.columns, target,
                                f"{p.path} (record batch {i})")
            if p.positions:            # the partition values, as constant columns
                arrays = list(out.columns)
                for position, value in zip(p.positions, p.values):
                    arrays.insert(position, pa.array([value] * out.num_rows,
                                                     full.field(position).type))
                out = pa.RecordBatch.from_arrays(arrays, schema=full)
            yield out


_FILTER_OPS = {"EqualTo": "==", "EqualNullSafe": "==", "GreaterThan": ">",
               "GreaterThanOrEqual": ">=", "LessThan": "<", "LessThanOrEqual": "<=", "In": "in",
               "IsNull": "is_null", "IsNotNull": "not_null"}


class ArrowIpcFilteringReader(ArrowIpcReader):
    """ArrowIpcReader that also takes Spark's filters (read option filterPushdown=true, which
    needs spark.sql.python.filterPushdown.enabled, Spark >= 4.1) and skips the record batches
    whose statistics (ipc.statistics) rule a filter out. Spark still applies every filter to
    the rows read, so all of them are handed back."""

    def pushFilters(self, filters: list[Filter]) -> Iterable[Filter]:
        """Keep the filters batch statistics can rule on (comparisons, In, null tests on one
        column) for skipping batches; all of them are returned, for Spark to apply to rows."""
        usable: list[PushedFilter] = []
        for f in filters:
            op = _FILTER_OPS.get(type(f).__name__)
            attribute: tuple[str, ...] = getattr(f, "attribute", ())
            if op is None or len(attribute) != 1:
                continue
            value = getattr(f, "value", None)
            if op == "==" and value is None:
                op = "is_null"       # EqualNullSafe(a, None)
            usable.append((attribute[0], op, value))
        self.filters = usable
        return filters

    def _unskipped(self, reader: RecordBatchFileReader, p: ArrowIpcPartition
                   ) -> Iterator[RecordBatch | None]:
        """The partition's batches, None in place of those the statistics rule out (their
        bodies are never read): all of them when the footer's summary rules out the file."""
        from ..ipc.statistics import file_statistics, might_match, read_statistics
        summary = file_statistics(reader)
        assert p.end is not None                # a file's range
        if summary is not None and not all(might_match(summary, c, op, v)
                                           for c, op, v in self.filters):
            yield from (None for _ in range(p.start, p.end))
            return
        for i in range(p.start, p.end):
            msg = reader.read_block_message("record batch", i, with_body=False)
            stats = read_statistics(msg.custom_metadata)
            if all(might_match(stats, c, op, v) for c, op, v in self.filters):
                yield reader.get_batch(i)
            else:
                yield None


def _utc_type(t: pa.DataType) -> pa.DataType:
    """`t` with every zoned timestamp marked UTC (same instants): files that do not depend on
    the session time zone."""
    import pyarrow as pa
    import pyarrow.types as pat
    if pat.is_timestamp(t):
        return pa.timestamp(t.unit, "UTC") if t.tz else t
    if pat.is_struct(t):
        return pa.struct([f.with_type(_utc_type(f.type)) for f in t])
    if pat.is_map(t):
        return pa.map_(t.key_field.with_type(_utc_type(t.key_type)),
                       t.item_field.with_type(_utc_type(t.item_type)))
    if pat.is_list(t):
        return pa.list_(t.value_field.with_type(_utc_type(t.value_type)))
    if pat.is_large_list(t):
        return pa.large_list(t.value_field.with_type(_utc_type(t.value_type)))
    return t


def _rechunked(batches: Iterable[pa.RecordBatch], rows_per_batch: int
               ) -> Iterator[pa.RecordBatch]:
    """pyarrow batches regrouped to `rows_per_batch` rows each (the last may be shorter)."""
    import pyarrow as pa
    pending: list[pa.RecordBatch] = []
    count = 0
    for b in batches:
        if b.num_rows == 0:
            continue
        pending.append(b)
        count += b.num_rows
        if count < rows_per_batch:
            continue
        merged = pending[0] if len(pending) == 1 else (
            pa.Table.from_batches(pending).combine_chunks().to_batches()[0])
        start = 0
        while count - start >= rows_per_batch:
            yield merged.slice(start, rows_per_batch)
            start += rows_per_batch
        pending = [merged.slice(start)] if start < count else []
        count -= start
    if count:
        yield pending[0] if len(pending) == 1 else (
            pa.Table.from_batches(pending).combine_chunks().to_batches()[0])


class ArrowIpcWriter(DataSourceArrowWriter):
    """Each task writes one file under _temporary/<job>/; commit publishes, abort removes."""

    def __init__(self, options: Mapping[str, Any], schema: StructType, overwrite: bool) -> None:
        path = _option(options, OPT_PATH)
        if not path:
            raise ArrowInvalid("arrowipc: no output path; use .save(path)")
        # Absolute now, on the driver: executors may run in other working directories.
        self.root = os.path.abspath(local_path(path))
        self.root_existed = os.path.isdir(self.root)
        self.job_id = uuid.uuid4().hex
        self.overwrite = bool(overwrite)
        self.spark_schema = schema
        compression = str(_option(options, OPT_COMPRESSION, "none")).lower()
        if compression not in _COMPRESSIONS:
            raise ArrowInvalid(f"arrowipc: option {OPT_COMPRESSION} must be none, lz4 or zstd; "
                               f"got {compression!r}")
        self.compression = _COMPRESSIONS[compression]
        fmt = str(_option(options, OPT_FORMAT, "file")).lower()
        if fmt not in _FORMATS:
            raise ArrowInvalid(f"arrowipc: option {OPT_FORMAT} must be file or stream; got {fmt!r}")
        self.stream_format = fmt == "stream"
        self.extension = _FORMATS[fmt]
        self.rows_per_batch = parse_count(_option(options, OPT_ROWS_PER_BATCH,
                                                  DEFAULT_ROWS_PER_BATCH), OPT_ROWS_PER_BATCH)
        statistics = str(_option(options, OPT_STATISTICS, "true")).lower()
        if statistics not in ("true", "false"):
            raise ArrowInvalid(f"arrowipc: option {OPT_STATISTICS} must be true or false; "
                               f"got {statistics!r}")
        self.statistics = statistics == "true"
        durable = str(_option(options, OPT_DURABLE, "false")).lower()
        if durable not in ("true", "false"):
            raise ArrowInvalid(f"arrowipc: option {OPT_DURABLE} must be true or false; "
                               f"got {durable!r}")
        self.durable = durable == "true"
        C.setup_job(self.root, self.job_id)

    def _open(self, path: str, schema: Schema
              ) -> RecordBatchStreamWriter | RecordBatchFileWriter:
        from .. import ipc
        options = ipc.IpcWriteOptions(compression=self.compression)
        if self.stream_format:
            return ipc.new_stream(path, schema, options=options, durable=self.durable)
        return ipc.new_file(path, schema, options=options,
                            metadata={"writer": "arrowipc.spark", "spark.job": self.job_id},
                            durable=self.durable, statistics=self.statistics)

    def write(self, iterator: Iterator[pa.RecordBatch]) -> ArrowIpcCommitMessage:
        """Write one task's batches, regrouped to rowsPerBatch rows, to a temporary file
        (none for an empty task); the message names it for `commit`."""
        import pyarrow as pa
        from pyspark import TaskContext

        import arrowipc
        ctx = TaskContext.get()
        partition_id = ctx.partitionId() if ctx is not None else 0
        attempt_id = ctx.taskAttemptId() if ctx is not None else uuid.uuid4().int % 10**9
        name = C.part_file_name(partition_id, self.job_id, 0, self.extension)
        temp_path = os.path.join(C.task_dir(self.root, self.job_id, attempt_id), name)
        writer: RecordBatchStreamWriter | RecordBatchFileWriter | None = None
        rows, out_schema = 0, None
        try:
            for batch in _rechunked(iterator, self.rows_per_batch):
                if out_schema is None:
                    out_schema = pa.schema([f.with_type(_utc_type(f.type)) for f in batch.schema])
                    writer = self._open(temp_path, arrowipc.schema(out_schema))
                if not batch.schema.equals(out_schema):
                    batch = pa.RecordBatch.from_arrays(
                        [c.cast(f.type) for c, f in zip(batch.columns, out_schema)],
                        schema=out_schema)
                assert writer is not None       # opened with the first batch
                writer.write_batch(arrowipc.record_batch(batch))
                rows += batch.num_rows
            if writer is not None:
                writer.close()
        except BaseException:
            if writer is not None:
                try:
                    writer.close()
                finally:
                    if os.path.exists(temp_path):
                        os.remove(temp_path)
            raise
        if writer is None:          # an empty task writes no file
            return ArrowIpcCommitMessage()
        return ArrowIpcCommitMessage([(temp_path, name)], rows, os.path.getsize(temp_path))

    def _write_empty_file(self) -> list[tuple[str, str]]:
        """A schema-only file, so that reading an empty result back still finds its schema."""
        from pyspark.sql.pandas.types import to_arrow_schema

        import arrowipc
        name = C.part_file_name(0, self.job_id, 0, self.extension)
        path = os.path.join(C.task_dir(self.root, self.job_id, 0), name)
        schema = arrowipc.schema(to_arrow_schema(self.spark_schema, timezone="UTC"))
        self._open(path, schema).close()
        return [(path, name)]

    def commit(self, messages: list[WriterCommitMessage | None]) -> None:
        """Publish the tasks' files under the output path (replacing its files on overwrite);
        a job that wrote no rows still leaves one schema-only file."""
        # every message is one of ours (write returns them), None for a task that failed
        done = cast("list[ArrowIpcCommitMessage]", [m for m in messages if m is not None])
        # (temporary path, final name) pairs, as write() made them
        written = cast("list[tuple[str, str]]", [tuple(f) for m in done for f in m.files])
        if not written:
            written = self._write_empty_file()
        summary = {"rows": sum(m.rows for m in done), "bytes": sum(m.bytes for m in done),
                   "mode": "overwrite" if self.overwrite else "append"}
        C.commit_job(self.root, self.job_id, written, self.overwrite, summary, self.durable)

    def abort(self, messages: list[WriterCommitMessage | None]) -> None:
        """Remove what the job wrote (and the output directory when the job created it and it
        is left empty); the output keeps its previous files."""
        C.abort_job(self.root, self.job_id, self.root_existed)
