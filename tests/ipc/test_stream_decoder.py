"""The push decoder (ipc.StreamDecoder) and the async reader built on it.

Every gold stream fed 1 byte, 7 bytes and 64 KiB at a time gives the stream reader's batches,
schema, custom metadata and stats; cut at every byte, `finish()` says what the stream reader says
of the same bytes (end to end at the boundaries and at random cuts, through the framing step the
reader runs everywhere else, as tests/untrusted/test_truncation.py does).
"""
import asyncio
import os
import random
import socket
import subprocess
import sys
import threading

import pytest

pa = pytest.importorskip("pyarrow")

import arrowipc  # noqa: E402
from arrowipc import ipc  # noqa: E402
from arrowipc._core.buffer import py_buffer  # noqa: E402
from arrowipc.ipc._framing import read_frame  # noqa: E402
from arrowipc.errors import ArrowInvalid  # noqa: E402

import strategies as S  # noqa: E402
import testdata  # noqa: E402

GOLD = sorted(os.path.join(d, n) for d, _, names in os.walk(testdata.INTEGRATION)
              for n in names if n.endswith(".stream"))
IDS = [os.path.relpath(p, testdata.INTEGRATION)[:-len(".stream")] for p in GOLD]
MAX_META = 64 << 20


def reader_result(data: bytes, options=None):
    """(schema or None, [(batch, custom metadata)], error message or None) of the stream reader."""
    items, schema = [], None
    try:
        reader = ipc.open_stream(data, options=options)
        schema = reader.schema
        for item in reader.iter_batches_with_custom_metadata():
            item.batch.validate()
            items.append(item)
    except ArrowInvalid as e:
        return schema, items, str(e)
    return schema, items, None


def pushed(data: bytes, size: int, options=None):
    """The same, from a StreamDecoder fed `size` bytes at a time."""
    decoder = ipc.StreamDecoder(options)
    items = []
    try:
        for i in range(0, len(data), size):
            for item in decoder.feed_with_custom_metadata(data[i:i + size]):
                item.batch.validate()
                items.append(item)
        decoder.finish()
    except ArrowInvalid as e:
        return decoder, items, str(e)
    return decoder, items, None


def assert_same_items(got, expected):
    assert len(got) == len(expected)
    for (b1, m1), (b2, m2) in zip(got, expected):
        assert S.to_pa_batch(b1).equals(S.to_pa_batch(b2))
        assert m1 == m2


@pytest.mark.parametrize("size", [1, 7, 64 << 10], ids=["1B", "7B", "64KiB"])
@pytest.mark.parametrize("path", GOLD, ids=IDS)
def test_gold_streams_pushed_in_chunks_read_as_the_stream_reader(path, size):
    data = open(path, "rb").read()
    schema, expected, error = reader_result(data)
    assert error is None
    decoder, got, got_error = pushed(data, size)
    assert got_error is None
    assert decoder.ended and decoder.bytes_held == 0 and decoder.position == len(data)
    assert decoder.schema.equals(schema, check_metadata=True)
    assert_same_items(got, expected)
    reader = ipc.open_stream(data)
    reader.read_all()
    assert decoder.stats == reader.stats


def message_spans(data: bytes):
    buf, pos, spans = py_buffer(data), 0, []
    while True:
        msg, nxt = read_frame(buf, pos, len(data), MAX_META, "stream", True)
        if msg is None:
            return spans, (pos, nxt)
        spans.append((pos, nxt))
        pos = nxt


def _arrow_invalid(fn, *args) -> str:
    # the message of the ArrowInvalid fn raises (pytest.raises costs too much per cut here)
    try:
        fn(*args)
    except ArrowInvalid as e:
        return str(e)
    raise AssertionError(f"{fn.__name__} raised no ArrowInvalid")


@pytest.mark.parametrize("path", GOLD, ids=IDS)
def test_every_truncation_behaves_as_in_the_stream_reader(path):
    data = open(path, "rb").read()
    spans, (eos_start, eos_end) = message_spans(data)
    rng = random.Random(len(data))
    end_to_end = {0, eos_start, *range(eos_start, eos_end), *(s for s, _ in spans),
                  *range(0, spans[0][1] + 1), *rng.sample(range(len(data)), min(12, len(data)))}
    decoder = ipc.StreamDecoder()
    batches = []
    starts = [s for s, _ in spans]
    whole = py_buffer(data)                 # framing reads only up to `cut`: no copy per cut
    m = 0                                   # the message the cut falls in
    for cut in range(len(data)):
        if cut:
            batches += decoder.feed(data[cut - 1:cut])
        while m + 1 < len(starts) and starts[m + 1] <= cut:
            m += 1
        pushed_error = _arrow_invalid(decoder.finish)
        if cut in end_to_end:
            _, items, error = reader_result(data[:cut])
            assert error == pushed_error, cut
            assert len(batches) == len(items), cut
        elif cut < eos_start:               # inside message m: the reader's framing step
            assert _arrow_invalid(read_frame, whole, starts[m], cut, MAX_META, "stream",
                                  True) == pushed_error, cut
    decoder.feed(data[-1:])
    decoder.finish()                         # whole again


def test_finish_changes_nothing_and_bytes_after_the_end_are_ignored():
    batch = arrowipc.record_batch({"a": [1, 2, 3]})
    sink = arrowipc.BufferOutputStream()
    with ipc.new_stream(sink, batch.schema) as w:
        w.write_batch(batch)
    data = sink.getvalue().to_pybytes()
    decoder = ipc.StreamDecoder()
    assert decoder.feed(data[:50]) == [] and decoder.schema is None
    with pytest.raises(ArrowInvalid, match="truncated message at byte 0"):
        decoder.finish()
    got = decoder.feed(data[50:])
    assert [b.to_pydict() for b in got] == [{"a": [1, 2, 3]}]
    decoder.finish()
    assert decoder.feed(b"garbage after the end") == [] and decoder.ended


def test_a_hostile_prefix_fails_at_once_without_waiting():
    decoder = ipc.StreamDecoder()
    with pytest.raises(ArrowInvalid, match=r"stream: message at byte 0 claims 2147483647 bytes "
                                           r"of metadata; expected 1\.\.67108864"):
        decoder.feed(b"\xff\xff\xff\xff\xff\xff\xff\x7f")
    small = ipc.StreamDecoder(ipc.IpcReadOptions(max_metadata_size=64))
    with pytest.raises(ArrowInvalid, match="claims 1000 bytes of metadata; expected 1..64"):
        small.feed(b"\xff\xff\xff\xff\xe8\x03\x00\x00")


def test_chunks_of_reused_memory_are_copied_bytes_are_not():
    batch = arrowipc.record_batch({"a": list(range(100))})
    sink = arrowipc.BufferOutputStream()
    with ipc.new_stream(sink, batch.schema) as w:
        w.write_batch(batch)
    data = sink.getvalue().to_pybytes()
    reused = bytearray(data)
    decoder = ipc.StreamDecoder()
    (got,) = decoder.feed(reused)
    reused[:] = bytes(len(reused))          # the caller reuses its receive buffer
    assert got.column(0).to_pylist() == list(range(100))
    (view,) = ipc.StreamDecoder().feed(data)
    assert view.column(0).buffers()[1].address != 0
    assert ipc.StreamDecoder().feed(memoryview(data))[0].equals(got)


def test_options_apply_as_in_the_reader():
    batch = arrowipc.record_batch({"a": [1], "b": ["x"], "c": [2.5]})
    sink = arrowipc.BufferOutputStream()
    with ipc.new_stream(sink, batch.schema) as w:
        w.write_batch(batch)
    data = sink.getvalue().to_pybytes()
    options = ipc.IpcReadOptions(included_fields=[2, 0])
    decoder, items, error = pushed(data, 5, options)
    schema, expected, _ = reader_result(data, options)
    assert error is None and decoder.schema.names == schema.names == ["a", "c"]
    assert_same_items(items, expected)
    missing_eos = data[:-8]
    _, _, error = pushed(missing_eos, 3)
    assert error == reader_result(missing_eos)[2]
    assert "without an end-of-stream marker" in error
    relaxed = ipc.IpcReadOptions(allow_missing_eos=True)
    assert pushed(missing_eos, 3, relaxed)[2] is None


def test_empty_input_has_no_schema():
    decoder = ipc.StreamDecoder()
    with pytest.raises(ArrowInvalid) as e:
        decoder.finish()
    assert str(e.value) == reader_result(b"")[2]


def stream_bytes(n_batches=5):
    batch = arrowipc.record_batch({"id": list(range(1000)), "s": [str(i) for i in range(1000)]})
    sink = arrowipc.BufferOutputStream()
    with ipc.new_stream(sink, batch.schema, options=ipc.IpcWriteOptions(compression="zstd")) as w:
        for i in range(n_batches):
            w.write_batch(batch, custom_metadata={"i": str(i)})
    return batch, sink.getvalue().to_pybytes()


def test_async_reader_over_an_asyncio_stream():
    batch, data = stream_bytes()

    async def main():
        stream = asyncio.StreamReader()

        async def producer():
            for i in range(0, len(data), 1000):
                stream.feed_data(data[i:i + 1000])
                await asyncio.sleep(0)
            stream.feed_eof()

        task = asyncio.create_task(producer())
        reader = ipc.open_stream_async(stream, chunk_size=4096)
        schema = await reader.read_schema()
        got = [b async for b in reader]
        await task
        return schema, got

    schema, got = asyncio.run(main())
    assert schema.equals(batch.schema)
    assert len(got) == 5 and all(b.equals(batch) for b in got)


def test_async_reader_stats_count_what_was_read():
    """stats is a ReadStats snapshot, as the stream reader's (was an AttributeError)."""
    _, data = stream_bytes(3)

    async def main():
        stream = asyncio.StreamReader()
        stream.feed_data(data)
        stream.feed_eof()
        reader = ipc.open_stream_async(stream)
        async for _ in reader:
            pass
        return reader.stats

    stats = asyncio.run(main())
    reader = ipc.open_stream(data)
    reader.read_all()
    assert isinstance(stats, ipc.ReadStats)
    assert stats == reader.stats and stats.num_record_batches == 3


def test_async_reader_raises_the_truncation():
    _, data = stream_bytes()

    async def main():
        stream = asyncio.StreamReader()
        stream.feed_data(data[:-100])
        stream.feed_eof()
        return [b async for b in ipc.open_stream_async(stream)]

    with pytest.raises(ArrowInvalid) as e:
        asyncio.run(main())
    assert str(e.value) == reader_result(data[:-100])[2]


def test_over_a_socket_and_an_iterable_of_chunks():
    batch, data = stream_bytes(3)
    a, b = socket.socketpair()
    sender = threading.Thread(target=lambda: (a.sendall(data), a.close()))
    sender.start()
    decoder, got = ipc.StreamDecoder(), []
    while not decoder.ended:
        chunk = b.recv(1500)
        if not chunk:
            break
        got += decoder.feed(chunk)
    decoder.finish()
    sender.join()
    b.close()
    assert len(got) == 3 and all(x.equals(batch) for x in got)
    chunks = (data[i:i + 333] for i in range(0, len(data), 333))
    assert [x.num_rows for x in ipc.iter_stream_chunks(chunks)] == [1000] * 3


# -- a stream holding only an end-of-stream marker (issue 32, F1) ------------------------------

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                "untrusted"))
from harness import DEFAULT_TIMEOUT as TIMEOUT, REPO_ROOT  # noqa: E402

ONLY_EOS = {"eos": b"\xff\xff\xff\xff\x00\x00\x00\x00", "legacy-eos": b"\x00\x00\x00\x00"}

# Reads `data` with the async reader in a child process: a reader that spins without awaiting
# cannot be cancelled by wait_for, so only killing the process ends it.
ASYNC_READ = """
import asyncio, sys
from arrowipc import ipc

async def read(data, how):
    stream = asyncio.StreamReader()
    stream.feed_data(data)
    stream.feed_eof()
    reader = ipc.open_stream_async(stream)
    if how == "iter":
        return [b async for b in reader]
    return await getattr(reader, how)()

try:
    asyncio.run(asyncio.wait_for(read(bytes.fromhex(sys.argv[1]), sys.argv[2]), {timeout}))
except Exception as e:
    print(type(e).__name__, e)
else:
    print("no error")
"""


def expected_error(data):
    with pytest.raises(ArrowInvalid) as e:
        ipc.open_stream(data)
    return f"ArrowInvalid {e.value}"


@pytest.mark.parametrize("how", ["read_schema", "read_all", "iter"])
@pytest.mark.parametrize("name", ONLY_EOS)
def test_async_reader_refuses_a_stream_of_only_the_end_marker_without_spinning(name, how):
    data = ONLY_EOS[name]
    script = ASYNC_READ.format(timeout=TIMEOUT)
    try:
        done = subprocess.run([sys.executable, "-c", script, data.hex(), how],
                              capture_output=True, text=True, timeout=2 * TIMEOUT,
                              env=dict(os.environ, PYTHONPATH=REPO_ROOT))
    except subprocess.TimeoutExpired:
        pytest.fail(f"the async reader's {how} of {data.hex()} never returned")
    assert done.stdout.strip() == expected_error(data), done.stderr[-2000:]
    assert "expected a schema message at byte" in done.stdout


@pytest.mark.parametrize("name", ONLY_EOS)
def test_push_decoder_refuses_a_stream_of_only_the_end_marker(name):
    data = ONLY_EOS[name]
    decoder = ipc.StreamDecoder()
    with pytest.raises(ArrowInvalid) as fed:
        decoder.feed(data)
    assert f"ArrowInvalid {fed.value}" == expected_error(data)
    for again in (decoder.finish, lambda: decoder.feed(b"\xff\xff\xff\xff")):
        with pytest.raises(ArrowInvalid) as e:         # and says so again, whatever comes next
            again()
        assert str(e.value) == str(fed.value)
    assert not decoder.ended and decoder.error is fed.value
    one_byte = ipc.StreamDecoder()
    with pytest.raises(ArrowInvalid, match="expected a schema message at byte"):
        for i in range(len(data)):
            one_byte.feed(data[i:i + 1])


class CountingSource:
    """An async source that hands out `data` in small pieces and counts its reads."""

    def __init__(self, data, piece=3):
        self.data, self.piece, self.reads = data, piece, 0

    async def read(self, n):
        self.reads += 1
        await asyncio.sleep(0)
        out, self.data = self.data[:min(n, self.piece)], self.data[min(n, self.piece):]
        return out


def test_async_reader_awaits_its_source_for_every_chunk_and_stops_at_the_end():
    _, data = stream_bytes(2)

    async def main(source):
        reader = ipc.open_stream_async(source)
        got = [b async for b in reader]
        for _ in range(3):                      # asking again after the end reads nothing
            with pytest.raises(StopAsyncIteration):
                await reader.read_next_batch()
        return got

    source = CountingSource(data, 1000)
    assert len(asyncio.run(main(source))) == 2
    # one read per chunk up to the end-of-stream marker, then none
    assert source.reads == -(-len(data) // 1000)
    source = CountingSource(ONLY_EOS["eos"] + data, 1000)
    with pytest.raises(ArrowInvalid, match="expected a schema message at byte 8"):
        asyncio.run(main(source))
    assert source.reads == 1


# -- the push decoder and the async reader behave as the stream reader (issue 32, item 4, F6) ----

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                "fuzz"))
import mutate  # noqa: E402


def fingerprint(batch):
    """What a batch holds, comparable across readers: rows and every buffer's bytes (and each
    dictionary's), after the batch's checks."""
    batch.validate()

    def of(array):
        out = [None if b is None else b.to_pybytes() for b in array.buffers()]
        return (out, of(array.dictionary)) if hasattr(array, "dictionary") else out

    return batch.num_rows, str(batch.schema), [of(c) for c in batch.columns]


def error_of(e):
    return type(e).__name__, str(e)


def stream_reader_outcome(data):
    """([fingerprint], (error class, message) or None) of ipc.open_stream over `data`."""
    got = []
    try:
        for batch in ipc.open_stream(data):
            got.append(fingerprint(batch))
    except arrowipc.errors.ArrowException as e:
        return got, error_of(e)
    return got, None


def chunk_sizes(n, rng, one_byte=True):
    """Chunkings of an n-byte input: random sizes, whole, and one byte at a time (or 61 bytes
    for large inputs) unless not `one_byte`."""
    sizes, total = [], 0
    while total < n:
        sizes.append(rng.choice((1, 2, 3, 5, 8, 13, 60, 64, 100, 999, 4096, 1 << 16)))
        total += sizes[-1]
    out = [sizes, [max(n, 1)]]
    if one_byte:
        out.append([1] * n if n <= 4000 else [61] * (n // 61 + 1))
    return out


def push_decoder_outcome(data, sizes):
    """The same from a StreamDecoder fed chunks of `sizes`, checking that its errors stay."""
    decoder, got, pos = ipc.StreamDecoder(), [], 0

    def sticky(e):
        for again in (lambda: decoder.feed(data[pos:]), decoder.finish,
                      lambda: decoder.feed(b"\xff\xff\xff\xff\x00\x00\x00\x00")):
            with pytest.raises(type(e)) as later:
                again()
            assert str(later.value) == str(e)
        return got, error_of(e)

    for size in sizes + [0]:
        try:
            batches = decoder.feed(data[pos:pos + size]) if size else decoder.finish() or []
        except arrowipc.errors.ArrowException as e:
            return sticky(e) if decoder.error is not None else (got, error_of(e))
        pos += size
        for batch in batches:
            try:
                got.append(fingerprint(batch))
            except arrowipc.errors.ArrowException as e:     # a batch's own deferred checks
                return got, error_of(e)
    return got, None


async def async_reader_outcome(data, sizes, chunk_size):
    """The same from the async reader over an asyncio.StreamReader fed pieces of `sizes`."""
    stream = asyncio.StreamReader()

    async def producer():
        pos = 0
        for size in sizes:
            stream.feed_data(data[pos:pos + size])
            pos += size
            await asyncio.sleep(0)
        stream.feed_eof()

    task = asyncio.create_task(producer())
    got = []
    try:
        async for batch in ipc.open_stream_async(stream, chunk_size=chunk_size):
            got.append(fingerprint(batch))
    except arrowipc.errors.ArrowException as e:
        return got, error_of(e)
    finally:
        task.cancel()
    return got, None


def differential_inputs():
    """(name, bytes): gold streams, pyarrow's streams (compressed, dictionaries with deltas,
    custom metadata, legacy framing), truncated at every byte or at random, and mutated."""
    pa_ipc = pytest.importorskip("pyarrow.ipc")
    rng = random.Random(32)
    written = {}
    batch = pa.record_batch({"i": pa.array(range(40), pa.int64()),
                             "s": pa.array([None if i % 7 == 0 else str(i) for i in range(40)]),
                             "l": pa.array([[i] * (i % 3) for i in range(40)])})
    for codec in (None, "lz4", "zstd"):
        sink = pa.BufferOutputStream()
        with pa_ipc.new_stream(sink, batch.schema,
                               options=pa_ipc.IpcWriteOptions(compression=codec)) as w:
            for k in range(6):
                w.write_batch(batch.slice(k * 5, 10 + k), custom_metadata={"k": str(k)})
        written[f"pyarrow-{codec}"] = sink.getvalue().to_pybytes()
    dict_batches = [pa.record_batch({"d": pa.DictionaryArray.from_arrays(
        pa.array([0, 1, 0, k]), pa.array([f"v{j}" for j in range(k + 1)]))}) for k in range(1, 4)]
    sink = pa.BufferOutputStream()
    with pa_ipc.new_stream(sink, dict_batches[0].schema,
                           options=pa_ipc.IpcWriteOptions(emit_dictionary_deltas=True)) as w:
        for b in dict_batches:
            w.write_batch(b)
    written["pyarrow-dictionary-deltas"] = sink.getvalue().to_pybytes()
    sink = pa.BufferOutputStream()
    with pa_ipc.new_stream(sink, batch.schema,
                           options=pa_ipc.IpcWriteOptions(use_legacy_format=True)) as w:
        w.write_batch(batch)
    written["pyarrow-legacy"] = sink.getvalue().to_pybytes()
    for name, data in written.items():
        yield name, data
        cuts = range(len(data)) if name in ("pyarrow-zstd", "pyarrow-legacy") else \
            rng.sample(range(len(data)), 40)
        for cut in cuts:
            yield f"{name}[:{cut}]", data[:cut]
    gold = {os.path.basename(p): open(p, "rb").read() for p in GOLD[::3]}
    for name, data in {**written, **gold}.items():
        yield name, data
        for i in range(60 if name in written else 12):
            yield f"{name}~{i}", mutate.mutate(data, random.Random(f"{name}:{i}"))
        cut = rng.randrange(len(data))
        yield f"{name}[:{cut}]", data[:cut]


def test_push_decoder_and_async_reader_give_the_stream_readers_batches_then_its_error():
    rng = random.Random(4)
    inputs = list(differential_inputs())
    checked = {"clean": 0, "error": 0}

    async def main():
        for k, (name, data) in enumerate(inputs):
            expected = stream_reader_outcome(data)
            checked["clean" if expected[1] is None else "error"] += 1
            # every cut fed a byte at a time is checked above (the truncation test)
            for sizes in chunk_sizes(len(data), rng, one_byte="[:" not in name):
                assert push_decoder_outcome(data, sizes) == expected, (name, sizes[:3])
            if "[:" in name and k % 4:
                continue                    # the async reader: a quarter of the cuts
            sizes = chunk_sizes(len(data), rng)[0]
            chunk_size = rng.choice((5, 64, 999, 4096, 1 << 16))
            got = await asyncio.wait_for(async_reader_outcome(data, sizes, chunk_size), TIMEOUT)
            assert got == expected, (name, chunk_size)

    asyncio.run(main())
    # both outcomes are well represented (the inputs are not all refused, nor all read)
    assert checked["clean"] > 100 and checked["error"] > 1000, checked


def corrupt_batch_stream(bad=3, n=6):
    """A stream of n batches whose batch `bad` has a field node claiming more nulls than rows
    (framing and header decode succeed; the batch itself is refused)."""
    batches = [arrowipc.record_batch({"a": list(range(k * 10, k * 10 + 10))}) for k in range(n)]
    sink = arrowipc.BufferOutputStream()
    with ipc.new_stream(sink, batches[0].schema) as w:
        for b in batches:
            w.write_batch(b)
    data = bytearray(sink.getvalue().to_pybytes())
    spans, _ = message_spans(bytes(data))
    start, end = spans[1 + bad]
    node = bytes(data).find((10).to_bytes(8, "little") + (0).to_bytes(8, "little"), start, end)
    assert node > 0                             # the FieldNode (length 10, null count 0)
    data[node + 8:node + 16] = (11).to_bytes(8, "little")
    return bytes(data), spans


def test_feed_hands_out_the_batches_a_chunk_completed_before_a_bad_message():
    data, spans = corrupt_batch_stream()
    expected = stream_reader_outcome(data)
    assert len(expected[0]) == 3 and "null count 11" in expected[1][1]
    decoder = ipc.StreamDecoder()
    got = decoder.feed(data)                    # the whole stream at once
    assert [b.column(0).to_pylist()[0] for b in got] == [0, 10, 20]
    assert str(decoder.error) == expected[1][1] and not decoder.ended
    for again in (lambda: decoder.feed(b""), decoder.finish, lambda: decoder.feed(data)):
        with pytest.raises(ArrowInvalid) as e:
            again()
        assert str(e.value) == expected[1][1]
    with_metadata = ipc.StreamDecoder()
    assert len(with_metadata.feed_with_custom_metadata(data)) == 3
    with pytest.raises(ArrowInvalid, match="null count 11"):
        with_metadata.finish()


def test_errors_are_sticky_and_the_bad_message_is_never_skipped():
    data, spans = corrupt_batch_stream()
    bad_end = spans[4][1]
    decoder = ipc.StreamDecoder()
    assert len(decoder.feed(data[:spans[4][0]])) == 3
    with pytest.raises(ArrowInvalid, match="null count 11") as first:
        decoder.feed(data[spans[4][0]:bad_end])
    for _ in range(2):                          # the good batches after it stay unread
        with pytest.raises(ArrowInvalid) as again:
            assert decoder.feed(data[bad_end:]) == []
        assert str(again.value) == str(first.value)
    with pytest.raises(ArrowInvalid) as at_finish:
        decoder.finish()
    assert str(at_finish.value) == str(first.value)
    reader = ipc.open_stream(data)
    with pytest.raises(ArrowInvalid, match="null count 11"):
        for batch in reader:
            batch.validate()
    assert decoder.position == spans[4][1] and decoder.stats == reader.stats


@pytest.mark.parametrize("answer", [None, "abc", 12])
def test_async_source_handing_out_something_else_than_bytes_is_an_io_error(answer):
    _, data = stream_bytes(1)

    class Source:
        calls = 0

        async def read(self, n):
            self.calls += 1
            return data[:100] if self.calls == 1 else answer

    async def main():
        return [b async for b in ipc.open_stream_async(Source())]

    with pytest.raises(arrowipc.errors.ArrowIOError,
                       match=rf"stream: the source's read\(65536\) at byte 100 returned "
                             rf"{type(answer).__name__}, expected bytes"):
        asyncio.run(main())
