"""The README's set-up: what `ci/test.sh` runs, the editable install, and a build that compiles
the C kernels once and warns about nothing."""
import os
import pathlib
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
    # one extension per .pyx file of the package (_core, ipc, dissociated)
    pyx = sorted(p.relative_to(REPO_ROOT).with_suffix("").as_posix()
                 for p in pathlib.Path(REPO_ROOT, "arrowipc").rglob("*.pyx"))
    built = sorted(p.relative_to(build / "lib").as_posix().split(".")[0]
                   for p in (build / "lib").rglob("*.so"))
    assert built == pyx


TIME_CALL = r"(?:time\.)?(?:perf_counter|monotonic|time)(?:_ns)?\(\)"


def timed_assertions(source: str) -> list:
    """Lines of `source` that assert on a duration: a time call, or a name assigned from one."""
    names = set(re.findall(rf"^\s*(\w+)\s*=\s*{TIME_CALL}", source, re.M))
    found = []
    for number, line in enumerate(source.splitlines(), 1):
        if not line.lstrip().startswith("assert "):
            continue
        if re.search(TIME_CALL, line) or any(re.search(rf"\b{n}\b", line) for n in names) or \
                re.search(r"\b(elapsed|seconds|took|duration)\b\s*[<>]", line):
            found.append(f"{number}: {line.strip()}")
    return found


def test_no_test_asserts_a_time():
    """A test that fails because the machine is busy is a defect: speed belongs in bench/."""
    offenders = {}
    for folder, _, names in os.walk(os.path.join(REPO_ROOT, "tests")):
        for name in names:
            if name.endswith(".py"):
                path = os.path.join(folder, name)
                lines = timed_assertions(open(path, encoding="utf-8").read())
                if lines:
                    offenders[os.path.relpath(path, REPO_ROOT)] = lines
    assert offenders == {}


def test_the_timed_assertion_finder_finds_them():
    # the samples are split so that this file does not trip the finder itself
    perf, mono = "perf_" "counter()", "mono" "tonic()"
    assert timed_assertions(f"t0 = time.{perf}\nrun()\nassert time.{perf} - t0 < 5\n")
    assert timed_assertions(f"start = {mono}\nassert {mono} - start < 1.0\n")
    assert timed_assertions("assert " "elapsed" " < 5, 'slow'\n")
    assert not timed_assertions(f"deadline = time.{mono} + 5\nassert peak < 64 << 20\n")


def test_readme_exit_codes_are_the_clis():
    from arrowipc import cli
    readme = open(os.path.join(REPO_ROOT, "README.md")).read()
    text = readme.split("Exit status: ", 1)[1].split(";", 1)[0]
    stated = {int(n) for n in re.findall(r"\b(\d+) [A-Za-z]", text)}
    codes = {v for k, v in vars(cli).items() if k.startswith("EXIT_")}
    assert stated == codes == {0, 1, 2, 3, 4, 5, 130}


def test_readme_links_the_protocol_and_installs_from_a_checkout():
    readme = open(os.path.join(REPO_ROOT, "README.md")).read()
    assert "## Dissociated IPC" in readme and "(docs/PROTOCOL.md)" in readme
    assert os.path.exists(os.path.join(REPO_ROOT, "docs", "PROTOCOL.md"))
    install = readme.split("## Install", 1)[1].split("\n## ", 1)[0]
    assert "not on PyPI yet" in install
    commands = install.split("```bash", 1)[1].split("```", 1)[0]
    assert not re.search(r"pip install \"?arrowipc\b", commands)   # the registry name: not yet
    assert "Once it is published, `pip install arrowipc`" in install
