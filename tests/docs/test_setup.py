"""The README's set-up: what `ci/test.sh` runs, the editable install, and a build that compiles
the C kernels once and warns about nothing."""
import os
import re
import shutil
import subprocess
import sys

import pytest

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


@pytest.fixture
def script_sandbox(tmp_path):
    """A copy of ci/test.sh beside stand-ins: an env.sh that only enters the folder, a wheel check
    that reports itself, one passing and one failing test file."""
    ci = tmp_path / "ci"
    ci.mkdir()
    shutil.copy(os.path.join(REPO_ROOT, "ci", "test.sh"), ci / "test.sh")
    (ci / "env.sh").write_text('cd "$(dirname "${BASH_SOURCE[0]}")/.."\n')
    (ci / "spark_wheel.sh").write_text('echo "stand-in wheel check ran"\nexit "${WHEEL_STATUS:-0}"\n')
    tests = tmp_path / "tests"
    tests.mkdir()
    (tests / "test_good.py").write_text("def test_good():\n    assert True\n")
    (tests / "test_bad.py").write_text("def test_bad():\n    assert False\n")
    return tmp_path


def run_script(root, *args, **env):
    full_env = dict(os.environ, **env)
    full_env.pop("ARROWIPC_SKIP_SPARK_WHEEL", None)
    full_env["PATH"] = os.path.dirname(sys.executable) + os.pathsep + full_env["PATH"]
    return subprocess.run(["bash", str(root / "ci" / "test.sh"), *args], capture_output=True,
                          text=True, env=full_env, timeout=300, stdin=subprocess.DEVNULL)


def test_test_sh_with_arguments_runs_only_those(script_sandbox):
    p = run_script(script_sandbox, "tests/test_good.py")
    assert p.returncode == 0, p.stdout + p.stderr
    assert "1 passed" in p.stdout and "failed" not in p.stdout
    assert "stand-in wheel check ran" not in p.stdout


def test_test_sh_runs_the_wheel_check_after_a_pytest_failure(script_sandbox):
    p = run_script(script_sandbox)
    assert p.returncode != 0
    out = p.stdout.splitlines()
    assert "stand-in wheel check ran" in out
    assert re.match(r"pytest: .*1 failed, 1 passed.* \(exit 1\)$", out[-2]), out[-2:]
    assert out[-1] == "wheel check: passed"


def test_test_sh_fails_when_only_the_wheel_check_fails(script_sandbox):
    (script_sandbox / "tests" / "test_bad.py").unlink()
    p = run_script(script_sandbox, WHEEL_STATUS="1")
    assert p.returncode != 0
    assert p.stdout.splitlines()[-2].startswith("pytest: ") and "(exit 0)" in p.stdout
    assert p.stdout.splitlines()[-1] == "wheel check: FAILED (exit 1)"


def test_editable_install_serves_the_checkout_from_any_folder(tmp_path):
    bin_dir = os.path.dirname(sys.executable)
    script = os.path.join(bin_dir, "arrowipc")
    assert os.path.exists(script), ("arrowipc is not installed in this environment: "
                                    "bash ci/env.sh installs it (editable)")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    p = subprocess.run([sys.executable, "-c", "import arrowipc; print(arrowipc.__file__)"],
                       capture_output=True, text=True, cwd=tmp_path, env=env, check=True)
    assert p.stdout.strip() == os.path.join(REPO_ROOT, "arrowipc", "__init__.py")
    p = subprocess.run([script, "--version"], capture_output=True, text=True, cwd=tmp_path,
                       env=env)
    assert p.returncode == 0 and p.stdout.startswith("arrowipc "), p.stderr


@pytest.mark.slow
def test_build_compiles_the_c_kernels_once_without_warnings(tmp_path):
    """A build from scratch into a temporary folder (the in-place build is left alone)."""
    build = tmp_path / "build"
    p = subprocess.run(
        [sys.executable, "setup.py", "build_clib", "--build-temp", str(build / "clib-temp"),
         "--build-clib", str(build / "clib"), "build_ext", "--build-temp", str(build / "temp"),
         "--build-lib", str(build / "lib")],
        capture_output=True, text=True, cwd=REPO_ROOT, timeout=900)
    assert p.returncode == 0, p.stderr[-3000:]
    log = p.stdout + p.stderr
    for source in sorted(os.listdir(os.path.join(REPO_ROOT, "cpp"))):
        if source.endswith(".c"):
            compiles = re.findall(rf"gcc [^\n]* -c cpp/{re.escape(source)} ", log)
            assert len(compiles) == 1, (source, len(compiles))
    warnings = [ln for ln in log.splitlines() if "warning:" in ln]
    assert warnings == []
    assert len(list((build / "lib").rglob("*.so"))) == len(
        [n for n in os.listdir(os.path.join(REPO_ROOT, "arrowipc", "_core")) if n.endswith(".pyx")])
