# Physical layout families: the single definition. arrowipc.types.Kind reads these values from
# arrowipc._core.kinds, and every Cython module switches on them through this file.
cdef enum:
    K_NULL = 0
    K_BOOL = 1
    K_FIXED = 2             # fixed-width values: ints, floats, decimals, temporal, intervals, fsb
    K_BINARY = 3            # int32 offsets + data
    K_LARGE_BINARY = 4      # int64 offsets + data
    K_VIEW = 5              # 16-byte views + variadic data buffers
    K_LIST = 6              # int32 offsets + child (also map)
    K_LARGE_LIST = 7
    K_LIST_VIEW = 8         # int32 offsets + int32 sizes + child
    K_LARGE_LIST_VIEW = 9
    K_FIXED_SIZE_LIST = 10
    K_STRUCT = 11
    K_SPARSE_UNION = 12
    K_DENSE_UNION = 13
    K_REE = 14              # run-end encoded: run ends and values children
    K_DICTIONARY = 15       # the index type's layout; values live in the dictionary
