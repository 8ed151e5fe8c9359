"""One local SparkSession (local[2]) shared by every Spark test of the run.

The session does not register the data source itself: "arrowipc" must be found through the
top-level pyspark_arrowipc module, as it is for users. Python workers run this interpreter and
import this checkout (PYTHONPATH gets the repository root before the JVM starts).

Without pyspark or Java the Spark tests are skipped on a developer machine, but fail under CI
(CI=true), where ci/requirements-dev.txt installs pyspark: a CI run must not pass by skipping.
"""
import importlib.util
import os
import shutil
import sys

import pytest

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MISSING = []
if importlib.util.find_spec("pyspark") is None:
    MISSING.append("pyspark is not installed")
if importlib.util.find_spec("pyarrow") is None:
    MISSING.append("pyarrow is not installed")
if shutil.which("java") is None and not os.environ.get("JAVA_HOME"):
    MISSING.append("no Java runtime (java on PATH or JAVA_HOME)")

if MISSING and os.environ.get("CI"):
    raise RuntimeError("the Spark tests cannot run under CI: " + "; ".join(MISSING))
if MISSING:
    collect_ignore_glob = ["test_*.py"]

# The JVM data source: built from java/ when a JDK is here (else its tests skip, saying why, and
# "arrowipc" is the Python source).
JAR = None
if not MISSING:
    sys.path.insert(0, os.path.join(REPO_ROOT, "java"))
    try:
        import build_jar
        JAR = build_jar.build(quiet=True)
    finally:
        sys.path.pop(0)
if JAR is None and os.environ.get("CI") and shutil.which("javac"):
    raise RuntimeError("the Spark JVM data source jar did not build under CI")


@pytest.fixture(scope="session")
def spark():
    os.environ["PYSPARK_PYTHON"] = sys.executable
    os.environ["PYSPARK_DRIVER_PYTHON"] = sys.executable
    paths = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    os.environ["PYTHONPATH"] = os.pathsep.join([REPO_ROOT] + paths)
    from pyspark.sql import SparkSession
    builder = SparkSession.builder
    if JAR:
        builder = builder.config("spark.jars", JAR)
    session = (builder.master("local[2]").appName("arrowipc-tests")
               .config("spark.sql.session.timeZone", "UTC")
               .config("spark.sql.shuffle.partitions", "2")
               .config("spark.ui.enabled", "false")
               .config("spark.ui.showConsoleProgress", "false")
               .getOrCreate())
    session.sparkContext.setLogLevel("FATAL")
    # The Python source is reachable as "arrowipc_python" beside the JVM's "arrowipc" (registered
    # by the pyspark_arrowipc_python module; register() makes sure of it here).
    from arrowipc.spark.session import register
    register(session)
    yield session
    session.stop()


@pytest.fixture
def jvm(spark):
    """The JVM side of the session, with the JVM source's counters reset; skips without the jar."""
    if not JAR:
        pytest.skip("the Spark JVM data source jar is not built (no JDK): only the Python source runs")
    stats = spark._jvm.io.arrowipc.spark.ReadStats
    stats.reset()
    return stats
