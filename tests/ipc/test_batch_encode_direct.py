"""Record batch headers and compressed bodies encoded straight from the flattened batch.

- flattening keeps field nodes and variadic counts as C arrays (read back as lists on demand);
- a compressed body is packed by one C call: frames written back to back into one block of the
  writer's own memory, so consecutive compressed buffers are one gather part, and buffers stored
  raw are still the caller's memory, zero-copy;
- the writers encode without per-buffer span tuples (MessageEncoder(spans=False));
- whichever path packs a body (one batch, a window of batches, one thread or several), the
  bytes are the same, and pyarrow reads them.
"""
import threading

import numpy as np
import pytest

pa = pytest.importorskip("pyarrow")

import arrowipc  # noqa: E402
from arrowipc import ipc  # noqa: E402
from arrowipc._core.arraydata import ArrayData  # noqa: E402
from arrowipc._core.buffer import py_buffer  # noqa: E402
from arrowipc.errors import ArrowInvalid  # noqa: E402
from arrowipc.ipc._batch_decode import decode_record_batch_header  # noqa: E402
from arrowipc.ipc._batch_encode import flatten_columns  # noqa: E402
from arrowipc.ipc._framing import decode_message  # noqa: E402
from arrowipc.ipc.compression import RAW_PREFIX  # noqa: E402
from arrowipc.ipc.writer import MessageEncoder  # noqa: E402
from arrowipc import types as T  # noqa: E402

CODECS = ["lz4", "zstd"]


def compressible_batch(rows=4096):
    return arrowipc.record_batch({"a": np.zeros(rows, np.int64), "b": np.arange(rows),
                                  "c": (np.arange(rows) // 64).astype(np.float64)})


def header_of(message, prefix_length=8):
    return decode_record_batch_header(
        decode_message(memoryview(message.metadata)[prefix_length:]).header)


def read_back(data, form="stream"):
    buf = pa.py_buffer(data)
    return (pa.ipc.open_stream(buf) if form == "stream" else pa.ipc.open_file(buf)).read_all()


@pytest.mark.parametrize("codec", CODECS)
def test_consecutive_frames_are_one_gather_part(codec):
    batch = compressible_batch(1000)       # 24 KB: compressed on the calling thread
    encoder = MessageEncoder(batch.schema, ipc.IpcWriteOptions(compression=codec))
    (m,) = encoder.batch_messages(batch)
    # three compressed values buffers (no validity: no nulls), back to back with their padding
    assert len(m.parts) == 1 and len(m.parts[0]) == m.body_length
    spans = [s for s in header_of(m).buffers_list() if s[1]]
    assert len(spans) == 3 and spans[-1][0] + spans[-1][1] <= m.body_length
    stream = encoder.schema_message() + m.metadata + bytes(m.parts[0]) + bytes(8)
    assert read_back(stream).equals(pa.Table.from_batches([pa.record_batch(batch)]))


@pytest.mark.parametrize("codec", CODECS)
def test_buffers_stored_raw_stay_the_callers_memory(codec):
    noise = np.random.default_rng(7).integers(0, 2**63, 4096, dtype=np.int64)
    batch = arrowipc.record_batch({"a": np.zeros(4096, np.int64), "noise": noise,
                                   "b": np.zeros(4096, np.int64)})
    encoder = MessageEncoder(batch.schema, ipc.IpcWriteOptions(compression=codec))
    (m,) = encoder.batch_messages(batch)
    raw = [i for i, p in enumerate(m.parts) if p is RAW_PREFIX]
    assert len(raw) == 1
    stored = m.parts[raw[0] + 1]
    assert py_buffer(stored).address == batch.column(1).buffers()[1].address   # not a copy
    # the frames before and after it are parts of their own, the raw buffer between them
    assert len(m.parts) == 4
    stream = encoder.schema_message() + m.metadata + b"".join(bytes(p) for p in m.parts)
    assert read_back(stream + bytes(8)).equals(pa.Table.from_batches([pa.record_batch(batch)]))


def test_flat_batch_nodes_variadic_counts_and_raw_size():
    table = pa.table({
        "l": pa.array([[1, 2], None, [3]] * 5),
        "st": pa.array([{"x": 1, "y": "a"}, None, {"x": 3, "y": None}] * 5),
        "v": pa.array(["short", "a string longer than twelve bytes", None] * 5, pa.string_view()),
        "i": pa.array([1, None, 3] * 5, pa.int32()),
    })
    batch = arrowipc.record_batch(table.to_batches()[0]).slice(2, 10)
    fb = flatten_columns(batch._columns, batch.num_rows)
    (m,) = MessageEncoder(batch.schema).batch_messages(batch)
    header = header_of(m)
    assert fb.nodes == header.nodes_list()
    assert fb.variadic_counts == list(header.variadic_counts) == [1]
    assert fb.raw_body_size() == sum(len(b) + (-len(b)) % 8 for b in fb.buffers if b is not None)
    assert fb.raw_body_size() > 0


def test_more_nodes_than_kept_inline():
    """Nodes beyond the ones a FlatBatch holds without an allocation (a wide struct)."""
    fields = {f"f{i}": pa.array([i, None, i + 1]) for i in range(70)}
    batch = arrowipc.record_batch(pa.record_batch({"s": pa.StructArray.from_arrays(
        list(fields.values()), list(fields))}))
    fb = flatten_columns(batch._columns, batch.num_rows)
    assert fb.nodes == [(3, 0)] + [(3, 1)] * 70
    sink = arrowipc.BufferOutputStream()
    with ipc.new_stream(sink, batch.schema) as w:
        w.write_batch(batch)
    assert read_back(bytes(memoryview(sink.getvalue()))).equals(
        pa.Table.from_batches([pa.record_batch(batch)]))


def test_the_writers_encoder_builds_no_spans():
    batch = compressible_batch(16)
    (m,) = MessageEncoder(batch.schema, spans=False).batch_messages(batch)
    assert m.spans is None
    (m,) = MessageEncoder(batch.schema).batch_messages(batch)
    assert m.spans == header_of(m).buffers_list()


@pytest.mark.parametrize("what, data, match", [
    ("offsets", ArrayData(T.utf8(), 3, 0, 0, [None, None, None]),
     r"offsets: 4 offsets from index 0 need 16 bytes but the offsets buffer is missing"),
    ("bitmap", ArrayData(T.bool_(), 3, 0, 0, [None, None]),
     r"bitmap: bits \[0, 0\+3\) need 1 bytes but the bitmap is missing"),
])
def test_a_missing_buffer_is_named(what, data, match):
    with pytest.raises(ArrowInvalid, match=match):
        flatten_columns([data], 3)


def mixed_batches(count, rows, seed=3):
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(count):
        out.append(pa.record_batch({
            "i": pa.array(rng.integers(0, 100, rows)),
            "noise": pa.array(rng.standard_normal(rows)),
            "n": pa.array(np.where(rng.random(rows) < 0.1, None, rng.integers(0, 9, rows)),
                          pa.int32()),
            "s": pa.array([f"v{k % 37}" for k in range(rows)]),
            "b": pa.array(rng.random(rows) < 0.5),
        }))
    return out


def write_ours(batches, options, how, form="stream"):
    ours = [arrowipc.record_batch(b) for b in batches]
    sink = arrowipc.BufferOutputStream()
    opener = ipc.new_stream if form == "stream" else ipc.new_file
    with opener(sink, ours[0].schema, options=options) as w:
        if how == "table":
            w.write_table(arrowipc.Table.from_batches(ours))
        else:
            for b in ours:
                w.write_batch(b)
    return bytes(memoryview(sink.getvalue()))


@pytest.mark.parametrize("codec", CODECS)
@pytest.mark.parametrize("options", [{}, {"alignment": 64}, {"compression_threshold": 3000},
                                     {"min_space_savings": 0.5}],
                         ids=["default", "align64", "threshold", "savings"])
@pytest.mark.parametrize("rows", [1000, 200_000], ids=["small", "parallel"])
def test_every_packing_path_gives_the_same_bytes(codec, options, rows):
    """One batch at a time or a window at once, on one thread or several: the same bytes."""
    batches = mixed_batches(3, rows)
    expected = pa.Table.from_batches(batches)
    results = set()
    for use_threads in (True, False):
        opts = ipc.IpcWriteOptions(compression=codec, use_threads=use_threads, **options)
        for how in ("batch", "table"):
            data = write_ours(batches, opts, how)
            assert read_back(data).equals(expected)
            results.add(data)
    assert len(results) == 1


@pytest.mark.parametrize("codec", CODECS)
def test_compressed_writes_from_short_lived_threads(codec):
    """Each thread keeps its codec contexts until it exits: many threads, each writing a few
    batches, all write the same bytes."""
    batches = mixed_batches(4, 500)
    options = ipc.IpcWriteOptions(compression=codec)
    expected = write_ours(batches, options, "batch")
    results, errors = [], []

    def run():
        try:
            results.append(write_ours(batches, options, "batch"))
        except BaseException as e:       # noqa: BLE001 - reported below
            errors.append(e)

    for _ in range(4):
        threads = [threading.Thread(target=run) for _ in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    assert not errors and len(results) == 32 and set(results) == {expected}


@pytest.mark.parametrize("codec", CODECS)
def test_the_python_codecs_pack_windows_too(codec, monkeypatch):
    """Where no codec library loads, write_table's window of batches goes through the Python
    codecs' pack_batches: the same bytes as batch by batch, and pyarrow reads them."""
    from arrowipc.ipc import compression

    class NoLibraries:
        @staticmethod
        def available(codec):
            return False

    monkeypatch.setattr(compression, "_native", NoLibraries)
    batches = mixed_batches(3, 700)
    options = ipc.IpcWriteOptions(compression=codec)
    one_by_one, window = (write_ours(batches, options, how) for how in ("batch", "table"))
    assert one_by_one == window
    assert read_back(window).equals(pa.Table.from_batches(batches))


@pytest.mark.parametrize("alignment", [0, 12])
def test_an_alignment_not_a_power_of_two_is_refused(alignment):
    from arrowipc.ipc._batch_encode import encode_record_batch
    batch = compressible_batch(8)
    with pytest.raises(ValueError, match=f"alignment must be a power of two, got {alignment}"):
        encode_record_batch(batch._columns, batch.num_rows, alignment)
