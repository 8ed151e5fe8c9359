#include "arrowipc_codecs.h"
#include <dlfcn.h>
#include <stddef.h>
#include <string.h>

/* The few entry points used, declared from the libraries' public, stable C APIs. */
typedef struct LZ4F_dctx_s LZ4F_dctx;
typedef struct {
  int blockSizeID, blockMode, contentChecksumFlag, frameType;
  unsigned long long contentSize;
  unsigned dictID;
  int blockChecksumFlag;
} lz4f_frame_info;
typedef struct {
  lz4f_frame_info frameInfo;
  int compressionLevel;
  unsigned autoFlush, favorDecSpeed;
  unsigned reserved[3];
} lz4f_preferences;

static struct {
  size_t (*create_dctx)(LZ4F_dctx**, unsigned);
  size_t (*free_dctx)(LZ4F_dctx*);
  size_t (*decompress)(LZ4F_dctx*, void*, size_t*, const void*, size_t*, const void*);
  unsigned (*is_error)(size_t);
  const char* (*error_name)(size_t);
  size_t (*compress_bound)(size_t, const lz4f_preferences*);
  size_t (*compress_frame)(void*, size_t, const void*, size_t, const lz4f_preferences*);
  unsigned (*version)(void);
  int loaded;
} lz4;

static struct {
  size_t (*decompress_dctx)(void*, void*, size_t, const void*, size_t);
  size_t (*compress_cctx)(void*, void*, size_t, const void*, size_t, int);
  void* (*create_cctx)(void);
  size_t (*free_cctx)(void*);
  void* (*create_dctx)(void);
  size_t (*free_dctx)(void*);
  unsigned (*version)(void);
  size_t (*compress_bound)(size_t);
  unsigned (*is_error)(size_t);
  const char* (*error_name)(size_t);
  void* (*create_dstream)(void);
  size_t (*free_dstream)(void*);
  size_t (*decompress_stream)(void*, void*, void*);
  int loaded;
} zstd;

typedef struct { const void* src; size_t size; size_t pos; } zstd_in;
typedef struct { void* dst; size_t size; size_t pos; } zstd_out;

#define LZ4F_VERSION_NUMBER 100

int arrowipc_codec_load(int codec, const char* path) {
  void* h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (h == NULL) return 0;
  if (codec == ARROWIPC_CODEC_LZ4_FRAME) {
    if (lz4.loaded) return 1;
    *(void**)&lz4.create_dctx = dlsym(h, "LZ4F_createDecompressionContext");
    *(void**)&lz4.free_dctx = dlsym(h, "LZ4F_freeDecompressionContext");
    *(void**)&lz4.decompress = dlsym(h, "LZ4F_decompress");
    *(void**)&lz4.is_error = dlsym(h, "LZ4F_isError");
    *(void**)&lz4.error_name = dlsym(h, "LZ4F_getErrorName");
    *(void**)&lz4.compress_bound = dlsym(h, "LZ4F_compressFrameBound");
    *(void**)&lz4.compress_frame = dlsym(h, "LZ4F_compressFrame");
    *(void**)&lz4.version = dlsym(h, "LZ4F_getVersion");
    lz4.loaded = lz4.create_dctx && lz4.free_dctx && lz4.decompress && lz4.is_error &&
                 lz4.error_name && lz4.compress_bound && lz4.compress_frame && lz4.version;
    if (!lz4.loaded) dlclose(h);
    return lz4.loaded;
  }
  if (zstd.loaded) return 1;
  *(void**)&zstd.decompress_dctx = dlsym(h, "ZSTD_decompressDCtx");
  *(void**)&zstd.compress_cctx = dlsym(h, "ZSTD_compressCCtx");
  *(void**)&zstd.create_cctx = dlsym(h, "ZSTD_createCCtx");
  *(void**)&zstd.free_cctx = dlsym(h, "ZSTD_freeCCtx");
  *(void**)&zstd.create_dctx = dlsym(h, "ZSTD_createDCtx");
  *(void**)&zstd.free_dctx = dlsym(h, "ZSTD_freeDCtx");
  *(void**)&zstd.version = dlsym(h, "ZSTD_versionNumber");
  *(void**)&zstd.compress_bound = dlsym(h, "ZSTD_compressBound");
  *(void**)&zstd.is_error = dlsym(h, "ZSTD_isError");
  *(void**)&zstd.error_name = dlsym(h, "ZSTD_getErrorName");
  *(void**)&zstd.create_dstream = dlsym(h, "ZSTD_createDStream");
  *(void**)&zstd.free_dstream = dlsym(h, "ZSTD_freeDStream");
  *(void**)&zstd.decompress_stream = dlsym(h, "ZSTD_decompressStream");
  zstd.loaded = zstd.decompress_dctx && zstd.compress_cctx && zstd.create_cctx &&
                zstd.free_cctx && zstd.create_dctx && zstd.free_dctx && zstd.version &&
                zstd.compress_bound && zstd.is_error && zstd.error_name && zstd.create_dstream &&
                zstd.free_dstream && zstd.decompress_stream;
  if (!zstd.loaded) dlclose(h);
  return zstd.loaded;
}

unsigned arrowipc_codec_version(int codec) {
  if (codec == ARROWIPC_CODEC_ZSTD) return zstd.loaded ? zstd.version() : 0;
  return lz4.loaded ? lz4.version() : 0;
}

int arrowipc_codec_available(int codec) {
  return codec == ARROWIPC_CODEC_LZ4_FRAME ? lz4.loaded : zstd.loaded;
}

void arrowipc_codec_contexts_free(arrowipc_codec_contexts* c) {
  if (c->zstd_cctx != NULL) zstd.free_cctx(c->zstd_cctx);
  if (c->zstd_dctx != NULL) zstd.free_dctx(c->zstd_dctx);
  c->zstd_cctx = c->zstd_dctx = NULL;
}

int arrowipc_decompress(arrowipc_codec_contexts* c, int codec, const uint8_t* src,
                        int64_t src_len, uint8_t* dst, int64_t dst_len, const char** error) {
  *error = NULL;
  if (codec == ARROWIPC_CODEC_ZSTD) {
    if (!zstd.loaded) return ARROWIPC_CODEC_UNAVAILABLE;
    if (c->zstd_dctx == NULL && (c->zstd_dctx = zstd.create_dctx()) == NULL)
      return ARROWIPC_CODEC_NO_MEMORY;
    /* The capacity bounds the output: a frame that claims or produces more fails here. */
    size_t r = zstd.decompress_dctx(c->zstd_dctx, dst, (size_t)dst_len, src, (size_t)src_len);
    if (zstd.is_error(r)) {
      *error = zstd.error_name(r);
      return strstr(*error, "too small") ? ARROWIPC_CODEC_TOO_LONG : ARROWIPC_CODEC_CORRUPT;
    }
    return (int64_t)r == dst_len ? ARROWIPC_CODEC_OK : ARROWIPC_CODEC_TOO_SHORT;
  }
  if (!lz4.loaded) return ARROWIPC_CODEC_UNAVAILABLE;
  LZ4F_dctx* ctx = NULL;
  size_t r = lz4.create_dctx(&ctx, LZ4F_VERSION_NUMBER);
  if (lz4.is_error(r)) { *error = lz4.error_name(r); return ARROWIPC_CODEC_CORRUPT; }
  int64_t in = 0, out = 0;
  int status = ARROWIPC_CODEC_TOO_SHORT;
  for (;;) {
    /* with the output full, offer one spare byte: producing it proves the frame is too long */
    const int full = out == dst_len;
    uint8_t spare;
    size_t dst_size = full ? 1 : (size_t)(dst_len - out), src_size = (size_t)(src_len - in);
    r = lz4.decompress(ctx, full ? (void*)&spare : (void*)(dst + out), &dst_size, src + in,
                       &src_size, NULL);
    if (lz4.is_error(r)) { *error = lz4.error_name(r); status = ARROWIPC_CODEC_CORRUPT; break; }
    if (full && dst_size > 0) { status = ARROWIPC_CODEC_TOO_LONG; break; }
    out += (int64_t)dst_size;
    in += (int64_t)src_size;
    if (r == 0) {               /* frame complete */
      status = out != dst_len ? ARROWIPC_CODEC_TOO_SHORT
             : in != src_len ? ARROWIPC_CODEC_TRAILING : ARROWIPC_CODEC_OK;
      break;
    }
    if (src_size == 0 && dst_size == 0) { status = ARROWIPC_CODEC_TOO_SHORT; break; }  /* no progress */
  }
  lz4.free_dctx(ctx);
  return status;
}

int arrowipc_decompressed_size(int codec, const uint8_t* src, int64_t src_len, int64_t limit,
                               int64_t* size, const char** error) {
  static const size_t SCRATCH = 1 << 16;
  uint8_t scratch[1 << 16];
  int64_t total = 0;
  *error = NULL;
  *size = 0;
  if (codec == ARROWIPC_CODEC_ZSTD) {
    if (!zstd.loaded) return ARROWIPC_CODEC_UNAVAILABLE;
    void* ds = zstd.create_dstream();
    if (ds == NULL) return ARROWIPC_CODEC_UNAVAILABLE;
    zstd_in in = {src, (size_t)src_len, 0};
    int status = ARROWIPC_CODEC_TOO_SHORT;
    for (;;) {
      zstd_out out = {scratch, SCRATCH, 0};
      size_t r = zstd.decompress_stream(ds, &out, &in);
      if (zstd.is_error(r)) { *error = zstd.error_name(r); status = ARROWIPC_CODEC_CORRUPT; break; }
      total += (int64_t)out.pos;
      if (total > limit) { status = ARROWIPC_CODEC_TOO_LONG; break; }
      if (r == 0 && in.pos == in.size) { status = ARROWIPC_CODEC_OK; break; }
      if (out.pos == 0 && in.pos == in.size) break;     /* input ended inside a frame */
    }
    zstd.free_dstream(ds);
    *size = total;
    return status;
  }
  if (!lz4.loaded) return ARROWIPC_CODEC_UNAVAILABLE;
  LZ4F_dctx* ctx = NULL;
  size_t r = lz4.create_dctx(&ctx, LZ4F_VERSION_NUMBER);
  if (lz4.is_error(r)) { *error = lz4.error_name(r); return ARROWIPC_CODEC_CORRUPT; }
  int64_t in = 0;
  int status = ARROWIPC_CODEC_TOO_SHORT;
  for (;;) {
    size_t dst_size = SCRATCH, src_size = (size_t)(src_len - in);
    r = lz4.decompress(ctx, scratch, &dst_size, src + in, &src_size, NULL);
    if (lz4.is_error(r)) { *error = lz4.error_name(r); status = ARROWIPC_CODEC_CORRUPT; break; }
    total += (int64_t)dst_size;
    in += (int64_t)src_size;
    if (total > limit) { status = ARROWIPC_CODEC_TOO_LONG; break; }
    if (r == 0) { status = in == src_len ? ARROWIPC_CODEC_OK : ARROWIPC_CODEC_TRAILING; break; }
    if (src_size == 0 && dst_size == 0) break;          /* no progress: truncated */
  }
  lz4.free_dctx(ctx);
  *size = total;
  return status;
}

int64_t arrowipc_compress_bound(int codec, int64_t n) {
  if (codec == ARROWIPC_CODEC_ZSTD) return zstd.loaded ? (int64_t)zstd.compress_bound((size_t)n) : 0;
  if (!lz4.loaded) return 0;
  lz4f_preferences prefs;
  memset(&prefs, 0, sizeof(prefs));
  prefs.frameInfo.contentSize = (unsigned long long)n;
  return (int64_t)lz4.compress_bound((size_t)n, &prefs);
}

static int compress_whole(arrowipc_codec_contexts* c, int codec, int level, const uint8_t* src,
                          int64_t n, uint8_t* dst, int64_t cap, int64_t* out_len,
                          const char** error);
static int compress_lz4(int level, const uint8_t* src, int64_t n, uint8_t* dst, int64_t cap,
                        int sized, int64_t* out_len, const char** error);

/* Incompressible data (random numbers, already-compressed bytes) is common in large buffers and
   costs a full compression pass only to be stored raw. From SAMPLE_FROM bytes on, SAMPLES spread
   slices of SAMPLE bytes are compressed first (into dst, overwritten later); when none of them
   shrinks at all, the buffer is reported as not shrinking (out_len = n) without compressing it. */
#define SAMPLE_FROM (1 << 20)
#define SAMPLES 4
#define SAMPLE (16 << 10)

/* Whether the samples of a buffer of SAMPLE_FROM bytes or more all fail to shrink (*none = 1).
   With `sizes` set, every sample is compressed and *sizes receives their compressed bytes in all
   (else the first that shrinks answers). */
static int samples_shrink_none(arrowipc_codec_contexts* c, int codec, int level,
                               const uint8_t* src, int64_t n, uint8_t* dst, int64_t cap,
                               int* none, int64_t* sizes, const char** error) {
  *none = 1;
  if (sizes != NULL) *sizes = 0;
  if (n < SAMPLE_FROM) { *none = 0; return ARROWIPC_CODEC_OK; }
  for (int k = 0; k < SAMPLES; k++) {
    int64_t at = (n - SAMPLE) / (SAMPLES - 1) * k, got = 0;
    int status = compress_whole(c, codec, level, src + at, SAMPLE, dst, cap, &got, error);
    if (status != ARROWIPC_CODEC_OK) return status;
    if (got < SAMPLE) *none = 0;
    if (sizes != NULL) *sizes += got;
    else if (!*none) break;
  }
  return ARROWIPC_CODEC_OK;
}

int arrowipc_compress(arrowipc_codec_contexts* c, int codec, int level, const uint8_t* src,
                      int64_t n, uint8_t* dst, int64_t cap, int64_t* out_len, const char** error) {
  int none = 0;
  int status = samples_shrink_none(c, codec, level, src, n, dst, cap, &none, NULL, error);
  if (status != ARROWIPC_CODEC_OK) return status;
  if (none) { *out_len = n; return ARROWIPC_CODEC_OK; }
  return compress_whole(c, codec, level, src, n, dst, cap, out_len, error);
}

static int compress_whole(arrowipc_codec_contexts* c, int codec, int level, const uint8_t* src,
                          int64_t n, uint8_t* dst, int64_t cap, int64_t* out_len,
                          const char** error) {
  *error = NULL;
  size_t r;
  if (codec == ARROWIPC_CODEC_ZSTD) {
    if (!zstd.loaded) return ARROWIPC_CODEC_UNAVAILABLE;
    if (c->zstd_cctx == NULL && (c->zstd_cctx = zstd.create_cctx()) == NULL)
      return ARROWIPC_CODEC_NO_MEMORY;
    /* the same frame as ZSTD_compress (content size, no checksum); the context is reused */
    r = zstd.compress_cctx(c->zstd_cctx, dst, (size_t)cap, src, (size_t)n, level);
    if (zstd.is_error(r)) { *error = zstd.error_name(r); return ARROWIPC_CODEC_NO_SPACE; }
  } else {
    return compress_lz4(level, src, n, dst, cap, 1, out_len, error);
  }
  *out_len = (int64_t)r;
  return ARROWIPC_CODEC_OK;
}

/* An LZ4 frame of src (pyarrow's preferences), its content size in the header when `sized`:
   readers can size their output. */
static int compress_lz4(int level, const uint8_t* src, int64_t n, uint8_t* dst, int64_t cap,
                        int sized, int64_t* out_len, const char** error) {
  if (!lz4.loaded) return ARROWIPC_CODEC_UNAVAILABLE;
  lz4f_preferences prefs;
  memset(&prefs, 0, sizeof(prefs));
  if (sized) prefs.frameInfo.contentSize = (unsigned long long)n;
  prefs.compressionLevel = level;
  size_t r = lz4.compress_frame(dst, (size_t)cap, src, (size_t)n, &prefs);
  if (lz4.is_error(r)) { *error = lz4.error_name(r); return ARROWIPC_CODEC_NO_SPACE; }
  *out_len = (int64_t)r;
  return ARROWIPC_CODEC_OK;
}

#include <pthread.h>
#include <stdlib.h>

/* The contexts of the thread that calls arrowipc_codec_run, kept from one run to the next: a
   ZSTD context costs an allocation and its tables' set-up, as much as compressing a few KB, and
   small batches compress a few KB per buffer. Freed when the thread exits. */
static pthread_key_t contexts_key;
static pthread_once_t contexts_once = PTHREAD_ONCE_INIT;
static int contexts_key_made;

static void contexts_destroy(void* p) {
  arrowipc_codec_contexts_free((arrowipc_codec_contexts*)p);
  free(p);
}

static void contexts_key_make(void) {
  contexts_key_made = pthread_key_create(&contexts_key, contexts_destroy) == 0;
}

/* The calling thread's kept contexts; NULL when they cannot be kept (then a run uses its own). */
static arrowipc_codec_contexts* thread_contexts(void) {
  pthread_once(&contexts_once, contexts_key_make);
  if (!contexts_key_made) return NULL;
  arrowipc_codec_contexts* c = (arrowipc_codec_contexts*)pthread_getspecific(contexts_key);
  if (c == NULL) {
    c = (arrowipc_codec_contexts*)calloc(1, sizeof(*c));
    if (c != NULL && pthread_setspecific(contexts_key, c) != 0) {
      free(c);
      c = NULL;
    }
  }
  return c;
}

/* A ZSTD compression context keeps the tables of the largest level and input it has seen: above
   this level they are large (tens of MB), so such a context is not kept after its run. */
#define KEEP_ZSTD_LEVEL 3

static void release_contexts(arrowipc_codec_contexts* c, arrowipc_codec_contexts* kept,
                             int zstd_level) {
  if (c != kept) {
    arrowipc_codec_contexts_free(c);
  } else if (zstd_level > KEEP_ZSTD_LEVEL && c->zstd_cctx != NULL) {
    zstd.free_cctx(c->zstd_cctx);
    c->zstd_cctx = NULL;
  }
}

typedef struct {
  arrowipc_codec_task** order;   /* largest first */
  int64_t n;
  int64_t next;                  /* claimed with __atomic_fetch_add */
} codec_queue;

/* compress == SPLIT_PIECE: one piece of a split buffer, compressed whole into its own frame (the
   samples were taken of the whole buffer). */
#define SPLIT_PIECE 2

static void run_one(arrowipc_codec_contexts* c, arrowipc_codec_task* t) {
  if (t->compress == SPLIT_PIECE && t->codec == ARROWIPC_CODEC_LZ4_FRAME)
    /* no content size: the pieces' headers are one header, of the frame they are joined into */
    t->status = compress_lz4(t->level, t->src, t->src_len, t->dst, t->dst_len, 0, &t->out_len,
                             &t->error);
  else if (t->compress == SPLIT_PIECE)
    t->status = compress_whole(c, t->codec, t->level, t->src, t->src_len, t->dst, t->dst_len,
                               &t->out_len, &t->error);
  else if (t->compress)
    t->status = arrowipc_compress(c, t->codec, t->level, t->src, t->src_len, t->dst, t->dst_len,
                                  &t->out_len, &t->error);
  else
    t->status = arrowipc_decompress(c, t->codec, t->src, t->src_len, t->dst, t->dst_len,
                                    &t->error);
}

static void work_queue(arrowipc_codec_contexts* c, codec_queue* q) {
  for (;;) {
    int64_t i = __atomic_fetch_add(&q->next, 1, __ATOMIC_RELAXED);
    if (i >= q->n) break;
    run_one(c, q->order[i]);
  }
}

/* Each worker keeps its codec contexts for all the tasks it claims. */
static void* codec_worker(void* arg) {
  arrowipc_codec_contexts c = {NULL, NULL};
  work_queue(&c, (codec_queue*)arg);
  arrowipc_codec_contexts_free(&c);
  return NULL;
}

static int64_t task_work(const arrowipc_codec_task* t) {
  return t->src_len > t->dst_len ? t->src_len : t->dst_len;
}

static int larger_first(const void* a, const void* b) {
  int64_t x = task_work(*(arrowipc_codec_task* const*)a), y = task_work(*(arrowipc_codec_task* const*)b);
  return x > y ? -1 : x < y;
}

/* ZSTD frames may follow one another in a compressed buffer: ZSTD_decompress, which readers call
   (Arrow C++, Java through zstd-jni, Rust, arrowipc), decodes them all into one output. So a
   buffer larger than a thread's share of the run, which would keep one thread compressing while
   the others wait, is cut into pieces, each compressed into a frame of its own on any thread, and
   the frames are put back to back. Arrow C++ refuses LZ4 input of more than one frame, so LZ4
   pieces' blocks are joined into one frame (join_pieces). A piece is about a quarter of a
   thread's share and at least PIECE_MIN bytes. Each frame starts afresh, which costs little
   (0.01-0.3 % on strings, floats and integers shrinking 1.5 to 6 times). Data whose samples
   shrink more than SPLIT_RATIO_MAX times loses more to small pieces (+10 % for 2 MiB pieces of
   integers of three values) and nothing measurable to pieces of PIECE_MIN_SHRINKING bytes (text
   shrinking 60 times even comes out a quarter smaller): its pieces are at least that large.
   Other buffers keep pyarrow's frame, byte for byte. */
#define SPLIT_RATIO_MAX 8
/* An LZ4 frame without content size or dictionary: magic, FLG, BD, header checksum; its end. */
#define LZ4_HEADER 7
#define LZ4_END_MARK 4
#define PIECE_MIN (2 << 20)
#define PIECE_MIN_SHRINKING (8 << 20)

typedef struct { int64_t share, piece; } split_rule;

static split_rule split_rule_of(const arrowipc_codec_task* tasks, int64_t n, int threads) {
  int64_t total = 0;
  for (int64_t i = 0; i < n; i++) total += task_work(&tasks[i]);
  split_rule r = {total / threads, total / ((int64_t)threads * 4)};
  if (r.piece < PIECE_MIN) r.piece = PIECE_MIN;
  return r;
}

static int splits(const arrowipc_codec_task* t, split_rule r) {
  return t->compress == 1 && t->src_len > r.share && t->src_len > r.piece + r.piece / 2;
}

/* A split buffer: its pieces' tasks, and the scratch memory their frames are written to when
   not to the buffer's own output. */
typedef struct {
  arrowipc_codec_task* whole;
  arrowipc_codec_task* pieces;
  int64_t count;
  uint8_t* scratch;
} split_buffer;

/* Cut each task worth splitting into piece tasks, appended to `work` after the tasks left whole;
   a buffer whose samples do not shrink is settled here (out_len = its size: stored raw). Returns
   the number of tasks in `work`, or -1 when memory for the pieces is short (nothing is split). */
static int64_t cut_pieces(arrowipc_codec_contexts* c, arrowipc_codec_task* tasks, int64_t n,
                          split_rule rule, arrowipc_codec_task** work, split_buffer* split,
                          int64_t* nsplit) {
  int64_t piece = rule.piece;
  int64_t count = 0;
  *nsplit = 0;
  for (int64_t i = 0; i < n; i++) {
    arrowipc_codec_task* t = &tasks[i];
    if (!splits(t, rule)) { work[count++] = t; continue; }
    int none = 0;
    int64_t sampled = 0;
    t->status = samples_shrink_none(c, t->codec, t->level, t->src, t->src_len, t->dst,
                                    t->dst_len, &none, &sampled, &t->error);
    if (t->status != ARROWIPC_CODEC_OK) continue;
    if (none) { t->out_len = t->src_len; continue; }
    int64_t size = piece;
    if (sampled * SPLIT_RATIO_MAX < SAMPLES * SAMPLE) {
      if (size < PIECE_MIN_SHRINKING) size = PIECE_MIN_SHRINKING;
      if (t->src_len <= size + size / 2) { work[count++] = t; continue; }
    }
    int64_t k = (t->src_len + size - 1) / size, step = t->src_len / k;
    int64_t last = t->src_len - step * (k - 1);
    int64_t bound = arrowipc_compress_bound(t->codec, step);
    int64_t room = bound * (k - 1) + arrowipc_compress_bound(t->codec, last);
    split_buffer* s = &split[(*nsplit)++];
    s->whole = t;
    s->count = k;
    s->pieces = (arrowipc_codec_task*)calloc((size_t)k, sizeof(*s->pieces));
    if (s->pieces == NULL) return -1;
    /* each frame at its own place in the buffer's output when the pieces' bounds fit in it (as
       ZSTD's do from 128 KiB on, where the bound is linear), else in scratch memory */
    uint8_t* out = t->dst;
    if (room > t->dst_len) {
      out = s->scratch = (uint8_t*)malloc((size_t)room);
      if (out == NULL) return -1;
    }
    for (int64_t j = 0; j < k; j++) {
      arrowipc_codec_task* p = &s->pieces[j];
      *p = *t;
      p->compress = SPLIT_PIECE;
      p->src = t->src + step * j;
      p->src_len = j == k - 1 ? last : step;
      p->dst = out + bound * j;
      p->dst_len = j == k - 1 ? room - bound * j : bound;
      work[count++] = p;
    }
  }
  return count;
}

/* The pieces' frames put back to back in the whole buffer's output; frames that together do not
   fit its capacity mean the buffer does not shrink: it is stored raw (out_len = its size). */
static void join_pieces(split_buffer* s) {
  arrowipc_codec_task* t = s->whole;
  int lz4_frame = t->codec == ARROWIPC_CODEC_LZ4_FRAME;
  int64_t at = 0;
  for (int64_t j = 0; j < s->count; j++) {
    arrowipc_codec_task* p = &s->pieces[j];
    if (p->status != ARROWIPC_CODEC_OK) {
      t->status = p->status;
      t->error = p->error;
      return;
    }
    /* LZ4 (whose readers take one frame): the pieces' blocks in one frame, under the first
       piece's header (each piece's is the same: no content size, no checksum) and before one
       end mark. A block that starts a piece refers to no earlier data, which a frame of linked
       blocks allows. */
    int64_t from = 0, len = p->out_len;
    if (lz4_frame) {
      if (len < LZ4_HEADER + LZ4_END_MARK) { t->status = ARROWIPC_CODEC_NO_SPACE; return; }
      from = j == 0 ? 0 : LZ4_HEADER;
      len -= from + (j == s->count - 1 ? 0 : LZ4_END_MARK);
    }
    if (len > t->dst_len - at) { t->out_len = t->src_len; return; }
    if (p->dst + from != t->dst + at) memmove(t->dst + at, p->dst + from, (size_t)len);
    at += len;
  }
  t->status = ARROWIPC_CODEC_OK;
  t->out_len = at;
}

static void free_splits(split_buffer* split, int64_t nsplit) {
  for (int64_t i = 0; i < nsplit; i++) {
    free(split[i].pieces);
    free(split[i].scratch);
  }
}

/* The tasks on `threads` threads (the calling one included) from a queue, longest first: the
   threads then run out of work at nearly the same time. */
static void run_queue(arrowipc_codec_contexts* c, arrowipc_codec_task** order, int64_t n,
                      int threads) {
  pthread_t ids[64];
  int started = 0;
  qsort(order, (size_t)n, sizeof(*order), larger_first);
  codec_queue q = {order, n, 0};
  for (int i = 1; i < threads && i < n; i++) {
    if (pthread_create(&ids[started], NULL, codec_worker, &q) == 0) started++;
  }
  work_queue(c, &q);
  for (int i = 0; i < started; i++) pthread_join(ids[i], NULL);
}

void arrowipc_codec_run(arrowipc_codec_task* tasks, int64_t n, int threads) {
  int zstd_level = 0;
  arrowipc_codec_contexts own = {NULL, NULL};
  arrowipc_codec_contexts* kept = thread_contexts();
  arrowipc_codec_contexts* c = kept != NULL ? kept : &own;
  for (int64_t i = 0; i < n; i++)
    if (tasks[i].compress && tasks[i].codec == ARROWIPC_CODEC_ZSTD && tasks[i].level > zstd_level)
      zstd_level = tasks[i].level;
  if (threads > 64) threads = 64;
  split_rule rule = {0, 0};
  int64_t pieces = 0, nsplit = 0;
  if (threads > 1) rule = split_rule_of(tasks, n, threads);
  for (int64_t i = 0; threads > 1 && i < n; i++)
    if (splits(&tasks[i], rule)) pieces += (tasks[i].src_len + rule.piece - 1) / rule.piece;
  if (threads > 1 && pieces == 0 && threads > n) threads = (int)n;
  arrowipc_codec_task** order = threads > 1
      ? (arrowipc_codec_task**)malloc(sizeof(*order) * (size_t)(n + pieces + 1)) : NULL;
  split_buffer* split = pieces > 0 ? (split_buffer*)calloc((size_t)n, sizeof(*split)) : NULL;
  int64_t count = -1;
  if (order != NULL && split != NULL)
    count = cut_pieces(c, tasks, n, rule, order, split, &nsplit);
  if (count < 0) {              /* nothing to split, or no memory to: each task whole */
    free_splits(split, nsplit);
    nsplit = 0;
    for (int64_t i = 0; i < n; i++) {
      tasks[i].status = ARROWIPC_CODEC_OK;
      tasks[i].error = NULL;
      if (order != NULL) order[i] = &tasks[i];
    }
    count = n;
  }
  if (order == NULL) {
    for (int64_t i = 0; i < n; i++) run_one(c, &tasks[i]);
  } else {
    run_queue(c, order, count, threads);
    for (int64_t i = 0; i < nsplit; i++) join_pieces(&split[i]);
  }
  free_splits(split, nsplit);
  free(split);
  release_contexts(c, kept, zstd_level);
  free(order);
}

/* -- packing a message body ------------------------------------------------------------------- */

static int64_t pad_to(int64_t n, int64_t alignment) {
  return (alignment - (n & (alignment - 1))) & (alignment - 1);
}

/* Room one compressed item takes in the block at most: prefix, frame bound, padding. */
static int64_t item_room(int64_t bound, int64_t alignment) {
  return 8 + bound + alignment;
}

int64_t arrowipc_pack_capacity(int codec, const arrowipc_pack_item* items, int64_t n,
                               int64_t alignment) {
  int64_t total = 0;
  for (int64_t i = 0; i < n; i++) {
    if (!items[i].compress) continue;
    int64_t bound = arrowipc_compress_bound(codec, items[i].src_len);
    if (bound <= 0) return -1;
    total += item_room(bound, alignment);
  }
  return total;
}

/* Whether a frame of `out` bytes is worth storing for an item of `n` bytes. */
static int frame_kept(int64_t out, int64_t n, double min_savings) {
  return out < n && (min_savings < 0 || 1.0 - (double)out / (double)n >= min_savings);
}

static void place_frame(arrowipc_pack_item* it, uint8_t* block, int64_t at, int64_t frame,
                        int64_t alignment) {
  int64_t prefix = it->src_len, len = 8 + frame;
  memcpy(block + at, &prefix, 8);               /* little-endian hosts only, as everywhere */
  memset(block + at + len, 0, (size_t)pad_to(len, alignment));
  it->at = at;
  it->len = len;
}

int arrowipc_pack(int codec, int level, double min_savings, int64_t alignment,
                  arrowipc_pack_item* items, int64_t n, uint8_t* block, int64_t capacity,
                  int threads, int64_t* used, int64_t* failed, const char** error) {
  int64_t pos = 0, ntasks = 0;
  *used = 0;
  *failed = -1;
  *error = NULL;
  int64_t largest = 0;
  for (int64_t i = 0; i < n; i++) {
    items[i].at = -1;
    items[i].len = items[i].src_len ? 8 + items[i].src_len : 0;
    ntasks += items[i].compress != 0;
    if (items[i].compress && items[i].src_len > largest) largest = items[i].src_len;
  }
  /* one buffer alone goes to the runner too when it is cut into pieces there */
  int alone = ntasks <= 1 && !(largest > PIECE_MIN + PIECE_MIN / 2);
  if (threads <= 1 || alone) {
    /* in order, each frame right after the previous one kept: no gaps between them */
    arrowipc_codec_contexts own = {NULL, NULL};
    arrowipc_codec_contexts* kept = thread_contexts();
    arrowipc_codec_contexts* c = kept != NULL ? kept : &own;
    int status = ARROWIPC_CODEC_OK;
    for (int64_t i = 0; i < n; i++) {
      arrowipc_pack_item* it = &items[i];
      if (!it->compress) continue;
      int64_t bound = arrowipc_compress_bound(codec, it->src_len), frame = 0;
      if (bound <= 0 || pos > capacity - item_room(bound, alignment)) {
        status = ARROWIPC_CODEC_NO_SPACE;
        *failed = i;
        break;
      }
      status = arrowipc_compress(c, codec, level, it->src, it->src_len, block + pos + 8, bound,
                                 &frame, error);
      if (status != ARROWIPC_CODEC_OK) {
        *failed = i;
        break;
      }
      if (frame_kept(frame, it->src_len, min_savings)) {
        place_frame(it, block, pos, frame, alignment);
        pos += it->len + pad_to(it->len, alignment);
      }
    }
    release_contexts(c, kept, codec == ARROWIPC_CODEC_ZSTD ? level : 0);
    *used = pos;
    return status;
  }
  arrowipc_codec_task* tasks = (arrowipc_codec_task*)malloc(sizeof(*tasks) * (size_t)ntasks);
  int64_t* of = (int64_t*)malloc(sizeof(*of) * (size_t)ntasks);
  if (tasks == NULL || of == NULL) {
    free(tasks);
    free(of);
    return ARROWIPC_CODEC_NO_MEMORY;
  }
  int64_t k = 0;
  for (int64_t i = 0; i < n; i++) {
    if (!items[i].compress) continue;
    int64_t bound = arrowipc_compress_bound(codec, items[i].src_len);
    if (bound <= 0 || pos > capacity - item_room(bound, alignment)) {
      free(tasks);
      free(of);
      *failed = i;
      return ARROWIPC_CODEC_NO_SPACE;
    }
    arrowipc_codec_task* t = &tasks[k];
    memset(t, 0, sizeof(*t));
    t->compress = 1;
    t->codec = codec;
    t->level = level;
    t->src = items[i].src;
    t->src_len = items[i].src_len;
    t->dst = block + pos + 8;
    t->dst_len = bound;
    of[k++] = i;
    pos += item_room(bound, alignment);
  }
  arrowipc_codec_run(tasks, ntasks, threads);
  int status = ARROWIPC_CODEC_OK;
  for (k = 0; k < ntasks; k++) {
    arrowipc_pack_item* it = &items[of[k]];
    if (tasks[k].status != ARROWIPC_CODEC_OK) {
      status = tasks[k].status;
      *failed = of[k];
      *error = tasks[k].error;
      break;
    }
    if (frame_kept(tasks[k].out_len, it->src_len, min_savings))
      place_frame(it, block, (int64_t)(tasks[k].dst - 8 - block), tasks[k].out_len, alignment);
  }
  free(tasks);
  free(of);
  *used = pos;
  return status;
}
