"""Dissociated IPC vs the pyarrow IPC stream over a socket, between two processes.

    python bench/bench_dissociated.py            # both workloads, Markdown table on stdout
    python bench/bench_dissociated.py --quick    # smaller workloads, fewer rounds

Workloads: 1 GiB as 16 x 64 MiB batches and 256 x 1 MiB batches (one int64 column). Paths, all
over a Unix stream socket to a server process:
  pyarrow  pa.ipc.new_stream(sock.makefile("wb")) on the server, pa.ipc.open_stream on the client
  type 0   DissociatedServer(body_mode="bytes"): bodies as IPC body bytes (gather sends)
  type 1   DissociatedServer(body_mode="shared"): bodies in shared memory (memfd), zero-copy views
Each is timed without a consumer (batches arrive and are dropped) and with one that reads every
byte (a numpy sum over each buffer). One warm-up transfer on the connection precedes the timed
ones (a server reuses the shared memory freed by a connection's previous batches); the table
shows the median throughput and the ratio to pyarrow.

Not part of the test suite (pytest never collects this file).
"""
from __future__ import annotations

import argparse
import os
import platform
import socket
import statistics
import subprocess
import sys
import tempfile
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if REPO not in sys.path:
    sys.path.insert(0, REPO)

import numpy as np  # noqa: E402
import pyarrow as pa  # noqa: E402

WORKLOADS = {"16x64MiB": (16, 64 << 20), "256x1MiB": (256, 1 << 20)}
QUICK = {"16x64MiB": (4, 64 << 20), "256x1MiB": (64, 1 << 20)}
PATHS = ("pyarrow", "type0", "type1")


def make_batches(count: int, nbytes: int) -> list:
    rows = nbytes // 8
    base = np.arange(rows, dtype=np.int64)
    return [pa.record_batch([pa.array(base + i)], names=["v"]) for i in range(count)]


# -- servers (run in a child process) --------------------------------------------------------------

def serve_pyarrow(path: str, workloads: dict):
    data = {name.encode(): make_batches(*shape) for name, shape in workloads.items()}
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)
    listener.listen(4)
    print("ready", flush=True)
    while True:
        conn, _ = listener.accept()
        with conn:
            name = conn.recv(64)
            if not name:
                continue
            batches = data[name]
            with conn.makefile("wb") as f:
                with pa.ipc.new_stream(f, batches[0].schema) as w:
                    for b in batches:
                        w.write_batch(b)


def serve_dissociated(path: str, mode: str, workloads: dict):
    import arrowipc
    from arrowipc.dissociated import DissociatedServer
    data = {}
    for name, shape in workloads.items():
        batches = [arrowipc.record_batch(b) for b in make_batches(*shape)]
        data[name.encode()] = (batches[0].schema, batches)
    server = DissociatedServer(lambda t: (data[t][0], iter(data[t][1])), unix_path=path,
                               body_mode="bytes" if mode == "type0" else "shared",
                               max_shared_bytes=4 << 30)
    print("ready", flush=True)
    sys.stdin.read()                    # until the parent closes our stdin
    server.close()


# -- clients (timed in this process) ---------------------------------------------------------------

def consume(buffers) -> int:
    total = 0
    for buf in buffers:
        if buf is not None and len(buf) >= 8:
            total += int(np.frombuffer(buf, dtype=np.uint64, count=len(buf) // 8).sum())
    return total


def pyarrow_transfer(path: str, name: str, read_bytes: bool) -> int:
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.connect(path)
    sock.sendall(name.encode())
    nbytes = 0
    with sock, sock.makefile("rb") as f:
        for batch in pa.ipc.open_stream(f):
            buffers = batch.column(0).buffers()
            nbytes += buffers[1].size
            if read_bytes:
                consume(buffers)
    return nbytes


def dissociated_transfer(client, name: str, read_bytes: bool) -> int:
    nbytes = 0
    for batch in client.read(name.encode()):
        buffers = batch.column(0).buffers()
        nbytes += buffers[1].size
        if read_bytes:
            consume(buffers)
        del batch, buffers
    return nbytes


def start_server(kind: str, path: str, workloads: dict) -> subprocess.Popen:
    args = [sys.executable, os.path.abspath(__file__), "--serve", kind, "--socket", path]
    if workloads is QUICK:
        args.append("--quick")
    proc = subprocess.Popen(args, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    line = proc.stdout.readline()
    if line.strip() != "ready":
        proc.kill()
        raise RuntimeError(f"{kind} server did not start")
    return proc


def measure(kind: str, workloads: dict, rounds: int) -> dict:
    """{(workload, consumer): (first GB/s, median GB/s)} for one path."""
    out = {}
    with tempfile.TemporaryDirectory(prefix="arrowipc-bench-") as tmp:
        path = os.path.join(tmp, "server.sock")
        proc = start_server(kind, path, workloads)
        try:
            if kind == "pyarrow":
                def run(name, read):
                    return pyarrow_transfer(path, name, read)
                client = None
            else:
                from arrowipc.dissociated import DissociatedClient
                client = DissociatedClient(f"arrowipc+unix://{path}?want_data=1&free_data=2",
                                           timeout=120)

                def run(name, read):
                    return dissociated_transfer(client, name, read)
            for name in workloads:
                for read in (False, True):
                    rates = []
                    for _ in range(rounds + 1):        # the first one is the warm-up
                        t0 = time.perf_counter()
                        nbytes = run(name, read)
                        rates.append(nbytes / (time.perf_counter() - t0) / 1e9)
                    out[(name, read)] = (rates[0], statistics.median(rates[1:]))
            if client is not None:
                client.close()
        finally:
            proc.stdin.close()
            if kind == "pyarrow":
                proc.kill()
            try:
                proc.wait(30)
            except subprocess.TimeoutExpired:
                proc.kill()
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="smaller workloads, fewer rounds")
    ap.add_argument("--rounds", type=int, default=None, help="timed transfers per cell")
    ap.add_argument("--serve", choices=PATHS, help=argparse.SUPPRESS)
    ap.add_argument("--socket", help=argparse.SUPPRESS)
    args = ap.parse_args()
    workloads = QUICK if args.quick else WORKLOADS
    if args.serve == "pyarrow":
        serve_pyarrow(args.socket, workloads)
        return
    if args.serve:
        serve_dissociated(args.socket, args.serve, workloads)
        return
    rounds = args.rounds or (3 if args.quick else 5)
    results = {kind: measure(kind, workloads, rounds) for kind in PATHS}
    print(f"nproc={os.cpu_count()} python={platform.python_version()} pyarrow={pa.__version__} "
          f"rounds={rounds} (median GB/s after one warm-up; first transfer in brackets)\n")
    print("| workload | consumer | pyarrow stream | type 0 | type 1 |")
    print("| --- | --- | --- | --- | --- |")
    for name, (count, size) in workloads.items():
        for read in (False, True):
            base = results["pyarrow"][(name, read)][1]
            cells = []
            for kind in PATHS:
                first, med = results[kind][(name, read)]
                ratio = "" if kind == "pyarrow" else f" ({med / base:.1f}x)"
                cells.append(f"{med:.2f}{ratio} [{first:.2f}]")
            label = f"{count} x {size >> 20} MiB"
            print(f"| {label} | {'reads every byte' if read else 'none'} | " + " | ".join(cells)
                  + " |")


if __name__ == "__main__":
    main()
