"""Body compression (LZ4_FRAME, ZSTD): each buffer on its own, an int64 uncompressed-length prefix.

A prefix of -1 marks a buffer stored raw. Frames are (de)compressed in C (`ipc/_codecs.pyx`,
`cpp/arrowipc_codecs.c`) without the GIL, on as many threads as there are CPUs, across the buffers
of one batch or of a window of batches; the codec packages' Python APIs are the fallback when no
codec library loads. Nothing is allocated from a claimed size before that size is checked against
a limit, and the output is bounded by the prefix, never by the frame.
"""
from __future__ import annotations

import os
import struct
from concurrent.futures import ThreadPoolExecutor
from types import ModuleType
from typing import TYPE_CHECKING, Any, Callable, Protocol, TypeVar

from .._core.buffer import Buffer, py_buffer
from ..errors import ArrowCapacityError, ArrowInvalid
from .format import CODEC_LZ4_FRAME, CODEC_ZSTD, RAW_MARKER
from .format import CODEC_SPEC_NAMES as CODEC_NAMES

if TYPE_CHECKING:
    from ._batch_decode import RecordBatchHeader
    from .options import IpcWriteOptions

__all__ = ["BodyCompressorLike", "BodyDecompression", "decompress_body_buffers",
           "make_body_compressor", "MAX_DECOMPRESSED_BUFFER", "RAW_PREFIX"]

_In = TypeVar("_In")
_Out = TypeVar("_Out")

_PREFIX = struct.Struct("<q")
# The length prefix of a buffer stored raw; the writer checks for this very object to tell that
# the part after it is the caller's memory, not a frame of its own.
RAW_PREFIX = _PREFIX.pack(RAW_MARKER)

# Default bound on the decompressed size of one buffer (configurable per read).
MAX_DECOMPRESSED_BUFFER = 1 << 34
# Buffers smaller than this are not worth a thread hand-off.
_PARALLEL_MIN_BYTES = 1 << 16

_pool: ThreadPoolExecutor | None = None
_c_codecs: ModuleType | None = None


# Where the C path finds each codec, in order: the codec packages' extension modules export the
# libraries' C API (the versions our dependencies pin, the same on every machine; zstandard's is
# the libzstd pyarrow bundles, so ZSTD frames are byte-identical to pyarrow's), then the system's.
_LIBRARIES = {
    CODEC_LZ4_FRAME: (("module", "lz4.frame._frame"), ("path", "liblz4.so.1"), ("path", "liblz4.so")),
    CODEC_ZSTD: (("module", "zstandard._cffi"), ("path", "libzstd.so.1"), ("path", "libzstd.so")),
}


def _native() -> ModuleType:
    """The C codec module (its `available(codec)` says which codecs loaded)."""
    global _c_codecs
    if _c_codecs is None:
        from . import _codecs as codecs
        for codec, places in _LIBRARIES.items():
            for kind, name in places:
                path = _module_file(name) if kind == "module" else name
                if path is not None and codecs.load(codec, path):
                    break
        _c_codecs = codecs
    return _c_codecs


def _module_file(name: str) -> str | None:
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


def _map(fn: Callable[[_In], _Out], items: list[_In], use_threads: bool, total_bytes: int
         ) -> list[_Out]:
    if use_threads and len(items) > 1 and total_bytes >= _PARALLEL_MIN_BYTES:
        return list(_executor().map(fn, items))
    return [fn(x) for x in items]


# -- decompression ----------------------------------------------------------------------------------

def _decompress_lz4(data: memoryview, size: int) -> bytes:
    import lz4.frame
    d = lz4.frame.LZ4FrameDecompressor()
    try:
        out: bytes = d.decompress(data, max_length=size + 1)     # one spare byte proves a lie
    except RuntimeError as e:
        raise ArrowInvalid(f"corrupt LZ4 frame: {e}") from None
    if len(out) > size:
        raise ArrowInvalid(f"LZ4 frame decompresses to more than the {size} bytes its prefix states")
    if not d.eof:
        raise ArrowInvalid(f"LZ4 frame is truncated: expected {size} bytes, got {len(out)} and no "
                           f"frame end")
    return out


def _decompress_zstd(data: memoryview, size: int) -> bytes:
    import zstandard
    try:
        reader = zstandard.ZstdDecompressor().stream_reader(data, read_across_frames=False)
        out: bytes = reader.read(size) if size else b""
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


def _decompress_frame(frame: Buffer, size: int, codec: int, where: str) -> Buffer:
    """`frame` decompressed by the codec packages' Python APIs (the fallback when no codec
    library loads) into exactly `size` bytes, a size `BodyDecompression.add` already checked."""
    if size > 64 * frame.size + (1 << 20):
        # implausibly large claim: measure the real output before allocating for it
        measured = _measure(codec, memoryview(frame), size)
        if measured > size:
            raise ArrowInvalid(f"{where}: {CODEC_NAMES[codec]} data decompresses to more than "
                               f"the {size} bytes its prefix states")
        if measured < size:
            raise ArrowInvalid(f"{where}: {CODEC_NAMES[codec]} data decodes to {measured} bytes "
                               f"but its prefix states {size}")
    try:
        out = _DECOMPRESS[codec](memoryview(frame), size)
    except ArrowInvalid as e:
        raise ArrowInvalid(f"{where}: {e}") from None
    if len(out) != size:
        raise ArrowInvalid(f"{where}: {CODEC_NAMES[codec]} data decompressed to {len(out)} bytes "
                           f"but its prefix states {size}")
    return py_buffer(out)


# The most output one input byte can produce, a fact of each format: an LZ4 match length grows by
# 255 per extra byte; a 4-byte ZSTD RLE block yields at most one 128 KiB block. The constants
# cover frame headers. A claim beyond this is a lie whatever the frame holds.
_MAX_RATIO = {CODEC_LZ4_FRAME: 256, CODEC_ZSTD: 32768}
_MAX_EXTRA = {CODEC_LZ4_FRAME: 1 << 16, CODEC_ZSTD: 1 << 17}


class BodyDecompression:
    """The compressed buffers of one or more message bodies, decompressed in one parallel run.

    `add` reads a body's buffer spans and length prefixes once, checks each claim (against what
    the codec can produce from the bytes present, `buffer_limit`, and the message's claims
    against `message_limit`), raising ArrowInvalid for that body before anything is allocated,
    and queues its frames; `run` decompresses every queued frame at once, so the threads stay
    busy across the buffers of several batches, and returns per body its list of Buffers by
    header index (None where not needed) or the ArrowInvalid that body deserves.
    """

    def __init__(self, use_threads: bool, message_limit: int | None = None,
                 buffer_limit: int = MAX_DECOMPRESSED_BUFFER) -> None:
        self.use_threads = use_threads
        self.message_limit = message_limit
        self.buffer_limit = buffer_limit
        self.claimed = 0          # uncompressed bytes the queued frames claim, all bodies
        self._native = _native()
        self._outs: list[list[Buffer | None]] = []      # per body: list by header index
        # per body: (codec, frames, where) for the Python APIs, or None
        self._fallbacks: list[tuple[int, list[tuple[int, Buffer, int]], str] | None] = []
        self._first_where: str | None = None
        # the frames for the C codecs, all bodies: one entry each in every list
        self._codecs: list[int] = []
        self._srcs: list[Buffer] = []
        self._sizes: list[int] = []
        self._labels: list[int] = []
        self._wheres: list[str] = []
        self._slots: list[int] = []

    def add(self, header: RecordBatchHeader, body: Buffer, codec: int, needed: list[bool],
            where: str) -> int:
        """Check and queue the compressed buffers of one body; its slot in run()'s result."""
        spans = header.buffers_list()
        out: list[Buffer | None] = [None] * len(spans)
        # (header index, frame without its prefix, claimed size)
        frames: list[tuple[int, Buffer, int]] = []
        claimed = 0
        ratio, extra = _MAX_RATIO[codec], _MAX_EXTRA[codec]
        for i, (off, n) in enumerate(spans):
            if not needed[i]:
                continue
            if off < 0 or n < 0 or off > body.size or n > body.size - off:
                raise ArrowInvalid(f"{where}: buffer {i} spans bytes [{off}, {off}+{n}) but the "
                                   f"body has {body.size} bytes")
            if n == 0:
                out[i] = body.slice(off, 0)
                continue
            if n < 8:
                raise ArrowInvalid(f"{where}: buffer {i}: compressed buffer of {n} bytes has no "
                                   f"8-byte length prefix")
            size: int = _PREFIX.unpack(body.slice(off, 8).to_pybytes())[0]
            if size == RAW_MARKER:
                out[i] = _aligned(body.slice(off + 8, n - 8))
                continue
            if size > ratio * (n - 8) + extra:
                raise ArrowInvalid(f"{where}: buffer {i} claims {size} uncompressed bytes, more "
                                   f"than {CODEC_NAMES[codec]} can produce from its {n - 8} "
                                   f"compressed bytes")
            if size < 0 or size > self.buffer_limit:
                raise ArrowInvalid(f"{where}: buffer {i}: uncompressed length prefix is {size}; "
                                   f"expected -1 or 0..{self.buffer_limit}")
            claimed += size
            if self.message_limit is not None and claimed > self.message_limit:
                raise ArrowInvalid(f"{where}: compressed buffers claim more than "
                                   f"{self.message_limit} uncompressed bytes in one message "
                                   f"(IpcReadOptions(max_decompressed_size=...))")
            frames.append((i, body.slice(off + 8, n - 8), size))
        native = self._native.available(codec)
        if native:
            for i, frame, size in frames:
                self._native.check_claim(codec, frame, size, where, i)
        slot = len(self._outs)
        self._outs.append(out)
        self._fallbacks.append(None if native else (codec, frames, where))
        self.claimed += claimed
        if self._first_where is None:
            self._first_where = where
        if native:
            for i, frame, size in frames:
                self._codecs.append(codec)
                self._srcs.append(frame)
                self._sizes.append(size)
                self._labels.append(i)
                self._wheres.append(where)
                self._slots.append(slot)
        return slot

    def run(self) -> list[list[Buffer | None] | ArrowInvalid]:
        """Decompress every queued frame; per body (by slot) its Buffers, or its error."""
        try:
            return self._run()
        except MemoryError:
            # claims within the limits can still exceed the memory this process has
            raise ArrowCapacityError(f"{self._first_where}: no memory for the {self.claimed} "
                                     f"bytes the compressed buffers of {len(self._outs)} "
                                     f"message(s) claim") from None

    def _run(self) -> list[list[Buffer | None] | ArrowInvalid]:
        results: list[list[Buffer | None] | ArrowInvalid] = list(self._outs)
        if self._srcs:
            threads = _threads(self.use_threads, sum(b.size for b in self._srcs))
            bufs = self._native.decompress_many(self._codecs, self._srcs, self._sizes,
                                                self._labels, self._wheres, threads)
            for slot, i, buf in zip(self._slots, self._labels, bufs):
                body = results[slot]
                if isinstance(body, ArrowInvalid):
                    continue                      # the body's first error (by buffer) counts
                if isinstance(buf, str):
                    results[slot] = ArrowInvalid(buf)
                else:
                    body[i] = buf
        for slot, fallback in enumerate(self._fallbacks):
            body = results[slot]
            if fallback is not None and not isinstance(body, ArrowInvalid):
                try:
                    self._decompress_python(body, *fallback)
                except ArrowInvalid as e:
                    results[slot] = e
        return results

    def _decompress_python(self, out: list[Buffer | None], codec: int,
                           frames: list[tuple[int, Buffer, int]], where: str) -> None:
        def one(job: tuple[int, Buffer, int]) -> Buffer:
            i, frame, size = job
            return _decompress_frame(frame, size, codec, f"{where}: buffer {i}")

        for (i, _, _), buf in zip(frames, _map(one, frames, self.use_threads,
                                               sum(f.size for _, f, _ in frames))):
            out[i] = _aligned(buf)


def decompress_body_buffers(header: RecordBatchHeader, body: Buffer, codec: int,
                            needed: list[bool], use_threads: bool, where: str,
                            message_limit: int | None = None) -> list[Buffer | None]:
    """Decompressed Buffer per header buffer index (None where not needed), in parallel."""
    work = BodyDecompression(use_threads, message_limit)
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

class BodyCompressorLike(Protocol):
    """What the writers compress with: a BodyCompressor (the C codecs) or the fallback over the
    codec packages' Python APIs."""

    def __call__(self, buffers: list[Any]) -> list[Any]: ...

    def pack_batches(self, flats: list[Any], alignment: int = 8) -> list[Any]: ...


def make_body_compressor(options: IpcWriteOptions) -> BodyCompressorLike:
    """What compresses a batch's body buffers: called with the list of buffers it gives
    (length prefix, frame) or (-1 prefix, raw bytes) per buffer, None for empty ones;
    encode_record_batch and pack_batches (several batches at once) take it too. Buffers below
    the options' compression threshold, or that do not shrink, are stored raw."""
    codec = CODEC_LZ4_FRAME if options.compression in ("lz4", "lz4_frame") else CODEC_ZSTD
    level = options.compression_level
    if level is None:
        level = 0 if codec == CODEC_LZ4_FRAME else 1      # the codecs' fast defaults, as pyarrow
    threshold = options.compression_threshold
    savings = options.min_space_savings
    use_threads = options.use_threads
    if _native().available(codec):
        # one C call per batch: buffers compressed without the GIL into one block, in parallel
        # from _PARALLEL_MIN_BYTES of input
        from ._batch_encode import BodyCompressor
        return BodyCompressor(codec, level, threshold, savings, use_threads,
                              max(1, os.cpu_count() or 1), _PARALLEL_MIN_BYTES)
    compress_one = _python_compressor(codec, level)

    def compress_many(datas: list[Any]) -> list[Any]:
        def one(d: Any) -> bytes | None:
            packed = compress_one(d)
            return packed if len(packed) < len(d) else None
        return _map(one, datas, use_threads, sum(len(d) for d in datas))

    class Compressor:
        def __call__(self, buffers: list[Any]) -> list[Any]:
            work = [i for i, b in enumerate(buffers) if b is not None and len(b) >= max(1, threshold)]
            packed = compress_many([buffers[i] for i in work]) if work else []
            out: list[tuple[bytes, Any] | None] = [
                None if b is None or len(b) == 0 else (RAW_PREFIX, b) for b in buffers]
            for i, p in zip(work, packed):
                n = len(buffers[i])
                # never store a buffer larger than it was raw, nor one that saves too little
                if p is not None and (savings is None or 1.0 - len(p) / n >= savings):
                    out[i] = (_PREFIX.pack(n), p)
            return out

        def pack_batches(self, flats: list[Any], alignment: int = 8) -> list[Any]:
            everything = [x for fb in flats for x in fb.buffers]
            packed = self(everything)
            out, pos = [], 0
            for fb in flats:
                out.append(packed[pos:pos + len(fb.buffers)])
                pos += len(fb.buffers)
            return out

    return Compressor()


def _python_compressor(codec: int, level: int) -> Callable[[Any], bytes]:
    if codec == CODEC_LZ4_FRAME:
        import lz4.frame
        return lambda data: lz4.frame.compress(data, compression_level=level, store_size=True)
    import zstandard
    # a compressor object is not thread-safe: one per call is cheap
    return lambda data: zstandard.ZstdCompressor(level=level, write_content_size=True).compress(data)
