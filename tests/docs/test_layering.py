"""The package's layering, read from its own import statements (module level and lazy, .py and .pyx).

- `_core` (the physical layer) imports only `_core` and `errors`, without exception: the C data
  interface (`_core.cdata`) exchanges schemas as type-neutral SchemaNodes, which the kernel layer's
  `data.cschema` turns into types and back.
- The kernel layer `arrowipc/data/` (ArrayData in, ArrayData out) imports no object, face or ipc
  module, not even for type checking.
- No module imports a private (`_x`) name from another folder; modules themselves may be private
  (the Cython modules of `_core` and `ipc` are imported across folders by design).
- The graph as the code runs it counts each name looked up through arrowipc/_upcalls.py as an
  import of the module providing it; at most three modules use that locator, and that graph has
  no import cycle of more than three modules (methods of a lower class that return objects of a
  higher layer, such as Schema.empty_table, are attached by the higher module).
- `ipc/` imports nothing from `dissociated`, `spark` or `cli`.
"""
import ast
import importlib
import pathlib
import re


import arrowipc
from arrowipc import _upcalls

PACKAGE = pathlib.Path(arrowipc.__file__).parent
ROOT = PACKAGE.parent
CORE_MAY_IMPORT = ("arrowipc._core", "arrowipc.errors")


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


def _upcall_names(node):
    """The locator names a node looks up: `from .._upcalls import X` or `_upcalls.X`."""
    if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[-1] == "_upcalls":
        return [a.name for a in node.names if a.name in _upcalls.PROVIDERS]
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and \
            node.value.id == "_upcalls" and node.attr in _upcalls.PROVIDERS:
        return [node.attr]
    return []


def import_graph(lazy_edges=None, locator=False, locator_users=None):
    """{module: {imported module of the package}} over every import statement, lazy ones too.
    `lazy_edges`, a set, receives the (module, target) pairs made only inside functions. With
    `locator`, a name looked up through arrowipc/_upcalls.py counts as an import of the module
    providing it (the graph as the code runs it); `locator_users`, a set, receives the modules
    that look a name up there."""
    mods = _modules()
    graph = {}
    for name, path in mods.items():
        is_package = path.stem == "__init__"
        targets = set()
        eager = set()

        def add(base, names):
            found = {f"{base}.{n}" if f"{base}.{n}" in mods else base for n in names}
            targets.update(found)
            return found

        text = path.read_text()
        if path.suffix == ".py":
            for node in _runtime_nodes(ast.parse(text)):
                looked_up = _upcall_names(node)
                if looked_up and locator_users is not None:
                    locator_users.add(name)
                if looked_up and locator:
                    targets.update(_upcalls.PROVIDERS[n] for n in looked_up)
        if path.suffix == ".pyx":
            pattern = r"^\s*from\s+(\.*[\w.]*)\s+c?import\s+(?:\(([^)]*)\)|([\w, *]+))"
            for m in re.finditer(pattern, text, re.M):
                level = len(m.group(1)) - len(m.group(1).lstrip("."))
                base = _absolute(name, is_package, level, m.group(1).lstrip("."))
                names = (m.group(2) or m.group(3)).split(",")
                add(base, [n.split("#")[0].strip().split(" as ")[0] for n in names if n.strip()])
        else:
            tree = ast.parse(text)
            in_function = {id(n) for f in ast.walk(tree)
                           if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef))
                           for n in ast.walk(f)}
            for node in _runtime_nodes(tree):
                if isinstance(node, ast.ImportFrom):
                    base = _absolute(name, is_package, node.level, node.module or "")
                    found = add(base, [a.name for a in node.names])
                elif isinstance(node, ast.Import):
                    found = {a.name for a in node.names}
                    targets.update(found)
                else:
                    continue
                if id(node) not in in_function:
                    eager |= found
        graph[name] = {t for t in targets if t in mods and t != name}
        if lazy_edges is not None and path.suffix == ".py":
            lazy_edges.update((name, t) for t in graph[name] if t not in eager)
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


KERNEL_LAYER = "arrowipc.data"
KERNELS_MAY_IMPORT = ("arrowipc.data.", "arrowipc._core", "arrowipc.errors", "arrowipc.types",
                      "arrowipc.extension", "arrowipc.validate")
# (importing module, providing module, name): the private names crossing a folder; none may
PRIVATE_NAMES_ACROSS_FOLDERS: set[tuple[str, str, str]] = set()


def _folder(module: str, path: pathlib.Path) -> str:
    return module if path.stem == "__init__" else module.rpartition(".")[0]


def test_the_kernel_layer_imports_no_object_face_or_ipc_module():
    mods = _modules()
    wrong = []
    for name, path in mods.items():
        # arrowipc.data and its modules; not arrowipc.dataset, whose name merely starts alike
        in_layer = name == KERNEL_LAYER or name.startswith(KERNEL_LAYER + ".")
        if not in_layer or path.suffix != ".py":
            continue
        for node in ast.walk(ast.parse(path.read_text())):          # TYPE_CHECKING included
            if isinstance(node, ast.ImportFrom):
                base = _absolute(name, path.stem == "__init__", node.level, node.module or "")
                targets = {f"{base}.{a.name}" if f"{base}.{a.name}" in mods else base
                           for a in node.names}
            elif isinstance(node, ast.Import):
                targets = {a.name for a in node.names}
            else:
                continue
            wrong += [f"{name} -> {t}" for t in targets
                      if t.startswith("arrowipc") and t != KERNEL_LAYER
                      and not t.startswith(KERNELS_MAY_IMPORT)]
            wrong += [f"{name} -> {t}" for t in _upcall_names(node)]
    assert sorted(wrong) == []


def test_no_private_name_is_imported_across_folders():
    mods = _modules()
    crossing = set()
    for name, path in mods.items():
        if path.suffix != ".py":
            continue
        for node in _runtime_nodes(ast.parse(path.read_text())):
            if not isinstance(node, ast.ImportFrom) or not (node.level or (node.module or "")
                                                             .startswith("arrowipc")):
                continue
            base = _absolute(name, path.stem == "__init__", node.level, node.module or "")
            if base not in mods:
                continue
            for a in node.names:
                private = a.name.startswith("_") and not a.name.startswith("__")
                if private and f"{base}.{a.name}" not in mods and \
                        _folder(base, mods[base]) != _folder(name, path):
                    crossing.add((name, base, a.name))
    assert crossing == PRIVATE_NAMES_ACROSS_FOLDERS


def test_at_most_three_modules_use_the_locator():
    users = set()
    import_graph(locator=True, locator_users=users)
    assert len(users) <= 3, sorted(users)


def test_no_import_cycle_of_more_than_three_modules():
    assert [sorted(c) for c in cycles(import_graph(locator=True)) if len(c) > 3] == []


def test_ipc_imports_no_application_of_it():
    graph = import_graph()
    above = ("arrowipc.dissociated", "arrowipc.spark", "arrowipc.cli")
    wrong = sorted(f"{m} -> {t}" for m, ts in graph.items() if m.startswith("arrowipc.ipc")
                   for t in ts if t.startswith(above))
    assert wrong == []


def test_every_upcall_is_registered_by_its_provider():
    # each name a lower module looks up in _upcalls is the very object its provider defines
    for name, module in _upcalls.PROVIDERS.items():
        provider = importlib.import_module(module)
        assert getattr(_upcalls, name) is getattr(provider, name), name
    # and the lookups in the package name only declared upcalls
    used = set()
    for path in PACKAGE.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and (node.module or "").endswith("_upcalls") \
                    and node.level:
                used.update(a.name for a in node.names)
    assert used - {"register"} <= set(_upcalls.PROVIDERS)


def test_the_graph_sees_lazy_and_cython_imports():
    # the checks above are only as good as the graph: it must see a lazy import inside a function
    # and a Cython cimport
    lazy = set()
    graph = import_graph(lazy)
    assert ("arrowipc.array", "arrowipc.data.interop") in lazy             # in __arrow_c_array__
    assert ("arrowipc.array", "arrowipc.types") not in lazy                # module level
    assert "arrowipc._core.buffer" in graph["arrowipc.ipc._framing"]       # cimport
    assert "arrowipc.ipc.recover" not in graph["arrowipc.ipc.reader"]      # TYPE_CHECKING only
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [{"a", "b", "c"}]


def test_the_graph_counts_locator_lookups():
    # a name looked up in _upcalls is an import of its provider when the graph is asked so
    users = set()
    graph = import_graph(locator=True, locator_users=users)
    assert "arrowipc.pandas_compat" in graph["arrowipc.pandas_shim"]     # table_to_dataframe
    assert "arrowipc.pandas_compat" not in import_graph()["arrowipc.pandas_shim"]
    assert "arrowipc.pandas_shim" in users



# The modules that import pyarrow when they are imported (module level, outside TYPE_CHECKING);
# everything else imports it inside the function that hands an object to pyarrow, so
# `import arrowipc` and the readers and writers never load it.
PYARROW_AT_IMPORT = {
    "arrowipc.accelerate.served",      # the accelerator exists to hand pyarrow objects back
    "arrowipc.accelerate.datasets",    # and pyarrow.dataset's own dataset class, subclassed
    "arrowipc.spark.conversion",       # Spark's Arrow path is pyarrow's
}


def test_only_the_accelerator_and_spark_import_pyarrow_when_imported():
    found = set()
    for name, path in _modules().items():
        if path.suffix != ".py":
            continue
        tree = ast.parse(path.read_text())
        in_function = {id(n) for f in ast.walk(tree)
                       if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef))
                       for n in ast.walk(f)}
        for node in _runtime_nodes(tree):
            if id(node) in in_function:
                continue
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0:
                targets = [node.module or ""]
            else:
                continue
            if any(t.split(".")[0] == "pyarrow" for t in targets):
                found.add(name)
    assert found == PYARROW_AT_IMPORT
