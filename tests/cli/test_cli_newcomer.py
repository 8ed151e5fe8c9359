"""What a newcomer met on a first run of the `arrowipc` command, one test per point.

Output files get the permissions of any new file; errors name the user's paths; numeric options
are checked by argparse (exit status 2); a truncated file suggests `arrowipc recover`; byte dumps
are hex everywhere; Feather V1 and Parquet inputs are named; singulars read "1 field"; head shows
the valid rows of a column holding one invalid UTF-8 value; one timestamp format per column;
`--json` on a non-Arrow input still prints JSON; the progress bar shows rate and ETA.
"""
import io
import json
import os
import stat

import pytest

import arrowipc
from arrowipc import ipc
from arrowipc.cli import EXIT_INVALID_DATA, EXIT_IO, EXIT_OK, EXIT_USAGE
from arrowipc.cli.convert import Progress

from clitools import gold, one_line_error, run

pa = pytest.importorskip("pyarrow")
import pyarrow.ipc as pa_ipc  # noqa: E402


def write_pa_file(path, table):
    with pa_ipc.new_file(str(path), table.schema) as w:
        w.write_table(table)
    return str(path)


@pytest.fixture
def umask_022():
    old = os.umask(0o022)
    yield
    os.umask(old)


@pytest.mark.parametrize("command", ["convert", "recover"])
def test_outputs_get_the_permissions_of_a_new_file(capsys, tmp_path, umask_022, command):
    src = gold("primitive", "stream" if command == "recover" else "file")
    dst = tmp_path / "out.arrows"
    assert run(capsys, command, src, dst).status == EXIT_OK
    assert stat.S_IMODE(os.stat(dst).st_mode) == 0o644      # 0666 less the umask, as open() gives


def test_library_path_writes_get_the_permissions_of_a_new_file(tmp_path, umask_022):
    batch = arrowipc.record_batch({"a": [1]})
    with ipc.new_file(tmp_path / "x.arrow", batch.schema) as w:
        w.write_batch(batch)
    assert stat.S_IMODE(os.stat(tmp_path / "x.arrow").st_mode) == 0o644


def test_errors_name_the_users_path_not_the_temporary_file(capsys, tmp_path):
    dst = tmp_path / "missing-dir" / "x.arrow"
    r = run(capsys, "convert", gold("primitive", "file"), dst)
    assert r.status == EXIT_IO
    line = one_line_error(r, "convert")
    assert line == f"arrowipc convert: I/O error: {dst}: No such file or directory"
    assert ".tmp" not in line and ".part" not in line
    with pytest.raises(FileNotFoundError) as e:
        ipc.new_file(str(dst), arrowipc.schema([("a", arrowipc.int64())]))
    assert e.value.filename == str(dst)


@pytest.mark.parametrize("args,needle", [
    (["bench", "--batch-rows", "0"], "argument --batch-rows: must be 1 or more, got 0"),
    (["bench", "--batch-rows", "-5"], "argument --batch-rows: must be 1 or more, got -5"),
    (["bench", "--rows", "0"], "argument --rows: must be 1 or more, got 0"),
    (["bench", "--repeat", "x"], "argument --repeat: expected a whole number, got 'x'"),
    (["inspect", "--max-batches", "-1", "IN"], "argument --max-batches: must be 0 or more, got -1"),
    (["head", "--max-width", "3", "IN"], "argument --max-width: must be 4 or more, got 3"),
])
def test_numeric_options_are_usage_errors(capsys, args, needle):
    args = [gold("primitive", "file") if a == "IN" else a for a in args]
    r = run(capsys, *args)
    assert r.status == EXIT_USAGE
    assert needle in one_line_error(r, args[0])


def test_head_on_a_truncated_file_suggests_recover(capsys, tmp_path):
    data = open(gold("primitive", "file"), "rb").read()
    cut = tmp_path / "cut.arrow"
    cut.write_bytes(data[:len(data) // 2])
    r = run(capsys, "head", cut)
    assert r.status == EXIT_INVALID_DATA
    line = one_line_error(r, "head")
    assert "the file may be truncated" in line
    assert line.endswith(f"(to copy every complete batch: arrowipc recover {cut} <output>)")


def test_byte_dumps_are_hex(capsys, tmp_path):
    data = open(gold("primitive", "file"), "rb").read()
    bad_end = tmp_path / "bad-end.arrow"
    bad_end.write_bytes(data[:-6] + b"\x00\x01\xfe\xff\x80A")
    line = one_line_error(run(capsys, "head", bad_end), "head")
    assert "found 00 01 fe ff 80 41;" in line and "\\x" not in line
    bad_start = tmp_path / "bad-start.arrow"
    bad_start.write_bytes(b"\x7fELF\x02\x01\x01\x00" + data[8:])
    line = one_line_error(run(capsys, "inspect", bad_start), "inspect")
    assert line.endswith("found 7f 45 4c 46 02 01 01 00")


def test_feather_v1_and_parquet_are_named(capsys, tmp_path):
    import pyarrow.feather as pf
    import pyarrow.parquet as pq
    table = pa.table({"a": [1, 2]})
    pf.write_feather(table, str(tmp_path / "v1.feather"), version=1)
    pq.write_table(table, str(tmp_path / "t.parquet"))
    line = one_line_error(run(capsys, "inspect", tmp_path / "v1.feather"), "inspect")
    assert "found a Feather V1 file" in line and "46 45 41 31" in line
    line = one_line_error(run(capsys, "head", tmp_path / "t.parquet"), "head")
    assert "found a Parquet file, not Arrow IPC" in line
    with pytest.raises(arrowipc.ArrowInvalid, match="found a Parquet file"):
        ipc.open_file(str(tmp_path / "t.parquet"))


def test_singular_field_and_row(capsys, tmp_path):
    path = write_pa_file(tmp_path / "one.arrow", pa.table({"a": [7]}))
    r = run(capsys, "inspect", path)
    assert "schema (1 field):" in r.out and "1 fields" not in r.out
    assert run(capsys, "head", path).out.splitlines()[-1] == "(1 of 1 row)"


def test_head_shows_the_valid_rows_around_invalid_utf8(capsys, tmp_path):
    offsets = pa.py_buffer(bytes([0, 0, 0, 0, 1, 0, 0, 0, 3, 0, 0, 0, 4, 0, 0, 0]))
    strings = pa.Array.from_buffers(pa.string(), 3, [None, offsets, pa.py_buffer(b"a\xff\xfeb")])
    path = write_pa_file(tmp_path / "bad.arrow", pa.table({"s": strings, "n": [1, 2, 3]}))
    r = run(capsys, "head", path)
    assert r.status == EXIT_OK
    cells = [ln.split(" | ")[0].strip() for ln in r.out.splitlines()[3:6]]
    assert cells == ["a", "<invalid UTF-8: ff fe>", "b"]
    assert "s: not valid UTF-8 at row 1 of this batch, shown as hex bytes" in r.err


def test_one_timestamp_format_per_column(capsys, tmp_path):
    import datetime as dt
    table = pa.table({
        "us": pa.array([dt.datetime(2020, 1, 1), dt.datetime(2020, 1, 1, 12, 30, 15, 123456), None],
                       pa.timestamp("us")),
        "tz": pa.array([0, 1_600_000_000, 5], pa.timestamp("s", tz="Europe/Paris")),
        "ms": pa.array([1500, 0, None], pa.duration("ms")),
    })
    r = run(capsys, "head", write_pa_file(tmp_path / "ts.arrow", table))
    rows = [[c.strip() for c in ln.split(" | ")] for ln in r.out.splitlines()[3:6]]
    assert [row[0] for row in rows] == ["2020-01-01T00:00:00.000000", "2020-01-01T12:30:15.123456",
                                        "null"]
    assert [row[1] for row in rows] == ["1970-01-01T00:00:00Z", "2020-09-13T12:26:40Z",
                                        "1970-01-01T00:00:05Z"]
    assert [row[2] for row in rows] == ["1500ms", "0ms", "null"]


def test_json_on_a_non_arrow_input_is_a_json_error_object(capsys, tmp_path):
    path = tmp_path / "notes.txt"
    path.write_bytes(b"hello, this is not arrow\n")
    r = run(capsys, "inspect", "--json", path)
    assert r.status == EXIT_INVALID_DATA
    obj = json.loads(r.out)
    assert list(obj) == ["path", "error"] and obj["path"] == str(path)
    assert obj["error"].startswith("expected an Arrow IPC file")
    r = run(capsys, "validate", "--json", path)              # validate's own shape
    assert r.status == EXIT_INVALID_DATA
    obj = json.loads(r.out)
    assert obj["path"] == str(path) and obj["valid"] is False
    assert obj["problems"][0]["where"] == "the input"
    assert obj["problems"][0]["message"].startswith("expected an Arrow IPC file")
    r = run(capsys, "inspect", "--json", tmp_path / "absent.arrow")
    assert r.status == EXIT_IO
    assert json.loads(r.out)["error"].startswith("[Errno 2] No such file or directory")


def test_progress_bar_shows_rate_and_eta():
    bar = Progress(200 << 20, "converting", True, io.StringIO())
    assert bar.line(50 << 20, 2.0) == ("converting  25.0% [#######.......................] "
                                       "50.0 MiB / 200.0 MiB, 25.0 MiB/s, ETA 0:06")
    assert bar.line(0, 0.0).endswith("0 B / 200.0 MiB, 0 B/s, ETA --:--")
    assert bar.line(200 << 20, 8.0).endswith("25.0 MiB/s, done in 0:08")
    assert Progress(10 << 30, "x", True).line(1 << 30, 7200.0).endswith("ETA 18:00:00")
