"""The short fuzz runs CI makes (the long runs are documented in tests/fuzz/README.md).

* the pure-Python mutation fuzzer (mutate.py): a fixed, reproducible set of mutants of every gold
  seed for the stream, file and compressed targets, in worker processes with limits;
* the atheris (libFuzzer) harness, when atheris is installed: a few thousand runs per target;
* the surface targets (fuzz_surfaces.py): the push decoder in random chunkings and the async
  reader against the stream reader, and file objects that break their contract;
* the format targets (fuzz_formats.py): Feather V1 files, datasets holding a damaged file (every
  error names it) and pyarrow's serialized expressions.

Any crash, hang or foreign exception fails the test and leaves the input in tests/fuzz/findings/.
"""
import importlib.util
import os
import re
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import mutate  # noqa: E402  (puts tests/untrusted on sys.path)
import harness  # noqa: E402
import seeds  # noqa: E402

MUTANTS = int(os.environ.get("ARROWIPC_FUZZ_MUTANTS", "12000"))
ATHERIS_RUNS = int(os.environ.get("ARROWIPC_FUZZ_ATHERIS_RUNS", "3000"))
SURFACE_EXECS = {"push": 5000, "async": 2000, "fileobj": 2000}
FORMAT_EXECS = {"feather_v1": 3000, "dataset": 1500, "expression": 5000}



def test_mutation_fuzzer_short_run():
    counts, findings = mutate.run(seeds.TARGETS, seconds=150, jobs=min(2, os.cpu_count() or 1),
                                  max_mutants=MUTANTS, quiet=True)
    print("mutation fuzzer:", dict(counts))
    assert not findings, "\n".join(f"{t}: {r['detail'][:500]} -> {p}" for t, r, p in findings)
    assert sum(counts.values()) >= min(MUTANTS, 2000)      # it really ran


@pytest.mark.skipif(importlib.util.find_spec("atheris") is None, reason="atheris not installed")
@pytest.mark.parametrize("target", seeds.TARGETS)
def test_atheris_short_run(target, tmp_path):
    corpus = tmp_path / "corpus"
    artifacts = tmp_path / "artifacts"
    artifacts.mkdir()
    env = dict(os.environ, PYTHONPATH=harness.REPO_ROOT)
    done = subprocess.run(
        [sys.executable, os.path.join(HERE, "fuzz_ipc.py"), "--target", target,
         f"-runs={ATHERIS_RUNS}", "-timeout=20", "-rss_limit_mb=4096",
         f"-artifact_prefix={artifacts}/", str(corpus)],
        capture_output=True, text=True, env=env, timeout=600)
    found = os.listdir(artifacts)
    assert done.returncode == 0 and not found, (found, done.stderr[-3000:])
    # libFuzzer may count the seed inputs it replays on top of -runs ("Done 3019 runs")
    runs = re.search(r"Done (\d+) runs", done.stderr)
    assert runs is not None and int(runs.group(1)) >= ATHERIS_RUNS, done.stderr[-3000:]


@pytest.mark.parametrize("target", sorted(SURFACE_EXECS))
def test_surface_fuzzer_short_run(target):
    _short_run("fuzz_surfaces.py", target,
               int(os.environ.get("ARROWIPC_FUZZ_SURFACE_EXECS", SURFACE_EXECS[target])))


@pytest.mark.parametrize("target", sorted(FORMAT_EXECS))
def test_format_fuzzer_short_run(target):
    _short_run("fuzz_formats.py", target,
               int(os.environ.get("ARROWIPC_FUZZ_FORMAT_EXECS", FORMAT_EXECS[target])))


def _short_run(script, target, execs):
    done = subprocess.run(
        [sys.executable, os.path.join(HERE, script), "--target", target,
         "--seconds", "inf", "--max-execs", str(execs)],      # a count, never a time budget
        capture_output=True, text=True, env=dict(os.environ, PYTHONPATH=harness.REPO_ROOT),
        timeout=30 * harness.DEFAULT_TIMEOUT)               # a hang guard only
    print(done.stdout[-2000:])
    assert done.returncode == 0, (done.stdout[-3000:], done.stderr[-3000:])
    ran = re.search(rf"{target}: (\d+) executions", done.stdout)
    assert ran is not None and int(ran.group(1)) == execs, done.stdout[-3000:]


def test_jvm_reader_fuzzer_short_run():
    """The Spark JVM source's reader (java/), mutants read without Spark (jvm_fuzz.py)."""
    import jvm_fuzz
    why = jvm_fuzz.unavailable()
    if why:
        pytest.skip(f"the JVM fuzzer cannot run: {why}")
    count = int(os.environ.get("ARROWIPC_FUZZ_JVM_MUTANTS", "3000"))
    totals, reports = jvm_fuzz.run(count=count, chunk=count, quiet=True)
    print("JVM reader fuzzer: executions {} clean {} errors {} findings {}".format(*totals))
    assert not reports and totals[3] == 0, "\n".join(r[:1500] for r in reports[:5])
    assert totals[0] == count and totals[1] > 0       # it really ran, and read some inputs whole
