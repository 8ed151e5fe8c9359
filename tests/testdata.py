"""Where the test suite finds its data: the repository's own copy, so a fresh clone needs nothing beside it.

tests/data/arrow-testing/  a subset of apache/arrow-testing (integration gold files, the fuzz
                           regression corpus, forward-compatibility; see its SOURCE.txt and LICENSE.txt)
tests/data/ipc-supplement/ dictionary delta and replacement cases arrow-testing lacks (see its README.md)

$ARROWIPC_TESTING_DIR may point at another arrow-testing checkout (a newer corpus, say). Data that is
missing is a failure, never a skip: a suite that quietly skips its corpus proves nothing.
"""
import os

import pytest

DATA_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data")
ARROW_TESTING = os.environ.get("ARROWIPC_TESTING_DIR") or os.path.join(DATA_DIR, "arrow-testing")
IPC_SUPPLEMENT = os.path.join(DATA_DIR, "ipc-supplement")
INTEGRATION = os.path.join(ARROW_TESTING, "data", "arrow-ipc-stream", "integration")


def integration_dir(gold_dir: str) -> str:
    """The folder of one integration gold set, e.g. '1.0.0-littleendian'."""
    return os.path.join(INTEGRATION, gold_dir)


def required(path: str) -> str:
    """`path` if it exists; otherwise the calling test fails, naming the missing data."""
    if not os.path.exists(path):
        pytest.fail(f"test data missing: {path} (the repository carries it under tests/data/; "
                    f"ARROWIPC_TESTING_DIR={os.environ.get('ARROWIPC_TESTING_DIR')!r})")
    return path
