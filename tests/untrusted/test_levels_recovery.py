"""Validation levels (when checks run), file recovery and atomic path writes."""
import os
import signal
import subprocess
import sys
import textwrap

import pytest

pa = pytest.importorskip("pyarrow")

import arrowipc  # noqa: E402
from arrowipc import ipc  # noqa: E402
from arrowipc.errors import ArrowInvalid  # noqa: E402

from crafting import Crafted, file_bytes, stream_bytes  # noqa: E402


def rb(**cols):
    return pa.record_batch(list(cols.values()), names=list(cols))


GOOD = rb(s=pa.array(["ab", "c", None]), i=pa.array([1, 2, 3]))


def broken_offsets_stream():
    c = Crafted(stream_bytes([GOOD, GOOD]))
    c.write_value(c.batch(1), 1, "i", 3, 100)        # 2nd batch: last offset beyond the data
    return c.bytes()


def bad_utf8_stream():
    c = Crafted(stream_bytes([GOOD, GOOD]))
    c.write_bytes(c.batch(1), 2, 0, b"\xff")
    return c.bytes()


def opts(level):
    return ipc.IpcReadOptions(validate=level)


# -- levels ------------------------------------------------------------------------------------

def test_structural_checks_run_before_any_data_is_handed_out():
    batches = list(ipc.open_stream(broken_offsets_stream()))
    assert [b.num_rows for b in batches] == [3, 3]        # reading itself is cheap and lazy
    assert batches[0].to_pydict() == GOOD.to_pydict()
    for access in (lambda b: b.column(0), lambda b: b.to_pylist(), lambda b: b.slice(1),
                   lambda b: pa.record_batch(b), lambda b: b.columns):
        with pytest.raises(ArrowInvalid, match="last offset 100 is beyond the end of the data"):
            access(batches[1])                          # every access path, every time


def test_full_validation_raises_on_the_read_itself():
    reader = ipc.open_stream(bad_utf8_stream(), options=opts("full"))
    assert reader.read_next_batch().to_pydict() == GOOD.to_pydict()
    with pytest.raises(ArrowInvalid, match="field 's': value 0 is not valid UTF-8"):
        reader.read_next_batch()
    # the default level does not look at values
    assert len(list(ipc.open_stream(bad_utf8_stream()))) == 2


def test_full_validation_of_a_file_reader():
    c = Crafted(file_bytes([GOOD, GOOD]), start=8)
    c.write_bytes(c.batch(1), 2, 0, b"\xff")
    reader = ipc.open_file(c.bytes(), options=opts("full"))
    reader.get_batch(0)
    with pytest.raises(ArrowInvalid, match="file: field 's': value 0 is not valid UTF-8"):
        reader.get_batch(1)


def test_full_validation_checks_dictionaries_once_when_they_arrive():
    batch = rb(d=pa.array(["x", "y", "x"]).dictionary_encode())
    c = Crafted(stream_bytes([batch]))
    c.write_bytes(c.dictionary(), 2, 0, b"\xff")
    with pytest.raises(ArrowInvalid, match="stream: dictionary 0: value 0 is not valid UTF-8"):
        list(ipc.open_stream(c.bytes(), options=opts("full")))
    assert len(list(ipc.open_stream(c.bytes()))) == 1


def test_none_skips_the_checks():
    # (only the absence of a check is asserted: touching the values would read out of bounds)
    batches = list(ipc.open_stream(broken_offsets_stream(), options=opts("none")))
    assert batches[1]._pending is None
    assert len(batches[1]._columns) == 2


def test_levels_agree_on_valid_data():
    data = stream_bytes([GOOD] * 3)
    want = [GOOD.to_pylist()] * 3
    for level in ("structural", "full", "none"):
        assert [b.to_pylist() for b in ipc.open_stream(data, options=opts(level))] == want


# -- recovery ----------------------------------------------------------------------------------

BATCHES = [rb(s=pa.array([f"v{i}", None]), i=pa.array([i, i + 1])) for i in range(4)]
TABLE = pa.Table.from_batches(BATCHES)


def headless_file():
    """A file whose writer died after its third batch: magic and messages, no footer."""
    data = file_bytes(BATCHES)
    c = Crafted(data, start=8)
    return data[:c.batch(2).body_start + c.batch(2).body_len]


def pa_read_file(data) -> pa.Table:
    return pa.ipc.open_file(pa.py_buffer(data)).read_all()


def test_open_file_with_recover_reads_a_file_without_footer():
    data = headless_file()
    with pytest.raises(ArrowInvalid, match="expected the magic at the end"):
        ipc.open_file(data)
    reader = ipc.open_file(data, recover=True)
    assert isinstance(reader, ipc.RecoveredFileReader)
    assert reader.num_record_batches == 3
    assert pa.table(reader.read_all()).equals(TABLE.slice(0, 6))
    r = reader.recovery
    assert (r.complete, r.used_footer, r.num_batches, r.num_rows, r.end) == (False, False, 3, 6, len(data))
    assert "without an end-of-stream marker" in r.error and "footer" not in r.error


def test_recover_writes_a_valid_file(tmp_path):
    src, dst = tmp_path / "broken.arrow", tmp_path / "fixed.arrow"
    src.write_bytes(headless_file())
    report = arrowipc.recover(str(src), str(dst))
    assert report.num_batches == 3 and not report.complete
    assert pa_read_file(dst.read_bytes()).equals(TABLE.slice(0, 6))


def test_recover_a_damaged_footer_keeps_every_batch():
    data = bytearray(file_bytes(BATCHES))
    data[-20:-12] = b"\xee" * 8                      # inside the footer flatbuffer
    reader = ipc.open_file(bytes(data), recover=True)
    assert reader.num_record_batches == 4
    assert reader.recovery.complete is False and reader.recovery.error.startswith("the footer is unusable")
    sink = arrowipc.BufferOutputStream()
    ipc.recover(bytes(data), sink)
    assert pa_read_file(sink.getvalue().to_pybytes()).equals(TABLE)


def test_recover_a_footer_pointing_at_the_wrong_place():
    data = bytearray(file_bytes(BATCHES))
    c = Crafted(bytes(data), start=8)
    first = c.batch(0).start.to_bytes(8, "little")
    at = bytes(data).rfind(first)                    # the first block's offset, in the footer
    data[at:at + 8] = (c.batch(1).start + 8).to_bytes(8, "little")
    reader = ipc.open_file(bytes(data), recover=True)
    assert isinstance(reader, ipc.RecoveredFileReader) and reader.num_record_batches == 4


def test_recover_an_intact_file_uses_its_footer():
    data = file_bytes(BATCHES)
    reader = ipc.open_file(data, recover=True)
    assert isinstance(reader, ipc.RecordBatchFileReader)
    r = reader.recovery
    assert (r.complete, r.used_footer, r.num_batches, r.num_rows) == (True, True, 4, 8)


def test_recover_a_truncated_stream():
    data = stream_bytes(BATCHES)
    c = Crafted(data)
    cut = c.batch(3).start + 10
    sink = arrowipc.BufferOutputStream()
    report = ipc.recover(data[:cut], sink)
    assert (report.num_batches, report.end, report.complete) == (3, c.batch(3).start, False)
    assert "truncated message at byte" in report.error
    assert pa_read_file(sink.getvalue().to_pybytes()).equals(TABLE.slice(0, 6))


def test_recover_with_nothing_to_rescue():
    with pytest.raises(ArrowInvalid, match="nothing to recover"):
        ipc.recover(b"ARROW1\0\0garbage that is no stream")
    with pytest.raises(ArrowInvalid, match="nothing to recover"):
        ipc.open_file(b"ARROW1\0\0", recover=True)


# -- atomic path writes ------------------------------------------------------------------------

def test_path_write_appears_only_when_closed(tmp_path):
    path = tmp_path / "out.arrow"
    schema = arrowipc.schema(GOOD.schema)
    with ipc.new_file(str(path), schema) as w:
        w.write_batch(arrowipc.record_batch(GOOD))
        assert not path.exists()
        assert len(list(tmp_path.iterdir())) == 1     # the temporary file, same directory
    assert sorted(os.listdir(tmp_path)) == ["out.arrow"]
    assert pa_read_file(path.read_bytes()).equals(pa.Table.from_batches([GOOD]))


def test_error_inside_the_block_keeps_the_previous_file(tmp_path):
    # the file writer writes a path atomically (a documented difference from pyarrow)
    path = tmp_path / "out.arrow"
    path.write_bytes(b"previous contents")
    os.chmod(path, 0o640)
    schema = arrowipc.schema(GOOD.schema)
    with pytest.raises(RuntimeError):
        with ipc.new_file(path, schema) as w:
            w.write_batch(arrowipc.record_batch(GOOD))
            raise RuntimeError("boom")
    assert path.read_bytes() == b"previous contents"
    assert os.listdir(tmp_path) == ["out.arrow"]
    with ipc.new_file(path, schema) as w:            # a successful write replaces it
        w.write_batch(arrowipc.record_batch(GOOD))
    assert os.stat(path).st_mode & 0o777 == 0o640    # with the same permissions
    assert pa.ipc.open_file(path.read_bytes()).read_all().num_rows == 3


def test_killed_writer_leaves_no_truncated_file(tmp_path):
    path = tmp_path / "big.arrow"
    script = textwrap.dedent(f"""
        import sys, arrowipc
        from arrowipc import ipc
        batch = arrowipc.record_batch({{"x": list(range(100000))}})
        w = ipc.new_file({str(path)!r}, batch.schema)
        w.write_batch(batch)
        print("written", flush=True)
        sys.stdin.readline()          # killed while waiting here, before close()
    """)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    proc = subprocess.Popen([sys.executable, "-c", script], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, env=env, text=True)
    try:
        assert proc.stdout.readline().strip() == "written"
        proc.send_signal(signal.SIGKILL)
    finally:
        proc.wait()
    assert not path.exists()
    leftovers = os.listdir(tmp_path)
    assert len(leftovers) == 1 and leftovers[0].startswith(".big.arrow.")
    # what the dead writer left behind is recoverable
    report = ipc.recover(str(tmp_path / leftovers[0]), str(path))
    assert report.num_batches == 1 and report.num_rows == 100000


def test_writing_to_a_device_path_is_not_renamed():
    with ipc.new_stream("/dev/null", arrowipc.schema(GOOD.schema)) as w:
        w.write_batch(arrowipc.record_batch(GOOD))
    assert os.path.exists("/dev/null") and not os.path.isfile("/dev/null")
