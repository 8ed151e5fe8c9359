"""What the accelerator did: each served call and each fall-back to pyarrow, with its reason.

Counting is per entry-point call (opening a reader, a writer, reading a Feather file), not per
batch. A call that falls back is handed to pyarrow's original, which runs untouched: the classes
pyarrow's own functions construct are patched too, so `passthrough()` marks the fall-back while it
runs and the patched classes then build pyarrow's own objects without counting again.
"""
from __future__ import annotations

import collections
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TextIO

__all__ = ["REPORT_ENV", "Record", "RECORD", "passthrough", "in_passthrough"]

REPORT_ENV = "ARROWIPC_ACCELERATE_REPORT"


class Record:
    """Counters of served calls and fall-backs, by entry point (and reason)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.served: collections.Counter[str] = collections.Counter()
        self.fell_back: collections.Counter[tuple[str, str]] = collections.Counter()

    def serve(self, entry: str) -> None:
        with self._lock:
            self.served[entry] += 1

    def fall_back(self, entry: str, reason: str) -> None:
        with self._lock:
            self.fell_back[(entry, reason)] += 1

    def reset(self) -> None:
        with self._lock:
            self.served.clear()
            self.fell_back.clear()

    @property
    def served_count(self) -> int:
        return sum(self.served.values())

    @property
    def fell_back_count(self) -> int:
        return sum(self.fell_back.values())

    def summary_line(self) -> str:
        return (f"arrowipc.accelerate: served {self.served_count} calls, "
                f"{self.fell_back_count} fell back to pyarrow")

    def text(self) -> str:
        """The report: served calls by entry point, fall-backs by entry point and reason, then
        the summary line."""
        lines = []
        for entry, n in sorted(self.served.items()):
            lines.append(f"arrowipc.accelerate: served   {n:6d}  {entry}")
        for (entry, reason), n in sorted(self.fell_back.items()):
            lines.append(f"arrowipc.accelerate: fallback {n:6d}  {entry}: {reason}")
        lines.append(self.summary_line())
        return "\n".join(lines) + "\n"

    def print(self, file: TextIO | None = None) -> None:
        (file or sys.stderr).write(self.text())


RECORD = Record()
_local = threading.local()


@contextmanager
def passthrough() -> Iterator[None]:
    """While this runs, the patched classes behave exactly as pyarrow's (a fall-back is running)."""
    _local.depth = getattr(_local, "depth", 0) + 1
    try:
        yield
    finally:
        _local.depth -= 1


def in_passthrough() -> bool:
    return bool(getattr(_local, "depth", 0))
