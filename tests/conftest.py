"""Root conftest of the test suite.

The suite has no __init__.py files: pytest's default ("prepend") import mode puts each test
file's folder on sys.path, so every test file basename must be unique across tests/.  This file
also makes the repository root (the in-place build of arrowipc) and tests/ itself importable, so
`import arrowipc` and `import strategies` work from any sub-folder and under any import mode.
"""
import os
import sys

TESTS_DIR = os.path.dirname(os.path.abspath(__file__))
REPO_ROOT = os.path.dirname(TESTS_DIR)

for path in (TESTS_DIR, REPO_ROOT):
    if path not in sys.path:
        sys.path.insert(0, path)
