"""Helpers both directions of the pandas conversion use: pandas and numpy loaded on first use,
the storage type under extension types, time zones, NaT and the threads conversions run on."""
from __future__ import annotations

import re as _re

from ..types import DataType, ExtensionType

TYPE_CHECKING = False               # typing itself is not imported at run time
if TYPE_CHECKING:
    from typing import Any


_NAT = -(1 << 63)


_GENERATED_INDEX = _re.compile(r"^__index_level_\d+__$")


def _pandas() -> Any:
    import pandas
    return pandas


def _numpy() -> Any:
    import numpy
    return numpy


def _storage(t: DataType) -> DataType:
    while isinstance(t, ExtensionType):
        t = t.storage
    return t


def _tzinfo(tz: str) -> Any:
    from ..data.to_python import timezone_from_string
    return timezone_from_string(tz)


def _run(tasks: Any, use_threads: bool) -> Any:
    """Run the callables, on threads when asked and worthwhile (the kernels release the GIL)."""
    if not use_threads or len(tasks) < 2:
        return [t() for t in tasks]
    import os
    from concurrent.futures import ThreadPoolExecutor
    workers = min(len(tasks), os.cpu_count() or 1)
    if workers < 2:
        return [t() for t in tasks]
    with ThreadPoolExecutor(workers) as pool:
        return list(pool.map(lambda t: t(), tasks))
