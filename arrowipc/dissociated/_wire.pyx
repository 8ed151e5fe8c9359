# cython: language_level=3
"""Wire helpers of the Dissociated IPC protocol (Arrow format/DissociatedIPC), without I/O.

Metadata messages: a 5-byte prefix (type, then the uint32 sequence number, little-endian) and the
flatbuffer bytes of an IPC Message. Body messages carry a uint64 tag: the sequence number in bits
0-31, the body type in bits 56-63, bits 32-55 reserved: zero when we send them, and a tag with
any of them set is refused when we read it. Type-1 bodies and free_data messages are
little-endian uint64 lists. Our transport framing (a 24-byte header per frame) lives here too.

Everything read from the wire is checked before use; every violation raises ArrowInvalid naming
what was expected and what was found.
"""
from libc.stdint cimport uint8_t, uint32_t, uint64_t, int64_t
from cpython.bytes cimport PyBytes_FromStringAndSize, PyBytes_AS_STRING
from cpython.buffer cimport PyObject_GetBuffer, PyBuffer_Release, PyBUF_ANY_CONTIGUOUS
from cpython.bytearray cimport PyByteArray_AS_STRING, PyByteArray_GET_SIZE
from libc.string cimport memcpy

from arrowipc._core.buffer cimport Buffer, py_buffer, allocate
from arrowipc.errors import ArrowInvalid

MESSAGE_END_OF_STREAM = 0
MESSAGE_METADATA = 1
BODY_BYTES = 0
BODY_SHARED = 1
PREFIX_SIZE = 5
BODY_TYPE_SHIFT = 56
LEGACY_BODY_TYPE_SHIFT = 55          # what the spec's diagrams and the C++ example use
TAG_SEQUENCE_MASK = 0xFFFFFFFF
SEQUENCE_MODULUS = 1 << 32

# Our framing: kind u8, version u8 (1), 6 zero bytes, tag u64, payload length u64.
cdef enum:                 # (for the C code here; the Python names below are these)
    _HEADER = 24
    _VERSION = 1
    _MESSAGE = 1
    _TAGGED = 2
    _LAST_KIND = 8
FRAME_HEADER_SIZE = _HEADER
FRAME_VERSION = _VERSION
FRAME_MESSAGE = _MESSAGE   # untagged message (metadata stream)
FRAME_TAGGED = _TAGGED     # tagged message (bodies; want_data and free_data from the client)
FRAME_HELLO = 3            # client -> server: what the client can map
FRAME_ERROR = 4            # server -> client: code and text, then the server closes
FRAME_SEGMENT = 5          # server -> client: a shared-memory segment (fd attached, or a name)
FRAME_STREAM_END = 6       # server -> client: nothing more for this stream on this connection
FRAME_SEGMENT_ACK = 7      # client -> server: a named segment is mapped; its name can go
FRAME_PEER = _LAST_KIND    # server -> client: a probe of its memory; client -> server: the result
FRAME_KIND_NAMES = {1: "message", 2: "tagged message", 3: "hello", 4: "error", 5: "segment",
                    6: "stream end", 7: "segment ack",
                    8: "peer memory"}

DEF MASK32 = 0xFFFFFFFF
DEF RESERVED_BITS = 0x00FFFFFF00000000      # bits 32-55
DEF RESERVED_BITS_55 = 0x007FFFFF00000000   # bits 32-54 (the shift-55 form)
DEF HALF_RANGE = 0x80000000


cdef inline uint32_t as_u32(object value, str what) except? 0:
    if not 0 <= value <= MASK32:
        raise ArrowInvalid(f"{what} must be a uint32 (0..{MASK32}), got {value}")
    return <uint32_t>value


cdef inline uint64_t as_u64(object value, str what) except? 0:
    if not 0 <= value <= 0xFFFFFFFFFFFFFFFF:
        raise ArrowInvalid(f"{what} must be a uint64 (0..2**64-1), got {value}")
    return <uint64_t>value


# -- metadata messages ---------------------------------------------------------------------------

def metadata_prefix(int kind, object sequence):
    """The 5-byte prefix: message type (0 end of stream, 1 IPC metadata), then the sequence."""
    if kind != MESSAGE_END_OF_STREAM and kind != MESSAGE_METADATA:
        raise ArrowInvalid(f"metadata message type must be 0 or 1, got {kind}")
    cdef uint32_t seq = as_u32(sequence, "sequence number")
    cdef bytes out = PyBytes_FromStringAndSize(NULL, 5)
    cdef uint8_t* p = <uint8_t*>PyBytes_AS_STRING(out)
    p[0] = <uint8_t>kind
    put_u32(p + 1, seq)
    return out


def end_of_stream_message(object sequence):
    """The exactly-5-byte end-of-stream message carrying the next unused sequence number."""
    return metadata_prefix(MESSAGE_END_OF_STREAM, sequence)


def parse_metadata_message(object payload):
    """(type, sequence, flatbuffer Buffer or None) of an untagged message.

    The end-of-stream message must be exactly 5 bytes; a metadata message must carry a flatbuffer.
    """
    cdef Buffer b = py_buffer(payload)
    cdef int64_t n = b.size
    if n < 5:
        raise ArrowInvalid(f"metadata message of {n} bytes is shorter than its 5-byte prefix "
                           f"(type, uint32 sequence number)")
    cdef int kind = b.ptr[0]
    cdef uint32_t seq = get_u32(b.ptr + 1)
    if kind == MESSAGE_END_OF_STREAM:
        if n != 5:
            raise ArrowInvalid(f"end-of-stream message (sequence {seq}) has {n} bytes; expected "
                               f"exactly 5")
        return kind, seq, None
    if kind == MESSAGE_METADATA:
        if n == 5:
            raise ArrowInvalid(f"metadata message with sequence {seq} has no flatbuffer after its "
                               f"5-byte prefix")
        return kind, seq, b.slice(5, n - 5)
    raise ArrowInvalid(f"metadata message with sequence {seq} has type {kind}; expected 0 (end "
                       f"of stream) or 1 (IPC metadata)")


# -- body tags -------------------------------------------------------------------------------------

def body_tag(object sequence, int body_type, int shift=BODY_TYPE_SHIFT):
    """The uint64 tag of a body message: sequence in bits 0-31, body type from bit `shift` (56 per
    the spec's text; 55 only to talk to peers built on the C++ example)."""
    cdef uint32_t seq = as_u32(sequence, "sequence number")
    if not 0 <= body_type <= 255:
        raise ArrowInvalid(f"body type must fit in 8 bits, got {body_type}")
    if shift != BODY_TYPE_SHIFT and shift != LEGACY_BODY_TYPE_SHIFT:
        raise ArrowInvalid(f"body type shift must be 56 (the spec) or 55 (compatibility), got "
                           f"{shift}")
    return (<uint64_t>body_type << shift) | seq


def parse_body_tag(object tag, bint accept_shift55=False):
    """(sequence, body type) of a body tag.

    The sequence number is bits 0-31 and the body type the most significant byte; bits 32-55 are
    reserved and MUST be 0 (docs/PROTOCOL.md §1): a tag with any of them set is an ArrowInvalid
    naming it. With accept_shift55, a tag whose high bits are all zero except from bit 55 on is
    read as the C++ example's form (body type = tag >> 55); a tag with bit 55 clear reads the
    same either way.
    """
    cdef uint64_t t = as_u64(tag, "body tag")
    cdef uint32_t seq = <uint32_t>(t & MASK32)
    cdef uint64_t reserved = t & RESERVED_BITS
    if reserved == 0:
        return seq, <int>(t >> 56)
    if accept_shift55 and (t & RESERVED_BITS_55) == 0 and (t >> 63) == 0:
        return seq, <int>(t >> 55)
    hint = ""
    if (t & RESERVED_BITS_55) == 0 and not accept_shift55:
        hint = " (only bit 55 is set: a shift-55 tag as in the C++ example? enable accept_shift55)"
    raise ArrowInvalid(f"body tag 0x{t:016x} (sequence {seq}) has reserved bits 32-55 set "
                       f"(0x{reserved:016x}); the protocol requires them to be 0{hint}")


# -- type-1 bodies and free_data -----------------------------------------------------------------

cdef bytes new_shared_body(object total, int64_t n):
    """A type-1 body of n pairs with its total size and count written; the pairs to fill in at
    16 + 16 i."""
    cdef bytes out = PyBytes_FromStringAndSize(NULL, 16 + 16 * n)
    cdef uint8_t* p = <uint8_t*>PyBytes_AS_STRING(out)
    put_u64(p, as_u64(total, "type-1 total size"))
    put_u64(p + 8, <uint64_t>n)
    return out


def encode_shared_body(object total, list pairs):
    """Type-1 body: uint64 total size, uint64 count n, then n (address/offset, length) pairs."""
    cdef int64_t n = len(pairs)
    cdef bytes out = new_shared_body(total, n)
    cdef uint8_t* p = <uint8_t*>PyBytes_AS_STRING(out)
    cdef int64_t i
    for i in range(n):
        address, length = pairs[i]
        put_u64(p + 16 + 16 * i, as_u64(address, f"address of buffer {i}"))
        put_u64(p + 24 + 16 * i, as_u64(length, f"length of buffer {i}"))
    return out


def encode_placed_body(object total, uint64_t base, list spans):
    """A body laid out from type-1 address `base` (its buffers at the (offset, length) `spans`):
    (its type-1 body as encode_shared_body gives it, the address of every pair). An empty
    buffer's address is the base."""
    cdef int64_t n = len(spans), i
    cdef bytes out = new_shared_body(total, n)
    cdef uint8_t* p = <uint8_t*>PyBytes_AS_STRING(out)
    cdef uint64_t offset, length, address
    cdef list addresses = []
    for i in range(n):
        offset, length = spans[i]
        address = base + offset if length else base
        if address < base:
            raise ArrowInvalid(f"buffer {i} at offset {offset} lies past the address space")
        put_u64(p + 16 + 16 * i, address)
        put_u64(p + 24 + 16 * i, length)
        addresses.append(address)
    return out, addresses


def parse_shared_body(object payload, object sequence=None):
    """(total size, [(address, length), ...]) of a type-1 body; sizes are checked exactly."""
    cdef Buffer b = py_buffer(payload)
    cdef int64_t size = b.size
    where = f"type-1 body of sequence {sequence}" if sequence is not None else "type-1 body"
    if size < 16:
        raise ArrowInvalid(f"{where} has {size} bytes; expected at least 16 (total size, buffer "
                           f"count)")
    cdef uint64_t total = get_u64(b.ptr)
    cdef uint64_t n = get_u64(b.ptr + 8)
    cdef uint64_t room = <uint64_t>(size - 16) // 16
    if n > room or (<uint64_t>(size - 16)) != n * 16:
        raise ArrowInvalid(f"{where} declares {n} buffers, which need {16} + 16 x {n} bytes; the "
                           f"body has {size}")
    cdef list pairs = []
    cdef uint64_t i
    for i in range(n):
        pairs.append((get_u64(b.ptr + 16 + 16 * i), get_u64(b.ptr + 24 + 16 * i)))
    return total, pairs


def encode_free_data(list addresses):
    """A free_data body: one or more little-endian uint64 addresses/offsets."""
    cdef int64_t n = len(addresses), i
    if n == 0:
        raise ArrowInvalid("a free_data message lists at least one address")
    cdef bytes out = PyBytes_FromStringAndSize(NULL, 8 * n)
    cdef uint8_t* p = <uint8_t*>PyBytes_AS_STRING(out)
    for i in range(n):
        put_u64(p + 8 * i, as_u64(addresses[i], "free_data address"))
    return out


def parse_free_data(object payload):
    """The addresses of a free_data body (a non-empty multiple of 8 bytes)."""
    cdef Buffer b = py_buffer(payload)
    cdef int64_t size = b.size, i
    if size == 0 or size % 8 != 0:
        raise ArrowInvalid(f"free_data message has {size} bytes; expected a non-zero multiple of 8 "
                           f"(uint64 addresses)")
    return [get_u64(b.ptr + 8 * i) for i in range(size // 8)]


# -- sequence numbers ------------------------------------------------------------------------------

def unwrap_sequence(object sequence, object first, int64_t next_index):
    """The position in the stream (0 = the schema) of a uint32 sequence number.

    Position i carries sequence (first + i) mod 2**32. The number is read relative to the next
    position the reader waits for: up to 2**31 - 1 ahead, otherwise behind (a negative result
    means before the start of the stream).
    """
    cdef uint32_t seq = as_u32(sequence, "sequence number")
    cdef uint32_t base = as_u32(first, "first sequence number")
    if next_index < 0:
        raise ArrowInvalid(f"next position must be >= 0, got {next_index}")
    cdef uint32_t expected = <uint32_t>((base + <uint64_t>next_index) & MASK32)
    cdef uint32_t ahead = <uint32_t>((<uint64_t>seq - expected) & MASK32)
    if ahead < HALF_RANGE:
        return next_index + ahead
    return next_index - <int64_t>((<uint64_t>1 << 32) - ahead)


def sequence_at(object first, int64_t index):
    """The uint32 sequence number of position `index` (wraps after UINT32_MAX)."""
    cdef uint32_t base = as_u32(first, "first sequence number")
    if index < 0:
        raise ArrowInvalid(f"stream position must be >= 0, got {index}")
    return <uint32_t>((base + <uint64_t>index) & MASK32)


# -- our framing -----------------------------------------------------------------------------------

def frame_header(int kind, object tag, object length):
    """The 24-byte header of one frame of our stream-socket framing."""
    if kind not in FRAME_KIND_NAMES:
        raise ArrowInvalid(f"unknown frame kind {kind}")
    cdef bytes out = PyBytes_FromStringAndSize(NULL, 24)
    cdef uint8_t* p = <uint8_t*>PyBytes_AS_STRING(out)
    cdef int i
    p[0] = <uint8_t>kind
    p[1] = FRAME_VERSION
    for i in range(2, 8):
        p[i] = 0
    put_u64(p + 8, as_u64(tag, "frame tag"))
    put_u64(p + 16, as_u64(length, "frame length"))
    return out


cdef int header_fault(const uint8_t* p) noexcept:
    """0 when the 24 header bytes at p are well-formed; otherwise what is wrong: -1 the version,
    -2 the kind, or the index (2..7) of a reserved byte that is not zero."""
    cdef int i
    if p[1] != _VERSION:
        return -1
    if p[0] < _MESSAGE or p[0] > _LAST_KIND:
        return -2
    for i in range(2, 8):
        if p[i] != 0:
            return i
    return 0


def gather_frames(list frames):
    """(gather list, bytes) for sending frames [(kind, tag, parts)] in one sendmsg: each frame's
    header, then its non-empty parts (any contiguous buffers), as they are."""
    cdef list iov = []
    cdef Py_buffer view
    cdef int64_t length, total = 0
    cdef Py_ssize_t at, n
    for kind, tag, parts in frames:
        at = len(iov)
        iov.append(None)                # the header, once the frame's length is known
        length = 0
        for part in parts:
            PyObject_GetBuffer(part, &view, PyBUF_ANY_CONTIGUOUS)
            n = view.len
            PyBuffer_Release(&view)
            if n:
                iov.append(part)
                length += n
        iov[at] = frame_header(kind, tag, length)
        total += _HEADER + length
    return iov, total


def take_frame(bytearray buf, Py_ssize_t pos, Py_ssize_t end, uint64_t max_frame,
               uint64_t max_message, uint64_t max_control):
    """The frame at buf[pos:end] as (kind, tag, payload Buffer (a copy), where the frame ends),
    when it is all there and receive() takes it as it is; None otherwise (fewer bytes, or a header
    or length to refuse: the transport's checked path reads and reports those)."""
    if pos < 0 or end > PyByteArray_GET_SIZE(buf) or end - pos < _HEADER:
        return None
    cdef const uint8_t* p = <const uint8_t*>PyByteArray_AS_STRING(buf) + pos
    if header_fault(p):
        return None
    cdef int kind = p[0]
    cdef uint64_t tag = get_u64(p + 8)
    cdef uint64_t length = get_u64(p + 16)
    if length > max_frame or length > <uint64_t>(end - pos - _HEADER) or \
            (kind > _TAGGED and length > max_control) or \
            (kind == _MESSAGE and length > max_message):
        return None
    cdef Buffer out = allocate(<int64_t>length, False)
    if length:
        memcpy(<void*>out.ptr, p + _HEADER, <size_t>length)
    return kind, tag, out, pos + _HEADER + <Py_ssize_t>length


def parse_frame_header(object data, object max_length):
    """(kind, tag, payload length) of a frame header, refusing lengths above max_length."""
    cdef Buffer b = py_buffer(data)
    if b.size != 24:
        raise ArrowInvalid(f"frame header has {b.size} bytes; expected 24")
    cdef int kind = b.ptr[0]
    cdef int fault = header_fault(b.ptr)
    if fault == -1:
        raise ArrowInvalid(f"frame header version {b.ptr[1]}; expected {FRAME_VERSION} (not an "
                           f"arrowipc dissociated peer?)")
    if fault == -2:
        raise ArrowInvalid(f"unknown frame kind {kind}; expected 1..{_LAST_KIND}")
    if fault:
        raise ArrowInvalid(f"frame header byte {fault} is {b.ptr[fault]}; reserved bytes must be "
                           f"zero")
    cdef uint64_t tag = get_u64(b.ptr + 8)
    cdef uint64_t length = get_u64(b.ptr + 16)
    cdef uint64_t limit = as_u64(max_length, "frame length limit")
    if length > limit:
        raise ArrowInvalid(f"{FRAME_KIND_NAMES[kind]} frame claims {length} bytes; the limit is "
                           f"{limit}")
    return kind, tag, length
