"""Read planning for files behind a slow link: which byte ranges a read needs, coalesced.

The file format's footer says where every block is; a record batch's header says where each of
its buffers lies in the body. From the two the planner works out the ranges a read of some batches
and some columns needs, and merges neighbours whose gap is small, so a remote object is asked for
few, large ranges instead of one per buffer. Nothing here does I/O: the reader hands the plan to
its source (sources.FileSource, filesystems.RangeSource), which fetches the ranges, concurrently
where it can.

Two knobs, named like pyarrow's CacheOptions and set on IpcReadOptions:

* ``hole_size_limit``: two ranges at most this many bytes apart are read as one (reading the gap
  costs less than another request);
* ``range_size_limit``: ranges are not merged past this size (a merged range is one request, and
  huge ones stall concurrency).

A record batch's buffers can be located only from its header, and a header costs a request of its
own: a read of one column of a file behind a link would take three round trips one after another
(the footer, the headers, the buffers) and twice the requests it needs. A file written with
statistics therefore carries a copy of every record batch's message metadata in its footer's custom
metadata, when the copies are small enough (BATCH_HEADERS_LIMIT), under HEADERS_KEY:

    "arrowipc:batch_headers" -> {"version": 1, "blocks": [[<offset>, <body length>], ...],
                                 "metadata": "<base64>"}

"metadata" is the base64 of the record batches' message metadata (prefix, flatbuffer, padding:
the `metadata length` bytes of each footer block) concatenated in footer order; "blocks" are the
footer's record batch blocks they were copied from, so copies carried into another file (footer
metadata kept by a tool that rewrites a file) do not match its blocks and are not used. The
file writer never carries the key over from the metadata it is given. The read that
opens the object brings the footer and with it every header, so a projected read fetches only
its buffers: one request per range, all planned from the tail. Other readers ignore the key (it
is ordinary metadata). The copies are untrusted like any header: used only when their blocks and
lengths match the footer's exactly and each frames as a record batch header filling its block's
metadata with a body within the block's (the reader's check), then decoded like the real ones
(the decoder checks every buffer against the block's body); validate="full" compares them with
the real headers when the file is opened.
"""
from __future__ import annotations

import base64
import binascii
import json

TYPE_CHECKING = False               # typing itself is not imported at run time
if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping, Sequence
    from typing import Any

__all__ = ["BATCH_HEADERS_LIMIT", "CONNECT_TIMEOUT", "HEADERS_KEY", "HOLE_SIZE_LIMIT",
           "RANGE_SIZE_LIMIT", "READ_TIMEOUT", "REMOTE_TAIL_READ_SIZE", "TAIL_READ_SIZE",
           "body_ranges", "coalesce", "decode_batch_headers", "dictionary_ids_needed",
           "encode_batch_headers"]

# pyarrow's CacheOptions defaults: 8 KiB costs less than a request on any network
HOLE_SIZE_LIMIT = 8 << 10
RANGE_SIZE_LIMIT = 32 << 20
# IpcReadOptions' network timeouts, in seconds (object_reads.py applies them): opening a
# connection; waiting for a response's headers and for each MiB of its body.
CONNECT_TIMEOUT = 10.0
READ_TIMEOUT = 60.0
# The file reader's first read at the end of a file: trailer and, usually, the whole footer (a
# footer of 24 bytes per block plus the schema) in one request.
TAIL_READ_SIZE = 4 << 10
# An object store's object is opened by a read of its end this large (one request tells its size
# and version and brings the footer, or the whole of a small file): 64 KiB costs no more time
# than 4 on any network, and a footer with statistics for many batches fits.
REMOTE_TAIL_READ_SIZE = 64 << 10
# The footer key of the record batch header copies, and the most bytes of headers copied: 48 KiB
# (64 KiB in base64) keeps a footer with them within one REMOTE_TAIL_READ_SIZE read for files of
# up to a few dozen batches; a file with more batches gets no copies and is read as without.
HEADERS_KEY = "arrowipc:batch_headers"
BATCH_HEADERS_LIMIT = 48 << 10


def coalesce(ranges: Iterable[tuple[int, int]], hole_size_limit: int = HOLE_SIZE_LIMIT,
             range_size_limit: int = RANGE_SIZE_LIMIT) -> list[tuple[int, int]]:
    """(offset, length) ranges sorted, empty ones dropped, overlapping ones merged, and those at
    most `hole_size_limit` bytes apart merged as long as the result stays within
    `range_size_limit` bytes (a single range larger than that is kept whole)."""
    spans = sorted((o, o + n) for o, n in ranges if n > 0)
    out: list[tuple[int, int]] = []
    for start, end in spans:
        if out:
            cur_start, cur_end = out[-1]
            if start < cur_end or (start - cur_end <= hole_size_limit
                                   and max(end, cur_end) - cur_start <= range_size_limit):
                out[-1] = (cur_start, max(end, cur_end))
                continue
        out.append((start, end))
    return [(s, e - s) for s, e in out]


def encode_batch_headers(metadata: Sequence[bytes], blocks: Sequence[tuple[int, int, int]]
                         ) -> str | None:
    """The HEADERS_KEY value for the record batches' message metadata and footer blocks
    (offset, metadata length, body length), in footer order (None when the metadata exceed
    BATCH_HEADERS_LIMIT in all)."""
    if sum(len(m) for m in metadata) > BATCH_HEADERS_LIMIT:
        return None
    return json.dumps({"version": 1, "blocks": [[off, body_len] for off, _, body_len in blocks],
                       "metadata": base64.b64encode(b"".join(metadata)).decode("ascii")},
                      separators=(",", ":"))


def decode_batch_headers(footer_metadata: Mapping[bytes, bytes] | None,
                         blocks: Sequence[tuple[int, int, int]]) -> list[bytes] | None:
    """Each record batch's message metadata as copied in the footer (HEADERS_KEY), split by
    the footer blocks' (offset, metadata length, body length); None when the key is absent, of
    another version or does not match the blocks (copied from another file): the headers are
    read from the file then. Nothing is allocated beyond the value's own size."""
    raw = (footer_metadata or {}).get(HEADERS_KEY.encode())
    meta_lengths = [meta_len for _, meta_len, _ in blocks]
    total = sum(meta_lengths)
    # the text: base64 of at most the limit, and under 48 characters a block
    if raw is None or any(n <= 0 for n in meta_lengths) or total > BATCH_HEADERS_LIMIT \
            or len(raw) > 2 * BATCH_HEADERS_LIMIT + 48 * len(blocks):
        return None
    try:
        doc = json.loads(raw)
        if not isinstance(doc, dict) or doc.get("version") != 1 or doc.get("blocks") != [
                [off, body_len] for off, _, body_len in blocks]:
            return None
        text = doc.get("metadata")
        if not isinstance(text, str) or len(text) != 4 * ((total + 2) // 3):
            return None
        data = base64.b64decode(text, validate=True)
    except (ValueError, TypeError, KeyError, binascii.Error, RecursionError):
        return None                     # RecursionError: json.loads of deeply nested input
    if len(data) != total:
        return None
    out, at = [], 0
    for n in meta_lengths:
        out.append(data[at:at + n])
        at += n
    return out


def body_ranges(buffers: Iterable[tuple[int, int]], needed: Iterable[Any], body_start: int,
                body_length: int) -> list[tuple[int, int]]:
    """File ranges (offset, length) of the needed buffers of one record batch.

    `buffers` are the header's (offset, length) pairs relative to the body, `needed` the mask of
    the buffers the selected columns use. Each range is clipped to the body: a buffer the header
    places outside it is left for the decoder to report, with its field and index, exactly as
    for in-memory input.
    """
    out = []
    for (off, length), want in zip(buffers, needed):
        if not want or length <= 0 or off < 0 or off >= body_length:
            continue
        length = min(length, body_length - off)
        out.append((body_start + off, length))
    return out


def dictionary_ids_needed(info: Any, included: Sequence[Any] | None) -> set[int] | None:
    """The dictionary ids the selected top-level fields use (None: every id, no projection)."""
    if included is None:
        return None
    return {dict_id for dict_id, entry in info.dictionaries.items()
            if any(included[path[0]] for path in (entry.paths or [entry.path]) if path)}
