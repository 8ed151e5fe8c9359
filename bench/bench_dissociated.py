"""Dissociated IPC vs the pyarrow IPC stream over a socket, between two processes.

    python bench/bench_dissociated.py            # both workloads, Markdown table on stdout
    python bench/bench_dissociated.py --quick    # smaller workloads, fewer rounds
    python bench/bench_dissociated.py --only 256x1MiB --rounds 9

Workloads: 1 GiB as 16 x 64 MiB batches and 256 MiB as 256 x 1 MiB batches (one int64 column).
Paths, all over Unix stream sockets to server processes:
  pyarrow        pa.ipc.new_stream(sock.makefile("wb")) on the server, pa.ipc.open_stream on the
                 client (a new connection per transfer)
  type 0         DissociatedServer(body_mode="bytes"): bodies as IPC body bytes (gather sends)
  type 1         DissociatedServer(body_mode="shared"), the defaults: bodies of 4 MiB and more
                 read by the client straight from the server's memory (peer memory,
                 process_vm_readv: one copy; two threads from 8 MiB, the next body read ahead),
                 smaller ones through reused segments (type 1 segments, below)
  type 1 segments  peer_memory=False: bodies in reused shared memory, copied out by the client
                 (the server can still write those segments): two copies
  type 1 sealed  seal_segments=True: the bodies of each send packed into one fresh memfd,
                 write-sealed and announced once; zero-copy views, no copy on the client
Each cell is timed without a consumer (batches arrive and are dropped) and with one that reads
every byte (a numpy sum over each buffer). Each path is timed against pyarrow in a rotation of
its own: one warm-up transfer of each, then rounds that run pyarrow and the path in turns (the
order alternating), so a busy machine slows both alike and what another path leaves behind does
not land on it (type1-sealed allocates and frees 256 MiB of fresh shared pages a transfer). The
table shows the median GB/s (pyarrow's over every rotation) and the median of each path's
per-round ratios to pyarrow. This host's memory bandwidth moves from minute to minute (the same
256 x 1 MiB type-1 transfer took 37 ms and 64 ms a few seconds apart), so compare the ratios,
and repeat a run before trusting a change of 10-20 %. A machine shared with other work makes wall-clock figures swing (a process
waits for a core): --cpu adds a table of CPU time per transfer (client process plus server
process, all threads; from getrusage and /proc/<pid>/task/*/schedstat), the cost each path puts on
the machine, which waiting does not change.

Not part of the test suite (pytest never collects this file).
"""
from __future__ import annotations

import argparse
import glob
import os
import platform
import resource
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
OURS = {"type0": dict(body_mode="bytes"),
        "type1": dict(body_mode="shared"),                      # the default: peer memory
        "type1-segments": dict(body_mode="shared", peer_memory=False),
        "type1-sealed": dict(body_mode="shared", seal_segments=True)}


def make_batches(count: int, nbytes: int) -> list:
    rows = nbytes // 8
    base = np.arange(rows, dtype=np.int64)
    return [pa.record_batch([pa.array(base + i)], names=["v"]) for i in range(count)]


# -- servers (child processes) ---------------------------------------------------------------------

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


def serve_dissociated(folder: str, workloads: dict):
    """One process, one server per dissociated path, sharing the same batches."""
    import arrowipc
    from arrowipc.dissociated import DissociatedServer
    data = {}
    for name, shape in workloads.items():
        batches = [arrowipc.record_batch(b) for b in make_batches(*shape)]
        data[name.encode()] = (batches[0].schema, batches)
    servers = [DissociatedServer(lambda t: (data[t][0], iter(data[t][1])),
                                 unix_path=os.path.join(folder, f"{kind}.sock"), **kw)
               for kind, kw in OURS.items()]
    print("ready", flush=True)
    sys.stdin.read()                    # until the parent closes our stdin
    for s in servers:
        s.close()


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


def process_cpu_seconds(pid: int) -> float:
    """CPU time of every live thread of `pid` (nanosecond counters, unlike /proc/<pid>/stat)."""
    total = 0
    for path in glob.glob(f"/proc/{pid}/task/*/schedstat"):
        try:
            with open(path) as f:
                total += int(f.read().split()[0])
        except (OSError, ValueError, IndexError):
            pass                         # a thread that just ended
    return total / 1e9


def own_cpu_seconds() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def start(args: list) -> subprocess.Popen:
    proc = subprocess.Popen([sys.executable, os.path.abspath(__file__), *args],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    if proc.stdout.readline().strip() != "ready":
        proc.kill()
        raise RuntimeError(f"server {args} did not start")
    return proc


def run_all(workloads: dict, rounds: int, quick: bool, ours: tuple) -> tuple[dict, dict]:
    """{(workload, consumer): {path: ([pyarrow GB/s], [path GB/s])}}, one pair of lists per
    path, and alike the CPU seconds (client and server) of each transfer. Each path is timed in
    its own rotation with pyarrow (round r runs both, in turns), so what one path leaves behind
    (type1-sealed frees 256 MiB of fresh shared pages a transfer) never lands on another."""
    from arrowipc.dissociated import DissociatedClient
    extra = ["--quick"] if quick else []
    results: dict = {}
    cpu: dict = {}
    with tempfile.TemporaryDirectory(prefix="arrowipc-bench-") as tmp:
        pa_path = os.path.join(tmp, "pyarrow.sock")
        procs = [start(["--serve", "pyarrow", "--socket", pa_path] + extra),
                 start(["--serve", "dissociated", "--socket", tmp] + extra)]
        clients = {kind: DissociatedClient(f"arrowipc+unix://{tmp}/{kind}.sock?want_data=1&"
                                           f"free_data=2", timeout=300) for kind in OURS}
        try:
            def run(kind, name, read):
                if kind == "pyarrow":
                    return pyarrow_transfer(pa_path, name, read)
                return dissociated_transfer(clients[kind], name, read)

            for name in workloads:
                for read in (False, True):
                    cell = results[(name, read)] = {}
                    cpu_cell = cpu[(name, read)] = {}
                    for kind in ours:
                        pair = ("pyarrow", kind)
                        speed: dict = {k: [] for k in pair}
                        seconds: dict = {k: [] for k in pair}
                        for k in pair:             # warm-up: connections, segments, pools
                            run(k, name, read)
                        for r in range(rounds):
                            for k in (pair if r % 2 == 0 else pair[::-1]):
                                server = procs[0 if k == "pyarrow" else 1].pid
                                c0, s0 = own_cpu_seconds(), process_cpu_seconds(server)
                                t0 = time.perf_counter()
                                nbytes = run(k, name, read)
                                speed[k].append(nbytes / (time.perf_counter() - t0) / 1e9)
                                seconds[k].append(own_cpu_seconds() - c0 +
                                                  process_cpu_seconds(server) - s0)
                        cell[kind] = (speed["pyarrow"], speed[kind])
                        cpu_cell[kind] = (seconds["pyarrow"], seconds[kind])
        finally:
            for c in clients.values():
                c.close()
            for p in procs:
                p.stdin.close()
            procs[0].kill()
            for p in procs:
                try:
                    p.wait(30)
                except subprocess.TimeoutExpired:
                    p.kill()
    return results, cpu


def print_table(title: str, workloads: dict, table: dict, ours: tuple, value, ratio) -> None:
    """One Markdown table: pyarrow's median over every rotation, then each path's median and
    the median of its per-round ratios (ratio(pyarrow value, path value), above 1 = better)."""
    print(title)
    print("| workload | consumer | pyarrow stream | " + " | ".join(ours) + " |")
    print("| --- | --- | --- |" + " --- |" * len(ours))
    for (name, read), cell in table.items():
        count, size = workloads[name]
        every_base = [b for kind in ours for b in cell[kind][0]]
        cells = [value(statistics.median(every_base))]
        for kind in ours:
            base, mine = cell[kind]
            r = statistics.median(ratio(b, x) for b, x in zip(base, mine) if x > 0)
            cells.append(f"{value(statistics.median(mine))} ({r:.1f}x)")
        print(f"| {count} x {size >> 20} MiB | {'reads every byte' if read else 'none'} | "
              + " | ".join(cells) + " |")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="smaller workloads, fewer rounds")
    ap.add_argument("--rounds", type=int, default=None, help="timed transfers per path and cell")
    ap.add_argument("--only", choices=list(WORKLOADS), help="one workload")
    ap.add_argument("--paths", help=f"comma-separated subset of {','.join(OURS)} (pyarrow is "
                    f"always run)")
    ap.add_argument("--cpu", action="store_true",
                    help="also a table of CPU time per transfer (client + server)")
    ap.add_argument("--serve", choices=("pyarrow", "dissociated"), help=argparse.SUPPRESS)
    ap.add_argument("--socket", help=argparse.SUPPRESS)
    args = ap.parse_args()
    workloads = dict(QUICK if args.quick else WORKLOADS)
    if args.serve == "pyarrow":
        serve_pyarrow(args.socket, workloads)
        return
    if args.serve:
        serve_dissociated(args.socket, workloads)
        return
    if args.only:
        workloads = {args.only: workloads[args.only]}
    rounds = args.rounds or (3 if args.quick else 5)
    ours = tuple(OURS) if not args.paths else tuple(args.paths.split(","))
    unknown = set(ours) - set(OURS)
    if unknown:
        ap.error(f"unknown paths {sorted(unknown)}; choose from {list(OURS)}")
    results, cpu = run_all(workloads, rounds, args.quick, ours)
    print_table(f"nproc={os.cpu_count()} python={platform.python_version()} "
                f"pyarrow={pa.__version__} rounds={rounds}, each path interleaved with pyarrow "
                f"(median GB/s; median of per-round ratios to pyarrow)\n",
                workloads, results, ours, lambda v: f"{v:.2f}", lambda b, x: x / b)
    if args.cpu:
        print_table("\nCPU time per transfer, client + server (median ms; median of per-round "
                    "ratios pyarrow / path: above 1 is cheaper than pyarrow)\n",
                    workloads, cpu, ours, lambda v: f"{v * 1e3:.0f}", lambda b, x: b / x)


if __name__ == "__main__":
    main()
