"""Arrow 0.17 compressed V4 bodies before the format had BodyCompression, naming the codec in the
message's custom metadata ("ARROW:experimental_compression"); each buffer is laid out as the
BUFFER method lays it out. pyarrow still reads such files (Feather V2 files of that release
among them): so does arrowipc, with pyarrow as the oracle. A codec IPC bodies may not use is
refused, naming the message and the codec; read as plain, the buffers would be garbage."""
import struct

import pytest

import arrowipc.ipc as ipc
from arrowipc.errors import ArrowInvalid
from ipc_surgery import (HEADER_RECORD_BATCH, MESSAGE_VERSION, RECORD_BATCH_COMPRESSION,
                         file_frames, split_stream)

pa = pytest.importorskip("pyarrow")

KEY = "ARROW:experimental_compression"


def _table():
    return pa.table({"a": pa.array(range(5000), pa.int64()),
                     "s": pa.array([None if i % 7 == 0 else f"v{i % 50}" for i in range(5000)]),
                     "l": pa.array([[i, i + 1] for i in range(5000)])})


def _as_0_17(frame):
    """A record batch message rewritten in place as Arrow 0.17 wrote it: metadata version V4,
    and no BodyCompression in its RecordBatch (the codec stays named in its custom metadata)."""
    data = frame.data
    struct.pack_into("<h", data, frame.message.field_pos(MESSAGE_VERSION), 3)         # V4
    batch = frame.record_batch()
    slot = batch.vtable + 4 + 2 * RECORD_BATCH_COMPRESSION
    assert batch.field_pos(RECORD_BATCH_COMPRESSION) is not None
    struct.pack_into("<H", data, slot, 0)                                              # absent


def _0_17_bytes(codec_name, form, compression="lz4"):
    """pyarrow's compressed stream or file of _table() with each batch message as 0.17 wrote
    it, the codec named `codec_name` in its custom metadata."""
    table = _table()
    sink = pa.BufferOutputStream()
    opener = pa.ipc.new_stream if form == "stream" else pa.ipc.new_file
    with opener(sink, table.schema,
                options=pa.ipc.IpcWriteOptions(compression=compression)) as w:
        for batch in table.to_batches(max_chunksize=2000):
            w.write_batch(batch, custom_metadata={KEY: codec_name})
    data = bytearray(sink.getvalue().to_pybytes())
    frames = file_frames(data) if form == "file" else split_stream(data)[0]
    batches = [f for f in frames if f.header_type == HEADER_RECORD_BATCH]
    assert len(batches) == 3
    for frame in batches:
        _as_0_17(frame)
    return bytes(data)


@pytest.mark.parametrize("form", ["stream", "file"])
@pytest.mark.parametrize("codec_name,compression", [("LZ4", "lz4"), ("lz4", "lz4"),
                                                    ("ZSTD", "zstd"), ("zstd", "zstd")])
def test_batches_compressed_as_arrow_0_17_did_read_as_pyarrow_reads_them(form, codec_name,
                                                                         compression):
    data = _0_17_bytes(codec_name, form, compression)
    if form == "stream":
        expected, got = pa.ipc.open_stream(data).read_all(), ipc.open_stream(data).read_all()
    else:
        expected, got = pa.ipc.open_file(data).read_all(), ipc.open_file(data).read_all()
    assert expected.equals(_table())            # the oracle reads what was written
    assert got.to_pyarrow().equals(expected)
    for validate in ("none", "full"):
        options = ipc.IpcReadOptions(validate=validate)
        again = (ipc.open_stream(data, options=options) if form == "stream"
                 else ipc.open_file(data, options=options)).read_all()
        assert again.to_pyarrow().equals(expected)


def test_a_projected_read_of_0_17_batches_decompresses_the_chosen_columns():
    data = _0_17_bytes("LZ4", "file")
    options = ipc.IpcReadOptions(included_fields=[1])
    got = ipc.open_file(data, options=options).read_all()
    assert got.to_pyarrow().equals(_table().select(["s"]))


def test_a_0_17_file_from_pyarrows_test_data_reads_as_pyarrow_reads_it():
    import os

    import pyarrow.feather as pfeather

    from arrowipc import feather
    path = os.path.join(os.path.dirname(pa.__file__), "tests", "data", "feather",
                        "v0.17.0.version.2-compression.lz4.feather")
    if not os.path.exists(path):
        pytest.skip("pyarrow's wheel carries no test data")
    assert feather.read_table(path).to_pyarrow().equals(pfeather.read_table(path))


@pytest.mark.parametrize("name", ["SNAPPY", "gzip", "lz4_raw", "LZ4_FRAME", "UNCOMPRESSED",
                                  "nonsense"])
def test_a_codec_ipc_bodies_may_not_use_is_refused_naming_it(name):
    data = _0_17_bytes(name, "stream")
    with pytest.raises(pa.ArrowInvalid):
        pa.ipc.open_stream(data).read_all()             # pyarrow refuses them too
    with pytest.raises(ArrowInvalid,
                       match=rf"message at byte \d+: record batch message body compressed with "
                             rf"Arrow 0.17's experimental compression, named '{name}' in the "
                             rf"message's custom metadata 'ARROW:experimental_compression'; "
                             rf"expected LZ4 or ZSTD"):
        ipc.open_stream(data).read_all()


def _v4_stream(custom_metadata, metadata_version=None):
    table = pa.table({"a": pa.array(range(5), pa.int64())})
    sink = pa.BufferOutputStream()
    options = pa.ipc.IpcWriteOptions(metadata_version=metadata_version or
                                     pa.ipc.MetadataVersion.V4)
    with pa.ipc.new_stream(sink, table.schema, options=options) as w:
        w.write_batch(table.to_batches()[0], custom_metadata=custom_metadata)
    return sink.getvalue().to_pybytes()


def test_other_custom_metadata_and_v5_batches_read_as_before():
    v5 = _v4_stream({KEY: "LZ4"}, pa.ipc.MetadataVersion.V5)
    # only V4 messages carried the experimental scheme (pyarrow looks there only)
    assert pa.ipc.open_stream(v5).read_all().column(0).to_pylist() == list(range(5))
    assert ipc.open_stream(v5).read_all().column(0).to_pylist() == list(range(5))
    # pyarrow 26 refuses any V4 batch whose custom metadata lacks the key ("Only LZ4_FRAME and
    # ZSTD compression allowed": it checks the codec "uncompressed" it found); its body is plain
    other = _v4_stream({"note": "x"})
    with pytest.raises(pa.ArrowInvalid, match="Only LZ4_FRAME and ZSTD"):
        pa.ipc.open_stream(other).read_all()
    assert ipc.open_stream(other).read_all().column(0).to_pylist() == list(range(5))


def _legacy_compressed(buffers):
    """Each body buffer as 0.17 wrote it: its uncompressed length, then an LZ4 frame (empty
    buffers stay empty, as every reader takes them)."""
    import lz4.frame
    out = []
    for b in buffers:
        raw = bytes(memoryview(b)) if b is not None else b""
        out.append((struct.pack("<q", len(raw)), lz4.frame.compress(raw)) if raw else None)
    return out


def test_a_dictionary_batch_compressed_as_arrow_0_17_did_reads_as_pyarrow_reads_it():
    import arrowipc
    from arrowipc.ipc._batch_encode import encode_dictionary_batch, encode_record_batch
    values = pa.array(["alpha", "beta", None, "gamma"] * 300).dictionary_encode()
    table = pa.table({"d": values, "n": pa.array(range(1200), pa.int32())})
    sink = pa.BufferOutputStream()
    v4 = pa.ipc.IpcWriteOptions(metadata_version=pa.ipc.MetadataVersion.V4)
    with pa.ipc.new_stream(sink, table.schema, options=v4):
        pass                                    # the schema message and the end marker
    schema_and_eos = sink.getvalue().to_pybytes()
    ours = arrowipc.table(table)
    marked = {KEY.encode(): b"LZ4"}

    def body(parts, length):
        out = b"".join(bytes(memoryview(p)) for p in parts)
        return out + bytes(length - len(out))

    meta, parts, length = encode_dictionary_batch(0, ours.column(0).chunk(0).data.dictionary,
                                                  False, 8, 3, -1, False, _legacy_compressed,
                                                  custom_metadata=marked)
    dictionary = meta + body(parts, length)
    meta, parts, length = encode_record_batch([c.chunk(0).data for c in ours.columns],
                                              ours.num_rows, 8, 3, marked, -1, False,
                                              _legacy_compressed)
    batch = meta + body(parts, length)
    data = schema_and_eos[:-8] + dictionary + batch + schema_and_eos[-8:]
    expected = pa.ipc.open_stream(data).read_all()
    assert expected.equals(table)
    assert ipc.open_stream(data).read_all().to_pyarrow().equals(expected)
