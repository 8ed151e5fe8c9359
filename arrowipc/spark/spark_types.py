"""Arrow types (arrowipc's model) -> the Spark SQL types they read as.

Every column reads as nullable, like Spark's own file sources. Arrow types with no Spark
equivalent raise ArrowTypeError naming the field and the file.
"""
from __future__ import annotations

from typing import NoReturn

from pyspark.sql import types as S

from ..errors import ArrowTypeError
from ..types import (BinaryType, DataType, DecimalType, DictionaryType, DurationType,
                     ExtensionType, FixedSizeBinaryType, Kind, MapType, RunEndEncodedType,
                     Schema, StructType, Time32Type, Time64Type, TimestampType, UnionType)

__all__ = ["describe_difference", "SPARK_MAX_DECIMAL_PRECISION", "spark_schema_of", "spark_type_of"]

SPARK_MAX_DECIMAL_PRECISION = 38

_BY_NAME = {
    "null": S.NullType, "bool": S.BooleanType,
    "int8": S.ByteType, "int16": S.ShortType, "int32": S.IntegerType, "int64": S.LongType,
    # unsigned integers widen to the next signed type that holds every value
    "uint8": S.ShortType, "uint16": S.IntegerType, "uint32": S.LongType,
    "halffloat": S.FloatType, "float": S.FloatType, "double": S.DoubleType,
    "date32[day]": S.DateType, "date64[ms]": S.DateType,
}

_NO_SPARK_TYPE = {
    "month_interval": "Spark's Python data sources cannot return year-month intervals",
    "month_day_nano_interval": "Spark has no month-day-nanosecond interval type for data sources",
}


def _fail(t: DataType, where: str, why: str) -> NoReturn:
    raise ArrowTypeError(f"arrowipc: {where} has Arrow type {t.name}, which Spark cannot hold: "
                         f"{why}")


def spark_type_of(t: DataType, where: str, top_level: bool = False) -> S.DataType:
    """The Spark type a column of Arrow type `t` reads as; `where` names it in errors."""
    if t.name == "day_time_interval":
        if not top_level:   # converted before pyarrow sees it, which only works for columns
            _fail(t, where, "day-time intervals are read only as top-level columns")
        return S.DayTimeIntervalType()
    if isinstance(t, ExtensionType):
        return spark_type_of(t.storage, where)
    if isinstance(t, DictionaryType):
        return spark_type_of(t.value_type, where)
    if isinstance(t, RunEndEncodedType):
        return spark_type_of(t.value_type, where)
    spark_cls = _BY_NAME.get(t.name)
    if spark_cls is not None:
        return spark_cls()
    if t.name in _NO_SPARK_TYPE:
        _fail(t, where, _NO_SPARK_TYPE[t.name])
    if t.name == "uint64":
        return S.DecimalType(20, 0)
    if isinstance(t, DecimalType):
        if t.precision > SPARK_MAX_DECIMAL_PRECISION:
            _fail(t, where, f"Spark decimals hold at most {SPARK_MAX_DECIMAL_PRECISION} digits")
        return S.DecimalType(t.precision, t.scale)
    if isinstance(t, BinaryType):
        return S.StringType() if t.is_utf8 else S.BinaryType()
    if isinstance(t, FixedSizeBinaryType):
        return S.BinaryType()
    if isinstance(t, TimestampType):
        return S.TimestampType() if t.tz else S.TimestampNTZType()
    if isinstance(t, (Time32Type, Time64Type)):
        if not hasattr(S, "TimeType"):
            _fail(t, where, "times of day need Spark 4.1 or newer (TimeType)")
        return S.TimeType()
    if isinstance(t, DurationType):
        return S.DayTimeIntervalType()
    if isinstance(t, MapType):
        key = spark_type_of(t.key_field.type, f"{where} (map key)")
        value = spark_type_of(t.item_field.type, f"{where} (map value)")
        return S.MapType(key, value, True)
    if isinstance(t, StructType):
        return S.StructType([S.StructField(f.name, spark_type_of(f.type, f"{where}.{f.name}"), True)
                             for f in t.fields])
    if isinstance(t, UnionType):
        _fail(t, where, "Spark has no union type")
    if t.kind in (Kind.LIST, Kind.LARGE_LIST, Kind.LIST_VIEW, Kind.LARGE_LIST_VIEW,
                  Kind.FIXED_SIZE_LIST):
        values = t.value_type                 # type: ignore[attr-defined]  # every list kind has it
        return S.ArrayType(spark_type_of(values, f"{where}[]"), True)
    _fail(t, where, "no Spark type matches it")


def spark_schema_of(schema: Schema, where: str) -> S.StructType:
    """The Spark schema a file with arrowipc Schema `schema` reads as."""
    return S.StructType([
        S.StructField(f.name, spark_type_of(f.type, f"field {f.name!r} of {where}", True), True)
        for f in schema.fields
    ])


def describe_difference(a: S.StructType, b: S.StructType) -> str:
    """What differs first between two Spark schemas, in words."""
    if a.names != b.names:
        return f"columns {a.names} vs {b.names}"
    for fa, fb in zip(a.fields, b.fields):
        if fa.dataType != fb.dataType:
            return (f"column {fa.name!r} reads as {fa.dataType.simpleString()} vs "
                    f"{fb.dataType.simpleString()}")
    return "schemas differ"
