"""Streams passed around as bytes (as a service or a queue hands them over): serialized,
read back with open_stream and RecordBatchStreamReader, deduplicated and sorted, and dumped
with the batches' custom metadata."""
import glob
import os
import sys

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.dataset as ds

source, target = sys.argv[1], sys.argv[2]

payloads = []
for path in sorted(glob.glob(os.path.join(source, "*.arrows"))):
    with open(path, "rb") as f:
        payloads.append(f.read())
print("payloads", len(payloads), sum(len(p) for p in payloads) > 0)

tables = []
for i, payload in enumerate(payloads):
    reader = (pa.ipc.open_stream(payload) if i % 2 == 0
              else pa.ipc.RecordBatchStreamReader(pa.BufferReader(payload)))
    tables.append(reader.read_all())
table = pa.concat_tables(tables)
levels = pc.unique(table["level"]).to_pylist()
print("rows", table.num_rows, "levels", sorted(levels))
counts = table.group_by("level").aggregate([("ts", "count")]).sort_by("level")
print("counts", counts.to_pydict())

errors = table.filter(pc.equal(table["level"], "error")).sort_by([("ts", "descending")])
sink = pa.BufferOutputStream()
with pa.ipc.new_stream(sink, errors.schema) as w:
    for n, batch in enumerate(errors.to_batches(max_chunksize=40)):
        w.write_batch(batch, custom_metadata={"part": str(n)})
buf = sink.getvalue()
with pa.ipc.open_stream(buf) as reader:
    parts = []
    while True:
        try:
            batch, meta = reader.read_next_batch_with_custom_metadata()
        except StopIteration:
            break
        parts.append((batch.num_rows, dict(meta) if meta else None))
print("parts", parts)

os.makedirs(target, exist_ok=True)
with open(os.path.join(target, "errors.arrows"), "wb") as f:
    f.write(buf.to_pybytes())
ds.write_dataset(errors, os.path.join(target, "by_level"), format="ipc",
                 partitioning=["level"], partitioning_flavor="hive")
print("dataset", ds.dataset(os.path.join(target, "by_level"), format="ipc",
                            partitioning="hive").count_rows())
