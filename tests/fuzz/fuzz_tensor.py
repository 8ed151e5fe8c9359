"""Fuzz target: Tensor and SparseTensor messages through ipc.read_tensor and the tensor API.

Seeds are messages written here: dense tensors (row-major, strided, repeated by strides of 0,
empty, 3-D with names) and sparse ones (COO canonical or not, CSR, CSC, CSF, and a COO of shape
(52000, 52000) holding two values). A mutant is a deterministic function of (seed, index): one to
four byte edits, half of them in the flatbuffer metadata, integers overwritten with boundary
values at aligned positions, or the message cut short. Each mutant is read, then equals (with a
second read), to_numpy, repr, get_tensor_size and write_tensor are called, and the conversions
between dense and sparse forms.

Mutants run in a child process whose address space is limited (RLIMIT_AS, 1 GiB) with a timeout
per mutant: a tiny message must not make the API allocate or walk what its header merely claims.
An arrowipc exception (ArrowInvalid, ArrowCapacityError, ...) or EOFError is the only acceptable
failure; anything else (MemoryError, IndexError, a signal, a hang) is a finding.

    python tests/fuzz/fuzz_tensor.py --seconds 600          # long run: prints the counts
    python tests/fuzz/fuzz_tensor.py --start 100000 --count 20000

tests/fuzz/test_fuzz_tensor.py runs a short, fixed set of mutants on every CI run.
"""
from __future__ import annotations

import argparse
import collections
import io
import json
import os
import random
import signal
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO_ROOT = os.path.dirname(os.path.dirname(HERE))
ADDRESS_SPACE = 1 << 30             # the child's RLIMIT_AS
MUTANT_SECONDS = 20                 # hang guard per mutant (SIGALRM in the child)
INT32 = (0, 1, -1, 2, 7, 8, 255, 0x7FFF, 0xFFFF, 0x7FFFFFFF, -0x80000000, 52000)
INT64 = (0, 1, -1, 8, 0x7FFFFFFF, 1 << 32, 1 << 40, (1 << 63) - 1, -(1 << 63), 52000)


def seed_messages() -> list[bytes]:
    import numpy as np

    import arrowipc
    from arrowipc import ipc
    from arrowipc.tensor import Tensor

    def message(t: object) -> bytes:
        sink = io.BytesIO()
        ipc.write_tensor(t, sink)
        return sink.getvalue()

    dense = np.arange(12, dtype=np.int32).reshape(3, 4) * (np.arange(12).reshape(3, 4) % 3 == 0)
    out = [message(arrowipc.Tensor.from_numpy(dense)),
           message(arrowipc.Tensor.from_numpy(np.linspace(0, 1, 24).reshape(2, 3, 4),
                                              ["a", "b", "c"])),
           message(arrowipc.Tensor.from_numpy(np.zeros((0, 5), dtype=np.uint8))),
           message(Tensor._make(arrowipc.int16(), arrowipc.py_buffer(b"\x01\x00"), (100, 100),
                                (0, 0))),
           message(Tensor._make(arrowipc.int8(), arrowipc.py_buffer(bytes(range(8))), (4, 2),
                                (1, 4)))]
    out.append(message(arrowipc.SparseCOOTensor.from_dense_numpy(dense)))
    out.append(message(arrowipc.SparseCOOTensor.from_numpy(
        np.array([3.5, 1.5, 2.5]), np.array([[2, 1], [0, 3], [2, 1]]), (3, 4))))
    out.append(message(arrowipc.SparseCOOTensor.from_numpy(
        np.array([1, 2], dtype=np.int8), np.array([[3, 51999], [40000, 7]]), (52000, 52000))))
    out.append(message(arrowipc.SparseCSRMatrix.from_dense_numpy(dense)))
    out.append(message(arrowipc.SparseCSCMatrix.from_dense_numpy(dense.astype(np.float32))))
    cube = np.zeros((3, 2, 4), dtype=np.int64)
    cube[0, 1, 2], cube[2, 0, 0], cube[2, 1, 3] = 5, 6, 7
    out.append(message(arrowipc.SparseCSFTensor.from_dense_numpy(cube)))
    return out


def mutate(data: bytes, rng: random.Random) -> bytes:
    out = bytearray(data)
    for _ in range(rng.randrange(1, 5)):
        n = len(out)
        if n < 16:
            break
        # the metadata (after the 8-byte prefix) half of the time, anywhere otherwise
        meta_end = min(n, 8 + int.from_bytes(out[4:8], "little", signed=True) % n)
        pos = rng.randrange(8, max(meta_end, 9)) if rng.randrange(2) else rng.randrange(n)
        op = rng.randrange(6)
        if op == 0:
            out[pos] = rng.randrange(256)
        elif op == 1:
            out[pos] ^= 1 << rng.randrange(8)
        elif op == 2 and pos + 4 <= n:
            pos -= pos % 4
            out[pos:pos + 4] = (rng.choice(INT32) & 0xFFFFFFFF).to_bytes(4, "little")
        elif op == 3 and pos + 8 <= n:
            pos -= pos % 8
            out[pos:pos + 8] = (rng.choice(INT64) & (2 ** 64 - 1)).to_bytes(8, "little")
        elif op == 4:
            del out[rng.randrange(n):]
        else:
            out[pos:pos] = bytes(rng.randrange(256) for _ in range(rng.choice((1, 4, 8))))
    return bytes(out)


def mutant(seeds: list[bytes], index: int) -> bytes:
    rng = random.Random(index)
    return mutate(seeds[index % len(seeds)], rng)


def exercise(data: bytes) -> None:
    """Read the message and call the tensor API on it (the caller judges what is raised)."""
    import numpy as np

    import arrowipc
    from arrowipc import ipc
    t = ipc.read_tensor(data)
    again = ipc.read_tensor(data)
    assert t.equals(again) or _has_nan(t), "a tensor differs from the same bytes read again"
    repr(t)
    t.shape, t.size, t.ndim, t.type
    sink = io.BytesIO()
    ipc.write_tensor(t, sink)
    assert ipc.get_tensor_size(t) == len(sink.getvalue())
    if isinstance(t, arrowipc.Tensor):
        view = t.to_numpy()
        if view.size:
            view[(0,) * view.ndim]
        if t.ndim == 2:
            arrowipc.SparseCSRMatrix.from_tensor(t)
        arrowipc.SparseCOOTensor.from_tensor(t)
    else:
        t.to_numpy()
        dense = t.to_tensor()
        np.asarray(dense.to_numpy()[(0,) * dense.ndim]) if dense.size else None


def _has_nan(t: object) -> bool:
    import numpy as np
    values = t.to_numpy()
    values = values[0] if isinstance(values, tuple) else values
    return bool(values.dtype.kind == "f" and np.isnan(values).any())


def _timeout(signum: int, frame: object) -> None:
    raise TimeoutError("mutant ran longer than the hang guard")


def child(start: int, count: int | None, seconds: float | None) -> None:
    """Run mutants in this process (address space limited); one JSON line per finding, then the
    counts."""
    import resource

    import arrowipc
    resource.setrlimit(resource.RLIMIT_AS, (ADDRESS_SPACE, ADDRESS_SPACE))
    signal.signal(signal.SIGALRM, _timeout)
    seeds = seed_messages()
    counts: collections.Counter = collections.Counter()
    deadline = None if seconds is None else time.monotonic() + seconds
    i = start
    while (count is None or i < start + count) and (deadline is None or
                                                       time.monotonic() < deadline):
        data = mutant(seeds, i)
        signal.alarm(MUTANT_SECONDS)
        try:
            exercise(data)
            counts["clean"] += 1
        except (arrowipc.ArrowException, EOFError):
            counts["arrowipc error"] += 1
        except BaseException as e:          # a foreign exception, a hang, exhausted memory
            counts["finding"] += 1
            print(json.dumps({"index": i, "error": f"{type(e).__name__}: {str(e)[:300]}",
                              "data": data.hex()}), flush=True)
        finally:
            signal.alarm(0)
        i += 1
    print(json.dumps({"counts": dict(counts)}), flush=True)


def run(start: int, count: int | None, seconds: float | None, timeout: float
        ) -> tuple[collections.Counter, list]:
    """Run mutants in a child process: (outcome counts, [finding dicts]). A child that dies by a
    signal is a finding too."""
    args = [sys.executable, os.path.abspath(__file__), "--child", "--start", str(start)]
    if count is not None:
        args += ["--count", str(count)]
    if seconds is not None:
        args += ["--seconds", str(seconds)]
    done = subprocess.run(args, capture_output=True, text=True, timeout=timeout,
                          env=dict(os.environ, PYTHONPATH=REPO_ROOT))
    counts: collections.Counter = collections.Counter()
    findings = []
    for line in done.stdout.splitlines():
        record = json.loads(line)
        if "counts" in record:
            counts.update(record["counts"])
        else:
            findings.append(record)
    if done.returncode != 0:
        findings.append({"index": None, "error": f"child exited with {done.returncode}: "
                                                 f"{done.stderr[-2000:]}"})
    return counts, findings


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--start", type=int, default=0)
    parser.add_argument("--count", type=int, default=None)
    parser.add_argument("--seconds", type=float, default=None)
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.count is None and args.seconds is None:
        args.count = 1000
    if args.child:
        child(args.start, args.count, args.seconds)
        return 0
    began = time.monotonic()
    limit = (args.seconds or 0) + (args.count or 0) * MUTANT_SECONDS + 60
    counts, findings = run(args.start, args.count, args.seconds, limit)
    for f in findings:
        print(f"mutant {f['index']}: {f['error']}")
    print(f"{sum(counts.values())} executions in {time.monotonic() - began:.0f} s: "
          f"{dict(counts)}; {len(findings)} findings")
    return 1 if findings else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
