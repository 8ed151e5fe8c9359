"""The short run of the tensor message fuzz target (fuzz_tensor.py; its long run is in
tests/fuzz/README.md): a fixed set of mutated Tensor and SparseTensor messages read and used in
a child process with a limited address space. Every mutant must read cleanly or raise an
arrowipc exception (or EOFError), without a signal, a hang or a MemoryError."""
import os
import sys

import pytest

pytest.importorskip("numpy")
pytest.importorskip("resource")

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import fuzz_tensor  # noqa: E402

MUTANTS = int(os.environ.get("ARROWIPC_FUZZ_TENSOR_MUTANTS", "5000"))
CHILD_TIMEOUT = 600          # seconds: a hang guard for the child, not a speed check


def test_tensor_fuzzer_short_run():
    counts, findings = fuzz_tensor.run(0, MUTANTS, None, CHILD_TIMEOUT)
    print("tensor fuzzer:", dict(counts))
    assert not findings, "\n".join(f"mutant {f['index']}: {f['error']}" for f in findings[:10])
    assert sum(counts.values()) == MUTANTS
    assert counts["clean"] > MUTANTS // 50 and counts["arrowipc error"] > MUTANTS // 50
