"""write_dataset's file options the way a nightly job uses them, then count/head/take."""
import os
import sys

import pyarrow as pa
import pyarrow.dataset as ds

source, target = sys.argv[1], sys.argv[2]

source_data = ds.dataset(source, format="ipc")
table = source_data.to_table()
written = []
# preserve_order: pyarrow's threaded writer may otherwise put the rows in another order from run
# to run (the accelerator leaves a write with a file_visitor to pyarrow)
ds.write_dataset(table, target, format="ipc", max_rows_per_file=300, max_rows_per_group=100,
                 basename_template="chunk-{i}.arrow", preserve_order=True,
                 file_visitor=lambda f: written.append(os.path.basename(f.path)))
print("written", sorted(written))

try:
    ds.write_dataset(table, target, format="ipc")
except ValueError as e:             # pyarrow.ArrowInvalid is a ValueError
    print("refused", type(e).__name__, "already exists" in str(e) or "not empty" in str(e))

ds.write_dataset(table.slice(0, 50), target, format="ipc", basename_template="late-{i}.arrow",
                 existing_data_behavior="overwrite_or_ignore")
print("after ignore", sorted(os.listdir(target)))
ds.write_dataset(table.slice(0, 20), target, format="ipc", partitioning=["g"],
                 partitioning_flavor="hive", existing_data_behavior="delete_matching")
print("after delete", sorted(os.listdir(target)))

out = ds.dataset(target, format="ipc")
print("count", out.count_rows(), out.count_rows(filter=ds.field("x") < 100))
print("head", out.head(4).to_pydict())
print("take", out.take([5, 0, 5, 120]).to_pydict())
print("scanner take", out.scanner(columns=["x"], filter=ds.field("x") > 5).take([0, 2]).to_pydict())
try:
    out.take([10_000])
except IndexError as e:             # pyarrow.ArrowIndexError is an IndexError
    print("out of range", e)

# a dataset and a scanner as the input of a write, partitioned two levels deep
ds.write_dataset(source_data, target + "_copy", format="ipc",
                 partitioning=ds.partitioning(pa.schema([("g", pa.int32()), ("k", pa.string())])),
                 min_rows_per_group=50, max_rows_per_group=80)
copy = ds.dataset(target + "_copy", format="ipc",
                  partitioning=ds.partitioning(pa.schema([("g", pa.int32()), ("k", pa.string())])))
g1k3 = (ds.field("g") == 1) & (ds.field("k") == "k3")
print("copy", copy.count_rows(), copy.count_rows(filter=g1k3))
print("copy files", sorted(f[len(target + "_copy"):] for f in copy.files))
scanner = copy.scanner(columns={"x": ds.field("x"), "v10": ds.field("v") * 10},
                       filter=ds.field("k").isin(["k0", "k2"]), batch_size=64)
try:
    ds.write_dataset(scanner, target + "_late", format="ipc", max_rows_per_file=128)
except ValueError as e:             # the default row groups are larger than that
    print("refused", e)
ds.write_dataset(scanner, target + "_late", format="ipc", max_rows_per_file=128,
                 max_rows_per_group=128, existing_data_behavior="delete_matching")
late = ds.dataset(target + "_late", format="ipc")
print("late", late.schema, late.count_rows(), sorted(os.listdir(target + "_late")))
print("late first", sorted(late.to_table().column("x").to_pylist())[:3])
