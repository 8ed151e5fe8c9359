"""Decoded schemas are found again by the bytes their decode read (_flatbuf.recording and
ExtentCache): files of one schema share one decode although their footers differ, and a decode
through a recording table reads nothing outside the span it records, so equal spans decode
equally whatever surrounds them."""
import glob
import os
import random

import pytest

import arrowipc
import arrowipc.ipc as ipc
from arrowipc.ipc import metadata as md
from arrowipc.ipc import reader as reader_module
from arrowipc.ipc._flatbuf import ExtentCache, recording, root_table
from arrowipc.ipc.limits import schema_size
from tests.testdata import INTEGRATION, required

pa = pytest.importorskip("pyarrow")


def _file(path, table, batches, metadata=None):
    schema = table.schema.with_metadata(metadata) if metadata else table.schema
    with pa.ipc.new_file(path, schema) as w:
        for _ in range(batches):
            w.write_table(table)
    return path


def _table():
    return pa.table({"id": pa.array(range(10), pa.int64()),
                     "name": pa.array([f"n{i}" for i in range(10)]),
                     "tags": pa.array([[str(i)] * (i % 3) for i in range(10)]),
                     "kind": pa.array(["x", "y"] * 5).dictionary_encode()})


def _footer(data):
    """The footer flatbuffer's bytes of an IPC file's bytes."""
    footer_len = int.from_bytes(data[-10:-6], "little")
    return data[-10 - footer_len:-10]


def test_files_whose_footers_differ_share_one_decoded_schema(tmp_path):
    reader_module._SCHEMA_CACHE.clear()
    one = _file(str(tmp_path / "one.arrow"), _table(), 1)
    three = _file(str(tmp_path / "three.arrow"), _table(), 3)     # other blocks, other size
    assert _footer(open(one, "rb").read()) != _footer(open(three, "rb").read())
    first, second = ipc.open_file(one), ipc.open_file(three)
    assert second.num_record_batches == 3
    assert first.schema is second.schema                         # decoded once
    assert len(reader_module._SCHEMA_CACHE) == 1
    assert second.read_all().to_pyarrow().equals(pa.ipc.open_file(three).read_all())


def test_schemas_differing_in_a_name_or_in_metadata_are_decoded_anew(tmp_path):
    reader_module._SCHEMA_CACHE.clear()
    table = _table()
    paths = [_file(str(tmp_path / "a.arrow"), table, 1),
             _file(str(tmp_path / "b.arrow"), table.rename_columns(["id", "name", "tags", "kinx"]),
                   1),
             _file(str(tmp_path / "c.arrow"), table, 2, {"origin": "elsewhere"})]
    for path in paths:
        ours = ipc.open_file(path)
        expected = pa.ipc.open_file(path)
        assert ours.schema.to_pyarrow().equals(expected.schema, check_metadata=True)
        assert ours.read_all().to_pyarrow().equals(expected.read_all())
    assert len(reader_module._SCHEMA_CACHE) == 3


def _gold_footers():
    paths = sorted(glob.glob(os.path.join(required(INTEGRATION), "*", "*.arrow_file")))
    assert len(paths) > 50
    return [(os.path.relpath(p, INTEGRATION), _footer(open(p, "rb").read())) for p in paths]


def _decoded(schema_table):
    size = schema_size(schema_table, 10**6, 10**3)
    return size, md.decode_schema(schema_table).schema


def test_a_decode_reads_nothing_outside_the_span_it_records():
    # every byte outside the span overwritten with noise: the same schema decodes again (the
    # cache's premise), for every gold file's footer schema
    rng = random.Random(7)
    for name, footer in _gold_footers():
        root = recording(root_table(footer, "Footer"))
        try:
            expected = _decoded(root.table(1, "Schema"))
        except arrowipc.ArrowException:
            continue                                # refused: nothing would be cached
        lo, hi = root.recorded_span
        assert 0 <= lo < hi <= len(footer)
        noisy = bytearray(rng.randrange(256) for _ in range(len(footer)))
        noisy[lo:hi] = footer[lo:hi]
        noisy[:4] = footer[:4]                  # the root offset, read before recording starts
        size, schema = _decoded(root_table(bytes(noisy), "Footer").table(1, "Schema"))
        assert size == expected[0], name
        assert schema.equals(expected[1], check_metadata=True), name


def test_the_cache_finds_a_span_again_only_where_it_lies_whole_and_equal(tmp_path):
    table = _table()
    one = _footer(open(_file(str(tmp_path / "1.arrow"), table, 1), "rb").read())
    three = _footer(open(_file(str(tmp_path / "3.arrow"), table, 3), "rb").read())
    other = _footer(open(_file(str(tmp_path / "x.arrow"),
                               table.rename_columns(["id", "name", "tags", "kinx"]), 1), "rb").read())
    cache = ExtentCache(4)
    recorded = recording(root_table(one, "Footer").table(1, "Schema"))
    md.decode_schema(recorded)
    cache.put(recorded, "gen", "decoded")
    _, hi = recorded.recorded_span
    assert cache.get(root_table(three, "Footer").table(1, "Schema"), "gen") == "decoded"
    assert cache.get(root_table(three, "Footer").table(1, "Schema"), "next gen") is None
    assert cache.get(root_table(other, "Footer").table(1, "Schema"), "gen") is None
    # the span cut short by the buffer's end: not found (and nothing read past it)
    cut = root_table(one[:hi - 1], "Footer").table(1, "Schema")
    assert cut.pos == recorded.pos and cache.get(cut, "gen") is None
    with pytest.raises(ValueError, match="recording"):
        cache.put(root_table(one, "Footer").table(1, "Schema"), "gen", "x")
