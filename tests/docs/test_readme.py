"""The README's examples, run in order as tests.

```pycon blocks are doctests sharing one namespace; ```console blocks list `$ arrowipc ...`
commands whose output must match what follows them. Everything runs in one temporary folder, so
files written by one block are there for the next. A block after `<!-- needs: spark -->` runs only
where the Spark data source and a Java runtime are available.
"""
import contextlib
import doctest
import importlib.util
import io
import os
import re
import shlex
import shutil

import pytest

from arrowipc.cli import main

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
README = os.path.join(REPO_ROOT, "README.md")
BLOCK = re.compile(r"(<!-- needs: (?P<needs>\w+) -->\n)?"
                   r"```(?P<lang>pycon|console)\n(?P<body>.*?)```", re.S)


def readme_blocks():
    text = open(README, encoding="utf-8").read()
    out = []
    for m in BLOCK.finditer(text):
        line = text.count("\n", 0, m.start("body")) + 1
        marks = [pytest.mark.spark] if m.group("needs") == "spark" else []
        out.append(pytest.param(m.group("lang"), m.group("body"), line, m.group("needs"),
                                id=f"{m.group('lang')}-line{line}", marks=marks))
    return out


BLOCKS = readme_blocks()


@pytest.fixture(scope="module")
def workdir(tmp_path_factory):
    return tmp_path_factory.mktemp("readme")


@pytest.fixture(scope="module")
def namespace():
    return {"__name__": "readme"}


def test_readme_has_examples():
    langs = [p.values[0] for p in BLOCKS]
    assert langs.count("pycon") >= 4 and langs.count("console") >= 1


def spark_available() -> bool:
    return (importlib.util.find_spec("pyspark") is not None
            and importlib.util.find_spec("arrowipc.spark") is not None
            and shutil.which("java") is not None)


@pytest.mark.parametrize("lang,body,line,needs", BLOCKS)
def test_readme_block(lang, body, line, needs, workdir, namespace, monkeypatch):
    if needs == "spark" and not spark_available():
        pytest.skip("needs pyspark, arrowipc.spark and java")
    if needs and needs != "spark":
        pytest.fail(f"unknown requirement {needs!r} at README line {line}")
    monkeypatch.chdir(workdir)
    if lang == "pycon":
        run_doctest(body, line, namespace)
    else:
        run_console(body, line)


def run_doctest(body: str, line: int, namespace: dict):
    parser = doctest.DocTestParser()
    test = parser.get_doctest(body, namespace, f"README.md line {line}", README, line - 1)
    assert test.examples, f"no >>> example in the block at README line {line}"
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    out = io.StringIO()
    runner.run(test, out=out.write, clear_globs=False)
    namespace.update(test.globs)             # DocTest works on a copy: keep what the block defined
    assert runner.failures == 0, out.getvalue()


def run_console(body: str, line: int):
    commands = []                            # [(command line, expected output lines)]
    for text in body.splitlines():
        if text.startswith("$ "):
            commands.append((text[2:], []))
        else:
            assert commands, f"README line {line}: output before any command"
            commands[-1][1].append(text)
    assert commands
    for command, expected in commands:
        argv = shlex.split(command)
        assert argv[0] == "arrowipc", command
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            status = main(argv[1:])
        assert status == 0, f"{command}: exit status {status}: {err.getvalue()}"
        got = [ln.rstrip() for ln in out.getvalue().splitlines()]
        assert got == [ln.rstrip() for ln in expected], f"{command} (README line {line})"
