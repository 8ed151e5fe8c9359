"""Every file of the arrow-testing IPC corpora (the integration gold files and the fuzzer finds of
Arrow C++: arrow-ipc-stream, arrow-ipc-file, arrow-ipc-tensor-stream, forward-compatibility),
opened as a stream and as a file, read, to_pylist()-ed and exported to pyarrow, each in a worker
process with an address-space limit and a timeout (harness.py). The only acceptable outcomes are a
clean read and an arrowipc exception; the regression inputs of tests/untrusted/regressions/ and
tests/fuzz/regressions/ are replayed the same way.
"""
import glob
import os

import pytest

import harness

REGRESSIONS = sorted(p for p in glob.glob(os.path.join(harness.HERE, "regressions", "*")) +
                     glob.glob(os.path.join(harness.REPO_ROOT, "tests", "fuzz", "regressions", "*"))
                     if not p.endswith(".md"))


def _assert_no_bugs(results):
    bad = {k: r for k, r in results.items() if r["outcome"] in ("foreign", "crash", "hang")}
    report = "\n".join(f"{r['outcome']} {mode} {path}: {r['detail']}"
                       for (path, mode), r in sorted(bad.items()))
    assert not bad, report


def test_corpus_replay_has_no_crash_hang_or_foreign_exception():
    results = harness.replay(jobs=min(2, os.cpu_count() or 1))
    counts = harness.summary(results)
    print("corpus replay:", dict(counts))
    assert len(results) == 2 * len(harness.corpus_files())
    _assert_no_bugs(results)
    # the gold files read cleanly in their own format, apart from values Python cannot hold
    for (path, mode), r in results.items():
        if path.endswith((".stream", ".arrow_file")) and mode == ("file" if path.endswith(".arrow_file") else "stream"):
            assert r["outcome"] == "clean" or "cannot" in r["detail"], (path, r)


@pytest.mark.skipif(not REGRESSIONS, reason="no regression inputs")
def test_regression_inputs_replay_cleanly():
    results = harness.replay(REGRESSIONS, jobs=min(2, os.cpu_count() or 1))
    _assert_no_bugs(results)
    for (path, mode), r in results.items():
        if "claims-" in path and mode == "stream":
            assert r["detail"].startswith("ArrowCapacityError:"), (path, r)
