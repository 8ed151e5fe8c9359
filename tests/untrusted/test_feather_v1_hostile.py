"""Feather V1 files written by pyarrow (`version=1`), then patched where the metadata lies: the
footer's metadata length, the flatbuffer's offsets and vector counts, each column's array
descriptor (int64 extremes, sums that overflow), a category's levels, a timestamp's time zone,
a large_string column's offsets, and every cut of the file read from a path (memory-mapped and
not). Each must be an ArrowInvalid naming the file and where, never a crash, a hang or an
allocation of what the metadata claims; the intact file reads as pyarrow reads it.

tests/feather/test_feather_v1_corrupt.py holds one test per rule on files built field by field;
these complement it with the pyarrow-written layout and the boundary values it does not try.
"""
import re
import struct
import warnings

import pyarrow as pa
import pyarrow.feather as pf
import pytest

import arrowipc.feather as feather
from arrowipc import ArrowInvalid

pytestmark = pytest.mark.filterwarnings("ignore:Feather V1 files are deprecated:DeprecationWarning")

# PrimitiveArray slots of the V1 feather.fbs
TYPE, ENCODING, OFFSET, LENGTH, NULL_COUNT, TOTAL_BYTES = range(6)


def _table():
    return pa.table({"i": pa.array([1, None, 3], pa.int32()),
                     "s": pa.array(["ab", None, "cde"], pa.large_string()),
                     "c": pa.array(["u", "v", "u"]).dictionary_encode(),
                     "t": pa.array([1, 2, None], pa.timestamp("ms", "UTC"))})


@pytest.fixture
def v1(tmp_path):
    path = tmp_path / "v1.feather"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        pf.write_feather(_table(), str(path), version=1)
    return _V1(path.read_bytes())


class _V1:
    """A V1 file's bytes with the absolute positions of its metadata's fields (a minimal
    flatbuffer walk: the file is pyarrow's and intact)."""

    def __init__(self, data):
        self.data = data
        self.meta_len = struct.unpack_from("<I", data, len(data) - 8)[0]
        self.meta = len(data) - 8 - self.meta_len
        self.root = self.meta + self._u32(self.meta)
        self.columns_vector = self._deref(self._slot(self.root, 2))

    def _u32(self, pos):
        return struct.unpack_from("<I", self.data, pos)[0]

    def _deref(self, pos):
        return pos + self._u32(pos)

    def _slot(self, table, slot):
        vtable = table - struct.unpack_from("<i", self.data, table)[0]
        size = struct.unpack_from("<H", self.data, vtable)[0]
        assert 4 + 2 * slot < size, "field not in the vtable"
        off = struct.unpack_from("<H", self.data, vtable + 4 + 2 * slot)[0]
        assert off, "field absent (its default)"
        return table + off

    def column(self, i):
        return self._deref(self.columns_vector + 4 + 4 * i)

    def array(self, i, levels=False):
        """Position of column i's PrimitiveArray (its category levels' with levels=True)."""
        if levels:
            meta = self._deref(self._slot(self.column(i), 3))
            return self._deref(self._slot(meta, 0))
        return self._deref(self._slot(self.column(i), 1))

    def field(self, i, slot, levels=False):
        return self._slot(self.array(i, levels), slot)

    def int64(self, i, slot, levels=False):
        return struct.unpack_from("<q", self.data, self.field(i, slot, levels))[0]

    def patched(self, pos, fmt, value):
        out = bytearray(self.data)
        struct.pack_into(fmt, out, pos, value)
        return bytes(out)


def _read(data, tmp_path, **kwargs):
    path = tmp_path / "bad.feather"
    path.write_bytes(data)
    return feather.read_table(str(path), **kwargs), str(path)


def _refused(data, tmp_path, message, **kwargs):
    path = tmp_path / "bad.feather"
    path.write_bytes(data)
    with pytest.raises(ArrowInvalid, match="^" + re.escape(str(path)) + ": " + message):
        feather.read_table(str(path), **kwargs)


def test_the_intact_file_reads_as_pyarrow_reads_it(v1, tmp_path):
    got, path = _read(v1.data, tmp_path)
    want = pf.read_table(path)
    assert got.schema.names == want.schema.names
    assert [str(t) for t in got.schema.types] == [str(t) for t in want.schema.types]
    assert got.to_pydict() == want.to_pydict()


# -- the footer's metadata length ---------------------------------------------------------------

@pytest.mark.parametrize("claim", [lambda size: size - 11, lambda size: size - 8,
                                   lambda size: size - 4, lambda size: size,
                                   lambda size: 0x7fffffff, lambda size: 0xffffffff],
                         ids=["into the header magic", "into the footer", "into the end magic",
                              "the file's size", "int32 max", "uint32 max"])
def test_a_metadata_length_reaching_the_magic_or_beyond_is_refused(v1, tmp_path, claim):
    size = len(v1.data)
    n = claim(size)
    _refused(v1.patched(size - 8, "<I", n), tmp_path,
             re.escape(f"the Feather V1 footer at byte {size - 8} claims {n} bytes of metadata, "
                       f"but only {size - 12} bytes lie between the header and the footer"))


@pytest.mark.parametrize("n", [0, 1, 7])
def test_a_metadata_length_under_a_flatbuffer_is_refused(v1, tmp_path, n):
    size = len(v1.data)
    _refused(v1.patched(size - 8, "<I", n), tmp_path,
             re.escape(f"invalid Feather V1 metadata (the flatbuffer at byte {size - 8 - n}; "
                       f"positions below are within it): flatbuffer CTable: expected at least 8 "
                       f"bytes, got {n}"))


def test_a_metadata_length_taking_in_the_data_reads_the_data_as_a_flatbuffer(v1, tmp_path):
    # the longest claim allowed: the "metadata" starts in the header's padding
    size = len(v1.data)
    _refused(v1.patched(size - 8, "<I", size - 12), tmp_path,
             r"invalid Feather V1 metadata \(the flatbuffer at byte 4; .*\): flatbuffer CTable: ")


def test_bytes_after_the_footer_are_refused(v1, tmp_path):
    # the magic at the start, something else at the end
    _refused(v1.data + b"\0" * 8, tmp_path,
             re.escape(f"Feather V1 footer incomplete: expected b'FEA1' at byte "
                       f"{len(v1.data) + 4}, found b'\\x00\\x00\\x00\\x00' (file truncated?)"))


# -- the flatbuffer --------------------------------------------------------------------------------

def test_a_root_offset_outside_the_metadata_is_refused(v1, tmp_path):
    _refused(v1.patched(v1.meta, "<I", 0xfffffff0), tmp_path,
             rf"invalid Feather V1 metadata \(the flatbuffer at byte {v1.meta}; .*\): flatbuffer "
             rf"CTable: table at byte 4294967280 outside the {v1.meta_len}-byte metadata")


@pytest.mark.parametrize("vtable_distance", [-100000, 1 << 30, (1 << 31) - 1])
def test_a_vtable_outside_the_metadata_is_refused(v1, tmp_path, vtable_distance):
    root = v1.root - v1.meta
    _refused(v1.patched(v1.root, "<i", vtable_distance), tmp_path,
             rf"invalid Feather V1 metadata .*: flatbuffer CTable: vtable of the table at byte "
             rf"{root} is at byte {root - vtable_distance}, outside the {v1.meta_len}-byte "
             rf"metadata")


@pytest.mark.parametrize("count", [1000, 1 << 28, 0xffffffff])
def test_a_huge_column_count_is_refused_before_anything_is_allocated(v1, tmp_path, count):
    _refused(v1.patched(v1.columns_vector, "<I", count), tmp_path,
             rf"invalid Feather V1 metadata .*: flatbuffer CTable: vector in field 2 claims "
             rf"{count} elements of 4 bytes at byte {v1.columns_vector - v1.meta}, past the end "
             rf"of the {v1.meta_len}-byte metadata")


def test_a_column_offset_outside_the_metadata_is_refused(v1, tmp_path):
    _refused(v1.patched(v1.columns_vector + 4, "<I", 0x7ffffff0), tmp_path,
             r"invalid Feather V1 metadata .*: flatbuffer Column: table at byte \d+ outside the "
             rf"{v1.meta_len}-byte metadata")


def test_a_column_name_that_is_not_utf8_is_refused(v1, tmp_path):
    name = v1._deref(v1._slot(v1.column(0), 0))
    assert v1.data[name + 4:name + 5] == b"i"
    _refused(v1.patched(name + 4, "B", 0xff), tmp_path,
             r"invalid Feather V1 metadata .*: flatbuffer Column: string field 0 is not UTF-8")


def test_a_time_zone_that_is_not_utf8_is_refused(v1, tmp_path):
    meta = v1._deref(v1._slot(v1.column(3), 3))
    tz = v1._deref(v1._slot(meta, 1))
    assert v1.data[tz + 4:tz + 7] == b"UTC"
    _refused(v1.patched(tz + 5, "B", 0xc3), tmp_path,
             r"invalid Feather V1 metadata .*: flatbuffer TypeMetadata: string field 1 is not "
             r"UTF-8")


def test_an_unknown_time_zone_is_kept_as_pyarrow_keeps_it(v1, tmp_path):
    # the time zone is a name, checked when a value is converted, not when the file is read
    meta = v1._deref(v1._slot(v1.column(3), 3))
    tz = v1._deref(v1._slot(meta, 1))
    data = bytearray(v1.data)
    data[tz + 4:tz + 7] = b"Z/?"
    got, path = _read(bytes(data), tmp_path)
    assert str(got.schema.field("t").type) == str(pf.read_table(path).schema.field("t").type) \
        == "timestamp[ms, tz=Z/?]"


# -- the array descriptors -------------------------------------------------------------------------

MAX = (1 << 63) - 1
MIN = -(1 << 63)


@pytest.mark.parametrize("offset,total", [(MAX, 8), (8, MAX), (MAX, MAX), (MIN, 8), (8, MIN),
                                          (-8, 16), (600, 48)])
def test_an_array_range_outside_the_file_is_refused(v1, tmp_path, offset, total):
    # (MAX, MAX): offset + total overflows an int64; checked without adding them
    data = v1.patched(v1.field(1, OFFSET), "<q", offset)
    data = _V1(data).patched(v1.field(1, TOTAL_BYTES), "<q", total)
    _refused(data, tmp_path, re.escape(f"column 1 's': its {total} bytes at byte {offset} lie "
                                       f"outside the {len(v1.data)}-byte file"))


@pytest.mark.parametrize("length", [MAX, 1 << 40])
def test_a_huge_length_is_refused_before_anything_is_allocated(v1, tmp_path, length):
    # column 'i' has nulls: its bitmap alone would need length / 8 bytes
    data = v1.patched(v1.field(0, LENGTH), "<q", length)
    _refused(data, tmp_path,
             re.escape(f"column 0 'i': the validity bitmap of {length} values needs "
                       f"{-(-((length + 7) // 8) // 8) * 8} bytes at byte 8, the array has 24"))


def test_a_huge_string_length_is_refused_before_anything_is_allocated(v1, tmp_path):
    # no nulls claimed: the offsets (8 bytes each) are what the length would need
    data = v1.patched(v1.field(1, LENGTH), "<q", MAX)
    data = _V1(data).patched(v1.field(1, NULL_COUNT), "<q", 0)
    _refused(data, tmp_path,
             re.escape(f"column 1 's': the offsets of {MAX} values need {(MAX + 1) * 8} bytes at "
                       f"byte 32, the array has 48 left"))


@pytest.mark.parametrize("nulls", [4, MAX, -1, MIN])
def test_a_null_count_outside_the_length_is_refused(v1, tmp_path, nulls):
    _refused(v1.patched(v1.field(0, NULL_COUNT), "<q", nulls), tmp_path,
             re.escape(f"column 0 'i': null count {nulls} outside [0, 3] (array at byte 8)"))


def test_total_bytes_short_of_the_values_is_refused(v1, tmp_path):
    # bitmap (8) + values (12, padded 16): 16 bytes leave 8 for 3 int32 values
    _refused(v1.patched(v1.field(0, TOTAL_BYTES), "<q", 16), tmp_path,
             re.escape("column 0 'i' (array at byte 8): the values buffer needs 12 bytes, "
                       "has 8"))


def test_total_bytes_beyond_the_values_reads_the_values(v1, tmp_path):
    # more bytes than the values need is not an error (pyarrow reads them too)
    got, path = _read(v1.patched(v1.field(0, TOTAL_BYTES), "<q", 48), tmp_path)
    assert got.column("i").to_pylist() == pf.read_table(path).column("i").to_pylist() \
        == [1, None, 3]


# -- categories ---------------------------------------------------------------------------------

@pytest.mark.parametrize("offset", [MAX, -1, 1 << 40])
def test_levels_outside_the_file_are_refused(v1, tmp_path, offset):
    _refused(v1.patched(v1.field(2, OFFSET, levels=True), "<q", offset), tmp_path,
             re.escape(f"column 2 'c' levels: its 24 bytes at byte {offset} lie outside the "
                       f"{len(v1.data)}-byte file"))


def test_levels_of_negative_length_are_refused(v1, tmp_path):
    _refused(v1.patched(v1.field(2, LENGTH, levels=True), "<q", -1), tmp_path,
             re.escape("column 2 'c' levels: negative length -1 (array at byte 96)"))


def test_more_levels_than_their_offsets_hold_are_refused(v1, tmp_path):
    _refused(v1.patched(v1.field(2, LENGTH, levels=True), "<q", 1 << 40), tmp_path,
             re.escape(f"column 2 'c' levels: the offsets of {1 << 40} values need "
                       f"{((1 << 40) + 1) * 4 + 4} bytes at byte 96, the array has 24 left"))


def test_codes_past_the_levels_are_refused(v1, tmp_path):
    # one level left: the code 1 of row 1 points past it
    _refused(v1.patched(v1.field(2, LENGTH, levels=True), "<q", 1), tmp_path,
             re.escape("column 2 'c' (array at byte 80): dictionary index at slot 1 is outside "
                       "the dictionary of 1 values"))


@pytest.mark.parametrize("code", [-1, -(1 << 31), 2, (1 << 31) - 1])
def test_a_code_outside_the_levels_is_refused(v1, tmp_path, code):
    _refused(v1.patched(v1.int64(2, OFFSET), "<i", code), tmp_path,
             re.escape("column 2 'c' (array at byte 80): dictionary index at slot 0 is outside "
                       "the dictionary of 2 values"))


def test_level_offsets_past_their_data_are_refused(v1, tmp_path):
    levels = v1.int64(2, OFFSET, levels=True)        # int32 offsets [0, 1, 2], then "uv"
    _refused(v1.patched(levels + 8, "<i", 300), tmp_path,
             r"column 2 'c' \(array at byte 80\)\.dictionary: offsets: last offset 300 is beyond "
             r"the end of the data")


# -- string offsets ---------------------------------------------------------------------------

def _large_offsets(v1):
    # bitmap (8 bytes), then the large_string's 4 int64 offsets
    return v1.int64(1, OFFSET) + 8


@pytest.mark.parametrize("index,value,message", [
    (1, 5, r"offsets must not decrease, but offset 2 is less than offset 1"),
    (3, 1 << 62, r"last offset 4611686018427387904 is beyond the end of the data"),
    (0, -1, r"offset 0 is -1, expected >= 0"),
    (2, MIN, r"offsets must not decrease, but offset 2 is less than offset 1")])
def test_bad_large_string_offsets_are_refused(v1, tmp_path, index, value, message):
    _refused(v1.patched(_large_offsets(v1) + 8 * index, "<q", value), tmp_path,
             r"column 1 's' \(array at byte 32\): offsets: " + message)


# -- cuts ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("memory_map", [False, True])
def test_every_cut_of_the_file_names_it(v1, tmp_path, memory_map):
    # read from a path, whole or for one column: the error names the file
    path = tmp_path / "cut.feather"
    for n in range(len(v1.data)):
        path.write_bytes(v1.data[:n])
        with pytest.raises(ArrowInvalid, match="^" + re.escape(str(path)) + ": "):
            feather.read_table(str(path), columns=["s"], memory_map=memory_map)
