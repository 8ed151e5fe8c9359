"""Scans of an InMemoryDataset: its batches filtered and projected, nothing to prune."""
from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from .. import types as T
from ..table import RecordBatch, Table
from . import _exprs
from .scanner import Scanner

__all__ = ["MemoryScanner"]


class MemoryScanner(Scanner):
    """A Scanner over batches in memory."""

    def __init__(self, schema: T.Schema, batches: Sequence[RecordBatch], columns: Any = None,
                 filter: Any = None, batch_size: int = 131072) -> None:
        super().__init__(schema, [], [], columns=columns, filter=filter, batch_size=batch_size,
                         use_threads=False)
        self._batches = list(batches)

    def to_batches(self) -> Iterator[RecordBatch]:
        spec = self._spec
        for batch in self._batches:
            if spec.filter is not None:
                batch = batch.filter(_exprs.row_mask(spec.filter, batch))
            cols = [batch.column(src) if isinstance(src, str) else _exprs.value_of(src, batch)
                    for _, src in spec.outputs]
            out = RecordBatch(spec.output_schema, [c.data for c in cols], batch.num_rows)
            for o in range(0, max(out.num_rows, 1), spec.batch_size):
                yield out.slice(o, spec.batch_size) if out.num_rows > spec.batch_size else out
                if out.num_rows <= spec.batch_size:
                    break

    def _tagged(self, use_threads: bool | None = None
                ) -> Iterator[tuple[RecordBatch, Any]]:
        # what head() and scan_batches() read: the batches in memory (no fragment to tag)
        for batch in self.to_batches():
            yield batch, None

    def take(self, indices: Any) -> Table:
        from .take import take_rows
        return take_rows(self, indices, self.to_batches())

    def count_rows(self) -> int:
        return sum(b.num_rows for b in self.to_batches())

    def to_table(self) -> Table:
        return Table(self.projected_schema, list(self.to_batches()))


