"""`arrowipc validate`: exit 0 on valid input; otherwise every problem, each with where."""
import json
import os

import numpy as np
import pytest

import arrowipc
from arrowipc import ipc
from arrowipc.ipc._batch_decode import decode_record_batch_header
from arrowipc.cli import EXIT_INVALID_DATA, EXIT_OK
from arrowipc.ipc.message import read_message_from
from arrowipc.ipc.sources import open_source

import testdata
from clitools import fuzz_files, gold, run, supplement

pa = pytest.importorskip("pyarrow")
import pyarrow.ipc as pa_ipc  # noqa: E402

GOLD_DIRS = ("0.14.1", "0.17.1", "1.0.0-bigendian", "1.0.0-littleendian", "2.0.0-compression",
             "4.0.0-shareddict", "cpp-21.0.0")


def gold_files():
    out = []
    for d in GOLD_DIRS:
        folder = testdata.required(testdata.integration_dir(d))
        out += [pytest.param(os.path.join(folder, n), id=f"{d}/{n}")
                for n in sorted(os.listdir(folder)) if n.endswith((".stream", ".arrow_file"))]
    return out


def pyarrow_full_problem(path):
    """pyarrow's verdict at its full level: None when valid, else its message."""
    opener = pa_ipc.open_file if path.endswith(".arrow_file") else pa_ipc.open_stream
    try:
        opener(path).read_all().validate(full=True)
    except pa.ArrowInvalid as e:
        return str(e)
    return None


@pytest.mark.parametrize("path", gold_files())
def test_every_gold_file_agrees_with_pyarrow(capsys, path):
    r = run(capsys, "validate", path)
    assert r.status == EXIT_OK, r.out                 # structurally every gold file is valid
    assert r.out.startswith(f"valid: {path} (") and "structural checks" in r.out
    r = run(capsys, "validate", "--full", path)
    problem = pyarrow_full_problem(path)
    if problem is None:
        assert r.status == EXIT_OK, r.out
        assert "full checks" in r.out
    else:             # old gold decimals exceed their precision, old date64 values are not days
        assert r.status == EXIT_INVALID_DATA
        assert r.out.startswith("problem: record batch ")


@pytest.mark.parametrize("name", ["dict_delta.stream", "dict_delta_lz4.arrow_file",
                                  "dict_replacement.stream", "dict_delta_zstd.stream"])
def test_supplement_files_are_valid(capsys, name):
    r = run(capsys, "validate", "--json", supplement(name))
    assert r.status == EXIT_OK
    result = json.loads(r.out)
    assert result["valid"] and result["problems"] == []
    assert result["dictionary_batches"] == 3


@pytest.mark.parametrize("path", [pytest.param(p, id=os.path.basename(p)[-16:])
                                  for p in fuzz_files("stream") + fuzz_files("file")])
def test_fuzz_corpus_is_invalid_with_located_problems(capsys, path):
    r = run(capsys, "validate", "--json", path)
    if r.status != EXIT_INVALID_DATA:       # not even an IPC input: one line on stderr
        pytest.fail(f"status {r.status}: {r.err}")
    result = json.loads(r.out)     # JSON even when the input is not IPC at all
    assert not result["valid"] and result["problems"]
    for p in result["problems"]:
        assert p["where"] and p["message"]


def batch_body_offsets(path):
    """[(body start in the file, header)] of each record batch message of a stream."""
    src = open_source(path)
    out = []
    while True:
        msg = read_message_from(src)
        if msg is None:
            return out
        if msg.type == "record batch":
            out.append((src.pos - msg.body_length, decode_record_batch_header(msg.header)))


def two_bad_columns(tmp_path):
    """A stream whose batch has columns a and c with offsets running past their data."""
    path = str(tmp_path / "bad.arrows")
    batch = arrowipc.record_batch({"a": ["x", "yy", "zzz"], "b": [1, 2, 3],
                                   "c": ["p", "q", "r"]})
    with ipc.new_stream(path, batch.schema) as w:
        w.write_batch(batch)
    data = bytearray(open(path, "rb").read())
    (body, header), = batch_body_offsets(path)
    bufs = header.buffers_list()       # a: validity, offsets, data; b: validity, values; c: ...
    for offsets_index in (1, 6):
        off, _ = bufs[offsets_index]
        data[body + off + 12:body + off + 16] = (1000).to_bytes(4, "little")   # last offset
    open(path, "wb").write(bytes(data))
    return path


def test_every_bad_column_is_named(capsys, tmp_path):
    path = two_bad_columns(tmp_path)
    r = run(capsys, "validate", path)
    assert r.status == EXIT_INVALID_DATA
    problems = [ln for ln in r.out.splitlines() if ln.startswith("problem: ")]
    assert len(problems) == 2, r.out
    assert problems[0].startswith("problem: record batch 0 (byte ")
    assert "column 'a'" in problems[0] and "column 'c'" in problems[1]
    assert r.out.splitlines()[-1].startswith(f"invalid: {path} (stream): 2 problems")
    with pytest.raises(Exception):           # the oracle agrees the data is broken
        pa_ipc.open_stream(path).read_all().validate(full=True)


def invalid_utf8(tmp_path):
    path = str(tmp_path / "utf8.arrows")
    arr = pa.Array.from_buffers(pa.string(), 2, [None, pa.py_buffer(np.array([0, 1, 2], np.int32)),
                                                pa.py_buffer(b"a\xff")])
    batch = pa.record_batch([arr, pa.array([1, 2])], names=["s", "n"])
    with pa_ipc.new_stream(path, batch.schema) as w:
        w.write_batch(batch)
    return path


def test_full_level_checks_values(capsys, tmp_path):
    path = invalid_utf8(tmp_path)
    assert run(capsys, "validate", path).status == EXIT_OK            # structure is fine
    r = run(capsys, "validate", "--full", "--json", path)
    assert r.status == EXIT_INVALID_DATA
    (p,) = json.loads(r.out)["problems"]
    assert p["where"] == "record batch 0 (byte 160), column 's'" or \
        p["where"].endswith("column 's'")
    assert "UTF-8" in p["message"] and "value 1" in p["message"]


def test_truncated_stream(capsys, tmp_path):
    data = open(gold("primitive", "stream"), "rb").read()
    cut = tmp_path / "cut.arrows"
    cut.write_bytes(data[:-300])
    r = run(capsys, "validate", "--json", cut)
    assert r.status == EXIT_INVALID_DATA
    result = json.loads(r.out)
    assert result["record_batches"] == 1 and result["rows"] == 17
    (p,) = result["problems"]
    assert p["where"].startswith("message at byte ") and "truncated" in p["message"]


def test_footerless_file_problems_and_batches(capsys, tmp_path):
    data = open(gold("primitive", "file"), "rb").read()
    cut = tmp_path / "cut.arrow"
    cut.write_bytes(data[:len(data) // 2])
    r = run(capsys, "validate", "--json", cut)
    assert r.status == EXIT_INVALID_DATA
    result = json.loads(r.out)
    wheres = [p["where"] for p in result["problems"]]
    assert wheres[0] == "footer"
    assert result["record_batches"] == 1


def test_footer_pointing_nowhere(capsys, tmp_path):
    """A footer block moved off its message is reported against the messages found."""
    path = str(tmp_path / "moved.arrow")
    batch = arrowipc.record_batch({"x": [1, 2, 3]})
    with ipc.new_file(path, batch.schema) as w:
        w.write_batch(batch)
    good = pa_ipc.open_file(path)
    assert good.num_record_batches == 1
    data = bytearray(open(path, "rb").read())
    # the Block struct (offset int64, metaDataLength int32, pad, bodyLength int64) sits in the
    # footer; find the batch offset value and shift it by 8
    offset = next(o for o, _ in [(m.offset, m) for m in _messages(path)
                                 if m.type == "record batch"])
    footer_len = int.from_bytes(data[-10:-6], "little")
    footer = bytes(data[-10 - footer_len:-10])
    at = footer.find(offset.to_bytes(8, "little"))
    assert at >= 0
    start = len(data) - 10 - footer_len + at
    data[start:start + 8] = (offset + 8).to_bytes(8, "little")
    open(path, "wb").write(bytes(data))
    r = run(capsys, "validate", path)
    assert r.status == EXIT_INVALID_DATA
    assert f"problem: footer record batch block 0: points at byte {offset + 8}, where no " \
           f"message starts" in r.out


def _messages(path):
    src = open_source(path)
    src.pos = 8
    out = []
    while True:
        m = read_message_from(src, where="file")
        if m is None:
            return out
        out.append(m)


def test_text_output_when_valid(capsys):
    path = gold("nested", "stream")
    r = run(capsys, "validate", path)
    assert r.out.strip() == f"valid: {path} (stream, 2 record batches, 17 rows; structural checks)"
