"""Typing reaches users: `mypy --strict` passes on a user-style script and on the package, and the
stubs of the compiled modules match them (stubtest). Each check prints the tool's full output when
it fails. mypy and stubtest import nothing from the tests; they read pyproject.toml's [tool.mypy].
"""
import glob
import os
import subprocess
import sys

import pytest

pytest.importorskip("mypy", reason="mypy is in ci/requirements-dev.txt")

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
USER_SCRIPT = os.path.join(REPO_ROOT, "tests", "typing", "user_script.py")

pytestmark = pytest.mark.slow          # each mypy run takes 10-30 s on a cold cache


@pytest.fixture(scope="module")
def cache_dir(tmp_path_factory):
    """One mypy cache for the module's runs, outside the work tree."""
    return str(tmp_path_factory.mktemp("mypy_cache"))


def run(args: list, cache: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, MYPY_CACHE_DIR=cache,
               PYTHONPATH=REPO_ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    return subprocess.run([sys.executable, "-m", *args], cwd=REPO_ROOT, env=env,
                          capture_output=True, text=True)


def assert_clean(result: subprocess.CompletedProcess, what: str) -> None:
    output = result.stdout + result.stderr
    assert result.returncode == 0, f"{what} found problems:\n{output}"
    assert "Success: no issues found" in output, f"{what} checked nothing:\n{output}"


def compiled_modules() -> list:
    paths = sorted(glob.glob(os.path.join(REPO_ROOT, "arrowipc", "_core", "*.pyx")) +
                   glob.glob(os.path.join(REPO_ROOT, "arrowipc", "ipc", "_*.pyx")) +
                   glob.glob(os.path.join(REPO_ROOT, "arrowipc", "dissociated", "_*.pyx")))
    return [os.path.relpath(p, REPO_ROOT)[:-4].replace(os.sep, ".") for p in paths]


def test_every_compiled_module_has_a_stub():
    missing = [m for m in compiled_modules()
               if not os.path.exists(os.path.join(REPO_ROOT, *m.split(".")) + ".pyi")]
    assert len(compiled_modules()) >= 10
    assert not missing, f"compiled modules without a .pyi stub: {missing}"


def test_the_package_ships_py_typed():
    assert os.path.exists(os.path.join(REPO_ROOT, "arrowipc", "py.typed"))


def test_user_script_runs():
    result = subprocess.run([sys.executable, USER_SCRIPT], capture_output=True, text=True,
                            env=dict(os.environ, PYTHONPATH=REPO_ROOT))
    assert result.returncode == 0, result.stdout + result.stderr


def test_mypy_strict_on_a_user_script(cache_dir):
    assert_clean(run(["mypy", "--strict", USER_SCRIPT], cache_dir), "mypy --strict (user script)")


def test_mypy_strict_on_the_package(cache_dir):
    assert_clean(run(["mypy", "--strict", "arrowipc"], cache_dir), "mypy --strict arrowipc")


def test_stubtest_on_the_compiled_modules(cache_dir):
    allowlist = os.path.join(REPO_ROOT, "ci", "stubtest-allowlist.txt")
    result = run(["mypy.stubtest", "--allowlist", allowlist, *compiled_modules()], cache_dir)
    output = result.stdout + result.stderr
    assert result.returncode == 0, f"stubtest found mismatches:\n{output}"
    assert "Success: no issues found in" in output, output


# Modules exempted from parts of `mypy --strict` in pyproject.toml (issue 14 item 6 annotated the
# last of them): none may come back.
MAX_PARTLY_ANNOTATED = 0
MAX_NOT_ANNOTATED = 0


def test_the_lists_of_modules_exempt_from_strict_typing_only_shrink():
    tomllib = pytest.importorskip("tomllib")
    with open(os.path.join(REPO_ROOT, "pyproject.toml"), "rb") as f:
        overrides = tomllib.load(f)["tool"]["mypy"]["overrides"]
    ours = [o for o in overrides if any(m.startswith("arrowipc") for m in o["module"])]
    not_annotated = [m for o in ours if o.get("ignore_errors") for m in o["module"]]
    partly = [m for o in ours if not o.get("ignore_errors") for m in o["module"]]
    for name in ("arrowipc", "arrowipc.types", "arrowipc.table", "arrowipc.array", "arrowipc.io",
                 "arrowipc.errors", "arrowipc.ipc", "arrowipc.ipc.options",
                 "arrowipc.ipc.stream_decoder", "arrowipc.ipc.recover", "arrowipc.ipc.message"):
        assert name not in not_annotated + partly, f"{name} is public API: it stays strict"
    assert len(partly) <= MAX_PARTLY_ANNOTATED, partly
    assert len(not_annotated) <= MAX_NOT_ANNOTATED, not_annotated
