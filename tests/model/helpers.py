"""Test helpers: move arrays between pyarrow (the oracle) and arrowipc without the C data interface.

`data_from_pyarrow` walks a pyarrow array node by node and wraps its buffers zero-copy;
`pyarrow_from_data` rebuilds a pyarrow array from our ArrayData with `Array.from_buffers`.
Both keep offsets exactly as they are, so sliced arrays test the offset rules.
"""
from __future__ import annotations

import pyarrow as pa

import arrowipc as ai
from arrowipc._core.arraydata import ArrayData
from arrowipc._core.buffer import py_buffer
from arrowipc.types import Kind


# -- types --------------------------------------------------------------------------------------

_SIMPLE = {
    pa.null(): ai.null(), pa.bool_(): ai.bool_(), pa.int8(): ai.int8(), pa.int16(): ai.int16(),
    pa.int32(): ai.int32(), pa.int64(): ai.int64(), pa.uint8(): ai.uint8(),
    pa.uint16(): ai.uint16(), pa.uint32(): ai.uint32(), pa.uint64(): ai.uint64(),
    pa.float16(): ai.float16(), pa.float32(): ai.float32(), pa.float64(): ai.float64(),
    pa.date32(): ai.date32(), pa.date64(): ai.date64(), pa.string(): ai.string(),
    pa.binary(): ai.binary(), pa.large_string(): ai.large_string(),
    pa.large_binary(): ai.large_binary(), pa.string_view(): ai.string_view(),
    pa.binary_view(): ai.binary_view(),
    pa.month_day_nano_interval(): ai.month_day_nano_interval(),
}
_SIMPLE_BACK = {v: k for k, v in _SIMPLE.items()}


def ipc_field(f: pa.Field) -> ai.Field:
    return ai.field(f.name, ipc_type(f.type), f.nullable)


def ipc_type(t: pa.DataType):
    """The arrowipc type equal to a pyarrow type."""
    if t in _SIMPLE:
        return _SIMPLE[t]
    pt = pa.types
    if isinstance(t, pa.BaseExtensionType):
        serialize = getattr(t, "__arrow_ext_serialize__", None)   # canonical types lack it
        return ai.ExtensionType(t.extension_name, ipc_type(t.storage_type),
                                serialize() if serialize else b"")
    if pt.is_fixed_size_binary(t) and not pt.is_decimal(t):
        return ai.fixed_size_binary(t.byte_width)
    if pt.is_decimal(t):
        return ai.types.DecimalType(t.bit_width, t.precision, t.scale)
    if pt.is_timestamp(t):
        return ai.timestamp(t.unit, t.tz)
    if pt.is_time32(t):
        return ai.time32(t.unit)
    if pt.is_time64(t):
        return ai.time64(t.unit)
    if pt.is_duration(t):
        return ai.duration(t.unit)
    if pt.is_map(t):
        return ai.types.MapType(ipc_field(t.key_field), ipc_field(t.item_field), t.keys_sorted)
    if pt.is_fixed_size_list(t):
        return ai.fixed_size_list(ipc_field(t.value_field), t.list_size)
    if pt.is_large_list_view(t):
        return ai.large_list_view(ipc_field(t.value_field))
    if pt.is_list_view(t):
        return ai.list_view(ipc_field(t.value_field))
    if pt.is_large_list(t):
        return ai.large_list(ipc_field(t.value_field))
    if pt.is_list(t):
        return ai.list_(ipc_field(t.value_field))
    if pt.is_struct(t):
        return ai.struct([ipc_field(t.field(i)) for i in range(t.num_fields)])
    if pt.is_union(t):
        return ai.union([ipc_field(t.field(i)) for i in range(t.num_fields)], t.mode,
                        list(t.type_codes))
    if pt.is_dictionary(t):
        return ai.dictionary(ipc_type(t.index_type), ipc_type(t.value_type), t.ordered)
    if pt.is_run_end_encoded(t):
        return ai.run_end_encoded(ipc_type(t.run_end_type), ipc_type(t.value_type))
    raise NotImplementedError(f"no arrowipc type for {t}")


def pa_field(f: ai.Field) -> pa.Field:
    return pa.field(f.name, pa_type(f.type), f.nullable)


class _OpaqueExtension(pa.ExtensionType):
    """A pyarrow extension type for any (name, storage, serialized) we build in tests."""

    def __init__(self, name, storage, serialized=b""):
        self._serialized = serialized
        super().__init__(storage, name)

    def __arrow_ext_serialize__(self):
        return self._serialized

    @classmethod
    def __arrow_ext_deserialize__(cls, storage_type, serialized):
        raise NotImplementedError


def pa_type(t):
    """The pyarrow type equal to an arrowipc type."""
    if t in _SIMPLE_BACK:
        return _SIMPLE_BACK[t]
    if isinstance(t, ai.ExtensionType):
        return _OpaqueExtension(t.extension_name, pa_type(t.storage), t.serialized)
    if isinstance(t, ai.FixedSizeBinaryType):
        return pa.binary(t.byte_width)
    if isinstance(t, ai.DecimalType):
        make = {32: pa.decimal32, 64: pa.decimal64, 128: pa.decimal128, 256: pa.decimal256}
        return make[t.bit_width](t.precision, t.scale)
    if isinstance(t, ai.TimestampType):
        return pa.timestamp(t.unit, t.tz)
    if isinstance(t, ai.Time32Type):
        return pa.time32(t.unit)
    if isinstance(t, ai.Time64Type):
        return pa.time64(t.unit)
    if isinstance(t, ai.DurationType):
        return pa.duration(t.unit)
    if isinstance(t, ai.MapType):
        return pa.map_(pa_field(t.key_field), pa_field(t.item_field), t.keys_sorted)
    if isinstance(t, ai.FixedSizeListType):
        return pa.list_(pa_field(t.value_field), t.list_size)
    if isinstance(t, ai.types.LargeListViewType):
        return pa.large_list_view(pa_field(t.value_field))
    if isinstance(t, ai.types.ListViewType):
        return pa.list_view(pa_field(t.value_field))
    if isinstance(t, ai.LargeListType):
        return pa.large_list(pa_field(t.value_field))
    if isinstance(t, ai.ListType):
        return pa.list_(pa_field(t.value_field))
    if isinstance(t, ai.StructType):
        return pa.struct([pa_field(f) for f in t.fields])
    if isinstance(t, ai.UnionType):
        return pa.union([pa_field(f) for f in t.fields], t.mode, t.type_codes)
    if isinstance(t, ai.DictionaryType):
        return pa.dictionary(pa_type(t.index_type), pa_type(t.value_type), t.ordered)
    if isinstance(t, ai.types.RunEndEncodedType):
        return pa.run_end_encoded(pa_type(t.run_end_type), pa_type(t.value_type))
    raise NotImplementedError(f"no pyarrow type for {t}")


# -- arrays: pyarrow -> ArrayData ---------------------------------------------------------------

def _wrap(buf):
    return None if buf is None else py_buffer(memoryview(buf))


def _own_buffer_count(arr: pa.Array) -> int:
    """How many of arr.buffers() (pyarrow's pre-order list) belong to this node."""
    t = arr.type
    if isinstance(t, pa.BaseExtensionType):
        t = t.storage_type
    pt = pa.types
    if pt.is_binary_view(t) or pt.is_string_view(t):
        # validity, views, then the variadic data buffers (all of the node's remaining buffers)
        return len(arr.buffers())
    if pt.is_null(t) or pt.is_run_end_encoded(t):
        return 1
    if pt.is_union(t):
        return 2 if t.mode == "sparse" else 3
    if (pt.is_struct(t) or pt.is_fixed_size_list(t)):
        return 1
    if pt.is_list_view(t) or pt.is_large_list_view(t):
        return 3
    if pt.is_list(t) or pt.is_large_list(t) or pt.is_map(t):
        return 2
    if pt.is_string(t) or pt.is_binary(t) or pt.is_large_string(t) or pt.is_large_binary(t):
        return 3
    return 2


def _raw_children(arr: pa.Array) -> list:
    """(child pa.Array, offset correction) pairs: the child as stored, before the parent offset.

    Struct and sparse-union `field(i)` come back already sliced by the parent's offset, so their
    node offset is reduced by it (our model adds the parent's offset back when reading)."""
    t = arr.type
    if isinstance(arr, pa.ExtensionArray):
        return _raw_children(arr.storage)
    pt = pa.types
    if pt.is_struct(t):
        return [(arr.field(i), arr.offset) for i in range(t.num_fields)]
    if pt.is_union(t):
        shift = arr.offset if t.mode == "sparse" else 0
        return [(arr.field(i), shift) for i in range(t.num_fields)]
    if pt.is_run_end_encoded(t):
        return [(arr.run_ends, 0), (arr.values, 0)]
    if pt.is_list(t) or pt.is_large_list(t) or pt.is_fixed_size_list(t) or pt.is_map(t) \
            or pt.is_list_view(t) or pt.is_large_list_view(t):
        return [(arr.values, 0)]      # list children are stored whole: offsets address them
    return []


def data_from_pyarrow(arr: pa.Array, offset_shift: int = 0) -> ArrayData:
    """ArrayData viewing a pyarrow array's buffers (zero-copy), node by node."""
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks()
    t = ipc_type(arr.type)
    storage = arr.storage if isinstance(arr, pa.ExtensionArray) else arr
    st = storage.type
    offset = arr.offset - offset_shift
    length = len(arr) + offset_shift
    if pa.types.is_dictionary(st):
        bufs = [_wrap(b) for b in storage.buffers()[:2]]
        return ArrayData(t, length, offset, -1, bufs, [], data_from_pyarrow(storage.dictionary))
    own = storage.buffers()[:_own_buffer_count(storage)]
    bufs = [_wrap(b) for b in own]
    kind = t.kind
    if kind in (Kind.NULL, Kind.RUN_END_ENCODED):
        bufs = []
    elif kind in (Kind.SPARSE_UNION, Kind.DENSE_UNION):
        bufs = bufs[1:]           # pyarrow keeps an always-absent validity slot for unions
    null_count = -1 if kind not in (Kind.NULL, Kind.SPARSE_UNION, Kind.DENSE_UNION,
                                    Kind.RUN_END_ENCODED) else (length if kind == Kind.NULL else 0)
    if kind not in (Kind.NULL, Kind.SPARSE_UNION, Kind.DENSE_UNION, Kind.RUN_END_ENCODED) \
            and offset_shift == 0:
        null_count = storage.null_count
    children = [data_from_pyarrow(c, shift) for c, shift in _raw_children(storage)]
    return ArrayData(t, length, offset, null_count, bufs, children)


# -- arrays: ArrayData -> pyarrow ---------------------------------------------------------------

def _pa_buffer(buf):
    return None if buf is None else pa.py_buffer(memoryview(buf))


def pyarrow_from_data(data: ArrayData) -> pa.Array:
    """A pyarrow array over our ArrayData's buffers (zero-copy), for validation and comparison."""
    t = data.type
    if isinstance(t, ai.ExtensionType):
        storage = pyarrow_from_data(data.copy_with(type=t.storage))
        return pa.ExtensionArray.from_storage(pa_type(t), storage)
    ptype = pa_type(t)
    null_count = data.null_count
    kind = t.kind
    if kind == Kind.DICTIONARY:
        indices = pa.Array.from_buffers(pa_type(t.index_type), data.length,
                                        [_pa_buffer(b) for b in data.buffers], null_count,
                                        data.offset)
        return pa.DictionaryArray.from_arrays(indices, pyarrow_from_data(data.dictionary),
                                              ordered=t.ordered)
    bufs = [_pa_buffer(b) for b in data.buffers]
    if kind in (Kind.NULL, Kind.RUN_END_ENCODED):
        bufs = [None]
    elif kind in (Kind.SPARSE_UNION, Kind.DENSE_UNION):
        bufs = [None] + bufs
    children = [pyarrow_from_data(c) for c in data.children]
    return pa.Array.from_buffers(ptype, data.length, bufs, null_count, data.offset,
                                 children or None)
