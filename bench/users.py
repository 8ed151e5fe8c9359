#!/usr/bin/env python
"""What users do, arrowipc and pyarrow side by side in one run, rounds interleaved (issue 19).

    python bench/users.py [--rounds N] [-k SUBSTRING] [--json PATH]

Writes to a path (and to memory), reads of pyarrow-written bytes and files (and of arrowipc's
own), uncompressed, LZ4 and ZSTD, on the datasets of `bench/conftest.py`: `wide5m` (5M rows x 5
columns in 1M-row batches), `small1k` (1M rows in 1000-row batches: per-batch overhead) and
`cols1000` (1000 columns: per-column overhead). Each case runs the two libraries alternately,
round after round (the order flips every round), so both see the same machine load; the figure
kept is the best of the rounds, and the table gives arrowipc's time divided by pyarrow's, and
the same ratio of process CPU time (all threads; steadier than wall time on a loaded machine,
but blind to how well the work spreads over the cores). Both
libraries are called the way their documentation shows (`new_file(path, ...)`,
`open_file(path)`, `open_stream(data)`), with their default options. Every result is checked
against pyarrow once, outside the timed rounds, and the output sizes are compared.

`--json` saves a report in pytest-benchmark's shape (`benchmarks[].group`, `.extra_info.lib`,
`.stats.min` / `.stats.median`, and `"stat": "min"`), which `bench/ratios.py REPORT` and
`bench/plot_ratios.py REPORT` turn into the table and plot of docs/benchmarks.md.
"""
from __future__ import annotations

import argparse
import datetime
import gc
import json
import os
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path

import pyarrow as pa

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

import arrowipc  # noqa: E402
from arrowipc import ipc  # noqa: E402
from conftest import BUILDERS  # noqa: E402

ROUNDS = {"wide5m": 5, "small1k": 7, "cols1000": 15}


class Data:
    """One dataset in both libraries' hands, with pyarrow's and arrowipc's serialized forms."""

    def __init__(self, name: str, directory: str):
        self.name = name
        self.dir = directory
        batches = BUILDERS[name]()
        self.pa_table = pa.Table.from_batches(batches)
        self.pa_batches = batches
        self.ai_table = arrowipc.table(self.pa_table)            # zero-copy import
        self.ai_batches = self.ai_table.to_batches()
        self._cache = {}

    def pyarrow_bytes(self, form: str, codec: str | None):
        """pyarrow's stream or file bytes (as a pyarrow Buffer), written once."""
        key = ("pa", form, codec)
        if key not in self._cache:
            sink = pa.BufferOutputStream()
            opener = pa.ipc.new_stream if form == "stream" else pa.ipc.new_file
            with opener(sink, self.pa_table.schema,
                        options=pa.ipc.IpcWriteOptions(compression=codec)) as w:
                for b in self.pa_batches:
                    w.write_batch(b)
            self._cache[key] = sink.getvalue()
        return self._cache[key]

    def arrowipc_bytes(self, form: str, codec: str | None) -> bytes:
        key = ("ai", form, codec)
        if key not in self._cache:
            sink = arrowipc.BufferOutputStream()
            opener = ipc.new_stream if form == "stream" else ipc.new_file
            with opener(sink, self.ai_table.schema,
                        options=ipc.IpcWriteOptions(compression=codec)) as w:
                for b in self.ai_batches:
                    w.write_batch(b)
            self._cache[key] = bytes(memoryview(sink.getvalue()))
        return self._cache[key]

    def pyarrow_file_path(self, codec: str | None) -> str:
        path = os.path.join(self.dir, f"{self.name}-{codec or 'plain'}-pyarrow.arrow")
        if not os.path.exists(path):
            with open(path, "wb") as f:
                f.write(memoryview(self.pyarrow_bytes("file", codec)))
        return path


# -- the operations, each as (arrowipc callable, pyarrow callable) over prepared arguments --------

def _write(lib: str, data: Data, form: str, codec: str | None, sink_kind: str):
    """A callable writing every batch; returns what to check (bytes or a path)."""
    if lib == "pyarrow":
        mod, schema, batches = pa.ipc, data.pa_table.schema, data.pa_batches
        options = pa.ipc.IpcWriteOptions(compression=codec)
        new_sink = pa.BufferOutputStream
    else:
        mod, schema, batches = ipc, data.ai_table.schema, data.ai_batches
        options = ipc.IpcWriteOptions(compression=codec)
        new_sink = arrowipc.BufferOutputStream
    opener = mod.new_stream if form == "stream" else mod.new_file
    path = os.path.join(data.dir, f"out-{lib}.{form}")

    def run():
        sink = path if sink_kind == "path" else new_sink()
        with opener(sink, schema, options=options) as w:
            for b in batches:
                w.write_batch(b)
        return path if sink_kind == "path" else sink.getvalue()
    return run


def _read(lib: str, data: Data, writer: str, form: str, codec: str | None, how: str):
    """A callable reading every batch of `writer`'s output: `how` is "bytes" (open the stream
    held in memory, list its batches), "iterate" (count its rows) or "path" (open the file at a
    path, get every batch)."""
    if how == "path":
        src = data.pyarrow_file_path(codec)
    elif writer == "pyarrow":
        src = data.pyarrow_bytes(form, codec)
        if lib == "arrowipc":
            src = memoryview(src)
    else:
        src = data.arrowipc_bytes(form, codec)
        if lib == "pyarrow":
            src = pa.py_buffer(src)
    mod = pa.ipc if lib == "pyarrow" else ipc
    if how == "path":
        def run():
            r = mod.open_file(src)
            return [r.get_batch(i) for i in range(r.num_record_batches)]
    elif how == "iterate":
        def run():
            return sum(b.num_rows for b in mod.open_stream(src))
    else:
        def run():
            return list(mod.open_stream(src))
    return run


def cases():
    """(group, dataset, make(lib, data) -> callable, check(result, data) -> output size)."""
    out = []
    for ds in ("wide5m", "small1k", "cols1000"):
        for form in ("stream", "file"):
            for sink in ("path", "memory"):
                out.append((f"write_{form}_{sink}-{ds}", ds,
                            lambda lib, d, f=form, s=sink: _write(lib, d, f, None, s),
                            lambda r, d, f=form: check_written(r, d, f)))
        out.append((f"read_pyarrow_stream-{ds}", ds,
                    lambda lib, d: _read(lib, d, "pyarrow", "stream", None, "bytes"),
                    check_batches))
        out.append((f"read_pyarrow_file_path-{ds}", ds,
                    lambda lib, d: _read(lib, d, "pyarrow", "file", None, "path"), check_batches))
        out.append((f"iterate_pyarrow_stream-{ds}", ds,
                    lambda lib, d: _read(lib, d, "pyarrow", "stream", None, "iterate"), check_rows))
        out.append((f"read_arrowipc_stream-{ds}", ds,
                    lambda lib, d: _read(lib, d, "arrowipc", "stream", None, "bytes"),
                    check_batches))
    for codec in ("lz4", "zstd"):
        for ds in ("wide5m", "small1k"):
            for form in ("stream", "file"):
                out.append((f"write_{form}_path_{codec}-{ds}", ds,
                            lambda lib, d, f=form, c=codec: _write(lib, d, f, c, "path"),
                            lambda r, d, f=form: check_written(r, d, f)))
            out.append((f"read_pyarrow_stream_{codec}-{ds}", ds,
                        lambda lib, d, c=codec: _read(lib, d, "pyarrow", "stream", c, "bytes"),
                        check_batches))
            out.append((f"read_pyarrow_file_path_{codec}-{ds}", ds,
                        lambda lib, d, c=codec: _read(lib, d, "pyarrow", "file", c, "path"),
                        check_batches))
            out.append((f"iterate_pyarrow_stream_{codec}-{ds}", ds,
                        lambda lib, d, c=codec: _read(lib, d, "pyarrow", "stream", c, "iterate"),
                        check_rows))
            out.append((f"read_arrowipc_stream_{codec}-{ds}", ds,
                        lambda lib, d, c=codec: _read(lib, d, "arrowipc", "stream", c, "bytes"),
                        check_batches))
    return out


def check_written(result, data: Data, form: str) -> int:
    raw = Path(result).read_bytes() if isinstance(result, str) else bytes(memoryview(result))
    buf = pa.py_buffer(raw)
    table = (pa.ipc.open_stream(buf) if form == "stream" else pa.ipc.open_file(buf)).read_all()
    assert table.equals(data.pa_table), "written data differs"
    return len(raw)


def check_batches(batches, data: Data) -> None:
    assert len(batches) == len(data.pa_batches)
    for i in (0, len(batches) - 1):
        assert pa.record_batch(batches[i]).equals(data.pa_batches[i]), f"batch {i} differs"


def check_rows(rows, data: Data) -> None:
    assert rows == data.pa_table.num_rows


def run_case(make, data: Data, rounds: int) -> dict:
    """{lib: [seconds per round]}, the libraries alternating within each round."""
    runs = {lib: make(lib, data) for lib in ("arrowipc", "pyarrow")}
    times = {lib: [] for lib in runs}
    cpu = {lib: [] for lib in runs}
    for lib in runs:                       # warm-up: caches, lazy imports, thread pools
        runs[lib]()
    for r in range(rounds):
        order = ("arrowipc", "pyarrow") if r % 2 == 0 else ("pyarrow", "arrowipc")
        for lib in order:
            gc.collect()
            c0 = time.process_time()
            t0 = time.perf_counter()
            result = runs[lib]()
            times[lib].append(time.perf_counter() - t0)
            cpu[lib].append(time.process_time() - c0)
            del result
    return runs, times, cpu


def _cpu() -> str:
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("-k", default="", help="only groups containing this substring (comma: any)")
    ap.add_argument("--rounds", type=int, default=None,
                    help="rounds per case (default per dataset)")
    ap.add_argument("--json", type=Path, help="save a pytest-benchmark-shaped report here")
    args = ap.parse_args(argv)
    wanted = [k for k in args.k.split(",") if k]
    datasets: dict[str, Data] = {}
    now = datetime.datetime.now(datetime.timezone.utc)
    report = {"benchmarks": [], "stat": "min", "datetime": now.strftime("%Y-%m-%dT%H:%M+00:00"),
              "machine_info": {"nproc": len(os.sched_getaffinity(0)),
                               "cpu": {"brand_raw": _cpu()},
                               "python_version": platform.python_version(),
                               "versions": {"arrowipc": getattr(arrowipc, "__version__", "?"),
                                            "pyarrow": pa.__version__}}}
    print("| case | arrowipc best | pyarrow best | ratio | CPU ratio "
          "| sizes (arrowipc / pyarrow) |")
    print("| --- | ---: | ---: | ---: | ---: | --- |")
    with tempfile.TemporaryDirectory(dir=os.environ.get("BENCH_DIR")) as tmp:
        for group, ds, make, check in cases():
            if wanted and not any(w in group for w in wanted):
                continue
            if ds not in datasets:
                datasets[ds] = Data(ds, tmp)
            data = datasets[ds]
            runs, times, cpu = run_case(make, data, args.rounds or ROUNDS[ds])
            sizes = {}
            for lib, fn in runs.items():
                size = check(fn(), data)
                if size is not None:
                    sizes[lib] = size
            best = {lib: min(t) for lib, t in times.items()}
            best_cpu = {lib: min(t) for lib, t in cpu.items()}
            size_note = (f"{sizes['arrowipc']} / {sizes['pyarrow']}" if sizes else "")
            print(f"| {group} | {best['arrowipc'] * 1e3:.2f} ms | {best['pyarrow'] * 1e3:.2f} ms "
                  f"| {best['arrowipc'] / best['pyarrow']:.2f} "
                  f"| {best_cpu['arrowipc'] / max(best_cpu['pyarrow'], 1e-6):.2f} "
                  f"| {size_note} |", flush=True)
            for lib, t in times.items():
                report["benchmarks"].append({
                    "group": group, "name": f"{group}[{lib}]",
                    "extra_info": {"lib": lib, "dataset": ds, "bytes": sizes.get(lib),
                                   "cpu_min": best_cpu[lib]},
                    "stats": {"min": min(t), "median": statistics.median(t), "rounds": len(t),
                              "data": t}})
    if args.json:
        args.json.write_text(json.dumps(report, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
