"""Scanner: a dataset scan with its columns, filter and batch size (pyarrow.dataset.Scanner).

Fragments are planned (fragments.py: partition, footer and batch statistics) and their surviving
batches decoded on a pool of threads -- the decoders release the GIL -- with bounded readahead:
at most `fragment_readahead` files planned and `batch_readahead` batches decoded ahead of the
consumer. Results come back in pyarrow's order: fragment order, then batch order. Stream files
are read in the consumer's thread, one batch at a time, while the pool works ahead on the files
after them. count_rows() plans local files of the file format in the caller's thread and hands
the pool only each file's counting kernel call.
"""
from __future__ import annotations

import os
import threading
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from typing import TYPE_CHECKING, Any, Literal, TypeVar

from .. import types as T
from ..batch_reader import RecordBatchReader
from ..errors import ArrowException, ArrowInvalid
from ..ipc.reader import RecordBatchFileReader
from ..table import RecordBatch, Table
from . import _exprs
from .fragments import (FileFragment, Fragment, FragmentPlan, PendingCount, ScanSpec,
                        run_counts)

if TYPE_CHECKING:
    from ..expression import Expression

__all__ = ["Scanner", "TaggedRecordBatch"]

_R = TypeVar("_R")
_T = TypeVar("_T")
DEFAULT_BATCH_SIZE = 131072
DEFAULT_BATCH_READAHEAD = 16
DEFAULT_FRAGMENT_READAHEAD = 4
COUNT_WINDOW = 64       # files count_rows() keeps in flight (each holds a mapping)


# threads for scans of files behind a network link, where a task mostly waits on a request
# (Arrow C++'s I/O pool has 8; object stores answer more at once at no cost to us)
IO_THREADS = 16


def _threads() -> int:
    return max(1, min(8, os.cpu_count() or 1))


_shared: dict[str, ThreadPoolExecutor] = {}
_shared_lock = threading.Lock()


def _shared_pool(remote: bool = False) -> ThreadPoolExecutor:
    """The threads every scan shares (made on first use: a scan starts no threads of its own,
    and scans running at once do not multiply them): one per core for local files, whose
    tasks decode; IO_THREADS for remote ones, whose tasks wait on requests."""
    kind = "io" if remote else "cpu"
    with _shared_lock:
        pool = _shared.get(kind)
        if pool is None:
            pool = _shared[kind] = ThreadPoolExecutor(
                IO_THREADS if remote else _threads(), thread_name_prefix=f"arrowipc-dataset-{kind}")
        return pool


class _ScanPool:
    """One scan's use of the shared pool: what it submitted and has not run is cancelled when
    the scan ends (a head() that stops early, an error, a consumer that stops iterating)."""

    def __init__(self, pool: ThreadPoolExecutor) -> None:
        self._pool = pool
        # pending futures only: a finished one leaves the set, so its result (decoded batches)
        # is held by the consumer alone and memory stays bounded by the readahead
        self._pending: set[Future[Any]] = set()
        self._lock = threading.Lock()

    def submit(self, fn: Callable[..., _R], *args: Any) -> Future[_R]:
        future = self._pool.submit(fn, *args)
        with self._lock:
            self._pending.add(future)
        future.add_done_callback(self._finished)
        return future

    def _finished(self, future: Future[Any]) -> None:
        with self._lock:
            self._pending.discard(future)

    def shutdown(self, wait: bool = True, cancel_futures: bool = False) -> None:
        with self._lock:
            pending, self._pending = list(self._pending), set()
        for f in pending:
            f.cancel()


class _Inline:
    """An executor that runs each call at once, in the caller's thread (use_threads=False)."""

    def submit(self, fn: Callable[..., _R], *args: Any) -> Future[_R]:
        future: Future[_R] = Future()
        try:
            future.set_result(fn(*args))
        except BaseException as e:
            future.set_exception(e)
        return future

    def shutdown(self, wait: bool = True, cancel_futures: bool = False) -> None:
        pass


def _ordered(pool: Any, items: Iterable[_T], fn: Callable[[_T], _R], window: int
             ) -> Iterator[_R]:
    """fn(item) for each item, computed up to `window` ahead on `pool`, yielded in order."""
    pending: deque[Future[_R]] = deque()
    try:
        for item in items:
            pending.append(pool.submit(fn, item))
            if len(pending) >= window:
                yield pending.popleft().result()
        while pending:
            yield pending.popleft().result()
    finally:
        for f in pending:
            f.cancel()


class TaggedRecordBatch:
    """A batch with the fragment it came from (pyarrow's TaggedRecordBatch)."""

    def __init__(self, record_batch: RecordBatch, fragment: FileFragment) -> None:
        self.record_batch = record_batch
        self.fragment = fragment

    def __iter__(self) -> Iterator[Any]:
        return iter((self.record_batch, self.fragment))


def _outputs(columns: Any, schema: T.Schema) -> list[tuple[str, str | Expression]]:
    """(output name, source column or expression) for pyarrow's `columns` argument."""
    if columns is None:
        return [(f.name, f.name) for f in schema]
    if isinstance(columns, dict):
        out: list[tuple[str, str | Expression]] = []
        for name, expr in columns.items():
            if not isinstance(name, str):
                raise TypeError(f"Expected a string for the column name, got {type(name).__name__}")
            converted = None if isinstance(expr, (str, bytes)) else _exprs.as_expression(expr)
            if converted is None:
                raise TypeError(f"Expected an Expression for a 'column' dictionary value, got "
                                f"{type(expr)} instead")
            out.append((name, converted))
        return out
    if isinstance(columns, (str, bytes)) or not isinstance(columns, Iterable):
        raise TypeError(f"Expected list of str or dict of name to Expression for columns, got "
                        f"{type(columns).__name__}")
    listed: list[tuple[str, str | Expression]] = []
    for name in columns:
        if not isinstance(name, str):
            raise TypeError(f"Expected a list of column names (str), got "
                            f"{type(name).__name__}")
        path = _dotted_path(name, schema)
        if path is not None:
            from ..expression import field
            listed.append((path[-1], field(*path)))     # named by its last step, as pyarrow
        else:
            listed.append((name, name))
    return listed


def _dotted_path(name: str, schema: T.Schema) -> list[str] | None:
    """A name that is no column but a dot path into a struct column ("a.b.c"): its steps;
    else None (a name holding dots that is a column is that column)."""
    if name in schema.names or "." not in name:
        return None
    steps = name.split(".")
    if steps[0] not in schema.names:
        return None
    type_ = schema.field(steps[0]).type
    for step in steps[1:]:
        if not isinstance(type_, T.StructType):
            return None
        index = type_.get_field_index(step)
        if index < 0:
            return None
        type_ = type_.field(index).type
    return steps


class Scanner:
    """A scan of fragments under a dataset schema, with its columns, filter and batch size."""

    def __init__(self, schema: T.Schema, fragments: Sequence[FileFragment],
                 partition_names: Sequence[str], columns: Any = None, filter: Any = None,
                 batch_size: int = DEFAULT_BATCH_SIZE,
                 batch_readahead: int = DEFAULT_BATCH_READAHEAD,
                 fragment_readahead: int = DEFAULT_FRAGMENT_READAHEAD,
                 fragment_scan_options: Any = None, use_threads: bool = True,
                 cache_metadata: bool = True, memory_pool: Any = None,
                 target_bytes_readahead: int | None = None) -> None:
        if batch_size <= 0:
            raise ValueError(f"batch_size must be positive, got {batch_size}")
        if batch_readahead < 0 or fragment_readahead < 0:
            raise ValueError("batch_readahead and fragment_readahead must not be negative")
        if target_bytes_readahead is not None and target_bytes_readahead < 0:
            raise ValueError(f"target_bytes_readahead must not be negative, got "
                             f"{target_bytes_readahead}")
        # ours (Arrow C++'s ScanV2Options name; pyarrow does not expose it): the bytes of the
        # batches decoded ahead of the consumer, None for no bound but batch_readahead
        self._readahead_bytes = None if target_bytes_readahead is None \
            else int(target_bytes_readahead)
        self._schema = schema
        self._fragments = list(fragments)
        self._partition_names = list(partition_names)
        self._filter = _exprs.as_expression(filter)
        _check_unique(schema)
        self._spec = ScanSpec(schema, self._partition_names, _outputs(columns, schema),
                              self._filter, int(batch_size), bool(cache_metadata))
        self._batch_readahead = max(1, int(batch_readahead))
        self._fragment_readahead = max(1, int(fragment_readahead))
        self.use_threads = bool(use_threads)

    # -- pyarrow's constructors -----------------------------------------------------------------
    @staticmethod
    def from_dataset(dataset: Any, *, columns: Any = None, filter: Any = None,
                     batch_size: int = DEFAULT_BATCH_SIZE,
                     batch_readahead: int = DEFAULT_BATCH_READAHEAD,
                     fragment_readahead: int = DEFAULT_FRAGMENT_READAHEAD,
                     fragment_scan_options: Any = None, use_threads: bool = True,
                     cache_metadata: bool = True, memory_pool: Any = None) -> Scanner:
        """dataset.scanner(...)."""
        scanner: Scanner = dataset.scanner(
            columns=columns, filter=filter, batch_size=batch_size,
            batch_readahead=batch_readahead, fragment_readahead=fragment_readahead,
            fragment_scan_options=fragment_scan_options, use_threads=use_threads,
            cache_metadata=cache_metadata, memory_pool=memory_pool)
        return scanner

    @staticmethod
    def from_fragment(fragment: Fragment, *, schema: T.Schema | None = None,
                      columns: Any = None, filter: Any = None,
                      batch_size: int = DEFAULT_BATCH_SIZE,
                      batch_readahead: int = DEFAULT_BATCH_READAHEAD,
                      fragment_readahead: int = DEFAULT_FRAGMENT_READAHEAD,
                      fragment_scan_options: Any = None, use_threads: bool = True,
                      cache_metadata: bool = True, memory_pool: Any = None) -> Scanner:
        """fragment.scanner(...)."""
        return fragment.scanner(schema, columns, filter, batch_size, use_threads,
                                batch_readahead=batch_readahead,
                                fragment_readahead=fragment_readahead,
                                fragment_scan_options=fragment_scan_options,
                                cache_metadata=cache_metadata, memory_pool=memory_pool)

    @staticmethod
    def from_batches(source: Any, *, schema: T.Schema | None = None, columns: Any = None,
                     filter: Any = None, batch_size: int = DEFAULT_BATCH_SIZE,
                     batch_readahead: int = DEFAULT_BATCH_READAHEAD,
                     fragment_readahead: int = DEFAULT_FRAGMENT_READAHEAD,
                     fragment_scan_options: Any = None, use_threads: bool = True,
                     cache_metadata: bool = True, memory_pool: Any = None) -> Scanner:
        """A Scanner over an iterable of batches (with `schema`), a RecordBatchReader or an
        object with `__arrow_c_stream__`. As pyarrow's, it is one-shot: the batches are read
        as the scan consumes them, and a second scan raises ArrowInvalid."""
        from .memory import MemoryScanner, OneShotBatches
        from .partitioning import as_schema
        if isinstance(source, RecordBatchReader) or hasattr(source, "__arrow_c_stream__"):
            # as pyarrow: the reader's schema is the scan's
            if schema is not None:
                raise ValueError(
                    "Cannot specify a schema when providing a RecordBatchReader"
                    if isinstance(source, RecordBatchReader)
                    or type(source).__name__ == "RecordBatchReader" else
                    "Cannot specify a schema when providing an object implementing the Arrow "
                    "PyCapsule Protocol")
            reader = source if isinstance(source, RecordBatchReader) else \
                RecordBatchReader.from_stream(source)
            schema = reader.schema
            source = reader
        elif not isinstance(source, Iterable):
            raise TypeError(f"Expected a RecordBatchReader or an iterable of batches instead "
                            f"of the given type: {type(source).__name__}")
        elif schema is None:
            raise ValueError("Must provide schema to construct scanner from an iterable")
        return MemoryScanner(as_schema(schema), OneShotBatches(source), columns=columns,
                             filter=filter, batch_size=batch_size)

    @property
    def projected_schema(self) -> T.Schema:
        """The schema of the batches the scan produces."""
        return self._spec.output_schema

    @property
    def dataset_schema(self) -> T.Schema:
        """The schema of the dataset scanned."""
        return self._schema

    # -- the pipeline ---------------------------------------------------------------------------
    def _pool(self, use_threads: bool | None = None) -> Any:
        threads = self.use_threads if use_threads is None else use_threads
        if not threads:
            return _Inline()
        remote = any(f.is_remote for f in self._fragments)
        return _ScanPool(_shared_pool(remote))

    def _survivors(self, spec: ScanSpec
                   ) -> Iterator[tuple[FileFragment, Expression | None]]:
        """The fragments stage 1 (partition values, no I/O) leaves, with their residual
        filters, in order."""
        # one evaluation (or one bind per distinct partition) for all the fragments: a pruned
        # fragment costs a list entry, no file is opened for it
        bound = zip(self._fragments, _exprs.residuals(
            spec.filter, [f.partition_values for f in self._fragments], spec.dataset_schema))
        return ((f, rest) for f, rest in bound if rest is not False)

    def _plans(self, pool: Any, spec: ScanSpec | None = None) -> Iterator[FragmentPlan]:
        """The fragments' plans, in order. Stage 1 runs here, so only the files it leaves are
        opened: on the pool when some are behind a network link (a URL, a filesystem object,
        a network file system), else here (opening a file on a local disk is a few small
        reads and Python that holds the GIL: another thread would only take turns with this
        one)."""
        spec = spec or self._spec
        survivors = self._survivors(spec)
        if not any(f.opens_over_a_network for f in self._fragments):
            pool = _Inline()
        for plan in _ordered(pool, survivors, lambda item: item[0].plan(spec, item[1]),
                             1 if isinstance(pool, _Inline) else self._fragment_readahead):
            if plan is not None:
                yield plan

    def _tagged(self, use_threads: bool | None = None
                ) -> Iterator[tuple[RecordBatch, FileFragment]]:
        pool = self._pool(use_threads)
        try:
            pending: deque[_InFlight] = deque()
            window = 1 if isinstance(pool, _Inline) else self._batch_readahead
            limit = None if isinstance(pool, _Inline) else self._readahead_bytes

            def drain_one() -> Iterator[tuple[RecordBatch, FileFragment]]:
                unit = pending.popleft()
                if unit.future is None:     # a stream: read here, batch by batch
                    plan = unit.plan
                    previous: tuple[int, RecordBatch] | None = None
                    for item in plan.indexed_stream_batches():
                        if previous is not None:
                            for out in plan.finish(previous[1], previous[0], False):
                                yield out, plan.fragment
                        previous = item
                    if previous is not None:
                        for out in plan.finish(previous[1], previous[0], True):
                            yield out, plan.fragment
                    return
                if unit.plan.replaced:
                    return                  # its file's batches came from a plan made anew
                try:
                    batches = unit.future.result()
                except (ArrowException, OSError):
                    # a file some of whose batches were handed out already: its error
                    fresh = False if unit.plan.handed_out else _fresh_plan(unit.plan)
                    if fresh is False:
                        raise
                    unit.plan.replaced = True
                    if fresh is not None:
                        for i, batch in fresh.read_surviving():
                            for out in fresh.finish(batch, i, i == fresh.batches[-1]):
                                yield out, fresh.fragment
                    return
                unit.plan.handed_out = True
                if unit.plan.in_place is not None:
                    predicted[0] = unit.plan.in_place
                for out in batches:
                    yield out, unit.plan.fragment

            def full(coming: int) -> bool:
                if len(pending) >= window:
                    return True
                # the byte bound: what is decoded ahead (or being decoded) plus the next batch
                # must fit, except that one batch is always let through
                return limit is not None and bool(pending) and \
                    _held_bytes(pending) + coming > limit

            # a batch decoded as views of its mapped file, with no filter left, is decoded
            # here: the work holds the GIL throughout. A file's first batch is predicted by
            # the last file's (a mispredicted compressed batch decompresses here, once).
            here, predicted = _Inline(), [False]
            # reading ahead, the batches of a remote file are fetched a window at a time
            for unit in self._units(pool, fetch_windows=window > 1):
                while pending and (full(unit.estimate) or pending[0].future is None):
                    yield from drain_one()
                plan = unit.plan
                if plan.replaced:
                    continue
                if plan.residual is None and not plan.fragment.is_remote \
                        and _in_place(plan, pending, predicted[0]):
                    unit.submit(here)
                    predicted[0] = plan.in_place is not False
                else:
                    unit.submit(pool)
                pending.append(unit)
                while pending and pending[0].future is None:
                    yield from drain_one()
            while pending:
                yield from drain_one()
        finally:
            pool.shutdown(wait=False, cancel_futures=True)

    def _units(self, pool: Any, fetch_windows: bool = False) -> Iterator[_InFlight]:
        """The scan's work in order, not yet submitted: each batch of a file, each stream
        (`fetch_windows`: a remote file's adjacent batches fetched together, see
        FragmentPlan.read)."""
        for plan in self._plans(pool):
            plan.fetch_windows = fetch_windows
            if plan.is_stream:
                yield _InFlight(plan, -1, False, 0)
                continue
            last = len(plan.batches) - 1
            for k, i in enumerate(plan.batches):
                yield _InFlight(plan, i, k == last, plan.body_length(i))

    # -- pyarrow's methods ----------------------------------------------------------------------
    def to_batches(self) -> Iterator[RecordBatch]:
        """The scan's batches, in order."""
        for batch, _ in self._tagged():
            yield batch

    def scan_batches(self) -> Iterator[TaggedRecordBatch]:
        """The scan's batches, each with its fragment."""
        for batch, fragment in self._tagged():
            yield TaggedRecordBatch(batch, fragment)

    def to_table(self) -> Table:
        """The whole scan as a Table."""
        return Table(self.projected_schema, list(self.to_batches()))

    def to_reader(self) -> RecordBatchReader:
        """The scan as a RecordBatchReader."""
        return RecordBatchReader.from_batches(self.projected_schema, self.to_batches())

    def __arrow_c_stream__(self, requested_schema: object = None) -> object:
        """The scan as an Arrow C stream (the PyCapsule interface), as to_reader() reads it:
        duckdb, polars and pyarrow take a scanner so."""
        return self.to_reader().__arrow_c_stream__(requested_schema)

    def head(self, num_rows: int) -> Table:
        """The first `num_rows` rows (fewer when the scan has fewer); reads no further."""
        if num_rows < 0:
            raise ValueError(f"num_rows must be non-negative, got {num_rows}")
        batches, got = [], 0
        if num_rows > 0:
            # a few rows: read in order, nothing ahead (readahead would decode batches that
            # are thrown away); many: the parallel scan, stopped when enough came
            few = num_rows <= self._spec.batch_size
            gen = (b for b, _ in self._tagged(self.use_threads and not few))
            try:
                for batch in gen:
                    take = min(batch.num_rows, num_rows - got)
                    batches.append(batch if take == batch.num_rows else batch.slice(0, take))
                    got += take
                    if got >= num_rows:
                        break
            finally:
                close = getattr(gen, "close", None)
                if close is not None:
                    close()         # a generator: cancels the readahead
        if not batches:
            return Table._empty(self.projected_schema)
        return Table(self.projected_schema, batches)

    def take(self, indices: Any) -> Table:
        """The rows at `indices` (positions in the scan's output), in that order; only the
        batches holding them are decoded (take.py)."""
        from .take import take_rows
        while True:
            failed: list[FragmentPlan] = []
            try:
                return take_rows(self, indices, failed=failed)
            except (ArrowException, OSError):
                # a remote file replaced since an earlier scan kept its opening fails its
                # ranges: the rows are taken again, that file opened anew (by a request, so
                # each file is retried once)
                if not failed or not _through_kept_opening(failed[0]):
                    raise
                failed[0].fragment.forget_opening(failed[0].opening)

    def count_rows(self) -> int:
        """Rows the scan produces: from footers and headers alone when no filter is left to
        apply to a file's rows; otherwise only the filter's columns are read."""
        spec = self._spec
        counting = ScanSpec(spec.dataset_schema, self._partition_names, [], spec.filter,
                            spec.batch_size, spec.cache_metadata)
        survivors = list(self._survivors(counting))

        def count(item: tuple[FileFragment, Expression | None]
                  ) -> tuple[int, PendingCount | None]:
            # rows counted, and a file's values left to one kernel call
            if item[1] is None:
                rows = item[0].count_all_rows(counting.cache_metadata)
                if rows is not None:
                    return rows, None
            else:
                found = item[0].count_from_value_spans(counting, item[1])
                if found is None:
                    found = item[0].count_from_headers(counting, item[1])
                if isinstance(found, PendingCount):
                    return 0, found
                if found is not None:
                    return found, None
            plan = item[0].plan(counting, item[1])
            if plan is None:
                return 0, None
            try:
                return _count_plan(plan)
            except (ArrowException, OSError):
                fresh = _fresh_plan(plan)
                if fresh is False:
                    raise
                return (0, None) if fresh is None else _count_plan(fresh)

        if all(f.counts_from_local_footer()
               and (rest is None or counting.comparison_of(rest) is not None)
               for f, rest in survivors):
            # local files counted from footers or by a `column op number` filter are planned
            # in this thread: footers, headers and statistics are Python, which threads would
            # only pass the GIL around; the values found are counted by kernel calls on the
            # pool (the GIL released), a group of files a call, while the next files are
            # planned. Other filters decode and evaluate on the pool, a file per task, below.
            kernels = self._pool() if self.use_threads else _Inline()
            # kernel tasks, each with the number of files (mappings) it holds
            running: deque[tuple[Future[int], int]] = deque()
            total = held = 0
            group: list[PendingCount] = []

            def collect() -> None:
                nonlocal total, held
                task, files = running.popleft()
                total += task.result()
                held -= files

            def submit(counts: list[PendingCount]) -> None:
                # the task holds the mappings alone: unmapped on its thread when done
                running.append((kernels.submit(_run_and_release, counts), len(counts)))
            try:
                for item in survivors:
                    rows, left = count(item)
                    total += rows
                    if left is None:
                        continue
                    group.append(left)
                    held += 1
                    del left
                    while running and running[0][0].done():
                        collect()
                    # while this thread plans, one task counts the files planned since the
                    # last began: more would share this thread's core, and the whole count
                    # waits on this thread (a task also takes the GIL from it to start and
                    # to finish, so once a group, not once a file)
                    if not running:
                        submit(group)
                        group = []
                    elif held >= COUNT_WINDOW:          # each file held is a mapping
                        collect()
                # planning done: what is left is counted on every thread
                parts = min(len(group), _threads()) if self.use_threads else 1
                for k in range(parts):
                    submit(group[k::parts])
                group = []
                while running:
                    collect()
                return total
            finally:
                kernels.shutdown(wait=False, cancel_futures=True)

        def count_all(item: tuple[FileFragment, Expression | None]) -> int:
            rows, left = count(item)
            return rows + (left.run() if left is not None else 0)
        pool = self._pool()
        try:
            # one task per file (opened, planned and counted at once); a count holds no data,
            # so every file may be in flight
            counts = _ordered(pool, survivors, count_all, COUNT_WINDOW if self.use_threads else 1)
            return sum(counts)
        finally:
            pool.shutdown(wait=False, cancel_futures=True)


class UnionScanner(Scanner):
    """A Scanner over the children of a UnionDataset: each child's scanner read in turn
    (their columns and filter checked once, against the union's schema)."""

    def __init__(self, schema: T.Schema, children: Sequence[Scanner], columns: Any = None,
                 filter: Any = None, batch_size: int = DEFAULT_BATCH_SIZE,
                 use_threads: bool = True) -> None:
        super().__init__(schema, [], [], columns=columns, filter=filter,
                         batch_size=batch_size, use_threads=use_threads)
        self._children = list(children)

    def _tagged(self, use_threads: bool | None = None) -> Iterator[tuple[RecordBatch, Any]]:
        for child in self._children:
            yield from child._tagged(use_threads)

    def to_batches(self) -> Iterator[RecordBatch]:
        for child in self._children:
            yield from child.to_batches()

    def count_rows(self) -> int:
        return sum(child.count_rows() for child in self._children)

    def take(self, indices: Any) -> Table:
        from .take import take_rows
        return take_rows(self, indices, in_memory=self.to_batches())


class _InFlight:
    """A file batch to decode (or a stream to read in the consumer's thread, i < 0), with the
    bytes the byte bound counts for it: its message body until decoded, then its batches'."""

    def __init__(self, plan: FragmentPlan, i: int, last: bool, estimate: int) -> None:
        self.plan = plan
        self.i = i
        self.last = last
        self.estimate = estimate
        self.future: Future[list[RecordBatch]] | None = None
        self._decoded: int | None = None

    def submit(self, pool: Any) -> None:
        if self.i >= 0:
            self.future = pool.submit(_decode, self.plan, self.i, self.last)

    def held_bytes(self) -> int:
        future = self.future
        if future is None or not future.done() or future.exception() is not None:
            return self.estimate
        if self._decoded is None:
            self._decoded = sum(b.nbytes for b in future.result())
        return self._decoded


def _fresh_plan(plan: FragmentPlan) -> FragmentPlan | None | Literal[False]:
    """When a read of `plan`'s file failed and the file was opened through the opening an
    earlier scan kept (the object may have changed since, and its ranges must match the
    version kept): the file planned anew, opened by a request (None: the new version is ruled
    out). False for any other failure, which is the scan's."""
    if not _through_kept_opening(plan):
        return False
    plan.fragment.forget_opening(plan.opening)
    return plan.fragment.plan(plan.spec, plan.residual)


def _through_kept_opening(plan: FragmentPlan) -> bool:
    """Whether `plan`'s file was opened through the opening an earlier scan kept."""
    return isinstance(plan.reader, RecordBatchFileReader) and plan.reader.reopened


def _in_place(plan: FragmentPlan, pending: deque[_InFlight], last: bool) -> bool:
    """Whether `plan`'s batches are predicted to decode in place: as its batches read so far
    did, or else the latest plan's in flight that has read one, or else as `last` (the last
    batch taken from the pool)."""
    if plan.in_place is not None:
        return plan.in_place
    for unit in reversed(pending):
        if unit.plan.in_place is not None:
            return unit.plan.in_place
    return last


def _held_bytes(pending: Iterable[_InFlight]) -> int:
    return sum(unit.held_bytes() for unit in pending)


def _decode(plan: FragmentPlan, i: int, last: bool) -> list[RecordBatch]:
    return plan.finish(plan.read(i), i, last)


def _count_plan(plan: FragmentPlan) -> tuple[int, PendingCount | None]:
    """Rows of a planned fragment that pass its residual filter: counted, and the file's
    values left to one kernel call (FragmentPlan.count_surviving)."""
    if plan.is_stream:
        total = 0
        for batch in plan.stream_batches():
            total += _count_batch(plan, batch)
        return total, None
    if plan.residual is None:
        return sum(plan.batch_length(i) for i in plan.batches), None
    return plan.count_surviving()


def _count_batch(plan: FragmentPlan, batch: RecordBatch) -> int:
    if plan.residual is None:
        return batch.num_rows
    return plan.count_matching(batch)


def _run_and_release(counts: list[PendingCount]) -> int:
    """run_counts(counts), the counts (and so their files' mappings) let go of before the
    task's result is set: the pool's thread keeps its task's arguments a little longer, and
    a count returns with no mapping of its own left."""
    try:
        return run_counts(counts)
    finally:
        counts.clear()


def _check_unique(schema: T.Schema) -> None:
    seen: set[str] = set()
    for name in schema.names:
        if name in seen:
            raise ArrowInvalid(f"Multiple matches for FieldRef.Name({name}) in {schema}")
        seen.add(name)

