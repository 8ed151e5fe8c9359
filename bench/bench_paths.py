#!/usr/bin/env python
"""Reads of files by path, arrowipc and pyarrow side by side, rounds interleaved (issue 32).

    python bench/bench_paths.py [--rounds N] [-k SUBSTRING] [--datasets small1k,wide5m]

The default read of a path: `open_file(path).read_all()`, `open_stream(path).read_all()`, a
projected read (the first column, `included_fields=[0]`), every batch by `get_batch(i)`, and
one batch from the middle. arrowipc maps a whole-file read under a read lease where the kernel
grants one (Linux; otherwise, and for ranged reads, it reads into memory of the process), so no
other process can truncate or rewrite what it reads: a writer's open waits until the mapped
bytes are copied. pyarrow reads files into memory but maps a stream given by path without such
protection (`pa.ipc.open_stream(path)` dies of SIGBUS when the file is truncated after the read).
The `stream_copy` rows compare against pyarrow reading the stream into memory of its own
(`pa.ipc.open_stream(pa.OSFile(path))`, what it does for files). The `map` cases read a plain
memory map, zero-copy: `open_file(path, memory_map=True)` here, `open_file(pa.memory_map(path))`
in pyarrow. Files are written by pyarrow, uncompressed and LZ4. Rounds alternate the two libraries (the order flips
every round, as in users.py); the table gives the best round of each and arrowipc's time divided
by pyarrow's (below 1: arrowipc faster), wall time and process CPU time. Every result is checked
against pyarrow once, outside the timed rounds. Reads come from the page cache (the files were
just written), as in a repeated read; cold reads are bound by the disk for both libraries.
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

import pyarrow as pa

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

import arrowipc  # noqa: E402,F401
from arrowipc import ipc  # noqa: E402
from conftest import BUILDERS  # noqa: E402
from users import run_case  # noqa: E402

ROUNDS = {"wide5m": 5, "small1k": 7, "cols1000": 9}


def write(path: str, batches: list[pa.RecordBatch], form: str, codec: str | None) -> None:
    opener = pa.ipc.new_file if form == "file" else pa.ipc.new_stream
    with opener(path, batches[0].schema,
                options=pa.ipc.IpcWriteOptions(compression=codec)) as w:
        for b in batches:
            w.write_batch(b)


def reads(path_file: str, path_stream: str) -> dict:
    """{case: (arrowipc callable, pyarrow callable, check(result) -> table)}."""
    ours_one = ipc.IpcReadOptions(included_fields=[0])
    theirs_one = pa.ipc.IpcReadOptions(included_fields=[0])

    def every(mod, src):
        r = mod.open_file(src)
        return [r.get_batch(i) for i in range(r.num_record_batches)]

    def middle(mod, src):
        r = mod.open_file(src)
        return [r.get_batch(r.num_record_batches // 2)]

    return {
        "file_read_all": (lambda: ipc.open_file(path_file).read_all(),
                          lambda: pa.ipc.open_file(path_file).read_all()),
        "stream_read_all": (lambda: ipc.open_stream(path_stream).read_all(),
                            lambda: pa.ipc.open_stream(path_stream).read_all()),
        "stream_copy_read_all": (lambda: ipc.open_stream(path_stream).read_all(),
                                 lambda: pa.ipc.open_stream(pa.OSFile(path_stream)).read_all()),
        "file_projected": (lambda: ipc.open_file(path_file, options=ours_one).read_all(),
                           lambda: pa.ipc.open_file(path_file, options=theirs_one).read_all()),
        "file_get_batch_each": (lambda: every(ipc, path_file), lambda: every(pa.ipc, path_file)),
        "file_get_batch_one": (lambda: middle(ipc, path_file), lambda: middle(pa.ipc, path_file)),
        "map_file_read_all": (lambda: ipc.open_file(path_file, memory_map=True).read_all(),
                              lambda: pa.ipc.open_file(pa.memory_map(path_file)).read_all()),
        "map_stream_read_all": (lambda: ipc.open_stream(path_stream, memory_map=True).read_all(),
                                lambda: pa.ipc.open_stream(pa.memory_map(path_stream)).read_all()),
    }


def as_table(result: object) -> pa.Table:
    if isinstance(result, list):
        return pa.Table.from_batches([pa.record_batch(b) for b in result])
    return pa.table(result)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("-k", default="", help="only cases containing this substring (comma: any)")
    ap.add_argument("--rounds", type=int, default=None)
    ap.add_argument("--datasets", default="small1k,wide5m,cols1000")
    args = ap.parse_args(argv)
    wanted = [k for k in args.k.split(",") if k]
    print(f"nproc {os.cpu_count()}, pyarrow {pa.__version__}; best round of each; "
          f"ratio = arrowipc / pyarrow (below 1: arrowipc faster)")
    print("| case | arrowipc ms | pyarrow ms | ratio | CPU ratio |")
    print("| --- | ---: | ---: | ---: | ---: |")
    with tempfile.TemporaryDirectory(dir=os.environ.get("BENCH_DIR")) as d:
        for ds in args.datasets.split(","):
            batches = BUILDERS[ds]()
            expected = pa.Table.from_batches(batches)
            for codec in (None, "lz4"):
                pf = os.path.join(d, f"{ds}-{codec}.arrow")
                ps = os.path.join(d, f"{ds}-{codec}.arrows")
                write(pf, batches, "file", codec)
                write(ps, batches, "stream", codec)
                for case, (ours, theirs) in reads(pf, ps).items():
                    group = f"{case}_{codec or 'plain'}-{ds}"
                    if wanted and not any(w in group for w in wanted):
                        continue
                    got = as_table(ours())
                    want = as_table(theirs())
                    assert got.equals(want), group
                    if case == "file_projected":
                        assert got.equals(expected.select([0])), group
                    runs = {"arrowipc": ours, "pyarrow": theirs}
                    _, times, cpu = run_case(lambda lib, _d: runs[lib], None,
                                             args.rounds or ROUNDS[ds])
                    a, p = min(times["arrowipc"]), min(times["pyarrow"])
                    ca, cp = min(cpu["arrowipc"]), min(cpu["pyarrow"])
                    print(f"| {group} | {a * 1e3:.2f} | {p * 1e3:.2f} | {a / p:.2f} | "
                          f"{ca / cp if cp else float('nan'):.2f} |", flush=True)
                os.remove(pf)
                os.remove(ps)
    return 0


if __name__ == "__main__":
    sys.exit(main())
