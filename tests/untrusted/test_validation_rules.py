"""One test per validation rule, each with its exact message.

Each IPC case is a valid stream written by pyarrow with one thing broken (a node, a buffer span or
a value in the body, see crafting.py); it is read at the level the rule belongs to, and every
structural case is also shown to read fine once repaired (the untouched stream), so the test
exercises the rule and nothing else. Array cases build ArrayData directly and call validate().
"""
import decimal
import struct

import pytest

pa = pytest.importorskip("pyarrow")

import arrowipc as A  # noqa: E402
from arrowipc import ipc  # noqa: E402
from arrowipc._core.arraydata import ArrayData  # noqa: E402
from arrowipc._core.buffer import py_buffer  # noqa: E402
from arrowipc.errors import ArrowInvalid  # noqa: E402

from crafting import Crafted, file_bytes, stream_bytes  # noqa: E402


def rb(**cols):
    return pa.record_batch(list(cols.values()), names=list(cols))


def read_all_checked(data: bytes, level: str = "structural", **limits):
    reader = ipc.open_stream(data, options=ipc.IpcReadOptions(validate=level, **limits))
    batches = list(reader)
    for b in batches:
        b._columns            # the gate: structural checks pending from the read run here
    return batches


SV = pa.array(["short", "a string longer than twelve"], pa.string_view())
LV = pa.array([[1, 2], [3]], pa.list_view(pa.int32()))
DU = pa.UnionArray.from_dense(pa.array([0, 1, 0], pa.int8()), pa.array([0, 0, 1], pa.int32()),
                              [pa.array([1, 2]), pa.array(["a"])])
SU = pa.UnionArray.from_sparse(pa.array([0, 1, 0], pa.int8()),
                               [pa.array([1, 2, 3]), pa.array(["a", "b", "c"])])
REE = pa.RunEndEncodedArray.from_arrays(pa.array([2, 5], pa.int32()), pa.array(["a", "b"]))
DICT = pa.array(["a", "b", "a"]).dictionary_encode()
MAP = pa.array([[(1, 2)], [(3, 4)]], pa.map_(pa.int32(), pa.int32()))
I32 = pa.array([1, None, 3], pa.int32())
STR = pa.array(["ab", "c"])


def case(column, patch):
    """A stream of one column `x`, patched by patch(crafted, first record batch span)."""
    def build():
        c = Crafted(stream_bytes(rb(x=column)))
        patch(c, c.batch())
        return c.bytes()
    build.original = lambda: stream_bytes(rb(x=column))
    return build


def both(*fns):
    def patch(c, m):
        for f in fns:
            f(c, m)
    return patch


# (rule, stream builder, validation level, exact message)
IPC_RULES = [
    # -- checked while a batch is assembled (O(1) per node) --------------------------------------
    ("null count above length", case(I32, lambda c, m: c.set_node(m, 0, null_count=4)), "structural",
     "stream: field 'x' has length 3 and null count 4; expected 0 <= null count <= length"),
    ("validity bitmap too small", case(I32, lambda c, m: c.set_buffer(m, 0, length=0)), "structural",
     "stream: field 'x' has 1 nulls; its validity bitmap needs 1 bytes but has 0"),
    ("fixed-width values too small", case(I32, lambda c, m: c.set_buffer(m, 1, length=8)), "structural",
     "stream: field 'x' of type int32 and length 3 needs 12 bytes, buffer has 8"),
    ("bool values too small", case(pa.array([True] * 20), lambda c, m: c.set_buffer(m, 1, length=2)),
     "structural", "stream: bool field 'x' of length 20 needs 3 value bytes, buffer has 2"),
    ("offsets buffer too small", case(STR, lambda c, m: c.set_buffer(m, 1, length=8)), "structural",
     "stream: field 'x' needs 12 bytes of offsets, buffer has 8"),
    ("buffer outside the body", case(I32, lambda c, m: c.set_buffer(m, 1, offset=1 << 40)), "structural",
     "stream: buffer 1 of field 'x' spans bytes [1099511627776, 1099511627776+12) but the body has "
     "24 bytes"),
    ("column shorter than the batch", case(I32, lambda c, m: c.set_node(m, 0, length=2, null_count=0)),
     "structural", "stream: column 'x' has length 2 but the batch has 3 rows"),
    ("struct child too short", case(pa.array([{"a": 1}, {"a": 2}]), lambda c, m: c.set_node(m, 1, length=1)),
     "structural", "stream: struct 'x' has length 2 but child 0 has length 1"),
    ("fixed-size list child too short",
     case(pa.array([[1, 2], [3, 4]], pa.list_(pa.int32(), 2)), lambda c, m: c.set_node(m, 1, length=3)),
     "structural", "stream: fixed size list 'x' of length 2 and size 2 needs 4 child values, has 3"),
    ("views buffer too small", case(SV, lambda c, m: c.set_buffer(m, 1, length=16)), "structural",
     "stream: field 'x' needs 32 bytes of views, buffer has 16"),
    ("union type ids too small", case(SU, lambda c, m: c.set_buffer(m, 0, length=2)), "structural",
     "stream: field 'x' needs 3 bytes of type ids, buffer has 2"),
    ("run-end encoded with nulls", case(REE, lambda c, m: c.set_node(m, 0, null_count=1)), "structural",
     "stream: run-end encoded field 'x' has null count 1, expected 0"),
    # -- deferred O(n) checks, run before any data is handed out ---------------------------------
    ("negative first offset", case(STR, lambda c, m: c.write_value(m, 1, "i", 0, -1)), "structural",
     "record batch: field 'x': offsets: offset 0 is -1, expected >= 0"),
    ("decreasing offsets", case(STR, lambda c, m: c.write_value(m, 1, "i", 1, 5)), "structural",
     "record batch: field 'x': offsets: offsets must not decrease, but offset 2 is less than offset 1"),
    ("offset beyond the data", case(STR, lambda c, m: c.write_value(m, 1, "i", 2, 100)), "structural",
     "record batch: field 'x': offsets: last offset 100 is beyond the end of the data (3 bytes or "
     "values)"),
    ("list offset beyond the child", case(pa.array([[1], [2, 3]]), lambda c, m: c.write_value(m, 1, "i", 2, 4)),
     "structural", "record batch: field 'x': offsets: last offset 4 is beyond the end of the data "
     "(3 bytes or values)"),
    ("view with a negative length", case(SV, lambda c, m: c.write_value(m, 1, "i", 4, -5)), "structural",
     "record batch: field 'x': view 1 has a negative length or offset"),
    ("view naming a missing buffer", case(SV, lambda c, m: c.write_value(m, 1, "i", 6, 7)), "structural",
     "record batch: field 'x': view 1 refers to a data buffer that does not exist (1 variadic buffers)"),
    ("view beyond its data buffer", case(SV, lambda c, m: c.write_value(m, 1, "i", 7, 1000)), "structural",
     "record batch: field 'x': view 1 extends past the end of its data buffer"),
    ("list view with a negative size", case(LV, lambda c, m: c.write_value(m, 2, "i", 1, -1)), "structural",
     "record batch: field 'x': list view 1 has a negative offset or size"),
    ("list view beyond the child", case(LV, lambda c, m: c.write_value(m, 2, "i", 1, 5)), "structural",
     "record batch: field 'x': list view 1 extends past the 3 child values"),
    ("undeclared union type id", case(DU, lambda c, m: c.write_value(m, 0, "b", 1, 5)), "structural",
     "record batch: field 'x': slot 1 has type id 5, not one of the declared [0, 1]"),
    ("negative dense union offset", case(DU, lambda c, m: c.write_value(m, 1, "i", 2, -1)), "structural",
     "record batch: field 'x': dense union offset 2 is negative"),
    ("dense union offset beyond the child", case(DU, lambda c, m: c.write_value(m, 1, "i", 2, 2)),
     "structural", "record batch: field 'x': dense union offset 2 is past the end of its child"),
    ("sparse union child too short", case(SU, lambda c, m: c.set_node(m, 2, length=2)), "structural",
     "record batch: field 'x': sparse union child 1 has 2 values, expected at least 3"),
    ("run ends and values of different lengths", case(REE, lambda c, m: c.set_node(m, 2, length=1)),
     "structural", "record batch: field 'x': 2 run ends but 1 values"),
    ("run end not positive", case(REE, lambda c, m: c.write_value(m, 1, "i", 0, 0)), "structural",
     "record batch: field 'x': run end 0 is not positive"),
    ("run ends not increasing", case(REE, lambda c, m: c.write_value(m, 1, "i", 1, 2)), "structural",
     "record batch: field 'x': run end 1 is not greater than the one before"),
    ("run ends not covering the length", case(REE, lambda c, m: c.write_value(m, 1, "i", 1, 4)),
     "structural", "record batch: field 'x': the run ends cover 4 values, expected at least 5"),
    ("dictionary index past the dictionary", case(DICT, lambda c, m: c.write_value(m, 1, "i", 2, 7)),
     "structural", "record batch: field 'x': dictionary index at slot 2 is outside the dictionary "
     "of 2 values"),
    ("negative dictionary index", case(DICT, lambda c, m: c.write_value(m, 1, "i", 2, -1)), "structural",
     "record batch: field 'x': dictionary index at slot 2 is outside the dictionary of 2 values"),
    # -- full: value checks, eager ---------------------------------------------------------------
    ("invalid UTF-8 in a string", case(pa.array(["ab", "cd"]), lambda c, m: c.write_bytes(m, 2, 2, b"\xff")),
     "full", "stream: field 'x': value 1 is not valid UTF-8 (bad byte at offset 0 of the value)"),
    ("invalid UTF-8 in a large string",
     case(pa.array(["ab", "cd"], pa.large_string()), lambda c, m: c.write_bytes(m, 2, 3, b"\xc3")),
     "full", "stream: field 'x': value 1 is not valid UTF-8 (bad byte at offset 1 of the value)"),
    ("invalid UTF-8 in a string view", case(SV, lambda c, m: c.write_bytes(m, 1, 4, b"\xe0\x80")),
     "full", "stream: field 'x': value 0 is not valid UTF-8 (bad byte at offset 0 of the value)"),
    ("binary view prefix differs from its data", case(SV, lambda c, m: c.write_bytes(m, 1, 20, b"X")),
     "full", "stream: field 'x': view 1 has a prefix that differs from the first 4 bytes of its data"),
    ("decimal beyond its precision",
     case(pa.array([decimal.Decimal("1.5")], pa.decimal128(3, 1)), lambda c, m: c.write_value(m, 1, "q", 0, 10000)),
     "full", "stream: field 'x': decimal value 1000.0 at slot 0 does not fit precision 3"),
    ("date64 not a whole day", case(pa.array([86400000], pa.date64()), lambda c, m: c.write_value(m, 1, "q", 0, 5)),
     "full", "stream: field 'x': date64 value 5 at slot 0 is not a whole number of days"),
    ("time32 outside a day", case(pa.array([1], pa.time32("ms")), lambda c, m: c.write_value(m, 1, "i", 0, 86400000)),
     "full", "stream: field 'x': time32[ms] value 86400000 at slot 0 is outside [0, 86400000)"),
    ("time64 outside a day", case(pa.array([1], pa.time64("us")), lambda c, m: c.write_value(m, 1, "q", 0, -1)),
     "full", "stream: field 'x': time64[us] value -1 at slot 0 is outside [0, 86400000000)"),
    ("null count differs from the bitmap", case(I32, lambda c, m: c.set_node(m, 0, null_count=2)), "full",
     "stream: field 'x': null count is 2 but the validity bitmap has 1 nulls"),
    ("dense union offsets decreasing within a child",
     case(DU, both(lambda c, m: c.write_value(m, 1, "i", 0, 1), lambda c, m: c.write_value(m, 1, "i", 2, 0))),
     "full", "stream: field 'x': dense union offset 2 is less than the previous offset into the same child"),
    ("null map keys",
     case(MAP, both(lambda c, m: c.set_node(m, 2, null_count=2), lambda c, m: c.set_buffer(m, 3, offset=0, length=8))),
     "full", "stream: field 'x': map keys must not be null, found 2 null keys"),
]


@pytest.mark.parametrize("rule, build, level, message", IPC_RULES, ids=[r[0] for r in IPC_RULES])
def test_ipc_rule(rule, build, level, message):
    read_all_checked(build.original(), level)          # the unbroken stream reads at this level
    with pytest.raises(ArrowInvalid) as info:
        read_all_checked(build(), level)
    assert str(info.value) == message
    if level == "full":
        # a value problem is not a structural one: the default level reads it without complaint
        read_all_checked(build(), "structural")


# -- resource bounds (IpcReadOptions) ----------------------------------------------------------

NESTED = rb(a=pa.array([1]), b=pa.array([[{"x": 1}]]))
VIEWS2 = rb(x=pa.concat_arrays([SV, SV]))   # two variadic data buffers


def _compressed():
    return stream_bytes(rb(x=pa.array(list(range(10000)))), compression="zstd")


def _claim(size):
    def build():
        c = Crafted(_compressed())
        m = c.batch()
        struct.pack_into("<q", c.data, m.body_start + m.buffers[1][0], size)
        return c.bytes()
    return build


def _overlapping_misaligned():
    c = Crafted(stream_bytes(rb(x=pa.array(range(8), pa.int64()), y=pa.array(range(8), pa.int64()))))
    m = c.batch()
    c.set_buffer(m, 1, offset=1, length=m.body_len - 1)
    c.set_buffer(m, 3, offset=1, length=m.body_len - 1)
    return c.bytes()


LIMIT_RULES = [
    ("metadata size", lambda: stream_bytes(NESTED), dict(max_metadata_size=64),
     "stream: message at byte 0 claims 256 bytes of metadata; expected 1..64"),
    ("number of fields", lambda: stream_bytes(NESTED), dict(max_fields=3),
     "stream: the schema has more than 3 fields, nested fields counted "
     "(IpcReadOptions(max_fields=...))"),
    ("nesting depth", lambda: stream_bytes(NESTED), dict(max_nesting_depth=2),
     "stream: fields are nested more than 2 levels deep (IpcReadOptions(max_nesting_depth=...))"),
    ("buffers per batch", lambda: stream_bytes(NESTED), dict(max_buffers=3),
     "stream: the record batch lists 7 buffers, more than the limit of 3 "
     "(IpcReadOptions(max_buffers=...))"),
    ("variadic buffers per batch", lambda: stream_bytes(VIEWS2), dict(max_variadic_buffers=1),
     "stream: the record batch lists more than 1 variadic data buffers "
     "(IpcReadOptions(max_variadic_buffers=...))"),
    ("decompressed bytes per message", _compressed, dict(max_decompressed_size=1000),
     "stream: message at byte 128: compressed buffers claim more than 1000 uncompressed bytes in "
     "one message (IpcReadOptions(max_decompressed_size=...))"),
    ("decompressed size beyond what the codec can produce", _claim(1 << 40), {},
     "stream: message at byte 128: buffer 1 claims 1099511627776 uncompressed bytes, more than "
     "ZSTD can produce from its 10822 compressed bytes"),
    ("re-alignment copies", _overlapping_misaligned, {},
     "stream: re-aligning buffer 3 of field 'y' would copy more bytes than the 128-byte body "
     "holds (overlapping buffers)"),
]


@pytest.mark.parametrize("rule, build, limits, message", LIMIT_RULES, ids=[r[0] for r in LIMIT_RULES])
def test_resource_bound(rule, build, limits, message):
    with pytest.raises(ArrowInvalid) as info:
        read_all_checked(build(), **limits)
    assert str(info.value) == message


def test_schema_bound_rechecked_on_a_cached_schema():
    data = stream_bytes(NESTED)
    read_all_checked(data)                         # decoded and cached with the default bounds
    with pytest.raises(ArrowInvalid) as info:
        read_all_checked(data, max_fields=3)
    assert str(info.value) == ("stream: the schema has 4 fields, nested fields counted, more than "
                               "the limit of 3 (IpcReadOptions(max_fields=...))")


def test_field_tree_bomb_is_refused_before_decoding():
    """A schema whose children vectors all point at one shared table: 10 levels of 50 children
    describe 50**10 fields in a few kilobytes of metadata."""
    import flatbuffers
    b = flatbuffers.Builder(1024)

    def field(children):
        vec = None
        if children is not None:
            b.StartVector(4, len(children), 4)
            for c in reversed(children):
                b.PrependUOffsetTRelative(c)
            vec = b.EndVector()
        b.StartObject(7)
        b.PrependUint8Slot(2, 13 if children is not None else 1, 0)   # Struct_ / Null
        if vec is not None:
            b.PrependUOffsetTRelativeSlot(5, vec, 0)
        return b.EndObject()

    leaf = field(None)
    level = leaf
    for _ in range(10):
        level = field([level] * 50)
    b.StartVector(4, 1, 4)
    b.PrependUOffsetTRelative(level)
    fields = b.EndVector()
    b.StartObject(4)
    b.PrependUOffsetTRelativeSlot(1, fields, 0)
    schema = b.EndObject()
    b.StartObject(5)
    b.PrependInt16Slot(0, 4, 0)          # V5
    b.PrependUint8Slot(1, 1, 0)          # Schema header
    b.PrependUOffsetTRelativeSlot(2, schema, 0)
    b.Finish(b.EndObject())
    meta = bytes(b.Output())
    meta += bytes(-len(meta) % 8)
    data = b"\xff\xff\xff\xff" + struct.pack("<i", len(meta)) + meta + b"\xff\xff\xff\xff\0\0\0\0"
    with pytest.raises(ArrowInvalid) as info:
        ipc.open_stream(data)
    assert str(info.value) == ("stream: the schema has more than 100000 fields, nested fields "
                               "counted (IpcReadOptions(max_fields=...))")


def test_footer_larger_than_the_metadata_bound():
    data = file_bytes(rb(x=pa.array([1])))
    with pytest.raises(ArrowInvalid) as info:
        ipc.open_file(data, options=ipc.IpcReadOptions(max_metadata_size=64))
    assert str(info.value) == ("file: footer of 160 bytes is larger than the limit of 64 "
                               "(IpcReadOptions(max_metadata_size=...))")


@pytest.mark.parametrize("kwargs, message", [
    (dict(validate="lazy"), "validate must be one of 'structural', 'full', 'none'; got 'lazy'"),
    (dict(max_fields=0), "max_fields must be a positive number, got 0"),
    (dict(max_nesting_depth=65), "max_nesting_depth can be at most 64, got 65"),
])
def test_read_options_are_checked(kwargs, message):
    with pytest.raises(ValueError) as info:
        ipc.IpcReadOptions(**kwargs)
    assert str(info.value) == message


# -- truncation messages -----------------------------------------------------------------------

ONE = stream_bytes(rb(x=pa.array([1])))


@pytest.mark.parametrize("data, message", [
    (b"", "stream: expected a schema message at byte 0, found the end of the stream (empty or "
          "truncated input)"),
    (ONE[:-8], "stream: truncated at byte 280: the input ends after 1 record batches without an "
               "end-of-stream marker (IpcReadOptions(allow_missing_eos=True) accepts that)"),
    (ONE[:-4], "stream: truncated message length at byte 284: expected 4 bytes, got 0"),
    (ONE[:-12], "stream: truncated record batch message at byte 128. Expected to be able to read 8 "
     "bytes for message body, got 4"),
    (ONE[:130], "stream: truncated message prefix at byte 128: expected 4 bytes, got 2"),
    (ONE[:140], "stream: truncated message at byte 128: expected 136 bytes of metadata, got 4"),
], ids=["empty", "no end-of-stream marker", "inside the marker", "inside a body",
        "inside a prefix", "inside metadata"])
def test_truncation_message(data, message):
    with pytest.raises(ArrowInvalid) as info:
        list(ipc.open_stream(data))
    assert str(info.value) == message


def test_missing_end_marker_accepted_when_asked():
    batches = list(ipc.open_stream(ONE[:-8], options=ipc.IpcReadOptions(allow_missing_eos=True)))
    assert [b.to_pydict() for b in batches] == [{"x": [1]}]


def test_missing_end_marker_on_a_file_like_source():
    import io
    reader = ipc.open_stream(io.BytesIO(ONE[:-8]))
    assert reader.read_next_batch().to_pydict() == {"x": [1]}
    with pytest.raises(ArrowInvalid, match="truncated at byte 280"):
        reader.read_next_batch()


# -- array-level rules (Array/RecordBatch/Table.validate) --------------------------------------

def buf(n):
    return py_buffer(bytes(n))


def _deep(levels):
    d = ArrayData(A.int32(), 0, 0, 0, [None, buf(0)])
    for _ in range(levels):
        d = ArrayData(A.list_(d.type), 0, 0, 0, [None, buf(8)], [d])
    return d


ARRAY_RULES = [
    ("negative offset", ArrayData(A.int32(), 2, -1, 0, [None, buf(8)]),
     "array: negative offset -1 or length 2"),
    ("null count above length", ArrayData(A.int32(), 2, 0, 3, [py_buffer(b"\0"), buf(8)]),
     "array: null count 3 exceeds length 2"),
    ("negative null count", ArrayData(A.int32(), 2, 0, -5, [None, buf(8)]),
     "array: null count -5 is negative"),
    ("nulls without a bitmap", ArrayData(A.int32(), 2, 0, 1, [None, buf(8)]),
     "array: null count 1 but no validity bitmap"),
    ("missing buffer", ArrayData(A.int32(), 2, 0, 0, [None]),
     "array: expected 2 buffers for type int32, got 1"),
    ("values buffer too small", ArrayData(A.int32(), 3, 0, 0, [None, buf(8)]),
     "array: the values buffer needs 12 bytes, has 8"),
    ("validity buffer too small", ArrayData(A.int32(), 9, 0, 1, [py_buffer(b"\0"), buf(36)]),
     "array: the validity buffer needs 2 bytes, has 1"),
    ("offsets buffer too small", ArrayData(A.string(), 2, 0, 0, [None, buf(8), py_buffer(b"")]),
     "array: the offsets buffer needs 12 bytes, has 8"),
    ("missing child", ArrayData(A.struct([A.field("a", A.int32())]), 1, 0, 0, [None], []),
     "array: type struct<a: int32> needs 1 children, got 0"),
    ("child of another type", ArrayData(A.struct([A.field("a", A.int32())]), 1, 0, 0, [None],
                                        [ArrayData(A.int64(), 1, 0, 0, [None, buf(8)])]),
     "array: child 0 has type int64, expected int32"),
    ("struct child too short", ArrayData(A.struct([A.field("a", A.int32())]), 2, 0, 0, [None],
                                         [ArrayData(A.int32(), 1, 0, 0, [None, buf(4)])]),
     "array: struct child 0 has 1 values, expected at least 2"),
    ("fixed-size list child too short", ArrayData(A.list_(A.int32(), 2), 2, 0, 0, [None],
                                                  [ArrayData(A.int32(), 3, 0, 0, [None, buf(12)])]),
     "array: fixed size list needs 4 child values, child has 3"),
    ("dictionary missing", ArrayData(A.dictionary(A.int32(), A.string()), 1, 0, 0, [None, buf(4)]),
     "array: dictionary array without a dictionary"),
    ("dictionary of another type", ArrayData(A.dictionary(A.int32(), A.string()), 1, 0, 0,
                                             [None, buf(4)],
                                             dictionary=ArrayData(A.int32(), 1, 0, 0, [None, buf(4)])),
     "array: dictionary has type int32, expected string"),
]


@pytest.mark.parametrize("rule, data, message", ARRAY_RULES, ids=[r[0] for r in ARRAY_RULES])
def test_array_rule(rule, data, message):
    with pytest.raises(ArrowInvalid) as info:
        A.Array(data).validate()
    assert str(info.value) == message


def test_nesting_depth_of_arrays():
    A.Array(_deep(63)).validate()
    with pytest.raises(ArrowInvalid) as info:
        A.Array(_deep(64)).validate()
    assert str(info.value) == "array" + ".item" * 64 + ": nesting deeper than 64"


def test_full_validation_on_arrays_batches_and_tables():
    bad = pa.Array.from_buffers(pa.string(), 2, [None, pa.py_buffer(struct.pack("<3i", 0, 1, 2)),
                                                 pa.py_buffer(b"a\xff")])
    arr = A.array(bad)
    arr.validate()                                 # structurally fine
    with pytest.raises(ArrowInvalid) as info:
        arr.validate(full=True)
    assert str(info.value) == "array: value 1 is not valid UTF-8 (bad byte at offset 0 of the value)"
    batch = A.record_batch({"s": arr})
    with pytest.raises(ArrowInvalid) as info:
        batch.validate(full=True)
    assert str(info.value) == ("column 's': value 1 is not valid UTF-8 (bad byte at offset 0 of "
                               "the value)")
    with pytest.raises(ArrowInvalid):
        A.table(batch).validate(full=True)


def test_decompression_claims_beyond_memory_are_an_arrowipc_error(tmp_path):
    """A claim inside every bound (a 70 kB ZSTD buffer may in principle hold 2.2 GB) still fails
    cleanly when the memory is not there: run in a worker limited to 1 GiB more address space."""
    import os
    import harness
    noise = pa.array([os.urandom(70_000)], pa.binary())
    c = Crafted(stream_bytes(rb(x=noise), compression="zstd"))
    m = c.batch()
    at = m.body_start + m.buffers[2][0]
    struct.pack_into("<q", c.data, at, 2_200_000_000)
    path = tmp_path / "claims-2.2GB.arrows"
    path.write_bytes(c.bytes())
    os.environ["ARROWIPC_REPLAY_MEMORY"] = str(1 << 30)
    try:
        result = harness.ReplayPool(1).run([("file", str(path), "stream")])
    finally:
        del os.environ["ARROWIPC_REPLAY_MEMORY"]
    (outcome,) = result.values()
    assert outcome["outcome"] == "error", outcome
    # either the codec layer measures the implausible claim by decoding before allocating it,
    # or the allocation fails: both are arrowipc errors naming the claim
    assert outcome["detail"].startswith(("ArrowInvalid: stream: message at byte 120: buffer 2: ZSTD "
                                         "data decodes to 70000 bytes but its prefix states "
                                         "2200000000",
                                         "ArrowCapacityError: stream: message at byte 120: no memory "
                                         "for the 2200000008 bytes")), outcome


def test_decimal_error_shows_a_value_whatever_scale_a_header_claims():
    # the message's value is built with the header's scale: any int32 must format, not raise
    import arrowipc
    from arrowipc._core.arraydata import ArrayData
    from arrowipc.array import make_array
    values = arrowipc.array(pa.array([10 ** 20], pa.decimal128(38, 0))).data.buffers
    for scale in (-2 ** 31 + 1, 2 ** 31 - 1):
        bad = make_array(ArrayData(arrowipc.decimal128(5, scale), 1, 0, 0, values))
        with pytest.raises(arrowipc.ArrowInvalid, match=r"decimal value 1\.0+E[+-]\d+ at slot 0 "
                                                         r"does not fit precision 5"):
            bad.validate(full=True)


def _first_offsets_error(offsets, data_size):
    """What a scan offset by offset finds wrong first (the rules above), or None."""
    if offsets[0] < 0:
        return f"offset 0 is {offsets[0]}, expected >= 0"
    for i in range(1, len(offsets)):
        if offsets[i] < offsets[i - 1]:
            return f"offsets must not decrease, but offset {i} is less than offset {i - 1}"
    if offsets[-1] > data_size:
        return f"last offset {offsets[-1]} is beyond the end of the data"
    return None


@pytest.mark.parametrize("width", [4, 8])
def test_offsets_checks_name_the_first_bad_offset_wherever_it_lies(width):
    """The offsets kernel tests whole blocks at once: a decrease, a negative offset or an extreme
    one, at any position (either side of a block's edge, in a slice), is reported where a scan
    offset by offset finds it."""
    import array
    import re
    from arrowipc._core.offsets import check_offsets
    code = {4: "i", 8: "q"}[width]
    lowest, highest = -(1 << (8 * width - 1)), (1 << (8 * width - 1)) - 1
    n, skip = 300, 3
    good = [2 * i for i in range(n + skip + 1)]
    assert check_offsets(py_buffer(array.array(code, good).tobytes()), skip, n, width,
                         2 * (n + skip)) == (2 * skip, 2 * (n + skip))
    for at in sorted({1, 2, 15, 16, 17, 31, 32, 33, 63, 64, 65, 127, 128, 129, 255, 256, 257,
                      n - 1, n}):
        for value in (good[skip + at - 1] - 1, -1, lowest, highest):
            offsets = list(good)
            offsets[skip + at] = value
            expected = _first_offsets_error(offsets[skip:], 2 * (n + skip))
            with pytest.raises(ArrowInvalid, match=re.escape(expected)):
                check_offsets(py_buffer(array.array(code, offsets).tobytes()), skip, n, width,
                              2 * (n + skip))


def _footer_field_moved(data: bytes, slot: int, by: int) -> tuple[bytes, int]:
    """`data` (a file) with the uoffset in its footer's root table `slot` moved `by` bytes; the
    position, within the footer, it then points to."""
    out = bytearray(data)
    start = len(out) - 10 - struct.unpack_from("<i", out, len(out) - 10)[0]
    root = start + struct.unpack_from("<I", out, start)[0]
    vtable = root - struct.unpack_from("<i", out, root)[0]
    field = root + struct.unpack_from("<H", out, vtable + 4 + 2 * slot)[0]
    struct.pack_into("<I", out, field, struct.unpack_from("<I", out, field)[0] + by)
    return bytes(out), field - start + struct.unpack_from("<I", out, field)[0]


@pytest.mark.parametrize("by", [1, 2, 3])
def test_a_flatbuffer_vector_not_aligned_to_4_bytes_is_refused(by):
    # read unaligned, the footer's block vector gave other bytes as its count (0 blocks: an
    # empty file where pyarrow's verifier refuses the footer)
    data = file_bytes([rb(x=pa.array([1, 2, 3]))] * 2)
    bad, at = _footer_field_moved(data, 3, by)             # Footer.recordBatches
    with pytest.raises(ArrowInvalid, match=f"^flatbuffer Footer: vector in field 3 at "
                                           f"byte {at} is not aligned to 4 bytes$"):
        ipc.open_file(bad)
    with pytest.raises(OSError, match="Verification of flatbuffer-encoded Footer failed"):
        pa.ipc.open_file(bad)
    assert ipc.open_file(data).read_all().num_rows == 6


@pytest.mark.parametrize("by", [1, 2, 3])
def test_a_flatbuffer_table_not_aligned_to_4_bytes_is_refused(by):
    data = file_bytes([rb(x=pa.array([1, 2, 3]))])
    bad, at = _footer_field_moved(data, 1, by)             # Footer.schema
    with pytest.raises(ArrowInvalid, match=f"flatbuffer .*table at byte {at} is not aligned "
                                           f"to 4 bytes$"):
        ipc.open_file(bad)
    with pytest.raises(OSError, match="Verification of flatbuffer-encoded Footer failed"):
        pa.ipc.open_file(bad)
