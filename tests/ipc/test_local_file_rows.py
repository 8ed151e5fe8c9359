"""local_file_rows: a local file's rows from its footer and record batch headers, no reader.

pyarrow's count is the oracle for every well-formed file; anything else is None (the dataset then
opens the file with a reader, whose error names what is wrong: tests/dataset/test_errors.py)."""
from __future__ import annotations

import os
import struct

import pytest

pa = pytest.importorskip("pyarrow")
import pyarrow.ipc as pa_ipc  # noqa: E402

from arrowipc import ipc  # noqa: E402
from arrowipc.errors import ArrowInvalid  # noqa: E402
from arrowipc.ipc.reader import decoded_footer, local_file_rows  # noqa: E402
from arrowipc.ipc.statistics import file_statistics, footer_statistics  # noqa: E402


def _pyarrow_file(path, sizes, dictionary=False):
    values = pa.array(["a", "b", "a"] * 100).dictionary_encode() if dictionary \
        else pa.array(range(300), pa.int64())
    schema = pa.schema([("x", values.type)])
    with pa_ipc.new_file(str(path), schema) as w:
        for n in sizes:
            w.write_batch(pa.record_batch([values.slice(0, n)], schema=schema))
    return str(path)


def _pyarrow_rows(path):
    return pa_ipc.open_file(path).read_all().num_rows


@pytest.mark.parametrize("sizes", [[], [0], [3, 0, 300], [1] * 400],
                         ids=["no batches", "empty batch", "three", "400 batches"])
@pytest.mark.parametrize("dictionary", [False, True], ids=["plain", "dictionary"])
def test_rows_of_pyarrow_files(tmp_path, sizes, dictionary):
    # 400 batches: a footer larger than the tail read, and headers outside it
    path = _pyarrow_file(tmp_path / "f.arrow", sizes, dictionary)
    found = local_file_rows(path)
    assert found is not None
    st = os.stat(path)
    assert (found.rows, found.size, found.mtime_ns) == (_pyarrow_rows(path), st.st_size,
                                                        st.st_mtime_ns)
    schema, metadata, batches = decoded_footer(found.footer)
    reader = ipc.open_file(path)
    assert (schema, metadata, batches) == (reader.schema, reader.metadata,
                                           reader.num_record_batches)


def test_footer_statistics_of_an_arrowipc_file_are_the_readers(tmp_path):
    path = str(tmp_path / "s.arrow")
    import arrowipc
    t = arrowipc.table({"x": list(range(10)), "s": ["v"] * 10})
    with ipc.new_file(path, t.schema, statistics=True) as w:
        w.write_table(t, max_chunksize=4)
    found = local_file_rows(path)
    assert found is not None and found.rows == 10
    _, metadata, batches = decoded_footer(found.footer)
    summary = footer_statistics(metadata, batches)
    assert summary is not None and summary == file_statistics(ipc.open_file(path))


def _damaged(tmp_path, edit):
    path = _pyarrow_file(tmp_path / "d.arrow", [3, 4])
    data = bytearray(open(path, "rb").read())
    data = edit(data)
    open(path, "wb").write(bytes(data))
    return path


def _block_offset(data, k):
    """The byte of the k-th record batch block's offset field in the footer (the footer's
    only int64 equal to a message's start, in order)."""
    footer_len = struct.unpack_from("<i", data, len(data) - 10)[0]
    starts = _message_starts(data)
    found = [i for i in range(len(data) - 10 - footer_len, len(data) - 10 - 8)
             if struct.unpack_from("<q", data, i)[0] in starts[1:]]
    return found[k]


def _message_starts(data):
    return [i for i in range(8, len(data) - 4) if data[i:i + 4] == b"\xff\xff\xff\xff"]


def _node_count_at(data, k, rows):
    """The byte of the k-th record batch header's node vector count (its one node: `rows`
    rows, no nulls)."""
    off, meta_len, _ = ipc.open_file(pa.py_buffer(bytes(data))).record_batch_blocks[k]
    at = bytes(data).index(struct.pack("<qq", rows, 0), off, off + meta_len) - 4
    assert struct.unpack_from("<I", data, at)[0] == 1
    return at


def _set(data, at, fmt, value):
    struct.pack_into(fmt, data, at, value)
    return data


DAMAGE = {
    "cut at the end": lambda d: d[:-3],
    "trailing magic": lambda d: d[:-6] + b"ARROW2",
    "leading magic": lambda d: b"ARROW2" + d[6:],
    "footer length past the file": lambda d: _set(d, len(d) - 10, "<i", len(d)),
    "footer length zero": lambda d: _set(d, len(d) - 10, "<i", 0),
    "block past the footer": lambda d: _set(d, _block_offset(d, 0), "<q", len(d)),
    "block at the schema message": lambda d: _set(d, _block_offset(d, 1), "<q", 8),
    "node vector past the header": lambda d: _set(d, _node_count_at(d, 1, 4), "<I", 1 << 20),
    "header bytes garbled": lambda d: d[:_message_starts(d)[1] + 8] + b"\xee" * 16
    + d[_message_starts(d)[1] + 24:],
}


@pytest.mark.parametrize("damage", DAMAGE, ids=list(DAMAGE))
def test_a_file_not_well_formed_is_left_to_the_reader(tmp_path, damage):
    path = _damaged(tmp_path, DAMAGE[damage])
    assert local_file_rows(path) is None
    with pytest.raises(ArrowInvalid):               # the damage is one the reader refuses
        ipc.open_file(path).count_rows()


def test_what_is_not_a_readable_regular_file_is_none(tmp_path):
    assert local_file_rows(str(tmp_path / "missing.arrow")) is None
    assert local_file_rows(str(tmp_path)) is None
    fifo = str(tmp_path / "fifo")
    os.mkfifo(fifo)
    assert local_file_rows(fifo) is None            # never opened for reading: no hang
    small = tmp_path / "small.arrow"
    small.write_bytes(b"ARROW1\0\0" + b"\0" * 8 + b"ARROW1")
    assert local_file_rows(str(small)) is None


def test_count_rows_refuses_a_record_batch_block_at_another_message(tmp_path):
    # the reader's count (and so a dataset's, for a file local_file_rows leaves to it) checks
    # what each block holds, as reading the batch does: a block at the schema message counted
    # its header as a batch of some length
    path = _damaged(tmp_path, DAMAGE["block at the schema message"])
    with pytest.raises(ArrowInvalid, match="^file: record batch block 1 holds a schema message$"):
        ipc.open_file(path).count_rows()
    import arrowipc.dataset as ds
    with pytest.raises(ArrowInvalid, match=f"^{path}: file: record batch block 1 holds a schema"):
        ds.dataset(path, format="ipc").count_rows()


def test_a_header_that_does_not_decode_is_the_datasets_error_naming_the_file(tmp_path):
    # its length alone was read: the dataset counted 7 rows where every read, the reader's
    # count and pyarrow's refuse the header
    import pyarrow.dataset as pds

    import arrowipc.dataset as ds
    path = _damaged(tmp_path, DAMAGE["node vector past the header"])
    with pytest.raises(OSError, match="Invalid flatbuffers message"):
        pds.dataset(path, format="ipc").count_rows()
    with pytest.raises(ArrowInvalid, match=f"^{path}: flatbuffer RecordBatch: vector in field 1 "
                                           f"claims 1048576 elements of 16 bytes at byte \\d+, "
                                           f"past the end of the 136-byte metadata$"):
        ds.dataset(path, format="ipc").count_rows()
