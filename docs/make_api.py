#!/usr/bin/env python
"""Write docs/api.md, the API reference, from the public modules' signatures and docstrings.

    python docs/make_api.py            # rewrite docs/api.md (run from the repository root,
                                       # with the extensions built in place)

The public surface is what `arrowipc` and `arrowipc.ipc` export, plus the documented helper
modules listed in MODULES. tests/docs checks that every exported name appears in api.md.
"""
from __future__ import annotations

import enum
import importlib
import inspect
import os
import re
import sys
import types

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

# (module, title, what it is for); top-level names are grouped by GROUPS below
MODULES = [
    ("arrowipc.ipc", "arrowipc.ipc — streams, files and messages",
     "Reading and writing the IPC stream and file formats, mirroring `pyarrow.ipc`."),
    ("arrowipc.feather", "arrowipc.feather — Feather files", None),
    ("arrowipc.io", "arrowipc.io — in-memory sinks and sources",
     "Also exported at the top level."),
    ("arrowipc.compute", "arrowipc.compute — expressions and compute functions", None),
    ("arrowipc.dataset", "arrowipc.dataset — datasets of many files",
     "Directories, partitions and filters, mirroring `pyarrow.dataset` (docs/datasets.md)."),
    ("arrowipc.validate", "arrowipc.validate — validation of arrays", None),
    ("arrowipc.integration", "arrowipc.integration — Arrow integration-testing JSON", None),
    ("arrowipc.cli", "arrowipc.cli — the `arrowipc` command", None),
    ("arrowipc.accelerate", "arrowipc.accelerate — pyarrow's IPC calls served by arrowipc",
     "Imports pyarrow (the only module that does at import): see docs/accelerate.md."),
]

GROUPS = [
    ("Type factories", lambda n, o: inspect.isfunction(o) and _returns_type(n)),
    ("Data types", lambda n, o: inspect.isclass(o) and issubclass(o, _types().DataType)),
    ("Fields and schemas", lambda n, o: n in ("Field", "Schema", "field", "schema",
                                              "KeyValueMetadata")),
    ("Arrays", lambda n, o: n in ("Array", "ChunkedArray", "array", "chunked_array", "nulls")),
    ("Record batches and tables", lambda n, o: n in ("RecordBatch", "Table", "TableGroupBy",
                                                     "record_batch",
                                                     "table", "concat_tables",
                                                     "RecordBatchReader")),
    ("Tensors", lambda n, o: n == "Tensor" or n.startswith("Sparse") and inspect.isclass(o)),
    ("Buffers and I/O", lambda n, o: n in ("Buffer", "py_buffer", "allocate_buffer",
                                           "BufferOutputStream", "BufferReader",
                                           "MemoryMappedFile", "memory_map")),
    ("Extension types", lambda n, o: "extension" in n),
    ("Errors", lambda n, o: inspect.isclass(o) and issubclass(o, Exception)),
]


def _types():
    import arrowipc.types
    return arrowipc.types


def _returns_type(name: str) -> bool:
    import arrowipc
    f = getattr(arrowipc, name)
    return getattr(f, "__module__", "") == "arrowipc.types" and name not in ("field", "schema")


def public_names(module) -> list:
    names = getattr(module, "__all__", None)
    if names is None:
        names = [n for n in dir(module) if not n.startswith("_")
                 and not isinstance(getattr(module, n), types.ModuleType)]
    return sorted(names, key=str.lower)


def signature(obj) -> str:
    """The call signature without annotations (they are strings here, noisy in a table)."""
    try:
        sig = inspect.signature(obj)
        params = [p.replace(annotation=inspect.Parameter.empty) for p in sig.parameters.values()]
        return str(sig.replace(parameters=params, return_annotation=inspect.Signature.empty))
    except (TypeError, ValueError):
        doc = (getattr(obj, "__doc__", None) or "").strip().splitlines()
        if doc and "(" in doc[0] and doc[0].rstrip().endswith(")"):
            return doc[0][doc[0].index("("):]           # Cython's embedded signature
        return "(...)"


# the signature line Cython puts first in a docstring: `name(args)`, `Class.method(self, args)`,
# maybe with `-> type`
EMBEDDED_SIGNATURE = re.compile(r"[\w.]+\(.*\)( -> .+)?")


def doc_summary(obj, full: bool = False) -> str:
    # a class's own docstring only: inherited ones would repeat the base class's text
    doc = inspect.cleandoc(obj.__doc__ or "") if inspect.isclass(obj) else inspect.getdoc(obj) or ""
    lines = doc.splitlines()
    if lines and EMBEDDED_SIGNATURE.fullmatch(lines[0].strip()):
        lines = lines[1:]                                   # drop an embedded signature line
    text = "\n".join(lines).strip()
    if not full:
        text = text.split("\n\n")[0]
    return " ".join(text.split()) if not full else text


def class_members(cls) -> list:
    out = []
    for name, member in sorted(vars(cls).items()):
        if name.startswith("_") and name not in ("__arrow_c_array__", "__arrow_c_stream__",
                                                 "__arrow_c_schema__"):
            continue
        if isinstance(member, property):
            out.append((name, "property", doc_summary(member)))
        elif isinstance(member, (classmethod, staticmethod)):
            f = member.__func__
            out.append((name + signature(f).replace("(cls, ", "(").replace("(cls)", "()"),
                        "classmethod", doc_summary(f)))
        elif callable(member):
            sig = signature(member).replace("(self, ", "(").replace("(self)", "()")
            out.append((name + sig, "method", doc_summary(member)))
    return out


CAPSULE_DOCS = {
    "__arrow_c_schema__": "Arrow PyCapsule interface: the schema as an `arrow_schema` capsule.",
    "__arrow_c_array__": "Arrow PyCapsule interface: (`arrow_schema`, `arrow_array`) capsules, "
                         "zero-copy.",
    "__arrow_c_stream__": "Arrow PyCapsule interface: an `arrow_array_stream` capsule, zero-copy.",
}


def render_class(heading: str, cls) -> list:
    """A class's heading, summary and table of members."""
    lines = [heading]
    summary = doc_summary(cls)
    if summary:
        lines += ["", summary]
    members = class_members(cls)
    if members:
        lines += ["", "| member | kind | what it does |", "| --- | --- | --- |"]
        for m, kind, what in members:
            what = what or CAPSULE_DOCS.get(m.split("(")[0], "")
            lines.append(f"| `{m}` | {kind} | {what.replace('|', '/')} |")
    return lines


def render_object(name: str, obj) -> list:
    lines = []
    if inspect.isclass(obj) and issubclass(obj, enum.Enum):
        lines.append(f"### enum `{name}`")
        lines += ["", ", ".join(f"`{m.name}` = {m.value}" for m in obj)]
    elif inspect.isclass(obj) and issubclass(obj, BaseException):
        bases = ", ".join(b.__name__ for b in obj.__bases__)
        lines.append(f"### exception `{name}({bases})`")
        summary = doc_summary(obj)
        if summary:
            lines += ["", summary]
    elif inspect.isclass(obj):
        init = signature(obj).replace("(self, ", "(").replace("(self)", "()")
        lines += render_class(f"### class `{name}{init}`", obj)
    elif callable(obj):
        lines.append(f"### `{name}{signature(obj)}`")
        summary = doc_summary(obj)
        if summary:
            lines += ["", summary]
    else:
        lines.append(f"### `{name}` = `{obj!r}`")
    lines.append("")
    return lines


def render_top_level() -> list:
    import arrowipc
    names = public_names(arrowipc)
    placed = set()
    lines = ["## arrowipc — the columnar model", "",
             "`import arrowipc` loads the model only; numpy, flatbuffers and the codecs load when "
             "a feature needs them, and `arrowipc.ipc` on first use.", ""]
    for title, test in GROUPS:
        members = [n for n in names if n not in placed and test(n, getattr(arrowipc, n))]
        if not members:
            continue
        placed.update(members)
        lines += [f"### {title}", ""]
        if title == "Type factories":
            lines += ["| factory | example | result |", "| --- | --- | --- |"]
            for n in members:
                f = getattr(arrowipc, n)
                example, result = _factory_example(n, f)
                lines.append(f"| `{n}{signature(f)}` | `{example}` | `{result}` |")
            lines.append("")
            continue
        for n in members:
            lines += ["#" + line if line.startswith("### ") else line
                      for line in render_object(n, getattr(arrowipc, n))]
        if title == "Arrays":
            lines += render_array_classes()
    rest = [n for n in names if n not in placed]
    if rest:
        lines += ["### Other", ""]
        for n in rest:
            lines += ["#" + line if line.startswith("### ") else line
                      for line in render_object(n, getattr(arrowipc, n))]
    return lines


def render_array_classes() -> list:
    """The Array subclasses arrays are instances of, each with the members it adds."""
    array_module = importlib.import_module("arrowipc.array")   # arrowipc.array is the function
    classes = [c for c in vars(array_module).values()
               if inspect.isclass(c) and issubclass(c, array_module.Array)
               and c is not array_module.Array and not c.__name__.startswith("_")]
    lines = ["#### Array classes", "",
             "Every array is an instance of one of these `Array` subclasses (module "
             "`arrowipc.array`), chosen by its type; each adds the members listed.", ""]
    for cls in sorted(classes, key=lambda c: c.__name__):
        base = cls.__bases__[0].__name__
        lines += render_class(f"##### class `{cls.__name__}({base})`", cls)
        lines.append("")
    return lines


_EXAMPLE_ARGS = {
    "decimal32": (9, 2), "decimal64": (18, 2), "decimal128": (38, 10), "decimal256": (76, 10),
    "dictionary": ("int32", "string"), "duration": ("ms",), "fixed_size_binary": (16,),
    "time32": ("ms",), "time64": ("ns",), "timestamp": ("us",),
}


def _factory_example(name, f):
    import arrowipc
    args = _EXAMPLE_ARGS.get(name, ())
    shown = ", ".join(repr(a) for a in args)
    try:
        if name == "dictionary":
            t = f(arrowipc.int32(), arrowipc.string())
            shown = "arrowipc.int32(), arrowipc.string()"
        elif name in ("list_", "large_list", "list_view", "large_list_view"):
            t, shown = f(arrowipc.int64()), "arrowipc.int64()"
        elif name == "fixed_size_list":
            t, shown = f(arrowipc.float32(), 3), "arrowipc.float32(), 3"
        elif name == "map_":
            t, shown = f(arrowipc.string(), arrowipc.int64()), "arrowipc.string(), arrowipc.int64()"
        elif name == "struct":
            t, shown = f([("x", arrowipc.int8())]), "[('x', arrowipc.int8())]"
        elif name in ("sparse_union", "dense_union", "union"):
            extra = ", 'sparse'" if name == "union" else ""
            t = f([arrowipc.field("a", arrowipc.int8())], *(("sparse",) if name == "union" else ()))
            shown = "[arrowipc.field('a', arrowipc.int8())]" + extra
        elif name == "run_end_encoded":
            t, shown = f(arrowipc.int32(), arrowipc.string()), "arrowipc.int32(), arrowipc.string()"
        elif name == "type_for_alias":
            t, shown = f("int64"), "'int64'"
        else:
            t = f(*args)
        return f"{name}({shown})", str(t)
    except Exception as e:             # noqa: BLE001 - the table still lists the factory
        return f"{name}(...)", type(e).__name__


def render_module(modname: str, title: str, intro: str | None) -> list:
    try:
        module = importlib.import_module(modname)
    except ImportError:
        return []
    lines = [f"## {title}", ""]
    doc = doc_summary(module, full=True)
    if doc:
        lines += [doc, ""]
    if intro:
        lines += [intro, ""]
    names = public_names(module)
    if modname == "arrowipc.cli":
        names = ["main"]
    else:
        names = [n for n in names if getattr(getattr(module, n), "__module__", modname)
                 .startswith(modname) or modname in ("arrowipc.ipc", "arrowipc.compute")]
    for n in names:
        lines += render_object(n, getattr(module, n))
    return lines


def render() -> str:
    lines = ["# API reference", "",
             "Generated by `python docs/make_api.py` from the signatures and docstrings of the "
             "public modules; names and defaults mirror pyarrow where pyarrow has the same "
             "feature. See also [formats.md](formats.md) (what is covered and how it is tested), "
             "[validation.md](validation.md) (validation levels and the trust model) and "
             "[benchmarks.md](benchmarks.md).", "",
             "## Contents", ""]
    lines.append("- [arrowipc — the columnar model](#arrowipc--the-columnar-model)")
    for modname, title, _ in MODULES:
        anchor = title.lower().replace(" ", "-").replace(".", "").replace("—", "") \
            .replace("`", "").replace(",", "")
        lines.append(f"- [{title}](#{anchor})")
    lines.append("")
    lines += render_top_level()
    for modname, title, intro in MODULES:
        lines += render_module(modname, title, intro)
    return "\n".join(lines).rstrip() + "\n"


def main() -> int:
    text = render()
    with open(os.path.join(HERE, "api.md"), "w", encoding="utf-8") as f:
        f.write(text)
    print(f"wrote docs/api.md ({len(text.splitlines())} lines)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
