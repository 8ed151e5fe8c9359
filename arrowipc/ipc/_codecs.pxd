# The C codecs (cpp/arrowipc_codecs.c) as other Cython modules reach them: through this module,
# whose copy of the C library holds the codec libraries it loaded (load()).
from libc.stdint cimport uint8_t, int64_t

cdef extern from "arrowipc_codecs.h" nogil:
    int ARROWIPC_CODEC_OK, ARROWIPC_CODEC_UNAVAILABLE, ARROWIPC_CODEC_CORRUPT
    int ARROWIPC_CODEC_TOO_LONG, ARROWIPC_CODEC_TOO_SHORT, ARROWIPC_CODEC_TRAILING
    int ARROWIPC_CODEC_NO_SPACE, ARROWIPC_CODEC_NO_MEMORY
    ctypedef struct arrowipc_codec_task:
        int compress
        int codec
        int level
        const uint8_t* src
        int64_t src_len
        uint8_t* dst
        int64_t dst_len
        int64_t out_len
        int status
        const char* error
    ctypedef struct arrowipc_pack_item:
        const uint8_t* src
        int64_t src_len
        int compress
        int64_t at
        int64_t len
    int arrowipc_codec_load(int codec, const char* path)
    int arrowipc_codec_available(int codec)
    unsigned arrowipc_codec_version(int codec)
    int64_t arrowipc_compress_bound(int codec, int64_t n)
    int arrowipc_decompressed_size(int codec, const uint8_t* src, int64_t src_len, int64_t limit,
                                   int64_t* size, const char** error)
    void arrowipc_codec_run(arrowipc_codec_task* tasks, int64_t n, int threads)
    int64_t arrowipc_pack_capacity(int codec, const arrowipc_pack_item* items, int64_t n,
                                   int64_t alignment)
    int arrowipc_pack(int codec, int level, double min_savings, int64_t alignment,
                      arrowipc_pack_item* items, int64_t n, uint8_t* block, int64_t capacity,
                      int threads, int64_t* used, int64_t* failed, const char** error)

# A message body's buffers compressed into one block (arrowipc_pack, see its header).
cdef int64_t pack_capacity(int codec, const arrowipc_pack_item* items, int64_t n,
                           int64_t alignment) noexcept nogil
cdef int pack_body(int codec, int level, double min_savings, int64_t alignment,
                   arrowipc_pack_item* items, int64_t n, uint8_t* block, int64_t capacity,
                   int threads, int64_t* used, int64_t* failed, const char** error) noexcept nogil
# The message of the ArrowInvalid a failed pack_body deserves.
cdef str pack_failure(int codec, int status, const char* error, int64_t index)
