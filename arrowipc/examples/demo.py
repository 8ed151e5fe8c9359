"""The arrowipc demo: write a multi-batch Arrow IPC file and stream, read them back, report.

Run with `python -m arrowipc.examples.demo [--rows N] [--batches K] [--out DIR]`. It uses arrowipc
alone; when pyarrow is installed it also checks that pyarrow reads our files identically.
"""
from __future__ import annotations

import argparse
import datetime as dt
import os
import random
import tempfile
import time

import arrowipc
from arrowipc import ipc


__all__ = ["main", "make_batch"]


def make_batch(start: int, rows: int, rng: random.Random) -> arrowipc.RecordBatch:
    """Synthetic click events: ids, timestamps, a nullable price, a country, tags, a flag."""
    countries = ["DE", "FR", "US", "JP", "BR", None]
    base = dt.datetime(2026, 1, 1)
    return arrowipc.RecordBatch.from_pydict({
        "event_id": list(range(start, start + rows)),
        "ts": [base + dt.timedelta(seconds=start + i) for i in range(rows)],
        "price": [None if rng.random() < 0.1 else round(rng.random() * 100, 2) for _ in range(rows)],
        "country": [rng.choice(countries) for _ in range(rows)],
        "tags": [[f"t{rng.randrange(5)}" for _ in range(rng.randrange(3))] for _ in range(rows)],
        "clicked": [rng.random() < 0.3 for _ in range(rows)],
    }, metadata={"source": "arrowipc demo"})


def main(argv: list[str] | None = None) -> int:
    """Run the demo with command-line arguments `argv`; returns the exit status."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=200_000, help="total rows (default 200000)")
    ap.add_argument("--batches", type=int, default=8, help="record batches (default 8)")
    ap.add_argument("--out", default=None, help="directory for the output files (default: temp)")
    args = ap.parse_args(argv)

    out_dir = args.out or tempfile.mkdtemp(prefix="arrowipc-demo-")
    os.makedirs(out_dir, exist_ok=True)
    file_path = os.path.join(out_dir, "events.arrow")
    stream_path = os.path.join(out_dir, "events.arrows")
    rng = random.Random(42)
    per = max(1, args.rows // args.batches)

    t0 = time.perf_counter()
    batches = [make_batch(i * per, per, rng) for i in range(args.batches)]
    t_build = time.perf_counter() - t0
    schema = batches[0].schema
    print(f"built {args.batches} batches x {per} rows from Python objects in {t_build:.2f}s")
    print("schema:\n  " + "\n  ".join(str(schema).splitlines()))

    t0 = time.perf_counter()
    with ipc.new_file(file_path, schema, metadata={"writer": "arrowipc", "rows": str(per * args.batches)}) as w:
        for i, b in enumerate(batches):
            w.write_batch(b, custom_metadata={"batch": str(i)})
    with ipc.new_stream(stream_path, schema) as w:
        for b in batches:
            w.write_batch(b)
    t_write = time.perf_counter() - t0
    print(f"wrote {file_path} ({os.path.getsize(file_path):,} bytes) and {stream_path} "
          f"({os.path.getsize(stream_path):,} bytes) in {t_write * 1000:.1f} ms")

    t0 = time.perf_counter()
    reader = ipc.open_file(file_path)              # memory-mapped, zero-copy
    n_batches, n_rows = reader.num_record_batches, reader.count_rows()
    last = reader.get_batch_with_custom_metadata(n_batches - 1)
    table = reader.read_all()
    t_read = time.perf_counter() - t0
    print(f"file: {n_batches} batches, {n_rows} rows, footer metadata {reader.metadata}, "
          f"last batch metadata {last.custom_metadata}; read in {t_read * 1000:.1f} ms")

    prices = [p for p in table.column("price").to_pylist() if p is not None]
    clicked = sum(table.column("clicked").to_pylist())
    by_country: dict[str | None, int] = {}
    for c in table.column("country").to_pylist():
        by_country[c] = by_country.get(c, 0) + 1
    print(f"price: {len(prices)} non-null, mean {sum(prices) / max(1, len(prices)):.2f}; "
          f"clicked {clicked}; rows by country {dict(sorted(by_country.items(), key=str))}")

    with open(stream_path, "rb") as f:
        streamed = ipc.open_stream(f).read_all()
    same = streamed.equals(table)
    print(f"stream read back: {streamed.num_rows} rows, equal to the file: {same}")

    try:
        import pyarrow as pa
    except ImportError:
        print("pyarrow not installed: skipped the cross-check")
    else:
        theirs = pa.ipc.open_file(file_path).read_all()
        ok = theirs.equals(pa.table(table)) and theirs.num_rows == n_rows
        print(f"pyarrow {pa.__version__} reads the file equal to arrowipc: {ok}")
        same = same and ok
    print("demo OK" if same else "demo FAILED")
    return 0 if same else 1


if __name__ == "__main__":
    raise SystemExit(main())
