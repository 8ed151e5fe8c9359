"""A process that uses only arrowipc and pandas never imports pyarrow, and still gets pyarrow's
DataFrames (strings in pandas' "python" storage: the one documented difference, see
docs/pandas.md).

The child process makes pyarrow unimportable (as if it were not installed), so pandas falls back
to its own string storage; every attempt to import pyarrow is recorded with the file that made
it, and none may come from arrowipc.
"""
from __future__ import annotations

import os
import pickle
import subprocess
import sys
import textwrap

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.ipc as pa_ipc

from pandas_oracle import assert_same

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

CHILD = textwrap.dedent(r"""
    import importlib.abc, pickle, sys, traceback

    attempts = []

    class NoPyarrow(importlib.abc.MetaPathFinder):
        def find_spec(self, name, path=None, target=None):
            if name == "pyarrow" or name.startswith("pyarrow."):
                files = [f.filename for f in traceback.extract_stack()]
                attempts.append([name, files])
                raise ModuleNotFoundError(f"No module named {name!r}")
            return None

    sys.meta_path.insert(0, NoPyarrow())
    import pandas as pd
    import arrowipc

    data = open(sys.argv[1], "rb").read()
    reader = arrowipc.ipc.open_file(data)
    frames = {"table": reader.read_all().to_pandas(),
              "read_pandas": arrowipc.ipc.open_file(data).read_pandas(),
              "split": reader.read_all().to_pandas(split_blocks=True, use_threads=False)}
    # from_pandas without pyarrow, then back
    round_trip = arrowipc.Table.from_pandas(frames["table"])
    frames["round_trip"] = round_trip.to_pandas()
    sink = arrowipc.BufferOutputStream()
    with arrowipc.ipc.new_file(sink, round_trip.schema) as w:
        w.write_table(round_trip)
    from_arrowipc = [a for a in attempts if any("arrowipc" in f for f in a[1])]
    result = {"frames": frames, "pyarrow_loaded": "pyarrow" in sys.modules,
              "attempts_from_arrowipc": from_arrowipc,
              "string_storage": pd.StringDtype(na_value=float("nan")).storage,
              "file": sink.getvalue().to_pybytes()}
    with open(sys.argv[2], "wb") as f:
        pickle.dump(result, f)
""")


def _source_table() -> pa.Table:
    rng = np.random.default_rng(3)
    n = 50
    mask = rng.random(n) < 0.2
    return pa.table({
        "i": pa.array(rng.integers(0, 100, n), mask=mask),
        "f": pa.array(rng.standard_normal(n)),
        "s": pa.array([f"v{i % 7}" for i in range(n)], mask=mask),
        "ls": pa.array([f"w{i}" for i in range(n)], pa.large_string()),
        "b": pa.array(rng.random(n) < 0.5),
        "t": pa.array(rng.integers(0, 10**12, n), pa.timestamp("ms", "Asia/Tokyo")),
        "d": pa.array([f"k{i % 3}" for i in range(n)]).dictionary_encode(),
        "l": pa.array([[i, None] if i % 4 else None for i in range(n)], pa.list_(pa.int32())),
        "date": pa.array(rng.integers(0, 20000, n).astype("int32"), pa.date32()),
    })


def _python_strings(df: pd.DataFrame) -> pd.DataFrame:
    """pyarrow's frame with its Arrow-backed `str` columns in pandas' python storage."""
    out = df.copy()
    python_str = pd.StringDtype("python", na_value=np.nan)
    for name, col in df.items():
        if isinstance(col.dtype, pd.StringDtype):
            out[name] = col.astype(python_str)
        elif isinstance(col.dtype, pd.CategoricalDtype) and \
                isinstance(col.cat.categories.dtype, pd.StringDtype):
            cats = col.cat.categories.astype(python_str)
            out[name] = col.cat.set_categories(cats, rename=True)
    if isinstance(out.columns.dtype, pd.StringDtype):
        out.columns = out.columns.astype(python_str)
    return out


def test_process_without_pyarrow(tmp_path):
    table = _source_table()
    src = tmp_path / "in.arrow"
    with pa_ipc.new_file(str(src), table.schema) as w:
        w.write_table(table)
    out = tmp_path / "out.pickle"
    env = dict(os.environ, PYTHONPATH=REPO_ROOT)
    proc = subprocess.run([sys.executable, "-c", CHILD, str(src), str(out)], env=env,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    with open(out, "rb") as f:
        result = pickle.load(f)
    assert result["pyarrow_loaded"] is False
    assert result["attempts_from_arrowipc"] == []
    assert result["string_storage"] == "python"

    expected = _python_strings(table.to_pandas())
    assert_same(result["frames"]["table"], expected)
    assert_same(result["frames"]["read_pandas"], expected)
    assert_same(result["frames"]["split"], expected)
    assert_same(result["frames"]["round_trip"], expected)
    # the file written without pyarrow reads back in pyarrow into pyarrow's own DataFrame
    back = pa_ipc.open_file(result["file"]).read_all()
    assert_same(_python_strings(back.to_pandas()), expected)
