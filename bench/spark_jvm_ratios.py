"""The issue-18 table: arrowipc's JVM Spark source against Spark's Parquet, one session.

    python bench/spark_jvm_ratios.py --rows 5000000      # rows x 8 columns (3 int64, 2 double, 3 string)
    python bench/spark_jvm_ratios.py --partitioned-only --partitioned-rows 2000000   # a quick run

The partitioned table (--partitioned-rows, default 10M, PARTITIONS partitions of column `day`)
is written by Spark itself, partitionBy("day"), through the arrowipc source (zstd) and Parquet
(snappy), the same DataFrame; its queries are a filter on one partition and an aggregate over
all, with the files each query opened: the JVM source's ReadStats.filesOpened, and for Parquet
the files under the partitions Spark's pruning keeps (what its scan lists and opens).

Every round runs each query on every source in turn (rounds interleaved, so load on the machine
hits all sources alike); the best of --rounds is kept and reported as a ratio to Parquet.
Arrow files are written by arrowipc with batch statistics, 65536 rows per batch; Parquet by
pyarrow with 1 Mi rows per row group.

The data is generated once per row count and kept under --data (default
~/.cache/arrowipc-bench/spark_jvm_ratios), so a rerun costs only the queries; --fresh writes it
again. A directory is reused only once it is complete (a marker written last).

Which arrowipc runs: by default this checkout's (the repository root first on sys.path), with
the jar built from java/ (python java/build_jar.py, run here when a source is newer). With
--installed, the arrowipc installed in the running interpreter and the jar its wheel carries,
e.g. a wheel built by pip from a clean clone, in a fresh environment:

    git clone <repository> /tmp/arrowipc-clean && cd /tmp/arrowipc-clean
    python -m venv /tmp/bench-venv && /tmp/bench-venv/bin/pip install . pyspark numpy
    cd / && /tmp/bench-venv/bin/python /tmp/arrowipc-clean/bench/spark_jvm_ratios.py \
        --installed --partitioned-only

(run from outside the clone, so that the clone's arrowipc directory cannot shadow the installed
package; the report's first lines name the arrowipc and the jar used.)
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
import pyarrow.parquet as pq


def make_table(rows: int) -> pa.Table:
    rng = np.random.default_rng(1)
    return pa.table({
        "id": pa.array(np.arange(rows, dtype=np.int64)),             # sorted: batches skip by range
        "k": pa.array(rng.integers(0, 1000, rows, dtype=np.int64)),
        "n": pa.array(rng.integers(0, 1 << 40, rows, dtype=np.int64)),
        "x": pa.array(rng.random(rows)),
        "y": pa.array(rng.normal(size=rows)),
        "s1": pa.array(np.char.add("k", (rng.integers(0, 100, rows)).astype(str))),
        "s2": pa.array(np.char.add("tag-", (rng.integers(0, 10000, rows)).astype(str))),
        "s3": pa.array(np.char.add("v", (np.arange(rows) % 7919).astype(str))),
    })


RANGE = [0, 0]         # set from --rows: the middle 1 % of the ids

QUERIES = {
    "read + aggregate": lambda df: df.groupBy("k").agg({"x": "sum", "n": "max"}).collect(),
    "count(*)": lambda df: df.count(),
    "1 % filter + aggregate": lambda df: df.where("k < 10").groupBy("s1").agg({"y": "avg"}).collect(),
    "1 % range of a sorted column": lambda df: df.where(f"id >= {RANGE[0]} and id < {RANGE[1]}")
    .groupBy("s1").agg({"y": "avg"}).collect(),
    "full scan to noop": lambda df: df.write.format("noop").mode("overwrite").save(),
}


PARTITIONS = 30

PARTITIONED_QUERIES = {
    "one partition: filter + aggregate": lambda df: df.where("day = 7").groupBy("s1")
    .agg({"y": "avg"}).collect(),
    "all partitions: aggregate": lambda df: df.groupBy("day").agg({"x": "sum", "n": "max"}).collect(),
    "one partition: count(*)": lambda df: df.where("day = 7").count(),
}


def _data_files(root: str, partition: str | None = None) -> int:
    top = root if partition is None else os.path.join(root, partition)
    return sum(1 for _, _, names in os.walk(top) for n in names if not n.startswith(("_", ".")))


COMPLETE = "_bench_complete"     # written last into a data directory: it may be reused


def cached(work: str, name: str, fresh: bool, make) -> str:
    """The data directory work/name, made by make(directory) unless a complete one is there."""
    directory = os.path.join(work, name)
    if not fresh and os.path.exists(os.path.join(directory, COMPLETE)):
        return directory
    shutil.rmtree(directory, ignore_errors=True)
    os.makedirs(directory)
    make(directory)
    open(os.path.join(directory, COMPLETE), "w").close()
    return directory


def partitioned(spark, work: str, rows: int, rounds: int, fresh: bool = False) -> None:
    """The partitioned table's queries, arrowipc against Parquet, time and files opened."""

    def make(directory: str) -> None:
        src = os.path.join(directory, "src.parquet")
        pq.write_table(make_table(rows), src, compression="none", row_group_size=1 << 20)
        df = spark.read.parquet(src).selectExpr("*", f"cast(k % {PARTITIONS} as int) as day")
        df.write.format("arrowipc").option("compression", "zstd").partitionBy("day") \
            .mode("overwrite").save(os.path.join(directory, "part-arrow"))
        df.write.format("parquet").option("compression", "snappy").partitionBy("day") \
            .mode("overwrite").save(os.path.join(directory, "part-parquet"))
        os.remove(src)

    data = cached(work, f"partitioned-{rows}-{PARTITIONS}", fresh, make)
    paths = {"arrowipc": os.path.join(data, "part-arrow"), "parquet": os.path.join(data, "part-parquet")}
    stats = spark._jvm.io.arrowipc.spark.ReadStats
    frames = {name: spark.read.format(name).load(p) for name, p in paths.items()}
    best: dict = {}
    opened: dict = {}
    for _ in range(rounds):
        for q, run in PARTITIONED_QUERIES.items():
            for name, frame in frames.items():
                stats.reset()
                t0 = time.perf_counter()
                run(frame)
                best[q, name] = min(best.get((q, name), 1e9), time.perf_counter() - t0)
                if name == "arrowipc":
                    opened[q, name] = stats.filesOpened()
                else:
                    opened[q, name] = _data_files(paths[name], None if q.startswith("all") else "day=7")
    files = {name: _data_files(p) for name, p in paths.items()}
    print(f"\npartitioned: {rows} rows, {PARTITIONS} partitions (day), written by Spark; "
          f"{files['arrowipc']} arrowipc files (zstd), {files['parquet']} Parquet files (snappy); "
          f"best of {rounds}")
    print("| query | arrowipc (s) | parquet (s) | arrowipc / parquet | files opened arrowipc | files opened parquet |")
    print("| --- | --- | --- | --- | --- | --- |")
    for q in PARTITIONED_QUERIES:
        a, p = best[q, "arrowipc"], best[q, "parquet"]
        print(f"| {q} | {a:.2f} | {p:.2f} | {a / p:.2f}x | {opened[q, 'arrowipc']} | {opened[q, 'parquet']} |")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=5_000_000)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--partitioned-rows", type=int, default=10_000_000)
    ap.add_argument("--partitioned-only", action="store_true",
                    help="run only the partitioned table's queries")
    ap.add_argument("--installed", action="store_true",
                    help="benchmark the installed arrowipc and its wheel's jar, not this checkout")
    ap.add_argument("--data", default=os.path.join(os.path.expanduser("~"), ".cache", "arrowipc-bench",
                                                   "spark_jvm_ratios"),
                    help="where the generated data is kept between runs")
    ap.add_argument("--fresh", action="store_true", help="generate the data again")
    args = ap.parse_args(argv)
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    if not args.installed:
        sys.path.insert(0, root)
        sys.path.insert(0, os.path.join(root, "java"))
        import build_jar
        if not build_jar.build(quiet=True):
            print("the JVM source jar cannot be built here", file=sys.stderr)
            return 1
    import arrowipc
    from arrowipc.spark import jar_path, local_session
    if not args.installed and not os.path.abspath(arrowipc.__file__).startswith(root + os.sep):
        print(f"this checkout's arrowipc is not the one imported ({arrowipc.__file__})", file=sys.stderr)
        return 1
    print(f"arrowipc: {os.path.dirname(arrowipc.__file__)}\njar: {jar_path()}")
    work = args.data
    os.makedirs(work, exist_ok=True)
    scratch = tempfile.mkdtemp(prefix="arrowipc-bench-")
    try:
        if args.partitioned_only:
            spark = local_session()
            partitioned(spark, work, args.partitioned_rows, args.rounds, args.fresh)
            spark.stop()
            return 0

        def make(directory: str) -> None:
            t = make_table(args.rows)
            pq.write_table(t, os.path.join(directory, "t.parquet"), compression="none",
                           row_group_size=1 << 20)
            pq.write_table(t, os.path.join(directory, "ts.parquet"), compression="snappy",
                           row_group_size=1 << 20)
            # arrowipc's writer, with batch statistics (what the Spark writer writes by default)
            from arrowipc import ipc
            at = arrowipc.table(t)
            with ipc.new_file(os.path.join(directory, "t.arrow"), at.schema, statistics=True) as w:
                w.write_table(at, max_chunksize=1 << 16)
            with ipc.new_file(os.path.join(directory, "tz.arrow"), at.schema, statistics=True,
                              options=ipc.IpcWriteOptions(compression="zstd")) as w:
                w.write_table(at, max_chunksize=1 << 16)

        data = cached(work, f"flat-{args.rows}", args.fresh, make)
        paths = {"parquet": os.path.join(data, "t.parquet"), "arrow": os.path.join(data, "t.arrow"),
                 "arrow zstd": os.path.join(data, "tz.arrow"), "parquet snappy": os.path.join(data, "ts.parquet")}
        RANGE[:] = [args.rows // 2, args.rows // 2 + args.rows // 100]
        spark = local_session()
        fmt = {"parquet": "parquet", "parquet snappy": "parquet", "arrow": "arrowipc", "arrow zstd": "arrowipc"}
        frames = {name: spark.read.format(fmt[name]).load(p) for name, p in paths.items()}
        # count(*) as tasks reading message headers, the JVM source's path before footers answered it
        headers = {name: spark.read.format("arrowipc").option("aggregatePushdown", "false").load(p)
                   for name, p in paths.items() if fmt[name] == "arrowipc"}
        best = {}
        for _ in range(args.rounds):
            for q, run in QUERIES.items():
                for name, df in frames.items():
                    t0 = time.perf_counter()
                    run(df)
                    best[q, name] = min(best.get((q, name), 1e9), time.perf_counter() - t0)
                    if q == "count(*)" and name in headers:
                        t0 = time.perf_counter()
                        run(headers[name])
                        best["headers", name] = min(best.get(("headers", name), 1e9),
                                                    time.perf_counter() - t0)
            src = frames["parquet"]
            for name, (f, opts) in {"write arrow zstd": ("arrowipc", {"compression": "zstd"}),
                                    "write parquet snappy": ("parquet", {"compression": "snappy"})}.items():
                out = os.path.join(scratch, "out-" + f)
                t0 = time.perf_counter()
                src.write.format(f).options(**opts).mode("overwrite").save(out)
                best["write", name] = min(best.get(("write", name), 1e9), time.perf_counter() - t0)
        print(f"{args.rows} rows x 8 columns, local[2], best of {args.rounds}, rounds interleaved")
        print("| query | arrow (s) | arrow zstd (s) | parquet (s) | parquet snappy (s) | arrow / parquet | zstd / snappy |")
        print("| --- | --- | --- | --- | --- | --- | --- |")
        for q in QUERIES:
            a, az, p, ps = (best[q, n] for n in ("arrow", "arrow zstd", "parquet", "parquet snappy"))
            print(f"| {q} | {a:.2f} | {az:.2f} | {p:.2f} | {ps:.2f} | {a / p:.2f}x | {az / ps:.2f}x |")
        a, az, p, ps = (best["headers", "arrow"], best["headers", "arrow zstd"], best["count(*)", "parquet"],
                        best["count(*)", "parquet snappy"])
        print(f"| count(*) from headers (aggregatePushdown=false) | {a:.2f} | {az:.2f} | {p:.2f} | {ps:.2f} "
              f"| {a / p:.2f}x | {az / ps:.2f}x |")
        w_a, w_p = best["write", "write arrow zstd"], best["write", "write parquet snappy"]
        print(f"| write (zstd vs snappy) | | {w_a:.2f} | | {w_p:.2f} | | {w_a / w_p:.2f}x |")
        partitioned(spark, work, args.partitioned_rows, args.rounds, args.fresh)
        spark.stop()
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
