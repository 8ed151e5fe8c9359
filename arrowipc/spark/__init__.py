"""arrowipc for PySpark: the "arrowipc" data source (read and write Arrow IPC files and streams).

    from arrowipc.spark import register
    register(spark)                                   # or rely on the pyspark_arrowipc module
    df = spark.read.format("arrowipc").load("data/")

Needs pyspark >= 4.0 and pyarrow (Spark hands Python data sources pyarrow batches). Importing
`arrowipc` never imports this package, nor pyarrow.
"""
from .datasource import (ArrowIpcCommitMessage, ArrowIpcDataSource, ArrowIpcPartition,
                         ArrowIpcReader, ArrowIpcWriter)
from .session import local_session, register

__all__ = ["ArrowIpcCommitMessage", "ArrowIpcDataSource", "ArrowIpcPartition", "ArrowIpcReader",
           "ArrowIpcWriter", "local_session", "register"]
