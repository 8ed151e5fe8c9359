"""pandas conversions side by side: arrowipc and pyarrow on the 5M-row table.

The table is the `wide5m` dataset (int64, float64, int32 with nulls, short utf8, bool in five
1M-row chunks) plus a UTC timestamp column and a dictionary column of 50 strings, so every kind of
block pandas keeps is exercised. arrowipc's table is imported from pyarrow's zero-copy (PyCapsule);
from_pandas starts from the DataFrame pyarrow's to_pandas gives.

Two kinds of runs:
- `test_to_pandas` / `test_from_pandas` [arrowipc | pyarrow]: pytest-benchmark groups, so
  `bench/ratios.py` reports them with the IPC ones;
- `test_interleaved_ratios[auto|python]`: both libraries alternate round by round (the one
  starting a round alternates too), so a load change on this shared machine hits both alike; it
  prints the median of each and their ratio (below 1 = arrowipc faster), once with pandas' default
  string storage and once with the "python" storage pandas uses where pyarrow is not installed.
  Results are checked for equality first, so a fast wrong answer fails.

Run: python -m pytest bench/test_bench_pandas.py --benchmark-enable -s
"""
from __future__ import annotations

import statistics
import time

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

LIBS = ["arrowipc", "pyarrow"]
DATASET = "wide5m"
LABEL = "wide5m+ts+dict"
ROUNDS = 5


@pytest.fixture(scope="module")
def pandas_data(datasets):
    import arrowipc
    base = datasets.get(DATASET).table
    rng = np.random.default_rng(20240502)
    ts_chunks, dict_chunks = [], []
    categories = pa.array([f"category-{i}" for i in range(50)])
    for chunk in base.column(0).chunks:
        n = len(chunk)
        ts_chunks.append(pa.array(rng.integers(0, 2**50, n), pa.timestamp("us", "UTC")))
        dict_chunks.append(pa.DictionaryArray.from_arrays(
            pa.array(rng.integers(0, 50, n).astype("int32")), categories))
    table = base.append_column("ts", pa.chunked_array(ts_chunks)).append_column(
        "dict", pa.chunked_array(dict_chunks))
    frame = table.to_pandas()
    return {"pyarrow": table, "arrowipc": arrowipc.table(table), "frame": frame}


def _to_pandas(lib, data):
    table = data[lib]
    return lambda: table.to_pandas()


def _from_pandas(lib, data):
    frame = data["frame"]
    if lib == "pyarrow":
        return lambda: pa.Table.from_pandas(frame)
    import arrowipc
    return lambda: arrowipc.Table.from_pandas(frame)


OPERATIONS = {"to_pandas": _to_pandas, "from_pandas": _from_pandas}


def _check(operation, result, data):
    if operation == "to_pandas":
        pd.testing.assert_frame_equal(result, data["frame"])
    else:
        expected = pa.Table.from_pandas(data["frame"])
        got = pa.table(result)
        assert got.schema.remove_metadata() == expected.schema.remove_metadata()
        assert got.equals(expected)


@pytest.mark.parametrize("lib", LIBS)
@pytest.mark.parametrize("operation", list(OPERATIONS))
def test_pandas(benchmark, pandas_data, operation, lib):
    func = OPERATIONS[operation](lib, pandas_data)
    benchmark.group = f"{operation}-{LABEL}"
    benchmark.extra_info.update(lib=lib, operation=operation, dataset=LABEL,
                                rows=pandas_data["pyarrow"].num_rows)
    result = benchmark.pedantic(func, rounds=ROUNDS, iterations=1, warmup_rounds=1)
    _check(operation, result, pandas_data)


@pytest.mark.parametrize("string_storage", ["auto", "python"])
def test_interleaved_ratios(pandas_data, capsys, string_storage):
    """"auto": pandas' default (Arrow-backed strings where pyarrow is installed, as here);
    "python": the storage pandas uses where pyarrow is not installed, the case arrowipc is for."""
    rows = []
    with pd.option_context("mode.string_storage", string_storage):
        data = dict(pandas_data, frame=pandas_data["pyarrow"].to_pandas())
        for operation, make in OPERATIONS.items():
            funcs = {lib: make(lib, data) for lib in LIBS}
            for lib in LIBS:                      # warm-up, and the results are right
                _check(operation, funcs[lib](), data)
            times = {lib: [] for lib in LIBS}
            for r in range(ROUNDS):
                order = LIBS if r % 2 == 0 else LIBS[::-1]
                for lib in order:
                    start = time.perf_counter()
                    funcs[lib]()
                    times[lib].append(time.perf_counter() - start)
            med = {lib: statistics.median(v) for lib, v in times.items()}
            rows.append((operation, med["arrowipc"], med["pyarrow"],
                         med["arrowipc"] / med["pyarrow"]))
    with capsys.disabled():
        print(f"\n| {LABEL}, string storage {string_storage!r}, {ROUNDS} interleaved rounds "
              f"| arrowipc ms | pyarrow ms | ratio |")
        print("| --- | ---: | ---: | ---: |")
        for op, a, p, ratio in rows:
            print(f"| {op} | {a * 1000:.1f} | {p * 1000:.1f} | {ratio:.2f}x |")
