from libc.stdint cimport int64_t

cdef class ArrayData:
    cdef public object type          # arrowipc.types.DataType
    cdef public int64_t length
    cdef public int64_t offset       # in elements (bits for bitmaps)
    cdef public int64_t null_count   # -1: not computed yet
    cdef public list buffers         # Buffer or None (an absent validity bitmap)
    cdef public list children        # ArrayData
    cdef public object dictionary    # ArrayData of the dictionary values, or None

cdef ArrayData make_array_data(object type, int64_t length, int64_t offset, int64_t null_count,
                               list buffers, list children, object dictionary)

# Leave a container of acyclic objects (Buffers, ArrayData, None) out of the cyclic garbage
# collector's traversals: ArrayData and Buffer are already outside it (no_gc), and a batch
# carries a dozen such lists, which otherwise dominate the collector's work on reads of many
# small batches. The container must never come to hold anything that can form a cycle.
cdef void untrack(object container) noexcept
