from libc.stdint cimport uint8_t, int32_t, int64_t

cdef extern from "arrowipc_kernels.h" nogil:
    int64_t arrowipc_count_set_bits(const uint8_t* data, int64_t bit_offset, int64_t length)
    void arrowipc_copy_bits(const uint8_t* src, int64_t src_offset, int64_t length, uint8_t* dst)
    int64_t arrowipc_pack_bools(const uint8_t* values, int64_t n, uint8_t* dst)
    void arrowipc_unpack_bits(const uint8_t* src, int64_t offset, int64_t n, uint8_t* dst)
    int ARROWIPC_OFFSETS_OK, ARROWIPC_OFFSETS_NEGATIVE, ARROWIPC_OFFSETS_DECREASING, ARROWIPC_OFFSETS_OUT_OF_RANGE
    int arrowipc_check_offsets32(const int32_t* offsets, int64_t n, int64_t data_size, int64_t* where)
    int arrowipc_check_offsets64(const int64_t* offsets, int64_t n, int64_t data_size, int64_t* where)
    void arrowipc_rebase_offsets32(const int32_t* src, int64_t n, int32_t base, int32_t* dst)
    void arrowipc_rebase_offsets64(const int64_t* src, int64_t n, int64_t base, int64_t* dst)
