"""Schema unification, as pyarrow's `unify_schemas` and `concat_tables(promote_options=...)` do it.

Fields are matched by name. The unified schema lists every name in the order it first appears,
with the metadata of the first schema; a field is nullable when it is in any schema or missing
from one (its slots there are nulls). Types of one name must agree:

- `promote_options="default"`: they must be equal, except that `null` takes the other type (also
  as a list's values);
- `"permissive"`: numbers widen (integers of both signs to a signed integer wide enough, integers
  to a float that holds them exactly, floats to the wider), string and binary go to binary and to
  the large forms, dates, times, timestamps and durations to the finer unit (timestamps only with
  the same time zone), decimals to a precision and scale holding both, a list and a large list
  to a large list of the unified values.

Struct fields, maps, dictionaries and integer-to-decimal are not merged (pyarrow merges them in
some modes): those raise, as docs/pyarrow-compat.md says.

A pair that does not merge is pyarrow's ArrowTypeError: "Unable to merge: Field x has incompatible
types: int64 vs string".
"""
from __future__ import annotations

from .errors import ArrowTypeError
from . import types as T

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable

__all__ = ["PROMOTE_OPTIONS", "unify_schemas", "unify_types"]

PROMOTE_OPTIONS = ("none", "default", "permissive")
_UNITS = ("s", "ms", "us", "ns")
_FLOAT_BY_WIDTH = {16: T.float16, 32: T.float32, 64: T.float64}
# the widest integer each float holds exactly (its significand's bits)
_FLOAT_INT_BITS = {16: 11, 32: 24, 64: 53}
_SIGNED = {8: T.int8, 16: T.int16, 32: T.int32, 64: T.int64}
_UNSIGNED = {8: T.uint8, 16: T.uint16, 32: T.uint32, 64: T.uint64}
# (is binary, is large) of each string and binary type; the merge takes the larger of each
_BINARY_RANK = {"string": (0, 0), "binary": (1, 0), "large_string": (0, 1), "large_binary": (1, 1)}
_BINARY_BY_RANK: dict[tuple[int, int], Callable[[], T.DataType]] = {
    (0, 0): T.string, (1, 0): T.binary, (0, 1): T.large_string, (1, 1): T.large_binary}


def _check_promote_options(promote_options: str) -> None:
    if promote_options not in PROMOTE_OPTIONS[1:]:
        raise ValueError(f"Invalid promote_options: {promote_options}")


def unify_schemas(schemas: Iterable[T.Schema], *, promote_options: str = "default") -> T.Schema:
    """One schema for all of `schemas` (see the module docstring), as pyarrow's."""
    _check_promote_options(promote_options)
    schemas = list(schemas)
    if not schemas:
        raise ValueError("Must pass at least one schema")
    order: list[str] = []
    merged: dict[str, T.Field] = {}
    for schema in schemas:
        for f in schema:
            if f.name not in merged:
                order.append(f.name)
                merged[f.name] = f
                continue
            have = merged[f.name]
            t = unify_types(have.type, f.type, promote_options, f.name)
            merged[f.name] = T.field(f.name, t, have.nullable or f.nullable, have.metadata)
    present_everywhere = {n for n in order if all(n in s.names for s in schemas)}
    fields = [merged[n] if n in present_everywhere else
              T.field(n, merged[n].type, True, merged[n].metadata) for n in order]
    return T.schema(fields, schemas[0].metadata)


def unify_types(a: T.DataType, b: T.DataType, promote_options: str = "default",
                name: str = "") -> T.DataType:
    """The type values of `a` and of `b` both take; ArrowTypeError when there is none."""
    if a == b:
        return a
    if a.id == 0:       # null
        return b
    if b.id == 0:
        return a
    permissive = promote_options == "permissive"
    detail = ""
    lists = (T.ListType, T.LargeListType)
    if isinstance(a, lists) and isinstance(b, lists):
        # the values first, in either mode; a list and a large list only when permissive
        try:
            value = unify_types(a.value_type, b.value_type, promote_options, a.value_field.name)
        except ArrowTypeError as e:
            detail = f": {e}"
        else:
            if type(a) is type(b) or permissive:
                field = T.field(a.value_field.name, value,
                                a.value_field.nullable or b.value_field.nullable)
                return T.list_(field) if type(a) is type(b) is T.ListType else T.large_list(field)
    elif (isinstance(a, T.TimestampType) and isinstance(b, T.TimestampType)
          and (a.tz is None) != (b.tz is None)):
        detail = ": Cannot merge timestamp with timezone and timestamp without timezone"
    elif permissive and (found := _permissive(a, b)) is not None:
        return found
    raise ArrowTypeError(f"Unable to merge: Field {name} has incompatible types: {a} vs {b}{detail}")


def _permissive(a: T.DataType, b: T.DataType) -> T.DataType | None:
    if isinstance(a, T.PrimitiveType) and isinstance(b, T.PrimitiveType):
        if (a.is_integer or a.is_float) and (b.is_integer or b.is_float):
            return _numeric(a, b)
        return T.date64() if {a.name, b.name} == {"date32[day]", "date64[ms]"} else None
    if a.name in _BINARY_RANK and b.name in _BINARY_RANK:
        (binary_a, large_a), (binary_b, large_b) = _BINARY_RANK[a.name], _BINARY_RANK[b.name]
        return _BINARY_BY_RANK[max(binary_a, binary_b), max(large_a, large_b)]()
    if isinstance(a, T.TimestampType) and isinstance(b, T.TimestampType):
        return T.timestamp(_finer(a.unit, b.unit), a.tz) if a.tz == b.tz else None
    if isinstance(a, T.DurationType) and isinstance(b, T.DurationType):
        return T.duration(_finer(a.unit, b.unit))
    if isinstance(a, (T.Time32Type, T.Time64Type)) and isinstance(b, (T.Time32Type, T.Time64Type)):
        unit = _finer(a.unit, b.unit)
        return T.time32(unit) if unit in ("s", "ms") else T.time64(unit)
    if isinstance(a, T.DecimalType) and isinstance(b, T.DecimalType):
        scale = max(a.scale, b.scale)
        precision = max(a.precision - a.scale, b.precision - b.scale) + scale
        width = max(a.bit_width, b.bit_width)
        while width < 256 and precision > T.DecimalType._MAX_PRECISION[width]:
            width *= 2
        if precision > T.DecimalType._MAX_PRECISION[width]:
            return None
        return T.DecimalType(width, precision, scale)
    return None


def _numeric(a: T.PrimitiveType, b: T.PrimitiveType) -> T.DataType:
    if a.is_float or b.is_float:
        # the narrowest float that holds both: a float's own width, an integer's exact range
        bits = max(_float_width(a), _float_width(b))
        return _FLOAT_BY_WIDTH[bits]()
    if a.is_signed == b.is_signed:
        return (_SIGNED if a.is_signed else _UNSIGNED)[max(a.bit_width, b.bit_width)]()
    signed, unsigned = (a, b) if a.is_signed else (b, a)
    # a signed integer wider than the unsigned one holds it (int64 for uint64, as pyarrow)
    return _SIGNED[min(64, max(signed.bit_width, unsigned.bit_width * 2))]()


def _float_width(t: T.PrimitiveType) -> int:
    if t.is_float:
        return t.bit_width
    bits = t.bit_width - (1 if t.is_signed else 0)
    return next(w for w in (16, 32, 64) if bits <= _FLOAT_INT_BITS[w] or w == 64)


def _finer(u: str, v: str) -> str:
    return _UNITS[max(_UNITS.index(u), _UNITS.index(v))]
