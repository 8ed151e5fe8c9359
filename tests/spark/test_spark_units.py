"""Parts of the Spark edge that need no SparkSession: planning, options, the commit protocol,
pyarrow conversions, and what importing costs."""
import os
import subprocess
import sys

import pyarrow as pa
import pytest

import arrowipc
from arrowipc import ipc
from arrowipc.errors import ArrowInvalid
from arrowipc.spark import commit as C
from arrowipc.spark.conversion import to_spark_array
from arrowipc.spark.inputs import (find_input_paths, group_batches, parse_count, parse_size,
                                   plan_ranges, detect_format)

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def test_group_batches_by_rows_and_bytes():
    sizes = [(100, 10)] * 5
    assert group_batches(sizes, 250, None) == [(0, 2), (2, 4), (4, 5)]
    assert group_batches(sizes, 100, None) == [(i, i + 1) for i in range(5)]
    assert group_batches(sizes, None, 30) == [(0, 3), (3, 5)]
    assert group_batches([(1, 500), (1, 1), (1, 1)], None, 100) == [(0, 1), (1, 3)]
    assert group_batches([], 10, None) == []


def test_size_and_count_options():
    assert parse_size("134217728", "o") == 134217728
    assert parse_size("64m", "o") == 64 << 20 and parse_size("1G", "o") == 1 << 30
    assert parse_size("512kb", "o") == 512 << 10
    for bad in ["0", "-5", "1x", "", "m"]:
        with pytest.raises(ArrowInvalid, match="option o"):
            parse_size(bad, "o")
    assert parse_count("7", "n") == 7
    with pytest.raises(ArrowInvalid, match="positive integer"):
        parse_count("0", "n")


def _write(path, n_batches=3, rows=4, stream=False):
    batch = arrowipc.record_batch({"x": list(range(rows))})
    opener = ipc.new_stream if stream else ipc.new_file
    with opener(str(path), batch.schema) as w:
        for _ in range(n_batches):
            w.write_batch(batch)


def test_input_discovery_and_planning(tmp_path):
    _write(tmp_path / "b.arrow")
    _write(tmp_path / "a.arrows", stream=True)
    _write(tmp_path / "c.feather", n_batches=2)
    (tmp_path / "_SUCCESS").write_text("")
    (tmp_path / ".a.arrow.crc").write_text("")
    (tmp_path / "readme.md").write_text("")
    os.mkdir(tmp_path / "_temporary")
    found = find_input_paths(str(tmp_path))
    assert [os.path.basename(p) for p in found] == ["a.arrows", "b.arrow", "c.feather"]
    inputs = [detect_format(p) for p in found]
    assert [i.is_file_format for i in inputs] == [False, True, True]
    ranges = plan_ranges(inputs, rows_per_partition=8)
    assert [(os.path.basename(r.path), r.start, r.end) for r in ranges] == [
        ("a.arrows", 0, None), ("b.arrow", 0, 2), ("b.arrow", 2, 3), ("c.feather", 0, 2)]
    assert find_input_paths(str(tmp_path / "*.arrow")) == [str(tmp_path / "b.arrow")]
    with pytest.raises(ArrowInvalid, match="names no"):
        find_input_paths(str(tmp_path / "*.parquet"))
    # URLs go to fsspec (remote inputs are tested in tests/ipc/test_remote.py); an unknown
    # protocol is an error naming the URL
    with pytest.raises(ValueError, match="nosuchprotocol://bucket/key"):
        find_input_paths("nosuchprotocol://bucket/key")


def test_feather_v1_is_refused(tmp_path):
    path = tmp_path / "old.feather"
    path.write_bytes(b"FEA1" + bytes(20))
    with pytest.raises(ArrowInvalid, match="Feather V1"):
        detect_format(str(path))


def _touch(path, text="x"):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)


def test_commit_publishes_and_overwrite_replaces_only_then(tmp_path):
    root = str(tmp_path / "out")
    _touch(os.path.join(root, "part-old.arrow"), "old")
    C.setup_job(root, "job1")
    task = C.task_dir(root, "job1", 7)
    new = os.path.join(task, "part-00000-job1.arrow")
    _touch(new, "new")
    stray = os.path.join(C.task_dir(root, "job1", 8), "part-00000-job1.arrow")
    _touch(stray, "failed attempt")
    assert os.path.exists(os.path.join(root, "part-old.arrow"))     # untouched until commit
    C.commit_job(root, "job1", [(new, "part-00000-job1.arrow")], True, {"rows": 1})
    assert sorted(os.listdir(root)) == ["_SUCCESS", "part-00000-job1.arrow"]
    with open(os.path.join(root, "part-00000-job1.arrow")) as f:
        assert f.read() == "new"


@pytest.mark.parametrize("durable", [False, True])
def test_commit_flushes_renames_and_success_only_when_durable(tmp_path, monkeypatch, durable):
    root = str(tmp_path / "out")
    C.setup_job(root, "job1")
    new = os.path.join(C.task_dir(root, "job1", 7), "part-00000-job1.arrow")
    _touch(new, "new")
    synced, real = [], os.fsync

    def counting(fd):
        synced.append(os.path.realpath(f"/proc/self/fd/{fd}"))
        return real(fd)

    monkeypatch.setattr(os, "fsync", counting)
    C.commit_job(root, "job1", [(new, "part-00000-job1.arrow")], False, {"rows": 1}, durable)
    real_root = os.path.realpath(root)
    # durable: the renames, then _SUCCESS and the directory naming it
    assert synced == ([real_root, os.path.join(real_root, C.SUCCESS), real_root] if durable
                      else [])


def test_writer_durable_option_is_checked(tmp_path):
    from arrowipc.spark.datasource import ArrowIpcWriter
    with pytest.raises(ArrowInvalid, match="option durable must be true or false; got 'yes'"):
        ArrowIpcWriter({"path": str(tmp_path / "o"), "durable": "yes"}, None, False)
    assert ArrowIpcWriter({"path": str(tmp_path / "o"), "durable": "TRUE"}, None, False).durable


def test_abort_removes_the_job_and_a_root_it_created(tmp_path):
    root = str(tmp_path / "out")
    C.setup_job(root, "job2")
    _touch(os.path.join(C.task_dir(root, "job2", 1), "part-00000-job2.arrow"))
    C.abort_job(root, "job2", root_existed=False)
    assert not os.path.exists(root)
    _touch(os.path.join(root, "keep.arrow"))
    C.setup_job(root, "job3")
    _touch(os.path.join(C.task_dir(root, "job3", 1), "part-00000-job3.arrow"))
    C.abort_job(root, "job3", root_existed=True)
    assert os.listdir(root) == ["keep.arrow"]
    # a task that starts after the abort writes nothing
    with pytest.raises(RuntimeError, match="aborted"):
        C.task_dir(root, "job3", 2)
    assert os.listdir(root) == ["keep.arrow"]


def test_conversions_of_sliced_and_nested_arrays():
    m = pa.array([[("a", 1)], [("b", 2), ("c", 3)], None, []], pa.map_(pa.string(), pa.uint8()))
    target = pa.map_(pa.field("key", pa.string(), False), pa.field("value", pa.int16()))
    got = to_spark_array(m.slice(1), target)
    assert got.type.equals(target) and got.to_pylist() == [[("b", 2), ("c", 3)], None, []]
    s = pa.StructArray.from_arrays([pa.array([1, 2, 3], pa.uint32())], ["v"],
                                   mask=pa.array([False, True, False]))
    got = to_spark_array(s.slice(1), pa.struct([("v", pa.int64())]))
    assert got.to_pylist() == [None, {"v": 3}]
    for layout in (pa.list_(pa.uint8()), pa.large_list(pa.uint8())):
        lst = pa.array([[1], [2, 3], None, []], layout)
        got = to_spark_array(lst.slice(1), pa.list_(pa.field("element", pa.int16())))
        assert got.to_pylist() == [[2, 3], None, []]
    d = pa.array(["x", "y", None, "x"]).dictionary_encode()
    assert to_spark_array(d.slice(2), pa.string()).to_pylist() == [None, "x"]
    with pytest.raises(arrowipc.errors.ArrowTypeError, match="cannot convert"):
        to_spark_array(pa.array([2**62], pa.timestamp("s")), pa.timestamp("us"))


def test_imports_stay_cheap():
    code = ("import sys, arrowipc; assert 'pyarrow' not in sys.modules and 'pyspark' not in "
            "sys.modules; import pyspark_arrowipc; assert 'pyarrow' not in sys.modules; "
            "import pyspark_arrowipc_python; assert 'pyarrow' not in sys.modules; "
            "print(pyspark_arrowipc.DefaultSource.name(), "
            "pyspark_arrowipc_python.DefaultSource.name())")
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO_ROOT, capture_output=True,
                         text=True, env=dict(os.environ, PYTHONPATH=REPO_ROOT))
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["arrowipc", "arrowipc_python"]


@pytest.mark.parametrize("jar", ["/opt/jars/arrowipc-spark.jar", None])
def test_python_source_warns_once_that_the_jvm_source_is_missing(monkeypatch, tmp_path, jar):
    # "arrowipc" reaches the Python source only when the JVM source's jar is not on Spark's
    # classpath: it says so once, naming jar_path() and spark.jars (or how to get a jar)
    import warnings

    from pyspark.sql.types import LongType, StructField, StructType

    from arrowipc.spark import datasource as D
    from arrowipc.spark import jar as S
    monkeypatch.setattr(S, "_warned_python_source", False)
    monkeypatch.setattr(S, "jar_path", lambda: jar)
    schema = StructType([StructField("x", LongType())])
    options = {"path": str(tmp_path / "out")}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        D.ArrowIpcPythonDataSource(options).writer(schema, False)     # named on purpose: silent
        assert caught == []
        D.ArrowIpcDataSource(options).writer(schema, False)
        D.ArrowIpcDataSource(options).reader(schema)
    assert len(caught) == 1 and caught[0].category is RuntimeWarning
    message = str(caught[0].message)
    assert "JVM data source is not on Spark's classpath" in message
    assert "arrowipc.spark.jar_path()" in message and "spark.jars" in message
    if jar:
        assert f"spark.jars={jar}" in message
    else:
        assert "installed without the jar" in message and "JDK 17" in message
