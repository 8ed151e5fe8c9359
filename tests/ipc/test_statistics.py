"""Batch statistics (ipc.statistics): what new_file(statistics=True) writes, read with pyarrow."""
import datetime as dt
import json
from decimal import Decimal

import numpy as np
import pyarrow as pa

import arrowipc
from arrowipc import ipc
from arrowipc.ipc import statistics as S


def _stats_of(batch):
    return S.batch_statistics(arrowipc.record_batch(batch))


def test_statistics_of_each_kind_of_column():
    b = pa.record_batch({
        "i": pa.array([3, None, -1], pa.int64()),
        "u": pa.array([2**64 - 1, 0, 5], pa.uint64()),
        "f": pa.array([1.5, None, -2.0], pa.float32()),
        "nan": pa.array([1.0, float("nan"), 2.0]),
        "s": pa.array(["b", None, "ab"]),
        "long": pa.array(["x" * 70, "y" * 70, None]),
        "d": pa.array(["q", "p", "q"]).dictionary_encode(),
        "day": pa.array([dt.date(1970, 1, 2), dt.date(1969, 12, 31), None]),
        "ts": pa.array([1500, -2, None], pa.timestamp("ms", "UTC")),
        "dec": pa.array([Decimal("1.50"), Decimal("-0.25"), None], pa.decimal128(5, 2)),
        "b": pa.array([True, False, None]),
        "null": pa.nulls(3),
    })
    cols = _stats_of(b)["columns"]
    assert cols["i"] == {"null_count": 1, "min": -1, "max": 3}
    assert cols["u"] == {"null_count": 0, "min": 0, "max": 2**64 - 1}
    assert cols["f"] == {"null_count": 1, "min": -2.0, "max": 1.5}
    assert cols["nan"] == {"null_count": 0}                        # a NaN: no bounds
    assert cols["s"] == {"null_count": 1, "min": "ab", "max": "b"}
    assert cols["long"] == {"null_count": 1, "min": "x" * 64}     # cut min, no max
    assert cols["d"] == {"null_count": 0, "min": "p", "max": "q"}
    assert cols["day"] == {"null_count": 1, "min": -1, "max": 1}
    assert cols["ts"] == {"null_count": 1, "min": -2, "max": 1500}
    assert cols["dec"] == {"null_count": 1, "min": "-0.25", "max": "1.50"}
    assert cols["b"] == {"null_count": 1}
    assert cols["null"] == {"null_count": 3}


def test_new_file_statistics_option_writes_batch_metadata(tmp_path):
    path = str(tmp_path / "s.arrow")
    t = pa.table({"a": pa.array(np.arange(10, dtype=np.int32))})
    with ipc.new_file(path, arrowipc.schema(t.schema), statistics=True,
                      options=ipc.IpcWriteOptions(compression="zstd")) as w:
        w.write_table(arrowipc.table(t), max_chunksize=4)
        w.write_batch(arrowipc.record_batch(t.to_batches()[0].slice(0, 2)),
                      custom_metadata={"mine": "kept"})
    r = pa.ipc.open_file(path)
    docs = []
    for i in range(r.num_record_batches):
        md = r.get_batch_with_custom_metadata(i).custom_metadata
        docs.append(json.loads(md[S.KEY.encode()]))
    assert [(d["rows"], d["columns"]["a"]["min"], d["columns"]["a"]["max"]) for d in docs] == [
        (4, 0, 3), (4, 4, 7), (2, 8, 9), (2, 0, 1)]
    assert r.get_batch_with_custom_metadata(3).custom_metadata[b"mine"] == b"kept"
    assert r.read_all().equals(pa.concat_tables([t, t.slice(0, 2)]))
    # off by default: no statistics key
    plain = str(tmp_path / "p.arrow")
    with ipc.new_file(plain, arrowipc.schema(t.schema)) as w:
        w.write_table(arrowipc.table(t))
    assert pa.ipc.open_file(plain).get_batch_with_custom_metadata(0).custom_metadata is None


def test_might_match_is_conservative():
    stats = S.read_statistics({S.KEY.encode(): json.dumps(
        {"version": 1, "rows": 10, "columns": {"a": {"null_count": 0, "min": 5, "max": 9},
                                               "n": {"null_count": 10}}})})
    assert S.might_match(stats, "a", "==", 7) and not S.might_match(stats, "a", "==", 10)
    assert not S.might_match(stats, "a", "<", 5) and S.might_match(stats, "a", "<=", 5)
    assert not S.might_match(stats, "a", ">", 9) and S.might_match(stats, "a", ">=", 9)
    assert S.might_match(stats, "a", "in", [1, 8]) and not S.might_match(stats, "a", "in", [1, 2])
    assert not S.might_match(stats, "a", "is_null") and S.might_match(stats, "a", "not_null")
    assert not S.might_match(stats, "n", "==", 1) and not S.might_match(stats, "n", "not_null")
    assert S.might_match(stats, "other", "==", 1)               # unknown column
    assert S.might_match(stats, "a", "==", "text")              # another kind of value
    assert S.might_match(None, "a", "==", 100)                  # no statistics
    assert S.read_statistics({S.KEY: "not json"}) is None
    assert S.read_statistics({S.KEY: json.dumps({"version": 2, "columns": {}})}) is None


def test_statistics_read_from_bytes_in_any_encoding_json_reads():
    """UTF-8 statistics are decoded before parsing; bytes in another encoding json.loads
    detects (UTF-16, a UTF-8 byte order mark) read as before, and bytes that are no JSON, or
    invalid UTF-8, are no statistics."""
    doc = {"version": 1, "rows": 3, "columns": {"é": {"null_count": 0, "min": 1, "max": 2}}}
    text = json.dumps(doc)
    for raw in (text.encode(), text.encode("utf-16"), text.encode("utf-16-le"),
                text.encode("utf-8-sig"), text.encode("utf-32")):
        assert S.read_statistics({S.KEY.encode(): raw}) == doc, raw[:6]
    for raw in (b"\xff\xfe\xfa", b"{\"version\": 1, \"columns\": {", b"\xc3"):
        assert S.read_statistics({S.KEY.encode(): raw}) is None
