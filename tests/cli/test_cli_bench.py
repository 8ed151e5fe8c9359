"""`arrowipc bench`: the side-by-side table, with and without pyarrow."""
import json

import pytest

from arrowipc.cli import bench as cli_bench
from arrowipc.cli import EXIT_OK, EXIT_USAGE

from clitools import one_line_error, run


def test_ratio_table_against_pyarrow(capsys):
    pytest.importorskip("pyarrow")
    r = run(capsys, "bench", "--rows", 3000, "--batch-rows", 1000, "--repeat", 1, "--no-import")
    assert r.status == EXIT_OK, r.err
    lines = r.out.splitlines()
    assert lines[0].split() == ["operation", "arrowipc", "pyarrow", "ratio"]
    rows = [ln for ln in lines[2:] if ln and not ln.startswith(("3,000 rows", "ratio ="))]
    assert len(rows) == 6
    for row in rows:
        ratio = float(row.split()[-1])            # a number: both libraries were timed
        assert ratio > 0
    assert "3,000 rows (int64, float64, string, bool) in batches of 1,000" in r.out
    assert "ratio = arrowipc time / pyarrow time" in r.out


def test_json_and_same_data_for_both(capsys):
    pa = pytest.importorskip("pyarrow")
    r = run(capsys, "bench", "--rows", 2000, "--repeat", 1, "--no-import", "--json")
    result = json.loads(r.out)
    assert set(result["results"]) == {"write_stream", "read_stream", "write_file", "read_file",
                                      "write_stream_zstd", "read_stream_zstd"}
    assert all(set(v) == {"arrowipc", "pyarrow"} for v in result["results"].values())
    table = cli_bench.make_table(2000, 512)
    assert [b.num_rows for b in table.to_batches()] == [512, 512, 512, 464]
    theirs = pa.table(table)
    assert theirs.schema.names == ["id", "value", "label", "flag"]
    assert theirs.column("id").to_pylist() == list(range(2000))


def test_without_pyarrow(capsys, monkeypatch):
    monkeypatch.setattr(cli_bench, "pyarrow_available", lambda: False)
    r = run(capsys, "bench", "--rows", 2000, "--repeat", 1, "--no-import")
    assert r.status == EXIT_OK
    assert "pyarrow not installed" in r.out
    first = r.out.splitlines()[2]
    assert first.split()[-2:] == ["—", "—"]


def test_import_row(capsys):
    pytest.importorskip("pyarrow")
    r = run(capsys, "bench", "--rows", 1000, "--repeat", 1, "--json")
    imports = json.loads(r.out)["results"]["import"]
    assert 0 < imports["arrowipc"] < 5 and 0 < imports["pyarrow"] < 5


def test_bad_sizes(capsys):
    r = run(capsys, "bench", "--rows", 0)
    assert r.status == EXIT_USAGE
    one_line_error(r, "bench")
