"""Drop-in behaviour for pyarrow.ipc users, with pyarrow as the oracle: sources, equality, options,
stats, messages, errors, RecordBatchReader, tensors and keyword names."""
import copy
import io
import os
import pickle

import numpy as np
import pytest

import arrowipc
from arrowipc import ipc
from arrowipc.array import make_array
from arrowipc.errors import ArrowInvalid, ArrowIOError, ArrowTypeError

pa = pytest.importorskip("pyarrow")


def pa_table():
    return pa.table({"a": pa.array([1, 2, None, 4], pa.int64()),
                     "b": pa.array(["x", None, "zz", "w"])})


def pa_stream_bytes(table=None, **kw):
    table = pa_table() if table is None else table
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, table.schema, **kw) as w:
        w.write_table(table, max_chunksize=2)
    return sink.getvalue()


def pa_file_bytes(table=None):
    table = pa_table() if table is None else table
    sink = pa.BufferOutputStream()
    with pa.ipc.new_file(sink, table.schema) as w:
        w.write_table(table, max_chunksize=2)
    return sink.getvalue()


# -- pyarrow file objects as sources ------------------------------------------------------------

def test_pyarrow_buffer_reader_is_read_zero_copy():
    buf = pa_stream_bytes()
    table = ipc.open_stream(pa.BufferReader(buf)).read_all()
    assert table.equals(pa_table())
    # the values buffer of column a lies inside pyarrow's buffer: no copy was made
    data = table.column(0).chunks[0].data.buffers[1]
    assert buf.address <= data.address < buf.address + buf.size


@pytest.mark.parametrize("opener", ["osfile", "memory_map", "input_stream", "path"])
def test_pyarrow_files_and_memory_maps(opener, tmp_path):
    path = str(tmp_path / "t.arrow")
    with open(path, "wb") as f:
        f.write(pa_file_bytes().to_pybytes())
    source = {"osfile": lambda: pa.OSFile(path), "memory_map": lambda: pa.memory_map(path),
              "input_stream": lambda: pa.input_stream(path), "path": lambda: path}[opener]()
    if opener == "input_stream":           # not seekable: read as a stream after the magic
        source.read(8)
        assert ipc.open_stream(source).read_all().equals(pa_table())
    else:
        assert ipc.open_file(source).read_all().equals(pa_table())


def test_compressed_pyarrow_input_stream():
    raw = pa.BufferOutputStream()
    with pa.output_stream(raw, compression="gzip") as out:
        out.write(pa_stream_bytes())
    reader = ipc.open_stream(pa.input_stream(raw.getvalue(), compression="gzip"))
    assert reader.read_all().equals(pa_table())


def test_message_reader_over_pyarrow_buffer_reader():
    messages = list(ipc.MessageReader.open_stream(pa.BufferReader(pa_stream_bytes())))
    assert [m.type for m in messages] == ["schema", "record batch", "record batch"]


def test_any_object_with_read_buffer_returning_a_buffer():
    class Source:
        def __init__(self, data):
            self.data, self.pos = memoryview(data), 0

        def read_buffer(self, n):
            out = self.data[self.pos:self.pos + n]
            self.pos += len(out)
            return out

        def read(self, n):
            return bytes(self.read_buffer(n))

    assert ipc.open_stream(Source(pa_stream_bytes().to_pybytes())).read_all().equals(pa_table())


# -- equality with anything speaking the PyCapsule interface ------------------------------------

def test_equality_with_pyarrow_objects():
    t = pa_table()
    ours = arrowipc.table(t)
    assert ours.equals(t) and ours == t
    assert ours.schema.equals(t.schema) and ours.schema == t.schema
    assert ours.field(0) == t.schema.field(0)
    assert arrowipc.int64() == pa.int64() and arrowipc.int64().equals(pa.int64())
    assert arrowipc.int64() != pa.int32()
    batch = t.to_batches()[0]
    assert arrowipc.record_batch(batch).equals(batch)
    assert not ours.equals(t.slice(1))
    # a type is not a field, a table is not a batch
    assert arrowipc.int64() != pa.field("a", pa.int64())
    assert not ours.equals(batch)


# -- options --------------------------------------------------------------------------------------

def test_write_options_codec_object_keeps_its_level():
    options = ipc.IpcWriteOptions(compression=pa.Codec("zstd", compression_level=9))
    assert options.compression == "zstd" and options.compression_level == 9


def test_write_options_validation_as_pyarrow():
    options = ipc.IpcWriteOptions()
    for bad in ("V5", 1.5):
        with pytest.raises(TypeError, match="metadata_version must be a MetadataVersion"):
            options.metadata_version = bad
    with pytest.raises(ValueError):
        options.metadata_version = 42
    with pytest.raises(TypeError, match="compression must be None, a str or a Codec"):
        options.compression = 0
    options.compression = "LZ4"
    assert options.compression == "lz4"
    options.compression = "lz4_frame"
    assert options.compression == "lz4"


def test_options_objects_of_pyarrow_are_accepted():
    source = pa_stream_bytes()
    reader = ipc.open_stream(source, options=pa.ipc.IpcReadOptions(included_fields=[1]))
    assert reader.schema.names == ["b"]
    sink = io.BytesIO()
    with ipc.new_stream(sink, pa_table().schema,
                        options=pa.ipc.IpcWriteOptions(compression="zstd")) as w:
        w.write_table(pa_table())
    assert pa.ipc.open_stream(sink.getvalue()).read_all().equals(pa_table())


@pytest.mark.parametrize("bad", [True, 1, "zstd"])
def test_options_of_another_type_are_a_type_error(bad):
    with pytest.raises(TypeError, match="options must be an IpcReadOptions"):
        ipc.open_stream(pa_stream_bytes(), options=bad)
    with pytest.raises(TypeError, match="options must be an IpcWriteOptions"):
        ipc.new_stream(io.BytesIO(), pa_table().schema, options=bad)


def test_read_options_defaults_and_validation():
    options = ipc.IpcReadOptions()
    assert options.included_fields == [] and options.ensure_alignment == ipc.Alignment.Any
    with pytest.raises(TypeError, match="included_fields must be a list"):
        options.included_fields = None
    with pytest.raises(TypeError, match="ensure_alignment must be an Alignment"):
        options.ensure_alignment = "any"
    assert [int(a) for a in ipc.Alignment] == [int(a) for a in pa.ipc.Alignment]


def test_option_reprs_name_every_field():
    text = repr(ipc.IpcWriteOptions(compression="zstd"))
    for part in ("allow_64bit=False", "use_legacy_format=False", "metadata_version=V5",
                 'compression="zstd"', "use_threads=True", "emit_dictionary_deltas=False",
                 "unify_dictionaries=False"):
        assert part in text
    text = repr(ipc.IpcReadOptions(included_fields=[1]))
    for part in ("ensure_native_endian=True", "ensure_alignment=Any", "use_threads=True",
                 "included_fields=[1]"):
        assert part in text


def test_environment_variables_choose_legacy_format_and_v4(monkeypatch):
    schema = pa_table().schema
    monkeypatch.setenv("ARROW_PRE_0_15_IPC_FORMAT", "1")
    monkeypatch.setenv("ARROW_PRE_1_0_METADATA_VERSION", "1")
    sink = io.BytesIO()
    with ipc.new_stream(sink, schema) as w:
        assert w._use_legacy_format and w._metadata_version == ipc.MetadataVersion.V4
        w.write_table(pa_table())
    data = sink.getvalue()
    assert data[:4] != b"\xff\xff\xff\xff"           # pre-0.15 framing: no continuation
    assert data[-4:] == bytes(4)                         # and its 4-byte end-of-stream marker
    assert pa.ipc.read_message(data).metadata_version == pa.ipc.MetadataVersion.V4
    assert pa.ipc.open_stream(data).read_all().equals(pa_table())


# -- stats, custom metadata ----------------------------------------------------------------------

def test_stats_are_named_tuples_equal_to_pyarrows():
    source = pa_stream_bytes()
    ours, theirs = ipc.open_stream(source), pa.ipc.open_stream(source)
    ours.read_all()
    theirs.read_all()
    assert tuple(ours.stats) == tuple(theirs.stats)
    assert ours.stats._fields == theirs.stats._fields
    sink = io.BytesIO()
    with ipc.new_stream(sink, pa_table().schema) as w:
        w.write_table(pa_table(), max_chunksize=2)
    assert w.stats._fields == pa.ipc.WriteStats._fields and w.stats.num_record_batches == 2


def test_custom_metadata_compares_equal_to_str_and_bytes_dicts():
    sink = io.BytesIO()
    batch = pa_table().to_batches()[0]
    with ipc.new_stream(sink, batch.schema) as w:
        w.write_batch(batch, custom_metadata={"batch_id": "0"})
    md = next(ipc.open_stream(sink.getvalue()).iter_batches_with_custom_metadata()).custom_metadata
    assert isinstance(md, arrowipc.KeyValueMetadata)
    assert md == {"batch_id": "0"} and md == {b"batch_id": b"0"} and md["batch_id"] == b"0"
    assert md != {"batch_id": "1"}
    assert md == pa.ipc.open_stream(sink.getvalue()).read_next_batch_with_custom_metadata()[1]


def test_key_value_metadata_keeps_repeated_keys():
    md = arrowipc.KeyValueMetadata([("k", "1"), ("k", "2")])
    assert len(md) == 2 and md.get_all("k") == [b"1", b"2"] and md["k"] == b"2"
    with pytest.raises(TypeError, match="must be str or bytes"):
        arrowipc.KeyValueMetadata({"k": 1})


KEY_VALUE_CASES = [[("k", "1"), ("j", "2")], [("j", "2"), ("k", "1")], [("k", "1"), ("k", "2")],
                   [("k", "2"), ("k", "1")], [], [("a", b"\xff\x00")]]


@pytest.mark.parametrize("pairs", KEY_VALUE_CASES)
def test_key_value_metadata_prints_and_compares_as_pyarrows(pairs):
    """`print(batch.custom_metadata)` shows pyarrow's text; equality ignores the order of keys
    but not of a repeated key's values, and `equals` takes metadata only, as pyarrow's."""
    ours, theirs = arrowipc.KeyValueMetadata(pairs), pa.KeyValueMetadata(pairs)
    assert repr(ours) == repr(theirs) and str(ours) == str(theirs)
    for other in KEY_VALUE_CASES:
        want = theirs.equals(pa.KeyValueMetadata(other))
        assert ours.equals(arrowipc.KeyValueMetadata(other)) is want
        assert ours.equals(pa.KeyValueMetadata(other)) is want
        assert (ours == arrowipc.KeyValueMetadata(other)) is want
    with pytest.raises(TypeError):
        theirs.equals(dict(pairs))
    with pytest.raises(TypeError):
        ours.equals(dict(pairs))


# -- messages and errors --------------------------------------------------------------------------

def test_read_message_end_is_eof_error():
    reader = pa.BufferReader(pa_stream_bytes())
    types = []
    while True:
        try:
            types.append(ipc.read_message(reader).type)
        except EOFError:
            break
    assert types == ["schema", "record batch", "record batch"]


def test_read_message_partial_is_corrupted_message():
    with pytest.raises(ArrowInvalid, match="Corrupted message"):
        ipc.read_message(pa.BufferReader(b"ab"))


def test_read_record_batch_of_another_message_type_is_an_os_error():
    with pytest.raises(OSError, match="type record batch but got schema") as info:
        ipc.read_record_batch(pa_stream_bytes(), pa_table().schema)
    assert isinstance(info.value, ArrowIOError)


def test_read_record_batch_with_a_pyarrow_schema():
    batch = pa_table().to_batches()[0]
    got = ipc.read_record_batch(batch.serialize(), batch.schema)
    assert got.equals(batch)


def test_message_serialize_to_and_str():
    msg = ipc.read_message(pa_stream_bytes())
    sink = io.BytesIO()
    msg.serialize_to(sink)
    assert sink.getvalue() == msg.serialize().to_pybytes()
    assert "type: schema" in str(msg)
    with pytest.raises(TypeError):
        ipc.Message()


def test_get_record_batch_size_is_the_written_message_size():
    batch = pa_table().to_batches()[0]
    sink = io.BytesIO()
    with ipc.new_stream(sink, batch.schema) as w:
        w.write_batch(batch)
    schema_size = len(ipc.serialize_schema(arrowipc.schema(batch.schema)))
    assert ipc.get_record_batch_size(batch) == len(sink.getvalue()) - schema_size - 8


@pytest.mark.parametrize("name, builtin", [
    ("ArrowInvalid", ValueError), ("ArrowTypeError", TypeError), ("ArrowIndexError", IndexError),
    ("ArrowKeyError", KeyError), ("ArrowNotImplementedError", NotImplementedError),
    ("ArrowIOError", OSError)])
def test_exceptions_derive_from_pyarrows_builtins(name, builtin):
    assert issubclass(getattr(arrowipc, name), builtin)
    theirs = getattr(pa, name, None) or getattr(pa.lib, name)
    assert issubclass(theirs, builtin)


_JOINED = [("ArrowInvalid", "ArrowInvalid"), ("ArrowTypeError", "ArrowTypeError"),
           ("ArrowIndexError", "ArrowIndexError"), ("ArrowKeyError", "ArrowKeyError"),
           ("ArrowNotImplementedError", "ArrowNotImplementedError"),
           ("ArrowCapacityError", "ArrowCapacityError"), ("ArrowTruncatedBody", "ArrowInvalid"),
           ("ArrowException", "ArrowException")]


@pytest.mark.parametrize("name, pyarrow_name", _JOINED)
def test_with_pyarrow_loaded_pyarrows_class_catches_ours(name, pyarrow_name):
    ours = getattr(arrowipc.errors, name)
    with pytest.raises(getattr(pa.lib, pyarrow_name)) as caught:
        raise ours("what was expected, what was found")
    exc = caught.value
    assert isinstance(exc, ours) and isinstance(exc, pa.ArrowException)
    assert type(exc).__name__ == name and type(exc).__module__ == "arrowipc.errors"
    assert str(exc) == "what was expected, what was found"
    assert repr(exc) == f"{name}('what was expected, what was found')"
    again = pickle.loads(pickle.dumps(exc))
    assert type(again) is type(exc) and again.args == exc.args
    assert type(copy.copy(exc)) is type(exc)


def test_our_io_error_stays_an_os_error_as_pyarrows_alias():
    exc = arrowipc.errors.ArrowIOError(2, "No such file", "x.arrow")
    assert isinstance(exc, OSError) and not isinstance(exc, pa.ArrowException)
    assert (exc.errno, exc.strerror, exc.filename) == (2, "No such file", "x.arrow")


def test_a_corrupt_stream_is_caught_as_pa_arrow_invalid():
    with pytest.raises(pa.ArrowInvalid, match="flatbuffer Message: vtable at byte 0"):
        ipc.open_stream(b"\xff\xff\xff\xff\x10\x00\x00\x00" + b"\x00" * 16).read_all()


def test_without_pyarrow_errors_are_arrowipcs_alone():
    import subprocess
    import sys
    code = ("import sys, pickle, arrowipc; from arrowipc.errors import ArrowInvalid\n"
            "try:\n    arrowipc.ipc.open_stream(b'garbage-garbage').read_all()\n"
            "except ArrowInvalid as exc:\n"
            "    assert type(exc) is ArrowInvalid, type(exc).__mro__\n"
            "    assert type(pickle.loads(pickle.dumps(exc))) is ArrowInvalid\n"
            "assert 'pyarrow' not in sys.modules")
    subprocess.run([sys.executable, "-c", code], check=True, env=dict(os.environ))


# -- RecordBatchReader ----------------------------------------------------------------------------

def test_record_batch_reader_from_batches_and_stream():
    t = pa_table()
    reader = arrowipc.RecordBatchReader.from_batches(t.schema, t.to_batches(max_chunksize=2))
    assert reader.read_all().equals(t)
    assert arrowipc.RecordBatchReader.from_stream(t).read_all() == t
    with pytest.raises(TypeError):
        arrowipc.RecordBatchReader.from_batches(None, [])
    with pytest.raises(TypeError):
        arrowipc.RecordBatchReader.from_stream(t.column(0).chunks[0])
    assert pa.RecordBatchReader.from_stream(
        arrowipc.RecordBatchReader.from_stream(t)).read_all().equals(t)


def test_record_batch_reader_cast():
    t = pa_table()
    target = pa.schema([("a", pa.int32()), ("b", pa.large_string())])
    got = arrowipc.RecordBatchReader.from_stream(t).cast(target).read_all()
    assert got.equals(t.cast(target))
    with pytest.raises(ValueError, match="Target schema's field names"):
        arrowipc.RecordBatchReader.from_stream(t).cast(pa.schema([]))
    as_text = pa.schema([("a", pa.string()), ("b", pa.string())])      # what Array.cast can do
    assert arrowipc.RecordBatchReader.from_stream(t).cast(as_text).read_all().equals(
        pa.RecordBatchReader.from_stream(t).cast(as_text).read_all())
    with pytest.raises(ArrowTypeError, match="Field 0 cannot be cast from int64 to binary"):
        arrowipc.RecordBatchReader.from_stream(t).cast(
            pa.schema([("a", pa.binary()), ("b", pa.string())]))
    strict = pa.schema([pa.field("a", pa.int64(), nullable=False), ("b", pa.string())])
    with pytest.raises(ArrowInvalid, match="Can't cast array that contains nulls"):
        arrowipc.RecordBatchReader.from_stream(t).cast(strict).read_all()


def test_stream_reader_is_a_record_batch_reader_with_read_pandas():
    reader = ipc.open_stream(pa_stream_bytes())
    assert isinstance(reader, arrowipc.RecordBatchReader)
    assert reader.read_pandas().equals(pa_table().to_pandas())
    assert ipc.open_file(pa_file_bytes()).read_pandas().equals(pa_table().to_pandas())


def test_serialize_pandas_round_trip_through_pyarrow():
    df = pa_table().to_pandas()
    assert pa.deserialize_pandas(ipc.serialize_pandas(df)).equals(df)
    assert ipc.deserialize_pandas(pa.serialize_pandas(df)).equals(df)


# -- tensors --------------------------------------------------------------------------------------

@pytest.mark.parametrize("array", [np.arange(24, dtype="float32").reshape(2, 3, 4),
                                   np.arange(5, dtype="int8"),
                                   np.zeros((0, 3), dtype="uint16"),
                                   np.asfortranarray(np.arange(6, dtype="int64").reshape(2, 3))])
def test_tensors_both_ways_with_pyarrow(array):
    theirs = pa.Tensor.from_numpy(array, dim_names=[f"d{i}" for i in range(array.ndim)])
    sink = pa.BufferOutputStream()
    written = pa.ipc.write_tensor(theirs, sink)
    tensor = ipc.read_tensor(sink.getvalue())
    expected_names = pa.ipc.read_tensor(pa.BufferReader(sink.getvalue())).dim_names
    assert np.array_equal(tensor.to_numpy(), array)
    assert tensor.dim_names == [n for n in expected_names if n]   # pyarrow drops them when empty
    if array.size:                  # an empty tensor's strides reach nothing (pyarrow varies)
        assert tensor.strides == theirs.strides and tensor.equals(theirs)
    ours = io.BytesIO()
    assert ipc.write_tensor(theirs, ours) == written == ipc.get_tensor_size(theirs)
    back = pa.ipc.read_tensor(pa.BufferReader(ours.getvalue()))
    assert back.equals(pa.Tensor.from_numpy(np.ascontiguousarray(array), theirs.dim_names))


def _hostile_tensor(shape, strides, nbytes=32):
    """A Tensor message whose header claims `shape` and `strides` over an `nbytes` body."""
    from arrowipc.tensor import Tensor
    data = arrowipc.py_buffer(bytes(nbytes))
    sink = io.BytesIO()
    ipc.write_tensor(Tensor._make(arrowipc.int64(), data, shape, strides), sink)
    return sink.getvalue()


def test_tensor_message_cut_short_is_refused():
    sink = io.BytesIO()
    ipc.write_tensor(np.arange(4, dtype="int64"), sink)
    with pytest.raises(ArrowInvalid, match="Expected to be able to read 32 bytes for message "
                                           "body, got 24"):
        ipc.read_tensor(sink.getvalue()[:-8])


def test_tensor_strides_reaching_past_the_data_are_refused():
    with pytest.raises(ArrowInvalid, match=r"shape \[2, 2\] with strides \[800, 8\] reaches "
                                           r"byte 816 but the data buffer has 32 bytes"):
        ipc.read_tensor(_hostile_tensor((2, 2), (800, 8)))


def test_tensor_negative_dimension_is_refused():
    with pytest.raises(ArrowInvalid, match=r"negative dimension in shape \[-1\]"):
        ipc.read_tensor(_hostile_tensor((-1,), (8,)))


def test_tensor_negative_stride_is_refused():
    with pytest.raises(ArrowInvalid, match=r"negative stride in \[-8\]"):
        ipc.read_tensor(_hostile_tensor((2,), (-8,)))


def test_read_tensor_of_another_message_is_an_os_error():
    with pytest.raises(OSError, match="Header-type of flatbuffer-encoded Message is not Tensor "
                                      r"\(the message at byte 0 is a schema message\)"):
        ipc.read_tensor(pa_stream_bytes())


def test_read_tensor_at_the_end_is_eof_error():
    with pytest.raises(EOFError):
        ipc.read_tensor(b"")


# -- keyword names --------------------------------------------------------------------------------

def test_keyword_names_as_pyarrow():
    rows = [{"a": 1}, {"a": 2}]
    assert arrowipc.Table.from_pylist(mapping=rows).to_pylist() == rows
    assert arrowipc.RecordBatch.from_pylist(mapping=rows).num_rows == 2
    assert arrowipc.field("a", arrowipc.int8()).with_type(new_type=arrowipc.int16()).type == \
        arrowipc.int16()
    assert arrowipc.schema([]).append(field=arrowipc.field("x", arrowipc.int8())).names == ["x"]
    sink = io.BytesIO()
    with ipc.new_stream(sink, pa_table().schema) as w:
        w.write_table(table=pa_table())
    assert pa.ipc.open_stream(sink.getvalue()).read_all().equals(pa_table())


@pytest.mark.parametrize("mode", [None, "lossy"])
def test_maps_as_pydicts_as_pyarrow(mode):
    t = pa.table({"m": pa.array([[("a", 1), ("b", 2)], None], pa.map_(pa.string(), pa.int64()))})
    assert arrowipc.table(t).to_pylist(maps_as_pydicts=mode) == t.to_pylist(maps_as_pydicts=mode)


def test_maps_as_pydicts_strict_refuses_repeated_keys():
    t = pa.table({"m": pa.array([[("a", 1), ("a", 2)]], pa.map_(pa.string(), pa.int64()))})
    with pytest.raises(KeyError, match="duplicate key was 'a'"):
        arrowipc.table(t).to_pylist(maps_as_pydicts="strict")
    with pytest.raises(ValueError, match="Invalid value for 'maps_as_pydicts'"):
        arrowipc.table(t).to_pylist(maps_as_pydicts="yes")


def test_core_does_not_import_pyarrow():
    import subprocess
    import sys
    code = ("import sys, io, arrowipc, arrowipc.ipc as ipc; "
            "t = arrowipc.table({'a': [1, 2]}); s = io.BytesIO(); "
            "w = ipc.new_stream(s, t.schema); w.write_table(t); w.close(); "
            "r = ipc.open_stream(s.getvalue()); r.read_all(); r.stats; "
            "assert 'pyarrow' not in sys.modules")
    env = dict(os.environ)
    subprocess.run([sys.executable, "-c", code], check=True, env=env)


@pytest.mark.parametrize("number", [1.0, 1.9, -0.5, True, np.int64(1), np.float32(1.5),
                                    float("nan"), float("inf"), "1", b"1", None, [1]])
def test_batch_numbers_convert_as_pyarrow_converts_them(number):
    """get_batch and get_batch_with_custom_metadata take what pyarrow's take: an integer, or a
    number truncated toward zero; NaN, infinities and other types fail with its builtins."""
    table = pa.table({"a": np.arange(6)})
    sink = pa.BufferOutputStream()
    with pa.ipc.new_file(sink, table.schema) as w:
        w.write_table(table, max_chunksize=2)
    theirs = pa.ipc.open_file(sink.getvalue())
    ours = ipc.open_file(sink.getvalue().to_pybytes())
    for method in ("get_batch", "get_record_batch", "get_batch_with_custom_metadata"):
        try:
            expected = getattr(theirs, method)(number)
        except Exception as e:
            with pytest.raises(type(e)):
                getattr(ours, method)(number)
            continue
        got = getattr(ours, method)(number)
        if method == "get_batch_with_custom_metadata":
            got, expected = got.batch, expected.batch
        assert pa.record_batch(got).equals(expected)


@pytest.mark.parametrize("as_file", [False, True], ids=["bytes", "file object"])
def test_a_stream_cut_inside_a_body_is_an_oserror_as_pyarrows(as_file):
    """pyarrow raises OSError ("Expected to be able to read N bytes for message body"); ours
    is an OSError too, and still an ArrowInvalid, with the message and byte named."""
    import io
    from arrowipc.errors import ArrowTruncatedBody
    table = pa.table({"x": pa.array(range(100), pa.int64())})
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, table.schema) as w:
        w.write_table(table, max_chunksize=50)
    data = sink.getvalue().to_pybytes()
    cuts = [c for c in range(1, len(data)) if _body_cut(data[:c])]
    assert len(cuts) > 100
    for cut in cuts[::37]:
        with pytest.raises(OSError):
            pa.ipc.open_stream(data[:cut]).read_all()
        source = io.BytesIO(data[:cut]) if as_file else data[:cut]
        with pytest.raises(ArrowTruncatedBody, match=r"truncated record batch message at byte "
                                                     r"\d+\. Expected to be able to read \d+ "
                                                     r"bytes for message body, got \d+$") as e:
            ipc.open_stream(source).read_all()
        assert isinstance(e.value, OSError) and isinstance(e.value, ArrowInvalid)


def _body_cut(data):
    try:
        pa.ipc.open_stream(data).read_all()
    except OSError as e:
        return "message body" in str(e)
    except Exception:
        return False
    return False


# -- smaller pyarrow names: struct arrays of tables, validate, field_by_name, base classes ---------

def test_table_to_and_from_struct_array_as_pyarrow():
    theirs = pa.table({"a": [1, 2, None], "b": ["x", None, "z"]})
    ours = arrowipc.table(theirs)
    for size in (None, 2):
        assert pa.chunked_array(ours.to_struct_array(size)).equals(
            theirs.to_struct_array(size))
    assert pa.table(arrowipc.Table.from_struct_array(ours.to_struct_array())).equals(theirs)
    nulls = pa.array([{"a": 1, "b": "q"}, None, {"a": None, "b": "r"}])
    assert pa.table(arrowipc.Table.from_struct_array(arrowipc.array(nulls))).equals(
        pa.Table.from_struct_array(nulls))
    with pytest.raises(ArrowTypeError, match="expected a struct array, got int64"):
        arrowipc.Table.from_struct_array(arrowipc.array([1, 2]))


def test_chunked_array_validate_checks_every_chunk():
    from arrowipc._core.arraydata import ArrayData
    arrowipc.chunked_array([[1, 2], [3]]).validate(full=True)
    offsets = arrowipc.py_buffer(np.array([0, 9], np.int32).tobytes())
    bad = make_array(ArrayData(arrowipc.string(), 1, 0, 0,
                               [None, offsets, arrowipc.py_buffer(b"ab")]))
    with pytest.raises(ArrowInvalid):
        arrowipc.chunked_array([arrowipc.array(["ok"]), bad]).validate()


def test_schema_field_by_name_warns_as_pyarrow():
    schema = arrowipc.schema([("a", arrowipc.int64()), ("b", arrowipc.string()),
                              ("b", arrowipc.int8())])
    with pytest.warns(FutureWarning, match="'field_by_name' method is deprecated"):
        assert schema.field_by_name("a").name == "a"
    with pytest.warns(FutureWarning):
        assert schema.field_by_name("b") is None and schema.field_by_name("zz") is None


def test_dataset_base_classes_as_pyarrows():
    import arrowipc.dataset as ds
    assert isinstance(ds.IpcFileFormat().make_write_options(), ds.FileWriteOptions)
    assert issubclass(ds.FileSystemDatasetFactory, ds.DatasetFactory)
    for base in (ds.FileWriteOptions, ds.FragmentScanOptions, ds.DatasetFactory):
        with pytest.raises(TypeError):
            base()


def test_array_from_buffers_as_pyarrow():
    theirs = pa.array([1, 2, None])
    ours = arrowipc.Array.from_buffers(pa.int64(), 3, theirs.buffers())
    assert ours.null_count == 1 and pa.array(ours).equals(theirs)
    struct = arrowipc.Array.from_buffers(pa.struct([("x", pa.int64())]), 1, [None],
                                         children=[pa.array([5])])
    assert struct.to_pylist() == [{"x": 5}]
    with pytest.raises(ArrowInvalid, match="length 30: the validity buffer needs 4 bytes"):
        arrowipc.Array.from_buffers(pa.int64(), 30, theirs.buffers())
    with pytest.raises(ValueError, match="expected 2 buffers for type int64, got 1"):
        arrowipc.Array.from_buffers(pa.int64(), 3, [None])


@pytest.mark.parametrize("values, target", [
    (pa.array([1, 2, None]), pa.uint64()), (pa.array([1, 2, None]), pa.timestamp("s")),
    (pa.array(["a", None]), pa.binary()), (pa.array([[1, 2], [3]]), pa.list_(pa.uint64()))])
def test_array_view_as_pyarrow(values, target):
    assert pa.array(arrowipc.array(values).view(target)).equals(values.view(target))


def test_array_view_of_another_layout_is_arrow_invalid():
    with pytest.raises(ArrowInvalid, match="Can't view array of type int64 as int32: "
                                           "incompatible layouts"):
        arrowipc.array([1, 2]).view(arrowipc.int32())


_TENSOR_BATCHES = [
    {"a": pa.array([1, 2], pa.int32()), "b": pa.array([1.5, 2.5], pa.float32())},
    {"a": pa.array([1, None], pa.int32()), "b": pa.array([1, 2], pa.int8())},
    {"a": pa.array([1], pa.uint64()), "b": pa.array([1], pa.int64())},
    {"a": pa.array([], pa.int64())},
    {"a": pa.array([1.0, None]), "b": pa.array([None, 3.0])},
    {"s": pa.array(["x"])},
    {"h": pa.array([1], pa.float16()), "i": pa.array([1], pa.int8())},
]


@pytest.mark.parametrize("columns", _TENSOR_BATCHES, ids=lambda c: ",".join(
    str(v.type) for v in c.values()))
@pytest.mark.parametrize("options", [{}, {"null_to_nan": True}, {"row_major": False},
                                     {"null_to_nan": True, "row_major": False}])
def test_to_tensor_as_pyarrow(columns, options):
    def outcome(batch):
        try:
            t = batch.to_tensor(**options)
        except Exception as exc:
            return type(exc).__name__
        return str(t.type), t.shape, t.strides, repr(t.to_numpy().tolist())
    theirs = pa.record_batch(columns)
    assert outcome(arrowipc.record_batch(theirs)) == outcome(theirs)
    table = pa.Table.from_batches([theirs, theirs])
    assert outcome(arrowipc.table(table)) == outcome(table)
