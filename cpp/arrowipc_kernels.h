/* Tight loops over validity bitmaps and offset buffers. Pure C, no Python: every function returns
 * a result or a status code, and the Cython layer turns codes into exceptions. */
#ifndef ARROWIPC_KERNELS_H
#define ARROWIPC_KERNELS_H
#include <stdint.h>

/* Number of set bits in bits [bit_offset, bit_offset + length) of data. */
int64_t arrowipc_count_set_bits(const uint8_t* data, int64_t bit_offset, int64_t length);

/* Copy bits [src_offset, src_offset + length) to dst starting at bit 0; trailing bits of the last
 * byte are zeroed. dst must hold (length + 7) / 8 bytes. */
void arrowipc_copy_bits(const uint8_t* src, int64_t src_offset, int64_t length, uint8_t* dst);

/* Pack n bytes (non-zero = true) into a bitmap at bit 0; returns the number of set bits. */
int64_t arrowipc_pack_bools(const uint8_t* values, int64_t n, uint8_t* dst);

/* Unpack bits [offset, offset + n) into n bytes of 0 or 1. */
void arrowipc_unpack_bits(const uint8_t* src, int64_t offset, int64_t n, uint8_t* dst);

/* Offset checks: offsets[0..n] (n + 1 values) must be non-negative, non-decreasing and end at or
 * before data_size. Return 0, or a code below with *where set to the offending index. */
#define ARROWIPC_OFFSETS_OK 0
#define ARROWIPC_OFFSETS_NEGATIVE 1
#define ARROWIPC_OFFSETS_DECREASING 2
#define ARROWIPC_OFFSETS_OUT_OF_RANGE 3
int arrowipc_check_offsets32(const int32_t* offsets, int64_t n, int64_t data_size, int64_t* where);
int arrowipc_check_offsets64(const int64_t* offsets, int64_t n, int64_t data_size, int64_t* where);

/* dst[i] = src[i] - src[0] + base for i in [0, n]: rebase a sliced offset buffer to start at
 * `base` (0 when writing a slice, the running total when concatenating). The caller checks that
 * the result fits the offset width. */
void arrowipc_rebase_offsets32(const int32_t* src, int64_t n, int32_t base, int32_t* dst);
void arrowipc_rebase_offsets64(const int64_t* src, int64_t n, int64_t base, int64_t* dst);

#endif
