"""Partitionings: how directory and file names carry column values (pyarrow.dataset's classes).

    DirectoryPartitioning   /2026/DE/part-0.arrow         one directory level per field
    HivePartitioning        /year=2026/country=DE/...      `name=value` segments (layout.py)
    FilenamePartitioning    /2026_DE_part-0.arrow          values before the file's base name

A Partitioning has a schema (the partition fields and their types); a PartitioningFactory
(`X.discover(...)`, or the flavor names "hive" and a list of field names given to `dataset()`)
finds the schema from the paths themselves: a field whose every value is a decimal integer
that fits int32 is int32, any other is string (pyarrow's inference), dictionary-encoded with
`infer_dictionary=True`. An explicit schema's values are parsed as its types; a value that does
not parse is an ArrowInvalid naming the directory.

Values are decoded as `segment_encoding="uri"` (the default) says: `%XX` escapes as Spark and
Hive write them, runs of escapes spelling UTF-8 as pyarrow writes them
(layout.decode_segment_value).
"""
from __future__ import annotations

import re
from urllib.parse import quote
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from .. import types as T
from ..array import Array, array
from ..errors import ArrowException, ArrowInvalid
from ._exprs import as_expression, top_field
from .layout import (DEFAULT_PARTITION_NAME, decode_segment_value, escape_path_name,
                     format_partition_segment, parse_partition_segment)

if TYPE_CHECKING:
    from ..expression import Expression

__all__ = ["DirectoryPartitioning", "FilenamePartitioning", "HivePartitioning", "Partitioning",
           "PartitioningFactory", "get_partition_keys", "partitioning"]

_INT = re.compile(r"-?[0-9]+\Z")
_SEGMENT_ENCODINGS = ("uri", "none")


def _shown(text: str) -> str:
    """`text` with the bytes of a name that is not UTF-8 (held as surrogate escapes, as os
    lists such names) shown as \\xNN, so that a message holding it can be printed."""
    try:
        return text.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
    except UnicodeEncodeError:          # a surrogate no file name holds: given as such
        return text.encode("utf-8", "backslashreplace").decode("utf-8")


def _require_utf8(texts: Mapping[str, str | None], relative_path: str, where: str | None) -> None:
    """ArrowInvalid naming `where` (the directory by default) when a partition name or value
    of `texts` (read from `relative_path`) is not UTF-8: Arrow strings and field names are
    UTF-8, and pyarrow refuses such a segment too."""
    for name, text in texts.items():
        for part in (name, text):
            if part is None or part.isascii():
                continue
            try:
                part.encode("utf-8")
            except UnicodeEncodeError:
                where = where or f"directory '{relative_path.rpartition('/')[0] or '.'}'"
                raise ArrowInvalid(f"{_shown(where)}: expected a partition segment of UTF-8 "
                                   f"text, found '{_shown(part)}'") from None


def _check_encoding(segment_encoding: str) -> str:
    if segment_encoding.lower() not in _SEGMENT_ENCODINGS:
        raise ValueError(f"Unknown segment encoding: {segment_encoding} (expected one of "
                         f"{', '.join(sorted(_SEGMENT_ENCODINGS))})")
    return segment_encoding.lower()


def as_schema(schema: Any) -> T.Schema:
    """`schema` as arrowipc's Schema (pyarrow's and other __arrow_c_schema__ exporters are
    imported); TypeError for anything else."""
    if isinstance(schema, T.Schema):
        return schema
    if hasattr(schema, "__arrow_c_schema__"):
        return T.schema(schema)
    raise TypeError(f"schema must be a Schema, not {type(schema).__name__}")


_DECIMAL_INTEGER = re.compile(r"-?[0-9]+")


def parse_partition_value(text: str, type_: T.DataType, field_name: str, where: str) -> Any:
    """The Python value of a partition segment's text as `type_`; ArrowInvalid naming `where`."""
    value_type = type_.value_type if isinstance(type_, T.DictionaryType) else type_
    if value_type in (T.string(), T.large_string()):
        return text
    if isinstance(value_type, T.PrimitiveType) and value_type.is_integer \
            and _DECIMAL_INTEGER.fullmatch(text) \
            and (value_type.is_signed or not text.startswith("-")):
        # plain decimal digits (the common hive value) in the type's range: what the cast
        # gives, without making arrays; anything else goes through the cast and its errors
        value = int(text)
        bits = value_type.bit_width
        lo, hi = (-(1 << (bits - 1)), (1 << (bits - 1)) - 1) if value_type.is_signed \
            else (0, (1 << bits) - 1)
        if lo <= value <= hi:
            return value
    try:
        parsed = array([text]).cast(value_type)
    except Exception as e:
        raise ArrowInvalid(f"error parsing '{text}' as scalar of type {value_type} for partition "
                           f"field '{field_name}' of {where}") from e
    return parsed.to_pylist()[0]


def value_text(value: Any, type_: T.DataType) -> str:
    """The text a partition value is written as (pyarrow's cast to string: 2026-01-02, true)."""
    if isinstance(value, str):
        return value
    value_type = type_.value_type if isinstance(type_, T.DictionaryType) else type_
    text = array([value], value_type).cast(T.string()).to_pylist()[0]
    return str(text)


class Partitioning:
    """The base of the partitionings: a schema of partition fields and their dictionaries."""

    _flavor = ""

    def __init__(self, schema: T.Schema,
                 dictionaries: Mapping[str, Any] | Sequence[Any] | None = None,
                 segment_encoding: str = "uri") -> None:
        self._schema = as_schema(schema)
        self._segment_encoding = _check_encoding(segment_encoding)
        self._dictionaries: list[Array | None] = _dictionary_list(schema, dictionaries)

    @property
    def schema(self) -> T.Schema:
        """The partition fields."""
        return self._schema

    @property
    def dictionaries(self) -> list[Array | None]:
        """Per field, the dictionary of its values (dictionary-typed fields), else None."""
        return list(self._dictionaries)

    @property
    def segment_encoding(self) -> str:
        """How segments are decoded: "uri" (percent escapes) or "none"."""
        return self._segment_encoding

    def _decode(self, text: str) -> str:
        return decode_segment_value(text) if self._segment_encoding == "uri" else text

    def _encode(self, text: str) -> str:
        return escape_path_name(text) if self._segment_encoding == "uri" else text

    # -- reading ----------------------------------------------------------------------------------
    def _texts(self, relative_path: str) -> dict[str, str | None]:
        """Field name -> decoded text (None: null) of the segments of a path relative to the
        partition base directory, its file name last."""
        raise NotImplementedError

    def values_of(self, relative_path: str, where: str | None = None) -> dict[str, Any]:
        """Field name -> Python value (None: null) of the partition fields `relative_path`
        (relative to the partition base directory, file name last) gives; fields it does not
        give are left out. A value that does not parse as its field's type is an ArrowInvalid
        naming `where` (the directory, by default)."""
        out: dict[str, Any] = {}
        # a dataset's files share few distinct values: each (field, text) is parsed once
        parsed: dict[tuple[str, str], Any] = self.__dict__.setdefault("_parsed_values", {})
        texts = self._texts(relative_path)
        _require_utf8(texts, relative_path, where)
        for name, text in texts.items():
            if text is None:
                out[name] = None
                continue
            try:
                out[name] = parsed[(name, text)]
            except KeyError:
                where = where or f"directory '{relative_path.rpartition('/')[0] or '.'}'"
                value = parse_partition_value(text, self._schema.field(name).type, name, where)
                out[name] = parsed[(name, text)] = value
        return out

    def parse(self, path: str) -> Expression:
        """The partition expression of `path` (pyarrow's Partitioning.parse)."""
        return values_expression(self.values_of(path.lstrip("/")),
                                 {f.name: f.type for f in self._schema})

    # -- writing ----------------------------------------------------------------------------------
    def format_values(self, values: Sequence[Any]) -> tuple[str, str]:
        """(directory, file name prefix) for one value per field of the schema, in order."""
        raise NotImplementedError

    def format(self, expr: Any) -> tuple[str, str]:
        """pyarrow's Partitioning.format: the (directory, file name prefix) of the partition
        values an expression fixes (its `field == value` and `is_null(field)` terms, as
        get_partition_keys finds them), spelled as pyarrow spells them. Hive's values are
        percent-escaped here, as pyarrow's; write_dataset writes them as Spark does
        (docs/datasets.md)."""
        keys = get_partition_keys(expr)
        texts = {f.name: None if keys[f.name] is None else value_text(keys[f.name], f.type)
                 for f in self._schema if f.name in keys}
        return self._formatted(texts)

    def _formatted(self, texts: Mapping[str, str | None]) -> tuple[str, str]:
        raise NotImplementedError

    def _leading_texts(self, texts: Mapping[str, str | None]) -> list[str]:
        """The texts of the schema's leading fields that have one: a field without one
        followed by a field with one is an ArrowInvalid (a directory or file name cannot
        skip a level)."""
        out: list[str] = []
        missing: str | None = None
        for f in self._schema:
            text = texts.get(f.name)
            if text is None:
                missing = missing or f.name
            elif missing is not None:
                raise ArrowInvalid(f"No partition key for {missing} but a key was provided "
                                   f"subsequently for {f.name}.")
            else:
                out.append(text)
        return out

    def __eq__(self, other: object) -> bool:
        return (type(other) is type(self) and isinstance(other, Partitioning)
                and other._schema.equals(self._schema)
                and other._segment_encoding == self._segment_encoding
                and getattr(other, "_null_fallback", None) == getattr(self, "_null_fallback",
                                                                      None)
                and len(other._dictionaries) == len(self._dictionaries)
                and all((a is None and b is None) or (a is not None and b is not None
                                                      and a.equals(b))
                        for a, b in zip(other._dictionaries, self._dictionaries)))

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"<arrowipc.dataset.{type(self).__name__} schema={self._schema.names}>"

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self._schema, self._dictionaries, self._segment_encoding))


def _dictionary_list(schema: T.Schema, dictionaries: Mapping[str, Any] | Sequence[Any] | None
                     ) -> list[Array | None]:
    if dictionaries is None or isinstance(dictionaries, str):
        return [None] * len(schema)
    if isinstance(dictionaries, Mapping):
        got = [dictionaries.get(f.name) for f in schema]
    else:
        got = list(dictionaries)
    return [None if d is None else (d if isinstance(d, Array) else array(d)) for d in got]


def values_expression(values: Mapping[str, Any],
                      types: Mapping[str, T.DataType] | None = None) -> Expression:
    """`field == value` (`is_null(field)` for None) for each pair, joined by `and`; the literal
    true for no pairs. A value whose field has a type in `types` is a literal of that type (of
    its values' type for a dictionary), as pyarrow's partition expressions are: `q == 1` of
    an int32 field equals `field("q") == pa.scalar(1, pa.int32())`."""
    from ..expression import field, scalar
    out: Expression | None = None
    for name, value in values.items():
        if value is None:
            term = field(name).is_null()
        else:
            type_ = (types or {}).get(name)
            if isinstance(type_, T.DictionaryType):
                type_ = type_.value_type
            term = field(name) == scalar(value if type_ is None else array([value], type_)[0])
        out = term if out is None else out & term
    return scalar(True) if out is None else out


def _conjuncts(expr: Expression) -> Iterable[Expression]:
    """The terms of an `and` of terms (`expr` itself when it is no `and`)."""
    if expr._kind == "call" and expr._function in ("and_kleene", "and"):
        for arg in expr._args:
            yield from _conjuncts(arg)
    else:
        yield expr


def _null_test_of(term: Expression) -> str | None:
    """The top-level field `term` tests for null (`is_null(field)`), else None."""
    if term._kind == "call" and term._function == "is_null" and len(term._args) == 1 \
            and not term._options.get("nan_is_null", False):
        return top_field(term._args[0])
    return None


def _fixed_values(expr: Expression, either_way: bool, null_literals: bool) -> dict[str, Any]:
    """{name: value} for each `field == literal` term of an `and` of terms (`either_way`: or
    `literal == field`; `null_literals`: a null literal fixes None, else nothing), and
    {name: None} for each `is_null(field)`, of top-level fields."""
    out: dict[str, Any] = {}
    for term in _conjuncts(expr):
        name = _null_test_of(term)
        if name is not None:
            out[name] = None
        elif term._kind == "call" and term._function == "equal" and len(term._args) == 2:
            left, right = term._args
            if either_way and left._kind == "literal":
                left, right = right, left
            name = top_field(left)
            if name is not None and right._kind == "literal":
                value = None if right._literal is None else right._literal.as_py()
                if value is not None or null_literals:
                    out[name] = value
    return out


def equality_values(expr: Expression) -> dict[str, Any]:
    """The values an `and` of terms fixes: {name: value} for each `field == literal` (either
    way round, the literal not null) and {name: None} for each `is_null(field)`, of top-level
    fields; other terms fix nothing (values_expression's inverse)."""
    return _fixed_values(expr, either_way=True, null_literals=False)


def get_partition_keys(partition_expression: Any) -> dict[str, Any]:
    """pyarrow.dataset.get_partition_keys: the partition keys an expression (a fragment's
    `partition_expression`, ours or pyarrow's) fixes, {name: value}: each `field == literal`
    (a null literal: None) and each `is_null(field)` (None) of an `and` of terms; other terms
    are ignored."""
    expr = as_expression(partition_expression)
    if expr is None:
        raise TypeError("get_partition_keys() takes an Expression, got None")
    return _fixed_values(expr, either_way=False, null_literals=True)


class DirectoryPartitioning(Partitioning):
    """One directory level per field, in the schema's order: /2026/DE/."""

    _flavor = "directory"

    def _texts(self, relative_path: str) -> dict[str, str | None]:
        dirs = relative_path.split("/")[:-1]
        return {f.name: self._decode(text) for f, text in zip(self._schema, dirs)}

    def format_values(self, values: Sequence[Any]) -> tuple[str, str]:
        texts = {f.name: None if v is None else self._encode(value_text(v, f.type))
                 for f, v in zip(self._schema, values)}
        return "/".join(self._leading_texts(texts)), ""

    def _formatted(self, texts: Mapping[str, str | None]) -> tuple[str, str]:
        return "/".join(self._leading_texts(texts)), ""

    @staticmethod
    def discover(field_names: Sequence[str] | None = None, infer_dictionary: bool = False,
                 max_partition_dictionary_size: int = 0, schema: T.Schema | None = None,
                 segment_encoding: str = "uri") -> PartitioningFactory:
        """A factory that finds the fields' types from the directory names."""
        if field_names is None and schema is None:
            raise ValueError("Neither field_names nor schema was passed; cannot infer field_names")
        return PartitioningFactory("directory", field_names, infer_dictionary, schema,
                                   segment_encoding)


class HivePartitioning(Partitioning):
    """`name=value` directory levels, in any order: /year=2026/country=DE/."""

    _flavor = "hive"

    def __init__(self, schema: T.Schema,
                 dictionaries: Mapping[str, Any] | Sequence[Any] | None = None,
                 null_fallback: str = DEFAULT_PARTITION_NAME, segment_encoding: str = "uri"
                 ) -> None:
        super().__init__(schema, dictionaries, segment_encoding)
        self._null_fallback = null_fallback

    @property
    def null_fallback(self) -> str:
        """The directory value that stands for null (and is written for null and "")."""
        return self._null_fallback

    def _texts(self, relative_path: str) -> dict[str, str | None]:
        out: dict[str, str | None] = {}
        names = set(self._schema.names)
        for segment in relative_path.split("/")[:-1]:
            if self._segment_encoding == "uri":
                parsed = parse_partition_segment(segment)
                if parsed is None:
                    continue
                name, text = parsed
                if text is not None and segment.partition("=")[2] == self._null_fallback:
                    text = None
            else:
                name, eq, raw = segment.partition("=")
                if not eq or not name:
                    continue
                text = None if raw in (self._null_fallback, DEFAULT_PARTITION_NAME) else raw
            if name in names:
                out.setdefault(name, text)      # a key repeated deeper: the first wins (pyarrow)
        return out

    def format_values(self, values: Sequence[Any]) -> tuple[str, str]:
        segments = []
        for f, v in zip(self._schema, values):
            text = None if v is None else value_text(v, f.type)
            if text is None or text == "":
                segments.append(f"{self._encode(f.name)}={self._null_fallback}")
            elif self._segment_encoding == "uri":
                segments.append(format_partition_segment(f.name, text))
            else:
                segments.append(f"{f.name}={text}")
        return "/".join(segments), ""

    def _formatted(self, texts: Mapping[str, str | None]) -> tuple[str, str]:
        # pyarrow escapes every byte but RFC 3986's unreserved characters
        return "/".join(f"{name}={self._null_fallback if text is None else quote(text, safe='')}"
                        for name, text in texts.items()), ""

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self._schema, self._dictionaries, self._null_fallback,
                             self._segment_encoding))

    @staticmethod
    def discover(infer_dictionary: bool = False, max_partition_dictionary_size: int = 0,
                 null_fallback: str = DEFAULT_PARTITION_NAME, schema: T.Schema | None = None,
                 segment_encoding: str = "uri") -> PartitioningFactory:
        """A factory that finds the field names and types from `name=value` directories."""
        return PartitioningFactory("hive", None, infer_dictionary, schema, segment_encoding,
                                   null_fallback)


class FilenamePartitioning(Partitioning):
    """Values at the start of the file name, each followed by `_`: /2026_DE_part-0.arrow."""

    _flavor = "filename"

    def _texts(self, relative_path: str) -> dict[str, str | None]:
        parts = relative_path.rsplit("/", 1)[-1].split("_")
        if len(parts) <= len(self._schema):
            parts = parts[:-1]          # the last part is the base name, not a value
        return {f.name: self._decode(text) for f, text in zip(self._schema, parts)}

    def format_values(self, values: Sequence[Any]) -> tuple[str, str]:
        texts = []
        for f, v in zip(self._schema, values):
            if v is None:
                raise ArrowInvalid(f"FilenamePartitioning cannot write a null value of "
                                   f"partition field '{f.name}'")
            texts.append(self._encode(value_text(v, f.type)))
        return "", "".join(t + "_" for t in texts)

    def _formatted(self, texts: Mapping[str, str | None]) -> tuple[str, str]:
        return "", "_".join(self._leading_texts(texts)) + "_"

    @staticmethod
    def discover(field_names: Sequence[str] | None = None, infer_dictionary: bool = False,
                 schema: T.Schema | None = None, segment_encoding: str = "uri"
                 ) -> PartitioningFactory:
        """A factory that finds the fields' types from the file names."""
        if field_names is None and schema is None:
            raise ValueError("Neither field_names nor schema was passed; cannot infer field_names")
        return PartitioningFactory("filename", field_names, infer_dictionary, schema,
                                   segment_encoding)


_CLASSES: dict[str, type[Partitioning]] = {"directory": DirectoryPartitioning,
                                          "hive": HivePartitioning,
                                          "filename": FilenamePartitioning}


class PartitioningFactory:
    """Finds a Partitioning's schema from the paths of a dataset (pyarrow's PartitioningFactory)."""

    def __init__(self, flavor: str, field_names: Sequence[str] | None, infer_dictionary: bool,
                 schema: T.Schema | None, segment_encoding: str = "uri",
                 null_fallback: str = DEFAULT_PARTITION_NAME) -> None:
        self.flavor = flavor
        self.field_names = None if field_names is None else list(field_names)
        self.infer_dictionary = bool(infer_dictionary)
        self.schema = None if schema is None else as_schema(schema)
        self.segment_encoding = _check_encoding(segment_encoding)
        self.null_fallback = null_fallback

    @property
    def type_name(self) -> str:
        """The flavor's name, as pyarrow's factories give it."""
        return self.flavor

    def _make(self, schema: T.Schema, dictionaries: list[Array | None] | None = None
              ) -> Partitioning:
        if self.flavor == "hive":
            return HivePartitioning(schema, dictionaries, self.null_fallback,
                                    self.segment_encoding)
        return _CLASSES[self.flavor](schema, dictionaries, self.segment_encoding)

    def finish(self, relative_paths: Iterable[str]) -> Partitioning:
        """The Partitioning of these paths (relative to the partition base directory), with
        pyarrow's dictionaries: per field, its distinct values in the order of the paths,
        nulls left out (dictionary-typed fields index into them)."""
        if self.schema is not None:
            return self._make(self.schema, self._dictionaries_of(list(relative_paths)))
        names = list(self.field_names or [])
        probe = self._make(T.schema([T.field(n, T.string()) for n in names]))
        found: dict[str, list[str | None]] = {n: [] for n in names}
        examined = False
        for path in relative_paths:
            examined = True
            texts = self._texts_of(probe, path)
            _require_utf8(texts, path, None)
            for name, text in texts.items():
                found.setdefault(name, []).append(text)
        fields: list[T.Field] = []
        dictionaries: list[Array | None] = []
        for name, seen in found.items():
            present = [t for t in seen if t is not None]
            # all null, or paths without the segment: pyarrow's error (with no path at all, as
            # for files named one by one, the field is a string of nulls)
            if not present and (seen or examined):
                raise ArrowInvalid(f"No non-null segments were available for field '{name}'; "
                                   f"couldn't infer type")
            is_int = bool(present) and all(_INT.match(t) and -2**31 <= int(t) < 2**31
                                           for t in present)
            value_type = T.int32() if is_int else T.string()
            uniq = list(dict.fromkeys(int(t) if is_int else t for t in present))
            fields.append(T.field(name, T.dictionary(T.int32(), value_type)
                                  if self.infer_dictionary else value_type))
            dictionaries.append(array(uniq, value_type))
        return self._make(T.schema(fields), dictionaries)

    def _texts_of(self, probe: Partitioning, path: str) -> dict[str, str | None]:
        return _hive_texts(path, probe) if self.flavor == "hive" else probe._texts(path)

    def _dictionaries_of(self, relative_paths: list[str]) -> list[Array | None]:
        """Per field of the schema given, its distinct values in these paths, parsed as its
        type. A value that does not parse is pyarrow's ArrowInvalid ("Could not cast segments
        for partition field ..."), naming the path; a field whose values make no array (text
        that is not UTF-8) has None, and the dataset's reading of its path raises."""
        assert self.schema is not None
        probe = self._make(self.schema)
        # field -> text -> the first path giving it
        found: dict[str, dict[str, str]] = {f.name: {} for f in self.schema}
        for path in relative_paths:
            for name, text in self._texts_of(probe, path).items():
                if text is not None and name in found:
                    found[name].setdefault(text, path)
        out: list[Array | None] = []
        for f in self.schema:
            value_type = f.type.value_type if isinstance(f.type, T.DictionaryType) else f.type
            values = []
            for text, path in found[f.name].items():
                try:
                    values.append(parse_partition_value(text, f.type, f.name, path))
                except ArrowInvalid:
                    raise ArrowInvalid(
                        f"Could not cast segments for partition field {f.name} to requested "
                        f"type {f.type} because: Invalid: Failed to parse string: '{text}' as "
                        f"a scalar of type {value_type} (path '{_shown(path)}' below the "
                        f"partition base directory)") from None
            try:
                out.append(array(values, value_type))
            except (ArrowException, ValueError, TypeError):
                out.append(None)
        return out

    def __repr__(self) -> str:
        return f"<arrowipc.dataset.PartitioningFactory flavor={self.flavor!r}>"


def _hive_texts(path: str, probe: Partitioning) -> dict[str, str | None]:
    """Every `name=value` directory of a path, whatever its name (hive discovery)."""
    assert isinstance(probe, HivePartitioning)
    out: dict[str, str | None] = {}
    for segment in path.split("/")[:-1]:
        name, eq, raw = segment.partition("=")
        if not eq or not name:
            continue
        if probe.segment_encoding == "uri":
            parsed = parse_partition_segment(segment)
            assert parsed is not None
            name, text = parsed
        else:
            text = raw
        if raw in (probe.null_fallback, DEFAULT_PARTITION_NAME):
            text = None
        out.setdefault(name, text)              # a key repeated deeper: the first wins (pyarrow)
    return out


def partitioning(schema: T.Schema | None = None, field_names: Sequence[str] | None = None,
                 flavor: str | None = None, dictionaries: Mapping[str, Any] | str | None = None
                 ) -> Partitioning | PartitioningFactory:
    """A Partitioning (given a schema) or a PartitioningFactory (given field names, or the hive
    flavor alone), as pyarrow.dataset.partitioning builds them."""
    if schema is not None and not isinstance(schema, T.Schema) \
            and not hasattr(schema, "__arrow_c_schema__"):
        raise ValueError(f"Expected a Schema for the partitioning schema, got "
                         f"{type(schema).__name__}")
    if flavor is None or flavor == "directory":
        if schema is not None:
            if field_names is not None:
                raise ValueError("Cannot specify both 'schema' and 'field_names'")
            if dictionaries == "infer":
                return DirectoryPartitioning.discover(schema=schema)
            return DirectoryPartitioning(schema, dictionaries)
        if field_names is not None:
            if isinstance(field_names, list):
                return DirectoryPartitioning.discover(field_names)
            raise ValueError(f"Expected list of field names, got {type(field_names)}")
        raise ValueError("For the default directory flavor, need to specify a Schema or a "
                         "list of field names")
    if flavor == "filename":
        if schema is not None:
            if field_names is not None:
                raise ValueError("Cannot specify both 'schema' and 'field_names'")
            if dictionaries == "infer":
                return FilenamePartitioning.discover(schema=schema)
            return FilenamePartitioning(schema, dictionaries)
        if field_names is not None:
            if isinstance(field_names, list):
                return FilenamePartitioning.discover(field_names)
            raise ValueError(f"Expected list of field names, got {type(field_names)}")
        raise ValueError("For the filename flavor, need to specify a Schema or a list of field "
                         "names")
    if flavor == "hive":
        if field_names is not None:
            raise ValueError("Cannot specify 'field_names' for flavor 'hive'")
        if schema is not None:
            if dictionaries == "infer":
                return HivePartitioning.discover(schema=schema)
            return HivePartitioning(schema, dictionaries)
        return HivePartitioning.discover()
    raise ValueError("Unsupported flavor")
