"""MessageEncoder hands out each body's buffer spans: exactly what its own header lists, for
record batches and dictionary batches, compressed or not, in either framing, with custom metadata."""
import sys
import os

import pyarrow as pa
import pytest

import arrowipc
from arrowipc.ipc._batch_decode import decode_record_batch_header
from arrowipc.ipc._framing import decode_message
from arrowipc.ipc import metadata as md
from arrowipc.ipc.options import IpcWriteOptions
from arrowipc.ipc.writer import MessageEncoder

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "dissociated"))
from dissociated_helpers import (delta_dictionary_batches, extra_types_table,  # noqa: E402
                                 issue2_type_table)


def header_spans(message, prefix_length: int) -> list:
    """The body spans a reader finds by decoding the message's header."""
    msg = decode_message(memoryview(message.metadata)[prefix_length:])
    header = msg.header
    if message.header_type == md.HEADER_DICTIONARY_BATCH:
        header = header.table(1, "RecordBatch")
    return decode_record_batch_header(header).buffers_list()


@pytest.mark.parametrize("options", [
    dict(), dict(compression="lz4"), dict(compression="zstd"), dict(use_legacy_format=True),
    dict(alignment=8)], ids=["plain", "lz4", "zstd", "legacy", "align8"])
@pytest.mark.parametrize("data", ["issue2", "extra", "deltas"])
def test_encoder_spans_are_the_headers_spans(options, data):
    if data == "issue2":
        table = issue2_type_table()
    elif data == "extra":
        table = extra_types_table()
    else:
        table = pa.Table.from_batches(delta_dictionary_batches())
    ours = arrowipc.table(table)
    write_options = IpcWriteOptions(emit_dictionary_deltas=True, **options)
    encoder = MessageEncoder(ours.schema, write_options)
    seen = set()
    for k, batch in enumerate(ours.to_batches()):
        custom = {"batch": str(k)} if k % 2 else None
        for m in encoder.batch_messages(batch, custom):
            seen.add(m.header_type)
            assert m.spans == header_spans(m, encoder.prefix_length)
            assert all(off + n <= m.body_length for off, n in m.spans)
    if data != "issue2":
        assert seen == {md.HEADER_DICTIONARY_BATCH, md.HEADER_RECORD_BATCH}
