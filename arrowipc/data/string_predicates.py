"""starts_with, ends_with and match_substring over string and binary ArrayData, and the unary
arithmetic abs and negate (and their _checked variants), with pyarrow.compute's results.

The string predicates work on the offsets and data buffers with numpy: no Python object per
value, except for ignore_case on text that is not all ASCII, where each value is decoded and
matched with Python's re (Unicode simple case folding, as RE2 does in pyarrow; the two differ
only on U+0130 and U+0131, which are kept apart from i and I here as RE2 keeps them).
Binary data folds ASCII letters only, as pyarrow does.
"""
from __future__ import annotations

import re

import numpy as np

from .._core.arraydata import ArrayData
from .._core.buffer import py_buffer
from ..errors import ArrowInvalid, ArrowNotImplementedError
from .compute import (_bool_data, _data, _decoded, _fixed_values, _no_kernel, _result, _rows,
                      _validity, family)

TYPE_CHECKING = False               # typing itself is not imported at run time
if TYPE_CHECKING:
    from typing import Any

    from .compute import Datum

__all__ = ["STRING_PREDICATES", "UNARY_ARITHMETIC", "string_predicate", "unary_arithmetic"]

STRING_PREDICATES = ("starts_with", "ends_with", "match_substring")
UNARY_ARITHMETIC = ("abs", "abs_checked", "negate", "negate_checked")

_OFFSETS = {"string": np.int32, "binary": np.int32, "large_string": np.int64,
            "large_binary": np.int64}
# candidate positions examined at once by match_substring (bounds its temporary arrays)
_CHUNK = 1 << 20
# ASCII upper case to lower case, every other byte to itself
_ASCII_LOWER = np.arange(256, dtype=np.uint8)
_ASCII_LOWER[ord("A"):ord("Z") + 1] += 32
# RE2 (pyarrow) gives U+0130 and U+0131 no case fold, Python's re folds them with i and I:
# both sides swap them for code points of a private use plane that fold to nothing
_NO_FOLD = str.maketrans({"\u0130": "\U000f0130", "\u0131": "\U000f0131"})


def string_predicate(function: str, d: Datum, pattern: str | bytes, ignore_case: bool) -> Datum:
    """`function` (one of STRING_PREDICATES) of each value with MatchSubstringOptions(pattern,
    ignore_case): a bool datum, null where the value is null."""
    d = _decoded(d)
    rows, data = _rows(d), _data(d)
    name = data.type.name
    if name not in _OFFSETS:
        raise _no_kernel(function, data.type)
    pat = pattern.encode() if isinstance(pattern, str) else bytes(pattern)
    n = data.length
    offsets, values = _offsets_and_values(data)
    validity, nulls = _validity(data, None, n)
    text = name in ("string", "large_string")
    lo, hi = int(offsets[0]), int(offsets[-1])
    if ignore_case and text and not (pat.isascii() and _is_ascii(values[lo:hi])):
        hit = _unicode_ignore_case(function, offsets, values, pat.decode(), validity, n)
    else:
        if ignore_case:
            pat = pat.lower()
            values = _ASCII_LOWER[values[lo:hi]]
            offsets = offsets - lo
        hit = _search(function, offsets, values, pat, n)
    bits = np.packbits(hit, bitorder="little")
    return _result(_bool_data(py_buffer(bits), validity, nulls, n), rows)


def _offsets_and_values(data: ArrayData) -> tuple[Any, Any]:
    """(the n + 1 offsets of the rows as int64, the whole data buffer as uint8)."""
    dtype = _OFFSETS[data.type.name]
    n, off = data.length, data.offset
    width = np.dtype(dtype).itemsize
    ob, vb = data.buffers[1], data.buffers[2]
    if ob is None or ob.size < (off + n + 1) * width:
        if n == 0:
            return np.zeros(1, dtype=np.int64), np.zeros(0, dtype=np.uint8)
        raise ArrowInvalid(f"{data.type} offsets: rows [{off}, {off}+{n}) need "
                           f"{(off + n + 1) * width} bytes, the buffer has "
                           f"{0 if ob is None else ob.size}")
    offsets = np.frombuffer(ob, dtype=dtype,  # type: ignore[call-overload]
                            count=off + n + 1)[off:].astype(np.int64)
    values = np.zeros(0, dtype=np.uint8) if vb is None or vb.size == 0 else \
        np.frombuffer(vb, dtype=np.uint8)  # type: ignore[call-overload]
    if offsets[0] < 0 or offsets[-1] > values.size or bool(np.any(offsets[1:] < offsets[:-1])):
        raise ArrowInvalid(f"{data.type} offsets: not ascending within the {values.size} "
                           f"bytes of the data buffer")
    return offsets, values


def _is_ascii(values: Any) -> bool:
    return values.size == 0 or int(values.max()) < 0x80


def _search(function: str, offsets: Any, values: Any, pat: bytes, n: int) -> Any:
    """Whether each row's bytes start with, end with or contain `pat` (numpy bools)."""
    m = len(pat)
    starts, ends = offsets[:-1], offsets[1:]
    if m == 0:
        return np.ones(n, dtype=bool)
    p = np.frombuffer(pat, dtype=np.uint8)
    if function != "match_substring":
        cand = np.flatnonzero(ends - starts >= m)
        first = starts[cand] if function == "starts_with" else ends[cand] - m
        for j in range(m):      # each byte of the pattern narrows the candidate rows
            keep = values[first + j] == p[j]
            cand, first = cand[keep], first[keep]
        hit = np.zeros(n, dtype=bool)
        hit[cand] = True
        return hit
    # every position of the pattern in the rows' bytes, chunk by chunk, then each occurrence
    # to its row: overlapping occurrences and ones across a row end are found and weighed
    lo, hi = int(offsets[0]), int(offsets[-1])
    hit = np.zeros(n, dtype=bool)
    for start in range(lo, hi - m + 1, _CHUNK):
        stop = min(start + _CHUNK, hi - m + 1)
        pos = np.flatnonzero(values[start:stop] == p[0]) + start
        for j in range(1, m):
            pos = pos[values[pos + j] == p[j]]
        if pos.size:
            row = np.searchsorted(offsets, pos, side="right") - 1
            hit[row[pos + m <= ends[row]]] = True
    return hit


def _unicode_ignore_case(function: str, offsets: Any, values: Any, pattern: str, validity: Any,
                         n: int) -> Any:
    """The predicate with Unicode case folding, one valid value at a time."""
    escaped = re.escape(pattern.translate(_NO_FOLD))
    if function == "starts_with":
        find = re.compile(escaped, re.IGNORECASE).match
    elif function == "ends_with":
        find = re.compile(f"(?:{escaped})\\Z", re.IGNORECASE).search
    else:
        find = re.compile(escaped, re.IGNORECASE).search
    valid = np.ones(n, dtype=bool) if validity is None else \
        np.unpackbits(np.frombuffer(validity, dtype=np.uint8),
                      count=n, bitorder="little").astype(bool)
    raw = values.tobytes()
    bounds = offsets.tolist()
    hit = np.zeros(n, dtype=bool)
    for i in np.flatnonzero(valid).tolist():
        s = raw[bounds[i]:bounds[i + 1]].decode("utf-8", "surrogateescape")
        hit[i] = find(s.translate(_NO_FOLD)) is not None
    return hit


def unary_arithmetic(function: str, d: Datum) -> Datum:
    """abs or negate of integers, floats and durations: integers wrap (INT_MIN stays INT_MIN)
    unless _checked, where a valid INT_MIN raises ArrowInvalid("overflow")."""
    d = _decoded(d)
    rows, data = _rows(d), _data(d)
    t = data.type
    fam = family(t)
    base = function.removesuffix("_checked")
    checked = function != base
    if fam == "null":
        return _result(data, rows)
    if fam in ("decimal",) or t.name == "halffloat":
        raise ArrowNotImplementedError(f"arrowipc cannot evaluate the function '{function}' "
                                       f"on {t}")
    if fam not in ("int", "float", "duration"):
        raise _no_kernel(function, t)
    signed = fam != "int" or t.is_signed
    if not signed and function == "negate_checked":
        raise _no_kernel(function, t)
    n = data.length
    validity, nulls = _validity(data, None, n)
    values = _fixed_values(data)
    if checked and fam != "float" and signed and n > nulls:
        at_min = values == np.iinfo(values.dtype).min
        if validity is not None:
            at_min &= np.unpackbits(np.frombuffer(validity, dtype=np.uint8),
                                    count=n, bitorder="little").astype(bool)
        if bool(at_min.any()):
            raise ArrowInvalid("overflow")
    if base == "abs":
        out = values.copy() if not signed else np.abs(values)
    else:
        out = np.negative(values)
    # numpy wraps INT_MIN (and negated unsigned values) as Arrow's unchecked kernels do
    result = ArrayData(t, n, 0, nulls, [validity if nulls else None, py_buffer(out)])
    return _result(result, rows)
