"""Facts of the Arrow IPC format, each defined once, and `sniff()`, which names what some bytes are.

Everything here is fixed by the specification (format/*.fbs and the IPC chapter of the Arrow
columnar format) or by a variant we read (the ``ALKAID1`` file magic). Readers, writers, the CLI,
the Spark source and the Dissociated protocol import these names instead of spelling the bytes
again, so a fact cannot drift between two copies. The Cython codec (``_framing``, ``_batch_encode``)
writes the same constants as C literals; ``tests/ipc/test_format.py`` checks that they agree.
"""
from __future__ import annotations

__all__ = [
    "FILE_MAGIC", "ALKAID_MAGIC", "FILE_MAGICS", "CONTINUATION", "EOS_MARKER", "LEGACY_EOS",
    "FEATHER_V1_MAGIC", "PARQUET_MAGIC", "FOREIGN_MAGICS", "HEADER_NONE", "HEADER_SCHEMA",
    "HEADER_DICTIONARY_BATCH", "HEADER_RECORD_BATCH", "HEADER_TENSOR", "HEADER_SPARSE_TENSOR",
    "HEADER_NAMES", "CODEC_NONE", "CODEC_LZ4_FRAME",
    "CODEC_ZSTD", "CODEC_SPEC_NAMES", "CODEC_OPTION_NAMES", "COMPRESSION_IDS", "RAW_MARKER",
    "SPARSE_INDEX_COO", "SPARSE_INDEX_CSX", "SPARSE_INDEX_CSF", "SPARSE_INDEX_NAMES",
    "MAX_NESTING_DEPTH", "MAX_TENSOR_DIMENSIONS", "MAX_METADATA_SIZE", "MAX_FIELDS", "MAX_BUFFERS",
    "MAX_VARIADIC_BUFFERS", "MAX_DECOMPRESSED_SIZE", "BODY_ALIGNMENT", "FORMAT_FILE", "FORMAT_STREAM", "sniff", "file_magic",
    "foreign_format", "describe_bytes", "file_read_as_stream_hint",
]

# -- framing ---------------------------------------------------------------------------------------

FILE_MAGIC = b"ARROW1"          # leads and ends the file format (padded to 8 bytes at the start)
ALKAID_MAGIC = b"ALKAID1"       # a variant file magic, read and written like ARROW1
FILE_MAGICS = (FILE_MAGIC, ALKAID_MAGIC)
CONTINUATION = b"\xff\xff\xff\xff"          # precedes every message length since format 0.15
EOS_MARKER = CONTINUATION + b"\x00\x00\x00\x00"
LEGACY_EOS = b"\x00\x00\x00\x00"            # end of stream before 0.15: a zero length alone
BODY_ALIGNMENT = 8              # buffers start at multiples of 8 (writers use 64)

# Formats users mistake for Arrow IPC, by their leading magic: named in errors instead of a dump.
FEATHER_V1_MAGIC = b"FEA1"
PARQUET_MAGIC = b"PAR1"
FOREIGN_MAGICS = {
    FEATHER_V1_MAGIC: "a Feather V1 file (an older format than Arrow IPC: pyarrow.feather reads it)",
    PARQUET_MAGIC: "a Parquet file, not Arrow IPC",
}

# -- message metadata --------------------------------------------------------------------------------

# MetadataVersion enum of Schema.fbs
METADATA_V1, METADATA_V2, METADATA_V3, METADATA_V4, METADATA_V5 = range(5)

# MessageHeader union members of Message.fbs
HEADER_NONE, HEADER_SCHEMA, HEADER_DICTIONARY_BATCH, HEADER_RECORD_BATCH, HEADER_TENSOR, \
    HEADER_SPARSE_TENSOR = range(6)
HEADER_NAMES = {HEADER_NONE: "NONE", HEADER_SCHEMA: "Schema",
                HEADER_DICTIONARY_BATCH: "DictionaryBatch", HEADER_RECORD_BATCH: "RecordBatch",
                HEADER_TENSOR: "Tensor", HEADER_SPARSE_TENSOR: "SparseTensor"}

# Type union members of Schema.fbs
(TYPE_NONE, TYPE_NULL, TYPE_INT, TYPE_FLOAT, TYPE_BINARY, TYPE_UTF8, TYPE_BOOL, TYPE_DECIMAL,
 TYPE_DATE, TYPE_TIME, TYPE_TIMESTAMP, TYPE_INTERVAL, TYPE_LIST, TYPE_STRUCT, TYPE_UNION,
 TYPE_FIXED_SIZE_BINARY, TYPE_FIXED_SIZE_LIST, TYPE_MAP, TYPE_DURATION, TYPE_LARGE_BINARY,
 TYPE_LARGE_UTF8, TYPE_LARGE_LIST, TYPE_RUN_END_ENCODED, TYPE_BINARY_VIEW, TYPE_UTF8_VIEW,
 TYPE_LIST_VIEW, TYPE_LARGE_LIST_VIEW) = range(27)

FEATURE_UNUSED, FEATURE_DICTIONARY_REPLACEMENT, FEATURE_COMPRESSED_BODY = 0, 1, 2
ENDIAN_LITTLE, ENDIAN_BIG = 0, 1
TIME_UNIT_CODES = {"s": 0, "ms": 1, "us": 2, "ns": 3}
TIME_UNITS_BY_CODE = {v: k for k, v in TIME_UNIT_CODES.items()}

# -- resource bounds ---------------------------------------------------------------------------------

# Resource bounds for untrusted input, the defaults of IpcReadOptions. Every one is checked before
# the memory it guards is allocated.
MAX_METADATA_SIZE = 64 << 20         # bytes of one message's flatbuffer metadata
MAX_FIELDS = 100_000                 # fields of a schema, nested ones counted
MAX_BUFFERS = 1 << 20                # buffers listed by one record batch header
MAX_VARIADIC_BUFFERS = 1 << 20       # data buffers of the view columns of one record batch
MAX_DECOMPRESSED_SIZE = 1 << 32      # bytes all compressed buffers of one message decompress to
MAX_TENSOR_DIMENSIONS = 64            # dimensions of a Tensor message
MAX_NESTING_DEPTH = 64               # levels of nested types (the engine's hard limit too)

# SparseTensorIndex union members of SparseTensor.fbs
SPARSE_INDEX_COO, SPARSE_INDEX_CSX, SPARSE_INDEX_CSF = 1, 2, 3
SPARSE_INDEX_NAMES = {SPARSE_INDEX_COO: "SparseTensorIndexCOO", SPARSE_INDEX_CSX: "SparseMatrixIndexCSX",
                      SPARSE_INDEX_CSF: "SparseTensorIndexCSF"}

# -- body compression ------------------------------------------------------------------------------

CODEC_NONE = -1                 # no BodyCompression table: the body is stored raw
CODEC_LZ4_FRAME, CODEC_ZSTD = 0, 1          # CompressionType enum of Message.fbs
RAW_MARKER = -1                 # an uncompressed-length prefix of -1: this buffer is stored raw
CODEC_SPEC_NAMES = {CODEC_LZ4_FRAME: "LZ4_FRAME", CODEC_ZSTD: "ZSTD"}    # as the spec spells them
CODEC_OPTION_NAMES = {CODEC_LZ4_FRAME: "lz4", CODEC_ZSTD: "zstd"}       # as options spell them
# What IpcWriteOptions(compression=...) accepts (lower-cased), to the codec id.
COMPRESSION_IDS = {None: CODEC_NONE, "lz4": CODEC_LZ4_FRAME, "lz4_frame": CODEC_LZ4_FRAME,
                   "zstd": CODEC_ZSTD}

# -- what some bytes are ---------------------------------------------------------------------------

FORMAT_FILE = "file"
FORMAT_STREAM = "stream"


def sniff(head: bytes) -> str | None:
    """What the first bytes of an input are: ``"file"``, ``"stream"`` or None (neither).

    `head` should hold at least the first 8 bytes. A file starts with ``ARROW1`` or ``ALKAID1``;
    a stream with a continuation marker or, before format 0.15, a little-endian metadata length
    no larger than `MAX_METADATA_SIZE` (0 being the legacy end of stream). An empty input is a
    stream without messages, as pyarrow reads it.
    """
    if any(head.startswith(m) for m in FILE_MAGICS):
        return FORMAT_FILE
    if not head or head.startswith(CONTINUATION):
        return FORMAT_STREAM
    if len(head) >= 4 and foreign_format(head) is None:
        if 0 <= int.from_bytes(head[:4], "little", signed=True) <= MAX_METADATA_SIZE:
            return FORMAT_STREAM
    return None


def file_magic(head: bytes) -> bytes | None:
    """The file magic `head` starts with (``ARROW1`` or ``ALKAID1``), or None."""
    return next((m for m in FILE_MAGICS if head.startswith(m)), None)


def foreign_format(head: bytes) -> str | None:
    """What a non-Arrow input is, from its first bytes, when it is a format we can name."""
    return next((what for magic, what in FOREIGN_MAGICS.items() if head.startswith(magic)), None)


def describe_bytes(head: bytes) -> str:
    """`head` for an error message: the format it belongs to when known, else its bytes in hex."""
    what = foreign_format(head)
    return f"{what}, starting {head.hex(' ')}" if what else head.hex(" ")


def file_read_as_stream_hint(head: bytes, offset: int) -> str:
    """What a stream reader's framing error adds when the input it read at byte 0 starts with
    the file format's magic (an IPC file opened as a stream): "" otherwise."""
    magic = file_magic(head) if offset == 0 else None
    if magic is None:
        return ""
    return (f"; the input starts with the IPC file format's magic {magic.decode()!r}: it is an "
            f"IPC file, read it with ipc.open_file")
