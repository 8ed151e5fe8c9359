"""Feather V1 files built field by field, for tests of what a reader makes of bad metadata.

The layout and the tables are those of the V1 `feather.fbs`: "FEA1", padding, data, the CTable
flatbuffer, its length (uint32), "FEA1". Each column is a dict: name, values (a dict of the
PrimitiveArray's fields: type, encoding, offset, length, null_count, total_bytes), meta_type
and meta (the TypeMetadata table's fields). A key left out is left out of the flatbuffer.
"""
import struct

import flatbuffers

MAGIC = b"FEA1"
# type codes and union members of feather.fbs
BOOL, INT8, INT16, INT32, INT64 = 0, 1, 2, 3, 4
UINT8, UINT16, UINT32, UINT64, FLOAT, DOUBLE, UTF8, BINARY = 5, 6, 7, 8, 9, 10, 11, 12
CATEGORY, TIMESTAMP, DATE, TIME, LARGE_UTF8, LARGE_BINARY, COMPLEX_FLOAT = range(13, 20)
META_CATEGORY, META_TIMESTAMP, META_DATE, META_TIME = 1, 2, 3, 4


def _end_vector(b, n):
    try:
        return b.EndVector()
    except TypeError:       # flatbuffers < 2.0
        return b.EndVector(n)


def _array(b, spec):
    b.StartObject(6)
    for slot, key in ((5, "total_bytes"), (4, "null_count"), (3, "length"), (2, "offset")):
        if key in spec:
            b.PrependInt64Slot(slot, spec[key], 0)
    if "encoding" in spec:
        b.PrependInt8Slot(1, spec["encoding"], 0)
    if "type" in spec:
        b.PrependInt8Slot(0, spec["type"], 0)
    return b.EndObject()


def _meta(b, meta_type, meta):
    if meta_type == META_CATEGORY:
        levels = _array(b, meta["levels"]) if "levels" in meta else None
        b.StartObject(2)
        if meta.get("ordered"):
            b.PrependBoolSlot(1, True, False)
        if levels is not None:
            b.PrependUOffsetTRelativeSlot(0, levels, 0)
        return b.EndObject()
    tz = b.CreateString(meta["timezone"]) if meta.get("timezone") else None
    b.StartObject(2)
    if tz is not None:
        b.PrependUOffsetTRelativeSlot(1, tz, 0)
    if "unit" in meta:
        b.PrependInt8Slot(0, meta["unit"], 0)
    return b.EndObject()


def metadata(columns, num_rows, version=2):
    """The CTable flatbuffer for `columns` (dicts, see the module docstring)."""
    b = flatbuffers.Builder(256)
    offsets = []
    for col in columns:
        name = b.CreateString(col["name"]) if "name" in col else None
        meta = _meta(b, col["meta_type"], col.get("meta", {})) if "meta" in col else None
        values = _array(b, col["values"]) if "values" in col else None
        b.StartObject(5)
        if meta is not None:
            b.PrependUOffsetTRelativeSlot(3, meta, 0)
        if values is not None:
            b.PrependUOffsetTRelativeSlot(1, values, 0)
        if name is not None:
            b.PrependUOffsetTRelativeSlot(0, name, 0)
        if col.get("meta_type"):
            b.PrependUint8Slot(2, col["meta_type"], 0)
        offsets.append(b.EndObject())
    b.StartVector(4, len(offsets), 4)
    for off in reversed(offsets):
        b.PrependUOffsetTRelative(off)
    vec = _end_vector(b, len(offsets))
    b.StartObject(5)
    b.PrependInt64Slot(1, num_rows, 0)
    b.PrependUOffsetTRelativeSlot(2, vec, 0)
    b.PrependInt32Slot(3, version, 0)
    b.Finish(b.EndObject())
    return bytes(b.Output())


def v1_file(data, columns, num_rows, version=2, meta=None):
    """A V1 file: `data` placed at byte 8 (column offsets are positions in the file), then the
    metadata (`meta` bytes instead of the CTable built from `columns`, when given)."""
    if meta is None:
        meta = metadata(columns, num_rows, version)
    meta += bytes(-len(meta) % 8)
    data += bytes(-len(data) % 8)
    return MAGIC + bytes(4) + data + meta + struct.pack("<I", len(meta)) + MAGIC


def int32_column(name, values, offset=8, **changes):
    """A plain INT32 column dict for `values` (a list of ints) stored at `offset`."""
    spec = dict(type=INT32, offset=offset, length=len(values), null_count=0,
                total_bytes=-(-4 * len(values) // 8) * 8)
    spec.update(changes)
    return {"name": name, "values": spec}


def int32_data(values):
    return struct.pack(f"<{len(values)}i", *values)
