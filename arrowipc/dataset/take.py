"""Scanner.take: the rows at given positions of a scan's output, reading only what holds them.

Positions count the scan's output rows (after its filter), fragment by fragment in the dataset's
order. A fragment's rows are known without decoding it where no row filter is left: from the
kept footer summary (the file is not opened), else from the footer's summary or each batch's
header. Only the batches holding an asked row are decoded, in parallel; the walk stops after
the batch holding the largest position. Where a row filter is left, or in a stream, the rows a
batch gives are known only once it is read and filtered: those batches are read in order, and
only the ones holding an asked row are kept.

The result is in the order asked, repeats included, as pyarrow's Dataset.take gives it, with
pyarrow's errors: a negative position is `Index -1 out of bounds`, positions past the end
`Some indices were out of bounds: 10, 11, 12, ...` (the first three, sorted), both
ArrowIndexError; null positions are an ArrowNotImplementedError.
"""
from __future__ import annotations

from collections.abc import Iterable, Iterator
from concurrent.futures import Future
from typing import TYPE_CHECKING, Any

import numpy as np

from ..errors import ArrowIndexError, ArrowInvalid, ArrowNotImplementedError
from ..table import RecordBatch, Table

if TYPE_CHECKING:
    from .fragments import FragmentPlan
    from .scanner import Scanner

__all__ = ["positions", "take_rows"]

_INT64_MAX = np.iinfo(np.int64).max


def positions(indices: Any) -> np.ndarray[Any, np.dtype[np.int64]]:
    """`indices` (a list, numpy array, arrowipc or pyarrow Array or ChunkedArray) as int64
    positions, converted as pyarrow converts take indices."""
    if hasattr(indices, "null_count") and hasattr(indices, "to_numpy"):
        if indices.null_count:
            raise ArrowNotImplementedError("null take indices")
        values = np.asarray(indices.to_numpy(zero_copy_only=False)
                            if not hasattr(indices, "chunks") else indices.to_numpy())
    elif isinstance(indices, (str, bytes)) or not isinstance(indices, Iterable) \
            and not isinstance(indices, np.ndarray):
        raise TypeError(f"'{type(indices).__name__}' object is not iterable")
    else:
        values = np.asarray(indices if isinstance(indices, np.ndarray) else list(indices))
    if values.ndim != 1:
        raise ArrowInvalid("only handle 1-dimensional arrays")
    if values.dtype.kind in "iub":
        if values.dtype == np.uint64 and values.size and int(values.max()) > _INT64_MAX:
            values = np.minimum(values, _INT64_MAX)     # past any end: reported as out of bounds
        return values.astype(np.int64)
    if values.dtype.kind == "f":
        whole = np.trunc(values)
        bad = np.flatnonzero((whole != values) | ~np.isfinite(values))
        if bad.size:
            raise ArrowInvalid(f"Float value {values[bad[0]]:f} was truncated converting to "
                               f"int64")
        return values.astype(np.int64)
    if values.dtype.kind in "UO" or values.size == 0:
        if values.size == 0:
            return np.zeros(0, dtype=np.int64)
        if any(v is None for v in values):
            raise ArrowNotImplementedError("null take indices")
        try:
            return np.array([int(v) for v in values], dtype=np.int64)
        except (ValueError, TypeError, OverflowError):
            raise ArrowInvalid(f"Failed to parse take indices as int64: {values[:3].tolist()}"
                               ) from None
    raise TypeError(f"take indices of numpy dtype {values.dtype} are not integers")


def _holds(wanted: np.ndarray[Any, Any], start: int, length: int) -> bool:
    """Whether sorted `wanted` has a position in [start, start + length)."""
    j = int(np.searchsorted(wanted, start))
    return j < wanted.size and int(wanted[j]) < start + length


def _with_last(items: Iterator[tuple[int, RecordBatch]]
               ) -> Iterator[tuple[int, RecordBatch, bool]]:
    """(index, batch, whether it is the last) with one batch of look-ahead."""
    previous: tuple[int, RecordBatch] | None = None
    for item in items:
        if previous is not None:
            yield previous[0], previous[1], False
        previous = item
    if previous is not None:
        yield previous[0], previous[1], True


class _Walk:
    """The output batches holding the wanted positions, with the row each starts at."""

    def __init__(self, wanted: np.ndarray[Any, Any]) -> None:
        self.wanted = wanted
        self.last = int(wanted[-1])
        self.row = 0                    # output rows passed so far
        self.pieces: list[tuple[int, RecordBatch | Future[list[RecordBatch]],
                                FragmentPlan | None]] = []
        self.failed: FragmentPlan | None = None     # the plan whose read raised

    @property
    def done(self) -> bool:
        return self.row > self.last

    def add_read(self, outputs: list[RecordBatch]) -> None:
        """Batches already read and filtered: kept where they hold a wanted row."""
        for out in outputs:
            if _holds(self.wanted, self.row, out.num_rows):
                self.pieces.append((self.row, out, None))
            self.row += out.num_rows

    def batches(self) -> tuple[list[int], list[RecordBatch]]:
        starts: list[int] = []
        batches: list[RecordBatch] = []
        for start, piece, plan in self.pieces:
            if isinstance(piece, Future):
                try:
                    outs = piece.result()
                except BaseException:
                    self.failed = plan
                    raise
            else:
                outs = [piece]
            for out in outs:
                starts.append(start)
                batches.append(out)
                start += out.num_rows
        return starts, batches


def _decode(plan: FragmentPlan, i: int, last: bool) -> list[RecordBatch]:
    return plan.finish(plan.read(i), i, last)


def _walk_plan(walk: _Walk, plan: FragmentPlan, pool: Any) -> None:
    if plan.is_stream:
        for i, batch, last in _with_last(plan.indexed_stream_batches()):
            walk.add_read(plan.finish(batch, i, last))
            if walk.done:
                plan.reader.close()
                return
        return
    final = plan.batches[-1] if plan.batches else -1
    for i in plan.batches:
        if walk.done:
            return
        if plan.residual is not None:       # rows known once filtered: read it here
            walk.add_read(_decode(plan, i, i == final))
            continue
        length = plan.batch_length(i)
        if _holds(walk.wanted, walk.row, length):
            walk.pieces.append((walk.row, pool.submit(_decode, plan, i, i == final), plan))
        walk.row += length


def take_rows(scanner: Scanner, indices: Any,
              in_memory: Iterable[RecordBatch] | None = None,
              failed: list[FragmentPlan] | None = None) -> Table:
    """The rows of `scanner`'s output at `indices`, in that order (`in_memory`: the output
    batches of a scanner of batches in memory, walked instead of fragments; `failed`: given
    the plan whose read raised)."""
    idx = positions(indices)
    schema = scanner.projected_schema
    if idx.size == 0:
        return Table._empty(schema)
    low = int(idx.min())
    if low < 0:
        raise ArrowIndexError(f"Index {low} out of bounds")
    walk = _Walk(np.unique(idx))
    if in_memory is not None:
        for batch in in_memory:
            walk.add_read([batch])
            if walk.done:
                break
    else:
        spec = scanner._spec
        pool = scanner._pool()
        try:
            for fragment, rest in scanner._survivors(spec):
                if walk.done:
                    break
                if rest is None:
                    rows = fragment.rows_from_footer()
                    if rows is not None and not _holds(walk.wanted, walk.row, rows):
                        walk.row += rows            # kept footer: the file is not opened
                        continue
                plan = fragment.plan(spec, rest)
                if plan is not None:
                    walk.failed = plan
                    _walk_plan(walk, plan, pool)
                    walk.failed = None
            starts, batches = walk.batches()
        except BaseException:
            if failed is not None and walk.failed is not None:
                failed.append(walk.failed)
            raise
        finally:
            pool.shutdown(wait=False, cancel_futures=True)
    if not walk.done:
        past = np.sort(idx[idx >= walk.row])
        shown = ", ".join(str(int(v)) for v in past[:3])
        raise ArrowIndexError(f"Some indices were out of bounds: {shown}"
                              f"{', ...' if past.size > 3 else ''}")
    if in_memory is not None:
        starts, batches = walk.batches()
    # each position's row in the batches kept, concatenated
    first = np.asarray(starts, dtype=np.int64)
    offsets = np.concatenate([[0], np.cumsum([b.num_rows for b in batches])]).astype(np.int64)
    k = np.searchsorted(first, idx, side="right") - 1
    local = idx - first[k] + offsets[k]
    return Table(schema, batches).take(local)
