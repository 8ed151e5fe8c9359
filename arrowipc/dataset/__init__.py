"""Datasets: many IPC files and partitions, read and written, as `pyarrow.dataset` does.

    dataset(source, ...)        files, directories, globs, URLs -> FileSystemDataset
    FileSystemDatasetFactory    the same discovery, inspected (schema) before it is finished
    write_dataset(data, dir)    partitioned IPC files, with statistics, committed by rename
    partitioning(...)           DirectoryPartitioning, HivePartitioning, FilenamePartitioning
    get_partition_keys(expr)    {name: value} of a fragment's partition expression
    field, scalar               expressions for filter= and columns=

Reads prune in four stages (partition values, footer statistics, batch statistics, rows) and
decode files in parallel (docs/datasets.md). `layout` holds the on-disk naming rules that the
Spark sources share.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .datasets import (Dataset, DatasetFactory, FileSystemDataset, FileSystemDatasetFactory,
                       FileSystemFactoryOptions, InMemoryDataset, UnionDataset, dataset)
from .formats import (FeatherFileFormat, FileFormat, FileWriteOptions, FragmentScanOptions,
                      IpcFileFormat, IpcFileWriteOptions, IpcStreamFormat)
from .fragments import FileFragment, Fragment
from .partitioning import (DirectoryPartitioning, FilenamePartitioning, HivePartitioning,
                           Partitioning, PartitioningFactory, get_partition_keys, partitioning)
from .scanner import Scanner, TaggedRecordBatch
from .writer import WrittenFile, write_dataset

if TYPE_CHECKING:
    from ..expression import Expression, field, scalar

__all__ = [
    "Dataset", "DatasetFactory", "DirectoryPartitioning", "Expression", "FeatherFileFormat",
    "FileFormat", "FileFragment", "FileSystemDataset", "FileSystemDatasetFactory",
    "FileSystemFactoryOptions", "FileWriteOptions", "FilenamePartitioning", "Fragment",
    "FragmentScanOptions", "HivePartitioning",
    "InMemoryDataset", "IpcFileFormat", "IpcFileWriteOptions", "IpcStreamFormat", "Partitioning",
    "PartitioningFactory", "Scanner", "TaggedRecordBatch", "UnionDataset", "WrittenFile",
    "dataset", "field", "get_partition_keys", "partitioning", "scalar", "write_dataset",
]


_get_partition_keys = get_partition_keys     # pyarrow keeps the old name too


def __getattr__(name: str) -> Any:
    # the expression names come from arrowipc.expression, loaded on first use
    if name in ("Expression", "field", "scalar"):
        from .. import expression
        return getattr(expression, name)
    raise AttributeError(f"module 'arrowipc.dataset' has no attribute {name!r}")
