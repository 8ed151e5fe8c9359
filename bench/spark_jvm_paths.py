"""The JVM Spark source over its three kinds of location: a local path, the same file through
Hadoop's FileSystem (a file: URI) and over HTTP with Range requests (the tests' local server).

    python bench/spark_jvm_paths.py --rows 2000000      # rows x 8 int64/double columns

Each round runs every query on every location in turn (rounds interleaved, so load on the
machine hits all alike); the best of --rounds is kept and reported with its ratio to the local
read, plus the HTTP requests and bytes of the last round. Needs the jar (python java/build_jar.py).
"""
from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time

import numpy as np
import pyarrow as pa

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

QUERIES = {
    "all 8 columns": lambda df: df.selectExpr(*[f"sum(c{i})" for i in range(8)]).collect(),
    "1 of 8 columns": lambda df: df.selectExpr("sum(c3)").collect(),
    "count(*)": lambda df: df.count(),
}


def make_table(rows: int) -> pa.Table:
    rng = np.random.default_rng(3)
    cols = {f"c{i}": rng.integers(0, 1 << 40, rows, dtype=np.int64) for i in range(4)}
    cols.update({f"c{i}": rng.random(rows) for i in range(4, 8)})
    return pa.table(cols)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=2_000_000)
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args(argv)
    sys.path.insert(0, os.path.join(ROOT, "java"))
    sys.path.insert(0, os.path.join(ROOT, "tests"))
    import build_jar
    from remote_servers import http_server
    if not build_jar.build(quiet=True):
        print("the JVM source jar cannot be built here", file=sys.stderr)
        return 1
    from arrowipc.spark import local_session
    work = tempfile.mkdtemp(prefix="arrowipc-bench-")
    try:
        t = make_table(args.rows)
        path = os.path.join(work, "t.arrow")
        with pa.ipc.new_file(path, t.schema) as w:
            w.write_table(t, max_chunksize=1 << 16)
        with open(path, "rb") as f:
            data = f.read()
        spark = local_session()
        stats = spark._jvm.io.arrowipc.spark.ReadStats
        with http_server({"/t.arrow": data}) as (base, requests):
            locations = {"local": path, "hadoop file:": "file://" + path, "http": f"{base}/t.arrow"}
            frames = {name: spark.read.format("arrowipc").load(loc) for name, loc in locations.items()}
            best: dict = {}
            wire: dict = {}
            for _ in range(args.rounds):
                for q, run in QUERIES.items():
                    for name, df in frames.items():
                        stats.reset()
                        t0 = time.perf_counter()
                        run(df)
                        best[q, name] = min(best.get((q, name), 1e9), time.perf_counter() - t0)
                        if name == "http":
                            wire[q] = (stats.remoteRequests(), stats.remoteBytes())
        spark.stop()
        print(f"{args.rows} rows x 8 columns ({len(data) / 1e6:.0f} MB, {-(-args.rows // 65536)} "
              f"batches), local[2], best of {args.rounds}, rounds interleaved")
        print("| query | local (s) | hadoop file: (s) | http (s) | hadoop / local | http / local "
              "| http requests | http MB |")
        print("| --- | --- | --- | --- | --- | --- | --- | --- |")
        for q in QUERIES:
            lo, ha, ht = (best[q, n] for n in ("local", "hadoop file:", "http"))
            print(f"| {q} | {lo:.2f} | {ha:.2f} | {ht:.2f} | {ha / lo:.2f}x | {ht / lo:.2f}x "
                  f"| {wire[q][0]} | {wire[q][1] / 1e6:.1f} |")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
