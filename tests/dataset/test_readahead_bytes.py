"""target_bytes_readahead (ours; Arrow C++'s ScanV2Options name, not in pyarrow) bounds the bytes
of the batches decoded ahead of the consumer. Measured by instrumenting the decodes: after each
batch it receives, the consumer waits until every decode the scan has submitted is done (so the
readahead is as full as the scan lets it get) and the bytes decoded but not yet consumed are
taken. No timing is involved: the waits are on counts."""
import threading

import numpy as np
import pytest

import arrowipc as A
import arrowipc.dataset as ds
from arrowipc.dataset import scanner as scanner_module

HANG_GUARD = 120            # seconds: a decode that never finishes fails the test
ROWS_PER_BATCH = 1000
BATCH_BYTES = 2 * 8 * ROWS_PER_BATCH        # two int64 columns, no nulls: body == decoded


@pytest.fixture
def root(tmp_path):
    n = 40 * ROWS_PER_BATCH
    table = A.table({"a": np.arange(n, dtype=np.int64), "b": np.arange(n, dtype=np.int64)})
    path = str(tmp_path / "d")
    ds.write_dataset(table, path, max_rows_per_group=ROWS_PER_BATCH, max_rows_per_file=n // 2)
    return path


@pytest.fixture
def held(monkeypatch):
    """Runs a scan and gives the peak bytes decoded and not yet consumed."""
    cond = threading.Condition()
    state = {"submitted": 0, "finished": 0, "decoded": 0, "consumed": 0, "peak": 0}
    decode, submit = scanner_module._decode, scanner_module._InFlight.submit

    def counting_submit(self, pool):
        if self.i >= 0:
            with cond:
                state["submitted"] += 1
        submit(self, pool)

    def counting_decode(plan, i, last):
        out = decode(plan, i, last)
        with cond:
            state["finished"] += 1
            state["decoded"] += sum(b.nbytes for b in out)
            state["peak"] = max(state["peak"], state["decoded"] - state["consumed"])
            cond.notify_all()
        return out

    monkeypatch.setattr(scanner_module._InFlight, "submit", counting_submit)
    monkeypatch.setattr(scanner_module, "_decode", counting_decode)

    def run(batches):
        rows = 0
        for batch in batches:
            rows += batch.num_rows
            with cond:
                state["consumed"] += batch.nbytes
                assert cond.wait_for(lambda: state["finished"] == state["submitted"],
                                     timeout=HANG_GUARD)
        return rows, state["peak"]
    return run


def test_the_byte_bound_holds_the_decoded_readahead(root, held):
    bound = 3 * BATCH_BYTES + BATCH_BYTES // 2
    data = ds.dataset(root, format="ipc")
    rows, peak = held(data.to_batches(batch_readahead=16, target_bytes_readahead=bound))
    assert rows == 40 * ROWS_PER_BATCH
    assert peak <= bound
    assert peak >= 2 * BATCH_BYTES            # it still reads ahead


def test_without_a_byte_bound_the_batch_count_bounds_alone(root, held):
    data = ds.dataset(root, format="ipc")
    rows, peak = held(data.to_batches(batch_readahead=16))
    assert rows == 40 * ROWS_PER_BATCH
    assert 10 * BATCH_BYTES <= peak <= 16 * BATCH_BYTES


def test_a_batch_larger_than_the_bound_is_still_read(root, held):
    data = ds.dataset(root, format="ipc")
    rows, peak = held(data.scanner(target_bytes_readahead=1).to_batches())
    assert rows == 40 * ROWS_PER_BATCH
    assert peak == BATCH_BYTES                # one at a time


def test_the_bound_must_not_be_negative(root):
    with pytest.raises(ValueError, match="target_bytes_readahead must not be negative, got -1"):
        ds.dataset(root, format="ipc").scanner(target_bytes_readahead=-1)
