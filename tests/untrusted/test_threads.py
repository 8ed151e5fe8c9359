"""Thread safety: concurrent get_batch on one file reader, concurrent reads of one mmap, and the
deferred checks of one batch shared by threads (the checks release the GIL)."""
import io
import threading

import pytest

pa = pytest.importorskip("pyarrow")

import arrowipc  # noqa: E402
from arrowipc import ipc  # noqa: E402
from arrowipc.errors import ArrowInvalid  # noqa: E402

from crafting import Crafted, file_bytes, stream_bytes  # noqa: E402

THREADS = 8
ROUNDS = 5


def make_batches(n=12, rows=20000):
    out = []
    for k in range(n):
        out.append(pa.record_batch([
            pa.array([f"s{k}-{i}" for i in range(rows)]),
            pa.array(range(k, k + rows), pa.int64()),
            pa.array([str(i % 7) for i in range(rows)]).dictionary_encode(),
        ], names=["s", "i", "d"]))
    return out


BATCHES = make_batches()


def run_threads(work):
    errors = []

    def target(t):
        try:
            work(t)
        except BaseException as e:     # noqa: BLE001 -- collected and re-raised below
            errors.append(e)

    threads = [threading.Thread(target=target, args=(t,)) for t in range(THREADS)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    if errors:
        raise errors[0]


def check_reader_concurrently(reader):
    n = reader.num_record_batches

    def work(t):
        for r in range(ROUNDS):
            for j in range(n):
                i = (j * (t + 1) + r) % n        # each thread in its own order
                got = pa.record_batch(reader.get_batch(i))
                assert got.equals(BATCHES[i]), (t, i)

    run_threads(work)
    assert reader.stats.num_record_batches == THREADS * ROUNDS * n


@pytest.mark.parametrize("kind", ["bytes", "path", "file-like"])
def test_concurrent_get_batch_on_one_file_reader(tmp_path, kind):
    data = file_bytes(BATCHES)
    if kind == "bytes":
        source = data
    elif kind == "path":
        path = tmp_path / "t.arrow"
        path.write_bytes(data)
        source = str(path)                       # memory-mapped
    else:
        source = io.BytesIO(data)                # seek + read under the reader's lock
    check_reader_concurrently(ipc.open_file(source))


def test_concurrent_stream_readers_over_one_mmap(tmp_path):
    path = tmp_path / "t.arrows"
    path.write_bytes(stream_bytes(BATCHES))
    mapped = arrowipc.memory_map(str(path))

    def work(t):
        for _ in range(ROUNDS):
            got = [pa.record_batch(b) for b in ipc.open_stream(mapped)]
            assert len(got) == len(BATCHES)
            assert all(g.equals(w) for g, w in zip(got, BATCHES))

    run_threads(work)


def test_threads_sharing_a_batch_all_see_its_checks():
    c = Crafted(stream_bytes([BATCHES[0]] * 2))
    m = c.batch(1)
    # a decreasing offset deep inside the column: the pass over the offsets takes a while,
    # and runs without the GIL
    c.write_value(m, 1, "i", 15000, 0)
    good, bad = list(ipc.open_stream(c.bytes()))
    outcomes = []
    barrier = threading.Barrier(THREADS)

    def work(t):
        barrier.wait()
        try:
            bad.column(0)
            outcomes.append("data")
        except ArrowInvalid:
            outcomes.append("refused")
        assert pa.record_batch(good).equals(BATCHES[0])

    run_threads(work)
    assert outcomes == ["refused"] * THREADS
