"""Row selection kernels: take, filter, combine_chunks, unify_dictionaries, and the small vector
functions ETL code calls on columns (fill_null, drop_null), ArrayData in, ArrayData out.

The work is done by the kernels of arrowipc/_core/select_kernels.pyx; this module builds what they
take (a Selection of rows) and the ArrayData they give back. The Array and Table methods turn
pyarrow's arguments (lists, numpy arrays, Arrays, ChunkedArrays) into ArrayData first. Sorting
is in sorting.py, grouping in grouping.py, joins in joining.py, and unique, value_counts and
dictionary_encode in hashing.py.
"""
from __future__ import annotations

from .._core.arraydata import ArrayData
from .._core import select_kernels as _k
from ..errors import ArrowInvalid, ArrowNotImplementedError
from ..types import DictionaryType, Kind, bool_, int64

TYPE_CHECKING = False               # typing itself is not imported at run time
if TYPE_CHECKING:
    from concurrent.futures import ThreadPoolExecutor
    from typing import Any, Callable, TypeVar

    from .._core.buffer import Buffer
    from ..types import DataType

    _In = TypeVar("_In")
    _Out = TypeVar("_Out")

__all__ = ["apply", "check_null_selection_behavior", "combined_data", "drop_null", "fill_null",
           "hash_key", "parallel_map", "PARALLEL_MIN_ROWS", "Selection", "struct_field", "take",
           "unify_chunks", "valid_rows"]

_NULL_SELECTION = ("drop", "emit_null")


# -- arguments ----------------------------------------------------------------------------------

def check_null_selection_behavior(null_selection_behavior: str) -> None:
    """ArrowInvalid unless `null_selection_behavior` is one a filter takes."""
    if null_selection_behavior not in _NULL_SELECTION:
        raise ArrowInvalid(f"null_selection_behavior must be 'drop' or 'emit_null', got "
                           f"{null_selection_behavior!r}")


def _mask_data(m: ArrayData, length: int) -> ArrayData:
    """`m`, checked to be a boolean filter mask of `length` values."""
    if m.type.kind != Kind.BOOL:
        raise ArrowNotImplementedError(f"Function 'array_filter' has no kernel matching input "
                                       f"types (array[{m.type}]): the mask must be boolean")
    if m.length != length:
        raise ArrowInvalid(f"Filter inputs must all be the same length: the mask has {m.length} "
                           f"values, the data has {length} rows")
    return m


class Selection:
    """The rows a take or filter keeps, built once and applied to every column."""
    __slots__ = ("sel", "count", "has_nulls", "mask", "length")

    def __init__(self, sel: Buffer | None, count: int, has_nulls: bool, mask: Buffer | None = None,
                 length: int = 0) -> None:
        self.sel = sel            # int64 row numbers (-1: a null row), or None while only a mask
        self.count = count        # rows selected
        self.has_nulls = has_nulls
        self.mask = mask          # bitmap at bit 0 of the kept rows (filters without null rows)
        self.length = length      # rows the mask covers

    @classmethod
    def from_indices(cls, indices: ArrayData, length: int) -> "Selection":
        """The rows at `indices` (integers; a null index selects a null row)."""
        idx = indices
        if idx.type.kind == Kind.NULL:
            from .from_python import array_data_from_python
            idx = array_data_from_python([None] * idx.length, int64())
        if not getattr(idx.type, "is_integer", False):
            raise ArrowNotImplementedError(
                f"Function 'array_take' has no kernel matching input types: indices must be "
                f"integers, got {idx.type}")
        sel, nulls = _k.selection_from_indices(idx, length)
        return cls(sel, idx.length, nulls)

    @classmethod
    def from_mask(cls, mask: ArrayData, length: int, null_selection_behavior: str = "drop"
                  ) -> "Selection":
        """The rows where the boolean `mask` is true (null slots dropped, or emitted as nulls)."""
        check_null_selection_behavior(null_selection_behavior)
        m = _mask_data(mask, length)
        if null_selection_behavior == "emit_null":
            from ..validate import null_count_of
            if null_count_of(m):
                sel, nulls = _k.selection_from_mask(m, True)
                return cls(sel, len(sel) // 8, nulls)
        bits, kept = _k.effective_mask(m)
        return cls(None, kept, False, bits, length)

    def slice(self, start: int, stop: int) -> "Selection":
        """The part of a mask selection that applies to rows [start, stop) (a table's batch)."""
        from .._core.bitmap import bitmap_view, count_set_bits
        assert self.mask is not None, "only a filter's selection is sliced"
        bits = bitmap_view(self.mask, start, stop - start)
        kept = count_set_bits(bits, 0, stop - start)
        return Selection(None, kept, False, bits, stop - start)

    def indices(self) -> Buffer:
        """The selection as int64 row numbers (built from the mask on first use)."""
        if self.sel is None:
            m = ArrayData(bool_(), self.length, 0, 0, [None, self.mask])
            self.sel = _k.selection_from_mask(m, False)[0]
        return self.sel


def apply(data: ArrayData, selection: Selection) -> ArrayData:
    """The rows of `data` a Selection keeps."""
    if selection.mask is not None and selection.sel is None:
        if selection.count == data.length:
            return data                         # every row kept: zero-copy
        kind = data.type.storage_type.kind
        if kind in (Kind.BINARY, Kind.LARGE_BINARY):
            return _k.filter_binary(data, selection.mask, selection.count)
        out = _k.filter_fixed(data, selection.mask, selection.count)
        if out is not None:
            return out
    try:
        return _k.take(data, selection.indices(), selection.count, selection.has_nulls)
    except ArrowNotImplementedError:
        # run-end encoded data, and unions asked for null rows: through Python values
        from .from_python import array_data_from_python
        from .to_python import to_pylist
        values = to_pylist(data)
        picked = [None if i < 0 else values[i]
                  for i in memoryview(selection.indices()).cast("q")[:selection.count]]
        return array_data_from_python(picked, data.type)


def take(data: ArrayData, indices: ArrayData) -> ArrayData:
    """The rows of `data` at `indices` (integers; a null index gives a null row)."""
    return apply(data, Selection.from_indices(indices, data.length))


# -- parallel columns ---------------------------------------------------------------------------

# Below this many rows, a thread hand-off costs more than the work it spreads.
PARALLEL_MIN_ROWS = 1 << 16
_pool: ThreadPoolExecutor | None = None


def parallel_map(func: Callable[[_In], _Out], items: list[_In], rows: int) -> list[_Out]:
    """[func(x) for x in items], on a shared thread pool when there is enough work: the kernels
    release the GIL, so columns are selected or cast in parallel."""
    global _pool
    if len(items) < 2 or rows < PARALLEL_MIN_ROWS:
        return [func(x) for x in items]
    import os
    workers = os.cpu_count() or 1
    if workers < 2:
        return [func(x) for x in items]
    if _pool is None:
        from concurrent.futures import ThreadPoolExecutor
        _pool = ThreadPoolExecutor(workers, thread_name_prefix="arrowipc-ops")
    return list(_pool.map(func, items))


# -- chunked data -------------------------------------------------------------------------------

def combined_data(chunks: list[ArrayData], type: DataType) -> ArrayData:
    """One ArrayData holding every chunk of a chunked array of `type` (dictionaries unified
    first)."""
    from .concat import concat_array_data
    if not chunks:
        from .from_python import array_data_from_python
        return array_data_from_python([], type)
    if len(chunks) == 1:
        return chunks[0]
    if isinstance(type, DictionaryType) and any(
            c.dictionary is not chunks[0].dictionary for c in chunks):
        chunks = unify_chunks(chunks)
    return concat_array_data(chunks)


def unify_chunks(chunks: list[ArrayData]) -> list[ArrayData]:
    """Dictionary arrays re-encoded against one dictionary: the first chunk's values, then each
    new value in order of appearance (pyarrow's order)."""
    from .concat import concat_array_data
    from .from_python import array_data_from_python
    from .to_python import to_pylist
    if not chunks:
        return chunks
    t = chunks[0].type
    assert isinstance(t, DictionaryType), "unify_chunks takes dictionary arrays"
    first = chunks[0].dictionary
    if all(c.dictionary is first for c in chunks):
        return chunks
    position: dict[Any, int] = {}
    parts = []
    remaps = []
    for c in chunks:
        d = c.dictionary
        assert d is not None                  # dictionary arrays have one
        values = to_pylist(d)
        new: list[int] = []
        remap: list[int] = []
        for k, v in enumerate(values):
            key = (type(v), v) if v == v else ("nan",)
            j = position.get(key)
            if j is None:
                j = position[key] = len(position)
                new.append(k)
            remap.append(j)
        if new:
            parts.append(take(d, array_data_from_python(new, int64())))
        remaps.append(remap)
    dictionary = concat_array_data(parts)
    out = []
    for c, remap in zip(chunks, remaps):
        idx = ArrayData(t.index_type, c.length, c.offset, c.null_count, c.buffers, [], None)
        md = take(array_data_from_python(remap, t.index_type), idx)
        out.append(ArrayData(t, md.length, md.offset, md.null_count, md.buffers, [], dictionary))
    return out


# -- vector functions ---------------------------------------------------------------------------

def fill_null(data: ArrayData, fill: ArrayData | None) -> ArrayData:
    """`data` with its null slots replaced by the one value of `fill` (of data's type); `data`
    itself when it has no null or `fill` is None."""
    from ..validate import null_count_of
    if null_count_of(data) == 0 or fill is None:
        return data
    # rows: the array's own where valid, row `data.length` (the fill value) where null
    from .concat import concat_array_data
    if data.type.kind in (Kind.SPARSE_UNION, Kind.DENSE_UNION, Kind.RUN_END_ENCODED):
        raise ArrowNotImplementedError(f"fill_null of {data.type}")
    both = concat_array_data([data, fill])
    sel = _k.fill_selection(data)
    return _k.take(both, sel, data.length, False)


def hash_key(v: Any) -> Any:
    """A hashable key for a to_pylist value: NaNs equal, 1 and True apart, lists and dicts as
    tuples."""
    if isinstance(v, float) and v != v:
        return ("nan",)
    if isinstance(v, dict):
        return ("dict", tuple((k, hash_key(x)) for k, x in v.items()))
    if isinstance(v, list):
        return ("list", tuple(hash_key(x) for x in v))
    return (type(v).__name__ if isinstance(v, (bool, int, float)) else "", v)


# -- nulls ----------------------------------------------------------------------------------------

# layouts without a validity bitmap of their own: drop_null keeps all their rows, as pyarrow's
_NO_VALIDITY_BITMAP = (Kind.SPARSE_UNION, Kind.DENSE_UNION, Kind.RUN_END_ENCODED)


def valid_rows(columns: list[ArrayData], length: int) -> Buffer | None:
    """A bitmap (from bit 0 over `length` rows) of the rows where every column is valid, or
    None when every row is: pyarrow's drop_null looks at the columns' own validity only (a
    struct's null child, a union's null member and a run-end encoded null do not count)."""
    from .._core import compute_kernels as _ck
    from ..validate import null_count_of
    bits = None
    for c in columns:
        if c.type.kind in _NO_VALIDITY_BITMAP or null_count_of(c) == 0:
            continue
        valid = _ck.validity_bits(c, length, False)
        bits = valid if bits is None else _ck.and_bits(bits, valid, length)
    return bits


def drop_null(data: ArrayData) -> ArrayData:
    """The rows of `data` that are not null (data itself when none is)."""
    bits = valid_rows([data], data.length)
    if bits is None:
        return data
    return apply(data, Selection.from_mask(ArrayData(bool_(), data.length, 0, 0, [None, bits]),
                                           data.length))


def struct_field(data: ArrayData, k: int) -> ArrayData:
    """Child `k` of a struct array, sliced to the array, and null where the struct is null
    (pyarrow's flatten): the child's buffers under a new validity bitmap when it starts at
    row 0, else one take (the row itself where the struct is valid)."""
    from .._core.bitmap import bitmap_view
    from .._core.buffer import py_buffer
    from ..validate import null_count_of
    child = data.children[k].slice(data.offset, data.length)
    nulls = null_count_of(data)
    bitmap = data.buffers[0]
    if nulls == 0 or bitmap is None or data.type.kind != Kind.STRUCT:
        return child
    n = data.length
    if child.offset == 0 and child.type.kind not in _NO_VALIDITY_BITMAP + (Kind.NULL,):
        # zero-copy: the child's own buffers, under its validity AND the struct's
        from .._core import compute_kernels as _ck
        bits = _ck.and_bits(_ck.validity_bits(child, n, False),
                            _ck.validity_bits(data, n, False), n)
        buffers: list[Buffer | None] = [bits]
        buffers += child.buffers[1:]
        return ArrayData(child.type, n, 0, -1, buffers, child.children, child.dictionary)
    # a mask true everywhere, null where the struct is: "emit_null" turns it into the rows
    # 0..n-1 with -1 (a null row) at each null struct
    mask = ArrayData(bool_(), n, 0, nulls, [bitmap_view(bitmap, data.offset, n),
                                            py_buffer(b"\xff" * ((n + 7) // 8))])
    return apply(child, Selection.from_mask(mask, n, "emit_null"))
