"""Body compression (issue 4): LZ4_FRAME and ZSTD, read and write, safe on hostile input.

  * the 2.0.0-compression gold files and the compressed ipc-supplement files read correctly;
  * round trips both ways with pyarrow for both codecs across the type set (issue 2 and 3
    types), zero-row batches, all-raw (-1) buffers, mixed raw / compressed buffers, empty
    buffers, dictionary batches (compressed too);
  * hostile input: a 2^60 length prefix is an ArrowInvalid, quickly and without a huge
    allocation (checked under RLIMIT_AS in a subprocess and with tracemalloc); a prefix that
    does not match the frame, truncated and corrupt frames, decompression bombs -> ArrowInvalid;
  * options: invalid codecs raise ValueError naming the allowed values, compression level,
    min_space_savings, use_threads=False; output no larger than pyarrow's.
"""
import functools
import io
import os
import random
import struct
import subprocess
import sys
import textwrap
import tracemalloc

import pytest

pa = pytest.importorskip("pyarrow")
import pyarrow.ipc as pa_ipc  # noqa: E402

import arrowipc  # noqa: E402
from arrowipc import ipc  # noqa: E402
from arrowipc.errors import ArrowInvalid  # noqa: E402

import ipc_surgery as X  # noqa: E402
from ipc_roundtrip import (assert_ours_equal, assert_pa_equal, ours_read, ours_write,  # noqa: E402
                           pa_read, pa_write)
import strategies as S  # noqa: E402
import testdata  # noqa: E402
from test_layouts import ARRAY_CASES  # noqa: E402

CODECS = ["lz4", "zstd"]
CODEC_IDS = {"lz4": 0, "zstd": 1}
FORMS = ["stream", "file"]
REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
COMPRESSION_DIR = testdata.integration_dir("2.0.0-compression")
SUPPLEMENT = testdata.IPC_SUPPLEMENT
SUFFIX = {"stream": ".stream", "file": ".arrow_file"}

# ---------------------------------------------------------------------------------------------
# helpers

def pa_options(codec, **kwargs):
    return pa_ipc.IpcWriteOptions(compression=codec, **kwargs)


def ours_options(codec, **kwargs):
    return ipc.IpcWriteOptions(compression=codec, **kwargs)


def frames_of(data, form="stream"):
    return X.file_frames(data) if form == "file" else X.split_stream(data)[0]


def body_frames(data, form="stream"):
    return [f for f in frames_of(data, form) if f.header_type != X.HEADER_SCHEMA]


def random_bytes(n, seed=0) -> bytes:
    return random.Random(seed).randbytes(n)


# ---------------------------------------------------------------------------------------------
# gold files and supplement files

def compression_stems():
    return sorted(n[: -len(".stream")] for n in os.listdir(testdata.required(COMPRESSION_DIR))
                  if n.endswith(".stream"))


@pytest.mark.parametrize("use_threads", [True, False], ids=["threads", "no_threads"])
@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize("stem", compression_stems())
def test_compression_gold_files(stem, form, use_threads):
    path = os.path.join(COMPRESSION_DIR, stem + SUFFIX[form])
    data = open(path, "rb").read()
    # guard: the file really is compressed with the codec its name says
    codec = CODEC_IDS["lz4" if "lz4" in stem else "zstd"]
    frames = body_frames(data, form)
    assert frames and all(f.codec() == codec for f in frames)
    if "uncompressible" in stem:
        assert any(p == -1 for f in frames for _, p in f.compressed_prefixes())
    theirs_schema, theirs = pa_read(data, form)
    schema, ours = ours_read(path, form, ipc.IpcReadOptions(use_threads=use_threads))
    S.assert_schema_equal(S.to_pa_schema(schema), theirs_schema)
    assert_ours_equal(ours, theirs)


@pytest.mark.parametrize("stem", compression_stems())
def test_compression_gold_files_match_their_json(stem):
    # the JSON next to each file is an oracle without pyarrow
    from arrowipc import integration
    path = os.path.join(COMPRESSION_DIR, stem)
    json_schema, expected = integration.read_json(path + ".json.gz")
    for form in FORMS:
        schema, ours = ours_read(path + SUFFIX[form], form)
        S.assert_schema_equal(S.to_pa_schema(schema), S.to_pa_schema(json_schema))
        assert len(ours) == len(expected)
        for got, want in zip(ours, expected):
            assert S.to_pa_batch(got).equals(S.to_pa_batch(want)), stem


SUPPLEMENT_CASES = [(stem, form) for stem in ("dict_delta_lz4", "dict_delta_zstd") for form in FORMS]


@pytest.mark.parametrize("stem,form", SUPPLEMENT_CASES, ids=[f"{s}.{f}" for s, f in SUPPLEMENT_CASES])
def test_compressed_supplement_dictionary_batches_are_compressed(stem, form):
    path = testdata.required(os.path.join(SUPPLEMENT, stem + SUFFIX[form]))
    data = open(path, "rb").read()
    frames = body_frames(data, form)
    dictionaries = [f for f in frames if f.header_type == X.HEADER_DICTIONARY_BATCH]
    assert len(dictionaries) == 3
    codec = CODEC_IDS["lz4" if "lz4" in stem else "zstd"]
    assert all(f.codec() == codec for f in frames)
    # before any delta holds a null, arrowipc and pyarrow agree batch by batch
    _, ours = ours_read(path, form)
    _, theirs = pa_read(data, form)
    assert len(ours) == len(theirs) == 3
    expected = pa_ipc.open_file(os.path.join(SUPPLEMENT, stem + ".expected.arrow_file")).read_all()
    assert ours[0].column(0).to_pylist() == expected.column("d").to_pylist()[:3]
    assert [b.column(1).to_pylist() for b in ours] == [b.column(1).to_pylist() for b in theirs]


@pytest.mark.parametrize("stem,form", SUPPLEMENT_CASES, ids=[f"{s}.{f}" for s, f in SUPPLEMENT_CASES])
def test_compressed_supplement_decodes_to_expected(stem, form):
    path = testdata.required(os.path.join(SUPPLEMENT, stem + SUFFIX[form]))
    expected = pa_ipc.open_file(os.path.join(SUPPLEMENT, stem + ".expected.arrow_file")).read_all()
    _, ours = ours_read(path, form)
    assert [b.to_pylist() for b in ours] == [b.to_pylist() for b in expected.to_batches()]


# ---------------------------------------------------------------------------------------------
# round trips across the type set

TYPE_CASES = [("issue2", c) for c in S.ISSUE2_CASE_IDS] + [("issue3", c) for c in ARRAY_CASES] + \
    [("dict", "dictionary_string"), ("dict", "dictionary_nested")]


def type_case_batch(kind, case, seed=0, length=40):
    if kind == "issue2":
        return S.make_batch([case], length, seed=seed)
    if kind == "issue3":
        arr = ARRAY_CASES[case](seed)
        return pa.record_batch({case: arr}).slice(0, length)
    if case == "dictionary_string":
        idx = pa.array([None if i % 6 == 1 else (i * 7 + seed) % 5 for i in range(length)], pa.int16())
        return pa.record_batch({case: pa.DictionaryArray.from_arrays(idx, pa.array(["a", "bb", None, "dddd", "e" * 30]))})
    idx = pa.array([(i + seed) % 3 for i in range(length)], pa.uint8())
    values = pa.array([["x", None], [], ["y", "z", "w"]], pa.list_(pa.string()))
    return pa.record_batch({case: pa.DictionaryArray.from_arrays(idx, values)})


TYPE_IDS = [f"{k}-{c}" for k, c in TYPE_CASES]


@pytest.mark.parametrize("codec", CODECS)
@pytest.mark.parametrize("kind,case", TYPE_CASES, ids=TYPE_IDS)
def test_pyarrow_compressed_read_by_arrowipc(kind, case, codec):
    batches = [type_case_batch(kind, case, 1), type_case_batch(kind, case, 1, 0), type_case_batch(kind, case, 1, 33)]
    data = pa_write(batches, "stream", pa_options(codec))
    assert all(f.codec() == CODEC_IDS[codec] for f in body_frames(data))
    _, ours = ours_read(data, "stream")
    assert_ours_equal(ours, batches)


@pytest.mark.parametrize("codec", CODECS)
@pytest.mark.parametrize("kind,case", TYPE_CASES, ids=TYPE_IDS)
def test_arrowipc_compressed_read_by_pyarrow(kind, case, codec):
    batches = [type_case_batch(kind, case, 2), type_case_batch(kind, case, 2, 0), type_case_batch(kind, case, 2, 33)]
    data = ours_write(batches, "stream", ours_options(codec))
    assert all(f.codec() == CODEC_IDS[codec] for f in body_frames(data))
    _, got = pa_read(data, "stream")
    assert_pa_equal(got, batches)
    _, ours = ours_read(data, "stream")
    assert_ours_equal(ours, batches)


@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize("codec", CODECS)
def test_all_types_in_one_compressed_batch_both_ways(codec, form):
    batches = [S.make_batch(S.ISSUE2_CASE_IDS, 500, seed=3), S.make_batch(S.ISSUE2_CASE_IDS, 17, seed=4)]
    _, ours = ours_read(pa_write(batches, form, pa_options(codec)), form)
    assert_ours_equal(ours, batches)
    _, got = pa_read(ours_write(batches, form, ours_options(codec)), form)
    assert_pa_equal(got, batches)


@pytest.mark.parametrize("codec", CODECS)
def test_compressed_slices_written_by_arrowipc(codec):
    full = S.make_batch(["int32", "string", "list", "struct", "bool"], 60, seed=5)
    ours_full = arrowipc.record_batch(full)
    for start, length in ((3, 17), (13, 40), (1, 0)):
        data = ours_write([ours_full.slice(start, length)], "file", ours_options(codec), schema=full.schema)
        _, got = pa_read(data, "file")
        assert_pa_equal(got, [full.slice(start, length)])


# ---------------------------------------------------------------------------------------------
# zero rows, empty buffers, raw (-1) and mixed buffers

@pytest.mark.parametrize("codec", CODECS)
@pytest.mark.parametrize("form", FORMS)
def test_zero_row_batches_both_ways(form, codec):
    batches = [S.make_batch(["int64", "string", "list", "struct", "bool"], 0, seed=6),
               S.make_batch(["int64", "string", "list", "struct", "bool"], 5, seed=7),
               S.make_batch(["int64", "string", "list", "struct", "bool"], 0, seed=8)]
    _, ours = ours_read(pa_write(batches, form, pa_options(codec)), form)
    assert_ours_equal(ours, batches)
    data = ours_write(batches, form, ours_options(codec))
    _, got = pa_read(data, form)
    assert_pa_equal(got, batches)
    # empty buffers take no bytes at all: no 8-byte prefix for a zero-length buffer
    first = body_frames(data, form)[0]
    assert all(n == 0 or n >= 8 for _, _, n in first.buffers())
    assert any(n == 0 for _, _, n in first.buffers())


@pytest.mark.parametrize("codec", CODECS)
def test_empty_buffers_among_compressed_ones(codec):
    # no nulls -> empty validity buffers; empty strings -> empty data buffer; both next to
    # compressed ones
    batch = pa.record_batch({"a": pa.array(range(2000), pa.int64()), "s": pa.array([""] * 2000),
                             "n": pa.array([None, 1] * 1000, pa.int32())})
    data = ours_write([batch], "stream", ours_options(codec))
    frame = body_frames(data)[0]
    lengths = [n for _, _, n in frame.buffers()]
    assert lengths[0] == 0 and lengths[2] == 0 and lengths[4] == 0     # a, s validity; s data
    assert all(p > 0 for _, p in frame.compressed_prefixes())          # the rest compressed
    _, got = pa_read(data, "stream")
    assert_pa_equal(got, [batch])
    _, ours = ours_read(pa_write([batch], "stream", pa_options(codec)), "stream")
    assert_ours_equal(ours, [batch])


def incompressible_batch(n=300, seed=9):
    rng = random.Random(seed)
    return pa.record_batch({
        "r": pa.array([rng.randbytes(rng.randint(20, 60)) for _ in range(n)], pa.binary()),
        "i": pa.array([rng.getrandbits(63) for _ in range(n)], pa.int64()),
        "b": pa.array([rng.randbytes(16) for _ in range(n)], pa.binary(16)),
    })


# buffers: r validity, r offsets, r data, i validity, i values, b validity, b values
RANDOM_DATA_BUFFERS = (2, 4, 6)


@pytest.mark.parametrize("codec", CODECS)
@pytest.mark.parametrize("form", FORMS)
def test_all_raw_buffers(form, codec):
    batch = incompressible_batch()
    data = ours_write([batch], form, ours_options(codec))
    frame = body_frames(data, form)[0]
    buffers = frame.buffers()
    prefix_at = dict(frame.compressed_prefixes())
    # random bytes do not compress: those buffers are stored raw (-1), exactly 8 bytes longer
    raw = [len(batch.column(0).buffers()[2]), 8 * 300, 16 * 300]
    for index, raw_size in zip(RANDOM_DATA_BUFFERS, raw):
        _, off, n = buffers[index]
        assert prefix_at[frame.body_start + off] == -1, index
        assert n == 8 + raw_size
    # whatever is compressed is really smaller than raw
    for _, off, n in buffers:
        prefix = prefix_at.get(frame.body_start + off)
        if prefix is not None and prefix != -1:
            assert n < 8 + prefix
    _, got = pa_read(data, form)
    assert_pa_equal(got, [batch])
    _, ours = ours_read(data, form)
    assert_ours_equal(ours, [batch])


@pytest.mark.parametrize("codec", CODECS)
def test_every_buffer_raw(codec):
    # only random data: nothing compresses, every non-empty buffer is -1
    rng = random.Random(1)
    batch = pa.record_batch({"i": pa.array([rng.getrandbits(64) for _ in range(512)], pa.uint64())})
    data = ours_write([batch], "stream", ours_options(codec))
    prefixes = [p for _, p in body_frames(data)[0].compressed_prefixes()]
    assert prefixes == [-1]
    _, got = pa_read(data, "stream")
    assert_pa_equal(got, [batch])
    _, ours = ours_read(data, "stream")
    assert_ours_equal(ours, [batch])


@pytest.mark.parametrize("codec", CODECS)
@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize("columns", [3, 40])
def test_raw_buffers_written_to_a_path_as_to_memory(tmp_path, form, codec, columns):
    # a path's writer puts the buffers the codec leaves raw at their offsets itself (the rest in
    # the background), or, with many such runs, the whole message in order at once: either way
    # the bytes are those written to memory
    rng = random.Random(columns)
    batch = pa.record_batch({f"r{i}": pa.array([rng.getrandbits(63) for _ in range(300)],
                                               pa.int64()) for i in range(columns)})
    ours_batch = arrowipc.record_batch(batch)
    path = str(tmp_path / "raw.arrow")
    opener = ipc.new_file if form == "file" else ipc.new_stream
    with opener(path, ours_batch.schema, options=ours_options(codec)) as w:
        w.write_batch(ours_batch)
        w.write_batch(ours_batch)
    sink = arrowipc.BufferOutputStream()
    with opener(sink, ours_batch.schema, options=ours_options(codec)) as w:
        w.write_batch(ours_batch)
        w.write_batch(ours_batch)
    assert open(path, "rb").read() == S.as_bytes(sink.getvalue())
    _, got = pa_read(open(path, "rb").read(), form)
    assert_pa_equal(got, [batch, batch])


def zstd_frames(frame: bytes) -> list[int]:
    """The content size of each ZSTD frame in a compressed buffer's bytes, in order."""
    import zstandard
    sizes = []
    while frame:
        sizes.append(zstandard.frame_content_size(frame))
        d = zstandard.ZstdDecompressor().decompressobj()
        d.decompress(frame)
        frame = d.unused_data
    return sizes


def compressed_buffers(data: bytes) -> list[bytes]:
    """The compressed bytes (after the length prefix) of every compressed buffer of a one-batch
    stream's body."""
    frame = body_frames(data)[0]
    out = []
    for _, off, n in frame.buffers():
        pos = frame.body_start + off
        if n and struct.unpack_from("<q", data, pos)[0] >= 0:
            out.append(bytes(data[pos + 8:pos + n]))
    return out


def buffer_frames(data: bytes) -> list[list[int]]:
    """zstd_frames of every compressed buffer of a one-batch stream's body."""
    return [zstd_frames(b) for b in compressed_buffers(data)]


@pytest.mark.parametrize("use_threads", [True, False], ids=["threads", "no_threads"])
def test_large_zstd_buffers_are_compressed_in_pieces_on_threads(use_threads):
    # a buffer larger than a thread's share is cut into pieces compressed on all threads, one
    # ZSTD frame each, put back to back: pyarrow (ZSTD_decompress) reads them as one buffer
    np = pytest.importorskip("numpy")
    n = 3_000_000
    rng = np.random.default_rng(5)
    batch = pa.record_batch({"i": pa.array(np.cumsum(rng.integers(0, 100, n))),
                             "s": pa.array((np.arange(n) % 1000).astype(str))})
    data = ours_write([batch], "stream", ours_options("zstd", use_threads=use_threads))
    sizes = buffer_frames(data)
    assert [sum(s) for s in sizes] == [8 * n, 4 * (n + 1),
                                       sum(len(str(i % 1000)) for i in range(n))]
    if use_threads:
        assert len(sizes[0]) > 1, sizes                 # the largest buffer: several frames
        assert all(f >= 2 << 20 for s in sizes for f in s), sizes
    else:
        assert all(len(s) == 1 for s in sizes), sizes
    _, got = pa_read(data, "stream")
    assert_pa_equal(got, [batch])
    _, ours = ours_read(data, "stream")
    assert_ours_equal(ours, [batch])


@pytest.mark.parametrize("rows, frames", [(4_000_000, [8_000_000] * 4),
                                          (1_500_000, [12_000_000])])
def test_a_zstd_buffer_shrinking_tenfold_is_cut_in_pieces_of_8_mib_on_threads(rows, frames):
    # data that shrinks more than eightfold in its samples loses to small pieces (each frame
    # starts afresh), not to pieces of 8 MiB: 32 MB in four frames, the output no larger; 12 MB
    # (under one and a half pieces) stays one frame, pyarrow's bytes
    np = pytest.importorskip("numpy")
    batch = pa.record_batch({"i": pa.array(np.arange(rows, dtype=np.int64) // 3)})
    ours = ours_write([batch], "stream", ours_options("zstd", use_threads=True))
    assert buffer_frames(ours) == [frames]
    theirs = pa_write([batch], "stream", pa_options("zstd"))
    if len(frames) == 1:
        assert S.as_bytes(ours) == S.as_bytes(theirs)
    assert len(S.as_bytes(ours)) <= len(S.as_bytes(theirs)) * 1.001
    _, got = pa_read(ours, "stream")
    assert_pa_equal(got, [batch])


def lz4_frame_layout(frame: bytes) -> list[tuple[bool, int]]:
    """(content size recorded, blocks) of each LZ4 frame in a compressed buffer's bytes."""
    frames, pos = [], 0
    while pos < len(frame):
        assert struct.unpack_from("<I", frame, pos)[0] == 0x184D2204, pos
        flg = frame[pos + 4]
        sized = bool(flg & 0x08)
        pos += 7 + (8 if sized else 0)
        blocks = 0
        while True:
            size = struct.unpack_from("<I", frame, pos)[0]
            pos += 4
            if size == 0:
                break
            blocks += 1
            pos += (size & 0x7FFFFFFF) + (4 if flg & 0x10 else 0)
        pos += 4 if flg & 0x04 else 0
        frames.append((sized, blocks))
    assert pos == len(frame)
    return frames


def lz4_buffer_layouts(data: bytes) -> list[list[tuple[bool, int]]]:
    return [lz4_frame_layout(b) for b in compressed_buffers(data)]


@pytest.mark.parametrize("use_threads", [True, False], ids=["threads", "no_threads"])
def test_a_large_lz4_buffer_is_compressed_in_pieces_joined_into_one_frame(use_threads):
    # Arrow C++ refuses an LZ4 buffer of several frames: the pieces' blocks go in one frame
    # (no content size in its header), which pyarrow and arrowipc read
    np = pytest.importorskip("numpy")
    rng = np.random.default_rng(5)
    batch = pa.record_batch({"i": pa.array(rng.integers(0, 1000, 4_000_000))})
    data = ours_write([batch], "stream", ours_options("lz4", use_threads=use_threads))
    layouts = lz4_buffer_layouts(data)
    assert all(len(frames) == 1 for frames in layouts), layouts
    [(sized, blocks)] = layouts[0]
    assert sized is not use_threads and blocks >= 32_000_000 // 65536
    _, got = pa_read(data, "stream")
    assert_pa_equal(got, [batch])
    _, ours = ours_read(data, "stream")
    assert_ours_equal(ours, [batch])
    theirs = pa_write([batch], "stream", pa_options("lz4"))
    assert abs(len(S.as_bytes(data)) / len(S.as_bytes(theirs)) - 1) < 0.001


def test_large_incompressible_zstd_buffer_stays_raw_on_threads():
    # the samples of a buffer cut into pieces are taken of the whole buffer first: random bytes
    # are stored raw, not as frames larger than the data
    batch = pa.record_batch({"b": pa.array([random_bytes(8 << 20, 3)], pa.binary())})
    data = ours_write([batch], "stream", ours_options("zstd", use_threads=True))
    prefixes = [p for _, p in body_frames(data)[0].compressed_prefixes()]
    assert prefixes[-1] == -1, prefixes
    _, got = pa_read(data, "stream")
    assert_pa_equal(got, [batch])


@pytest.mark.parametrize("codec", CODECS)
def test_mixed_raw_and_compressed_buffers(codec):
    rng = random.Random(10)
    batch = pa.record_batch({
        "random": pa.array([rng.getrandbits(63) for _ in range(1000)], pa.int64()),
        "zeros": pa.array([0] * 1000, pa.int64()),
        "text": pa.array(["repeated text " * 3] * 1000),
    })
    data = ours_write([batch], "stream", ours_options(codec))
    prefixes = [p for _, p in body_frames(data)[0].compressed_prefixes()]
    assert -1 in prefixes and any(p > 0 for p in prefixes), prefixes
    _, got = pa_read(data, "stream")
    assert_pa_equal(got, [batch])
    _, ours = ours_read(data, "stream")
    assert_ours_equal(ours, [batch])


@pytest.mark.parametrize("codec", CODECS)
def test_gold_uncompressible_raw_buffers_read_with_and_without_threads(codec):
    path = testdata.required(os.path.join(COMPRESSION_DIR, f"generated_uncompressible_{codec}.stream"))
    _, theirs = pa_read(open(path, "rb").read(), "stream")
    for use_threads in (True, False):
        _, ours = ours_read(path, "stream", ipc.IpcReadOptions(use_threads=use_threads))
        assert_ours_equal(ours, theirs)


# ---------------------------------------------------------------------------------------------
# dictionary batches are compressed too

def dictionary_batches():
    def batch(indices, dictionary):
        return pa.record_batch({"d": pa.DictionaryArray.from_arrays(pa.array(indices, pa.int32()),
                                                                    pa.array(dictionary)),
                                "x": pa.array(range(len(indices)), pa.int64())})
    words = [f"word number {i} " * 4 for i in range(50)]
    return [batch([0, 1, None, 2], words[:10]), batch([12, 3], words[:20]), batch([1, 0], words[30:32])]


@pytest.mark.parametrize("codec", CODECS)
def test_arrowipc_compresses_dictionary_batches(codec):
    batches = dictionary_batches()
    data = ours_write(batches, "stream", ours_options(codec, emit_dictionary_deltas=True))
    frames = body_frames(data)
    dictionaries = [f for f in frames if f.header_type == X.HEADER_DICTIONARY_BATCH]
    assert len(dictionaries) == 3
    assert all(f.codec() == CODEC_IDS[codec] for f in dictionaries)
    assert any(p > 0 for f in dictionaries for _, p in f.compressed_prefixes())
    reader = pa_ipc.open_stream(pa.py_buffer(data))
    got = list(reader)
    assert_pa_equal(got, batches)
    assert reader.stats.num_dictionary_deltas == 1 and reader.stats.num_replaced_dictionaries == 1
    _, ours = ours_read(data, "stream")
    assert_ours_equal(ours, batches)


@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize("codec", CODECS)
def test_pyarrow_compressed_dictionary_batches_read_by_arrowipc(codec, form):
    batches = dictionary_batches()
    if form == "file":
        batches = batches[:2]                   # a file takes the delta, not the replacement
    data = pa_write(batches, form, pa_options(codec, emit_dictionary_deltas=True))
    dictionaries = [f for f in body_frames(data, form) if f.header_type == X.HEADER_DICTIONARY_BATCH]
    assert dictionaries and all(f.codec() == CODEC_IDS[codec] for f in dictionaries)
    _, theirs = pa_read(data, form)
    _, ours = ours_read(data, form)
    assert_ours_equal(ours, theirs)


# ---------------------------------------------------------------------------------------------
# hostile input

@functools.lru_cache(maxsize=None)
def hostile_base(codec, form="stream") -> bytes:
    """pyarrow-compressed data: 'a' int64 (compressible), 'r' one large random binary value."""
    batch = pa.record_batch({"a": pa.array(range(1000), pa.int64()),
                             "r": pa.array([random_bytes(600_000, 11)] + [b""] * 999, pa.binary())})
    return pa_write([batch], form, pa_options(codec))


A_VALUES, R_DATA = 1, 4     # buffer indices: a validity, a values, r validity, r offsets, r data


def record_frame(data, form="stream"):
    return [f for f in frames_of(data, form) if f.header_type == X.HEADER_RECORD_BATCH][0]


def buffer_bytes(data, frame, index) -> bytes:
    _, off, n = frame.buffers()[index]
    return bytes(data[frame.body_start + off: frame.body_start + off + n])


def with_prefix(codec, prefix, index=A_VALUES, form="stream") -> bytes:
    data = bytearray(hostile_base(codec, form))
    frame = record_frame(data, form)
    _, off, _ = frame.buffers()[index]
    struct.pack_into("<q", data, frame.body_start + off, prefix)
    return bytes(data)


def with_buffer(codec, content: bytes, index=R_DATA, form="stream") -> bytes:
    data = bytearray(hostile_base(codec, form))
    X.replace_buffer(data, record_frame(data, form), index, content)
    return bytes(data)


def read_everything(data, form="stream", options=None):
    _, batches = ours_read(data, form, options)
    for batch in batches:
        batch.to_pylist() if batch.num_rows < 100 else [c.to_pylist() for c in batch.columns]
    return batches


def test_hostile_base_is_what_we_think():
    for codec in CODECS:
        data = hostile_base(codec)
        frame = record_frame(data)
        prefixes = dict((pos, p) for pos, p in frame.compressed_prefixes())
        assert frame.codec() == CODEC_IDS[codec]
        assert len(frame.buffers()) == 5
        a = buffer_bytes(data, frame, A_VALUES)
        assert struct.unpack_from("<q", a)[0] == 8000
        assert struct.unpack_from("<q", buffer_bytes(data, frame, R_DATA))[0] == 600_000
        assert prefixes
        read_everything(data)       # untouched, it reads


HUGE = 1 << 60


@pytest.mark.parametrize("index", [A_VALUES, R_DATA], ids=["small_buffer", "large_buffer"])
@pytest.mark.parametrize("codec", CODECS)
def test_huge_prefix_is_invalid_without_allocating(codec, index):
    data = with_prefix(codec, HUGE, index)
    tracemalloc.start()
    try:
        with pytest.raises(ArrowInvalid) as info:
            read_everything(data)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 64 << 20, f"peak traced allocation {peak} bytes"
    assert str(HUGE) in str(info.value) or "length" in str(info.value).lower()


@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize("codec", CODECS)
def test_huge_prefix_in_file_and_file_like(codec, form, tmp_path):
    import io
    data = with_prefix(codec, HUGE, A_VALUES, form)
    with pytest.raises(ArrowInvalid):
        read_everything(io.BytesIO(data), form)
    path = tmp_path / "hostile.arrow"
    path.write_bytes(data)
    with pytest.raises(ArrowInvalid):
        read_everything(str(path), form)


RLIMIT_SCRIPT = textwrap.dedent("""
    import resource, sys
    sys.path.insert(0, {repo!r})
    import arrowipc
    from arrowipc import ipc
    from arrowipc.errors import ArrowInvalid
    data = open({path!r}, "rb").read()
    # warm up: the modules, codecs and thread pool a read needs are loaded before the limit
    list(ipc.open_stream(open({clean!r}, "rb").read()))
    def vm_size():
        for line in open("/proc/self/status"):
            if line.startswith("VmSize:"):
                return int(line.split()[1]) * 1024
    limit = vm_size() + ({headroom_mb} << 20)
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    try:
        for batch in ipc.open_stream(data):
            batch.column(0)
    except ArrowInvalid as e:
        print("ArrowInvalid", e)
        sys.exit(0)
    except MemoryError as e:
        print("MemoryError", e)
        sys.exit(3)
    print("no error")
    sys.exit(4)
""")


def run_under_rlimit(data: bytes, clean: bytes, tmp_path, headroom_mb=256):
    path, clean_path = tmp_path / "hostile.stream", tmp_path / "clean.stream"
    path.write_bytes(data)
    clean_path.write_bytes(clean)
    script = RLIMIT_SCRIPT.format(repo=REPO, path=str(path), clean=str(clean_path), headroom_mb=headroom_mb)
    return subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize("prefix", [HUGE, 1 << 40], ids=["2^60", "2^40"])
@pytest.mark.parametrize("codec", CODECS)
def test_huge_prefix_under_address_space_limit(codec, prefix, tmp_path):
    result = run_under_rlimit(with_prefix(codec, prefix, R_DATA), hostile_base(codec), tmp_path)
    assert result.returncode == 0, f"stdout: {result.stdout}\nstderr: {result.stderr}"
    assert result.stdout.startswith("ArrowInvalid")


@pytest.mark.parametrize("codec", CODECS)
def test_prefix_under_the_limit_but_far_beyond_the_frame(codec, tmp_path):
    # 8 GiB claimed by a 600 KB frame: nothing that large should be allocated to find out
    result = run_under_rlimit(with_prefix(codec, 1 << 33, R_DATA), hostile_base(codec), tmp_path)
    assert result.returncode == 0, f"stdout: {result.stdout}\nstderr: {result.stderr}"


@pytest.mark.parametrize("codec", CODECS)
def test_untouched_data_reads_under_address_space_limit(codec, tmp_path):
    # the limit itself leaves room for an honest read of the same data
    result = run_under_rlimit(hostile_base(codec), hostile_base(codec), tmp_path)
    assert result.returncode == 4 and result.stdout.startswith("no error"), result.stdout + result.stderr


@pytest.mark.parametrize("delta", [1, -1, 8, -7999, 1 << 20], ids=["plus1", "minus1", "plus8", "to1", "plus1MiB"])
@pytest.mark.parametrize("codec", CODECS)
def test_prefix_not_matching_the_frame_is_invalid(codec, delta):
    data = with_prefix(codec, 8000 + delta, A_VALUES)
    with pytest.raises(ArrowInvalid):
        read_everything(data)


@pytest.mark.parametrize("codec", CODECS)
def test_zero_prefix_for_a_non_empty_frame_is_invalid(codec):
    with pytest.raises(ArrowInvalid):
        read_everything(with_prefix(codec, 0, A_VALUES))


@pytest.mark.parametrize("prefix", [-2, -(1 << 62)], ids=["minus2", "very_negative"])
@pytest.mark.parametrize("codec", CODECS)
def test_negative_prefix_other_than_raw_marker_is_invalid(codec, prefix):
    with pytest.raises(ArrowInvalid):
        read_everything(with_prefix(codec, prefix, A_VALUES))


@pytest.mark.parametrize("cut", [1, 7, 100, "to_header"], ids=["cut1", "cut7", "cut100", "header_only"])
@pytest.mark.parametrize("codec", CODECS)
def test_truncated_frame_is_invalid(codec, cut):
    original = buffer_bytes(hostile_base(codec), record_frame(hostile_base(codec)), R_DATA)
    content = original[:8 + 11] if cut == "to_header" else original[:-cut]
    with pytest.raises(ArrowInvalid):
        read_everything(with_buffer(codec, content))


@pytest.mark.parametrize("length", [0, 1, 5, 7], ids=lambda n: f"len{n}")
@pytest.mark.parametrize("codec", CODECS)
def test_buffer_shorter_than_its_prefix_is_invalid(codec, length):
    original = buffer_bytes(hostile_base(codec), record_frame(hostile_base(codec)), A_VALUES)
    if length == 0:
        # an empty values buffer for 1000 int64 values: too small once decompressed (it is not)
        with pytest.raises(ArrowInvalid):
            read_everything(with_buffer(codec, b"", A_VALUES))
        return
    with pytest.raises(ArrowInvalid):
        read_everything(with_buffer(codec, original[:length], A_VALUES))


@pytest.mark.parametrize("where", ["magic", "header", "middle", "end"])
@pytest.mark.parametrize("codec", CODECS)
def test_corrupt_frame_is_invalid(codec, where):
    data = bytearray(hostile_base(codec))
    frame = record_frame(data)
    _, off, n = frame.buffers()[A_VALUES]
    start = frame.body_start + off + 8          # the frame, after the length prefix
    if where == "magic":
        data[start:start + 4] = b"\x00\x11\x22\x33"
    elif where == "header":
        data[start + 4:start + 7] = b"\xff\xff\xff"
    elif where == "middle":
        for k in range(start + 12, start + n - 8 - 12):
            data[k] ^= 0xA5
    else:
        data[start + n - 8 - 6:start + n - 8] = b"\xff" * 6
    with pytest.raises(ArrowInvalid):
        read_everything(bytes(data))


def zstd_bomb(megabytes) -> bytes:
    import zstandard
    compressor = zstandard.ZstdCompressor(level=3).compressobj()     # no content size in the header
    chunk = bytes(1 << 20)
    return b"".join(compressor.compress(chunk) for _ in range(megabytes)) + compressor.flush()


def lz4_bomb(megabytes) -> bytes:
    import lz4.frame
    compressor = lz4.frame.LZ4FrameCompressor()
    chunk = bytes(1 << 20)
    return compressor.begin() + b"".join(compressor.compress(chunk) for _ in range(megabytes)) + compressor.flush()


@pytest.mark.parametrize("codec", CODECS)
def test_decompression_bomb_is_bounded_by_its_prefix(codec):
    bomb = zstd_bomb(256) if codec == "zstd" else lz4_bomb(64)
    # the bomb claims 600000 bytes (the binary value needs exactly that many)
    data = with_buffer(codec, struct.pack("<q", 600_000) + bomb, R_DATA)
    tracemalloc.start()
    try:
        with pytest.raises(ArrowInvalid):
            read_everything(data)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 32 << 20, f"peak traced allocation {peak} bytes"


@pytest.mark.parametrize("codec", CODECS)
def test_decompression_bomb_under_address_space_limit(codec, tmp_path):
    bomb = zstd_bomb(512) if codec == "zstd" else lz4_bomb(64)
    data = with_buffer(codec, struct.pack("<q", 600_000) + bomb, R_DATA)
    result = run_under_rlimit(data, hostile_base(codec), tmp_path, headroom_mb=128)
    assert result.returncode == 0, f"stdout: {result.stdout}\nstderr: {result.stderr}"


@pytest.mark.parametrize("codec", CODECS)
def test_raw_marker_with_too_few_bytes_is_invalid(codec):
    # -1 then 100 raw bytes where 1000 int64 values need 8000
    with pytest.raises(ArrowInvalid):
        read_everything(with_buffer(codec, struct.pack("<q", -1) + bytes(100), A_VALUES))


@pytest.mark.parametrize("codec", CODECS)
def test_frame_of_the_other_codec_is_invalid(codec):
    # an LZ4 frame in a ZSTD body (and the reverse), with an honest prefix
    zeros = bytes(600_000)
    if codec == "lz4":
        import zstandard
        frame = zstandard.ZstdCompressor().compress(zeros)
    else:
        import lz4.frame
        frame = lz4.frame.compress(zeros)
    with pytest.raises(ArrowInvalid):
        read_everything(with_buffer(codec, struct.pack("<q", 600_000) + frame, R_DATA))
    # the same frame under its own codec reads: the bytes are fine, the codec is not
    own = with_buffer("zstd" if codec == "lz4" else "lz4", struct.pack("<q", 600_000) + frame, R_DATA)
    (batch,) = read_everything(own)
    assert batch.column(1).to_pylist()[0] == zeros


@pytest.mark.parametrize("codec", CODECS)
def test_hostile_compressed_dictionary_batch_is_invalid(codec):
    data = bytearray(pa_write(dictionary_batches()[:1], "stream", pa_options(codec)))
    frame = [f for f in frames_of(data) if f.header_type == X.HEADER_DICTIONARY_BATCH][0]
    pos, _ = [(p, v) for p, v in frame.compressed_prefixes() if v > 0][0]
    struct.pack_into("<q", data, pos, HUGE)
    with pytest.raises(ArrowInvalid):
        read_everything(bytes(data))


# ---------------------------------------------------------------------------------------------
# the codec packages' Python APIs: the path taken where no codec library loads

@pytest.fixture
def python_codecs(monkeypatch):
    """Reads and writes as on a machine where neither codec library loads."""
    from arrowipc.ipc import compression

    class NoLibraries:
        @staticmethod
        def available(codec):
            return False

    monkeypatch.setattr(compression, "_native", NoLibraries)
    calls = {"compress": 0, "decompress": 0}

    def counted(kind, fn):
        def call(*args):
            calls[kind] += 1
            return fn(*args)
        return call

    monkeypatch.setattr(compression, "_DECOMPRESS", {c: counted("decompress", fn)
                                                     for c, fn in compression._DECOMPRESS.items()})
    make = compression._python_compressor
    monkeypatch.setattr(compression, "_python_compressor",
                        lambda codec, level: counted("compress", make(codec, level)))
    return calls


@pytest.mark.parametrize("use_threads", [True, False], ids=["threads", "no_threads"])
@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize("codec", CODECS)
def test_python_codecs_round_trip_both_ways(codec, form, use_threads, python_codecs):
    whole = S.make_batch(S.ISSUE2_CASE_IDS, 500, seed=5)
    batches = [whole, whole.slice(0, 0), incompressible_batch()]
    read_options = ipc.IpcReadOptions(use_threads=use_threads)
    for batch in batches:
        _, ours = ours_read(pa_write([batch], form, pa_options(codec)), form, read_options)
        assert_ours_equal(ours, [batch])
        written = ours_write([batch], form, ours_options(codec, use_threads=use_threads))
        _, got = pa_read(written, form)
        assert_pa_equal(got, [batch])
    assert python_codecs["compress"] and python_codecs["decompress"]
    # the raw (-1) buffers of the incompressible batch are raw on this path too
    frame = record_frame(ours_write([batches[2]], "stream", ours_options(codec)))
    assert any(value == -1 for _, value in frame.compressed_prefixes())


# Each hostile body and the words of the ArrowInvalid it gets on the Python path (the C path's
# messages are checked above and in tests/untrusted).
PYTHON_PATH_HOSTILE = {
    "huge_prefix": (lambda c: with_prefix(c, HUGE, R_DATA), "more than"),
    "prefix_plus1": (lambda c: with_prefix(c, 8001, A_VALUES), "8001"),
    "prefix_minus1": (lambda c: with_prefix(c, 7999, A_VALUES), "7999"),
    "prefix_far_beyond_frame": (lambda c: with_prefix(c, 1 << 26, R_DATA),
                                "decodes to 600000 bytes but its prefix states 67108864"),
    "prefix_zero": (lambda c: with_prefix(c, 0, A_VALUES), "more than the 0 bytes its prefix"),
    "negative_prefix": (lambda c: with_prefix(c, -2, A_VALUES), "expected -1 or 0.."),
    "truncated": (lambda c: with_buffer(c, buffer_bytes(hostile_base(c), record_frame(hostile_base(c)),
                                                        R_DATA)[:-100]), "ZSTD|LZ4"),
    "short_prefix": (lambda c: with_buffer(c, b"\x01\x02\x03", A_VALUES), "no 8-byte length prefix"),
    "bomb": (lambda c: with_buffer(c, struct.pack("<q", 600_000) + (zstd_bomb(64) if c == "zstd"
                                                                    else lz4_bomb(16)), R_DATA),
             "more than the 600000 bytes"),
}


@pytest.mark.parametrize("case", sorted(PYTHON_PATH_HOSTILE))
@pytest.mark.parametrize("codec", CODECS)
def test_python_codecs_refuse_hostile_bodies(codec, case, python_codecs):
    make, words = PYTHON_PATH_HOSTILE[case]
    data = make(codec)
    with pytest.raises(ArrowInvalid, match=words) as info:
        read_everything(data)
    assert "message at byte" in str(info.value) and "buffer" in str(info.value)


# ---------------------------------------------------------------------------------------------
# options

@pytest.mark.parametrize("bad", ["snappy", "gzip", "brotli", "lz4_raw", ""])
def test_invalid_codec_is_a_value_error_listing_allowed_values(bad):
    with pytest.raises(ValueError) as info:
        ipc.IpcWriteOptions(compression=bad)
    message = str(info.value)
    for allowed in ("lz4", "zstd", "None"):
        assert allowed in message, message
    if isinstance(bad, str) and bad:
        assert bad in message


@pytest.mark.parametrize("bad", [5, 0, 1.5, object()])
def test_codec_of_another_type_is_a_type_error(bad):
    # pyarrow: `options.compression = 0` raises TypeError
    with pytest.raises(TypeError, match="compression must be None, a str or a Codec"):
        ipc.IpcWriteOptions(compression=bad)


@pytest.mark.parametrize("name,codec", [("lz4", 0), ("lz4_frame", 0), ("zstd", 1), ("LZ4", 0), ("ZSTD", 1)])
def test_codec_names(name, codec):
    batch = S.make_batch(["int64", "string"], 100, seed=12)
    data = ours_write([batch], "stream", ipc.IpcWriteOptions(compression=name))
    assert body_frames(data)[0].codec() == codec
    _, got = pa_read(data, "stream")
    assert_pa_equal(got, [batch])


def test_no_compression_writes_no_compression_field():
    batch = S.make_batch(["int64"], 10)
    data = ours_write([batch], "stream", ipc.IpcWriteOptions(compression=None))
    assert body_frames(data)[0].codec() is None


def compressible_batch():
    rng = random.Random(13)
    words = ["alpha", "beta", "gamma", "delta", "epsilon"]
    return pa.record_batch({
        "text": pa.array([" ".join(rng.choice(words) for _ in range(rng.randint(3, 12))) for _ in range(4000)]),
        "ints": pa.array([rng.randint(0, 1000) for _ in range(4000)], pa.int64()),
    })


@pytest.mark.parametrize("codec,low,high", [("zstd", 1, 19), ("lz4", 0, 12)])
def test_compression_level(codec, low, high):
    batch = compressible_batch()
    fast = ours_write([batch], "stream", ours_options(codec, compression_level=low))
    small = ours_write([batch], "stream", ours_options(codec, compression_level=high))
    assert fast != small
    assert len(small) < len(fast)
    for data in (fast, small):
        _, got = pa_read(data, "stream")
        assert_pa_equal(got, [batch])
    # default level: pyarrow reads it, and it is no larger than the fast level would be... for
    # zstd the default is 1 (pyarrow's default too)
    default = ours_write([batch], "stream", ours_options(codec))
    _, got = pa_read(default, "stream")
    assert_pa_equal(got, [batch])


@pytest.mark.parametrize("codec", CODECS)
def test_min_space_savings_stores_raw_below_the_threshold(codec):
    batch = compressible_batch()
    plain = ours_write([batch], "stream", ours_options(codec))
    prefixes = [p for _, p in body_frames(plain)[0].compressed_prefixes()]
    assert any(p > 0 for p in prefixes)         # buffers compress by default
    # no buffer saves 99.9 %: all raw
    strict = ours_write([batch], "stream", ours_options(codec, min_space_savings=0.999))
    assert [p for _, p in body_frames(strict)[0].compressed_prefixes()] == [-1] * len(prefixes)
    _, got = pa_read(strict, "stream")
    assert_pa_equal(got, [batch])


def threshold_batch():
    # a 1000-byte and an 8000-byte values buffer, both very compressible
    return pa.record_batch({"small": pa.array([0] * 1000, pa.int8()), "large": pa.array([0] * 1000, pa.int64())})


@pytest.mark.parametrize("codec", CODECS)
def test_compression_threshold_stores_small_buffers_raw(codec):
    batch = threshold_batch()
    default = ours_write([batch], "stream", ours_options(codec))
    assert [p for _, p in body_frames(default)[0].compressed_prefixes()] == [1000, 8000]
    data = ours_write([batch], "stream", ours_options(codec, compression_threshold=4000))
    frame = body_frames(data)[0]
    assert [p for _, p in frame.compressed_prefixes()] == [-1, 8000]
    assert [n for _, _, n in frame.buffers()][1] == 8 + 1000      # raw: prefix + the 1000 bytes
    _, got = pa_read(data, "stream")
    assert_pa_equal(got, [batch])
    _, ours = ours_read(data, "stream")
    assert_ours_equal(ours, [batch])
    # a threshold above every buffer: nothing is compressed
    data = ours_write([batch], "stream", ours_options(codec, compression_threshold=1 << 20))
    assert [p for _, p in body_frames(data)[0].compressed_prefixes()] == [-1, -1]
    _, got = pa_read(data, "stream")
    assert_pa_equal(got, [batch])


def test_negative_compression_threshold_is_a_value_error():
    with pytest.raises(ValueError):
        ipc.IpcWriteOptions(compression="zstd", compression_threshold=-1)


@pytest.mark.parametrize("codec", CODECS)
def test_use_threads_false_writes_and_reads(codec):
    batches = [S.make_batch(S.ISSUE2_CASE_IDS, 300, seed=14), compressible_batch().slice(0, 0)][:1]
    big = compressible_batch()
    for data_batches in (batches, [big]):
        data = ours_write(data_batches, "stream", ours_options(codec, use_threads=False))
        _, got = pa_read(data, "stream")
        assert_pa_equal(got, data_batches)
        _, ours = ours_read(data, "stream", ipc.IpcReadOptions(use_threads=False))
        assert_ours_equal(ours, data_batches)
        # the same bytes as with threads: compression is deterministic either way
        assert data == ours_write(data_batches, "stream", ours_options(codec, use_threads=True))


NO_THREADS_SCRIPT = textwrap.dedent("""
    import sys, threading, random
    sys.path.insert(0, {repo!r})
    import arrowipc
    from arrowipc import ipc
    rng = random.Random(1)
    values = [rng.randint(0, 100) for _ in range(400_000)]
    batch = arrowipc.record_batch({{"a": arrowipc.array(values, type=arrowipc.int64()),
                                    "b": arrowipc.array(values, type=arrowipc.int64()),
                                    "c": arrowipc.array([str(v) for v in values])}})
    sink = arrowipc.BufferOutputStream()
    options = ipc.IpcWriteOptions(compression={codec!r}, use_threads=False)
    with ipc.new_stream(sink, batch.schema, options=options) as writer:
        writer.write_batch(batch)
    reader = ipc.open_stream(sink.getvalue(), options=ipc.IpcReadOptions(use_threads=False))
    got = reader.read_all()
    assert got.num_rows == 400_000
    assert got.column(2).to_pylist()[:3] == [str(v) for v in values[:3]]
    print(threading.active_count())
""")


@pytest.mark.parametrize("codec", CODECS)
def test_use_threads_false_starts_no_thread(codec):
    script = NO_THREADS_SCRIPT.format(repo=REPO, codec=codec)
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "1", f"threads alive: {result.stdout}"


@functools.lru_cache(maxsize=None)
def size_batches():
    return (S.make_batch(S.ISSUE2_CASE_IDS, 1500, seed=15), S.make_batch(S.ISSUE2_CASE_IDS, 300, seed=16))


@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize("codec", CODECS)
def test_compressed_buffers_no_larger_than_pyarrows(codec, form):
    batches = size_batches()
    theirs = pa_write(batches, form, pa_options(codec))
    ours = ours_write(batches, form, ours_options(codec))
    ours_frames, theirs_frames = body_frames(ours, form), body_frames(theirs, form)
    assert len(ours_frames) == len(theirs_frames)
    total_ours = total_theirs = 0
    for mine, other in zip(ours_frames, theirs_frames):
        # buffer by buffer: no larger than pyarrow's but for the frame header's 8-byte content
        # size field (arrowipc's LZ4 frames record it, pyarrow's do not)
        for (_, _, n_ours), (_, _, n_theirs) in zip(mine.buffers(), other.buffers()):
            assert n_ours <= n_theirs + 8, (n_ours, n_theirs)
            total_ours += n_ours
            total_theirs += n_theirs
    assert total_ours <= total_theirs, (total_ours, total_theirs)


@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize("codec", CODECS)
def test_output_no_larger_than_pyarrows_at_8_byte_alignment(codec, form):
    batches = size_batches()
    theirs = pa_write(batches, form, pa_options(codec))
    ours = ours_write(batches, form, ours_options(codec, alignment=8))
    # within a few bytes of framing per message (flatbuffer layouts differ slightly)
    assert len(ours) <= len(theirs) + 16 * len(frames_of(ours, form)), (len(ours), len(theirs))


@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize("codec", CODECS)
def test_output_no_larger_than_pyarrows_with_default_options(codec, form):
    batches = size_batches()
    theirs = pa_write(batches, form, pa_options(codec))
    ours = ours_write(batches, form, ours_options(codec))
    assert len(ours) <= len(theirs) + 16 * len(frames_of(ours, form)), (len(ours), len(theirs))


# ---------------------------------------------------------------------------------------------
# windows: consecutive compressed batches of in-memory input decompress in one parallel run

@functools.lru_cache(maxsize=None)
def window_batches(n=6, rows=3000):
    """Batches with compressible and incompressible buffers, nulls, strings and lists."""
    out = []
    for i in range(n):
        rnd = random.Random(40 + i)
        ints = [rnd.randrange(-(1 << 62), 1 << 62) for _ in range(rows)]
        out.append(pa.record_batch({
            "seq": pa.array(range(i * rows, (i + 1) * rows), pa.int64()),
            "noise": pa.array(ints, pa.int64()),
            "maybe": pa.array([None if k % 7 == 0 else k * 0.5 for k in range(rows)]),
            "s": pa.array([f"v{rnd.randrange(50)}" for _ in range(rows)]),
            "l": pa.array([[k, k + 1] if k % 5 else None for k in range(rows)], pa.list_(pa.int32())),
        }))
    return tuple(out)


def assert_same_batches(got, expected):
    assert len(got) == len(expected)
    for g, e in zip(got, expected):
        assert pa.record_batch(g).equals(e)


def iterate(data, form):
    """Every batch through the readers' iteration (the windowed path)."""
    if form == "stream":
        return list(ipc.open_stream(data))
    return list(ipc.open_file(data))


def batches_before_error(reader, match) -> list:
    """The batches a reader hands out before raising an ArrowInvalid matching `match`."""
    got = []
    with pytest.raises(ArrowInvalid, match=match):
        for batch in reader:
            got.append(batch)
    return got


def corrupt_batch_frame(data, form, batch_index):
    """`data` with the magic number of the first compressed frame of record batch
    `batch_index` damaged; returns (bytes, that message's offset)."""
    data = bytearray(data)
    frame = [f for f in frames_of(data, form) if f.header_type == X.HEADER_RECORD_BATCH][batch_index]
    for pos, prefix in frame.compressed_prefixes():
        if prefix > 0:
            for k in range(pos + 8, pos + 12):
                data[k] ^= 0x5A
            return bytes(data), frame.start
    raise AssertionError("no compressed buffer in that batch")


@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize("codec", CODECS)
def test_windowed_iteration_reads_every_batch_in_order(codec, form):
    batches = window_batches()
    data = pa_write(batches, form, pa_options(codec))
    got = iterate(data, form)
    assert_same_batches(got, batches)
    reader = ipc.open_stream(data) if form == "stream" else ipc.open_file(data)
    list(reader)
    assert reader.stats.num_record_batches == len(batches)


@pytest.mark.parametrize("codec", CODECS)
def test_windowed_stream_keeps_custom_metadata_per_batch(codec):
    batches = window_batches(4)
    sink = pa.BufferOutputStream()
    with pa_ipc.new_stream(sink, batches[0].schema, options=pa_options(codec)) as writer:
        for i, b in enumerate(batches):
            writer.write_batch(b, custom_metadata={"i": str(i)})
    reader = ipc.open_stream(sink.getvalue().to_pybytes())
    got = list(reader.iter_batches_with_custom_metadata())
    assert [m[b"i"] for _, m in got] == [b"0", b"1", b"2", b"3"]
    assert_same_batches([b for b, _ in got], batches)


@pytest.mark.parametrize("codec", CODECS)
def test_leaving_a_window_early_loses_no_batch(codec):
    """The batches a window decoded ahead are handed out by the next read, whichever API."""
    batches = window_batches(5)
    reader = ipc.open_stream(pa_write(batches, "stream", pa_options(codec)))
    first = next(iter(reader))
    second = reader.read_next_batch()
    third, meta = reader.read_next_batch_with_custom_metadata()
    rest = list(reader)
    assert_same_batches([first, second, third] + rest, batches)
    with pytest.raises(StopIteration):
        reader.read_next_batch()


@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize("codec", CODECS)
def test_bad_frame_in_a_window_comes_after_the_good_batches(codec, form):
    batches = window_batches(5)
    data, offset = corrupt_batch_frame(pa_write(batches, form, pa_options(codec)), form, 2)
    reader = ipc.open_stream(data) if form == "stream" else ipc.open_file(data)
    got = batches_before_error(reader, f"message at byte {offset}: buffer \\d+: corrupt "
                                       f"{'LZ4_FRAME' if codec == 'lz4' else 'ZSTD'} data")
    assert_same_batches(got, list(batches[:2]))


@pytest.mark.parametrize("codec", CODECS)
def test_truncated_compressed_stream_yields_every_complete_batch_then_raises(codec):
    batches = window_batches(5)
    data = pa_write(batches, "stream", pa_options(codec))
    frames = [f for f in frames_of(data) if f.header_type == X.HEADER_RECORD_BATCH]
    cut = frames[3].body_start + frames[3].body_len // 2
    got = batches_before_error(ipc.open_stream(data[:cut]), "truncated")
    assert_same_batches(got, list(batches[:3]))


@pytest.mark.parametrize("codec", CODECS)
def test_uncompressed_and_compressed_batches_interleaved(codec):
    """A stream whose batches switch compression on and off (legal: it is per message)."""
    batches = window_batches(4)
    plain = pa_write(list(batches[:2]), "stream")
    packed = pa_write(batches[2:], "stream", pa_options(codec))
    # splice: schema + 2 plain batches + 2 compressed batches + EOS
    p_frames, c_frames = X.split_stream(plain)[0], X.split_stream(packed)[0]
    body = lambda data, f: data[f.start:f.body_start + f.body_len]  # noqa: E731
    spliced = (body(plain, p_frames[0]) + body(packed, c_frames[1]) + body(plain, p_frames[1])
               + body(packed, c_frames[2]) + body(plain, p_frames[2]) + b"\xff\xff\xff\xff\x00\x00\x00\x00")
    got = list(ipc.open_stream(spliced))
    assert_same_batches(got, [batches[2], batches[0], batches[3], batches[1]])


def test_zstd_frames_are_byte_identical_to_pyarrows():
    """The C path loads the libzstd pyarrow bundles (from the zstandard package), so frames
    match pyarrow's byte for byte."""
    batch = size_batches()[0]
    theirs = body_frames(pa_write([batch], "stream", pa_options("zstd")))[0]
    ours = body_frames(ours_write([batch], "stream", ours_options("zstd")))[0]
    same = 0
    for (_, o_off, o_n), (_, t_off, t_n) in zip(ours.buffers(), theirs.buffers()):
        mine = ours.data[ours.body_start + o_off: ours.body_start + o_off + o_n]
        other = theirs.data[theirs.body_start + t_off: theirs.body_start + t_off + t_n]
        if mine[:8] != b"\xff" * 8 and o_n:          # pyarrow keeps frames arrowipc stores raw
            assert bytes(mine) == bytes(other)
            same += 1
    assert same >= 5


def test_codec_libraries_loaded():
    from arrowipc.ipc import compression
    import zstandard
    native = compression._native()
    assert native.available(0) and native.available(1)
    major, minor, patch = zstandard.ZSTD_VERSION
    assert native.version(1) == major * 10000 + minor * 100 + patch


def window_sizes(monkeypatch):
    """The number of batches each window decodes, recorded as the readers run."""
    from arrowipc.ipc.reader import MessageDecoder
    sizes = []
    original = MessageDecoder.read_record_batch_window

    def spy(self, *args, **kwargs):
        out = original(self, *args, **kwargs)
        sizes.append(len(out))
        return out

    monkeypatch.setattr(MessageDecoder, "read_record_batch_window", spy)
    return sizes


@pytest.mark.parametrize("bounds,expected", [(None, [5]), ({"WINDOW_MESSAGES": 2}, [2, 2, 1]),
                                             ({"WINDOW_BYTES": 1}, [1, 1, 1, 1, 1])],
                         ids=["one_window", "two_messages", "one_byte"])
@pytest.mark.parametrize("form", FORMS)
def test_compressed_in_memory_batches_share_windows_within_bounds(form, bounds, expected, monkeypatch):
    from arrowipc.ipc import reader as reader_module
    for name, value in (bounds or {}).items():
        monkeypatch.setattr(reader_module, name, value)
    sizes = window_sizes(monkeypatch)
    batches = window_batches(5)
    for codec in CODECS:
        sizes.clear()
        assert_same_batches(iterate(pa_write(batches, form, pa_options(codec)), form), batches)
        assert sizes == expected


@pytest.mark.parametrize("codec", CODECS)
@pytest.mark.parametrize("form", FORMS)
def test_pyarrow_written_path_of_small_batches_reads_in_windows(form, codec, tmp_path, monkeypatch):
    """What users read: a file pyarrow wrote, opened by path, many small batches (every frame
    compressed, none with a -1 marker, as pyarrow writes them): decoded 64 batches a window."""
    sizes = window_sizes(monkeypatch)
    batches = window_batches(100, rows=40)
    path = tmp_path / "pyarrow.arrow"
    path.write_bytes(pa_write(batches, form, pa_options(codec)))
    assert_same_batches(iterate(path, form), batches)
    assert sizes == [64, 36]


@pytest.mark.parametrize("form", FORMS)
def test_windowed_read_with_projection(form):
    batches = window_batches(4)
    data = pa_write(batches, form, pa_options("zstd"))
    options = ipc.IpcReadOptions(included_fields=[3, 1])
    reader = ipc.open_stream(data, options=options) if form == "stream" else ipc.open_file(data, options=options)
    got = list(reader)
    assert reader.schema.names == ["noise", "s"]
    assert_same_batches(got, [b.select(["noise", "s"]) for b in batches])


@pytest.mark.parametrize("codec", CODECS)
def test_a_projected_read_of_a_path_decompresses_each_fetch_in_one_window(codec, tmp_path,
                                                                          monkeypatch):
    """A projection read in ranges (a file not read whole): the compressed batches fetched
    together (at most WINDOW_MESSAGES) decompress in one parallel run, not one run per batch."""
    from arrowipc.ipc import paths, reader as reader_module
    monkeypatch.setattr(paths, "RANGED_MIN_BATCH_BYTES", 0)       # never read whole
    monkeypatch.setattr(reader_module, "WINDOW_MESSAGES", 3)
    sizes = window_sizes(monkeypatch)
    batches = window_batches(5)
    path = tmp_path / "projected.arrow"
    path.write_bytes(pa_write(batches, "file", pa_options(codec)))
    reader = ipc.open_file(str(path), options=ipc.IpcReadOptions(included_fields=[3, 1]))
    got = list(reader)
    assert_same_batches(got, [b.select(["noise", "s"]) for b in batches])
    assert sizes == [3, 2]


@pytest.mark.parametrize("form", FORMS)
def test_windowed_full_validation_raises_at_the_bad_batch(form):
    """validate="full" checks each batch as it is decoded; in a window the batches before a bad
    one are still handed out first."""
    batches = list(window_batches(4))
    bad = pa.record_batch({k: batches[2].column(k) for k in batches[2].schema.names if k != "s"}
                          | {"s": pa.Array.from_buffers(pa.string(), 2, [None, pa.py_buffer(
                              struct.pack("<3i", 0, 1, 2)), pa.py_buffer(b"\xff\xfe")])
                             .take(pa.array([0] * batches[2].num_rows))})
    bad = bad.select(batches[0].schema.names)
    data = pa_write(batches[:2] + [bad] + batches[3:], form, pa_options("zstd"))
    options = ipc.IpcReadOptions(validate="full")
    reader = ipc.open_stream(data, options=options) if form == "stream" else ipc.open_file(data, options=options)
    got = batches_before_error(reader, "UTF-8")
    assert_same_batches(got, batches[:2])


# ---------------------------------------------------------------------------------------------
# pipelined path writes: compress n+1 while writing n

def large_compressible_batch(rows, seed):
    """A batch that compresses to over 1 MiB (its writes go to the background)."""
    import numpy as np
    rng = np.random.default_rng(seed)
    return arrowipc.record_batch({"a": rng.integers(0, 1 << 20, rows), "b": np.arange(rows) % 1000})


@pytest.mark.parametrize("how", ["write_batch", "write_table"])
@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize("codec", CODECS)
def test_pipelined_path_write_round_trips(codec, form, how, tmp_path):
    batches = [large_compressible_batch(400_000, seed) for seed in range(4)]
    path = tmp_path / "out"
    opener = ipc.new_stream if form == "stream" else ipc.new_file
    with opener(path, batches[0].schema, options=ours_options(codec)) as writer:
        if how == "write_batch":
            for b in batches:
                writer.write_batch(b)
        else:
            writer.write_table(arrowipc.Table.from_batches(batches))
    data = path.read_bytes()
    expected = pa.Table.from_batches([pa.record_batch(b) for b in batches])
    reader = pa_ipc.open_stream(data) if form == "stream" else pa_ipc.open_file(data)
    assert reader.read_all().equals(expected)
    assert len(body_frames(data, form)) == 4


@pytest.mark.parametrize("codec", CODECS)
def test_write_batch_returns_after_the_callers_raw_buffers_are_written(codec, tmp_path):
    """A buffer stored raw is the caller's memory: write_batch has sent it when it returns, so
    reusing that memory for the next batch does not change what was written."""
    import numpy as np
    values = np.frombuffer(random_bytes(4 << 20, seed=3), dtype=np.int64).copy()
    expected = values.copy()
    with ipc.new_stream(tmp_path / "out", arrowipc.schema([("v", arrowipc.int64())]),
                        options=ours_options(codec)) as writer:
        writer.write_batch(arrowipc.record_batch([arrowipc.array(values)], names=["v"]))
        values[:] = 0                            # the caller reuses its buffer at once
        writer.write_batch(arrowipc.record_batch([arrowipc.array(values)], names=["v"]))
    got = pa_ipc.open_stream((tmp_path / "out").read_bytes()).read_all().column("v")
    assert got.chunk(0).to_numpy().tolist() == expected.tolist()
    assert not got.chunk(1).to_numpy().any()


@pytest.mark.parametrize("codec", CODECS)
def test_failed_background_write_raises_and_publishes_nothing(codec, tmp_path, monkeypatch):
    import errno
    real = os.writev

    def full_disk(fd, parts):
        if sum(len(p) for p in parts) >= 1 << 20:
            raise OSError(errno.ENOSPC, "No space left on device")
        return real(fd, parts)

    monkeypatch.setattr(os, "writev", full_disk)
    path = tmp_path / "out"
    batch = large_compressible_batch(400_000, 1)
    with pytest.raises(OSError, match="No space left"):
        with ipc.new_file(path, batch.schema, options=ours_options(codec)) as writer:
            writer.write_batch(batch)
            writer.write_batch(batch)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("codec", CODECS)
def test_large_incompressible_buffer_is_stored_raw_without_a_full_pass(codec):
    """From 1 MiB on, spread samples decide: none shrinks, the buffer is stored raw (as it
    would be after a full pass); one compressible region is enough to compress it all."""
    import numpy as np
    noise = np.frombuffer(random_bytes(4 << 20, seed=5), dtype=np.int64)
    half = noise.copy()
    half[len(half) // 2:] = 7                  # the second half compresses
    batch = arrowipc.record_batch({"noise": noise, "half": half})
    data = ours_write([batch], "stream", ours_options(codec))
    (frame,) = body_frames(data)
    sizes = {n: prefix for (_, prefix), (_, _, n) in
             zip(frame.compressed_prefixes(), [b for b in frame.buffers() if b[2]])}
    raw_len, packed_len = sorted(sizes)[::-1]
    assert raw_len == 8 + noise.nbytes and sizes[raw_len] == -1
    assert sizes[packed_len] == half.nbytes and packed_len < half.nbytes * 0.75
    _, got = pa_read(data, "stream")
    assert got[0].column(0).to_numpy().tolist() == noise.tolist()
    assert got[0].column(1).to_numpy().tolist() == half.tolist()


@pytest.mark.parametrize("codec", CODECS)
def test_raw_buffers_are_written_before_write_batch_returns(codec, tmp_path):
    """A batch with incompressible data among compressible data, to a path: its raw buffer (the
    caller's memory) is written at its offset before write_batch returns, the writer's own bytes
    in the background, so reusing the caller's memory at once is safe."""
    import numpy as np
    noise = np.frombuffer(random_bytes(1 << 20, seed=4), dtype=np.int64).copy()
    expected = noise.copy()
    rows = len(noise)
    rng = np.random.default_rng(2)
    batch = arrowipc.record_batch({"noise": noise, "a": rng.integers(0, 1 << 20, rows),
                                   "b": rng.integers(0, 1 << 20, rows),
                                   "c": rng.integers(0, 1 << 20, rows)})
    with ipc.new_stream(tmp_path / "out", batch.schema, options=ours_options(codec)) as writer:
        writer.write_batch(batch)
        assert writer._sink._pending is not None          # the write outlived write_batch
        noise[:] = 0
    got = pa_ipc.open_stream((tmp_path / "out").read_bytes()).read_all()
    assert got.column("noise").to_numpy().tolist() == expected.tolist()
    assert got.column("a").to_numpy().tolist() == batch.column(1).to_numpy().tolist()


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_background_writes_work_in_a_forked_child(tmp_path):
    """A child forked after the parent wrote in the background starts its own writer thread."""
    batch = large_compressible_batch(400_000, 3)
    with ipc.new_stream(tmp_path / "parent", batch.schema, options=ours_options("lz4")) as w:
        w.write_batch(batch)
    pid = os.fork()
    if pid == 0:
        status = 1
        try:
            with ipc.new_stream(tmp_path / "child", batch.schema, options=ours_options("lz4")) as w:
                w.write_batch(batch)
            status = 0
        finally:
            os._exit(status)
    deadline = 60
    import time
    while deadline > 0:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            break
        time.sleep(0.1)
        deadline -= 0.1
    else:
        os.kill(pid, 9)
        os.waitpid(pid, 0)
        pytest.fail("the forked child's background write never finished")
    assert os.waitstatus_to_exitcode(status) == 0
    got = pa_ipc.open_stream((tmp_path / "child").read_bytes()).read_all()
    assert got.equals(pa_ipc.open_stream((tmp_path / "parent").read_bytes()).read_all())


def mixed_raw_batches(rows, count):
    """Batches mixing buffers stored raw (noise) with compressed ones, in several runs."""
    import numpy as np
    rng = np.random.default_rng(9)
    return [arrowipc.record_batch({
        "noise": np.frombuffer(random_bytes(rows * 8, seed=10 + i), dtype=np.int64),
        "a": rng.integers(0, 1 << 10, rows),
        "more_noise": np.frombuffer(random_bytes(rows * 4, seed=20 + i), dtype=np.int32),
        "s": arrowipc.array([f"v{j % 97}" for j in range(rows)]),
        "b": rng.integers(0, 1 << 10, rows) % 3 == 0}) for i in range(count)]


@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize("codec", CODECS)
def test_split_path_write_is_the_in_memory_write_byte_for_byte(codec, form, tmp_path):
    """Raw buffers written at their offsets now and the rest in the background leave the very
    bytes the in-memory sink gets. (A file writer's temporary file only: a stream written
    through to its path is written in order, so a reader following it never meets a hole.)"""
    batches = mixed_raw_batches(300_000, 3)
    path = tmp_path / "out"
    opener = ipc.new_stream if form == "stream" else ipc.new_file
    with opener(path, batches[0].schema, options=ours_options(codec)) as writer:
        for b in batches:
            writer.write_batch(b)
            if form == "file":
                assert writer._sink._pending is not None   # the writer's own bytes, in flight
            else:
                assert not writer._sink.positional
    assert path.read_bytes() == ours_write(batches, form, ours_options(codec))
    assert any(prefix == -1 for f in body_frames(path.read_bytes(), form)
               for _, prefix in f.compressed_prefixes())


@pytest.mark.parametrize("codec", CODECS)
def test_split_path_write_finishes_short_writes(codec, tmp_path, monkeypatch):
    """pwritev may write less than asked: the rest follows at the right offsets."""
    real = os.pwritev
    calls = []

    def short(fd, parts, offset):
        first = memoryview(parts[0])
        calls.append(offset)
        if first.nbytes > 1:                                # half of the first part only
            return real(fd, [first[:first.nbytes // 2]], offset)
        return real(fd, parts, offset)

    monkeypatch.setattr(os, "pwritev", short)
    batches = mixed_raw_batches(200_000, 2)
    with ipc.new_file(tmp_path / "out", batches[0].schema, options=ours_options(codec)) as w:
        for b in batches:
            w.write_batch(b)
    assert len(calls) > 4
    assert (tmp_path / "out").read_bytes() == ours_write(batches, "file", ours_options(codec))


@pytest.mark.parametrize("in_background", [True, False], ids=["own_bytes", "raw_buffers"])
@pytest.mark.parametrize("codec", CODECS)
def test_failed_split_write_raises_and_publishes_nothing(codec, in_background, tmp_path,
                                                         monkeypatch):
    import errno
    import threading
    real = os.pwritev
    main = threading.main_thread()

    def full_disk(fd, parts, offset):
        if (threading.current_thread() is not main) == in_background:
            raise OSError(errno.ENOSPC, "No space left on device")
        return real(fd, parts, offset)

    monkeypatch.setattr(os, "pwritev", full_disk)
    batch = mixed_raw_batches(200_000, 1)[0]
    with pytest.raises(OSError, match="No space left"):
        with ipc.new_file(tmp_path / "out", batch.schema, options=ours_options(codec)) as writer:
            writer.write_batch(batch)
            writer.write_batch(batch)
    assert list(tmp_path.iterdir()) == []


# ---------------------------------------------------------------------------------------------
# a corrupt header after good compressed batches (issue 32, F5)

def with_bad_header(data, form, index):
    """`data` with record batch `index`'s RecordBatch table made undecodable (its vtable puts
    field 0, the length, 65520 bytes into the table); framing the message still succeeds."""
    out = bytearray(data)
    frames = [f for f in frames_of(data, form) if f.header_type == X.HEADER_RECORD_BATCH]
    table = frames[index].record_batch()
    struct.pack_into("<H", out, table.vtable + 4, 0xFFF0)
    return bytes(out)


def batches_then_error(read):
    """([batch as pyarrow], the exception) of iterating `read()`."""
    got = []
    with pytest.raises(Exception) as e:
        for batch in read():
            got.append(S.to_pa_batch(batch) if not isinstance(batch, pa.RecordBatch) else batch)
    return got, e.value


@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize("codec", CODECS)
@pytest.mark.parametrize("n, bad", [(10, 6), (80, 70), (3, 0)])
def test_batches_before_a_corrupt_compressed_header_are_yielded_then_the_error(codec, form, n,
                                                                                bad):
    batches = [pa.record_batch({"a": pa.array(range(i, i + 50), pa.int64()),
                                "s": pa.array([str(k) for k in range(50)])}) for i in range(n)]
    data = with_bad_header(pa_write(batches, form, pa_options(codec)), form, bad)
    if form == "stream":
        expected, pa_error = batches_then_error(lambda: pa_ipc.open_stream(data))
        readers = [lambda: ipc.open_stream(data), lambda: ipc.open_stream(pa.BufferReader(data)),
                   lambda: ipc.open_stream(data).iter_batches_with_custom_metadata()]
    else:
        file = pa_ipc.open_file(data)
        expected, pa_error = batches_then_error(
            lambda: (file.get_batch(i) for i in range(file.num_record_batches)))
        readers = [lambda: ipc.open_file(data), lambda: ipc.open_file(pa.BufferReader(data))]
    assert len(expected) == bad and isinstance(pa_error, OSError)      # pyarrow's behaviour
    for read in readers:
        got, error = batches_then_error(
            lambda: (item.batch if isinstance(item, tuple) else item for item in read()))
        assert isinstance(error, ArrowInvalid), error
        assert "flatbuffer RecordBatch" in str(error)
        assert len(got) == bad and all(g.equals(e) for g, e in zip(got, expected))


def test_decompressed_buffers_share_pooled_blocks():
    # Outputs of one run are carved from shared blocks (pooled, so the next read reuses them
    # instead of page-faulting fresh memory in); each keeps its bytes and zeroed padding, and
    # an output larger than a block gets one of its own.
    import ctypes
    import lz4.frame

    from arrowipc._core.buffer import exporter_of
    from arrowipc.ipc.compression import _native
    from arrowipc.ipc.format import CODEC_LZ4_FRAME
    _codecs = _native()            # the C codecs, their libraries loaded
    rng = random.Random(7)
    raws = [bytes(rng.randrange(4) for _ in range(n)) for n in (1000, 77, 300_000, 5)]
    raws.append(bytes(9 << 20))                          # larger than a block
    srcs = [arrowipc.py_buffer(lz4.frame.compress(r)) for r in raws]
    outs = _codecs.decompress_many([CODEC_LZ4_FRAME] * len(raws), srcs, [len(r) for r in raws],
                                   list(range(len(raws))), ["test"] * len(raws), 2)
    assert [o.to_pybytes() for o in outs] == raws
    owners = [exporter_of(o) for o in outs]
    assert all(owner is owners[0] for owner in owners[:4])
    assert owners[4] is not owners[0]
    for o in outs[:4]:
        pad = (-o.size) % 64
        assert ctypes.string_at(o.address + o.size, pad) == bytes(pad)


def test_compressed_buffers_share_pooled_blocks():
    import lz4.frame

    from arrowipc._core.buffer import exporter_of
    from arrowipc.ipc.compression import _native
    from arrowipc.ipc.format import CODEC_LZ4_FRAME
    _codecs = _native()
    raws = [bytes(range(256)) * 40, b"ab" * 5000, bytes(300_000)]
    packed = _codecs.compress_all(CODEC_LZ4_FRAME, 0, raws, 2)
    assert [lz4.frame.decompress(p.to_pybytes()) for p in packed] == raws
    assert exporter_of(packed[0]) is exporter_of(packed[1]) is exporter_of(packed[2])


@pytest.mark.parametrize("codec", ["lz4", "zstd"])
@pytest.mark.parametrize("fmt", ["stream", "file"])
def test_metadata_v4_compressed_bodies_are_read_by_their_header_as_pyarrow_cannot(codec, fmt):
    """pyarrow 26 writes metadata-V4 batches with BodyCompression, as we do, but its reader looks
    for a V4 body's codec only in Arrow 0.17's custom metadata and reads the compressed bytes as
    values (docs/pyarrow-compat.md). arrowipc reads both writers' bytes by their header."""
    table = pa.table({"x": pa.array([1, 2, 3, None, 5, 6, 7, 8, 9] * 50, pa.uint32()),
                      "s": pa.array(["a", None, "ccc"] * 150)})
    written = {}
    for name, mod, v4 in [("pyarrow", pa.ipc, pa.ipc.MetadataVersion.V4),
                          ("arrowipc", ipc, ipc.MetadataVersion.V4)]:
        sink = io.BytesIO()
        opts = mod.IpcWriteOptions(compression=codec, metadata_version=v4)
        with getattr(mod, f"new_{fmt}")(sink, table.schema, options=opts) as w:
            w.write_table(table, max_chunksize=100)
        written[name] = sink.getvalue()
    for data in written.values():
        ours = getattr(ipc, f"open_{fmt}")(data).read_all()
        assert pa.table(ours).equals(table)
        assert all(m.metadata_version == ipc.MetadataVersion.V4
                   for m in ipc.MessageReader.open_stream(data[8:] if fmt == "file" else data))
    theirs = getattr(pa.ipc, f"open_{fmt}")(written["pyarrow"]).read_all()
    assert not theirs.equals(table)      # pyarrow's reader on pyarrow's own bytes
