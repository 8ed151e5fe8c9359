"""Gold files of arrow-testing: the integration JSON, the .stream and the .arrow_file must agree.

For every `generated_*.json.gz` under data/arrow-ipc-stream/integration/*/, the JSON read by
`arrowipc.integration.read_json` is compared with the `.stream` read by `arrowipc.ipc.open_stream`
and the `.arrow_file` read by `arrowipc.ipc.open_file`: schema (names, types, nullability, metadata
at every level) and every batch's values. Then write_json → read_json must give the same data.
No pyarrow here: the JSON is the oracle for the IPC readers and the other way round.

Values are compared twice: with `to_pylist()` (what users see) and, because to_pylist cannot
convert some valid data (nanosecond times that are not whole microseconds, durations beyond
datetime.timedelta, structs with duplicate field names), with a "plain" view that reads temporal
types as their integers and renames duplicate struct fields. Where to_pylist raises on the IPC
side, the JSON side must raise the same error type.
"""
from __future__ import annotations

import glob
import io
import math
import os

import pytest

from arrowipc import ipc
from arrowipc import types as T
from arrowipc._core.arraydata import ArrayData
from arrowipc.array import make_array
from arrowipc.errors import ArrowInvalid
from arrowipc.integration import read_json, read_json_table, write_json
from arrowipc.table import RecordBatch

import strategies as S
import testdata

ROOT = testdata.INTEGRATION

# -- capability table -----------------------------------------------------------------------------
# Folder (or folder/file) -> None when everything is expected to pass, else the reason the IPC
# side is expected to fail (strict xfail: a fix turns the test red so the entry gets removed).
CAPABILITIES = {
    "0.14.1": None,
    "0.17.1": None,
    "1.0.0-bigendian": None,
    "1.0.0-littleendian": None,
    "2.0.0-compression": None,       # lz4 and zstandard are installed
    "4.0.0-shareddict": None,
    "cpp-21.0.0": None,
}


def _gold_cases():
    out = []
    for path in sorted(glob.glob(os.path.join(ROOT, "*", "*.json.gz"))):
        base = path[:-len(".json.gz")]
        folder, name = os.path.relpath(base, ROOT).split(os.sep)
        reason = CAPABILITIES.get(f"{folder}/{name}", CAPABILITIES.get(folder))
        marks = [pytest.mark.xfail(reason=reason, strict=True)] if reason else []
        out.append(pytest.param(base, id=f"{folder}/{name}", marks=marks))
    return out


GOLD = _gold_cases()


def test_every_folder_is_in_the_capability_table():
    folders = {os.path.basename(os.path.dirname(p)) for p in glob.glob(os.path.join(ROOT, "*", "*.json.gz"))}
    assert folders, f"no gold files under {ROOT}"
    assert folders <= set(CAPABILITIES)
    assert len(GOLD) >= 90   # the seven folders hold 94 JSON gold files


# -- comparison helpers ---------------------------------------------------------------------------

def _rebuilt(t, fix):
    """`t` with every type in it rebuilt bottom-up through `fix(type) -> type`."""
    def rf(f, name=None):
        return T.Field(f.name if name is None else name, _rebuilt(f.type, fix), f.nullable,
                       f.metadata)

    if isinstance(t, T.DictionaryType):
        t = T.DictionaryType(t.index_type, _rebuilt(t.value_type, fix), t.ordered)
    elif isinstance(t, T.ExtensionType):
        t = T.ExtensionType(t.extension_name, _rebuilt(t.storage, fix), t.serialized)
    elif isinstance(t, T.MapType):
        t = T.MapType(rf(t.key_field), rf(t.item_field), t.keys_sorted, t.value_field.name)
    elif isinstance(t, T.FixedSizeListType):
        t = T.FixedSizeListType(rf(t.value_field), t.list_size)
    elif isinstance(t, (T.ListType, T.LargeListType, T.ListViewType, T.LargeListViewType)):
        t = type(t)(rf(t.value_field))
    elif isinstance(t, T.StructType):
        t = T.StructType([rf(f) for f in t.fields])
    elif isinstance(t, T.UnionType):
        t = T.UnionType([rf(f) for f in t.fields], t.mode, t.type_codes)
    elif isinstance(t, T.RunEndEncodedType):
        t = T.RunEndEncodedType(t.run_end_type, rf(t.field(1)))
    return fix(t)


def _canonical_map_names(t):
    # Map entry/key/value names carry no meaning (Arrow C++ ignores them when comparing types);
    # the gold .stream files even spell them differently from their .json and .arrow_file.
    if isinstance(t, T.MapType):
        return T.MapType(t.key_field.with_name("key"), t.item_field.with_name("value"),
                         t.keys_sorted)
    return t


def _field_diff(a: T.Field, b: T.Field, where: str, map_level: int = 0):
    """A description of the first difference between two fields (recursively), or None.
    map_level 1 and 2: the entries field of a map and its key/value, whose names are not compared."""
    if map_level == 0 and a.name != b.name:
        return f"{where}: name {a.name!r} != {b.name!r}"
    if a.nullable != b.nullable:
        return f"{where}: nullable {a.nullable} != {b.nullable}"
    # (the entries struct of a map was compared, names aside, with the map type itself)
    if map_level != 1 and (_rebuilt(a.type, _canonical_map_names)
                           != _rebuilt(b.type, _canonical_map_names)):
        return f"{where}: type {a.type} != {b.type}"
    if a.metadata != b.metadata:
        return f"{where}: metadata {a.metadata} != {b.metadata}"
    ta = a.type.value_type if isinstance(a.type, T.DictionaryType) else a.type
    tb = b.type.value_type if isinstance(b.type, T.DictionaryType) else b.type
    child_level = 1 if isinstance(ta.storage_type, T.MapType) else (2 if map_level == 1 else 0)
    for i, (ca, cb) in enumerate(zip(ta.storage_type.fields, tb.storage_type.fields)):
        d = _field_diff(ca, cb, f"{where}.{ca.name or i}", child_level)
        if d:
            return d
    return None


def assert_schema_equal(a: T.Schema, b: T.Schema):
    assert a.names == b.names
    assert a.metadata == b.metadata
    for fa, fb in zip(a, b):
        d = _field_diff(fa, fb, fa.name)
        assert d is None, d


_PLAIN_TEMPORAL = (T.TimestampType, T.Time32Type, T.Time64Type, T.DurationType)


def _plain_fix(t):
    if isinstance(t, _PLAIN_TEMPORAL) or t.name in ("date32[day]", "date64[ms]"):
        return T.int32() if t.bit_width == 32 else T.int64()
    if isinstance(t, T.StructType):
        names = [f.name for f in t.fields]
        if len(set(names)) != len(names):
            return T.StructType([f.with_name(f"{i}:{f.name}") for i, f in enumerate(t.fields)])
    return t


def _plain_type(t):
    """The type with temporal types read as their integers and duplicate struct names made unique."""
    return _rebuilt(t, _plain_fix)


def _plain(d: ArrayData) -> ArrayData:
    return ArrayData(_plain_type(d.type), d.length, d.offset, d.null_count, list(d.buffers),
                     [_plain(c) for c in d.children],
                     None if d.dictionary is None else _plain(d.dictionary))


def _same(a, b) -> bool:
    """Equality of Python values where NaN equals NaN (at any depth)."""
    if isinstance(a, float) and isinstance(b, float):
        return a == b or (math.isnan(a) and math.isnan(b))
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    return type(a) is type(b) and (a == b or (S.is_nat(a) and S.is_nat(b)))


def _first_difference(a: list, b: list) -> str:
    if len(a) != len(b):
        return f"lengths {len(a)} != {len(b)}"
    for i, (x, y) in enumerate(zip(a, b)):
        if not _same(x, y):
            return f"row {i}: {x!r} != {y!r}"
    return "equal"


def _pylist_or_error(data: ArrayData):
    try:
        return make_array(data).to_pylist(), None
    except ArrowInvalid as e:
        return None, e


def assert_batches_equal(expected: list, actual: list, what: str):
    """`actual` batches (read from `what`) hold the same values as `expected` (the JSON's)."""
    assert len(actual) == len(expected), f"{what}: {len(actual)} batches, JSON has {len(expected)}"
    for b, (eb, ab) in enumerate(zip(expected, actual)):
        assert ab.num_rows == eb.num_rows, f"{what} batch {b}: {ab.num_rows} rows != {eb.num_rows}"
        for i, f in enumerate(eb.schema):
            where = f"{what} batch {b} column {i} ({f.name!r})"
            ec, ac = eb._columns[i], ab._columns[i]
            ev, ee = _pylist_or_error(ec)
            av, ae = _pylist_or_error(ac)
            if ae is None:
                assert ee is None, f"{where}: JSON side raised {ee!r}, IPC side did not"
                assert _same(ev, av), f"{where}: to_pylist differs: {_first_difference(ev, av)}"
            else:
                assert ee is not None and type(ee) is type(ae), \
                    f"{where}: IPC to_pylist raised {ae!r}, JSON side gave {ee!r}"
            ep = make_array(_plain(ec)).to_pylist()
            ap = make_array(_plain(ac)).to_pylist()
            assert _same(ep, ap), f"{where}: values differ: {_first_difference(ep, ap)}"
        if len(set(eb.schema.names)) == len(eb.schema.names):
            try:
                rows = eb.to_pylist()
            except ArrowInvalid:
                continue
            assert _same(rows, ab.to_pylist()), f"{what} batch {b}: to_pylist of the batch differs"


# -- gold files -----------------------------------------------------------------------------------

@pytest.mark.parametrize("base", GOLD)
def test_json_matches_stream(base):
    schema, batches = read_json(base + ".json.gz")
    reader = ipc.open_stream(base + ".stream")
    assert_schema_equal(reader.schema, schema)
    assert_batches_equal(batches, list(reader), "stream")


@pytest.mark.parametrize("base", GOLD)
def test_json_matches_file(base):
    schema, batches = read_json(base + ".json.gz")
    reader = ipc.open_file(base + ".arrow_file")
    assert_schema_equal(reader.schema, schema)
    assert_batches_equal(batches, list(reader), "file")


@pytest.mark.parametrize("base", [pytest.param(p.values[0], id=p.id) for p in GOLD])
def test_json_round_trip(base, tmp_path):
    schema, batches = read_json(base + ".json.gz")
    out = tmp_path / "again.json.gz"
    write_json(out, schema, batches)
    schema2, batches2 = read_json(out)
    assert_schema_equal(schema2, schema)
    assert_batches_equal(batches, batches2, "rewritten JSON")


# -- focused checks --------------------------------------------------------------------------------

def _one(name="cpp-21.0.0/generated_primitive"):
    return os.path.join(ROOT, name)


def test_read_json_table_and_file_objects():
    base = _one()
    table = read_json_table(base + ".json.gz")
    schema, batches = read_json(open(base + ".json.gz", "rb"))
    assert table.num_rows == sum(b.num_rows for b in batches) > 0
    assert table.to_pylist() == [r for b in batches for r in b.to_pylist()]
    import gzip
    raw = gzip.decompress(open(base + ".json.gz", "rb").read())
    schema2, batches2 = read_json(io.BytesIO(raw))        # plain JSON, not gzipped
    assert_schema_equal(schema2, schema)
    assert_batches_equal(batches, batches2, "plain JSON")


def test_sliced_batches_are_written_by_value():
    """write_json of sliced columns (offsets in every layout) equals the slice's values."""
    for name in ("cpp-21.0.0/generated_nested", "cpp-21.0.0/generated_union",
                 "cpp-21.0.0/generated_run_end_encoded", "cpp-21.0.0/generated_list_view",
                 "cpp-21.0.0/generated_binary_view", "cpp-21.0.0/generated_primitive",
                 "cpp-21.0.0/generated_nested_dictionary", "cpp-21.0.0/generated_map"):
        schema, batches = read_json(_one(name) + ".json.gz")
        sliced = [b.slice(2, max(0, b.num_rows - 4)) for b in batches]
        buf = io.BytesIO()
        write_json(buf, schema, sliced)
        schema2, batches2 = read_json(io.BytesIO(buf.getvalue()))
        assert_schema_equal(schema2, schema)
        assert_batches_equal(sliced, batches2, f"{name} sliced")
        assert all(c.offset == 0 for b in batches2 for c in b._columns)


def test_known_values():
    """Decoded values for a few encodings: 64-bit strings, decimals, intervals, views, hex."""
    base = _one("cpp-21.0.0/generated_interval_mdn")
    schema, batches = read_json(base + ".json.gz")
    first = [b for b in batches if b.num_rows][0].column(0).to_pylist()
    assert first[0] == (1493908993, -474729930, 8820212087008106548)
    assert first[2] is None
    schema, batches = read_json(_one("cpp-21.0.0/generated_decimal32") + ".json.gz")
    assert str(schema.field(0).type) == "decimal32(3, 2)"
    import decimal
    assert batches[0].column(0).to_pylist()[0] == decimal.Decimal("1.37")
    schema, batches = read_json(_one("cpp-21.0.0/generated_binary_view") + ".json.gz")
    sv = batches[1].column(1).to_pylist()
    assert sv[1] == "µppjldl" and sv[0] is None


def _doc(columns, fields, dictionaries=None):
    import json
    d = {"schema": {"fields": fields}, "batches": [{"count": 2, "columns": columns}]}
    if dictionaries is not None:
        d["dictionaries"] = dictionaries
    return json.dumps(d).encode()


INT_FIELD = {"name": "a", "type": {"name": "int", "isSigned": True, "bitWidth": 64},
             "nullable": True, "children": []}


@pytest.mark.parametrize("column, message", [
    ({"name": "a", "count": 2, "VALIDITY": [1, 1], "DATA": ["1"]}, "DATA must list 2"),
    ({"name": "a", "count": 2, "VALIDITY": [1], "DATA": ["1", "2"]}, "VALIDITY must list 2"),
    ({"name": "a", "count": 2, "VALIDITY": [1, 1], "DATA": ["1", "x"]}, "valid int64"),
    ({"name": "a", "count": 2, "VALIDITY": [1, 1], "DATA": ["1", str(2**63)]}, "valid int64"),
    ({"name": "b", "count": 2, "VALIDITY": [1, 1], "DATA": ["1", "2"]}, "named 'b'"),
    ({"name": "a", "VALIDITY": [1, 1], "DATA": ["1", "2"]}, "'count'"),
])
def test_malformed_columns_raise_arrow_invalid(column, message):
    with pytest.raises(ArrowInvalid, match=message):
        read_json(io.BytesIO(_doc([column], [INT_FIELD])))


def test_malformed_documents_raise_arrow_invalid():
    with pytest.raises(ArrowInvalid, match="not valid JSON"):
        read_json(io.BytesIO(b"{"))
    with pytest.raises(ArrowInvalid, match="unknown type name 'nope'"):
        read_json(io.BytesIO(_doc([], [dict(INT_FIELD, type={"name": "nope"})])))
    utf8 = {"name": "s", "type": {"name": "utf8"}, "nullable": True, "children": []}
    bad_offsets = {"name": "s", "count": 2, "VALIDITY": [1, 1], "OFFSET": [0, 1, 5],
                   "DATA": ["a", "bc"]}
    with pytest.raises(ArrowInvalid, match=r"OFFSET gives value 1 4 bytes but DATA\[1\] has 2"):
        read_json(io.BytesIO(_doc([bad_offsets], [utf8])))
    dict_field = dict(utf8, dictionary={"id": 3, "indexType": {"name": "int", "isSigned": True,
                                                              "bitWidth": 8}, "isOrdered": False})
    indices = {"name": "s", "count": 2, "VALIDITY": [1, 1], "DATA": [0, 1]}
    with pytest.raises(ArrowInvalid, match="dictionary id 3 has no entry"):
        read_json(io.BytesIO(_doc([indices], [dict_field], [])))
    bv = {"name": "v", "type": {"name": "binaryview"}, "nullable": True, "children": []}
    view = {"name": "v", "count": 2, "VALIDITY": [1, 1], "VARIADIC_DATA_BUFFERS": ["00" * 20],
            "VIEWS": [{"SIZE": 1, "INLINED": "AB"},
                      {"SIZE": 16, "PREFIX_HEX": "00000000", "BUFFER_INDEX": 0, "OFFSET": 8}]}
    with pytest.raises(ArrowInvalid, match=r"bytes \[8, 24\) are outside variadic buffer 0"):
        read_json(io.BytesIO(_doc([view], [bv])))
    union = {"name": "u", "type": {"name": "union", "mode": "SPARSE", "typeIds": [5]},
             "nullable": True, "children": [dict(INT_FIELD, name="i")]}
    child = {"name": "i", "count": 2, "VALIDITY": [1, 1], "DATA": ["1", "2"]}
    col = {"name": "u", "count": 2, "TYPE_ID": [5, 5], "children": [child]}
    assert read_json(io.BytesIO(_doc([col], [union])))[1][0].to_pylist() == [{"u": 1}, {"u": 2}]
    with pytest.raises(ArrowInvalid, match="TYPE_ID 6 is not one of the union's type ids"):
        read_json(io.BytesIO(_doc([dict(col, TYPE_ID=[5, 6])], [union])))
    with pytest.raises(ArrowInvalid, match="union column has top-level nulls"):
        read_json(io.BytesIO(_doc([dict(col, VALIDITY=[1, 0])], [union])))


def test_batches_with_different_dictionaries_cannot_be_written():
    schema, batches = read_json(_one("cpp-21.0.0/generated_dictionary") + ".json.gz")
    b = batches[0]
    col = b._columns[0]
    other = col.copy_with(dictionary=make_array(col.dictionary).slice(1).data)
    changed = RecordBatch(schema, [other] + list(b._columns[1:]), b.num_rows)
    with pytest.raises(ArrowInvalid, match="different dictionaries for id 0"):
        write_json(io.BytesIO(), schema, [b, changed])


def test_round_trip_of_built_batches():
    """Types the gold files lack (float16, dictionary of lists, extension over a struct,
    fixed_size_list of dictionaries) survive write_json → read_json."""
    import arrowipc as ai
    from arrowipc.extension import uuid
    point = ai.ExtensionType("my.point", ai.struct([("x", ai.int32()), ("y", ai.float64())]),
                             b"meta")
    dict_of_lists = ai.dictionary(ai.int8(), ai.list_(ai.int64()))
    fsl_of_dict = ai.fixed_size_list(ai.dictionary(ai.uint32(), ai.string()), 2)
    cols = [
        ai.array([1.5, None, float("nan"), -2.0], ai.float16()),
        ai.array([[1, 2], None, [], [1, 2]], dict_of_lists),
        ai.array([b"x" * 16, None, b"y" * 16, b"z" * 16], ai.fixed_size_binary(16)),
        ai.array([{"x": 1, "y": 0.5}, None, {"x": -3, "y": None}, {"x": 0, "y": 2.0}],
                 point.storage),
        ai.array([["a", "b"], None, ["b", None], ["c", "a"]], fsl_of_dict),
    ]
    cols[2] = make_array(cols[2].data.copy_with(type=uuid()))
    cols[3] = make_array(cols[3].data.copy_with(type=point))
    schema = T.Schema([T.Field(f"c{i}", c.type, metadata={"k": str(i)}) for i, c in
                       enumerate(cols)], metadata={"top": "level"})
    batch = RecordBatch(schema, [c.data for c in cols], 4)
    buf = io.BytesIO()
    write_json(buf, schema, [batch, batch.slice(1, 2)])
    ai.register_extension_type(point)
    try:
        schema2, batches2 = read_json(io.BytesIO(buf.getvalue()))
    finally:
        ai.unregister_extension_type("my.point")
    assert schema2.field(2).type.extension_name == "arrow.uuid"
    assert schema2.field(3).type == point
    assert_schema_equal(schema2, schema)
    # unregistered, the extension stays its storage type with the metadata kept on the field
    schema3, _ = read_json(io.BytesIO(buf.getvalue()))
    assert schema3.field(3).type == point.storage
    assert schema3.field(3).metadata == {b"k": b"3", b"ARROW:extension:name": b"my.point",
                                         b"ARROW:extension:metadata": b"meta"}
    assert_batches_equal([batch, batch.slice(1, 2)], batches2, "built batch")
    assert _same(batches2[0].column(0).to_pylist()[:2], [1.5, None])
    assert math.isnan(batches2[0].column(0).to_pylist()[2])
    assert batches2[0].column(4).to_pylist()[2] == ["b", None]
