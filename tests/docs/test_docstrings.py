"""Every public class, function, method and property has a docstring, so docs/api.md (generated
from them by docs/make_api.py) has no empty entry. Public means: the names `arrowipc` and
`arrowipc.ipc` export (`__all__`), the helper modules api.md documents, and the public members
those classes define themselves."""
import enum
import importlib
import inspect
import re

import pytest

MODULES = ["arrowipc", "arrowipc.ipc", "arrowipc.io", "arrowipc.validate", "arrowipc.integration"]


# `name(args)`, `Class.method(self, args)`, maybe `-> type`: what Cython puts first
EMBEDDED_SIGNATURE = re.compile(r"[\w.]+\(.*\)( -> .+)?")


def doc_text(obj) -> str:
    """The docstring without a signature line Cython may embed."""
    doc = obj.__dict__.get("__doc__") if inspect.isclass(obj) else getattr(obj, "__doc__", None)
    lines = inspect.cleandoc(doc or "").splitlines()
    if lines and EMBEDDED_SIGNATURE.fullmatch(lines[0].strip()):
        lines = lines[1:]
    return "\n".join(lines).strip()


def is_member(value) -> bool:
    """Methods and properties (Python or Cython); plain __slots__ attributes are data, not API
    entries, and api.md lists them with their class."""
    return isinstance(value, (property, classmethod, staticmethod)) or inspect.isroutine(value) \
        or inspect.isgetsetdescriptor(value)


def public_objects() -> dict:
    out = {}
    for modname in MODULES:
        module = importlib.import_module(modname)
        names = getattr(module, "__all__", None) or [n for n in vars(module) if not n.startswith("_")]
        for name in names:
            obj = getattr(module, name)
            if inspect.ismodule(obj) or not getattr(obj, "__module__", "").startswith("arrowipc"):
                continue
            out.setdefault(id(obj), (f"{modname}.{name}", obj))
    members = {}
    for qualname, obj in list(out.values()):
        if not inspect.isclass(obj) or issubclass(obj, (BaseException, enum.Enum)):
            continue
        for name, value in vars(obj).items():
            if not name.startswith("_") and is_member(value):
                value = getattr(value, "__func__", value)
                members[f"{qualname}.{name}"] = value
    return {q: o for q, o in out.values()} | members


def test_the_public_api_is_large_enough_to_mean_something():
    assert len(public_objects()) > 250


@pytest.mark.parametrize("modname", MODULES)
def test_every_public_module_has_all_and_a_docstring(modname):
    module = importlib.import_module(modname)
    assert doc_text(module), modname
    if modname in ("arrowipc", "arrowipc.ipc", "arrowipc.io"):
        exported = module.__all__
        assert exported and all(hasattr(module, n) for n in exported), modname


def test_every_public_object_has_a_docstring():
    missing = sorted(q for q, obj in public_objects().items() if not doc_text(obj))
    assert not missing, f"{len(missing)} public objects without a docstring:\n" + "\n".join(missing)
