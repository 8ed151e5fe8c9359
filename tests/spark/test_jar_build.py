"""The jar in every wheel: the build backend (java/build_backend.py) asks for pyspark exactly when
a JDK 17 or newer can compile the JVM source, so an isolated build (pip install ., python -m
build) has pyspark's jars to compile against. ci/spark_wheel.sh builds such a wheel from a clean
copy and checks that it carries the jar and that Spark runs it."""
import os
import subprocess
import sys

import pytest

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def requires(tmp_path, javac_version=None, **env):
    """What the backend asks for when building a wheel, with PATH holding only a fake javac that
    prints `javac_version` (none at all when None) and JAVA_HOME unset."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    if javac_version is not None:
        fake = bin_dir / "javac"
        fake.write_text(f"#!/bin/sh\necho 'javac {javac_version}'\n")
        fake.chmod(0o755)
    environ = {k: v for k, v in os.environ.items() if k not in ("JAVA_HOME", "ARROWIPC_BUILD_JAR")}
    environ.update(PATH=str(bin_dir), **env)
    # run where the backend runs (the source tree: setuptools reads setup.py there), with java/
    # on sys.path as backend-path puts it
    code = ("import sys; sys.path.insert(0, 'java'); import build_backend; "
            "w = build_backend.get_requires_for_build_wheel(); "
            "e = build_backend.get_requires_for_build_editable(); print('requires:', w, e)")
    done = subprocess.run([sys.executable, "-c", code], cwd=REPO_ROOT, env=environ,
                          capture_output=True, text=True, check=True)
    line = [x for x in done.stdout.splitlines() if x.startswith("requires:")][0]
    wheel, editable = line[len("requires: "):].split("] [")
    assert wheel + "]" == "[" + editable
    return eval(wheel + "]"), done.stderr


def test_pyspark_is_asked_for_where_a_jdk_17_is(tmp_path):
    for version in ("17.0.15", "21.0.2", "25"):
        needed, _ = requires(tmp_path, version)
        assert [r for r in needed if r.startswith("pyspark")] == ["pyspark>=4.0,<5"]


@pytest.mark.parametrize("javac_version, env, why", [
    (None, {}, "no JDK (javac)"),
    ("11.0.22", {}, "is not Java 17 or newer"),
    ("1.8.0_392", {}, "is not Java 17 or newer"),
    ("17.0.15", {"ARROWIPC_BUILD_JAR": "0"}, "ARROWIPC_BUILD_JAR=0"),
])
def test_no_pyspark_and_a_reason_where_no_jar_is_built(tmp_path, javac_version, env, why):
    needed, stderr = requires(tmp_path, javac_version, **env)
    assert not any(r.startswith("pyspark") for r in needed)
    assert "the wheel will not carry the Spark JVM data source's jar" in stderr and why in stderr


def test_the_backend_is_the_one_pyproject_names():
    import tomllib
    with open(os.path.join(REPO_ROOT, "pyproject.toml"), "rb") as f:
        system = tomllib.load(f)["build-system"]
    assert system["build-backend"] == "build_backend" and system["backend-path"] == ["java"]
    with open(os.path.join(REPO_ROOT, "MANIFEST.in")) as f:   # the sdist carries the backend
        assert "recursive-include java *.java *.py" in f.read()
