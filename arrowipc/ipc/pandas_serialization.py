"""pandas DataFrames to and from one IPC stream buffer (pyarrow.ipc.serialize_pandas and
deserialize_pandas): the DataFrame becomes one record batch with pandas metadata, so the index,
column names and dtypes come back."""
from __future__ import annotations

from typing import Any

from .._core.buffer import Buffer


__all__ = ["deserialize_pandas", "serialize_pandas"]


def serialize_pandas(df: Any, *, nthreads: int | None = None,
                     preserve_index: bool | None = None) -> Buffer:
    """`df` as an IPC stream of one record batch (`nthreads` is accepted and ignored: the
    conversion runs in one pass)."""
    from ..io import BufferOutputStream
    from ..table import RecordBatch
    from .writer import RecordBatchStreamWriter
    batch = RecordBatch.from_pandas(df, preserve_index=preserve_index)
    sink = BufferOutputStream()
    with RecordBatchStreamWriter(sink, batch.schema) as writer:
        writer.write_batch(batch)
    return sink.getvalue()


def deserialize_pandas(buf: Any, *, use_threads: bool = True) -> Any:
    """The DataFrame an IPC stream holds (what serialize_pandas wrote)."""
    from .reader import RecordBatchStreamReader
    with RecordBatchStreamReader(buf) as reader:
        return reader.read_all().to_pandas(use_threads=use_threads)
