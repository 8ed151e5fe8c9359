"""Datasets: many IPC files and partitions, read and written, as `pyarrow.dataset` does.

`layout` holds the on-disk rules (Spark/Hive names and escapes) as pure functions.
"""
from __future__ import annotations
