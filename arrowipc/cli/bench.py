"""`arrowipc bench`: a quick side-by-side timing of arrowipc and pyarrow on the same data.

Self-contained (the repository's bench/ suite is not installed with the package): one data set of
int64, float64, string and bool columns is built once with numpy, handed to pyarrow through the
PyCapsule interface (so both libraries write the very same values), and each operation is run
`repeat` times per library; the table shows medians and the ratio arrowipc / pyarrow (below 1:
arrowipc is faster). Without pyarrow only the arrowipc column is filled.
"""
from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from typing import IO, TYPE_CHECKING, Any, Callable

from .common import EXIT_OK

if TYPE_CHECKING:
    from ..table import Table

__all__ = ["make_table", "OPERATIONS", "pyarrow_available", "render_bench", "run", "run_bench"]

OPERATIONS = (
    ("import", "import the package (fresh interpreter)"),
    ("write_stream", "write a stream to memory"),
    ("read_stream", "read a stream from bytes (all batches)"),
    ("write_file", "write a file to disk"),
    ("read_file", "read a file from disk (memory-mapped)"),
    ("write_stream_zstd", "write a ZSTD-compressed stream to memory"),
    ("read_stream_zstd", "read a ZSTD-compressed stream from bytes"),
)


def _median_seconds(fn: Callable[[], object], repeat: int) -> float:
    """The median time of `repeat` calls of `fn`, after one warm-up call."""
    fn()                                        # warm-up: caches, page faults, lazy imports
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def _import_seconds(module: str, repeat: int) -> float:
    """The median time to import `module` in a fresh interpreter."""
    code = ("import time; t = time.perf_counter(); import " + module +
            "; print(time.perf_counter() - t)")
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p)
    times = []
    for _ in range(repeat):
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                             env=env, check=True)
        times.append(float(out.stdout.strip()))
    return statistics.median(times)


def make_table(rows: int, batch_rows: int) -> Table:
    """An arrowipc Table of `rows` rows in `batch_rows`-row batches (fixed seed)."""
    import numpy as np

    import arrowipc
    rng = np.random.default_rng(42)
    ints = np.arange(rows, dtype=np.int64)
    floats = rng.standard_normal(rows)
    words = np.array(["alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta"])
    strings = words[rng.integers(0, len(words), rows)].tolist()
    flags = rng.integers(0, 2, rows).astype(bool)
    batches = []
    for start in range(0, rows, batch_rows):
        stop = min(start + batch_rows, rows)
        batches.append(arrowipc.record_batch({
            "id": arrowipc.array(ints[start:stop]),
            "value": arrowipc.array(floats[start:stop]),
            "label": arrowipc.array(strings[start:stop], type=arrowipc.string()),
            "flag": arrowipc.array(flags[start:stop]),
        }))
    return arrowipc.Table.from_batches(batches)


class _Library:
    """The same calls on one library's `ipc` module (subclasses set ipc, table, zstd, sink)."""
    name: str
    ipc: Any            # arrowipc.ipc or pyarrow.ipc
    table: Any          # that library's Table
    zstd: Any           # its IpcWriteOptions for ZSTD
    new_sink: Callable[[], Any]

    def write_stream(self, options: Any = None) -> Any:
        sink = self.new_sink()
        with self.ipc.new_stream(sink, self.table.schema, options=options) as w:
            w.write_table(self.table)
        return sink.getvalue()

    def read_stream(self, data: Any) -> Any:
        return self.ipc.open_stream(data).read_all()

    def write_file(self, path: str) -> None:
        with self.ipc.new_file(path, self.table.schema) as w:
            w.write_table(self.table)

    def read_file(self, path: str) -> Any:
        return self.ipc.open_file(path).read_all()


class _Arrowipc(_Library):
    name = "arrowipc"

    def __init__(self, table: Table) -> None:
        import arrowipc
        from arrowipc import ipc
        self.ipc, self.table = ipc, table
        self.new_sink = arrowipc.BufferOutputStream
        self.zstd = ipc.IpcWriteOptions(compression="zstd")

    def read_file(self, path: str) -> Any:
        # memory-mapped, as pyarrow's run below reads it
        return self.ipc.open_file(path, memory_map=True).read_all()


class _Pyarrow(_Library):
    name = "pyarrow"

    def __init__(self, table: Table) -> None:
        import pyarrow as pa
        import pyarrow.ipc as ipc
        self.pa, self.ipc = pa, ipc
        self.table = pa.table(table)              # the same values, via the PyCapsule interface
        self.new_sink = pa.BufferOutputStream
        self.zstd = ipc.IpcWriteOptions(compression="zstd")

    def read_file(self, path: str) -> Any:
        with self.pa.memory_map(path) as source:
            return self.ipc.open_file(source).read_all()


def _time_library(lib: _Library, repeat: int, folder: str) -> dict[str, float]:
    path = os.path.join(folder, f"{lib.name}.arrow")
    plain = lib.write_stream()
    packed = lib.write_stream(lib.zstd)
    return {
        "write_stream": _median_seconds(lambda: lib.write_stream(), repeat),
        "read_stream": _median_seconds(lambda: lib.read_stream(plain), repeat),
        "write_file": _median_seconds(lambda: lib.write_file(path), repeat),
        "read_file": _median_seconds(lambda: lib.read_file(path), repeat),
        "write_stream_zstd": _median_seconds(lambda: lib.write_stream(lib.zstd), repeat),
        "read_stream_zstd": _median_seconds(lambda: lib.read_stream(packed), repeat),
    }


def pyarrow_available() -> bool:
    """Whether pyarrow can be imported here (without importing it)."""
    import importlib.util
    return importlib.util.find_spec("pyarrow") is not None


def run_bench(rows: int = 1_000_000, batch_rows: int = 65_536, repeat: int = 5,
              with_import: bool = True, log: IO[str] | None = None) -> dict[str, Any]:
    """{"rows", "batch_rows", "repeat", "versions", "results": {op: {lib: seconds}}}."""
    import arrowipc

    def say(text: str) -> None:
        if log is not None:
            print(text, file=log)

    say(f"building {rows:,} rows in batches of {batch_rows:,}")
    table = make_table(rows, batch_rows)
    libs: list[_Library] = [_Arrowipc(table)]
    versions = {"arrowipc": arrowipc.__version__, "python": sys.version.split()[0]}
    if pyarrow_available():
        pa_lib = _Pyarrow(table)
        libs.append(pa_lib)
        versions["pyarrow"] = pa_lib.pa.__version__
    results: dict[str, dict[str, float]] = {op: {} for op, _ in OPERATIONS}
    with tempfile.TemporaryDirectory(prefix="arrowipc-bench-") as folder:
        for lib in libs:
            say(f"timing {lib.name}")
            for op, seconds in _time_library(lib, repeat, folder).items():
                results[op][lib.name] = seconds
            if with_import:
                results["import"][lib.name] = _import_seconds(lib.name, repeat)
    if not with_import:
        del results["import"]
    return {"rows": rows, "batch_rows": batch_rows, "repeat": repeat, "cpus": os.cpu_count(),
            "versions": versions, "results": results}


def _seconds(s: float | None) -> str:
    if s is None:
        return "—"
    if s >= 1:
        return f"{s:.3f} s"
    if s >= 1e-3:
        return f"{s * 1e3:.2f} ms"
    return f"{s * 1e6:.1f} µs"


def render_bench(r: dict[str, Any]) -> str:
    """The ratio table of run_bench's result, with the conditions below it."""
    names = dict(OPERATIONS)
    rows = [["operation", "arrowipc", "pyarrow", "ratio"]]
    for op, by_lib in r["results"].items():
        ours, theirs = by_lib.get("arrowipc"), by_lib.get("pyarrow")
        ratio = f"{ours / theirs:.2f}" if ours is not None and theirs else "—"
        rows.append([names.get(op, op), _seconds(ours), _seconds(theirs), ratio])
    widths = [max(len(row[i]) for row in rows) for i in range(4)]
    lines = []
    for k, row in enumerate(rows):
        lines.append("  ".join([row[0].ljust(widths[0])] +
                               [c.rjust(w) for c, w in zip(row[1:], widths[1:])]).rstrip())
        if k == 0:
            lines.append("  ".join("-" * w for w in widths))
    v = r["versions"]
    lines.append("")
    lines.append(f"{r['rows']:,} rows (int64, float64, string, bool) in batches of "
                 f"{r['batch_rows']:,}; median of {r['repeat']} runs; {r['cpus']} CPUs; "
                 f"arrowipc {v['arrowipc']}, "
                 + (f"pyarrow {v['pyarrow']}" if "pyarrow" in v else "pyarrow not installed")
                 + f", Python {v['python']}")
    lines.append("ratio = arrowipc time / pyarrow time (below 1: arrowipc is faster)")
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    """`arrowipc bench` with parsed arguments; returns the exit status."""
    results = run_bench(rows=args.rows, batch_rows=args.batch_rows, repeat=args.repeat,
                        with_import=not args.no_import, log=sys.stderr if args.verbose else None)
    if args.json:
        import json
        print(json.dumps(results, indent=2))
    else:
        print(render_bench(results))
    return EXIT_OK
