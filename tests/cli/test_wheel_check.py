"""The package check (ci/wheel_check.sh): sdist and wheel build, twine --strict, a small wheel,
a bare install that imports fast without numpy/flatbuffers/codecs and runs `arrowipc inspect`."""
import os
import subprocess
import sys

import pytest

from clitools import REPO_ROOT


@pytest.mark.slow
def test_wheel_check(tmp_path):
    for module in ("build", "twine"):
        try:
            __import__(module)
        except ImportError:
            pytest.skip(f"{module} is not installed (ci/requirements-dev.txt installs it)")
    env = dict(os.environ, ARROWIPC_USE_CURRENT_PYTHON="1", PYTHON=sys.executable)
    env.pop("PYTHONPATH", None)
    p = subprocess.run(["bash", os.path.join(REPO_ROOT, "ci", "wheel_check.sh"), str(tmp_path)],
                       capture_output=True, text=True, env=env, timeout=900)
    print(p.stdout)
    assert p.returncode == 0, p.stdout + p.stderr
    assert "twine check     --strict passed on both" in p.stdout
    assert "loads none of numpy, flatbuffers, lz4, zstandard" in p.stdout
    assert "arrowipc inspect: ok" in p.stdout
