"""Truncated and corrupt Feather V1 files: one test per rule of the reader, each checking that the
error is ArrowInvalid (or ArrowNotImplementedError for what the format allows and nothing
writes) and that its message says where: the file, the column, the byte.

The files are built in the tests: written by pyarrow (`version=1`) and cut or patched, or built
field by field (feather_v1_craft) where the metadata itself must be wrong.
"""
import struct
import warnings

import pytest

import arrowipc.feather as feather
from arrowipc import ArrowInvalid, ArrowNotImplementedError

import feather_v1_craft as craft

pytestmark = pytest.mark.filterwarnings("ignore:Feather V1 files are deprecated:DeprecationWarning")


def _pyarrow_v1(tmp_path, table=None):
    pa = pytest.importorskip("pyarrow")
    pf = pytest.importorskip("pyarrow.feather")
    if table is None:
        table = pa.table({"a": pa.array([1, None, 3], pa.int32()),
                          "s": pa.array(["x", "yy", None])})
    path = tmp_path / "v1.feather"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        pf.write_feather(table, path, version=1)
    return path.read_bytes()


def _read(data, tmp_path=None):
    if tmp_path is None:
        return feather.read_table(data)
    path = tmp_path / "bad.feather"
    path.write_bytes(data)
    return feather.read_table(str(path))


def test_the_crafted_baseline_is_read():
    # the builder below makes valid files: the rules that follow change one thing each
    data = craft.int32_data([1, 2, 3])
    t = _read(craft.v1_file(data, [craft.int32_column("a", [1, 2, 3])], 3))
    assert t.to_pydict() == {"a": [1, 2, 3]}


# -- the frame: magic, footer, metadata length --------------------------------------------------

def test_a_file_under_12_bytes_is_refused(tmp_path):
    with pytest.raises(ArrowInvalid, match=r"bad\.feather: File is too small to be a "
                                           r"well-formed file \(7 bytes"):
        _read(b"FEA1abc", tmp_path)


def test_a_file_of_neither_format_is_refused():
    with pytest.raises(ArrowInvalid, match=r"buffer: Not a Feather V1 or Arrow IPC file: "
                                           r"expected b'FEA1' or b'ARROW1' at byte 0, found "
                                           r"b'PAR1\\x00\\x00'"):
        _read(b"PAR1" + bytes(20))


def test_a_truncated_file_has_no_footer(tmp_path):
    data = _pyarrow_v1(tmp_path)
    cut = data[:-3]
    with pytest.raises(ArrowInvalid, match=rf"bad\.feather: Feather V1 footer incomplete: "
                                           rf"expected b'FEA1' at byte {len(cut) - 4}"):
        _read(cut, tmp_path)


def test_a_metadata_length_beyond_the_file_is_refused(tmp_path):
    data = bytearray(_pyarrow_v1(tmp_path))
    data[-8:-4] = struct.pack("<I", len(data))
    with pytest.raises(ArrowInvalid, match=rf"footer at byte {len(data) - 8} claims {len(data)} "
                                           rf"bytes of metadata, but only {len(data) - 12} bytes"):
        _read(bytes(data))


def test_metadata_that_is_not_a_flatbuffer_is_refused():
    garbage = b"\xff\xff\xff\x7f" + bytes(12)          # a root offset far past the end
    data = craft.v1_file(b"", [], 0, meta=garbage)
    with pytest.raises(ArrowInvalid, match=r"buffer: invalid Feather V1 metadata \(the "
                                           r"flatbuffer at byte 8; positions below are within "
                                           r"it\): flatbuffer CTable"):
        _read(data)


def test_a_negative_row_count_is_refused():
    with pytest.raises(ArrowInvalid, match=r"the Feather V1 metadata claims -1 rows"):
        _read(craft.v1_file(b"", [], -1))


# -- the columns' metadata -----------------------------------------------------------------------

def test_a_column_without_a_name_is_refused():
    col = craft.int32_column("a", [1])
    del col["name"]
    with pytest.raises(ArrowInvalid, match=r"column 0 of the Feather V1 metadata has no name"):
        _read(craft.v1_file(craft.int32_data([1]), [col], 1))


def test_a_column_without_values_is_refused():
    with pytest.raises(ArrowInvalid, match=r"column 0 'a' has no values array"):
        _read(craft.v1_file(b"", [{"name": "a"}], 0))


def test_an_unknown_type_code_is_refused():
    col = craft.int32_column("a", [1], type=42)
    with pytest.raises(ArrowInvalid, match=r"buffer: column 0 'a': unknown Feather V1 type "
                                           r"code 42"):
        _read(craft.v1_file(craft.int32_data([1]), [col], 1))


def test_complex_numbers_are_not_implemented():
    col = craft.int32_column("z", [1], type=craft.COMPLEX_FLOAT)
    with pytest.raises(ArrowNotImplementedError, match=r"column 0 'z': Feather V1 type 19 "
                                                       r"\(COMPLEX_FLOAT\) has no Arrow"):
        _read(craft.v1_file(craft.int32_data([1]), [col], 1))


def test_a_logical_type_code_without_its_metadata_is_refused():
    col = craft.int32_column("t", [1], type=craft.TIMESTAMP)
    with pytest.raises(ArrowInvalid, match=r"column 0 't': type 14 \(TIMESTAMP\) without its "
                                           r"type metadata"):
        _read(craft.v1_file(craft.int32_data([1]), [col], 1))


def test_announced_type_metadata_must_be_there():
    col = craft.int32_column("d", [1])
    col["meta_type"] = craft.META_DATE
    with pytest.raises(ArrowInvalid, match=r"column 0 'd': type metadata 3 announced but "
                                           r"absent"):
        _read(craft.v1_file(craft.int32_data([1]), [col], 1))


def test_an_unknown_type_metadata_is_refused():
    col = craft.int32_column("x", [1])
    col.update(meta_type=9, meta={})
    with pytest.raises(ArrowInvalid, match=r"column 0 'x': unknown Feather V1 type metadata 9"):
        _read(craft.v1_file(craft.int32_data([1]), [col], 1))


def test_category_codes_must_be_integers():
    col = craft.int32_column("c", [1], type=craft.DOUBLE)
    col.update(meta_type=craft.META_CATEGORY,
               meta={"levels": dict(type=craft.INT32, offset=8, length=1, total_bytes=8)})
    with pytest.raises(ArrowInvalid, match=r"column 0 'c': a category column's codes must be "
                                           r"integers, found type 10 \(DOUBLE\)"):
        _read(craft.v1_file(craft.int32_data([0]), [col], 1))


def test_a_category_needs_levels():
    col = craft.int32_column("c", [0])
    col.update(meta_type=craft.META_CATEGORY, meta={})
    with pytest.raises(ArrowInvalid, match=r"column 0 'c': a category column without levels"):
        _read(craft.v1_file(craft.int32_data([0]), [col], 1))


def test_timestamps_must_be_int64():
    col = craft.int32_column("t", [1])
    col.update(meta_type=craft.META_TIMESTAMP, meta={"unit": 1})
    with pytest.raises(ArrowInvalid, match=r"column 0 't': a timestamp column must hold INT64 "
                                           r"values, found type 3 \(INT32\)"):
        _read(craft.v1_file(craft.int32_data([1]), [col], 1))


def test_an_unknown_time_unit_is_refused():
    col = craft.int32_column("t", [1], type=craft.INT64, total_bytes=8)
    col.update(meta_type=craft.META_TIMESTAMP, meta={"unit": 7})
    with pytest.raises(ArrowInvalid, match=r"column 0 't': unknown time unit 7"):
        _read(craft.v1_file(struct.pack("<q", 1), [col], 1))


def test_dates_must_be_int32():
    col = craft.int32_column("d", [1], type=craft.INT64, total_bytes=8)
    col.update(meta_type=craft.META_DATE, meta={})
    with pytest.raises(ArrowInvalid, match=r"column 0 'd': a date column must hold INT32 "
                                           r"values, found type 4 \(INT64\)"):
        _read(craft.v1_file(struct.pack("<q", 1), [col], 1))


def test_an_int32_time_must_be_in_seconds_or_milliseconds():
    col = craft.int32_column("t", [1])
    col.update(meta_type=craft.META_TIME, meta={"unit": 2})
    with pytest.raises(ArrowInvalid, match=r"column 0 't': an INT32 time column's unit must be "
                                           r"s or ms, found us"):
        _read(craft.v1_file(craft.int32_data([1]), [col], 1))


def test_an_int64_time_must_be_in_micro_or_nanoseconds():
    col = craft.int32_column("t", [1], type=craft.INT64, total_bytes=8)
    col.update(meta_type=craft.META_TIME, meta={"unit": 1})
    with pytest.raises(ArrowInvalid, match=r"column 0 't': an INT64 time column's unit must be "
                                           r"us or ns, found ms"):
        _read(craft.v1_file(struct.pack("<q", 1), [col], 1))


def test_a_time_of_another_physical_type_is_refused():
    col = craft.int32_column("t", [1], type=craft.DOUBLE, total_bytes=8)
    col.update(meta_type=craft.META_TIME, meta={"unit": 0})
    with pytest.raises(ArrowInvalid, match=r"column 0 't': a time column must hold INT32 or "
                                           r"INT64 values, found type 10 \(DOUBLE\)"):
        _read(craft.v1_file(struct.pack("<d", 1), [col], 1))


# -- the arrays: encoding, ranges, counts --------------------------------------------------------

def test_the_dictionary_encoding_is_not_implemented():
    col = craft.int32_column("a", [1], encoding=1)
    with pytest.raises(ArrowNotImplementedError, match=r"column 0 'a': the Feather V1 DICTIONARY "
                                                       r"encoding is not supported"):
        _read(craft.v1_file(craft.int32_data([1]), [col], 1))


def test_an_unknown_encoding_is_refused():
    col = craft.int32_column("a", [1], encoding=5)
    with pytest.raises(ArrowInvalid, match=r"column 0 'a': unknown Feather V1 encoding 5"):
        _read(craft.v1_file(craft.int32_data([1]), [col], 1))


@pytest.mark.parametrize("offset,total", [(8, 1 << 40), (1 << 62, 8), (-8, 8), (8, -1)])
def test_an_array_outside_the_file_is_refused(offset, total):
    col = craft.int32_column("a", [1], offset=offset, total_bytes=total)
    data = craft.v1_file(craft.int32_data([1]), [col], 1)
    with pytest.raises(ArrowInvalid, match=rf"column 0 'a': its {total} bytes at byte {offset} "
                                           rf"lie outside the {len(data)}-byte file"):
        _read(data)


def test_a_negative_length_is_refused():
    col = craft.int32_column("a", [1], length=-2)
    with pytest.raises(ArrowInvalid, match=r"column 0 'a': negative length -2 \(array at byte "
                                           r"8\)"):
        _read(craft.v1_file(craft.int32_data([1]), [col], 1))


def test_a_null_count_above_the_length_is_refused():
    col = craft.int32_column("a", [1], null_count=2)
    with pytest.raises(ArrowInvalid, match=r"column 0 'a': null count 2 outside \[0, 1\] "
                                           r"\(array at byte 8\)"):
        _read(craft.v1_file(craft.int32_data([1]), [col], 1))


def test_a_bitmap_larger_than_the_array_is_refused():
    # a huge length with nulls: the bitmap alone would need far more than the 8 bytes given,
    # and nothing is allocated for it
    col = craft.int32_column("a", [1], length=1 << 50, null_count=1, total_bytes=8)
    with pytest.raises(ArrowInvalid, match=rf"column 0 'a': the validity bitmap of {1 << 50} "
                                           rf"values needs {(1 << 50) // 8} bytes at byte 8, the "
                                           rf"array has 8"):
        _read(craft.v1_file(craft.int32_data([1, 2]), [col], 1))


def test_a_bitmap_must_count_the_nulls_claimed():
    # bitmap 0b101 (one null among three), values; the metadata claims two nulls
    data = bytes([0b101]) + bytes(7) + craft.int32_data([1, 0, 3, 0])
    col = craft.int32_column("a", [1, 0, 3], null_count=2, total_bytes=24)
    with pytest.raises(ArrowInvalid, match=r"column 0 'a': the validity bitmap at byte 8 has 1 "
                                           r"nulls, the metadata claims 2"):
        _read(craft.v1_file(data, [col], 3))


def test_offsets_larger_than_the_array_are_refused():
    col = {"name": "s", "values": dict(type=craft.UTF8, offset=8, length=100, total_bytes=16)}
    with pytest.raises(ArrowInvalid, match=r"column 0 's': the offsets of 100 values need 408 "
                                           r"bytes at byte 8, the array has 16 left"):
        _read(craft.v1_file(bytes(16), [col], 100))


def test_a_column_length_must_be_the_row_count():
    col = craft.int32_column("a", [1, 2])
    with pytest.raises(ArrowInvalid, match=r"column 0 'a': 2 values at byte 8, the table has 3 "
                                           r"rows"):
        _read(craft.v1_file(craft.int32_data([1, 2]), [col], 3))


# -- the values, validated in full ---------------------------------------------------------------

def test_values_shorter_than_the_length_are_refused():
    col = craft.int32_column("a", [1, 2, 3], total_bytes=8)
    with pytest.raises(ArrowInvalid, match=r"buffer: column 0 'a' \(array at byte 8\): the values "
                                           r"buffer needs 12 bytes, has 8"):
        _read(craft.v1_file(craft.int32_data([1, 2, 3, 4]), [col], 3))


def _strings(offsets, chars):
    body = struct.pack(f"<{len(offsets)}i", *offsets)
    body += bytes(-len(body) % 8)
    total = len(body) + len(chars) + (-len(chars) % 8)
    col = {"name": "s", "values": dict(type=craft.UTF8, offset=8, length=len(offsets) - 1,
                                       total_bytes=total)}
    return craft.v1_file(body + chars, [col], len(offsets) - 1)


def test_decreasing_offsets_are_refused():
    with pytest.raises(ArrowInvalid, match=r"buffer: column 0 's' \(array at byte 8\): offsets: "
                                           r"offsets must not decrease, but offset 2 is less "
                                           r"than offset 1"):
        _read(_strings([0, 3, 1], b"abc"))


def test_offsets_past_the_values_are_refused():
    with pytest.raises(ArrowInvalid, match=r"column 0 's' \(array at byte 8\): offsets: last "
                                           r"offset 300 is beyond the end of the data"):
        _read(_strings([0, 2, 300], b"abc"))


def test_invalid_utf8_is_refused():
    with pytest.raises(ArrowInvalid, match=r"column 0 's' \(array at byte 8\): value 0 is "
                                           r"not valid UTF-8"):
        _read(_strings([0, 2, 3], b"a\xffc"))


def test_category_codes_beyond_the_levels_are_refused():
    # codes [0, 5] into one level
    data = craft.int32_data([0, 5]) + craft.int32_data([7, 0])
    col = craft.int32_column("c", [0, 5])
    col.update(meta_type=craft.META_CATEGORY,
               meta={"levels": dict(type=craft.INT32, offset=16, length=1, total_bytes=8)})
    with pytest.raises(ArrowInvalid, match=r"column 0 'c' \(array at byte 8\): dictionary index at "
                                           r"slot 1 is outside the dictionary of 1 values"):
        _read(craft.v1_file(data, [col], 2))


def test_every_prefix_of_a_file_is_refused_cleanly(tmp_path):
    # no crash and no other exception class, whatever the cut
    pa = pytest.importorskip("pyarrow")
    data = _pyarrow_v1(tmp_path, pa.table({
        "a": pa.array([1, None, 3], pa.int16()), "s": pa.array(["x", None, "zz"]),
        "c": pa.array(["u", "v", "u"]).dictionary_encode(),
        "t": pa.array([1, 2, None], pa.timestamp("ms", "UTC"))}))
    for n in range(len(data)):
        with pytest.raises(ArrowInvalid):
            _read(data[:n])


def test_every_flipped_metadata_byte_is_refused_or_read(tmp_path):
    # a byte of the metadata changed: either a valid file still (a count, a name) or ArrowInvalid
    # / ArrowNotImplementedError, never a crash or another exception
    data = _pyarrow_v1(tmp_path)
    meta_len = struct.unpack("<I", data[-8:-4])[0]
    start = len(data) - 8 - meta_len
    for i in range(start, len(data) - 8):
        for value in (0x00, 0xff, 0x7f):
            bad = bytearray(data)
            bad[i] = value
            try:
                _read(bytes(bad))
            except (ArrowInvalid, ArrowNotImplementedError):
                pass
