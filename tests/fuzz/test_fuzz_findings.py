"""Inputs the long fuzz runs found, rebuilt by surgery on a stream written here.

* `push`, 2026-11-28 (seed 1.0.0-bigendian/generated_map_non_canonical.stream, index
  10,000,583): a string field whose field node claims 2**63 - 1 values. The size check of its
  offsets buffer formed `length + 1`, which wrapped to a negative count, so the batch was handed
  out; its deferred offsets check wrapped the same way and scanned past the end of the buffer
  (a read out of bounds whose verdict changed with what lay after the message in memory: the push
  decoder and the stream reader named different offsets). The bitmaps' sizes, (length + 7) // 8,
  wrapped the same way for a boolean field or a validity bitmap.
* pandas metadata, 2026-11-28 (mutant 3,253,457): a `datetimetz` column whose metadata names the
  time zone "+25:00" made to_pandas raise datetime's own ValueError, not ArrowInvalid.
* pandas metadata, 2026-11-28 (mutants 5,101,266 and 5,149,745): a column index level described
  as "bytes" whose labels are a number or a boolean made to_pandas raise AttributeError ('int'
  object has no attribute 'encode'), as pyarrow does, where arrowipc promises ArrowInvalid.
"""
import struct

import pytest

pa = pytest.importorskip("pyarrow")

from arrowipc import ipc, py_buffer  # noqa: E402
from arrowipc._core.offsets import check_offsets  # noqa: E402
from arrowipc.errors import ArrowInvalid  # noqa: E402

INT64_MAX = (1 << 63) - 1


def _list_stream(values: list, item_type, item_node: tuple, claimed: tuple) -> bytes:
    """A stream of one batch: a list column of 2 rows whose values' field node (`item_node`:
    length, null count) is replaced by `claimed` (a child may be longer than its parent)."""
    table = pa.table({"l": pa.array(values, pa.list_(item_type))})
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, table.schema) as writer:
        writer.write_table(table)
    data = bytearray(sink.getvalue().to_pybytes())
    nodes = struct.pack("<4q", 2, 0, *item_node)         # (length, null count) of l, l.item
    at = data.find(nodes)
    assert at > 0 and data.find(nodes, at + 1) < 0
    struct.pack_into("<2q", data, at + 16, *claimed)
    return bytes(data)


def _list_of_strings_stream(item_length: int) -> bytes:
    return _list_stream([["a", "bc"], ["def", "g", "h"]], pa.string(), (5, 0), (item_length, 0))


def _refused_alike(data: bytes, message: str) -> None:
    """The stream reader and the push decoder refuse `data` with `message`."""
    with pytest.raises(ArrowInvalid) as reader_error:
        ipc.open_stream(data).read_all()
    assert str(reader_error.value) == message
    decoder = ipc.StreamDecoder()
    with pytest.raises(ArrowInvalid) as decoder_error:
        decoder.feed(data)
        decoder.finish()
    assert str(decoder_error.value) == message


@pytest.mark.parametrize("item_length", [6, INT64_MAX])
def test_offsets_of_a_field_claiming_2_63_values_are_refused(item_length):
    _refused_alike(_list_of_strings_stream(item_length),
                   f"stream: field 'l.item' needs {(item_length + 1) * 4} bytes of offsets, "
                   f"buffer has 24")


def test_booleans_of_a_field_claiming_2_63_values_are_refused():
    data = _list_stream([[True, False], [True, None, False]], pa.bool_(), (5, 1), (INT64_MAX, 0))
    _refused_alike(data, f"stream: bool field 'l.item' of length {INT64_MAX} needs "
                         f"{(INT64_MAX + 7) // 8} value bytes, buffer has 1")


def test_validity_of_a_field_claiming_2_63_values_is_refused():
    data = _list_stream([[True, False], [True, None, False]], pa.bool_(), (5, 1), (INT64_MAX, 1))
    _refused_alike(data, f"stream: field 'l.item' has 1 nulls; its validity bitmap needs "
                         f"{(INT64_MAX + 7) // 8} bytes but has 1")


def test_check_offsets_refuses_a_length_of_2_63_minus_1():
    offsets = py_buffer(struct.pack("<3i", 0, 1, 2))
    with pytest.raises(ArrowInvalid, match=r"^offsets: 9223372036854775808 offsets from index 0 "
                                           r"need 36893488147419103232 bytes but the offsets "
                                           r"buffer has 12$"):
        check_offsets(offsets, 0, INT64_MAX, 4, 2)


def test_pandas_metadata_time_zone_offset_of_25_hours_is_refused():
    import json
    pd = pytest.importorskip("pandas")
    import arrowipc
    df = pd.DataFrame({"t": pd.date_range("2020-01-01", periods=2, tz="Europe/Paris")})
    table = pa.Table.from_pandas(df)
    meta = json.loads(table.schema.metadata[b"pandas"])
    meta["columns"][0]["metadata"]["timezone"] = "+25:00"
    table = table.replace_schema_metadata({b"pandas": json.dumps(meta).encode()})
    with pytest.raises(ArrowInvalid, match=r"^pandas metadata: columns\[0\] \('t'\): unknown time "
                                           r"zone '\+25:00': a UTC offset must be under 24 hours$"):
        arrowipc.table(table).to_pandas()


@pytest.mark.parametrize("label", [10**30, False])
def test_pandas_metadata_bytes_column_level_of_non_text_labels_is_refused(label):
    import json
    pd = pytest.importorskip("pandas")
    import arrowipc
    table = pa.Table.from_pandas(pd.DataFrame({"v": [1, 2]}), preserve_index=False)
    meta = json.loads(table.schema.metadata[b"pandas"])
    meta["columns"][0]["name"] = label
    meta["column_indexes"] = [{"name": None, "field_name": None, "pandas_type": "bytes",
                               "numpy_type": "object", "metadata": None}]
    table = table.replace_schema_metadata({b"pandas": json.dumps(meta).encode()})
    with pytest.raises(ArrowInvalid, match=r"^pandas metadata: cannot rebuild the columns index "
                                           r"that 'column_indexes' describes \(.*'encode'\)$"):
        arrowipc.table(table).to_pandas()
