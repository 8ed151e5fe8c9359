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


/* Content checks for the remaining layouts. Each returns 0 or a positive code and sets *where to
 * the offending slot; validity may be NULL (all valid) and is read at bit (offset + i). */
#define ARROWIPC_CHECK_OK 0
#define ARROWIPC_CHECK_NEGATIVE 1      /* a negative length, size, offset or index */
#define ARROWIPC_CHECK_OUT_OF_RANGE 2  /* a range or index past the end of its target */
#define ARROWIPC_CHECK_BAD_BUFFER 3    /* a view naming a variadic buffer that does not exist */
#define ARROWIPC_CHECK_NOT_INCREASING 4
#define ARROWIPC_CHECK_UNDECLARED 5    /* a union type id not declared by the type */

/* 16-byte binary views: inline when length <= 12, else (prefix, buffer index, offset). */
int arrowipc_check_views(const uint8_t* views, const uint8_t* validity, int64_t offset,
                         int64_t length, const int64_t* data_sizes, int64_t n_data, int64_t* where);
/* List views: offsets[i] >= 0, sizes[i] >= 0 and offsets[i] + sizes[i] <= child_length. */
int arrowipc_check_list_views32(const int32_t* offsets, const int32_t* sizes, const uint8_t* validity,
                                int64_t offset, int64_t length, int64_t child_length, int64_t* where);
int arrowipc_check_list_views64(const int64_t* offsets, const int64_t* sizes, const uint8_t* validity,
                                int64_t offset, int64_t length, int64_t child_length, int64_t* where);
/* Union type ids: child_for_code[code] >= 0 for every id; for dense unions also
 * 0 <= value_offsets[i] < child_lengths[child]. child_for_code has 128 entries. */
int arrowipc_check_union(const int8_t* type_ids, const int32_t* value_offsets, int64_t offset,
                         int64_t length, const int8_t* child_for_code, const int64_t* child_lengths,
                         int64_t* where);
/* Integer indices in [0, bound) for valid slots; width is 1, 2, 4 or 8; is_signed selects sign. */
int arrowipc_check_indices(const uint8_t* indices, int width, int is_signed, const uint8_t* validity,
                           int64_t offset, int64_t length, int64_t bound, int64_t* where);
/* Run ends: positive, strictly increasing; width 2, 4 or 8. */
int arrowipc_check_run_ends(const uint8_t* run_ends, int width, int64_t offset, int64_t length,
                            int64_t* where);

/* ---- Full validation: value-level checks (see arrowipc/_core/content_checks.pyx) ----------- */
#define ARROWIPC_CHECK_INVALID_UTF8 6
#define ARROWIPC_CHECK_PRECISION 7      /* a decimal value with more digits than its precision */
#define ARROWIPC_CHECK_BAD_PREFIX 8     /* a binary view whose prefix differs from its data */
#define ARROWIPC_CHECK_NOT_MULTIPLE 9   /* a value that is not a multiple of the required unit */

/* 1 when p[0..n) is well-formed UTF-8; else 0 with *bad_byte set to the first bad byte. */
int arrowipc_utf8_valid(const uint8_t* p, int64_t n, int64_t* bad_byte);
/* UTF-8 of every valid value of a 32/64-bit offset layout (offsets already checked): slot in
 * *where, byte offset inside that value in *bad_byte. */
int arrowipc_check_utf8_offsets32(const int32_t* offsets, const uint8_t* data, const uint8_t* validity,
                                  int64_t offset, int64_t length, int64_t* where, int64_t* bad_byte);
int arrowipc_check_utf8_offsets64(const int64_t* offsets, const uint8_t* data, const uint8_t* validity,
                                  int64_t offset, int64_t length, int64_t* where, int64_t* bad_byte);
/* Views (already bounds-checked): UTF-8 of each valid value when check_utf8, and for views longer
 * than 12 bytes that the 4-byte prefix equals the first 4 bytes of the data. */
int arrowipc_check_view_values(const uint8_t* views, const uint8_t* validity, int64_t offset,
                               int64_t length, const uint8_t* const* data, int check_utf8,
                               int64_t* where, int64_t* bad_byte);
/* Decimal values (little-endian two's complement of 4, 8, 16 or 32 bytes) with
 * |value| < 10^precision. */
int arrowipc_check_decimals(const uint8_t* values, int byte_width, int precision,
                            const uint8_t* validity, int64_t offset, int64_t length, int64_t* where);
/* Integer values (width 4 or 8, signed) in [lo, hi] and, when multiple > 0, multiples of it. */
int arrowipc_check_int_range(const uint8_t* values, int width, const uint8_t* validity, int64_t offset,
                             int64_t length, int64_t lo, int64_t hi, int64_t multiple, int64_t* where);
/* Dense union offsets (already in range) never decrease within one child. */
int arrowipc_check_union_offsets_monotonic(const int8_t* type_ids, const int32_t* value_offsets,
                                           int64_t offset, int64_t length, int64_t* where);
/* Copy n bits from src (starting at bit src_offset) to dst (starting at bit dst_offset); the
 * other bits of dst are kept. src may be NULL, meaning all bits set. */
void arrowipc_copy_bits_to(const uint8_t* src, int64_t src_offset, uint8_t* dst, int64_t dst_offset,
                           int64_t n);

/* Copy the n sources (sizes[i] bytes each) back to back into dst, the output split into
 * `threads` equal byte ranges copied in parallel (the calling thread takes the first). */
void arrowipc_gather(uint8_t* dst, const uint8_t* const* srcs, const int64_t* sizes, int64_t n,
                     int threads);

/* One region of another process's memory and where it goes in the destination. */
typedef struct {
  uint64_t address;
  int64_t length;
  int64_t dest;
} arrowipc_peer_region;

/* Read every region of process `pid`'s memory into dst + region.dest with process_vm_readv,
 * the bytes split evenly over `threads` threads (at most 8). The caller has bounds-checked each
 * dest + length against dst. Returns the bytes read, or -errno (-EFAULT: a short read). */
int64_t arrowipc_peer_read(int pid, const arrowipc_peer_region* regions, int64_t n, uint8_t* dst,
                           int threads);
#endif
