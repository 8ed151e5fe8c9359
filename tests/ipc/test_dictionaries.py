"""Dictionary-encoded data in IPC (issue 3): reading, writing, deltas, replacement, statistics.

  * the ipc-supplement files (deltas, LZ4/ZSTD deltas, replacement) decode to their
    *.expected.arrow_file, with pyarrow's ReadStats;
  * arrowipc's stream writer sends a delta when the new dictionary extends the old one
    (emit_dictionary_deltas=True) and a replacement otherwise; pyarrow reads it with the right
    ReadStats and values; the message sequence and WriteStats are pyarrow's;
  * the file writer refuses replacement, takes deltas with emit_dictionary_deltas, and
    unify_dictionaries=True makes one dictionary for a table;
  * the file reader rejects a second non-delta dictionary for one id (a hand-patched file);
  * a dictionary may follow the first batch when every earlier index was null;
  * every index type signed and unsigned, ordered; nested dictionaries; shared ids; nulls, slices.
"""
import os

import pytest

pa = pytest.importorskip("pyarrow")
import pyarrow.compute as pc  # noqa: E402
import pyarrow.ipc as pa_ipc  # noqa: E402

import arrowipc  # noqa: E402
from arrowipc import ipc  # noqa: E402
from arrowipc.errors import ArrowInvalid  # noqa: E402

import ipc_surgery as X  # noqa: E402
import strategies as S  # noqa: E402
import testdata  # noqa: E402

SUPPLEMENT = testdata.IPC_SUPPLEMENT
SHARED_DICT_DIR = testdata.integration_dir("4.0.0-shareddict")

FORMS = ["stream", "file"]

DICT_STAT_FIELDS = ("num_dictionary_batches", "num_dictionary_deltas", "num_replaced_dictionaries")
STAT_FIELDS = ("num_messages", "num_record_batches") + DICT_STAT_FIELDS


# ---------------------------------------------------------------------------------------------
# helpers

def stats_of(stats, fields=STAT_FIELDS):
    return {f: getattr(stats, f) for f in fields}


def ours_write(pa_batches, form, options=None, schema=None, table=None):
    """Bytes written by arrowipc (batches one by one, or write_table when `table` is given)."""
    schema = schema if schema is not None else (table.schema if table is not None else pa_batches[0].schema)
    sink = arrowipc.BufferOutputStream()
    opener = ipc.new_stream if form == "stream" else ipc.new_file
    with opener(sink, arrowipc.schema(schema), options=options) as writer:
        if table is not None:
            writer.write_table(arrowipc.table(table))
        else:
            for batch in pa_batches:
                writer.write_batch(arrowipc.record_batch(batch))
    return S.as_bytes(sink.getvalue()), writer.stats


def pa_write(pa_batches, form, options=None, schema=None, table=None):
    schema = schema if schema is not None else (table.schema if table is not None else pa_batches[0].schema)
    sink = pa.BufferOutputStream()
    opener = pa_ipc.new_stream if form == "stream" else pa_ipc.new_file
    with opener(sink, schema, options=options) as writer:
        if table is not None:
            writer.write_table(table)
        else:
            for batch in pa_batches:
                writer.write_batch(batch)
    return sink.getvalue().to_pybytes(), writer.stats


def pa_read(data, form):
    """(batches, stats) read by pyarrow, every batch fully validated."""
    if form == "stream":
        reader = pa_ipc.open_stream(pa.py_buffer(data))
        batches = list(reader)
    else:
        reader = pa_ipc.open_file(pa.py_buffer(data))
        batches = [reader.get_batch(i) for i in range(reader.num_record_batches)]
    for batch in batches:
        batch.validate(full=True)
    return batches, reader.stats


def ours_read(data, form, options=None):
    """(batches, stats, schema) read by arrowipc."""
    if form == "stream":
        reader = ipc.open_stream(data, options=options)
        batches = list(reader)
    else:
        reader = ipc.open_file(data, options=options)
        batches = [reader.get_batch(i) for i in range(reader.num_record_batches)]
    return batches, reader.stats, reader.schema


def assert_batches_equal(ours, expected):
    """arrowipc batches equal pyarrow batches: types, dictionaries and indices (not just values)."""
    assert len(ours) == len(expected)
    for i, (got, want) in enumerate(zip(ours, expected)):
        got_pa = S.to_pa_batch(got)
        got_pa.validate(full=True)
        assert got_pa.schema.equals(want.schema, check_metadata=True), (i, got_pa.schema, want.schema)
        assert got_pa.equals(want), f"batch {i}:\n{got_pa}\n--- expected\n{want}"
        S.assert_pylist_equal(got.to_pylist(), want.to_pylist(), f"batch {i}")


def decode_dictionaries(table: pa.Table) -> pa.Table:
    """`table` with every top-level dictionary column cast to its value type."""
    columns = []
    for column in table.columns:
        if pa.types.is_dictionary(column.type):
            column = pc.cast(column, column.type.value_type)
        columns.append(column)
    return pa.Table.from_arrays(columns, names=table.column_names)


def dict_batch(indices, dictionary, index_type=pa.int32(), ordered=False, value_type=None, name="d"):
    arr = pa.DictionaryArray.from_arrays(pa.array(indices, index_type),
                                         pa.array(dictionary, value_type), ordered=ordered)
    return pa.record_batch({name: arr, "x": pa.array(range(len(indices)), pa.int64())})


def dictionary_messages(data, form):
    """[(dictionary id, isDelta)] of the dictionary batch messages, in order of appearance."""
    frames = X.file_frames(data) if form == "file" else X.split_stream(data)[0]
    out = []
    for frame in frames:
        if frame.header_type == X.HEADER_DICTIONARY_BATCH:
            header = frame.message.table(X.MESSAGE_HEADER)
            out.append((header.scalar(X.DICTIONARY_ID, "q"), bool(header.scalar(X.DICTIONARY_IS_DELTA, "B"))))
    return out


def message_kinds(data, form):
    """The message sequence as ('schema' | 'batch' | ('dict', id, isDelta)) items."""
    frames = X.file_frames(data) if form == "file" else X.split_stream(data)[0]
    out = []
    for frame in frames:
        if frame.header_type == X.HEADER_DICTIONARY_BATCH:
            header = frame.message.table(X.MESSAGE_HEADER)
            out.append(("dict", header.scalar(X.DICTIONARY_ID, "q"),
                        bool(header.scalar(X.DICTIONARY_IS_DELTA, "B"))))
        else:
            out.append({X.HEADER_SCHEMA: "schema", X.HEADER_RECORD_BATCH: "batch"}[frame.header_type])
    return out


# ---------------------------------------------------------------------------------------------
# the ipc-supplement files

SUPPLEMENT_CASES = [
    ("dict_delta", "stream"), ("dict_delta", "file"),
    ("dict_delta_lz4", "stream"), ("dict_delta_lz4", "file"),
    ("dict_delta_zstd", "stream"), ("dict_delta_zstd", "file"),
    ("dict_replacement", "stream"),
]
SUPPLEMENT_IDS = [f"{stem}.{form}" for stem, form in SUPPLEMENT_CASES]
# the delta files append a dictionary holding a null to one without nulls
SUPPLEMENT_VALUE_CASES = [pytest.param(stem, form, id=f"{stem}.{form}")
                          for stem, form in SUPPLEMENT_CASES]
SUPPLEMENT_ALL_STATS_CASES = [pytest.param(stem, form, id=f"{stem}.{form}")
                              for stem, form in SUPPLEMENT_CASES]


def supplement_path(stem, form):
    return testdata.required(os.path.join(SUPPLEMENT, stem + (".stream" if form == "stream" else ".arrow_file")))


def supplement_expected(stem) -> pa.Table:
    return pa_ipc.open_file(os.path.join(SUPPLEMENT, stem + ".expected.arrow_file")).read_all()


def test_supplement_folder_is_complete():
    names = set(os.listdir(testdata.required(SUPPLEMENT)))
    for stem, form in SUPPLEMENT_CASES:
        assert stem + (".stream" if form == "stream" else ".arrow_file") in names
        assert stem + ".expected.arrow_file" in names


@pytest.mark.parametrize("stem,form", SUPPLEMENT_VALUE_CASES)
def test_supplement_decodes_to_expected(stem, form):
    path = supplement_path(stem, form)
    expected = supplement_expected(stem)
    assert expected.schema.field("d").type == pa.string()       # the oracle is plain utf8
    batches, _, schema = ours_read(path, form)
    assert S.to_pa_schema(schema).field("d").type == pa.dictionary(pa.int32(), pa.string())
    got = pa.Table.from_batches([S.to_pa_batch(b) for b in batches])
    assert [b.num_rows for b in batches] == [b.num_rows for b in expected.to_batches()]
    decoded = decode_dictionaries(got)
    assert decoded.equals(expected), f"{decoded}\n--- expected\n{expected}"
    # arrowipc's own Python values too, batch by batch
    for ours, theirs in zip(batches, expected.to_batches()):
        S.assert_pylist_equal(ours.to_pylist(), theirs.to_pylist())


@pytest.mark.parametrize("stem,form", SUPPLEMENT_VALUE_CASES)
def test_supplement_read_all_decodes_to_expected(stem, form):
    path = supplement_path(stem, form)
    opener = ipc.open_stream if form == "stream" else ipc.open_file
    with opener(path) as reader:
        table = reader.read_all()
    assert decode_dictionaries(S.to_pa_table(table)).equals(supplement_expected(stem))


@pytest.mark.parametrize("stem,form", SUPPLEMENT_VALUE_CASES)
def test_supplement_dictionaries_match_pyarrow(stem, form):
    # not only the values: each batch carries the dictionary pyarrow gives it (deltas appended)
    path = supplement_path(stem, form)
    theirs, _ = pa_read(open(path, "rb").read(), form)
    ours, _, _ = ours_read(path, form)
    assert_batches_equal(ours, theirs)


@pytest.mark.parametrize("stem,form", SUPPLEMENT_CASES, ids=SUPPLEMENT_IDS)
def test_supplement_read_stats_match_pyarrow(stem, form):
    path = supplement_path(stem, form)
    if form == "stream":
        theirs, ours = pa_ipc.open_stream(path), ipc.open_stream(path)
        # after every step, not only at the end
        for step in range(5):
            for reader in (theirs, ours):
                try:
                    reader.read_next_batch()
                except StopIteration:
                    pass
            assert stats_of(ours.stats, DICT_STAT_FIELDS) == stats_of(theirs.stats, DICT_STAT_FIELDS), step
    else:
        theirs, ours = pa_ipc.open_file(path), ipc.open_file(path)
        for reader in (theirs, ours):
            for i in range(reader.num_record_batches):
                reader.get_batch(i)
        assert stats_of(ours.stats, DICT_STAT_FIELDS) == stats_of(theirs.stats, DICT_STAT_FIELDS)
    expected_deltas = 0 if stem == "dict_replacement" else 2
    assert ours.stats.num_dictionary_batches == 3
    assert ours.stats.num_dictionary_deltas == expected_deltas
    assert ours.stats.num_replaced_dictionaries == (2 if stem == "dict_replacement" else 0)


@pytest.mark.parametrize("stem,form", SUPPLEMENT_ALL_STATS_CASES)
def test_supplement_all_read_stats_match_pyarrow(stem, form):
    # every ReadStats field, num_messages and num_record_batches included
    path = supplement_path(stem, form)
    if form == "stream":
        theirs, ours = pa_ipc.open_stream(path), ipc.open_stream(path)
        theirs.read_all()
        ours.read_all()
    else:
        theirs, ours = pa_ipc.open_file(path), ipc.open_file(path)
        for reader in (theirs, ours):
            for i in range(reader.num_record_batches):
                reader.get_batch(i)
    assert stats_of(ours.stats) == stats_of(theirs.stats)


@pytest.mark.parametrize("form", ["stream", "file"])
def test_reader_num_messages_counts_like_pyarrow(form):
    batches = [dict_batch([0, 1], ["a", "b"]), dict_batch([1], ["a", "b"])]
    data, _ = pa_write(batches, form)
    if form == "stream":
        theirs, ours = pa_ipc.open_stream(data), ipc.open_stream(data)
    else:
        theirs, ours = pa_ipc.open_file(data), ipc.open_file(data)
    assert stats_of(ours.stats) == stats_of(theirs.stats), "after opening"
    theirs.read_all()
    ours.read_all()
    assert stats_of(ours.stats) == stats_of(theirs.stats), "after read_all"


@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize("first", [pytest.param(["a", "b", "c"], id="first_without_validity"),
                                   pytest.param(["a", None, "c"], id="first_with_nulls")])
def test_delta_holding_a_null_after_a_dictionary(form, first):
    # the smallest reproduction of the supplement files' case, at several bit positions
    batches = [dict_batch([0, 1, 2], first), dict_batch([3, 4, 0], first + ["d", None]),
               dict_batch([5, 6, 4], first + ["d", None, None, "e"])]
    data, _ = pa_write(batches, form, pa_ipc.IpcWriteOptions(emit_dictionary_deltas=True))
    theirs, _ = pa_read(data, form)
    got, stats, _ = ours_read(data, form)
    assert stats.num_dictionary_deltas == 2
    assert [b.to_pylist() for b in got] == [b.to_pylist() for b in theirs]
    assert_batches_equal(got, theirs)


# ---------------------------------------------------------------------------------------------
# the stream writer: deltas and replacements

# first dictionary, two extensions, a replacement, an extension of it, the same again
EVOLVING = [
    ([0, 1, None], ["a", "b"]),
    ([2, 0], ["a", "b", "c"]),
    ([3, None, 1, 3], ["a", "b", "c", "d"]),
    ([0, 1], ["z", "y"]),
    ([2, 2, 0], ["z", "y", "x"]),
    ([1], ["z", "y", "x"]),
]
# what a reader must count for EVOLVING, by emit_dictionary_deltas
EVOLVING_STATS = {
    True: {"num_dictionary_batches": 5, "num_dictionary_deltas": 3, "num_replaced_dictionaries": 1},
    False: {"num_dictionary_batches": 5, "num_dictionary_deltas": 0, "num_replaced_dictionaries": 4},
}


def evolving_batches(index_type=pa.int32()):
    return [dict_batch(indices, dictionary, index_type) for indices, dictionary in EVOLVING]


@pytest.mark.parametrize("deltas", [True, False], ids=["deltas", "no_deltas"])
def test_stream_writer_deltas_and_replacements_read_by_pyarrow(deltas):
    batches = evolving_batches()
    data, _ = ours_write(batches, "stream", ipc.IpcWriteOptions(emit_dictionary_deltas=deltas))
    got, stats = pa_read(data, "stream")
    assert len(got) == len(batches)
    for i, (g, b) in enumerate(zip(got, batches)):
        assert g.equals(b), f"batch {i}:\n{g}\n--- expected\n{b}"
    assert stats_of(stats, DICT_STAT_FIELDS) == EVOLVING_STATS[deltas]
    assert stats.num_record_batches == len(batches)


@pytest.mark.parametrize("deltas", [True, False], ids=["deltas", "no_deltas"])
def test_stream_writer_message_sequence_is_pyarrows(deltas):
    batches = evolving_batches()
    ours, _ = ours_write(batches, "stream", ipc.IpcWriteOptions(emit_dictionary_deltas=deltas))
    theirs, _ = pa_write(batches, "stream", pa_ipc.IpcWriteOptions(emit_dictionary_deltas=deltas))
    assert message_kinds(ours, "stream") == message_kinds(theirs, "stream")
    delta_flags = [is_delta for _, is_delta in dictionary_messages(ours, "stream")]
    assert delta_flags == ([False, True, True, False, True] if deltas else [False] * 5)


@pytest.mark.parametrize("deltas", [True, False], ids=["deltas", "no_deltas"])
def test_stream_writer_stats_match_pyarrow(deltas):
    batches = evolving_batches()
    _, ours = ours_write(batches, "stream", ipc.IpcWriteOptions(emit_dictionary_deltas=deltas))
    _, theirs = pa_write(batches, "stream", pa_ipc.IpcWriteOptions(emit_dictionary_deltas=deltas))
    assert stats_of(ours) == stats_of(theirs)
    assert stats_of(ours, DICT_STAT_FIELDS) == EVOLVING_STATS[deltas]


@pytest.mark.parametrize("deltas", [True, False], ids=["deltas", "no_deltas"])
def test_stream_writer_output_read_by_arrowipc(deltas):
    batches = evolving_batches()
    data, _ = ours_write(batches, "stream", ipc.IpcWriteOptions(emit_dictionary_deltas=deltas))
    got, stats, _ = ours_read(data, "stream")
    assert_batches_equal(got, batches)
    assert stats_of(stats, DICT_STAT_FIELDS) == EVOLVING_STATS[deltas]
    # and what pyarrow counts reading the same bytes
    _, theirs = pa_read(data, "stream")
    assert stats_of(stats) == stats_of(theirs)


def test_stream_writer_replaces_when_the_new_dictionary_is_shorter_or_reordered():
    # not an extension: a prefix mismatch, a shorter dictionary -> replacement even with deltas
    batches = [dict_batch([0, 1], ["a", "b", "c"]), dict_batch([0], ["b", "a", "c", "d"]),
               dict_batch([0], ["b"])]
    data, stats = ours_write(batches, "stream", ipc.IpcWriteOptions(emit_dictionary_deltas=True))
    assert dictionary_messages(data, "stream") == [(0, False), (0, False), (0, False)]
    assert stats.num_replaced_dictionaries == 2 and stats.num_dictionary_deltas == 0
    got, read_stats = pa_read(data, "stream")
    assert [g.equals(b) for g, b in zip(got, batches)] == [True] * 3
    assert read_stats.num_replaced_dictionaries == 2


def test_stream_writer_same_dictionary_object_sends_no_new_message():
    arr = pa.DictionaryArray.from_arrays(pa.array([0, 1, 0], pa.int8()), pa.array(["p", "q"]))
    batch = pa.record_batch({"d": arr})
    data, stats = ours_write([batch, batch.slice(1, 2), batch], "stream",
                             ipc.IpcWriteOptions(emit_dictionary_deltas=True))
    assert dictionary_messages(data, "stream") == [(0, False)]
    assert stats.num_dictionary_batches == 1
    _, theirs = pa_write([batch, batch.slice(1, 2), batch], "stream",
                         pa_ipc.IpcWriteOptions(emit_dictionary_deltas=True))
    assert stats_of(stats) == stats_of(theirs)


def test_stream_writer_two_dictionary_columns_evolve_independently():
    def batch(a_idx, a_dict, b_idx, b_dict):
        return pa.record_batch({
            "a": pa.DictionaryArray.from_arrays(pa.array(a_idx, pa.int16()), pa.array(a_dict)),
            "b": pa.DictionaryArray.from_arrays(pa.array(b_idx, pa.uint8()), pa.array(b_dict, pa.int64())),
        })
    batches = [batch([0, 1], ["a", "b"], [0, 0], [10]),
               batch([2], ["a", "b", "c"], [0], [10]),        # a: delta, b: unchanged
               batch([0, 1], ["a", "b", "c"], [1, 0], [20, 30])]   # a: unchanged, b: replaced
    options = ipc.IpcWriteOptions(emit_dictionary_deltas=True)
    ours, ours_stats = ours_write(batches, "stream", options)
    theirs, theirs_stats = pa_write(batches, "stream", pa_ipc.IpcWriteOptions(emit_dictionary_deltas=True))
    assert message_kinds(ours, "stream") == message_kinds(theirs, "stream")
    assert stats_of(ours_stats) == stats_of(theirs_stats)
    got, _ = pa_read(ours, "stream")
    assert [g.equals(b) for g, b in zip(got, batches)] == [True] * 3


# ---------------------------------------------------------------------------------------------
# the file writer

def extending_batches():
    return [dict_batch([0, None, 1], ["a", "b"]), dict_batch([2, 2], ["a", "b", "c"]),
            dict_batch([4, 0], ["a", "b", "c", "d", "e"])]


@pytest.mark.parametrize("deltas", [True, False], ids=["deltas", "no_deltas"])
def test_file_writer_refuses_replacement(deltas):
    batches = [dict_batch([0, 1], ["a", "b"]), dict_batch([0], ["z"])]
    with pytest.raises(pa.ArrowInvalid):        # the oracle refuses too
        pa_write(batches, "file", pa_ipc.IpcWriteOptions(emit_dictionary_deltas=deltas))
    sink = arrowipc.BufferOutputStream()
    writer = ipc.new_file(sink, arrowipc.schema(batches[0].schema),
                          options=ipc.IpcWriteOptions(emit_dictionary_deltas=deltas))
    writer.write_batch(arrowipc.record_batch(batches[0]))
    with pytest.raises(ArrowInvalid, match="(?i)dictionar"):
        writer.write_batch(arrowipc.record_batch(batches[1]))


def test_file_writer_without_deltas_refuses_an_extended_dictionary():
    batches = extending_batches()
    with pytest.raises(pa.ArrowInvalid):
        pa_write(batches, "file")
    with pytest.raises(ArrowInvalid):
        ours_write(batches, "file")


def test_file_writer_accepts_deltas():
    batches = extending_batches()
    data, stats = ours_write(batches, "file", ipc.IpcWriteOptions(emit_dictionary_deltas=True))
    got, read_stats = pa_read(data, "file")
    # a file reader applies every delta before the first batch: values are what was written,
    # and every batch carries the whole dictionary
    assert [g.to_pylist() for g in got] == [b.to_pylist() for b in batches]
    assert [g.column("d").indices.equals(b.column("d").indices) for g, b in zip(got, batches)] == [True] * 3
    assert [g.column("d").dictionary.to_pylist() for g in got] == [["a", "b", "c", "d", "e"]] * 3
    assert stats_of(read_stats, DICT_STAT_FIELDS) == {
        "num_dictionary_batches": 3, "num_dictionary_deltas": 2, "num_replaced_dictionaries": 0}
    # the footer lists every dictionary batch, in the order they were written
    assert len(X.file_blocks(data, X.FOOTER_DICTIONARIES)) == 3
    assert dictionary_messages(data, "file") == [(0, False), (0, True), (0, True)]
    theirs, theirs_stats = pa_write(batches, "file", pa_ipc.IpcWriteOptions(emit_dictionary_deltas=True))
    assert stats_of(stats) == stats_of(theirs_stats)
    assert message_kinds(data, "file") == message_kinds(theirs, "file")


def test_file_with_deltas_read_by_arrowipc():
    batches = extending_batches()
    for data in (ours_write(batches, "file", ipc.IpcWriteOptions(emit_dictionary_deltas=True))[0],
                 pa_write(batches, "file", pa_ipc.IpcWriteOptions(emit_dictionary_deltas=True))[0]):
        theirs, theirs_stats = pa_read(data, "file")
        got, stats, _ = ours_read(data, "file")
        assert_batches_equal(got, theirs)
        assert [g.to_pylist() for g in got] == [b.to_pylist() for b in batches]
        assert stats_of(stats, DICT_STAT_FIELDS) == stats_of(theirs_stats, DICT_STAT_FIELDS)
        assert stats.num_dictionary_deltas == 2
        # random access in any order sees the whole dictionary (deltas applied in footer order)
        with ipc.open_file(data) as reader:
            for i in (2, 0, 1):
                assert S.to_pa_batch(reader.get_batch(i)).equals(theirs[i])


def unify_chunks():
    # chunks with unrelated dictionaries: a file could not hold them without unification
    return [dict_batch([0, 1, None], ["b", "a"]), dict_batch([1, 0], ["c", "b"]), dict_batch([0], ["d"])]


def test_unify_dictionaries_makes_one_dictionary_in_a_file():
    table = pa.Table.from_batches(unify_chunks())
    data, stats = ours_write(None, "file", ipc.IpcWriteOptions(unify_dictionaries=True), table=table)
    assert len(dictionary_messages(data, "file")) == 1
    assert len(X.file_blocks(data, X.FOOTER_DICTIONARIES)) == 1
    assert stats.num_dictionary_batches == 1
    assert stats.num_replaced_dictionaries == 0 and stats.num_dictionary_deltas == 0
    got, read_stats = pa_read(data, "file")
    assert read_stats.num_dictionary_batches == 1
    assert [b.num_rows for b in got] == [3, 2, 1]
    got_table = pa.Table.from_batches(got)
    assert decode_dictionaries(got_table).equals(decode_dictionaries(table))
    # one dictionary shared by every batch, holding every value once
    dictionaries = [b.column("d").dictionary for b in got]
    assert all(d.equals(dictionaries[0]) for d in dictionaries)
    assert sorted(dictionaries[0].to_pylist()) == ["a", "b", "c", "d"]
    theirs, theirs_stats = pa_write(None, "file", pa_ipc.IpcWriteOptions(unify_dictionaries=True), table=table)
    assert stats_of(stats) == stats_of(theirs_stats)
    # the unified dictionary is pyarrow's (first-seen order)
    assert dictionaries[0].equals(pa_read(theirs, "file")[0][0].column("d").dictionary)


def test_unify_dictionaries_in_a_stream_behaves_like_pyarrow():
    table = pa.Table.from_batches(unify_chunks())
    ours, ours_stats = ours_write(None, "stream", ipc.IpcWriteOptions(unify_dictionaries=True), table=table)
    theirs, theirs_stats = pa_write(None, "stream", pa_ipc.IpcWriteOptions(unify_dictionaries=True), table=table)
    got, _ = pa_read(ours, "stream")
    assert decode_dictionaries(pa.Table.from_batches(got)).equals(decode_dictionaries(table))
    assert stats_of(ours_stats) == stats_of(theirs_stats)
    assert message_kinds(ours, "stream") == message_kinds(theirs, "stream")


def test_unify_dictionaries_in_a_file_needs_no_deltas_or_replacements():
    # the same chunks without unification are refused by the file writer
    table = pa.Table.from_batches([dict_batch([0], ["b"]), dict_batch([0], ["c"])])
    with pytest.raises(ArrowInvalid):
        ours_write(None, "file", table=table)
    data, _ = ours_write(None, "file", ipc.IpcWriteOptions(unify_dictionaries=True), table=table)
    got, _ = pa_read(data, "file")
    assert pa.Table.from_batches(got).column("d").to_pylist() == ["b", "c"]


# ---------------------------------------------------------------------------------------------
# the file reader rejects a second non-delta dictionary for one id

def file_with_two_non_delta_dictionaries(writer: str) -> bytes:
    """A file written with one delta, whose delta flag is then patched to false."""
    batches = [dict_batch([0, None, 1], ["a", "b"]), dict_batch([0, 0], ["a", "b", "c"])]
    if writer == "pyarrow":
        data, _ = pa_write(batches, "file", pa_ipc.IpcWriteOptions(emit_dictionary_deltas=True))
    else:
        data, _ = ours_write(batches, "file", ipc.IpcWriteOptions(emit_dictionary_deltas=True))
    data = bytearray(data)
    deltas = [f for f in X.file_frames(data) if f.header_type == X.HEADER_DICTIONARY_BATCH
              and f.message.table(X.MESSAGE_HEADER).scalar(X.DICTIONARY_IS_DELTA, "B")]
    assert len(deltas) == 1
    pos = deltas[0].message.table(X.MESSAGE_HEADER).field_pos(X.DICTIONARY_IS_DELTA)
    data[pos] = 0
    assert dictionary_messages(bytes(data), "file") == [(0, False), (0, False)]
    return bytes(data)


@pytest.mark.parametrize("writer", ["pyarrow", "arrowipc"])
def test_file_reader_rejects_second_non_delta_dictionary(writer):
    data = file_with_two_non_delta_dictionaries(writer)
    with pytest.raises(pa.ArrowInvalid):                        # the oracle agrees
        pa_ipc.open_file(pa.py_buffer(data)).read_all()
    with pytest.raises(ArrowInvalid, match="(?i)dictionar"):
        with ipc.open_file(data) as reader:
            reader.read_all()
    with pytest.raises(ArrowInvalid):
        ipc.open_file(data).get_batch(1)


def test_same_messages_as_a_stream_are_a_replacement():
    # the messages of that file, framed as a stream, are legal: the second replaces the first
    data = file_with_two_non_delta_dictionaries("pyarrow")
    stream = X.join_stream(X.file_frames(data))
    got, stats, _ = ours_read(stream, "stream")
    assert stats.num_replaced_dictionaries == 1
    assert [S.to_pa_batch(b).column("d").dictionary.to_pylist() for b in got] == [["a", "b"], ["c"]]
    _, theirs = pa_read(stream, "stream")
    assert stats_of(stats) == stats_of(theirs)


# ---------------------------------------------------------------------------------------------
# a dictionary after the first batch when every earlier index was null

def stream_with_late_dictionary(first_indices):
    """schema, batch 0 (no dictionary yet), dictionary, batch 1: reordered pyarrow output."""
    batches = [dict_batch(first_indices, ["a", "b"]), dict_batch([1, 0, None], ["a", "b"])]
    data, _ = pa_write(batches, "stream")
    frames, _, _ = X.split_stream(data)
    kinds = [f.header_type for f in frames]
    assert kinds == [X.HEADER_SCHEMA, X.HEADER_DICTIONARY_BATCH, X.HEADER_RECORD_BATCH, X.HEADER_RECORD_BATCH]
    return X.join_stream([frames[0], frames[2], frames[1], frames[3]])


@pytest.mark.parametrize("first_indices", [[None, None, None], []], ids=["all_null", "zero_rows"])
def test_dictionary_after_first_batch_when_earlier_indices_were_null(first_indices):
    data = stream_with_late_dictionary(first_indices)
    got, stats, _ = ours_read(data, "stream")
    assert len(got) == 2
    assert got[0].column(0).to_pylist() == first_indices
    assert got[0].column(1).to_pylist() == list(range(len(first_indices)))
    assert got[1].to_pylist() == [{"d": "b", "x": 0}, {"d": "a", "x": 1}, {"d": None, "x": 2}]
    first = S.to_pa_batch(got[0])
    first.validate(full=True)
    assert first.column("d").type == pa.dictionary(pa.int32(), pa.string())
    assert first.column("d").null_count == len(first_indices)
    assert S.to_pa_batch(got[1]).equals(dict_batch([1, 0, None], ["a", "b"]))
    assert stats_of(stats, DICT_STAT_FIELDS) == {
        "num_dictionary_batches": 1, "num_dictionary_deltas": 0, "num_replaced_dictionaries": 0}


def test_non_null_index_before_any_dictionary_is_rejected():
    data = stream_with_late_dictionary([None, 0, None])
    with pytest.raises(ArrowInvalid, match="(?i)dictionar"):
        ours_read(data, "stream")


def test_dictionary_after_all_null_batch_in_a_file():
    # file readers load the footer's dictionaries first; a file written by the stream order
    # above must still read, whichever block comes first in the file body
    batches = [dict_batch([None, None], ["a", "b"]), dict_batch([1, 0], ["a", "b"])]
    data, _ = ours_write(batches, "file")
    got, _, _ = ours_read(data, "file")
    assert_batches_equal(got, batches)


# ---------------------------------------------------------------------------------------------
# every index type, signed and unsigned, ordered or not, with nulls and slices

INDEX_TYPES = [pa.int8(), pa.int16(), pa.int32(), pa.int64(),
               pa.uint8(), pa.uint16(), pa.uint32(), pa.uint64()]
VALUE_CASES = {
    "string": (pa.string(), ["alpha", "", None, "δέλτα", "x" * 40, "b"]),
    "int64": (pa.int64(), [7, -3, None, 2 ** 62, 0, 5]),
    "float64": (pa.float64(), [1.5, float("inf"), -0.0, None, 3.25, 9.0]),
}
# slices whose offsets are not multiples of 8
SLICES = [(0, 37), (3, 17), (13, 0), (9, 28)]


def index_batch(index_type, ordered, value_case, length=37, seed=0):
    value_type, dictionary = VALUE_CASES[value_case]
    n = len(dictionary)
    indices = [None if (i * 7 + seed) % 5 == 2 else (i * 3 + seed) % n for i in range(length)]
    return dict_batch(indices, dictionary, index_type, ordered, value_type)


@pytest.mark.parametrize("ordered", [False, True], ids=["unordered", "ordered"])
@pytest.mark.parametrize("index_type", INDEX_TYPES, ids=str)
def test_index_types_pyarrow_to_arrowipc(index_type, ordered):
    batches = [index_batch(index_type, ordered, "string", seed=1), index_batch(index_type, ordered, "string", 0)]
    for form in FORMS:
        data, _ = pa_write(batches, form)
        got, _, schema = ours_read(data, form)
        dtype = schema.field("d").type
        assert isinstance(dtype, arrowipc.DictionaryType)
        assert dtype.index_type.name == str(index_type)
        assert dtype.index_type.is_signed == pa.types.is_signed_integer(index_type)
        assert dtype.ordered is ordered
        assert_batches_equal(got, batches)


@pytest.mark.parametrize("value_case", list(VALUE_CASES))
@pytest.mark.parametrize("ordered", [False, True], ids=["unordered", "ordered"])
@pytest.mark.parametrize("index_type", INDEX_TYPES, ids=str)
def test_index_types_arrowipc_to_pyarrow(index_type, ordered, value_case):
    batches = [index_batch(index_type, ordered, value_case, seed=2), index_batch(index_type, ordered, value_case, 0)]
    for form in FORMS:
        data, _ = ours_write(batches, form)
        got, _ = pa_read(data, form)
        assert got[0].schema.field("d").type == pa.dictionary(index_type, VALUE_CASES[value_case][0], ordered)
        assert [g.equals(b) for g, b in zip(got, batches)] == [True, True]


@pytest.mark.parametrize("start,length", SLICES, ids=[f"slice{s}_{n}" for s, n in SLICES])
@pytest.mark.parametrize("index_type", [pa.int8(), pa.uint16(), pa.int64(), pa.uint64()], ids=str)
def test_sliced_dictionary_batches_both_directions(index_type, start, length):
    full = index_batch(index_type, False, "string", length=40, seed=3)
    sliced = full.slice(start, length)
    # arrowipc writes a pyarrow slice (imported with its offset) and its own slice
    for ours_batch in (arrowipc.record_batch(sliced), arrowipc.record_batch(full).slice(start, length)):
        for form in FORMS:
            sink = arrowipc.BufferOutputStream()
            opener = ipc.new_stream if form == "stream" else ipc.new_file
            with opener(sink, arrowipc.schema(full.schema)) as writer:
                writer.write_batch(ours_batch)
            got, _ = pa_read(S.as_bytes(sink.getvalue()), form)
            assert got[0].num_rows == length
            assert got[0].column("d").to_pylist() == sliced.column("d").to_pylist()
            assert got[0].column("d").indices.equals(sliced.column("d").indices)
    # pyarrow writes the slice, arrowipc reads it
    for form in FORMS:
        got, _, _ = ours_read(pa_write([sliced], form)[0], form)
        assert_batches_equal(got, [sliced])
    # arrowipc reads the whole batch, then slices
    got, _, _ = ours_read(pa_write([full], "stream")[0], "stream")
    S.assert_pylist_equal(got[0].slice(start, length).to_pylist(), sliced.to_pylist())


def test_all_null_indices_and_null_dictionary_values():
    batches = [dict_batch([None] * 11, ["a", None]), dict_batch([1, 1, 0, None], ["a", None])]
    for form in FORMS:
        data, _ = ours_write(batches, form)
        got, _ = pa_read(data, form)
        assert [g.equals(b) for g, b in zip(got, batches)] == [True, True]
        assert got[1].column("d").to_pylist() == [None, None, "a", None]
        assert got[1].column("d").null_count == 1          # only the null index counts
        ours, _, _ = ours_read(pa_write(batches, form)[0], form)
        assert_batches_equal(ours, batches)
        assert ours[1].column(0).null_count == 1


def test_empty_dictionary():
    batches = [dict_batch([None, None], []), dict_batch([], [])]
    for form in FORMS:
        got, _ = pa_read(ours_write(batches, form)[0], form)
        assert [g.equals(b) for g, b in zip(got, batches)] == [True, True]
        ours, _, _ = ours_read(pa_write(batches, form)[0], form)
        assert_batches_equal(ours, batches)


# ---------------------------------------------------------------------------------------------
# nested: dictionaries inside lists and structs, dictionaries whose values are nested

def _dict(indices, values, index_type=pa.int32()):
    return pa.DictionaryArray.from_arrays(pa.array(indices, index_type), values)


def nested_columns(seed=0):
    n = 9
    idx = [None if (i + seed) % 4 == 3 else (i + seed) % 3 for i in range(n)]
    words = pa.array(["red", "green", None])
    list_values = _dict([(i * 2 + seed) % 3 for i in range(12)], pa.array(["p", "q", "r"]), pa.int16())
    offsets = pa.array([0, 2, 2, 5, 6, 6, 8, 9, 11, 12], pa.int32())
    struct_child = _dict(idx, words, pa.uint8())
    inner = _dict([0, 1, 1, 0, 1], pa.array(["u", "v"]), pa.int8())   # nested inside dictionary values
    return {
        "list_of_dict": pa.ListArray.from_arrays(offsets, list_values,
                                                 mask=pa.array([i == 4 for i in range(n)])),
        "large_list_of_dict": pa.LargeListArray.from_arrays(pa.array([0, 2, 2, 5, 6, 6, 8, 9, 11, 12], pa.int64()),
                                                            list_values),
        "struct_with_dict": pa.StructArray.from_arrays(
            [struct_child, pa.array(range(n), pa.int32())], names=["color", "n"],
            mask=pa.array([i == 6 for i in range(n)])),
        "dict_of_list": _dict(idx, pa.array([["a", None], [], None])),
        "dict_of_struct": _dict(idx, pa.array([{"k": 1, "s": "one"}, {"k": None, "s": "two"}, None],
                                              pa.struct([("k", pa.int64()), ("s", pa.string())])), pa.int64()),
        "dict_of_list_of_dict": _dict(idx, pa.ListArray.from_arrays(pa.array([0, 2, 2, 5], pa.int32()), inner)),
        "fixed_size_list_of_dict": pa.FixedSizeListArray.from_arrays(
            _dict([(i + seed) % 2 for i in range(n * 2)], pa.array(["m", "n"]), pa.uint32()), 2),
    }


NESTED_CASES = list(nested_columns())


@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize("case", NESTED_CASES)
def test_nested_dictionaries_both_directions(case, form):
    batches = [pa.record_batch({case: nested_columns(0)[case]}), pa.record_batch({case: nested_columns(1)[case]})]
    batches[1] = batches[1].cast(batches[0].schema) if not batches[1].schema.equals(batches[0].schema) else batches[1]
    # dictionaries differ between the two batches: streams replace them, files cannot
    if form == "file":
        batches = batches[:1]
    got, _, _ = ours_read(pa_write(batches, form)[0], form)
    assert_batches_equal(got, batches)
    data, ours_stats = ours_write(batches, form)
    back, read_stats = pa_read(data, form)
    assert [g.equals(b) for g, b in zip(back, batches)] == [True] * len(batches)
    _, theirs_stats = pa_write(batches, form)
    assert stats_of(ours_stats) == stats_of(theirs_stats)


@pytest.mark.parametrize("case", NESTED_CASES)
def test_nested_dictionaries_sliced(case):
    batch = pa.record_batch({case: nested_columns(2)[case]})
    for start, length in ((1, 7), (3, 5), (8, 1)):
        sliced = batch.slice(start, length)
        data, _ = ours_write([sliced], "stream")
        back, _ = pa_read(data, "stream")
        assert back[0].to_pylist() == sliced.to_pylist()
        ours_sliced = arrowipc.record_batch(batch).slice(start, length)
        sink = arrowipc.BufferOutputStream()
        with ipc.new_file(sink, arrowipc.schema(batch.schema)) as writer:
            writer.write_batch(ours_sliced)
        back, _ = pa_read(S.as_bytes(sink.getvalue()), "file")
        assert back[0].to_pylist() == sliced.to_pylist()
        got, _, _ = ours_read(pa_write([sliced], "stream")[0], "stream")
        S.assert_pylist_equal(got[0].to_pylist(), sliced.to_pylist())


def test_nested_dictionary_deltas_in_a_list():
    def batch(indices, dictionary):
        return pa.record_batch({"l": pa.ListArray.from_arrays(
            pa.array([0, 1, len(indices)], pa.int32()), _dict(indices, pa.array(dictionary)))})
    batches = [batch([0, 1], ["a", "b"]), batch([2, 0, 1], ["a", "b", "c"]), batch([0], ["z"])]
    ours, ours_stats = ours_write(batches, "stream", ipc.IpcWriteOptions(emit_dictionary_deltas=True))
    theirs, theirs_stats = pa_write(batches, "stream", pa_ipc.IpcWriteOptions(emit_dictionary_deltas=True))
    assert message_kinds(ours, "stream") == message_kinds(theirs, "stream")
    assert stats_of(ours_stats) == stats_of(theirs_stats)
    got, stats = pa_read(ours, "stream")
    assert [g.equals(b) for g, b in zip(got, batches)] == [True] * 3
    assert stats.num_dictionary_deltas == 1 and stats.num_replaced_dictionaries == 1


# ---------------------------------------------------------------------------------------------
# one dictionary id shared by several fields (the 4.0.0-shareddict gold file)

def shared_dict_path(form):
    return testdata.required(os.path.join(
        SHARED_DICT_DIR, "generated_shared_dict" + (".stream" if form == "stream" else ".arrow_file")))


def schema_dictionary_ids(data, form):
    """[dictionary id] of every dictionary-encoded field (pre-order), from the schema bytes."""
    if form == "file":
        footer, _ = X.file_footer(data)
        schema = footer.table(X.FOOTER_SCHEMA)
    else:
        frames, _, _ = X.split_stream(data)
        schema = frames[0].message.table(X.MESSAGE_HEADER)
    ids = []

    def walk(field):
        dictionary = field.table(4)                 # Field.dictionary: DictionaryEncoding
        if dictionary is not None:
            ids.append(dictionary.scalar(0, "q"))   # DictionaryEncoding.id
        for child in field.tables(5):               # Field.children
            walk(child)

    for field in schema.tables(1):                  # Schema.fields
        walk(field)
    return ids


@pytest.mark.parametrize("form", FORMS)
def test_shared_dictionary_gold_file(form):
    path = shared_dict_path(form)
    data = open(path, "rb").read()
    ids = schema_dictionary_ids(data, form)
    assert len(ids) > len(set(ids)), f"the gold file should share an id: {ids}"
    theirs, theirs_stats = pa_read(data, form)
    ours, ours_stats, schema = ours_read(data, form)
    S.assert_schema_equal(S.to_pa_schema(schema), theirs[0].schema if theirs else None)
    assert_batches_equal(ours, theirs)
    assert stats_of(ours_stats, DICT_STAT_FIELDS) == stats_of(theirs_stats, DICT_STAT_FIELDS)
    assert ours_stats.num_dictionary_batches == len(set(ids))


@pytest.mark.parametrize("form", FORMS)
def test_shared_dictionary_fields_share_values(form):
    # every field using the shared id decodes through the same dictionary
    data = open(shared_dict_path(form), "rb").read()
    ids = schema_dictionary_ids(data, form)
    ours, _, _ = ours_read(data, form)
    theirs, _ = pa_read(data, form)
    shared = [i for i in set(ids) if ids.count(i) > 1]
    assert shared
    for got, want in zip(ours, theirs):
        got_pa = S.to_pa_batch(got)
        dicts = [got_pa.column(i).dictionary for i in range(got_pa.num_columns)
                 if pa.types.is_dictionary(got_pa.column(i).type)]
        want_dicts = [want.column(i).dictionary for i in range(want.num_columns)
                      if pa.types.is_dictionary(want.column(i).type)]
        assert [d.to_pylist() for d in dicts] == [d.to_pylist() for d in want_dicts]


@pytest.mark.parametrize("form", FORMS)
def test_shared_dictionary_rewritten_by_arrowipc(form):
    data = open(shared_dict_path(form), "rb").read()
    ours, _, schema = ours_read(data, form)
    theirs, _ = pa_read(data, form)
    sink = arrowipc.BufferOutputStream()
    opener = ipc.new_stream if form == "stream" else ipc.new_file
    with opener(sink, schema) as writer:
        for batch in ours:
            writer.write_batch(batch)
    back, _ = pa_read(S.as_bytes(sink.getvalue()), form)
    assert [g.equals(t) for g, t in zip(back, theirs)] == [True] * len(theirs)
