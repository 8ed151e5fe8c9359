"""Dictionaries in IPC: ids by schema position, the reader's memo and the writer's tracker.

Ids are assigned in schema pre-order (a dictionary field before the dictionaries nested in its
values), which is what the schema encoder writes. A path is the tuple of child indices from the
schema root, descending through a dictionary field's value type.
"""
from __future__ import annotations

from .. import types as T
from .._core.arraydata import ArrayData
from ..data.concat import concat_array_data
from ..errors import ArrowInvalid

TYPE_CHECKING = False               # typing itself is not imported at run time
if TYPE_CHECKING:
    from collections.abc import Iterable
    from typing import Any

    from ..table import Table
    from .metadata import SchemaInfo
    from ._batch_decode import ReadCounters
    from .options import IpcWriteOptions

    Path = tuple[int, ...]        # child indices from the schema root


__all__ = ["dictionary_paths", "DictionaryMemo", "DictionaryTracker", "find_nodes",
           "unify_table_dictionaries"]


def dictionary_paths(schema: T.Schema) -> list[tuple[Path, T.DictionaryType]]:
    """[(path, DictionaryType)] in pre-order; the position in the list is the dictionary id.
    Walked once per Schema object (schemas are immutable; a writer asks at every open)."""
    cache = schema._ipc_cache
    if cache is None:
        cache = schema._ipc_cache = {}
    hit = cache.get("dictionary_paths")
    if hit is None:
        hit = cache["dictionary_paths"] = tuple(_walk_dictionaries(schema))
    return list(hit)


def _walk_dictionaries(schema: T.Schema) -> list[tuple[Path, T.DictionaryType]]:
    out: list[tuple[Path, T.DictionaryType]] = []

    def walk(t: T.DataType, path: Path) -> None:
        if isinstance(t, T.DictionaryType):
            out.append((path, t))
            t = t.value_type
        st = t.storage_type
        for k, f in enumerate(st.fields):
            walk(f.type, path + (k,))

    for i, f in enumerate(schema):
        walk(f.type, (i,))
    return out


def _prefixes(paths: Iterable[Path]) -> set[Path]:
    out: set[Path] = set()
    for p in paths:
        for k in range(1, len(p) + 1):
            out.add(p[:k])
    return out


def find_nodes(root: ArrayData, root_type: T.DataType, root_path: Path, wanted: set[Path],
               prefixes: set[Path], found: dict[Path, list[ArrayData]],
               skip_self: bool = False) -> None:
    """Map each wanted path under `root` to the ArrayData nodes found there (several when shared).

    With skip_self, `root` is the values of the dictionary at `root_path`: only its descendants
    are searched.
    """
    if root_path in wanted and not skip_self:
        found.setdefault(root_path, []).append(root)
        # dictionaries nested in this dictionary's values live under root.dictionary
        if root.dictionary is not None and any(len(p) > len(root_path) and p[:len(root_path)] == root_path
                                               for p in wanted):
            find_nodes(root.dictionary, root_type, root_path, wanted, prefixes, found, True)
        return
    st = root_type.value_type.storage_type if isinstance(root_type, T.DictionaryType) else root_type.storage_type
    for k, child in enumerate(root.children):
        p = root_path + (k,)
        if p in prefixes:
            find_nodes(child, st.field(k).type, p, wanted, prefixes, found)


class DictionaryMemo:
    """Reader side: the current dictionary of every id, with deltas and replacements applied."""

    def __init__(self, info: SchemaInfo, stats: ReadCounters, where: str,
                 file_mode: bool = False) -> None:
        self.info = info                     # SchemaInfo: id -> DictionaryField(path, value_type)
        self.stats = stats
        self.where = where
        self.file_mode = file_mode
        self.values: dict[int, ArrayData] = {}                     # id -> ArrayData
        self.id_by_path = {p: i for i, f in info.dictionaries.items() for p in (f.paths or [f.path])}
        self._prefixes = _prefixes(self.id_by_path)

    def resolve(self, root: ArrayData, root_type: T.DataType, root_path: Path,
                skip_self: bool = False) -> None:
        """Attach the current dictionaries to every dictionary-encoded node under `root`."""
        found: dict[Path, list[ArrayData]] = {}
        wanted = set(self.id_by_path)
        find_nodes(root, root_type, root_path, wanted, self._prefixes, found, skip_self)
        for path, nodes in found.items():
            dict_id = self.id_by_path[path]
            for node in nodes:
                values = self.values.get(dict_id)
                if values is None:
                    if node.length and _null_count(node) < node.length:
                        raise ArrowInvalid(f"{self.where}: field at {path} uses dictionary id "
                                           f"{dict_id} before any dictionary batch defined it")
                    values = _empty(self.info.dictionaries[dict_id].value_type)
                node.dictionary = values

    def add(self, dict_id: int, values: ArrayData, is_delta: bool) -> None:
        """Apply one dictionary batch: the first for its id, a delta, or a replacement."""
        if dict_id not in self.info.dictionaries:
            raise ArrowInvalid(f"{self.where}: dictionary batch for id {dict_id}, which no field "
                               f"of the schema uses")
        old = self.values.get(dict_id)
        if is_delta:
            self.stats.count_dictionary_batch(True, False)
            self.values[dict_id] = values if old is None else concat_array_data([old, values])
            return
        if old is not None and self.file_mode:
            raise ArrowInvalid(f"{self.where}: a second non-delta dictionary for id {dict_id}; "
                               f"the file format does not allow dictionary replacement")
        self.stats.count_dictionary_batch(False, old is not None)
        self.values[dict_id] = values


def _null_count(d: ArrayData) -> int:
    from ..validate import null_count_of
    return null_count_of(d)


def _empty(t: T.DataType) -> ArrayData:
    from ..data.from_python import array_data_from_python
    return array_data_from_python([], t)


class DictionaryTracker:
    """Writer side: decides per batch which dictionary batches to emit (first, delta, replacement)."""

    def __init__(self, schema: T.Schema, options: IpcWriteOptions, file_mode: bool) -> None:
        self.paths = dictionary_paths(schema)
        self.wanted = {p for p, _ in self.paths}
        self.prefixes = _prefixes(self.wanted)
        self.options = options
        self.file_mode = file_mode
        self.last: dict[int, Any] = {}                      # id -> (ArrayData, python values) last written

    def __bool__(self) -> bool:
        return bool(self.paths)

    def dictionaries_for(self, schema: T.Schema, columns: list[ArrayData]
                         ) -> list[tuple[int, ArrayData, bool, str]]:
        """[(id, ArrayData to write, is_delta, kind)] for one batch; kind: new/delta/replace/None."""
        found: dict[Path, list[ArrayData]] = {}
        for i, (f, col) in enumerate(zip(schema, columns)):
            if (i,) in self.prefixes:
                find_nodes(col, f.type, (i,), self.wanted, self.prefixes, found)
        out = []
        # innermost first: a dictionary's values may use the dictionaries nested inside them
        order = sorted(range(len(self.paths)), key=lambda k: -len(self.paths[k][0]))
        for dict_id in order:
            path, dtype = self.paths[dict_id]
            nodes = found.get(path, [])
            dicts = [n.dictionary for n in nodes if n.dictionary is not None]
            if not dicts:
                if dict_id not in self.last:
                    empty = _empty(dtype.value_type)
                    out.append((dict_id, empty, False, "new"))
                    self.last[dict_id] = (empty, [])
                continue
            current = dicts[0]
            for other in dicts[1:]:
                if other is not current and _values(other) != _values(current):
                    raise ArrowInvalid(f"field at {path}: nodes of one batch carry different "
                                       f"dictionaries")
            prev = self.last.get(dict_id)
            if prev is None:
                out.append((dict_id, current, False, "new"))
                self.last[dict_id] = (current, None)
                continue
            prev_data, prev_values = prev
            if current is prev_data:
                continue
            new_values = _values(current)
            if prev_values is None:
                prev_values = _values(prev_data)
            if new_values == prev_values:
                self.last[dict_id] = (current, new_values)
                continue
            n = len(prev_values)
            if (self.options.emit_dictionary_deltas and len(new_values) > n
                    and new_values[:n] == prev_values):
                from ..array import make_array
                delta = current.slice(n)
                out.append((dict_id, delta, True, "delta"))
            elif self.file_mode:
                raise ArrowInvalid(f"dictionary for field at {path} changed between batches; the "
                                   f"file format cannot replace dictionaries (use "
                                   f"emit_dictionary_deltas for appended values, or "
                                   f"unify_dictionaries=True with write_table)")
            else:
                out.append((dict_id, current, False, "replace"))
            self.last[dict_id] = (current, new_values)
        return out


def _values(d: ArrayData) -> list[Any]:
    from ..array import make_array
    return make_array(d).to_pylist()


def unify_table_dictionaries(table: Table) -> Table:
    """A table whose batches share one dictionary per dictionary-encoded top-level column."""
    from ..array import make_array
    from ..data.from_python import array_data_from_python
    from ..table import RecordBatch, Table
    schema = table.schema
    batches = table.to_batches()
    dict_cols = [i for i, f in enumerate(schema) if isinstance(f.type, T.DictionaryType)]
    if not dict_cols or len(batches) < 2:
        return table
    new_cols = [list(b._columns) for b in batches]
    for i in dict_cols:
        dtype = schema.field(i).type
        assert isinstance(dtype, T.DictionaryType)      # dict_cols holds only those
        unified: list[Any] = []
        index: dict[tuple[type, Any], int] = {}
        per_batch = []
        for b in batches:
            col = b._columns[i]
            values = make_array(col.dictionary).to_pylist() if col.dictionary is not None else []
            for v in values:
                key = (type(v), v)
                if key not in index:
                    index[key] = len(unified)
                    unified.append(v)
            per_batch.append(values)
        dict_data = array_data_from_python(unified, dtype.value_type)
        for bi, b in enumerate(batches):
            col = b._columns[i]
            values = per_batch[bi]
            idx = make_array(col.copy_with(type=dtype.index_type, dictionary=None)).to_pylist()
            remapped = [None if x is None else index[(type(values[x]), values[x])] for x in idx]
            new = array_data_from_python(remapped, dtype.index_type)
            new_cols[bi][i] = ArrayData(dtype, new.length, 0, new.null_count, new.buffers, [], dict_data)
    return Table(schema, [RecordBatch(schema, cols, b.num_rows) for cols, b in zip(new_cols, batches)])
