"""Resource bounds on untrusted IPC input, checked before the memory they guard is allocated.

A flatbuffer vector may point at the same table many times, so a schema of a few kilobytes can
describe billions of fields (each level multiplying the one above). `schema_size` walks the
field tree without building anything and stops as soon as a bound is passed. Compressed buffers
state their uncompressed size in an 8-byte prefix; `check_decompressed_sizes` bounds those claims
by what the codecs can actually produce from the bytes present and by a per-message total.
"""
from __future__ import annotations

import struct

from .._core.buffer import Buffer
from ..errors import ArrowInvalid

_FIELD_CHILDREN = 5        # Field.children in Schema.fbs
_SCHEMA_FIELDS = 1         # Schema.fields
_I64 = struct.Struct("<q")

# The most output one input byte can produce, a fact of each format: an LZ4 match length grows by
# 255 per extra byte; a 4-byte ZSTD RLE block yields at most one 128 KiB block. The constants
# cover frame headers.
_MAX_RATIO = {0: 256, 1: 32768}
_MAX_EXTRA = {0: 1 << 16, 1: 1 << 17}
_CODEC_NAMES = {0: "LZ4_FRAME", 1: "ZSTD"}


def schema_size(schema_table, max_fields: int, max_depth: int, where: str = "schema"):
    """(number of fields, deepest nesting) of a Schema table, nested fields counted.

    Raises ArrowInvalid as soon as either passes its bound; the walk visits at most max_fields + 1
    fields, whatever the metadata claims.
    """
    count, deepest = 0, 0
    n = schema_table.vector_length(_SCHEMA_FIELDS)
    if n > max_fields:
        raise ArrowInvalid(f"{where}: the schema has {n} top-level fields, more than the limit of "
                           f"{max_fields} (IpcReadOptions(max_fields=...))")
    stack = [(t, 1) for t in schema_table.tables(_SCHEMA_FIELDS, "Field")]
    while stack:
        t, depth = stack.pop()
        count += 1
        if count > max_fields:
            raise ArrowInvalid(f"{where}: the schema has more than {max_fields} fields, nested "
                               f"fields counted (IpcReadOptions(max_fields=...))")
        if depth > max_depth:
            raise ArrowInvalid(f"{where}: fields are nested more than {max_depth} levels deep "
                               f"(IpcReadOptions(max_nesting_depth=...))")
        deepest = max(deepest, depth)
        # the vector's length first: never materialize more entries than the bound allows
        if t.vector_length(_FIELD_CHILDREN) > max_fields - count:
            raise ArrowInvalid(f"{where}: the schema has more than {max_fields} fields, nested "
                               f"fields counted (IpcReadOptions(max_fields=...))")
        stack.extend((c, depth + 1) for c in t.tables(_FIELD_CHILDREN, "Field"))
    return count, deepest


def check_schema_bounds(n_fields: int, depth: int, options, where: str = "schema") -> None:
    """Re-check a schema decoded (and cached) earlier against this reader's options."""
    if n_fields > options.max_fields:
        raise ArrowInvalid(f"{where}: the schema has {n_fields} fields, nested fields counted, "
                           f"more than the limit of {options.max_fields} "
                           f"(IpcReadOptions(max_fields=...))")
    if depth > options.max_nesting_depth:
        raise ArrowInvalid(f"{where}: fields are nested {depth} levels deep, more than the limit "
                           f"of {options.max_nesting_depth} (IpcReadOptions(max_nesting_depth=...))")


def check_decompressed_sizes(spans: list, body: Buffer, codec: int, needed: list, limit: int,
                             where: str) -> int:
    """The total uncompressed size the needed buffers claim, after checking each claim against
    what its codec can produce from the bytes present, and the total against `limit`."""
    total = 0
    ratio, extra = _MAX_RATIO[codec], _MAX_EXTRA[codec]
    for i, (off, n) in enumerate(spans):
        if not needed[i] or n < 8:
            continue               # absent buffers, and too-short ones the codec layer reports
        if off < 0 or off > body.size or n > body.size - off:
            continue               # reported, with its position, by the codec layer
        claimed = _I64.unpack(body.slice(off, 8).to_pybytes())[0]
        if claimed < 0:
            continue               # -1 marks a buffer stored raw; others are rejected later
        if claimed > ratio * (n - 8) + extra:
            raise ArrowInvalid(f"{where}: buffer {i} claims {claimed} uncompressed bytes, more than "
                               f"{_CODEC_NAMES[codec]} can produce from its {n - 8} compressed bytes")
        total += claimed
        if total > limit:
            raise ArrowInvalid(f"{where}: compressed buffers claim more than {limit} uncompressed "
                               f"bytes in one message (IpcReadOptions(max_decompressed_size=...))")
    return total
