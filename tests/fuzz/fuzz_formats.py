"""Fuzz targets for the readers added over the IPC format: Feather V1 files, datasets holding a
damaged file, and pyarrow's serialized expressions.

Each execution takes a mutant of a seed (tests/fuzz/mutate.py's mutations, deterministic in
(seed, index)) and checks a property stronger than "no crash":

* ``feather_v1`` -- `feather.read_table` of the mutant gives a table that validates in full (and
  converts to Python or raises an arrowipc exception), or an arrowipc exception whose message
  names the file;
* ``dataset``    -- a directory of three files, the middle one the mutant (a file-format or a
  stream file): `to_table()`, `count_rows()` and a filtered `to_table()` each give a table that
  validates (and converts to Python or raises an arrowipc exception: full validation is not
  run by scans, as in pyarrow), or an arrowipc exception naming the mutant's file; with
  `exclude_invalid_files=True`, discovery never raises;
* ``expression`` -- `expression.deserialize` of a mutant of pyarrow's serialized form gives an
  Expression that prints, or an ArrowInvalid.

Anything else (a foreign exception, a hang, an error naming no file) is a finding, written to
tests/fuzz/findings/format-<target>-<hash> with a .txt saying how to rebuild it. Runs in this
process under an address-space limit, with one alarm per execution:

    python tests/fuzz/fuzz_formats.py --target feather_v1 --seconds 300
    python tests/fuzz/fuzz_formats.py --target dataset --max-execs 100000 --progress

The seeds are made here, by arrowipc (Feather V1 and IPC files of every V1 type) and by pyarrow
(its serialized expressions), cached in tests/fuzz/.seeds/formats/.
"""
from __future__ import annotations

import datetime
import decimal
import os
import random
import shutil
import sys
import tempfile
import warnings

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import mutate  # noqa: E402
from fuzz_loop import Finding, fuzz, limit_memory, save_finding, summary  # noqa: E402

TARGETS = ("feather_v1", "dataset", "expression")
SEEDS = os.path.join(HERE, ".seeds", "formats")


def _seed_table(kind):
    """A small table of the columns one seed covers."""
    import arrowipc as ai
    rows = 5
    if kind == "numbers":
        return ai.table({
            "i8": ai.array([1, None, -3, 4, 5], ai.int8()),
            "u16": ai.array([1, 2, None, 4, 65535], ai.uint16()),
            "i64": ai.array([1 << 40, None, -1, 0, 7], ai.int64()),
            "f32": ai.array([1.5, None, 2.5, float("nan"), 0.0], ai.float32()),
            "f64": ai.array([1.0, 2.0, None, -1.0, 1e300], ai.float64()),
            "b": ai.array([True, None, False, True, True], ai.bool_()),
        })
    if kind == "text":
        return ai.table({
            "s": ai.array(["a", None, "ccc", "", "ddddd"], ai.string()),
            "bin": ai.array([b"x", b"", None, b"yz", b"\x00"], ai.binary()),
            "cat": ai.array(["p", "q", None, "p", "q"]).dictionary_encode(),
        })
    if kind == "temporal":
        return ai.table({
            "d": ai.array([datetime.date(2026, 1, 1), None, datetime.date(1970, 1, 2),
                           datetime.date(2000, 2, 29), datetime.date(1999, 12, 31)],
                          ai.date32()),
            "ts": ai.array([0, 1, None, 3, 4], ai.timestamp("ms", tz="UTC")),
            "t": ai.array([0, 1000, None, 3, 4], ai.time32("ms")),
            "dec": ai.array([decimal.Decimal("1.25"), None, decimal.Decimal("-3.50"),
                             decimal.Decimal("0.00"), decimal.Decimal("9.99")],
                            ai.decimal128(5, 2)),
        })
    raise ValueError(kind)


def _write_seeds():
    """The seed files (written once into SEEDS): Feather V1 and V2 files and IPC streams of
    three tables, and pyarrow's serialized expressions."""
    from arrowipc import feather, ipc
    final, staging = SEEDS, f"{SEEDS}.{os.getpid()}"       # published whole, by a rename
    os.makedirs(staging, exist_ok=True)
    for kind in ("numbers", "text", "temporal"):
        table = _seed_table(kind)
        v1 = table if kind != "temporal" else table.drop_columns(["dec"])
        feather.write_feather(v1, os.path.join(staging, f"{kind}.v1.feather"), version=1)
        feather.write_feather(table, os.path.join(staging, f"{kind}.v2.arrow"),
                              compression="uncompressed", chunksize=2)
        with ipc.new_stream(os.path.join(staging, f"{kind}.arrows"), table.schema) as w:
            for batch in table.to_batches(max_chunksize=2):
                w.write_batch(batch)
    import pyarrow as pa
    import pyarrow.compute as pc
    expressions = [
        (pc.field("a") > 3) & pc.field("b").isin(["x", "y"]),
        pc.field("a").cast(pa.float64()) * 2.5 <= pc.field("c"),
        ~pc.field("s").is_null() | (pc.field(("n", "m")) == pa.scalar(1, pa.int8())),
        pc.field("d") != pa.scalar(datetime.date(2026, 1, 1)),
    ]
    for i, e in enumerate(expressions):
        with open(os.path.join(staging, f"expr{i}.bin"), "wb") as f:
            f.write(bytes(e.__reduce__()[1][0]))   # what pickling it carries
    try:
        os.rename(staging, final)
    except OSError:                     # another process published them first
        shutil.rmtree(staging, ignore_errors=True)


def seed_files(target):
    """The seed paths of `target`, written on first use."""
    if not os.path.exists(os.path.join(SEEDS, "temporal.arrows")):
        _write_seeds()
    names = sorted(os.listdir(SEEDS))
    if target == "feather_v1":
        picked = [n for n in names if n.endswith(".v1.feather")]
    elif target == "dataset":
        picked = [n for n in names if n.endswith((".v2.arrow", ".arrows"))]
    else:
        picked = [n for n in names if n.startswith("expr")]
    return [os.path.join(SEEDS, n) for n in picked]


def make_input(target, path, index):
    """The bytes of execution `index` on seed `path` (index 0 of every 50 the seed itself)."""
    if index % 50 == 0:
        return mutate._seed(path)
    return mutate.make_mutant(path, index)


def _names_file(message, path):
    return os.path.basename(path) in message


def run_feather_v1(data, workdir):
    from arrowipc import feather
    from arrowipc.errors import ArrowException
    path = os.path.join(workdir, "mutant.feather")
    with open(path, "wb") as f:
        f.write(data)
    try:
        table = feather.read_table(path)
    except ArrowException as e:
        if not _names_file(str(e), path):
            raise Finding(f"{type(e).__name__} names no file: {e}") from None
        return "error"
    table.validate(full=True)           # a V1 read validates every column in full
    try:
        table.to_pylist()
    except ArrowException:              # values Python cannot hold (a date past year 9999...)
        pass
    return "clean"


def run_dataset(data, workdir, seed):
    from arrowipc import dataset as ds
    from arrowipc.errors import ArrowException
    folder = os.path.join(workdir, "ds")
    shutil.rmtree(folder, ignore_errors=True)
    os.makedirs(folder)
    extension = ".arrows" if seed.endswith(".arrows") else ".arrow"
    for name in ("part-0", "part-2"):
        shutil.copyfile(seed, os.path.join(folder, name + extension))
    mutant = os.path.join(folder, "part-1" + extension)
    with open(mutant, "wb") as f:
        f.write(data)
    outcome = "clean"
    first_column = None
    for step in ("to_table", "count_rows", "filtered"):
        try:
            dataset = ds.dataset(folder, format=None)
            first_column = dataset.schema.names[0]
            if step == "count_rows":
                dataset.count_rows()
                continue
            table = dataset.to_table(filter=None if step == "to_table"
                                     else ds.field(first_column).is_valid())
        except ArrowException as e:
            if not _names_file(str(e), mutant):
                raise Finding(f"{step}: {type(e).__name__} names no file: {e}") from None
            outcome = "error"
            continue
        # what a scan hands out passes the reader's validation; what only full validation
        # rules out (as pyarrow's scans, they do not run it) may raise when converted
        table.validate()
        try:
            table.to_pylist()
        except ArrowException:
            pass
    try:
        ds.dataset(folder, exclude_invalid_files=True).files
    except ArrowException as e:
        raise Finding(f"exclude_invalid_files=True raised {type(e).__name__}: {e}") from None
    return outcome


def run_expression(data):
    from arrowipc.errors import ArrowInvalid
    from arrowipc.expression import deserialize
    try:
        str(deserialize(data))
    except ArrowInvalid:
        return "error"
    return "clean"


def _save(target, path, index, detail) -> str:
    return save_finding(f"format-{target}", make_input(target, path, index),
                        f"target {target}\nseed {path}\nindex {index}\n"
                        f"rebuild: fuzz_formats.make_input({target!r}, seed, index)\n{detail}\n")


def run(target, seconds=60.0, start=0, max_execs=None, progress=False, memory_limit=True):
    """Fuzz `target` until `seconds` pass or `max_execs` ran: (Counter of outcomes, [finding
    paths], executions, elapsed seconds)."""
    import arrowipc.dataset  # noqa: F401  (imported before the memory limit)
    import arrowipc.expression  # noqa: F401
    import arrowipc.feather  # noqa: F401
    pool = seed_files(target)
    if memory_limit:
        limit_memory()
    warnings.simplefilter("ignore")     # Feather V1's deprecation, said on every read
    with tempfile.TemporaryDirectory(prefix="arrowipc-fuzz-") as workdir:
        def execute(path, index):
            data = make_input(target, path, index)
            if target == "feather_v1":
                return run_feather_v1(data, workdir)
            if target == "dataset":
                return run_dataset(data, workdir, path)
            return run_expression(data)
        return fuzz(target, pool, execute, lambda path, index, detail: _save(target, path, index,
                                                                             detail),
                    seconds, start, max_execs, progress=progress)


def main(argv):
    import argparse
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--target", choices=TARGETS, required=True)
    ap.add_argument("--seconds", type=float, default=60.0)
    ap.add_argument("--max-execs", type=int, default=None)
    ap.add_argument("--start", type=int, default=0, help="first mutant index (resume a run)")
    ap.add_argument("--progress", action="store_true")
    args = ap.parse_args(argv)
    counts, findings, execs, elapsed = run(args.target, args.seconds, args.start,
                                           args.max_execs, args.progress)
    print(summary(args.target, counts, execs, elapsed), flush=True)
    return 1 if findings else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
