# cython: language_level=3
"""The layout kinds of kinds.pxd, for Python (arrowipc.types.Kind)."""
from arrowipc._core.kinds cimport *

KINDS = {
    "NULL": K_NULL, "BOOL": K_BOOL, "FIXED": K_FIXED, "BINARY": K_BINARY,
    "LARGE_BINARY": K_LARGE_BINARY, "VIEW": K_VIEW, "LIST": K_LIST, "LARGE_LIST": K_LARGE_LIST,
    "LIST_VIEW": K_LIST_VIEW, "LARGE_LIST_VIEW": K_LARGE_LIST_VIEW,
    "FIXED_SIZE_LIST": K_FIXED_SIZE_LIST, "STRUCT": K_STRUCT, "SPARSE_UNION": K_SPARSE_UNION,
    "DENSE_UNION": K_DENSE_UNION, "RUN_END_ENCODED": K_REE, "DICTIONARY": K_DICTIONARY,
}
