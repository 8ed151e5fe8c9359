"""ETL scripts as users write them for pyarrow (scripts/), each run three ways on the same input:

    pyarrow       python script.py IN OUT                      (the oracle)
    arrowipc      the same script with `import pyarrow.dataset as ds` changed to
                  `import arrowipc.dataset as ds`, nothing else
    accelerated   python -m arrowipc.accelerate script.py IN OUT

and their outputs compared: what they print, and every file they write (its path, and as
pyarrow reads it: schema with metadata, values). Where arrowipc differs by design the test says
so (docs/pyarrow-compat.md lists it).
"""
import os
import pathlib
import subprocess
import sys

import numpy as np
import pytest

pa = pytest.importorskip("pyarrow")
pytest.importorskip("pandas")
import pyarrow.dataset as pads  # noqa: E402
import pyarrow.feather as feather  # noqa: E402
import pyarrow.ipc as paipc  # noqa: E402

REPO = pathlib.Path(__file__).resolve().parent.parent.parent
SCRIPTS = pathlib.Path(__file__).resolve().parent / "scripts"
HANG_GUARD = 300           # seconds: a hung script fails the test instead of the whole run
WAYS = ("pyarrow", "arrowipc", "accelerated")


# -- inputs, made with pyarrow ------------------------------------------------------------------
def _events(root):
    rng = np.random.default_rng(7)
    n = 600
    table = pa.table({
        "user": pa.array([f"u{i % 37}" for i in range(n)]),
        "amount": pa.array(rng.integers(0, 300, n), pa.int64()),
        "country": pa.array(rng.choice(["de", "fr", "us"], n)),
        "day": pa.array([f"2026-01-0{1 + i % 4}" for i in range(n)]),
    })
    pads.write_dataset(table, str(root), format="ipc", partitioning=["day"],
                       partitioning_flavor="hive", max_rows_per_group=64)


def _spark(root):
    """Spark's layout: part files with task ids, _SUCCESS, Hadoop .crc side files, a staging
    directory not committed."""
    rng = np.random.default_rng(11)
    for region in ("apac", "emea"):
        part = root / f"region={region}"
        part.mkdir(parents=True)
        for task in range(2):
            n = 40 + 10 * task
            ids = np.arange(n) + 1000 * task + (0 if region == "apac" else 500)
            score = pa.array([None if i % 9 == 0 else float(s) for i, s in
                              enumerate(rng.random(n))])
            name = f"part-0000{task}-5f2a9c1e-7d3b-4e8a-9c61-0b1d2e3f4a5b.c000.arrow"
            with paipc.new_file(str(part / name),
                                pa.schema([("id", pa.int64()), ("score", pa.float64())])) as w:
                w.write_table(pa.table({"id": pa.array(ids, pa.int64()), "score": score}))
            (part / f".{name}.crc").write_bytes(b"crc\x00\x01")
    (root / "_SUCCESS").write_bytes(b"")


def _streams(root):
    root.mkdir()
    for hour in range(3):
        n = 400
        table = pa.table({
            "ts": pa.array(np.arange(n) + hour * 10_000, pa.int64()),
            "msg": pa.array([f"m{hour}-{i}" for i in range(n)]),
            "level": pa.array(["error" if (i + hour) % 3 == 0 else "info" for i in range(n)]),
        })
        with paipc.new_stream(str(root / f"2026-05-01T{hour:02d}.arrows"), table.schema) as w:
            w.write_table(table, max_chunksize=128)


def _sales(root):
    root.mkdir()
    rows = ["city,qty,price,when"]
    for i in range(120):
        rows.append(f"{['oslo', 'rome', 'lima'][i % 3]},{i % 7 + 1},{1.25 * (i % 11)},"
                    f"2026-{1 + i % 5:02d}-{1 + i % 27:02d}")
    (root / "sales.csv").write_text("\n".join(rows) + "\n")


def _plain(root):
    n = 700
    table = pa.table({"x": pa.array(np.arange(n), pa.int64()),
                      "g": pa.array([i % 2 for i in range(n)], pa.int32()),
                      "k": pa.array([f"k{i % 4}" for i in range(n)]),
                      "v": pa.array(np.arange(n) % 23, pa.int64())})
    pads.write_dataset(table, str(root), format="ipc", max_rows_per_file=250,
                       max_rows_per_group=60)


INPUTS = {
    "hive_filter_write": _events,
    "spark_output": _spark,
    "stream_folder": _streams,
    "feather_pandas": _sales,
    "concat_compute": _plain,
    "write_options": _plain,
    "file_random_access": _plain,
    "stream_bytes": _streams,
}


# -- running ------------------------------------------------------------------------------------
def _run(script, way, source, target, tmp_path):
    text = (SCRIPTS / f"{script}.py").read_text()
    if way == "arrowipc":
        assert text.count("import pyarrow.dataset as ds\n") == 1
        text = text.replace("import pyarrow.dataset as ds\n", "import arrowipc.dataset as ds\n")
    path = tmp_path / f"{script}_{way}.py"
    path.write_text(text)
    env = dict(os.environ, PYTHONPATH=str(REPO))
    env.pop("ARROWIPC_ACCELERATE_REPORT", None)
    prefix = ["-m", "arrowipc.accelerate"] if way == "accelerated" else []
    return subprocess.run([sys.executable, *prefix, str(path), str(source), str(target)],
                          cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=HANG_GUARD)


def _read(path):
    """A written file as pyarrow reads it: (schema with metadata, values)."""
    with open(path, "rb") as f:
        magic = f.read(6)
    if magic == b"ARROW1":
        table = feather.read_table(path)        # the IPC file format (Feather V2)
    else:
        with paipc.open_stream(path) as reader:
            table = reader.read_all()
    return table.schema, table.to_pydict()


def _written(target):
    """Every file the script wrote under `target` and its siblings (`target` + "_suffix"),
    by its path from their parent."""
    target = pathlib.Path(target)
    out = {}
    for root in sorted(target.parent.iterdir()):
        if root.name != target.name and not root.name.startswith(target.name + "_"):
            continue
        for dirpath, _, names in os.walk(root):
            for name in names:
                path = os.path.join(dirpath, name)
                key = os.path.relpath(path, target.parent)[len(target.name):]
                out[key] = _read(path)
    return out


def _outputs(script, tmp_path):
    source = tmp_path / "input"
    INPUTS[script](source)
    results = {}
    for way in WAYS:
        target = tmp_path / f"out_{way}"
        results[way] = (_run(script, way, source, target, tmp_path), target)
    return results


def _same(results, ways):
    want, want_dir = results["pyarrow"]
    assert want.returncode == 0, want.stderr
    for way in ways:
        got, got_dir = results[way]
        assert got.returncode == 0, f"{way}:\n{got.stderr}"
        assert got.stdout.replace(str(got_dir), "<out>") == \
            want.stdout.replace(str(want_dir), "<out>"), way
        want_files, got_files = _written(want_dir), _written(got_dir)
        assert sorted(got_files) == sorted(want_files), way
        for name, (schema, values) in want_files.items():
            got_schema, got_values = got_files[name]
            assert got_schema.equals(schema, check_metadata=True), (way, name, got_schema,
                                                                    schema)
            assert len(next(iter(got_values.values()), ())) == \
                len(next(iter(values.values()), ())), (way, name)
        # pyarrow's write_dataset does not keep the input's order across threads
        # (preserve_order=False): the rows of each directory are compared as a multiset
        for directory in {os.path.dirname(name) for name in want_files}:
            assert _rows(got_files, directory) == _rows(want_files, directory), (way, directory)


def _rows(files, directory):
    rows = []
    for name, (_, values) in files.items():
        if os.path.dirname(name) == directory:
            rows += list(zip(*values.values()))
    return sorted(rows, key=repr)


@pytest.mark.parametrize("script", ["hive_filter_write", "spark_output", "stream_folder",
                                    "feather_pandas", "write_options", "file_random_access",
                                    "stream_bytes"])
def test_the_script_gives_the_same_output_three_ways(script, tmp_path):
    _same(_outputs(script, tmp_path), ("arrowipc", "accelerated"))


def test_hand_offs_to_pyarrow_compute_work_accelerated_not_by_the_import_alone(tmp_path):
    """By design (docs/pyarrow-compat.md, "arrowipc's objects are not pyarrow's"): with the
    import changed, the tables arrowipc.dataset returns are arrowipc's, and pyarrow's
    functions that insist on pyarrow.Table (pa.concat_tables here) refuse them; the
    accelerator hands back pyarrow's own objects, so the script runs unchanged."""
    results = _outputs("concat_compute", tmp_path)
    _same(results, ("accelerated",))
    swapped = results["arrowipc"][0]
    assert swapped.returncode == 1
    assert "TypeError: Cannot convert Table to pyarrow.lib.Table" in swapped.stderr
