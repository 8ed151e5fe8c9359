"""The file formats a dataset reads and writes: the IPC file format and the IPC stream format.

`IpcFileFormat` (pyarrow's, also named "ipc", "arrow"; `FeatherFileFormat` is it under the
"feather" name and extension) and `IpcStreamFormat` ("stream", not in pyarrow: `.arrows` files,
read batch by batch). A dataset made with `format=None` sniffs each file's first bytes when it is
first read: the file magic `ARROW1` is the file format, anything else is read as a stream.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

from ..errors import ArrowInvalid
from ..ipc.format import FEATHER_V1_MAGIC, file_magic, foreign_format
from ..ipc.options import IpcWriteOptions

if TYPE_CHECKING:
    from ..types import Schema
    from .fragments import FileFragment

__all__ = ["FeatherFileFormat", "FileFormat", "IpcFileFormat", "IpcFileWriteOptions",
           "IpcStreamFormat", "as_format", "sniff_format"]

_WRITE_OPTION_NAMES = ("metadata_version", "allow_64bit", "use_legacy_format", "compression",
                       "use_threads", "emit_dictionary_deltas", "unify_dictionaries")


class FileFormat:
    """The base of the formats: a name, a default extension, and write options."""

    type_name = ""
    default_extname = ""
    is_stream = False
    # FileFragment, registered by fragments.py (which imports this module, so this one names
    # it without importing it back)
    _fragment_class: ClassVar[type[FileFragment]]

    def __init__(self) -> None:
        if type(self) is FileFormat:
            raise TypeError("FileFormat is abstract: use IpcFileFormat, FeatherFileFormat or "
                            "IpcStreamFormat")

    def make_write_options(self, **kwargs: Any) -> IpcFileWriteOptions:
        """Write options for this format: IpcWriteOptions' keywords (compression="lz4" or
        "zstd", metadata_version, use_legacy_format, ...) and `statistics` (default True: min,
        max and null counts per batch and in the footer, so later reads prune by them)."""
        return IpcFileWriteOptions(self, **kwargs)

    def make_fragment(self, file: Any, filesystem: Any = None,
                      partition_expression: Any = None, *, file_size: int | None = None
                      ) -> FileFragment:
        """A FileFragment of `file` (a path or URL, on `filesystem`; None: local) read as this
        format (pyarrow's FileFormat.make_fragment). Nothing is opened until it is read. The
        `field == value` and `is_null(field)` terms of `partition_expression` are its partition
        values, as in FileSystemDataset.from_paths. `file_size` is accepted for pyarrow's
        signature: the size is read from the file."""
        import os

        from ._exprs import expression_argument
        from .discovery import filesystem_argument, storage_of
        from .partitioning import equality_values
        if not isinstance(file, (str, os.PathLike)):
            raise TypeError(f"make_fragment takes the path of a file, got a "
                            f"{type(file).__name__} (arrowipc's fragments read files by path; "
                            f"read a buffer with arrowipc.ipc.open_file)")
        expr = expression_argument("partition_expression", partition_expression)
        # a path object goes with any filesystem here (pyarrow's FileSource takes it)
        filesystem, file = filesystem_argument(filesystem, os.fspath(file))
        storage, path = storage_of(file, filesystem)
        fragment = FileFormat._fragment_class(path, self, storage,
                                              {} if expr is None else equality_values(expr))
        fragment.given_expression = expr
        return fragment

    def inspect(self, file: Any, filesystem: Any = None) -> Schema:
        """The schema of `file` (a path or URL, on `filesystem`), read from its footer, or its
        first message for the stream format (pyarrow's FileFormat.inspect)."""
        return self.make_fragment(file, filesystem).physical_schema

    @property
    def default_fragment_scan_options(self) -> None:
        """None: the IPC formats have no scan options."""
        return None

    def equals(self, other: object) -> bool:
        """Whether `other` is the same format."""
        return type(other) is type(self)

    def __eq__(self, other: object) -> bool:
        return self.equals(other)

    __hash__ = object.__hash__

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), ())

    def __repr__(self) -> str:
        return f"<arrowipc.dataset.{type(self).__name__}>"


class IpcFileFormat(FileFormat):
    """The Arrow IPC file format (pyarrow.dataset.IpcFileFormat): random access by footer."""

    type_name = "ipc"
    default_extname = "arrow"


class FeatherFileFormat(IpcFileFormat):
    """The IPC file format under its Feather name and extension (Feather V2 is the file format)."""

    default_extname = "feather"


class IpcStreamFormat(FileFormat):
    """The Arrow IPC stream format (not in pyarrow): read front to back, batch by batch."""

    type_name = "stream"
    default_extname = "arrows"
    is_stream = True


class _SniffedFormat(FileFormat):
    """format=None: each file's format is read from its first bytes when it is opened."""

    type_name = "auto"
    default_extname = "arrow"


class FileWriteOptions:
    """The base of a format's write options (pyarrow's FileWriteOptions): made by a format's
    make_write_options(), never directly."""

    def __init__(self) -> None:
        raise TypeError(f"{type(self).__name__} is made by a format's make_write_options()")


class FragmentScanOptions:
    """The base of a format's scan options (pyarrow's FragmentScanOptions); the IPC formats
    have none of their own, so it is never made."""

    def __init__(self) -> None:
        raise TypeError(f"{type(self).__name__} cannot be made: the IPC formats have no "
                        f"fragment scan options")


class IpcFileWriteOptions(FileWriteOptions):
    """Write options of an IPC format (pyarrow's IpcFileWriteOptions): `write_options` (an
    IpcWriteOptions) and `statistics` (ours: per-batch and footer statistics, default True)."""

    def __init__(self, format: FileFormat | None = None, **kwargs: Any) -> None:
        self.format = format if format is not None else IpcFileFormat()
        self.statistics = bool(kwargs.pop("statistics", True))
        unknown = [k for k in kwargs if k not in _WRITE_OPTION_NAMES]
        if unknown:
            raise TypeError(f"make_write_options got an unexpected keyword argument "
                            f"'{unknown[0]}'")
        compression = kwargs.pop("compression", None)
        name = compression if isinstance(compression, str) else getattr(compression, "name", None)
        if isinstance(name, str) and name.lower() not in ("lz4", "lz4_frame", "zstd",
                                                          "uncompressed"):
            raise ValueError(f"Compression type {name!r} is not supported by the IPC formats "
                             f"(lz4 or zstd)")
        if isinstance(name, str) and name.lower() == "uncompressed":
            compression = None
        self.write_options = IpcWriteOptions(compression=compression, **kwargs)

    def update(self, **kwargs: Any) -> None:
        """Change options in place (pyarrow's FileWriteOptions.update)."""
        for key, value in kwargs.items():
            if key == "statistics":
                self.statistics = bool(value)
            elif key in _WRITE_OPTION_NAMES:
                setattr(self.write_options, key, value)
            else:
                raise TypeError(f"unexpected write option {key!r}")

    def __repr__(self) -> str:
        return (f"<arrowipc.dataset.IpcFileWriteOptions format={self.format.type_name} "
                f"compression={self.write_options.compression} statistics={self.statistics}>")


_NAMES: dict[str, type[FileFormat]] = {"ipc": IpcFileFormat, "arrow": IpcFileFormat,
                                       "feather": FeatherFileFormat, "stream": IpcStreamFormat,
                                       "arrows": IpcStreamFormat}


def as_format(format: Any, default: type[FileFormat] | None = _SniffedFormat) -> FileFormat:
    """A FileFormat from a format object or name ("ipc", "arrow", "feather", "stream"); None
    gives `default`'s (the sniffing format when reading)."""
    if isinstance(format, FileFormat):
        return format
    if format is None:
        if default is None:
            raise ValueError("a format is needed")
        return default()
    if isinstance(format, str):
        cls = _NAMES.get(format.lower())
        if cls is None:
            raise ValueError(f"format '{format}' is not supported: arrowipc.dataset reads and "
                             f"writes the Arrow IPC formats ('ipc', 'arrow', 'feather', 'stream')")
        return cls()
    type_name = getattr(format, "default_extname", None)
    if type_name in ("arrow", "feather"):       # pyarrow's own IpcFileFormat / FeatherFileFormat
        return FeatherFileFormat() if type_name == "feather" else IpcFileFormat()
    raise ValueError(f"format must be a FileFormat or one of 'ipc', 'arrow', 'feather', "
                     f"'stream'; got {type(format).__name__}")


def sniff_format(head: bytes, where: str) -> FileFormat:
    """The format of a file whose first bytes are `head`: the file format when it starts with
    the IPC file magic, the stream format otherwise; Feather V1 is refused."""
    if file_magic(head) is not None:
        return IpcFileFormat()
    if head[:4] == FEATHER_V1_MAGIC:
        raise ArrowInvalid(f"{where}: a Feather V1 file, which the dataset reader does not read "
                           f"(arrowipc.feather.read_table does)")
    other = foreign_format(head)
    if other is not None:
        raise ArrowInvalid(f"{where}: {other}")
    return IpcStreamFormat()
