"""pyarrow Expressions read from their serialized form (an IPC file whose schema metadata lists
the tree): hostile or damaged bytes raise ArrowInvalid naming what was wrong, never crash."""
import io

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pytest

import arrowipc
from arrowipc.errors import ArrowException, ArrowInvalid
from arrowipc.expression import deserialize


def _payload(expr):
    return bytes(expr.__reduce__()[1][0])


def _serialized(metadata, columns=None):
    """An IPC file like pyarrow's serialized expressions, with the given schema metadata."""
    columns = columns if columns is not None else {"": [1]}
    table = arrowipc.table(columns).replace_schema_metadata(metadata)
    sink = io.BytesIO()
    with arrowipc.ipc.new_file(sink, table.schema) as writer:
        writer.write_table(table)
    return sink.getvalue()


def test_a_well_formed_payload_reads_back():
    e = (pc.field("x") > 3) & pc.field("s").isin(["a", None])
    assert str(deserialize(_payload(e))) == str(e)


def test_a_call_without_end_is_refused():
    with pytest.raises(ArrowInvalid, match="serialized expression: call equal has no end"):
        deserialize(_serialized({"call": "equal"}))


def test_a_literal_index_outside_the_batch_is_refused():
    with pytest.raises(ArrowInvalid, match=r"serialized expression: literal b'3' is not a "
                                           r"column of its batch \(1 columns\)"):
        deserialize(_serialized({"literal": "3"}))


def test_a_call_with_the_wrong_number_of_arguments_is_refused():
    with pytest.raises(ArrowInvalid, match=r"serialized expression: call equal has 1 "
                                           r"argument\(s\), expected 2"):
        deserialize(_serialized({"call": "equal", "field_ref": "x", "end": "equal"}))


def test_an_is_in_call_without_options_is_refused():
    with pytest.raises(ArrowInvalid, match="serialized expression: call is_in has no options"):
        deserialize(_serialized({"call": "is_in", "field_ref": "x", "end": "is_in"}))


def test_a_name_that_is_not_utf8_is_refused():
    data = _serialized({"field_ref": "\u00e9"})
    bad = data.replace("\u00e9".encode(), b"\xff\xfe")
    with pytest.raises(ArrowInvalid, match="serialized expression: a field name is not UTF-8"):
        deserialize(bad)


def test_an_unknown_key_is_refused():
    with pytest.raises(ArrowInvalid, match="serialized expression: unexpected metadata key "
                                           "b'bogus'"):
        deserialize(_serialized({"bogus": "1"}))


def test_empty_metadata_is_refused():
    with pytest.raises(ArrowInvalid, match="serialized expression: the metadata ends inside "
                                           "the tree"):
        deserialize(_serialized({}))


def test_a_nested_reference_longer_than_the_metadata_is_refused():
    with pytest.raises(ArrowInvalid, match="a nested field reference of b'9' names"):
        deserialize(_serialized({"nested_field_ref": "9"}))


@pytest.mark.parametrize("cut", [0, 7, 8, 12, 40, 200, 500])
def test_truncated_payloads_raise_arrow_invalid(cut):
    data = _payload((pc.field("x") > 3) | pc.field("y").is_null())
    with pytest.raises(ArrowInvalid):
        deserialize(data[:cut])


def test_a_cut_footer_still_reads():
    # the tree and its literals come before the footer, which the reader does not need
    e = (pc.field("x") > 3) | pc.field("y").is_null()
    data = _payload(e)
    assert str(deserialize(data[:-30])) == str(e)


def test_damaged_payloads_raise_an_arrow_error_or_read():
    data = _payload((pc.field("x") > pa.scalar(3, pa.int8())) &
                    pc.field("s").isin(["a", "bb", None]) | ~pc.field("f").is_null())
    rng = np.random.default_rng(0)
    for _ in range(400):
        damaged = bytearray(data)
        for pos in rng.integers(0, len(damaged), int(rng.integers(1, 4))):
            damaged[int(pos)] = int(rng.integers(0, 256))
        try:
            expr = deserialize(bytes(damaged))
            str(expr)                       # whatever reads back prints
        except ArrowException:
            pass
