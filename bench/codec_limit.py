#!/usr/bin/env python
"""How close compressed reads and writes come to the codec's own speed (issue 36).

    python bench/codec_limit.py [--rounds N] [--datasets wide5m,small1k,cols1000] [--threads T]
                                [-k SUBSTRING]

The limit: the body buffers of a compressed IPC file of the bench's data (LZ4 frame and ZSTD,
written by pyarrow: `[int64 uncompressed length][frame]` each), decompressed, and their plain
bytes compressed again, by the codec libraries' C functions directly through the `lz4` and
`zstandard` packages (both release the GIL), on one thread and on T threads (a thread pool over
the buffers; T = the number of cores by default). Beside it, arrowipc's and pyarrow's read of the
same file (`open_file(...).read_all()`, from memory and by path) and write of the same batches
(`new_file(...)` with the codec, to memory and to a path). Compression uses what Arrow writes:
LZ4 frames with the library's default preferences, ZSTD at level 1.

Every round runs each case once, in an order that rotates from round to round (as users.py
alternates the two libraries); the table gives the best round of each, wall and process CPU time,
and the ratios: arrowipc ÷ limit and pyarrow ÷ limit (the limit: the faster of one thread and T
threads; 1 = the codec's own speed), and arrowipc ÷ pyarrow (below 1: arrowipc faster). A read's
limit is the decompression of its buffers, a write's their compression: the rest (framing,
allocation, copies, the file) is what a library adds. Reads come from the page cache, as in
users.py.
"""
from __future__ import annotations

import argparse
import gc
import os
import struct
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pyarrow as pa

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

import lz4.frame  # noqa: E402
import zstandard  # noqa: E402

import arrowipc  # noqa: E402
from arrowipc import ipc  # noqa: E402
from arrowipc.ipc._batch_decode import decode_record_batch_header  # noqa: E402
from conftest import BUILDERS  # noqa: E402

ROUNDS = {"wide5m": 5, "small1k": 7, "cols1000": 9}
ZSTD_LEVEL = 1                      # Arrow's default ZSTD level


def pyarrow_file(batches: list[pa.RecordBatch], codec: str) -> bytes:
    sink = pa.BufferOutputStream()
    with pa.ipc.new_file(sink, batches[0].schema,
                         options=pa.ipc.IpcWriteOptions(compression=codec)) as w:
        for b in batches:
            w.write_batch(b)
    return sink.getvalue().to_pybytes()


def compressed_buffers(file_bytes: bytes) -> list[tuple[bytes, int]]:
    """(frame, uncompressed length) of every compressed body buffer of the file's batches (the
    stream inside the file starts after the 8-byte magic; buffers stored plain are skipped)."""
    out = []
    for msg in ipc.MessageReader.open_stream(memoryview(file_bytes)[8:]):
        if msg.type not in ("record batch", "dictionary"):
            continue
        header = decode_record_batch_header(msg.header)
        body = bytes(msg.body)
        for offset, length in header.buffers_list():
            if length < 8:
                continue
            (raw_length,) = struct.unpack_from("<q", body, offset)
            if raw_length >= 0:
                out.append((body[offset + 8:offset + length], raw_length))
    return out


def limits(codec: str, frames: list[tuple[bytes, int]], threads: int) -> dict:
    """{case: callable} of the codec's own decompression and compression of the buffers."""
    plain = [decompress(codec, f, n) for f, n in frames]
    assert [len(p) for p in plain] == [n for _, n in frames]
    pool = ThreadPoolExecutor(threads)

    def dec_all(items):
        return [decompress(codec, f, n) for f, n in items]

    def comp_all(items):
        return [compress(codec, data) for data in items]

    # one task per thread, each over a share of about equal bytes (a task per buffer would cost
    # the pool's per-task overhead on each of cols1000's 8 KB buffers)
    frame_shares = shares(frames, threads, lambda x: x[1])
    plain_shares = shares(plain, threads, len)
    return {
        "limit_decompress_1t": lambda: dec_all(frames),
        f"limit_decompress_{threads}t": lambda: list(pool.map(dec_all, frame_shares)),
        "limit_compress_1t": lambda: comp_all(plain),
        f"limit_compress_{threads}t": lambda: list(pool.map(comp_all, plain_shares)),
    }, sum(len(p) for p in plain), pool


def shares(items: list, n: int, size) -> list[list]:
    """`items` cut into at most n runs of about equal total size."""
    total = sum(size(x) for x in items) or 1
    out: list[list] = [[] for _ in range(n)]
    done = 0
    for x in items:
        out[min(n - 1, done * n // total)].append(x)
        done += size(x)
    return [run for run in out if run]


_ZSTD_D = {}
_ZSTD_C = {}


def decompress(codec: str, frame: bytes, n: int) -> bytes:
    if codec == "lz4":
        return lz4.frame.decompress(frame)
    import threading                       # a context per thread: contexts are not shared
    d = _ZSTD_D.get(threading.get_ident())
    if d is None:
        d = _ZSTD_D[threading.get_ident()] = zstandard.ZstdDecompressor()
    return d.decompress(frame, max_output_size=n)


def compress(codec: str, data: bytes) -> bytes:
    if codec == "lz4":
        return lz4.frame.compress(data)
    import threading
    c = _ZSTD_C.get(threading.get_ident())
    if c is None:
        c = _ZSTD_C[threading.get_ident()] = zstandard.ZstdCompressor(level=ZSTD_LEVEL)
    return c.compress(data)


def library_cases(batches: list[pa.RecordBatch], file_bytes: bytes, path: str, out_dir: str,
                  codec: str) -> dict:
    """{case: callable} of arrowipc's and pyarrow's reads and writes."""
    ai_batches = [arrowipc.record_batch(b) for b in batches]
    ai_schema, pa_schema = ai_batches[0].schema, batches[0].schema
    ai_options = ipc.IpcWriteOptions(compression=codec)
    pa_options = pa.ipc.IpcWriteOptions(compression=codec)
    ai_mem, pa_mem = memoryview(file_bytes), pa.py_buffer(file_bytes)
    ai_out, pa_out = os.path.join(out_dir, "out-arrowipc"), os.path.join(out_dir, "out-pyarrow")

    def ai_write(to_path: bool):
        sink = ai_out if to_path else arrowipc.BufferOutputStream()
        with ipc.new_file(sink, ai_schema, options=ai_options) as w:
            for b in ai_batches:
                w.write_batch(b)
        return None if to_path else sink.getvalue()

    def pa_write(to_path: bool):
        sink = pa_out if to_path else pa.BufferOutputStream()
        with pa.ipc.new_file(sink, pa_schema, options=pa_options) as w:
            for b in batches:
                w.write_batch(b)
        return None if to_path else sink.getvalue()

    return {
        "arrowipc_read_memory": lambda: ipc.open_file(ai_mem).read_all(),
        "pyarrow_read_memory": lambda: pa.ipc.open_file(pa_mem).read_all(),
        "arrowipc_read_path": lambda: ipc.open_file(path).read_all(),
        "pyarrow_read_path": lambda: pa.ipc.open_file(path).read_all(),
        "arrowipc_write_memory": lambda: ai_write(False),
        "pyarrow_write_memory": lambda: pa_write(False),
        "arrowipc_write_path": lambda: ai_write(True),
        "pyarrow_write_path": lambda: pa_write(True),
    }


def interleaved(cases: dict, rounds: int) -> tuple[dict, dict]:
    """{case: best wall seconds}, {case: best CPU seconds}; each round runs every case once, the
    order rotating by one case per round."""
    names = list(cases)
    wall = {k: [] for k in names}
    cpu = {k: [] for k in names}
    for k in names:                        # warm-up: caches, lazy imports, thread pools
        cases[k]()
    for r in range(rounds):
        for k in names[r % len(names):] + names[:r % len(names)]:
            gc.collect()
            c0 = time.process_time()
            t0 = time.perf_counter()
            result = cases[k]()
            wall[k].append(time.perf_counter() - t0)
            cpu[k].append(time.process_time() - c0)
            del result
    return {k: min(v) for k, v in wall.items()}, {k: min(v) for k, v in cpu.items()}


def check(batches: list[pa.RecordBatch], file_bytes: bytes, path: str, cases: dict) -> None:
    """Every read gives the data, every write a file pyarrow reads back as the data (once,
    outside the timed rounds)."""
    expected = pa.Table.from_batches(batches)
    for lib in ("arrowipc", "pyarrow"):
        for where in ("memory", "path"):
            assert pa.table(cases[f"{lib}_read_{where}"]()).equals(expected), (lib, where)
        written = cases[f"{lib}_write_memory"]()
        assert pa.ipc.open_file(pa.py_buffer(written)).read_all().equals(expected), lib


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("-k", default="", help="only groups containing this substring (comma: any)")
    ap.add_argument("--rounds", type=int, default=None)
    ap.add_argument("--datasets", default="small1k,wide5m,cols1000")
    ap.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    args = ap.parse_args(argv)
    wanted = [k for k in args.k.split(",") if k]
    t = args.threads
    print(f"nproc {os.cpu_count()}, pyarrow {pa.__version__}, lz4 {lz4.__version__}, "
          f"zstandard {zstandard.__version__} (level {ZSTD_LEVEL}); best round of each; "
          f"limit = the codec's C functions over the file's body buffers, the faster of 1 "
          f"and {t} threads; "
          f"ratios below 1: faster than the divisor")
    print(f"| group | plain MB | limit 1t ms | limit {t}t ms | arrowipc ms | pyarrow ms | "
          "arrowipc ÷ limit | pyarrow ÷ limit | arrowipc ÷ pyarrow | CPU arrowipc ÷ pyarrow |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    with tempfile.TemporaryDirectory(dir=os.environ.get("BENCH_DIR")) as d:
        for ds in args.datasets.split(","):
            batches = BUILDERS[ds]()
            for codec in ("lz4", "zstd"):
                groups = [f"{op}_{where}_{codec}-{ds}" for op in ("read", "write")
                          for where in ("memory", "path")]
                if wanted and not any(w in g for g in groups for w in wanted):
                    continue
                file_bytes = pyarrow_file(batches, codec)
                path = os.path.join(d, f"{ds}-{codec}.arrow")
                with open(path, "wb") as f:
                    f.write(file_bytes)
                frames = compressed_buffers(file_bytes)
                limit_cases, plain_bytes, pool = limits(codec, frames, t)
                libs = library_cases(batches, file_bytes, path, d, codec)
                check(batches, file_bytes, path, libs)
                wall, cpu = interleaved({**limit_cases, **libs}, args.rounds or ROUNDS[ds])
                pool.shutdown()
                for op, limit in (("read", "decompress"), ("write", "compress")):
                    lim1, lim_t = wall[f"limit_{limit}_1t"], wall[f"limit_{limit}_{t}t"]
                    lim = min(lim1, lim_t)        # a busy machine can make threads lose
                    for where in ("memory", "path"):
                        group = f"{op}_{where}_{codec}-{ds}"
                        if wanted and not any(w in group for w in wanted):
                            continue
                        a, p = wall[f"arrowipc_{op}_{where}"], wall[f"pyarrow_{op}_{where}"]
                        ca, cp = cpu[f"arrowipc_{op}_{where}"], cpu[f"pyarrow_{op}_{where}"]
                        print(f"| {group} | {plain_bytes / 1e6:.1f} | {lim1 * 1e3:.2f} | "
                              f"{lim_t * 1e3:.2f} | {a * 1e3:.2f} | {p * 1e3:.2f} | "
                              f"{a / lim:.2f} | {p / lim:.2f} | {a / p:.2f} | "
                              f"{ca / cp if cp else float('nan'):.2f} |", flush=True)
                os.remove(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
