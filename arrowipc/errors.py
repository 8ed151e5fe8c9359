"""The exception taxonomy: one base, one class per kind of failure.

ArrowInvalid is raised for every malformed input, whichever layer finds it; messages say what was
expected, what was found, and where (field, buffer index or byte offset).
"""


__all__ = ["ArrowCapacityError", "ArrowException", "ArrowIndexError", "ArrowInvalid",
           "ArrowIOError", "ArrowKeyError", "ArrowNotImplementedError", "ArrowTruncatedBody",
           "ArrowTypeError"]


class ArrowException(Exception):
    """Base of every exception arrowipc raises on purpose."""


class ArrowInvalid(ArrowException, ValueError):
    """Malformed input or an invalid argument value."""


class ArrowTypeError(ArrowException, TypeError):
    """A value or object of the wrong type."""


class ArrowIndexError(ArrowException, IndexError):
    """An index out of range (a user-supplied index, never a malformed input)."""


class ArrowKeyError(ArrowException, KeyError):
    """A field name that does not exist."""

    def __str__(self) -> str:
        # the message as given, as pyarrow's ArrowKeyError (KeyError's own str quotes it)
        return Exception.__str__(self)


class ArrowNotImplementedError(ArrowException, NotImplementedError):
    """Something the format allows that arrowipc cannot do."""


class ArrowIOError(ArrowException, OSError):
    """An I/O operation that cannot be done: a message of another type than the one asked for."""


class ArrowTruncatedBody(ArrowIOError, ArrowInvalid):
    """Input that ends inside a message's body: a read that came back short (an OSError, what
    pyarrow raises there) and bytes that cannot be decoded (ArrowInvalid, a ValueError)."""


class ArrowCapacityError(ArrowException):
    """A resource bound (allocation, nesting depth, count) would be exceeded."""
