"""The exception taxonomy: one base, one class per kind of failure.

ArrowInvalid is raised for every malformed input, whichever layer finds it; messages say what was
expected, what was found, and where (field, buffer index or byte offset).

Each class derives from the same builtin as pyarrow's class of its name. When the
process has pyarrow loaded already (`pyarrow.lib` in `sys.modules`; never imported from here), an
exception is created as a subclass of both arrowipc's class and pyarrow's, so code written for
pyarrow (`except pa.ArrowInvalid:`) catches arrowipc's errors unchanged. Its name, module,
message and pickled form are arrowipc's class's.
"""

from __future__ import annotations

import sys

TYPE_CHECKING = False               # typing itself is not imported at run time (slow)
if TYPE_CHECKING:
    from typing import Any, ClassVar

    from typing_extensions import Self


__all__ = ["ArrowCapacityError", "ArrowException", "ArrowIndexError", "ArrowInvalid",
           "ArrowIOError", "ArrowKeyError", "ArrowNotImplementedError", "ArrowTruncatedBody",
           "ArrowTypeError"]


class ArrowException(Exception):
    """Base of every exception arrowipc raises on purpose."""

    # the name of the class in pyarrow.lib this one stands for; None: pyarrow's is a builtin
    pyarrow_name: ClassVar[str | None] = "ArrowException"

    def __new__(cls, *args: Any, **kwargs: Any) -> Self:
        made: type[ArrowException] = cls
        lib = sys.modules.get("pyarrow.lib")
        if lib is not None and cls.pyarrow_name is not None:
            made = _with_pyarrow_class(cls, lib)
        out: Self = super().__new__(made, *args, **kwargs)   # type: ignore[assignment]
        return out


_MIXED: dict[tuple[type, type], type] = {}


def _with_pyarrow_class(cls: type[ArrowException], lib: Any) -> type[ArrowException]:
    """`cls` joined with its pyarrow counterpart in `lib`, made once per pair."""
    if "_arrowipc_class" in cls.__dict__:
        return cls                                  # already joined
    theirs = getattr(lib, cls.pyarrow_name or "", None)
    if not isinstance(theirs, type) or not issubclass(theirs, BaseException):
        return cls
    mixed = _MIXED.get((cls, theirs))
    if mixed is None:
        def __reduce__(self: BaseException) -> Any:
            # pickled (and copied) as arrowipc's class, which joins pyarrow's again on load
            reduced = super(mixed, self).__reduce__()  # type: ignore[arg-type]
            return (cls,) + tuple(reduced[1:])
        mixed = type(cls.__name__, (cls, theirs), {
            "__module__": cls.__module__, "__qualname__": cls.__qualname__,
            "__doc__": cls.__doc__, "__reduce__": __reduce__, "_arrowipc_class": cls})
        _MIXED[(cls, theirs)] = mixed
    return mixed


class ArrowInvalid(ArrowException, ValueError):
    """Malformed input or an invalid argument value."""

    pyarrow_name = "ArrowInvalid"


class ArrowTypeError(ArrowException, TypeError):
    """A value or object of the wrong type."""

    pyarrow_name = "ArrowTypeError"


class ArrowIndexError(ArrowException, IndexError):
    """An index out of range (a user-supplied index, never a malformed input)."""

    pyarrow_name = "ArrowIndexError"


class ArrowKeyError(ArrowException, KeyError):
    """A field name that does not exist."""

    pyarrow_name = "ArrowKeyError"

    def __str__(self) -> str:
        # the message as given, as pyarrow's ArrowKeyError (KeyError's own str quotes it)
        return Exception.__str__(self)


class ArrowNotImplementedError(ArrowException, NotImplementedError):
    """Something the format allows that arrowipc cannot do."""

    pyarrow_name = "ArrowNotImplementedError"


class ArrowIOError(ArrowException, OSError):
    """An I/O operation that cannot be done: a message of another type than the one asked for."""

    pyarrow_name: ClassVar[str | None] = None   # pyarrow's ArrowIOError is OSError itself


class ArrowTruncatedBody(ArrowIOError, ArrowInvalid):
    """Input that ends inside a message's body: a read that came back short (an OSError, what
    pyarrow raises there) and bytes that cannot be decoded (ArrowInvalid, a ValueError)."""

    pyarrow_name = "ArrowInvalid"           # not None, as its first base ArrowIOError


class ArrowCapacityError(ArrowException):
    """A resource bound (allocation, nesting depth, count) would be exceeded."""

    pyarrow_name = "ArrowCapacityError"
