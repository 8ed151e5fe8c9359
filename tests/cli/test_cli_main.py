"""The command line as a whole: help, exit statuses, one-line errors, --debug, python -m."""
import os
import subprocess
import sys

import pytest

import arrowipc
from arrowipc import cli
from arrowipc.cli import (EXIT_INTERNAL, EXIT_INVALID_DATA, EXIT_IO, EXIT_OK, EXIT_UNSUPPORTED,
                          EXIT_USAGE)
from arrowipc.errors import ArrowNotImplementedError

from clitools import REPO_ROOT, gold, one_line_error, run, run_program

LEAN_CHECK = ("import sys; {stmt}; heavy = {{'numpy', 'flatbuffers', 'lz4', 'zstandard', "
              "'pyarrow'}} & {{m.split('.')[0] for m in sys.modules}}; print(sorted(heavy))")


def test_exit_statuses_are_distinct():
    codes = [EXIT_OK, EXIT_INVALID_DATA, EXIT_USAGE, EXIT_IO, EXIT_UNSUPPORTED, EXIT_INTERNAL]
    assert len(set(codes)) == len(codes)


def test_help_and_version(capsys):
    r = run(capsys, "--help")
    assert r.status == EXIT_OK
    for command in ("inspect", "head", "validate", "convert", "recover", "bench"):
        assert command in r.out
    r = run(capsys, "--version")
    assert r.status == EXIT_OK and r.out.strip() == f"arrowipc {arrowipc.__version__}"
    r = run(capsys, "convert", "--help")
    assert r.status == EXIT_OK and "--batch-rows" in r.out and "--alkaid" in r.out


def test_no_command_is_a_usage_error(capsys):
    r = run(capsys)
    assert r.status == EXIT_USAGE
    assert "usage: arrowipc" in r.err


@pytest.mark.parametrize("args,command", [
    (["frobnicate"], "arrowipc"),
    (["inspect"], "arrowipc inspect"),
    (["head", "--bogus", "x"], "arrowipc head"),
])
def test_usage_errors_are_one_line(capsys, args, command):
    r = run(capsys, *args)
    assert r.status == EXIT_USAGE
    (line,) = r.err.splitlines()
    assert line.startswith(f"{command}: error: ")
    assert "--help" in line


def test_debug_shows_the_traceback(capsys, tmp_path):
    bad = tmp_path / "bad.arrows"
    bad.write_bytes(b"\xff\xff\xff\xff\x08\x00\x00\x00" + b"\x01" * 8)
    quiet = run(capsys, "inspect", bad)
    assert quiet.status == EXIT_INVALID_DATA and "Traceback" not in quiet.err
    loud = run(capsys, "inspect", "--debug", bad)
    assert loud.status == EXIT_INVALID_DATA
    assert "Traceback (most recent call last)" in loud.err
    assert loud.err.rstrip().splitlines()[-1].startswith("arrowipc inspect: ")


def test_unsupported_and_internal_errors(capsys, monkeypatch):
    def unsupported(args):
        raise ArrowNotImplementedError("Tensor messages are not supported")

    def bug(args):
        raise RuntimeError("boom")

    from arrowipc.cli import inspect as inspect_command
    path = gold("primitive", "file")
    monkeypatch.setattr(inspect_command, "run", unsupported)
    r = run(capsys, "inspect", path)
    assert r.status == EXIT_UNSUPPORTED
    assert one_line_error(r, "inspect") == f"arrowipc inspect: {path}: unsupported: Tensor " \
                                           f"messages are not supported"
    monkeypatch.setattr(inspect_command, "run", bug)
    r = run(capsys, "inspect", path)
    assert r.status == EXIT_INTERNAL
    assert "internal error" in one_line_error(r, "inspect") and "boom" in r.err


def test_write_failure_is_an_io_error(capsys, tmp_path):
    r = run(capsys, "convert", gold("primitive", "stream"), tmp_path / "no" / "such" / "x.arrow")
    assert r.status == EXIT_IO
    assert "No such file or directory" in one_line_error(r, "convert")


def test_python_dash_m_and_real_exit_statuses(tmp_path):
    assert run_program("inspect", gold("primitive", "file")).status == EXIT_OK
    assert run_program("inspect", tmp_path / "missing").status == EXIT_IO
    assert run_program("head", "-n", "x", gold("primitive", "file")).status == EXIT_USAGE
    bad = tmp_path / "bad.arrow"
    bad.write_bytes(b"not arrow at all")
    r = run_program("validate", bad)
    assert r.status == EXIT_INVALID_DATA
    one_line_error(r, "validate")


def test_console_script_entry_point_is_declared():
    text = open(os.path.join(REPO_ROOT, "pyproject.toml")).read()
    assert 'arrowipc = "arrowipc.cli:main"' in text
    assert callable(cli.main)


@pytest.mark.parametrize("stmt", ["import arrowipc", "import arrowipc.cli",
                                  "import arrowipc.ipc",
                                  "from arrowipc.cli import main; main(['--help'])"])
def test_lean_imports(stmt):
    """numpy, flatbuffers and the codecs load only when a feature needs them."""
    env = dict(os.environ, PYTHONPATH=REPO_ROOT)
    out = subprocess.run([sys.executable, "-c", LEAN_CHECK.format(stmt=stmt)], env=env,
                         capture_output=True, text=True, check=True).stdout
    assert out.strip().splitlines()[-1] == "[]"


def test_inspect_and_validate_stay_lean():
    """Reading an uncompressed file needs none of the optional heavy modules."""
    path = gold("primitive", "file")
    stmt = (f"from arrowipc.cli import main; main(['inspect', {path!r}]); "
            f"main(['validate', {path!r}]); main(['head', {path!r}])")
    env = dict(os.environ, PYTHONPATH=REPO_ROOT)
    out = subprocess.run([sys.executable, "-c", LEAN_CHECK.format(stmt=stmt)], env=env,
                         capture_output=True, text=True, check=True).stdout
    assert out.strip().splitlines()[-1] == "[]"
