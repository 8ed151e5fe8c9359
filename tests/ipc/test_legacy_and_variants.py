"""Older and variant IPC input and output (issue 3, items 4-6).

  * legacy framing (pre-0.15): a bare int32 metadata length, 4 zero bytes at the end; read from
    pyarrow's use_legacy_format output, written by arrowipc and read by pyarrow, exact bytes;
  * metadata V4 written by arrowipc (pyarrow sees V4 in every message; unions carry a validity
    buffer) and V4 union input from pyarrow; a future version (V6) is an ArrowInvalid;
  * big-endian gold files: swapped to native they equal their little-endian twins; kept as-is
    with ensure_native_endian=False, the schema says "big" and the bytes are the file's;
  * the ALKAID1 file variant: magic written on request, refused by pyarrow, read by arrowipc;
    ALKAID:extension:name / ALKAID:extension:metadata understood like the ARROW: keys.
"""
import io
import os
import struct
import uuid

import pytest

pa = pytest.importorskip("pyarrow")
import pyarrow.ipc as pa_ipc  # noqa: E402

import arrowipc  # noqa: E402
from arrowipc import ipc  # noqa: E402
from arrowipc.errors import ArrowInvalid  # noqa: E402

import ipc_surgery as X  # noqa: E402
import ipc_roundtrip as R  # noqa: E402
from ipc_roundtrip import assert_ours_equal, ours_read, ours_write, pa_write  # noqa: E402
import strategies as S  # noqa: E402
import testdata  # noqa: E402

FORMS = ["stream", "file"]
BIG = testdata.integration_dir("1.0.0-bigendian")
LITTLE = testdata.integration_dir("1.0.0-littleendian")
METADATA_V4, METADATA_V5 = 3, 4


def sample_batches():
    return [S.make_batch(["int32", "string", "list", "struct", "bool", "decimal128"], 21, seed=1),
            S.make_batch(["int32", "string", "list", "struct", "bool", "decimal128"], 0, seed=2),
            S.make_batch(["int32", "string", "list", "struct", "bool", "decimal128"], 9, seed=3)]


def union_batch():
    codes = [3, 8]
    sparse = pa.UnionArray.from_sparse(
        pa.array([3, 8, 3, 3, 8, 8, 3], pa.int8()),
        [pa.array([1, None, 3, 4, 5, 6, 7], pa.int64()), pa.array(["a", "b", None, "d", "e", "", "g"])],
        ["i", "s"], codes)
    dense = pa.UnionArray.from_dense(
        pa.array([8, 3, 3, 8, 3, 8, 8], pa.int8()), pa.array([0, 0, 1, 1, 2, 2, 3], pa.int32()),
        [pa.array([10, None, 30], pa.int16()), pa.array(["x", None, "zz", "w"])], ["i", "s"], codes)
    return pa.record_batch({"sparse": sparse, "dense": dense, "n": pa.array(range(7), pa.int8())})


def pa_read(data, form, options=None):
    """(schema, batches) read by pyarrow, unvalidated (assert_pa_equal validates what it compares)."""
    return R.pa_read(data, form, options, validate=False)


def assert_pa_equal(got, expected):
    assert len(got) == len(expected)
    for g, e in zip(got, expected):
        g.validate(full=True)
        assert g.equals(e), f"{g}\n--- expected\n{e}"


def frames_of(data, form):
    return X.file_frames(data) if form == "file" else X.split_stream(data)[0]


# ---------------------------------------------------------------------------------------------
# legacy framing

LEGACY = pa_ipc.IpcWriteOptions(use_legacy_format=True)


@pytest.mark.parametrize("form", FORMS)
def test_pyarrow_legacy_output_is_what_we_think(form):
    # guard for the oracle: pyarrow's legacy output really has no continuation markers
    data = pa_write(sample_batches(), form, LEGACY)
    frames = frames_of(data, form)
    assert frames and all(f.legacy for f in frames)
    if form == "stream":
        _, end, eos = X.split_stream(data)
        assert eos == X.LEGACY_EOS and end == len(data)


@pytest.mark.parametrize("source", ["bytes", "file_like", "path"])
@pytest.mark.parametrize("form", FORMS)
def test_pyarrow_legacy_output_read_by_arrowipc(form, source, tmp_path):
    batches = sample_batches()
    data = pa_write(batches, form, LEGACY)
    if source == "file_like":
        src = io.BytesIO(data)
    elif source == "path":
        src = str(tmp_path / "legacy.arrow")
        with open(src, "wb") as f:
            f.write(data)
    else:
        src = data
    schema, got = ours_read(src, form)
    S.assert_schema_equal(S.to_pa_schema(schema), batches[0].schema)
    assert_ours_equal(got, batches)


def test_legacy_stream_from_file_like_stops_at_the_end_marker():
    # a legacy stream followed by other bytes: the reader stops at the 4 zero bytes
    batches = sample_batches()
    data = pa_write(batches, "stream", LEGACY)
    f = io.BytesIO(data + b"trailing garbage that is not a message")
    _, got = ours_read(f, "stream")
    assert_ours_equal(got, batches)
    assert f.tell() == len(data)


@pytest.mark.parametrize("how", ["options", "keyword"])
@pytest.mark.parametrize("form", FORMS)
def test_arrowipc_legacy_output_read_by_pyarrow(form, how):
    batches = sample_batches()
    if how == "options":
        data = ours_write(batches, form, ipc.IpcWriteOptions(use_legacy_format=True))
    else:
        data = ours_write(batches, form, use_legacy_format=True)
    _, got = pa_read(data, form)
    assert_pa_equal(got, batches)
    # and arrowipc reads its own legacy output
    _, ours = ours_read(data, form)
    assert_ours_equal(ours, batches)


def test_arrowipc_legacy_stream_exact_bytes():
    batches = sample_batches()
    data = ours_write(batches, "stream", ipc.IpcWriteOptions(use_legacy_format=True))
    # first four bytes: the schema's metadata length, no continuation marker
    first = struct.unpack_from("<i", data, 0)[0]
    assert data[:4] != X.CONTINUATION
    assert 0 < first < len(data)
    frames, end, eos = X.split_stream(data)
    assert [f.header_type for f in frames] == [X.HEADER_SCHEMA] + [X.HEADER_RECORD_BATCH] * 3
    for f in frames:
        assert f.legacy
        assert X.CONTINUATION not in data[f.start:f.start + 4]
        # the prefix plus the metadata keep the body 8-byte aligned
        assert (4 + f.meta_len) % 8 == 0, f.meta_len
        assert f.body_start % 8 == 0
    # the end-of-stream marker is 4 zero bytes, and the stream ends there
    assert eos == b"\x00\x00\x00\x00"
    assert end == len(data)
    assert data[-4:] == b"\x00\x00\x00\x00" and data[-8:-4] != X.CONTINUATION
    # same message structure as pyarrow's legacy stream
    theirs, theirs_end, theirs_eos = X.split_stream(pa_write(batches, "stream", LEGACY))
    assert theirs_eos == eos
    assert [f.header_type for f in frames] == [f.header_type for f in theirs]
    assert all(f.legacy for f in theirs)


def test_arrowipc_legacy_file_exact_bytes():
    batches = sample_batches()
    data = ours_write(batches, "file", ipc.IpcWriteOptions(use_legacy_format=True))
    assert data[:8] == b"ARROW1\x00\x00"
    assert data[8:12] != X.CONTINUATION
    frames = X.file_frames(data)
    assert frames and all(f.legacy for f in frames)
    # footer blocks point at legacy-framed messages: metaDataLength covers prefix + metadata
    blocks = X.file_blocks(data, X.FOOTER_RECORD_BATCHES)
    batch_frames = [f for f in frames if f.header_type == X.HEADER_RECORD_BATCH]
    assert [b[0] for _, b in blocks] == [f.start for f in batch_frames]
    assert [b[1] for _, b in blocks] == [4 + f.meta_len for f in batch_frames]
    assert [b[2] for _, b in blocks] == [f.body_len for f in batch_frames]


def test_legacy_stream_with_dictionaries_both_ways():
    arr = pa.DictionaryArray.from_arrays(pa.array([0, 1, None, 0], pa.int8()), pa.array(["p", "q"]))
    batches = [pa.record_batch({"d": arr}), pa.record_batch({"d": arr.slice(1, 2)})]
    _, got = ours_read(pa_write(batches, "stream", LEGACY), "stream")
    assert_ours_equal(got, batches)
    data = ours_write(batches, "stream", ipc.IpcWriteOptions(use_legacy_format=True))
    assert all(f.legacy for f in X.split_stream(data)[0])
    _, back = pa_read(data, "stream")
    assert_pa_equal(back, batches)


def test_empty_legacy_stream_is_schema_then_four_zero_bytes():
    schema = sample_batches()[0].schema
    data = ours_write([], "stream", ipc.IpcWriteOptions(use_legacy_format=True), schema=schema)
    frames, end, eos = X.split_stream(data)
    assert len(frames) == 1 and eos == b"\x00\x00\x00\x00" and end == len(data)
    got_schema, got = ours_read(data, "stream")
    assert got == []
    assert pa_ipc.open_stream(data).read_all().num_rows == 0


# ---------------------------------------------------------------------------------------------
# metadata versions

V4_OPTIONS = ipc.IpcWriteOptions(metadata_version=ipc.MetadataVersion.V4)


def test_metadata_version_enum_matches_pyarrow():
    for name in ("V1", "V2", "V3", "V4", "V5"):
        assert int(getattr(ipc.MetadataVersion, name)) == int(getattr(pa_ipc.MetadataVersion, name))


@pytest.mark.parametrize("form", FORMS)
def test_arrowipc_writes_metadata_v4(form):
    batches = sample_batches()
    data = ours_write(batches, form, V4_OPTIONS)
    assert [f.version for f in frames_of(data, form)] == [METADATA_V4] * 4
    if form == "file":
        footer, _ = X.file_footer(data)
        assert footer.scalar(X.FOOTER_VERSION, "h") == METADATA_V4
    else:
        versions = [m.metadata_version for m in pa_ipc.MessageReader.open_stream(data)]
        assert versions == [pa_ipc.MetadataVersion.V4] * 4
    _, got = pa_read(data, form)
    assert_pa_equal(got, batches)


def test_default_metadata_version_is_v5():
    data = ours_write(sample_batches(), "stream")
    assert [m.metadata_version for m in pa_ipc.MessageReader.open_stream(data)] == [pa_ipc.MetadataVersion.V5] * 4


def test_metadata_version_keyword_of_writer():
    # pyarrow-style: options object passed to new_file; also the file footer carries V4
    data = ours_write(sample_batches(), "file", ipc.IpcWriteOptions(metadata_version=ipc.MetadataVersion.V4))
    _, got = pa_read(data, "file")
    assert len(got) == 3


@pytest.mark.parametrize("form", FORMS)
def test_v4_unions_carry_a_validity_buffer_both_ways(form):
    batch = union_batch()
    # pyarrow's V4 output: each union node lists one buffer more than in V5
    v4 = pa_write([batch], form, pa_ipc.IpcWriteOptions(metadata_version=pa_ipc.MetadataVersion.V4))
    v5 = pa_write([batch], form)
    n4 = len(frames_of(v4, form)[1].buffers())
    n5 = len(frames_of(v5, form)[1].buffers())
    assert n4 == n5 + 2
    _, got = ours_read(v4, form)
    assert_ours_equal(got, [batch])
    # arrowipc's V4 output has the same buffer count, and pyarrow reads it
    ours = ours_write([batch], form, V4_OPTIONS)
    assert len(frames_of(ours, form)[1].buffers()) == n4
    _, back = pa_read(ours, form)
    assert_pa_equal(back, [batch])


def test_writer_refuses_metadata_older_than_v4():
    with pytest.raises((ValueError, ArrowInvalid)):
        ipc.IpcWriteOptions(metadata_version=ipc.MetadataVersion.V3)


def patch_version(data: bytes, frame_index: int, version: int, form="stream") -> bytes:
    out = bytearray(data)
    frame = frames_of(out, form)[frame_index]
    pos = frame.message.field_pos(X.MESSAGE_VERSION)
    assert pos is not None, "the writer omitted the version field"
    struct.pack_into("<h", out, pos, version)
    return bytes(out)


@pytest.mark.parametrize("frame_index", [0, 1, 2], ids=["schema", "batch", "second_batch"])
def test_future_metadata_version_in_a_stream_is_invalid(frame_index):
    data = patch_version(pa_write(sample_batches(), "stream"), frame_index, METADATA_V5 + 1)
    with pytest.raises(pa.ArrowInvalid):          # the oracle refuses it too
        pa_ipc.open_stream(data).read_all()
    with pytest.raises(ArrowInvalid, match=r"(?i)version") as info:
        ipc.open_stream(data).read_all()
    message = str(info.value)
    assert "V6" in message and "V5" in message, message


def test_future_metadata_version_from_file_like_is_invalid():
    data = patch_version(pa_write(sample_batches(), "stream"), 1, METADATA_V5 + 1)
    with pytest.raises(ArrowInvalid, match=r"(?i)version"):
        ipc.open_stream(io.BytesIO(data)).read_all()


def test_much_newer_metadata_version_is_invalid():
    data = patch_version(pa_write(sample_batches(), "stream"), 0, 100)
    with pytest.raises(ArrowInvalid, match=r"(?i)version"):
        ipc.open_stream(data).read_all()


def test_future_metadata_version_in_a_file_message_is_invalid():
    data = patch_version(pa_write(sample_batches(), "file"), 1, METADATA_V5 + 1, form="file")
    with pytest.raises(ArrowInvalid, match=r"(?i)version"):
        reader = ipc.open_file(data)
        reader.get_batch(0)


def test_future_metadata_version_in_a_file_footer_is_invalid():
    data = bytearray(pa_write(sample_batches(), "file"))
    footer, _ = X.file_footer(data)
    pos = footer.field_pos(X.FOOTER_VERSION)
    struct.pack_into("<h", data, pos, METADATA_V5 + 1)
    with pytest.raises(ArrowInvalid, match=r"(?i)version"):
        ipc.open_file(bytes(data))


def test_old_metadata_version_messages_still_read():
    # V4 input written by pyarrow reads (V1-V3 cannot be written by any current writer)
    batches = sample_batches()
    data = pa_write(batches, "stream", pa_ipc.IpcWriteOptions(metadata_version=pa_ipc.MetadataVersion.V4))
    _, got = ours_read(data, "stream")
    assert_ours_equal(got, batches)


# ---------------------------------------------------------------------------------------------
# big-endian input

def big_endian_stems():
    return sorted(name[: -len(".stream")] for name in os.listdir(testdata.required(BIG))
                  if name.endswith(".stream"))


BIG_STEMS = big_endian_stems()
BIG_STEMS_AS_IS = list(BIG_STEMS)
SUFFIX = {"stream": ".stream", "file": ".arrow_file"}


@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize("stem", BIG_STEMS)
def test_big_endian_swapped_equals_little_endian_twin(stem, form):
    big_schema, big = ours_read(os.path.join(BIG, stem + SUFFIX[form]), form)
    little_schema, little = ours_read(os.path.join(LITTLE, stem + SUFFIX[form]), form)
    assert big_schema.endianness == "little"          # swapped to native
    S.assert_schema_equal(S.to_pa_schema(big_schema), S.to_pa_schema(little_schema))
    assert len(big) == len(little)
    for b, lt in zip(big, little):
        got, want = S.to_pa_batch(b), S.to_pa_batch(lt)
        assert got.equals(want), f"{stem}: big-endian batch differs from its twin"
        S.assert_pylist_matches(b, want)


@pytest.mark.parametrize("stem", BIG_STEMS)
def test_big_endian_explicit_ensure_native_endian_true(stem):
    options = ipc.IpcReadOptions(ensure_native_endian=True)
    _, big = ours_read(os.path.join(BIG, stem + ".stream"), "stream", options)
    _, pa_big = pa_read(open(os.path.join(LITTLE, stem + ".stream"), "rb").read(), "stream")
    assert [S.to_pa_batch(b).equals(p) for b, p in zip(big, pa_big)] == [True] * len(pa_big)


def flat_buffers(data, out):
    """Every buffer's bytes of an arrowipc ArrayData tree, pre-order (dictionaries apart)."""
    for buf in data.buffers:
        out.append(None if buf is None else S.as_bytes(buf))
    for child in data.children:
        flat_buffers(child, out)
    return out


def pa_flat_buffers(array):
    return [None if b is None else b.to_pybytes() for b in array.buffers()]


def _same_buffers(ours, theirs):
    """Buffer lists equal, ignoring absent / empty buffers (pyarrow lists a None validity slot
    for unions and null arrays where the IPC layout has none); where pyarrow trimmed a buffer to
    the values it needs, the common prefix must match."""
    ours = [b for b in ours if b]
    theirs = [b for b in theirs if b]
    if len(ours) != len(theirs):
        return False
    for a, b in zip(ours, theirs):
        n = min(len(a), len(b))
        if a[:n] != b[:n]:
            return False
    return True


@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize("stem", BIG_STEMS_AS_IS)
def test_big_endian_kept_as_is(stem, form):
    path = os.path.join(BIG, stem + SUFFIX[form])
    options = ipc.IpcReadOptions(ensure_native_endian=False)
    schema, batches = ours_read(path, form, options)
    assert schema.endianness == "big"
    for batch in batches:
        assert batch.schema.endianness == "big"
    # the bytes are the file's: pyarrow with ensure_native_endian=False sees the same buffers
    _, theirs = pa_read(open(path, "rb").read(), form, pa_ipc.IpcReadOptions(ensure_native_endian=False))
    assert len(batches) == len(theirs)
    for ours, their in zip(batches, theirs):
        assert ours.num_rows == their.num_rows
        for i in range(their.num_columns):
            column = ours.column(i)
            try:
                their_column = their.column(i)
            except KeyError:
                continue        # interval types pyarrow cannot wrap as Python arrays
            ours_bufs = flat_buffers(column.data, [])
            their_bufs = pa_flat_buffers(their_column)
            assert _same_buffers(ours_bufs, their_bufs), (stem, i)
            if column.data.dictionary is not None:
                ours_dict = flat_buffers(column.data.dictionary, [])
                their_dict = pa_flat_buffers(their_column.dictionary)
                assert _same_buffers(ours_dict, their_dict), (stem, i)


def test_big_endian_int32_bytes_are_swapped_relative_to_the_twin():
    # a direct look at one fixed-width column: same values, bytes reversed per element
    stem = "generated_primitive"
    options = ipc.IpcReadOptions(ensure_native_endian=False)
    _, (big, *_) = ours_read(os.path.join(BIG, stem + ".stream"), "stream", options)
    _, (little, *_) = ours_read(os.path.join(LITTLE, stem + ".stream"), "stream")
    names = [f.name for f in little.schema]
    i = names.index("int32_nullable")
    width = 4
    big_values = S.as_bytes(big.column(i).data.buffers[1])
    little_values = S.as_bytes(little.column(i).data.buffers[1])
    n = big.num_rows
    for k in range(n):
        if little.column(i).is_valid(k):
            assert big_values[k * width:(k + 1) * width] == little_values[k * width:(k + 1) * width][::-1]


def test_big_endian_fixed_width_bytes_are_swapped_relative_to_the_twin():
    # the same look at a file without offsets (passes today, unlike generated_primitive)
    options = ipc.IpcReadOptions(ensure_native_endian=False)
    _, (big, *_) = ours_read(os.path.join(BIG, "generated_datetime.stream"), "stream", options)
    _, (little, *_) = ours_read(os.path.join(LITTLE, "generated_datetime.stream"), "stream")
    checked = 0
    for i, f in enumerate(little.schema):
        width = f.type.byte_width if f.type.bit_width % 8 == 0 else 0
        if width < 2:
            continue
        big_values = S.as_bytes(big.column(i).data.buffers[1])
        little_values = S.as_bytes(little.column(i).data.buffers[1])
        for k in range(little.num_rows):
            if little.column(i).is_valid(k):
                assert big_values[k * width:(k + 1) * width] == little_values[k * width:(k + 1) * width][::-1]
                checked += 1
    assert checked > 0


def test_big_endian_schema_bytes_say_big():
    # guard for the corpus: the gold files really are big-endian
    data = open(os.path.join(BIG, "generated_primitive.stream"), "rb").read()
    schema_table = X.split_stream(data)[0][0].message.table(X.MESSAGE_HEADER)
    assert schema_table.scalar(X.SCHEMA_ENDIANNESS, "h") == 1


def test_big_endian_read_then_written_is_little_endian():
    options = ipc.IpcReadOptions(ensure_native_endian=True)
    schema, batches = ours_read(os.path.join(BIG, "generated_primitive.stream"), "stream", options)
    sink = arrowipc.BufferOutputStream()
    with ipc.new_stream(sink, schema) as writer:
        for batch in batches:
            writer.write_batch(batch)
    data = S.as_bytes(sink.getvalue())
    schema_table = X.split_stream(data)[0][0].message.table(X.MESSAGE_HEADER)
    assert schema_table.scalar(X.SCHEMA_ENDIANNESS, "h") == 0
    _, back = pa_read(data, "stream")
    _, twin = pa_read(open(os.path.join(LITTLE, "generated_primitive.stream"), "rb").read(), "stream")
    assert [b.equals(t) for b, t in zip(back, twin)] == [True] * len(twin)


def test_little_endian_schema_says_little():
    schema, _ = ours_read(os.path.join(LITTLE, "generated_primitive.stream"), "stream",
                          ipc.IpcReadOptions(ensure_native_endian=False))
    assert schema.endianness == "little"


# ---------------------------------------------------------------------------------------------
# the ALKAID1 file variant

ALKAID = b"ALKAID1"


def alkaid_file(batches, **kwargs) -> bytes:
    schema = batches[0].schema
    sink = arrowipc.BufferOutputStream()
    with ipc.new_file(sink, arrowipc.schema(schema), magic=ALKAID, **kwargs) as writer:
        for batch in batches:
            writer.write_batch(arrowipc.record_batch(batch))
    return S.as_bytes(sink.getvalue())


def test_alkaid_file_magic_bytes():
    data = alkaid_file(sample_batches())
    assert data[:8] == b"ALKAID1\x00"
    assert data[-7:] == b"ALKAID1"
    footer_len = struct.unpack_from("<i", data, len(data) - 11)[0]
    assert 0 < footer_len < len(data)
    # the rest is an ordinary file: 8-byte aligned messages after the 8-byte header
    frames = X.file_frames(data)
    assert frames[0].start == 8
    assert [f.header_type for f in frames] == [X.HEADER_SCHEMA] + [X.HEADER_RECORD_BATCH] * 3


def test_default_magic_is_arrow1():
    data = ours_write(sample_batches(), "file")
    assert data[:8] == b"ARROW1\x00\x00" and data[-6:] == b"ARROW1"


def test_pyarrow_rejects_alkaid_file():
    data = alkaid_file(sample_batches())
    with pytest.raises(pa.ArrowInvalid):
        pa_ipc.open_file(pa.py_buffer(data))


@pytest.mark.parametrize("source", ["bytes", "file_like", "path"])
def test_arrowipc_reads_alkaid_file(source, tmp_path):
    batches = sample_batches()
    data = alkaid_file(batches, metadata={b"footer": b"kept"})
    if source == "file_like":
        src = io.BytesIO(data)
    elif source == "path":
        src = str(tmp_path / "alkaid.arrow")
        with open(src, "wb") as f:
            f.write(data)
    else:
        src = data
    with ipc.open_file(src) as reader:
        assert reader.num_record_batches == 3
        assert reader.count_rows() == 30
        assert reader.metadata == {b"footer": b"kept"}
        got = [reader.get_batch(i) for i in range(3)]
    assert_ours_equal(got, batches)


def test_alkaid_file_from_pyarrow_bytes_with_magic_replaced():
    # an ALKAID1 file made without arrowipc's writer: pyarrow's file with both magics replaced
    batches = sample_batches()
    data = pa_write(batches, "file")
    assert data[:8] == b"ARROW1\x00\x00" and data[-6:] == b"ARROW1"
    alkaid = b"ALKAID1\x00" + data[8:-6] + ALKAID
    _, got = ours_read(alkaid, "file")
    assert_ours_equal(got, batches)


def test_alkaid_file_with_dictionaries():
    arr = pa.DictionaryArray.from_arrays(pa.array([0, 1, None], pa.int16()), pa.array(["a", "b"]))
    batches = [pa.record_batch({"d": arr}), pa.record_batch({"d": arr.slice(1)})]
    data = alkaid_file(batches)
    _, got = ours_read(data, "file")
    assert_ours_equal(got, batches)


def test_alkaid_streams_are_ordinary_streams():
    # the variant changes only the file magic: streams read by pyarrow as usual
    batches = sample_batches()
    data = ours_write(batches, "stream")
    _, got = pa_read(data, "stream")
    assert_pa_equal(got, batches)


def test_bad_magic_is_rejected():
    with pytest.raises(ValueError):
        ipc.new_file(arrowipc.BufferOutputStream(), arrowipc.schema(sample_batches()[0].schema), magic=b"NOPE1")
    data = bytearray(alkaid_file(sample_batches()))
    data[:7] = b"ALKAIX1"
    with pytest.raises(ArrowInvalid, match="(?i)magic"):
        ipc.open_file(bytes(data))


def test_mixed_magics_are_rejected_or_read_consistently():
    # ARROW1 at the start and ALKAID1 at the end is no valid file of either kind
    data = pa_write(sample_batches(), "file")
    mixed = data[:-6] + ALKAID
    with pytest.raises(ArrowInvalid):
        ipc.open_file(mixed).read_all()


# ---------------------------------------------------------------------------------------------
# ALKAID:extension:* field metadata

class TempType(arrowipc.ExtensionType):
    extension_name = "arrowipc.test.alkaid_temp"

    def __init__(self, serialized=b"scale=K"):
        super().__init__("arrowipc.test.alkaid_temp", arrowipc.int16(), serialized)

    @classmethod
    def __arrow_ext_deserialize__(cls, storage_type, serialized):
        return cls(serialized)


@pytest.fixture
def temp_registered():
    arrowipc.register_extension_type(TempType())
    try:
        yield
    finally:
        arrowipc.unregister_extension_type("arrowipc.test.alkaid_temp")


def alkaid_metadata_batch(name: bytes, serialized: bytes, storage: pa.Array, extra=None):
    metadata = {b"ALKAID:extension:name": name, b"ALKAID:extension:metadata": serialized}
    metadata.update(extra or {})
    schema = pa.schema([pa.field("e", storage.type, metadata=metadata), pa.field("n", pa.int8())])
    return pa.RecordBatch.from_arrays([storage, pa.array(range(len(storage)), pa.int8())], schema=schema)


@pytest.mark.parametrize("form", FORMS)
def test_alkaid_extension_keys_give_canonical_uuid(form):
    storage = pa.array([uuid.UUID(int=i * 977).bytes if i % 3 else None for i in range(8)], pa.binary(16))
    batch = alkaid_metadata_batch(b"arrow.uuid", b"", storage)
    schema, (got,) = ours_read(pa_write([batch], form), form)
    ext = schema.field(0).type
    assert isinstance(ext, arrowipc.ExtensionType)
    assert ext.extension_name == "arrow.uuid"
    assert ext.storage_type == arrowipc.fixed_size_binary(16)
    assert not any(k.startswith(b"ALKAID:extension") for k in (schema.field(0).metadata or {}))
    values = got.column(0).to_pylist()
    assert values == [None if v is None else uuid.UUID(bytes=v) for v in storage.to_pylist()]


@pytest.mark.parametrize("form", FORMS)
def test_alkaid_extension_keys_give_registered_type(form, temp_registered):
    storage = pa.array([1, None, -300, 7], pa.int16())
    batch = alkaid_metadata_batch(b"arrowipc.test.alkaid_temp", b"scale=C", storage,
                                  extra={b"unrelated": b"stays"})
    schema, (got,) = ours_read(pa_write([batch], form), form)
    ext = schema.field(0).type
    assert isinstance(ext, TempType)
    assert ext.serialized == b"scale=C"
    assert schema.field(0).metadata == {b"unrelated": b"stays"}
    assert got.column(0).to_pylist() == [1, None, -300, 7]
    # the same field under ARROW: keys reads the same way
    arrow_schema = pa.schema([pa.field("e", pa.int16(), metadata={
        b"ARROW:extension:name": b"arrowipc.test.alkaid_temp", b"ARROW:extension:metadata": b"scale=C",
        b"unrelated": b"stays"}), pa.field("n", pa.int8())])
    arrow_batch = pa.RecordBatch.from_arrays(batch.columns, schema=arrow_schema)
    arrow_schema_ours, _ = ours_read(pa_write([arrow_batch], form), form)
    assert arrow_schema_ours.field(0).type == ext
    assert arrow_schema_ours.field(0).metadata == schema.field(0).metadata


def test_alkaid_extension_keys_in_an_alkaid_file(temp_registered):
    storage = pa.array([5, 6], pa.int16())
    batch = alkaid_metadata_batch(b"arrowipc.test.alkaid_temp", b"scale=F", storage)
    data = pa_write([batch], "file")
    alkaid = b"ALKAID1\x00" + data[8:-6] + ALKAID
    schema, (got,) = ours_read(alkaid, "file")
    assert isinstance(schema.field(0).type, TempType)
    assert schema.field(0).type.serialized == b"scale=F"
    assert got.column(0).to_pylist() == [5, 6]


def test_alkaid_unknown_extension_kept_as_storage_and_metadata():
    storage = pa.array([1, 2, None], pa.int16())
    batch = alkaid_metadata_batch(b"com.example.nobody", b"\x01\x02", storage)
    schema, (got,) = ours_read(pa_write([batch], "stream"), "stream")
    assert schema.field(0).type == arrowipc.int16()
    assert schema.field(0).metadata == {b"ALKAID:extension:name": b"com.example.nobody",
                                        b"ALKAID:extension:metadata": b"\x01\x02"}
    S.assert_batch_matches(got, batch)


def test_alkaid_extension_keys_on_a_nested_field():
    storage = pa.array([uuid.UUID(int=1).bytes, None], pa.binary(16))
    inner = pa.field("u", pa.binary(16), metadata={b"ALKAID:extension:name": b"arrow.uuid"})
    struct_type = pa.struct([inner])
    batch = pa.record_batch({"s": pa.StructArray.from_arrays([storage], fields=[inner])})
    assert batch.schema.field(0).type == struct_type
    schema, (got,) = ours_read(pa_write([batch], "stream"), "stream")
    child = schema.field(0).type.field(0)
    assert isinstance(child.type, arrowipc.ExtensionType) and child.type.extension_name == "arrow.uuid"
    assert got.column(0).to_pylist() == [{"u": uuid.UUID(int=1)}, {"u": None}]
