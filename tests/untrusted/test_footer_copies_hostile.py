"""Hostile footers: record batch header copies, footer blocks and ranged reads of them.

A file written with statistics carries a copy of every record batch header in its footer
(remote.HEADERS_KEY); the footer's blocks say where every batch lies; a reader of a file behind
a link fetches ranges of several batches at once (the coalesced fetch, a dataset scan's window
of adjacent batches) and takes the filesystem's answers; the statistics next to the copies are
JSON too. Every one of them comes from bytes (or a peer) not to be trusted: each
test makes the hostile input from a valid file and checks that the read never crashes, hangs or
reads outside the input, that copies which are not the file's headers are not used (pyarrow,
which ignores them, is the oracle then), and that errors are ArrowInvalid or OSError naming what
was expected, what was found and where. tests/ipc/test_remote.py and tests/ipc/test_file_blocks.py
hold the cases this file does not repeat (malformed documents of the common kinds, blocks past
the footer, a byte of a copy changed at full validation, servers that misbehave from the start).
"""
from __future__ import annotations

import base64
import json
import os
import struct
import sys

import pytest

pa = pytest.importorskip("pyarrow")
pa_ipc = pytest.importorskip("pyarrow.ipc")

import arrowipc  # noqa: E402
from arrowipc import ipc  # noqa: E402
from arrowipc.errors import ArrowInvalid, ArrowIOError  # noqa: E402
from arrowipc.ipc.remote import (BATCH_HEADERS_LIMIT, HEADERS_KEY,  # noqa: E402
                                  decode_batch_headers, encode_batch_headers)
from crafting import Crafted  # noqa: E402
from remote_servers import CountingFile, in_thread  # noqa: E402

# the footer surgery helpers live with the ipc tests (a test folder is not a package)
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                "ipc"))
from ipc_surgery import FOOTER_RECORD_BATCHES, file_blocks, with_footer_metadata  # noqa: E402

N_BATCHES = 4


def _table(rows: int = 100) -> pa.Table:
    return pa.table({"a": pa.array(range(rows), pa.int64()),
                     "s": [f"x{i}" for i in range(rows)]})


def _statistics_file(rows: int = 100, n_batches: int = N_BATCHES) -> bytes:
    """A file of ours written with statistics: its footer holds every batch header's copy."""
    sink = pa.BufferOutputStream()
    table = _table(rows)
    with ipc.new_file(sink, arrowipc.table(table).schema, statistics=True) as writer:
        for batch in table.to_batches(max_chunksize=-(-rows // n_batches)):
            writer.write_batch(arrowipc.record_batch(batch))
    data = sink.getvalue().to_pybytes()
    assert HEADERS_KEY.encode() in pa_ipc.open_file(pa.py_buffer(data)).metadata
    return data


@pytest.fixture(scope="module")
def data() -> bytes:
    return _statistics_file()


def _blocks(data: bytes) -> list[tuple[int, int, int]]:
    return ipc.open_file(data).record_batch_blocks


def _headers(data: bytes) -> list[bytes]:
    return [data[off:off + meta_len] for off, meta_len, _ in _blocks(data)]


def _with_copies(data: bytes, copies: list[bytes]) -> bytes:
    """`data` whose footer holds `copies` as the header copies, bound to its own blocks (so a
    reader takes them as matching the footer)."""
    return with_footer_metadata(data, {HEADERS_KEY: encode_batch_headers(copies, _blocks(data))})


def _with_block(data: bytes, i: int, block: tuple[int, int, int]) -> bytes:
    """`data` with record batch block i of its footer replaced by `block`."""
    out = bytearray(data)
    pos, _ = file_blocks(data, FOOTER_RECORD_BATCHES)[i]
    struct.pack_into("<qi4xq", out, pos, *block)
    return bytes(out)


def _projected(source, validate: str = "structural", **options):
    return ipc.open_file(source, options=ipc.IpcReadOptions(included_fields=[0],
                                                            validate=validate, **options))


def _pyarrow_column(data: bytes, name: str = "a") -> pa.ChunkedArray:
    return pa_ipc.open_file(pa.py_buffer(data)).read_all().column(name)


def _fetched_headers(reads: list[tuple[int, int]], data: bytes) -> bool:
    """Whether the reads (offset, length) of a counting file fetched record batch headers: a
    header fetch starts at a block (buffer ranges start in bodies), the copies unused then."""
    return any(at in {off for off, _, _ in _blocks(data)} for at, _ in reads)




# -- the copies' document: decoded without trusting its structure or its size ------------------
def _document(data: bytes) -> bytes:
    return pa_ipc.open_file(pa.py_buffer(data)).metadata[HEADERS_KEY.encode()]


@pytest.mark.parametrize("nesting", ["arrays", "objects", "in metadata"])
def test_deeply_nested_json_is_ignored_not_a_recursion_error(data, nesting):
    """json.loads raises RecursionError (not a ValueError) on deep nesting: a document of
    40,000 brackets, within the size bound, escaped every read of the file."""
    deep = {"arrays": b"[" * 40_000 + b"]" * 40_000,
            "objects": b'{"a":' * 15_000 + b"1" + b"}" * 15_000,
            "in metadata": b'{"version":1,"metadata":' + b"[" * 40_000 + b"]" * 40_000
                           + b"}"}[nesting]
    assert decode_batch_headers({HEADERS_KEY.encode(): deep}, _blocks(data)) is None
    bad = with_footer_metadata(data, {HEADERS_KEY: deep})
    f = CountingFile(bad)
    reader = _projected(f)
    opened = len(f.reads)
    assert pa.table(reader.read_all()).column(0).equals(_pyarrow_column(data))
    assert _fetched_headers(f.reads[opened:], data)
    full = _projected(CountingFile(bad), validate="full")      # nothing to compare: no copies
    assert pa.table(full.read_all()).column(0).equals(_pyarrow_column(data))


@pytest.mark.parametrize("change", [
    "not UTF-8", "metadata a list", "metadata a number", "version as text",
    "base64 with a newline", "base64 url-safe", "blocks with a 5000-digit number",
    "blocks with NaN"])
def test_more_malformed_documents_are_ignored(data, change):
    doc = json.loads(_document(data))
    text = doc["metadata"]
    blocks = doc["blocks"]
    raw = base64.b64decode(text)
    url_safe = base64.urlsafe_b64encode(raw).decode()
    value = {
        "not UTF-8": b"\xff\xfe" + _document(data),
        "metadata a list": json.dumps({**doc, "metadata": [text]}).encode(),
        "metadata a number": json.dumps({**doc, "metadata": 12}).encode(),
        "version as text": json.dumps({**doc, "version": "1"}).encode(),
        "base64 with a newline": json.dumps({**doc, "metadata": text[:40] + "\n"
                                             + text[41:]}).encode(),
        "base64 url-safe": json.dumps({**doc, "metadata": url_safe}).encode(),
        "blocks with a 5000-digit number": json.dumps(doc).encode().replace(
            str(blocks[0][0]).encode(), b"9" * 5000, 1),
        "blocks with NaN": json.dumps({**doc, "blocks": [[float("nan"), 1]] + blocks[1:]}
                                      ).encode(),
    }[change]
    if change == "base64 url-safe":
        assert url_safe != text            # the file's headers hold bytes the alphabets differ in
    assert decode_batch_headers({HEADERS_KEY.encode(): value}, _blocks(data)) is None
    f = CountingFile(with_footer_metadata(data, {HEADERS_KEY: value}))
    reader = _projected(f)
    opened = len(f.reads)
    assert pa.table(reader.read_all()).column(0).equals(_pyarrow_column(data))
    assert _fetched_headers(f.reads[opened:], data)


def test_a_document_past_the_size_bound_is_not_parsed(data):
    """The document is at most the base64 of BATCH_HEADERS_LIMIT bytes and 48 characters a
    block: the same valid document padded with spaces past that is ignored, below it used."""
    blocks = _blocks(data)
    document = _document(data)
    bound = 2 * BATCH_HEADERS_LIMIT + 48 * len(blocks)
    within = document[:-1] + b" " * (bound - len(document)) + b"}"
    past = document[:-1] + b" " * (bound + 1 - len(document)) + b"}"
    assert (len(within), len(past)) == (bound, bound + 1)
    assert decode_batch_headers({HEADERS_KEY.encode(): within}, blocks) == _headers(data)
    assert decode_batch_headers({HEADERS_KEY.encode(): past}, blocks) is None


@pytest.mark.parametrize("claim", ["metadata past the bound", "largest metadata length",
                                   "zero metadata length", "negative metadata length"])
def test_blocks_claiming_metadata_lengths_out_of_bounds_decode_nothing(data, claim):
    """The copies are split by the footer's metadata lengths: a footer that claims more than
    the bound in all (or a length no header can have) gets no copies, whatever the document
    says, and nothing is allocated for the claim."""
    blocks = _blocks(data)
    off, meta_len, body_len = blocks[1]
    claimed = {"metadata past the bound": BATCH_HEADERS_LIMIT,
               "largest metadata length": 2**31 - 1,
               "zero metadata length": 0, "negative metadata length": -meta_len}[claim]
    lying = list(blocks)
    lying[1] = (off, claimed, body_len)
    assert decode_batch_headers({HEADERS_KEY.encode(): _document(data)}, lying) is None


# -- copies bound to the blocks that are not the file's headers --------------------------------
def _copy_variants(data: bytes) -> dict[str, list[bytes]]:
    heads = _headers(data)

    def replaced(i: int, head: bytes) -> list[bytes]:
        out = list(heads)
        out[i] = head
        return out

    # the schema message reframed to fill the block's metadata (its flatbuffer, then zeros)
    schema_message = data[8:_blocks(data)[0][0]]
    assert len(schema_message) < len(heads[1])
    schema_message = (b"\xff\xff\xff\xff" + struct.pack("<i", len(heads[1]) - 8)
                      + schema_message[8:] + bytes(len(heads[1]) - len(schema_message)))
    return {
        "garbage flatbuffer": replaced(1, heads[1][:8] + b"\xab" * (len(heads[1]) - 8)),
        "1 GiB metadata claimed": replaced(1, heads[1][:4] + struct.pack("<i", 1 << 30)
                                           + heads[1][8:]),
        "end-of-stream marker": replaced(1, b"\xff\xff\xff\xff" + bytes(len(heads[1]) - 4)),
        "the schema message": replaced(1, schema_message),
        "a body longer than the block's": [heads[1], heads[0]] + heads[2:],
        "framed short of the block": replaced(1, heads[1][:4] + struct.pack(
            "<i", len(heads[1]) - 16) + heads[1][8:]),
    }


@pytest.mark.parametrize("variant", ["garbage flatbuffer", "1 GiB metadata claimed",
                                     "end-of-stream marker", "the schema message",
                                     "a body longer than the block's",
                                     "framed short of the block"])
def test_copies_that_are_not_record_batch_headers_of_their_blocks_are_ignored(data, variant):
    """A copy that does not frame as a record batch header filling its block's metadata, with
    a body within the block's, cannot be the file's header: the copies are not used and the
    file reads as pyarrow reads it (which ignores them), every path, with the headers fetched
    from the file. (It was an error blaming the file's intact header: "flatbuffer Message: table
    at byte 2880154539 ...", "message at byte 952 claims 1073741824 bytes of metadata", "truncated
    record batch message at byte 184".) validate="full" still names the copy that differs."""
    copies = _copy_variants(data)[variant]
    bad = _with_copies(data, copies)
    assert decode_batch_headers(pa_ipc.open_file(pa.py_buffer(bad)).metadata,
                                _blocks(bad)) == copies
    expected = _pyarrow_column(data)
    theirs = pa_ipc.open_file(pa.py_buffer(bad))
    for validate in ("none", "structural"):
        f = CountingFile(bad)
        reader = _projected(f, validate)
        opened = len(f.reads)
        assert pa.table(reader.read_all()).column(0).equals(expected)
        assert _fetched_headers(f.reads[opened:], data)
        assert pa.record_batch(_projected(CountingFile(bad), validate).get_batch(1)).column(0) \
            .equals(expected.chunk(1))
        assert [dict(m) for m in _projected(CountingFile(bad), validate).batch_custom_metadata()
                ] == [dict(theirs.get_batch_with_custom_metadata(i).custom_metadata)
                      for i in range(N_BATCHES)]
    first = next(i for i, (c, h) in enumerate(zip(copies, _headers(data))) if c != h)
    off = _blocks(data)[first][0]
    at = off + next(k for k, (x, y) in enumerate(zip(copies[first], _headers(data)[first]))
                    if x != y)
    with pytest.raises(ArrowInvalid, match=rf"file: record batch {first}'s header copy in the "
                                           rf"footer \({HEADERS_KEY}\) differs from its header "
                                           rf"at byte {at}$"):
        _projected(CountingFile(bad), "full")


def test_a_copy_placing_a_buffer_past_the_body_is_refused_as_the_header_would_be(data):
    """A copy that frames and fits its block is used as the header below full validation
    (documented): its buffers are checked against the block's body like a header's, so one
    past the body is the same error as the same header in the file, never a read outside."""
    crafted = Crafted(data, start=8)
    batch = crafted.batch(2)
    body = batch.body_len
    crafted.set_buffer(batch, 1, offset=body - 8, length=64)       # column a's values
    patched = crafted.bytes()
    with pytest.raises(ArrowInvalid) as in_file:
        ipc.open_file(patched).get_batch(2)
    bad = _with_copies(data, _headers(patched))
    with pytest.raises(ArrowInvalid) as from_copy:
        _projected(CountingFile(bad)).get_batch(2)
    assert str(from_copy.value) == str(in_file.value) == (
        f"file: buffer 1 of field 'a' spans bytes [{body - 8}, {body - 8}+64) but the body has "
        f"{body} bytes")
    with pytest.raises(ArrowInvalid, match="record batch 2's header copy"):
        _projected(CountingFile(bad), "full")


def test_duplicate_blocks_with_their_copies_read_as_pyarrow_reads_them(data):
    """A footer may list one batch twice: with copies bound to those blocks (the document
    edited in place, same length) every read path gives pyarrow's batches, the copies pass
    full validation, and each duplicate reads the same bytes."""
    blocks = _blocks(data)
    heads = _headers(data)
    document = _document(data)
    dup_blocks = [blocks[0], blocks[0]] + blocks[2:]
    new = encode_batch_headers([heads[0], heads[0]] + heads[2:], dup_blocks).encode()
    assert len(new) == len(document)
    out = bytearray(_with_block(data, 1, blocks[0]))
    at = out.find(document)
    out[at:at + len(document)] = new
    dup = bytes(out)
    expected = pa_ipc.open_file(pa.py_buffer(dup)).read_all()
    assert expected.column("a").chunk(1).equals(expected.column("a").chunk(0))
    for validate in ("structural", "full"):
        for source in (dup, CountingFile(dup)):
            reader = ipc.open_file(source, options=ipc.IpcReadOptions(
                included_fields=[0, 1], validate=validate))
            assert pa.table(reader.read_all()).equals(expected)
    f = CountingFile(dup)
    reader = _projected(f)
    opened = len(f.reads)
    assert pa.table(reader.read_all()).column(0).equals(expected.column("a"))
    assert not _fetched_headers(f.reads[opened:], dup)     # the copies were used


def test_blocks_out_of_file_order_with_their_copies_read_as_pyarrow_reads_them(data):
    """A footer may list its batches in any order: with copies bound to the permuted blocks,
    a projected read fetches all four batches' values in one merged range and copies each out
    to its batch (the merge sorts the ranges, the batches keep the footer's order), as
    pyarrow's batches, at structural and full validation."""
    blocks = _blocks(data)
    heads = _headers(data)
    document = _document(data)
    order = [2, 0, 3, 1]
    permuted = [blocks[k] for k in order]
    new = encode_batch_headers([heads[k] for k in order], permuted).encode()
    assert len(new) == len(document)
    out = data
    for i, block in enumerate(permuted):
        out = _with_block(out, i, block)
    at = out.find(document)
    out = out[:at] + new + out[at + len(document):]
    expected = pa_ipc.open_file(pa.py_buffer(out)).read_all()
    assert expected.column("a").chunk(0).equals(_pyarrow_column(data).chunk(2))
    for validate in ("structural", "full"):
        f = CountingFile(out)
        reader = _projected(f, validate, hole_size_limit=1 << 20)
        opened = len(f.reads)
        assert pa.table(reader.read_all()).column(0).equals(expected.column("a"))
        assert len(f.reads[opened:]) == 1 and not _fetched_headers(f.reads[opened:], out)
        reader = ipc.open_file(CountingFile(out), options=ipc.IpcReadOptions(validate=validate))
        assert pa.table(reader.read_all()).equals(expected)


# -- the footer's blocks: checked in C, the same error on every read path ----------------------
HOSTILE_BLOCKS = {
    "negative offset": lambda off, meta, body, limit: (-8, meta, body),
    "smallest offset": lambda off, meta, body, limit: (-2**63, meta, body),
    "largest offset": lambda off, meta, body, limit: (2**63 - 1, meta, body),
    "offset in the leading magic": lambda off, meta, body, limit: (4, meta, body),
    "zero metadata length": lambda off, meta, body, limit: (off, 0, body),
    "negative metadata length": lambda off, meta, body, limit: (off, -1, body),
    "largest metadata length": lambda off, meta, body, limit: (off, 2**31 - 1, body),
    "negative body length": lambda off, meta, body, limit: (off, meta, -1),
    "smallest body length": lambda off, meta, body, limit: (off, meta, -2**63),
    "metadata overlapping the footer": lambda off, meta, body, limit: (limit - 8, 16, 0),
    "body overlapping the footer by a byte": lambda off, meta, body, limit: (
        off, meta, limit - off - meta + 1),
}


@pytest.mark.parametrize("hostile", list(HOSTILE_BLOCKS))
def test_a_hostile_block_is_the_same_error_on_every_read_path(data, hostile, tmp_path):
    """Negative, overflowing or overlapping offsets and lengths in a footer block: the block
    is refused (naming it, its values and the data section) by get_batch on bytes (the one
    Cython call), on a path, through a file object, by a projected iteration of ranges, by
    batch_custom_metadata and count_rows, at every validation level; the other batches read."""
    limit = ipc.open_file(data).footer_offset
    block = HOSTILE_BLOCKS[hostile](*_blocks(data)[2], limit)
    bad = _with_block(data, 2, block)
    path = tmp_path / "bad.arrow"
    path.write_bytes(bad)
    message = (rf"^file: record batch block 2 \(offset {block[0]}, metadata {block[1]}, body "
               rf"{block[2]}\) lies outside the data section \[8, {limit}\)$")
    sources = {"bytes": lambda: bad, "path": lambda: str(path),
               "file object": lambda: CountingFile(bad)}
    for name, source in sources.items():
        for validate in ("none", "structural", "full"):
            options = ipc.IpcReadOptions(validate=validate)
            reads = {
                "get_batch": lambda: ipc.open_file(source(), options=options).get_batch(2),
                "iteration": lambda: list(ipc.open_file(source(), options=options)),
                "projected iteration": lambda: list(_projected(source(), validate)),
                "batch_custom_metadata": lambda: ipc.open_file(
                    source(), options=options).batch_custom_metadata(),
                "count_rows": lambda: ipc.open_file(source(), options=options).count_rows(),
            }
            for read_name, read in reads.items():
                with pytest.raises(ArrowInvalid, match=message):
                    read()
            reader = ipc.open_file(source(), options=options)
            assert pa.record_batch(reader.get_batch(3)).column(0).equals(
                _pyarrow_column(data).chunk(3)), (name, validate)


@pytest.mark.parametrize("count", [2**32 - 1, 2**31 - 1, N_BATCHES + 1, 2, 0])
def test_a_footer_block_count_is_checked_against_the_footer(data, count):
    """file_blocks reads as many 24-byte blocks as the footer's vector claims: a count past
    the footer is refused before any is read (pyarrow refuses it too); a count one past the
    blocks reads the next bytes of the footer as a block, refused by its check; fewer blocks
    read as pyarrow reads them (the copies, bound to the four blocks, are not used)."""
    pos = file_blocks(data, FOOTER_RECORD_BATCHES)[0][0]
    bad = bytearray(data)
    struct.pack_into("<I", bad, pos - 4, count)
    bad = bytes(bad)
    for source in (lambda: bad, lambda: CountingFile(bad)):
        if count > N_BATCHES + 1:
            with pytest.raises(ArrowInvalid, match=rf"^flatbuffer Footer: vector in field 3 "
                                                   rf"claims {count} elements of 24 bytes at "
                                                   rf"byte \d+, past the end of the \d+-byte "
                                                   rf"metadata$"):
                _projected(source())
            with pytest.raises(OSError):
                pa_ipc.open_file(pa.py_buffer(bad))
        elif count == N_BATCHES + 1:
            reader = _projected(source())
            with pytest.raises(ArrowInvalid, match=rf"^file: record batch block {N_BATCHES} "
                                                   r"\(offset -?\d+, metadata -?\d+, body "
                                                   r"-?\d+\) lies outside the data section"):
                reader.read_all()
        else:
            reader = _projected(source())
            expected = pa_ipc.open_file(pa.py_buffer(bad)).read_all().column("a")
            assert reader.num_record_batches == count
            assert pa.table(reader.read_all()).column(0).equals(expected)


@pytest.mark.parametrize("write_options", [{}, {"use_legacy_format": True},
                                           {"metadata_version": "V4"}, {"compression": "zstd"}])
def test_copies_our_writer_makes_are_used_in_every_framing(write_options):
    """The framing check of the copies (a record batch header filling its block's metadata)
    holds for every file our writer makes: legacy 4-byte prefixes, V4, compressed bodies. A
    projected read through a file object fetches no header, and reads the values written
    (pyarrow 26 cannot read V4 batches with custom metadata, its own included)."""
    options = dict(write_options)
    if "metadata_version" in options:
        options["metadata_version"] = getattr(ipc.MetadataVersion, options["metadata_version"])
    sink = pa.BufferOutputStream()
    table = _table()
    with ipc.new_file(sink, arrowipc.table(table).schema, statistics=True,
                      options=ipc.IpcWriteOptions(**options)) as writer:
        for batch in table.to_batches(max_chunksize=25):
            writer.write_batch(arrowipc.record_batch(batch))
    written = sink.getvalue().to_pybytes()
    f = CountingFile(written)
    reader = _projected(f)
    opened = len(f.reads)
    assert pa.table(reader.read_all()).column(0).to_pylist() == list(range(100))
    assert not _fetched_headers(f.reads[opened:], written)


# -- remote reads: the coalesced fetch and a scan's window of batches --------------------------
def _large_statistics_file() -> bytes:
    """Over REMOTE_TAIL_READ_SIZE, so batches are fetched by requests after the opening read."""
    return _statistics_file(rows=40_000)


def _merged_range(data: bytes) -> tuple[int, int]:
    """The one range a projected read of column a fetches for all batches (their values are
    a hole apart, merged): (offset, length), from a counting read."""
    f = CountingFile(data)
    reader = _projected(f, hole_size_limit=1 << 20)
    opened = len(f.reads)
    assert pa.table(reader.read_all()).column(0).equals(_pyarrow_column(data))
    reads = f.reads[opened:]
    assert len(reads) == 1 and reads[0][1] > sum(body for _, _, body in _blocks(data)[:2])
    return reads[0]


def test_an_object_that_shrinks_after_open_fails_the_coalesced_fetch(data):
    """A file object that ends early when several batches' ranges are fetched as one: the
    reader names the merged range and what came, and nothing is read past it."""
    at, length = _merged_range(data)
    f = CountingFile(data)
    reader = _projected(f, hole_size_limit=1 << 20)
    f._b.truncate(at + length // 2)
    with pytest.raises(ArrowInvalid, match=rf"^file-like object: expected {length} bytes at "
                                           rf"offset {at}, got {length // 2} \(file "
                                           rf"truncated\)$"):
        list(reader)


@pytest.mark.parametrize("change", ["grew", "shrank"])
def test_http_object_of_another_size_at_the_coalesced_fetch_is_refused(change):
    """No ETag, no Last-Modified: the coalesced range's Content-Range tells the object is not
    the size it was opened with, and the read is refused naming the URL, both sizes and the
    range, rather than taking bytes of another object."""
    pytest.importorskip("aiohttp")
    from remote_servers import http_server
    data = _large_statistics_file()
    at, length = _merged_range(data)
    files = {"/big.arrow": data}
    with http_server(files) as (base, requests):
        url = f"{base}/big.arrow"
        reader = _projected(url, hole_size_limit=1 << 20)
        other = data + bytes(64) if change == "grew" else data[:-64]
        files["/big.arrow"] = other
        result, error = in_thread(lambda: list(reader))
    assert result is None and isinstance(error, ArrowIOError) and isinstance(error, OSError)
    assert str(error).startswith(f"{url}: the answer to bytes {at}-{at + length - 1} is part of "
                                 f"an object of {len(other)} bytes")
    assert f"the object was opened with {len(data)}" in str(error)


def test_http_body_cut_in_a_coalesced_range_is_an_oserror_naming_the_url():
    """The server answers the opening read, then cuts the body of the range that merges every
    batch's values: an OSError naming the URL, not a short buffer decoded."""
    pytest.importorskip("aiohttp")
    from remote_servers import Misbehaviour, http_server
    data = _large_statistics_file()
    at, length = _merged_range(data)
    bad = Misbehaviour()
    with http_server({"/big.arrow": data}, etags=True, misbehaviour=bad) as (base, requests):
        url = f"{base}/big.arrow"
        reader = _projected(url, hole_size_limit=1 << 20)
        requests.clear()
        bad.cut_body = 100
        result, error = in_thread(lambda: list(reader))
        # the server logs a request once answered: the opening read's may come after clear()
        tail = f"bytes={len(data) - (4 << 10)}-{len(data) - 1}"
        asked = [r for _, _, r, _ in requests.gets("/big.arrow") if r != tail]
    assert asked and all(r == f"bytes={at}-{at + length - 1}" for r in asked)
    assert result is None and isinstance(error, OSError)
    assert str(error).startswith(f"{url}: ")


def _memory_dataset(fs, name: str, data: bytes):
    import arrowipc.dataset as ads
    fs.pipe(f"/{name}/part-0.arrow", data)
    return ads.dataset(f"memory://{name}", format="ipc")


def test_a_scan_window_with_a_hostile_block_names_the_file_and_block(monkeypatch):
    """A remote scan fetches adjacent surviving batches together (FragmentPlan._from_window):
    when a block in the run is hostile the window's fetch fails, each batch is read alone and
    the bad one raises its own error naming the file and the block; the tasks waiting on the
    window are released (no hang)."""
    fsspec = pytest.importorskip("fsspec")
    from arrowipc.ipc.reader import RecordBatchFileReader
    data = _statistics_file(rows=400, n_batches=8)
    off, meta, _ = _blocks(data)[3]
    fs = fsspec.filesystem("memory")
    windows = []
    original = RecordBatchFileReader.iter_batch_range
    monkeypatch.setattr(RecordBatchFileReader, "iter_batch_range",
                        lambda self, first, last: windows.append((first, last))
                        or original(self, first, last))
    good = _memory_dataset(fs, "hostile-window-good", data)
    assert sorted(pa.table(good.to_table()).column("a").to_pylist()) == list(range(400))
    assert windows                                  # the scan fetched windows of batches
    bad = _memory_dataset(fs, "hostile-window", _with_block(data, 3, (off, meta, -2**62)))
    for read in (lambda: bad.to_table(), lambda: bad.to_table(columns=["a"])):
        result, error = in_thread(read)
        assert result is None and isinstance(error, ArrowInvalid)
        assert str(error) == (f"/hostile-window/part-0.arrow: file: record batch block 3 "
                              f"(offset {off}, metadata {meta}, body {-2**62}) lies outside the "
                              f"data section [8, {ipc.open_file(data).footer_offset})")


def test_a_scan_of_a_file_with_copies_that_are_not_its_headers_reads_as_pyarrow():
    """A remote dataset scan uses the footer's copies for its statistics pass and its windows:
    copies that are not record batch headers of their blocks are not used."""
    fsspec = pytest.importorskip("fsspec")
    import arrowipc.dataset as ads
    data = _statistics_file(rows=400, n_batches=8)
    copies = _headers(data)
    copies[5] = copies[5][:8] + b"\xab" * (len(copies[5]) - 8)
    bad = _with_copies(data, copies)
    dataset = _memory_dataset(fsspec.filesystem("memory"), "hostile-copies", bad)
    expected = pa_ipc.open_file(pa.py_buffer(data)).read_all()
    assert pa.table(dataset.to_table()).sort_by("a").equals(expected)
    assert dataset.count_rows(filter=ads.field("a") >= 200) == 200


# -- the statistics next to the copies: the same JSON, the same hostility ----------------------
def test_deeply_nested_statistics_are_ignored_not_a_recursion_error(data):
    """The footer's statistics summary and each batch's statistics are JSON too: nested past
    the parser's recursion limit they are ignored like any malformed statistics (the batches
    they would rule out are read), not a RecursionError out of filter_batches and scans."""
    fsspec = pytest.importorskip("fsspec")
    import arrowipc.dataset as ads
    from arrowipc.ipc.statistics import FILE_KEY, KEY
    deep = b"[" * 40_000 + b"]" * 40_000
    in_footer = with_footer_metadata(data, {FILE_KEY: deep})
    assert list(ipc.open_file(in_footer).filter_batches([("a", ">", 1000)])) == []
    theirs = pa_ipc.open_file(pa.py_buffer(data))
    sink = pa.BufferOutputStream()
    with pa_ipc.new_file(sink, theirs.schema) as writer:
        for i in range(theirs.num_record_batches):
            writer.write_batch(theirs.get_batch(i), custom_metadata={KEY: deep})
    in_batches = sink.getvalue().to_pybytes()
    assert len(list(ipc.open_file(in_batches).filter_batches([("a", ">", 1000)]))) == N_BATCHES
    dataset = _memory_dataset(fsspec.filesystem("memory"), "nested-statistics", in_batches)
    assert dataset.count_rows(filter=ads.field("a") >= 60) == 40


# -- a filesystem whose multi-range answers break their contract -------------------------------
def _misanswering_filesystem(ranges_answer=None, file_answer=None):
    """An fsspec memory filesystem whose cat_ranges (the reader's coalesced, concurrent fetch)
    and cat_file (a single range) hand their correct answers (a list of parts, a part) to
    `ranges_answer` and `file_answer` once `wrong` is set, which return what the filesystem
    gives back."""
    pytest.importorskip("fsspec")
    from fsspec.implementations.memory import MemoryFileSystem

    class Misanswering(MemoryFileSystem):
        wrong = False

        def cat_ranges(self, paths, starts, ends, max_gap=None, on_error="return", **kwargs):
            parts = super().cat_ranges(paths, starts, ends, max_gap=max_gap, on_error=on_error,
                                       **kwargs)
            return ranges_answer(parts) if self.wrong and ranges_answer else parts

        def cat_file(self, path, start=None, end=None, **kwargs):
            part = super().cat_file(path, start, end, **kwargs)
            return file_answer(part) if self.wrong and file_answer else part
    return Misanswering(skip_instance_cache=True)


@pytest.mark.parametrize("answer", ["one answer missing", "None for a range", "text for a range",
                                    "a range with extra bytes"])
@pytest.mark.parametrize("opened", ["through the filesystem", "as its file object"])
def test_a_filesystem_answering_ranges_wrongly_is_an_oserror_not_garbage(answer, opened):
    """A projected read fetches several batches' ranges in one cat_ranges call and copies each
    answer into a buffer allocated uninitialised: an answer missing left a buffer unfilled, and
    the batch was decoded from whatever memory held (values unlike pyarrow's, silently); None or
    text for a range was a TypeError; extra bytes were reported as a truncated file. Each is an
    ArrowIOError (an OSError) naming the file and what the filesystem did."""
    data = _large_statistics_file()
    change, message = {
        "one answer missing": (lambda parts: parts[:-1],
                               r"4 ranges asked for in one request, 3 answers came back"),
        "None for a range": (lambda parts: [None] + parts[1:],
                             r"the answer to bytes \d+-\d+ is a NoneType, expected bytes"),
        "text for a range": (lambda parts: ["x" * len(parts[0])] + parts[1:],
                             r"the answer to bytes \d+-\d+ is a str, expected bytes"),
        "a range with extra bytes": (lambda parts: [parts[0] + b"extra"] + parts[1:],
                                     r"the answer to bytes (\d+)-\d+ holds \d+ bytes, more than "
                                     r"the \d+ asked"),
    }[answer]
    fs = _misanswering_filesystem(ranges_answer=change)
    path = f"/misanswering-{answer.replace(' ', '-')}/f.arrow"
    fs.pipe(path, data)
    source = path if opened == "through the filesystem" else fs.open(path)
    reader = ipc.open_file(source, filesystem=fs if opened == "through the filesystem" else None,
                           options=ipc.IpcReadOptions(included_fields=[0]))
    fs.wrong = True
    with pytest.raises(ArrowIOError, match=message) as error:
        reader.read_all()
    named = path if opened == "through the filesystem" else "file-like object"
    assert isinstance(error.value, OSError) and str(error.value).startswith(f"{named}: ")
    fs.wrong = False
    reader = ipc.open_file(source, filesystem=fs if opened == "through the filesystem" else None,
                           options=ipc.IpcReadOptions(included_fields=[0]))
    assert pa.table(reader.read_all()).column(0).equals(_pyarrow_column(data))


@pytest.mark.parametrize("answer", ["None", "text", "extra bytes"])
def test_a_filesystem_answering_one_range_wrongly_is_an_oserror(answer):
    """A single range (one batch's column, read by get_batch) comes from the filesystem's
    cat_file: None or text was a TypeError, extra bytes a truncated file."""
    data = _large_statistics_file()
    change, message = {
        "None": (lambda part: None, r"is a NoneType, expected bytes"),
        "text": (lambda part: "x" * len(part), r"is a str, expected bytes"),
        "extra bytes": (lambda part: part + b"extra", r"holds \d+ bytes, more than the \d+ "
                                                       r"asked"),
    }[answer]
    fs = _misanswering_filesystem(file_answer=change)
    path = f"/misanswering-one-{answer.replace(' ', '-')}/f.arrow"
    fs.pipe(path, data)
    reader = ipc.open_file(path, filesystem=fs, options=ipc.IpcReadOptions(included_fields=[0]))
    fs.wrong = True
    with pytest.raises(ArrowIOError, match=rf"^{path}: the answer to bytes \d+-\d+ {message}$"):
        reader.get_batch(1)
    fs.wrong = False
    assert pa.record_batch(reader.get_batch(1)).column(0).equals(_pyarrow_column(data).chunk(1))
