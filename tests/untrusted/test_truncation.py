"""Truncation loses nothing: every gold file cut at every byte offset.

A stream cut anywhere yields every batch that arrived whole and then raises ArrowInvalid naming
the truncation (a stream ending at a message boundary without its end-of-stream marker included);
a file cut anywhere refuses to open normally, and opened with recover=True (or passed to
ipc.recover) gives back every complete batch and a valid new file.

How every byte is covered at a bearable cost (3 million cuts):
  * cuts inside the schema message, at every message boundary, inside the end-of-stream marker
    and at 12 random places per file: end to end, open_stream(data[:cut]) and
    open_file(data[:cut], recover=True), comparing the batches with a full read;
  * every other cut inside a message: the framing step the reader runs on an in-memory source,
    read_frame(buf, message_start, cut), must raise the truncation error. That is exactly what
    open_stream(data[:cut]) runs for that message (a source's only notion of its size is its end
    position), without re-decoding the messages before it for each of the cuts;
  * every cut of every .arrow_file: open_file(data[:cut]) raises ArrowInvalid.
"""
import multiprocessing
import os
import random

import pytest

pa = pytest.importorskip("pyarrow")

import arrowipc  # noqa: E402
from arrowipc import ipc  # noqa: E402
from arrowipc._core.buffer import py_buffer  # noqa: E402
from arrowipc.ipc._framing import read_frame  # noqa: E402
from arrowipc.errors import ArrowInvalid  # noqa: E402

import harness  # noqa: E402

GOLD = harness.gold_files()
MAX_META = 64 << 20
RECORD_BATCH = 3


def message_spans(buf, start: int):
    """([(start, end, header type)] per message, (eos start, eos end)) of the stream at `start`."""
    pos, spans = start, []
    while True:
        msg, nxt = read_frame(buf, pos, buf.size, MAX_META, "stream", True)
        if msg is None:
            return spans, (pos, nxt)
        spans.append((pos, nxt, msg.header_type))
        pos = nxt


def read_until_error(reader_factory):
    """(batches read, the exception that ended reading or None)."""
    batches = []
    try:
        reader = reader_factory()
        for b in reader:
            b._columns                       # the structural checks run too
            batches.append(b)
    except ArrowInvalid as e:
        return batches, e
    return batches, None


def same_batch(a, b) -> bool:
    # compared through pyarrow: some gold values (durations beyond datetime's range) have no
    # Python form, so to_pylist-based equality cannot compare them
    return pa.record_batch(a).equals(pa.record_batch(b))


def expect_truncation(err, cut):
    assert err is not None, f"cut at {cut}: read ended without an error"
    assert "truncated" in str(err), f"cut at {cut}: {err}"


def check_file_cuts(path: str) -> int:
    data = open(path, "rb").read()
    buf = py_buffer(data)
    is_file = path.endswith(".arrow_file")
    start = 8 if is_file else 0
    spans, (eos_start, eos_end) = message_spans(buf, start)
    full = [b for b in (ipc.open_file(data) if is_file else ipc.open_stream(data))]
    rb_ends = [end for (_, end, kind) in spans if kind == RECORD_BATCH]

    def complete_before(cut):
        return sum(1 for end in rb_ends if end <= cut)

    rng = random.Random(path)
    end_to_end = set(range(start, spans[0][1]))             # inside the schema message
    end_to_end.update(s for (s, _, _) in spans[1:])        # message boundaries
    end_to_end.update(range(eos_start, eos_end))           # before and inside the EOS marker
    end_to_end.update(rng.randrange(start, eos_end) for _ in range(12))
    checked = 0

    for cut in sorted(end_to_end):
        piece = data[start:cut]
        batches, err = read_until_error(lambda: ipc.open_stream(piece))
        expect_truncation(err, cut)
        k = complete_before(cut)
        assert len(batches) == k, f"cut at {cut}: {len(batches)} batches, expected {k}"
        for got, want in zip(batches, full):
            assert same_batch(got, want)
        if is_file and cut < spans[0][1]:
            with pytest.raises(ArrowInvalid, match="nothing to recover"):
                ipc.open_file(data[:cut], recover=True)
        elif is_file:
            reader = ipc.open_file(data[:cut], recover=True)
            assert reader.num_record_batches == k
            assert not reader.recovery.complete
            for i in range(k):
                assert same_batch(reader.get_batch(i), full[i])
        checked += 1

    # every other byte inside a message: the framing step raises the truncation error
    # (plain try/except: pytest.raises would triple the cost of these million checks)
    for (s, e, _) in spans[1:]:
        for cut in range(s + 1, e):
            try:
                read_frame(buf, s, cut, MAX_META, "stream", True)
            except ArrowInvalid as err:
                if "truncated" not in str(err):
                    raise AssertionError(f"cut at {cut}: {err}") from None
            else:
                raise AssertionError(f"cut at {cut}: the framing accepted a partial message")
            checked += 1

    if is_file:
        # cut inside the footer: the whole stream is there, so recovery gets every batch
        for cut in {eos_end, (eos_end + len(data)) // 2, len(data) - 1}:
            reader = ipc.open_file(data[:cut], recover=True)
            assert reader.num_record_batches == len(full)
            assert not reader.recovery.complete and "footer" in reader.recovery.error
        for cut in range(len(data)):
            try:
                ipc.open_file(buf.slice(0, cut))
            except ArrowInvalid:
                checked += 1
            else:
                raise AssertionError(f"cut at {cut}: the file opened")
    return checked


def _run(path):
    try:
        return path, check_file_cuts(path), None
    except BaseException as e:      # noqa: BLE001 -- reported by the test below
        import traceback
        return path, 0, "".join(traceback.format_exception(e))[-3000:]


def test_every_gold_file_cut_at_every_byte():
    jobs = min(2, os.cpu_count() or 1)
    with multiprocessing.get_context("fork").Pool(jobs) as pool:
        results = pool.map(_run, GOLD, chunksize=1)
    failures = [(p, tb) for p, _, tb in results if tb]
    assert not failures, failures[0][1]
    total_cuts = sum(n for _, n, _ in results)
    total_bytes = sum(os.path.getsize(p) for p in GOLD)
    # every byte offset of every file was cut at least once (files: twice)
    assert total_cuts >= total_bytes - 8 * len(GOLD)


def test_recover_writes_a_valid_file_from_a_cut_file():
    path = next(p for p in GOLD if p.endswith("generated_primitive.arrow_file") and "1.0.0-little" in p)
    data = open(path, "rb").read()
    spans, _ = message_spans(py_buffer(data), 8)
    cut = spans[-1][0] + 5                              # inside the last batch
    sink = arrowipc.BufferOutputStream()
    report = ipc.recover(data[:cut], sink)
    assert not report.complete and "truncated" in report.error
    want = pa.ipc.open_file(data).read_all()
    got = pa.ipc.open_file(pa.py_buffer(sink.getvalue().to_pybytes())).read_all()
    assert report.num_batches == got.to_batches().__len__()
    assert got.num_rows == report.num_rows
    assert got.equals(want.slice(0, got.num_rows))
