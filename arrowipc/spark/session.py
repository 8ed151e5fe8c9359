"""Building a SparkSession with the arrowipc data source registered."""
from __future__ import annotations

import os
import sys
from typing import Any

from .jar import jar_path, warn_python_source

__all__ = ["jar_path", "local_session", "register", "SESSION_CATALOG", "source_in_use",
           "warn_python_source"]

# The JVM source's session catalog: Spark then loads arrowipc catalog tables as file source
# tables (docs/spark.md, "Partitioned tables and SQL")
SESSION_CATALOG = "io.arrowipc.spark.ArrowIpcSessionCatalog"


def register(spark: Any) -> None:
    """Register the Python data source with `spark` as "arrowipc" and as "arrowipc_python"
    (harmless if already registered; "arrowipc" resolves to the JVM source where its jar is on
    the classpath, "arrowipc_python" always to the Python one)."""
    from .datasource import ArrowIpcDataSource, ArrowIpcPythonDataSource
    spark.dataSource.register(ArrowIpcDataSource)
    spark.dataSource.register(ArrowIpcPythonDataSource)


def source_in_use(spark: Any) -> str:
    """Which implementation `format("arrowipc")` resolves to in `spark`: "jvm" when the JVM
    data source's classes are on the driver's classpath, else "python"."""
    try:
        jvm = spark.sparkContext._jvm
        loader = jvm.java.lang.Thread.currentThread().getContextClassLoader()
        jvm.java.lang.Class.forName("io.arrowipc.spark.ArrowIpcDataSource", False, loader)
        return "jvm"
    except Exception:       # py4j reports the missing class as a Py4JJavaError
        return "python"


def local_session(master: str = "local[2]", app_name: str = "arrowipc",
                  conf: dict[str, str] | None = None, log_level: str = "ERROR") -> Any:
    """A SparkSession for `master` (embedded local Spark by default) with arrowipc registered.

    Python workers run the interpreter that runs this code unless PYSPARK_PYTHON says otherwise
    (as it does when a packed environment is shipped with spark.archives). Timestamps are
    handled in UTC and shuffles use few partitions, which suits a 2-core local run. The JVM data
    source's jar goes on the classpath when the package has one (unless `conf` sets spark.jars),
    with its session catalog (spark.sql.catalog.spark_catalog, unless `conf` sets one), which
    lets CREATE TABLE ... USING arrowipc tables be read and written as Spark's file source tables.
    """
    from .extras import require
    require("pyspark", "pyarrow")
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    if master.startswith("local"):
        os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
        # everything runs on this machine: no need to look for a routable address
        os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    if master == "local" or master.startswith("local["):
        # In-process local workers inherit this environment: let them import the very arrowipc
        # running here, also from a checkout that is not installed (an absolute path: their cwd
        # differs). Not for local-cluster, whose executors import the shipped environment.
        here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
        parent = os.path.dirname(here)
        paths = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
        if parent not in paths:
            os.environ["PYTHONPATH"] = os.pathsep.join([parent] + paths)
    from pyspark.sql import SparkSession
    builder = (SparkSession.builder.master(master).appName(app_name)
               .config("spark.sql.session.timeZone", "UTC")
               .config("spark.sql.shuffle.partitions", "4")
               .config("spark.ui.enabled", "false")
               .config("spark.ui.showConsoleProgress", "false"))
    jar = jar_path()
    if jar and "spark.jars" not in (conf or {}):
        builder = builder.config("spark.jars", jar)
        if "spark.sql.catalog.spark_catalog" not in (conf or {}):
            builder = builder.config("spark.sql.catalog.spark_catalog", SESSION_CATALOG)
    for key, value in (conf or {}).items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel(log_level)
    register(spark)
    if source_in_use(spark) == "python":
        warn_python_source()
    return spark
