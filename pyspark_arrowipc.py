"""Registers the "arrowipc" data source with every SparkSession automatically.

Spark imports each top-level module named pyspark_<name> it finds and registers its
DefaultSource. Importing this module loads pyspark's data source base classes, not pyarrow.
"""
from arrowipc.spark.datasource import ArrowIpcDataSource as DefaultSource

__all__ = ["DefaultSource"]
