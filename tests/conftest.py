"""Root conftest of the test suite.

Test folders need no __init__.py: pytest's rootdir-based discovery ("prepend" import mode) puts
a test file's folder on sys.path, so test file basenames must be unique across tests/.  This file
makes the repository root (the in-place build of arrowipc) and tests/ itself importable, so
`import arrowipc` and `import strategies` work from any sub-folder and under any import mode.
"""
import os
import sys

TESTS_DIR = os.path.dirname(os.path.abspath(__file__))
REPO_ROOT = os.path.dirname(TESTS_DIR)

for path in (TESTS_DIR, REPO_ROOT):
    if path not in sys.path:
        sys.path.insert(0, path)
