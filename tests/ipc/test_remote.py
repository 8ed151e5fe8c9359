"""Remote reads and writes: range planning, file objects, S3 (a local moto server), HTTP.

pyarrow is the oracle for contents and, through pa.PythonFile over the same counting file
object, for what a projected or single-batch read may cost; the servers log every request, so
bytes and request counts are asserted on the wire.
"""
from __future__ import annotations

import contextlib
import socket
import threading
import time

import numpy as np
import pyarrow as pa
import pyarrow.ipc as pa_ipc
import pytest

import arrowipc
from arrowipc import ipc
from arrowipc.errors import ArrowInvalid, ArrowIOError
from arrowipc.ipc.remote import (BATCH_HEADERS_LIMIT, HEADERS_KEY, body_ranges, coalesce,
                                  decode_batch_headers, dictionary_ids_needed)
from ipc_surgery import with_footer_metadata
from remote_servers import HANG_GUARD, CountingFile, in_thread

fsspec = pytest.importorskip("fsspec")

N_ROWS, N_BATCHES, N_COLS = 80_000, 8, 8


def wide_table() -> pa.Table:
    return pa.table({f"c{i}": np.arange(N_ROWS, dtype=np.int64) * (i + 1) for i in range(N_COLS)})


def file_bytes(table: pa.Table, **write_options) -> bytes:
    sink = pa.BufferOutputStream()
    with pa_ipc.new_file(sink, table.schema,
                         options=pa_ipc.IpcWriteOptions(**write_options)) as writer:
        for batch in table.to_batches(max_chunksize=N_ROWS // N_BATCHES):
            writer.write_batch(batch)
    return sink.getvalue().to_pybytes()


def write_wide(writer):
    """The wide table in N_BATCHES record batches, through one of our writers."""
    for batch in wide_table().to_batches(max_chunksize=N_ROWS // N_BATCHES):
        writer.write_batch(arrowipc.record_batch(batch))


@pytest.fixture(scope="module")
def wide_file() -> bytes:
    return file_bytes(wide_table())


def dict_table(n: int = 40_000) -> pa.Table:
    big = pa.array([f"value-{i:06d}" for i in range(n)]).dictionary_encode()
    small = pa.array(["a", "b", "c", "d"] * (n // 4)).dictionary_encode()
    return pa.table({"n": np.arange(n), "big": big, "small": small})


# -- the planner --------------------------------------------------------------------------------
def test_coalesce_merges_small_holes_and_keeps_large_ones():
    ranges = [(100, 10), (0, 50), (60, 10), (5000, 10)]
    assert coalesce(ranges, hole_size_limit=50, range_size_limit=1 << 20) == [
        (0, 110), (5000, 10)]


def test_coalesce_stops_at_the_range_size_limit():
    ranges = [(0, 40), (50, 40), (100, 40)]
    assert coalesce(ranges, hole_size_limit=20, range_size_limit=100) == [(0, 90), (100, 40)]
    # a single range larger than the limit is kept whole
    assert coalesce([(0, 500)], hole_size_limit=20, range_size_limit=100) == [(0, 500)]


def test_coalesce_merges_overlaps_and_drops_empty_ranges():
    assert coalesce([(0, 10), (5, 10), (30, 0)], hole_size_limit=0) == [(0, 15)]
    assert coalesce([]) == []


def test_body_ranges_clip_to_the_body_and_skip_unneeded_buffers():
    buffers = [(0, 8), (8, 16), (24, 100), (200, 8), (-8, 8)]
    needed = [True, False, True, True, True]
    # buffer 2 is clipped at the body's end, 3 and 4 lie outside it (the decoder reports them)
    assert body_ranges(buffers, needed, 1000, 64) == [(1000, 8), (1024, 40)]


def test_dictionary_ids_needed_follow_the_selected_fields():
    info = ipc.open_file(file_bytes(dict_table(8)))._decoder.info
    assert dictionary_ids_needed(info, None) is None
    ids = {i: e.path[0] for i, e in info.dictionaries.items()}
    by_field = {v: k for k, v in ids.items()}
    assert dictionary_ids_needed(info, [True, False, True]) == {by_field[2]}
    assert dictionary_ids_needed(info, [True, False, False]) == set()


# -- file objects: fetch only what is read ------------------------------------------------------
def pyarrow_cost(data: bytes, included, batch=None):
    f = CountingFile(data)
    reader = pa_ipc.open_file(pa.PythonFile(f, mode="r"),
                              options=pa_ipc.IpcReadOptions(included_fields=included))
    result = reader.read_all() if batch is None else reader.get_batch(batch)
    return result, len(f.reads), f.nbytes


def ours_cost(data: bytes, included, batch=None, **options):
    f = CountingFile(data)
    reader = ipc.open_file(f, options=ipc.IpcReadOptions(included_fields=included, **options))
    result = reader.read_all() if batch is None else reader.get_batch(batch)
    return reader, result, len(f.reads), f.nbytes


@pytest.mark.parametrize("included,batch", [([3], None), ([1, 5], None), ([0], 7), ([2, 3], 7),
                                            (None, 7), ([7], 0)])
def test_projected_and_single_batch_reads_cost_no_more_than_pyarrow(wide_file, included, batch):
    theirs, their_requests, their_bytes = pyarrow_cost(wide_file, included, batch)
    reader, ours, requests, nbytes = ours_cost(wide_file, included, batch)
    assert pa.record_batch(ours).equals(theirs) if batch is not None else \
        pa.table(ours).equals(theirs)
    assert requests <= their_requests
    assert nbytes <= 1.05 * their_bytes
    # the reader's stats count the same reads
    assert (reader.io_stats.read_requests, reader.io_stats.bytes_read) == (requests, nbytes)


def test_projection_reads_only_the_selected_columns_bytes(wide_file):
    _, _, requests, nbytes = ours_cost(wide_file, [3])
    column_bytes = N_ROWS * 8
    # footer (head magic + one tail read), then metadata and one buffer per batch
    assert requests == 2 + 2 * N_BATCHES
    assert column_bytes <= nbytes < column_bytes + 16 << 10


def test_adjacent_columns_are_coalesced_into_one_request(wide_file):
    _, _, requests, _ = ours_cost(wide_file, [2, 3, 4], batch=1)
    assert requests == 2 + 2            # footer; metadata, then the three buffers in one range
    _, _, requests, _ = ours_cost(wide_file, [2, 3, 4], batch=1, hole_size_limit=0,
                                  range_size_limit=N_ROWS // N_BATCHES * 8)
    assert requests == 2 + 1 + 3        # merging stopped by the range size limit


def test_whole_file_read_is_one_sequential_pass(wide_file):
    f = CountingFile(wide_file)
    reader = ipc.open_file(f)
    f.reads.clear()
    assert pa.table(reader.read_all()).equals(wide_table())
    offsets = [o for o, _ in f.reads]
    assert offsets == sorted(offsets) and len(f.reads) == N_BATCHES     # one read per block


@pytest.mark.parametrize("compression", [None, "zstd", "lz4"])
@pytest.mark.parametrize("included", [None, [0], [1], [2], [1, 2], [0, 2]])
def test_file_object_reads_match_in_memory_reads(compression, included):
    data = file_bytes(dict_table(), compression=compression)
    opts = ipc.IpcReadOptions(included_fields=included)
    expected = pa.table(ipc.open_file(data, options=opts).read_all())
    reader = ipc.open_file(CountingFile(data), options=opts)
    assert pa.table(reader.read_all()).equals(expected)
    assert [reader.get_batch(i).num_rows for i in range(reader.num_record_batches)] == \
        [b.num_rows for b in expected.to_batches()]


def test_unneeded_large_dictionaries_are_not_fetched():
    table = dict_table()
    data = file_bytes(table)
    full = ipc.open_file(data)
    big_id = next(i for i, e in full._decoder.info.dictionaries.items() if e.path == (1,))
    f = CountingFile(data)
    reader = ipc.open_file(f, options=ipc.IpcReadOptions(included_fields=[2]))
    assert pa.table(reader.read_all()).column(0).equals(table.column("small"))
    big_block = full.dictionary_blocks[big_id if len(full.dictionary_blocks) > 1 else 0]
    assert f.nbytes < big_block[2]      # less than the big dictionary's body alone
    assert reader.stats.num_dictionary_batches == 1


def test_count_rows_reads_metadata_only(wide_file):
    f = CountingFile(wide_file)
    reader = ipc.open_file(f)
    f.reads.clear()
    assert reader.count_rows() == N_ROWS
    assert f.nbytes < 4096


def test_non_seekable_source_for_the_file_format_is_refused(wide_file):
    with pytest.raises(ArrowInvalid, match="the file format needs a seekable source; read it as "
                                           "a stream or buffer it"):
        ipc.open_file(CountingFile(wide_file, seekable=False))


def test_truncated_file_object_reads_like_a_truncated_buffer(wide_file):
    for cut in (len(wide_file) - 3, len(wide_file) // 2, 30):
        data = wide_file[:cut]
        with pytest.raises(ArrowInvalid) as local:
            ipc.open_file(data).read_all()
        with pytest.raises(ArrowInvalid) as remote:
            ipc.open_file(CountingFile(data)).read_all()
        assert str(remote.value) == str(local.value)


def test_footer_offset_beyond_the_object_is_a_truncation(wide_file):
    with pytest.raises(ArrowInvalid, match="file truncated"):
        ipc.open_file(CountingFile(wide_file[:-100]), footer_offset=len(wide_file))


# -- memory:// and local URLs, filesystem= ----------------------------------------------------
def test_memory_url_round_trip_and_failed_write_leaves_nothing():
    table = arrowipc.table(wide_table())
    with ipc.new_file("memory://remote-tests/ok.arrow", table.schema) as writer:
        writer.write_table(table)
    assert pa.table(ipc.open_file("memory://remote-tests/ok.arrow").read_all()).equals(
        wide_table())
    with pytest.raises(KeyError):
        with ipc.new_stream("memory://remote-tests/bad.arrows", table.schema) as writer:
            writer.write_table(table)
            raise KeyError("stop")
    assert not fsspec.filesystem("memory").exists("/remote-tests/bad.arrows")


def test_a_failed_range_read_is_an_oserror_naming_the_url():
    # fsspec's cat_ranges would put each failure in its result list: it must surface as itself,
    # through a filesystem's ranges and through an fsspec file object alike
    from arrowipc.ipc.filesystems import open_input
    from arrowipc.ipc.sources import FileSource
    fs = fsspec.filesystem("memory")
    fs.pipe("/remote-tests/vanishing.bin", bytes(1000))
    by_url = open_input("memory://remote-tests/vanishing.bin", random_access=True)
    by_file = FileSource(fs.open("/remote-tests/vanishing.bin", "rb"), "vanishing.bin")
    fs.rm("/remote-tests/vanishing.bin")
    for source in (by_url, by_file):
        targets = [memoryview(bytearray(10)), memoryview(bytearray(10))]
        with pytest.raises(FileNotFoundError, match="vanishing.bin"):
            source.fetch([(0, 10), (100, 10)], targets)


def test_position_follows_the_object_without_readinto():
    from arrowipc.ipc.sources import FileSource

    class ReadOnly:                            # read/seek/tell, no readinto
        def __init__(self, data):
            self.b = __import__("io").BytesIO(data)
            self.read, self.seek, self.tell = self.b.read, self.b.seek, self.b.tell

    f = ReadOnly(bytes(range(100)))
    source = FileSource(f, "read-only")
    target = memoryview(bytearray(5))
    source.fetch([(10, 5)], [target])
    assert bytes(target) == bytes(range(10, 15)) and source.pos == f.tell() == 15


def test_one_message_readers_close_the_connection_they_open(monkeypatch):
    from arrowipc.ipc import sources
    closed = []
    close = sources.FileSource.close
    monkeypatch.setattr(sources.FileSource, "close",
                        lambda self: (closed.append(self.owns), close(self)))
    url = "memory://remote-tests/schema.bin"
    fsspec.filesystem("memory").pipe(url, wide_table().schema.serialize().to_pybytes())
    assert ipc.read_schema(url).names == wide_table().schema.names
    assert ipc.read_message(url).type == "schema"
    assert closed == [True, True]


def test_file_url_and_pyarrow_filesystem(tmp_path):
    import pyarrow.fs as pa_fs
    table = arrowipc.table(wide_table())
    url = (tmp_path / "t.arrow").as_uri()
    with ipc.new_file(url, table.schema) as writer:
        write_wide(writer)
    assert pa.table(ipc.open_file(url).read_all()).equals(wide_table())
    local = pa_fs.LocalFileSystem()
    path = str(tmp_path / "p.arrows")
    with ipc.new_stream(path, table.schema, filesystem=local) as writer:
        writer.write_table(table)
    assert pa.table(ipc.open_stream(path, filesystem=local).read_all()).equals(wide_table())
    reader = ipc.open_file(url, options=ipc.IpcReadOptions(included_fields=[4]))
    assert pa.table(reader.read_all()).column(0).equals(wide_table().column(4))
    reader = ipc.open_file(str(tmp_path / "t.arrow"), filesystem=local,
                           options=ipc.IpcReadOptions(included_fields=[4]))
    assert pa.table(reader.read_all()).column(0).equals(wide_table().column(4))
    # the footer's read at the end (an object's first bytes are not asked for: as pyarrow),
    # then per batch its header and the chosen column
    assert reader.io_stats.read_requests == 1 + 2 * N_BATCHES


def test_batch_reads_of_a_file_on_a_concurrent_filesystem_go_out_at_once(tmp_path, monkeypatch):
    """get_batch from several threads (a scan's) on a filesystem whose reads are independent
    requests: one batch's fetch does not wait for another's (no reader lock around them)."""
    import pyarrow.fs as pa_fs
    from arrowipc.ipc import filesystems
    path = tmp_path / "t.arrow"
    path.write_bytes(file_bytes(wide_table()))
    reader = ipc.open_file(str(path), filesystem=pa_fs.LocalFileSystem(),
                           options=ipc.IpcReadOptions(included_fields=[2]))
    headers = {off for off, _, _ in reader.record_batch_blocks[:2]}
    both_reading = threading.Barrier(2, timeout=60)       # a hang guard, not a speed check
    original = filesystems._PyarrowRanges.read_at

    def read_at(self, offset, n):
        if offset in headers:
            both_reading.wait()         # each batch's header read waits for the other's
        return original(self, offset, n)
    monkeypatch.setattr(filesystems._PyarrowRanges, "read_at", read_at)
    results = [None, None]

    def get(i):
        results[i] = reader.get_batch(i)
    threads = [threading.Thread(target=get, args=(i,)) for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    expected = pa_ipc.open_file(pa.py_buffer(file_bytes(wide_table()))).read_all().column(2)
    assert [pa.record_batch(b).column(0) for b in results] == [
        expected.chunk(0), expected.chunk(1)]


# -- record batch headers copied in the footer (remote.HEADERS_KEY) ----------------------------
def statistics_file(n_batches: int = N_BATCHES) -> bytes:
    sink = pa.BufferOutputStream()
    with ipc.new_file(sink, arrowipc.table(wide_table()).schema, statistics=True) as writer:
        for batch in wide_table().to_batches(max_chunksize=-(-N_ROWS // n_batches)):
            writer.write_batch(arrowipc.record_batch(batch))
    return sink.getvalue().to_pybytes()


def test_statistics_file_copies_every_batch_header_in_its_footer():
    data = statistics_file()
    theirs = pa_ipc.open_file(pa.py_buffer(data))
    # pyarrow reads the file as it reads any: same batches, same per-batch metadata
    assert theirs.read_all().equals(wide_table())
    blocks = ipc.open_file(data).record_batch_blocks
    copies = decode_batch_headers(theirs.metadata, blocks)
    assert copies == [data[off:off + meta_len] for off, meta_len, _ in blocks]


def test_header_copies_are_bounded():
    many = 2 * BATCH_HEADERS_LIMIT // len(statistics_file(1)[8:]) + 400
    data = statistics_file(min(many, N_ROWS))
    meta = pa_ipc.open_file(pa.py_buffer(data)).metadata
    assert HEADERS_KEY.encode() not in meta and b"arrowipc:file_statistics" in meta
    f = CountingFile(data)
    reader = ipc.open_file(f, options=ipc.IpcReadOptions(included_fields=[3]))
    assert pa.table(reader.read_all()).column(0).equals(wide_table().column(3))


def test_projected_read_with_header_copies_fetches_only_buffers():
    data = statistics_file()
    f = CountingFile(data)
    reader = ipc.open_file(f, options=ipc.IpcReadOptions(included_fields=[3]))
    opened = len(f.reads)
    local = pa_ipc.open_file(pa.py_buffer(data))
    # the statistics pass and the read: no header fetched, one range per batch
    assert reader.batch_custom_metadata() == [
        local.get_batch_with_custom_metadata(i).custom_metadata for i in range(N_BATCHES)]
    assert pa.table(reader.read_all()).column(0).equals(wide_table().column(3))
    assert len(f.reads) - opened == N_BATCHES
    assert all(n == N_ROWS // N_BATCHES * 8 for _, n in f.reads[opened:])


def _copies_document(data: bytes) -> dict:
    import json
    return json.loads(pa_ipc.open_file(pa.py_buffer(data)).metadata[HEADERS_KEY.encode()])


def _changed(doc: dict, **changes) -> bytes:
    import json
    return json.dumps({**doc, **changes}).encode()


@pytest.mark.parametrize("change", [
    "not json", "[1]", "version 2", "no blocks", "blocks of another file", "short metadata",
    "not base64", "no metadata"])
def test_header_copies_that_do_not_fit_the_footer_are_ignored(change):
    doc = _copies_document(statistics_file())
    blocks = [[off + 8, body] for off, body in doc["blocks"]]
    value = {"not json": b"not json", "[1]": b"[1]",
             "version 2": _changed(doc, version=2),
             "no blocks": _changed({k: v for k, v in doc.items() if k != "blocks"}),
             "blocks of another file": _changed(doc, blocks=blocks),
             "short metadata": _changed(doc, metadata=doc["metadata"][:-4]),
             "not base64": _changed(doc, metadata="!" * len(doc["metadata"])),
             "no metadata": _changed({k: v for k, v in doc.items() if k != "metadata"})}[change]
    data = with_footer_metadata(statistics_file(), {HEADERS_KEY: value})
    f = CountingFile(data)
    reader = ipc.open_file(f, options=ipc.IpcReadOptions(included_fields=[3]))
    opened = len(f.reads)
    assert pa.table(reader.read_all()).column(0).equals(wide_table().column(3))
    assert len(f.reads) - opened == 2 * N_BATCHES      # the headers are read from the file


def test_writer_does_not_carry_header_copies_over_from_the_metadata_given():
    """A file rewritten with the footer metadata of another (arrowipc convert keeps it) gets
    no copies of the other's headers; with statistics it gets its own."""
    source = pa_ipc.open_file(pa.py_buffer(statistics_file())).metadata
    for statistics in (False, True):
        sink = pa.BufferOutputStream()
        with ipc.new_file(sink, arrowipc.table(wide_table()).schema, metadata=source,
                          statistics=statistics) as writer:
            for batch in wide_table().to_batches(max_chunksize=N_ROWS // 2):
                writer.write_batch(arrowipc.record_batch(batch))
        data = sink.getvalue().to_pybytes()
        meta = pa_ipc.open_file(pa.py_buffer(data)).metadata
        blocks = ipc.open_file(data).record_batch_blocks
        assert (HEADERS_KEY.encode() in meta) == statistics
        if statistics:
            assert decode_batch_headers(meta, blocks) == [
                data[off:off + meta_len] for off, meta_len, _ in blocks]


def _tampered_copies(data: bytes, batch: int) -> tuple[bytes, int]:
    """`data` with one byte of batch `batch`'s header copy changed (lengths kept), and the
    file offset of the first byte that differs from the real header."""
    import base64
    import json
    meta = pa_ipc.open_file(pa.py_buffer(data)).metadata
    blocks = ipc.open_file(data).record_batch_blocks
    doc = json.loads(meta[HEADERS_KEY.encode()])
    raw = bytearray(base64.b64decode(doc["metadata"]))
    at = sum(meta_len for _, meta_len, _ in blocks[:batch]) + 40
    raw[at] ^= 0x01
    value = json.dumps({**doc, "metadata": base64.b64encode(bytes(raw)).decode()})
    meta = dict(meta)
    meta[HEADERS_KEY.encode()] = value.encode()
    return with_footer_metadata(data, meta), blocks[batch][0] + 40


def test_full_validation_checks_header_copies_against_the_headers():
    rewritten = with_footer_metadata(statistics_file(), pa_ipc.open_file(
        pa.py_buffer(statistics_file())).metadata)
    # the copies of a file rewritten with the same batches are its headers: they pass
    reader = ipc.open_file(CountingFile(rewritten), options=ipc.IpcReadOptions(
        included_fields=[3], validate="full"))
    assert pa.table(reader.read_all()).column(0).equals(wide_table().column(3))
    tampered, at = _tampered_copies(statistics_file(), 5)
    with pytest.raises(ArrowInvalid, match=f"record batch 5's header copy in the footer "
                                           f"\\({HEADERS_KEY}\\) differs from its header at "
                                           f"byte {at}"):
        ipc.open_file(CountingFile(tampered), options=ipc.IpcReadOptions(validate="full"))


def test_filesystem_of_another_kind_is_refused():
    with pytest.raises(TypeError, match="fsspec filesystem or a pyarrow filesystem"):
        ipc.open_file("x.arrow", filesystem=object())


# -- S3: a local moto server -------------------------------------------------------------------
@pytest.fixture(scope="module")
def s3():
    pytest.importorskip("s3fs")
    pytest.importorskip("moto")
    from remote_servers import s3_filesystem, s3_server
    with s3_server() as (endpoint, requests):
        yield s3_filesystem(endpoint), requests


def test_s3_write_then_projected_read_on_the_wire(s3, wide_file):
    from remote_servers import BUCKET
    fs, requests = s3
    url = f"s3://{BUCKET}/wide.arrow"
    with ipc.new_file(url, arrowipc.table(wide_table()).schema, filesystem=fs) as writer:
        write_wide(writer)
    size = fs.size(url)
    requests.clear()
    reader = ipc.open_file(url, filesystem=fs, options=ipc.IpcReadOptions(included_fields=[3]))
    assert pa.table(reader.read_all()).column(0).equals(wide_table().column(3))
    gets = requests.gets("/wide.arrow")
    # one GetObject of the object's end opens it (no HEAD, no read of its first bytes) and
    # brings the footer; then per batch its header and the chosen column
    assert requests.log[0][0] == "GET" and requests.log[0][2] == f"bytes=-{64 << 10}"
    assert len(requests.log) == len(gets) == reader.io_stats.read_requests == 1 + 2 * N_BATCHES
    assert requests.get_bytes("/wide.arrow") == reader.io_stats.bytes_read
    assert N_ROWS * 8 <= reader.io_stats.bytes_read < N_ROWS * 8 + (80 << 10)
    assert all(rng is not None for _, _, rng, _ in gets)     # never the whole object
    assert reader.io_stats.bytes_read < size / 6


def test_s3_small_file_is_read_in_one_request(s3):
    """An object no larger than the opening read of its end is read by that one request."""
    from remote_servers import BUCKET
    fs, requests = s3
    small = pa.table({"x": np.arange(100), "s": [str(i) for i in range(100)]})
    url = f"s3://{BUCKET}/small.arrow"
    fs.pipe(url, file_bytes(small))
    requests.clear()
    reader = ipc.open_file(url, filesystem=fs)
    assert pa.table(reader.read_all()).equals(small)
    assert [entry[0] for entry in requests.log] == ["GET"]
    assert reader.io_stats.read_requests == 1


def _counting_get_objects(fs, monkeypatch):
    calls = []
    original = fs._call_s3

    async def counting(method, *args, **kwargs):
        calls.append((method, kwargs.get("Range")))
        return await original(method, *args, **kwargs)
    monkeypatch.setattr(fs, "_call_s3", counting)
    return calls


def test_s3_ranges_are_read_by_presigned_urls(s3, wide_file, monkeypatch):
    """An object is opened, and its ranges read, by plain GETs of a URL presigned once (a
    GetObject through s3fs costs four times the Python time): no GetObject at all; their
    answers are checked as a GetObject's are."""
    from remote_servers import BUCKET
    fs, requests = s3
    url = f"s3://{BUCKET}/presigned.arrow"
    fs.pipe(url, wide_file)
    calls = _counting_get_objects(fs, monkeypatch)
    requests.clear()
    reader = ipc.open_file(url, filesystem=fs, options=ipc.IpcReadOptions(included_fields=[2]))
    assert pa.table(reader.read_all()).column(0).equals(wide_table().column(2))
    assert calls == []
    gets = requests.gets("/presigned.arrow")
    assert gets[0][2] == f"bytes=-{64 << 10}" and len(gets) == 1 + 2 * N_BATCHES


def test_s3_range_a_presigned_url_cannot_read_is_asked_by_getobject(s3, wide_file, monkeypatch):
    """A presigned URL that is refused (expired, or a store that takes none) costs a request:
    the range is then asked through s3fs, and read."""
    from remote_servers import BUCKET
    from arrowipc.ipc import object_reads
    fs, _ = s3
    url = f"s3://{BUCKET}/refused.arrow"
    fs.pipe(url, wide_file)

    async def refused(fs, bucket, key, version_id):
        return fs.client_kwargs["endpoint_url"] + f"/{BUCKET}/no-such-object"
    monkeypatch.setattr(object_reads, "_presigned_url", refused)
    calls = _counting_get_objects(fs, monkeypatch)
    reader = ipc.open_file(url, filesystem=fs, options=ipc.IpcReadOptions(included_fields=[2]))
    assert pa.table(reader.read_all()).column(0).equals(wide_table().column(2))
    assert calls[0] == ("get_object", f"bytes=-{64 << 10}")      # opened by a GetObject
    assert len(calls) == 1 + 2 * N_BATCHES


def test_s3_batch_headers_read_first_are_not_fetched_again(s3, wide_file):
    """batch_custom_metadata() (a scan's statistics pass) fetches every batch's header at once;
    the projected reads that follow use them: the read costs no request more than without."""
    from remote_servers import BUCKET
    fs, requests = s3
    url = f"s3://{BUCKET}/headers.arrow"
    fs.pipe(url, wide_file)
    requests.clear()
    reader = ipc.open_file(url, filesystem=fs, options=ipc.IpcReadOptions(included_fields=[1]))
    local = pa_ipc.open_file(pa.py_buffer(wide_file))
    assert reader.batch_custom_metadata() == [
        local.get_batch_with_custom_metadata(i).custom_metadata for i in range(N_BATCHES)]
    assert pa.table(reader.read_all()).column(0).equals(wide_table().column(1))
    assert len(requests.gets("/headers.arrow")) == 1 + 2 * N_BATCHES


def test_s3_dataset_projected_scan_and_filtered_count_fetch_one_range_per_batch(s3):
    """A dataset written with statistics (write_dataset's default): the object's opening read
    brings every batch header with the footer, so reading one column, or counting on it, costs
    the opening GET and one range GET per batch, each exactly the column's bytes."""
    import pyarrow.dataset as pa_ds
    import arrowipc.dataset as ads
    from remote_servers import BUCKET
    fs, requests = s3
    table = pa.table({"part": np.arange(N_ROWS) % 2, "a": np.arange(N_ROWS, dtype=np.int64),
                      "b": np.arange(N_ROWS, dtype=np.int64) % 1000, "c": np.ones(N_ROWS)})
    url = f"s3://{BUCKET}/ds"
    ads.write_dataset(arrowipc.table(table), url, format="ipc", partitioning=["part"],
                      partitioning_flavor="hive", max_rows_per_group=N_ROWS // 8,
                      filesystem=fs)
    files = sorted(fs.find(f"{BUCKET}/ds"))
    n_batches = sum(ipc.open_file(f"s3://{f}", filesystem=fs).num_record_batches
                    for f in files)
    expected = pa_ds.dataset(pa.table(table))
    data = ads.dataset(url, format="ipc", partitioning="hive", filesystem=fs)
    for run, check in [
            (lambda: data.to_table(columns=["a"]),
             lambda got: sorted(pa.table(got).column("a").to_pylist()) ==
             sorted(expected.to_table(columns=["a"]).column("a").to_pylist())),
            (lambda: data.count_rows(filter=ads.field("b") < 10),
             lambda got: got == expected.count_rows(filter=pa_ds.field("b") < 10))]:
        requests.clear()
        assert check(run())
        gets = requests.gets(".arrow")
        # each file's opening read (but a reader kept from discovery), one range per batch
        opening = [r for _, _, r, _ in gets if r.startswith("bytes=-")]
        assert len(opening) <= len(files) and len(gets) == len(opening) + n_batches
        ranges = [int(r.split("-")[1]) - int(r.split("=")[1].split("-")[0]) + 1
                  for _, _, r, _ in gets if not r.startswith("bytes=-")]
        assert sorted(ranges) == sorted(ipc.open_file(f"s3://{f}", filesystem=fs).get_batch(i)
                                        .num_rows * 8 for f in files
                                        for i in range(ipc.open_file(
                                            f"s3://{f}", filesystem=fs).num_record_batches))


def test_s3_dataset_full_scan_fetches_each_files_adjacent_batches_in_one_range(s3):
    """A scan reading every column of a file behind a network link fetches the file's
    adjacent batches together: their bodies (and the headers between them) are one range,
    one request per file after the opening read, not one per batch; head() of a few rows
    reads no batch ahead."""
    import arrowipc.dataset as ads
    from remote_servers import BUCKET
    fs, requests = s3
    table = pa.table({"part": np.arange(N_ROWS) % 2, "a": np.arange(N_ROWS, dtype=np.int64),
                      "s": [f"v{i % 97}" for i in range(N_ROWS)]})
    url = f"s3://{BUCKET}/whole"
    ads.write_dataset(arrowipc.table(table), url, format="ipc", partitioning=["part"],
                      partitioning_flavor="hive", max_rows_per_group=N_ROWS // 8,
                      filesystem=fs)
    files = sorted(fs.find(f"{BUCKET}/whole"))
    assert all(ipc.open_file(f"s3://{f}", filesystem=fs).num_record_batches > 1 for f in files)
    data = ads.dataset(url, format="ipc", partitioning="hive", filesystem=fs)
    requests.clear()
    got = pa.table(data.to_table()).sort_by("a")
    assert got.column("a").to_pylist() == list(range(N_ROWS))
    assert got.column("s").to_pylist() == [f"v{i % 97}" for i in range(N_ROWS)]
    gets = requests.gets(".arrow")
    opening = [r for _, _, r, _ in gets if r.startswith("bytes=-")]
    assert len(opening) <= len(files) and len(gets) == len(opening) + len(files)
    requests.clear()
    assert pa.table(data.head(3)).column("a").to_pylist() == [0, 2, 4]
    assert len([r for _, _, r, _ in requests.gets(".arrow")
                if not r.startswith("bytes=-")]) == 1


def _s3_dataset(fs, name, files=2):
    """`files` objects written by write_dataset (statistics, header copies) under BUCKET/name;
    (dataset URL, the table written)."""
    import arrowipc.dataset as ads
    from remote_servers import BUCKET
    table = pa.table({"part": np.arange(N_ROWS) % files, "a": np.arange(N_ROWS, dtype=np.int64),
                      "b": np.arange(N_ROWS, dtype=np.int64) % 1000})
    url = f"s3://{BUCKET}/{name}"
    ads.write_dataset(arrowipc.table(table), url, format="ipc", partitioning=["part"],
                      partitioning_flavor="hive", max_rows_per_group=N_ROWS // 8,
                      filesystem=fs)
    return url, table


def _openings(requests):
    return [r for _, _, r, _ in requests.gets(".arrow") if r.startswith("bytes=-")]


def test_s3_dataset_later_scans_open_no_object_again(s3):
    """A dataset object keeps each remote file's opening (its pinned version and the footer
    its opening read brought): a later scan, count or projection opens no object again, and
    reads only the ranges it needs, each still checked against the version opened."""
    import pyarrow.dataset as pa_ds
    import arrowipc.dataset as ads
    fs, requests = s3
    url, table = _s3_dataset(fs, "kept")
    expected = pa_ds.dataset(table)
    data = ads.dataset(url, format="ipc", partitioning="hive", filesystem=fs)
    assert data.count_rows(filter=ads.field("b") < 10) == \
        expected.count_rows(filter=pa_ds.field("b") < 10)
    for run, check in [
            (lambda: data.count_rows(filter=ads.field("b") < 10),
             lambda got: got == expected.count_rows(filter=pa_ds.field("b") < 10)),
            (lambda: data.to_table(columns=["a"]),
             lambda got: sorted(pa.table(got).column("a").to_pylist()) == list(range(N_ROWS))),
            (lambda: data.count_rows(), lambda got: got == N_ROWS),
            (lambda: data.to_table(filter=ads.field("part") == 1),
             lambda got: got.num_rows == N_ROWS // 2)]:
        requests.clear()
        assert check(run())
        assert _openings(requests) == []
    # cache_metadata=False (pyarrow's switch): every object opened again
    requests.clear()
    data.scanner(columns=["a"], cache_metadata=False).to_table()
    assert len(_openings(requests)) == 2


@pytest.mark.parametrize("scan", ["to_table", "count_rows", "take"])
def test_s3_object_replaced_after_a_scan_is_read_anew(s3, scan):
    """An object replaced after a scan kept its opening: the next scan's ranges must match
    the version kept (If-Match), which the new object refuses; the file is then opened anew
    and read, so the scan gives the new object's rows, as pyarrow's (which opens every
    object at every scan) would."""
    import pyarrow.dataset as pa_ds
    import arrowipc.dataset as ads
    fs, requests = s3
    url, table = _s3_dataset(fs, f"replaced-{scan}")
    data = ads.dataset(url, format="ipc", partitioning="hive", filesystem=fs)
    assert data.to_table(columns=["a", "b"]).num_rows == N_ROWS
    victim = data.files[0]
    with ipc.open_file(victim, filesystem=fs) as reader:
        old = pa.table(reader.read_all())
    # the same layout, other values: only the version check tells them apart
    new = old.set_column(0, "a", pa.array(old.column("a").to_numpy() + 10**9))
    new = new.set_column(1, "b", pa.array(np.zeros(new.num_rows, dtype=np.int64)))
    fs.pipe(victim, file_bytes(new))
    theirs = pa_ds.dataset([victim.removeprefix("s3://"), data.files[1].removeprefix("s3://")],
                           format="ipc", filesystem=fs)
    requests.clear()
    if scan == "to_table":
        got = pa.table(data.to_table(columns=["a"])).column("a").to_pylist()
        assert sorted(got) == sorted(theirs.to_table(columns=["a"]).column("a").to_pylist())
    elif scan == "count_rows":
        assert data.count_rows(filter=ads.field("b") < 10) == \
            theirs.count_rows(filter=pa_ds.field("b") < 10)
    else:
        rows = [0, 1, N_ROWS - 1]
        assert pa.table(data.take(rows, columns=["a"])).equals(
            theirs.take(rows, columns=["a"]))
    assert len(_openings(requests)) == 1            # the replaced object, opened anew
    requests.clear()
    data.to_table(columns=["a"])
    assert _openings(requests) == []                # and its new opening kept


def test_kept_openings_are_bounded(s3, monkeypatch):
    """Past the bytes the kept openings may hold in all, a file is opened at each scan."""
    import arrowipc.dataset as ads
    from arrowipc.dataset import fragments
    fs, requests = s3
    url, _ = _s3_dataset(fs, "bounded")
    monkeypatch.setattr(fragments, "KEPT_OPENINGS_BYTES", 0)
    data = ads.dataset(url, format="ipc", partitioning="hive", filesystem=fs)
    data.to_table(columns=["a"])
    requests.clear()
    assert data.to_table(columns=["a"]).num_rows == N_ROWS
    assert len(_openings(requests)) == 2


def test_s3_object_names_what_is_wrong_when_it_is_not_a_file(s3):
    """The first bytes of an object are not read to open it (as pyarrow never checks them),
    but when its end is not a file's trailer they say what it is; at full validation they are
    checked, as for a local file."""
    from remote_servers import BUCKET
    fs, _ = s3
    stream = pa.BufferOutputStream()
    with pa_ipc.new_stream(stream, wide_table().schema) as writer:
        writer.write_table(wide_table().slice(0, 10))
    fs.pipe(f"s3://{BUCKET}/a-stream.arrow", stream.getvalue().to_pybytes())
    with pytest.raises(ArrowInvalid, match="it starts as an IPC stream does .* read it with "
                                           "ipc.open_stream"):
        ipc.open_file(f"s3://{BUCKET}/a-stream.arrow", filesystem=fs)
    # a file whose first bytes are wrong and whose end is right: read as pyarrow reads it
    table = pa.table({"x": np.arange(20_000)})
    bad_head = b"XXXXXX" + file_bytes(table)[6:]
    fs.pipe(f"s3://{BUCKET}/bad-head.arrow", bad_head)
    assert pa.ipc.open_file(pa.py_buffer(bad_head)).read_all().equals(table)
    assert pa.table(ipc.open_file(f"s3://{BUCKET}/bad-head.arrow",
                                  filesystem=fs).read_all()).equals(table)
    with pytest.raises(ArrowInvalid, match="expected the magic 'ARROW1' or 'ALKAID1' at byte 0, "
                                           "found 58 58 58 58 58 58"):
        ipc.open_file(f"s3://{BUCKET}/bad-head.arrow", filesystem=fs,
                      options=ipc.IpcReadOptions(validate="full"))


def test_s3_url_through_the_environment(s3, monkeypatch):
    from remote_servers import BUCKET, CREDENTIALS
    fs, requests = s3
    endpoint = fs.client_kwargs["endpoint_url"]
    monkeypatch.setenv("AWS_ENDPOINT_URL", endpoint)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", CREDENTIALS["key"])
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", CREDENTIALS["secret"])
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    import s3fs
    s3fs.S3FileSystem.clear_instance_cache()
    table = arrowipc.table(wide_table())
    with ipc.new_stream(f"s3://{BUCKET}/env.arrows", table.schema) as writer:
        writer.write_table(table)
    assert pa.table(ipc.open_stream(f"s3://{BUCKET}/env.arrows").read_all()).equals(wide_table())
    s3fs.S3FileSystem.clear_instance_cache()


def test_s3_failed_write_leaves_no_object(s3):
    from remote_servers import BUCKET
    fs, requests = s3
    table = arrowipc.table(wide_table())
    for opener in (ipc.new_file, ipc.new_stream):
        url = f"s3://{BUCKET}/failed-{opener.__name__}.arrow"
        with pytest.raises(KeyError):
            with opener(url, table.schema, filesystem=fs) as writer:
                writer.write_table(table)
                raise KeyError("stop")
        assert not fs.exists(url)
        assert not fs.list_multipart_uploads(BUCKET)


def test_s3_truncated_object_reads_like_a_truncated_file(s3, wide_file, tmp_path):
    from remote_servers import BUCKET
    fs, _ = s3
    for cut in (len(wide_file) - 3, len(wide_file) // 2):
        fs.pipe(f"{BUCKET}/cut.arrow", wide_file[:cut])
        local = tmp_path / "cut.arrow"
        local.write_bytes(wide_file[:cut])
        with pytest.raises(ArrowInvalid) as expected:
            ipc.open_file(str(local)).read_all()
        with pytest.raises(ArrowInvalid) as got:
            ipc.open_file(f"s3://{BUCKET}/cut.arrow", filesystem=fs).read_all()
        assert str(got.value) == str(expected.value)


def test_s3_missing_object_is_an_oserror_with_the_url(s3):
    from remote_servers import BUCKET
    fs, _ = s3
    url = f"s3://{BUCKET}/missing.arrow"
    with pytest.raises(FileNotFoundError, match=url):
        ipc.open_file(url, filesystem=fs)


# -- HTTP with Range support -------------------------------------------------------------------
def _logged_gets(requests, path: str, expected: int) -> list:
    """The GETs of `path` the server logged, once it has logged `expected` of them: a server
    thread may log a request just after the client has its response (the wait is a hang guard
    that gives up with what was logged)."""
    deadline = time.monotonic() + 30
    while len(requests.gets(path)) < expected and time.monotonic() < deadline:
        time.sleep(0.01)
    return requests.gets(path)


def test_http_projected_read_uses_ranges(wide_file):
    from remote_servers import http_server
    pytest.importorskip("aiohttp")
    with http_server({"/wide.arrow": wide_file}) as (base, requests):
        reader = ipc.open_file(f"{base}/wide.arrow",
                               options=ipc.IpcReadOptions(included_fields=[6]))
        assert pa.table(reader.read_all()).column(0).equals(wide_table().column(6))
        gets = _logged_gets(requests, "/wide.arrow", reader.io_stats.read_requests)
        # the footer's read at the end (not the first bytes: as pyarrow), then per batch its
        # header and the chosen column
        assert len(gets) == reader.io_stats.read_requests == 1 + 2 * N_BATCHES
        assert sum(g[3] for g in gets) == reader.io_stats.bytes_read < len(wide_file) / 6
        assert all(g[2] is not None for g in gets)
        stream = pa.BufferOutputStream()
        with pa_ipc.new_stream(stream, wide_table().schema) as writer:
            writer.write_table(wide_table())
        requests_files = {"/wide.arrows": stream.getvalue().to_pybytes()}
    with http_server(requests_files) as (base, _):
        assert pa.table(ipc.open_stream(f"{base}/wide.arrows").read_all()).equals(wide_table())


def test_http_errors_are_oserrors_with_the_url():
    from remote_servers import http_server
    pytest.importorskip("aiohttp")
    with http_server({}) as (base, _):
        url = f"{base}/nothing.arrow"
        with pytest.raises(FileNotFoundError, match=url):
            ipc.open_file(url)
    # the server is gone: connection refused
    with pytest.raises(OSError, match=url.replace(".", r"\.")):
        ipc.open_file(url)


def test_every_reading_entry_point_takes_a_url(tmp_path):
    """recover, open_file(recover=True), read_schema, read_message, MessageReader and
    read_tensor read URLs as open_file does (memory:// and file:// here, http below)."""
    import pyarrow.fs as pa_fs
    table = wide_table().slice(0, 1000)
    stream = pa.BufferOutputStream()
    with pa_ipc.new_stream(stream, table.schema) as writer:
        writer.write_table(table)
    stream_bytes = stream.getvalue().to_pybytes()
    cut = file_bytes(table)[:-100]                       # the footer is gone
    tensor = pa.BufferOutputStream()
    pa_ipc.write_tensor(pa.Tensor.from_numpy(np.arange(12.0).reshape(3, 4)), tensor)
    fs = fsspec.filesystem("memory")
    for name, data in [("s.arrows", stream_bytes), ("cut.arrow", cut),
                       ("t.tensor", tensor.getvalue().to_pybytes())]:
        fs.pipe_file(f"/jvmremote/{name}", data)
        (tmp_path / name).write_bytes(data)
    for base in ["memory://jvmremote", "file://" + str(tmp_path)]:
        assert ipc.read_schema(f"{base}/s.arrows").equals(arrowipc.schema(table.schema))
        assert ipc.read_message(f"{base}/s.arrows").type == "schema"
        assert [m.type for m in ipc.MessageReader.open_stream(f"{base}/s.arrows")] == [
            "schema", "record batch"]
        assert ipc.read_tensor(f"{base}/t.tensor").to_numpy().tolist() == np.arange(
            12.0).reshape(3, 4).tolist()
        reader = ipc.open_file(f"{base}/cut.arrow", recover=True)
        assert reader.recovery.used_footer is False
        assert pa.table(reader.read_all()).equals(table)
        out = tmp_path / f"fixed-{base[:4]}.arrow"
        report = ipc.recover(f"{base}/cut.arrow", str(out))
        assert report.num_batches == 1 and pa_ipc.open_file(str(out)).read_all().equals(table)
    local = pa_fs.LocalFileSystem()
    assert ipc.open_file(str(tmp_path / "cut.arrow"), recover=True,
                         filesystem=local).recovery.num_batches == 1
    assert ipc.recover(str(tmp_path / "cut.arrow"), filesystem=local).num_rows == 1000


def test_reading_entry_points_over_http():
    from remote_servers import http_server
    pytest.importorskip("aiohttp")
    table = wide_table().slice(0, 1000)
    stream = pa.BufferOutputStream()
    with pa_ipc.new_stream(stream, table.schema) as writer:
        writer.write_table(table)
    with http_server({"/s.arrows": stream.getvalue().to_pybytes(),
                      "/cut.arrow": file_bytes(table)[:-100]}) as (base, _):
        assert ipc.read_schema(f"{base}/s.arrows").equals(arrowipc.schema(table.schema))
        assert ipc.recover(f"{base}/cut.arrow").num_rows == 1000
        missing = f"{base}/missing.arrows"
        with pytest.raises(FileNotFoundError, match=missing):
            ipc.read_schema(missing)


def test_spark_inputs_take_remote_urls():
    from arrowipc.spark import inputs
    table = arrowipc.table(wide_table())
    with ipc.new_file("memory://spark-in/one.arrow", table.schema) as writer:
        write_wide(writer)
    with ipc.new_stream("memory://spark-in/two.arrows", table.schema) as writer:
        writer.write_table(table)
    paths = inputs.find_input_paths("memory://spark-in")
    assert paths == ["memory://spark-in/one.arrow", "memory://spark-in/two.arrows"]
    assert inputs.find_input_paths("memory://spark-in/*.arrow") == paths[:1]
    found = [inputs.detect_format(p) for p in paths]
    assert [f.is_file_format for f in found] == [True, False]
    assert all(inputs.read_input_schema(f).names == wide_table().schema.names for f in found)
    ranges = inputs.plan_ranges(found, rows_per_partition=N_ROWS // 2)
    assert [(r.start, r.end) for r in ranges] == [(0, N_BATCHES // 2), (N_BATCHES // 2, N_BATCHES),
                                                  (0, None)]


@pytest.mark.parametrize("damage", ["metadata length", "body length"])
def test_projected_iteration_yields_the_batches_before_a_damaged_one(wide_file, damage):
    off, meta_len, _ = ipc.open_file(wide_file).record_batch_blocks[3]
    data = bytearray(wide_file)
    if damage == "metadata length":
        data[off + 4:off + 8] = (1 << 30).to_bytes(4, "little")
    else:                                    # the header claims more body than the block holds
        data[off + 8:off + meta_len] = bytes(meta_len - 8)

    def run(source):
        rows = []
        with pytest.raises(ArrowInvalid) as error:
            for batch in ipc.open_file(source, options=ipc.IpcReadOptions(included_fields=[2])):
                rows.append(batch.num_rows)
        return rows, str(error.value)

    expected = run(bytes(data))
    assert expected[0] == [N_ROWS // N_BATCHES] * 3
    assert run(CountingFile(bytes(data))) == expected


def test_durable_is_for_local_paths_only():
    table = arrowipc.table(wide_table())
    with pytest.raises(ValueError, match="durable=True needs a path sink"):
        ipc.new_file("memory://remote-tests/durable.arrow", table.schema, durable=True)
    assert not fsspec.filesystem("memory").exists("/remote-tests/durable.arrow")


# -- HTTP servers that misbehave -----------------------------------------------------------------
# The reader pins the object's version when it opens it (size, ETag, Last-Modified) and checks
# every answer; network failures are OSErrors naming the URL; timeouts are IpcReadOptions.


def other_version(data: bytes) -> bytes:
    """The same file (same layout, same size) with other values: c0 of every batch negated."""
    import pyarrow.compute as pc
    table = wide_table()
    changed = table.set_column(0, "c0", pc.negate(table.column(0)))
    out = file_bytes(changed)
    assert len(out) == len(data) and out != data
    return out


def misbehaving(files, **bad):
    from remote_servers import Misbehaviour, http_server
    pytest.importorskip("aiohttp")
    return http_server(files, etags=bad.pop("etags", True), misbehaviour=Misbehaviour(**bad))




@pytest.mark.parametrize("if_match", [False, True])
def test_http_object_replaced_between_requests_is_refused(wide_file, if_match):
    """F4: the file's footer from one version, its batches from another, must not mix; with
    If-Match honoured the server refuses (412), without it the answer's ETag gives it away."""
    files = {"/wide.arrow": wide_file}
    with misbehaving(files, if_match=if_match) as (base, _):
        url = f"{base}/wide.arrow"
        reader = ipc.open_file(url, options=ipc.IpcReadOptions(included_fields=[0]))
        first = reader.get_batch(0)
        files["/wide.arrow"] = other_version(wide_file)
        with pytest.raises(ArrowIOError) as error:
            reader.get_batch(1)
    assert isinstance(error.value, OSError)
    assert str(error.value).startswith(f"{url}: ")
    assert "the object changed while it was read" in str(error.value)
    # "HTTP 412", not "412": an ETag's hex digits may hold those three
    assert ("HTTP 412" in str(error.value)) == if_match
    assert pa.record_batch(first).column(0).equals(
        wide_table().column(0).combine_chunks().slice(0, N_ROWS // N_BATCHES))


def test_http_object_replaced_is_told_by_last_modified_without_etag(wide_file):
    from remote_servers import http_server
    pytest.importorskip("aiohttp")
    replacement = other_version(wide_file)
    stamps = {wide_file: "Mon, 02 Nov 2026 10:00:00 GMT",
              replacement: "Mon, 02 Nov 2026 10:00:05 GMT"}
    files = {"/wide.arrow": wide_file}
    with http_server(files, last_modified=stamps.__getitem__) as (base, _):
        reader = ipc.open_file(f"{base}/wide.arrow")
        files["/wide.arrow"] = replacement
        with pytest.raises(ArrowIOError, match=f"{base}/wide.arrow: the answer to bytes .* came "
                                               f"with Last-Modified Mon, 02 Nov 2026 10:00:05 GMT, "
                                               f"the object was opened with Last-Modified Mon, "
                                               f"02 Nov 2026 10:00:00 GMT"):
            reader.read_all()


def test_http_content_range_of_other_bytes_is_refused(wide_file):
    with misbehaving({"/wide.arrow": wide_file}, range_shift=64) as (base, _):
        url = f"{base}/wide.arrow"
        # the reader's first read: the footer's, at the end (the first bytes are not asked)
        first, size = len(wide_file) - (4 << 10), len(wide_file)
        with pytest.raises(ArrowIOError, match=f"{url}: the answer to bytes {first}-{size - 1} "
                                               f"holds other bytes \\(Content-Range bytes "
                                               f"{first + 64}-{size - 1}/{size}\\)"):
            ipc.open_file(url)


def test_http_server_ignoring_range_is_read_from_its_whole_answer(wide_file):
    """A 200 with the whole object to a Range request is not a truncated file: the reader takes
    the bytes it needs from it, once, and asks no more."""
    with misbehaving({"/wide.arrow": wide_file}, ignore_range=True) as (base, requests):
        reader = ipc.open_file(f"{base}/wide.arrow",
                               options=ipc.IpcReadOptions(included_fields=[5]))
        assert pa.table(reader.read_all()).column(0).equals(wide_table().column(5))
        assert len(requests.gets("/wide.arrow")) == 1


def test_http_server_ignoring_range_with_another_version_is_refused(wide_file):
    files = {"/wide.arrow": wide_file + b"\0" * 8}
    with misbehaving(files, ignore_range=True, etags=False) as (base, _):
        url = f"{base}/wide.arrow"
        from arrowipc.ipc.filesystems import open_input
        source = open_input(url, random_access=True)   # the HEAD pins the size
        files["/wide.arrow"] = wide_file
        with pytest.raises(ArrowIOError, match=f"{url}: the answer to bytes 0-7 is a whole object "
                                               f"of {len(wide_file)} bytes, the object was opened "
                                               f"with {len(wide_file) + 8}"):
            source.read_at(0, 8)


def stream_bytes() -> bytes:
    stream = pa.BufferOutputStream()
    with pa_ipc.new_stream(stream, wide_table().schema) as writer:
        writer.write_table(wide_table())
    return stream.getvalue().to_pybytes()


def test_http_body_cut_mid_way_is_an_oserror_naming_the_url(wide_file):
    """F11: aiohttp's own exceptions (a body shorter than its Content-Length) escaped the
    stream readers without the URL."""
    files = {"/wide.arrow": wide_file, "/wide.arrows": stream_bytes()}
    with misbehaving(files, cut_body=5) as (base, _):
        stream = f"{base}/wide.arrows"
        for read in (lambda: ipc.open_stream(stream).read_all(), lambda: ipc.read_schema(stream),
                     lambda: list(ipc.MessageReader.open_stream(stream))):
            with pytest.raises(OSError, match=stream.replace(".", r"\.")):
                read()
        last = len(wide_file) - (4 << 10)       # the footer's read, the reader's first
        with pytest.raises(OSError, match=f"{base}/wide.arrow: .*bytes {last}-"):
            ipc.open_file(f"{base}/wide.arrow")


def test_http_without_content_length_is_read(wide_file):
    """F11: no Content-Length (the body ends with the connection) was a TypeError for the file
    format; the file and stream readers take such objects whole, in one request."""
    files = {"/wide.arrow": wide_file, "/wide.arrows": stream_bytes()}
    with misbehaving(files, content_length=False) as (base, requests):
        assert pa.table(ipc.open_file(f"{base}/wide.arrow").read_all()).equals(wide_table())
        assert len(requests.gets("/wide.arrow")) == 1
        assert pa.table(ipc.open_stream(f"{base}/wide.arrows").read_all()).equals(wide_table())
        assert ipc.read_schema(f"{base}/wide.arrows").names == wide_table().schema.names


@pytest.mark.parametrize("entry", ["open_file", "open_stream", "read_schema"])
def test_http_server_errors_are_oserrors_naming_the_url(wide_file, entry):
    files = {"/wide.arrow": wide_file, "/wide.arrows": stream_bytes()}
    with misbehaving(files, get_status=500) as (base, _):
        url = f"{base}/wide.arrow" + ("" if entry == "open_file" else "s")
        with pytest.raises(OSError, match=f"{url}: HTTP 500 Internal Server Error"):
            if entry == "open_file":
                ipc.open_file(url)
            elif entry == "open_stream":
                ipc.open_stream(url)
            else:
                ipc.read_schema(url)
    # gone: connection refused, through the stream path too
    with pytest.raises(OSError, match=url.replace(".", r"\.")):
        ipc.read_schema(url) if entry == "read_schema" else ipc.open_stream(url)


@pytest.mark.parametrize("entry", ["open_file", "open_stream"])
def test_http_dripping_server_times_out_with_the_read_timeout(wide_file, entry):
    """F11: a server sending a byte every 0.2 s held each request for aiohttp's 300 s; the read
    timeout bounds the wait for every MiB of a body (or the whole of a smaller one)."""
    files = {"/wide.arrow": wide_file, "/wide.arrows": stream_bytes()}
    options = ipc.IpcReadOptions(read_timeout=0.5, connect_timeout=5)
    with misbehaving(files, drip=0.2) as (base, _):
        url = f"{base}/wide.arrow" + ("" if entry == "open_file" else "s")
        opener = ipc.open_file if entry == "open_file" else ipc.open_stream
        _, error = in_thread(lambda: opener(url, options=options))
    assert isinstance(error, TimeoutError), error
    assert str(error).startswith(f"{url}: no answer") and "read_timeout=0.5" in str(error)


@pytest.mark.parametrize("entry", ["open_file", "open_stream"])
def test_http_server_that_stops_sending_times_out_with_the_read_timeout(wide_file, entry):
    """A server that sends the headers and part of a body, then nothing (the connection left
    open), fails the read after read_timeout with a TimeoutError naming the URL."""
    files = {"/wide.arrow": wide_file, "/wide.arrows": stream_bytes()}
    options = ipc.IpcReadOptions(read_timeout=0.5, connect_timeout=5)
    with misbehaving(files, stall_body=100) as (base, _):
        url = f"{base}/wide.arrow" + ("" if entry == "open_file" else "s")
        opener = ipc.open_file if entry == "open_file" else ipc.open_stream
        _, error = in_thread(lambda: opener(url, options=options).read_all())
    assert isinstance(error, TimeoutError), error
    assert str(error).startswith(f"{url}: no answer") and "read_timeout=0.5" in str(error)


@contextlib.contextmanager
def silent_server():
    """The base URL of a server that accepts connections and never answers a request."""
    server = socket.create_server(("127.0.0.1", 0))
    accepted: list[socket.socket] = []

    def accept():
        while True:
            try:
                accepted.append(server.accept()[0])   # held open, never read nor answered
            except OSError:                            # closed: the test is over
                return
    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.getsockname()[1]}"
    finally:
        server.close()
        for conn in accepted:
            conn.close()


@pytest.mark.parametrize("entry", ["open_file", "open_stream"])
def test_http_server_that_never_answers_times_out_with_the_read_timeout(entry):
    """Connected, the request sent, no response headers ever: read_timeout bounds the wait."""
    pytest.importorskip("aiohttp")
    options = ipc.IpcReadOptions(read_timeout=0.5, connect_timeout=5)
    with silent_server() as base:
        url = f"{base}/wide.arrow" + ("" if entry == "open_file" else "s")
        opener = ipc.open_file if entry == "open_file" else ipc.open_stream
        _, error = in_thread(lambda: opener(url, options=options))
    assert isinstance(error, TimeoutError), error
    assert str(error).startswith(f"{url}: no answer") and "read_timeout=0.5" in str(error)


@contextlib.contextmanager
def unconnectable_server():
    """The base URL of a local listening socket whose accept queue is full and which never
    accepts: the kernel drops further connection attempts (SYNs), so connecting hangs, as to a
    host that does not answer. Skips where the kernel completes every connection anyway."""
    import select
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(0)
    address = server.getsockname()
    fillers: list[socket.socket] = []
    try:
        for _ in range(64):
            client = socket.socket()
            client.setblocking(False)
            fillers.append(client)
            try:
                client.connect(address)
            except BlockingIOError:
                pass
            _, done, _ = select.select([], [client], [], 0.3)
            if not done:                    # this attempt hangs: the queue is full
                break
        else:
            pytest.skip("the kernel completes every connection to a listener that never accepts")
        yield f"http://{address[0]}:{address[1]}"
    finally:
        for client in fillers:
            client.close()
        server.close()


@pytest.mark.parametrize("entry", ["open_file", "open_stream"])
def test_http_connect_timeout_bounds_connecting(entry):
    """A server that cannot be connected to fails the read after connect_timeout (here far
    shorter than read_timeout) with a TimeoutError naming the URL and the timeout."""
    pytest.importorskip("aiohttp")
    options = ipc.IpcReadOptions(connect_timeout=0.5, read_timeout=HANG_GUARD * 2)
    with unconnectable_server() as base:
        url = f"{base}/wide.arrow" + ("" if entry == "open_file" else "s")
        opener = ipc.open_file if entry == "open_file" else ipc.open_stream
        _, error = in_thread(lambda: opener(url, options=options))
    assert isinstance(error, TimeoutError), error
    assert str(error).startswith(f"{url}: ") and "connect_timeout=0.5" in str(error), error


def test_timeouts_are_positive_seconds():
    assert (ipc.IpcReadOptions().connect_timeout, ipc.IpcReadOptions().read_timeout) == (10, 60)
    for bad in (0, -1, float("nan"), float("inf")):
        with pytest.raises(ValueError, match="read_timeout must be a positive number of seconds"):
            ipc.IpcReadOptions(read_timeout=bad)


def test_s3_object_replaced_between_requests_is_refused(s3, wide_file):
    from remote_servers import BUCKET
    fs, _ = s3
    url = f"s3://{BUCKET}/replaced.arrow"
    fs.pipe(url, wide_file)
    reader = ipc.open_file(url, filesystem=fs, options=ipc.IpcReadOptions(included_fields=[0]))
    reader.get_batch(0)
    fs.pipe(url, other_version(wide_file))
    with pytest.raises(OSError, match=f"{url}: .*changed while it was read"):
        reader.get_batch(1)


def test_surviving_batches_group_into_runs_of_adjacent_ones_bounded_by_their_bodies():
    from arrowipc.dataset.fragments import WINDOW_LIMIT, _runs, _windows
    assert _runs([]) == []
    assert _runs([0, 1, 2, 5, 6, 9]) == [[0, 1, 2], [5, 6], [9]]
    half = WINDOW_LIMIT // 2
    sizes = {0: half, 1: half, 2: 1, 3: WINDOW_LIMIT + 1, 4: 1}
    # a run closes where its bodies would pass the limit; a batch over it stands alone
    assert _runs([0, 1, 2, 3, 4], sizes.__getitem__, WINDOW_LIMIT) == [[0, 1], [2], [3], [4]]
    windows = _windows([0, 1, 2, 3, 4], sizes.__getitem__)
    assert sorted(windows) == [0, 1]            # batches alone in their run have no window
    assert windows[0] is windows[1] and windows[0].indices == [0, 1]
