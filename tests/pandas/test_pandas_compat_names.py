"""arrowipc.pandas_compat is a package (to_pandas, from_pandas, metadata, common); every name it
offered as one module stays importable from it, and is the object its new module defines."""
import importlib

import pytest

NAMES = {
    "ToPandasOptions": "to_pandas", "table_to_dataframe": "to_pandas",
    "chunked_to_series": "to_pandas", "dataframe_to_arrays": "from_pandas",
    "dataframe_to_schema": "from_pandas", "series_to_array": "from_pandas",
    "series_to_array_data": "from_pandas", "ndarray_to_array_data": "from_pandas",
}


@pytest.mark.parametrize("name", sorted(NAMES))
def test_name_importable_from_the_package(name):
    package = importlib.import_module("arrowipc.pandas_compat")
    module = importlib.import_module(f"arrowipc.pandas_compat.{NAMES[name]}")
    assert getattr(package, name) is getattr(module, name)


def test_the_upcalls_find_the_package_names():
    from arrowipc import _upcalls
    import arrowipc.pandas_compat as package
    for name, provider in _upcalls.PROVIDERS.items():
        if provider == "arrowipc.pandas_compat":
            assert getattr(_upcalls, name) is getattr(package, name)
