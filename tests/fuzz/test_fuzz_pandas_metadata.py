"""The short run of the pandas metadata fuzz target (fuzz_pandas_metadata.py; its long run is in
tests/fuzz/README.md): a fixed set of mutants of the `pandas` schema metadata through
Table.to_pandas(), here and in pyarrow. Every mutant must give an ArrowInvalid or pyarrow's
DataFrame."""
import os
import sys

import pytest

pytest.importorskip("pandas")
pytest.importorskip("pyarrow")

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import fuzz_pandas_metadata  # noqa: E402

MUTANTS = int(os.environ.get("ARROWIPC_FUZZ_PANDAS_MUTANTS", "3000"))


def test_pandas_metadata_fuzzer_short_run():
    counts, findings = fuzz_pandas_metadata.run(0, MUTANTS, None)
    print("pandas metadata fuzzer:", dict(counts))
    assert not findings, "\n".join(f"mutant {i}: {kind}: {detail}\n  {raw[:300]!r}"
                                   for i, kind, detail, raw in findings[:10])
    assert sum(counts.values()) == MUTANTS
    # both outcomes are exercised: the mutants are not all refused, nor all harmless
    assert counts["same"] > MUTANTS // 20 and counts["invalid"] > MUTANTS // 20
