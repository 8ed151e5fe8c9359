"""pyarrow arrays -> exactly the Arrow types Spark expects (executor side).

From Spark 4.2 a Python data source must yield batches whose schema equals
to_arrow_schema(schema, timezone="UTC"): plain string/binary/list, timestamp[us, tz=UTC],
decimal128, int types Spark has. Dictionaries are decoded, run-end encoding expanded,
extension types replaced by their storage, view and large layouts made plain, unsigned
integers widened and time units brought to Spark's. Nested types are rebuilt child by child.
"""
from __future__ import annotations

from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.types as pat

from ..errors import ArrowInvalid, ArrowTypeError

__all__ = ["conform_batch", "day_time_columns_as_durations", "to_spark_array"]

_US_PER_DAY = 86_400_000_000


def _validity_mask(arr: pa.Array) -> pa.Array | None:
    # from_arrays takes nulls as a boolean mask (True = null); None when there are none.
    return arr.is_null() if arr.null_count else None


def _unsliced_offsets(arr: pa.Array) -> pa.Array:
    """The n+1 offsets of a list or map array, copied when the array is a slice (from_arrays
    refuses sliced offsets together with a null mask)."""
    offsets = arr.offsets
    if offsets.offset == 0:
        return offsets
    return pa.array(offsets.to_numpy(zero_copy_only=False), offsets.type)


def _floor_ns_to_us(arr: pa.Array) -> pa.Array:
    """Nanosecond timestamps to microseconds rounding down, so instants before 1970 keep their
    place in time (a cast would round them towards zero, i.e. later)."""
    ns = arr.cast(pa.int64()).fill_null(0).to_numpy(zero_copy_only=False)
    us = np.floor_divide(ns, 1000)
    mask = arr.is_null().to_numpy(zero_copy_only=False) if arr.null_count else None
    return pa.array(us, pa.timestamp("us", arr.type.tz), mask=mask)


def day_time_columns_as_durations(batch: Any) -> Any:
    """An arrowipc RecordBatch with its day_time_interval columns made duration[us].

    pyarrow cannot wrap day-time interval arrays in Python, so this runs on arrowipc arrays,
    before the batch is handed over: (days, milliseconds) pairs become microseconds.
    """
    import arrowipc
    from .._core.arraydata import ArrayData
    from ..array import make_array
    columns: list[Any] = []
    changed = False
    for field, col in zip(batch.schema, batch.columns):
        if field.type.name != "day_time_interval":
            columns.append(col)
            continue
        d = col.data
        pairs = np.frombuffer(d.buffers[1], dtype=np.int32)[:2 * (d.offset + d.length)]
        micros = pairs[0::2].astype(np.int64) * _US_PER_DAY + pairs[1::2].astype(np.int64) * 1000
        columns.append(make_array(ArrayData(arrowipc.duration("us"), d.length, d.offset,
                                            d.null_count, [d.buffers[0],
                                                           arrowipc.py_buffer(micros)])))
        changed = True
    if not changed:
        return batch
    names = batch.schema.names
    return arrowipc.RecordBatch.from_arrays(columns, names=names)


def _list_view_to_list(arr: pa.Array) -> pa.ListArray:
    """A list view as a plain list: each slot's values gathered in order (views may overlap or
    come in any order, so the child is rearranged with one take)."""
    valid = np.ones(len(arr), dtype=bool) if not arr.null_count else arr.is_valid().to_numpy(
        zero_copy_only=False)
    starts = arr.offsets.to_numpy(zero_copy_only=False).astype(np.int64)
    sizes = np.where(valid, arr.sizes.to_numpy(zero_copy_only=False), 0).astype(np.int64)
    offsets = np.zeros(len(arr) + 1, dtype=np.int64)
    np.cumsum(sizes, out=offsets[1:])
    gather = np.repeat(starts - offsets[:-1], sizes) + np.arange(offsets[-1], dtype=np.int64)
    values = arr.values.take(pa.array(gather))
    return pa.ListArray.from_arrays(pa.array(offsets.astype(np.int32)), values,
                                    type=pa.list_(arr.type.value_field),
                                    mask=_validity_mask(arr))


def _as_plain_list(arr: pa.Array) -> pa.ListArray:
    """Any list layout (large, view, fixed size) as a list<...> with the same value field."""
    t = arr.type
    if pat.is_list(t):
        return arr
    if pat.is_list_view(t) or pat.is_large_list_view(t):
        return _list_view_to_list(arr)
    return arr.cast(pa.list_(t.value_field))


def _cast(arr: pa.Array, target: pa.DataType, where: str) -> pa.Array:
    try:
        return pc.cast(arr, options=pc.CastOptions(target, allow_time_truncate=True))
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError) as e:
        raise ArrowTypeError(f"arrowipc: {where}: cannot convert {arr.type} to {target} "
                             f"for Spark: {e}") from e


def to_spark_array(arr: pa.Array, target: pa.DataType, where: str = "column") -> pa.Array:
    """`arr` as an array of exactly `target` (a type from Spark's to_arrow_schema)."""
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks()
    t = arr.type
    if isinstance(t, pa.ExtensionType):
        return to_spark_array(arr.storage, target, where)
    if pat.is_dictionary(t):
        return to_spark_array(arr.dictionary_decode(), target, where)
    if pat.is_run_end_encoded(t):
        return to_spark_array(pc.run_end_decode(arr), target, where)
    if pat.is_timestamp(t) and t.unit == "ns" and pat.is_timestamp(target):
        return _floor_ns_to_us(arr).cast(target)
    if pat.is_null(target):
        return arr if pat.is_null(t) else pa.nulls(len(arr))
    if pat.is_null(t):
        return pa.nulls(len(arr), target)
    if pat.is_struct(target):
        if not pat.is_struct(t):
            raise ArrowTypeError(f"arrowipc: {where}: cannot convert {t} to {target}")
        names = [t.field(i).name for i in range(t.num_fields)]
        children = []
        for tf in target:
            if tf.name in names:
                child = arr.field(names.index(tf.name))
                children.append(to_spark_array(child, tf.type, f"{where}.{tf.name}"))
            else:
                children.append(pa.nulls(len(arr), tf.type))
        return pa.StructArray.from_arrays(children, fields=list(target), mask=_validity_mask(arr))
    if pat.is_map(target):
        if not pat.is_map(t):
            return _cast(arr, target, where)
        entries = arr.values   # the whole child; offsets index into it
        keys = to_spark_array(entries.field(0), target.key_type, f"{where} (key)")
        items = to_spark_array(entries.field(1), target.item_type, f"{where} (value)")
        return pa.MapArray.from_arrays(_unsliced_offsets(arr), keys, items, type=target,
                                       mask=_validity_mask(arr))
    if pat.is_list(target):
        if not (pat.is_list(t) or pat.is_large_list(t) or pat.is_fixed_size_list(t)
                or pat.is_list_view(t) or pat.is_large_list_view(t)):
            return _cast(arr, target, where)
        plain = _as_plain_list(arr)
        values = to_spark_array(plain.values, target.value_type, f"{where}[]")
        return pa.ListArray.from_arrays(_unsliced_offsets(plain), values, type=target,
                                        mask=_validity_mask(plain))
    if t.equals(target):
        return arr
    return _cast(arr, target, where)


def conform_batch(batch: pa.RecordBatch, columns: tuple[int | None, ...], target: pa.Schema,
                  where: str) -> pa.RecordBatch:
    """A batch of exactly `target`: column i of the result comes from batch column columns[i]
    (None = the file lacks it: all nulls)."""
    n = batch.num_rows
    arrays = []
    for src, field in zip(columns, target):
        if src is None:
            arrays.append(pa.nulls(n, field.type))
        else:
            arrays.append(to_spark_array(batch.column(src), field.type,
                                         f"column {field.name!r} of {where}"))
        if not field.nullable and arrays[-1].null_count:
            # Spark would fail deep in the JVM ("Value at index is null") without saying where
            raise ArrowInvalid(f"arrowipc: column {field.name!r} of {where} has "
                               f"{arrays[-1].null_count} nulls but the schema declares it NOT NULL")
    return pa.RecordBatch.from_arrays(arrays, schema=target)
