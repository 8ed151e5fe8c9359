#!/usr/bin/env python
"""Stream writes to a path, arrowipc and pyarrow side by side, rounds interleaved (issue 34, D2).

    python bench/bench_stream_writes.py [--rounds N] [--datasets wide5m,small1k] [--codecs none,lz4,zstd]

`new_stream(path)` then every batch by `write_batch`, uncompressed, LZ4 and ZSTD, each writer
rewriting its own file every round (an existing file replaced, as in a job run again). Three
writers: arrowipc writing the path through (what `new_stream` does), arrowipc writing a
temporary file renamed on close (the design before the write-through, kept by the file writers:
the same code with `_paths_in_place` off), and pyarrow (which truncates the file in place).
Rounds rotate the order; the table gives the best round of each, wall and process CPU time, and
the ratio to pyarrow (below 1: faster than pyarrow). Outputs are checked equal once.
"""
from __future__ import annotations

import argparse
import gc
import os
import sys
import tempfile
import time
from pathlib import Path

import pyarrow as pa

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

import arrowipc  # noqa: E402
from arrowipc import ipc  # noqa: E402
from arrowipc.ipc import writer as ipc_writer  # noqa: E402
from conftest import BUILDERS  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=9)
    ap.add_argument("--datasets", default="wide5m,small1k")
    ap.add_argument("--codecs", default="none,lz4,zstd")
    args = ap.parse_args(argv)
    print(f"nproc {os.cpu_count()}, load average {os.getloadavg()[0]:.1f}, pyarrow "
          f"{pa.__version__}; best of {args.rounds} rounds; ratio = writer / pyarrow")
    print("| case | through ms (CPU) | temporary+rename ms (CPU) | pyarrow ms (CPU) | "
          "through / pyarrow | temporary / pyarrow |")
    print("| --- | ---: | ---: | ---: | ---: | ---: |")
    with tempfile.TemporaryDirectory(dir=os.environ.get("BENCH_DIR")) as d:
        for ds in args.datasets.split(","):
            theirs_batches = BUILDERS[ds]()
            ours_batches = [arrowipc.record_batch(b) for b in theirs_batches]
            for codec in args.codecs.split(","):
                compression = None if codec == "none" else codec

                def ours(through: bool) -> None:
                    ipc_writer.RecordBatchStreamWriter._paths_in_place = through
                    try:
                        path = os.path.join(d, f"ours-{through}.arrows")
                        with ipc.new_stream(path, ours_batches[0].schema,
                                            options=ipc.IpcWriteOptions(
                                                compression=compression)) as w:
                            for b in ours_batches:
                                w.write_batch(b)
                    finally:
                        ipc_writer.RecordBatchStreamWriter._paths_in_place = True

                def theirs() -> None:
                    with pa.ipc.new_stream(os.path.join(d, "theirs.arrows"),
                                           theirs_batches[0].schema,
                                           options=pa.ipc.IpcWriteOptions(
                                               compression=compression)) as w:
                        for b in theirs_batches:
                            w.write_batch(b)

                runs = {"through": lambda: ours(True), "temporary": lambda: ours(False),
                        "pyarrow": theirs}
                for run in runs.values():                   # warm-up, and the files exist
                    run()
                want = pa.ipc.open_stream(os.path.join(d, "theirs.arrows")).read_all()
                for name in ("ours-True.arrows", "ours-False.arrows"):
                    assert pa.ipc.open_stream(os.path.join(d, name)).read_all().equals(want)
                wall: dict[str, list[float]] = {k: [] for k in runs}
                cpu: dict[str, list[float]] = {k: [] for k in runs}
                names = list(runs)
                for r in range(args.rounds):
                    for name in names[r % 3:] + names[:r % 3]:
                        gc.collect()
                        c0 = time.process_time()
                        t0 = time.perf_counter()
                        runs[name]()
                        wall[name].append(time.perf_counter() - t0)
                        cpu[name].append(time.process_time() - c0)
                best = {k: (min(wall[k]) * 1e3, min(cpu[k]) * 1e3) for k in runs}
                p = best["pyarrow"][0]
                print(f"| {ds} {codec} | {best['through'][0]:.0f} ({best['through'][1]:.0f}) | "
                      f"{best['temporary'][0]:.0f} ({best['temporary'][1]:.0f}) | "
                      f"{p:.0f} ({best['pyarrow'][1]:.0f}) | {best['through'][0] / p:.2f} | "
                      f"{best['temporary'][0] / p:.2f} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
