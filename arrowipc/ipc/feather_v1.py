"""Feather V1, the legacy file format pyarrow.feather still reads and writes (`version=1`).

A V1 file is "FEA1", four bytes of padding, the columns' buffers (each padded to 8 bytes), a
flatbuffer of metadata (the `CTable` of the V1 `feather.fbs` schema), the metadata's length as a
little-endian uint32, and "FEA1" again. Each column is a `PrimitiveArray` (type code, encoding,
file offset, length, null count, total bytes) whose bytes are, in order: a validity bitmap (only
when the null count is positive), offsets (binary and string types), values. A column's optional
`TypeMetadata` makes it a category (dictionary: the column holds the indices, the metadata the
levels), a timestamp (unit, time zone), a date (date32) or a time (its unit).

Every byte is untrusted: the metadata is read with the bounds-checked flatbuffer reader, each
array's range is checked against the file before it is sliced (buffers are views of the file,
nothing is allocated from a claimed size), and the arrays are then validated in full (offsets,
UTF-8, dictionary indices, null counts). Errors are ArrowInvalid naming the file, the column and
the byte offset; ArrowNotImplementedError is kept for what the schema allows and nothing writes
(complex numbers, the never-implemented DICTIONARY encoding).
"""
from __future__ import annotations

import struct
from typing import TYPE_CHECKING, Any, BinaryIO, Callable, NamedTuple

from .._core.arraydata import ArrayData
from .._core.bitmap import copy_bitmap, count_set_bits
from .._core.buffer import Buffer, py_buffer
from ..array import ChunkedArray, make_array
from ..errors import ArrowInvalid, ArrowNotImplementedError, ArrowTypeError
from ..table import RecordBatch, Table
from .. import types as T
from ..validate import null_count_of, validate_array
from ._flatbuf import FlatTable, root_table
from .format import FEATHER_V1_MAGIC
from .compression import _native
from .format import CODEC_LZ4_FRAME, CODEC_ZSTD
from .metadata import _builder, _end_vector

if TYPE_CHECKING:
    from .metadata import Builder

__all__ = ["FEATHER_V1_MAGIC", "FeatherV1File", "codec_available", "write_feather_v1"]

# The version number pyarrow writes into CTable.version; files below it (Feather < 0.3) stored
# bitmaps and offsets unpadded.
_V1_VERSION = 2
_ALIGNMENT = 8
_FOOTER = struct.Struct("<I")
# magic + padding at the start, metadata length + magic at the end
_MIN_SIZE = 12

# Type codes of feather.fbs
_BOOL, _INT8, _INT16, _INT32, _INT64 = 0, 1, 2, 3, 4
_UINT8, _UINT16, _UINT32, _UINT64 = 5, 6, 7, 8
_FLOAT, _DOUBLE, _UTF8, _BINARY = 9, 10, 11, 12
_CATEGORY, _TIMESTAMP, _DATE, _TIME = 13, 14, 15, 16
_LARGE_UTF8, _LARGE_BINARY = 17, 18
_TYPE_NAMES = ("BOOL", "INT8", "INT16", "INT32", "INT64", "UINT8", "UINT16", "UINT32", "UINT64",
               "FLOAT", "DOUBLE", "UTF8", "BINARY", "CATEGORY", "TIMESTAMP", "DATE", "TIME",
               "LARGE_UTF8", "LARGE_BINARY", "COMPLEX_FLOAT", "COMPLEX_DOUBLE")
_PHYSICAL: dict[int, Callable[[], T.DataType]] = {
    _BOOL: T.bool_, _INT8: T.int8, _INT16: T.int16, _INT32: T.int32, _INT64: T.int64,
    _UINT8: T.uint8, _UINT16: T.uint16, _UINT32: T.uint32, _UINT64: T.uint64,
    _FLOAT: T.float32, _DOUBLE: T.float64, _UTF8: T.string, _BINARY: T.binary,
    _LARGE_UTF8: T.large_string, _LARGE_BINARY: T.large_binary}
_INTEGER_CODES = frozenset(range(_INT8, _UINT64 + 1))
# offsets width of the binary-like codes
_OFFSET_WIDTH = {_UTF8: 4, _BINARY: 4, _LARGE_UTF8: 8, _LARGE_BINARY: 8}

# TypeMetadata union members (0 is NONE)
_META_CATEGORY, _META_TIMESTAMP, _META_DATE, _META_TIME = 1, 2, 3, 4
_UNITS = ("s", "ms", "us", "ns")

# Slots (field indices) of the tables of feather.fbs
_CTABLE_NUM_ROWS, _CTABLE_COLUMNS, _CTABLE_VERSION = 1, 2, 3
_COLUMN_NAME, _COLUMN_VALUES, _COLUMN_META_TYPE, _COLUMN_META = 0, 1, 2, 3
_ARRAY_TYPE, _ARRAY_ENCODING, _ARRAY_OFFSET, _ARRAY_LENGTH, _ARRAY_NULLS, _ARRAY_BYTES = range(6)


class _ArraySpec(NamedTuple):
    """A PrimitiveArray of the metadata, as read (unchecked)."""
    code: int
    encoding: int
    offset: int
    length: int
    null_count: int
    total_bytes: int

    @classmethod
    def of(cls, t: FlatTable) -> _ArraySpec:
        return cls(t.uint8(_ARRAY_TYPE), t.uint8(_ARRAY_ENCODING), t.int64(_ARRAY_OFFSET),
                   t.int64(_ARRAY_LENGTH), t.int64(_ARRAY_NULLS), t.int64(_ARRAY_BYTES))


def _type_name(code: int) -> str:
    return f"{code} ({_TYPE_NAMES[code]})" if 0 <= code < len(_TYPE_NAMES) else str(code)


def _padded(nbytes: int) -> int:
    return (nbytes + _ALIGNMENT - 1) // _ALIGNMENT * _ALIGNMENT


def codec_available(name: str) -> bool:
    """Whether body compression with `name` ("lz4" or "zstd") can be written here."""
    codec = CODEC_LZ4_FRAME if name == "lz4" else CODEC_ZSTD
    if _native().available(codec):
        return True
    import importlib.util
    return importlib.util.find_spec("lz4" if name == "lz4" else "zstandard") is not None


class FeatherV1File:
    """The metadata of a Feather V1 file held in `buf` (all of it), checked; `read` gives its
    columns as a Table. `name` (a path, or "buffer") goes into every error message."""

    def __init__(self, buf: Buffer, name: str = "buffer") -> None:
        self.buf = buf
        self.name = name
        size = buf.size
        if size < _MIN_SIZE:
            raise ArrowInvalid(f"{name}: a Feather V1 file has at least {_MIN_SIZE} bytes, this "
                               f"one has {size}")
        head = buf.slice(0, 4).to_pybytes()
        if head != FEATHER_V1_MAGIC:
            raise ArrowInvalid(f"{name}: expected the Feather V1 magic b'FEA1' at byte 0, found "
                               f"{head!r}")
        tail = buf.slice(size - 8, 8).to_pybytes()
        if tail[4:] != FEATHER_V1_MAGIC:
            raise ArrowInvalid(f"{name}: Feather V1 footer incomplete: expected b'FEA1' at byte "
                               f"{size - 4}, found {tail[4:]!r} (file truncated?)")
        (meta_len,) = _FOOTER.unpack(tail[:4])
        if meta_len > size - _MIN_SIZE:
            raise ArrowInvalid(f"{name}: the Feather V1 footer at byte {size - 8} claims "
                               f"{meta_len} bytes of metadata, but only {size - _MIN_SIZE} bytes "
                               f"lie between the header and the footer")
        self.metadata_offset = size - 8 - meta_len
        try:
            root = root_table(buf.slice(self.metadata_offset, meta_len), "CTable")
            self.num_rows = root.int64(_CTABLE_NUM_ROWS)
            self.version = root.int32(_CTABLE_VERSION)
            self._columns = root.tables(_CTABLE_COLUMNS, "Column")
        except ArrowInvalid as e:
            raise self._metadata_error(e) from None
        if self.num_rows < 0:
            raise ArrowInvalid(f"{name}: the Feather V1 metadata claims {self.num_rows} rows")
        fields = []
        # (values, levels) of each column, read from the flatbuffer once
        self._arrays: list[tuple[_ArraySpec, _ArraySpec | None]] = []
        for i, col in enumerate(self._columns):
            try:
                fields.append(self._field(i, col))
            except ArrowInvalid as e:
                if str(e).startswith("flatbuffer"):
                    raise self._metadata_error(e) from None
                raise
        self.schema = T.schema(fields)

    def _metadata_error(self, e: Exception) -> ArrowInvalid:
        return ArrowInvalid(f"{self.name}: invalid Feather V1 metadata (the flatbuffer at byte "
                            f"{self.metadata_offset}; positions below are within it): {e}")

    # -- schema -------------------------------------------------------------------------------
    def _field(self, i: int, col: FlatTable) -> T.Field:
        name = col.string(_COLUMN_NAME)
        if name is None:
            raise ArrowInvalid(f"{self.name}: column {i} of the Feather V1 metadata has no name")
        values = col.table(_COLUMN_VALUES, "PrimitiveArray")
        if values is None:
            raise ArrowInvalid(f"{self.name}: column {i} '{name}' has no values array in the "
                               f"Feather V1 metadata")
        type = self._column_type(i, name, col, values)
        levels = None
        if isinstance(type, T.DictionaryType):
            meta = col.table(_COLUMN_META, "TypeMetadata")
            levels_meta = meta.table(0, "PrimitiveArray") if meta is not None else None
            assert levels_meta is not None                   # checked by _column_type
            levels = _ArraySpec.of(levels_meta)
        self._arrays.append((_ArraySpec.of(values), levels))
        return T.field(name, type)

    def _where(self, i: int, name: str) -> str:
        return f"{self.name}: column {i} '{name}'"

    def _physical(self, code: int, where: str) -> T.DataType:
        make = _PHYSICAL.get(code)
        if make is not None:
            return make()
        if code in (19, 20):
            raise ArrowNotImplementedError(f"{where}: Feather V1 type {_type_name(code)} has no "
                                           f"Arrow equivalent")
        if _CATEGORY <= code <= _TIME:
            raise ArrowInvalid(f"{where}: type {_type_name(code)} without its type metadata")
        raise ArrowInvalid(f"{where}: unknown Feather V1 type code {code}")

    def _column_type(self, i: int, name: str, col: FlatTable, values: FlatTable) -> T.DataType:
        where = self._where(i, name)
        code = values.uint8(_ARRAY_TYPE)
        meta_type = col.uint8(_COLUMN_META_TYPE)
        if meta_type == 0:
            return self._physical(code, where)
        meta = col.table(_COLUMN_META, "TypeMetadata")
        if meta is None:
            raise ArrowInvalid(f"{where}: type metadata {meta_type} announced but absent")
        if meta_type == _META_CATEGORY:
            if code not in _INTEGER_CODES:
                raise ArrowInvalid(f"{where}: a category column's codes must be integers, found "
                                   f"type {_type_name(code)}")
            levels = meta.table(0, "PrimitiveArray")
            if levels is None:
                raise ArrowInvalid(f"{where}: a category column without levels")
            value_type = self._physical(levels.uint8(_ARRAY_TYPE), f"{where} levels")
            return T.dictionary(self._physical(code, where), value_type, meta.boolean(1))
        if meta_type == _META_TIMESTAMP:
            if code not in (_INT64, _TIMESTAMP):
                raise ArrowInvalid(f"{where}: a timestamp column must hold INT64 values, found "
                                   f"type {_type_name(code)}")
            tz = meta.string(1)
            return T.timestamp(self._unit(meta, where), tz or None)
        if meta_type == _META_DATE:
            if code not in (_INT32, _DATE):
                raise ArrowInvalid(f"{where}: a date column must hold INT32 values, found type "
                                   f"{_type_name(code)}")
            return T.date32()
        if meta_type == _META_TIME:
            unit = self._unit(meta, where)
            # pyarrow writes time32 (INT32, s or ms); older writers tagged the values TIME
            if code == _INT32 or (code == _TIME and unit in ("s", "ms")):
                if unit not in ("s", "ms"):
                    raise ArrowInvalid(f"{where}: an INT32 time column's unit must be s or ms, "
                                       f"found {unit}")
                return T.time32(unit)
            if code == _INT64 or code == _TIME:
                if unit not in ("us", "ns"):
                    raise ArrowInvalid(f"{where}: an INT64 time column's unit must be us or ns, "
                                       f"found {unit}")
                return T.time64(unit)
            raise ArrowInvalid(f"{where}: a time column must hold INT32 or INT64 values, found "
                               f"type {_type_name(code)}")
        raise ArrowInvalid(f"{where}: unknown Feather V1 type metadata {meta_type}")

    @staticmethod
    def _unit(meta: FlatTable, where: str) -> str:
        unit = meta.uint8(0)
        if unit >= len(_UNITS):
            raise ArrowInvalid(f"{where}: unknown time unit {unit}")
        return _UNITS[unit]

    # -- data ---------------------------------------------------------------------------------
    def _array(self, spec: _ArraySpec, type: T.DataType, where: str) -> ArrayData:
        """The array `spec` describes, its buffers views of the file (bounds checked)."""
        code, encoding, offset, length, null_count, total = spec
        if encoding == 1:
            raise ArrowNotImplementedError(f"{where}: the Feather V1 DICTIONARY encoding is not "
                                           f"supported (no writer produces it)")
        if encoding != 0:
            raise ArrowInvalid(f"{where}: unknown Feather V1 encoding {encoding}")
        size = self.buf.size
        if offset < 0 or total < 0 or offset > size or total > size - offset:
            raise ArrowInvalid(f"{where}: its {total} bytes at byte {offset} lie outside the "
                               f"{size}-byte file")
        if length < 0:
            raise ArrowInvalid(f"{where}: negative length {length} (array at byte {offset})")
        if not 0 <= null_count <= length:
            raise ArrowInvalid(f"{where}: null count {null_count} outside [0, {length}] "
                               f"(array at byte {offset})")
        padded = _padded if self.version >= _V1_VERSION else (lambda n: n)
        region = self.buf.slice(offset, total)
        pos = 0
        buffers: list[Buffer | None] = []
        if null_count > 0:
            nbytes = padded((length + 7) // 8)
            if nbytes > total:
                raise ArrowInvalid(f"{where}: the validity bitmap of {length} values needs "
                                   f"{nbytes} bytes at byte {offset}, the array has {total}")
            validity = region.slice(0, nbytes)
            nulls = length - count_set_bits(validity, 0, length)
            if nulls != null_count:
                raise ArrowInvalid(f"{where}: the validity bitmap at byte {offset} has {nulls} "
                                   f"nulls, the metadata claims {null_count}")
            buffers.append(validity)
            pos = nbytes
        else:
            buffers.append(None)
        width = _OFFSET_WIDTH.get(code)
        if width is not None:
            nbytes = padded((length + 1) * width)
            if nbytes > total - pos:
                raise ArrowInvalid(f"{where}: the offsets of {length} values need {nbytes} bytes "
                                   f"at byte {offset + pos}, the array has {total - pos} left")
            buffers.append(region.slice(pos, nbytes))
            pos += nbytes
        buffers.append(region.slice(pos, total - pos))
        return ArrayData(type, length, 0, null_count, buffers)

    def column(self, i: int) -> ChunkedArray:
        """Column `i`, validated in full."""
        values, levels = self._arrays[i]
        field = self.schema.field(i)
        where = self._where(i, field.name)
        data = self._array(values, field.type, where)
        if data.length != self.num_rows:
            raise ArrowInvalid(f"{where}: {data.length} values at byte {values.offset}, the "
                               f"table has {self.num_rows} rows")
        if isinstance(field.type, T.DictionaryType):
            assert levels is not None                   # read by _field
            data.dictionary = self._array(levels, field.type.value_type, f"{where} levels")
        validate_array(data, full=True, where=f"{where} (array at byte {values.offset})")
        return ChunkedArray([make_array(data)], field.type)

    def read(self, indices: list[int] | None = None) -> Table:
        """The columns at `indices` (all when None), in that order, repeats included."""
        n = len(self._columns)
        if indices is None:
            indices = list(range(n))
        for i in indices:
            if not 0 <= i < n:
                raise ArrowInvalid(f"Field index {i} is out of bounds")
        schema = T.schema([self.schema.field(i) for i in indices])
        columns = [self.column(i) for i in indices]
        return Table.from_arrays(columns, schema=schema) if columns else \
            _empty_table(schema, self.num_rows)


def _empty_table(schema: T.Schema, num_rows: int) -> Table:
    """A table without columns that keeps the file's row count, as pyarrow's."""
    return Table(schema, [RecordBatch(schema, [], num_rows)])


# -- writing ---------------------------------------------------------------------------------------

_PAD = bytes(_ALIGNMENT)


class _ArrayMeta:
    __slots__ = ("code", "offset", "length", "null_count", "total_bytes")

    def __init__(self, code: int, offset: int, length: int, null_count: int) -> None:
        self.code = code
        self.offset = offset
        self.length = length
        self.null_count = null_count
        self.total_bytes = 0


def _v1_code(t: T.DataType) -> int:
    """The V1 type code of the values of an array of type `t` (pyarrow's mapping and errors)."""
    for code, make in _PHYSICAL.items():
        if t == make():
            return code
    if t == T.date32() or isinstance(t, T.Time32Type):
        return _INT32
    if isinstance(t, T.TimestampType):
        return _INT64
    if isinstance(t, T.Time64Type):
        raise ArrowNotImplementedError(str(t))
    raise ArrowTypeError(f"Unsupported Feather V1 type: {t}. Use V2 format to serialize all "
                         f"Arrow types.")


class _V1Writer:
    def __init__(self, sink: BinaryIO) -> None:
        self.sink = sink
        start = 0
        try:
            start = sink.tell()
        except (AttributeError, OSError, ValueError):
            pass
        self.pos = start             # V1 offsets are positions in the file, as the sink tells them

    def write(self, data: Any) -> int:
        n = len(memoryview(data).cast("B"))
        if n:
            self.sink.write(data)
        pad = _padded(n) - n
        if pad:
            self.sink.write(_PAD[:pad])
        self.pos += n + pad
        return n + pad

    def array(self, d: ArrayData) -> _ArrayMeta:
        t = d.type
        if isinstance(t, T.DictionaryType):
            t = t.index_type
        nulls = null_count_of(d)
        if t == T.null():                       # as pyarrow: an all-null string column
            return self._nulls_as_strings(d.length)
        meta = _ArrayMeta(_v1_code(t), self.pos, d.length, nulls)
        off, n = d.offset, d.length
        if nulls > 0:
            validity = d.buffers[0]
            assert validity is not None
            meta.total_bytes += self.write(copy_bitmap(validity, off, n))
        if t == T.bool_():
            values = d.buffers[1]
            meta.total_bytes += self.write(copy_bitmap(values, off, n) if values is not None
                                           else bytes((n + 7) // 8))
        elif meta.code in _OFFSET_WIDTH:
            meta.total_bytes += self._binary(d, _OFFSET_WIDTH[meta.code])
        else:
            width = t.byte_width
            values = d.buffers[1]
            raw = (values.slice(off * width, n * width) if values is not None
                   else bytes(n * width))
            meta.total_bytes += self.write(raw)
        return meta

    def _binary(self, d: ArrayData, width: int) -> int:
        import numpy as np
        n = d.length
        dtype = np.int32 if width == 4 else np.int64
        raw = d.buffers[1]
        offsets = (np.frombuffer(memoryview(raw), dtype=dtype, count=n + 1, offset=d.offset * width)
                   if raw is not None and n else np.zeros(n + 1, dtype=dtype))
        first, last = int(offsets[0]), int(offsets[-1])
        written = self.write((offsets - first).astype(dtype, copy=False).tobytes())
        data = d.buffers[2]
        written += self.write(data.slice(first, last - first) if data is not None and last > first
                              else b"")
        return written

    def _nulls_as_strings(self, n: int) -> _ArrayMeta:
        meta = _ArrayMeta(_UTF8, self.pos, n, n)
        if n:
            meta.total_bytes += self.write(bytes((n + 7) // 8))
        meta.total_bytes += self.write(bytes((n + 1) * 4))
        return meta


def _primitive_array(b: Builder, m: _ArrayMeta) -> int:
    b.StartObject(6)
    b.PrependInt64Slot(_ARRAY_BYTES, m.total_bytes, 0)
    b.PrependInt64Slot(_ARRAY_NULLS, m.null_count, 0)
    b.PrependInt64Slot(_ARRAY_LENGTH, m.length, 0)
    b.PrependInt64Slot(_ARRAY_OFFSET, m.offset, 0)
    b.PrependInt8Slot(_ARRAY_TYPE, m.code, 0)
    return int(b.EndObject())


def write_feather_v1(table: Table, sink: BinaryIO) -> None:
    """Write `table` to `sink` as a Feather V1 file, as pyarrow does with `version=1` (same type
    mapping, errors and layout: each buffer padded to 8 bytes, bitmaps only for columns with
    nulls, null columns as all-null strings)."""
    for c in table.columns:
        if c.num_chunks > 1:
            raise ArrowInvalid("Writing chunked arrays not supported in Feather V1")
        t = c.type
        value_type = t.value_type if isinstance(t, T.DictionaryType) else t
        if value_type != T.null():
            _v1_code(value_type)               # unsupported types fail before anything is written
        if isinstance(t, T.DictionaryType):
            _v1_code(t.index_type)
    out = _V1Writer(sink)
    out.write(FEATHER_V1_MAGIC)
    written: list[tuple[str, _ArrayMeta, int, Any]] = []
    for name, c in zip(table.column_names, table.columns):
        t = c.type
        d = c.chunks[0].data if c.num_chunks else make_empty(t)
        values = out.array(d)
        extra: Any = None
        meta_type = 0
        if isinstance(t, T.DictionaryType):
            assert d.dictionary is not None
            extra = (out.array(d.dictionary), t.ordered)
            meta_type = _META_CATEGORY
        elif isinstance(t, T.TimestampType):
            meta_type, extra = _META_TIMESTAMP, (t.unit, t.tz)
        elif t == T.date32():
            meta_type = _META_DATE
        elif isinstance(t, T.Time32Type):
            meta_type, extra = _META_TIME, t.unit
        written.append((name, values, meta_type, extra))
    b = _builder()
    cols = []
    for name, values, meta_type, extra in written:
        name_off = b.CreateString(name)
        meta_off = 0
        if meta_type == _META_CATEGORY:
            levels = _primitive_array(b, extra[0])
            b.StartObject(2)
            b.PrependBoolSlot(1, extra[1], False)
            b.PrependUOffsetTRelativeSlot(0, levels, 0)
            meta_off = b.EndObject()
        elif meta_type == _META_TIMESTAMP:
            tz = b.CreateString(extra[1]) if extra[1] else 0
            b.StartObject(2)
            if tz:
                b.PrependUOffsetTRelativeSlot(1, tz, 0)
            b.PrependInt8Slot(0, _UNITS.index(extra[0]), 0)
            meta_off = b.EndObject()
        elif meta_type == _META_DATE:
            b.StartObject(0)
            meta_off = b.EndObject()
        elif meta_type == _META_TIME:
            b.StartObject(1)
            b.PrependInt8Slot(0, _UNITS.index(extra), 0)
            meta_off = b.EndObject()
        values_off = _primitive_array(b, values)
        b.StartObject(5)
        if meta_off:
            b.PrependUOffsetTRelativeSlot(_COLUMN_META, meta_off, 0)
        b.PrependUOffsetTRelativeSlot(_COLUMN_VALUES, values_off, 0)
        b.PrependUOffsetTRelativeSlot(_COLUMN_NAME, name_off, 0)
        b.PrependUint8Slot(_COLUMN_META_TYPE, meta_type, 0)
        cols.append(b.EndObject())
    b.StartVector(4, len(cols), 4)
    for off in reversed(cols):
        b.PrependUOffsetTRelative(off)
    columns_vec = _end_vector(b)
    b.StartObject(5)
    b.PrependInt64Slot(_CTABLE_NUM_ROWS, table.num_rows, 0)
    b.PrependUOffsetTRelativeSlot(_CTABLE_COLUMNS, columns_vec, 0)
    b.PrependInt32Slot(_CTABLE_VERSION, _V1_VERSION, 0)
    b.Finish(b.EndObject())
    meta = bytes(b.Output())
    meta_len = out.write(meta)
    out.sink.write(_FOOTER.pack(meta_len) + FEATHER_V1_MAGIC)


def make_empty(t: T.DataType) -> ArrayData:
    """A zero-length array of type `t` (the column of a table without chunks)."""
    if isinstance(t, T.DictionaryType):
        d = make_empty(t.index_type).with_type(t)
        d.dictionary = make_empty(t.value_type)
        return d
    width = _OFFSET_WIDTH.get(_v1_code(t)) if t != T.null() else None
    buffers: list[Buffer | None] = [None, py_buffer(bytes(8))]
    if width is not None:
        buffers.append(py_buffer(b""))
    return ArrayData(t, 0, 0, 0, buffers)
