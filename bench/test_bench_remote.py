"""Remote reads: what a projected or single-batch read costs, arrowipc against pyarrow.

* `test_file_object_cost`: bytes and read calls on one counting file object (pyarrow through
  pa.PythonFile), for a 1-of-8-column read, the last batch with two columns and one whole batch.
  Targets: at most 1.05x pyarrow's bytes and no more requests (asserted).
* `test_s3_projected_read_interleaved`: wall time of a 1-of-8-column read from a local S3 server
  (moto, 127.0.0.1), arrowipc (s3fs ranges) against pyarrow through fsspec (pa.PythonFile) and
  pyarrow's own S3FileSystem, rounds interleaved, reported as ratios.

Run: python -m pytest bench/test_bench_remote.py --benchmark-enable -s
"""
from __future__ import annotations

import os
import statistics
import time

import numpy as np
import pyarrow as pa
import pyarrow.ipc as pa_ipc
import pytest

from arrowipc import ipc
from tests.remote_servers import BUCKET, CREDENTIALS, CountingFile, s3_filesystem, s3_server

ROWS = int(os.environ.get("ARROWIPC_BENCH_REMOTE_ROWS", 2_000_000))
COLS, BATCHES, ROUNDS = 8, 8, 5


@pytest.fixture(scope="module")
def wide_file() -> bytes:
    table = pa.table({f"c{i}": np.arange(ROWS, dtype=np.int64) + i for i in range(COLS)})
    sink = pa.BufferOutputStream()
    with pa_ipc.new_file(sink, table.schema) as writer:
        for batch in table.to_batches(max_chunksize=ROWS // BATCHES):
            writer.write_batch(batch)
    return sink.getvalue().to_pybytes()


CASES = {"1 of 8 columns, all batches": ([3], None),
         "last batch, 2 columns": ([1, 5], BATCHES - 1),
         "one batch, all columns": (None, 3)}


def _read(lib, f, included, batch):
    if lib == "pyarrow":
        reader = pa_ipc.open_file(pa.PythonFile(f, mode="r"),
                                  options=pa_ipc.IpcReadOptions(included_fields=included))
    else:
        reader = ipc.open_file(f, options=ipc.IpcReadOptions(included_fields=included))
    return reader.read_all() if batch is None else reader.get_batch(batch)


def test_file_object_cost(wide_file, capsys):
    rows = []
    for name, (included, batch) in CASES.items():
        cost = {}
        for lib in ("arrowipc", "pyarrow"):
            f = CountingFile(wide_file)
            result = _read(lib, f, included, batch)
            cost[lib] = (len(f.reads), f.nbytes, result)
        assert pa.table(cost["arrowipc"][2]).equals(pa.table(cost["pyarrow"][2]))
        (req, nbytes, _), (their_req, their_bytes, _) = cost["arrowipc"], cost["pyarrow"]
        rows.append((name, req, their_req, nbytes, their_bytes))
        assert req <= their_req and nbytes <= 1.05 * their_bytes, name
    with capsys.disabled():
        print(f"\n| {ROWS} rows x {COLS} int64 columns, {BATCHES} batches, one file object "
              f"| arrowipc requests | pyarrow requests | arrowipc MB | pyarrow MB | bytes ratio |")
        print("| --- | ---: | ---: | ---: | ---: | ---: |")
        for name, req, their_req, nbytes, their_bytes in rows:
            print(f"| {name} | {req} | {their_req} | {nbytes / 1e6:.2f} | {their_bytes / 1e6:.2f} "
                  f"| {nbytes / their_bytes:.3f}x |")


def test_s3_projected_read_interleaved(wide_file, capsys):
    pytest.importorskip("s3fs")
    pytest.importorskip("moto")
    from pyarrow import fs as pa_fs
    with s3_server() as (endpoint, requests):
        fs = s3_filesystem(endpoint)
        key = f"{BUCKET}/wide.arrow"
        fs.pipe(key, wide_file)
        pa_s3 = pa_fs.S3FileSystem(access_key=CREDENTIALS["key"],
                                   secret_key=CREDENTIALS["secret"], region="us-east-1",
                                   endpoint_override=endpoint.split("//")[1], scheme="http")
        opts = ipc.IpcReadOptions(included_fields=[3])
        their_opts = pa_ipc.IpcReadOptions(included_fields=[3])

        def ours():
            return ipc.open_file(f"s3://{key}", filesystem=fs, options=opts).read_all()

        def pyarrow_fsspec():
            with fs.open(key, "rb") as f:
                return pa_ipc.open_file(pa.PythonFile(f, mode="r"), options=their_opts).read_all()

        def pyarrow_s3():
            with pa_s3.open_input_file(key) as f:
                return pa_ipc.open_file(f, options=their_opts).read_all()

        funcs = {"arrowipc (s3fs)": ours, "pyarrow (fsspec via PythonFile)": pyarrow_fsspec,
                 "pyarrow (S3FileSystem)": pyarrow_s3}
        expected = pa.table(pyarrow_s3())
        for func in funcs.values():             # warm-up, and every result is right
            assert pa.table(func()).equals(expected)
        times = {name: [] for name in funcs}
        wire = {}
        names = list(funcs)
        for r in range(ROUNDS):
            for name in (names if r % 2 == 0 else names[::-1]):
                requests.clear()
                start = time.perf_counter()
                funcs[name]()
                times[name].append(time.perf_counter() - start)
                wire[name] = (len(requests.gets("/wide.arrow")),
                              requests.get_bytes("/wide.arrow"))
    med = {name: statistics.median(v) for name, v in times.items()}
    base = med["arrowipc (s3fs)"]
    with capsys.disabled():
        print(f"\n| S3 (local moto), {len(wide_file) / 1e6:.0f} MB file, 1 of {COLS} columns, "
              f"{ROUNDS} interleaved rounds | ms | GET requests | MB on the wire | "
              f"arrowipc time / this time |")
        print("| --- | ---: | ---: | ---: | ---: |")
        for name in names:
            print(f"| {name} | {med[name] * 1000:.0f} | {wire[name][0]} | "
                  f"{wire[name][1] / 1e6:.2f} | {base / med[name]:.2f}x |")
