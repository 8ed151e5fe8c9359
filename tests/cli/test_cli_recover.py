"""`arrowipc recover`: every complete batch of a truncated stream or footer-less file."""
import io
import json
import os
import struct
import sys

import pytest

from arrowipc.cli import EXIT_INVALID_DATA, EXIT_OK

from clitools import gold, one_line_error, run, supplement

pa = pytest.importorskip("pyarrow")
import pyarrow.ipc as pa_ipc  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                "ipc"))
import ipc_surgery as X  # noqa: E402


def stream_with_ends(batches, compression=None):
    """(stream bytes, [end offset of each record batch message]) written by pyarrow."""
    sink = io.BytesIO()
    options = pa_ipc.IpcWriteOptions(compression=compression)
    w = pa_ipc.new_stream(sink, batches[0].schema, options=options)
    ends = []
    for b in batches:
        w.write_batch(b)
        ends.append(sink.tell())
    w.close()
    return sink.getvalue(), ends


def sample_batches(n=5):
    return [pa.record_batch({"i": pa.array(range(k * 10, k * 10 + 10), pa.int64()),
                             "s": pa.array([f"row {k}.{j}" for j in range(10)])})
            for k in range(n)]


def recovered(path):
    return pa_ipc.open_stream(path).read_all() if str(path).endswith(".arrows") else \
        pa_ipc.open_file(path).read_all()


@pytest.mark.parametrize("compression", [None, "zstd"])
@pytest.mark.parametrize("complete", [0, 1, 3, 4])
@pytest.mark.parametrize("extra", [1, 7, 40])
def test_truncated_stream_keeps_every_complete_batch(capsys, tmp_path, compression, complete,
                                                     extra):
    batches = sample_batches()
    data, ends = stream_with_ends(batches, compression)
    start = ends[complete - 1] if complete else ends[0] - (ends[1] - ends[0])
    cut_at = start + extra                    # into the next message, short of its end
    assert cut_at < ends[complete]
    src = tmp_path / "cut.arrows"
    src.write_bytes(data[:cut_at])
    dst = tmp_path / "out.arrows"
    r = run(capsys, "recover", src, dst)
    assert r.status == EXIT_OK, r.err
    assert f"{complete} record batch" in r.out and "stopped at byte" in r.out
    got = recovered(dst)
    want = pa.Table.from_batches(batches[:complete], schema=batches[0].schema)
    assert got.equals(want)


def test_cut_between_messages(capsys, tmp_path):
    batches = sample_batches(3)
    data, ends = stream_with_ends(batches)
    src = tmp_path / "cut.arrows"
    src.write_bytes(data[:ends[1]])           # exactly after batch 1: no end-of-stream marker
    dst = tmp_path / "out.arrow"
    r = run(capsys, "recover", src, dst)
    assert r.status == EXIT_OK
    assert "without an end-of-stream marker" in r.out
    assert recovered(dst).equals(pa.Table.from_batches(batches[:2]))


def test_complete_input_is_copied(capsys, tmp_path):
    src = gold("primitive", "stream")
    dst = tmp_path / "out.arrows"
    r = run(capsys, "recover", src, dst)
    assert r.status == EXIT_OK
    assert r.out.rstrip().endswith("the input was complete")
    assert recovered(dst).equals(pa_ipc.open_stream(src).read_all())


@pytest.mark.parametrize("fraction", [0.5, 0.9])
def test_footerless_file(capsys, tmp_path, fraction):
    full = gold("primitive", "file")
    data = open(full, "rb").read()
    src = tmp_path / "cut.arrow"
    src.write_bytes(data[:int(len(data) * fraction)])
    dst = tmp_path / "out.arrow"                  # same format as the input by default
    r = run(capsys, "recover", src, dst)
    assert r.status == EXIT_OK, r.err
    reader = pa_ipc.open_file(full)
    got = recovered(dst)
    n = got.num_rows
    assert n in (17, 37)
    want = pa.Table.from_batches([reader.get_batch(i) for i in range(reader.num_record_batches)])
    assert got.equals(want.slice(0, n))
    assert run(capsys, "validate", "--full", dst).status == EXIT_OK


def test_file_missing_only_its_footer(capsys, tmp_path):
    full = open(gold("primitive", "file"), "rb").read()
    footer_len = int.from_bytes(full[-10:-6], "little")
    src = tmp_path / "nofooter.arrow"
    src.write_bytes(full[:-10 - footer_len])         # data section and EOS marker intact
    dst = tmp_path / "out.arrows"
    r = run(capsys, "recover", src, dst)
    assert r.status == EXIT_OK
    assert "the data section is whole but the footer is missing" in r.out
    assert recovered(dst).num_rows == 37


def test_dictionaries_survive(capsys, tmp_path):
    src_path = supplement("dict_delta_zstd.stream")
    data = open(src_path, "rb").read()
    src = tmp_path / "cut.arrows"
    src.write_bytes(data[:-40])                      # the last batch is cut
    dst = tmp_path / "out.arrow"
    r = run(capsys, "recover", src, dst)
    assert r.status == EXIT_OK
    got = recovered(dst).to_pylist()
    want = pa_ipc.open_stream(src_path).read_all().to_pylist()
    assert got == want[:len(got)] and 0 < len(got) < len(want)
    info = json.loads(run(capsys, "inspect", "--json", dst).out)
    assert info["compression"] == "zstd"            # the input's codec is kept


def test_nothing_to_recover(capsys, tmp_path):
    src = tmp_path / "x.arrows"
    src.write_bytes(b"\xff\xff\xff\xff\x10\x00\x00\x00" + b"\x00" * 3)
    r = run(capsys, "recover", src, tmp_path / "out.arrows")
    assert r.status == EXIT_INVALID_DATA
    one_line_error(r, "recover")
    assert not (tmp_path / "out.arrows").exists()


def file_with_bad_header(batches, bad):
    """A pyarrow file whose footer is intact but whose record batch `bad` has a header that
    does not decode (its vtable puts the length field 65520 bytes into the table)."""
    sink = io.BytesIO()
    with pa_ipc.new_file(sink, batches[0].schema) as w:
        for b in batches:
            w.write_batch(b)
    data = bytearray(sink.getvalue())
    frames = [f for f in X.file_frames(bytes(data)) if f.header_type == X.HEADER_RECORD_BATCH]
    struct.pack_into("<H", data, frames[bad].record_batch().vtable + 4, 0xFFF0)
    return bytes(data)


@pytest.mark.parametrize("bad", [0, 2, 4])
def test_api_rescues_what_the_command_rescues_from_a_file_with_one_bad_header(capsys, tmp_path,
                                                                            bad):
    from arrowipc import ipc
    batches = sample_batches()
    data = file_with_bad_header(batches, bad)
    src = tmp_path / "bad.arrow"
    src.write_bytes(data)
    r = run(capsys, "recover", src, tmp_path / "cli.arrow")
    assert r.status == EXIT_OK, r.err
    by_cli = recovered(tmp_path / "cli.arrow")
    assert by_cli.equals(pa.Table.from_batches(batches[:bad], schema=batches[0].schema))
    sink = io.BytesIO()
    report = ipc.recover(data, sink)
    assert pa_ipc.open_file(sink.getvalue()).read_all().equals(by_cli)
    assert (report.num_batches, report.used_footer, report.complete) == (bad, False, False)
    assert "flatbuffer RecordBatch" in report.error and "stopped at byte" in r.out
    reader = ipc.open_file(data, recover=True)
    assert reader.num_record_batches == bad and reader.recovery.num_batches == bad
    assert reader.recovery.end == report.end
    assert pa.table(reader.read_all()).equals(by_cli)


def test_api_rescues_the_batches_before_one_that_fails_its_checks(tmp_path):
    """A batch whose header decodes but whose field node claims more nulls than rows: the
    footer's reader would hand it out; recover keeps the batches before it, as the scan does."""
    from arrowipc import ipc
    batches = sample_batches()
    sink = io.BytesIO()
    with pa_ipc.new_file(sink, batches[0].schema) as w:
        for b in batches:
            w.write_batch(b)
    data = bytearray(sink.getvalue())
    frames = [f for f in X.file_frames(bytes(data)) if f.header_type == X.HEADER_RECORD_BATCH]
    node = bytes(data).find(struct.pack("<qq", 10, 0), frames[3].meta_start, frames[3].body_start)
    struct.pack_into("<q", data, node + 8, 11)          # null count 11 of 10 rows
    out = io.BytesIO()
    report = ipc.recover(bytes(data), out)
    assert report.num_batches == 3 and "null count 11" in report.error
    assert pa_ipc.open_file(out.getvalue()).read_all().equals(
        pa.Table.from_batches(batches[:3], schema=batches[0].schema))
