"""Registers the Python data source as "arrowipc_python" with every SparkSession automatically.

Spark imports each top-level module named pyspark_<name> it finds and registers its
DefaultSource; beside pyspark_arrowipc ("arrowipc", which the JVM source's jar takes over when it is
on the classpath), this name always reaches the Python source.
"""
from arrowipc.spark.datasource import ArrowIpcPythonDataSource as DefaultSource

__all__ = ["DefaultSource"]
