"""The default read of a path maps the file under a read lease (Linux): zero-copy, and still no
other process can crash us or change what we read.

Each scenario runs in a child process (so a SIGBUS fails the test instead of killing pytest,
and the child runs under the fault handler): it reads a stream or a file by path, checks that
the table views a leased mapping of the file, then has a grandchild process truncate the file,
rewrite it in place with other bytes, or open it "r+b" and overwrite it. The grandchild must
finish (no hang: the lease-break handler lets it go on), and the child then reads every value
and exports the table to pyarrow: both must equal the data as first read (pyarrow, reading a
copy of the original bytes, is the oracle), and the mapping must have become private memory.
Without a lease (another process has the file open for writing, ARROWIPC_LEASED_MAPS=0, small
files) the read is a copy, as before.
"""
import os
import signal
import subprocess
import sys
import textwrap

import pytest

pa = pytest.importorskip("pyarrow")

from arrowipc._core.leased_map import lease_break_signal  # noqa: E402



def _read_leases_work() -> bool:
    """Whether this kernel and the temporary folder's filesystem grant us a read lease (leases
    can be disabled by fs.leases-enable, and some filesystems refuse them: reads then copy)."""
    import fcntl
    import tempfile
    F_SETLEASE = getattr(fcntl, "F_SETLEASE", 1024)
    with tempfile.TemporaryDirectory() as folder:
        probe = os.path.join(folder, "probe")
        with open(probe, "wb") as f:            # closed before the lease: no writer may be open
            f.write(b"probe")
        fd = os.open(probe, os.O_RDONLY)
        try:
            fcntl.fcntl(fd, F_SETLEASE, fcntl.F_RDLCK)
            fcntl.fcntl(fd, F_SETLEASE, fcntl.F_UNLCK)
            return True
        except OSError:
            return False
        finally:
            os.close(fd)


pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux") or lease_break_signal() == 0 or not _read_leases_work(),
    reason="read leases are Linux-only, and this filesystem or kernel grants none")

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CHILD_TIMEOUT = 120         # seconds: a hang guard for the child, not a speed limit
ROWS = 40_000               # ~0.9 MB: above paths.LEASED_MAP_MIN_BYTES

PRELUDE = """
import gc, os, subprocess, sys
sys.path.insert(0, {repo!r})
import pyarrow as pa
import arrowipc
from arrowipc import ipc
from arrowipc._core.buffer import exporter_of
from arrowipc._core.leased_map import LeasedMapping, last_lease_failure, live_leased_maps
path, kind = {path!r}, {kind!r}
TIMEOUT = {timeout!r}

def write(p, n, start=0):
    tab = pa.table({{"s": [f"value-{{i}}" for i in range(start, start + n)],
                    "i": list(range(start, start + n))}})
    opener = pa.ipc.new_file if kind == "file" else pa.ipc.new_stream
    w = opener(p, tab.schema)
    for b in tab.to_batches(max_chunksize=10_000):
        w.write_batch(b)
    w.close()
    del w                        # pyarrow keeps the file open until its writer is freed

def read(p):
    return (ipc.open_file(p) if kind == "file" else ipc.open_stream(p)).read_all()

def oracle(data):
    src = pa.py_buffer(data)
    return (pa.ipc.open_file(src) if kind == "file" else pa.ipc.open_stream(src)).read_all()

def owners(t):
    return {{type(exporter_of(b)) for col in t.columns for ch in col.chunks
             for b in ch.buffers() if b is not None}}

def in_child(code):
    r = subprocess.run([sys.executable, "-c", code], timeout=TIMEOUT, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
"""


def run_child(body, path, kind, env=None):
    """Run `body` (after PRELUDE) in a child under the fault handler; returns its stdout."""
    script = PRELUDE.format(repo=REPO, path=str(path), kind=kind, timeout=CHILD_TIMEOUT)
    script += textwrap.dedent(body)
    r = subprocess.run([sys.executable, "-X", "faulthandler", "-c", script], capture_output=True,
                       text=True, timeout=CHILD_TIMEOUT * 2, env=env)
    if r.returncode < 0:
        pytest.fail(f"the reader was killed by {signal.Signals(-r.returncode).name}\n{r.stderr}")
    assert r.returncode == 0, r.stderr
    return r.stdout


CHANGES = {
    "truncate": "os.truncate(path, 0)",
    "rewrite_other_table": "write(path, ROWS, start=10**6)",
    "overwrite_r+b": "f = open(path, 'r+b'); f.write(b'\\xff' * (os.path.getsize(path) - 64)); "
                     "f.close()",
}


@pytest.mark.parametrize("kind", ["stream", "file"])
@pytest.mark.parametrize("change", list(CHANGES))
def test_a_writer_after_the_read_neither_crashes_us_nor_changes_what_we_read(tmp_path, kind,
                                                                           change):
    code = (PRELUDE.format(repo=REPO, path=str(tmp_path / "data"), kind=kind,
                           timeout=CHILD_TIMEOUT) + f"ROWS = {ROWS}\n" + CHANGES[change])
    out = run_child(f"""
        write(path, {ROWS})
        with open(path, "rb") as f:
            original = f.read()
        t = read(path)
        assert owners(t) == {{LeasedMapping}}, (owners(t), last_lease_failure())
        mapping = exporter_of(t.column(0).chunk(0).buffers()[1])
        assert mapping.file_backed and live_leased_maps() == 1
        in_child({code!r})                       # returns: the lease break let it go on
        changed = open(path, "rb").read()
        assert changed != original, "the change did not happen"
        assert not mapping.file_backed           # our bytes were copied before the change
        expected = oracle(original)
        assert t.to_pylist() == expected.to_pylist()
        assert pa.table(t).equals(expected)
        del t, mapping
        gc.collect()
        assert live_leased_maps() == 0
        print("ok")
    """, tmp_path / "data", kind)
    assert out.strip() == "ok"


@pytest.mark.parametrize("kind", ["stream", "file"])
def test_a_writer_in_our_own_process_is_served_too(tmp_path, kind):
    out = run_child(f"""
        write(path, {ROWS})
        original = open(path, "rb").read()
        t = read(path)
        assert owners(t) == {{LeasedMapping}}, last_lease_failure()
        write(path, 10, start=5)                 # this process opens it for writing: O_TRUNC
        assert t.to_pylist() == oracle(original).to_pylist()
        assert pa.table(t).equals(oracle(original))
        print("ok")
    """, tmp_path / "data", kind)
    assert out.strip() == "ok"


@pytest.mark.parametrize("kind", ["stream", "file"])
def test_a_file_open_for_writing_elsewhere_is_read_into_memory(tmp_path, kind):
    out = run_child(f"""
        import errno
        write(path, {ROWS})
        original = open(path, "rb").read()
        holder = subprocess.Popen([sys.executable, "-c",
                                   "import sys; f = open(sys.argv[1], 'r+b'); print('open', "
                                   "flush=True); sys.stdin.readline(); f.write(b'x' * 4096)",
                                   path], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        assert holder.stdout.readline().strip() == "open"
        t = read(path)
        assert last_lease_failure() == (2, errno.EAGAIN), last_lease_failure()   # DENIED
        assert LeasedMapping not in owners(t)
        holder.communicate("go\\n", timeout=TIMEOUT)
        assert open(path, "rb").read() != original
        assert t.to_pylist() == oracle(original).to_pylist()
        print("ok")
    """, tmp_path / "data", kind)
    assert out.strip() == "ok"


@pytest.mark.parametrize("kind", ["stream", "file"])
def test_leased_maps_can_be_turned_off(tmp_path, kind):
    body = f"""
        write(path, {ROWS})
        t = read(path)
        print(sorted(c.__name__ for c in owners(t)))
    """
    off = run_child(body, tmp_path / "data", kind, env={**os.environ, "ARROWIPC_LEASED_MAPS": "0"})
    on = run_child(body, tmp_path / "data", kind, env={**os.environ, "ARROWIPC_LEASED_MAPS": "1"})
    assert off.strip() == "['_AlignedAllocation']"
    assert on.strip() == "['LeasedMapping']"


def test_memory_map_true_stays_a_plain_mapping(tmp_path):
    out = run_child(f"""
        import mmap
        write(path, {ROWS})
        t = ipc.open_stream(path, memory_map=True).read_all()
        print(sorted(c.__name__ for c in owners(t)))
    """, tmp_path / "data", "stream")
    assert out.strip() == "['mmap']"


def test_leased_maps_hold_at_most_a_quarter_of_the_descriptor_limit(tmp_path):
    # each live mapping holds a descriptor: past the budget reads are copies, and the program's
    # own opens keep working
    out = run_child(f"""
        import resource
        write(path, {ROWS})
        expected = oracle(open(path, "rb").read())
        resource.setrlimit(resource.RLIMIT_NOFILE, (64, resource.getrlimit(resource.RLIMIT_NOFILE)[1]))
        tables = [read(path) for _ in range(60)]
        assert live_leased_maps() == 16, live_leased_maps()
        assert sum(owners(t) == {{LeasedMapping}} for t in tables) == 16
        assert all(t.equals(read(path)) for t in tables[::10])
        assert pa.table(tables[-1]).equals(expected)
        os.close(os.open(path, os.O_RDONLY))
        print("ok")
    """, tmp_path / "data", "stream")
    assert out.strip() == "ok"
