"""Body compression (LZ4_FRAME, ZSTD): each buffer on its own, an int64 uncompressed-length prefix.

A prefix of -1 marks a buffer stored raw. Frames are (de)compressed in C (`_core/codecs.pyx`,
`cpp/arrowipc_codecs.c`) without the GIL, on as many threads as there are CPUs, across the buffers
of one batch or of a window of batches; the codec packages' Python APIs are the fallback when no
codec library loads. Nothing is allocated from a claimed size before that size is checked against
a limit, and the output is bounded by the prefix, never by the frame.
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


# Where the C path finds each codec, in order: the codec packages' extension modules export the
# libraries' C API (the versions our dependencies pin, the same on every machine; zstandard's is
# the libzstd pyarrow bundles, so ZSTD frames are byte-identical to pyarrow's), then the system's.
_LIBRARIES = {
    CODEC_LZ4_FRAME: (("module", "lz4.frame._frame"), ("path", "liblz4.so.1"), ("path", "liblz4.so")),
    CODEC_ZSTD: (("module", "zstandard._cffi"), ("path", "libzstd.so.1"), ("path", "libzstd.so")),
}


def _native():
    """The C codec module (its `available(codec)` says which codecs loaded)."""
    global _c_codecs
    if _c_codecs is None:
        from .._core import codecs
        for codec, places in _LIBRARIES.items():
            for kind, name in places:
                path = _module_file(name) if kind == "module" else name
                if path is not None and codecs.load(codec, path):
                    break
        _c_codecs = codecs
    return _c_codecs


def _module_file(name: str):
    """The shared-object file of an extension module, without importing it."""
    import importlib.util
    try:
        spec = importlib.util.find_spec(name)
    except ImportError:
        return None
    return spec.origin if spec is not None and spec.origin and spec.origin.endswith(".so") else None


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


class BodyDecompression:
    """The compressed buffers of one or more message bodies, decompressed in one parallel run.

    `add` checks a body's buffer spans and length prefixes (raising ArrowInvalid for that body)
    and queues its frames; `run` decompresses every queued frame at once, so the threads stay
    busy across the buffers of several batches, and returns per body its list of Buffers by
    header index (None where not needed) or the ArrowInvalid that body deserves.
    """

    def __init__(self, use_threads: bool, limit: int = MAX_DECOMPRESSED_BUFFER):
        self.use_threads = use_threads
        self.limit = limit
        self._native = _native()
        self._outs = []           # per body: list by header index
        self._bodies = []         # per body: (codec, jobs, where) for the Python fallback
        self._codecs, self._srcs, self._sizes, self._labels, self._wheres, self._slots = \
            [], [], [], [], [], []

    def add(self, header, body: Buffer, codec: int, needed: list, where: str) -> int:
        spans = header.buffers_list()
        jobs = []
        for i, (off, n) in enumerate(spans):
            if not needed[i]:
                continue
            if off < 0 or n < 0 or off > body.size or n > body.size - off:
                raise ArrowInvalid(f"{where}: buffer {i} spans bytes [{off}, {off}+{n}) but the "
                                   f"body has {body.size} bytes")
            jobs.append((i, body.slice(off, n)))
        slot = len(self._outs)
        out = [None] * len(spans)
        if not self._native.available(codec):
            self._outs.append(out)
            self._bodies.append((codec, jobs, where))
            return slot
        queued = []
        for i, raw in jobs:
            if raw.size == 0:
                out[i] = raw
                continue
            if raw.size < 8:
                raise ArrowInvalid(f"{where}: buffer {i}: compressed buffer of {raw.size} bytes "
                                   f"has no 8-byte length prefix")
            size = _PREFIX.unpack(raw.slice(0, 8).to_pybytes())[0]
            if size == RAW_MARKER:
                out[i] = _aligned(raw.slice(8))
                continue
            if size < 0 or size > self.limit:
                raise ArrowInvalid(f"{where}: buffer {i}: uncompressed length prefix is {size}; "
                                   f"expected -1 or 0..{self.limit}")
            frame = raw.slice(8)
            self._native.check_claim(codec, frame, size, where, i)
            queued.append((i, frame, size))
        self._outs.append(out)
        self._bodies.append(None)
        for i, frame, size in queued:
            self._codecs.append(codec)
            self._srcs.append(frame)
            self._sizes.append(size)
            self._labels.append(i)
            self._wheres.append(where)
            self._slots.append(slot)
        return slot

    def run(self) -> list:
        results = list(self._outs)
        if self._srcs:
            threads = _threads(self.use_threads, sum(b.size for b in self._srcs))
            bufs = self._native.decompress_many(self._codecs, self._srcs, self._sizes,
                                                self._labels, self._wheres, threads)
            for slot, i, buf in zip(self._slots, self._labels, bufs):
                if isinstance(results[slot], ArrowInvalid):
                    continue                      # the body's first error (by buffer) counts
                if isinstance(buf, str):
                    results[slot] = ArrowInvalid(buf)
                else:
                    results[slot][i] = buf
        for slot, fallback in enumerate(self._bodies):
            if fallback is not None:
                try:
                    self._decompress_python(results[slot], *fallback)
                except ArrowInvalid as e:
                    results[slot] = e
        return results

    def _decompress_python(self, out, codec, jobs, where):
        def one(job):
            i, raw = job
            return decompress_buffer(raw, codec, self.limit, f"{where}: buffer {i}")

        for (i, _), buf in zip(jobs, _map(one, jobs, self.use_threads,
                                          sum(b.size for _, b in jobs))):
            out[i] = _aligned(buf)


def decompress_body_buffers(header, body: Buffer, codec: int, needed: list, use_threads: bool,
                            where: str, limit: int = MAX_DECOMPRESSED_BUFFER) -> list:
    """Decompressed Buffer per header buffer index (None where not needed), in parallel."""
    work = BodyDecompression(use_threads, limit)
    work.add(header, body, codec, needed, where)
    result = work.run()[0]
    if isinstance(result, ArrowInvalid):
        raise result
    return result


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
    if native.available(codec):
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
