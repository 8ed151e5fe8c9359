#!/usr/bin/env python
"""Unchanged pyarrow jobs under `arrowipc.accelerate` against plain pyarrow, rounds interleaved.

    python bench/accelerate_ratios.py [--rounds N] [--rows N] [-k SUBSTRING]

The jobs are what ETL scripts written for pyarrow do, with no line changed:

- `feather_etl`: `pd.read_feather` → a pandas transform (filter, derived column, sort) →
  `DataFrame.to_feather` (LZ4, pyarrow's default);
- `feather_read_table` / `feather_write`: `pyarrow.feather.read_table` of the whole file and of
  two columns; `pyarrow.feather.write_feather` of a Table;
- `ipc_file_job`: `pa.ipc.open_file(path).read_all()` → `pyarrow.compute` filter →
  `pa.ipc.new_file(path)` write, uncompressed and LZ4;
- `ipc_stream_job`: `pa.ipc.open_stream(bytes)` batch by batch → `new_stream` to a
  `BufferOutputStream`.

Each round runs the job once accelerated (`install()` before, `uninstall()` after, outside the
timing) and once on plain pyarrow, the order flipping every round, as in users.py. The table
gives the best round of each, accelerated ÷ plain (below 1: the accelerator is faster), wall and
process CPU time. Every job's output is checked equal (schema, metadata, values) between the two,
outside the timed rounds, with plain pyarrow reading both.
"""
from __future__ import annotations

import argparse
import gc
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.feather as feather

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

import arrowipc.accelerate as accelerate  # noqa: E402

ROUNDS = 5


def make_frame(rows: int, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    words = np.array(["alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta"])
    return pd.DataFrame({
        "id": np.arange(rows, dtype=np.int64),
        "price": rng.random(rows) * 200,
        "qty": rng.integers(0, 1000, rows, dtype=np.int32),
        "when": pd.Timestamp("2026-01-01") + pd.to_timedelta(rng.integers(0, 10**6, rows),
                                                             unit="s"),
        "name": words[rng.integers(0, len(words), rows)],
        "flag": rng.random(rows) < 0.5,
    })


def jobs(d: str, rows: int) -> dict[str, tuple[Callable[[], Any], Callable[[Any], pa.Table]]]:
    """{job: (run it, its output as a table read by plain pyarrow)}."""
    df = make_frame(rows)
    src = os.path.join(d, "src.feather")
    feather.write_feather(df, src)                       # plain pyarrow writes the inputs
    table = feather.read_table(src)
    ipc_plain = os.path.join(d, "src.arrow")
    ipc_lz4 = os.path.join(d, "src-lz4.arrow")
    with pa.ipc.new_file(ipc_plain, table.schema) as w:
        w.write_table(table, max_chunksize=64 * 1024)
    with pa.ipc.new_file(ipc_lz4, table.schema,
                         options=pa.ipc.IpcWriteOptions(compression="lz4")) as w:
        w.write_table(table, max_chunksize=64 * 1024)
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, table.schema) as w:
        w.write_table(table, max_chunksize=64 * 1024)
    stream_bytes = sink.getvalue()

    def feather_etl() -> str:
        frame = pd.read_feather(src)
        frame = frame[frame["price"] > 50]
        frame = frame.assign(total=frame["price"] * frame["qty"]).sort_values("when")
        out = os.path.join(d, "etl.feather")
        frame.to_feather(out)
        return out

    def feather_read_table() -> pa.Table:
        return feather.read_table(src)

    def feather_read_columns() -> pa.Table:
        return feather.read_table(src, columns=["name", "price"])

    def feather_write() -> str:
        out = os.path.join(d, "write.feather")
        feather.write_feather(table, out)
        return out

    def ipc_file_job(path: str, codec: str | None) -> Callable[[], str]:
        def run() -> str:
            t = pa.ipc.open_file(path).read_all()
            t = t.filter(pc.greater(t["price"], 50))
            out = os.path.join(d, f"job-{codec}.arrow")
            with pa.ipc.new_file(out, t.schema,
                                 options=pa.ipc.IpcWriteOptions(compression=codec)) as w:
                w.write_table(t)
            return out
        return run

    def ipc_stream_job() -> pa.Buffer:
        out = pa.BufferOutputStream()
        reader = pa.ipc.open_stream(stream_bytes)
        with pa.ipc.new_stream(out, reader.schema) as w:
            for batch in reader:
                w.write_batch(batch)
        return out.getvalue()

    def read_path(result: Any) -> pa.Table:
        with open(result, "rb") as f:
            head = f.read(6)
        return feather.read_table(result) if head == b"ARROW1" and result.endswith(
            ".feather") else pa.ipc.open_file(result).read_all()

    return {
        "feather_etl": (feather_etl, lambda r: feather.read_table(r)),
        "feather_read_table": (feather_read_table, lambda r: r),
        "feather_read_columns": (feather_read_columns, lambda r: r),
        "feather_write": (feather_write, lambda r: feather.read_table(r)),
        "ipc_file_job_plain": (ipc_file_job(ipc_plain, None), read_path),
        "ipc_file_job_lz4": (ipc_file_job(ipc_lz4, "lz4"), read_path),
        "ipc_stream_job": (ipc_stream_job, lambda r: pa.ipc.open_stream(r).read_all()),
    }


def timed(run: Callable[[], Any], accelerated: bool) -> tuple[float, float, Any]:
    if accelerated:
        accelerate.install(report=False)
    try:
        gc.collect()
        c0 = time.process_time()
        t0 = time.perf_counter()
        result = run()
        return time.perf_counter() - t0, time.process_time() - c0, result
    finally:
        if accelerated:
            accelerate.uninstall()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("-k", default="", help="only jobs containing this substring (comma: any)")
    ap.add_argument("--rounds", type=int, default=ROUNDS)
    ap.add_argument("--rows", type=int, default=1_000_000)
    args = ap.parse_args(argv)
    wanted = [k for k in args.k.split(",") if k]
    # a loaded machine swings wall time (threads wait for a core); CPU time swings less
    print(f"nproc {os.cpu_count()}, load average {os.getloadavg()[0]:.1f}, pyarrow "
          f"{pa.__version__}, pandas {pd.__version__}, {args.rows} rows; best round of each; "
          f"ratio = accelerated / plain pyarrow (below 1: the accelerator is faster)")
    print("| job | accelerated ms | pyarrow ms | ratio | CPU ratio |")
    print("| --- | ---: | ---: | ---: | ---: |")
    with tempfile.TemporaryDirectory(dir=os.environ.get("BENCH_DIR")) as d:
        for name, (run, as_table) in jobs(d, args.rows).items():
            if wanted and not any(w in name for w in wanted):
                continue
            # outputs equal, checked once outside the timing (and a warm-up for both)
            got = as_table(timed(run, True)[2])
            want = as_table(timed(run, False)[2])
            assert got.schema.equals(want.schema, check_metadata=True), name
            assert got.equals(want), name
            times: dict[bool, list[float]] = {True: [], False: []}
            cpu: dict[bool, list[float]] = {True: [], False: []}
            for r in range(args.rounds):
                for accelerated in ((True, False) if r % 2 == 0 else (False, True)):
                    wall, used, result = timed(run, accelerated)
                    del result
                    times[accelerated].append(wall)
                    cpu[accelerated].append(used)
            a, p = min(times[True]), min(times[False])
            ca, cp = min(cpu[True]), min(cpu[False])
            print(f"| {name} | {a * 1e3:.1f} | {p * 1e3:.1f} | {a / p:.2f} | "
                  f"{ca / cp if cp else float('nan'):.2f} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
