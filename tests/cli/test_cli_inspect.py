"""`arrowipc inspect`: the description agrees with what pyarrow reads, in text and JSON."""
import json
import os

import pytest

import arrowipc
from arrowipc import ipc
from arrowipc.cli import EXIT_INVALID_DATA, EXIT_IO, EXIT_OK

from clitools import gold, one_line_error, run, run_program, supplement

pa = pytest.importorskip("pyarrow")
import pyarrow.ipc as pa_ipc  # noqa: E402


def inspect_json(capsys, path) -> dict:
    r = run(capsys, "inspect", "--json", path)
    assert r.status == EXIT_OK, r.err
    return json.loads(r.out)


def pyarrow_batches(path, form):
    if form == "file":
        reader = pa_ipc.open_file(path)
        return [reader.get_batch_with_custom_metadata(i)
                for i in range(reader.num_record_batches)], reader.schema
    reader = pa_ipc.open_stream(path)
    return list(reader.iter_batches_with_custom_metadata()), reader.schema


def own_file(path, *, magic=b"ARROW1", compression=None):
    """A file written by arrowipc with field, schema, batch and footer metadata."""
    schema = arrowipc.schema([
        arrowipc.field("id", arrowipc.int64(), nullable=False, metadata={"unit": "count"}),
        arrowipc.field("name", arrowipc.string()),
    ], metadata={"origin": "cli tests"})
    options = ipc.IpcWriteOptions(compression=compression)
    with ipc.new_file(path, schema, options=options, metadata={"writer": "own_file"},
                      magic=magic) as w:
        w.write_batch(arrowipc.record_batch({"id": [1, 2, 3], "name": ["a", None, "c"]},
                                            schema=schema), custom_metadata={"part": "0"})
        w.write_batch(arrowipc.record_batch({"id": [4], "name": ["d"]}, schema=schema))
    return path


@pytest.mark.parametrize("stem,version", [
    ("primitive", "1.0.0-littleendian"), ("nested", "1.0.0-littleendian"),
    ("dictionary", "1.0.0-littleendian"), ("custom_metadata", "1.0.0-littleendian"),
    ("lz4", "2.0.0-compression"), ("zstd", "2.0.0-compression"),
    ("primitive_no_batches", "1.0.0-littleendian"), ("primitive", "1.0.0-bigendian"),
    ("decimal", "0.14.1"),
])
@pytest.mark.parametrize("form", ["file", "stream"])
def test_inspect_matches_pyarrow(capsys, stem, version, form):
    path = gold(stem, form, version)
    r = inspect_json(capsys, path)
    pairs, schema = pyarrow_batches(path, form)
    assert r["format"] == form
    assert r["magic"] == ("ARROW1" if form == "file" else None)
    assert r["num_record_batches"] == len(pairs)
    assert [b["rows"] for b in r["batches"]] == [b.num_rows for b, _ in pairs]
    assert r["num_rows"] == sum(b.num_rows for b, _ in pairs)
    assert [f["name"] for f in r["schema"]["fields"]] == schema.names
    assert [f["nullable"] for f in r["schema"]["fields"]] == [f.nullable for f in schema]
    for ours, theirs in zip(r["schema"]["fields"], schema):
        want = {k.decode(): v.decode() for k, v in (theirs.metadata or {}).items()}
        # extension fields keep their ARROW:extension:* keys in the IPC metadata
        assert {k: v for k, v in ours.get("metadata", {}).items()
                if not k.startswith("ARROW:extension:")} == \
            {k: v for k, v in want.items() if not k.startswith("ARROW:extension:")}
    want_schema_md = {k.decode(): v.decode() for k, v in (schema.metadata or {}).items()}
    assert (r["schema"]["metadata"] or {}) == want_schema_md
    assert r["endianness"] == ("big" if "bigendian" in version else "little")
    assert r["error"] is None


@pytest.mark.parametrize("stem,version,codec", [
    ("primitive", "1.0.0-littleendian", "none"), ("lz4", "2.0.0-compression", "lz4"),
    ("zstd", "2.0.0-compression", "zstd"),
])
def test_column_sizes_match_pyarrow_buffers(capsys, stem, version, codec):
    """Decoded bytes per column = the sizes of the buffers pyarrow reads (after decompression)."""
    path = gold(stem, "stream", version)
    r = inspect_json(capsys, path)
    assert r["compression"] == codec
    pairs, schema = pyarrow_batches(path, "stream")
    for i, col in enumerate(r["columns"]):
        want = 0
        for batch, _ in pairs:
            want += sum(b.size for b in batch.column(i).buffers() if b is not None)
        assert col["decoded_bytes"] == want, col["name"]
        if codec == "none":
            assert col["stored_bytes"] == col["decoded_bytes"]
    if codec != "none" and "uncompressible" not in stem:
        assert sum(c["stored_bytes"] for c in r["columns"]) < sum(
            c["decoded_bytes"] for c in r["columns"])


@pytest.mark.parametrize("name,deltas,replacements", [
    ("dict_delta.stream", 2, 0), ("dict_delta.arrow_file", 2, 0),
    ("dict_delta_zstd.stream", 2, 0), ("dict_replacement.stream", 0, 2),
])
def test_dictionaries_deltas_and_replacements(capsys, name, deltas, replacements):
    path = supplement(name)
    r = inspect_json(capsys, path)
    (d,) = r["dictionaries"]
    assert d["fields"] == ["d"]
    assert d["value_type"] == "string"
    assert (d["deltas"], d["replacements"], d["batches"]) == (deltas, replacements,
                                                             1 + deltas + replacements)
    kinds = [e["kind"] for e in r["dictionary_batches"]]
    assert kinds[0] == "initial"
    assert kinds.count("delta") == deltas and kinds.count("replacement") == replacements
    form = "file" if name.endswith("arrow_file") else "stream"
    pairs, _ = pyarrow_batches(path, form)
    last = pairs[-1][0].column(0)
    assert d["values"] == len(last.dictionary)            # the dictionary in force at the end
    assert r["schema"]["fields"][0]["dictionary"] == {"id": 0, "index_type": "int32",
                                                      "value_type": "string", "ordered": False}


def test_own_fixture_metadata_everywhere(capsys, tmp_path):
    path = own_file(str(tmp_path / "own.arrow"), magic=b"ALKAID1", compression="zstd")
    r = inspect_json(capsys, path)
    assert r["magic"] == "ALKAID1"
    assert r["compression"] == "zstd"
    assert r["metadata_version"] == "V5"
    assert r["schema"]["metadata"] == {"origin": "cli tests"}
    assert r["schema"]["fields"][0] == {"name": "id", "type": "int64", "nullable": False,
                                        "metadata": {"unit": "count"}}
    assert r["footer_metadata"] == {"writer": "own_file"}
    assert r["batches"][0]["custom_metadata"] == {"part": "0"}
    assert "custom_metadata" not in r["batches"][1]
    assert [b["rows"] for b in r["batches"]] == [3, 1]
    text = run(capsys, "inspect", path).out
    assert "format          file, magic ALKAID1" in text
    assert "footer metadata:\n  writer = own_file" in text
    assert "batch 0: part = 0" in text
    assert "| unit = count" in text
    assert "compression     zstd" in text


def test_text_report_of_a_gold_file(capsys):
    r = run(capsys, "inspect", gold("primitive", "file"))
    assert r.status == EXIT_OK
    lines = r.out.splitlines()
    size = os.path.getsize(gold("primitive", "file"))
    assert lines[0].endswith(f"Arrow IPC file, {size:,} bytes")
    assert "  format          file, magic ARROW1" in lines
    assert "  metadata        V5, little-endian" in lines
    assert "  record batches  2, 37 rows (17, 20)" in lines
    assert "  compression     none" in lines
    assert "schema (30 fields):" in lines
    assert "  bool_nonnullable: bool not null" in lines
    header = next(ln for ln in lines if ln.split()[:1] == ["column"])
    assert header.split() == ["column", "type", "stored", "decoded"]


def test_stream_end_marker_and_legacy_framing(capsys):
    r = inspect_json(capsys, gold("primitive", "stream"))
    assert r["framing"] == "continuation" and r["end_of_stream_marker"] is True
    assert r["trailing_bytes"] == 0
    legacy = inspect_json(capsys, gold("primitive", "stream", "0.14.1"))
    assert legacy["framing"] == "legacy"
    assert legacy["metadata_version"] == "V4"
    assert "legacy framing" in run(capsys, "inspect", gold("primitive", "stream", "0.14.1")).out


def test_truncated_stream_reports_what_it_read_then_fails(capsys, tmp_path):
    data = open(gold("primitive", "stream"), "rb").read()
    cut = tmp_path / "cut.arrows"
    cut.write_bytes(data[:-300])
    r = run(capsys, "inspect", "--json", cut)
    assert r.status == EXIT_INVALID_DATA
    report = json.loads(r.out)
    assert report["num_record_batches"] == 1          # the first batch is whole
    assert "truncated" in report["error"]
    line = one_line_error(r, "inspect")
    assert str(cut) in line and "invalid data" in line and "truncated" in line


def test_footerless_file_describes_the_data_section(capsys, tmp_path):
    data = open(gold("primitive", "file"), "rb").read()
    cut = tmp_path / "cut.arrow"
    cut.write_bytes(data[:len(data) // 2])
    r = run(capsys, "inspect", "--json", cut)
    assert r.status == EXIT_INVALID_DATA
    report = json.loads(r.out)
    assert "footer_error" in report and "truncated" in report["footer_error"]
    assert report["num_record_batches"] == 1
    assert len(report["schema"]["fields"]) == 30


@pytest.mark.parametrize("content,needle", [
    (b"", "empty input"),
    (b"PAR1\x00\x00\x00\x00garbage", "expected an Arrow IPC file"),
])
def test_not_arrow_ipc(capsys, tmp_path, content, needle):
    p = tmp_path / "x.arrow"
    p.write_bytes(content)
    r = run(capsys, "inspect", p)
    assert r.status == EXIT_INVALID_DATA
    assert needle in one_line_error(r, "inspect")


def test_missing_file_and_directory_are_io_errors(capsys, tmp_path):
    r = run(capsys, "inspect", tmp_path / "nope.arrow")
    assert r.status == EXIT_IO
    assert "No such file or directory" in one_line_error(r, "inspect")
    r = run(capsys, "inspect", tmp_path)
    assert r.status == EXIT_IO
    assert "Is a directory" in one_line_error(r, "inspect")


def test_stdin(tmp_path):
    data = open(gold("primitive", "stream"), "rb").read()
    r = run_program("inspect", "--json", "-", stdin=data)
    assert r.status == EXIT_OK, r.err
    report = json.loads(r.out)
    assert report["path"] == "<stdin>" and report["num_rows"] == 37
