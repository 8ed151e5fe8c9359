"""Arrow tables to pandas DataFrames and back, without pyarrow.

`to_pandas()` produces what pyarrow 26's `to_pandas()` produces (same dtypes, values, index,
column names, time zones, categoricals, objects for nested types, NaN/NaT/None for nulls) and
honours the `pandas` schema metadata pyarrow writes; `from_pandas()` infers the Arrow types
pyarrow infers and writes that metadata in pyarrow's format, so pyarrow reads our files back into
the same DataFrame. docs/pandas.md lists the options and the few deliberate differences.

The package: to_pandas (Arrow -> pandas), from_pandas (pandas -> Arrow), metadata (the `pandas`
schema metadata both read and write) and common (helpers both directions use). The names are
re-exported here, where arrowipc/_upcalls.py finds them.

pandas is imported only here, and only when a conversion runs: `import arrowipc` stays light.
"""
from __future__ import annotations

from .from_pandas import (dataframe_to_arrays, dataframe_to_schema, ndarray_to_array_data,
                          series_to_array, series_to_array_data)
from .to_pandas import ToPandasOptions, chunked_to_series, table_to_dataframe

__all__ = ["table_to_dataframe", "chunked_to_series", "dataframe_to_arrays",
           "dataframe_to_schema", "series_to_array", "ToPandasOptions",
           "ndarray_to_array_data", "series_to_array_data"]

from .. import _upcalls                             # noqa: E402   (the pandas shim's methods)
_upcalls.register(__name__, ToPandasOptions=ToPandasOptions, table_to_dataframe=table_to_dataframe,
                  chunked_to_series=chunked_to_series, dataframe_to_arrays=dataframe_to_arrays,
                  dataframe_to_schema=dataframe_to_schema, series_to_array=series_to_array)
