"""`arrowipc convert`: stream <-> file, codecs, regrouping, projection, magic, progress."""
import io
import json
import os
import subprocess
import sys

import pytest

from arrowipc.cli import EXIT_INVALID_DATA, EXIT_OK, EXIT_USAGE
from arrowipc.cli.convert import Progress

from clitools import REPO_ROOT, gold, one_line_error, run, run_program, supplement

pa = pytest.importorskip("pyarrow")
import pyarrow.ipc as pa_ipc  # noqa: E402


def read_pa(path):
    """(table, per-batch custom metadata, footer metadata) as pyarrow reads it, validated."""
    with open(path, "rb") as f:
        head = f.read(8)
    if head.startswith((b"ARROW1", b"ALKAID1")):
        if head.startswith(b"ALKAID1"):          # pyarrow knows only ARROW1: swap the magic
            data = open(path, "rb").read()
            assert data.endswith(b"ALKAID1")
            reader = pa_ipc.open_file(pa.py_buffer(b"ARROW1\x00\x00" + data[8:-7] + b"ARROW1"))
        else:
            reader = pa_ipc.open_file(path)
        pairs = [reader.get_batch_with_custom_metadata(i) for i in range(reader.num_record_batches)]
        footer = reader.metadata
        schema = reader.schema
    else:
        reader = pa_ipc.open_stream(path)
        pairs = list(reader.iter_batches_with_custom_metadata())
        footer = None
        schema = reader.schema
    table = pa.Table.from_batches([b for b, _ in pairs], schema=schema)
    table.validate(full=True)
    return table, [m for _, m in pairs], footer


CASES = [("primitive", "1.0.0-littleendian"), ("nested", "1.0.0-littleendian"),
         ("dictionary", "1.0.0-littleendian"), ("nested_dictionary", "1.0.0-littleendian"),
         ("custom_metadata", "1.0.0-littleendian"), ("lz4", "2.0.0-compression"),
         ("primitive", "1.0.0-bigendian"), ("union", "1.0.0-littleendian"),
         ("shared_dict", "4.0.0-shareddict"), ("map", "1.0.0-littleendian")]


@pytest.mark.parametrize("stem,version", CASES)
def test_stream_to_file_to_stream(capsys, tmp_path, stem, version):
    src = gold(stem, "stream", version)
    want, want_md, _ = read_pa(src)
    as_file = tmp_path / "out.arrow"
    r = run(capsys, "convert", src, as_file)
    assert r.status == EXIT_OK, r.err
    assert r.out.startswith(f"wrote {as_file}: file (magic ARROW1), ")
    got, got_md, _ = read_pa(as_file)
    assert got.equals(want)
    assert got_md == want_md
    back = tmp_path / "back.arrows"
    assert run(capsys, "convert", as_file, back).status == EXIT_OK
    got, got_md, _ = read_pa(back)
    assert got.equals(want) and got_md == want_md


@pytest.mark.parametrize("codec", ["lz4", "zstd", "none"])
def test_compression_choice(capsys, tmp_path, codec):
    src = gold("primitive", "file")
    dst = tmp_path / "c.arrows"
    r = run(capsys, "convert", "--compression", codec, src, dst)
    assert r.status == EXIT_OK
    assert r.out.rstrip().endswith(f"compression {codec}")
    info = json.loads(run(capsys, "inspect", "--json", dst).out)
    assert {b["compression"] for b in info["batches"]} == {codec}
    assert read_pa(dst)[0].equals(read_pa(src)[0])


def test_compression_kept_by_default(capsys, tmp_path):
    src = gold("zstd", "stream", "2.0.0-compression")
    dst = tmp_path / "z.arrow"
    assert run(capsys, "convert", src, dst).status == EXIT_OK
    assert json.loads(run(capsys, "inspect", "--json", dst).out)["compression"] == "zstd"


def test_batch_rows_and_columns(capsys, tmp_path):
    src = gold("primitive", "file")                      # batches of 17 and 20 rows
    dst = tmp_path / "r.arrows"
    r = run(capsys, "convert", "--batch-rows", 8, "--columns", "utf8_nullable,int16_nullable",
            src, dst)
    assert r.status == EXIT_OK
    got, _, _ = read_pa(dst)
    want = read_pa(src)[0].select(["utf8_nullable", "int16_nullable"])
    assert got.schema.names == ["utf8_nullable", "int16_nullable"]
    assert got.to_pylist() == want.to_pylist()
    assert [b.num_rows for b in got.to_batches()] == [8, 8, 8, 8, 5]


def test_batch_rows_with_dictionary_deltas(capsys, tmp_path):
    src = supplement("dict_delta.stream")
    dst = tmp_path / "d.arrow"
    assert run(capsys, "convert", "--batch-rows", 5, src, dst).status == EXIT_OK
    got, _, _ = read_pa(dst)
    assert got.to_pylist() == read_pa(src)[0].to_pylist()
    assert [b.num_rows for b in got.to_batches()] == [5, 3]


@pytest.mark.parametrize("name", ["dict_delta.stream", "dict_delta_lz4.stream",
                                  "dict_replacement.stream"])
def test_dictionary_streams_become_files(capsys, tmp_path, name):
    """Deltas stay deltas; replacements (not allowed in files) become deltas of one dictionary."""
    src = supplement(name)
    dst = tmp_path / "d.arrow"
    r = run(capsys, "convert", src, dst)
    assert r.status == EXIT_OK, r.err
    got, _, _ = read_pa(dst)
    assert got.to_pylist() == read_pa(src)[0].to_pylist()
    info = json.loads(run(capsys, "inspect", "--json", dst).out)
    assert info["dictionaries"][0]["replacements"] == 0


def test_alkaid_magic(capsys, tmp_path):
    dst = tmp_path / "a.arrow"
    r = run(capsys, "convert", "--alkaid", gold("primitive", "stream"), dst)
    assert r.status == EXIT_OK
    data = dst.read_bytes()
    assert data[:8] == b"ALKAID1\x00" and data.endswith(b"ALKAID1")
    assert json.loads(run(capsys, "inspect", "--json", dst).out)["magic"] == "ALKAID1"
    assert run(capsys, "validate", dst).status == EXIT_OK


def test_footer_metadata_kept_file_to_file(capsys, tmp_path):
    from test_cli_inspect import own_file
    src = own_file(str(tmp_path / "own.arrow"))
    dst = tmp_path / "copy.arrow"
    assert run(capsys, "convert", src, dst).status == EXIT_OK
    _, batch_md, footer = read_pa(dst)
    assert footer == {b"writer": b"own_file"}
    assert batch_md[0] == {b"part": b"0"}


@pytest.mark.parametrize("args,needle", [
    (["x.bin"], "cannot tell the output format"),
    (["--alkaid", "x.arrows"], "--alkaid sets the file magic"),
    (["--batch-rows", "0", "x.arrow"], "argument --batch-rows: must be 1 or more, got 0"),
    (["--compression", "gzip", "x.arrow"], "invalid choice: 'gzip'"),
    (["--columns", "nope", "x.arrow"], "no column named 'nope'"),
])
def test_usage_errors(capsys, tmp_path, args, needle):
    *opts, dst = args
    r = run(capsys, "convert", *opts, gold("primitive", "stream"), tmp_path / dst)
    assert r.status == EXIT_USAGE
    assert needle in one_line_error(r, "convert")
    assert not (tmp_path / dst).exists()


def test_to_overrides_the_extension(capsys, tmp_path):
    dst = tmp_path / "out.data"
    assert run(capsys, "convert", "--to", "file", gold("primitive", "stream"), dst).status == 0
    assert dst.read_bytes()[:6] == b"ARROW1"


def test_refuses_to_overwrite_its_input(capsys, tmp_path):
    src = tmp_path / "same.arrow"
    src.write_bytes(open(gold("primitive", "file"), "rb").read())
    r = run(capsys, "convert", src, src)
    assert r.status == EXIT_USAGE
    assert "is the input" in one_line_error(r, "convert")


def test_invalid_input_leaves_no_output(capsys, tmp_path):
    data = open(gold("primitive", "stream"), "rb").read()
    cut = tmp_path / "cut.arrows"
    cut.write_bytes(data[:-300])
    dst = tmp_path / "out.arrow"
    r = run(capsys, "convert", cut, dst)
    assert r.status == EXIT_INVALID_DATA
    assert "truncated" in one_line_error(r, "convert")
    assert os.listdir(tmp_path) == ["cut.arrows"]            # no DST, no temporary file


def test_stdout_and_stdin():
    data = open(gold("primitive", "file"), "rb").read()
    r = run_program("convert", "--to", "stream", "-", "-", stdin=data)
    assert r.status == EXIT_OK, r.err
    assert r.err.startswith("wrote <stdout>: stream")       # the summary leaves stdout alone
    p = subprocess.run([sys.executable, "-m", "arrowipc", "convert", "-q", "--to", "stream",
                        "-", "-"], input=data, capture_output=True,
                       env=dict(os.environ, PYTHONPATH=REPO_ROOT))
    assert p.returncode == 0 and p.stderr == b""
    got = pa_ipc.open_stream(p.stdout).read_all()
    assert got.equals(pa_ipc.open_file(pa.py_buffer(data)).read_all())


def test_progress_bar_forced_and_hidden(capsys, tmp_path):
    src = gold("primitive", "stream")
    r = run(capsys, "convert", "--progress", src, tmp_path / "p.arrow")
    assert r.status == EXIT_OK
    assert "converting" in r.err and "100.0%" in r.err and "[" in r.err
    r = run(capsys, "convert", src, tmp_path / "q.arrow")       # not a terminal: no bar
    assert r.err == ""


def test_progress_bar_auto_rules():
    class Tty(io.StringIO):
        def isatty(self):
            return True
    assert Progress.auto(1 << 30, "x", None, Tty()).enabled                # large, terminal
    assert not Progress.auto(1 << 10, "x", None, Tty()).enabled            # small input
    assert not Progress.auto(1 << 30, "x", None, io.StringIO()).enabled    # not a terminal
    assert not Progress.auto(1 << 30, "x", False, Tty()).enabled           # --no-progress
    bar = Progress(1000, "x", True, Tty())
    bar.update(500, force=True)
    bar.close()
    text = bar.stream.getvalue()
    assert " 50.0% [###############...............]" in text
    assert "100.0% [##############################] 1000 B / 1000 B, " in text
    assert text.endswith("done in 0:00\n")
