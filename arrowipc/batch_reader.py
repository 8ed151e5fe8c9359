"""RecordBatchReader: a schema and a one-pass sequence of record batches (pyarrow's class).

Made from any iterable of batches (`from_batches`), from anything exporting
`__arrow_c_stream__` (`from_stream`), or by the IPC stream reader, which is one. It exports
itself through `__arrow_c_stream__`, so pyarrow, polars or duckdb take it without a copy, and
`cast` gives a reader whose batches are converted to another schema as they are pulled.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Iterable, Iterator, NamedTuple

from .errors import ArrowInvalid, ArrowNotImplementedError, ArrowTypeError
from .types import Schema

if TYPE_CHECKING:
    from types import TracebackType

    from typing_extensions import Self

    from .table import RecordBatch, Table
    from .types import KeyValueMetadata


__all__ = ["cast_batch", "check_cast", "RecordBatchReader", "RecordBatchWithMetadata"]


class RecordBatchWithMetadata(NamedTuple):
    """A record batch and its custom metadata (None when absent)."""
    batch: RecordBatch
    custom_metadata: KeyValueMetadata | None


def _as_schema(schema: Any, what: str) -> Schema:
    """`schema` as our Schema (one from another library converted through the C interface)."""
    if isinstance(schema, Schema):
        return schema
    from .data.interop import peer_as_ours
    out: Schema | None = peer_as_ours(schema, "schema")
    if out is None:
        raise TypeError(f"{what} must be a Schema, not {type(schema).__name__}")
    return out


def _castable(src: Any, dst: Any) -> bool:
    # what Array.cast can convert, asked of an empty array so a refusal costs nothing
    if src == dst:
        return True
    from .array import nulls
    try:
        nulls(0, src).cast(dst)
    except (ArrowTypeError, ArrowNotImplementedError, ArrowInvalid):
        return False
    return True


def check_cast(source: Schema, target: Schema) -> None:
    """Raise unless every field of `source` can be cast to the field of `target` at its place."""
    if source.names != target.names:
        raise ArrowInvalid(f"Target schema's field names are not matching the table's field "
                           f"names: {source.names}, {target.names}")
    for i, (a, b) in enumerate(zip(source, target)):
        if not _castable(a.type, b.type):
            raise ArrowTypeError(f"Field {i} cannot be cast from {a.type} to {b.type}")


def cast_batch(batch: RecordBatch, target: Schema) -> RecordBatch:
    """`batch` with its columns converted to `target`'s types (checked by `check_cast`)."""
    from .array import array
    from .table import RecordBatch
    columns: list[Any] = []
    for f, col in zip(target, batch.columns):
        if col.null_count and not f.nullable:
            raise ArrowInvalid(f"Can't cast array that contains nulls to non-nullable field "
                               f"{f.name!r}")
        if col.type == f.type:
            columns.append(col)
        elif hasattr(col, "cast"):
            columns.append(col.cast(f.type))
        else:
            columns.append(array(col.to_pylist(), type=f.type))
    return RecordBatch.from_arrays(columns, schema=target)


class RecordBatchReader:
    """Reads a schema and its record batches once, in order (pyarrow.RecordBatchReader).

    Create one with `from_batches` or `from_stream`; the IPC stream reader is one too.
    """
    _schema: Schema
    _batches: Iterator[RecordBatch] | None

    def __init__(self) -> None:
        raise TypeError("Do not call RecordBatchReader's constructor directly: use "
                        "RecordBatchReader.from_batches or RecordBatchReader.from_stream")

    @classmethod
    def _make(cls, schema: Schema, batches: Iterable[RecordBatch]) -> "RecordBatchReader":
        self = cls.__new__(cls)
        self._schema = schema
        self._batches = iter(batches)
        return self

    @staticmethod
    def from_batches(schema: Any, batches: Iterable[Any]) -> "RecordBatchReader":
        """A reader over `batches` (an iterable of record batches, ours or any library's), which
        must all have `schema`. The iterable is released once the reader is exhausted."""
        ours = _as_schema(schema, "schema")

        def checked(it: Iterable[Any]) -> Iterator[RecordBatch]:
            from .table import RecordBatch, record_batch
            for b in it:
                if not isinstance(b, RecordBatch):
                    b = record_batch(b)
                if not b.schema.equals(ours):
                    raise ArrowInvalid(f"record batch with schema\n{b.schema}\ndoes not match "
                                       f"the reader's schema\n{ours}")
                yield b

        return RecordBatchReader._make(ours, checked(batches))

    @staticmethod
    def from_stream(data: Any, schema: Any = None) -> "RecordBatchReader":
        """A reader over any object exporting `__arrow_c_stream__` (a pyarrow Table or reader, a
        polars DataFrame...), cast to `schema` when one is given."""
        if not hasattr(data, "__arrow_c_stream__"):
            raise TypeError(f"expected an object implementing the Arrow PyCapsule stream "
                            f"interface, got {type(data).__name__}")
        if schema is not None:
            schema = _as_schema(schema, "schema")
        from .table import import_stream
        source_schema, batches = import_stream(data)
        reader = RecordBatchReader._make(source_schema, batches)
        return reader if schema is None else reader.cast(schema)

    @property
    def schema(self) -> Schema:
        """The schema of every batch."""
        return self._schema

    def read_next_batch(self) -> RecordBatch:
        """The next RecordBatch; StopIteration at the end."""
        if self._batches is None:
            raise StopIteration
        try:
            return next(self._batches)
        except StopIteration:
            self._batches = None        # drop the source (and whatever it keeps alive)
            raise

    def read_next_batch_with_custom_metadata(self) -> RecordBatchWithMetadata:
        """The next (batch, custom_metadata) pair; StopIteration at the end."""
        return RecordBatchWithMetadata(self.read_next_batch(), None)

    def iter_batches_with_custom_metadata(self) -> Iterator[RecordBatchWithMetadata]:
        """Every remaining (batch, custom_metadata) pair."""
        while True:
            try:
                yield self.read_next_batch_with_custom_metadata()
            except StopIteration:
                return

    def __iter__(self) -> Iterator[RecordBatch]:
        while True:
            try:
                yield self.read_next_batch()
            except StopIteration:
                return

    def read_all(self) -> Table:
        """Every remaining batch as one Table."""
        from .table import Table
        return Table(self.schema, list(self))

    def read_pandas(self, **options: Any) -> Any:
        """Every remaining batch as one pandas.DataFrame (the options of Table.to_pandas)."""
        return self.read_all().to_pandas(**options)

    def cast(self, target_schema: Any) -> "RecordBatchReader":
        """A reader whose batches are this reader's cast to `target_schema` as they are pulled
        (same field names; ArrowTypeError now for a type that cannot be cast, ArrowInvalid at
        read time for nulls in a non-nullable field)."""
        target = _as_schema(target_schema, "target_schema")
        check_cast(self.schema, target)
        return RecordBatchReader._make(target, (cast_batch(b, target) for b in self))

    def close(self) -> None:
        """Release the source of the batches."""
        self._batches = None

    def __enter__(self) -> Self:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()

    def __arrow_c_schema__(self) -> object:
        """Arrow PyCapsule interface: the schema as an `arrow_schema` capsule."""
        return self.schema.__arrow_c_schema__()

    def __arrow_c_stream__(self, requested_schema: object | None = None) -> object:
        """Arrow PyCapsule interface: an `arrow_array_stream` capsule, zero-copy."""
        from .table import export_stream
        return export_stream(self.schema, iter(self), requested_schema)

