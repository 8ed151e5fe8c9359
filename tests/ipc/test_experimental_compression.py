"""Arrow 0.17 compressed V4 bodies before the format had BodyCompression, naming the codec in the
message's custom metadata ("ARROW:experimental_compression"). Such a body read as plain is
garbage: the reader refuses it, naming the message and the codec, instead of returning values."""
import pytest

import arrowipc.ipc as ipc
from arrowipc.errors import ArrowNotImplementedError

pa = pytest.importorskip("pyarrow")

KEY = "ARROW:experimental_compression"


def _v4_stream(custom_metadata, metadata_version=None):
    table = pa.table({"a": pa.array(range(5), pa.int64())})
    sink = pa.BufferOutputStream()
    options = pa.ipc.IpcWriteOptions(metadata_version=metadata_version or
                                     pa.ipc.MetadataVersion.V4)
    with pa.ipc.new_stream(sink, table.schema, options=options) as w:
        w.write_batch(table.to_batches()[0], custom_metadata=custom_metadata)
    return sink.getvalue().to_pybytes()


def test_a_batch_marked_with_experimental_compression_is_refused():
    data = _v4_stream({KEY: "LZ4"})
    with pytest.raises(ArrowNotImplementedError,
                       match=r"message at byte \d+: record batch message body compressed with "
                             r"Arrow 0.17's experimental compression \(LZ4"):
        ipc.open_stream(data).read_all()


def test_other_custom_metadata_and_v5_batches_read_as_before():
    assert ipc.open_stream(_v4_stream({"note": "x"})).read_all().column(0).to_pylist() == \
        list(range(5))
    # only V4 messages carried the experimental scheme (pyarrow looks for it there only)
    v5 = _v4_stream({KEY: "LZ4"}, pa.ipc.MetadataVersion.V5)
    assert ipc.open_stream(v5).read_all().column(0).to_pylist() == list(range(5))
