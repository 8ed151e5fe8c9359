# The Arrow C data / C stream interface structs (cpp/arrowipc_abi.h) and the cdef entry points
# other Cython modules may use to export or import them without going through capsules.
from libc.stdint cimport int64_t

from arrowipc._core.arraydata cimport ArrayData

cdef extern from "arrowipc_abi.h":
    int ARROW_FLAG_DICTIONARY_ORDERED
    int ARROW_FLAG_NULLABLE
    int ARROW_FLAG_MAP_KEYS_SORTED

    struct ArrowSchema:
        const char* format
        const char* name
        const char* metadata
        int64_t flags
        int64_t n_children
        ArrowSchema** children
        ArrowSchema* dictionary
        void (*release)(ArrowSchema*) noexcept nogil
        void* private_data

    struct ArrowArray:
        int64_t length
        int64_t null_count
        int64_t offset
        int64_t n_buffers
        int64_t n_children
        const void** buffers
        ArrowArray** children
        ArrowArray* dictionary
        void (*release)(ArrowArray*) noexcept nogil
        void* private_data

    struct ArrowArrayStream:
        int (*get_schema)(ArrowArrayStream*, ArrowSchema* out) noexcept nogil
        int (*get_next)(ArrowArrayStream*, ArrowArray* out) noexcept nogil
        const char* (*get_last_error)(ArrowArrayStream*) noexcept nogil
        void (*release)(ArrowArrayStream*) noexcept nogil
        void* private_data


# Fill `out` (owned by the caller, release == NULL on entry) with the schema a SchemaNode describes.
cdef int export_schema_into(object node, ArrowSchema* out) except -1
# Fill `out` with a zero-copy ArrowArray over `data`; its release drops the reference to `data`.
cdef int export_array_into(ArrayData data, ArrowArray* out) except -1
# The SchemaNode of a schema; the schema is only read, never moved.
cdef object import_schema_struct(const ArrowSchema* schema)
# Move `*src` into a new owner and return the ArrayData viewing it (src->release is NULL after).
cdef ArrayData import_array_struct(ArrowArray* src, object type)
