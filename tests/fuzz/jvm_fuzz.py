"""Fuzz the Spark JVM data source's reader (java/) without Spark: jvm/JvmReaderFuzz.java reads
mutants of a few seed files through IpcFile, the planning code and IpcPartitionReader, copying out
every value as Spark would. A clean read and an IpcException naming the file are the only
acceptable outcomes; anything else is a finding (the mutant is kept, its index printed).

    python tests/fuzz/jvm_fuzz.py --seconds 3600              # a long run; prints the counts
    python tests/fuzz/jvm_fuzz.py --count 2000 --start 50000  # a reproducible slice

The Java class is compiled (package io.arrowipc.spark, for the reader's package-private classes)
against pyspark's jars and arrowipc's jar (rebuilt first when java/ changed). One JVM runs
`--chunk` mutants at a time; a crash or hang ends it with the input and its index on disk (kept
as crash-INDEX.bin), and the run goes on after it.
"""
from __future__ import annotations

import argparse
import importlib.util
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
SOURCE = os.path.join(HERE, "jvm", "JvmReaderFuzz.java")
JAR = os.path.join(ROOT, "arrowipc", "spark", "jars", "arrowipc-spark.jar")
# what Spark's launcher gives the JVM on Java 17 (Arrow's memory code needs java.nio open)
JAVA_OPTIONS = ["--add-opens=java.base/java.nio=ALL-UNNAMED",
                "--add-opens=java.base/sun.nio.ch=ALL-UNNAMED",
                "--add-opens=java.base/java.lang=ALL-UNNAMED",
                "-Dio.netty.tryReflectionSetAccessible=true"]
COUNTS = re.compile(r"executions (\d+) clean (\d+) errors (\d+) findings (\d+)")


def pyspark_jars() -> str | None:
    spec = importlib.util.find_spec("pyspark")
    if spec is None or not spec.submodule_search_locations:
        return None
    jars = os.path.join(list(spec.submodule_search_locations)[0], "jars")
    return jars if os.path.isdir(jars) else None


def unavailable() -> str | None:
    """Why the fuzzer cannot run here, or None."""
    if shutil.which("java") is None or shutil.which("javac") is None:
        return "no JDK"
    if pyspark_jars() is None:
        return "pyspark is not installed"
    sys.path.insert(0, os.path.join(ROOT, "java"))
    try:
        import build_jar
        build_jar.build(quiet=True)         # rebuilt when a source is newer than the jar
    finally:
        sys.path.pop(0)
    if not os.path.exists(JAR):
        return "the JVM source's jar is not built (python java/build_jar.py)"
    return None


def compile_fuzzer(classes: str) -> str:
    """The classpath to run the fuzzer with, its class compiled into `classes`."""
    cp = os.pathsep.join([JAR, os.path.join(pyspark_jars() or "", "*")])
    subprocess.run(["javac", "--release", "17", "-nowarn", "-d", classes, "-cp", cp, SOURCE],
                   check=True, capture_output=True, text=True)
    return os.pathsep.join([classes, cp])


def write_seeds(directory: str) -> list[str]:
    """Seed files: the file and stream formats, plain and compressed, with the types the JVM
    source reads (strings, views, dictionaries, nested columns, decimals, timestamps)."""
    import datetime
    import decimal

    import pyarrow as pa
    import pyarrow.ipc as pa_ipc
    n = 40
    table = pa.table({
        "i": pa.array(range(n), pa.int32()),
        "l": pa.array([None if k % 7 == 0 else k * 1000 for k in range(n)], pa.int64()),
        "f": pa.array([k / 3 for k in range(n)], pa.float64()),
        "b": pa.array([k % 3 == 0 for k in range(n)]),
        "s": pa.array([None if k % 5 == 0 else f"ü-{k}" * (k % 4) for k in range(n)]),
        "ls": pa.array([f"large-{k}" for k in range(n)], pa.large_string()),
        "sv": pa.array([f"a string view value {k}" if k % 2 else "short" for k in range(n)],
                       pa.string_view()),
        "bin": pa.array([bytes([k]) * (k % 5) for k in range(n)], pa.binary()),
        "d": pa.array([["x", "yy", "zzz"][k % 3] for k in range(n)]).dictionary_encode(),
        "li": pa.array([list(range(k % 4)) for k in range(n)], pa.list_(pa.int32())),
        "st": pa.array([{"a": k, "b": str(k)} for k in range(n)]),
        "m": pa.array([[("k", k)] for k in range(n)], pa.map_(pa.string(), pa.int64())),
        "ts": pa.array([datetime.datetime(2026, 1, 1) + datetime.timedelta(seconds=k)
                        for k in range(n)], pa.timestamp("us")),
        "dec": pa.array([decimal.Decimal(k) / 100 for k in range(n)], pa.decimal128(9, 2)),
    })
    paths = []
    for name, fmt, compression in [("plain.arrow", "file", None), ("zstd.arrow", "file", "zstd"),
                                   ("plain.arrows", "stream", None),
                                   ("lz4.arrows", "stream", "lz4")]:
        sink = pa.BufferOutputStream()
        opts = pa_ipc.IpcWriteOptions(compression=compression)
        opener = pa_ipc.new_file if fmt == "file" else pa_ipc.new_stream
        with opener(sink, table.schema, options=opts) as writer:
            for batch in table.to_batches(max_chunksize=n // 2):
                writer.write_batch(batch)
        path = os.path.join(directory, name)
        with open(path, "wb") as f:
            f.write(sink.getvalue().to_pybytes())
        paths.append(path)
    return paths


def run_chunk(classpath: str, out: str, start: int, count: int, seconds: float,
              seeds: list[str], timeout: float) -> tuple[list[int], str, int]:
    """One JVM over mutants [start, start + count) (count 0: for `seconds`): (counts, output,
    exit status; -1 for a timeout)."""
    cmd = ["java", "-Xmx1g", "-Xss4m", *JAVA_OPTIONS, "-cp", classpath,
           "io.arrowipc.spark.JvmReaderFuzz", out,
           str(start), str(count), str(seconds)] + seeds
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired as e:
        return [0, 0, 0, 0], str(e.stdout or ""), -1
    m = COUNTS.search(done.stdout)
    counts = [int(g) for g in m.groups()] if m else [0, 0, 0, 0]
    return counts, done.stdout + done.stderr, done.returncode


def run(count: int = 0, start: int = 0, seconds: float = 60.0, chunk: int = 20000,
        out: str | None = None, quiet: bool = False) -> tuple[list[int], list[str]]:
    """Run the fuzzer: (executions, clean, errors, findings) and the findings' reports."""
    work = tempfile.mkdtemp(prefix="arrowipc-jvm-fuzz-")
    out = out or os.path.join(work, "out")
    classpath = compile_fuzzer(os.path.join(work, "classes"))
    seeds = write_seeds(work)
    totals = [0, 0, 0, 0]
    reports: list[str] = []
    deadline = time.monotonic() + seconds
    index = start
    while (count and index < start + count) or (not count and time.monotonic() < deadline):
        n = min(chunk, start + count - index) if count else chunk
        counts, output, status = run_chunk(classpath, out, index, n, 0, seeds,
                                           timeout=max(300.0, n / 20))
        reports.extend(x for x in output.split("FINDING ")[1:])
        if status != 0:                          # a crash or hang: the input is still on disk
            with open(os.path.join(out, "index.txt")) as f:
                crashed = int(f.read())
            kept = os.path.join(out, f"crash-{crashed}.bin")
            os.replace(os.path.join(out, "mutant.bin"), kept)
            reports.append(f"mutant {crashed}: exit status {status} (-1: timeout), kept as "
                           f"{kept}\n{output[-3000:]}")
            # the executions before it ran cleanly or as errors; go on after it
            ran = crashed - index + 1
            counts = [ran, 0, ran - 1, 1]
            n = ran
        totals = [a + b for a, b in zip(totals, counts)]
        index += n
        if not quiet:
            print(f"mutants up to {index}: executions {totals[0]} clean {totals[1]} errors "
                  f"{totals[2]} findings {totals[3]}", flush=True)
    return totals, reports


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--count", type=int, default=0, help="mutants (0: run for --seconds)")
    parser.add_argument("--start", type=int, default=0)
    parser.add_argument("--chunk", type=int, default=20000, help="mutants per JVM")
    parser.add_argument("--out", default=None, help="where findings are kept")
    args = parser.parse_args()
    why = unavailable()
    if why:
        print(f"cannot fuzz the JVM source: {why}", file=sys.stderr)
        return 2
    totals, reports = run(args.count, args.start, args.seconds, args.chunk, args.out)
    for r in reports:
        print("FINDING", r)
    print(f"executions {totals[0]} clean {totals[1]} errors {totals[2]} findings {totals[3]}")
    return 1 if totals[3] else 0


if __name__ == "__main__":
    sys.exit(main())
