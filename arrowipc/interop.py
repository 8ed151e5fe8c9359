"""The Arrow PyCapsule interface (arrowipc.interop, the public path): types, fields and ArrayData
from arrowipc.data.interop, record batches and streams of them from arrowipc.table."""
from .data.interop import (export_array, export_array_stream, export_schema, import_array,
                           import_array_stream, import_field, import_schema)
from .table import export_stream, import_record_batch, import_stream, peer_as_ours

__all__ = ["export_array", "export_array_stream", "export_schema", "export_stream", "import_array",
           "import_array_stream", "import_field", "import_record_batch", "import_schema",
           "import_stream", "peer_as_ours"]
