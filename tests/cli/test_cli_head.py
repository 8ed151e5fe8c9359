"""`arrowipc head`: the first rows as an aligned table, with the values pyarrow reads."""
import pytest

import arrowipc
from arrowipc import ipc
from arrowipc.cli import EXIT_OK, EXIT_USAGE
from arrowipc.cli.head import format_value

from clitools import gold, one_line_error, run, run_program, supplement

pa = pytest.importorskip("pyarrow")
import pyarrow.ipc as pa_ipc  # noqa: E402


def table_rows(out: str) -> tuple:
    """(header names, types, rows of cells) from head's output."""
    lines = out.splitlines()
    names = [c.strip() for c in lines[0].split(" | ")]
    types = [c.strip() for c in lines[1].split(" | ")]
    assert set(lines[2]) <= {"-", "+"}
    rows = [[c.strip() for c in ln.split(" | ")] for ln in lines[3:] if not ln.startswith("(")]
    return names, types, rows


def test_values_are_pyarrows(capsys):
    path = gold("primitive", "file")
    r = run(capsys, "head", "-n", 5, "--columns", "int32_nullable,utf8_nullable,bool_nullable",
            path)
    assert r.status == EXIT_OK, r.err
    names, types, rows = table_rows(r.out)
    assert names == ["int32_nullable", "utf8_nullable", "bool_nullable"]
    assert types == ["int32", "string", "bool"]
    table = pa_ipc.open_file(path).read_all()
    for name, col in zip(names, zip(*rows)):
        want = table.column(name).to_pylist()[:5]
        assert list(col) == [format_value(v)[:40] if len(format_value(v)) <= 40
                             else format_value(v)[:39] + "…" for v in want]
    assert r.out.splitlines()[-1] == "(5 of 37 rows)"


def test_numbers_right_aligned_text_left_aligned(capsys, tmp_path):
    path = tmp_path / "t.arrows"
    batch = arrowipc.record_batch({"n": [1, 22, 333], "s": ["a", "bb", None]})
    with ipc.new_stream(str(path), batch.schema) as w:
        w.write_batch(batch)
    r = run(capsys, "head", path)
    assert r.out.splitlines() == [
        "n     | s",
        "int64 | string",
        "------+-------",
        "    1 | a",
        "   22 | bb",
        "  333 | null",
        "(3 rows, the whole stream)",
    ]


def test_rows_across_batches_and_n(capsys):
    path = gold("primitive", "stream")            # batches of 17 and 20 rows
    r = run(capsys, "head", "-n", 20, "--columns", "int64_nonnullable", path)
    names, _, rows = table_rows(r.out)
    want = pa_ipc.open_stream(path).read_all().column("int64_nonnullable").to_pylist()[:20]
    assert [int(row[0]) for row in rows] == want
    assert r.out.splitlines()[-1] == "(first 20 rows)"
    r = run(capsys, "head", "-n", 0, path)
    assert r.status == EXIT_OK
    assert len(r.out.splitlines()) == 4           # names, types, rule, the count line


@pytest.mark.parametrize("stem", ["datetime", "nested", "map", "union", "dictionary",
                                  "nested_dictionary", "decimal", "interval", "null",
                                  "extension", "recursive_nested", "duration"])
def test_every_gold_type_renders(capsys, stem):
    path = gold(stem, "file") if stem != "duration" else gold(stem, "file", "cpp-21.0.0")
    r = run(capsys, "head", "-n", 3, path)
    assert r.status == EXIT_OK, r.err
    names, _, rows = table_rows(r.out)
    assert names == pa_ipc.open_file(path).schema.names
    assert all(len(row) == len(names) for row in rows)


def test_nanosecond_times_shown_from_raw_values(capsys):
    path = gold("datetime", "file")
    r = run(capsys, "head", "-n", 4, "--columns", "f5,f9", path)     # time64[ns], timestamp[ns]
    assert r.status == EXIT_OK
    _, types, rows = table_rows(r.out)
    assert types == ["time64[ns]", "timestamp[ns]"]
    t = pa_ipc.open_file(path).read_all()
    f9 = t.column("f9").cast(pa.int64()).to_pylist()[:4]
    f5 = t.column("f5").cast(pa.int64()).to_pylist()[:4]
    for row, ns in zip(rows, f5):
        if ns is not None:
            assert row[0].endswith(f".{ns % 10**9:09d}")
    for row, ns in zip(rows, f9):
        if ns is not None:
            assert row[1].endswith(f".{ns % 10**9:09d}")


def test_dictionary_values_resolved(capsys):
    path = supplement("dict_delta.stream")
    r = run(capsys, "head", "-n", 8, path)
    _, _, rows = table_rows(r.out)
    want = pa_ipc.open_stream(path).read_all().column("d").to_pylist()
    assert [row[0] for row in rows] == [format_value(v) for v in want]


def test_long_cells_are_cut(capsys, tmp_path):
    path = tmp_path / "wide.arrows"
    batch = arrowipc.record_batch({"s": ["x" * 100]})
    with ipc.new_stream(str(path), batch.schema) as w:
        w.write_batch(batch)
    r = run(capsys, "head", "--max-width", 10, path)
    assert table_rows(r.out)[2] == [["x" * 9 + "…"]]


@pytest.mark.parametrize("args,needle", [
    (["-n", "-1"], "argument -n: must be 0 or more, got -1"),
    (["--columns", "nope"], "no column named 'nope'"),
    (["--columns", "a,,b"], "comma-separated"),
    (["-n", "x"], "argument -n: expected a whole number, got 'x'"),
])
def test_usage_errors(capsys, args, needle):
    r = run(capsys, "head", *args, gold("primitive", "file"))
    assert r.status == EXIT_USAGE
    assert needle in one_line_error(r, "head")


def test_duplicate_column_name_is_ambiguous(capsys):
    path = gold("duplicate_fieldnames", "file")
    name = pa_ipc.open_file(path).schema.names[0]
    r = run(capsys, "head", "--columns", name, path)
    assert r.status == EXIT_USAGE
    assert "ambiguous" in one_line_error(r, "head")


def test_broken_pipe_is_quiet():
    # a reader that stops early (like `| head -1`) must not produce a traceback
    import os
    import subprocess
    import sys
    from clitools import REPO_ROOT
    env = dict(os.environ, PYTHONPATH=REPO_ROOT)
    p = subprocess.Popen([sys.executable, "-m", "arrowipc", "head", "-n", "100000",
                          gold("primitive", "file")], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, env=env)
    p.stdout.readline()
    p.stdout.close()
    err = p.stderr.read().decode()
    p.wait(timeout=60)
    assert "Traceback" not in err
    assert p.returncode in (0, -13)


def test_stdin_stream():
    data = open(gold("primitive", "stream"), "rb").read()
    r = run_program("head", "-n", 2, "--columns", "int8_nullable", "-", stdin=data)
    assert r.status == EXIT_OK, r.err
    assert len(table_rows(r.out)[2]) == 2
