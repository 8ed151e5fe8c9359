"""Bad input: one test per error rule, each checking its message."""
import os
import re
import warnings

import pyarrow as pa
import pyarrow.feather as pf
import pytest

import arrowipc as A
import arrowipc.dataset as ds
from arrowipc.errors import ArrowInvalid


@pytest.fixture
def good(tmp_path):
    path = str(tmp_path / "a.arrow")
    pf.write_feather(pa.table({"x": [1, 2]}), path)
    return path


def test_a_corrupt_file_is_an_error_naming_it(tmp_path, good):
    bad = str(tmp_path / "b.arrow")
    with open(bad, "wb") as f:
        f.write(b"garbage, not an arrow file at all")
    with pytest.raises(ArrowInvalid, match=f"^{re.escape(str(bad))}: file: expected the magic 'ARROW1'"):
        ds.dataset([good, bad], format="ipc").to_table()


def test_a_truncated_file_is_an_error_naming_it(tmp_path, good):
    cut = str(tmp_path / "c.arrow")
    data = open(good, "rb").read()
    with open(cut, "wb") as f:
        f.write(data[:-20])
    with pytest.raises(ArrowInvalid, match=f"^{re.escape(str(cut))}: .*may be truncated"):
        ds.dataset([good, cut], format="ipc").to_table()


def test_invalid_files_are_skipped_with_exclude_invalid_files(tmp_path, good):
    with open(tmp_path / "b.arrow", "wb") as f:
        f.write(b"garbage, not an arrow file at all")
    got = ds.dataset(str(tmp_path), format="ipc", exclude_invalid_files=True)
    assert got.files == [good]
    assert got.to_table().column("x").to_pylist() == [1, 2]


def test_a_column_of_an_incompatible_type_is_an_error_naming_file_and_column(tmp_path, good):
    other = str(tmp_path / "d.arrow")
    pf.write_feather(pa.table({"x": ["s"]}), other)
    with pytest.raises(ArrowInvalid, match=f"^{re.escape(str(other))}: column 'x' of type string does not match "
                                           f"the dataset's int64"):
        ds.dataset([good, other], format="ipc").to_table()


@pytest.mark.parametrize("target", [pa.list_(pa.int32()), pa.null()])
def test_a_cast_without_kernel_to_the_datasets_type_is_not_implemented_as_pyarrows(
        good, target):
    import pyarrow.dataset as pds
    schema = pa.schema([("x", target)])
    with pytest.raises(pa.ArrowNotImplementedError) as theirs:
        pds.dataset(good, format="ipc", schema=schema).to_table()
    data = ds.dataset(good, format="ipc", schema=schema)
    expected = (f"^{re.escape(good)}: column 'x' of type int64 does not match the dataset's "
                f"{re.escape(str(target))}: {re.escape(str(theirs.value))}$")
    for read in (lambda: data.to_table(), lambda: data.scanner().to_reader().read_all(),
                 lambda: next(data.get_fragments()).to_table(schema=data.schema)):
        with pytest.raises(A.ArrowNotImplementedError, match=expected):
            read()


def test_a_castable_column_reads_as_the_datasets_type(tmp_path, good):
    other = str(tmp_path / "d.arrow")
    pf.write_feather(pa.table({"x": pa.array([7], pa.int8())}), other)
    got = ds.dataset([good, other], format="ipc").to_table()
    assert got.column("x").to_pylist() == [1, 2, 7]


def test_missing_nullable_columns_read_as_nulls(tmp_path, good):
    other = str(tmp_path / "e.arrow")
    pf.write_feather(pa.table({"y": [1.5]}), other)
    schema = A.schema([("x", A.int64()), ("y", A.float64())])
    got = ds.dataset([good, other], format="ipc", schema=schema).to_table()
    assert got.to_pydict() == {"x": [1, 2, None], "y": [None, None, 1.5]}


def test_a_partition_value_that_does_not_parse_is_an_error_naming_the_directory(tmp_path):
    d = tmp_path / "p" / "k=abc"
    d.mkdir(parents=True)
    pf.write_feather(pa.table({"x": [1]}), str(d / "f.arrow"))
    part = ds.partitioning(A.schema([("k", A.int32())]), flavor="hive")
    with pytest.raises(ArrowInvalid, match=f"error parsing 'abc' as scalar of type int32 for "
                                           f"partition field 'k' of directory '{re.escape(str(d))}'"):
        ds.dataset(str(tmp_path / "p"), format="ipc", partitioning=part)


def test_a_feather_v1_file_is_refused_by_name(tmp_path):
    path = str(tmp_path / "v1.feather")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        pf.write_feather(pa.table({"x": [1]}), path, version=1)
    with pytest.raises(ArrowInvalid, match=f"^{re.escape(str(path))}: a Feather V1 file"):
        ds.dataset(path).to_table()
    with pytest.raises(ArrowInvalid, match=f"^{re.escape(str(path))}: .*Feather V1"):
        ds.dataset(path, format="feather").to_table()


def test_a_file_read_as_a_stream_says_it_is_a_file(good):
    with pytest.raises(ArrowInvalid, match=f"^{re.escape(str(good))}: .*it is an IPC file"):
        ds.dataset(good, format="stream").to_table()


def test_a_missing_path_is_file_not_found(tmp_path):
    missing = str(tmp_path / "i-am-not-existing.arrow")
    with pytest.raises(FileNotFoundError, match="no such file or directory"):
        ds.dataset(missing, format="ipc")
    with pytest.raises(FileNotFoundError, match="the glob matches no file"):
        ds.dataset(str(tmp_path / "*.nothing"), format="ipc")


def test_an_unknown_column_is_no_match(good):
    with pytest.raises(ArrowInvalid, match=r"No match for FieldRef.Name\(zz\)"):
        ds.dataset(good, format="ipc").to_table(columns=["zz"])


def test_duplicate_schema_names_are_multiple_matches():
    schema = A.schema([("a", A.int64()), ("a", A.string())])
    with pytest.raises(ValueError, match="Multiple matches for .*a.* in "):
        ds.dataset([], format="ipc", schema=schema).to_table()


def test_formats_other_than_ipc_are_refused(good):
    with pytest.raises(ValueError, match="format 'parquet' is not supported"):
        ds.dataset(good, format="parquet")


def test_a_partitioning_of_the_wrong_kind_is_refused(good):
    with pytest.raises(ValueError, match="Expected Partitioning or PartitioningFactory"):
        ds.dataset(good, format="ipc", partitioning=0)


def test_sources_of_the_wrong_kind_are_type_errors():
    with pytest.raises(TypeError, match="Expected a path-like, list of path-likes or a list of "
                                        "Datasets instead of the given type: NoneType"):
        ds.dataset(None)
    with pytest.raises(TypeError, match="The given list contains the following types: int"):
        ds.dataset([1, 2, 3])




def _patched(path, old, new):
    data = open(path, "rb").read()
    assert data.count(old) == 1
    with open(path, "wb") as f:
        f.write(data.replace(old, new))


def test_a_damaged_header_read_by_count_rows_is_an_error_naming_the_file(tmp_path, good):
    # count_rows reads headers only (no footer statistics in a pyarrow file): what they raise
    # names the file as a scan's errors do
    bad = str(tmp_path / "b.arrow")
    with pa.ipc.new_file(bad, pa.schema([("x", pa.int64())])) as w:
        w.write_batch(pa.record_batch({"x": pa.array([1, 2], pa.int64())}))
        w.write_batch(pa.record_batch({"x": pa.array([3], pa.int64())}))
    data = bytearray(open(bad, "rb").read())
    second = [i for i in range(len(data) - 4) if data[i:i + 4] == b"\xff\xff\xff\xff"][2]
    data[second + 8:second + 24] = b"\xee" * 16          # the batch's flatbuffer metadata
    open(bad, "wb").write(bytes(data))
    with pytest.raises(ArrowInvalid, match=f"^{re.escape(bad)}: "):
        ds.dataset([good, bad], format="ipc").count_rows()


def test_a_deferred_content_check_is_an_error_naming_the_file(tmp_path):
    # offsets that decrease pass the decode's bounds checks and fail the content checks run
    # at the batch's first column access: the scan still names the file
    good = str(tmp_path / "a.arrows")
    bad = str(tmp_path / "b.arrows")
    for path in (good, bad):
        with pa.ipc.new_stream(path, pa.schema([("s", pa.string())])) as w:
            w.write_batch(pa.record_batch({"s": ["a", "bb", "ccc"]}))
    _patched(bad, bytes([0, 0, 0, 0, 1, 0, 0, 0, 3, 0, 0, 0, 6, 0, 0, 0]),
             bytes([0, 0, 0, 0, 3, 0, 0, 0, 1, 0, 0, 0, 6, 0, 0, 0]))
    with pytest.raises(ArrowInvalid, match=f"^{re.escape(bad)}: .*offsets must not decrease"):
        ds.dataset([good, bad], format="stream").to_table()


def test_a_file_naming_a_column_twice_is_multiple_matches_naming_the_file(tmp_path):
    first = str(tmp_path / "a.arrow")
    twice = str(tmp_path / "b.arrow")
    pf.write_feather(pa.table({"x": [1, 2], "y": [3, 4]}), first)
    pf.write_feather(pa.Table.from_arrays([pa.array([1]), pa.array([2])], names=["x", "x"]),
                     twice)
    # pyarrow: "Multiple matches for FieldRef.Name(x) in x: int64\nx: int64"
    with pytest.raises(ArrowInvalid, match=f"^{re.escape(twice)}: Multiple matches for "
                                           r"FieldRef.Name\(x\) in x: int64\nx: int64"):
        ds.dataset([first, twice], format="ipc").to_table()


def _two_mapped_batches(path):
    """A file of two 10 000-row int64 batches (large enough to be mapped by a count)."""
    with pa.ipc.new_file(path, pa.schema([("x", pa.int64())])) as w:
        for k in range(2):
            w.write_batch(pa.record_batch({"x": pa.array(range(k, k + 10_000), pa.int64())}))
    return bytearray(open(path, "rb").read())


def test_a_damaged_header_read_by_a_filtered_count_is_an_error_naming_the_file(tmp_path, good):
    # the first filtered count finds values from the headers; a header it cannot read is
    # left to the scan's decode, whose error names the file
    bad = str(tmp_path / "b.arrow")
    data = _two_mapped_batches(bad)
    second = [i for i in range(len(data) - 4) if data[i:i + 4] == b"\xff\xff\xff\xff"][2]
    data[second + 8:second + 24] = b"\xee" * 16
    open(bad, "wb").write(bytes(data))
    with pytest.raises(ArrowInvalid, match=f"^{re.escape(bad)}: "):
        ds.dataset([good, bad], format="ipc").count_rows(filter=ds.field("x") < 10)


@pytest.mark.parametrize("offset", [2**62, 2**40, 80_008])
def test_values_a_header_places_past_the_body_are_an_error_naming_the_file(tmp_path, good,
                                                                            offset):
    """A filtered count reads no value a header places outside its batch's body: the batch is
    decoded, which reports the buffer and the body's size."""
    import sys
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(
        __file__))), "ipc"))
    import ipc_surgery as X
    bad = str(tmp_path / "b.arrow")
    data = _two_mapped_batches(bad)
    frame = X.file_frames(data)[2]                  # schema, then the two batches
    pos, _, _ = frame.buffers()[1]                  # the values buffer's (offset, length)
    data[pos:pos + 8] = offset.to_bytes(8, "little")
    open(bad, "wb").write(bytes(data))
    with pytest.raises(ArrowInvalid, match=f"^{re.escape(bad)}: .*buffer 1 of field 'x' spans "
                                           f"bytes \\[{offset}, {offset}\\+80000\\) but the "
                                           f"body has 80000 bytes"):
        ds.dataset([good, bad], format="ipc").count_rows(filter=ds.field("x") < 10)


def test_an_unknown_segment_encoding_is_named_as_pyarrow_names_it():
    import pyarrow.dataset as pds
    schema = pa.schema([("y", pa.int16())])
    with pytest.raises(ValueError, match="^Unknown segment encoding: bogus$"):
        pds.DirectoryPartitioning(schema, segment_encoding="bogus")
    for make in (lambda: ds.DirectoryPartitioning(schema, segment_encoding="bogus"),
                 lambda: ds.HivePartitioning.discover(segment_encoding="bogus")):
        with pytest.raises(ValueError, match=r"^Unknown segment encoding: bogus \(expected one "
                                             r"of none, uri\)$"):
            make()


@pytest.mark.parametrize("flavor", ["hive", "directory"])
def test_a_discovered_value_that_does_not_parse_as_the_schema_given_is_pyarrows_error(
        tmp_path, flavor):
    import pyarrow.dataset as pds
    for value in ("1", "abc"):
        d = tmp_path / (f"y={value}" if flavor == "hive" else value)
        d.mkdir()
        pf.write_feather(pa.table({"x": [1]}), str(d / "f.arrow"))
    schema = pa.schema([("y", pa.int32())])
    expected = ("Could not cast segments for partition field y to requested type int32 "
                "because: Invalid: Failed to parse string: 'abc' as a scalar of type int32")

    def factory(mod):
        return (mod.HivePartitioning if flavor == "hive" else mod.DirectoryPartitioning
                ).discover(schema=schema)
    with pytest.raises(pa.ArrowInvalid, match=f"^{re.escape(expected)}$"):
        pds.dataset(str(tmp_path), format="ipc", partitioning=factory(pds))
    where = "y=abc" if flavor == "hive" else "abc"
    with pytest.raises(ArrowInvalid, match=f"^{re.escape(expected)} \\(path '{where}/f.arrow' "
                                           f"below the partition base directory\\)$"):
        ds.dataset(str(tmp_path), format="ipc", partitioning=factory(ds))


def _body_length_claiming(tmp_path, claim):
    """A file of three batches whose second batch header claims a `claim`-byte body (its block
    keeps the bytes written), pyarrow's writing otherwise."""
    path = str(tmp_path / "body.arrow")
    t = pa.table({"x": pa.array(range(7), pa.int64()), "y": pa.array(range(7), pa.int64())})
    with pa.ipc.new_file(path, t.schema) as w:
        w.write_table(t, max_chunksize=3)
    off, meta_len, body_len = A.ipc.open_file(path).record_batch_blocks[1]
    data = bytearray(open(path, "rb").read())
    # the header's bodyLength: the one int64 equal to the block's body length in its metadata
    at = [i for i in range(off, off + meta_len, 8)
          if int.from_bytes(data[i:i + 8], "little") == body_len]
    assert len(at) == 1
    data[at[0]:at[0] + 8] = claim.to_bytes(8, "little")
    open(path, "wb").write(bytes(data))
    return path


@pytest.mark.parametrize("claim", [56, 1 << 40], ids=["a little", "a terabyte"])
def test_a_batch_header_claiming_a_body_past_its_block_is_not_counted(tmp_path, good, claim):
    # pyarrow's count reads the body and refuses; a count from the headers alone said 7
    import pyarrow.dataset as pds
    path = _body_length_claiming(tmp_path, claim)
    with pytest.raises(OSError, match="advertised body size"):
        pds.dataset(path, format="ipc").count_rows()
    with pytest.raises(OSError, match=f"^{re.escape(path)}: file: truncated record batch message "
                                      f"at byte \\d+. Expected to be able to read {claim} bytes "
                                      f"for message body, got 48$"):
        ds.dataset([good, path], format="ipc").count_rows()
    with pytest.raises(OSError, match=f"^file: truncated record batch message at byte \\d+. "
                                      f"Expected to be able to read {claim} bytes"):
        A.ipc.open_file(path).count_rows()


def test_a_dictionary_index_outside_its_dictionary_in_a_filtered_count_names_the_file(
        tmp_path, good):
    # the batch's deferred checks run when the filter reads the column: a count's error named
    # no file (a scan's did)
    import struct

    import pyarrow.dataset as pds
    path = str(tmp_path / "dict.arrow")
    indices = [1, 0, 1, 1, 0, 1]
    column = pa.DictionaryArray.from_arrays(pa.array(indices, pa.int32()), ["a", "b"])
    pf.write_feather(pa.table({"x": column}), path, compression="uncompressed")
    data = bytearray(open(path, "rb").read())
    at = data.index(struct.pack("<6i", *indices))
    struct.pack_into("<i", data, at + 4, 7)                 # slot 1 -> index 7 of 2 values
    open(path, "wb").write(bytes(data))
    with pytest.raises(pa.ArrowIndexError):                 # pyarrow refuses it too
        pds.dataset(path, format="ipc").count_rows(filter=pds.field("x") == "a")
    with pytest.raises(ArrowInvalid, match=f"^{re.escape(path)}: record batch: field 'x': "
                                           f"dictionary index at slot 1 is outside the "
                                           f"dictionary of 2 values$"):
        ds.dataset(path, format="ipc").count_rows(filter=ds.field("x") == "a")


def _file_with_block_edited(tmp_path, name, edit):
    """(path, the block as written) of a pyarrow file of 7 rows in batches of 3 whose footer's
    record batch block 1 is replaced by edit(offset, metadata length, body length)."""
    import struct
    path = str(tmp_path / name)
    t = pa.table({"x": pa.array(range(7), pa.int64())})
    with pa.ipc.new_file(path, t.schema) as w:
        w.write_table(t, max_chunksize=3)
    block = tuple(A.ipc.open_file(path).record_batch_blocks[1])
    data = bytearray(open(path, "rb").read())
    footer = len(data) - 10 - struct.unpack_from("<i", data, len(data) - 10)[0]
    at = data.index(struct.pack("<qi4xq", *block), footer)
    struct.pack_into("<qi4xq", data, at, *edit(*block))
    open(path, "wb").write(bytes(data))
    return path, block


@pytest.mark.parametrize("field", ["offset", "metadata", "body"])
def test_a_block_not_aligned_to_8_bytes_is_refused_as_by_pyarrow(tmp_path, good, field):
    # read leniently, the file counted and read 7 rows where pyarrow refuses it
    import pyarrow.dataset as pds
    k = ["offset", "metadata", "body"].index(field)

    def move(*block):
        return [v - 4 * (i == k) for i, v in enumerate(block)]
    path, block = _file_with_block_edited(tmp_path, "unaligned.arrow", move)
    moved = move(*block)
    with pytest.raises(pa.ArrowInvalid, match="Unaligned block in IPC file"):
        pds.dataset(path, format="ipc").count_rows()
    message = (f"file: record batch block 1 \\(offset {moved[0]}, metadata {moved[1]}, body "
               f"{moved[2]}\\) is not aligned to 8 bytes")
    with pytest.raises(ArrowInvalid, match=f"^{re.escape(path)}: {message}$"):
        ds.dataset([good, path], format="ipc").count_rows()
    with pytest.raises(ArrowInvalid, match=f"^{message}$"):
        A.ipc.open_file(path).read_all()


def test_a_batch_header_claiming_a_shorter_body_than_its_block_is_not_counted(tmp_path, good):
    # pyarrow's count refuses a block whose body length is not its header's; a count from the
    # headers alone said 7
    import pyarrow.dataset as pds
    path = _body_length_claiming(tmp_path, 40)             # the block keeps 48
    with pytest.raises(OSError, match="advertised body size is 48, but message decoder expects "
                                      "to read 40 bytes instead"):
        pds.dataset(path, format="ipc").count_rows()
    message = ("file: record batch block 1 at byte \\d+: the block's body length is 48, but the "
               "message header's is 40")
    with pytest.raises(OSError, match=f"^{re.escape(path)}: {message}$"):
        ds.dataset([good, path], format="ipc").count_rows()
    with pytest.raises(OSError, match=f"^{message}$"):
        A.ipc.open_file(path).count_rows()


def test_a_block_whose_metadata_length_is_not_its_messages_is_not_counted(tmp_path, good):
    # pyarrow's count refuses it; a count from the headers alone said 7
    import pyarrow.dataset as pds
    path, (off, meta_len, _) = _file_with_block_edited(
        tmp_path, "meta.arrow", lambda off, meta, body: (off, meta + 8, body - 8))
    with pytest.raises(pa.ArrowInvalid, match="Message metadata too long by 8 bytes"):
        pds.dataset(path, format="ipc").count_rows()
    message = (f"file: record batch block 1 at byte {off}: the block's metadata length is "
               f"{meta_len + 8}, but the message's framed metadata is {meta_len} bytes")
    with pytest.raises(ArrowInvalid, match=f"^{re.escape(path)}: {message}$"):
        ds.dataset([good, path], format="ipc").count_rows()
    with pytest.raises(ArrowInvalid, match=f"^{message}$"):
        A.ipc.open_file(path).count_rows()
