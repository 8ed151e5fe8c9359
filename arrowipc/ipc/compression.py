"""Body compression (LZ4_FRAME, ZSTD): each buffer on its own, an int64 uncompressed-length prefix.

A prefix of -1 marks a buffer stored raw. The codec libraries release the GIL, so buffers are
(de)compressed in parallel on a shared thread pool. Nothing is allocated from a claimed size before
that size is checked against a limit, and the output is bounded by the prefix, never by the frame.
"""
from __future__ import annotations

import os
import struct
from concurrent.futures import ThreadPoolExecutor

from .._core.buffer import Buffer, py_buffer
from ..errors import ArrowInvalid

CODEC_LZ4_FRAME = 0
CODEC_ZSTD = 1
CODEC_NAMES = {CODEC_LZ4_FRAME: "LZ4_FRAME", CODEC_ZSTD: "ZSTD"}
RAW_MARKER = -1
_PREFIX = struct.Struct("<q")
_RAW_PREFIX = _PREFIX.pack(RAW_MARKER)

# Default bound on the decompressed size of one buffer (configurable per read).
MAX_DECOMPRESSED_BUFFER = 1 << 34
# Buffers smaller than this are not worth a thread hand-off.
_PARALLEL_MIN_BYTES = 1 << 16

_pool = None
_c_codecs = None


def _native():
    """The C codec module when the system codec libraries load, else None (Python fallback)."""
    global _c_codecs
    if _c_codecs is None:
        from .._core import codecs
        for codec, names in ((CODEC_LZ4_FRAME, ("liblz4.so.1", "liblz4.so")),
                             (CODEC_ZSTD, ("libzstd.so.1", "libzstd.so"))):
            for name in names:
                if codecs.load(codec, name):
                    break
            else:
                if codec == CODEC_LZ4_FRAME:
                    _load_lz4_from_package(codecs)
        _c_codecs = codecs
    return _c_codecs


def _load_lz4_from_package(codecs):
    """The `lz4` package's extension exports the LZ4F API: use it when the system has no liblz4."""
    import importlib.util
    spec = importlib.util.find_spec("lz4.frame._frame")
    if spec is not None and spec.origin:
        codecs.load(CODEC_LZ4_FRAME, spec.origin)


def _threads(use_threads: bool, nbytes: int) -> int:
    return max(1, os.cpu_count() or 1) if use_threads and nbytes >= _PARALLEL_MIN_BYTES else 1


def _executor() -> ThreadPoolExecutor:
    global _pool
    if _pool is None:
        _pool = ThreadPoolExecutor(max_workers=max(2, os.cpu_count() or 2),
                                   thread_name_prefix="arrowipc-codec")
    return _pool


def _map(fn, items, use_threads: bool, total_bytes: int):
    if use_threads and len(items) > 1 and total_bytes >= _PARALLEL_MIN_BYTES:
        return list(_executor().map(fn, items))
    return [fn(x) for x in items]


# -- decompression ----------------------------------------------------------------------------------

def _decompress_lz4(data: memoryview, size: int) -> bytes:
    import lz4.frame
    d = lz4.frame.LZ4FrameDecompressor()
    try:
        out = d.decompress(data, max_length=size) if size else d.decompress(data, max_length=1)
    except RuntimeError as e:
        raise ArrowInvalid(f"corrupt LZ4 frame: {e}") from None
    if size and len(out) == size and not d.eof:
        # all the promised bytes are here; anything more is a lie about the size
        try:
            extra = d.decompress(b"", max_length=1)
        except RuntimeError as e:
            raise ArrowInvalid(f"corrupt LZ4 frame: {e}") from None
        if extra or not d.eof:
            raise ArrowInvalid(f"LZ4 frame decompresses to more than the {size} bytes its prefix states")
    if not d.eof:
        raise ArrowInvalid(f"LZ4 frame is truncated: expected {size} bytes, got {len(out)} and no frame end")
    return out


def _decompress_zstd(data: memoryview, size: int) -> bytes:
    import zstandard
    try:
        reader = zstandard.ZstdDecompressor().stream_reader(data, read_across_frames=False)
        out = reader.read(size) if size else b""
        extra = reader.read(1)
    except zstandard.ZstdError as e:
        raise ArrowInvalid(f"corrupt ZSTD frame: {e}") from None
    if extra:
        raise ArrowInvalid(f"ZSTD frame decompresses to more than the {size} bytes its prefix states")
    return out


_DECOMPRESS = {CODEC_LZ4_FRAME: _decompress_lz4, CODEC_ZSTD: _decompress_zstd}


def _measure(codec: int, data: memoryview, limit: int) -> int:
    """Bytes `data` decompresses to, counted in 64 KiB steps; stops past `limit`."""
    total, step = 0, 1 << 16
    try:
        if codec == CODEC_LZ4_FRAME:
            import lz4.frame
            d = lz4.frame.LZ4FrameDecompressor()
            chunk = d.decompress(data, max_length=step)
            while True:
                total += len(chunk)
                if total > limit or d.eof or not chunk:
                    return total
                chunk = d.decompress(b"", max_length=step)
        import zstandard
        reader = zstandard.ZstdDecompressor().stream_reader(data, read_across_frames=False)
        while True:
            chunk = reader.read(step)
            total += len(chunk)
            if total > limit or not chunk:
                return total
    except Exception as e:  # noqa: BLE001 - the codecs raise their own error types
        raise ArrowInvalid(f"corrupt {CODEC_NAMES[codec]} data: {e}") from None


def decompress_buffer(raw: Buffer, codec: int, limit: int = MAX_DECOMPRESSED_BUFFER,
                      where: str = "buffer") -> Buffer:
    """The uncompressed contents of one compressed body buffer."""
    if raw.size == 0:
        return raw
    if raw.size < 8:
        raise ArrowInvalid(f"{where}: compressed buffer of {raw.size} bytes has no 8-byte length prefix")
    size = _PREFIX.unpack(raw.slice(0, 8).to_pybytes())[0]
    if size == RAW_MARKER:
        return raw.slice(8)
    if size < 0 or size > limit:
        raise ArrowInvalid(f"{where}: uncompressed length prefix is {size}; expected -1 or "
                           f"0..{limit}")
    if size > 64 * raw.size + (1 << 20):
        # implausibly large claim: measure the real output before allocating for it
        measured = _measure(codec, memoryview(raw)[8:], size)
        if measured > size:
            raise ArrowInvalid(f"{where}: {CODEC_NAMES[codec]} data decompresses to more than "
                               f"the {size} bytes its prefix states")
        if measured < size:
            raise ArrowInvalid(f"{where}: {CODEC_NAMES[codec]} data decodes to {measured} bytes "
                               f"but its prefix states {size}")
    out = _DECOMPRESS[codec](memoryview(raw)[8:], size)
    if len(out) != size:
        raise ArrowInvalid(f"{where}: {CODEC_NAMES[codec]} data decompressed to {len(out)} bytes "
                           f"but its prefix states {size}")
    return py_buffer(out)


def decompress_body_buffers(header, body: Buffer, codec: int, needed: list, use_threads: bool,
                            where: str, limit: int = MAX_DECOMPRESSED_BUFFER) -> list:
    """Decompressed Buffer per header buffer index (None where not needed), in parallel."""
    spans = header.buffers_list()
    jobs = []
    for i, (off, n) in enumerate(spans):
        if not needed[i]:
            continue
        if off < 0 or n < 0 or off > body.size or n > body.size - off:
            raise ArrowInvalid(f"{where}: buffer {i} spans bytes [{off}, {off}+{n}) but the body "
                               f"has {body.size} bytes")
        jobs.append((i, body.slice(off, n)))
    native = _native()
    if native.available(codec):
        return _decompress_native(native, codec, jobs, len(spans), use_threads, where, limit)

    def run(job):
        i, raw = job
        return decompress_buffer(raw, codec, limit, f"{where}: buffer {i}")

    results = _map(run, jobs, use_threads, sum(b.size for _, b in jobs))
    out = [None] * len(spans)
    for (i, _), buf in zip(jobs, results):
        out[i] = _aligned(buf)
    return out


def _decompress_native(native, codec, jobs, count, use_threads, where, limit):
    """Prefixes checked here; frames decompressed in C, in parallel, into exact-size buffers."""
    out = [None] * count
    srcs, sizes, labels = [], [], []
    for i, raw in jobs:
        if raw.size == 0:
            out[i] = raw
            continue
        if raw.size < 8:
            raise ArrowInvalid(f"{where}: buffer {i}: compressed buffer of {raw.size} bytes has no "
                               f"8-byte length prefix")
        size = _PREFIX.unpack(raw.slice(0, 8).to_pybytes())[0]
        if size == RAW_MARKER:
            out[i] = _aligned(raw.slice(8))
            continue
        if size < 0 or size > limit:
            raise ArrowInvalid(f"{where}: buffer {i}: uncompressed length prefix is {size}; "
                               f"expected -1 or 0..{limit}")
        srcs.append(raw.slice(8))
        sizes.append(size)
        labels.append(i)
    if srcs:
        threads = _threads(use_threads, sum(b.size for b in srcs))
        for i, buf in zip(labels, native.decompress_all(codec, srcs, sizes, labels, threads, where)):
            out[i] = buf
    return out


def _aligned(buf: Buffer) -> Buffer:
    if buf.address % 8 == 0:
        return buf
    from .._core.buffer import concat_buffers
    return concat_buffers([buf], buf.size)


# -- compression ------------------------------------------------------------------------------------

def make_body_compressor(options):
    """A callable mapping a batch's body buffers to compressed parts: (length prefix, frame) or
    (-1 prefix, raw bytes) per buffer, None for empty ones. Buffers below the options'
    compression threshold, or that do not shrink, are stored raw."""
    codec = CODEC_LZ4_FRAME if options.compression in ("lz4", "lz4_frame") else CODEC_ZSTD
    level = options.compression_level
    if level is None:
        level = 0 if codec == CODEC_LZ4_FRAME else 1      # the codecs' fast defaults, as pyarrow
    threshold = options.compression_threshold
    savings = options.min_space_savings
    use_threads = options.use_threads
    native = _native()
    # ZSTD output depends on the library version: compress with the `zstandard` package's
    # libzstd (the version pyarrow bundles, so output is byte-identical); LZ4 and every
    # decompression run on the C path.
    if native.available(codec) and codec == CODEC_LZ4_FRAME:
        def compress_many(datas):
            return native.compress_all(codec, level, datas,
                                       _threads(use_threads, sum(len(d) for d in datas)))
    else:
        compress_one = _python_compressor(codec, level)

        def compress_many(datas):
            def one(d):
                packed = compress_one(d)
                return packed if len(packed) < len(d) else None
            return _map(one, datas, use_threads, sum(len(d) for d in datas))

    class Compressor:
        def __call__(self, buffers: list) -> list:
            work = [i for i, b in enumerate(buffers) if b is not None and len(b) >= max(1, threshold)]
            packed = compress_many([buffers[i] for i in work]) if work else []
            out = [None if b is None or len(b) == 0 else (_RAW_PREFIX, b) for b in buffers]
            for i, p in zip(work, packed):
                n = len(buffers[i])
                # never store a buffer larger than it was raw, nor one that saves too little
                if p is not None and (savings is None or 1.0 - len(p) / n >= savings):
                    out[i] = (_PREFIX.pack(n), p)
            return out

    return Compressor()


def _python_compressor(codec, level):
    if codec == CODEC_LZ4_FRAME:
        import lz4.frame
        return lambda data: lz4.frame.compress(data, compression_level=level, store_size=True)
    import zstandard
    # a compressor object is not thread-safe: one per call is cheap
    return lambda data: zstandard.ZstdCompressor(level=level, write_content_size=True).compress(data)
