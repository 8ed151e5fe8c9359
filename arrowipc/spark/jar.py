"""The Spark JVM data source's jar that ships in the package, and the warning given when Spark
serves format("arrowipc") from the Python source because that jar is not on its classpath."""
from __future__ import annotations

import os
import warnings

__all__ = ["jar_path", "warn_python_source"]

_warned_python_source = False       # the warning is given once per process


def jar_path() -> str | None:
    """The JVM data source's jar shipped in this package (None when it was built without a JDK).

    With it on Spark's classpath (`spark-submit --jars <jar_path()>`, or spark.jars), "arrowipc"
    resolves to the JVM source (columnar reads, pruning, statistics); without it, to the Python
    data source.
    """
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "jars", "arrowipc-spark.jar")
    return path if os.path.exists(path) else None


def warn_python_source() -> None:
    """Warn (RuntimeWarning, once per process) that format("arrowipc") resolved to the Python data
    source because the JVM source's jar is not on Spark's classpath, and say how to put it there."""
    global _warned_python_source
    if _warned_python_source:
        return
    _warned_python_source = True
    jar = jar_path()
    if jar is None:
        how = ("this arrowipc was installed without the jar (built where no JDK 17 or newer "
               "was found): reinstall it where one is, e.g. pip install --force-reinstall "
               "--no-binary arrowipc arrowipc, then put arrowipc.spark.jar_path() on spark.jars")
    else:
        how = (f"put arrowipc.spark.jar_path() on Spark's classpath: spark.jars={jar} (spark-submit "
               f"--jars {jar}, or SparkSession.builder.config('spark.jars', jar_path()) before the "
               f"session starts; arrowipc.spark.local_session() does this)")
    warnings.warn(f"arrowipc: format('arrowipc') is served by the Python data source because the "
                  f"JVM data source is not on Spark's classpath; reads and writes are several "
                  f"times slower. To use the JVM source, {how}. format('arrowipc_python') names "
                  f"the Python source on purpose, without this warning.", RuntimeWarning,
                  stacklevel=3)
