"""A tensor message of a few hundred bytes may describe any shape: a sparse tensor of shape
(52000, 52000) holding two values, a dense one whose strides of 0 repeat one byte over it. Every
tensor API on such a message stays within memory sized by the bytes present: each check runs in
a child process whose address space is limited to 512 MiB (RLIMIT_AS), where the dense form
(2.7 GB) cannot even be reserved. equals compares the non-zero cells (sparse) or blocks of cells
(dense); a dense form asked for explicitly is an ArrowCapacityError when it cannot be had, not a
MemoryError."""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

import arrowipc
from arrowipc import ipc

pytest.importorskip("numpy")
resource = pytest.importorskip("resource")

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
LIMIT = 512 << 20
CHILD_TIMEOUT = 300      # seconds: a hang guard for the child, not a speed check

PRELUDE = """
import io, resource
import numpy as np
import arrowipc
from arrowipc import ipc
from arrowipc.tensor import Tensor

def sparse_message(values=(1, 2)):
    coords = np.array([[3, 51999], [40000, 7]], dtype=np.int64)[:len(values)]
    t = arrowipc.SparseCOOTensor.from_numpy(np.array(values, dtype=np.int8), coords,
                                             (52000, 52000))
    sink = io.BytesIO()
    ipc.write_tensor(t, sink)
    return sink.getvalue()

def broadcast_message(value):
    data = arrowipc.py_buffer(np.array([value], dtype=np.int8).tobytes())
    t = Tensor._make(arrowipc.int8(), data, (52000, 52000), (0, 0))
    sink = io.BytesIO()
    ipc.write_tensor(t, sink)
    return sink.getvalue()

resource.setrlimit(resource.RLIMIT_AS, ({limit}, {limit}))
"""


def run_limited(body: str) -> str:
    """Run `body` after PRELUDE in a child limited to LIMIT bytes of address space; its stdout."""
    code = PRELUDE.format(limit=LIMIT) + textwrap.dedent(body)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=CHILD_TIMEOUT, env=dict(os.environ, PYTHONPATH=REPO_ROOT))
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout


def test_the_messages_are_tiny():
    out = run_limited("""
        print(len(sparse_message()), len(broadcast_message(0)))
    """)
    sparse_size, dense_size = map(int, out.split())
    assert sparse_size < 512 and dense_size < 512


def test_sparse_equals_compares_the_cells_not_the_dense_form():
    out = run_limited("""
        a = ipc.read_tensor(sparse_message())
        b = ipc.read_tensor(sparse_message())
        c = ipc.read_tensor(sparse_message((1, 3)))
        d = ipc.read_tensor(sparse_message((1,)))
        print(a.equals(b), a == b, a.equals(c), a.equals(d))
    """)
    assert out.split() == ["True", "True", "False", "False"]


def test_sparse_equals_is_the_dense_forms_equality():
    # duplicates keep their last value and explicit zeros count as absent, as in the dense form
    import numpy as np
    shape = (3, 4)
    plain = arrowipc.SparseCOOTensor.from_numpy(np.array([5, 6], dtype=np.int32),
                                                np.array([[0, 1], [2, 3]]), shape)
    twisted = arrowipc.SparseCOOTensor.from_numpy(np.array([6, 9, 0, 5], dtype=np.int32),
                                                  np.array([[2, 3], [0, 1], [1, 1], [0, 1]]),
                                                  shape)
    assert plain.equals(twisted) and twisted.equals(plain)
    assert np.array_equal(plain.to_tensor().to_numpy(), twisted.to_tensor().to_numpy())
    other = arrowipc.SparseCOOTensor.from_numpy(np.array([5, 7], dtype=np.int32),
                                                np.array([[0, 1], [2, 3]]), shape)
    assert not plain.equals(other)
    csr = arrowipc.SparseCSRMatrix.from_dense_numpy(plain.to_tensor().to_numpy())
    assert csr.equals(arrowipc.SparseCSRMatrix.from_dense_numpy(twisted.to_tensor().to_numpy()))


def test_sparse_to_tensor_beyond_memory_is_a_capacity_error():
    out = run_limited("""
        t = ipc.read_tensor(sparse_message())
        try:
            t.to_tensor()
        except arrowipc.ArrowCapacityError as e:
            print("refused:", e)
    """)
    assert out.startswith("refused: the dense form of SparseCOOTensor of shape (52000, 52000) "
                          "takes 2704000000 bytes")


def test_sparse_api_on_the_tiny_message():
    out = run_limited("""
        t = ipc.read_tensor(sparse_message())
        data, coords = t.to_numpy()
        print(t.size, t.non_zero_length, data.ravel().tolist(), coords.tolist(),
              ipc.get_tensor_size(t) == len(sparse_message()))
    """)
    assert out.split(None, 2)[:2] == ["2704000000", "2"]
    assert out.rstrip().endswith("[[3, 51999], [40000, 7]] True")


def test_dense_equals_of_repeated_values_compares_blocks():
    out = run_limited("""
        zeros = ipc.read_tensor(broadcast_message(0))
        ones = ipc.read_tensor(broadcast_message(1))
        print(zeros.equals(ipc.read_tensor(broadcast_message(0))), zeros.equals(ones),
              zeros.to_numpy().shape, ipc.get_tensor_size(zeros) == len(broadcast_message(0)))
    """)
    assert out.split() == ["True", "False", "(52000,", "52000)", "True"]


def test_dense_to_sparse_of_repeated_values():
    out = run_limited("""
        zeros = ipc.read_tensor(broadcast_message(0))
        print(arrowipc.SparseCOOTensor.from_tensor(zeros).non_zero_length,
              arrowipc.SparseCSRMatrix.from_tensor(zeros).non_zero_length)
        ones = ipc.read_tensor(broadcast_message(1))
        try:
            arrowipc.SparseCOOTensor.from_tensor(ones)
        except arrowipc.ArrowCapacityError as e:
            print("refused:", e)
    """)
    first, second = out.splitlines()
    assert first == "0 0"
    assert second.startswith("refused: the index of the 2704000000 non-zero cells of shape "
                             "(52000, 52000) takes")


def test_dense_shape_beyond_64_bits_of_bytes():
    # strides of 0 make any shape fit in one byte of body; numpy cannot hold 2**64 bytes
    import io
    from arrowipc.tensor import Tensor
    t = Tensor._make(arrowipc.int8(), arrowipc.py_buffer(b"\x01"), (1 << 32, 1 << 32), (0, 0))
    sink = io.BytesIO()
    ipc.write_tensor(t, sink)
    with pytest.raises(arrowipc.ArrowInvalid, match=r"shape \[4294967296, 4294967296\] of "
                       r"1-byte values is 18446744073709551616 bytes, more than "
                       r"9223372036854775807"):
        ipc.read_tensor(sink.getvalue())
