"""The package's layering, read from its own import statements (module level and lazy, .py and .pyx).

- `_core` (the physical layer) imports only `_core`, `errors` and the type vocabulary.
- No import cycle beyond the ones listed in KNOWN_CYCLES, which may only shrink: a new cycle, or a
  known one that grows, fails here.
"""
import ast
import pathlib
import re

import arrowipc

PACKAGE = pathlib.Path(arrowipc.__file__).parent
ROOT = PACKAGE.parent
CORE_MAY_IMPORT = ("arrowipc._core", "arrowipc.errors", "arrowipc.types", "arrowipc.extension")

# Cycles that remain, each closed only by lazy imports (see the closing notes of the layout issue):
# the model's objects offer pyarrow's conveniences (Schema.serialize, to_pandas, __arrow_c_*__),
# which call upward into ipc/, interop and the pandas conversion on first use.
KNOWN_CYCLES = [
    {"arrowipc", "arrowipc.array", "arrowipc.concat", "arrowipc.from_python", "arrowipc.interop",
     "arrowipc.ipc._batch_decode", "arrowipc.ipc._batch_encode", "arrowipc.ipc._framing",
     "arrowipc.ipc.dictionary", "arrowipc.ipc.metadata", "arrowipc.ipc.writer",
     "arrowipc.pandas_compat", "arrowipc.pandas_shim", "arrowipc.table", "arrowipc.to_python",
     "arrowipc.types", "arrowipc.validate", "arrowipc._core.cdata",
     "arrowipc._core.content_checks", "arrowipc.extension",
     # the table operations (issue 16): methods of Array/ChunkedArray/RecordBatch/Table whose
     # bodies live in their own modules and build arrays and tables in turn
     "arrowipc.tableops", "arrowipc.selection", "arrowipc.cast", "arrowipc.scalar",
     "arrowipc.batch_reader"},      # Table.to_reader returns one, and it builds Tables
]


def _modules():
    mods = {}
    for path in PACKAGE.rglob("*"):
        if path.suffix in (".py", ".pyx") and "__pycache__" not in path.parts:
            name = ".".join(path.relative_to(ROOT).with_suffix("").parts)
            mods[name.removesuffix(".__init__")] = path
    return mods


def _absolute(module: str, is_package: bool, level: int, target: str) -> str:
    if level == 0:
        return target
    base = module.split(".")[: len(module.split(".")) - (0 if is_package else 1)]
    base = base[: len(base) - (level - 1)]
    return ".".join(base + ([target] if target else []))


def _runtime_nodes(tree):
    """Every node except the bodies of `if TYPE_CHECKING:` (imports for annotations only)."""
    todo = [tree]
    while todo:
        node = todo.pop()
        yield node
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and isinstance(child.test, ast.Name) and \
                    child.test.id == "TYPE_CHECKING":
                todo.extend(child.orelse)
                continue
            todo.append(child)


def import_graph():
    """{module: {imported module of the package}} over every import statement, lazy ones too."""
    mods = _modules()
    graph = {}
    for name, path in mods.items():
        is_package = path.stem == "__init__"
        targets = set()

        def add(base, names):
            for n in names:
                full = f"{base}.{n}"
                targets.add(full if full in mods else base)

        text = path.read_text()
        if path.suffix == ".pyx":
            pattern = r"^\s*from\s+(\.*[\w.]*)\s+c?import\s+(?:\(([^)]*)\)|([\w, *]+))"
            for m in re.finditer(pattern, text, re.M):
                level = len(m.group(1)) - len(m.group(1).lstrip("."))
                base = _absolute(name, is_package, level, m.group(1).lstrip("."))
                names = (m.group(2) or m.group(3)).split(",")
                add(base, [n.split("#")[0].strip().split(" as ")[0] for n in names if n.strip()])
        else:
            for node in _runtime_nodes(ast.parse(text)):
                if isinstance(node, ast.ImportFrom):
                    base = _absolute(name, is_package, node.level, node.module or "")
                    add(base, [a.name for a in node.names])
                elif isinstance(node, ast.Import):
                    targets.update(a.name for a in node.names)
        graph[name] = {t for t in targets if t in mods and t != name}
    return graph


def cycles(graph):
    """The strongly connected components of more than one module (Tarjan, iterative)."""
    index, low, stack, on_stack, found, counter = {}, {}, [], set(), [], [0]
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = counter[0]
        counter[0] += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            v, children = work[-1]
            for w in children:
                if w not in index:
                    index[w] = low[w] = counter[0]
                    counter[0] += 1
                    stack.append(w)
                    on_stack.add(w)
                    work.append((w, iter(sorted(graph[w]))))
                    break
                if w in on_stack:
                    low[v] = min(low[v], index[w])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[v])
                if low[v] == index[v]:
                    comp = set()
                    while True:
                        w = stack.pop()
                        on_stack.discard(w)
                        comp.add(w)
                        if w == v:
                            break
                    if len(comp) > 1:
                        found.append(comp)
    return found


def test_core_imports_nothing_above_it():
    graph = import_graph()
    upward = sorted(f"{m} -> {t}" for m, ts in graph.items() if m.startswith("arrowipc._core")
                    for t in ts if not t.startswith(CORE_MAY_IMPORT))
    assert upward == []


def test_no_new_import_cycle():
    for comp in cycles(import_graph()):
        assert any(comp <= known for known in KNOWN_CYCLES), \
            f"a new import cycle, or a known one that grew: {sorted(comp)}"


def test_the_graph_sees_lazy_and_cython_imports():
    # the checks above are only as good as the graph: it must see a lazy import inside a function
    # and a Cython cimport
    graph = import_graph()
    assert "arrowipc.batch_reader" in graph["arrowipc.table"]              # lazy, in to_reader
    assert "arrowipc._core.buffer" in graph["arrowipc.ipc._framing"]       # cimport
    assert "arrowipc.ipc.recover" not in graph["arrowipc.ipc.reader"]      # TYPE_CHECKING only
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [{"a", "b", "c"}]
