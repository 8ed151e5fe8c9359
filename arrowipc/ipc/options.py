"""IPC options and statistics, with pyarrow's names and defaults."""
from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Iterable

from ..errors import ArrowInvalid
from .format import COMPRESSION_IDS as COMPRESSION_CODECS
from .format import (MAX_BUFFERS, MAX_DECOMPRESSED_SIZE, MAX_FIELDS, MAX_METADATA_SIZE,  # noqa: F401
                     MAX_NESTING_DEPTH, MAX_VARIADIC_BUFFERS)

__all__ = ["IpcReadOptions", "IpcWriteOptions", "MetadataVersion", "ReadStats", "WriteStats",
           "COMPRESSION_CODECS", "VALIDATION_LEVELS", "MAX_BUFFERS", "MAX_DECOMPRESSED_SIZE",
           "MAX_FIELDS", "MAX_METADATA_SIZE", "MAX_NESTING_DEPTH", "MAX_VARIADIC_BUFFERS"]


class MetadataVersion(enum.IntEnum):
    """The IPC metadata version (the flatbuffers' `MetadataVersion`): V4 and V5 are written."""
    V1 = 0
    V2 = 1
    V3 = 2
    V4 = 3
    V5 = 4



VALIDATION_LEVELS = ("structural", "full", "none")


def _check_compression(compression: object) -> str | None:
    if compression is not None and not isinstance(compression, str):
        compression = getattr(compression, "name", compression)
    if isinstance(compression, str):
        compression = compression.lower()
    if compression not in COMPRESSION_CODECS:
        raise ValueError(f"compression must be one of None, 'lz4', 'lz4_frame', 'zstd'; got {compression!r}")
    return compression


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
    """How to write IPC streams and files (pyarrow.ipc.IpcWriteOptions)."""

    def __init__(self, *, metadata_version: MetadataVersion | int = MetadataVersion.V5,
                 allow_64bit: bool = False, use_legacy_format: bool = False,
                 compression: str | None = None, use_threads: bool = True,
                 emit_dictionary_deltas: bool = False, unify_dictionaries: bool = False,
                 alignment: int = 64, compression_level: int | None = None,
                 compression_threshold: int = 0, min_space_savings: float | None = None) -> None:
        self.metadata_version = MetadataVersion(metadata_version)
        if self.metadata_version < MetadataVersion.V4:
            raise ArrowInvalid(f"can write metadata V4 or V5, not {self.metadata_version.name}")
        self.allow_64bit = bool(allow_64bit)
        self.use_legacy_format = bool(use_legacy_format)
        self.compression = _check_compression(compression)
        self.compression_level = _check_level(self.compression, compression_level)
        if int(compression_threshold) < 0:
            raise ValueError(f"compression_threshold must be >= 0 bytes, got {compression_threshold}")
        # buffers smaller than this many bytes are stored raw (prefix -1)
        self.compression_threshold = int(compression_threshold)
        if min_space_savings is not None and not 0.0 <= float(min_space_savings) <= 1.0:
            raise ValueError(f"min_space_savings must be in [0, 1], got {min_space_savings}")
        # a buffer is stored raw unless compression saves at least this fraction of its size
        self.min_space_savings = None if min_space_savings is None else float(min_space_savings)
        self.use_threads = bool(use_threads)
        self.emit_dictionary_deltas = bool(emit_dictionary_deltas)
        self.unify_dictionaries = bool(unify_dictionaries)
        if alignment not in (8, 16, 32, 64):
            raise ValueError(f"alignment must be 8, 16, 32 or 64, got {alignment}")
        self.alignment = alignment

    def __repr__(self) -> str:
        return (f"IpcWriteOptions(metadata_version={self.metadata_version.name}, "
                f"compression={self.compression!r}, alignment={self.alignment}, "
                f"use_threads={self.use_threads})")


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
    """

    def __init__(self, *, ensure_native_endian: bool = True, use_threads: bool = True,
                 included_fields: Iterable[int] | None = None, validate: str = "structural",
                 allow_missing_eos: bool = False, max_metadata_size: int = MAX_METADATA_SIZE,
                 max_nesting_depth: int = MAX_NESTING_DEPTH, max_fields: int = MAX_FIELDS,
                 max_buffers: int = MAX_BUFFERS, max_variadic_buffers: int = MAX_VARIADIC_BUFFERS,
                 max_decompressed_size: int = MAX_DECOMPRESSED_SIZE) -> None:
        self.ensure_native_endian = bool(ensure_native_endian)
        self.use_threads = bool(use_threads)
        self.included_fields = None if included_fields is None else [int(i) for i in included_fields]
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

    def __repr__(self) -> str:
        return (f"IpcReadOptions(validate={self.validate!r}, "
                f"ensure_native_endian={self.ensure_native_endian}, "
                f"use_threads={self.use_threads}, included_fields={self.included_fields})")


def _positive(name: str, value: int) -> int:
    value = int(value)
    if value <= 0:
        raise ValueError(f"{name} must be a positive number, got {value}")
    return value


@dataclass
class ReadStats:
    """What a reader decoded so far (pyarrow.ipc.ReadStats)."""
    num_messages: int = 0
    num_record_batches: int = 0
    num_dictionary_batches: int = 0
    num_dictionary_deltas: int = 0
    num_replaced_dictionaries: int = 0


@dataclass
class WriteStats:
    """What a writer wrote so far (pyarrow.ipc.WriteStats)."""
    num_messages: int = 0
    num_record_batches: int = 0
    num_dictionary_batches: int = 0
    num_dictionary_deltas: int = 0
    num_replaced_dictionaries: int = 0
    total_raw_body_size: int = 0
    total_serialized_body_size: int = 0
