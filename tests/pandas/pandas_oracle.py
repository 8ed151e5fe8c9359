"""Shared helpers of the pandas tests: pyarrow's to_pandas as the oracle.

This folder has no __init__.py on purpose: tests/ is on sys.path, and a regular package named
`pandas` there would shadow the real pandas for the whole suite.
"""
from __future__ import annotations

import pandas as pd
import pyarrow as pa
import pytest

import arrowipc

# Every issue-2 type pyarrow converts to pandas (the two interval types it cannot: TypeError there)
NOT_CONVERTIBLE = {"month_interval", "day_time_interval"}


def ours(data):
    """The arrowipc object holding the same data as a pyarrow Table/RecordBatch/array."""
    if isinstance(data, pa.Table):
        return arrowipc.table(data)
    if isinstance(data, pa.RecordBatch):
        return arrowipc.record_batch(data)
    if isinstance(data, pa.ChunkedArray):
        return arrowipc.chunked_array(data)
    return arrowipc.array(data)


def assert_same(got, expected):
    """Exact equality (dtypes, values, index, names), as pandas.testing checks it.

    Tolerances are zero rather than check_exact=True: pandas' exact path fails on object columns
    of dicts holding arrays (pyarrow's struct form) even when comparing pyarrow with itself."""
    if isinstance(expected, pd.DataFrame):
        pd.testing.assert_frame_equal(got, expected, check_exact=False, rtol=0, atol=0)
    else:
        pd.testing.assert_series_equal(got, expected, check_exact=False, rtol=0, atol=0)
    # element types too: assert_*_equal compares object columns by value only
    exp_frame = expected if isinstance(expected, pd.DataFrame) else expected.to_frame()
    got_frame = got if isinstance(got, pd.DataFrame) else got.to_frame()
    for (_, g), (_, e) in zip(got_frame.items(), exp_frame.items()):
        if e.dtype == object:
            assert [type(x) for x in g.tolist()] == [type(x) for x in e.tolist()]


def assert_converts_like_pyarrow(ours_obj, pa_obj, **options):
    """ours_obj.to_pandas(**options) equals pa_obj's, or both raise the same error."""
    try:
        expected = pa_obj.to_pandas(**options)
    except (pa.ArrowNotImplementedError, pa.ArrowInvalid) as e:
        ours_error = (arrowipc.ArrowNotImplementedError
                      if isinstance(e, pa.ArrowNotImplementedError) else arrowipc.ArrowInvalid)
        with pytest.raises(ours_error) as got:
            ours_obj.to_pandas(**options)
        assert str(got.value) == str(e)
        return
    assert_same(ours_obj.to_pandas(**options), expected)
