"""arrowipc for PySpark: the "arrowipc" data source (read and write Arrow IPC files and streams).

    from arrowipc.spark import register
    register(spark)                                   # or rely on the pyspark_arrowipc module
    df = spark.read.format("arrowipc").load("data/")

Needs pyspark >= 4.0 and pyarrow (Spark hands Python data sources pyarrow batches). Importing
`arrowipc` never imports this package, nor pyarrow.
"""
from .extras import require as _require

_require("pyspark")     # one line naming the extra to install, not an ImportError from deep inside

from .datasource import (ArrowIpcCommitMessage, ArrowIpcDataSource, ArrowIpcPartition,  # noqa: E402
                         ArrowIpcReader, ArrowIpcWriter)
from .session import local_session, register  # noqa: E402

__all__ = ["ArrowIpcCommitMessage", "ArrowIpcDataSource", "ArrowIpcPartition", "ArrowIpcReader",
           "ArrowIpcWriter", "local_session", "register"]
