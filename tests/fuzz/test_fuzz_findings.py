"""Inputs the long fuzz runs found, rebuilt by surgery on a stream written here.

* `push`, 2026-11-28 (seed 1.0.0-bigendian/generated_map_non_canonical.stream, index
  10,000,583): a string field whose field node claims 2**63 - 1 values. The size check of its
  offsets buffer formed `length + 1`, which wrapped to a negative count, so the batch was handed
  out; its deferred offsets check wrapped the same way and scanned past the end of the buffer
  (a read out of bounds whose verdict changed with what lay after the message in memory: the push
  decoder and the stream reader named different offsets).
"""
import struct

import pytest

pa = pytest.importorskip("pyarrow")

from arrowipc import ipc, py_buffer  # noqa: E402
from arrowipc._core.offsets import check_offsets  # noqa: E402
from arrowipc.errors import ArrowInvalid  # noqa: E402

INT64_MAX = (1 << 63) - 1


def _list_of_strings_stream(item_length: int) -> bytes:
    """A stream of one batch: a list<string> column of 2 rows whose 5 string values' field
    node claims `item_length` values (a child may be longer than its parent)."""
    table = pa.table({"l": pa.array([["a", "bc"], ["def", "g", "h"]], pa.list_(pa.string()))})
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, table.schema) as writer:
        writer.write_table(table)
    data = bytearray(sink.getvalue().to_pybytes())
    nodes = struct.pack("<qqqq", 2, 0, 5, 0)            # (length, null count) of l, l.item
    at = data.find(nodes)
    assert at > 0 and data.find(nodes, at + 1) < 0
    struct.pack_into("<q", data, at + 16, item_length)
    return bytes(data)


@pytest.mark.parametrize("item_length", [6, INT64_MAX])
def test_offsets_of_a_field_claiming_2_63_values_are_refused(item_length):
    data = _list_of_strings_stream(item_length)
    message = (f"stream: field 'l.item' needs {(item_length + 1) * 4} bytes of offsets, "
               f"buffer has 24")
    with pytest.raises(ArrowInvalid) as reader_error:
        ipc.open_stream(data).read_all()
    assert str(reader_error.value) == message
    decoder = ipc.StreamDecoder()
    with pytest.raises(ArrowInvalid) as decoder_error:
        decoder.feed(data)
        decoder.finish()
    assert str(decoder_error.value) == message


def test_check_offsets_refuses_a_length_of_2_63_minus_1():
    offsets = py_buffer(struct.pack("<3i", 0, 1, 2))
    with pytest.raises(ArrowInvalid, match=r"^offsets: 9223372036854775808 offsets from index 0 "
                                           r"need 36893488147419103232 bytes but the offsets "
                                           r"buffer has 12$"):
        check_offsets(offsets, 0, INT64_MAX, 4, 2)
