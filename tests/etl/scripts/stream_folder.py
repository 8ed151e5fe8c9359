"""A folder of .arrows stream dumps (one per hour) -> filtered, in files of at most 250 rows."""
import glob
import os
import sys

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.dataset as ds

source, target = sys.argv[1], sys.argv[2]

tables = []
for path in sorted(glob.glob(os.path.join(source, "*.arrows"))):
    with pa.ipc.open_stream(path) as reader:
        tables.append(reader.read_all())
print("dumps", len(tables))

hours = ds.dataset(tables)
print("rows", hours.count_rows(), hours.schema.names)
errors = hours.to_table(filter=ds.field("level") == "error", columns=["ts", "msg", "level"])
print("errors", errors.num_rows)
ds.write_dataset(errors, target, format="ipc", max_rows_per_file=250, max_rows_per_group=100)
print("parts", sorted(os.listdir(target)))

# the dumps streamed straight into a dataset, batch by batch, never all in memory
def batches():
    for path in sorted(glob.glob(os.path.join(source, "*.arrows"))):
        with pa.ipc.open_stream(path) as reader:
            for batch in reader:
                yield batch.filter(pc.equal(batch["level"], "info"))


schema = tables[0].schema
reader = pa.RecordBatchReader.from_batches(schema, batches())
# rows taken by position below: the write keeps the batches' order (pyarrow's threads may not)
ds.write_dataset(reader, target + "_info", format="ipc", preserve_order=True,
                 max_rows_per_group=200, existing_data_behavior="overwrite_or_ignore")
info = ds.dataset(target + "_info", format="ipc")
print("info", info.count_rows(), info.head(2).to_pydict())
print("take", info.take(pa.array([799, 0, 5])).to_pydict())
ds.write_dataset(info.scanner(columns=["ts"], filter=ds.field("ts") >= 20000),
                 target + "_late", format="ipc")
print("late", ds.dataset(target + "_late", format="ipc").count_rows())
