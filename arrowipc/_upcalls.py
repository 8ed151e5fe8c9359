"""The few true up-calls: names a module calls that live above it, looked up here at call time.

The package is layered (README's layout table): the type vocabulary (types, extension, validate),
the kernels on ArrayData (arrowipc/data/), the objects users hold (array.py: Array, ChunkedArray,
Scalar; table.py: RecordBatch, Table; batch_reader), then the faces (pandas_compat, ipc/, ...).
Kernels return ArrayData and the objects wrap it, and the methods of Schema that return objects
or IPC bytes are attached by the modules above it (arrowipc/table.py, arrowipc/__init__.py), so
nothing below the objects needs them. What remains reaches up by nature: the pandas shim's methods
need the pandas conversion and the objects (and the conversion the objects).

Each such callee is declared here by name. The module that defines it registers it when it is
imported (`register(...)` at its end), and the caller looks it up here at call time
(`from ._upcalls import Table` inside the function). `import arrowipc` loads the model, so its
names are registered before any call; the providers kept out of `import arrowipc` to keep it
light (the pandas conversion) are imported on the first lookup of one of their names, through
PROVIDERS below. _upcalls.pyi gives type checkers what each name is.

tests/docs/test_layering.py counts each look-up as an import of the provider and holds the
number of modules using this locator to three (pandas_shim and pandas_compat use it).
"""
from __future__ import annotations

TYPE_CHECKING = False               # typing itself is not imported at run time
if TYPE_CHECKING:
    from typing import Any

__all__ = ["PROVIDERS", "register"]

# name -> the module that defines and registers it
PROVIDERS = {
    "ChunkedArray": "arrowipc.array",
    "RecordBatch": "arrowipc.table",
    "Table": "arrowipc.table",
    "ToPandasOptions": "arrowipc.pandas_compat",
    "table_to_dataframe": "arrowipc.pandas_compat",
    "chunked_to_series": "arrowipc.pandas_compat",
    "dataframe_to_arrays": "arrowipc.pandas_compat",
    "dataframe_to_schema": "arrowipc.pandas_compat",
    "series_to_array": "arrowipc.pandas_compat",
    "peer_as_ours": "arrowipc.table",
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
