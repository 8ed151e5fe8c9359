"""`arrowipc inspect|validate|head|convert` take directories and globs as datasets."""
import json

import pyarrow.ipc as pipc

import arrowipc as A
import arrowipc.dataset as ds
from clitools import run


def _dataset(tmp_path):
    t = A.table({"k": [1, 1, 2, 2, 3], "v": [1.5, 2.5, 3.5, 4.5, 5.5],
                 "s": ["a", "b", "c", "d", "e"]})
    root = tmp_path / "d"
    ds.write_dataset(t, str(root), partitioning=["k"], partitioning_flavor="hive",
                     max_rows_per_file=1, max_rows_per_group=1)
    (root / "_SUCCESS").write_bytes(b"")
    return root


def test_head_reads_across_the_files_with_partition_columns(tmp_path, capsys):
    root = _dataset(tmp_path)
    r = run(capsys, "head", root, "-n", "3")
    assert r.status == 0
    lines = r.out.splitlines()
    assert lines[0].split() == ["v", "|", "s", "|", "k"]
    assert [ln.split()[-1] for ln in lines[3:6]] == ["1", "1", "2"]
    assert lines[-1] == "(3 of 5 rows in 5 files)"


def test_validate_reports_each_file_and_the_total(tmp_path, capsys):
    root = _dataset(tmp_path)
    r = run(capsys, "validate", root)
    assert r.status == 0
    assert r.out.splitlines()[-1] == f"valid: {root}: 5 files, 5 record batches, 5 rows"
    bad = root / "k=3" / "part-9.arrow"
    bad.write_bytes(b"ARROW1\x00\x00 not a file")
    r = run(capsys, "validate", root)
    assert r.status == 1
    assert r.out.splitlines()[-1] == f"invalid: {root}: 1 of 6 files invalid"
    r = run(capsys, "validate", root, "--json")
    doc = json.loads(r.out)
    assert doc["valid"] is False and doc["invalid_files"] == 1 and len(doc["files"]) == 6


def test_inspect_takes_a_glob_and_totals(tmp_path, capsys):
    root = _dataset(tmp_path)
    r = run(capsys, "inspect", f"{root}/k=1/*.arrow")
    assert r.status == 0
    assert r.out.splitlines()[-1].startswith("total: 2 files, 2 record batches, 2 rows, ")
    r = run(capsys, "inspect", root, "--json")
    doc = json.loads(r.out)
    assert doc["total"]["files"] == 5 and doc["total"]["rows"] == 5


def test_convert_merges_part_files_into_one(tmp_path, capsys):
    root = _dataset(tmp_path)
    out = tmp_path / "all.arrow"
    r = run(capsys, "convert", root, out)
    assert r.status == 0, r.err
    table = pipc.open_file(str(out)).read_all()
    assert table.to_pydict() == {"v": [1.5, 2.5, 3.5, 4.5, 5.5], "s": list("abcde"),
                                 "k": [1, 1, 2, 2, 3]}
    r = run(capsys, "convert", root, tmp_path / "all.arrows", "--columns", "s,k",
            "--batch-rows", "5")
    assert r.status == 0, r.err
    with pipc.open_stream(str(tmp_path / "all.arrows")) as reader:
        batches = list(reader)
    assert [b.num_rows for b in batches] == [5] and batches[0].schema.names == ["s", "k"]


def test_a_directory_without_data_files_is_still_an_io_error(tmp_path, capsys):
    (tmp_path / "empty").mkdir()
    (tmp_path / "empty" / "_SUCCESS").write_bytes(b"")
    r = run(capsys, "head", tmp_path / "empty")
    assert r.status == 3
    assert "Is a directory, and holds no data files" in r.err
