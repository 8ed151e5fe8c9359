"""arrowipc.accelerate: pyarrow's IPC and Feather calls served by arrowipc, answering with
pyarrow's own objects equal to plain pyarrow's; what it cannot serve falls back; uninstall
restores pyarrow exactly."""
import contextlib
import importlib
import io
import struct
import os

import pytest

pa = pytest.importorskip("pyarrow")
import pyarrow.feather as pa_feather  # noqa: E402
import pyarrow.ipc as pa_ipc  # noqa: E402

import arrowipc.accelerate as acc  # noqa: E402
from strategies import ISSUE2_CASE_IDS, make_table  # noqa: E402

# Columns pyarrow's Feather/pandas paths cannot turn into pandas (interval types)
NO_PANDAS = {"month_interval", "day_time_interval", "large_list_of_fixed_size_binary"}


@pytest.fixture
def accelerated():
    acc.install(report=False)
    acc.reset_report()
    try:
        yield acc
    finally:
        acc.uninstall()


@contextlib.contextmanager
def plain():
    """pyarrow itself (the oracle) for a moment inside an accelerated test; the report restarts."""
    acc.uninstall()
    try:
        yield
    finally:
        acc.install(report=False)
        acc.reset_report()


def _table():
    return make_table(ISSUE2_CASE_IDS, [7, 0, 5], seed=3, metadata={"origin": "test"})


def _attributes():
    modules = {"pyarrow": pa, "pyarrow.ipc": pa_ipc, "pyarrow.feather": pa_feather,
               "pyarrow.dataset": importlib.import_module("pyarrow.dataset")}
    return {name: getattr(modules[name.rpartition(".")[0]], name.rpartition(".")[2])
            for name in acc.served_names()}


def test_install_replaces_and_uninstall_restores_every_attribute_exactly():
    before = _attributes()
    acc.install(report=False)
    try:
        assert acc.installed()
        during = _attributes()
        assert all(during[n] is not before[n] for n in before), \
            [n for n in before if during[n] is before[n]]
        acc.install(report=False)                     # idempotent: still pyarrow's underneath
        assert _attributes() == during
    finally:
        acc.uninstall()
    assert not acc.installed()
    after = _attributes()
    assert all(after[n] is before[n] for n in before)


def test_top_level_names_are_patched_with_pyarrow_ipc(accelerated):
    assert pa.RecordBatchStreamReader is pa_ipc.RecordBatchStreamReader
    assert pa.RecordBatchFileWriter is pa_ipc.RecordBatchFileWriter
    assert pa.serialize_pandas is pa_ipc.serialize_pandas


def _pa_file(table, **kw):
    with plain():
        return _pa_file_plain(table, **kw)


def _pa_file_plain(table, **kw):
    sink = pa.BufferOutputStream()
    with pa_ipc.new_file(sink, table.schema, **kw) as w:
        w.write_table(table)
    return sink.getvalue().to_pybytes()


def _pa_stream(table):
    with plain():
        return _pa_stream_plain(table)


def _pa_stream_plain(table):
    sink = pa.BufferOutputStream()
    with pa_ipc.new_stream(sink, table.schema) as w:
        for b in table.to_batches():
            w.write_batch(b, custom_metadata={"n": str(b.num_rows)})
    return sink.getvalue().to_pybytes()


def _assert_same(got, expected):
    assert got.schema.equals(expected.schema, check_metadata=True)
    assert got.equals(expected)


def test_served_file_reader_returns_pyarrow_objects_equal_to_pyarrow(accelerated):
    table = _table()
    data = _pa_file(table, metadata={"footer": "yes"})
    with plain():
        oracle = pa_ipc.open_file(data)
    served = pa_ipc.open_file(data)
    plain_reader = oracle
    assert type(served) is not type(plain_reader)
    assert isinstance(served, pa_ipc.RecordBatchFileReader)
    assert isinstance(served, type(plain_reader))        # pyarrow's class, subclassed
    assert isinstance(plain_reader, pa_ipc.RecordBatchFileReader)  # pyarrow's passes the patch
    assert served.num_record_batches == plain_reader.num_record_batches == 3
    assert served.metadata == plain_reader.metadata
    assert served.schema.equals(plain_reader.schema, check_metadata=True)
    for i in range(3):
        _assert_same(served.get_batch(i), plain_reader.get_batch(i))
        got = served.get_batch_with_custom_metadata(i)
        assert type(got.batch) is pa.RecordBatch
    result = served.read_all()
    assert type(result) is pa.Table
    _assert_same(result, plain_reader.read_all())
    assert served.count_rows() == plain_reader.count_rows() == 12
    assert type(served.stats) is pa_ipc.ReadStats
    assert acc.report().endswith("served 1 calls, 0 fell back to pyarrow\n")


def test_served_stream_reader_matches_pyarrow(accelerated):
    table = _table()
    data = _pa_stream(table)
    with plain():
        expected = list(pa_ipc.open_stream(data).iter_batches_with_custom_metadata())
    reader = pa_ipc.open_stream(io.BytesIO(data))
    assert isinstance(reader, pa_ipc.RecordBatchStreamReader)
    assert not isinstance(reader, pa.RecordBatchReader)   # see the test of datasets below
    got = list(reader.iter_batches_with_custom_metadata())
    assert len(got) == len(expected) == 3
    for (b, md), (eb, emd) in zip(got, expected):
        _assert_same(b, eb)
        assert md == emd
    assert reader.stats == pa_ipc.open_stream(data).stats.__class__(*reader.stats)
    # hand-offs to other pyarrow functions take the result unchanged
    again = pa_ipc.open_stream(data)
    assert pa.concat_tables([again.read_all(), table]).num_rows == 24
    assert pa.RecordBatchReader.from_stream(pa_ipc.open_stream(data)).read_all().equals(table)


def test_served_writers_write_what_pyarrow_reads(accelerated, tmp_path):
    table = _table()
    path = str(tmp_path / "t.arrow")
    with pa_ipc.new_file(path, table.schema, metadata={"k": "v"}) as writer:
        assert isinstance(writer, pa_ipc.RecordBatchFileWriter)
        writer.write_table(table)
        writer.write(table.to_batches()[0])
    sink = io.BytesIO()
    with pa_ipc.new_stream(sink, table.schema,
                           options=pa_ipc.IpcWriteOptions(compression="zstd")) as writer:
        writer.write_batch(table.to_batches()[0], custom_metadata={"a": "1"})
        assert writer.stats.num_record_batches == 1
    assert "served 2 calls" in acc.report()
    acc.uninstall()
    read = pa_ipc.open_file(path)
    assert read.metadata == {b"k": b"v"}
    assert read.num_record_batches == 4
    _assert_same(read.read_all(), pa.concat_tables([table, table.slice(0, 7)]))
    first = pa_ipc.open_stream(sink.getvalue()).read_next_batch_with_custom_metadata()
    _assert_same(first.batch, table.to_batches()[0])
    assert first.custom_metadata == {b"a": b"1"}


def test_writer_type_errors_as_pyarrow(accelerated):
    writer = pa_ipc.new_stream(io.BytesIO(), pa.schema([("a", pa.int64())]))
    with pytest.raises(TypeError, match="expected pyarrow.lib.RecordBatch"):
        writer.write_batch({"a": [1]})
    with pytest.raises(ValueError):
        writer.write([1, 2])
    with pytest.raises(pa.ArrowInvalid):      # pyarrow's class for a batch of another schema
        writer.write_batch(pa.record_batch({"b": [1.0]}))
    writer.close()


def test_pyarrow_native_files_are_served(accelerated):
    table = _table()
    data = _pa_file(table)
    reader = pa_ipc.open_file(pa.BufferReader(data))
    _assert_same(reader.read_all(), table)
    sink = pa.BufferOutputStream()
    with pa_ipc.new_stream(sink, table.schema) as writer:
        writer.write_table(table)
    assert not sink.closed                      # as pyarrow: closing the writer keeps the sink
    stream = pa_ipc.open_stream(pa.BufferReader(sink.getvalue()))
    _assert_same(stream.read_all(), table)
    assert "served 3 calls, 0 fell back" in acc.report()


def test_what_arrowipc_does_not_serve_falls_back_with_a_reason(accelerated):
    table = _table()
    data = _pa_file(table)
    reader = pa_ipc.open_file(data, memory_pool=pa.default_memory_pool())
    assert type(reader) is acc_original("RecordBatchFileReader")
    _assert_same(reader.read_all(), table)
    aligned = pa_ipc.IpcReadOptions(ensure_alignment=pa_ipc.Alignment.At64Byte)
    assert type(pa_ipc.open_file(data, options=aligned)) is acc_original("RecordBatchFileReader")
    closed = pa.BufferOutputStream()
    closed.close()
    with pytest.raises(ValueError):                # pyarrow's own answer to a closed sink
        pa_ipc.new_stream(closed, table.schema)
    text = acc.report()
    assert "ipc.RecordBatchFileReader: a memory_pool was given" in text
    assert "ipc.RecordBatchFileReader: IpcReadOptions.ensure_alignment is set" in text
    assert "ipc.RecordBatchStreamWriter: a pyarrow NativeFile that is closed or not writable" \
        in text
    assert text.endswith("arrowipc.accelerate: served 0 calls, 3 fell back to pyarrow\n")


def acc_original(name):
    """pyarrow's own class behind a patched name."""
    return getattr(pa_ipc, name)._pyarrow_class


def test_malformed_input_raises_pyarrows_exception(accelerated):
    data = bytearray(_pa_file(_table()))
    data[-10:-6] = b"\xff\xff\xff\x7f"                # the footer length: far too large
    with pytest.raises(pa.ArrowInvalid):
        pa_ipc.open_file(bytes(data))
    assert "arrowipc refused the input (ArrowInvalid); pyarrow's answer is kept" in acc.report()
    with pytest.raises(pa.ArrowInvalid):
        pa_ipc.open_stream(b"\x00" * 5)


def test_a_corrupt_batch_met_while_reading_raises_pyarrows_class(accelerated):
    table = pa.table({"a": pa.array(range(100))})
    data = bytearray(_pa_stream(table))
    cut = bytes(data[: len(data) - 300])        # cut in the body: pyarrow says OSError
    reader = pa_ipc.open_stream(io.BytesIO(cut))
    with pytest.raises(OSError) as served:
        reader.read_all()
    acc.uninstall()
    with pytest.raises(OSError) as plain:
        pa_ipc.open_stream(io.BytesIO(cut)).read_all()
    assert type(served.value) is type(plain.value)


def test_feather_round_trip_through_pandas_equals_pyarrow(accelerated, tmp_path):
    pd = pytest.importorskip("pandas")
    cases = [c for c in ISSUE2_CASE_IDS if c not in NO_PANDAS and _pandas_round_trips(c)]
    assert len(cases) > 40
    table = make_table(cases, [10], seed=5)
    df = table.to_pandas()
    served_path, plain_path = str(tmp_path / "s.feather"), str(tmp_path / "p.feather")
    df.to_feather(served_path)
    got = pd.read_feather(served_path)
    got_table = pa_feather.read_table(served_path, columns=["string", "int8"])
    assert "served 3 calls, 0 fell back" in acc.report()
    acc.uninstall()
    df.to_feather(plain_path)
    expected_table = pa_feather.read_table(plain_path)
    assert pa_feather.read_table(served_path).equals(expected_table)
    assert pa_feather.read_table(served_path).schema.metadata == expected_table.schema.metadata
    pd.testing.assert_frame_equal(got, pd.read_feather(plain_path))
    _assert_same(got_table, pa_feather.read_table(plain_path, columns=["string", "int8"]))


def _pandas_round_trips(case):
    try:
        pa.Table.from_pandas(make_table([case], [4], seed=1).to_pandas())
        return True
    except (pa.ArrowException, TypeError, ValueError):
        return False


@pytest.mark.parametrize("columns", [None, ["b", "a"], ["a", "b"], [2, 0], [0, 0], ["c", "c"]])
def test_feather_column_selection_as_pyarrow(tmp_path, columns):
    table = pa.table({"c": [1, 2], "b": ["x", "y"], "a": [1.5, None]})
    path = str(tmp_path / "t.feather")
    pa_feather.write_feather(table, path)
    try:
        expected = pa_feather.read_table(path, columns=columns)
    except IndexError as exc:          # pyarrow 26 selects [2, 0] from the two columns it read
        expected = exc
    acc.install(report=False)
    try:
        acc.reset_report()
        if isinstance(expected, Exception):
            with pytest.raises(type(expected), match=str(expected)):
                pa_feather.read_table(path, columns=columns)
        else:
            _assert_same(pa_feather.read_table(path, columns=columns), expected)
            assert "served 1 calls" in acc.report()
    finally:
        acc.uninstall()


def test_feather_errors_fall_back_to_pyarrows_answer(accelerated, tmp_path):
    table = pa.table({"a": [1, 2]})
    path = str(tmp_path / "t.feather")
    with pytest.raises(ValueError, match="not supported"):
        pa_feather.write_feather(table, path, compression="snappy")
    assert not os.path.exists(path)
    pa_feather.write_feather(table, path)
    with pytest.raises(TypeError, match="Columns must be"):
        pa_feather.read_table(path, columns=(c for c in "a"))
    with pytest.raises(ValueError, match="Feather V1 files do not support compression"), \
            pytest.warns(DeprecationWarning):                  # pyarrow's, as it falls back
        pa_feather.write_feather(table, path, compression="lz4", version=1)
    text = acc.report()
    assert "feather.write_feather: compression='snappy' (pyarrow raises)" in text
    assert "feather.read_table: columns is not a sequence (pyarrow raises)" in text
    assert "feather.write_feather: compression or chunksize with version=1" in text
    with pytest.raises(pa.ArrowIOError):
        pa_feather.read_table(str(tmp_path / "missing.feather"))


def test_feather_v1_is_served_with_pyarrows_single_warning(accelerated, tmp_path):
    pd = pytest.importorskip("pandas")
    df = pd.DataFrame({"i": [1, None, 3], "s": ["x", None, "zz"], "f": [0.5, 1.5, None]})
    served, plain_path = str(tmp_path / "s.feather"), str(tmp_path / "p.feather")
    with pytest.warns(DeprecationWarning) as written:
        pa_feather.write_feather(df, served, version=1)
    with pytest.warns(DeprecationWarning) as read:
        got = pa_feather.read_table(served, columns=["s", "i"])
    assert len(written) == len(read) == 1
    assert "Use the default version=2" in str(written[0].message)
    assert written[0].filename == __file__ and read[0].filename == __file__
    assert "served 2 calls, 0 fell back" in acc.report()
    with plain():
        with pytest.warns(DeprecationWarning):
            pa_feather.write_feather(df, plain_path, version=1)
        with pytest.warns(DeprecationWarning):
            expected = pa_feather.read_table(plain_path, columns=["s", "i"])
        with pytest.warns(DeprecationWarning):
            assert pa_feather.read_table(served).equals(pa_feather.read_table(plain_path))
    _assert_same(got, expected)


@pytest.mark.parametrize("sink", [io.BytesIO, pa.BufferOutputStream])
def test_feather_v1_writes_to_file_objects_are_served(accelerated, sink):
    table = pa.table({"i": [1, None, 3], "s": ["x", None, "zz"], "f": [0.5, 1.5, None]})

    def written(out):
        return out.getvalue() if isinstance(out, io.BytesIO) else out.getvalue().to_pybytes()

    out = sink()
    with pytest.warns(DeprecationWarning, match="Feather V1") as warned:
        pa_feather.write_feather(table, out, version=1)
    assert len(warned) == 1 and warned[0].filename == __file__
    assert "served 1 calls, 0 fell back" in acc.report()
    with plain(), pytest.warns(DeprecationWarning):
        back = pa_feather.read_table(pa.BufferReader(written(out)))
    assert back.equals(table)
    assert written(out)[:4] == written(out)[-4:] == b"FEA1"


def test_a_feather_v1_table_arrowipc_refuses_leaves_the_file_object_to_pyarrow(accelerated):
    table = pa.table({"l": [[1], [2, 3]]})          # lists: no Feather V1 type
    theirs_out = io.BytesIO()
    with plain(), pytest.warns(DeprecationWarning):
        with pytest.raises(pa.ArrowTypeError) as theirs:
            pa_feather.write_feather(table, theirs_out, version=1)
    out = io.BytesIO()
    with pytest.warns(DeprecationWarning), pytest.raises(pa.ArrowTypeError) as ours:
        pa_feather.write_feather(table, out, version=1)
    assert str(ours.value) == str(theirs.value)
    # only what pyarrow itself leaves (its magic): arrowipc wrote nothing before it
    assert out.getvalue() == theirs_out.getvalue()
    assert "arrowipc refused the table (ArrowTypeError); pyarrow's answer is kept" in \
        acc.report()


def test_read_schema_and_record_batch_serve_buffers(accelerated):
    table = pa.table({"a": [1, 2, 3], "s": ["x", None, "z"]})
    batch = table.to_batches()[0]
    schema_buf = table.schema.serialize()
    assert pa_ipc.read_schema(schema_buf).equals(table.schema)
    got = pa_ipc.read_record_batch(batch.serialize(), table.schema)
    assert type(got) is pa.RecordBatch and got.equals(batch)
    frame = pa.serialize_pandas(table.to_pandas())
    assert pa.deserialize_pandas(frame).equals(table.to_pandas())
    assert "served 4 calls, 0 fell back" in acc.report()


def test_read_schema_and_record_batch_serve_pyarrow_messages(accelerated):
    # pyarrow's test_ipc.py reads its MessageReader's messages with them
    table = pa.table({"a": [1, 2, 3], "s": ["x", None, "z"]})
    messages = list(pa_ipc.MessageReader.open_stream(_pa_stream(table)))
    assert pa_ipc.read_schema(messages[0]).equals(table.schema)
    got = pa_ipc.read_record_batch(messages[1], table.schema)
    assert type(got) is pa.RecordBatch and got.equals(table.to_batches()[0])
    assert "served 2 calls, 0 fell back" in acc.report()
    # a message of the other type: pyarrow's own exception (arrowipc refuses, pyarrow answers)
    acc.reset_report()
    with pytest.raises(OSError, match="^Expected IPC message of type record batch but got "
                                      "schema$"):
        pa_ipc.read_record_batch(messages[0], table.schema)
    assert "arrowipc refused the input (ArrowIOError); pyarrow's answer is kept" in acc.report()


def test_pyarrows_cpp_consumers_of_readers_take_a_served_stream_reader(accelerated, tmp_path):
    # a served stream reader is no RecordBatchReader, whose C++ object pyarrow's datasets, Acero
    # and Flight use directly (it would be empty): they take it through __arrow_c_stream__
    ds = pytest.importorskip("pyarrow.dataset")
    table = _table()
    data = _pa_stream(table)
    ds.write_dataset(pa_ipc.open_stream(data), str(tmp_path / "out"), format="ipc")
    got = ds.dataset(str(tmp_path / "out"), format="ipc").to_table()
    assert got.equals(table.replace_schema_metadata(got.schema.metadata))
    scanned = ds.Scanner.from_batches(pa_ipc.open_stream(data)).to_table()
    assert scanned.equals(table)
    acero = pytest.importorskip("pyarrow._acero")
    with pytest.raises(TypeError):             # refused, where an empty C++ reader would crash
        acero.RecordBatchReaderSourceNodeOptions(pa_ipc.open_stream(data))


def test_a_served_stream_readers_cast_and_c_stream_give_pyarrows_results(accelerated):
    table = pa.table({"a": [1, 2, None], "s": ["x", None, "z"]},
                     metadata={"origin": "test"})
    data = _pa_stream(table)
    target = pa.schema([("a", pa.float64()), ("s", pa.large_string())])
    got_cast = pa_ipc.open_stream(data).cast(target).read_all()
    got_stream = pa.table(pa_ipc.open_stream(data))            # through __arrow_c_stream__
    assert "served 2 calls, 0 fell back" in acc.report()
    with plain():
        want_cast = pa_ipc.open_stream(data).cast(target).read_all()
        want_stream = pa.table(pa_ipc.open_stream(data))
    for got, want in ((got_cast, want_cast), (got_stream, want_stream)):
        assert got.equals(want) and got.schema.metadata == want.schema.metadata


@pytest.mark.parametrize("export", ["capsule", "_export_to_c"])
def test_a_body_cut_short_crosses_the_c_interface_as_pyarrows_os_error(accelerated, export):
    # pyarrow's test_cffi.py::test_imported_batch_reader_error on a served reader
    schema = pa.schema([("foo", pa.int32())])
    batches = [pa.record_batch([[1, 2, 3]], schema=schema),
               pa.record_batch([[4, 5, 6]], schema=schema)]
    with plain():
        sink = pa.BufferOutputStream()
        with pa_ipc.new_stream(sink, schema) as w:
            for b in batches:
                w.write_batch(b)
    cut = sink.getvalue()[:-16]

    def imported():
        reader = pa_ipc.open_stream(cut)
        if export == "capsule":
            return pa.RecordBatchReader._import_from_c_capsule(reader.__arrow_c_stream__())
        ffi = pytest.importorskip("pyarrow.cffi").ffi
        c_stream = ffi.new("struct ArrowArrayStream*")
        reader._export_to_c(int(ffi.cast("uintptr_t", c_stream)))
        return pa.RecordBatchReader._import_from_c(int(ffi.cast("uintptr_t", c_stream)))

    reader = imported()
    assert reader.read_next_batch().equals(batches[0])
    with pytest.raises(OSError, match="Expected to be able to read 16 bytes for message body, "
                                      "got 8"):
        reader.read_next_batch()
    with pytest.raises(OSError, match="stream: truncated record batch message at byte 288. "
                                      "Expected to be able to read 16 bytes"):
        imported().read_all()
    assert "fell back" in acc.report() and ", 0 fell back" in acc.report()


def test_every_method_of_pyarrows_classes_is_served(accelerated):
    # a pyarrow method a served instance inherits would run over an empty C++ object
    for name in ("RecordBatchStreamReader", "RecordBatchFileReader", "RecordBatchStreamWriter",
                 "RecordBatchFileWriter"):
        served = getattr(pa_ipc, name)
        original = served._pyarrow_class
        public = {n for n in dir(original) if not n.startswith("__") or n in (
            "__iter__", "__next__", "__enter__", "__exit__", "__arrow_c_stream__")}
        static = {n for n in public if isinstance(original.__dict__.get(n), staticmethod) or
                  n in ("_open", "_import_from_c", "_import_from_c_capsule", "from_stream",
                        "from_batches")}
        missing = sorted(n for n in public - static
                         if not any(n in k.__dict__ for k in served.__mro__[:2]))
        assert missing == [], f"{name}: {missing}"


def test_a_feather_file_object_is_read_as_the_file_it_has_open(accelerated, tmp_path):
    # pd.read_feather hands pyarrow open(path, "rb"): read as that path, mapped; but only while
    # the name still names the file it has open (here replaced after the open: the open one wins)
    path = str(tmp_path / "t.feather")
    first = pa.table({"x": [1, 2, 3]})
    with plain():
        pa_feather.write_feather(first, path)
    with open(path, "rb") as f:
        assert pa_feather.read_table(f).equals(first)
    with open(path, "rb") as f:
        with plain():
            pa_feather.write_feather(pa.table({"x": [9]}), path + ".new")
        os.replace(path + ".new", path)
        assert pa_feather.read_table(f).equals(first)
        assert pa_feather.read_table(path).equals(pa.table({"x": [9]}))
    from arrowipc.accelerate.record import RECORD
    assert RECORD.served_count == 2 and RECORD.fell_back_count == 0    # since the last plain()


def _count_crossings(monkeypatch):
    """{name: calls} of arrowipc's C data interface exports and imports of schemas and arrays."""
    from arrowipc._core import cdata
    calls = {}
    for name in ("export_schema_capsule", "import_schema_capsule", "export_array_capsule",
                 "import_array_capsule"):
        def counted(*args, _name=name, _original=getattr(cdata, name)):
            calls[_name] = calls.get(_name, 0) + 1
            return _original(*args)
        monkeypatch.setattr(cdata, name, counted)
        calls[name] = 0
    return calls


def test_a_stream_read_and_written_served_crosses_its_schema_once(accelerated, monkeypatch):
    # The unchanged pyarrow job: batches of a served reader written by a served writer. The schema
    # goes to pyarrow once; each batch goes as its array alone; the writer writes arrowipc's own
    # batch and schema (read and checked by arrowipc) instead of importing pyarrow's back.
    whole = pa.table({"i": pa.array(range(9)), "s": pa.array(list("abcdefghi"), pa.large_string())},
                     metadata={"origin": "test"})
    table = pa.Table.from_batches(whole.to_batches(max_chunksize=3))
    with plain():
        data = _pa_stream_plain(table)
        batches = list(pa_ipc.open_stream(data).iter_batches_with_custom_metadata())
    # the oracle: the same served writer given pyarrow's own batches, imported one by one
    sink = pa.BufferOutputStream()
    with pa_ipc.new_stream(sink, table.schema) as writer:
        for batch, custom in batches:
            writer.write_batch(batch, custom_metadata=custom)
    expected = sink.getvalue().to_pybytes()
    calls = _count_crossings(monkeypatch)
    sink = pa.BufferOutputStream()
    reader = pa_ipc.open_stream(data)
    with pa_ipc.new_stream(sink, reader.schema) as writer:
        for batch, custom in reader.iter_batches_with_custom_metadata():
            assert type(batch) is pa.RecordBatch
            writer.write_batch(batch, custom_metadata=custom)
    assert calls == {"export_schema_capsule": 1, "import_schema_capsule": 0,
                     "export_array_capsule": 3, "import_array_capsule": 0}
    assert sink.getvalue().to_pybytes() == expected
    assert acc.report().endswith("served 3 calls, 0 fell back to pyarrow\n")
    with plain():
        written = list(pa_ipc.open_stream(sink.getvalue()).iter_batches_with_custom_metadata())
    assert [(b.to_pydict(), m) for b, m in written] == [(b.to_pydict(), m) for b, m in batches]
    assert all(b.schema.equals(table.schema, check_metadata=True) for b, _ in written)


def test_batches_handed_out_are_forgotten_with_them(accelerated):
    import gc
    from arrowipc.accelerate import served
    data = _pa_stream(_table())
    reader = pa_ipc.open_stream(data)
    batches = list(reader)
    handed = {id(b) for b in batches} | {id(reader.schema)}
    assert handed <= set(served._HANDED_OUT)
    del batches, reader
    gc.collect()
    assert not handed & set(served._HANDED_OUT)


def test_a_pyarrow_batch_equal_to_one_handed_out_is_imported(accelerated, monkeypatch):
    # only the very object a served reader made maps back; an equal batch of pyarrow's own
    # (another object) is imported through the C data interface as before
    table = pa.table({"i": pa.array(range(5))})
    data = _pa_stream(table)
    handed = pa_ipc.open_stream(data).read_next_batch()
    theirs = pa.record_batch([pa.array(range(5))], names=["i"])
    assert theirs.equals(handed)
    calls = _count_crossings(monkeypatch)
    sink = pa.BufferOutputStream()
    with pa_ipc.new_stream(sink, theirs.schema) as writer:
        writer.write_batch(theirs)
    assert calls["import_array_capsule"] == 1
    with plain():
        assert pa_ipc.open_stream(sink.getvalue()).read_all().equals(pa.Table.from_batches([theirs]))


def test_a_batch_failing_its_content_check_raises_pyarrows_class(accelerated):
    # offsets that decrease: the batch is framed and decoded, then refused by the content check
    # made before it is handed to pyarrow, which raises pyarrow's ArrowInvalid as reads do
    offsets = pa.py_buffer(struct.pack("<3q", 0, 5, 2))
    bad = pa.Array.from_buffers(pa.large_string(), 2, [None, offsets, pa.py_buffer(b"hello")])
    with plain():
        sink = pa.BufferOutputStream()
        with pa_ipc.new_stream(sink, pa.schema([("s", pa.large_string())])) as writer:
            writer.write_batch(pa.record_batch([pa.array(["ok"], pa.large_string())], ["s"]))
            writer.write_batch(pa.record_batch([bad], ["s"]))
        data = sink.getvalue()
    for read in (lambda r: r.read_next_batch(), lambda r: r.read_next_batch_with_custom_metadata()):
        reader = pa_ipc.open_stream(data)
        assert read(reader) is not None                 # the good batch first
        with pytest.raises(pa.ArrowInvalid, match="offsets must not decrease"):
            read(reader)


def _v1_with_a_root_vtable_far_outside():
    """A Feather V1 file (pyarrow's) whose metadata's root table points its vtable 1 GiB away:
    pyarrow's own V1 reader follows it and crashes the process (it was the fall back)."""
    import warnings
    table = pa.table({"i": pa.array([1, None, 3], pa.int64()), "s": pa.array(["a", None, "c"])})
    sink = io.BytesIO()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        acc.uninstall()
        try:
            pa_feather.write_feather(table, sink, version=1)
        finally:
            acc.install(report=False)
    data = bytearray(sink.getvalue())
    meta = len(data) - 8 - struct.unpack_from("<I", data, len(data) - 8)[0]
    struct.pack_into("<i", data, meta + struct.unpack_from("<I", data, meta)[0], 1 << 30)
    return bytes(data)


@pytest.mark.parametrize("given", ["path", "bytes", "BytesIO"])
def test_a_malformed_feather_v1_file_is_arrowipcs_error_in_pyarrows_class(
        accelerated, tmp_path, given):
    # never handed to pyarrow's V1 reader, which crashes on it
    data = _v1_with_a_root_vtable_far_outside()
    path = str(tmp_path / "bad.feather")
    with open(path, "wb") as f:
        f.write(data)
    source = {"path": path, "bytes": data, "BytesIO": io.BytesIO(data)}[given]
    with pytest.raises(pa.ArrowInvalid, match="invalid Feather V1 metadata .* flatbuffer "
                                              "CTable: vtable of the table at byte 20 is at"):
        pa_feather.read_table(source)
    assert "pyarrow's answer is kept" not in acc.report()
