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


LEAK_LOG = """==1== 184 (56 direct, 128 indirect) bytes in 1 blocks are definitely lost in loss record 3 of 9
==1==    at 0x48417B4: malloc (in /usr/libexec/valgrind/vgpreload_memcheck-amd64-linux.so)
==1==    by 0x8813283: init_promoter (in /src/arrowipc/.venv/lib/python3.11/site-packages/numpy/_core/_multiarray_umath.so)
==1== 
==1== 4,096 bytes in 2 blocks are definitely lost in loss record 7 of 9
==1==    at 0x48417B4: malloc (in /usr/libexec/valgrind/vgpreload_memcheck-amd64-linux.so)
==1==    by 0x9A0B1C2: arrowipc_codec_run (arrowipc_codecs.c:310)
==1== 
==1== 72 bytes in 1 blocks are definitely lost in loss record 8 of 9
==1==    at 0x48417B4: malloc (in /usr/libexec/valgrind/vgpreload_memcheck-amd64-linux.so)
==1==    by 0x9A0C000: __pyx_pw_8arrowipc_5_core_6buffer_1allocate (buffer.c:1234)
==1== 
==1== Conditional jump or move depends on uninitialised value(s)
==1==    at 0x49E04DA: maybe_small_long (longobject.c:71)
==1==    by 0x4AD129A: f (in /src/arrowipc/.venv/lib/libpython3.11.so)
==1== 
==1== LEAK SUMMARY:
==1==    definitely lost: 4,224 bytes in 4 blocks
==1==    indirectly lost: 128 bytes in 1 blocks
"""


def test_judge_log_counts_only_what_arrowipc_allocated_and_lost():
    counts = memcheck_replay.judge_log(LEAK_LOG)
    # the numpy block (under a checkout path that contains "arrowipc") is not ours
    assert counts["lost_ours"] == 4096 + 72
    assert (counts["uninitialised_ours"], counts["uninitialised_other"]) == (0, 1)
    assert (counts["definitely_lost"], counts["indirectly_lost"]) == (4224, 128)


@pytest.mark.skipif(shutil.which("valgrind") is None, reason="valgrind not installed")
def test_small_replay_under_valgrind(tmp_path):
    assert memcheck_replay.valgrind_check(limit=12, log_dir=str(tmp_path))
