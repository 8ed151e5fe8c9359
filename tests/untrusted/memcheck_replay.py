"""The corpus replay in one process, for memory checkers; `--valgrind` runs it under memcheck.

Every corpus file and regression input is read as a stream and as a file, every batch is
to_pylist()-ed and exported through the C data interface (the capsules released again), `rounds`
times over.

With --valgrind (what ci/valgrind.sh does) the replay runs under valgrind's memcheck twice, for
1 round and for 3 rounds, and the logs are judged:
  * no invalid read, invalid write, invalid or mismatched free, or overlapping copy, anywhere
    (but in the dynamic loader resolving library paths, a known false report);
  * no use of uninitialised memory whose stack passes through arrowipc (CPython's own reports,
    such as maybe_small_long in 3.11 builds, are counted but not held against us);
  * the bytes lost by allocations whose stacks pass through arrowipc no more after 3 rounds than
    after 1: nothing leaks in proportion to the inputs read (the totals, which also count
    numpy's and the interpreter's import-time blocks, are printed but vary from run to run).

    python tests/untrusted/memcheck_replay.py [--rounds N] [--limit K]
    python tests/untrusted/memcheck_replay.py --valgrind [--limit K]
    python tests/untrusted/memcheck_replay.py --growth --rounds 3
"""
from __future__ import annotations

import argparse
import gc
import glob
import os
import re
import subprocess
import sys

import harness

from arrowipc.errors import ArrowException


def inputs(limit: int | None = None) -> list:
    paths = harness.corpus_files()
    for folder in (os.path.join(harness.HERE, "regressions"),
                   os.path.join(harness.REPO_ROOT, "tests", "fuzz", "regressions")):
        paths += sorted(p for p in glob.glob(os.path.join(folder, "*")) if not p.endswith(".md"))
    if limit and limit < len(paths):
        step = len(paths) / limit                 # spread over the corpus, not just its start
        paths = [paths[int(i * step)] for i in range(limit)]
    return paths


def replay_once(paths) -> dict:
    counts = {"clean": 0, "error": 0}
    for path in paths:
        with open(path, "rb") as f:
            data = f.read()
        for mode in harness.MODES:
            try:
                for batch in _batches(data, mode):
                    capsules = batch.__arrow_c_array__()
                    del capsules                      # the release callbacks run here
            except ArrowException:
                pass
            try:
                harness.exercise(data, mode, to_pyarrow=False)
                counts["clean"] += 1
            except ArrowException:
                counts["error"] += 1
    return counts


def _batches(data, mode):
    from arrowipc import ipc
    if mode == "stream":
        return list(ipc.open_stream(data))
    reader = ipc.open_file(data)
    return [reader.get_batch(i) for i in range(reader.num_record_batches)]


_BAD_ANYWHERE = ("Invalid read", "Invalid write", "Invalid free", "Mismatched free",
                 "Source and destination overlap")
# The dynamic loader's strncmp reads whole words past short strings (dl-load.c is_dst): a known
# false report when a library with an $ORIGIN rpath is loaded, not a read of ours.
_LOADER_FRAMES = ("dl-load.c", "dl-open.c", "dl-deps.c")
_UNINITIALISED = ("Use of uninitialised value", "Conditional jump or move depends on uninitialised",
                  "Syscall param")


# A stack frame of arrowipc's own code: its extension modules, Cython functions, or the C
# functions of cpp/ (a checkout path that contains "arrowipc" must not make numpy's frames ours).
_OURS = re.compile(r"arrowipc/_core/|__pyx_|\barrowipc_\w+ \(")
_LOST = re.compile(r"^([\d,]+)(?: \([\d,]+ direct, [\d,]+ indirect\))? bytes in [\d,]+ blocks? "
                   r"(?:are|is) definitely lost")


def judge_log(text: str) -> dict:
    """Counts from a memcheck log: invalid accesses, uninitialised uses in and outside arrowipc,
    the bytes lost by allocations made through arrowipc (`lost_ours`, direct and indirect) and
    the leak summary's definitely/indirectly lost bytes (everything, the interpreter and numpy's
    import-time blocks included: whether those count as lost varies from run to run)."""
    out = {"invalid": 0, "loader_noise": 0, "uninitialised_ours": 0, "uninitialised_other": 0,
           "lost_ours": 0, "definitely_lost": 0, "indirectly_lost": 0, "examples": []}
    for block in re.split(r"\n==\d+== \n", text):
        lines = [re.sub(r"^==\d+== ", "", line) for line in block.splitlines()]
        if not lines:
            continue
        head = lines[0]
        ours = any(_OURS.search(line) for line in lines)
        if head.startswith(_BAD_ANYWHERE):
            if len(lines) > 2 and any(m in lines[2] for m in _LOADER_FRAMES):
                out["loader_noise"] += 1     # glibc's word-wise strncmp while resolving rpaths
                continue
            out["invalid"] += 1
            out["examples"].append("\n".join(lines[:12]))
        elif head.startswith(_UNINITIALISED):
            out["uninitialised_ours" if ours else "uninitialised_other"] += 1
            if ours:
                out["examples"].append("\n".join(lines[:12]))
        elif _LOST.match(head) and ours:
            out["lost_ours"] += int(_LOST.match(head).group(1).replace(",", ""))
            out["examples"].append("\n".join(lines[:12]))
    for key, label in (("definitely_lost", "definitely lost"), ("indirectly_lost", "indirectly lost")):
        m = re.search(label + r": ([\d,]+) bytes", text)
        out[key] = int(m.group(1).replace(",", "")) if m else 0
    return out


def run_valgrind(rounds: int, limit, log_path: str) -> dict:
    env = dict(os.environ, PYTHONMALLOC="malloc",
               PYTHONPATH=os.pathsep.join([harness.REPO_ROOT, harness.HERE]))
    cmd = ["valgrind", "--tool=memcheck", "--leak-check=full", "--show-leak-kinds=definite",
           "--num-callers=30", f"--log-file={log_path}",
           sys.executable, os.path.abspath(__file__), "--rounds", str(rounds)]
    if limit:
        cmd += ["--limit", str(limit)]
    done = subprocess.run(cmd, env=env, capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"the replay failed under valgrind:\n{done.stdout}\n{done.stderr}")
    print(done.stdout.strip())
    with open(log_path) as f:
        return judge_log(f.read())


def valgrind_check(limit=None, log_dir: str = ".") -> bool:
    one = run_valgrind(1, limit, os.path.join(log_dir, "valgrind-1-round.log"))
    three = run_valgrind(3, limit, os.path.join(log_dir, "valgrind-3-rounds.log"))
    for name, r in (("1 round", one), ("3 rounds", three)):
        print(f"valgrind {name}: {r['invalid']} invalid accesses ({r['loader_noise']} in the "
              f"dynamic loader), {r['uninitialised_ours']} "
              f"uninitialised uses in arrowipc ({r['uninitialised_other']} in CPython), "
              f"{r['lost_ours']} B lost by allocations through arrowipc; in all, definitely lost "
              f"{r['definitely_lost']} B, indirectly lost {r['indirectly_lost']} B")
    for example in one["examples"][:5] + three["examples"][:5]:
        print(example, "\n")
    growth = three["lost_ours"] - one["lost_ours"]
    ok = (one["invalid"] == three["invalid"] == 0 and one["uninitialised_ours"] == 0
          and three["uninitialised_ours"] == 0 and growth <= 0)
    print(f"growth of what arrowipc's allocations lose from 1 to 3 rounds: {growth} B; "
          f"{'OK' if ok else 'FAILED'}")
    return ok


def _settle():
    # the reader's schema cache is bounded (64 schemas) but what it holds depends on the order of
    # the inputs: emptied so that it does not count as growth
    from arrowipc.ipc import reader
    reader._SCHEMA_CACHE.clear()
    gc.collect()


def growth_check(rounds: int = 3, limit=None) -> tuple:
    """(Python-level bytes still allocated, live objects gained) after `rounds` replays that
    followed two warm-up replays; allocations made by C code on behalf of Python objects (our
    buffers) live and die with those objects, and valgrind covers the rest."""
    import tracemalloc
    paths = inputs(limit)
    replay_once(paths)
    replay_once(paths)
    _settle()
    objects = len(gc.get_objects())
    tracemalloc.start()
    for _ in range(rounds):
        replay_once(paths)
    _settle()
    kept = tracemalloc.get_traced_memory()[0]
    tracemalloc.stop()
    return kept, len(gc.get_objects()) - objects


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--limit", type=int, default=None, help="only K inputs, spread over the corpus")
    ap.add_argument("--valgrind", action="store_true", help="run and judge under memcheck")
    ap.add_argument("--log-dir", default=".")
    ap.add_argument("--growth", action="store_true",
                    help="print the bytes and objects kept by --rounds replays after a warm-up")
    args = ap.parse_args(argv)
    if args.growth:
        kept, objects = growth_check(args.rounds, args.limit)
        print(f"kept {kept} bytes and {objects} objects")
        return 0
    if args.valgrind:
        return 0 if valgrind_check(args.limit, args.log_dir) else 1
    paths = inputs(args.limit)
    for _ in range(args.rounds):
        counts = replay_once(paths)
    gc.collect()
    print(f"memcheck replay: {len(paths)} inputs x 2 modes x {args.rounds} rounds; last round: "
          f"{counts['clean']} clean, {counts['error']} errors", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
