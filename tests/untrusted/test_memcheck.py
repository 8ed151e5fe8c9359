"""Memory checks CI can afford: resident memory flat over repeated corpus replays, and a small
replay under valgrind memcheck when valgrind is installed (the whole corpus: bash ci/valgrind.sh).
"""
import os
import shutil
import subprocess
import sys

import pytest

import harness
import memcheck_replay

pytestmark = pytest.mark.skipif(not harness.corpus_files(), reason="arrow-testing corpus not found")


def test_replaying_the_corpus_again_keeps_nothing():
    # in a fresh process: this one carries the allocations of every test before it
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([harness.REPO_ROOT, harness.HERE]))
    done = subprocess.run([sys.executable, memcheck_replay.__file__, "--growth", "--rounds", "3"],
                          capture_output=True, text=True, env=env, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    _, kept, _, _, objects, _ = done.stdout.split()
    # 3 rounds x ~850 reads: one object or 25 bytes kept per read would show. (What is kept,
    # ~25 kB, sits in third-party caches: zoneinfo conversions and python-zstandard.)
    assert int(kept) < 64_000 and int(objects) < 100, done.stdout


@pytest.mark.skipif(shutil.which("valgrind") is None, reason="valgrind not installed")
def test_small_replay_under_valgrind(tmp_path):
    assert memcheck_replay.valgrind_check(limit=12, log_dir=str(tmp_path))
