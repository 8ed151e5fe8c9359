"""Every message is framed once while a reader iterates.

Framing a message (prefix, metadata length, flatbuffer checks, body bounds) was the main per-batch
cost on small batches when the file reader framed each block twice. The framing entry points the
readers call are counted here while iterating streams and files, in memory and from a file object,
uncompressed, compressed (windows of batches decompressed together) and with dictionaries; the
batches read are checked against pyarrow.
"""
import io

import pytest

pa = pytest.importorskip("pyarrow")
import pyarrow.ipc as pa_ipc  # noqa: E402

from arrowipc import ipc  # noqa: E402
from arrowipc.ipc import reader as reader_module  # noqa: E402

FRAMING = ("read_message_from", "read_message_header", "next_message_fast", "read_frame")
# ... and MessageDecoder's one-call path, PlainBatchDecoder.frame_and_decode (counted below)
NUM_BATCHES = 5


@pytest.fixture
def framings(monkeypatch):
    """The number of framing calls the reader module makes, counted as they happen."""
    calls = []
    for name in FRAMING:
        real = getattr(reader_module, name)

        def counting(*args, _real=real, **kwargs):
            calls.append(1)
            return _real(*args, **kwargs)

        monkeypatch.setattr(reader_module, name, counting)

    real_plain = reader_module.PlainBatchDecoder

    class CountingPlainBatchDecoder:
        """The decoder's one-call path (frame, header, columns), counted per message."""

        def __init__(self, *args):
            self._real = real_plain(*args)

        def frame_and_decode(self, *args):
            calls.append(1)
            return self._real.frame_and_decode(*args)

        def block_batch(self, *args):           # a file's block: framed here, once
            calls.append(1)
            return self._real.block_batch(*args)

        def decode(self, *args):                # a message framed already: no framing here
            return self._real.decode(*args)

    monkeypatch.setattr(reader_module, "PlainBatchDecoder", CountingPlainBatchDecoder)
    return calls


def _batches(dictionaries):
    out = []
    for k in range(NUM_BATCHES):
        columns = {"i": pa.array(range(k, k + 100)), "s": pa.array([f"v{j % 7}" for j in range(100)])}
        if dictionaries:
            columns["d"] = pa.array([f"d{j % 3}" for j in range(100)]).dictionary_encode()
        out.append(pa.record_batch(columns))
    return out


def _write(batches, form, compression):
    sink = io.BytesIO()
    options = pa_ipc.IpcWriteOptions(compression=compression)
    new = pa_ipc.new_stream if form == "stream" else pa_ipc.new_file
    with new(sink, batches[0].schema, options=options) as w:
        for b in batches:
            w.write_batch(b)
    return sink.getvalue()


def _messages(data, form):
    """How many messages pyarrow finds: schema, dictionaries and batches (not the EOS marker)."""
    if form == "file":
        data = data[8:]          # the stream inside the file starts after the magic and padding
    return sum(1 for _ in pa_ipc.MessageReader.open_stream(pa.BufferReader(data)))


CASES = [(form, compression, dictionaries, in_memory)
         for form in ("stream", "file") for compression in (None, "lz4", "zstd")
         for dictionaries in (False, True) for in_memory in (True, False)]


@pytest.mark.parametrize("form,compression,dictionaries,in_memory", CASES)
def test_iterating_frames_each_message_once(form, compression, dictionaries, in_memory, framings):
    expected = _batches(dictionaries)
    data = _write(expected, form, compression)
    source = data if in_memory else io.BytesIO(data)
    if form == "stream":
        reader = ipc.open_stream(source)
        got = list(reader)
        # every message of the stream, and the end-of-stream marker
        frames = _messages(data, form) + 1
    else:
        reader = ipc.open_file(source)
        got = list(reader)
        # the footer's blocks (its schema is read from the footer, not framed as a message)
        frames = reader.num_record_batches + reader.num_dictionaries
    assert len(framings) == frames
    assert len(got) == NUM_BATCHES
    for ours, theirs in zip(got, expected):
        assert pa.record_batch(ours).equals(theirs)


@pytest.mark.parametrize("compression", [None, "zstd"])
def test_reading_batch_by_batch_frames_each_message_once(compression, framings):
    expected = _batches(False)
    data = _write(expected, "stream", compression)
    reader = ipc.open_stream(data)
    got = []
    while True:
        try:
            got.append(reader.read_next_batch_with_custom_metadata().batch)
        except StopIteration:
            break
    assert len(framings) == NUM_BATCHES + 2          # schema, batches, end-of-stream marker
    assert [pa.record_batch(b) for b in got] == expected

    file_data = _write(expected, "file", compression)
    framings.clear()
    reader = ipc.open_file(file_data)
    got = [reader.get_batch(i) for i in range(reader.num_record_batches)]
    assert len(framings) == NUM_BATCHES
    assert [pa.record_batch(b) for b in got] == expected
