"""Datasets for the arrowipc-vs-pyarrow IPC benchmarks.

Each dataset is built once per session with numpy and pyarrow (pyarrow is the
oracle here, never a dependency of the package), already chunked into the
batches the benchmarks write, and also serialized once by pyarrow as a stream
(bytes) and as a file (on disk) for the read benchmarks. Datasets are built
lazily so `-k cols1000` does not pay for the 5M-row one.
"""
from __future__ import annotations

import dataclasses
import os
import sys
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest

# Make the in-place build of arrowipc importable however pytest is started.
REPO_ROOT = Path(__file__).resolve().parent.parent
if str(REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(REPO_ROOT))

# Timed rounds per dataset: few for the big one so the whole suite stays short.
ROUNDS = {"wide5m": 5, "small1k": 10, "cols1000": 20}
DATASET_NAMES = tuple(ROUNDS)
SEED = 20240501


@dataclasses.dataclass
class Dataset:
    name: str
    table: pa.Table                 # chunk boundaries == batch boundaries
    batches: list[pa.RecordBatch]
    stream_bytes: bytes             # written by pyarrow.ipc.new_stream
    file_path: str                  # written by pyarrow.ipc.new_file
    rounds: int

    @property
    def num_rows(self) -> int:
        return self.table.num_rows

    @property
    def num_batches(self) -> int:
        return len(self.batches)


def _short_string_pool(rng: np.random.Generator, size: int = 4096) -> pa.Array:
    # Strings of 1..16 characters; values are drawn from this pool by index so
    # building millions of them never goes through Python str objects.
    lengths = rng.integers(1, 17, size=size)
    alphabet = np.frombuffer(b"abcdefghijklmnopqrstuvwxyz0123456789", dtype=np.uint8)
    chars = alphabet[rng.integers(0, alphabet.size, size=int(lengths.sum()))]
    offsets = np.zeros(size + 1, dtype=np.int32)
    np.cumsum(lengths, out=offsets[1:])
    return pa.Array.from_buffers(
        pa.string(), size, [None, pa.py_buffer(offsets), pa.py_buffer(chars.tobytes())]
    )


def _mixed_batch(rng: np.random.Generator, pool: pa.Array, num_rows: int) -> pa.RecordBatch:
    """int64, float64, int32 with ~10% nulls, short utf8, bool."""
    ints32 = rng.integers(-(2**31), 2**31 - 1, size=num_rows, dtype=np.int32)
    null_mask = rng.random(num_rows) < 0.10
    return pa.RecordBatch.from_arrays(
        [
            pa.array(rng.integers(-(2**62), 2**62, size=num_rows, dtype=np.int64)),
            pa.array(rng.standard_normal(num_rows)),
            pa.array(ints32, mask=null_mask),
            pool.take(pa.array(rng.integers(0, len(pool), size=num_rows, dtype=np.int32))),
            pa.array(rng.random(num_rows) < 0.5),
        ],
        names=["i64", "f64", "i32_nulls", "utf8", "flag"],
    )


def _mixed_batches(num_rows: int, batch_rows: int) -> list[pa.RecordBatch]:
    rng = np.random.default_rng(SEED)
    pool = _short_string_pool(rng)
    return [
        _mixed_batch(rng, pool, min(batch_rows, num_rows - start))
        for start in range(0, num_rows, batch_rows)
    ]


def _wide_float_batches(num_columns: int, num_rows: int) -> list[pa.RecordBatch]:
    rng = np.random.default_rng(SEED)
    values = rng.standard_normal((num_columns, num_rows))
    return [
        pa.RecordBatch.from_arrays(
            [pa.array(values[i]) for i in range(num_columns)],
            names=[f"c{i}" for i in range(num_columns)],
        )
    ]


def _ints8_batches(num_rows: int) -> list[pa.RecordBatch]:
    """Eight int64 columns of values below a million: buffers many, equal and codec-bound."""
    rng = np.random.default_rng(SEED)
    return [
        pa.RecordBatch.from_arrays(
            [pa.array(rng.integers(0, 10**6, num_rows)) for _ in range(8)],
            names=[f"i{i}" for i in range(8)],
        )
    ]


def _trips_batches(num_rows: int) -> list[pa.RecordBatch]:
    """A trip-record table (sorted timestamps, small codes, rounded amounts with nulls, a few
    repeated strings) in one batch."""
    rng = np.random.default_rng(SEED)
    start = np.sort(rng.integers(1_700_000_000 * 10**6, 1_702_592_000 * 10**6, num_rows))
    zones = np.array([f"Zone {i} {'North' if i % 3 else 'South'}" for i in range(263)])
    payments = np.array(["Credit card", "Cash", "No charge", "Dispute", "Unknown"])
    return [
        pa.RecordBatch.from_arrays(
            [
                pa.array(rng.integers(1, 3, num_rows).astype(np.int8)),
                pa.array(start.astype("datetime64[us]")),
                pa.array((start + rng.integers(60, 3600, num_rows) * 10**6)
                         .astype("datetime64[us]")),
                pa.array(rng.integers(1, 7, num_rows).astype(np.int8)),
                pa.array(rng.exponential(3, num_rows).round(2)),
                pa.array((rng.exponential(12, num_rows) + 3).round(2)),
                pa.array(rng.exponential(2, num_rows).round(2),
                         mask=rng.random(num_rows) < 0.2),
                pa.array(payments[rng.integers(0, 5, num_rows)]),
                pa.array(zones[rng.integers(0, 263, num_rows)]),
            ],
            names=["vendor", "pickup", "dropoff", "passengers", "distance", "fare", "tip",
                   "payment", "zone"],
        )
    ]


# The pytest suite runs the first three (ROUNDS); the scripts take any by name. ints8 and trips
# are the shapes where compression is nearly all the work (codec_limit.py).
BUILDERS = {
    "wide5m": lambda: _mixed_batches(5_000_000, 1_000_000),
    "small1k": lambda: _mixed_batches(1_000_000, 1_000),
    "cols1000": lambda: _wide_float_batches(1000, 1000),
    "ints8": lambda: _ints8_batches(1_000_000),
    "trips": lambda: _trips_batches(1_000_000),
}


def _build_dataset(name: str, directory: Path) -> Dataset:
    batches = BUILDERS[name]()
    schema = batches[0].schema
    table = pa.Table.from_batches(batches, schema=schema)

    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, schema) as writer:
        for batch in batches:
            writer.write_batch(batch)
    stream_bytes = sink.getvalue().to_pybytes()

    file_path = directory / f"{name}.arrow"
    with pa.OSFile(str(file_path), "wb") as out, pa.ipc.new_file(out, schema) as writer:
        for batch in batches:
            writer.write_batch(batch)

    return Dataset(name, table, batches, stream_bytes, str(file_path), ROUNDS[name])


class DatasetCache:
    def __init__(self, directory: Path):
        self._directory = directory
        self._built: dict[str, Dataset] = {}

    def get(self, name: str) -> Dataset:
        if name not in self._built:
            self._built[name] = _build_dataset(name, self._directory)
        return self._built[name]


@pytest.fixture(scope="session")
def datasets(tmp_path_factory) -> DatasetCache:
    return DatasetCache(tmp_path_factory.mktemp("bench-data"))


def pytest_generate_tests(metafunc):
    # Every benchmark taking `dataset_name` runs on each dataset, in this order.
    if "dataset_name" in metafunc.fixturenames:
        metafunc.parametrize("dataset_name", DATASET_NAMES)


def _version_of(module_name: str) -> str:
    try:
        module = __import__(module_name)
    except Exception as exc:  # a broken build should still let pyarrow runs report
        return f"unavailable ({type(exc).__name__})"
    return str(getattr(module, "__version__", "unknown"))


def pytest_benchmark_update_machine_info(config, machine_info):
    # Recorded in --benchmark-json so bench/ratios.py can report what ran.
    machine_info["nproc"] = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    machine_info["versions"] = {
        "arrowipc": _version_of("arrowipc"),
        "pyarrow": pa.__version__,
        "numpy": np.__version__,
    }
