"""Fuzz target: the `pandas` schema metadata to_pandas reads (JSON that travels with the data).

Seeds are tables pyarrow writes with from_pandas (range, named and multi-level indexes, a
MultiIndex of columns, time zones, categoricals, pandas' masked and string dtypes, attrs). A
mutant is a deterministic function of (seed, index): one to three edits of the parsed JSON (a key
dropped or renamed, a value replaced by another JSON type, a dtype or kind string swapped for
another one, a list entry dropped or repeated, a value nested deeply) or of its bytes (cut short,
a byte changed, invalid UTF-8). Each mutant goes through `Table.to_pandas()` here and in pyarrow:

* an arrowipc ArrowInvalid is always acceptable (the docs promise it for malformed metadata);
* a DataFrame is acceptable when pyarrow gives an equal one;
* anything else is a finding: another exception type from arrowipc, or a DataFrame where
  pyarrow gives a different one or refuses the metadata.

    python tests/fuzz/fuzz_pandas_metadata.py --seconds 600      # long run: prints the counts
    python tests/fuzz/fuzz_pandas_metadata.py --count 2000 --start 50000

tests/fuzz/test_fuzz_pandas_metadata.py runs a short, fixed set of mutants on every CI run.
"""
from __future__ import annotations

import argparse
import collections
import copy
import json
import random
import sys
import time
import warnings

import numpy as np
import pandas as pd
import pyarrow as pa

import arrowipc

DTYPE_STRINGS = ["int64", "Int64", "float64", "Float32", "boolean", "bool", "object", "str",
                 "string", "category", "datetime64[ns]", "datetime64[ms]", "timedelta64[ns]",
                 "datetime64[ns, UTC]", "period[D]", "interval", "int9", "no such dtype", "",
                 "mixed", "mixed-integer", "unicode", "bytes", "datetimetz", "datetime", "date",
                 "decimal", "empty", "integer", "floating", "categorical", "range", "time"]
KEYS = ["columns", "index_columns", "column_indexes", "attributes", "name", "field_name",
        "pandas_type", "numpy_type", "metadata", "kind", "start", "stop", "step", "timezone"]


def seed_tables() -> list[pa.Table]:
    """pyarrow tables with the metadata shapes pyarrow writes."""
    n = 4
    plain = pd.DataFrame({"a": [1, 2, 3, 4], "s": ["x", None, "z", "w"],
                          "f": [1.5, None, 2.5, 3.5]})
    plain.attrs = {"source": "fuzz"}
    named = pd.DataFrame({"v": range(n)}, index=pd.Index(["p", "q", "r", "s"], name="key"))
    multi = pd.DataFrame({"v": range(n)},
                         index=pd.MultiIndex.from_arrays([[1, 1, 2, 2], ["a", "b", "a", "b"]],
                                                         names=["i", None]))
    cols = pd.DataFrame(np.arange(8).reshape(n, 2),
                        columns=pd.MultiIndex.from_tuples([("x", 1), ("y", 2)], names=["l0", "l1"]))
    tz = pd.DataFrame({"t": pd.date_range("2020-01-01", periods=n, tz="Europe/Paris"),
                       "c": pd.Categorical(["a", "b", "a", None]),
                       "m": pd.array([1, None, 3, 4], dtype="Int64"),
                       "b": pd.array([True, None, False, True], dtype="boolean")},
                      index=pd.RangeIndex(10, 10 + 2 * n, 2))
    int_columns = pd.DataFrame({0: [1.0, 2.0, 3.0, 4.0], 1: ["a", "b", "c", "d"]})
    date_columns = pd.DataFrame([[1, 2]] * n, columns=pd.to_datetime(["2021-01-01", "2021-01-02"]))
    out = []
    for df in (plain, named, multi, cols, tz, int_columns, date_columns):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out.append(pa.Table.from_pandas(df))
    return out


SEEDS = seed_tables()


def _paths(value: object, path: tuple = ()) -> list[tuple]:
    """Every path into a parsed JSON value (the root included), down to depth 8 (a value nested
    deeply by an earlier edit is not walked)."""
    out = [path]
    if len(path) >= 8:
        return out
    if isinstance(value, dict):
        for k, v in value.items():
            out += _paths(v, path + (k,))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            out += _paths(v, path + (i,))
    return out


def _random_value(rng: random.Random) -> object:
    choice = rng.randrange(12)
    if choice == 0:
        return None
    if choice == 1:
        return rng.choice([0, 1, -1, 2, 3, 2 ** 31, -2 ** 63, 2 ** 64, 10 ** 30])
    if choice == 2:
        return rng.choice([0.5, -1.5, 1e308, 1.0])
    if choice == 3:
        return rng.choice([True, False])
    if choice in (4, 5, 6):
        return rng.choice(DTYPE_STRINGS + KEYS + ["a", "v", "__index_level_0__", "(1, 2)",
                                                  "('x', 1)", "UTC", "+25:00", "Not/AZone"])
    if choice == 7:
        return []
    if choice == 8:
        return {}
    if choice == 9:
        return [rng.choice(DTYPE_STRINGS)]
    if choice == 10:
        return {"kind": "range", "name": None, "start": rng.choice([0, 1, -5]),
                "stop": rng.choice([0, 4, 10 ** 12]), "step": rng.choice([1, 0, -1, 2])}
    depth = rng.choice([10, 500, 5000])
    nested: object = "x"
    for _ in range(depth):
        nested = [nested]
    return nested


def _edit(meta: object, rng: random.Random) -> object:
    paths = _paths(meta)
    path = rng.choice(paths)
    if not path:
        return _random_value(rng) if rng.randrange(4) == 0 else meta
    parent = meta
    for p in path[:-1]:
        parent = parent[p]  # type: ignore[index]
    key = path[-1]
    op = rng.randrange(6)
    if op == 0:                                    # drop
        del parent[key]  # type: ignore[attr-defined]
    elif op == 1 and isinstance(parent, dict):     # rename the key
        parent[rng.choice(KEYS + ["other"])] = parent.pop(key)
    elif op == 2 and isinstance(parent, list):     # repeat an entry
        parent.insert(key, copy.deepcopy(parent[key]))
    elif op == 3:                                  # another string of the vocabulary
        parent[key] = rng.choice(DTYPE_STRINGS + KEYS)  # type: ignore[index]
    else:                                          # another JSON value
        parent[key] = _random_value(rng)  # type: ignore[index]
    return meta


def mutant(index: int) -> tuple[pa.Table, bytes]:
    """(seed table, mutated `pandas` metadata bytes) number `index`."""
    rng = random.Random(index)
    table = SEEDS[index % len(SEEDS)]
    raw = table.schema.metadata[b"pandas"]
    if rng.randrange(10) == 0:                     # the bytes themselves
        data = bytearray(raw)
        op = rng.randrange(3)
        if op == 0:
            data = data[:rng.randrange(len(data))]
        elif op == 1:
            data[rng.randrange(len(data))] = rng.randrange(256)
        else:
            data[rng.randrange(len(data)):0] = b"\xff\xfe"
        return table, bytes(data)
    meta: object = json.loads(raw)
    for _ in range(rng.randrange(1, 4)):
        try:
            meta = _edit(meta, rng)
        except RecursionError:              # copying a value nested deeply by an earlier edit
            break
    try:
        return table, json.dumps(meta).encode()
    except (ValueError, RecursionError):
        return table, b"[" * 100_000 + b"]" * 100_000


def run_one(table: pa.Table, raw: bytes) -> tuple[str, str]:
    """(outcome, detail): outcome is 'same', 'invalid' or a finding's kind."""
    md = dict(table.schema.metadata)
    md[b"pandas"] = raw
    theirs_table = table.replace_schema_metadata(md)
    ours_table = arrowipc.table(theirs_table)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            got = ours_table.to_pandas()
        except arrowipc.ArrowInvalid:
            return "invalid", ""
        except Exception as e:              # a foreign exception: the finding this target hunts
            return "foreign", f"{type(e).__name__}: {str(e)[:300]}"
        try:
            expected = theirs_table.to_pandas()
        except Exception as e:
            return "lenient", f"pyarrow: {type(e).__name__}: {str(e)[:300]}"
    try:
        same_attrs = got.attrs == expected.attrs
    except RecursionError:          # attrs nested too deeply to compare: both read the same JSON
        same_attrs = True
    if not same_attrs:
        return "different", f"attrs {str(got.attrs)[:100]} != {str(expected.attrs)[:100]}"
    got.attrs, expected.attrs = {}, {}
    try:
        pd.testing.assert_frame_equal(got, expected, check_exact=False, rtol=0, atol=0)
    except AssertionError as e:
        return "different", str(e)[:300]
    return "same", ""


def run(start: int, count: int | None, seconds: float | None, quiet: bool = True,
        progress: int = 0) -> tuple[collections.Counter, list]:
    """Run mutants start, start+1, ... until `count` ran or `seconds` passed: (outcome counts,
    [(index, outcome, detail, metadata bytes)] of the findings). `progress`: print the counts
    every that many executions (0: never)."""
    began = time.monotonic()
    counts: collections.Counter = collections.Counter()
    findings = []
    deadline = None if seconds is None else time.monotonic() + seconds
    i = start
    while (count is None or i < start + count) and (deadline is None or
                                                       time.monotonic() < deadline):
        table, raw = mutant(i)
        outcome, detail = run_one(table, raw)
        counts[outcome] += 1
        if outcome not in ("same", "invalid"):
            findings.append((i, outcome, detail, raw))
            if not quiet:
                print(f"mutant {i}: {outcome}: {detail}", flush=True)
        i += 1
        if progress and (i - start) % progress == 0:
            print(f"mutants up to {i}: {i - start} executions in "
                  f"{time.monotonic() - began:.0f} s: {dict(counts)}", flush=True)
    return counts, findings


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--start", type=int, default=0)
    parser.add_argument("--count", type=int, default=None)
    parser.add_argument("--seconds", type=float, default=None)
    parser.add_argument("--progress", type=int, default=0,
                        help="print the counts every that many executions")
    args = parser.parse_args(argv)
    if args.count is None and args.seconds is None:
        args.count = 1000
    began = time.monotonic()
    counts, findings = run(args.start, args.count, args.seconds, quiet=False,
                          progress=args.progress)
    total = sum(counts.values())
    print(f"{total} executions in {time.monotonic() - began:.0f} s: {dict(counts)}; "
          f"{len(findings)} findings")
    return 1 if findings else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
