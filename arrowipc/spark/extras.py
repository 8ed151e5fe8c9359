"""The `spark` extra (pyspark and pyarrow): one-line errors that say how to install what is missing.

`import arrowipc.spark` needs pyspark; reading and writing through Spark also need pyarrow, in the
driver and in every Python worker (Spark hands Python data sources pyarrow batches). When either is
missing the error is one line naming `pip install "arrowipc[spark]"`, not a traceback from inside
PySpark or a Java stack trace.
"""
from __future__ import annotations

import importlib
from typing import Any

__all__ = ["INSTALL_HINT", "MissingSparkExtra", "check_workers", "require"]

INSTALL_HINT = 'pip install "arrowipc[spark]"'
_WHY = {"pyspark": "pyspark (>= 4.0)", "pyarrow": "pyarrow (Spark's Python data sources use it)"}


class MissingSparkExtra(ModuleNotFoundError):
    """A dependency of arrowipc's Spark support is not installed; the message says how to fix it."""


def require(*modules: str) -> None:
    """Import each of `modules` (top-level names) or raise MissingSparkExtra naming the fix."""
    for name in modules:
        try:
            importlib.import_module(name)
        except ImportError:
            raise MissingSparkExtra(
                f"arrowipc's Spark support needs {_WHY.get(name, name)}, which is not installed "
                f"here: {INSTALL_HINT}", name=name) from None


def check_workers(spark: Any) -> list[str]:
    """Where Spark's Python workers import arrowipc from (sorted, one entry per distinct place),
    after checking that they can import arrowipc and pyarrow; MissingSparkExtra, with one line
    naming the fix, when one cannot. Runs a tiny job over every default task slot."""

    def probe(_: int) -> tuple[str, str | None]:
        # a closure, so Spark ships it by value: unpickling must not need arrowipc on the worker
        import os as _os
        import sys as _sys
        try:
            import arrowipc as _arrowipc
        except ImportError:
            return "", f"cannot import arrowipc (worker Python {_sys.executable})"
        where = _os.path.dirname(_os.path.abspath(_arrowipc.__file__))
        try:
            import pyarrow  # noqa: F401
        except ImportError:
            return where, f"cannot import pyarrow (worker Python {_sys.executable})"
        return where, None

    n = max(2, spark.sparkContext.defaultParallelism)
    results = spark.sparkContext.parallelize(range(n), n).map(probe).collect()
    problem = next((p for _, p in results if p), None)
    if problem:
        raise MissingSparkExtra(f"a Spark Python worker {problem}: install arrowipc with its "
                                f"extra in the workers' environment ({INSTALL_HINT})")
    return sorted({where for where, _ in results})
