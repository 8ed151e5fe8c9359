"""Writing and reading both ways, shared by the IPC test files: pyarrow and arrowipc writers and
readers with the same call shapes, and the equality checks between their batches."""
import pyarrow as pa
import pyarrow.ipc as pa_ipc

import arrowipc
from arrowipc import ipc

import strategies as S


def pa_write(batches, form, options=None, schema=None) -> bytes:
    """pyarrow's stream or file bytes of `batches` (pyarrow batches)."""
    schema = schema if schema is not None else batches[0].schema
    sink = pa.BufferOutputStream()
    opener = pa_ipc.new_stream if form == "stream" else pa_ipc.new_file
    with opener(sink, schema, options=options) as writer:
        for batch in batches:
            writer.write_batch(batch)
    return sink.getvalue().to_pybytes()


def ours_write(batches, form, options=None, schema=None, **kwargs) -> bytes:
    """arrowipc's stream or file bytes of `batches` (pyarrow or arrowipc batches); kwargs go to
    the writer (metadata, magic, ...)."""
    schema = schema if schema is not None else batches[0].schema
    sink = arrowipc.BufferOutputStream()
    opener = ipc.new_stream if form == "stream" else ipc.new_file
    with opener(sink, arrowipc.schema(schema), options=options, **kwargs) as writer:
        for batch in batches:
            writer.write_batch(arrowipc.record_batch(batch) if isinstance(batch, pa.RecordBatch) else batch)
    return S.as_bytes(sink.getvalue())


def ours_read(source, form, options=None):
    """(schema, batches) read by arrowipc: iteration for streams, get_batch for files."""
    if form == "stream":
        reader = ipc.open_stream(source, options=options)
        return reader.schema, list(reader)
    reader = ipc.open_file(source, options=options)
    return reader.schema, [reader.get_batch(i) for i in range(reader.num_record_batches)]


def pa_read(data, form, options=None, validate=True):
    """(schema, batches) read by pyarrow, each batch fully validated unless `validate` is False."""
    if form == "stream":
        reader = pa_ipc.open_stream(pa.py_buffer(data), options=options)
        batches = list(reader)
    else:
        reader = pa_ipc.open_file(pa.py_buffer(data), options=options)
        batches = [reader.get_batch(i) for i in range(reader.num_record_batches)]
    if validate:
        for batch in batches:
            batch.validate(full=True)
    return reader.schema, batches


def assert_ours_equal(ours, expected):
    """arrowipc batches equal to the expected pyarrow batches, value by value."""
    assert len(ours) == len(expected)
    for got, want in zip(ours, expected):
        S.assert_batch_matches(got, want)


def assert_pa_equal(got, expected):
    """pyarrow batches equal to the expected pyarrow batches."""
    assert len(got) == len(expected)
    for g, e in zip(got, expected):
        assert g.equals(e), f"{g}\n--- expected\n{e}"
