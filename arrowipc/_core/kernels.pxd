from libc.stdint cimport uint8_t, int8_t, int32_t, int64_t

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
    int ARROWIPC_CHECK_OK, ARROWIPC_CHECK_NEGATIVE, ARROWIPC_CHECK_OUT_OF_RANGE, ARROWIPC_CHECK_BAD_BUFFER
    int ARROWIPC_CHECK_NOT_INCREASING, ARROWIPC_CHECK_UNDECLARED
    int arrowipc_check_views(const uint8_t* views, const uint8_t* validity, int64_t offset, int64_t length, const int64_t* data_sizes, int64_t n_data, int64_t* where)
    int arrowipc_check_list_views32(const int32_t* offsets, const int32_t* sizes, const uint8_t* validity, int64_t offset, int64_t length, int64_t child_length, int64_t* where)
    int arrowipc_check_list_views64(const int64_t* offsets, const int64_t* sizes, const uint8_t* validity, int64_t offset, int64_t length, int64_t child_length, int64_t* where)
    int arrowipc_check_union(const int8_t* type_ids, const int32_t* value_offsets, int64_t offset, int64_t length, const int8_t* child_for_code, const int64_t* child_lengths, int64_t* where)
    int arrowipc_check_indices(const uint8_t* indices, int width, int is_signed, const uint8_t* validity, int64_t offset, int64_t length, int64_t bound, int64_t* where)
    int arrowipc_check_run_ends(const uint8_t* run_ends, int width, int64_t offset, int64_t length, int64_t* where)
    # full validation (value-level checks)
    int ARROWIPC_CHECK_INVALID_UTF8, ARROWIPC_CHECK_PRECISION, ARROWIPC_CHECK_BAD_PREFIX, ARROWIPC_CHECK_NOT_MULTIPLE
    int arrowipc_utf8_valid(const uint8_t* p, int64_t n, int64_t* bad_byte)
    int arrowipc_check_utf8_offsets32(const int32_t* offsets, const uint8_t* data, const uint8_t* validity, int64_t offset, int64_t length, int64_t* where, int64_t* bad_byte)
    int arrowipc_check_utf8_offsets64(const int64_t* offsets, const uint8_t* data, const uint8_t* validity, int64_t offset, int64_t length, int64_t* where, int64_t* bad_byte)
    int arrowipc_check_view_values(const uint8_t* views, const uint8_t* validity, int64_t offset, int64_t length, const uint8_t* const* data, int check_utf8, int64_t* where, int64_t* bad_byte)
    int arrowipc_check_decimals(const uint8_t* values, int byte_width, int precision, const uint8_t* validity, int64_t offset, int64_t length, int64_t* where)
    int arrowipc_check_int_range(const uint8_t* values, int width, const uint8_t* validity, int64_t offset, int64_t length, int64_t lo, int64_t hi, int64_t multiple, int64_t* where)
    int arrowipc_check_union_offsets_monotonic(const int8_t* type_ids, const int32_t* value_offsets, int64_t offset, int64_t length, int64_t* where)
    void arrowipc_copy_bits_to(const uint8_t* src, int64_t src_offset, uint8_t* dst, int64_t dst_offset, int64_t n)
    void arrowipc_gather(uint8_t* dst, const uint8_t* const* srcs, const int64_t* sizes, int64_t n, int threads)
