"""The served entry points: pyarrow's IPC and Feather calls answered by arrowipc with pyarrow objects.

Readers and writers are subclasses of pyarrow's own classes (built at install time over the
originals), so `isinstance` checks in pyarrow's code and in users' pass; their metaclass also
answers True for pyarrow's original objects, so a fall-back result passes a check against the
patched name. A served instance holds an arrowipc reader or writer and converts at the edge:
batches and tables go to pyarrow through the C data interface, without copying a buffer.

Every served call first decides whether arrowipc can serve it (source kind, options, arguments);
when it cannot, `Unservable` carries the reason and pyarrow's original runs untouched. An error
of arrowipc's while opening a source pyarrow can read again is answered by pyarrow (the oracle):
it raises its own exception, or reads what arrowipc refused. Errors after that (a corrupt batch
met while reading) are raised as pyarrow's exception class of the same name.
"""
from __future__ import annotations

import ctypes
import io
import os
import stat
import warnings
import weakref
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import pyarrow as pa
import pyarrow.ipc as pa_ipc

from .. import errors as ai_errors
from .. import ipc as ai_ipc
from .._core import cdata
from .._core.arraydata import ArrayData
from ..data.interop import checked_if_mapped
from ..types import StructType
from ..ipc.format import FEATHER_V1_MAGIC, FILE_MAGIC
from .record import RECORD, in_passthrough, passthrough

__all__ = ["Unservable", "pyarrow_error", "build_ipc_patches", "build_feather_patches"]


class Unservable(Exception):
    """arrowipc does not serve this call; the message is the reason the report gives."""


def pyarrow_error(exc: BaseException) -> BaseException:
    """pyarrow's exception of the same name as arrowipc's `exc` (same builtin base), or `exc`."""
    for cls in type(exc).__mro__:
        if cls.__module__ == ai_errors.__name__:
            target = getattr(pa.lib, cls.__name__, None)
            if isinstance(target, type) and issubclass(target, BaseException):
                return target(str(exc))
    return exc


def _call(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    try:
        return fn(*args, **kwargs)
    except ai_errors.ArrowException as exc:
        raise pyarrow_error(exc) from exc


# --- what arrowipc can open -----------------------------------------------------------------

def _is_url(path: str) -> bool:
    return "://" in path


def _path_or_none(source: Any) -> str | None:
    if isinstance(source, str):
        if _is_url(source):
            raise Unservable("a URL string (pyarrow reads it as a local path)")
        return source
    if isinstance(source, os.PathLike):
        path = os.fspath(source)
        return path if isinstance(path, str) else None
    return None


class _Source:
    """What arrowipc opens for `source`, and how to hand the same source to pyarrow after."""

    def __init__(self, source: Any) -> None:
        self.original = source
        self.rewind_to: int | None = None
        self.rereadable = True
        if isinstance(source, pa.NativeFile) and (source.closed or not source.readable()):
            raise Unservable("a pyarrow NativeFile that is closed or not readable")
        path = _path_or_none(source)
        if path is not None:
            self.opened: Any = path
        elif isinstance(source, (bytes, bytearray, memoryview)):
            self.opened = source
        elif isinstance(source, pa.Buffer):
            self.opened = memoryview(source)
        elif callable(getattr(source, "read", None)) and not isinstance(source, io.TextIOBase):
            self.opened = source
            try:
                self.rewind_to = source.tell() if source.seekable() else None
            except (AttributeError, OSError, ValueError):
                self.rewind_to = None
            self.rereadable = self.rewind_to is not None
        else:
            raise Unservable(f"a source of type {type(source).__name__}")

    def rewind(self) -> bool:
        """Whether pyarrow can be handed the source as it was (a file object is sought back)."""
        if self.rewind_to is not None:
            try:
                self.original.seek(self.rewind_to)
            except (OSError, ValueError):
                return False
        return self.rereadable


def _sink(sink: Any) -> Any:
    if isinstance(sink, pa.NativeFile) and (sink.closed or not sink.writable()):
        raise Unservable("a pyarrow NativeFile that is closed or not writable")
    path = _path_or_none(sink)
    if path is not None:
        return path
    if callable(getattr(sink, "write", None)) and not isinstance(sink, io.TextIOBase):
        return sink
    raise Unservable(f"a sink of type {type(sink).__name__}")


def _read_options(options: Any, memory_pool: Any) -> ai_ipc.IpcReadOptions | None:
    if memory_pool is not None:
        raise Unservable("a memory_pool was given")
    if options is None:
        return None
    if not isinstance(options, pa_ipc.IpcReadOptions):
        raise Unservable("options is not a pyarrow IpcReadOptions")
    if options.ensure_alignment != pa_ipc.Alignment.Any:
        raise Unservable("IpcReadOptions.ensure_alignment is set")
    return ai_ipc.IpcReadOptions(options.ensure_native_endian, use_threads=options.use_threads,
                                 included_fields=options.included_fields or None)


def _write_options(options: Any) -> ai_ipc.IpcWriteOptions:
    if options is not None and not isinstance(options, pa_ipc.IpcWriteOptions):
        raise Unservable("options is not a pyarrow IpcWriteOptions")
    if not options:
        # pyarrow's defaults, which read ARROW_PRE_0_15_IPC_FORMAT / ARROW_PRE_1_0_METADATA_VERSION
        options = pa_ipc.IpcWriteOptions(
            use_legacy_format=bool(int(os.environ.get("ARROW_PRE_0_15_IPC_FORMAT", "0"))),
            metadata_version=(pa_ipc.MetadataVersion.V4
                              if bool(int(os.environ.get("ARROW_PRE_1_0_METADATA_VERSION", "0")))
                              else pa_ipc.MetadataVersion.V5))
    if options.compression not in (None, "lz4", "zstd"):
        raise Unservable(f"compression {options.compression!r}")
    # the codec object given (its level kept) when the options were made under the accelerator
    codec = getattr(options, "__dict__", {}).get("_arrowipc_codec")
    compression = codec if isinstance(codec, pa.Codec) and options.compression else \
        options.compression
    return ai_ipc.IpcWriteOptions(
        ai_ipc.MetadataVersion(int(options.metadata_version.value)),
        allow_64bit=options.allow_64bit, use_legacy_format=options.use_legacy_format,
        compression=compression, use_threads=options.use_threads,
        emit_dictionary_deltas=options.emit_dictionary_deltas,
        unify_dictionaries=options.unify_dictionaries)


def _kv(metadata: Any) -> Any:
    """arrowipc's custom metadata as pyarrow gives it (KeyValueMetadata, or None)."""
    return pa.KeyValueMetadata(metadata) if metadata else None


def _message_bytes(obj: Any) -> Any:
    """The bytes read_schema and read_record_batch read from `obj`: itself when a bytes-like or a
    pyarrow.Buffer, a pyarrow.Message's framed bytes (its `serialize()`), else None (a stream,
    which pyarrow reads from its position)."""
    if isinstance(obj, (bytes, bytearray, memoryview, pa.Buffer)):
        return obj
    if isinstance(obj, pa_ipc.Message):
        return obj.serialize()
    return None


def _opened(entry: str, open_ours: Callable[[_Source], Any], source: Any,
            fall_back: Callable[[], Any]) -> Any:
    """arrowipc's object for `source`, or pyarrow's answer (through `fall_back`)."""
    try:
        src = _Source(source)
    except Unservable as why:
        RECORD.fall_back(entry, str(why))
        with passthrough():
            return fall_back()
    try:
        ours = open_ours(src)
    except Unservable as why:
        RECORD.fall_back(entry, str(why))
        with passthrough():
            return fall_back()
    except ai_errors.ArrowException as exc:
        if not src.rewind():
            raise pyarrow_error(exc) from exc
        RECORD.fall_back(entry, f"arrowipc refused the input ({type(exc).__name__}); "
                                "pyarrow's answer is kept")
        with passthrough():
            return fall_back()
    RECORD.serve(entry)
    return ours


# --- classes over pyarrow's own ---------------------------------------------------------------

class _ServedMeta(type):
    """isinstance(pyarrow's original object, patched class) is True, as before the patch."""
    _pyarrow_class: type

    def __instancecheck__(cls, obj: Any) -> bool:
        return type.__instancecheck__(cls, obj) or isinstance(obj, cls._pyarrow_class)

    def __subclasscheck__(cls, sub: Any) -> bool:
        return type.__subclasscheck__(cls, sub) or issubclass(sub, cls._pyarrow_class)


class _Served:
    """Common to the served classes: `_ours` is arrowipc's object; None in an instance built
    by pyarrow's own constructor (a subclass of the patched class), which then runs as pyarrow."""
    _ours: Any = None
    _pyarrow_class: Any

    def __new__(cls, *args: Any, **kwargs: Any) -> Any:
        if in_passthrough():
            return cls._pyarrow_class(*args, **kwargs)
        return cls._serve(*args, **kwargs)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        pass                                  # made whole by _serve (or pyarrow's, not ours)

    @classmethod
    def _serve(cls, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError

    @classmethod
    def _wrap(cls, ours: Any) -> Any:
        original = cls._pyarrow_class
        obj = original.__new__(cls) if issubclass(cls, original) else object.__new__(cls)
        obj._ours = ours
        return obj

    def __enter__(self) -> Any:
        if self._ours is None:
            return self._pyarrow_class.__enter__(self)
        return self

    def __exit__(self, *exc: Any) -> Any:
        if self._ours is None:
            return self._pyarrow_class.__exit__(self, *exc)
        self.close()
        return None

    def close(self) -> None:
        if self._ours is None:
            return self._pyarrow_class.close(self)    # type: ignore[no-any-return]
        _call(self._ours.close)


def _delegating(name: str, serve: Callable[..., Any]) -> Callable[..., Any]:
    """A method running `serve` on a served instance, pyarrow's own method otherwise."""
    def method(self: Any, *args: Any, **kwargs: Any) -> Any:
        if self._ours is None:
            return getattr(self._pyarrow_class, name)(self, *args, **kwargs)
        return serve(self, *args, **kwargs)
    method.__name__ = name
    return method


def _delegating_property(name: str, serve: Callable[[Any], Any]) -> property:
    def getter(self: Any) -> Any:
        if self._ours is None:
            return getattr(self._pyarrow_class, name).__get__(self)
        return serve(self)
    return property(getter)


# --- pyarrow objects made from arrowipc's, and back ----------------------------------------------

class _MadeFrom(weakref.ref[Any]):
    """A weak reference to a pyarrow object the accelerator made from arrowipc's `ours`."""
    __slots__ = ("key", "ours")

    def __new__(cls, theirs: Any, ours: Any) -> _MadeFrom:
        return super().__new__(cls, theirs, _forget)

    def __init__(self, theirs: Any, ours: Any) -> None:     # the reference is made by __new__
        self.key = id(theirs)
        self.ours = ours


# id(pyarrow object) -> its reference, while the object lives: a served writer given a batch or
# schema a served reader handed out writes arrowipc's own object, checked when it was read,
# instead of importing pyarrow's back through the C data interface
_HANDED_OUT: dict[int, _MadeFrom] = {}


def _forget(ref: weakref.ref[Any]) -> None:
    key = getattr(ref, "key", None)
    if key is not None and _HANDED_OUT.get(key) is ref:
        del _HANDED_OUT[key]


def _handed_out(theirs: Any, ours: Any) -> Any:
    """`theirs` (made from arrowipc's `ours`, zero-copy), remembered as `ours` while it lives."""
    _HANDED_OUT[id(theirs)] = _MadeFrom(theirs, ours)
    return theirs


def _ours_of(theirs: Any) -> Any:
    """arrowipc's object a served reader made `theirs` from, or None."""
    ref = _HANDED_OUT.get(id(theirs))
    return ref.ours if ref is not None and ref() is theirs else None


def _batch(b: Any) -> Any:
    return _handed_out(_call(pa.record_batch, b), b)


# The address of an "arrow_array" capsule's struct, for pyarrow's import of an array under a
# Schema it holds already (its capsule import parses a schema for every batch). The capsule keeps
# the struct; pyarrow moves the array out of it, and the capsule then frees an empty struct.
_capsule_pointer = ctypes.PYFUNCTYPE(ctypes.c_void_p, ctypes.py_object, ctypes.c_char_p)(
    ("PyCapsule_GetPointer", ctypes.pythonapi))


class _BatchExport:
    """A served reader's batches to pyarrow: its schema crosses the C data interface once (kept
    as pyarrow's Schema, which `schema` returns); each batch of that schema crosses as its struct
    array alone, without its schema described and parsed again."""

    def __init__(self, schema: Any) -> None:
        self.ours = schema
        self.theirs = _handed_out(pa.schema(schema), schema)
        self._struct = StructType(schema.fields)

    def __call__(self, batch: Any) -> Any:
        if batch.schema is not self.ours:
            return _batch(batch)
        try:
            columns = batch._columns            # its content checked first (once)
        except ai_errors.ArrowException as exc:
            raise pyarrow_error(exc) from exc
        data = ArrayData(self._struct, batch.num_rows, 0, 0, [None], list(columns))
        array = cdata.export_array_capsule(checked_if_mapped(data, "record batch"))
        theirs = pa.RecordBatch._import_from_c(_capsule_pointer(array, b"arrow_array"),
                                               self.theirs)
        return _handed_out(theirs, batch)


def _exporter(self: Any) -> _BatchExport:
    """The served reader's _BatchExport, made at first use (the reader's schema is known)."""
    export: _BatchExport | None = self.__dict__.get("_export")
    if export is None:
        export = self._export = _BatchExport(self._ours.schema)
    return export


def _with_metadata(export: Callable[[Any], Any], item: Any) -> Any:
    batch, custom_metadata = item
    return pa.lib.RecordBatchWithMetadata(export(batch), _kv(custom_metadata))


def _table(t: Any) -> Any:
    return pa.table(t)


def _stream_reader_methods() -> dict[str, Any]:
    def read_next_batch(self: Any) -> Any:
        return _exporter(self)(_call(self._ours.read_next_batch))

    def read_next_batch_with_custom_metadata(self: Any) -> Any:
        return _with_metadata(_exporter(self),
                              _call(self._ours.read_next_batch_with_custom_metadata))

    def iter_batches_with_custom_metadata(self: Any) -> Iterator[Any]:
        while True:
            try:
                yield read_next_batch_with_custom_metadata(self)
            except StopIteration:
                return

    def as_pyarrow_reader(self: Any) -> Any:
        """pyarrow's RecordBatchReader over the batches read_next_batch hands out, for pyarrow's
        own C stream exports: an error crosses the C interface as pyarrow's class of it (a body
        cut short, an OSError, stays one), as pyarrow's reader's errors do."""
        def batches() -> Iterator[Any]:
            while True:
                try:
                    batch = read_next_batch(self)
                except StopIteration:
                    return
                yield batch
        return pa.RecordBatchReader.from_batches(_exporter(self).theirs, batches())

    def c_stream(self: Any, requested_schema: Any = None) -> Any:
        return as_pyarrow_reader(self).__arrow_c_stream__(requested_schema)

    return {
        "__iter__": _delegating("__iter__", lambda self: self),
        "__next__": _delegating("__next__", read_next_batch),
        "schema": _delegating_property("schema", lambda self: _exporter(self).theirs),
        "read_next_batch": _delegating("read_next_batch", read_next_batch),
        "read_next_batch_with_custom_metadata": _delegating(
            "read_next_batch_with_custom_metadata", read_next_batch_with_custom_metadata),
        "iter_batches_with_custom_metadata": _delegating(
            "iter_batches_with_custom_metadata", iter_batches_with_custom_metadata),
        "read_all": _delegating("read_all", lambda self: _table(_call(self._ours.read_all))),
        "read_pandas": _delegating(
            "read_pandas", lambda self, **options: _table(_call(self._ours.read_all))
            .to_pandas(**options)),
        "cast": _delegating("cast", lambda self, target_schema:
                            as_pyarrow_reader(self).cast(target_schema)),
        "_export_to_c": _delegating("_export_to_c", lambda self, out_ptr:
                                    as_pyarrow_reader(self)._export_to_c(out_ptr)),
        "__arrow_c_stream__": _delegating("__arrow_c_stream__", c_stream),
        "stats": _delegating_property("stats", lambda self: pa_ipc.ReadStats(*self._ours.stats)),
        "from_stream": staticmethod(pa.RecordBatchReader.from_stream),
        "from_batches": staticmethod(pa.RecordBatchReader.from_batches),
        "_import_from_c": staticmethod(pa.RecordBatchReader._import_from_c),
        "_import_from_c_capsule": staticmethod(pa.RecordBatchReader._import_from_c_capsule),
        "_open": _delegating("_open", lambda self, *a, **k: _no_reopen()),
    }


def _no_reopen() -> None:
    raise TypeError("a served reader is open already")


def _file_reader_methods() -> dict[str, Any]:
    def get_batch(self: Any, i: int) -> Any:
        return _exporter(self)(_call(self._ours.get_batch, i))

    return {
        "num_record_batches": _delegating_property(
            "num_record_batches", lambda self: self._ours.num_record_batches),
        "count_rows": _delegating("count_rows", lambda self: _call(self._ours.count_rows)),
        "get_batch": _delegating("get_batch", get_batch),
        "get_record_batch": _delegating("get_record_batch", get_batch),
        "get_batch_with_custom_metadata": _delegating(
            "get_batch_with_custom_metadata",
            lambda self, i: _with_metadata(_exporter(self),
                                           _call(self._ours.get_batch_with_custom_metadata, i))),
        "read_all": _delegating("read_all", lambda self: _table(_call(self._ours.read_all))),
        "read_pandas": _delegating(
            "read_pandas", lambda self, **options: _table(_call(self._ours.read_all))
            .to_pandas(**options)),
        "schema": _delegating_property("schema", lambda self: _exporter(self).theirs),
        "metadata": _delegating_property("metadata", lambda self: _kv(self._ours.metadata)),
        "stats": _delegating_property("stats", lambda self: pa_ipc.ReadStats(*self._ours.stats)),
    }


def _writer_methods() -> dict[str, Any]:
    def write_batch(self: Any, batch: Any, custom_metadata: Any = None) -> None:
        if not isinstance(batch, pa.RecordBatch):
            raise TypeError(f"Argument 'batch' has incorrect type (expected "
                            f"pyarrow.lib.RecordBatch, got {type(batch).__name__})")
        if custom_metadata is not None:
            custom_metadata = dict(pa.KeyValueMetadata(custom_metadata))
        ours = _ours_of(batch)
        _call(self._ours.write_batch, batch if ours is None else ours, custom_metadata)

    def write_table(self: Any, table: Any, max_chunksize: int | None = None) -> None:
        if not isinstance(table, pa.Table):
            raise TypeError(f"Argument 'table' has incorrect type (expected "
                            f"pyarrow.lib.Table, got {type(table).__name__})")
        _call(self._ours.write_table, table, max_chunksize)

    def write(self: Any, table_or_batch: Any) -> None:
        if isinstance(table_or_batch, pa.RecordBatch):
            write_batch(self, table_or_batch)
        elif isinstance(table_or_batch, pa.Table):
            write_table(self, table_or_batch)
        else:
            raise ValueError(type(table_or_batch))

    return {
        "write": _delegating("write", write),
        "write_batch": _delegating("write_batch", write_batch),
        "write_table": _delegating("write_table", write_table),
        "stats": _delegating_property("stats", lambda self: pa_ipc.WriteStats(*self._ours.stats)),
        "_use_legacy_format": _delegating_property(
            "_use_legacy_format", lambda self: self._ours.options.use_legacy_format),
        "_metadata_version": _delegating_property(
            "_metadata_version", lambda self: pa_ipc.MetadataVersion(
                int(self._ours.options.metadata_version))),
    }


def _served_class(original: type, entry: str, methods: dict[str, Any],
                  serve: Callable[..., Any], subclass: bool = True) -> type:
    """The class patched in for `original`: a subclass of it (isinstance of pyarrow's class
    holds), or with `subclass=False` a class of its own whose instances pyarrow's C++ code
    cannot mistake for an object it can use from C++."""
    namespace = dict(methods, _pyarrow_class=original, _served_class=True,
                     __module__=original.__module__, __qualname__=original.__qualname__,
                     __doc__=original.__doc__, _serve=classmethod(serve))
    bases = (_Served, original) if subclass else (_Served,)
    cls = _ServedMeta(original.__name__, bases, namespace)
    cls._accelerate_entry = entry           # type: ignore[attr-defined]
    return cls


def _write_options_class(original: Any) -> type:
    """pyarrow's IpcWriteOptions, remembering the Codec object given as `compression`: pyarrow
    keeps its level out of reach of Python, and arrowipc writes with it."""
    prop = original.__dict__["compression"]

    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        original.__init__(self, *args, **kwargs)

    def set_compression(self: Any, value: Any) -> None:
        prop.__set__(self, value)
        self.__dict__["_arrowipc_codec"] = value

    namespace = {"__init__": __init__, "_pyarrow_class": original,
                 "compression": property(prop.__get__, set_compression, None, prop.__doc__),
                 "__module__": original.__module__, "__qualname__": original.__qualname__,
                 "__doc__": original.__doc__}
    return _ServedMeta(original.__name__, (original,), namespace)


def build_ipc_patches(originals: dict[str, Any]) -> dict[str, Any]:
    """{name in pyarrow.ipc: replacement} over pyarrow's `originals` (same names)."""
    o = originals
    classes: dict[str, Any] = {}

    def stream_reader(cls: Any, source: Any, *, options: Any = None,
                      memory_pool: Any = None) -> Any:
        def ours(src: _Source) -> Any:
            return cls._wrap(ai_ipc.RecordBatchStreamReader(
                src.opened, options=_read_options(options, memory_pool)))
        return _opened("ipc.RecordBatchStreamReader", ours, source,
                       lambda: o["RecordBatchStreamReader"](source, options=options,
                                                           memory_pool=memory_pool))

    def file_reader(cls: Any, source: Any, footer_offset: Any = None, *, options: Any = None,
                    memory_pool: Any = None) -> Any:
        def ours(src: _Source) -> Any:
            if footer_offset is not None and isinstance(src.opened, str):
                raise Unservable("footer_offset with a path")
            return cls._wrap(ai_ipc.RecordBatchFileReader(
                src.opened, footer_offset, options=_read_options(options, memory_pool)))
        return _opened("ipc.RecordBatchFileReader", ours, source,
                       lambda: o["RecordBatchFileReader"](source, footer_offset, options=options,
                                                         memory_pool=memory_pool))

    def writer(file_mode: bool) -> Callable[..., Any]:
        name = "RecordBatchFileWriter" if file_mode else "RecordBatchStreamWriter"

        def serve(cls: Any, sink: Any, schema: Any, *, options: Any = None,
                  **kwargs: Any) -> Any:
            extra = {"metadata": kwargs.pop("metadata")} if "metadata" in kwargs and \
                file_mode else {}

            def fall_back() -> Any:
                return o[name](sink, schema, options=options, **kwargs, **extra)
            try:
                if kwargs:
                    raise Unservable(f"argument {sorted(kwargs)[0]!r}")
                if not isinstance(schema, pa.Schema):
                    raise Unservable("the schema is not a pyarrow Schema")
                target = _sink(sink)
                ipc_options = _write_options(options)
            except Unservable as why:
                RECORD.fall_back(f"ipc.{name}", str(why))
                with passthrough():
                    return fall_back()
            opener = ai_ipc.RecordBatchFileWriter if file_mode else ai_ipc.RecordBatchStreamWriter
            if file_mode:
                metadata = extra.get("metadata")
                extra = {"metadata": dict(pa.KeyValueMetadata(metadata))} \
                    if metadata is not None else {}
            own_schema = _ours_of(schema)
            ours = _call(opener, target, schema if own_schema is None else own_schema,
                         options=ipc_options, **extra)
            RECORD.serve(f"ipc.{name}")
            return cls._wrap(ours)
        return serve

    # Not a subclass of pyarrow's stream reader: that is a RecordBatchReader, which pyarrow's C++
    # consumers (datasets, Acero, Flight) take by its C++ object, empty in a served one; they
    # take a served reader through __arrow_c_stream__ instead.
    classes["RecordBatchStreamReader"] = _served_class(
        o["RecordBatchStreamReader"], "ipc.RecordBatchStreamReader",
        _stream_reader_methods(), stream_reader, subclass=False)
    classes["RecordBatchFileReader"] = _served_class(
        o["RecordBatchFileReader"], "ipc.RecordBatchFileReader", _file_reader_methods(),
        file_reader)
    classes["RecordBatchStreamWriter"] = _served_class(
        o["RecordBatchStreamWriter"], "ipc.RecordBatchStreamWriter", _writer_methods(),
        writer(False))
    classes["RecordBatchFileWriter"] = _served_class(
        o["RecordBatchFileWriter"], "ipc.RecordBatchFileWriter", _writer_methods(),
        writer(True))

    # The functions answer as their classes do (pyarrow's open_stream is the class's call).
    def open_stream(source: Any, *, options: Any = None, memory_pool: Any = None) -> Any:
        return classes["RecordBatchStreamReader"](source, options=options,
                                                  memory_pool=memory_pool)

    def open_file(source: Any, footer_offset: Any = None, *, options: Any = None,
                  memory_pool: Any = None) -> Any:
        return classes["RecordBatchFileReader"](source, footer_offset, options=options,
                                                memory_pool=memory_pool)

    def new_stream(sink: Any, schema: Any, *, options: Any = None) -> Any:
        return classes["RecordBatchStreamWriter"](sink, schema, options=options)

    def new_file(sink: Any, schema: Any, *, options: Any = None, metadata: Any = None) -> Any:
        return classes["RecordBatchFileWriter"](sink, schema, options=options, metadata=metadata)

    def read_schema(obj: Any, dictionary_memo: Any = None) -> Any:
        def fall_back() -> Any:
            return o["read_schema"](obj, dictionary_memo)
        raw = _message_bytes(obj)
        if dictionary_memo is not None or raw is None:
            RECORD.fall_back("ipc.read_schema", "a stream or dictionary_memo"
                             if dictionary_memo is None else "a dictionary_memo")
            with passthrough():
                return fall_back()
        return _opened("ipc.read_schema", lambda src: pa.schema(ai_ipc.read_schema(src.opened)),
                       raw, fall_back)

    def read_record_batch(obj: Any, schema: Any, dictionary_memo: Any = None) -> Any:
        def fall_back() -> Any:
            return o["read_record_batch"](obj, schema, dictionary_memo)
        raw = _message_bytes(obj)
        if dictionary_memo is not None or not isinstance(schema, pa.Schema) or raw is None:
            RECORD.fall_back("ipc.read_record_batch",
                             "a stream, a dictionary_memo or a schema not pyarrow's")
            with passthrough():
                return fall_back()
        return _opened("ipc.read_record_batch",
                       lambda src: _batch(ai_ipc.read_record_batch(src.opened, schema)),
                       raw, fall_back)

    def deserialize_pandas(buf: Any, *, use_threads: bool = True) -> Any:
        def ours(src: _Source) -> Any:
            if not isinstance(buf, (bytes, bytearray, memoryview, pa.Buffer)):
                raise Unservable(f"a buffer of type {type(buf).__name__}")
            return _table(ai_ipc.open_stream(src.opened).read_all())
        table = _opened("ipc.deserialize_pandas", ours, buf,
                        lambda: o["deserialize_pandas"](buf, use_threads=use_threads))
        return table.to_pandas(use_threads=use_threads) if isinstance(table, pa.Table) else table

    def serialize_pandas(df: Any, *, nthreads: Any = None, preserve_index: Any = None) -> Any:
        batch = pa.RecordBatch.from_pandas(df, nthreads=nthreads, preserve_index=preserve_index)
        sink = io.BytesIO()
        with ai_ipc.new_stream(sink, batch.schema) as writer:
            writer.write_batch(batch)
        RECORD.serve("ipc.serialize_pandas")
        return pa.py_buffer(sink.getvalue())

    classes["IpcWriteOptions"] = _write_options_class(o["IpcWriteOptions"])
    return dict(classes, open_stream=open_stream, open_file=open_file, new_stream=new_stream,
                new_file=new_file, read_schema=read_schema, read_record_batch=read_record_batch,
                deserialize_pandas=deserialize_pandas, serialize_pandas=serialize_pandas)


# --- pyarrow.feather --------------------------------------------------------------------------

FEATHER_CODECS = {"lz4", "zstd", "uncompressed"}
FEATHER_CHUNKSIZE = 64 * 1024          # pyarrow's default rows per batch
# pyarrow 26's deprecation warnings, word for word, raised where pyarrow raises them
V1_READ_WARNING = ("Feather V1 files are deprecated as of 25.0.0 and support will be removed in a "
                   "future version. Consider rewriting this file in the Arrow IPC file format "
                   "(Feather V2).")
V1_WRITE_WARNING = ("Feather V1 files are deprecated as of 25.0.0 and support will be removed in "
                    "a future version. Use the default version=2 to write Arrow IPC files "
                    "instead.")


def _regular_file_path(f: Any) -> str | None:
    """The path of a file object open on a regular local file that its `name` still names
    (`pd.read_feather` hands pyarrow `open(path, "rb")`), else None. A file-format read takes the
    whole file, so reading the path gives the same bytes, with the path's leased mapping instead
    of reads through Python."""
    name = getattr(f, "name", None)
    fileno = getattr(f, "fileno", None)
    if not isinstance(name, str) or not callable(fileno) or _is_url(name):
        return None
    try:
        opened, named = os.fstat(fileno()), os.stat(name)
    except (OSError, ValueError, io.UnsupportedOperation):
        return None
    if not stat.S_ISREG(opened.st_mode) or \
            (opened.st_dev, opened.st_ino) != (named.st_dev, named.st_ino):
        return None
    return name


class _FeatherRead:
    """pyarrow.feather.read_table's answer, read by arrowipc: Feather V2 (the IPC file) through
    arrowipc.ipc with pyarrow's selection rules, Feather V1 through arrowipc.feather. `v1` says
    which it was, for the deprecation warning the caller raises."""

    def __init__(self, columns: Any, memory_map: bool, use_threads: bool) -> None:
        if columns is not None:
            if not isinstance(columns, Sequence) or isinstance(columns, (str, bytes)):
                raise Unservable("columns is not a sequence (pyarrow raises)")
            kinds = {type(c) for c in columns}
            if not columns or not (kinds == {int} or kinds == {str}):
                raise Unservable("columns are neither all names nor all indices (pyarrow raises)")
        self.columns = columns
        self.memory_map = memory_map
        self.use_threads = use_threads
        self.v1 = False

    def __call__(self, src: _Source) -> Any:
        opened = src.opened
        if isinstance(opened, (bytes, bytearray, memoryview)):
            head = bytes(memoryview(opened)[:6])
        elif isinstance(opened, str):
            with open(opened, "rb") as f:
                head = f.read(6)
        elif src.rewind_to == 0:
            path = _regular_file_path(opened)
            if path is not None:
                opened = path                       # read as a path: mapped, not read through
                with open(opened, "rb") as f:
                    head = f.read(6)
            else:
                head = opened.read(6)
                opened.seek(0)
        else:
            raise Unservable("a file object not at its start or that cannot seek")
        if head.startswith(FEATHER_V1_MAGIC):
            return self._v1(opened)
        if head != FILE_MAGIC:
            raise Unservable("neither a Feather V1 nor a Feather V2 (Arrow IPC) file")
        return self._v2(opened)

    def _v1(self, opened: Any) -> Any:
        from .. import feather as ai_feather
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)     # the caller raises pyarrow's
            try:
                table = ai_feather.read_table(opened, columns=self.columns,
                                              memory_map=self.memory_map,
                                              use_threads=self.use_threads)
            except ai_errors.ArrowException as exc:
                # not left to pyarrow: its Feather V1 reader follows a malformed file's offsets
                # unchecked and crashes the process on some; arrowipc's error, in pyarrow's class
                raise pyarrow_error(exc) from exc
        self.v1 = True                          # read: the caller warns as pyarrow does
        return _table(table)                    # V1 reads give the columns in the order asked

    def _v2(self, opened: Any) -> Any:
        columns = self.columns
        memory_map = bool(self.memory_map and isinstance(opened, str))
        reader = ai_ipc.open_file(opened, memory_map=memory_map,
                                  options=ai_ipc.IpcReadOptions(use_threads=self.use_threads))
        names = reader.schema.names
        if columns is None:
            return _table(reader.read_all())
        if isinstance(columns[0], str):
            if any(names.count(c) != 1 for c in columns):
                raise Unservable("a column name absent or repeated in the file (pyarrow raises)")
            wanted = [names.index(c) for c in columns]
        else:
            if any(not 0 <= c < len(names) for c in columns):
                raise Unservable("a column index out of range (pyarrow raises)")
            wanted = list(columns)
        unique = sorted(set(wanted))
        if not isinstance(opened, (str, bytes, bytearray, memoryview)):
            opened.seek(0)
        projected = ai_ipc.open_file(
            opened, memory_map=memory_map,
            options=ai_ipc.IpcReadOptions(use_threads=self.use_threads, included_fields=unique))
        table = _table(projected.read_all())
        if sorted(set(columns)) == list(columns):
            return table                               # pyarrow keeps the file's order then
        return table.select(columns)                   # as pyarrow does, whatever it answers


def build_feather_patches(originals: dict[str, Any]) -> dict[str, Any]:
    """{name in pyarrow.feather: replacement} over pyarrow's `originals`."""
    o = originals

    def read_table(source: Any, columns: Any = None, memory_map: bool = False,
                   use_threads: bool = True) -> Any:
        def fall_back() -> Any:
            return o["read_table"](source, columns=columns, memory_map=memory_map,
                                   use_threads=use_threads)
        try:
            ours = _FeatherRead(columns, memory_map, use_threads)
        except Unservable as why:
            RECORD.fall_back("feather.read_table", str(why))
            with passthrough():
                return fall_back()
        table = _opened("feather.read_table", ours, source, fall_back)
        if ours.v1:
            warnings.warn(V1_READ_WARNING, DeprecationWarning, stacklevel=2)
        return table

    def read_feather(source: Any, columns: Any = None, use_threads: bool = True,
                     memory_map: bool = False, **kwargs: Any) -> Any:
        def fall_back() -> Any:
            return o["read_feather"](source, columns=columns, use_threads=use_threads,
                                     memory_map=memory_map, **kwargs)
        try:
            ours = _FeatherRead(columns, memory_map, use_threads)
        except Unservable as why:
            RECORD.fall_back("feather.read_feather", str(why))
            with passthrough():
                return fall_back()
        table = _opened("feather.read_feather", ours, source, fall_back)
        if not isinstance(table, pa.Table):
            return table                                 # pyarrow's DataFrame
        if ours.v1:
            warnings.warn(V1_READ_WARNING, DeprecationWarning, stacklevel=2)
        return table.to_pandas(use_threads=use_threads, **kwargs)

    def write_feather(df: Any, dest: Any, compression: Any = None, compression_level: Any = None,
                      chunksize: Any = None, version: int = 2) -> Any:
        def fall_back() -> Any:
            return o["write_feather"](df, dest, compression=compression,
                                      compression_level=compression_level,
                                      chunksize=chunksize, version=version)
        try:
            if version not in (1, 2):
                raise Unservable(f"version={version!r}")
            if version == 1 and (compression is not None or chunksize is not None):
                raise Unservable("compression or chunksize with version=1 (pyarrow raises)")
            if compression is not None and compression not in FEATHER_CODECS:
                raise Unservable(f"compression={compression!r} (pyarrow raises)")
            if chunksize is not None and (not isinstance(chunksize, int) or chunksize <= 0):
                raise Unservable(f"chunksize={chunksize!r}")
            if compression_level is not None and compression == "uncompressed":
                raise Unservable("compression_level without compression")
            target = _sink(dest)
            is_frame = type(df).__name__ == "DataFrame" and hasattr(df, "columns")
            if not is_frame and not isinstance(df, pa.Table):
                raise Unservable(f"data of type {type(df).__name__}")
        except Unservable as why:
            RECORD.fall_back("feather.write_feather", str(why))
            with passthrough():
                return fall_back()
        if version == 1:
            warnings.warn(V1_WRITE_WARNING, DeprecationWarning, stacklevel=2)
        table = pa.Table.from_pandas(df, preserve_index=False if version == 1 else None) \
            if is_frame else df
        if version == 1:
            return _write_feather_v1(table, target, fall_back)
        if compression is None:
            compression = "lz4" if pa.Codec.is_available("lz4_frame") else None
        codec = None if compression == "uncompressed" else compression
        # pyarrow's Feather writer unifies dictionaries and allows 64-bit lengths
        options = ai_ipc.IpcWriteOptions(compression=codec, compression_level=compression_level,
                                         unify_dictionaries=True, allow_64bit=True)
        try:
            with ai_ipc.new_file(target, table.schema, options=options) as writer:
                writer.write_table(table, max_chunksize=chunksize or FEATHER_CHUNKSIZE)
        except Exception as exc:
            if isinstance(dest, str):
                try:
                    os.remove(dest)                      # as pyarrow: a failed write leaves none
                except OSError:
                    pass
            raise pyarrow_error(exc) from exc
        RECORD.serve("feather.write_feather")
        return None

    return {"read_table": read_table, "read_feather": read_feather,
            "write_feather": write_feather}


def _write_feather_v1(table: Any, target: Any, fall_back: Callable[[], Any]) -> None:
    """Feather V1 through arrowipc.feather, or pyarrow's answer when arrowipc refuses the table (a
    type V1 cannot hold...). A refusal leaves nothing behind for pyarrow's answer to follow: a
    path is written atomically by arrowipc.feather, and a file object (a Python one or a
    pyarrow NativeFile) gets the whole file in one write once it is complete."""
    from .. import feather as ai_feather
    staged = None if isinstance(target, str) else io.BytesIO()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)     # raised once, by the caller
            ai_feather.write_feather(table, target if staged is None else staged, version=1)
    except (ai_errors.ArrowException, TypeError, ValueError) as exc:
        RECORD.fall_back("feather.write_feather", f"arrowipc refused the table "
                                                  f"({type(exc).__name__}); pyarrow's answer "
                                                  "is kept")
        with warnings.catch_warnings(), passthrough():
            warnings.simplefilter("ignore", DeprecationWarning)
            return fall_back()                           # type: ignore[no-any-return]
    if staged is not None:
        target.write(staged.getbuffer())   # outside the try: the sink's own errors are raised
    RECORD.serve("feather.write_feather")
    return None
