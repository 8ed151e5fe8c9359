"""Keep the big orders of some days from a hive-partitioned IPC dataset, three columns,
partitioned by day again."""
import datetime
import sys

import pyarrow as pa
import pyarrow.dataset as ds

source, target = sys.argv[1], sys.argv[2]

events = ds.dataset(source, format="ipc", partitioning="hive")
print("files", len(events.files))
print("schema", events.schema.names, str(events.schema.field("day").type))

big = (ds.field("day") >= "2026-01-02") & (ds.field("amount") > 100)
table = events.to_table(columns=["user", "amount", "day"], filter=big)
print("rows", table.num_rows)

ds.write_dataset(table, target, format="ipc", partitioning=["day"],
                 partitioning_flavor="hive")
written = ds.dataset(target, format="ipc", partitioning="hive")
print("written", [path[len(target):] for path in written.files], written.count_rows())

# the same days read with a typed partitioning, a dict projection and isin
typed = ds.dataset(source, format="ipc",
                   partitioning=ds.partitioning(pa.schema([("day", pa.date32())]),
                                                flavor="hive"))
print("typed", str(typed.schema.field("day").type))
cents = typed.to_table(
    columns={"user": ds.field("user"), "cents": ds.field("amount") * 100,
             "day": ds.field("day")},
    filter=(ds.field("day") > datetime.date(2026, 1, 2)) & ds.field("country").isin(["de", "fr"]))
print("cents", cents.num_rows, cents.schema.names, str(cents.schema.field("cents").type))
ds.write_dataset(cents, target + "_typed", format="ipc",
                 partitioning=ds.partitioning(pa.schema([("day", pa.date32())]), flavor="hive"),
                 existing_data_behavior="overwrite_or_ignore")
for fragment in ds.dataset(target + "_typed", format="ipc", partitioning="hive").get_fragments():
    print("fragment", fragment.path[len(target):], fragment.partition_expression)
