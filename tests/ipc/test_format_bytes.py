"""The exact bytes arrowipc writes, checked against the Arrow IPC format.

The stream and file are parsed here with a tiny independent flatbuffer reader (no generated code,
no arrowipc), so these tests can catch a writer and a reader that agree on a wrong layout:
  * the end-of-stream marker, the file magic, the footer size and footer blocks;
  * every message's metadata length is a multiple of 8;
  * body buffers start at 8-byte offsets by default (pyarrow's), 64 with IpcWriteOptions(alignment=64);
  * record batch and dictionary batch messages are pyarrow's, byte for byte;
  * padding bytes are zero; a column without nulls writes a 0-length validity buffer;
  * sliced arrays are truncated (offsets rebased, bitmaps shifted) and read back right.
Also the message-level API: read_message, read_schema, read_record_batch, MessageReader.
"""
import io
import struct

import pytest

pa = pytest.importorskip("pyarrow")
import pyarrow.ipc as pa_ipc  # noqa: E402

import arrowipc  # noqa: E402
from arrowipc import ipc  # noqa: E402

import strategies as S  # noqa: E402
from ipc_surgery import FlatTable  # noqa: E402

EOS = b"\xff\xff\xff\xff\x00\x00\x00\x00"
FILE_MAGIC = b"ARROW1"
CONTINUATION = 0xFFFFFFFF
METADATA_V5 = 4  # MetadataVersion.V5 in Schema.fbs
HEADER_SCHEMA, HEADER_DICTIONARY_BATCH, HEADER_RECORD_BATCH = 1, 2, 3


def struct_values(table, index: int, fmt: str) -> list:
    """The unpacked structs of a vector of structs (ipc_surgery's reader also gives positions)."""
    return [values for _, values in table.struct_vector(index, fmt)]


class Message:
    """One encapsulated IPC message found at `start` in `data`."""

    def __init__(self, data: bytes, start: int):
        self.start = start
        continuation, self.metadata_length = struct.unpack_from("<Ii", data, start)
        assert continuation == CONTINUATION, f"no continuation marker at byte {start}"
        self.metadata = data[start + 8: start + 8 + self.metadata_length]
        table = FlatTable.root(self.metadata)
        self.version = table.scalar(0, "h")
        self.header_type = table.scalar(1, "B")
        self.body_length = table.scalar(3, "q")
        self.body_start = start + 8 + self.metadata_length
        self.body = data[self.body_start: self.body_start + self.body_length]
        self.end = self.body_start + self.body_length
        header = table.table(2)
        self.length = self.nodes = self.buffers = None
        if self.header_type in (HEADER_RECORD_BATCH, HEADER_DICTIONARY_BATCH):
            if self.header_type == HEADER_DICTIONARY_BATCH:
                header = header.table(1)
            self.length = header.scalar(0, "q")
            self.nodes = struct_values(header, 1, "qq")      # FieldNode: length, null_count
            self.buffers = struct_values(header, 2, "qq")    # Buffer: offset, length
            self.compression = header.table(3)


def parse_stream(data: bytes, start: int = 0):
    """(messages, end of the EOS marker) of an IPC stream starting at `start`."""
    messages = []
    pos = start
    while True:
        assert pos + 8 <= len(data), f"stream ends at byte {len(data)} without an EOS marker"
        if data[pos: pos + 8] == EOS:
            return messages, pos + 8
        message = Message(data, pos)
        messages.append(message)
        pos = message.end


def parse_file(data: bytes):
    """(stream messages, footer table, footer blocks) of an IPC file."""
    assert data[:8] == FILE_MAGIC + b"\x00\x00"
    assert data[-6:] == FILE_MAGIC
    footer_size = struct.unpack_from("<i", data, len(data) - 10)[0]
    footer_start = len(data) - 10 - footer_size
    assert 8 <= footer_start, f"footer of {footer_size} bytes does not fit"
    footer = FlatTable.root(data, footer_start)
    blocks = struct_values(footer, 3, "qi4xq")  # Block: offset, metaDataLength, (pad), bodyLength
    messages, _ = parse_stream(data, 8)
    return messages, footer, blocks


# ---------------------------------------------------------------------------------------------
# writers

def ours_stream(pa_batches, schema=None, options=None) -> bytes:
    schema = schema if schema is not None else pa_batches[0].schema
    sink = arrowipc.BufferOutputStream()
    with ipc.new_stream(sink, arrowipc.schema(schema), options=options) as writer:
        for batch in pa_batches:
            writer.write_batch(arrowipc.record_batch(batch))
    return S.as_bytes(sink.getvalue())


def ours_file(pa_batches, schema=None, options=None) -> bytes:
    schema = schema if schema is not None else pa_batches[0].schema
    sink = arrowipc.BufferOutputStream()
    with ipc.new_file(sink, arrowipc.schema(schema), options=options) as writer:
        for batch in pa_batches:
            writer.write_batch(arrowipc.record_batch(batch))
    return S.as_bytes(sink.getvalue())


def sample_batches():
    return [S.make_batch(S.ISSUE2_CASE_IDS, 37, seed=1), S.make_batch(S.ISSUE2_CASE_IDS, 5, seed=2),
            S.make_batch(S.ISSUE2_CASE_IDS, 0, seed=3)]


def record_batch_messages(messages):
    return [m for m in messages if m.header_type == HEADER_RECORD_BATCH]


# ---------------------------------------------------------------------------------------------
# framing

def test_stream_ends_with_eos_marker():
    data = ours_stream(sample_batches())
    assert data.endswith(EOS)
    messages, end = parse_stream(data)
    assert end == len(data), "bytes after the EOS marker"
    assert [m.header_type for m in messages] == [HEADER_SCHEMA] + [HEADER_RECORD_BATCH] * 3


def test_schema_only_stream_is_schema_then_eos():
    schema = sample_batches()[0].schema
    data = ours_stream([], schema=schema)
    messages, end = parse_stream(data)
    assert [m.header_type for m in messages] == [HEADER_SCHEMA]
    assert messages[0].body_length == 0
    assert end == len(data) and data.endswith(EOS)


@pytest.mark.parametrize("form", ["stream", "file"])
def test_every_metadata_length_is_a_multiple_of_8(form):
    batches = sample_batches()
    data = ours_stream(batches) if form == "stream" else ours_file(batches)
    messages = parse_stream(data)[0] if form == "stream" else parse_file(data)[0]
    assert len(messages) == 4
    for message in messages:
        assert message.metadata_length % 8 == 0, message.start
        assert message.metadata_length > 0
        assert message.start % 8 == 0, message.start
        assert message.body_length % 8 == 0, message.start
        assert message.version == METADATA_V5


def test_file_magic_footer_size_and_blocks():
    batches = sample_batches()
    data = ours_file(batches)
    assert data.startswith(b"ARROW1\x00\x00")
    assert data.endswith(b"ARROW1")
    footer_size = struct.unpack("<i", data[-10:-6])[0]
    assert 0 < footer_size < len(data) - 16
    messages, footer, blocks = parse_file(data)
    assert footer.scalar(0, "h") == METADATA_V5
    assert footer.table(1) is not None, "footer has no schema"
    assert struct_values(footer, 2, "qi4xq") == []  # no dictionaries in issue 2
    batch_messages = record_batch_messages(messages)
    assert len(blocks) == len(batches) == len(batch_messages)
    for (offset, metadata_length, body_length), message in zip(blocks, batch_messages):
        # each block points at its message: continuation, metadata, body
        assert offset == message.start
        assert offset % 8 == 0
        assert metadata_length == 8 + message.metadata_length
        assert body_length == message.body_length
    # the footer comes after the last message
    footer_start = len(data) - 10 - footer_size
    assert footer_start >= batch_messages[-1].end


def test_pyarrow_read_message_sees_our_messages():
    data = ours_stream(sample_batches())
    messages, _ = parse_stream(data)
    source = pa.BufferReader(data)
    for message in messages:
        theirs = pa_ipc.read_message(source)
        assert theirs.metadata.to_pybytes().rstrip(b"\x00") == message.metadata.rstrip(b"\x00")
        assert theirs.body.size == message.body_length
        assert theirs.body.to_pybytes() == message.body
    assert source.tell() == len(data) - len(EOS)


# ---------------------------------------------------------------------------------------------
# body layout

def assert_buffers_in_body(message, alignment):
    previous_end = 0
    for index, (offset, length) in enumerate(message.buffers):
        assert offset % alignment == 0, f"buffer {index} at body offset {offset}"
        assert length >= 0 and offset >= previous_end, f"buffer {index} overlaps the previous one"
        assert offset + length <= message.body_length, f"buffer {index} ends past the body"
        previous_end = offset + length


def assert_padding_is_zero(message):
    covered = bytearray(message.body_length)
    for offset, length in message.buffers:
        covered[offset: offset + length] = b"\x01" * length
    stray = [i for i, (byte, used) in enumerate(zip(message.body, covered)) if not used and byte]
    assert not stray, f"non-zero padding at body bytes {stray[:10]}"


@pytest.mark.parametrize("form", ["stream", "file"])
def test_buffers_8_byte_aligned_by_default(form):
    batches = sample_batches()
    data = ours_stream(batches) if form == "stream" else ours_file(batches)
    messages = parse_stream(data)[0] if form == "stream" else parse_file(data)[0]
    for message in record_batch_messages(messages):
        assert_buffers_in_body(message, 8)
        assert_padding_is_zero(message)


def test_alignment_64_pads_buffers_to_64_bytes():
    batch = pa.record_batch({"a": pa.array([1, None, 3], pa.int8()), "b": pa.array([1, 2, 3], pa.int16()),
                             "c": pa.array(["x", None, "zz"])})
    default = record_batch_messages(parse_stream(ours_stream([batch]))[0])[0]
    wide_data = ours_stream([batch], options=ipc.IpcWriteOptions(alignment=64))
    wide = record_batch_messages(parse_stream(wide_data)[0])[0]
    assert_buffers_in_body(wide, 64)
    assert_padding_is_zero(wide)
    assert any(offset % 64 for offset, length in default.buffers if length), default.buffers
    assert wide.body_length > default.body_length
    assert pa_ipc.open_stream(pa.py_buffer(wide_data)).read_all().equals(pa.Table.from_batches([batch]))


def test_no_nulls_means_zero_length_validity_buffer():
    batch = pa.record_batch({"i": pa.array([1, 2, 3], pa.int32()), "s": pa.array(["a", "bb", ""]),
                             "n": pa.array([1, None, 3], pa.int64())})
    message = record_batch_messages(parse_stream(ours_stream([batch]))[0])[0]
    assert message.length == 3
    assert message.nodes == [(3, 0), (3, 0), (3, 1)]
    validity_i, values_i, validity_s, offsets_s, data_s, validity_n, values_n = message.buffers
    assert validity_i[1] == 0 and validity_s[1] == 0
    assert 1 <= validity_n[1] < 1 + 64
    # value buffers hold what the rows need (padding may or may not be counted)
    assert 12 <= values_i[1] < 12 + 64 and 24 <= values_n[1] < 24 + 64
    assert 16 <= offsets_s[1] < 16 + 64 and 3 <= data_s[1] < 3 + 64


def test_sliced_batch_without_nulls_in_slice_drops_validity():
    full = pa.record_batch({"v": pa.array([None] + list(range(1, 20)), pa.int64())})
    message = record_batch_messages(parse_stream(ours_stream([full.slice(3, 10)]))[0])[0]
    assert message.nodes == [(10, 0)]
    assert message.buffers[0][1] == 0
    offset, length = message.buffers[1]
    assert 80 <= length < 80 + 64, "sliced values buffer not truncated"
    assert struct.unpack_from("<10q", message.body, offset) == tuple(range(3, 13))


def unpack_bits(data: bytes, count: int):
    return [bool(data[i // 8] >> (i % 8) & 1) for i in range(count)]


def test_sliced_arrays_are_truncated_and_rebased():
    strings = pa.array([f"value{i}" if i % 5 else None for i in range(40)])
    bools = pa.array([i % 3 == 0 if i % 7 else None for i in range(40)])
    full = pa.record_batch({"s": strings, "b": bools})
    sliced = full.slice(3, 17)
    message = record_batch_messages(parse_stream(ours_stream([sliced]))[0])[0]
    assert message.length == 17
    assert message.nodes == [(17, sliced.column(0).null_count), (17, sliced.column(1).null_count)]
    (s_validity, s_offsets, s_data, b_validity, b_values) = message.buffers

    def body(buf):
        offset, length = buf
        return message.body[offset: offset + length]

    # the validity bitmap starts at the slice's first row (bit 0), not at the parent's bit 3
    assert unpack_bits(body(s_validity), 17) == [v is not None for v in sliced.column(0).to_pylist()]
    assert unpack_bits(body(b_validity), 17) == [v is not None for v in sliced.column(1).to_pylist()]
    valid_bools = [bool(v) for v in sliced.column(1).to_pylist()]
    got_bools = unpack_bits(body(b_values), 17)
    assert [g for g, v in zip(got_bools, sliced.column(1).to_pylist()) if v is not None] == \
        [b for b, v in zip(valid_bools, sliced.column(1).to_pylist()) if v is not None]
    # offsets rebased to start at 0, data truncated to what the slice uses
    offsets = list(struct.unpack_from(f"<{18}i", body(s_offsets)))
    assert offsets[0] == 0
    expected_strings = [v or "" for v in sliced.column(0).to_pylist()]
    assert offsets == [sum(len(x) for x in expected_strings[:i]) for i in range(18)]
    expected_data = "".join(expected_strings).encode()
    assert body(s_data)[: len(expected_data)] == expected_data
    assert len(body(s_data)) < len(expected_data) + 64, "string data not truncated to the slice"
    # and pyarrow reads the right values
    got = pa_ipc.open_stream(pa.py_buffer(ours_stream([sliced]))).read_next_batch()
    got.validate(full=True)
    assert got.equals(sliced)


def test_sliced_nested_arrays_read_right_by_pyarrow():
    batch = S.make_batch(["list", "struct", "map", "fixed_size_list", "list_of_struct", "large_list"], 50, seed=4)
    for start, length in ((3, 17), (9, 1), (45, 5), (50, 0)):
        sliced = batch.slice(start, length)
        data = ours_stream([sliced], schema=batch.schema)
        got = pa_ipc.open_stream(pa.py_buffer(data)).read_all()
        got.validate(full=True)
        assert got.equals(pa.Table.from_batches([sliced])), (start, length)
        # a slice of a few rows writes a body far smaller than the whole batch's
        if length and length < 10:
            whole = record_batch_messages(parse_stream(ours_stream([batch]))[0])[0]
            part = record_batch_messages(parse_stream(data)[0])[0]
            assert part.body_length < whole.body_length


# ---------------------------------------------------------------------------------------------
# message-level API (mirrors pyarrow.ipc)

def test_read_schema_of_serialized_schema():
    schema = S.make_batch(S.ISSUE2_CASE_IDS, 0).schema.with_metadata({b"k": b"v"})
    got = ipc.read_schema(schema.serialize().to_pybytes())
    S.assert_schema_equal(S.to_pa_schema(got), schema)


def test_read_schema_of_message():
    schema = pa.schema([pa.field("a", pa.int32(), metadata={b"x": b"y"})])
    message = ipc.read_message(schema.serialize().to_pybytes())
    S.assert_schema_equal(S.to_pa_schema(ipc.read_schema(message)), schema)


def test_read_message_matches_pyarrow():
    batch = S.make_batch(["int32", "string", "list"], 9, seed=5)
    for serialized in (batch.schema.serialize(), batch.serialize()):
        theirs = pa_ipc.read_message(serialized)
        ours = ipc.read_message(serialized.to_pybytes())
        assert ours.type == theirs.type
        assert int(ours.metadata_version) == int(theirs.metadata_version) == METADATA_V5
        assert ours.metadata_version == ipc.MetadataVersion.V5
        assert S.as_bytes(ours.metadata).rstrip(b"\x00") == theirs.metadata.to_pybytes().rstrip(b"\x00")
        assert S.as_bytes(ours.body) == theirs.body.to_pybytes()


def test_read_message_from_file_like_consumes_one_message():
    data = S.pa_stream_bytes([S.make_batch(["int64"], 3), S.make_batch(["int64"], 4, seed=1)])
    source = io.BytesIO(data)
    types = [ipc.read_message(source).type for _ in range(3)]
    assert types == ["schema", "record batch", "record batch"]
    assert source.tell() == len(data) - len(EOS)


def test_read_record_batch_from_serialized_batch():
    batch = S.make_batch(["int32", "string", "struct", "decimal128", "month_day_nano_interval"], 13, seed=6)
    schema = arrowipc.schema(batch.schema)
    S.assert_batch_matches(ipc.read_record_batch(batch.serialize().to_pybytes(), schema), batch)
    message = ipc.read_message(batch.serialize().to_pybytes())
    S.assert_batch_matches(ipc.read_record_batch(message, schema), batch)


def test_read_record_batch_of_sliced_batch():
    batch = S.make_batch(["bool", "string", "list"], 30, seed=7).slice(3, 17)
    got = ipc.read_record_batch(batch.serialize().to_pybytes(), arrowipc.schema(batch.schema))
    S.assert_batch_matches(got, batch)


def test_message_reader_open_stream_matches_pyarrow():
    data = S.pa_stream_bytes([S.make_batch(["int16", "binary"], n, seed=n) for n in (3, 0, 8)])
    theirs = [(m.type, m.body.to_pybytes()) for m in pa_ipc.MessageReader.open_stream(pa.py_buffer(data))]
    reader = ipc.MessageReader.open_stream(data)
    ours = []
    while True:
        try:
            message = reader.read_next_message()
        except StopIteration:
            break
        ours.append((message.type, S.as_bytes(message.body)))
    assert ours == theirs
    assert [m.type for m in ipc.MessageReader.open_stream(data)] == [t for t, _ in theirs]


def test_message_reader_messages_feed_read_record_batch():
    batches = [S.make_batch(["float32", "large_string"], n, seed=n) for n in (4, 6)]
    data = S.pa_stream_bytes(batches)
    messages = list(ipc.MessageReader.open_stream(io.BytesIO(data)))
    schema = ipc.read_schema(messages[0])
    for message, expected in zip(messages[1:], batches):
        S.assert_batch_matches(ipc.read_record_batch(message, schema), expected)


def test_writer_overrides_do_not_change_the_callers_options():
    # use_legacy_format= and metadata_version= apply to that writer only: the options object the
    # caller passed may be shared by other writers.
    options = ipc.IpcWriteOptions(compression="zstd")
    batch = arrowipc.record_batch({"a": [1, 2]})
    legacy = io.BytesIO()
    with ipc.new_stream(legacy, batch.schema, options=options, use_legacy_format=True) as w:
        w.write_batch(batch)
    assert options.use_legacy_format is False
    assert options.metadata_version == ipc.MetadataVersion.V5
    modern = io.BytesIO()
    with ipc.new_stream(modern, batch.schema, options=options) as w:
        w.write_batch(batch)
    assert legacy.getvalue()[-4:] == b"\x00\x00\x00\x00" and legacy.getvalue()[:4] != b"\xff" * 4
    assert modern.getvalue()[:4] == b"\xff" * 4


# ---------------------------------------------------------------------------------------------
# record batch and dictionary batch headers: pyarrow's flatbuffer layout, byte for byte

def pyarrow_stream(pa_batches, schema=None, options=None) -> bytes:
    schema = schema if schema is not None else pa_batches[0].schema
    sink = pa.BufferOutputStream()
    with pa_ipc.new_stream(sink, schema, options=options) as writer:
        for batch in pa_batches:
            writer.write_batch(batch)
    return sink.getvalue().to_pybytes()


def batch_messages_bytes(data: bytes, header_types=(HEADER_RECORD_BATCH, HEADER_DICTIONARY_BATCH)):
    """[(header type, metadata, body)] of the stream's batch messages."""
    return [(m.header_type, m.metadata, m.body) for m in parse_stream(data)[0]
            if m.header_type in header_types]


@pytest.mark.parametrize("rows", [37, 5, 1, 0])
@pytest.mark.parametrize("version", ["V5", "V4"])
def test_batch_messages_equal_pyarrows_bytes(rows, version):
    """Every record batch message (header and body, default options) is pyarrow's, byte for
    byte: same flatbuffer layout (fields at their default left out, children first, vtables
    just below their tables) and the same 8-byte body alignment."""
    batch = S.make_batch(S.ISSUE2_CASE_IDS, rows, seed=rows)
    ours = batch_messages_bytes(ours_stream([batch], options=ipc.IpcWriteOptions(
        metadata_version=getattr(ipc.MetadataVersion, version))))
    theirs = batch_messages_bytes(pyarrow_stream([batch], options=pa_ipc.IpcWriteOptions(
        metadata_version=getattr(pa_ipc.MetadataVersion, version))))
    assert len(ours) == len(theirs) == 1
    assert ours[0][1] == theirs[0][1], "record batch header differs"
    assert ours[0][2] == theirs[0][2], "record batch body differs"


@pytest.mark.parametrize("metadata", [{"k": "v"}, {"a": "", "bb": "x" * 13, "": "zz"}])
def test_batch_with_custom_metadata_equals_pyarrows_bytes(metadata):
    batch = pa.record_batch({"i": pa.array([1, None, 3], pa.int64()), "s": pa.array(["a", "bb", ""])})
    sink = arrowipc.BufferOutputStream()
    with ipc.new_stream(sink, arrowipc.schema(batch.schema)) as writer:
        writer.write_batch(arrowipc.record_batch(batch), custom_metadata=metadata)
    pa_sink = pa.BufferOutputStream()
    with pa_ipc.new_stream(pa_sink, batch.schema) as writer:
        writer.write_batch(batch, custom_metadata=metadata)
    ours = batch_messages_bytes(S.as_bytes(sink.getvalue()))
    theirs = batch_messages_bytes(pa_sink.getvalue().to_pybytes())
    assert ours == theirs


def test_legacy_format_batch_equals_pyarrows_bytes():
    batch = S.make_batch(S.ISSUE2_CASE_IDS, 9, seed=4)
    ours = ours_stream([batch], options=ipc.IpcWriteOptions(use_legacy_format=True))
    theirs = pyarrow_stream([batch], options=pa_ipc.IpcWriteOptions(use_legacy_format=True))
    # legacy framing: a 4-byte length, no continuation marker; everything after the schema
    # message (the batch, the 4-byte end-of-stream zero) is pyarrow's
    assert ours[-4:] == theirs[-4:] == bytes(4)
    ours_schema_len = struct.unpack_from("<i", ours, 0)[0]
    theirs_schema_len = struct.unpack_from("<i", theirs, 0)[0]
    assert ours[4 + ours_schema_len:] == theirs[4 + theirs_schema_len:]


@pytest.mark.parametrize("delta", [False, True])
def test_dictionary_batches_equal_pyarrows_bytes(delta):
    dict_type = pa.dictionary(pa.int32(), pa.string())
    first = pa.record_batch({"d": pa.DictionaryArray.from_arrays(pa.array([0, 1, 0], pa.int32()),
                                                                 pa.array(["x", "y"]))})
    second = pa.record_batch({"d": pa.DictionaryArray.from_arrays(
        pa.array([2, 1], pa.int32()), pa.array(["x", "y", "zzz"]))})
    ours = ours_stream([first, second], options=ipc.IpcWriteOptions(emit_dictionary_deltas=delta))
    theirs = pyarrow_stream([first, second], options=pa_ipc.IpcWriteOptions(
        emit_dictionary_deltas=delta))
    assert first.schema.field("d").type == dict_type
    ours_messages, theirs_messages = batch_messages_bytes(ours), batch_messages_bytes(theirs)
    assert [m[0] for m in ours_messages] == [m[0] for m in theirs_messages]
    assert ours_messages == theirs_messages


def masked_header(message: "Message") -> bytes:
    """The header with what compression output decides (buffer offsets and lengths, the body
    length) zeroed: what stays is the layout."""
    meta = bytearray(message.metadata)
    table = FlatTable.root(meta)
    meta[table.field_pos(3): table.field_pos(3) + 8] = bytes(8)
    for pos, _ in table.table(2).struct_vector(2, "qq"):
        meta[pos: pos + 16] = bytes(16)
    return bytes(meta)


@pytest.mark.parametrize("codec", ["lz4", "zstd"])
def test_compressed_batch_header_has_pyarrows_layout(codec):
    """Compressed bodies differ from pyarrow's (other codec builds; arrowipc stores what does not
    shrink raw), but the header is laid out as pyarrow's: BodyCompression with its default
    fields (LZ4_FRAME, BUFFER) left out."""
    batch = S.make_batch(S.ISSUE2_CASE_IDS, 37, seed=5)
    ours = record_batch_messages(parse_stream(ours_stream(
        [batch], options=ipc.IpcWriteOptions(compression=codec)))[0])
    theirs = record_batch_messages(parse_stream(pyarrow_stream(
        [batch], options=pa_ipc.IpcWriteOptions(compression=codec)))[0])
    assert len(ours[0].metadata) == len(theirs[0].metadata)
    assert masked_header(ours[0]) == masked_header(theirs[0])


def pyarrow_file(pa_batches, schema=None) -> bytes:
    schema = schema if schema is not None else pa_batches[0].schema
    sink = pa.BufferOutputStream()
    with pa_ipc.new_file(sink, schema) as writer:
        for batch in pa_batches:
            writer.write_batch(batch)
    return sink.getvalue().to_pybytes()


PLAIN_SCHEMAS = {
    "int32": pa.schema([("a", pa.int32())]),
    "bool": pa.schema([("b", pa.bool_())]),
    "mixed": pa.schema([("i", pa.int32()), ("f", pa.float64()), ("s", pa.string()),
                        pa.field("n", pa.int64(), nullable=False)]),
    "empty": pa.schema([]),
    # fields whose Schema.fbs default is not 0 (Date, Time and Duration units, Time and Decimal
    # widths): left out only when they equal that default
    "temporal": pa.schema([("d32", pa.date32()), ("d64", pa.date64()), ("t32", pa.time32("s")),
                           ("t64", pa.time64("ns")), ("du", pa.duration("ms")),
                           ("du_s", pa.duration("s")), ("ts", pa.timestamp("us", "UTC"))]),
    "decimal": pa.schema([("d", pa.decimal128(10, 2)), ("e", pa.decimal256(40, 3))]),
    "nested": pa.schema([("l", pa.list_(pa.int8())),
                         ("s", pa.struct([("x", pa.int16()), ("y", pa.string())])),
                         ("m", pa.map_(pa.string(), pa.int32())),
                         ("u", pa.sparse_union([pa.field("a", pa.int8())])),
                         ("f", pa.list_(pa.float32(), 3))]),
    "dictionary": pa.schema([("d", pa.dictionary(pa.int8(), pa.string())),
                             ("o", pa.dictionary(pa.int32(), pa.int64(), ordered=True)),
                             ("l", pa.list_(pa.dictionary(pa.int16(), pa.string())))]),
    "metadata": pa.schema([pa.field("l", pa.list_(pa.int8()), metadata={"fk": "fv"})],
                          metadata={"m": "v", "m2": "vv"}),
}


@pytest.mark.parametrize("name", list(PLAIN_SCHEMAS))
def test_schema_message_equals_pyarrows_bytes(name):
    schema = PLAIN_SCHEMAS[name]
    assert bytes(ipc.serialize_schema(arrowipc.schema(schema))) == schema.serialize().to_pybytes()


@pytest.mark.parametrize("batches", [0, 1, 3])
@pytest.mark.parametrize("form", ["stream", "file"])
def test_uncompressed_stream_and_file_equal_pyarrows_bytes(form, batches):
    """Schema message, batches, end-of-stream marker and footer: the whole output is pyarrow's
    (a file's footer is laid out as pyarrow lays it out, an empty block vector unpadded)."""
    schema = pa.schema([("i", pa.int32()), ("f", pa.float64()), ("s", pa.string())])
    data = [pa.record_batch({"i": pa.array([k, None, 3], pa.int32()),
                             "f": pa.array([0.5, 1.5, float(k)]),
                             "s": pa.array(["x", "yy" * k, None])}) for k in range(batches)]
    if form == "stream":
        assert ours_stream(data, schema) == pyarrow_stream(data, schema)
    else:
        assert ours_file(data, schema) == pyarrow_file(data, schema)


def test_serialized_batch_and_its_size_are_pyarrows():
    batch = pa.record_batch({"a": pa.array([1, None, 3]), "s": pa.array(["x", "yy", None])})
    ours = arrowipc.record_batch(batch)
    assert bytes(ipc.serialize_record_batch(ours)) == batch.serialize().to_pybytes()
    assert ipc.get_record_batch_size(ours) == pa_ipc.get_record_batch_size(batch)
