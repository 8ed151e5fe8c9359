"""Calls from the model's lower modules up into the modules above them, without importing them.

The columnar model is layered: the type vocabulary (types, extension), the per-value conversions
and checks (from_python, to_python, validate), the operations on ArrayData (concat, selection,
cast, tableops), then the objects users hold (array, scalar, table, batch_reader), then
interop, the pandas conversion and ipc/. A lower module imports only from below it. Yet some of
its functions must reach up: an operation hands back an Array built by array.make_array,
Schema.empty_table builds a Table, Schema.serialize needs the IPC writer, Array.to_pandas the
pandas conversion.

Each such callee is declared here by name. The module that defines it registers it when it is
imported (`register(...)` at its end), and the lower module looks it up here at call time
(`from .._upcalls import make_array` inside the function). `import arrowipc` loads the model,
so its names are registered before any call; the providers kept out of `import arrowipc` to keep
it light (the IPC writer, the pandas conversion) are imported on the first lookup of one of
their names, through PROVIDERS below. _upcalls.pyi gives type checkers what each name is.

The only imports that still close a cycle are the lazy ones of `interop`, the `__arrow_c_*__`
protocol pair: the model's objects export and import themselves through the C data interface,
which builds model objects in turn (tests/docs/test_layering.py holds the rule).
"""
from __future__ import annotations

TYPE_CHECKING = False               # typing itself is not imported at run time
if TYPE_CHECKING:
    from typing import Any

__all__ = ["PROVIDERS", "register"]

# name -> the module that defines and registers it
PROVIDERS = {
    "Array": "arrowipc.array",
    "make_array": "arrowipc.array",
    "array": "arrowipc.array",
    "chunked_array": "arrowipc.array",
    "ChunkedArray": "arrowipc.array",
    "Scalar": "arrowipc.scalar",
    "RecordBatch": "arrowipc.table",
    "Table": "arrowipc.table",
    "array_data_from_python": "arrowipc.from_python",
    "RecordBatchReader": "arrowipc.batch_reader",
    "ToPandasOptions": "arrowipc.pandas_compat",
    "table_to_dataframe": "arrowipc.pandas_compat",
    "chunked_to_series": "arrowipc.pandas_compat",
    "dataframe_to_arrays": "arrowipc.pandas_compat",
    "dataframe_to_schema": "arrowipc.pandas_compat",
    "series_to_array": "arrowipc.pandas_compat",
    "serialize_schema": "arrowipc.ipc.writer",
    "serialize_record_batch": "arrowipc.ipc.writer",
}


def register(module: str, **provided: Any) -> None:
    """Make `provided` (name=object) reachable from below; `module` must be their declared
    provider (a name registered twice, or by another module, is a layering mistake)."""
    namespace = globals()
    for name, value in provided.items():
        if PROVIDERS.get(name) != module:
            raise ValueError(f"{module} registers {name!r}, declared for {PROVIDERS.get(name)}")
        namespace[name] = value


def __getattr__(name: str) -> Any:
    # only called for names not registered yet: load their provider, which registers them
    module = PROVIDERS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib
    importlib.import_module(module)
    namespace = globals()
    if name not in namespace:
        raise ImportError(f"{module} did not register {name!r}")
    return namespace[name]
