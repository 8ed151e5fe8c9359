"""Peer readers on arrowipc's output: nanoarrow (C, flatcc's strict flatbuffer verifier) and polars
(Rust) must read what arrowipc writes.

The oracle is differential: the peer first reads pyarrow's bytes for the same data. What the peer
cannot read from pyarrow either is a limit of the peer (skipped, with its words); anything it
reads from pyarrow it must read from arrowipc too, with the same result.
"""
import glob
import io
import os

import pytest

pa = pytest.importorskip("pyarrow")
na = pytest.importorskip("nanoarrow")
import nanoarrow.ipc as naipc  # noqa: E402

import arrowipc  # noqa: E402
from arrowipc import ipc  # noqa: E402

import testdata  # noqa: E402

INTEGRATION = testdata.INTEGRATION
GOLD = sorted(glob.glob(os.path.join(INTEGRATION, "*", "*.stream")))
assert GOLD, f"no gold streams under {INTEGRATION}"


def _ids(paths):
    return [os.path.relpath(p, INTEGRATION)[: -len(".stream")] for p in paths]


def _arrowipc_bytes(table: "pa.Table", kind: str, **options) -> bytes:
    ours = arrowipc.table(table)
    sink = arrowipc.BufferOutputStream()
    opts = ipc.IpcWriteOptions(**options) if options else None
    writer = (ipc.new_stream if kind == "stream" else ipc.new_file)(sink, ours.schema, options=opts)
    for batch in ours.to_batches():
        writer.write_batch(batch)
    writer.close()
    return sink.getvalue().to_pybytes()


def _pyarrow_bytes(table: "pa.Table", kind: str, **options) -> bytes:
    sink = pa.BufferOutputStream()
    opts = pa.ipc.IpcWriteOptions(**options) if options else None
    writer = (pa.ipc.new_stream if kind == "stream" else pa.ipc.new_file)(sink, table.schema, options=opts)
    for batch in table.to_batches():
        writer.write_batch(batch)
    writer.close()
    return sink.getvalue().to_pybytes()


def _gold_table(path):
    # arrowipc reads the gold file; the rewrite below is arrowipc's own output of that data
    return pa.table(ipc.open_stream(path).read_all())


def _differential(read, table, kind, **options):
    """(peer's reading of pyarrow's bytes, peer's reading of arrowipc's bytes)."""
    try:
        theirs = read(_pyarrow_bytes(table, kind, **options), kind)
    except BaseException as e:  # noqa: BLE001 - peers raise their own types, even panics
        if isinstance(e, (KeyboardInterrupt, SystemExit)):
            raise
        pytest.skip(f"the peer cannot read pyarrow's bytes either: {type(e).__name__}: {str(e)[:100]}")
    return theirs, read(_arrowipc_bytes(table, kind, **options), kind)


def _nanoarrow_read(data: bytes, kind: str):
    return pa.table(na.ArrayStream(naipc.InputStream.from_readable(io.BytesIO(data))))


def _polars_read(data: bytes, kind: str):
    pl = pytest.importorskip("polars")
    return (pl.read_ipc_stream if kind == "stream" else pl.read_ipc)(io.BytesIO(data))


@pytest.mark.parametrize("path", GOLD, ids=_ids(GOLD))
def test_nanoarrow_reads_arrowipc_streams(path):
    theirs, ours = _differential(_nanoarrow_read, _gold_table(path), "stream")
    assert ours.equals(theirs)


@pytest.mark.parametrize("kind", ["stream", "file"])
@pytest.mark.parametrize("path", GOLD, ids=_ids(GOLD))
def test_polars_reads_arrowipc_output(path, kind):
    theirs, ours = _differential(_polars_read, _gold_table(path), kind)
    assert ours.equals(theirs)


@pytest.mark.parametrize("codec", ["lz4", "zstd"])
@pytest.mark.parametrize("kind", ["stream", "file"])
@pytest.mark.parametrize("reader", ["nanoarrow", "polars"])
def test_peers_read_compressed_dictionary_output(codec, kind, reader):
    if reader == "nanoarrow" and kind == "file":
        pytest.skip("nanoarrow reads streams only")
    t = pa.table({"d": pa.array(["a", "b", None, "a"] * 100).dictionary_encode(),
                  "x": pa.array(range(400), pa.int64()), "s": [f"v{i}" for i in range(400)]})
    read = _nanoarrow_read if reader == "nanoarrow" else _polars_read
    theirs, ours = _differential(read, t, kind, compression=codec)
    assert ours.equals(theirs)
