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

    def run(job):
        i, raw = job
        return decompress_buffer(raw, codec, limit, f"{where}: buffer {i}")

    results = _map(run, jobs, use_threads, sum(b.size for _, b in jobs))
    out = [None] * len(spans)
    for (i, _), buf in zip(jobs, results):
        out[i] = _aligned(buf)
    return out


def _aligned(buf: Buffer) -> Buffer:
    if buf.address % 8 == 0:
        return buf
    from .._core.buffer import concat_buffers
    return concat_buffers([buf], buf.size)


# -- compression ------------------------------------------------------------------------------------

def make_body_compressor(options):
    """A function mapping a batch's body buffers to compressed parts (tuples of bytes-likes)."""
    codec = 0 if options.compression in ("lz4", "lz4_frame") else 1
    level = options.compression_level
    use_threads = options.use_threads

    if codec == CODEC_LZ4_FRAME:
        import lz4.frame

        def compress(data):
            return lz4.frame.compress(data, compression_level=level or 0, store_size=True)
    else:
        import zstandard
        zlevel = 1 if level is None else int(level)

        def compress(data):
            # a compressor object is not thread-safe: one per call is cheap
            return zstandard.ZstdCompressor(level=zlevel, write_content_size=True).compress(data)

    def one(buf):
        if buf is None or len(buf) == 0:
            return None
        n = len(buf)
        packed = compress(buf)
        if len(packed) >= n:           # never store a buffer larger than it was raw
            return (_RAW_PREFIX, buf)
        return (_PREFIX.pack(n), packed)

    class Compressor:
        """Callable over a batch's body buffers; remembers the raw size of the last batch."""
        last_raw_size = 0

        def __call__(self, buffers: list) -> list:
            raw = sum(len(b) for b in buffers if b is not None)
            self.last_raw_size = raw + sum((-len(b)) % 8 for b in buffers if b is not None)
            return _map(one, buffers, use_threads, raw)

    return Compressor()
