"""Typed stubs for arrowipc._core.cdata (the Arrow C data and C stream interfaces)."""
from typing import (Any, Callable, Iterable, Iterator, Mapping, NamedTuple, Optional, Sequence,
                    Tuple)

from typing_extensions import TypeAlias, disjoint_base

from arrowipc._core.arraydata import ArrayData
from arrowipc.types import DataType, Field

# PyCapsules named "arrow_schema", "arrow_array" and "arrow_array_stream".
Capsule: TypeAlias = Any
Metadata: TypeAlias = Optional[Mapping[bytes, bytes]]

FLAG_DICTIONARY_ORDERED: int
FLAG_NULLABLE: int
FLAG_MAP_KEYS_SORTED: int

class SchemaNode(NamedTuple):
    format: str
    name: str
    metadata: Metadata
    flags: int
    children: Sequence["SchemaNode"]
    dictionary: Optional["SchemaNode"]

def live_exports() -> int: ...
def live_schema_exports() -> int: ...
def live_imports() -> int: ...

def encode_metadata(metadata: Metadata) -> Optional[bytes]: ...

def export_schema_capsule(node: SchemaNode) -> Capsule: ...
def export_array_capsule(data: ArrayData) -> Capsule: ...
def export_stream_capsule(schema: SchemaNode, iterator: Iterable[ArrayData]) -> Capsule: ...

def import_schema_capsule(capsule: Capsule) -> SchemaNode: ...
def import_array_capsule(array_capsule: Capsule, type: DataType) -> ArrayData: ...

@disjoint_base
class ImportedStream(Iterator[ArrayData]):
    @property
    def type(self) -> DataType: ...
    def close(self) -> None: ...
    def __iter__(self) -> "ImportedStream": ...
    def __next__(self) -> ArrayData: ...

def import_stream_capsule(capsule: Capsule, field_of: Callable[[SchemaNode], Field]
                          ) -> Tuple[Field, ImportedStream]: ...
