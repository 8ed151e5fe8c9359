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

/* Incompressible data (random numbers, already-compressed bytes) is common in large buffers and
   costs a full compression pass only to be stored raw. From SAMPLE_FROM bytes on, SAMPLES spread
   slices of SAMPLE bytes are compressed first (into dst, overwritten later); when none of them
   shrinks at all, the buffer is reported as not shrinking (out_len = n) without compressing it. */
#define SAMPLE_FROM (1 << 20)
#define SAMPLES 4
#define SAMPLE (16 << 10)

int arrowipc_compress(arrowipc_codec_contexts* c, int codec, int level, const uint8_t* src,
                      int64_t n, uint8_t* dst, int64_t cap, int64_t* out_len, const char** error) {
  if (n >= SAMPLE_FROM) {
    int shrinks = 0;
    for (int k = 0; k < SAMPLES && !shrinks; k++) {
      int64_t at = (n - SAMPLE) / (SAMPLES - 1) * k, got = 0;
      int status = compress_whole(c, codec, level, src + at, SAMPLE, dst, cap, &got, error);
      if (status != ARROWIPC_CODEC_OK) return status;
      shrinks = got < SAMPLE;
    }
    if (!shrinks) { *out_len = n; return ARROWIPC_CODEC_OK; }
  }
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
    if (!lz4.loaded) return ARROWIPC_CODEC_UNAVAILABLE;
    lz4f_preferences prefs;
    memset(&prefs, 0, sizeof(prefs));
    prefs.frameInfo.contentSize = (unsigned long long)n;   /* readers can size their output */
    prefs.compressionLevel = level;
    r = lz4.compress_frame(dst, (size_t)cap, src, (size_t)n, &prefs);
    if (lz4.is_error(r)) { *error = lz4.error_name(r); return ARROWIPC_CODEC_NO_SPACE; }
  }
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

static void run_one(arrowipc_codec_contexts* c, arrowipc_codec_task* t) {
  if (t->compress)
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

void arrowipc_codec_run(arrowipc_codec_task* tasks, int64_t n, int threads) {
  pthread_t ids[64];
  int started = 0, zstd_level = 0;
  arrowipc_codec_contexts own = {NULL, NULL};
  arrowipc_codec_contexts* kept = thread_contexts();
  arrowipc_codec_contexts* c = kept != NULL ? kept : &own;
  for (int64_t i = 0; i < n; i++)
    if (tasks[i].compress && tasks[i].codec == ARROWIPC_CODEC_ZSTD && tasks[i].level > zstd_level)
      zstd_level = tasks[i].level;
  if (threads > 64) threads = 64;
  if (threads > n) threads = (int)n;
  /* Longest tasks first: the threads then run out of work at nearly the same time. */
  arrowipc_codec_task** order = threads > 1
      ? (arrowipc_codec_task**)malloc(sizeof(*order) * (size_t)(n + 1)) : NULL;
  if (order == NULL) {
    for (int64_t i = 0; i < n; i++) run_one(c, &tasks[i]);
    release_contexts(c, kept, zstd_level);
    return;
  }
  for (int64_t i = 0; i < n; i++) order[i] = &tasks[i];
  qsort(order, (size_t)n, sizeof(*order), larger_first);
  codec_queue q = {order, n, 0};
  for (int i = 1; i < threads; i++) {
    if (pthread_create(&ids[started], NULL, codec_worker, &q) == 0) started++;
  }
  work_queue(c, &q);         /* the calling thread works too */
  for (int i = 0; i < started; i++) pthread_join(ids[i], NULL);
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
  for (int64_t i = 0; i < n; i++) {
    items[i].at = -1;
    items[i].len = items[i].src_len ? 8 + items[i].src_len : 0;
    ntasks += items[i].compress != 0;
  }
  if (threads <= 1 || ntasks <= 1) {
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
