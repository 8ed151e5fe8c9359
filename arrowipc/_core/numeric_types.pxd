# The C value types the kernels specialize over, declared once for every kernel module.
from libc.stdint cimport (int8_t, int16_t, int32_t, int64_t, uint8_t, uint16_t, uint32_t,
                          uint64_t)

ctypedef fused signed_t:
    int8_t
    int16_t
    int32_t
    int64_t

ctypedef fused unsigned_t:
    uint8_t
    uint16_t
    uint32_t
    uint64_t

ctypedef fused integer_t:
    signed_t
    unsigned_t

ctypedef fused floating_t:
    float
    double

ctypedef fused numeric_t:
    integer_t
    floating_t

# A second numeric parameter, specialized independently of numeric_t (a cast's target type).
ctypedef fused numeric_out_t:
    integer_t
    floating_t

# The widths of list and binary offsets.
ctypedef fused offset_t:
    int32_t
    int64_t
