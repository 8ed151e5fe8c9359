"""A stream written to a path is written through under its own name, as pyarrow's (issue 34, D2).

The file exists from the schema message on and grows batch by batch, in order, so a reader in
another process follows it; an error inside `with` leaves the batches written so far, ended as
pyarrow ends them; a writer never closed warns and keeps them. File writers still write a
temporary file renamed on close (tests/untrusted/test_levels_recovery.py).
"""
from __future__ import annotations

import gc
import os
import subprocess
import sys

import numpy as np
import pyarrow as pa
import pytest

import arrowipc
from arrowipc import ipc

# The other process: follows the growing file with a file object whose read waits until the
# bytes asked for are there (a reader at the end of a file another process writes sees a short
# read, not the end), and reads one batch each time the writer says it wrote one.
FOLLOWER = r"""
import sys, time
import pyarrow as pa

path, library = sys.argv[1], sys.argv[2]
deadline = time.monotonic() + float(sys.argv[3])     # a hang guard, not a measurement


class Following:
    def __init__(self, path):
        self.f = open(path, "rb", buffering=0)
        self.closed = False

    def readable(self):
        return True

    def read(self, n=-1):
        assert n >= 0, "the reader asked for the rest of a file still being written"
        got = bytearray()
        while len(got) < n:
            chunk = self.f.read(n - len(got))
            if chunk:
                got += chunk
            elif time.monotonic() > deadline:
                raise SystemExit(f"waited in vain for byte {self.f.tell() + n - len(got)}")
            else:
                time.sleep(0.001)                    # the writer's next bytes are on their way
        return bytes(got)


reader = None
for line in sys.stdin:
    if reader is None:
        if library == "arrowipc":
            from arrowipc import ipc
            reader = ipc.open_stream(Following(path))
        else:
            reader = pa.ipc.open_stream(Following(path))
    if line.strip() == "end":
        try:
            reader.read_next_batch()
        except StopIteration:
            print("end", flush=True)
        continue
    batch = pa.record_batch(reader.read_next_batch())
    x = batch.column(0)
    print(line.strip(), batch.num_rows, x[0].as_py(), x[len(x) - 1].as_py(), flush=True)
"""

ROWS = 300_000          # 2.4 MB of int64 per batch: written in the background (over 1 MiB)


def batches(count: int) -> list[pa.RecordBatch]:
    return [pa.record_batch({"x": np.arange(k * ROWS, (k + 1) * ROWS, dtype=np.int64)})
            for k in range(count)]


@pytest.mark.parametrize("codec", [None, "lz4"])
@pytest.mark.parametrize("library", ["arrowipc", "pyarrow"])
def test_another_process_reads_each_batch_before_the_next_is_written(tmp_path, library, codec):
    path = tmp_path / "growing.arrows"
    written = batches(4)
    writer = ipc.new_stream(path, arrowipc.schema(written[0].schema),
                            options=ipc.IpcWriteOptions(compression=codec))
    follower = subprocess.Popen([sys.executable, "-c", FOLLOWER, str(path), library, "120"],
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    in_flight = 0
    try:
        assert follower.stdin is not None and follower.stdout is not None
        for k, batch in enumerate(written):
            writer.write_batch(arrowipc.record_batch(batch))
            in_flight += writer._sink._pending is not None   # still being written in the background
            follower.stdin.write(f"{k}\n")
            follower.stdin.flush()
            # the other process has batch k whole while batch k + 1 is not written yet
            assert follower.stdout.readline().split() == [
                str(k), str(ROWS), str(k * ROWS), str((k + 1) * ROWS - 1)]
        writer.close()
        follower.stdin.write("end\n")
        follower.stdin.flush()
        assert follower.stdout.readline() == "end\n"     # the end-of-stream marker follows
        # compressed, each batch (1.2 MB) was still being written when write_batch returned
        assert in_flight == (len(written) if codec else 0)
    finally:
        writer.close()
        follower.kill()
        follower.communicate()
    assert os.listdir(tmp_path) == ["growing.arrows"]     # no temporary file beside it
    assert pa.ipc.open_stream(path.read_bytes()).read_all().equals(
        pa.Table.from_batches(written))


@pytest.mark.parametrize("codec", [None, "lz4"])
def test_an_error_inside_with_leaves_the_batches_written_ended_as_pyarrow(tmp_path, codec):
    written = batches(2)
    for name, opener, schema, wrap in (
            ("ours.arrows", ipc.new_stream, arrowipc.schema(written[0].schema),
             arrowipc.record_batch),
            ("theirs.arrows", pa.ipc.new_stream, written[0].schema, lambda b: b)):
        path = tmp_path / name
        path.write_bytes(b"previous contents")
        options = (ipc.IpcWriteOptions if opener is ipc.new_stream else pa.ipc.IpcWriteOptions)(
            compression=codec)
        with pytest.raises(RuntimeError, match="boom"):
            with opener(str(path), schema, options=options) as w:
                for b in written:
                    w.write_batch(wrap(b))
                raise RuntimeError("boom")
    ours, theirs = ((tmp_path / n).read_bytes() for n in ("ours.arrows", "theirs.arrows"))
    assert theirs[-8:] == ours[-8:] == b"\xff\xff\xff\xff\x00\x00\x00\x00"   # ended, as pyarrow
    assert pa.ipc.open_stream(ours).read_all().equals(pa.ipc.open_stream(theirs).read_all())
    assert ipc.open_stream(ours).read_all().num_rows == 2 * ROWS


def test_an_unclosed_stream_writer_shows_its_batches_then_warns_and_ends_them(tmp_path):
    path = tmp_path / "dropped.arrows"
    batch = pa.record_batch({"x": [1, 2, 3]})
    w = ipc.new_stream(path, arrowipc.schema(batch.schema))
    w.write_batch(arrowipc.record_batch(batch))
    w.write_batch(arrowipc.record_batch(batch))
    # while it is open: the batches written are in the file (a stream without its end yet)
    assert pa.ipc.open_stream(path.read_bytes()).read_all().num_rows == 6
    with pytest.warns(ResourceWarning, match=r"RecordBatchStreamWriter for .*dropped\.arrows "
                                             r"was never closed; closed now, ending it after "
                                             r"the batches written"):
        del w
        gc.collect()
    data = path.read_bytes()
    assert data.endswith(b"\xff\xff\xff\xff\x00\x00\x00\x00")
    assert pa.ipc.open_stream(data).read_all().num_rows == 6


def test_a_stream_replaces_the_previous_file_rather_than_truncating_it(tmp_path):
    # a process still reading the previous file keeps its bytes; the name keeps its permissions
    path = tmp_path / "out.arrows"
    path.write_bytes(b"previous contents")
    os.chmod(path, 0o640)
    with open(path, "rb") as previous:
        batch = arrowipc.record_batch({"x": [1, 2, 3]})
        with ipc.new_stream(path, batch.schema) as w:
            w.write_batch(batch)
            assert previous.read() == b"previous contents"
    assert os.stat(path).st_mode & 0o777 == 0o640
    assert pa.ipc.open_stream(path.read_bytes()).read_all().num_rows == 3
    assert os.listdir(tmp_path) == ["out.arrows"]
