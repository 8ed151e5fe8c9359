"""Round trips with pyarrow for the layouts of issue 3, both directions, streams and files.

  binary_view / string_view   inline (<= 12 bytes) and out-of-line values, several variadic
                              data buffers, two view columns (variadicBufferCounts in pre-order)
  list_view / large_list_view offsets out of order, child ranges shared by several lists
  sparse and dense unions     type codes that are not the child indices
  run_end_encoded             int16 / int32 / int64 run ends
  extension types             arrow.uuid, arrow.json, an unknown name (storage + field
                              metadata), a type registered with arrowipc.register_extension_type
  null type

each with nulls and with slices at offsets that are not multiples of 8:
  pyarrow writes -> arrowipc reads   (schema with metadata, values, Python values)
  arrowipc writes -> pyarrow reads   (validate(full=True), equal)
"""
import re
import struct
import uuid

import pytest

pa = pytest.importorskip("pyarrow")

import arrowipc  # noqa: E402
from arrowipc import ipc  # noqa: E402
from arrowipc.errors import ArrowInvalid  # noqa: E402

import ipc_surgery as X  # noqa: E402
from ipc_roundtrip import assert_ours_equal, ours_read, ours_write, pa_read, pa_write  # noqa: E402
import strategies as S  # noqa: E402

FORMS = ["stream", "file"]
N = 40


# ---------------------------------------------------------------------------------------------
# builders: a pyarrow array of length N for a seed, nulls included

def _null_at(i, seed, every=5):
    return (i * 3 + seed) % every == 1


def _strings(seed, n=N):
    # a mix of inline (<= 12 bytes) and out-of-line (> 12 bytes) values, and empty strings
    out = []
    for i in range(n):
        if _null_at(i, seed):
            out.append(None)
        elif i % 4 == 0:
            out.append(f"long value number {i + seed} " + "é" * (i % 5))
        elif i % 4 == 1:
            out.append("")
        else:
            out.append(f"s{i + seed}")
    return out


def _view_multi_buffer(value_type, seed):
    """A view array made of three chunks: three variadic data buffers."""
    chunks = [pa.array(_strings(seed + k, n) if value_type == pa.string_view() else
                       [None if v is None else v.encode() for v in _strings(seed + k, n)], value_type)
              for k, n in enumerate((13, 14, 13))]
    arr = pa.concat_arrays(chunks)
    assert len(arr.buffers()) - 2 >= 3, "expected several variadic buffers"
    return arr


def _list_view(list_type, seed):
    """Offsets out of order and child ranges shared by several lists."""
    values = pa.array([None if (i + seed) % 7 == 3 else i * 10 + seed for i in range(30)], pa.int32())
    offsets, sizes, mask = [], [], []
    for i in range(N):
        # walk backwards through the child and overlap the neighbours' ranges
        offset = (29 - (i * 7 + seed) % 30)
        size = min((i + seed) % 4, 30 - offset)
        offsets.append(offset)
        sizes.append(size)
        mask.append(_null_at(i, seed))
    offset_type = pa.int64() if list_type == "large" else pa.int32()
    cls = pa.LargeListViewArray if list_type == "large" else pa.ListViewArray
    return cls.from_arrays(pa.array(offsets, offset_type), pa.array(sizes, offset_type), values,
                           mask=pa.array(mask))


def _list_view_of_strings(seed):
    values = pa.array(_strings(seed, 12), pa.string_view())
    offsets = [(11 - i) % 12 for i in range(N)]
    sizes = [min(i % 3, 12 - o) for i, o in zip(range(N), offsets)]
    return pa.ListViewArray.from_arrays(pa.array(offsets, pa.int32()), pa.array(sizes, pa.int32()),
                                        values, mask=pa.array([_null_at(i, seed) for i in range(N)]))


UNION_CODES = [7, 2, 13]   # never 0, 1, 2 in child order


def _union_children(seed, n):
    return [
        pa.array([None if _null_at(i, seed, 3) else i - 20 for i in range(n)], pa.int64()),
        pa.array(_strings(seed, n), pa.string()),
        pa.array([{"a": i % 2 == 0, "b": [i, None]} if i % 6 else None for i in range(n)],
                 pa.struct([("a", pa.bool_()), ("b", pa.list_(pa.int16()))])),
    ]


def _sparse_union(seed):
    types = pa.array([UNION_CODES[(i * 5 + seed) % 3] for i in range(N)], pa.int8())
    return pa.UnionArray.from_sparse(types, _union_children(seed, N), ["i", "s", "st"], UNION_CODES)


def _dense_union(seed):
    child_index = [(i * 5 + seed) % 3 for i in range(N)]
    children = _union_children(seed, N)
    # offsets increase within each child (the format requires it) but skip child slots
    counts = [0, 0, 0]
    offsets = []
    for k in child_index:
        offsets.append(counts[k] + counts[k] // 3 + k)
        counts[k] += 1
    return pa.UnionArray.from_dense(pa.array([UNION_CODES[k] for k in child_index], pa.int8()),
                                    pa.array(offsets, pa.int32()), children, ["i", "s", "st"], UNION_CODES)


def _ree(run_end_type, values_type, seed):
    lengths = [1 + (k * 3 + seed) % 4 for k in range(N)]
    run_ends, total = [], 0
    for n in lengths:
        total += n
        run_ends.append(total)
        if total >= N:
            run_ends[-1] = N
            break
    k = len(run_ends)
    if values_type == pa.string():
        values = pa.array(_strings(seed, k), values_type)
    else:
        values = pa.array([None if _null_at(i, seed) else i * 1.5 for i in range(k)], values_type)
    return pa.RunEndEncodedArray.from_arrays(pa.array(run_ends, run_end_type), values)


def _uuid(seed):
    storage = pa.array([None if _null_at(i, seed) else uuid.UUID(int=(i + 1) * 7919 + seed).bytes
                        for i in range(N)], pa.binary(16))
    return pa.ExtensionArray.from_storage(pa.uuid(), storage)


def _json(seed):
    storage = pa.array([None if _null_at(i, seed) else f'{{"k": {i + seed}, "v": [1, "x"]}}'
                        for i in range(N)], pa.string())
    return pa.ExtensionArray.from_storage(pa.json_(), storage)


ARRAY_CASES = {
    "string_view": lambda seed: pa.array(_strings(seed), pa.string_view()),
    "binary_view": lambda seed: pa.array([None if v is None else v.encode() for v in _strings(seed)],
                                         pa.binary_view()),
    "string_view_inline_only": lambda seed: pa.array(
        [None if _null_at(i, seed) else f"v{i}"[: 1 + i % 12] for i in range(N)], pa.string_view()),
    "string_view_out_of_line_only": lambda seed: pa.array(
        [None if _null_at(i, seed) else f"a value longer than twelve bytes {i}" for i in range(N)],
        pa.string_view()),
    "string_view_multi_buffer": lambda seed: _view_multi_buffer(pa.string_view(), seed),
    "binary_view_multi_buffer": lambda seed: _view_multi_buffer(pa.binary_view(), seed),
    "list_of_string_view": lambda seed: pa.ListArray.from_arrays(
        pa.array(list(range(0, 2 * N + 1, 2)), pa.int32()),
        pa.concat_arrays([pa.array(_strings(seed, N), pa.string_view()),
                          pa.array(_strings(seed + 1, N), pa.string_view())])),
    "list_view": lambda seed: _list_view("normal", seed),
    "large_list_view": lambda seed: _list_view("large", seed),
    "list_view_of_string_view": _list_view_of_strings,
    "sparse_union": _sparse_union,
    "dense_union": _dense_union,
    "ree_int16_string": lambda seed: _ree(pa.int16(), pa.string(), seed),
    "ree_int32_float": lambda seed: _ree(pa.int32(), pa.float64(), seed),
    "ree_int64_string": lambda seed: _ree(pa.int64(), pa.string(), seed),
    "uuid": _uuid,
    "json": _json,
    "null": lambda seed: pa.nulls(N),
    "struct_of_new_layouts": lambda seed: pa.StructArray.from_arrays(
        [pa.array(_strings(seed), pa.string_view()), _ree(pa.int32(), pa.string(), seed), pa.nulls(N),
         _uuid(seed)], names=["sv", "ree", "n", "u"], mask=pa.array([_null_at(i, seed, 7) for i in range(N)])),
    "list_of_dense_union": lambda seed: pa.ListArray.from_arrays(
        pa.array([min(i, N) for i in range(0, N + 1)], pa.int32()), _dense_union(seed)),
}
CASES = list(ARRAY_CASES)
SLICES = [(3, 17), (1, 0), (13, 27), (9, 1)]


def make_batch(case, seed=0, metadata=None):
    arr = ARRAY_CASES[case](seed)
    assert len(arr) == N
    field = pa.field(case, arr.type, metadata=metadata)
    return pa.RecordBatch.from_arrays([arr], schema=pa.schema([field]))


# ---------------------------------------------------------------------------------------------
# IPC helpers

def check_pa_to_ours(batches, form):
    schema, got = ours_read(pa_write(batches, form), form)
    S.assert_schema_equal(S.to_pa_schema(schema), batches[0].schema)
    assert_ours_equal(got, batches)


def check_ours_to_pa(batches, form, ours_batches=None):
    if ours_batches is None:
        ours_batches = [arrowipc.record_batch(b) for b in batches]
    data = ours_write(ours_batches, form, schema=arrowipc.schema(batches[0].schema))
    schema, got = pa_read(data, form)
    S.assert_schema_equal(schema, batches[0].schema)
    assert len(got) == len(batches)
    for g, b in zip(got, batches):
        assert g.equals(b), f"pyarrow read different values:\n{g}\n--- expected\n{b}"


# ---------------------------------------------------------------------------------------------
# every case, both directions, both forms

@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize("case", CASES)
def test_pyarrow_writes_arrowipc_reads(case, form):
    batches = [make_batch(case, 0), make_batch(case, 1).slice(0, 0), make_batch(case, 2)]
    check_pa_to_ours(batches, form)


@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize("case", CASES)
def test_arrowipc_writes_pyarrow_reads(case, form):
    batches = [make_batch(case, 3), make_batch(case, 4).slice(0, 0), make_batch(case, 5)]
    check_ours_to_pa(batches, form)


@pytest.mark.parametrize("case", CASES)
def test_arrowipc_reads_its_own_output(case):
    batches = [make_batch(case, 6), make_batch(case, 7)]
    data = ours_write([arrowipc.record_batch(b) for b in batches], "stream", schema=arrowipc.schema(batches[0].schema))
    _, got = ours_read(data, "stream")
    assert_ours_equal(got, batches)


@pytest.mark.parametrize("start,length", SLICES, ids=[f"slice{s}_{n}" for s, n in SLICES])
@pytest.mark.parametrize("case", CASES)
def test_slices_both_directions(case, start, length):
    full = make_batch(case, 8)
    sliced = full.slice(start, length)
    # arrowipc writes a pyarrow slice (kept at its offset) and a slice of its own
    check_ours_to_pa([sliced], "stream", ours_batches=[arrowipc.record_batch(sliced)])
    check_ours_to_pa([sliced], "file", ours_batches=[arrowipc.record_batch(full).slice(start, length)])
    # pyarrow writes the slice, arrowipc reads it
    check_pa_to_ours([sliced], "stream")
    # arrowipc reads the whole batch, then slices
    _, (got,) = ours_read(pa_write([full], "file"), "file")
    S.assert_batch_matches(got.slice(start, length), sliced)


def test_all_cases_in_one_batch_both_directions():
    arrays = [ARRAY_CASES[c](9) for c in CASES]
    batch = pa.RecordBatch.from_arrays(arrays, names=CASES)
    for form in FORMS:
        check_pa_to_ours([batch, batch.slice(5, 30)], form)
        check_ours_to_pa([batch, batch.slice(5, 30)], form)


# ---------------------------------------------------------------------------------------------
# view layout details

def view_columns_batch():
    # two view columns, each with several data buffers, around a non-view column
    return pa.RecordBatch.from_arrays(
        [_view_multi_buffer(pa.string_view(), 1), pa.array(range(N), pa.int8()),
         _view_multi_buffer(pa.binary_view(), 2)], names=["a", "n", "b"])


def variadic_counts(frame):
    """RecordBatch.variadicBufferCounts (a vector of long, field 4) of a message, or None."""
    record = frame.record_batch()
    pos = record.field_pos(4)
    if pos is None:
        return None
    start = pos + X.struct.unpack_from("<I", record.buf, pos)[0]
    n = X.struct.unpack_from("<I", record.buf, start)[0]
    return list(X.struct.unpack_from(f"<{n}q", record.buf, start + 4))


def test_variadic_buffer_counts_in_pre_order():
    batch = view_columns_batch()
    data = ours_write([arrowipc.record_batch(batch)], "stream", schema=arrowipc.schema(batch.schema))
    frames, _, _ = X.split_stream(data)
    counts = variadic_counts(frames[1])
    # one entry per view column, in pre-order; the writer may pack data buffers its own way
    # but the header must list exactly the buffers the counts announce
    assert counts is not None and len(counts) == 2
    assert all(c >= 1 for c in counts)
    assert len(frames[1].buffers()) == (2 + counts[0]) + 2 + (2 + counts[1])
    _, (got,) = pa_read(data, "stream")
    assert got.equals(batch)
    # pyarrow's own output for the same batch announces the same kind of layout
    theirs = variadic_counts(X.split_stream(pa_write([batch], "stream"))[0][1])
    assert len(theirs) == 2


def test_variadic_buffer_counts_of_nested_views_in_pre_order():
    # struct<view, list<view>>, view: three view nodes, counted in schema pre-order
    inner = pa.array(_strings(1, 2 * N), pa.string_view())
    batch = pa.record_batch({
        "s": pa.StructArray.from_arrays(
            [_view_multi_buffer(pa.string_view(), 3),
             pa.ListArray.from_arrays(pa.array(list(range(0, 2 * N + 1, 2)), pa.int32()), inner)],
            names=["v", "lv"]),
        "w": _view_multi_buffer(pa.binary_view(), 4),
    })
    data = ours_write([arrowipc.record_batch(batch)], "file", schema=arrowipc.schema(batch.schema))
    counts = variadic_counts(X.file_frames(data)[1])
    assert counts is not None and len(counts) == 3
    _, (got,) = pa_read(data, "file")
    assert got.equals(batch)
    _, (ours,) = ours_read(pa_write([batch], "file"), "file")
    S.assert_batch_matches(ours, batch)


def test_view_columns_from_pyarrow_with_several_buffers():
    batch = view_columns_batch()
    for form in FORMS:
        _, (got,) = ours_read(pa_write([batch], form), form)
        S.assert_batch_matches(got, batch)
        # the data buffers reach arrowipc as separate variadic buffers
        assert len(got.column(0).buffers()) == len(batch.column(0).buffers())


def test_view_values_exactly_twelve_and_thirteen_bytes():
    # the inline / out-of-line boundary
    values = ["x" * 12, "y" * 13, "", None, "z" * 11, "é" * 6, "é" * 7]
    batch = pa.record_batch({"v": pa.array(values, pa.string_view())})
    for form in FORMS:
        check_pa_to_ours([batch], form)
        check_ours_to_pa([batch], form)
    built = arrowipc.array(values, type=arrowipc.string_view())
    assert built.to_pylist() == values
    data = ours_write([arrowipc.record_batch({"v": built})], "stream",
                      schema=arrowipc.schema(pa.schema([("v", pa.string_view())])))
    _, (got,) = pa_read(data, "stream")
    assert got.column(0).to_pylist() == values


# ---------------------------------------------------------------------------------------------
# arrays built by arrowipc from Python values (not imported from pyarrow)

PY_BUILT = {
    "string_view": (pa.string_view(), _strings(0)),
    "binary_view": (pa.binary_view(), [None if v is None else v.encode() for v in _strings(1)]),
    "list_view": (pa.list_view(pa.int32()), [None if i % 5 == 1 else list(range(i % 4)) for i in range(N)]),
    "large_list_view": (pa.large_list_view(pa.string()), [None if i % 5 == 1 else ["a"] * (i % 3) for i in range(N)]),
    "null": (pa.null(), [None] * N),
}


@pytest.mark.parametrize("case", list(PY_BUILT))
def test_arrowipc_built_arrays_read_by_pyarrow(case):
    pa_type, values = PY_BUILT[case]
    ours_type = arrowipc.schema(pa.schema([("c", pa_type)])).field(0).type
    arr = arrowipc.array(values, type=ours_type)
    batch = arrowipc.record_batch({"c": arr})
    expected = pa.record_batch({"c": pa.array(values, pa_type)})
    for form in FORMS:
        data = ours_write([batch, batch.slice(3, 17)], form, schema=arrowipc.schema(expected.schema))
        _, got = pa_read(data, form)
        assert got[0].column(0).to_pylist() == values
        assert got[1].column(0).to_pylist() == values[3:20]
        assert got[0].equals(expected)


# ---------------------------------------------------------------------------------------------
# unions

@pytest.mark.parametrize("mode", ["sparse", "dense"])
def test_union_type_codes_survive(mode):
    batch = make_batch(f"{mode}_union", 10)
    for form in FORMS:
        schema, (got,) = ours_read(pa_write([batch], form), form)
        utype = schema.field(0).type
        assert list(utype.type_codes) == UNION_CODES
        assert S.to_pa_schema(schema).field(0).type.mode == mode
        data = ours_write([got], form, schema=schema)
        _, (back,) = pa_read(data, form)
        assert back.column(0).type.type_codes == UNION_CODES
        assert back.equals(batch)


def test_union_type_ids_buffer_is_written_as_codes():
    batch = make_batch("sparse_union", 11)
    data = ours_write([arrowipc.record_batch(batch)], "stream", schema=arrowipc.schema(batch.schema))
    frames, _, _ = X.split_stream(data)
    frame = frames[1]
    # sparse union: no validity buffer; the first buffer holds the int8 type ids
    _, off, n = frame.buffers()[0]
    assert n >= N
    type_ids = list(data[frame.body_start + off: frame.body_start + off + N])
    expected = [(c if c < 128 else c - 256) for c in batch.column(0).type_codes.to_pylist()]
    assert type_ids == expected


# ---------------------------------------------------------------------------------------------
# run-end encoded

@pytest.mark.parametrize("run_end_type", [pa.int16(), pa.int32(), pa.int64()], ids=str)
def test_run_end_type_is_kept(run_end_type):
    batch = pa.record_batch({"r": _ree(run_end_type, pa.string(), 12)})
    for form in FORMS:
        schema, (got,) = ours_read(pa_write([batch], form), form)
        assert schema.field(0).type.run_end_type.name == str(run_end_type)
        _, (back,) = pa_read(ours_write([got], form, schema=schema), form)
        assert back.column(0).type == batch.column(0).type
        assert back.equals(batch)


def test_ree_slice_inside_a_run():
    arr = pa.RunEndEncodedArray.from_arrays(pa.array([5, 6, 20], pa.int32()), pa.array(["a", None, "c"]))
    batch = pa.record_batch({"r": arr})
    for start, length in ((2, 2), (4, 3), (7, 11), (19, 1)):
        sliced = batch.slice(start, length)
        check_ours_to_pa([sliced], "stream", ours_batches=[arrowipc.record_batch(batch).slice(start, length)])
        check_pa_to_ours([sliced], "file")


# ---------------------------------------------------------------------------------------------
# extension types

class CelsiusType(arrowipc.ExtensionType):
    """A user extension type for arrowipc's registry."""
    extension_name = "arrowipc.test.celsius"

    def __init__(self):
        super().__init__("arrowipc.test.celsius", arrowipc.float64(), b"unit=C")

    @classmethod
    def __arrow_ext_deserialize__(cls, storage_type, serialized):
        assert serialized == b"unit=C"
        return cls()


class PaCelsiusType(pa.ExtensionType):
    """The same type on the pyarrow side."""

    def __init__(self):
        super().__init__(pa.float64(), "arrowipc.test.celsius")

    def __arrow_ext_serialize__(self):
        return b"unit=C"

    @classmethod
    def __arrow_ext_deserialize__(cls, storage_type, serialized):
        return cls()


@pytest.fixture
def celsius_registered():
    arrowipc.register_extension_type(CelsiusType())
    try:
        yield
    finally:
        arrowipc.unregister_extension_type("arrowipc.test.celsius")


@pytest.fixture
def pa_celsius_registered():
    pa.register_extension_type(PaCelsiusType())
    try:
        yield
    finally:
        pa.unregister_extension_type("arrowipc.test.celsius")


def celsius_batch():
    storage = pa.array([None if _null_at(i, 0) else i * 0.5 - 3 for i in range(N)], pa.float64())
    return pa.record_batch({"t": pa.ExtensionArray.from_storage(PaCelsiusType(), storage)})


def test_canonical_extension_types_read_as_extension(form="stream"):
    for case, name in (("uuid", "arrow.uuid"), ("json", "arrow.json")):
        batch = make_batch(case, 13)
        for form in FORMS:
            schema, (got,) = ours_read(pa_write([batch], form), form)
            ext = schema.field(0).type
            assert isinstance(ext, arrowipc.ExtensionType)
            assert ext.extension_name == name
            # the extension keys become the type, not field metadata
            assert not (schema.field(0).metadata or {}).get(b"ARROW:extension:name")


def test_uuid_python_values_are_uuids():
    batch = make_batch("uuid", 14)
    _, (got,) = ours_read(pa_write([batch], "stream"), "stream")
    values = got.column(0).to_pylist()
    assert values == batch.column(0).to_pylist()
    assert all(v is None or isinstance(v, uuid.UUID) for v in values)


def canonical_field_stream(name, storage, values, serialized=b""):
    """A pyarrow stream whose field carries a canonical extension name over `storage` (pyarrow
    writes the keys as plain field metadata, whatever the storage)."""
    field = pa.field("x", storage, metadata={b"ARROW:extension:name": name.encode(),
                                             b"ARROW:extension:metadata": serialized})
    schema = pa.schema([field])
    return pa_write([pa.record_batch([pa.array(values, storage)], schema=schema)], "stream")


VARIABLE_TENSOR = pa.struct([("data", pa.list_(pa.float32())), ("shape", pa.list_(pa.int32(), 2))])
VARIANT = pa.struct([pa.field("metadata", pa.binary(), nullable=False), ("value", pa.binary())])

WITH_OFFSET = pa.struct([pa.field("timestamp", pa.timestamp("us", "UTC"), nullable=False),
                         pa.field("offset_minutes", pa.int16(), nullable=False)])

CANONICAL_GOOD = {
    "uuid": ("arrow.uuid", pa.binary(16), [b"0123456789abcdef"], b""),
    "bool8": ("arrow.bool8", pa.int8(), [1, 0], b""),
    "json_large_string": ("arrow.json", pa.large_string(), ['{"a": 1}'], b""),
    "json_string_view": ("arrow.json", pa.string_view(), ["[]"], b""),
    "opaque": ("arrow.opaque", pa.int32(), [7], b'{"type_name": "geo", "vendor_name": "acme"}'),
    "fixed_shape_tensor": ("arrow.fixed_shape_tensor", pa.list_(pa.int32(), 6), [list(range(6))],
                           b'{"shape": [2, 3], "dim_names": ["y", "x"], "permutation": [1, 0]}'),
    "variable_shape_tensor": ("arrow.variable_shape_tensor", VARIABLE_TENSOR,
                              [{"data": [1.0, 2.0], "shape": [1, 2]}], b'{"uniform_shape": [1, null]}'),
    "variant": ("arrow.parquet.variant", VARIANT, [{"metadata": b"\x01", "value": b"\x00"}], b""),
    "timestamp_with_offset": ("arrow.timestamp_with_offset", WITH_OFFSET,
                              [{"timestamp": 0, "offset_minutes": -300}], b""),
    "timestamp_with_offset_dictionary": (
        "arrow.timestamp_with_offset", pa.struct([("timestamp", pa.timestamp("ns", "UTC")),
                                                  ("offset_minutes", pa.dictionary(pa.int8(), pa.int16()))]),
        [{"timestamp": 5, "offset_minutes": 60}], b""),
}


@pytest.mark.parametrize("case", sorted(CANONICAL_GOOD))
def test_canonical_types_with_their_storage_and_parameters_read(case):
    name, storage, values, serialized = CANONICAL_GOOD[case]
    schema, (got,) = ours_read(canonical_field_stream(name, storage, values, serialized), "stream")
    assert schema.field(0).type.extension_name == name
    assert schema.field(0).type.storage_type == arrowipc.schema(pa.schema([("x", storage)])).field(0).type
    assert len(got.column(0).to_pylist()) == len(values)


# Each rule of the canonical definitions, the storage or parameters that break it, and the words
# of the ArrowInvalid. pyarrow refuses the same streams (checked where it knows the type).
CANONICAL_BAD = {
    "uuid_width": ("arrow.uuid", pa.binary(8), [b"01234567"], b"",
                   "arrow.uuid storage must be fixed_size_binary(16), found fixed_size_binary[8]"),
    "uuid_binary": ("arrow.uuid", pa.binary(), [b"x"], b"", "storage must be fixed_size_binary(16)"),
    "bool8": ("arrow.bool8", pa.int16(), [1], b"", "arrow.bool8 storage must be int8, found int16"),
    "json": ("arrow.json", pa.int32(), [1], b"",
             "arrow.json storage must be string, large_string or string_view, found int32"),
    "opaque_no_vendor": ("arrow.opaque", pa.int32(), [1], b'{"type_name": "geo"}',
                         "needs a string 'vendor_name'"),
    "opaque_not_json": ("arrow.opaque", pa.int32(), [1], b"geo", "metadata must be a JSON object"),
    "tensor_storage": ("arrow.fixed_shape_tensor", pa.int32(), [1], b'{"shape": [1]}',
                       "storage must be a fixed_size_list, found int32"),
    "tensor_no_shape": ("arrow.fixed_shape_tensor", pa.list_(pa.int32(), 4), [[1, 2, 3, 4]], b"{}",
                        "shape must be a list of non-negative integers"),
    "tensor_shape_size": ("arrow.fixed_shape_tensor", pa.list_(pa.int32(), 4), [[1, 2, 3, 4]],
                          b'{"shape": [3, 2]}', "does not hold the 4 values of each storage list"),
    "tensor_huge_shape": ("arrow.fixed_shape_tensor", pa.list_(pa.int32(), 4), [[1, 2, 3, 4]],
                          ('{"shape": [' + ", ".join(["99999999999999999999"] * 20000) + "]}").encode(),
                          "does not hold the 4 values"),
    "tensor_permutation": ("arrow.fixed_shape_tensor", pa.list_(pa.int32(), 4), [[1, 2, 3, 4]],
                           b'{"shape": [2, 2], "permutation": [1, "a"]}', "permutation must order 0..1"),
    "tensor_dim_names": ("arrow.fixed_shape_tensor", pa.list_(pa.int32(), 4), [[1, 2, 3, 4]],
                         b'{"shape": [2, 2], "dim_names": ["x"]}', "dim_names must be 2 strings"),
    "variable_tensor_storage": ("arrow.variable_shape_tensor", pa.int32(), [1], b"",
                                "storage must be struct<data: list, shape: fixed_size_list<int32>>"),
    "variable_tensor_uniform": ("arrow.variable_shape_tensor", VARIABLE_TENSOR,
                                [{"data": [1.0], "shape": [1, 1]}], b'{"uniform_shape": [1]}',
                                "uniform_shape must be 2 integers or nulls"),
    "variant_storage": ("arrow.parquet.variant", pa.int32(), [1], b"",
                        "storage must be a struct with a binary 'metadata' field"),
}


# arrow.timestamp_with_offset (in the specification since 2025-12; pyarrow 26 does not know it
# and reads such fields as their storage, so it is no oracle for these refusals)
WITH_OFFSET_BAD = {
    "local_instant": (pa.struct([("timestamp", pa.timestamp("us")), ("offset_minutes", pa.int16())]),
                      b""),
    "other_zone": (pa.struct([("timestamp", pa.timestamp("us", "Europe/Paris")),
                              ("offset_minutes", pa.int16())]), b""),
    "wide_offset": (pa.struct([("timestamp", pa.timestamp("us", "UTC")),
                               ("offset_minutes", pa.int32())]), b""),
    "swapped": (pa.struct([("offset_minutes", pa.int16()), ("timestamp", pa.timestamp("us", "UTC"))]),
                b""),
    "third_field": (pa.struct([("timestamp", pa.timestamp("us", "UTC")),
                               ("offset_minutes", pa.int16()), ("zone", pa.string())]), b""),
    "metadata": (WITH_OFFSET, b'{"unit": "us"}'),
}


@pytest.mark.parametrize("case", sorted(WITH_OFFSET_BAD))
def test_timestamp_with_offset_over_the_wrong_storage_or_metadata_is_invalid(case):
    storage, serialized = WITH_OFFSET_BAD[case]
    data = canonical_field_stream("arrow.timestamp_with_offset", storage, [None], serialized)
    words = ("metadata must be empty" if serialized else
             "arrow.timestamp_with_offset storage must be struct<timestamp: timestamp[unit, tz=UTC], "
             "offset_minutes: int16>")
    with pytest.raises(ArrowInvalid, match=re.escape(words)) as info:
        ours_read(data, "stream")
    assert "field 'x'" in str(info.value)


def test_timestamp_with_offset_values_are_datetimes_in_their_offset():
    import datetime
    from arrowipc.extension import timestamp_with_offset
    data = canonical_field_stream("arrow.timestamp_with_offset", WITH_OFFSET,
                                  [{"timestamp": 90_000_000, "offset_minutes": -300}, None], b"")
    schema, (got,) = ours_read(data, "stream")
    assert schema.field(0).type == timestamp_with_offset("us")
    value, missing = got.column(0).to_pylist()
    assert missing is None and value.utcoffset() == datetime.timedelta(minutes=-300)
    assert value == datetime.datetime(1970, 1, 1, 0, 1, 30, tzinfo=datetime.timezone.utc)
    assert (value.hour, value.minute) == (19, 1)      # 5 hours west of UTC, the day before


@pytest.mark.parametrize("case", sorted(CANONICAL_BAD))
def test_canonical_type_over_the_wrong_storage_or_parameters_is_invalid(case):
    name, storage, values, serialized, words = CANONICAL_BAD[case]
    data = canonical_field_stream(name, storage, values, serialized)
    with pytest.raises(ArrowInvalid, match=re.escape(words)) as info:
        ours_read(data, "stream")
    assert "field 'x'" in str(info.value)
    if name != "arrow.parquet.variant":          # pyarrow reads variant as storage + metadata
        with pytest.raises((pa.ArrowInvalid, pa.ArrowKeyError, pa.ArrowTypeError)):
            pa_read(data, "stream")


@pytest.mark.parametrize("serialized,words", [
    (b"[" * 100_000 + b"]" * 100_000, "metadata must be a JSON object"),
    (b'{"shape": [' + b"7" * 5000 + b"]}", "metadata must be a JSON object"),
    (b'{"shape": [1, 4], "permutation": [' + b", ".join([b'"a"'] * 100_000) + b"]}", "..."),
], ids=["deep_nesting", "huge_number", "huge_parameter"])
def test_hostile_canonical_parameters_are_invalid_with_a_short_message(serialized, words):
    data = canonical_field_stream("arrow.fixed_shape_tensor", pa.list_(pa.int32(), 4),
                                  [[1, 2, 3, 4]], serialized)
    with pytest.raises(ArrowInvalid, match=re.escape(words)) as info:
        ours_read(data, "stream")
    assert len(str(info.value)) < 300


def test_canonical_type_over_the_wrong_storage_through_the_c_interface():
    field = pa.field("x", pa.binary(8), metadata={b"ARROW:extension:name": b"arrow.uuid"})
    with pytest.raises(ArrowInvalid, match=re.escape("arrow.uuid storage must be fixed_size_binary(16)")):
        arrowipc.schema(pa.schema([field]))


UNKNOWN_METADATA = {b"ARROW:extension:name": b"com.example.unknown",
                    b"ARROW:extension:metadata": b"\x00\x01serialized", b"other": b"kept"}


def unknown_extension_batch():
    storage = pa.array([None if _null_at(i, 0) else i for i in range(N)], pa.int32())
    schema = pa.schema([pa.field("u", pa.int32(), metadata=UNKNOWN_METADATA)])
    return pa.RecordBatch.from_arrays([storage], schema=schema)


@pytest.mark.parametrize("form", FORMS)
def test_unknown_extension_kept_as_storage_and_metadata(form):
    batch = unknown_extension_batch()
    schema, (got,) = ours_read(pa_write([batch], form), form)
    assert schema.field(0).type == arrowipc.int32()
    assert not isinstance(schema.field(0).type, arrowipc.ExtensionType)
    assert schema.field(0).metadata == UNKNOWN_METADATA
    S.assert_batch_matches(got, batch)
    # written back: pyarrow finds the same name, metadata and storage
    back_schema, (back,) = pa_read(ours_write([got], form, schema=schema), form)
    assert back_schema.field(0).metadata == UNKNOWN_METADATA
    assert back.equals(batch)


@pytest.mark.parametrize("form", FORMS)
def test_registered_extension_pyarrow_to_arrowipc(form, celsius_registered, pa_celsius_registered):
    batch = celsius_batch()
    schema, (got,) = ours_read(pa_write([batch], form), form)
    ext = schema.field(0).type
    assert isinstance(ext, CelsiusType)
    assert ext.storage_type == arrowipc.float64()
    assert ext.serialized == b"unit=C"
    assert got.column(0).to_pylist() == batch.column(0).storage.to_pylist()
    S.assert_batch_matches(got, batch)


@pytest.mark.parametrize("form", FORMS)
def test_registered_extension_arrowipc_to_pyarrow(form, celsius_registered, pa_celsius_registered):
    batch = celsius_batch()
    ours = arrowipc.record_batch(batch)
    assert isinstance(ours.schema.field(0).type, CelsiusType)
    _, (back,) = pa_read(ours_write([ours, ours.slice(3, 17)][:1], form, schema=ours.schema), form)
    assert isinstance(back.column(0).type, PaCelsiusType)
    assert back.equals(batch)


@pytest.mark.parametrize("form", FORMS)
def test_registered_extension_read_without_pyarrow_registration(form, celsius_registered):
    # pyarrow without the type: storage + ARROW:extension:* field metadata, as written
    storage = pa.array([1.5, None, -2.0], pa.float64())
    ours = arrowipc.record_batch({"t": arrowipc.array([1.5, None, -2.0], type=CelsiusType())})
    back_schema, (back,) = pa_read(ours_write([ours], form, schema=ours.schema), form)
    assert back_schema.field(0).type == pa.float64()
    assert back_schema.field(0).metadata == {b"ARROW:extension:name": b"arrowipc.test.celsius",
                                             b"ARROW:extension:metadata": b"unit=C"}
    assert back.column(0).equals(storage)
    # and arrowipc reads its own output back as the registered type
    schema, (got,) = ours_read(ours_write([ours], form, schema=ours.schema), form)
    assert isinstance(schema.field(0).type, CelsiusType)
    assert got.column(0).to_pylist() == [1.5, None, -2.0]


def test_unregistered_name_after_unregister_is_storage():
    arrowipc.register_extension_type(CelsiusType())
    arrowipc.unregister_extension_type("arrowipc.test.celsius")
    storage = pa.array([1.0, 2.0], pa.float64())
    schema = pa.schema([pa.field("t", pa.float64(), metadata={b"ARROW:extension:name": b"arrowipc.test.celsius",
                                                              b"ARROW:extension:metadata": b"unit=C"})])
    batch = pa.RecordBatch.from_arrays([storage], schema=schema)
    got_schema, _ = ours_read(pa_write([batch], "stream"), "stream")
    assert got_schema.field(0).type == arrowipc.float64()
    assert got_schema.field(0).metadata[b"ARROW:extension:name"] == b"arrowipc.test.celsius"


def test_register_twice_is_an_error(celsius_registered):
    with pytest.raises(arrowipc.ArrowKeyError):
        arrowipc.register_extension_type(CelsiusType())


def test_extension_inside_nested_types():
    inner = _uuid(15)
    arr = pa.ListArray.from_arrays(pa.array(list(range(0, N + 1)), pa.int32()), inner)
    batch = pa.record_batch({"l": arr})
    for form in FORMS:
        check_pa_to_ours([batch], form)
        check_ours_to_pa([batch], form)


# ---------------------------------------------------------------------------------------------
# null type

@pytest.mark.parametrize("form", FORMS)
def test_null_type_has_no_buffers(form):
    batch = pa.record_batch({"n": pa.nulls(N), "i": pa.array(range(N), pa.int8())})
    data = ours_write([arrowipc.record_batch(batch)], form, schema=arrowipc.schema(batch.schema))
    frames = X.file_frames(data) if form == "file" else X.split_stream(data)[0]
    record = frames[1].record_batch()
    nodes = record.struct_vector(1, "qq")
    assert [v for _, v in nodes] == [(N, N), (N, 0)]
    # null: no buffers; int8: validity + values
    assert len(frames[1].buffers()) == 2
    _, (back,) = pa_read(data, form)
    assert back.equals(batch)


@pytest.mark.parametrize("kind", ["string_view", "binary_view"])
def test_zero_sized_variadic_buffers_are_accepted(kind):
    # the specification allows a view array's variadic data buffers to be empty (or null, which
    # IPC writes as an empty buffer): every view inline, a data buffer of 0 bytes listed anyway
    view = struct.pack("<i12s", 2, b"hi")
    storage = getattr(pa, kind)()
    arr = pa.Array.from_buffers(storage, 2, [None, pa.py_buffer(view * 2), pa.py_buffer(b""),
                                             pa.py_buffer(b"")])
    data = pa_write([pa.record_batch([arr], names=["v"])], "stream")
    for options in (ipc.IpcReadOptions(), ipc.IpcReadOptions(validate="full")):
        got = ipc.open_stream(data, options=options).read_all()
        assert got.column(0).to_pylist() == arr.to_pylist()
        assert len(got.column(0).chunks[0].data.buffers) == 4   # both variadic buffers kept
        got.validate(full=True)


def test_a_footer_schema_other_than_the_streams_is_invalid_at_full_validation():
    # the format now requires the footer's schema to equal the schema message opening the file
    t = pa.table({"colx": [1, 2]})
    sink = pa.BufferOutputStream()
    with pa.ipc.new_file(sink, t.schema) as w:
        w.write_table(t)
    good = sink.getvalue().to_pybytes()
    footer_len = struct.unpack_from("<i", good, len(good) - 10)[0]
    footer_start = len(good) - 10 - footer_len
    assert good[footer_start:].count(b"colx") == 1
    bad = good[:footer_start] + good[footer_start:].replace(b"colx", b"coly")
    full = ipc.IpcReadOptions(validate="full")
    assert ipc.open_file(good, options=full).read_all().equals(t)
    with pytest.raises(ArrowInvalid, match=r"file: the stream's schema message at byte 8: differs "
                                           r"from the footer's schema .*\ncolx: int64\nfooter\n"
                                           r"coly: int64"):
        ipc.open_file(bad, options=full)
    # the structural default reads the footer's schema, as pyarrow does
    assert ipc.open_file(bad).schema.names == pa.ipc.open_file(bad).schema.names == ["coly"]
