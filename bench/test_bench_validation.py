"""Reading with validation: arrowipc at each level next to pyarrow's read + validate(full=True).

One group per level ("read_validate_structural-wide5m", ...), each holding the arrowipc read at
that level and the same pyarrow baseline, so bench/ratios.py prints the cost of each level as a
ratio to pyarrow's fully validated read (targets on wide5m: structural <= 0.5, full <= 1.0).

The arrowipc side reads the stream from bytes and hands out every batch's columns, which runs the
structural checks (deferred until then); full runs them and the value checks on the read; none
skips both. The pyarrow side reads the same bytes and validates the table with full=True.

Run: python -m pytest bench/test_bench_validation.py --benchmark-enable -k wide5m
"""
from __future__ import annotations

import pyarrow as pa
import pytest

from test_bench_ipc import assert_same_batches, run_timed

LEVELS = ("structural", "full", "none")


def pyarrow_read_validated(data: bytes):
    table = pa.ipc.open_stream(data).read_all()
    table.validate(full=True)
    return table.to_batches()


def arrowipc_reader(level: str):
    from arrowipc import ipc
    options = ipc.IpcReadOptions(validate=level)

    def read(data: bytes):
        batches = list(ipc.open_stream(data, options=options))
        for batch in batches:
            batch.columns              # the gate: pending structural checks run here
        return batches

    return read


@pytest.mark.parametrize("lib", ["arrowipc", "pyarrow"])
@pytest.mark.parametrize("level", LEVELS)
def test_read_validate(benchmark, datasets, dataset_name, level, lib):
    ds = datasets.get(dataset_name)
    func = arrowipc_reader(level) if lib == "arrowipc" else pyarrow_read_validated
    batches = run_timed(benchmark, ds, lib, f"read_validate_{level}", func, ds.stream_bytes)
    assert_same_batches(batches, ds)
