"""Side-by-side IPC benchmarks: arrowipc and pyarrow on the same data.

Every (operation, dataset) pair is one benchmark group, e.g. "write_stream-wide5m",
holding one arrowipc and one pyarrow run, so `--benchmark-group-by=group` and
bench/ratios.py compare like with like. Each library sits behind a small adapter
with the same five operations; conversions happen outside the timed region.
After timing, each result is checked against pyarrow so a fast wrong answer fails.

Run: python -m pytest bench --benchmark-enable
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import pyarrow as pa
import pytest

if TYPE_CHECKING:
    from conftest import Dataset

LIBS = ["arrowipc", "pyarrow"]


class PyarrowIPC:
    """pyarrow.ipc, used the way its documentation recommends."""

    def prepare(self, ds: Dataset):
        return ds.table.schema, ds.batches

    def write_stream(self, schema, batches):
        sink = pa.BufferOutputStream()
        with pa.ipc.new_stream(sink, schema) as writer:
            for batch in batches:
                writer.write_batch(batch)
        return sink.getvalue()

    def write_file(self, schema, batches):
        sink = pa.BufferOutputStream()
        with pa.ipc.new_file(sink, schema) as writer:
            for batch in batches:
                writer.write_batch(batch)
        return sink.getvalue()

    def read_stream_bytes(self, data: bytes):
        return list(pa.ipc.open_stream(data))

    def read_file_path(self, path: str):
        reader = pa.ipc.open_file(pa.memory_map(path))
        return [reader.get_batch(i) for i in range(reader.num_record_batches)]

    def iterate_batches(self, data: bytes) -> int:
        rows = 0
        for batch in pa.ipc.open_stream(data):
            rows += batch.num_rows
        return rows


class ArrowipcIPC:
    """arrowipc.ipc with the same calls; input imported zero-copy from pyarrow."""

    def __init__(self):
        import arrowipc
        import arrowipc.ipc

        self.arrowipc = arrowipc
        self.ipc = arrowipc.ipc
        self._tables: dict[str, object] = {}

    def prepare(self, ds: Dataset):
        if ds.name not in self._tables:
            self._tables[ds.name] = self.arrowipc.table(ds.table)  # PyCapsule import
        table = self._tables[ds.name]
        return table.schema, table.to_batches()

    def write_stream(self, schema, batches):
        sink = self.arrowipc.BufferOutputStream()
        with self.ipc.new_stream(sink, schema) as writer:
            for batch in batches:
                writer.write_batch(batch)
        return sink.getvalue()

    def write_file(self, schema, batches):
        sink = self.arrowipc.BufferOutputStream()
        with self.ipc.new_file(sink, schema) as writer:
            for batch in batches:
                writer.write_batch(batch)
        return sink.getvalue()

    def read_stream_bytes(self, data: bytes):
        return list(self.ipc.open_stream(data))

    def read_file_path(self, path: str):
        reader = self.ipc.open_file(path, memory_map=True)       # mapped, as pyarrow's above
        return [reader.get_batch(i) for i in range(reader.num_record_batches)]

    def iterate_batches(self, data: bytes) -> int:
        rows = 0
        for batch in self.ipc.open_stream(data):
            rows += batch.num_rows
        return rows


_ADAPTERS: dict[str, object] = {}


def adapter_for(lib: str):
    # Built on first use so a missing arrowipc API fails only the arrowipc half.
    if lib not in _ADAPTERS:
        _ADAPTERS[lib] = PyarrowIPC() if lib == "pyarrow" else ArrowipcIPC()
    return _ADAPTERS[lib]


def run_timed(benchmark, ds: Dataset, lib: str, operation: str, func, *args):
    benchmark.group = f"{operation}-{ds.name}"
    benchmark.extra_info.update(
        lib=lib, operation=operation, dataset=ds.name,
        rows=ds.num_rows, batches=ds.num_batches,
    )
    return benchmark.pedantic(func, args=args, rounds=ds.rounds, iterations=1, warmup_rounds=1)


def assert_same_batches(batches, ds: Dataset):
    assert len(batches) == ds.num_batches
    assert sum(b.num_rows for b in batches) == ds.num_rows
    # Import through the C data interface so arrowipc batches are compared too.
    for index in (0, len(batches) - 1):
        assert pa.record_batch(batches[index]).equals(ds.batches[index])


def assert_stream_holds(written, ds: Dataset):
    table = pa.ipc.open_stream(pa.py_buffer(written)).read_all()
    assert table.equals(ds.table)


def assert_file_holds(written, ds: Dataset):
    reader = pa.ipc.open_file(pa.py_buffer(written))
    assert reader.num_record_batches == ds.num_batches
    assert reader.read_all().equals(ds.table)


# `dataset_name` is parametrized by conftest.pytest_generate_tests.
lib_param = pytest.mark.parametrize("lib", LIBS)


@lib_param
def test_write_stream(benchmark, datasets, dataset_name, lib):
    ds = datasets.get(dataset_name)
    ipc = adapter_for(lib)
    schema, batches = ipc.prepare(ds)
    written = run_timed(benchmark, ds, lib, "write_stream", ipc.write_stream, schema, batches)
    assert_stream_holds(written, ds)


@lib_param
def test_write_file(benchmark, datasets, dataset_name, lib):
    ds = datasets.get(dataset_name)
    ipc = adapter_for(lib)
    schema, batches = ipc.prepare(ds)
    written = run_timed(benchmark, ds, lib, "write_file", ipc.write_file, schema, batches)
    assert_file_holds(written, ds)


@lib_param
def test_read_stream_bytes(benchmark, datasets, dataset_name, lib):
    ds = datasets.get(dataset_name)
    ipc = adapter_for(lib)
    batches = run_timed(benchmark, ds, lib, "read_stream_bytes", ipc.read_stream_bytes, ds.stream_bytes)
    assert_same_batches(batches, ds)


@lib_param
def test_read_file_path(benchmark, datasets, dataset_name, lib):
    ds = datasets.get(dataset_name)
    ipc = adapter_for(lib)
    batches = run_timed(benchmark, ds, lib, "read_file_path", ipc.read_file_path, ds.file_path)
    assert_same_batches(batches, ds)


@lib_param
def test_iterate_batches(benchmark, datasets, dataset_name, lib):
    ds = datasets.get(dataset_name)
    ipc = adapter_for(lib)
    rows = run_timed(benchmark, ds, lib, "iterate_batches", ipc.iterate_batches, ds.stream_bytes)
    assert rows == ds.num_rows
