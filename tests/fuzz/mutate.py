"""A pure-Python mutation fuzzer for the IPC readers (runs where atheris/libFuzzer do not).

Each mutant is a gold seed with one to four mutations, chosen by a random generator seeded with
(seed file, mutant index): a mutant is fully described by that pair, so worker processes
regenerate it and a finding can be rebuilt and saved. Mutations know a little about the format:
half of them land in the 512 bytes after a message's continuation marker (prefixes, flatbuffer
metadata, field nodes, buffer spans, compression prefixes), and integers are overwritten with
boundary values at aligned positions.

Mutants run through harness.exercise in worker processes with a memory limit and a timeout
(harness.ReplayPool); anything but a clean read or an arrowipc exception is a finding, written
to tests/fuzz/findings/ (move it to tests/fuzz/regressions/ once fixed: the corpus replay test
replays that folder).

    python tests/fuzz/mutate.py --seconds 60               # all targets, 2 workers
    python tests/fuzz/mutate.py --target compressed --seconds 3600 --jobs 2
    python tests/fuzz/mutate.py --target compressed --python-codecs    # the codec fallback path
"""
from __future__ import annotations

import hashlib
import os
import random
import struct
import sys
import time
from collections import Counter
from functools import lru_cache

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "untrusted"))

import harness  # noqa: E402
import seeds  # noqa: E402

FINDINGS = os.path.join(HERE, "findings")
INT32 = (0, 1, -1, 2, 7, 8, 16, 255, 0x7FFF, 0x8000, 0xFFFF, 0x7FFFFFFF, -0x80000000, 0x40000000)
INT64 = (0, 1, -1, 8, 0x7FFFFFFF, 0x80000000, 0xFFFFFFFF, 1 << 32, 1 << 40, 1 << 62,
         (1 << 63) - 1, -(1 << 63))
BYTES = (0x00, 0x01, 0x7F, 0x80, 0xFF, 0xC0, 0xED, 0xF4, 0x10, 0x20)


@lru_cache(maxsize=512)
def _seed(path: str) -> bytes:
    with open(path, "rb") as f:
        return f.read()


def _markers(data: bytes) -> list:
    out, at = [], data.find(b"\xff\xff\xff\xff")
    while at >= 0 and len(out) < 256:
        out.append(at)
        at = data.find(b"\xff\xff\xff\xff", at + 4)
    return out


def _position(rng: random.Random, data: bytearray, markers: list, width: int = 1) -> int:
    n = len(data)
    if n <= width:
        return 0
    if markers and rng.random() < 0.5:
        base = rng.choice(markers)
        pos = min(n - width, base + rng.randrange(0, 512))
    else:
        pos = rng.randrange(0, n - width + 1)
    return pos - pos % width if width > 1 and rng.random() < 0.8 else pos


def mutate(data: bytes, rng: random.Random, donor: bytes = b"") -> bytes:
    out = bytearray(data)
    markers = _markers(data)
    for _ in range(rng.choice((1, 1, 2, 2, 3, 4))):
        if not out:
            out.extend(rng.randbytes(8))
        op = rng.randrange(10)
        if op == 0:                                     # flip one bit
            p = _position(rng, out, markers)
            out[p] ^= 1 << rng.randrange(8)
        elif op == 1:                                   # an interesting byte
            out[_position(rng, out, markers)] = rng.choice(BYTES)
        elif op in (2, 3):                              # an int32: a boundary or a nudge
            p = _position(rng, out, markers, 4)
            if p + 4 <= len(out):
                old = struct.unpack_from("<i", out, p)[0]
                new = rng.choice(INT32 + (old + 1, old - 1, old * 2, -old))
                struct.pack_into("<I", out, p, new & 0xFFFFFFFF)
        elif op in (4, 5):                              # an int64 likewise
            p = _position(rng, out, markers, 8)
            if p + 8 <= len(out):
                old = struct.unpack_from("<q", out, p)[0]
                new = rng.choice(INT64 + (old + 1, old - 1, old * 2, old + 8))
                struct.pack_into("<Q", out, p, new & 0xFFFFFFFFFFFFFFFF)
        elif op == 6:                                   # cut the input short
            del out[rng.randrange(0, len(out)):]
        elif op == 7:                                   # drop a chunk
            p = _position(rng, out, markers)
            del out[p:p + rng.choice((1, 4, 8, 16, 64, 512))]
        elif op == 8:                                   # repeat a chunk
            p = _position(rng, out, markers)
            k = rng.choice((4, 8, 16, 64))
            out[p:p] = out[p:p + k]
        else:                                           # splice in bytes of another seed
            if donor:
                a = rng.randrange(0, len(donor))
                k = rng.choice((8, 16, 64, 256))
                p = _position(rng, out, markers)
                out[p:p + k] = donor[a:a + k]
    return bytes(out)


@lru_cache(maxsize=64)
def _siblings(folder: str, extension: str) -> list:
    """The names of the files in `folder` ending in `extension`, sorted (listed once: the
    fuzzers ask for every mutant)."""
    return sorted(n for n in os.listdir(folder) if n.endswith(extension))


def make_mutant(seed_path: str, index: int) -> bytes:
    """Mutant `index` of `seed_path` (deterministic; the donor for splices is another seed file
    of the same folder)."""
    rng = random.Random(f"{os.path.basename(seed_path)}:{index}")
    folder = os.path.dirname(seed_path)
    siblings = _siblings(folder, os.path.splitext(seed_path)[1])
    donor = _seed(os.path.join(folder, rng.choice(siblings))) if siblings else b""
    return mutate(_seed(seed_path), rng, donor)


def tasks_for(targets, start: int = 0):
    """Endless ("mutant", seed, index, mode) tasks, round-robin over targets and seeds."""
    pools = [(seeds.seed_files(t), seeds.mode_of(t)) for t in targets]
    index = start
    while True:
        for files, mode in pools:
            for path in files:
                yield ("mutant", path, index, mode)
        index += 1


def save_finding(task, result) -> str:
    data = make_mutant(task[1], task[2])
    os.makedirs(FINDINGS, exist_ok=True)
    name = f"{result['outcome']}-{task[3]}-{hashlib.sha1(data).hexdigest()[:16]}"
    path = os.path.join(FINDINGS, name)
    with open(path, "wb") as f:
        f.write(data)
    with open(path + ".txt", "w") as f:
        f.write(f"seed {task[1]}\nmutant {task[2]}\nmode {task[3]}\n{result['detail']}\n")
    return path


def run(targets=seeds.TARGETS, seconds: float = 60.0, jobs: int = 2, start: int = 0,
        max_mutants: int | None = None, quiet: bool = False):
    """Fuzz until `seconds` pass (or `max_mutants` ran): (outcome counts, findings)."""
    counts, findings = Counter(), []
    t0 = time.monotonic()

    def on_result(task, result):
        counts[result["outcome"]] += 1
        if result["outcome"] in ("foreign", "crash", "hang"):
            findings.append((task, result, save_finding(task, result)))
            if not quiet:
                print(f"FINDING {result['outcome']} {task}: {result['detail'][:300]}", flush=True)

    source = tasks_for(targets, start)
    if max_mutants is not None:
        source = (t for _, t in zip(range(max_mutants), source))
    harness.ReplayPool(jobs, timeout=harness.DEFAULT_TIMEOUT).run(
        source, deadline=t0 + seconds, on_result=on_result)
    if not quiet:
        total = sum(counts.values())
        print(f"{total} mutants in {time.monotonic() - t0:.0f} s on {jobs} workers "
              f"({', '.join(targets)}): " + ", ".join(f"{o} {counts.get(o, 0)}" for o in harness.OUTCOMES))
    return counts, findings


def main(argv):
    import argparse
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--target", choices=seeds.TARGETS + ("all",), default="all")
    ap.add_argument("--seconds", type=float, default=60.0)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--start", type=int, default=0, help="first mutant index (resume a run)")
    ap.add_argument("--python-codecs", action="store_true",
                    help="decompress with the codec packages' Python APIs (the fallback path)")
    args = ap.parse_args(argv)
    if args.python_codecs:
        os.environ[harness.PYTHON_CODECS_ENV] = "1"       # inherited by the worker processes
    targets = seeds.TARGETS if args.target == "all" else (args.target,)
    _, findings = run(targets, args.seconds, args.jobs, args.start)
    return 1 if findings else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
