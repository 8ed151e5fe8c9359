"""Part files opened one by one the ways pyarrow's docs show (paths, memory maps, OSFile),
batches picked by index, joined with pandas, and saved as a compressed IPC file and a stream."""
import os
import sys

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.dataset as ds
import pyarrow.feather as feather

source, target = sys.argv[1], sys.argv[2]

paths = sorted(ds.dataset(source, format="ipc").files)
print("files", [os.path.basename(p) for p in paths])

firsts, lasts = [], []
for i, path in enumerate(paths):
    if i % 3 == 0:
        reader = pa.ipc.open_file(path)
    elif i % 3 == 1:
        reader = pa.ipc.open_file(pa.memory_map(path, "r"))
    else:
        reader = pa.ipc.RecordBatchFileReader(pa.OSFile(path, "rb"))
    print(os.path.basename(path), reader.num_record_batches, reader.schema.names)
    firsts.append(reader.get_batch(0))
    lasts.append(reader.get_record_batch(reader.num_record_batches - 1))

head = pa.Table.from_batches(firsts)
tail = pa.Table.from_batches(lasts)
print("head", head.num_rows, pc.min_max(head["x"]).as_py())
frame = head.to_pandas().merge(tail.to_pandas(), on="k", suffixes=("_h", "_t"))
summary = frame.groupby("k", as_index=False).agg(n=("x_h", "size"), top=("v_t", "max"))
print(summary.to_dict("list"))

table = pa.Table.from_pandas(summary, preserve_index=False)
table = table.replace_schema_metadata({"source": "file_random_access"})
os.makedirs(target, exist_ok=True)
options = pa.ipc.IpcWriteOptions(compression="zstd")
with pa.ipc.new_file(os.path.join(target, "summary.arrow"), table.schema, options=options) as w:
    w.write_table(table)
with pa.OSFile(os.path.join(target, "head.arrows"), "wb") as sink:
    with pa.ipc.new_stream(sink, head.schema) as w:
        for batch in head.to_batches(max_chunksize=50):
            w.write_batch(batch)
with pa.memory_map(os.path.join(target, "summary.arrow")) as source_file:
    again = pa.ipc.open_file(source_file).read_all()
print("again", again.equals(table), again.schema.metadata)
print("feather", feather.read_table(os.path.join(target, "summary.arrow"),
                                    columns=["top", "k"]).to_pydict())
