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
"""
from __future__ import annotations

TYPE_CHECKING = False               # typing itself is not imported at run time
if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence
    from typing import Any

__all__ = ["CONNECT_TIMEOUT", "HOLE_SIZE_LIMIT", "RANGE_SIZE_LIMIT", "READ_TIMEOUT",
           "REMOTE_TAIL_READ_SIZE", "TAIL_READ_SIZE", "body_ranges", "coalesce", "dictionary_ids_needed"]

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
