"""The pandas methods of Table, RecordBatch, ChunkedArray, Array and Schema, with pyarrow's
signatures and defaults.

This module stays light (no numpy, no pandas): arrowipc/__init__.py binds these functions as
methods (the objects and types do not import this module, which sits above them), and the
conversion itself (the package arrowipc/pandas_compat/) loads only when one of them is called,
reached through arrowipc/_upcalls.py as it sits above the model.
"""
from __future__ import annotations

__all__ = ["table_to_pandas", "batch_to_pandas", "chunked_array_to_pandas", "array_to_pandas",
           "table_from_pandas", "batch_from_pandas", "schema_from_pandas", "array_from_pandas",
           "schema_pandas_metadata", "is_pandas_dataframe", "is_pandas_series"]

from .array import is_pandas_dataframe, is_pandas_series  # noqa: F401   (this module's names)

TYPE_CHECKING = False               # typing itself is not imported at run time
if TYPE_CHECKING:
    from typing import Any, TypeVar

    from .array import Array, ChunkedArray
    from .pandas_compat import ToPandasOptions
    from .table import RecordBatch, Table
    from .types import DataType, Schema

    # pandas objects are Any: pandas ships no type information this package relies on
    _Frame = TypeVar("_Frame", Table, RecordBatch)


def _options(arguments: dict[str, Any]) -> ToPandasOptions:
    """ToPandasOptions from a to_pandas method's locals() (its options, less `self`)."""
    from ._upcalls import ToPandasOptions
    return ToPandasOptions(**{k: v for k, v in arguments.items() if k != "self"})


def table_to_pandas(self: Table, memory_pool: object = None, categories: list[str] | None = None, strings_to_categorical: bool = False,
                    zero_copy_only: bool = False, integer_object_nulls: bool = False, date_as_object: bool = True,
                    timestamp_as_object: bool = False, use_threads: bool = True, deduplicate_objects: bool = True,
                    ignore_metadata: bool = False, safe: bool = True, split_blocks: bool = False, self_destruct: bool = False,
                    maps_as_pydicts: str | None = None, types_mapper: Any = None,
                    coerce_temporal_nanoseconds: bool = False) -> Any:
    """This table as a pandas.DataFrame, as pyarrow's Table.to_pandas gives it (same options and
    defaults; the `pandas` schema metadata restores the index and column names and types).

    With self_destruct=True the table gives up its columns as they are converted: do not use it
    afterwards (as in pyarrow)."""
    opts = _options(locals())
    from ._upcalls import table_to_dataframe
    batches = list(self._batches)      # all of them: an empty one still carries dictionaries
    columns = [[b._columns[i] for b in batches] for i in range(self.num_columns)]
    num_rows = self.num_rows
    if not self_destruct:
        return table_to_dataframe(self.schema, columns, num_rows, opts)
    del batches
    self._batches = []                 # the table no longer holds its buffers

    def release(i: int) -> None:
        columns[i] = None  # type: ignore[call-overload]             # converted: its buffers may go
    return table_to_dataframe(self.schema, columns, num_rows, opts, release)


def batch_to_pandas(self: RecordBatch, **options: Any) -> Any:
    """This record batch as a pandas.DataFrame (the options of Table.to_pandas)."""
    from ._upcalls import Table
    return table_to_pandas(Table(self.schema, [self]), **options)


def chunked_array_to_pandas(self: ChunkedArray, memory_pool: object = None,
                            categories: list[str] | None = None,
                            strings_to_categorical: bool = False, zero_copy_only: bool = False,
                            integer_object_nulls: bool = False, date_as_object: bool = True,
                            timestamp_as_object: bool = False, use_threads: bool = True,
                            deduplicate_objects: bool = True, ignore_metadata: bool = False, safe: bool = True,
                            split_blocks: bool = False, self_destruct: bool = False,
                            maps_as_pydicts: str | None = None, types_mapper: Any = None,
                            coerce_temporal_nanoseconds: bool = False) -> Any:
    """This column as a pandas.Series, as pyarrow's ChunkedArray.to_pandas gives it."""
    opts = _options(locals())
    from ._upcalls import chunked_to_series
    return chunked_to_series([c.data for c in self.chunks], self.type, opts,
                             getattr(self, "_name", None))


def array_to_pandas(self: Array, **options: Any) -> Any:
    """This array as a pandas.Series (the options of ChunkedArray.to_pandas)."""
    from ._upcalls import ChunkedArray
    return chunked_array_to_pandas(ChunkedArray([self], self.type), **options)


def table_from_pandas(cls: type[Table], df: Any, schema: Schema | None = None,
                      preserve_index: bool | None = None, nthreads: int | None = None,
                      columns: list[str] | None = None, safe: bool = True) -> Table:
    """A Table from a pandas.DataFrame: pyarrow's inferred types, the index kept as pyarrow
    keeps it (a RangeIndex as metadata only, other indexes as columns) and the `pandas` schema
    metadata that lets pyarrow or arrowipc restore the same DataFrame."""
    return _from_pandas(cls, df, schema, preserve_index, nthreads, columns, safe)


def _from_pandas(cls: type[_Frame], df: Any, schema: Schema | None, preserve_index: bool | None,
                 nthreads: int | None, columns: list[str] | None, safe: bool = True) -> _Frame:
    from ._upcalls import RecordBatch, Table, dataframe_to_arrays
    arrays, sch = dataframe_to_arrays(df, schema, preserve_index, nthreads, columns, safe,
                                      chunked=cls is Table)
    if arrays:
        return cls.from_arrays(arrays, schema=sch)
    # no columns: as in pyarrow, the rows are kept only by a RangeIndex stored as metadata
    # (preserve_index=False, or a schema without fields, gives no rows)
    index_columns = (sch.pandas_metadata or {}).get("index_columns", [])
    num_rows = len(df) if index_columns and isinstance(index_columns[0], dict) else 0
    return Table(sch, [RecordBatch(sch, [], num_rows)]) if cls is Table else \
        RecordBatch(sch, [], num_rows)  # type: ignore[return-value]   # cls is RecordBatch here


def batch_from_pandas(cls: type[RecordBatch], df: Any, schema: Schema | None = None,
                      preserve_index: bool | None = None, nthreads: int | None = None,
                      columns: list[str] | None = None) -> RecordBatch:
    """A RecordBatch from a pandas.DataFrame (see Table.from_pandas)."""
    return _from_pandas(cls, df, schema, preserve_index, nthreads, columns)


def schema_from_pandas(cls: type[Schema], df: Any, preserve_index: bool | None = None) -> Schema:
    """The schema Table.from_pandas(df) would have, with its `pandas` metadata."""
    from ._upcalls import dataframe_to_schema
    return dataframe_to_schema(df, preserve_index)


def schema_pandas_metadata(schema: Schema) -> dict[str, Any] | None:
    """Schema.pandas_metadata: the parsed `pandas` metadata, or None when absent (or JSON null).
    Metadata that is not a JSON object with lists `columns` and `index_columns` is an
    ArrowInvalid."""
    raw = (schema.metadata or {}).get(b"pandas")
    if raw is None:
        return None
    import json
    from .errors import ArrowInvalid
    try:
        meta = json.loads(raw.decode("utf8"))
    except (UnicodeDecodeError, ValueError) as e:
        raise ArrowInvalid(f"schema metadata 'pandas' is not valid JSON: {e}") from None
    except RecursionError:
        raise ArrowInvalid("schema metadata 'pandas' nests its JSON values deeper than the "
                           "parser's recursion limit") from None
    if meta is None:
        return None                 # JSON null: no metadata, as pyarrow reads it
    if not isinstance(meta, dict) or not isinstance(meta.get("columns", []), list) or \
            not isinstance(meta.get("index_columns", []), list):
        raise ArrowInvalid("schema metadata 'pandas' must be an object with lists "
                           "'columns' and 'index_columns'")
    return meta


def array_from_pandas(cls: type[Array], obj: Any, mask: Any = None, type: DataType | None = None,
                      safe: bool = True, memory_pool: object = None) -> Array:
    """An Array from a pandas Series, Index or array-like (NaN and None are nulls)."""
    from ._upcalls import series_to_array
    return series_to_array(obj, mask, type, safe)
