"""A stand-in for the `pyarrow` module whose IPC layer is served by arrowipc.

pyarrow's own `tests/test_ipc.py` is run with `import pyarrow as pa` replaced by this module, in one
of two modes chosen by the ARROWIPC_SHIM_MODE environment variable:

* ``converted``: every result arrowipc hands out (tables, batches, schemas, buffers, metadata,
  stats, readers' results) is converted to the pyarrow object through the Arrow PyCapsule
  interface before the test sees it -- "pa.ipc served by arrowipc".
* ``own``: the test gets arrowipc's own objects, exactly as a user who wrote
  ``import arrowipc.ipc as ipc`` would.

In both modes the inputs are untouched pyarrow objects (batches, schemas, pa.BufferReader,
pa.BufferOutputStream, pa.Codec...): accepting them is part of what is tested. The names a user
switches when moving from pyarrow.ipc are those of ``pyarrow.ipc`` and their top-level aliases
(RecordBatchReader, RecordBatch*Reader/Writer, Message, MessageReader, MetadataVersion,
serialize_pandas, deserialize_pandas). The exception classes stay pyarrow's: with pyarrow loaded,
arrowipc's errors are made subclasses of pyarrow's classes of their names (arrowipc/errors.py),
so ``pytest.raises(pa.ArrowInvalid)`` catches them as it is. In ``own`` mode the classes the test
only uses in isinstance checks (Buffer, KeyValueMetadata) become tuples (pyarrow's class,
arrowipc's class).
"""
import os
import sys
import types

import pyarrow as _pa

import arrowipc
import arrowipc.ipc as _aipc

MODE = os.environ.get("ARROWIPC_SHIM_MODE", "converted")

# pyarrow.ipc names, and the top-level aliases of them
IPC_NAMES = [n for n in dir(_pa.ipc) if not n.startswith("_") and n not in ("lib", "os", "pa")]
TOP_LEVEL_IPC_NAMES = ["RecordBatchReader", "RecordBatchStreamReader", "RecordBatchStreamWriter",
                       "RecordBatchFileReader", "RecordBatchFileWriter", "Message",
                       "MessageReader", "MetadataVersion", "serialize_pandas",
                       "deserialize_pandas"]


# -- converted mode: results to pyarrow ----------------------------------------------------------

def to_pa(obj):
    """`obj` with every arrowipc object in it replaced by the pyarrow equivalent."""
    if isinstance(obj, (arrowipc.Table,)):
        return _pa.table(obj)
    if isinstance(obj, arrowipc.RecordBatch):
        return _pa.record_batch(obj)
    if isinstance(obj, arrowipc.Schema):
        return _pa.schema(obj)
    if isinstance(obj, arrowipc.Field):
        return _pa.field(obj)
    if isinstance(obj, arrowipc.DataType):
        return _pa.DataType._import_from_c_capsule(obj.__arrow_c_schema__())
    if isinstance(obj, arrowipc.Buffer):
        return _pa.py_buffer(obj)
    if isinstance(obj, arrowipc.KeyValueMetadata):
        return _pa.KeyValueMetadata(dict(obj.items()))
    if isinstance(obj, tuple) and hasattr(obj, "_fields"):     # stats, batch with metadata
        return type(obj)(*map(to_pa, obj))
    if isinstance(obj, list):
        return [to_pa(x) for x in obj]
    if isinstance(obj, (types.GeneratorType,)) or (type(obj).__module__.startswith("arrowipc")
                                                  and hasattr(obj, "__next__")):
        return (to_pa(x) for x in obj)
    if type(obj).__module__.startswith("arrowipc") and not isinstance(obj, type) and not \
            isinstance(obj, (int, float, str, bytes, bool, dict, type(None))) and \
            not isinstance(obj, (os.PathLike,)) and not _is_enum(obj) and \
            type(obj).__module__ != "arrowipc.ipc.options":
        return Converted(obj)
    return obj


def _is_enum(obj):
    import enum
    return isinstance(obj, enum.Enum)


def unwrap(values) -> list:
    """Arguments as the test passes them, with our wrapped objects handed back unwrapped (a test
    passing a message it got from a reader passes arrowipc's message)."""
    return [v._obj if isinstance(v, Converted) else v for v in values]


class Converted:
    """Wraps an arrowipc object (reader, writer, message): what it returns is converted."""

    def __init__(self, obj):
        object.__setattr__(self, "_obj", obj)

    def __getattr__(self, name):
        value = getattr(self._obj, name)
        if callable(value) and not isinstance(value, type):
            def call(*args, **kwargs):
                return to_pa(value(*unwrap(args), **dict(zip(kwargs, unwrap(kwargs.values())))))
            return call
        return to_pa(value)

    def __setattr__(self, name, value):
        setattr(self._obj, name, value)

    def __iter__(self):
        return (to_pa(x) for x in self._obj)

    def __next__(self):
        return to_pa(next(self._obj))

    def __enter__(self):
        self._obj.__enter__()
        return self

    def __exit__(self, *exc):
        return self._obj.__exit__(*exc)

    def __eq__(self, other):
        return self._obj == (other._obj if isinstance(other, Converted) else other)

    def __repr__(self):
        return repr(self._obj)

    def __str__(self):
        return str(self._obj)

    def __len__(self):
        return len(self._obj)


def _converting(fn):
    if isinstance(fn, type):
        return _ConvertingClass(fn)

    def call(*args, **kwargs):
        return to_pa(fn(*unwrap(args), **dict(zip(kwargs, unwrap(kwargs.values())))))
    call.__name__ = getattr(fn, "__name__", "call")
    return call


class _ConvertingClass:
    """A class whose instances and class-method results come back converted; isinstance works."""

    def __init__(self, cls):
        self._cls = cls

    def __call__(self, *args, **kwargs):
        return to_pa(self._cls(*unwrap(args), **dict(zip(kwargs, unwrap(kwargs.values())))))

    def __getattr__(self, name):
        value = getattr(self._cls, name)
        if callable(value) and not isinstance(value, type) and not _is_enum(value):
            return _converting(value)
        return value

    def __instancecheck__(self, obj):
        return isinstance(obj._obj if isinstance(obj, Converted) else obj, self._cls)


# -- the module -----------------------------------------------------------------------------------

def _served(name):
    value = getattr(_aipc, name, None)
    if value is None:
        value = getattr(arrowipc, name, None)
    if value is None:
        return None
    if MODE == "converted" and callable(value) and not (isinstance(value, type) and
                                                         issubclass(value, BaseException)):
        if isinstance(value, type) and (value.__module__ == "arrowipc.ipc.options"
                                        or _is_enum_type(value)):
            return value
        return _converting(value)
    return value


def _is_enum_type(cls):
    import enum
    return isinstance(cls, type) and issubclass(cls, enum.Enum)


ipc = types.ModuleType("pyarrow.ipc")
for _name in IPC_NAMES:
    _value = _served(_name)
    if _value is not None:
        setattr(ipc, _name, _value)


lib = types.ModuleType("pyarrow.lib")
lib.__getattr__ = lambda name: getattr(_pa.lib, name)

_overrides = {"ipc": ipc, "lib": lib}
for _name in TOP_LEVEL_IPC_NAMES:
    _value = _served(_name)
    if _value is not None:
        _overrides[_name] = _value
if MODE == "own":
    _overrides["Buffer"] = (_pa.Buffer, arrowipc.Buffer)
    _overrides["KeyValueMetadata"] = (_pa.KeyValueMetadata, arrowipc.KeyValueMetadata)


def __getattr__(name):
    try:
        return _overrides[name]
    except KeyError:
        return getattr(_pa, name)


sys.modules.setdefault("arrowipc_pyarrow_shim", sys.modules[__name__])
