#!/usr/bin/env python
"""How close compressed reads and writes come to the codec's own speed (issue 36).

    python bench/codec_limit.py [--rounds N] [--datasets wide5m,small1k,cols1000] [--threads T]
                                [-k SUBSTRING]

`--datasets ints8,trips` adds the shapes where compression is nearly all of a write (eight
balanced int64 columns; a trip-record table): there a write cannot be faster than the limit.

The limit: the body buffers of a compressed IPC file of the bench's data (LZ4 frame and ZSTD,
written by pyarrow: `[int64 uncompressed length][frame]` each), decompressed, and their plain
bytes compressed again, by the codec libraries' C functions called directly (through ctypes, the
GIL released, in the shared objects the `lz4` and `zstandard` packages ship; see NativeCodec),
into output buffers allocated once, on one thread and on T threads (a thread pool, each thread
over a share of the buffers; T = the number of cores by default). Beside it, arrowipc's and
pyarrow's read of the same file (`open_file(...).read_all()`, from memory and by path) and
write of the same batches (`new_file(...)` with the codec, to memory and to a path).
Compression uses what Arrow writes: LZ4 frames with the library's default preferences, ZSTD at
level 1.

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
import ctypes
import gc
import os
import struct
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Callable

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


class NativeCodec:
    """The codec library's C functions called directly, through ctypes (which releases the GIL
    for the call), in the shared objects the `lz4` and `zstandard` packages ship (the ones
    arrowipc's C codecs load too): LZ4F_decompress / LZ4F_compressFrame, ZSTD_decompressDCtx /
    ZSTD_compressCCtx, with a context per thread, into output buffers allocated once. (The
    packages' Python functions are slower than their C: lz4.frame.decompress grows its output
    for frames without a content size, as Arrow writes them, at a fraction of LZ4's speed.)"""

    def __init__(self, codec: str) -> None:
        from ctypes import POINTER, c_char_p, c_int, c_size_t, c_uint, c_void_p
        from importlib.util import find_spec
        self.codec = codec
        self.local = threading.local()
        module = "lz4.frame._frame" if codec == "lz4" else "zstandard._cffi"
        lib = self.lib = ctypes.CDLL(find_spec(module).origin)
        sig = {
            "lz4": {"LZ4F_createDecompressionContext": ([POINTER(c_void_p), c_uint], c_size_t),
                    "LZ4F_decompress": ([c_void_p, c_void_p, POINTER(c_size_t), c_char_p,
                                         POINTER(c_size_t), c_void_p], c_size_t),
                    "LZ4F_resetDecompressionContext": ([c_void_p], None),
                    "LZ4F_compressFrameBound": ([c_size_t, c_void_p], c_size_t),
                    "LZ4F_compressFrame": ([c_void_p, c_size_t, c_char_p, c_size_t, c_void_p],
                                           c_size_t),
                    "LZ4F_isError": ([c_size_t], c_uint)},
            "zstd": {"ZSTD_createDCtx": ([], c_void_p), "ZSTD_createCCtx": ([], c_void_p),
                     "ZSTD_decompressDCtx": ([c_void_p, c_void_p, c_size_t, c_char_p, c_size_t],
                                             c_size_t),
                     "ZSTD_compressCCtx": ([c_void_p, c_void_p, c_size_t, c_char_p, c_size_t,
                                           c_int], c_size_t),
                     "ZSTD_compressBound": ([c_size_t], c_size_t),
                     "ZSTD_isError": ([c_size_t], c_uint)},
        }[codec]
        for name, (args, result) in sig.items():
            getattr(lib, name).argtypes = args
            getattr(lib, name).restype = result
        self.c_size_t = c_size_t

    def _context(self, decompress: bool) -> object:
        key = "d" if decompress else "c"
        ctx = getattr(self.local, key, None)
        if ctx is None:
            if self.codec == "zstd":
                ctx = self.lib.ZSTD_createDCtx() if decompress else self.lib.ZSTD_createCCtx()
            else:
                ptr = ctypes.c_void_p()
                assert self.lib.LZ4F_createDecompressionContext(ctypes.byref(ptr), 100) == 0
                ctx = ptr
            setattr(self.local, key, ctx)
        return ctx

    def bound(self, n: int) -> int:
        if self.codec == "zstd":
            return int(self.lib.ZSTD_compressBound(n))
        return int(self.lib.LZ4F_compressFrameBound(n, None))

    def decompress(self, frame: bytes, out: bytearray) -> None:
        """`frame` decompressed into `out` (exactly its decompressed size)."""
        lib, n = self.lib, len(out)
        dst = ctypes.addressof((ctypes.c_char * n).from_buffer(out)) if n else None
        if self.codec == "zstd":
            got = lib.ZSTD_decompressDCtx(self._context(True), dst, n, frame, len(frame))
            assert not lib.ZSTD_isError(got) and got == n, got
            return
        ctx = self._context(True)
        dst_size, src_size = self.c_size_t(n), self.c_size_t(len(frame))
        left = lib.LZ4F_decompress(ctx, dst, ctypes.byref(dst_size), frame,
                                   ctypes.byref(src_size), None)
        if lib.LZ4F_isError(left) or left != 0 or dst_size.value != n:
            lib.LZ4F_resetDecompressionContext(ctx)
            raise ValueError(f"LZ4F_decompress: {left}, {dst_size.value} of {n} bytes")

    def compress(self, data: bytes, out: bytearray) -> int:
        """`data` compressed into `out` (at least bound(len(data)) bytes); the frame's size."""
        lib, n = self.lib, len(out)
        dst = ctypes.addressof((ctypes.c_char * n).from_buffer(out))
        if self.codec == "zstd":
            got = lib.ZSTD_compressCCtx(self._context(False), dst, n, data, len(data),
                                        ZSTD_LEVEL)
            assert not lib.ZSTD_isError(got), got
        else:
            got = lib.LZ4F_compressFrame(dst, n, data, len(data), None)
            assert not lib.LZ4F_isError(got), got
        return int(got)


def limits(codec: str, frames: list[tuple[bytes, int]], threads: int) -> tuple[dict, int, Any]:
    """{case: callable} of the codec's own decompression and compression of the buffers, the
    plain bytes, and the thread pool (to shut down)."""
    native = NativeCodec(codec)
    plain = [lz4.frame.decompress(f) if codec == "lz4" else
             zstandard.ZstdDecompressor().decompress(f, max_output_size=n) for f, n in frames]
    assert [len(p) for p in plain] == [n for _, n in frames]
    outs = [bytearray(n) for _, n in frames]
    decompress_jobs = list(zip([f for f, _ in frames], outs))
    for frame, out in decompress_jobs:                   # the C path gives the same bytes
        native.decompress(frame, out)
    assert all(bytes(o) == p for o, p in zip(outs, plain))
    compress_jobs = [(p, bytearray(native.bound(len(p)))) for p in plain]
    for data, out in compress_jobs:                      # and frames that read back
        size = native.compress(data, out)
        back = bytearray(len(data))
        native.decompress(bytes(out[:size]), back)
        assert back == data
    pool = ThreadPoolExecutor(threads)

    def dec_all(jobs: list) -> None:
        for frame, out in jobs:
            native.decompress(frame, out)

    def comp_all(jobs: list) -> None:
        for data, out in jobs:
            native.compress(data, out)

    # one task per thread, each over a share of about equal bytes (a task per buffer would cost
    # the pool's per-task overhead on each of cols1000's 8 KB buffers)
    dec_shares = shares(decompress_jobs, threads, lambda j: len(j[1]))
    comp_shares = shares(compress_jobs, threads, lambda j: len(j[0]))
    return {
        "limit_decompress_1t": lambda: dec_all(decompress_jobs),
        f"limit_decompress_{threads}t": lambda: list(pool.map(dec_all, dec_shares)),
        "limit_compress_1t": lambda: comp_all(compress_jobs),
        f"limit_compress_{threads}t": lambda: list(pool.map(comp_all, comp_shares)),
    }, sum(len(p) for p in plain), pool


def shares(items: list, n: int, size: Callable[[Any], int]) -> list[list]:
    """`items` cut into at most n runs of about equal total size."""
    total = sum(size(x) for x in items) or 1
    out: list[list] = [[] for _ in range(n)]
    done = 0
    for x in items:
        out[min(n - 1, done * n // total)].append(x)
        done += size(x)
    return [run for run in out if run]


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
