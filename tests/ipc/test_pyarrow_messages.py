"""pyarrow's Message objects are taken where pyarrow takes them: `read_schema`,
`read_record_batch` and `Message.equals` (pyarrow's test_ipc.py builds its messages with
`pa.ipc.MessageReader` and hands them to whichever `ipc` module it tests)."""
import pytest

pa = pytest.importorskip("pyarrow")

from arrowipc import ipc  # noqa: E402
from arrowipc.ipc._framing import is_message_like  # noqa: E402


@pytest.fixture
def stream():
    batches = [pa.record_batch([pa.array([1, None, 3]), pa.array(["a", "bc", None])],
                               names=["i", "s"]),
               pa.record_batch([pa.array([4]), pa.array(["dé"])], names=["i", "s"])]
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, batches[0].schema) as w:
        for b in batches:
            w.write_batch(b)
    return batches, sink.getvalue()


def test_pyarrow_messages_are_message_like_and_ours_and_files_are_not(stream):
    _, buf = stream
    theirs = list(pa.ipc.MessageReader.open_stream(buf))
    ours = list(ipc.MessageReader.open_stream(buf))
    assert all(is_message_like(m) for m in theirs)
    assert not any(is_message_like(m) for m in ours)
    assert not is_message_like(pa.BufferReader(buf))
    assert not is_message_like(buf)


def test_read_schema_and_record_batch_take_pyarrow_messages(stream):
    batches, buf = stream
    messages = list(pa.ipc.MessageReader.open_stream(buf))
    assert ipc.read_schema(messages[0]).equals(pa.ipc.read_schema(messages[0]))
    for batch, message in zip(batches, messages[1:]):
        ours = ipc.read_record_batch(message, batch.schema)
        assert pa.record_batch(ours).equals(pa.ipc.read_record_batch(message, batch.schema))


def test_a_pyarrow_message_of_the_wrong_type_is_refused_as_pyarrow_refuses_it(stream):
    batches, buf = stream
    messages = list(pa.ipc.MessageReader.open_stream(buf))
    with pytest.raises(OSError):        # pyarrow decodes the batch's metadata as a schema
        pa.ipc.read_schema(messages[1])
    with pytest.raises(OSError) as e:
        ipc.read_schema(messages[1])
    assert str(e.value) == ("read_schema: Expected IPC message of type schema but got record "
                            "batch")
    with pytest.raises(OSError, match="^Expected IPC message of type record batch but got "
                                      "schema$"):
        pa.ipc.read_record_batch(messages[0], batches[0].schema)
    for message in (messages[0], ipc.read_message(messages[0].serialize())):
        with pytest.raises(OSError) as e:
            ipc.read_record_batch(message, batches[0].schema)
        assert str(e.value) == ("read_record_batch: Expected IPC message of type record batch "
                                "but got schema")
    # from bytes too, in the same words
    with pytest.raises(OSError, match="^Expected IPC message of type record batch but got "
                                      "schema$"):
        pa.ipc.read_record_batch(buf, batches[0].schema)
    with pytest.raises(OSError) as e:
        ipc.read_record_batch(buf, batches[0].schema)
    assert str(e.value) == ("read_record_batch: Expected IPC message of type record batch but "
                            "got schema")


def test_read_tensor_of_another_message_is_refused_in_pyarrows_words(stream):
    _, buf = stream
    with pytest.raises(OSError, match="^Header-type of flatbuffer-encoded Message is not "
                                      "Tensor.$"):
        pa.ipc.read_tensor(pa.BufferReader(buf))
    with pytest.raises(OSError) as e:
        ipc.read_tensor(pa.BufferReader(buf))
    assert str(e.value) == ("read_tensor: Header-type of flatbuffer-encoded Message is not "
                            "Tensor (the message at byte 0 is a schema message)")


def test_equals_compares_with_pyarrow_messages_by_their_bytes(stream):
    _, buf = stream
    theirs = list(pa.ipc.MessageReader.open_stream(buf))
    ours = list(ipc.MessageReader.open_stream(buf))
    for i, (o, t) in enumerate(zip(ours, theirs)):
        assert o.equals(t)
        assert o.equals(ipc.read_message(t.serialize()))
        for j, other in enumerate(theirs):
            assert o.equals(other) == (i == j) == t.equals(theirs[j])
    assert not ours[0].equals(buf)
    assert not ours[0].equals(None)
