"""`python -m arrowipc.accelerate script.py [args]` and `-m module [args]` run unchanged pyarrow
code as python would, served by arrowipc; ARROWIPC_ACCELERATE_REPORT=1 prints the report at exit;
pyarrow's own test_ipc.py passes under the accelerator."""
import os
import pathlib
import subprocess
import sys
import textwrap

import pytest

pa = pytest.importorskip("pyarrow")

REPO = pathlib.Path(__file__).resolve().parent.parent.parent
PYARROW_TEST_IPC = pathlib.Path(pa.__file__).parent / "tests" / "test_ipc.py"
HANG_GUARD = 300           # seconds: a hung subprocess fails the test instead of the whole run

SCRIPT = textwrap.dedent("""
    import sys
    import pyarrow as pa
    import pyarrow.ipc as ipc
    import helper_next_to_script                        # the script's folder is on sys.path

    print("name", __name__)
    print("argv", sys.argv)
    table = pa.table({"a": [1, 2, 3], "s": ["x", None, "z"]})
    with ipc.new_file(sys.argv[1], table.schema) as w:
        w.write_table(table)
    reader = ipc.open_file(sys.argv[1])
    assert isinstance(reader, ipc.RecordBatchFileReader), type(reader)
    got = reader.read_all()
    assert type(got) is pa.Table and got.equals(table)
    print("served", type(got).__module__, pa.concat_tables([got, got]).num_rows)
""")


def run(args, tmp_path, report=True, extra_path=()):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(REPO), *map(str, extra_path)]))
    env.pop("ARROWIPC_ACCELERATE_REPORT", None)
    if report:
        env["ARROWIPC_ACCELERATE_REPORT"] = "1"
    return subprocess.run([sys.executable, "-m", "arrowipc.accelerate", *args], cwd=tmp_path,
                          env=env, capture_output=True, text=True, timeout=HANG_GUARD)


def test_a_script_runs_as_main_with_its_arguments_and_the_report(tmp_path):
    script = tmp_path / "job.py"
    script.write_text(SCRIPT)
    (tmp_path / "helper_next_to_script.py").write_text("")
    out_file = str(tmp_path / "out.arrow")
    result = run([str(script), out_file, "--flag"], tmp_path)
    assert result.returncode == 0, result.stderr
    assert "name __main__" in result.stdout
    assert f"argv {[str(script), out_file, '--flag']!r}" in result.stdout
    assert "served pyarrow.lib 6" in result.stdout      # pyarrow objects all along
    lines = result.stderr.strip().splitlines()
    assert "ipc.RecordBatchFileWriter" in result.stderr
    assert lines[-1] == "arrowipc.accelerate: served 2 calls, 0 fell back to pyarrow"


def test_a_module_runs_with_dash_m(tmp_path):
    module_dir = tmp_path / "mods"
    module_dir.mkdir()
    (module_dir / "helper_next_to_script.py").write_text("")
    (module_dir / "etl_job.py").write_text(SCRIPT)
    out_file = str(tmp_path / "out.arrow")
    result = run(["-m", "etl_job", out_file], tmp_path, extra_path=[module_dir])
    assert result.returncode == 0, result.stderr
    assert "name __main__" in result.stdout
    assert f"argv {[str(module_dir / 'etl_job.py'), out_file]!r}" in result.stdout
    assert result.stderr.strip().splitlines()[-1] == \
        "arrowipc.accelerate: served 2 calls, 0 fell back to pyarrow"


def test_no_report_without_the_variable_and_the_exit_status_is_the_scripts(tmp_path):
    script = tmp_path / "fails.py"
    script.write_text("import pyarrow.ipc as ipc, sys\n"
                      "ipc.open_stream(b'\\xff\\xff\\xff\\xff\\x08\\x00\\x00\\x00xx')\n")
    result = run([str(script)], tmp_path, report=False)
    assert result.returncode == 1
    assert "pyarrow.lib.ArrowInvalid" in result.stderr      # pyarrow's answer to bad bytes
    assert "arrowipc.accelerate:" not in result.stderr
    script.write_text("import sys; sys.exit(3)\n")
    assert run([str(script)], tmp_path).returncode == 3


def test_usage_without_a_script(tmp_path):
    result = run([], tmp_path, report=False)
    assert result.returncode == 2 and "usage: python -m arrowipc.accelerate" in result.stderr


def test_pyarrows_test_ipc_passes_under_the_accelerator(tmp_path):
    result = run(["-m", "pytest", str(PYARROW_TEST_IPC), "-q", "-p", "no:cacheprovider",
                  "--rootdir", str(tmp_path)], tmp_path)
    tail = result.stdout[-3000:] + result.stderr[-3000:]
    assert result.returncode == 0, tail
    assert " passed" in result.stdout and " failed" not in result.stdout, tail
    summary = result.stderr.strip().splitlines()[-1]
    served = int(summary.split("served ")[1].split(" calls")[0])
    assert served >= 50, summary                 # the suite really went through arrowipc
