"""Shared test helpers: pyarrow-built data for every issue-2 type, and oracle comparisons.

Everything here is built with pyarrow (the oracle), never with arrowipc, so a bug in the engine
cannot hide in the data it is checked against.  Data is deterministic: a seed picks every value.

Sections:
  * type catalogue   -- ISSUE2_TYPE_CASES: case id -> pyarrow DataType
  * value builders   -- make_array / make_batch / make_table (nulls included, nested types too)
  * interval types   -- month_interval / day_time_interval, which pyarrow cannot build in Python
  * IPC via pyarrow  -- pa_stream_bytes / pa_file_bytes
  * comparisons      -- to_pa_table / to_pa_batch / assert_pylist_equal / assert_schema_equal
  * hypothesis       -- record_batches() strategy for property tests
"""
from __future__ import annotations

import ctypes
import datetime
import decimal
import math
import random

import pyarrow as pa
import pyarrow.ipc as pa_ipc

# ---------------------------------------------------------------------------------------------
# Interval types pyarrow has no Python factory (nor Array class) for.
# We import them through the C data interface from a hand-made ArrowSchema ("tiM" / "tiD").
# Arrays of these types cannot exist as pyarrow Python Arrays (pyarrow raises KeyError when
# wrapping them), but RecordBatch/Table columns of these types work fine in C++, so they are
# created at batch level by re-typing an int32/int64 column (see _retype_batch_columns).


class _ArrowSchema(ctypes.Structure):
    pass


_RELEASE_SCHEMA = ctypes.CFUNCTYPE(None, ctypes.POINTER(_ArrowSchema))
_ArrowSchema._fields_ = [
    ("format", ctypes.c_char_p),
    ("name", ctypes.c_char_p),
    ("metadata", ctypes.c_char_p),
    ("flags", ctypes.c_int64),
    ("n_children", ctypes.c_int64),
    ("children", ctypes.POINTER(ctypes.POINTER(_ArrowSchema))),
    ("dictionary", ctypes.c_void_p),
    ("release", _RELEASE_SCHEMA),
    ("private_data", ctypes.c_void_p),
]


class _ArrowArray(ctypes.Structure):
    _fields_ = [
        ("length", ctypes.c_int64),
        ("null_count", ctypes.c_int64),
        ("offset", ctypes.c_int64),
        ("n_buffers", ctypes.c_int64),
        ("n_children", ctypes.c_int64),
        ("buffers", ctypes.c_void_p),
        ("children", ctypes.c_void_p),
        ("dictionary", ctypes.c_void_p),
        ("release", ctypes.c_void_p),
        ("private_data", ctypes.c_void_p),
    ]


@_RELEASE_SCHEMA
def _release_static_schema(schema_ptr):
    # Our hand-made schema owns nothing; marking it released is all there is to do.
    schema_ptr.contents.release = _RELEASE_SCHEMA()


# C data interface format strings; module constants so the bytes outlive every use.
_FORMAT_MONTH_INTERVAL = b"tiM"
_FORMAT_DAY_TIME_INTERVAL = b"tiD"
# Storage used to build the values before re-typing: same width, same bytes.
_INTERVAL_STORAGE = {
    "month_interval": (_FORMAT_MONTH_INTERVAL, pa.int32()),
    "day_time_interval": (_FORMAT_DAY_TIME_INTERVAL, pa.int64()),
}


def _type_from_format(fmt: bytes) -> pa.DataType:
    schema = _ArrowSchema(
        format=fmt, name=None, metadata=None, flags=2, n_children=0, children=None,
        dictionary=None, release=_release_static_schema, private_data=None,
    )
    return pa.DataType._import_from_c(ctypes.addressof(schema))


def month_interval() -> pa.DataType:
    return _type_from_format(_FORMAT_MONTH_INTERVAL)


def day_time_interval() -> pa.DataType:
    return _type_from_format(_FORMAT_DAY_TIME_INTERVAL)


def _retype_batch_columns(batch: pa.RecordBatch, new_formats: dict) -> pa.RecordBatch:
    """Return `batch` with column i re-typed to C format new_formats[i] (same buffers)."""
    c_schema = _ArrowSchema()
    c_array = _ArrowArray()
    batch._export_to_c(ctypes.addressof(c_array), ctypes.addressof(c_schema))
    # The exporter's release callback frees its own private data, not the format pointer, so
    # pointing `format` at our constant is safe; import parses it immediately.
    for index, fmt in new_formats.items():
        c_schema.children[index].contents.format = fmt
    return pa.RecordBatch._import_from_c(ctypes.addressof(c_array), ctypes.addressof(c_schema))


# ---------------------------------------------------------------------------------------------
# Type catalogue: every type of issue 2, by a readable case id (used as test ids and as column
# names).  Interval types without a pyarrow factory are named here and built at batch level.

_TZ_BY_UNIT = {"s": "UTC", "ms": "America/New_York", "us": "Europe/Paris", "ns": "+05:30"}


def _issue2_type_cases():
    cases = {
        "null": pa.null(),
        "bool": pa.bool_(),
        "int8": pa.int8(),
        "int16": pa.int16(),
        "int32": pa.int32(),
        "int64": pa.int64(),
        "uint8": pa.uint8(),
        "uint16": pa.uint16(),
        "uint32": pa.uint32(),
        "uint64": pa.uint64(),
        "float16": pa.float16(),
        "float32": pa.float32(),
        "float64": pa.float64(),
        "decimal32": pa.decimal32(7, 2),
        "decimal64": pa.decimal64(15, 3),
        "decimal128": pa.decimal128(30, 5),
        "decimal256": pa.decimal256(60, 10),
        "date32": pa.date32(),
        "date64": pa.date64(),
        "time32_s": pa.time32("s"),
        "time32_ms": pa.time32("ms"),
        "time64_us": pa.time64("us"),
        "time64_ns": pa.time64("ns"),
    }
    for unit in ("s", "ms", "us", "ns"):
        cases[f"timestamp_{unit}"] = pa.timestamp(unit)
        cases[f"timestamp_{unit}_tz"] = pa.timestamp(unit, tz=_TZ_BY_UNIT[unit])
    for unit in ("s", "ms", "us", "ns"):
        cases[f"duration_{unit}"] = pa.duration(unit)
    cases.update({
        "month_interval": month_interval(),
        "day_time_interval": day_time_interval(),
        "month_day_nano_interval": pa.month_day_nano_interval(),
        "fixed_size_binary": pa.binary(5),
        "binary": pa.binary(),
        "string": pa.string(),
        "large_binary": pa.large_binary(),
        "large_string": pa.large_string(),
        "list": pa.list_(pa.int32()),
        "large_list": pa.large_list(pa.string()),
        "fixed_size_list": pa.list_(pa.int16(), 3),
        "struct": pa.struct([
            pa.field("a", pa.int32()),
            pa.field("b", pa.struct([
                pa.field("c", pa.string()),
                pa.field("d", pa.list_(pa.bool_())),
            ])),
        ]),
        "map": pa.map_(pa.string(), pa.int64()),
        # nested combinations that stress offsets of children
        "list_of_struct": pa.list_(pa.struct([pa.field("x", pa.int8()), pa.field("y", pa.string())])),
        "list_of_list": pa.list_(pa.list_(pa.int64())),
        "large_list_of_fixed_size_binary": pa.large_list(pa.binary(3)),
        "fixed_size_list_of_string": pa.list_(pa.string(), 2),
        "map_of_struct": pa.map_(pa.int32(), pa.struct([pa.field("p", pa.float64()), pa.field("q", pa.binary())])),
        "struct_of_bool": pa.struct([pa.field("t", pa.bool_()), pa.field("u", pa.bool_())]),
    })
    return cases


ISSUE2_TYPE_CASES: dict = _issue2_type_cases()
ISSUE2_CASE_IDS: list = list(ISSUE2_TYPE_CASES)
# Cases whose values pyarrow cannot turn into Python objects (to_pylist raises); the comparison
# helpers skip the pylist check for those columns and rely on Table.equals.
PYLIST_UNSUPPORTED_CASES = frozenset({"month_interval", "day_time_interval"})


# ---------------------------------------------------------------------------------------------
# Value builders.  Python values per pyarrow type, recursively, with nulls at `null_ratio`.

_TEXT_ALPHABET = "abcxyz0189 _éß€中😀"
_UNIT_PER_SECOND = {"s": 1, "ms": 1_000, "us": 1_000_000, "ns": 1_000_000_000}
# Year 1 .. 9999 in days relative to the epoch: the range Python's datetime can hold.
_MIN_DAY, _MAX_DAY = -719_162, 2_932_896


def _int_value(t: pa.DataType, rng: random.Random) -> int:
    bits = t.bit_width
    lo, hi = (-(1 << (bits - 1)), (1 << (bits - 1)) - 1) if pa.types.is_signed_integer(t) else (0, (1 << bits) - 1)
    pick = rng.random()
    if pick < 0.1:
        return lo
    if pick < 0.2:
        return hi
    if pick < 0.3:
        return 0
    return rng.randint(lo, hi)


def _ns_safe(value: int, unit: str) -> int:
    # pyarrow's to_pylist refuses nanoseconds that are not whole microseconds (no pandas here)
    return value - value % 1000 if unit == "ns" else value


def _leaf_value(t: pa.DataType, rng: random.Random):
    if pa.types.is_boolean(t):
        return rng.random() < 0.5
    if pa.types.is_integer(t):
        return _int_value(t, rng)
    if pa.types.is_floating(t):
        special = rng.random()
        if special < 0.1:
            return 0.0
        if special < 0.15:
            return -0.0
        return round(rng.uniform(-6e4, 6e4), 2) if t.bit_width > 16 else float(rng.randint(-2048, 2048)) / 4
    if pa.types.is_decimal(t):
        digits = rng.randint(-(10 ** t.precision) + 1, 10 ** t.precision - 1)
        return decimal.Decimal(digits).scaleb(-t.scale)
    if pa.types.is_date32(t):
        return rng.randint(_MIN_DAY, _MAX_DAY)
    if pa.types.is_date64(t):
        return rng.randint(_MIN_DAY, _MAX_DAY) * 86_400_000
    if pa.types.is_time32(t) or pa.types.is_time64(t):
        return _ns_safe(rng.randrange(86_400 * _UNIT_PER_SECOND[t.unit]), t.unit)
    if pa.types.is_timestamp(t):
        # ns timestamps only span 1677..2262; other units cover years 1..9999 (with a day of
        # margin so time zones stay in range)
        if t.unit == "ns":
            return _ns_safe(rng.randint(-(2 ** 62), 2 ** 62), "ns")
        seconds = rng.randint((_MIN_DAY + 1) * 86_400, _MAX_DAY * 86_400)
        return seconds * _UNIT_PER_SECOND[t.unit] + rng.randrange(_UNIT_PER_SECOND[t.unit])
    if pa.types.is_duration(t):
        return _ns_safe(rng.randint(-(10 ** 9), 10 ** 9) * _UNIT_PER_SECOND[t.unit] // 7, t.unit)
    if t == pa.month_day_nano_interval():
        return (rng.randint(-(2 ** 31), 2 ** 31 - 1), rng.randint(-(2 ** 31), 2 ** 31 - 1),
                rng.randint(-(2 ** 63), 2 ** 63 - 1))
    if pa.types.is_fixed_size_binary(t):
        return bytes(rng.randrange(256) for _ in range(t.byte_width))
    if pa.types.is_binary(t) or pa.types.is_large_binary(t):
        return bytes(rng.randrange(256) for _ in range(rng.randint(0, 12)))
    if pa.types.is_string(t) or pa.types.is_large_string(t):
        return "".join(rng.choice(_TEXT_ALPHABET) for _ in range(rng.randint(0, 10)))
    raise NotImplementedError(f"no value builder for {t}")


def python_value(t: pa.DataType, rng: random.Random, null_ratio: float, nullable: bool = True):
    """One Python value of type `t` (None with probability null_ratio when nullable)."""
    if pa.types.is_null(t):
        return None
    if nullable and rng.random() < null_ratio:
        return None
    if pa.types.is_map(t):
        return [
            (python_value(t.key_type, rng, null_ratio, nullable=False),
             python_value(t.item_type, rng, null_ratio, t.item_field.nullable))
            for _ in range(rng.randint(0, 4))
        ]
    if pa.types.is_fixed_size_list(t):
        return [python_value(t.value_type, rng, null_ratio, t.value_field.nullable) for _ in range(t.list_size)]
    if pa.types.is_list(t) or pa.types.is_large_list(t):
        return [python_value(t.value_type, rng, null_ratio, t.value_field.nullable) for _ in range(rng.randint(0, 4))]
    if pa.types.is_struct(t):
        return {t.field(i).name: python_value(t.field(i).type, rng, null_ratio, t.field(i).nullable)
                for i in range(t.num_fields)}
    return _leaf_value(t, rng)


def make_array(t: pa.DataType, length: int, seed: int = 0, null_ratio: float = 0.25) -> pa.Array:
    """A pyarrow Array of type `t` (not the two interval types; see make_batch)."""
    rng = random.Random(seed)
    if pa.types.is_null(t):
        return pa.nulls(length)
    return pa.array([python_value(t, rng, null_ratio) for _ in range(length)], type=t)


def make_batch(case_ids, length: int, seed: int = 0, null_ratio: float = 0.25,
               metadata=None) -> pa.RecordBatch:
    """A RecordBatch with one column per case id (column name = case id)."""
    arrays, fields, retype = [], [], {}
    for index, case_id in enumerate(case_ids):
        column_seed = seed * 7919 + index
        if case_id in _INTERVAL_STORAGE:
            fmt, storage = _INTERVAL_STORAGE[case_id]
            arrays.append(make_array(storage, length, column_seed, null_ratio))
            fields.append(pa.field(case_id, storage))
            retype[index] = fmt
        else:
            arrays.append(make_array(ISSUE2_TYPE_CASES[case_id], length, column_seed, null_ratio))
            fields.append(pa.field(case_id, ISSUE2_TYPE_CASES[case_id]))
    batch = pa.RecordBatch.from_arrays(arrays, schema=pa.schema(fields))
    if retype:
        batch = _retype_batch_columns(batch, retype)
    if metadata is not None:
        batch = batch.replace_schema_metadata(metadata)
    return batch


def make_table(case_ids, batch_lengths, seed: int = 0, null_ratio: float = 0.25, metadata=None) -> pa.Table:
    """A Table made of one batch per entry of batch_lengths (so chunking is known)."""
    batches = [make_batch(case_ids, n, seed + i, null_ratio) for i, n in enumerate(batch_lengths)]
    schema = batches[0].schema if batches else make_batch(case_ids, 0, seed).schema
    if metadata is not None:
        schema = schema.with_metadata(metadata)
        batches = [b.replace_schema_metadata(metadata) for b in batches]
    return pa.Table.from_batches(batches, schema=schema)


# ---------------------------------------------------------------------------------------------
# IPC through pyarrow (the oracle side).

def pa_stream_bytes(data, schema=None, custom_metadata=None, max_chunksize=None) -> bytes:
    """An IPC stream written by pyarrow: data is a Table or a list of RecordBatches."""
    return _pa_write(pa_ipc.new_stream, data, schema, custom_metadata, max_chunksize)


def pa_file_bytes(data, schema=None, custom_metadata=None, max_chunksize=None, metadata=None) -> bytes:
    """An IPC file written by pyarrow (footer metadata optional)."""
    def opener(sink, schema):
        return pa_ipc.new_file(sink, schema, metadata=metadata)
    return _pa_write(opener, data, schema, custom_metadata, max_chunksize)


def _pa_write(opener, data, schema, custom_metadata, max_chunksize) -> bytes:
    sink = pa.BufferOutputStream()
    if schema is None:
        schema = data.schema if isinstance(data, pa.Table) else data[0].schema
    with opener(sink, schema) as writer:
        if isinstance(data, pa.Table):
            writer.write_table(data, max_chunksize=max_chunksize)
        else:
            for i, batch in enumerate(data):
                meta = custom_metadata[i] if custom_metadata is not None else None
                writer.write_batch(batch, custom_metadata=meta)
    return sink.getvalue().to_pybytes()


# ---------------------------------------------------------------------------------------------
# Comparisons.  arrowipc objects go to pyarrow through the PyCapsule interface.

def as_bytes(buffer) -> bytes:
    """Bytes of a pyarrow Buffer, an arrowipc Buffer, bytes or any buffer-protocol object."""
    if isinstance(buffer, bytes):
        return buffer
    if hasattr(buffer, "to_pybytes"):
        return buffer.to_pybytes()
    return bytes(memoryview(buffer))


def to_pa_table(ours) -> pa.Table:
    return pa.table(ours)


def to_pa_batch(ours) -> pa.RecordBatch:
    return pa.record_batch(ours)


def to_pa_schema(ours) -> pa.Schema:
    return pa.schema(ours)


def assert_schema_equal(got: pa.Schema, expected: pa.Schema):
    """Schemas equal including child field names, schema and (nested) field metadata."""
    assert got.equals(expected, check_metadata=True), (
        f"schema differs\n--- got\n{got.to_string(show_field_metadata=True)}\n"
        f"--- expected\n{expected.to_string(show_field_metadata=True)}"
    )


def is_nat(value) -> bool:
    """pandas' NaT (which pyarrow's to_pylist returns for INT64_MIN nanoseconds): never == itself."""
    return type(value).__name__ == "NaTType"


def _same_value(got, expected, path: str):
    if is_nat(expected) and is_nat(got):
        return
    if isinstance(expected, float) and isinstance(got, float):
        if math.isnan(expected):
            assert math.isnan(got), f"{path}: got {got!r}, expected NaN"
        else:
            assert got == expected and math.copysign(1, got) == math.copysign(1, expected), (
                f"{path}: got {got!r}, expected {expected!r}")
        return
    if isinstance(expected, tuple) and isinstance(got, tuple):
        # pyarrow uses namedtuples (MonthDayNano) where a plain tuple is as good
        assert len(got) == len(expected), f"{path}: got {got!r}, expected {expected!r}"
        for i, (g, e) in enumerate(zip(got, expected)):
            _same_value(g, e, f"{path}[{i}]")
        return
    assert type(got) is type(expected), (
        f"{path}: got {type(got).__name__} {got!r}, expected {type(expected).__name__} {expected!r}")
    if isinstance(expected, list):
        assert len(got) == len(expected), f"{path}: got {len(got)} items, expected {len(expected)}"
        for i, (g, e) in enumerate(zip(got, expected)):
            _same_value(g, e, f"{path}[{i}]")
    elif isinstance(expected, dict):
        assert list(got) == list(expected), f"{path}: keys {list(got)} != {list(expected)}"
        for key in expected:
            _same_value(got[key], expected[key], f"{path}[{key!r}]")
    elif isinstance(expected, (datetime.datetime, datetime.time)) and expected.tzinfo is not None:
        # same instant and same wall clock; the tzinfo class may differ (zoneinfo vs timezone)
        assert got == expected and got.replace(tzinfo=None) == expected.replace(tzinfo=None), (
            f"{path}: got {got!r}, expected {expected!r}")
    else:
        assert got == expected, f"{path}: got {got!r}, expected {expected!r}"


def assert_pylist_equal(got, expected, path: str = "value"):
    """Python values equal with matching types; NaN equals NaN; -0.0 differs from 0.0."""
    _same_value(got, expected, path)


def _pa_column_pylist(table_or_batch, index):
    try:
        return True, table_or_batch.column(index).to_pylist()
    except (ValueError, OverflowError, KeyError, NotImplementedError, TypeError):
        return False, None


def assert_pylist_matches(ours, expected) -> int:
    """Compare arrowipc `ours` (Table or RecordBatch) with pyarrow `expected` via to_pylist.

    Whole-object to_pylist when pyarrow can produce it, else column by column for the columns
    pyarrow can convert.  Returns how many columns were compared.
    """
    try:
        expected_rows = expected.to_pylist()
    except (ValueError, OverflowError, KeyError, NotImplementedError, TypeError):
        expected_rows = None
    if expected_rows is not None:
        assert_pylist_equal(ours.to_pylist(), expected_rows, "rows")
        return expected.num_columns
    compared = 0
    for i in range(expected.num_columns):
        ok, expected_values = _pa_column_pylist(expected, i)
        if ok:
            assert_pylist_equal(ours.column(i).to_pylist(), expected_values, f"column {i}")
            compared += 1
    return compared


def assert_table_matches(ours, expected: pa.Table, check_batches: bool = True):
    """An arrowipc Table equals the pyarrow Table: schema+metadata, values, pylist, chunking."""
    got = to_pa_table(ours)
    assert_schema_equal(got.schema, expected.schema)
    assert got.num_rows == expected.num_rows
    assert got.equals(expected), f"table values differ:\n{got}\n--- expected\n{expected}"
    if check_batches:
        got_lengths = [b.num_rows for b in got.to_batches()]
        expected_lengths = [b.num_rows for b in expected.to_batches()]
        assert got_lengths == expected_lengths
    assert_pylist_matches(ours, expected)


def assert_batch_matches(ours, expected: pa.RecordBatch):
    got = to_pa_batch(ours)
    assert_schema_equal(got.schema, expected.schema)
    assert got.num_rows == expected.num_rows
    assert got.equals(expected), f"batch values differ:\n{got}\n--- expected\n{expected}"
    assert_pylist_matches(ours, expected)


def assert_pa_reads_back(data: bytes, expected: pa.Table, fmt: str, batch_lengths=None,
                         full_validation: bool = True):
    """pyarrow reads `data` (stream or file), validates it and finds `expected`, in batches
    of `batch_lengths` rows when given (Table.to_batches() drops empty chunks, so callers pass
    the lengths they wrote).  full_validation=False only for data the oracle itself does not
    fully validate (e.g. old gold files with out-of-range date64 or decimal values)."""
    buf = pa.py_buffer(data)
    if fmt == "stream":
        reader = pa_ipc.open_stream(buf)
        batches = list(reader)
        schema = reader.schema
    else:
        reader = pa_ipc.open_file(buf)
        batches = [reader.get_batch(i) for i in range(reader.num_record_batches)]
        schema = reader.schema
    for batch in batches:
        batch.validate(full=full_validation)
    assert_schema_equal(schema, expected.schema)
    got = pa.Table.from_batches(batches, schema=schema)
    assert got.equals(expected), f"pyarrow read different values:\n{got}\n--- expected\n{expected}"
    if batch_lengths is not None:
        assert [b.num_rows for b in batches] == list(batch_lengths)
    return got


# ---------------------------------------------------------------------------------------------
# Hypothesis strategy (optional dependency).

def record_batches(max_columns: int = 4, max_length: int = 40):
    """Strategy of (pyarrow RecordBatch, slice) pairs over random issue-2 type mixes."""
    from hypothesis import strategies as st

    @st.composite
    def build(draw):
        case_ids = draw(st.lists(st.sampled_from(ISSUE2_CASE_IDS), min_size=1, max_size=max_columns))
        length = draw(st.integers(0, max_length))
        seed = draw(st.integers(0, 2 ** 16))
        null_ratio = draw(st.sampled_from([0.0, 0.1, 0.5, 1.0]))
        # unique column names even when a case repeats
        batch = make_batch(case_ids, length, seed, null_ratio)
        batch = batch.rename_columns([f"{c}_{i}" for i, c in enumerate(case_ids)])
        start = draw(st.integers(0, length))
        stop = draw(st.integers(start, length))
        return batch, (start, stop - start)

    return build()
