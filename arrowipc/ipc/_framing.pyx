# cython: language_level=3
"""Encapsulated message framing and Message decoding, without I/O.

`read_frame` finds the message at a position of an in-memory buffer (continuation marker or legacy
int32 prefix, metadata, body) and returns zero-copy views; `decode_message` checks and decodes
the Message table. Both run once per message, so they live in Cython.
"""
cimport cython
from libc.stdint cimport uint8_t, int32_t, uint32_t, int64_t

from arrowipc._core.buffer cimport Buffer, slice_unchecked, py_buffer
from arrowipc.ipc._flatbuf cimport FlatTable, rd_i32, rd_i64, root_table, table_at
from arrowipc.errors import ArrowInvalid, ArrowTruncatedBody
from arrowipc.ipc.format import file_read_as_stream_hint

DEF METADATA_V4 = 3
DEF METADATA_V5 = 4

_TYPE_NAMES = {1: "schema", 2: "dictionary", 3: "record batch", 4: "tensor", 5: "sparse tensor"}
_HEADER_TABLE_NAMES = {1: "Schema", 2: "DictionaryBatch", 3: "RecordBatch", 4: "Tensor",
                       5: "SparseTensor"}


@cython.no_gc
cdef class Message:
    """One IPC message: the decoded Message table, its raw metadata and its body.

    Made by the readers and `read_message`, never by calling the class.
    """

    def __init__(self):
        raise TypeError("Do not call Message's constructor directly: use "
                        "arrowipc.ipc.read_message or MessageReader")

    @property
    def type(self):
        """The header's type name: 'schema', 'record batch', 'dictionary', ..."""
        return _TYPE_NAMES.get(self.header_type, "unknown")

    @property
    def custom_metadata(self):
        """The message's custom metadata as a dict of bytes, or None."""
        if not self._custom_decoded:
            if self._table.field_pos(4) < 0:
                return None
            from arrowipc.ipc.metadata import decode_custom_metadata
            from arrowipc.types import KeyValueMetadata
            pairs = decode_custom_metadata(self._table, 4)
            self._custom_metadata = KeyValueMetadata(pairs or {})
            self._custom_decoded = True
        return self._custom_metadata

    @property
    def metadata_version(self):
        """The metadata version as a MetadataVersion."""
        from arrowipc.ipc.options import MetadataVersion
        return MetadataVersion(self.version)

    def serialize(self, alignment=8, memory_pool=None):
        """The framed message (continuation, length, metadata padded to 8, body) as a Buffer."""
        meta = self.metadata.to_pybytes()
        pad = (-len(meta)) % 8
        out = b"\xff\xff\xff\xff" + (len(meta) + pad).to_bytes(4, "little") + meta + bytes(pad)
        if self.body is not None:
            out += self.body.to_pybytes()
        return py_buffer(out)

    def serialize_to(self, sink, alignment=8, memory_pool=None):
        """Write the framed message (as `serialize` returns it) to a file-like `sink`."""
        sink.write(self.serialize(alignment))

    def equals(self, other):
        """Whether `other` is a Message with the same metadata and body bytes: ours, or another
        library's (a pyarrow.Message: `metadata` and `body` buffers, `serialize()`)."""
        if not isinstance(other, Message) and not is_message_like(other):
            return False
        return (_bytes_of(self.metadata) == _bytes_of(other.metadata)
                and _bytes_of(self.body) == _bytes_of(other.body))

    def __repr__(self):
        return (f"<arrowipc.ipc.Message type={self.type} metadata_length={self.metadata.size} "
                f"body_length={self.body_length}>")

    def __str__(self):
        return (f"arrowipc.ipc.Message\ntype: {self.type}\nmetadata length: "
                f"{self.metadata.size}\nbody length: {self.body_length}")


cdef bytes _bytes_of(object buf):
    """A message's metadata or body buffer (ours, pyarrow's: any buffer-protocol object; None for
    no body) as bytes."""
    return b"" if buf is None else bytes(memoryview(buf))


cpdef bint is_message_like(object obj):
    """Whether `obj` is another library's IPC message object, such as a pyarrow.Message: not a
    file-like, with `metadata` and `body` buffers, a `metadata_version` and a `serialize()` that
    returns the framed message (duck-typed: arrowipc does not import pyarrow)."""
    return (not isinstance(obj, Message) and not hasattr(obj, "read")
            and callable(getattr(obj, "serialize", None)) and hasattr(obj, "metadata")
            and hasattr(obj, "body") and hasattr(obj, "metadata_version"))


cdef str _message_at(int64_t offset):
    """How an error names the message: by its byte offset when known (offset -1: not known)."""
    return f"message at byte {offset}" if offset >= 0 else "message"


cpdef Message decode_message(object metadata, int64_t offset=-1):
    """Check and decode a Message flatbuffer (body not attached)."""
    cdef Buffer meta = metadata if type(metadata) is Buffer else py_buffer(metadata)
    cdef FlatTable t = root_table(meta, "Message")
    cdef Message m = Message.__new__(Message)
    m.metadata = meta
    m.offset = offset
    m._table = t
    m.version = t.get_i16(0, 0)
    m.header_type = t.get_u8(1, 0)
    m.body_length = t.get_i64(3, 0)
    if m.version > METADATA_V5 or m.version < 0:
        raise ArrowInvalid(f"{_message_at(offset)}: metadata version V{m.version + 1} is newer "
                           f"than V5, the newest this reader understands")
    if m.version < METADATA_V4:
        raise ArrowInvalid(f"{_message_at(offset)}: metadata version V{m.version + 1} (before "
                           f"Arrow 0.8) is not supported; expected V4 or V5")
    if m.body_length < 0:
        raise ArrowInvalid(f"{_message_at(offset)}: body length {m.body_length} is negative")
    if m.header_type < 1 or m.header_type > 5:
        raise ArrowInvalid(f"{_message_at(offset)}: unknown header type {m.header_type}")
    cdef int64_t hpos = t.deref(2)
    if hpos < 0:
        raise ArrowInvalid(f"{_message_at(offset)}: {m.type} message without a header")
    m.header = table_at(meta, hpos, "RecordBatch" if m.header_type == 3 else
                        _HEADER_TABLE_NAMES[m.header_type], 1)
    m.legacy_codec = -1
    if m.version == METADATA_V4 and (m.header_type == 2 or m.header_type == 3) and \
            t.field_pos(4) >= 0:
        m.legacy_codec = _experimental_codec(m, offset)
    return m


# Arrow 0.17's codec names (any case) -> BodyCompression's codec numbers
_EXPERIMENTAL_CODECS = {"lz4": 0, "zstd": 1}


cdef int _experimental_codec(Message m, int64_t offset) except -2:
    """The codec of a V4 batch message's body under Arrow 0.17's experimental compression, or
    -1. That release compressed bodies before the format had BodyCompression, naming the codec
    in the message's custom metadata; each buffer is laid out as BodyCompression's BUFFER method
    lays it out (its uncompressed length, then the compressed bytes). Read as plain, the
    buffers would be garbage."""
    if m.header_type == 3 and m.header.field_pos(3) >= 0:
        return -1                               # BodyCompression present: it alone counts
    raw = (m.custom_metadata or {}).get(b"ARROW:experimental_compression")
    if raw is None:
        return -1
    name = raw.decode("utf-8", "replace")
    codec = _EXPERIMENTAL_CODECS.get(name.lower())
    if codec is None:
        raise ArrowInvalid(
            f"{_message_at(offset)}: {m.type} message body compressed with Arrow 0.17's "
            f"experimental compression, named {name!r} in the message's custom metadata "
            f"'ARROW:experimental_compression'; expected LZ4 or ZSTD, the codecs IPC bodies "
            f"may use")
    return codec


cdef str _file_hint(Buffer buf, int64_t pos, int64_t avail, int64_t offset):
    """An IPC file opened as a stream: format.file_read_as_stream_hint on the bytes at `pos`."""
    if offset != 0 or avail < 6:
        return ""
    return file_read_as_stream_hint((<const char *>buf.ptr + pos)[:min(avail, 8)], offset)


cpdef tuple read_frame(Buffer buf, int64_t pos, int64_t end, int64_t max_metadata, str where,
                       bint with_body=True, int64_t base=0):
    """(Message or None, next position) for the message at `pos` of buf[:end].

    None means end of stream (EOS marker, legacy zero length, or nothing left at a message
    boundary). Truncation inside a message raises ArrowInvalid naming the byte offset. `base` is
    the offset of buf[0] in the whole input (a push decoder frames a window of it): it is added
    to every offset reported, in messages and in Message.offset.
    """
    cdef int64_t avail = end - pos
    cdef int64_t start = pos
    cdef int32_t length
    cdef int64_t prefix
    if avail <= 0:
        return None, pos
    if avail < 4:
        raise ArrowInvalid(f"{where}: truncated message prefix at byte {base + start}: expected 4 bytes, "
                           f"got {avail}")
    length = rd_i32(buf.ptr + pos)
    prefix = 4
    if length == -1:
        if avail < 8:
            raise ArrowInvalid(f"{where}: truncated message length at byte {base + start + 4}: expected "
                               f"4 bytes, got {avail - 4}")
        length = rd_i32(buf.ptr + pos + 4)
        prefix = 8
    if length == 0:
        return None, pos + prefix
    if length < 0 or length > max_metadata:
        raise ArrowInvalid(f"{where}: message at byte {base + start} claims {length} bytes of metadata; "
                           f"expected 1..{max_metadata}{_file_hint(buf, pos, avail, base + start)}")
    if length > avail - prefix:
        raise ArrowInvalid(f"{where}: truncated message at byte {base + start}: expected {length} bytes "
                           f"of metadata, got {avail - prefix}")
    pos += prefix
    cdef Message m = decode_message(slice_unchecked(buf, pos, length), base + start)
    pos += length
    if not with_body:
        return m, pos
    if m.body_length > end - pos:
        # the second sentence is pyarrow's, which tests match on
        raise ArrowTruncatedBody(f"{where}: truncated {m.type} message at byte {base + start}. "
                                 f"Expected to be able to read {m.body_length} bytes for message "
                                 f"body, got {end - pos}")
    m.body = slice_unchecked(buf, pos, m.body_length)
    return m, pos + m.body_length


# -- the file footer's blocks -------------------------------------------------------------------

def file_blocks(Buffer raw, Py_ssize_t n):
    """[(offset, metadata length, body length)] of the footer's `n` Block structs in `raw` (24
    bytes each: offset int64, metadata length int32, padding, body length int64), unchecked:
    check_block checks one before it is read."""
    cdef Py_ssize_t i
    cdef const uint8_t *p = raw.ptr
    if n < 0 or raw.size < n * 24:
        raise ArrowInvalid(f"file: footer lists {n} blocks in {raw.size} bytes; expected 24 each")
    cdef list out = [None] * n
    for i in range(n):
        out[i] = (rd_i64(p + 24 * i), rd_i32(p + 24 * i + 8), rd_i64(p + 24 * i + 16))
    return out


cpdef tuple check_block(tuple block, Py_ssize_t i, str what, int64_t limit):
    """`block` (offset, metadata length, body length), the footer's entry `i` for a `what`
    ("record batch" or "dictionary"), when it lies inside the data section [8, limit) (the
    checks cannot overflow: each bound is compared with what is left below `limit`) and each of
    its three numbers is a multiple of 8."""
    cdef int64_t off = block[0], meta_len = block[1], body_len = block[2]
    if (off < 8 or meta_len <= 0 or body_len < 0 or off > limit or meta_len > limit - off
            or body_len > limit - off - meta_len):
        raise ArrowInvalid(f"file: {what} block {i} (offset {off}, metadata {meta_len}, body "
                           f"{body_len}) lies outside the data section [8, {limit})")
    if (off | meta_len | body_len) & 7:
        # pyarrow refuses such a block ("Unaligned block in IPC file"); every writer aligns them
        raise ArrowInvalid(f"file: {what} block {i} (offset {off}, metadata {meta_len}, body "
                           f"{body_len}) is not aligned to 8 bytes")
    return block
