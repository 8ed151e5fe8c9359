from libc.stdint cimport int64_t

cdef class ArrayData:
    cdef public object type          # arrowipc.types.DataType
    cdef public int64_t length
    cdef public int64_t offset       # in elements (bits for bitmaps)
    cdef public int64_t null_count   # -1: not computed yet
    cdef public list buffers         # Buffer or None (an absent validity bitmap)
    cdef public list children        # ArrayData
    cdef public object dictionary    # ArrayData of the dictionary values, or None

# The fields of a record batch (arrowipc.table.RecordBatch derives from this): a C struct, so a
# reader making thousands of small batches fills them without a Python attribute lookup each.
cdef class RecordBatchFields:
    cdef public object schema        # arrowipc.types.Schema
    cdef public object _cols         # list of ArrayData, or None until a lazy batch assembles
    cdef public object num_rows      # int (an object: read far more often than written)
    cdef public object _pending      # O(n) checks to run before first access, or None
    cdef public object _where        # how errors name the batch
    cdef public object _lazy         # the decoded header and body of a lazy batch, or None

cdef ArrayData make_array_data(object type, int64_t length, int64_t offset, int64_t null_count,
                               list buffers, list children, object dictionary)

# Leave a container of acyclic objects (Buffers, ArrayData, None) out of the cyclic garbage
# collector's traversals: ArrayData and Buffer are already outside it (no_gc), and a batch
# carries a dozen such lists, which otherwise dominate the collector's work on reads of many
# small batches. The container must never come to hold anything that can form a cycle.
cdef void untrack(object container) noexcept
