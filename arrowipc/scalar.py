"""Scalars: one value of an Array or ChunkedArray, as pyarrow's `arr[i]` returns it.

A Scalar is a one-row view of its array (O(1) to make; the value converts to Python only when
`as_py()` asks). Two scalars are equal when their types are equal and their values are; that holds
against pyarrow's scalars too, which have the same `type` and `as_py()`.
"""
from __future__ import annotations

__all__ = ["Scalar", "scalar"]

TYPE_CHECKING = False               # typing itself is not imported at run time
if TYPE_CHECKING:
    from typing import Any

    from .array import Array
    from .types import DataType


class Scalar:
    """One value of an array, with its type and validity."""
    __slots__ = ("_array",)

    def __init__(self, array: Array) -> None:
        # Internal: `array` is a one-row arrowipc Array; use arr[i] or arrowipc.scalar().
        self._array = array

    @property
    def type(self) -> DataType:
        """The DataType of the value."""
        return self._array.type

    @property
    def is_valid(self) -> bool:
        """False for a null."""
        return self._array.null_count == 0

    def as_py(self, **kwargs: Any) -> Any:
        """The value as a Python object (None for a null), as Array.to_pylist gives it."""
        return self._array.to_pylist()[0]

    def cast(self, target_type: Any = None, safe: bool = True, options: Any = None) -> "Scalar":
        """This value converted to `target_type` (pyarrow's safe-cast rules)."""
        return Scalar(self._array.cast(target_type, safe=safe, options=options))

    def validate(self, *, full: bool = False) -> None:
        """Check the value's memory (and its content when `full`)."""
        self._array.validate(full=full)

    def to_pyarrow(self) -> Any:
        """The same data as a pyarrow.Scalar, zero-copy (arrowipc.handoff; needs pyarrow)."""
        from .handoff import to_pyarrow
        return to_pyarrow(self._array, "scalar")

    def equals(self, other: object) -> bool:
        """True when `other` (ours or pyarrow's) has an equal type and an equal value."""
        if not hasattr(other, "as_py") or not hasattr(other, "type"):
            return False
        if not _same_type(self.type, other.type):
            return False
        a, b = self.as_py(), other.as_py()
        return bool(a == b or (a != a and b != b))

    def __eq__(self, other: object) -> bool:
        return self.equals(other)

    def __hash__(self) -> int:
        v = self.as_py()
        try:
            return hash((str(self.type), v))
        except TypeError:
            return hash((str(self.type), repr(v)))

    def __bool__(self) -> bool:
        return self.is_valid

    def __str__(self) -> str:
        return str(self.as_py())

    def __repr__(self) -> str:
        name = type(self.type).__name__
        return f"<arrowipc.Scalar[{self.type}] ({name}): {self.as_py()!r}>"

    def __reduce__(self) -> tuple[Any, tuple[Any, DataType]]:
        return (scalar, (self.as_py(), self.type))

    # nested values: pyarrow lets list and struct scalars be indexed
    def __len__(self) -> int:
        v = self.as_py()
        if not isinstance(v, (list, dict)):
            raise TypeError(f"a {self.type} scalar has no length")
        return len(v)

    def __getitem__(self, key: Any) -> Any:
        from .array import StructArray, BaseListArray
        arr = self._array
        if isinstance(arr, StructArray):
            return arr.field(key)[0]
        if isinstance(arr, BaseListArray) and self.is_valid:
            return arr.flatten()[key]
        raise TypeError(f"a {self.type} scalar cannot be indexed")

    @property
    def values(self) -> Array | None:
        """The values of a list scalar as an Array (None when null)."""
        from .array import BaseListArray
        if isinstance(self._array, BaseListArray):
            return self._array.flatten() if self.is_valid else None
        raise AttributeError("values")


def _same_type(a: Any, b: Any) -> bool:
    if a == b:
        return True
    # a pyarrow type: compare through its string form, which arrowipc types reproduce
    return type(a).__module__.split(".")[0] != type(b).__module__.split(".")[0] and str(a) == str(b)


def scalar(value: Any, type: Any = None) -> Scalar:
    """A Scalar holding `value` (type inferred as arrowipc.array infers it, unless given)."""
    from .array import array
    if isinstance(value, Scalar):
        return value if type is None else value.cast(type)
    return Scalar(array([value], type=type))


from . import _upcalls                              # noqa: E402   (Array.__getitem__ hands these out)
_upcalls.register(__name__, Scalar=Scalar)
