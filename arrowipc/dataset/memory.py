"""Scans of an InMemoryDataset: its batches filtered and projected, nothing to prune; each
batch is a fragment (InMemoryFragment), as pyarrow's in-memory fragments are."""
from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from itertools import repeat
from typing import Any

from .. import types as T
from ..errors import ArrowInvalid
from ..table import RecordBatch, Table
from . import _exprs
from .fragments import Fragment
from .scanner import Scanner

__all__ = ["InMemoryFragment", "MemoryScanner", "OneShotBatches"]


class InMemoryFragment(Fragment):
    """One record batch of an InMemoryDataset, scanned alone (what pyarrow gives as a plain
    `Fragment`: no path, no partition)."""

    def __init__(self, batch: RecordBatch) -> None:
        # not Fragment.__init__, which forbids direct construction of the public class
        self._batch = batch

    @property
    def physical_schema(self) -> T.Schema:
        """The batch's schema."""
        return self._batch.schema

    def scanner(self, schema: T.Schema | None = None, columns: Any = None, filter: Any = None,
                batch_size: int = 131072, use_threads: bool = True, **kwargs: Any) -> Scanner:
        """A Scanner over the batch; with `schema`, the batch cast to it (same field names)."""
        from .partitioning import as_schema
        _check_scan_keywords(kwargs)
        batch = self._batch
        if schema is not None:
            schema = as_schema(schema)
            if not schema.equals(batch.schema):
                batch = batch.cast(schema)
        return MemoryScanner(batch.schema, [batch], columns=columns, filter=filter,
                             batch_size=batch_size, fragments=[self])

    def __repr__(self) -> str:
        return f"<arrowipc.dataset.Fragment in memory: {self._batch.num_rows} rows>"


# the keywords pyarrow's scans take that mean nothing for batches already in memory
_SCAN_KEYWORDS = frozenset({"batch_readahead", "fragment_readahead", "fragment_scan_options",
                            "cache_metadata", "memory_pool", "target_bytes_readahead"})


def _check_scan_keywords(kwargs: dict[str, Any]) -> None:
    unknown = sorted(set(kwargs) - _SCAN_KEYWORDS)
    if unknown:
        raise TypeError(f"scanner() got an unexpected keyword argument '{unknown[0]}'")


class OneShotBatches:
    """The batches of Scanner.from_batches' source, read once, as the scan consumes them
    (pyarrow's OneShotFragment): a second scan raises ArrowInvalid."""

    def __init__(self, source: Iterable[Any]) -> None:
        self._source = source
        self._scanned = False

    def __iter__(self) -> Iterator[RecordBatch]:
        from ..table import record_batch
        if self._scanned:
            raise ArrowInvalid("OneShotFragment was already scanned")
        self._scanned = True
        for item in self._source:
            yield item if isinstance(item, RecordBatch) else record_batch(item)


class MemoryScanner(Scanner):
    """A Scanner over batches in memory (each tagged with its fragment in scan_batches(), when
    `fragments` gives them)."""

    def __init__(self, schema: T.Schema, batches: Sequence[RecordBatch] | OneShotBatches,
                 columns: Any = None, filter: Any = None, batch_size: int = 131072,
                 fragments: Sequence[Fragment] | None = None) -> None:
        super().__init__(schema, [], [], columns=columns, filter=filter, batch_size=batch_size,
                         use_threads=False)
        self._batches: Iterable[RecordBatch] = (
            batches if isinstance(batches, OneShotBatches) else list(batches))
        self._batch_fragments = fragments

    def _scanned(self, batch: RecordBatch) -> Iterator[RecordBatch]:
        """One batch filtered, projected and split to the batch size."""
        spec = self._spec
        batch = _conformed(batch, spec.dataset_schema)
        if spec.filter is not None:
            batch = batch.filter(_exprs.row_mask(spec.filter, batch))
        cols = [batch.column(src) if isinstance(src, str) else _exprs.value_of(src, batch)
                for _, src in spec.outputs]
        out = RecordBatch(spec.output_schema, [c.data for c in cols], batch.num_rows)
        if out.num_rows <= spec.batch_size:
            yield out
            return
        for o in range(0, out.num_rows, spec.batch_size):
            yield out.slice(o, spec.batch_size)

    def to_batches(self) -> Iterator[RecordBatch]:
        for batch in self._batches:
            yield from self._scanned(batch)

    def _tagged(self, use_threads: bool | None = None
                ) -> Iterator[tuple[RecordBatch, Any]]:
        # what head() and scan_batches() read: the batches in memory, with their fragments
        fragments: Iterable[Fragment | None] = (
            repeat(None) if self._batch_fragments is None else self._batch_fragments)
        for batch, fragment in zip(self._batches, fragments):
            for out in self._scanned(batch):
                yield out, fragment

    def take(self, indices: Any) -> Table:
        from .take import take_rows
        return take_rows(self, indices, self.to_batches())

    def count_rows(self) -> int:
        return sum(b.num_rows for b in self.to_batches())

    def to_table(self) -> Table:
        return Table(self.projected_schema, list(self.to_batches()))


def _conformed(batch: RecordBatch, schema: T.Schema) -> RecordBatch:
    """`batch` as `schema` (a dataset's schema replaced, or a union's): a column it lacks as
    nulls, one of another type cast."""
    if batch.schema.equals(schema, check_metadata=False):
        return batch
    from ..array import nulls
    columns = []
    for field in schema:
        i = batch.schema.get_field_index(field.name)
        if i < 0:
            columns.append(nulls(batch.num_rows, field.type).data)
        else:
            column = batch.column(i)
            columns.append((column if column.type.equals(field.type)
                            else column.cast(field.type)).data)
    return RecordBatch(schema, columns, batch.num_rows)
