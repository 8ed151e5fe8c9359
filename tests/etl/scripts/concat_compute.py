"""Per-file tables concatenated and handed to pyarrow.compute, then saved as one feather file."""
import os
import sys

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.dataset as ds
import pyarrow.feather as feather

source, target = sys.argv[1], sys.argv[2]

data = ds.dataset(source, format="ipc")
parts = [fragment.to_table() for fragment in data.get_fragments()]
table = pa.concat_tables(parts)
print("rows", table.num_rows, "sum", pc.sum(table["v"]).as_py())

table = table.append_column("v2", pc.multiply(table["v"], 2))
table = table.filter(pc.greater(table["v"], 10))
streamed = pa.Table.from_batches(data.to_batches(columns=["k"], batch_size=7))
print("streamed", streamed.num_rows, streamed.schema.names)
by_key = table.group_by("k").aggregate([("v2", "sum")]).sort_by("k")
print("by_key", by_key.to_pydict())
os.makedirs(target, exist_ok=True)
feather.write_feather(table.sort_by([("v", "descending")]), os.path.join(target, "big.feather"))
