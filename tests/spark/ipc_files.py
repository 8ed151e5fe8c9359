"""Writing the IPC files the Spark tests read (imported by those tests, not collected)."""
import pyarrow as pa

import arrowipc
from arrowipc import ipc


def write_ipc_file(path: str, table: pa.Table, statistics: bool, chunk: int) -> None:
    """`table` as an IPC file at `path` in batches of `chunk` rows: with `statistics`, by
    arrowipc's writer with the footer's summary (which answers count(*) and prunes); without,
    by pyarrow's, as another producer would write it."""
    if statistics:
        with ipc.new_file(path, arrowipc.schema(table.schema), statistics=True) as w:
            w.write_table(arrowipc.table(table), max_chunksize=chunk)
    else:
        with pa.ipc.new_file(path, table.schema) as w:
            w.write_table(table, max_chunksize=chunk)
