"""IPC options and statistics, with pyarrow's names and defaults."""
from __future__ import annotations

import enum
import os
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Iterable, NamedTuple

from ..errors import ArrowInvalid
from .format import COMPRESSION_IDS as COMPRESSION_CODECS
from .format import (MAX_BUFFERS, MAX_DECOMPRESSED_SIZE, MAX_FIELDS, MAX_METADATA_SIZE,  # noqa: F401
                     MAX_NESTING_DEPTH, MAX_VARIADIC_BUFFERS)
from .remote import CONNECT_TIMEOUT, HOLE_SIZE_LIMIT, RANGE_SIZE_LIMIT, READ_TIMEOUT


__all__ = ["Alignment", "as_read_options", "as_write_options", "IOStats", "IpcReadOptions",
           "IpcWriteOptions", "MetadataVersion", "ReadStats", "VALIDATION_LEVELS",
           "WriteCounters", "WriteStats"]


class MetadataVersion(enum.IntEnum):
    """The metadata version of a message (pyarrow.ipc.MetadataVersion)."""
    V1 = 0
    V2 = 1
    V3 = 2
    V4 = 3
    V5 = 4


class Alignment(enum.IntEnum):
    """Re-alignment of read buffers (pyarrow.ipc.Alignment).

    Any: buffers are used where they lie; DataTypeSpecific: each buffer aligned for its type's
    width; At64Byte: every buffer aligned to 64 bytes. arrowipc's reader always brings buffers to
    an 8-byte boundary (copying only the misaligned ones), which is DataTypeSpecific for every type
    of at most 8-byte values; the setting is accepted and recorded, and no further copy is made.
    """
    Any = 0
    DataTypeSpecific = -3
    At64Byte = 64


VALIDATION_LEVELS = ("structural", "full", "none")


def _codec_parts(compression: object) -> tuple[str | None, int | None]:
    """(name, level) of `compression`: None, a codec name in any case, or a codec object with
    `name` and `compression_level` (pyarrow.Codec, duck-typed so pyarrow is never imported)."""
    level = None
    if compression is not None and not isinstance(compression, str):
        name = getattr(compression, "name", None)
        if not isinstance(name, str):
            raise TypeError(f"compression must be None, a str or a Codec, not "
                            f"{type(compression).__name__}")
        level = getattr(compression, "compression_level", None)
        compression = name
    if isinstance(compression, str):
        compression = compression.lower()
        if compression == "lz4_frame":         # pyarrow's spelling of the format's LZ4 codec
            compression = "lz4"
    if compression not in COMPRESSION_CODECS:
        raise ValueError(f"Invalid value for compression: {compression!r} (expected None, 'lz4' "
                         f"or 'zstd')")
    return compression, level


_LEVELS = {"lz4": (0, 12), "lz4_frame": (0, 12), "zstd": (-7, 22)}


def _check_level(compression: str | None, level: int | None) -> int | None:
    if level is None:
        return None
    if compression is None:
        raise ValueError("compression_level needs a compression codec ('lz4' or 'zstd')")
    lo, hi = _LEVELS[compression]
    if not isinstance(level, int) or not lo <= level <= hi:
        raise ValueError(f"compression_level for {compression} must be an integer in "
                         f"[{lo}, {hi}], got {level!r}")
    return level


class IpcWriteOptions:
    """How to write IPC streams and files (pyarrow.ipc.IpcWriteOptions).

    `compression` is None, "lz4" or "zstd" (any case), or a codec object such as
    ``pyarrow.Codec("zstd", compression_level=5)`` whose level is kept. Beyond pyarrow:
    `compression_level`, `compression_threshold` (buffers smaller than this many bytes are stored
    raw), `min_space_savings` (a buffer is stored raw unless compression saves this fraction) and
    `alignment` of body buffers (8, 16, 32 or 64).
    """

    def __init__(self, metadata_version: MetadataVersion | int = MetadataVersion.V5, *,
                 allow_64bit: bool = False, use_legacy_format: bool = False,
                 compression: str | Any | None = None, use_threads: bool = True,
                 emit_dictionary_deltas: bool = False, unify_dictionaries: bool = False,
                 alignment: int = 8, compression_level: int | None = None,
                 compression_threshold: int = 0, min_space_savings: float | None = None) -> None:
        self.metadata_version = metadata_version
        self.allow_64bit = allow_64bit
        self.use_legacy_format = use_legacy_format
        self.compression = compression
        if compression_level is not None:
            self.compression_level = _check_level(self._compression, compression_level)
        if int(compression_threshold) < 0:
            raise ValueError(f"compression_threshold must be >= 0 bytes, got {compression_threshold}")
        self.compression_threshold = int(compression_threshold)
        if min_space_savings is not None and not 0.0 <= float(min_space_savings) <= 1.0:
            raise ValueError(f"min_space_savings must be in [0, 1], got {min_space_savings}")
        self.min_space_savings = None if min_space_savings is None else float(min_space_savings)
        self.use_threads = use_threads
        self.emit_dictionary_deltas = emit_dictionary_deltas
        self.unify_dictionaries = unify_dictionaries
        if alignment not in (8, 16, 32, 64):
            raise ValueError(f"alignment must be 8, 16, 32 or 64, got {alignment}")
        self.alignment = alignment

    @property
    def metadata_version(self) -> MetadataVersion:
        """The metadata version written (V4 or V5)."""
        return self._metadata_version

    @metadata_version.setter
    def metadata_version(self, value: MetadataVersion | int) -> None:
        if not isinstance(value, (MetadataVersion, int)) or isinstance(value, bool):
            raise TypeError(f"metadata_version must be a MetadataVersion, not "
                            f"{type(value).__name__}")
        value = MetadataVersion(_enum_value(value))
        if value < MetadataVersion.V4:
            raise ArrowInvalid(f"can write metadata V4 or V5, not {value.name}")
        self._metadata_version = value

    @property
    def compression(self) -> str | None:
        """The body compression codec: None, "lz4" or "zstd"."""
        return self._compression

    @compression.setter
    def compression(self, value: str | Any | None) -> None:
        self._compression, level = _codec_parts(value)
        self.compression_level = _check_level(self._compression, level)

    if TYPE_CHECKING:                   # the flags below, as type checkers should see them
        allow_64bit: bool
        use_legacy_format: bool
        use_threads: bool
        emit_dictionary_deltas: bool
        unify_dictionaries: bool

    for _flag in ("allow_64bit", "use_legacy_format", "use_threads", "emit_dictionary_deltas",
                  "unify_dictionaries"):
        locals()[_flag] = property(
            (lambda name: lambda self: getattr(self, "_" + name))(_flag),
            (lambda name: lambda self, v: setattr(self, "_" + name, bool(v)))(_flag),
            doc=f"The {_flag} flag (a bool).")
    del _flag

    def __repr__(self) -> str:
        compression = "" if self.compression is None else f' compression="{self.compression}"'
        return (f"<arrowipc.ipc.IpcWriteOptions allow_64bit={self.allow_64bit} "
                f"use_legacy_format={self.use_legacy_format} "
                f"metadata_version={self.metadata_version.name}{compression} "
                f"use_threads={self.use_threads} "
                f"emit_dictionary_deltas={self.emit_dictionary_deltas} "
                f"unify_dictionaries={self.unify_dictionaries} alignment={self.alignment}>")


def _enum_value(value: int) -> int:
    # pyarrow's own enums are IntEnums too: take the number, whatever the class
    return int(value)


class IpcReadOptions:
    """How to read IPC streams and files (pyarrow.ipc.IpcReadOptions), with the bounds that make
    reading untrusted input safe.

    Validation levels (`validate=`):

    * ``"structural"`` (default): everything needed so that no later access (to_pylist,
      to_numpy, export to pyarrow, slicing) can read out of bounds or loop forever. Sizes are
      checked while a batch is assembled; the O(n) passes (offsets, views, list views, union ids,
      run ends, dictionary indices) run, with the GIL released, before any column data of the
      batch is handed out.
    * ``"full"``: structural plus value checks (UTF-8, decimal precision, null counts, map keys,
      time ranges, ... -- what pyarrow's ``validate(full=True)`` checks), run eagerly: the reader
      raises on the batch itself.
    * ``"none"``: no O(n) checks at all. Only for TRUSTED input: a malformed stream can then make
      later accesses read out of bounds.

    A stream must end with its end-of-stream marker: a stream that stops at a message boundary
    without one raises ArrowInvalid (after every complete batch) unless
    ``allow_missing_eos=True`` (pyarrow's behaviour).

    Files read through a file object or a filesystem fetch only the byte ranges a read needs;
    ``hole_size_limit`` and ``range_size_limit`` (pyarrow's CacheOptions names and defaults) say
    how those ranges are merged: neighbours at most ``hole_size_limit`` bytes apart become one
    request, as long as it stays within ``range_size_limit`` bytes.

    URLs read over HTTP(S) or S3 (without a `filesystem=` of the caller's, whose own settings
    then also apply) wait at most ``connect_timeout`` seconds (default 10) to connect and
    ``read_timeout`` seconds (default 60) for a response's headers and for each MiB of its
    body; past either, the read fails with a TimeoutError naming the URL.
    """

    def __init__(self, ensure_native_endian: bool = True, *,
                 ensure_alignment: Alignment | int = Alignment.Any, use_threads: bool = True,
                 included_fields: Iterable[int] | None = None, validate: str = "structural",
                 allow_missing_eos: bool = False, max_metadata_size: int = MAX_METADATA_SIZE,
                 max_nesting_depth: int = MAX_NESTING_DEPTH, max_fields: int = MAX_FIELDS,
                 max_buffers: int = MAX_BUFFERS, max_variadic_buffers: int = MAX_VARIADIC_BUFFERS,
                 max_decompressed_size: int = MAX_DECOMPRESSED_SIZE,
                 hole_size_limit: int = HOLE_SIZE_LIMIT,
                 range_size_limit: int = RANGE_SIZE_LIMIT,
                 connect_timeout: float = CONNECT_TIMEOUT,
                 read_timeout: float = READ_TIMEOUT) -> None:
        self.ensure_native_endian = ensure_native_endian
        self.ensure_alignment = ensure_alignment
        self.use_threads = use_threads
        self.included_fields = [] if included_fields is None else included_fields
        if validate not in VALIDATION_LEVELS:
            raise ValueError(f"validate must be one of {', '.join(map(repr, VALIDATION_LEVELS))}; "
                             f"got {validate!r}")
        self.validate = validate
        self.allow_missing_eos = bool(allow_missing_eos)
        self.max_metadata_size = _positive("max_metadata_size", max_metadata_size)
        self.max_nesting_depth = _positive("max_nesting_depth", max_nesting_depth)
        if self.max_nesting_depth > MAX_NESTING_DEPTH:
            raise ValueError(f"max_nesting_depth can be at most {MAX_NESTING_DEPTH}, "
                             f"got {max_nesting_depth}")
        self.max_fields = _positive("max_fields", max_fields)
        self.max_buffers = _positive("max_buffers", max_buffers)
        self.max_variadic_buffers = _positive("max_variadic_buffers", max_variadic_buffers)
        self.max_decompressed_size = _positive("max_decompressed_size", max_decompressed_size)
        self.hole_size_limit = int(hole_size_limit)
        if self.hole_size_limit < 0:
            raise ValueError(f"hole_size_limit must be >= 0 bytes, got {hole_size_limit}")
        self.range_size_limit = _positive("range_size_limit", range_size_limit)
        self.connect_timeout = _seconds("connect_timeout", connect_timeout)
        self.read_timeout = _seconds("read_timeout", read_timeout)

    @property
    def included_fields(self) -> list[int]:
        """Indices of the top-level fields to read; empty (the default) reads them all."""
        return list(self._included_fields)

    @included_fields.setter
    def included_fields(self, value: Iterable[int]) -> None:
        if value is None or isinstance(value, (str, bytes)) or not hasattr(value, "__iter__"):
            raise TypeError(f"included_fields must be a list of field indices, not "
                            f"{type(value).__name__}")
        out: list[int] = []
        for i in value:
            if not isinstance(i, int) or isinstance(i, bool):
                raise TypeError(f"included_fields must hold field indices (int), found "
                                f"{type(i).__name__}")
            out.append(i)
        self._included_fields = out

    @property
    def ensure_alignment(self) -> Alignment:
        """The Alignment read buffers are brought to."""
        return self._ensure_alignment

    @ensure_alignment.setter
    def ensure_alignment(self, value: Alignment | int) -> None:
        if not isinstance(value, int) or isinstance(value, bool):
            raise TypeError(f"ensure_alignment must be an Alignment, not {type(value).__name__}")
        self._ensure_alignment = Alignment(int(value))

    if TYPE_CHECKING:                   # the flags below, as type checkers should see them
        ensure_native_endian: bool
        use_threads: bool

    for _flag in ("ensure_native_endian", "use_threads"):
        locals()[_flag] = property(
            (lambda name: lambda self: getattr(self, "_" + name))(_flag),
            (lambda name: lambda self, v: setattr(self, "_" + name, bool(v)))(_flag),
            doc=f"The {_flag} flag (a bool).")
    del _flag

    def __repr__(self) -> str:
        return (f"<arrowipc.ipc.IpcReadOptions ensure_native_endian={self.ensure_native_endian} "
                f"ensure_alignment={self.ensure_alignment.name} use_threads={self.use_threads} "
                f"included_fields={self.included_fields} validate={self.validate!r}>")


def _seconds(name: str, value: float) -> float:
    seconds = float(value)
    if not seconds > 0 or seconds == float("inf"):
        raise ValueError(f"{name} must be a positive number of seconds, got {value!r}")
    return seconds


def _positive(name: str, value: int) -> int:
    value = int(value)
    if value <= 0:
        raise ValueError(f"{name} must be a positive number, got {value}")
    return value


class ReadStats(NamedTuple):
    """What a reader has read so far (pyarrow.ipc.ReadStats): a snapshot."""
    num_messages: int = 0
    num_record_batches: int = 0
    num_dictionary_batches: int = 0
    num_dictionary_deltas: int = 0
    num_replaced_dictionaries: int = 0


class IOStats(NamedTuple):
    """What a reader asked of a file object or filesystem (not in pyarrow): bytes fetched and
    requests made; both 0 for bytes, buffers and memory maps, which need no I/O."""
    bytes_read: int = 0
    read_requests: int = 0


class WriteStats(NamedTuple):
    """What a writer has written so far (pyarrow.ipc.WriteStats): a snapshot."""
    num_messages: int = 0
    num_record_batches: int = 0
    num_dictionary_batches: int = 0
    num_dictionary_deltas: int = 0
    num_replaced_dictionaries: int = 0


@dataclass
class WriteCounters:
    """The writer's counters, with the body sizes before and after compression (not part of
    pyarrow's WriteStats, available as `writer.body_sizes`)."""
    num_messages: int = 0
    num_record_batches: int = 0
    num_dictionary_batches: int = 0
    num_dictionary_deltas: int = 0
    num_replaced_dictionaries: int = 0
    total_raw_body_size: int = 0
    total_serialized_body_size: int = 0

    def snapshot(self) -> WriteStats:
        """The counters now, as pyarrow's WriteStats."""
        return WriteStats(*(getattr(self, f) for f in WriteStats._fields))


def as_read_options(options: Any) -> IpcReadOptions:
    """`options` as IpcReadOptions: None (the defaults), ours, or an object with pyarrow's
    IpcReadOptions attributes (pyarrow's own options, duck-typed). Anything else: TypeError."""
    if options is None:
        # the defaults' attributes, checked once (a fresh object: a reader's options may be
        # changed by its caller); building them again costs more than framing a small batch
        fresh = IpcReadOptions.__new__(IpcReadOptions)
        fresh.__dict__.update(_DEFAULT_READ_STATE)
        return fresh
    if isinstance(options, IpcReadOptions):
        return options
    if all(hasattr(options, a) for a in ("ensure_native_endian", "use_threads",
                                           "included_fields")):
        return IpcReadOptions(options.ensure_native_endian,
                              ensure_alignment=int(getattr(options, "ensure_alignment", 0)),
                              use_threads=options.use_threads,
                              included_fields=list(options.included_fields or []))
    raise TypeError(f"options must be an IpcReadOptions, not {type(options).__name__}")


def as_write_options(options: Any, use_legacy_format: bool | None = None) -> IpcWriteOptions:
    """The IpcWriteOptions a writer uses: a copy of `options` (ours, or pyarrow's duck-typed) with
    `use_legacy_format` applied when given, or when `options` is None the defaults that the ARROW_PRE_0_15_IPC_FORMAT (legacy framing) and
    ARROW_PRE_1_0_METADATA_VERSION (metadata V4) environment variables change, as in pyarrow."""
    if options is None:
        if use_legacy_format is None:
            use_legacy_format = bool(int(os.environ.get("ARROW_PRE_0_15_IPC_FORMAT", "0")))
        version = (MetadataVersion.V4 if int(os.environ.get("ARROW_PRE_1_0_METADATA_VERSION", "0"))
                   else MetadataVersion.V5)
        return IpcWriteOptions(version, use_legacy_format=use_legacy_format)
    names = ("metadata_version", "allow_64bit", "use_legacy_format", "compression", "use_threads",
             "emit_dictionary_deltas", "unify_dictionaries")
    if isinstance(options, IpcWriteOptions):
        out = IpcWriteOptions.__new__(IpcWriteOptions)
        out.__dict__.update(options.__dict__)
    elif all(hasattr(options, a) for a in names):
        out = IpcWriteOptions(int(options.metadata_version),
                              **{a: getattr(options, a) for a in names[1:]})
    else:
        raise TypeError(f"options must be an IpcWriteOptions, not {type(options).__name__}")
    if use_legacy_format is not None:       # pyarrow refuses both; we let the keyword win
        out.use_legacy_format = use_legacy_format
    return out


_DEFAULT_READ_STATE = dict(vars(IpcReadOptions()))
