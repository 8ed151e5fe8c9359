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
