"""The package check (ci/wheel_check.sh): sdist and wheel build, twine --strict, a small wheel, a
bare install that imports without numpy/flatbuffers/codecs and runs `arrowipc inspect` — and the
README's figures for the wheel and installed sizes, held against what the check measured.

The import time is measured and printed by the script, never asserted: a busy machine would make
such a test fail. What makes the import fast (no heavy module loaded) is asserted instead.
"""
import json
import os
import re
import subprocess
import sys

import pytest

from clitools import REPO_ROOT


@pytest.fixture(scope="module")
def wheel_check(tmp_path_factory):
    for module in ("build", "twine"):
        try:
            __import__(module)
        except ImportError:
            pytest.fail(f"{module} is not installed (ci/requirements-dev.txt installs it)")
    out = tmp_path_factory.mktemp("wheel")
    env = dict(os.environ, ARROWIPC_USE_CURRENT_PYTHON="1", PYTHON=sys.executable)
    env.pop("PYTHONPATH", None)
    p = subprocess.run(["bash", os.path.join(REPO_ROOT, "ci", "wheel_check.sh"), str(out)],
                       capture_output=True, text=True, env=env, timeout=900)
    print(p.stdout)
    assert p.returncode == 0, p.stdout + p.stderr
    with open(out / "summary.json") as f:
        return p.stdout, json.load(f)


@pytest.mark.slow
def test_wheel_check(wheel_check):
    stdout, summary = wheel_check
    assert "twine check     --strict passed on both" in stdout
    assert "loads none of numpy, flatbuffers, lz4, zstandard" in stdout
    assert "arrowipc inspect: ok" in stdout
    assert summary["import_loads"] == "" and summary["failures"] == []


@pytest.mark.slow
def test_readme_sizes_are_the_measured_ones(wheel_check):
    _, summary = wheel_check
    readme = open(os.path.join(REPO_ROOT, "README.md")).read()
    m = re.search(r"the wheel is ([\d.]+) MB, ([\d.]+) MiB installed", readme)
    assert m, "README.md no longer states the wheel and installed sizes"
    wheel_mb, installed_mib = float(m.group(1)), float(m.group(2))
    # the README rounds to one decimal: within 0.1 (plus 10 % for compiler and packaging drift) of
    # the measurement; a change that grows the package more than that must update the README
    assert abs(wheel_mb - summary["wheel_bytes"] / 1e6) <= 0.1 + 0.10 * wheel_mb, summary
    assert abs(installed_mib - summary["installed_bytes"] / 2**20) <= 0.1 + 0.10 * installed_mib, summary
    assert "bash ci/wheel_check.sh" in readme     # where the import time printed beside them comes from
