"""The arrowipc ETL pipeline on Spark: Arrow IPC in, Spark in the middle, Arrow IPC out, checked.

    python -m arrowipc.examples.etl [--rows N] [--files K] [--master local[2]] [--out DIR]
    arrowipc-etl ...                                   (the same, as installed by the wheel)

1. generate synthetic sales events with arrowipc: zstd-compressed .arrow files (dictionary
   strings, millisecond timestamps, unsigned quantities, nullable prices), and a product
   dimension table as an .arrows stream;
2. read both through the "arrowipc" Spark data source, join, aggregate revenue and margin per
   category, country and day, and write the result through the data source's writer;
3. check the result independently of Spark: read it back with arrowipc and recompute every
   group from the source files with numpy; print a report with timings and row counts.

Spark reads through the JVM data source when its jar is in the package (the fast path: columnar,
only the used columns, batches skipped by the statistics the events files carry), else through
the Python data source; the report says which. --compare-parquet times the same queries on the
events as Parquet (snappy), rounds interleaved, and prints the ratios.

Runs on embedded local Spark (local[2]) unless --master names a cluster; --conf KEY=VALUE passes
any Spark setting (e.g. spark.archives for a packed environment, see the README).
"""
from __future__ import annotations

import argparse
import datetime as dt
import os
import shutil
import sys
import tempfile
import time
from types import TracebackType
from typing import Any, Callable

import numpy as np

import arrowipc
from arrowipc import ipc
from arrowipc._core.arraydata import ArrayData
from arrowipc._core.bitmap import unpack_bits
from arrowipc.array import make_array

NDArray = np.ndarray[Any, Any]
# (category, country, day) -> (orders, units, revenue, margin)
Groups = dict[tuple[str, str, int], tuple[int, ...]]

__all__ = ["BATCH_ROWS", "CATEGORIES", "compare", "compare_with_parquet", "comparison_queries",
           "comparison_table", "COUNTRIES", "DAYS", "expected_groups", "generate", "main",
           "make_events", "make_products", "MS_PER_DAY", "N_PRODUCTS", "parse_args",
           "PRODUCT_ID_RANGE", "result_groups", "run_spark_job", "say", "SparkProgress", "Stage",
           "START_MS", "STATUS_SHARES", "STATUSES"]

COUNTRIES = ["DE", "FR", "US", "JP", "BR", "IN", "GB", "ES", "IT", "NL", "SE", "PL"]
STATUSES = ["ok", "refunded", "failed"]
STATUS_SHARES = [0.8, 0.12, 0.08]
CATEGORIES = ["books", "games", "garden", "kitchen", "music", "office", "outdoor", "pets",
              "sports", "toys"]
N_PRODUCTS = 1000          # events name product ids up to 1023: unknown products drop in the join
PRODUCT_ID_RANGE = 1024
DAYS = 28
START_MS = int(dt.datetime(2026, 1, 1, tzinfo=dt.timezone.utc).timestamp() * 1000)
MS_PER_DAY = 86_400_000
BATCH_ROWS = 131_072


def say(msg: str) -> None:
    """Print a progress line at once."""
    print(msg, flush=True)


class SparkProgress:
    """While a Spark job runs, prints its active stages' task counts every few seconds (Spark's
    console progress bar only draws on a terminal; this also shows in logs)."""

    def __init__(self, spark: Any, every: float = 5.0) -> None:
        import threading
        self.tracker = spark.sparkContext.statusTracker()
        self.every = every
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self.stop.wait(self.every):
            parts = []
            for sid in sorted(self.tracker.getActiveStageIds()):
                info = self.tracker.getStageInfo(sid)
                if info is not None:
                    parts.append(f"stage {sid}: {info.numCompletedTasks}/{info.numTasks} tasks"
                                 f" done, {info.numActiveTasks} running")
            if parts:
                say("      " + "; ".join(parts))

    def __enter__(self) -> SparkProgress:
        self.thread.start()
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.stop.set()
        self.thread.join()


class Stage:
    """Prints '[i/n] what ...' on entry and '      done in X s' on exit; keeps the time."""

    def __init__(self, timings: dict[str, float], index: int, total: int, what: str) -> None:
        self.timings, self.label, self.what = timings, f"[{index}/{total}]", what

    def __enter__(self) -> Stage:
        say(f"{self.label} {self.what} ...")
        self.t0 = time.perf_counter()
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        elapsed = time.perf_counter() - self.t0
        self.timings[self.what] = elapsed
        if exc_type is None:
            say(f"{' ' * len(self.label)} done in {elapsed:.2f} s")


# -- 1. synthetic data ---------------------------------------------------------------------------

def _dictionary_column(codes: NDArray, values: list[str]) -> arrowipc.Array:
    """A dictionary<int8, string> column from codes and its dictionary, without a Python loop."""
    data = ArrayData(arrowipc.dictionary(arrowipc.int8(), arrowipc.string()), len(codes), 0, 0,
                     [None, arrowipc.py_buffer(codes.astype(np.int8))], None,
                     arrowipc.array(values).data)
    return make_array(data)


def make_events(first_id: int, rows: int, rng: np.random.Generator) -> arrowipc.RecordBatch:
    """Sales events: ids, ms timestamps, users, products, dictionary strings, a nullable price."""
    price = rng.integers(199, 20_000, rows, dtype=np.int64)
    unknown_price = rng.random(rows) < 0.02
    # products are skewed: low ids sell more
    product = np.minimum(rng.exponential(300.0, rows), PRODUCT_ID_RANGE - 1).astype(np.int32)
    return arrowipc.RecordBatch.from_arrays([
        arrowipc.array(np.arange(first_id, first_id + rows, dtype=np.int64)),
        arrowipc.array(START_MS + rng.integers(0, DAYS * MS_PER_DAY, rows, dtype=np.int64),
                       type=arrowipc.timestamp("ms", tz="UTC")),
        arrowipc.array(rng.integers(0, 250_000, rows, dtype=np.int64)),
        arrowipc.array(product),
        _dictionary_column(rng.integers(0, len(COUNTRIES), rows), COUNTRIES),
        _dictionary_column(rng.choice(len(STATUSES), rows, p=STATUS_SHARES), STATUSES),
        arrowipc.array(rng.integers(1, 6, rows).astype(np.uint16)),
        arrowipc.array(np.ma.masked_array(price, mask=unknown_price)),
    ], names=["event_id", "ts", "user_id", "product_id", "country", "status", "quantity",
              "price_cents"])


def make_products(rng: np.random.Generator) -> arrowipc.RecordBatch:
    """The product dimension: id, name, category (large strings) and unit cost."""
    ids = np.arange(N_PRODUCTS, dtype=np.int32)
    categories = [CATEGORIES[i] for i in rng.integers(0, len(CATEGORIES), N_PRODUCTS)]
    return arrowipc.RecordBatch.from_arrays([
        arrowipc.array(ids),
        arrowipc.array([f"product-{i:04d}" for i in ids], type=arrowipc.large_string()),
        arrowipc.array(categories, type=arrowipc.large_string()),
        arrowipc.array(rng.integers(100, 8_000, N_PRODUCTS, dtype=np.int64)),
    ], names=["product_id", "name", "category", "unit_cost_cents"])


def generate(data_dir: str, rows: int, files: int, seed: int) -> dict[str, Any]:
    """Write the events files and the products stream; returns counts and sizes."""
    events_dir = os.path.join(data_dir, "events")
    os.makedirs(events_dir, exist_ok=True)
    rng = np.random.default_rng(seed)
    options = ipc.IpcWriteOptions(compression="zstd")
    per_file = -(-rows // files)
    written, first_id, nbytes = 0, 0, 0
    for k in range(files):
        n_file = min(per_file, rows - written)
        if n_file <= 0:
            break
        path = os.path.join(events_dir, f"events-{k:03d}.arrow")
        writer: ipc.RecordBatchFileWriter | None = None
        left = n_file
        while left > 0:
            n = min(BATCH_ROWS, left)
            batch = make_events(first_id, n, rng)
            if writer is None:
                writer = ipc.new_file(path, batch.schema, options=options,
                                      metadata={"generator": "arrowipc.examples.etl"},
                                      statistics=True)
            writer.write_batch(batch)
            first_id += n
            left -= n
        assert writer is not None           # n_file > 0: at least one batch was written
        writer.close()
        written += n_file
        nbytes += os.path.getsize(path)
    products_path = os.path.join(data_dir, "products.arrows")
    products = make_products(rng)
    with ipc.new_stream(products_path, products.schema) as w:
        w.write_batch(products)
    return {"events_dir": events_dir, "products": products_path, "event_rows": written,
            "event_files": files, "event_bytes": nbytes, "product_rows": products.num_rows}


# -- 2. the Spark job ----------------------------------------------------------------------------

def run_spark_job(spark: Any, events_dir: str, products_path: str, result_dir: str
                  ) -> dict[str, Any]:
    """The ETL job on Spark: sales of valid events joined with products, aggregated and
    written to `result_dir`; returns the events' schema and partition count."""
    from pyspark.sql import functions as F
    events = spark.read.format("arrowipc").load(events_dir)
    products = spark.read.format("arrowipc").load(products_path)
    sales = (events
             .where((F.col("status") == "ok") & F.col("price_cents").isNotNull())
             .join(F.broadcast(products), "product_id")
             .withColumn("day", F.to_date("ts"))
             .withColumn("revenue", F.col("quantity") * F.col("price_cents"))
             .withColumn("margin",
                         F.col("quantity") * (F.col("price_cents") - F.col("unit_cost_cents"))))
    result = (sales.groupBy("category", "country", "day")
              .agg(F.count(F.lit(1)).alias("orders"),
                   F.sum("quantity").alias("units"),
                   F.sum("revenue").alias("revenue_cents"),
                   F.sum("margin").alias("margin_cents"))
              .orderBy("category", "country", "day"))
    result.write.format("arrowipc").mode("overwrite").option("compression", "zstd").save(result_dir)
    return {"events_schema": events.schema.simpleString(),
            "event_partitions": events.rdd.getNumPartitions()}


# -- 3. the independent check --------------------------------------------------------------------

def _valid(col: Any) -> NDArray | None:
    """Which slots of an arrowipc column hold a value (None: all do)."""
    d = col.data
    if d.buffers[0] is None:
        return None
    return np.frombuffer(unpack_bits(d.buffers[0], d.offset, d.length), dtype=np.bool_)


def _values(col: Any, dtype: Any) -> NDArray:
    """The values buffer of a fixed-width arrowipc column, whatever its validity says."""
    d = col.data
    return np.frombuffer(d.buffers[1], dtype=dtype)[d.offset:d.offset + d.length]


def _dictionary_codes(col: Any, wanted: list[str]) -> NDArray:
    """The codes of a dictionary column, renumbered to positions in `wanted`."""
    lookup = np.array([wanted.index(v) for v in col.dictionary.to_pylist()], dtype=np.int64)
    codes: NDArray = lookup[col.indices.to_numpy()]
    return codes


def expected_groups(events_dir: str, products_path: str) -> tuple[Groups, int]:
    """{(category, country, day): (orders, units, revenue, margin)} recomputed with numpy from the
    source files, and the number of source rows read."""
    products = ipc.open_stream(products_path).read_all()
    n_keys = len(CATEGORIES) * len(COUNTRIES) * DAYS
    product_category = np.full(PRODUCT_ID_RANGE, -1, dtype=np.int64)
    product_cost = np.zeros(PRODUCT_ID_RANGE, dtype=np.int64)
    ids = products.column("product_id").to_pylist()
    product_category[ids] = [CATEGORIES.index(c) for c in products.column("category").to_pylist()]
    product_cost[ids] = products.column("unit_cost_cents").to_pylist()
    totals = np.zeros((4, n_keys), dtype=np.int64)
    rows = 0
    for name in sorted(os.listdir(events_dir)):
        reader = ipc.open_file(os.path.join(events_dir, name))
        for i in range(reader.num_record_batches):
            b = reader.get_batch(i)
            rows += b.num_rows
            column = {n: b.column(j) for j, n in enumerate(b.schema.names)}
            product = column["product_id"].to_numpy()
            category = product_category[product]
            status = _dictionary_codes(column["status"], STATUSES)
            keep = (status == STATUSES.index("ok")) & (category >= 0)
            valid_price = _valid(column["price_cents"])
            if valid_price is not None:
                keep &= valid_price
            day = column["ts"].to_numpy().view(np.int64) // MS_PER_DAY - START_MS // MS_PER_DAY
            country = _dictionary_codes(column["country"], COUNTRIES)
            key = ((category * len(COUNTRIES) + country) * DAYS + day)[keep]
            qty = column["quantity"].to_numpy().astype(np.int64)[keep]
            price = _values(column["price_cents"], np.int64)[keep]
            cost = product_cost[product[keep]]
            totals[0] += np.bincount(key, minlength=n_keys)
            totals[1] += _sums(key, qty, n_keys)
            totals[2] += _sums(key, qty * price, n_keys)
            totals[3] += _sums(key, qty * (price - cost), n_keys)
    groups: Groups = {}
    for k in np.flatnonzero(totals[0]):
        cat, rest = divmod(int(k), len(COUNTRIES) * DAYS)
        country_index, day_index = divmod(rest, DAYS)
        groups[(CATEGORIES[cat], COUNTRIES[country_index], day_index)] = \
            tuple(int(t) for t in totals[:, k])
    return groups, rows


def _sums(key: np.ndarray, weights: np.ndarray, n: int) -> np.ndarray:
    """Per-key int64 sums. bincount adds in float64, exact while every partial sum stays below
    2**53 (here at most ~1e13), which the assert keeps honest."""
    assert np.abs(weights).sum() < 2 ** 53
    return np.rint(np.bincount(key, weights=weights, minlength=n)).astype(np.int64)


def result_groups(result_dir: str) -> tuple[Groups, list[str]]:
    """{(category, country, day): (orders, units, revenue, margin)} read back with arrowipc, and
    the files read."""
    epoch_day0 = dt.date(1970, 1, 1) + dt.timedelta(days=START_MS // MS_PER_DAY)
    groups: Groups = {}
    files: list[str] = []
    for name in sorted(os.listdir(result_dir)):
        if name.startswith(("_", ".")):
            continue
        files.append(name)
        table = ipc.open_file(os.path.join(result_dir, name)).read_all()
        cols = table.to_pydict()
        for cat, country, day, orders, units, revenue, margin in zip(
                cols["category"], cols["country"], cols["day"], cols["orders"], cols["units"],
                cols["revenue_cents"], cols["margin_cents"]):
            key = (cat, country, (day - epoch_day0).days)
            if key in groups:
                raise AssertionError(f"group {key} appears twice in the result")
            groups[key] = (orders, units, revenue, margin)
    return groups, files


def compare(expected: Groups, got: Groups) -> list[str]:
    """Differences between the recomputed and the Spark groups, as lines (empty when equal)."""
    problems = []
    for key in sorted(set(expected) | set(got)):
        e, g = expected.get(key), got.get(key)
        if e != g:
            problems.append(f"group {key}: recomputed {e}, Spark wrote {g}")
    return problems


# -- optional: the issue-18 table, arrowipc against Parquet --------------------------------------

def comparison_queries(first_id: int, rows: int) -> dict[str, Callable[[Any], Any]]:
    """name -> function(DataFrame) running one query; the filter selects 1 % of the event ids."""
    from pyspark.sql import functions as F
    lo = first_id + rows // 2
    hi = lo + max(1, rows // 100)
    return {
        "read + aggregate": lambda df: df.groupBy("country").agg(
            F.count(F.lit(1)), F.sum("quantity"), F.sum("price_cents")).collect(),
        "count(*)": lambda df: df.count(),
        "1 % filter + aggregate": lambda df: df.where(
            (F.col("event_id") >= lo) & (F.col("event_id") < hi)).groupBy("status").agg(
            F.sum("price_cents")).collect(),
        "full scan to noop": lambda df: df.write.format("noop").mode("overwrite").save(),
    }


def compare_with_parquet(spark: Any, events_dir: str, parquet_dir: str, work: str, rows: int,
                         rounds: int = 3) -> dict[tuple[str, str], float]:
    """Best seconds per (query, source), each round running every query on both sources in turn
    (interleaved, so a busy machine slows both alike), plus writing the events both ways."""
    frames = {"arrowipc": spark.read.format("arrowipc").load(events_dir),
              "parquet": spark.read.parquet(parquet_dir)}
    queries = comparison_queries(0, rows)
    best: dict[tuple[str, str], float] = {}

    def timed(key: tuple[str, str], run: Callable[[], object]) -> None:
        t0 = time.perf_counter()
        run()
        best[key] = min(best.get(key, float("inf")), time.perf_counter() - t0)

    for _ in range(rounds):
        for name, query in queries.items():
            for source, df in frames.items():
                timed((name, source), lambda: query(df))
        src = frames["parquet"]
        timed(("write", "arrowipc"), lambda: src.write.format("arrowipc").mode("overwrite")
              .option("compression", "zstd").save(os.path.join(work, "w-arrowipc")))
        timed(("write", "parquet"), lambda: src.write.mode("overwrite")
              .option("compression", "snappy").parquet(os.path.join(work, "w-parquet")))
    return best


def comparison_table(best: dict[tuple[str, str], float], rows: int, rounds: int = 3
                     ) -> list[str]:
    """The markdown table of the best times, arrowipc against Parquet, per query and for the
    write."""
    lines = [f"{rows:,} events x 8 columns, best of {rounds}, rounds interleaved "
             f"(arrowipc: zstd .arrow with statistics; Parquet: snappy)",
             "| query | arrowipc (s) | Parquet (s) | arrowipc / Parquet |",
             "| --- | --- | --- | --- |"]
    for name in list(comparison_queries(0, 1)) + ["write"]:
        a, p = best[name, "arrowipc"], best[name, "parquet"]
        lines.append(f"| {name} | {a:.2f} | {p:.2f} | {a / p:.2f}x |")
    return lines


# -- driver --------------------------------------------------------------------------------------

def parse_args(argv: list[str] | None) -> argparse.Namespace:
    """The parsed command-line arguments."""
    ap = argparse.ArgumentParser(prog="arrowipc-etl", description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=10_000_000, help="events to generate (10000000)")
    ap.add_argument("--files", type=int, default=8, help="events files (8)")
    ap.add_argument("--master", default="local[2]", help="Spark master (local[2])")
    ap.add_argument("--conf", action="append", default=[], metavar="KEY=VALUE",
                    help="a Spark setting; repeat as needed")
    ap.add_argument("--out", default=None, help="work directory, kept (default: a temporary one)")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--compare-parquet", action="store_true",
                    help="also time the issue-18 queries on the events through arrowipc vs Parquet")
    args = ap.parse_args(argv)
    if args.rows <= 0 or args.files <= 0:
        ap.error("--rows and --files must be positive")
    conf = {}
    for item in args.conf:
        key, sep, value = item.partition("=")
        if not sep:
            ap.error(f"--conf expects KEY=VALUE, got {item!r}")
        conf[key] = value
    args.conf = conf
    return args


def main(argv: list[str] | None = None) -> int:
    """Run the example with command-line arguments `argv`; returns the exit status."""
    args = parse_args(argv)
    try:
        from arrowipc.spark.extras import require     # arrowipc.spark itself needs pyspark
        require("pyarrow")
    except ImportError as e:
        print(f"arrowipc-etl: {e}", file=sys.stderr)
        return 2
    work = args.out or tempfile.mkdtemp(prefix="arrowipc-etl-")
    os.makedirs(work, exist_ok=True)
    timings: dict[str, float] = {}
    total_t0 = time.perf_counter()
    n_stages = 5 if args.compare_parquet else 4
    say(f"arrowipc ETL: {args.rows:,} events in {args.files} files, Spark master {args.master}, "
        f"work directory {work}")
    try:
        with Stage(timings, 1, n_stages, "generate events and products with arrowipc"):
            info = generate(os.path.join(work, "input"), args.rows, args.files, args.seed)
            say(f"      {info['event_rows']:,} events in {info['event_files']} zstd .arrow files "
                f"({info['event_bytes'] / 1e6:.1f} MB); {info['product_rows']} products in "
                f"{os.path.basename(info['products'])}")
        with Stage(timings, 2, n_stages, "start Spark"):
            from arrowipc.spark import local_session
            from arrowipc.spark.extras import check_workers
            conf = dict(args.conf)
            if sys.stderr.isatty():
                conf.setdefault("spark.ui.showConsoleProgress", "true")
            spark = local_session(args.master, "arrowipc-etl", conf)
            from arrowipc.spark.session import source_in_use
            path_used = source_in_use(spark)
            jars_used = spark.sparkContext.getConf().get("spark.jars", "")
            say("      arrowipc source: " + ("JVM (DataSource V2 from the package's jar: columnar, "
                                            "pruned, statistics)" if path_used == "jvm" else
                                            "Python data source (no JVM jar on the classpath)"))
            import pyspark
            locations = check_workers(spark)      # one line, not a Java trace, if one cannot
            say(f"      Spark {pyspark.__version__}, default parallelism "
                f"{spark.sparkContext.defaultParallelism}")
        result_dir = os.path.join(work, "result")
        with Stage(timings, 3, n_stages, "Spark: read events + products, join, aggregate, write"):
            with SparkProgress(spark):
                job = run_spark_job(spark, info["events_dir"], info["products"], result_dir)
        with Stage(timings, 4, n_stages, "check: read the result with arrowipc, recompute from "
                                         "the source files"):
            got, result_files = result_groups(result_dir)
            expected, source_rows = expected_groups(info["events_dir"], info["products"])
            problems = compare(expected, got)
        parquet = None
        if args.compare_parquet:
            with Stage(timings, 5, n_stages, "time the queries: arrowipc source vs Parquet, "
                                             "interleaved"), SparkProgress(spark):
                parquet_dir = os.path.join(work, "events-parquet")
                spark.read.format("arrowipc").load(info["events_dir"]).write.mode(
                    "overwrite").option("compression", "snappy").parquet(parquet_dir)
                parquet = compare_with_parquet(spark, info["events_dir"], parquet_dir, work,
                                               info["event_rows"])
        spark.stop()
    except ImportError as e:    # a Python worker without the extra (MissingSparkExtra)
        print(f"arrowipc-etl: {e}", file=sys.stderr)
        return 3
    finally:
        if args.out is None:
            shutil.rmtree(work, ignore_errors=True)

    total = time.perf_counter() - total_t0
    ok = not problems and source_rows == info["event_rows"]
    say("")
    say("== arrowipc ETL report ==")
    say(f"events read by Spark : {info['event_rows']:,} rows in {job['event_partitions']} "
        f"partitions from {info['event_files']} files; schema {job['events_schema']}")
    say(f"products (.arrows)   : {info['product_rows']:,} rows")
    say(f"result               : {len(got):,} groups (category x country x day) in "
        f"{len(result_files)} zstd .arrow file{'s' if len(result_files) != 1 else ''}; "
        f"{sum(v[0] for v in got.values()):,} orders, "
        f"revenue {sum(v[2] for v in got.values()) / 100:,.2f}, "
        f"margin {sum(v[3] for v in got.values()) / 100:,.2f}")
    say(f"check                : {len(expected):,} groups recomputed from {source_rows:,} source "
        f"rows with numpy: " + ("all equal" if not problems else f"{len(problems)} differ"))
    for line in problems[:10]:
        say(f"  {line}")
    say(f"workers import arrowipc from: {', '.join(locations)}")
    for what, seconds in timings.items():
        say(f"  {seconds:7.2f} s  {what}")
    say(f"arrowipc source used  : {'JVM' if path_used == 'jvm' else 'Python'}")
    say(f"spark.jars            : {jars_used or '(none)'}")
    if parquet is not None:
        for line in comparison_table(parquet, info["event_rows"]):
            say(line)
    say(f"  {total:7.2f} s  total")
    say("ETL OK" if ok else "ETL FAILED")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
