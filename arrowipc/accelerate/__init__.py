"""Unchanged pyarrow code, served by arrowipc: `python -m arrowipc.accelerate script.py`.

`install()` replaces pyarrow's public IPC entry points with arrowipc's, which hand back pyarrow's
own objects (tables, batches, readers and writers that pass pyarrow's `isinstance` checks), made
zero-copy through the C data interface, so every later pyarrow call works unchanged:

- `pyarrow.ipc`: `open_stream`, `open_file`, `new_stream`, `new_file`, the four reader and writer
  classes (also under their `pyarrow.*` names), `read_schema`, `read_record_batch`,
  `serialize_pandas`, `deserialize_pandas`;
- `pyarrow.feather`: `read_table`, `read_feather`, `write_feather` (so `pandas.read_feather` and
  `DataFrame.to_feather`).

`pyarrow.ipc.IpcWriteOptions` becomes a subclass that remembers the `pyarrow.Codec` given, so its
compression level reaches arrowipc. Feather V1 files are read and written by arrowipc.feather.
A call arrowipc cannot serve (a memory pool or an option pyarrow must apply itself, a closed
NativeFile, an argument pyarrow would refuse) runs pyarrow's original untouched; malformed input opened from
a source pyarrow can read again is answered by pyarrow too, so its exceptions are raised; but a
malformed Feather V1 file is arrowipc's error in pyarrow's class (pyarrow's V1 reader follows
such a file's offsets unchecked and crashes the process on some).
`uninstall()` puts every original back. With ARROWIPC_ACCELERATE_REPORT=1 in the environment the
report of what was served and what fell back (and why) is printed on standard error at exit,
ending with `arrowipc.accelerate: served N calls, M fell back to pyarrow`.

This package is the only part of arrowipc that imports pyarrow at module level: it exists to hand
pyarrow objects back. `pyarrow.dataset.dataset` and `write_dataset` on the IPC and Feather formats
are served through `DATASET_HOOK` (datasets.py): the dataset is pyarrow's own `FileSystemDataset`
class, subclassed so that its scans are answered by arrowipc.dataset.
"""
from __future__ import annotations

import atexit
import importlib
import os
import threading
from collections.abc import Callable
from typing import Any

from .record import RECORD, REPORT_ENV

__all__ = ["install", "uninstall", "installed", "report", "reset_report", "served_names",
           "REPORT_ENV", "DATASET_HOOK"]

# module -> names patched there. pyarrow's top-level module re-binds some of pyarrow.ipc's names
# (`pa.RecordBatchStreamReader`, `pa.serialize_pandas`...), so they are patched there too.
IPC_NAMES = ("open_stream", "open_file", "new_stream", "new_file", "RecordBatchStreamReader",
             "RecordBatchFileReader", "RecordBatchStreamWriter", "RecordBatchFileWriter",
             "read_schema", "read_record_batch", "serialize_pandas", "deserialize_pandas",
             "IpcWriteOptions")
TOP_LEVEL_NAMES = ("RecordBatchStreamReader", "RecordBatchFileReader", "RecordBatchStreamWriter",
                   "RecordBatchFileWriter", "serialize_pandas", "deserialize_pandas")
FEATHER_NAMES = ("read_table", "read_feather", "write_feather")



def _dataset_patches(originals: dict[str, Any]) -> dict[str, Any]:
    """The served `pyarrow.dataset.dataset` and `write_dataset` (IPC and Feather formats), by
    name, over pyarrow's originals given by name."""
    from .datasets import build_dataset_patches
    return build_dataset_patches(originals)


# Where pyarrow.dataset's IPC/Feather formats are served: a callable taking {name: pyarrow's
# original} of the module "pyarrow.dataset" and returning {name: replacement} (None: not served).
DATASET_HOOK: Callable[[dict[str, Any]], dict[str, Any]] | None = _dataset_patches
DATASET_NAMES: tuple[str, ...] = ("dataset", "write_dataset")

_lock = threading.Lock()
# (module, name) -> the original object, while installed
_originals: dict[tuple[str, str], Any] = {}
_report_registered = False


def installed() -> bool:
    """Whether the accelerator is installed."""
    return bool(_originals)


def served_names() -> list[str]:
    """The attributes the accelerator replaces, as "module.name"."""
    names = [f"pyarrow.ipc.{n}" for n in IPC_NAMES] + [f"pyarrow.{n}" for n in TOP_LEVEL_NAMES]
    names += [f"pyarrow.feather.{n}" for n in FEATHER_NAMES]
    if DATASET_HOOK is not None:
        names += [f"pyarrow.dataset.{n}" for n in DATASET_NAMES]
    return names


def install(report: bool | None = None) -> None:
    """Serve pyarrow's IPC, Feather and IPC/Feather dataset entry points from arrowipc
    (idempotent). `report=True` prints the report at exit (default: when
    ARROWIPC_ACCELERATE_REPORT is set to a value other than "" or "0")."""
    global _report_registered
    with _lock:
        if _originals:
            return
        from . import served
        pa = importlib.import_module("pyarrow")
        pa_ipc = importlib.import_module("pyarrow.ipc")
        feather = importlib.import_module("pyarrow.feather")
        ipc_originals = {n: getattr(pa_ipc, n) for n in IPC_NAMES}
        feather_originals = {n: getattr(feather, n) for n in FEATHER_NAMES}
        ipc_patches = served.build_ipc_patches(ipc_originals)
        plan: list[tuple[Any, str, Any]] = [(pa_ipc, n, ipc_patches[n]) for n in IPC_NAMES]
        # the top-level names are the very objects of pyarrow.ipc; patched only where they are
        plan += [(pa, n, ipc_patches[n]) for n in TOP_LEVEL_NAMES
                 if getattr(pa, n, None) is ipc_originals[n]]
        feather_patches = served.build_feather_patches(feather_originals)
        plan += [(feather, n, feather_patches[n]) for n in FEATHER_NAMES]
        if DATASET_HOOK is not None:
            dataset = importlib.import_module("pyarrow.dataset")
            dataset_patches = DATASET_HOOK({n: getattr(dataset, n) for n in DATASET_NAMES})
            plan += [(dataset, n, dataset_patches[n]) for n in DATASET_NAMES]
        for module, name, replacement in plan:
            _originals[(module.__name__, name)] = getattr(module, name)
            setattr(module, name, replacement)
    wanted = report if report is not None else os.environ.get(REPORT_ENV, "") not in ("", "0")
    if wanted and not _report_registered:
        _report_registered = True
        atexit.register(RECORD.print)


def uninstall() -> None:
    """Put back every attribute install() replaced, the very objects pyarrow had."""
    with _lock:
        for (module_name, name), original in _originals.items():
            setattr(importlib.import_module(module_name), name, original)
        _originals.clear()


def report() -> str:
    """The report so far: served calls by entry point, fall-backs by entry point and reason, and
    the line `arrowipc.accelerate: served N calls, M fell back to pyarrow`."""
    return RECORD.text()


def reset_report() -> None:
    """Forget the calls counted so far."""
    RECORD.reset()
