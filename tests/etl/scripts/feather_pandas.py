"""pandas -> feather -> dataset filter -> pandas -> a feather dataset partitioned by city."""
import os
import sys

import pandas as pd
import pyarrow as pa
import pyarrow.dataset as ds
import pyarrow.feather as feather

source, target = sys.argv[1], sys.argv[2]

df = pd.read_csv(os.path.join(source, "sales.csv"), parse_dates=["when"])
df["city"] = df["city"].astype("category")
os.makedirs(target, exist_ok=True)
feather.write_feather(df, os.path.join(target, "sales.feather"), compression="zstd")

sales = ds.dataset(os.path.join(target, "sales.feather"), format="feather")
print("schema", sales.schema)
print("pandas meta", sorted(sales.schema.pandas_metadata) if sales.schema.metadata else None)
recent = sales.to_table(filter=ds.field("when") >= pd.Timestamp("2026-03-01"),
                        columns=["city", "qty", "price", "when"]).to_pandas()
recent["total"] = recent["qty"] * recent["price"]
print("recent", len(recent), round(float(recent["total"].sum()), 2), recent.dtypes.to_dict())
first = sales.head(3).to_pandas()
print("first", first.to_dict("list"))

ds.write_dataset(pa.Table.from_pandas(recent.astype({"city": str}), preserve_index=False),
                 os.path.join(target, "by_city"), format="feather", partitioning=["city"],
                 partitioning_flavor="hive",
                 file_options=ds.IpcFileFormat().make_write_options(compression="lz4"))
back = ds.dataset(os.path.join(target, "by_city"), format="feather",
                  partitioning=ds.HivePartitioning.discover(infer_dictionary=True))
print("by_city", back.count_rows(), str(back.schema.field("city").type))
frame = back.to_table(filter=ds.field("city") == "rome").to_pandas()
print("rome", len(frame), frame["city"].dtype.name, frame.columns.tolist())
feather.write_feather(frame, os.path.join(target, "rome.feather"))
print("again", feather.read_table(os.path.join(target, "rome.feather")).num_rows)
