"""arrowipc.scalar, kept importable: Scalar and scalar() now live with the arrays they are one
value of, in arrowipc/array.py."""
from .array import Scalar, scalar

__all__ = ["Scalar", "scalar"]
