"""pandas round trips through arrowipc.feather, compared with pyarrow.feather's: DataFrames
written by either library and read by either give equal DataFrames, for V2 and V1 files.
"""
import warnings

import pytest

import arrowipc.feather as feather

pd = pytest.importorskip("pandas")
np = pytest.importorskip("numpy")
pa = pytest.importorskip("pyarrow")
pf = pytest.importorskip("pyarrow.feather")

pytestmark = pytest.mark.filterwarnings("ignore:Feather V1 files are deprecated:DeprecationWarning")


def _frame(n=50):
    return pd.DataFrame({
        "i": np.arange(n, dtype="int64"),
        "u8": np.arange(n, dtype="uint8"),
        "f": np.where(np.arange(n) % 4 == 0, np.nan, np.arange(n) / 3),
        "b": np.arange(n) % 2 == 0,
        "s": [f"v{i}" if i % 5 else None for i in range(n)],
        "cat": pd.Categorical([["lo", "mid", "hi"][i % 3] for i in range(n)],
                              categories=["lo", "mid", "hi"], ordered=True),
        "ts": pd.date_range("2024-01-01", periods=n, freq="h"),
        "tz": pd.date_range("2024-01-01", periods=n, freq="D", tz="Europe/Paris"),
    })


def _theirs(path, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        return pf.read_feather(path, **kwargs)


@pytest.mark.parametrize("index", [None, "strings", "ints"])
def test_v2_dataframes_written_by_arrowipc_read_by_both(tmp_path, index):
    df = _frame()
    if index == "strings":
        df.index = [f"r{i}" for i in range(len(df))]
    elif index == "ints":
        df.index = np.arange(len(df)) * 3
    path = tmp_path / "ours.feather"
    feather.write_feather(df, str(path))
    expected = _theirs(path)
    pd.testing.assert_frame_equal(expected, df)
    pd.testing.assert_frame_equal(feather.read_feather(str(path)), expected)


def test_v2_dataframes_written_by_pyarrow_read_by_arrowipc(tmp_path):
    df = _frame()
    path = tmp_path / "theirs.feather"
    pf.write_feather(df, path)
    pd.testing.assert_frame_equal(feather.read_feather(str(path)), _theirs(path))
    pd.testing.assert_frame_equal(feather.read_feather(str(path), columns=["s", "i"]),
                                  _theirs(path, columns=["s", "i"]))


def test_read_feather_passes_its_keywords_to_pandas(tmp_path):
    path = tmp_path / "theirs.feather"
    pf.write_feather(_frame(), path)
    for kwargs in ({"use_threads": False}, {"timestamp_as_object": True},
                   {"strings_to_categorical": True}, {"ignore_metadata": True}):
        pd.testing.assert_frame_equal(feather.read_feather(str(path), **kwargs),
                                      _theirs(path, **kwargs))


@pytest.mark.parametrize("writer", ["arrowipc", "pyarrow"])
def test_v1_dataframes_both_ways(tmp_path, writer):
    df = _frame()
    df.index = [f"r{i}" for i in range(len(df))]       # V1 drops the index, as pyarrow
    path = tmp_path / "v1.feather"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        (feather.write_feather if writer == "arrowipc" else pf.write_feather)(df, str(path),
                                                                              version=1)
    assert path.read_bytes()[:4] == b"FEA1"
    expected = _theirs(path)
    pd.testing.assert_frame_equal(expected, df.reset_index(drop=True))
    pd.testing.assert_frame_equal(feather.read_feather(str(path)), expected)


def test_a_v1_dataframe_write_warns_as_pyarrow_does(tmp_path):
    with pytest.warns(DeprecationWarning, match="Use the default version=2 to write Arrow IPC"):
        feather.write_feather(_frame(3), str(tmp_path / "v1.feather"), version=1)


def test_read_feather_needs_no_pyarrow(tmp_path):
    # arrowipc's own pandas conversion: a fresh interpreter reads and writes without pyarrow
    import subprocess
    import sys
    path = tmp_path / "ours.feather"
    code = (
        "import sys, pandas as pd\n"
        "sys.modules['pyarrow'] = None\n"
        "import arrowipc.feather as feather\n"
        f"feather.write_feather(pd.DataFrame({{'a': [1, 2], 's': ['x', None]}}), {str(path)!r})\n"
        f"df = feather.read_feather({str(path)!r})\n"
        "assert df['a'].tolist() == [1, 2], df\n"
        "print('ok', 'pyarrow' not in {k for k, v in sys.modules.items() if v is not None})\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120, cwd=str(tmp_path),
                         env={**__import__("os").environ,
                              "PYTHONPATH": __import__("os").path.dirname(
                                  __import__("os").path.dirname(feather.__file__))})
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["ok", "True"]
    pd.testing.assert_frame_equal(_theirs(path), pd.DataFrame({"a": [1, 2], "s": ["x", None]}))
