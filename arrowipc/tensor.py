"""Tensor: an n-dimensional array of one fixed-width numeric type (pyarrow.Tensor).

A Tensor is a Buffer plus shape, strides (in bytes) and optional dimension names; it is what the
IPC format's Tensor message carries (arrowipc.ipc.write_tensor / read_tensor). Conversion to and
from numpy is zero-copy.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    NDArray = npt.NDArray[Any]

from . import types as T
from ._core.buffer import Buffer, py_buffer
from .errors import ArrowCapacityError, ArrowInvalid, ArrowTypeError

__all__ = ["as_sparse_tensor", "numpy_dtype_of", "SparseCOOTensor", "SparseCSCMatrix",
           "SparseCSFTensor", "SparseCSRMatrix", "SparseTensor", "Tensor", "tensor_type_of"]

# numpy dtype name <-> Arrow type: the fixed-width numeric types a tensor can hold
_NUMPY_NAMES = {"int8": T.int8, "int16": T.int16, "int32": T.int32, "int64": T.int64,
                "uint8": T.uint8, "uint16": T.uint16, "uint32": T.uint32, "uint64": T.uint64,
                "float16": T.float16, "float32": T.float32, "float64": T.float64}


def tensor_type_of(dtype: np.dtype[Any]) -> T.DataType:
    """The Arrow type of a numpy dtype (native byte order, numeric)."""
    factory = _NUMPY_NAMES.get(dtype.name)
    if factory is None or not dtype.isnative:
        raise ArrowTypeError(f"a tensor holds fixed-width numbers; numpy dtype {dtype} has no "
                             f"tensor type")
    return factory()


def numpy_dtype_of(type: T.DataType) -> np.dtype[Any]:
    """The numpy dtype of a tensor's Arrow type."""
    import numpy as np
    for name, factory in _NUMPY_NAMES.items():
        if factory() == type:
            return np.dtype(name)
    raise ArrowTypeError(f"a tensor cannot hold values of type {type}")


class Tensor:
    """An n-dimensional array over a Buffer (pyarrow.Tensor); made by `from_numpy` or read."""
    _type: T.DataType
    _data: Buffer
    _shape: tuple[int, ...]
    _strides: tuple[int, ...]
    _dim_names: list[str]

    def __init__(self) -> None:
        raise TypeError("Do not call Tensor's constructor directly: use Tensor.from_numpy or "
                        "arrowipc.ipc.read_tensor")

    @classmethod
    def _make(cls, type: T.DataType, data: Buffer, shape: Any, strides: Any,
              dim_names: Any = None) -> "Tensor":
        self = cls.__new__(cls)
        self._type, self._data = type, data
        self._shape, self._strides = tuple(shape), tuple(strides)
        self._dim_names = list(dim_names) if dim_names else []
        return self

    @staticmethod
    def from_numpy(obj: Any, dim_names: Any = None) -> "Tensor":
        """A Tensor over the numpy array `obj`: zero-copy for a C-contiguous array (its memory
        is kept alive), a row-major copy otherwise."""
        import numpy as np
        return Tensor._over(np.ascontiguousarray(obj), dim_names)

    @staticmethod
    def _over(arr: Any, dim_names: Any = None) -> "Tensor":
        """A Tensor over a C- or Fortran-contiguous numpy array, zero-copy, its strides kept."""
        import numpy as np
        type = tensor_type_of(arr.dtype)
        if dim_names is not None and len(dim_names) != arr.ndim:
            raise ValueError(f"dim_names has {len(dim_names)} names for {arr.ndim} dimensions")
        # order "A": the memory's own order, so neither layout is copied
        data = py_buffer(arr.reshape(-1, order="A").view(np.uint8)) if arr.size \
            else py_buffer(b"")
        return Tensor._make(type, data, arr.shape, arr.strides, dim_names)

    def to_numpy(self) -> NDArray:
        """A read-only numpy view of the tensor (zero-copy)."""
        import numpy as np
        dtype = numpy_dtype_of(self._type)
        if self.size == 0:
            return np.empty(self._shape, dtype=dtype)
        flat = np.frombuffer(memoryview(self._data), dtype=dtype,
                             count=self._data.size // dtype.itemsize)
        return np.lib.stride_tricks.as_strided(flat, shape=self._shape, strides=self._strides,
                                               writeable=False)

    @property
    def type(self) -> T.DataType:
        """The type of the values."""
        return self._type

    @property
    def shape(self) -> tuple[int, ...]:
        """Length of each dimension."""
        return self._shape

    @property
    def strides(self) -> tuple[int, ...]:
        """Bytes between consecutive values along each dimension."""
        return self._strides

    @property
    def dim_names(self) -> list[str]:
        """The names of the dimensions (empty when unnamed)."""
        return list(self._dim_names)

    def dim_name(self, i: int) -> str:
        """The name of dimension `i` ("" when unnamed)."""
        return self._dim_names[i] if self._dim_names else ""

    @property
    def ndim(self) -> int:
        """Number of dimensions."""
        return len(self._shape)

    @property
    def size(self) -> int:
        """Number of values."""
        n = 1
        for d in self._shape:
            n *= d
        return n

    @property
    def data(self) -> Buffer:
        """The Buffer the values live in."""
        return self._data

    @property
    def is_contiguous(self) -> bool:
        """Whether the values are laid out in row-major (C) or column-major (F) order without
        gaps."""
        return self.is_row_major or self.is_column_major

    @property
    def is_row_major(self) -> bool:
        """Row-major (C) order without gaps."""
        return self._strides == _contiguous_strides(self._shape, self._type.byte_width)

    @property
    def is_column_major(self) -> bool:
        """Column-major (Fortran) order without gaps."""
        rev = _contiguous_strides(self._shape[::-1], self._type.byte_width)[::-1]
        return self._strides == rev

    @property
    def is_mutable(self) -> bool:
        """Whether the data buffer is writable."""
        return self._data.is_mutable

    def equals(self, other: Any) -> bool:
        """Same type, shape, dimension names and values; `other` may be any object with
        `to_numpy`, `type` and `dim_names` (a pyarrow.Tensor)."""
        import numpy as np
        if isinstance(other, Tensor):
            values, names = other.to_numpy(), other.dim_names
        elif hasattr(other, "to_numpy") and hasattr(other, "dim_names"):
            values, names = np.asarray(other.to_numpy()), list(other.dim_names or [])
        else:
            return False
        try:
            other_type = tensor_type_of(values.dtype)
        except ArrowTypeError:
            return False
        return (self._type == other_type and self._shape == tuple(values.shape)
                and self.dim_names == names and _equal_in_blocks(self.to_numpy(), values))

    def __eq__(self, other: object) -> bool:
        return self.equals(other)

    __hash__ = None  # type: ignore[assignment]  # mutable-looking, compared by value

    def __repr__(self) -> str:
        return (f"<arrowipc.Tensor>\ntype: {self._type}\nshape: {self._shape}\n"
                f"strides: {self._strides}")


def _contiguous_strides(shape: tuple[int, ...], width: int) -> tuple[int, ...]:
    out: list[int] = []
    step = width
    for d in reversed(shape):
        out.append(step)
        step *= d
    return tuple(reversed(out))


# Elements compared at once by _equal_in_blocks: the temporaries of one comparison stay small.
_BLOCK_ELEMENTS = 1 << 22


def _equal_in_blocks(a: NDArray, b: NDArray) -> bool:
    """np.array_equal of two arrays of one shape, compared a block at a time. A tensor read from
    a few bytes may be huge: strides of 0 repeat the same values over any shape, and comparing it
    whole would allocate one boolean per cell. Dimensions where both repeat are compared once."""
    import numpy as np
    keep = tuple(slice(0, 1) if sa == 0 and sb == 0 and n > 1 else slice(None)
                 for n, sa, sb in zip(a.shape, a.strides, b.strides))
    a, b = a[keep], b[keep]
    if a.size <= _BLOCK_ELEMENTS:
        return bool(np.array_equal(a, b))
    if a.shape[0] == 1:
        return _equal_in_blocks(a[0], b[0])
    step = max(1, _BLOCK_ELEMENTS // (a.size // a.shape[0]))
    return all(_equal_in_blocks(a[i:i + step], b[i:i + step])
               for i in range(0, a.shape[0], step))


def _memory_bytes() -> int:
    """What a dense form may take at most: the machine's physical memory, or the process's
    address-space limit (RLIMIT_AS) when it is lower."""
    import os
    try:
        limit = int(os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE"))
    except (ValueError, OSError, AttributeError):    # not POSIX: no bound but the allocator's
        limit = 1 << 62
    try:
        import resource
        soft = resource.getrlimit(resource.RLIMIT_AS)[0]
        if soft != resource.RLIM_INFINITY and 0 < soft < limit:
            limit = int(soft)
    except (ImportError, ValueError, OSError):
        pass
    return limit


def _check_fits(nbytes: int, what: str) -> None:
    """ArrowCapacityError when `nbytes` (a dense form, the index of every non-zero cell) is more
    than the memory the process may have: refused before allocating (and before the work of
    filling it), not by the allocator."""
    limit = _memory_bytes()
    if nbytes > limit:
        raise ArrowCapacityError(f"{what} takes {nbytes} bytes, more than the {limit} bytes this "
                                 f"process may allocate (physical memory, or its address-space "
                                 f"limit)")


def _allocated(make: Any, nbytes: int, what: str) -> Any:
    """make(), an allocation of about `nbytes` checked against memory first; the allocator's
    refusal (an address-space limit) is an ArrowCapacityError too."""
    _check_fits(nbytes, what)
    try:
        return make()
    except MemoryError:
        raise ArrowCapacityError(f"{what} takes {nbytes} bytes, which cannot be allocated"
                                 ) from None


# ---------------------------------------------------------------------------------------------
# Sparse tensors (pyarrow.SparseCOOTensor, SparseCSRMatrix, SparseCSCMatrix, SparseCSFTensor).
#
# Each keeps its non-zero values and its index arrays as numpy arrays: views of the message body
# when read from IPC, the caller's arrays when made by from_numpy. Every index claim is checked
# once, at construction, with whole-array numpy operations, so to_numpy/to_tensor can trust them
# (pyarrow itself crashes on out-of-shape coordinates; arrowipc raises ArrowInvalid).

_INDEX_KINDS = "iu"     # index arrays hold integers, signed or unsigned


def _values_1d(data: Any, where: str) -> tuple[NDArray, T.DataType]:
    """The non-zero values as a 1-D array of a tensor type (pyarrow accepts (n,) or (n, 1))."""
    import numpy as np
    arr = np.asarray(data)
    if arr.ndim == 2 and arr.shape[1] == 1:
        arr = arr[:, 0]
    if arr.ndim != 1:
        raise ValueError(f"{where}: data must have shape (non_zero_length,) or "
                         f"(non_zero_length, 1), got {arr.shape}")
    return arr, tensor_type_of(arr.dtype)


def _index_array(obj: Any, ndim: int, where: str, what: str) -> NDArray:
    import numpy as np
    arr = np.asarray(obj)
    if arr.dtype.kind not in _INDEX_KINDS or arr.ndim != ndim:
        raise ArrowTypeError(f"{where}: {what} must be a {ndim}-D integer array, got a "
                             f"{arr.ndim}-D {arr.dtype} array")
    return arr


def _check_range(values: NDArray, bound: int, where: str, what: str) -> None:
    """0 <= values < bound, vectorised; names the first offender."""
    import numpy as np
    if values.size == 0:
        return
    bad = np.flatnonzero((values < 0) | (values >= bound))
    if bad.size:
        i = int(bad[0])
        raise ArrowInvalid(f"{where}: {what}[{i}] = {int(values.reshape(-1)[i])} is outside "
                           f"[0, {bound})")


def _check_indptr(indptr: NDArray, n_pointers: int, end: int, where: str, what: str) -> None:
    """indptr has n_pointers entries, starts at 0, never decreases and ends at `end`."""
    import numpy as np
    if indptr.shape[0] != n_pointers:
        raise ArrowInvalid(f"{where}: {what} has {indptr.shape[0]} entries, expected "
                           f"{n_pointers}")
    if int(indptr[0]) != 0:
        raise ArrowInvalid(f"{where}: {what} starts at {int(indptr[0])}, expected 0")
    down = np.flatnonzero(np.diff(indptr.astype(np.int64, copy=False)) < 0)
    if down.size:
        i = int(down[0])
        raise ArrowInvalid(f"{where}: {what} is not monotonic: entry {i + 1} "
                           f"({int(indptr[i + 1])}) is less than entry {i} ({int(indptr[i])})")
    if int(indptr[-1]) != end:
        raise ArrowInvalid(f"{where}: {what} ends at {int(indptr[-1])}, expected {end} (the "
                           f"number of entries it points into)")


def _check_shape(shape: Any, where: str) -> tuple[int, ...]:
    """`shape` as a tuple of ints; ArrowInvalid for a negative dimension."""
    dims = tuple(int(n) for n in shape)
    if any(n < 0 for n in dims):
        raise ArrowInvalid(f"{where}: negative dimension in shape {dims}")
    return dims


def _dense_of(tensor_or_array: Any) -> tuple[NDArray, list[str]]:
    """(numpy array, dim_names) of a numpy array, an arrowipc.Tensor or a pyarrow.Tensor."""
    import numpy as np
    if hasattr(tensor_or_array, "to_numpy") and hasattr(tensor_or_array, "dim_names"):
        return np.asarray(tensor_or_array.to_numpy()), list(tensor_or_array.dim_names or [])
    return np.asarray(tensor_or_array), []


class SparseTensor:
    """What the four sparse layouts share: value type, shape, dimension names, values."""
    _type: T.DataType
    _shape: tuple[int, ...]
    _dim_names: list[str]
    _data: NDArray       # 1-D numpy array of the non-zero values

    def __init__(self) -> None:
        raise TypeError(f"Do not call {type(self).__name__}'s constructor directly: use "
                        f"from_numpy, from_dense_numpy or from_tensor")

    def _init_common(self, data: Any, shape: Any, dim_names: Any, where: str) -> None:
        self._data, self._type = _values_1d(data, where)
        self._shape = _check_shape(shape, where)
        if dim_names is not None and len(dim_names) and len(dim_names) != len(self._shape):
            raise ValueError(f"{where}: dim_names has {len(dim_names)} names for "
                             f"{len(self._shape)} dimensions")
        self._dim_names = [str(n) for n in dim_names] if dim_names else []

    @classmethod
    def from_tensor(cls, obj: Any) -> "SparseTensor":
        """The sparse form of a dense Tensor (arrowipc's or pyarrow's)."""
        arr, names = _dense_of(obj)
        sparse: SparseTensor = cls.from_dense_numpy(  # type: ignore[attr-defined]
            arr, names or None)
        return sparse

    @property
    def type(self) -> T.DataType:
        """The type of the values."""
        return self._type

    @property
    def shape(self) -> tuple[int, ...]:
        """Length of each dimension."""
        return self._shape

    @property
    def ndim(self) -> int:
        """Number of dimensions."""
        return len(self._shape)

    @property
    def size(self) -> int:
        """Number of cells of the dense equivalent."""
        n = 1
        for d in self._shape:
            n *= d
        return n

    @property
    def non_zero_length(self) -> int:
        """Number of stored (non-zero) values."""
        return int(self._data.shape[0])

    @property
    def dim_names(self) -> tuple[str, ...]:
        """The names of the dimensions (empty when unnamed)."""
        return tuple(self._dim_names)

    def dim_name(self, i: int) -> str:
        """The name of dimension `i` ("" when unnamed)."""
        return self._dim_names[i] if self._dim_names else ""

    @property
    def is_mutable(self) -> bool:
        """Whether the values may be written in place."""
        return bool(self._data.flags.writeable)

    def _coords(self) -> NDArray:
        """(non_zero_length, ndim) int64 coordinates, in the order of the values."""
        raise NotImplementedError

    def _dense(self) -> NDArray:
        """The dense equivalent, newly allocated (ArrowCapacityError when it cannot fit in
        memory: a few bytes of index may describe any shape)."""
        import numpy as np
        dtype = numpy_dtype_of(self._type)
        out: NDArray = _allocated(lambda: np.zeros(self._shape, dtype=dtype),
                                  self.size * dtype.itemsize,
                                  f"the dense form of {type(self).__name__} of shape "
                                  f"{self._shape}")
        if self._data.shape[0]:
            out[tuple(self._coords().T)] = self._data
        return out

    def _canonical_cells(self) -> tuple[NDArray, NDArray]:
        """(coordinates sorted in row-major order, their values) of the cells the dense form
        holds non-zero: a cell listed twice keeps its last value, as in the dense form, and
        explicit zeros are dropped. Sized by the values present, never by the shape."""
        import numpy as np
        coords, values = self._coords(), self._data
        n, ndim = coords.shape[0], len(self._shape)
        if n == 0:
            return coords.reshape(0, ndim), values
        order = np.lexsort([np.arange(n)] + [coords[:, d] for d in range(ndim - 1, -1, -1)])
        coords, values = coords[order], values[order]
        last = np.ones(n, dtype=bool)                   # the last of each run of equal cells
        if n > 1:
            last[:-1] = (coords[1:] != coords[:-1]).any(axis=1)
        coords, values = coords[last], values[last]
        nonzero = values != 0
        return coords[nonzero], values[nonzero]

    def to_tensor(self) -> Tensor:
        """The dense Tensor (newly allocated: shape's product of values)."""
        return Tensor.from_numpy(self._dense(), self._dim_names or None)

    def equals(self, other: Any) -> bool:
        """Same layout, type, shape and values (the dense forms are equal); `other` may be
        pyarrow's sparse tensor of the same layout. The non-zero cells are compared, sorted, so
        the work is sized by the values present, not by the shape."""
        import numpy as np
        if not isinstance(other, SparseTensor):
            if type(other).__name__ != type(self).__name__ or not hasattr(other, "to_numpy"):
                return False
            try:
                other = as_sparse_tensor(other)
            except (ArrowTypeError, ValueError):
                return False
        if not (type(self) is type(other) and self._type == other._type
                and self._shape == other._shape):
            return False
        coords, values = self._canonical_cells()
        other_coords, other_values = other._canonical_cells()
        return (coords.shape == other_coords.shape and bool(np.array_equal(coords, other_coords))
                and bool(np.array_equal(values, other_values)))

    def __eq__(self, other: object) -> bool:
        return self.equals(other)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"<arrowipc.{type(self).__name__}>\ntype: {self._type}\nshape: {self._shape}"


def _nonzero_cells(arr: NDArray) -> tuple[NDArray, NDArray]:
    """((n, ndim) int64 coordinates, values) of the non-zero cells, in row-major order. numpy
    walks a strided array in place (no dense copy, whatever its strides), and the index of the
    cells found is checked to fit in memory before it is made."""
    import numpy as np
    if arr.ndim == 0:
        values = arr.reshape(1)[arr.reshape(1) != 0]
        return np.empty((values.shape[0], 0), dtype=np.int64), values
    count = _nonzero_count(arr)
    if count == 0:
        return np.empty((0, arr.ndim), dtype=np.int64), np.empty(0, dtype=arr.dtype)
    coords = _allocated(lambda: np.stack(np.nonzero(arr), axis=1).astype(np.int64, copy=False),
                        count * (2 * 8 * arr.ndim + arr.itemsize),
                        f"the index of the {count} non-zero cells of shape {arr.shape}")
    return coords, arr[tuple(coords.T)]


def _nonzero_count(arr: NDArray) -> int:
    """The number of non-zero cells, counted once per value a dimension of stride 0 repeats
    (a tensor read from a few bytes may repeat one value over any shape: never walked whole)."""
    import numpy as np
    repeat = 1
    keep = []
    for n, stride in zip(arr.shape, arr.strides):
        if stride == 0 and n > 1:
            repeat *= n
            keep.append(slice(0, 1))
        else:
            keep.append(slice(None))
    return int(np.count_nonzero(arr[tuple(keep)])) * repeat


def _lex_sorted_unique(coords: NDArray) -> bool:
    """Whether the coordinate rows are strictly increasing in row-major order."""
    import numpy as np
    n = coords.shape[0]
    if n < 2:
        return True
    prev, cur = coords[:-1], coords[1:]
    diff = cur != prev
    first = np.argmax(diff, axis=1)                  # first differing column of each pair
    rows = np.arange(n - 1)
    return bool(diff.any(axis=1).all() and (cur[rows, first] > prev[rows, first]).all())


class SparseCOOTensor(SparseTensor):
    """A sparse tensor as coordinate lists: one row of `ndim` indices per non-zero value
    (pyarrow.SparseCOOTensor)."""
    _indices: NDArray
    _canonical: bool

    @classmethod
    def _make(cls, data: Any, coords: Any, shape: Any, dim_names: Any = None,
              is_canonical: bool | None = None,
              where: str = "SparseCOOTensor", trusted: bool = False) -> "SparseCOOTensor":
        """`trusted`: the coordinates come from np.nonzero of an array of `shape` (in range,
        canonical), so the checks are skipped."""
        self = cls.__new__(cls)
        self._init_common(data, shape, dim_names, where)
        coords = _index_array(coords, 2, where, "coords")
        nnz, ndim = self._data.shape[0], len(self._shape)
        if coords.shape != (nnz, ndim) and not (nnz == 0 and coords.size == 0):
            raise ArrowInvalid(f"{where}: coords has shape {coords.shape}, expected "
                               f"({nnz}, {ndim}) (non_zero_length, ndim)")
        coords = coords.reshape(nnz, ndim)
        self._indices = coords
        if trusted:
            self._canonical = True
            return self
        for d in range(ndim):
            _check_range(coords[:, d], self._shape[d], where, f"coords[:, {d}]")
        sorted_unique = _lex_sorted_unique(coords)
        if is_canonical and not sorted_unique:
            raise ArrowInvalid(f"{where}: the index claims canonical order but its coordinates "
                               f"are not sorted without duplicates")
        self._canonical = sorted_unique
        return self

    @staticmethod
    def from_numpy(data: Any, coords: Any, shape: Any, dim_names: Any = None
                   ) -> "SparseCOOTensor":
        """From the non-zero values, their (non_zero_length, ndim) coordinates and the shape."""
        return SparseCOOTensor._make(data, coords, shape, dim_names,
                                     where="SparseCOOTensor.from_numpy")

    @staticmethod
    def from_dense_numpy(obj: Any, dim_names: Any = None) -> "SparseCOOTensor":
        """The non-zero cells of a dense numpy array, in row-major order."""
        import numpy as np
        arr = np.asarray(obj)
        coords, values = _nonzero_cells(arr)                # row-major, hence canonical
        return SparseCOOTensor._make(values, coords, arr.shape, dim_names,
                                     where="SparseCOOTensor.from_dense_numpy", trusted=True)

    def to_numpy(self) -> tuple[NDArray, NDArray]:
        """(values as a (non_zero_length, 1) array, coordinates as (non_zero_length, ndim))."""
        return self._data.reshape(-1, 1), self._indices

    @property
    def has_canonical_format(self) -> bool:
        """Whether the coordinates are sorted in row-major order without duplicates."""
        return self._canonical

    def _coords(self) -> NDArray:
        return self._indices


class _SparseCSXMatrix(SparseTensor):
    """CSR (axis 0 compressed) and CSC (axis 1 compressed) share one layout."""
    _axis: int
    _indptr: Any
    _indices: Any

    @classmethod
    def _make(cls, data: Any, indptr: Any, indices: Any, shape: Any, dim_names: Any = None,
              where: str = "") -> "_SparseCSXMatrix":
        self = cls.__new__(cls)
        where = where or cls.__name__
        self._init_common(data, shape, dim_names, where)
        if len(self._shape) != 2:
            raise ArrowInvalid(f"{where}: a sparse matrix has 2 dimensions, got shape "
                               f"{self._shape}")
        indptr = _index_array(indptr, 1, where, "indptr")
        indices = _index_array(indices, 1, where, "indices")
        nnz = self._data.shape[0]
        major, minor = self._shape[self._axis], self._shape[1 - self._axis]
        _check_indptr(indptr, major + 1, nnz, where, "indptr")
        if indices.shape[0] != nnz:
            raise ArrowInvalid(f"{where}: indices has {indices.shape[0]} entries, expected "
                               f"{nnz} (non_zero_length)")
        _check_range(indices, minor, where, "indices")
        self._indptr, self._indices = indptr, indices
        return self

    @classmethod
    def from_numpy(cls, data: Any, indptr: Any, indices: Any, shape: Any,
                   dim_names: Any = None) -> "_SparseCSXMatrix":
        """From the non-zero values, the pointer array (one more than the compressed axis' length)
        and the other axis' index of each value."""
        return cls._make(data, indptr, indices, shape, dim_names, f"{cls.__name__}.from_numpy")

    @classmethod
    def from_dense_numpy(cls, obj: Any, dim_names: Any = None) -> "_SparseCSXMatrix":
        """The non-zero cells of a dense 2-D numpy array."""
        import numpy as np
        arr = np.asarray(obj)
        where = f"{cls.__name__}.from_dense_numpy"
        if arr.ndim != 2:
            raise ArrowInvalid(f"{where}: a sparse matrix has 2 dimensions, got {arr.ndim}")
        view = arr if cls._axis == 0 else arr.T
        count = _nonzero_count(view)
        what = f"the index of the {count} non-zero cells of shape {arr.shape}"
        nbytes = count * (3 * 8 + arr.itemsize) + 8 * (view.shape[0] + 1)
        major, minor = _allocated(
            lambda: np.nonzero(view) if count else (np.empty(0, np.int64),) * 2, nbytes, what)

        def pointers() -> NDArray:
            indptr = np.zeros(view.shape[0] + 1, dtype=np.int64)
            np.cumsum(np.bincount(major, minlength=view.shape[0]), out=indptr[1:])
            return indptr
        indptr = _allocated(pointers, nbytes + 8 * view.shape[0], what)
        return cls._make(view[major, minor], indptr, minor.astype(np.int64), arr.shape,
                         dim_names, where)

    def to_numpy(self) -> tuple[NDArray, NDArray, NDArray]:
        """(values as a (non_zero_length, 1) array, indptr, indices)."""
        return self._data.reshape(-1, 1), self._indptr, self._indices

    def _coords(self) -> NDArray:
        import numpy as np
        major = np.repeat(np.arange(self._indptr.shape[0] - 1),
                          np.diff(self._indptr.astype(np.int64)))
        minor = self._indices.astype(np.int64)
        pair = (major, minor) if self._axis == 0 else (minor, major)
        return np.stack(pair, axis=1)


class SparseCSRMatrix(_SparseCSXMatrix):
    """A sparse matrix in compressed sparse row form (pyarrow.SparseCSRMatrix)."""
    _axis = 0


class SparseCSCMatrix(_SparseCSXMatrix):
    """A sparse matrix in compressed sparse column form (pyarrow.SparseCSCMatrix)."""
    _axis = 1


class SparseCSFTensor(SparseTensor):
    """A sparse tensor as compressed sparse fibers: a prefix tree over the dimensions in
    `axis_order`, one indices array per level and one indptr array per pair of adjacent levels
    (pyarrow.SparseCSFTensor)."""
    _indptr: list[NDArray]
    _indices: list[NDArray]
    _axis_order: list[int]

    @classmethod
    def _make(cls, data: Any, indptr: Any, indices: Any, shape: Any, axis_order: Any = None,
              dim_names: Any = None,
              where: str = "SparseCSFTensor") -> "SparseCSFTensor":
        self = cls.__new__(cls)
        self._init_common(data, shape, dim_names, where)
        ndim, nnz = len(self._shape), self._data.shape[0]
        order = list(range(ndim)) if axis_order is None else [int(a) for a in axis_order]
        if sorted(order) != list(range(ndim)):
            raise ArrowInvalid(f"{where}: axis_order {order} is not a permutation of the "
                               f"{ndim} dimensions")
        indptr = [_index_array(p, 1, where, f"indptr[{i}]") for i, p in enumerate(indptr)]
        indices = [_index_array(x, 1, where, f"indices[{i}]") for i, x in enumerate(indices)]
        if len(indices) != ndim or len(indptr) != max(ndim - 1, 0):
            raise ArrowInvalid(f"{where}: {len(indptr)} indptr and {len(indices)} indices "
                               f"arrays for {ndim} dimensions, expected {max(ndim - 1, 0)} and "
                               f"{ndim}")
        if ndim and indices[-1].shape[0] != nnz:
            raise ArrowInvalid(f"{where}: the last level has {indices[-1].shape[0]} indices, "
                               f"expected {nnz} (non_zero_length)")
        for d in range(ndim):
            _check_range(indices[d], self._shape[order[d]], where, f"indices[{d}]")
        for d in range(ndim - 1):
            _check_indptr(indptr[d], indices[d].shape[0] + 1, indices[d + 1].shape[0], where,
                          f"indptr[{d}]")
        self._indptr, self._indices, self._axis_order = indptr, indices, order
        return self

    @staticmethod
    def from_numpy(data: Any, indptr: Any, indices: Any, shape: Any, axis_order: Any = None,
                   dim_names: Any = None) -> "SparseCSFTensor":
        """From the non-zero values, the per-level indptr and indices arrays, the shape and the
        order in which the tree walks the dimensions (default 0, 1, ..., ndim-1)."""
        return SparseCSFTensor._make(data, indptr, indices, shape, axis_order, dim_names,
                                     "SparseCSFTensor.from_numpy")

    @staticmethod
    def from_dense_numpy(obj: Any, dim_names: Any = None) -> "SparseCSFTensor":
        """The non-zero cells of a dense numpy array; the tree walks the dimensions from the
        shortest to the longest (ties in dimension order), as pyarrow does."""
        import numpy as np
        arr = np.asarray(obj)
        order = [int(a) for a in np.argsort(arr.shape, kind="stable")]
        walked = arr.transpose(order)                       # a view: no dense copy
        coords, values = _nonzero_cells(walked)             # row-major: prefixes are grouped
        nnz, ndim = coords.shape[0], arr.ndim
        # changed[i, d]: value i starts a new node at level d (its prefix up to d differs)
        changed = np.ones((nnz, ndim), dtype=bool)
        if nnz > 1:
            changed[1:] = np.logical_or.accumulate(coords[1:] != coords[:-1], axis=1)
        indices = [coords[changed[:, d], d] for d in range(ndim)]
        indptr: list[NDArray] = []
        for d in range(ndim - 1):
            rank = np.cumsum(changed[:, d + 1]) - 1         # node number at level d+1
            indptr.append(np.append(rank[changed[:, d]], indices[d + 1].shape[0])
                          .astype(np.int64))
        return SparseCSFTensor._make(values, indptr, indices, arr.shape, order,
                                     dim_names, "SparseCSFTensor.from_dense_numpy")

    def to_numpy(self) -> tuple[NDArray, list[NDArray], list[NDArray]]:
        """(values as a (non_zero_length, 1) array, list of indptr arrays, list of indices
        arrays)."""
        return self._data.reshape(-1, 1), list(self._indptr), list(self._indices)

    @property
    def axis_order(self) -> list[int]:
        """The order in which the prefix tree walks the dimensions."""
        return list(self._axis_order)

    def _coords(self) -> NDArray:
        import numpy as np
        ndim, nnz = len(self._shape), self._data.shape[0]
        out = np.empty((nnz, ndim), dtype=np.int64)
        node = np.arange(nnz)                               # each value's node at level d
        for d in range(ndim - 1, -1, -1):
            out[:, self._axis_order[d]] = self._indices[d][node]
            if d:
                ptr = self._indptr[d - 1].astype(np.int64)
                parent = np.repeat(np.arange(ptr.shape[0] - 1), np.diff(ptr))
                node = parent[node]
        return out


_SPARSE_CLASSES = {c.__name__: c for c in (SparseCOOTensor, SparseCSRMatrix, SparseCSCMatrix,
                                           SparseCSFTensor)}


def as_sparse_tensor(obj: Any) -> SparseTensor:
    """An arrowipc sparse tensor for one of arrowipc's or pyarrow's (same class name)."""
    if isinstance(obj, SparseTensor):
        return obj
    cls = _SPARSE_CLASSES.get(type(obj).__name__)
    if cls is None or not hasattr(obj, "to_numpy"):
        raise ArrowTypeError(f"expected a sparse tensor, got {type(obj).__name__}")
    names = list(obj.dim_names or []) or None
    if cls is SparseCSFTensor:
        # pyarrow does not expose a CSF tensor's axis order, so its levels cannot be placed:
        # rebuild the index from the dense values (the walk pyarrow's from_dense_numpy uses)
        return SparseCSFTensor.from_tensor(obj.to_tensor())
    if cls is SparseCOOTensor:
        data, coords = obj.to_numpy()
        return SparseCOOTensor._make(data, coords, obj.shape, names)
    data, indptr, indices = obj.to_numpy()
    csx = SparseCSRMatrix if cls is SparseCSRMatrix else SparseCSCMatrix
    return csx._make(data, indptr, indices, obj.shape, names)
