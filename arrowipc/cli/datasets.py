"""Directories and globs as inputs of `arrowipc inspect`, `validate`, `head` and `convert`.

Each command's module reads the dataset with these helpers (this module imports none of them).

A directory is read as a dataset (arrowipc.dataset: walked recursively, Spark and Hive side files
skipped, `col=value` directories as partition columns); a glob names the files it matches.
`inspect` and `validate` report each file and then the total, `head` reads rows across the
files in order, and `convert` merges them into one file or stream.
"""
from __future__ import annotations

import glob
import os
from typing import Any

__all__ = ["dataset_files", "is_dataset_name", "open_dataset"]


def is_dataset_name(name: str) -> bool:
    """Whether a command-line input names a dataset: a directory, or a glob that is not the
    name of an existing file."""
    if name == "-" or os.path.isfile(name):
        return False
    return os.path.isdir(name) or any(c in name for c in "*?[")


def dataset_files(name: str) -> list[str] | None:
    """The files of the dataset `name` names (None when it names one file or stdin)."""
    if not is_dataset_name(name):
        return None
    from ..dataset.discovery import discover
    if not os.path.isdir(name) and not glob.glob(name):
        raise FileNotFoundError(2, "No such file or directory (the glob matches nothing)", name)
    _, found = discover(name)
    if not found:
        if os.path.isdir(name):
            raise IsADirectoryError(21, "Is a directory, and holds no data files (names "
                                        "starting with '.' or '_', and Spark's side files, are "
                                        "skipped)", name)
        raise FileNotFoundError(2, "No such file or directory (the glob matches no data file)",
                                name)
    return [f.path for f in found]


def open_dataset(name: str) -> Any:
    """The arrowipc.dataset of a directory (hive partitions as columns) or a glob."""
    from .. import dataset as ds
    return ds.dataset(name, partitioning="hive" if os.path.isdir(name) else None)
