"""The JVM data source over URLs: http(s) with Range requests, Hadoop file systems (file: here),
and schemes the JVM cannot open.

Every HTTP request the JVM sends is counted twice: by the test server (tests/remote_servers.py)
and by io.arrowipc.spark.ReadStats; column pruning is proven by the bytes on the wire.
"""
import os
import socket
import sys
import threading
import time

import numpy as np
import pyarrow as pa
import pytest

pytestmark = pytest.mark.spark

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
try:
    import remote_servers
    from remote_servers import http_server
finally:
    sys.path.pop(0)
from test_spark_write import _failing_frame, _ids          # noqa: E402  (same folder)

N = 200_000
COLUMNS = 4


def _wide_bytes(fmt="file"):
    rng = np.random.default_rng(11)
    t = pa.table({f"c{i}": pa.array(rng.integers(0, 1000, N, dtype=np.int64))
                  for i in range(COLUMNS)})
    sink = pa.BufferOutputStream()
    opener = pa.ipc.new_file if fmt == "file" else pa.ipc.new_stream
    with opener(sink, t.schema) as w:
        w.write_table(t, max_chunksize=50_000)
    return t, sink.getvalue().to_pybytes()


def _sums(df):
    return df.selectExpr(*[f"sum(c{i})" for i in range(COLUMNS)], "count(*)").collect()[0]


@pytest.mark.parametrize("fmt", ["file", "stream"])
def test_http_read_equals_the_local_read(spark, jvm, tmp_path, fmt):
    t, data = _wide_bytes(fmt)
    name = "wide.arrow" if fmt == "file" else "wide.arrows"
    local = tmp_path / name
    local.write_bytes(data)
    with http_server({"/" + name: data}) as (base, requests):
        remote = spark.read.format("arrowipc").load(f"{base}/{name}")
        assert remote.schema == spark.read.format("arrowipc").load(str(local)).schema
        assert _sums(remote) == _sums(spark.read.format("arrowipc").load(str(local)))
        assert list(_sums(remote))[:COLUMNS] == [pa.compute.sum(t[c]).as_py() for c in t.column_names]
        rows = remote.where("c1 < 3").orderBy("c0", "c1", "c2", "c3").collect()
        expected = spark.read.format("arrowipc").load(str(local)).where("c1 < 3") \
            .orderBy("c0", "c1", "c2", "c3").collect()
        assert rows == expected and len(rows) > 0
        # every request was a single Range GET answered with the bytes asked for
        assert requests.gets() and all(r[2] and r[2].startswith("bytes=") for r in requests.gets())


def test_http_column_pruning_fetches_less(spark, jvm):
    t, data = _wide_bytes()
    with http_server({"/wide.arrow": data}) as (base, requests):
        df = spark.read.format("arrowipc").load(f"{base}/wide.arrow")
        df.schema                                           # planning: schema inference
        requests.clear()
        jvm.reset()
        assert df.selectExpr("sum(c2)").collect()[0][0] == pa.compute.sum(t["c2"]).as_py()
        one = (requests.get_bytes(), len(requests.gets()))
        one_ranges = [r[2] for r in requests.gets()]
        assert one == (jvm.remoteBytes(), jvm.remoteRequests())     # both counters agree
        assert jvm.bodyBytesRead() == N * 8
        requests.clear()
        jvm.reset()
        assert df.selectExpr("sum(c0 + c1 + c2 + c3)").collect()[0][0] == sum(
            pa.compute.sum(t[c]).as_py() for c in t.column_names)
        every = (requests.get_bytes(), len(requests.gets()))
        every_ranges = [r[2] for r in requests.gets()]
        requests.clear()
        jvm.reset()
        # count(*) as a scan of message headers (not answered on the driver), so that it plans
        # and opens the file as the two sums do
        assert spark.read.format("arrowipc").option("aggregatePushdown", "false") \
            .load(f"{base}/wide.arrow").count() == N
        count_only = (requests.get_bytes(), len(requests.gets()))
        header_ranges = {r[2] for r in requests.gets()}
    # one column: its 1.6 MB plus footers and message headers (a few KiB per file open and batch)
    assert N * 8 <= one[0] <= N * 8 + 128 * 1024
    assert one[0] * 3 < every[0]
    assert count_only[0] < 128 * 1024                       # headers only
    # beyond the footers and headers a header-only scan fetches, one request per batch for its
    # column's range (all four columns coalesced into one range per batch for the wider sum)
    batches = N // 50_000
    one_bodies = [r for r in one_ranges if r not in header_ranges]
    every_bodies = [r for r in every_ranges if r not in header_ranges]
    assert len(one_bodies) == len(every_bodies) == batches
    span = [int(b) - int(a) + 1 for a, b in (r[len("bytes="):].split("-") for r in one_bodies)]
    assert span == [N // batches * 8] * batches
    assert len(set(one_ranges) - set(one_bodies)) <= len(header_ranges)


def test_hadoop_file_uris_read_like_local_paths(spark, jvm, tmp_path):
    t, data = _wide_bytes()
    (tmp_path / "d").mkdir()
    for k in range(2):
        (tmp_path / "d" / f"part{k}.arrow").write_bytes(data)
    (tmp_path / "d" / "_SUCCESS").write_bytes(b"")
    expected = _sums(spark.read.format("arrowipc").load(str(tmp_path / "d")))
    assert expected[COLUMNS] == 2 * N
    for url in ["file://" + str(tmp_path / "d"), "file:" + str(tmp_path / "d"),
                "file://" + str(tmp_path / "d" / "part*.arrow")]:
        jvm.reset()
        df = spark.read.format("arrowipc").load(url)
        assert _sums(df) == expected, url
        assert jvm.remoteRequests() == 0
    jvm.reset()
    one = spark.read.format("arrowipc").load("file://" + str(tmp_path / "d" / "part0.arrow"))
    assert one.selectExpr("sum(c3)").collect()[0][0] == pa.compute.sum(t["c3"]).as_py()
    assert jvm.bodyBytesRead() == N * 8                     # pruning through Hadoop's streams


def _count_requests_in_flight(monkeypatch) -> dict:
    """Make http_server's handler record the most GETs it was answering at once (each held a
    moment, so that requests sent together overlap)."""
    state = {"now": 0, "most": 0}
    lock = threading.Lock()

    class Counting(remote_servers._Handler):
        def do_GET(self):
            with lock:
                state["now"] += 1
                state["most"] = max(state["most"], state["now"])
            try:
                time.sleep(0.05)
                super().do_GET()
            finally:
                with lock:
                    state["now"] -= 1

    monkeypatch.setattr(remote_servers, "_Handler", Counting)
    return state


def test_http_ranges_of_a_batch_are_requested_a_few_at_a_time(spark, jvm, monkeypatch):
    # every other column of a 40-column batch: 20 ranges too far apart to coalesce, requested
    # together but never more than 8 at once
    n, width = 20_000, 40
    t = pa.table({f"c{i}": pa.array(np.arange(n, dtype=np.int64) * (i + 1)) for i in range(width)})
    sink = pa.BufferOutputStream()
    with pa.ipc.new_file(sink, t.schema) as w:
        w.write_table(t)
    state = _count_requests_in_flight(monkeypatch)
    with http_server({"/w.arrow": sink.getvalue().to_pybytes()}) as (base, _):
        df = spark.read.format("arrowipc").load(f"{base}/w.arrow")
        df.schema
        state["most"] = 0
        jvm.reset()
        wanted = [f"c{i}" for i in range(0, width, 2)]
        got = df.selectExpr(*[f"sum({c})" for c in wanted]).collect()[0]
        assert list(got) == [pa.compute.sum(t[c]).as_py() for c in wanted]
        assert jvm.bodyBytesRead() == len(wanted) * n * 8
        assert 2 <= state["most"] <= 8


def _flaky_server(monkeypatch, failures_per_range: int, drop: bool = True) -> dict:
    """Make http_server fail each range's first `failures_per_range` GETs (a busy or restarting
    server): a 503, then (with `drop`) a dropped connection, in turn; counts them."""
    state = {"failed": 0}
    seen: dict = {}
    lock = threading.Lock()

    class Flaky(remote_servers._Handler):
        def do_GET(self):
            key = (self.path, self.headers.get("Range"))
            with lock:
                tries = seen[key] = seen.get(key, 0) + 1
                fail = tries <= failures_per_range
                state["failed"] += fail
            if not fail:
                super().do_GET()
            elif tries % 2 or not drop:
                self.send_response(503)
                self.send_header("Content-Length", "0")
                self.end_headers()
                self.requests.add(self.command, self.path, key[1], 0)
            else:
                self.close_connection = True        # no answer at all: an IOException there

    monkeypatch.setattr(remote_servers, "_Handler", Flaky)
    return state


def test_http_reads_retry_a_busy_server(spark, jvm, monkeypatch):
    """Every range fails twice (503, then a dropped connection) and is read on its third try:
    the footer's reads (sent one by one) and a batch's column ranges (sent together) alike."""
    t, data = _wide_bytes()
    state = _flaky_server(monkeypatch, 2)
    with http_server({"/wide.arrow": data}) as (base, _):
        df = spark.read.format("arrowipc").load(f"{base}/wide.arrow")
        assert list(_sums(df))[:COLUMNS] == [pa.compute.sum(t[c]).as_py() for c in t.column_names]
        assert list(df.selectExpr("sum(c1)", "sum(c3)").collect()[0]) == [
            pa.compute.sum(t["c1"]).as_py(), pa.compute.sum(t["c3"]).as_py()]
    assert state["failed"] >= 10


def test_http_gives_up_after_three_tries(spark, jvm, monkeypatch):
    _, data = _wide_bytes()
    state = _flaky_server(monkeypatch, 3, drop=False)
    with http_server({"/wide.arrow": data}) as (base, requests):
        url = f"{base}/wide.arrow"
        msg = _error(lambda: spark.read.format("arrowipc").load(url).collect())
        assert f"reading bytes 0-8191 of {url}: expected HTTP 206 (Partial Content), got 503" in msg
    gets = requests.gets()
    assert len(gets) == state["failed"] == 3                     # three tries, then the error


def _error(df_action):
    with pytest.raises(Exception) as info:
        df_action()
    return str(info.value)


def test_http_errors_name_the_url(spark, jvm):
    _, data = _wide_bytes()
    with http_server({"/cut.arrow": data[: len(data) // 2]}) as (base, _):
        missing = f"{base}/missing.arrow"
        msg = _error(lambda: spark.read.format("arrowipc").load(missing).collect())
        assert missing in msg and "expected HTTP 206 (Partial Content), got 404" in msg
        cut = f"{base}/cut.arrow"
        msg = _error(lambda: spark.read.format("arrowipc").load(cut).collect())
        assert cut in msg and "truncated" in msg
    # nothing listens there: a network error
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        refused = f"http://127.0.0.1:{s.getsockname()[1]}/x.arrow"
    msg = _error(lambda: spark.read.format("arrowipc").load(refused).collect())
    assert f"reading bytes 0-8191 of {refused} failed: java.net.ConnectException" in msg


@pytest.mark.parametrize("url, hint", [
    ("s3://bucket/data/x.arrow", "s3a://bucket/data/x.arrow"),
    ("gs://bucket/x.arrow", "gcs-connector"),
    ("az://container/x.arrow", "hadoop-azure"),
    ("nosuchscheme://host/x.arrow", "for 'nosuchscheme'"),
])
def test_schemes_the_jvm_cannot_open_say_what_to_use(spark, jvm, url, hint):
    msg = _error(lambda: spark.read.format("arrowipc").load(url).collect())
    scheme = url.split(":")[0]
    assert f"cannot open {url}" in msg and f"scheme '{scheme}'" in msg
    assert hint in msg and 'Python data source, format("arrowipc_python")' in msg


def test_writes_to_a_hadoop_uri_keep_the_commit_protocol(spark, jvm, tmp_path):
    out = tmp_path / "out"
    url = "file://" + str(out)
    spark.range(0, 100, numPartitions=3).write.format("arrowipc").mode("overwrite").save(url)
    names = sorted(os.listdir(out))
    assert [n for n in names if not n.endswith(".arrow")] == ["_SUCCESS"]   # no _temporary, no .crc
    assert len(names) == 4 and _ids(spark, url) == list(range(100))
    spark.range(100, 110, numPartitions=1).write.format("arrowipc").mode("append").save(url)
    assert _ids(spark, str(out)) == list(range(110))
    spark.range(0, 5, numPartitions=1).write.format("arrowipc").mode("overwrite").save(url)
    assert _ids(spark, url) == list(range(5)) and len(os.listdir(out)) == 2
    # a failed job leaves the committed files as they were, and no temporary files
    before = sorted(os.listdir(out))
    with pytest.raises(Exception, match="task failure on purpose"):
        _failing_frame(spark).write.format("arrowipc").mode("overwrite").save(url)
    assert sorted(os.listdir(out)) == before
    fresh = tmp_path / "fresh"
    with pytest.raises(Exception, match="task failure on purpose"):
        _failing_frame(spark).write.format("arrowipc").mode("append").save("file://" + str(fresh))
    assert not fresh.exists() or os.listdir(fresh) == []


def test_write_targets_the_jvm_cannot_use(spark, jvm, tmp_path):
    df = spark.range(3)
    msg = _error(lambda: df.write.format("arrowipc").mode("overwrite").save("gs://bucket/out"))
    assert "cannot open gs://bucket/out" in msg and "scheme 'gs'" in msg
    assert 'format("arrowipc_python")' in msg
    msg = _error(lambda: df.write.format("arrowipc").mode("overwrite").save("http://127.0.0.1:9/out"))
    assert "cannot write to http://127.0.0.1:9/out: HTTP has no writes" in msg
    # durable needs fsync: a file: URI is then written as a local path
    url = "file://" + str(tmp_path / "durable")
    df.write.format("arrowipc").mode("overwrite").option("durable", "true").save(url)
    assert _ids(spark, url) == [0, 1, 2]
