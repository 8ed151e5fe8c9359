"""Expressions: a small tree of field references, literals and calls, as pyarrow.compute's
Expression, evaluated by the kernels of arrowipc/data/compute.py over ArrayData.

    field("x") > 3, (field("a") == "DE") & ~field("b").is_null(), field("s", "t").isin([1, 2])

An expression prints as pyarrow prints it, binds known field values (partition values) and folds
constants with Kleene logic, and tells from batch or file statistics (ipc/statistics.py) whether
a batch might hold a matching row. pyarrow Expression objects are converted from their
serialized form (an IPC file whose schema metadata lists the tree in pre-order), read with
arrowipc's own reader: pyarrow is never imported.
"""
from __future__ import annotations

import io
import math
import struct
from datetime import date, datetime, time, timedelta, timezone
from decimal import Decimal

from ._core.arraydata import ArrayData
from .data import compute as K
from .data import string_predicates as SP
from .errors import ArrowInvalid, ArrowNotImplementedError, ArrowTypeError
from . import types as T

TYPE_CHECKING = False               # typing itself is not imported at run time
if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping
    from typing import Any

    from .array import Array, ChunkedArray
    from .table import RecordBatch, Table

__all__ = ["Expression", "field", "scalar", "to_expression"]

_INFIX = {"equal": "==", "not_equal": "!=", "less": "<", "less_equal": "<=", "greater": ">",
          "greater_equal": ">=", "and_kleene": "and", "or_kleene": "or"}
_FLIPPED = {"equal": "equal", "not_equal": "not_equal", "less": "greater",
            "less_equal": "greater_equal", "greater": "less", "greater_equal": "less_equal"}
_NULL_MATCHING = ("MATCH", "SKIP", "EMIT_NULL", "INCONCLUSIVE")
_CAST_FLAGS = ("allow_int_overflow", "allow_time_truncate", "allow_time_overflow",
               "allow_decimal_truncate", "allow_float_truncate", "allow_invalid_utf8")


class Expression:
    """A field reference, a literal, or a call of a compute function on expressions."""
    __slots__ = ("_kind", "_path", "_literal", "_function", "_args", "_options")
    _kind: str                          # "field", "literal" or "call"
    _path: tuple[Any, ...]              # a field's names (or indices), outermost first
    _literal: K.ScalarData | None       # a literal's value
    _function: str                      # a call's compute function
    _args: tuple[Expression, ...]       # a call's arguments
    _options: dict[str, Any]            # a call's function options

    def __init__(self) -> None:
        raise TypeError("Expression is an abstract class thus cannot be initialized.")

    @classmethod
    def _make(cls, kind: str, path: tuple[Any, ...] = (), literal: K.ScalarData | None = None,
              function: str = "", args: tuple[Expression, ...] = (),
              options: dict[str, Any] | None = None) -> Expression:
        e = object.__new__(cls)
        e._kind, e._path, e._literal = kind, path, literal
        e._function, e._args, e._options = function, args, options or {}
        return e

    @classmethod
    def _call(cls, function: str, args: Iterable[Any], options: dict[str, Any] | None = None
              ) -> Expression:
        return cls._make("call", function=function, args=tuple(_as_expression(a) for a in args),
                         options=options)

    # -- operators --------------------------------------------------------------------------------
    def __eq__(self, other: object) -> Expression:  # type: ignore[override]
        return Expression._call("equal", (self, other))

    def __ne__(self, other: object) -> Expression:  # type: ignore[override]
        return Expression._call("not_equal", (self, other))

    def __lt__(self, other: Any) -> Expression:
        return Expression._call("less", (self, other))

    def __le__(self, other: Any) -> Expression:
        return Expression._call("less_equal", (self, other))

    def __gt__(self, other: Any) -> Expression:
        return Expression._call("greater", (self, other))

    def __ge__(self, other: Any) -> Expression:
        return Expression._call("greater_equal", (self, other))

    def __and__(self, other: Any) -> Expression:
        return Expression._call("and_kleene", (self, other))

    def __or__(self, other: Any) -> Expression:
        return Expression._call("or_kleene", (self, other))

    def __invert__(self) -> Expression:
        return Expression._call("invert", (self,))

    def __add__(self, other: Any) -> Expression:
        return Expression._call("add_checked", (self, other))

    def __sub__(self, other: Any) -> Expression:
        return Expression._call("subtract_checked", (self, other))

    def __mul__(self, other: Any) -> Expression:
        return Expression._call("multiply_checked", (self, other))

    def __truediv__(self, other: Any) -> Expression:
        return Expression._call("divide_checked", (self, other))

    def __bool__(self) -> bool:
        raise ValueError("An Expression cannot be evaluated to python True or False. If you are "
                         "using the 'and', 'or' or 'not' operators, use '&', '|' or '~' instead.")

    __hash__ = None  # type: ignore[assignment]  # == builds an expression, as in pyarrow

    # -- methods as pyarrow's ------------------------------------------------------------------------
    def isin(self, values: Any) -> Expression:
        """Whether the value is in `values` (a null matches a null in the set)."""
        from .array import Array, ChunkedArray, argument_data
        if isinstance(values, (Array, ChunkedArray)):
            data = argument_data(values)
        else:
            data = _value_set_data(values)
        return Expression._call("is_in", (self,), {"value_set": data,
                                                   "null_matching_behavior": "MATCH"})

    def is_null(self, nan_is_null: bool = False) -> Expression:
        """Whether the value is null (or NaN, with nan_is_null)."""
        return Expression._call("is_null", (self,), {"nan_is_null": bool(nan_is_null)})

    def is_nan(self) -> Expression:
        """Whether the value is NaN."""
        return Expression._call("is_nan", (self,))

    def is_valid(self) -> Expression:
        """Whether the value is not null."""
        return Expression._call("is_valid", (self,))

    def cast(self, target_type: Any = None, safe: bool | None = None, options: Any = None
             ) -> Expression:
        """The value cast to `target_type` (safe: refuse lossy casts)."""
        if target_type is None and options is not None:
            target_type = getattr(options, "target_type", None)
            safe = not getattr(options, "allow_int_overflow", False)
        if target_type is None:
            raise TypeError("DataType expected, got <class 'NoneType'>")
        allow = not (True if safe is None else safe)
        to = T.ensure_type(target_type) if isinstance(target_type, (str, T.DataType)) \
            else _our_type(target_type)
        opts: dict[str, Any] = {"to_type": to}
        opts.update({k: allow for k in _CAST_FLAGS})
        return Expression._call("cast", (self,), opts)

    def equals(self, other: object) -> bool:
        """Whether `other` is the same expression (an arrowipc or a pyarrow Expression)."""
        if isinstance(other, Expression):
            other_expr = other
        elif _is_pyarrow_expression(other):
            other_expr = from_pyarrow(other)
        else:
            raise TypeError(f"Argument 'other' has incorrect type (expected Expression, got "
                            f"{type(other).__name__})")
        return str(self) == str(other_expr) and _same_types(self, other_expr)

    # -- inspection --------------------------------------------------------------------------------
    def is_literal(self) -> bool:
        """Whether the expression is a literal (a value, no field)."""
        return self._kind == "literal"

    def literal(self) -> Any:
        """The Python value of a literal expression (None for a null literal)."""
        if self._literal is None:
            raise ArrowTypeError(f"expression {self} is not a literal")
        return self._literal.as_py()

    def field_names(self) -> frozenset[str]:
        """The top-level column names the expression references."""
        if self._kind == "field":
            return frozenset([self._path[0]]) if isinstance(self._path[0], str) else frozenset()
        out: frozenset[str] = frozenset()
        for a in self._args:
            out |= a.field_names()
        return out

    # -- printing as pyarrow -------------------------------------------------------------------------
    def __str__(self) -> str:
        if self._kind == "field":
            return _field_text(self._path)
        if self._kind == "literal":
            assert self._literal is not None
            return _literal_text(self._literal)
        f = self._function
        if f in _INFIX and len(self._args) == 2:
            return f"({self._args[0]} {_INFIX[f]} {self._args[1]})"
        parts = [str(a) for a in self._args]
        opts = self._options_text()
        if opts:
            parts.append(opts)
        return f"{f}({', '.join(parts)})"

    def __repr__(self) -> str:
        return f"<arrowipc.compute.Expression {self}>"

    def _options_text(self) -> str:
        o, f = self._options, self._function
        if f == "is_in":
            vs = o["value_set"]
            return (f"{{value_set={_array_text(vs)}, "
                    f"null_matching_behavior={o['null_matching_behavior']}}}")
        if f == "is_null":
            return f"{{nan_is_null={'true' if o['nan_is_null'] else 'false'}}}"
        if f == "cast":
            flags = ", ".join(f"{k}={'true' if o[k] else 'false'}" for k in _CAST_FLAGS)
            return f"{{to_type={o['to_type']}, {flags}}}"
        if f in SP.STRING_PREDICATES:
            return (f"{{pattern=\"{o['pattern']}\", "
                    f"ignore_case={'true' if o.get('ignore_case') else 'false'}}}")
        return ""

    # -- evaluation ----------------------------------------------------------------------------------
    def evaluate(self, batch: RecordBatch | Table) -> Array | ChunkedArray:
        """The value of the expression on each row of a RecordBatch (an Array) or a Table (a
        ChunkedArray, one chunk per batch)."""
        from .array import ChunkedArray, make_array
        from .table import Table
        if isinstance(batch, Table):
            chunks = [self.evaluate(b) for b in batch.to_batches()]
            if not chunks:
                t = self._result_type(batch.schema)
                return ChunkedArray([], type=t)
            return ChunkedArray(chunks)
        cols = {f.name: c.data for f, c in zip(batch.schema, batch.columns)}
        return make_array(self.evaluate_data(cols, batch.num_rows, _schema_text(batch.schema)))

    def _result_type(self, schema: Any) -> Any:
        from .table import RecordBatch
        return self.evaluate(RecordBatch.from_pylist([], schema=schema)).type

    def evaluate_data(self, columns: Mapping[str, ArrayData], num_rows: int,
                      schema_text: str | None = None) -> ArrayData:
        """The value of the expression on `num_rows` rows whose columns are `columns`."""
        out = self._eval(columns, num_rows, schema_text)
        if isinstance(out, K.ScalarData):
            return K.broadcast(out, num_rows)
        return out

    def _eval(self, columns: Mapping[str, ArrayData], num_rows: int, schema_text: str | None
              ) -> K.Datum:
        if self._kind == "literal":
            assert self._literal is not None
            return self._literal
        if self._kind == "field":
            return _resolve(self._path, columns, schema_text)
        args = [a._eval(columns, num_rows, schema_text) for a in self._args]
        f = self._function
        if (f in K.COMPARISONS or f.removesuffix("_checked") in K.ARITHMETIC) and \
                any(a._kind != "literal" for a in self._args):
            args = [_narrowed(d) if a._kind == "literal" else d for a, d in zip(self._args, args)]
        return _apply(f, args, self._options)

    # -- binding and pruning ---------------------------------------------------------------------------
    def bind(self, values: Mapping[str, Any]) -> Expression:
        """The expression with the fields of `values` (name -> value, None for null) replaced by
        literals and constant parts folded (Kleene logic: `false and x` is false)."""
        if self._kind == "field":
            name = self._path[0]
            if len(self._path) == 1 and isinstance(name, str) and name in values:
                return scalar(values[name])
            return self
        if self._kind == "literal":
            return self
        args = tuple(a.bind(values) for a in self._args)
        return _fold(Expression._make("call", function=self._function, args=args,
                                      options=self._options))

    def might_match(self, stats: dict[str, Any] | None, schema: Any = None) -> bool:
        """False only when the statistics (ipc/statistics.py's document for a batch or a file)
        prove that no row satisfies the expression. With `schema`, temporal literals are
        compared in the columns' units; without it, they are not used."""
        if stats is None:
            return True
        if self._kind == "literal":
            v = self._literal.as_py() if self._literal is not None else None
            return v is not False and v is not None
        if self._kind == "field":
            return True
        f, args = self._function, self._args
        if f in ("and_kleene", "and"):
            return all(a.might_match(stats, schema) for a in args)
        if f in ("or_kleene", "or"):
            return any(a.might_match(stats, schema) for a in args)
        from .ipc.statistics import might_match
        if f in _FLIPPED and len(args) == 2:
            left, right = args
            if right._kind == "field" and left._kind == "literal":
                left, right, f = right, left, _FLIPPED[f]
            if left._kind != "field" or right._kind != "literal" or len(left._path) != 1 \
                    or f == "not_equal":
                return True
            assert right._literal is not None
            name = left._path[0]
            if right._literal.as_py() is None:
                return False            # a comparison with null is null: no row is kept
            ok, value, col = _stats_value(stats, name, right._literal, schema)
            if not ok:
                return True
            return might_match(col, name, K.COMPARISONS[f], value)
        if f in ("is_null", "is_valid") and args[0]._kind == "field" and len(args[0]._path) == 1:
            name = args[0]._path[0]
            if f == "is_null" and self._options.get("nan_is_null"):
                return True
            return might_match(stats, name, "is_null" if f == "is_null" else "not_null")
        if f == "is_in" and args[0]._kind == "field" and len(args[0]._path) == 1:
            name = args[0]._path[0]
            members = _pylist(self._options["value_set"])
            if any(m is None for m in members) and might_match(stats, name, "is_null"):
                return True
            converted = []
            for m in members:
                if m is None:
                    continue
                lit = K.scalar_data(m, self._options["value_set"].type)
                ok, value, col = _stats_value(stats, name, lit, schema)
                if not ok:
                    return True
                converted.append(value)
            return might_match(col if converted else stats, name, "in", converted)
        return True

    def __reduce__(self) -> tuple[Any, ...]:
        return (_rebuild, (self._kind, self._path, self._literal_py(), self._function,
                           self._args, _picklable_options(self._options)))

    def _literal_py(self) -> Any:
        if self._literal is None:
            return None
        from .array import make_array
        return make_array(self._literal.data)


def _rebuild(kind: str, path: tuple[Any, ...], literal: Any, function: str,
             args: tuple[Expression, ...], options: dict[str, Any]) -> Expression:
    lit = K.ScalarData(literal.data) if literal is not None else None
    opts = dict(options)
    if "value_set" in opts:
        opts["value_set"] = opts["value_set"].data
    return Expression._make(kind, path, lit, function, args, opts)


def _picklable_options(options: dict[str, Any]) -> dict[str, Any]:
    if "value_set" not in options:
        return options
    from .array import make_array
    return dict(options, value_set=make_array(options["value_set"]))


# -- building ----------------------------------------------------------------------------------------

def field(*name_or_index: Any) -> Expression:
    """A reference to a field: field("a"), a nested one field("a", "b") or field(("a", "b")),
    or one by position field(1)."""
    if len(name_or_index) == 1 and isinstance(name_or_index[0], tuple):
        name_or_index = name_or_index[0]
    if not name_or_index:
        raise ValueError("nested field reference should be non-empty")
    for n in name_or_index:
        if not isinstance(n, (str, int)) or isinstance(n, bool):
            raise TypeError("field reference should be str, multiple str, tuple or integer, "
                            f"got {type(n)}")
    return Expression._make("field", path=tuple(name_or_index))


def scalar(value: Any) -> Expression:
    """A literal: a Python value (its type inferred as pyarrow infers it) or a Scalar."""
    return Expression._make("literal", literal=_scalar_data(value))


def _scalar_data(value: Any) -> K.ScalarData:
    from .array import Scalar
    if isinstance(value, Expression):
        if value._literal is None:
            raise TypeError(f"expected a value, got the expression {value}")
        return value._literal
    if isinstance(value, Scalar):
        return K.ScalarData(value._array.data)  # noqa: SLF001
    if _is_pyarrow(value, "Scalar"):
        from .array import array
        return K.ScalarData(array([value.as_py()], type=_our_type(value.type)).data)
    return K.scalar_data(value)


def _value_set_data(values: Any) -> ArrayData:
    from .array import array
    if _is_pyarrow(values, "Array") or _is_pyarrow(values, "ChunkedArray"):
        return array(values.to_pylist(), type=_our_type(values.type)).data
    return array(list(values)).data


def _as_expression(value: Any) -> Expression:
    if isinstance(value, Expression):
        return value
    converted = to_expression(value)
    return scalar(None) if converted is None else converted


def _is_pyarrow(obj: object, name: str) -> bool:
    cls = type(obj)
    return cls.__module__.startswith("pyarrow") and any(
        c.__name__ == name or c.__name__.endswith(name) for c in cls.__mro__)


def _is_pyarrow_expression(obj: object) -> bool:
    return type(obj).__name__ == "Expression" and type(obj).__module__.startswith("pyarrow")


def _our_type(t: Any) -> Any:
    if isinstance(t, T.DataType):
        return t
    from .data.cschema import import_field
    return import_field(t).type


def to_expression(obj: Any) -> Expression | None:
    """An arrowipc Expression of `obj`: None, an Expression, a pyarrow Expression (converted
    from its serialized form), or a value (a literal)."""
    if obj is None:
        return None
    if isinstance(obj, Expression):
        return obj
    if _is_pyarrow_expression(obj):
        return from_pyarrow(obj)
    return scalar(obj)


# -- reading pyarrow's serialized expressions ----------------------------------------------------------

def from_pyarrow(expr: Any) -> Expression:
    """The arrowipc Expression of a pyarrow Expression, read from the bytes it pickles to."""
    try:
        payload = bytes(expr.__reduce__()[1][0])
    except Exception as e:      # pyarrow cannot serialize some (field references by position)
        raise ArrowNotImplementedError(f"cannot convert the pyarrow expression {expr}: pyarrow "
                                       f"does not serialize it ({e})") from None
    return deserialize(payload)


def deserialize(payload: bytes) -> Expression:
    """An Expression from Arrow C++'s serialized form: an IPC file of one one-row record batch
    whose columns are the literals and function options, and whose schema metadata lists the
    tree in pre-order ("call" ... "end", "field_ref", "nested_field_ref" n, "literal" i,
    "options" i)."""
    pairs, columns = _read_serialized(payload)
    pos = 0

    def column_value(key: str, index: bytes) -> ArrayData:
        try:
            i = int(index)
        except ValueError:
            i = -1
        if not 0 <= i < len(columns):
            raise ArrowInvalid(f"serialized expression: {key} {index!r} is not a column of its "
                               f"batch ({len(columns)} columns)")
        return columns[i]

    def read(depth: int) -> Expression:
        nonlocal pos
        if depth > _MAX_DEPTH:
            raise ArrowInvalid(f"serialized expression: nested deeper than {_MAX_DEPTH} calls")
        if pos >= len(pairs):
            raise ArrowInvalid("serialized expression: the metadata ends inside the tree")
        key, value = pairs[pos]
        pos += 1
        if key == b"literal":
            col = column_value("literal", value)
            return Expression._make("literal", literal=K.ScalarData(col.slice(0, 1)))
        if key == b"field_ref":
            return field(_text(value, "field name"))
        if key == b"nested_field_ref":
            n = int(value) if value.isdigit() else -1
            if not 0 < n <= len(pairs) - pos:
                raise ArrowInvalid(f"serialized expression: a nested field reference of {value!r} "
                                   f"names, {len(pairs) - pos} metadata entries left")
            names = []
            for _ in range(n):
                k, v = pairs[pos]
                if k != b"field_ref":
                    raise ArrowInvalid("serialized expression: a nested field reference lists "
                                       f"{n} names, found {k!r}")
                names.append(_text(v, "field name"))
                pos += 1
            return field(tuple(names))
        if key == b"call":
            function = _text(value, "function name")
            args = []
            options: dict[str, Any] = {}
            while True:
                if pos >= len(pairs):
                    raise ArrowInvalid(f"serialized expression: call {function} has no end")
                k, v = pairs[pos]
                if k == b"end":
                    pos += 1
                    break
                if k == b"options":
                    pos += 1
                    options = _options_from(function, column_value("options", v))
                    continue
                args.append(read(depth + 1))
            if function in _OPTION_FIELDS and not options:
                raise ArrowInvalid(f"serialized expression: call {function} has no options")
            arity = _arity(function)
            if arity is not None and len(args) != arity:
                raise ArrowInvalid(f"serialized expression: call {function} has {len(args)} "
                                   f"argument(s), expected {arity}")
            return Expression._make("call", function=function, args=tuple(args),
                                    options=options)
        raise ArrowInvalid(f"serialized expression: unexpected metadata key {key!r}")

    return read(0)


_MAX_DEPTH = 256


def _read_serialized(payload: bytes) -> tuple[list[tuple[bytes, bytes]], list[ArrayData]]:
    """(the schema's custom metadata in order, duplicate keys kept, the columns of its one
    record batch) of a serialized expression, decoded by the IPC layer's decoder."""
    from ._core.content_checks import run_pending_checks
    from .ipc import metadata as md
    from .ipc._batch_decode import assemble_columns, decode_record_batch_header, make_plan
    from .ipc.format import FILE_MAGICS
    from .ipc.message import read_message
    where = "serialized expression"
    start = 8 if any(payload.startswith(m) for m in FILE_MAGICS) else 0
    source = io.BytesIO(payload)
    source.seek(start)
    try:
        schema_msg = read_message(source)
    except EOFError:
        raise ArrowInvalid(f"{where}: expected a schema message at byte {start}, found the end "
                           f"of its {len(payload)} bytes") from None
    if schema_msg.header_type != md.HEADER_SCHEMA:
        raise ArrowInvalid(f"{where}: expected a schema message first, found {schema_msg.type}")
    header = schema_msg.header
    pairs = [(kv.bytes_field(0) or b"", kv.bytes_field(1) or b"")
             for kv in header.tables(2, "KeyValue")] if header.has(2) else []
    info = md.decode_schema(header)
    if info.dictionaries:
        raise ArrowInvalid(f"{where}: dictionary-encoded literals are not supported")
    columns: list[ArrayData] = []
    if info.schema.fields:
        try:
            batch_msg = read_message(source)
        except EOFError:
            raise ArrowInvalid(f"{where}: the record batch of its literals is missing") from None
        if batch_msg.header_type != md.HEADER_RECORD_BATCH or batch_msg.body is None:
            raise ArrowInvalid(f"{where}: expected a record batch after the schema, found "
                               f"{batch_msg.type}")
        h = decode_record_batch_header(batch_msg.header, batch_msg.legacy_codec)
        if h.codec >= 0:
            raise ArrowInvalid(f"{where}: a compressed record batch of literals")
        plan = make_plan([(f.name, f.type) for f in info.schema])
        cols, pending = assemble_columns(plan, h, batch_msg.body, None, None, where,
                                         batch_msg.version)
        if pending:
            run_pending_checks(tuple(pending), where)
        columns = [c for c in cols if c is not None]
        if any(c.length < 1 for c in columns):
            raise ArrowInvalid(f"{where}: the record batch of literals has no row")
    return pairs, columns


def _arity(function: str) -> int | None:
    """The number of arguments of a function arrowipc evaluates (None: not one of them)."""
    if function in K.COMPARISONS or function.removesuffix("_checked") in K.ARITHMETIC or \
            function in ("and_kleene", "or_kleene"):
        return 2
    if function in ("invert", "is_null", "is_valid", "is_in", "cast", "is_nan") or \
            function in SP.STRING_PREDICATES or function in SP.UNARY_ARITHMETIC:
        return 1
    return None


def _text(value: bytes, what: str) -> str:
    try:
        return value.decode()
    except UnicodeDecodeError as e:
        raise ArrowInvalid(f"serialized expression: a {what} is not UTF-8 ({value!r}: "
                           f"{e.reason} at byte {e.start})") from None


_OPTION_FIELDS = {"is_in": ("value_set",), "is_null": ("nan_is_null",), "cast": ("to_type",),
                  **{f: ("pattern",) for f in SP.STRING_PREDICATES}}


def _options_from(function: str, struct: ArrayData) -> dict[str, Any]:
    if struct.type.name != "struct":
        raise ArrowInvalid(f"serialized expression: the options of {function} are a {struct.type}, "
                           f"expected a struct")
    missing = [n for n in _OPTION_FIELDS.get(function, ())
               if struct.type.get_field_index(n) < 0]
    if missing:
        raise ArrowInvalid(f"serialized expression: the options of {function} lack "
                           f"{', '.join(missing)}")
    names = [struct.type.field(i).name for i in range(struct.type.num_fields)]
    child = {n: struct.children[i].slice(struct.offset, 1) for i, n in enumerate(names)}
    if function == "is_in":
        lists = child["value_set"]
        behavior = _pylist(child["null_matching_behavior"])[0] \
            if "null_matching_behavior" in child else 0
        if "skip_nulls" in child and _pylist(child["skip_nulls"])[0]:
            behavior = 1
        if lists.type.name not in ("list", "large_list") or not isinstance(behavior, (int, type(None))) \
                or not 0 <= int(behavior or 0) < len(_NULL_MATCHING):
            raise ArrowInvalid(f"serialized expression: is_in options of a value_set of "
                               f"{lists.type} with null_matching_behavior {behavior!r}")
        vs = lists.list_values()
        return {"value_set": vs, "null_matching_behavior": _NULL_MATCHING[int(behavior or 0)]}
    if function == "is_null":
        return {"nan_is_null": bool(_pylist(child["nan_is_null"])[0])}
    if function == "cast":
        out: dict[str, Any] = {"to_type": child["to_type"].type}
        out.update({k: bool(_pylist(child[k])[0]) if k in child else False
                    for k in _CAST_FLAGS})
        return out
    return {k: _pylist(v)[0] for k, v in child.items() if k != "_type_name"}


def _pylist(d: ArrayData) -> list[Any]:
    from .data.to_python import to_pylist
    return to_pylist(d)


# -- evaluation helpers ----------------------------------------------------------------------------

def _field_text(path: tuple[Any, ...]) -> str:
    def one(p: Any) -> str:
        return f"FieldRef.Name({p})" if isinstance(p, str) else f"FieldPath({p})"
    if len(path) == 1:
        p = path[0]
        return p if isinstance(p, str) else f"FieldPath({p})"
    if all(isinstance(p, int) for p in path):
        return f"FieldPath({' '.join(str(p) for p in path)})"
    return f"FieldRef.Nested({' '.join(one(p) for p in path)})"


def _ref_text(path: tuple[Any, ...]) -> str:
    """A field reference as Arrow C++ names it in errors: FieldRef.Name(x) for one name."""
    if len(path) == 1 and isinstance(path[0], str):
        return f"FieldRef.Name({path[0]})"
    return _field_text(path)


def _schema_text(schema: Any) -> str:
    return "\n".join(f"{f.name}: {f.type}" for f in schema)


def _resolve(path: tuple[Any, ...], columns: Mapping[str, ArrayData], schema_text: str | None
             ) -> ArrayData:
    def no_match() -> ArrowInvalid:
        text = schema_text if schema_text is not None else \
            "\n".join(f"{n}: {d.type}" for n, d in columns.items())
        return ArrowInvalid(f"No match for {_ref_text(path)} in {text}")
    first = path[0]
    if isinstance(first, int):
        names = list(columns)
        if not 0 <= first < len(names):
            raise no_match()
        data = columns[names[first]]
    elif first in columns:
        data = columns[first]
    else:
        raise no_match()
    for p in path[1:]:
        t = data.type
        if not t.name.startswith("struct"):
            raise no_match()
        j = p if isinstance(p, int) else t.get_field_index(p)
        if not 0 <= j < t.num_fields:
            raise no_match()
        child = data.children[j].slice(data.offset, data.length)
        data = _with_parent_nulls(child, data)
    return data


def _with_parent_nulls(child: ArrayData, parent: ArrayData) -> ArrayData:
    """The child with the struct's nulls added (pyarrow's struct_field does the same)."""
    if parent.null_count == 0 or parent.buffers[0] is None:
        return child
    valid = K.and_kleene(K.is_valid(child), K.is_valid(parent))
    assert isinstance(valid, ArrayData)
    bits = valid.buffers[1]
    if child.offset != 0:
        # the new validity starts at bit 0: take the rows into buffers of their own first
        import numpy as np
        from .data.from_python import array_data_from_python
        from .data.selection import take
        child = take(child, array_data_from_python(np.arange(child.length, dtype=np.int64)))
    from ._core.bitmap import count_set_bits
    assert bits is not None
    nulls = child.length - count_set_bits(bits, 0, child.length)
    return child.copy_with(buffers=[bits] + list(child.buffers[1:]), null_count=nulls)


_SIGNED = [(8, T.int8), (16, T.int16), (32, T.int32), (64, T.int64)]
_UNSIGNED = [(8, T.uint8), (16, T.uint16), (32, T.uint32), (64, T.uint64)]


def _narrowed(lit: K.Datum) -> K.Datum:
    """A numeric literal beside a column in the narrowest type of its kind that holds it, as
    pyarrow's expression binding makes it (so `int8 column + 1` stays int8): integers in the
    smallest signed (or, for an unsigned literal, unsigned) type, floats in float32 when exact."""
    if not isinstance(lit, K.ScalarData):
        return lit
    fam = K.family(lit.type)
    if fam not in ("int", "float"):
        return lit
    v = lit.as_py()
    if v is None:
        return lit
    if fam == "float":
        if lit.type.name == "double" and (v != v or math.isinf(v) or _fits_float32(v)):
            return K.scalar_data(v, T.float32())
        return lit
    for bits, make in (_SIGNED if lit.type.is_signed else _UNSIGNED):
        lo = -(1 << (bits - 1)) if lit.type.is_signed else 0
        hi = (1 << (bits - 1)) - 1 if lit.type.is_signed else (1 << bits) - 1
        if lo <= v <= hi:
            return lit if bits >= lit.type.bit_width else K.scalar_data(v, make())
    return lit


def _fits_float32(v: float) -> bool:
    try:
        return bool(struct.unpack("<f", struct.pack("<f", v))[0] == v)
    except OverflowError:
        return False


def _apply(function: str, args: list[K.Datum], options: Mapping[str, Any]) -> K.Datum:
    base = function.removesuffix("_checked")
    if function in K.COMPARISONS:
        return K.compare(function, args[0], args[1])
    if function in ("and_kleene",):
        return K.and_kleene(args[0], args[1])
    if function in ("or_kleene",):
        return K.or_kleene(args[0], args[1])
    if function == "invert":
        return K.invert(args[0])
    if function == "is_null":
        return K.is_null(args[0], bool(options.get("nan_is_null", False)))
    if function == "is_valid":
        return K.is_valid(args[0])
    if function == "is_nan":
        return K.is_nan(args[0])
    if function == "is_in":
        return K.is_in(args[0], options["value_set"], options.get("null_matching_behavior",
                                                                   "MATCH"))
    if base in K.ARITHMETIC:
        return K.arithmetic(function, args[0], args[1])
    if function == "cast":
        from .data.cast import cast_data
        safe = not any(options.get(k, False) for k in _CAST_FLAGS)
        arg = args[0]
        if isinstance(arg, K.ScalarData):
            return K.ScalarData(cast_data(arg.data, options["to_type"], safe))
        return cast_data(arg, options["to_type"], safe)
    if function in SP.STRING_PREDICATES:
        return SP.string_predicate(function, args[0], options["pattern"],
                                   bool(options.get("ignore_case", False)))
    if function in SP.UNARY_ARITHMETIC:
        return SP.unary_arithmetic(function, args[0])
    raise ArrowNotImplementedError(f"arrowipc cannot evaluate the function '{function}'")


def _fold(e: Expression) -> Expression:
    """A call with literal arguments evaluated; Kleene shortcuts for and/or."""
    f, args = e._function, e._args
    lits = [a._literal.as_py() if a._literal is not None else _NOT_LITERAL for a in args]
    if f == "and_kleene":
        if any(v is False for v in lits):
            return scalar(False)
        for i, v in enumerate(lits):
            if v is True:
                return args[1 - i]
    if f == "or_kleene":
        if any(v is True for v in lits):
            return scalar(True)
        for i, v in enumerate(lits):
            if v is False:
                return args[1 - i]
    if all(a._kind == "literal" for a in args):
        try:
            out = _apply(f, [a._literal for a in args], e._options)  # type: ignore[misc]
        except ArrowNotImplementedError:
            return e            # a function arrowipc does not evaluate stays a call
        assert isinstance(out, K.ScalarData)
        return Expression._make("literal", literal=out)
    return e


_NOT_LITERAL = object()


def _same_types(a: Expression, b: Expression) -> bool:
    if a._kind != b._kind or len(a._args) != len(b._args):
        return False
    if a._literal is not None and b._literal is not None:
        if a._literal.type != b._literal.type:
            return False
    return all(_same_types(x, y) for x, y in zip(a._args, b._args))


def _stats_value(stats: dict[str, Any], name: str, lit: K.ScalarData, schema: Any
                 ) -> tuple[bool, Any, Any]:
    """(usable, value in the statistics' encoding, the statistics to compare with)."""
    v = lit.as_py()
    col = stats.get("columns", {}).get(name)
    col_type = None
    if schema is not None:
        try:
            col_type = schema.field(name).type
        except (KeyError, ValueError, IndexError):
            col_type = None
    if isinstance(v, bool):
        return False, None, stats
    if isinstance(v, (int, float)):
        if isinstance(v, float) and math.isnan(v):
            return False, None, stats
        if col_type is not None and K.family(col_type) not in ("int", "float"):
            return False, None, stats
        return True, v, stats
    if isinstance(v, str):
        if col_type is not None and K.family(col_type) != "string":
            return False, None, stats
        return True, v, stats
    if isinstance(v, Decimal):
        if col is None:
            return True, v, stats
        lo, hi = col.get("min"), col.get("max")
        try:
            new = dict(col)
            if lo is not None:
                new["min"] = Decimal(lo)
            if hi is not None:
                new["max"] = Decimal(hi)
        except (ArithmeticError, TypeError, ValueError):
            return False, None, stats
        return True, v, dict(stats, columns=dict(stats["columns"], **{name: new}))
    if col_type is None:
        return False, None, stats
    unit: str = getattr(col_type, "unit", "")
    if isinstance(v, datetime) and col_type.name.startswith("timestamp"):
        if v.tzinfo is None:
            v = v.replace(tzinfo=timezone.utc)
        delta = v - datetime(1970, 1, 1, tzinfo=timezone.utc)
        return True, _delta_in(delta, unit, floor=True), stats
    if isinstance(v, date) and not isinstance(v, datetime) and col_type.name.startswith("date"):
        days = (v - date(1970, 1, 1)).days
        return True, days if col_type.name == "date32[day]" else days * 86400000, stats
    if isinstance(v, time) and K.family(col_type) == "time":
        delta = timedelta(hours=v.hour, minutes=v.minute, seconds=v.second,
                          microseconds=v.microsecond)
        return True, _delta_in(delta, unit, floor=True), stats
    if isinstance(v, timedelta) and col_type.name.startswith("duration"):
        return True, _delta_in(v, unit, floor=True), stats
    return False, None, stats


def _delta_in(delta: timedelta, unit: str, floor: bool) -> Any:
    us = (delta.days * 86400 + delta.seconds) * 1000000 + delta.microseconds
    if unit == "ns":
        return us * 1000
    if unit == "us":
        return us
    # a value between two whole units: compare with a fraction (still exact for the bounds)
    return Decimal(us) / Decimal(1000 if unit == "ms" else 1000000)


# -- literal text as Arrow C++ prints scalars ----------------------------------------------------

def _literal_text(s: K.ScalarData) -> str:
    t = s.type
    v = s.as_py()
    if v is None:
        return f"null[{t}]"
    fam = K.family(t)
    if fam == "bool":
        return "true" if v else "false"
    if fam == "float":
        return _float_text(float(v))
    if fam == "string":
        return '"' + _escaped(str(v)) + '"'
    if fam == "binary":
        return '"' + bytes(v).hex().upper() + '"'
    if fam == "timestamp":
        return _timestamp_text(s)
    if fam in ("time", "duration"):
        return _raw_text(s) if fam == "duration" else _time_text(s)
    if fam == "date":
        return str(v.isoformat())
    return str(v)


def _raw_int(s: K.ScalarData) -> int:
    import numpy as np
    d = s.data
    dtype = np.int32 if d.type.name.startswith("time32") or d.type.name == "date32[day]" \
        else np.int64
    return int(np.frombuffer(d.buffers[1], dtype=dtype,  # type: ignore[call-overload]
                             count=d.offset + 1)[d.offset])


def _raw_text(s: K.ScalarData) -> str:
    return str(_raw_int(s))


_FRACTION_DIGITS = {"s": 0, "ms": 3, "us": 6, "ns": 9}


def _clock(value: int, unit: str) -> tuple[int, str]:
    """(whole seconds, the fraction digits) of a value in `unit`."""
    per = {"s": 1, "ms": 1000, "us": 1000000, "ns": 1000000000}[unit]
    secs, frac = divmod(value, per)
    digits = _FRACTION_DIGITS[unit]
    return secs, (f".{frac:0{digits}d}" if digits else "")


def _timestamp_text(s: K.ScalarData) -> str:
    raw = _raw_int(s)
    secs, frac = _clock(raw, s.type.unit)
    stamp = datetime(1970, 1, 1) + timedelta(seconds=secs)
    text = stamp.strftime("%Y-%m-%d %H:%M:%S") + frac
    return text + ("Z" if s.type.tz else "")


def _time_text(s: K.ScalarData) -> str:
    raw = _raw_int(s)
    secs, frac = _clock(raw, s.type.unit)
    h, rem = divmod(secs, 3600)
    m, sec = divmod(rem, 60)
    return f"{h:02d}:{m:02d}:{sec:02d}{frac}"


def _float_text(v: float) -> str:
    """A double as Arrow C++ prints it: the shortest digits that read back, in plain notation
    when the leading digit's power of ten is within [-6, 10), else as d.ddde+X."""
    if math.isnan(v):
        return "nan"
    if math.isinf(v):
        return "inf" if v > 0 else "-inf"
    if v == 0:
        return "-0" if math.copysign(1.0, v) < 0 else "0"
    sign, digits_t, exp = Decimal(repr(v)).as_tuple()
    digits = "".join(str(d) for d in digits_t).rstrip("0") or "0"
    assert isinstance(exp, int)
    # value = 0.d1d2... * 10**point
    point = len(digits_t) + exp
    lead = point - 1
    minus = "-" if sign else ""
    if -6 <= lead < 10:
        if point <= 0:
            return f"{minus}0.{'0' * -point}{digits}"
        if point >= len(digits):
            return f"{minus}{digits}{'0' * (point - len(digits))}"
        return f"{minus}{digits[:point]}.{digits[point:]}"
    mantissa = digits[0] + ("." + digits[1:] if len(digits) > 1 else "")
    return f"{minus}{mantissa}e{'+' if lead >= 0 else '-'}{abs(lead)}"


_ESCAPES = {"\\": "\\\\", '"': '\\"', "\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _escaped(text: str) -> str:
    return "".join(_ESCAPES.get(c, c) for c in text)


def _array_text(d: ArrayData) -> str:
    from .array import make_array
    if d.length == 0 and d.type.name == "null":
        return "null:0 nulls"
    return f"{d.type}:{make_array(d).to_string()}"
