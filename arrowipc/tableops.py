"""arrowipc.tableops, kept importable: the operations it held are now the objects' own methods
(Array and ChunkedArray in arrowipc/array.py, RecordBatch and Table over TabularOps in
arrowipc/table.py), over the kernels of arrowipc/data/ (buffer sizes: arrowipc/data/sizes.py)."""
from .array import chunk_slices
from .data.sizes import referenced_buffer_size, total_buffer_size
from .table import TabularOps

__all__ = ["TabularOps", "chunk_slices", "referenced_buffer_size", "total_buffer_size"]
