"""Shared helpers of the command-line tests: run `arrowipc` and find the fixtures.

`run` calls `arrowipc.cli.main` in-process (fast; stdout and stderr captured by capsys);
`run_program` starts `python -m arrowipc` for what only a real process shows (exit status,
stdin, broken pipes). Gold files and the dictionary cases come from the repository's own copy of
the corpus (tests/data/, see tests/testdata.py).
"""
import os
import subprocess
import sys
from dataclasses import dataclass

import pytest

import testdata
from arrowipc.cli import main

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def corpus_dir() -> str:
    return testdata.ARROW_TESTING


def gold(stem: str, form: str = "file", version: str = "1.0.0-littleendian") -> str:
    """Path of a gold integration file (`generated_<stem>`); the test fails when it is absent."""
    suffix = ".arrow_file" if form == "file" else ".stream"
    return testdata.required(os.path.join(testdata.integration_dir(version),
                                          f"generated_{stem}{suffix}"))


def supplement(name: str) -> str:
    return testdata.required(os.path.join(testdata.IPC_SUPPLEMENT, name))


def fuzz_files(kind: str) -> list:
    folder = testdata.required(os.path.join(corpus_dir(), "data", f"arrow-ipc-{kind}"))
    return sorted(os.path.join(folder, n) for n in os.listdir(folder)
                  if n.startswith("clusterfuzz"))


@dataclass
class Result:
    status: int
    out: str
    err: str


def run(capsys, *args) -> Result:
    status = main([str(a) for a in args])
    out, err = capsys.readouterr()
    return Result(status, out, err)


def run_program(*args, stdin: bytes | None = None, timeout: float = 120) -> Result:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [REPO_ROOT, env.get("PYTHONPATH")]))
    p = subprocess.run([sys.executable, "-m", "arrowipc", *[str(a) for a in args]], input=stdin,
                       capture_output=True, env=env, timeout=timeout)
    return Result(p.returncode, p.stdout.decode("utf-8", "replace"),
                  p.stderr.decode("utf-8", "replace"))


def one_line_error(r: Result, command: str) -> str:
    """The single stderr line of a failed run (asserts there is exactly one, no traceback)."""
    lines = [ln for ln in r.err.splitlines() if ln.strip()]
    assert len(lines) == 1, r.err
    assert lines[0].startswith(f"arrowipc {command}: "), lines[0]
    assert "Traceback" not in r.err
    return lines[0]
