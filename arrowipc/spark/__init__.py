"""arrowipc for PySpark: the "arrowipc" data source (read and write Arrow IPC files and streams).

    from arrowipc.spark import register
    register(spark)                                   # or rely on the pyspark_arrowipc module
    df = spark.read.format("arrowipc").load("data/")

With the JVM data source's jar on Spark's classpath (jar_path(); local_session() adds it),
"arrowipc" is served by the JVM (see README); this Python source is the fallback.

Needs pyspark >= 4.0 and pyarrow (Spark hands Python data sources pyarrow batches). Importing
`arrowipc` never imports this package, nor pyarrow.
"""
from .extras import require as _require

_require("pyspark")     # one line naming the extra to install, not an ImportError from deep inside

from .datasource import (ArrowIpcCommitMessage, ArrowIpcDataSource,  # noqa: E402
                         ArrowIpcFilteringReader, ArrowIpcPartition, ArrowIpcReader,
                         ArrowIpcWriter)
from .session import jar_path, local_session, register, source_in_use  # noqa: E402

__all__ = ["ArrowIpcCommitMessage", "ArrowIpcDataSource", "ArrowIpcFilteringReader",
           "ArrowIpcPartition", "ArrowIpcReader", "ArrowIpcWriter", "jar_path", "local_session",
           "register", "source_in_use"]
