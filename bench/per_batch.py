#!/usr/bin/env python
"""Fixed costs per batch and per read, arrowipc and pyarrow side by side (issue 36).

    python bench/per_batch.py [--rounds N] [-k SUBSTRING] [--profile CASE]

Every case is what a user of small batches does, each library called the way its documentation
shows, with pyarrow's own IPC bytes as the input of every read: iterating a stream of 1,000
batches of 1,000 rows (`for b in open_stream(buf)`, touching `num_rows`), every batch of the same
data as a file (`open_file(buf).get_batch(i)`), `read_all()` of that stream, a 5-batch stream of
1,000-row batches (the fixed cost of one read; read 200 times over in a round), the 5-batch
`wide5m` stream (5 x 1M rows, zero-copy, so again fixed cost; 200 times over), the small-batch file read through a memory map
(`open_file(path, memory_map=True)` against `open_file(pa.memory_map(path))`) and by path, and
writing the 1,000 batches to memory (stream and file) and to a path. The batches are `small1k`
of `bench/conftest.py` (5 mixed columns; arrowipc writes the same batches, imported zero-copy).

Rounds alternate the two libraries (the order flips every round, as in `users.py`), and the
table gives the best round of each, the µs per batch of both and arrowipc's time divided by
pyarrow's (below 1: arrowipc faster). Results are checked against pyarrow once, outside the
timed rounds. `--profile CASE` runs arrowipc's side of one case under cProfile instead and
prints the top of the profile. On a loaded machine run it under `nice` and read the ratios as
noisy; the per-batch figures of both libraries move together.
"""
from __future__ import annotations

import argparse
import cProfile
import os
import pstats
import sys
import tempfile
from pathlib import Path

import pyarrow as pa

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

import arrowipc  # noqa: E402
from arrowipc import ipc  # noqa: E402
from conftest import BUILDERS  # noqa: E402
from users import run_case  # noqa: E402


def pyarrow_bytes(batches: list[pa.RecordBatch], form: str) -> pa.Buffer:
    sink = pa.BufferOutputStream()
    opener = pa.ipc.new_stream if form == "stream" else pa.ipc.new_file
    with opener(sink, batches[0].schema) as w:
        for b in batches:
            w.write_batch(b)
    return sink.getvalue()


# a read of 5 batches takes microseconds: it is timed REPEAT times over per round
REPEAT = 200


def repeated(read):
    def run():
        for _ in range(REPEAT - 1):
            read()
        return read()
    return run


def cases(directory: str) -> list[tuple[str, int, object, object, object]]:
    """(name, batches per round, arrowipc callable, pyarrow callable, check(result) -> table)."""
    small = BUILDERS["small1k"]()
    wide = BUILDERS["wide5m"]()
    pa_small_table = pa.Table.from_batches(small)
    ai_table = arrowipc.table(pa_small_table)
    ai_batches = ai_table.to_batches()
    schema_pa, schema_ai = pa_small_table.schema, ai_table.schema

    stream = pyarrow_bytes(small, "stream")
    file = pyarrow_bytes(small, "file")
    five = pyarrow_bytes(small[:5], "stream")
    wide_stream = pyarrow_bytes(wide, "stream")
    ours_stream, ours_file = memoryview(stream), memoryview(file)
    ours_five, ours_wide = memoryview(five), memoryview(wide_stream)
    path = os.path.join(directory, "small1k.arrow")
    with open(path, "wb") as f:
        f.write(memoryview(file))
    out = {"arrowipc": os.path.join(directory, "out-arrowipc.arrows"),
           "pyarrow": os.path.join(directory, "out-pyarrow.arrows")}

    def iterate(mod, src):
        return sum(b.num_rows for b in mod.open_stream(src))

    def every(mod, src):
        r = mod.open_file(src)
        return [r.get_batch(i) for i in range(r.num_record_batches)]

    def write(mod, opener, sink, schema, batches):
        with opener(sink, schema) as w:
            for b in batches:
                w.write_batch(b)
        return sink

    def as_table(result):
        if isinstance(result, int):
            return result
        if isinstance(result, list):
            return pa.Table.from_batches([pa.record_batch(b) for b in result])
        if isinstance(result, str):
            return pa.ipc.open_stream(pa.py_buffer(Path(result).read_bytes())).read_all()
        if hasattr(result, "getvalue"):
            raw = pa.py_buffer(bytes(memoryview(result.getvalue())))
            try:
                return pa.ipc.open_stream(raw).read_all()
            except pa.ArrowInvalid:
                return pa.ipc.open_file(raw).read_all()
        return pa.table(result)

    n = len(small)
    return [
        ("iterate_stream", n, lambda: iterate(ipc, ours_stream), lambda: iterate(pa.ipc, stream), as_table),
        ("iterate_file", n, lambda: every(ipc, ours_file), lambda: every(pa.ipc, file), as_table),
        ("read_all_stream", n, lambda: ipc.open_stream(ours_stream).read_all(),
         lambda: pa.ipc.open_stream(stream).read_all(), as_table),
        ("read_5_small_stream", 5 * REPEAT, repeated(lambda: ipc.open_stream(ours_five).read_all()),
         repeated(lambda: pa.ipc.open_stream(five).read_all()), as_table),
        ("read_5_wide5m_stream", 5 * REPEAT, repeated(lambda: ipc.open_stream(ours_wide).read_all()),
         repeated(lambda: pa.ipc.open_stream(wide_stream).read_all()), as_table),
        ("read_file_mmap", n, lambda: ipc.open_file(path, memory_map=True).read_all(),
         lambda: pa.ipc.open_file(pa.memory_map(path)).read_all(), as_table),
        ("read_file_path", n, lambda: ipc.open_file(path).read_all(),
         lambda: pa.ipc.open_file(path).read_all(), as_table),
        ("write_stream_memory", n,
         lambda: write(ipc, ipc.new_stream, arrowipc.BufferOutputStream(), schema_ai, ai_batches),
         lambda: write(pa.ipc, pa.ipc.new_stream, pa.BufferOutputStream(), schema_pa, small), as_table),
        ("write_file_memory", n,
         lambda: write(ipc, ipc.new_file, arrowipc.BufferOutputStream(), schema_ai, ai_batches),
         lambda: write(pa.ipc, pa.ipc.new_file, pa.BufferOutputStream(), schema_pa, small), as_table),
        ("write_stream_path", n,
         lambda: write(ipc, ipc.new_stream, out["arrowipc"], schema_ai, ai_batches),
         lambda: write(pa.ipc, pa.ipc.new_stream, out["pyarrow"], schema_pa, small), as_table),
    ]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("-k", default="", help="only cases containing this substring (comma: any)")
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--profile", metavar="CASE", help="profile arrowipc's side of one case")
    args = ap.parse_args(argv)
    wanted = [k for k in args.k.split(",") if k]
    with tempfile.TemporaryDirectory(dir=os.environ.get("BENCH_DIR")) as d:
        all_cases = cases(d)
        if args.profile:
            ours = next(c[2] for c in all_cases if c[0] == args.profile)
            ours()
            prof = cProfile.Profile()
            prof.enable()
            for _ in range(args.rounds):
                ours()
            prof.disable()
            pstats.Stats(prof).sort_stats("tottime").print_stats(30)
            return 0
        print(f"nproc {os.cpu_count()}, pyarrow {pa.__version__}; best of {args.rounds} interleaved "
              f"rounds; ratio = arrowipc / pyarrow (below 1: arrowipc faster)")
        print("| case | batches | arrowipc µs/batch | pyarrow µs/batch | ratio |")
        print("| --- | ---: | ---: | ---: | ---: |")
        for name, num_batches, ours, theirs, check in all_cases:
            if wanted and not any(w in name for w in wanted):
                continue
            got, want = check(ours()), check(theirs())
            assert got == want if isinstance(got, int) else got.equals(want), name
            runs = {"arrowipc": ours, "pyarrow": theirs}
            _, times, _cpu = run_case(lambda lib, _d: runs[lib], None, args.rounds)
            a, p = min(times["arrowipc"]), min(times["pyarrow"])
            print(f"| {name} | {num_batches} | {a / num_batches * 1e6:.2f} | "
                  f"{p / num_batches * 1e6:.2f} | {a / p:.2f} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
