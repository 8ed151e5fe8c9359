"""Seed inputs for the fuzzers, by target.

stream / file: the integration gold files (.stream / .arrow_file) of arrow-testing.
compressed: the 2.0.0-compression gold files, plus every gold stream rewritten by pyarrow with
LZ4_FRAME and with ZSTD bodies (written once into a cache folder, tests/fuzz/.seeds), so the
decompression path sees every type.
"""
from __future__ import annotations

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "untrusted"))

import harness  # noqa: E402

TARGETS = ("stream", "file", "compressed")
CACHE = os.path.join(HERE, ".seeds")


def _rewrite_all_with_pyarrow(jobs: list) -> None:
    """Rewrite gold streams with compressed bodies: jobs are (path, codec, out)."""
    import pyarrow as pa
    for path, codec, out in jobs:
        table = pa.ipc.open_stream(path).read_all()
        sink = pa.BufferOutputStream()
        with pa.ipc.new_stream(sink, table.schema,
                               options=pa.ipc.IpcWriteOptions(compression=codec)) as w:
            w.write_table(table)
        with open(out + ".tmp", "wb") as f:
            f.write(sink.getvalue().to_pybytes())
        os.replace(out + ".tmp", out)


def _rewrite_with_arrowipc(path: str, codec: str, out: str) -> None:
    from arrowipc import ipc
    table = ipc.open_stream(path).read_all()
    with open(out + ".tmp", "wb") as f:
        with ipc.new_stream(f, table.schema, options=ipc.IpcWriteOptions(compression=codec)) as w:
            w.write_table(table)
    os.replace(out + ".tmp", out)


def _compressed_rewrites() -> list:
    import json
    import subprocess
    os.makedirs(CACHE, exist_ok=True)
    wanted = []
    for path in harness.gold_files():
        # big-endian files are covered by their little-endian twins
        if not path.endswith(".stream") or "bigendian" in path:
            continue
        for codec in ("lz4", "zstd"):
            name = os.path.join(CACHE, f"{os.path.basename(os.path.dirname(path))}-"
                                       f"{os.path.basename(path)}.{codec}")
            wanted.append((path, codec, name))
    # pyarrow writes the seeds (an independent writer), in a child process: pyarrow 26 crashes
    # compressing union columns, so those few are written by arrowipc instead
    missing = [j for j in wanted if not os.path.exists(j[2])]
    by_pyarrow = [j for j in missing if "union" not in j[0]]
    if by_pyarrow:
        subprocess.run([sys.executable, os.path.abspath(__file__), "--rewrite", json.dumps(by_pyarrow)],
                       capture_output=True, env=dict(os.environ, PYTHONPATH=harness.REPO_ROOT))
    for path, codec, name in missing:
        if not os.path.exists(name):
            try:
                _rewrite_with_arrowipc(path, codec, name)
            except Exception:       # noqa: BLE001 -- a seed less, not a failure
                pass
    return [name for _, _, name in wanted if os.path.exists(name)]


def seed_files(target: str) -> list:
    gold = harness.gold_files()
    if target == "stream":
        return [p for p in gold if p.endswith(".stream")]
    if target == "file":
        return [p for p in gold if p.endswith(".arrow_file")]
    if target == "compressed":
        return [p for p in gold if "compression" in p and p.endswith(".stream")] + _compressed_rewrites()
    raise ValueError(f"unknown target {target!r}; expected one of {TARGETS}")


SMALL_SEED = 4096     # bytes: a seed above this is replaced by its slim twin in small_seed_files
SLIM_ROWS = 3         # rows a slim twin keeps of each batch
SLIM_BATCHES = 4      # batches a slim twin keeps


def _slim_twin(path: str, form: str) -> str | None:
    """A copy of the gold file `path` with its first SLIM_BATCHES batches cut to their first
    SLIM_ROWS rows (same schema and body compression, dictionaries written again by arrowipc's
    writer), cached in CACHE; None when it cannot be written."""
    # a folder of their own: the donors of a mutant's splices are the files of its seed's folder
    name = os.path.join(CACHE, "slim", f"{os.path.basename(os.path.dirname(path))}-"
                                       f"{os.path.basename(path)}")
    if os.path.exists(name):
        return name
    from arrowipc import ipc
    try:
        reader = ipc.open_stream(path) if form == "stream" else ipc.open_file(path)
        batches = list(reader) if form == "stream" else \
            [reader.get_batch(i) for i in range(reader.num_record_batches)]
        codec = os.path.splitext(path)[1][1:]
        options = ipc.IpcWriteOptions(compression=codec if codec in ("lz4", "zstd") else None)
        os.makedirs(os.path.dirname(name), exist_ok=True)
        with open(name + ".tmp", "wb") as f:
            opener = ipc.new_stream if form == "stream" else ipc.new_file
            with opener(f, reader.schema, options=options) as writer:
                for batch in batches[:SLIM_BATCHES]:
                    writer.write_batch(batch.slice(0, SLIM_ROWS))
        os.replace(name + ".tmp", name)
    except Exception:           # noqa: BLE001 -- a seed less, not a failure
        return None
    return name


def small_seed_files(target: str) -> list:
    """seed_files(target), each seed larger than SMALL_SEED bytes replaced by its slim twin:
    every type and message shape of the gold files in inputs small enough for the fuzzers that
    feed an input a byte at a time (tests/fuzz/fuzz_surfaces.py)."""
    out = []
    for path in seed_files(target):
        if os.path.getsize(path) <= SMALL_SEED:
            out.append(path)
        else:
            twin = _slim_twin(path, mode_of(target))
            if twin is not None:
                out.append(twin)
    return out


def mode_of(target: str) -> str:
    return "file" if target == "file" else "stream"


if __name__ == "__main__" and sys.argv[1:2] == ["--rewrite"]:
    import json
    _rewrite_all_with_pyarrow(json.loads(sys.argv[2]))
