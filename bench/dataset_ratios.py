#!/usr/bin/env python
"""Datasets: arrowipc.dataset, pyarrow.dataset and polars scan_ipc on the same files (issue 33).

    python bench/dataset_ratios.py [--rows N] [--rounds R] [-k SUBSTRING] [--json PATH]
                                   [--s3 URL] [--no-memory]

The data: N rows (10M by default) x 8 columns (`date` and `country`, the partition columns;
`id`, sorted; `a`..`e`), hive-partitioned by 20 dates and 3 countries (60 files), written once
by arrowipc.dataset.write_dataset with statistics (row groups of 131072 rows) into a temporary
directory, and again as a folder of stream files. Every library reads the same files.

Cases: the full scan to a table; one column of eight; a 1 % range of the sorted `id`; one
partition; `count_rows()` with and without a value filter; `head(10)`; with `--s3 URL` (an
s3:// prefix the environment's credentials can write, or `local` for a moto S3 server started
in a child process) every case above again from there, each library reading it as its docs
show; and the stream folder (arrowipc only: pyarrow's and polars'
datasets do not read streams). Each round runs every library once per case, the order flipped
every round so both see the same machine load; the figure kept is the best of the rounds.
The "first scan" cases make a new dataset object in every call (discovery included, for
every library): arrowipc keeps each file's footer summary on its fragment, so the other cases
show later scans of one dataset object. The table gives the times and arrowipc's time divided
by the others'. Each library's result is
checked against pyarrow's (rows and, for filters, the row count) once, outside the timed rounds.

Without `--no-memory`, a child process measures the peak resident memory of one `to_batches()`
pass over the whole dataset (Linux: the high-water mark reset before the pass), against the
dataset's decoded size.
"""
from __future__ import annotations

import argparse
import contextlib
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Iterator

import numpy as np
import pyarrow as pa
import pyarrow.dataset as pds

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

import arrowipc  # noqa: E402
import arrowipc.dataset as ads  # noqa: E402

try:
    import polars as pl
except ImportError:         # polars is optional: its column is left out
    pl = None

DATES = 20
COUNTRIES = ("DE", "FR", "US")


def make_table(rows: int) -> pa.Table:
    rng = np.random.default_rng(33)
    ids = np.arange(rows, dtype=np.int64)
    return pa.table({
        "date": pa.array((20260101 + ids * DATES // rows).astype(np.int32)),
        "country": pa.DictionaryArray.from_arrays(pa.array((ids % 3).astype(np.int32)),
                                                  pa.array(COUNTRIES)).cast(pa.string()),
        "id": ids,
        "a": rng.random(rows),
        "b": rng.integers(0, 1000, rows),
        "c": rng.random(rows),
        "d": rng.integers(0, 10**9, rows),
        "e": rng.random(rows).astype(np.float32),
    })


def write(table: pa.Table, root: str, fmt: str) -> None:
    ads.write_dataset(arrowipc.table(table), root, format=fmt, partitioning=["date", "country"],
                      partitioning_flavor="hive", max_rows_per_group=131072)


class Case:
    def __init__(self, name: str, runs: dict, check: str = "table"):
        self.name = name
        self.runs = runs            # library -> callable
        self.check = check


def cases(root: str, stream_root: str, rows: int, s3: str | None) -> list[Case]:
    lo, hi = rows // 2, rows // 2 + rows // 100
    date = 20260101 + 7
    A = ads.dataset(root, format="ipc", partitioning="hive")
    P = pds.dataset(root, format="ipc", partitioning="hive")
    glob = os.path.join(root, "**", "*.arrow")

    def pl_scan():
        return pl.scan_ipc(glob, hive_partitioning=True)

    out = scan_cases("", A, P, pl_scan, lo, hi, date) + [
        # a new dataset object each call (discovery timed too): arrowipc's fragments keep
        # the footers a scan read, so the cases above measure later scans of one dataset
        Case("first scan: count_rows()", {
            "arrowipc": lambda: ads.dataset(root, format="ipc", partitioning="hive").count_rows(),
            "pyarrow": lambda: pds.dataset(root, format="ipc", partitioning="hive").count_rows(),
            "polars": lambda: pl_scan().select(pl.len()).collect().item()}, "count"),
        Case("first scan: count_rows(b < 10)", {
            "arrowipc": lambda: ads.dataset(root, format="ipc", partitioning="hive").count_rows(
                filter=ads.field("b") < 10),
            "pyarrow": lambda: pds.dataset(root, format="ipc", partitioning="hive").count_rows(
                filter=pds.field("b") < 10),
            "polars": lambda: pl_scan().filter(pl.col("b") < 10).select(pl.len()).collect()
            .item()}, "count"),
        Case("first scan: 1 % range", {
            "arrowipc": lambda: ads.dataset(root, format="ipc", partitioning="hive").to_table(
                filter=(ads.field("id") >= lo) & (ads.field("id") < hi)),
            "pyarrow": lambda: pds.dataset(root, format="ipc", partitioning="hive").to_table(
                filter=(pds.field("id") >= lo) & (pds.field("id") < hi)),
            "polars": lambda: pl_scan().filter((pl.col("id") >= lo) & (pl.col("id") < hi))
            .collect()}),
    ]
    S = ads.dataset(stream_root, format="stream", partitioning="hive")
    out.append(Case("stream folder: full scan", {"arrowipc": lambda: S.to_table()}))
    out.append(Case("stream folder: id range", {
        "arrowipc": lambda: S.to_table(filter=(ads.field("id") >= lo) & (ads.field("id") < hi))}))
    if s3:
        out += s3_cases(s3, lo, hi, date)
    if pl is None:
        for c in out:
            c.runs.pop("polars", None)
    return out


def s3_cases(s3: str, lo: int, hi: int, date: int) -> list[Case]:
    """The cases above again on the dataset copied to `s3`: each library reads it as its docs
    show (arrowipc and polars from the URL, pyarrow through its S3FileSystem)."""
    import pyarrow.fs as pafs
    AS = ads.dataset(s3, format="ipc", partitioning="hive")
    fs, path = pafs.FileSystem.from_uri(s3)
    PS = pds.dataset(path, format="ipc", partitioning="hive", filesystem=fs)
    storage = {k: v for k, v in {
        "aws_endpoint_url": os.environ.get("AWS_ENDPOINT_URL"),
        "aws_allow_http": "true" if os.environ.get("AWS_ENDPOINT_URL", "").startswith("http:")
        else None}.items() if v}

    def pl_scan():
        return pl.scan_ipc(s3.rstrip("/") + "/**/*.arrow", hive_partitioning=True,
                           storage_options=storage or None)

    return scan_cases("S3: ", AS, PS, pl_scan, lo, hi, date)


def scan_cases(prefix: str, A: Any, P: Any, pl_scan: Any, lo: int, hi: int, date: int
               ) -> list[Case]:
    """The scans timed on one copy of the dataset: `A` arrowipc's dataset, `P` pyarrow's,
    `pl_scan()` polars' lazy frame; names start with `prefix`."""
    rng = (ads.field("id") >= lo) & (ads.field("id") < hi)
    prng = (pds.field("id") >= lo) & (pds.field("id") < hi)
    return [
        Case(prefix + "full scan", {
            "arrowipc": lambda: A.to_table(), "pyarrow": lambda: P.to_table(),
            "polars": lambda: pl_scan().collect()}),
        Case(prefix + "1 of 8 columns", {
            "arrowipc": lambda: A.to_table(columns=["a"]),
            "pyarrow": lambda: P.to_table(columns=["a"]),
            "polars": lambda: pl_scan().select("a").collect()}),
        Case(prefix + "1 % range of a sorted column", {
            "arrowipc": lambda: A.to_table(filter=rng), "pyarrow": lambda: P.to_table(filter=prng),
            "polars": lambda: pl_scan().filter((pl.col("id") >= lo) & (pl.col("id") < hi))
            .collect()}),
        Case(prefix + "one partition", {
            "arrowipc": lambda: A.to_table(filter=ads.field("date") == date),
            "pyarrow": lambda: P.to_table(filter=pds.field("date") == date),
            "polars": lambda: pl_scan().filter(pl.col("date") == date).collect()}),
        Case(prefix + "count_rows()", {
            "arrowipc": lambda: A.count_rows(), "pyarrow": lambda: P.count_rows(),
            "polars": lambda: pl_scan().select(pl.len()).collect().item()}, "count"),
        Case(prefix + "count_rows(b < 10)", {
            "arrowipc": lambda: A.count_rows(filter=ads.field("b") < 10),
            "pyarrow": lambda: P.count_rows(filter=pds.field("b") < 10),
            "polars": lambda: pl_scan().filter(pl.col("b") < 10).select(pl.len()).collect()
            .item()}, "count"),
        Case(prefix + "head(10)", {
            "arrowipc": lambda: A.head(10), "pyarrow": lambda: P.head(10),
            "polars": lambda: pl_scan().head(10).collect()}),
    ]


@contextlib.contextmanager
def local_s3_server() -> Iterator[str]:
    """An s3:// prefix on a moto S3 server run in a child process on a free local port (its
    requests are served outside the timed process), with the environment every library reads
    its endpoint and credentials from."""
    import socket
    import subprocess
    import boto3
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    endpoint = f"http://127.0.0.1:{port}"
    server = subprocess.Popen([sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p",
                               str(port)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    saved = {k: os.environ.get(k) for k in ("AWS_ENDPOINT_URL", "AWS_ACCESS_KEY_ID",
                                            "AWS_SECRET_ACCESS_KEY", "AWS_DEFAULT_REGION",
                                            "AWS_REGION")}
    os.environ.update({"AWS_ENDPOINT_URL": endpoint, "AWS_ACCESS_KEY_ID": "bench",
                       "AWS_SECRET_ACCESS_KEY": "bench", "AWS_DEFAULT_REGION": "us-east-1",
                       "AWS_REGION": "us-east-1"})
    try:
        client = boto3.client("s3", endpoint_url=endpoint)
        for _ in range(200):
            try:
                client.create_bucket(Bucket="bench")
                break
            except Exception:               # not listening yet
                time.sleep(0.05)
        else:
            raise RuntimeError(f"the moto S3 server on port {port} did not start")
        yield "s3://bench/dataset"
    finally:
        server.terminate()
        server.wait()
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def rows_of(result) -> int:
    if isinstance(result, int):
        return result
    return result.num_rows if hasattr(result, "num_rows") else result.height


def check(case: Case) -> None:
    """Every library gives pyarrow's number of rows (arrowipc's stream cases: the file's)."""
    counts = {lib: rows_of(run()) for lib, run in case.runs.items()}
    if len(set(counts.values())) != 1:
        raise AssertionError(f"{case.name}: the libraries disagree: {counts}")


def time_case(case: Case, rounds: int) -> dict[str, float]:
    best: dict[str, float] = {}
    libs = list(case.runs)
    for r in range(rounds):
        for lib in (libs if r % 2 == 0 else libs[::-1]):
            t0 = time.perf_counter()
            case.runs[lib]()
            dt = time.perf_counter() - t0
            best[lib] = min(best.get(lib, dt), dt)
    return best


MEMORY_CHILD = r"""
import sys, os
sys.path.insert(0, sys.argv[2])
import arrowipc.dataset as ads
def vm(key):
    for line in open("/proc/self/status"):
        if line.startswith(key):
            return int(line.split()[1]) * 1024
data = ads.dataset(sys.argv[1], format="ipc", partitioning="hive")
size = 0
for b in data.to_batches():         # warm: imports, first allocations
    size += b.nbytes
    break
with open("/proc/self/clear_refs", "w") as f:
    f.write("5")                    # reset the high-water mark
base = vm("VmRSS:")
decoded = 0
for b in data.to_batches():
    decoded += b.nbytes
print(vm("VmHWM:") - base, decoded)
"""


def memory(root: str) -> tuple[int, int] | None:
    if not sys.platform.startswith("linux"):
        return None
    p = subprocess.run([sys.executable, "-c", MEMORY_CHILD, root, str(HERE.parent)],
                       capture_output=True, text=True)
    if p.returncode != 0:
        print(p.stderr, file=sys.stderr)
        return None
    peak, decoded = map(int, p.stdout.split())
    return peak, decoded


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rows", type=int, default=10_000_000)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("-k", default="", help="only cases whose name holds this")
    ap.add_argument("--json", metavar="PATH", help="save the results as JSON")
    ap.add_argument("--s3", metavar="URL", help="an s3:// prefix to copy the dataset to and read "
                    "('local': a moto S3 server started here, in a child process)")
    ap.add_argument("--no-memory", action="store_true", help="skip the peak-memory pass")
    args = ap.parse_args(argv)

    if args.s3 == "local":
        with local_s3_server() as url:
            args.s3 = url
            return run(args)
    return run(args)


def run(args: argparse.Namespace) -> int:
    tmp = tempfile.mkdtemp(prefix="arrowipc-dataset-bench-")
    try:
        root, stream_root = os.path.join(tmp, "files"), os.path.join(tmp, "streams")
        table = make_table(args.rows)
        t0 = time.perf_counter()
        write(table, root, "ipc")
        write(table, stream_root, "stream")
        # the files written back before any read is timed: every library reads settled files
        # (as a job reads yesterday's data), none competes with the system's writeback
        if hasattr(os, "sync"):
            os.sync()
        print(f"{args.rows:,} rows x 8 columns, {len(ads.dataset(root).files)} files, written in "
              f"{time.perf_counter() - t0:.1f} s; best of {args.rounds} rounds, interleaved",
              file=sys.stderr)
        if args.s3:
            import fsspec
            fs, _ = fsspec.core.url_to_fs(args.s3)
            fs.put(root + "/", args.s3.rstrip("/") + "/", recursive=True)
        selected = [c for c in cases(root, stream_root, args.rows, args.s3) if args.k in c.name]
        results = []
        for case in selected:
            check(case)
            results.append((case.name, time_case(case, args.rounds)))
        libs = ("arrowipc", "pyarrow", "polars")
        print("| case | arrowipc ms | pyarrow ms | polars ms | arrowipc / pyarrow | "
              "arrowipc / polars |")
        print("| --- | ---: | ---: | ---: | ---: | ---: |")
        for name, best in results:
            ms = [f"{best[lib] * 1000:.1f}" if lib in best else "" for lib in libs]
            ratios = [f"{best['arrowipc'] / best[lib]:.2f}" if lib in best else ""
                      for lib in libs[1:]]
            print(f"| {name} | " + " | ".join(ms + ratios) + " |")
        mem = None if args.no_memory else memory(root)
        if mem is not None:
            peak, decoded = mem
            print(f"\npeak memory of a to_batches() pass: {peak / 2**20:.0f} MiB, "
                  f"{peak / max(decoded, 1):.0%} of the {decoded / 2**20:.0f} MiB decoded")
        if args.json:
            report = {"machine": platform.platform(), "rows": args.rows, "rounds": args.rounds,
                      "cases": {name: best for name, best in results},
                      "memory": None if mem is None else {"peak": mem[0], "decoded": mem[1]}}
            Path(args.json).write_text(json.dumps(report, indent=2))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
