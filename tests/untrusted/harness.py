"""Replaying untrusted inputs against arrowipc, each in a child process with limits.

`exercise(data, mode)` is what every untrusted input goes through (corpus replay, fuzzing,
valgrind): open it as a stream or as a file, read every batch, `to_pylist()` it and export it to
pyarrow (which re-checks the imported layout with its own `validate()`).

`ReplayPool` runs exercises in worker processes under an address-space limit and a per-input
timeout. Each input ends in one outcome:

* ``clean``   -- read to the end without an exception;
* ``error``   -- an arrowipc exception (ArrowException: ArrowInvalid, ArrowNotImplementedError...),
  or pyarrow refusing our export of an input that pyarrow refuses to read itself;
* ``foreign`` -- any other exception (IndexError, struct.error, UnicodeDecodeError,
  RecursionError, MemoryError, a pyarrow error on what we exported...): a bug;
* ``crash``   -- the worker died (a signal, an abort): a bug;
* ``hang``    -- no answer within the timeout: a bug.

Command line (the corpus replay with its counts, as CI's test does):
    python tests/untrusted/harness.py [--jobs 2] [--timeout 20] [paths...]
"""
from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import sys
import time
import traceback
from collections import Counter

HERE = os.path.dirname(os.path.abspath(__file__))
REPO_ROOT = os.path.dirname(os.path.dirname(HERE))
for _path in (REPO_ROOT, os.path.dirname(HERE)):       # arrowipc, and tests/ for testdata
    if _path not in sys.path:
        sys.path.insert(0, _path)

import testdata  # noqa: E402

CORPUS_DIRS = ("arrow-ipc-stream", "arrow-ipc-file", "arrow-ipc-tensor-stream",
               "forward-compatibility")
MODES = ("stream", "file")
OUTCOMES = ("clean", "error", "foreign", "crash", "hang")
MEMORY_LIMIT = 3 << 30          # address space a worker may add to what its imports use
DEFAULT_TIMEOUT = 20.0


def testing_dir() -> str:
    return testdata.ARROW_TESTING


def corpus_files() -> list:
    """Every file under the four corpus folders of arrow-testing, sorted."""
    root = os.path.join(testing_dir(), "data")
    out = []
    for d in CORPUS_DIRS:
        folder = os.path.join(root, d)
        assert os.path.isdir(folder), f"test data missing: {folder}"
        for dirpath, _, names in os.walk(folder):
            out.extend(os.path.join(dirpath, n) for n in names)
    return sorted(out)


def gold_files() -> list:
    """The integration gold files (.stream and .arrow_file), the ones cut at every byte."""
    return [p for p in corpus_files() if p.endswith((".stream", ".arrow_file"))]


# -- one exercise -----------------------------------------------------------------------------

# A batch without columns has no values to touch; its to_pylist() is num_rows empty dicts, which
# for a claimed 10^8 rows is gigabytes of legitimate Python objects, more than the fuzzers' memory
# limits allow. RecordBatch.to_pylist refuses at once what exceeds physical memory: that refusal
# is exercised, the legitimate middle ground is not.
_MAX_EMPTY_ROWS = 1 << 20


def _legitimately_huge(num_rows: int) -> bool:
    from arrowipc.table import _EMPTY_DICT_BYTES, _physical_memory
    return _MAX_EMPTY_ROWS < num_rows and num_rows * _EMPTY_DICT_BYTES <= _physical_memory()


def exercise(data, mode: str, options=None, to_pyarrow: bool = True) -> int:
    """Read `data` as a stream or a file, touching every value; returns the number of rows."""
    from arrowipc import ipc
    if mode == "stream":
        batches = ipc.open_stream(data, options=options)
    else:
        # iteration: get_batch for each uncompressed batch, windows for compressed ones
        batches = iter(ipc.open_file(data, options=options))
    from arrowipc.errors import ArrowException
    rows, first_error = 0, None
    for batch in batches:
        if batch.num_columns == 0 and not _legitimately_huge(batch.num_rows):
            batch.to_pylist()          # a batch without columns still claims a number of rows
        for column in batch.columns:
            # every column is converted even after one fails (a value Python cannot hold, like
            # pyarrow's to_pylist), so the others are still exercised; the first error is raised
            try:
                column.to_pylist()
            except ArrowException as e:
                first_error = first_error or e
        if to_pyarrow:
            # after our own conversions: input pyarrow refuses must still exercise ours
            try:
                _check_in_pyarrow(batch, data, mode)
            except PyarrowRefuses as e:
                first_error = first_error or e
        rows += batch.num_rows
    if first_error is not None:
        raise first_error
    return rows


class PyarrowRefuses(Exception):
    """pyarrow refused what we exported, and refuses the IPC input itself as well (say a
    canonical extension type with metadata it rejects): an error of the input, not of ours."""


def _check_in_pyarrow(batch, data, mode):
    import pyarrow as pa
    from arrowipc.errors import ArrowException
    try:
        capsules = batch.__arrow_c_array__()
    except ArrowException:
        return                     # a type we cannot export is reported, not a failure
    try:
        imported = pa.RecordBatch._import_from_c_capsule(*capsules)
        imported.validate()        # pyarrow's own structural check of what we handed over
    except pa.ArrowException as e:
        if _pyarrow_reads(data, mode):
            raise                  # pyarrow reads the input but not our export of it: our bug
        raise PyarrowRefuses(f"pyarrow refuses the input too: {e}") from None


def _pyarrow_reads(data, mode) -> bool:
    import pyarrow as pa
    try:
        if mode == "stream":
            pa.ipc.open_stream(pa.py_buffer(data)).read_all().validate()
        else:
            pa.ipc.open_file(pa.py_buffer(data)).read_all().validate()
    except Exception:              # noqa: BLE001 -- pyarrow reports IPC errors as OSError too
        return False
    return True


def classify(exc: BaseException | None) -> str:
    if exc is None:
        return "clean"
    from arrowipc.errors import ArrowException
    return "error" if isinstance(exc, (ArrowException, PyarrowRefuses)) else "foreign"


def task_input(task) -> tuple:
    """(bytes, mode) of a task: ("file", path, mode) or ("mutant", seed path, index, mode), the
    latter regenerated from its seed (tests/fuzz/mutate.py) so only the description travels."""
    if task[0] == "file":
        with open(task[1], "rb") as f:
            return f.read(), task[2]
    sys.path.insert(0, os.path.join(REPO_ROOT, "tests", "fuzz"))
    from mutate import make_mutant
    return make_mutant(task[1], task[2]), task[3]


def run_task(task, options=None) -> dict:
    try:
        data, mode = task_input(task)
        exercise(data, mode, options)
    except BaseException as e:       # noqa: BLE001 -- every exception is an outcome here
        outcome = classify(e)
        detail = f"{type(e).__name__}: {e}"[:300]
        if outcome == "foreign":
            detail += "\n" + "".join(traceback.format_exception(e))[-2000:]
        return {"outcome": outcome, "detail": detail}
    return {"outcome": "clean", "detail": ""}


# -- worker processes ---------------------------------------------------------------------------

PYTHON_CODECS_ENV = "ARROWIPC_FUZZ_PYTHON_CODECS"     # set: workers call use_python_codecs()


def use_python_codecs() -> None:
    """Read and write as on a machine where neither codec library loads (the codec packages'
    Python APIs), so fuzzing reaches that path too."""
    from arrowipc.ipc import compression

    class NoLibraries:
        @staticmethod
        def available(codec):
            return False

    compression._native = NoLibraries


def _worker_main():
    import resource
    import arrowipc.ipc  # noqa: F401  (imports before the limit: they are not the input's fault)
    import pyarrow  # noqa: F401
    if os.environ.get(PYTHON_CODECS_ENV):
        use_python_codecs()
    limit = int(os.environ.get("ARROWIPC_REPLAY_MEMORY", MEMORY_LIMIT))
    with open("/proc/self/statm") as f:
        used = int(f.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    resource.setrlimit(resource.RLIMIT_AS, (used + limit, used + limit))
    out = sys.stdout
    for line in sys.stdin:
        result = run_task(tuple(json.loads(line)))
        out.write(json.dumps(result) + "\n")
        out.flush()


class _Worker:
    def __init__(self):
        env = dict(os.environ)
        env["PYTHONPATH"] = REPO_ROOT + os.pathsep + env.get("PYTHONPATH", "")
        self.proc = subprocess.Popen([sys.executable, os.path.abspath(__file__), "--worker"],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env,
                                     text=True, bufsize=1)
        self.task = None
        self.started = 0.0

    def send(self, task):
        self.task = task
        self.started = time.monotonic()
        self.proc.stdin.write(json.dumps(list(task)) + "\n")
        self.proc.stdin.flush()

    def stop(self):
        if self.proc.poll() is None:
            self.proc.kill()          # only the worker this pool started, by its own handle
        self.proc.wait()


class ReplayPool:
    """Runs tasks (see task_input) on `jobs` worker processes; a worker that crashes or hangs is
    replaced and its task gets that outcome. `tasks` may be any iterable; with a `deadline`
    (time.monotonic()) no new task starts after it."""

    def __init__(self, jobs: int = 2, timeout: float = DEFAULT_TIMEOUT):
        self.jobs = max(1, jobs)
        self.timeout = timeout

    def run(self, tasks, deadline: float | None = None, on_result=None) -> dict:
        source = iter(tasks)
        results = {}

        def next_task():
            if deadline is not None and time.monotonic() > deadline:
                return None
            return next(source, None)

        workers = [_Worker() for _ in range(self.jobs)]
        try:
            for w in workers:
                task = next_task()
                if task is not None:
                    w.send(task)
            while any(w.task is not None for w in workers):
                busy = {w.proc.stdout.fileno(): w for w in workers if w.task is not None}
                ready, _, _ = select.select(list(busy), [], [], 0.5)
                now = time.monotonic()
                for i, w in enumerate(workers):
                    if w.task is None:
                        continue
                    result = None
                    if w.proc.stdout.fileno() in ready:
                        line = w.proc.stdout.readline()
                        if line:
                            result = json.loads(line)
                        else:
                            code = w.proc.wait()
                            sig = -code if code < 0 else None
                            name = signal.Signals(sig).name if sig else f"exit code {code}"
                            result = {"outcome": "crash", "detail": f"worker died: {name}"}
                    elif now - w.started > self.timeout:
                        result = {"outcome": "hang", "detail": f"no answer in {self.timeout} s"}
                    if result is None:
                        continue
                    results[w.task] = result
                    if on_result is not None:
                        on_result(w.task, result)
                    if result["outcome"] in ("crash", "hang"):
                        w.stop()
                        workers[i] = w = _Worker()
                    w.task = None
                    task = next_task()
                    if task is not None:
                        w.send(task)
        finally:
            for w in workers:
                try:
                    w.proc.stdin.close()
                except OSError:
                    pass
                w.stop()
        return results


def replay(paths=None, jobs: int = 2, timeout: float = DEFAULT_TIMEOUT) -> dict:
    """{(path, mode): result} for every corpus file (or `paths`) in both modes."""
    paths = corpus_files() if paths is None else paths
    results = ReplayPool(jobs, timeout).run([("file", p, m) for p in paths for m in MODES])
    return {(t[1], t[2]): r for t, r in results.items()}


def summary(results: dict) -> Counter:
    return Counter(r["outcome"] for r in results.values())


def main(argv):
    import argparse
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT)
    ap.add_argument("--verbose", "-v", action="store_true")
    ap.add_argument("paths", nargs="*")
    args = ap.parse_args(argv)
    if args.worker:
        _worker_main()
        return 0
    t0 = time.monotonic()
    results = replay(args.paths or None, args.jobs, args.timeout)
    counts = summary(results)
    for (path, mode), r in sorted(results.items()):
        if r["outcome"] in ("foreign", "crash", "hang") or args.verbose:
            print(f"{r['outcome']:8} {mode:6} {os.path.relpath(path, testing_dir())}: {r['detail']}")
    print(f"{len(results)} reads of {len(results) // len(MODES)} files in "
          f"{time.monotonic() - t0:.1f} s: " + ", ".join(f"{o} {counts.get(o, 0)}" for o in OUTCOMES))
    return 0 if not any(counts.get(o) for o in ("foreign", "crash", "hang")) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
