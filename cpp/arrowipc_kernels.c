#define _GNU_SOURCE        /* process_vm_readv */
#include "arrowipc_kernels.h"
#include <string.h>

static inline uint64_t load_le64(const uint8_t* p) {
  uint64_t v;
  memcpy(&v, p, 8);
  return v; /* little-endian hosts only (x86-64, aarch64): bitmaps are LSB-first bytes */
}

int64_t arrowipc_count_set_bits(const uint8_t* data, int64_t bit_offset, int64_t length) {
  int64_t count = 0;
  if (length <= 0) return 0;
  const uint8_t* p = data + bit_offset / 8;
  int64_t bit = bit_offset % 8;
  /* leading partial byte */
  if (bit != 0) {
    int64_t take = 8 - bit < length ? 8 - bit : length;
    uint8_t mask = (uint8_t)(((1u << take) - 1u) << bit);
    count += __builtin_popcount(*p & mask);
    length -= take;
    p++;
  }
  while (length >= 64) {
    count += __builtin_popcountll(load_le64(p));
    p += 8;
    length -= 64;
  }
  while (length >= 8) {
    count += __builtin_popcount(*p);
    p++;
    length -= 8;
  }
  if (length > 0) count += __builtin_popcount(*p & ((1u << length) - 1u));
  return count;
}

void arrowipc_copy_bits(const uint8_t* src, int64_t src_offset, int64_t length, uint8_t* dst) {
  int64_t nbytes = (length + 7) / 8;
  if (length <= 0) return;
  const uint8_t* p = src + src_offset / 8;
  int shift = (int)(src_offset % 8);
  if (shift == 0) {
    memcpy(dst, p, (size_t)nbytes);
  } else {
    /* Each output byte takes the high bits of p[i] and the low bits of p[i + 1]; the last byte
     * must not read past the source bitmap's last needed byte. */
    int64_t src_last = (src_offset + length - 1) / 8 - src_offset / 8;
    for (int64_t i = 0; i < nbytes; i++) {
      uint8_t lo = (uint8_t)(p[i] >> shift);
      uint8_t hi = (i + 1 <= src_last) ? (uint8_t)(p[i + 1] << (8 - shift)) : 0;
      dst[i] = lo | hi;
    }
  }
  if (length % 8) dst[nbytes - 1] &= (uint8_t)((1u << (length % 8)) - 1u);
}

int64_t arrowipc_pack_bools(const uint8_t* values, int64_t n, uint8_t* dst) {
  int64_t count = 0, i = 0, o = 0;
  for (; i + 8 <= n; i += 8, o++) {
    uint8_t b = (uint8_t)((values[i] != 0) | (values[i + 1] != 0) << 1 | (values[i + 2] != 0) << 2 |
                          (values[i + 3] != 0) << 3 | (values[i + 4] != 0) << 4 |
                          (values[i + 5] != 0) << 5 | (values[i + 6] != 0) << 6 |
                          (values[i + 7] != 0) << 7);
    dst[o] = b;
    count += __builtin_popcount(b);
  }
  if (i < n) {
    uint8_t b = 0;
    for (int j = 0; i + j < n; j++) b |= (uint8_t)((values[i + j] != 0) << j);
    dst[o] = b;
    count += __builtin_popcount(b);
  }
  return count;
}

void arrowipc_unpack_bits(const uint8_t* src, int64_t offset, int64_t n, uint8_t* dst) {
  for (int64_t i = 0; i < n; i++) {
    int64_t b = offset + i;
    dst[i] = (src[b >> 3] >> (b & 7)) & 1;
  }
}

/* Offsets are checked a block of 256 bytes at a time, without a branch per offset: every
   offset and every difference to the offset before it, taken as unsigned, are or-ed together,
   and the block is good when the sign bit stays clear (an offset is negative, or two offsets
   that are both non-negative decrease, exactly when a sign bit is set; so a block that fails
   holds the first decrease after a good prefix, and a scan of it finds the same index a scan
   offset by offset would). The lines 8 KiB ahead are prefetched: offsets read from memory rather
   than the cache otherwise stall at every page, where the hardware prefetcher stops. Together
   about a third to two fifths less time than a plain scan, whether the offsets are cached or not. */
#define OFFSETS_BLOCK_BYTES 256
#define OFFSETS_PREFETCH_BYTES 8192
#define CHECK_OFFSETS(T, U)                                                             \
  const int64_t block = OFFSETS_BLOCK_BYTES / (int64_t)sizeof(T);                       \
  const int64_t ahead = OFFSETS_PREFETCH_BYTES / (int64_t)sizeof(T);                    \
  const int64_t per_line = 64 / (int64_t)sizeof(T);                                     \
  if (offsets[0] < 0) { *where = 0; return ARROWIPC_OFFSETS_NEGATIVE; }                 \
  int64_t i = 1;                                                                        \
  for (; i + block <= n + 1; i += block) {                                              \
    if (i + ahead + block <= n + 1) {                                                   \
      for (int64_t p = 0; p < block; p += per_line) __builtin_prefetch(offsets + i + ahead + p, 0, 3); \
    }                                                                                   \
    U signs = 0;                                                                        \
    for (int64_t k = 0; k < block; k++) {                                               \
      signs |= (U)offsets[i + k] | ((U)offsets[i + k] - (U)offsets[i + k - 1]);         \
    }                                                                                   \
    if (signs >> (8 * sizeof(U) - 1)) break;          /* the scan below finds where */  \
  }                                                                                     \
  for (; i <= n; i++) {                                                                 \
    if (offsets[i] < offsets[i - 1]) { *where = i; return ARROWIPC_OFFSETS_DECREASING; } \
  }                                                                                     \
  if ((int64_t)offsets[n] > data_size) { *where = n; return ARROWIPC_OFFSETS_OUT_OF_RANGE; } \
  return ARROWIPC_OFFSETS_OK;

int arrowipc_check_offsets32(const int32_t* offsets, int64_t n, int64_t data_size, int64_t* where) {
  CHECK_OFFSETS(int32_t, uint32_t)
}

int arrowipc_check_offsets64(const int64_t* offsets, int64_t n, int64_t data_size, int64_t* where) {
  CHECK_OFFSETS(int64_t, uint64_t)
}

void arrowipc_rebase_offsets32(const int32_t* src, int64_t n, int32_t base, int32_t* dst) {
  int32_t first = src[0];
  for (int64_t i = 0; i <= n; i++) dst[i] = src[i] - first + base;
}

void arrowipc_rebase_offsets64(const int64_t* src, int64_t n, int64_t base, int64_t* dst) {
  int64_t first = src[0];
  for (int64_t i = 0; i <= n; i++) dst[i] = src[i] - first + base;
}

static inline int bit_is_set(const uint8_t* bits, int64_t i) {
  return bits == NULL || ((bits[i >> 3] >> (i & 7)) & 1);
}

int arrowipc_check_views(const uint8_t* views, const uint8_t* validity, int64_t offset,
                         int64_t length, const int64_t* data_sizes, int64_t n_data, int64_t* where) {
  for (int64_t i = 0; i < length; i++) {
    if (!bit_is_set(validity, offset + i)) continue;
    const uint8_t* v = views + 16 * (offset + i);
    int32_t len, buf, off;
    memcpy(&len, v, 4);
    if (len < 0) { *where = i; return ARROWIPC_CHECK_NEGATIVE; }
    if (len <= 12) continue;
    memcpy(&buf, v + 8, 4);
    memcpy(&off, v + 12, 4);
    if (buf < 0 || (int64_t)buf >= n_data) { *where = i; return ARROWIPC_CHECK_BAD_BUFFER; }
    if (off < 0) { *where = i; return ARROWIPC_CHECK_NEGATIVE; }
    if ((int64_t)off > data_sizes[buf] || (int64_t)len > data_sizes[buf] - (int64_t)off) {
      *where = i; return ARROWIPC_CHECK_OUT_OF_RANGE;
    }
  }
  return ARROWIPC_CHECK_OK;
}

#define CHECK_LIST_VIEWS                                                          \
  for (int64_t i = 0; i < length; i++) {                                          \
    if (!bit_is_set(validity, offset + i)) continue;                              \
    int64_t o = offsets[offset + i], s = sizes[offset + i];                       \
    if (o < 0 || s < 0) { *where = i; return ARROWIPC_CHECK_NEGATIVE; }           \
    if (o > child_length || s > child_length - o) { *where = i; return ARROWIPC_CHECK_OUT_OF_RANGE; } \
  }                                                                               \
  return ARROWIPC_CHECK_OK;

int arrowipc_check_list_views32(const int32_t* offsets, const int32_t* sizes, const uint8_t* validity,
                                int64_t offset, int64_t length, int64_t child_length, int64_t* where) {
  CHECK_LIST_VIEWS
}

int arrowipc_check_list_views64(const int64_t* offsets, const int64_t* sizes, const uint8_t* validity,
                                int64_t offset, int64_t length, int64_t child_length, int64_t* where) {
  CHECK_LIST_VIEWS
}

int arrowipc_check_union(const int8_t* type_ids, const int32_t* value_offsets, int64_t offset,
                         int64_t length, const int8_t* child_for_code, const int64_t* child_lengths,
                         int64_t* where) {
  for (int64_t i = 0; i < length; i++) {
    int8_t code = type_ids[offset + i];
    if (code < 0 || child_for_code[code] < 0) { *where = i; return ARROWIPC_CHECK_UNDECLARED; }
    if (value_offsets != NULL) {
      int32_t o = value_offsets[offset + i];
      if (o < 0) { *where = i; return ARROWIPC_CHECK_NEGATIVE; }
      if ((int64_t)o >= child_lengths[child_for_code[code]]) { *where = i; return ARROWIPC_CHECK_OUT_OF_RANGE; }
    }
  }
  return ARROWIPC_CHECK_OK;
}

int arrowipc_check_indices(const uint8_t* indices, int width, int is_signed, const uint8_t* validity,
                           int64_t offset, int64_t length, int64_t bound, int64_t* where) {
  for (int64_t i = 0; i < length; i++) {
    if (!bit_is_set(validity, offset + i)) continue;
    const uint8_t* p = indices + (offset + i) * width;
    int64_t v;
    switch (width) {
      case 1: v = is_signed ? (int64_t)*(const int8_t*)p : (int64_t)*p; break;
      case 2: { int16_t s; uint16_t u; memcpy(&s, p, 2); memcpy(&u, p, 2); v = is_signed ? s : u; break; }
      case 4: { int32_t s; uint32_t u; memcpy(&s, p, 4); memcpy(&u, p, 4); v = is_signed ? s : (int64_t)u; break; }
      default: { int64_t s; memcpy(&s, p, 8); v = s;
                 if (!is_signed && s < 0) { *where = i; return ARROWIPC_CHECK_OUT_OF_RANGE; } break; }
    }
    if (v < 0) { *where = i; return ARROWIPC_CHECK_NEGATIVE; }
    if (v >= bound) { *where = i; return ARROWIPC_CHECK_OUT_OF_RANGE; }
  }
  return ARROWIPC_CHECK_OK;
}

int arrowipc_check_run_ends(const uint8_t* run_ends, int width, int64_t offset, int64_t length,
                            int64_t* where) {
  int64_t prev = 0;
  for (int64_t i = 0; i < length; i++) {
    const uint8_t* p = run_ends + (offset + i) * width;
    int64_t v;
    if (width == 2) { int16_t s; memcpy(&s, p, 2); v = s; }
    else if (width == 4) { int32_t s; memcpy(&s, p, 4); v = s; }
    else { memcpy(&v, p, 8); }
    if (v <= 0) { *where = i; return ARROWIPC_CHECK_NEGATIVE; }
    if (v <= prev) { *where = i; return ARROWIPC_CHECK_NOT_INCREASING; }
    prev = v;
  }
  return ARROWIPC_CHECK_OK;
}

/* ---- Full validation: value-level checks -------------------------------------------------- */

/* Well-formed UTF-8 (Unicode table 3-7): no overlongs, no surrogates, nothing above U+10FFFF.
 * ASCII runs are skipped eight bytes at a time. */
int arrowipc_utf8_valid(const uint8_t* p, int64_t n, int64_t* bad_byte) {
  int64_t i = 0;
  while (i < n) {
    if (i + 32 <= n) {
      uint64_t a, b, c, d;
      memcpy(&a, p + i, 8); memcpy(&b, p + i + 8, 8);
      memcpy(&c, p + i + 16, 8); memcpy(&d, p + i + 24, 8);
      if (((a | b | c | d) & 0x8080808080808080ULL) == 0) { i += 32; continue; }
    }
    if (i + 8 <= n) {
      uint64_t a;
      memcpy(&a, p + i, 8);
      if ((a & 0x8080808080808080ULL) == 0) { i += 8; continue; }
    }
    uint8_t c0 = p[i];
    if (c0 < 0x80) { i++; continue; }
    int64_t need;
    uint8_t lo = 0x80, hi = 0xBF;  /* allowed range of the second byte */
    if (c0 >= 0xC2 && c0 <= 0xDF) need = 1;
    else if (c0 >= 0xE0 && c0 <= 0xEF) {
      need = 2;
      if (c0 == 0xE0) lo = 0xA0;
      if (c0 == 0xED) hi = 0x9F;
    } else if (c0 >= 0xF0 && c0 <= 0xF4) {
      need = 3;
      if (c0 == 0xF0) lo = 0x90;
      if (c0 == 0xF4) hi = 0x8F;
    } else { *bad_byte = i; return 0; }
    if (need > n - i - 1) { *bad_byte = i; return 0; }
    if (p[i + 1] < lo || p[i + 1] > hi) { *bad_byte = i; return 0; }
    for (int64_t k = 2; k <= need; k++) {
      if ((p[i + k] & 0xC0) != 0x80) { *bad_byte = i; return 0; }
    }
    i += need + 1;
  }
  return 1;
}

/* One pass over the whole data span, then a check that every value starts on a character
 * boundary; only when that fails are the values checked one by one (nulls skipped) to find the
 * first bad one. */
#define CHECK_UTF8_OFFSETS(T)                                                          \
  int64_t bad = 0;                                                                     \
  if (length <= 0) return ARROWIPC_CHECK_OK;                                           \
  int64_t first = (int64_t)offsets[offset], last = (int64_t)offsets[offset + length];  \
  int fast_ok = arrowipc_utf8_valid(data + first, last - first, &bad);                 \
  if (fast_ok) {                                                                       \
    for (int64_t i = 1; i < length; i++) {                                             \
      int64_t o = (int64_t)offsets[offset + i];                                        \
      if (o < last && (data[o] & 0xC0) == 0x80) { fast_ok = 0; break; }                \
    }                                                                                  \
  }                                                                                    \
  if (fast_ok) return ARROWIPC_CHECK_OK;                                               \
  for (int64_t i = 0; i < length; i++) {                                               \
    if (!bit_is_set(validity, offset + i)) continue;                                   \
    int64_t a = (int64_t)offsets[offset + i], b = (int64_t)offsets[offset + i + 1];    \
    if (!arrowipc_utf8_valid(data + a, b - a, &bad)) {                                 \
      *where = i; *bad_byte = bad; return ARROWIPC_CHECK_INVALID_UTF8;                 \
    }                                                                                  \
  }                                                                                    \
  return ARROWIPC_CHECK_OK;

int arrowipc_check_utf8_offsets32(const int32_t* offsets, const uint8_t* data, const uint8_t* validity,
                                  int64_t offset, int64_t length, int64_t* where, int64_t* bad_byte) {
  CHECK_UTF8_OFFSETS(int32_t)
}

int arrowipc_check_utf8_offsets64(const int64_t* offsets, const uint8_t* data, const uint8_t* validity,
                                  int64_t offset, int64_t length, int64_t* where, int64_t* bad_byte) {
  CHECK_UTF8_OFFSETS(int64_t)
}

int arrowipc_check_view_values(const uint8_t* views, const uint8_t* validity, int64_t offset,
                               int64_t length, const uint8_t* const* data, int check_utf8,
                               int64_t* where, int64_t* bad_byte) {
  for (int64_t i = 0; i < length; i++) {
    if (!bit_is_set(validity, offset + i)) continue;
    const uint8_t* v = views + 16 * (offset + i);
    int32_t len, buf, off;
    const uint8_t* value;
    memcpy(&len, v, 4);
    if (len <= 12) {
      value = v + 4;
    } else {
      memcpy(&buf, v + 8, 4);
      memcpy(&off, v + 12, 4);
      value = data[buf] + off;
      if (memcmp(value, v + 4, 4) != 0) { *where = i; return ARROWIPC_CHECK_BAD_PREFIX; }
    }
    if (check_utf8 && !arrowipc_utf8_valid(value, len, bad_byte)) {
      *where = i; return ARROWIPC_CHECK_INVALID_UTF8;
    }
  }
  return ARROWIPC_CHECK_OK;
}

/* Magnitudes as eight 32-bit limbs, least significant first. */
static void pow10_limbs(int p, uint32_t out[8]) {
  memset(out, 0, 8 * sizeof(uint32_t));
  out[0] = 1;
  for (int k = 0; k < p; k++) {
    uint64_t carry = 0;
    for (int j = 0; j < 8; j++) {
      uint64_t x = (uint64_t)out[j] * 10u + carry;
      out[j] = (uint32_t)x;
      carry = x >> 32;
    }
  }
}

static int magnitude_below(const uint8_t* v, int byte_width, const uint32_t limit[8]) {
  uint32_t m[8];
  int nlimbs = byte_width / 4;
  for (int j = 0; j < nlimbs; j++) memcpy(&m[j], v + 4 * j, 4);
  int negative = (m[nlimbs - 1] >> 31) & 1;
  for (int j = nlimbs; j < 8; j++) m[j] = negative ? 0xFFFFFFFFu : 0u;
  if (negative) { /* two's complement negation over all eight limbs */
    uint64_t carry = 1;
    for (int j = 0; j < 8; j++) {
      uint64_t x = (uint64_t)(uint32_t)~m[j] + carry;
      m[j] = (uint32_t)x;
      carry = x >> 32;
    }
  }
  for (int j = 7; j >= 0; j--) {
    if (m[j] != limit[j]) return m[j] < limit[j];
  }
  return 0; /* equal to 10^precision: one digit too many */
}

int arrowipc_check_decimals(const uint8_t* values, int byte_width, int precision,
                            const uint8_t* validity, int64_t offset, int64_t length, int64_t* where) {
  uint32_t limit[8];
  if (precision < 0 || precision > 76) precision = 76;
  pow10_limbs(precision, limit);
  for (int64_t i = 0; i < length; i++) {
    if (!bit_is_set(validity, offset + i)) continue;
    if (!magnitude_below(values + (offset + i) * byte_width, byte_width, limit)) {
      *where = i; return ARROWIPC_CHECK_PRECISION;
    }
  }
  return ARROWIPC_CHECK_OK;
}

int arrowipc_check_int_range(const uint8_t* values, int width, const uint8_t* validity, int64_t offset,
                             int64_t length, int64_t lo, int64_t hi, int64_t multiple, int64_t* where) {
  for (int64_t i = 0; i < length; i++) {
    if (!bit_is_set(validity, offset + i)) continue;
    int64_t v;
    if (width == 4) { int32_t s; memcpy(&s, values + 4 * (offset + i), 4); v = s; }
    else { memcpy(&v, values + 8 * (offset + i), 8); }
    if (v < lo || v > hi) { *where = i; return ARROWIPC_CHECK_OUT_OF_RANGE; }
    if (multiple > 0 && v % multiple != 0) { *where = i; return ARROWIPC_CHECK_NOT_MULTIPLE; }
  }
  return ARROWIPC_CHECK_OK;
}

int arrowipc_check_union_offsets_monotonic(const int8_t* type_ids, const int32_t* value_offsets,
                                           int64_t offset, int64_t length, int64_t* where) {
  int32_t last[128];
  for (int k = 0; k < 128; k++) last[k] = 0;
  for (int64_t i = 0; i < length; i++) {
    int8_t code = type_ids[offset + i];
    int32_t o = value_offsets[offset + i];
    if (code < 0) continue; /* undeclared ids are reported by the structural check */
    if (o < last[code]) { *where = i; return ARROWIPC_CHECK_NOT_INCREASING; }
    last[code] = o;
  }
  return ARROWIPC_CHECK_OK;
}
void arrowipc_copy_bits_to(const uint8_t* src, int64_t src_offset, uint8_t* dst, int64_t dst_offset,
                           int64_t n) {
  for (int64_t i = 0; i < n; i++) {
    int bit = src == NULL ? 1 : (src[(src_offset + i) >> 3] >> ((src_offset + i) & 7)) & 1;
    int64_t d = dst_offset + i;
    if (bit)
      dst[d >> 3] |= (uint8_t)(1u << (d & 7));
    else
      dst[d >> 3] &= (uint8_t)~(1u << (d & 7));
  }
}

#include <pthread.h>

typedef struct {
  uint8_t* dst;
  const uint8_t* const* srcs;
  const int64_t* sizes;
  int64_t n;
  int64_t begin, end;        /* the output byte range this thread copies */
} gather_slice;

static void* gather_run(void* arg) {
  gather_slice* s = (gather_slice*)arg;
  int64_t pos = 0;
  for (int64_t i = 0; i < s->n && pos < s->end; i++) {
    int64_t a = pos > s->begin ? pos : s->begin;
    int64_t b = pos + s->sizes[i] < s->end ? pos + s->sizes[i] : s->end;
    if (a < b) memcpy(s->dst + a, s->srcs[i] + (a - pos), (size_t)(b - a));
    pos += s->sizes[i];
  }
  return NULL;
}

void arrowipc_gather(uint8_t* dst, const uint8_t* const* srcs, const int64_t* sizes, int64_t n,
                     int threads) {
  int64_t total = 0;
  for (int64_t i = 0; i < n; i++) total += sizes[i];
  if (threads > 8) threads = 8;
  if (threads < 1 || total < threads) threads = 1;
  gather_slice slices[8];
  pthread_t ids[8];
  int started = 0;
  for (int t = 0; t < threads; t++) {
    gather_slice s = {dst, srcs, sizes, n, total / threads * t,
                      t == threads - 1 ? total : total / threads * (t + 1)};
    slices[t] = s;
  }
  for (int t = 1; t < threads; t++) {
    if (pthread_create(&ids[started], NULL, gather_run, &slices[t]) == 0) started++;
    else gather_run(&slices[t]);       /* no thread: copy that slice here */
  }
  gather_run(&slices[0]);
  for (int t = 0; t < started; t++) pthread_join(ids[t], NULL);
}

/* -- reading another process's memory (Dissociated IPC peer memory) ---------------------------- */

#include <errno.h>
#ifdef __linux__
#include <sys/uio.h>
#endif

#define PEER_IOV_MAX 1024      /* UIO_MAXIOV: the most iovecs one process_vm_readv takes */

#ifndef __linux__
struct iovec {
  void* iov_base;
  size_t iov_len;
};
#endif

typedef struct {
  int pid;
  const arrowipc_peer_region* regions;
  int64_t n;
  uint8_t* dst;
  int64_t begin, end;         /* the byte range (in the order of the regions) this slice reads */
  int64_t result;             /* bytes read, or -errno */
} peer_slice;

/* Read the slice's bytes with as few process_vm_readv calls as the iovec limit allows. */
static void* peer_run(void* arg) {
  peer_slice* s = (peer_slice*)arg;
  struct iovec local[PEER_IOV_MAX], remote[PEER_IOV_MAX];
  int64_t start = 0, done = 0;       /* start: where region i begins in the byte order */
  int64_t i = 0;
  s->result = 0;
  while (i < s->n && start < s->end) {
    int k = 0;
    size_t want = 0;
    for (; i < s->n && start < s->end && k < PEER_IOV_MAX; i++) {
      const arrowipc_peer_region* r = &s->regions[i];
      int64_t a = start > s->begin ? start : s->begin;
      int64_t b = start + r->length < s->end ? start + r->length : s->end;
      if (a < b) {
        local[k].iov_base = s->dst + r->dest + (a - start);
        local[k].iov_len = (size_t)(b - a);
        remote[k].iov_base = (void*)(uintptr_t)(r->address + (uint64_t)(a - start));
        remote[k].iov_len = (size_t)(b - a);
        want += (size_t)(b - a);
        k++;
      }
      start += r->length;
    }
    if (k == 0) continue;
#ifdef __linux__
    ssize_t got = process_vm_readv(s->pid, local, (unsigned long)k, remote, (unsigned long)k, 0);
#else
    ssize_t got = -1;
    errno = ENOSYS;
#endif
    if (got < 0) {
      s->result = -(int64_t)errno;
      return NULL;
    }
    if ((size_t)got != want) {               /* the peer unmapped part of a region */
      s->result = -EFAULT;
      return NULL;
    }
    done += got;
  }
  s->result = done;
  return NULL;
}

int64_t arrowipc_peer_read(int pid, const arrowipc_peer_region* regions, int64_t n, uint8_t* dst,
                           int threads) {
  int64_t total = 0;
  for (int64_t i = 0; i < n; i++) total += regions[i].length;
  if (threads > 8) threads = 8;
  if (threads < 1 || total < threads) threads = 1;
  peer_slice slices[8];
  pthread_t ids[8];
  int started[8] = {0};
  for (int t = 0; t < threads; t++) {
    peer_slice s = {pid, regions, n, dst, total / threads * t,
                    t == threads - 1 ? total : total / threads * (t + 1), 0};
    slices[t] = s;
  }
  for (int t = 1; t < threads; t++) {
    if (pthread_create(&ids[t], NULL, peer_run, &slices[t]) == 0) started[t] = 1;
    else peer_run(&slices[t]);         /* no thread: read that slice here */
  }
  peer_run(&slices[0]);
  int64_t done = 0, err = 0;
  for (int t = 0; t < threads; t++) {
    if (t > 0 && started[t]) pthread_join(ids[t], NULL);
    if (slices[t].result < 0 && err == 0) err = slices[t].result;
    else if (slices[t].result >= 0) done += slices[t].result;
  }
  return err ? err : done;
}
