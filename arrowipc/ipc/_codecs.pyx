# cython: language_level=3
"""LZ4_FRAME and ZSTD in C: the codec libraries loaded at run time, called without the GIL, in
parallel across buffers (each worker thread reusing its codec contexts), writing into outputs
allocated once at their final (checked) size.

`available(codec)` says whether the C path is usable; otherwise arrowipc.ipc.compression falls
back to the `lz4` and `zstandard` packages.
"""
from libc.stdint cimport uint8_t, int64_t
from libc.stdlib cimport malloc, free
from libc.string cimport memset

from arrowipc._core.buffer cimport Buffer, allocate, py_buffer, slice_unchecked
from arrowipc.errors import ArrowInvalid

from arrowipc.ipc.format import CODEC_SPEC_NAMES as _NAMES


def load(int codec, str path):
    """Try to load `codec` from the shared library at `path`."""
    return bool(arrowipc_codec_load(codec, path.encode()))


def available(int codec):
    return bool(arrowipc_codec_available(codec))


def version(int codec):
    """The loaded library's version number (0 when none is loaded)."""
    return arrowipc_codec_version(codec)


cdef str describe(arrowipc_codec_task* t, str where, int64_t index):
    name = _NAMES.get(t.codec, str(t.codec))
    detail = f" ({t.error.decode(errors='replace')})" if t.error != NULL else ""
    if t.status == ARROWIPC_CODEC_TOO_LONG:
        return (f"{where}: buffer {index}: {name} data decompresses to more than the "
                f"{t.dst_len} bytes its prefix states")
    if t.status == ARROWIPC_CODEC_TOO_SHORT:
        return (f"{where}: buffer {index}: {name} data ends before the {t.dst_len} bytes its "
                f"prefix states (truncated or corrupt){detail}")
    if t.status == ARROWIPC_CODEC_TRAILING:
        return f"{where}: buffer {index}: bytes left after the end of the {name} frame"
    if t.status == ARROWIPC_CODEC_UNAVAILABLE:
        return f"{where}: the {name} library is not available"
    if t.status == ARROWIPC_CODEC_NO_MEMORY:
        return f"{where}: buffer {index}: cannot allocate a {name} context"
    return f"{where}: buffer {index}: corrupt {name} data{detail}"


# A claimed size above this multiple of the compressed size (plus a slack) is measured before
# anything is allocated for it.
DEF PLAUSIBLE_RATIO = 64
DEF PLAUSIBLE_SLACK = 1 << 20


def check_claim(int codec, Buffer src, int64_t claimed, str where, object label):
    """Allocation follows the data: an implausibly large claim must be proven by decoding."""
    cdef int64_t measured = 0
    cdef const char* error = NULL
    cdef int status
    if claimed <= PLAUSIBLE_RATIO * src.size + PLAUSIBLE_SLACK:
        return
    with nogil:
        status = arrowipc_decompressed_size(codec, src.ptr, src.size, claimed, &measured, &error)
    if status == ARROWIPC_CODEC_OK and measured == claimed:
        return
    name = _NAMES.get(codec, str(codec))
    if status == ARROWIPC_CODEC_OK or status == ARROWIPC_CODEC_TOO_SHORT:
        raise ArrowInvalid(f"{where}: buffer {label}: {name} data decodes to {measured} bytes but "
                           f"its prefix states {claimed}")
    if status == ARROWIPC_CODEC_TOO_LONG:
        raise ArrowInvalid(f"{where}: buffer {label}: {name} data decompresses to more than the "
                           f"{claimed} bytes its prefix states")
    if status == ARROWIPC_CODEC_TRAILING:
        raise ArrowInvalid(f"{where}: buffer {label}: bytes left after the end of the {name} frame")
    detail = f" ({error.decode(errors='replace')})" if error != NULL else ""
    raise ArrowInvalid(f"{where}: buffer {label}: corrupt {name} data{detail}")


# Decompressed outputs are carved out of blocks of about this size (see decompress_many).
DEF OUTPUT_BLOCK = 8 << 20


def decompress_many(list codecs, list sources, list sizes, list labels, list wheres, int threads):
    """Decompress each source into a new Buffer of exactly its size, all in one parallel run
    (largest first, so the threads finish together). Sizes are already checked against the
    caller's limits and plausible claims (check_claim). Returns, per source, its Buffer or the
    message of the ArrowInvalid it deserves: one bad frame does not hide the good ones."""
    cdef Py_ssize_t n = len(sources), i, j, end
    cdef arrowipc_codec_task* tasks = <arrowipc_codec_task*>malloc(sizeof(arrowipc_codec_task) * (n + 1))
    cdef Buffer src, dst, block
    cdef list outs = []
    cdef int64_t size, total, at
    if tasks == NULL:
        raise MemoryError()
    try:
        # Consecutive outputs share blocks of about OUTPUT_BLOCK bytes: blocks that large come
        # from the buffer pool (and huge pages) and are reused by the next read, where a fresh
        # allocation per buffer (a few hundred KB each) page-faulted every byte in again and
        # cost as much CPU as decompressing. A buffer keeps at most its block alive.
        i = 0
        while i < n:
            total = 0
            end = i
            while end < n and (end == i or total + sizes[end] <= OUTPUT_BLOCK):
                total += (<int64_t>sizes[end] + 63) & ~63
                end += 1
            block = allocate(total, False)
            at = 0
            for j in range(i, end):
                size = sizes[j]
                dst = slice_unchecked(block, at, size)
                # zero the padding up to the next output, as allocate does for its tail
                if size & 63:
                    memset(<uint8_t*>block.ptr + at + size, 0, <size_t>(64 - (size & 63)))
                at += (size + 63) & ~63
                outs.append(dst)
            i = end
        for i in range(n):
            src = sources[i]
            dst = outs[i]
            tasks[i].compress = 0
            tasks[i].codec = codecs[i]
            tasks[i].level = 0
            tasks[i].src = src.ptr
            tasks[i].src_len = src.size
            tasks[i].dst = <uint8_t*>dst.ptr
            tasks[i].dst_len = dst.size
            tasks[i].status = 0
            tasks[i].error = NULL
        with nogil:
            arrowipc_codec_run(tasks, n, threads)
        for i in range(n):
            if tasks[i].status != ARROWIPC_CODEC_OK:
                outs[i] = describe(&tasks[i], wheres[i], labels[i])
        return outs
    finally:
        free(tasks)


def compress_all(int codec, int level, list sources, int threads):
    """[compressed Buffer or None (incompressible: not smaller than the input)] per source."""
    cdef Py_ssize_t n = len(sources), i, j, end
    cdef arrowipc_codec_task* tasks = <arrowipc_codec_task*>malloc(sizeof(arrowipc_codec_task) * (n + 1))
    cdef Buffer src, dst, block
    cdef list outs = []
    cdef list bounds = []
    cdef int64_t bound, total, at
    if tasks == NULL:
        raise MemoryError()
    try:
        for i in range(n):
            src = py_buffer(sources[i])
            bound = arrowipc_compress_bound(codec, src.size)
            if bound <= 0:
                raise ArrowInvalid(f"the {_NAMES.get(codec)} library is not available")
            outs.append(src)
            bounds.append((bound + 63) & ~63)
        # outputs carved from shared blocks, as in decompress_many (no page faults per buffer)
        i = 0
        while i < n:
            total = 0
            end = i
            while end < n and (end == i or total + <int64_t>bounds[end] <= OUTPUT_BLOCK):
                total += <int64_t>bounds[end]
                end += 1
            block = allocate(total, False)
            at = 0
            for j in range(i, end):
                outs[j] = (outs[j], slice_unchecked(block, at, bounds[j]))
                at += <int64_t>bounds[j]
            i = end
        for i in range(n):
            src, dst = outs[i]
            tasks[i].compress = 1
            tasks[i].codec = codec
            tasks[i].level = level
            tasks[i].src = src.ptr
            tasks[i].src_len = src.size
            tasks[i].dst = <uint8_t*>dst.ptr
            tasks[i].dst_len = dst.size
            tasks[i].out_len = 0
            tasks[i].status = 0
            tasks[i].error = NULL
        with nogil:
            arrowipc_codec_run(tasks, n, threads)
        result = []
        for i in range(n):
            if tasks[i].status != ARROWIPC_CODEC_OK:
                raise ArrowInvalid(describe(&tasks[i], "compression", i))
            src, dst = outs[i]
            result.append(slice_unchecked(dst, 0, tasks[i].out_len)
                          if tasks[i].out_len < src.size else None)
        return result
    finally:
        free(tasks)


cdef int64_t pack_capacity(int codec, const arrowipc_pack_item* items, int64_t n,
                           int64_t alignment) noexcept nogil:
    return arrowipc_pack_capacity(codec, items, n, alignment)


cdef int pack_body(int codec, int level, double min_savings, int64_t alignment,
                   arrowipc_pack_item* items, int64_t n, uint8_t* block, int64_t capacity,
                   int threads, int64_t* used, int64_t* failed, const char** error) noexcept nogil:
    return arrowipc_pack(codec, level, min_savings, alignment, items, n, block, capacity, threads,
                         used, failed, error)


cdef str pack_failure(int codec, int status, const char* error, int64_t index):
    cdef arrowipc_codec_task t
    t.codec = codec
    t.status = status
    t.error = error
    t.dst_len = 0
    if status == ARROWIPC_CODEC_NO_SPACE:
        name = _NAMES.get(codec, str(codec))
        detail = f" ({error.decode(errors='replace')})" if error != NULL else ""
        return f"compression: buffer {index}: the {name} frame does not fit its bound{detail}"
    return describe(&t, "compression", index)
