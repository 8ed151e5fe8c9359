"""How often the JVM driver reads an input's footer: once per query (schema inference and
planning share it), and across queries only when the input changed (io.arrowipc.spark.FooterCache,
keyed by size and ETag / Last-Modified / modification time).

Counted on the wire by the test HTTP server (tests/remote_servers.py): the JVM's first request
to a URL is bytes=0-8191 (it learns the size and the ETag); a footer read is one more request,
for the last 8 KiB (these files' footers are smaller). Results are checked against pyarrow.
"""
import email.utils
import os
import sys
import time

import numpy as np
import pyarrow as pa
import pytest

from ipc_files import write_ipc_file

pytestmark = pytest.mark.spark

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
try:
    from remote_servers import http_server
finally:
    sys.path.pop(0)

FILES, ROWS, CHUNK = 3, 40_000, 10_000
BATCHES = ROWS // CHUNK
HEAD = "bytes=0-8191"


def _file_bytes(tmp_path, name, values, statistics=False, chunk=CHUNK) -> bytes:
    """An IPC file of columns a (values) and b (values * 2), in batches of `chunk` rows; with
    `statistics`, the footer's summary answers count(*) (arrowipc's writer)."""
    t = pa.table({"a": pa.array(values, pa.int64()), "b": pa.array(values * 2, pa.int64())})
    path = str(tmp_path / name)
    write_ipc_file(path, t, statistics, chunk)
    with open(path, "rb") as f:
        return f.read()


def _served(tmp_path, statistics=False) -> dict:
    return {f"/f{k}.arrow": _file_bytes(tmp_path, f"f{k}.arrow", np.arange(ROWS) + k * ROWS,
                                        statistics) for k in range(FILES)}


def _tail(data: bytes) -> str:
    return f"bytes={len(data) - 8192}-{len(data) - 1}"


def _ranges(requests, name) -> list:
    return [r[2] for r in requests.gets("/" + name.lstrip("/"))]


@pytest.fixture
def footer_cache(spark, jvm):
    cache = spark._jvm.io.arrowipc.spark.FooterCache
    cache.clear()
    yield cache
    cache.clear()


def test_inference_and_count_read_each_footer_once(spark, jvm, footer_cache, tmp_path):
    """count(*) over N URLs answered from the footers' summaries: inference reads each footer,
    planning only asks each URL's first range (to see it did not change). Before the cache,
    inference, the schema check and the count each read every footer: 6 requests a file."""
    files = _served(tmp_path, statistics=True)
    with http_server(files, etags=True) as (base, requests):
        df = spark.read.format("arrowipc").load([f"{base}{name}" for name in files])
        for name, data in files.items():
            assert _ranges(requests, name) == [HEAD, _tail(data)]
        requests.clear()
        jvm.reset()
        assert df.count() == FILES * ROWS
        assert jvm.filesCountedFromFooter() == FILES
        for name in files:
            assert _ranges(requests, name) == [HEAD]          # no footer read, no task
        assert len(requests.gets()) == FILES == jvm.remoteRequests()
        # a new DataFrame over the same URLs: inference finds the footers kept too
        requests.clear()
        assert spark.read.format("arrowipc").load([f"{base}{n}" for n in files]).count() \
            == FILES * ROWS
        assert len(requests.gets()) == 2 * FILES
        assert all(_ranges(requests, name) == [HEAD, HEAD] for name in files)


def test_a_scan_reads_each_footer_once_on_the_driver(spark, jvm, footer_cache, tmp_path):
    """sum(a) over N URLs: on the driver, one footer read per file for inference and planning
    together; each task then opens its file itself (its first range and footer), reads each
    batch's header and column a's buffer."""
    files = _served(tmp_path)
    with http_server(files, etags=True) as (base, requests):
        jvm.reset()
        got = spark.read.format("arrowipc").load([f"{base}{n}" for n in files]) \
            .selectExpr("sum(a)").collect()[0][0]
        assert got == sum(range(FILES * ROWS))
        for name, data in files.items():
            ranges = _ranges(requests, name)
            # driver: inference (first range and footer), planning (first range); task: the same
            # two, then per batch its header and its column's buffer
            assert len(ranges) == 2 + 1 + 2 + 2 * BATCHES, ranges
            assert ranges[:3] == [HEAD, _tail(data), HEAD]
            assert ranges.count(_tail(data)) == 2 and ranges.count(HEAD) == 3
        assert len(requests.gets()) == FILES * (5 + 2 * BATCHES) == jvm.remoteRequests()


def test_urls_without_etag_or_last_modified_are_not_kept(spark, jvm, footer_cache, tmp_path):
    """Nothing tells a rewrite of such an object from the one read before: each planning reads
    its footer (once: inference, then planning, each once)."""
    files = _served(tmp_path, statistics=True)
    with http_server(files) as (base, requests):
        df = spark.read.format("arrowipc").load([f"{base}{n}" for n in files])
        assert df.count() == FILES * ROWS
        for name, data in files.items():
            assert _ranges(requests, name) == [HEAD, _tail(data)] * 2
        assert footer_cache.entries() == 0


@pytest.mark.parametrize("ago, kept", [(3600, True), (-3600, False)])
def test_last_modified_tells_versions_once_a_few_seconds_old(spark, jvm, footer_cache, tmp_path,
                                                              ago, kept):
    """Without an ETag, Last-Modified (whole seconds) is the version only when the answer's Date
    is 2 s later or more: a rewrite after the read then shows as a new Last-Modified. (The
    unsettled case is a Last-Modified after the Date, which no wait on a busy machine can
    settle.)"""
    files = _served(tmp_path, statistics=True)
    stamp = email.utils.formatdate(time.time() - ago, usegmt=True)
    with http_server(files, last_modified=stamp) as (base, requests):
        df = spark.read.format("arrowipc").load([f"{base}{n}" for n in files])
        requests.clear()
        assert df.count() == FILES * ROWS
        for name, data in files.items():
            assert _ranges(requests, name) == ([HEAD] if kept else [HEAD, _tail(data)])
        assert footer_cache.entries() == (FILES if kept else 0)


def _answers(df) -> tuple:
    """sum(a), count(*), max(b), then the rows with a >= 200000 (which the footers' statistics
    summary decides at planning whether to read: a stale footer would skip them)."""
    row = df.selectExpr("sum(a)", "count(*)", "max(b)").collect()[0]
    return tuple(row) + (df.where("a >= 200000").count(),)


def _want(values) -> tuple:
    return (int(values.sum()), len(values), int((values * 2).max()), int((values >= 200000).sum()))


# Three versions of one input: the first two of the same size but other values (and statistics,
# which decide file skipping at planning), the third with another batch layout.
VERSIONS = [np.arange(ROWS) + 100_000, np.arange(ROWS) + 200_000, np.arange(ROWS // 2) + 190_000]


def _versions(tmp_path) -> list:
    out = [_file_bytes(tmp_path, f"v{i}.arrow", v, statistics=True, chunk=CHUNK if i < 2 else 3_000)
           for i, v in enumerate(VERSIONS)]
    assert len(out[0]) == len(out[1]) and out[0] != out[1] and len(out[2]) != len(out[0])
    return out


def test_a_url_rewritten_between_queries_is_read_afresh(spark, jvm, footer_cache, tmp_path):
    """The object behind a URL changes between queries (a new ETag): each query reads what is
    there, through the DataFrame loaded before the change and through a new one."""
    versions = _versions(tmp_path)
    files = {"/x.arrow": versions[0]}
    with http_server(files, etags=True) as (base, requests):
        df = spark.read.format("arrowipc").load(f"{base}/x.arrow")
        assert _answers(df) == _want(VERSIONS[0])
        for data, values in zip(versions[1:], VERSIONS[1:]):
            files["/x.arrow"] = data
            requests.clear()
            assert df.count() == len(values)                     # count(*) from the new footer
            # planning saw the new ETag and read the new footer
            assert _ranges(requests, "x.arrow") == [HEAD, _tail(data)]
            assert _answers(df) == _want(values)
            assert _answers(spark.read.format("arrowipc").load(f"{base}/x.arrow")) == _want(values)


def _write_aged(path, data: bytes, seconds_ago: float) -> None:
    """Write `data` at `path` with a modification time `seconds_ago` in the past."""
    path.write_bytes(data)
    when = time.time() - seconds_ago
    os.utime(path, (when, when))


@pytest.mark.parametrize("scheme", ["", "file://"])
def test_a_file_rewritten_between_queries_is_read_afresh(spark, jvm, footer_cache, tmp_path, scheme):
    """Local paths (kept by size, modification time and file key) and Hadoop URIs (size and
    modification time from the listing): a rewrite of the same size is not read from a kept
    footer."""
    versions = _versions(tmp_path)
    (tmp_path / "d").mkdir()
    path = tmp_path / "d" / "x.arrow"
    _write_aged(path, versions[0], 60)
    df = spark.read.format("arrowipc").load(scheme + str(tmp_path / "d"))
    assert _answers(df) == _want(VERSIONS[0])
    assert footer_cache.entries() == 1
    for i, (data, values) in enumerate(zip(versions[1:], VERSIONS[1:]), 1):
        _write_aged(path, data, 60 - i)        # settled, and another time than the kept one
        assert df.count() == len(values)
        assert _answers(df) == _want(values)
        assert _answers(spark.read.format("arrowipc").load(scheme + str(path))) == _want(values)


@pytest.mark.parametrize("scheme", ["", "file://"])
def test_a_file_modified_in_the_last_2_s_is_not_kept(spark, jvm, footer_cache, tmp_path, scheme):
    """A file system's clock ticks (4 ms to 2 s) can hide a rewrite of the same size: a footer
    read within 2 s of the file's modification is used for that query only. (The file's time is
    set an hour ahead, so that no wait on a busy machine can settle it.)"""
    versions = _versions(tmp_path)
    (tmp_path / "d").mkdir()
    path = tmp_path / "d" / "x.arrow"
    _write_aged(path, versions[0], -3600)
    df = spark.read.format("arrowipc").load(scheme + str(tmp_path / "d"))
    assert _answers(df) == _want(VERSIONS[0])
    assert footer_cache.entries() == 0
    before = os.stat(path).st_mtime_ns
    path.write_bytes(versions[1])                 # the same size; the same time as far as we know
    os.utime(path, ns=(before, before))
    assert _answers(df) == _want(VERSIONS[1])


def test_the_driver_keeps_at_most_256_footers(spark, jvm, footer_cache, tmp_path):
    """The least recently used input's footer goes first; every file is still read."""
    t = pa.table({"a": pa.array([1, 2, 3], pa.int64())})
    (tmp_path / "d").mkdir()
    for k in range(300):
        path = str(tmp_path / "d" / f"f{k:03}.arrow")
        with pa.ipc.new_file(path, t.schema) as w:
            w.write_table(t)
        os.utime(path, (time.time() - 60, time.time() - 60))
    df = spark.read.format("arrowipc").load(str(tmp_path / "d"))
    assert footer_cache.entries() == 256
    assert df.count() == 300 * 3                 # planning opens all 300 again, on the driver
    assert footer_cache.entries() == 256
