"""Without the `spark` extra: one line naming `pip install "arrowipc[spark]"`, never a traceback
from inside PySpark or a Java stack trace (arrowipc.spark.extras).

A missing package is simulated by a folder on PYTHONPATH whose `pyspark` or `pyarrow` package
raises ModuleNotFoundError on import; for Spark's Python workers alone, by a PYSPARK_PYTHON that
puts that folder on their path while the driver keeps its pyarrow.
"""
import os
import subprocess
import sys

import pytest

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
HINT = 'pip install "arrowipc[spark]"'


def blocker(tmp_path, name):
    folder = tmp_path / f"without-{name}"
    (folder / name).mkdir(parents=True)
    (folder / name / "__init__.py").write_text(
        f"raise ModuleNotFoundError(\"No module named '{name}'\", name={name!r})\n")
    return str(folder)


def run(args, *, blocked=None, env_extra=None, timeout=300):
    env = {k: v for k, v in os.environ.items() if k not in ("PYSPARK_PYTHON", "PYSPARK_DRIVER_PYTHON")}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [blocked, REPO_ROOT]))
    env.update(env_extra or {})
    return subprocess.run([sys.executable, *args], capture_output=True, text=True, env=env,
                          timeout=timeout, cwd=REPO_ROOT)


def test_import_arrowipc_spark_without_pyspark(tmp_path):
    p = run(["-c", "import arrowipc.spark"], blocked=blocker(tmp_path, "pyspark"))
    assert p.returncode == 1
    last = p.stderr.strip().splitlines()[-1]
    assert last == ("arrowipc.spark.extras.MissingSparkExtra: arrowipc's Spark support needs "
                    f"pyspark (>= 4.0), which is not installed here: {HINT}")


def test_import_arrowipc_without_pyspark_is_unaffected(tmp_path):
    p = run(["-c", "import arrowipc, arrowipc.ipc; print('ok')"], blocked=blocker(tmp_path, "pyspark"))
    assert p.returncode == 0 and p.stdout == "ok\n", p.stderr


@pytest.mark.parametrize("missing,what", [("pyspark", "pyspark (>= 4.0)"),
                                          ("pyarrow", "pyarrow (Spark's Python data sources use it)")])
def test_etl_without_the_extra_is_one_line(tmp_path, missing, what):
    p = run(["-m", "arrowipc.examples.etl", "--rows", "100"], blocked=blocker(tmp_path, missing))
    assert p.returncode == 2
    assert p.stderr == (f"arrowipc-etl: arrowipc's Spark support needs {what}, which is not "
                        f"installed here: {HINT}\n")


def test_local_session_without_pyarrow(tmp_path):
    p = run(["-c", "from arrowipc.spark import local_session; local_session()"],
            blocked=blocker(tmp_path, "pyarrow"))
    assert p.returncode == 1
    assert p.stderr.strip().splitlines()[-1].endswith(f"which is not installed here: {HINT}")
    assert "py4j" not in p.stderr and "java" not in p.stderr.lower()


@pytest.mark.spark
def test_etl_with_workers_lacking_pyarrow_is_one_line(tmp_path):
    folder = blocker(tmp_path, "pyarrow")
    worker_python = tmp_path / "python-without-pyarrow"
    worker_python.write_text(f"#!/bin/sh\nPYTHONPATH={folder}${{PYTHONPATH:+:$PYTHONPATH}} "
                             f"exec {sys.executable} \"$@\"\n")
    worker_python.chmod(0o755)
    p = run(["-m", "arrowipc.examples.etl", "--rows", "1000", "--files", "1"],
            env_extra={"PYSPARK_PYTHON": str(worker_python)})
    assert p.returncode == 3, p.stderr[-3000:]
    ours = [ln for ln in p.stderr.splitlines() if ln.startswith("arrowipc-etl:")]
    assert ours == [f"arrowipc-etl: a Spark Python worker cannot import pyarrow (worker Python "
                    f"{sys.executable}): install arrowipc with its extra in the workers' "
                    f"environment ({HINT})"]
    assert "Traceback" not in p.stderr and "at org.apache" not in p.stderr
