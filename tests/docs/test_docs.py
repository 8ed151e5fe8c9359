"""docs/ stays true: the API reference names every public name, every test, script and gold file a
page mentions exists, links resolve, and the benchmark plot script makes a PNG."""
import importlib.util
import json
import os
import re
import subprocess
import sys
import types

import pytest

import arrowipc
from arrowipc import ipc

import testdata

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DOCS = os.path.join(REPO_ROOT, "docs")
PAGES = ["api.md", "formats.md", "validation.md", "benchmarks.md", "pyarrow-compat.md",
         "datasets.md"]


def page(name: str) -> str:
    return open(os.path.join(DOCS, name), encoding="utf-8").read()


def all_text() -> dict:
    texts = {name: page(name) for name in PAGES}
    texts["README.md"] = open(os.path.join(REPO_ROOT, "README.md"), encoding="utf-8").read()
    return texts


def test_every_page_exists():
    for name in PAGES:
        assert os.path.getsize(os.path.join(DOCS, name)) > 500, name


def public_names(module) -> list:
    names = getattr(module, "__all__", None) or [
        n for n in dir(module) if not n.startswith("_")
        and not isinstance(getattr(module, n), types.ModuleType)]
    return sorted(names)


@pytest.mark.parametrize("module", [arrowipc, ipc], ids=["arrowipc", "arrowipc.ipc"])
def test_api_reference_names_every_public_name(module):
    text = page("api.md")
    missing = [n for n in public_names(module) if f"`{n}" not in text]
    assert not missing, f"not in docs/api.md (run python docs/make_api.py): {missing}"


def test_api_generator_runs():
    spec = importlib.util.spec_from_file_location("make_api", os.path.join(DOCS, "make_api.py"))
    make_api = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(make_api)
    text = make_api.render()
    assert text.startswith("# API reference")
    for heading in ("## arrowipc — the columnar model", "## arrowipc.ipc", "### Type factories"):
        assert heading in text


def test_api_reference_has_no_empty_entry():
    """Every class and function heading of the generated reference is followed by its summary,
    and every member row says what the member does (a bare Cython signature counts as empty)."""
    spec = importlib.util.spec_from_file_location("make_api", os.path.join(DOCS, "make_api.py"))
    make_api = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(make_api)
    lines = make_api.render().splitlines()
    empty = []
    for i, line in enumerate(lines):
        if re.match(r"#{3,} (class |exception )?`", line) and "` = `" not in line:
            following = lines[i + 2] if i + 2 < len(lines) else ""
            if not following or following.startswith(("#", "|")):
                empty.append(line)
        elif line.startswith("| `"):
            what = line.rstrip(" |").rsplit(" | ", 1)[-1]
            if what in ("method", "property", "classmethod") or \
                    make_api.EMBEDDED_SIGNATURE.fullmatch(what.strip()):
                empty.append(line)
    assert not empty, "entries of docs/api.md without a summary:\n" + "\n".join(empty)


def test_mentioned_repository_paths_exist():
    pattern = re.compile(r"`((?:tests|bench|ci|docs|arrowipc|format|cpp)/[\w./{},-]+?)"
                         r"(?:::(\w+))?`")
    checked = 0
    for name, text in all_text().items():
        for path, function in pattern.findall(text):
            if "{" in path or "<" in path:
                continue
            full = os.path.join(REPO_ROOT, path.rstrip("/"))
            assert os.path.exists(full), f"{name} mentions {path}, which does not exist"
            if function:
                assert re.search(rf"def {function}\b", open(full).read()), \
                    f"{name} mentions {path}::{function}, which does not exist"
            checked += 1
    assert checked > 20


def test_mentioned_test_functions_exist():
    """`test_x` names quoted in formats.md next to a test file are defined in that file."""
    text = page("formats.md")
    for row in text.splitlines():
        files = re.findall(r"`(tests/[\w/]+\.py)`", row)
        for function in re.findall(r"`(test_\w+?)(?:\*)?`", row):
            sources = "".join(open(os.path.join(REPO_ROOT, f)).read() for f in files)
            stem = function.rstrip("_")
            assert f"def {stem}" in sources, f"formats.md: {function} not found in {files}"


def test_mentioned_gold_files_exist():
    folder = testdata.required(testdata.INTEGRATION)
    stems = {n.split(".")[0][len("generated_"):] for d in os.listdir(folder)
             if os.path.isdir(os.path.join(folder, d)) for n in os.listdir(os.path.join(folder, d))
             if n.startswith("generated_")}
    text = page("formats.md")
    gold_cells = [row.split("|")[4] for row in text.split("## Types")[1].split("## Features")[0]
                  .splitlines() if row.startswith("| ") and not row.startswith("| type")]
    mentioned = set()
    for cell in gold_cells:
        mentioned |= set(re.findall(r"`(\w+)`", cell))
    assert mentioned and mentioned <= stems, sorted(mentioned - stems)


def test_relative_links_resolve():
    link = re.compile(r"\]\(((?!https?:)[^)#]+)(#[^)]*)?\)")
    for name, text in all_text().items():
        base = REPO_ROOT if name == "README.md" else DOCS
        for target, _ in link.findall(text):
            assert os.path.exists(os.path.join(base, target)), f"{name}: broken link {target}"


def test_benchmarks_page_shows_the_plot_and_the_table():
    text = page("benchmarks.md")
    assert "![" in text and "benchmarks.png" in text
    assert "| ratio" in text or "ratio (arrowipc ÷ pyarrow)" in text
    png = open(os.path.join(DOCS, "benchmarks.png"), "rb").read()
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 5000


def _pytest_benchmark_report():
    benches = []
    for group, ours, theirs in (("write_stream-wide5m", 0.02, 0.04),
                                ("read_file_path-small1k", 0.3, 0.1)):
        for lib, median in (("arrowipc", ours), ("pyarrow", theirs)):
            benches.append({"group": group, "param": f"x-{lib}", "extra_info": {"lib": lib},
                            "stats": {"median": median}})
    return {"benchmarks": benches, "machine_info": {}}


def _users_report():
    """The shape bench/users.py writes: best of the interleaved rounds ("stat": "min")."""
    report = _pytest_benchmark_report()
    for bench in report["benchmarks"]:
        bench["stats"] = {"min": bench["stats"]["median"] / 2, "median": 1.0}
    report["stat"] = "min"
    return report


@pytest.mark.parametrize("kind", ["pytest-benchmark", "users", "arrowipc-bench"])
def test_plot_script_makes_a_png(tmp_path, kind):
    pytest.importorskip("matplotlib")
    if kind == "pytest-benchmark":
        report = _pytest_benchmark_report()
    elif kind == "users":
        report = _users_report()
    else:
        report = {"results": {"write_stream": {"arrowipc": 0.01, "pyarrow": 0.02},
                              "read_stream": {"arrowipc": 0.002, "pyarrow": 0.001}}}
    src = tmp_path / "report.json"
    src.write_text(json.dumps(report))
    out = tmp_path / "plot.png"
    p = subprocess.run([sys.executable, os.path.join(REPO_ROOT, "bench", "plot_ratios.py"),
                        str(src), "-o", str(out)], capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    if kind == "pytest-benchmark":
        assert "| write_stream-wide5m | 20.00 ms | 40.00 ms | 0.50 |" in p.stdout
        assert "| read_file_path-small1k | 300.00 ms | 100.00 ms | 3.00 |" in p.stdout
    elif kind == "users":
        assert "| group | arrowipc best | pyarrow best |" in p.stdout
        assert "| write_stream-wide5m | 10.00 ms | 20.00 ms | 0.50 |" in p.stdout
    else:
        assert "| write_stream | 10.00 ms | 20.00 ms | 0.50 |" in p.stdout
