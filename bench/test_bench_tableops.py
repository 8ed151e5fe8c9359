"""Table operations side by side: arrowipc and pyarrow on the 5M-row table.

The table is the `wide5m` dataset (int64, float64, int32 with nulls, short utf8, bool in five
1M-row chunks); arrowipc's table is imported from pyarrow's zero-copy (PyCapsule). The operations:
- `filter`: a random boolean mask keeping about half the rows (with nulls, dropped);
- `take`: 1M random row indices across the whole table;
- `cast`: the int32 column to float64, the float64 column to float32, the utf8 column to
  large_utf8 and the bool column to int8 (safe casts; every value fits; int64 stays).

Two kinds of runs, as bench/test_bench_pandas.py:
- `test_tableops[operation-lib]`: pytest-benchmark groups for `bench/ratios.py`;
- `test_interleaved_ratios`: both libraries alternate round by round (the one starting a round
  alternates too) and the medians and their ratio are printed (below 1 = arrowipc faster).
  Results are checked against pyarrow's first, so a fast wrong answer fails.

Run: python -m pytest bench/test_bench_tableops.py --benchmark-enable -s
"""
from __future__ import annotations

import statistics
import time

import numpy as np
import pyarrow as pa
import pytest

LIBS = ["arrowipc", "pyarrow"]
DATASET = "wide5m"
ROUNDS = 5
TAKE_ROWS = 1_000_000


@pytest.fixture(scope="module")
def ops_data(datasets):
    import arrowipc
    table = datasets.get(DATASET).table
    rng = np.random.default_rng(20240503)
    n = table.num_rows
    keep = rng.random(n) < 0.5
    valid = rng.random(n) >= 0.05
    mask = pa.array(keep, mask=~valid)
    indices = pa.array(rng.integers(0, n, TAKE_ROWS))
    names = table.column_names
    types = {f.name: f.type for f in table.schema}
    cast_to = dict(types)
    wanted = {pa.int32(): pa.float64(), pa.float64(): pa.float32(),
              pa.string(): pa.large_string(), pa.bool_(): pa.int8()}
    for f in table.schema:
        cast_to[f.name] = wanted.get(f.type, f.type)
    target = pa.schema([(name, cast_to[name]) for name in names])
    return {
        "pyarrow": {"table": table, "mask": mask, "indices": indices, "schema": target},
        "arrowipc": {"table": arrowipc.table(table), "mask": arrowipc.array(mask),
                     "indices": arrowipc.array(indices), "schema": arrowipc.schema(target)},
    }


def _filter(lib, data):
    d = data[lib]
    table, mask = d["table"], d["mask"]
    return lambda: table.filter(mask)


def _take(lib, data):
    d = data[lib]
    table, indices = d["table"], d["indices"]
    return lambda: table.take(indices)


def _cast(lib, data):
    d = data[lib]
    table, schema = d["table"], d["schema"]
    return lambda: table.cast(schema)


OPERATIONS = {"filter": _filter, "take": _take, "cast": _cast}


def _check(operation, result, data):
    expected = OPERATIONS[operation]("pyarrow", data)()
    got = pa.table(result)
    assert got.schema == expected.schema
    assert got.num_rows == expected.num_rows
    assert got.combine_chunks().equals(expected.combine_chunks())


@pytest.mark.parametrize("lib", LIBS)
@pytest.mark.parametrize("operation", list(OPERATIONS))
def test_tableops(benchmark, ops_data, operation, lib):
    func = OPERATIONS[operation](lib, ops_data)
    benchmark.group = f"{operation}-{DATASET}"
    benchmark.extra_info.update(lib=lib, operation=operation, dataset=DATASET,
                                rows=ops_data["pyarrow"]["table"].num_rows)
    result = benchmark.pedantic(func, rounds=ROUNDS, iterations=1, warmup_rounds=1)
    if lib == "arrowipc":
        _check(operation, result, ops_data)


def test_interleaved_ratios(ops_data, capsys):
    rows = []
    for operation, make in OPERATIONS.items():
        funcs = {lib: make(lib, ops_data) for lib in LIBS}
        _check(operation, funcs["arrowipc"](), ops_data)    # warm-up, and the result is right
        funcs["pyarrow"]()
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
        print(f"\n| {DATASET}, {ROUNDS} interleaved rounds | arrowipc ms | pyarrow ms | ratio |")
        print("| --- | ---: | ---: | ---: |")
        for op, a, p, ratio in rows:
            print(f"| {op} | {a * 1000:.1f} | {p * 1000:.1f} | {ratio:.2f}x |")
