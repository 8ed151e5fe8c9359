/* LZ4 frame and ZSTD through shared libraries loaded at run time (dlopen): the codec packages'
 * extension modules (which export the libraries' C API) or the system libraries. The calls run
 * in C without the GIL and write straight into buffers arrowipc allocated. Every function returns
 * a status; the Cython layer turns failures into exceptions. */
#ifndef ARROWIPC_CODECS_H
#define ARROWIPC_CODECS_H
#include <stdint.h>

#define ARROWIPC_CODEC_LZ4_FRAME 0
#define ARROWIPC_CODEC_ZSTD 1

#define ARROWIPC_CODEC_OK 0
#define ARROWIPC_CODEC_UNAVAILABLE 1
#define ARROWIPC_CODEC_CORRUPT 2      /* the library rejected the input */
#define ARROWIPC_CODEC_TOO_LONG 3     /* decodes to more than the expected size */
#define ARROWIPC_CODEC_TOO_SHORT 4    /* ends before the expected size */
#define ARROWIPC_CODEC_TRAILING 5     /* bytes left after the frame */
#define ARROWIPC_CODEC_NO_SPACE 6     /* compressed output does not fit */
#define ARROWIPC_CODEC_NO_MEMORY 7    /* a codec context could not be allocated */

/* Load a codec from the shared library at `path`; returns 1 when its functions resolved. */
int arrowipc_codec_load(int codec, const char* path);
int arrowipc_codec_available(int codec);
/* The loaded library's version number (major*10000 + minor*100 + patch for ZSTD; LZ4F's
 * frame API version for LZ4), 0 when not loaded. */
unsigned arrowipc_codec_version(int codec);

/* Codec contexts one thread reuses across calls (created on first use; free with
 * arrowipc_codec_contexts_free). Zero-initialise before first use. */
typedef struct { void* zstd_cctx; void* zstd_dctx; } arrowipc_codec_contexts;
void arrowipc_codec_contexts_free(arrowipc_codec_contexts* c);

/* Decompress src into exactly dst_len bytes at dst. */
int arrowipc_decompress(arrowipc_codec_contexts* c, int codec, const uint8_t* src,
                        int64_t src_len, uint8_t* dst, int64_t dst_len, const char** error);

/* An upper bound of the compressed size of n bytes (0 when unavailable). */
int64_t arrowipc_compress_bound(int codec, int64_t n);

/* Compress src into dst (capacity cap); *out_len receives the compressed size. */
int arrowipc_compress(arrowipc_codec_contexts* c, int codec, int level, const uint8_t* src,
                      int64_t n, uint8_t* dst, int64_t cap, int64_t* out_len, const char** error);

/* Count what src decompresses to, through a small scratch buffer, stopping past `limit`
 * (ARROWIPC_CODEC_TOO_LONG). Used before allocating when a claimed size is implausibly large
 * for its input, so memory follows the data rather than the claim. */
int arrowipc_decompressed_size(int codec, const uint8_t* src, int64_t src_len, int64_t limit,
                               int64_t* size, const char** error);

/* A unit of codec work for the parallel runner. */
typedef struct {
  int compress;            /* 1: compress src into dst; 0: decompress into exactly dst_len */
  int codec, level;
  const uint8_t* src;
  int64_t src_len;
  uint8_t* dst;
  int64_t dst_len;         /* decompress: expected size; compress: capacity */
  int64_t out_len;         /* compress: produced size */
  int status;
  const char* error;
} arrowipc_codec_task;

/* Run the tasks on up to `threads` threads (the caller's thread included), largest first. The
 * calling thread keeps its codec contexts from one run to the next (freed when it exits). */
void arrowipc_codec_run(arrowipc_codec_task* tasks, int64_t n, int threads);

/* One body buffer of an IPC message to pack (arrowipc_pack). */
typedef struct {
  const uint8_t* src;
  int64_t src_len;
  int compress;            /* in: 1 to try the codec on it; 0 to store it raw (or empty) */
  int64_t at;              /* out: where its length prefix starts in the block; -1: not there */
  int64_t len;             /* out: its body bytes before padding: 8 + the frame when compressed,
                              8 + src_len when stored raw, 0 when empty */
} arrowipc_pack_item;

/* Bytes of block arrowipc_pack may need for these items (-1: the codec is not loaded). */
int64_t arrowipc_pack_capacity(int codec, const arrowipc_pack_item* items, int64_t n,
                               int64_t alignment);

/* Compress the items marked `compress` into `block` (at least arrowipc_pack_capacity bytes),
 * each as the IPC format stores a compressed buffer: its uncompressed length (int64), the frame,
 * then zeros to `alignment` (a power of two). An item whose frame is not smaller than it, or
 * saves less than `min_savings` of it (when min_savings >= 0), is left to be stored raw
 * (at = -1). On one thread the frames are written back to back in order (consecutive compressed
 * items are one run of the block); on more, each at its own place. *used receives the block's
 * bytes in use; on failure, *failed the item's index and *error the library's message. */
int arrowipc_pack(int codec, int level, double min_savings, int64_t alignment,
                  arrowipc_pack_item* items, int64_t n, uint8_t* block, int64_t capacity,
                  int threads, int64_t* used, int64_t* failed, const char** error);
#endif
