"""Wire helpers: golden bytes for prefixes, tags, type-1 bodies, free_data and our frame header;
sequence numbers across the rollover; URIs; every malformed input raises ArrowInvalid."""
import struct

import pytest

from arrowipc.dissociated import _wire as wire
from arrowipc.dissociated.uri import (SCHEME_TCP, SCHEME_UNIX, DissociatedURI, decode_remote_handle,
                                      format_uri, parse_uri)
from arrowipc.errors import ArrowInvalid

U32_MAX = 0xFFFFFFFF


# -- metadata prefixes ----------------------------------------------------------------------------

def test_metadata_prefix_golden_bytes():
    assert wire.metadata_prefix(1, 0) == b"\x01\x00\x00\x00\x00"
    assert wire.metadata_prefix(1, 0x01020304) == b"\x01\x04\x03\x02\x01"
    assert wire.metadata_prefix(1, U32_MAX) == b"\x01\xff\xff\xff\xff"
    assert wire.end_of_stream_message(5) == b"\x00\x05\x00\x00\x00"
    assert wire.end_of_stream_message(0x80000000) == b"\x00\x00\x00\x00\x80"


def test_parse_metadata_message():
    kind, seq, fb = wire.parse_metadata_message(b"\x01\x07\x00\x00\x00flatbuffer")
    assert (kind, seq, fb.to_pybytes()) == (1, 7, b"flatbuffer")
    assert wire.parse_metadata_message(b"\x00\xfe\xff\xff\xff") == (0, U32_MAX - 1, None)


@pytest.mark.parametrize("payload, expected", [
    (b"", "shorter than its 5-byte prefix"),
    (b"\x01\x00\x00\x00", "shorter than its 5-byte prefix"),
    (b"\x00\x03\x00\x00\x00\x00", "has 6 bytes; expected exactly 5"),
    (b"\x01\x03\x00\x00\x00", "sequence 3 has no flatbuffer"),
    (b"\x02\x03\x00\x00\x00abc", r"has type 2; expected 0 \(end of stream\) or 1"),
])
def test_malformed_metadata_messages(payload, expected):
    with pytest.raises(ArrowInvalid, match=expected):
        wire.parse_metadata_message(payload)


@pytest.mark.parametrize("bad", [-1, 1 << 32])
def test_prefix_rejects_sequence_out_of_range(bad):
    with pytest.raises(ArrowInvalid, match="uint32"):
        wire.metadata_prefix(1, bad)
    with pytest.raises(ArrowInvalid, match="must be 0 or 1"):
        wire.metadata_prefix(3, 0)


# -- body tags -------------------------------------------------------------------------------------

def test_body_tag_golden_values():
    assert wire.body_tag(7, 0) == 0x0000000000000007
    assert wire.body_tag(7, 1) == 0x0100000000000007
    assert wire.body_tag(U32_MAX, 1) == 0x01000000FFFFFFFF
    assert wire.body_tag(0, 255) == 0xFF00000000000000
    # the compatibility form of the C++ example: type << 55
    assert wire.body_tag(3, 1, shift=55) == 0x0080000000000003
    # little-endian on our wire (the frame header carries it)
    assert struct.pack("<Q", wire.body_tag(0x0A0B0C0D, 1)) == b"\x0d\x0c\x0b\x0a\x00\x00\x00\x01"


def test_parse_body_tag():
    assert wire.parse_body_tag(0x0100000000000007) == (7, 1)
    assert wire.parse_body_tag(0x00000000FFFFFFFF) == (U32_MAX, 0)
    assert wire.parse_body_tag(0xFF00000000000000) == (0, 255)


@pytest.mark.parametrize("tag, reserved", [
    (1 << 32, "0x0000000100000000"),
    (0x00ABCDEF00000001 | (1 << 56), "0x00abcdef00000000"),
    ((1 << 54) | 5, "0x0040000000000000"),
])
def test_tag_with_reserved_bits_32_to_55_is_refused(tag, reserved):
    """Bits 32-55 of a body tag are reserved and MUST be 0 (the type is the top byte)."""
    with pytest.raises(ArrowInvalid, match=rf"body tag 0x{tag:016x} \(sequence "
                       rf"{tag & U32_MAX}\) has reserved bits 32-55 set \({reserved}\); the "
                       rf"protocol requires them to be 0$"):
        wire.parse_body_tag(tag)
    with pytest.raises(ArrowInvalid, match="reserved bits 32-55"):
        wire.parse_body_tag(tag, accept_shift55=True)      # not the shift-55 form either


def test_shift55_tags_only_with_the_compatibility_option():
    tag = wire.body_tag(9, 1, shift=55)
    # without the option bit 55 is a reserved bit: refused, with a hint
    with pytest.raises(ArrowInvalid, match=r"body tag 0x0080000000000009 \(sequence 9\) has "
                       r"reserved bits 32-55 set .* \(only bit 55 is set: a shift-55 tag as in "
                       r"the C\+\+ example\? enable accept_shift55\)"):
        wire.parse_body_tag(tag)
    assert wire.parse_body_tag(tag, accept_shift55=True) == (9, 1)
    # the spec's form still reads the same with the option on
    assert wire.parse_body_tag(wire.body_tag(9, 1), accept_shift55=True) == (9, 1)
    # with other bits of 32-54 set it is not the shift-55 form: refused
    with pytest.raises(ArrowInvalid, match="reserved bits 32-55 set"):
        wire.parse_body_tag(tag | (1 << 40), accept_shift55=True)


def test_body_tag_argument_checks():
    with pytest.raises(ArrowInvalid, match="8 bits"):
        wire.body_tag(0, 256)
    with pytest.raises(ArrowInvalid, match="shift"):
        wire.body_tag(0, 1, shift=48)
    with pytest.raises(ArrowInvalid, match="uint64"):
        wire.parse_body_tag(1 << 64)


# -- type-1 bodies and free_data -------------------------------------------------------------------

def test_shared_body_golden_bytes():
    payload = wire.encode_shared_body(128, [(64, 10), (0x0000010000000080, 0)])
    assert payload == bytes.fromhex(
        "8000000000000000" "0200000000000000"
        "4000000000000000" "0a00000000000000"
        "8000000000010000" "0000000000000000")
    assert wire.parse_shared_body(payload) == (128, [(64, 10), (0x0000010000000080, 0)])
    assert wire.parse_shared_body(wire.encode_shared_body(0, [])) == (0, [])


@pytest.mark.parametrize("payload, expected", [
    (b"", "has 0 bytes; expected at least 16"),
    (b"\x00" * 15, "has 15 bytes; expected at least 16"),
    (struct.pack("<QQ", 10, 1), "declares 1 buffers"),
    (struct.pack("<QQQQQ", 10, 1, 0, 10, 0), "declares 1 buffers"),
    (struct.pack("<QQQ", 10, 0, 0), "declares 0 buffers"),
    (struct.pack("<QQ", 10, 1 << 62), "declares 4611686018427387904 buffers"),
    (struct.pack("<QQ", 10, (1 << 64) - 1), "declares 18446744073709551615 buffers"),
])
def test_malformed_shared_bodies(payload, expected):
    with pytest.raises(ArrowInvalid, match=expected):
        wire.parse_shared_body(payload, 4)


def test_a_placed_body_is_the_shared_body_of_its_addresses():
    base = (7 << 40) | 4096
    spans = [(0, 0), (0, 64), (64, 0), (128, 1000)]
    payload, addresses = wire.encode_placed_body(1152, base, spans)
    pairs = [(base, 0), (base, 64), (base, 0), (base + 128, 1000)]   # an empty buffer: the base
    assert payload == wire.encode_shared_body(1152, pairs)
    assert addresses == [a for a, _ in pairs]
    assert wire.encode_placed_body(0, base, []) == (wire.encode_shared_body(0, []), [])
    with pytest.raises(ArrowInvalid, match="buffer 0 at offset 2 lies past the address space"):
        wire.encode_placed_body(8, (1 << 64) - 1, [(2, 8)])


def test_free_data_golden_bytes_and_checks():
    assert wire.encode_free_data([1, (1 << 64) - 1]) == \
        b"\x01\x00\x00\x00\x00\x00\x00\x00" + b"\xff" * 8
    assert wire.parse_free_data(b"\x02" + b"\x00" * 7 + b"\x03" + b"\x00" * 7) == [2, 3]
    for bad in (b"", b"\x00" * 7, b"\x00" * 9):
        with pytest.raises(ArrowInvalid, match="expected a non-zero multiple of 8"):
            wire.parse_free_data(bad)
    with pytest.raises(ArrowInvalid, match="at least one"):
        wire.encode_free_data([])


# -- sequence numbers ------------------------------------------------------------------------------

def test_sequence_positions_roll_over_after_uint32_max():
    first = U32_MAX - 1
    assert [wire.sequence_at(first, i) for i in range(4)] == [U32_MAX - 1, U32_MAX, 0, 1]
    assert wire.unwrap_sequence(U32_MAX, first, 0) == 1
    assert wire.unwrap_sequence(0, first, 0) == 2
    assert wire.unwrap_sequence(1, first, 2) == 3
    # numbers behind the reader's position, and before the stream's start
    assert wire.unwrap_sequence(U32_MAX - 1, first, 3) == 0
    assert wire.unwrap_sequence(U32_MAX - 2, first, 0) == -1


def test_unwrap_across_many_rollovers():
    # 3 * 2**32 + 5 messages later, the numbers still map to positions
    pos = 3 * (1 << 32) + 5
    assert wire.unwrap_sequence(wire.sequence_at(0, pos + 10), 0, pos) == pos + 10
    assert wire.unwrap_sequence(wire.sequence_at(0, pos - 10), 0, pos) == pos - 10
    assert wire.unwrap_sequence(wire.sequence_at(0, pos + (1 << 31) - 1), 0, pos) == \
        pos + (1 << 31) - 1


# -- our frame header ------------------------------------------------------------------------------

def test_frame_header_golden_bytes():
    head = wire.frame_header(wire.FRAME_TAGGED, 0x0100000000000007, 16)
    assert head == bytes.fromhex("0201000000000000" "0700000000000001" "1000000000000000")
    assert wire.parse_frame_header(head, 16) == (2, 0x0100000000000007, 16)


@pytest.mark.parametrize("header, expected", [
    (bytes.fromhex("0202000000000000") + bytes(16), "version 2; expected 1"),
    (bytes.fromhex("0901000000000000") + bytes(16), "unknown frame kind 9"),
    (bytes.fromhex("0001000000000000") + bytes(16), "unknown frame kind 0"),
    (bytes.fromhex("0101000000010000") + bytes(16), "byte 5 is 1; reserved bytes must be zero"),
    (bytes.fromhex("0101000000000000") + bytes(8) + struct.pack("<Q", 1 << 20),
     "claims 1048576 bytes; the limit is 1024"),
    (bytes(23), "has 23 bytes; expected 24"),
])
def test_malformed_frame_headers(header, expected):
    with pytest.raises(ArrowInvalid, match=expected):
        wire.parse_frame_header(header, 1024)


def test_gather_frames_puts_each_header_before_its_non_empty_parts():
    body = memoryview(bytes(range(16))).cast("B", (4, 4))      # any contiguous buffer goes as it is
    frames = [(wire.FRAME_MESSAGE, 0, [b"ab", b"", b"cde"]), (wire.FRAME_TAGGED, 9, [body]),
              (wire.FRAME_STREAM_END, 0, [])]
    iov, total = wire.gather_frames(frames)
    assert iov == [wire.frame_header(wire.FRAME_MESSAGE, 0, 5), b"ab", b"cde",
                   wire.frame_header(wire.FRAME_TAGGED, 9, 16), body,
                   wire.frame_header(wire.FRAME_STREAM_END, 0, 0)]
    assert iov[4] is body
    assert total == 3 * 24 + 5 + 16 == sum(memoryview(v).nbytes for v in iov)


def _frames(*frames):
    return bytearray(b"".join(wire.frame_header(kind, tag, len(p)) + p for kind, tag, p in frames))


def test_take_frame_returns_whole_well_formed_frames_and_where_they_end():
    buf = _frames((wire.FRAME_MESSAGE, 0, b"meta"), (wire.FRAME_TAGGED, 5, b""))
    kind, tag, meta, end = wire.take_frame(buf, 0, len(buf), 1024, 1024, 1024)
    assert (kind, tag, meta.to_pybytes(), end) == (wire.FRAME_MESSAGE, 0, b"meta", 28)
    kind, tag, payload, end = wire.take_frame(buf, 28, len(buf), 1024, 1024, 1024)
    assert (kind, tag, payload.size, end) == (wire.FRAME_TAGGED, 5, 0, 52)
    buf[24:28] = b"\xff\xff\xff\xff"          # the payload is a copy: the buffer is reused
    assert meta.to_pybytes() == b"meta"
    assert wire.take_frame(buf, 52, len(buf), 1024, 1024, 1024) is None      # nothing left


@pytest.mark.parametrize("frame, end, limits", [
    (_frames((wire.FRAME_MESSAGE, 0, b"meta")), 27, (1024, 1024, 1024)),    # payload not all there
    (_frames((wire.FRAME_MESSAGE, 0, b"meta")), 23, (1024, 1024, 1024)),    # header not all there
    (_frames((wire.FRAME_MESSAGE, 0, b"meta")), 28, (3, 1024, 1024)),       # above max_frame
    (_frames((wire.FRAME_MESSAGE, 0, b"meta")), 28, (1024, 3, 1024)),       # above max_message
    (_frames((wire.FRAME_HELLO, 0, b"meta")), 28, (1024, 1024, 3)),         # control frame limit
    (bytearray(bytes.fromhex("0202000000000000") + bytes(16)), 24, (1024, 1024, 1024)),
    (bytearray(bytes.fromhex("0901000000000000") + bytes(16)), 24, (1024, 1024, 1024)),
    (bytearray(bytes.fromhex("0101000000010000") + bytes(16)), 24, (1024, 1024, 1024)),
])
def test_take_frame_leaves_partial_and_refused_frames_to_the_checked_path(frame, end, limits):
    assert wire.take_frame(frame, 0, end, *limits) is None


def test_take_frame_never_reads_past_the_buffer():
    buf = _frames((wire.FRAME_TAGGED, 1, b"x" * 8))
    assert wire.take_frame(buf, 0, len(buf) + 100, 1024, 1024, 1024) is None
    assert wire.take_frame(buf, -1, len(buf), 1024, 1024, 1024) is None


# -- URIs ------------------------------------------------------------------------------------------

def test_uri_round_trips():
    u = parse_uri("arrowipc+tcp://127.0.0.1:5005?want_data=42&free_data=18446744073709551615"
                  "&remote_handle=AAEC_w")
    assert u == DissociatedURI(SCHEME_TCP, 42, (1 << 64) - 1, b"\x00\x01\x02\xff",
                               host="127.0.0.1", port=5005)
    assert format_uri(u) == ("arrowipc+tcp://127.0.0.1:5005?want_data=42&free_data="
                             "18446744073709551615&remote_handle=AAEC_w")
    v = parse_uri("arrowipc+unix:///tmp/a%20dir/s.sock?want_data=1")
    assert (v.scheme, v.path, v.want_data, v.free_data) == \
        (SCHEME_UNIX, "/tmp/a dir/s.sock", 1, None)
    assert parse_uri(format_uri(v)) == v
    six = parse_uri("arrowipc+tcp://[::1]:9?want_data=0")
    assert (six.host, six.port) == ("::1", 9) and parse_uri(str(six)) == six


@pytest.mark.parametrize("text", ["AAEC/w==", "AAEC_w", "AAEC/w", "AAEC_w=="])
def test_remote_handle_accepts_both_alphabets_with_or_without_padding(text):
    assert decode_remote_handle(text) == b"\x00\x01\x02\xff"


@pytest.mark.parametrize("uri, expected", [
    ("http://h:1?want_data=1", "scheme 'http'"),
    ("arrowipc+tcp://h:1", "want_data is missing"),
    ("arrowipc+tcp://h:1?want_data=-1", "expected a uint64 in decimal"),
    ("arrowipc+tcp://h:1?want_data=0x10", "expected a uint64 in decimal"),
    ("arrowipc+tcp://h:1?want_data=18446744073709551616", "larger than the uint64 maximum"),
    ("arrowipc+tcp://h:1?want_data=1&want_data=2", "appears more than once"),
    ("arrowipc+tcp://h:1?want_data=1&free_data=1", "both 1"),
    ("arrowipc+tcp://h?want_data=1", "HOST:PORT"),
    ("arrowipc+tcp://h:99999?want_data=1", "out of range"),
    ("arrowipc+unix://host/p?want_data=1", "has no host"),
    ("arrowipc+tcp://h:1?want_data=1&remote_handle=a*b", "is not base64"),
    ("arrowipc+tcp://h:1?want_data=1&remote_handle=abcde", "base64 length"),
])
def test_malformed_uris(uri, expected):
    with pytest.raises(ArrowInvalid, match=expected):
        parse_uri(uri)
