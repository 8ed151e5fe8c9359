"""Read what a Spark job left (part files, _SUCCESS, .crc side files), keep one region, save it."""
import sys

import pyarrow.dataset as ds

source, target = sys.argv[1], sys.argv[2]

data = ds.dataset(source, format="arrow", partitioning="hive")
print("files", [f.split("/")[-1] for f in data.files])
print("schema", data.schema)
print("total", data.count_rows())
print("emea", data.count_rows(filter=ds.field("region") == "emea"))

for fragment in data.get_fragments(filter=ds.field("region") == "apac"):
    print("fragment", fragment.path.split("/")[-2], fragment.partition_expression,
          fragment.count_rows(), fragment.physical_schema.names)
    print("  head", fragment.head(2).to_pydict())

scanner = ds.Scanner.from_dataset(data, columns=["id", "score", "region"],
                                  filter=(ds.field("region") == "emea")
                                  & ds.field("score").is_valid())
print("projected", scanner.projected_schema.names, scanner.count_rows())
emea = scanner.to_reader().read_all()
print("batches", sum(batch.num_rows for batch in data.to_batches(filter=ds.field("id") > 1020)))
print("head", data.head(3, columns=["id"]).to_pydict())
ds.write_dataset(emea, target, format="feather")

# the same files listed by hand, as a job that got the paths from the driver does
listed = ds.dataset([f for f in data.files if "region=emea" in f], format="feather")
print("listed", listed.schema.names, listed.count_rows(), listed.to_table().num_columns)
