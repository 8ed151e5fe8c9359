"""Tensor: an n-dimensional array of one fixed-width numeric type (pyarrow.Tensor).

A Tensor is a Buffer plus shape, strides (in bytes) and optional dimension names; it is what the
IPC format's Tensor message carries (arrowipc.ipc.write_tensor / read_tensor). Conversion to and
from numpy is zero-copy.
"""
from __future__ import annotations

from . import types as T
from ._core.buffer import Buffer, py_buffer
from .errors import ArrowTypeError

# numpy dtype name <-> Arrow type: the fixed-width numeric types a tensor can hold
_NUMPY_NAMES = {"int8": T.int8, "int16": T.int16, "int32": T.int32, "int64": T.int64,
                "uint8": T.uint8, "uint16": T.uint16, "uint32": T.uint32, "uint64": T.uint64,
                "float16": T.float16, "float32": T.float32, "float64": T.float64}


def tensor_type_of(dtype) -> T.DataType:
    """The Arrow type of a numpy dtype (native byte order, numeric)."""
    factory = _NUMPY_NAMES.get(dtype.name)
    if factory is None or not dtype.isnative:
        raise ArrowTypeError(f"a tensor holds fixed-width numbers; numpy dtype {dtype} has no "
                             f"tensor type")
    return factory()


def numpy_dtype_of(type: T.DataType):
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
    _shape: tuple
    _strides: tuple
    _dim_names: list

    def __init__(self):
        raise TypeError("Do not call Tensor's constructor directly: use Tensor.from_numpy or "
                        "arrowipc.ipc.read_tensor")

    @classmethod
    def _make(cls, type: T.DataType, data: Buffer, shape, strides, dim_names=None) -> "Tensor":
        self = cls.__new__(cls)
        self._type, self._data = type, data
        self._shape, self._strides = tuple(shape), tuple(strides)
        self._dim_names = list(dim_names) if dim_names else []
        return self

    @staticmethod
    def from_numpy(obj, dim_names=None) -> "Tensor":
        """A Tensor over the numpy array `obj`: zero-copy for a C-contiguous array (its memory
        is kept alive), a row-major copy otherwise."""
        import numpy as np
        arr = np.ascontiguousarray(obj)
        type = tensor_type_of(arr.dtype)
        if dim_names is not None and len(dim_names) != arr.ndim:
            raise ValueError(f"dim_names has {len(dim_names)} names for {arr.ndim} dimensions")
        data = py_buffer(arr.reshape(-1).view(np.uint8)) if arr.size else py_buffer(b"")
        return Tensor._make(type, data, arr.shape, arr.strides, dim_names)

    def to_numpy(self):
        """A read-only numpy view of the tensor (zero-copy)."""
        import numpy as np
        dtype = numpy_dtype_of(self._type)
        if self.size == 0:
            return np.empty(self._shape, dtype=dtype)
        flat = np.frombuffer(self._data, dtype=dtype, count=self._data.size // dtype.itemsize)
        return np.lib.stride_tricks.as_strided(flat, shape=self._shape, strides=self._strides,
                                               writeable=False)

    @property
    def type(self) -> T.DataType:
        """The type of the values."""
        return self._type

    @property
    def shape(self) -> tuple:
        """Length of each dimension."""
        return self._shape

    @property
    def strides(self) -> tuple:
        """Bytes between consecutive values along each dimension."""
        return self._strides

    @property
    def dim_names(self) -> list:
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

    def equals(self, other) -> bool:
        """Same type, shape, dimension names and values; `other` may be any object with
        `to_numpy`, `type` and `dim_names` (a pyarrow.Tensor)."""
        import numpy as np
        if not isinstance(other, Tensor):
            if not (hasattr(other, "to_numpy") and hasattr(other, "dim_names")):
                return False
            try:
                other = Tensor.from_numpy(other.to_numpy(), other.dim_names or None)
            except (ArrowTypeError, ValueError):
                return False
        return (self._type == other._type and self._shape == other._shape
                and self.dim_names == other.dim_names
                and bool(np.array_equal(self.to_numpy(), other.to_numpy())))

    def __eq__(self, other):
        return self.equals(other)

    __hash__ = None  # type: ignore[assignment]  # mutable-looking, compared by value

    def __repr__(self):
        return (f"<arrowipc.Tensor>\ntype: {self._type}\nshape: {self._shape}\n"
                f"strides: {self._strides}")


def _contiguous_strides(shape, width: int) -> tuple:
    out, step = [], width
    for d in reversed(shape):
        out.append(step)
        step *= d
    return tuple(reversed(out))
