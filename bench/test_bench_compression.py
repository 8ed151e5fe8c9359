"""Compressed IPC side by side: LZ4_FRAME and ZSTD write and read of the 5M-row table (issue 4).

Groups are "write_stream_<codec>-wide5m" and "read_stream_<codec>-wide5m"; bench/ratios.py lists
them with the others. Each library reads its own compressed stream (the same data, the same codec
and level defaults), and the output sizes are recorded in extra_info and printed by -s.

Run: python -m pytest bench/test_bench_compression.py --benchmark-enable
"""
from __future__ import annotations

import pyarrow as pa
import pytest

CODECS = ["lz4", "zstd"]
LIBS = ["arrowipc", "pyarrow"]


def _write(lib, table, codec):
    if lib == "pyarrow":
        sink = pa.BufferOutputStream()
        with pa.ipc.new_stream(sink, table.schema,
                               options=pa.ipc.IpcWriteOptions(compression=codec)) as w:
            w.write_table(table)
        return sink.getvalue()
    import arrowipc
    from arrowipc import ipc
    sink = arrowipc.BufferOutputStream()
    with ipc.new_stream(sink, table.schema, options=ipc.IpcWriteOptions(compression=codec)) as w:
        w.write_table(table)
    return sink.getvalue()


def _read(lib, data):
    if lib == "pyarrow":
        return list(pa.ipc.open_stream(data))
    from arrowipc import ipc
    return list(ipc.open_stream(data))


def _table(lib, ds):
    if lib == "pyarrow":
        return ds.table
    import arrowipc
    return arrowipc.table(ds.table)          # zero-copy import, outside the timed region


@pytest.mark.parametrize("lib", LIBS)
@pytest.mark.parametrize("codec", CODECS)
def test_write_stream_compressed(benchmark, datasets, codec, lib):
    ds = datasets.get("wide5m")
    table = _table(lib, ds)
    benchmark.group = f"write_stream_{codec}-wide5m"
    benchmark.extra_info.update(lib=lib, codec=codec)
    out = benchmark.pedantic(_write, args=(lib, table, codec), rounds=5, iterations=1,
                             warmup_rounds=1)
    benchmark.extra_info["bytes"] = len(out)
    assert pa.ipc.open_stream(pa.py_buffer(memoryview(out))).read_all().equals(ds.table)


@pytest.mark.parametrize("lib", LIBS)
@pytest.mark.parametrize("codec", CODECS)
def test_read_stream_compressed(benchmark, datasets, codec, lib):
    ds = datasets.get("wide5m")
    data = _write(lib, _table(lib, ds), codec)
    data = pa.py_buffer(memoryview(data)) if lib == "pyarrow" else data
    benchmark.group = f"read_stream_{codec}-wide5m"
    benchmark.extra_info.update(lib=lib, codec=codec, bytes=len(data))
    batches = benchmark.pedantic(_read, args=(lib, data), rounds=5, iterations=1, warmup_rounds=1)
    assert sum(b.num_rows for b in batches) == ds.num_rows
    assert pa.record_batch(batches[-1]).equals(ds.batches[-1])
